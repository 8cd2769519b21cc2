// SPDX-License-Identifier: GPL-2.0-only
/*
 * report_core.c - the analysis behind kmemtrace-report: records fed in
 * time order folded into per call site, per cache, per object and stack
 * tallies. Everything a common event goes through is here or inline in
 * report_core_int.h, so that each record costs one or two table probes
 * and no call into another file; what is rarer lives in the other
 * core/rpt_*.c files.
 */
#include <stdlib.h>
#include <string.h>

#include "core/report_core_int.h"

struct rpt *rpt_new(const struct rpt_filter *f, unsigned int flags)
{
	struct rpt *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	if (f)
		r->f = *f;
	r->flags = flags;
	r->filtered = r->f.cpus || r->f.has_pid || r->f.min_size || r->f.cache_name;
	r->stacks = kmt_stacks_new();
	rpt_set_page_size(r, 4096);
	if (flags & (RPT_LIFETIMES | RPT_TIMELINE)) {
		r->lp = lp_new(flags & RPT_LIFETIMES, flags & RPT_TIMELINE);
		if (!r->lp) {
			rpt_free(r);
			return NULL;
		}
	}
	if (!r->stacks || rpt_obj_init(&r->objs) || rpt_obj_init(&r->pages)) {
		rpt_free(r);
		return NULL;
	}
	return r;
}

void rpt_free(struct rpt *r)
{
	if (!r)
		return;
	rpt_obj_fini(&r->objs);
	rpt_obj_fini(&r->pages);
	free(r->sites);
	rpt_map_free(&r->site_map);
	free(r->caches);
	rpt_map_free(&r->cache_map);
	rpt_map_free(&r->kmalloc_map);
	free(r->errors);
	free(r->err_slots);
	free(r->ptrs);
	rpt_map_free(&r->ptr_map);
	free(r->lost_cpu);
	kmt_stacks_free(r->stacks);
	free(r->stk);
	lp_free(r->lp);
	rpt_samples_free(r);
	free(r->pg_gfp);
	free(r->pg_stk);
	rpt_map_free(&r->pg_gfp_map);
	free(r->pend);
	free(r);
}

/* The rarer parts of a selected allocation, out of the common path. */
static int alloc_extra(struct rpt *r, const struct kmt_event *ev)
{
	if (ev->bytes_alloc < ev->bytes_req &&
	    rpt_error_add(r, RPT_ERR_SHORT_ALLOC, ev->call_site, 0, false))
		return -1;
	if (r->flags & RPT_PTR_VIEW) {
		struct rpt_ptr *p = rpt_ptr_get(r, ev->ptr);

		if (!p)
			return -1;
		p->site = ev->call_site;
		p->hits++;
		p->bytes_req += ev->bytes_req;
		p->bytes_alloc += ev->bytes_alloc;
	}
	return 0;
}

__attribute__((noinline)) int rpt_stk_grow(struct rpt *r, size_t i)
{
	size_t ncap = r->stk_cap ? r->stk_cap : 64;
	struct rpt_stack *p;

	while (ncap <= i)
		ncap *= 2;
	p = realloc(r->stk, ncap * sizeof(*p));
	if (!p)
		return -1;
	memset(p + r->stk_cap, 0, (ncap - r->stk_cap) * sizeof(*p));
	r->stk = p;
	r->stk_cap = ncap;
	return 0;
}

/*
 * The tallies of the stack ev carries, grown to hold it, at *st and its
 * index at *idx; *st NULL when it has none, counted in *no_stack when
 * marked so (whatever id it names: kmemtrace_check refuses that), in
 * *unknown when it names one the trace does not hold. 0, or -1 (memory).
 */
static inline int stk_of(struct rpt *r, const struct kmt_event *ev, uint64_t *no_stack,
			 uint64_t *unknown, struct rpt_stack **st, uint32_t *idx)
{
	uint32_t i;

	*st = NULL;
	if (ev->flags & KMT_F_NO_STACK) {
		(*no_stack)++;
		return 0;
	}
	i = kmt_stacks_lookup(r->stacks, ev->cpu, ev->stack_id);
	if (i == KMT_STACK_NONE) {
		(*unknown)++;
		return 0;
	}
	if (__builtin_expect(i >= r->stk_cap, 0) && rpt_stk_grow(r, i))
		return -1;
	*st = &r->stk[i];
	*idx = i;
	return 0;
}

