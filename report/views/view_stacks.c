// SPDX-License-Identifier: GPL-2.0-only
/*
 * view_stacks.c - allocations by whole kernel stack, objects outstanding
 * by stack, each call site's callers, and folded stacks: the tables of
 * kmemtrace-report --stacks and the lines of --folded.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sym/sym_kallsyms.h"
#include "views/view_main.h"
#include "views/view_stacks.h"

static const struct stacks_args no_args;

static const struct stacks_args *args_of(const struct out_opts *o)
{
	return o->view_args ? o->view_args : &no_args;
}

/* Whether frame addr is in a function --exclude names (or is an address it names). */
static bool frame_excluded(const struct out_opts *o, const struct stacks_args *a,
			   const uint64_t *fr, unsigned int k)
{
	const char *name = NULL, *mod;
	uint64_t off, addr = fr[k];
	size_t i;

	if (o->ks && !ksyms_lookup_stack(o->ks, fr, k, &name, &off, &mod))
		name = NULL;
	for (i = 0; i < a->nexclude; i++) {
		const char *x = a->exclude[i];

		if (name && strcmp(name, x) == 0)
			return true;
		if (x[0] == '0' && x[1] == 'x' && strtoull(x, NULL, 16) == addr)
			return true;
	}
	return false;
}

/*
 * A stack the filters keep: carried by a selected allocation (by a counted
 * free, with frees), often enough, through no excluded function.
 */
static bool stack_kept(const struct rpt *r, const struct out_opts *o, const struct stacks_args *a,
		       uint32_t i, bool frees)
{
	const struct rpt_stack *t = rpt_stack(r, i);
	const uint64_t *fr;
	unsigned int d = 0, k;
	uint64_t hits = t ? (frees ? t->free_hits : t->hits) : 0;

	if (!hits || hits < a->min_count)
		return false;
	if (!a->nexclude)
		return true;
	fr = kmt_stacks_frames(rpt_stacks(r), i, &d);
	for (k = 0; k < d; k++)
		if (frame_excluded(o, a, fr, k))
			return false;
	return true;
}

/*
 * The kept stacks' indexes, of allocations or of frees. NULL with *n 0 is
 * an empty list or, with errno ENOMEM, a failure.
 */
static uint32_t *kept_stacks(const struct rpt *r, const struct out_opts *o, size_t *n, bool frees)
{
	const struct stacks_args *a = args_of(o);
	size_t total = rpt_nstacks(r), i;
	uint32_t *v;

	*n = 0;
	errno = 0;
	if (!total)
		return NULL;
	v = malloc(total * sizeof(*v));
	if (!v) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < total; i++)
		if (stack_kept(r, o, a, (uint32_t)i, frees))
			v[(*n)++] = (uint32_t)i;
	return v;
}

/* ---- sorting ---------------------------------------------------------------- */

static const struct rpt *sort_r;
static enum sort_key sort_k;

static uint64_t key_of(const struct rpt_stack *t, enum sort_key k)
{
	switch (k) {
	case SK_BYTES:
		return t->bytes_alloc;
	case SK_REQ:
		return t->bytes_req;
	case SK_OUT:
		return t->out_bytes;
	case SK_FAILED:
		return t->failed;
	case SK_FREES:
		return t->frees;
	default:
		return t->hits;
	}
}

