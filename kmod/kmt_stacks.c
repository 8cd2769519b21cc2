// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_stacks.c - kernel stacks: taking an event's stack, by unwinding or
 * from the walk cache, and sizing, allocating and counting the per-CPU
 * stack tables (see "Kernel stacks" and "The walk cache" in
 * kmt_internal.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "kmt_compat.h"
#include "kmt_internal.h"

/* A kprobe's frame from its probe address: on ftrace, past the 5-byte call. */
#define KMT_ENTRY_SLOP	8

/* The most stack_entries may ask: an id, the entry's position + 1, is a u16. */
#define KMT_STACK_ENTRIES_MAX	65535U
#define KMT_WALK_CACHE_MAX	65536U

/* Set by kmt_check_stack_params() at load; see kmt_internal.h. */
u32 kmt_stack_mask;
unsigned int kmt_walk_bits;
size_t kmt_walk_stride;

static bool kmt_in_page_iter(unsigned long addr)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kmt_page_iter); i++) {
		if (addr >= kmt_page_iter[i][0] && addr < kmt_page_iter[i][1])
			return true;
	}
	return false;
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
 * out. An event of a kprobe at a function's entry finds no such frame
 * where the unwinder follows frame pointers and the function has not
 * stored its return address yet: arm64 and s390 leave it in a register,
 * and i386's kprobes on ftrace fire from the call to __fentry__ before
 * the function's prologue. The walk then goes from the function's entry
 * (the exception's frame, or the return address of that call: within
 * KMT_ENTRY_SLOP bytes of the probe) straight to its caller's caller,
 * and the call site takes the function's place. Anything else (an unwinder that
 * lost its way, or a call site further out than the frames taken) means
 * no stack, rather than one that might start inside the tracer. A page
 * event has no call site:
 * its stack starts after the frames of this module and of the page
 * tracepoint's iterator, in the page allocator.
 *
 * Never inlined: the walk cache measures from this function's frame,
 * which must be the same for every event through the same path.
 */
