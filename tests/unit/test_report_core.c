// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_report_core.c - unit tests of kmemtrace-report's analysis on
 * synthetic traces: totals and call sites against the generator's own
 * tallies in every byte order and word size, each error kind, untracked
 * and implicit frees, lost records, outstanding objects and their age,
 * page events kept apart, caches, filters and bounded memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"
#include "kmt_reader.h"
#include "core/report_core.h"
#include "tap.h"
#include "testlib.h"

/* xorshift64*: the same sequence on every machine. */
static uint64_t rnd_state;

static uint64_t rnd(void)
{
	return gen_xorshift(&rnd_state);
}

static unsigned int rndn(unsigned int n)
{
	return (unsigned int)(rnd() % n);
}

#define NSITES		12
#define NCACHES		3
#define POOL		512

struct live_obj {
	uint64_t ptr;
	uint64_t cache_id;	/* 0: kmalloc */
};

/* The kmalloc size classes of SLUB, which the generator's workload uses too. */
static uint32_t size_class(uint32_t req)
{
	static const uint32_t cls[] = { 8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048 };
	size_t i;

	for (i = 0; i < sizeof(cls) / sizeof(cls[0]); i++)
		if (req <= cls[i])
			return cls[i];
	return 4096;
}

/*
 * A workload with no errors in it: allocations (some failed, some asking
 * for another node), frees on any CPU with the right function, frees of
 * objects from before the trace, addresses reused, lost records. Addresses
 * fit in 32 bits so that one workload suits both word sizes.
 */
static int workload(const char *dir, const struct gen_opts *opts, unsigned int nevents,
		    uint64_t seed, struct gen **out)
{
	static const uint64_t cache_ids[NCACHES] = { 0xc7001000, 0xc7002000, 0xc7003000 };
	static const char *const cache_names[NCACHES] = { "dentry", "inode_cache", "task_struct" };
	static const uint32_t cache_size[NCACHES] = { 192, 600, 3712 };
	struct live_obj pool[POOL];
	uint64_t freelist[POOL], next_addr = 0xc1000000, t = 1000;
	size_t npool = 0, nfree = 0;
	struct gen *g = gen_open(dir, 3, opts);
	unsigned int i, c, k;

	if (!g)
		return -1;
	rnd_state = seed;
	for (c = 0; c < 3; c++)
		gen_set_cpu_node(g, c, c == 2 ? 1 : 0);
	for (c = 0; c < 3; c++)
		for (k = 0; k < NCACHES; k++)
			if (gen_cache_desc(g, c, t, cache_ids[k], cache_size[k] - 8, cache_size[k],
					   cache_names[k]))
				return -1;
	for (i = 0; i < nevents; i++) {
		unsigned int cpu = rndn(3), what = rndn(100);
		uint64_t site = 0xc0100000 + 0x40 * rndn(NSITES);
		int ret;

		t += 1 + rndn(500);
		if (what < 2) {
			ret = gen_lost(g, cpu, t, 1 + rndn(9));
		} else if (what < 5) {
			/* An object allocated before the trace began. */
			ret = gen_kfree(g, cpu, t, site + 0x8000, 0xd0000000 + 64 * (uint64_t)i, 7);
		} else if (what < 55 && npool < POOL) {
			int32_t node = rndn(10) == 0 ? (int32_t)rndn(2) : KMT_NODE_ANY;
			bool fail = rndn(50) == 0;
			uint64_t ptr = 0;

			if (!fail)
				ptr = nfree && rndn(2) ? freelist[--nfree] : (next_addr += 0x800);
			if (rndn(2)) {
				uint32_t req = 1 + rndn(2000);

				ret = gen_kmalloc(g, cpu, t, site, ptr, req, size_class(req), node,
						  100 + cpu);
				if (ptr)
					pool[npool++] = (struct live_obj){ ptr, 0 };
			} else {
				k = rndn(NCACHES);
				ret = gen_cache_alloc(g, cpu, t, site + 0x1000, ptr, cache_ids[k],
						      cache_size[k] - 8, cache_size[k], node,
						      100 + cpu);
				if (ptr)
					pool[npool++] = (struct live_obj){ ptr, cache_ids[k] };
			}
		} else if (npool) {
			size_t j = rndn((unsigned int)npool);
			struct live_obj o = pool[j];

			pool[j] = pool[--npool];
			if (nfree < POOL)
				freelist[nfree++] = o.ptr;
			if (o.cache_id)
				ret = gen_cache_free(g, cpu, t, site + 0x2000, o.ptr, o.cache_id, 9);
			else
				ret = gen_kfree(g, cpu, t, site + 0x2000, o.ptr, 9);
		} else {
			ret = 0;
		}
		if (ret)
			return -1;
	}
	*out = g;
	return 0;
}

static void check_against_gen(const struct rpt *r, const struct gen *g, const char *what)
{
	const struct gen_totals *gt = gen_totals(g);
	const struct rpt_totals *t = rpt_totals(r);
	size_t i, bad = 0;

	is_u64(t->allocs, gt->allocs, "%s: allocs", what);
	is_u64(t->failed_allocs, gt->failed_allocs, "%s: failed_allocs", what);
	is_u64(t->bytes_req, gt->bytes_req, "%s: bytes_req", what);
	is_u64(t->bytes_alloc, gt->bytes_alloc, "%s: bytes_alloc", what);
	is_u64(t->frees, gt->frees, "%s: frees", what);
	is_u64(t->untracked_frees, gt->untracked_frees, "%s: untracked_frees", what);
	is_u64(t->bytes_freed, gt->bytes_freed, "%s: bytes_freed", what);
	is_u64(t->cross_cpu_frees, gt->cross_cpu_frees, "%s: cross_cpu_frees", what);
	is_u64(t->cross_node_allocs, gt->cross_node_allocs, "%s: cross_node_allocs", what);
	is_u64(t->outstanding, gt->outstanding, "%s: outstanding", what);
	is_u64(t->outstanding_bytes, gt->outstanding_bytes, "%s: outstanding_bytes", what);
	is_u64(t->lost, gt->lost, "%s: lost", what);
	is_u64(t->lost_markers, gt->lost_markers, "%s: lost markers", what);
	is_u64(t->cache_descs, gt->cache_descs, "%s: cache descriptions", what);
	is_u64(rpt_nerrors(r), 0, "%s: no errors in an error-free workload", what);
	for (i = 0; i < gen_ncallsites(g); i++) {
		const struct gen_callsite *gs = gen_callsite_at(g, i);
		const struct rpt_site *s = rpt_site_find(r, gs->addr);

		/* Free call sites appear in the generator's list with no allocations. */
		if (!gs->hits)
			continue;
		if (!s || s->hits != gs->hits || s->failed != gs->failed ||
		    s->bytes_req != gs->bytes_req || s->bytes_alloc != gs->bytes_alloc ||
		    s->frees != gs->frees || s->cross_cpu_frees != gs->cross_cpu_frees ||
		    s->out_count != gs->outstanding || s->out_bytes != gs->outstanding_bytes) {
			if (!bad++)
				diag("call site 0x%llx differs", (unsigned long long)gs->addr);
		}
	}
	is_u64(bad, 0, "%s: every call site's hits, bytes, frees, cross-CPU frees and "
	       "outstanding as the generator counted", what);
}

