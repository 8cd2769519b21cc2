/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * out_table.h - the one table model every output format renders: a view
 * names its columns once and answers cells by (row, column); one writer
 * per format (text, CSV, JSON, HTML) walks any view's tables. A new view
 * is one view_*.c file and a line in report_views[] (report_views.c).
 */
#ifndef OUT_TABLE_H
#define OUT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct rpt;
struct out_opts;
struct rpt_slab;
struct symtab;

enum col_kind {
	COL_STR,	/* s; NULL: empty in text and CSV, null in JSON */
	COL_U64,	/* u */
	COL_I64,	/* i */
	COL_PCT,	/* d, a percentage: "12.3%" in text, 3 decimals elsewhere */
	COL_NS,		/* u, a duration in ns: "1.25ms" in text, ns elsewhere */
	COL_ADDR,	/* u, an address: "0x..." (a JSON string: 64-bit safe) */
	COL_STRV,	/* sv[n]: text, one per line under the row; CSV, joined by ';' */
	COL_U64V,	/* uv[n]: text, on a line under the row; CSV, joined by ' ' */
};

/* out_col.flags */
#define OC_LEFT		0x1u	/* text: left-aligned (strings are by default) */
#define OC_NO_TEXT	0x2u	/* machine formats only (CSV, JSON) */
#define OC_NO_CSV	0x4u	/* not in CSV (a list CSV cannot hold usefully) */
#define OC_NO_JSON	0x8u	/* text only (a rendering of figures JSON holds otherwise) */

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
};

/* Text: heading, note, column header and rows, 80 columns unless wide. */
void out_text_table(FILE *fp, const struct out_table *t, bool wide);
/* CSV: a header row of keys, then the rows (RFC 4180 quoting). */
void out_csv_table(FILE *fp, const struct out_table *t);
/*
 * JSON: "key":[{...},...] as a member of the object being written; a
 * comma first unless *first, which is then cleared.
 */
void out_json_table(FILE *fp, const struct out_table *t, bool *first);

/* ---- strings every writer needs -------------------------------------------- */

/* Writes s as a JSON string (quoted, escaped, valid UTF-8). */
void json_string(FILE *fp, const char *s);
/* A CSV field (RFC 4180) in valid UTF-8; NULL writes nothing. */
void out_csv_field(FILE *fp, const char *s);
/* A duration for people: 950ns, 12.5us, 3.25ms, 1.500s (COL_NS in text). */
void out_fmt_ns(char *buf, size_t len, uint64_t ns);
/* text wrapped at spaces to 78 columns, continuation lines indented by two. */
void out_text_para(FILE *fp, const char *text);

/* ---- symbols, resolved once per address after the trace was read ------------ */

struct symres {
	uint64_t addr;
	char *sym;		/* "function+0xoff [module]", or "0x..." */
	char *file;		/* NULL if unknown */
	unsigned int line;
};

/* Adds an address to resolve; 0 or -1 (memory). Duplicates are fine. */
int symtab_add(struct symtab *t, uint64_t addr);
/* The resolution of an address added before symtab_resolve(), or NULL. */
const struct symres *symtab_get(const struct symtab *t, uint64_t addr);

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

/* The registered views, NULL-terminated (report_views.c). */
extern const struct report_view *const report_views[];
/* By name, or NULL. */
const struct report_view *report_view_find(const char *name);

#endif /* OUT_TABLE_H */
