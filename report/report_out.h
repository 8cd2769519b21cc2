/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report_out.h - kmemtrace-report's output: the text tables (80 columns),
 * the stable JSON document (Documentation/report-json.md), CSV, and the
 * one-line-per-record --raw dump. Symbols are resolved here, once per
 * address, never per event.
 */
#ifndef REPORT_OUT_H
#define REPORT_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kmt_reader.h"
#include "out_table.h"
#include "report_core.h"
#include "report_meta.h"
#include "sym_kallsyms.h"
#include "sym_srcline.h"

enum out_view { VIEW_CALLER, VIEW_ALLOC, VIEW_CACHE };
enum out_fmt { FMT_TEXT, FMT_JSON, FMT_CSV };

enum sort_key {
	SK_FRAG, SK_HIT, SK_BYTES, SK_REQ, SK_CALLSITE, SK_PTR, SK_PINGPONG, SK_FREES,
	SK_AGE, SK_OUT, SK_FAILED, SK_XNODE, SK_NAME, SK_LIVE,
};

#define SORT_MAX	8

struct out_opts {
	enum out_view view;
	enum out_fmt fmt;
	enum sort_key sort[SORT_MAX];
	size_t nsort;			/* 0: the view's default */
	long lines;			/* rows per table; -1: default (text 20, others all); 0: all */
	bool wide;			/* text: no truncation, file:line in a column */
	bool raw_ip;			/* addresses, not symbols */

	/* What the header says about the input. */
	const char *trace;		/* the directory, or the first file */
	size_t nfiles;
	unsigned int word_bits;
	bool big_endian;
	uint32_t page_size;
	uint64_t unknown_records;	/* slots of unknown type the reader skipped */
	uint64_t lost_unmarked;		/* drops the metadata knows of beyond LOST records */
	uint64_t truncated_bytes;	/* partial records ignored (--allow-truncated) */
	const char *filters;		/* human description of the filters, or NULL */
	const struct rpt_meta *meta;

	/*
	 * A registered view (out_table.h) selected in place of the main
	 * table, or NULL; view_args are its options, of the type its
	 * header declares.
	 */
	const struct report_view *xview;
	const void *view_args;

	const struct ksyms *ks;		/* NULL: raw addresses */
	struct srcline *sl;		/* NULL: no file:line */
	const char *resolver;		/* "dw" or "bfd" when sl */
};

/* Parses "frag,hit,bytes": 0, or -1 with a message naming the bad key. */
int sort_parse(const char *s, enum sort_key *keys, size_t *n, char *err, size_t errlen);
/* The list of keys for --help. */
extern const char sort_keys_help[];

/* Writes the whole report. 0, -1 out of memory (errno ENOMEM). */
int report_print(FILE *fp, const struct rpt *r, const struct out_opts *o);

/*
 * --raw: one line for any record, all its fields; t0 is the trace's first
 * timestamp (times are printed relative to it and absolute).
 */
void raw_print(FILE *fp, const union kmt_rec *rec, uint64_t t0, const struct ksyms *ks);
/* The column legend printed before the records. */
void raw_print_legend(FILE *fp);

#endif /* REPORT_OUT_H */
