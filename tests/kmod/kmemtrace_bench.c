// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmemtrace_bench.c - allocation load for make bench: timed allocate/free
 * loops on every online CPU (single objects or the bulk API), and a load
 * paced to a chosen event rate.
 *
 * <debugfs>/kmemtrace_bench/ (root only):
 *
 *   workload  what run does; write one of (read: the current one):
 *             kmalloc       kmalloc()/kfree() pairs, sizes 32, 64, 128 and
 *                           256 in turn (the default)
 *             cache         kmem_cache_alloc()/kmem_cache_free() pairs on
 *                           the module's own 64-byte cache
 *             bulk B        kmem_cache_alloc_bulk() of B objects of that
 *                           cache, then kmem_cache_free_bulk() of them
 *             kfree_bulk B  kmem_cache_alloc_bulk() of B objects, then
 *                           kfree_bulk() of them
 *             nolock        kmalloc_nolock()/kfree_nolock() pairs of 64
 *                           bytes (kernels that have them, 6.18 on;
 *                           elsewhere the write fails with EOPNOTSUPP)
 *           B: objects per call, 1..64 (default 16). The first two reach
 *           kmemtrace through slab tracepoints, the bulk API and the
 *           lock-free calls through its kprobes and kretprobes: no
 *           tracepoint covers them.
 *   run     write N (1..1000000000): on every online CPU at once, a
 *           kthread bound to it allocates and frees N objects (N pairs)
 *           the workload's way and times itself; the write returns when
 *           all are done. Each object is two slab events.
 *   result  read: what the last run measured, one "key value" line each:
 *             cpus C
 *             pairs N                 per CPU
 *             workload W              as written to workload
 *             batch B                 objects per bulk call (1: single)
 *             failed F                bulk or lock-free allocations that
 *                                     failed (their objects were not freed)
 *             cpu I ns T              per CPU, its loop's elapsed time
 *             total_ns T              sum over the CPUs
 *   rate    write R: one kthread per online CPU, bound to it, doing
 *           kmalloc()/kfree() pairs so that each CPU emits R slab events
 *           per second (in bursts of at most a millisecond's worth,
 *           sleeping in between); write 0: stop them.
 *           Read: "target R events E ns T": the per-CPU target, and the
 *           events done on all CPUs in the T ns since the load started.
 *
 * A write to run or rate while the other is busy fails with EBUSY.
 * Unloading the module stops the paced load.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#define BENCH_MAX_PAIRS		1000000000U
/* A CPU emits at most this many events per second in the paced load. */
#define BENCH_MAX_RATE		100000000U
/* Pairs between two cond_resched() calls: long loops must not stall RCU. */
#define BENCH_RESCHED_EVERY	256U
/* Objects per bulk call at most: the array lives on the kthread's stack. */
#define BENCH_MAX_BATCH		64U
#define BENCH_DEF_BATCH		16U
#define BENCH_CACHE_SIZE	64U

enum bench_workload {
	BENCH_KMALLOC,
	BENCH_CACHE,
	BENCH_BULK,
	BENCH_KFREE_BULK,
	BENCH_NOLOCK,
};

static const char * const bench_workload_names[] = {
	[BENCH_KMALLOC] = "kmalloc",
	[BENCH_CACHE] = "cache",
	[BENCH_BULK] = "bulk",
	[BENCH_KFREE_BULK] = "kfree_bulk",
	[BENCH_NOLOCK] = "nolock",
};

/* kmalloc_nolock() is a macro where the kernel has it (6.18 on). */
#ifdef kmalloc_nolock
#define BENCH_HAVE_NOLOCK	true
#define bench_kmalloc_nolock(size)	kmalloc_nolock(size, 0, NUMA_NO_NODE)
#define bench_kfree_nolock(p)		kfree_nolock(p)
#else
#define BENCH_HAVE_NOLOCK	false
#define bench_kmalloc_nolock(size)	NULL
#define bench_kfree_nolock(p)		do { } while (0)
#endif

