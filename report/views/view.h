/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * view.h - what a view is: the report's options, the one table model every
 * output format renders (a view names its columns once and answers cells
 * by row and column), and the registry of views. Views build tables from
 * the analysis (core/) with names from the symbolizers (sym/); the writers
 * (writers/) walk any view's tables. A new view is one views/view_*.c file
 * and a line in report_views[] (views/view_registry.c).
 */
#ifndef VIEW_H
#define VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/report_core.h"
#include "core/report_gfp.h"
#include "core/report_meta.h"
#include "sym/sym_kallsyms.h"
#include "sym/sym_srcline.h"
#include "views/symtab.h"

struct rpt_slab;
struct symtab;
struct report_view;

/* ---- what the user asked for ---------------------------------------------------- */

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
	uint64_t start_mono_ns, start_real_ns;	/* the file header's: wall time of a timestamp */
	uint64_t unknown_records;	/* slots of unknown type the reader skipped */
	uint64_t lost_unmarked;		/* drops the metadata knows of beyond LOST records */
	uint64_t truncated_bytes;	/* partial records ignored (--allow-truncated) */
	/*
	 * A rotated trace (kmemtraced --max-size, 1.3): what came before
	 * cut_ns (absolute ns) was folded into its checkpoint, of
	 * folded_records records of the dropped segments (their headers'
	 * dropped_records); segments first_segment..last_segment were read.
	 */
	bool rotated;
	uint64_t cut_ns, folded_records;
	uint32_t first_segment, last_segment;
	const char *filters;		/* human description of the filters, or NULL */
	const struct rpt_meta *meta;
	/* The traced kernel's GFP flag names (tracepoint_formats); NULL or none: hex. */
	const struct gfp_names *gfp;

	/*
	 * A registered view (below) selected in place of the main
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

/* ---- tables --------------------------------------------------------------------- */

enum col_kind {
	COL_STR,	/* s; NULL: empty in text and CSV, null in JSON */
	COL_U64,	/* u */
	COL_I64,	/* i */
	COL_PCT,	/* d, a percentage: "12.3%" in text, 3 decimals elsewhere */
	COL_NS,		/* u, a duration in ns: "1.25ms" in text, ns elsewhere */
	COL_ADDR,	/* u, an address: "0x..." (a JSON string: 64-bit safe) */
	COL_STRV,	/* sv[n]: text, one per line under the row; CSV, joined by ';' */
	COL_U64V,	/* uv[n]: text, on a line under the row; CSV, joined by ' ' */
	COL_FIX3,	/* u, thousandths: "12.345" in every format (the view rounds, once) */
	COL_BOOL,	/* u, 0 or 1: false or true */
};

/* out_col.flags */
#define OC_LEFT		0x1u	/* text: left-aligned (strings are by default) */
#define OC_NO_TEXT	0x2u	/* machine formats only (CSV, JSON) */
#define OC_NO_CSV	0x4u	/* not in CSV (a list CSV cannot hold usefully) */
#define OC_NO_JSON	0x8u	/* text only (a rendering of figures JSON holds otherwise) */
#define OC_SIGN		0x10u	/* text: a positive number has its '+' (a change, not a count) */
#define OC_CUT		0x20u	/* text: cut to the column's width, never on a line of its own */
#define OC_RIGHT	0x40u	/* text: a string right-aligned, as numbers are */
#define OC_UNDER	0x80u	/* text: s on a line of its own under the row, as is; null: none */
#define OC_OMIT_NULL	0x100u	/* JSON: no key at all when null (file and line when known) */
#define OC_WIDE		0x200u	/* text: only with --wide */
#define OC_NO_PAD	0x400u	/* text: not padded to its width (a last column: no trailing blanks) */
/* text: n (1 to 15) spaces before it, whatever the table's gap */
#define OC_GAP(n)	((unsigned int)(n) << 12)
#define OC_GAP_OF(f)	(((f) >> 12) & 0xfu)

