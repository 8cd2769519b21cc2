// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_report_life.c - unit tests of object lifetimes and the page view:
 * lifetimes written with known durations come back exact (count, max,
 * mean, ages) or within the histogram's stated 12.5% (quantiles); page
 * tallies by order, migrate type and GFP mask; large kmallocs paired with
 * their page allocation only when they are; memory flat with length.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "kmt_reader.h"
#include "core/report_core.h"
#include "tap.h"
#include "testlib.h"

static size_t site_index(const struct rpt *r, uint64_t addr)
{
	size_t i;

	for (i = 0; i < rpt_nsites(r); i++)
		if (rpt_site(r, i)->addr == addr)
			return i;
	return SIZE_MAX;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The true q-quantile of sorted v (the ceil(q * n)-th smallest). */
static uint64_t true_quantile(const uint64_t *v, size_t n, double q)
{
	size_t rank = (size_t)(q * (double)n);

	if ((double)rank < q * (double)n)
		rank++;
	return v[rank ? rank - 1 : 0];
}

#define NFREED	1000
#define NLIVE	7
#define SITE_A	0xffffffff81000100ULL
#define SITE_B	0xffffffff81000200ULL

static void test_hist_buckets(void)
{
	unsigned int i, bad = 0;
	uint64_t v;

	for (i = 1; i < RPT_HIST_NB; i++)
		bad += rpt_hist_lo(i) != rpt_hist_hi(i - 1) + 1;
	is_u64(bad, 0, "histogram buckets tile the range without gap or overlap");
	is_u64(rpt_hist_hi(RPT_HIST_NB - 1), UINT64_MAX, "the last bucket ends at 2^64 - 1");
	for (bad = 0, v = 1; v < (1ULL << 62); v = v * 3 + 1) {
		unsigned int b = rpt_hist_bucket(v);

		bad += v < rpt_hist_lo(b) || v > rpt_hist_hi(b) ||
		       (double)rpt_hist_hi(b) > (double)v * 1.125 + 1;
	}
	is_u64(bad, 0, "each value lies in its bucket, whose top is within 12.5%% of it");
}

/*
 * Site A: NFREED kmallocs, object i freed (i + 1) * 997 ns later, some on
 * the other CPU; site B: NLIVE objects never freed. Lifetimes exact.
 */
static void test_lifetimes(void)
{
	const char *dir = "life";
	char path[4096];
	uint64_t life[NFREED], sum = 0, t_end, age_oldest;
	struct gen *g;
	struct rpt *r;
	size_t i;

	snprintf(path, sizeof(path), "%s/%s", test_dir, dir);
	g = gen_open(path, 2, NULL);
	if (!g) {
		ok(0, "gen_open");
		return;
	}
	/*
	 * Each object has its own address; allocation at 10 us steps, frees
	 * later: write in time order per CPU (alloc on CPU 0, frees on 0 or 1).
	 */
	for (i = 0; i < NLIVE; i++)
		gen_kmalloc(g, 0, 500 + i, SITE_B, 0xffff888010000000ULL + i * 64, 40, 64,
			    KMT_NODE_ANY, 1);
	for (i = 0; i < NFREED; i++) {
		life[i] = (i + 1) * 997;
		sum += life[i];
	}
	{
		/* Events sorted by time: allocations at 1000 + 10000 i, frees after life[i]. */
		struct ev {
			uint64_t t;
			size_t i;
			int free;
		} *evs = calloc(2 * NFREED, sizeof(*evs));
		size_t n = 0, j, k;

		for (i = 0; i < NFREED; i++) {
			evs[n++] = (struct ev){ 1000 + 10000 * i, i, 0 };
			evs[n++] = (struct ev){ 1000 + 10000 * i + life[i], i, 1 };
		}
		/* Insertion by time (frees of long-lived objects come after later allocations). */
		for (j = 1; j < n; j++) {
			struct ev x = evs[j];

			for (k = j; k && evs[k - 1].t > x.t; k--)
				evs[k] = evs[k - 1];
			evs[k] = x;
		}
		for (j = 0; j < n; j++) {
			uint64_t ptr = 0xffff888020000000ULL + evs[j].i * 128;

			if (evs[j].free)
				gen_kfree(g, (unsigned int)(evs[j].i % 2), evs[j].t, 0xffffffff81009000ULL,
					  ptr, 1);
			else
				gen_kmalloc(g, 0, evs[j].t, SITE_A, ptr, 100, 128, KMT_NODE_ANY, 1);
		}
		t_end = evs[n - 1].t;
		free(evs);
	}
	age_oldest = t_end - 500;
	if (gen_close(g)) {
		ok(0, "gen_close");
		return;
	}
	r = test_analyse(path, NULL, RPT_LIFETIMES);
	if (!r) {
		ok(0, "analysis");
		return;
	}
	{
		const struct rpt_life *a = lp_site(rpt_lp(r), site_index(r, SITE_A));
		const struct rpt_life *b = lp_site(rpt_lp(r), site_index(r, SITE_B));
		const struct rpt_cache *c = rpt_cache_find(r, "kmalloc-128");
		const struct rpt_life *cl = NULL;
		static const double qs[] = { 0.5, 0.9, 0.99 };
		uint64_t h[64], inlog = 0;
		size_t q;

		for (i = 0; i < rpt_ncaches(r); i++)
			if (rpt_cache(r, i) == c)
				cl = lp_cache(rpt_lp(r), i);
		ok(a && b && cl, "lifetimes kept for both sites and the cache");
		if (!a || !b || !cl)
			goto out;
		is_u64(a->freed.n, NFREED, "site A: every freed object counted");
		is_u64(a->freed.max, life[NFREED - 1], "site A: max exact");
		is_u64(a->freed.sum, sum, "site A: sum (mean) exact");
		is_u64(a->live, 0, "site A: nothing live at the end");
		qsort(life, NFREED, sizeof(life[0]), cmp_u64);
		for (q = 0; q < 3; q++) {
			uint64_t want = true_quantile(life, NFREED, qs[q]);
			uint64_t got = rpt_hist_quantile(&a->freed, qs[q]);

			ok(got >= want && (double)got <= (double)want * 1.125,
			   "site A: p%g %llu within [%llu, +12.5%%]", qs[q] * 100,
			   (unsigned long long)got, (unsigned long long)want);
		}
		rpt_hist_log2(&a->freed, h);
		for (i = 0; i < 64; i++)
			inlog += h[i];
		is_u64(inlog, NFREED, "site A: the log2 histogram holds every object");
		is_u64(h[9], 1, "site A: one lifetime in [512, 1024) ns (997)");
		{
			uint64_t cnt = rpt_hist_count_le(&a->freed, 500000), le = 0, le9 = 0;

			for (i = 0; i < NFREED; i++) {
				le += life[i] <= 500000;
				le9 += (double)life[i] * 1.125 <= 500000;
			}
			ok(cnt <= le && cnt >= le9, "site A: %llu within 500us, between %llu (within "
			   "500us / 1.125) and %llu", (unsigned long long)cnt,
			   (unsigned long long)le9, (unsigned long long)le);
		}
		is_u64(cl->freed.n, NFREED, "kmalloc-128: the same objects by cache");
		is_u64(b->freed.n, 0, "site B: nothing freed");
		is_u64(b->live, NLIVE, "site B: live objects counted");
		is_u64(b->live_oldest, age_oldest, "site B: the oldest one's age is exact");
		rpt_hist_log2(&a->freed, h);
	}
out:
	rpt_free(r);
}

/* Memory with lifetimes and timelines stays flat as the trace grows tenfold. */
static void test_bounded(void)
{
	size_t mem[2];
	unsigned int k;

	for (k = 0; k < 2; k++) {
		unsigned int n = k ? 400000 : 40000, i;
		char path[4096];
		struct gen *g;
		struct rpt *r;

		snprintf(path, sizeof(path), "%s/b%u", test_dir, k);
		g = gen_open(path, 2, NULL);
		if (!g) {
			ok(0, "gen_open");
			return;
		}
		/* 50 call sites, 4096 addresses: each allocated, then freed 4096 events later. */
		for (i = 0; i < n; i++) {
			uint64_t ptr = 0xffff888040000000ULL + (i % 4096) * 64;

			if (i >= 4096)
				gen_kfree(g, i % 2, 1000 + (uint64_t)i * 100, 0xffffffff81009000ULL, ptr, 1);
			gen_kmalloc(g, i % 2, 1000 + (uint64_t)i * 100 + 50,
				    0xffffffff81000000ULL + (i % 50) * 16, ptr, 60, 64, KMT_NODE_ANY, 1);
		}
		if (gen_close(g)) {
			ok(0, "gen_close");
			return;
		}
		r = test_analyse(path, NULL, RPT_LIFETIMES | RPT_TIMELINE);
		if (!r) {
			ok(0, "analysis");
			return;
		}
		mem[k] = rpt_memory(r);
		rpt_free(r);
	}
	ok(mem[1] <= mem[0], "memory with lifetimes and timelines: %zu bytes for 40k events, "
	   "%zu for 400k", mem[0], mem[1]);
}

#define PG(cpu, t, pfn, order, mt, gfp) do { \
	struct kmt_event e = { .type = KMT_REC_PAGE_ALLOC, .timestamp = (t), .ptr = (pfn), \
			       .bytes_req = 4096u << (order), .bytes_alloc = 4096u << (order), \
			       .cache_id = (mt) < 0 ? 0 : KMT_PAGE_MT_VALID | (uint64_t)(mt), \
			       .gfp_flags = (gfp), .node = KMT_NODE_ANY, .pid = 1 }; \
	gen_event(g, (cpu), &e); \
} while (0)