/*
 * The stack of a free the report counts (stack_frees=1): o the object it
 * frees, NULL when the trace holds no live allocation of it. 0, or -1.
 */
static int stack_free(struct rpt *r, const struct kmt_event *ev, const struct obj *o)
{
	struct rpt_stack *st;
	uint32_t i;

	if (!(ev->stack_id | (ev->flags & KMT_F_NO_STACK)))
		return 0;
	if (stk_of(r, ev, &r->t.no_stack_frees, &r->t.unknown_stack_frees, &st, &i))
		return -1;
	if (!st)
		return 0;
	r->t.stack_frees++;
	st->free_hits++;
	if (o)
		st->free_bytes += o->bytes;
	else
		st->free_no_alloc++;
	return 0;
}

/*
 * The stack of a selected allocation: tallied, and kept with its object
 * (at *o's slot) for its free and the end. 0, or -1 (memory).
 */
static inline int stack_alloc(struct rpt *r, const struct kmt_event *ev, const struct obj *o)
{
	uint32_t i = KMT_STACK_NONE;
	struct rpt_stack *st;

	if (stk_of(r, ev, &r->t.no_stack_allocs, &r->t.unknown_stack_allocs, &st, &i))
		return -1;
	if (!st)
		return 0;
	r->t.stack_allocs++;
	st->hits++;
	if (!ev->ptr) {
		st->failed++;
		return 0;
	}
	st->bytes_req += ev->bytes_req;
	st->bytes_alloc += ev->bytes_alloc;
	if (!r->objs.stk && rpt_obj_stk_init(&r->objs))
		return -1;
	r->objs.stk[o - r->objs.e] = i;
	return 0;
}

/* ---- lifetimes and timelines (report_life.h) --------------------------------- */

static int alloc_lp(struct rpt *r, uint32_t site, const struct kmt_event *ev)
{
	if (!(r->flags & RPT_TIMELINE))
		return 0;
	return lp_tl_event(r->lp, site, false, since_start(r, ev->timestamp));
}

static int free_lp(struct rpt *r, const struct obj *o, const struct kmt_event *ev)
{
	/* Another CPU's clock may run a little behind the allocating one's. */
	uint64_t ns = ev->timestamp > o->ts ? ev->timestamp - o->ts : 0;

	if ((r->flags & RPT_LIFETIMES) && lp_freed(r->lp, o->site, o->cache, ns))
		return -1;
	if (r->flags & RPT_TIMELINE)
		return lp_tl_event(r->lp, o->site, true, since_start(r, ev->timestamp));
	return 0;
}