static int stack_cmp(const void *pa, const void *pb)
{
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	const struct rpt_stack *a = rpt_stack(sort_r, ia), *b = rpt_stack(sort_r, ib);
	uint64_t ka = key_of(a, sort_k), kb = key_of(b, sort_k);

	if (ka != kb)
		return ka > kb ? -1 : 1;
	if (a->hits != b->hits)
		return a->hits > b->hits ? -1 : 1;
	if (a->bytes_alloc != b->bytes_alloc)
		return a->bytes_alloc > b->bytes_alloc ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

/* Frees by stack: most bytes freed (-s bytes) or frees first, then the other, then order. */
static int free_cmp(const void *pa, const void *pb)
{
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	const struct rpt_stack *a = rpt_stack(sort_r, ia), *b = rpt_stack(sort_r, ib);
	bool by_bytes = sort_k == SK_BYTES || sort_k == SK_REQ;
	uint64_t ka = by_bytes ? a->free_bytes : a->free_hits;
	uint64_t kb = by_bytes ? b->free_bytes : b->free_hits;

	if (ka != kb)
		return ka > kb ? -1 : 1;
	ka = by_bytes ? a->free_hits : a->free_bytes;
	kb = by_bytes ? b->free_hits : b->free_bytes;
	if (ka != kb)
		return ka > kb ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

/* Most of key first; ties by hits, bytes, then the order stacks first appeared. */
static void stacks_sort(const struct rpt *r, uint32_t *v, size_t n, enum sort_key k)
{
	sort_r = r;
	sort_k = k;
	if (n)
		qsort(v, n, sizeof(*v), stack_cmp);
}

static void frees_sort(const struct rpt *r, uint32_t *v, size_t n, enum sort_key k)
{
	sort_r = r;
	sort_k = k;
	if (n)
		qsort(v, n, sizeof(*v), free_cmp);
}

/*
 * The key --sort asks for, among those a stack has: hit (default), bytes,
 * req, outstanding, failed, frees.
 */
static enum sort_key stacks_key(const struct out_opts *o)
{
	size_t i;

	for (i = 0; i < o->nsort; i++) {
		switch (o->sort[i]) {
		case SK_HIT:
		case SK_BYTES:
		case SK_REQ:
		case SK_OUT:
		case SK_FAILED:
		case SK_FREES:
			return o->sort[i];
		default:
			break;
		}
	}
	return SK_HIT;
}

/* ---- the tables --------------------------------------------------------------- */

struct srow {
	uint32_t idx;
	const struct rpt_stack *t;
	struct stack_frames f;
};

struct crow {
	uint64_t site, caller;	/* caller 0: the stack ends at the call site */
	bool caller_exact;	/* the site is entry code (ksyms_frame_exact()): never in a kernel's */
	uint64_t hits, bytes_req, bytes_alloc, out_count;
	uint64_t site_hits;
	const char *site_s, *caller_s;
	char *path;		/* "site <- caller", or "site (called from nothing in the stack)" */
};

struct sctx {
	const struct view_ctx *v;
	struct srow *rows;
	size_t n;
	struct crow *crows;
	size_t nc;
};

static const char *sym_of(const struct view_ctx *v, uint64_t addr, bool exact)
{
	const struct symres *s = v->st ? symtab_get_frame(v->st, addr, exact) : NULL;

	return s ? s->sym : NULL;
}

static char *frame_text(const struct symres *s, uint64_t addr)
{
	char buf[4096];

	if (!s)
		snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
	else if (s->file)
		snprintf(buf, sizeof(buf), "%s at %s:%u", s->sym, s->file, s->line);
	else
		snprintf(buf, sizeof(buf), "%s", s->sym);
	return strdup(buf);
}

void stack_frames_free(struct stack_frames *f)
{
	unsigned int k;

	for (k = 0; k < f->depth; k++) {
		if (f->frames)
			free(f->frames[k]);
		if (f->addrs)
			free(f->addrs[k]);
		if (f->lines)
			free(f->lines[k]);
	}
	free(f->frames);
	free(f->addrs);
	free(f->lines);
	memset(f, 0, sizeof(*f));
}

int stack_frames_build(struct stack_frames *f, const struct rpt *r, const struct symtab *st,
		       const struct ksyms *ks, uint32_t idx)
{
	const uint64_t *fr = kmt_stacks_frames(rpt_stacks(r), idx, &f->depth);
	unsigned int k;

	f->frames = calloc(f->depth ? f->depth : 1, sizeof(char *));
	f->addrs = calloc(f->depth ? f->depth : 1, sizeof(char *));
	f->lines = calloc(f->depth ? f->depth : 1, sizeof(char *));
	if (!f->frames || !f->addrs || !f->lines)
		return -1;
	for (k = 0; k < f->depth; k++) {
		const struct symres *sr = st ? symtab_get_stack(st, ks, fr, k) : NULL;
		char a[24], *l = NULL;

		snprintf(a, sizeof(a), "0x%" PRIx64, fr[k]);
		f->frames[k] = frame_text(sr, fr[k]);
		f->addrs[k] = strdup(a);
		if (sr && sr->file && asprintf(&l, "%s:%u", sr->file, sr->line) < 0)
			l = NULL;
		f->lines[k] = l ? l : strdup("");
		if (!f->frames[k] || !f->addrs[k] || !f->lines[k])
			return -1;
	}
	return 0;
}

int stack_syms_add(struct symtab *st, const struct ksyms *ks, const struct rpt *r, uint32_t idx)
{
	unsigned int d = 0;
	const uint64_t *fr = kmt_stacks_frames(rpt_stacks(r), idx, &d);

	return symtab_add_stack(st, ks, fr, d);
}

char *stack_label(const struct ksyms *ks, const struct rpt *r, uint32_t idx, char *buf,
		  size_t len)
{
	unsigned int d = 0, k;
	const uint64_t *fr = kmt_stacks_frames(rpt_stacks(r), idx, &d);
	size_t off = 0;

	buf[0] = '\0';
	for (k = 0; k < d && k < 2 && off < len; k++) {
		const char *name, *mod;
		uint64_t o;
		char a[256];

		/* The function alone: its offset and module are on the stack's own lines. */
		if (!ks || !ksyms_lookup_stack(ks, fr, k, &name, &o, &mod))
			name = ksyms_format_stack(ks, fr, k, a, sizeof(a));
		off += (size_t)snprintf(buf + off, len - off, "%s%s", k ? " <- " : "", name);
	}
	return buf;
}

static void rows_free(struct srow *rows, size_t n)
{
	size_t i;

	for (i = 0; rows && i < n; i++)
		stack_frames_free(&rows[i].f);
	free(rows);
}

/* Rows for the stacks v, the first n of them with their frames' text. */
static struct srow *rows_build(const struct view_ctx *v, const uint32_t *idx, size_t n)
{
	struct srow *rows = calloc(n ? n : 1, sizeof(*rows));
	size_t i;

	if (!rows)
		return NULL;
	for (i = 0; i < n; i++) {
		rows[i].idx = idx[i];
		rows[i].t = rpt_stack(v->r, idx[i]);
		if (stack_frames_build(&rows[i].f, v->r, v->st, v->o->ks, idx[i])) {
			rows_free(rows, n);
			return NULL;
		}
	}
	return rows;
}

enum { SC_HITS, SC_FAILED, SC_REQ, SC_ALLOC, SC_FREES, SC_OUT, SC_OUT_BYTES, SC_DEPTH,
	SC_FRAMES, SC_ADDRS, SC_LINES };

static const struct out_col stack_cols[] = {
	[SC_HITS] = { "hits", "Count", COL_U64, 9, 0 },
	[SC_FAILED] = { "failed", NULL, COL_U64, 0, OC_NO_TEXT },
	[SC_REQ] = { "bytes_req", "Bytes req", COL_U64, 12, 0 },
	[SC_ALLOC] = { "bytes_alloc", "Bytes alloc", COL_U64, 12, 0 },
	[SC_FREES] = { "frees", "Frees", COL_U64, 9, 0 },
	[SC_OUT] = { "outstanding", "Outstanding", COL_U64, 11, 0 },
	[SC_OUT_BYTES] = { "outstanding_bytes", NULL, COL_U64, 0, OC_NO_TEXT },
	[SC_DEPTH] = { "depth", NULL, COL_U64, 0, OC_NO_TEXT },
	[SC_FRAMES] = { "frames", "Stack (innermost first)", COL_STRV, 0, OC_LEFT },
	[SC_ADDRS] = { "frame_addrs", NULL, COL_STRV, 0, OC_NO_TEXT },
	[SC_LINES] = { "frame_lines", NULL, COL_STRV, 0, OC_NO_TEXT },
};

static void stack_cell(const void *ctx, size_t row, size_t col, struct out_cell *out)
{
	const struct sctx *c = ctx;
	const struct srow *w = &c->rows[row];
	const struct rpt_stack *t = w->t;

	switch (col) {
	case SC_HITS:
		out->u = t->hits;
		break;
	case SC_FAILED:
		out->u = t->failed;
		break;
	case SC_REQ:
		out->u = t->bytes_req;
		break;
	case SC_ALLOC:
		out->u = t->bytes_alloc;
		break;
	case SC_FREES:
		out->u = t->frees;
		break;
	case SC_OUT:
		out->u = t->out_count;
		break;
	case SC_OUT_BYTES:
		out->u = t->out_bytes;
		break;
	case SC_DEPTH:
		out->u = w->f.depth;
		break;
	case SC_FRAMES:
		out->sv = (const char *const *)w->f.frames;
		out->n = w->f.depth;
		break;
	case SC_ADDRS:
		out->sv = (const char *const *)w->f.addrs;
		out->n = w->f.depth;
		break;
	case SC_LINES:
		out->sv = (const char *const *)w->f.lines;
		out->n = w->f.depth;
		break;
	}
}

enum { OC_COUNT, OC_BYTES, OC_HITS_, OC_FRAMES_, OC_ADDRS_ };

static const struct out_col out_cols[] = {
	[OC_COUNT] = { "outstanding", "Outstanding", COL_U64, 11, 0 },
	[OC_BYTES] = { "outstanding_bytes", "Bytes", COL_U64, 12, 0 },
	[OC_HITS_] = { "hits", "Allocs", COL_U64, 9, 0 },
	[OC_FRAMES_] = { "frames", "Stack (innermost first)", COL_STRV, 0, OC_LEFT },
	[OC_ADDRS_] = { "frame_addrs", NULL, COL_STRV, 0, OC_NO_TEXT },
};

static void out_cell(const void *ctx, size_t row, size_t col, struct out_cell *out)
{
	const struct sctx *c = ctx;
	const struct srow *w = &c->rows[row];

	switch (col) {
	case OC_COUNT:
		out->u = w->t->out_count;
		break;
	case OC_BYTES:
		out->u = w->t->out_bytes;
		break;
	case OC_HITS_:
		out->u = w->t->hits;
		break;
	case OC_FRAMES_:
		out->sv = (const char *const *)w->f.frames;
		out->n = w->f.depth;
		break;
	case OC_ADDRS_:
		out->sv = (const char *const *)w->f.addrs;
		out->n = w->f.depth;
		break;
	}
}

enum { FC_HITS, FC_BYTES, FC_NO_ALLOC, FC_DEPTH, FC_FRAMES, FC_ADDRS, FC_LINES };

static const struct out_col free_cols[] = {
	[FC_HITS] = { "frees", "Frees", COL_U64, 9, 0 },
	[FC_BYTES] = { "bytes_freed", "Bytes", COL_U64, 12, 0 },
	[FC_NO_ALLOC] = { "frees_no_alloc", "No alloc", COL_U64, 9, 0 },
	[FC_DEPTH] = { "depth", NULL, COL_U64, 0, OC_NO_TEXT },
	[FC_FRAMES] = { "frames", "Stack (innermost first)", COL_STRV, 0, OC_LEFT },
	[FC_ADDRS] = { "frame_addrs", NULL, COL_STRV, 0, OC_NO_TEXT },
	[FC_LINES] = { "frame_lines", NULL, COL_STRV, 0, OC_NO_TEXT },
};

static void free_cell(const void *ctx, size_t row, size_t col, struct out_cell *out)
{
	const struct sctx *c = ctx;
	const struct srow *w = &c->rows[row];

	switch (col) {
	case FC_HITS:
		out->u = w->t->free_hits;
		break;
	case FC_BYTES:
		out->u = w->t->free_bytes;
		break;
	case FC_NO_ALLOC:
		out->u = w->t->free_no_alloc;
		break;
	case FC_DEPTH:
		out->u = w->f.depth;
		break;
	case FC_FRAMES:
		out->sv = (const char *const *)w->f.frames;
		out->n = w->f.depth;
		break;
	case FC_ADDRS:
		out->sv = (const char *const *)w->f.addrs;
		out->n = w->f.depth;
		break;
	case FC_LINES:
		out->sv = (const char *const *)w->f.lines;
		out->n = w->f.depth;
		break;
	}
}

enum { CC_PATH, CC_HITS, CC_SHARE, CC_REQ, CC_ALLOC, CC_OUT, CC_SITE, CC_CALLER,
	CC_SITE_ADDR, CC_CALLER_ADDR };

/* Text: one column "site <- caller", so that a long pair takes a line of its own. */
static const struct out_col caller_cols[] = {
	[CC_PATH] = { "path", "Call site <- caller", COL_STR, 0, OC_LEFT },
	[CC_SITE] = { "callsite", NULL, COL_STR, 0, OC_NO_TEXT },
	[CC_CALLER] = { "caller", NULL, COL_STR, 0, OC_NO_TEXT },
	[CC_HITS] = { "hits", "Count", COL_U64, 9, 0 },
	[CC_SHARE] = { "share_pct", "Share", COL_PCT, 6, 0 },
	[CC_REQ] = { "bytes_req", NULL, COL_U64, 0, OC_NO_TEXT },
	[CC_ALLOC] = { "bytes_alloc", "Bytes", COL_U64, 11, 0 },
	[CC_OUT] = { "outstanding", NULL, COL_U64, 0, OC_NO_TEXT },
	[CC_SITE_ADDR] = { "callsite_addr", NULL, COL_ADDR, 0, OC_NO_TEXT },
	[CC_CALLER_ADDR] = { "caller_addr", NULL, COL_ADDR, 0, OC_NO_TEXT },
};

/* The same rows for the stacks of frees: their free site, its callers, frees and bytes freed. */
#define CC_UNUSED	(OC_NO_TEXT | OC_NO_CSV | OC_NO_JSON)
static const struct out_col free_caller_cols[] = {
	[CC_PATH] = { "path", "Free site <- caller", COL_STR, 0, OC_LEFT },
	[CC_SITE] = { "callsite", NULL, COL_STR, 0, OC_NO_TEXT },
	[CC_CALLER] = { "caller", NULL, COL_STR, 0, OC_NO_TEXT },
	[CC_HITS] = { "frees", "Frees", COL_U64, 9, 0 },
	[CC_SHARE] = { "share_pct", "Share", COL_PCT, 6, 0 },
	[CC_REQ] = { "bytes_req", NULL, COL_U64, 0, CC_UNUSED },
	[CC_ALLOC] = { "bytes_freed", "Bytes", COL_U64, 11, 0 },
	[CC_OUT] = { "outstanding", NULL, COL_U64, 0, CC_UNUSED },
	[CC_SITE_ADDR] = { "callsite_addr", NULL, COL_ADDR, 0, OC_NO_TEXT },
	[CC_CALLER_ADDR] = { "caller_addr", NULL, COL_ADDR, 0, OC_NO_TEXT },
};

_Static_assert(sizeof(free_caller_cols) == sizeof(caller_cols), "one cell function for both");

static void caller_cell(const void *ctx, size_t row, size_t col, struct out_cell *out)
{
	const struct sctx *c = ctx;
	const struct crow *w = &c->crows[row];

	switch (col) {
	case CC_PATH:
		out->s = w->path;
		break;
	case CC_SITE:
		out->s = w->site_s;
		break;
	case CC_CALLER:
		out->null = !w->caller;
		out->s = w->caller_s;
		break;
	case CC_HITS:
		out->u = w->hits;
		break;
	case CC_SHARE:
		out->d = w->site_hits ? 100.0 * (double)w->hits / (double)w->site_hits : 0.0;
		break;
	case CC_REQ:
		out->u = w->bytes_req;
		break;
	case CC_ALLOC:
		out->u = w->bytes_alloc;
		break;
	case CC_OUT:
		out->u = w->out_count;
		break;
	case CC_SITE_ADDR:
		out->u = w->site;
		break;
	case CC_CALLER_ADDR:
		out->null = !w->caller;
		out->u = w->caller;
		break;
	}
}

static void crows_free(struct crow *c, size_t n)
{
	size_t i;

	for (i = 0; c && i < n; i++)
		free(c[i].path);
	free(c);
}

static int crow_by_addr(const void *pa, const void *pb)
{
	const struct crow *a = pa, *b = pb;

	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	return a->caller < b->caller ? -1 : a->caller > b->caller;
}

static int crow_by_rank(const void *pa, const void *pb)
{
	const struct crow *a = pa, *b = pb;

	if (a->site_hits != b->site_hits)
		return a->site_hits > b->site_hits ? -1 : 1;
	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	if (a->hits != b->hits)
		return a->hits > b->hits ? -1 : 1;
	return a->caller < b->caller ? -1 : a->caller > b->caller;
}

/*
 * Call site x caller rows of the kept stacks (of frees: free site x caller,
 * by frees and bytes freed), the busiest sites first. NULL: memory (n > 0).
 */
static struct crow *callers_build(const struct view_ctx *v, const uint32_t *idx, size_t n,
				  bool frees, size_t *nc)
{
	struct crow *c = calloc(n ? n : 1, sizeof(*c));
	size_t i, j, m = 0;

	*nc = 0;
	if (!c)
		return NULL;
	for (i = 0; i < n; i++) {
		const struct rpt_stack *t = rpt_stack(v->r, idx[i]);
		unsigned int d = 0;
		const uint64_t *fr = kmt_stacks_frames(rpt_stacks(v->r), idx[i], &d);

		c[i].site = fr[0];
		c[i].caller = d > 1 ? fr[1] : 0;
		c[i].caller_exact = d > 1 && ksyms_frame_exact(v->o->ks, fr, 1);
		if (frees) {
			c[i].hits = t->free_hits;
			c[i].bytes_alloc = t->free_bytes;
			continue;
		}
		c[i].hits = t->hits;
		c[i].bytes_req = t->bytes_req;
		c[i].bytes_alloc = t->bytes_alloc;
		c[i].out_count = t->out_count;
	}
	if (n)
		qsort(c, n, sizeof(*c), crow_by_addr);
	for (i = 0; i < n; i++) {
		if (m && c[m - 1].site == c[i].site && c[m - 1].caller == c[i].caller) {
			c[m - 1].hits += c[i].hits;
			c[m - 1].bytes_req += c[i].bytes_req;
			c[m - 1].bytes_alloc += c[i].bytes_alloc;
			c[m - 1].out_count += c[i].out_count;
		} else {
			c[m++] = c[i];
		}
	}
	for (i = 0; i < m; i = j) {
		uint64_t sum = 0;
		size_t k;

		for (j = i; j < m && c[j].site == c[i].site; j++)
			sum += c[j].hits;
		for (k = i; k < j; k++)
			c[k].site_hits = sum;
	}
	if (m)
		qsort(c, m, sizeof(*c), crow_by_rank);
	*nc = m;
	for (i = 0; i < m; i++) {
		/* Every frame was given to the symbol table (stacks_syms()): never NULL there. */
		c[i].site_s = sym_of(v, c[i].site, false);
		c[i].caller_s = sym_of(v, c[i].caller, c[i].caller_exact);
		c[i].site_s = c[i].site_s ? c[i].site_s : "?";
		c[i].caller_s = c[i].caller_s ? c[i].caller_s : "?";
		if ((c[i].caller &&
		     asprintf(&c[i].path, "%s <- %s", c[i].site_s, c[i].caller_s) < 0) ||
		    (!c[i].caller && asprintf(&c[i].path, "%s (the stack ends here)", c[i].site_s) < 0))
			c[i].path = NULL;
		if (!c[i].path) {
			crows_free(c, m);
			*nc = 0;
			return NULL;
		}
	}
	return c;
}

/* Adds the frames of the kept stacks of allocations (or frees) to st. 0 or -1. */
static int kept_syms(const struct view_ctx *v, struct symtab *st, bool frees)
{
	size_t n, i;
	uint32_t *idx = kept_stacks(v->r, v->o, &n, frees);

	if (!idx && errno == ENOMEM)
		return -1;
	for (i = 0; i < n; i++) {
		if (stack_syms_add(st, v->o->ks, v->r, idx[i])) {
			free(idx);
			return -1;
		}
	}
	free(idx);
	return 0;
}

static int stacks_syms(const struct view_ctx *v, struct symtab *st)
{
	if (kept_syms(v, st, false))
		return -1;
	return rpt_has_free_stacks(v->r) ? kept_syms(v, st, true) : 0;
}

/* The paragraph under the first table: what the trace's stacks cover. */
static void stacks_note(const struct rpt *r, const struct stacks_args *a, size_t kept,
			char *buf, size_t len)
{
	const struct rpt_totals *t = rpt_totals(r);
	size_t off, nalloc = 0, i;

	/* The trace's other stacks are those of frees and page events only. */
	for (i = 0; i < rpt_nstacks(r); i++)
		nalloc += rpt_stack(r, i)->hits != 0;
	if (!rpt_has_stacks(r)) {
		snprintf(buf, len, "The trace has no stacks: trace with the module parameter "
			 "stack_depth (1..%u) to record each allocation's kernel stack.",
			 KMT_STACK_MAX_DEPTH);
		return;
	}
	off = (size_t)snprintf(buf, len, "%" PRIu64 " allocations, %" PRIu64
			       " with a stack, in %zu distinct stacks; %" PRIu64
			       " events without a stack", t->allocs, t->stack_allocs,
			       nalloc, t->allocs - t->stack_allocs);
	if (off < len && t->allocs - t->stack_allocs)
		off += (size_t)snprintf(buf + off, len - off, " (%" PRIu64
					" marked: the module's stack table was full or no frame "
					"was found; %" PRIu64 " naming a stack not in the trace)",
					t->no_stack_allocs, t->unknown_stack_allocs);
	if (off < len && t->kmalloc_dup_events)
		off += (size_t)snprintf(buf + off, len - off, "; %" PRIu64 " large kmallocs traced "
					"twice, counted once (%" PRIu64 " of the duplicate events "
					"marked without a stack)", t->kmalloc_dup_events,
					t->kmalloc_dup_no_stack);
	if (off < len && (a->min_count > 1 || a->nexclude))
		off += (size_t)snprintf(buf + off, len - off, ". %zu stacks pass the filters",
					kept);
	if (off < len)
		snprintf(buf + off, len - off, ".");
}

/* The paragraph under the frees table: what the frees' stacks cover. */
static void frees_note(const struct rpt *r, const struct stacks_args *a, size_t kept,
		       char *buf, size_t len)
{
	const struct rpt_totals *t = rpt_totals(r);
	uint64_t no_alloc = 0, without = t->no_stack_frees + t->unknown_stack_frees;
	size_t off, nfree = 0, i;

	for (i = 0; i < rpt_nstacks(r); i++) {
		nfree += rpt_stack(r, i)->free_hits != 0;
		no_alloc += rpt_stack(r, i)->free_no_alloc;
	}
	off = (size_t)snprintf(buf, len, "%" PRIu64 " frees with a stack, in %zu distinct stacks; "
			       "%" PRIu64 " of them freed an object whose allocation is not in the "
			       "trace (allocated before it, or a double free): no bytes for those "
			       "(No alloc). %" PRIu64 " frees without a stack (%" PRIu64
			       " marked, %" PRIu64 " naming a stack not in the trace)",
			       t->stack_frees, nfree, no_alloc, without, t->no_stack_frees,
			       t->unknown_stack_frees);
	if (off < len && (a->min_count > 1 || a->nexclude))
		off += (size_t)snprintf(buf + off, len - off, ". %zu stacks pass the filters",
					kept);
	if (off < len)
		snprintf(buf + off, len - off, ".");
}

/* Emits t with a row for each of the first --lines stacks of idx. 0, -1 or emit's nonzero. */
static int emit_stacks(const struct view_ctx *v, struct out_table *t, struct sctx *c,
		       const uint32_t *idx, size_t n, table_emit_fn emit, void *arg)
{
	size_t shown = limit_of(v->o, n);
	int ret;

	c->rows = rows_build(v, idx, shown);
	if (!c->rows)
		return -1;
	c->n = shown;
	t->nrows = shown;
	t->total = n;
	t->ctx = c;
	ret = emit(t, arg);
	rows_free(c->rows, c->n);
	c->rows = NULL;
	return ret;
}

/* The callers table of the kept stacks idx[n], of allocations or of frees. */
static int emit_callers(const struct view_ctx *v, struct sctx *c, const uint32_t *idx, size_t n,
			bool frees, table_emit_fn emit, void *arg)
{
	struct out_table t = { 0 };

	crows_free(c->crows, c->nc);
	c->crows = callers_build(v, idx, n, frees, &c->nc);
	if (!c->crows)
		return -1;
	t.key = frees ? "stack_free_callers" : "stack_callers";
	t.title = frees ? "Callers of each free site (the frame above it in the stacks of frees)" :
		  "Callers of each call site (the frame above it in the stacks)";
	t.cols = frees ? free_caller_cols : caller_cols;
	t.ncols = sizeof(caller_cols) / sizeof(caller_cols[0]);
	t.nrows = limit_of(v->o, c->nc);
	t.total = c->nc;
	t.cell = caller_cell;
	t.ctx = c;
	return emit(&t, arg);
}

static int stacks_tables(const struct view_ctx *v, table_emit_fn emit, void *arg)
{
	const struct stacks_args *a = args_of(v->o);
	struct sctx c = { .v = v };
	struct out_table t = { 0 };
	size_t n, nout = 0, i;
	uint32_t *idx = kept_stacks(v->r, v->o, &n, false);
	char note[1024];
	int ret = -1;

	if (!idx && errno == ENOMEM)
		return -1;
	stacks_note(v->r, a, n, note, sizeof(note));

	/* Allocations by stack. */
	stacks_sort(v->r, idx, n, stacks_key(v->o));
	t.key = "stacks";
	t.title = "Allocations by kernel stack";
	t.note = note;
	t.cols = stack_cols;
	t.ncols = sizeof(stack_cols) / sizeof(stack_cols[0]);
	t.cell = stack_cell;
	ret = emit_stacks(v, &t, &c, idx, n, emit, arg);
	if (ret)
		goto out;

	/* Outstanding objects by stack (memleak's view): the kept stacks with live objects. */
	for (i = 0; i < n; i++)
		if (rpt_stack(v->r, idx[i])->out_count)
			idx[nout++] = idx[i];
	stacks_sort(v->r, idx, nout, SK_OUT);
	memset(&t, 0, sizeof(t));
	t.key = "stacks_outstanding";
	t.title = "Outstanding objects by kernel stack (allocated, not freed in the trace)";
	t.cols = out_cols;
	t.ncols = sizeof(out_cols) / sizeof(out_cols[0]);
	t.cell = out_cell;
	ret = emit_stacks(v, &t, &c, idx, nout, emit, arg);
	if (ret)
		goto out;

	/* Each call site's callers: the frame above it. */
	ret = -1;
	free(idx);
	idx = kept_stacks(v->r, v->o, &n, false);
	if (!idx && errno == ENOMEM)
		goto out;
	ret = emit_callers(v, &c, idx, n, false, emit, arg);
	if (ret || !rpt_has_free_stacks(v->r))
		goto out;

	/* Frees by stack (stack_frees=1): who frees, through which path. */
	ret = -1;
	free(idx);
	idx = kept_stacks(v->r, v->o, &n, true);
	if (!idx && errno == ENOMEM)
		goto out;
	frees_sort(v->r, idx, n, stacks_key(v->o));
	frees_note(v->r, a, n, note, sizeof(note));
	memset(&t, 0, sizeof(t));
	t.key = "stacks_frees";
	t.title = "Frees by kernel stack";
	t.note = note;
	t.cols = free_cols;
	t.ncols = sizeof(free_cols) / sizeof(free_cols[0]);
	t.cell = free_cell;
	ret = emit_stacks(v, &t, &c, idx, n, emit, arg);
	if (ret)
		goto out;

	ret = emit_callers(v, &c, idx, n, true, emit, arg);
out:
	crows_free(c.crows, c.nc);
	free(idx);
	return ret;
}

const struct report_view view_stacks = {
	.name = "stacks",
	.syms = stacks_syms,
	.tables = stacks_tables,
};

/* ---- --folded, and the flame graph's frames ------------------------------------- */

struct fline {
	char *s;
	uint64_t w;
};

/*
 * Frame by frame: ';' below every other byte, so that all stacks through
 * the same frames are next to each other ("a;b;c" before "a;b0"), one
 * block for each frame of a flame graph.
 */
static int fline_cmp(const void *pa, const void *pb)
{
	const unsigned char *a = (const unsigned char *)((const struct fline *)pa)->s;
	const unsigned char *b = (const unsigned char *)((const struct fline *)pb)->s;

	for (; *a && *a == *b; a++, b++)
		;
	if (*a == *b)
		return 0;
	if (!*a || !*b)
		return *a ? 1 : -1;
	if (*a == ';' || *b == ';')
		return *a == ';' ? -1 : 1;
	return *a < *b ? -1 : 1;
}

/* A frame as flame graphs want it: the function, "_[module]" after a module's. */
static void fold_frame(const struct out_opts *o, const uint64_t *fr, unsigned int k, char *buf,
		       size_t len)
{
	const char *name, *mod;
	uint64_t off, addr = fr[k];

	if (o->raw_ip || !o->ks || !ksyms_lookup_stack(o->ks, fr, k, &name, &off, &mod))
		snprintf(buf, len, "0x%" PRIx64, addr);
	else if (mod)
		snprintf(buf, len, "%s_[%s]", name, mod);
	else
		snprintf(buf, len, "%s", name);
	/* ';' separates frames and the last blank the count: neither may be in a name. */
	for (; *buf; buf++)
		if (*buf == ';' || *buf == ' ' || *buf == '\t' || *buf == '\n')
			*buf = '_';
}

static void flines_free(struct fline *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i].s);
	free(v);
}

