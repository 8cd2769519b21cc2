// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_report_gfp.c - unit tests of the GFP flag names (report_gfp.c): the
 * tracepoint formats kmemtraced copied from Debian's 6.1, 6.12 and 7.3
 * kernels (tests/gfp/RELEASE/tracepoint_formats) must name every mask as
 * ftrace named it in the same guest run (tests/gfp/RELEASE/pairs, written by
 * tests/guest/53-gfp-names.t with KMT_GFP_CAPTURE); small made-up formats
 * check the kernel's decoding rules and that bad input is refused with its
 * file, line and column.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/report_gfp.h"
#include "tap.h"
#include "testlib.h"

#ifndef KMT_SRCDIR
#define KMT_SRCDIR "."
#endif

static const char *const releases[] = {
	"6.1.0-56-amd64", "6.12.117+deb12-amd64", "7.3.4+deb13-amd64",
};

/* A bit no kernel of the three names: ftrace prints it in hex after the names. */
#define UNNAMED_BIT	0x80000000u

static void test_real_kernel(const char *rel)
{
	char dir[512], path[600], err[512], buf[GFP_NAMES_LEN], want[GFP_NAMES_LEN + 16];
	struct gfp_names *g;
	unsigned int npairs = 0, bad = 0;
	char line[GFP_NAMES_LEN + 32];
	int missing;
	FILE *fp;

	snprintf(dir, sizeof(dir), "%s/tests/gfp/%s", KMT_SRCDIR, rel);
	g = gfp_names_load_dir(dir, err, sizeof(err), &missing);
	if (!ok(g, "%s: tracepoint_formats parsed", rel)) {
		diag("%s", err);
		return;
	}
	ok(gfp_names_has_table(g), "%s: it has a gfp_flags table", rel);
	is_str(gfp_names_event(g), "kmalloc", "%s: ... kmalloc's, the first event's", rel);
	snprintf(path, sizeof(path), "%s/pairs", dir);
	fp = fopen(path, "r");
	if (!ok(fp, "%s: pairs opened", rel)) {
		gfp_names_free(g);
		return;
	}
	while (fgets(line, sizeof(line), fp)) {
		unsigned int mask;
		char names[GFP_NAMES_LEN];

		if (sscanf(line, "%x %4000s", &mask, names) != 2)
			continue;
		npairs++;
		gfp_names_format(g, mask, buf, sizeof(buf));
		if (strcmp(buf, names)) {
			bad++;
			diag("%s: 0x%x is '%s', ftrace printed '%s'", rel, mask, buf, names);
		}
		/* What no name covers comes last, in hex, as trace_print_flags_seq() has it. */
		if (!(mask & UNNAMED_BIT)) {
			snprintf(want, sizeof(want), "%s|0x%x", names, UNNAMED_BIT);
			gfp_names_format(g, mask | UNNAMED_BIT, buf, sizeof(buf));
			if (strcmp(buf, want)) {
				bad++;
				diag("%s: 0x%x is '%s', want '%s'", rel, mask | UNNAMED_BIT, buf,
				     want);
			}
		}
	}
	fclose(fp);
	ok(npairs >= 10, "%s: %u masks ftrace named", rel, npairs);
	is_u64(bad, 0, "%s: each named as ftrace named it, and with an unnamed bit after", rel);
	/* show_gfp_flags(): "(REC->gfp_flags) ? __print_flags(...) : "none"". */
	is_str(gfp_names_format(g, 0, buf, sizeof(buf)), "none",
	       "%s: 0 is the print fmt's \"none\"", rel);
	is_str(gfp_names_format(g, UNNAMED_BIT, buf, sizeof(buf)), "0x80000000",
	       "%s: a mask with no named bit in hex", rel);
	gfp_names_free(g);
}

/* A tracepoint_formats holding one event whose print fmt ends in fmt. */
static struct gfp_names *parse(const char *fmt, char *err, size_t errlen)
{
	char text[8192];

	snprintf(text, sizeof(text),
		 "# a comment\nevent kmem/kmalloc\nname: kmalloc\nID: 1\nformat:\n"
		 "\tfield:unsigned long gfp_flags;\toffset:8;\tsize:8;\tsigned:0;\n\n"
		 "print fmt: \"gfp_flags=%%s\", %s\n", fmt);
	err[0] = '\0';
	return gfp_names_parse(text, strlen(text), "tf", err, errlen);
}

