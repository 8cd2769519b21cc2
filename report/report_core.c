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

#include "report_core.h"

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

struct u64map {
	uint64_t *keys;
	uint32_t *vals;
	unsigned int bits;	/* capacity is 1 << bits; 0 while empty */
	size_t n;
	bool has_zero;		/* key 0 lives outside the table: 0 marks empty slots */
	uint32_t zero_val;
};

static bool map_get(const struct u64map *m, uint64_t k, uint32_t *v)
{
	size_t mask, i;

	if (k == 0) {
		*v = m->zero_val;
		return m->has_zero;
	}
	if (!m->bits)
		return false;
	mask = ((size_t)1 << m->bits) - 1;
	for (i = hash64(k, m->bits); m->keys[i]; i = (i + 1) & mask) {
		if (m->keys[i] == k) {
			*v = m->vals[i];
			return true;
		}
	}
	return false;
}

static void map_place(uint64_t *keys, uint32_t *vals, unsigned int bits, uint64_t k, uint32_t v)
{
	size_t mask = ((size_t)1 << bits) - 1, i;

	for (i = hash64(k, bits); keys[i] && keys[i] != k; i = (i + 1) & mask)
		;
	keys[i] = k;
	vals[i] = v;
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
		map_place(m->keys, m->vals, m->bits, k, v);
		return 0;
	}
	/* Keep the load under one half: probes stay short. */
	if (!m->bits || (m->n + 1) * 2 > ((size_t)1 << m->bits)) {
		unsigned int nb = m->bits ? m->bits + 1 : 6;
		size_t cap = (size_t)1 << nb, oldcap = m->bits ? (size_t)1 << m->bits : 0, i;
		uint64_t *nk = calloc(cap, sizeof(*nk));
		uint32_t *nv = calloc(cap, sizeof(*nv));

		if (!nk || !nv) {
			free(nk);
			free(nv);
			return -1;
		}
		for (i = 0; i < oldcap; i++)
			if (m->keys[i])
				map_place(nk, nv, nb, m->keys[i], m->vals[i]);
		free(m->keys);
		free(m->vals);
		m->keys = nk;
		m->vals = nv;
		m->bits = nb;
	}
	map_place(m->keys, m->vals, m->bits, k, v);
	m->n++;
	return 0;
}

static void map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static size_t map_memory(const struct u64map *m)
{
	return m->bits ? ((size_t)1 << m->bits) * (sizeof(uint64_t) + sizeof(uint32_t)) : 0;
}

/* Grows a dense array to hold n + 1 elements. */
static int grow(void **arr, size_t *cap, size_t n, size_t elsize)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	p = realloc(*arr, ncap * elsize);
	if (!p)
		return -1;
	memset((char *)p + *cap * elsize, 0, (ncap - *cap) * elsize);
	*arr = p;
	*cap = ncap;
	return 0;
}

/* ---- object table: ptr -> what allocated it ------------------------------ */

#define OBJ_SEL		0x1	/* its allocation passed the filters */

/* 32 bytes: two per cache line. */
struct obj {
	uint64_t ptr;		/* 0: empty slot */
	uint64_t ts;		/* allocation time */
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
 * Live objects only, linear probing, at most 70% full, deletion by
 * shifting back the entries that follow: the table stays as small as the
 * live set, which keeps it in the caches as far as possible.
 */
struct objtab {
	struct obj *e;
	unsigned int bits;
	size_t live;
};

static struct obj *obj_find(const struct objtab *t, uint64_t ptr)
{
	size_t mask = ((size_t)1 << t->bits) - 1, i;

	for (i = hash64(ptr, t->bits); t->e[i].ptr; i = (i + 1) & mask)
		if (t->e[i].ptr == ptr)
			return &t->e[i];
	return NULL;
}

static int obj_rebuild(struct objtab *t, unsigned int nb)
{
	size_t cap = (size_t)1 << nb, oldcap = (size_t)1 << t->bits, i, j, mask = cap - 1;
	struct obj *ne = tab_alloc(cap * sizeof(*ne));

	if (!ne)
		return -1;
	for (i = 0; i < oldcap; i++) {
		const struct obj *o = &t->e[i];

		if (!o->ptr)
			continue;
		for (j = hash64(o->ptr, nb); ne[j].ptr; j = (j + 1) & mask)
			;
		ne[j] = *o;
	}
	tab_free(t->e, oldcap * sizeof(*t->e));
	t->e = ne;
	t->bits = nb;
	return 0;
}

/* The slot for ptr, growing the table first if needed: an existing entry or an empty one. */
static struct obj *obj_slot(struct objtab *t, uint64_t ptr)
{
	size_t mask, i;

