/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt_ahead.h - a merge read ahead on a thread of its own: while the
 * caller analyses one batch of merged records, the thread reads, checks
 * and merges the next ones from the files.
 *
 * The records and their order are exactly kmt_merge_next_batch()'s; only
 * the batches' sizes differ. Documentation/architecture.md ("The report
 * on more than one core").
 */
#ifndef KMT_AHEAD_H
#define KMT_AHEAD_H

#include <stddef.h>

#include "kmt_reader.h"

struct kmt_ahead;

/*
 * Starts reading m ahead. Until kmt_ahead_stop(), nothing else may use m.
 * NULL with errno set when out of memory or no thread could be started.
 */
struct kmt_ahead *kmt_ahead_start(struct kmt_merge *m);

/*
 * The same with nreaders readers (numbered from 0), each of which gets
 * every batch, in order, from kmt_ahead_next_of(): the thread waits for
 * the slowest. Each reader must read to the end (0 or -1), or the others
 * may wait for ever; only then may kmt_ahead_stop() come.
 */
struct kmt_ahead *kmt_ahead_start_readers(struct kmt_merge *m, unsigned int nreaders);

/*
 * The next batch, as kmt_merge_next_batch() would give it: *recs points
 * to its pointers, valid until the next call or kmt_ahead_stop(). Returns
 * the count (> 0), 0 at the end, -1 on the merge's error (kmt_merge_error()
 * on m, once kmt_ahead_stop() returned).
 */
int kmt_ahead_next(struct kmt_ahead *a, const union kmt_rec *const **recs);
/* The same for one of kmt_ahead_start_readers()' readers, each on one thread. */
int kmt_ahead_next_of(struct kmt_ahead *a, unsigned int reader, const union kmt_rec *const **recs);

/*
 * The CPUs this process may run on (its affinity mask), 1 if it cannot
 * tell: kmemtrace-report's default -j, and whether the ring's sides spin.
 */
unsigned int kmt_cpus_available(void);

/* Stops the thread (at once, if the end was not reached) and frees a; NULL is ignored. */
void kmt_ahead_stop(struct kmt_ahead *a);

#endif /* KMT_AHEAD_H */
