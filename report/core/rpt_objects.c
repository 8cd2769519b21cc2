// SPDX-License-Identifier: GPL-2.0-only
/*
 * rpt_objects.c - the object table (ptr -> what allocated it, or when it
 * was freed): its memory, and its rebuilding when it fills. Its lookups,
 * on every event, are inline in report_core_int.h.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/report_core_int.h"

/*
 * Zeroed memory for a hash table. Big tables are probed at random, one
 * TLB miss per probe with 4 KiB pages: they get their own mapping, with
 * transparent huge pages asked for.
 */
#define BIG_TABLE	(1u << 20)

static void *tab_alloc(size_t bytes)
{
	void *p;

	if (bytes < BIG_TABLE)
		return calloc(1, bytes);
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(p, bytes, MADV_HUGEPAGE);
#endif
	return p;
}

static void tab_free(void *p, size_t bytes)
{
	if (!p)
		return;
	if (bytes < BIG_TABLE)
		free(p);
	else
		munmap(p, bytes);
}

/* A table of 1 << bits slots: its size and what the lookups derive from it. */
static void obj_set_bits(struct objtab *t, unsigned int bits)
{
	t->bits = bits;
	t->shift = 64 - bits;
	t->mask = ((size_t)1 << bits) - 1;
}

int rpt_obj_rebuild(struct objtab *t)
{
	size_t oldcap = (size_t)1 << t->bits, keep = 0, cap, mask, i, j;
	unsigned int nb = OBJ_MIN_BITS;
	uint32_t *nstk = NULL;
	struct obj *ne;

	for (i = 0; i < oldcap; i++)
		keep += obj_kept(t, &t->e[i]);
	while (((size_t)1 << nb) * 4 < (keep + 1) * 10)
		nb++;
	cap = (size_t)1 << nb;
	mask = cap - 1;
	ne = tab_alloc(cap * sizeof(*ne));
	if (!ne)
		return -1;
	if (t->stk) {
		nstk = malloc(cap * sizeof(*nstk));
		if (!nstk) {
			tab_free(ne, cap * sizeof(*ne));
			return -1;
		}
	}
	for (i = 0; i < oldcap; i++) {
		const struct obj *o = &t->e[i];

		if (!obj_kept(t, o))
			continue;
		for (j = hash64(o->ptr, nb); ne[j].ptr; j = (j + 1) & mask)
			;
		ne[j] = *o;
		if (nstk)
			nstk[j] = t->stk[i];
	}
	free(t->stk);
	t->stk = nstk;
	tab_free(t->e, oldcap * sizeof(*t->e));
	t->e = ne;
	obj_set_bits(t, nb);
	t->used = keep;
	t->full = cap * 7 / 10;
	return 0;
}

int rpt_obj_init(struct objtab *t)
{
	memset(t, 0, sizeof(*t));
	obj_set_bits(t, OBJ_MIN_BITS);
	t->full = ((size_t)1 << t->bits) * 7 / 10;
	t->e = tab_alloc(((size_t)1 << t->bits) * sizeof(*t->e));
	return t->e ? 0 : -1;
}

int rpt_obj_stk_init(struct objtab *t)
{
	size_t cap = (size_t)1 << t->bits;

	t->stk = malloc(cap * sizeof(*t->stk));
	if (!t->stk)
		return -1;
	memset(t->stk, 0xff, cap * sizeof(*t->stk));
	return 0;
}

void rpt_obj_fini(struct objtab *t)
{
	free(t->stk);
	if (t->e)
		tab_free(t->e, ((size_t)1 << t->bits) * sizeof(*t->e));
}

size_t rpt_obj_memory(const struct objtab *t)
{
	return ((size_t)1 << t->bits) * (sizeof(struct obj) + (t->stk ? sizeof(*t->stk) : 0));
}
