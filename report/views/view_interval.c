// SPDX-License-Identifier: GPL-2.0-only
/*
 * view_interval.c - the per-interval view: one report (report_core) fed
 * the whole trace, its per-cache, per-call-site or per-stack counters
 * snapshotted at every interval boundary; an interval's figures are the
 * differences. Each closed interval is a table (views/view.h), its columns
 * defined once, that the writers render for kmemtrace-report --interval
 * and kmemtrace-top alike.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "views/view_interval.h"

/* The counters an interval takes differences of. */
struct snap {
	uint64_t allocs, failed, bytes_req, bytes_alloc, frees, bytes_freed;
};

struct ivl {
	struct rpt *r;
	struct ivl_opts o;
	bool started, dirty;
	uint64_t origin, open_end, index;
	uint64_t records0, lost0, late, unstacked0;
	/*
	 * A rotated trace's cut (ivl_set_cut()): the records before it, its
	 * checkpoint's, are fed to the analysis and counted in no interval.
	 */
	uint64_t cut_ns;
	bool before_cut;	/* records before the cut were fed: the snapshot is due */
	struct snap *prev;	/* per cache, site or stack index */
	size_t nprev;
	struct ivl_row *rows;
	size_t rows_cap;
};

const char ivl_no_stacks_msg[] = "the trace has no kernel stacks to group by: trace with "
				 "kmemtrace.ko's parameter stack_depth (1..64) to record them";

const char ivl_keys_help[] = "bytes (size), allocs (count), frees, net, frag, name";

int ivl_key_parse(const char *s, enum ivl_key *k)
{
	static const struct {
		const char *name;
		enum ivl_key k;
	} keys[] = {
		{ "bytes", IK_BYTES }, { "size", IK_BYTES }, { "allocs", IK_ALLOCS },
		{ "count", IK_ALLOCS }, { "hit", IK_ALLOCS }, { "frees", IK_FREES },
		{ "net", IK_NET }, { "live", IK_NET }, { "frag", IK_FRAG }, { "name", IK_NAME },
		{ "callsite", IK_NAME },
	};
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strcmp(s, keys[i].name) == 0) {
			*k = keys[i].k;
			return 0;
		}
	}
	return -1;
}

struct ivl *ivl_new(struct rpt *r, const struct ivl_opts *o)
{
	struct ivl *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->r = r;
	v->o = *o;
	if (!v->o.interval_ns)
		v->o.interval_ns = 1000000000;
	v->open_end = UINT64_MAX;
	return v;
}

void ivl_free(struct ivl *v)
{
	if (!v)
		return;
	free(v->prev);
	free(v->rows);
	free(v);
}

const struct ivl_opts *ivl_opts(const struct ivl *v)
{
	return &v->o;
}

uint64_t ivl_open_end(const struct ivl *v)
{
	return v->open_end;
}

uint64_t ivl_open_index(const struct ivl *v)
{
	return v->index;
}

static void start(struct ivl *v, uint64_t first_ts)
{
	v->started = true;
	v->origin = v->o.has_origin ? v->o.origin : first_ts;
	v->open_end = v->o.manual ? UINT64_MAX : v->origin + v->o.interval_ns;
}

static size_t nentries(const struct ivl *v)
{
	switch (v->o.by) {
	case IVL_BY_SITE:
		return rpt_nsites(v->r);
	case IVL_BY_STACK:
		return rpt_nstacks(v->r);
	default:
		return rpt_ncaches(v->r);
	}
}

