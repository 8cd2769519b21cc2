/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report_core_int.h - what the files of the analysis share, not part of
 * its API (report_core.h): struct rpt, the map and object table it keeps
 * its tallies in, and the helpers one file calls in another. The helpers
 * every record goes through are static inline here, so that rpt_feed()
 * keeps them inline whichever file they belong to.
 *
 * The object table's sizes (OBJ_MIN_BITS, FREED_BITS) are read by inline
 * code here: every file including this header must be built with the same
 * ones (the fuzz builds compile them all again with small tables,
 * tests/fuzz/fuzz.mk).
 */
#ifndef REPORT_CORE_INT_H
#define REPORT_CORE_INT_H

#include "core/report_core.h"

/* Golden-ratio multiplier: spreads aligned addresses over the whole table. */
static inline size_t hash_shift(uint64_t k, unsigned int shift)
{
	return (size_t)((k * 0x9e3779b97f4a7c15ULL) >> shift);
}

static inline size_t hash64(uint64_t k, unsigned int bits)
{
	return hash_shift(k, 64 - bits);
}

/* ---- u64 -> u32 map (call sites, caches, per-address tallies): rpt_map.c ---- */

/* Key and value side by side: a lookup touches one cache line. */
struct u64slot {
	uint64_t key;		/* 0: empty */
	uint32_t val;
	uint32_t pad;
};

struct u64map {
	struct u64slot *e;
	unsigned int bits;	/* capacity is 1 << bits; 0 while empty */
	/* 64 - bits and capacity - 1, for the lookup (shift 0 while empty). */
	unsigned int shift;
	size_t mask;
	size_t n;
	bool has_zero;		/* key 0 lives outside the table: 0 marks empty slots */
	uint32_t zero_val;
};

static inline bool map_get(const struct u64map *m, uint64_t k, uint32_t *v)
{
	size_t i;

	if (__builtin_expect(k == 0, 0)) {
		*v = m->zero_val;
		return m->has_zero;
	}
	if (!m->shift)
		return false;
	for (i = hash_shift(k, m->shift); m->e[i].key; i = (i + 1) & m->mask) {
		if (m->e[i].key == k) {
			*v = m->e[i].val;
			return true;
		}
	}
	return false;
}

/* Inserts or replaces. 0, or -1 when out of memory. */
int rpt_map_put(struct u64map *m, uint64_t k, uint32_t v);
void rpt_map_free(struct u64map *m);
size_t rpt_map_memory(const struct u64map *m);

/*
 * Grows a dense array to hold n + 1 elements. Elements start on cache
 * lines, so that a call site's counters share one.
 */
int rpt_grow(void **arr, size_t *cap, size_t n, size_t elsize);

/* ---- object table: ptr -> what allocated it, or when it was freed: rpt_objects.c */

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
#define OBJ_FREED	3	/* a selected object's free; ts is the free's number */
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
 * Freed objects are remembered, to recognize a double free, while their
 * free is among the trace's last FREED_WINDOW slab frees: every slab
 * free record of an address the analysis is fed, whatever it finds
 * (tracked, untracked, a double free) and whatever the filters select,
 * so that which frees are remembered depends on the records' order
 * alone, not on what the analysis found for other objects: an analysis
 * divided by address numbers them without seeing those objects.
 * Fixed, whatever the trace's length: the table holds at most the live
 * objects and this many freed.
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
	unsigned int shift;	/* 64 - bits, for the lookups */
	size_t mask;		/* capacity - 1 */
	size_t used;		/* slots with ptr != 0, whatever their state */
	size_t full;		/* used beyond this: rebuild (70% of the slots) */
	uint64_t frees;		/* slab free records of an address fed so far */
};

