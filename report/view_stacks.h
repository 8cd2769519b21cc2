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

#include "out_table.h"
#include "report_core.h"
#include "report_out.h"

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
 * Writes one line per distinct folded stack, frames root first joined by
 * ';', a space and the weight; lines sorted, equal ones (stacks differing
 * only in offsets) merged. The filters of a apply. 0, or -1 (memory).
 */
int stacks_folded(FILE *fp, const struct rpt *r, const struct out_opts *o,
		  const struct stacks_args *a);

#endif /* VIEW_STACKS_H */