static DEFINE_MUTEX(bench_lock);
static struct dentry *bench_dir;

/* The timed run. */
struct bench_cpu {
	struct completion done;
	u64 ns;
};

static struct bench_cpu *bench_cpus;	/* nr_cpu_ids entries during a run */
static unsigned int bench_pairs;
static atomic_t bench_waiting;		/* threads not yet at the start line */
static unsigned int bench_ran_cpus;
static u64 *bench_ns;			/* per-CPU result of the last run */
static atomic_t bench_failed;		/* bulk allocations that failed */
/* What run does (under bench_lock); the last run's, for result. */
static enum bench_workload bench_wl = BENCH_KMALLOC, bench_ran_wl;
static unsigned int bench_batch = BENCH_DEF_BATCH, bench_ran_batch = 1;
static struct kmem_cache *bench_cache;

/* Keeps the compiler from proving anything about the allocation. */
static void *bench_sink;

static noinline void bench_pairs_loop(unsigned int pairs)
{
	unsigned int i;
	void *p;

	for (i = 0; i < pairs; i++) {
		p = kmalloc(32U << (i & 3), GFP_KERNEL);
		WRITE_ONCE(bench_sink, p);
		kfree(p);
		if (!((i + 1) % BENCH_RESCHED_EVERY))
			cond_resched();
	}
}

static noinline void bench_cache_loop(unsigned int pairs)
{
	unsigned int i;
	void *p;

	for (i = 0; i < pairs; i++) {
		p = kmem_cache_alloc(bench_cache, GFP_KERNEL);
		WRITE_ONCE(bench_sink, p);
		if (p)
			kmem_cache_free(bench_cache, p);
		if (!((i + 1) % BENCH_RESCHED_EVERY))
			cond_resched();
	}
}

/* pairs objects in calls of batch; kfree_bulk() frees them when kfree. */
static noinline void bench_bulk_loop(unsigned int pairs, unsigned int batch,
				     bool kfree)
{
	void *objs[BENCH_MAX_BATCH];
	unsigned int done = 0, n, since = 0;

	while (done < pairs) {
		n = min(batch, pairs - done);
		/* All or nothing: 0 (false from 6.18) when it fails. */
		if (!kmem_cache_alloc_bulk(bench_cache, GFP_KERNEL, n, objs)) {
			atomic_inc(&bench_failed);
		} else {
			WRITE_ONCE(bench_sink, objs[0]);
			if (kfree)
				kfree_bulk(n, objs);
			else
				kmem_cache_free_bulk(bench_cache, n, objs);
		}
		done += n;
		since += n;
		if (since >= BENCH_RESCHED_EVERY) {
			since = 0;
			cond_resched();
		}
	}
}

static noinline void bench_nolock_loop(unsigned int pairs)
{
	unsigned int i;
	void *p;

	for (i = 0; i < pairs; i++) {
		p = bench_kmalloc_nolock(BENCH_CACHE_SIZE);
		WRITE_ONCE(bench_sink, p);
		if (p)
			bench_kfree_nolock(p);
		else
			atomic_inc(&bench_failed);
		if (!((i + 1) % BENCH_RESCHED_EVERY))
			cond_resched();
	}
}

static int bench_run_fn(void *data)
{
	struct bench_cpu *bc = data;
	u64 t0;

	/*
	 * Everyone starts together, so the CPUs compete as in real use. The
	 * writer may still have threads to wake from this CPU: let it run.
	 */
	atomic_dec(&bench_waiting);
	while (atomic_read(&bench_waiting))
		cond_resched();
	t0 = ktime_get_ns();
	switch (bench_ran_wl) {
	case BENCH_KMALLOC:
		bench_pairs_loop(bench_pairs);
		break;
	case BENCH_CACHE:
		bench_cache_loop(bench_pairs);
		break;
	case BENCH_BULK:
	case BENCH_KFREE_BULK:
		bench_bulk_loop(bench_pairs, bench_ran_batch,
				bench_ran_wl == BENCH_KFREE_BULK);
		break;
	case BENCH_NOLOCK:
		bench_nolock_loop(bench_pairs);
		break;
	}
	bc->ns = ktime_get_ns() - t0;
	complete(&bc->done);
	return 0;
}