/*
 * The kept stacks folded, in frame order, equal ones (stacks differing
 * only in offsets) merged, none of weight 0. 0, or -1 (memory).
 */
static int folded_lines(const struct rpt *r, const struct out_opts *o,
			const struct stacks_args *a, struct fline **out, size_t *nout)
{
	struct out_opts oa = *o;
	struct fline *v = NULL;
	size_t n, i, m = 0;
	uint32_t *idx;

	*out = NULL;
	*nout = 0;
	oa.view_args = a;
	idx = kept_stacks(r, &oa, &n, a->weight == FOLD_FREES);
	if (!idx && errno == ENOMEM)
		return -1;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		goto fail;
	for (i = 0; i < n; i++) {
		const struct rpt_stack *t = rpt_stack(r, idx[i]);
		uint64_t w = a->weight == FOLD_BYTES ? t->bytes_alloc :
			     a->weight == FOLD_REQ ? t->bytes_req :
			     a->weight == FOLD_FREES ? t->free_hits : t->hits;
		unsigned int d = 0, k;
		const uint64_t *fr = kmt_stacks_frames(rpt_stacks(r), idx[i], &d);
		char *buf = NULL, frame[512];
		size_t blen = 0;
		FILE *sp;

		if (!w)
			continue;
		sp = open_memstream(&buf, &blen);
		if (!sp)
			goto fail;
		for (k = d; k-- > 0;) {
			fold_frame(o, fr, k, frame, sizeof(frame));
			fprintf(sp, "%s%s", frame, k ? ";" : "");
		}
		if (fclose(sp) || !buf) {
			free(buf);
			goto fail;
		}
		v[m].s = buf;
		v[m++].w = w;
	}
	free(idx);
	if (m)
		qsort(v, m, sizeof(*v), fline_cmp);
	for (i = 0, n = 0; i < m; i++) {
		if (n && strcmp(v[n - 1].s, v[i].s) == 0) {
			v[n - 1].w += v[i].w;
			free(v[i].s);
		} else {
			v[n++] = v[i];
		}
	}
	*out = v;
	*nout = n;
	return 0;
fail:
	flines_free(v, m);
	free(idx);
	return -1;
}

