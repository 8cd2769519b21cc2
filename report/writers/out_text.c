// SPDX-License-Identifier: GPL-2.0-only
/*
 * out_text.c - the text writer: any view's table as a heading, a column
 * header and aligned rows in 80 columns (or --wide).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "writers/out_table.h"

/* ---- text ---------------------------------------------------------------------- */

#define TEXT_WIDTH	78
#define NAME_MIN	24

static bool text_shown(const struct out_col *c)
{
	return !(c->flags & OC_NO_TEXT) && !out_col_is_list(c);
}

static bool left_aligned(const struct out_col *c)
{
	return c->kind == COL_STR || (c->flags & OC_LEFT);
}

/*
 * Column widths: a fixed width as given, others as wide as their widest
 * cell. Unless wide, one left-aligned column sized by its cells (the
 * name) gives way so the line fits; longer names then take a line of
 * their own.
 */
static void text_widths(const struct out_table *t, int *w, bool wide)
{
	char buf[CELL_LEN];
	int total = 0, flex = -1;
	size_t i, row;

	for (i = 0; i < t->ncols; i++) {
		const struct out_col *col = &t->cols[i];

		w[i] = 0;
		if (!text_shown(col))
			continue;
		w[i] = (int)strlen(col->head ? col->head : col->key);
		if (col->width > 0) {
			if (col->width > w[i])
				w[i] = col->width;
		} else {
			for (row = 0; row < t->nrows; row++) {
				struct out_cell c = out_get_cell(t, row, i);
				int len = (int)strlen(out_fmt_scalar(buf, sizeof(buf), col, &c, true));

				if (len > w[i])
					w[i] = len;
			}
			if (flex < 0 && left_aligned(col))
				flex = (int)i;
		}
		total += w[i] + (total ? 2 : 0);
	}
	if (!wide && flex >= 0 && total > TEXT_WIDTH) {
		int room = w[flex] - (total - TEXT_WIDTH);

		w[flex] = room < NAME_MIN ? NAME_MIN : room;
	}
}

static void text_list(FILE *fp, const struct out_col *col, const struct out_cell *c)
{
	size_t k;

	if (c->null || !c->n)
		return;
	if (col->kind == COL_STRV) {
		for (k = 0; k < c->n; k++)
			fprintf(fp, "    %s\n", c->sv[k] ? c->sv[k] : "");
		return;
	}
	fprintf(fp, "    %s:", col->head ? col->head : col->key);
	for (k = 0; k < c->n; k++)
		fprintf(fp, " %" PRIu64, c->uv[k]);
	fputc('\n', fp);
}

void out_text_table(FILE *fp, const struct out_table *t, bool wide)
{
	char buf[CELL_LEN];
	int *w = calloc(t->ncols ? t->ncols : 1, sizeof(*w));
	int line = 0;
	size_t i, row;

	fprintf(fp, "%s (%zu):\n", t->title, t->total);
	if (t->note)
		out_text_para(fp, t->note);
	if (!t->nrows) {
		fputs("  none\n\n", fp);
		free(w);
		return;
	}
	if (!w) {
		/* No memory for widths: still every number, unaligned. */
		wide = true;
	} else {
		text_widths(t, w, wide);
	}
	for (i = 0; i < t->ncols; i++) {
		const struct out_col *col = &t->cols[i];
		const char *h = col->head ? col->head : col->key;
		int cw = w ? w[i] : 0;

		if (!text_shown(col))
			continue;
		line += fprintf(fp, "%s%*s", line ? "  " : "", left_aligned(col) ? -cw : cw, h);
	}
	fputc('\n', fp);
	for (i = 0; i < (size_t)line; i++)
		fputc('-', fp);
	fputc('\n', fp);
	for (row = 0; row < t->nrows; row++) {
		bool started = false;

		for (i = 0; i < t->ncols; i++) {
			const struct out_col *col = &t->cols[i];
			struct out_cell c;
			const char *s;
			int cw = w ? w[i] : 0;

			if (!text_shown(col))
				continue;
			c = out_get_cell(t, row, i);
			s = out_fmt_scalar(buf, sizeof(buf), col, &c, true);
			if (started)
				fputs("  ", fp);
			if (left_aligned(col) && !wide && (int)strlen(s) > cw)
				fprintf(fp, "%s\n%*s", s, cw, "");
			else
				fprintf(fp, "%*s", left_aligned(col) ? -cw : cw, s);
			started = true;
		}
		fputc('\n', fp);
		for (i = 0; i < t->ncols; i++) {
			const struct out_col *col = &t->cols[i];
			struct out_cell c;

			if ((col->flags & OC_NO_TEXT) || !out_col_is_list(col))
				continue;
			c = out_get_cell(t, row, i);
			text_list(fp, col, &c);
		}
	}
	if (t->nrows < t->total)
		fprintf(fp, "  ... %zu more (-l 0 shows all)\n", t->total - t->nrows);
	fputc('\n', fp);
	free(w);
}
