/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmt_compat.h - every kernel-version difference kmemtrace.c depends on:
 * the slab tracepoint signatures, the layout of struct kmem_cache and a
 * few helpers that were renamed.
 *
 * Tested on 6.1 (Debian 6.1.0-56). The branches for 5.10..6.0 and for
 * 6.2..6.12 are written from the kernels' headers and compile-tested on
 * none of them: treat them as a starting point, not as support.
 *
 * Tracepoint history this file encodes:
 *  < 6.0   kmalloc/kmem_cache_alloc(call_site, ptr, bytes_req, bytes_alloc,
 *          gfp) and separate *_node variants with a trailing node.
 *  6.0     the same four gained "struct kmem_cache *s" after ptr.
 *  >= 6.1  kmalloc(call_site, ptr, bytes_req, bytes_alloc, gfp, node) and
 *          kmem_cache_alloc(call_site, ptr, s, gfp, node); no *_node.
 *  kmem_cache_free: (call_site, ptr) before 5.12, (call_site, ptr, name)
 *          in 5.12..6.0, (call_site, ptr, s) from 6.1.
 */
#ifndef KMT_COMPAT_H
#define KMT_COMPAT_H

#include <linux/version.h>
#include <linux/preempt.h>
#include <linux/slab.h>
#include <linux/tracepoint.h>
#include <trace/events/kmem.h>

/*
 * The only use of LINUX_VERSION_CODE in kmemtrace: every difference below
 * is gated on this, so checkpatch's LINUX_VERSION_CODE warning is waived
 * for this file alone (see tests/host/05-checkpatch.t).
 */
#define KMT_KERNEL_AT_LEAST(major, minor) \
	(KERNEL_VERSION(major, minor, 0) <= LINUX_VERSION_CODE)

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
#endif

/*
 * Version-independent handlers, defined in kmemtrace.c. A NULL cache
 * means the running kernel's tracepoint does not say which cache.
 */
static void kmt_on_kmalloc(unsigned long call_site, const void *ptr,
			   size_t bytes_req, size_t bytes_alloc, gfp_t gfp,
			   int node);
static void kmt_on_cache_alloc(unsigned long call_site, const void *ptr,
			       const struct kmem_cache *s, size_t bytes_req,
			       size_t bytes_alloc, gfp_t gfp, int node);
static void kmt_on_kfree(unsigned long call_site, const void *ptr);
static void kmt_on_cache_free(unsigned long call_site, const void *ptr,
			      const struct kmem_cache *s);

#if KMT_KERNEL_AT_LEAST(5, 11)
#define kmt_in_hardirq()	in_hardirq()
#else
#define kmt_in_hardirq()	in_irq()
#endif

/*
 * Name and sizes of a cache. Returns false when this kernel keeps
 * struct kmem_cache private (SLOB; SLUB from 6.8), in which case only
 * the object size is known and @name is NULL.
 */
static inline bool kmt_cache_info(const struct kmem_cache *s,
				  const char **name, size_t *object_size,
				  size_t *size)
{
#ifdef KMT_HAVE_CACHE_LAYOUT
	*name = s->name;
	*object_size = s->object_size;
	*size = s->size;
	return true;
#else
	*name = NULL;
	*object_size = kmem_cache_size((struct kmem_cache *)s);
	*size = *object_size;
	return false;
#endif
}

/* Tracepoint probes: adapt each kernel's signature to the handlers. */
#if KMT_KERNEL_AT_LEAST(6, 1)

static void kmt_tp_kmalloc(void *data, unsigned long call_site,
			   const void *ptr, size_t bytes_req,
			   size_t bytes_alloc, gfp_t gfp, int node)
{
	kmt_on_kmalloc(call_site, ptr, bytes_req, bytes_alloc, gfp, node);
}

