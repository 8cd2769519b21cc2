// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmemtrace_oracle.c - test module: performs an exactly known pattern of
 * slab allocations and frees, and an allocation load, for kmemtrace's
 * tests to compare the trace with.
 *
 * <debugfs>/kmemtrace_oracle/ (root only):
 *
 *   run       write 1: perform the pattern below, synchronously.
 *   expected  read: what the last run did, one "key value" per line.
 *   load      write N > 0: one kthread per online CPU, bound to it,
 *             allocating N objects of varying sizes then freeing them,
 *             in a loop (cond_resched() between batches), at nice
 *             load_nice; write 0: stop and join them.
 *             Read: "threads T batch N loops L".
 *             Unloading the module also stops them.
 *
 * The pattern. Every allocation and free below happens directly in the
 * named function (noinline, never cloned, never a tail call), so every
 * event's call_site lies inside that function's symbol:
 *
 *   oracle_kmalloc_sizes   for each size in param sizes, n x
 *                          kmalloc(size, GFP_KERNEL); sizes fall between
 *                          kmalloc classes, so bytes_alloc is the next class
 *   oracle_kfree_sizes     kfree() of all of those
 *   oracle_cache_alloc     n x kmem_cache_alloc() from "kmt_oracle_cache"
 *                          (object size param obj_size; it has a
 *                          constructor so SLUB never merges it)
 *   oracle_cache_free      kmem_cache_free() of those
 *   oracle_xcpu_alloc      n x kmalloc(xcpu_size) on the first online CPU
 *   oracle_xcpu_free       kfree() of those on the second online CPU
 *                          (both skipped with one CPU online)
 *   oracle_mismatch_alloc  n x kmem_cache_alloc() from kmt_oracle_cache
 *   oracle_mismatch_kfree  kfree() of those (SLUB accepts it)
 *   oracle_leak_alloc      n x kmalloc(leak_size), kept until the next run
 *                          (freed first thing, by oracle_leak_free) or
 *                          until the module is unloaded
 *   oracle_node_alloc      n x kmalloc_node(node_size, GFP_KERNEL, node) on
 *                          the first online CPU, node = the first online
 *                          node other than that CPU's (skipped with one node)
 *   oracle_node_free       kfree() of those
 *   oracle_fail_alloc      kmalloc(fail_size, GFP_KERNEL | __GFP_NOWARN),
 *                          more than the page allocator can give: NULL
 *   oracle_huge_alloc      kmalloc(huge_size, GFP_KERNEL | __GFP_NOWARN),
 *                          a size above 4 GiB (64-bit kernels): NULL, and
 *                          kmemtrace saturates its byte counts (CLAMPED)
 *   oracle_kfree_null      n x kfree(NULL) and n x kfree(ZERO_SIZE_PTR),
 *                          which kmemtrace does not record
 *   oracle_hardirq_work    an irq_work: n x kmalloc(irq_size, GFP_ATOMIC)
 *                          then kfree() of each, in hard interrupt context
 *                          (a kthread on PREEMPT_RT: see hardirq_context)
 *   oracle_softirq_timer   a timer: the same in softirq context
 *
 * The "expected" file (values in decimal unless they start with 0x):
 *
 *   runs N                   runs since load (0: nothing else follows
 *                            but the parameters)
 *   n N                      objects per function
 *   sizes A,B,...            sizes of oracle_kmalloc_sizes, in order
 *   gfp_kernel 0xX           GFP_KERNEL of this kernel
 *   gfp_nowarn 0xX           GFP_KERNEL | __GFP_NOWARN
 *   cache_name NAME          the private cache
 *   cache_object_size N      its object size
 *   xcpu_size N / node_size N / leak_size N / fail_size N
 *   leak_freed_first N       objects of the previous run's leak freed by
 *                            oracle_leak_free at the start of this run
 *   leak_outstanding N       objects oracle_leak_alloc left allocated
 *   xcpu_alloc_cpu C         CPU oracle_xcpu_alloc ran on, or "none"
 *   xcpu_free_cpu C          CPU oracle_xcpu_free ran on, or "none"
 *   node_alloc_cpu C         CPU oracle_node_alloc ran on, or "none"
 *   node_target N            node asked of kmalloc_node(), or "none"
 *   node_on_target N         objects whose memory is on node_target
 *   fail_null 1              1 if the failing allocation returned NULL
 *   huge_size N              size of oracle_huge_alloc, 0 if skipped
 *   huge_null 1              1 if it returned NULL
 *   irq_size N               kmalloc size of the interrupt-context objects
 *   gfp_atomic 0xX           GFP_ATOMIC of this kernel
 *   hardirq_context 0|1      in_hardirq() seen by oracle_hardirq_work
 *   softirq_context 0|1      in_serving_softirq() seen by
 *                            oracle_softirq_timer
 *   note TEXT                why something was skipped (may repeat)
 *   done FUNC N              calls of kmalloc/kfree/... FUNC made that
 *                            succeeded (an allocation that returned NULL
 *                            is counted in failed FUNC N instead); for
 *                            the two interrupt handlers, which both
 *                            allocate and free, FUNC/alloc and FUNC/free
 *   failed FUNC N
 * The records a run leaves in the trace are therefore: for each FUNC,
 * "done FUNC" events of its kind plus "failed FUNC" allocations with
 * ptr 0 (oracle_fail_alloc: one, with ptr 0 and bytes_req fail_size),
 * except oracle_kfree_null, whose "done" calls leave no record at all.
 * Readers should not depend on the order of the lines.
 *
 *   bulk      write 1: the paths the slab tracepoints miss, with the
 *             same conventions (noinline functions, "done"/"failed"
 *             counts), into bulk_expected:
 *   oracle_bulk_alloc        kmem_cache_alloc_bulk() of n objects from
 *                            kmt_oracle_cache
 *   oracle_bulk_free         kmem_cache_free_bulk() of the first half
 *   oracle_bulk_single_free  kmem_cache_free() of the other half, one by
 *                            one
 *   oracle_single_alloc      n x kmem_cache_alloc() from kmt_oracle_cache
 *   oracle_single_bulk_free  kmem_cache_free_bulk() of all of those
 *   oracle_kbulk_alloc       n x kmalloc(kbulk_size)
 *   oracle_kfree_bulk        kfree_bulk() of those
 *   oracle_merged_alloc      n x kmem_cache_alloc() from
 *                            "kmt_oracle_merged" (object size
 *                            merged_size, no constructor: SLUB may merge
 *                            it into another cache of that size)
 *   oracle_merged_free       kmem_cache_free() of those
 *   bulk_expected read: "bulk_runs N", "n N", "cache_name NAME",
 *             "merged_cache_name NAME", "merged_size N", "kbulk_size N",
 *             then "done FUNC N" and "failed FUNC N" as above. A failed
 *             bulk allocation counts n failed and leaves no record.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/irq_work.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/kstrtox.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <linux/timekeeping.h>
#include <linux/topology.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <trace/events/kmem.h>

#define ORACLE_MAX_N		256
#define ORACLE_MAX_SIZES	8
#define ORACLE_MAX_BATCH	64
#define ORACLE_CACHE_NAME	"kmt_oracle_cache"
#define ORACLE_MERGED_NAME	"kmt_oracle_merged"

static unsigned int n = 16;
module_param(n, uint, 0444);
MODULE_PARM_DESC(n, "Objects per pattern function, 1..256 (default 16)");

static unsigned int sizes[ORACLE_MAX_SIZES] = { 100, 200, 300, 1000, 3000 };
static unsigned int nr_sizes = 5;
module_param_array(sizes, uint, &nr_sizes, 0444);
MODULE_PARM_DESC(sizes,
		 "kmalloc sizes of oracle_kmalloc_sizes, up to 8, each 1..8192 (default 100,200,300,1000,3000)");

static unsigned int merged_size = 96;
module_param(merged_size, uint, 0444);
MODULE_PARM_DESC(merged_size,
		 "Object size of the mergeable kmt_oracle_merged cache, 8..4096 (default 96)");

static unsigned int kbulk_size = 64;
module_param(kbulk_size, uint, 0444);
MODULE_PARM_DESC(kbulk_size,
		 "kmalloc size of the objects freed with kfree_bulk(), 1..4096 (default 64)");

static unsigned int obj_size = 200;
module_param(obj_size, uint, 0444);
MODULE_PARM_DESC(obj_size, "Object size of kmt_oracle_cache, 8..8192 (default 200)");

static unsigned int xcpu_size = 150;
module_param(xcpu_size, uint, 0444);
MODULE_PARM_DESC(xcpu_size, "kmalloc size of the cross-CPU objects, 1..8192 (default 150)");

static unsigned int node_size = 400;
module_param(node_size, uint, 0444);
MODULE_PARM_DESC(node_size, "kmalloc_node size of the remote-node objects, 1..8192 (default 400)");

static unsigned int leak_size = 700;
module_param(leak_size, uint, 0444);
MODULE_PARM_DESC(leak_size, "kmalloc size of the objects left allocated, 1..8192 (default 700)");

static unsigned int irq_size = 50;
module_param(irq_size, uint, 0444);
MODULE_PARM_DESC(irq_size, "kmalloc size of the interrupt-context objects, 1..8192 (default 50)");

/* Above what a u32 byte count holds; 0 on 32-bit kernels. */
static unsigned long huge_size = BITS_PER_LONG == 64 ? (SZ_4G << 1) : 0;
module_param(huge_size, ulong, 0444);
MODULE_PARM_DESC(huge_size,
		 "kmalloc size above 4 GiB that must fail, 0 to skip (default 8 GiB on 64-bit)");

static int load_nice = MAX_NICE;
module_param(load_nice, int, 0444);
MODULE_PARM_DESC(load_nice,
		 "Nice value of the load kthreads, -20..19 (default 19: they take every idle cycle but leave the shell driving a test responsive)");

static unsigned long fail_size = SZ_64M;
module_param(fail_size, ulong, 0444);
MODULE_PARM_DESC(fail_size,
		 "kmalloc size that must fail, above the page allocator's largest block (default 64 MiB)");

/* The pattern's objects live here, not in allocations of their own. */
static void *oracle_sized[ORACLE_MAX_SIZES][ORACLE_MAX_N];
static void *oracle_cached[ORACLE_MAX_N];
static void *oracle_xcpu[ORACLE_MAX_N];
static void *oracle_mismatched[ORACLE_MAX_N];
static void *oracle_leaked[ORACLE_MAX_N];
static void *oracle_remote[ORACLE_MAX_N];
static void *oracle_irq_objs[ORACLE_MAX_N];

