// SPDX-License-Identifier: GPL-2.0-only
/*
 * out_html.c - the report as one HTML page: every table through the same
 * views as text, CSV and JSON (each cell with its exact value in data-v),
 * and inline SVG charts drawn from the analysis' aggregates, so a trace of
 * any length gives a page of the same size.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "writers/out_html.h"
#include "views/symtab.h"
#include "views/view_growth.h"
#include "views/view_main.h"
#include "views/view_pages.h"
#include "views/view_stacks.h"

/* Rows of each table and series of each chart: a page people read. */
#define HTML_ROWS	20
#define HTML_SERIES	5
#define HTML_HISTS	6

/* The first len bytes of s as HTML text. */
static void esc_n(FILE *fp, const char *s, size_t len)
{
	for (; s && len--; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", fp);
			break;
		case '>':
			fputs("&gt;", fp);
			break;
		case '&':
			fputs("&amp;", fp);
			break;
		case '"':
			fputs("&quot;", fp);
			break;
		default:
			fputc(*s, fp);
		}
	}
}

static void esc(FILE *fp, const char *s)
{
	esc_n(fp, s, s ? strlen(s) : 0);
}

/* Bytes for people: 1.5 MiB. */
static void fmt_bytes(char *buf, size_t len, uint64_t b)
{
	if (b < 10240)
		snprintf(buf, len, "%" PRIu64 " B", b);
	else if (b < 10485760)
		snprintf(buf, len, "%.1f KiB", b / 1024.0);
	else if (b < 10737418240ULL)
		snprintf(buf, len, "%.1f MiB", b / 1048576.0);
	else
		snprintf(buf, len, "%.1f GiB", b / 1073741824.0);
}

/* ---- tables: any view's, one writer ---------------------------------------------- */

static void html_cell(FILE *fp, const struct out_col *col, const struct out_cell *c)
{
	char buf[64];
	size_t k;

	if (c->null) {
		fputs("<td data-v=\"\"></td>", fp);
		return;
	}
	switch (col->kind) {
	case COL_STR:
		fputs("<td class=\"s\" data-v=\"", fp);
		esc(fp, c->s);
		fputs("\">", fp);
		esc(fp, c->s);
		fputs("</td>", fp);
		break;
	case COL_U64:
		fprintf(fp, "<td data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", c->u, c->u);
		break;
	case COL_I64:
		fprintf(fp, "<td data-v=\"%" PRId64 "\">%" PRId64 "</td>", c->i, c->i);
		break;
	case COL_PCT:
		fprintf(fp, "<td data-v=\"%.3f\">%.1f%%</td>", c->d, c->d);
		break;
	case COL_BOOL:
	case COL_FIX3:
		out_fmt_scalar(buf, sizeof(buf), col, c, false);
		fprintf(fp, "<td data-v=\"%s\">%s</td>", buf, buf);
		break;
	case COL_NS:
		out_fmt_ns(buf, sizeof(buf), c->u);
		fprintf(fp, "<td data-v=\"%" PRIu64 "\">%s</td>", c->u, buf);
		break;
	case COL_ADDR:
		fprintf(fp, "<td data-v=\"0x%" PRIx64 "\">0x%" PRIx64 "</td>", c->u, c->u);
		break;
	case COL_STRV:
		fputs("<td class=\"s\">", fp);
		for (k = 0; k < c->n; k++) {
			fputs(k ? "<br>" : "", fp);
			esc(fp, c->sv[k]);
		}
		fputs("</td>", fp);
		break;
	case COL_U64V:
		fputs("<td>", fp);
		for (k = 0; k < c->n; k++)
			fprintf(fp, "%s%" PRIu64, k ? " " : "", c->uv[k]);
		fputs("</td>", fp);
		break;
	}
}

/* Columns a person reads: the text ones, and a list only if it is the row's content. */
static bool html_shown(const struct out_col *c)
{
	return !(c->flags & OC_NO_TEXT);
}

static int html_emit(const struct out_table *t, void *arg)
{
	FILE *fp = arg;
	size_t row, i;

	fprintf(fp, "<h3>");
	esc(fp, t->title);
	fprintf(fp, " <small>(%zu)</small></h3>\n", t->total);
	if (t->note) {
		fputs("<p class=\"note\">", fp);
		esc(fp, t->note);
		fputs("</p>\n", fp);
	}
	fprintf(fp, "<table class=\"t\" id=\"t-%s\" data-key=\"%s\"><thead><tr>", t->key, t->key);
	for (i = 0; i < t->ncols; i++) {
		if (!html_shown(&t->cols[i]))
			continue;
		fprintf(fp, "<th data-key=\"%s\">", t->cols[i].key);
		esc(fp, t->cols[i].head ? t->cols[i].head : t->cols[i].key);
		fputs("</th>", fp);
	}
	fputs("</tr></thead><tbody>\n", fp);
	for (row = 0; row < t->nrows; row++) {
		fputs("<tr>", fp);
		for (i = 0; i < t->ncols; i++) {
			struct out_cell c;

			if (!html_shown(&t->cols[i]))
				continue;
			memset(&c, 0, sizeof(c));
			t->cell(t->ctx, row, i, &c);
			html_cell(fp, &t->cols[i], &c);
		}
		fputs("</tr>\n", fp);
	}
	fputs("</tbody></table>\n", fp);
	if (t->nrows < t->total)
		fprintf(fp, "<p class=\"more\">%zu more rows: kmemtrace-report -l 0 lists all.</p>\n",
			t->total - t->nrows);
	return ferror(fp) ? EIO : 0;
}