	if ((t->live + 1) * 10 > ((size_t)1 << t->bits) * 7 && obj_rebuild(t, t->bits + 1))
		return NULL;
	mask = ((size_t)1 << t->bits) - 1;
	for (i = hash64(ptr, t->bits); t->e[i].ptr; i = (i + 1) & mask)
		if (t->e[i].ptr == ptr)
			break;
	return &t->e[i];
}

static void obj_delete(struct objtab *t, struct obj *o)
{
	size_t mask = ((size_t)1 << t->bits) - 1, i = (size_t)(o - t->e), j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!t->e[j].ptr)
			break;
		home = hash64(t->e[j].ptr, t->bits);
		/* Move j into the hole at i unless its home lies cyclically in (i, j]. */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			t->e[i] = t->e[j];
			i = j;
		}
	}
	memset(&t->e[i], 0, sizeof(t->e[i]));
	t->live--;
	/* Shrink when a burst is over, so that the table follows the live set down. */
	if (t->bits > OBJ_MIN_BITS && t->live * 10 < ((size_t)1 << t->bits))
		obj_rebuild(t, t->bits - 1);
}

static int obj_init(struct objtab *t)
{
	t->bits = OBJ_MIN_BITS;
	t->live = 0;
	t->e = tab_alloc(((size_t)1 << t->bits) * sizeof(*t->e));
	return t->e ? 0 : -1;
}

/*
 * The most recent FREED_WINDOW frees of slab objects, to recognize a
 * double free: a free of an address that is not live but was freed within
 * that window. Fixed size, whatever the trace's length.
 */
#ifndef FREED_BITS
#define FREED_BITS	16	/* fuzz builds shrink it so that their traces wrap the window */
#endif
#define FREED_WINDOW	(1u << FREED_BITS)

struct freed {
	uint64_t ptr;		/* 0: empty */
	uint32_t site;		/* index of the allocation's call site */
	uint32_t pos;		/* ring position of its latest free + 1, | FREED_CACHE_OBJ */
};

/* In freed.pos: the object came from kmem_cache_alloc(). */
#define FREED_CACHE_OBJ	0x80000000u

struct freedtab {
	struct freed *e;	/* 2 * FREED_WINDOW slots: at most half full */
	uint64_t *ring;		/* addresses in order of free */
	size_t head, count;
};

static struct freed *freed_find(const struct freedtab *f, uint64_t ptr)
{
	size_t mask = 2 * (size_t)FREED_WINDOW - 1, i;

	for (i = hash64(ptr, FREED_BITS + 1); f->e[i].ptr; i = (i + 1) & mask)
		if (f->e[i].ptr == ptr)
			return &f->e[i];
	return NULL;
}

static void freed_delete(struct freedtab *f, struct freed *d)
{
	size_t mask = 2 * (size_t)FREED_WINDOW - 1, i = (size_t)(d - f->e), j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!f->e[j].ptr)
			break;
		home = hash64(f->e[j].ptr, FREED_BITS + 1);
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			f->e[i] = f->e[j];
			i = j;
		}
	}
	memset(&f->e[i], 0, sizeof(f->e[i]));
}

/* Remembers a selected object's free; forgets the oldest one beyond the window. */
static void freed_add(struct freedtab *f, uint64_t ptr, uint32_t site, bool cache_obj)
{
	size_t mask = 2 * (size_t)FREED_WINDOW - 1, i;
	uint32_t pos = (uint32_t)f->head;

	if (f->count == FREED_WINDOW) {
		struct freed *old = freed_find(f, f->ring[pos]);

		/* Unless the address was freed again since, its latest entry is this one. */
		if (old && (old->pos & ~FREED_CACHE_OBJ) == pos + 1)
			freed_delete(f, old);
	} else {
		f->count++;
	}
	f->ring[pos] = ptr;
	f->head = (pos + 1) & (FREED_WINDOW - 1);
	for (i = hash64(ptr, FREED_BITS + 1); f->e[i].ptr && f->e[i].ptr != ptr; i = (i + 1) & mask)
		;
	f->e[i].ptr = ptr;
	f->e[i].site = site;
	f->e[i].pos = (pos + 1) | (cache_obj ? FREED_CACHE_OBJ : 0);
}