static struct kmem_cache *oracle_cache;
static struct dentry *oracle_dir;

/* Serializes runs, load changes and the expected text. */
static DEFINE_MUTEX(oracle_lock);
/* The text of an "expected" file; oracle_say() appends to oracle_out. */
struct oracle_text {
	char buf[4096];
	size_t len;
};

static struct oracle_text oracle_expected, oracle_bulk_expected;
static struct oracle_text *oracle_out = &oracle_expected;
static unsigned int oracle_runs;

/* Results of one run, turned into the expected text. */
struct oracle_result {
	unsigned int done;
	unsigned int failed;
};

enum oracle_func {
	OF_KMALLOC_SIZES,
	OF_KFREE_SIZES,
	OF_CACHE_ALLOC,
	OF_CACHE_FREE,
	OF_XCPU_ALLOC,
	OF_XCPU_FREE,
	OF_MISMATCH_ALLOC,
	OF_MISMATCH_KFREE,
	OF_LEAK_FREE,
	OF_LEAK_ALLOC,
	OF_NODE_ALLOC,
	OF_NODE_FREE,
	OF_FAIL_ALLOC,
	OF_HUGE_ALLOC,
	OF_KFREE_NULL,
	OF_HARDIRQ_ALLOC,
	OF_HARDIRQ_FREE,
	OF_SOFTIRQ_ALLOC,
	OF_SOFTIRQ_FREE,
	OF_COUNT
};

static const char * const oracle_func_names[OF_COUNT] = {
	[OF_KMALLOC_SIZES] = "oracle_kmalloc_sizes",
	[OF_KFREE_SIZES] = "oracle_kfree_sizes",
	[OF_CACHE_ALLOC] = "oracle_cache_alloc",
	[OF_CACHE_FREE] = "oracle_cache_free",
	[OF_XCPU_ALLOC] = "oracle_xcpu_alloc",
	[OF_XCPU_FREE] = "oracle_xcpu_free",
	[OF_MISMATCH_ALLOC] = "oracle_mismatch_alloc",
	[OF_MISMATCH_KFREE] = "oracle_mismatch_kfree",
	[OF_LEAK_FREE] = "oracle_leak_free",
	[OF_LEAK_ALLOC] = "oracle_leak_alloc",
	[OF_NODE_ALLOC] = "oracle_node_alloc",
	[OF_NODE_FREE] = "oracle_node_free",
	[OF_FAIL_ALLOC] = "oracle_fail_alloc",
	[OF_HUGE_ALLOC] = "oracle_huge_alloc",
	[OF_KFREE_NULL] = "oracle_kfree_null",
	/* Both kinds of event of one function: "alloc" and "free" counts. */
	[OF_HARDIRQ_ALLOC] = "oracle_hardirq_work/alloc",
	[OF_HARDIRQ_FREE] = "oracle_hardirq_work/free",
	[OF_SOFTIRQ_ALLOC] = "oracle_softirq_timer/alloc",
	[OF_SOFTIRQ_FREE] = "oracle_softirq_timer/free",
};

static struct oracle_result oracle_res[OF_COUNT];
static int oracle_xcpu_alloc_cpu = -1;
static int oracle_xcpu_free_cpu = -1;
static int oracle_node_cpu = -1;
static int oracle_node_target = NUMA_NO_NODE;
static unsigned int oracle_node_on_target;
static unsigned int oracle_leak_count;
static bool oracle_fail_null;
static bool oracle_huge_null;
static bool oracle_hardirq_seen;
static bool oracle_softirq_seen;

/*
 * Each pattern function returns what it did, and its caller uses the
 * value: together with the work after every call inside the loops this
 * keeps the compiler from turning the last call into a jump, which
 * would move the call site out of the function.
 */
static noinline __noclone unsigned int oracle_kmalloc_sizes(void)
{
	struct oracle_result *r = &oracle_res[OF_KMALLOC_SIZES];
	unsigned int i, j;

	for (i = 0; i < nr_sizes; i++) {
		for (j = 0; j < n; j++) {
			oracle_sized[i][j] = kmalloc(sizes[i], GFP_KERNEL);
			if (oracle_sized[i][j])
				r->done++;
			else
				r->failed++;
		}
	}
	return r->done;
}

static noinline __noclone unsigned int oracle_kfree_sizes(void)
{
	struct oracle_result *r = &oracle_res[OF_KFREE_SIZES];
	unsigned int i, j;

	for (i = 0; i < nr_sizes; i++) {
		for (j = 0; j < n; j++) {
			if (!oracle_sized[i][j])
				continue;
			kfree(oracle_sized[i][j]);
			oracle_sized[i][j] = NULL;
			r->done++;
		}
	}
	return r->done;
}

static noinline __noclone unsigned int oracle_cache_alloc(void)
{
	struct oracle_result *r = &oracle_res[OF_CACHE_ALLOC];
	unsigned int j;

	for (j = 0; j < n; j++) {
		oracle_cached[j] = kmem_cache_alloc(oracle_cache, GFP_KERNEL);
		if (oracle_cached[j])
			r->done++;
		else
			r->failed++;
	}
	return r->done;
}

static noinline __noclone unsigned int oracle_cache_free(void)
{
	struct oracle_result *r = &oracle_res[OF_CACHE_FREE];
	unsigned int j;

	for (j = 0; j < n; j++) {
		if (!oracle_cached[j])
			continue;
		kmem_cache_free(oracle_cache, oracle_cached[j]);
		oracle_cached[j] = NULL;
		r->done++;
	}
	return r->done;
}

/* Runs in a kworker bound to one CPU (work_on_cpu()). */
static noinline __noclone long oracle_xcpu_alloc(void *unused)
{
	struct oracle_result *r = &oracle_res[OF_XCPU_ALLOC];
	unsigned int j;

	oracle_xcpu_alloc_cpu = raw_smp_processor_id();
	for (j = 0; j < n; j++) {
		oracle_xcpu[j] = kmalloc(xcpu_size, GFP_KERNEL);
		if (oracle_xcpu[j])
			r->done++;
		else
			r->failed++;
	}
	return r->done;
}

static noinline __noclone long oracle_xcpu_free(void *unused)
{
	struct oracle_result *r = &oracle_res[OF_XCPU_FREE];
	unsigned int j;

	oracle_xcpu_free_cpu = raw_smp_processor_id();
	for (j = 0; j < n; j++) {
		if (!oracle_xcpu[j])
			continue;
		kfree(oracle_xcpu[j]);
		oracle_xcpu[j] = NULL;
		r->done++;
	}
	return r->done;
}

static noinline __noclone unsigned int oracle_mismatch_alloc(void)
{
	struct oracle_result *r = &oracle_res[OF_MISMATCH_ALLOC];
	unsigned int j;

	for (j = 0; j < n; j++) {
		oracle_mismatched[j] = kmem_cache_alloc(oracle_cache,
							GFP_KERNEL);
		if (oracle_mismatched[j])
			r->done++;
		else
			r->failed++;
	}
	return r->done;
}

/* The classic bug on purpose: kfree() of kmem_cache_alloc() objects. */
static noinline __noclone unsigned int oracle_mismatch_kfree(void)
{
	struct oracle_result *r = &oracle_res[OF_MISMATCH_KFREE];
	unsigned int j;

	for (j = 0; j < n; j++) {
		if (!oracle_mismatched[j])
			continue;
		kfree(oracle_mismatched[j]);
		oracle_mismatched[j] = NULL;
		r->done++;
	}
	return r->done;
}

static noinline __noclone unsigned int oracle_leak_free(void)
{
	struct oracle_result *r = &oracle_res[OF_LEAK_FREE];
	unsigned int j;

	for (j = 0; j < ORACLE_MAX_N; j++) {
		if (!oracle_leaked[j])
			continue;
		kfree(oracle_leaked[j]);
		oracle_leaked[j] = NULL;
		r->done++;
	}
	oracle_leak_count = 0;
	return r->done;
}

static noinline __noclone unsigned int oracle_leak_alloc(void)
{
	struct oracle_result *r = &oracle_res[OF_LEAK_ALLOC];
	unsigned int j;

	for (j = 0; j < n; j++) {
		oracle_leaked[j] = kmalloc(leak_size, GFP_KERNEL);
		if (oracle_leaked[j])
			r->done++;
		else
			r->failed++;
	}
	oracle_leak_count = r->done;
	return r->done;
}

/* Runs in a kworker bound to one CPU, so "the other node" is stable. */
static noinline __noclone long oracle_node_alloc(void *unused)
{
	struct oracle_result *r = &oracle_res[OF_NODE_ALLOC];
	unsigned int j;

	oracle_node_cpu = raw_smp_processor_id();
	for (j = 0; j < n; j++) {
		oracle_remote[j] = kmalloc_node(node_size, GFP_KERNEL,
						oracle_node_target);
		if (!oracle_remote[j]) {
			r->failed++;
			continue;
		}
		r->done++;
		if (page_to_nid(virt_to_page(oracle_remote[j])) ==
		    oracle_node_target)
			oracle_node_on_target++;
	}
	return r->done;
}

static noinline __noclone unsigned int oracle_node_free(void)
{
	struct oracle_result *r = &oracle_res[OF_NODE_FREE];
	unsigned int j;

	for (j = 0; j < n; j++) {
		if (!oracle_remote[j])
			continue;
		kfree(oracle_remote[j]);
		oracle_remote[j] = NULL;
		r->done++;
	}
	return r->done;
}

static noinline __noclone unsigned int oracle_fail_alloc(void)
{
	struct oracle_result *r = &oracle_res[OF_FAIL_ALLOC];
	void *p;

	p = kmalloc(fail_size, GFP_KERNEL | __GFP_NOWARN);
	oracle_fail_null = !p;
	if (p) {
		r->done++;
		/* Should not happen; do not keep 64 MiB. */
		kfree(p);
	} else {
		r->failed++;
	}
	return r->failed;
}

static noinline __noclone unsigned int oracle_huge_alloc(void)
{
	struct oracle_result *r = &oracle_res[OF_HUGE_ALLOC];
	void *p;

	p = kmalloc(huge_size, GFP_KERNEL | __GFP_NOWARN);
	oracle_huge_null = !p;
	if (p) {
		r->done++;
		kfree(p);
	} else {
		r->failed++;
	}
	return r->failed;
}

/* kfree() of nothing: the tracepoint fires, kmemtrace must not record. */
static noinline __noclone unsigned int oracle_kfree_null(void)
{
	struct oracle_result *r = &oracle_res[OF_KFREE_NULL];
	unsigned int j;

	for (j = 0; j < n; j++) {
		kfree(NULL);
		r->done++;
		kfree(ZERO_SIZE_PTR);
		r->done++;
	}
	return r->done;
}

