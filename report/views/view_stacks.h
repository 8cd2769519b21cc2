/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * view_stacks.h - kmemtrace-report --stacks and --folded: allocations by
 * whole kernel stack (kmalloc-top, stackcount), objects outstanding by
 * stack (memleak), each call site's callers, and folded stacks for flame
 * graphs.
 */
#ifndef VIEW_STACKS_H
#define VIEW_STACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/report_core.h"
#include "sym/sym_kallsyms.h"
#include "views/view.h"

/* What --folded counts per stack. */
/* FOLD_FREES: the stacks of frees (stack_frees=1), by free events. */
enum folded_weight { FOLD_HITS, FOLD_BYTES, FOLD_REQ, FOLD_FREES };

/* The view's options (out_opts.view_args). */
struct stacks_args {
	uint64_t min_count;	/* stacks with at least this many allocations (frees) */
	const char *const *exclude;	/* function names: stacks through any are left out */
	size_t nexclude;
	enum folded_weight weight;
};

extern const struct report_view view_stacks;

/*
 * A stack's frames as every table of stacks shows them, innermost first
 * (--stacks, and each row of --interval and kmemtrace-top by stack).
 */
struct stack_frames {
	unsigned int depth;
	char **frames;		/* "function+0xoff [module]", " at FILE:LINE" when known */
	char **addrs;		/* "0x..." */
	char **lines;		/* "FILE:LINE", "" when unknown */
};

/* Adds the frames of stack idx to st (symtab_add_stack() with ks). 0, or -1 (memory). */
int stack_syms_add(struct symtab *st, const struct ksyms *ks, const struct rpt *r, uint32_t idx);
/*
 * The frames of stack idx, named from st (resolved, with the frames
 * stack_syms_add() gave it with the same ks; NULL: addresses). 0, or -1
 * (memory); stack_frames_free() in either case.
 */
int stack_frames_build(struct stack_frames *f, const struct rpt *r, const struct symtab *st,
		       const struct ksyms *ks, uint32_t idx);
void stack_frames_free(struct stack_frames *f);
/*
 * A stack in one line, by its innermost frames: the call site's function
 * and its caller's, "kmem_site <- its_caller" (raw addresses when ks is
 * NULL or names neither). Returns buf.
 */
char *stack_label(const struct ksyms *ks, const struct rpt *r, uint32_t idx, char *buf,
		  size_t len);

/*
 * Writes one line per distinct folded stack, frames root first joined by
 * ';', a space and the weight; lines sorted, equal ones (stacks differing
 * only in offsets) merged. The filters of a apply. 0, or -1 (memory).
 */
int stacks_folded(FILE *fp, const struct rpt *r, const struct out_opts *o,
		  const struct stacks_args *a);

/*
 * A flame graph of the folded stacks: one node per frame and path from the
 * root, in pre-order (a frame, then its callees left to right), each with
 * the weight of the stacks through it. Children of a node follow it at
 * depth + 1; a node's callees' weights add up to at most its own (the rest
 * are allocations made right there).
 */
struct flame_node {
	const char *name;	/* not NUL-terminated: len bytes */
	size_t len;
	unsigned int depth;	/* 0: the root-most frame */
	uint64_t w;
};

struct flame {
	struct flame_node *v;
	size_t n;
	unsigned int depth;	/* the deepest node's depth + 1 */
	uint64_t total;		/* the weight of every stack */
	struct fline *lines;	/* the names' storage */
	size_t nlines;
};

/* The flame graph of the stacks stacks_folded() writes with a. 0, or -1 (memory). */
int stacks_flame(const struct rpt *r, const struct out_opts *o, const struct stacks_args *a,
		 struct flame *f);
void flame_free(struct flame *f);

#endif /* VIEW_STACKS_H */