static void test_pages(void)
{
	const uint64_t dmap = 0xffff888000000000ULL, ks = 0xffffffff81002000ULL;
	char path[4096];
	struct gen *g;
	struct rpt *r;
	uint64_t t = 1000;
	size_t n;
	const struct rpt_page_tally *pt;

	snprintf(path, sizeof(path), "%s/pages", test_dir);
	g = gen_open(path, 2, NULL);
	if (!g) {
		ok(0, "gen_open");
		return;
	}
	/* Order 0 x3 Movable 0x100cca, order 1 x2 Unmovable 0xcc0, one order 3 unknown, freed. */
	PG(0, t++, 100, 0, 1, 0x100cca);
	PG(1, t++, 101, 0, 1, 0x100cca);
	PG(0, t++, 102, 0, 1, 0x100cca);
	PG(0, t++, 200, 1, 0, 0xcc0);
	PG(1, t++, 202, 1, 0, 0xcc0);
	PG(1, t++, 300, 3, -1, 0x2800);
	/* A large kmalloc: its pages, then its kmalloc event at the direct-map address. */
	PG(0, t++, 0x1000, 2, 0, 0xcc0);
	gen_kmalloc(g, 0, t++, ks, dmap + (0x1000ULL << 12), 10000, 16384, KMT_NODE_ANY, 1);
	/* Another, on CPU 1, with another CPU's event in between: still paired. */
	PG(1, t++, 0x2000, 2, 0, 0xcc0);
	gen_kmalloc(g, 0, t++, ks + 8, 0xffff888030000000ULL, 64, 64, KMT_NODE_ANY, 1);
	gen_kmalloc(g, 1, t++, ks, dmap + (0x2000ULL << 12), 12000, 16384, KMT_NODE_ANY, 1);
	/* Not one: another allocation on that CPU came between. */
	PG(0, t++, 0x3000, 2, 0, 0xcc0);
	gen_kmalloc(g, 0, t++, ks + 8, 0xffff888030001000ULL, 64, 64, KMT_NODE_ANY, 1);
	gen_kmalloc(g, 0, t++, ks, dmap + (0x3000ULL << 12), 10000, 16384, KMT_NODE_ANY, 1);
	/* Not one: the address is not that page's in the direct map. */
	PG(1, t++, 0x4000, 2, 0, 0xcc0);
	gen_kmalloc(g, 1, t++, ks, dmap + (0x4100ULL << 12), 10000, 16384, KMT_NODE_ANY, 1);
	/* Not one: a slab-sized kmalloc (8 KiB) after an order-1 block of 8 KiB. */
	PG(0, t++, 0x5000, 1, 0, 0xcc0);
	gen_kmalloc(g, 0, t++, ks, dmap + (0x5000ULL << 12), 8192, 8192, KMT_NODE_ANY, 1);
	/* 6.10+: one large kmalloc traced twice, first from inside the allocator. */
	PG(1, t++, 0x6000, 2, 0, 0xcc0);
	gen_kmalloc(g, 1, t++, ks + 0x100, dmap + (0x6000ULL << 12), 10000, 16384, KMT_NODE_ANY, 1);
	gen_kmalloc(g, 1, t++, ks + 0x200, dmap + (0x6000ULL << 12), 10000, 16384, KMT_NODE_ANY, 1);
	/* Frees: the first large kmalloc (kfree, then its pages), order 0 and order 3 blocks. */
	gen_kfree(g, 0, t++, ks + 16, dmap + (0x1000ULL << 12), 1);
	{
		struct kmt_event e = { .type = KMT_REC_PAGE_FREE, .timestamp = t++, .ptr = 0x1000,
				       .bytes_alloc = 16384, .node = KMT_NODE_ANY };

		gen_event(g, 0, &e);
		e = (struct kmt_event){ .type = KMT_REC_PAGE_FREE, .timestamp = t++, .ptr = 100,
					.bytes_alloc = 4096, .node = KMT_NODE_ANY };
		gen_event(g, 0, &e);
		e = (struct kmt_event){ .type = KMT_REC_PAGE_FREE, .timestamp = t++, .ptr = 300,
					.bytes_alloc = 32768, .node = KMT_NODE_ANY };
		gen_event(g, 1, &e);
		/* A block allocated before the trace. */
		e = (struct kmt_event){ .type = KMT_REC_PAGE_FREE, .timestamp = t++, .ptr = 999,
					.bytes_alloc = 8192, .node = KMT_NODE_ANY };
		gen_event(g, 1, &e);
	}
	if (gen_close(g)) {
		ok(0, "gen_close");
		return;
	}
	r = test_analyse(path, NULL, 0);
	if (!r) {
		ok(0, "analysis");
		return;
	}
	{
		const struct rpt_totals *tt = rpt_totals(r);

		const struct rpt_site *in = rpt_site_find(r, ks + 0x100);
		const struct rpt_site *caller = rpt_site_find(r, ks + 0x200);

		is_u64(tt->page_allocs, 12, "page allocations");
		is_u64(tt->page_kmalloc_allocs, 3, "three large kmallocs paired, the look-alikes not");
		is_u64(tt->page_kmalloc_bytes, 3 * 16384, "their bytes");
		is_u64(tt->page_kmalloc_frees, 1, "the freed one's pages: a large kmalloc's");
		is_u64(tt->page_kmalloc_live, 2, "the others still live");
		is_u64(tt->page_kmalloc_live_bytes, 2 * 16384, "with their bytes");
		is_u64(tt->kmalloc_dup_events, 1, "one large kmalloc traced twice: one duplicate");
		is_u64(in ? in->hits : 99, 0, "the allocator's own call site: its event taken back");
		is_u64(caller ? caller->hits : 0, 1, "the caller's event counts");
		is_u64(caller ? caller->out_count : 0, 1, "... and holds the live object");
		is_u64(tt->implicit_frees, 0, "the second event is no implicit free");
	}
	pt = rpt_pages(r, RPT_PG_ORDER, &n);
	ok(n >= 4, "order tallies");
	if (n >= 4) {
		is_u64(pt[0].allocs, 3, "order 0: allocations");
		is_u64(pt[0].frees, 1, "order 0: frees");
		is_u64(pt[0].live, 2, "order 0: live");
		is_u64(pt[1].allocs, 3, "order 1: allocations");
		is_u64(pt[1].untracked_frees, 1, "order 1: the free of a block from before");
		is_u64(pt[2].allocs, 5, "order 2: allocations");
		is_u64(pt[2].kmalloc_allocs, 3, "order 2: of them large kmallocs");
		is_u64(pt[2].bytes, 5 * 16384, "order 2: bytes");
		is_u64(pt[3].allocs, 1, "order 3: allocations");
		is_u64(pt[3].frees, 1, "order 3: frees");
	}
	pt = rpt_pages(r, RPT_PG_MT, &n);
	is_u64(n, RPT_MT_NAMED + 1, "migrate type tallies");
	is_u64(pt[0].allocs, 8, "Unmovable");
	is_u64(pt[1].allocs, 3, "Movable");
	is_u64(pt[RPT_MT_UNKNOWN].allocs, 1, "not recorded");
	pt = rpt_pages(r, RPT_PG_GFP, &n);
	is_u64(n, 3, "three GFP masks");
	{
		uint64_t cc0 = 0, movable = 0;
		size_t i;

		for (i = 0; i < n; i++) {
			if (pt[i].key == 0xcc0)
				cc0 = pt[i].allocs;
			if (pt[i].key == 0x100cca)
				movable = pt[i].allocs;
		}
		is_u64(cc0, 8, "0xcc0");
		is_u64(movable, 3, "0x100cca");
	}
	rpt_free(r);
}