/*
 * Allocates and frees from interrupt context. Inlined into each handler:
 * the call site is the function kmalloc() returns into.
 */
static __always_inline void oracle_irq_pattern(enum oracle_func alloc,
					       enum oracle_func free)
{
	unsigned int j;

	for (j = 0; j < n; j++) {
		oracle_irq_objs[j] = kmalloc(irq_size, GFP_ATOMIC);
		if (oracle_irq_objs[j])
			oracle_res[alloc].done++;
		else
			oracle_res[alloc].failed++;
	}
	for (j = 0; j < n; j++) {
		if (!oracle_irq_objs[j])
			continue;
		kfree(oracle_irq_objs[j]);
		oracle_irq_objs[j] = NULL;
		oracle_res[free].done++;
	}
}

static noinline __noclone void oracle_hardirq_work(struct irq_work *work)
{
	oracle_hardirq_seen = in_hardirq();
	oracle_irq_pattern(OF_HARDIRQ_ALLOC, OF_HARDIRQ_FREE);
	oracle_hardirq_seen &= !!in_hardirq();
}

static DECLARE_COMPLETION(oracle_timer_done);

static noinline __noclone void oracle_softirq_timer(struct timer_list *t)
{
	oracle_softirq_seen = in_serving_softirq();
	oracle_irq_pattern(OF_SOFTIRQ_ALLOC, OF_SOFTIRQ_FREE);
	oracle_softirq_seen &= !!in_serving_softirq();
	complete(&oracle_timer_done);
}

static DEFINE_IRQ_WORK(oracle_irq_work, oracle_hardirq_work);
static struct timer_list oracle_timer;

static void oracle_interrupts(void)
{
	irq_work_queue(&oracle_irq_work);
	irq_work_sync(&oracle_irq_work);

	reinit_completion(&oracle_timer_done);
	timer_setup(&oracle_timer, oracle_softirq_timer, 0);
	mod_timer(&oracle_timer, jiffies + 1);
	wait_for_completion(&oracle_timer_done);
	timer_delete_sync(&oracle_timer);
}

/* Appends to the expected text; output past the buffer is cut. */
static __printf(1, 2) void oracle_say(const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	oracle_out->len += vscnprintf(oracle_out->buf + oracle_out->len,
				      sizeof(oracle_out->buf) - oracle_out->len,
				      fmt, args);
	va_end(args);
}

static void oracle_say_cpu(const char *key, int cpu)
{
	if (cpu < 0)
		oracle_say("%s none\n", key);
	else
		oracle_say("%s %d\n", key, cpu);
}

static void oracle_describe(unsigned int leak_freed)
{
	unsigned int i;

	oracle_out = &oracle_expected;
	oracle_out->len = 0;
	oracle_say("runs %u\n", oracle_runs);
	oracle_say("n %u\n", n);
	oracle_say("sizes ");
	for (i = 0; i < nr_sizes; i++)
		oracle_say("%s%u", i ? "," : "", sizes[i]);
	oracle_say("\n");
	oracle_say("gfp_kernel %#x\n", (__force unsigned int)GFP_KERNEL);
	oracle_say("gfp_nowarn %#x\n",
		   (__force unsigned int)(GFP_KERNEL | __GFP_NOWARN));
	oracle_say("cache_name %s\n", ORACLE_CACHE_NAME);
	oracle_say("cache_object_size %u\n", obj_size);
	oracle_say("xcpu_size %u\n", xcpu_size);
	oracle_say("node_size %u\n", node_size);
	oracle_say("leak_size %u\n", leak_size);
	oracle_say("fail_size %lu\n", fail_size);
	if (!oracle_runs)
		return;

	oracle_say("leak_freed_first %u\n", leak_freed);
	oracle_say("leak_outstanding %u\n", oracle_leak_count);
	oracle_say_cpu("xcpu_alloc_cpu", oracle_xcpu_alloc_cpu);
	oracle_say_cpu("xcpu_free_cpu", oracle_xcpu_free_cpu);
	if (oracle_xcpu_alloc_cpu < 0)
		oracle_say("note xcpu skipped: fewer than 2 CPUs online\n");
	oracle_say_cpu("node_alloc_cpu", oracle_node_cpu);
	oracle_say_cpu("node_target", oracle_node_target);
	if (oracle_node_target == NUMA_NO_NODE)
		oracle_say("note node skipped: fewer than 2 nodes online\n");
	oracle_say("node_on_target %u\n", oracle_node_on_target);
	oracle_say("fail_null %d\n", oracle_fail_null);
	oracle_say("huge_size %lu\n", huge_size);
	oracle_say("huge_null %d\n", oracle_huge_null);
	oracle_say("irq_size %u\n", irq_size);
	oracle_say("gfp_atomic %#x\n", (__force unsigned int)GFP_ATOMIC);
	oracle_say("hardirq_context %d\n", oracle_hardirq_seen);
	oracle_say("softirq_context %d\n", oracle_softirq_seen);
	for (i = 0; i < OF_COUNT; i++) {
		oracle_say("done %s %u\n", oracle_func_names[i],
			   oracle_res[i].done);
		oracle_say("failed %s %u\n", oracle_func_names[i],
			   oracle_res[i].failed);
	}
}

/* The first online node that is not @cpu's, or NUMA_NO_NODE. */
static int oracle_other_node(int cpu)
{
	int nid;

	for_each_online_node(nid) {
		if (nid != cpu_to_node(cpu))
			return nid;
	}
	return NUMA_NO_NODE;
}

static void oracle_run(void)
{
	unsigned int leak_freed;
	int cpu_a, cpu_b;

	memset(oracle_res, 0, sizeof(oracle_res));
	oracle_xcpu_alloc_cpu = -1;
	oracle_xcpu_free_cpu = -1;
	oracle_node_cpu = -1;
	oracle_node_target = NUMA_NO_NODE;
	oracle_node_on_target = 0;

	leak_freed = oracle_leak_free();
	oracle_kmalloc_sizes();
	oracle_kfree_sizes();
	oracle_cache_alloc();
	oracle_cache_free();

	/* CPUs stay online while their work runs. */
	cpus_read_lock();
	cpu_a = cpumask_first(cpu_online_mask);
	cpu_b = cpumask_next(cpu_a, cpu_online_mask);
	if (cpu_b < nr_cpu_ids) {
		work_on_cpu(cpu_a, oracle_xcpu_alloc, NULL);
		work_on_cpu(cpu_b, oracle_xcpu_free, NULL);
	}
	oracle_node_target = oracle_other_node(cpu_a);
	if (oracle_node_target != NUMA_NO_NODE) {
		work_on_cpu(cpu_a, oracle_node_alloc, NULL);
		oracle_node_free();
	}
	cpus_read_unlock();

	oracle_mismatch_alloc();
	oracle_mismatch_kfree();
	oracle_leak_alloc();
	oracle_fail_alloc();
	if (huge_size)
		oracle_huge_alloc();
	oracle_kfree_null();
	oracle_interrupts();

	oracle_runs++;
	oracle_describe(leak_freed);
}

/* The bulk pattern: what the slab tracepoints miss. */
enum oracle_bulk_func {
	OB_BULK_ALLOC,
	OB_BULK_FREE,
	OB_BULK_SINGLE_FREE,
	OB_SINGLE_ALLOC,
	OB_SINGLE_BULK_FREE,
	OB_KBULK_ALLOC,
	OB_KFREE_BULK,
	OB_MERGED_ALLOC,
	OB_MERGED_FREE,
	OB_COUNT
};

static const char * const oracle_bulk_names[OB_COUNT] = {
	[OB_BULK_ALLOC] = "oracle_bulk_alloc",
	[OB_BULK_FREE] = "oracle_bulk_free",
	[OB_BULK_SINGLE_FREE] = "oracle_bulk_single_free",
	[OB_SINGLE_ALLOC] = "oracle_single_alloc",
	[OB_SINGLE_BULK_FREE] = "oracle_single_bulk_free",
	[OB_KBULK_ALLOC] = "oracle_kbulk_alloc",
	[OB_KFREE_BULK] = "oracle_kfree_bulk",
	[OB_MERGED_ALLOC] = "oracle_merged_alloc",
	[OB_MERGED_FREE] = "oracle_merged_free",
};

static struct oracle_result oracle_bulk_res[OB_COUNT];
static struct kmem_cache *oracle_merged;
static void *oracle_bulk_objs[ORACLE_MAX_N];
static void *oracle_singles[ORACLE_MAX_N];
static void *oracle_kbulk[ORACLE_MAX_N];
static void *oracle_merged_objs[ORACLE_MAX_N];
static unsigned int oracle_bulk_n;	/* objects oracle_bulk_alloc got */
static unsigned int oracle_singles_n;
static unsigned int oracle_kbulk_n;
static unsigned int oracle_bulk_runs;

static noinline __noclone unsigned int oracle_bulk_alloc(void)
{
	struct oracle_result *r = &oracle_bulk_res[OB_BULK_ALLOC];

	oracle_bulk_n = kmem_cache_alloc_bulk(oracle_cache, GFP_KERNEL, n,
					      oracle_bulk_objs) ? n : 0;
	r->done += oracle_bulk_n;
	r->failed += n - oracle_bulk_n;
	return r->done;
}

static noinline __noclone unsigned int oracle_bulk_free(void)
{
	struct oracle_result *r = &oracle_bulk_res[OB_BULK_FREE];
	unsigned int half = oracle_bulk_n / 2;

	if (half) {
		kmem_cache_free_bulk(oracle_cache, half, oracle_bulk_objs);
		r->done += half;
	}
	return r->done;
}

static noinline __noclone unsigned int oracle_bulk_single_free(void)
{
	struct oracle_result *r = &oracle_bulk_res[OB_BULK_SINGLE_FREE];
	unsigned int j;

	for (j = oracle_bulk_n / 2; j < oracle_bulk_n; j++) {
		kmem_cache_free(oracle_cache, oracle_bulk_objs[j]);
		r->done++;
	}
	return r->done;
}

static noinline __noclone unsigned int oracle_single_alloc(void)
{
	struct oracle_result *r = &oracle_bulk_res[OB_SINGLE_ALLOC];
	unsigned int j;

	oracle_singles_n = 0;
	for (j = 0; j < n; j++) {
		void *obj = kmem_cache_alloc(oracle_cache, GFP_KERNEL);

		if (!obj) {
			r->failed++;
			continue;
		}
		oracle_singles[oracle_singles_n++] = obj;
		r->done++;
	}
	return r->done;
}

