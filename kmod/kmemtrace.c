// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmemtrace.c - records slab allocations and frees (page allocations on
 * request) as 64-byte records in per-CPU relay buffers under
 * <debugfs>/kmemtrace/, in the format of abi/kmemtrace_abi.h.
 *
 * Write path, per CPU and with interrupts off: a LOST record first if
 * records were dropped since the last one written, then a cache
 * description the first time this CPU's stream names a cache, then the
 * event. Every data record (event or description) takes the next
 * sequence number whether it is written or dropped, and is counted as
 * emitted and as either written or dropped, so the identity
 * emitted == written + dropped holds exactly on each CPU. A full buffer
 * drops new records; it never overwrites unread ones.
 *
 * With stack_depth set, an event's kernel stack comes between the cache
 * description and the event: its KMT_REC_STACK slots the first time this
 * CPU's stream uses it, then only its id in the event (see "Kernel
 * stacks" below).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/gcd.h>
#include <linux/hash.h>
#include <linux/irqflags.h>
#include <linux/jhash.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/kstrtox.h>
#include <linux/log2.h>
#include <linux/lcm.h>
#include <linux/math64.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/relay.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/seqlock.h>
#include <linux/sizes.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/topology.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/local.h>

#include "kmemtrace_abi.h"
#include "kmt_compat.h"

/*
 * Hard limits, whatever the machine: relay needs two sub-buffers, a
 * record must fit four times in one, and one CPU's ring stays within
 * what relay's page array is meant for.
 */
#define KMT_SUBBUFS_MIN		2U
#define KMT_SUBBUFS_MAX		((unsigned int)KMT_PARAM_SUBBUFS_MAX)
#define KMT_SUBBUF_SIZE_MIN	(4U * KMT_RECORD_SIZE)
#define KMT_SUBBUF_SIZE_MAX	SZ_64M
#define KMT_BUF_SIZE_MAX	((u64)SZ_1G)

/* The default ring, 4 MiB per CPU, before it is fitted to mem_share. */
#define KMT_DEFAULT_SUBBUFS	64U
#define KMT_DEFAULT_SUBBUF_SIZE	65536U
/* Fitting the default halves the count down to this, then the size. */
#define KMT_FIT_SUBBUFS_FLOOR	8U

#define KMT_MEM_SHARE_MAX	((unsigned int)KMT_PARAM_MEM_SHARE_MAX)

/* 0 means "not given": kmt_size_buffers() picks, and stores, the value. */
static unsigned int subbufs;
module_param(subbufs, uint, 0444);
MODULE_PARM_DESC(subbufs,
		 "Sub-buffers per CPU, 2..4096 (default 64, fewer when mem_share needs it). As a built-in or through modprobe: kmemtrace.subbufs=N on the kernel command line.");

static unsigned int subbuf_size;
module_param(subbuf_size, uint, 0444);
MODULE_PARM_DESC(subbuf_size,
		 "Bytes per sub-buffer, 256..67108864 (default 65536, smaller when mem_share needs it), rounded up so records never straddle sub-buffers and the ring is whole pages. Kernel command line: kmemtrace.subbuf_size=N.");

static unsigned int mem_share = 10;
module_param(mem_share, uint, 0444);
MODULE_PARM_DESC(mem_share,
		 "Percent of the memory available at load (MemAvailable) that the buffers of all possible CPUs may take, 1..90 (default 10). A larger request is refused before anything is allocated; the default size shrinks to fit. Kernel command line: kmemtrace.mem_share=N.");

static bool start_disabled;
module_param(start_disabled, bool, 0444);
MODULE_PARM_DESC(start_disabled,
		 "Load with tracing off; write 1 to <debugfs>/kmemtrace/enabled to start (default 0: trace from load). Kernel command line: kmemtrace.start_disabled=1.");

static bool pages;
module_param(pages, bool, 0444);
MODULE_PARM_DESC(pages,
		 "Also record page allocator events mm_page_alloc and mm_page_free (default 0). Kernel command line: kmemtrace.pages=1.");

static unsigned int stack_depth;
module_param(stack_depth, uint, 0444);
MODULE_PARM_DESC(stack_depth,
		 "Frames of kernel stack recorded with each allocation, 0..64 (default 0: no stacks). Kernel command line: kmemtrace.stack_depth=N.");

static bool stack_frees;
module_param(stack_frees, bool, 0444);
MODULE_PARM_DESC(stack_frees,
		 "With stack_depth, record the stacks of frees too (default 0: allocations only). Kernel command line: kmemtrace.stack_frees=1.");

static unsigned int stack_entries = 4096;
module_param(stack_entries, uint, 0444);
MODULE_PARM_DESC(stack_entries,
		 "With stack_depth, distinct stacks each CPU remembers between enables, 1..65535 (default 4096); allocated at load, within mem_share. Kernel command line: kmemtrace.stack_entries=N.");

static unsigned int stack_cache = 512;
module_param(stack_cache, uint, 0444);
MODULE_PARM_DESC(stack_cache,
		 "With stack_depth, walks each CPU remembers so that a stack seen before is checked on the stack instead of unwound, 0..65536, rounded up to a power of two (default 512; 0: unwind every stack); allocated at load, within mem_share. Kernel command line: kmemtrace.stack_cache=N.");

static bool stack_check;
module_param(stack_check, bool, 0444);
MODULE_PARM_DESC(stack_check,
		 "With stack_cache, unwind every stack the cache knows too and count the disagreements in <debugfs>/kmemtrace/stacks; for testing (default 0). Kernel command line: kmemtrace.stack_check=1.");

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
	u32 object_size;
	u32 size;
	u32 gen;		/* kmt_desc_gen when it was described */
};

/* Starts at 1 so that an emptied slot belongs to no generation. */
static atomic_t kmt_desc_gen = ATOMIC_INIT(1);

/*
 * Kernel stacks. Each CPU keeps the distinct stacks its events had since
 * tracing was last enabled in a table allocated at load: stack_entries
 * entries of stack_depth frames, found through an open-addressed index
 * of u16 ids at most half full. An entry's id is its position + 1; it is
 * written into the stream (its KMT_REC_STACK slots) before the first event
 * that carries it, and again, under the same id, for a new reader
 * (kmt_desc_gen, as for cache descriptions). Enabling empties the table.
 */
#define KMT_STACK_ENTRIES_MAX	65535U
/* Frames taken beyond stack_depth: the tracer's own, cut off after. */
#define KMT_STACK_SLACK		16U
#define KMT_STACK_SCRATCH	(KMT_STACK_MAX_DEPTH + KMT_STACK_SLACK)
/* Index slots looked at before a new stack counts as "table full". */
#define KMT_STACK_PROBES	64U

struct kmt_stack_ent {
	u32 hash;
	u32 gen;		/* kmt_desc_gen it was written in; 0: not yet */
	u8 depth;
};

/* Fixed at load from stack_entries. */
static u32 kmt_stack_mask;	/* index slots - 1 */

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
#define KMT_WALK_CACHE_MAX	65536U
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

/* Fixed at load from stack_cache and stack_depth. */
static unsigned int kmt_walk_bits;	/* log2 of the sets */
static size_t kmt_walk_stride;		/* bytes of an entry */

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
 * plain fields are enough; stats_seq lets readers on other CPUs take a
 * consistent snapshot of the three counters.
 */
struct kmt_cpu {
	seqcount_t stats_seq;
	u64 emitted;		/* data records attempted */
	u64 written;		/* data records that reached the buffer */
	u64 dropped;		/* data records lost to a full buffer */
	u64 pending_lost;	/* dropped since the last record written */
	u64 first_lost_ns;	/* timestamp of the first of those */
	u32 seq;		/* seq of the next data record */
	bool busy;		/* a record is being written on this CPU */
	local_t nested;		/* events that arrived while busy (NMI) */
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
};

/* What the buffers cost and what they may cost, fixed at load. */
static struct {
	u64 per_cpu;		/* bytes one CPU's buffer costs, all told */
	u64 total;		/* per_cpu times the possible CPUs */
	u64 allowed;		/* mem_share of available */
	u64 available;		/* si_mem_available() at load, bytes */
	unsigned int cpus;	/* possible CPUs: relay serves hotplug too */
	const char *sized;	/* "given", "default" or "fitted" */
} kmt_budget;

static struct kmt_cpu __percpu *kmt_cpus;
static struct rchan *kmt_chan;
static struct dentry *kmt_dir;
static struct tracepoint *kmt_page_alloc_tp;
static struct tracepoint *kmt_page_free_tp;
/* The page tracepoints' iterators, whose frames page event stacks skip. */
static unsigned long kmt_page_iter[2][2];

/* Serializes attaching, detaching and flushing; protects kmt_enabled. */
static DEFINE_MUTEX(kmt_enable_lock);
static bool kmt_enabled;

/* What a probe hands to kmt_record(). */
struct kmt_ev {
	u8 type;
	u8 flags;		/* KMT_F_PROBED, added to the context's */
	unsigned long call_site;
	u64 ptr;
	const struct kmem_cache *cache;
	size_t bytes_req;
	size_t bytes_alloc;
	gfp_t gfp;
	int node;
	u64 cache_id;		/* cache_id when there is no cache (pages) */
};

static u32 kmt_u32(size_t bytes, u8 *flags)
{
	if (bytes > U32_MAX) {
		*flags |= KMT_F_CLAMPED;
		return U32_MAX;
	}
	return bytes;
}

/*
 * Room for one record in @buf, or NULL when the buffer is full. Unlike
 * relay_reserve(), the offset only moves in kmt_commit(), after the
 * record is complete, so read() of the current sub-buffer by a
 * concurrent reader never returns a half-written record.
 */
static void *kmt_slot(struct rchan_buf *buf)
{
	if (unlikely(!buf))
		return NULL;
	if (unlikely(buf->offset + KMT_RECORD_SIZE > buf->chan->subbuf_size) &&
	    !relay_switch_subbuf(buf, KMT_RECORD_SIZE))
		return NULL;
	return buf->data + buf->offset;
}

