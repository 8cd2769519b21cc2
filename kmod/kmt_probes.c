// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_probes.c - the allocator tracepoints: their probes, which write
 * each event through kmt_record_inline() (kmt_write.h), and attaching
 * and detaching them when tracing is turned on and off.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

/*
 * This file defines the handlers kmt_compat.h's tracepoint probes call,
 * which adapt each kernel's signatures: they are static, and so inlined
 * into those probes.
 */
#define KMT_COMPAT_SLAB_PROBES
#include "kmt_internal.h"
#include "kmt_compat.h"
#include "kmt_write.h"

/* Serializes attaching, detaching and flushing; protects kmt_enabled. */
DEFINE_MUTEX(kmt_enable_lock);
bool kmt_enabled;

static struct tracepoint *kmt_page_alloc_tp;
static struct tracepoint *kmt_page_free_tp;
unsigned long kmt_page_iter[2][2];

/*
 * An event that asks the filter through kmt_filtered_event() (the page
 * probes, and kmem_cache_alloc before 6.1): there, or straight to the
 * write path.
 */
static __always_inline void kmt_record_or_filter(const struct kmt_ev *ev)
{
	if (static_branch_unlikely(&kmt_filter_on))
		kmt_filtered_event(ev, 0);
	else
		kmt_record_inline(ev);
}

/*
 * The slab handlers, reached from the probes (kmt_compat.h) by a jump
 * when no filter is in force. Never inlined into them, so that the
 * probes keep no frame; notrace, as nothing of the write path is traced
 * (and it saves each event the call to ftrace's entry, a no-op);
 * flattened, so that what the write path calls inline stays inline
 * (arm64 called arch_local_irq_save() out of line).
 */
static __always_inline void kmt_record_slab(u8 type, unsigned long call_site,
					    const void *ptr,
					    const struct kmem_cache *s,
					    size_t bytes_req,
					    size_t bytes_alloc, gfp_t gfp,
					    int node)
{
	/* Initialized where declared: no zeroing of the whole first. */
	struct kmt_ev ev = kmt_slab_ev(type, call_site, ptr, s, bytes_req,
				       bytes_alloc, gfp, node);

	kmt_record_inline(&ev);
}

noinline notrace __flatten void
kmt_on_kmalloc(void *data, unsigned long call_site, const void *ptr,
	       size_t bytes_req, size_t bytes_alloc, gfp_t gfp, int node)
{
	kmt_record_slab(KMT_REC_KMALLOC, call_site, ptr, NULL, bytes_req,
			bytes_alloc, gfp, node);
}

#if KMT_KERNEL_AT_LEAST(6, 1)
noinline notrace __flatten void
kmt_on_cache_alloc(void *data, unsigned long call_site, const void *ptr,
		   struct kmem_cache *s, gfp_t gfp, int node)
{
	size_t object_size, size;
	const char *name;

	kmt_cache_info(s, &name, &object_size, &size);
	kmt_record_slab(KMT_REC_CACHE_ALLOC, call_site, ptr, s, object_size,
			size, gfp, node);
}
#else
static void kmt_on_cache_alloc_sized(unsigned long call_site,
				     const void *ptr,
				     const struct kmem_cache *s,
				     size_t bytes_req, size_t bytes_alloc,
				     gfp_t gfp, int node)
{
	struct kmt_ev ev = kmt_slab_ev(KMT_REC_CACHE_ALLOC, call_site, ptr, s,
				       bytes_req, bytes_alloc, gfp, node);

	kmt_record_or_filter(&ev);
}
#endif

noinline notrace __flatten void
kmt_on_kfree(void *data, unsigned long call_site, const void *ptr)
{
	/* The tracepoint fires before kfree()'s own NULL check. */
	if (ZERO_OR_NULL_PTR(ptr))
		return;
	kmt_record_slab(KMT_REC_KFREE, call_site, ptr, NULL, 0, 0, 0,
			KMT_NODE_ANY);
}

noinline notrace __flatten void
kmt_on_cache_free(void *data, unsigned long call_site, const void *ptr,
		  const struct kmem_cache *s)
{
	kmt_record_slab(KMT_REC_CACHE_FREE, call_site, ptr, s, 0, 0, 0,
			KMT_NODE_ANY);
}

/*
 * The page tracepoints have kept these signatures through 5.10..6.12.
 * Flattened as the slab handlers are.
 */
static __flatten void kmt_tp_page_alloc(void *data, struct page *page,
					unsigned int order, gfp_t gfp,
					int migratetype)
{
	struct kmt_ev ev = {
		.type = KMT_REC_PAGE_ALLOC,
		.flags = 0,
		.page_mt = KMT_PAGE_MT_VALID | (migratetype & 0xff),
		.gfp = gfp,
		.call_site = 0,
		.ptr = page ? page_to_pfn(page) : 0,
		.cache = NULL,
		.bytes_req = PAGE_SIZE << order,
		.bytes_alloc = PAGE_SIZE << order,
		.node = KMT_NODE_ANY,
	};

	kmt_record_or_filter(&ev);
}

static __flatten void kmt_tp_page_free(void *data, struct page *page,
				       unsigned int order)
{
	struct kmt_ev ev = {
		.type = KMT_REC_PAGE_FREE,
		.flags = 0,
		.page_mt = 0,
		.gfp = 0,
		.call_site = 0,
		.ptr = page_to_pfn(page),
		.cache = NULL,
		.bytes_req = 0,
		.bytes_alloc = PAGE_SIZE << order,
		.node = KMT_NODE_ANY,
	};

	kmt_record_or_filter(&ev);
}

/* The page tracepoints are not exported: look them up by name. */
static void kmt_match_tracepoint(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "mm_page_alloc"))
		kmt_page_alloc_tp = tp;
	else if (!strcmp(tp->name, "mm_page_free"))
		kmt_page_free_tp = tp;
}

/* With pages=1: the page tracepoints, which load cannot do without. */
int kmt_find_page_tracepoints(void)
{
	if (!kmt_pages)
		return 0;
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
	return 0;
}

static int kmt_attach(void)
{
	unsigned int cpu;
	int ret;

	/* No probe runs now: frees while off left entries in the table. */
	kmt_track_clear();
	/* And a new session describes every cache again. */
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
			memset(c->walk, 0, (size_t)kmt_stack_cache * kmt_walk_stride);
			memset(c->page_key_off, 0, sizeof(c->page_key_off));
		}
	}
	ret = kmt_register_slab_probes();
	if (ret)
		goto out;
	WRITE_ONCE(kmt_probes_on, true);
	if (!kmt_pages)
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
void kmt_detach(void)
{
	if (kmt_pages) {
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

int kmt_set_enabled(bool on)
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