static void current(const struct ivl *v, size_t i, struct snap *s, const char **name,
		    uint64_t *addr)
{
	if (v->o.by == IVL_BY_SITE) {
		const struct rpt_site *x = rpt_site(v->r, i);

		*s = (struct snap){ x->hits, x->failed, x->bytes_req, x->bytes_alloc, x->frees,
				    x->bytes_freed };
		*name = NULL;
		*addr = x->addr;
	} else if (v->o.by == IVL_BY_STACK) {
		const struct rpt_stack *x = rpt_stack(v->r, i);
		unsigned int d = 0;
		const uint64_t *fr = kmt_stacks_frames(rpt_stacks(v->r), (uint32_t)i, &d);

		/* The allocations that carried it, and the frees of their objects. */
		*s = (struct snap){ x->hits, x->failed, x->bytes_req, x->bytes_alloc, x->frees,
				    x->bytes_freed };
		*name = NULL;
		*addr = fr && d ? fr[0] : 0;
	} else {
		const struct rpt_cache *c = rpt_cache(v->r, i);

		/* kmem_cache_free()s of objects from before the trace name their cache too. */
		*s = (struct snap){ c->allocs, c->failed, c->bytes_req, c->bytes_alloc,
				    c->frees + c->untracked_frees, c->bytes_freed };
		*name = c->name;
		*addr = c->id;
	}
}

static int key_cmp(const struct ivl_row *a, const struct ivl_row *b, enum ivl_key k)
{
	double fa, fb;

	switch (k) {
	case IK_BYTES:
		return (a->bytes_alloc < b->bytes_alloc) - (a->bytes_alloc > b->bytes_alloc);
	case IK_ALLOCS:
		return (a->allocs < b->allocs) - (a->allocs > b->allocs);
	case IK_FREES:
		return (a->frees < b->frees) - (a->frees > b->frees);
	case IK_NET:
		return (a->net < b->net) - (a->net > b->net);
	case IK_FRAG:
		fa = rpt_frag(a->bytes_req, a->bytes_alloc);
		fb = rpt_frag(b->bytes_req, b->bytes_alloc);
		return (fa < fb) - (fa > fb);
	case IK_NAME:
		if (a->name && b->name)
			return strcmp(a->name, b->name);
		return (a->addr > b->addr) - (a->addr < b->addr);
	}
	return 0;
}

static enum ivl_key sort_key_g;

static int row_cmp(const void *pa, const void *pb)
{
	const struct ivl_row *a = pa, *b = pb;
	int c = key_cmp(a, b, sort_key_g);

	if (!c)
		c = key_cmp(a, b, IK_ALLOCS);
	if (!c)
		c = key_cmp(a, b, IK_NAME);
	if (!c)
		c = (a->addr > b->addr) - (a->addr < b->addr);
	return c;
}

/* prev (per entry) grown to n entries; 0, or -1 (memory). */
static int grow_prev(struct ivl *v, size_t n)
{
	struct snap *p;

	if (n <= v->nprev)
		return 0;
	p = realloc(v->prev, n * sizeof(*p));
	if (!p)
		return -1;
	memset(p + v->nprev, 0, (n - v->nprev) * sizeof(*p));
	v->prev = p;
	v->nprev = n;
	return 0;
}

/*
 * The snapshot the first interval counts from: what a rotated trace's
 * checkpoint holds (its sums, its live allocations) is no interval's.
 */
static int baseline(struct ivl *v)
{
	const struct rpt_totals *t = rpt_totals(v->r);
	size_t n = nentries(v), i;

	if (grow_prev(v, n))
		return -1;
	for (i = 0; i < n; i++) {
		const char *name;
		uint64_t addr;

		current(v, i, &v->prev[i], &name, &addr);
	}
	v->records0 = t->records;
	v->lost0 = t->lost;
	v->unstacked0 = t->allocs - t->stack_allocs;
	v->before_cut = false;
	rpt_shown(v->r);
	return 0;
}

void ivl_set_cut(struct ivl *v, uint64_t cut_ns)
{
	v->cut_ns = cut_ns;
}

