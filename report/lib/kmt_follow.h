/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt_follow.h - reads a trace while it is being written: cpuN.out files
 * kmemtraced is still appending to, or the module's relay buffers, and
 * hands out what arrived so far in time order.
 */
#ifndef KMT_FOLLOW_H
#define KMT_FOLLOW_H

#include <stddef.h>
#include <stdint.h>

#include "kmt_reader.h"

/*
 * Unlike kmt_merge, which reads finished files, a follow never reaches an
 * end: each kmt_follow_collect() takes what the sources have now, and a
 * partial record at a source's end waits for its remaining bytes. Records
 * are checked lightly (a zeroed slot is an error, a newer minor's record
 * type is skipped); kmt_merge's full checks apply when the trace is read
 * again once finished.
 */
struct kmt_follow;

/* NULL when out of memory. */
struct kmt_follow *kmt_follow_new(void);
void kmt_follow_free(struct kmt_follow *f);

/*
 * A cpuN.out file: its header is checked by the reader, its records are
 * read from there on. 0 also when the file is still shorter than a header
 * (kmemtraced is writing it; it is not added: try again later). -1 with
 * *err when it cannot be opened or its header is bad.
 */
int kmt_follow_add_file(struct kmt_follow *f, const char *path, struct kmt_error *err);
/*
 * One of the module's relay buffers (records, no header) of CPU cpu. The
 * module lets only a reader bound to the buffer's CPU read it while
 * tracing is on, so reading it moves the calling thread to that CPU.
 */
int kmt_follow_add_relay(struct kmt_follow *f, const char *path, unsigned int cpu,
			 struct kmt_error *err);
/*
 * Adds DIR's cpuN.out files not followed yet (CPUs come online); none yet
 * is no error. In a rotated DIR (kmt_find_cpu_files()), its segments' as
 * they appear, never a checkpoint's.
 */
int kmt_follow_scan_dir(struct kmt_follow *f, const char *dir, struct kmt_error *err);
size_t kmt_follow_nsources(const struct kmt_follow *f);

/*
 * Reads everything the sources have and sorts what is held by
 * (timestamp, cpu, seq). *recs, *n: the records before upto, to feed now;
 * then kmt_follow_keep_rest(f, *n) keeps the others for the next call.
 * 0, or -1 with *err.
 */
int kmt_follow_collect(struct kmt_follow *f, uint64_t upto, const union kmt_rec ***recs,
		       size_t *n, struct kmt_error *err);
/* After feeding the first k collected records: keeps the rest, in order. 0, or -1 (memory). */
int kmt_follow_keep_rest(struct kmt_follow *f, size_t k);
/* Reads what the sources hold now and forgets it: a start from this moment on. */
void kmt_follow_drop(struct kmt_follow *f);

#endif /* KMT_FOLLOW_H */
