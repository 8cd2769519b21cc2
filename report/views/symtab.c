// SPDX-License-Identifier: GPL-2.0-only
/*
 * symtab.c - symbolizes the report's addresses once each, after the trace
 * was read, never per event.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "views/view.h"
#include "views/symtab.h"

#define SYM_LEN		512
#define FILE_LEN	1024

int symtab_add_frame(struct symtab *t, uint64_t addr, bool exact)
{
	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 256;
		struct symres *p = realloc(t->v, ncap * sizeof(*p));

		if (!p)
			return -1;
		t->v = p;
		t->cap = ncap;
	}
	memset(&t->v[t->n], 0, sizeof(t->v[0]));
	t->v[t->n].addr = addr;
	t->v[t->n++].exact = exact;
	return 0;
}

int symtab_add(struct symtab *t, uint64_t addr)
{
	return symtab_add_frame(t, addr, false);
}

int symtab_add_stack(struct symtab *t, const struct ksyms *ks, const uint64_t *frames,
		     unsigned int depth)
{
	unsigned int k;

	for (k = 0; k < depth; k++)
		if (symtab_add_frame(t, frames[k], ksyms_frame_exact(ks, frames, k)))
			return -1;
	return 0;
}

int symtab_add_report(struct symtab *t, const struct rpt *r)
{
	size_t i;

	for (i = 0; i < rpt_nsites(r); i++)
		if (symtab_add(t, rpt_site(r, i)->addr))
			return -1;
	for (i = 0; i < rpt_nerrors(r); i++) {
		const struct rpt_error *e = rpt_error(r, i);

		if (symtab_add(t, e->alloc_site) || symtab_add(t, e->free_site))
			return -1;
	}
	return 0;
}

static int symres_cmp(const void *a, const void *b)
{
	const struct symres *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (int)x->exact - (int)y->exact;
}

int symtab_resolve(struct symtab *t, const struct out_opts *o)
{
	char sym[SYM_LEN], file[FILE_LEN];
	size_t i, j = 0;

	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), symres_cmp);
	for (i = 0; i < t->n; i++)
		if (!j || symres_cmp(&t->v[i], &t->v[j - 1]))
			t->v[j++] = t->v[i];
	t->n = j;
	for (i = 0; i < t->n; i++) {
		struct symres *s = &t->v[i];
		unsigned int line;

		if (o->raw_ip)
			snprintf(sym, sizeof(sym), "0x%" PRIx64, s->addr);
		else
			ksyms_format_frame(o->ks, s->addr, s->exact, sym, sizeof(sym));
		s->sym = strdup(sym);
		if (!s->sym)
			return -1;
		if (o->sl && srcline_lookup(o->sl, s->addr, s->exact, file, sizeof(file), &line)) {
			s->file = strdup(file);
			if (!s->file)
				return -1;
			s->line = line;
		}
	}
	return 0;
}

const struct symres *symtab_get_frame(const struct symtab *t, uint64_t addr, bool exact)
{
	struct symres key = { .addr = addr, .exact = exact };

	return t->n ? bsearch(&key, t->v, t->n, sizeof(*t->v), symres_cmp) : NULL;
}

const struct symres *symtab_get(const struct symtab *t, uint64_t addr)
{
	return symtab_get_frame(t, addr, false);
}

const struct symres *symtab_get_stack(const struct symtab *t, const struct ksyms *ks,
				      const uint64_t *frames, unsigned int i)
{
	return symtab_get_frame(t, frames[i], ksyms_frame_exact(ks, frames, i));
}

void symtab_free(struct symtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i].sym);
		free(t->v[i].file);
	}
	free(t->v);
}
