// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_report_growth.c - unit tests of the snapshots behind
 * kmemtrace-report --at and --diff (core/rpt_growth.c): a generated trace
 * of allocations and frees on two CPUs, through addresses reused (frees of
 * objects from before the trace, double frees, addresses allocated again
 * while live), failed allocations and kernel stacks, whose every object
 * the test keeps; at several times (before the first event, on an event's
 * own time, between events, at the end) each snapshot's figures per call
 * site, cache and stack and its objects are those of the test's objects;
 * the same whatever the batches the records come in, with a CPU filter
 * too; and the analysis after the snapshots is the one without them, but
 * for a large kmalloc traced twice across a snapshot's time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "kmt_reader.h"
#include "core/report_core.h"
#include "core/rpt_growth.h"
#include "tap.h"
#include "testlib.h"

#define NEVENTS		4000
#define NADDRS		96
#define NSITES		4
#define NSTACKS		3
#define T0		((uint64_t)1000000)
#define SITE(i)		(0xffffffff81000100ULL + 0x100ULL * (i))
#define ADDR(i)		(0xffff888100000000ULL + 0x1000ULL * (i))
#define FRAME1(k)	(0xffffffff81400000ULL + (k))

/* An allocation the test made, and how it ended. */
struct tobj {
	unsigned int site, stack, cpu;	/* stack: 0 none, else 1..NSTACKS */
	uint32_t bytes;
	uint64_t ptr, t_alloc, t_end;	/* t_end 0: live at the end */
	bool failed, freed;		/* freed: by a free event (else by reuse, or live) */
	uint64_t t_free;
};

static struct tobj objs[NEVENTS];
static size_t nobjs;
static uint64_t t_last;

static const uint32_t sizes[NSITES] = { 32, 64, 96, 128 };

/* The trace, and the test's objects. 0, or -1. */
static int write_trace(const char *dir)
{
	struct gen *g = gen_open(dir, 2, NULL);
	uint64_t st = 0x2545f4914f6cdd1dULL, t = T0;
	long live[NADDRS];
	unsigned int i, k, cpu;

	if (!g)
		return -1;
	for (i = 0; i < NADDRS; i++)
		live[i] = -1;
	/* The same three stacks on both CPUs: three distinct stacks in all. */
	for (cpu = 0; cpu < 2; cpu++) {
		for (k = 1; k <= NSTACKS; k++) {
			uint64_t fr[2] = { 0xffffffff81300000ULL + k, FRAME1(k) };

			if (gen_stack(g, cpu, t, (uint16_t)k, fr, 2))
				goto fail;
		}
	}
	for (i = 0; i < NEVENTS; i++) {
		uint64_t r = gen_xorshift(&st);
		unsigned int a = (unsigned int)(r >> 8) % NADDRS;

		t += 1 + (r >> 40) % 5000;
		cpu = (unsigned int)(r >> 20) & 1;
		if ((r & 0xff) < 180) {
			struct tobj *o = &objs[nobjs++];
			struct kmt_event e = { 0 };

			o->site = (unsigned int)(r >> 24) % NSITES;
			o->stack = (unsigned int)(r >> 28) % (NSTACKS + 1);
			o->cpu = cpu;
			o->bytes = sizes[o->site];
			o->t_alloc = t;
			o->failed = ((r >> 32) & 0x1f) == 0;
			o->ptr = o->failed ? 0 : ADDR(a);
			if (!o->failed) {
				/* An address allocated again while live: its free was not traced. */
				if (live[a] >= 0)
					objs[live[a]].t_end = t;
				live[a] = (long)(o - objs);
			}
			e.type = KMT_REC_KMALLOC;
			e.timestamp = t;
			e.call_site = SITE(o->site);
			e.ptr = o->ptr;
			e.bytes_req = o->bytes - 4;
			e.bytes_alloc = o->bytes;
			e.node = KMT_NODE_ANY;
			e.pid = 1;
			e.stack_id = (uint16_t)o->stack;
			if (gen_event(g, cpu, &e))
				goto fail;
		} else {
			/* A free of a live object, or of one from before the trace, or again. */
			if (live[a] >= 0) {
				objs[live[a]].t_end = t;
				objs[live[a]].freed = true;
				objs[live[a]].t_free = t;
				live[a] = -1;
			}
			if (gen_kfree(g, cpu, t, 0xffffffff81000f00ULL, ADDR(a), 1))
				goto fail;
		}
	}
	t_last = t;
	return gen_close(g);
fail:
	gen_close(g);
	return -1;
}