static noinline __noclone unsigned int oracle_single_bulk_free(void)
{
	struct oracle_result *r = &oracle_bulk_res[OB_SINGLE_BULK_FREE];

	if (oracle_singles_n) {
		kmem_cache_free_bulk(oracle_cache, oracle_singles_n,
				     oracle_singles);
		r->done += oracle_singles_n;
	}
	return r->done;
}

static noinline __noclone unsigned int oracle_kbulk_alloc(void)
{
	struct oracle_result *r = &oracle_bulk_res[OB_KBULK_ALLOC];
	unsigned int j;

	oracle_kbulk_n = 0;
	for (j = 0; j < n; j++) {
		void *obj = kmalloc(kbulk_size, GFP_KERNEL);

		if (!obj) {
			r->failed++;
			continue;
		}
		oracle_kbulk[oracle_kbulk_n++] = obj;
		r->done++;
	}
	return r->done;
}

static noinline __noclone unsigned int oracle_kfree_bulk(void)
{
	struct oracle_result *r = &oracle_bulk_res[OB_KFREE_BULK];

	if (oracle_kbulk_n) {
		kfree_bulk(oracle_kbulk_n, oracle_kbulk);
		r->done += oracle_kbulk_n;
	}
	return r->done;
}

static noinline __noclone unsigned int oracle_merged_alloc(void)
{
	struct oracle_result *r = &oracle_bulk_res[OB_MERGED_ALLOC];
	unsigned int j;

	for (j = 0; j < n; j++) {
		oracle_merged_objs[j] = kmem_cache_alloc(oracle_merged,
							 GFP_KERNEL);
		if (oracle_merged_objs[j])
			r->done++;
		else
			r->failed++;
	}
	return r->done;
}

static noinline __noclone unsigned int oracle_merged_free(void)
{
	struct oracle_result *r = &oracle_bulk_res[OB_MERGED_FREE];
	unsigned int j;

	for (j = 0; j < n; j++) {
		if (!oracle_merged_objs[j])
			continue;
		kmem_cache_free(oracle_merged, oracle_merged_objs[j]);
		oracle_merged_objs[j] = NULL;
		r->done++;
	}
	return r->done;
}

static void oracle_bulk_run(void)
{
	unsigned int i;

	memset(oracle_bulk_res, 0, sizeof(oracle_bulk_res));
	oracle_bulk_alloc();
	oracle_bulk_free();
	oracle_bulk_single_free();
	oracle_single_alloc();
	oracle_single_bulk_free();
	oracle_kbulk_alloc();
	oracle_kfree_bulk();
	oracle_merged_alloc();
	oracle_merged_free();
	oracle_bulk_runs++;

	oracle_out = &oracle_bulk_expected;
	oracle_out->len = 0;
	oracle_say("bulk_runs %u\n", oracle_bulk_runs);
	oracle_say("n %u\n", n);
	oracle_say("cache_name %s\n", ORACLE_CACHE_NAME);
	oracle_say("merged_cache_name %s\n", ORACLE_MERGED_NAME);
	oracle_say("merged_size %u\n", merged_size);
	oracle_say("kbulk_size %u\n", kbulk_size);
	for (i = 0; i < OB_COUNT; i++) {
		oracle_say("done %s %u\n", oracle_bulk_names[i],
			   oracle_bulk_res[i].done);
		oracle_say("failed %s %u\n", oracle_bulk_names[i],
			   oracle_bulk_res[i].failed);
	}
}

/*
 * Every command file (run, bulk, stacks, hold, pages): write 1 to run its
 * pattern, the inode's private data.
 */
static ssize_t oracle_cmd_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	void (*run)(void) = file_inode(file)->i_private;
	unsigned int v;
	int ret;

	ret = kstrtouint_from_user(ubuf, count, 0, &v);
	if (ret)
		return ret;
	if (v != 1)
		return -EINVAL;
	mutex_lock(&oracle_lock);
	run();
	mutex_unlock(&oracle_lock);
	return count;
}

static const struct file_operations oracle_cmd_fops = {
	.owner = THIS_MODULE,
	.write = oracle_cmd_write,
	.llseek = noop_llseek,
};

/* Either expected file: its oracle_text is the inode's private data. */
static ssize_t oracle_expected_read(struct file *file, char __user *ubuf,
				    size_t count, loff_t *ppos)
{
	const struct oracle_text *t = file_inode(file)->i_private;
	ssize_t ret;

	mutex_lock(&oracle_lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, t->buf, t->len);
	mutex_unlock(&oracle_lock);
	return ret;
}

static const struct file_operations oracle_expected_fops = {
	.owner = THIS_MODULE,
	.read = oracle_expected_read,
	.llseek = default_llseek,
};

/* ==== stacks: known call chains for kmemtrace's kernel stacks ==== */
/*
 *   stacks    write 1: oracle_stacks_run(), which calls
 *             oracle_chain_a -> oracle_chain_b -> oracle_chain_c once per
 *             operation below; oracle_chain_c performs it n times:
 *               chain_kmalloc      kmalloc(stack_size, GFP_KERNEL)
 *               chain_cache_alloc  kmem_cache_alloc() from kmt_oracle_cache
 *               chain_kfree        kfree() of the chain_kmalloc objects
 *               chain_cache_free   kmem_cache_free() of the others
 *               chain_large_alloc  kmalloc(stack_large_size): above the
 *                                  largest kmalloc cache, so also one
 *                                  page allocation each
 *               chain_large_free   kfree() of those (one page free each)
 *             then oracle_recurse(k) for k = 1..stack_recurse: k + 1
 *             nested frames of oracle_recurse (k down to 0), then
 *             oracle_recurse_leaf's kmalloc(stack_size) and kfree(): a
 *             distinct stack per k.
 *   stacks_expected read, one "key value" per line:
 *     stacks_runs N, n N, stack_size N, stack_large_size N,
 *     cache_name NAME, recurse M,
 *     chain F1 F2 F3 F4     the functions of the frames from the call
 *                           site on, innermost first
 *     recurse_leaf F        the function of the recursion's call sites
 *     recurse_fn F          the function each nesting level adds a frame of
 *     done OP N / failed OP N   for each chain operation, and for
 *                           recurse_alloc and recurse_free
 */
#define ORACLE_RECURSE_MAX	48

static unsigned int stack_size = 120;
module_param(stack_size, uint, 0444);
MODULE_PARM_DESC(stack_size, "kmalloc size of the stacks pattern, 1..4096 (default 120)");

static unsigned int stack_large_size = 5 * PAGE_SIZE;
module_param(stack_large_size, uint, 0444);
MODULE_PARM_DESC(stack_large_size,
		 "kmalloc size of the stacks pattern's page-backed objects, above the largest kmalloc cache (default 5 pages)");

static unsigned int stack_recurse = 24;
module_param(stack_recurse, uint, 0444);
MODULE_PARM_DESC(stack_recurse,
		 "Recursion depths 1..N of the stacks pattern, each a distinct stack, 0..48 (default 24)");

enum oracle_stack_op {
	OS_KMALLOC,
	OS_CACHE_ALLOC,
	OS_KFREE,
	OS_CACHE_FREE,
	OS_LARGE_ALLOC,
	OS_LARGE_FREE,
	OS_RECURSE_ALLOC,
	OS_RECURSE_FREE,
	OS_COUNT
};

static const char * const oracle_stack_names[OS_COUNT] = {
	[OS_KMALLOC] = "chain_kmalloc",
	[OS_CACHE_ALLOC] = "chain_cache_alloc",
	[OS_KFREE] = "chain_kfree",
	[OS_CACHE_FREE] = "chain_cache_free",
	[OS_LARGE_ALLOC] = "chain_large_alloc",
	[OS_LARGE_FREE] = "chain_large_free",
	[OS_RECURSE_ALLOC] = "recurse_alloc",
	[OS_RECURSE_FREE] = "recurse_free",
};

static bool oracle_size_ok(const char *name, unsigned long v,
			   unsigned long min, unsigned long max);

static struct oracle_result oracle_stack_res[OS_COUNT];
static struct oracle_text oracle_stacks_expected;
static unsigned int oracle_stacks_runs;
static void *oracle_chain_small[ORACLE_MAX_N];
static void *oracle_chain_cached[ORACLE_MAX_N];
static void *oracle_chain_large[ORACLE_MAX_N];

static void oracle_chain_keep(enum oracle_stack_op op, void **slot, void *obj)
{
	*slot = obj;
	if (obj)
		oracle_stack_res[op].done++;
	else
		oracle_stack_res[op].failed++;
}

static void oracle_chain_drop(enum oracle_stack_op op, void **slot)
{
	*slot = NULL;
	oracle_stack_res[op].done++;
}

/*
 * The end of the chain: every allocation and free of the chain part is
 * called from here. Like the pattern functions above, it does work after
 * each call, so no call becomes a jump and no frame goes missing.
 */
static noinline __noclone unsigned int oracle_chain_c(enum oracle_stack_op op)
{
	unsigned int j;

	for (j = 0; j < n; j++) {
		switch (op) {
		case OS_KMALLOC:
			oracle_chain_keep(op, &oracle_chain_small[j],
					  kmalloc(stack_size, GFP_KERNEL));
			break;
		case OS_CACHE_ALLOC:
			oracle_chain_keep(op, &oracle_chain_cached[j],
					  kmem_cache_alloc(oracle_cache,
							   GFP_KERNEL));
			break;
		case OS_LARGE_ALLOC:
			oracle_chain_keep(op, &oracle_chain_large[j],
					  kmalloc(stack_large_size,
						  GFP_KERNEL | __GFP_NOWARN));
			break;
		case OS_KFREE:
			if (!oracle_chain_small[j])
				break;
			kfree(oracle_chain_small[j]);
			oracle_chain_drop(op, &oracle_chain_small[j]);
			break;
		case OS_CACHE_FREE:
			if (!oracle_chain_cached[j])
				break;
			kmem_cache_free(oracle_cache, oracle_chain_cached[j]);
			oracle_chain_drop(op, &oracle_chain_cached[j]);
			break;
		case OS_LARGE_FREE:
			if (!oracle_chain_large[j])
				break;
			kfree(oracle_chain_large[j]);
			oracle_chain_drop(op, &oracle_chain_large[j]);
			break;
		default:
			break;
		}
	}
	barrier();
	return oracle_stack_res[op].done;
}

static noinline __noclone unsigned int oracle_chain_b(enum oracle_stack_op op)
{
	unsigned int done = oracle_chain_c(op);

	barrier();
	return done + 1;
}