static void test_workload_all_formats(void)
{
	static const struct {
		const char *name;
		int be;
		unsigned int bits;
	} fmts[] = { { "le64", 0, 64 }, { "be64", 1, 64 }, { "le32", 0, 32 }, { "be32", 1, 32 } };
	struct rpt_totals first;
	size_t i;

	memset(&first, 0, sizeof(first));
	for (i = 0; i < 4; i++) {
		struct gen_opts o = { .big_endian = fmts[i].be, .word_bits = fmts[i].bits };
		struct gen *g = NULL;
		struct rpt *r;

		if (!ok(workload(test_path(fmts[i].name), &o, 20000, 42, &g) == 0 &&
			gen_flush(g) == 0, "%s: workload written", fmts[i].name))
			continue;
		r = test_analyse(test_path(fmts[i].name), NULL, 0);
		if (ok(r != NULL, "%s: analysed", fmts[i].name)) {
			const struct rpt_totals *t = rpt_totals(r);

			check_against_gen(r, g, fmts[i].name);
			if (i == 0) {
				first = *t;
			} else {
				ok(t->allocs == first.allocs && t->frees == first.frees &&
				   t->bytes_alloc == first.bytes_alloc &&
				   t->bytes_req == first.bytes_req && t->lost == first.lost &&
				   t->outstanding == first.outstanding &&
				   t->cross_cpu_frees == first.cross_cpu_frees &&
				   t->first_ts == first.first_ts && t->last_ts == first.last_ts,
				   "%s: same totals as le64", fmts[i].name);
			}
			ok(t->lost > 0 && t->untracked_frees > 0 && t->failed_allocs > 0 &&
			   t->cross_node_allocs > 0 && t->cross_cpu_frees > 0,
			   "%s: the workload exercised lost, untracked, failed, cross-node, "
			   "cross-CPU", fmts[i].name);
			rpt_free(r);
		}
		gen_close(g);
	}
}

/* Sites of the error scenario. */
#define S_A	0xffffffffc0001000ULL	/* cache alloc, freed by kfree at B */
#define S_B	0xffffffffc0001100ULL
#define S_C	0xffffffffc0001200ULL	/* kmalloc, freed by cache_free at D */
#define S_D	0xffffffffc0001300ULL
#define S_E	0xffffffffc0001400ULL	/* cache X alloc, freed to cache Y at F */
#define S_F	0xffffffffc0001500ULL
#define S_G	0xffffffffc0001600ULL	/* kmalloc, freed twice at H */
#define S_H	0xffffffffc0001700ULL
#define S_I	0xffffffffc0001800ULL	/* short allocation */
#define S_J	0xffffffffc0001900ULL	/* cache alloc, freed twice at K */
#define S_K	0xffffffffc0001a00ULL
#define CX	0xffff888000a00000ULL
#define CY	0xffff888000b00000ULL
#define P(n)	(0xffff888100000000ULL + 0x100 * (n))

static const struct rpt_error *find_error(const struct rpt *r, enum rpt_err_kind k)
{
	size_t i;

	for (i = 0; i < rpt_nerrors(r); i++)
		if (rpt_error(r, i)->kind == k)
			return rpt_error(r, i);
	return NULL;
}