static void kmt_commit(struct rchan_buf *buf)
{
	/* Pairs with the reader's view of buf->offset: record, then offset. */
	smp_wmb();
	buf->offset += KMT_RECORD_SIZE;
}

static void kmt_note_dropped(struct kmt_cpu *c, u64 n, u64 now)
{
	if (!c->pending_lost)
		c->first_lost_ns = now;
	c->pending_lost += n;
	c->dropped += n;
}

/* Events that found the CPU busy count as emitted and dropped. */
static void kmt_fold_nested(struct kmt_cpu *c, u64 now)
{
	long n = local_xchg(&c->nested, 0);

	if (likely(!n))
		return;
	c->emitted += n;
	c->seq += n;
	kmt_note_dropped(c, n, now);
}

/* Emits the pending LOST record; false if there is still no room. */
static bool kmt_write_lost(struct kmt_cpu *c, struct rchan_buf *buf,
			   unsigned int cpu, u64 now)
{
	struct kmt_lost *rec = kmt_slot(buf);

	if (!rec)
		return false;
	*rec = (struct kmt_lost) {
		.type = KMT_REC_LOST,
		.cpu = cpu,
		.seq = c->seq,
		.timestamp = now,
		.count = c->pending_lost,
		.first_lost_ns = c->first_lost_ns,
		.total_dropped = c->dropped,
	};
	kmt_commit(buf);
	c->pending_lost = 0;
	return true;
}

/*
 * Takes the next seq for a data record and accounts for it. Returns
 * the slot to fill, or NULL if the record is dropped (always when
 * @room is false: nothing may be written while a LOST record waits).
 */
static void *kmt_data_slot(struct kmt_cpu *c, struct rchan_buf *buf,
			   bool room, u64 now, u32 *seq)
{
	void *slot = room ? kmt_slot(buf) : NULL;

	*seq = c->seq++;
	c->emitted++;
	if (slot)
		c->written++;
	else
		kmt_note_dropped(c, 1, now);
	return slot;
}

/*
 * Looks @s up in this CPU's set. Returns true if already described;
 * otherwise *claim is the slot to remember it in once its description
 * is written, or NULL when the probe window is full (then the cache is
 * described every time).
 */
static bool kmt_desc_known(struct kmt_cpu *c, const struct kmem_cache *s,
			   const char *name, u32 object_size, u32 size,
			   u32 gen, struct kmt_desc_slot **claim)
{
	u32 h = hash_ptr(s, KMT_DESC_BITS);
	unsigned int i;

	*claim = NULL;
	for (i = 0; i < KMT_DESC_PROBES; i++) {
		struct kmt_desc_slot *d = &c->desc[(h + i) % KMT_DESC_SLOTS];

		if (d->cache == s) {
			if (d->gen == gen && d->name == name &&
			    d->object_size == object_size && d->size == size)
				return true;
			*claim = d;
			return false;
		}
		if (!d->cache) {
			*claim = d;
			return false;
		}
	}
	return false;
}

/* Describes @s unless this CPU's stream already did; returns room. */
static bool kmt_describe(struct kmt_cpu *c, struct rchan_buf *buf,
			 unsigned int cpu, const struct kmem_cache *s,
			 bool room, u64 now)
{
	struct kmt_cache_desc *rec;
	struct kmt_desc_slot *claim;
	size_t object_size, size;
	const char *name;
	u32 osz32, sz32, gen;
	u8 flags = 0;
	u32 seq;

	kmt_cache_info(s, &name, &object_size, &size);
	osz32 = kmt_u32(object_size, &flags);
	sz32 = kmt_u32(size, &flags);
	gen = atomic_read(&kmt_desc_gen);
	if (kmt_desc_known(c, s, name, osz32, sz32, gen, &claim))
		return room;

	rec = kmt_data_slot(c, buf, room, now, &seq);
	if (!rec)
		return false;
	*rec = (struct kmt_cache_desc) {
		.type = KMT_REC_CACHE_DESC,
		.cpu = cpu,
		.seq = seq,
		.timestamp = now,
		.cache_id = (unsigned long)s,
		.object_size = osz32,
		.size = sz32,
	};
	if (name && strscpy(rec->name, name, sizeof(rec->name)) < 0)
		flags |= KMT_F_NAME_TRUNC;
	rec->flags = flags;
	kmt_commit(buf);
	if (claim) {
		claim->cache = s;
		claim->name = name;
		claim->object_size = osz32;
		claim->size = sz32;
		claim->gen = gen;
	}
	return true;
}

static bool kmt_wants_stack(u8 type)
{
	if (!stack_depth)
		return false;
	return type == KMT_REC_KMALLOC || type == KMT_REC_CACHE_ALLOC ||
	       type == KMT_REC_PAGE_ALLOC || stack_frees;
}

static bool kmt_in_page_iter(unsigned long addr)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kmt_page_iter); i++) {
		if (addr >= kmt_page_iter[i][0] && addr < kmt_page_iter[i][1])
			return true;
	}
	return false;
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
};

static unsigned long *kmt_stack_frames(struct kmt_cpu *c, u16 id)
{
	return &c->stack_frames[(size_t)(id - 1) * stack_depth];
}

static struct kmt_walk_ent *kmt_walk_ent(struct kmt_cpu *c, unsigned int i)
{
	return (struct kmt_walk_ent *)((char *)c->walk + i * kmt_walk_stride);
}

/* A word of this task's stack, which may hold anything (no KASAN check). */
static unsigned long kmt_stack_word(unsigned long base, unsigned int off)
{
	return READ_ONCE_NOCHECK(*(const unsigned long *)(base + off));
}

/* The first entry of @key's set. */
static unsigned int kmt_walk_set(unsigned long key)
{
	return hash_long(key, kmt_walk_bits) * KMT_WALK_WAYS;
}

/*
 * Slot @i of a walk split at @split, at @off from one end of a stack
 * with @room bytes from the base to the top: its distance from the
 * other end. Slots before split are measured from the base, the others
 * (and the pt_regs after the last, as slot n) from the top; both ways.
 */
static unsigned long kmt_walk_off(unsigned int split, unsigned int i,
				  unsigned long off, unsigned long room)
{
	return i < split ? off : room - off;
}

/*
 * The walk cache's id for this event's stack: an entry of @key's set
 * whose slots hold its return addresses, and whose walk ended the same
 * way; 0 if none. @room: bytes of this task's stack from @base to its
 * top, from where slots after split are measured.
 */
static u16 kmt_walk_find(struct kmt_cpu *c, unsigned long key,
			 unsigned long base, unsigned long room)
{
	unsigned int set = kmt_walk_set(key);
	unsigned int w, i, n;

	for (w = 0; w < KMT_WALK_WAYS; w++) {
		const struct kmt_walk_ent *e = kmt_walk_ent(c, set + w);
		const unsigned long *frames;
		unsigned long want;

		if (e->key != key || e->room > room)
			continue;
		frames = kmt_stack_frames(c, e->id);
		n = e->nbelow + e->depth;
		for (i = 0; i < n; i++) {
			want = i < e->nbelow ? e->below[i] :
			       frames[i - e->nbelow];
			if (kmt_stack_word(base, kmt_walk_off(e->split, i,
							      e->off[i],
							      room)) != want)
				break;
		}
		if (i < n)
			continue;
		/* Measured as a slot after the last: an exception's are not the top's. */
		if (e->regs_off &&
		    !user_mode((struct pt_regs *)(base +
			kmt_walk_off(e->split, n, e->regs_off, room))))
			continue;
		return e->id;
	}
	return 0;
}

/*
 * Keeps the walk @t just took (c->scratch and where its frames were
 * read) under its key, its stack having got @id, if it can be checked
 * again.
 */
static void kmt_walk_keep(struct kmt_cpu *c, const struct kmt_taken *t,
			  u16 id)
{
	unsigned int split, i, n = t->first + t->depth;
	bool to_top = c->scratch_end == KMT_WALK_DONE ||
		      c->scratch_end == KMT_WALK_USER;
	struct kmt_walk_ent *e;
	unsigned long room = 0;

	if (!c->walk || !t->key || c->scratch_end == KMT_WALK_UNKEPT ||
	    t->first > KMT_WALK_BELOW)
		return;
	/* A walk cut short is only the same walk as far as it went. */
	if (!to_top && t->depth < stack_depth)
		return;
	/*
	 * Only a system call's walk has a frame of random size, the last
	 * one keeping a frame pointer. n + 1: none, and the pt_regs after
	 * the last slot measured from the base.
	 */
	split = c->scratch_end == KMT_WALK_USER ?
		min_t(unsigned int, c->scratch_split, n + 1) : n + 1;
	/* A page event's key is read before the walk: from the base. */
	if (t->page) {
		if (t->first + 1 >= split)
			return;
		c->page_key_off[t->page - 1] = c->scratch_off[t->first + 1];
	}
	e = kmt_walk_ent(c, kmt_walk_set(t->key) +
			 c->walk_victim++ % KMT_WALK_WAYS);
	e->key = t->key;
	e->id = id;
	e->nbelow = t->first;
	e->depth = t->depth;
	e->split = split;
	for (i = 0; i < t->first; i++)
		e->below[i] = c->scratch[i];
	/* The least room: from the base, past the highest slot it reads. */
	for (i = 0; i < n; i++) {
		e->off[i] = kmt_walk_off(split, i, c->scratch_off[i], t->room);
		room = max_t(unsigned long, room, i < split ?
			     c->scratch_off[i] + sizeof(long) : e->off[i]);
	}
	/* At stack_depth frames, what lies beyond does not matter. */
	e->regs_off = 0;
	if (c->scratch_end == KMT_WALK_USER && t->depth < stack_depth) {
		e->regs_off = kmt_walk_off(split, n, c->scratch_regs_off,
					   t->room);
		room = max_t(unsigned long, room, n < split ?
			     e->regs_off + sizeof(struct pt_regs) :
			     e->regs_off);
	}
	e->room = room;
}

