// SPDX-License-Identifier: GPL-2.0-only
/*
 * report_life.c - lifetimes and timelines per call site and cache: one
 * histogram or timeline per site, allocated when the site first needs it.
 */
#include <stdlib.h>
#include <string.h>

#include "core/report_life.h"

uint64_t rpt_hist_lo(unsigned int i)
{
	unsigned int g = i >> RPT_HIST_SUB;

	if (!g)
		return i;
	return ((uint64_t)(i & ((1u << RPT_HIST_SUB) - 1)) + (1u << RPT_HIST_SUB)) << (g - 1);
}

uint64_t rpt_hist_hi(unsigned int i)
{
	unsigned int g = i >> RPT_HIST_SUB;

	if (!g)
		return i;
	return rpt_hist_lo(i) + (((uint64_t)1 << (g - 1)) - 1);
}

uint64_t rpt_hist_quantile(const struct rpt_hist *h, double q)
{
	uint64_t rank, seen = 0, hi;
	unsigned int i;

	if (!h->n)
		return 0;
	rank = (uint64_t)(q * (double)h->n);
	if ((double)rank < q * (double)h->n)
		rank++;
	if (!rank)
		rank = 1;
	for (i = 0; i < RPT_HIST_NB; i++) {
		seen += h->b[i];
		if (seen >= rank)
			break;
	}
	hi = rpt_hist_hi(i < RPT_HIST_NB ? i : RPT_HIST_NB - 1);
	return hi < h->max ? hi : h->max;
}

uint64_t rpt_hist_count_le(const struct rpt_hist *h, uint64_t v)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < RPT_HIST_NB && rpt_hist_hi(i) <= v; i++)
		n += h->b[i];
	return n;
}

void rpt_hist_log2(const struct rpt_hist *h, uint64_t out[64])
{
	unsigned int i;

	memset(out, 0, 64 * sizeof(out[0]));
	for (i = 0; i < RPT_HIST_NB; i++) {
		uint64_t lo = rpt_hist_lo(i);

		/* Sub-buckets never straddle a power of two. */
		out[lo > 1 ? 63 - __builtin_clzll(lo) : 0] += h->b[i];
	}
}

/* A dense array of pointers, grown to hold index i; the pointee allocated on first use. */
struct parr {
	void **p;
	size_t n;
};

struct rpt_lp {
	bool lifetimes, timeline;
	struct parr sites, caches;	/* struct rpt_life */
	struct parr tls;		/* struct rpt_tl by site */
	struct rpt_tl all;
	unsigned int shift;		/* bucket width 2^shift ns */
	size_t bytes;			/* held by the pointees */
};

static __attribute__((noinline)) void *parr_make(struct rpt_lp *lp, struct parr *a, size_t i,
						   size_t size)
{
	if (i >= a->n) {
		size_t n = a->n ? a->n : 64;
		void **p;

		while (n <= i)
			n *= 2;
		p = realloc(a->p, n * sizeof(*p));
		if (!p)
			return NULL;
		memset(p + a->n, 0, (n - a->n) * sizeof(*p));
		a->p = p;
		a->n = n;
	}
	if (!a->p[i]) {
		a->p[i] = calloc(1, size);
		if (!a->p[i])
			return NULL;
		lp->bytes += size;
	}
	return a->p[i];
}

/* Element i, made (zeroed) when it is not yet: once per site, cache or timeline. */
static inline void *parr_get(struct rpt_lp *lp, struct parr *a, size_t i, size_t size)
{
	if (__builtin_expect(i < a->n && a->p[i], 1))
		return a->p[i];
	return parr_make(lp, a, i, size);
}

static void parr_free(struct parr *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		free(a->p[i]);
	free(a->p);
}

struct rpt_lp *lp_new(bool lifetimes, bool timeline)
{
	struct rpt_lp *lp = calloc(1, sizeof(*lp));

