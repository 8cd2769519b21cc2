// SPDX-License-Identifier: GPL-2.0-only
/*
 * rpt_errors.c - the errors the analysis finds (a free of the wrong kind
 * or cache, a double free, a short allocation): when a free is one, how
 * certain a double free is, and their table by kind and call sites.
 */
#include <stdlib.h>

#include "core/report_core_int.h"

static const char *const err_names[RPT_ERR_NKINDS] = {
	[RPT_ERR_KFREE_OF_CACHE_OBJ] = "kfree_of_cache_object",
	[RPT_ERR_CACHE_FREE_OF_KMALLOC] = "cache_free_of_kmalloc_object",
	[RPT_ERR_CACHE_MISMATCH] = "cache_mismatch",
	[RPT_ERR_DOUBLE_FREE] = "double_free",
	[RPT_ERR_SHORT_ALLOC] = "short_allocation",
};

const char *rpt_err_name(enum rpt_err_kind k)
{
	return (unsigned int)k < RPT_ERR_NKINDS ? err_names[k] : "unknown";
}

/* One more of kind at these call sites, counted with those before. 0, or -1 (memory). */
int rpt_error_add(struct rpt *r, enum rpt_err_kind kind, uint64_t alloc_site,
		  uint64_t free_site, bool uncertain)
{
	uint64_t key = alloc_site * 31 + free_site * 0x100000001b3ULL + (uint64_t)kind;
	size_t mask, i;

	if (!r->err_bits || (r->nerrors + 1) * 2 > ((size_t)1 << r->err_bits)) {
		unsigned int nb = r->err_bits ? r->err_bits + 1 : 5;
		struct errkey_slot *ns = calloc((size_t)1 << nb, sizeof(*ns));
		size_t j;

		if (!ns)
			return -1;
		mask = ((size_t)1 << nb) - 1;
		for (j = 0; j < r->nerrors; j++) {
			const struct rpt_error *e = &r->errors[j];
			uint64_t k = e->alloc_site * 31 + e->free_site * 0x100000001b3ULL +
				     (uint64_t)e->kind;

			for (i = hash64(k, nb); ns[i].idx1; i = (i + 1) & mask)
				;
			ns[i].idx1 = (uint32_t)(j + 1);
		}
		free(r->err_slots);
		r->err_slots = ns;
		r->err_bits = nb;
	}
	mask = ((size_t)1 << r->err_bits) - 1;
	for (i = hash64(key, r->err_bits); r->err_slots[i].idx1; i = (i + 1) & mask) {
		struct rpt_error *e = &r->errors[r->err_slots[i].idx1 - 1];

		if (e->kind == kind && e->alloc_site == alloc_site && e->free_site == free_site) {
			e->count++;
			e->uncertain |= uncertain;
			return 0;
		}
	}
	if (rpt_grow((void **)&r->errors, &r->errors_cap, r->nerrors, sizeof(*r->errors)))
		return -1;
	r->errors[r->nerrors] = (struct rpt_error){
		.kind = kind, .alloc_site = alloc_site, .free_site = free_site, .count = 1,
		.uncertain = uncertain, .first = r->pos,
	};
	r->err_slots[i].idx1 = (uint32_t)(++r->nerrors);
	return 0;
}

/*
 * A second free with no allocation in between is a double free for sure
 * only if every path that hands out such objects is in the trace.
 */
bool rpt_double_free_uncertain(const struct rpt *r, const struct obj *o)
{
	if (o->kind == KMT_REC_CACHE_ALLOC)
		return !(r->flags & RPT_CACHE_ALLOCS_SEEN);
	return (r->flags & RPT_KMALLOC_ALLOCS_MISSED) != 0;
}

/*
 * A tracked free whose kind or cache is not its object's (slab_free()
 * found it odd): which error that is, if any.
 */
int rpt_free_errors(struct rpt *r, const struct kmt_event *ev, const struct obj *o)
{
	uint64_t site = r->sites[o->site].addr;

	/*
	 * The frees the module's probes see are legitimate whatever the kind of
	 * the object: kfree_bulk() (a probed KFREE; kfree_rcu()'s batches) takes
	 * objects of any cache, and kfree_rcu()'s sheaves (a probed CACHE_FREE)
	 * name the cache an object lives in, a kmalloc-N one for kmalloc().
	 */
	if ((ev->flags & KMT_F_PROBED) &&
	    (o->kind == KMT_REC_CACHE_ALLOC) != (ev->type == KMT_REC_CACHE_FREE))
		return 0;
	if (o->kind == KMT_REC_CACHE_ALLOC && ev->type == KMT_REC_KFREE) {
		r->t.kfree_cache_objects++;
		if (r->flags & RPT_KFREE_TAKES_CACHE_OBJS)
			return 0;
		return rpt_error_add(r, RPT_ERR_KFREE_OF_CACHE_OBJ, site, ev->call_site, false);
	}
	if (o->kind == KMT_REC_KMALLOC && ev->type == KMT_REC_CACHE_FREE)
		return rpt_error_add(r, RPT_ERR_CACHE_FREE_OF_KMALLOC, site, ev->call_site, false);
	if (o->kind == KMT_REC_CACHE_ALLOC && ev->type == KMT_REC_CACHE_FREE &&
	    r->caches[o->cache].id != ev->cache_id)
		return rpt_error_add(r, RPT_ERR_CACHE_MISMATCH, site, ev->call_site, false);
	return 0;
}

size_t rpt_nerrors(const struct rpt *r)
{
	return r->nerrors;
}

const struct rpt_error *rpt_error(const struct rpt *r, size_t i)
{
	return i < r->nerrors ? &r->errors[i] : NULL;
}

uint64_t rpt_error_count(const struct rpt *r, enum rpt_err_kind k)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < r->nerrors; i++)
		if (r->errors[i].kind == k)
			n += r->errors[i].count;
	return n;
}
