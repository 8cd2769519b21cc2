// SPDX-License-Identifier: GPL-2.0-only
/*
 * report_core.c - the analysis behind kmemtrace-report: live objects, call
 * sites, caches and errors in open-addressing hash tables, so that each
 * record costs one or two probes and no allocation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/report_core.h"

/* Golden-ratio multiplier: spreads aligned addresses over the whole table. */
static inline size_t hash64(uint64_t k, unsigned int bits)
{
	return (size_t)((k * 0x9e3779b97f4a7c15ULL) >> (64 - bits));
}

/*
 * Zeroed memory for a hash table. Big tables are probed at random, one
 * TLB miss per probe with 4 KiB pages: they get their own mapping, with
 * transparent huge pages asked for.
 */
#define BIG_TABLE	(1u << 20)

static void *tab_alloc(size_t bytes)
{
	void *p;

	if (bytes < BIG_TABLE)
		return calloc(1, bytes);
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(p, bytes, MADV_HUGEPAGE);
#endif
	return p;
}

static void tab_free(void *p, size_t bytes)
{
	if (!p)
		return;
	if (bytes < BIG_TABLE)
		free(p);
	else
		munmap(p, bytes);
}

/* ---- u64 -> u32 map (call sites, caches, per-address tallies) ---------- */

/* Key and value side by side: a lookup touches one cache line. */
struct u64slot {
	uint64_t key;		/* 0: empty */
	uint32_t val;
	uint32_t pad;
};

struct u64map {
	struct u64slot *e;
	unsigned int bits;	/* capacity is 1 << bits; 0 while empty */
	size_t n;
	bool has_zero;		/* key 0 lives outside the table: 0 marks empty slots */
	uint32_t zero_val;
};

static inline bool map_get(const struct u64map *m, uint64_t k, uint32_t *v)
{
	size_t mask, i;

	if (__builtin_expect(k == 0, 0)) {
		*v = m->zero_val;
		return m->has_zero;
	}
	if (!m->bits)
		return false;
	mask = ((size_t)1 << m->bits) - 1;
	for (i = hash64(k, m->bits); m->e[i].key; i = (i + 1) & mask) {
		if (m->e[i].key == k) {
			*v = m->e[i].val;
			return true;
		}
	}
	return false;
}

static void map_place(struct u64slot *e, unsigned int bits, uint64_t k, uint32_t v)
{
	size_t mask = ((size_t)1 << bits) - 1, i;

	for (i = hash64(k, bits); e[i].key && e[i].key != k; i = (i + 1) & mask)
		;
	e[i].key = k;
	e[i].val = v;
}

/* Inserts or replaces. 0, or -1 when out of memory. */
static int map_put(struct u64map *m, uint64_t k, uint32_t v)
{
	uint32_t old;

	if (k == 0) {
		m->has_zero = true;
		m->zero_val = v;
		return 0;
	}
	if (map_get(m, k, &old)) {
		map_place(m->e, m->bits, k, v);
		return 0;
	}
	/* Keep the load under one half: probes stay short. */
	if (!m->bits || (m->n + 1) * 2 > ((size_t)1 << m->bits)) {
		unsigned int nb = m->bits ? m->bits + 1 : 6;
		size_t oldcap = m->bits ? (size_t)1 << m->bits : 0, i;
		struct u64slot *ne = calloc((size_t)1 << nb, sizeof(*ne));

		if (!ne)
			return -1;
		for (i = 0; i < oldcap; i++)
			if (m->e[i].key)
				map_place(ne, nb, m->e[i].key, m->e[i].val);
		free(m->e);
		m->e = ne;
		m->bits = nb;
	}
	map_place(m->e, m->bits, k, v);
	m->n++;
	return 0;
}

static void map_free(struct u64map *m)
{
	free(m->e);
	memset(m, 0, sizeof(*m));
}

static size_t map_memory(const struct u64map *m)
{
	return m->bits ? ((size_t)1 << m->bits) * sizeof(struct u64slot) : 0;
}

/*
 * Grows a dense array to hold n + 1 elements. Elements start on cache
 * lines, so that a call site's counters share one.
 */
static int grow(void **arr, size_t *cap, size_t n, size_t elsize)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	if (ncap > SIZE_MAX / elsize)
		return -1;
	p = aligned_alloc(64, ncap * elsize);
	if (!p)
		return -1;
	if (*cap)
		memcpy(p, *arr, *cap * elsize);
	memset((char *)p + *cap * elsize, 0, (ncap - *cap) * elsize);
	free(*arr);
	*arr = p;
	*cap = ncap;
	return 0;
}

/* ---- object table: ptr -> what allocated it, or when it was freed ------- */

