/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rpt_growth.h - the analysis' state at chosen times of the trace
 * (kmemtrace-report --at and --diff): per call site, per cache and per
 * kernel stack, the objects outstanding then and the allocations and frees
 * counted so far, and the outstanding objects themselves, so that two
 * snapshots give exactly what grew between them.
 *
 * A snapshot at T holds every record up to the last one at or before T
 * (ns after the trace's first record, the origin --time uses too): it is
 * taken while the records are fed, just before the first one later than
 * T, and costs one walk of the object table. Nothing is added to the path
 * every record takes.
 */
#ifndef RPT_GROWTH_H
#define RPT_GROWTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/report_core.h"

/* One call site's, cache's or stack's figures at a snapshot. */
struct grow_tally {
	uint64_t live, live_bytes;	/* objects outstanding then */
	uint64_t oldest_ts;		/* allocation time of the oldest of them (abs ns) */
	/* Counted from the trace's start (or --time's) to then, as struct rpt_site does. */
	uint64_t allocs, failed, bytes_alloc, frees, bytes_freed;
};

/* An object outstanding at a snapshot. */
struct grow_obj {
	uint64_t ptr;
	uint64_t ts;		/* its allocation's time, abs ns */
	uint32_t site;		/* index of rpt_site() */
	uint32_t cache;		/* index of rpt_cache(); UINT32_MAX: none */
	uint32_t stack;		/* index of rpt_stack(); KMT_STACK_NONE: none */
	uint32_t bytes;		/* bytes_alloc */
};

struct grow_snap {
	uint64_t rel_ns;	/* the time asked for, ns after the first record */
	uint64_t abs_ns;	/* the same on the trace's clock */
	bool taken;
	/* By index of rpt_site(), rpt_cache() and rpt_stack(), as many as existed then. */
	struct grow_tally *sites, *caches, *stacks;
	size_t nsites, ncaches, nstacks;
	struct grow_tally total;
	/* The objects outstanding then, allocated after keep_after (abs ns), oldest first. */
	struct grow_obj *objs;
	size_t nobjs;
};

struct growth;

/*
 * Snapshots at t1 and, with diff, at t2 (ns after the first record, t1 <=
 * t2); the objects kept are those outstanding at the last snapshot (with
 * diff: those allocated after t1, the survivors). NULL: out of memory.
 */
struct growth *growth_new(uint64_t t1, uint64_t t2, bool diff);
void growth_free(struct growth *g);

/*
 * Feeds n records to r, in order, taking each snapshot just before the
 * first record later than its time. 0, or -1 (memory).
 */
int growth_feed(struct growth *g, struct rpt *r, const union kmt_rec *const *recs, size_t n);

/*
 * After the last record: the snapshots whose time no record passed are
 * taken now, at the end. 0, or -1 (memory).
 */
int growth_finish(struct growth *g, struct rpt *r);

/* ns from the first record to the last one fed (of any kind); 0 when none. */
uint64_t growth_duration(const struct growth *g);
/* Whether any record was fed. */
bool growth_seen(const struct growth *g);

/* The snapshots: 0 is t1 (--at's T), 1 is t2 (NULL without diff). */
const struct grow_snap *growth_snap(const struct growth *g, unsigned int i);
bool growth_is_diff(const struct growth *g);

#endif /* RPT_GROWTH_H */