static inline __attribute__((always_inline)) int slab_alloc(struct rpt *r,
							    const struct kmt_event *ev)
{
	struct u64map *const cache_maps[2] = { &r->kmalloc_map, &r->cache_map };
	uint32_t site_idx, cache_idx;
	struct rpt_cache *c = NULL;
	struct rpt_site *s;
	struct obj *o;
	bool sel = true, is_cache;
	uint64_t key;

	/* The second event of a large kmalloc whose first an interval showed: not counted. */
	if (__builtin_expect(r->npend != 0, 0) && rpt_page_pair(r, ev))
		return 0;
	/*
	 * kmalloc() and kmem_cache_alloc() come in no order: one lookup for
	 * both, in the map of their kind, rather than a branch that would be
	 * mispredicted half the time.
	 */
	is_cache = ev->type == KMT_REC_CACHE_ALLOC;
	/* Selected by arithmetic: a conditional would compile to that branch. */
	key = (ev->cache_id & -(uint64_t)is_cache) | (ev->bytes_alloc & ((uint64_t)is_cache - 1));
	if (__builtin_expect(map_get(cache_maps[is_cache], key, &cache_idx), 1)) {
		c = &r->caches[cache_idx];
	} else if (is_cache) {
		c = rpt_cache_new_undescribed(r, key);
		if (!c)
			return -1;
		cache_idx = (uint32_t)(c - r->caches);
	} else if (key) {
		c = rpt_kmalloc_cache_new(r, (uint32_t)key);
		if (!c)
			return -1;
		cache_idx = (uint32_t)(c - r->caches);
	} else {
		cache_idx = UINT32_MAX;
	}
	/* Undescribed (its CACHE_DESC came before the trace): sizes from its events. */
	if (__builtin_expect(c && !c->size && !c->described, 0)) {
		c->object_size = ev->bytes_req;
		c->size = ev->bytes_alloc;
		c->size_pos = r->pos;
	}
	if (r->filtered)
		sel = cpu_pid_ok(r, ev) && ev->bytes_req >= r->f.min_size &&
		      (!r->f.cache_name || (c && c->selected));

	s = site_get(r, ev->call_site, &site_idx);
	if (!s)
		return -1;

	if (sel) {
		s->hits++;
		s->kinds |= 1u << ev->type;
		if (__builtin_expect(r->flags & RPT_SAMPLES, 0) &&
		    rpt_sample_alloc(r, ev, site_idx, cache_idx))
			return -1;
		if (__builtin_expect(r->lp != NULL, 0) && alloc_lp(r, site_idx, ev))
			return -1;
		if (c)
			c->allocs++;
		r->t.probed_allocs += (ev->flags & KMT_F_PROBED) != 0;
		if (__builtin_expect(ev->flags & KMT_F_CLAMPED, 0))
			r->t.clamped_allocs++;
		/* One branch, rarely taken: node is KMT_NODE_ANY at random. */
		if ((ev->node != KMT_NODE_ANY) & (ev->node != ev->cpu_node))
			s->cross_node++;
		if (__builtin_expect(!ev->ptr, 0)) {
			s->failed++;
			if (c)
				c->failed++;
			if ((ev->stack_id | (ev->flags & KMT_F_NO_STACK)) &&
			    stack_alloc(r, ev, NULL))
				return -1;
			/*
			 * A large kmalloc: the CPU's next allocation may be its
			 * second event, unless it is one.
			 */
			if (ev->bytes_req > 2 * r->page_size && ev->type == KMT_REC_KMALLOC &&
			    !r->fail_second)
				return rpt_fail_watch(r, ev, site_idx, cache_idx);
			r->fail_second = false;
			return 0;
		}
		s->bytes_req += ev->bytes_req;
		s->bytes_alloc += ev->bytes_alloc;
		if (c) {
			c->bytes_req += ev->bytes_req;
			c->bytes_alloc += ev->bytes_alloc;
		}
		if (__builtin_expect(ev->bytes_alloc < ev->bytes_req || (r->flags & RPT_PTR_VIEW),
				     0) && alloc_extra(r, ev))
			return -1;
	} else if (!ev->ptr) {
		return 0;
	}

	o = obj_claim(&r->objs, ev->ptr);
	if (!o)
		return -1;
	/* The address came back while live: its free was not traced. */
	if (o->ptr == ev->ptr && o->state == OBJ_LIVE_SEL)
		r->t.implicit_frees++;
	*o = (struct obj){
		.ptr = ev->ptr, .ts = ev->timestamp, .site = site_idx, .cache = cache_idx,
		.bytes = ev->bytes_alloc, .cpu = ev->cpu, .kind = ev->type,
		.state = sel ? OBJ_LIVE_SEL : OBJ_LIVE,
	};
	if (r->objs.stk)
		r->objs.stk[o - r->objs.e] = KMT_STACK_NONE;
	/* A large kmalloc: the CPU's next allocation may be its second event (kmalloc_dup()). */
	if (__builtin_expect(ev->bytes_req > 2 * r->page_size, 0) && sel &&
	    ev->type == KMT_REC_KMALLOC && rpt_dup_watch(r, ev))
		return -1;
	if ((ev->stack_id | (ev->flags & KMT_F_NO_STACK)) && sel)
		return stack_alloc(r, ev, o);
	return 0;
}

/* A free of an address with no live object: a double free, or untracked. */
static int free_unknown(struct rpt *r, const struct kmt_event *ev, const struct obj *o)
{
	struct rpt_cache *c = NULL;

	if (o && !obj_reusable(&r->objs, o)) {
		/* An object not selected: neither its allocation nor its frees count. */
		if (o->state == OBJ_FREED_UNSEL)
			return 0;
		/* Freed before within the trace, not allocated since. */
		r->t.double_frees++;
		r->t.probed_frees += (ev->flags & KMT_F_PROBED) != 0;
		if (stack_free(r, ev, NULL))
			return -1;
		return rpt_error_add(r, RPT_ERR_DOUBLE_FREE, r->sites[o->site].addr, ev->call_site,
				 rpt_double_free_uncertain(r, o));
	}
	/* Allocated before the trace (or its allocation was lost). */
	if (!cpu_pid_ok(r, ev) || r->f.min_size)
		return 0;
	if (ev->type == KMT_REC_CACHE_FREE) {
		c = rpt_cache_get(r, ev->cache_id);
		if (!c)
			return -1;
	}
	if (r->f.cache_name && !(c && c->selected))
		return 0;
	r->t.untracked_frees++;
	r->t.probed_frees += (ev->flags & KMT_F_PROBED) != 0;
	if (c)
		c->untracked_frees++;
	return stack_free(r, ev, NULL);
}

