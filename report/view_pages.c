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

#include "view_main.h"
#include "view_pages.h"

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
	char (*keys)[32];
	size_t n;
};

enum { PC_KEY, PC_ALLOCS, PC_FAILED, PC_BYTES, PC_FREES, PC_UNTRACKED, PC_LIVE, PC_LIVE_BYTES,
	PC_KMALLOC, PC_KMALLOC_BYTES, PC_MT_ID, PC_NCOLS };

#define PAGE_COLS(key, head, kind) { \
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
}

static const struct out_col order_cols[PC_NCOLS] = PAGE_COLS("order", "Order", COL_U64);
static const struct out_col mt_cols[PC_NCOLS] = PAGE_COLS("migratetype", "Migrate type", COL_STR);
static const struct out_col gfp_cols[PC_NCOLS] = PAGE_COLS("gfp_flags", "GFP flags", COL_STR);

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
		out->null = t->key == RPT_MT_UNKNOWN;
		out->u = t->key;
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
	struct out_table t;
	size_t i, m = 0;
	int ret;

	c.rows = calloc(c.n ? c.n : 1, sizeof(*c.rows));
	c.keys = calloc(c.n ? c.n : 1, sizeof(*c.keys));
	if (!c.rows || !c.keys) {
		free(c.rows);
		free(c.keys);
		return -1;
	}
	for (i = 0; i < c.n; i++)
		if (all[i].allocs || all[i].frees || all[i].untracked_frees)
			c.rows[m++] = &all[i];
	/* Orders and migrate types in their natural order; masks by use. */
	if (by == RPT_PG_GFP && m)
		qsort(c.rows, m, sizeof(*c.rows), by_allocs);
	for (i = 0; i < m; i++) {
		if (by == RPT_PG_MT)
			snprintf(c.keys[i], sizeof(c.keys[i]), "%s", pages_mt_name((unsigned int)c.rows[i]->key));
		else if (by == RPT_PG_GFP)
			snprintf(c.keys[i], sizeof(c.keys[i]), "0x%" PRIx64, c.rows[i]->key);
	}
	c.n = m;
	memset(&t, 0, sizeof(t));
	t.key = keys[by];
	t.title = titles[by];
	if (by == RPT_PG_GFP)
		t.note = "GFP masks in hex: their bits are numbered differently by each kernel "
			 "series and configuration (include/linux/gfp_types.h of the traced kernel).";
	t.cols = cols[by];
	t.ncols = PC_NCOLS;
	t.nrows = by == RPT_PG_GFP ? limit_of(v->o, m) : m;
	t.total = m;
	t.cell = page_cell;
	t.ctx = &c;
	ret = emit(&t, arg);
	free(c.rows);
	free(c.keys);
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
		  t->kmalloc_dup_events },
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
		 "kmalloc events, whose call site is inside the allocator, is not counted." : "");
	tt.note = note;
	tt.cols = total_cols;
	tt.ncols = sizeof(total_cols) / sizeof(total_cols[0]);
	tt.nrows = tt.total = 4;
	tt.cell = total_cell;
	tt.ctx = rows;
	ret = emit(&tt, arg);
	for (by = RPT_PG_ORDER; !ret && by <= RPT_PG_GFP; by++)
		ret = page_table(v, by, emit, arg);
	return ret;
}

const struct report_view view_pages = {
	.name = "pages",
	.tables = pages_tables,
};
