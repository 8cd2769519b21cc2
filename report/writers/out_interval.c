// SPDX-License-Identifier: GPL-2.0-only
/*
 * out_interval.c - the --interval document: the table of each interval
 * through the writers, and what is not a table around them (the JSON
 * document's head and each interval's object, whose figures are one
 * interval's, not rows of a table).
 */
#include <inttypes.h>

#include "writers/out_interval.h"
#include "writers/out_table.h"

int ivl_doc_begin(FILE *fp, enum out_fmt fmt, const struct ivl_opts *vo,
		  const struct ivl_out *o, const char *trace)
{
	struct ivl_table none = { 0 };
	struct ivl_tab v;
	int ret = 0;

	if (fmt == FMT_JSON) {
		fputs("{\"schema_version\":1,\"view\":\"interval\",\"trace\":{\"path\":", fp);
		json_string(fp, trace);
		fprintf(fp, "},\"interval_ns\":%" PRIu64 ",\"by\":\"%s\",\"intervals\":[",
			vo->interval_ns, vo->by == IVL_BY_SITE ? "callsite" :
			vo->by == IVL_BY_STACK ? "stack" : "cache");
	} else if (fmt == FMT_CSV) {
		/* One header for every interval's rows: the columns of a table without rows. */
		ret = ivl_tab_init(&v, &none, o);
		if (!ret)
			out_csv_header(fp, &v.t);
		ivl_tab_free(&v);
	}
	return ret;
}

int ivl_doc_table(FILE *fp, enum out_fmt fmt, const struct ivl_table *t,
		  const struct ivl_out *o, bool first)
{
	struct ivl_tab v;
	bool later = false;

	if (ivl_tab_init(&v, t, o)) {
		ivl_tab_free(&v);
		return -1;
	}
	if (fmt == FMT_JSON) {
		fprintf(fp, "%s{\"index\":%" PRIu64 ",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
			",\"records\":%" PRIu64 ",\"lost\":%" PRIu64 ",\"active\":%zu",
			first ? "" : ",", t->index, t->start_ns, t->end_ns, t->records, t->lost,
			t->nactive);
		if (o->by == IVL_BY_STACK)
			fprintf(fp, ",\"allocs_without_stack\":%" PRIu64, t->unstacked);
		fputs(",\"total\":", fp);
		out_json_row(fp, &v.total, 0);
		out_json_table(fp, &v.t, &later);
		fputc('}', fp);
	} else if (fmt == FMT_CSV) {
		out_csv_rows(fp, &v.t);
	} else {
		out_text_table(fp, &v.t, false);
	}
	ivl_tab_free(&v);
	return 0;
}

void ivl_doc_end(FILE *fp, enum out_fmt fmt)
{
	if (fmt == FMT_JSON)
		fputs("]}\n", fp);
}
