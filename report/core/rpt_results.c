// SPDX-License-Identifier: GPL-2.0-only
/*
 * rpt_results.c - what the analysis answers once fed: the end-of-trace
 * figures (rpt_finish()), the tallies by index or key, and its memory.
 */
#include <string.h>

#include "core/report_core_int.h"

double rpt_frag(uint64_t bytes_req, uint64_t bytes_alloc)
{
	if (!bytes_alloc)
		return 0.0;
	return 100.0 - 100.0 * (double)bytes_req / (double)bytes_alloc;
}

void rpt_totals_sum(struct rpt *r)
{
	struct rpt_totals *t = &r->t;
	size_t i;

	t->allocs = t->failed_allocs = t->bytes_req = t->bytes_alloc = 0;
	t->bytes_freed = t->cross_cpu_frees = t->cross_node_allocs = 0;
	t->frees = t->untracked_frees + t->double_frees;
	for (i = 0; i < r->nsites; i++) {
		const struct rpt_site *s = &r->sites[i];

		t->allocs += s->hits;
		t->failed_allocs += s->failed;
		t->bytes_req += s->bytes_req;
		t->bytes_alloc += s->bytes_alloc;
		t->frees += s->frees;
		t->bytes_freed += s->bytes_freed;
		t->cross_cpu_frees += s->cross_cpu_frees;
		t->cross_node_allocs += s->cross_node;
	}
}

int rpt_finish(struct rpt *r)
{
	size_t cap, i;

	if (r->finished)
		return 0;
	r->finished = true;
	rpt_totals_sum(r);
	cap = (size_t)1 << r->objs.bits;
	for (i = 0; i < cap; i++) {
		const struct obj *o = &r->objs.e[i];
		struct rpt_site *s;
		uint32_t stack;

		if (!o->ptr || o->state != OBJ_LIVE_SEL)
			continue;
		s = &r->sites[o->site];
		if (!s->out_count || o->ts < s->out_oldest_ts)
			s->out_oldest_ts = o->ts;
		s->out_count++;
		s->out_bytes += o->bytes;
		stack = r->objs.stk ? r->objs.stk[i] : KMT_STACK_NONE;
		if (stack != KMT_STACK_NONE) {
			r->stk[stack].out_count++;
			r->stk[stack].out_bytes += o->bytes;
		}
		if ((r->flags & RPT_SAMPLES) && rpt_sample_live(r, o, stack))
			return -1;
		r->t.outstanding++;
		r->t.outstanding_bytes += o->bytes;
		if (o->cache != UINT32_MAX) {
			r->caches[o->cache].live++;
			r->caches[o->cache].live_bytes += o->bytes;
		}
		if ((r->flags & RPT_LIFETIMES) &&
		    lp_live(r->lp, o->site, o->cache, r->t.last_ts > o->ts ? r->t.last_ts - o->ts : 0))
			return -1;
	}
	rpt_pages_finish(r);
	return 0;
}

unsigned int rpt_flags(const struct rpt *r)
{
	return r->flags;
}

const struct rpt_totals *rpt_totals(const struct rpt *r)
{
	/* Once finished the sums are final; before, summed afresh. r is never const. */
	if (!r->finished)
		rpt_totals_sum((struct rpt *)r);
	return &r->t;
}

size_t rpt_nsites(const struct rpt *r)
{
	return r->nsites;
}

const struct rpt_site *rpt_site(const struct rpt *r, size_t i)
{
	return i < r->nsites ? &r->sites[i] : NULL;
}

const struct rpt_site *rpt_site_find(const struct rpt *r, uint64_t addr)
{
	uint32_t i;

	return map_get(&r->site_map, addr, &i) ? &r->sites[i] : NULL;
}

size_t rpt_ncaches(const struct rpt *r)
{
	return r->ncaches;
}

const struct rpt_cache *rpt_cache(const struct rpt *r, size_t i)
{
	return i < r->ncaches ? &r->caches[i] : NULL;
}

const struct rpt_cache *rpt_cache_find(const struct rpt *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->ncaches; i++)
		if (strcmp(r->caches[i].name, name) == 0)
			return &r->caches[i];
	return NULL;
}

size_t rpt_nptrs(const struct rpt *r)
{
	return r->nptrs;
}

const struct rpt_ptr *rpt_ptr(const struct rpt *r, size_t i)
{
	return i < r->nptrs ? &r->ptrs[i] : NULL;
}

uint64_t rpt_lost_on_cpu(const struct rpt *r, unsigned int cpu)
{
	return cpu < r->lost_ncpus ? r->lost_cpu[cpu] : 0;
}

unsigned int rpt_lost_ncpus(const struct rpt *r)
{
	return r->lost_ncpus;
}

const struct rpt_lp *rpt_lp(const struct rpt *r)
{
	return r->lp;
}

bool rpt_has_stacks(const struct rpt *r)
{
	return r->t.stack_slots || r->t.stack_allocs || r->t.no_stack_allocs ||
	       r->t.unknown_stack_allocs || r->t.other_no_stack || r->t.other_unknown_stack;
}

bool rpt_has_free_stacks(const struct rpt *r)
{
	return r->t.stack_frees || r->t.no_stack_frees || r->t.unknown_stack_frees;
}

const struct kmt_stacks *rpt_stacks(const struct rpt *r)
{
	return r->stacks;
}

size_t rpt_nstacks(const struct rpt *r)
{
	return kmt_stacks_count(r->stacks);
}

const struct rpt_stack *rpt_stack(const struct rpt *r, size_t i)
{
	static const struct rpt_stack none;

	if (i >= kmt_stacks_count(r->stacks))
		return NULL;
	/* A stack no selected allocation carried has no tallies yet. */
	return i < r->stk_cap ? &r->stk[i] : &none;
}

size_t rpt_memory(const struct rpt *r)
{
	return sizeof(*r) + rpt_obj_memory(&r->objs) + rpt_obj_memory(&r->pages) +
	       r->sites_cap * sizeof(*r->sites) + rpt_map_memory(&r->site_map) +
	       r->caches_cap * sizeof(*r->caches) + rpt_map_memory(&r->cache_map) +
	       rpt_map_memory(&r->kmalloc_map) +
	       r->errors_cap * sizeof(*r->errors) +
	       (r->err_bits ? ((size_t)1 << r->err_bits) * sizeof(*r->err_slots) : 0) +
	       r->ptrs_cap * sizeof(*r->ptrs) + rpt_map_memory(&r->ptr_map) +
	       r->lost_ncpus * sizeof(*r->lost_cpu) + kmt_stacks_memory(r->stacks) +
	       (r->lp ? lp_memory(r->lp) : 0) + r->pg_gfp_cap * sizeof(*r->pg_gfp) +
	       r->pg_stk_cap * sizeof(*r->pg_stk) +
	       rpt_map_memory(&r->pg_gfp_map) + r->npend_cpus * sizeof(*r->pend) +
	       r->stk_cap * sizeof(*r->stk) + rpt_samples_memory(r);
}