/* Closes the open interval: its table, the callback, the new snapshot. */
static int close_one(struct ivl *v, ivl_emit_fn fn, void *arg)
{
	const struct rpt_totals *t = rpt_totals(v->r);
	size_t n = nentries(v), i, k = 0;
	struct ivl_table tab;
	int ret;

	/*
	 * In a trace with stacks every allocation carries one or says it has
	 * none: allocations without either mean stacks were not taken.
	 */
	if (v->o.by == IVL_BY_STACK && t->allocs && !rpt_has_stacks(v->r))
		return IVL_NO_STACKS;
	if (grow_prev(v, n))
		return -1;
	if (n > v->rows_cap) {
		struct ivl_row *p = realloc(v->rows, n * sizeof(*p));

		if (!p)
			return -1;
		v->rows = p;
		v->rows_cap = n;
	}
	memset(&tab, 0, sizeof(tab));
	for (i = 0; i < n; i++) {
		struct snap s, *p = &v->prev[i];
		struct ivl_row *w = &v->rows[k];
		const char *name;
		uint64_t addr;

		current(v, i, &s, &name, &addr);
		if (s.allocs == p->allocs && s.frees == p->frees)
			continue;
		w->name = name;
		w->addr = addr;
		w->stack = (uint32_t)i;
		w->allocs = s.allocs - p->allocs;
		w->bytes_req = s.bytes_req - p->bytes_req;
		w->bytes_alloc = s.bytes_alloc - p->bytes_alloc;
		w->frees = s.frees - p->frees;
		w->bytes_freed = s.bytes_freed - p->bytes_freed;
		w->net = (int64_t)(w->allocs - (s.failed - p->failed)) - (int64_t)w->frees;
		tab.total.allocs += w->allocs;
		tab.total.bytes_req += w->bytes_req;
		tab.total.bytes_alloc += w->bytes_alloc;
		tab.total.frees += w->frees;
		tab.total.bytes_freed += w->bytes_freed;
		tab.total.net += w->net;
		*p = s;
		k++;
	}
	sort_key_g = v->o.sort;
	qsort(v->rows, k, sizeof(v->rows[0]), row_cmp);
	tab.index = v->index;
	tab.origin = v->origin;
	tab.start_ns = v->index * v->o.interval_ns;
	tab.end_ns = tab.start_ns + v->o.interval_ns;
	tab.records = t->records - v->records0;
	tab.lost = t->lost - v->lost0;
	if (v->o.by == IVL_BY_STACK)
		tab.unstacked = t->allocs - t->stack_allocs - v->unstacked0;
	v->unstacked0 += tab.unstacked;
	tab.late = v->late;
	tab.nactive = k;
	tab.nrows = v->o.rows && v->o.rows < k ? v->o.rows : k;
	tab.rows = v->rows;
	tab.r = v->r;
	v->records0 = t->records;
	v->lost0 = t->lost;
	v->late = 0;
	v->index++;
	if (!v->o.manual)
		v->open_end += v->o.interval_ns;
	v->dirty = false;
	rpt_shown(v->r);
	ret = fn ? fn(&tab, arg) : 0;
	return ret;
}

int ivl_close_until(struct ivl *v, uint64_t ts, ivl_emit_fn fn, void *arg)
{
	int ret;

	if (!v->started) {
		if (!v->o.has_origin)
			return 0;
		start(v, v->o.origin);
	}
	while (v->open_end <= ts)
		if ((ret = close_one(v, fn, arg)))
			return ret;
	return 0;
}

int ivl_close_now(struct ivl *v, ivl_emit_fn fn, void *arg)
{
	if (!v->started)
		start(v, 0);
	return close_one(v, fn, arg);
}

int ivl_flush(struct ivl *v, ivl_emit_fn fn, void *arg)
{
	if (!v->started || !v->dirty)
		return 0;
	return close_one(v, fn, arg);
}

