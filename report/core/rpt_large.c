// SPDX-License-Identifier: GPL-2.0-only
/*
 * rpt_large.c - large kmallocs (above two pages, served by the page
 * allocator): the page block each one is, and the kmallocs 6.12 and 7.3
 * trace twice, counted once. Reached only after a large allocation, so
 * out of the common path.
 */
#include <stdlib.h>
#include <string.h>

#include "core/report_core_int.h"

/*
 * The stack tallies of the first event of a large kmalloc traced twice
 * (kmalloc_dup()), taken back: stack_alloc() in reverse. Its stack's
 * hits and bytes, or its count among the allocations without a stack; a
 * marked one stays apart in kmalloc_dup_no_stack, for the module's own
 * count of events without a stack holds it.
 */
static void stack_take_back(struct rpt *r, const struct page_pend *p, const struct obj *o)
{
	uint32_t *k = o && r->objs.stk ? &r->objs.stk[o - r->objs.e] : NULL;
	uint32_t i = o ? (k ? *k : KMT_STACK_NONE) : p->dup_stk;
	struct rpt_stack *st;

	if (p->dup_flags & KMT_F_NO_STACK) {
		r->t.no_stack_allocs--;
		r->t.kmalloc_dup_no_stack++;
		return;
	}
	if (!p->dup_stacked)
		return;
	if (i == KMT_STACK_NONE) {
		r->t.unknown_stack_allocs--;
		return;
	}
	st = &r->stk[i];
	st->hits--;
	r->t.stack_allocs--;
	if (!o) {
		st->failed--;
		return;
	}
	st->bytes_req -= p->dup_req;
	st->bytes_alloc -= o->bytes;
	*k = KMT_STACK_NONE;
}

/*
 * What the first event of a large kmalloc traced twice counted at its
 * call site and cache, taken back (kmalloc_dup(), kmalloc_fail_dup()):
 * an allocation of *bytes, or a failed one (bytes NULL).
 */
static void dup_take_back(struct rpt *r, const struct page_pend *p, uint32_t site,
			  uint32_t cache, uint64_t ts, const uint32_t *bytes)
{
	struct rpt_site *s = &r->sites[site];
	struct rpt_cache *c = cache != UINT32_MAX ? &r->caches[cache] : NULL;

	s->hits--;
	s->cross_node -= p->dup_cross;
	if (c)
		c->allocs--;
	if (!bytes) {
		s->failed--;
		if (c)
			c->failed--;
	} else {
		s->bytes_req -= p->dup_req;
		s->bytes_alloc -= *bytes;
		if (c) {
			c->bytes_req -= p->dup_req;
			c->bytes_alloc -= *bytes;
		}
	}
	if (r->flags & RPT_SAMPLES)
		rpt_sample_take_back(r, p->dup_sample, p->dup_req, bytes);
	r->t.probed_allocs -= (p->dup_flags & KMT_F_PROBED) != 0;
	r->t.clamped_allocs -= (p->dup_flags & KMT_F_CLAMPED) != 0;
	if (r->flags & RPT_TIMELINE)
		lp_tl_take_back(r->lp, site, since_start(r, ts));
}

/*
 * In 6.12 and 7.3 (__do_kmalloc_node() traces what __kmalloc_large_node_noprof()
 * already traced) a large kmalloc is two kmalloc events on its CPU, one
 * after the other: the same address and bytes, the first with a call site
 * inside the allocator, the second with the caller's. The first one's
 * counts are taken back, in every tally it went into (its stack's too),
 * so that the caller's event alone counts. When an interval closed in
 * between, the first one stays, where that interval showed it, and the
 * second is not counted (true): no later interval shows a count taken back.
 */
