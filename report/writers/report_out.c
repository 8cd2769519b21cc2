// SPDX-License-Identifier: GPL-2.0-only
/*
 * report_out.c - the whole report as a document, in text, JSON or CSV:
 * the views' tables (views/) through the writers, in the order and under
 * the names each format's contract has, and what is not a table around
 * them; and the --raw dump. Every address is symbolized once, here, after
 * the trace was read.
 *
 * Not tables, and so written here: the text header (the input, the lost
 * records, the coverage paragraph) and its summary are sentences whose
 * lines appear or not by what the trace holds; the footnote under the
 * errors is prose; the JSON "trace" and "totals" are single objects of
 * unrelated figures (one row of as many columns as keys, which neither
 * text nor CSV has).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "writers/report_out.h"
#include "views/symtab.h"
#include "views/view_main.h"

#define SYM_LEN		512

/* ---- JSON: the document's own members (not tables) --------------------------- */

static void json_key(FILE *fp, const char *k, bool *first)
{
	fputs(*first ? "" : ",", fp);
	*first = false;
	fprintf(fp, "\"%s\":", k);
}

static void json_u64(FILE *fp, const char *k, uint64_t v, bool *first)
{
	json_key(fp, k, first);
	fprintf(fp, "%" PRIu64, v);
}

static void json_str(FILE *fp, const char *k, const char *v, bool *first)
{
	json_key(fp, k, first);
	if (v)
		json_string(fp, v);
	else
		fputs("null", fp);
}

static void json_pct(FILE *fp, const char *k, double v, bool *first)
{
	json_key(fp, k, first);
	fprintf(fp, "%.3f", v);
}

/*
 * kmemtrace.ko's filter at the source, from kmemtrace.meta (trace-format.md,
 * section 6): what it recorded, and what it left out during the trace, the
 * per-CPU counters at the end less those at the start (known only when
 * both were written).
 */
struct src_filter {
	const char *spec, *spec_end;	/* NULL: the metadata says nothing */
	bool counted;
	uint64_t allocs, frees, untracked;
};

static void src_filter_read(const struct rpt_meta *m, struct src_filter *sf)
{
	const char *v, *w;
	size_t pos = 0, pos2;

	memset(sf, 0, sizeof(*sf));
	sf->spec = meta_get(m, "filter");
	sf->spec_end = meta_get(m, "filter_end");
	while ((v = meta_next(m, "filtered_end", &pos))) {
		unsigned long long c, a, f, u, c0, a0 = 0, f0 = 0, u0 = 0;

		if (sscanf(v, "%llu %llu %llu %llu", &c, &a, &f, &u) != 4)
			continue;
		pos2 = 0;
		while ((w = meta_next(m, "filtered_start", &pos2)))
			if (sscanf(w, "%llu %llu %llu %llu", &c0, &a0, &f0, &u0) == 4 && c0 == c)
				break;
		if (!w)
			a0 = f0 = u0 = 0;
		sf->counted = true;
		sf->allocs += a >= a0 ? a - a0 : 0;
		sf->frees += f >= f0 ? f - f0 : 0;
		sf->untracked += u >= u0 ? u - u0 : 0;
	}
}

static bool src_filter_on(const struct src_filter *sf)
{
	return (sf->spec && strcmp(sf->spec, "none") != 0) ||
	       (sf->spec_end && strcmp(sf->spec_end, "none") != 0);
}

static uint64_t lost_total(const struct rpt *r, const struct out_opts *o)
{
	return rpt_totals(r)->lost + o->lost_unmarked;
}

/*
 * The other names of a cache (report_slab.h), malloc'ed; *n of them.
 * Only a cache a CACHE_DESC named has any. 0, or -1 out of memory.
 */
/* names[0] SEP names[1] ...: malloc'ed, NULL when out of memory. */
/* ---- a registered view's tables (views/view.h) ------------------------------- */

struct json_emit {
	FILE *fp;
	bool first;
	/*
	 * The member's name in the document, where schema 1 names it other
	 * than the table's key (CSV and HTML: "callers", "objects"); NULL: the key.
	 */
	const char *key;
};

static int json_emit(const struct out_table *t, void *arg)
{
	struct json_emit *je = arg;
	struct out_table named = *t;

	if (je->key)
		named.key = je->key;
	out_json_table(je->fp, &named, &je->first);
	return 0;
}

struct csv_emit {
	FILE *fp;
	size_t n;
};

/* Several tables: an empty line between them. */
static int csv_emit(const struct out_table *t, void *arg)
{
	struct csv_emit *ce = arg;

	if (ce->n++)
		fputc('\n', ce->fp);
	out_csv_table(ce->fp, t);
	return 0;
}

struct text_emit {
	FILE *fp;
	bool wide;
};

static int text_emit(const struct out_table *t, void *arg)
{
	struct text_emit *te = arg;

	out_text_table(te->fp, t, te->wide);
	return 0;
}

