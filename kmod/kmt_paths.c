// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_paths.c - the probed paths: kprobes and kretprobes on the slab
 * entry points that fire no tracepoint (bulk, lock-free, rcu sheaves),
 * registered from load to unload, recording through kmt_record().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/kstrtox.h>
#include <linux/ptrace.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "kmt_compat.h"
#include "kmt_internal.h"

/*
 * Paths that hand out or take back slab objects without a slab
 * tracepoint: the bulk API (kfree_bulk and kfree_rcu's batches end in
 * kmem_cache_free_bulk), 6.18's lock-free kmalloc/kfree and kfree_rcu's
 * percpu sheaves. Each is hooked with a kprobe (entry) or a kretprobe
 * (entry and return), registered at load and unregistered at unload:
 * arming an ftrace-based kprobe waits for tasks-RCU, seconds under load,
 * too slow for every write to "enabled", so between attach and detach
 * the handlers only follow kmt_probes_on. They allocate nothing (a
 * kretprobe's instances are preallocated, maxactive of them) and end in
 * kmt_record(), like the tracepoint probes; their records carry
 * KMT_F_PROBED.
 */
enum kmt_how {
	KMT_HOW_ABSENT,		/* no such path in this kernel */
	KMT_HOW_HOOKED,
	KMT_HOW_UNSEEN,		/* the path exists but could not be hooked */
};

struct kmt_path {
	const char *name;	/* in the coverage file */
	const char *symbol;	/* NULL when the kernel has no such path */
	struct kretprobe rp;	/* rp.kp alone when !ret */
	bool ret;
	enum kmt_how how;
	int err;		/* registration error when unseen */
};

/* What a kretprobe's entry handler keeps for its return handler. */
struct kmt_call {
	struct kmem_cache *s;
	void **objs;
	void *obj;
	unsigned long size;	/* objects, or bytes for kmalloc_nolock */
	unsigned long gfp;
	int node;
};

/*
 * Set on attach, cleared on detach (kmt_probes.c) before the wait for
 * running probes: a handler that sees it clear records nothing, so none
 * runs after detach (kretprobe returns of calls made while attached
 * included).
 */
bool kmt_probes_on;

/* Where the bulk allocator's code lies (see kmt_free_bulk_pre()). */
static unsigned long kmt_alloc_bulk_start, kmt_alloc_bulk_end;

static int kmt_alloc_bulk_entry(struct kretprobe_instance *ri,
				struct pt_regs *regs)
{
	struct kmt_call *call = (struct kmt_call *)ri->data;

	call->s = (struct kmem_cache *)kmt_arg(regs, 0);
	call->gfp = kmt_arg(regs, 1);
	call->size = kmt_arg(regs, 2);
	call->objs = (void **)kmt_arg(regs, 3);
	return 0;
}

/* All or nothing: it returns the count (bool from 6.18), 0 on failure. */
static int kmt_alloc_bulk_ret(struct kretprobe_instance *ri,
			      struct pt_regs *regs)
{
	const struct kmt_call *call = (const struct kmt_call *)ri->data;
	struct kmt_ev ev = {
		.type = KMT_REC_CACHE_ALLOC,
		.flags = KMT_F_PROBED,
		.call_site = get_kretprobe_retaddr(ri),
		.cache = call->s,
		.gfp = (__force gfp_t)call->gfp,
		.node = NUMA_NO_NODE,
	};
	unsigned long i;
	const char *name;

	if (!READ_ONCE(kmt_probes_on) || !regs_return_value(regs))
		return 0;
	kmt_cache_info(call->s, &name, &ev.bytes_req, &ev.bytes_alloc);
	for (i = 0; i < call->size; i++) {
		ev.ptr = (unsigned long)call->objs[i];
		kmt_record(&ev);
	}
	return 0;
}

