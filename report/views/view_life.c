// SPDX-License-Identifier: GPL-2.0-only
/*
 * view_life.c - the tables of kmemtrace-report --lifetimes: lifetimes per
 * call site and per cache, and the short-lived and long-lived call sites.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "views/view_life.h"
#include "views/view_main.h"

static const struct life_args default_args = { LIFE_SHORT_NS, LIFE_LONG_NS };

static const struct life_args *args_of(const struct out_opts *o)
{
	return o->view_args ? o->view_args : &default_args;
}

void life_sparkline(char *buf, size_t len, const uint64_t h[64])
{
	static const char shade[] = ".:-=+*#%@";
	char lo[32], hi[32], bars[65];
	int first = -1, last = -1, k;
	uint64_t max = 0;

	for (k = 0; k < 64; k++) {
		if (!h[k])
			continue;
		if (first < 0)
			first = k;
		last = k;
		if (h[k] > max)
			max = h[k];
	}
	if (first < 0) {
		snprintf(buf, len, "-");
		return;
	}
	for (k = first; k <= last; k++)
		bars[k - first] = h[k] ? shade[(h[k] * 8 + max - 1) / max] : ' ';
	bars[last - first + 1] = '\0';
	out_fmt_ns(lo, sizeof(lo), first ? (uint64_t)1 << first : 0);
	out_fmt_ns(hi, sizeof(hi), last < 63 ? (uint64_t)1 << (last + 1) : UINT64_MAX);
	snprintf(buf, len, "%s |%s| %s", lo, bars, hi);
}

/* ---- rows ------------------------------------------------------------------------ */

struct lrow {
	const char *name;	/* symbol or cache name */
	uint64_t addr;		/* call site; 0 for a cache */
	uint64_t allocs, bytes_alloc, out_bytes;
	const struct rpt_life *l;
	uint64_t p50, p90, p99, short_n;
	double rate;		/* allocations per second of trace */
	uint64_t log2[64];
	char spark[128];
	const char *spark_line;	/* spark, as a one-line list */
};

struct lctx {
	struct lrow *rows;
	size_t n;
};

static void lrow_fill(struct lrow *w, const struct life_args *a, uint64_t dur_ns)
{
	const struct rpt_hist *h = &w->l->freed;

	w->p50 = rpt_hist_quantile(h, 0.50);
	w->p90 = rpt_hist_quantile(h, 0.90);
	w->p99 = rpt_hist_quantile(h, 0.99);
	w->short_n = rpt_hist_count_le(h, a->short_ns);
	w->rate = dur_ns ? (double)w->allocs * 1e9 / (double)dur_ns : 0.0;
	rpt_hist_log2(h, w->log2);
	life_sparkline(w->spark, sizeof(w->spark), w->log2);
}

/* Rows are copied and sorted: each one's line points into itself only once placed. */
static void lrows_link(struct lrow *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		rows[i].spark_line = rows[i].spark;
}

static int by_frees(const void *pa, const void *pb)
{
	const struct lrow *a = pa, *b = pb;

	if (a->l->freed.n != b->l->freed.n)
		return a->l->freed.n > b->l->freed.n ? -1 : 1;
	if (a->l->live != b->l->live)
		return a->l->live > b->l->live ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int by_rate(const void *pa, const void *pb)
{
	const struct lrow *a = pa, *b = pb;

	if (a->allocs != b->allocs)
		return a->allocs > b->allocs ? -1 : 1;
	return by_frees(pa, pb);
}

static int by_pinned(const void *pa, const void *pb)
{
	const struct lrow *a = pa, *b = pb;

	if (a->out_bytes != b->out_bytes)
		return a->out_bytes > b->out_bytes ? -1 : 1;
	if (a->p50 != b->p50)
		return a->p50 > b->p50 ? -1 : 1;
	return by_frees(pa, pb);
}

static const char *sym_of(const struct view_ctx *v, uint64_t addr)
{
	const struct symres *s = v->st ? symtab_get(v->st, addr) : NULL;

	return s ? s->sym : NULL;
}

static uint64_t duration(const struct rpt *r)
{
	const struct rpt_totals *t = rpt_totals(r);

	return t->last_ts > t->first_ts ? t->last_ts - t->first_ts : 0;
}

/* Call sites with lifetimes (an object freed or live). NULL with errno ENOMEM: memory. */
static struct lrow *site_rows(const struct view_ctx *v, size_t *n)
{
	const struct life_args *a = args_of(v->o);
	size_t ns = rpt_nsites(v->r), i;
	struct lrow *rows = calloc(ns ? ns : 1, sizeof(*rows));

	*n = 0;
	if (!rows) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < ns; i++) {
		const struct rpt_life *l = lp_site(rpt_lp(v->r), i);
		const struct rpt_site *s = rpt_site(v->r, i);
		struct lrow *w = &rows[*n];

		if (!l || !s->hits)
			continue;
		w->l = l;
		w->addr = s->addr;
		w->name = sym_of(v, s->addr);
		w->allocs = s->hits;
		w->bytes_alloc = s->bytes_alloc;
		w->out_bytes = s->out_bytes;
		lrow_fill(w, a, duration(v->r));
		(*n)++;
	}
	return rows;
}