	if (!lp)
		return NULL;
	lp->lifetimes = lifetimes;
	lp->timeline = timeline;
	/* 2^20 ns (~1 ms) buckets to begin with: a short trace keeps its detail. */
	lp->shift = 20;
	return lp;
}

void lp_free(struct rpt_lp *lp)
{
	if (!lp)
		return;
	parr_free(&lp->sites);
	parr_free(&lp->caches);
	parr_free(&lp->tls);
	free(lp);
}

size_t lp_memory(const struct rpt_lp *lp)
{
	return sizeof(*lp) + lp->bytes +
	       (lp->sites.n + lp->caches.n + lp->tls.n) * sizeof(void *);
}

static inline void hist_add(struct rpt_hist *h, uint64_t v)
{
	h->n++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
	h->b[rpt_hist_bucket(v)]++;
}

int lp_freed(struct rpt_lp *lp, uint32_t site, uint32_t cache, uint64_t ns)
{
	struct rpt_life *l = parr_get(lp, &lp->sites, site, sizeof(*l));

	if (!l)
		return -1;
	hist_add(&l->freed, ns);
	if (cache == UINT32_MAX)
		return 0;
	l = parr_get(lp, &lp->caches, cache, sizeof(*l));
	if (!l)
		return -1;
	hist_add(&l->freed, ns);
	return 0;
}

void lp_freed_prefetch(const struct rpt_lp *lp, uint32_t site, uint64_t ns)
{
	const struct rpt_life *l;

	if (site >= lp->sites.n || !lp->sites.p[site])
		return;
	l = lp->sites.p[site];
	/* The histogram's count, sum and maximum are a line of their own. */
	__builtin_prefetch(&l->freed);
	__builtin_prefetch(&l->freed.b[rpt_hist_bucket(ns)]);
}

static void live_add(struct rpt_life *l, uint64_t ns)
{
	l->live++;
	if (ns > l->live_oldest)
		l->live_oldest = ns;
	l->live_log2[ns > 1 ? 63 - __builtin_clzll(ns) : 0]++;
}

int lp_live(struct rpt_lp *lp, uint32_t site, uint32_t cache, uint64_t ns)
{
	struct rpt_life *l = parr_get(lp, &lp->sites, site, sizeof(*l));

	if (!l)
		return -1;
	live_add(l, ns);
	if (cache == UINT32_MAX)
		return 0;
	l = parr_get(lp, &lp->caches, cache, sizeof(*l));
	if (!l)
		return -1;
	live_add(l, ns);
	return 0;
}

/* Halves the resolution: bucket pairs merge, the second half empties. */
static void tl_halve(struct rpt_tl *t)
{
	unsigned int i;

	for (i = 0; i < RPT_TL_NB / 2; i++) {
		t->allocs[i] = t->allocs[2 * i] + t->allocs[2 * i + 1];
		t->frees[i] = t->frees[2 * i] + t->frees[2 * i + 1];
	}
	memset(&t->allocs[RPT_TL_NB / 2], 0, sizeof(t->allocs) / 2);
	memset(&t->frees[RPT_TL_NB / 2], 0, sizeof(t->frees) / 2);
}

int lp_tl_event(struct rpt_lp *lp, uint32_t site, bool free, uint64_t ns)
{
	uint64_t b = ns >> lp->shift;
	struct rpt_tl *t;

	/* Rare: at most once per doubling of the trace's length. */
	while (__builtin_expect(b >= RPT_TL_NB, 0)) {
		size_t i;

		for (i = 0; i < lp->tls.n; i++)
			if (lp->tls.p[i])
				tl_halve(lp->tls.p[i]);
		tl_halve(&lp->all);
		lp->shift++;
		b = ns >> lp->shift;
	}
	t = parr_get(lp, &lp->tls, site, sizeof(*t));
	if (!t)
		return -1;
	if (free) {
		t->frees[b]++;
		lp->all.frees[b]++;
	} else {
		t->allocs[b]++;
		lp->all.allocs[b]++;
	}
	return 0;
}

