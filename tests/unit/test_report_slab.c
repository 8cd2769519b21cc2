// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_report_slab.c - unit tests of what kmemtrace-report takes from the
 * coverage and slab_alias lines of kmemtrace.meta (report_slab.c) and of
 * what they change in the analysis: which double frees are certain, the
 * events the module's probes saw (counted, and their frees no kind
 * errors), and --cache-name by a merged name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "kmt_reader.h"
#include "core/report_core.h"
#include "core/report_meta.h"
#include "core/report_slab.h"
#include "tap.h"
#include "testlib.h"

/* The slab information of a kmemtrace.meta holding text. */
static struct rpt_slab *slab_of(const char *text, struct rpt_meta **meta)
{
	const char *path = test_path("kmemtrace.meta");
	char err[256];
	int missing;

	*meta = NULL;
	if (test_write_text(path, text))
		return NULL;
	*meta = meta_load(path, err, sizeof(err), &missing);
	if (!*meta) {
		diag("%s", err);
		return NULL;
	}
	return slab_info_new(*meta);
}

/* The aliases of name joined by ',' ("" if none). */
static const char *aliases(const struct rpt_slab *s, const char *name)
{
	static char buf[1024];
	const char *v[16];
	size_t n = slab_aliases(s, name, v, 16), i;

	buf[0] = '\0';
	for (i = 0; i < n && i < 16; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? "," : "", v[i]);
	return buf;
}

static void test_coverage(void)
{
	struct rpt_meta *m;
	struct rpt_slab *s;
	const struct slab_cov *c;

	s = slab_of("coverage kmalloc tracepoint\n"
		    "coverage kmem_cache_alloc_bulk kretprobe kmem_cache_alloc_bulk_noprof\n"
		    "coverage kmem_cache_free_bulk unseen kprobes disabled  \n"
		    "coverage kmalloc_nolock absent no such function in this kernel\n"
		    "coverage kfree_nolock\n"
		    "coverage\n", &m);
	if (!ok(s != NULL, "coverage: read"))
		return;
	is_u64(slab_ncov(s), 5, "coverage: five paths (a line without PATH skipped)");
	c = slab_cov(s, 1);
	ok(c && strcmp(c->path, "kmem_cache_alloc_bulk") == 0 && strcmp(c->how, "kretprobe") == 0 &&
	   strcmp(c->detail, "kmem_cache_alloc_bulk_noprof") == 0 &&
	   c->kind == SLAB_PATH_CACHE_ALLOC && !c->missed,
	   "coverage: kmem_cache_alloc_bulk by kretprobe, a cache allocation path, seen");
	c = slab_cov(s, 2);
	ok(c && strcmp(c->detail, "kprobes disabled") == 0 && c->kind == SLAB_PATH_FREE &&
	   c->missed, "coverage: kmem_cache_free_bulk unseen, a free path; DETAIL to the end, trimmed");
	c = slab_cov(s, 3);
	ok(c && c->kind == SLAB_PATH_KMALLOC && !c->missed,
	   "coverage: kmalloc_nolock absent: nothing missed");
	c = slab_cov(s, 4);
	ok(c && strcmp(c->how, "") == 0 && strcmp(c->detail, "") == 0 && c->missed,
	   "coverage: a line without HOW is not taken as seen");
	is_u64(slab_nmissed(s), 2, "coverage: two missed");
	ok(slab_cache_allocs_seen(s), "coverage: every cache allocation path seen");
	ok(!slab_kmalloc_allocs_missed(s), "coverage: no kmalloc allocation path missed");
	slab_info_free(s);
	meta_free(m);

	s = slab_of("coverage kmem_cache_alloc_bulk unseen kprobes disabled\n"
		    "coverage kmalloc_nolock unseen kprobes disabled\n", &m);
	ok(s && !slab_cache_allocs_seen(s) && slab_kmalloc_allocs_missed(s),
	   "coverage: both allocation paths unseen");
	slab_info_free(s);
	meta_free(m);

	s = slab_of("coverage kmem_cache_alloc_bulk kretprobe kmem_cache_alloc_bulk_noprof (3 calls missed)\n"
		    "coverage kfree_rcu_sheaf kretprobe kfree_rcu_sheaf (0 calls missed)\n"
		    "coverage kmalloc_nolock kretprobe f (x calls missed)\n"
		    "coverage kfree_nolock kprobe f 7 calls missed)\n", &m);
	c = slab_cov(s, 0);
	ok(c && c->calls_missed == 3 && c->missed && !slab_cache_allocs_seen(s),
	   "coverage: a kretprobe that missed 3 calls: the path is missed");
	c = slab_cov(s, 1);
	ok(c && c->calls_missed == 0 && !c->missed && c->kind == SLAB_PATH_FREE,
	   "coverage: kfree_rcu_sheaf, 0 calls missed: a free path, seen");
	ok(slab_cov(s, 2) && !slab_cov(s, 2)->missed && slab_cov(s, 3) && !slab_cov(s, 3)->missed,
	   "coverage: no number, or no parenthesis: no calls missed");
	slab_info_free(s);
	meta_free(m);

	s = slab_of("meta_version 1\n", &m);
	ok(s && slab_ncov(s) == 0 && !slab_cache_allocs_seen(s) && !slab_kmalloc_allocs_missed(s),
	   "no coverage lines: cache allocations not known to be seen");
	slab_info_free(s);
	meta_free(m);
	s = slab_info_new(NULL);
	ok(s && slab_ncov(s) == 0 && slab_nnames(s) == 0, "no metadata at all: nothing");
	slab_info_free(s);
}