/* Allocations without a stack in a trace with stacks: never left unsaid. */
static uint64_t without_stack(const struct rpt *r)
{
	const struct rpt_totals *t = rpt_totals(r);

	return rpt_has_stacks(r) ? t->allocs - t->stack_allocs : 0;
}

static void json_stack_totals(FILE *fp, const struct rpt *r, bool *f2)
{
	const struct rpt_totals *t = rpt_totals(r);

	json_key(fp, "has_stacks", f2);
	fputs(rpt_has_stacks(r) ? "true" : "false", fp);
	json_u64(fp, "distinct_stacks", rpt_nstacks(r), f2);
	json_u64(fp, "stack_records", t->stack_slots, f2);
	json_u64(fp, "stack_allocs", t->stack_allocs, f2);
	json_u64(fp, "events_without_stack", without_stack(r), f2);
	json_u64(fp, "no_stack_allocs", t->no_stack_allocs, f2);
	json_u64(fp, "unknown_stack_allocs", t->unknown_stack_allocs, f2);
	json_u64(fp, "other_events_without_stack", t->other_no_stack + t->other_unknown_stack, f2);
	json_u64(fp, "kmalloc_duplicate_events", t->kmalloc_dup_events, f2);
	json_u64(fp, "kmalloc_duplicates_without_stack", t->kmalloc_dup_no_stack, f2);
	json_u64(fp, "kmalloc_duplicates_failed", t->kmalloc_dup_failed, f2);
	json_key(fp, "has_free_stacks", f2);
	fputs(rpt_has_free_stacks(r) ? "true" : "false", fp);
	json_u64(fp, "stack_frees", t->stack_frees, f2);
	json_u64(fp, "no_stack_frees", t->no_stack_frees, f2);
	json_u64(fp, "unknown_stack_frees", t->unknown_stack_frees, f2);
}