static noinline __noclone unsigned int oracle_chain_a(enum oracle_stack_op op)
{
	unsigned int done = oracle_chain_b(op);

	barrier();
	return done + 1;
}

static noinline __noclone unsigned int oracle_recurse_leaf(void)
{
	void *p = kmalloc(stack_size, GFP_KERNEL);

	if (!p) {
		oracle_stack_res[OS_RECURSE_ALLOC].failed++;
		return 0;
	}
	oracle_stack_res[OS_RECURSE_ALLOC].done++;
	kfree(p);
	oracle_stack_res[OS_RECURSE_FREE].done++;
	return 1;
}

/* One more frame per level; the barrier keeps it from becoming a loop. */
static noinline __noclone unsigned int oracle_recurse(unsigned int k)
{
	unsigned int done;

	done = k ? oracle_recurse(k - 1) : oracle_recurse_leaf();
	barrier();
	return done + 1;
}

static noinline __noclone void oracle_stacks_run(void)
{
	static const enum oracle_stack_op ops[] = {
		OS_KMALLOC, OS_CACHE_ALLOC, OS_KFREE, OS_CACHE_FREE,
		OS_LARGE_ALLOC, OS_LARGE_FREE,
	};
	unsigned int i, k;

	memset(oracle_stack_res, 0, sizeof(oracle_stack_res));
	for (i = 0; i < ARRAY_SIZE(ops); i++)
		oracle_chain_a(ops[i]);
	for (k = 1; k <= stack_recurse; k++)
		oracle_recurse(k);
	oracle_stacks_runs++;

	oracle_out = &oracle_stacks_expected;
	oracle_out->len = 0;
	oracle_say("stacks_runs %u\n", oracle_stacks_runs);
	oracle_say("n %u\n", n);
	oracle_say("stack_size %u\n", stack_size);
	oracle_say("stack_large_size %u\n", stack_large_size);
	oracle_say("cache_name %s\n", ORACLE_CACHE_NAME);
	oracle_say("recurse %u\n", stack_recurse);
	oracle_say("chain oracle_chain_c oracle_chain_b oracle_chain_a %s\n",
		   __func__);
	oracle_say("recurse_leaf oracle_recurse_leaf\n");
	oracle_say("recurse_fn oracle_recurse\n");
	for (i = 0; i < OS_COUNT; i++) {
		oracle_say("done %s %u\n", oracle_stack_names[i],
			   oracle_stack_res[i].done);
		oracle_say("failed %s %u\n", oracle_stack_names[i],
			   oracle_stack_res[i].failed);
	}
}

static bool oracle_stacks_params_ok(void)
{
	return oracle_size_ok("stack_size", stack_size, 1, SZ_4K) &&
	       oracle_size_ok("stack_large_size", stack_large_size,
			      KMALLOC_MAX_CACHE_SIZE + 1, SZ_1M) &&
	       oracle_size_ok("stack_recurse", stack_recurse, 0,
			      ORACLE_RECURSE_MAX);
}

/* ==== nostack: a call site that is on no stack ==== */
/*
 *   nostack   write 1: oracle_nostack_run(): nostack_n rounds of
 *             oracle_nostack_home() then oracle_nostack_away(); each makes
 *             one kmalloc(stack_size) through oracle_nostack_alloc(), which
 *             names the call site itself (kmalloc_track_caller() with the
 *             caller given), then kfree()s it:
 *               home  names its own call of oracle_nostack_alloc(), the
 *                     return address on the stack: a stack from it on
 *               away  names home's call site too, which is then on no
 *                     stack: kmemtrace finds no frame equal to it, so the
 *                     event has KMT_F_NO_STACK (no_stack_unwind)
 *             then, in each round, oracle_nostack_reach(1) and
 *             oracle_nostack_reach(ORACLE_FAR_LEVELS): reach's call of
 *             oracle_nostack_down() recurses that many levels, and the last
 *             one allocates the same way, naming reach's call site, which
 *             is on the stack, that many frames out, then kfree()s it:
 *               near  one level: the event has a stack from reach's call
 *                     site on (the frames inside it are cut)
 *               far   more frames out than kmemtrace takes at its deepest
 *                     (stack_depth 64 and 16 to cut its own): no frame
 *                     equal to it is taken, so KMT_F_NO_STACK again
 *             The rounds alternate, so with the walk cache on, home's walk
 *             is kept under the very call site each away event names, and
 *             away's stack differs from it only from oracle_nostack_alloc's
 *             return address on: the cache must not give it home's stack.
 *             Near's walk is kept under the call site far names, likewise.
 *   nostack_expected read, one "key value" per line:
 *     nostack_runs N, rounds N, size N,
 *     site_fn F     the function of the call site home and away name
 *     away_fn F     the function of away's own call of the allocator, and
 *                   of its kfree()
 *     run_fn F      the function that calls home, away and reach
 *     reach_fn F    the function of the call site near and far name
 *     down_fn F     the function each level adds a frame of, whose last
 *                   level kfree()s
 *     far_levels N  far's levels
 *     done OP N / failed OP N   for home_alloc, home_free, away_alloc,
 *                   away_free, near_alloc, near_free, far_alloc, far_free
 */

/*
 * kmalloc() naming its call site. 6.10 renamed the function, and its
 * callers wrap it for allocation profiling (alloc_hooks()).
 */
#ifdef kmalloc_node_track_caller_noprof
#define oracle_kmalloc_caller(size, flags, caller)			\
	alloc_hooks(kmalloc_node_track_caller_noprof(size, flags,	\
						     NUMA_NO_NODE, caller))
#else
#define oracle_kmalloc_caller(size, flags, caller)			\
	__kmalloc_node_track_caller(size, flags, NUMA_NO_NODE, caller)
#endif

static unsigned int nostack_n = 64;
module_param(nostack_n, uint, 0444);
MODULE_PARM_DESC(nostack_n, "Rounds of the nostack pattern, 1..4096 (default 64)");

enum oracle_nostack_op {
	ON_HOME_ALLOC,
	ON_HOME_FREE,
	ON_AWAY_ALLOC,
	ON_AWAY_FREE,
	ON_NEAR_ALLOC,
	ON_NEAR_FREE,
	ON_FAR_ALLOC,
	ON_FAR_FREE,
	ON_COUNT
};

/* More frames than kmemtrace walks: KMT_STACK_MAX_DEPTH and its slack. */
#define ORACLE_FAR_LEVELS	96

static const char * const oracle_nostack_names[ON_COUNT] = {
	[ON_HOME_ALLOC] = "home_alloc",
	[ON_HOME_FREE] = "home_free",
	[ON_AWAY_ALLOC] = "away_alloc",
	[ON_AWAY_FREE] = "away_free",
	[ON_NEAR_ALLOC] = "near_alloc",
	[ON_NEAR_FREE] = "near_free",
	[ON_FAR_ALLOC] = "far_alloc",
	[ON_FAR_FREE] = "far_free",
};

static struct oracle_result oracle_nostack_res[ON_COUNT];
static struct oracle_text oracle_nostack_expected;
static unsigned int oracle_nostack_runs;
/* Home's call site: the return address of its oracle_nostack_alloc(). */
static unsigned long oracle_nostack_site;

/* @caller 0: the caller's own call site, which home's calls give. */
static noinline __noclone void *
oracle_nostack_alloc(enum oracle_nostack_op op, unsigned long caller)
{
	void *p;

	if (!caller) {
		caller = _RET_IP_;
		oracle_nostack_site = caller;
	}
	p = oracle_kmalloc_caller(stack_size, GFP_KERNEL, caller);
	if (p)
		oracle_nostack_res[op].done++;
	else
		oracle_nostack_res[op].failed++;
	return p;
}

static noinline __noclone void oracle_nostack_home(void)
{
	void *p = oracle_nostack_alloc(ON_HOME_ALLOC, 0);

	if (!p)
		return;
	kfree(p);
	oracle_nostack_res[ON_HOME_FREE].done++;
}

static noinline __noclone void oracle_nostack_away(void)
{
	void *p = oracle_nostack_alloc(ON_AWAY_ALLOC, oracle_nostack_site);

	if (!p)
		return;
	kfree(p);
	oracle_nostack_res[ON_AWAY_FREE].done++;
}

/*
 * @k more levels, then the allocation naming @site and its kfree(); a
 * level is a frame (the work after the call keeps it from being a loop).
 */
static noinline __noclone unsigned int
oracle_nostack_down(unsigned int k, enum oracle_nostack_op op,
		    unsigned long site)
{
	unsigned int done;
	void *p;

	if (!site)
		site = _RET_IP_;
	if (k) {
		done = oracle_nostack_down(k - 1, op, site);
		barrier();
		return done + 1;
	}
	p = oracle_nostack_alloc(op, site);
	if (!p)
		return 0;
	kfree(p);
	oracle_nostack_res[op == ON_NEAR_ALLOC ? ON_NEAR_FREE : ON_FAR_FREE].done++;
	return 1;
}

static noinline __noclone unsigned int oracle_nostack_reach(unsigned int levels)
{
	unsigned int done;

	done = oracle_nostack_down(levels,
				   levels == 1 ? ON_NEAR_ALLOC : ON_FAR_ALLOC, 0);
	barrier();
	return done;
}

static noinline __noclone void oracle_nostack_run(void)
{
	unsigned int i;

	memset(oracle_nostack_res, 0, sizeof(oracle_nostack_res));
	/* Home first: away names the call site home has made known. */
	for (i = 0; i < nostack_n; i++) {
		oracle_nostack_home();
		oracle_nostack_away();
		oracle_nostack_reach(1);
		oracle_nostack_reach(ORACLE_FAR_LEVELS);
	}
	oracle_nostack_runs++;

	oracle_out = &oracle_nostack_expected;
	oracle_out->len = 0;
	oracle_say("nostack_runs %u\n", oracle_nostack_runs);
	oracle_say("rounds %u\n", nostack_n);
	oracle_say("size %u\n", stack_size);
	oracle_say("site_fn oracle_nostack_home\n");
	oracle_say("away_fn oracle_nostack_away\n");
	oracle_say("run_fn %s\n", __func__);
	oracle_say("reach_fn oracle_nostack_reach\n");
	oracle_say("down_fn oracle_nostack_down\n");
	oracle_say("far_levels %u\n", ORACLE_FAR_LEVELS);
	for (i = 0; i < ON_COUNT; i++) {
		oracle_say("done %s %u\n", oracle_nostack_names[i],
			   oracle_nostack_res[i].done);
		oracle_say("failed %s %u\n", oracle_nostack_names[i],
			   oracle_nostack_res[i].failed);
	}
}