static const char *fmt1(const char *fmt, uint32_t mask)
{
	static char buf[GFP_NAMES_LEN];
	static char err[256];
	struct gfp_names *g = parse(fmt, err, sizeof(err));

	if (!g)
		return err;
	gfp_names_format(g, mask, buf, sizeof(buf));
	gfp_names_free(g);
	return buf;
}

static void test_rules(void)
{
	const char *t = "__print_flags(REC->gfp_flags, \"|\", {( unsigned long)(0x3u), \"AB\"}, "
		"{( unsigned long)(( gfp_t)0x01u), \"A\"}, {(unsigned long)(1UL << 1), \"B\"})";
	char err[256], buf[64];
	struct gfp_names *g;

	is_str(fmt1(t, 0x3), "AB", "a name whose bits are all set is taken first, in table order");
	is_str(fmt1(t, 0x1), "A", "... and a later one for what is left");
	is_str(fmt1(t, 0x7), "AB|0x4", "bits no name covers come after, in hex");
	is_str(fmt1(t, 0x6), "B|0x4", "... after what was named");
	is_str(fmt1(t, 0), "0", "no ternary and no 0 entry: 0 is \"0\"");
	is_str(fmt1("__print_flags(REC->gfp_flags, \" \", {1, \"A\"}, {2, \"B\"})", 3), "A B",
	       "the table's own delimiter");
	is_str(fmt1("(REC->gfp_flags) ? __print_flags(REC->gfp_flags, \"|\", {1, \"A\"}) : "
		    "\"nothing\"", 0), "nothing", "0: the ternary's string");
	is_str(fmt1("__print_flags(REC->gfp_flags, \"|\", {1, \"A\"}, {0, \"ZERO\"})", 0), "ZERO",
	       "0: else a 0 entry's name");
	is_str(fmt1("__print_flags(REC->gfp_flags, \"|\", {1, \"A\"}, { 0, ((void *)0) }, "
		    "{2, \"B\"})", 3), "A|0x2", "a null name ends the table (7.3's)");
	is_str(fmt1("__print_flags(REC->gfp_flags, \"|\", {(( gfp_t)(~(( gfp_t)0x1u)) & 0x6), "
		    "\"NOT1\"}, {((0x10 >> 4) + 7 - 6) ^ 0x3, \"X\"})", 0x7), "NOT1|X",
	       "casts, ~, &, >>, +, -, ^");
	is_str(fmt1("__print_flags(REC->gfp_flags, \"|\", {(( gfp_t)0x100000002ull), \"LOW\"}, "
		    "{1, \"A\"})", 3), "LOW|A", "a cast to gfp_t keeps 32 bits");
	is_str(fmt1("__print_flags(REC->gfp_flags, \"|\", {0, \"ZERO\"}, {1, \"A\"})", 1),
	       "ZERO|A", "a 0 entry is printed while bits are left, as the kernel's loop does");
	is_str(fmt1("__print_flags(REC->gfp_flags, \"|\", {1, \"A\"}, {0, \"ZERO\"})", 1),
	       "A", "... and not once none are");
	is_str(fmt1("__print_flags(REC->other, \"|\", {1, \"O\"}), __print_flags(REC->gfp_flags, "
		    "\"|\", {1, \"A\"})", 1), "A", "another field's table is not gfp_flags's");
	is_str(fmt1("REC->gfp_flags", 0xcc0), "0xcc0", "no table: hex");

	g = parse("REC->gfp_flags", err, sizeof(err));
	ok(g && !gfp_names_has_table(g), "a format without a table: no error, no table");
	is_str(gfp_names_format(g, 0x10, buf, sizeof(buf)), "0x10", "... masks in hex");
	gfp_names_free(g);
	is_str(gfp_names_format(NULL, 0xcc0, buf, sizeof(buf)), "0xcc0", "no names at all: hex");
	g = gfp_names_parse("", 0, "tf", err, sizeof(err));
	ok(g && !gfp_names_has_table(g), "an empty file: no table");
	gfp_names_free(g);
}

static void refused(const char *fmt, const char *want, const char *desc)
{
	char err[256];
	struct gfp_names *g = parse(fmt, err, sizeof(err));

	if (!ok(!g && strstr(err, want), "refused: %s", desc))
		diag("got '%s', want it to contain '%s'", g ? "(accepted)" : err, want);
	gfp_names_free(g);
}

