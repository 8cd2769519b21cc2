// SPDX-License-Identifier: GPL-2.0-only
/*
 * out_common.c - what every writer shares: the string escapes (JSON, CSV,
 * wrapped text) and a cell's value as text, so that the formats agree.
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

void json_string_array(FILE *fp, const char *const *v, size_t n)
{
	size_t k;

	fputc('[', fp);
	for (k = 0; k < n; k++) {
		if (k)
			fputc(',', fp);
		json_string(fp, v[k] ? v[k] : "");
	}
	fputc(']', fp);
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

bool out_col_is_list(const struct out_col *c)
{
	return c->kind == COL_STRV || c->kind == COL_U64V;
}

struct out_cell out_get_cell(const struct out_table *t, size_t row, size_t col)
{
	struct out_cell c;

	memset(&c, 0, sizeof(c));
	t->cell(t->ctx, row, col, &c);
	return c;
}

/* A scalar cell as text (text_mode: for people; else as CSV writes it). */
const char *out_fmt_scalar(char *buf, size_t len, const struct out_col *col,
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
		snprintf(buf, len, text_mode && (col->flags & OC_SIGN) && c->i > 0 ?
			 "+%" PRId64 : "%" PRId64, c->i);
		break;
	case COL_BOOL:
		return c->u ? "true" : "false";
	case COL_FIX3:
		snprintf(buf, len, "%" PRIu64 ".%03" PRIu64, c->u / 1000, c->u % 1000);
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
