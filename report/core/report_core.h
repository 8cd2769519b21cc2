/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report_core.h - the analysis behind kmemtrace-report: folds records, fed
 * in merged time order, into per call site, per cache, per object and error
 * tallies. Memory grows with live objects, call sites and caches, never
 * with the length of the trace.
 */
#ifndef REPORT_CORE_H
#define REPORT_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kmt_reader.h"
#include "kmt_stacks.h"
#include "core/report_life.h"
#include "core/report_slab.h"

/* Which allocations count. A free counts when its object's allocation did. */
struct rpt_filter {
	const uint8_t *cpus;	/* cpus[c] != 0 selects CPU c; NULL: all CPUs */
	size_t ncpus;		/* entries in cpus; CPUs beyond are not selected */
	bool has_pid;
	uint32_t pid;
	const char *cache_name;	/* cache name, "kmalloc-N" for kmalloc; NULL: all */
	/*
	 * The names SLUB merged (report_slab.h): cache_name also selects a
	 * cache it names by another of its names. NULL: by its own name only.
	 */
	const struct rpt_slab *slab;
	uint64_t min_size;	/* bytes_req at least this; 0: all */
	bool has_time;		/* only records in [start, end] ns after the first */
	uint64_t t_start, t_end;
};

/* Feature switches. */
#define RPT_PTR_VIEW	0x1u	/* keep per-address tallies (memory: distinct addresses) */
/*
 * What the module recorded (its coverage, report_slab.h), for the certainty
 * of a double free: an allocation between the two frees through a path
 * the trace misses would make the second free a legitimate one.
 * RPT_CACHE_ALLOCS_SEEN: every path handing out kmem_cache objects is in
 * the trace (kmem_cache_alloc_bulk() too), so a double free of a cache
 * object is certain; without it, it is uncertain, as traces of modules
 * before ABI 1.1 are. RPT_KMALLOC_ALLOCS_MISSED: a path handing out
 * kmalloc objects (kmalloc_nolock()) is not, so a double free of a
 * kmalloc object is uncertain.
 */
#define RPT_CACHE_ALLOCS_SEEN	0x2u
#define RPT_KMALLOC_ALLOCS_MISSED 0x4u
/*
 * The traced kernel's kfree() takes kmem_cache_alloc() objects: its
 * kernel-doc says so from 6.4 (Debian's 6.12 and 7.3 do; 6.1 says "don't
 * free memory not originally allocated by kmalloc()"). Such frees are then
 * counted (kfree_cache_objects) but are no error.
 */
#define RPT_KFREE_TAKES_CACHE_OBJS 0x8u
/* Keep lifetimes per call site and cache (report_life.h): 4 KiB a site. */
#define RPT_LIFETIMES	0x10u
/* Keep allocations and frees over time per call site (report_life.h): 2 KiB a site. */
#define RPT_TIMELINE	0x20u
/*
 * Keep tallies per call site, stack, cache and CPU together (struct
 * rpt_sample): what a profile (--pprof) labels each sample with.
 */
#define RPT_SAMPLES	0x40u

enum rpt_err_kind {
	RPT_ERR_KFREE_OF_CACHE_OBJ,	/* kfree() of a kmem_cache_alloc() object */
	RPT_ERR_CACHE_FREE_OF_KMALLOC,	/* kmem_cache_free() of a kmalloc() object */
	RPT_ERR_CACHE_MISMATCH,		/* kmem_cache_free() to another cache */
	RPT_ERR_DOUBLE_FREE,		/* free of an object already freed in the trace */
	RPT_ERR_SHORT_ALLOC,		/* bytes_alloc < bytes_req, ptr != 0 */
	RPT_ERR_NKINDS
};

/* The JSON "kind" of an error. */
const char *rpt_err_name(enum rpt_err_kind k);

/*
 * The counters an event updates come first and fill one cache line with
 * the address; the rarer ones follow.
 */
struct rpt_site {
	uint64_t addr;		/* call_site of the allocations */
	uint64_t hits;		/* allocation events, failed ones included */
	uint64_t bytes_req;	/* successful allocations */
	uint64_t bytes_alloc;
	uint64_t frees;		/* frees of objects allocated here */
	uint64_t bytes_freed;
	uint64_t cross_cpu_frees; /* of which on another CPU (perf's ping-pong) */
	uint32_t kinds;		/* 1 << KMT_REC_KMALLOC | 1 << KMT_REC_CACHE_ALLOC */
	uint64_t failed;	/* of which ptr == 0 */
	uint64_t cross_node;	/* allocations asking for another node than the CPU's */
	uint64_t out_count;	/* still live at the end (rpt_finish) */
	uint64_t out_bytes;
	uint64_t out_oldest_ts;	/* alloc time of the oldest live one */
	uint64_t first;		/* divided analysis: the record that made it (rpt_shards.c) */
} __attribute__((aligned(64)));