/* ==== end of stacks ==== */

/* ==== lifetimes and pages: objects held for known times, known page blocks ==== */
/*
 *   hold      write 1: oracle_hold_run(): three groups of n x
 *             kmalloc(hold_size), each allocated by its own function and
 *             freed by oracle_hold_free:
 *               oracle_hold_now    each freed right after its allocation
 *               oracle_hold_short  all freed after msleep(hold_short_ms)
 *               oracle_hold_long   all freed after msleep(hold_long_ms)
 *             then oracle_hold_live: n x kmalloc(hold_size) kept until the
 *             next hold run (freed first thing by oracle_hold_drop) or
 *             unload. Each allocation and free is timed with the clock
 *             kmemtrace stamps its records with (ktime_get_mono_fast_ns),
 *             so an object's traced lifetime lies between the end of its
 *             kmalloc() and the start of its kfree() (lower bound) and the
 *             start of its kmalloc() and the end of its kfree() (upper).
 *   hold_expected read, one "key value" per line: hold_runs N, n N,
 *             hold_size N, short_ms N, long_ms N, live_freed_first N,
 *             "group FUNC done N failed M lo_ns LO hi_ns HI" per group
 *             (LO the least lower bound, HI the greatest upper bound of
 *             its objects' lifetimes), "live FUNC N".
 *   pages     write 1: oracle_pages_run():
 *               oracle_pages_alloc  for each order 0..page_orders-1, n x
 *                                   alloc_pages() with a GFP mask of that
 *                                   order's own (ORACLE_PAGE_GFP plus
 *                                   __GFP_ZERO and __GFP_COMP as the
 *                                   order's bits 0 and 1), which picks
 *                                   out the oracle's blocks in the trace
 *               oracle_pages_free   __free_pages() of all of them
 *               oracle_pages_large  n x kmalloc(page_large_size), above
 *                                   the largest kmalloc cache: also a
 *                                   page allocation each; then kfree()
 *   pages_expected read: pages_runs N, n N, page_size N,
 *             "order K gfp 0xG done N failed M" per order, large_size N,
 *             large_order K, "done oracle_pages_large N",
 *             "failed oracle_pages_large M".
 */
#define ORACLE_PAGE_ORDERS	4
#define ORACLE_PAGE_GFP		(GFP_KERNEL | __GFP_NOWARN | __GFP_RETRY_MAYFAIL | \
				 __GFP_NOMEMALLOC)

static unsigned int hold_size = 176;
module_param(hold_size, uint, 0444);
MODULE_PARM_DESC(hold_size, "kmalloc size of the hold pattern, 1..4096 (default 176)");

static unsigned int hold_short_ms = 20;
module_param(hold_short_ms, uint, 0444);
MODULE_PARM_DESC(hold_short_ms, "How long oracle_hold_short keeps its objects, ms, 1..10000 (default 20)");

static unsigned int hold_long_ms = 200;
module_param(hold_long_ms, uint, 0444);
MODULE_PARM_DESC(hold_long_ms, "How long oracle_hold_long keeps its objects, ms, 1..60000 (default 200)");

static unsigned int page_orders = ORACLE_PAGE_ORDERS;
module_param(page_orders, uint, 0444);
MODULE_PARM_DESC(page_orders, "Orders 0..page_orders-1 of the pages pattern, 1..4 (default 4)");

static unsigned int page_large_size = 3 * PAGE_SIZE;
module_param(page_large_size, uint, 0444);
MODULE_PARM_DESC(page_large_size,
		 "kmalloc size of oracle_pages_large, above the largest kmalloc cache (default 3 pages)");

enum oracle_hold_group { OH_NOW, OH_SHORT, OH_LONG, OH_COUNT };

static const char * const oracle_hold_names[OH_COUNT] = {
	[OH_NOW] = "oracle_hold_now",
	[OH_SHORT] = "oracle_hold_short",
	[OH_LONG] = "oracle_hold_long",
};

struct oracle_held {
	void *obj;
	u64 a0, a1;	/* before and after kmalloc() */
};

static struct oracle_held oracle_held[ORACLE_MAX_N];
static void *oracle_held_live[ORACLE_MAX_N];
static struct oracle_result oracle_hold_res[OH_COUNT];
static u64 oracle_hold_lo[OH_COUNT], oracle_hold_hi[OH_COUNT];
static unsigned int oracle_hold_live_n, oracle_hold_runs;
static struct oracle_text oracle_hold_expected;

static noinline __noclone unsigned int
oracle_hold_free(enum oracle_hold_group g, unsigned int j)
{
	u64 f0 = ktime_get_mono_fast_ns(), f1;

	kfree(oracle_held[j].obj);
	f1 = ktime_get_mono_fast_ns();
	barrier();
	oracle_held[j].obj = NULL;
	oracle_hold_res[g].done++;
	oracle_hold_lo[g] = min(oracle_hold_lo[g], f0 - oracle_held[j].a1);
	oracle_hold_hi[g] = max(oracle_hold_hi[g], f1 - oracle_held[j].a0);
	return oracle_hold_res[g].done;
}

/* kmalloc() from the group's function (see the callers), timed. */
static __always_inline void oracle_hold_take(enum oracle_hold_group g, unsigned int j)
{
	oracle_held[j].a0 = ktime_get_mono_fast_ns();
	oracle_held[j].obj = kmalloc(hold_size, GFP_KERNEL);
	oracle_held[j].a1 = ktime_get_mono_fast_ns();
	if (!oracle_held[j].obj)
		oracle_hold_res[g].failed++;
}

static noinline __noclone unsigned int oracle_hold_now(void)
{
	unsigned int j;

	for (j = 0; j < n; j++) {
		oracle_hold_take(OH_NOW, j);
		if (oracle_held[j].obj)
			oracle_hold_free(OH_NOW, j);
	}
	barrier();
	return oracle_hold_res[OH_NOW].done;
}

static noinline __noclone unsigned int oracle_hold_short(void)
{
	unsigned int j;

	for (j = 0; j < n; j++)
		oracle_hold_take(OH_SHORT, j);
	barrier();
	return oracle_hold_res[OH_SHORT].failed;
}

static noinline __noclone unsigned int oracle_hold_long(void)
{
	unsigned int j;

	for (j = 0; j < n; j++)
		oracle_hold_take(OH_LONG, j);
	barrier();
	return oracle_hold_res[OH_LONG].failed;
}

/* Frees what a group holds, after ms milliseconds. */
static void oracle_hold_release(enum oracle_hold_group g, unsigned int ms)
{
	unsigned int j;

	msleep(ms);
	for (j = 0; j < n; j++)
		if (oracle_held[j].obj)
			oracle_hold_free(g, j);
}

static noinline __noclone unsigned int oracle_hold_live(void)
{
	unsigned int j;

	for (j = 0; j < n; j++) {
		oracle_held_live[j] = kmalloc(hold_size, GFP_KERNEL);
		oracle_hold_live_n += !!oracle_held_live[j];
	}
	barrier();
	return oracle_hold_live_n;
}

static noinline __noclone unsigned int oracle_hold_drop(void)
{
	unsigned int j, freed = 0;

	for (j = 0; j < ORACLE_MAX_N; j++) {
		if (!oracle_held_live[j])
			continue;
		kfree(oracle_held_live[j]);
		oracle_held_live[j] = NULL;
		freed++;
	}
	oracle_hold_live_n = 0;
	barrier();
	return freed;
}

static void oracle_hold_run(void)
{
	unsigned int g, freed = oracle_hold_drop();

	memset(oracle_hold_res, 0, sizeof(oracle_hold_res));
	for (g = 0; g < OH_COUNT; g++) {
		oracle_hold_lo[g] = U64_MAX;
		oracle_hold_hi[g] = 0;
	}
	oracle_hold_now();
	oracle_hold_short();
	oracle_hold_release(OH_SHORT, hold_short_ms);
	oracle_hold_long();
	oracle_hold_release(OH_LONG, hold_long_ms);
	oracle_hold_live();
	oracle_hold_runs++;

	oracle_out = &oracle_hold_expected;
	oracle_out->len = 0;
	oracle_say("hold_runs %u\n", oracle_hold_runs);
	oracle_say("n %u\n", n);
	oracle_say("hold_size %u\n", hold_size);
	oracle_say("short_ms %u\n", hold_short_ms);
	oracle_say("long_ms %u\n", hold_long_ms);
	oracle_say("live_freed_first %u\n", freed);
	for (g = 0; g < OH_COUNT; g++)
		oracle_say("group %s done %u failed %u lo_ns %llu hi_ns %llu\n",
			   oracle_hold_names[g], oracle_hold_res[g].done,
			   oracle_hold_res[g].failed,
			   oracle_hold_res[g].done ? oracle_hold_lo[g] : 0ULL,
			   oracle_hold_hi[g]);
	oracle_say("live oracle_hold_live %u\n", oracle_hold_live_n);
}

static struct page *oracle_pages[ORACLE_PAGE_ORDERS][ORACLE_MAX_N];
static void *oracle_pages_big[ORACLE_MAX_N];
static struct oracle_result oracle_page_res[ORACLE_PAGE_ORDERS], oracle_large_res;
static unsigned int oracle_pages_runs;
static struct oracle_text oracle_pages_expected;

static gfp_t oracle_page_gfp(unsigned int order)
{
	return ORACLE_PAGE_GFP | (order & 1 ? __GFP_ZERO : 0) |
	       (order & 2 ? __GFP_COMP : 0);
}

static noinline __noclone unsigned int oracle_pages_alloc(void)
{
	unsigned int k, j;

	for (k = 0; k < page_orders; k++) {
		for (j = 0; j < n; j++) {
			oracle_pages[k][j] = alloc_pages(oracle_page_gfp(k), k);
			if (oracle_pages[k][j])
				oracle_page_res[k].done++;
			else
				oracle_page_res[k].failed++;
		}
	}
	barrier();
	return oracle_page_res[0].done;
}

static noinline __noclone unsigned int oracle_pages_free(void)
{
	unsigned int k, j, freed = 0;

	for (k = 0; k < page_orders; k++) {
		for (j = 0; j < n; j++) {
			if (!oracle_pages[k][j])
				continue;
			__free_pages(oracle_pages[k][j], k);
			oracle_pages[k][j] = NULL;
			freed++;
		}
	}
	barrier();
	return freed;
}

