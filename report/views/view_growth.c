// SPDX-License-Identifier: GPL-2.0-only
/*
 * view_growth.c - the tables of kmemtrace-report --at and --diff, from the
 * snapshots core/rpt_growth.c took while the trace was read: a summary
 * row, then per call site, per cache and per kernel stack (traces with
 * stacks) the objects outstanding and, for --diff, what changed between
 * the two times, ranked by growth; then the objects themselves, oldest
 * first (--diff: the survivors, allocated in the window and live at its
 * end).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/view_growth.h"
#include "views/view_main.h"

/* ---- rows ------------------------------------------------------------------------ */

struct grow_row {
	const char *name;		/* symbol or cache name; NULL: the address */
	uint64_t addr;			/* call site; 0 for a cache or a stack */
	uint32_t idx;			/* the site's, cache's or stack's index */
	struct grow_tally a, b;		/* at T1 (zero for --at) and at T2 (--at: T) */
	uint64_t surv, surv_bytes, surv_oldest_ts;	/* --diff: the survivors */
	/* A stack's frames, innermost first: depth symbols, then depth addresses. */
	char **frames;
	unsigned int depth;
};

/* What the cells of a table read. */
struct gctx {
	const struct view_ctx *v;
	const struct growth_args *ga;
	uint64_t end_abs;		/* T2 (--at: T) on the trace's clock: ages are at it */
	uint64_t first_abs;		/* the first record's time: objects' times are after it */
	struct grow_row *rows;
	size_t n;
	const struct grow_obj *objs;	/* the object table's rows */
	const int *ids;			/* the table's columns: GF_* by position */
};

static const struct growth_args *args_of(const struct view_ctx *v)
{
	return v->o->view_args;
}

static const char *sym_of(const struct view_ctx *v, uint64_t addr)
{
	const struct symres *s = v->st ? symtab_get(v->st, addr) : NULL;

	return s ? s->sym : NULL;
}

static int64_t grow_objs(const struct grow_row *w)
{
	return (int64_t)(w->b.live - w->a.live);
}

static int64_t grow_bytes(const struct grow_row *w)
{
	return (int64_t)(w->b.live_bytes - w->a.live_bytes);
}

/*
 * Most bytes grown first (a slow leak of big objects before one of small
 * ones), then objects grown, survivors, allocations in the window and the
 * address or name, so that the order is total.
 */
