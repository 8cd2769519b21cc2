// SPDX-License-Identifier: GPL-2.0-only
/*
 * rpt_growth.c - snapshots of the analysis at chosen times (--at, --diff):
 * the records are fed as usual and, when the next one is later than a
 * snapshot's time, the counters by call site, cache and stack are copied
 * and the object table walked once for what is outstanding.
 */
#include <stdlib.h>
#include <string.h>

#include "core/report_core_int.h"
#include "core/rpt_growth.h"

struct growth {
	struct grow_snap snap[2];
	unsigned int nsnaps;	/* 1 (--at) or 2 (--diff) */
	unsigned int next;	/* the first snapshot not taken yet */
	bool seen;
	uint64_t first_ts, last_ts;	/* of every record fed, whatever its kind */
};

struct growth *growth_new(uint64_t t1, uint64_t t2, bool diff)
{
	struct growth *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->nsnaps = diff ? 2 : 1;
	g->snap[0].rel_ns = t1;
	g->snap[1].rel_ns = diff ? t2 : t1;
	return g;
}

static void snap_free(struct grow_snap *s)
{
	free(s->sites);
	free(s->caches);
	free(s->stacks);
	free(s->objs);
}

void growth_free(struct growth *g)
{
	if (!g)
		return;
	snap_free(&g->snap[0]);
	snap_free(&g->snap[1]);
	free(g);
}

static void tally_live(struct grow_tally *t, const struct obj *o)
{
	if (!t->live || o->ts < t->oldest_ts)
		t->oldest_ts = o->ts;
	t->live++;
	t->live_bytes += o->bytes;
}

/* Adds a site's, cache's or stack's counters so far (the total sums the sites'). */
static void counts(struct grow_tally *t, uint64_t allocs, uint64_t failed, uint64_t bytes_alloc,
		   uint64_t frees, uint64_t bytes_freed)
{
	t->allocs += allocs;
	t->failed += failed;
	t->bytes_alloc += bytes_alloc;
	t->frees += frees;
	t->bytes_freed += bytes_freed;
}

static int by_age(const void *pa, const void *pb)
{
	const struct grow_obj *a = pa, *b = pb;

	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->ptr < b->ptr ? -1 : a->ptr > b->ptr;
}

/* Appends o to s->objs, grown by doubling. 0, or -1 (memory). */
static int keep_obj(struct grow_snap *s, size_t *cap, const struct rpt *r, size_t slot)
{
	const struct obj *o = &r->objs.e[slot];

	if (s->nobjs == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		struct grow_obj *p = realloc(s->objs, ncap * sizeof(*p));

		if (!p)
			return -1;
		s->objs = p;
		*cap = ncap;
	}
	s->objs[s->nobjs++] = (struct grow_obj){
		.ptr = o->ptr, .ts = o->ts, .site = o->site, .cache = o->cache,
		.stack = r->objs.stk ? r->objs.stk[slot] : KMT_STACK_NONE, .bytes = o->bytes,
	};
	return 0;
}

/* Which outstanding objects a snapshot keeps. */
enum keep { KEEP_NONE, KEEP_ALL, KEEP_AFTER };

/*
 * The state now, into s, with the objects outstanding that keep says
 * (KEEP_AFTER: allocated after the time after). 0, or -1 (memory).
 */
