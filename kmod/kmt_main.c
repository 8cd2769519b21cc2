// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_main.c - kmemtrace.ko's module parameters, the memory budget that
 * sizes its buffers, and load and unload.
 *
 * kmemtrace records slab allocations and frees (page allocations on
 * request) as 64-byte records in per-CPU relay buffers under
 * <debugfs>/kmemtrace/, in the format of abi/kmemtrace_abi.h. Where each
 * part lives: kmt_internal.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/gcd.h>
#include <linux/kernel.h>
#include <linux/lcm.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/relay.h>
#include <linux/sizes.h>

/* The load-time check of struct kmem_cache's layout is made here. */
#define KMT_COMPAT_CACHE_LAYOUT_CHECK
#include "kmt_compat.h"
#include "kmt_internal.h"

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

/*
 * The default ring, 4 MiB per CPU, before it is fitted to mem_share.
 * relay wakes the reader each time a sub-buffer fills: at 64 KiB each,
 * those wakeups (a poll, a read and a write of kmemtraced, two context
 * switches) cost the traced load 10 instructions an event of the 250
 * kmemtrace adds (6.1, instruction-counted guest); 256 KiB takes that
 * down to 2.5, and a quiet CPU's records are read from the sub-buffer
 * being written all the same.
 */
#define KMT_DEFAULT_SUBBUFS	16U
#define KMT_DEFAULT_SUBBUF_SIZE	262144U
/* Fitting the default halves the count down to this, then the size. */
#define KMT_FIT_SUBBUFS_FLOOR	8U

#define KMT_MEM_SHARE_MAX	((unsigned int)KMT_PARAM_MEM_SHARE_MAX)

/* 0 means "not given": kmt_size_buffers() picks, and stores, the value. */
unsigned int kmt_subbufs;
module_param_named(subbufs, kmt_subbufs, uint, 0444);
MODULE_PARM_DESC(subbufs,
		 "Sub-buffers per CPU, 2..4096 (default 16, fewer when mem_share needs it). As a built-in or through modprobe: kmemtrace.subbufs=N on the kernel command line.");

unsigned int kmt_subbuf_size;
module_param_named(subbuf_size, kmt_subbuf_size, uint, 0444);
MODULE_PARM_DESC(subbuf_size,
		 "Bytes per sub-buffer, 256..67108864 (default 262144, smaller when mem_share needs it), rounded up so records never straddle sub-buffers and the ring is whole pages. Kernel command line: kmemtrace.subbuf_size=N.");

unsigned int kmt_mem_share = 10;
module_param_named(mem_share, kmt_mem_share, uint, 0444);
MODULE_PARM_DESC(mem_share,
		 "Percent of the memory available at load (MemAvailable) that the buffers of all possible CPUs may take, 1..90 (default 10). A larger request is refused before anything is allocated; the default size shrinks to fit. Kernel command line: kmemtrace.mem_share=N.");

static bool start_disabled;
module_param(start_disabled, bool, 0444);
MODULE_PARM_DESC(start_disabled,
		 "Load with tracing off; write 1 to <debugfs>/kmemtrace/enabled to start (default 0: trace from load). Kernel command line: kmemtrace.start_disabled=1.");

bool kmt_pages;
module_param_named(pages, kmt_pages, bool, 0444);
MODULE_PARM_DESC(pages,
		 "Also record page allocator events mm_page_alloc and mm_page_free (default 0). Kernel command line: kmemtrace.pages=1.");

unsigned int kmt_stack_depth;
module_param_named(stack_depth, kmt_stack_depth, uint, 0444);
MODULE_PARM_DESC(stack_depth,
		 "Frames of kernel stack recorded with each allocation, 0..64 (default 0: no stacks). Kernel command line: kmemtrace.stack_depth=N.");

bool kmt_stack_frees;
module_param_named(stack_frees, kmt_stack_frees, bool, 0444);
MODULE_PARM_DESC(stack_frees,
		 "With stack_depth, record the stacks of frees too (default 0: allocations only). Kernel command line: kmemtrace.stack_frees=1.");

unsigned int kmt_stack_entries = 4096;
module_param_named(stack_entries, kmt_stack_entries, uint, 0444);
MODULE_PARM_DESC(stack_entries,
		 "With stack_depth, distinct stacks each CPU remembers between enables, 1..65535 (default 4096); allocated at load, within mem_share. Kernel command line: kmemtrace.stack_entries=N.");

unsigned int kmt_stack_cache = 512;
module_param_named(stack_cache, kmt_stack_cache, uint, 0444);
MODULE_PARM_DESC(stack_cache,
		 "With stack_depth, walks each CPU remembers so that a stack seen before is checked on the stack instead of unwound, 0..65536, rounded up to a power of two (default 512; 0: unwind every stack); allocated at load, within mem_share. Kernel command line: kmemtrace.stack_cache=N.");

