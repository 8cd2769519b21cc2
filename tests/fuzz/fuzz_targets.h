/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_targets.h - the fuzz targets, shared by the libFuzzer binaries
 * (clang) and the replay tests of make check (any compiler): one function
 * per parser family, bytes in, the tool's verdict out.
 */
#ifndef KMT_FUZZ_TARGETS_H
#define KMT_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

/*
 * What a run made of its input: the exit code the tool would have
 * returned (KMT_EXIT_*) and the first error message ("" when none).
 * Replay tests compare these with a regression's .expect file.
 */
struct fuzz_outcome {
	int exit_code;
	char msg[1024];
};

/*
 * Each target returns 0. A broken invariant (a record the reader should
 * have refused, a merge out of order, invalid JSON...) is reported on
 * stderr and abort()s: to libFuzzer that is a crash like any other.
 */
typedef int (*fuzz_fn)(const uint8_t *data, size_t size, struct fuzz_outcome *out);

struct fuzz_target {
	const char *name;
	fuzz_fn fn;
};

/*
 * reader: the bytes are one cpuN.out (N from the header's CPU field), read
 * to the end with kmt_file_open/next, strictly and with
 * KMT_OPEN_ALLOW_TRUNCATED; the two verdicts must agree.
 */
int fuzz_reader(const uint8_t *data, size_t size, struct fuzz_outcome *out);

/*
 * report: byte 0 picks options (allow truncated, view, filters, raw
 * addresses), bytes 1-2 (little-endian) the length of the first of two cpu
 * files the rest holds (0 or beyond the end: one file); the files are
 * merged and analysed and the report printed as text, CSV, JSON (validated)
 * and --raw lines, with a fixed kallsyms and modules snapshot.
 */
int fuzz_report(const uint8_t *data, size_t size, struct fuzz_outcome *out);

/*
 * syms: the bytes are a kallsyms snapshot, then optionally, each after a
 * line "====", a modules file and a kmemtrace.meta; they are loaded, looked
 * up at the addresses they name, and a small report on call sites there is
 * printed with them (JSON validated).
 */
int fuzz_syms(const uint8_t *data, size_t size, struct fuzz_outcome *out);

/*
 * check: kmemtrace_check's own main() on the bytes as one cpuN.out; byte 0
 * picks --strict, -v, -q and file or directory argument.
 */
int fuzz_check(const uint8_t *data, size_t size, struct fuzz_outcome *out);

/*
 * fold: the bytes are one cpuN.out; a trace the reader takes is folded
 * whole into a checkpoint (report/lib/kmt_ckpt.c, as kmemtraced --max-size
 * does), and the report of the checkpoint alone must equal the trace's:
 * every call site's tallies, the totals and the errors.
 */
int fuzz_fold(const uint8_t *data, size_t size, struct fuzz_outcome *out);

extern const struct fuzz_target fuzz_targets[];
const struct fuzz_target *fuzz_target_find(const char *name);

/*
 * A private directory for the targets' files, created on first use under
 * $TMPDIR (or /tmp) and removed by fuzz_cleanup(), which is registered
 * with atexit(). Returns its path, or NULL (message on stderr).
 */
const char *fuzz_tmpdir(void);
void fuzz_cleanup(void);

/* Nonzero if s is one valid JSON text (RFC 8259), UTF-8 checked. */
int fuzz_json_valid(const char *s, size_t len, size_t *err_off);

#endif /* KMT_FUZZ_TARGETS_H */
