/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gen.h - synthetic trace generator for tests: writes DIR/cpuN.out files
 * through the library's writer, numbering seq per CPU, and tallies what it
 * wrote so that tests take their expected values from it.
 */
#ifndef KMT_GEN_H
#define KMT_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "kmt_reader.h"

struct gen_opts {
	int big_endian;			/* write big-endian files (default: little) */
	unsigned int word_bits;		/* 32 or 64; 0 means 64 */
	uint32_t page_size;		/* 0 means 4096 */
	uint64_t start_mono_ns;		/* header fields, default 0 */
	uint64_t start_real_ns;
	uint32_t first_seq;		/* seq of every CPU's first record, default 0 */
	int set_minor;			/* write abi_minor as the header's version_minor */
	uint16_t abi_minor;		/* (default: KMT_ABI_MINOR) */
	/*
	 * (1.3) A checkpoint's header (kind KMT_FILE_CHECKPOINT, at least
	 * minor KMT_CKPT_MINOR unless set_minor): its cut, its segment and
	 * every CPU's dropped_records. Zero: a records file.
	 */
	uint64_t cut_ns;
	uint32_t segment;
	uint64_t dropped_records;
};

/*
 * Tallies of everything written through the event helpers (not through
 * gen_raw*). Allocation events are types 1-3, frees 4-6. The generator
 * tracks live objects by address (slab objects and page frames apart) to
 * attribute frees to the allocating call site and CPU.
 */
struct gen_totals {
	uint64_t records;		/* whole 64-byte slots written, raw ones included */
	uint64_t by_type[KMT_REC_TYPE_MAX + 1];	/* records per type, helpers only */
	uint64_t allocs;		/* allocation events, failed ones included */
	uint64_t failed_allocs;		/* allocation events with ptr 0 */
	uint64_t bytes_req;		/* sum over successful allocations */
	uint64_t bytes_alloc;		/* sum over successful allocations */
	uint64_t frees;			/* free events */
	uint64_t tracked_frees;		/* frees of an object live in the trace */
	uint64_t untracked_frees;	/* frees of an address not live: pre-trace or double */
	uint64_t bytes_freed;		/* bytes_alloc of the objects of tracked frees */
	uint64_t cross_cpu_frees;	/* tracked frees on another CPU than the alloc */
	uint64_t cross_node_allocs;	/* node not -1 nor the CPU's node, failed included */
	uint64_t lost_markers;
	uint64_t lost;			/* sum of LOST counts */
	uint64_t outstanding;		/* objects allocated and never freed (so far) */
	uint64_t outstanding_bytes;	/* their bytes_alloc */
	uint64_t cache_descs;
	uint64_t probed_allocs;		/* slab allocation events with KMT_F_PROBED */
	uint64_t probed_frees;		/* slab free events with KMT_F_PROBED */
	uint64_t stacks;		/* stacks written (gen_stack), each of one or more slots */
	uint64_t stack_allocs;		/* slab allocation events carrying a stack id */
	uint64_t no_stack_allocs;	/* slab allocation events with KMT_F_NO_STACK */
	uint64_t no_stack_frees;	/* free and page events with KMT_F_NO_STACK */
	uint64_t dup_events;		/* gen_dup_event()s: in none of the above but records */
	uint64_t dup_no_stack_events;	/* of which with KMT_F_NO_STACK */
};

/* Per allocation call site (frees are counted at the site that allocated). */
struct gen_callsite {
	uint64_t addr;
	uint64_t hits;			/* allocation events, failed included */
	uint64_t failed;
	uint64_t bytes_req;		/* successful allocations */
	uint64_t bytes_alloc;
	uint64_t frees;			/* tracked frees of objects from here */
	uint64_t cross_cpu_frees;
	uint64_t outstanding;		/* still live */
	uint64_t outstanding_bytes;
};

struct gen;

/*
 * Creates DIR (if needed) and DIR/cpu0.out .. cpu{ncpus-1}.out, each with
 * its header. opts may be NULL. Returns NULL and prints to stderr on error.
 */
struct gen *gen_open(const char *dir, unsigned int ncpus, const struct gen_opts *opts);
/* Flushes and closes the files, frees g. Returns 0, -1 on a write error. */
int gen_close(struct gen *g);
/* Writes buffered records out (so the files can be read while g lives). */
int gen_flush(struct gen *g);

const char *gen_path(const struct gen *g, unsigned int cpu);
/* NUMA node of a CPU written into cpu_node (default 0). */
void gen_set_cpu_node(struct gen *g, unsigned int cpu, int node);
/* Flags (KMT_F_*) for the following events of a CPU (default 0). */
void gen_set_flags(struct gen *g, unsigned int cpu, unsigned int flags);
/* The stack id (gen_stack()) the following events of a CPU carry unless they name one; 0 none. */
void gen_set_stack(struct gen *g, unsigned int cpu, uint16_t id);
/* Seq the next data record of a CPU takes; setting it forges a gap. */
uint32_t gen_next_seq(const struct gen *g, unsigned int cpu);
void gen_set_seq(struct gen *g, unsigned int cpu, uint32_t seq);
/* File offset the next slot of a CPU will have: expected error offsets. */
uint64_t gen_offset(const struct gen *g, unsigned int cpu);