#define LONG31	"kmt_a_cache_with_a_very_long_na"	/* what the module keeps of the next */
#define LONGFULL LONG31 "me"
_Static_assert(sizeof(LONG31) == KMT_CACHE_NAME_LEN, "LONG31 is what a CACHE_DESC keeps");

static void test_aliases(void)
{
	struct rpt_meta *m;
	struct rpt_slab *s;

	s = slab_of("slab_alias :0000096 :0000096\n"
		    "slab_alias kmalloc-96 :0000096\n"
		    "slab_alias kmt_oracle_merged :0000096\n"
		    "slab_alias zeta :0000096\n"
		    "slab_alias dentry dentry\n"
		    "slab_alias dentry_alias dentry\n"
		    "slab_alias odd\\x20name dentry\n"
		    "slab_alias " LONGFULL " :0000064\n"
		    "slab_alias other64 :0000064\n"
		    "slab_alias lonely\n"
		    "slab_alias nul\\x00 dentry\n", &m);
	if (!ok(s != NULL, "aliases: read"))
		return;
	is_u64(slab_nnames(s), 9, "aliases: nine names (no target, a NUL byte: skipped)");
	is_str(aliases(s, "kmalloc-96"), "kmt_oracle_merged,zeta",
	       "aliases: merged under a :id, without the :id and the name itself");
	is_str(aliases(s, "kmt_oracle_merged"), "kmalloc-96,zeta",
	       "aliases: ... from any of its names");
	is_str(aliases(s, "dentry"), "dentry_alias,odd name",
	       "aliases: merged into a named directory; \\x20 decoded");
	is_str(aliases(s, "dentry_alias"), "dentry,odd name", "aliases: the directory is a name too");
	is_str(aliases(s, LONG31), LONGFULL ",other64",
	       "aliases: a name cut to 31 bytes finds its cache, its whole name among the others");
	is_str(aliases(s, "nosuch"), "", "aliases: an unknown name has none");
	is_u64(slab_aliases(s, "kmalloc-96", NULL, 0), 2, "aliases: counted without room for them");
	ok(slab_names_cache(s, "kmt_oracle_merged", "kmalloc-96"), "names: by an alias");
	ok(slab_names_cache(s, ":0000096", "kmalloc-96"), "names: by SLUB's name of the cache");
	ok(slab_names_cache(s, "kmalloc-96", "kmalloc-96"), "names: by its own name");
	ok(!slab_names_cache(s, "dentry", "kmalloc-96"), "names: not by another cache's name");
	ok(!slab_names_cache(s, "nosuch", "kmalloc-96"), "names: not by an unknown name");
	ok(slab_names_cache(s, LONGFULL, LONG31), "names: a cut name by its whole name");
	ok(slab_names_cache(NULL, "a", "a") && !slab_names_cache(NULL, "a", "b"),
	   "names: without aliases, only itself");
	slab_info_free(s);
	meta_free(m);

	/* Two caches whose names both start with the cut name: which one is unknown. */
	s = slab_of("slab_alias " LONGFULL "1 a\nslab_alias " LONGFULL "2 b\n", &m);
	is_str(s ? aliases(s, LONG31) : NULL, "", "aliases: an ambiguous cut name has none");
	slab_info_free(s);
	meta_free(m);
}