int ivl_feed(struct ivl *v, const union kmt_rec *const *recs, size_t n, ivl_emit_fn fn,
	     void *arg)
{
	size_t i = 0, j;
	int ret;

	if (!n)
		return 0;
	/* Records come in time order: a checkpoint's, before the cut, first. */
	if (!v->started && recs[0]->c.timestamp < v->cut_ns) {
		for (j = 0; j < n && recs[j]->c.timestamp < v->cut_ns; j++)
			;
		if (rpt_feed_refs(v->r, recs, j))
			return -1;
		v->before_cut = true;
		recs += j;
		n -= j;
		if (!n)
			return 0;
	}
	if (v->before_cut && baseline(v))
		return -1;
	if (!v->started)
		start(v, recs[0]->c.timestamp);
	if (v->o.manual) {
		v->dirty = true;
		return rpt_feed_refs(v->r, recs, n) ? -1 : 0;
	}
	while (i < n) {
		uint64_t open_start = v->open_end - v->o.interval_ns;

		for (j = i; j < n && recs[j]->c.timestamp < v->open_end; j++)
			v->late += recs[j]->c.timestamp < open_start;
		if (j > i) {
			if (rpt_feed_refs(v->r, recs + i, j - i))
				return -1;
			v->dirty = true;
			i = j;
		}
		if (i < n && (ret = ivl_close_until(v, recs[i]->c.timestamp, fn, arg)))
			return ret;
	}
	return 0;
}

/* ---- the table, its columns defined once ------------------------------------ */

enum { IC_INTERVAL, IC_START, IC_END, IC_STACK, IC_CALLSITE, IC_ADDR, IC_NAME, IC_ALLOCS,
       IC_REQ, IC_ALLOC, IC_FREES, IC_FREED, IC_NET, IC_FRAG, IC_FRAMES, IC_FRAME_ADDRS, IC_N };

/* The CSV document has one header: each row says its interval. */
#define IC_CSV_ONLY	(OC_NO_TEXT | OC_NO_JSON)

static const struct out_col ivl_cols[IC_N] = {
	[IC_INTERVAL] = { "interval", NULL, COL_U64, 0, IC_CSV_ONLY },
	[IC_START] = { "start_ns", NULL, COL_U64, 0, IC_CSV_ONLY },
	[IC_END] = { "end_ns", NULL, COL_U64, 0, IC_CSV_ONLY },
	/* A stack's index: the same stack in every interval of the document. */
	[IC_STACK] = { "stack", NULL, COL_U64, 0, OC_NO_TEXT },
	/* A call site's address: "callsite" in CSV, "addr" in JSON (as schema 1 has them). */
	[IC_CALLSITE] = { "callsite", NULL, COL_ADDR, 0, IC_CSV_ONLY },
	[IC_ADDR] = { "addr", NULL, COL_ADDR, 0, OC_NO_TEXT | OC_NO_CSV },
	[IC_NAME] = { "symbol", "CALLSITE", COL_STR, 0, OC_CUT },
	[IC_ALLOCS] = { "allocs", "ALLOCS", COL_U64, 9, 0 },
	[IC_REQ] = { "bytes_req", "REQ", COL_U64, 11, OC_NO_TEXT },
	[IC_ALLOC] = { "bytes_alloc", "BYTES", COL_U64, 11, 0 },
	[IC_FREES] = { "frees", "FREES", COL_U64, 9, 0 },
	[IC_FREED] = { "bytes_freed", "FREED", COL_U64, 11, OC_NO_TEXT },
	[IC_NET] = { "net", "NET", COL_I64, 8, OC_SIGN },
	[IC_FRAG] = { "frag_pct", "FRAG%", COL_FIX3, 7, 0 },
	/* A stack's frames, innermost first: in text one a line under its row, as stackcount. */
	[IC_FRAMES] = { "frames", NULL, COL_STRV, 0, 0 },
	[IC_FRAME_ADDRS] = { "frame_addrs", NULL, COL_STRV, 0, OC_NO_TEXT },
};

