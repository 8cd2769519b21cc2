/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * out_table.h - the writers of the table model (views/view.h): text, CSV
 * and JSON render any view's tables, and the string escapes they share.
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
/* text wrapped at spaces to 78 columns, continuation lines indented by two. */
void out_text_para(FILE *fp, const char *text);

#endif /* OUT_TABLE_H */