/* What a snapshot at t holds of site (or all sites: NSITES), stack (0: any) on cpus. */
struct want {
	uint64_t live, live_bytes, oldest, allocs, failed, frees;
};

static bool sel(const struct tobj *o, int cpu)
{
	return cpu < 0 || (int)o->cpu == cpu;
}

static struct want want_at(uint64_t t, unsigned int site, unsigned int stack, int cpu)
{
	struct want w = { 0 };
	size_t i;

	for (i = 0; i < nobjs; i++) {
		const struct tobj *o = &objs[i];

		if (!sel(o, cpu) || (site < NSITES && o->site != site) ||
		    (stack && o->stack != stack) || o->t_alloc > t)
			continue;
		w.allocs++;
		w.failed += o->failed;
		w.frees += o->freed && o->t_free <= t;
		if (o->failed || (o->t_end && o->t_end <= t))
			continue;
		if (!w.live || o->t_alloc < w.oldest)
			w.oldest = o->t_alloc;
		w.live++;
		w.live_bytes += o->bytes;
	}
	return w;
}

static unsigned int check_tally(const struct grow_tally *g, const struct want *w)
{
	return (g->live != w->live) + (g->live_bytes != w->live_bytes) +
	       (w->live && g->oldest_ts != w->oldest) + (g->allocs != w->allocs) +
	       (g->failed != w->failed) + (g->frees != w->frees);
}

/* The stack of rpt_stack() index i: 1..NSTACKS by its second frame; 0 unknown. */
static unsigned int stack_no(const struct rpt *r, size_t i)
{
	unsigned int d = 0, k;
	const uint64_t *fr = kmt_stacks_frames(rpt_stacks(r), i, &d);

	for (k = 1; d == 2 && k <= NSTACKS; k++)
		if (fr[1] == FRAME1(k))
			return k;
	return 0;
}

/* Every figure of snapshot s (at abs time t) against the objects. The mismatches. */
static unsigned int check_snap(const struct rpt *r, const struct grow_snap *s, uint64_t t,
			       int cpu, bool objs_all, uint64_t after)
{
	struct want w = want_at(t, NSITES, 0, cpu);
	unsigned int bad = check_tally(&s->total, &w);
	size_t i, n = 0;

	for (i = 0; i < s->nsites; i++) {
		unsigned int site = (unsigned int)((rpt_site(r, i)->addr - SITE(0)) / 0x100);

		w = want_at(t, site, 0, cpu);
		bad += check_tally(&s->sites[i], &w);
	}
	for (i = 0; i < s->nstacks; i++) {
		w = want_at(t, NSITES, stack_no(r, i), cpu);
		bad += !stack_no(r, i) || check_tally(&s->stacks[i], &w);
	}
	/* The objects kept, oldest first: all of those live, or those allocated after. */
	for (i = 0; i < nobjs; i++) {
		const struct tobj *o = &objs[i];

		if (!sel(o, cpu) || o->failed || o->t_alloc > t || (o->t_end && o->t_end <= t) ||
		    (!objs_all && o->t_alloc <= after))
			continue;
		/* Allocation times are all distinct: the order is by time alone. */
		bad += n >= s->nobjs || s->objs[n].ptr != o->ptr || s->objs[n].ts != o->t_alloc ||
		       s->objs[n].bytes != o->bytes || rpt_site(r, s->objs[n].site)->addr !=
		       SITE(o->site) || (o->stack ? stack_no(r, s->objs[n].stack) != o->stack :
					 s->objs[n].stack != KMT_STACK_NONE);
		n++;
	}
	return bad + (n != s->nobjs);
}

/* The trace fed through growth_feed() in batches of bsz, filtered to cpu (-1: all). */
static struct rpt *run(struct growth *g, int cpu, size_t bsz)
{
	static uint8_t cpus[2];
	struct rpt_filter f = { 0 };
	const union kmt_rec *batch[512];
	struct kmt_error err;
	struct kmt_merge *m = kmt_merge_open_dir(test_dir, 0, &err);
	struct rpt *r;
	int n;

