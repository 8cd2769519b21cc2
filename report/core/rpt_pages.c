// SPDX-License-Identifier: GPL-2.0-only
/*
 * rpt_pages.c - the page allocator's events: page blocks by PFN, tallied
 * by order, migrate type, GFP mask and kernel stack, live at the end.
 */
#include <string.h>

#include "core/report_core_int.h"

void rpt_set_page_size(struct rpt *r, uint32_t page_size)
{
	if (!page_size || (page_size & (page_size - 1)))
		return;
	r->page_size = page_size;
	r->page_shift = (unsigned int)__builtin_ctz(page_size);
}

/* The tally of a GFP mask, new the first time. NULL: memory. */
static struct rpt_page_tally *pg_gfp_get(struct rpt *r, uint32_t gfp, uint32_t *idx)
{
	uint32_t i;

	if (map_get(&r->pg_gfp_map, gfp, &i)) {
		*idx = i;
		return &r->pg_gfp[i];
	}
	if (rpt_grow((void **)&r->pg_gfp, &r->pg_gfp_cap, r->npg_gfp, sizeof(*r->pg_gfp)))
		return NULL;
	i = (uint32_t)r->npg_gfp;
	if (rpt_map_put(&r->pg_gfp_map, gfp, i))
		return NULL;
	r->npg_gfp++;
	memset(&r->pg_gfp[i], 0, sizeof(r->pg_gfp[i]));
	r->pg_gfp[i].key = gfp;
	*idx = i;
	return &r->pg_gfp[i];
}

static unsigned int pg_mt_index(const struct kmt_event *ev)
{
	if (!(ev->cache_id & KMT_PAGE_MT_VALID))
		return RPT_MT_UNKNOWN;
	return (ev->cache_id & 0xff) < RPT_MT_NAMED ? (unsigned int)(ev->cache_id & 0xff) :
						      RPT_MT_UNKNOWN;
}

/* The index + 1 of a page allocation's stack, 0 if none; -1: memory. */
static int64_t pg_stack(struct rpt *r, const struct kmt_event *ev)
{
	uint32_t i;

	if (!ev->stack_id || (ev->flags & KMT_F_NO_STACK))
		return 0;
	i = kmt_stacks_lookup(r->stacks, ev->cpu, ev->stack_id);
	if (i == KMT_STACK_NONE)
		return 0;
	while (i >= r->npg_stk) {
		if (rpt_grow((void **)&r->pg_stk, &r->pg_stk_cap, r->npg_stk, sizeof(*r->pg_stk)))
			return -1;
		r->pg_stk[r->npg_stk].key = r->npg_stk;
		r->npg_stk++;
	}
	return (int64_t)i + 1;
}

static bool page_sel(const struct rpt *r, const struct kmt_event *ev)
{
	return cpu_pid_ok(r, ev) && !r->f.cache_name && ev->bytes_alloc >= r->f.min_size;
}

/*
 * A page block's slot keeps in site the index of its GFP mask's tally and
 * in cache its migrate type's; kind becomes KMT_REC_KMALLOC once a
 * kmalloc event claimed it (page_pair()).
 */
int rpt_page_alloc(struct rpt *r, const struct kmt_event *ev)
{
	bool sel = page_sel(r, ev);
	struct obj *o, key = { .bytes = ev->bytes_alloc, .cache = pg_mt_index(ev) };

	if (r->npend)
		rpt_page_pair(r, ev);
	if (sel) {
		int64_t stk = pg_stack(r, ev);

		if (stk < 0 || !pg_gfp_get(r, ev->gfp_flags, &key.site))
			return -1;
		key.ts = (uint64_t)stk;
		PG_EACH(r, &key, t, t->allocs++);
		r->t.page_allocs++;
		if (!ev->ptr) {
			r->t.page_failed++;
			PG_EACH(r, &key, t, t->failed++);
			return 0;
		}
		r->t.page_bytes_alloc += ev->bytes_alloc;
		PG_EACH(r, &key, t, t->bytes += ev->bytes_alloc);
		if (ev->bytes_alloc > 2 * r->page_size && rpt_page_pend(r, ev))
			return -1;
	}
	if (!ev->ptr)
		return 0;
	o = obj_claim(&r->pages, ev->ptr);
	if (!o)
		return -1;
	*o = (struct obj){
		.ptr = ev->ptr, .ts = key.ts, .site = key.site, .cache = key.cache,
		.bytes = ev->bytes_alloc, .cpu = ev->cpu, .kind = ev->type,
		.state = sel ? OBJ_LIVE_SEL : OBJ_LIVE,
	};
	return 0;
}

int rpt_page_free(struct rpt *r, const struct kmt_event *ev)
{
	struct obj *o = obj_find(&r->pages, ev->ptr);

	if (!o || o->state == OBJ_DEAD) {
		if (page_sel(r, ev)) {
			r->t.page_frees++;
			r->t.page_untracked_frees++;
			pg_order(r, ev->bytes_alloc)->untracked_frees++;
		}
		return 0;
	}
	if (o->state == OBJ_LIVE_SEL) {
		r->t.page_frees++;
		r->t.page_bytes_freed += o->bytes;
		r->t.page_kmalloc_frees += o->kind == KMT_REC_KMALLOC;
		PG_EACH(r, o, t, (t->frees++, t->bytes_freed += o->bytes));
	}
	o->state = OBJ_DEAD;
	return 0;
}

void rpt_pages_finish(struct rpt *r)
{
	size_t cap, i;

	cap = (size_t)1 << r->pages.bits;
	for (i = 0; i < cap; i++) {
		const struct obj *o = &r->pages.e[i];

		if (o->ptr && o->state == OBJ_LIVE_SEL) {
			r->t.page_outstanding++;
			r->t.page_outstanding_bytes += o->bytes;
			PG_EACH(r, o, t, (t->live++, t->live_bytes += o->bytes));
			if (o->kind == KMT_REC_KMALLOC) {
				r->t.page_kmalloc_live++;
				r->t.page_kmalloc_live_bytes += o->bytes;
			}
		}
	}
	for (i = 0; i < sizeof(r->pg_order) / sizeof(r->pg_order[0]); i++)
		r->pg_order[i].key = i;
	for (i = 0; i <= RPT_MT_NAMED; i++)
		r->pg_mt[i].key = i;
}

const struct rpt_page_tally *rpt_pages(const struct rpt *r, enum rpt_page_by by, size_t *n)
{
	switch (by) {
	case RPT_PG_ORDER:
		*n = sizeof(r->pg_order) / sizeof(r->pg_order[0]);
		return r->pg_order;
	case RPT_PG_MT:
		*n = RPT_MT_NAMED + 1;
		return r->pg_mt;
	case RPT_PG_STACK:
		*n = r->npg_stk;
		return r->pg_stk;
	default:
		*n = r->npg_gfp;
		return r->pg_gfp;
	}
}