static int print_json(FILE *fp, const struct rpt *r, const struct out_opts *o,
		      const struct symtab *st, const struct rpt_slab *slab)
{
	const struct rpt_totals *t = rpt_totals(r);
	bool first = true, f2;
	const char *kv;

	fputs("{", fp);
	json_u64(fp, "schema_version", 1, &first);

	json_key(fp, "trace", &first);
	f2 = true;
	fputs("{", fp);
	json_str(fp, "path", o->trace, &f2);
	json_u64(fp, "files", o->nfiles, &f2);
	json_u64(fp, "word_bits", o->word_bits, &f2);
	json_str(fp, "byte_order", o->big_endian ? "big" : "little", &f2);
	json_u64(fp, "page_size", o->page_size, &f2);
	kv = meta_get(o->meta, "kernel_release");
	json_str(fp, "kernel_release", kv, &f2);
	kv = meta_get(o->meta, "machine");
	json_str(fp, "machine", kv, &f2);
	kv = meta_get(o->meta, "hostname");
	json_str(fp, "hostname", kv, &f2);
	json_u64(fp, "first_ns", t->first_ts, &f2);
	json_u64(fp, "last_ns", t->last_ts, &f2);
	json_u64(fp, "duration_ns", t->last_ts > t->first_ts ? t->last_ts - t->first_ts : 0, &f2);
	json_u64(fp, "records", t->records, &f2);
	json_u64(fp, "unknown_records", o->unknown_records, &f2);
	json_u64(fp, "truncated_bytes", o->truncated_bytes, &f2);
	json_str(fp, "filters", o->filters, &f2);
	json_key(fp, "rotated", &f2);
	fputs(o->rotated ? "true" : "false", fp);
	if (o->rotated) {
		json_u64(fp, "cut_ns", o->cut_ns, &f2);
		json_u64(fp, "folded_records", o->folded_records, &f2);
		json_u64(fp, "first_segment", o->first_segment, &f2);
		json_u64(fp, "last_segment", o->last_segment, &f2);
		json_u64(fp, "folded_no_cache", t->sum_no_cache, &f2);
		json_key(fp, "window_only", &f2);
		json_string_array(fp, report_window_only, REPORT_WINDOW_ONLY_N);
	} else {
		json_str(fp, "cut_ns", NULL, &f2);
		json_str(fp, "folded_records", NULL, &f2);
		json_str(fp, "first_segment", NULL, &f2);
		json_str(fp, "last_segment", NULL, &f2);
		json_str(fp, "folded_no_cache", NULL, &f2);
		json_str(fp, "window_only", NULL, &f2);
	}
	{
		struct src_filter sf;

		src_filter_read(o->meta, &sf);
		json_str(fp, "source_filter", sf.spec, &f2);
		json_str(fp, "source_filter_end", sf.spec_end, &f2);
		if (sf.counted) {
			json_u64(fp, "filtered_allocs", sf.allocs, &f2);
			json_u64(fp, "filtered_frees", sf.frees, &f2);
			json_u64(fp, "untracked_allocs", sf.untracked, &f2);
		} else {
			json_str(fp, "filtered_allocs", NULL, &f2);
			json_str(fp, "filtered_frees", NULL, &f2);
			json_str(fp, "untracked_allocs", NULL, &f2);
		}
	}
	json_str(fp, "resolver", o->sl ? o->resolver : NULL, &f2);
	json_key(fp, "lower_bounds", &f2);
	fputs(lost_total(r, o) ? "true" : "false", fp);
	fputs("}", fp);

	/* What the module recorded: only a trace whose metadata says so. */
	if (slab_ncov(slab)) {
		struct view_ctx v = { .r = r, .o = o, .slab = slab, .st = st };
		struct json_emit je = { .fp = fp, .first = false };

		if (report_coverage_table(&v, json_emit, &je))
			return -1;
	}

	json_key(fp, "totals", &first);
	f2 = true;
	fputs("{", fp);
	json_u64(fp, "allocs", t->allocs, &f2);
	json_u64(fp, "frees", t->frees, &f2);
	json_u64(fp, "failed_allocs", t->failed_allocs, &f2);
	json_u64(fp, "bytes_req", t->bytes_req, &f2);
	json_u64(fp, "bytes_alloc", t->bytes_alloc, &f2);
	json_u64(fp, "bytes_freed", t->bytes_freed, &f2);
	json_pct(fp, "frag_pct", rpt_frag(t->bytes_req, t->bytes_alloc), &f2);
	json_u64(fp, "cross_cpu_frees", t->cross_cpu_frees, &f2);
	json_u64(fp, "cross_node_allocs", t->cross_node_allocs, &f2);
	json_u64(fp, "untracked_frees", t->untracked_frees, &f2);
	json_u64(fp, "double_frees", t->double_frees, &f2);
	json_u64(fp, "implicit_frees", t->implicit_frees, &f2);
	json_u64(fp, "clamped_allocs", t->clamped_allocs, &f2);
	json_u64(fp, "probed_allocs", t->probed_allocs, &f2);
	json_u64(fp, "probed_frees", t->probed_frees, &f2);
	json_u64(fp, "kfree_cache_objects", t->kfree_cache_objects, &f2);
	json_u64(fp, "outstanding", t->outstanding, &f2);
	json_u64(fp, "outstanding_bytes", t->outstanding_bytes, &f2);
	json_key(fp, "net_bytes", &f2);
	fprintf(fp, "%lld", (long long)(t->bytes_alloc - t->bytes_freed));
	json_u64(fp, "lost", lost_total(r, o), &f2);
	json_u64(fp, "lost_marked", t->lost, &f2);
	json_u64(fp, "lost_unmarked", o->lost_unmarked, &f2);
	json_u64(fp, "lost_markers", t->lost_markers, &f2);
	json_key(fp, "lost_by_cpu", &f2);
	fputs("{", fp);
	{
		bool f3 = true;
		unsigned int c;

		for (c = 0; c < rpt_lost_ncpus(r); c++) {
			char k[16];

			if (!rpt_lost_on_cpu(r, c))
				continue;
			snprintf(k, sizeof(k), "%u", c);
			json_u64(fp, k, rpt_lost_on_cpu(r, c), &f3);
		}
	}
	fputs("}", fp);
	json_u64(fp, "page_allocs", t->page_allocs, &f2);
	json_u64(fp, "page_failed_allocs", t->page_failed, &f2);
	json_u64(fp, "page_frees", t->page_frees, &f2);
	json_u64(fp, "page_untracked_frees", t->page_untracked_frees, &f2);
	json_u64(fp, "page_bytes_alloc", t->page_bytes_alloc, &f2);
	json_u64(fp, "page_bytes_freed", t->page_bytes_freed, &f2);
	json_u64(fp, "page_outstanding", t->page_outstanding, &f2);
	json_u64(fp, "page_outstanding_bytes", t->page_outstanding_bytes, &f2);
	json_stack_totals(fp, r, &f2);
	fputs("}", fp);

	/*
	 * Call sites and caches whatever the view, then the errors and the
	 * objects outstanding; the per-address table with --alloc.
	 */
	{
		struct out_opts oc = *o;
		struct view_ctx v = { .r = r, .o = &oc, .slab = slab, .st = st };
		struct json_emit je = { .fp = fp, .first = false, .key = "callsites" };

		oc.view = VIEW_CALLER;
		if (o->view != VIEW_CALLER)
			oc.nsort = 0;
		if (report_main_table(&v, json_emit, &je))
			return -1;
		oc = *o;
		oc.view = VIEW_CACHE;
		if (o->view != VIEW_CACHE)
			oc.nsort = 0;
		/* -l N does not cut the caches (Documentation/report-json.md). */
		oc.lines = 0;
		je.key = NULL;
		if (report_main_table(&v, json_emit, &je))
			return -1;
		v.o = o;
		if (report_errors_table(&v, json_emit, &je) ||
		    report_outstanding_table(&v, json_emit, &je))
			return -1;
		je.key = "allocs";
		if (o->view == VIEW_ALLOC && report_main_table(&v, json_emit, &je))
			return -1;
	}
	if (o->xview) {
		struct view_ctx v = { .r = r, .o = o, .slab = slab, .st = st };
		struct json_emit je = { .fp = fp, .first = false };

		if (o->xview->tables(&v, json_emit, &je))
			return -1;
	}
	fputs("}\n", fp);
	return 0;
}

