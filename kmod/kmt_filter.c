// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_filter.c - filters at the source: which allocations are recorded
 * (process, cgroup, requested size, call site, cache), and the table of
 * the objects recorded, through which a free is recorded exactly when
 * its object's allocation was.
 *
 * The filter in force is an immutable struct kmt_filter published
 * through an RCU pointer: a slab probe jumps to kmt_filtered_*(), a
 * kprobed path or a page probe to kmt_filtered_event(); each decision
 * is made with preemption off (an RCU read side) and sees the old
 * filter or the new one, never half of one. A new filter is set by the
 * module parameter filter at load and by writes to
 * <debugfs>/kmemtrace/filter at any time, tracing or not; the static
 * key kmt_filter_on is on while there is one, so with none the probes
 * pay a no-op.
 *
 * With a filter, an allocation that matches it is recorded and its
 * address put into the tracking table; a free is recorded only when its
 * address is taken out of the table. The table is an array of
 * track_slots addresses (a module parameter), allocated at load, in
 * buckets of KMT_TRACK_WAYS slots (a cache line of 64-bit addresses),
 * each with a word of 4-bit tags; an address may sit in either of two
 * buckets, both chosen by one hash. Inserting claims an empty slot with
 * cmpxchg(), removing frees it with cmpxchg(), and the tags follow with
 * cmpxchg() too: no lock, no allocation, safe in any context, NMI
 * included.
 * An allocation that matches but finds both buckets full is recorded
 * and counted as untracked (its free will not be recorded); the counts
 * are per CPU in the filter file, which kmemtraced copies into
 * kmemtrace.meta, so a report can say how many allocations have no
 * free to pair with. Page events are keyed by (pfn << 1) | 1, never a
 * slab object's address (those are word-aligned).
 *
 * The table is emptied when tracing is enabled and when a filter is set
 * where there was none (no probe uses it then): frees the table did not
 * see (tracing off, no filter) must not leave entries behind. Going
 * from one filter to another keeps it, so the frees of objects
 * allocated under the old filter are still recorded.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/kernel.h>
#include <linux/kstrtox.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "kmt_compat.h"
#include "kmt_internal.h"

#define KMT_TRACK_WAYS		8U
#define KMT_TRACK_SLOTS_MIN	(2 * KMT_TRACK_WAYS)
#define KMT_TRACK_SLOTS_MAX	((unsigned int)BIT(24))
/* Longest filter text a write may hold, and a cache name in it. */
#define KMT_FILTER_TEXT_MAX	512
#define KMT_FILTER_CACHE_MAX	64

/* What a filter asks for; all of them must match. */
#define KMT_FILTER_TGID		BIT(0)
#define KMT_FILTER_PID		BIT(1)
#define KMT_FILTER_CGROUP	BIT(2)
#define KMT_FILTER_SIZE		BIT(3)
#define KMT_FILTER_SITE		BIT(4)
#define KMT_FILTER_CACHE	BIT(5)
#define KMT_FILTER_TASK		(KMT_FILTER_TGID | KMT_FILTER_PID | \
				 KMT_FILTER_CGROUP)

struct kmt_filter {
	u32 has;			/* KMT_FILTER_* */
	pid_t tgid, pid;		/* as the initial pid namespace numbers them */
	u64 cgroup_id;			/* of the v2 hierarchy */
	struct cgroup *cgrp;		/* referenced while the filter lives */
	u64 size_min, size_max;		/* bytes requested, both included */
	unsigned int nsites;
	unsigned long site_start[KMT_FILTER_SITES];	/* call site ranges, */
	unsigned long site_end[KMT_FILTER_SITES];	/* end excluded */
	/*
	 * cache=NAME: a kmem_cache allocation from a cache of that name; for
	 * kmalloc-N (N bytes, or N KiB with a k), also a kmalloc() whose
	 * slot is N bytes (the kmalloc tracepoint names no cache).
	 */
	char cache_name[KMT_FILTER_CACHE_MAX];
	size_t kmalloc_class;		/* N, or 0 */
};