/*
 * States of a slot. A freed object keeps its slot, so that a second free
 * of the address is recognized as a double free while its first free is
 * among the last FREED_WINDOW frees (and the address was not allocated
 * again meanwhile). Slots no longer needed are reused by later
 * allocations and dropped when the table is rebuilt: nothing is ever
 * deleted from the middle of a probe sequence.
 */
#define OBJ_DEAD	0	/* nothing to remember: reusable */
#define OBJ_LIVE	1	/* allocated, its allocation not selected */
#define OBJ_LIVE_SEL	2	/* allocated, its allocation passed the filters */
#define OBJ_FREED	3	/* a selected object's free; ts is the free's serial */
#define OBJ_FREED_UNSEL	4	/* the same for an object not selected: its frees never count */

/* 32 bytes: two per cache line. */
struct obj {
	uint64_t ptr;		/* 0: empty slot */
	uint64_t ts;		/* allocation time; once freed (OBJ_FREED*), the free's serial */
	uint32_t site;		/* index into sites; UINT32_MAX for pages */
	uint32_t cache;		/* index into caches; UINT32_MAX for none */
	uint32_t bytes;		/* bytes_alloc */
	uint16_t cpu;		/* allocating CPU */
	uint8_t kind;		/* KMT_REC_KMALLOC, _CACHE_ALLOC or _PAGE_ALLOC */
	uint8_t state;		/* OBJ_* */
};

_Static_assert(sizeof(struct obj) == 32, "object slots pack two per cache line");

#ifndef OBJ_MIN_BITS
#define OBJ_MIN_BITS	10	/* fuzz builds shrink it so that their traces grow the table */
#endif

/*
 * The most recent FREED_WINDOW frees of selected slab objects are
 * remembered, to recognize a double free. Fixed, whatever the trace's
 * length: the table holds at most the live objects and this many freed.
 */
#ifndef FREED_BITS
#define FREED_BITS	16	/* fuzz builds shrink it so that their traces leave the window */
#endif
#define FREED_WINDOW	((uint64_t)1 << FREED_BITS)

/*
 * Linear probing over a power-of-two table; rebuilt (grown, cleaned or
 * shrunk) when used slots reach 70%, to at most 40% afterwards.
 */
struct objtab {
	struct obj *e;
	/*
	 * Once stacks are seen: the stack index (kmt_stacks) of each slot's
	 * object, KMT_STACK_NONE for none; moved with the slots.
	 */
	uint32_t *stk;
	unsigned int bits;
	size_t used;		/* slots with ptr != 0, whatever their state */
	size_t full;		/* used beyond this: rebuild (70% of the slots) */
	uint64_t frees;		/* serial of the next OBJ_FREED */
};

/*
 * A freed object is remembered while its free is among the last
 * FREED_WINDOW frees of selected objects: deterministic, whatever the
 * table's size. Past that, or DEAD, a slot is as good as empty.
 */
static inline bool obj_reusable(const struct objtab *t, const struct obj *o)
{
	return o->state == OBJ_DEAD ||
	       (o->state >= OBJ_FREED && t->frees - o->ts > FREED_WINDOW - 1);
}

static inline bool obj_kept(const struct objtab *t, const struct obj *o)
{
	return o->ptr && !obj_reusable(t, o);
}

/* The slot of ptr, whatever its state, or NULL. */
static inline struct obj *obj_find(const struct objtab *t, uint64_t ptr)
{
	size_t mask = ((size_t)1 << t->bits) - 1, i;

	for (i = hash64(ptr, t->bits); t->e[i].ptr; i = (i + 1) & mask)
		if (t->e[i].ptr == ptr)
			return &t->e[i];
	return NULL;
}

static int obj_rebuild(struct objtab *t)
{
	size_t oldcap = (size_t)1 << t->bits, keep = 0, cap, mask, i, j;
	unsigned int nb = OBJ_MIN_BITS;
	uint32_t *nstk = NULL;
	struct obj *ne;

	for (i = 0; i < oldcap; i++)
		keep += obj_kept(t, &t->e[i]);
	while (((size_t)1 << nb) * 4 < (keep + 1) * 10)
		nb++;
	cap = (size_t)1 << nb;
	mask = cap - 1;
	ne = tab_alloc(cap * sizeof(*ne));
	if (!ne)
		return -1;
	if (t->stk) {
		nstk = malloc(cap * sizeof(*nstk));
		if (!nstk) {
			tab_free(ne, cap * sizeof(*ne));
			return -1;
		}
	}
	for (i = 0; i < oldcap; i++) {
		const struct obj *o = &t->e[i];

		if (!obj_kept(t, o))
			continue;
		for (j = hash64(o->ptr, nb); ne[j].ptr; j = (j + 1) & mask)
			;
		ne[j] = *o;
		if (nstk)
			nstk[j] = t->stk[i];
	}
	free(t->stk);
	t->stk = nstk;
	tab_free(t->e, oldcap * sizeof(*t->e));
	t->e = ne;
	t->bits = nb;
	t->used = keep;
	t->full = cap * 7 / 10;
	return 0;
}