/* ---- CSV -------------------------------------------------------------------- */

static int print_csv(FILE *fp, const struct rpt *r, const struct out_opts *o,
		     const struct symtab *st, const struct rpt_slab *slab)
{
	struct view_ctx v = { .r = r, .o = o, .slab = slab, .st = st };
	struct csv_emit ce = { .fp = fp };

	if (o->xview)
		return o->xview->tables(&v, csv_emit, &ce);
	return report_main_table(&v, csv_emit, &ce);
}

/* ---- text --------------------------------------------------------------------- */

/* Writes what open_memstream() collected as a paragraph. 0, or -1 out of memory. */
static int para_close(FILE *fp, FILE *m, char **buf)
{
	if (fclose(m)) {
		free(*buf);
		return -1;
	}
	out_text_para(fp, *buf);
	free(*buf);
	return 0;
}

static bool how_seen(const char *how)
{
	return strcmp(how, "tracepoint") == 0 || strcmp(how, "kprobe") == 0 ||
	       strcmp(how, "kretprobe") == 0;
}

/*
 * The header's word on coverage: the paths whose events are not in the
 * trace and what missing them does to the numbers, or that the trace does
 * not say what it recorded. Nothing when every path was recorded.
 */
static int text_coverage(FILE *fp, const struct rpt_slab *slab)
{
	char *buf = NULL;
	size_t len = 0, i, n = 0;
	FILE *m;

	if (slab_ncov(slab) && !slab_nmissed(slab))
		return 0;
	m = open_memstream(&buf, &len);
	if (!m)
		return -1;
	if (!slab_ncov(slab)) {
		fputs("Not covered by this trace: the bulk and lock-free paths"
		      " (kmem_cache_alloc_bulk, kmem_cache_free_bulk with kfree_bulk and kfree_rcu's"
		      " batches, kfree_rcu's sheaves, kmalloc_nolock, kfree_nolock): its metadata does"
		      " not list what was recorded (kmemtrace.ko before trace format 1.1, or no"
		      " kmemtrace.meta).", m);
		return para_close(fp, m, &buf);
	}
	fputs("Not seen by this trace:", m);
	for (i = 0; i < slab_ncov(slab); i++) {
		const struct slab_cov *c = slab_cov(slab, i);

		if (!c->missed)
			continue;
		fprintf(m, "%s %s", n++ ? "." : "", c->path);
		if (how_seen(c->how))
			/* Hooked, but its probe let calls pass: some objects are missing. */
			fprintf(m, " (its %s missed %" PRIu64 " calls since the module was loaded);"
				" some", c->how, c->calls_missed);
		else if (*c->detail)
			fprintf(m, " (%s);", c->detail);
		else if (strcmp(c->how, "unseen") != 0)
			fprintf(m, " (%s);", *c->how ? c->how : "no HOW given");
		else
			fputc(';', m);
		fputs(c->kind == SLAB_PATH_FREE ? " objects it frees look outstanding" :
		      " objects it hands out look allocated before the trace", m);
	}
	fputc('.', m);
	return para_close(fp, m, &buf);
}

/*
 * The header's word on kmemtrace.ko's filter at the source: what it
 * recorded and, when the metadata counted it, what it left out; nothing
 * without a filter.
 */
static int text_src_filter(FILE *fp, const struct out_opts *o)
{
	struct src_filter sf;
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	src_filter_read(o->meta, &sf);
	if (!src_filter_on(&sf))
		return 0;
	m = open_memstream(&buf, &len);
	if (!m)
		return -1;
	fprintf(m, "Recorded at the source only: %s", sf.spec ? sf.spec : "(not said)");
	if (sf.spec_end && (!sf.spec || strcmp(sf.spec, sf.spec_end) != 0))
		fprintf(m, " (at the end: %s)", sf.spec_end);
	fputc('.', m);
	if (sf.counted)
		fprintf(m, " By kmemtrace.ko's filter, not recorded: %" PRIu64 " allocations and %"
			PRIu64 " frees; %" PRIu64 " allocations recorded without their free (the"
			" tracking table was full: they look outstanding).", sf.allocs, sf.frees,
			sf.untracked);
	return para_close(fp, m, &buf);
}

