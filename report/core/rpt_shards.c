// SPDX-License-Identifier: GPL-2.0-only
/*
 * rpt_shards.c - the analysis divided by object address (rpt_shards.h):
 * shards fed on threads of their own from one read-ahead ring, each
 * scanning every record and analysing those of its addresses
 * (rpt_feed_shard()), then added into one analysis, their entries in the
 * order one analysis makes them (each remembers the record that made it).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/report_core_int.h"
#include "core/rpt_shards.h"

struct shard {
	struct rpt_shards *s;
	unsigned int k;
	struct rpt *r;		/* shard 0's is the caller's */
	pthread_t thread;
	int rc;			/* -1 once a feed failed: only read from then */
};

struct rpt_shards {
	struct kmt_ahead *a;
	unsigned int n;
	/* The threads wait for the ring (go 1) or give up (go -1). */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int go;
	struct shard sh[];
};

bool rpt_shardable(const struct rpt *r)
{
	/* A profile's samples pair a large kmalloc's events across addresses (last_sample). */
	return !(r->flags & RPT_SAMPLES);
}

static void *shard_thread(void *arg)
{
	struct shard *w = arg;
	struct rpt_shards *s = w->s;
	const union kmt_rec *const *recs;
	int n, go;

	pthread_mutex_lock(&s->lock);
	while (!s->go)
		pthread_cond_wait(&s->cond, &s->lock);
	go = s->go;
	pthread_mutex_unlock(&s->lock);
	if (go < 0)
		return NULL;
	while ((n = kmt_ahead_next_of(s->a, w->k, &recs)) > 0)
		if (!w->rc && rpt_feed_shard(w->r, recs, (size_t)n, w->k, s->n))
			w->rc = -1;
	return NULL;
}