static const char *row_name(const struct ivl_tab *v, const struct ivl_row *r, char *buf,
			    size_t len)
{
	if (r->name)
		return r->name;
	if (v->o->by == IVL_BY_STACK)
		return stack_label(v->o->ks, v->it->r, r->stack, buf, len);
	return ksyms_format_ret(v->o->ks, r->addr, buf, len);
}

/* The name column fits the longest name, and is at least as wide as it always was. */
static int name_width(const struct ivl_tab *v)
{
	int w = v->o->by != IVL_BY_CACHE ? 24 : 20;
	size_t i;

	for (i = 0; i < v->it->nrows; i++) {
		int l = (int)strlen(v->names[i]);

		if (l > w)
			w = l;
	}
	return w;
}

static void figures_cell(const struct ivl_row *r, size_t col, struct out_cell *c)
{
	switch (col) {
	case IC_ALLOCS:
		c->u = r->allocs;
		break;
	case IC_REQ:
		c->u = r->bytes_req;
		break;
	case IC_ALLOC:
		c->u = r->bytes_alloc;
		break;
	case IC_FREES:
		c->u = r->frees;
		break;
	case IC_FREED:
		c->u = r->bytes_freed;
		break;
	case IC_NET:
		c->i = r->net;
		break;
	/* Thousandths of a percent, rounded here so that every writer shows the same. */
	default:
		c->u = (uint64_t)(rpt_frag(r->bytes_req, r->bytes_alloc) * 1000.0 + 0.5);
		break;
	}
}

static void row_cell(const void *ctx, size_t row, size_t col, struct out_cell *c)
{
	const struct ivl_tab *v = ctx;
	const struct ivl_row *r = &v->it->rows[row];

	col = v->colmap[col];
	switch (col) {
	case IC_INTERVAL:
		c->u = v->it->index;
		break;
	case IC_STACK:
		c->u = r->stack;
		break;
	case IC_FRAMES:
		c->sv = (const char *const *)v->frames[row].frames;
		c->n = v->frames[row].depth;
		break;
	case IC_FRAME_ADDRS:
		c->sv = (const char *const *)v->frames[row].addrs;
		c->n = v->frames[row].depth;
		break;
	case IC_START:
		c->u = v->it->start_ns;
		break;
	case IC_END:
		c->u = v->it->end_ns;
		break;
	case IC_CALLSITE:
	case IC_ADDR:
		c->u = r->addr;
		break;
	case IC_NAME:
		c->s = v->names[row];
		break;
	default:
		figures_cell(r, col, c);
		break;
	}
}

static void total_cell(const void *ctx, size_t row, size_t col, struct out_cell *c)
{
	const struct ivl_tab *v = ctx;

	(void)row;
	figures_cell(&v->it->total, IC_ALLOCS + col, c);
}

static void ivl_title(char *buf, size_t len, const struct ivl_table *t)
{
	uint64_t s = t->start_ns, e = t->end_ns;
	int n;

	n = snprintf(buf, len, "interval %" PRIu64 "  %" PRIu64 ".%03" PRIu64 "s - %" PRIu64
		     ".%03" PRIu64 "s  allocs %" PRIu64 "  bytes %" PRIu64 "  frees %" PRIu64,
		     t->index, s / 1000000000, s % 1000000000 / 1000000, e / 1000000000,
		     e % 1000000000 / 1000000, t->total.allocs, t->total.bytes_alloc,
		     t->total.frees);
	if (t->lost && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "  LOST %" PRIu64, t->lost);
	if (t->late && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "  late %" PRIu64, t->late);
	/* Allocations no row holds: the interval's totals are its rows'. */
	if (t->unstacked && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "  without a stack %" PRIu64, t->unstacked);
}