/*
 * Why a double free marked ? may be none: the allocation paths of its
 * objects the trace misses. And what still makes any double free doubtful:
 * lost records. 0, or -1 out of memory.
 */
static int text_uncertain(FILE *fp, const struct rpt *r, const struct out_opts *o,
			  const struct rpt_slab *slab, bool uncertain)
{
	char *buf = NULL;
	size_t len = 0, i, n = 0;
	FILE *m;

	for (i = 0; i < slab_ncov(slab); i++)
		n += slab_cov(slab, i)->missed && slab_cov(slab, i)->kind != SLAB_PATH_FREE;
	if (uncertain) {
		m = open_memstream(&buf, &len);
		if (!m)
			return -1;
		if (!n) {
			fputs("? of kmem_cache objects: the trace does not say it recorded"
			      " kmem_cache_alloc_bulk() (see above), so an allocation may have come"
			      " between the two frees (the maple tree does this).", m);
		} else {
			fputs("? the trace misses", m);
			for (i = 0, n = 0; i < slab_ncov(slab); i++) {
				const struct slab_cov *c = slab_cov(slab, i);

				if (c->missed && c->kind != SLAB_PATH_FREE)
					fprintf(m, "%s %s()", n++ ? "," : "", c->path);
			}
			fputs(" (see above), which hands out such objects: an allocation may have"
			      " come between the two frees (the maple tree's bulk allocations do"
			      " this).", m);
		}
		if (para_close(fp, m, &buf))
			return -1;
	}
	if (lost_total(r, o) && rpt_totals(r)->double_frees)
		out_text_para(fp, "Records were lost: a lost allocation between two frees would make"
			  " the second one legitimate.");
	return 0;
}

/* The errors table, and under it the footnotes on what makes some uncertain. */
static int text_errors(FILE *fp, const struct rpt *r, const struct out_opts *o,
		       const struct symtab *st, const struct rpt_slab *slab)
{
	struct view_ctx v = { .r = r, .o = o, .slab = slab, .st = st };
	struct text_emit te = { .fp = fp, .wide = o->wide };
	bool uncertain = false;
	size_t i;

	if (report_errors_table(&v, text_emit, &te))
		return -1;
	if (!rpt_nerrors(r))
		return 0;
	for (i = 0; i < rpt_nerrors(r); i++)
		uncertain |= rpt_error(r, i)->uncertain;
	return text_uncertain(fp, r, o, slab, uncertain);
}

static void text_summary(FILE *fp, const struct rpt *r, const struct out_opts *o)
{
	const struct rpt_totals *t = rpt_totals(r);
	char b[40];

	fputs("\nSUMMARY\n=======\n", fp);
	fprintf(fp, "Allocations            : %" PRIu64 " (failed: %" PRIu64 ")\n", t->allocs,
		t->failed_allocs);
	fprintf(fp, "Frees                  : %" PRIu64 " (of objects allocated before the trace:"
		" %" PRIu64 ")\n", t->frees, t->untracked_frees);
	fprintf(fp, "Bytes requested        : %" PRIu64 "\n", t->bytes_req);
	fprintf(fp, "Bytes allocated        : %" PRIu64 "\n", t->bytes_alloc);
	fprintf(fp, "Bytes freed            : %" PRIu64 "\n", t->bytes_freed);
	fprintf(fp, "Outstanding at the end : %" PRIu64 " objects, %" PRIu64 " bytes\n",
		t->outstanding, t->outstanding_bytes);
	fprintf(fp, "Internal fragmentation : %.3f%%\n", rpt_frag(t->bytes_req, t->bytes_alloc));
	fprintf(fp, "Cross-CPU frees        : %" PRIu64 "\n", t->cross_cpu_frees);
	fprintf(fp, "Cross-node allocations : %" PRIu64 "\n", t->cross_node_allocs);
	if (t->clamped_allocs)
		fprintf(fp, "Sizes over 4 GiB       : %" PRIu64 " allocations (counted as 4 GiB - 1)\n",
			t->clamped_allocs);
	if (t->implicit_frees)
		fprintf(fp, "Addresses reused unfreed: %" PRIu64 " (their free was not traced)\n",
			t->implicit_frees);
	if (t->kmalloc_dup_events)
		fprintf(fp, "Traced twice           : %" PRIu64 " large kmallocs (duplicate events "
			"not counted; %" PRIu64 " of them failed)\n", t->kmalloc_dup_events,
			t->kmalloc_dup_failed);
	if (t->probed_allocs || t->probed_frees)
		fprintf(fp, "Seen by probes         : %" PRIu64 " allocations, %" PRIu64
			" frees (bulk and lock-free paths)\n", t->probed_allocs, t->probed_frees);
	if (t->kfree_cache_objects && (rpt_flags(r) & RPT_KFREE_TAKES_CACHE_OBJS))
		fprintf(fp, "kfree() of cache objects: %" PRIu64 " (this kernel's kfree() takes them)\n",
			t->kfree_cache_objects);
	if (t->page_allocs || t->page_frees)
		fprintf(fp, "Page allocations       : %" PRIu64 " (failed %" PRIu64 "), %" PRIu64
			" bytes; frees %" PRIu64 " (untracked %" PRIu64 "); outstanding %" PRIu64
			" (%" PRIu64 " bytes)\n", t->page_allocs, t->page_failed,
			t->page_bytes_alloc, t->page_frees, t->page_untracked_frees,
			t->page_outstanding, t->page_outstanding_bytes);
	if (rpt_has_stacks(r))
		fprintf(fp, "Kernel stacks          : %zu distinct; %" PRIu64 " events without a stack\n"
			"                         (%" PRIu64 " marked, %" PRIu64
			" naming a stack not in it)\n", rpt_nstacks(r), without_stack(r),
			t->no_stack_allocs, t->unknown_stack_allocs);
	if (t->other_no_stack + t->other_unknown_stack)
		fprintf(fp, "                         and %" PRIu64 " frees or page events without "
			"one\n", t->other_no_stack + t->other_unknown_stack);
	if (t->kmalloc_dup_no_stack)
		fprintf(fp, "%25sand %" PRIu64 " duplicate kmalloc events without one\n", "",
			t->kmalloc_dup_no_stack);
	if (rpt_has_free_stacks(r))
		fprintf(fp, "%25s%" PRIu64 " frees with a stack (--stacks: frees by stack)\n", "",
			t->stack_frees);
	fprintf(fp, "Records lost           : %" PRIu64 "\n", lost_total(r, o));
	out_fmt_secs(b, sizeof(b), t->last_ts > t->first_ts ? t->last_ts - t->first_ts : 0);
	fprintf(fp, "Records read           : %" PRIu64 " over %s\n", t->records, b);
	if (o->unknown_records)
		fprintf(fp, "Unknown records skipped: %" PRIu64 " (written by a newer version)\n",
			o->unknown_records);
}