static bool kmalloc_dup(struct rpt *r, const struct kmt_event *ev, const struct page_pend *p)
{
	struct obj *o = obj_find(&r->objs, ev->ptr);

	/* The watched event's own object still (not another CPU's at that address since). */
	if (!o || o->state != OBJ_LIVE_SEL || o->kind != KMT_REC_KMALLOC || o->cpu != ev->cpu ||
	    o->ts != p->dup_ts || ev->bytes_req != p->dup_req)
		return false;
	r->t.kmalloc_dup_events++;
	if (p->dup_shown) {
		r->t.kmalloc_dup_no_stack += (ev->flags & KMT_F_NO_STACK) != 0;
		return true;
	}
	dup_take_back(r, p, o->site, o->cache, o->ts, &o->bytes);
	if (r->flags & RPT_PTR_VIEW) {
		uint32_t i;

		if (map_get(&r->ptr_map, ev->ptr, &i)) {
			r->ptrs[i].hits--;
			r->ptrs[i].bytes_req -= p->dup_req;
			r->ptrs[i].bytes_alloc -= o->bytes;
		}
	}
	stack_take_back(r, p, o);
	/* Not an address allocated again while live: the same allocation. */
	o->state = OBJ_DEAD;
	return false;
}

/*
 * A failed large kmalloc on 6.12 and 7.3 is two events too, both NULL:
 * the first at the call site inside the allocator, then the caller's.
 * With no address to match, the second is the CPU's next allocation
 * event: a failed kmalloc of the same task with the same sizes, flags and
 * node, from another call site (one failing twice in a row at the same
 * call site, or one a kernel traces once, stays two). The first one's
 * counts are taken back as kmalloc_dup() does.
 */
static bool kmalloc_fail_dup(struct rpt *r, const struct kmt_event *ev,
			     const struct page_pend *p)
{
	if (ev->type != KMT_REC_KMALLOC || ev->ptr || ev->bytes_req != p->dup_req ||
	    ev->bytes_alloc != p->bytes || ev->gfp_flags != p->dup_gfp || ev->node != p->dup_node ||
	    ev->pid != p->dup_pid || ev->call_site == p->dup_call_site)
		return false;
	r->t.kmalloc_dup_events++;
	r->t.kmalloc_dup_failed++;
	if (p->dup_shown) {
		r->t.kmalloc_dup_no_stack += (ev->flags & KMT_F_NO_STACK) != 0;
		return true;
	}
	dup_take_back(r, p, p->dup_site, p->dup_cache, p->dup_ts, NULL);
	stack_take_back(r, p, NULL);
	r->fail_second = true;
	return false;
}

void rpt_shown(struct rpt *r)
{
	unsigned int c;

	for (c = 0; r->npend && c < r->npend_cpus; c++)
		r->pend[c].dup_shown |= r->pend[c].dup_ptr != 0 || r->pend[c].dup_failed;
}

/*
 * A kmalloc() above KMALLOC_MAX_CACHE_SIZE (two pages from 6.1 to 7.3, so
 * bytes_req above two pages and an order of 2 or more) allocates pages,
 * firing mm_page_alloc, then kmalloc on the same CPU with bytes_alloc =
 * PAGE_SIZE << order and the block's direct-map address. It is that when it is the
 * CPU's next allocation event after a page allocation of those bytes, its
 * address is page-aligned, and address - (PFN << PAGE_SHIFT) is the
 * direct map's offset every such pair agrees on (the first one found sets
 * it). The page block is then marked as the kmalloc's memory. Also
 * where a watched large kmalloc meets its second event (kmalloc_dup()):
 * true when ev is that second event and is not to be counted.
 */