/* The rarer parts of a tracked free, out of the common path; odd: see slab_free(). */
static int free_extra(struct rpt *r, const struct kmt_event *ev, const struct obj *o, bool odd)
{
	if (r->flags & RPT_PTR_VIEW) {
		struct rpt_ptr *p = rpt_ptr_get(r, ev->ptr);

		if (!p)
			return -1;
		p->frees++;
		if (o->cpu != ev->cpu)
			p->cross_cpu_frees++;
	}
	/* Of a kind and cache that match, a free is no error. */
	return odd ? rpt_free_errors(r, ev, o) : 0;
}

static inline __attribute__((always_inline)) int slab_free(struct rpt *r,
							   const struct kmt_event *ev)
{
	struct obj *o = obj_find(&r->objs, ev->ptr);
	struct rpt_site *s;
	bool odd;

	if (__builtin_expect(!o || o->state != OBJ_LIVE_SEL, 0)) {
		if (o && o->state == OBJ_LIVE) {
			o->state = OBJ_FREED_UNSEL;
			o->ts = ++r->objs.frees;
			return 0;
		}
		/* Whether o is remembered is decided before this free is numbered. */
		if (free_unknown(r, ev, o))
			return -1;
		r->objs.frees++;
		return 0;
	}
	s = &r->sites[o->site];
	s->frees++;
	s->bytes_freed += o->bytes;
	if (__builtin_expect(r->lp != NULL, 0) && free_lp(r, o, ev))
		return -1;
	if (r->objs.stk && r->objs.stk[o - r->objs.e] != KMT_STACK_NONE) {
		struct rpt_stack *st = &r->stk[r->objs.stk[o - r->objs.e]];

		st->frees++;
		st->bytes_freed += o->bytes;
	}
	if (__builtin_expect((ev->stack_id | (ev->flags & KMT_F_NO_STACK)) != 0, 0) &&
	    stack_free(r, ev, o))
		return -1;
	r->t.probed_frees += (ev->flags & KMT_F_PROBED) != 0;
	/* Without a branch: which CPU frees is as good as random. */
	s->cross_cpu_frees += o->cpu != ev->cpu;
	/* A kmalloc()ed object goes to kfree(), a cache's to kmem_cache_free() of its cache. */
	odd = (o->kind == KMT_REC_CACHE_ALLOC) != (ev->type == KMT_REC_CACHE_FREE);
	if (o->cache != UINT32_MAX) {
		struct rpt_cache *c = &r->caches[o->cache];

		c->frees++;
		c->bytes_freed += o->bytes;
		odd |= (ev->type == KMT_REC_CACHE_FREE) & (c->id != ev->cache_id);
	}
	if (__builtin_expect(odd || (r->flags & RPT_PTR_VIEW), 0) && free_extra(r, ev, o, odd))
		return -1;
	o->state = OBJ_FREED;
	o->ts = ++r->objs.frees;
	return 0;
}

static int lost(struct rpt *r, const struct kmt_lost *l)
{
	if (r->f.cpus && (l->cpu >= r->f.ncpus || !r->f.cpus[l->cpu]))
		return 0;
	if (l->cpu >= r->lost_ncpus) {
		unsigned int n = l->cpu + 1u;
		uint64_t *p = realloc(r->lost_cpu, n * sizeof(*p));

		if (!p)
			return -1;
		memset(p + r->lost_ncpus, 0, (n - r->lost_ncpus) * sizeof(*p));
		r->lost_cpu = p;
		r->lost_ncpus = n;
	}
	r->lost_cpu[l->cpu] += l->count;
	r->t.lost += l->count;
	r->t.lost_markers++;
	return 0;
}

