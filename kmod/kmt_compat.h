/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt_compat.h - every kernel-version difference kmemtrace.ko depends on:
 * the slab tracepoint signatures, the layout of struct kmem_cache and a
 * few helpers that were renamed.
 *
 * Included by each of the module's files. Two parts define what must
 * exist once, in the file that uses it, like CREATE_TRACE_POINTS does:
 * KMT_COMPAT_CACHE_LAYOUT_CHECK (kmt_main.c) the load-time check of the
 * cache layout, KMT_COMPAT_SLAB_PROBES (kmt_probes.c) the tracepoint
 * probes, which call that file's static handlers.
 *
 * Tested in the guest on Debian's 6.1, 6.12 and 7.3 kernels (generic and
 * PREEMPT_RT) on x86_64, and on Debian's 6.1 for arm64, s390x and i386
 * (686-pae); built W=1 for every amd64 6.1 point release in Debian's
 * archive too. The branches for 5.10..6.0 are written from those kernels'
 * headers and compile-tested on none of them: a starting point, not
 * support.
 *
 * What differs between the architectures, all of it here:
 *  - a kprobe's return address at a function's entry, kmt_entry_ret():
 *    the top of the stack on x86 (regs_get_kernel_stack_nth() is exported
 *    there only), the link register on arm64 and arm, r14 on s390; none
 *    elsewhere (KMT_HAVE_ENTRY_RET 0: the probed bulk paths' events then
 *    have no call site, and the module says so at load).
 *  - a kprobe's arguments, kmt_arg(): regs_get_kernel_argument(), except
 *    on s390, whose version calls the unexported regs_get_register(): r2
 *    to r6 directly.
 *  - the stack walk cache (KMT_HAVE_WALK_CACHE) needs x86-64's ORC
 *    unwinder; elsewhere stack_cache is turned off at load, with a
 *    message, and every stack is unwound.
 *  - struct_size_t() appeared in a 6.1 point release: older ones (as
 *    every arch but amd64 has in Debian's archive) get it from
 *    struct_size().
 * A 64-bit record field holding a pointer is cast through unsigned long,
 * for 32-bit kernels.
 *
 * Tracepoint history this file encodes:
 *  < 6.0   kmalloc/kmem_cache_alloc(call_site, ptr, bytes_req, bytes_alloc,
 *          gfp) and separate *_node variants with a trailing node.
 *  6.0     the same four gained "struct kmem_cache *s" after ptr.
 *  >= 6.1  kmalloc(call_site, ptr, bytes_req, bytes_alloc, gfp, node) and
 *          kmem_cache_alloc(call_site, ptr, s, gfp, node); no *_node.
 *          Unchanged through 7.3.
 *  kmem_cache_free: (call_site, ptr) before 5.12, (call_site, ptr, name)
 *          in 5.12..6.0, (call_site, ptr, s) from 6.1.
 *
 * Relay history that matters here, none of it needing a branch:
 *  - subbuf_start lost its prev_padding argument after 6.12 (7.3 has
 *    three); kmemtrace sets no subbuf_start, whose default (since 5.11)
 *    is the no-overwrite behaviour it wants, so the signature never
 *    matters.
 *  - relay_file_operations lost splice_read in 6.8; kmt_relay.c forwards
 *    splice (and mmap) only when relay fills them.
 *  - relay's mmap became mmap_prepare (struct vm_area_desc) with the VFS
 *    hook's arrival in 6.16: 7.3's relay_file_operations has only
 *    mmap_prepare, and a file may not have both (KMT_HAVE_MMAP_PREPARE).
 *  - The mapped reader (KMT_IOC_RING_NEXT) keeps relay's read position
 *    as relay_file_read_consume() does: subbufs_consumed, through the
 *    exported relay_subbufs_consumed(), bytes_consumed and padding[],
 *    fields and semantics the same in 6.1, 6.12 and 7.3 (their relay.c
 *    read side and relay_switch_subbuf() compared).
 *  - Before 5.11 relay_open() wrote its defaults into a non-const
 *    callback structure: the const one kmt_relay.c passes needs 5.11.
 *
 * Checked against the 6.1, 6.12 and 7.3 headers and unchanged there:
 * relay_open/close, relay_switch_subbuf, struct rchan and rchan_buf's
 * data, offset and chan, debugfs_create_dir/file/file_unsafe and
 * debugfs_remove(_recursive), register_trace_<event>,
 * tracepoint_probe_(un)register, for_each_kernel_tracepoint,
 * tracepoint_synchronize_unregister, kmem_cache_size/create/destroy,
 * si_mem_available, copy_from_kernel_nofault, and the mm_page_alloc
 * and mm_page_free signatures.
 */
#ifndef KMT_COMPAT_H
#define KMT_COMPAT_H

#include <linux/version.h>
#include <linux/preempt.h>
#include <linux/slab.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <trace/events/kmem.h>

/*
 * The only use of LINUX_VERSION_CODE in kmemtrace: every difference below
 * is gated on this, so checkpatch's LINUX_VERSION_CODE warning is waived
 * for this file alone (see tests/host/05-checkpatch.t).
 */
#define KMT_KERNEL_AT_LEAST(major, minor) \
	(KERNEL_VERSION(major, minor, 0) <= LINUX_VERSION_CODE)

/* file_operations.mmap_prepare, which relay fills instead of mmap. */
#define KMT_HAVE_MMAP_PREPARE	KMT_KERNEL_AT_LEAST(6, 16)

/*
 * The probes are flattened: on arm64 the compiler otherwise calls
 * arch_local_irq_save() out of line from their large inlined bodies.
 * compiler_attributes.h has had __flatten since 5.8.
 */
#ifndef __flatten
#define __flatten __attribute__((flatten))
#endif

/*
 * struct kmem_cache is public in <linux/slub_def.h> / <linux/slab_def.h>
 * up to 6.7. From 5.17 their inline helpers (nearest_obj() and friends)
 * use mm/slab.h's private struct slab, which out-of-tree code cannot
 * include; this placeholder only lets those helpers compile. Nothing
 * here calls them or touches a struct slab, and struct kmem_cache only
 * holds pointers to one, so its layout is the kernel's.
 */
#if !KMT_KERNEL_AT_LEAST(6, 8) && \
	(defined(CONFIG_SLUB) || defined(CONFIG_SLAB))
#if KMT_KERNEL_AT_LEAST(5, 17)
struct slab {
	void *s_mem;
	unsigned int objects;
};

static inline void *slab_address(const struct slab *slab)
{
	return slab->s_mem;
}
#endif
#ifdef CONFIG_SLUB
#include <linux/slub_def.h>
#else
#include <linux/slab_def.h>
#endif
#define KMT_HAVE_CACHE_LAYOUT	1
#define KMT_SLAB_LAYOUT_SOURCE	"<linux/slub_def.h>"

/* The public struct needs no check. */
static inline int kmt_check_cache_layout(void)
{
	return 0;
}

#elif KMT_KERNEL_AT_LEAST(6, 8)
/*
 * From 6.8 the struct is private to mm/. The offsets of its name, size
 * and object_size come from the vmlinux BTF of the kernel built against
 * (kmt_slab_layout.h, generated by kmt-slab-layout.sh), and are checked
 * at load against a cache made for the purpose.
 */
#include "kmt_slab_layout.h"
#ifndef KMT_SLAB_LAYOUT_MISSING
#define KMT_HAVE_CACHE_LAYOUT	1
#define KMT_SLAB_LAYOUT_SOURCE	"vmlinux BTF"
static_assert(sizeof(const char *) == KMT_KMEM_CACHE_NAME_SIZE);
static_assert(sizeof(unsigned int) == KMT_KMEM_CACHE_SIZE_SIZE);
static_assert(sizeof(unsigned int) == KMT_KMEM_CACHE_OBJECT_SIZE_SIZE);

/*
 * Cleared at load if the offsets do not describe the running kernel;
 * read with every cache an event names.
 */
extern bool kmt_cache_layout_ok;

static inline const void *kmt_cache_field(const struct kmem_cache *s,
					  size_t offset)
{
	return (const char *)s + offset;
}

#ifdef KMT_COMPAT_CACHE_LAYOUT_CHECK
bool kmt_cache_layout_ok = true;

static void kmt_layout_probe_ctor(void *obj)
{
}

/*
 * A cache with a constructor is never merged with another, so the one
 * returned is ours: its name pointer and object size are known.
 */
static inline int kmt_check_cache_layout(void)
{
	static const char probe_name[] = "kmemtrace_layout_probe";
	char copy[sizeof(probe_name)];
	unsigned int size, object_size;
	struct kmem_cache *s;
	const char *name;

	s = kmem_cache_create(probe_name, 72, 0, 0, kmt_layout_probe_ctor);
	if (!s)
		return -ENOMEM;
	name = *(const char * const *)kmt_cache_field(s,
			KMT_KMEM_CACHE_NAME_OFFSET);
	size = *(const unsigned int *)kmt_cache_field(s,
			KMT_KMEM_CACHE_SIZE_OFFSET);
	object_size = *(const unsigned int *)kmt_cache_field(s,
			KMT_KMEM_CACHE_OBJECT_SIZE_OFFSET);
	/* Some kernels keep a copy of the name: compare the bytes, safely. */
	kmt_cache_layout_ok = object_size == kmem_cache_size(s) &&
			      size >= object_size && size <= 2 * PAGE_SIZE &&
			      !copy_from_kernel_nofault(copy, name, sizeof(copy)) &&
			      !memcmp(copy, probe_name, sizeof(copy));
	kmem_cache_destroy(s);
	if (!kmt_cache_layout_ok)
		pr_notice("struct kmem_cache of the running kernel differs from the BTF this module was built with: cache names and slot sizes not recorded\n");
	return 0;
}
#endif /* KMT_COMPAT_CACHE_LAYOUT_CHECK */
#endif
#endif

#ifndef KMT_HAVE_CACHE_LAYOUT
#ifdef KMT_SLAB_LAYOUT_MISSING
#define KMT_SLAB_LAYOUT_SOURCE	"none (" KMT_SLAB_LAYOUT_MISSING ")"
#else
#define KMT_SLAB_LAYOUT_SOURCE	"none"
#endif
static inline int kmt_check_cache_layout(void)
{
	pr_notice("built without the layout of struct kmem_cache (%s): cache names and slot sizes not recorded\n",
		  KMT_SLAB_LAYOUT_SOURCE);
	return 0;
}
#endif

/*
 * Name and sizes of a cache. Returns false when the layout of struct
 * kmem_cache is unknown (SLOB; a 6.8+ kernel built without BTF, or whose
 * BTF did not match at load), in which case only the object size is
 * known and @name is NULL.
 */
static inline bool kmt_cache_info(const struct kmem_cache *s,
				  const char **name, size_t *object_size,
				  size_t *size)
{
#if defined(KMT_HAVE_CACHE_LAYOUT) && KMT_KERNEL_AT_LEAST(6, 8)
	if (likely(kmt_cache_layout_ok)) {
		*name = *(const char * const *)kmt_cache_field(s,
				KMT_KMEM_CACHE_NAME_OFFSET);
		*object_size = *(const unsigned int *)kmt_cache_field(s,
				KMT_KMEM_CACHE_OBJECT_SIZE_OFFSET);
		*size = *(const unsigned int *)kmt_cache_field(s,
				KMT_KMEM_CACHE_SIZE_OFFSET);
		return true;
	}
#elif defined(KMT_HAVE_CACHE_LAYOUT)
	*name = s->name;
	*object_size = s->object_size;
	*size = s->size;
	return true;
#endif
	*name = NULL;
	*object_size = kmem_cache_size((struct kmem_cache *)s);
	*size = *object_size;
	return false;
}

/* Where the cache names and sizes come from, for the load message. */
static inline const char *kmt_cache_layout_source(void)
{
#if defined(KMT_HAVE_CACHE_LAYOUT) && KMT_KERNEL_AT_LEAST(6, 8)
	if (!kmt_cache_layout_ok)
		return "none (the BTF does not match the running kernel)";
#endif
	return KMT_SLAB_LAYOUT_SOURCE;
}

/*
 * Entry points that hand out or take back slab objects without firing a
 * slab tracepoint; kmt_paths.c hooks them with kprobes. NULL: the path
 * does not exist in this kernel. kmem_cache_alloc_bulk is a macro over
 * the _noprof function from 6.10 (memory allocation profiling);
 * kmalloc_nolock, kfree_nolock and the percpu sheaves that kfree_rcu
 * fills directly came in 6.18.
 */
#ifdef kmem_cache_alloc_bulk
#define KMT_SYM_ALLOC_BULK	"kmem_cache_alloc_bulk_noprof"
#else
#define KMT_SYM_ALLOC_BULK	"kmem_cache_alloc_bulk"
#endif
#define KMT_SYM_FREE_BULK	"kmem_cache_free_bulk"
#ifdef kmalloc_nolock_noprof
#define KMT_SYM_KMALLOC_NOLOCK	"_kmalloc_nolock_noprof"
#define KMT_SYM_KFREE_NOLOCK	"kfree_nolock"
#else
#define KMT_SYM_KMALLOC_NOLOCK	NULL
#define KMT_SYM_KFREE_NOLOCK	NULL
#endif
#if KMT_KERNEL_AT_LEAST(6, 18)
#define KMT_SYM_KFREE_RCU_SHEAF	"__kfree_rcu_sheaf"
#else
#define KMT_SYM_KFREE_RCU_SHEAF	NULL
#endif

/* The gfp and node arguments of _kmalloc_nolock_noprof, after size. */
#ifdef CONFIG_KMALLOC_PARTITION_CACHES
#define KMT_NOLOCK_HAS_ARGS	0	/* a token argument moves them */
#else
#define KMT_NOLOCK_HAS_ARGS	1
#endif

/*
 * Argument N (from 0) of the probed function, at its entry. s390's
 * regs_get_kernel_argument() calls regs_get_register(), which it does not
 * export; its first five arguments are in r2..r6, and kmemtrace reads no
 * more than four.
 */
#if defined(CONFIG_S390)
static inline unsigned long kmt_arg(struct pt_regs *regs, unsigned int n)
{
	return n < 5 ? regs->gprs[2 + n] : 0;
}
#else
static inline unsigned long kmt_arg(struct pt_regs *regs, unsigned int n)
{
	return regs_get_kernel_argument(regs, n);
}
#endif

/*
 * The probed function's return address, at its entry: where each arch's
 * call instruction left it, as its arch_prepare_kretprobe() reads it.
 * x86 pushes it (regs_get_kernel_stack_nth(), exported there only),
 * arm64 and arm keep it in the link register, s390 in r14. Any other
 * arch gets 0: the probed paths' records then name no call site, which
 * kmt_paths.c says at load.
 */
#if defined(CONFIG_X86)
#define KMT_HAVE_ENTRY_RET	1
static inline unsigned long kmt_entry_ret(struct pt_regs *regs)
{
	return regs_get_kernel_stack_nth(regs, 0);
}
#elif defined(CONFIG_ARM64)
#define KMT_HAVE_ENTRY_RET	1
static inline unsigned long kmt_entry_ret(struct pt_regs *regs)
{
	return procedure_link_pointer(regs);
}
#elif defined(CONFIG_ARM)
#define KMT_HAVE_ENTRY_RET	1
static inline unsigned long kmt_entry_ret(struct pt_regs *regs)
{
	return regs->ARM_lr;
}
#elif defined(CONFIG_S390)
#define KMT_HAVE_ENTRY_RET	1
static inline unsigned long kmt_entry_ret(struct pt_regs *regs)
{
	return regs->gprs[14];
}
#else
#define KMT_HAVE_ENTRY_RET	0
static inline unsigned long kmt_entry_ret(struct pt_regs *regs)
{
	return 0;
}
#endif

/*
 * struct_size_t() reached 6.1 in a stable update: Debian's 6.1.0-56
 * (6.1.192) has it, 6.1.0-50 (6.1.176) and older do not. The same size
 * from struct_size() on a typed null pointer, which it never reads.
 */
#ifndef struct_size_t
#define struct_size_t(type, member, count) \
	struct_size((type *)NULL, member, count)
#endif

#ifdef KMT_COMPAT_SLAB_PROBES
/*
 * The handlers (kmt_internal.h): kmt_on_*() (kmt_probes.c) record an
 * event, and with a filter in force kmt_filtered_*() (kmt_filter.c)
 * decide first. They take 6.1's probe arguments, @data first and
 * unused: from 6.1 a probe below is then one jump to the one or the
 * other, with no register to move and no frame of its own, and an event
 * the filter leaves out costs no more than that before the filter's own
 * checks. The older tracepoints' probes adapt, and their
 * kmem_cache_alloc, which gives the sizes (and before 6.0 no cache),
 * goes through kmt_on_cache_alloc_sized(), which asks the filter itself.
 */
#define KMT_SLAB_EVENT(name, ...)					\
	do {								\
		if (static_branch_unlikely(&kmt_filter_on))		\
			kmt_filtered_##name(__VA_ARGS__);		\
		else							\
			kmt_on_##name(__VA_ARGS__);			\
	} while (0)

/* Tracepoint probes: adapt each kernel's signature to the handlers. */
#if KMT_KERNEL_AT_LEAST(6, 1)

static notrace void kmt_tp_kmalloc(void *data, unsigned long call_site,
				   const void *ptr, size_t bytes_req,
				   size_t bytes_alloc, gfp_t gfp, int node)
{
	KMT_SLAB_EVENT(kmalloc, data, call_site, ptr, bytes_req, bytes_alloc,
		       gfp, node);
}

static notrace void kmt_tp_cache_alloc(void *data, unsigned long call_site,
				       const void *ptr, struct kmem_cache *s,
				       gfp_t gfp, int node)
{
	KMT_SLAB_EVENT(cache_alloc, data, call_site, ptr, s, gfp, node);
}

#else /* < 6.1 */

static void kmt_on_cache_alloc_sized(unsigned long call_site,
				     const void *ptr,
				     const struct kmem_cache *s,
				     size_t bytes_req, size_t bytes_alloc,
				     gfp_t gfp, int node);

#if KMT_KERNEL_AT_LEAST(6, 0)

static notrace void kmt_tp_kmalloc(void *data, unsigned long call_site,
				   const void *ptr, struct kmem_cache *s,
				   size_t bytes_req, size_t bytes_alloc, gfp_t gfp)
{
	KMT_SLAB_EVENT(kmalloc, data, call_site, ptr, bytes_req, bytes_alloc,
		       gfp, NUMA_NO_NODE);
}

static notrace void kmt_tp_kmalloc_node(void *data, unsigned long call_site,
					const void *ptr, struct kmem_cache *s,
					size_t bytes_req, size_t bytes_alloc,
					gfp_t gfp, int node)
{
	KMT_SLAB_EVENT(kmalloc, data, call_site, ptr, bytes_req, bytes_alloc,
		       gfp, node);
}

static notrace void kmt_tp_cache_alloc(void *data, unsigned long call_site,
				       const void *ptr, struct kmem_cache *s,
				       size_t bytes_req, size_t bytes_alloc,
				       gfp_t gfp)
{
	kmt_on_cache_alloc_sized(call_site, ptr, s, bytes_req, bytes_alloc,
				 gfp, NUMA_NO_NODE);
}

static notrace void kmt_tp_cache_alloc_node(void *data, unsigned long call_site,
					    const void *ptr, struct kmem_cache *s,
					    size_t bytes_req, size_t bytes_alloc,
					    gfp_t gfp, int node)
{
	kmt_on_cache_alloc_sized(call_site, ptr, s, bytes_req, bytes_alloc,
				 gfp, node);
}

#else /* < 6.0 */

static notrace void kmt_tp_kmalloc(void *data, unsigned long call_site,
				   const void *ptr, size_t bytes_req,
				   size_t bytes_alloc, gfp_t gfp)
{
	KMT_SLAB_EVENT(kmalloc, data, call_site, ptr, bytes_req, bytes_alloc,
		       gfp, NUMA_NO_NODE);
}

static notrace void kmt_tp_kmalloc_node(void *data, unsigned long call_site,
					const void *ptr, size_t bytes_req,
					size_t bytes_alloc, gfp_t gfp, int node)
{
	KMT_SLAB_EVENT(kmalloc, data, call_site, ptr, bytes_req, bytes_alloc,
		       gfp, node);
}

static notrace void kmt_tp_cache_alloc(void *data, unsigned long call_site,
				       const void *ptr, size_t bytes_req,
				       size_t bytes_alloc, gfp_t gfp)
{
	kmt_on_cache_alloc_sized(call_site, ptr, NULL, bytes_req, bytes_alloc,
				 gfp, NUMA_NO_NODE);
}

static notrace void kmt_tp_cache_alloc_node(void *data, unsigned long call_site,
					    const void *ptr, size_t bytes_req,
					    size_t bytes_alloc, gfp_t gfp, int node)
{
	kmt_on_cache_alloc_sized(call_site, ptr, NULL, bytes_req, bytes_alloc,
				 gfp, node);
}

#endif
#endif

static notrace void kmt_tp_kfree(void *data, unsigned long call_site, const void *ptr)
{
	KMT_SLAB_EVENT(kfree, data, call_site, ptr);
}

#if KMT_KERNEL_AT_LEAST(6, 1)
static notrace void kmt_tp_cache_free(void *data, unsigned long call_site,
				      const void *ptr, const struct kmem_cache *s)
{
	KMT_SLAB_EVENT(cache_free, data, call_site, ptr, s);
}
#elif KMT_KERNEL_AT_LEAST(5, 12)
static notrace void kmt_tp_cache_free(void *data, unsigned long call_site,
				      const void *ptr, const char *name)
{
	KMT_SLAB_EVENT(cache_free, data, call_site, ptr, NULL);
}
#else
static notrace void kmt_tp_cache_free(void *data, unsigned long call_site,
				      const void *ptr)
{
	KMT_SLAB_EVENT(cache_free, data, call_site, ptr, NULL);
}
#endif

#if KMT_KERNEL_AT_LEAST(6, 1)
#define KMT_HAVE_NODE_EVENTS	0
#else
#define KMT_HAVE_NODE_EVENTS	1
#endif

/* Attach every slab probe, or none: on failure the attached ones go. */
static inline int kmt_register_slab_probes(void)
{
	int ret;

	ret = register_trace_kmalloc(kmt_tp_kmalloc, NULL);
	if (ret)
		goto out;
	ret = register_trace_kmem_cache_alloc(kmt_tp_cache_alloc, NULL);
	if (ret)
		goto unregister_kmalloc;
	ret = register_trace_kfree(kmt_tp_kfree, NULL);
	if (ret)
		goto unregister_cache_alloc;
	ret = register_trace_kmem_cache_free(kmt_tp_cache_free, NULL);
	if (ret)
		goto unregister_kfree;
#if KMT_HAVE_NODE_EVENTS
	ret = register_trace_kmalloc_node(kmt_tp_kmalloc_node, NULL);
	if (ret)
		goto unregister_cache_free;
	ret = register_trace_kmem_cache_alloc_node(kmt_tp_cache_alloc_node,
						   NULL);
	if (ret)
		goto unregister_kmalloc_node;
#endif
	return 0;

#if KMT_HAVE_NODE_EVENTS
unregister_kmalloc_node:
	unregister_trace_kmalloc_node(kmt_tp_kmalloc_node, NULL);
unregister_cache_free:
	unregister_trace_kmem_cache_free(kmt_tp_cache_free, NULL);
#endif
unregister_kfree:
	unregister_trace_kfree(kmt_tp_kfree, NULL);
unregister_cache_alloc:
	unregister_trace_kmem_cache_alloc(kmt_tp_cache_alloc, NULL);
unregister_kmalloc:
	unregister_trace_kmalloc(kmt_tp_kmalloc, NULL);
out:
	return ret;
}

/* The caller still has to wait with tracepoint_synchronize_unregister(). */
static inline void kmt_unregister_slab_probes(void)
{
#if KMT_HAVE_NODE_EVENTS
	unregister_trace_kmem_cache_alloc_node(kmt_tp_cache_alloc_node, NULL);
	unregister_trace_kmalloc_node(kmt_tp_kmalloc_node, NULL);
#endif
	unregister_trace_kmem_cache_free(kmt_tp_cache_free, NULL);
	unregister_trace_kfree(kmt_tp_kfree, NULL);
	unregister_trace_kmem_cache_alloc(kmt_tp_cache_alloc, NULL);
	unregister_trace_kmalloc(kmt_tp_kmalloc, NULL);
}
#endif /* KMT_COMPAT_SLAB_PROBES */

/*
 * The cgroup filter (kmt_filter.c): cgroup_get_from_id() (exported GPL,
 * returning ERR_PTR(-ENOENT) for an unknown id in 6.1, 6.12 and 7.3),
 * cgroup_put(), and task_dfl_cgroup() and cgroup_is_descendant(), inline
 * and the same in those three: a task's v2 cgroup through its css_set,
 * which a probe may follow with preemption off (task_css_set_check()
 * accepts rcu_read_lock_sched_held()). Without CONFIG_CGROUPS, a cgroup
 * filter is refused.
 */
#ifdef CONFIG_CGROUPS
#include <linux/cgroup.h>
static inline struct cgroup *kmt_cgroup_get(u64 id)
{
	struct cgroup *cgrp = cgroup_get_from_id(id);

	return IS_ERR_OR_NULL(cgrp) ? ERR_PTR(-ENOENT) : cgrp;
}

static inline void kmt_cgroup_put(struct cgroup *cgrp)
{
	cgroup_put(cgrp);
}

static inline bool kmt_task_in_cgroup(struct task_struct *task,
				      struct cgroup *cgrp)
{
	return cgroup_is_descendant(task_dfl_cgroup(task), cgrp);
}
#else
struct cgroup;
static inline struct cgroup *kmt_cgroup_get(u64 id)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static inline void kmt_cgroup_put(struct cgroup *cgrp)
{
}

static inline bool kmt_task_in_cgroup(struct task_struct *task,
				      struct cgroup *cgrp)
{
	return false;
}
#endif

/*
 * Stack walking. With x86-64's ORC unwinder (every Debian kernel) the
 * module walks with unwind_start(), unwind_next_frame() and
 * unwind_get_return_address() from <asm/unwind.h>, exported GPL and the
 * same in 6.1, 6.12 and 7.3, as is struct unwind_state's sp, regs and
 * error under CONFIG_UNWINDER_ORC: the walk cache needs each frame's
 * stack pointer, which stack_trace_save() does not give. Elsewhere
 * stack_trace_save() takes the frames and the walk cache is off.
 */
#if defined(CONFIG_X86_64) && defined(CONFIG_UNWINDER_ORC)
#include <asm/unwind.h>
#define KMT_HAVE_WALK_CACHE	1
#else
#define KMT_HAVE_WALK_CACHE	0
#endif

/*
 * A module's init text, from its MODULE_STATE_COMING notification until
 * its init returns (kmt_modsyms.c): one allocation apart from its core
 * before 6.4, text first (text_size bytes of it); from 6.4 one
 * allocation per kind of memory, mem[MOD_INIT_TEXT] the text's.
 */
static inline void kmt_module_init_text(const struct module *mod,
					unsigned long *start,
					unsigned long *size)
{
#if KMT_KERNEL_AT_LEAST(6, 4)
	*start = (unsigned long)mod->mem[MOD_INIT_TEXT].base;
	*size = mod->mem[MOD_INIT_TEXT].size;
#else
	*start = (unsigned long)mod->init_layout.base;
	*size = mod->init_layout.text_size;
#endif
}

#endif /* KMT_COMPAT_H */