static int bench_run(unsigned int pairs)
{
	struct task_struct **tasks;
	unsigned int cpu, n = 0;
	int ret = 0;

	tasks = kcalloc(nr_cpu_ids, sizeof(*tasks), GFP_KERNEL);
	bench_cpus = kcalloc(nr_cpu_ids, sizeof(*bench_cpus), GFP_KERNEL);
	if (!tasks || !bench_cpus) {
		ret = -ENOMEM;
		goto out_free;
	}
	bench_pairs = pairs;
	bench_ran_wl = bench_wl;
	bench_ran_batch = bench_wl == BENCH_BULK || bench_wl == BENCH_KFREE_BULK ?
			  bench_batch : 1;
	atomic_set(&bench_failed, 0);
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		init_completion(&bench_cpus[cpu].done);
		tasks[cpu] = kthread_create_on_cpu(bench_run_fn, &bench_cpus[cpu],
						   cpu, "kmt_bench/%u");
		if (IS_ERR(tasks[cpu])) {
			ret = PTR_ERR(tasks[cpu]);
			tasks[cpu] = NULL;
			break;
		}
		n++;
	}
	if (ret) {
		/* Not woken yet: they never ran their function. */
		for (cpu = 0; cpu < nr_cpu_ids; cpu++)
			if (tasks[cpu])
				kthread_stop(tasks[cpu]);
		cpus_read_unlock();
		goto out_free;
	}
	atomic_set(&bench_waiting, n);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (tasks[cpu])
			wake_up_process(tasks[cpu]);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (tasks[cpu])
			wait_for_completion(&bench_cpus[cpu].done);
	cpus_read_unlock();

	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		bench_ns[cpu] = tasks[cpu] ? bench_cpus[cpu].ns : 0;
	bench_ran_cpus = n;

out_free:
	kfree(bench_cpus);
	bench_cpus = NULL;
	kfree(tasks);
	return ret;
}

/* The paced load. */
static struct task_struct **rate_tasks;
static unsigned int rate_target;	/* events per second per CPU */
static u64 rate_start_ns;
static atomic64_t rate_events;

static int bench_rate_fn(void *data)
{
	unsigned int rate = (unsigned long)data;
	/* A millisecond's worth of pairs per burst, at least one. */
	unsigned int burst = max(rate / 2000U, 1U);
	u64 t0 = ktime_get_ns(), pairs = 0, due_ns;
	s64 ahead_ns;

	while (!kthread_should_stop()) {
		bench_pairs_loop(burst);
		pairs += burst;
		atomic64_add(2 * burst, &rate_events);
		/* When the 2 * pairs events are due at the target rate. */
		due_ns = div_u64(2 * pairs * NSEC_PER_SEC, rate);
		ahead_ns = (s64)(t0 + due_ns - ktime_get_ns());
		if (ahead_ns > 0) {
			/* div_u64(): a 64-bit '/' needs libgcc on 32-bit. */
			u64 ahead_us = div_u64(ahead_ns, NSEC_PER_USEC);

			usleep_range(ahead_us, ahead_us + 50);
		} else {
			cond_resched();
		}
	}
	return 0;
}

static void bench_rate_stop(void)
{
	unsigned int cpu;

	if (!rate_tasks)
		return;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (rate_tasks[cpu])
			kthread_stop(rate_tasks[cpu]);
	kfree(rate_tasks);
	rate_tasks = NULL;
	rate_target = 0;
}