/* The cache a SUM record's allocations count in, *idx UINT32_MAX for none. 0, or -1. */
static int sum_cache(struct rpt *r, const struct kmt_sum *s, struct rpt_cache **c,
		     uint32_t *idx)
{
	uint64_t each = s->bytes_alloc / s->count;

	*c = NULL;
	*idx = UINT32_MAX;
	if (s->alloc_type == KMT_REC_CACHE_ALLOC) {
		if (!map_get(&r->cache_map, s->cache_id, idx)) {
			*c = rpt_cache_new_undescribed(r, s->cache_id);
			if (!*c)
				return -1;
			*idx = (uint32_t)(*c - r->caches);
		}
		*c = &r->caches[*idx];
		return 0;
	}
	/*
	 * A kmalloc's pseudo-cache is its bytes_alloc, which a SUM's key
	 * does not hold: one size for all its allocations, or none.
	 */
	if (!each || each > UINT32_MAX || each * s->count != s->bytes_alloc) {
		if (s->bytes_alloc)
			r->t.sum_no_cache += s->count;
		return 0;
	}
	if (!map_get(&r->kmalloc_map, each, idx)) {
		*c = rpt_kmalloc_cache_new(r, (uint32_t)each);
		if (!*c)
			return -1;
		*idx = (uint32_t)(*c - r->caches);
	}
	*c = &r->caches[*idx];
	return 0;
}

/*
 * A checkpoint's SUM record (1.3): count allocations of one key, each
 * freed by its matching free or failed, before the cut. It adds to the
 * tallies its events would have, as slab_alloc() and slab_free() count
 * them; lifetimes, timelines and per-address tallies need each event,
 * and are of the kept window only. 0, or -1 (memory).
 */
static int sum_feed(struct rpt *r, const struct kmt_sum *sum)
{
	/* stk_of() reads an event's CPU, flags and stack id: the SUM's key has them. */
	struct kmt_event ev = { .cpu = sum->cpu,
				.flags = (uint8_t)(sum->flags & ~KMT_SUM_F_FREE_PROBED),
				.stack_id = sum->stack_id };
	bool failed = sum->sum_kind == KMT_SUM_FAILED;
	uint32_t site_idx, cache_idx, stk_idx = KMT_STACK_NONE;
	uint64_t n = sum->count;
	struct rpt_stack *st = NULL;
	struct rpt_cache *c;
	struct rpt_site *s;

	r->t.sums++;
	r->t.sum_allocs += n;
	if (r->f.cpus && (sum->cpu >= r->f.ncpus || !r->f.cpus[sum->cpu]))
		return 0;
	/* Neither the pid nor each size is in the key: said, never guessed. */
	if (r->f.has_pid || r->f.min_size) {
		r->t.sum_unfiltered += n;
		return 0;
	}
	if (sum_cache(r, sum, &c, &cache_idx))
		return -1;
	if (r->f.cache_name && !(c && c->selected))
		return 0;
	s = site_get(r, sum->call_site, &site_idx);
	if (!s)
		return -1;
	if ((sum->stack_id | (sum->flags & KMT_F_NO_STACK)) &&
	    stk_of(r, &ev, &r->t.no_stack_allocs, &r->t.unknown_stack_allocs, &st, &stk_idx))
		return -1;
	/* stk_of() counts one event: the others of the key too. */
	if (!st && (sum->flags & KMT_F_NO_STACK))
		r->t.no_stack_allocs += n - 1;
	else if (!st && sum->stack_id)
		r->t.unknown_stack_allocs += n - 1;
	if ((r->flags & RPT_SAMPLES) && rpt_sample_sum(r, sum, site_idx, stk_idx, cache_idx))
		return -1;
	s->hits += n;
	s->kinds |= 1u << sum->alloc_type;
	s->cross_node += sum->cross_node;
	if (sum->flags & KMT_F_PROBED)
		r->t.probed_allocs += n;
	if (sum->flags & KMT_F_CLAMPED)
		r->t.clamped_allocs += n;
	if (c)
		c->allocs += n;
	if (st) {
		r->t.stack_allocs += n;
		st->hits += n;
	}
	if (failed) {
		s->failed += n;
		if (c)
			c->failed += n;
		if (st)
			st->failed += n;
		return 0;
	}
	s->bytes_req += sum->bytes_req;
	s->bytes_alloc += sum->bytes_alloc;
	s->frees += n;
	s->bytes_freed += sum->bytes_alloc;
	s->cross_cpu_frees += sum->cross_cpu;
	if (sum->flags & KMT_SUM_F_FREE_PROBED)
		r->t.probed_frees += n;
	if (c) {
		c->bytes_req += sum->bytes_req;
		c->bytes_alloc += sum->bytes_alloc;
		c->frees += n;
		c->bytes_freed += sum->bytes_alloc;
	}
	if (st) {
		st->bytes_req += sum->bytes_req;
		st->bytes_alloc += sum->bytes_alloc;
		st->frees += n;
		st->bytes_freed += sum->bytes_alloc;
	}
	return 0;
}