static void test_errors(void)
{
	char deep[2048], many[GFP_TABLE_MAX * 16 + 128], err[256];
	struct gfp_names *g;
	size_t i, n;

	refused("__print_flags(REC->gfp_flags, \"|\", {(( gfp_t)___GFP_DMA_BIT), \"GFP_DMA\"})",
		"tf:8: column 73: unknown name '___GFP_DMA_BIT'", "a name the eval map left");
	refused("__print_flags(REC->gfp_flags, \"|\", {1 << (___GFP_IO_BIT), \"A\"})",
		"unknown name '___GFP_IO_BIT'", "a name in parentheses, not taken for a cast");
	refused("__print_flags(REC->gfp_flags, \"|\", {1, \"A\"", "tf:8: column",
		"a table cut short");
	refused("__print_flags(REC->gfp_flags, \"|\", {1, \"A})", "unterminated string",
		"an unterminated string");
	refused("__print_flags(REC->gfp_flags, \"|\", {1 << 64, \"A\"})", "shift by 64",
		"a shift by 64");
	refused("__print_flags(REC->gfp_flags, \"|\", {1 && 2, \"A\"})", "expected ','",
		"&& in a mask");
	refused("__print_flags(REC->gfp_flags, \"|\", {1, \"\"})", "empty flag name",
		"an empty name");
	refused("__print_flags(REC->gfp_flags, \"|\", {1, \"A\x01\"})", "control character",
		"a control character in a name");
	refused("__print_flags(REC->gfp_flags, \"|\", {1, \"A\" \"B\"})", "expected '}'",
		"a name followed by junk");
	refused("__print_flags(REC->gfp_flags, \"|\", )", "no flag", "an empty table");
	refused("__print_flags(REC->gfp_flags, \"||||||||||\", {1, \"A\"})", "longer than",
		"a long delimiter");
	refused("__print_flags(REC->gfp_flags, \"|\", {99999999999999999999999, \"A\"})",
		"bad number", "a number too big");
	refused("__print_flags(REC->gfp_flags, \"|\", {1, 2})", "name or a null pointer",
		"a number for a name");
	n = (size_t)snprintf(deep, sizeof(deep), "__print_flags(REC->gfp_flags, \"|\", {");
	for (i = 0; i < 600; i++)
		deep[n++] = '(';
	deep[n++] = '1';
	deep[n] = '\0';
	refused(deep, "nested deeper", "600 parentheses");
	n = (size_t)snprintf(many, sizeof(many), "__print_flags(REC->gfp_flags, \"|\"");
	for (i = 0; i <= GFP_TABLE_MAX; i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n, ", {%zu, \"F%zu\"}", i + 1, i);
	snprintf(many + n, sizeof(many) - n, ")");
	refused(many, "more than 128 flags", "129 flags");

	g = gfp_names_parse("name: kmalloc\n", 14, "tf", err, sizeof(err));
	ok(!g && strstr(err, "tf:1: column 1: expected 'event kmem/NAME'"),
	   "refused: a format before any event line (%s)", err);
	gfp_names_free(g);
	g = gfp_names_parse("event kmem/\n", 11, "tf", err, sizeof(err));
	ok(!g && strstr(err, "tf:1: column 7:"), "refused: an event without a name (%s)", err);
	gfp_names_free(g);
	g = gfp_names_parse("event kmem/a\nx\0y\n", 17, "tf", err, sizeof(err));
	ok(!g && strstr(err, "tf:2:") && strstr(err, "NUL"), "refused: a NUL byte (%s)", err);
	gfp_names_free(g);
}

static void test_load(void)
{
	char err[512];
	struct gfp_names *g;
	int missing;

	g = gfp_names_load_dir(test_dir, err, sizeof(err), &missing);
	ok(!g && missing, "no tracepoint_formats: missing, no error");
	test_write_text(test_path(GFP_FORMATS_FILE), "event kmem/kmalloc\nprint fmt: \"\", "
			"__print_flags(REC->gfp_flags, \"|\", {1, \"A\"}, {x, \"B\"})\n");
	g = gfp_names_load_dir(test_dir, err, sizeof(err), &missing);
	ok(!g && !missing && errno == EINVAL && strstr(err, "/" GFP_FORMATS_FILE ":2: column 62:"),
	   "a bad file: EINVAL, its path, line and column (%s)", err);
}

int main(void)
{
	size_t i;

	if (!test_dir_make("report-gfp")) {
		perror("mkdtemp");
		return 1;
	}
	for (i = 0; i < sizeof(releases) / sizeof(releases[0]); i++)
		test_real_kernel(releases[i]);
	test_rules();
	test_errors();
	test_load();
	test_dir_remove();
	return done_testing();
}