static struct lrow *cache_rows(const struct view_ctx *v, size_t *n)
{
	const struct life_args *a = args_of(v->o);
	size_t nc = rpt_ncaches(v->r), i;
	struct lrow *rows = calloc(nc ? nc : 1, sizeof(*rows));

	*n = 0;
	if (!rows) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < nc; i++) {
		const struct rpt_life *l = lp_cache(rpt_lp(v->r), i);
		const struct rpt_cache *c = rpt_cache(v->r, i);
		struct lrow *w = &rows[*n];

		if (!l || !c->allocs || !c->selected)
			continue;
		w->l = l;
		w->name = c->name;
		w->allocs = c->allocs;
		w->bytes_alloc = c->bytes_alloc;
		w->out_bytes = c->live_bytes;
		lrow_fill(w, a, duration(v->r));
		(*n)++;
	}
	return rows;
}

/* ---- columns ----------------------------------------------------------------------- */

enum { LC_NAME, LC_ALLOCS, LC_FREED, LC_P50, LC_P90, LC_P99, LC_MAX, LC_MEAN, LC_LIVE,
	LC_OLDEST, LC_SHAPE, LC_SHAPE_TEXT, LC_LOG2, LC_LIVE_LOG2, LC_ADDR, LC_NCOLS };

#define LIFE_COLS(namekey, namehead) { \
	[LC_NAME] = { namekey, namehead, COL_STR, 0, OC_LEFT }, \
	[LC_ALLOCS] = { "allocs", NULL, COL_U64, 0, OC_NO_TEXT }, \
	[LC_FREED] = { "freed", "Freed", COL_U64, 0, 0 }, \
	[LC_P50] = { "p50_ns", "p50", COL_NS, 0, 0 }, \
	[LC_P90] = { "p90_ns", "p90", COL_NS, 0, 0 }, \
	[LC_P99] = { "p99_ns", "p99", COL_NS, 0, 0 }, \
	[LC_MAX] = { "max_ns", "Max", COL_NS, 0, 0 }, \
	[LC_MEAN] = { "mean_ns", NULL, COL_NS, 0, OC_NO_TEXT }, \
	[LC_LIVE] = { "live", "Live", COL_U64, 0, 0 }, \
	[LC_OLDEST] = { "live_oldest_ns", "Oldest", COL_NS, 0, 0 }, \
	[LC_SHAPE] = { "shape", NULL, COL_STR, 0, OC_NO_TEXT | OC_NO_CSV }, \
	[LC_SHAPE_TEXT] = { "shape_text", NULL, COL_STRV, 0, OC_NO_CSV | OC_NO_JSON }, \
	[LC_LOG2] = { "log2_hist", NULL, COL_U64V, 0, OC_NO_TEXT }, \
	[LC_LIVE_LOG2] = { "live_log2_hist", NULL, COL_U64V, 0, OC_NO_TEXT }, \
	[LC_ADDR] = { "callsite_addr", NULL, COL_ADDR, 0, OC_NO_TEXT }, \
}

static const struct out_col site_cols[LC_NCOLS] = LIFE_COLS("callsite", "Call site");
/* A cache has no address: its table has one column less. */
static const struct out_col cache_cols[LC_NCOLS] = LIFE_COLS("cache", "Cache");

static void life_cell(const void *ctx, size_t row, size_t col, struct out_cell *out)
{
	const struct lctx *c = ctx;
	const struct lrow *w = &c->rows[row];
	const struct rpt_hist *h = &w->l->freed;

	switch (col) {
	case LC_NAME:
		out->s = w->name;
		break;
	case LC_ALLOCS:
		out->u = w->allocs;
		break;
	case LC_FREED:
		out->u = h->n;
		break;
	case LC_P50:
		out->null = !h->n;
		out->u = w->p50;
		break;
	case LC_P90:
		out->null = !h->n;
		out->u = w->p90;
		break;
	case LC_P99:
		out->null = !h->n;
		out->u = w->p99;
		break;
	case LC_MAX:
		out->null = !h->n;
		out->u = h->max;
		break;
	case LC_MEAN:
		out->null = !h->n;
		out->u = h->n ? h->sum / h->n : 0;
		break;
	case LC_LIVE:
		out->u = w->l->live;
		break;
	case LC_OLDEST:
		out->null = !w->l->live;
		out->u = w->l->live_oldest;
		break;
	case LC_SHAPE:
		out->s = w->spark;
		break;
	case LC_SHAPE_TEXT:
		/* Under the row, indented: the histogram of the row's lifetimes. */
		out->sv = &w->spark_line;
		out->n = 1;
		break;
	case LC_LOG2:
		out->uv = w->log2;
		out->n = 64;
		break;
	case LC_LIVE_LOG2:
		out->uv = w->l->live_log2;
		out->n = 64;
		break;
	case LC_ADDR:
		out->u = w->addr;
		break;
	}
}

