/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt_internal.h - the state and functions kmemtrace.ko's files share.
 *
 * The module is one object per concern (kmod/Kbuild):
 *   kmt_main.c     module parameters, the buffers' memory budget, load and unload
 *   kmt_record.c   the write path: an event's records into its CPU's relay buffer
 *   kmt_stacks.c   kernel stacks: unwinding, the walk cache, the stack tables
 *   kmt_probes.c   the allocator tracepoints' probes; attaching and detaching them
 *   kmt_paths.c    kprobes on the paths without a tracepoint (bulk, nolock, sheaves)
 *   kmt_relay.c    the relay channel's callbacks and the cpuN files' operations
 *   kmt_modsyms.c  later modules' init symbols, kept past their init
 *   kmt_filter.c   filters at the source, the table pairing frees, the filter file
 *   kmt_debugfs.c  abi_version, enabled, total_overruns, coverage, stats,
 *                  stacks, init_kallsyms
 * kmt_compat.h holds every difference between kernels; kmt_write.h the
 * write path without a stack, which kmt_record.c and kmt_probes.c inline.
 *
 * Per event, a tracepoint probe writes the event itself
 * (kmt_record_inline(): kmt_record_fast() when only the event is to be
 * written, else kmt_record_full()), a kprobed path calls kmt_record();
 * either calls kmt_record_stack() and from it kmt_take_stack() when a
 * stack is asked for; everything else on that path is inlined into one
 * of them. Helpers
 * both kmt_record.c and kmt_stacks.c run per event are static inline
 * here, so that the split costs no call.
 */
#ifndef KMT_INTERNAL_H
#define KMT_INTERNAL_H

#include <linux/atomic.h>
#include <linux/build_bug.h>
#include <linux/compiler.h>
#include <linux/hash.h>
#include <linux/jump_label.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/smp.h>
#include <linux/types.h>
#include <asm/local.h>
#include <asm/local64.h>

#include "kmemtrace_abi.h"

struct dentry;
struct kmem_cache;
struct rchan;
struct rchan_callbacks;
struct seq_file;

/*
 * Module parameters (kmt_main.c), read where they apply; the parameter
 * is the name without kmt_ (module_param_named()).
 */
extern unsigned int kmt_subbufs;
extern unsigned int kmt_subbuf_size;
extern unsigned int kmt_mem_share;
extern bool kmt_pages;
extern unsigned int kmt_stack_depth;
extern bool kmt_stack_frees;
extern unsigned int kmt_stack_entries;
extern unsigned int kmt_stack_cache;
extern bool kmt_stack_check;
extern unsigned int kmt_track_slots;

/*
 * Caches already described in one CPU's stream since tracing was last
 * enabled: an open-addressed set keyed by the cache address. Name
 * pointer and sizes tell, as far as they can, a cache destroyed and
 * re-created at the same address from the old one. The sets are emptied
 * at each enable, so every tracing session describes its caches again
 * (kmemtraced discards what was buffered before its command starts),
 * and an entry only counts for the generation it was made in: opening a
 * cpuN file starts a new one, so a reader that replaces another (say a
 * kmemtraced restarted after kill -9, tracing still on) gets the
 * descriptions its predecessor consumed.
 */
#define KMT_DESC_BITS		9
#define KMT_DESC_SLOTS		BIT(KMT_DESC_BITS)
#define KMT_DESC_PROBES		32U

struct kmt_desc_slot {
	const struct kmem_cache *cache;
	const char *name;
	u64 sizes;		/* kmt_desc_sizes() of what was described */
	u32 gen;		/* kmt_desc_gen when it was described */
};

/* Both sizes a description records, as one word for one compare. */
static inline u64 kmt_desc_sizes(size_t object_size, size_t size)
{
	return (u64)min_t(size_t, size, U32_MAX) << 32 |
	       min_t(size_t, object_size, U32_MAX);
}

/*
 * Starts at 1 so that an emptied slot belongs to no generation. Bumped
 * by each open of a cpuN file (kmt_relay.c), read per record.
 */
extern atomic_t kmt_desc_gen;

