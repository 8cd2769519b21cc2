/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * symtab.h - the report's addresses, symbolized once each after the trace
 * was read: every view lists what it will name (symtab_add()), then reads
 * the answers (symtab_get()).
 */
#ifndef SYMTAB_H
#define SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksyms;
struct out_opts;
struct rpt;

/* An address and what it names. */
struct symres {
	uint64_t addr;
	bool exact;		/* the instruction itself, not a return address (ksyms_frame_exact()) */
	char *sym;		/* "function+0xoff [module]", or "0x..." */
	char *file;		/* NULL if unknown */
	unsigned int line;
};

struct symtab {
	struct symres *v;
	size_t n, cap;
};

/* Adds a return address (a call site) to resolve; 0 or -1 (memory). Duplicates are fine. */
int symtab_add(struct symtab *t, uint64_t addr);
/* The resolution of a return address added before symtab_resolve(), or NULL. */
const struct symres *symtab_get(const struct symtab *t, uint64_t addr);

/* The same for a stack frame, a return address or, exact, an interrupted instruction. */
int symtab_add_frame(struct symtab *t, uint64_t addr, bool exact);
const struct symres *symtab_get_frame(const struct symtab *t, uint64_t addr, bool exact);
/* Adds the depth frames of a stack, each as ksyms_frame_exact() says with ks. 0 or -1. */
int symtab_add_stack(struct symtab *t, const struct ksyms *ks, const uint64_t *frames,
		     unsigned int depth);
/* Frame i of a stack, as symtab_add_stack() added it, or NULL. */
const struct symres *symtab_get_stack(const struct symtab *t, const struct ksyms *ks,
				      const uint64_t *frames, unsigned int i);

/* Adds the addresses every report names: call sites and both sites of each error. 0 or -1. */
int symtab_add_report(struct symtab *t, const struct rpt *r);
/*
 * Resolves every address added: symbols from o->ks (raw addresses with
 * o->raw_ip), file:line from o->sl. 0, or -1 out of memory.
 */
int symtab_resolve(struct symtab *t, const struct out_opts *o);
void symtab_free(struct symtab *t);

#endif /* SYMTAB_H */
