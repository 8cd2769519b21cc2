/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * formats.h - a leaf of kmemtraced (see kmemtraced.h): the traced kernel's
 * tracepoint formats of the kmem events, copied into the trace.
 */
#ifndef KMTD_FORMATS_H
#define KMTD_FORMATS_H

#include <stddef.h>

#include "kmtd_util.h"

#define KMTD_FORMATS		"tracepoint_formats"

/*
 * Writes OUTDIR/tracepoint_formats from tracefs's events/kmem/EVENT/format
 * files (tracefs at /sys/kernel/tracing, else <debugfs>/tracing). Returns 1
 * with the events directory it read in what, 0 when there is no tracefs to
 * read (no file is written, and any left by an earlier trace with -f is
 * removed; what then says why), -1 when the file could not be written.
 */
int kmtd_write_formats(const struct kmtd_run *run, const char *debugfs, char *what,
		       size_t what_size);

#endif /* KMTD_FORMATS_H */