/* A free or page event that asked for a stack and has none. */
static void other_stack(struct rpt *r, const struct kmt_event *ev)
{
	if (!cpu_pid_ok(r, ev))
		return;
	if (ev->flags & KMT_F_NO_STACK)
		r->t.other_no_stack++;
	else if (kmt_stacks_lookup(r->stacks, ev->cpu, ev->stack_id) == KMT_STACK_NONE)
		r->t.other_unknown_stack++;
}

/* The first record sets the trace's start and, with it, the absolute time window. */
static void feed_start(struct rpt *r, uint64_t ts)
{
	r->t.seen_any = true;
	r->t.first_ts = ts;
	r->abs_start = ts + r->f.t_start;
	r->abs_end = r->f.t_end > UINT64_MAX - ts ? UINT64_MAX : ts + r->f.t_end;
	if (r->abs_start < ts)
		r->abs_start = UINT64_MAX;
}

/*
 * The shard of an address among n: its own hash, not hash64()'s top bits,
 * which index each shard's object table (with those, each shard's objects
 * would fill a fraction of its table and probe long runs).
 */
static inline unsigned int shard_of(uint64_t ptr, unsigned int n)
{
	uint64_t h = (ptr >> 3) * 0xd6e8feb86659fd93ULL;

	h ^= h >> 32;
	return (unsigned int)(((h & 0xffffffffu) * n) >> 32);
}

/* Whether a record at ts is outside the time window (--from, --to): as if not traced. */
static inline bool outside_window(const struct rpt *r, uint64_t ts)
{
	return r->f.has_time && (ts < r->abs_start || ts > r->abs_end);
}

/* Whether an event at ts is in the time window; in it, the trace's last time so far. */
static inline bool in_window(struct rpt *r, uint64_t ts)
{
	if (outside_window(r, ts))
		return false;
	if (ts > r->t.last_ts)
		r->t.last_ts = ts;
	return true;
}

/*
 * A record of feed_rec() other than a slab event, for shard k: page
 * events, cache names, stacks, LOST and SUM records.
 */
static __attribute__((noinline)) int feed_rare(struct rpt *r, const union kmt_rec *rec,
					       unsigned int k)
{
	uint64_t ts = rec->c.timestamp;
	unsigned int type = rec->c.type;

	/*
	 * Cache names hold whatever the window, so that events in it are
	 * named; everything else outside the window is as if not traced.
	 */
	if (type == KMT_REC_CACHE_DESC)
		return rpt_cache_desc(r, &rec->cache);
	/* Stacks too: an event in the window may name a stack written before it. */
	if (type == KMT_REC_STACK) {
		r->t.stack_slots++;
		return kmt_stacks_feed(r->stacks, &rec->stack);
	}
	/* A sum's time (the cut) is no event's: it is not where the trace ends. */
	if (type == KMT_REC_SUM)
		return k == 0 && !outside_window(r, ts) ? sum_feed(r, &rec->sum) : 0;
	if (!in_window(r, ts))
		return 0;
	if (k != 0) {
		/* A page allocation is the CPU's next allocation too. */
		if (type == KMT_REC_PAGE_ALLOC && __builtin_expect(r->npend != 0, 0))
			(void)rpt_page_pair(r, &rec->ev);
		return 0;
	}
	if (type <= KMT_REC_PAGE_FREE && (rec->ev.stack_id | (rec->ev.flags & KMT_F_NO_STACK)))
		other_stack(r, &rec->ev);
	switch (type) {
	case KMT_REC_PAGE_ALLOC:
		return rpt_page_alloc(r, &rec->ev);
	case KMT_REC_PAGE_FREE:
		return rpt_page_free(r, &rec->ev);
	case KMT_REC_LOST:
		return lost(r, &rec->lost);
	default:
		return 0;
	}
}