static int by_growth(const void *pa, const void *pb)
{
	const struct grow_row *a = pa, *b = pb;
	int c;

	if (grow_bytes(a) != grow_bytes(b))
		return grow_bytes(a) > grow_bytes(b) ? -1 : 1;
	if (grow_objs(a) != grow_objs(b))
		return grow_objs(a) > grow_objs(b) ? -1 : 1;
	if (a->surv != b->surv)
		return a->surv > b->surv ? -1 : 1;
	if (a->b.allocs - a->a.allocs != b->b.allocs - b->a.allocs)
		return a->b.allocs - a->a.allocs > b->b.allocs - b->a.allocs ? -1 : 1;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	c = strcmp(a->name ? a->name : "", b->name ? b->name : "");
	return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

/* --at: most bytes outstanding first, then objects, then the oldest. */
static int by_live(const void *pa, const void *pb)
{
	const struct grow_row *a = pa, *b = pb;

	if (a->b.live_bytes != b->b.live_bytes)
		return a->b.live_bytes > b->b.live_bytes ? -1 : 1;
	if (a->b.live != b->b.live)
		return a->b.live > b->b.live ? -1 : 1;
	if (a->b.oldest_ts != b->b.oldest_ts)
		return a->b.oldest_ts < b->b.oldest_ts ? -1 : 1;
	return by_growth(pa, pb);
}

enum grow_by { BY_SITE, BY_CACHE, BY_STACK };

/* The tally i of a snapshot by kind; zero when it did not exist yet. */
static struct grow_tally tally_of(const struct grow_snap *s, enum grow_by by, size_t i)
{
	static const struct grow_tally none;

	if (!s)
		return none;
	switch (by) {
	case BY_SITE:
		return i < s->nsites ? s->sites[i] : none;
	case BY_CACHE:
		return i < s->ncaches ? s->caches[i] : none;
	default:
		return i < s->nstacks ? s->stacks[i] : none;
	}
}

static void rows_free(struct grow_row *rows, size_t n)
{
	size_t i, k;

	for (i = 0; rows && i < n; i++) {
		for (k = 0; rows[i].frames && k < 2 * rows[i].depth; k++)
			free(rows[i].frames[k]);
		free(rows[i].frames);
	}
	free(rows);
}

/* A stack's frames as text, for the rows shown. 0, or -1 (memory). */
static int row_frames(const struct view_ctx *v, struct grow_row *w)
{
	unsigned int d, k;
	const uint64_t *fr = kmt_stacks_frames(rpt_stacks(v->r), w->idx, &d);

	w->frames = calloc(2 * d + 1, sizeof(char *));
	if (!w->frames)
		return -1;
	w->depth = d;
	for (k = 0; k < d; k++) {
		const struct symres *sr = v->st ? symtab_get_stack(v->st, v->o->ks, fr, k) : NULL;
		const char *s = sr ? sr->sym : NULL;

		if (asprintf(&w->frames[d + k], "0x%" PRIx64, fr[k]) < 0) {
			w->frames[d + k] = NULL;
			return -1;
		}
		w->frames[k] = strdup(s ? s : w->frames[d + k]);
		if (!w->frames[k])
			return -1;
	}
	return 0;
}

/*
 * The rows of one kind: --at, what is outstanding at T; --diff, what
 * changed in the window (allocations, frees or outstanding objects).
 * NULL with errno ENOMEM: memory.
 */
static struct grow_row *rows_build(const struct gctx *c, enum grow_by by, size_t *n)
{
	const struct view_ctx *v = c->v;
	const struct growth *g = c->ga->g;
	const struct grow_snap *s1 = growth_is_diff(g) ? growth_snap(g, 0) : NULL;
	const struct grow_snap *s2 = growth_snap(g, growth_is_diff(g) ? 1 : 0);
	size_t total = by == BY_SITE ? s2->nsites : by == BY_CACHE ? s2->ncaches : s2->nstacks;
	struct grow_row *rows = calloc(total ? total : 1, sizeof(*rows));
	size_t i;

	*n = 0;
	if (!rows) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < total; i++) {
		struct grow_row *w = &rows[*n];

		w->a = tally_of(s1, by, i);
		w->b = tally_of(s2, by, i);
		if (s1 ? w->a.live == w->b.live && w->a.allocs == w->b.allocs &&
			 w->a.frees == w->b.frees : !w->b.live)
			continue;
		w->idx = (uint32_t)i;
		if (by == BY_SITE) {
			w->addr = rpt_site(v->r, i)->addr;
			w->name = sym_of(v, w->addr);
		} else if (by == BY_CACHE) {
			w->name = rpt_cache(v->r, i)->name;
		}
		(*n)++;
	}
	/* The survivors: oldest first, so the first one seen is each row's oldest. */
	for (i = 0; s1 && i < s2->nobjs; i++) {
		const struct grow_obj *o = &s2->objs[i];
		uint32_t key = by == BY_SITE ? o->site : by == BY_CACHE ? o->cache : o->stack;
		/* Rows are by index, in index order: a binary search finds the object's. */
		size_t lo = 0, hi = *n, k;

		while (lo < hi) {
			k = (lo + hi) / 2;
			if (rows[k].idx < key)
				lo = k + 1;
			else
				hi = k;
		}
		if (lo == *n || rows[lo].idx != key)
			continue;
		if (!rows[lo].surv)
			rows[lo].surv_oldest_ts = o->ts;
		rows[lo].surv++;
		rows[lo].surv_bytes += o->bytes;
	}
	if (*n)
		qsort(rows, *n, sizeof(*rows), s1 ? by_growth : by_live);
	return rows;
}

/* ---- columns ---------------------------------------------------------------------- */

/* Every field a table may show; each table lists its own in order. */
enum {
	GF_NAME, GF_FRAMES, GF_FRAME_ADDRS, GF_FROM, GF_TO, GF_LIVE_FROM, GF_LIVE_TO,
	GF_GROWTH, GF_BYTES_FROM, GF_BYTES_TO, GF_GROWTH_BYTES, GF_ALLOCS, GF_FAILED,
	GF_FREES, GF_BYTES_ALLOC, GF_BYTES_FREED, GF_SURV, GF_SURV_BYTES, GF_SURV_OLDEST,
	GF_LIVE, GF_LIVE_BYTES, GF_OLDEST, GF_ADDR, GF_DEPTH,
	/* The objects' table */
	GF_PTR, GF_OSITE, GF_OCACHE, GF_OBYTES, GF_OALLOC, GF_OAGE, GF_OSITE_ADDR,
};