/* The whole stack of each row, its frames symbolized once each. 0, or -1 (memory). */
static int tab_frames(struct ivl_tab *v)
{
	const struct ivl_table *t = v->it;
	struct out_opts so = { .ks = v->o->ks, .sl = v->o->sl };
	struct symtab st = { 0 };
	int ret = -1;
	size_t i;

	v->frames = calloc(t->nrows ? t->nrows : 1, sizeof(*v->frames));
	if (!v->frames)
		return -1;
	for (i = 0; i < t->nrows; i++)
		if (stack_syms_add(&st, so.ks, t->r, t->rows[i].stack))
			goto out;
	if (symtab_resolve(&st, &so))
		goto out;
	for (i = 0; i < t->nrows; i++)
		if (stack_frames_build(&v->frames[i], t->r, &st, so.ks, t->rows[i].stack))
			goto out;
	ret = 0;
out:
	symtab_free(&st);
	return ret;
}

/* Whether the table has view column i. */
static bool has_col(const struct ivl_out *o, size_t i)
{
	switch (i) {
	case IC_CALLSITE:
	case IC_ADDR:
		return o->by != IVL_BY_CACHE;
	case IC_STACK:
		return o->by == IVL_BY_STACK;
	case IC_FRAMES:
	case IC_FRAME_ADDRS:
		return o->by == IVL_BY_STACK && !o->one_line;
	default:
		return true;
	}
}

int ivl_tab_init(struct ivl_tab *v, const struct ivl_table *t, const struct ivl_out *o)
{
	size_t i, n = 0;

	memset(v, 0, sizeof(*v));
	v->it = t;
	v->o = o;
	v->names = calloc(t->nrows ? t->nrows : 1, sizeof(*v->names));
	if (!v->names)
		return -1;
	for (i = 0; i < t->nrows; i++) {
		const char *s = row_name(v, &t->rows[i], v->names[i], sizeof(v->names[i]));

		if (s != v->names[i])
			snprintf(v->names[i], sizeof(v->names[i]), "%s", s);
	}
	if (has_col(o, IC_FRAMES) && tab_frames(v))
		return -1;
	for (i = 0; i < IC_N; i++) {
		if (!has_col(o, i))
			continue;
		v->cols[n] = ivl_cols[i];
		v->colmap[n++] = (unsigned char)i;
	}
	for (i = 0; i < n; i++) {
		if (v->colmap[i] != IC_NAME)
			continue;
		if (o->by == IVL_BY_CACHE) {
			v->cols[i].key = "cache";
			v->cols[i].head = "CACHE";
		} else if (o->by == IVL_BY_STACK) {
			/* Not "symbol": two frames' functions, not one address's symbol. */
			v->cols[i].key = "label";
			v->cols[i].head = "STACK";
		}
		v->cols[i].width = o->name_width ? o->name_width : name_width(v);
	}
	/* The interval screen's layout, older than the model: kept to the byte. */
	ivl_title(v->title, sizeof(v->title), t);
	snprintf(v->none, sizeof(v->none), "%s\n  (no allocations or frees)\n\n", v->title);
	v->text.gap = 1;
	v->text.rule = -1;
	v->text.flags = OT_TITLE_LINE;
	v->text.none = v->none;
	v->text.more = "";
	v->t = (struct out_table){ .key = "rows", .title = v->title, .cols = v->cols,
				   .ncols = n, .nrows = t->nrows, .total = t->nactive,
				   .cell = row_cell, .ctx = v, .text = &v->text };
	v->total = (struct out_table){ .key = "total", .title = "total",
				       .cols = &ivl_cols[IC_ALLOCS], .ncols = IC_FRAG + 1 - IC_ALLOCS,
				       .nrows = 1, .total = 1, .cell = total_cell, .ctx = v };
	return 0;
}

void ivl_tab_free(struct ivl_tab *v)
{
	size_t i;

	for (i = 0; v->frames && i < v->it->nrows; i++)
		stack_frames_free(&v->frames[i]);
	free(v->frames);
	v->frames = NULL;
	free(v->names);
	v->names = NULL;
}