/*
 * One record, after feed_start() and counted in t.records by the caller,
 * for shard k of n (rpt_shards.c; one analysis is shard 0 of 1, for which
 * every test of the shard folds away): every shard scans every
 * record, so that what all of them keep alike is what one analysis
 * keeps: cache descriptions and stacks, the trace's start and end, the
 * number of frees (the window of remembered frees). A slab event is the
 * shard's of its address; page events, LOST and SUM records are shard
 * 0's. Another shard's allocation, or a page allocation, still ends
 * what a CPU's last large kmalloc waits for (rpt_page_pair(): it cannot
 * be that kmalloc's second event, which has the same address), and a
 * slab allocation of another shard may be the kmalloc shard 0's last
 * page allocation of that CPU waits for.
 */
static inline __attribute__((always_inline)) int feed_rec(struct rpt *r, const union kmt_rec *rec,
							  unsigned int k, unsigned int n)
{
	unsigned int type = rec->c.type;

	/*
	 * Slab events first, as they are nearly every record: the rarer
	 * types, each asked for in turn, would cost each event a test.
	 */
	if (type - KMT_REC_KMALLOC <= (unsigned int)(KMT_REC_CACHE_ALLOC - KMT_REC_KMALLOC)) {
		if (!in_window(r, rec->c.timestamp))
			return 0;
		if (shard_of(rec->ev.ptr, n) == k)
			return slab_alloc(r, &rec->ev);
		if (__builtin_expect(r->npend != 0, 0))
			(void)rpt_page_pair(r, &rec->ev);
		return 0;
	}
	if (__builtin_expect(type - KMT_REC_KFREE > (unsigned int)(KMT_REC_CACHE_FREE - KMT_REC_KFREE),
			     0))
		return feed_rare(r, rec, k);
	if (!in_window(r, rec->c.timestamp))
		return 0;
	/* A slab free (KFREE, CACHE_FREE). */
	if (shard_of(rec->ev.ptr, n) != k) {
		r->objs.frees += rec->ev.ptr != 0;
		return 0;
	}
	if (__builtin_expect((rec->ev.stack_id | (rec->ev.flags & KMT_F_NO_STACK)) != 0, 0))
		other_stack(r, &rec->ev);
	return rec->ev.ptr ? slab_free(r, &rec->ev) : 0;
}

/* One record for the one analysis (shard 0 of 1). */
static inline __attribute__((always_inline)) int feed_one(struct rpt *r,
							  const union kmt_rec *rec)
{
	return feed_rec(r, rec, 0, 1);
}

int rpt_feed(struct rpt *r, const union kmt_rec *rec)
{
	if (!r->t.seen_any)
		feed_start(r, rec->c.timestamp);
	r->t.records++;
	return feed_one(r, rec);
}

/*
 * Each allocation and free looks up its address in the object table, a
 * random slot of a table far bigger than the caches; waiting for each
 * slot, one event after the other, was over half of the analysis' time.
 * So the slot of the record PREFETCH_FAR records on is asked for ahead
 * (only its home slot: where probing goes on, or for records of other
 * types, a useless load, never a wrong result), and with --alloc its
 * per-address map slot. PREFETCH_NEAR records on, those slots are in: what
 * they point to is asked for, with --alloc the address's tallies, with
 * --lifetimes the histogram bucket a free will count in and the line of
 * the histogram's count, sum and maximum. (Asking ahead for the call
 * sites' map slots and counters, in the L2 cache already, was tried: it
 * only added time.)
 */
#define PREFETCH_FAR	16
#define PREFETCH_NEAR	8

static inline void prefetch_far(const struct rpt *r, const union kmt_rec *rec, bool near)
{
	__builtin_prefetch(&r->objs.e[hash_shift(rec->ev.ptr, r->objs.shift)]);
	if (near && (r->flags & RPT_PTR_VIEW) && r->ptr_map.shift)
		__builtin_prefetch(&r->ptr_map.e[hash_shift(rec->ev.ptr, r->ptr_map.shift)]);
}

