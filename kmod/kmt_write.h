/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt_write.h - the write path without a stack, per event: an event and
 * the records that must come before it into this CPU's relay buffer
 * (see kmt_record.c for the rules it keeps).
 *
 * In a header, and always inlined, so that the tracepoint probes
 * (kmt_probes.c) carry it whole: called out of line, each event paid
 * for the call, for its struct kmt_ev stored by the probe and loaded
 * back field by field, and for the probe's stack protector canary
 * check. kmt_record.c includes it for kmt_record(), which the kprobed
 * paths call, and for the path with a stack, kmt_record_stack().
 */
#ifndef KMT_WRITE_H
#define KMT_WRITE_H

#include <linux/hardirq.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/percpu.h>
#include <linux/relay.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/topology.h>

#include "kmt_compat.h"
#include "kmt_internal.h"

/* kmt_record.c: the rarer records, out of line. */
bool kmt_write_lost(struct kmt_cpu *c, struct rchan_buf *buf, u64 now);
u16 kmt_stack(struct kmt_cpu *c, struct rchan_buf *buf,
	      const struct kmt_taken *t, bool *room, u64 now, u8 *flags,
	      u64 **reason);
void kmt_record_stack(struct kmt_ev ev, unsigned long entry_pc);
bool kmt_describe_new(struct kmt_cpu *c, struct rchan_buf *buf,
		      const struct kmem_cache *s, bool room, u64 now);

/* The seq of this CPU's next data record (struct kmt_cpu). */
static inline u32 kmt_next_seq(const struct kmt_cpu *c)
{
	return (u32)c->emitted;
}

static inline u32 kmt_u32(size_t bytes, u8 *flags)
{
	if (bytes > U32_MAX) {
		*flags |= KMT_F_CLAMPED;
		return U32_MAX;
	}
	return bytes;
}

/*
 * Whether relay refused this buffer's last switch (it leaves the offset
 * one past the sub-buffer's end then) and the reader has consumed no
 * sub-buffer since: relay's default subbuf_start would refuse again, as
 * relay_buf_full() decides. Asked inline, so that an event dropped at a
 * full buffer costs a few loads instead of relay_switch_subbuf()'s call,
 * about 95 instructions more than a recorded event.
 */
static inline bool kmt_still_full(const struct rchan_buf *buf)
{
	const struct rchan *chan = buf->chan;

	return buf->offset > chan->subbuf_size &&
	       buf->subbufs_produced - READ_ONCE(buf->subbufs_consumed) >=
	       chan->n_subbufs;
}

/* Whether a record at @off still fits in @buf's current sub-buffer. */
static inline bool kmt_fits(const struct rchan_buf *buf, size_t off)
{
	return off + KMT_RECORD_SIZE <= buf->chan->subbuf_size;
}

/*
 * Room for one record in @buf, or NULL when the buffer is full. Unlike
 * relay_reserve(), the offset only moves in kmt_commit(), after the
 * record is complete, so read() of the current sub-buffer by a
 * concurrent reader never returns a half-written record. @buf is not
 * NULL: the write path tests it once, when it takes it.
 */
static inline void *kmt_slot(struct rchan_buf *buf)
{
	if (unlikely(!kmt_fits(buf, buf->offset)) &&
	    (kmt_still_full(buf) || !relay_switch_subbuf(buf, KMT_RECORD_SIZE)))
		return NULL;
	return buf->data + buf->offset;
}

/* Publishes the record at @off, which the writer read from buf->offset. */
static inline void kmt_commit_at(struct rchan_buf *buf, size_t off)
{
	/* Pairs with the reader's view of buf->offset: record, then offset. */
	smp_wmb();
	buf->offset = off + KMT_RECORD_SIZE;
}

static inline void kmt_commit(struct rchan_buf *buf)
{
	kmt_commit_at(buf, buf->offset);
}

static inline void kmt_note_dropped(struct kmt_cpu *c, u64 n, u64 now)
{
	if (!c->pending_lost)
		c->first_lost_ns = now;
	c->pending_lost += n;
	c->dropped += n;
}

/*
 * Events that found the CPU busy count as emitted and dropped. Nearly
 * every event finds none: a plain read first is cheaper than the
 * exchange. An NMI that adds one after the read is folded by the next
 * event, as one after the exchange would be; kmt_snapshot() counts it
 * meanwhile.
 */
static inline void kmt_fold_nested(struct kmt_cpu *c, u64 now)
{
	long n;

	if (likely(!local_read(&c->nested)))
		return;
	n = local_xchg(&c->nested, 0);
	c->emitted += n;
	kmt_note_dropped(c, n, now);
}

/*
 * Takes the next seq for a data record and accounts for it. Returns
 * the slot to fill, or NULL if the record is dropped (always when
 * @room is false: nothing may be written while a LOST record waits).
 * Always inlined: called out of line, every event paid for the call
 * and for @seq kept in memory (which also brought in the stack
 * protector's canary check).
 */
