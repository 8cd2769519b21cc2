// SPDX-License-Identifier: GPL-2.0-only
/*
 * view_pages.c - kmemtrace-report --pages, perf kmem --page's view: page
 * allocations and frees by order, migrate type and GFP mask, and the
 * memory of slab and page allocator together with each large kmalloc
 * (served by the page allocator, seen by both tracepoints) counted once.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sym/sym_kallsyms.h"
#include "views/symtab.h"
#include "views/view_main.h"
#include "views/view_pages.h"

/*
 * enum migratetype of 6.1 to 7.3 (include/linux/mmzone.h): the first four
 * never move; after them MIGRATE_CMA (CONFIG_CMA, set in Debian's 7.3, not
 * in its 6.1 and 6.12) and MIGRATE_ISOLATE (CONFIG_MEMORY_ISOLATION, gone
 * as a type in 7.3) take the next values as the kernel's config has them,
 * so those are named by both.
 */
const char *pages_mt_name(unsigned int mt)
{
	static const char *const names[] = {
		"Unmovable", "Movable", "Reclaimable", "HighAtomic", "CMA or Isolate", "Isolate",
	};

	if (mt == RPT_MT_UNKNOWN)
		return "unknown";
	return mt < sizeof(names) / sizeof(names[0]) ? names[mt] : "other";
}

/* ---- the totals: slab and pages, large kmallocs once ----------------------------- */

struct trow {
	const char *what;
	uint64_t allocs, bytes, frees, live, live_bytes, dups;
};

enum { TC_WHAT, TC_ALLOCS, TC_BYTES, TC_FREES, TC_LIVE, TC_LIVE_BYTES, TC_DUPS };

static const struct out_col total_cols[] = {
	[TC_WHAT] = { "allocator", "Allocator", COL_STR, 0, OC_LEFT },
	[TC_ALLOCS] = { "allocs", "Allocs", COL_U64, 0, 0 },
	[TC_BYTES] = { "bytes", "Bytes", COL_U64, 0, 0 },
	[TC_FREES] = { "frees", "Frees", COL_U64, 0, 0 },
	[TC_LIVE] = { "live", "Live", COL_U64, 0, 0 },
	[TC_LIVE_BYTES] = { "live_bytes", "Live bytes", COL_U64, 0, 0 },
	[TC_DUPS] = { "duplicate_events", NULL, COL_U64, 0, OC_NO_TEXT },
};

static void total_cell(const void *ctx, size_t row, size_t col, struct out_cell *out)
{
	const struct trow *w = &((const struct trow *)ctx)[row];

	switch (col) {
	case TC_WHAT:
		out->s = w->what;
		break;
	case TC_ALLOCS:
		out->u = w->allocs;
		break;
	case TC_BYTES:
		out->u = w->bytes;
		break;
	case TC_FREES:
		out->u = w->frees;
		break;
	case TC_LIVE:
		out->u = w->live;
		break;
	case TC_LIVE_BYTES:
		out->u = w->live_bytes;
		break;
	case TC_DUPS:
		out->u = w->dups;
		break;
	}
}

/* ---- by order, migrate type, GFP mask --------------------------------------------- */

struct pctx {
	enum rpt_page_by by;
	unsigned int page_shift;
	const struct rpt_page_tally **rows;
	char **keys;		/* migrate type or GFP flags' names, per row */
	char (*hex)[16];	/* GFP mask in hex, per row */
	size_t n;
};

/*
 * The columns the three tables share; PC_MT_ID, the migrate type's number,
 * is null in the tables by order and by GFP mask, whose rows have none.
 * The table by GFP mask has one more, PC_GFP_HEX: its key column holds the
 * traced kernel's names for the mask, and this one the mask.
 */
enum { PC_KEY, PC_ALLOCS, PC_FAILED, PC_BYTES, PC_FREES, PC_UNTRACKED, PC_LIVE, PC_LIVE_BYTES,
	PC_KMALLOC, PC_KMALLOC_BYTES, PC_MT_ID, PC_NCOLS, PC_GFP_HEX = PC_NCOLS };