static char *kmt_filter_param = "";
module_param_named(filter, kmt_filter_param, charp, 0444);
MODULE_PARM_DESC(filter,
		 "Record only what matches, from load: words tgid=N pid=N cgroup=ID size=MIN-MAX site=START-END (hexadecimal, end excluded, up to 4) cache=NAME, separated by blanks or commas; all must match (default: everything). Changed at run time through <debugfs>/kmemtrace/filter. Kernel command line: kmemtrace.filter=tgid=1,size=64-128.");

unsigned int kmt_track_slots = 65536;
module_param_named(track_slots, kmt_track_slots, uint, 0444);
MODULE_PARM_DESC(track_slots,
		 "With a filter, objects whose allocation was recorded that the table can hold, so that their frees are recorded, 16..16777216, rounded up to a power of two (default 65536; a slot takes 8 bytes on 64-bit kernels, and every 8 slots a 4-byte tag word); allocated at load. Kernel command line: kmemtrace.track_slots=N.");

DEFINE_STATIC_KEY_FALSE(kmt_filter_on);
static struct kmt_filter __rcu *kmt_filter;
static unsigned long *kmt_track;
static u32 *kmt_track_tags;		/* a word of tags a bucket */
static u32 kmt_track_bits;		/* log2 of the buckets */
static u32 kmt_track_mask;		/* the buckets - 1 */

static void kmt_filter_put(struct kmt_filter *f)
{
	if (f && f->cgrp)
		kmt_cgroup_put(f->cgrp);
	kfree(f);
}

/* --- The tracking table ----------------------------------------------- */

/*
 * Each bucket has a word of eight 4-bit tags, one per slot (0: empty),
 * from the address's hash: a free whose address was never tracked, the
 * common case, is told from the two tag words alone (a nibble equal to
 * its tag in neither), without reading the slots. A slot's tag is set
 * after the slot is claimed and cleared before it is emptied, so a
 * tracked address's tag is always there, and a slot being emptied is
 * never claimed with its old tag still set.
 */
#define KMT_TAG_ONES	0x11111111U
#define KMT_TAG_HIGHS	0x88888888U

struct kmt_track_ref {
	unsigned long *slots;
	u32 *tags;
};

/*
 * One multiplication hashes a key for both of its buckets and its tag,
 * from disjoint bits of the product: the first bucket from bits 43 up,
 * the second from bits 20 up (at most 21 bits of bucket each), the tag
 * from bits 16..19 (never 0: that is an empty slot's). Shifts by
 * constants: a shift by a variable is checked by UBSAN on kernels that
 * have it (Debian's do), whose out-of-line report gives the probe a
 * frame.
 */
static __always_inline u64 kmt_track_hash(unsigned long key, u32 *tag)
{
	u64 m = (u64)key * GOLDEN_RATIO_64;

	*tag = (m >> 16) & 0xf;
	*tag += !*tag;
	return m;
}

static __always_inline struct kmt_track_ref
kmt_track_bucket(u64 m, unsigned int which)
{
	u32 b = (u32)(m >> (which ? 20 : 43)) & kmt_track_mask;

	return (struct kmt_track_ref) {
		.slots = &kmt_track[(size_t)b * KMT_TRACK_WAYS],
		.tags = &kmt_track_tags[b],
	};
}

/* Whether a nibble of @tags is @tag: the zero-nibble test on their xor. */
static __always_inline bool kmt_tag_maybe(u32 tags, u32 tag)
{
	u32 x = tags ^ (tag * KMT_TAG_ONES);

	return (x - KMT_TAG_ONES) & ~x & KMT_TAG_HIGHS;
}

static __always_inline void kmt_tag_set(u32 *tags, unsigned int i, u32 tag)
{
	u32 old = READ_ONCE(*tags), cur;

	for (;;) {
		cur = cmpxchg(tags, old, (old & ~(0xfU << (4 * i))) |
			      (tag << (4 * i)));
		if (cur == old)
			return;
		old = cur;
	}
}

static __always_inline bool kmt_track_insert(unsigned long key)
{
	unsigned int w, i;
	u32 tag;
	u64 m = kmt_track_hash(key, &tag);

	for (w = 0; w < 2; w++) {
		struct kmt_track_ref b = kmt_track_bucket(m, w);

		for (i = 0; i < KMT_TRACK_WAYS; i++) {
			unsigned long v = READ_ONCE(b.slots[i]);

			/* A free the table missed: the address is still tracked. */
			if (v == key)
				return true;
			if (!v && !cmpxchg(&b.slots[i], 0UL, key)) {
				kmt_tag_set(b.tags, i, tag);
				return true;
			}
		}
	}
	return false;
}