int stacks_folded(FILE *fp, const struct rpt *r, const struct out_opts *o,
		  const struct stacks_args *a)
{
	struct fline *v;
	size_t n, i;

	if (folded_lines(r, o, a, &v, &n))
		return -1;
	for (i = 0; i < n; i++)
		fprintf(fp, "%s %" PRIu64 "\n", v[i].s, v[i].w);
	flines_free(v, n);
	return 0;
}

/* The length of the frame that starts at s. */
static size_t frame_len(const char *s)
{
	const char *e = strchr(s, ';');

	return e ? (size_t)(e - s) : strlen(s);
}

int stacks_flame(const struct rpt *r, const struct out_opts *o, const struct stacks_args *a,
		 struct flame *f)
{
	/* The current line's frames, root first: their nodes. */
	size_t path[KMT_STACK_MAX_DEPTH];
	struct fline *v;
	size_t n, i, cap = 0;

	memset(f, 0, sizeof(*f));
	if (folded_lines(r, o, a, &v, &n))
		return -1;
	f->lines = v;
	f->nlines = n;
	for (i = 0; i < n; i++) {
		const char *s = v[i].s, *prev = i ? v[i - 1].s : "";
		unsigned int d = 0, same = 1;

		/* Lines are in frame order: a frame is new from the first one that differs. */
		for (; *s && d < KMT_STACK_MAX_DEPTH; d++) {
			size_t len = frame_len(s), plen = frame_len(prev);

			same = same && *prev && len == plen && !memcmp(s, prev, len);
			if (!same) {
				struct flame_node *nd;

				if (f->n == cap) {
					size_t nc = cap ? 2 * cap : 256;
					void *p = realloc(f->v, nc * sizeof(*f->v));

					if (!p)
						goto fail;
					f->v = p;
					cap = nc;
				}
				nd = &f->v[f->n];
				*nd = (struct flame_node){ .name = s, .len = len, .depth = d };
				path[d] = f->n++;
				if (d + 1 > f->depth)
					f->depth = d + 1;
			}
			f->v[path[d]].w += v[i].w;
			s += len + (s[len] == ';');
			prev += plen + (prev[plen] == ';');
		}
		f->total += v[i].w;
	}
	return 0;
fail:
	flame_free(f);
	return -1;
}

void flame_free(struct flame *f)
{
	flines_free(f->lines, f->nlines);
	free(f->v);
	memset(f, 0, sizeof(*f));
}
