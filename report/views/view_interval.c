// SPDX-License-Identifier: GPL-2.0-only
/*
 * view_interval.c - the per-interval view: one report (report_core) fed
 * the whole trace, its per-cache and per-call-site counters snapshotted at
 * every interval boundary; an interval's figures are the differences. Its
 * columns are defined once and rendered as text, CSV and JSON, for
 * kmemtrace-report --interval and kmemtrace-top alike.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "writers/report_out.h"
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
	uint64_t records0, lost0, late;
	struct snap *prev;	/* per cache or site index */
	size_t nprev;
	struct ivl_row *rows;
	size_t rows_cap;
};

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
	return v->o.sites ? rpt_nsites(v->r) : rpt_ncaches(v->r);
}

static void current(const struct ivl *v, size_t i, struct snap *s, const char **name,
		    uint64_t *addr)
{
	if (v->o.sites) {
		const struct rpt_site *x = rpt_site(v->r, i);

		*s = (struct snap){ x->hits, x->failed, x->bytes_req, x->bytes_alloc, x->frees,
				    x->bytes_freed };
		*name = NULL;
		*addr = x->addr;
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

/* Closes the open interval: its table, the callback, the new snapshot. */
static int close_one(struct ivl *v, ivl_emit_fn fn, void *arg)
{
	const struct rpt_totals *t = rpt_totals(v->r);
	size_t n = nentries(v), i, k = 0;
	struct ivl_table tab;
	int ret;

	if (n > v->nprev) {
		struct snap *p = realloc(v->prev, n * sizeof(*p));

		if (!p)
			return -1;
		memset(p + v->nprev, 0, (n - v->nprev) * sizeof(*p));
		v->prev = p;
		v->nprev = n;
	}
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
	tab.late = v->late;
	tab.nactive = k;
	tab.nrows = v->o.rows && v->o.rows < k ? v->o.rows : k;
	tab.rows = v->rows;
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

/* ---- columns, defined once --------------------------------------------- */

enum ivl_col_kind { CK_U64, CK_S64, CK_PCT };

struct ivl_col {
	const char *head;	/* text */
	const char *key;	/* CSV and JSON */
	int width;
	enum ivl_col_kind kind;
	bool text;		/* shown in the text table */
	uint64_t (*u)(const struct ivl_row *r);
};

static uint64_t c_allocs(const struct ivl_row *r) { return r->allocs; }
static uint64_t c_req(const struct ivl_row *r) { return r->bytes_req; }
static uint64_t c_alloc(const struct ivl_row *r) { return r->bytes_alloc; }
static uint64_t c_frees(const struct ivl_row *r) { return r->frees; }
static uint64_t c_freed(const struct ivl_row *r) { return r->bytes_freed; }
static uint64_t c_net(const struct ivl_row *r) { return (uint64_t)r->net; }
static uint64_t c_frag(const struct ivl_row *r)
{
	/* Thousandths of a percent, so that every writer rounds the same way. */
	return (uint64_t)(rpt_frag(r->bytes_req, r->bytes_alloc) * 1000.0 + 0.5);
}

static const struct ivl_col cols[] = {
	{ "ALLOCS", "allocs", 9, CK_U64, true, c_allocs },
	{ "REQ", "bytes_req", 11, CK_U64, false, c_req },
	{ "BYTES", "bytes_alloc", 11, CK_U64, true, c_alloc },
	{ "FREES", "frees", 9, CK_U64, true, c_frees },
	{ "FREED", "bytes_freed", 11, CK_U64, false, c_freed },
	{ "NET", "net", 8, CK_S64, true, c_net },
	{ "FRAG%", "frag_pct", 7, CK_PCT, true, c_frag },
};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

static void fmt_val(char *buf, size_t len, const struct ivl_col *c, const struct ivl_row *r,
		    bool text)
{
	uint64_t v = c->u(r);

	switch (c->kind) {
	case CK_U64:
		snprintf(buf, len, "%" PRIu64, v);
		break;
	case CK_S64:
		snprintf(buf, len, text && (int64_t)v > 0 ? "+%" PRId64 : "%" PRId64, (int64_t)v);
		break;
	case CK_PCT:
		snprintf(buf, len, "%" PRIu64 ".%03" PRIu64, v / 1000, v % 1000);
		break;
	}
}

static const char *row_name(const struct ivl_row *r, const struct ivl_out *o, char *buf,
			    size_t len)
{
	if (r->name)
		return r->name;
	return ksyms_format_ret(o->ks, r->addr, buf, len);
}

int ivl_name_width(const struct ivl_table *t, const struct ivl_out *o)
{
	int w = o->sites ? 24 : 20;
	char buf[256];
	size_t i;

	for (i = 0; i < t->nrows; i++) {
		int l = (int)strlen(row_name(&t->rows[i], o, buf, sizeof(buf)));

		if (l > w)
			w = l;
	}
	return w;
}

void ivl_text_columns(FILE *fp, const struct ivl_out *o, int name_width)
{
	size_t i;

	fprintf(fp, "%-*s", name_width, o->sites ? "CALLSITE" : "CACHE");
	for (i = 0; i < NCOLS; i++)
		if (cols[i].text)
			fprintf(fp, " %*s", cols[i].width, cols[i].head);
	fputc('\n', fp);
}

void ivl_text_row(FILE *fp, const struct ivl_row *r, const struct ivl_out *o, int name_width)
{
	char buf[256], v[32];
	const char *name = row_name(r, o, buf, sizeof(buf));
	size_t i;

	fprintf(fp, "%-*.*s", name_width, name_width, name);
	for (i = 0; i < NCOLS; i++) {
		if (!cols[i].text)
			continue;
		fmt_val(v, sizeof(v), &cols[i], r, true);
		fprintf(fp, " %*s", cols[i].width, v);
	}
	fputc('\n', fp);
}

static void fmt_s(char *buf, size_t len, uint64_t ns)
{
	snprintf(buf, len, "%" PRIu64 ".%03" PRIu64 "s", ns / 1000000000,
		 ns % 1000000000 / 1000000);
}

void ivl_text_heading(FILE *fp, const struct ivl_table *t)
{
	char a[32], b[32];

	fmt_s(a, sizeof(a), t->start_ns);
	fmt_s(b, sizeof(b), t->end_ns);
	fprintf(fp, "interval %" PRIu64 "  %s - %s  allocs %" PRIu64 "  bytes %" PRIu64
		"  frees %" PRIu64, t->index, a, b, t->total.allocs, t->total.bytes_alloc,
		t->total.frees);
	if (t->lost)
		fprintf(fp, "  LOST %" PRIu64, t->lost);
	if (t->late)
		fprintf(fp, "  late %" PRIu64, t->late);
	fputc('\n', fp);
}

void ivl_text_table(FILE *fp, const struct ivl_table *t, const struct ivl_out *o)
{
	int w = o->name_width ? o->name_width : ivl_name_width(t, o);
	size_t i;

	ivl_text_heading(fp, t);
	if (!t->nactive) {
		fputs("  (no allocations or frees)\n\n", fp);
		return;
	}
	ivl_text_columns(fp, o, w);
	for (i = 0; i < t->nrows; i++)
		ivl_text_row(fp, &t->rows[i], o, w);
	if (t->nrows < t->nactive)
		fprintf(fp, "  ... %zu more\n", t->nactive - t->nrows);
	fputc('\n', fp);
}

void ivl_csv_header(FILE *fp, const struct ivl_out *o)
{
	size_t i;

	fputs(o->sites ? "interval,start_ns,end_ns,callsite,symbol" : "interval,start_ns,end_ns,cache",
	      fp);
	for (i = 0; i < NCOLS; i++)
		fprintf(fp, ",%s", cols[i].key);
	fputc('\n', fp);
}

static void csv_str(FILE *fp, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, fp);
		return;
	}
	fputc('"', fp);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', fp);
		fputc(*s, fp);
	}
	fputc('"', fp);
}