/*
 * Without page events: a large kmalloc traced twice in a row on its CPU
 * counts once, at the second event's call site; one traced once, or an
 * address merely reused after a free, is left alone.
 */
static void test_dup_without_pages(void)
{
	const uint64_t ks = 0xffffffff81003000ULL, a = 0xffff888050000000ULL;
	char path[4096];
	struct gen *g;
	struct rpt *r;

	snprintf(path, sizeof(path), "%s/dup", test_dir);
	g = gen_open(path, 2, NULL);
	if (!g) {
		ok(0, "gen_open");
		return;
	}
	gen_kmalloc(g, 0, 1000, ks, a, 20000, 32768, KMT_NODE_ANY, 1);
	gen_kmalloc(g, 1, 1001, ks + 0x40, 0xffff888050100000ULL, 64, 64, KMT_NODE_ANY, 1);
	gen_kmalloc(g, 0, 1002, ks + 0x100, a, 20000, 32768, KMT_NODE_ANY, 1);
	/* Once only. */
	gen_kmalloc(g, 1, 1003, ks + 0x100, a + 0x1000000, 20000, 32768, KMT_NODE_ANY, 1);
	gen_kmalloc(g, 1, 1004, ks + 0x40, 0xffff888050100040ULL, 64, 64, KMT_NODE_ANY, 1);
	/* The same address after another allocation on the CPU: not a second event. */
	gen_kmalloc(g, 0, 1005, ks + 0x200, a + 0x200000, 20000, 32768, KMT_NODE_ANY, 1);
	gen_kmalloc(g, 0, 1006, ks + 0x40, 0xffff888050100080ULL, 64, 64, KMT_NODE_ANY, 1);
	gen_kmalloc(g, 0, 1007, ks + 0x200, a + 0x200000, 20000, 32768, KMT_NODE_ANY, 1);
	if (gen_close(g)) {
		ok(0, "gen_close");
		return;
	}
	r = test_analyse(path, NULL, 0);
	if (!r) {
		ok(0, "analysis");
		return;
	}
	is_u64(rpt_totals(r)->kmalloc_dup_events, 1, "no page events: one second event found");
	is_u64(rpt_site_find(r, ks) ? rpt_site_find(r, ks)->hits : 99, 0,
	       "the first event's call site: taken back");
	is_u64(rpt_site_find(r, ks + 0x100)->hits, 2, "the caller's call site: its two kmallocs");
	is_u64(rpt_totals(r)->allocs, 7, "allocations: 8 events, one a second event");
	is_u64(rpt_totals(r)->implicit_frees, 1, "the address reused later is an implicit free");
	is_u64(rpt_cache_find(r, "kmalloc-32k")->allocs, 4, "kmalloc-32k: four allocations, one a second event taken back");
	rpt_free(r);
}