enum { SC_SITE, SC_RATE, SC_ALLOCS, SC_FREED, SC_SHORT, SC_P50, SC_SIZE, SC_ADDR };

static const struct out_col short_cols[] = {
	[SC_SITE] = { "callsite", "Call site", COL_STR, 0, OC_LEFT },
	[SC_RATE] = { "allocs_per_sec", "Allocs/s", COL_U64, 0, 0 },
	[SC_ALLOCS] = { "allocs", "Allocs", COL_U64, 0, 0 },
	[SC_FREED] = { "freed", "Freed", COL_U64, 0, 0 },
	[SC_SHORT] = { "short_pct", "Short", COL_PCT, 0, 0 },
	[SC_P50] = { "p50_ns", "p50", COL_NS, 0, 0 },
	[SC_SIZE] = { "avg_bytes", "Avg size", COL_U64, 0, 0 },
	[SC_ADDR] = { "callsite_addr", NULL, COL_ADDR, 0, OC_NO_TEXT },
};

static void short_cell(const void *ctx, size_t row, size_t col, struct out_cell *out)
{
	const struct lctx *c = ctx;
	const struct lrow *w = &c->rows[row];

	switch (col) {
	case SC_SITE:
		out->s = w->name;
		break;
	case SC_RATE:
		out->u = (uint64_t)(w->rate + 0.5);
		break;
	case SC_ALLOCS:
		out->u = w->allocs;
		break;
	case SC_FREED:
		out->u = w->l->freed.n;
		break;
	case SC_SHORT:
		out->d = 100.0 * (double)w->short_n / (double)w->l->freed.n;
		break;
	case SC_P50:
		out->u = w->p50;
		break;
	case SC_SIZE:
		out->u = w->allocs ? w->bytes_alloc / w->allocs : 0;
		break;
	case SC_ADDR:
		out->u = w->addr;
		break;
	}
}

enum { GC_SITE, GC_FREED, GC_P50, GC_MAX, GC_LIVE, GC_LIVE_BYTES, GC_OLDEST, GC_ADDR };

static const struct out_col long_cols[] = {
	[GC_SITE] = { "callsite", "Call site", COL_STR, 0, OC_LEFT },
	[GC_FREED] = { "freed", "Freed", COL_U64, 0, 0 },
	[GC_P50] = { "p50_ns", "p50", COL_NS, 0, 0 },
	[GC_MAX] = { "max_ns", "Max", COL_NS, 0, 0 },
	[GC_LIVE] = { "live", "Live", COL_U64, 0, 0 },
	[GC_LIVE_BYTES] = { "live_bytes", "Live bytes", COL_U64, 0, 0 },
	[GC_OLDEST] = { "live_oldest_ns", "Oldest", COL_NS, 0, 0 },
	[GC_ADDR] = { "callsite_addr", NULL, COL_ADDR, 0, OC_NO_TEXT },
};

static void long_cell(const void *ctx, size_t row, size_t col, struct out_cell *out)
{
	const struct lctx *c = ctx;
	const struct lrow *w = &c->rows[row];
	const struct rpt_hist *h = &w->l->freed;

	switch (col) {
	case GC_SITE:
		out->s = w->name;
		break;
	case GC_FREED:
		out->u = h->n;
		break;
	case GC_P50:
		out->null = !h->n;
		out->u = w->p50;
		break;
	case GC_MAX:
		out->null = !h->n;
		out->u = h->max;
		break;
	case GC_LIVE:
		out->u = w->l->live;
		break;
	case GC_LIVE_BYTES:
		out->u = w->out_bytes;
		break;
	case GC_OLDEST:
		out->null = !w->l->live;
		out->u = w->l->live_oldest;
		break;
	case GC_ADDR:
		out->u = w->addr;
		break;
	}
}

/* ---- the view ------------------------------------------------------------------------ */

static int life_syms(const struct view_ctx *v, struct symtab *st)
{
	size_t i;

	for (i = 0; i < rpt_nsites(v->r); i++)
		if (lp_site(rpt_lp(v->r), i) && symtab_add(st, rpt_site(v->r, i)->addr))
			return -1;
	return 0;
}