static noinline __noclone unsigned int oracle_pages_large(void)
{
	unsigned int j;

	for (j = 0; j < n; j++) {
		oracle_pages_big[j] = kmalloc(page_large_size,
					      GFP_KERNEL | __GFP_NOWARN);
		if (oracle_pages_big[j])
			oracle_large_res.done++;
		else
			oracle_large_res.failed++;
	}
	for (j = 0; j < n; j++) {
		kfree(oracle_pages_big[j]);
		oracle_pages_big[j] = NULL;
	}
	barrier();
	return oracle_large_res.done;
}

static void oracle_pages_run(void)
{
	unsigned int k;

	memset(oracle_page_res, 0, sizeof(oracle_page_res));
	memset(&oracle_large_res, 0, sizeof(oracle_large_res));
	oracle_pages_alloc();
	oracle_pages_free();
	oracle_pages_large();
	oracle_pages_runs++;

	oracle_out = &oracle_pages_expected;
	oracle_out->len = 0;
	oracle_say("pages_runs %u\n", oracle_pages_runs);
	oracle_say("n %u\n", n);
	oracle_say("page_size %lu\n", PAGE_SIZE);
	for (k = 0; k < page_orders; k++)
		oracle_say("order %u gfp %#x done %u failed %u\n", k,
			   (__force unsigned int)oracle_page_gfp(k),
			   oracle_page_res[k].done, oracle_page_res[k].failed);
	oracle_say("large_size %u\n", page_large_size);
	oracle_say("large_order %u\n", get_order(page_large_size));
	oracle_say("done oracle_pages_large %u\n", oracle_large_res.done);
	oracle_say("failed oracle_pages_large %u\n", oracle_large_res.failed);
}

static bool oracle_lp_params_ok(void)
{
	return oracle_size_ok("hold_size", hold_size, 1, SZ_4K) &&
	       oracle_size_ok("hold_short_ms", hold_short_ms, 1, 10000) &&
	       oracle_size_ok("hold_long_ms", hold_long_ms, 1, 60000) &&
	       oracle_size_ok("page_orders", page_orders, 1, ORACLE_PAGE_ORDERS) &&
	       oracle_size_ok("page_large_size", page_large_size,
			      KMALLOC_MAX_CACHE_SIZE + 1, SZ_1M);
}

static void oracle_lp_files(void)
{
	debugfs_create_file("hold", 0200, oracle_dir, oracle_hold_run,
			    &oracle_cmd_fops);
	debugfs_create_file("hold_expected", 0400, oracle_dir,
			    &oracle_hold_expected, &oracle_expected_fops);
	debugfs_create_file("pages", 0200, oracle_dir, oracle_pages_run,
			    &oracle_cmd_fops);
	debugfs_create_file("pages_expected", 0400, oracle_dir,
			    &oracle_pages_expected, &oracle_expected_fops);
}

/* ==== end of lifetimes and pages ==== */

/*
 * The growth pattern (debugfs "growth", write 1): a leak at a known rate
 * beside churn, for kmemtrace-report --at and --diff. growth_rounds
 * rounds, growth_gap_ms apart (msleep), each:
 *
 *   oracle_growth_leak   growth_leak_n x kmalloc(growth_leak_size), kept
 *                        until the next growth run (freed first thing, by
 *                        oracle_growth_drop) or until the module is unloaded
 *   oracle_growth_churn  growth_churn_n x kmalloc(growth_churn_size), each
 *                        freed right away
 *
 * growth_expected read: growth_runs N, rounds R, leak_n L, leak_size S,
 * churn_n C, churn_size Z, dropped_first D, then per round
 * "round I start_ns A end_ns B leaked K leak_failed F churned M churn_failed G"
 * with A before the round's first kmalloc() and B after its last kfree(),
 * on the trace's clock (ktime_get_mono_fast_ns()), so that a test picks
 * times between rounds from them, with no guess at how fast the guest runs.
 */
static unsigned int growth_rounds = 10;
module_param(growth_rounds, uint, 0444);
MODULE_PARM_DESC(growth_rounds, "Rounds of the growth pattern, 1..32 (default 10)");

static unsigned int growth_leak_n = 4;
module_param(growth_leak_n, uint, 0444);
MODULE_PARM_DESC(growth_leak_n, "Objects the growth pattern leaks a round, 1..8 (default 4)");

static unsigned int growth_leak_size = 200;
module_param(growth_leak_size, uint, 0444);
MODULE_PARM_DESC(growth_leak_size, "kmalloc size of the leaked objects, 1..4096 (default 200)");

static unsigned int growth_churn_n = 16;
module_param(growth_churn_n, uint, 0444);
MODULE_PARM_DESC(growth_churn_n, "Objects allocated and freed a round, 1..256 (default 16)");

static unsigned int growth_churn_size = 72;
module_param(growth_churn_size, uint, 0444);
MODULE_PARM_DESC(growth_churn_size, "kmalloc size of the churned objects, 1..4096 (default 72)");

static unsigned int growth_gap_ms = 20;
module_param(growth_gap_ms, uint, 0444);
MODULE_PARM_DESC(growth_gap_ms, "Sleep between rounds, ms, 1..10000 (default 20)");

#define ORACLE_GROWTH_MAX_ROUNDS	32
#define ORACLE_GROWTH_MAX_LEAK		8

static void *oracle_grown[ORACLE_GROWTH_MAX_ROUNDS * ORACLE_GROWTH_MAX_LEAK];
static struct oracle_result oracle_growth_leak_res, oracle_growth_churn_res;
static unsigned int oracle_growth_runs;
static struct oracle_text oracle_growth_expected;

static noinline __noclone unsigned int oracle_growth_leak(unsigned int round)
{
	unsigned int j;

	for (j = 0; j < growth_leak_n; j++) {
		void *p = kmalloc(growth_leak_size, GFP_KERNEL);

		oracle_grown[round * ORACLE_GROWTH_MAX_LEAK + j] = p;
		if (p)
			oracle_growth_leak_res.done++;
		else
			oracle_growth_leak_res.failed++;
	}
	barrier();
	return oracle_growth_leak_res.done;
}

static noinline __noclone unsigned int oracle_growth_churn(void)
{
	unsigned int j;

	for (j = 0; j < growth_churn_n; j++) {
		void *p = kmalloc(growth_churn_size, GFP_KERNEL);

		if (!p) {
			oracle_growth_churn_res.failed++;
			continue;
		}
		oracle_growth_churn_res.done++;
		kfree(p);
	}
	barrier();
	return oracle_growth_churn_res.done;
}

static unsigned int oracle_growth_drop(void)
{
	unsigned int j, freed = 0;

	for (j = 0; j < ARRAY_SIZE(oracle_grown); j++) {
		if (!oracle_grown[j])
			continue;
		kfree(oracle_grown[j]);
		oracle_grown[j] = NULL;
		freed++;
	}
	return freed;
}

static void oracle_growth_run(void)
{
	unsigned int r, freed = oracle_growth_drop();
	struct oracle_result leak0, churn0;
	u64 a, b;

	oracle_growth_runs++;
	oracle_out = &oracle_growth_expected;
	oracle_out->len = 0;
	oracle_say("growth_runs %u\n", oracle_growth_runs);
	oracle_say("rounds %u\n", growth_rounds);
	oracle_say("leak_n %u\n", growth_leak_n);
	oracle_say("leak_size %u\n", growth_leak_size);
	oracle_say("churn_n %u\n", growth_churn_n);
	oracle_say("churn_size %u\n", growth_churn_size);
	oracle_say("dropped_first %u\n", freed);
	memset(&oracle_growth_leak_res, 0, sizeof(oracle_growth_leak_res));
	memset(&oracle_growth_churn_res, 0, sizeof(oracle_growth_churn_res));
	for (r = 0; r < growth_rounds; r++) {
		/* The gap first: the trace's start and the drop above are apart from round 0. */
		msleep(growth_gap_ms);
		leak0 = oracle_growth_leak_res;
		churn0 = oracle_growth_churn_res;
		a = ktime_get_mono_fast_ns();
		oracle_growth_leak(r);
		oracle_growth_churn();
		b = ktime_get_mono_fast_ns();
		/* One line in two calls: the format would not fit 100 columns. */
		oracle_say("round %u start_ns %llu end_ns %llu ", r, a, b);
		oracle_say("leaked %u leak_failed %u churned %u churn_failed %u\n",
			   oracle_growth_leak_res.done - leak0.done,
			   oracle_growth_leak_res.failed - leak0.failed,
			   oracle_growth_churn_res.done - churn0.done,
			   oracle_growth_churn_res.failed - churn0.failed);
	}
	msleep(growth_gap_ms);
}

static bool oracle_growth_params_ok(void)
{
	return oracle_size_ok("growth_rounds", growth_rounds, 1, ORACLE_GROWTH_MAX_ROUNDS) &&
	       oracle_size_ok("growth_leak_n", growth_leak_n, 1, ORACLE_GROWTH_MAX_LEAK) &&
	       oracle_size_ok("growth_leak_size", growth_leak_size, 1, SZ_4K) &&
	       oracle_size_ok("growth_churn_n", growth_churn_n, 1, ORACLE_MAX_N) &&
	       oracle_size_ok("growth_churn_size", growth_churn_size, 1, SZ_4K) &&
	       oracle_size_ok("growth_gap_ms", growth_gap_ms, 1, 10000);
}

static void oracle_growth_files(void)
{
	debugfs_create_file("growth", 0200, oracle_dir, oracle_growth_run,
			    &oracle_cmd_fops);
	debugfs_create_file("growth_expected", 0400, oracle_dir,
			    &oracle_growth_expected, &oracle_expected_fops);
}

/* The load generator: a kthread per online CPU. */
static struct task_struct **oracle_load_tasks;
static unsigned int oracle_load_batch;
static atomic_long_t oracle_load_loops;

static const unsigned int oracle_load_sizes[] = {
	16, 40, 100, 200, 500, 1000, 3000, 64,
};

static int oracle_load_fn(void *data)
{
	unsigned int batch = (unsigned long)data;
	void *objs[ORACLE_MAX_BATCH];
	unsigned long loop = 0;
	unsigned int i;

	while (!kthread_should_stop()) {
		for (i = 0; i < batch; i++)
			objs[i] = kmalloc(oracle_load_sizes[(loop + i) %
					  ARRAY_SIZE(oracle_load_sizes)],
					  GFP_KERNEL);
		for (i = 0; i < batch; i++)
			kfree(objs[i]);
		loop++;
		atomic_long_inc(&oracle_load_loops);
		cond_resched();
	}
	return 0;
}