static void kmt_tp_cache_alloc(void *data, unsigned long call_site,
			       const void *ptr, struct kmem_cache *s,
			       gfp_t gfp, int node)
{
	const char *name;
	size_t object_size, size;

	kmt_cache_info(s, &name, &object_size, &size);
	kmt_on_cache_alloc(call_site, ptr, s, object_size, size, gfp, node);
}

#elif KMT_KERNEL_AT_LEAST(6, 0)

static void kmt_tp_kmalloc(void *data, unsigned long call_site,
			   const void *ptr, struct kmem_cache *s,
			   size_t bytes_req, size_t bytes_alloc, gfp_t gfp)
{
	kmt_on_kmalloc(call_site, ptr, bytes_req, bytes_alloc, gfp,
		       NUMA_NO_NODE);
}

static void kmt_tp_kmalloc_node(void *data, unsigned long call_site,
				const void *ptr, struct kmem_cache *s,
				size_t bytes_req, size_t bytes_alloc,
				gfp_t gfp, int node)
{
	kmt_on_kmalloc(call_site, ptr, bytes_req, bytes_alloc, gfp, node);
}

static void kmt_tp_cache_alloc(void *data, unsigned long call_site,
			       const void *ptr, struct kmem_cache *s,
			       size_t bytes_req, size_t bytes_alloc,
			       gfp_t gfp)
{
	kmt_on_cache_alloc(call_site, ptr, s, bytes_req, bytes_alloc, gfp,
			   NUMA_NO_NODE);
}

static void kmt_tp_cache_alloc_node(void *data, unsigned long call_site,
				    const void *ptr, struct kmem_cache *s,
				    size_t bytes_req, size_t bytes_alloc,
				    gfp_t gfp, int node)
{
	kmt_on_cache_alloc(call_site, ptr, s, bytes_req, bytes_alloc, gfp,
			   node);
}

#else /* < 6.0 */

static void kmt_tp_kmalloc(void *data, unsigned long call_site,
			   const void *ptr, size_t bytes_req,
			   size_t bytes_alloc, gfp_t gfp)
{
	kmt_on_kmalloc(call_site, ptr, bytes_req, bytes_alloc, gfp,
		       NUMA_NO_NODE);
}

static void kmt_tp_kmalloc_node(void *data, unsigned long call_site,
				const void *ptr, size_t bytes_req,
				size_t bytes_alloc, gfp_t gfp, int node)
{
	kmt_on_kmalloc(call_site, ptr, bytes_req, bytes_alloc, gfp, node);
}

static void kmt_tp_cache_alloc(void *data, unsigned long call_site,
			       const void *ptr, size_t bytes_req,
			       size_t bytes_alloc, gfp_t gfp)
{
	kmt_on_cache_alloc(call_site, ptr, NULL, bytes_req, bytes_alloc, gfp,
			   NUMA_NO_NODE);
}

static void kmt_tp_cache_alloc_node(void *data, unsigned long call_site,
				    const void *ptr, size_t bytes_req,
				    size_t bytes_alloc, gfp_t gfp, int node)
{
	kmt_on_cache_alloc(call_site, ptr, NULL, bytes_req, bytes_alloc, gfp,
			   node);
}

#endif

static void kmt_tp_kfree(void *data, unsigned long call_site, const void *ptr)
{
	kmt_on_kfree(call_site, ptr);
}

#if KMT_KERNEL_AT_LEAST(6, 1)
static void kmt_tp_cache_free(void *data, unsigned long call_site,
			      const void *ptr, const struct kmem_cache *s)
{
	kmt_on_cache_free(call_site, ptr, s);
}
#elif KMT_KERNEL_AT_LEAST(5, 12)
static void kmt_tp_cache_free(void *data, unsigned long call_site,
			      const void *ptr, const char *name)
{
	kmt_on_cache_free(call_site, ptr, NULL);
}
#else
static void kmt_tp_cache_free(void *data, unsigned long call_site,
			      const void *ptr)
{
	kmt_on_cache_free(call_site, ptr, NULL);
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

#endif /* KMT_COMPAT_H */