static int snap_take(struct grow_snap *s, struct rpt *r, enum keep keep, uint64_t after)
{
	size_t i, cap = 0, nslots = (size_t)1 << r->objs.bits;

	/*
	 * A large kmalloc traced twice whose first event is in the snapshot
	 * stays counted there, as --interval does when a table closes: counts
	 * already taken are never moved afterwards.
	 */
	rpt_shown(r);
	s->nsites = r->nsites;
	s->ncaches = r->ncaches;
	s->nstacks = rpt_nstacks(r);
	s->sites = calloc(s->nsites ? s->nsites : 1, sizeof(*s->sites));
	s->caches = calloc(s->ncaches ? s->ncaches : 1, sizeof(*s->caches));
	s->stacks = calloc(s->nstacks ? s->nstacks : 1, sizeof(*s->stacks));
	if (!s->sites || !s->caches || !s->stacks)
		return -1;
	for (i = 0; i < s->nsites; i++) {
		const struct rpt_site *x = &r->sites[i];

		counts(&s->sites[i], x->hits, x->failed, x->bytes_alloc, x->frees, x->bytes_freed);
		counts(&s->total, x->hits, x->failed, x->bytes_alloc, x->frees, x->bytes_freed);
	}
	for (i = 0; i < s->ncaches; i++) {
		const struct rpt_cache *x = &r->caches[i];

		counts(&s->caches[i], x->allocs, x->failed, x->bytes_alloc, x->frees,
		       x->bytes_freed);
	}
	for (i = 0; i < s->nstacks; i++) {
		const struct rpt_stack *x = rpt_stack(r, i);

		counts(&s->stacks[i], x->hits, x->failed, x->bytes_alloc, x->frees, x->bytes_freed);
	}
	for (i = 0; i < nslots; i++) {
		const struct obj *o = &r->objs.e[i];

		if (!o->ptr || o->state != OBJ_LIVE_SEL)
			continue;
		tally_live(&s->sites[o->site], o);
		tally_live(&s->total, o);
		if (o->cache != UINT32_MAX)
			tally_live(&s->caches[o->cache], o);
		if (r->objs.stk && r->objs.stk[i] != KMT_STACK_NONE &&
		    r->objs.stk[i] < s->nstacks)
			tally_live(&s->stacks[r->objs.stk[i]], o);
		if ((keep == KEEP_ALL || (keep == KEEP_AFTER && o->ts > after)) &&
		    keep_obj(s, &cap, r, i))
			return -1;
	}
	if (s->nobjs > 1)
		qsort(s->objs, s->nobjs, sizeof(*s->objs), by_age);
	s->taken = true;
	return 0;
}

/* The next snapshot, now. 0, or -1 (memory). */
static int take_next(struct growth *g, struct rpt *r)
{
	struct grow_snap *s = &g->snap[g->next];
	enum keep keep = g->next + 1 < g->nsnaps ? KEEP_NONE :
			 g->nsnaps == 2 ? KEEP_AFTER : KEEP_ALL;

	g->next++;
	/*
	 * --at keeps every object outstanding; --diff, at its second time,
	 * the survivors: allocated after its first time (taken before).
	 */
	return snap_take(s, r, keep, g->snap[0].abs_ns);
}

int growth_feed(struct growth *g, struct rpt *r, const union kmt_rec *const *recs, size_t n)
{
	size_t i = 0, k;

	if (!n)
		return 0;
	if (!g->seen) {
		unsigned int j;

		g->seen = true;
		g->first_ts = recs[0]->c.timestamp;
		for (j = 0; j < g->nsnaps; j++) {
			uint64_t rel = g->snap[j].rel_ns;

			g->snap[j].abs_ns = rel > UINT64_MAX - g->first_ts ? UINT64_MAX :
					    g->first_ts + rel;
		}
	}
	if (recs[n - 1]->c.timestamp > g->last_ts)
		g->last_ts = recs[n - 1]->c.timestamp;
	while (i < n) {
		uint64_t at = g->next < g->nsnaps ? g->snap[g->next].abs_ns : UINT64_MAX;

		/* Most batches lie wholly before the next snapshot: fed in one call. */
		for (k = i; k < n && recs[k]->c.timestamp <= at; k++)
			;
		if (rpt_feed_refs(r, recs + i, k - i))
			return -1;
		i = k;
		if (i < n && take_next(g, r))
			return -1;
	}
	return 0;
}

int growth_finish(struct growth *g, struct rpt *r)
{
	while (g->next < g->nsnaps)
		if (take_next(g, r))
			return -1;
	return 0;
}

uint64_t growth_duration(const struct growth *g)
{
	return g->seen && g->last_ts > g->first_ts ? g->last_ts - g->first_ts : 0;
}

bool growth_seen(const struct growth *g)
{
	return g->seen;
}

const struct grow_snap *growth_snap(const struct growth *g, unsigned int i)
{
	return i < g->nsnaps ? &g->snap[i] : NULL;
}

bool growth_is_diff(const struct growth *g)
{
	return g->nsnaps == 2;
}