static void test_errors(void)
{
	const unsigned int n_kfree_cache = 3, n_cfree_kmalloc = 2;
	struct gen *g = gen_open(test_path("errors"), 2, NULL);
	const struct rpt_error *e;
	uint64_t t = 100;
	struct rpt *r;
	unsigned int i, c;
	int w = 0;

	if (!ok(g != NULL, "errors: generator"))
		return;
	for (c = 0; c < 2; c++) {
		w |= gen_cache_desc(g, c, t, CX, 56, 64, "foo_cache");
		w |= gen_cache_desc(g, c, t, CY, 56, 64, "bar_cache");
	}
	for (i = 0; i < n_kfree_cache; i++)
		w |= gen_cache_alloc(g, 0, t++, S_A, P(i), CX, 56, 64, KMT_NODE_ANY, 1);
	for (i = 0; i < n_kfree_cache; i++)
		w |= gen_kfree(g, 1, t++, S_B, P(i), 1);
	for (i = 0; i < n_cfree_kmalloc; i++)
		w |= gen_kmalloc(g, 0, t++, S_C, P(10 + i), 100, 128, KMT_NODE_ANY, 1);
	for (i = 0; i < n_cfree_kmalloc; i++)
		w |= gen_cache_free(g, 0, t++, S_D, P(10 + i), CX, 1);
	w |= gen_cache_alloc(g, 0, t++, S_E, P(20), CX, 56, 64, KMT_NODE_ANY, 1);
	w |= gen_cache_free(g, 0, t++, S_F, P(20), CY, 1);
	w |= gen_kmalloc(g, 1, t++, S_G, P(30), 32, 32, KMT_NODE_ANY, 1);
	w |= gen_kfree(g, 1, t++, S_H, P(30), 1);
	w |= gen_kfree(g, 1, t++, S_H, P(30), 1);
	w |= gen_kmalloc(g, 0, t++, S_I, P(40), 100, 64, KMT_NODE_ANY, 1);
	w |= gen_cache_alloc(g, 0, t++, S_J, P(50), CX, 56, 64, KMT_NODE_ANY, 1);
	w |= gen_cache_free(g, 0, t++, S_K, P(50), CX, 1);
	w |= gen_cache_free(g, 0, t++, S_K, P(50), CX, 1);
	if (!ok(w == 0 && gen_flush(g) == 0, "errors: trace written"))
		return;
	r = test_analyse(test_path("errors"), NULL, 0);
	if (!ok(r != NULL, "errors: analysed")) {
		gen_close(g);
		return;
	}
	e = find_error(r, RPT_ERR_KFREE_OF_CACHE_OBJ);
	ok(e && e->count == n_kfree_cache && e->alloc_site == S_A && e->free_site == S_B,
	   "kfree_of_cache_object: %u, alloc A, free B", n_kfree_cache);
	e = find_error(r, RPT_ERR_CACHE_FREE_OF_KMALLOC);
	ok(e && e->count == n_cfree_kmalloc && e->alloc_site == S_C && e->free_site == S_D,
	   "cache_free_of_kmalloc_object: %u, alloc C, free D", n_cfree_kmalloc);
	e = find_error(r, RPT_ERR_CACHE_MISMATCH);
	ok(e && e->count == 1 && e->alloc_site == S_E && e->free_site == S_F,
	   "cache_mismatch: 1, alloc E, free F");
	e = find_error(r, RPT_ERR_DOUBLE_FREE);
	ok(e && e->count == 1 && e->alloc_site == S_G && e->free_site == S_H && !e->uncertain,
	   "double_free: 1, alloc G, free H; certain for a kmalloc() object");
	e = rpt_error(r, rpt_nerrors(r) - 1);
	ok(e && e->kind == RPT_ERR_DOUBLE_FREE && e->count == 1 && e->alloc_site == S_J &&
	   e->free_site == S_K && e->uncertain,
	   "double_free of a cache object: uncertain (bulk allocations are not traced)");
	e = find_error(r, RPT_ERR_SHORT_ALLOC);
	ok(e && e->count == 1 && e->alloc_site == S_I && e->free_site == 0,
	   "short_allocation: 1 at I");
	is_u64(rpt_nerrors(r), 6, "errors: exactly six error entries");
	/* The generator counts the second free as untracked; the report as a double free. */
	is_u64(rpt_totals(r)->double_frees, 2, "errors: double_frees total");
	is_u64(rpt_totals(r)->untracked_frees, gen_totals(g)->untracked_frees - 2,
	       "errors: a double free is not an untracked free");
	is_u64(rpt_totals(r)->frees, gen_totals(g)->frees, "errors: every free counted");
	is_u64(rpt_totals(r)->cross_cpu_frees, n_kfree_cache,
	       "errors: the kfree()s on CPU 1 are cross-CPU frees");
	is_u64(rpt_site_find(r, S_A)->cross_cpu_frees, n_kfree_cache,
	       "errors: ... counted at the allocating site");
	is_u64(rpt_totals(r)->kfree_cache_objects, n_kfree_cache,
	       "errors: kfree() of cache objects counted");
	rpt_free(r);

	/* A kernel whose kfree() takes kmem_cache objects (6.4+): counted, no error. */
	r = test_analyse(test_path("errors"), NULL, RPT_KFREE_TAKES_CACHE_OBJS);
	if (ok(r != NULL, "errors, kfree() taking cache objects: analysed")) {
		ok(!find_error(r, RPT_ERR_KFREE_OF_CACHE_OBJ),
		   "errors, kfree() taking cache objects: no kfree_of_cache_object");
		is_u64(rpt_totals(r)->kfree_cache_objects, n_kfree_cache,
		       "errors, kfree() taking cache objects: still counted");
		is_u64(rpt_nerrors(r), 5, "errors, kfree() taking cache objects: the other five");
		rpt_free(r);
	}
	gen_close(g);
}

#define S1	0xffffffff81000100ULL
#define S2	0xffffffff81000200ULL
#define S3	0xffffffff81000300ULL

static void test_outstanding_age_frag(void)
{
	struct gen *g = gen_open(test_path("age"), 1, NULL);
	const struct rpt_site *s;
	struct rpt *r;
	int w = 0;

	if (!ok(g != NULL, "age: generator"))
		return;
	w |= gen_kmalloc(g, 0, 1000, S1, P(1), 10, 16, KMT_NODE_ANY, 1);
	w |= gen_kmalloc(g, 0, 2000, S2, P(2), 8, 8, KMT_NODE_ANY, 1);
	w |= gen_kfree(g, 0, 3000, S2, P(2), 1);
	w |= gen_kmalloc(g, 0, 4000, S3, P(3), 64, 64, KMT_NODE_ANY, 1);
	w |= gen_kmalloc(g, 0, 5000, S1, P(4), 20, 32, KMT_NODE_ANY, 1);
	/* P(3) again without a free in between: that free was not traced. */
	w |= gen_kmalloc(g, 0, 6000, S3, P(3), 64, 64, KMT_NODE_ANY, 1);
	w |= gen_kfree(g, 0, 10000, S2, P(99), 1);
	if (!ok(w == 0 && gen_flush(g) == 0, "age: trace written"))
		return;
	r = test_analyse(test_path("age"), NULL, 0);
	if (!ok(r != NULL, "age: analysed")) {
		gen_close(g);
		return;
	}
	s = rpt_site_find(r, S1);
	ok(s && s->out_count == 2 && s->out_bytes == 48, "age: S1 has 2 objects, 48 bytes out");
	is_u64(s ? s->out_oldest_ts : 0, 1000, "age: S1's oldest from t=1000");
	is_u64(rpt_totals(r)->last_ts - (s ? s->out_oldest_ts : 0), 9000,
	       "age: S1's max age is end (10000) - 1000");
	ok(s && s->bytes_req == 30 && s->bytes_alloc == 48 &&
	   rpt_frag(s->bytes_req, s->bytes_alloc) == 100.0 - 100.0 * 30 / 48,
	   "frag: 100 - 100 * 30 / 48");
	s = rpt_site_find(r, S3);
	ok(s && s->out_count == 1 && s->out_oldest_ts == 6000,
	   "implicit free: the reallocated address counts once, from t=6000");
	is_u64(rpt_totals(r)->implicit_frees, 1, "implicit free counted");
	s = rpt_site_find(r, S2);
	ok(s && s->out_count == 0 && s->frees == 1, "S2's object was freed");
	is_u64(rpt_totals(r)->untracked_frees, 1, "free of an unknown object is untracked");
	is_u64(rpt_totals(r)->outstanding, gen_totals(g)->outstanding,
	       "outstanding as the generator counted");
	is_u64(rpt_nerrors(r), 0, "no errors");
	ok(rpt_frag(0, 0) == 0.0, "frag of nothing is 0");
	rpt_free(r);
	gen_close(g);
}

