// SPDX-License-Identifier: GPL-2.0-only
/*
 * sym_srcline.c - maps a call site of the traced kernel into the address
 * space of the ELF file that holds its DWARF, then asks a backend (libdw
 * or libbfd) for file:line. Only the trace's kallsyms/modules and the ELF
 * files given are used, so it works on any machine.
 *
 * Core kernel: vmlinux's link address = call site - KASLR offset, the
 * offset being kallsyms' _text minus vmlinux's _text. Modules (relocatable
 * .ko): the function kallsyms names, found by name in the .ko, plus the
 * offset; failing a symbol, the offset from the module's .text load
 * address in the modules snapshot.
 */
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/sym_srcline.h"

struct ko {
	char *modname;		/* kernel's spelling: '-' as '_' */
	char *path;
	void *h;		/* backend handle once opened */
	int state;		/* 0 not tried, 1 open, -1 unusable */
};

struct srcline {
	const struct srcline_ops *ops;
	const struct ksyms *ks;
	void *vmlinux;
	uint64_t kaslr;		/* runtime - link-time address of the core kernel */
	struct ko *kos;
	size_t nkos, kcap;
	char *warn;		/* accumulated warnings */
	size_t wlen;
};

int srcline_have_bfd(void)
{
#ifdef HAVE_LIBBFD
	return 1;
#else
	return 0;
#endif
}

static void warnf(struct srcline *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warnf(struct srcline *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sym_vwarn(&s->warn, &s->wlen, fmt, ap);
	va_end(ap);
}

const char *srcline_warnings(const struct srcline *s)
{
	return s && s->warn ? s->warn : "";
}

static char *modname_of(const char *path)
{
	const char *b = strrchr(path, '/');
	char *n, *q;

	b = b ? b + 1 : path;
	n = strdup(b);
	if (!n)
		return NULL;
	q = strstr(n, ".ko");
	if (q && q[3] == '\0')
		*q = '\0';
	for (q = n; *q; q++)
		if (*q == '-')
			*q = '_';
	return n;
}

static int ko_add(struct srcline *s, const char *path)
{
	struct ko *k;

	if (s->nkos == s->kcap) {
		size_t ncap = s->kcap ? s->kcap * 2 : 16;
		struct ko *p = realloc(s->kos, ncap * sizeof(*p));

		if (!p)
			return -1;
		s->kos = p;
		s->kcap = ncap;
	}
	k = &s->kos[s->nkos];
	memset(k, 0, sizeof(*k));
	k->path = strdup(path);
	k->modname = modname_of(path);
	if (!k->path || !k->modname) {
		free(k->path);
		free(k->modname);
		return -1;
	}
	s->nkos++;
	return 0;
}

/* nftw has no user pointer: the directory walk is not reentrant anyway. */
static struct srcline *walk_target;
static int walk_failed;

static int walk_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	size_t n = strlen(path);

	(void)st;
	(void)ftw;
	if (flag == FTW_F && n > 3 && strcmp(path + n - 3, ".ko") == 0 &&
	    ko_add(walk_target, path)) {
		walk_failed = 1;
		return 1;
	}
	return 0;
}

struct srcline *srcline_open(enum srcline_resolver which, const char *vmlinux,
			     char *const *kos, size_t nkos, const char *moddir,
			     const struct ksyms *ks, char *err, size_t errlen)
{
	struct srcline *s = calloc(1, sizeof(*s));
	size_t i;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->ks = ks;
	if (which == SRCLINE_DW) {
		s->ops = &srcline_dw_ops;
	} else {
#ifdef HAVE_LIBBFD
		s->ops = &srcline_bfd_ops;
#else
		snprintf(err, errlen, "--resolver=bfd: built without libbfd (binutils-dev)");
		goto fail;
#endif
	}
	if (vmlinux) {
		uint64_t link_text = 0, run_text = 0;

		s->vmlinux = s->ops->open(vmlinux, err, errlen);
		if (!s->vmlinux)
			goto fail;
		if (ks && s->ops->sym_value(s->vmlinux, "_text", &link_text) == 1)
			run_text = ksyms_addr_of(ks, "_text", NULL);
		if (!run_text && ks && s->ops->sym_value(s->vmlinux, "_stext", &link_text) == 1)
			run_text = ksyms_addr_of(ks, "_stext", NULL);
		if (run_text)
			s->kaslr = run_text - link_text;
		else if (ks)
			warnf(s, "%s: no _text in both kallsyms and vmlinux: assuming no KASLR",
			      vmlinux);
	}
	/* Given files first: they win over the module directory's. */
	for (i = 0; i < nkos; i++) {
		if (ko_add(s, kos[i])) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	}
	if (moddir) {
		walk_target = s;
		walk_failed = 0;
		if (nftw(moddir, walk_cb, 16, FTW_PHYS) != 0 || walk_failed) {
			snprintf(err, errlen, "%s: %s", moddir,
				 walk_failed ? "out of memory" : strerror(errno));
			goto fail;
		}
	}
	return s;
fail:
	srcline_close(s);
	return NULL;
}

static struct ko *ko_for(struct srcline *s, const char *mod)
{
	size_t i;

	for (i = 0; i < s->nkos; i++) {
		struct ko *k = &s->kos[i];
		char err[512];

		if (strcmp(k->modname, mod))
			continue;
		if (k->state == 0) {
			k->h = s->ops->open(k->path, err, sizeof(err));
			k->state = k->h ? 1 : -1;
			if (!k->h)
				warnf(s, "%s", err);
		}
		if (k->state == 1)
			return k;
	}
	return NULL;
}

int srcline_lookup(struct srcline *s, uint64_t addr, bool exact, char *file, size_t flen,
		   unsigned int *line)
{
	const char *name = NULL, *mod = NULL;
	uint64_t off = 0;
	int found = 0, r = 0;

	if (!s || !addr)
		return 0;
	/*
	 * A return address: the call is the byte before, in the function
	 * that holds it, even when the call ends it (a noreturn callee) and
	 * addr is the next function's first byte.
	 */
	if (!exact)
		addr--;
	if (s->ks)
		found = ksyms_lookup(s->ks, addr, &name, &off, &mod);
	if (found && mod) {
		struct ko *k = ko_for(s, mod);

		if (!k)
			return 0;
		r = s->ops->at_symbol(k->h, name, off, file, flen, line);
		if (r != 1) {
			/* The load that holds addr: a module reloaded during the trace has two. */
			const struct ksym_mod *m = ksyms_module_of(s->ks, addr);

			if (m && m->text_addr && addr >= m->text_addr &&
			    (!m->size || addr - m->base < m->size))
				r = s->ops->at_text(k->h, addr - m->text_addr, file, flen, line);
		}
	} else if (s->vmlinux) {
		r = s->ops->at_addr(s->vmlinux, addr - s->kaslr, file, flen, line);
	}
	if (r == 1) {
		srcline_clean_path(file);
		return 1;
	}
	return 0;
}

void srcline_close(struct srcline *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nkos; i++) {
		if (s->kos[i].state == 1)
			s->ops->close(s->kos[i].h);
		free(s->kos[i].path);
		free(s->kos[i].modname);
	}
	free(s->kos);
	if (s->vmlinux)
		s->ops->close(s->vmlinux);
	free(s->warn);
	free(s);
}