#if KMT_HAVE_WALK_CACHE
/*
 * Unwinds into c->scratch, at most @max frames, noting for each frame
 * the distance from @base of the slot it was read from, and how the
 * walk ended (c->scratch_end). @room: bytes of this task's stack above
 * @base, 0 when @base is not on it (nothing is kept). Inlined into
 * kmt_take_stack(), so that the walk's first frame is its caller's,
 * read just above @base.
 */
static __always_inline unsigned int kmt_walk(struct kmt_cpu *c,
					     unsigned long base,
					     unsigned long room,
					     unsigned int max)
{
	bool slots = room != 0, through_bp = false;
	struct unwind_state st;
	unsigned long addr, off, bp, sp;
	unsigned int n = 0;

	c->scratch_end = KMT_WALK_UNKEPT;
	c->scratch_regs_off = 0;
	c->scratch_split = U8_MAX;
	unwind_start(&st, current, NULL, NULL);
	while (!unwind_done(&st)) {
		addr = unwind_get_return_address(&st);
		if (!addr)
			break;
		if (n == max) {
			if (slots)
				c->scratch_end = KMT_WALK_LIMIT;
			break;
		}
		c->scratch[n] = addr;
		off = st.sp - sizeof(long) - base;
		if (st.regs || st.sp < base + sizeof(long) ||
		    off + sizeof(long) > room ||
		    kmt_stack_word(base, off) != addr)
			slots = false;
		else
			c->scratch_off[n] = off;
		/* The first frame's step was kmt_take_stack()'s own. */
		if (through_bp && n)
			c->scratch_split = n;
		n++;
		bp = st.bp;
		sp = st.sp;
		unwind_next_frame(&st);
		/*
		 * The frame just left keeps a frame pointer: bp points into
		 * it, at the saved rbp, with the return address (or, in a
		 * frame that realigns the stack, a copy of it) above. So
		 * does every frame ORC finds through bp, and with it any
		 * frame whose size varies. A frame that holds a pointer to
		 * its own locals in rbp is not taken for one, unless the
		 * word above is the return address.
		 */
		through_bp = bp >= sp && bp < st.sp &&
			     bp - base + 2 * sizeof(long) <= room &&
			     kmt_stack_word(base, bp - base + sizeof(long)) ==
			     st.ip;
	}
	if (!slots || n == max || unwind_error(&st))
		return n;
	if (st.regs) {
		/* It stopped at an address outside the kernel's text. */
		off = (unsigned long)st.regs - base;
		if (!unwind_done(&st) && user_mode(st.regs) &&
		    (unsigned long)st.regs > base &&
		    off + sizeof(struct pt_regs) <= room) {
			c->scratch_end = KMT_WALK_USER;
			c->scratch_regs_off = off;
		}
	} else if (unwind_done(&st)) {
		c->scratch_end = KMT_WALK_DONE;
	}
	return n;
}
#else
static __always_inline unsigned int kmt_walk(struct kmt_cpu *c,
					     unsigned long base,
					     unsigned long room,
					     unsigned int max)
{
	c->scratch_end = KMT_WALK_UNKEPT;
	return stack_trace_save(c->scratch, max, 0);
}
#endif

/*
 * Bytes of this task's stack from @base to its top; 0 when @base is on
 * another stack (an interrupt's or an exception's).
 */
static unsigned long kmt_task_stack_room(unsigned long base)
{
	unsigned long low = (unsigned long)task_stack_page(current);

	if (base - low >= THREAD_SIZE)
		return 0;
	return low + THREAD_SIZE - base;
}

/* 0 for page allocations, 1 for page frees. */
static unsigned int kmt_page_kind(u8 type)
{
	return type == KMT_REC_PAGE_FREE;
}

/*
 * A page event's walk cache key: the return address into the caller of
 * the page allocator function that traced it, read where the last walk
 * kept for a page event of its kind (@page - 1) had it; 0 if none. A
 * path whose frames lie elsewhere reads another word here and misses.
 */
static unsigned long kmt_page_key(struct kmt_cpu *c, unsigned int page,
				  unsigned long base, unsigned long room)
{
	unsigned int off = c->page_key_off[page - 1];

	if (!off || off + sizeof(long) > room)
		return 0;
	return kmt_stack_word(base, off);
}

/* Whether a walk's frames, cut as kmt_take_stack() cuts, are @id's. */
static bool kmt_walk_agrees(struct kmt_cpu *c, const struct kmt_taken *t,
			    u16 id)
{
	return t->depth == c->stack_ent[id - 1].depth &&
	       !memcmp(t->frames, kmt_stack_frames(c, id),
		       t->depth * sizeof(*t->frames));
}

/*
 * Takes the current stack, from the walk cache or by unwinding it into
 * c->scratch, and cuts off the tracer's frames. An event with a call
 * site keeps the frames from the first one equal to it: the allocator's
 * frames above its caller go too, as the call site itself leaves them
 * out. None equal to it (an unwinder that lost its way, or a call site
 * further out than the frames taken) means no stack, rather than one
 * that might start inside the tracer. A page event has no call site:
 * its stack starts after the frames of this module and of the page
 * tracepoint's iterator, in the page allocator.
 *
 * Never inlined: the walk cache measures from this function's frame,
 * which must be the same for every event through the same path.
 */
static noinline void kmt_take_stack(struct kmt_cpu *c, u8 type,
				    unsigned long call_site,
				    struct kmt_taken *t)
{
	unsigned long base = (unsigned long)__builtin_frame_address(0);
	unsigned long room = c->walk ? kmt_task_stack_room(base) : 0;
	unsigned int n, i = 0;
	u16 cached = 0;

	t->id = 0;
	t->room = room;
	t->page = call_site ? 0 : kmt_page_kind(type) + 1;
	t->key = call_site;
	if (!call_site && room)
		t->key = kmt_page_key(c, t->page, base, room);
	if (t->key && room) {
		cached = kmt_walk_find(c, t->key, base, room);
		if (cached)
			c->stacks_cached++;
		if (cached && !stack_check) {
			t->id = cached;
			t->frames = kmt_stack_frames(c, cached);
			t->depth = c->stack_ent[cached - 1].depth;
			return;
		}
	}
	n = kmt_walk(c, base, room, stack_depth + KMT_STACK_SLACK);
	c->stacks_walked++;
	if (call_site) {
		while (i < n && c->scratch[i] != call_site)
			i++;
	} else {
		while (i < n && !within_module(c->scratch[i], THIS_MODULE))
			i++;
		while (i < n && within_module(c->scratch[i], THIS_MODULE))
			i++;
		while (i < n && kmt_in_page_iter(c->scratch[i]))
			i++;
	}
	t->first = i;
	t->frames = c->scratch + i;
	t->depth = min(n - i, stack_depth);
	if (!call_site)
		t->key = t->depth > 1 ? t->frames[1] : 0;
	if (cached) {
		if (!kmt_walk_agrees(c, t, cached)) {
			c->stacks_check_failed++;
			pr_info_ratelimited("stack_check: the walk cache's stack %u for call site %pS is not the unwinder's\n",
					    cached, (void *)call_site);
		}
		/* The walk is the truth; a cache that disagrees is not kept. */
		c->scratch_end = KMT_WALK_UNKEPT;
	}
}

/*
 * The id of @frames in this CPU's table, added if new; 0 when the table
 * is full (or, rarely, KMT_STACK_PROBES index slots in a row are taken).
 */
static u16 kmt_stack_id(struct kmt_cpu *c, const unsigned long *frames,
			unsigned int depth, struct kmt_stack_ent **entp)
{
	size_t bytes = depth * sizeof(*frames);
	u32 h = jhash2((const u32 *)frames, bytes / sizeof(u32), depth);
	unsigned int i;

	for (i = 0; i < KMT_STACK_PROBES && i <= kmt_stack_mask; i++) {
		u16 *slot = &c->stack_index[(h + i) & kmt_stack_mask];
		unsigned long *saved;
		struct kmt_stack_ent *e;

		if (!*slot) {
			if (c->stack_used >= stack_entries)
				return 0;
			e = &c->stack_ent[c->stack_used];
			saved = kmt_stack_frames(c, c->stack_used + 1);
			e->hash = h;
			e->gen = 0;
			e->depth = depth;
			memcpy(saved, frames, bytes);
			*slot = ++c->stack_used;
			*entp = e;
			return *slot;
		}
		e = &c->stack_ent[*slot - 1];
		saved = kmt_stack_frames(c, *slot);
		if (e->hash == h && e->depth == depth &&
		    !memcmp(saved, frames, bytes)) {
			*entp = e;
			return *slot;
		}
	}
	return 0;
}

/*
 * Writes stack @id as its KMT_REC_STACK slots, each a data record with a
 * seq of its own. Returns room: false if a slot did not fit, in which
 * case the rest of them, and the event, are dropped too.
 */
static bool kmt_write_stack(struct kmt_cpu *c, struct rchan_buf *buf,
			    unsigned int cpu, u16 id,
			    const unsigned long *frames, unsigned int depth,
			    bool room, u64 now)
{
	unsigned int first, k, nf;
	struct kmt_stack *rec;
	u32 seq;

	for (first = 0; first < depth; first += KMT_STACK_SLOT_FRAMES) {
		nf = min(depth - first, KMT_STACK_SLOT_FRAMES);
		rec = kmt_data_slot(c, buf, room, now, &seq);
		if (!rec) {
			room = false;
			continue;
		}
		*rec = (struct kmt_stack) {
			.type = KMT_REC_STACK,
			.cpu = cpu,
			.seq = seq,
			.timestamp = now,
			.stack_id = id,
			.depth = depth,
			.first = first,
			.nframes = nf,
		};
		for (k = 0; k < nf; k++)
			rec->frames[k] = frames[first + k];
		kmt_commit(buf);
	}
	return room;
}

/*
 * The stack id for an event whose stack (@t, as kmt_take_stack() took
 * it) was asked for, its records written first if this stream lacks
 * them, or 0 with KMT_F_NO_STACK in *flags and the reason in *reason.
 */