/* A large kmalloc event of a trace with stacks: stack id, or KMT_F_NO_STACK when id is 0. */
static void dup_ev(struct gen *g, unsigned int cpu, uint64_t ts, uint64_t site, uint64_t ptr,
		   uint32_t req, uint16_t id)
{
	struct kmt_event e = { .type = KMT_REC_KMALLOC, .timestamp = ts, .call_site = site,
			       .ptr = ptr, .bytes_req = req, .bytes_alloc = 32768,
			       .node = KMT_NODE_ANY, .stack_id = id,
			       .flags = id ? 0 : KMT_F_NO_STACK };

	gen_event(g, cpu, &e);
}

static uint64_t tl_allocs(const struct rpt_tl *tl)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; tl && i < RPT_TL_NB; i++)
		n += tl->allocs[i];
	return n;
}

/* The tallies of a trace's two stacks: the one from the allocator's call site in, the other. */
static void two_stacks(const struct rpt *r, uint64_t in, const struct rpt_stack **sin,
		       const struct rpt_stack **sout)
{
	size_t i;

	for (i = 0; i < rpt_nstacks(r); i++) {
		unsigned int d = 0;

		if (kmt_stacks_frames(rpt_stacks(r), (uint32_t)i, &d)[0] == in)
			*sin = rpt_stack(r, i);
		else
			*sout = rpt_stack(r, i);
	}
}