/* Event helpers: fill cpu, seq (then seq++), cpu_node, flags; tally. 0 or -1. */
int gen_kmalloc(struct gen *g, unsigned int cpu, uint64_t ts, uint64_t call_site, uint64_t ptr,
		uint32_t req, uint32_t alloc, int32_t node, uint32_t pid);
int gen_kfree(struct gen *g, unsigned int cpu, uint64_t ts, uint64_t call_site, uint64_t ptr,
	      uint32_t pid);
int gen_cache_alloc(struct gen *g, unsigned int cpu, uint64_t ts, uint64_t call_site,
		    uint64_t ptr, uint64_t cache_id, uint32_t req, uint32_t alloc, int32_t node,
		    uint32_t pid);
int gen_cache_free(struct gen *g, unsigned int cpu, uint64_t ts, uint64_t call_site,
		   uint64_t ptr, uint64_t cache_id, uint32_t pid);
/* Page events: ptr is the PFN, bytes_alloc = page_size << order. */
int gen_page_alloc(struct gen *g, unsigned int cpu, uint64_t ts, uint64_t call_site,
		   uint64_t pfn, unsigned int order, int32_t node, uint32_t pid);
int gen_page_free(struct gen *g, unsigned int cpu, uint64_t ts, uint64_t call_site,
		  uint64_t pfn, unsigned int order, uint32_t pid);
/* name is truncated to 31 bytes (setting KMT_F_NAME_TRUNC). */
int gen_cache_desc(struct gen *g, unsigned int cpu, uint64_t ts, uint64_t cache_id,
		   uint32_t object_size, uint32_t size, const char *name);
/*
 * count data records of this CPU were dropped: seq advances by count and a
 * LOST record (seq = the next seq, first_lost_ns = ts, total_dropped
 * cumulative for the CPU) is written at ts.
 */
int gen_lost(struct gen *g, unsigned int cpu, uint64_t ts, uint64_t count);
/*
 * A kernel stack of depth frames (1..KMT_STACK_MAX_DEPTH), innermost
 * first, as the module writes it: ceil(depth / 5) consecutive slots, each
 * taking a seq, all at ts. Events name it by id (ev->stack_id, through
 * gen_event()).
 */
int gen_stack(struct gen *g, unsigned int cpu, uint64_t ts, uint16_t id, const uint64_t *frames,
	      unsigned int depth);
/*
 * Any event (types 1-6) with full control of gfp_flags, flags, node...:
 * ev->cpu, seq and cpu_node are filled in; ev->flags is ORed with the
 * CPU's flags; tallied like the helpers.
 */
int gen_event(struct gen *g, unsigned int cpu, struct kmt_event *ev);
/*
 * The first kmalloc event of a large kmalloc that 6.12 and 7.3 trace twice
 * (the allocator's own, before its caller's, which gen_event() then writes):
 * written like gen_event(), counted in records, by_type and dup_events
 * only, not as an allocation, for a report takes it back.
 */
int gen_dup_event(struct gen *g, unsigned int cpu, struct kmt_event *ev);

/*
 * Corruption and odd records: written as given (host order, encoded into
 * the file's byte order), not numbered, not tallied except in records.
 */
int gen_raw(struct gen *g, unsigned int cpu, const union kmt_rec *r);
/* len bytes verbatim (e.g. a partial slot, a zeroed slot). */
int gen_raw_bytes(struct gen *g, unsigned int cpu, const void *buf, size_t len);

const struct gen_totals *gen_totals(const struct gen *g);
size_t gen_ncallsites(const struct gen *g);
/* Call sites in order of first appearance; gen_callsite_find() by address. */
const struct gen_callsite *gen_callsite_at(const struct gen *g, size_t i);
const struct gen_callsite *gen_callsite_find(const struct gen *g, uint64_t addr);

/* Whole-file helpers for header corruption tests. 0, or -1 with errno. */
int gen_write_file(const char *path, const void *buf, size_t len);
int gen_patch_file(const char *path, uint64_t offset, const void *buf, size_t len);

/*
 * xorshift64*: the next number of the sequence *state (not 0) seeds, the
 * same on every machine.
 */
uint64_t gen_xorshift(uint64_t *state);

/*
 * A fresh directory for a test's files under $TMPDIR (or /tmp), malloc'ed;
 * NULL on error. gen_rm_rf() removes it and everything in it.
 */
char *gen_mkdtemp(const char *tag);
int gen_rm_rf(const char *dir);

#endif /* KMT_GEN_H */