/* Takes @key out of the bucket of @which whose tags may hold it. */
static bool kmt_track_take(unsigned long key, unsigned int which)
{
	u32 tag;
	struct kmt_track_ref b = kmt_track_bucket(kmt_track_hash(key, &tag),
						  which);
	unsigned int i;

	if (!kmt_tag_maybe(READ_ONCE(*b.tags), tag))
		return false;
	for (i = 0; i < KMT_TRACK_WAYS; i++) {
		if (READ_ONCE(b.slots[i]) != key)
			continue;
		kmt_tag_set(b.tags, i, 0);
		if (cmpxchg(&b.slots[i], key, 0UL) == key)
			return true;
	}
	return false;
}

/* Out of the table, if there. */
static __always_inline bool kmt_track_remove(unsigned long key)
{
	return kmt_track_take(key, 0) || kmt_track_take(key, 1);
}

/*
 * Whether @key may be in the table. Most frees are of objects never
 * tracked: for them the tags of the two buckets say no, two loads, and
 * the slots are not read.
 */
static __always_inline bool kmt_track_maybe(unsigned long key)
{
	u32 tag;
	u64 m = kmt_track_hash(key, &tag);

	return kmt_tag_maybe(READ_ONCE(*kmt_track_bucket(m, 0).tags), tag) ||
	       kmt_tag_maybe(READ_ONCE(*kmt_track_bucket(m, 1).tags), tag);
}

/* With no probe using it: no filter, or no probe attached. */
void kmt_track_clear(void)
{
	memset(kmt_track, 0, ((size_t)KMT_TRACK_WAYS << kmt_track_bits) *
	       sizeof(*kmt_track));
	memset(kmt_track_tags, 0, ((size_t)1 << kmt_track_bits) *
	       sizeof(*kmt_track_tags));
}

static u64 kmt_track_used(void)
{
	size_t i, n = (size_t)KMT_TRACK_WAYS << kmt_track_bits;
	u64 used = 0;

	for (i = 0; i < n; i++)
		used += READ_ONCE(kmt_track[i]) != 0;
	return used;
}

/* --- Per event ----------------------------------------------------------- */

/* Whether a kmem_cache allocation's cache is the one cache=NAME names. */
static bool kmt_filter_cache(const struct kmt_filter *f,
			     const struct kmem_cache *s)
{
	size_t object_size, size;
	const char *name;

	if (!s)
		return false;
	kmt_cache_info(s, &name, &object_size, &size);
	return name && !strcmp(name, f->cache_name);
}

/*
 * The checks made inline, which need no call: the size, and the task
 * (an interrupt's allocations are no task's). KMT_FILTER_SLOW: those
 * made out of line, with loops and calls.
 */
#define KMT_FILTER_SLOW		(KMT_FILTER_SITE | KMT_FILTER_CACHE | \
				 KMT_FILTER_CGROUP)

static __always_inline bool kmt_filter_quick(const struct kmt_filter *f,
					     size_t bytes_req)
{
	if ((f->has & KMT_FILTER_SIZE) &&
	    (bytes_req < f->size_min || bytes_req > f->size_max))
		return false;
	if (f->has & KMT_FILTER_TASK) {
		if (!in_task())
			return false;
		if ((f->has & KMT_FILTER_TGID) && current->tgid != f->tgid)
			return false;
		if ((f->has & KMT_FILTER_PID) && current->pid != f->pid)
			return false;
	}
	return true;
}

static bool kmt_filter_slow(const struct kmt_filter *f,
			    unsigned long call_site, size_t bytes_alloc,
			    const struct kmem_cache *s, bool kmalloc)
{
	unsigned int i;

	if ((f->has & KMT_FILTER_CACHE) &&
	    !(kmalloc ? f->kmalloc_class && bytes_alloc == f->kmalloc_class :
	      kmt_filter_cache(f, s)))
		return false;
	if (f->has & KMT_FILTER_SITE) {
		for (i = 0; i < f->nsites; i++)
			if (call_site >= f->site_start[i] &&
			    call_site < f->site_end[i])
				break;
		if (i == f->nsites)
			return false;
	}
	/* In task context: kmt_filter_quick() checked. */
	if ((f->has & KMT_FILTER_CGROUP) &&
	    !kmt_task_in_cgroup(current, f->cgrp))
		return false;
	return true;
}

