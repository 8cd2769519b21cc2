// SPDX-License-Identifier: GPL-2.0-only
/*
 * view_main.c - the report's main tables: rows per call site, cache or
 * object address, their one sort, and the same rows as out_table tables.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/symtab.h"
#include "views/view_main.h"

static const enum sort_key *cur_keys;
static size_t cur_nkeys;

#define CMP_DESC(a, b)	do { if ((a) != (b)) return (a) > (b) ? -1 : 1; } while (0)
#define CMP_ASC(a, b)	do { if ((a) != (b)) return (a) < (b) ? -1 : 1; } while (0)

static int row_cmp(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	size_t i;

	for (i = 0; i < cur_nkeys; i++) {
		switch (cur_keys[i]) {
		case SK_FRAG:
			CMP_DESC(a->frag, b->frag);
			break;
		case SK_HIT:
			CMP_DESC(a->hits, b->hits);
			break;
		case SK_BYTES:
			CMP_DESC(a->bytes_alloc, b->bytes_alloc);
			break;
		case SK_REQ:
			CMP_DESC(a->bytes_req, b->bytes_req);
			break;
		case SK_CALLSITE:
			CMP_ASC(a->site, b->site);
			break;
		case SK_PTR:
			CMP_ASC(a->key, b->key);
			break;
		case SK_PINGPONG:
			CMP_DESC(a->xcpu, b->xcpu);
			break;
		case SK_FREES:
			CMP_DESC(a->frees, b->frees);
			break;
		case SK_AGE:
			CMP_DESC(a->age, b->age);
			break;
		case SK_OUT:
			CMP_DESC(a->out, b->out);
			break;
		case SK_FAILED:
			CMP_DESC(a->failed, b->failed);
			break;
		case SK_XNODE:
			CMP_DESC(a->xnode, b->xnode);
			break;
		case SK_NAME: {
			int c = strcmp(a->name ? a->name : "", b->name ? b->name : "");

			if (c)
				return c;
			break;
		}
		case SK_LIVE:
			CMP_DESC(a->live, b->live);
			break;
		}
	}
	CMP_ASC(a->key, b->key);
	return 0;
}

static void rows_sort(struct row *rows, size_t n, const enum sort_key *keys, size_t nkeys)
{
	cur_keys = keys;
	cur_nkeys = nkeys;
	if (n)
		qsort(rows, n, sizeof(*rows), row_cmp);
}

static uint64_t age_of(const struct rpt *r, const struct rpt_site *s)
{
	const struct rpt_totals *t = rpt_totals(r);

	return s->out_count && t->last_ts > s->out_oldest_ts ? t->last_ts - s->out_oldest_ts : 0;
}

static void row_from_site(struct row *w, const struct rpt *r, const struct rpt_site *s,
			  const struct symtab *st)
{
	memset(w, 0, sizeof(*w));
	w->key = w->site = s->addr;
	w->sr = symtab_get(st, s->addr);
	w->name = w->sr ? w->sr->sym : NULL;
	w->hits = s->hits;
	w->failed = s->failed;
	w->bytes_req = s->bytes_req;
	w->bytes_alloc = s->bytes_alloc;
	w->bytes_freed = s->bytes_freed;
	w->frees = s->frees;
	w->xcpu = s->cross_cpu_frees;
	w->xnode = s->cross_node;
	w->out = s->out_count;
	w->out_bytes = s->out_bytes;
	w->age = age_of(r, s);
	w->live = s->out_count;
	w->frag = rpt_frag(s->bytes_req, s->bytes_alloc);
}

/* Rows of the chosen view, sorted. *n rows; NULL on memory failure. */
struct row *view_rows(const struct rpt *r, const struct out_opts *o,
			     const struct symtab *st, size_t *n)
{
	static const enum sort_key def_sites[] = { SK_FRAG, SK_HIT, SK_BYTES };
	static const enum sort_key def_caches[] = { SK_BYTES, SK_HIT };
	const enum sort_key *keys = o->sort;
	size_t nkeys = o->nsort, i, cnt;
	struct row *rows;

	cnt = o->view == VIEW_CALLER ? rpt_nsites(r) :
	      o->view == VIEW_ALLOC ? rpt_nptrs(r) : rpt_ncaches(r);
	rows = calloc(cnt ? cnt : 1, sizeof(*rows));
	if (!rows)
		return NULL;
	for (i = 0; i < cnt; i++) {
		struct row *w = &rows[i];

		if (o->view == VIEW_CALLER) {
			row_from_site(w, r, rpt_site(r, i), st);
		} else if (o->view == VIEW_ALLOC) {
			const struct rpt_ptr *p = rpt_ptr(r, i);

			w->key = p->ptr;
			w->site = p->site;
			w->sr = symtab_get(st, p->site);
			w->name = w->sr ? w->sr->sym : NULL;
			w->hits = p->hits;
			w->bytes_req = p->bytes_req;
			w->bytes_alloc = p->bytes_alloc;
			w->frees = p->frees;
			w->xcpu = p->cross_cpu_frees;
			w->frag = rpt_frag(p->bytes_req, p->bytes_alloc);
		} else {
			const struct rpt_cache *c = rpt_cache(r, i);

			w->key = i;
			w->cache = c;
			w->name = c->name;
			w->hits = c->allocs;
			w->failed = c->failed;
			w->bytes_req = c->bytes_req;
			w->bytes_alloc = c->bytes_alloc;
			w->bytes_freed = c->bytes_freed;
			w->frees = c->frees;
			w->live = w->out = c->live;
			w->live_bytes = w->out_bytes = c->live_bytes;
			w->untracked = c->untracked_frees;
			w->frag = rpt_frag(c->bytes_req, c->bytes_alloc);
		}
	}
	/* A site or cache the filters excluded entirely is not shown. */
	if (o->view != VIEW_ALLOC) {
		size_t j = 0;

		for (i = 0; i < cnt; i++)
			if (rows[i].hits || rows[i].frees || rows[i].untracked)
				rows[j++] = rows[i];
		cnt = j;
	}
	if (!nkeys) {
		keys = o->view == VIEW_CACHE ? def_caches : def_sites;
		nkeys = o->view == VIEW_CACHE ? 2 : 3;
	}
	rows_sort(rows, cnt, keys, nkeys);
	*n = cnt;
	return rows;
}

