/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * testlib.h - what the C unit tests (tests/unit/test_*.c) share besides the
 * TAP macros of tap.h and the trace generator of gen.h: the test's scratch
 * directory, paths in it, and whole-file reads and writes.
 *
 *   test_dir_make(tag)       make the test's scratch directory (gen_mkdtemp):
 *                            test_dir, or NULL after a message on stderr
 *   test_dir_remove()        remove it and all in it (gen_rm_rf), free test_dir:
 *                            0, or -1 after a TAP comment naming it
 *   test_path(name)          "test_dir/name"
 *   test_read_file(path,len) a whole file, malloc'ed
 *   test_write_text(path,s)  a file holding the string s
 *   test_analyse(dir,f,flags) a trace directory through the merge into a
 *                            finished analysis (testlib_report.c: the
 *                            kmemtrace-report tests, test_report*.c, only)
 *
 * No TAP output of its own (tap.h's counters are per test binary), only
 * comments.
 */
#ifndef KMT_TESTLIB_H
#define KMT_TESTLIB_H

#include <stddef.h>

/* The scratch directory of test_dir_make(), NULL before and after. */
extern char *test_dir;

char *test_dir_make(const char *tag);
int test_dir_remove(void);

/*
 * test_dir/name in one of four static buffers, so that up to four paths
 * can be used at once (a fifth call reuses the first buffer).
 */
const char *test_path(const char *name);

/*
 * The whole of path, malloc'ed, with a NUL after its last byte; *len (if
 * len is not NULL) is its size. NULL if it cannot be read.
 */
char *test_read_file(const char *path, size_t *len);

/* Writes text (without its NUL) to path, replacing it. 0, or -1 with errno. */
int test_write_text(const char *path, const char *text);

struct rpt;
struct rpt_filter;

/*
 * Reads the trace directory dir through the merge into rpt_new(f, flags),
 * then rpt_finish(). NULL, after a TAP comment on a read error, if any step
 * fails.
 */
struct rpt *test_analyse(const char *dir, const struct rpt_filter *f, unsigned int flags);

#endif /* KMT_TESTLIB_H */