	if (!m)
		return NULL;
	if (cpu >= 0) {
		cpus[0] = cpu == 0;
		cpus[1] = cpu == 1;
		f.cpus = cpus;
		f.ncpus = 2;
	}
	r = rpt_new(&f, 0);
	while (r && (n = kmt_merge_next_batch(m, batch, bsz)) > 0) {
		if (g ? growth_feed(g, r, batch, (size_t)n) : rpt_feed_refs(r, batch, (size_t)n)) {
			rpt_free(r);
			r = NULL;
		}
	}
	kmt_merge_close(m);
	if (r && ((g && growth_finish(g, r)) || rpt_finish(r))) {
		rpt_free(r);
		r = NULL;
	}
	return r;
}

static bool same_snap(const struct grow_snap *a, const struct grow_snap *b)
{
	return a->nsites == b->nsites && a->nstacks == b->nstacks && a->nobjs == b->nobjs &&
	       !memcmp(a->sites, b->sites, a->nsites * sizeof(*a->sites)) &&
	       !memcmp(a->stacks, b->stacks, a->nstacks * sizeof(*a->stacks)) &&
	       !memcmp(&a->total, &b->total, sizeof(a->total)) &&
	       (!a->nobjs || !memcmp(a->objs, b->objs, a->nobjs * sizeof(*a->objs)));
}

static void test_times(void)
{
	/* Relative to the first record (the stacks, at T0). */
	const uint64_t mid = (t_last - T0) / 2, at_event = objs[nobjs / 3].t_alloc - T0;
	const struct {
		uint64_t t1, t2;
		const char *what;
	} win[] = {
		{ 0, mid, "from the first record to the middle" },
		{ at_event, mid, "from an allocation's own time (it is before the window)" },
		{ mid, at_event + (t_last - T0) / 2, "a window in the second half" },
		{ mid, mid, "an empty window" },
		{ mid, t_last - T0, "to the last record (taken at the end)" },
	};
	size_t i, b;

	for (i = 0; i < sizeof(win) / sizeof(win[0]); i++) {
		int cpu;

		for (cpu = -1; cpu <= 1; cpu++) {
			struct growth *g = growth_new(win[i].t1, win[i].t2, true);
			struct rpt *r = run(g, cpu, 256);
			const struct grow_snap *s1, *s2;

			if (!ok(g && r, "%s (cpu %d): analysed", win[i].what, cpu)) {
				growth_free(g);
				rpt_free(r);
				continue;
			}
			s1 = growth_snap(g, 0);
			s2 = growth_snap(g, 1);
			is_u64(check_snap(r, s1, T0 + win[i].t1, cpu, false, UINT64_MAX), 0,
			       "%s (cpu %d): T1's figures by call site and stack", win[i].what, cpu);
			is_u64(check_snap(r, s2, T0 + win[i].t2, cpu, false, T0 + win[i].t1), 0,
			       "%s (cpu %d): T2's figures and the survivors one by one", win[i].what,
			       cpu);
			/* Whatever batches the records come in. */
			for (b = 1; cpu < 0 && b <= 7; b += 6) {
				struct growth *g2 = growth_new(win[i].t1, win[i].t2, true);
				struct rpt *r2 = run(g2, cpu, b);

				ok(g2 && r2 && same_snap(s1, growth_snap(g2, 0)) &&
				   same_snap(s2, growth_snap(g2, 1)),
				   "%s: the same in batches of %zu records", win[i].what, b);
				growth_free(g2);
				rpt_free(r2);
			}
			growth_free(g);
			rpt_free(r);
		}
	}
}

static void test_at(void)
{
	const uint64_t ts[] = { 0, objs[10].t_alloc - T0, objs[10].t_alloc - T0 - 1,
				(t_last - T0) / 3, t_last - T0 };
	size_t i;

	for (i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
		struct growth *g = growth_new(ts[i], 0, false);
		struct rpt *r = run(g, -1, 64);

		if (!ok(g && r, "--at %" PRIu64 " ns: analysed", ts[i])) {
			growth_free(g);
			rpt_free(r);
			continue;
		}
		ok(!growth_is_diff(g) && !growth_snap(g, 1), "--at %" PRIu64 " ns: one snapshot",
		   ts[i]);
		is_u64(check_snap(r, growth_snap(g, 0), T0 + ts[i], -1, true, 0), 0,
		       "--at %" PRIu64 " ns: figures and every object outstanding, oldest first",
		       ts[i]);
		is_u64(growth_duration(g), t_last - T0, "the trace's duration, first to last record");
		growth_free(g);
		rpt_free(r);
	}
}