static int kmt_free_bulk_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct kmem_cache *s = (struct kmem_cache *)kmt_arg(regs, 0);
	unsigned long i, size = kmt_arg(regs, 1);
	void **objs = (void **)kmt_arg(regs, 2);
	struct kmt_ev ev = {
		/* kfree_bulk() passes no cache: any slab object may come. */
		.type = s ? KMT_REC_CACHE_FREE : KMT_REC_KFREE,
		.flags = KMT_F_PROBED,
		.call_site = kmt_entry_ret(regs),
		.cache = s,
		.node = KMT_NODE_ANY,
	};

	if (!READ_ONCE(kmt_probes_on))
		return 0;
	/*
	 * Up to 6.9 a failed bulk allocation gives back what it had taken
	 * through kmem_cache_free_bulk(): objects never handed out.
	 */
	if (ev.call_site >= kmt_alloc_bulk_start &&
	    ev.call_site < kmt_alloc_bulk_end)
		return 0;
	for (i = 0; i < size; i++) {
		if (ZERO_OR_NULL_PTR(objs[i]))
			continue;
		ev.ptr = (unsigned long)objs[i];
		kmt_record_entry(&ev, (unsigned long)kp->addr);
	}
	return 0;
}

static int kmt_kmalloc_nolock_entry(struct kretprobe_instance *ri,
				    struct pt_regs *regs)
{
	struct kmt_call *call = (struct kmt_call *)ri->data;

	call->size = kmt_arg(regs, 0);
	call->gfp = KMT_NOLOCK_HAS_ARGS ? kmt_arg(regs, 1) : 0;
	call->node = KMT_NOLOCK_HAS_ARGS ? (int)kmt_arg(regs, 2) :
		     NUMA_NO_NODE;
	return 0;
}

/* Like the kmalloc tracepoint, a failure is recorded with ptr 0. */
static int kmt_kmalloc_nolock_ret(struct kretprobe_instance *ri,
				  struct pt_regs *regs)
{
	const struct kmt_call *call = (const struct kmt_call *)ri->data;
	unsigned long ptr = regs_return_value(regs);
	struct kmt_ev ev = {
		.type = KMT_REC_KMALLOC,
		.flags = KMT_F_PROBED,
		.call_site = get_kretprobe_retaddr(ri),
		.ptr = ZERO_OR_NULL_PTR((void *)ptr) ? 0 : ptr,
		.bytes_req = call->size,
		.bytes_alloc = kmalloc_size_roundup(call->size),
		.gfp = (__force gfp_t)call->gfp,
		.node = call->node,
	};

	if (READ_ONCE(kmt_probes_on) && call->size)
		kmt_record(&ev);
	return 0;
}

static int kmt_kfree_nolock_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct kmt_ev ev = {
		.type = KMT_REC_KFREE,
		.flags = KMT_F_PROBED,
		.call_site = kmt_entry_ret(regs),
		.ptr = kmt_arg(regs, 0),
		.node = KMT_NODE_ANY,
	};

	if (READ_ONCE(kmt_probes_on) &&
	    !ZERO_OR_NULL_PTR((void *)(unsigned long)ev.ptr))
		kmt_record_entry(&ev, (unsigned long)kp->addr);
	return 0;
}

static int kmt_kfree_rcu_sheaf_entry(struct kretprobe_instance *ri,
				     struct pt_regs *regs)
{
	struct kmt_call *call = (struct kmt_call *)ri->data;

	call->s = (struct kmem_cache *)kmt_arg(regs, 0);
	call->obj = (void *)kmt_arg(regs, 1);
	return 0;
}

/*
 * true: the object went into a sheaf that is given back whole after a
 * grace period, with no free of its own; false: kfree_rcu() takes its
 * usual way, to a free the other probes see.
 */
static int kmt_kfree_rcu_sheaf_ret(struct kretprobe_instance *ri,
				   struct pt_regs *regs)
{
	const struct kmt_call *call = (const struct kmt_call *)ri->data;
	struct kmt_ev ev = {
		.type = KMT_REC_CACHE_FREE,
		.flags = KMT_F_PROBED,
		.call_site = get_kretprobe_retaddr(ri),
		.ptr = (unsigned long)call->obj,
		.cache = call->s,
		.node = KMT_NODE_ANY,
	};

	if (READ_ONCE(kmt_probes_on) && regs_return_value(regs))
		kmt_record(&ev);
	return 0;
}