struct rpt_cache {
	/* Updated per event: together, ahead of the rest. */
	uint64_t allocs;	/* allocation events, failed ones included */
	uint64_t bytes_req, bytes_alloc;
	uint64_t frees;		/* frees of objects allocated from it */
	uint64_t bytes_freed;
	uint64_t failed;
	uint64_t untracked_frees; /* kmem_cache_free() naming it, of unseen objects */
	uint64_t id;		/* cache_id; for a kmalloc pseudo-cache its size */
	bool pseudo;		/* kmalloc-N: kmalloc events by bytes_alloc */
	bool described;		/* a CACHE_DESC named it */
	bool selected;		/* passes the --cache-name filter */
	char name[KMT_CACHE_NAME_LEN + 8];
	uint32_t object_size, size;
	uint64_t live, live_bytes; /* at the end (rpt_finish) */
	/*
	 * Divided analysis (rpt_shards.c): the record that made it, the one
	 * that last set the sizes of an undescribed cache, and how many
	 * caches at its address a CACHE_DESC replaced before it.
	 */
	uint64_t first, size_pos;
	uint32_t gen;
};

struct rpt_error {
	enum rpt_err_kind kind;
	uint64_t alloc_site;	/* call site of the allocation */
	uint64_t free_site;	/* call site of the free, 0 for short_allocation */
	uint64_t count;
	/*
	 * A double free of an object of a kind some allocation path of which
	 * the trace misses (RPT_CACHE_ALLOCS_SEEN, RPT_KMALLOC_ALLOCS_MISSED):
	 * an allocation may have come between the two frees.
	 */
	bool uncertain;
	uint64_t first;		/* divided analysis: the record that made it */
};

/* Per-address view (RPT_PTR_VIEW), like perf kmem --alloc. */
struct rpt_ptr {
	uint64_t ptr;
	uint64_t site;		/* call site of the latest allocation */
	uint64_t hits, bytes_req, bytes_alloc;
	uint64_t frees, cross_cpu_frees;
	uint64_t first;		/* divided analysis: the record that made it */
};

/*
 * Per distinct kernel stack (index of rpt_stacks()): the selected slab
 * allocations whose event carried it, as struct rpt_site counts them.
 */
struct rpt_stack {
	uint64_t hits;		/* allocation events, failed ones included */
	uint64_t failed;
	uint64_t bytes_req, bytes_alloc;	/* successful allocations */
	uint64_t frees, bytes_freed;	/* tracked frees of objects allocated here */
	uint64_t out_count, out_bytes;	/* still live at the end (rpt_finish) */
	/*
	 * Slab free events that carried this stack (stack_frees=1), those
	 * rpt_totals.frees counts: free_bytes are the bytes of the objects
	 * whose allocation the trace holds; free_no_alloc of them had none
	 * (allocated before the trace, its allocation lost, or a double free).
	 */
	uint64_t free_hits, free_bytes, free_no_alloc;
};

/*
 * The selected slab allocations of one call site, stack (KMT_STACK_NONE:
 * without one), cache (UINT32_MAX: none) and CPU, as rpt_site and
 * rpt_stack count them (RPT_SAMPLES).
 */
struct rpt_sample {
	uint64_t hits, failed;	/* allocation events, and of them failed ones */
	uint64_t bytes_req, bytes_alloc;	/* successful allocations */
	uint64_t out_count, out_bytes;	/* still live at the end (rpt_finish) */
	uint32_t site;		/* index of rpt_site() */
	uint32_t stack;		/* index of rpt_stacks(), or KMT_STACK_NONE */
	uint32_t cache;		/* index of rpt_cache(), or UINT32_MAX */
	uint16_t cpu;
};