/*
 * The slot an allocation of ptr goes to: ptr's own if present (any
 * state), else the first reusable slot on its probe sequence, else the
 * empty slot that ends it. NULL when out of memory. An address comes
 * back far more often than a new one appears (slab freelists reuse the
 * last freed object first), so its own slot is looked for alone first.
 */
static inline struct obj *obj_claim(struct objtab *t, uint64_t ptr)
{
	size_t mask, home, i;

	if (__builtin_expect(t->used >= t->full, 0) && obj_rebuild(t))
		return NULL;
	mask = ((size_t)1 << t->bits) - 1;
	home = hash64(ptr, t->bits);
	for (i = home; t->e[i].ptr; i = (i + 1) & mask)
		if (t->e[i].ptr == ptr)
			return &t->e[i];
	for (; home != i; home = (home + 1) & mask)
		if (obj_reusable(t, &t->e[home]))
			return &t->e[home];
	t->used++;
	return &t->e[i];
}

static int obj_init(struct objtab *t)
{
	memset(t, 0, sizeof(*t));
	t->bits = OBJ_MIN_BITS;
	t->full = ((size_t)1 << t->bits) * 7 / 10;
	t->e = tab_alloc(((size_t)1 << t->bits) * sizeof(*t->e));
	return t->e ? 0 : -1;
}

/* Starts keeping each object's stack. 0, or -1 (memory). */
static int obj_stk_init(struct objtab *t)
{
	size_t cap = (size_t)1 << t->bits;

	t->stk = malloc(cap * sizeof(*t->stk));
	if (!t->stk)
		return -1;
	memset(t->stk, 0xff, cap * sizeof(*t->stk));
	return 0;
}

static void obj_fini(struct objtab *t)
{
	free(t->stk);
	if (t->e)
		tab_free(t->e, ((size_t)1 << t->bits) * sizeof(*t->e));
}

static size_t obj_memory(const struct objtab *t)
{
	return ((size_t)1 << t->bits) * (sizeof(struct obj) + (t->stk ? sizeof(*t->stk) : 0));
}

/* ---- the analysis --------------------------------------------------------- */

struct errkey_slot {
	uint32_t idx1;		/* index + 1 into errors; 0: empty */
};

struct rpt {
	struct rpt_filter f;
	unsigned int flags;
	bool filtered;			/* any filter but the time window */
	uint64_t abs_start, abs_end;	/* time window, absolute ns, once known */

	/*
	 * Counted as records come. The totals that are sums over call sites
	 * (allocations, bytes, tracked frees) are summed by rpt_totals().
	 */
	struct rpt_totals t;

	struct objtab objs;	/* slab objects by address, live and recently freed */
	struct objtab pages;	/* live page frames by PFN: never mixed with addresses */

	struct rpt_site *sites;
	size_t nsites, sites_cap;
	struct u64map site_map;

	struct rpt_cache *caches;
	size_t ncaches, caches_cap;
	struct u64map cache_map;	/* cache_id -> latest description */
	struct u64map kmalloc_map;	/* bytes_alloc -> kmalloc-N pseudo-cache */

	struct rpt_error *errors;
	size_t nerrors, errors_cap;
	struct errkey_slot *err_slots;
	unsigned int err_bits;

	struct rpt_ptr *ptrs;
	size_t nptrs, ptrs_cap;
	struct u64map ptr_map;

	uint64_t *lost_cpu;
	unsigned int lost_ncpus;

	struct kmt_stacks *stacks;
	struct rpt_stack *stk;	/* by stack index */
	size_t stk_cap;

	/* Lifetimes and timelines (RPT_LIFETIMES, RPT_TIMELINE), or NULL. */
	struct rpt_lp *lp;
	/* Page allocations by order, migrate type and GFP mask (struct rpt_page_tally). */
	struct rpt_page_tally pg_order[32], pg_mt[RPT_MT_NAMED + 1], *pg_gfp;
	size_t npg_gfp, pg_gfp_cap;
	/* By kernel stack (index of r->stacks); pg_sink takes the blocks without one. */
	struct rpt_page_tally *pg_stk, pg_sink;
	size_t npg_stk, pg_stk_cap;
	struct u64map pg_gfp_map;
	uint32_t page_size;
	unsigned int page_shift;
	/*
	 * Large kmallocs: each CPU's last page allocation of more than two pages,
	 * waiting for the kmalloc event that may follow it on that CPU.
	 */
	struct page_pend {
		uint64_t pfn;
		uint64_t dup_ptr;	/* a paired kmalloc, watched for its second event */
		uint32_t bytes;
		/* The watched kmalloc event's, to take back exactly what it counted. */
		uint64_t dup_ts;
		uint32_t dup_req;
		uint16_t dup_flags;
		bool dup_cross, dup_stacked;
		bool dup_shown;		/* counted in an interval closed since (rpt_shown()) */
		/* A failed large kmalloc watched instead (no address to match): what must match. */
		bool dup_failed;
		uint32_t dup_site, dup_cache, dup_stk, dup_gfp, dup_pid;
		int32_t dup_node;
		uint64_t dup_call_site;
	} *pend;
	unsigned int npend_cpus, npend;
	/* The event page_pair() is on is a failed kmalloc's second event: not watched in turn. */
	bool fail_second;
	uint64_t dmap_delta;	/* kmalloc address - (PFN << page_shift) of the direct map */
	bool dmap_known;