static u16 kmt_stack(struct kmt_cpu *c, struct rchan_buf *buf,
		     unsigned int cpu, const struct kmt_taken *t, bool *room,
		     u64 now, u8 *flags, u64 **reason)
{
	const unsigned long *frames = t->frames;
	unsigned int depth = t->depth;
	struct kmt_stack_ent *e;
	u32 gen;
	u16 id;

	*flags |= KMT_F_NO_STACK;
	*reason = &c->no_stack_unwind;
	if (!depth)
		return 0;
	*reason = &c->no_stack_full;
	if (t->id) {
		id = t->id;
		e = &c->stack_ent[id - 1];
	} else {
		id = kmt_stack_id(c, frames, depth, &e);
		if (!id)
			return 0;
		kmt_walk_keep(c, t, id);
	}
	*flags &= ~KMT_F_NO_STACK;
	*reason = &c->with_stack;
	gen = atomic_read(&kmt_desc_gen);
	if (e->gen == gen)
		return id;
	*room = kmt_write_stack(c, buf, cpu, id, frames, depth, *room, now);
	if (*room) {
		e->gen = gen;
		c->stacks_written++;
	} else {
		c->stacks_dropped++;
	}
	return id;
}

static u8 kmt_context_flags(void)
{
	u8 flags = 0;

	if (kmt_in_hardirq())
		flags |= KMT_F_HARDIRQ;
	if (in_serving_softirq())
		flags |= KMT_F_SOFTIRQ;
	return flags;
}

/*
 * Writes one event, preceded by whatever must come before it. The
 * sequence number, the timestamp and the position in the buffer are all
 * taken with interrupts off on this CPU, so within a CPU's stream seq
 * order, timestamp order and file order are the same.
 */
static void kmt_record(const struct kmt_ev *ev)
{
	struct kmt_taken taken = { 0 };
	u64 *stack_outcome = NULL;
	struct rchan_buf *buf;
	struct kmt_event *rec;
	unsigned long irqflags;
	struct kmt_cpu *c;
	unsigned int cpu;
	bool room = true;
	bool want_stack;
	u16 stack_id = 0;
	u8 flags;
	u64 now;
	u32 seq;

	local_irq_save(irqflags);
	c = this_cpu_ptr(kmt_cpus);
	if (unlikely(c->busy)) {
		/* Only an NMI can get here; never recurse into relay. */
		local_inc(&c->nested);
		goto out;
	}
	c->busy = true;
	cpu = smp_processor_id();
	buf = *this_cpu_ptr(kmt_chan->buf);
	flags = kmt_context_flags() | ev->flags;
	want_stack = kmt_wants_stack(ev->type);
	if (want_stack)
		kmt_take_stack(c, ev->type, ev->call_site, &taken);
	now = ktime_get_mono_fast_ns();

	raw_write_seqcount_begin(&c->stats_seq);
	kmt_fold_nested(c, now);
	if (c->pending_lost)
		room = kmt_write_lost(c, buf, cpu, now);
	if (ev->cache)
		room = kmt_describe(c, buf, cpu, ev->cache, room, now);
	if (want_stack)
		stack_id = kmt_stack(c, buf, cpu, &taken, &room, now, &flags,
				     &stack_outcome);
	rec = kmt_data_slot(c, buf, room, now, &seq);
	if (rec) {
		*rec = (struct kmt_event) {
			.type = ev->type,
			.cpu = cpu,
			.seq = seq,
			.timestamp = now,
			.call_site = ev->call_site,
			.ptr = ev->ptr,
			.cache_id = ev->cache ? (unsigned long)ev->cache :
				    ev->cache_id,
			.bytes_req = kmt_u32(ev->bytes_req, &flags),
			.bytes_alloc = kmt_u32(ev->bytes_alloc, &flags),
			.gfp_flags = (__force u32)ev->gfp,
			.node = ev->node,
			.pid = current->pid,
			.cpu_node = cpu_to_node(cpu),
			.stack_id = stack_id,
		};
		rec->flags = flags;
		kmt_commit(buf);
		if (stack_outcome)
			(*stack_outcome)++;
	}
	raw_write_seqcount_end(&c->stats_seq);
	c->busy = false;
out:
	local_irq_restore(irqflags);
}

static void kmt_on_kmalloc(unsigned long call_site, const void *ptr,
			   size_t bytes_req, size_t bytes_alloc, gfp_t gfp,
			   int node)
{
	struct kmt_ev ev = {
		.type = KMT_REC_KMALLOC,
		.call_site = call_site,
		.ptr = (unsigned long)ptr,
		.bytes_req = bytes_req,
		.bytes_alloc = bytes_alloc,
		.gfp = gfp,
		.node = node,
	};

	kmt_record(&ev);
}

static void kmt_on_cache_alloc(unsigned long call_site, const void *ptr,
			       const struct kmem_cache *s, size_t bytes_req,
			       size_t bytes_alloc, gfp_t gfp, int node)
{
	struct kmt_ev ev = {
		.type = KMT_REC_CACHE_ALLOC,
		.call_site = call_site,
		.ptr = (unsigned long)ptr,
		.cache = s,
		.bytes_req = bytes_req,
		.bytes_alloc = bytes_alloc,
		.gfp = gfp,
		.node = node,
	};

	kmt_record(&ev);
}

static void kmt_on_kfree(unsigned long call_site, const void *ptr)
{
	struct kmt_ev ev = {
		.type = KMT_REC_KFREE,
		.call_site = call_site,
		.ptr = (unsigned long)ptr,
		.node = KMT_NODE_ANY,
	};

	/* The tracepoint fires before kfree()'s own NULL check. */
	if (ZERO_OR_NULL_PTR(ptr))
		return;
	kmt_record(&ev);
}

static void kmt_on_cache_free(unsigned long call_site, const void *ptr,
			      const struct kmem_cache *s)
{
	struct kmt_ev ev = {
		.type = KMT_REC_CACHE_FREE,
		.call_site = call_site,
		.ptr = (unsigned long)ptr,
		.cache = s,
		.node = KMT_NODE_ANY,
	};

	kmt_record(&ev);
}

/* The page tracepoints have kept these signatures through 5.10..6.12. */
static void kmt_tp_page_alloc(void *data, struct page *page,
			      unsigned int order, gfp_t gfp, int migratetype)
{
	struct kmt_ev ev = {
		.type = KMT_REC_PAGE_ALLOC,
		.ptr = page ? page_to_pfn(page) : 0,
		.bytes_req = PAGE_SIZE << order,
		.bytes_alloc = PAGE_SIZE << order,
		.gfp = gfp,
		.node = KMT_NODE_ANY,
		.cache_id = KMT_PAGE_MT_VALID | (migratetype & 0xff),
	};

	kmt_record(&ev);
}

static void kmt_tp_page_free(void *data, struct page *page,
			     unsigned int order)
{
	struct kmt_ev ev = {
		.type = KMT_REC_PAGE_FREE,
		.ptr = page_to_pfn(page),
		.bytes_alloc = PAGE_SIZE << order,
		.node = KMT_NODE_ANY,
	};

	kmt_record(&ev);
}

/*
 * Paths that hand out or take back slab objects without a slab
 * tracepoint: the bulk API (kfree_bulk and kfree_rcu's batches end in
 * kmem_cache_free_bulk), 6.18's lock-free kmalloc/kfree and kfree_rcu's
 * percpu sheaves. Each is hooked with a kprobe (entry) or a kretprobe
 * (entry and return), registered at load and unregistered at unload:
 * arming an ftrace-based kprobe waits for tasks-RCU, seconds under load,
 * too slow for every write to "enabled", so between attach and detach
 * the handlers only follow kmt_probes_on. They allocate nothing (a
 * kretprobe's instances are preallocated, maxactive of them) and end in
 * kmt_record(), like the tracepoint probes; their records carry
 * KMT_F_PROBED.
 */
enum kmt_how {
	KMT_HOW_ABSENT,		/* no such path in this kernel */
	KMT_HOW_HOOKED,
	KMT_HOW_UNSEEN,		/* the path exists but could not be hooked */
};

struct kmt_path {
	const char *name;	/* in the coverage file */
	const char *symbol;	/* NULL when the kernel has no such path */
	struct kretprobe rp;	/* rp.kp alone when !ret */
	bool ret;
	enum kmt_how how;
	int err;		/* registration error when unseen */
};

/* What a kretprobe's entry handler keeps for its return handler. */
struct kmt_call {
	struct kmem_cache *s;
	void **objs;
	void *obj;
	unsigned long size;	/* objects, or bytes for kmalloc_nolock */
	unsigned long gfp;
	int node;
};

/*
 * Set on attach, cleared on detach before the wait for running probes:
 * a handler that sees it clear records nothing, so none runs after
 * detach (kretprobe returns of calls made while attached included).
 */
static bool kmt_probes_on;

/* Where the bulk allocator's code lies (see kmt_free_bulk_pre()). */
static unsigned long kmt_alloc_bulk_start, kmt_alloc_bulk_end;

static int kmt_alloc_bulk_entry(struct kretprobe_instance *ri,
				struct pt_regs *regs)
{
	struct kmt_call *call = (struct kmt_call *)ri->data;

	call->s = (struct kmem_cache *)kmt_arg(regs, 0);
	call->gfp = kmt_arg(regs, 1);
	call->size = kmt_arg(regs, 2);
	call->objs = (void **)kmt_arg(regs, 3);
	return 0;
}

/* All or nothing: it returns the count (bool from 6.18), 0 on failure. */
static int kmt_alloc_bulk_ret(struct kretprobe_instance *ri,
			      struct pt_regs *regs)
{
	const struct kmt_call *call = (const struct kmt_call *)ri->data;
	struct kmt_ev ev = {
		.type = KMT_REC_CACHE_ALLOC,
		.flags = KMT_F_PROBED,
		.call_site = get_kretprobe_retaddr(ri),
		.cache = call->s,
		.gfp = (__force gfp_t)call->gfp,
		.node = NUMA_NO_NODE,
	};
	unsigned long i;
	const char *name;