static int bench_rate_start(unsigned int rate)
{
	struct task_struct *t;
	unsigned int cpu;

	rate_tasks = kcalloc(nr_cpu_ids, sizeof(*rate_tasks), GFP_KERNEL);
	if (!rate_tasks)
		return -ENOMEM;
	atomic64_set(&rate_events, 0);
	rate_start_ns = ktime_get_ns();
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		t = kthread_create_on_cpu(bench_rate_fn,
					  (void *)(unsigned long)rate, cpu,
					  "kmt_bench_rate/%u");
		if (IS_ERR(t)) {
			cpus_read_unlock();
			bench_rate_stop();
			return PTR_ERR(t);
		}
		rate_tasks[cpu] = t;
	}
	cpus_read_unlock();
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (rate_tasks[cpu])
			wake_up_process(rate_tasks[cpu]);
	rate_target = rate;
	return 0;
}

static ssize_t bench_run_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	unsigned int pairs;
	int ret;

	ret = kstrtouint_from_user(ubuf, count, 0, &pairs);
	if (ret)
		return ret;
	if (!pairs || pairs > BENCH_MAX_PAIRS)
		return -EINVAL;
	mutex_lock(&bench_lock);
	ret = rate_tasks ? -EBUSY : bench_run(pairs);
	mutex_unlock(&bench_lock);
	return ret ? ret : count;
}

static const struct file_operations bench_run_fops = {
	.owner = THIS_MODULE,
	.write = bench_run_write,
	.llseek = noop_llseek,
};

static ssize_t bench_result_read(struct file *file, char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	size_t size = 128 + 48 * (size_t)nr_cpu_ids, len = 0;
	unsigned int cpu;
	u64 total = 0;
	ssize_t ret;
	char *text;

	text = kmalloc(size, GFP_KERNEL);
	if (!text)
		return -ENOMEM;
	mutex_lock(&bench_lock);
	len += scnprintf(text + len, size - len, "cpus %u\npairs %u\n",
			 bench_ran_cpus, bench_ran_cpus ? bench_pairs : 0);
	len += scnprintf(text + len, size - len,
			 "workload %s\nbatch %u\nfailed %d\n",
			 bench_workload_names[bench_ran_wl], bench_ran_batch,
			 atomic_read(&bench_failed));
	for (cpu = 0; bench_ran_cpus && cpu < nr_cpu_ids; cpu++) {
		if (!bench_ns[cpu])
			continue;
		len += scnprintf(text + len, size - len, "cpu %u ns %llu\n",
				 cpu, bench_ns[cpu]);
		total += bench_ns[cpu];
	}
	len += scnprintf(text + len, size - len, "total_ns %llu\n", total);
	mutex_unlock(&bench_lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, text, len);
	kfree(text);
	return ret;
}

static const struct file_operations bench_result_fops = {
	.owner = THIS_MODULE,
	.read = bench_result_read,
	.llseek = default_llseek,
};

