// SPDX-License-Identifier: GPL-2.0-only
/*
 * out_csv.c - the CSV writer (RFC 4180): any view's table as a header row
 * of keys and a row per row.
 */
#include <inttypes.h>
#include <string.h>
#include <stdlib.h>

#include "writers/out_table.h"

/* ---- CSV ----------------------------------------------------------------------- */

static bool csv_shown(const struct out_col *c)
{
	return !(c->flags & OC_NO_CSV);
}

static void csv_list(FILE *fp, const struct out_col *col, const struct out_cell *c)
{
	char *joined = NULL;
	size_t len = 0, k;
	FILE *m;

	if (c->null || !c->n)
		return;
	m = open_memstream(&joined, &len);
	if (!m)
		return;
	for (k = 0; k < c->n; k++) {
		if (col->kind == COL_STRV)
			fprintf(m, "%s%s", k ? ";" : "", c->sv[k] ? c->sv[k] : "");
		else
			fprintf(m, "%s%" PRIu64, k ? " " : "", c->uv[k]);
	}
	if (fclose(m) == 0)
		out_csv_field(fp, joined);
	free(joined);
}

void out_csv_header(FILE *fp, const struct out_table *t)
{
	bool started = false;
	size_t i;

	for (i = 0; i < t->ncols; i++) {
		if (!csv_shown(&t->cols[i]))
			continue;
		fprintf(fp, "%s%s", started ? "," : "", t->cols[i].key);
		started = true;
	}
	fputc('\n', fp);
}

void out_csv_rows(FILE *fp, const struct out_table *t)
{
	char buf[CELL_LEN];
	size_t i, row;

	for (row = 0; row < t->nrows; row++) {
		bool started = false;

		for (i = 0; i < t->ncols; i++) {
			const struct out_col *col = &t->cols[i];
			struct out_cell c;

			if (!csv_shown(col))
				continue;
			if (started)
				fputc(',', fp);
			started = true;
			c = out_get_cell(t, row, i);
			if (out_col_is_list(col))
				csv_list(fp, col, &c);
			else if (col->kind == COL_STR)
				out_csv_field(fp, c.null ? NULL : c.s);
			else
				fputs(out_fmt_scalar(buf, sizeof(buf), col, &c, false), fp);
		}
		fputc('\n', fp);
	}
}

void out_csv_table(FILE *fp, const struct out_table *t)
{
	out_csv_header(fp, t);
	out_csv_rows(fp, t);
}