static __always_inline void *kmt_data_slot(struct kmt_cpu *c,
					   struct rchan_buf *buf, bool room,
					   u64 now, u32 *seq)
{
	void *slot = room ? kmt_slot(buf) : NULL;

	*seq = kmt_next_seq(c);
	c->emitted++;
	if (!slot)
		kmt_note_dropped(c, 1, now);
	return slot;
}

/*
 * Whether @s sits in its home slot of this CPU's set, or the one after
 * it, as it was described: the question nearly every cache event ends
 * with (one hash, four compares where it is found). Two slots, not one:
 * a cache whose home another took (a few in a hundred) would otherwise
 * leave the fast path at each of its events. kmt_desc_known() asks the
 * rest.
 */
static __always_inline bool kmt_desc_near_home(const struct kmt_cpu *c,
					       const struct kmem_cache *s)
{
	u32 h = hash_ptr(s, KMT_DESC_BITS);
	const struct kmt_desc_slot *d = &c->desc[h];
	size_t object_size, size;
	const char *name;

	if (unlikely(d->cache != s)) {
		d = &c->desc[(h + 1) % KMT_DESC_SLOTS];
		if (d->cache != s)
			return false;
	}
	kmt_cache_info(s, &name, &object_size, &size);
	return d->gen == atomic_read(&kmt_desc_gen) && d->name == name &&
	       d->sizes == kmt_desc_sizes(object_size, size);
}

/*
 * Describes @s unless this CPU's stream already did; returns room.
 * Inline is only kmt_desc_near_home(). The rest (a cache met for the
 * first time, or again after a new reader, one that collided, or a
 * description to write) is kmt_describe_new()'s, out of line: inline,
 * its record and its probe loop made the probes keep more on the stack:
 * each cache event cost about 15 instructions more
 * (Documentation/architecture.md, "What an event costs").
 */
static __always_inline bool kmt_describe(struct kmt_cpu *c,
					 struct rchan_buf *buf,
					 const struct kmem_cache *s,
					 bool room, u64 now)
{
	if (likely(kmt_desc_near_home(c, s)))
		return room;
	return kmt_describe_new(c, buf, s, room, now);
}

static __always_inline bool kmt_wants_stack(u8 type)
{
	if (!static_branch_unlikely(&kmt_stacks_on))
		return false;
	return type == KMT_REC_KMALLOC || type == KMT_REC_CACHE_ALLOC ||
	       type == KMT_REC_PAGE_ALLOC || kmt_stack_frees;
}

/*
 * in_hardirq() and in_serving_softirq(), from one read of the preempt
 * count: each macro reads it again, and on arm64 (where it is a
 * READ_ONCE() of the task's) that is one load more per event. On
 * PREEMPT_RT the softirq count is the task's own, not the preempt
 * count's, as in_serving_softirq() knows.
 */
static inline u8 kmt_context_flags(void)
{
	unsigned int pc = preempt_count();
	u8 flags = 0;

	if (pc & HARDIRQ_MASK)
		flags |= KMT_F_HARDIRQ;
	if (IS_ENABLED(CONFIG_PREEMPT_RT) ? in_serving_softirq() :
	    pc & SOFTIRQ_OFFSET)
		flags |= KMT_F_SOFTIRQ;
	return flags;
}

/*
 * Every field of the event's record but its timestamp, which the two
 * writers take at different points (__kmt_record() first of all,
 * kmt_record_fast() last). The record has no padding: every byte is
 * written.
 */
static __always_inline void kmt_fill_event(struct kmt_event *rec,
					   const struct kmt_ev *ev,
					   const struct kmt_cpu *c, u32 seq,
					   u8 flags, u16 stack_id)
{
	rec->type = ev->type;
	rec->cpu = c->cpu;
	rec->seq = seq;
	rec->call_site = ev->call_site;
	rec->ptr = ev->ptr;
	rec->cache_id = ev->cache ? (unsigned long)ev->cache : ev->page_mt;
	rec->bytes_req = kmt_u32(ev->bytes_req, &flags);
	rec->bytes_alloc = kmt_u32(ev->bytes_alloc, &flags);
	rec->gfp_flags = (__force u32)ev->gfp;
	rec->node = ev->node;
	rec->pid = current->pid;
	rec->cpu_node = numa_node_id();
	rec->stack_id = stack_id;
	rec->flags = flags;
}

/*
 * Writes one event, preceded by whatever must come before it. The
 * sequence number, the timestamp and the position in the buffer are all
 * taken with interrupts off on this CPU, so within a CPU's stream seq
 * order, timestamp order and file order are the same.
 *
 * @taken, where the stack goes when one is asked for, is NULL or not
 * at each of the two call sites: the path without a stack (the default)
 * then carries nothing of the stack's, neither its struct kmt_taken
 * (which the kernel's CONFIG_INIT_STACK_ALL_ZERO zeroes, used or not)
 * nor the branches and loads that consult it.
 */