/* A two-column table of named figures. */
struct kv {
	const char *key, *name;
	enum col_kind kind;
	uint64_t u;
	double d;
	const char *s;
};

static const struct out_col kv_cols[] = {
	{ "figure", "Figure", COL_STR, 0, OC_LEFT },
	{ "value", "Value", COL_STR, 0, 0 },
	{ "key", NULL, COL_STR, 0, OC_NO_TEXT },
};

static void kv_table(FILE *fp, const char *id, const char *title, const struct kv *v, size_t n)
{
	char buf[96];
	size_t i;

	fprintf(fp, "<h3>%s</h3>\n<table class=\"t kv\" id=\"t-%s\"><tbody>\n", title, id);
	for (i = 0; i < n; i++) {
		fprintf(fp, "<tr data-key=\"%s\"><th>", v[i].key);
		esc(fp, v[i].name);
		switch (v[i].kind) {
		case COL_U64:
			fprintf(fp, "</th><td data-v=\"%" PRIu64 "\">%" PRIu64, v[i].u, v[i].u);
			break;
		case COL_PCT:
			fprintf(fp, "</th><td data-v=\"%.3f\">%.1f%%", v[i].d, v[i].d);
			break;
		case COL_NS:
			out_fmt_ns(buf, sizeof(buf), v[i].u);
			fprintf(fp, "</th><td data-v=\"%" PRIu64 "\">%s", v[i].u, buf);
			break;
		default:
			fputs("</th><td class=\"s\" data-v=\"", fp);
			esc(fp, v[i].s ? v[i].s : "");
			fputs("\">", fp);
			esc(fp, v[i].s ? v[i].s : "unknown");
			break;
		}
		if (v[i].kind == COL_U64 && strstr(v[i].key, "bytes")) {
			fmt_bytes(buf, sizeof(buf), v[i].u);
			fprintf(fp, " <small>(%s)</small>", buf);
		}
		fputs("</td></tr>\n", fp);
	}
	fputs("</tbody></table>\n", fp);
	(void)kv_cols;
}

#define KV_U(k, n, v)	{ .key = (k), .name = (n), .kind = COL_U64, .u = (v) }
#define KV_S(k, n, v)	{ .key = (k), .name = (n), .kind = COL_STR, .s = (v) }

static uint64_t trace_ns(const struct rpt *r)
{
	const struct rpt_totals *t = rpt_totals(r);

	return t->last_ts > t->first_ts ? t->last_ts - t->first_ts : 0;
}

static void summary(FILE *fp, const struct rpt *r, const struct out_opts *o)
{
	const struct rpt_totals *t = rpt_totals(r);
	struct kv v[] = {
		KV_U("records", "Records", t->records),
		{ .key = "duration_ns", .name = "Duration", .kind = COL_NS, .u = trace_ns(r) },
		KV_U("allocs", "Allocations", t->allocs),
		KV_U("failed_allocs", "Failed allocations", t->failed_allocs),
		KV_U("bytes_req", "Bytes requested", t->bytes_req),
		KV_U("bytes_alloc", "Bytes allocated", t->bytes_alloc),
		{ .key = "fragmentation_pct", .name = "Internal fragmentation", .kind = COL_PCT,
		  .d = rpt_frag(t->bytes_req, t->bytes_alloc) },
		KV_U("frees", "Frees", t->frees),
		KV_U("untracked_frees", "Frees of objects allocated before the trace",
		     t->untracked_frees),
		KV_U("cross_cpu_frees", "Frees on another CPU", t->cross_cpu_frees),
		KV_U("cross_node_allocs", "Allocations for another node", t->cross_node_allocs),
		KV_U("outstanding", "Live at the end", t->outstanding),
		KV_U("outstanding_bytes", "Bytes live at the end", t->outstanding_bytes),
		KV_U("page_allocs", "Page allocations", t->page_allocs),
		KV_U("page_bytes_alloc", "Page bytes allocated", t->page_bytes_alloc),
		KV_U("page_kmalloc_allocs", "Large kmallocs (page allocations too)",
		     t->page_kmalloc_allocs),
		KV_U("lost", "Records lost", t->lost + o->lost_unmarked),
	};

	fputs("<section id=\"summary\"><h2>Summary</h2>\n", fp);
	if (t->lost + o->lost_unmarked)
		fputs("<p class=\"warn\">Records were lost while tracing: every number is a lower "
		      "bound.</p>\n", fp);
	kv_table(fp, "summary", "Totals", v, sizeof(v) / sizeof(v[0]));
	fputs("</section>\n", fp);
}