static void test_pages_apart(void)
{
	struct gen *g = gen_open(test_path("pages"), 1, NULL);
	const struct rpt_totals *t;
	struct rpt *r;
	int w = 0;

	if (!ok(g != NULL, "pages: generator"))
		return;
	/* A PFN numerically equal to a slab address must not meet it. */
	w |= gen_page_alloc(g, 0, 100, S1, 0x12340, 2, KMT_NODE_ANY, 1);
	w |= gen_kmalloc(g, 0, 200, S2, 0x12340, 8, 8, KMT_NODE_ANY, 1);
	w |= gen_kfree(g, 0, 300, S2, 0x12340, 1);
	w |= gen_page_alloc(g, 0, 400, S1, 0x55550, 0, KMT_NODE_ANY, 1);
	w |= gen_page_free(g, 0, 500, S1, 0x12340, 2, 1);
	w |= gen_page_free(g, 0, 600, S1, 0x77770, 0, 1);
	if (!ok(w == 0 && gen_flush(g) == 0, "pages: trace written"))
		return;
	r = test_analyse(test_path("pages"), NULL, 0);
	if (!ok(r != NULL, "pages: analysed")) {
		gen_close(g);
		return;
	}
	t = rpt_totals(r);
	is_u64(t->page_allocs, 2, "pages: 2 page allocations");
	is_u64(t->page_bytes_alloc, 4096 * 4 + 4096, "pages: 4 pages + 1 page of bytes");
	is_u64(t->page_frees, 2, "pages: 2 page frees");
	is_u64(t->page_untracked_frees, 1, "pages: 1 of an unknown frame");
	is_u64(t->page_outstanding, 1, "pages: 1 outstanding");
	is_u64(t->page_outstanding_bytes, 4096, "pages: its bytes");
	ok(t->allocs == 1 && t->frees == 1 && t->untracked_frees == 0 && t->outstanding == 0,
	   "pages: slab counts untouched by the same number as a PFN");
	ok(!rpt_site_find(r, S1), "pages: page events make no slab call site");
	rpt_free(r);
	gen_close(g);
}

static void test_lost_and_cross_node(void)
{
	struct gen *g = gen_open(test_path("lost"), 2, NULL);
	struct rpt *r;
	int w = 0;

	if (!ok(g != NULL, "lost: generator"))
		return;
	gen_set_cpu_node(g, 1, 1);
	w |= gen_kmalloc(g, 0, 100, S1, P(1), 8, 8, 1, 1);		/* cross */
	w |= gen_kmalloc(g, 1, 110, S1, P(2), 8, 8, 1, 1);		/* local */
	w |= gen_kmalloc(g, 1, 120, S1, P(3), 8, 8, 0, 1);		/* cross */
	w |= gen_kmalloc(g, 0, 130, S1, P(4), 8, 8, KMT_NODE_ANY, 1);	/* none */
	w |= gen_lost(g, 0, 200, 5);
	w |= gen_lost(g, 1, 210, 7);
	w |= gen_lost(g, 1, 220, 1);
	w |= gen_kfree(g, 0, 300, S2, P(1), 1);
	gen_set_flags(g, 1, KMT_F_CLAMPED);
	w |= gen_kmalloc(g, 1, 310, S3, 0, UINT32_MAX, UINT32_MAX, KMT_NODE_ANY, 1);
	gen_set_flags(g, 1, 0);
	if (!ok(w == 0 && gen_flush(g) == 0, "lost: trace written"))
		return;
	r = test_analyse(test_path("lost"), NULL, 0);
	if (!ok(r != NULL, "lost: analysed")) {
		gen_close(g);
		return;
	}
	is_u64(rpt_totals(r)->clamped_allocs, 1, "clamped: a saturated allocation counted");
	is_u64(rpt_totals(r)->lost, 5 + 7 + 1, "lost: sum of LOST counts");
	is_u64(rpt_totals(r)->lost_markers, 3, "lost: 3 markers");
	is_u64(rpt_lost_on_cpu(r, 0), 5, "lost: cpu0");
	is_u64(rpt_lost_on_cpu(r, 1), 8, "lost: cpu1");
	is_u64(rpt_totals(r)->cross_node_allocs, 2, "cross-node: node asked != CPU's node");
	is_u64(rpt_site_find(r, S1)->cross_node, 2, "cross-node: per call site");
	is_u64(rpt_totals(r)->cross_node_allocs, gen_totals(g)->cross_node_allocs,
	       "cross-node: as the generator counted");
	rpt_free(r);
	gen_close(g);
}

static void test_caches(void)
{
	struct gen *g = gen_open(test_path("caches"), 1, NULL);
	const struct rpt_cache *c;
	struct rpt *r;
	int w = 0;

	if (!ok(g != NULL, "caches: generator"))
		return;
	w |= gen_cache_desc(g, 0, 10, CX, 56, 64, "foo_cache");
	w |= gen_cache_alloc(g, 0, 20, S1, P(1), CX, 56, 64, KMT_NODE_ANY, 1);
	w |= gen_cache_alloc(g, 0, 30, S1, P(2), CX, 56, 64, KMT_NODE_ANY, 1);
	w |= gen_cache_free(g, 0, 40, S2, P(1), CX, 1);
	w |= gen_cache_free(g, 0, 45, S2, P(50), CX, 1);	/* pre-trace object */
	w |= gen_kmalloc(g, 0, 50, S3, P(3), 40, 64, KMT_NODE_ANY, 1);
	w |= gen_kmalloc(g, 0, 60, S3, P(4), 50, 64, KMT_NODE_ANY, 1);
	w |= gen_kmalloc(g, 0, 70, S3, P(5), 100, 128, KMT_NODE_ANY, 1);
	w |= gen_kfree(g, 0, 80, S2, P(4), 1);
	w |= gen_cache_free(g, 0, 90, S2, P(2), CX, 1);
	/* Destroyed, and another cache created at the same address. */
	w |= gen_cache_desc(g, 0, 100, CX, 100, 128, "bar_cache");
	w |= gen_cache_alloc(g, 0, 110, S1, P(6), CX, 100, 128, KMT_NODE_ANY, 1);
	w |= gen_kmalloc(g, 0, 120, S3, P(7), 1500, 2048, KMT_NODE_ANY, 1);
	if (!ok(w == 0 && gen_flush(g) == 0, "caches: trace written"))
		return;
	r = test_analyse(test_path("caches"), NULL, 0);
	if (!ok(r != NULL, "caches: analysed")) {
		gen_close(g);
		return;
	}
	c = rpt_cache_find(r, "foo_cache");
	ok(c && c->allocs == 2 && c->frees == 2 && c->bytes_alloc == 128 && c->live == 0 &&
	   c->untracked_frees == 1 && c->object_size == 56 && c->size == 64 && !c->pseudo,
	   "caches: foo_cache 2 allocs, 2 frees, 128 bytes, 0 live, 1 untracked");
	c = rpt_cache_find(r, "kmalloc-64");
	ok(c && c->pseudo && c->allocs == 2 && c->frees == 1 && c->bytes_alloc == 128 &&
	   c->bytes_req == 90 && c->live == 1 && c->live_bytes == 64,
	   "caches: kmalloc-64 pseudo-cache from kmalloc's bytes_alloc");
	c = rpt_cache_find(r, "kmalloc-128");
	ok(c && c->allocs == 1 && c->live == 1, "caches: kmalloc-128");
	c = rpt_cache_find(r, "kmalloc-2k");
	ok(c && c->allocs == 1 && c->bytes_alloc == 2048, "caches: kmalloc-2k, the kernel's name");
	c = rpt_cache_find(r, "bar_cache");
	ok(c && c->allocs == 1 && c->live == 1 && c->size == 128,
	   "caches: a new cache at a recycled address is a new cache");
	is_u64(rpt_ncaches(r), 5, "caches: five caches");
	is_u64(rpt_nerrors(r), 0, "caches: no errors");
	rpt_free(r);
	gen_close(g);
}