#define SITE_A	0xffffffff81000100ULL
#define SITE_F	0xffffffff81000200ULL
#define CACHE	0xffff888003000000ULL
#define PTR(n)	(0xffff888100000000ULL + 0x100 * (n))

/* A cache object and a kmalloc object, each freed twice; some events probed. */
static int double_free_trace(const char *dir, struct gen **out)
{
	struct gen *g = gen_open(dir, 1, NULL);
	uint64_t t = 100;
	int w = 0;

	if (!g)
		return -1;
	w |= gen_cache_desc(g, 0, t++, CACHE, 88, 96, "kmalloc-96");
	gen_set_flags(g, 0, KMT_F_PROBED);
	w |= gen_cache_alloc(g, 0, t++, SITE_A, PTR(1), CACHE, 88, 96, KMT_NODE_ANY, 1);
	w |= gen_cache_free(g, 0, t++, SITE_F, PTR(1), CACHE, 1);
	gen_set_flags(g, 0, 0);
	w |= gen_cache_free(g, 0, t++, SITE_F, PTR(1), CACHE, 1);
	w |= gen_kmalloc(g, 0, t++, SITE_A + 8, PTR(2), 90, 96, KMT_NODE_ANY, 1);
	w |= gen_kfree(g, 0, t++, SITE_F + 8, PTR(2), 1);
	w |= gen_kfree(g, 0, t++, SITE_F + 8, PTR(2), 1);
	/* A probed free of an object from before the trace. */
	gen_set_flags(g, 0, KMT_F_PROBED);
	w |= gen_kfree(g, 0, t++, SITE_F + 16, PTR(3), 1);
	gen_set_flags(g, 0, 0);
	if (w || gen_flush(g)) {
		gen_close(g);
		return -1;
	}
	*out = g;
	return 0;
}

/* The uncertain flag of the double free freed at site (-1: none found). */
static int uncertain_at(const struct rpt *r, uint64_t free_site)
{
	size_t i;

	for (i = 0; i < rpt_nerrors(r); i++) {
		const struct rpt_error *e = rpt_error(r, i);

		if (e->kind == RPT_ERR_DOUBLE_FREE && e->free_site == free_site)
			return e->uncertain;
	}
	return -1;
}

static void test_double_free_certainty(void)
{
	static const struct {
		unsigned int flags;
		int cache, kmalloc;
		const char *what;
	} cases[] = {
		{ 0, 1, 0, "no coverage: a cache object's uncertain, a kmalloc one's certain" },
		{ RPT_CACHE_ALLOCS_SEEN, 0, 0, "kmem_cache_alloc_bulk seen: both certain" },
		{ RPT_CACHE_ALLOCS_SEEN | RPT_KMALLOC_ALLOCS_MISSED, 0, 1,
		  "kmalloc_nolock unseen: the kmalloc object's uncertain" },
		{ RPT_KMALLOC_ALLOCS_MISSED, 1, 1, "both unseen: both uncertain" },
	};
	struct gen *g;
	size_t i;

	if (!ok(double_free_trace(test_path("df"), &g) == 0, "double frees: trace written"))
		return;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rpt *r = test_analyse(test_path("df"), NULL, cases[i].flags);

		if (!ok(r != NULL, "%s: analysed", cases[i].what))
			continue;
		is_u64(rpt_totals(r)->double_frees, 2, "%s: two double frees", cases[i].what);
		ok(uncertain_at(r, SITE_F) == cases[i].cache &&
		   uncertain_at(r, SITE_F + 8) == cases[i].kmalloc, "%s", cases[i].what);
		rpt_free(r);
	}
	{
		struct rpt *r = test_analyse(test_path("df"), NULL, 0);

		is_u64(r ? rpt_totals(r)->probed_allocs : 99, gen_totals(g)->probed_allocs,
		       "probed allocations as the generator wrote them");
		is_u64(r ? rpt_totals(r)->probed_frees : 99, gen_totals(g)->probed_frees,
		       "probed frees as the generator wrote them (a tracked and an untracked one)");
		rpt_free(r);
	}
	gen_close(g);
}