static void oracle_load_stop(void)
{
	unsigned int cpu;

	if (!oracle_load_tasks)
		return;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		if (oracle_load_tasks[cpu])
			kthread_stop(oracle_load_tasks[cpu]);
	}
	kfree(oracle_load_tasks);
	oracle_load_tasks = NULL;
	oracle_load_batch = 0;
}

static int oracle_load_start(unsigned int batch)
{
	struct task_struct *t;
	unsigned int cpu;

	oracle_load_tasks = kcalloc(nr_cpu_ids, sizeof(*oracle_load_tasks),
				    GFP_KERNEL);
	if (!oracle_load_tasks)
		return -ENOMEM;
	atomic_long_set(&oracle_load_loops, 0);
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		t = kthread_create_on_cpu(oracle_load_fn,
					  (void *)(unsigned long)batch, cpu,
					  "kmt_oracle_load/%u");
		if (IS_ERR(t)) {
			cpus_read_unlock();
			oracle_load_stop();
			return PTR_ERR(t);
		}
		set_user_nice(t, load_nice);
		oracle_load_tasks[cpu] = t;
	}
	cpus_read_unlock();
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		if (oracle_load_tasks[cpu])
			wake_up_process(oracle_load_tasks[cpu]);
	}
	oracle_load_batch = batch;
	return 0;
}

static ssize_t oracle_load_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	unsigned int batch;
	int ret;

	ret = kstrtouint_from_user(ubuf, count, 0, &batch);
	if (ret)
		return ret;
	if (batch > ORACLE_MAX_BATCH)
		return -EINVAL;
	mutex_lock(&oracle_lock);
	oracle_load_stop();
	ret = batch ? oracle_load_start(batch) : 0;
	mutex_unlock(&oracle_lock);
	return ret ? ret : count;
}

static ssize_t oracle_load_read(struct file *file, char __user *ubuf,
				size_t count, loff_t *ppos)
{
	unsigned int cpu, threads = 0;
	char text[80];
	int len;

	mutex_lock(&oracle_lock);
	for (cpu = 0; oracle_load_tasks && cpu < nr_cpu_ids; cpu++)
		threads += !!oracle_load_tasks[cpu];
	len = scnprintf(text, sizeof(text), "threads %u batch %u loops %ld\n",
			threads, oracle_load_batch,
			atomic_long_read(&oracle_load_loops));
	mutex_unlock(&oracle_lock);
	return simple_read_from_buffer(ubuf, count, ppos, text, len);
}

static const struct file_operations oracle_load_fops = {
	.owner = THIS_MODULE,
	.read = oracle_load_read,
	.write = oracle_load_write,
	.llseek = default_llseek,
};

/* A constructor makes the cache unmergeable, so it keeps its own name. */
static void oracle_obj_ctor(void *obj)
{
	memset(obj, 0, obj_size);
}

static bool oracle_size_ok(const char *name, unsigned long v,
			   unsigned long min, unsigned long max)
{
	if (v >= min && v <= max)
		return true;
	pr_err("%s=%lu is outside %lu..%lu\n", name, v, min, max);
	return false;
}

static int oracle_check_params(void)
{
	unsigned int i;
	bool ok;

	ok = oracle_size_ok("n", n, 1, ORACLE_MAX_N) &&
	     oracle_size_ok("obj_size", obj_size, 8, SZ_8K) &&
	     oracle_size_ok("merged_size", merged_size, 8, SZ_4K) &&
	     oracle_size_ok("kbulk_size", kbulk_size, 1, SZ_4K) &&
	     oracle_size_ok("xcpu_size", xcpu_size, 1, SZ_8K) &&
	     oracle_size_ok("node_size", node_size, 1, SZ_8K) &&
	     oracle_size_ok("leak_size", leak_size, 1, SZ_8K) &&
	     oracle_size_ok("irq_size", irq_size, 1, SZ_8K) &&
	     oracle_size_ok("fail_size", fail_size, SZ_32M, ULONG_MAX / 2) &&
	     (!huge_size ||
	      oracle_size_ok("huge_size", huge_size, (unsigned long)U32_MAX + 1,
			     ULONG_MAX / 2)) &&
	     oracle_size_ok("load_nice", load_nice + 20, 0, 39);
	for (i = 0; ok && i < nr_sizes; i++)
		ok = oracle_size_ok("sizes[]", sizes[i], 1, SZ_8K);
	return ok ? 0 : -EINVAL;
}

/* ==== nested: events that arrive while kmemtrace writes one ==== */
/*
 *   nested    write N (1..4096): a kprobe on ktime_get_mono_fast_ns(),
 *             the clock kmemtrace's write path reads while the CPU is
 *             marked busy writing an event. Its handler runs where kprobe
 *             handlers run (on x86 an int3, NMI context), as an NMI
 *             would, in the middle of that write; in the writing task
 *             only, at most N times, it fires the kfree tracepoint itself
 *             (trace_kfree(), with nested_token's address: nothing is
 *             allocated or freed there). kmemtrace must drop and count
 *             each such event, never write it, nor anything out of order.
 *             Then N kmalloc(nested_outer_size)/kfree() pairs from
 *             oracle_nested_outer(), the events being written when the
 *             handler runs; then the kprobe goes.
 *             Read: "calls C": the kfree events the handler fired.
 */
static unsigned int nested_outer_size = 88;
module_param(nested_outer_size, uint, 0444);
MODULE_PARM_DESC(nested_outer_size, "kmalloc size of the nested pattern's own events (default 88)");

static struct task_struct *nested_task;
static atomic_t nested_budget = ATOMIC_INIT(0);
static atomic_t nested_calls = ATOMIC_INIT(0);
static long nested_token;

static noinline __noclone int oracle_nested_handler(struct kprobe *kp,
						    struct pt_regs *regs)
{
	if (READ_ONCE(nested_task) != current ||
	    !atomic_add_unless(&nested_budget, -1, 0))
		return 0;
	atomic_inc(&nested_calls);
	trace_kfree(_THIS_IP_, &nested_token);
	return 0;
}

static noinline __noclone void oracle_nested_outer(unsigned int pairs)
{
	unsigned int i;
	void *p;

	for (i = 0; i < pairs; i++) {
		p = kmalloc(nested_outer_size, GFP_KERNEL);
		kfree(p);
	}
}

static ssize_t oracle_nested_write(struct file *file, const char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	struct kprobe kp = {
		.symbol_name = "ktime_get_mono_fast_ns",
		.pre_handler = oracle_nested_handler,
	};
	unsigned int v;
	int ret;

	ret = kstrtouint_from_user(ubuf, count, 0, &v);
	if (ret)
		return ret;
	if (v < 1 || v > 4096)
		return -EINVAL;
	mutex_lock(&oracle_lock);
	atomic_set(&nested_calls, 0);
	atomic_set(&nested_budget, v);
	WRITE_ONCE(nested_task, current);
	ret = register_kprobe(&kp);
	if (ret) {
		pr_err("kmemtrace_oracle: cannot kprobe ktime_get_mono_fast_ns: %d\n", ret);
	} else {
		oracle_nested_outer(v);
		unregister_kprobe(&kp);
	}
	WRITE_ONCE(nested_task, NULL);
	atomic_set(&nested_budget, 0);
	mutex_unlock(&oracle_lock);
	return ret ? ret : count;
}

static ssize_t oracle_nested_read(struct file *file, char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	char buf[64];
	int len;

	len = scnprintf(buf, sizeof(buf), "calls %d\n", atomic_read(&nested_calls));
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static const struct file_operations oracle_nested_fops = {
	.owner = THIS_MODULE,
	.write = oracle_nested_write,
	.read = oracle_nested_read,
	.llseek = default_llseek,
};

/* ==== end of nested ==== */

static int __init oracle_init(void)
{
	int ret;

	ret = oracle_check_params();
	if (ret)
		return ret;
	if (!oracle_stacks_params_ok() ||
	    !oracle_size_ok("nostack_n", nostack_n, 1, SZ_4K))
		return -EINVAL;
	if (!oracle_lp_params_ok() || !oracle_growth_params_ok())
		return -EINVAL;
	oracle_cache = kmem_cache_create(ORACLE_CACHE_NAME, obj_size, 0, 0,
					 oracle_obj_ctor);
	if (!oracle_cache)
		return -ENOMEM;
	/* No constructor, no flags: SLUB may merge it with another cache. */
	oracle_merged = kmem_cache_create(ORACLE_MERGED_NAME, merged_size, 0, 0,
					  NULL);
	if (!oracle_merged) {
		ret = -ENOMEM;
		goto destroy_cache;
	}
	oracle_dir = debugfs_create_dir("kmemtrace_oracle", NULL);
	if (IS_ERR(oracle_dir)) {
		ret = PTR_ERR(oracle_dir);
		goto destroy_merged;
	}
	debugfs_create_file("run", 0200, oracle_dir, oracle_run, &oracle_cmd_fops);
	debugfs_create_file("expected", 0400, oracle_dir, &oracle_expected,
			    &oracle_expected_fops);
	debugfs_create_file("bulk", 0200, oracle_dir, oracle_bulk_run,
			    &oracle_cmd_fops);
	debugfs_create_file("bulk_expected", 0400, oracle_dir,
			    &oracle_bulk_expected, &oracle_expected_fops);
	debugfs_create_file("load", 0600, oracle_dir, NULL, &oracle_load_fops);
	debugfs_create_file("nested", 0600, oracle_dir, NULL, &oracle_nested_fops);
	debugfs_create_file("stacks", 0200, oracle_dir, oracle_stacks_run,
			    &oracle_cmd_fops);
	debugfs_create_file("stacks_expected", 0400, oracle_dir,
			    &oracle_stacks_expected, &oracle_expected_fops);
	debugfs_create_file("nostack", 0200, oracle_dir, oracle_nostack_run,
			    &oracle_cmd_fops);
	debugfs_create_file("nostack_expected", 0400, oracle_dir,
			    &oracle_nostack_expected, &oracle_expected_fops);
	oracle_lp_files();
	oracle_growth_files();
	oracle_describe(0);
	return 0;

destroy_merged:
	kmem_cache_destroy(oracle_merged);
destroy_cache:
	kmem_cache_destroy(oracle_cache);
	return ret;
}

static void __exit oracle_exit(void)
{
	debugfs_remove_recursive(oracle_dir);
	mutex_lock(&oracle_lock);
	oracle_load_stop();
	oracle_leak_free();
	oracle_hold_drop();
	oracle_growth_drop();
	mutex_unlock(&oracle_lock);
	kmem_cache_destroy(oracle_merged);
	kmem_cache_destroy(oracle_cache);
}

module_init(oracle_init);
module_exit(oracle_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Known allocation pattern and allocation load for kmemtrace tests");