static void test_filters(void)
{
	struct gen *g = gen_open(test_path("filters"), 2, NULL);
	struct rpt_filter f;
	uint8_t cpus[2] = { 1, 0 };
	struct rpt *r;
	uint64_t t = 1000;
	unsigned int i, n0 = 7, n1 = 5;
	int w = 0;

	if (!ok(g != NULL, "filters: generator"))
		return;
	w |= gen_cache_desc(g, 0, t, CX, 56, 64, "foo_cache");
	/* CPU 0, pid 10: n0 kmalloc(100) -> 128, freed on CPU 1. */
	for (i = 0; i < n0; i++)
		w |= gen_kmalloc(g, 0, t += 10, S1, P(i), 100, 128, KMT_NODE_ANY, 10);
	/* CPU 1, pid 20: n1 cache allocations of 56 bytes. */
	for (i = 0; i < n1; i++)
		w |= gen_cache_alloc(g, 1, t += 10, S2, P(100 + i), CX, 56, 64, KMT_NODE_ANY, 20);
	for (i = 0; i < n0; i++)
		w |= gen_kfree(g, 1, t += 10, S3, P(i), 20);
	if (!ok(w == 0 && gen_flush(g) == 0, "filters: trace written"))
		return;

	memset(&f, 0, sizeof(f));
	f.cpus = cpus;
	f.ncpus = 2;
	r = test_analyse(test_path("filters"), &f, 0);
	ok(r && rpt_totals(r)->allocs == n0 && rpt_totals(r)->frees == n0 &&
	   rpt_totals(r)->cross_cpu_frees == n0 && rpt_totals(r)->outstanding == 0,
	   "--cpu 0: CPU 0's allocations, and their frees on CPU 1");
	rpt_free(r);

	memset(&f, 0, sizeof(f));
	f.has_pid = true;
	f.pid = 20;
	r = test_analyse(test_path("filters"), &f, 0);
	ok(r && rpt_totals(r)->allocs == n1 && rpt_totals(r)->frees == 0 &&
	   rpt_totals(r)->outstanding == n1,
	   "--pid 20: pid 20's allocations (its frees are of pid 10's objects)");
	rpt_free(r);

	memset(&f, 0, sizeof(f));
	f.min_size = 100;
	r = test_analyse(test_path("filters"), &f, 0);
	ok(r && rpt_totals(r)->allocs == n0 && rpt_totals(r)->bytes_req == 100 * n0,
	   "--min-size 100: the 100-byte requests only");
	rpt_free(r);

	memset(&f, 0, sizeof(f));
	f.cache_name = "foo_cache";
	r = test_analyse(test_path("filters"), &f, 0);
	ok(r && rpt_totals(r)->allocs == n1 && rpt_totals(r)->untracked_frees == 0,
	   "--cache-name foo_cache: its allocations only");
	rpt_free(r);

	f.cache_name = "kmalloc-128";
	r = test_analyse(test_path("filters"), &f, 0);
	ok(r && rpt_totals(r)->allocs == n0 && rpt_totals(r)->frees == n0,
	   "--cache-name kmalloc-128: kmalloc()s of that size class");
	rpt_free(r);

	/*
	 * Window from 25 ns after the first record to the last allocation:
	 * the first record is the CACHE_DESC at 1000, allocations at 1010,
	 * 1020, ...: 1030 .. 1000 + 10 * (n0 + n1) are in.
	 */
	memset(&f, 0, sizeof(f));
	f.has_time = true;
	f.t_start = 25;
	f.t_end = 10 * (n0 + n1);
	r = test_analyse(test_path("filters"), &f, 0);
	ok(r && rpt_totals(r)->allocs == n0 + n1 - 2 && rpt_totals(r)->frees == 0 &&
	   rpt_totals(r)->last_ts == 1000 + 10 * (n0 + n1),
	   "--time: only the window's records, the end is its last record");
	rpt_free(r);

	/* From the frees on: objects from before the window are untracked. */
	f.t_start = 10 * (n0 + n1) + 1;
	f.t_end = UINT64_MAX;
	r = test_analyse(test_path("filters"), &f, 0);
	ok(r && rpt_totals(r)->allocs == 0 && rpt_totals(r)->untracked_frees == n0,
	   "--time: frees of objects allocated before the window are untracked");
	rpt_free(r);
	gen_close(g);
}

/* Memory follows live objects and call sites, not the number of records. */
static void test_bounded_memory(void)
{
	struct rpt *r = rpt_new(NULL, 0);
	union kmt_rec rec;
	size_t mem_early = 0, i;
	const size_t live = 20000, total = 3000000;
	uint64_t next = 0x100000000ULL;
	uint64_t *ring = calloc(live, sizeof(*ring));

	if (!ok(r && ring, "memory: analysis created"))
		return;
	memset(&rec, 0, sizeof(rec));
	for (i = 0; i < total; i++) {
		size_t slot = i % live;

		/* Free the object that lived longest, allocate a fresh address. */
		if (ring[slot]) {
			rec.ev.type = KMT_REC_KFREE;
			rec.ev.ptr = ring[slot];
			rec.ev.timestamp = 2 * i;
			rec.ev.call_site = 0xffffffff81000000ULL;
			if (rpt_feed(r, &rec))
				break;
		}
		rec.ev.type = KMT_REC_KMALLOC;
		rec.ev.ptr = ring[slot] = next += 64;
		rec.ev.timestamp = 2 * i + 1;
		rec.ev.call_site = 0xffffffff81000100ULL + 0x10 * (i % 50);
		rec.ev.bytes_req = 60;
		rec.ev.bytes_alloc = 64;
		rec.ev.node = KMT_NODE_ANY;
		if (rpt_feed(r, &rec))
			break;
		if (i == total / 6)
			mem_early = rpt_memory(r);
	}
	ok(i == total, "memory: %zu events fed", 2 * total - live);
	diag("memory after %zu events: %zu bytes; at the end: %zu bytes", total / 3, mem_early,
	     rpt_memory(r));
	ok(rpt_memory(r) <= mem_early, "memory: no growth from 1/6 to the whole trace");
	ok(rpt_memory(r) < 64 * 1024 * 1024, "memory: under 64 MiB for %zu live objects", live);
	rpt_finish(r);
	is_u64(rpt_totals(r)->outstanding, live, "memory: the live set is outstanding");
	is_u64(rpt_nsites(r), 50, "memory: 50 call sites");
	free(ring);
	rpt_free(r);
}