/* The snapshots leave the analysis as it is without them. */
static void test_unchanged(void)
{
	struct growth *g = growth_new(1000000, 3000000, true);
	struct rpt *r = run(g, -1, 256), *plain = run(NULL, -1, 256);
	size_t i, bad = 0;

	if (!ok(g && r && plain, "analysed with and without snapshots"))
		goto out;
	bad += memcmp(rpt_totals(r), rpt_totals(plain), sizeof(struct rpt_totals)) != 0;
	bad += rpt_nsites(r) != rpt_nsites(plain);
	for (i = 0; !bad && i < rpt_nsites(r); i++)
		bad += memcmp(rpt_site(r, i), rpt_site(plain, i), sizeof(struct rpt_site)) != 0;
	is_u64(bad, 0, "totals and call sites the same with snapshots as without");
	/* The whole trace's outstanding objects at the end are the last snapshot's at the end. */
out:
	growth_free(g);
	rpt_free(r);
	rpt_free(plain);
}

/* A snapshot's tally of the call site at addr, or NULL. */
static const struct grow_tally *site_tally(const struct rpt *r, const struct grow_snap *s,
					   uint64_t addr)
{
	size_t i;

	for (i = 0; i < s->nsites; i++)
		if (rpt_site(r, i)->addr == addr)
			return &s->sites[i];
	return NULL;
}

/*
 * A large kmalloc traced twice (6.12, 7.3): its first event at the
 * allocator's call site, its second at the caller's. A snapshot between
 * the two leaves it at the first, as an interval closing there does; one
 * before both, at the caller's, as the report without snapshots.
 */
static void test_dup_across(void)
{
	const uint64_t inner = 0xffffffff81003000ULL, caller = 0xffffffff81003100ULL;
	const uint64_t small = 0xffffffff81003200ULL, big = 0xffff888050000000ULL;
	const struct {
		uint64_t t1;
		uint64_t where;
		const char *what;
	} cases[] = {
		{ 1000, caller, "a snapshot before both events: at the caller's call site" },
		{ 2500, inner, "a snapshot between them: at the first event's call site" },
	};
	char path[4096];
	struct gen *g;
	size_t i;

	snprintf(path, sizeof(path), "%s/dup", test_dir);
	g = gen_open(path, 1, NULL);
	if (!g || gen_kmalloc(g, 0, 1000, small, 0xffff888050100000ULL, 64, 64, KMT_NODE_ANY, 1) ||
	    gen_kmalloc(g, 0, 3000, inner, big, 20000, 32768, KMT_NODE_ANY, 1) ||
	    gen_kmalloc(g, 0, 4000, caller, big, 20000, 32768, KMT_NODE_ANY, 1) || gen_close(g)) {
		ok(0, "wrote the trace of a large kmalloc traced twice");
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct growth *gw = growth_new(cases[i].t1, 3000, true);
		struct kmt_error err;
		struct kmt_merge *m = kmt_merge_open_dir(path, 0, &err);
		const union kmt_rec *batch[16];
		struct rpt *r = rpt_new(NULL, 0);
		const struct grow_tally *in, *at;
		int n = 0, fail = !gw || !m || !r;

		while (!fail && (n = kmt_merge_next_batch(m, batch, 16)) > 0)
			fail = growth_feed(gw, r, batch, (size_t)n);
		fail = fail || n < 0 || growth_finish(gw, r) || rpt_finish(r);
		if (ok(!fail, "%s: analysed", cases[i].what)) {
			in = site_tally(r, growth_snap(gw, 1), cases[i].where);
			at = site_tally(r, growth_snap(gw, 1),
					cases[i].where == inner ? caller : inner);
			ok(in && in->live == 1 && in->allocs == 1 && (!at || !at->allocs),
			   "%s", cases[i].what);
			is_u64(rpt_site_find(r, cases[i].where)->hits, 1,
			       "%s: the report's call sites agree", cases[i].what);
			is_u64(rpt_totals(r)->allocs, 2, "%s: two allocations in all", cases[i].what);
		}
		kmt_merge_close(m);
		growth_free(gw);
		rpt_free(r);
	}
}

int main(void)
{
	if (!test_dir_make("report-growth")) {
		perror("mkdtemp");
		return 1;
	}
	if (!ok(write_trace(test_dir) == 0, "wrote the trace"))
		return 1;
	diag("%zu allocations over %" PRIu64 " ns", nobjs, (uint64_t)(t_last - T0));
	test_times();
	test_at();
	test_unchanged();
	test_dup_across();
	test_dir_remove();
	return done_testing();
}