	bool finished;
};

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

double rpt_frag(uint64_t bytes_req, uint64_t bytes_alloc)
{
	if (!bytes_alloc)
		return 0.0;
	return 100.0 - 100.0 * (double)bytes_req / (double)bytes_alloc;
}

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
	if (!r->stacks || obj_init(&r->objs) || obj_init(&r->pages)) {
		rpt_free(r);
		return NULL;
	}
	return r;
}

void rpt_free(struct rpt *r)
{
	if (!r)
		return;
	obj_fini(&r->objs);
	obj_fini(&r->pages);
	free(r->sites);
	map_free(&r->site_map);
	free(r->caches);
	map_free(&r->cache_map);
	map_free(&r->kmalloc_map);
	free(r->errors);
	free(r->err_slots);
	free(r->ptrs);
	map_free(&r->ptr_map);
	free(r->lost_cpu);
	kmt_stacks_free(r->stacks);
	free(r->stk);
	lp_free(r->lp);
	free(r->pg_gfp);
	free(r->pg_stk);
	map_free(&r->pg_gfp_map);
	free(r->pend);
	free(r);
}

static struct rpt_site *site_new(struct rpt *r, uint64_t addr, uint32_t *idx)
{
	uint32_t i;

	if (r->nsites >= UINT32_MAX - 1 ||
	    grow((void **)&r->sites, &r->sites_cap, r->nsites, sizeof(*r->sites)))
		return NULL;
	i = (uint32_t)r->nsites;
	if (map_put(&r->site_map, addr, i))
		return NULL;
	r->nsites++;
	memset(&r->sites[i], 0, sizeof(r->sites[i]));
	r->sites[i].addr = addr;
	*idx = i;
	return &r->sites[i];
}

static inline struct rpt_site *site_get(struct rpt *r, uint64_t addr, uint32_t *idx)
{
	uint32_t i;

	if (map_get(&r->site_map, addr, &i)) {
		*idx = i;
		return &r->sites[i];
	}
	return site_new(r, addr, idx);
}

static struct rpt_cache *cache_new(struct rpt *r, uint32_t *idx)
{
	if (r->ncaches >= UINT32_MAX - 1 ||
	    grow((void **)&r->caches, &r->caches_cap, r->ncaches, sizeof(*r->caches)))
		return NULL;
	*idx = (uint32_t)r->ncaches;
	memset(&r->caches[r->ncaches], 0, sizeof(r->caches[0]));
	return &r->caches[r->ncaches++];
}

/*
 * Names a cache and decides whether --cache-name selects it: by its name,
 * and a cache a CACHE_DESC named also by the names SLUB merged into it.
 */
static void cache_name_set(struct rpt *r, struct rpt_cache *c, const char *name, bool described)
{
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->selected = !r->f.cache_name || strcmp(r->f.cache_name, c->name) == 0 ||
		      (described && r->f.slab &&
		       slab_names_cache(r->f.slab, r->f.cache_name, c->name));
}

/* A real cache by identity; one that no CACHE_DESC named yet gets its address. */
static struct rpt_cache *cache_new_undescribed(struct rpt *r, uint64_t id, uint32_t *idx)
{
	struct rpt_cache *c;
	char name[sizeof(c->name)];
	uint32_t i;

	c = cache_new(r, &i);
	if (!c || map_put(&r->cache_map, id, i))
		return NULL;
	c->id = id;
	snprintf(name, sizeof(name), "cache@0x%llx", (unsigned long long)id);
	cache_name_set(r, c, name, false);
	*idx = i;
	return c;
}

static inline struct rpt_cache *cache_get(struct rpt *r, uint64_t id, uint32_t *idx)
{
	uint32_t i;

	if (map_get(&r->cache_map, id, &i)) {
		*idx = i;
		return &r->caches[i];
	}
	return cache_new_undescribed(r, id, idx);
}

/* The kmalloc-N pseudo-cache of kmalloc()s that reserved bytes, the first time. */
static struct rpt_cache *kmalloc_cache_new(struct rpt *r, uint32_t bytes, uint32_t *idx)
{
	struct rpt_cache *c;
	char name[sizeof(c->name)];
	uint32_t i;