/* Frees P, then `others` other objects, then P again: what does the report make of it? */
/*
 * An object allocated and freed, then others frees of other addresses,
 * then its address freed again. others_kind: 0, each of an object
 * allocated just before; 1, of an address never allocated (untracked);
 * 2, of an object a --pid filter leaves out (pid 20, where 10 is
 * selected).
 */
static struct rpt *double_free_after_kind(size_t others, int others_kind)
{
	struct rpt_filter f = { .has_pid = true, .pid = 10 };
	struct rpt *r = rpt_new(others_kind == 2 ? &f : NULL, 0);
	union kmt_rec rec;
	size_t i;

	if (!r)
		return NULL;
	memset(&rec, 0, sizeof(rec));
	rec.ev.node = KMT_NODE_ANY;
	rec.ev.pid = 10;
	rec.ev.type = KMT_REC_KMALLOC;
	rec.ev.ptr = 0x5000;
	rec.ev.call_site = S_G;
	rec.ev.bytes_req = rec.ev.bytes_alloc = 8;
	rpt_feed(r, &rec);
	rec.ev.type = KMT_REC_KFREE;
	rec.ev.call_site = S_H;
	rpt_feed(r, &rec);
	for (i = 0; i < others; i++) {
		rec.ev.type = KMT_REC_KMALLOC;
		rec.ev.ptr = 0x10000000 + 64 * i;
		rec.ev.call_site = S1;
		rec.ev.pid = others_kind == 2 ? 20 : 10;
		if (others_kind != 1)
			rpt_feed(r, &rec);
		rec.ev.type = KMT_REC_KFREE;
		rpt_feed(r, &rec);
	}
	rec.ev.ptr = 0x5000;
	rec.ev.call_site = S_H;
	rec.ev.pid = 10;
	rpt_feed(r, &rec);
	rpt_finish(r);
	return r;
}

/*
 * An address first allocated by a selected task, then by another one and
 * freed twice: the second free is a double free of an object the filter
 * left out, so it counts neither as a double free nor as untracked.
 */
static void test_filtered_double_free(void)
{
	struct rpt_filter f = { .has_pid = true, .pid = 10 };
	struct rpt *r = rpt_new(&f, 0);
	union kmt_rec rec;
	static const struct { uint8_t type; uint32_t pid; } seq[] = {
		{ KMT_REC_KMALLOC, 10 }, { KMT_REC_KFREE, 10 },
		{ KMT_REC_KMALLOC, 20 }, { KMT_REC_KFREE, 10 }, { KMT_REC_KFREE, 10 },
		/* Then a selected object at the address again, freed twice: counted. */
		{ KMT_REC_KMALLOC, 10 }, { KMT_REC_KFREE, 10 }, { KMT_REC_KFREE, 10 },
	};
	size_t i;

	if (!ok(r != NULL, "filtered double free: analysis created"))
		return;
	memset(&rec, 0, sizeof(rec));
	rec.ev.node = KMT_NODE_ANY;
	rec.ev.ptr = 0x5000;
	rec.ev.call_site = S_G;
	rec.ev.bytes_req = rec.ev.bytes_alloc = 8;
	for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		rec.ev.type = seq[i].type;
		rec.ev.pid = seq[i].pid;
		rec.ev.timestamp = 100 + i;
		rpt_feed(r, &rec);
	}
	rpt_finish(r);
	is_u64(rpt_totals(r)->allocs, 2, "filtered double free: pid 10's two allocations");
	is_u64(rpt_totals(r)->double_frees, 1, "filtered double free: only the selected one's");
	is_u64(rpt_totals(r)->untracked_frees, 0, "filtered double free: nothing untracked");
	is_u64(rpt_totals(r)->frees, 3, "filtered double free: two tracked frees and one double");
	rpt_free(r);
}

static struct rpt *double_free_after(size_t others)
{
	return double_free_after_kind(others, 0);
}

/* The window of remembered frees is documented as 65536: both sides of it. */
static void test_double_free_window(void)
{
	struct rpt *r = double_free_after(65536 - 1);

	ok(r && rpt_error_count(r, RPT_ERR_DOUBLE_FREE) == 1 && rpt_totals(r)->untracked_frees == 0,
	   "double free recognized 65535 frees after the first");
	rpt_free(r);
	r = double_free_after(65536);
	ok(r && rpt_error_count(r, RPT_ERR_DOUBLE_FREE) == 0 && rpt_totals(r)->untracked_frees == 1,
	   "65536 frees later, it is an untracked free (the documented window)");
	rpt_free(r);
	/* Every free of an address counts, whatever the analysis made of it. */
	r = double_free_after_kind(65536 - 1, 1);
	ok(r && rpt_error_count(r, RPT_ERR_DOUBLE_FREE) == 1 &&
	   rpt_totals(r)->untracked_frees == 65535,
	   "double free recognized 65535 untracked frees after the first");
	rpt_free(r);
	r = double_free_after_kind(65536, 1);
	ok(r && rpt_error_count(r, RPT_ERR_DOUBLE_FREE) == 0 &&
	   rpt_totals(r)->untracked_frees == 65537,
	   "65536 untracked frees later, it is an untracked free too");
	rpt_free(r);
	r = double_free_after_kind(65536 - 1, 2);
	ok(r && rpt_error_count(r, RPT_ERR_DOUBLE_FREE) == 1 && rpt_totals(r)->allocs == 1,
	   "double free recognized 65535 frees of objects the filter left out after the first");
	rpt_free(r);
	r = double_free_after_kind(65536, 2);
	ok(r && rpt_error_count(r, RPT_ERR_DOUBLE_FREE) == 0 &&
	   rpt_totals(r)->untracked_frees == 1,
	   "65536 frees of objects the filter left out later, an untracked free");
	rpt_free(r);
}

