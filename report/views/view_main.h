/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * view_main.h - the report's main tables (call sites, caches, objects by
 * address) and its errors and outstanding objects, as sorted rows and as
 * tables (views/view.h) for the writers that walk tables.
 */
#ifndef VIEW_MAIN_H
#define VIEW_MAIN_H

#include "views/view.h"

/* One shape for every table, so that one sort serves all. */
struct row {
	uint64_t key;		/* call site, address or cache id */
	uint64_t site;		/* call site (the per-address view's latest) */
	const char *name;	/* symbol or cache name */
	const struct symres *sr;	/* symbol of site */
	const struct rpt_cache *cache;
	uint64_t hits, failed, bytes_req, bytes_alloc, bytes_freed, frees, xcpu, xnode;
	uint64_t out, out_bytes, age, live, live_bytes, untracked;
	double frag;
};

/* Rows of the chosen view (o->view), filtered and sorted; NULL on memory failure. */
struct row *view_rows(const struct rpt *r, const struct out_opts *o,
		      const struct symtab *st, size_t *n);
/* Call sites with objects still live at the end, by bytes held. */
struct row *outstanding_rows(const struct rpt *r, const struct symtab *st, size_t *n);
/* Errors by kind, then count. */
const struct rpt_error **sorted_errors(const struct rpt *r, size_t *n);
/* Rows a table shows of n (--lines; text 20 by default, others all). */
size_t limit_of(const struct out_opts *o, size_t n);
/* The other names SLUB merged into c (malloc'ed array of borrowed names). 0 or -1. */
int cache_aliases(const struct rpt_slab *slab, const struct rpt_cache *c,
		  const char ***out, size_t *n);
/* names joined by sep, malloc'ed; NULL out of memory. */
char *join_names(const char *const *names, size_t n, const char *sep);

/*
 * The main table of o->view as a table: the columns of the CSV document
 * and of the HTML page. 0, -1 out of memory, or emit's nonzero value.
 */
int report_main_table(const struct view_ctx *v, table_emit_fn emit, void *arg);
/* The main table of o->view as the text report shows it. Same returns. */
int report_main_text_table(const struct view_ctx *v, table_emit_fn emit, void *arg);
/*
 * A cache's name for people, with the names SLUB merged into it, fitting
 * 78 columns unless wide; malloc'ed, NULL out of memory.
 */
char *cache_label(const struct rpt_slab *slab, const struct rpt_cache *c, bool wide);
/* The paths the module says it recorded or not (kmemtrace.meta's coverage lines). Same. */
int report_coverage_table(const struct view_ctx *v, table_emit_fn emit, void *arg);
/* The errors of the traced kernel, by kind then count. Same returns. */
int report_errors_table(const struct view_ctx *v, table_emit_fn emit, void *arg);
/* Call sites with objects never freed in the trace, by bytes (--lines). Same returns. */
int report_outstanding_table(const struct view_ctx *v, table_emit_fn emit, void *arg);

#endif /* VIEW_MAIN_H */