static inline __attribute__((always_inline)) void prefetch_near(const struct rpt *r,
								 const union kmt_rec *rec)
{
	unsigned int type = rec->c.type;
	uint64_t ptr = rec->ev.ptr;

	if (type - KMT_REC_KMALLOC > (unsigned int)(KMT_REC_CACHE_FREE - KMT_REC_KMALLOC) || !ptr)
		return;
	if ((r->flags & RPT_PTR_VIEW) && r->ptr_map.shift) {
		const struct u64slot *m = &r->ptr_map.e[hash_shift(ptr, r->ptr_map.shift)];

		if (m->key == ptr && m->val < r->nptrs)
			__builtin_prefetch(&r->ptrs[m->val]);
	}
	if ((r->flags & RPT_LIFETIMES) && r->lp && type >= KMT_REC_KFREE) {
		const struct obj *o = &r->objs.e[hash_shift(ptr, r->objs.shift)];

		if (o->ptr == ptr && o->state == OBJ_LIVE_SEL && rec->ev.timestamp > o->ts)
			lp_freed_prefetch(r->lp, o->site, rec->ev.timestamp - o->ts);
	}
}

/* Records come as an array or as pointers to them; near: prefetch_near() too. */
static inline __attribute__((always_inline)) int feed_loop(struct rpt *r,
							   const union kmt_rec *recs,
							   const union kmt_rec *const *refs,
							   size_t n, bool near)
{
	size_t i;

	if (refs) {
		/* The records with one PREFETCH_FAR on, then the batch's last ones. */
		for (i = 0; i + PREFETCH_FAR < n; i++) {
			prefetch_far(r, refs[i + PREFETCH_FAR], near);
			if (near)
				prefetch_near(r, refs[i + PREFETCH_NEAR]);
			if (feed_one(r, refs[i]))
				return -1;
		}
		for (; i < n; i++) {
			if (near && i + PREFETCH_NEAR < n)
				prefetch_near(r, refs[i + PREFETCH_NEAR]);
			if (feed_one(r, refs[i]))
				return -1;
		}
	} else {
		for (i = 0; i < n; i++) {
			if (i + PREFETCH_FAR < n)
				prefetch_far(r, &recs[i + PREFETCH_FAR], near);
			if (near && i + PREFETCH_NEAR < n)
				prefetch_near(r, &recs[i + PREFETCH_NEAR]);
			if (feed_one(r, &recs[i]))
				return -1;
		}
	}
	return 0;
}

/* The views that look up more per event get the loop that prefetches for them. */
static __attribute__((noinline)) int feed_batch_near(struct rpt *r, const union kmt_rec *recs,
						     const union kmt_rec *const *refs, size_t n)
{
	return feed_loop(r, recs, refs, n, true);
}

static inline int feed_batch(struct rpt *r, const union kmt_rec *recs,
			     const union kmt_rec *const *refs, size_t n)
{
	if (!n)
		return 0;
	if (!r->t.seen_any)
		feed_start(r, (refs ? refs[0] : &recs[0])->c.timestamp);
	r->t.records += n;
	if (r->flags & (RPT_PTR_VIEW | RPT_LIFETIMES))
		return feed_batch_near(r, recs, refs, n);
	return feed_loop(r, recs, refs, n, false);
}

int rpt_feed_many(struct rpt *r, const union kmt_rec *recs, size_t n)
{
	return feed_batch(r, recs, NULL, n);
}

int rpt_feed_refs(struct rpt *r, const union kmt_rec *const *recs, size_t n)
{
	return feed_batch(r, NULL, recs, n);
}

int rpt_feed_shard(struct rpt *r, const union kmt_rec *const *recs, size_t n, unsigned int k,
		   unsigned int nshards)
{
	uint64_t base;
	size_t i;

	if (!n)
		return 0;
	if (!r->t.seen_any)
		feed_start(r, recs[0]->c.timestamp);
	base = r->t.records;
	r->t.records += n;
	for (i = 0; i < n; i++) {
		/*
		 * Another shard's record asks for slot 0, at hand: without a
		 * branch (GCC dropped the prefetch behind one).
		 */
		if (i + PREFETCH_FAR < n) {
			uint64_t ptr = recs[i + PREFETCH_FAR]->ev.ptr;
			size_t own = -(size_t)(shard_of(ptr, nshards) == k);

			__builtin_prefetch(&r->objs.e[hash_shift(ptr, r->objs.shift) & own]);
		}
		r->pos = base + i;
		if (feed_rec(r, recs[i], k, nshards))
			return -1;
	}
	return 0;
}