static __always_inline void __kmt_record(const struct kmt_ev *ev,
					 struct kmt_taken *taken)
{
	u64 *stack_outcome = NULL;
	struct rchan_buf *buf;
	struct kmt_event *rec;
	unsigned long irqflags;
	struct kmt_cpu *c;
	bool room = true;
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
	/*
	 * The clock once busy: an NMI that came between the two would
	 * write its event, stamped later, before this one.
	 */
	now = ktime_get_mono_fast_ns();
	/*
	 * relay made this CPU's buffer before the CPU came up (or, for a
	 * CPU that came up while relay_open() ran, never) and it stays
	 * until relay_close(): the copy in struct kmt_cpu, once taken, is
	 * the channel's.
	 */
	buf = c->buf;
	if (unlikely(!buf)) {
		buf = *this_cpu_ptr(kmt_chan->buf);
		c->buf = buf;
		if (!buf) {
			/* As at a full buffer: its seq taken, dropped. */
			kmt_data_slot(c, buf, false, now, &seq);
			goto done;
		}
	}
	flags = kmt_context_flags() | ev->flags;
	if (taken)
		kmt_take_stack(c, ev, taken);

	kmt_fold_nested(c, now);
	if (c->pending_lost)
		room = kmt_write_lost(c, buf, now);
	if (ev->cache)
		room = kmt_describe(c, buf, ev->cache, room, now);
	if (taken)
		stack_id = kmt_stack(c, buf, taken, &room, now, &flags,
				     &stack_outcome);
	rec = kmt_data_slot(c, buf, room, now, &seq);
	if (rec) {
		kmt_fill_event(rec, ev, c, seq, flags, stack_id);
		rec->timestamp = now;
		kmt_commit(buf);
		if (stack_outcome)
			(*stack_outcome)++;
	}
done:
	c->busy = false;
out:
	local_irq_restore(irqflags);
}

/*
 * The event alone, when nothing else must be written or counted before
 * it: this CPU is not already writing (an NMI), has its buffer, has no
 * nested events to fold and no LOST record waiting, has described the
 * event's cache, and has room in the current sub-buffer. Then the
 * record is what __kmt_record() writes, but for the moment of its
 * timestamp. Returns false, having written nothing, for everything
 * else: __kmt_record() then does it all.
 *
 * The record is filled before the clock is read, so that the clock's
 * call, the one call of this path, has only the CPU's state, the
 * record's place and the interrupt flags to keep across it, not the
 * event: the probe then saves and restores fewer registers and moves
 * none of its arguments (Documentation/architecture.md, "What an event
 * costs"). Seq, timestamp and position are still all taken with
 * interrupts off, so they keep one order in the CPU's stream.
 */
static __always_inline bool kmt_record_fast(const struct kmt_ev *ev)
{
	struct rchan_buf *buf;
	struct kmt_event *rec;
	unsigned long irqflags;
	struct kmt_cpu *c;
	u64 emitted;
	size_t off;

	local_irq_save(irqflags);
	c = this_cpu_ptr(kmt_cpus);
	if (unlikely(c->busy))
		goto out;
	/*
	 * Busy before anything of the CPU's is read: an NMI from here on
	 * drops its event, rather than write where this one will.
	 */
	c->busy = true;
	buf = c->buf;
	if (unlikely(!buf))
		goto full;
	/* One test of two words, both nearly always 0. */
	if (unlikely(c->pending_lost | local_read(&c->nested)))
		goto full;
	if (ev->cache && unlikely(!kmt_desc_near_home(c, ev->cache)))
		goto full;
	off = buf->offset;
	if (unlikely(!kmt_fits(buf, off)))
		goto full;
	/* Read once: the record's stores might otherwise alias it. */
	emitted = c->emitted;
	c->emitted = emitted + 1;
	rec = buf->data + off;
	kmt_fill_event(rec, ev, c, (u32)emitted,
		       kmt_context_flags() | ev->flags, 0);
	rec->timestamp = ktime_get_mono_fast_ns();
	kmt_commit_at(buf, off);
	c->busy = false;
	local_irq_restore(irqflags);
	return true;
full:
	c->busy = false;
out:
	local_irq_restore(irqflags);
	return false;
}

/* kmt_record.c: __kmt_record() for what kmt_record_fast() leaves. */
void kmt_record_full(struct kmt_ev ev);

/*
 * kmt_record(), inlined and after the filter: for the tracepoint
 * probes. The event goes to kmt_record_stack() or kmt_record_full() by
 * value, so that its address never escapes: the probe's struct kmt_ev
 * then lives in registers, as the fields it was filled from, and the
 * probe needs no stack protector canary.
 */
static __always_inline void kmt_record_inline(const struct kmt_ev *ev)
{
	if (unlikely(kmt_wants_stack(ev->type)))
		kmt_record_stack(*ev, 0);
	else if (unlikely(!kmt_record_fast(ev)))
		kmt_record_full(*ev);
}

#endif /* KMT_WRITE_H */
