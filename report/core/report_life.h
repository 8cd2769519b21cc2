/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report_life.h - object lifetimes (alloc-to-free durations and ages of
 * the objects live at the end) per call site and per cache, and the
 * allocation and free rates over time, kept in fixed-size histograms so
 * that memory grows with call sites, never with the trace's length.
 */
#ifndef REPORT_LIFE_H
#define REPORT_LIFE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Log-linear histogram of durations in ns: values below 8 exactly, then
 * 8 sub-buckets per power of two, so a quantile read from it (the upper
 * bound of its bucket) is at most 12.5% above the true value; n, sum and
 * max are exact.
 */
#define RPT_HIST_SUB	3
#define RPT_HIST_NB	((64 - RPT_HIST_SUB + 1) << RPT_HIST_SUB)

struct rpt_hist {
	uint64_t n, sum, max;
	uint64_t b[RPT_HIST_NB];
};

static inline unsigned int rpt_hist_bucket(uint64_t v)
{
	unsigned int e;

	if (v < (1u << RPT_HIST_SUB))
		return (unsigned int)v;
	e = 63u - (unsigned int)__builtin_clzll(v);
	return ((e - RPT_HIST_SUB + 1) << RPT_HIST_SUB) |
	       (unsigned int)((v >> (e - RPT_HIST_SUB)) & ((1u << RPT_HIST_SUB) - 1));
}

/* The smallest and largest values bucket i holds. */
uint64_t rpt_hist_lo(unsigned int i);
uint64_t rpt_hist_hi(unsigned int i);
/*
 * The q-quantile (0 < q <= 1): the upper bound of the bucket holding the
 * ceil(q * n)-th smallest value, never above max; 0 when empty.
 */
uint64_t rpt_hist_quantile(const struct rpt_hist *h, double q);
/* Values at most v, counting whole buckets only (a lower bound). */
uint64_t rpt_hist_count_le(const struct rpt_hist *h, uint64_t v);
/* log2 buckets: out[k] counts values in [2^k, 2^(k+1)), out[0] also 0. */
void rpt_hist_log2(const struct rpt_hist *h, uint64_t out[64]);

/* The lifetimes of one call site's or one cache's objects. */
struct rpt_life {
	struct rpt_hist freed;	/* alloc-to-free durations, objects freed in the trace */
	uint64_t live;		/* objects live at the end (rpt_finish) */
	uint64_t live_oldest;	/* age of the oldest at the end, ns */
	uint64_t live_log2[64];	/* their ages at the end, log2 buckets as above */
};

/* Buckets of a timeline: a fixed number, their width doubling as the trace grows. */
#define RPT_TL_NB	128

struct rpt_tl {
	uint64_t allocs[RPT_TL_NB];	/* selected allocation events */
	uint64_t frees[RPT_TL_NB];	/* tracked frees of objects allocated here */
};

/* ---- the analysis' side (report_core.c feeds it) ---------------------------- */

struct rpt_lp;

/* lifetimes: keep struct rpt_life per site and cache; timeline: struct rpt_tl. */
struct rpt_lp *lp_new(bool lifetimes, bool timeline);
void lp_free(struct rpt_lp *lp);
size_t lp_memory(const struct rpt_lp *lp);
/* An object of site (and cache, UINT32_MAX: none) freed after ns. 0 or -1 (memory). */
int lp_freed(struct rpt_lp *lp, uint32_t site, uint32_t cache, uint64_t ns);
/* Asks for the memory lp_freed() of site's ns will touch, ahead of it. */
void lp_freed_prefetch(const struct rpt_lp *lp, uint32_t site, uint64_t ns);
/* An object live at the end, of age ns. 0 or -1. */
int lp_live(struct rpt_lp *lp, uint32_t site, uint32_t cache, uint64_t ns);
/* An allocation (free: false) or a free at site, ns after the trace's start. 0 or -1. */
int lp_tl_event(struct rpt_lp *lp, uint32_t site, bool free, uint64_t ns);
/* Takes back an allocation lp_tl_event() counted at site, ns after the start. */
void lp_tl_take_back(struct rpt_lp *lp, uint32_t site, uint64_t ns);

/*
 * Adds src's tallies to dst's (a divided analysis' shards, rpt_shards.c):
 * src's site i counts as dst's site_map[i], its cache j as cache_map[j];
 * the timelines at the wider of their bucket widths. 0 or -1 (memory).
 */
int lp_merge(struct rpt_lp *dst, const struct rpt_lp *src, const uint32_t *site_map,
	     const uint32_t *cache_map);

/* ---- readers ----------------------------------------------------------------- */

/* NULL when lifetimes were not kept or the site/cache had no object freed or live. */
const struct rpt_life *lp_site(const struct rpt_lp *lp, size_t site);
const struct rpt_life *lp_cache(const struct rpt_lp *lp, size_t cache);
/* NULL when no timeline was kept; site SIZE_MAX: all sites. */
const struct rpt_tl *lp_tl(const struct rpt_lp *lp, size_t site);
/* Width of a timeline bucket, ns (a power of two). */
uint64_t lp_tl_width(const struct rpt_lp *lp);

#endif /* REPORT_LIFE_H */