	if (!READ_ONCE(kmt_probes_on) || !regs_return_value(regs))
		return 0;
	kmt_cache_info(call->s, &name, &ev.bytes_req, &ev.bytes_alloc);
	for (i = 0; i < call->size; i++) {
		ev.ptr = (unsigned long)call->objs[i];
		kmt_record(&ev);
	}
	return 0;
}

static int kmt_free_bulk_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct kmem_cache *s = (struct kmem_cache *)kmt_arg(regs, 0);
	unsigned long i, size = kmt_arg(regs, 1);
	void **objs = (void **)kmt_arg(regs, 2);
	struct kmt_ev ev = {
		/* kfree_bulk() passes no cache: any slab object may come. */
		.type = s ? KMT_REC_CACHE_FREE : KMT_REC_KFREE,
		.flags = KMT_F_PROBED,
		/* At the entry, the return address is on top of the stack. */
		.call_site = regs_get_kernel_stack_nth(regs, 0),
		.cache = s,
		.node = KMT_NODE_ANY,
	};

	if (!READ_ONCE(kmt_probes_on))
		return 0;
	/*
	 * Up to 6.9 a failed bulk allocation gives back what it had taken
	 * through kmem_cache_free_bulk(): objects never handed out.
	 */
	if (ev.call_site >= kmt_alloc_bulk_start &&
	    ev.call_site < kmt_alloc_bulk_end)
		return 0;
	for (i = 0; i < size; i++) {
		if (ZERO_OR_NULL_PTR(objs[i]))
			continue;
		ev.ptr = (unsigned long)objs[i];
		kmt_record(&ev);
	}
	return 0;
}

static int kmt_kmalloc_nolock_entry(struct kretprobe_instance *ri,
				    struct pt_regs *regs)
{
	struct kmt_call *call = (struct kmt_call *)ri->data;

	call->size = kmt_arg(regs, 0);
	call->gfp = KMT_NOLOCK_HAS_ARGS ? kmt_arg(regs, 1) : 0;
	call->node = KMT_NOLOCK_HAS_ARGS ? (int)kmt_arg(regs, 2) :
		     NUMA_NO_NODE;
	return 0;
}

/* Like the kmalloc tracepoint, a failure is recorded with ptr 0. */
static int kmt_kmalloc_nolock_ret(struct kretprobe_instance *ri,
				  struct pt_regs *regs)
{
	const struct kmt_call *call = (const struct kmt_call *)ri->data;
	unsigned long ptr = regs_return_value(regs);
	struct kmt_ev ev = {
		.type = KMT_REC_KMALLOC,
		.flags = KMT_F_PROBED,
		.call_site = get_kretprobe_retaddr(ri),
		.ptr = ZERO_OR_NULL_PTR((void *)ptr) ? 0 : ptr,
		.bytes_req = call->size,
		.bytes_alloc = kmalloc_size_roundup(call->size),
		.gfp = (__force gfp_t)call->gfp,
		.node = call->node,
	};

	if (READ_ONCE(kmt_probes_on) && call->size)
		kmt_record(&ev);
	return 0;
}

static int kmt_kfree_nolock_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct kmt_ev ev = {
		.type = KMT_REC_KFREE,
		.flags = KMT_F_PROBED,
		.call_site = regs_get_kernel_stack_nth(regs, 0),
		.ptr = kmt_arg(regs, 0),
		.node = KMT_NODE_ANY,
	};

	if (READ_ONCE(kmt_probes_on) && !ZERO_OR_NULL_PTR((void *)ev.ptr))
		kmt_record(&ev);
	return 0;
}

static int kmt_kfree_rcu_sheaf_entry(struct kretprobe_instance *ri,
				     struct pt_regs *regs)
{
	struct kmt_call *call = (struct kmt_call *)ri->data;

	call->s = (struct kmem_cache *)kmt_arg(regs, 0);
	call->obj = (void *)kmt_arg(regs, 1);
	return 0;
}

/*
 * true: the object went into a sheaf that is given back whole after a
 * grace period, with no free of its own; false: kfree_rcu() takes its
 * usual way, to a free the other probes see.
 */
static int kmt_kfree_rcu_sheaf_ret(struct kretprobe_instance *ri,
				   struct pt_regs *regs)
{
	const struct kmt_call *call = (const struct kmt_call *)ri->data;
	struct kmt_ev ev = {
		.type = KMT_REC_CACHE_FREE,
		.flags = KMT_F_PROBED,
		.call_site = get_kretprobe_retaddr(ri),
		.ptr = (unsigned long)call->obj,
		.cache = call->s,
		.node = KMT_NODE_ANY,
	};

	if (READ_ONCE(kmt_probes_on) && regs_return_value(regs))
		kmt_record(&ev);
	return 0;
}

static struct kmt_path kmt_paths[] = {
	{
		.name = "kmem_cache_alloc_bulk",
		.symbol = KMT_SYM_ALLOC_BULK,
		.ret = true,
		.rp = {
			.entry_handler = kmt_alloc_bulk_entry,
			.handler = kmt_alloc_bulk_ret,
		},
	},
	{
		.name = "kmem_cache_free_bulk",
		.symbol = KMT_SYM_FREE_BULK,
		.rp.kp.pre_handler = kmt_free_bulk_pre,
	},
	{
		.name = "kmalloc_nolock",
		.symbol = KMT_SYM_KMALLOC_NOLOCK,
		.ret = true,
		.rp = {
			.entry_handler = kmt_kmalloc_nolock_entry,
			.handler = kmt_kmalloc_nolock_ret,
		},
	},
	{
		.name = "kfree_nolock",
		.symbol = KMT_SYM_KFREE_NOLOCK,
		.rp.kp.pre_handler = kmt_kfree_nolock_pre,
	},
	{
		.name = "kfree_rcu_sheaf",
		.symbol = KMT_SYM_KFREE_RCU_SHEAF,
		.ret = true,
		.rp = {
			.entry_handler = kmt_kfree_rcu_sheaf_entry,
			.handler = kmt_kfree_rcu_sheaf_ret,
		},
	},
};

/*
 * sprint_symbol() gives "name+0xOFF/0xSIZE": the bounds of the function
 * around @addr, or none.
 */
static void kmt_function_bounds(unsigned long addr, unsigned long *start,
				unsigned long *end)
{
	char text[KSYM_SYMBOL_LEN];
	unsigned long off, size;
	char *plus, *slash, *space;

	*start = 0;
	*end = 0;
	sprint_symbol(text, addr);
	plus = strrchr(text, '+');
	slash = plus ? strchr(plus, '/') : NULL;
	if (!slash)
		return;
	*slash = '\0';
	space = strchr(slash + 1, ' ');
	if (space)
		*space = '\0';
	if (kstrtoul(plus + 1, 0, &off) || kstrtoul(slash + 1, 0, &size))
		return;
	*start = addr - off;
	*end = *start + size;
}

/*
 * Registers every path's probe. A path that cannot be hooked is only
 * reported (coverage file, dmesg): tracing goes on without it.
 */
static void kmt_register_paths(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kmt_paths); i++) {
		struct kmt_path *path = &kmt_paths[i];
		struct kprobe *kp = &path->rp.kp;

		if (!path->symbol) {
			path->how = KMT_HOW_ABSENT;
			continue;
		}
		kp->symbol_name = path->symbol;
		if (path->ret) {
			path->rp.data_size = sizeof(struct kmt_call);
			/* Bulk allocations may sleep: instances outlive CPUs. */
			path->rp.maxactive = max(64U, 4 * num_possible_cpus());
			path->err = register_kretprobe(&path->rp);
		} else {
			path->err = register_kprobe(kp);
		}
		path->how = path->err ? KMT_HOW_UNSEEN : KMT_HOW_HOOKED;
		if (path->err)
			pr_warn("cannot hook %s (%s): %d; its objects are not recorded\n",
				path->name, path->symbol, path->err);
	}
	if (kmt_paths[0].how == KMT_HOW_HOOKED)
		kmt_function_bounds((unsigned long)kmt_paths[0].rp.kp.addr,
				    &kmt_alloc_bulk_start, &kmt_alloc_bulk_end);
}

static void kmt_unregister_paths(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kmt_paths); i++) {
		struct kmt_path *path = &kmt_paths[i];

		if (path->how != KMT_HOW_HOOKED)
			continue;
		if (path->ret)
			unregister_kretprobe(&path->rp);
		else
			unregister_kprobe(&path->rp.kp);
	}
}

/* The page tracepoints are not exported: look them up by name. */
static void kmt_match_tracepoint(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "mm_page_alloc"))
		kmt_page_alloc_tp = tp;
	else if (!strcmp(tp->name, "mm_page_free"))
		kmt_page_free_tp = tp;
}

static int kmt_attach(void)
{
	unsigned int cpu;
	int ret;

	/* No probe runs now: a new session describes every cache again. */
	for_each_possible_cpu(cpu) {
		struct kmt_cpu *c = per_cpu_ptr(kmt_cpus, cpu);

		memset(c->desc, 0, sizeof(c->desc));
		if (c->stack_index) {
			memset(c->stack_index, 0,
			       (kmt_stack_mask + 1) * sizeof(*c->stack_index));
			c->stack_used = 0;
		}
		if (c->walk) {
			/* Its entries name stacks by their ids in the table. */
			memset(c->walk, 0, (size_t)stack_cache * kmt_walk_stride);
			memset(c->page_key_off, 0, sizeof(c->page_key_off));
		}
	}
	ret = kmt_register_slab_probes();
	if (ret)
		goto out;
	WRITE_ONCE(kmt_probes_on, true);
	if (!pages)
		return 0;
	ret = tracepoint_probe_register(kmt_page_alloc_tp, kmt_tp_page_alloc,
					NULL);
	if (ret)
		goto stop_probes;
	ret = tracepoint_probe_register(kmt_page_free_tp, kmt_tp_page_free,
					NULL);
	if (ret)
		goto unregister_page_alloc;
	return 0;

unregister_page_alloc:
	tracepoint_probe_unregister(kmt_page_alloc_tp, kmt_tp_page_alloc, NULL);
stop_probes:
	WRITE_ONCE(kmt_probes_on, false);
	kmt_unregister_slab_probes();
	/* Also waits for the kprobe handlers: they run non-preemptible. */
	tracepoint_synchronize_unregister();
out:
	pr_err("cannot attach to the allocator tracepoints: %d\n", ret);
	return ret;
}