struct row *outstanding_rows(const struct rpt *r, const struct symtab *st, size_t *n)
{
	static const enum sort_key keys[] = { SK_BYTES, SK_OUT };
	size_t i, cnt = 0, ns = rpt_nsites(r);
	struct row *rows = calloc(ns ? ns : 1, sizeof(*rows));

	if (!rows)
		return NULL;
	for (i = 0; i < ns; i++) {
		const struct rpt_site *s = rpt_site(r, i);

		if (!s->out_count)
			continue;
		row_from_site(&rows[cnt], r, s, st);
		/* Sorted by the bytes still held. */
		rows[cnt].bytes_alloc = s->out_bytes;
		cnt++;
	}
	rows_sort(rows, cnt, keys, 2);
	*n = cnt;
	return rows;
}

static int err_cmp(const void *pa, const void *pb)
{
	const struct rpt_error *a = *(const struct rpt_error *const *)pa;
	const struct rpt_error *b = *(const struct rpt_error *const *)pb;

	CMP_ASC(a->kind, b->kind);
	CMP_DESC(a->count, b->count);
	CMP_ASC(a->alloc_site, b->alloc_site);
	CMP_ASC(a->free_site, b->free_site);
	return 0;
}

const struct rpt_error **sorted_errors(const struct rpt *r, size_t *n)
{
	size_t i, ne = rpt_nerrors(r);
	const struct rpt_error **v = calloc(ne ? ne : 1, sizeof(*v));

	if (!v)
		return NULL;
	for (i = 0; i < ne; i++)
		v[i] = rpt_error(r, i);
	if (ne)
		qsort(v, ne, sizeof(*v), err_cmp);
	*n = ne;
	return v;
}

size_t limit_of(const struct out_opts *o, size_t n)
{
	long l = o->lines;

	if (l < 0)
		l = o->fmt == FMT_TEXT ? 20 : 0;
	return l == 0 || (size_t)l > n ? n : (size_t)l;
}

int cache_aliases(const struct rpt_slab *slab, const struct rpt_cache *c,
			 const char ***out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (c->pseudo || !c->described)
		return 0;
	*n = slab_aliases(slab, c->name, NULL, 0);
	if (!*n)
		return 0;
	*out = calloc(*n, sizeof(**out));
	if (!*out)
		return -1;
	slab_aliases(slab, c->name, *out, *n);
	return 0;
}

char *join_names(const char *const *names, size_t n, const char *sep)
{
	size_t len = 1, i;
	char *s, *p;

	for (i = 0; i < n; i++)
		len += strlen(names[i]) + strlen(sep);
	s = malloc(len);
	if (!s)
		return NULL;
	p = s;
	*p = '\0';
	for (i = 0; i < n; i++)
		p += sprintf(p, "%s%s", i ? sep : "", names[i]);
	return s;
}

/* ---- the main table as a table ------------------------------------------------- */

struct main_tab {
	const struct row *rows;
	char *addr;		/* a symbol that is an address, ADDR_LEN */
	char **aliases;		/* caches: per row, the merged names joined, or NULL */
	struct {
		const char **names;
		size_t n;
	} *alias_lists;		/* caches: per row, the merged names */
};

enum { M_ADDR, M_SYM, M_JSYM, M_FILE, M_LINE, M_HITS, M_FAILED, M_REQ, M_ALLOC, M_FRAG, M_FREES,
       M_FREED, M_XCPU, M_XNODE, M_OUT, M_OUT_BYTES, M_AGE };

