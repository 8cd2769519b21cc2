/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmtd_util.h - the bottom layer of kmemtraced (see kmemtraced.h): the
 * constants, the description of the run that the leaves read, messages and
 * file helpers. Nothing here calls anything else of kmemtraced's.
 */
#ifndef KMTD_UTIL_H
#define KMTD_UTIL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kmemtrace_abi.h"

#define KMTD_NAME		"kmemtraced"
#define KMTD_DEFAULT_DEBUGFS	"/sys/kernel/debug"
#define KMTD_SYSMOD		"/sys/module/kmemtrace"
/* Undocumented hook for the host tests: accept a -r directory that is not debugfs. */
#define KMTD_FAKE_ENV		"KMEMTRACED_TEST_FAKE_DEBUGFS"
/*
 * Bytes each drain thread reads from relay at a time, a whole number of
 * records: with the thread's stack, the memory a CPU costs kmemtraced,
 * whatever the trace's length or the module's buffer size.
 */
#define KMTD_READ_CHUNK		(256u * 1024)
/* Highest CPU number we handle: far above any machine relay runs on. */
#define KMTD_MAX_CPUS		8192

/*
 * The trace being taken, as its files describe it: the cpuN.out headers
 * (drain.c) and kmemtrace.meta (meta.c). kmemtraced.c owns and fills it;
 * the leaves only read it, and only on the main thread.
 */
struct kmtd_run {
	const char *outdir;		/* -o DIR */
	bool force;			/* -f: replace the files of an earlier trace */
	char **cmd;			/* -- COMMAND, NULL-terminated, or NULL */
	char kdir[PATH_MAX];		/* <debugfs>/kmemtrace */
	unsigned int abi_major, abi_minor;	/* the module's, so the records' */
	unsigned int word_bits;
	uint32_t page_size;

	uint64_t start_mono_ns, start_real_ns, end_mono_ns, end_real_ns;
	uint64_t overruns_start, overruns_end;
	bool have_overruns_start, have_overruns_end;
	int command_status;		/* exit code form: 0..255, 128+signal */
	bool command_done;
	const char *stop_reason;
	char error[PATH_MAX + 256];	/* first fatal error, for the metadata */
	/* Where tracepoint_formats came from, or "none: WHY" (formats.c). */
	char formats[PATH_MAX + 128];
	/* --max-size SIZE and the segment size it switches at; 0: no rotation. */
	uint64_t max_size, seg_size;
	/* Rotation so far: segments dropped into the checkpoint and what they held. */
	unsigned int segments, seg_first;	/* the newest segment, the oldest kept */
	uint64_t seg_dropped, dropped_bytes, dropped_cut_ns;
	/* For the end-of-run metadata: records per CPU below ncpus, -1 if not traced. */
	unsigned int ncpus;
	int64_t cpu_records[KMTD_MAX_CPUS];
};

/* Messages: "kmemtraced: ..." on stderr. */
void kmtd_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The lockdown mode in force, or NULL when none (or unknown). */
const char *kmtd_lockdown_mode(void);
/* Why opening a debugfs file failed, in the terms of what to do about it. */
void kmtd_explain_open_error(const char *path, int err);

/*
 * /sys/kernel/slab, and /proc/NAME into buf; with KMEMTRACED_TEST_FAKE_DEBUGFS=1 the
 * host tests' stand-ins, KMEMTRACED_TEST_SLAB_DIR and KMEMTRACED_TEST_PROC_DIR/NAME.
 */
const char *kmtd_slab_dir(void);
const char *kmtd_proc_path(const char *name, char *buf, size_t size);
/* DIR/seg.SSSSSS, the directory of segment SSSSSS of a --max-size trace. */
void kmtd_seg_dir(const char *outdir, unsigned int seg, char *buf, size_t size);
/* Files: 0 or -1 with errno; kmtd_read_file() returns the length read. */
int kmtd_write_all(int fd, const void *buf, size_t len);
int kmtd_read_file(const char *path, char *buf, size_t size);
/* A new file of the trace, mode 0600; with force an old one is removed first. */
int kmtd_create_file(const char *path, bool force);

#endif /* KMTD_UTIL_H */