/* ---- a rotated trace's window ------------------------------------------------ */

/*
 * What a checkpoint's sums cannot give (they count allocations and frees
 * by key, not each event): these views see only the records kept. The
 * errors count the folded records too: an odd address's records stay whole.
 */
const char *const report_window_only[REPORT_WINDOW_ONLY_N] = {
	"lifetimes", "timelines", "alloc", "intervals",
};

/* The header's lines of a rotated trace (text). */
static void text_window(FILE *fp, const struct rpt_totals *t, const struct out_opts *o)
{
	char cut[32];

	if (!o->rotated)
		return;
	out_fmt_secs(cut, sizeof(cut), o->cut_ns > t->first_ts ? o->cut_ns - t->first_ts : 0);
	fprintf(fp, "Rotated: records before +%s (cut) were folded into a checkpoint:\n"
		"  %" PRIu64 " records of dropped segments, folded, not lost (segments %" PRIu32
		"-%" PRIu32 " kept).\n"
		"  Call sites, caches, totals, stacks and errors count them (a second free\n"
		"  after the cut of an object freed before it shows as untracked); lifetimes,\n"
		"  timelines, the per-address view (--alloc) and intervals are of the kept\n"
		"  window only.\n", cut,
		o->folded_records, o->first_segment, o->last_segment);
	if (t->sum_no_cache)
		fprintf(fp, "  %" PRIu64 " folded kmallocs of several sizes in one sum are in no "
			"kmalloc-N cache.\n", t->sum_no_cache);
}