static struct kmt_path kmt_paths[] = {
	{
		.name = "kmem_cache_alloc_bulk",
		.symbol = KMT_SYM_ALLOC_BULK,
		.ret = true,
		.rp = {
			.entry_handler = kmt_alloc_bulk_entry,
			.handler = kmt_alloc_bulk_ret,
		},
	},
	{
		.name = "kmem_cache_free_bulk",
		.symbol = KMT_SYM_FREE_BULK,
		.rp.kp.pre_handler = kmt_free_bulk_pre,
	},
	{
		.name = "kmalloc_nolock",
		.symbol = KMT_SYM_KMALLOC_NOLOCK,
		.ret = true,
		.rp = {
			.entry_handler = kmt_kmalloc_nolock_entry,
			.handler = kmt_kmalloc_nolock_ret,
		},
	},
	{
		.name = "kfree_nolock",
		.symbol = KMT_SYM_KFREE_NOLOCK,
		.rp.kp.pre_handler = kmt_kfree_nolock_pre,
	},
	{
		.name = "kfree_rcu_sheaf",
		.symbol = KMT_SYM_KFREE_RCU_SHEAF,
		.ret = true,
		.rp = {
			.entry_handler = kmt_kfree_rcu_sheaf_entry,
			.handler = kmt_kfree_rcu_sheaf_ret,
		},
	},
};

/*
 * sprint_symbol() gives "name+0xOFF/0xSIZE": the bounds of the function
 * around @addr, or none.
 */
void kmt_function_bounds(unsigned long addr, unsigned long *start,
			 unsigned long *end)
{
	char text[KSYM_SYMBOL_LEN];
	unsigned long off, size;
	char *plus, *slash, *space;

	*start = 0;
	*end = 0;
	sprint_symbol(text, addr);
	plus = strrchr(text, '+');
	slash = plus ? strchr(plus, '/') : NULL;
	if (!slash)
		return;
	*slash = '\0';
	space = strchr(slash + 1, ' ');
	if (space)
		*space = '\0';
	if (kstrtoul(plus + 1, 0, &off) || kstrtoul(slash + 1, 0, &size))
		return;
	*start = addr - off;
	*end = *start + size;
}

/*
 * Registers every path's probe. A path that cannot be hooked is only
 * reported (coverage file, dmesg): tracing goes on without it.
 */
void kmt_register_paths(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kmt_paths); i++) {
		struct kmt_path *path = &kmt_paths[i];
		struct kprobe *kp = &path->rp.kp;

		if (!path->symbol) {
			path->how = KMT_HOW_ABSENT;
			continue;
		}
		kp->symbol_name = path->symbol;
		if (path->ret) {
			path->rp.data_size = sizeof(struct kmt_call);
			/* Bulk allocations may sleep: instances outlive CPUs. */
			path->rp.maxactive = max(64U, 4 * num_possible_cpus());
			path->err = register_kretprobe(&path->rp);
		} else {
			path->err = register_kprobe(kp);
		}
		path->how = path->err ? KMT_HOW_UNSEEN : KMT_HOW_HOOKED;
		if (path->err)
			pr_warn("cannot hook %s (%s): %d; its objects are not recorded\n",
				path->name, path->symbol, path->err);
	}
	if (!KMT_HAVE_ENTRY_RET)
		pr_info("no return address at a probe's entry on this arch: kmem_cache_free_bulk and kfree_nolock records name no call site\n");
	if (kmt_paths[0].how == KMT_HOW_HOOKED)
		kmt_function_bounds((unsigned long)kmt_paths[0].rp.kp.addr,
				    &kmt_alloc_bulk_start, &kmt_alloc_bulk_end);
}

void kmt_unregister_paths(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kmt_paths); i++) {
		struct kmt_path *path = &kmt_paths[i];

		if (path->how != KMT_HOW_HOOKED)
			continue;
		if (path->ret)
			unregister_kretprobe(&path->rp);
		else
			unregister_kprobe(&path->rp.kp);
	}
}

/* The coverage file's lines for the probed paths (see kmt_debugfs.c). */
void kmt_paths_show(struct seq_file *m)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kmt_paths); i++) {
		const struct kmt_path *path = &kmt_paths[i];
		int missed = path->ret ? path->rp.nmissed : path->rp.kp.nmissed;

		switch (path->how) {
		case KMT_HOW_ABSENT:
			seq_printf(m, "%s absent no such function in this kernel\n",
				   path->name);
			break;
		case KMT_HOW_HOOKED:
			seq_printf(m, "%s %s %s", path->name,
				   path->ret ? "kretprobe" : "kprobe",
				   path->symbol);
			if (missed)
				seq_printf(m, " (%d calls missed)", missed);
			seq_putc(m, '\n');
			break;
		case KMT_HOW_UNSEEN:
			seq_printf(m, "%s unseen %s could not be hooked: error %d\n",
				   path->name, path->symbol, path->err);
			break;
		}
	}
}