static uint64_t age(const struct gctx *c, uint64_t ts)
{
	return c->end_abs > ts ? c->end_abs - ts : 0;
}

static void row_cell(const void *ctx, size_t row, size_t col, struct out_cell *out)
{
	const struct gctx *c = ctx;
	const struct grow_row *w = &c->rows[row];

	switch (c->ids[col]) {
	case GF_NAME:
		out->s = w->name;
		break;
	case GF_FRAMES:
		out->sv = (const char *const *)w->frames;
		out->n = w->depth;
		break;
	case GF_FRAME_ADDRS:
		out->sv = (const char *const *)(w->frames ? w->frames + w->depth : NULL);
		out->n = w->depth;
		break;
	case GF_DEPTH:
		out->u = w->depth;
		break;
	case GF_FROM:
		out->u = c->ga->t1;
		break;
	case GF_TO:
		out->u = c->ga->diff ? c->ga->t2 : c->ga->t1;
		break;
	case GF_LIVE_FROM:
		out->u = w->a.live;
		break;
	case GF_LIVE_TO:
	case GF_LIVE:
		out->u = w->b.live;
		break;
	case GF_GROWTH:
		out->i = grow_objs(w);
		break;
	case GF_BYTES_FROM:
		out->u = w->a.live_bytes;
		break;
	case GF_BYTES_TO:
	case GF_LIVE_BYTES:
		out->u = w->b.live_bytes;
		break;
	case GF_GROWTH_BYTES:
		out->i = grow_bytes(w);
		break;
	case GF_ALLOCS:
		out->u = w->b.allocs - w->a.allocs;
		break;
	case GF_FAILED:
		out->u = w->b.failed - w->a.failed;
		break;
	case GF_FREES:
		out->u = w->b.frees - w->a.frees;
		break;
	case GF_BYTES_ALLOC:
		out->u = w->b.bytes_alloc - w->a.bytes_alloc;
		break;
	case GF_BYTES_FREED:
		out->u = w->b.bytes_freed - w->a.bytes_freed;
		break;
	case GF_SURV:
		out->u = w->surv;
		break;
	case GF_SURV_BYTES:
		out->u = w->surv_bytes;
		break;
	case GF_SURV_OLDEST:
		out->null = !w->surv;
		out->u = age(c, w->surv_oldest_ts);
		break;
	case GF_OLDEST:
		out->null = !w->b.live;
		out->u = age(c, w->b.oldest_ts);
		break;
	case GF_ADDR:
		out->u = w->addr;
		break;
	}
}

static void obj_cell(const void *ctx, size_t row, size_t col, struct out_cell *out)
{
	const struct gctx *c = ctx;
	const struct grow_obj *o = &c->objs[row];
	const struct rpt_cache *ca;

	switch (c->ids[col]) {
	case GF_PTR:
		out->u = o->ptr;
		break;
	case GF_OSITE:
		out->s = sym_of(c->v, rpt_site(c->v->r, o->site)->addr);
		break;
	case GF_OCACHE:
		ca = o->cache != UINT32_MAX ? rpt_cache(c->v->r, o->cache) : NULL;
		out->null = !ca;
		out->s = ca ? ca->name : NULL;
		break;
	case GF_OBYTES:
		out->u = o->bytes;
		break;
	case GF_OALLOC:
		out->u = o->ts > c->first_abs ? o->ts - c->first_abs : 0;
		break;
	case GF_OAGE:
		out->u = age(c, o->ts);
		break;
	case GF_OSITE_ADDR:
		out->u = rpt_site(c->v->r, o->site)->addr;
		break;
	}
}

/* A table's columns with the field each shows. */
struct gcols {
	const struct out_col *cols;
	const int *ids;
	size_t n;
	void (*cell)(const void *ctx, size_t row, size_t col, struct out_cell *out);
};

#define GCOLS(c, i) { c, i, sizeof(c) / sizeof(c[0]), row_cell }