static int print_text(FILE *fp, const struct rpt *r, const struct out_opts *o,
		      const struct symtab *st, const struct rpt_slab *slab)
{
	const struct rpt_totals *t = rpt_totals(r);
	uint64_t lost = lost_total(r, o);
	const char *kr = meta_get(o->meta, "kernel_release");
	const char *mach = meta_get(o->meta, "machine");
	const char *host = meta_get(o->meta, "hostname");

	if (lost) {
		unsigned int c;
		int col = 0;

		fprintf(fp, "WARNING: %" PRIu64 " records were lost: every number below is a "
			"lower bound.\n", lost);
		for (c = 0; c < rpt_lost_ncpus(r); c++) {
			char item[48];
			int len;

			if (!rpt_lost_on_cpu(r, c))
				continue;
			len = snprintf(item, sizeof(item), "cpu%u %" PRIu64, c,
				       rpt_lost_on_cpu(r, c));
			if (!col)
				col = fprintf(fp, "  lost on");
			else if (col + 2 + len > 78)
				col = fprintf(fp, ",\n   ") - 1;
			else
				col += fprintf(fp, ",");
			col += fprintf(fp, " %s", item);
		}
		if (col)
			fputc('\n', fp);
		if (o->lost_unmarked)
			fprintf(fp, "  lost at the end of the trace (only the module's counter knows): %"
				PRIu64 "\n", o->lost_unmarked);
		fputc('\n', fp);
	}
	fprintf(fp, "Trace: %s\n  %zu file%s, %s-endian %u-bit", o->trace, o->nfiles,
		o->nfiles == 1 ? "" : "s", o->big_endian ? "big" : "little", o->word_bits);
	if (kr)
		fprintf(fp, "; kernel %s", kr);
	if (mach)
		fprintf(fp, " %s", mach);
	if (host)
		fprintf(fp, " on %s", host);
	fputc('\n', fp);
	if (o->filters)
		fprintf(fp, "Filters: %s\n", o->filters);
	if (text_src_filter(fp, o))
		return -1;
	if (o->truncated_bytes)
		fprintf(fp, "Ignored a partial record at the end: %" PRIu64 " bytes\n",
			o->truncated_bytes);
	text_window(fp, t, o);
	if (text_coverage(fp, slab))
		return -1;
	if (!t->seen_any)
		fputs("The trace holds no records.\n", fp);
	fputc('\n', fp);
	if (o->xview) {
		struct view_ctx v = { .r = r, .o = o, .slab = slab, .st = st };
		struct text_emit te = { .fp = fp, .wide = o->wide };

		if (o->xview->tables(&v, text_emit, &te))
			return -1;
	} else {
		struct view_ctx v = { .r = r, .o = o, .slab = slab, .st = st };
		struct text_emit te = { .fp = fp, .wide = o->wide };

		if (report_main_text_table(&v, text_emit, &te))
			return -1;
	}
	if (text_errors(fp, r, o, st, slab))
		return -1;
	{
		struct view_ctx v = { .r = r, .o = o, .slab = slab, .st = st };
		struct text_emit te = { .fp = fp, .wide = o->wide };

		if (report_outstanding_table(&v, text_emit, &te))
			return -1;
	}
	text_summary(fp, r, o);
	return 0;
}

int report_print(FILE *fp, const struct rpt *r, const struct out_opts *o)
{
	struct rpt_slab *slab = slab_info_new(o->meta);
	struct symtab st = { 0 };
	int ret = -1;

	if (!slab || symtab_add_report(&st, r))
		goto out;
	/* Every per-address site is also a call site: already in. */
	if (o->xview && o->xview->syms) {
		struct view_ctx v = { .r = r, .o = o, .slab = slab };

		if (o->xview->syms(&v, &st))
			goto out;
	}
	if (symtab_resolve(&st, o))
		goto out;
	if (o->fmt == FMT_JSON)
		ret = print_json(fp, r, o, &st, slab);
	else if (o->fmt == FMT_CSV)
		ret = print_csv(fp, r, o, &st, slab);
	else
		ret = print_text(fp, r, o, &st, slab);
out:
	if (ret)
		errno = ENOMEM;
	symtab_free(&st);
	slab_info_free(slab);
	return ret;
}

/* ---- --raw ---------------------------------------------------------------- */

void raw_print_legend(FILE *fp)
{
	fputs("# REL_S ABS_NS CPU SEQ TYPE FIELDS...; events: call_site ptr cache_id bytes_req "
	      "bytes_alloc gfp node cpu_node pid flags [symbol]\n", fp);
}

/* A CPU's last stack slot: its stack, the index after it and its last frame. */
struct raw_slot_end {
	uint64_t last_frame;
	uint16_t stack_id;
	uint16_t next;
	bool valid;
};

/* One entry for every CPU a record can name, so that no record needs memory. */
struct raw_ctx {
	struct raw_slot_end cpu[UINT16_MAX + 1];
};

struct raw_ctx *raw_ctx_new(void)
{
	return calloc(1, sizeof(struct raw_ctx));
}

void raw_ctx_free(struct raw_ctx *c)
{
	free(c);
}

/*
 * A stack slot's frames as the stacks view names them. The first of a slot
 * after the first is named with the frame before it, the last of the CPU's
 * slot before, when that slot was this stack's and ended right before it.
 */
static void raw_stack_frames(FILE *fp, struct raw_ctx *c, const struct kmt_stack *k,
			     const struct ksyms *ks)
{
	uint64_t fr[KMT_STACK_SLOT_FRAMES + 1];
	struct raw_slot_end *end = c ? &c->cpu[k->cpu] : NULL;
	unsigned int i, n = k->nframes < KMT_STACK_SLOT_FRAMES ? k->nframes : KMT_STACK_SLOT_FRAMES;
	unsigned int before = 0;
	char sym[SYM_LEN];

	if (end && end->valid && k->first && end->stack_id == k->stack_id && end->next == k->first) {
		fr[0] = end->last_frame;
		before = 1;
	}
	for (i = 0; i < n; i++)
		fr[before + i] = k->frames[i];
	for (i = 0; ks && i < n; i++)
		fprintf(fp, " %s", ksyms_format_stack(ks, fr, before + i, sym, sizeof(sym)));
	if (end) {
		end->valid = n > 0;
		end->stack_id = k->stack_id;
		end->next = (uint16_t)(k->first + n);
		end->last_frame = n ? k->frames[n - 1] : 0;
	}
}