bool rpt_page_pair(struct rpt *r, const struct kmt_event *ev)
{
	struct page_pend *p;
	bool drop = false;
	uint64_t delta;
	struct obj *o;

	if (ev->cpu >= r->npend_cpus || !r->pend[ev->cpu].bytes)
		return false;
	p = &r->pend[ev->cpu];
	r->npend--;
	r->fail_second = false;
	if (p->dup_failed) {
		drop = kmalloc_fail_dup(r, ev, p);
		p->dup_failed = false;
		goto done;
	}
	if (p->dup_ptr) {
		if (ev->type == KMT_REC_KMALLOC && ev->ptr == p->dup_ptr &&
		    ev->bytes_alloc == p->bytes)
			drop = kmalloc_dup(r, ev, p);
		p->dup_ptr = 0;
		goto done;
	}
	if (ev->type != KMT_REC_KMALLOC || !ev->ptr || ev->bytes_alloc != p->bytes ||
	    ev->bytes_req <= 2 * r->page_size || (ev->ptr & (r->page_size - 1)))
		goto done;
	delta = ev->ptr - (p->pfn << r->page_shift);
	if (r->dmap_known && delta != r->dmap_delta)
		goto done;
	o = obj_find(&r->pages, p->pfn);
	if (!o || o->state != OBJ_LIVE_SEL || o->kind != KMT_REC_PAGE_ALLOC)
		goto done;
	r->dmap_delta = delta;
	r->dmap_known = true;
	o->kind = KMT_REC_KMALLOC;
	r->t.page_kmalloc_allocs++;
	r->t.page_kmalloc_bytes += o->bytes;
	PG_EACH(r, o, t, (t->kmalloc_allocs++, t->kmalloc_bytes += o->bytes));
done:
	p->bytes = 0;
	return drop;
}

/*
 * Watches the CPU's next allocation event for a second event of this large
 * kmalloc, keeping what its counts took; NULL: out of memory.
 */
static struct page_pend *watch(struct rpt *r, const struct kmt_event *ev)
{
	struct page_pend *p;

	if (rpt_page_pend(r, ev))
		return NULL;
	p = &r->pend[ev->cpu];
	p->dup_ts = ev->timestamp;
	p->dup_req = ev->bytes_req;
	p->dup_flags = ev->flags;
	p->dup_cross = (ev->node != KMT_NODE_ANY) & (ev->node != ev->cpu_node);
	p->dup_stacked = ev->stack_id != 0;
	p->dup_sample = r->last_sample;
	return p;
}

/* A large kmalloc: its second event has its address (kmalloc_dup()). */
int rpt_dup_watch(struct rpt *r, const struct kmt_event *ev)
{
	struct page_pend *p = watch(r, ev);

	if (!p)
		return -1;
	p->dup_ptr = ev->ptr;
	return 0;
}

/* A failed one: its second event has the same task, sizes, mask and node (kmalloc_fail_dup()). */
int rpt_fail_watch(struct rpt *r, const struct kmt_event *ev, uint32_t site, uint32_t cache)
{
	struct page_pend *p = watch(r, ev);

	if (!p)
		return -1;
	p->dup_failed = true;
	p->dup_stk = p->dup_stacked && !(ev->flags & KMT_F_NO_STACK) ?
		     kmt_stacks_lookup(r->stacks, ev->cpu, ev->stack_id) : KMT_STACK_NONE;
	p->dup_site = site;
	p->dup_cache = cache;
	p->dup_gfp = ev->gfp_flags;
	p->dup_pid = ev->pid;
	p->dup_node = ev->node;
	p->dup_call_site = ev->call_site;
	return 0;
}

int rpt_page_pend(struct rpt *r, const struct kmt_event *ev)
{
	if (ev->cpu >= r->npend_cpus) {
		unsigned int n = ev->cpu + 1u;
		struct page_pend *p = realloc(r->pend, n * sizeof(*p));

		if (!p)
			return -1;
		memset(p + r->npend_cpus, 0, (n - r->npend_cpus) * sizeof(*p));
		r->pend = p;
		r->npend_cpus = n;
	}
	r->npend += !r->pend[ev->cpu].bytes;
	r->pend[ev->cpu] = (struct page_pend){ .pfn = ev->ptr, .bytes = ev->bytes_alloc };
	return 0;
}