/* An allocation that passed the inline checks: the others, then the table. */
static __always_inline bool kmt_filter_rest(const struct kmt_filter *f,
					    unsigned long call_site,
					    unsigned long key,
					    size_t bytes_alloc,
					    const struct kmem_cache *s,
					    bool kmalloc)
{
	if ((f->has & KMT_FILTER_SLOW) &&
	    !kmt_filter_slow(f, call_site, bytes_alloc, s, kmalloc)) {
		local64_inc(&this_cpu_ptr(kmt_cpus)->filtered_allocs);
		return false;
	}
	/* A failed allocation has nothing to track. */
	if (key && !kmt_track_insert(key))
		local64_inc(&this_cpu_ptr(kmt_cpus)->untracked);
	return true;
}

/*
 * Whether an allocation is recorded: if it matches, and its object
 * (@key, 0 for a failed allocation) is then tracked. A free is recorded
 * if its object was tracked. What is not recorded, and allocations
 * recorded whose object the table could not take, are counted on this
 * CPU. Preemption is turned off here: probes run with it off up to
 * 6.12, but from 7.3 a tracepoint's probes run under SRCU only and may
 * be preempted; with it off, RCU protects the filter and the counters
 * are this CPU's. Inlined into the *_rest() functions below, which
 * kmt_alloc_left_out() and kmt_free_left_out() leave the events they
 * do not decide to: a free's object is then looked for in its two
 * buckets straight away (its tags said it may be there).
 */
static __always_inline bool kmt_filter_alloc_passes(unsigned long call_site,
						    unsigned long key,
						    size_t bytes_req,
						    size_t bytes_alloc,
						    const struct kmem_cache *s,
						    bool kmalloc)
{
	const struct kmt_filter *f;
	bool pass = true;

	preempt_disable_notrace();
	f = rcu_dereference_sched(kmt_filter);
	/* No filter: only while one is being removed. */
	if (likely(f)) {
		if (kmt_filter_quick(f, bytes_req)) {
			pass = kmt_filter_rest(f, call_site, key, bytes_alloc,
					       s, kmalloc);
		} else {
			local64_inc(&this_cpu_ptr(kmt_cpus)->filtered_allocs);
			pass = false;
		}
	}
	preempt_enable_notrace();
	return pass;
}

/* Whether a free is recorded: if its object is taken out of the table. */
static __always_inline bool kmt_filter_free_passes(unsigned long key)
{
	bool pass = true;

	preempt_disable_notrace();
	if (likely(rcu_dereference_sched(kmt_filter))) {
		pass = kmt_track_remove(key);
		if (!pass)
			local64_inc(&this_cpu_ptr(kmt_cpus)->filtered_frees);
	}
	preempt_enable_notrace();
	return pass;
}

/*
 * The common cases of a filter, told with no call (the functions below
 * keep no frame for them): true when @bytes_req, or the task, is left
 * out by the filter's inline checks, or @key's tags say it was never
 * tracked; then counted. False leaves the decision whole, under the
 * filter then in force, to kmt_filter_alloc_passes() or
 * kmt_filter_free_passes().
 */
static __always_inline bool kmt_alloc_left_out(size_t bytes_req)
{
	const struct kmt_filter *f;

	preempt_disable_notrace();
	f = rcu_dereference_sched(kmt_filter);
	if (likely(f) && !kmt_filter_quick(f, bytes_req)) {
		local64_inc(&this_cpu_ptr(kmt_cpus)->filtered_allocs);
		preempt_enable_notrace();
		return true;
	}
	preempt_enable_notrace();
	return false;
}

static __always_inline bool kmt_free_left_out(unsigned long key)
{
	preempt_disable_notrace();
	if (likely(rcu_dereference_sched(kmt_filter)) &&
	    !kmt_track_maybe(key)) {
		local64_inc(&this_cpu_ptr(kmt_cpus)->filtered_frees);
		preempt_enable_notrace();
		return true;
	}
	preempt_enable_notrace();
	return false;
}