/*
 * kfree_bulk() (a probed KFREE) of a cache object and a kfree_rcu() sheaf
 * (a probed CACHE_FREE) of a kmalloc object are no errors; the same frees
 * through the tracepoints are.
 */
static void test_probed_frees(void)
{
	struct gen *g = gen_open(test_path("pf"), 1, NULL);
	uint64_t t = 100;
	struct rpt *r;
	int w = 0, probed;

	if (!ok(g != NULL, "probed frees: generator"))
		return;
	w |= gen_cache_desc(g, 0, t++, CACHE, 88, 96, "foo");
	for (probed = 1; probed >= 0; probed--) {
		uint64_t base = probed ? 0 : 10;

		w |= gen_cache_alloc(g, 0, t++, SITE_A, PTR(base + 1), CACHE, 88, 96, KMT_NODE_ANY, 1);
		w |= gen_kmalloc(g, 0, t++, SITE_A + 8, PTR(base + 2), 90, 96, KMT_NODE_ANY, 1);
		gen_set_flags(g, 0, probed ? KMT_F_PROBED : 0);
		w |= gen_kfree(g, 0, t++, SITE_F, PTR(base + 1), 1);
		w |= gen_cache_free(g, 0, t++, SITE_F + 8, PTR(base + 2), CACHE, 1);
		gen_set_flags(g, 0, 0);
	}
	if (!ok(w == 0 && gen_flush(g) == 0, "probed frees: trace written")) {
		gen_close(g);
		return;
	}
	r = test_analyse(test_path("pf"), NULL, 0);
	ok(r && rpt_error_count(r, RPT_ERR_KFREE_OF_CACHE_OBJ) == 1 &&
	   rpt_error_count(r, RPT_ERR_CACHE_FREE_OF_KMALLOC) == 1,
	   "probed frees: only the tracepoints' kfree() and kmem_cache_free() are errors");
	ok(r && rpt_totals(r)->frees == 4 && rpt_totals(r)->untracked_frees == 0 &&
	   rpt_totals(r)->outstanding == 0, "probed frees: all four free their objects");
	rpt_free(r);
	gen_close(g);
}

/* --cache-name by a merged name selects the described cache, not kmalloc-N. */
static void test_select_by_alias(void)
{
	struct rpt_filter f = { .cache_name = "kmt_oracle_merged" };
	struct rpt_meta *m;
	struct rpt_slab *s;
	struct gen *g;
	struct rpt *r;

	s = slab_of("slab_alias kmalloc-96 :0000096\nslab_alias kmt_oracle_merged :0000096\n", &m);
	if (!ok(s && double_free_trace(test_path("sel"), &g) == 0, "select: trace and aliases"))
		goto out;
	r = test_analyse(test_path("sel"), &f, 0);
	ok(r && rpt_totals(r)->allocs == 0, "select: without aliases, no cache of that name");
	rpt_free(r);
	f.slab = s;
	r = test_analyse(test_path("sel"), &f, 0);
	ok(r && rpt_totals(r)->allocs == 1,
	   "select: with them, the cache's one allocation (not the kmalloc-96 kmalloc)");
	rpt_free(r);
	f.cache_name = ":0000096";
	r = test_analyse(test_path("sel"), &f, 0);
	ok(r && rpt_totals(r)->allocs == 1, "select: by SLUB's own name of the cache");
	rpt_free(r);
	f.cache_name = "kmalloc-96";
	r = test_analyse(test_path("sel"), &f, 0);
	ok(r && rpt_totals(r)->allocs == 2, "select: kmalloc-96 is the cache and the size class");
	rpt_free(r);
	gen_close(g);
out:
	slab_info_free(s);
	meta_free(m);
}

int main(void)
{
	if (!test_dir_make("report-slab")) {
		perror("mkdtemp");
		return 1;
	}
	test_coverage();
	test_aliases();
	test_double_free_certainty();
	test_probed_frees();
	test_select_by_alias();
	test_dir_remove();
	return done_testing();
}