struct rpt_totals {
	uint64_t records;	/* records fed, of every type */
	uint64_t allocs;	/* slab allocation events, failed ones included */
	uint64_t failed_allocs;
	uint64_t bytes_req, bytes_alloc;	/* successful allocations */
	uint64_t frees;		/* slab free events counted (tracked + untracked + double) */
	uint64_t bytes_freed;	/* bytes of the tracked frees */
	uint64_t cross_cpu_frees;
	uint64_t cross_node_allocs;
	uint64_t untracked_frees;	/* frees of objects not allocated in the trace */
	uint64_t double_frees;
	uint64_t kfree_cache_objects;	/* kfree() of kmem_cache objects, error or not */
	uint64_t implicit_frees;	/* address allocated again while live: free not traced */
	uint64_t clamped_allocs;	/* byte counts saturated at U32_MAX (KMT_F_CLAMPED) */
	/* Of allocs and frees, events recorded by the module's probes (KMT_F_PROBED). */
	uint64_t probed_allocs, probed_frees;
	uint64_t outstanding, outstanding_bytes;	/* at the end (rpt_finish) */
	uint64_t lost, lost_markers;
	uint64_t cache_descs;
	uint64_t page_allocs, page_failed, page_bytes_alloc;
	uint64_t page_frees, page_untracked_frees, page_bytes_freed;
	uint64_t page_outstanding, page_outstanding_bytes;
	/*
	 * Of the page allocations, those that were a large kmalloc() (above
	 * KMALLOC_MAX_CACHE_SIZE, served by the page allocator): the same
	 * memory as a kmalloc event, so counted once in the sum of both.
	 */
	uint64_t page_kmalloc_allocs, page_kmalloc_bytes, page_kmalloc_frees;
	uint64_t page_kmalloc_live, page_kmalloc_live_bytes;	/* at the end */
	/*
	 * Large kmallocs traced twice (6.12, 7.3): their first events, not
	 * counted anywhere (by stack neither), and of them those marked
	 * KMT_F_NO_STACK, out of no_stack_allocs: the module counted them.
	 */
	uint64_t kmalloc_dup_events, kmalloc_dup_no_stack;
	uint64_t kmalloc_dup_failed;	/* of kmalloc_dup_events, failed ones (both NULL) */
	/*
	 * Stacks (1.2). Of allocs, those carrying a stack the trace holds; the
	 * others are without one, of which no_stack_allocs said so
	 * (KMT_F_NO_STACK: the module's table was full, no frame, no room) and
	 * unknown_stack_allocs named an id no whole stack of their CPU had
	 * (its slots lost, or written before the trace began).
	 */
	uint64_t stack_allocs, no_stack_allocs, unknown_stack_allocs;
	/*
	 * Frees (stack_frees=1) and page events without a stack the same
	 * ways, on the CPUs and pids selected.
	 */
	uint64_t other_no_stack, other_unknown_stack;
	/*
	 * Of the frees counted in frees, those carrying a stack the trace
	 * holds, marked as having none, and naming one it does not hold.
	 */
	uint64_t stack_frees, no_stack_frees, unknown_stack_frees;
	uint64_t stack_slots;	/* KMT_REC_STACK records fed */
	/*
	 * (1.3) A rotated trace's checkpoint: SUM records fed, the
	 * allocations they stand for, and of those the ones no tally took:
	 * a filter their key cannot decide (--pid, --min-size), or kmallocs
	 * of several sizes (no kmalloc-N pseudo-cache to count them in).
	 */
	uint64_t sums, sum_allocs, sum_unfiltered, sum_no_cache;
	uint64_t first_ts;	/* of the first record fed (the trace's start) */
	uint64_t last_ts;	/* of the last record counted: the end for ages */
	bool seen_any;
};

struct rpt;

/* NULL when out of memory. f may be NULL (everything selected). */
struct rpt *rpt_new(const struct rpt_filter *f, unsigned int flags);
void rpt_free(struct rpt *r);

/* Feeds one record, in merged time order. 0, or -1 when out of memory. */
int rpt_feed(struct rpt *r, const union kmt_rec *rec);

/* Feeds n records in order. 0, or -1 when out of memory. */
int rpt_feed_many(struct rpt *r, const union kmt_rec *recs, size_t n);
/* The same for records given by address (kmt_merge_next_batch()). 0 or -1. */
int rpt_feed_refs(struct rpt *r, const union kmt_rec *const *recs, size_t n);

/*
 * What was fed so far has been shown (an interval closed): a large kmalloc
 * traced twice whose first event came before then counts there, at the
 * allocator's call site and stack, and its second event is not counted,
 * rather than taken back from a table already shown.
 */
void rpt_shown(struct rpt *r);