struct out_col {
	const char *key;	/* CSV header and JSON key: lower_snake_case */
	const char *head;	/* text header, short; NULL: key */
	enum col_kind kind;
	int width;		/* text width; 0: as wide as the widest cell */
	unsigned int flags;	/* OC_* */
};

struct out_cell {
	union {
		const char *s;
		uint64_t u;
		int64_t i;
		double d;
		const char *const *sv;
		const uint64_t *uv;
	};
	size_t n;		/* entries of sv or uv */
	bool null;		/* no value: empty in text and CSV, null in JSON */
};

/*
 * How the text writer lays a table out, where it is not the usual
 * heading "Title (N):", two spaces between columns, a rule under the
 * header and "  none" for no rows: tables whose text layout predates the
 * model (the interval screen that kmemtrace-top and --interval share)
 * keep their bytes. All zero: the usual layout.
 */
struct out_text_layout {
	int gap;		/* spaces between columns; 0: 2 */
	int rule;		/* dashes under the header: 0 as wide as it, -1 none, N that many */
	unsigned int flags;	/* OT_* */
	const char *none;	/* written instead of the whole table when it has no rows */
	const char *more;	/* after "  ... N more"; NULL: " (-l 0 shows all)" */
};

#define OT_TITLE_LINE	0x1u	/* the heading is the title as it is, without "(N):" */
#define OT_BLANK_BEFORE	0x2u	/* an empty line before the heading */
#define OT_NO_BLANK_AFTER 0x4u	/* no empty line after the rows (a footnote may follow) */
#define OT_HEADER_EMPTY	0x8u	/* no rows: the column header all the same, not "none" */

/*
 * A table: its rows are answered by cell(), which fills *out (zeroed
 * before each call) for row < nrows. Pointers it returns stay valid until
 * the writer is done with the table.
 */
struct out_table {
	const char *key;	/* JSON member holding the rows; CSV: the view's name */
	const char *title;	/* text heading */
	const char *note;	/* text: a paragraph under the heading, or NULL */
	const struct out_col *cols;
	size_t ncols;
	size_t nrows;		/* rows written */
	size_t total;		/* rows before the --lines limit (text: "N more") */
	void (*cell)(const void *ctx, size_t row, size_t col, struct out_cell *out);
	const void *ctx;
	const struct out_text_layout *text;	/* NULL: the usual layout */
};

/* A duration for people: 950ns, 12.5us, 3.25ms, 1.500s (COL_NS in text). */
void out_fmt_ns(char *buf, size_t len, uint64_t ns);
/* "total/per": bytes and bytes per allocation of n (0 when none). */
void out_fmt_per(char *buf, size_t len, uint64_t total, uint64_t n);
/* Seconds with microseconds: 1.250000s (the text report's ages and durations). */
void out_fmt_secs(char *buf, size_t len, uint64_t ns);

/* ---- views ------------------------------------------------------------------ */

/* What a view builds its tables from. */
struct view_ctx {
	const struct rpt *r;
	const struct out_opts *o;
	const struct rpt_slab *slab;
	const struct symtab *st;	/* NULL while the view lists its addresses */
};

typedef int (*table_emit_fn)(const struct out_table *t, void *arg);

/*
 * A view selected by a kmemtrace-report option (--stacks, --lifetimes,
 * ...). Text: its tables replace the main table, and the errors,
 * outstanding objects and summary follow. JSON: the whole document, with
 * the view's tables as members after "totals". CSV: its tables, each a
 * header row and rows, separated by an empty line.
 */
struct report_view {
	const char *name;	/* the option's name, "stacks" */
	/* Adds every address its tables will name to t. 0 or -1 (memory). */
	int (*syms)(const struct view_ctx *v, struct symtab *t);
	/* Calls emit for each table in order; 0, -1 (memory) or emit's nonzero. */
	int (*tables)(const struct view_ctx *v, table_emit_fn emit, void *arg);
};

/* The registered views, NULL-terminated (views/view_registry.c). */
extern const struct report_view *const report_views[];
/* By name, or NULL. */
const struct report_view *report_view_find(const char *name);

#endif /* VIEW_H */