static const struct out_col caller_cols[] = {
	[M_ADDR] = { "addr", "Addr", COL_ADDR, 0, OC_NO_TEXT },
	[M_SYM] = { "symbol", "Callsite", COL_STR, 0, OC_NO_JSON },
	/* JSON (schema 1): the address when there is no symbol, file:line only when known. */
	[M_JSYM] = { "symbol", NULL, COL_STR, 0, OC_NO_TEXT | OC_NO_CSV },
	[M_FILE] = { "file", "File", COL_STR, 0, OC_NO_TEXT | OC_OMIT_NULL },
	[M_LINE] = { "line", "Line", COL_U64, 0, OC_NO_TEXT | OC_OMIT_NULL },
	[M_HITS] = { "hits", "Hits", COL_U64, 0, 0 },
	[M_FAILED] = { "failed", "Failed", COL_U64, 0, OC_NO_TEXT },
	[M_REQ] = { "bytes_req", "Req", COL_U64, 0, 0 },
	[M_ALLOC] = { "bytes_alloc", "Alloc", COL_U64, 0, 0 },
	[M_FRAG] = { "frag_pct", "Frag", COL_PCT, 0, 0 },
	[M_FREES] = { "frees", "Frees", COL_U64, 0, 0 },
	[M_FREED] = { "bytes_freed", "Freed", COL_U64, 0, OC_NO_TEXT },
	[M_XCPU] = { "cross_cpu_frees", "Xcpu", COL_U64, 0, 0 },
	[M_XNODE] = { "cross_node_allocs", "Xnode", COL_U64, 0, OC_NO_TEXT },
	[M_OUT] = { "outstanding", "Live", COL_U64, 0, 0 },
	[M_OUT_BYTES] = { "outstanding_bytes", "Live_bytes", COL_U64, 0, OC_NO_TEXT },
	[M_AGE] = { "max_age_ns", "Max_age", COL_NS, 0, OC_NO_TEXT | OC_NO_JSON },
};

/* Room for an address as a symbol. */
#define ADDR_LEN	24

static void site_cell(const struct row *w, size_t col, struct out_cell *c, char *addr)
{
	switch (col) {
	case M_ADDR: c->u = w->site; break;
	case M_SYM: c->s = w->sr ? w->sr->sym : NULL; c->null = !c->s; break;
	case M_JSYM:
		if (w->sr) {
			c->s = w->sr->sym;
		} else {
			snprintf(addr, ADDR_LEN, "0x%" PRIx64, w->site);
			c->s = addr;
		}
		break;
	case M_FILE: c->s = w->sr ? w->sr->file : NULL; c->null = !c->s; break;
	case M_LINE: c->u = w->sr ? w->sr->line : 0; c->null = !w->sr || !w->sr->file; break;
	case M_HITS: c->u = w->hits; break;
	case M_FAILED: c->u = w->failed; break;
	case M_REQ: c->u = w->bytes_req; break;
	case M_ALLOC: c->u = w->bytes_alloc; break;
	case M_FRAG: c->d = w->frag; break;
	case M_FREES: c->u = w->frees; break;
	case M_FREED: c->u = w->bytes_freed; break;
	case M_XCPU: c->u = w->xcpu; break;
	case M_XNODE: c->u = w->xnode; break;
	case M_OUT: c->u = w->out; break;
	case M_OUT_BYTES: c->u = w->out_bytes; break;
	default: c->u = w->age; break;
	}
}

static void caller_cell(const void *ctx, size_t row, size_t col, struct out_cell *c)
{
	const struct main_tab *m = ctx;

	site_cell(&m->rows[row], col, c, m->addr);
}

static const struct out_col alloc_cols[] = {
	{ "ptr", "Ptr", COL_ADDR, 0, OC_LEFT },
	{ "callsite_addr", "Callsite_addr", COL_ADDR, 0, OC_NO_TEXT },
	{ "symbol", "Callsite", COL_STR, 0, OC_NO_JSON },
	{ "symbol", NULL, COL_STR, 0, OC_NO_TEXT | OC_NO_CSV },
	{ "file", "File", COL_STR, 0, OC_NO_TEXT | OC_OMIT_NULL },
	{ "line", "Line", COL_U64, 0, OC_NO_TEXT | OC_OMIT_NULL },
	{ "hits", "Hits", COL_U64, 0, 0 },
	{ "bytes_req", "Req", COL_U64, 0, 0 },
	{ "bytes_alloc", "Alloc", COL_U64, 0, 0 },
	{ "frag_pct", "Frag", COL_PCT, 0, 0 },
	{ "frees", "Frees", COL_U64, 0, 0 },
	{ "cross_cpu_frees", "Xcpu", COL_U64, 0, 0 },
};

static void alloc_cell(const void *ctx, size_t row, size_t col, struct out_cell *c)
{
	const struct main_tab *m = ctx;
	const struct row *w = &m->rows[row];
	/* The per-address table's columns after the first are a call site's. */
	static const unsigned char site_col[] = { 0, M_ADDR, M_SYM, M_JSYM, M_FILE, M_LINE,
						  M_HITS, M_REQ, M_ALLOC, M_FRAG, M_FREES,
						  M_XCPU };

	if (col == 0)
		c->u = w->key;
	else
		site_cell(w, site_col[col], c, m->addr);
}

enum { C_NAME, C_JALIASES, C_KIND, C_ID, C_DESCRIBED, C_OSIZE, C_SIZE, C_ALLOCS, C_FAILED, C_FREES, C_UNTRACKED,
       C_REQ, C_ALLOC, C_FREED, C_FRAG, C_LIVE, C_LIVE_BYTES, C_ALIASES };

