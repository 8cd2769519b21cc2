// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_record.c - the write path: an event, and the records that must come
 * before it, into this CPU's relay buffer as 64-byte records in the
 * format of abi/kmemtrace_abi.h.
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
 * stacks" in kmt_internal.h).
 *
 * The per-event part of the path lives in kmt_write.h, which the
 * tracepoint probes inline; this file has what the header declares (the
 * LOST record and the stack records, out of line or inlined here only),
 * the entries the kprobed paths call, and the counters' readers.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/irqflags.h>
#include <linux/jhash.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/relay.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/topology.h>

#include "kmt_compat.h"
#include "kmt_internal.h"
#include "kmt_write.h"

/* Index slots looked at before a new stack counts as "table full". */
#define KMT_STACK_PROBES	64U

atomic_t kmt_desc_gen = ATOMIC_INIT(1);
DEFINE_STATIC_KEY_FALSE(kmt_stacks_on);

/* Emits the pending LOST record; false if there is still no room. */
bool kmt_write_lost(struct kmt_cpu *c, struct rchan_buf *buf, u64 now)
{
	struct kmt_lost *rec = kmt_slot(buf);

	if (!rec)
		return false;
	*rec = (struct kmt_lost) {
		.type = KMT_REC_LOST,
		.cpu = c->cpu,
		.seq = kmt_next_seq(c),
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
 * Looks @s up in this CPU's set, from its home slot on. Returns true if
 * already described as it is now (@name, @sizes, @gen); otherwise
 * *claim is the slot to remember it in once its description is
 * written: its own, another cache's found where it was, or the first
 * free one; NULL when the probe window is full (then the cache is
 * described every time).
 */
static bool kmt_desc_known(struct kmt_cpu *c, const struct kmem_cache *s,
			   const char *name, u64 sizes, u32 gen,
			   struct kmt_desc_slot **claim)
{
	u32 h = hash_ptr(s, KMT_DESC_BITS);
	unsigned int i;

	*claim = NULL;
	for (i = 0; i < KMT_DESC_PROBES; i++) {
		struct kmt_desc_slot *d = &c->desc[(h + i) % KMT_DESC_SLOTS];

		if (d->cache == s) {
			if (d->gen == gen && d->name == name &&
			    d->sizes == sizes)
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

/*
 * kmt_describe()'s rest, when @s was not found described in its home
 * slot: the whole lookup, and the CACHE_DESC record if the stream needs
 * one. Returns room, as kmt_describe() does.
 */
noinline notrace bool kmt_describe_new(struct kmt_cpu *c,
				       struct rchan_buf *buf,
				       const struct kmem_cache *s, bool room,
				       u64 now)
{
	struct kmt_cache_desc *rec;
	struct kmt_desc_slot *claim;
	size_t object_size, size;
	const char *name;
	u8 flags = 0;
	u64 sizes;
	u32 gen;
	u32 seq;

	kmt_cache_info(s, &name, &object_size, &size);
	sizes = kmt_desc_sizes(object_size, size);
	gen = atomic_read(&kmt_desc_gen);
	if (kmt_desc_known(c, s, name, sizes, gen, &claim))
		return room;

	rec = kmt_data_slot(c, buf, room, now, &seq);
	if (!rec)
		return false;
	*rec = (struct kmt_cache_desc) {
		.type = KMT_REC_CACHE_DESC,
		.cpu = c->cpu,
		.seq = seq,
		.timestamp = now,
		.cache_id = (unsigned long)s,
		.object_size = kmt_u32(object_size, &flags),
		.size = kmt_u32(size, &flags),
	};
	if (name && strscpy(rec->name, name, sizeof(rec->name)) < 0)
		flags |= KMT_F_NAME_TRUNC;
	rec->flags = flags;
	kmt_commit(buf);
	if (claim) {
		claim->cache = s;
		claim->name = name;
		claim->sizes = sizes;
		claim->gen = gen;
	}
	return true;
}

/*
 * Keeps the walk @t just took (c->scratch and where its frames were
 * read) under its key, its stack having got @id, if it can be checked
 * again. The walk cache's (kmt_stacks.c looks walks up), but here, per
 * event from kmt_stack(), to be inlined into kmt_record() with the rest
 * of the write path.
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
	if (!to_top && t->depth < kmt_stack_depth)
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
	if (c->scratch_end == KMT_WALK_USER && t->depth < kmt_stack_depth) {
		e->regs_off = kmt_walk_off(split, n, c->scratch_regs_off,
					   t->room);
		room = max_t(unsigned long, room, n < split ?
			     e->regs_off + sizeof(struct pt_regs) :
			     e->regs_off);
	}
	e->room = room;
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
			if (c->stack_used >= kmt_stack_entries)
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
static bool kmt_write_stack(struct kmt_cpu *c, struct rchan_buf *buf, u16 id,
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
			.cpu = c->cpu,
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
 * Declared in kmt_write.h, whose write path calls it, but inlined into
 * kmt_record_stack() and kmt_record_stack_at() below, its callers, as it
 * was when all were static here: a call costs each event with a stack
 * its arguments, and room, flags and reason in memory.
 */
__always_inline u16 kmt_stack(struct kmt_cpu *c, struct rchan_buf *buf,
			      const struct kmt_taken *t, bool *room, u64 now,
			      u8 *flags, u64 **reason)
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
	*room = kmt_write_stack(c, buf, id, frames, depth, *room, now);
	if (*room) {
		e->gen = gen;
		c->stacks_written++;
	} else {
		c->stacks_dropped++;
	}
	return id;
}

/*
 * Not inlined into kmt_record() or the probes, so that the path without
 * a stack keeps a small frame; kmt_take_stack()'s frame, from which the
 * walk cache measures, is still at the same depth for every event of a
 * path. The probes call this one, with the event by value (see
 * kmt_record_inline()).
 */
noinline void kmt_record_stack(struct kmt_ev ev, unsigned long entry_pc)
{
	struct kmt_taken taken = { .entry_pc = entry_pc };

	__kmt_record(&ev, &taken);
}

/*
 * What kmt_record_fast() leaves to the whole write path: a CPU's first
 * event (its buffer not yet taken), a cache to describe (first met, or
 * again for a new reader), a LOST record to write, nested events to
 * fold, a sub-buffer to switch, a full buffer, an NMI.
 */
noinline notrace void kmt_record_full(struct kmt_ev ev)
{
	__kmt_record(&ev, NULL);
}

/*
 * The same for kmt_record() and kmt_record_entry(), with the event by
 * reference: they reach it by a tail call, as a probe reaches
 * kmt_record_stack(), so a kprobed path's stack has no more of the
 * tracer's frames than before (each is unwound, and counts against
 * KMT_WALK_BELOW).
 */
static noinline void kmt_record_stack_at(const struct kmt_ev *ev,
					 unsigned long entry_pc)
{
	struct kmt_taken taken = { .entry_pc = entry_pc };

	__kmt_record(ev, &taken);
}

/*
 * An event the filter let through, or any with no filter: recorded,
 * as the tracepoint probes record theirs (kmt_record_inline()).
 * Reached by a jump from kmt_record(), kmt_record_entry() or
 * kmt_filter.c's kmt_filtered_event().
 */
notrace void kmt_record_unfiltered(const struct kmt_ev *ev,
				   unsigned long entry_pc)
{
	if (unlikely(kmt_wants_stack(ev->type)))
		kmt_record_stack_at(ev, entry_pc);
	else if (!kmt_record_fast(ev))
		__kmt_record(ev, NULL);
}

/*
 * For the kprobed paths (kmt_paths.c). Two jumps, to the filter
 * (kmt_filter.c) or the write path: an event the filter leaves out
 * then costs no frame of the write path's.
 */
notrace void kmt_record(const struct kmt_ev *ev)
{
	if (static_branch_unlikely(&kmt_filter_on))
		kmt_filtered_event(ev, 0);
	else
		kmt_record_unfiltered(ev, 0);
}

/*
 * An event of a kprobe at the entry of the function at @entry_pc, whose
 * stack kmt_take_stack() finds from there (the call site is not on it).
 */
notrace void kmt_record_entry(const struct kmt_ev *ev, unsigned long entry_pc)
{
	if (static_branch_unlikely(&kmt_filter_on))
		kmt_filtered_event(ev, entry_pc);
	else
		kmt_record_unfiltered(ev, entry_pc);
}

/*
 * With no probe attached: write each CPU's pending LOST record where
 * there is room, then close every partly filled sub-buffer so that a
 * reader (splice only returns complete sub-buffers) gets all of it.
 * Empty sub-buffers are left alone: flushing one would produce a
 * sub-buffer of pure padding.
 */
void kmt_finish_buffers(void)
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
		/* As the write path: interrupts off while they change. */
		local_irq_save(irqflags);
		now = ktime_get_mono_fast_ns();
		kmt_fold_nested(c, now);
		if (c->pending_lost)
			kmt_write_lost(c, buf, now);
		if (buf->offset && buf->offset <= buf->chan->subbuf_size)
			relay_switch_subbuf(buf, 0);
		local_irq_restore(irqflags);
	}
	cpus_read_unlock();
}

/*
 * Runs @fn(@arg) where none of @cpu's writes is half done, for a reader
 * of its counters: on @cpu itself, whose writers run with interrupts
 * off, when it is online; here when it is not, as nothing writes them
 * then. So the write path needs no sequence count of its own (eight
 * instructions an event on arm64). kmt_enable_lock keeps out the flush
 * at disable time, which writes each CPU's from one. May sleep.
 */
void kmt_read_on_cpu(unsigned int cpu, smp_call_func_t fn, void *arg)
{
	mutex_lock(&kmt_enable_lock);
	cpus_read_lock();
	if (!cpu_online(cpu) || smp_call_function_single(cpu, fn, arg, 1))
		fn(arg);
	cpus_read_unlock();
	mutex_unlock(&kmt_enable_lock);
}

struct kmt_counts {
	unsigned int cpu;
	u64 emitted, written, dropped;
};

static void kmt_read_counts(void *arg)
{
	struct kmt_counts *n = arg;
	const struct kmt_cpu *c = per_cpu_ptr(kmt_cpus, n->cpu);
	u64 nested = local_read(&c->nested);

	/* Each nested event (an NMI's) was emitted, and dropped. */
	n->emitted = c->emitted + nested;
	n->written = c->emitted - c->dropped;
	n->dropped = c->dropped + nested;
}

void kmt_snapshot(unsigned int cpu, u64 *emitted, u64 *written, u64 *dropped)
{
	struct kmt_counts n = { .cpu = cpu };

	kmt_read_on_cpu(cpu, kmt_read_counts, &n);
	*emitted = n.emitted;
	*written = n.written;
	*dropped = n.dropped;
}

u64 kmt_total_dropped(void)
{
	u64 emitted, written, dropped, total = 0;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		kmt_snapshot(cpu, &emitted, &written, &dropped);
		total += dropped;
	}
	return total;
}