bool kmt_stack_check;
module_param_named(stack_check, kmt_stack_check, bool, 0444);
MODULE_PARM_DESC(stack_check,
		 "With stack_cache, unwind every stack the cache knows too and count the disagreements in <debugfs>/kmemtrace/stacks; for testing (default 0). Kernel command line: kmemtrace.stack_check=1.");

struct kmt_budget kmt_budget;
struct kmt_cpu __percpu *kmt_cpus;
struct rchan *kmt_chan;
static struct dentry *kmt_dir;

/*
 * Bytes one CPU's buffer takes: the ring's pages, relay's page array and
 * padding array and its struct rchan_buf, and this module's per-CPU
 * state, its stack table included. relay allocates the same for every
 * CPU that comes online later; the stack tables are allocated at load
 * for every possible CPU.
 */
static u64 kmt_buf_cost(void)
{
	u64 npages = PAGE_ALIGN((u64)kmt_subbufs * kmt_subbuf_size) >> PAGE_SHIFT;

	return (npages << PAGE_SHIFT) + npages * sizeof(struct page *) +
	       (u64)kmt_subbufs * sizeof(size_t) + sizeof(struct rchan_buf) +
	       sizeof(struct kmt_cpu) + kmt_stack_cost();
}

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
	unit = lcm(KMT_RECORD_SIZE, PAGE_SIZE / gcd(kmt_subbufs, PAGE_SIZE));
	rounded = roundup(kmt_subbuf_size, unit);
	if (rounded != kmt_subbuf_size) {
		pr_notice("subbuf_size=%u rounded up to %u: a multiple of the %u-byte record that makes %u sub-buffers whole pages\n",
			  kmt_subbuf_size, rounded, KMT_RECORD_SIZE, kmt_subbufs);
		kmt_subbuf_size = rounded;
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
		if (kmt_subbufs > KMT_FIT_SUBBUFS_FLOOR)
			kmt_subbufs /= 2;
		else if (kmt_subbuf_size > PAGE_SIZE)
			kmt_subbuf_size /= 2;
		else if (kmt_subbufs > KMT_SUBBUFS_MIN)
			kmt_subbufs /= 2;
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
	bool defaulted = !kmt_subbufs && !kmt_subbuf_size;

	if (kmt_mem_share < 1 || kmt_mem_share > KMT_MEM_SHARE_MAX) {
		pr_err("mem_share=%u is outside 1..%u (percent of available memory)\n",
		       kmt_mem_share, KMT_MEM_SHARE_MAX);
		return -EINVAL;
	}
	if (kmt_check_stack_params())
		return -EINVAL;
	if (!kmt_subbufs)
		kmt_subbufs = KMT_DEFAULT_SUBBUFS;
	if (!kmt_subbuf_size)
		kmt_subbuf_size = KMT_DEFAULT_SUBBUF_SIZE;
	if (kmt_subbufs < KMT_SUBBUFS_MIN || kmt_subbufs > KMT_SUBBUFS_MAX) {
		pr_err("subbufs=%u is outside %u..%u\n", kmt_subbufs,
		       KMT_SUBBUFS_MIN, KMT_SUBBUFS_MAX);
		return -EINVAL;
	}
	if (kmt_subbuf_size < KMT_SUBBUF_SIZE_MIN ||
	    kmt_subbuf_size > KMT_SUBBUF_SIZE_MAX) {
		pr_err("subbuf_size=%u is outside %u..%u\n", kmt_subbuf_size,
		       KMT_SUBBUF_SIZE_MIN, KMT_SUBBUF_SIZE_MAX);
		return -EINVAL;
	}

	kmt_budget.cpus = num_possible_cpus();
	kmt_budget.available = (u64)si_mem_available() << PAGE_SHIFT;
	kmt_budget.allowed = div_u64(kmt_budget.available, 100) * kmt_mem_share;
	kmt_budget.sized = "given";
	if (defaulted) {
		kmt_budget.sized = "default";
		kmt_fit_default(div_u64(kmt_budget.allowed, kmt_budget.cpus));
		if (kmt_subbufs != KMT_DEFAULT_SUBBUFS ||
		    kmt_subbuf_size != KMT_DEFAULT_SUBBUF_SIZE)
			kmt_budget.sized = "fitted";
	}
	kmt_round_subbuf_size();
	if ((u64)kmt_subbufs * kmt_subbuf_size > KMT_BUF_SIZE_MAX) {
		pr_err("subbufs * subbuf_size = %llu bytes per CPU, more than %llu\n",
		       (u64)kmt_subbufs * kmt_subbuf_size, KMT_BUF_SIZE_MAX);
		return -EINVAL;
	}

	kmt_budget.per_cpu = kmt_buf_cost();
	kmt_budget.total = kmt_budget.per_cpu * kmt_budget.cpus;
	if (kmt_budget.total > kmt_budget.allowed) {
		pr_err("%u x %u-byte sub-buffers for %u possible CPUs need %llu KiB, more than mem_share=%u%% of the %llu KiB available (%llu KiB): nothing allocated; lower subbufs or subbuf_size, or raise mem_share\n",
		       kmt_subbufs, kmt_subbuf_size, kmt_budget.cpus,
		       kmt_budget.total >> 10, kmt_mem_share,
		       kmt_budget.available >> 10, kmt_budget.allowed >> 10);
		if (kmt_stack_depth)
			pr_err("of which stack tables take %llu KiB per CPU (stack_entries=%u x stack_depth=%u, stack_cache=%u): lower them, or raise mem_share\n",
			       kmt_stack_cost() >> 10, kmt_stack_entries,
			       kmt_stack_depth, kmt_stack_cache);
		return -ENOMEM;
	}
	return 0;
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

	ret = kmt_find_page_tracepoints();
	if (ret)
		return ret;

	kmt_cpus = alloc_percpu(struct kmt_cpu);
	if (!kmt_cpus)
		return -ENOMEM;
	for_each_possible_cpu(cpu)
		per_cpu_ptr(kmt_cpus, cpu)->cpu = cpu;
	ret = kmt_alloc_stacks();
	if (ret)
		goto free_stacks;
	ret = kmt_filter_init();
	if (ret)
		goto free_stacks;

	kmt_dir = debugfs_create_dir(KMT_DEBUGFS_DIR, NULL);
	if (IS_ERR(kmt_dir)) {
		ret = PTR_ERR(kmt_dir);
		pr_err("cannot create <debugfs>/%s: %d\n", KMT_DEBUGFS_DIR, ret);
		goto exit_filter;
	}

	/* relay names the files base + CPU number: KMT_DEBUGFS_CPU_FMT. */
	kmt_chan = relay_open("cpu", kmt_dir, kmt_subbuf_size, kmt_subbufs,
			      &kmt_relay_callbacks, NULL);
	if (!kmt_chan) {
		ret = -ENOMEM;
		pr_err("cannot allocate %u x %u bytes of relay buffer per CPU\n",
		       kmt_subbufs, kmt_subbuf_size);
		goto remove_dir;
	}

	kmt_debugfs_create_files(kmt_dir);

	ret = kmt_modsyms_register();
	if (ret)
		goto close_relay;

	kmt_register_paths();

	if (!start_disabled) {
		ret = kmt_set_enabled(true);
		if (ret)
			goto unregister_paths;
	}

	pr_info("ABI %u.%u, tracing %s, page events %s, cache layout from %s\n",
		KMT_ABI_MAJOR, KMT_ABI_MINOR, start_disabled ? "off" : "on",
		kmt_pages ? "on" : "off", kmt_cache_layout_source());
	pr_info("buffers (%s): %u sub-buffers of %u bytes per CPU, %llu KiB for %u possible CPUs, within mem_share=%u%% of %llu KiB available (%llu KiB)\n",
		kmt_budget.sized, kmt_subbufs, kmt_subbuf_size,
		kmt_budget.total >> 10, kmt_budget.cpus, kmt_mem_share,
		kmt_budget.available >> 10, kmt_budget.allowed >> 10);
	if (kmt_stack_depth)
		pr_info("stacks: up to %u frames, of allocations%s; %u distinct stacks and %u walks per CPU, %llu KiB per CPU\n",
			kmt_stack_depth, kmt_stack_frees ? " and frees" : "",
			kmt_stack_entries, kmt_stack_cache, kmt_stack_cost() >> 10);
	return 0;

unregister_paths:
	kmt_unregister_paths();
	kmt_modsyms_unregister();
close_relay:
	relay_close(kmt_chan);
remove_dir:
	debugfs_remove_recursive(kmt_dir);
exit_filter:
	kmt_filter_exit();
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
	kmt_modsyms_unregister();
	kmt_filter_exit();
	kmt_free_stacks();
	free_percpu(kmt_cpus);
}

module_init(kmt_init);
module_exit(kmt_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("kmemtrace developers");
MODULE_DESCRIPTION("Slab allocation tracer writing per-CPU relay buffers");
MODULE_VERSION(KMT_VERSION);
