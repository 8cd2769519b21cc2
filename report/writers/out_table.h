/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * out_table.h - the writers of the table model (views/view.h): one per
 * format, each rendering any view's tables (out_text.c, out_csv.c,
 * out_json.c; out_html.c for the page), and what they share (out_common.c).
 */
#ifndef OUT_TABLE_H
#define OUT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "views/view.h"

/* Text: heading, note, column header and rows, 80 columns unless wide. */
void out_text_table(FILE *fp, const struct out_table *t, bool wide);
/*
 * The same in pieces, for a screen that sets them apart (kmemtrace-top
 * shows the header in reverse video and as many rows as fit): the
 * heading (with the note), the column widths (malloc'ed, one per column;
 * NULL out of memory, and the pieces take NULL: unaligned), the column
 * header with its rule, and one row.
 */
void out_text_heading(FILE *fp, const struct out_table *t);
int *out_text_widths(const struct out_table *t, bool wide);
void out_text_header(FILE *fp, const struct out_table *t, const int *w);
void out_text_row(FILE *fp, const struct out_table *t, size_t row, const int *w, bool wide);
/* CSV: a header row of keys, then the rows (RFC 4180 quoting). */
void out_csv_table(FILE *fp, const struct out_table *t);
/* The two apart: a document of several tables under one header (--interval). */
void out_csv_header(FILE *fp, const struct out_table *t);
void out_csv_rows(FILE *fp, const struct out_table *t);
/*
 * JSON: "key":[{...},...] as a member of the object being written; a
 * comma first unless *first, which is then cleared.
 */
void out_json_table(FILE *fp, const struct out_table *t, bool *first);
/* One row as an object {...}: a table nested in a document's own objects. */
void out_json_row(FILE *fp, const struct out_table *t, size_t row);

/* ---- strings every writer needs -------------------------------------------- */

/* Writes s as a JSON string (quoted, escaped, valid UTF-8). */
void json_string(FILE *fp, const char *s);
/* n strings as a JSON array of strings; a NULL one as "". */
void json_string_array(FILE *fp, const char *const *v, size_t n);
/* A CSV field (RFC 4180) in valid UTF-8; NULL writes nothing. */
void out_csv_field(FILE *fp, const char *s);
/* text wrapped at spaces to 78 columns, continuation lines indented by two. */
void out_text_para(FILE *fp, const char *text);

/* ---- cells, for the writers (out_common.c) --------------------------------------- */

/* Room for any scalar cell as text. */
#define CELL_LEN	640

/* Lists (COL_STRV, COL_U64V): every format lays them out its own way. */
bool out_col_is_list(const struct out_col *c);
/* Cell (row, col) of t, zeroed before t->cell fills it. */
struct out_cell out_get_cell(const struct out_table *t, size_t row, size_t col);
/*
 * A scalar cell as text: text_mode for people (12.3%, 1.25ms), else as
 * CSV and JSON write it. Returns buf, or a string the cell holds.
 */
const char *out_fmt_scalar(char *buf, size_t len, const struct out_col *col,
			   const struct out_cell *c, bool text_mode);

#endif /* OUT_TABLE_H */