	c = cache_new(r, &i);
	if (!c || map_put(&r->kmalloc_map, bytes, i))
		return NULL;
	c->id = bytes;
	c->pseudo = true;
	c->object_size = c->size = bytes;
	/* The kernel's own names: kmalloc-96, kmalloc-1k, kmalloc-8k. */
	if (bytes >= 1024 && bytes % 1024 == 0)
		snprintf(name, sizeof(name), "kmalloc-%uk", bytes / 1024);
	else
		snprintf(name, sizeof(name), "kmalloc-%u", bytes);
	cache_name_set(r, c, name, false);
	*idx = i;
	return c;
}

static int cache_desc(struct rpt *r, const struct kmt_cache_desc *d)
{
	char name[KMT_CACHE_NAME_LEN + 1];
	struct rpt_cache *c;
	uint32_t i;

	memcpy(name, d->name, KMT_CACHE_NAME_LEN);
	name[KMT_CACHE_NAME_LEN] = '\0';
	r->t.cache_descs++;
	if (map_get(&r->cache_map, d->cache_id, &i)) {
		c = &r->caches[i];
		if (!c->described)
			goto fill;
		if (strcmp(c->name, name) == 0 && c->object_size == d->object_size &&
		    c->size == d->size)
			return 0;
		/* Destroyed and another cache created at the same address. */
	}
	c = cache_new(r, &i);
	if (!c || map_put(&r->cache_map, d->cache_id, i))
		return -1;
	c->id = d->cache_id;
fill:
	c->described = true;
	c->object_size = d->object_size;
	c->size = d->size;
	cache_name_set(r, c, name, true);
	return 0;
}

static int error_add(struct rpt *r, enum rpt_err_kind kind, uint64_t alloc_site,
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
	if (grow((void **)&r->errors, &r->errors_cap, r->nerrors, sizeof(*r->errors)))
		return -1;
	r->errors[r->nerrors] = (struct rpt_error){
		.kind = kind, .alloc_site = alloc_site, .free_site = free_site, .count = 1,
		.uncertain = uncertain,
	};
	r->err_slots[i].idx1 = (uint32_t)(++r->nerrors);
	return 0;
}

static struct rpt_ptr *ptr_get(struct rpt *r, uint64_t ptr)
{
	uint32_t i;

	if (map_get(&r->ptr_map, ptr, &i))
		return &r->ptrs[i];
	if (r->nptrs >= UINT32_MAX - 1 ||
	    grow((void **)&r->ptrs, &r->ptrs_cap, r->nptrs, sizeof(*r->ptrs)))
		return NULL;
	i = (uint32_t)r->nptrs;
	if (map_put(&r->ptr_map, ptr, i))
		return NULL;
	r->nptrs++;
	memset(&r->ptrs[i], 0, sizeof(r->ptrs[i]));
	r->ptrs[i].ptr = ptr;
	return &r->ptrs[i];
}

static bool cpu_pid_ok(const struct rpt *r, const struct kmt_event *ev)
{
	if (r->f.cpus && (ev->cpu >= r->f.ncpus || !r->f.cpus[ev->cpu]))
		return false;
	if (r->f.has_pid && ev->pid != r->f.pid)
		return false;
	return true;
}

/* The rarer parts of a selected allocation, out of the common path. */
static int alloc_extra(struct rpt *r, const struct kmt_event *ev)
{
	if (ev->bytes_alloc < ev->bytes_req &&
	    error_add(r, RPT_ERR_SHORT_ALLOC, ev->call_site, 0, false))
		return -1;
	if (r->flags & RPT_PTR_VIEW) {
		struct rpt_ptr *p = ptr_get(r, ev->ptr);

		if (!p)
			return -1;
		p->site = ev->call_site;
		p->hits++;
		p->bytes_req += ev->bytes_req;
		p->bytes_alloc += ev->bytes_alloc;
	}
	return 0;
}

/*
 * The tallies of the stack ev carries, grown to hold it, at *st and its
 * index at *idx; *st NULL when it has none, counted in *no_stack when
 * marked so (whatever id it names: kmemtrace_check refuses that), in
 * *unknown when it names one the trace does not hold. 0, or -1 (memory).
 */
static int stk_of(struct rpt *r, const struct kmt_event *ev, uint64_t *no_stack,
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
	if (i >= r->stk_cap) {
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
	}
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
static int stack_alloc(struct rpt *r, const struct kmt_event *ev, const struct obj *o)
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
	if (!r->objs.stk && obj_stk_init(&r->objs))
		return -1;
	r->objs.stk[o - r->objs.e] = i;
	return 0;
}

/* ---- lifetimes, timelines and pages ------------------------------------------ */

