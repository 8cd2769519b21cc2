// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_report_out_table.c - the table writers (out_table.h): every column
 * kind in text, CSV and JSON, long names, lists under a row, the limit,
 * and the text layouts and flags older tables need (out_text_layout).
 */
#include <stdlib.h>
#include <string.h>

#include "writers/out_table.h"
#include "tap.h"

struct trow {
	const char *name;
	uint64_t hits;
	int64_t net;
	double pct;
	uint64_t ns;
	uint64_t addr;
	const char *const *frames;
	size_t nframes;
	const uint64_t *hist;
	size_t nhist;
};

static const char *const frames0[] = { "kmalloc_trace+0x2a", "alloc_thing+0x10 [mod]" };
static const uint64_t hist1[] = { 0, 3, 5 };

static const struct trow rows[] = {
	{ "short", 12, -3, 37.5, 950, 0xffffffff81000010ULL, frames0, 2, NULL, 0 },
	{ "a,name \"quoted\" and much longer than the room the table leaves for it", 7, 4,
	  0.0, 3250000, 0x10, NULL, 0, hist1, 3 },
};

static const struct out_col cols[] = {
	{ "name", "NAME", COL_STR, 0, 0 },
	{ "hits", "HITS", COL_U64, 6, 0 },
	{ "net", "NET", COL_I64, 0, 0 },
	{ "frag_pct", "FRAG", COL_PCT, 0, 0 },
	{ "p50_ns", "P50", COL_NS, 0, 0 },
	{ "addr", NULL, COL_ADDR, 0, OC_NO_TEXT },
	{ "frames", NULL, COL_STRV, 0, 0 },
	{ "hist", "log2", COL_U64V, 0, 0 },
};

static void cell(const void *ctx, size_t row, size_t col, struct out_cell *c)
{
	const struct trow *r = &((const struct trow *)ctx)[row];

	switch (col) {
	case 0: c->s = r->name; break;
	case 1: c->u = r->hits; break;
	case 2: c->i = r->net; break;
	case 3: c->d = r->pct; break;
	case 4: c->u = r->ns; break;
	case 5: c->u = r->addr; break;
	case 6: c->sv = r->frames; c->n = r->nframes; c->null = !r->frames; break;
	default: c->uv = r->hist; c->n = r->nhist; break;
	}
}

static char *render(int fmt, const struct out_table *t, bool wide)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	bool first = true;

	if (!m)
		return NULL;
	if (fmt == 0)
		out_text_table(m, t, wide);
	else if (fmt == 1)
		out_csv_table(m, t);
	else
		out_json_table(m, t, &first);
	fclose(m);
	return buf;
}

/* A table laid out the way the interval screen and the errors table are. */
static const struct out_col lcols[] = {
	{ "name", "NAME", COL_STR, 6, OC_CUT },
	{ "net", "NET", COL_I64, 5, OC_SIGN },
	{ "frag_pct", "FRAG%", COL_FIX3, 7, 0 },
	{ "ok", NULL, COL_BOOL, 0, OC_NO_TEXT },
	{ "file", NULL, COL_STR, 0, OC_NO_TEXT | OC_OMIT_NULL },
	{ "under", NULL, COL_STR, 0, OC_UNDER | OC_NO_JSON | OC_NO_CSV },
	{ "site", "Site", COL_STR, 0, OC_WIDE | OC_NO_PAD | OC_GAP(3) },
};

static void lcell(const void *ctx, size_t row, size_t col, struct out_cell *c)
{
	(void)ctx;
	switch (col) {
	case 0:
		c->s = row ? "b" : "a_long_name";
		break;
	case 1:
		c->i = row ? -2 : 3;
		break;
	case 2:
		c->u = 12345;
		break;
	case 3:
		c->u = row;
		break;
	case 4:
		c->s = "f.c";
		c->null = !row;
		break;
	case 5:
		c->s = "  at f.c:1";
		c->null = !row;
		break;
	default:
		c->s = "s";
		break;
	}
}