/*
 * A freed object is remembered while its free is among the last
 * FREED_WINDOW slab frees: deterministic, whatever the table's size.
 * Past that, or DEAD, a slot is as good as empty.
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
	size_t i;

	for (i = hash_shift(ptr, t->shift); t->e[i].ptr; i = (i + 1) & t->mask)
		if (t->e[i].ptr == ptr)
			return &t->e[i];
	return NULL;
}

/* Grown, cleaned of reusable slots or shrunk, before it fills. 0, or -1 (memory). */
int rpt_obj_rebuild(struct objtab *t);

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

	if (__builtin_expect(t->used >= t->full, 0) && rpt_obj_rebuild(t))
		return NULL;
	mask = t->mask;
	home = hash_shift(ptr, t->shift);
	for (i = home; t->e[i].ptr; i = (i + 1) & mask)
		if (t->e[i].ptr == ptr)
			return &t->e[i];
	for (; home != i; home = (home + 1) & mask)
		if (obj_reusable(t, &t->e[home]))
			return &t->e[home];
	t->used++;
	return &t->e[i];
}

/* An empty table of 1 << OBJ_MIN_BITS slots. 0, or -1 (memory). */
int rpt_obj_init(struct objtab *t);
/* Starts keeping each object's stack. 0, or -1 (memory). */
int rpt_obj_stk_init(struct objtab *t);
void rpt_obj_fini(struct objtab *t);
size_t rpt_obj_memory(const struct objtab *t);

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

	/*
	 * RPT_SAMPLES: the tallies, keyed (site, stack) and (cache, CPU)
	 * by two ids, each pair of ids keying one sample; last_sample is
	 * the latest selected allocation's, for a large kmalloc's watch.
	 */
	struct rpt_sample *smp;
	size_t nsmp, smp_cap;
	struct u64map smp_where, smp_what, smp_map;
	uint32_t smp_nwhere, smp_nwhat, last_sample;

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
		uint32_t dup_sample;	/* RPT_SAMPLES: the sample it counted in */
		int32_t dup_node;
		uint64_t dup_call_site;
	} *pend;
	unsigned int npend_cpus, npend;
	/* The event page_pair() is on is a failed kmalloc's second event: not watched in turn. */
	bool fail_second;
	uint64_t dmap_delta;	/* kmalloc address - (PFN << page_shift) of the direct map */
	bool dmap_known;

	bool finished;
	/*
	 * A divided analysis' shard (rpt_shards.c): the record being fed,
	 * counted from the trace's first, which every entry made remembers.
	 */
	uint64_t pos;
};

/* ---- per event, inline wherever they are called ------------------------------ */

static inline bool cpu_pid_ok(const struct rpt *r, const struct kmt_event *ev)
{
	if (r->f.cpus && (ev->cpu >= r->f.ncpus || !r->f.cpus[ev->cpu]))
		return false;
	if (r->f.has_pid && ev->pid != r->f.pid)
		return false;
	return true;
}

static inline uint64_t since_start(const struct rpt *r, uint64_t ts)
{
	return ts > r->t.first_ts ? ts - r->t.first_ts : 0;
}

/*
 * The entries made the first time return a pointer into their array, not
 * an index through a pointer: the caller's index would have to live in
 * memory across every event for the rare call that sets it.
 */
struct rpt_site *rpt_site_new(struct rpt *r, uint64_t addr);

static inline struct rpt_site *site_get(struct rpt *r, uint64_t addr, uint32_t *idx)
{
	struct rpt_site *s;
	uint32_t i;

	if (map_get(&r->site_map, addr, &i)) {
		*idx = i;
		return &r->sites[i];
	}
	s = rpt_site_new(r, addr);
	if (s)
		*idx = (uint32_t)(s - r->sites);
	return s;
}

static inline unsigned int log2_of(uint32_t bytes)
{
	return bytes ? 31u - (unsigned int)__builtin_clz(bytes) : 0;
}