void lp_tl_take_back(struct rpt_lp *lp, uint32_t site, uint64_t ns)
{
	uint64_t b = ns >> lp->shift;

	if (site >= lp->tls.n || !lp->tls.p[site] || b >= RPT_TL_NB)
		return;
	((struct rpt_tl *)lp->tls.p[site])->allocs[b]--;
	lp->all.allocs[b]--;
}

static void hist_merge(struct rpt_hist *d, const struct rpt_hist *s)
{
	unsigned int i;

	d->n += s->n;
	d->sum += s->sum;
	if (s->max > d->max)
		d->max = s->max;
	for (i = 0; i < RPT_HIST_NB; i++)
		d->b[i] += s->b[i];
}

static void life_merge(struct rpt_life *d, const struct rpt_life *s)
{
	unsigned int i;

	hist_merge(&d->freed, &s->freed);
	d->live += s->live;
	if (s->live_oldest > d->live_oldest)
		d->live_oldest = s->live_oldest;
	for (i = 0; i < 64; i++)
		d->live_log2[i] += s->live_log2[i];
}

/* s's timeline, at its bucket width 2^shift, added to d's at dst's (at least as wide). */
static void tl_merge(struct rpt_tl *d, const struct rpt_tl *s, unsigned int shift,
		     unsigned int dshift)
{
	struct rpt_tl t = *s;
	unsigned int i;

	for (; shift < dshift; shift++)
		tl_halve(&t);
	for (i = 0; i < RPT_TL_NB; i++) {
		d->allocs[i] += t.allocs[i];
		d->frees[i] += t.frees[i];
	}
}

int lp_merge(struct rpt_lp *dst, const struct rpt_lp *src, const uint32_t *site_map,
	     const uint32_t *cache_map)
{
	size_t i;

	/* Both at the wider width: a bucket's events are those of ns >> shift, however reached. */
	while (dst->shift < src->shift) {
		for (i = 0; i < dst->tls.n; i++)
			if (dst->tls.p[i])
				tl_halve(dst->tls.p[i]);
		tl_halve(&dst->all);
		dst->shift++;
	}
	for (i = 0; i < src->sites.n; i++) {
		struct rpt_life *l;

		if (!src->sites.p[i])
			continue;
		l = parr_get(dst, &dst->sites, site_map[i], sizeof(*l));
		if (!l)
			return -1;
		life_merge(l, src->sites.p[i]);
	}
	for (i = 0; i < src->caches.n; i++) {
		struct rpt_life *l;

		if (!src->caches.p[i])
			continue;
		l = parr_get(dst, &dst->caches, cache_map[i], sizeof(*l));
		if (!l)
			return -1;
		life_merge(l, src->caches.p[i]);
	}
	for (i = 0; i < src->tls.n; i++) {
		struct rpt_tl *t;

		if (!src->tls.p[i])
			continue;
		t = parr_get(dst, &dst->tls, site_map[i], sizeof(*t));
		if (!t)
			return -1;
		tl_merge(t, src->tls.p[i], src->shift, dst->shift);
	}
	tl_merge(&dst->all, &src->all, src->shift, dst->shift);
	return 0;
}

const struct rpt_life *lp_site(const struct rpt_lp *lp, size_t site)
{
	return lp && lp->lifetimes && site < lp->sites.n ? lp->sites.p[site] : NULL;
}

const struct rpt_life *lp_cache(const struct rpt_lp *lp, size_t cache)
{
	return lp && lp->lifetimes && cache < lp->caches.n ? lp->caches.p[cache] : NULL;
}

const struct rpt_tl *lp_tl(const struct rpt_lp *lp, size_t site)
{
	if (!lp || !lp->timeline)
		return NULL;
	if (site == SIZE_MAX)
		return &lp->all;
	return site < lp->tls.n ? lp->tls.p[site] : NULL;
}

uint64_t lp_tl_width(const struct rpt_lp *lp)
{
	return lp ? (uint64_t)1 << lp->shift : 0;
}