static void test_layout(void)
{
	static const struct out_text_layout l = {
		.gap = 1, .rule = -1, .flags = OT_TITLE_LINE | OT_BLANK_BEFORE | OT_NO_BLANK_AFTER,
		.none = "nothing\n", .more = "",
	};
	struct out_table t = {
		.key = "lay", .title = "heading as is", .cols = lcols,
		.ncols = sizeof(lcols) / sizeof(lcols[0]), .nrows = 2, .total = 3,
		.cell = lcell, .text = &l,
	};
	char *s;

	s = render(0, &t, false);
	is_str(s, "\nheading as is\nNAME     NET   FRAG%\na_long    +3  12.345\n"
		  "b         -2  12.345\n  at f.c:1\n  ... 1 more\n",
		  "text layout: gap, no rule, title line, cut, sign, thousandths, line under");
	free(s);
	s = render(0, &t, true);
	ok(s && strstr(s, "NAME     NET   FRAG%   Site\n") && strstr(s, "12.345   s\n"),
	   "text --wide: the wide column after its own gap, unpadded");
	free(s);
	s = render(2, &t, false);
	is_str(s, "\"lay\":[{\"name\":\"a_long_name\",\"net\":3,\"frag_pct\":12.345,"
		  "\"ok\":false,\"site\":\"s\"},{\"name\":\"b\",\"net\":-2,\"frag_pct\":12.345,"
		  "\"ok\":true,\"file\":\"f.c\",\"site\":\"s\"}]",
		  "JSON: booleans, a null key left out, text-only lines not in it");
	free(s);
	t.nrows = 0;
	s = render(0, &t, false);
	is_str(s, "nothing\n", "text layout: what no rows write");
	free(s);
}

int main(void)
{
	struct out_table t = {
		.key = "things", .title = "Things", .note = NULL, .cols = cols,
		.ncols = sizeof(cols) / sizeof(cols[0]), .nrows = 2, .total = 5,
		.cell = cell, .ctx = rows,
	};
	char *s;

	s = render(1, &t, false);
	is_str(s, "name,hits,net,frag_pct,p50_ns,addr,frames,hist\n"
		  "short,12,-3,37.500,950,0xffffffff81000010,"
		  "kmalloc_trace+0x2a;alloc_thing+0x10 [mod],\n"
		  "\"a,name \"\"quoted\"\" and much longer than the room the table leaves for it\","
		  "7,4,0.000,3250000,0x10,,0 3 5\n", "CSV: keys, quoting, lists joined");
	free(s);

	s = render(2, &t, false);
	is_str(s, "\"things\":[{\"name\":\"short\",\"hits\":12,\"net\":-3,\"frag_pct\":37.500,"
		  "\"p50_ns\":950,\"addr\":\"0xffffffff81000010\",\"frames\":[\"kmalloc_trace+0x2a\","
		  "\"alloc_thing+0x10 [mod]\"],\"hist\":[]},{\"name\":\"a,name \\\"quoted\\\" and much "
		  "longer than the room the table leaves for it\",\"hits\":7,\"net\":4,"
		  "\"frag_pct\":0.000,\"p50_ns\":3250000,\"addr\":\"0x10\",\"frames\":null,"
		  "\"hist\":[0,3,5]}]", "JSON: numbers, strings, null, lists");
	free(s);

	s = render(0, &t, false);
	ok(s && strncmp(s, "Things (5):\n", 12) == 0, "text: title with the total");
	ok(s && strstr(s, "HITS") && strstr(s, "FRAG") && !strstr(s, "addr"),
	   "text: headers, OC_NO_TEXT column left out");
	ok(s && strstr(s, "37.5%") && strstr(s, "950ns") && strstr(s, "3.25ms"),
	   "text: percent and durations for people");
	ok(s && strstr(s, "\n    kmalloc_trace+0x2a\n    alloc_thing+0x10 [mod]\n"),
	   "text: string list one per line under its row");
	ok(s && strstr(s, "    log2: 0 3 5\n"), "text: number list on a line under its row");
	ok(s && strstr(s, "leaves for it\n"), "text: a name too long for 80 columns ends its line");
	ok(s && strstr(s, "  ... 3 more (-l 0 shows all)\n"), "text: rows beyond the limit counted");
	if (s) {
		const char *p = s;
		size_t longest = 0;

		while (*p) {
			size_t l = strcspn(p, "\n");

			if (l > longest && !strstr(p, "leaves for it"))
				longest = l;
			p += l + (p[l] != 0);
		}
		ok(longest <= 80, "text: lines fit 80 columns (%zu)", longest);
	}
	free(s);

	s = render(0, &t, true);
	ok(s && strstr(s, "leaves for it  ") != NULL, "text --wide: the numbers follow a long name");
	free(s);

	t.nrows = 0;
	t.total = 0;
	s = render(0, &t, false);
	is_str(s, "Things (0):\n  none\n\n", "text: an empty table says none");
	free(s);
	test_layout();
	return done_testing();
}