/* The order's tally of a page block of bytes (orders below 0 count as 0). */
static inline struct rpt_page_tally *pg_order(struct rpt *r, uint32_t bytes)
{
	unsigned int l = log2_of(bytes);

	return &r->pg_order[l > r->page_shift ? l - r->page_shift : 0];
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

/* ---- call sites, caches, addresses (rpt_sites.c) ----------------------------- */

/* A real cache by identity; one that no CACHE_DESC named yet gets its address. */
struct rpt_cache *rpt_cache_new_undescribed(struct rpt *r, uint64_t id);
struct rpt_cache *rpt_cache_get(struct rpt *r, uint64_t id);
/* The kmalloc-N pseudo-cache of kmalloc()s that reserved bytes, the first time. */
struct rpt_cache *rpt_kmalloc_cache_new(struct rpt *r, uint32_t bytes);
int rpt_cache_desc(struct rpt *r, const struct kmt_cache_desc *d);
/* Room in r->stk, zeroed, for the tallies of stack index i (report_core.c). 0, or -1. */
int rpt_stk_grow(struct rpt *r, size_t i);

/* A new address's tallies (RPT_PTR_VIEW) (rpt_sites.c). NULL when out of memory. */
struct rpt_ptr *rpt_ptr_new(struct rpt *r, uint64_t ptr);

/* The tallies of ptr (--alloc), made when it is new. NULL when out of memory. */
static inline struct rpt_ptr *rpt_ptr_get(struct rpt *r, uint64_t ptr)
{
	uint32_t i;

	if (map_get(&r->ptr_map, ptr, &i))
		return &r->ptrs[i];
	return rpt_ptr_new(r, ptr);
}

/* ---- errors (rpt_errors.c) ----------------------------------------------------- */

int rpt_error_add(struct rpt *r, enum rpt_err_kind kind, uint64_t alloc_site,
		  uint64_t free_site, bool uncertain);
/* Whether a second free with no allocation in between may be legitimate. */
bool rpt_double_free_uncertain(const struct rpt *r, const struct obj *o);
/* The error, if any, of a tracked free of o by a call of another kind or cache. 0 or -1. */
int rpt_free_errors(struct rpt *r, const struct kmt_event *ev, const struct obj *o);

/* ---- the page allocator (rpt_pages.c) ------------------------------------------ */

int rpt_page_alloc(struct rpt *r, const struct kmt_event *ev);
int rpt_page_free(struct rpt *r, const struct kmt_event *ev);
/* The end-of-trace figures of the live page blocks (rpt_finish()). */
void rpt_pages_finish(struct rpt *r);

/* ---- large kmallocs (rpt_large.c) ---------------------------------------------- */

bool rpt_page_pair(struct rpt *r, const struct kmt_event *ev);
/* A page allocation of more than two pages: the CPU's next allocation may be its kmalloc. */
int rpt_page_pend(struct rpt *r, const struct kmt_event *ev);
int rpt_dup_watch(struct rpt *r, const struct kmt_event *ev);
int rpt_fail_watch(struct rpt *r, const struct kmt_event *ev, uint32_t site, uint32_t cache);

/* ---- the end of the trace (rpt_results.c) -------------------------------------- */

/* The totals that are sums over call sites: summed at the end rather than per event. */
void rpt_totals_sum(struct rpt *r);

/* rpt_samples.c (RPT_SAMPLES) */
int rpt_sample_alloc(struct rpt *r, const struct kmt_event *ev, uint32_t site, uint32_t cache);
/* A checkpoint's SUM record, counted as its allocations would have been. 0, or -1 (memory). */
int rpt_sample_sum(struct rpt *r, const struct kmt_sum *sum, uint32_t site, uint32_t stack,
		   uint32_t cache);
void rpt_sample_take_back(struct rpt *r, uint32_t sample, uint64_t bytes_req,
			  const uint32_t *bytes_alloc);
int rpt_sample_live(struct rpt *r, const struct obj *o, uint32_t stack);
void rpt_samples_free(struct rpt *r);
size_t rpt_samples_memory(const struct rpt *r);

#endif /* REPORT_CORE_INT_H */