static void set_go(struct rpt_shards *s, int go)
{
	pthread_mutex_lock(&s->lock);
	s->go = go;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* Frees shards 1 to n - 1 and s; threads started: those below. */
static void shards_free(struct rpt_shards *s, unsigned int threads)
{
	unsigned int k;

	for (k = 1; k < threads; k++)
		pthread_join(s->sh[k].thread, NULL);
	for (k = 1; k < s->n; k++)
		rpt_free(s->sh[k].r);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

struct rpt_shards *rpt_shards_start(struct rpt *r, struct kmt_merge *m, unsigned int n,
				    struct kmt_ahead **ahead)
{
	struct rpt_shards *s = calloc(1, sizeof(*s) + n * sizeof(s->sh[0]));
	unsigned int k;
	int err = ENOMEM;

	if (!s)
		return NULL;
	s->n = n;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	for (k = 0; k < n; k++) {
		s->sh[k].s = s;
		s->sh[k].k = k;
		s->sh[k].r = k ? rpt_new(&r->f, r->flags) : r;
		if (!s->sh[k].r) {
			shards_free(s, 0);
			errno = ENOMEM;
			return NULL;
		}
		rpt_set_page_size(s->sh[k].r, r->page_size);
	}
	for (k = 1; k < n; k++) {
		err = pthread_create(&s->sh[k].thread, NULL, shard_thread, &s->sh[k]);
		if (err)
			goto give_up;
	}
	s->a = kmt_ahead_start_readers(m, n);
	if (!s->a) {
		err = errno;
		goto give_up;
	}
	set_go(s, 1);
	*ahead = s->a;
	return s;

give_up:
	set_go(s, -1);
	shards_free(s, k);
	errno = err;
	return NULL;
}

int rpt_shards_next(struct rpt_shards *s, const union kmt_rec *const **recs)
{
	return kmt_ahead_next_of(s->a, 0, recs);
}

int rpt_shards_feed(struct rpt_shards *s, const union kmt_rec *const *recs, size_t n)
{
	struct shard *w = &s->sh[0];

	if (!w->rc && rpt_feed_shard(w->r, recs, n, 0, s->n))
		w->rc = -1;
	return w->rc;
}

/* ---- adding the shards up ------------------------------------------------- */

/* An entry of one shard: its key, the record that made it, where it is. */
struct ent {
	uint64_t k1, k2, k3, first;
	uint32_t shard, idx;
};

/* Entries of one key, ents[lo, hi), the first made first; as one analysis orders them. */
struct grp {
	uint64_t first;
	size_t lo, hi;
};

static int ent_cmp(const void *pa, const void *pb)
{
	const struct ent *a = pa, *b = pb;

	if (a->k1 != b->k1)
		return a->k1 < b->k1 ? -1 : 1;
	if (a->k2 != b->k2)
		return a->k2 < b->k2 ? -1 : 1;
	if (a->k3 != b->k3)
		return a->k3 < b->k3 ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

static int grp_cmp(const void *pa, const void *pb)
{
	const struct grp *a = pa, *b = pb;

	return a->first < b->first ? -1 : a->first > b->first;
}

static bool same_key(const struct ent *a, const struct ent *b)
{
	return a->k1 == b->k1 && a->k2 == b->k2 && a->k3 == b->k3;
}

/* An array of n elements of size on cache lines, zeroed (rpt_grow()'s kind). */
static void *lines(size_t n, size_t size, size_t *cap)
{
	void *p = NULL;
	size_t i;

	*cap = 0;
	for (i = 0; i < (n ? n : 1); i++)
		if (rpt_grow(&p, cap, i, size)) {
			free(p);
			return NULL;
		}
	return p;
}

/*
 * Sorts the n entries and groups them by key, groups in order of their
 * first record, and makes *out, the array of *ngroups elements of size
 * (*cap) the merged entries go to. NULL when out of memory: e freed too.
 */
static struct grp *group(struct ent *e, size_t n, size_t *ngroups, void **out, size_t size,
			 size_t *cap)
{
	struct grp *g = malloc((n ? n : 1) * sizeof(*g));
	size_t i, j, ng = 0;

	if (!g)
		goto fail;
	qsort(e, n, sizeof(*e), ent_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && same_key(&e[i], &e[j]); j++)
			;
		g[ng++] = (struct grp){ .first = e[i].first, .lo = i, .hi = j };
	}
	qsort(g, ng, sizeof(*g), grp_cmp);
	*out = lines(ng, size, cap);
	if (!*out)
		goto fail;
	*ngroups = ng;
	return g;
fail:
	free(g);
	free(e);
	return NULL;
}

static void site_add(struct rpt_site *d, const struct rpt_site *s)
{
	d->hits += s->hits;
	d->bytes_req += s->bytes_req;
	d->bytes_alloc += s->bytes_alloc;
	d->frees += s->frees;
	d->bytes_freed += s->bytes_freed;
	d->cross_cpu_frees += s->cross_cpu_frees;
	d->kinds |= s->kinds;
	d->failed += s->failed;
	d->cross_node += s->cross_node;
	if (s->out_count && (!d->out_count || s->out_oldest_ts < d->out_oldest_ts))
		d->out_oldest_ts = s->out_oldest_ts;
	d->out_count += s->out_count;
	d->out_bytes += s->out_bytes;
}

/* The call sites of every shard as one analysis's, in r = sh[0]; remap[k][i]: shard k's site i. */
static int merge_sites(struct rpt **sh, unsigned int n, uint32_t **remap)
{
	struct rpt *r = sh[0];
	struct rpt_site *ns;
	size_t total = 0, ne = 0, ng, cap, f, x;
	struct ent *e;
	struct grp *g;
	unsigned int k;

	for (k = 0; k < n; k++)
		total += sh[k]->nsites;
	e = malloc((total ? total : 1) * sizeof(*e));
	if (!e)
		return -1;
	for (k = 0; k < n; k++)
		for (x = 0; x < sh[k]->nsites; x++)
			e[ne++] = (struct ent){ .k1 = sh[k]->sites[x].addr,
						.first = sh[k]->sites[x].first,
						.shard = k, .idx = (uint32_t)x };
	g = group(e, ne, &ng, (void **)&ns, sizeof(*ns), &cap);
	if (!g)
		return -1;
	for (f = 0; f < ng; f++) {
		ns[f] = sh[e[g[f].lo].shard]->sites[e[g[f].lo].idx];
		remap[e[g[f].lo].shard][e[g[f].lo].idx] = (uint32_t)f;
		for (x = g[f].lo + 1; x < g[f].hi; x++) {
			site_add(&ns[f], &sh[e[x].shard]->sites[e[x].idx]);
			remap[e[x].shard][e[x].idx] = (uint32_t)f;
		}
	}
	free(g);
	free(e);
	free(r->sites);
	r->sites = ns;
	r->nsites = ng;
	r->sites_cap = cap;
	rpt_map_free(&r->site_map);
	for (f = 0; f < ng; f++)
		if (rpt_map_put(&r->site_map, ns[f].addr, (uint32_t)f))
			return -1;
	return 0;
}

static void cache_add(struct rpt_cache *d, const struct rpt_cache *s)
{
	d->allocs += s->allocs;
	d->bytes_req += s->bytes_req;
	d->bytes_alloc += s->bytes_alloc;
	d->frees += s->frees;
	d->bytes_freed += s->bytes_freed;
	d->failed += s->failed;
	d->untracked_frees += s->untracked_frees;
	d->live += s->live;
	d->live_bytes += s->live_bytes;
}

/*
 * The sizes of a cache no CACHE_DESC named are its events': those of the
 * first event with bytes_alloc, or failing that of the last one.
 */
static void undescribed_sizes(struct rpt_cache *d, struct rpt **sh, const struct ent *e,
			      const struct grp *g)
{
	const struct rpt_cache *set = NULL, *unset = NULL;
	size_t x;

	for (x = g->lo; x < g->hi; x++) {
		const struct rpt_cache *c = &sh[e[x].shard]->caches[e[x].idx];

		if (c->size && (!set || c->size_pos < set->size_pos))
			set = c;
		else if (!c->size && (!unset || c->size_pos > unset->size_pos))
			unset = c;
	}
	if (!set)
		set = unset;
	d->object_size = set->object_size;
	d->size = set->size;
	d->size_pos = set->size_pos;
}

/*
 * The caches likewise. A cache is the same in every shard by its kind,
 * address (or size) and how many caches a CACHE_DESC replaced at that
 * address before it: every shard reads every CACHE_DESC.
 */
static int merge_caches(struct rpt **sh, unsigned int n, uint32_t **remap)
{
	struct rpt *r = sh[0];
	struct rpt_cache *nc;
	size_t total = 0, ne = 0, ng, cap, f, x;
	struct ent *e;
	struct grp *g;
	unsigned int k;

	for (k = 0; k < n; k++)
		total += sh[k]->ncaches;
	e = malloc((total ? total : 1) * sizeof(*e));
	if (!e)
		return -1;
	for (k = 0; k < n; k++)
		for (x = 0; x < sh[k]->ncaches; x++) {
			const struct rpt_cache *c = &sh[k]->caches[x];

			e[ne++] = (struct ent){ .k1 = c->pseudo, .k2 = c->id, .k3 = c->gen,
						.first = c->first, .shard = k, .idx = (uint32_t)x };
		}
	g = group(e, ne, &ng, (void **)&nc, sizeof(*nc), &cap);
	if (!g)
		return -1;
	for (f = 0; f < ng; f++) {
		nc[f] = sh[e[g[f].lo].shard]->caches[e[g[f].lo].idx];
		remap[e[g[f].lo].shard][e[g[f].lo].idx] = (uint32_t)f;
		for (x = g[f].lo + 1; x < g[f].hi; x++) {
			cache_add(&nc[f], &sh[e[x].shard]->caches[e[x].idx]);
			remap[e[x].shard][e[x].idx] = (uint32_t)f;
		}
		if (!nc[f].described && !nc[f].pseudo)
			undescribed_sizes(&nc[f], sh, e, &g[f]);
	}
	free(g);
	free(e);
	free(r->caches);
	r->caches = nc;
	r->ncaches = ng;
	r->caches_cap = cap;
	rpt_map_free(&r->cache_map);
	rpt_map_free(&r->kmalloc_map);
	/* In the order made: an address's latest cache is the one its map names. */
	for (f = 0; f < ng; f++)
		if (rpt_map_put(nc[f].pseudo ? &r->kmalloc_map : &r->cache_map, nc[f].id,
				(uint32_t)f))
			return -1;
	return 0;
}

/* The errors: by kind and call sites, counts summed, in the order first seen. */
static int merge_errors(struct rpt **sh, unsigned int n)
{
	struct rpt *r = sh[0];
	struct rpt_error *ne_arr;
	size_t total = 0, ne = 0, ng, cap, f, x;
	struct ent *e;
	struct grp *g;
	unsigned int k;

	for (k = 0; k < n; k++)
		total += sh[k]->nerrors;
	e = malloc((total ? total : 1) * sizeof(*e));
	if (!e)
		return -1;
	for (k = 0; k < n; k++)
		for (x = 0; x < sh[k]->nerrors; x++) {
			const struct rpt_error *er = &sh[k]->errors[x];

			e[ne++] = (struct ent){ .k1 = er->kind, .k2 = er->alloc_site,
						.k3 = er->free_site, .first = er->first,
						.shard = k, .idx = (uint32_t)x };
		}
	g = group(e, ne, &ng, (void **)&ne_arr, sizeof(*ne_arr), &cap);
	if (!g)
		return -1;
	for (f = 0; f < ng; f++) {
		ne_arr[f] = sh[e[g[f].lo].shard]->errors[e[g[f].lo].idx];
		for (x = g[f].lo + 1; x < g[f].hi; x++) {
			const struct rpt_error *er = &sh[e[x].shard]->errors[e[x].idx];

			ne_arr[f].count += er->count;
			ne_arr[f].uncertain |= er->uncertain;
		}
	}
	free(g);
	free(e);
	free(r->errors);
	r->errors = ne_arr;
	r->nerrors = ng;
	r->errors_cap = cap;
	/* Its slots are made again from the errors by the next rpt_error_add(). */
	free(r->err_slots);
	r->err_slots = NULL;
	r->err_bits = 0;
	return 0;
}

/* The per-address tallies (RPT_PTR_VIEW): each address is one shard's, in the order made. */
static int merge_ptrs(struct rpt **sh, unsigned int n)
{
	struct rpt *r = sh[0];
	struct rpt_ptr *np;
	size_t total = 0, ne = 0, ng, cap, f, x;
	struct ent *e;
	struct grp *g;
	unsigned int k;

	for (k = 0; k < n; k++)
		total += sh[k]->nptrs;
	if (!total)
		return 0;
	e = malloc(total * sizeof(*e));
	if (!e)
		return -1;
	for (k = 0; k < n; k++)
		for (x = 0; x < sh[k]->nptrs; x++)
			e[ne++] = (struct ent){ .k1 = sh[k]->ptrs[x].ptr,
						.first = sh[k]->ptrs[x].first,
						.shard = k, .idx = (uint32_t)x };
	g = group(e, ne, &ng, (void **)&np, sizeof(*np), &cap);
	if (!g)
		return -1;
	for (f = 0; f < ng; f++)
		np[f] = sh[e[g[f].lo].shard]->ptrs[e[g[f].lo].idx];
	free(g);
	free(e);
	free(r->ptrs);
	r->ptrs = np;
	r->nptrs = ng;
	r->ptrs_cap = cap;
	rpt_map_free(&r->ptr_map);
	for (f = 0; f < ng; f++)
		if (rpt_map_put(&r->ptr_map, np[f].ptr, (uint32_t)f))
			return -1;
	return 0;
}

/* The stacks' tallies: every shard numbers the stacks alike (it reads every STACK record). */
static int merge_stacks(struct rpt **sh, unsigned int n)
{
	struct rpt *r = sh[0];
	size_t cap = r->stk_cap, i;
	unsigned int k;

	for (k = 1; k < n; k++)
		if (sh[k]->stk_cap > cap)
			cap = sh[k]->stk_cap;
	if (cap > r->stk_cap && rpt_stk_grow(r, cap - 1))
		return -1;
	for (k = 1; k < n; k++)
		for (i = 0; i < sh[k]->stk_cap; i++) {
			struct rpt_stack *d = &r->stk[i];
			const struct rpt_stack *s = &sh[k]->stk[i];

			d->hits += s->hits;
			d->failed += s->failed;
			d->bytes_req += s->bytes_req;
			d->bytes_alloc += s->bytes_alloc;
			d->frees += s->frees;
			d->bytes_freed += s->bytes_freed;
			d->out_count += s->out_count;
			d->out_bytes += s->out_bytes;
			d->free_hits += s->free_hits;
			d->free_bytes += s->free_bytes;
			d->free_no_alloc += s->free_no_alloc;
		}
	return 0;
}

/*
 * The totals the shards count of their own records. The others are
 * shard 0's alone (pages, LOST and SUM records), the same in every shard
 * (records, cache descriptions, stack slots, the trace's first and last
 * times), or sums over call sites (rpt_totals_sum()).
 */
static void totals_add(struct rpt_totals *d, const struct rpt_totals *s)
{
	d->untracked_frees += s->untracked_frees;
	d->double_frees += s->double_frees;
	d->kfree_cache_objects += s->kfree_cache_objects;
	d->implicit_frees += s->implicit_frees;
	d->clamped_allocs += s->clamped_allocs;
	d->probed_allocs += s->probed_allocs;
	d->probed_frees += s->probed_frees;
	d->outstanding += s->outstanding;
	d->outstanding_bytes += s->outstanding_bytes;
	d->kmalloc_dup_events += s->kmalloc_dup_events;
	d->kmalloc_dup_no_stack += s->kmalloc_dup_no_stack;
	d->kmalloc_dup_failed += s->kmalloc_dup_failed;
	d->stack_allocs += s->stack_allocs;
	d->no_stack_allocs += s->no_stack_allocs;
	d->unknown_stack_allocs += s->unknown_stack_allocs;
	d->other_no_stack += s->other_no_stack;
	d->other_unknown_stack += s->other_unknown_stack;
	d->stack_frees += s->stack_frees;
	d->no_stack_frees += s->no_stack_frees;
	d->unknown_stack_frees += s->unknown_stack_frees;
}

/* Lifetimes and timelines, by the merged sites' and caches' indices. */
static int merge_lp(struct rpt **sh, unsigned int n, uint32_t **site_map, uint32_t **cache_map)
{
	struct rpt *r = sh[0];
	struct rpt_lp *lp;
	unsigned int k;

	if (!r->lp)
		return 0;
	lp = lp_new(r->flags & RPT_LIFETIMES, r->flags & RPT_TIMELINE);
	if (!lp)
		return -1;
	for (k = 0; k < n; k++)
		if (lp_merge(lp, sh[k]->lp, site_map[k], cache_map[k])) {
			lp_free(lp);
			return -1;
		}
	lp_free(r->lp);
	r->lp = lp;
	return 0;
}

static int merge(struct rpt **sh, unsigned int n)
{
	uint32_t **site_map = calloc(n, sizeof(*site_map));
	uint32_t **cache_map = calloc(n, sizeof(*cache_map));
	int rc = -1;
	unsigned int k;

	if (!site_map || !cache_map)
		goto out;
	for (k = 0; k < n; k++) {
		if (rpt_finish(sh[k]))
			goto out;
		site_map[k] = malloc((sh[k]->nsites + 1) * sizeof(**site_map));
		cache_map[k] = malloc((sh[k]->ncaches + 1) * sizeof(**cache_map));
		if (!site_map[k] || !cache_map[k])
			goto out;
	}
	if (merge_sites(sh, n, site_map) || merge_caches(sh, n, cache_map) ||
	    merge_lp(sh, n, site_map, cache_map) || merge_errors(sh, n) || merge_ptrs(sh, n) ||
	    merge_stacks(sh, n))
		goto out;
	for (k = 1; k < n; k++)
		totals_add(&sh[0]->t, &sh[k]->t);
	rpt_totals_sum(sh[0]);
	rc = 0;
out:
	for (k = 0; k < n && site_map && cache_map; k++) {
		free(site_map[k]);
		free(cache_map[k]);
	}
	free(site_map);
	free(cache_map);
	return rc;
}

int rpt_shards_join(struct rpt_shards *s)
{
	struct rpt **all = calloc(s->n, sizeof(*all));
	int rc = s->sh[0].rc;
	unsigned int k;

	for (k = 1; k < s->n; k++) {
		pthread_join(s->sh[k].thread, NULL);
		rc |= s->sh[k].rc;
	}
	if (!all)
		rc = -1;
	if (!rc) {
		for (k = 0; k < s->n; k++)
			all[k] = s->sh[k].r;
		rc = merge(all, s->n);
	}
	free(all);
	shards_free(s, 0);
	return rc ? -1 : 0;
}