void ivl_csv_table(FILE *fp, const struct ivl_table *t, const struct ivl_out *o)
{
	char name[256], v[32];
	size_t i, c;

	for (i = 0; i < t->nrows; i++) {
		const struct ivl_row *r = &t->rows[i];

		fprintf(fp, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", t->index, t->start_ns,
			t->end_ns);
		if (o->sites)
			fprintf(fp, "0x%" PRIx64 ",", r->addr);
		csv_str(fp, row_name(r, o, name, sizeof(name)));
		for (c = 0; c < NCOLS; c++) {
			fmt_val(v, sizeof(v), &cols[c], r, false);
			fprintf(fp, ",%s", v);
		}
		fputc('\n', fp);
	}
}

void ivl_json_begin(FILE *fp, const struct ivl_opts *vo, const char *trace)
{
	fputs("{\"schema_version\":1,\"view\":\"interval\",\"trace\":{\"path\":", fp);
	json_string(fp, trace);
	fprintf(fp, "},\"interval_ns\":%" PRIu64 ",\"by\":\"%s\",\"intervals\":[",
		vo->interval_ns, vo->sites ? "callsite" : "cache");
}

static void json_row(FILE *fp, const struct ivl_row *r, const struct ivl_out *o, bool named)
{
	char name[256], v[32];
	size_t c;
	bool first = !named;

	fputc('{', fp);
	if (named && o->sites) {
		fprintf(fp, "\"addr\":\"0x%" PRIx64 "\",\"symbol\":", r->addr);
		json_string(fp, row_name(r, o, name, sizeof(name)));
	} else if (named) {
		fputs("\"cache\":", fp);
		json_string(fp, r->name);
	}
	for (c = 0; c < NCOLS; c++) {
		fmt_val(v, sizeof(v), &cols[c], r, false);
		fprintf(fp, "%s\"%s\":%s", first ? "" : ",", cols[c].key, v);
		first = false;
	}
	fputc('}', fp);
}

void ivl_json_table(FILE *fp, const struct ivl_table *t, const struct ivl_out *o, bool first)
{
	size_t i;

	fprintf(fp, "%s{\"index\":%" PRIu64 ",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
		",\"records\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"active\":%zu,\"total\":",
		first ? "" : ",", t->index, t->start_ns, t->end_ns, t->records, t->lost,
		t->nactive);
	json_row(fp, &t->total, o, false);
	fputs(",\"rows\":[", fp);
	for (i = 0; i < t->nrows; i++) {
		if (i)
			fputc(',', fp);
		json_row(fp, &t->rows[i], o, true);
	}
	fputs("]}", fp);
}

void ivl_json_end(FILE *fp)
{
	fputs("]}\n", fp);
}