/*
 * The slab tracepoints' probes (kmt_compat.h) jump to these instead of
 * kmt_probes.c's handlers while a filter is in force, with their own
 * arguments (@data unused), and an event the filter does not leave out
 * at once goes on by another jump to a *_rest() function, which decides
 * the rest and jumps to the handler. So an event left out costs the
 * probe no frame (its saved registers and their restore, which every
 * event paid when the probe asked the filter itself), and these keep
 * none either. Not traced, as the handlers are not.
 */
static noinline notrace void kmt_filtered_kmalloc_rest(void *data,
						       unsigned long call_site,
						       const void *ptr,
						       size_t bytes_req,
						       size_t bytes_alloc,
						       gfp_t gfp, int node)
{
	if (kmt_filter_alloc_passes(call_site, (unsigned long)ptr, bytes_req,
				    bytes_alloc, NULL, true))
		kmt_on_kmalloc(data, call_site, ptr, bytes_req, bytes_alloc,
			       gfp, node);
}

notrace void kmt_filtered_kmalloc(void *data, unsigned long call_site,
				  const void *ptr, size_t bytes_req,
				  size_t bytes_alloc, gfp_t gfp, int node)
{
	if (!kmt_alloc_left_out(bytes_req))
		kmt_filtered_kmalloc_rest(data, call_site, ptr, bytes_req,
					  bytes_alloc, gfp, node);
}

#if KMT_KERNEL_AT_LEAST(6, 1)
static noinline notrace void
kmt_filtered_cache_alloc_rest(void *data, unsigned long call_site,
			      const void *ptr, struct kmem_cache *s, gfp_t gfp,
			      int node)
{
	size_t object_size, size;
	const char *name;

	kmt_cache_info(s, &name, &object_size, &size);
	if (kmt_filter_alloc_passes(call_site, (unsigned long)ptr, object_size,
				    size, s, false))
		kmt_on_cache_alloc(data, call_site, ptr, s, gfp, node);
}

notrace void kmt_filtered_cache_alloc(void *data, unsigned long call_site,
				      const void *ptr, struct kmem_cache *s,
				      gfp_t gfp, int node)
{
	size_t object_size, size;
	const char *name;

	kmt_cache_info(s, &name, &object_size, &size);
	if (!kmt_alloc_left_out(object_size))
		kmt_filtered_cache_alloc_rest(data, call_site, ptr, s, gfp,
					      node);
}
#endif

static noinline notrace void kmt_filtered_free_rest(void *data,
						    unsigned long call_site,
						    const void *ptr,
						    const struct kmem_cache *s,
						    u8 type)
{
	if (!kmt_filter_free_passes((unsigned long)ptr))
		return;
	if (type == KMT_REC_CACHE_FREE)
		kmt_on_cache_free(data, call_site, ptr, s);
	else
		kmt_on_kfree(data, call_site, ptr);
}

notrace void kmt_filtered_kfree(void *data, unsigned long call_site,
				const void *ptr)
{
	/* The tracepoint fires before kfree()'s own NULL check. */
	if (!ZERO_OR_NULL_PTR(ptr) && !kmt_free_left_out((unsigned long)ptr))
		kmt_filtered_free_rest(data, call_site, ptr, NULL,
				       KMT_REC_KFREE);
}

/* Before 6.1 the tracepoint names no cache (@s NULL): still a cache free. */
notrace void kmt_filtered_cache_free(void *data, unsigned long call_site,
				     const void *ptr,
				     const struct kmem_cache *s)
{
	if (!kmt_free_left_out((unsigned long)ptr))
		kmt_filtered_free_rest(data, call_site, ptr, s,
				       KMT_REC_CACHE_FREE);
}

/* An event's key in the table: a page's is (pfn << 1) | 1. */
static __always_inline unsigned long kmt_ev_key(const struct kmt_ev *ev)
{
	unsigned long key = (unsigned long)ev->ptr;

	if (ev->type == KMT_REC_PAGE_ALLOC || ev->type == KMT_REC_PAGE_FREE)
		key = key ? (key << 1) | 1 : 0;
	return key;
}