static void metadata(FILE *fp, const struct rpt *r, const struct out_opts *o)
{
	char cpus[32], lost[4096];
	size_t pos = 0, ncpu = 0, off = 0;
	unsigned int c;
	struct kv v[8];
	size_t n = 0;

	while (o->meta && meta_next(o->meta, "cpu_node", &pos))
		ncpu++;
	snprintf(cpus, sizeof(cpus), "%zu", ncpu ? ncpu : o->nfiles);
	lost[0] = '\0';
	for (c = 0; c < rpt_lost_ncpus(r) && off < sizeof(lost) - 32; c++)
		if (rpt_lost_on_cpu(r, c))
			off += (size_t)snprintf(lost + off, sizeof(lost) - off, "%scpu%u: %" PRIu64,
						off ? ", " : "", c, rpt_lost_on_cpu(r, c));
	v[n++] = (struct kv)KV_S("trace", "Trace", o->trace);
	v[n++] = (struct kv)KV_S("kernel_release", "Kernel",
				 o->meta ? meta_get(o->meta, "kernel_release") : NULL);
	v[n++] = (struct kv)KV_S("machine", "Machine", o->meta ? meta_get(o->meta, "machine") : NULL);
	v[n++] = (struct kv)KV_S("hostname", "Host", o->meta ? meta_get(o->meta, "hostname") : NULL);
	v[n++] = (struct kv)KV_S("cpus", "CPUs", cpus);
	v[n++] = (struct kv)KV_U("page_size", "Page size", o->page_size);
	v[n++] = (struct kv)KV_U("word_bits", "Word bits", o->word_bits);
	v[n++] = (struct kv)KV_S("lost_by_cpu", "Lost records by CPU", off ? lost : "none");
	fputs("<section id=\"metadata\"><h2>Trace</h2>\n", fp);
	kv_table(fp, "metadata", "Metadata", v, n);
	if (o->filters) {
		fputs("<p>Filters: ", fp);
		esc(fp, o->filters);
		fputs("</p>\n", fp);
	}
	/* Said as the text header says it (report_out.c). */
	if (o->rotated)
		fprintf(fp, "<p class=\"warn\">Rotated: the records before %" PRIu64 " ns (the cut) "
			"were folded into a checkpoint: %" PRIu64 " records of dropped segments, "
			"folded, not lost. The totals and tables count them; the lifetimes and "
			"timelines are of the records kept after the cut only.</p>\n", o->cut_ns,
			o->folded_records);
	fputs("</section>\n", fp);
}

/* ---- charts ----------------------------------------------------------------------------- */

static const char *const palette[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
				       "#8c564b" };

