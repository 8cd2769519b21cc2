// SPDX-License-Identifier: GPL-2.0-only
/*
 * rpt_samples.c - the selected slab allocations by call site, stack,
 * cache and CPU at once (RPT_SAMPLES): a profile's samples, each labelled
 * with its cache and CPU, count as the per site and per stack tallies do.
 * Only a report that writes a profile pays for the three lookups.
 */
#include <stdlib.h>
#include <string.h>

#include "core/report_core_int.h"

/*
 * The id of key in m, given the next free one (*next) the first time.
 * UINT32_MAX: out of memory.
 */
static uint32_t id_of(struct u64map *m, uint32_t *next, uint64_t key)
{
	uint32_t id;

	if (map_get(m, key, &id))
		return id;
	if (rpt_map_put(m, key, *next))
		return UINT32_MAX;
	return (*next)++;
}

/*
 * The sample of (site, stack, cache, cpu), made the first time; its index
 * at *idx. 0, or -1 (memory). Three 64-bit keys, as the maps take them:
 * (site, stack) and (cache, cpu) each name an id, and the two ids the sample.
 */
static int sample_get(struct rpt *r, uint32_t site, uint32_t stack, uint32_t cache,
		      uint16_t cpu, uint32_t *idx)
{
	uint32_t what = id_of(&r->smp_what, &r->smp_nwhat, (uint64_t)site << 32 | stack);
	uint32_t where = id_of(&r->smp_where, &r->smp_nwhere, (uint64_t)cache << 16 | cpu);
	uint64_t key;

	if (what == UINT32_MAX || where == UINT32_MAX)
		return -1;
	key = (uint64_t)what << 32 | where;
	if (map_get(&r->smp_map, key, idx))
		return 0;
	if (rpt_grow((void **)&r->smp, &r->smp_cap, r->nsmp + 1, sizeof(*r->smp)) ||
	    rpt_map_put(&r->smp_map, key, (uint32_t)r->nsmp))
		return -1;
	r->smp[r->nsmp] = (struct rpt_sample){ .site = site, .stack = stack, .cache = cache,
					       .cpu = cpu };
	*idx = (uint32_t)r->nsmp++;
	return 0;
}

/*
 * A selected slab allocation: counted in its sample, whose index stays in
 * last_sample for a large kmalloc's second event. The stack is the one
 * stack_alloc() keeps with the object. 0, or -1 (memory).
 */
int rpt_sample_alloc(struct rpt *r, const struct kmt_event *ev, uint32_t site, uint32_t cache)
{
	uint32_t stack = KMT_STACK_NONE, i;
	struct rpt_sample *s;

	if (ev->stack_id && !(ev->flags & KMT_F_NO_STACK))
		stack = kmt_stacks_lookup(r->stacks, ev->cpu, ev->stack_id);
	if (sample_get(r, site, stack, cache, ev->cpu, &i))
		return -1;
	s = &r->smp[i];
	s->hits++;
	if (!ev->ptr) {
		s->failed++;
	} else {
		s->bytes_req += ev->bytes_req;
		s->bytes_alloc += ev->bytes_alloc;
	}
	r->last_sample = i;
	return 0;
}

int rpt_sample_sum(struct rpt *r, const struct kmt_sum *sum, uint32_t site, uint32_t stack,
		   uint32_t cache)
{
	struct rpt_sample *s;
	uint32_t i;

	if (sample_get(r, site, stack, cache, sum->cpu, &i))
		return -1;
	s = &r->smp[i];
	s->hits += sum->count;
	if (sum->sum_kind == KMT_SUM_FAILED) {
		s->failed += sum->count;
	} else {
		s->bytes_req += sum->bytes_req;
		s->bytes_alloc += sum->bytes_alloc;
	}
	return 0;
}

/* A large kmalloc's first event, taken back (rpt_large.c): bytes_alloc NULL for a failed one. */
void rpt_sample_take_back(struct rpt *r, uint32_t sample, uint64_t bytes_req,
			  const uint32_t *bytes_alloc)
{
	struct rpt_sample *s = &r->smp[sample];

	s->hits--;
	if (!bytes_alloc) {
		s->failed--;
		return;
	}
	s->bytes_req -= bytes_req;
	s->bytes_alloc -= *bytes_alloc;
}

/* An object live at the end (rpt_finish()), with the stack kept with it. 0, or -1. */
int rpt_sample_live(struct rpt *r, const struct obj *o, uint32_t stack)
{
	uint32_t i;

	if (sample_get(r, o->site, stack, o->cache, o->cpu, &i))
		return -1;
	r->smp[i].out_count++;
	r->smp[i].out_bytes += o->bytes;
	return 0;
}

size_t rpt_nsamples(const struct rpt *r)
{
	return r->nsmp;
}

const struct rpt_sample *rpt_sample(const struct rpt *r, size_t i)
{
	return i < r->nsmp ? &r->smp[i] : NULL;
}

void rpt_samples_free(struct rpt *r)
{
	free(r->smp);
	rpt_map_free(&r->smp_what);
	rpt_map_free(&r->smp_where);
	rpt_map_free(&r->smp_map);
}

size_t rpt_samples_memory(const struct rpt *r)
{
	return r->smp_cap * sizeof(*r->smp) + rpt_map_memory(&r->smp_what) +
	       rpt_map_memory(&r->smp_where) + rpt_map_memory(&r->smp_map);
}