static __always_inline bool kmt_ev_is_alloc(const struct kmt_ev *ev)
{
	return ev->type == KMT_REC_KMALLOC || ev->type == KMT_REC_CACHE_ALLOC ||
	       ev->type == KMT_REC_PAGE_ALLOC;
}

static noinline notrace void kmt_filtered_event_rest(const struct kmt_ev *ev,
						     unsigned long entry_pc)
{
	unsigned long key = kmt_ev_key(ev);
	bool pass;

	if (kmt_ev_is_alloc(ev))
		pass = kmt_filter_alloc_passes(ev->call_site, key,
					       ev->bytes_req, ev->bytes_alloc,
					       ev->cache,
					       ev->type == KMT_REC_KMALLOC);
	else
		pass = kmt_filter_free_passes(key);
	if (pass)
		kmt_record_unfiltered(ev, entry_pc);
}

/*
 * The same for the kprobed paths (through kmt_record() and
 * kmt_record_entry()) and the page probes: the decision for @ev, then
 * the write path, each reached by a jump.
 */
notrace void kmt_filtered_event(const struct kmt_ev *ev,
				unsigned long entry_pc)
{
	if (kmt_ev_is_alloc(ev) ? kmt_alloc_left_out(ev->bytes_req) :
	    kmt_free_left_out(kmt_ev_key(ev)))
		return;
	kmt_filtered_event_rest(ev, entry_pc);
}

/* --- Setting a filter --------------------------------------------------- */

/* "A-B" or "A-" (no upper bound) into *lo and *hi, each in @base. */
static int kmt_parse_range(const char *v, unsigned int base, u64 *lo, u64 *hi)
{
	char buf[48];
	char *dash;
	int ret;

	if (strscpy(buf, v, sizeof(buf)) < 0)
		return -EINVAL;
	dash = strchr(buf, '-');
	if (!dash)
		return -EINVAL;
	*dash = '\0';
	ret = kstrtou64(buf, base, lo);
	if (ret)
		return ret;
	if (!dash[1]) {
		*hi = U64_MAX;
		return 0;
	}
	ret = kstrtou64(dash + 1, base, hi);
	if (ret)
		return ret;
	return *hi < *lo ? -EINVAL : 0;
}

static int kmt_parse_pid(const char *v, pid_t *pid)
{
	int ret, n;

	ret = kstrtoint(v, 10, &n);
	if (ret)
		return ret;
	if (n <= 0)
		return -EINVAL;
	*pid = n;
	return 0;
}

/* N of a kmalloc size class's name, kmalloc-N or kmalloc-Nk; else 0. */
static size_t kmt_kmalloc_class(const char *name)
{
	char num[24];
	size_t len;
	u32 n;

	if (strncmp(name, "kmalloc-", 8))
		return 0;
	name += 8;
	len = strlen(name);
	if (!len || len >= sizeof(num))
		return 0;
	memcpy(num, name, len + 1);
	if (num[len - 1] == 'k')
		num[len - 1] = '\0';
	if (kstrtou32(num, 10, &n) || !n || n > SZ_1G / SZ_1K)
		return 0;
	return num[len - 1] ? (size_t)n : (size_t)n * SZ_1K;
}