/* Feeds a stack of depth frames (innermost first) as its slots, on cpu under id. */
static void feed_stack(struct rpt *r, uint16_t cpu, uint16_t id, const uint64_t *fr,
		       unsigned int depth, uint64_t ts)
{
	union kmt_rec rec;
	unsigned int first, i;

	for (first = 0; first < depth; first += KMT_STACK_SLOT_FRAMES) {
		memset(&rec, 0, sizeof(rec));
		rec.stack.type = KMT_REC_STACK;
		rec.stack.cpu = cpu;
		rec.stack.timestamp = ts;
		rec.stack.stack_id = id;
		rec.stack.depth = (uint8_t)depth;
		rec.stack.first = (uint8_t)first;
		rec.stack.nframes = (uint8_t)(depth - first < 5 ? depth - first : 5);
		for (i = 0; i < rec.stack.nframes; i++)
			rec.stack.frames[i] = fr[first + i];
		rpt_feed(r, &rec);
	}
}

/*
 * Two stacks on four CPUs, each CPU naming them by its own ids, the ids
 * swapped halfway (the module's table reset), allocations marked without a
 * stack or naming an unknown id, failed ones: every figure per stack as
 * counted here, and memory that does not grow with the trace.
 */
static void test_stacks(void)
{
	enum { NLIVE = 512, TOTAL = 120000 };
	static const uint64_t fa[7] = { S_A, 0xffffffff81400011ULL, 0xffffffff81500022ULL,
					0xffffffff81500033ULL, 0xffffffff81500044ULL,
					0xffffffff81500055ULL, 0xffffffff81500066ULL };
	static const uint64_t fb[3] = { S_B, 0xffffffff81400077ULL, 0xffffffff81500088ULL };
	struct want { uint64_t hits, failed, req, alloc, frees, out; } w[2] = { { 0 } };
	uint64_t ring[NLIVE] = { 0 }, nostack = 0, unknown = 0, ts = 1, ptr = 0x100000;
	int ring_stk[NLIVE];
	struct rpt *r = rpt_new(NULL, 0);
	size_t mem_early = 0, i, k, found[2] = { 0, 0 };
	union kmt_rec rec;
	uint16_t cpu;

	if (!ok(r, "stacks: analysis created"))
		return;
	for (cpu = 0; cpu < 4; cpu++) {
		feed_stack(r, cpu, 1 + cpu, fa, 7, ts);
		feed_stack(r, cpu, 10 + cpu, fb, 3, ts);
	}
	for (i = 0; i < NLIVE; i++)
		ring_stk[i] = -1;
	for (i = 0; i < TOTAL; i++) {
		unsigned int which = (unsigned int)(i % 3 == 0);	/* 1: fb */
		size_t slot = i % NLIVE;
		int swapped = i >= TOTAL / 2;

		cpu = (uint16_t)(i % 4);
		ts++;
		if (i == TOTAL / 2) {
			/* The tables reset: each CPU's ids now name the other stack. */
			for (k = 0; k < 4; k++) {
				feed_stack(r, (uint16_t)k, (uint16_t)(1 + k), fb, 3, ts);
				feed_stack(r, (uint16_t)k, (uint16_t)(10 + k), fa, 7, ts);
			}
		}
		if (ring[slot]) {
			memset(&rec, 0, sizeof(rec));
			rec.ev.type = KMT_REC_KFREE;
			rec.ev.cpu = cpu;
			rec.ev.timestamp = ts;
			rec.ev.call_site = S_H;
			rec.ev.ptr = ring[slot];
			rec.ev.node = KMT_NODE_ANY;
			rpt_feed(r, &rec);
			if (ring_stk[slot] >= 0) {
				w[ring_stk[slot]].frees++;
				w[ring_stk[slot]].out--;
			}
			ring[slot] = 0;
		}
		memset(&rec, 0, sizeof(rec));
		rec.ev.type = which ? KMT_REC_CACHE_ALLOC : KMT_REC_KMALLOC;
		rec.ev.cpu = cpu;
		rec.ev.timestamp = ts;
		rec.ev.call_site = which ? S_B : S_A;
		rec.ev.cache_id = which ? 0xffff888003000000ULL : 0;
		/* 4096 addresses reused in turn: the object table stays the same size. */
		rec.ev.ptr = i % 101 == 0 ? 0 : ptr + (i % 4096) * 64;
		rec.ev.bytes_req = which ? 100 : 24;
		rec.ev.bytes_alloc = which ? 128 : 32;
		rec.ev.node = KMT_NODE_ANY;
		/* Before the swap fa is id 1 + cpu and fb 10 + cpu; after, the other way. */
		rec.ev.stack_id = (uint16_t)((which != (unsigned int)swapped ? 10 : 1) + cpu);
		if (i % 7 == 3) {
			rec.ev.stack_id = 0;
			rec.ev.flags = KMT_F_NO_STACK;
			nostack++;
		} else if (i % 11 == 5) {
			rec.ev.stack_id = 99;
			unknown++;
		} else {
			w[which].hits++;
			if (!rec.ev.ptr) {
				w[which].failed++;
			} else {
				w[which].req += rec.ev.bytes_req;
				w[which].alloc += rec.ev.bytes_alloc;
				w[which].out++;
			}
		}
		rpt_feed(r, &rec);
		if (rec.ev.ptr) {
			ring[slot] = rec.ev.ptr;
			ring_stk[slot] = rec.ev.stack_id && rec.ev.stack_id != 99 ? (int)which : -1;
		}
		if (i == TOTAL / 6)
			mem_early = rpt_memory(r);
	}
	ok(rpt_memory(r) <= mem_early, "stacks: memory did not grow from 1/6 to the end");
	rpt_finish(r);
	is_u64(rpt_nstacks(r), 2, "stacks: two distinct stacks, whatever CPUs and ids carried them");
	is_u64(rpt_totals(r)->no_stack_allocs, nostack, "stacks: marked without a stack, exactly");
	is_u64(rpt_totals(r)->unknown_stack_allocs, unknown, "stacks: unknown ids, exactly");
	is_u64(rpt_totals(r)->stack_allocs + nostack + unknown, rpt_totals(r)->allocs,
	       "stacks: with a stack + marked + unknown = all allocations");
	for (i = 0; i < rpt_nstacks(r); i++) {
		unsigned int d = 0;
		const uint64_t *fr = kmt_stacks_frames(rpt_stacks(r), (uint32_t)i, &d);
		const struct rpt_stack *s = rpt_stack(r, i);
		unsigned int which = d == 3;
		const struct want *x = &w[which];

		if (!ok(fr && s && memcmp(fr, which ? fb : fa, d * sizeof(*fr)) == 0,
			"stacks: stack %zu has the frames fed", i))
			continue;
		found[which]++;
		is_u64(s->hits, x->hits, "stacks: %s: hits", which ? "fb" : "fa");
		is_u64(s->failed, x->failed, "stacks: %s: failed", which ? "fb" : "fa");
		is_u64(s->bytes_req, x->req, "stacks: %s: bytes_req", which ? "fb" : "fa");
		is_u64(s->bytes_alloc, x->alloc, "stacks: %s: bytes_alloc", which ? "fb" : "fa");
		is_u64(s->frees, x->frees, "stacks: %s: frees", which ? "fb" : "fa");
		is_u64(s->out_count, x->out, "stacks: %s: outstanding", which ? "fb" : "fa");
	}
	ok(found[0] == 1 && found[1] == 1, "stacks: each stack once");
	rpt_free(r);
}