static const struct out_col cache_cols[] = {
	[C_NAME] = { "name", "Cache", COL_STR, 0, 0 },
	/* JSON (schema 1): the merged names as a list, after the name. */
	[C_JALIASES] = { "aliases", NULL, COL_STRV, 0, OC_NO_TEXT | OC_NO_CSV },
	[C_KIND] = { "kind", "Kind", COL_STR, 0, OC_NO_TEXT },
	[C_ID] = { "id", "Id", COL_ADDR, 0, OC_NO_TEXT | OC_OMIT_NULL },
	[C_DESCRIBED] = { "described", NULL, COL_BOOL, 0,
			  OC_NO_TEXT | OC_NO_CSV | OC_OMIT_NULL },
	[C_OSIZE] = { "object_size", "Object_size", COL_U64, 0, OC_NO_TEXT },
	[C_SIZE] = { "size", "Size", COL_U64, 0, 0 },
	[C_ALLOCS] = { "allocs", "Allocs", COL_U64, 0, 0 },
	[C_FAILED] = { "failed", "Failed", COL_U64, 0, OC_NO_TEXT },
	[C_FREES] = { "frees", "Frees", COL_U64, 0, 0 },
	[C_UNTRACKED] = { "untracked_frees", "Untracked", COL_U64, 0, OC_NO_TEXT },
	[C_REQ] = { "bytes_req", "Req", COL_U64, 0, OC_NO_TEXT },
	[C_ALLOC] = { "bytes_alloc", "Bytes_alloc", COL_U64, 0, 0 },
	[C_FREED] = { "bytes_freed", "Freed", COL_U64, 0, OC_NO_TEXT },
	[C_FRAG] = { "frag_pct", "Frag", COL_PCT, 0, 0 },
	[C_LIVE] = { "live", "Live", COL_U64, 0, 0 },
	[C_LIVE_BYTES] = { "live_bytes", "Live_bytes", COL_U64, 0, OC_NO_TEXT },
	[C_ALIASES] = { "aliases", "Aliases", COL_STR, 0, OC_NO_TEXT | OC_NO_JSON },
};

static void cache_cell(const void *ctx, size_t row, size_t col, struct out_cell *c)
{
	const struct main_tab *m = ctx;
	const struct rpt_cache *k = m->rows[row].cache;

	switch (col) {
	case C_NAME: c->s = k->name; break;
	case C_KIND: c->s = k->pseudo ? "kmalloc" : "cache"; break;
	case C_JALIASES: c->sv = m->alias_lists[row].names; c->n = m->alias_lists[row].n; break;
	case C_ID: c->u = k->id; c->null = k->pseudo; break;
	case C_DESCRIBED: c->u = k->described; c->null = k->pseudo; break;
	case C_OSIZE: c->u = k->object_size; break;
	case C_SIZE: c->u = k->size; break;
	case C_ALLOCS: c->u = k->allocs; break;
	case C_FAILED: c->u = k->failed; break;
	case C_FREES: c->u = k->frees; break;
	case C_UNTRACKED: c->u = k->untracked_frees; break;
	case C_REQ: c->u = k->bytes_req; break;
	case C_ALLOC: c->u = k->bytes_alloc; break;
	case C_FREED: c->u = k->bytes_freed; break;
	case C_FRAG: c->d = m->rows[row].frag; break;
	case C_LIVE: c->u = k->live; break;
	case C_LIVE_BYTES: c->u = k->live_bytes; break;
	default: c->s = m->aliases[row]; c->null = !c->s; break;
	}
}

/*
 * The merged names of each cache row: as a list (JSON) and joined by
 * spaces (CSV; sysfs names have none). 0, or -1 out of memory.
 */
static int cache_alias_strings(const struct view_ctx *v, struct main_tab *m, size_t n)
{
	size_t i;

	m->aliases = calloc(n ? n : 1, sizeof(*m->aliases));
	m->alias_lists = calloc(n ? n : 1, sizeof(*m->alias_lists));
	if (!m->aliases || !m->alias_lists)
		return -1;
	for (i = 0; i < n; i++) {
		if (cache_aliases(v->slab, m->rows[i].cache, &m->alias_lists[i].names,
				  &m->alias_lists[i].n))
			return -1;
		if (m->alias_lists[i].n) {
			m->aliases[i] = join_names(m->alias_lists[i].names, m->alias_lists[i].n, " ");
			if (!m->aliases[i])
				return -1;
		}
	}
	return 0;
}