static int freed_init(struct freedtab *f)
{
	f->e = tab_alloc(2 * (size_t)FREED_WINDOW * sizeof(*f->e));
	f->ring = tab_alloc(FREED_WINDOW * sizeof(*f->ring));
	return f->e && f->ring ? 0 : -1;
}

/* ---- the analysis --------------------------------------------------------- */

struct errkey_slot {
	uint32_t idx1;		/* index + 1 into errors; 0: empty */
};

struct rpt {
	struct rpt_filter f;
	unsigned int flags;
	uint64_t abs_start, abs_end;	/* time window, absolute ns, once known */

	struct rpt_totals t;

	struct objtab objs;	/* live slab objects by address */
	struct objtab pages;	/* live page frames by PFN: never mixed with addresses */
	struct freedtab freed;	/* recently freed slab objects */

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
	if (obj_init(&r->objs) || obj_init(&r->pages) || freed_init(&r->freed)) {
		rpt_free(r);
		return NULL;
	}
	return r;
}

void rpt_free(struct rpt *r)
{
	if (!r)
		return;
	tab_free(r->objs.e, ((size_t)1 << r->objs.bits) * sizeof(struct obj));
	tab_free(r->pages.e, ((size_t)1 << r->pages.bits) * sizeof(struct obj));
	tab_free(r->freed.e, 2 * (size_t)FREED_WINDOW * sizeof(struct freed));
	tab_free(r->freed.ring, FREED_WINDOW * sizeof(uint64_t));
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
	free(r);
}

static struct rpt_site *site_get(struct rpt *r, uint64_t addr, uint32_t *idx)
{
	uint32_t i;

	if (map_get(&r->site_map, addr, &i)) {
		*idx = i;
		return &r->sites[i];
	}
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

static struct rpt_cache *cache_new(struct rpt *r, uint32_t *idx)
{
	if (r->ncaches >= UINT32_MAX - 1 ||
	    grow((void **)&r->caches, &r->caches_cap, r->ncaches, sizeof(*r->caches)))
		return NULL;
	*idx = (uint32_t)r->ncaches;
	memset(&r->caches[r->ncaches], 0, sizeof(r->caches[0]));
	return &r->caches[r->ncaches++];
}

static void cache_name_set(struct rpt *r, struct rpt_cache *c, const char *name)
{
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->selected = !r->f.cache_name || strcmp(r->f.cache_name, c->name) == 0;
}

/* A real cache by identity; one that no CACHE_DESC named yet gets its address. */
static struct rpt_cache *cache_get(struct rpt *r, uint64_t id, uint32_t *idx)
{
	struct rpt_cache *c;
	char name[sizeof(c->name)];
	uint32_t i;

	if (map_get(&r->cache_map, id, &i)) {
		*idx = i;
		return &r->caches[i];
	}
	c = cache_new(r, &i);
	if (!c || map_put(&r->cache_map, id, i))
		return NULL;
	c->id = id;
	snprintf(name, sizeof(name), "cache@0x%llx", (unsigned long long)id);
	cache_name_set(r, c, name);
	*idx = i;
	return c;
}

static struct rpt_cache *kmalloc_cache_get(struct rpt *r, uint32_t bytes, uint32_t *idx)
{
	struct rpt_cache *c;
	char name[sizeof(c->name)];
	uint32_t i;