/* After this returns no probe is running or will run. */
static void kmt_detach(void)
{
	if (pages) {
		tracepoint_probe_unregister(kmt_page_free_tp, kmt_tp_page_free,
					    NULL);
		tracepoint_probe_unregister(kmt_page_alloc_tp,
					    kmt_tp_page_alloc, NULL);
	}
	WRITE_ONCE(kmt_probes_on, false);
	kmt_unregister_slab_probes();
	/* Also waits for the kprobe handlers: they run non-preemptible. */
	tracepoint_synchronize_unregister();
}

/*
 * With no probe attached: write each CPU's pending LOST record where
 * there is room, then close every partly filled sub-buffer so that a
 * reader (splice only returns complete sub-buffers) gets all of it.
 * Empty sub-buffers are left alone: flushing one would produce a
 * sub-buffer of pure padding.
 */
static void kmt_finish_buffers(void)
{
	unsigned long irqflags;
	unsigned int cpu;
	u64 now;

	cpus_read_lock();
	for_each_possible_cpu(cpu) {
		struct rchan_buf *buf = *per_cpu_ptr(kmt_chan->buf, cpu);
		struct kmt_cpu *c = per_cpu_ptr(kmt_cpus, cpu);

		if (!buf)
			continue;
		/* A stats reader preempting this writer would spin. */
		local_irq_save(irqflags);
		now = ktime_get_mono_fast_ns();
		raw_write_seqcount_begin(&c->stats_seq);
		kmt_fold_nested(c, now);
		if (c->pending_lost)
			kmt_write_lost(c, buf, cpu, now);
		raw_write_seqcount_end(&c->stats_seq);
		if (buf->offset && buf->offset <= buf->chan->subbuf_size)
			relay_switch_subbuf(buf, 0);
		local_irq_restore(irqflags);
	}
	cpus_read_unlock();
}

static int kmt_set_enabled(bool on)
{
	int ret = 0;

	mutex_lock(&kmt_enable_lock);
	if (on) {
		if (!kmt_enabled) {
			ret = kmt_attach();
			kmt_enabled = !ret;
		}
	} else {
		if (kmt_enabled) {
			kmt_detach();
			kmt_enabled = false;
		}
		kmt_finish_buffers();
	}
	mutex_unlock(&kmt_enable_lock);
	return ret;
}

static void kmt_snapshot(unsigned int cpu, u64 *emitted, u64 *written,
			 u64 *dropped)
{
	struct kmt_cpu *c = per_cpu_ptr(kmt_cpus, cpu);
	unsigned int start;
	u64 nested;

	do {
		start = read_seqcount_begin(&c->stats_seq);
		nested = local_read(&c->nested);
		*emitted = c->emitted + nested;
		*written = c->written;
		*dropped = c->dropped + nested;
	} while (read_seqcount_retry(&c->stats_seq, start));
}

static u64 kmt_total_dropped(void)
{
	u64 emitted, written, dropped, total = 0;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		kmt_snapshot(cpu, &emitted, &written, &dropped);
		total += dropped;
	}
	return total;
}

struct kmt_stack_stats {
	u64 with_stack, no_stack_full, no_stack_unwind;
	u64 stacks_written, stacks_dropped;
	u64 walked, cached, check_failed;
	u32 used;
};

static void kmt_stack_snapshot(unsigned int cpu, struct kmt_stack_stats *st)
{
	struct kmt_cpu *c = per_cpu_ptr(kmt_cpus, cpu);
	unsigned int start;

	do {
		start = read_seqcount_begin(&c->stats_seq);
		st->with_stack = c->with_stack;
		st->no_stack_full = c->no_stack_full;
		st->no_stack_unwind = c->no_stack_unwind;
		st->stacks_written = c->stacks_written;
		st->stacks_dropped = c->stacks_dropped;
		st->walked = c->stacks_walked;
		st->cached = c->stacks_cached;
		st->check_failed = c->stacks_check_failed;
		st->used = c->stack_used;
	} while (read_seqcount_retry(&c->stats_seq, start));
}

/*
 * relay's own file operations, forwarded, in a structure owned by this
 * module: an open cpuN file holds a reference on the module, so rmmod
 * fails while kmemtraced reads instead of freeing code under it.
 * open, release, read and poll are relay's core (kmt_check_relay_fops()
 * refuses to load without them); mmap and splice are forwarded only
 * where this kernel's relay has them: splice_read is gone from 6.8.
 */
static int kmt_relay_open(struct inode *inode, struct file *file)
{
	int ret = relay_file_operations.open(inode, file);

	/* A new reader: every CPU describes its caches to it again. */
	if (!ret)
		atomic_inc(&kmt_desc_gen);
	return ret;
}

static int kmt_relay_release(struct inode *inode, struct file *file)
{
	return relay_file_operations.release(inode, file);
}

/*
 * relay's read() takes the writer's position (subbufs_produced, offset)
 * without a lock. The writer runs on the buffer's CPU with interrupts
 * off, so a reader bound to that CPU never sees a sub-buffer switch half
 * made; a reader elsewhere can, and then reads a sub-buffer of the
 * previous lap as if it were new (seen after CPU hotplug, which unbinds
 * kmemtraced's threads). So while tracing is on and the CPU online (both
 * held still for the read), only a task bound to that CPU alone may read:
 * others get EAGAIN, and bind (taskset -c N) or stop tracing first.
 */
static bool kmt_reader_bound(const struct rchan_buf *buf)
{
	return current->nr_cpus_allowed == 1 &&
	       cpumask_test_cpu(buf->cpu, current->cpus_ptr);
}

static ssize_t kmt_relay_read(struct file *file, char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	struct rchan_buf *buf = file->private_data;
	ssize_t ret = -EAGAIN;

	mutex_lock(&kmt_enable_lock);
	cpus_read_lock();
	if (!kmt_enabled || !cpu_online(buf->cpu) || kmt_reader_bound(buf))
		ret = relay_file_operations.read(file, ubuf, count, ppos);
	cpus_read_unlock();
	mutex_unlock(&kmt_enable_lock);
	return ret;
}

static __poll_t kmt_relay_poll(struct file *file, poll_table *wait)
{
	return relay_file_operations.poll(file, wait);
}

static int kmt_relay_mmap(struct file *file, struct vm_area_struct *vma)
{
	if (!relay_file_operations.mmap)
		return -ENODEV;
	return relay_file_operations.mmap(file, vma);
}

/* What splice(2) itself answers for a file that cannot splice. */
static ssize_t kmt_relay_splice_read(struct file *in, loff_t *ppos,
				     struct pipe_inode_info *pipe, size_t len,
				     unsigned int flags)
{
	if (!relay_file_operations.splice_read)
		return -EINVAL;
	return relay_file_operations.splice_read(in, ppos, pipe, len, flags);
}

static int kmt_check_relay_fops(void)
{
	const struct file_operations *r = &relay_file_operations;

	if (r->open && r->release && r->read && r->poll)
		return 0;
	pr_err("this kernel's relay files lack open, release, read or poll\n");
	return -EOPNOTSUPP;
}

static const struct file_operations kmt_relay_fops = {
	.owner = THIS_MODULE,
	.open = kmt_relay_open,
	.release = kmt_relay_release,
	.read = kmt_relay_read,
	.poll = kmt_relay_poll,
	.mmap = kmt_relay_mmap,
	.splice_read = kmt_relay_splice_read,
};

static struct dentry *kmt_create_buf_file(const char *filename,
					  struct dentry *parent, umode_t mode,
					  struct rchan_buf *buf, int *is_global)
{
	/*
	 * The "unsafe" variant hands out kmt_relay_fops itself (mmap and
	 * splice included) instead of debugfs's removal proxy, which has
	 * neither; the module reference taken at open makes removal safe.
	 */
	return debugfs_create_file_unsafe(filename, mode, parent, buf,
					  &kmt_relay_fops);
}

static int kmt_remove_buf_file(struct dentry *dentry)
{
	debugfs_remove(dentry);
	return 0;
}

/*
 * No subbuf_start callback: relay's default (5.11 and later) refuses to
 * switch into a sub-buffer the reader has not consumed, which is the
 * no-overwrite mode kmt_slot() relies on, and it spares kmemtrace the
 * callback's signature, which changed after 6.12.
 */
static const struct rchan_callbacks kmt_relay_callbacks = {
	.create_buf_file = kmt_create_buf_file,
	.remove_buf_file = kmt_remove_buf_file,
};

static ssize_t kmt_abi_read(struct file *file, char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	char text[24];
	int len;

	len = scnprintf(text, sizeof(text), "%u.%u\n", KMT_ABI_MAJOR,
			KMT_ABI_MINOR);
	return simple_read_from_buffer(ubuf, count, ppos, text, len);
}

static const struct file_operations kmt_abi_fops = {
	.owner = THIS_MODULE,
	.read = kmt_abi_read,
	.llseek = default_llseek,
};

static ssize_t kmt_enabled_read(struct file *file, char __user *ubuf,
				size_t count, loff_t *ppos)
{
	char text[2] = { READ_ONCE(kmt_enabled) ? '1' : '0', '\n' };

	return simple_read_from_buffer(ubuf, count, ppos, text, sizeof(text));
}

static ssize_t kmt_enabled_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	bool on;
	int ret;

	ret = kstrtobool_from_user(ubuf, count, &on);
	if (ret)
		return ret;
	ret = kmt_set_enabled(on);
	return ret ? ret : count;
}

