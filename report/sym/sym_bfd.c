// SPDX-License-Identifier: GPL-2.0-only
/*
 * sym_bfd.c - the libbfd (binutils) file:line backend, the alternative to
 * libdw: BFD applies a relocatable module's relocations to its DWARF
 * itself, and addresses are given as section + offset.
 */
/* Built only with HAVE_LIBBFD (report/report.mk). */

/* bfd.h wants to know the package it is built into. */
#define PACKAGE "kmemtrace"
#define PACKAGE_VERSION "1"
#include <bfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/sym_srcline.h"

struct bfdh {
	bfd *abfd;
	asymbol **syms;
	long nsyms;
};

static void bh_close(void *p)
{
	struct bfdh *h = p;

	if (!h)
		return;
	free(h->syms);
	if (h->abfd)
		bfd_close(h->abfd);
	free(h);
}

static void *bh_open(const char *path, char *err, size_t errlen)
{
	static int inited;
	struct bfdh *h = calloc(1, sizeof(*h));
	long sz;

	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (!inited) {
		bfd_init();
		inited = 1;
	}
	h->abfd = bfd_openr(path, NULL);
	if (!h->abfd)
		goto bfd_err;
	if (!bfd_check_format(h->abfd, bfd_object))
		goto bfd_err;
	/*
	 * A libbfd built for other targets opens another arch's object through a generic ELF
	 * target, which cannot apply its relocations to the debug sections of a .ko: every
	 * lookup would then fail without a word.
	 */
	if (bfd_get_arch(h->abfd) == bfd_arch_unknown) {
		snprintf(err, errlen,
			 "%s: this host's libbfd does not support its architecture (%s): no file:line from libbfd; libdw (--resolver=dw) reads it",
			 path, bfd_get_target(h->abfd));
		bh_close(h);
		return NULL;
	}
	sz = bfd_get_symtab_upper_bound(h->abfd);
	if (sz <= 0) {
		snprintf(err, errlen, "%s: no symbol table", path);
		bh_close(h);
		return NULL;
	}
	h->syms = malloc((size_t)sz);
	if (!h->syms) {
		snprintf(err, errlen, "out of memory");
		bh_close(h);
		return NULL;
	}
	h->nsyms = bfd_canonicalize_symtab(h->abfd, h->syms);
	if (h->nsyms < 0)
		goto bfd_err;
	if (!bfd_get_section_by_name(h->abfd, ".debug_info")) {
		snprintf(err, errlen, "%s: no DWARF debug information", path);
		bh_close(h);
		return NULL;
	}
	return h;
bfd_err:
	snprintf(err, errlen, "%s: %s", path, bfd_errmsg(bfd_get_error()));
	bh_close(h);
	return NULL;
}

/* file:line at offset off of section sec, through inlines to the outermost caller. */
static int bh_line(struct bfdh *h, asection *sec, uint64_t off, char *file, size_t flen,
		   unsigned int *line)
{
	const char *src = NULL, *func = NULL;
	unsigned int ln = 0;

	if (!bfd_find_nearest_line(h->abfd, sec, h->syms, off, &src, &func, &ln))
		return 0;
	/* Each call steps out one inlining level; the last is the real function. */
	for (;;) {
		const char *s2 = NULL, *f2 = NULL;
		unsigned int l2 = 0;

		if (!bfd_find_inliner_info(h->abfd, &s2, &f2, &l2))
			break;
		src = s2;
		func = f2;
		ln = l2;
	}
	if (!src || !ln)
		return 0;
	snprintf(file, flen, "%s", src);
	*line = ln;
	return 1;
}

static asymbol *find_sym(struct bfdh *h, const char *name, bool func_only)
{
	long i;

	for (i = 0; i < h->nsyms; i++) {
		asymbol *s = h->syms[i];

		if (func_only && !(s->flags & BSF_FUNCTION))
			continue;
		if (bfd_is_und_section(s->section) || strcmp(bfd_asymbol_name(s), name))
			continue;
		return s;
	}
	return NULL;
}

static int bh_at_symbol(void *p, const char *name, uint64_t off, char *file, size_t flen,
			unsigned int *line)
{
	struct bfdh *h = p;
	asymbol *s = find_sym(h, name, true);

	if (!s)
		return 0;
	return bh_line(h, s->section, s->value + off, file, flen, line);
}

static int bh_at_text(void *p, uint64_t off, char *file, size_t flen, unsigned int *line)
{
	struct bfdh *h = p;
	asection *sec = bfd_get_section_by_name(h->abfd, ".text");

	if (!sec)
		return 0;
	return bh_line(h, sec, off, file, flen, line);
}

static int bh_at_addr(void *p, uint64_t addr, char *file, size_t flen, unsigned int *line)
{
	struct bfdh *h = p;
	asection *sec;

	for (sec = h->abfd->sections; sec; sec = sec->next) {
		bfd_vma vma = bfd_section_vma(sec);

		if ((bfd_section_flags(sec) & SEC_ALLOC) && addr >= vma &&
		    addr - vma < bfd_section_size(sec))
			return bh_line(h, sec, addr - vma, file, flen, line);
	}
	return 0;
}

static int bh_sym_value(void *p, const char *name, uint64_t *value)
{
	asymbol *s = find_sym(p, name, false);

	if (!s)
		return 0;
	*value = bfd_asymbol_value(s);
	return 1;
}

/*
 * LeakSanitizer's hook, for the sanitizer build: libbfd 2.40 keeps a few
 * bytes of its own after bfd_close(), which are not ours to free.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libbfd\n";
}

const struct srcline_ops srcline_bfd_ops = {
	.name = "bfd",
	.open = bh_open,
	.at_symbol = bh_at_symbol,
	.at_text = bh_at_text,
	.at_addr = bh_at_addr,
	.sym_value = bh_sym_value,
	.close = bh_close,
};