/*
 * With stacks: a large kmalloc traced twice counts once, its first event
 * taken back from its stack (or from the allocations without one), its
 * call site, the timeline and the per-address view, whichever of the two
 * events had a stack; the module's count of marked events is kept apart.
 */
static void test_dup_with_stacks(void)
{
	static const uint64_t in[] = { 0xffffffff81003100ULL, 0xffffffff81700000ULL,
				       0xffffffff81800000ULL };
	static const uint64_t out[] = { 0xffffffff81700000ULL, 0xffffffff81800000ULL };
	const uint64_t a = 0xffff888060000000ULL;
	char path[4096];
	struct gen *g;
	struct rpt *r;
	uint64_t t = 1000;
	const struct rpt_stack *sin = NULL, *sout = NULL;
	size_t i;

	snprintf(path, sizeof(path), "%s/dupstk", test_dir);
	g = gen_open(path, 2, NULL);
	if (!g) {
		ok(0, "gen_open");
		return;
	}
	/* Stack 1: the allocator's call site, then its caller's frames (stack 2). */
	gen_stack(g, 0, t++, 1, in, 3);
	gen_stack(g, 0, t++, 2, out, 2);
	/* Both with a stack; the first without (marked); the second without; an unknown one. */
	dup_ev(g, 0, t++, in[0], a, 20000, 1);
	dup_ev(g, 0, t++, out[0], a, 20000, 2);
	dup_ev(g, 0, t++, in[0], a + 0x10000, 20000, 0);
	dup_ev(g, 0, t++, out[0], a + 0x10000, 20000, 2);
	dup_ev(g, 0, t++, in[0], a + 0x20000, 20000, 1);
	dup_ev(g, 0, t++, out[0], a + 0x20000, 20000, 0);
	dup_ev(g, 0, t++, in[0], a + 0x30000, 20000, 9);
	dup_ev(g, 0, t++, out[0], a + 0x30000, 20000, 2);
	gen_kfree(g, 1, t++, 0xffffffff81009000ULL, a, 1);
	/* Once only; then the same address and bytes_alloc, other bytes_req: two allocations. */
	dup_ev(g, 0, t++, out[0], a + 0x40000, 20000, 2);
	dup_ev(g, 0, t++, out[0], a + 0x50000, 20000, 2);
	dup_ev(g, 0, t++, out[0], a + 0x50000, 20001, 2);
	if (gen_close(g)) {
		ok(0, "gen_close");
		return;
	}
	r = test_analyse(path, NULL, RPT_TIMELINE | RPT_PTR_VIEW);
	if (!r) {
		ok(0, "analysis");
		return;
	}
	two_stacks(r, in[0], &sin, &sout);
	{
		const struct rpt_totals *tt = rpt_totals(r);
		const struct rpt_site *si = rpt_site_find(r, in[0]), *so = rpt_site_find(r, out[0]);

		is_u64(tt->kmalloc_dup_events, 4, "four large kmallocs traced twice");
		is_u64(tt->allocs, 7, "allocations: 4 second events, 1 once, 2 not a pair");
		is_u64(si ? si->hits : 99, 0, "the allocator's call site: nothing");
		is_u64(so ? so->hits : 0, 7, "the caller's: every allocation");
		is_u64(so ? so->bytes_req : 0, 6 * 20000 + 20001, "... with its bytes requested");
		is_u64(tt->stack_allocs, 6, "with a stack: 3 second events, 1 once, 2 not a pair");
		is_u64(tt->no_stack_allocs, 1, "marked: the second event without a stack");
		is_u64(tt->unknown_stack_allocs, 0, "the unknown id of a first event: taken back");
		is_u64(tt->kmalloc_dup_no_stack, 1, "the marked first event, counted apart");
		is_u64(tt->allocs - tt->stack_allocs, tt->no_stack_allocs + tt->unknown_stack_allocs,
		       "without a stack: marked + unknown");
		is_u64(tt->implicit_frees, 1, "other bytes_req: no duplicate, an implicit free");
		ok(sin && sout, "two stacks");
		is_u64(sin ? sin->hits + sin->bytes_req + sin->bytes_alloc + sin->out_count : 99, 0,
		       "the stack from inside the allocator: nothing");
		is_u64(sout ? sout->hits : 0, 6, "the caller's stack: its six allocations");
		is_u64(sout ? sout->bytes_alloc : 0, 6 * 32768, "... their bytes");
		is_u64(sout ? sout->bytes_req : 0, 5 * 20000 + 20001, "... bytes requested");
		is_u64(sout ? sout->frees : 0, 1, "... the freed one");
		is_u64(sout ? sout->out_count : 0, 4, "... and the 4 live at the end (not twice)");
		is_u64(tl_allocs(lp_tl(rpt_lp(r), SIZE_MAX)), 7, "timeline: 7 allocations");
		is_u64(tl_allocs(lp_tl(rpt_lp(r), site_index(r, in[0]))), 0,
		       "timeline: none at the allocator's call site");
	}
	{
		const struct rpt_ptr *pa = NULL, *pb = NULL;

		for (i = 0; i < rpt_nptrs(r); i++) {
			if (rpt_ptr(r, i)->ptr == a)
				pa = rpt_ptr(r, i);
			if (rpt_ptr(r, i)->ptr == a + 0x50000)
				pb = rpt_ptr(r, i);
		}
		is_u64(pa ? pa->hits : 0, 1, "--ptr: the pair's address, one allocation");
		is_u64(pa ? pa->bytes_req : 0, 20000, "--ptr: ... its bytes requested once");
		is_u64(pb ? pb->hits : 0, 2, "--ptr: the two allocations at one address");
	}
	rpt_free(r);
}

