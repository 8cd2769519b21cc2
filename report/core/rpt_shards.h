/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rpt_shards.h - the analysis divided by object address over threads
 * (kmemtrace-report -j 3 and more), whose answers are one analysis's to
 * the byte: Documentation/architecture.md, "The report on more than one
 * core".
 */
#ifndef RPT_SHARDS_H
#define RPT_SHARDS_H

#include <stdbool.h>

#include "kmt_ahead.h"
#include "core/report_core.h"

struct rpt_shards;

/* Whether r's analysis can be divided (not with RPT_SAMPLES: --pprof). */
bool rpt_shardable(const struct rpt *r);

/*
 * Divides r's analysis in n shards (n >= 2) over m's records: shard 0 is
 * r, fed by the caller from rpt_shards_next() on its own thread; shards 1
 * to n - 1 are analyses like r, each fed on a thread of its own; m is read
 * ahead on one more, into *ahead (which the caller stops, with
 * kmt_ahead_stop(), after rpt_shards_join()). NULL with errno set when
 * memory or threads are lacking: nothing started, r as it was.
 */
struct rpt_shards *rpt_shards_start(struct rpt *r, struct kmt_merge *m, unsigned int n,
				    struct kmt_ahead **ahead);

/*
 * Shard 0's next batch, as kmt_ahead_next() gives it; each must be fed
 * with rpt_shards_feed(), and the caller must read to the end (0 or -1)
 * even once a feed failed, or the other shards wait for ever.
 */
int rpt_shards_next(struct rpt_shards *s, const union kmt_rec *const **recs);
/* Feeds shard 0 (r) a batch. 0, or -1 (memory): from then on only read. */
int rpt_shards_feed(struct rpt_shards *s, const union kmt_rec *const *recs, size_t n);

/*
 * Waits for the shards, finishes each (rpt_finish()) and adds them into r,
 * finished, as if r alone had been fed every record; frees s. 0, or -1
 * when a shard ran out of memory.
 */
int rpt_shards_join(struct rpt_shards *s);

/* Feeds shard k of n (report_core.c): every record scanned, its own analysed. 0 or -1. */
int rpt_feed_shard(struct rpt *r, const union kmt_rec *const *recs, size_t n, unsigned int k,
		   unsigned int nshards);

#endif /* RPT_SHARDS_H */