static const struct file_operations kmt_enabled_fops = {
	.owner = THIS_MODULE,
	.read = kmt_enabled_read,
	.write = kmt_enabled_write,
	.llseek = default_llseek,
};

static ssize_t kmt_overruns_read(struct file *file, char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	char text[24];
	int len;

	len = scnprintf(text, sizeof(text), "%llu\n", kmt_total_dropped());
	return simple_read_from_buffer(ubuf, count, ppos, text, len);
}

static const struct file_operations kmt_overruns_fops = {
	.owner = THIS_MODULE,
	.read = kmt_overruns_read,
	.llseek = default_llseek,
};

/*
 * coverage: how each path that hands out or takes back slab objects is
 * recorded on this kernel: "PATH HOW [DETAIL]", HOW one of tracepoint,
 * kprobe, kretprobe, absent (no such path here), unseen (not hooked:
 * its objects are invisible to the trace).
 */
static int kmt_coverage_show(struct seq_file *m, void *v)
{
	static const char * const tracepoints[] = {
		"kmalloc", "kmem_cache_alloc", "kfree", "kmem_cache_free",
	};
	unsigned int i;

	seq_puts(m, "# path how detail\n");
	for (i = 0; i < ARRAY_SIZE(tracepoints); i++)
		seq_printf(m, "%s tracepoint\n", tracepoints[i]);
	for (i = 0; i < ARRAY_SIZE(kmt_paths); i++) {
		const struct kmt_path *path = &kmt_paths[i];
		int missed = path->ret ? path->rp.nmissed : path->rp.kp.nmissed;

		switch (path->how) {
		case KMT_HOW_ABSENT:
			seq_printf(m, "%s absent no such function in this kernel\n",
				   path->name);
			break;
		case KMT_HOW_HOOKED:
			seq_printf(m, "%s %s %s", path->name,
				   path->ret ? "kretprobe" : "kprobe",
				   path->symbol);
			if (missed)
				seq_printf(m, " (%d calls missed)", missed);
			seq_putc(m, '\n');
			break;
		case KMT_HOW_UNSEEN:
			seq_printf(m, "%s unseen %s could not be hooked: error %d\n",
				   path->name, path->symbol, path->err);
			break;
		}
	}
	return 0;
}

static int kmt_coverage_open(struct inode *inode, struct file *file)
{
	return single_open(file, kmt_coverage_show, NULL);
}