/* Page allocations by kernel stack: each block's stack counts its allocation, free and life. */
/* A failed large kmalloc event: stack id (0: none), flags, task and GFP mask as given. */
static void fail_ev(struct gen *g, unsigned int cpu, uint64_t ts, uint64_t site, uint16_t id,
		    uint8_t flags, uint32_t pid, uint32_t gfp)
{
	struct kmt_event e = { .type = KMT_REC_KMALLOC, .timestamp = ts, .call_site = site,
			       .bytes_req = 20000, .bytes_alloc = 32768, .node = KMT_NODE_ANY,
			       .stack_id = id, .flags = flags, .pid = pid, .gfp_flags = gfp };

	gen_event(g, cpu, &e);
}

/*
 * 6.12 and 7.3 trace a failed large kmalloc twice too, both events NULL:
 * the first at the allocator's call site, then the caller's. It counts
 * once, at the caller's, its first event taken back everywhere; a failure
 * traced once, two in a row at one call site, or two of other tasks, CPUs
 * or GFP masks stay two.
 */
static void test_dup_failed(void)
{
	/*
	 * Failed large kmallocs, at the allocator's call site (in) or the
	 * caller's (out); small: a small allocation after it ends the watch
	 * for a second event. Pairs: both with a stack; the first marked
	 * without one. Traced once; twice in a row at one call site. Other
	 * tasks; other CPUs; other GFP masks. Two pairs back to back: a
	 * second event is no first one.
	 */
	static const struct {
		unsigned int cpu;
		bool out, small;
		uint16_t id;
		uint8_t flags;
		uint32_t pid, gfp;
	} evs[] = {
		{ 0, false, false, 1, 0, 0, 0x400 }, { 0, true, true, 2, 0, 0, 0x400 },
		{ 0, false, false, 0, KMT_F_NO_STACK, 0, 0x400 }, { 0, true, true, 2, 0, 0, 0x400 },
		{ 0, true, true, 2, 0, 0, 0x400 },
		{ 0, true, false, 2, 0, 0, 0x400 }, { 0, true, true, 2, 0, 0, 0x400 },
		{ 0, false, false, 1, 0, 5, 0x400 }, { 0, true, true, 2, 0, 6, 0x400 },
		{ 0, false, false, 1, 0, 0, 0x400 }, { 1, true, true, 0, 0, 0, 0x400 },
		{ 0, false, false, 1, 0, 0, 0x400 }, { 0, true, true, 2, 0, 0, 0x800 },
		{ 0, false, false, 1, 0, 0, 0x400 }, { 0, true, false, 2, 0, 0, 0x400 },
		{ 0, false, false, 1, 0, 0, 0x400 }, { 0, true, true, 2, 0, 0, 0x400 },
	};
	static const uint64_t in[] = { 0xffffffff81003100ULL, 0xffffffff81700000ULL };
	static const uint64_t out[] = { 0xffffffff81700000ULL };
	const uint64_t small = 0xffffffff81005000ULL;
	uint64_t t = 1000, a = 0xffff888070000000ULL;
	unsigned int nsmall = 0;
	char path[4096];
	struct gen *g;
	struct rpt *r;
	size_t i;

	snprintf(path, sizeof(path), "%s/dupfail", test_dir);
	g = gen_open(path, 2, NULL);
	if (!g) {
		ok(0, "gen_open");
		return;
	}
	gen_stack(g, 0, t++, 1, in, 2);
	gen_stack(g, 0, t++, 2, out, 1);
	for (i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
		fail_ev(g, evs[i].cpu, t++, evs[i].out ? out[0] : in[0], evs[i].id, evs[i].flags,
			evs[i].pid, evs[i].gfp);
		if (evs[i].small) {
			gen_kmalloc(g, 0, t++, small, a, 64, 64, KMT_NODE_ANY, 0);
			a += 64;
			nsmall++;
		}
	}
	if (gen_close(g)) {
		ok(0, "gen_close");
		return;
	}
	r = test_analyse(path, NULL, RPT_TIMELINE);
	if (!r) {
		ok(0, "analysis");
		return;
	}
	{
		const struct rpt_totals *tt = rpt_totals(r);
		const struct rpt_site *si = rpt_site_find(r, in[0]), *so = rpt_site_find(r, out[0]);
		const struct rpt_cache *c = rpt_cache_find(r, "kmalloc-32k");
		const struct rpt_stack *sin = NULL, *sout = NULL;

		two_stacks(r, in[0], &sin, &sout);
		is_u64(tt->kmalloc_dup_events, 4, "four failed large kmallocs traced twice");
		is_u64(tt->kmalloc_dup_failed, 4, "... all counted as failed ones");
		is_u64(tt->failed_allocs, 13, "failures: 17 events, 4 first events of a pair");
		is_u64(tt->allocs, 13 + nsmall, "allocations: the failures and the small ones");
		is_u64(si ? si->failed : 99, 3, "the allocator's call site: the 3 unpaired");
		is_u64(si ? si->hits : 99, 3, "... and no other hit");
		is_u64(so ? so->failed : 0, 10, "the caller's: its 10 failures");
		is_u64(c ? c->allocs : 0, 13, "kmalloc-32k: 13 allocations");
		is_u64(c ? c->failed : 0, 13, "... all failed");
		is_u64(sin ? sin->hits : 99, 3, "the allocator's stack: the 3 unpaired");
		is_u64(sin ? sin->failed : 99, 3, "... failed");
		is_u64(sout ? sout->failed : 0, 9, "the caller's stack: its 9 failures on CPU 0");
		is_u64(tt->stack_allocs, 12, "with a stack: 3 + 9");
		is_u64(tt->no_stack_allocs, 0, "the marked first event: taken back");
		is_u64(tt->kmalloc_dup_no_stack, 1, "... and counted apart");
		is_u64(tl_allocs(lp_tl(rpt_lp(r), site_index(r, in[0]))), 3,
		       "timeline: the 3 unpaired at the allocator's call site");
		is_u64(tl_allocs(lp_tl(rpt_lp(r), SIZE_MAX)), 13 + nsmall, "timeline: every allocation");
	}
	rpt_free(r);
}