noinline void kmt_take_stack(struct kmt_cpu *c, const struct kmt_ev *ev,
			     struct kmt_taken *t)
{
	unsigned long base = (unsigned long)__builtin_frame_address(0);
	unsigned long call_site = ev->call_site;
	u8 type = ev->type;
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
		if (cached && !kmt_stack_check) {
			t->id = cached;
			t->frames = kmt_stack_frames(c, cached);
			t->depth = c->stack_ent[cached - 1].depth;
			return;
		}
	}
	n = kmt_walk(c, base, room, kmt_stack_depth + KMT_STACK_SLACK);
	c->stacks_walked++;
	if (call_site) {
		while (i < n && c->scratch[i] != call_site)
			i++;
		if (i == n && t->entry_pc) {
			i = 0;
			while (i < n &&
			       c->scratch[i] - t->entry_pc >= KMT_ENTRY_SLOP)
				i++;
			if (i < n)
				c->scratch[i] = call_site;
		}
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
	t->depth = min(n - i, kmt_stack_depth);
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

struct kmt_stack_read {
	unsigned int cpu;
	struct kmt_stack_stats *st;
};

static void kmt_read_stack_stats(void *arg)
{
	const struct kmt_stack_read *r = arg;
	const struct kmt_cpu *c = per_cpu_ptr(kmt_cpus, r->cpu);
	struct kmt_stack_stats *st = r->st;

	st->with_stack = c->with_stack;
	st->no_stack_full = c->no_stack_full;
	st->no_stack_unwind = c->no_stack_unwind;
	st->stacks_written = c->stacks_written;
	st->stacks_dropped = c->stacks_dropped;
	st->walked = c->stacks_walked;
	st->cached = c->stacks_cached;
	st->check_failed = c->stacks_check_failed;
	st->used = c->stack_used;
}

void kmt_stack_snapshot(unsigned int cpu, struct kmt_stack_stats *st)
{
	struct kmt_stack_read r = { .cpu = cpu, .st = st };

	kmt_read_on_cpu(cpu, kmt_read_stack_stats, &r);
}

/* Bytes of one CPU's stack table's parts: index, entries, frames. */
static size_t kmt_stack_index_size(void)
{
	return ALIGN((size_t)(kmt_stack_mask + 1) * sizeof(u16), 8);
}

static size_t kmt_stack_ent_size(void)
{
	return ALIGN((size_t)kmt_stack_entries * sizeof(struct kmt_stack_ent), 8);
}

static size_t kmt_stack_frames_size(void)
{
	return (size_t)kmt_stack_entries * kmt_stack_depth * sizeof(unsigned long);
}

/* Bytes of one CPU's stack table before vmalloc rounds it: walk cache last. */
static size_t kmt_stack_table_size(void)
{
	return kmt_stack_index_size() + kmt_stack_ent_size() +
	       kmt_stack_frames_size() + (size_t)kmt_stack_cache * kmt_walk_stride;
}

/* What one CPU's stack table costs: its pages and vmalloc's page array. */
u64 kmt_stack_cost(void)
{
	u64 npages;

	if (!kmt_stack_depth)
		return 0;
	npages = PAGE_ALIGN((u64)kmt_stack_table_size()) >> PAGE_SHIFT;
	return (npages << PAGE_SHIFT) + npages * sizeof(struct page *);
}

/* Checks the stack parameters; sizes the table's index. */
int kmt_check_stack_params(void)
{
	if (kmt_stack_depth > KMT_STACK_MAX_DEPTH) {
		pr_err("stack_depth=%u is outside 0..%u (frames)\n", kmt_stack_depth,
		       KMT_STACK_MAX_DEPTH);
		return -EINVAL;
	}
	if (!kmt_stack_depth)
		return 0;
	if (kmt_stack_entries < 1 || kmt_stack_entries > KMT_STACK_ENTRIES_MAX) {
		pr_err("stack_entries=%u is outside 1..%u (distinct stacks per CPU)\n",
		       kmt_stack_entries, KMT_STACK_ENTRIES_MAX);
		return -EINVAL;
	}
	/* At most half full: a lookup ends at a free slot soon. */
	kmt_stack_mask = roundup_pow_of_two(2 * kmt_stack_entries) - 1;
	if (kmt_stack_cache > KMT_WALK_CACHE_MAX) {
		pr_err("stack_cache=%u is outside 0..%u (walks per CPU)\n",
		       kmt_stack_cache, KMT_WALK_CACHE_MAX);
		return -EINVAL;
	}
	if (kmt_stack_cache && !KMT_HAVE_WALK_CACHE) {
		pr_info("stack_cache: needs the x86-64 ORC unwinder; every stack is unwound\n");
		kmt_stack_cache = 0;
	}
	if (!kmt_stack_cache)
		return 0;
	/* Two sets at least: hash_long() takes 1..63 bits. */
	kmt_stack_cache = roundup_pow_of_two(max(kmt_stack_cache, 2 * KMT_WALK_WAYS));
	kmt_walk_bits = ilog2(kmt_stack_cache / KMT_WALK_WAYS);
	kmt_walk_stride = ALIGN(struct_size_t(struct kmt_walk_ent, off,
					      KMT_WALK_BELOW + kmt_stack_depth),
				sizeof(long));
	return 0;
}

/* Rounds subbuf_size up to whole records and a ring of whole pages. */
/* Every possible CPU's stack table, at load: none is made in a probe. */
int kmt_alloc_stacks(void)
{
	unsigned int cpu;

	if (!kmt_stack_depth)
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
		c->walk = kmt_stack_cache ? mem : NULL;
	}
	/* No probe is attached yet: each finds its CPU's table. */
	static_branch_enable(&kmt_stacks_on);
	return 0;
}

void kmt_free_stacks(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		vfree(per_cpu_ptr(kmt_cpus, cpu)->stack_index);
}