/* --diff, by call site, cache or stack: the name column first, then the same figures. */
#define DIFF_FIGURES \
	{ "live_from", "Live@T1", COL_U64, 0, OC_NO_TEXT }, \
	{ "live_to", "Live@T2", COL_U64, 0, 0 }, \
	{ "growth", "Growth", COL_I64, 0, OC_SIGN }, \
	{ "live_bytes_from", NULL, COL_U64, 0, OC_NO_TEXT }, \
	{ "live_bytes_to", NULL, COL_U64, 0, OC_NO_TEXT }, \
	{ "growth_bytes", "Bytes", COL_I64, 0, OC_SIGN }, \
	{ "survivors", "Surv", COL_U64, 0, 0 }, \
	{ "survivor_bytes", NULL, COL_U64, 0, OC_NO_TEXT }, \
	{ "oldest_survivor_ns", "Oldest", COL_NS, 0, 0 }, \
	{ "allocs", "Allocs", COL_U64, 0, 0 }, \
	{ "failed", NULL, COL_U64, 0, OC_NO_TEXT }, \
	{ "frees", "Frees", COL_U64, 0, 0 }, \
	{ "bytes_alloc", NULL, COL_U64, 0, OC_NO_TEXT }, \
	{ "bytes_freed", NULL, COL_U64, 0, OC_NO_TEXT }
#define DIFF_IDS GF_LIVE_FROM, GF_LIVE_TO, GF_GROWTH, GF_BYTES_FROM, GF_BYTES_TO, \
	GF_GROWTH_BYTES, GF_SURV, GF_SURV_BYTES, GF_SURV_OLDEST, GF_ALLOCS, GF_FAILED, GF_FREES, \
	GF_BYTES_ALLOC, GF_BYTES_FREED

/* --at: what was outstanding, and what had been allocated and freed by then. */
#define AT_FIGURES \
	{ "live", "Live", COL_U64, 0, 0 }, \
	{ "live_bytes", "Bytes", COL_U64, 0, 0 }, \
	{ "oldest_ns", "Oldest", COL_NS, 0, 0 }, \
	{ "allocs", "Allocs", COL_U64, 0, 0 }, \
	{ "failed", NULL, COL_U64, 0, OC_NO_TEXT }, \
	{ "frees", "Frees", COL_U64, 0, 0 }, \
	{ "bytes_alloc", NULL, COL_U64, 0, OC_NO_TEXT }, \
	{ "bytes_freed", NULL, COL_U64, 0, OC_NO_TEXT }
#define AT_IDS GF_LIVE, GF_LIVE_BYTES, GF_OLDEST, GF_ALLOCS, GF_FAILED, GF_FREES, \
	GF_BYTES_ALLOC, GF_BYTES_FREED

/* Each table of --diff (FIG DIFF) and of --at (FIG AT): its columns, then their fields. */
#define SITE_COLS(FIG) { \
	{ "callsite", "Call site", COL_STR, 0, OC_LEFT }, FIG##_FIGURES, \
	{ "callsite_addr", NULL, COL_ADDR, 0, OC_NO_TEXT }, \
}
#define SITE_IDS(FIG)	{ GF_NAME, FIG##_IDS, GF_ADDR }
#define CACHE_COLS(FIG)	{ { "cache", "Cache", COL_STR, 0, OC_LEFT }, FIG##_FIGURES }
#define CACHE_IDS(FIG)	{ GF_NAME, FIG##_IDS }
#define STACK_COLS(FIG) { \
	FIG##_FIGURES, \
	{ "depth", NULL, COL_U64, 0, OC_NO_TEXT }, \
	{ "frames", "Stack (innermost first)", COL_STRV, 0, OC_LEFT }, \
	{ "frame_addrs", NULL, COL_STRV, 0, OC_NO_TEXT }, \
}
#define STACK_IDS(FIG)	{ FIG##_IDS, GF_DEPTH, GF_FRAMES, GF_FRAME_ADDRS }