/* Computes the end-of-trace figures (outstanding, live). 0 or -1 (memory). */
int rpt_finish(struct rpt *r);

/* The RPT_* switches the report was made with. */
unsigned int rpt_flags(const struct rpt *r);
const struct rpt_totals *rpt_totals(const struct rpt *r);
size_t rpt_nsites(const struct rpt *r);
const struct rpt_site *rpt_site(const struct rpt *r, size_t i);
const struct rpt_site *rpt_site_find(const struct rpt *r, uint64_t addr);
size_t rpt_ncaches(const struct rpt *r);
const struct rpt_cache *rpt_cache(const struct rpt *r, size_t i);
/* By name (first match), or NULL. */
const struct rpt_cache *rpt_cache_find(const struct rpt *r, const char *name);
size_t rpt_nerrors(const struct rpt *r);
const struct rpt_error *rpt_error(const struct rpt *r, size_t i);
/* Sum of counts of one kind. */
uint64_t rpt_error_count(const struct rpt *r, enum rpt_err_kind k);
size_t rpt_nptrs(const struct rpt *r);
const struct rpt_ptr *rpt_ptr(const struct rpt *r, size_t i);
/* Records lost on a CPU. */
uint64_t rpt_lost_on_cpu(const struct rpt *r, unsigned int cpu);
/* Highest CPU number + 1 seen in LOST records. */
unsigned int rpt_lost_ncpus(const struct rpt *r);

/*
 * Whether the trace has stacks: any stack record, or an event saying it
 * has none or naming one (then "events without a stack" is worth saying).
 */
bool rpt_has_stacks(const struct rpt *r);
/* Whether a counted free asked for a stack (stack_frees=1): with one, marked or unknown. */
bool rpt_has_free_stacks(const struct rpt *r);
/* The distinct stacks (frames by index); rpt_stack(r, i) their tallies, i < rpt_nstacks(). */
const struct kmt_stacks *rpt_stacks(const struct rpt *r);
size_t rpt_nstacks(const struct rpt *r);
const struct rpt_stack *rpt_stack(const struct rpt *r, size_t i);

/* The tallies by call site, stack, cache and CPU (RPT_SAMPLES), i < rpt_nsamples(). */
size_t rpt_nsamples(const struct rpt *r);
const struct rpt_sample *rpt_sample(const struct rpt *r, size_t i);

/* Bytes of memory the analysis holds (tests check it does not grow with length). */
size_t rpt_memory(const struct rpt *r);

/* Internal fragmentation as perf kmem defines it: 100 - 100 * req / alloc. */
double rpt_frag(uint64_t bytes_req, uint64_t bytes_alloc);

/* ---- lifetimes and the page allocator (report_life.h) ------------------------ */

/* The lifetimes and timelines kept (RPT_LIFETIMES, RPT_TIMELINE), or NULL. */
const struct rpt_lp *rpt_lp(const struct rpt *r);
/* PAGE_SIZE of the traced kernel (default 4096): page orders, large kmallocs. */
void rpt_set_page_size(struct rpt *r, uint32_t page_size);

/* Page allocations and frees of one order, migrate type or GFP mask. */
struct rpt_page_tally {
	uint64_t key;		/* order, migrate type (RPT_MT_UNKNOWN) or gfp_flags */
	uint64_t allocs, failed, bytes;	/* allocation events; bytes of the successful */
	uint64_t frees, bytes_freed;	/* frees of pages allocated in the trace */
	uint64_t untracked_frees;	/* frees of pages allocated before (by order only) */
	uint64_t live, live_bytes;	/* at the end (rpt_finish) */
	uint64_t kmalloc_allocs, kmalloc_bytes;	/* of allocs, large kmallocs */
};

/* Migrate types the trace names (KMT_PAGE_MT_VALID), then one for "not recorded". */
#define RPT_MT_NAMED	8
#define RPT_MT_UNKNOWN	RPT_MT_NAMED
enum rpt_page_by { RPT_PG_ORDER, RPT_PG_MT, RPT_PG_GFP, RPT_PG_STACK };
/*
 * The tallies by order (0..31), migrate type (0..RPT_MT_UNKNOWN), GFP mask
 * or kernel stack (key: index of rpt_stacks(); traces with stacks); *n.
 */
const struct rpt_page_tally *rpt_pages(const struct rpt *r, enum rpt_page_by by, size_t *n);

#endif /* REPORT_CORE_H */