static inline uint64_t since_start(const struct rpt *r, uint64_t ts)
{
	return ts > r->t.first_ts ? ts - r->t.first_ts : 0;
}

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

void rpt_set_page_size(struct rpt *r, uint32_t page_size)
{
	if (!page_size || (page_size & (page_size - 1)))
		return;
	r->page_size = page_size;
	r->page_shift = (unsigned int)__builtin_ctz(page_size);
}

const struct rpt_lp *rpt_lp(const struct rpt *r)
{
	return r->lp;
}

/* The tally of a GFP mask, new the first time. NULL: memory. */
static struct rpt_page_tally *pg_gfp_get(struct rpt *r, uint32_t gfp, uint32_t *idx)
{
	uint32_t i;

	if (map_get(&r->pg_gfp_map, gfp, &i)) {
		*idx = i;
		return &r->pg_gfp[i];
	}
	if (grow((void **)&r->pg_gfp, &r->pg_gfp_cap, r->npg_gfp, sizeof(*r->pg_gfp)))
		return NULL;
	i = (uint32_t)r->npg_gfp;
	if (map_put(&r->pg_gfp_map, gfp, i))
		return NULL;
	r->npg_gfp++;
	memset(&r->pg_gfp[i], 0, sizeof(r->pg_gfp[i]));
	r->pg_gfp[i].key = gfp;
	*idx = i;
	return &r->pg_gfp[i];
}

static inline unsigned int log2_of(uint32_t bytes)
{
	return bytes ? 31u - (unsigned int)__builtin_clz(bytes) : 0;
}

/* The order's tally of a page block of bytes (orders below 0 count as 0). */
static struct rpt_page_tally *pg_order(struct rpt *r, uint32_t bytes)
{
	unsigned int l = log2_of(bytes);

	return &r->pg_order[l > r->page_shift ? l - r->page_shift : 0];
}

static unsigned int pg_mt_index(const struct kmt_event *ev)
{
	if (!(ev->cache_id & KMT_PAGE_MT_VALID))
		return RPT_MT_UNKNOWN;
	return (ev->cache_id & 0xff) < RPT_MT_NAMED ? (unsigned int)(ev->cache_id & 0xff) :
						      RPT_MT_UNKNOWN;
}

/*
 * Each of the tallies a page block of an allocation counts in. A page
 * block's slot keeps in ts its stack's index + 1 (0: none): its time is
 * never needed.
 */
#define PG_EACH(r, o, T, body) do { \
	struct rpt_page_tally *T; \
	T = pg_order((r), (o)->bytes); body; \
	T = &(r)->pg_mt[(o)->cache]; body; \
	T = &(r)->pg_gfp[(o)->site]; body; \
	T = (o)->ts ? &(r)->pg_stk[(o)->ts - 1] : &(r)->pg_sink; body; \
} while (0)

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
		if (grow((void **)&r->pg_stk, &r->pg_stk_cap, r->npg_stk, sizeof(*r->pg_stk)))
			return -1;
		r->pg_stk[r->npg_stk].key = r->npg_stk;
		r->npg_stk++;
	}
	return (int64_t)i + 1;
}

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
static bool page_pair(struct rpt *r, const struct kmt_event *ev)
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

static int page_pend(struct rpt *r, const struct kmt_event *ev);

/*
 * Watches the CPU's next allocation event for a second event of this large
 * kmalloc, keeping what its counts took; NULL: out of memory.
 */
static struct page_pend *watch(struct rpt *r, const struct kmt_event *ev)
{
	struct page_pend *p;

	if (page_pend(r, ev))
		return NULL;
	p = &r->pend[ev->cpu];
	p->dup_ts = ev->timestamp;
	p->dup_req = ev->bytes_req;
	p->dup_flags = ev->flags;
	p->dup_cross = (ev->node != KMT_NODE_ANY) & (ev->node != ev->cpu_node);
	p->dup_stacked = ev->stack_id != 0;
	return p;
}

/* A large kmalloc: its second event has its address (kmalloc_dup()). */
static int dup_watch(struct rpt *r, const struct kmt_event *ev)
{
	struct page_pend *p = watch(r, ev);

	if (!p)
		return -1;
	p->dup_ptr = ev->ptr;
	return 0;
}

/* A failed one: its second event has the same task, sizes, mask and node (kmalloc_fail_dup()). */
static int fail_watch(struct rpt *r, const struct kmt_event *ev, uint32_t site, uint32_t cache)
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