/*
 * Kernel stacks. Each CPU keeps the distinct stacks its events had since
 * tracing was last enabled in a table allocated at load: stack_entries
 * entries of stack_depth frames, found through an open-addressed index
 * of u16 ids at most half full. An entry's id is its position + 1; it is
 * written into the stream (its KMT_REC_STACK slots) before the first event
 * that carries it, and again, under the same id, for a new reader
 * (kmt_desc_gen, as for cache descriptions). Enabling empties the table.
 *
 * KMT_STACK_SLACK: frames taken beyond stack_depth, the tracer's own, cut
 * off after.
 */
#define KMT_STACK_SLACK		16U
#define KMT_STACK_SCRATCH	(KMT_STACK_MAX_DEPTH + KMT_STACK_SLACK)

struct kmt_stack_ent {
	u32 hash;
	u32 gen;		/* kmt_desc_gen it was written in; 0: not yet */
	u8 depth;
};

/*
 * On when stack_depth is set (kmt_alloc_stacks(), at load: the parameter
 * is read-only). A static branch, because every event asks, stacks or
 * not: the common case, off, costs a no-op instead of loading and
 * testing stack_depth.
 */
DECLARE_STATIC_KEY_FALSE(kmt_stacks_on);

/* Fixed at load from stack_entries (kmt_check_stack_params()). */
extern u32 kmt_stack_mask;	/* index slots - 1 */

/*
 * The walk cache. Unwinding is most of what a stack costs: ORC looks up
 * each frame's return address in its tables, some hundreds of
 * instructions a frame. But the stack itself says whether a walk is one
 * seen before. Each step of the walk reads the next return address at
 * sp - 8 of the frame above, where sp is the frame's own plus a size the
 * code at its return address fixes; so from the same point in this
 * module, the same return addresses at the same distances are the same
 * walk, and checking them costs a load and a compare a frame.
 *
 * The size of a frame is fixed by its code, with two exceptions, which
 * keep a frame pointer through which ORC finds the frame above. A
 * function that realigns the stack pads its frame by what the alignment
 * asks, the same each time for the same walk from the top of the stack.
 * do_syscall_64() with CONFIG_RANDOMIZE_KSTACK_OFFSET moves the stack
 * below it by a random multiple of 16 bytes on each system call, which
 * leaves realigning to 16 bytes unchanged below it. So a system call's
 * slots are measured from kmt_take_stack()'s frame up to the last frame
 * keeping a frame pointer and from the top of the task's stack after it;
 * a kernel thread's (no random offset) and a walk cut at stack_depth
 * frames (which stays below do_syscall_64() unless it stops within a
 * frame of the top) only from kmt_take_stack()'s frame.
 *
 * An entry keeps one walk through a call site: where its return-address
 * slots are, the tracer's and allocator's return addresses below the
 * call site, and the stack's id; the frames from the call site on are
 * the table's. A walk is kept only when each of its frames came from
 * such a slot (no pt_regs on the way, no return address replaced by
 * ftrace or a kretprobe), all on this task's stack, and it ended at
 * stack_depth frames, at the end of a kernel thread's stack (which the
 * last frame's code fixes) or at the pt_regs of an entry from user
 * space (whose mode is checked again). A page event has no call site;
 * its key is the return address into its page allocator function's
 * caller, read where the last page event of its kind kept had it.
 * Events on an interrupt or exception stack and walks that are not kept
 * are unwound every time. Emptied with the table at each enable.
 */
#define KMT_WALK_WAYS		8U
/* Frames below the call site a kept walk may have: the tracer's own. */
#define KMT_WALK_BELOW		12U

struct kmt_walk_ent {
	unsigned long key;	/* the call site (see kmt_page_key()); 0: unused */
	unsigned long below[KMT_WALK_BELOW];	/* return addresses */
	u16 id;			/* the stack's id in this CPU's table */
	u8 nbelow;
	u8 depth;		/* frames from the call site on */
	u8 split;		/* the first slot measured from the top */
	u16 regs_off;		/* the user pt_regs it ended at, as a slot */
	u16 room;		/* the least room between base and top it needs */
	/* Slots, nbelow then depth: from the base before split, then from the top. */
	u16 off[];
};

/* Fixed at load from stack_cache and stack_depth (kmt_check_stack_params()). */
extern unsigned int kmt_walk_bits;	/* log2 of the sets */
extern size_t kmt_walk_stride;		/* bytes of an entry */