static ssize_t bench_workload_write(struct file *file, const char __user *ubuf,
				    size_t count, loff_t *ppos)
{
	unsigned int batch = BENCH_DEF_BATCH, i;
	char buf[32], *arg;
	int wl = -1;

	if (!count || count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	arg = strim(buf);
	for (i = 0; i < ARRAY_SIZE(bench_workload_names); i++) {
		size_t n = strlen(bench_workload_names[i]);

		if (strncmp(arg, bench_workload_names[i], n) ||
		    (arg[n] && arg[n] != ' '))
			continue;
		wl = i;
		arg = skip_spaces(arg + n);
		break;
	}
	if (wl < 0)
		return -EINVAL;
	if (wl == BENCH_NOLOCK && !BENCH_HAVE_NOLOCK)
		return -EOPNOTSUPP;
	if (*arg) {
		/* Only the bulk workloads take a batch size. */
		if ((wl != BENCH_BULK && wl != BENCH_KFREE_BULK) ||
		    kstrtouint(arg, 0, &batch) ||
		    !batch || batch > BENCH_MAX_BATCH)
			return -EINVAL;
	}
	mutex_lock(&bench_lock);
	bench_wl = wl;
	bench_batch = batch;
	mutex_unlock(&bench_lock);
	return count;
}

static ssize_t bench_workload_read(struct file *file, char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	char text[48];
	int len;

	mutex_lock(&bench_lock);
	if (bench_wl == BENCH_BULK || bench_wl == BENCH_KFREE_BULK)
		len = scnprintf(text, sizeof(text), "%s %u\n",
				bench_workload_names[bench_wl], bench_batch);
	else
		len = scnprintf(text, sizeof(text), "%s\n",
				bench_workload_names[bench_wl]);
	mutex_unlock(&bench_lock);
	return simple_read_from_buffer(ubuf, count, ppos, text, len);
}

static const struct file_operations bench_workload_fops = {
	.owner = THIS_MODULE,
	.read = bench_workload_read,
	.write = bench_workload_write,
	.llseek = default_llseek,
};

static ssize_t bench_rate_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	unsigned int rate;
	int ret;

	ret = kstrtouint_from_user(ubuf, count, 0, &rate);
	if (ret)
		return ret;
	if (rate > BENCH_MAX_RATE)
		return -EINVAL;
	mutex_lock(&bench_lock);
	bench_rate_stop();
	ret = rate ? bench_rate_start(rate) : 0;
	mutex_unlock(&bench_lock);
	return ret ? ret : count;
}

static ssize_t bench_rate_read(struct file *file, char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	char text[96];
	int len;

	mutex_lock(&bench_lock);
	len = scnprintf(text, sizeof(text), "target %u events %lld ns %llu\n",
			rate_target, (long long)atomic64_read(&rate_events),
			rate_tasks ? ktime_get_ns() - rate_start_ns : 0ULL);
	mutex_unlock(&bench_lock);
	return simple_read_from_buffer(ubuf, count, ppos, text, len);
}

static const struct file_operations bench_rate_fops = {
	.owner = THIS_MODULE,
	.read = bench_rate_read,
	.write = bench_rate_write,
	.llseek = default_llseek,
};

static int __init bench_init(void)
{
	int ret;

	bench_ns = kcalloc(nr_cpu_ids, sizeof(*bench_ns), GFP_KERNEL);
	if (!bench_ns)
		return -ENOMEM;
	bench_cache = kmem_cache_create("kmt_bench_64", BENCH_CACHE_SIZE, 0, 0,
					NULL);
	if (!bench_cache) {
		ret = -ENOMEM;
		goto out_free_ns;
	}
	bench_dir = debugfs_create_dir("kmemtrace_bench", NULL);
	if (IS_ERR(bench_dir)) {
		ret = PTR_ERR(bench_dir);
		goto out_destroy_cache;
	}
	debugfs_create_file("workload", 0600, bench_dir, NULL,
			    &bench_workload_fops);
	debugfs_create_file("run", 0200, bench_dir, NULL, &bench_run_fops);
	debugfs_create_file("result", 0400, bench_dir, NULL,
			    &bench_result_fops);
	debugfs_create_file("rate", 0600, bench_dir, NULL, &bench_rate_fops);
	return 0;

out_destroy_cache:
	kmem_cache_destroy(bench_cache);
out_free_ns:
	kfree(bench_ns);
	return ret;
}

static void __exit bench_exit(void)
{
	debugfs_remove_recursive(bench_dir);
	mutex_lock(&bench_lock);
	bench_rate_stop();
	mutex_unlock(&bench_lock);
	kmem_cache_destroy(bench_cache);
	kfree(bench_ns);
}

module_init(bench_init);
module_exit(bench_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Timed and paced slab load, single and bulk, for kmemtrace's benchmarks");