static int page_pend(struct rpt *r, const struct kmt_event *ev)
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
	if (__builtin_expect(r->npend != 0, 0) && page_pair(r, ev))
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
		c = cache_new_undescribed(r, key, &cache_idx);
		if (!c)
			return -1;
	} else if (key) {
		c = kmalloc_cache_new(r, (uint32_t)key, &cache_idx);
		if (!c)
			return -1;
	} else {
		cache_idx = UINT32_MAX;
	}
	/* Undescribed (its CACHE_DESC came before the trace): sizes from its events. */
	if (__builtin_expect(c && !c->size && !c->described, 0)) {
		c->object_size = ev->bytes_req;
		c->size = ev->bytes_alloc;
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
				return fail_watch(r, ev, site_idx, cache_idx);
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
	    ev->type == KMT_REC_KMALLOC && dup_watch(r, ev))
		return -1;
	if ((ev->stack_id | (ev->flags & KMT_F_NO_STACK)) && sel)
		return stack_alloc(r, ev, o);
	return 0;
}

/*
 * A second free with no allocation in between is a double free for sure
 * only if every path that hands out such objects is in the trace.
 */
static bool double_free_uncertain(const struct rpt *r, const struct obj *o)
{
	if (o->kind == KMT_REC_CACHE_ALLOC)
		return !(r->flags & RPT_CACHE_ALLOCS_SEEN);
	return (r->flags & RPT_KMALLOC_ALLOCS_MISSED) != 0;
}