static const struct out_col diff_site_cols[] = SITE_COLS(DIFF);
static const int diff_site_ids[] = SITE_IDS(DIFF);
static const struct out_col diff_cache_cols[] = CACHE_COLS(DIFF);
static const int diff_cache_ids[] = CACHE_IDS(DIFF);
static const struct out_col diff_stack_cols[] = STACK_COLS(DIFF);
static const int diff_stack_ids[] = STACK_IDS(DIFF);
static const struct out_col diff_total_cols[] = {
	{ "from_ns", "T1", COL_NS, 0, 0 }, { "to_ns", "T2", COL_NS, 0, 0 }, DIFF_FIGURES,
};
static const int diff_total_ids[] = { GF_FROM, GF_TO, DIFF_IDS };

static const struct out_col at_site_cols[] = SITE_COLS(AT);
static const int at_site_ids[] = SITE_IDS(AT);
static const struct out_col at_cache_cols[] = CACHE_COLS(AT);
static const int at_cache_ids[] = CACHE_IDS(AT);
static const struct out_col at_stack_cols[] = STACK_COLS(AT);
static const int at_stack_ids[] = STACK_IDS(AT);
static const struct out_col at_total_cols[] = { { "at_ns", "T", COL_NS, 0, 0 }, AT_FIGURES };
static const int at_total_ids[] = { GF_FROM, AT_IDS };

static const struct out_col obj_cols[] = {
	{ "ptr", "Object", COL_ADDR, 0, 0 },
	{ "bytes", "Bytes", COL_U64, 0, 0 },
	{ "alloc_ns", "Allocated", COL_NS, 0, 0 },
	{ "age_ns", "Age", COL_NS, 0, 0 },
	{ "cache", "Cache", COL_STR, 12, OC_LEFT | OC_CUT },
	{ "callsite", "Call site", COL_STR, 0, OC_LEFT | OC_NO_PAD },
	{ "callsite_addr", NULL, COL_ADDR, 0, OC_NO_TEXT },
};
static const int obj_ids[] = { GF_PTR, GF_OBYTES, GF_OALLOC, GF_OAGE, GF_OCACHE, GF_OSITE,
	GF_OSITE_ADDR };

/* ---- the view ---------------------------------------------------------------------- */

static int growth_syms(const struct view_ctx *v, struct symtab *st)
{
	const struct growth_args *ga = args_of(v);
	const struct grow_snap *s;
	size_t i;
	unsigned int d;

	if (!ga || !ga->g)
		return 0;
	/* Call sites are in every report's table already; the stacks' frames are not. */
	s = growth_snap(ga->g, ga->diff ? 1 : 0);
	for (i = 0; s && i < s->nstacks; i++) {
		const uint64_t *fr = kmt_stacks_frames(rpt_stacks(v->r), i, &d);

		if (!s->stacks[i].live && !s->stacks[i].allocs)
			continue;
		if (symtab_add_stack(st, v->o->ks, fr, d))
			return -1;
	}
	return 0;
}

/* Fills t's columns, rows and text limit, and emits it. */
static int emit_rows(struct gctx *c, struct out_table *t, const struct gcols *gc, size_t n,
		     table_emit_fn emit, void *arg)
{
	t->cols = gc->cols;
	t->ncols = gc->n;
	t->cell = gc->cell;
	t->nrows = limit_of(c->v->o, n);
	t->total = n;
	t->ctx = c;
	c->ids = gc->ids;
	return emit(t, arg);
}

static const char *const by_key[2][3] = {
	{ "at_callsites", "at_caches", "at_stacks" },
	{ "growth_callsites", "growth_caches", "growth_stacks" },
};
static const char *const by_name[3] = { "call site", "cache", "kernel stack" };