int report_main_table(const struct view_ctx *v, table_emit_fn emit, void *arg)
{
	const struct out_opts *o = v->o;
	struct main_tab m = { 0 };
	struct out_table t = { .ctx = &m };
	struct row *rows;
	size_t n, i;
	int ret = -1;

	rows = view_rows(v->r, o, v->st, &n);
	m.addr = malloc(ADDR_LEN);
	if (!rows || !m.addr) {
		free(rows);
		free(m.addr);
		return -1;
	}
	m.rows = rows;
	t.total = n;
	t.nrows = limit_of(o, n);
	if (o->view == VIEW_CALLER) {
		t.key = "callers";
		t.title = "Call sites";
		t.cols = caller_cols;
		t.ncols = sizeof(caller_cols) / sizeof(caller_cols[0]);
		t.cell = caller_cell;
	} else if (o->view == VIEW_ALLOC) {
		t.key = "objects";
		t.title = "Objects by address";
		t.cols = alloc_cols;
		t.ncols = sizeof(alloc_cols) / sizeof(alloc_cols[0]);
		t.cell = alloc_cell;
	} else {
		t.key = "caches";
		t.title = "Caches";
		t.cols = cache_cols;
		t.ncols = sizeof(cache_cols) / sizeof(cache_cols[0]);
		t.cell = cache_cell;
		if (cache_alias_strings(v, &m, t.nrows))
			goto out;
	}
	ret = emit(&t, arg);
out:
	for (i = 0; i < t.nrows; i++) {
		if (m.aliases)
			free(m.aliases[i]);
		if (m.alias_lists)
			free(m.alias_lists[i].names);
	}
	free(m.aliases);
	free(m.alias_lists);
	free(m.addr);
	free(rows);
	return ret;
}

/* ---- errors and outstanding objects ------------------------------------------- */

/*
 * Where a site is, for the tables below: its symbol (JSON: the address
 * when it has none) and file:line when known. The text lines under a row
 * ("  allocated at ...") are written into buf, which the writer uses
 * before it asks for the next cell.
 */
struct site_tab {
	const struct symtab *st;
	const struct row *rows;			/* outstanding */
	const struct rpt_error **errs;		/* errors */
	char *buf;
};

#define SITE_BUF	1024

static void sym_cell(const struct site_tab *x, uint64_t addr, struct out_cell *c)
{
	const struct symres *sr = symtab_get(x->st, addr);

	if (sr) {
		c->s = sr->sym;
	} else {
		snprintf(x->buf, SITE_BUF, "0x%" PRIx64, addr);
		c->s = x->buf;
	}
}

static void file_cell(const struct site_tab *x, uint64_t addr, bool line, struct out_cell *c)
{
	const struct symres *sr = symtab_get(x->st, addr);

	c->null = !sr || !sr->file;
	if (c->null)
		return;
	if (line)
		c->u = sr->line;
	else
		c->s = sr->file;
}

/* "<indent> at file:line" under a row, when known. */
static void srcline_cell(const struct site_tab *x, uint64_t addr, const char *indent,
			 struct out_cell *c)
{
	const struct symres *sr = symtab_get(x->st, addr);

	c->null = !sr || !sr->file;
	if (c->null)
		return;
	snprintf(x->buf, SITE_BUF, "%s at %s:%u", indent, sr->file, sr->line);
	c->s = x->buf;
}

enum { E_TKIND, E_KIND, E_COUNT, E_UNCERTAIN, E_AADDR, E_ASYM, E_AFILE, E_ALINE, E_FADDR,
       E_FSYM, E_FFILE, E_FLINE, E_TALLOC, E_TASRC, E_TFREE, E_TFSRC, E_N };

#define TEXT_ONLY	(OC_NO_JSON | OC_NO_CSV)

static const struct out_col err_cols[E_N] = {
	[E_TKIND] = { "kind", "Kind", COL_STR, 30, TEXT_ONLY },
	[E_KIND] = { "kind", NULL, COL_STR, 0, OC_NO_TEXT },
	[E_COUNT] = { "count", "Count", COL_U64, 10, 0 },
	[E_UNCERTAIN] = { "uncertain", NULL, COL_BOOL, 0, OC_NO_TEXT },
	[E_AADDR] = { "alloc_addr", NULL, COL_ADDR, 0, OC_NO_TEXT },
	[E_ASYM] = { "alloc_symbol", NULL, COL_STR, 0, OC_NO_TEXT },
	[E_AFILE] = { "alloc_file", NULL, COL_STR, 0, OC_NO_TEXT | OC_OMIT_NULL },
	[E_ALINE] = { "alloc_line", NULL, COL_U64, 0, OC_NO_TEXT | OC_OMIT_NULL },
	[E_FADDR] = { "free_addr", NULL, COL_ADDR, 0, OC_NO_TEXT },
	[E_FSYM] = { "free_symbol", NULL, COL_STR, 0, OC_NO_TEXT },
	[E_FFILE] = { "free_file", NULL, COL_STR, 0, OC_NO_TEXT | OC_OMIT_NULL },
	[E_FLINE] = { "free_line", NULL, COL_U64, 0, OC_NO_TEXT | OC_OMIT_NULL },
	[E_TALLOC] = { "allocated_at", NULL, COL_STR, 0, OC_UNDER | TEXT_ONLY },
	[E_TASRC] = { "allocated_line", NULL, COL_STR, 0, OC_UNDER | TEXT_ONLY },
	[E_TFREE] = { "freed_at", NULL, COL_STR, 0, OC_UNDER | TEXT_ONLY },
	[E_TFSRC] = { "freed_line", NULL, COL_STR, 0, OC_UNDER | TEXT_ONLY },
};