/* How a walk ended, for deciding whether to keep it. */
enum kmt_walk_end {
	KMT_WALK_UNKEPT,	/* not from slots, or ended where it cannot tell */
	KMT_WALK_LIMIT,		/* it took the most frames asked */
	KMT_WALK_DONE,		/* the end of a kernel thread's stack */
	KMT_WALK_USER,		/* the pt_regs of an entry from user space */
};

/*
 * Per-CPU writer state. Only its own CPU changes it, with interrupts
 * off (or, for the flush at disable time, with no probe attached), so
 * plain fields are enough; readers of its counters on other CPUs read
 * them on that CPU (kmt_read_on_cpu()).
 */
struct kmt_cpu {
	/*
	 * Data records attempted, and those lost to a full buffer. Every
	 * data record takes a seq and is written or dropped, so neither the
	 * next seq nor the count written needs a counter of its own (one
	 * increment fewer each, per event): they are the low 32 bits of
	 * emitted, and emitted - dropped.
	 */
	u64 emitted;
	u64 dropped;
	u64 pending_lost;	/* dropped since the last record written */
	/*
	 * Events that arrived while busy (NMI). Beside pending_lost: the
	 * fast path asks of both at once (kmt_record_fast()).
	 */
	local_t nested;
	u64 first_lost_ns;	/* timestamp of the first of those dropped */
	bool busy;		/* a record is being written on this CPU */
	/*
	 * Which CPU this is, and its relay buffer (taken by the first
	 * event: relay sets it once and clears it only in relay_close()).
	 * In the line the write path reads anyway, so that an event does
	 * not also read the CPU number and kmt_chan's per-CPU pointer: on
	 * arm64 each is an address to build and the CPU's offset to read.
	 */
	u32 cpu;
	struct rchan_buf *buf;
	/* Written events that had a stack asked for, by outcome. */
	u64 with_stack;
	u64 no_stack_full;	/* the table was full */
	u64 no_stack_unwind;	/* no frame from the call site on */
	u64 stacks_written;	/* stacks whose slots all reached the buffer */
	u64 stacks_dropped;	/* stacks whose slots did not (nor the event) */
	u64 stacks_walked;	/* stacks unwound */
	u64 stacks_cached;	/* stacks the walk cache knew (unwound too with stack_check) */
	u64 stacks_check_failed;	/* stack_check: the cache was wrong */
	u32 stack_used;		/* entries of the table in use */
	u32 walk_victim;	/* the way of a set replaced next */
	/* Page allocations' and frees' key slot: their page allocator's caller. */
	u16 page_key_off[2];
	u16 *stack_index;	/* stack id per hash slot, 0: free; the allocation */
	struct kmt_stack_ent *stack_ent;	/* stack_entries, by id - 1 */
	unsigned long *stack_frames;	/* stack_depth frames per entry */
	void *walk;		/* the walk cache, kmt_walk_stride per entry */
	/* The stack being taken, and where its frames were read. */
	unsigned long scratch[KMT_STACK_SCRATCH];
	u16 scratch_off[KMT_STACK_SCRATCH];
	u16 scratch_regs_off;
	u8 scratch_split;	/* after the last frame keeping a frame pointer */
	enum kmt_walk_end scratch_end;
	struct kmt_desc_slot desc[KMT_DESC_SLOTS];
	/*
	 * With a filter (kmt_filter.c), since load: events not recorded
	 * because of it, and allocations recorded whose object the tracking
	 * table could not take (their frees are not recorded). local64_t:
	 * bumped without turning interrupts off, NMIs included, and 64-bit
	 * on 32-bit kernels too.
	 */
	local64_t filtered_allocs;
	local64_t filtered_frees;
	local64_t untracked;
};

/* What the buffers cost and what they may cost, fixed at load. */
struct kmt_budget {
	u64 per_cpu;		/* bytes one CPU's buffer costs, all told */
	u64 total;		/* per_cpu times the possible CPUs */
	u64 allowed;		/* mem_share of available */
	u64 available;		/* si_mem_available() at load, bytes */
	unsigned int cpus;	/* possible CPUs: relay serves hotplug too */
	const char *sized;	/* "given", "default" or "fitted" */
};

/* Sized by kmt_main.c at load; shown in the stats file. */
extern struct kmt_budget kmt_budget;

/* Allocated at load (kmt_main.c), written per event. */
extern struct kmt_cpu __percpu *kmt_cpus;
extern struct rchan *kmt_chan;
/* The page tracepoints' iterators, whose frames page event stacks skip. */
extern unsigned long kmt_page_iter[2][2];