	if (map_get(&r->kmalloc_map, bytes, &i)) {
		*idx = i;
		return &r->caches[i];
	}
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
	cache_name_set(r, c, name);
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
	cache_name_set(r, c, name);
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

static int slab_alloc(struct rpt *r, const struct kmt_event *ev)
{
	uint32_t site_idx, cache_idx = UINT32_MAX;
	struct rpt_cache *c = NULL;
	struct rpt_site *s;
	struct obj *o;
	bool sel;

	if (ev->type == KMT_REC_CACHE_ALLOC) {
		c = cache_get(r, ev->cache_id, &cache_idx);
		if (!c)
			return -1;
		/* Undescribed (its CACHE_DESC came before the trace): sizes from its events. */
		if (!c->described && !c->size) {
			c->object_size = ev->bytes_req;
			c->size = ev->bytes_alloc;
		}
	} else if (ev->bytes_alloc) {
		c = kmalloc_cache_get(r, ev->bytes_alloc, &cache_idx);
		if (!c)
			return -1;
	}
	sel = cpu_pid_ok(r, ev) && ev->bytes_req >= r->f.min_size &&
	      (!r->f.cache_name || (c && c->selected));

	s = site_get(r, ev->call_site, &site_idx);
	if (!s)
		return -1;

	if (sel) {
		bool xnode = ev->node != KMT_NODE_ANY && ev->node != ev->cpu_node;

		s->hits++;
		s->kinds |= 1u << ev->type;
		r->t.allocs++;
		if (ev->flags & KMT_F_CLAMPED)
			r->t.clamped_allocs++;
		if (c)
			c->allocs++;
		if (xnode) {
			s->cross_node++;
			r->t.cross_node_allocs++;
		}
		if (!ev->ptr) {
			s->failed++;
			r->t.failed_allocs++;
			if (c)
				c->failed++;
			return 0;
		}
		s->bytes_req += ev->bytes_req;
		s->bytes_alloc += ev->bytes_alloc;
		r->t.bytes_req += ev->bytes_req;
		r->t.bytes_alloc += ev->bytes_alloc;
		if (c) {
			c->bytes_req += ev->bytes_req;
			c->bytes_alloc += ev->bytes_alloc;
		}
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
	} else if (!ev->ptr) {
		return 0;
	}

	o = obj_slot(&r->objs, ev->ptr);
	if (!o)
		return -1;
	if (!o->ptr) {
		r->objs.live++;
	} else if (o->state & OBJ_SEL) {
		/* The address came back while live: its free was not traced. */
		r->t.implicit_frees++;
	}
	*o = (struct obj){
		.ptr = ev->ptr, .ts = ev->timestamp, .site = site_idx, .cache = cache_idx,
		.bytes = ev->bytes_alloc, .cpu = ev->cpu, .kind = ev->type,
		.state = sel ? OBJ_SEL : 0,
	};
	return 0;
}

static int slab_free(struct rpt *r, const struct kmt_event *ev)
{
	struct obj *o = obj_find(&r->objs, ev->ptr);
	struct rpt_site *s;

	if (!o) {
		struct freed *d = freed_find(&r->freed, ev->ptr);
		struct rpt_cache *c = NULL;
		uint32_t ci;

		if (d) {
			/* Freed before within the trace, not allocated since. */
			r->t.frees++;
			r->t.double_frees++;
			return error_add(r, RPT_ERR_DOUBLE_FREE, r->sites[d->site].addr,
					 ev->call_site, d->pos & FREED_CACHE_OBJ);
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
		r->t.frees++;
		r->t.untracked_frees++;
		if (c)
			c->untracked_frees++;
		return 0;
	}
	if (!(o->state & OBJ_SEL)) {
		obj_delete(&r->objs, o);
		return 0;
	}
	s = &r->sites[o->site];
	r->t.frees++;
	r->t.bytes_freed += o->bytes;
	s->frees++;
	s->bytes_freed += o->bytes;
	if (o->cpu != ev->cpu) {
		s->cross_cpu_frees++;
		r->t.cross_cpu_frees++;
	}
	if (o->cache != UINT32_MAX) {
		struct rpt_cache *c = &r->caches[o->cache];

		c->frees++;
		c->bytes_freed += o->bytes;
	}
	if (r->flags & RPT_PTR_VIEW) {
		struct rpt_ptr *p = ptr_get(r, ev->ptr);

		if (!p)
			return -1;
		p->frees++;
		if (o->cpu != ev->cpu)
			p->cross_cpu_frees++;
	}
	if (o->kind == KMT_REC_CACHE_ALLOC && ev->type == KMT_REC_KFREE) {
		if (error_add(r, RPT_ERR_KFREE_OF_CACHE_OBJ, s->addr, ev->call_site, false))
			return -1;
	} else if (o->kind == KMT_REC_KMALLOC && ev->type == KMT_REC_CACHE_FREE) {
		if (error_add(r, RPT_ERR_CACHE_FREE_OF_KMALLOC, s->addr, ev->call_site, false))
			return -1;
	} else if (o->kind == KMT_REC_CACHE_ALLOC && ev->type == KMT_REC_CACHE_FREE &&
		   r->caches[o->cache].id != ev->cache_id) {
		if (error_add(r, RPT_ERR_CACHE_MISMATCH, s->addr, ev->call_site, false))
			return -1;
	}
	freed_add(&r->freed, ev->ptr, o->site, o->kind == KMT_REC_CACHE_ALLOC);
	obj_delete(&r->objs, o);
	return 0;
}

static bool page_sel(const struct rpt *r, const struct kmt_event *ev)
{
	return cpu_pid_ok(r, ev) && !r->f.cache_name && ev->bytes_alloc >= r->f.min_size;
}

static int page_alloc(struct rpt *r, const struct kmt_event *ev)
{
	bool sel = page_sel(r, ev);
	struct obj *o;

	if (sel) {
		r->t.page_allocs++;
		if (!ev->ptr) {
			r->t.page_failed++;
			return 0;
		}
		r->t.page_bytes_alloc += ev->bytes_alloc;
	}
	if (!ev->ptr)
		return 0;
	o = obj_slot(&r->pages, ev->ptr);
	if (!o)
		return -1;
	if (!o->ptr)
		r->pages.live++;
	*o = (struct obj){
		.ptr = ev->ptr, .ts = ev->timestamp, .site = UINT32_MAX, .cache = UINT32_MAX,
		.bytes = ev->bytes_alloc, .cpu = ev->cpu, .kind = ev->type,
		.state = sel ? OBJ_SEL : 0,
	};
	return 0;
}

static int page_free(struct rpt *r, const struct kmt_event *ev)
{
	struct obj *o = obj_find(&r->pages, ev->ptr);

	if (!o) {
		if (page_sel(r, ev)) {
			r->t.page_frees++;
			r->t.page_untracked_frees++;
		}
		return 0;
	}
	if (o->state & OBJ_SEL) {
		r->t.page_frees++;
		r->t.page_bytes_freed += o->bytes;
	}
	obj_delete(&r->pages, o);
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

int rpt_feed(struct rpt *r, const union kmt_rec *rec)
{
	uint64_t ts = rec->c.timestamp;

	if (!r->t.seen_any) {
		r->t.seen_any = true;
		r->t.first_ts = ts;
		r->abs_start = ts + r->f.t_start;
		r->abs_end = r->f.t_end > UINT64_MAX - ts ? UINT64_MAX : ts + r->f.t_end;
		if (r->abs_start < ts)
			r->abs_start = UINT64_MAX;
	}
	r->t.records++;
	/*
	 * Cache names hold whatever the window, so that events in it are
	 * named; everything else outside the window is as if not traced.
	 */
	if (rec->c.type == KMT_REC_CACHE_DESC)
		return cache_desc(r, &rec->cache);
	if (r->f.has_time && (ts < r->abs_start || ts > r->abs_end))
		return 0;
	if (ts > r->t.last_ts)
		r->t.last_ts = ts;

	switch (rec->c.type) {
	case KMT_REC_KMALLOC:
	case KMT_REC_CACHE_ALLOC:
		return slab_alloc(r, &rec->ev);
	case KMT_REC_KFREE:
	case KMT_REC_CACHE_FREE:
		if (!rec->ev.ptr)
			return 0;
		return slab_free(r, &rec->ev);
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

/* Asks for the table slots record rec will touch; k: frees before it in the batch. */
static inline void prefetch_rec(const struct rpt *r, const union kmt_rec *rec, size_t k)
{
	unsigned int type = rec->c.type;
	const struct objtab *t;

	if (type < KMT_REC_KMALLOC || type > KMT_REC_PAGE_FREE)
		return;
	t = type == KMT_REC_PAGE_ALLOC || type == KMT_REC_PAGE_FREE ? &r->pages : &r->objs;
	__builtin_prefetch(&t->e[hash64(rec->ev.ptr, t->bits)]);
	if (type == KMT_REC_KFREE || type == KMT_REC_CACHE_FREE) {
		uint64_t old = r->freed.ring[(r->freed.head + k) & (FREED_WINDOW - 1)];

		__builtin_prefetch(&r->freed.e[hash64(rec->ev.ptr, FREED_BITS + 1)], 1);
		if (old)
			__builtin_prefetch(&r->freed.e[hash64(old, FREED_BITS + 1)], 1);
	}
}

#define PREFETCH_AHEAD	16

int rpt_feed_many(struct rpt *r, const union kmt_rec *recs, size_t n)
{
	size_t i, ahead = 0, pending = 0;

	/*
	 * The tables are bigger than the caches and each event lands in a
	 * random slot: asking for the slots a few records ahead lets the
	 * memory system fetch them while the records before are processed,
	 * instead of one miss after another. A free also touches the
	 * recent-frees table twice: where it goes, and where the free it
	 * pushes out of the window was.
	 */
	for (i = 0; i < n; i++) {
		unsigned int type;

		/* pending: frees between record i and the one prefetched. */
		for (; ahead < n && ahead < i + PREFETCH_AHEAD; ahead++) {
			type = recs[ahead].c.type;
			prefetch_rec(r, &recs[ahead], pending);
			pending += type == KMT_REC_KFREE || type == KMT_REC_CACHE_FREE;
		}
		type = recs[i].c.type;
		pending -= type == KMT_REC_KFREE || type == KMT_REC_CACHE_FREE;
		if (rpt_feed(r, &recs[i]))
			return -1;
	}
	return 0;
}

int rpt_finish(struct rpt *r)
{
	size_t cap, i;

	if (r->finished)
		return 0;
	r->finished = true;
	cap = (size_t)1 << r->objs.bits;
	for (i = 0; i < cap; i++) {
		const struct obj *o = &r->objs.e[i];
		struct rpt_site *s;

		if (!o->ptr || !(o->state & OBJ_SEL))
			continue;
		s = &r->sites[o->site];
		if (!s->out_count || o->ts < s->out_oldest_ts)
			s->out_oldest_ts = o->ts;
		s->out_count++;
		s->out_bytes += o->bytes;
		r->t.outstanding++;
		r->t.outstanding_bytes += o->bytes;
		if (o->cache != UINT32_MAX) {
			r->caches[o->cache].live++;
			r->caches[o->cache].live_bytes += o->bytes;
		}
	}
	cap = (size_t)1 << r->pages.bits;
	for (i = 0; i < cap; i++) {
		const struct obj *o = &r->pages.e[i];

		if (o->ptr && (o->state & OBJ_SEL)) {
			r->t.page_outstanding++;
			r->t.page_outstanding_bytes += o->bytes;
		}
	}
	return 0;
}

const struct rpt_totals *rpt_totals(const struct rpt *r)
{
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

size_t rpt_memory(const struct rpt *r)
{
	return sizeof(*r) +
	       ((size_t)1 << r->objs.bits) * sizeof(struct obj) +
	       ((size_t)1 << r->pages.bits) * sizeof(struct obj) +
	       2 * (size_t)FREED_WINDOW * sizeof(struct freed) +
	       FREED_WINDOW * sizeof(uint64_t) +
	       r->sites_cap * sizeof(*r->sites) + map_memory(&r->site_map) +
	       r->caches_cap * sizeof(*r->caches) + map_memory(&r->cache_map) +
	       map_memory(&r->kmalloc_map) +
	       r->errors_cap * sizeof(*r->errors) +
	       (r->err_bits ? ((size_t)1 << r->err_bits) * sizeof(*r->err_slots) : 0) +
	       r->ptrs_cap * sizeof(*r->ptrs) + map_memory(&r->ptr_map) +
	       r->lost_ncpus * sizeof(*r->lost_cpu);
}
