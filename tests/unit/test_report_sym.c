// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_report_sym.c - unit tests of kmemtrace-report's kallsyms symbolizer
 * (core kernel and module symbols, module ranges, aliases, bad files), of
 * the source path clean-up and of the kmemtrace.meta reader.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"
#include "core/report_meta.h"
#include "sym/sym_kallsyms.h"
#include "sym/sym_srcline.h"
#include "tap.h"
#include "testlib.h"

/* Unsorted on purpose, with data symbols, aliases and a module, as /proc/kallsyms is. */
static const char kallsyms_text[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T startup_64\n"
	"ffffffff81200000 t kfree\n"
	"ffffffff81100000 T __kmalloc\n"
	"ffffffff810fff00 T __pfx___kmalloc\n"
	"ffffffff81300000 D some_data\n"
	"ffffffff81250000 W weak_fn\n"
	"ffffffff812ff000 T _etext\n"
	"ffffffffc0002000 t oracle_leak\t[kmemtrace_oracle]\n"
	"ffffffffc0001000 t $x\t[kmemtrace_oracle]\n"
	"ffffffffc0001000 t oracle_kmalloc\t[kmemtrace_oracle]\n"
	"ffffffffc0003000 d oracle_data\t[kmemtrace_oracle]\n"
	"ffffffffc0010000 T other_fn\t[other]\n"
	"0000000000000000 T zero_addr_fn\n";

static const char modules_text[] =
	"kmemtrace_oracle ffffffffc0001000 ffffffffc0000000 16384\n"
	"other ffffffffc0010000 ffffffffc0010000 4096\n";

static const char *fmt(const struct ksyms *k, uint64_t addr)
{
	static char buf[256];

	return ksyms_format(k, addr, buf, sizeof(buf));
}

static const char *fmt_ret(const struct ksyms *k, uint64_t addr)
{
	static char buf[256];

	return ksyms_format_ret(k, addr, buf, sizeof(buf));
}

static void test_kallsyms(void)
{
	struct ksyms *k;
	char err[512];
	int missing;
	const struct ksym_mod *m;

	if (!ok(test_write_text(test_path("kallsyms"), kallsyms_text) == 0 &&
		test_write_text(test_path("modules"), modules_text) == 0,
		"kallsyms: files written"))
		return;
	k = ksyms_load(test_path("kallsyms"), test_path("modules"), err, sizeof(err), &missing);
	if (!ok(k != NULL, "kallsyms: loaded")) {
		diag("%s", err);
		return;
	}
	/* 12 text symbols with an address (3 aliases at _text, __pfx_, $x, no data, no zero). */
	is_u64(ksyms_count(k), 12, "kallsyms: text symbols with addresses kept");
	is_str(fmt(k, 0xffffffff81100010ULL), "__kmalloc+0x10", "core kernel: function+0xoff");
	is_str(fmt(k, 0xffffffff81100000ULL), "__kmalloc+0x0", "offset 0");
	is_str(fmt(k, 0xffffffff810fff08ULL), "__pfx___kmalloc+0x8",
	       "a __pfx_ symbol still names its own bytes");
	is_str(fmt(k, 0xffffffff81000004ULL), "startup_64+0x4",
	       "aliases: a function name rather than _text");
	is_str(fmt(k, 0xffffffff81200abcULL), "kfree+0xabc", "local (t) symbols");
	is_str(fmt(k, 0xffffffff81250001ULL), "weak_fn+0x1", "weak (W) symbols");
	is_str(fmt(k, 0xffffffff81300004ULL), "_etext+0x1004",
	       "data symbols are not call sites");
	is_str(fmt(k, 0xffffffffc0001024ULL), "oracle_kmalloc+0x24 [kmemtrace_oracle]",
	       "module: function+0xoff [module], not the ARM mapping symbol $x there");
	is_str(fmt(k, 0xffffffffc0002fffULL), "oracle_leak+0xfff [kmemtrace_oracle]",
	       "module: last function up to the module's end");
	is_str(fmt(k, 0xffffffffc0000010ULL), "0xffffffffc0000010 [kmemtrace_oracle]",
	       "module: before its first symbol, the module only");
	is_str(fmt(k, 0xffffffffc0005000ULL), "0xffffffffc0005000",
	       "between modules: no neighbour's symbol");
	is_str(fmt(k, 0xffffffffc0010100ULL), "other_fn+0x100 [other]", "second module");
	is_str(fmt(k, 0x1000), "0x1000", "below every symbol: raw");
	/* Return addresses (call sites, stack frames): the function of address - 1. */
	is_str(fmt_ret(k, 0xffffffff81250000ULL), "kfree+0x50000",
	       "return address at the next function's first byte: the function holding the call");
	is_str(fmt_ret(k, 0xffffffff81250001ULL), "weak_fn+0x1",
	       "return address inside a function: it, with the return address's offset");
	is_str(fmt_ret(k, 0xffffffffc0002000ULL), "oracle_kmalloc+0x1000 [kmemtrace_oracle]",
	       "module: a return address at the next function's start names the one before");
	is_str(fmt_ret(k, 0xffffffffc0001000ULL), "0xffffffffc0001000 [kmemtrace_oracle]",
	       "module: a call before its first symbol is the module's only");
	is_str(fmt_ret(k, 0), "0x0", "return address 0: raw");
	{
		const char *name = NULL, *mod = NULL;
		uint64_t off = 0;

		ok(ksyms_lookup_ret(k, 0xffffffff81100000ULL, &name, &off, &mod) &&
		   strcmp(name, "__pfx___kmalloc") == 0 && off == 0x100 && !mod,
		   "lookup_ret: the symbol before, the offset from it to the return address");
	}
	is_str(fmt(NULL, 0xffffffff81100010ULL), "0xffffffff81100010", "no kallsyms: raw");
	is_u64(ksyms_addr_of(k, "_text", NULL), 0xffffffff81000000ULL, "addr_of _text");
	is_u64(ksyms_addr_of(k, "oracle_leak", "kmemtrace_oracle"), 0xffffffffc0002000ULL,
	       "addr_of a module symbol");
	is_u64(ksyms_addr_of(k, "oracle_leak", NULL), 0, "addr_of: module symbols need the module");
	m = ksyms_module(k, "kmemtrace_oracle");
	ok(m && m->text_addr == 0xffffffffc0001000ULL && m->base == 0xffffffffc0000000ULL &&
	   m->size == 16384, "modules: text address, base and size");
	ksyms_free(k);

	/* Without the modules file, module symbols still resolve. */
	k = ksyms_load(test_path("kallsyms"), NULL, err, sizeof(err), &missing);
	ok(k != NULL, "kallsyms without modules: loaded");
	is_str(fmt(k, 0xffffffffc0001024ULL), "oracle_kmalloc+0x24 [kmemtrace_oracle]",
	       "without modules: module symbol");
	ksyms_free(k);
}

static void test_kallsyms_bad(void)
{
	struct ksyms *k;
	char err[512];
	int missing;

	k = ksyms_load(test_path("nonexistent"), NULL, err, sizeof(err), &missing);
	ok(!k && missing, "missing kallsyms: NULL, flagged missing");
	test_write_text(test_path("ks_zero"), "0000000000000000 T a\n0000000000000000 t b\n");
	k = ksyms_load(test_path("ks_zero"), NULL, err, sizeof(err), &missing);
	ok(!k && !missing && strstr(err, "no text symbol"),
	   "all-zero kallsyms (read without root): refused: %s", err);
	test_write_text(test_path("ks_bad"), "ffffffff81000000 T a\nnot a line at all\n");
	k = ksyms_load(test_path("ks_bad"), NULL, err, sizeof(err), &missing);
	ok(!k && strstr(err, "line 2"), "malformed kallsyms: error names the line: %s", err);
	test_write_text(test_path("ks_good"), "ffffffff81000000 T a\n");
	test_write_text(test_path("mod_bad"), "name ffff\n");
	k = ksyms_load(test_path("ks_good"), test_path("mod_bad"), err, sizeof(err), &missing);
	ok(!k && strstr(err, "line 1"), "malformed modules: error names the line: %s", err);
}

/*
 * Thousands of modules whose symbols come interleaved, and a modules file
 * in another order: every name finds its own module and range.
 */
static void test_many_modules(void)
{
	const unsigned int nmod = 3000;
	FILE *ks = fopen(test_path("ks_many"), "w"), *mods = fopen(test_path("mod_many"), "w");
	struct ksyms *k;
	char err[512], name[64], want[96], buf[128];
	unsigned int i, bad_names = 0, bad_ranges = 0;
	int missing;

	if (!ok(ks && mods, "many modules: files opened"))
		return;
	fputs("ffffffff81000000 T core_fn\n", ks);
	/* Two passes, so that no module's symbols are together. */
	for (i = 0; i < 2 * nmod; i++)
		fprintf(ks, "%llx t fn%u_%u\t[mod%u]\n",
			0xffffffffc0000000ULL + 0x10000ULL * (i % nmod) + 0x100 * (i / nmod),
			i % nmod, i / nmod, i % nmod);
	for (i = nmod; i-- > 0;)
		fprintf(mods, "mod%u %llx %llx %u\n", i, 0xffffffffc0000000ULL + 0x10000ULL * i,
			0xffffffffc0000000ULL + 0x10000ULL * i, 0x1000);
	fclose(ks);
	fclose(mods);
	k = ksyms_load(test_path("ks_many"), test_path("mod_many"), err, sizeof(err), &missing);
	if (!ok(k != NULL, "many modules: loaded (%s)", k ? "" : err))
		return;
	is_u64(ksyms_nmodules(k), nmod, "many modules: %u modules, each once", nmod);
	for (i = 0; i < nmod; i++) {
		const struct ksym_mod *m;

		snprintf(name, sizeof(name), "mod%u", i);
		m = ksyms_module(k, name);
		bad_ranges += !m || strcmp(m->name, name) ||
			      m->base != 0xffffffffc0000000ULL + 0x10000ULL * i || m->size != 0x1000;
		snprintf(want, sizeof(want), "fn%u_1+0x10 [mod%u]", i, i);
		bad_names += strcmp(ksyms_format(k, 0xffffffffc0000000ULL + 0x10000ULL * i + 0x110,
						 buf, sizeof(buf)), want) != 0;
	}
	is_u64(bad_ranges, 0, "many modules: each name finds its module and range");
	is_u64(bad_names, 0, "many modules: each address is named in its module");
	ok(ksyms_module(k, "mod3000") == NULL && ksyms_module(k, "") == NULL,
	   "many modules: an unknown name finds none");
	ksyms_free(k);
}

/* A modules file (and a kallsyms.loaded) a reader must refuse, and what it must say. */
struct refused {
	const char *modules, *loaded, *says, *desc;
};

static const struct refused refused_snapshots[] = {
	{ "kmemtrace 0xffffffffc0404000 0xffffffffc0404000 53248\n"
	  "kmemtrace_oracle 0xffffffffc040b000 0xffffffffc0404000 4096\n", NULL,
	  "kmemtrace and kmemtrace_oracle both at 0xffffffffc0404000",
	  "two modules at one base: refused, naming both" },
	{ "kmemtrace 0xffffffffc0404000 0xffffffffc0404000 53248\n"
	  "kmemtrace 0xffffffffc0480000 0xffffffffc0480000 53248\n", NULL,
	  "line 2: module kmemtrace listed twice", "one module on two lines: refused" },
	{ "kmemtrace 0xfffffffffffff000 0xfffffffffffff000 8192\n", NULL,
	  "line 1: kmemtrace: BASE + SIZE past the address space", "a range past 2^64: refused" },
};

static const struct refused refused_changes[] = {
	{ "-keep 0xffffffffc0000000 0xffffffffc0000000 16384\n", NULL,
	  "line 1: -keep: no keep loaded at 0xffffffffc0000000 before",
	  "an unload of a module not loaded: refused" },
	{ "*keep 0x0 0xffffffffc0000000 16384\n", NULL, "line 1: unknown kind of line '*'",
	  "a line of a kind this reader does not know: refused, saying so" },
	{ "keep 0xffffffffc0000000 0xffffffffc0000000 16384\n"
	  "+keep 0xffffffffc0000000 0xffffffffc0000000 16384\n", NULL,
	  "modules keep and keep both at 0xffffffffc0000000",
	  "a load at a base still taken: refused" },
	{ "+keep 0xffffffffc0000000 0xffffffffc0000000 16384\n",
	  "ffffffffc0060100 t lost_fn\t[lost]\n",
	  "line 1: module lost has no \"+\" line in the modules file",
	  "a kallsyms.loaded symbol of no load: refused" },
};

static void refusals(const char *kallsyms_name, const struct refused *r, size_t n)
{
	char err[512], ks[512], mods[512], ld[512];
	int missing;

	/* test_path() returns one buffer: each path gets a copy. */
	snprintf(ks, sizeof(ks), "%s", test_path(kallsyms_name));
	snprintf(mods, sizeof(mods), "%s", test_path("mod_refused"));
	snprintf(ld, sizeof(ld), "%s", test_path("ld_refused"));
	for (size_t i = 0; i < n; i++) {
		struct ksyms *k;

		test_write_text(mods, r[i].modules);
		if (r[i].loaded)
			test_write_text(ld, r[i].loaded);
		k = ksyms_load_all(ks, mods, r[i].loaded ? ld : NULL, err, sizeof(err), &missing);
		ok(!k && strstr(err, r[i].says), "%s: %s", r[i].desc, err);
		ksyms_free(k);
	}
}

/*
 * Writes a kallsyms, a modules and, if loaded_text is not NULL, a
 * kallsyms.loaded file (ks_TAG, mod_TAG, ld_TAG) and loads them: the
 * table, or NULL after a failed "DESC: loaded" test.
 */
static struct ksyms *load_snapshots(const char *tag, const char *ks_text, const char *mods_text,
				    const char *loaded_text, const char *desc)
{
	char ks[512], mods[512], ld[512], name[64], err[512];
	struct ksyms *k;
	int missing;

	/* test_path() returns one buffer: each path gets a copy. */
	snprintf(name, sizeof(name), "ks_%s", tag);
	snprintf(ks, sizeof(ks), "%s", test_path(name));
	snprintf(name, sizeof(name), "mod_%s", tag);
	snprintf(mods, sizeof(mods), "%s", test_path(name));
	snprintf(name, sizeof(name), "ld_%s", tag);
	snprintf(ld, sizeof(ld), "%s", test_path(name));
	test_write_text(ks, ks_text);
	test_write_text(mods, mods_text);
	if (loaded_text)
		test_write_text(ld, loaded_text);
	k = ksyms_load_all(ks, mods, loaded_text ? ld : NULL, err, sizeof(err), &missing);
	ok(k != NULL, "%s: loaded (%s)", desc, k ? "" : err);
	return k;
}

/*
 * A module loaded between the kallsyms and modules snapshots: its symbols
 * have a module name the modules file lacks. Placed in another module's
 * range (as a fuzzer did; a reload can do it), they name nothing there nor
 * past that range's end, so that each name found maps back to its start.
 */
static void test_unlisted_module(void)
{
	static const char ks_text[] =
		"ffffffff81000000 T core_fn\n"
		"ffffffffc0a01000 t oracle_alloc\t[kmemtrace_oracle]\n"
		"ffffffffc0a01080 t new_fn\t[newmod]\n"
		"ffffffffc0b00000 t late_fn\t[latemod]\n";
	static const char mods_text[] =
		"kmemtrace_oracle 0xffffffffc0a01000 0xffffffffc0a00000 16384\n";
	struct ksyms *k = load_snapshots("unl", ks_text, mods_text, NULL, "unlisted module");

	if (!k)
		return;
	is_str(fmt(k, 0xffffffffc0a01090ULL), "oracle_alloc+0x90 [kmemtrace_oracle]",
	       "unlisted module: in a listed range, only that module's symbols name it");
	is_str(fmt(k, 0xffffffffc0a04000ULL), "0xffffffffc0a04000",
	       "unlisted module: its symbol in another's range does not name the gap past it");
	is_str(fmt(k, 0xffffffffc0b00010ULL), "late_fn+0x10 [latemod]",
	       "unlisted module: outside every range, its symbols name what follows them");
	ksyms_free(k);
}

/*
 * Linux 6.4+ /proc/modules: the size counts data allocated apart from the
 * text, so [base, base + size) runs into the text of the module after it.
 * Listed newest first, as /proc/modules lists them, with kmemtrace reloaded
 * below the oracle and virtio_blk's range running into kmemtrace's.
 */
static void test_module_overlap(void)
{
	static const char ks_text[] =
		"ffffffff81000000 T core_fn\n"
		"ffffffffc0400010 t virtblk_probe\t[virtio_blk]\n"
		"ffffffffc0404010 t kmt_record\t[kmemtrace]\n"
		"ffffffffc0406000 t kmt_exit\t[kmemtrace]\n"
		"ffffffffc040b010 t oracle_kmalloc\t[kmemtrace_oracle]\n"
		"ffffffffc040c000 t oracle_leak\t[kmemtrace_oracle]\n";
	static const char mods_text[] =
		"kmemtrace 0xffffffffc0404000 0xffffffffc0404000 53248\n"
		"kmemtrace_oracle 0xffffffffc040b000 0xffffffffc040b000 151552\n"
		"virtio_blk 0xffffffffc0400000 0xffffffffc0400000 36864\n"
		"hidden 0x0 0x0 8192\n";
	struct ksyms *k = load_snapshots("ovl", ks_text, mods_text, NULL, "overlapping ranges");

	if (!k)
		return;
	is_str(fmt_ret(k, 0xffffffffc040b045ULL), "oracle_kmalloc+0x35 [kmemtrace_oracle]",
	       "overlap: the oracle's call site in kmemtrace's range is the oracle's");
	is_str(fmt_ret(k, 0xffffffffc040c100ULL), "oracle_leak+0x100 [kmemtrace_oracle]",
	       "overlap: the oracle's second function too");
	is_str(fmt_ret(k, 0xffffffffc0404020ULL), "kmt_record+0x10 [kmemtrace]",
	       "overlap: kmemtrace's own call site in virtio_blk's range is kmemtrace's");
	is_str(fmt_ret(k, 0xffffffffc0406100ULL), "kmt_exit+0x100 [kmemtrace]",
	       "overlap: kmemtrace's last function up to the next module's base");
	is_str(fmt_ret(k, 0xffffffffc0400020ULL), "virtblk_probe+0x10 [virtio_blk]",
	       "overlap: the first module keeps what is below the next base");
	is_str(fmt(k, 0xffffffffc040b000ULL), "0xffffffffc040b000 [kmemtrace_oracle]",
	       "overlap: the next module's base is its own, not the range it cuts");
	is_str(fmt(k, 0xffffffffc0433000ULL), "0xffffffffc0433000",
	       "overlap: past the last module's base + size, no module");
	is_str(fmt(k, 0x1000), "0x1000", "a module at base 0 (addresses hidden) has no range");
	ksyms_free(k);

	refusals("ks_ovl", refused_snapshots,
		 sizeof(refused_snapshots) / sizeof(refused_snapshots[0]));
}

/*
 * Modules loaded (+) and unloaded (-) during the trace, their symbols in
 * kallsyms.loaded: a module reloaded elsewhere has both loads named, a
 * later load over an unloaded one's base wins and is said, and what the
 * reader does not know is refused.
 */
static void test_module_changes(void)
{
	static const char ks_text[] =
		"ffffffff81000000 T core_fn\n"
		"ffffffffc0000100 t keep_fn\t[keep]\n"
		"ffffffffc0010100 t goner_fn\t[goner]\n"
		"ffffffffc0040100 t brief_fn\t[brief]\n"
		"ffffffffc0050100 t old_fn\t[old]\n"
		"ffffffffc0000180 T old_init\t[old]\n"
		"ffffffffc0090000 T keep_init\t[keep]\n"
		"ffffffffc0061000 t shifty_fn\t[shifty]\n";
	static const char mods_text[] =
		"keep 0xffffffffc0000000 0xffffffffc0000000 16384\n"
		"goner 0xffffffffc0010000 0xffffffffc0010000 8192\n"
		"brief 0xffffffffc0040000 0xffffffffc0040000 8192\n"
		"old 0xffffffffc0050000 0xffffffffc0050000 4096\n"
		"shifty 0xffffffffc0060000 0xffffffffc0060000 16384\n"
		"# loaded (+) and unloaded (-) during the trace\n"
		"+newmod 0xffffffffc0020000 0xffffffffc0020000 4096\n"
		"-goner 0xffffffffc0010000 0xffffffffc0010000 8192\n"
		"-brief 0xffffffffc0040000 0xffffffffc0040000 8192\n"
		"-old 0xffffffffc0050000 0xffffffffc0050000 4096\n"
		"+goner 0xffffffffc0030000 0xffffffffc0030000 8192\n"
		"+other 0xffffffffc0040000 0xffffffffc0040000 8192\n"
		"+big 0xffffffffc004f000 0xffffffffc004f000 12288\n"
		"-shifty 0xffffffffc0060000 0xffffffffc0060000 16384\n"
		"+shifty 0xffffffffc0062800 0xffffffffc0062000 16384\n"
		"+tiny 0xffffffffc0070000 0xffffffffc0070000 4096\n"
		"-tiny 0xffffffffc0070000 0xffffffffc0070000 4096\n"
		"+reuse 0xffffffffc0072800 0xffffffffc0072000 4096\n";
	static const char loaded_text[] =
		"ffffffffc0020100 t newmod_fn\t[newmod]\n"
		"ffffffffc0030100 t goner_fn\t[goner]\n"
		"ffffffffc0030200 d goner_data\t[goner]\n"
		"ffffffffc0040100 t other_fn\t[other]\n"
		"ffffffffc004f100 t big_fn\t[big]\n"
		"ffffffffc0050080 t big_fn2\t[big]\n"
		"ffffffffc0090000 T newmod_init\t[newmod]\n"
		"ffffffffc0002000 T goner_init\t[goner]\n"
		"ffffffffc0062800 t shifty_fn\t[shifty]\n"
		"ffffffffc0070100 t tiny_fn\t[tiny]\n"
		"ffffffffc0072000 t tiny_init\t[tiny]\n"
		"ffffffffc0072800 t reuse_fn\t[reuse]\n";
	struct ksyms *k = load_snapshots("chg", ks_text, mods_text, loaded_text,
					 "loads during the trace");
	const struct ksym_mod *m;
	char err[512];
	int missing;

	if (!k)
		return;
	is_str(fmt_ret(k, 0xffffffffc0000111ULL), "keep_fn+0x11 [keep]", "a module loaded throughout");
	is_str(fmt_ret(k, 0xffffffffc0010111ULL), "goner_fn+0x11 [goner]",
	       "a module reloaded elsewhere: its first load, by the start's kallsyms");
	is_str(fmt_ret(k, 0xffffffffc0030111ULL), "goner_fn+0x11 [goner]",
	       "... and its second, by kallsyms.loaded");
	m = ksyms_module_of(k, 0xffffffffc0030110ULL);
	ok(m && m->gen == 1 && m->base == 0xffffffffc0030000ULL && !m->unloaded,
	   "the second load is a module of its own: its base, loaded during the trace");
	m = ksyms_module_of(k, 0xffffffffc0010110ULL);
	ok(m && m->gen == 0 && m->unloaded, "the first load: unloaded during the trace");
	is_str(fmt_ret(k, 0xffffffffc0020111ULL), "newmod_fn+0x11 [newmod]",
	       "a module loaded during the trace");
	is_str(fmt_ret(k, 0xffffffffc0040111ULL), "other_fn+0x11 [other]",
	       "another module loaded at an unloaded one's base: the later one wins");
	is_str(fmt_ret(k, 0xffffffffc0050111ULL), "big_fn2+0x91 [big]",
	       "a later load whose code runs over an unloaded one's base wins there too");
	is_str(fmt_ret(k, 0xffffffffc004f111ULL), "big_fn+0x11 [big]", "... and below it");
	is_str(fmt_ret(k, 0xffffffffc0062911ULL), "shifty_fn+0x111 [shifty]",
	       "a reload based inside its unloaded load's range: its own code by its symbols");
	is_str(fmt_ret(k, 0xffffffffc0062111ULL), "shifty_fn+0x1111 [shifty]",
	       "... and below its first symbol, where it has no name, the unloaded load's code");
	is_str(fmt_ret(k, 0xffffffffc0060111ULL), "0xffffffffc0060111 [shifty]",
	       "... whose own range, cut there, is still unnamed below its first symbol");
	is_str(fmt_ret(k, 0xffffffffc0072011ULL), "tiny_init+0x11 [tiny]",
	       "below a load's first symbol, where an older load's init code was: that init");
	is_str(fmt_ret(k, 0xffffffffc0072811ULL), "reuse_fn+0x11 [reuse]", "... above it, the load's own");
	ok(strstr(ksyms_warnings(k), "brief, unloaded during the trace, was at 0xffffffffc0040000, where other was loaded later (at 0xffffffffc0040000)") &&
	   strstr(ksyms_warnings(k), "old, unloaded during the trace, was at 0xffffffffc0050000, where big was loaded later (at 0xffffffffc004f000)"),
	   "both are said (ksyms_warnings)");
	ok(!strstr(ksyms_warnings(k), "goner"), "a reload elsewhere, over nothing older, needs no warning");
	/* Init code: freed after the load, outside the module's range, its place reused. */
	is_str(fmt_ret(k, 0xffffffffc0090011ULL), "newmod_init+0x11 [newmod]",
	       "init code of a module loaded during the trace: named, over the start's at that place");
	is_str(fmt_ret(k, 0xffffffffc0002011ULL), "goner_init+0x11 [goner]",
	       "... also inside an older load's range (which on 6.4+ spans more than its text)");
	is_str(fmt_ret(k, 0xffffffffc00001a1ULL), "keep_fn+0xa1 [keep]",
	       "the start's init symbols never name another module's range");
	test_write_text(test_path("mod_keep"), "keep 0xffffffffc0000000 0xffffffffc0000000 16384\n");
	{
		struct ksyms *k2 = ksyms_load(test_path("ks_chg"), test_path("mod_keep"), err,
					      sizeof(err), &missing);

		is_str(k2 ? fmt_ret(k2, 0xffffffffc0090011ULL) : "", "0xffffffffc0090011",
		       "... nor the place of their own init code: it ran before the trace");
		ksyms_free(k2);
	}
	ksyms_free(k);

	k = ksyms_load(test_path("ks_chg"), test_path("mod_chg"), err, sizeof(err), &missing);
	ok(k != NULL, "without kallsyms.loaded: loaded");
	is_str(fmt_ret(k, 0xffffffffc0020111ULL), "0xffffffffc0020111 [newmod]",
	       "without kallsyms.loaded: a module loaded during the trace by its range only");
	ksyms_free(k);

	refusals("ks_chg", refused_changes,
		 sizeof(refused_changes) / sizeof(refused_changes[0]));
}

/*
 * A later load's init code, outside its own range and freed once it ran,
 * landing in the place of a module unloaded before it: the unloaded
 * module's range stays, its call sites keep their names. The init code
 * names its start, over the unloaded module's symbol there, and what
 * follows it, also past a symbol of a module the modules file does not
 * list (as the syms fuzzer had them): a name found maps back to its start.
 */
static void test_module_init_over_unloaded(void)
{
	static const char ks_text[] =
		"ffffffff81000000 T core_fn\n"
		"ffffffffc0010000 t oracle_fn\t[oracle]\n"
		"ffffffffc0010800 t oracle_late\t[oracle]\n"
		"ffffffffc0010900 t stray_fn\t[stray]\n";
	static const char mods_text[] =
		"oracle 0xffffffffc0010000 0xffffffffc0010000 8192\n"
		"# loaded (+) and unloaded (-) during the trace\n"
		"-oracle 0xffffffffc0010000 0xffffffffc0010000 8192\n"
		"+bench 0xffffffffc0000000 0xffffffffc0000000 4096\n";
	static const char loaded_text[] =
		"ffffffffc0000100 t bench_fn\t[bench]\n"
		"ffffffffc0010800 T bench_init\t[bench]\n";
	struct ksyms *k = load_snapshots("init", ks_text, mods_text, loaded_text,
					 "init code over an unloaded module");

	if (!k)
		return;
	is_str(fmt_ret(k, 0xffffffffc0010111ULL), "oracle_fn+0x111 [oracle]",
	       "the unloaded module's call site below the later load's init code keeps its name");
	is_str(fmt_ret(k, 0xffffffffc0000111ULL), "bench_fn+0x11 [bench]", "the later load's own code");
	is_str(fmt(k, 0xffffffffc0010800ULL), "bench_init+0x0 [bench]",
	       "the later load's init code names its start, over the unloaded module's symbol");
	is_str(fmt(k, 0xffffffffc0010811ULL), "bench_init+0x11 [bench]", "... and what follows it");
	is_str(fmt(k, 0xffffffffc0010911ULL), "bench_init+0x111 [bench]",
	       "... past a symbol of an unlisted module, not the unloaded module's name of its start");
	ok(!strstr(ksyms_warnings(k), "oracle, unloaded during the trace"),
	   "no warning: the later load's code proper is not over it");
	ksyms_free(k);
}

static const char *fmt_frame(const struct ksyms *k, const uint64_t *fr, unsigned int i)
{
	static char buf[256];

	return ksyms_format_frame(k, fr[i], ksyms_frame_exact(k, fr, i), buf, sizeof(buf));
}

/*
 * Stacks through an interrupt: the frame after the kernel's exception
 * entry code is the interrupted instruction (the unwinder's saved
 * registers), named by the function holding it even at its first byte,
 * where the return address rule (address - 1) names the one before. The
 * entry code as each architecture's kallsyms shows it: x86 and arm64 the
 * entry text, s390x the irqentry text and two named handlers.
 */
static void test_exact_frames(void)
{
	static const char x86_text[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81010000 T handle_softirqs\n"
		"ffffffff81020000 T sysvec_apic_timer_interrupt\n"
		"ffffffff81030000 T do_one_initcall\n"
		"ffffffff81c00010 T __entry_text_start\n"
		"ffffffff81c00290 T __irqentry_text_start\n"
		"ffffffff81c00ef0 T asm_sysvec_apic_timer_interrupt\n"
		"ffffffff81c01150 T __irqentry_text_end\n"
		"ffffffff81c01b17 T __entry_text_end\n"
		"ffffffffc0270000 t oracle_exit\t[oracle]\n"
		"ffffffffc027c000 t oracle_init\t[oracle]\n";
	static const char arm64_text[] =
		"ffff800008410000 T __irqentry_text_start\n"
		"ffff800008410000 T gic_handle_irq\n"
		"ffff80000841029c T __irqentry_text_end\n"
		"ffff8000084102c8 T __entry_text_start\n"
		"ffff800008411284 t el1h_64_irq\n"
		"ffff800008414340 T __entry_text_end\n"
		"ffff8000084166dc T call_on_irq_stack\n"
		"ffff800008418750 t do_interrupt_handler\n"
		"ffff800008500000 T arch_cpu_idle\n";
	static const char s390_text[] =
		"0000000000a31000 T arch_cpu_idle\n"
		"0000000000a31a80 T pgm_check_handler\n"
		"0000000000a31bf0 T psw_idle\n"
		"0000000000a31c36 T psw_idle_exit\n"
		"0000000000a331e0 T __irqentry_text_start\n"
		"0000000000a331e0 T ext_int_handler\n"
		"0000000000a33400 T __irqentry_text_end\n"
		"0000000000a40000 T __clear_user\n";
	/* A free in the softirq of a timer interrupt at oracle_init's first byte. */
	const uint64_t x86[] = { 0xffffffff81010040ULL, 0xffffffff81020030ULL,
				 0xffffffff81c00f0aULL, 0xffffffffc027c000ULL,
				 0xffffffff81030059ULL };
	/* An interrupt in idle, through the irqchip's handler (irqentry text, not an entry). */
	const uint64_t arm64[] = { 0xffff800008410020ULL, 0xffff8000084166f0ULL,
				   0xffff800008418790ULL, 0xffff8000084112e8ULL,
				   0xffff800008500000ULL };
	/* A fault at __clear_user's first byte; an interrupt in psw_idle. */
	const uint64_t s390_fault[] = { 0x0000000000a31b00ULL, 0x0000000000a40000ULL };
	const uint64_t s390_irq[] = { 0x0000000000a33200ULL, 0x0000000000a31c36ULL,
				      0x0000000000a31040ULL };
	struct ksyms *k = load_snapshots("x86", x86_text, "oracle ffffffffc0270000 ffffffffc0270000 "
				      "65536\n", NULL, "exact frames, x86");
	unsigned int i;

	if (k) {
		for (i = 0; i < 5; i++)
			ok(ksyms_frame_exact(k, x86, i) == (i == 3),
			   "exact frames, x86: frame %u is %s", i, i == 3 ? "exact" : "a return address");
		is_str(fmt_frame(k, x86, 3), "oracle_init+0x0 [oracle]",
		       "exact frames, x86: the interrupted first byte names its function");
		is_str(fmt_ret(k, x86[3]), "oracle_exit+0xc000 [oracle]",
		       "exact frames, x86: as a return address it would name the function before");
		is_str(fmt_frame(k, x86, 4), "do_one_initcall+0x59",
		       "exact frames, x86: the frame after it is a return address again");
		ok(!ksyms_frame_exact(k, x86, 0), "exact frames, x86: the first frame never is");
		ksyms_free(k);
	}
	k = load_snapshots("arm64", arm64_text, "", NULL, "exact frames, arm64");
	if (k) {
		for (i = 0; i < 5; i++)
			ok(ksyms_frame_exact(k, arm64, i) == (i == 4),
			   "exact frames, arm64: frame %u is %s (the irqentry text is no entry here)",
			   i, i == 4 ? "exact" : "a return address");
		is_str(fmt_frame(k, arm64, 4), "arch_cpu_idle+0x0",
		       "exact frames, arm64: the interrupted instruction after el1h_64_irq");
		ksyms_free(k);
	}
	k = load_snapshots("s390", s390_text, "", NULL, "exact frames, s390x");
	if (k) {
		ok(ksyms_frame_exact(k, s390_fault, 1),
		   "exact frames, s390x: after pgm_check_handler");
		is_str(fmt_frame(k, s390_fault, 1), "__clear_user+0x0",
		       "exact frames, s390x: a fault at a function's first byte names it");
		ok(ksyms_frame_exact(k, s390_irq, 1) && !ksyms_frame_exact(k, s390_irq, 2),
		   "exact frames, s390x: after ext_int_handler (irqentry text), and only there");
		is_str(fmt_frame(k, s390_irq, 1), "psw_idle_exit+0x0",
		       "exact frames, s390x: the interrupted psw_idle_exit");
		ksyms_free(k);
	}
	ok(!ksyms_frame_exact(NULL, x86, 3), "exact frames: none without symbols");
}

static void test_clean_path(void)
{
	static const char *const cases[][2] = {
		{ "/a/b/../c", "/a/c" }, { "/a/./b//c", "/a/b/c" }, { "a/../../b", "../b" },
		{ "/../a", "/a" }, { "./x.c", "x.c" }, { "/work/main/tests/kmod/./o.c",
		"/work/main/tests/kmod/o.c" }, { "a/b/..", "a" }, { "/", "/" }, { "..", ".." },
		{ "a/..", "." },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[256];

		snprintf(buf, sizeof(buf), "%s", cases[i][0]);
		srcline_clean_path(buf);
		is_str(buf, cases[i][1], "clean_path(%s)", cases[i][0]);
	}
}

static void test_meta(void)
{
	struct rpt_meta *m;
	char err[512];
	int missing;
	uint64_t v;

	test_write_text(test_path("kmemtrace.meta"),
		   "# kmemtrace metadata\n"
		   "meta_version 1\n"
		   "kernel_release 6.1.0-56-amd64\n"
		   "command sh -c 'echo  two  spaces'\n"
		   "overruns_start 10\n"
		   "overruns_end 25\n"
		   "future_key whatever\n"
		   "bad_number 12x\n");
	m = meta_load(test_path("kmemtrace.meta"), err, sizeof(err), &missing);
	if (!ok(m != NULL, "meta: loaded"))
		return;
	is_str(meta_get(m, "kernel_release"), "6.1.0-56-amd64", "meta: a value");
	is_str(meta_get(m, "command"), "sh -c 'echo  two  spaces'",
	       "meta: the value runs to the end of the line");
	ok(meta_get_u64(m, "overruns_end", &v) && v == 25, "meta: a number");
	ok(!meta_get_u64(m, "bad_number", &v), "meta: not a number");
	ok(!meta_get(m, "hostname"), "meta: absent key");
	meta_free(m);
	m = meta_load(test_path("no.meta"), err, sizeof(err), &missing);
	ok(!m && missing, "meta: missing file flagged");
}

int main(void)
{
	if (!test_dir_make("report-sym")) {
		perror("mkdtemp");
		return 1;
	}
	test_kallsyms();
	test_kallsyms_bad();
	test_many_modules();
	test_module_overlap();
	test_unlisted_module();
	test_module_changes();
	test_module_init_over_unloaded();
	test_exact_frames();
	test_clean_path();
	test_meta();
	test_dir_remove();
	return done_testing();
}