/*
 * Serializes attaching, detaching and flushing; protects kmt_enabled
 * (kmt_probes.c), which the enabled file and cpuN reads also look at.
 */
extern struct mutex kmt_enable_lock;
extern bool kmt_enabled;

/*
 * What a probe hands to the write path. A kprobed path fills it on its
 * stack for kmt_record(), and kmt_record_stack() takes it by value. The
 * tracepoint probes name every field, zeros too: given an initializer
 * that leaves some out, gcc clears the whole struct in memory first
 * (rep stos, an instruction per word), then stores the fields. 56 bytes
 * on 64-bit, down from 72: page_mt rather than a 64-bit cache_id, the
 * field order, and a kprobe's entry address given to kmt_record_entry()
 * instead of carried here.
 */
struct kmt_ev {
	u8 type;
	u8 flags;		/* KMT_F_PROBED, added to the context's */
	u16 page_mt;		/* cache_id when there is no cache (pages) */
	gfp_t gfp;
	unsigned long call_site;
	u64 ptr;
	const struct kmem_cache *cache;
	size_t bytes_req;
	size_t bytes_alloc;
	int node;
};

static_assert(sizeof(struct kmt_ev) <= 56);

/* A slab tracepoint's event; a free's sizes are 0, its node any. */
static __always_inline struct kmt_ev
kmt_slab_ev(u8 type, unsigned long call_site, const void *ptr,
	    const struct kmem_cache *s, size_t bytes_req, size_t bytes_alloc,
	    gfp_t gfp, int node)
{
	return (struct kmt_ev) {
		.type = type,
		.flags = 0,
		.page_mt = 0,
		.gfp = gfp,
		.call_site = call_site,
		.ptr = (unsigned long)ptr,
		.cache = s,
		.bytes_req = bytes_req,
		.bytes_alloc = bytes_alloc,
		.node = node,
	};
}

/* The stack taken for an event; id is set when the walk cache knew it. */
struct kmt_taken {
	const unsigned long *frames;
	unsigned int depth;
	unsigned int first;	/* frames' index in c->scratch, when walked */
	unsigned long room;	/* task stack above kmt_take_stack()'s frame */
	unsigned long key;	/* the walk cache's: call site, or see kmt_page_key() */
	unsigned int page;	/* a page event: kmt_page_kind() + 1 */
	u16 id;
	/* A kprobe's at a function's entry: its address (kmt_record_entry()). */
	unsigned long entry_pc;
};

static inline unsigned long *kmt_stack_frames(struct kmt_cpu *c, u16 id)
{
	return &c->stack_frames[(size_t)(id - 1) * kmt_stack_depth];
}

static inline struct kmt_walk_ent *kmt_walk_ent(struct kmt_cpu *c,
						unsigned int i)
{
	return (struct kmt_walk_ent *)((char *)c->walk + i * kmt_walk_stride);
}

/* A word of this task's stack, which may hold anything (no KASAN check). */
static inline unsigned long kmt_stack_word(unsigned long base, unsigned int off)
{
	return READ_ONCE_NOCHECK(*(const unsigned long *)(base + off));
}

/* The first entry of @key's set. */
static inline unsigned int kmt_walk_set(unsigned long key)
{
	return hash_long(key, kmt_walk_bits) * KMT_WALK_WAYS;
}

/*
 * Slot @i of a walk split at @split, at @off from one end of a stack
 * with @room bytes from the base to the top: its distance from the
 * other end. Slots before split are measured from the base, the others
 * (and the pt_regs after the last, as slot n) from the top; both ways.
 */
static inline unsigned long kmt_walk_off(unsigned int split, unsigned int i,
					 unsigned long off, unsigned long room)
{
	return i < split ? off : room - off;
}

/* kmt_record.c: the write path, and the counters it keeps. */
void kmt_record(const struct kmt_ev *ev);
void kmt_record_entry(const struct kmt_ev *ev, unsigned long entry_pc);
void kmt_record_unfiltered(const struct kmt_ev *ev, unsigned long entry_pc);
void kmt_finish_buffers(void);
void kmt_read_on_cpu(unsigned int cpu, smp_call_func_t fn, void *arg);
void kmt_snapshot(unsigned int cpu, u64 *emitted, u64 *written, u64 *dropped);
u64 kmt_total_dropped(void);