/* One word "KEY=VALUE" of a filter into @f. */
static int kmt_parse_word(struct kmt_filter *f, char *word)
{
	char *v = strchr(word, '=');
	u64 lo, hi;
	int ret;

	if (!v)
		return -EINVAL;
	*v++ = '\0';
	if (!strcmp(word, "tgid")) {
		f->has |= KMT_FILTER_TGID;
		return kmt_parse_pid(v, &f->tgid);
	}
	if (!strcmp(word, "pid")) {
		f->has |= KMT_FILTER_PID;
		return kmt_parse_pid(v, &f->pid);
	}
	if (!strcmp(word, "cgroup")) {
		if (f->cgrp)
			return -EINVAL;
		ret = kstrtou64(v, 10, &f->cgroup_id);
		if (ret)
			return ret;
		f->cgrp = kmt_cgroup_get(f->cgroup_id);
		if (IS_ERR(f->cgrp)) {
			ret = PTR_ERR(f->cgrp);
			f->cgrp = NULL;
			return ret;
		}
		f->has |= KMT_FILTER_CGROUP;
		return 0;
	}
	if (!strcmp(word, "size")) {
		ret = kmt_parse_range(v, 10, &f->size_min, &f->size_max);
		if (ret)
			return ret;
		f->has |= KMT_FILTER_SIZE;
		return 0;
	}
	if (!strcmp(word, "cache")) {
		if ((f->has & KMT_FILTER_CACHE) || !*v ||
		    strscpy(f->cache_name, v, sizeof(f->cache_name)) < 0)
			return -EINVAL;
		f->kmalloc_class = kmt_kmalloc_class(v);
		f->has |= KMT_FILTER_CACHE;
		return 0;
	}
	if (!strcmp(word, "site")) {
		if (f->nsites == KMT_FILTER_SITES)
			return -E2BIG;
		ret = kmt_parse_range(v, 16, &lo, &hi);
		if (ret)
			return ret;
		if (lo >= hi || hi > ULONG_MAX)
			return -EINVAL;
		f->site_start[f->nsites] = lo;
		f->site_end[f->nsites++] = hi;
		f->has |= KMT_FILTER_SITE;
		return 0;
	}
	return -EINVAL;
}

/*
 * The filter @text describes: *out NULL for "none" (or nothing), else a
 * new filter holding a reference to its cgroup. Modifies @text.
 */
static int kmt_parse_filter(char *text, struct kmt_filter **out)
{
	struct kmt_filter *f;
	char *word;
	int ret = 0;

	*out = NULL;
	text = strim(text);
	if (!*text || !strcmp(text, "none"))
		return 0;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	while ((word = strsep(&text, " \t\n,")) != NULL) {
		if (!*word)
			continue;
		ret = kmt_parse_word(f, word);
		if (ret)
			break;
	}
	if (!ret && !f->has)
		ret = -EINVAL;
	if (ret) {
		kmt_filter_put(f);
		return ret;
	}
	*out = f;
	return 0;
}

/*
 * Puts @nf (NULL: none) in force and frees the old one once no probe can
 * be using it. The table is emptied before a filter follows none: no
 * probe uses the table then, and entries left from before (frees it did
 * not see) must not pair with new allocations.
 */
static void kmt_filter_install(struct kmt_filter *nf)
{
	struct kmt_filter *old;

	mutex_lock(&kmt_enable_lock);
	old = rcu_dereference_protected(kmt_filter,
					lockdep_is_held(&kmt_enable_lock));
	if (nf && !old)
		kmt_track_clear();
	rcu_assign_pointer(kmt_filter, nf);
	if (nf && !old)
		static_branch_enable(&kmt_filter_on);
	else if (!nf && old)
		static_branch_disable(&kmt_filter_on);
	/* Inside the lock: a next filter may clear the table only after. */
	synchronize_rcu();
	mutex_unlock(&kmt_enable_lock);
	kmt_filter_put(old);
}

/* The filter as a write would set it, "none" when there is none. */
static void kmt_filter_print(struct seq_file *m, const struct kmt_filter *f)
{
	const char *sep = "";
	unsigned int i;

	if (!f) {
		seq_puts(m, "none");
		return;
	}
	if (f->has & KMT_FILTER_TGID) {
		seq_printf(m, "%stgid=%d", sep, f->tgid);
		sep = " ";
	}
	if (f->has & KMT_FILTER_PID) {
		seq_printf(m, "%spid=%d", sep, f->pid);
		sep = " ";
	}
	if (f->has & KMT_FILTER_CGROUP) {
		seq_printf(m, "%scgroup=%llu", sep, f->cgroup_id);
		sep = " ";
	}
	if (f->has & KMT_FILTER_SIZE) {
		seq_printf(m, "%ssize=%llu-", sep, f->size_min);
		if (f->size_max != U64_MAX)
			seq_printf(m, "%llu", f->size_max);
		sep = " ";
	}
	for (i = 0; i < f->nsites; i++) {
		seq_printf(m, "%ssite=0x%lx-0x%lx", sep, f->site_start[i],
			   f->site_end[i]);
		sep = " ";
	}
	if (f->has & KMT_FILTER_CACHE)
		seq_printf(m, "%scache=%s", sep, f->cache_name);
}