static const struct file_operations kmt_coverage_fops = {
	.owner = THIS_MODULE,
	.open = kmt_coverage_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

static int kmt_stats_show(struct seq_file *m, void *v)
{
	u64 emitted, written, dropped;
	unsigned int cpu;

	seq_printf(m, "# buffers %s: subbufs %u subbuf_size %u bytes_per_cpu %llu possible_cpus %u total %llu mem_share %u available %llu allowed %llu\n",
		   kmt_budget.sized, subbufs, subbuf_size, kmt_budget.per_cpu,
		   kmt_budget.cpus, kmt_budget.total, mem_share,
		   kmt_budget.available, kmt_budget.allowed);
	seq_puts(m, "# cpu emitted written dropped\n");
	for_each_possible_cpu(cpu) {
		kmt_snapshot(cpu, &emitted, &written, &dropped);
		seq_printf(m, "%u %llu %llu %llu\n", cpu, emitted, written,
			   dropped);
	}
	return 0;
}

static int kmt_stats_open(struct inode *inode, struct file *file)
{
	return single_open(file, kmt_stats_show, NULL);
}

static const struct file_operations kmt_stats_fops = {
	.owner = THIS_MODULE,
	.open = kmt_stats_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

static u64 kmt_stack_cost(void);

/*
 * stacks: how stacks are taken (fixed at load) and, per possible CPU,
 * since load: written events that had a stack asked for, by outcome,
 * stacks written and dropped, and the table's entries in use now.
 */
static int kmt_stacks_show(struct seq_file *m, void *v)
{
	struct kmt_stack_stats st;
	unsigned int cpu;

	seq_printf(m, "# stacks depth %u frees %u entries %u bytes_per_cpu %llu cache %u check %u\n",
		   stack_depth, stack_depth && stack_frees,
		   stack_depth ? stack_entries : 0, kmt_stack_cost(),
		   stack_depth ? stack_cache : 0,
		   stack_depth && stack_cache && stack_check);
	seq_puts(m, "# cpu with_stack no_stack_full no_stack_unwind stacks_written stacks_dropped entries_used walked cached check_failed\n");
	for_each_possible_cpu(cpu) {
		kmt_stack_snapshot(cpu, &st);
		seq_printf(m, "%u %llu %llu %llu %llu %llu %u %llu %llu %llu\n",
			   cpu, st.with_stack, st.no_stack_full,
			   st.no_stack_unwind, st.stacks_written,
			   st.stacks_dropped, st.used, st.walked, st.cached,
			   st.check_failed);
	}
	return 0;
}

static int kmt_stacks_open(struct inode *inode, struct file *file)
{
	return single_open(file, kmt_stacks_show, NULL);
}

static const struct file_operations kmt_stacks_fops = {
	.owner = THIS_MODULE,
	.open = kmt_stacks_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

/* Bytes of one CPU's stack table's parts: index, entries, frames. */
static size_t kmt_stack_index_size(void)
{
	return ALIGN((size_t)(kmt_stack_mask + 1) * sizeof(u16), 8);
}

static size_t kmt_stack_ent_size(void)
{
	return ALIGN((size_t)stack_entries * sizeof(struct kmt_stack_ent), 8);
}

static size_t kmt_stack_frames_size(void)
{
	return (size_t)stack_entries * stack_depth * sizeof(unsigned long);
}

/* Bytes of one CPU's stack table before vmalloc rounds it: walk cache last. */
static size_t kmt_stack_table_size(void)
{
	return kmt_stack_index_size() + kmt_stack_ent_size() +
	       kmt_stack_frames_size() + (size_t)stack_cache * kmt_walk_stride;
}

/* What one CPU's stack table costs: its pages and vmalloc's page array. */
static u64 kmt_stack_cost(void)
{
	u64 pages;

	if (!stack_depth)
		return 0;
	pages = PAGE_ALIGN((u64)kmt_stack_table_size()) >> PAGE_SHIFT;
	return (pages << PAGE_SHIFT) + pages * sizeof(struct page *);
}

/*
 * Bytes one CPU's buffer takes: the ring's pages, relay's page array and
 * padding array and its struct rchan_buf, and this module's per-CPU
 * state, its stack table included. relay allocates the same for every
 * CPU that comes online later; the stack tables are allocated at load
 * for every possible CPU.
 */
static u64 kmt_buf_cost(void)
{
	u64 pages = PAGE_ALIGN((u64)subbufs * subbuf_size) >> PAGE_SHIFT;

	return (pages << PAGE_SHIFT) + pages * sizeof(struct page *) +
	       (u64)subbufs * sizeof(size_t) + sizeof(struct rchan_buf) +
	       sizeof(struct kmt_cpu) + kmt_stack_cost();
}

/* Checks the stack parameters; sizes the table's index. */
static int kmt_check_stack_params(void)
{
	if (stack_depth > KMT_STACK_MAX_DEPTH) {
		pr_err("stack_depth=%u is outside 0..%u (frames)\n", stack_depth,
		       KMT_STACK_MAX_DEPTH);
		return -EINVAL;
	}
	if (!stack_depth)
		return 0;
	if (stack_entries < 1 || stack_entries > KMT_STACK_ENTRIES_MAX) {
		pr_err("stack_entries=%u is outside 1..%u (distinct stacks per CPU)\n",
		       stack_entries, KMT_STACK_ENTRIES_MAX);
		return -EINVAL;
	}
	/* At most half full: a lookup ends at a free slot soon. */
	kmt_stack_mask = roundup_pow_of_two(2 * stack_entries) - 1;
	if (stack_cache > KMT_WALK_CACHE_MAX) {
		pr_err("stack_cache=%u is outside 0..%u (walks per CPU)\n",
		       stack_cache, KMT_WALK_CACHE_MAX);
		return -EINVAL;
	}
	if (stack_cache && !KMT_HAVE_WALK_CACHE) {
		pr_info("stack_cache: needs the x86-64 ORC unwinder; every stack is unwound\n");
		stack_cache = 0;
	}
	if (!stack_cache)
		return 0;
	/* Two sets at least: hash_long() takes 1..63 bits. */
	stack_cache = roundup_pow_of_two(max(stack_cache, 2 * KMT_WALK_WAYS));
	kmt_walk_bits = ilog2(stack_cache / KMT_WALK_WAYS);
	kmt_walk_stride = ALIGN(struct_size_t(struct kmt_walk_ent, off,
					      KMT_WALK_BELOW + stack_depth),
				sizeof(long));
	return 0;
}

/* Rounds subbuf_size up to whole records and a ring of whole pages. */
static void kmt_round_subbuf_size(void)
{
	unsigned long unit;
	unsigned int rounded;

	/*
	 * Records must not straddle sub-buffers, and the ring must be whole
	 * pages: relay allocates PAGE_ALIGN(subbufs * subbuf_size), and
	 * readers that wrap at that size (mmap, and splice where relay had
	 * it) would see stale bytes past a ring ending mid-page.
	 */
	unit = lcm(KMT_RECORD_SIZE, PAGE_SIZE / gcd(subbufs, PAGE_SIZE));
	rounded = roundup(subbuf_size, unit);
	if (rounded != subbuf_size) {
		pr_notice("subbuf_size=%u rounded up to %u: a multiple of the %u-byte record that makes %u sub-buffers whole pages\n",
			  subbuf_size, rounded, KMT_RECORD_SIZE, subbufs);
		subbuf_size = rounded;
	}
}

/*
 * The default ring shrinks until all possible CPUs fit in the allowance:
 * fewer sub-buffers first (down to KMT_FIT_SUBBUFS_FLOOR), then smaller
 * ones (down to a page), then fewer again (down to two).
 */
static void kmt_fit_default(u64 allowed_per_cpu)
{
	while (kmt_buf_cost() > allowed_per_cpu) {
		if (subbufs > KMT_FIT_SUBBUFS_FLOOR)
			subbufs /= 2;
		else if (subbuf_size > PAGE_SIZE)
			subbuf_size /= 2;
		else if (subbufs > KMT_SUBBUFS_MIN)
			subbufs /= 2;
		else
			return;
	}
}

/*
 * Checks the buffer parameters, fills in the ones not given, and refuses
 * before relay allocates anything when the buffers of every possible CPU
 * would take more than mem_share percent of the memory available now:
 * relay_open() of too much would wake the OOM killer, which may pick
 * any process on the machine.
 */
static int kmt_size_buffers(void)
{
	bool defaulted = !subbufs && !subbuf_size;

	if (mem_share < 1 || mem_share > KMT_MEM_SHARE_MAX) {
		pr_err("mem_share=%u is outside 1..%u (percent of available memory)\n",
		       mem_share, KMT_MEM_SHARE_MAX);
		return -EINVAL;
	}
	if (kmt_check_stack_params())
		return -EINVAL;
	if (!subbufs)
		subbufs = KMT_DEFAULT_SUBBUFS;
	if (!subbuf_size)
		subbuf_size = KMT_DEFAULT_SUBBUF_SIZE;
	if (subbufs < KMT_SUBBUFS_MIN || subbufs > KMT_SUBBUFS_MAX) {
		pr_err("subbufs=%u is outside %u..%u\n", subbufs,
		       KMT_SUBBUFS_MIN, KMT_SUBBUFS_MAX);
		return -EINVAL;
	}
	if (subbuf_size < KMT_SUBBUF_SIZE_MIN ||
	    subbuf_size > KMT_SUBBUF_SIZE_MAX) {
		pr_err("subbuf_size=%u is outside %u..%u\n", subbuf_size,
		       KMT_SUBBUF_SIZE_MIN, KMT_SUBBUF_SIZE_MAX);
		return -EINVAL;
	}

	kmt_budget.cpus = num_possible_cpus();
	kmt_budget.available = (u64)si_mem_available() << PAGE_SHIFT;
	kmt_budget.allowed = div_u64(kmt_budget.available, 100) * mem_share;
	kmt_budget.sized = "given";
	if (defaulted) {
		kmt_budget.sized = "default";
		kmt_fit_default(div_u64(kmt_budget.allowed, kmt_budget.cpus));
		if (subbufs != KMT_DEFAULT_SUBBUFS ||
		    subbuf_size != KMT_DEFAULT_SUBBUF_SIZE)
			kmt_budget.sized = "fitted";
	}
	kmt_round_subbuf_size();
	if ((u64)subbufs * subbuf_size > KMT_BUF_SIZE_MAX) {
		pr_err("subbufs * subbuf_size = %llu bytes per CPU, more than %llu\n",
		       (u64)subbufs * subbuf_size, KMT_BUF_SIZE_MAX);
		return -EINVAL;
	}

	kmt_budget.per_cpu = kmt_buf_cost();
	kmt_budget.total = kmt_budget.per_cpu * kmt_budget.cpus;
	if (kmt_budget.total > kmt_budget.allowed) {
		pr_err("%u x %u-byte sub-buffers for %u possible CPUs need %llu KiB, more than mem_share=%u%% of the %llu KiB available (%llu KiB): nothing allocated; lower subbufs or subbuf_size, or raise mem_share\n",
		       subbufs, subbuf_size, kmt_budget.cpus,
		       kmt_budget.total >> 10, mem_share,
		       kmt_budget.available >> 10, kmt_budget.allowed >> 10);
		if (stack_depth)
			pr_err("of which stack tables take %llu KiB per CPU (stack_entries=%u x stack_depth=%u, stack_cache=%u): lower them, or raise mem_share\n",
			       kmt_stack_cost() >> 10, stack_entries,
			       stack_depth, stack_cache);
		return -ENOMEM;
	}
	return 0;
}

/* Every possible CPU's stack table, at load: none is made in a probe. */
static int kmt_alloc_stacks(void)
{
	unsigned int cpu;

	if (!stack_depth)
		return 0;
	for_each_possible_cpu(cpu) {
		struct kmt_cpu *c = per_cpu_ptr(kmt_cpus, cpu);
		char *mem = vzalloc(kmt_stack_table_size());

		/* vzalloc() says it failed, and how large the request was. */
		if (!mem)
			return -ENOMEM;
		c->stack_index = (u16 *)mem;
		mem += kmt_stack_index_size();
		c->stack_ent = (struct kmt_stack_ent *)mem;
		mem += kmt_stack_ent_size();
		c->stack_frames = (unsigned long *)mem;
		mem += kmt_stack_frames_size();
		c->walk = stack_cache ? mem : NULL;
	}
	return 0;
}

static void kmt_free_stacks(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		vfree(per_cpu_ptr(kmt_cpus, cpu)->stack_index);
}

static int __init kmt_init(void)
{
	unsigned int cpu;
	int ret;

	ret = kmt_size_buffers();
	if (ret)
		return ret;
	ret = kmt_check_relay_fops();
	if (ret)
		return ret;
	ret = kmt_check_cache_layout();
	if (ret)
		return ret;

	if (pages) {
		for_each_kernel_tracepoint(kmt_match_tracepoint, NULL);
		if (!kmt_page_alloc_tp || !kmt_page_free_tp) {
			pr_err("pages=1 but this kernel has no mm_page_alloc/mm_page_free tracepoint\n");
			return -ENOENT;
		}
		/* Called through them when another probe shares the event. */
		kmt_function_bounds((unsigned long)kmt_page_alloc_tp->iterator,
				    &kmt_page_iter[0][0], &kmt_page_iter[0][1]);
		kmt_function_bounds((unsigned long)kmt_page_free_tp->iterator,
				    &kmt_page_iter[1][0], &kmt_page_iter[1][1]);
	}

	kmt_cpus = alloc_percpu(struct kmt_cpu);
	if (!kmt_cpus)
		return -ENOMEM;
	for_each_possible_cpu(cpu)
		seqcount_init(&per_cpu_ptr(kmt_cpus, cpu)->stats_seq);
	ret = kmt_alloc_stacks();
	if (ret)
		goto free_stacks;

	kmt_dir = debugfs_create_dir(KMT_DEBUGFS_DIR, NULL);
	if (IS_ERR(kmt_dir)) {
		ret = PTR_ERR(kmt_dir);
		pr_err("cannot create <debugfs>/%s: %d\n", KMT_DEBUGFS_DIR, ret);
		goto free_stacks;
	}

	/* relay names the files base + CPU number: KMT_DEBUGFS_CPU_FMT. */
	kmt_chan = relay_open("cpu", kmt_dir, subbuf_size, subbufs,
			      &kmt_relay_callbacks, NULL);
	if (!kmt_chan) {
		ret = -ENOMEM;
		pr_err("cannot allocate %u x %u bytes of relay buffer per CPU\n",
		       subbufs, subbuf_size);
		goto remove_dir;
	}

	debugfs_create_file(KMT_DEBUGFS_ABI, 0400, kmt_dir, NULL,
			    &kmt_abi_fops);
	debugfs_create_file(KMT_DEBUGFS_ENABLED, 0600, kmt_dir, NULL,
			    &kmt_enabled_fops);
	debugfs_create_file(KMT_DEBUGFS_OVERRUNS, 0400, kmt_dir, NULL,
			    &kmt_overruns_fops);
	debugfs_create_file(KMT_DEBUGFS_STATS, 0400, kmt_dir, NULL,
			    &kmt_stats_fops);
	debugfs_create_file(KMT_DEBUGFS_COVERAGE, 0400, kmt_dir, NULL,
			    &kmt_coverage_fops);
	debugfs_create_file(KMT_DEBUGFS_STACKS, 0400, kmt_dir, NULL,
			    &kmt_stacks_fops);

	kmt_register_paths();

	if (!start_disabled) {
		ret = kmt_set_enabled(true);
		if (ret)
			goto close_relay;
	}

	pr_info("ABI %u.%u, tracing %s, page events %s, cache layout from %s\n",
		KMT_ABI_MAJOR, KMT_ABI_MINOR, start_disabled ? "off" : "on",
		pages ? "on" : "off", kmt_cache_layout_source());
	pr_info("buffers (%s): %u sub-buffers of %u bytes per CPU, %llu KiB for %u possible CPUs, within mem_share=%u%% of %llu KiB available (%llu KiB)\n",
		kmt_budget.sized, subbufs, subbuf_size,
		kmt_budget.total >> 10, kmt_budget.cpus, mem_share,
		kmt_budget.available >> 10, kmt_budget.allowed >> 10);
	if (stack_depth)
		pr_info("stacks: up to %u frames, of allocations%s; %u distinct stacks and %u walks per CPU, %llu KiB per CPU\n",
			stack_depth, stack_frees ? " and frees" : "",
			stack_entries, stack_cache, kmt_stack_cost() >> 10);
	return 0;

close_relay:
	kmt_unregister_paths();
	relay_close(kmt_chan);
remove_dir:
	debugfs_remove_recursive(kmt_dir);
free_stacks:
	kmt_free_stacks();
	free_percpu(kmt_cpus);
	return ret;
}

static void __exit kmt_exit(void)
{
	mutex_lock(&kmt_enable_lock);
	if (kmt_enabled) {
		kmt_detach();
		kmt_enabled = false;
	}
	mutex_unlock(&kmt_enable_lock);

	kmt_unregister_paths();
	pr_info("unloading, %llu records dropped in all\n",
		kmt_total_dropped());
	/* relay_close() removes the cpuN files; the rest go with the dir. */
	relay_close(kmt_chan);
	debugfs_remove_recursive(kmt_dir);
	kmt_free_stacks();
	free_percpu(kmt_cpus);
}

module_init(kmt_init);
module_exit(kmt_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("kmemtrace developers");
MODULE_DESCRIPTION("Slab allocation tracer writing per-CPU relay buffers");
MODULE_VERSION(KMT_VERSION);
