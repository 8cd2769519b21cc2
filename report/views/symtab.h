/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * symtab.h - the report's addresses, symbolized once each after the trace
 * was read: every view lists what it will name (symtab_add()), then reads
 * the answers (symtab_get()).
 */
#ifndef SYMTAB_H
#define SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct out_opts;
struct rpt;

/* An address and what it names. */
struct symres {
	uint64_t addr;
	char *sym;		/* "function+0xoff [module]", or "0x..." */
	char *file;		/* NULL if unknown */
	unsigned int line;
};

struct symtab {
	struct symres *v;
	size_t n, cap;
};

/* Adds an address to resolve; 0 or -1 (memory). Duplicates are fine. */
int symtab_add(struct symtab *t, uint64_t addr);
/* The resolution of an address added before symtab_resolve(), or NULL. */
const struct symres *symtab_get(const struct symtab *t, uint64_t addr);

/* Adds the addresses every report names: call sites and both sites of each error. 0 or -1. */
int symtab_add_report(struct symtab *t, const struct rpt *r);
/*
 * Resolves every address added: symbols from o->ks (raw addresses with
 * o->raw_ip), file:line from o->sl. 0, or -1 out of memory.
 */
int symtab_resolve(struct symtab *t, const struct out_opts *o);
void symtab_free(struct symtab *t);

#endif /* SYMTAB_H */