/* A free of an address with no live object: a double free, or untracked. */
static int free_unknown(struct rpt *r, const struct kmt_event *ev, const struct obj *o)
{
	struct rpt_cache *c = NULL;
	uint32_t ci;

	if (o && !obj_reusable(&r->objs, o)) {
		/* An object not selected: neither its allocation nor its frees count. */
		if (o->state == OBJ_FREED_UNSEL)
			return 0;
		/* Freed before within the trace, not allocated since. */
		r->t.double_frees++;
		r->t.probed_frees += (ev->flags & KMT_F_PROBED) != 0;
		if (stack_free(r, ev, NULL))
			return -1;
		return error_add(r, RPT_ERR_DOUBLE_FREE, r->sites[o->site].addr, ev->call_site,
				 double_free_uncertain(r, o));
	}
	/* Allocated before the trace (or its allocation was lost). */
	if (!cpu_pid_ok(r, ev) || r->f.min_size)
		return 0;
	if (ev->type == KMT_REC_CACHE_FREE) {
		c = cache_get(r, ev->cache_id, &ci);
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

/* The rarer parts of a tracked free, out of the common path. */
static int free_extra(struct rpt *r, const struct kmt_event *ev, const struct obj *o)
{
	uint64_t site = r->sites[o->site].addr;

	if (r->flags & RPT_PTR_VIEW) {
		struct rpt_ptr *p = ptr_get(r, ev->ptr);

		if (!p)
			return -1;
		p->frees++;
		if (o->cpu != ev->cpu)
			p->cross_cpu_frees++;
	}
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
		return error_add(r, RPT_ERR_KFREE_OF_CACHE_OBJ, site, ev->call_site, false);
	}
	if (o->kind == KMT_REC_KMALLOC && ev->type == KMT_REC_CACHE_FREE)
		return error_add(r, RPT_ERR_CACHE_FREE_OF_KMALLOC, site, ev->call_site, false);
	if (o->kind == KMT_REC_CACHE_ALLOC && ev->type == KMT_REC_CACHE_FREE &&
	    r->caches[o->cache].id != ev->cache_id)
		return error_add(r, RPT_ERR_CACHE_MISMATCH, site, ev->call_site, false);
	return 0;
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
			o->ts = r->objs.frees;
			return 0;
		}
		return free_unknown(r, ev, o);
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
	if (__builtin_expect(odd || (r->flags & RPT_PTR_VIEW), 0) && free_extra(r, ev, o))
		return -1;
	o->state = OBJ_FREED;
	o->ts = ++r->objs.frees;
	return 0;
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
static int page_alloc(struct rpt *r, const struct kmt_event *ev)
{
	bool sel = page_sel(r, ev);
	struct obj *o, key = { .bytes = ev->bytes_alloc, .cache = pg_mt_index(ev) };

	if (r->npend)
		page_pair(r, ev);
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
		if (ev->bytes_alloc > 2 * r->page_size && page_pend(r, ev))
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

static int page_free(struct rpt *r, const struct kmt_event *ev)
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

/* One record, after feed_start() and counted in t.records by the caller. */
static inline __attribute__((always_inline)) int feed_one(struct rpt *r,
							  const union kmt_rec *rec)
{
	uint64_t ts = rec->c.timestamp;
	unsigned int type = rec->c.type;

	/*
	 * Cache names hold whatever the window, so that events in it are
	 * named; everything else outside the window is as if not traced.
	 */
	if (__builtin_expect(type == KMT_REC_CACHE_DESC, 0))
		return cache_desc(r, &rec->cache);
	/* Stacks too: an event in the window may name a stack written before it. */
	if (__builtin_expect(type == KMT_REC_STACK, 0)) {
		r->t.stack_slots++;
		return kmt_stacks_feed(r->stacks, &rec->stack);
	}
	if (r->f.has_time && (ts < r->abs_start || ts > r->abs_end))
		return 0;
	if (ts > r->t.last_ts)
		r->t.last_ts = ts;

	if (type - KMT_REC_KMALLOC <= (unsigned int)(KMT_REC_CACHE_ALLOC - KMT_REC_KMALLOC))
		return slab_alloc(r, &rec->ev);
	if (__builtin_expect(type <= KMT_REC_PAGE_FREE &&
			     (rec->ev.stack_id | (rec->ev.flags & KMT_F_NO_STACK)), 0))
		other_stack(r, &rec->ev);
	if (type - KMT_REC_KFREE <= (unsigned int)(KMT_REC_CACHE_FREE - KMT_REC_KFREE))
		return rec->ev.ptr ? slab_free(r, &rec->ev) : 0;
	switch (type) {
	case KMT_REC_PAGE_ALLOC:
		return page_alloc(r, &rec->ev);
	case KMT_REC_PAGE_FREE:
		return page_free(r, &rec->ev);
	case KMT_REC_LOST:
		return lost(r, &rec->lost);
	default:
		return 0;
	}
}

int rpt_feed(struct rpt *r, const union kmt_rec *rec)
{
	if (!r->t.seen_any)
		feed_start(r, rec->c.timestamp);
	r->t.records++;
	return feed_one(r, rec);
}

/*
 * Records come as an array or as pointers to them. (Prefetching the table
 * slots of records further on was tried: out-of-order execution already
 * overlaps those misses, and the prefetches only added instructions.)
 */
static inline int feed_batch(struct rpt *r, const union kmt_rec *recs,
			     const union kmt_rec *const *refs, size_t n)
{
	size_t i;

	if (!n)
		return 0;
	if (!r->t.seen_any)
		feed_start(r, (refs ? refs[0] : &recs[0])->c.timestamp);
	r->t.records += n;
	if (refs) {
		for (i = 0; i < n; i++)
			if (feed_one(r, refs[i]))
				return -1;
	} else {
		for (i = 0; i < n; i++)
			if (feed_one(r, &recs[i]))
				return -1;
	}
	return 0;
}

int rpt_feed_many(struct rpt *r, const union kmt_rec *recs, size_t n)
{
	return feed_batch(r, recs, NULL, n);
}

int rpt_feed_refs(struct rpt *r, const union kmt_rec *const *recs, size_t n)
{
	return feed_batch(r, NULL, recs, n);
}

/* The totals that are sums over call sites: summed here rather than per event. */
static void totals_sum(struct rpt *r)
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
	totals_sum(r);
	cap = (size_t)1 << r->objs.bits;
	for (i = 0; i < cap; i++) {
		const struct obj *o = &r->objs.e[i];
		struct rpt_site *s;

		if (!o->ptr || o->state != OBJ_LIVE_SEL)
			continue;
		s = &r->sites[o->site];
		if (!s->out_count || o->ts < s->out_oldest_ts)
			s->out_oldest_ts = o->ts;
		s->out_count++;
		s->out_bytes += o->bytes;
		if (r->objs.stk && r->objs.stk[i] != KMT_STACK_NONE) {
			r->stk[r->objs.stk[i]].out_count++;
			r->stk[r->objs.stk[i]].out_bytes += o->bytes;
		}
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
	return 0;
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

unsigned int rpt_flags(const struct rpt *r)
{
	return r->flags;
}

const struct rpt_totals *rpt_totals(const struct rpt *r)
{
	/* Once finished the sums are final; before, summed afresh. r is never const. */
	if (!r->finished)
		totals_sum((struct rpt *)r);
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
	return sizeof(*r) + obj_memory(&r->objs) + obj_memory(&r->pages) +
	       r->sites_cap * sizeof(*r->sites) + map_memory(&r->site_map) +
	       r->caches_cap * sizeof(*r->caches) + map_memory(&r->cache_map) +
	       map_memory(&r->kmalloc_map) +
	       r->errors_cap * sizeof(*r->errors) +
	       (r->err_bits ? ((size_t)1 << r->err_bits) * sizeof(*r->err_slots) : 0) +
	       r->ptrs_cap * sizeof(*r->ptrs) + map_memory(&r->ptr_map) +
	       r->lost_ncpus * sizeof(*r->lost_cpu) + kmt_stacks_memory(r->stacks) +
	       (r->lp ? lp_memory(r->lp) : 0) + r->pg_gfp_cap * sizeof(*r->pg_gfp) +
	       r->pg_stk_cap * sizeof(*r->pg_stk) +
	       map_memory(&r->pg_gfp_map) + r->npend_cpus * sizeof(*r->pend) +
	       r->stk_cap * sizeof(*r->stk);
}