#define PAGE_COLS(key, head, kind, ...) { \
	[PC_KEY] = { key, head, kind, 0, OC_LEFT }, \
	[PC_ALLOCS] = { "allocs", "Allocs", COL_U64, 0, 0 }, \
	[PC_FAILED] = { "failed", "Failed", COL_U64, 0, 0 }, \
	[PC_BYTES] = { "bytes", "Bytes", COL_U64, 0, 0 }, \
	[PC_FREES] = { "frees", "Frees", COL_U64, 0, 0 }, \
	[PC_UNTRACKED] = { "untracked_frees", NULL, COL_U64, 0, OC_NO_TEXT }, \
	[PC_LIVE] = { "live", "Live", COL_U64, 0, 0 }, \
	[PC_LIVE_BYTES] = { "live_bytes", NULL, COL_U64, 0, OC_NO_TEXT }, \
	[PC_KMALLOC] = { "kmalloc_allocs", "kmalloc", COL_U64, 0, 0 }, \
	[PC_KMALLOC_BYTES] = { "kmalloc_bytes", NULL, COL_U64, 0, OC_NO_TEXT }, \
	[PC_MT_ID] = { "migratetype_id", NULL, COL_U64, 0, OC_NO_TEXT }, \
	__VA_ARGS__ \
}

static const struct out_col order_cols[PC_NCOLS] = PAGE_COLS("order", "Order", COL_U64);
static const struct out_col mt_cols[PC_NCOLS] = PAGE_COLS("migratetype", "Migrate type", COL_STR);
static const struct out_col gfp_cols[PC_NCOLS + 1] = PAGE_COLS("gfp_names", "GFP flags", COL_STR,
	[PC_GFP_HEX] = { "gfp_flags", NULL, COL_STR, 0, OC_NO_TEXT });

static void page_cell(const void *ctx, size_t row, size_t col, struct out_cell *out)
{
	const struct pctx *c = ctx;
	const struct rpt_page_tally *t = c->rows[row];

	switch (col) {
	case PC_KEY:
		if (c->by == RPT_PG_ORDER)
			out->u = t->key;
		else
			out->s = c->keys[row];
		break;
	case PC_GFP_HEX:
		out->s = c->hex[row];
		break;
	case PC_ALLOCS:
		out->u = t->allocs;
		break;
	case PC_FAILED:
		out->u = t->failed;
		break;
	case PC_BYTES:
		out->u = t->bytes;
		break;
	case PC_FREES:
		out->u = t->frees;
		break;
	case PC_UNTRACKED:
		/* Frees of blocks allocated before the trace name only their order. */
		out->null = c->by != RPT_PG_ORDER;
		out->u = t->untracked_frees;
		break;
	case PC_LIVE:
		out->u = t->live;
		break;
	case PC_LIVE_BYTES:
		out->u = t->live_bytes;
		break;
	case PC_KMALLOC:
		out->u = t->kmalloc_allocs;
		break;
	case PC_KMALLOC_BYTES:
		out->u = t->kmalloc_bytes;
		break;
	case PC_MT_ID:
		/* The key is a migrate type only in the table by migrate type. */
		out->null = c->by != RPT_PG_MT || t->key == RPT_MT_UNKNOWN;
		out->u = out->null ? 0 : t->key;
		break;
	}
}