/* One table by call site, cache or stack. 0, -1 (memory) or emit's nonzero. */
static int by_table(struct gctx *c, enum grow_by by, const char *span, table_emit_fn emit,
		    void *arg)
{
	static const struct gcols diff_cols[3] = {
		GCOLS(diff_site_cols, diff_site_ids), GCOLS(diff_cache_cols, diff_cache_ids),
		GCOLS(diff_stack_cols, diff_stack_ids),
	};
	static const struct gcols at_cols[3] = {
		GCOLS(at_site_cols, at_site_ids), GCOLS(at_cache_cols, at_cache_ids),
		GCOLS(at_stack_cols, at_stack_ids),
	};
	bool diff = c->ga->diff;
	struct out_table t = { 0 };
	char title[256];
	size_t n, i, shown;
	int ret = 0;

	c->rows = rows_build(c, by, &n);
	if (!c->rows)
		return -1;
	c->n = n;
	shown = limit_of(c->v->o, n);
	for (i = 0; by == BY_STACK && i < shown; i++)
		if (row_frames(c->v, &c->rows[i]))
			ret = -1;
	if (!ret) {
		snprintf(title, sizeof(title), "%s by %s, %s", diff ? "Growth" : "Outstanding",
			 by_name[by], span);
		t.key = by_key[diff][by];
		t.title = title;
		if (by == BY_SITE)
			t.note = diff ?
				"Live@T2: objects outstanding at T2; Growth and Bytes: the "
				"difference from T1; Surv: objects allocated in the window (after "
				"T1, up to T2) still live at T2, Oldest: the age at T2 of the "
				"oldest of them; Allocs and Frees: in the window. Most bytes grown "
				"first; rows without a change in the window are left out." :
				"Live and Bytes: objects outstanding at T; Oldest: the oldest one's "
				"age at T; Allocs and Frees: from the trace's start to T. Most "
				"bytes first.";
		ret = emit_rows(c, &t, diff ? &diff_cols[by] : &at_cols[by], n, emit, arg);
	}
	rows_free(c->rows, n);
	c->rows = NULL;
	return ret;
}

static int growth_tables(const struct view_ctx *v, table_emit_fn emit, void *arg)
{
	static const struct gcols diff_total = GCOLS(diff_total_cols, diff_total_ids);
	static const struct gcols at_total = GCOLS(at_total_cols, at_total_ids);
	static const struct gcols objs = { obj_cols, obj_ids, sizeof(obj_cols) / sizeof(obj_cols[0]),
					    obj_cell };
	const struct growth_args *ga = args_of(v);
	const struct grow_snap *s1, *s2;
	struct gctx c = { .v = v, .ga = ga };
	struct grow_row total = { 0 };
	struct out_table t = { 0 };
	char span[96], a[32], b[32], title[256];
	size_t i;
	int ret;

	if (!ga || !ga->g)
		return 0;
	s1 = ga->diff ? growth_snap(ga->g, 0) : NULL;
	s2 = growth_snap(ga->g, ga->diff ? 1 : 0);
	c.end_abs = s2->abs_ns;
	c.first_abs = s2->abs_ns - s2->rel_ns;
	out_fmt_secs(a, sizeof(a), ga->t1);
	out_fmt_secs(b, sizeof(b), ga->t2);
	if (ga->diff)
		snprintf(span, sizeof(span), "from %s to %s", a, b);
	else
		snprintf(span, sizeof(span), "at %s", a);

	/* The whole trace's row: every selected object. */
	total.a = s1 ? s1->total : total.a;
	total.b = s2->total;
	for (i = 0; s1 && i < s2->nobjs; i++) {
		if (!total.surv)
			total.surv_oldest_ts = s2->objs[i].ts;
		total.surv++;
		total.surv_bytes += s2->objs[i].bytes;
	}
	c.rows = &total;
	c.n = 1;
	snprintf(title, sizeof(title), "%s, %s after the first record",
		 ga->diff ? "Growth" : "Outstanding objects", span);
	t.key = ga->diff ? "growth" : "at";
	t.title = title;
	ret = emit_rows(&c, &t, ga->diff ? &diff_total : &at_total, 1, emit, arg);
	if (!ret)
		ret = by_table(&c, BY_SITE, span, emit, arg);
	if (!ret)
		ret = by_table(&c, BY_CACHE, span, emit, arg);
	if (!ret && rpt_has_stacks(v->r))
		ret = by_table(&c, BY_STACK, span, emit, arg);
	if (ret)
		return ret;

	memset(&t, 0, sizeof(t));
	if (ga->diff)
		snprintf(title, sizeof(title), "Survivors, allocated after %s and live at %s, "
			 "oldest first", a, b);
	else
		snprintf(title, sizeof(title), "Objects outstanding at %s, oldest first", a);
	t.key = ga->diff ? "growth_survivors" : "at_objects";
	t.title = title;
	t.note = "Allocated: time after the first record; Age: at the table's end time.";
	c.objs = s2->objs;
	return emit_rows(&c, &t, &objs, s2->nobjs, emit, arg);
}

const struct report_view view_growth = {
	.name = "growth",
	.syms = growth_syms,
	.tables = growth_tables,
};
