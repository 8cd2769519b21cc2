// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_debugfs.c - the files under <debugfs>/kmemtrace/ beside the cpuN
 * buffers: abi_version, enabled, total_overruns, coverage, stats, stacks,
 * init_kallsyms; filter is kmt_filter.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

#include "kmt_internal.h"

static ssize_t kmt_abi_read(struct file *file, char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	char text[24];
	int len;

	len = scnprintf(text, sizeof(text), "%u.%u\n", KMT_ABI_MAJOR,
			KMT_ABI_MINOR);
	return simple_read_from_buffer(ubuf, count, ppos, text, len);
}

static const struct file_operations kmt_abi_fops = {
	.owner = THIS_MODULE,
	.read = kmt_abi_read,
	.llseek = default_llseek,
};

static ssize_t kmt_enabled_read(struct file *file, char __user *ubuf,
				size_t count, loff_t *ppos)
{
	char text[2] = { READ_ONCE(kmt_enabled) ? '1' : '0', '\n' };

	return simple_read_from_buffer(ubuf, count, ppos, text, sizeof(text));
}

static ssize_t kmt_enabled_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	bool on;
	int ret;

	ret = kstrtobool_from_user(ubuf, count, &on);
	if (ret)
		return ret;
	ret = kmt_set_enabled(on);
	return ret ? ret : count;
}

static const struct file_operations kmt_enabled_fops = {
	.owner = THIS_MODULE,
	.read = kmt_enabled_read,
	.write = kmt_enabled_write,
	.llseek = default_llseek,
};

static ssize_t kmt_overruns_read(struct file *file, char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	char text[24];
	int len;

	len = scnprintf(text, sizeof(text), "%llu\n", kmt_total_dropped());
	return simple_read_from_buffer(ubuf, count, ppos, text, len);
}

static const struct file_operations kmt_overruns_fops = {
	.owner = THIS_MODULE,
	.read = kmt_overruns_read,
	.llseek = default_llseek,
};

/*
 * coverage: how each path that hands out or takes back slab objects is
 * recorded on this kernel: "PATH HOW [DETAIL]", HOW one of tracepoint,
 * kprobe, kretprobe, absent (no such path here), unseen (not hooked:
 * its objects are invisible to the trace).
 */
static int kmt_coverage_show(struct seq_file *m, void *v)
{
	static const char * const tracepoints[] = {
		"kmalloc", "kmem_cache_alloc", "kfree", "kmem_cache_free",
	};
	unsigned int i;

	seq_puts(m, "# path how detail\n");
	for (i = 0; i < ARRAY_SIZE(tracepoints); i++)
		seq_printf(m, "%s tracepoint\n", tracepoints[i]);
	kmt_paths_show(m);
	return 0;
}

static int kmt_coverage_open(struct inode *inode, struct file *file)
{
	return single_open(file, kmt_coverage_show, NULL);
}

static const struct file_operations kmt_coverage_fops = {
	.owner = THIS_MODULE,
	.open = kmt_coverage_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

static int kmt_stats_show(struct seq_file *m, void *v)
{
	u64 emitted, written, dropped;
	unsigned int cpu;

	seq_printf(m, "# buffers %s: subbufs %u subbuf_size %u bytes_per_cpu %llu possible_cpus %u total %llu mem_share %u available %llu allowed %llu\n",
		   kmt_budget.sized, kmt_subbufs, kmt_subbuf_size, kmt_budget.per_cpu,
		   kmt_budget.cpus, kmt_budget.total, kmt_mem_share,
		   kmt_budget.available, kmt_budget.allowed);
	seq_puts(m, "# cpu emitted written dropped\n");
	for_each_possible_cpu(cpu) {
		kmt_snapshot(cpu, &emitted, &written, &dropped);
		seq_printf(m, "%u %llu %llu %llu\n", cpu, emitted, written,
			   dropped);
	}
	return 0;
}

static int kmt_stats_open(struct inode *inode, struct file *file)
{
	return single_open(file, kmt_stats_show, NULL);
}

static const struct file_operations kmt_stats_fops = {
	.owner = THIS_MODULE,
	.open = kmt_stats_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

/*
 * stacks: how stacks are taken (fixed at load) and, per possible CPU,
 * since load: written events that had a stack asked for, by outcome,
 * stacks written and dropped, and the table's entries in use now.
 */
static int kmt_stacks_show(struct seq_file *m, void *v)
{
	struct kmt_stack_stats st;
	unsigned int cpu;

	seq_printf(m, "# stacks depth %u frees %u entries %u bytes_per_cpu %llu cache %u check %u\n",
		   kmt_stack_depth, kmt_stack_depth && kmt_stack_frees,
		   kmt_stack_depth ? kmt_stack_entries : 0, kmt_stack_cost(),
		   kmt_stack_depth ? kmt_stack_cache : 0,
		   kmt_stack_depth && kmt_stack_cache && kmt_stack_check);
	seq_puts(m, "# cpu with_stack no_stack_full no_stack_unwind stacks_written stacks_dropped entries_used walked cached check_failed\n");
	for_each_possible_cpu(cpu) {
		kmt_stack_snapshot(cpu, &st);
		seq_printf(m, "%u %llu %llu %llu %llu %llu %u %llu %llu %llu\n",
			   cpu, st.with_stack, st.no_stack_full,
			   st.no_stack_unwind, st.stacks_written,
			   st.stacks_dropped, st.used, st.walked, st.cached,
			   st.check_failed);
	}
	return 0;
}

static int kmt_stacks_open(struct inode *inode, struct file *file)
{
	return single_open(file, kmt_stacks_show, NULL);
}

static const struct file_operations kmt_stacks_fops = {
	.owner = THIS_MODULE,
	.open = kmt_stacks_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

/* init_kallsyms: kmt_modsyms.c's copies of later modules' init symbols. */
static int kmt_init_kallsyms_show(struct seq_file *m, void *v)
{
	kmt_modsyms_show(m);
	return 0;
}

static int kmt_init_kallsyms_open(struct inode *inode, struct file *file)
{
	return single_open(file, kmt_init_kallsyms_show, NULL);
}

static const struct file_operations kmt_init_kallsyms_fops = {
	.owner = THIS_MODULE,
	.open = kmt_init_kallsyms_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

/* At load, once relay made the cpuN files in @dir. */
void kmt_debugfs_create_files(struct dentry *dir)
{
	debugfs_create_file(KMT_DEBUGFS_ABI, 0400, dir, NULL,
			    &kmt_abi_fops);
	debugfs_create_file(KMT_DEBUGFS_ENABLED, 0600, dir, NULL,
			    &kmt_enabled_fops);
	debugfs_create_file(KMT_DEBUGFS_OVERRUNS, 0400, dir, NULL,
			    &kmt_overruns_fops);
	debugfs_create_file(KMT_DEBUGFS_STATS, 0400, dir, NULL,
			    &kmt_stats_fops);
	debugfs_create_file(KMT_DEBUGFS_COVERAGE, 0400, dir, NULL,
			    &kmt_coverage_fops);
	debugfs_create_file(KMT_DEBUGFS_STACKS, 0400, dir, NULL,
			    &kmt_stacks_fops);
	debugfs_create_file(KMT_DEBUGFS_FILTER, 0600, dir, NULL,
			    &kmt_filter_fops);
	debugfs_create_file(KMT_DEBUGFS_INIT_KALLSYMS, 0400, dir, NULL,
			    &kmt_init_kallsyms_fops);
}
