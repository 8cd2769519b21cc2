// SPDX-License-Identifier: GPL-2.0-only
/*
 * out_table.c - the writers every view's tables go through: 80-column text,
 * CSV and JSON, and the string escapes they share.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "writers/out_table.h"

/* ---- strings ------------------------------------------------------------------ */

static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and beyond U+10FFFF are not UTF-8. */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

void json_string(FILE *fp, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', fp);
	while (*p) {
		size_t n;

		if (*p == '"' || *p == '\\') {
			fputc('\\', fp);
			fputc(*p++, fp);
		} else if (*p == '\n') {
			fputs("\\n", fp);
			p++;
		} else if (*p == '\t') {
			fputs("\\t", fp);
			p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(fp, "\\u%04x", *p++);
		} else {
			n = utf8_len(p);
			if (n) {
				fwrite(p, 1, n, fp);
				p += n;
			} else {
				/* Not UTF-8 (a mangled cache name): the replacement character. */
				fputs("\\ufffd", fp);
				p++;
			}
		}
	}
	fputc('"', fp);
}

/* A CSV field (RFC 4180), in valid UTF-8: a byte that is not becomes U+FFFD. */
void out_csv_field(FILE *fp, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	bool quote;

	if (!s)
		return;
	quote = strpbrk(s, ",\"\r\n") != NULL;
	if (quote)
		fputc('"', fp);
	while (*p) {
		size_t n = utf8_len(p);

		if (!n) {
			fputs("\xef\xbf\xbd", fp);
			p++;
			continue;
		}
		if (*p == '"')
			fputc('"', fp);
		fwrite(p, 1, n, fp);
		p += n;
	}
	if (quote)
		fputc('"', fp);
}

/*
 * text wrapped at spaces to fit 78 columns, continuation lines indented
 * by two (a word longer than a line stays whole).
 */
void out_text_para(FILE *fp, const char *text)
{
	const char *p = text;
	int col = 0, indent = 0;

	for (;;) {
		size_t wl;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		wl = strcspn(p, " ");
		if (col > indent && col + 1 + (int)wl > 78) {
			fputs("\n  ", fp);
			col = indent = 2;
		} else if (col > indent) {
			fputc(' ', fp);
			col++;
		}
		fwrite(p, 1, wl, fp);
		col += (int)wl;
		p += wl;
	}
	fputc('\n', fp);
}

/* ---- cells -------------------------------------------------------------------- */

#define CELL_LEN	640

static bool col_is_list(const struct out_col *c)
{
	return c->kind == COL_STRV || c->kind == COL_U64V;
}

static struct out_cell get_cell(const struct out_table *t, size_t row, size_t col)
{
	struct out_cell c;

	memset(&c, 0, sizeof(c));
	t->cell(t->ctx, row, col, &c);
	return c;
}


/* A scalar cell as text (text_mode: for people; else as CSV writes it). */
static const char *fmt_scalar(char *buf, size_t len, const struct out_col *col,
			      const struct out_cell *c, bool text_mode)
{
	if (c->null)
		return "";
	switch (col->kind) {
	case COL_STR:
		return c->s ? c->s : "";
	case COL_U64:
		snprintf(buf, len, "%" PRIu64, c->u);
		break;
	case COL_I64:
		snprintf(buf, len, "%" PRId64, c->i);
		break;
	case COL_PCT:
		snprintf(buf, len, text_mode ? "%.1f%%" : "%.3f", c->d);
		break;
	case COL_NS:
		if (text_mode)
			out_fmt_ns(buf, len, c->u);
		else
			snprintf(buf, len, "%" PRIu64, c->u);
		break;
	case COL_ADDR:
		snprintf(buf, len, "0x%" PRIx64, c->u);
		break;
	default:
		return "";
	}
	return buf;
}

/* ---- text ---------------------------------------------------------------------- */

#define TEXT_WIDTH	78
#define NAME_MIN	24

static bool text_shown(const struct out_col *c)
{
	return !(c->flags & OC_NO_TEXT) && !col_is_list(c);
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
				struct out_cell c = get_cell(t, row, i);
				int len = (int)strlen(fmt_scalar(buf, sizeof(buf), col, &c, true));

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
			c = get_cell(t, row, i);
			s = fmt_scalar(buf, sizeof(buf), col, &c, true);
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

			if ((col->flags & OC_NO_TEXT) || !col_is_list(col))
				continue;
			c = get_cell(t, row, i);
			text_list(fp, col, &c);
		}
	}
	if (t->nrows < t->total)
		fprintf(fp, "  ... %zu more (-l 0 shows all)\n", t->total - t->nrows);
	fputc('\n', fp);
	free(w);
}

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

void out_csv_table(FILE *fp, const struct out_table *t)
{
	char buf[CELL_LEN];
	bool started = false;
	size_t i, row;

	for (i = 0; i < t->ncols; i++) {
		if (!csv_shown(&t->cols[i]))
			continue;
		fprintf(fp, "%s%s", started ? "," : "", t->cols[i].key);
		started = true;
	}
	fputc('\n', fp);
	for (row = 0; row < t->nrows; row++) {
		started = false;
		for (i = 0; i < t->ncols; i++) {
			const struct out_col *col = &t->cols[i];
			struct out_cell c;

			if (!csv_shown(col))
				continue;
			if (started)
				fputc(',', fp);
			started = true;
			c = get_cell(t, row, i);
			if (col_is_list(col))
				csv_list(fp, col, &c);
			else if (col->kind == COL_STR)
				out_csv_field(fp, c.null ? NULL : c.s);
			else
				fputs(fmt_scalar(buf, sizeof(buf), col, &c, false), fp);
		}
		fputc('\n', fp);
	}
}

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
		fputc('[', fp);
		for (k = 0; k < c->n; k++) {
			if (k)
				fputc(',', fp);
			json_string(fp, c->sv[k] ? c->sv[k] : "");
		}
		fputc(']', fp);
		break;
	case COL_U64V:
		fputc('[', fp);
		for (k = 0; k < c->n; k++)
			fprintf(fp, "%s%" PRIu64, k ? "," : "", c->uv[k]);
		fputc(']', fp);
		break;
	default:
		fputs(fmt_scalar(buf, sizeof(buf), col, c, false), fp);
		break;
	}
}

void out_json_table(FILE *fp, const struct out_table *t, bool *first)
{
	size_t i, row;

	fprintf(fp, "%s\"%s\":[", *first ? "" : ",", t->key);
	*first = false;
	for (row = 0; row < t->nrows; row++) {
		bool sep = false;

		fputs(row ? ",{" : "{", fp);
		for (i = 0; i < t->ncols; i++) {
			struct out_cell c;

			if (t->cols[i].flags & OC_NO_JSON)
				continue;
			c = get_cell(t, row, i);
			fprintf(fp, "%s\"%s\":", sep ? "," : "", t->cols[i].key);
			json_value(fp, &t->cols[i], &c);
			sep = true;
		}
		fputc('}', fp);
	}
	fputc(']', fp);
}