/* One slab event on CPU 0, with a stack id and flags. */
static void feed_ev(struct rpt *r, uint8_t type, uint64_t ptr, uint32_t req, uint32_t alloc,
		    uint16_t stack_id, uint16_t flags, uint64_t ts)
{
	union kmt_rec rec;

	memset(&rec, 0, sizeof(rec));
	rec.ev.type = type;
	rec.ev.timestamp = ts;
	rec.ev.call_site = type == KMT_REC_KMALLOC ? S_A : S_B;
	rec.ev.ptr = ptr;
	rec.ev.bytes_req = req;
	rec.ev.bytes_alloc = alloc;
	rec.ev.node = KMT_NODE_ANY;
	rec.ev.stack_id = stack_id;
	rec.ev.flags = flags;
	rpt_feed(r, &rec);
}

/*
 * Stacks of frees (stack_frees=1): a tracked free, a double free and a
 * free of an object allocated before the trace through one stack, frees
 * marked without a stack or naming an unknown one, and, with --min-size,
 * a free of an object not selected: counted as the report counts frees.
 */
static void test_free_stacks(void)
{
	static const uint64_t ff[3] = { S_B, 0xffffffff81400099ULL, 0xffffffff815000aaULL };
	struct rpt_filter f = { .min_size = 16 };
	struct rpt *r = rpt_new(&f, 0);
	const struct rpt_stack *s;
	uint64_t ts = 1, kept_bytes = 0, no_alloc = 0, with = 0;
	unsigned int d = 0;

	if (!ok(r, "free stacks: analysis created"))
		return;
	feed_stack(r, 0, 5, ff, 3, ts++);
	feed_ev(r, KMT_REC_KMALLOC, 0x1000, 24, 32, 0, 0, ts++);
	feed_ev(r, KMT_REC_KMALLOC, 0x2000, 100, 128, 0, 0, ts++);
	feed_ev(r, KMT_REC_KMALLOC, 0x3000, 8, 8, 0, 0, ts++);		/* below --min-size */
	feed_ev(r, KMT_REC_KFREE, 0x1000, 0, 0, 5, 0, ts++);
	kept_bytes += 32;
	with++;
	feed_ev(r, KMT_REC_KFREE, 0x1000, 0, 0, 5, 0, ts++);		/* double free */
	no_alloc++;
	with++;
	feed_ev(r, KMT_REC_KFREE, 0x3000, 0, 0, 5, 0, ts++);		/* not selected */
	feed_ev(r, KMT_REC_KFREE, 0x2000, 0, 0, 0, KMT_F_NO_STACK, ts++);
	if (!ok(rpt_finish(r) == 0, "free stacks: finished"))
		goto out;
	is_u64(rpt_totals(r)->double_frees, 1, "free stacks: the double free is one");
	ok(rpt_has_free_stacks(r), "free stacks: the trace has stacks of frees");
	ok(rpt_nstacks(r) == 1 && kmt_stacks_frames(rpt_stacks(r), 0, &d) && d == 3,
	   "free stacks: the one stack fed");
	s = rpt_stack(r, 0);
	ok(s && s->free_hits == with && s->free_bytes == kept_bytes && s->free_no_alloc == no_alloc,
	   "free stacks: frees %" PRIu64 ", bytes %" PRIu64 ", without an allocation %" PRIu64,
	   s ? s->free_hits : 0, s ? s->free_bytes : 0, s ? s->free_no_alloc : 0);
	ok(s && s->hits == 0 && s->frees == 0, "free stacks: no allocation through it");
	is_u64(rpt_totals(r)->stack_frees, with, "free stacks: frees with a stack");
	is_u64(rpt_totals(r)->no_stack_frees, 1, "free stacks: the free marked without one");
	rpt_free(r);

	/* Without --min-size: the free of an object allocated before the trace counts too. */
	r = rpt_new(NULL, 0);
	if (!ok(r, "free stacks: second analysis created"))
		return;
	feed_stack(r, 0, 5, ff, 3, ts++);
	feed_ev(r, KMT_REC_KFREE, 0x9000, 0, 0, 5, 0, ts++);		/* before the trace */
	feed_ev(r, KMT_REC_KFREE, 0xa000, 0, 0, 77, 0, ts++);		/* unknown id */
	if (!ok(rpt_finish(r) == 0, "free stacks: second finished"))
		goto out;
	s = rpt_stack(r, 0);
	ok(s && s->free_hits == 1 && s->free_bytes == 0 && s->free_no_alloc == 1,
	   "free stacks: an untracked free has a stack and no bytes");
	is_u64(rpt_totals(r)->unknown_stack_frees, 1, "free stacks: the unknown id counted");
	is_u64(rpt_totals(r)->stack_frees + rpt_totals(r)->unknown_stack_frees,
	       rpt_totals(r)->frees, "free stacks: with a stack + unknown = all frees");
out:
	rpt_free(r);
}

int main(void)
{
	if (!test_dir_make("report")) {
		perror("mkdtemp");
		return 1;
	}
	test_workload_all_formats();
	test_errors();
	test_outstanding_age_frag();
	test_pages_apart();
	test_lost_and_cross_node();
	test_caches();
	test_filters();
	test_bounded_memory();
	test_double_free_window();
	test_filtered_double_free();
	test_stacks();
	test_free_stacks();
	test_dir_remove();
	return done_testing();
}
