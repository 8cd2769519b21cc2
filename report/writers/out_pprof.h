/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * out_pprof.h - kmemtrace-report --pprof: the analysis as a gzipped pprof
 * profile (profile.proto) for go tool pprof, Pyroscope, Parca, speedscope.
 */
#ifndef OUT_PPROF_H
#define OUT_PPROF_H

#include "core/report_core.h"
#include "views/view.h"

/*
 * Writes the profile of r (made with RPT_SAMPLES and finished) to path,
 * through a temporary file renamed over it once whole, so that a failure
 * leaves any earlier file at path as it was. 0; -1 out of memory; or an
 * errno value (the file could not be written).
 */
int pprof_write_file(const char *path, const struct rpt *r, const struct out_opts *o);

#endif /* OUT_PPROF_H */