static void err_cell(const void *ctx, size_t row, size_t col, struct out_cell *c)
{
	const struct site_tab *x = ctx;
	const struct rpt_error *e = x->errs[row];
	/* A short allocation has no free: null where its free would be. */
	bool nofree = e->kind == RPT_ERR_SHORT_ALLOC;
	const struct symres *sr;

	switch (col) {
	case E_TKIND:
		snprintf(x->buf, SITE_BUF, "%s%s", rpt_err_name(e->kind), e->uncertain ? "?" : "");
		c->s = x->buf;
		break;
	case E_KIND: c->s = rpt_err_name(e->kind); break;
	case E_COUNT: c->u = e->count; break;
	case E_UNCERTAIN: c->u = e->uncertain; break;
	case E_AADDR: c->u = e->alloc_site; break;
	case E_ASYM: sym_cell(x, e->alloc_site, c); break;
	case E_AFILE: file_cell(x, e->alloc_site, false, c); break;
	case E_ALINE: file_cell(x, e->alloc_site, true, c); break;
	case E_FADDR: c->u = e->free_site; c->null = nofree; break;
	case E_FSYM:
		if (nofree)
			c->null = true;
		else
			sym_cell(x, e->free_site, c);
		break;
	case E_FFILE: c->null = true; if (!nofree) file_cell(x, e->free_site, false, c); break;
	case E_FLINE: c->null = true; if (!nofree) file_cell(x, e->free_site, true, c); break;
	case E_TALLOC:
		sr = symtab_get(x->st, e->alloc_site);
		snprintf(x->buf, SITE_BUF, "  allocated at %s", sr ? sr->sym : "?");
		c->s = x->buf;
		break;
	case E_TASRC: srcline_cell(x, e->alloc_site, "             ", c); break;
	case E_TFREE:
		sr = symtab_get(x->st, e->free_site);
		snprintf(x->buf, SITE_BUF, "  freed at     %s", sr ? sr->sym : "?");
		c->s = x->buf;
		c->null = nofree;
		break;
	default:
		c->null = true;
		if (!nofree)
			srcline_cell(x, e->free_site, "             ", c);
		break;
	}
}

/* The text of the errors and outstanding tables: older than the model, kept to the byte. */
static const struct out_text_layout err_text = {
	.gap = 1, .rule = -1, .flags = OT_BLANK_BEFORE | OT_NO_BLANK_AFTER,
	.none = "\nErrors: none found.\n",
};

int report_errors_table(const struct view_ctx *v, table_emit_fn emit, void *arg)
{
	struct site_tab x = { .st = v->st };
	struct out_table t = {
		.key = "errors", .title = "Errors in the traced kernel", .cols = err_cols,
		.ncols = E_N, .cell = err_cell, .ctx = &x, .text = &err_text,
	};
	int ret = -1;

	x.errs = sorted_errors(v->r, &t.nrows);
	x.buf = malloc(SITE_BUF);
	if (x.errs && x.buf) {
		t.total = t.nrows;
		ret = emit(&t, arg);
	}
	free(x.errs);
	free(x.buf);
	return ret;
}

enum { O_ADDR, O_SYM, O_TSYM, O_FILE, O_LINE, O_COUNT, O_BYTES, O_AGE, O_TAGE, O_TSRC, O_N };

static const struct out_col out_cols[O_N] = {
	[O_ADDR] = { "addr", NULL, COL_ADDR, 0, OC_NO_TEXT },
	[O_SYM] = { "symbol", NULL, COL_STR, 0, OC_NO_TEXT },
	[O_TSYM] = { "symbol", "Callsite", COL_STR, 36, TEXT_ONLY },
	[O_FILE] = { "file", NULL, COL_STR, 0, OC_NO_TEXT | OC_OMIT_NULL },
	[O_LINE] = { "line", NULL, COL_U64, 0, OC_NO_TEXT | OC_OMIT_NULL },
	[O_COUNT] = { "count", "Objects", COL_U64, 9, 0 },
	[O_BYTES] = { "bytes_alloc", "Bytes", COL_U64, 14, 0 },
	[O_AGE] = { "max_age_ns", NULL, COL_U64, 0, OC_NO_TEXT },
	[O_TAGE] = { "max_age", "Max_age", COL_STR, 15, OC_RIGHT | TEXT_ONLY },
	[O_TSRC] = { "source_line", NULL, COL_STR, 0, OC_UNDER | TEXT_ONLY },
};

static void out_cell(const void *ctx, size_t row, size_t col, struct out_cell *c)
{
	const struct site_tab *x = ctx;
	const struct row *w = &x->rows[row];

	switch (col) {
	case O_ADDR: c->u = w->key; break;
	case O_SYM: sym_cell(x, w->key, c); break;
	case O_TSYM: c->s = w->name; break;
	case O_FILE: file_cell(x, w->key, false, c); break;
	case O_LINE: file_cell(x, w->key, true, c); break;
	case O_COUNT: c->u = w->out; break;
	case O_BYTES: c->u = w->out_bytes; break;
	case O_AGE: c->u = w->age; break;
	case O_TAGE:
		out_fmt_secs(x->buf, SITE_BUF, w->age);
		c->s = x->buf;
		break;
	default: srcline_cell(x, w->key, "   ", c); break;
	}
}

static const struct out_text_layout out_text = {
	.gap = 1, .rule = -1, .flags = OT_BLANK_BEFORE | OT_NO_BLANK_AFTER, .none = "",
};