static void test_page_stacks(void)
{
	static const uint64_t fa[] = { 0xffffffff81200010ULL, 0xffffffff81300020ULL };
	static const uint64_t fb[] = { 0xffffffff81200010ULL, 0xffffffff81400030ULL,
				       0xffffffff81500040ULL };
	char path[4096];
	struct gen *g;
	struct rpt *r;
	uint64_t t = 1000;
	const struct rpt_page_tally *pt;
	size_t n, i;

	snprintf(path, sizeof(path), "%s/pstk", test_dir);
	g = gen_open(path, 2, NULL);
	if (!g) {
		ok(0, "gen_open");
		return;
	}
	gen_stack(g, 0, t++, 1, fa, 2);
	gen_stack(g, 1, t++, 7, fb, 3);
	for (i = 0; i < 5; i++) {
		struct kmt_event e = { .type = KMT_REC_PAGE_ALLOC, .timestamp = t++,
				       .ptr = 500 + i, .bytes_alloc = 4096, .bytes_req = 4096,
				       .node = KMT_NODE_ANY, .stack_id = i < 3 ? 1 : 7 };

		gen_event(g, i < 3 ? 0 : 1, &e);
	}
	{
		/* No stack, and one marked as having none. */
		struct kmt_event e = { .type = KMT_REC_PAGE_ALLOC, .timestamp = t++, .ptr = 600,
				       .bytes_alloc = 8192, .node = KMT_NODE_ANY };

		gen_event(g, 0, &e);
		e.ptr = 601;
		e.timestamp = t++;
		e.flags = KMT_F_NO_STACK;
		gen_event(g, 0, &e);
		e = (struct kmt_event){ .type = KMT_REC_PAGE_FREE, .timestamp = t++, .ptr = 500,
					.bytes_alloc = 4096, .node = KMT_NODE_ANY };
		gen_event(g, 1, &e);
		e.ptr = 503;
		e.timestamp = t++;
		gen_event(g, 0, &e);
	}
	if (gen_close(g)) {
		ok(0, "gen_close");
		return;
	}
	r = test_analyse(path, NULL, 0);
	if (!r) {
		ok(0, "analysis");
		return;
	}
	pt = rpt_pages(r, RPT_PG_STACK, &n);
	is_u64(n, 2, "two page stacks");
	for (i = 0; i < n; i++) {
		unsigned int d = 0;
		const uint64_t *fr = kmt_stacks_frames(rpt_stacks(r), (uint32_t)pt[i].key, &d);
		int a = d == 2 && fr[1] == fa[1];

		is_u64(pt[i].allocs, a ? 3 : 2, "stack %s: allocations", a ? "A" : "B");
		is_u64(pt[i].frees, 1, "stack %s: one freed", a ? "A" : "B");
		is_u64(pt[i].live, a ? 2 : 1, "stack %s: live at the end", a ? "A" : "B");
		is_u64(pt[i].bytes, (a ? 3 : 2) * 4096, "stack %s: bytes", a ? "A" : "B");
	}
	is_u64(rpt_totals(r)->page_allocs, 7, "all seven page allocations in the totals");
	rpt_free(r);
}

int main(void)
{
	if (!test_dir_make("report-life")) {
		perror("mkdtemp");
		return 1;
	}
	test_hist_buckets();
	test_lifetimes();
	test_pages();
	test_dup_without_pages();
	test_dup_with_stacks();
	test_dup_failed();
	test_page_stacks();
	test_bounded();
	test_dir_remove();
	return done_testing();
}
