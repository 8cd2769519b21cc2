// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_modsyms.c - the symbols of the init code of modules loaded after
 * this one, kept past their init for <debugfs>/kmemtrace/init_kallsyms.
 *
 * A module's init code is an allocation of its own, outside the range
 * /proc/modules gives it, and /proc/kallsyms lists its symbols only while
 * the init runs: then the kernel switches the module to its core symbols
 * and frees the init code. Stacks taken during a load (do_one_initcall()
 * calling the module's init) have frames there, which kmemtraced, reading
 * /proc/kallsyms when it next sees the module, usually finds named by
 * nothing. So at each module's MODULE_STATE_COMING, before its init runs,
 * the symbols in its init text are copied here, as /proc/kallsyms prints
 * them; they stay until the module goes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "kmt_compat.h"
#include "kmt_internal.h"

/* One module's init text symbols, "ADDR TYPE NAME\t[MODULE]\n" lines. */
struct kmt_modsyms {
	struct list_head list;
	const struct module *mod;	/* only compared, at its MODULE_STATE_GOING */
	size_t len;
	char text[];
};

static LIST_HEAD(kmt_modsyms_list);
static DEFINE_MUTEX(kmt_modsyms_lock);

#ifdef CONFIG_KALLSYMS
/*
 * Prints @mod's symbols in [@start, @start + @size) into @buf (@room
 * bytes, none when 0); returns the bytes they take, as snprintf() does.
 */
static size_t kmt_modsyms_print(const struct mod_kallsyms *ks,
				const struct module *mod, unsigned long start,
				unsigned long size, char *buf, size_t room)
{
	size_t len = 0;
	unsigned int i;

	for (i = 0; i < ks->num_symtab; i++) {
		const char *name = ks->strtab + ks->symtab[i].st_name;
		unsigned long addr = ks->symtab[i].st_value;
		char *at = len < room ? buf + len : NULL;

		/* /proc/kallsyms leaves out symbols without a name too. */
		if (!*name || addr - start >= size)
			continue;
		len += snprintf(at, at ? room - len : 0, "%0*lx %c %s\t[%s]\n",
				(int)(2 * sizeof(long)), addr, ks->typetab[i],
				name, mod->name);
	}
	return len;
}

static void kmt_modsyms_add(struct module *mod)
{
	const struct mod_kallsyms *ks;
	unsigned long start, size;
	struct kmt_modsyms *e;
	size_t len;

	kmt_module_init_text(mod, &start, &size);
	if (!size)
		return;
	/*
	 * Until the init returns, only the module's loader, which calls
	 * this notifier, changes its kallsyms (to the core symbols).
	 */
	ks = rcu_dereference_protected(mod->kallsyms, true);
	len = kmt_modsyms_print(ks, mod, start, size, NULL, 0);
	if (!len)
		return;
	e = kvmalloc(struct_size(e, text, len + 1), GFP_KERNEL);
	if (!e) {
		pr_notice_ratelimited("no memory for the %zu bytes of %s's init symbols: frames in its init stay unnamed\n",
				      len, mod->name);
		return;
	}
	e->mod = mod;
	e->len = kmt_modsyms_print(ks, mod, start, size, e->text, len + 1);
	mutex_lock(&kmt_modsyms_lock);
	list_add_tail(&e->list, &kmt_modsyms_list);
	mutex_unlock(&kmt_modsyms_lock);
}
#else
/* No /proc/kallsyms either: nothing could name a frame. */
static void kmt_modsyms_add(struct module *mod)
{
}
#endif

static void kmt_modsyms_drop(const struct module *mod)
{
	struct kmt_modsyms *e, *next;

	mutex_lock(&kmt_modsyms_lock);
	list_for_each_entry_safe(e, next, &kmt_modsyms_list, list) {
		if (mod && e->mod != mod)
			continue;
		list_del(&e->list);
		kvfree(e);
	}
	mutex_unlock(&kmt_modsyms_lock);
}

/* A blocking notifier: process context, free to allocate. */
static int kmt_modsyms_notify(struct notifier_block *nb, unsigned long action,
			      void *data)
{
	if (action == MODULE_STATE_COMING)
		kmt_modsyms_add(data);
	else if (action == MODULE_STATE_GOING)
		kmt_modsyms_drop(data);
	return NOTIFY_DONE;
}

static struct notifier_block kmt_modsyms_nb = {
	.notifier_call = kmt_modsyms_notify,
};

int kmt_modsyms_register(void)
{
	return register_module_notifier(&kmt_modsyms_nb);
}

void kmt_modsyms_unregister(void)
{
	unregister_module_notifier(&kmt_modsyms_nb);
	kmt_modsyms_drop(NULL);
}

void kmt_modsyms_show(struct seq_file *m)
{
	const struct kmt_modsyms *e;

	mutex_lock(&kmt_modsyms_lock);
	list_for_each_entry(e, &kmt_modsyms_list, list)
		seq_write(m, e->text, e->len);
	mutex_unlock(&kmt_modsyms_lock);
}