int report_outstanding_table(const struct view_ctx *v, table_emit_fn emit, void *arg)
{
	struct site_tab x = { .st = v->st };
	struct out_table t = {
		.key = "outstanding",
		.title = "Outstanding at the end of the trace (never freed in it), by call site",
		.cols = out_cols, .ncols = O_N, .cell = out_cell, .ctx = &x, .text = &out_text,
	};
	struct row *rows = outstanding_rows(v->r, v->st, &t.total);
	int ret = -1;

	x.rows = rows;
	x.buf = malloc(SITE_BUF);
	if (rows && x.buf) {
		t.nrows = limit_of(v->o, t.total);
		ret = emit(&t, arg);
	}
	free(rows);
	free(x.buf);
	return ret;
}

/* ---- the main tables in text --------------------------------------------------- */

/*
 * A cache's name in text, with the names SLUB merged into it:
 * "kmalloc-96 (also kmt_oracle_merged, foo)", and "+N more" where the
 * list would not fit 78 columns (--wide: all of them). NULL out of memory.
 */
char *cache_label(const struct rpt_slab *slab, const struct rpt_cache *c, bool wide)
{
	const char **al;
	char *buf = NULL;
	size_t nal, len = 0, k, col;
	FILE *m;

	if (cache_aliases(slab, c, &al, &nal))
		return NULL;
	if (!nal)
		return strdup(c->name);
	m = open_memstream(&buf, &len);
	if (!m) {
		free(al);
		return NULL;
	}
	fprintf(m, "%s (also ", c->name);
	col = strlen(c->name) + 7;
	for (k = 0; k < nal; k++) {
		/* Room for this name and what may follow it: ", +N more)" or ")". */
		size_t need = (k ? 2 : 0) + strlen(al[k]) + (k + 1 < nal ? 16 : 1);

		if (k && !wide && col + need > 78) {
			fprintf(m, ", +%zu more", nal - k);
			break;
		}
		col += (size_t)fprintf(m, "%s%s", k ? ", " : "", al[k]);
	}
	fputc(')', m);
	free(al);
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * The text of the call sites' and caches' tables: "total/per" figures
 * for people, and the name on a line of its own when it is longer than
 * its column. Their layout is older than the model: kept to the byte.
 */
struct text_tab {
	const struct row *rows;
	char **labels;		/* caches: the name with its aliases */
	char *buf;
};

enum { T_NAME, T_ALLOC, T_REQ, T_HITS, T_XCPU, T_FRAG, T_SRC, T_NC };

static const struct out_col caller_text_cols[T_NC] = {
	[T_NAME] = { "symbol", "Callsite", COL_STR, 25, 0 },
	[T_ALLOC] = { "alloc_per", "Alloc/Per", COL_STR, 14, OC_RIGHT },
	[T_REQ] = { "req_per", "Req/Per", COL_STR, 14, OC_RIGHT },
	[T_HITS] = { "hits", "Hits", COL_U64, 8, 0 },
	[T_XCPU] = { "cross_cpu_frees", "Xcpu", COL_U64, 6, 0 },
	[T_FRAG] = { "frag_pct", "Frag", COL_PCT, 6, 0 },
	[T_SRC] = { "source_line", NULL, COL_STR, 0, OC_UNDER },
};

/* Bytes, and bytes per successful allocation. */
static const char *per(char *buf, uint64_t total, uint64_t n)
{
	out_fmt_per(buf, SITE_BUF, total, n);
	return buf;
}

static void caller_text_cell(const void *ctx, size_t row, size_t col, struct out_cell *c)
{
	const struct text_tab *x = ctx;
	const struct row *w = &x->rows[row];
	uint64_t ok = w->hits - w->failed;

	switch (col) {
	case T_NAME: c->s = w->name; break;
	case T_ALLOC: c->s = per(x->buf, w->bytes_alloc, ok); break;
	case T_REQ: c->s = per(x->buf, w->bytes_req, ok); break;
	case T_HITS: c->u = w->hits; break;
	case T_XCPU: c->u = w->xcpu; break;
	case T_FRAG: c->d = w->frag; break;
	default:
		c->null = !w->sr || !w->sr->file;
		if (c->null)
			break;
		snprintf(x->buf, SITE_BUF, "    at %s:%u", w->sr->file, w->sr->line);
		c->s = x->buf;
		break;
	}
}

enum { K_NAME, K_ALLOCS, K_FREES, K_BYTES, K_LIVE, K_FRAG, K_NC };

static const struct out_col cache_text_cols[K_NC] = {
	[K_NAME] = { "name", "Cache", COL_STR, 22, 0 },
	[K_ALLOCS] = { "allocs", "Allocs", COL_U64, 10, 0 },
	[K_FREES] = { "frees", "Frees", COL_U64, 10, 0 },
	[K_BYTES] = { "bytes_alloc", "Bytes_alloc", COL_U64, 14, 0 },
	[K_LIVE] = { "live", "Live", COL_U64, 9, 0 },
	[K_FRAG] = { "frag_pct", "Frag", COL_PCT, 6, 0 },
};

static void cache_text_cell(const void *ctx, size_t row, size_t col, struct out_cell *c)
{
	const struct text_tab *x = ctx;
	const struct row *w = &x->rows[row];

	switch (col) {
	case K_NAME: c->s = x->labels[row]; break;
	case K_ALLOCS: c->u = w->hits; break;
	case K_FREES: c->u = w->frees; break;
	case K_BYTES: c->u = w->bytes_alloc; break;
	case K_LIVE: c->u = w->live; break;
	default: c->d = w->frag; break;
	}
}

enum { A_PTR, A_ALLOC, A_REQ, A_HITS, A_FREES, A_XCPU, A_FRAG, A_SITE, A_NC };

static const struct out_col alloc_text_cols[A_NC] = {
	[A_PTR] = { "ptr", "Ptr", COL_ADDR, 18, OC_LEFT },
	[A_ALLOC] = { "alloc_per", "Alloc/Per", COL_STR, 14, OC_RIGHT },
	[A_REQ] = { "req_per", "Req/Per", COL_STR, 14, OC_RIGHT },
	[A_HITS] = { "hits", "Hits", COL_U64, 6, 0 },
	[A_FREES] = { "frees", "Frees", COL_U64, 6, 0 },
	[A_XCPU] = { "cross_cpu_frees", "Xcpu", COL_U64, 6, 0 },
	[A_FRAG] = { "frag_pct", "Frag", COL_PCT, 6, 0 },
	[A_SITE] = { "symbol", "Callsite", COL_STR, 0, OC_WIDE | OC_NO_PAD | OC_GAP(2) },
};

static void alloc_text_cell(const void *ctx, size_t row, size_t col, struct out_cell *c)
{
	const struct text_tab *x = ctx;
	const struct row *w = &x->rows[row];

	switch (col) {
	case A_PTR: c->u = w->key; break;
	case A_ALLOC: c->s = per(x->buf, w->bytes_alloc, w->hits); break;
	case A_REQ: c->s = per(x->buf, w->bytes_req, w->hits); break;
	case A_HITS: c->u = w->hits; break;
	case A_FREES: c->u = w->frees; break;
	case A_XCPU: c->u = w->xcpu; break;
	case A_FRAG: c->d = w->frag; break;
	default: c->s = w->name; break;
	}
}

static const struct out_text_layout main_text = {
	.gap = 1, .rule = 78, .flags = OT_NO_BLANK_AFTER | OT_HEADER_EMPTY,
};

int report_main_text_table(const struct view_ctx *v, table_emit_fn emit, void *arg)
{
	const struct out_opts *o = v->o;
	struct text_tab x = { 0 };
	struct out_table t = { .ctx = &x, .text = &main_text };
	struct row *rows = view_rows(v->r, o, v->st, &t.total);
	size_t i;
	int ret = -1;

	x.rows = rows;
	x.buf = malloc(SITE_BUF);
	if (!rows || !x.buf)
		goto out;
	t.nrows = limit_of(o, t.total);
	if (o->view == VIEW_CALLER) {
		t.key = "callsites";
		t.title = "Call sites";
		t.cols = caller_text_cols;
		t.ncols = T_NC;
		t.cell = caller_text_cell;
	} else if (o->view == VIEW_ALLOC) {
		t.key = "allocs";
		t.title = "Objects by address";
		t.cols = alloc_text_cols;
		t.ncols = A_NC;
		t.cell = alloc_text_cell;
	} else {
		t.key = "caches";
		t.title = "Caches";
		t.cols = cache_text_cols;
		t.ncols = K_NC;
		t.cell = cache_text_cell;
		x.labels = calloc(t.nrows ? t.nrows : 1, sizeof(*x.labels));
		if (!x.labels)
			goto out;
		for (i = 0; i < t.nrows; i++) {
			x.labels[i] = cache_label(v->slab, rows[i].cache, o->wide);
			if (!x.labels[i])
				goto out;
		}
	}
	ret = emit(&t, arg);
out:
	if (x.labels)
		for (i = 0; i < t.nrows; i++)
			free(x.labels[i]);
	free(x.labels);
	free(x.buf);
	free(rows);
	return ret;
}

/* ---- coverage ---------------------------------------------------------------- */

enum { V_PATH, V_HOW, V_DETAIL, V_N };

static const struct out_col cov_cols[V_N] = {
	[V_PATH] = { "path", "Path", COL_STR, 0, 0 },
	[V_HOW] = { "how", "How", COL_STR, 0, 0 },
	[V_DETAIL] = { "detail", "Detail", COL_STR, 0, 0 },
};

static void cov_cell(const void *ctx, size_t row, size_t col, struct out_cell *c)
{
	const struct slab_cov *k = slab_cov(ctx, row);

	c->s = col == V_PATH ? k->path : col == V_HOW ? k->how : k->detail;
	c->null = !c->s;
}

int report_coverage_table(const struct view_ctx *v, table_emit_fn emit, void *arg)
{
	struct out_table t = {
		.key = "coverage", .title = "Coverage", .cols = cov_cols, .ncols = V_N,
		.nrows = slab_ncov(v->slab), .total = slab_ncov(v->slab), .cell = cov_cell,
		.ctx = v->slab,
	};

	return emit(&t, arg);
}
