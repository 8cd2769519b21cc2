// SPDX-License-Identifier: GPL-2.0-only
/*
 * out_text.c - the text writer: any view's table as a heading, a column
 * header and aligned rows in 80 columns (or --wide).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "writers/out_table.h"

#define TEXT_WIDTH	78
#define NAME_MIN	24

static bool text_shown(const struct out_col *c)
{
	return !(c->flags & (OC_NO_TEXT | OC_UNDER)) && !out_col_is_list(c);
}

static bool left_aligned(const struct out_col *c)
{
	return (c->kind == COL_STR && !(c->flags & OC_RIGHT)) || (c->flags & OC_LEFT);
}

static int gap_of(const struct out_table *t, size_t col)
{
	if (OC_GAP_OF(t->cols[col].flags))
		return (int)OC_GAP_OF(t->cols[col].flags);
	return t->text && t->text->gap ? t->text->gap : 2;
}

/* A column --wide alone shows is hidden by a width of -1. */
static bool hidden(const int *w, size_t col)
{
	return w && w[col] < 0;
}

/*
 * Column widths: a fixed width as given, others as wide as their widest
 * cell. Unless wide, one left-aligned column sized by its cells (the
 * name) gives way so the line fits; longer names then take a line of
 * their own.
 */
int *out_text_widths(const struct out_table *t, bool wide)
{
	char buf[CELL_LEN];
	int total = 0, flex = -1, *w = calloc(t->ncols ? t->ncols : 1, sizeof(*w));
	size_t i, row;

	if (!w)
		return NULL;
	for (i = 0; i < t->ncols; i++) {
		const struct out_col *col = &t->cols[i];

		if (!text_shown(col))
			continue;
		if ((col->flags & OC_WIDE) && !wide) {
			w[i] = -1;
			continue;
		}
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
		total += w[i] + (total ? gap_of(t, i) : 0);
	}
	if (!wide && flex >= 0 && total > TEXT_WIDTH) {
		int room = w[flex] - (total - TEXT_WIDTH);

		w[flex] = room < NAME_MIN ? NAME_MIN : room;
	}
	return w;
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

void out_text_heading(FILE *fp, const struct out_table *t)
{
	if (t->text && (t->text->flags & OT_BLANK_BEFORE))
		fputc('\n', fp);
	if (t->text && (t->text->flags & OT_TITLE_LINE))
		fprintf(fp, "%s\n", t->title);
	else
		fprintf(fp, "%s (%zu):\n", t->title, t->total);
	if (t->note)
		out_text_para(fp, t->note);
}

void out_text_header(FILE *fp, const struct out_table *t, const int *w)
{
	int line = 0, rule = t->text ? t->text->rule : 0;
	bool started = false;
	size_t i;

	for (i = 0; i < t->ncols; i++) {
		const struct out_col *col = &t->cols[i];
		const char *h = col->head ? col->head : col->key;
		int cw = w ? w[i] : 0;

		if (!text_shown(col) || hidden(w, i))
			continue;
		if (col->flags & OC_NO_PAD)
			cw = 0;
		line += fprintf(fp, "%*s%*s", started ? gap_of(t, i) : 0, "",
				left_aligned(col) ? -cw : cw, h);
		started = true;
	}
	fputc('\n', fp);
	if (rule < 0)
		return;
	for (i = 0; i < (size_t)(rule ? rule : line); i++)
		fputc('-', fp);
	fputc('\n', fp);
}

void out_text_row(FILE *fp, const struct out_table *t, size_t row, const int *w, bool wide)
{
	char buf[CELL_LEN];
	bool started = false;
	size_t i;

	for (i = 0; i < t->ncols; i++) {
		const struct out_col *col = &t->cols[i];
		struct out_cell c;
		const char *s;
		int cw = w ? w[i] : 0;

		if (!text_shown(col) || hidden(w, i))
			continue;
		c = out_get_cell(t, row, i);
		s = out_fmt_scalar(buf, sizeof(buf), col, &c, true);
		if (started)
			fprintf(fp, "%*s", gap_of(t, i), "");
		if (col->flags & OC_NO_PAD)
			fputs(s, fp);
		else if (col->flags & OC_CUT)
			fprintf(fp, "%-*.*s", cw, cw, s);
		else if (left_aligned(col) && !wide && (int)strlen(s) > cw)
			fprintf(fp, "%s\n%*s", s, cw, "");
		else
			fprintf(fp, "%*s", left_aligned(col) ? -cw : cw, s);
		started = true;
	}
	fputc('\n', fp);
	for (i = 0; i < t->ncols; i++) {
		const struct out_col *col = &t->cols[i];
		struct out_cell c;

		if ((col->flags & OC_NO_TEXT) || !(out_col_is_list(col) || (col->flags & OC_UNDER)))
			continue;
		c = out_get_cell(t, row, i);
		if (!out_col_is_list(col)) {
			if (!c.null && c.s)
				fprintf(fp, "%s\n", c.s);
		} else {
			text_list(fp, col, &c);
		}
	}
}

void out_text_table(FILE *fp, const struct out_table *t, bool wide)
{
	const struct out_text_layout *l = t->text;
	int *w;
	size_t row;

	if (!t->nrows && l && l->none) {
		fputs(l->none, fp);
		return;
	}
	out_text_heading(fp, t);
	if (!t->nrows && !(l && (l->flags & OT_HEADER_EMPTY))) {
		fputs("  none\n\n", fp);
		return;
	}
	w = out_text_widths(t, wide);
	/* No memory for widths: still every number, unaligned. */
	if (!w)
		wide = true;
	out_text_header(fp, t, w);
	for (row = 0; row < t->nrows; row++)
		out_text_row(fp, t, row, w, wide);
	if (t->nrows < t->total)
		fprintf(fp, "  ... %zu more%s\n", t->total - t->nrows,
			l && l->more ? l->more : " (-l 0 shows all)");
	if (!l || !(l->flags & OT_NO_BLANK_AFTER))
		fputc('\n', fp);
	free(w);
}