static int emit_rows(const struct view_ctx *v, struct out_table *t, struct lctx *c,
		     table_emit_fn emit, void *arg)
{
	t->nrows = limit_of(v->o, c->n);
	t->total = c->n;
	t->ctx = c;
	return emit(t, arg);
}

static int life_tables(const struct view_ctx *v, table_emit_fn emit, void *arg)
{
	const struct life_args *a = args_of(v->o);
	struct lctx c = { 0 }, sel = { 0 };
	struct out_table t;
	char note[512], sh[32], lg[32];
	size_t i;
	int ret;

	if (!rpt_lp(v->r) || !(rpt_flags(v->r) & RPT_LIFETIMES))
		return 0;
	out_fmt_ns(sh, sizeof(sh), a->short_ns);
	out_fmt_ns(lg, sizeof(lg), a->long_ns);

	c.rows = site_rows(v, &c.n);
	if (!c.rows)
		return -1;
	if (c.n)
		qsort(c.rows, c.n, sizeof(*c.rows), by_frees);
	memset(&t, 0, sizeof(t));
	t.key = "lifetimes";
	t.title = "Object lifetimes by call site (allocation to free)";
	t.note = "Freed: objects allocated and freed in the trace; p50/p90/p99 are the upper "
		 "bounds of log-linear buckets (at most 12.5% above the true value), Max is "
		 "exact. Live: objects still allocated at the end, Oldest their oldest age. "
		 "Under each row, the lifetimes' log2 histogram: one character per power of "
		 "two, darker for more (.:-=+*#%@).";
	t.cols = site_cols;
	t.ncols = LC_NCOLS;
	t.cell = life_cell;
	lrows_link(c.rows, c.n);
	ret = emit_rows(v, &t, &c, emit, arg);

	/* Short-lived: half the freed objects within the threshold, busiest first. */
	sel.rows = calloc(c.n ? c.n : 1, sizeof(*sel.rows));
	if (!sel.rows)
		ret = -1;
	for (i = 0; !ret && i < c.n; i++)
		if (c.rows[i].l->freed.n && c.rows[i].p50 <= a->short_ns)
			sel.rows[sel.n++] = c.rows[i];
	if (!ret) {
		if (sel.n)
			qsort(sel.rows, sel.n, sizeof(*sel.rows), by_rate);
		snprintf(note, sizeof(note), "Call sites whose freed objects mostly (p50) die within "
			 "%s (--short-lived), most allocations per second first: candidates for "
			 "a stack buffer, a per-CPU object or a kmem_cache of their own. Short: "
			 "the share freed within %s.", sh, sh);
		memset(&t, 0, sizeof(t));
		t.key = "short_lived";
		t.title = "Short-lived objects";
		t.note = note;
		t.cols = short_cols;
		t.ncols = sizeof(short_cols) / sizeof(short_cols[0]);
		t.cell = short_cell;
		ret = emit_rows(v, &t, &sel, emit, arg);
	}

	/* Long-lived: freed ones mostly past the threshold, or live ones older than it. */
	sel.n = 0;
	for (i = 0; !ret && i < c.n; i++)
		if ((c.rows[i].l->freed.n && c.rows[i].p50 > a->long_ns) ||
		    (c.rows[i].l->live && c.rows[i].l->live_oldest > a->long_ns))
			sel.rows[sel.n++] = c.rows[i];
	if (!ret) {
		if (sel.n)
			qsort(sel.rows, sel.n, sizeof(*sel.rows), by_pinned);
		snprintf(note, sizeof(note), "Call sites whose freed objects mostly (p50) live "
			 "longer than %s (--long-lived), or whose objects live at the end are older "
			 "than that; most bytes still live first: these pin slab pages.", lg);
		memset(&t, 0, sizeof(t));
		t.key = "long_lived";
		t.title = "Long-lived objects";
		t.note = note;
		t.cols = long_cols;
		t.ncols = sizeof(long_cols) / sizeof(long_cols[0]);
		t.cell = long_cell;
		ret = emit_rows(v, &t, &sel, emit, arg);
	}
	free(sel.rows);
	free(c.rows);
	if (ret)
		return ret;

	c.rows = cache_rows(v, &c.n);
	if (!c.rows)
		return -1;
	if (c.n)
		qsort(c.rows, c.n, sizeof(*c.rows), by_frees);
	memset(&t, 0, sizeof(t));
	t.key = "cache_lifetimes";
	t.title = "Object lifetimes by cache";
	t.cols = cache_cols;
	t.ncols = LC_NCOLS - 1;
	t.cell = life_cell;
	lrows_link(c.rows, c.n);
	ret = emit_rows(v, &t, &c, emit, arg);
	free(c.rows);
	return ret;
}

const struct report_view view_life = {
	.name = "lifetimes",
	.syms = life_syms,
	.tables = life_tables,
};