/* kmt_stacks.c: taking a stack per event, and the tables' setup. */
void kmt_take_stack(struct kmt_cpu *c, const struct kmt_ev *ev,
		    struct kmt_taken *t);
int kmt_check_stack_params(void);
u64 kmt_stack_cost(void);
int kmt_alloc_stacks(void);
void kmt_free_stacks(void);

struct kmt_stack_stats {
	u64 with_stack, no_stack_full, no_stack_unwind;
	u64 stacks_written, stacks_dropped;
	u64 walked, cached, check_failed;
	u32 used;
};

void kmt_stack_snapshot(unsigned int cpu, struct kmt_stack_stats *st);

/* kmt_probes.c: the tracepoints, and tracing on and off. */
int kmt_find_page_tracepoints(void);
int kmt_set_enabled(bool on);
void kmt_detach(void);

/*
 * kmt_paths.c: the kprobed paths. kmt_probes_on is set on attach and
 * cleared on detach, before the wait for running probes: the kprobes
 * stay registered from load to unload and only follow it.
 */
extern bool kmt_probes_on;
void kmt_function_bounds(unsigned long addr, unsigned long *start,
			 unsigned long *end);
void kmt_register_paths(void);
void kmt_unregister_paths(void);
void kmt_paths_show(struct seq_file *m);

/* kmt_relay.c: what relay_open() is given, and what load checks first. */
extern const struct rchan_callbacks kmt_relay_callbacks;
int kmt_check_relay_fops(void);

/*
 * kmt_filter.c: the filter in force, if any (kmt_filter_on), and the
 * table of the objects it let through. With a filter, the slab
 * tracepoints' probes jump to kmt_filtered_*() (kmt_compat.h), the
 * kprobed paths and the page probes to kmt_filtered_event(): each
 * decides, and goes on to the write path for an event recorded. Only
 * called with kmt_filter_on. A page's key in the table is
 * (pfn << 1) | 1, never a slab object's address.
 */
#define KMT_FILTER_SITES	4
DECLARE_STATIC_KEY_FALSE(kmt_filter_on);
extern const struct file_operations kmt_filter_fops;
void kmt_filtered_event(const struct kmt_ev *ev, unsigned long entry_pc);
void kmt_filtered_kmalloc(void *data, unsigned long call_site,
			  const void *ptr, size_t bytes_req,
			  size_t bytes_alloc, gfp_t gfp, int node);
void kmt_filtered_cache_alloc(void *data, unsigned long call_site,
			      const void *ptr, struct kmem_cache *s,
			      gfp_t gfp, int node);
void kmt_filtered_kfree(void *data, unsigned long call_site,
			const void *ptr);
void kmt_filtered_cache_free(void *data, unsigned long call_site,
			     const void *ptr, const struct kmem_cache *s);

/*
 * kmt_probes.c: the slab tracepoints' handlers, which record an event
 * (a filter's kmt_filtered_*() above decided already, if one is in
 * force). With 6.1's probe arguments, @data unused (see kmt_compat.h);
 * kmt_on_cache_alloc() only from 6.1.
 */
void kmt_on_kmalloc(void *data, unsigned long call_site, const void *ptr,
		    size_t bytes_req, size_t bytes_alloc, gfp_t gfp, int node);
void kmt_on_cache_alloc(void *data, unsigned long call_site, const void *ptr,
			struct kmem_cache *s, gfp_t gfp, int node);
void kmt_on_kfree(void *data, unsigned long call_site, const void *ptr);
void kmt_on_cache_free(void *data, unsigned long call_site, const void *ptr,
		       const struct kmem_cache *s);
void kmt_track_clear(void);
int kmt_filter_init(void);
void kmt_filter_exit(void);

/*
 * kmt_modsyms.c: a module notifier, from load to unload, keeping the init
 * symbols of the modules loaded since (init_kallsyms).
 */
int kmt_modsyms_register(void);
void kmt_modsyms_unregister(void);
void kmt_modsyms_show(struct seq_file *m);

/* kmt_debugfs.c: every file under <debugfs>/kmemtrace/ but cpuN. */
void kmt_debugfs_create_files(struct dentry *dir);

#endif /* KMT_INTERNAL_H */