void raw_print(FILE *fp, struct raw_ctx *c, const union kmt_rec *rec, uint64_t t0,
	       const struct ksyms *ks, const struct gfp_names *gfp)
{
	uint64_t ts = (uint64_t)rec->c.timestamp, rel = ts >= t0 ? ts - t0 : 0;
	char sym[SYM_LEN];

	fprintf(fp, "%" PRIu64 ".%09" PRIu64 " %" PRIu64 " %u %u %s", rel / 1000000000u,
		rel % 1000000000u, ts, rec->c.cpu, rec->c.seq, kmt_rec_type_name(rec->c.type));
	switch (rec->c.type) {
	case KMT_REC_KMALLOC:
	case KMT_REC_CACHE_ALLOC:
	case KMT_REC_PAGE_ALLOC:
	case KMT_REC_KFREE:
	case KMT_REC_CACHE_FREE:
	case KMT_REC_PAGE_FREE: {
		const struct kmt_event *e = &rec->ev;
		char names[GFP_NAMES_LEN];

		fprintf(fp, " call_site=0x%" PRIx64 " ptr=0x%" PRIx64 " cache_id=0x%" PRIx64
			" bytes_req=%u bytes_alloc=%u gfp=%s node=%d cpu_node=%d pid=%u"
			" flags=0x%x", (uint64_t)e->call_site, (uint64_t)e->ptr,
			(uint64_t)e->cache_id, e->bytes_req, e->bytes_alloc,
			gfp_names_format(gfp, e->gfp_flags, names, sizeof(names)), e->node,
			e->cpu_node, e->pid, e->flags);
		if (e->stack_id)
			fprintf(fp, " stack_id=%u", e->stack_id);
		if (ks)
			fprintf(fp, " %s", ksyms_format_ret(ks, e->call_site, sym, sizeof(sym)));
		break;
	}
	case KMT_REC_CACHE_DESC: {
		char name[KMT_CACHE_NAME_LEN + 1];

		memcpy(name, rec->cache.name, KMT_CACHE_NAME_LEN);
		name[KMT_CACHE_NAME_LEN] = '\0';
		fprintf(fp, " cache_id=0x%" PRIx64 " object_size=%u size=%u flags=0x%x name=",
			(uint64_t)rec->cache.cache_id, rec->cache.object_size, rec->cache.size,
			rec->cache.flags);
		json_string(fp, name);
		break;
	}
	case KMT_REC_STACK: {
		const struct kmt_stack *k = &rec->stack;
		unsigned int i;

		fprintf(fp, " stack_id=%u depth=%u first=%u nframes=%u flags=0x%x frames=", k->stack_id,
			k->depth, k->first, k->nframes, k->flags);
		for (i = 0; i < k->nframes && i < KMT_STACK_SLOT_FRAMES; i++)
			fprintf(fp, "%s0x%" PRIx64, i ? "," : "", (uint64_t)k->frames[i]);
		raw_stack_frames(fp, c, k, ks);
		break;
	}
	case KMT_REC_LOST:
		fprintf(fp, " count=%" PRIu64 " first_lost_ns=%" PRIu64 " total_dropped=%" PRIu64
			" flags=0x%x", (uint64_t)rec->lost.count, (uint64_t)rec->lost.first_lost_ns,
			(uint64_t)rec->lost.total_dropped, rec->lost.flags);
		break;
	case KMT_REC_SUM: {
		const struct kmt_sum *s = &rec->sum;

		fprintf(fp, " kind=%s alloc_type=%s call_site=0x%" PRIx64 " cache_id=0x%" PRIx64
			" count=%u bytes_req=%" PRIu64 " bytes_alloc=%" PRIu64 " cross_cpu=%u"
			" cross_node=%u flags=0x%x", s->sum_kind == KMT_SUM_FAILED ? "failed" : "freed",
			kmt_rec_type_name(s->alloc_type), (uint64_t)s->call_site,
			(uint64_t)s->cache_id, s->count, (uint64_t)s->bytes_req,
			(uint64_t)s->bytes_alloc, s->cross_cpu, s->cross_node, s->flags);
		if (s->stack_id)
			fprintf(fp, " stack_id=%u", s->stack_id);
		if (ks)
			fprintf(fp, " %s", ksyms_format_ret(ks, s->call_site, sym, sizeof(sym)));
		break;
	}
	default:
		fprintf(fp, " type=%u flags=0x%x", rec->c.type, rec->c.flags);
		break;
	}
	fputc('\n', fp);
}