/* Requested against allocated bytes per kmalloc size class: the waste of each class. */
static int chart_sizes(FILE *fp, const struct rpt *r)
{
	const struct rpt_cache **v = calloc(rpt_ncaches(r) + 1, sizeof(*v));
	size_t n = 0, i;
	uint64_t max = 1;
	const int bw = 14, gap = 12, h = 220, top = 20, left = 70;
	int w;

	if (!v)
		return -1;
	for (i = 0; i < rpt_ncaches(r); i++) {
		const struct rpt_cache *c = rpt_cache(r, i);

		if (c->pseudo && c->selected && c->bytes_alloc)
			v[n++] = c;
	}
	/* By size class: insertion sort, a few dozen classes. */
	for (i = 1; i < n; i++) {
		const struct rpt_cache *x = v[i];
		size_t j = i;

		for (; j && v[j - 1]->id > x->id; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	for (i = 0; i < n; i++)
		if (v[i]->bytes_alloc > max)
			max = v[i]->bytes_alloc;
	w = left + (int)n * (2 * bw + gap) + 20;
	fputs("<section id=\"sizes\"><h2>Size distribution</h2>\n<p class=\"note\">Bytes "
	      "requested (dark) and allocated (light) per kmalloc size class; the difference is "
	      "internal fragmentation.</p>\n", fp);
	if (!n) {
		fputs("<p>No kmalloc allocations.</p></section>\n", fp);
		free(v);
		return 0;
	}
	fprintf(fp, "<svg class=\"chart\" id=\"svg-sizes\" width=\"%d\" height=\"%d\" "
		"role=\"img\" aria-label=\"requested and allocated bytes per kmalloc class\">\n",
		w < 320 ? 320 : w, h + top + 60);
	fprintf(fp, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", left,
		top + h, w - 10, top + h);
	fprintf(fp, "<text x=\"%d\" y=\"%d\" class=\"lab\" text-anchor=\"end\">%" PRIu64 "</text>\n",
		left - 4, top + 8, max);
	fprintf(fp, "<text x=\"%d\" y=\"%d\" class=\"lab\" text-anchor=\"end\">0</text>\n", left - 4,
		top + h);
	for (i = 0; i < n; i++) {
		const struct rpt_cache *c = v[i];
		int x = left + (int)i * (2 * bw + gap) + gap / 2;
		int hr = (int)((double)c->bytes_req * h / (double)max);
		int ha = (int)((double)c->bytes_alloc * h / (double)max);

		/* Names come from the trace: escaped like every other text. */
		fputs("<g class=\"class\" data-cache=\"", fp);
		esc(fp, c->name);
		fprintf(fp, "\" data-req=\"%" PRIu64 "\" data-alloc=\"%" PRIu64 "\"><title>",
			c->bytes_req, c->bytes_alloc);
		esc(fp, c->name);
		fprintf(fp, ": %" PRIu64 " requested, %" PRIu64 " allocated (%.1f%% wasted)</title>\n",
			c->bytes_req, c->bytes_alloc, rpt_frag(c->bytes_req, c->bytes_alloc));
		fprintf(fp, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#1f77b4\"/>\n",
			x, top + h - hr, bw, hr);
		fprintf(fp, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#aec7e8\"/>\n",
			x + bw, top + h - ha, bw, ha);
		fprintf(fp, "<text class=\"lab\" transform=\"translate(%d,%d) rotate(45)\">", x + 2,
			top + h + 12);
		esc(fp, c->name + (strncmp(c->name, "kmalloc-", 8) ? 0 : 8));
		fputs("</text></g>\n", fp);
	}
	fputs("</svg></section>\n", fp);
	free(v);
	return 0;
}

struct site_ref {
	size_t idx;
	uint64_t key;
};

static int ref_desc(const void *pa, const void *pb)
{
	const struct site_ref *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The n call sites with most of key (0: allocations, 1: freed objects with lifetimes). */
static size_t top_sites(const struct rpt *r, int by, struct site_ref *out, size_t n)
{
	size_t ns = rpt_nsites(r), i, m = 0;
	struct site_ref *all = calloc(ns ? ns : 1, sizeof(*all));

	if (!all)
		return 0;
	for (i = 0; i < ns; i++) {
		const struct rpt_life *l = lp_site(rpt_lp(r), i);
		uint64_t k = by ? (l ? l->freed.n : 0) : rpt_site(r, i)->hits;

		if (k)
			all[m++] = (struct site_ref){ i, k };
	}
	if (m)
		qsort(all, m, sizeof(*all), ref_desc);
	if (m > n)
		m = n;
	memcpy(out, all, m * sizeof(*all));
	free(all);
	return m;
}

static const char *site_name(const struct symtab *st, uint64_t addr, char *buf, size_t len)
{
	const struct symres *s = symtab_get(st, addr);

	if (s)
		return s->sym;
	snprintf(buf, len, "0x%" PRIx64, addr);
	return buf;
}

/* Small multiples: each top site's lifetime histogram over the same log2 axis. */
static void chart_lifetimes(FILE *fp, const struct rpt *r, const struct symtab *st)
{
	struct site_ref top[HTML_HISTS];
	size_t n = top_sites(r, 1, top, HTML_HISTS), i;
	int lo = 63, hi = 0, k;
	const int cw = 300, ch = 120, bh = 90;

	fputs("<section id=\"lifetime-charts\"><h2>Lifetime histograms</h2>\n<p class=\"note\">"
	      "Objects freed per power-of-two lifetime, for the call sites freeing most.</p>\n",
	      fp);
	for (i = 0; i < n; i++) {
		uint64_t h[64];

		rpt_hist_log2(&lp_site(rpt_lp(r), top[i].idx)->freed, h);
		for (k = 0; k < 64; k++) {
			if (!h[k])
				continue;
			lo = k < lo ? k : lo;
			hi = k > hi ? k : hi;
		}
	}
	if (!n) {
		fputs("<p>No object was freed in the trace.</p></section>\n", fp);
		return;
	}
	fputs("<div class=\"grid\">\n", fp);
	for (i = 0; i < n; i++) {
		const struct rpt_site *s = rpt_site(r, top[i].idx);
		uint64_t h[64], max = 1;
		char nb[32], a[32], b[32];
		int nbk = hi - lo + 1, bwid = (cw - 20) / nbk;

		rpt_hist_log2(&lp_site(rpt_lp(r), top[i].idx)->freed, h);
		for (k = lo; k <= hi; k++)
			max = h[k] > max ? h[k] : max;
		fprintf(fp, "<figure class=\"hist\" data-callsite=\"0x%" PRIx64 "\" data-freed=\"%"
			PRIu64 "\"><figcaption>", s->addr, top[i].key);
		esc(fp, site_name(st, s->addr, nb, sizeof(nb)));
		fprintf(fp, " <small>(%" PRIu64 " freed)</small></figcaption>\n<svg width=\"%d\" "
			"height=\"%d\">\n", top[i].key, cw, ch);
		for (k = lo; k <= hi; k++) {
			int bar = (int)((double)h[k] * bh / (double)max);

			out_fmt_ns(a, sizeof(a), k ? (uint64_t)1 << k : 0);
			out_fmt_ns(b, sizeof(b), (uint64_t)1 << (k + 1));
			fprintf(fp, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\">"
				"<title>%s-%s: %" PRIu64 "</title></rect>\n", 10 + (k - lo) * bwid,
				5 + bh - bar, bwid > 2 ? bwid - 1 : 1, bar, palette[i % 6], a, b, h[k]);
		}
		out_fmt_ns(a, sizeof(a), lo ? (uint64_t)1 << lo : 0);
		out_fmt_ns(b, sizeof(b), hi < 63 ? (uint64_t)1 << (hi + 1) : UINT64_MAX);
		fprintf(fp, "<line x1=\"10\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n"
			"<text x=\"10\" y=\"%d\" class=\"lab\">%s</text><text x=\"%d\" y=\"%d\" "
			"class=\"lab\" text-anchor=\"end\">%s</text></svg></figure>\n", 5 + bh,
			cw - 10, 5 + bh, ch - 8, a, cw - 10, ch - 8, b);
	}
	fputs("</div></section>\n", fp);
}

/* Allocations per second over time: all call sites, then the busiest. */
static void chart_rates(FILE *fp, const struct rpt *r, const struct symtab *st)
{
	struct site_ref top[HTML_SERIES];
	size_t n = top_sites(r, 0, top, HTML_SERIES), i;
	const struct rpt_lp *lp = rpt_lp(r);
	const struct rpt_tl *all = lp_tl(lp, SIZE_MAX);
	uint64_t width = lp_tl_width(lp), nb, max = 1, k;
	const int w = 720, h = 220, left = 70, top_ = 10;
	char a[32], b[32];
	double per_s;

	fputs("<section id=\"rates\"><h2>Allocation and free rates over time</h2>\n", fp);
	if (!all || !width) {
		fputs("<p>No timeline.</p></section>\n", fp);
		return;
	}
	nb = trace_ns(r) / width + 1;
	if (nb > RPT_TL_NB)
		nb = RPT_TL_NB;
	per_s = 1e9 / (double)width;
	for (k = 0; k < nb; k++) {
		max = all->allocs[k] > max ? all->allocs[k] : max;
		max = all->frees[k] > max ? all->frees[k] : max;
	}
	out_fmt_ns(a, sizeof(a), width);
	out_fmt_ns(b, sizeof(b), trace_ns(r));
	fprintf(fp, "<p class=\"note\">Events per second in %" PRIu64 " intervals of %s over the "
		"trace's %s: all call sites' allocations (black) and frees (grey, dashed), and the "
		"%zu call sites allocating most (their objects' frees dashed, in the same colour)."
		"</p>\n", nb, a, b, n);
	fprintf(fp, "<svg class=\"chart\" id=\"svg-rates\" width=\"%d\" height=\"%d\" "
		"data-buckets=\"%" PRIu64 "\" data-bucket-ns=\"%" PRIu64 "\">\n", w + 20,
		h + top_ + 30, nb, width);
	fprintf(fp, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"axis\"/>\n", left,
		top_ + h, left + w - left, top_ + h);
	fprintf(fp, "<text x=\"%d\" y=\"%d\" class=\"lab\" text-anchor=\"end\">%.0f/s</text>\n",
		left - 4, top_ + 8, (double)max * per_s);
	fprintf(fp, "<text x=\"%d\" y=\"%d\" class=\"lab\">0</text><text x=\"%d\" y=\"%d\" "
		"class=\"lab\" text-anchor=\"end\">%s</text>\n", left, top_ + h + 14, w, top_ + h + 14,
		b);
	/* Series 0 and 1: all sites' allocations and frees; then each top site's two. */
	for (i = 0; i < 2 * n + 2; i++) {
		size_t site = i < 2 ? 0 : (i - 2) / 2;
		bool frees = i % 2;
		const struct rpt_tl *t = i < 2 ? all : lp_tl(lp, top[site].idx);
		const uint64_t *y;
		char nbuf[32];

		if (!t)
			continue;
		y = frees ? t->frees : t->allocs;
		if (i < 2)
			fprintf(fp, "<polyline class=\"series\" data-series=\"%s\" fill=\"none\" "
				"stroke=\"%s\"%s points=\"", i ? "all_frees" : "all_allocs",
				i ? "#888" : "#000", i ? " stroke-dasharray=\"4 3\"" : "");
		else
			fprintf(fp, "<polyline class=\"series\" data-series=\"0x%" PRIx64 "%s\" "
				"fill=\"none\" stroke=\"%s\"%s points=\"",
				rpt_site(r, top[site].idx)->addr, frees ? "_frees" : "",
				palette[site % 6], frees ? " stroke-dasharray=\"4 3\"" : "");
		for (k = 0; k < nb; k++)
			fprintf(fp, "%s%.1f,%.1f", k ? " " : "",
				left + (double)(w - left) * ((double)k + 0.5) / (double)nb,
				top_ + h - (double)y[k] * h / (double)max);
		fputs("\"><title>", fp);
		if (i < 2) {
			fputs(i ? "all frees" : "all allocations", fp);
		} else {
			esc(fp, site_name(st, rpt_site(r, top[site].idx)->addr, nbuf,
					  sizeof(nbuf)));
			fputs(frees ? ": frees of its objects" : ": allocations", fp);
		}
		fputs("</title></polyline>\n", fp);
	}
	fputs("</svg>\n<ul class=\"legend\">", fp);
	for (i = 0; i < n; i++) {
		char nbuf[32];

		fprintf(fp, "<li><span style=\"background:%s\"></span>", palette[i % 6]);
		esc(fp, site_name(st, rpt_site(r, top[i].idx)->addr, nbuf, sizeof(nbuf)));
		fputs("</li>", fp);
	}
	fputs("</ul></section>\n", fp);
}

/* ---- errors and outstanding objects ------------------------------------------------------- */

static int errors_section(FILE *fp, const struct rpt *r, const struct symtab *st)
{
	size_t n = 0, i;
	const struct rpt_error **e = sorted_errors(r, &n);
	char b1[32], b2[32];

	if (!e)
		return -1;
	fprintf(fp, "<h3>Errors <small>(%zu)</small></h3>\n<table class=\"t\" id=\"t-errors\">"
		"<thead><tr><th>Kind</th><th>Allocated at</th><th>Freed at</th><th>Count</th>"
		"</tr></thead><tbody>\n", n);
	for (i = 0; i < n && i < HTML_ROWS * 5; i++) {
		fprintf(fp, "<tr><td class=\"s\" data-v=\"%s\">%s%s</td><td class=\"s\">",
			rpt_err_name(e[i]->kind), rpt_err_name(e[i]->kind),
			e[i]->uncertain ? "?" : "");
		esc(fp, site_name(st, e[i]->alloc_site, b1, sizeof(b1)));
		fputs("</td><td class=\"s\">", fp);
		esc(fp, e[i]->free_site ? site_name(st, e[i]->free_site, b2, sizeof(b2)) : "");
		fprintf(fp, "</td><td data-v=\"%" PRIu64 "\">%" PRIu64 "</td></tr>\n", e[i]->count,
			e[i]->count);
	}
	fputs("</tbody></table>\n", fp);
	free(e);
	return 0;
}

static int outstanding_section(FILE *fp, const struct rpt *r, const struct symtab *st)
{
	size_t n = 0, i;
	struct row *rows = outstanding_rows(r, st, &n);
	const struct rpt_totals *t = rpt_totals(r);

	if (!rows)
		return -1;
	fprintf(fp, "<h3>Outstanding objects by call site <small>(%zu)</small></h3>\n<p class="
		"\"note\">%" PRIu64 " objects, %" PRIu64 " bytes allocated in the trace and not freed "
		"by its end.</p>\n<table class=\"t\" id=\"t-outstanding\"><thead><tr><th>Call site"
		"</th><th>Objects</th><th>Bytes</th><th>Oldest age</th></tr></thead><tbody>\n", n,
		t->outstanding, t->outstanding_bytes);
	for (i = 0; i < n && i < HTML_ROWS; i++) {
		const struct rpt_site *s = rpt_site_find(r, rows[i].site);
		char b[32], age[32];
		uint64_t ns = s && t->last_ts > s->out_oldest_ts ? t->last_ts - s->out_oldest_ts : 0;

		out_fmt_ns(age, sizeof(age), ns);
		fputs("<tr><td class=\"s\">", fp);
		esc(fp, site_name(st, rows[i].site, b, sizeof(b)));
		fprintf(fp, "</td><td data-v=\"%" PRIu64 "\">%" PRIu64 "</td><td data-v=\"%" PRIu64
			"\">%" PRIu64 "</td><td data-v=\"%" PRIu64 "\">%s</td></tr>\n",
			s ? s->out_count : 0, s ? s->out_count : 0, s ? s->out_bytes : 0,
			s ? s->out_bytes : 0, ns, age);
	}
	fputs("</tbody></table>\n", fp);
	free(rows);
	return 0;
}

/* ---- kernel stacks: flame graphs and the --stacks tables ------------------------------------ */

#define FLAME_W		1160	/* px */
#define FLAME_ROW	16
/* Narrower frames are left out (and counted), so a page's size has a bound. */
#define FLAME_MIN_PX	0.3
#define FLAME_CHAR_PX	6.6	/* 11px monospace */

/* By name, so a function has one color in every graph: warm for the kernel's, cool for modules'. */
static void flame_color(const struct flame_node *nd, char *buf, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < nd->len; i++)
		h = (h ^ (unsigned char)nd->name[i]) * 16777619u;
	if (memmem(nd->name, nd->len, "_[", 2))
		snprintf(buf, len, "hsl(%u,55%%,%u%%)", 170 + h % 50, 60 + (h >> 8) % 15);
	else
		snprintf(buf, len, "hsl(%u,85%%,%u%%)", h % 55, 55 + (h >> 8) % 12);
}

/*
 * One flame graph, the root at the bottom, each frame as wide as its share
 * of the weight; no script: a frame's title is its tooltip.
 */
static int flame_svg(FILE *fp, const struct flame *f, const char *id, const char *title,
		     const char *unit)
{
	double *x = calloc(f->depth + 1, sizeof(*x));
	unsigned int height = f->depth * FLAME_ROW;
	size_t i, hidden = 0;

	if (!x)
		return -1;
	fprintf(fp, "<h3>%s</h3>\n<figure class=\"flame\" id=\"%s\" data-total=\"%" PRIu64
		"\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%u\" "
		"viewBox=\"0 0 %d %u\">\n", title, id, f->total, FLAME_W, height, FLAME_W, height);
	for (i = 0; i < f->n; i++) {
		const struct flame_node *nd = &f->v[i];
		double x0 = x[nd->depth], wpx = (double)nd->w * FLAME_W / (double)f->total;
		unsigned int y = (f->depth - 1 - nd->depth) * FLAME_ROW;
		size_t chars = wpx > 8 ? (size_t)((wpx - 6) / FLAME_CHAR_PX) : 0;
		char color[40];

		/* Pre-order: this frame's callees start where it does. */
		x[nd->depth] += wpx;
		x[nd->depth + 1] = x0;
		if (wpx < FLAME_MIN_PX) {
			hidden++;
			continue;
		}
		flame_color(nd, color, sizeof(color));
		fprintf(fp, "<g data-v=\"%" PRIu64 "\" data-d=\"%u\"><title>", nd->w, nd->depth);
		esc_n(fp, nd->name, nd->len);
		fprintf(fp, ": %" PRIu64 " %s, %.2f%%</title><rect x=\"%.2f\" y=\"%u\" "
			"width=\"%.2f\" height=\"%d\" fill=\"%s\"/>", nd->w, unit,
			100.0 * (double)nd->w / (double)f->total, x0, y, wpx, FLAME_ROW - 1, color);
		if (chars >= 3) {
			fprintf(fp, "<text x=\"%.2f\" y=\"%u\">", x0 + 3, y + FLAME_ROW - 4);
			if (chars >= nd->len) {
				esc_n(fp, nd->name, nd->len);
			} else {
				esc_n(fp, nd->name, chars - 2);
				fputs("..", fp);
			}
			fputs("</text>", fp);
		}
		fputs("</g>\n", fp);
	}
	fprintf(fp, "</svg><figcaption>%" PRIu64 " %s; a frame is as wide as the share of them "
		"made through it, its callees above it; hover for a frame's figures.", f->total,
		unit);
	if (hidden)
		fprintf(fp, " %zu frames narrower than %.1f px are not drawn.", hidden,
			FLAME_MIN_PX);
	fputs("</figcaption></figure>\n", fp);
	free(x);
	return 0;
}

static int stacks_section(FILE *fp, const struct view_ctx *v, struct out_opts *mo,
			  const struct stacks_args *sa)
{
	static const struct {
		enum folded_weight weight;
		const char *id, *title, *unit;
	} graphs[] = {
		{ FOLD_BYTES, "flame-bytes", "Bytes allocated by kernel stack", "bytes" },
		{ FOLD_HITS, "flame-allocs", "Allocations by kernel stack", "allocations" },
		{ FOLD_FREES, "flame-frees", "Frees by kernel stack", "frees" },
	};
	size_t i;

	fputs("<section id=\"stacks\"><h2>Kernel stacks</h2>\n", fp);
	if (!rpt_has_stacks(v->r)) {
		fputs("<p>No kernel stacks: trace with the module parameter stack_depth=N (and "
		      "stack_frees=1 for the stacks of frees).</p>\n</section>\n", fp);
		return 0;
	}
	if (sa->min_count || sa->nexclude) {
		fprintf(fp, "<p class=\"note\">Graphs and tables hold the stacks seen at least "
			"%" PRIu64 " times", sa->min_count ? sa->min_count : 1);
		for (i = 0; i < sa->nexclude; i++) {
			fputs(i ? ", " : ", through none of ", fp);
			esc(fp, sa->exclude[i]);
		}
		fputs(" (--min-count, --exclude).</p>\n", fp);
	}
	for (i = 0; i < sizeof(graphs) / sizeof(graphs[0]); i++) {
		struct stacks_args a = *sa;
		struct flame f;
		int ret;

		if (graphs[i].weight == FOLD_FREES && !rpt_has_free_stacks(v->r))
			continue;
		a.weight = graphs[i].weight;
		if (stacks_flame(v->r, v->o, &a, &f))
			return -1;
		ret = f.total ? flame_svg(fp, &f, graphs[i].id, graphs[i].title, graphs[i].unit) : 0;
		flame_free(&f);
		if (ret)
			return -1;
	}
	mo->view_args = sa;
	mo->nsort = 0;
	mo->lines = HTML_ROWS;
	if (view_stacks.tables(v, html_emit, fp))
		return -1;
	fputs("</section>\n", fp);
	return 0;
}

/* ---- the page ------------------------------------------------------------------------------- */

static const char css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1200px;"
	"color:#222;padding:0 1em}"
	"h1{font-size:1.6em}h2{border-bottom:2px solid #ccc;padding-bottom:.2em;margin-top:2em}"
	"nav a{margin-right:1em}"
	"table.t{border-collapse:collapse;margin:.5em 0 1em;font-variant-numeric:tabular-nums}"
	"table.t th,table.t td{border-bottom:1px solid #e3e3e3;padding:2px 8px;text-align:right}"
	"table.t th{background:#f4f4f4}"
	"table.t td.s,table.kv th{text-align:left;max-width:36em;overflow-wrap:anywhere}"
	".note{color:#555;max-width:60em}.warn{color:#b00;font-weight:bold}.more{color:#777}"
	"svg .axis{stroke:#444}svg .lab{font-size:11px;fill:#333}"
	".grid{display:flex;flex-wrap:wrap;gap:1em}"
	"figure.hist{margin:0;border:1px solid #ddd;padding:.3em}"
	"figure.hist figcaption{font-size:12px;max-width:300px;overflow-wrap:anywhere}"
	".legend{list-style:none;padding:0}.legend li{display:inline-block;margin-right:1.2em}"
	".legend span{display:inline-block;width:1em;height:.6em;margin-right:.3em}"
	"figure.flame{margin:0 0 1em;overflow-x:auto}"
	"figure.flame text{font:11px monospace;fill:#000;pointer-events:none}"
	"figure.flame g:hover rect{stroke:#000;stroke-width:1}"
	"figure.flame figcaption{font-size:12px;color:#555}";

static int write_page(FILE *fp, const struct rpt *r, const struct out_opts *o,
		      const struct life_args *la, const struct stacks_args *sa,
		      const struct rpt_slab *slab, const struct symtab *st)
{
	struct out_opts mo = *o;
	struct view_ctx v = { .r = r, .o = &mo, .slab = slab, .st = st };

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>"
	      "kmemtrace report: ", fp);
	esc(fp, o->trace);
	fprintf(fp, "</title>\n<style>%s</style>\n</head><body>\n<h1>kmemtrace report</h1>\n",
		css);
	fputs("<nav><a href=\"#summary\">Summary</a><a href=\"#callsites\">Call sites</a>"
	      "<a href=\"#caches\">Caches</a><a href=\"#sizes\">Sizes</a><a href=\"#lifetimes\">"
	      "Lifetimes</a><a href=\"#rates\">Rates</a><a href=\"#cross\">Cross-CPU/node</a>"
	      "<a href=\"#pages\">Pages</a><a href=\"#stacks\">Stacks</a>"
	      "<a href=\"#problems\">Errors and outstanding</a>"
	      "<a href=\"#metadata\">Trace</a></nav>\n", fp);
	summary(fp, r, o);

	mo.fmt = FMT_TEXT;
	mo.lines = HTML_ROWS;
	mo.xview = NULL;
	mo.nsort = 0;
	mo.view = VIEW_CALLER;
	/* --at, --diff: what the page was asked for comes first, leaks on top. */
	if (o->xview == &view_growth) {
		const struct growth_args *ga = o->view_args;

		fprintf(fp, "<section id=\"growth\"><h2>%s</h2>\n",
			ga->diff ? "Growth" : "Outstanding objects at a time");
		if (view_growth.tables(&v, html_emit, fp))
			return -1;
		fputs("</section>\n", fp);
		mo.view_args = NULL;
	}
	fputs("<section id=\"callsites\"><h2>Top call sites</h2>\n", fp);
	if (report_main_table(&v, html_emit, fp))
		return -1;
	fputs("</section>\n<section id=\"caches\"><h2>Top caches</h2>\n", fp);
	mo.view = VIEW_CACHE;
	if (report_main_table(&v, html_emit, fp))
		return -1;
	fputs("</section>\n", fp);
	if (chart_sizes(fp, r))
		return -1;

	fputs("<section id=\"lifetimes\"><h2>Lifetimes</h2>\n", fp);
	mo.view_args = la;
	if (view_life.tables(&v, html_emit, fp))
		return -1;
	fputs("</section>\n", fp);
	chart_lifetimes(fp, r, st);
	chart_rates(fp, r, st);

	fputs("<section id=\"cross\"><h2>Cross-CPU frees and cross-node allocations</h2>\n", fp);
	mo.view = VIEW_CALLER;
	mo.sort[0] = SK_PINGPONG;
	mo.nsort = 1;
	mo.lines = 10;
	if (report_main_table(&v, html_emit, fp))
		return -1;
	mo.sort[0] = SK_XNODE;
	if (report_main_table(&v, html_emit, fp))
		return -1;
	fputs("</section>\n<section id=\"pages\"><h2>Page allocator</h2>\n", fp);
	mo.nsort = 0;
	mo.lines = HTML_ROWS;
	if (!rpt_totals(r)->page_allocs && !rpt_totals(r)->page_frees)
		fputs("<p>No page events: trace with the module parameter pages=1.</p>\n", fp);
	else if (view_pages.tables(&v, html_emit, fp))
		return -1;
	fputs("</section>\n", fp);
	if (stacks_section(fp, &v, &mo, sa))
		return -1;
	fputs("<section id=\"problems\"><h2>Errors and outstanding objects</h2>\n", fp);
	if (errors_section(fp, r, st) || outstanding_section(fp, r, st))
		return -1;
	fputs("</section>\n", fp);
	metadata(fp, r, o);
	fputs("<footer><p class=\"note\">Written by kmemtrace-report " KMT_VERSION
	      ".</p></footer>\n</body></html>\n", fp);
	return 0;
}

int html_write_file(const char *path, const struct rpt *r, const struct out_opts *o,
		    const struct life_args *la, const struct stacks_args *sa)
{
	struct rpt_slab *slab = slab_info_new(o->meta);
	struct symtab st = { 0 };
	FILE *fp = NULL;
	int ret = -1;

	if (!slab || symtab_add_report(&st, r))
		goto out;
	/* --at, --diff: the frames of their stacks' table. */
	if (o->xview == &view_growth) {
		struct view_ctx v = { .r = r, .o = o, .slab = slab };

		if (view_growth.syms(&v, &st))
			goto out;
	}
	if (rpt_has_stacks(r)) {
		struct out_opts so = *o;
		struct view_ctx v = { .r = r, .o = &so, .slab = slab };

		so.view_args = sa;
		if (view_stacks.syms(&v, &st))
			goto out;
	}
	if (symtab_resolve(&st, o))
		goto out;
	fp = fopen(path, "w");
	if (!fp) {
		ret = errno;
		goto out;
	}
	ret = write_page(fp, r, o, la, sa, slab, &st);
	if (!ret && ferror(fp))
		ret = EIO;
	if (fclose(fp) && !ret)
		ret = errno;
out:
	symtab_free(&st);
	slab_info_free(slab);
	return ret;
}
