// SPDX-License-Identifier: GPL-2.0-only
/*
 * out_json.c - the JSON writer: any view's table as a member holding an
 * array of objects, one key per column (Documentation/report-json.md).
 */
#include <inttypes.h>

#include "writers/out_table.h"

/* ---- JSON ---------------------------------------------------------------------- */

static void json_value(FILE *fp, const struct out_col *col, const struct out_cell *c)
{
	char buf[CELL_LEN];
	size_t k;

	if (c->null) {
		fputs("null", fp);
		return;
	}
	switch (col->kind) {
	case COL_STR:
		if (c->s)
			json_string(fp, c->s);
		else
			fputs("null", fp);
		break;
	case COL_ADDR:
		fprintf(fp, "\"0x%" PRIx64 "\"", c->u);
		break;
	case COL_STRV:
		json_string_array(fp, c->sv, c->n);
		break;
	case COL_U64V:
		fputc('[', fp);
		for (k = 0; k < c->n; k++)
			fprintf(fp, "%s%" PRIu64, k ? "," : "", c->uv[k]);
		fputc(']', fp);
		break;
	default:
		fputs(out_fmt_scalar(buf, sizeof(buf), col, c, false), fp);
		break;
	}
}

void out_json_row(FILE *fp, const struct out_table *t, size_t row)
{
	bool sep = false;
	size_t i;

	fputc('{', fp);
	for (i = 0; i < t->ncols; i++) {
		struct out_cell c;

		if (t->cols[i].flags & OC_NO_JSON)
			continue;
		c = out_get_cell(t, row, i);
		if (c.null && (t->cols[i].flags & OC_OMIT_NULL))
			continue;
		fprintf(fp, "%s\"%s\":", sep ? "," : "", t->cols[i].key);
		json_value(fp, &t->cols[i], &c);
		sep = true;
	}
	fputc('}', fp);
}

void out_json_table(FILE *fp, const struct out_table *t, bool *first)
{
	size_t row;

	fprintf(fp, "%s\"%s\":[", *first ? "" : ",", t->key);
	*first = false;
	for (row = 0; row < t->nrows; row++) {
		if (row)
			fputc(',', fp);
		out_json_row(fp, t, row);
	}
	fputc(']', fp);
}