static int by_allocs(const void *pa, const void *pb)
{
	const struct rpt_page_tally *a = *(const struct rpt_page_tally *const *)pa;
	const struct rpt_page_tally *b = *(const struct rpt_page_tally *const *)pb;

	if (a->allocs != b->allocs)
		return a->allocs > b->allocs ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

static int page_table(const struct view_ctx *v, enum rpt_page_by by, table_emit_fn emit,
		      void *arg)
{
	static const char *const keys[] = { "pages_by_order", "pages_by_migratetype",
					    "pages_by_gfp" };
	static const char *const titles[] = { "Page allocations by order",
					      "Page allocations by migrate type",
					      "Page allocations by GFP flags" };
	static const struct out_col *const cols[] = { order_cols, mt_cols, gfp_cols };
	struct pctx c = { .by = by };
	const struct rpt_page_tally *all = rpt_pages(v->r, by, &c.n);
	char names[GFP_NAMES_LEN];
	struct out_table t;
	size_t i, m = 0;
	int ret = -1;

	c.rows = calloc(c.n ? c.n : 1, sizeof(*c.rows));
	c.keys = calloc(c.n ? c.n : 1, sizeof(*c.keys));
	c.hex = calloc(c.n ? c.n : 1, sizeof(*c.hex));
	if (!c.rows || !c.keys || !c.hex)
		goto out;
	for (i = 0; i < c.n; i++)
		if (all[i].allocs || all[i].frees || all[i].untracked_frees)
			c.rows[m++] = &all[i];
	/* Orders and migrate types in their natural order; masks by use. */
	if (by == RPT_PG_GFP && m)
		qsort(c.rows, m, sizeof(*c.rows), by_allocs);
	for (i = 0; i < m; i++) {
		const char *k = NULL;

		if (by == RPT_PG_MT) {
			k = pages_mt_name((unsigned int)c.rows[i]->key);
		} else if (by == RPT_PG_GFP) {
			snprintf(c.hex[i], sizeof(c.hex[i]), "0x%" PRIx64, c.rows[i]->key);
			k = gfp_names_format(v->o->gfp, (uint32_t)c.rows[i]->key,
					     names, sizeof(names));
		}
		if (k && !(c.keys[i] = strdup(k)))
			goto out;
	}
	c.n = m;
	memset(&t, 0, sizeof(t));
	t.key = keys[by];
	t.title = titles[by];
	if (by == RPT_PG_GFP && gfp_names_has_table(v->o->gfp))
		t.note = "GFP flags as the traced kernel's tracepoints name them (the trace's "
			 "tracepoint_formats), as ftrace and perf print them.";
	else if (by == RPT_PG_GFP)
		t.note = "GFP masks in hex: the trace has no tracepoint_formats (taken without "
			 "tracefs, or by an older kmemtraced) to name them with, and their bits "
			 "are numbered differently by each kernel series and configuration "
			 "(include/linux/gfp_types.h of the traced kernel).";
	t.cols = cols[by];
	t.ncols = by == RPT_PG_GFP ? PC_NCOLS + 1 : PC_NCOLS;
	t.nrows = by == RPT_PG_GFP ? limit_of(v->o, m) : m;
	t.total = m;
	t.cell = page_cell;
	t.ctx = &c;
	ret = emit(&t, arg);
out:
	for (i = 0; c.keys && i < m; i++)
		free(c.keys[i]);
	free(c.rows);
	free(c.keys);
	free(c.hex);
	return ret;
}

/* ---- by call site, from the page allocations' stacks -------------------------------- */

/*
 * The page allocator's entry points and insides (names of 6.1 to 7.3, with
 * their _noprof variants): a page allocation's call site is the first frame
 * of its stack in none of them.
 */
static const char *const pg_inside[] = {
	"__alloc_pages", "alloc_pages", "__alloc_frozen_pages", "alloc_frozen_pages",
	"__folio_alloc", "folio_alloc", "__get_free_pages", "get_free_pages", "get_zeroed_page",
	"get_page_from_freelist", "__alloc_pages_slowpath",
};

static uint64_t pg_callsite(const struct out_opts *o, const uint64_t *fr, unsigned int d)
{
	unsigned int k;
	size_t i;

	for (k = 0; k < d; k++) {
		const char *name = NULL, *mod = NULL;
		uint64_t off;
		bool inside = false;

		if (!o->ks || !ksyms_lookup_stack(o->ks, fr, k, &name, &off, &mod) || !name)
			return fr[k];
		for (i = 0; i < sizeof(pg_inside) / sizeof(pg_inside[0]) && !inside; i++)
			inside = strncmp(name, pg_inside[i], strlen(pg_inside[i])) == 0;
		if (!inside)
			return fr[k];
	}
	return d ? fr[d - 1] : 0;
}

struct srow {
	uint64_t site;
	struct rpt_page_tally t;
	const char *name;
};

static int srow_by_site(const void *pa, const void *pb)
{
	const struct srow *a = pa, *b = pb;

	return a->site < b->site ? -1 : a->site > b->site;
}

static int srow_by_allocs(const void *pa, const void *pb)
{
	const struct srow *a = pa, *b = pb;

	if (a->t.allocs != b->t.allocs)
		return a->t.allocs > b->t.allocs ? -1 : 1;
	return a->site < b->site ? -1 : a->site > b->site;
}

/* Call sites of the page allocations with a stack, merged, most allocations first. */
static struct srow *site_rows(const struct view_ctx *v, size_t *n)
{
	size_t ns = 0, i, m = 0;
	const struct rpt_page_tally *t = rpt_pages(v->r, RPT_PG_STACK, &ns);
	struct srow *w = calloc(ns ? ns : 1, sizeof(*w));

	*n = 0;
	if (!w)
		return NULL;
	for (i = 0; i < ns; i++) {
		unsigned int d = 0;
		const uint64_t *fr;

		if (!t[i].allocs && !t[i].frees)
			continue;
		fr = kmt_stacks_frames(rpt_stacks(v->r), (uint32_t)i, &d);
		w[m].site = pg_callsite(v->o, fr, d);
		w[m++].t = t[i];
	}
	if (m)
		qsort(w, m, sizeof(*w), srow_by_site);
	for (i = 0, ns = 0; i < m; i++) {
		if (ns && w[ns - 1].site == w[i].site) {
			struct rpt_page_tally *a = &w[ns - 1].t;

			a->allocs += w[i].t.allocs;
			a->failed += w[i].t.failed;
			a->bytes += w[i].t.bytes;
			a->frees += w[i].t.frees;
			a->bytes_freed += w[i].t.bytes_freed;
			a->live += w[i].t.live;
			a->live_bytes += w[i].t.live_bytes;
			a->kmalloc_allocs += w[i].t.kmalloc_allocs;
		} else {
			w[ns++] = w[i];
		}
	}
	if (ns)
		qsort(w, ns, sizeof(*w), srow_by_allocs);
	for (i = 0; i < ns; i++) {
		const struct symres *sr = v->st ? symtab_get(v->st, w[i].site) : NULL;

		w[i].name = sr ? sr->sym : NULL;
	}
	*n = ns;
	return w;
}

enum { SS_SITE, SS_ALLOCS, SS_FAILED, SS_BYTES, SS_FREES, SS_LIVE, SS_LIVE_BYTES, SS_KMALLOC,
	SS_ADDR };

static const struct out_col site_cols[] = {
	[SS_SITE] = { "callsite", "Call site", COL_STR, 0, OC_LEFT },
	[SS_ALLOCS] = { "allocs", "Allocs", COL_U64, 0, 0 },
	[SS_FAILED] = { "failed", "Failed", COL_U64, 0, 0 },
	[SS_BYTES] = { "bytes", "Bytes", COL_U64, 0, 0 },
	[SS_FREES] = { "frees", "Frees", COL_U64, 0, 0 },
	[SS_LIVE] = { "live", "Live", COL_U64, 0, 0 },
	[SS_LIVE_BYTES] = { "live_bytes", NULL, COL_U64, 0, OC_NO_TEXT },
	[SS_KMALLOC] = { "kmalloc_allocs", NULL, COL_U64, 0, OC_NO_TEXT },
	[SS_ADDR] = { "callsite_addr", NULL, COL_ADDR, 0, OC_NO_TEXT },
};

static void site_cell(const void *ctx, size_t row, size_t col, struct out_cell *out)
{
	const struct srow *w = &((const struct srow *)ctx)[row];

	switch (col) {
	case SS_SITE:
		out->s = w->name;
		break;
	case SS_ALLOCS:
		out->u = w->t.allocs;
		break;
	case SS_FAILED:
		out->u = w->t.failed;
		break;
	case SS_BYTES:
		out->u = w->t.bytes;
		break;
	case SS_FREES:
		out->u = w->t.frees;
		break;
	case SS_LIVE:
		out->u = w->t.live;
		break;
	case SS_LIVE_BYTES:
		out->u = w->t.live_bytes;
		break;
	case SS_KMALLOC:
		out->u = w->t.kmalloc_allocs;
		break;
	case SS_ADDR:
		out->u = w->site;
		break;
	}
}

static int pages_syms(const struct view_ctx *v, struct symtab *st)
{
	size_t n, i;
	struct srow *w = site_rows(v, &n);

	if (!w)
		return -1;
	for (i = 0; i < n; i++) {
		if (symtab_add(st, w[i].site)) {
			free(w);
			return -1;
		}
	}
	free(w);
	return 0;
}

static int site_table(const struct view_ctx *v, table_emit_fn emit, void *arg)
{
	struct out_table t;
	size_t n;
	struct srow *w = site_rows(v, &n);
	int ret;

	if (!w)
		return -1;
	memset(&t, 0, sizeof(t));
	t.key = "pages_by_callsite";
	t.title = "Page allocations by call site";
	rpt_pages(v->r, RPT_PG_STACK, &t.total);
	t.note = t.total ?
		 "From the page allocations' kernel stacks: the first frame outside the page "
		 "allocator; allocations without a stack are not in this table." :
		 "Needs kernel stacks: trace with the module parameters pages=1 and stack_depth.";
	t.cols = site_cols;
	t.ncols = sizeof(site_cols) / sizeof(site_cols[0]);
	t.nrows = limit_of(v->o, n);
	t.total = n;
	t.cell = site_cell;
	t.ctx = w;
	ret = emit(&t, arg);
	free(w);
	return ret;
}

static int pages_tables(const struct view_ctx *v, table_emit_fn emit, void *arg)
{
	const struct rpt_totals *t = rpt_totals(v->r);
	struct trow rows[4] = {
		{ "slab", t->allocs, t->bytes_alloc, t->frees, t->outstanding,
		  t->outstanding_bytes, 0 },
		{ "page", t->page_allocs, t->page_bytes_alloc, t->page_frees, t->page_outstanding,
		  t->page_outstanding_bytes, 0 },
		{ "large_kmalloc", t->page_kmalloc_allocs, t->page_kmalloc_bytes,
		  t->page_kmalloc_frees, t->page_kmalloc_live, t->page_kmalloc_live_bytes,
		  t->kmalloc_dup_events - t->kmalloc_dup_failed },
	};
	struct out_table tt;
	enum rpt_page_by by;
	char note[512];
	int ret;

	/* Both allocators, each large kmalloc's memory once. */
	rows[3] = (struct trow){ "all", rows[0].allocs + rows[1].allocs - rows[2].allocs,
				 rows[0].bytes + rows[1].bytes - rows[2].bytes,
				 rows[0].frees + rows[1].frees - rows[2].frees,
				 rows[0].live + rows[1].live - rows[2].live,
				 rows[0].live_bytes + rows[1].live_bytes - rows[2].live_bytes,
				 rows[2].dups };
	memset(&tt, 0, sizeof(tt));
	tt.key = "memory_totals";
	tt.title = "Slab and page allocator";
	snprintf(note, sizeof(note), "large_kmalloc: kmallocs above the largest kmalloc cache, "
		 "which the page allocator served (one event of each allocator for the same "
		 "memory): counted in slab and in page, once in all.%s", t->kmalloc_dup_events ?
		 " This kernel traces each of them twice (6.12 and 7.3 do): the first of the two "
		 "kmalloc events, whose call site is inside the allocator, is not counted, by "
		 "call site, cache or stack." : "");
	tt.note = note;
	tt.cols = total_cols;
	tt.ncols = sizeof(total_cols) / sizeof(total_cols[0]);
	tt.nrows = tt.total = 4;
	tt.cell = total_cell;
	tt.ctx = rows;
	ret = emit(&tt, arg);
	for (by = RPT_PG_ORDER; !ret && by <= RPT_PG_GFP; by++)
		ret = page_table(v, by, emit, arg);
	return ret ? ret : site_table(v, emit, arg);
}

const struct report_view view_pages = {
	.name = "pages",
	.syms = pages_syms,
	.tables = pages_tables,
};