/*
 * filter: the filter in force on the first line, as written; then the
 * table's size and the slots in use now, and per possible CPU since
 * load: allocations and frees not recorded because of a filter, and
 * allocations recorded whose object the table could not take.
 */
static int kmt_filter_show(struct seq_file *m, void *v)
{
	const struct kmt_filter *f;
	unsigned int cpu;

	mutex_lock(&kmt_enable_lock);
	f = rcu_dereference_protected(kmt_filter,
				      lockdep_is_held(&kmt_enable_lock));
	kmt_filter_print(m, f);
	mutex_unlock(&kmt_enable_lock);
	seq_putc(m, '\n');
	seq_printf(m, "# track slots %zu used %llu\n",
		   (size_t)KMT_TRACK_WAYS << kmt_track_bits, kmt_track_used());
	seq_puts(m, "# cpu filtered_allocs filtered_frees untracked\n");
	for_each_possible_cpu(cpu) {
		struct kmt_cpu *c = per_cpu_ptr(kmt_cpus, cpu);

		seq_printf(m, "%u %llu %llu %llu\n", cpu,
			   (u64)local64_read(&c->filtered_allocs),
			   (u64)local64_read(&c->filtered_frees),
			   (u64)local64_read(&c->untracked));
	}
	return 0;
}

static int kmt_filter_open(struct inode *inode, struct file *file)
{
	return single_open(file, kmt_filter_show, NULL);
}

static ssize_t kmt_filter_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	struct kmt_filter *nf;
	char *text;
	int ret;

	if (count >= KMT_FILTER_TEXT_MAX)
		return -E2BIG;
	text = memdup_user_nul(ubuf, count);
	if (IS_ERR(text))
		return PTR_ERR(text);
	ret = kmt_parse_filter(text, &nf);
	kfree(text);
	if (ret)
		return ret;
	kmt_filter_install(nf);
	return count;
}

const struct file_operations kmt_filter_fops = {
	.owner = THIS_MODULE,
	.open = kmt_filter_open,
	.read = seq_read,
	.write = kmt_filter_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/* --- Load and unload ---------------------------------------------------- */

/* The table, and the filter parameter in force; before any probe. */
int kmt_filter_init(void)
{
	struct kmt_filter *f;
	char *text;
	int ret;

	if (kmt_track_slots < KMT_TRACK_SLOTS_MIN ||
	    kmt_track_slots > KMT_TRACK_SLOTS_MAX) {
		pr_err("track_slots=%u is outside %u..%u\n", kmt_track_slots,
		       KMT_TRACK_SLOTS_MIN, KMT_TRACK_SLOTS_MAX);
		return -EINVAL;
	}
	kmt_track_slots = roundup_pow_of_two(kmt_track_slots);
	kmt_track_bits = ilog2(kmt_track_slots / KMT_TRACK_WAYS);
	kmt_track_mask = BIT(kmt_track_bits) - 1;
	kmt_track = vzalloc(array_size(kmt_track_slots, sizeof(*kmt_track)));
	kmt_track_tags = vzalloc(array_size(kmt_track_slots / KMT_TRACK_WAYS,
					    sizeof(*kmt_track_tags)));
	if (!kmt_track || !kmt_track_tags) {
		ret = -ENOMEM;
		goto free_track;
	}
	if (!kmt_filter_param || !*kmt_filter_param)
		return 0;
	text = kstrdup(kmt_filter_param, GFP_KERNEL);
	if (!text) {
		ret = -ENOMEM;
		goto free_track;
	}
	ret = kmt_parse_filter(text, &f);
	kfree(text);
	if (ret) {
		pr_err("filter=%s: not a filter (%d): words tgid=N pid=N cgroup=ID size=MIN-MAX site=START-END cache=NAME\n",
		       kmt_filter_param, ret);
		goto free_track;
	}
	kmt_filter_install(f);
	return 0;

free_track:
	vfree(kmt_track_tags);
	vfree(kmt_track);
	kmt_track_tags = NULL;
	kmt_track = NULL;
	return ret;
}

/* After the last probe returned. */
void kmt_filter_exit(void)
{
	kmt_filter_install(NULL);
	vfree(kmt_track_tags);
	vfree(kmt_track);
	kmt_track_tags = NULL;
	kmt_track = NULL;
}
