// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmemtrace-report - merges a kmemtrace trace's cpuN.out files in time
 * order and reports allocations per call site, per cache and per object,
 * errors in the traced kernel, outstanding objects and lost records. This
 * file is its command line; report_run.c runs what it asks for.
 */
#include <argp.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmt_ahead.h"
#include "kmt_exit.h"
#include "report_run.h"
#include "sym/sym_srcline.h"
#include "views/view_growth.h"
#include "views/view_interval.h"
#include "views/view_life.h"
#include "views/view_pages.h"
#include "views/view_stacks.h"

#define PROG "kmemtrace-report"

const char *argp_program_version = PROG " " KMT_VERSION " (trace format 1.x)";

static const char doc[] =
	"Summarize a kmemtrace trace: allocations per call site, per cache or per object, "
	"internal fragmentation, cross-CPU frees, cross-node allocations, objects still "
	"outstanding at the end, errors of the traced kernel (kfree of a cache object, cache "
	"mismatches, double frees, short allocations) and lost records.\n"
	"\n"
	"Reads DIR/cpuN.out (default: the current directory) or the FILEs given, with the "
	"metadata (kmemtrace.meta, kallsyms, modules) of DIR or of the first FILE's directory. "
	"Any byte order and word size is read on any machine.\n"
	"\n"
	"Exit status: 0 success, 1 usage error, 2 bad trace data (the message names the file "
	"and byte offset), 3 I/O error, 4 out of memory or internal error."
	"\v"
	"Filters select allocations; a free counts when its object's allocation was selected. "
	"--time keeps only the records in the window, as if the trace had been taken then; "
	"times are NUMBER[ns|us|ms|s] after the first record.\n"
	"\n"
	"A cache SLUB merged others into is shown with their names too (from kmemtrace.meta), "
	"and --cache-name selects it by any of them. The header says which allocation paths "
	"the trace did not see; a double free is marked uncertain (double_free?) when an "
	"allocation path of its object's kind is among them.\n"
	"\n"
	"Sort keys: frag, hit, bytes, req, callsite, ptr, pingpong (= xcpu), frees, age, "
	"outstanding, failed, xnode, name, live. Default: frag,hit,bytes (as perf kmem); "
	"with --cache: bytes,hit.\n"
	"\n"
	"EXAMPLES:\n"
	"  kmemtrace-report out/                   summary, top 20 call sites\n"
	"  kmemtrace-report -s bytes -l 0 out/     every call site, most bytes first\n"
	"  kmemtrace-report --cache out/           per cache\n"
	"  kmemtrace-report --alloc -s pingpong out/   objects freed on other CPUs\n"
	"  kmemtrace-report --cache-name kmalloc-64 --cpu 0-1 --time 1s,2.5s out/\n"
	"  kmemtrace-report --json out/ | python3 -m json.tool\n"
	"  kmemtrace-report --ko foo.ko --vmlinux vmlinux out/   with file:line\n"
	"  kmemtrace-report --raw out/ | grep kfree\n"
	"  kmemtrace-report -j 1 out/               on one thread (the same report)\n"
	"  kmemtrace-report --interval 1s out/      per cache, second by second\n"
	"  kmemtrace-report --interval 100ms --caller -s allocs --csv out/\n"
	"  kmemtrace-report --interval 1s --stacks -l 5 out/  top 5 stacks each second\n"
	"  kmemtrace-report --stacks -l 10 out/    the 10 commonest kernel stacks\n"
	"  kmemtrace-report --stacks -s bytes --min-count 5 --exclude kmem_cache_alloc_node out/\n"
	"  kmemtrace-report --folded out/ | flamegraph.pl >kmalloc.svg\n"
	"  kmemtrace-report --folded=bytes out/ | inferno-flamegraph >bytes.svg\n"
	"  kmemtrace-report --folded=frees out/ | flamegraph.pl >frees.svg\n"
	"  kmemtrace-report --lifetimes out/       how long each call site's objects live\n"
	"  kmemtrace-report --lifetimes --short-lived 100us --long-lived 10s --json out/\n"
	"  kmemtrace-report --pages out/           page allocator: by order, migrate type, GFP\n"
	"  kmemtrace-report --html report.html out/   one self-contained page with charts\n"
	"  kmemtrace-report --at 2.5s out/         what was outstanding 2.5 s into the trace\n"
	"  kmemtrace-report --diff 10s,15s out/    what grew from 10 s to 15 s: leaks first\n"
	"  kmemtrace-report --diff 10s,15s --cache-name kmalloc-64 --json out/\n"
	"  kmemtrace-report --pprof alloc.pb.gz out/ && go tool pprof -top alloc.pb.gz\n"
	"  go tool pprof -sample_index=inuse_space -tagfocus cache=kmalloc-64 -http=: alloc.pb.gz\n";

static const char args_doc[] = "[DIR | FILE...]";

enum {
	OPT_CALLER = 256, OPT_ALLOC, OPT_CACHE, OPT_CPU, OPT_PID, OPT_CACHE_NAME, OPT_MIN_SIZE,
	OPT_TIME, OPT_JSON, OPT_CSV, OPT_RAW, OPT_RAW_IP, OPT_VMLINUX, OPT_KO, OPT_MODDIR,
	OPT_RESOLVER, OPT_ALLOW_TRUNC, OPT_NO_PROGRESS, OPT_INTERVAL, OPT_STACKS, OPT_FOLDED,
	OPT_MIN_COUNT, OPT_EXCLUDE, OPT_LIFETIMES, OPT_SHORT, OPT_LONG, OPT_PAGES, OPT_HTML,
	OPT_PPROF,
};

/* Apart from the list above, so that options added there and here do not meet. */
enum { OPT_AT = 512, OPT_DIFF };

static const struct argp_option options[] = {
	{ NULL, 0, NULL, 0, "Views (one of):", 1 },
	{ "caller", OPT_CALLER, NULL, 0, "Per call site (default)", 1 },
	{ "alloc", OPT_ALLOC, NULL, 0, "Per object address (memory grows with addresses)", 1 },
	{ "cache", OPT_CACHE, NULL, 0, "Per cache; kmalloc() by size class (kmalloc-N)", 1 },
	{ "raw", OPT_RAW, NULL, 0, "Every record in time order, one line each, no summary", 1 },
	{ "interval", OPT_INTERVAL, "T", 0,
	  "A table per interval of T (like 1s, 100ms): per cache, per call site with "
	  "--caller, or per kernel stack with --stacks; sort keys bytes, allocs, frees, net, "
	  "frag, name", 1 },
	{ "stacks", OPT_STACKS, NULL, 0,
	  "Allocations by whole kernel stack (sort keys hit, bytes, req, outstanding, failed, "
	  "frees), outstanding objects by stack, each call site's callers, and frees by stack "
	  "(traces with stack_frees=1)", 1 },
	{ "folded", OPT_FOLDED, "hits|bytes|req|frees", OPTION_ARG_OPTIONAL,
	  "Folded stacks for flame graphs: frames root first joined by ';', a blank and the "
	  "count (default hits) or bytes; frees: the stacks of frees (stack_frees=1) by count",
	  1 },
	{ "lifetimes", OPT_LIFETIMES, NULL, 0,
	  "How long objects live, per call site and cache (count, p50, p90, p99, max, log2 "
	  "histogram; live ones' age), short-lived and long-lived call sites", 1 },
	{ "pages", OPT_PAGES, NULL, 0,
	  "Page allocator (traces with pages=1): by order, migrate type and GFP flags; slab and "
	  "page memory with large kmallocs counted once", 1 },
	{ "at", OPT_AT, "T", 0,
	  "What was outstanding at T (like 2.5s) after the first record: by call site, cache "
	  "and stack, with the objects, oldest first", 1 },
	{ "diff", OPT_DIFF, "T1,T2", 0,
	  "What grew from T1 to T2: by call site, cache and stack, objects and bytes "
	  "outstanding at each, allocations and frees between, survivors (allocated between, "
	  "live at T2) and their ages; most growth first", 1 },
	{ NULL, 0, NULL, 0, "Output:", 2 },
	{ "html", OPT_HTML, "FILE", 0,
	  "Also write one self-contained HTML page (tables and SVG charts) to FILE", 2 },
	{ "pprof", OPT_PPROF, "FILE", 0,
	  "Also write the slab allocations as a gzipped pprof profile (go tool pprof, Pyroscope, "
	  "Parca): whole stacks when the trace has them, labels cache and cpu; sample types "
	  "alloc_objects, alloc_space, inuse_objects, inuse_space (outstanding at the end), "
	  "requested_space, failed_allocs", 2 },
	{ "short-lived", OPT_SHORT, "T", 0,
	  "--lifetimes, --html: short-lived when half the freed objects live at most T "
	  "(default 1ms)", 2 },
	{ "long-lived", OPT_LONG, "T", 0,
	  "--lifetimes, --html: long-lived when half the freed, or the oldest live, exceed T "
	  "(default 1s)", 2 },
	{ "sort", 's', "KEY[,KEY...]", 0, "Sort the view's rows (see below)", 2 },
	{ "lines", 'l', "N", 0, "Rows per table (text default 20, 0 = all)", 2 },
	{ "json", OPT_JSON, NULL, 0, "One JSON document (Documentation/report-json.md)", 2 },
	{ "csv", OPT_CSV, NULL, 0, "The view as CSV with a header row", 2 },
	{ "wide", 'w', NULL, 0, "Text: long symbols on their row, not on a line above it", 2 },
	{ "no-progress", OPT_NO_PROGRESS, NULL, 0, "No progress indicator on a terminal", 2 },
	{ NULL, 0, NULL, 0, "Filters:", 3 },
	{ "cpu", OPT_CPU, "LIST", 0, "Allocations on these CPUs (0,2-3)", 3 },
	{ "pid", OPT_PID, "PID", 0, "Allocations by this pid", 3 },
	{ "cache-name", OPT_CACHE_NAME, "NAME", 0,
	  "Allocations from this cache, by any name SLUB merged into it (kmalloc-N: kmalloc() "
	  "of that size)", 3 },
	{ "min-size", OPT_MIN_SIZE, "BYTES", 0, "Allocations requesting at least BYTES", 3 },
	{ "time", OPT_TIME, "START,END", 0, "Records in this window (either may be empty)", 3 },
	{ "min-count", OPT_MIN_COUNT, "N", 0,
	  "--stacks, --folded, --html: stacks seen at least N times", 3 },
	{ "exclude", OPT_EXCLUDE, "SYM[,SYM...]", 0,
	  "--stacks, --folded, --html: leave out stacks through any of these functions (or 0xADDRs)",
	  3 },
	{ NULL, 0, NULL, 0, "Symbols:", 4 },
	{ "raw-ip", OPT_RAW_IP, NULL, 0, "Raw addresses instead of function+0xoff", 4 },
	{ "vmlinux", OPT_VMLINUX, "FILE", 0, "file:line for the core kernel from its DWARF", 4 },
	{ "ko", OPT_KO, "FILE.ko", 0, "file:line for a module (repeatable)", 4 },
	{ "module-dir", OPT_MODDIR, "DIR", 0, "Search DIR recursively for NAME.ko", 4 },
	{ "resolver", OPT_RESOLVER, "dw|bfd", 0, "DWARF reader: libdw (default) or libbfd", 4 },
	{ NULL, 0, NULL, 0, "Input:", 5 },
	{ "allow-truncated", OPT_ALLOW_TRUNC, NULL, 0,
	  "Ignore a partial record at the end of a file (said on stderr)", 5 },
	{ "jobs", 'j', "N", 0,
	  "Threads: from 2 on, the files are read and merged on a thread of their own while the "
	  "analysis runs, from 3 on the analysis is divided by address over up to 3 more "
	  "(default: the CPUs this process may run on; 1: one thread); the report is the same", 5 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

/* The job for report_run(), and what only the parsing needs. */
struct args {
	struct report_job job;
	bool view_set, json, csv, stacks, pages, stack_filters, life_set;
	const char *sort_arg;
	uint8_t *cpus;		/* --cpu's set, which job.f.cpus points to */
	char **excl;		/* --exclude's names, which job.stk.exclude points to */
	char filters[512];	/* the filters in words, for the header */
};

/* Unsigned decimal with a range check. 0, or -1. */
static int parse_u64(const char *s, uint64_t max, uint64_t *v)
{
	unsigned long long x;
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end || x > max)
		return -1;
	*v = x;
	return 0;
}

/* NUMBER[.FRACTION][ns|us|ms|s] to ns, without floating-point rounding. */
static int parse_time(const char *s, uint64_t *ns)
{
	static const struct {
		const char *sfx;
		uint64_t mul;
	} units[] = { { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
		      { "", 1 } };
	char num[64];
	size_t len = strspn(s, "0123456789."), i;
	uint64_t ip, fp = 0, scale = 1, mul = 0;
	char *dot;

	if (!len || len >= sizeof(num))
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(s + len, units[i].sfx) == 0)
			mul = units[i].mul;
	if (!mul)
		return -1;
	memcpy(num, s, len);
	num[len] = '\0';
	dot = strchr(num, '.');
	if (dot) {
		char *d;

		*dot = '\0';
		if (strchr(dot + 1, '.') || (!*num && !dot[1]))
			return -1;
		for (d = dot + 1; *d; d++) {
			/* Digits finer than 1 ns are ignored, which keeps fp * mul exact. */
			if (scale >= mul)
				break;
			fp = fp * 10 + (uint64_t)(*d - '0');
			scale *= 10;
		}
	}
	if (!*num)
		ip = 0;
	else if (parse_u64(num, UINT64_MAX, &ip))
		return -1;
	if (ip > UINT64_MAX / mul || fp * mul / scale > UINT64_MAX - ip * mul)
		return -1;
	*ns = ip * mul + fp * mul / scale;
	return 0;
}

static int parse_cpus(struct args *a, const char *s)
{
	const char *p = s;

	free(a->cpus);
	a->cpus = calloc(65536, 1);
	if (!a->cpus)
		return -1;
	while (*p) {
		char buf[32];
		size_t len = strcspn(p, ","), dash;
		uint64_t lo, hi;

		if (!len || len >= sizeof(buf))
			return -1;
		memcpy(buf, p, len);
		buf[len] = '\0';
		dash = strcspn(buf, "-");
		if (buf[dash]) {
			buf[dash] = '\0';
			if (parse_u64(buf, 65535, &lo) || parse_u64(buf + dash + 1, 65535, &hi) ||
			    hi < lo)
				return -1;
		} else {
			if (parse_u64(buf, 65535, &lo))
				return -1;
			hi = lo;
		}
		for (; lo <= hi; lo++)
			a->cpus[lo] = 1;
		p += len;
		if (*p == ',' && !*++p)
			return -1;
	}
	a->job.f.cpus = a->cpus;
	a->job.f.ncpus = 65536;
	return 0;
}

/* --at=T or --diff=T1,T2 into the job; the value is kept for messages. 0, or -1. */
static int parse_growth(struct args *a, int key, char *arg)
{
	struct growth_args *g = &a->job.growth;
	char *comma = strchr(arg, ',');
	int ret = -1;

	g->diff = key == OPT_DIFF;
	if (!g->diff) {
		if (!comma && !parse_time(arg, &g->t1))
			ret = 0;
	} else if (comma) {
		*comma = '\0';
		if (!parse_time(arg, &g->t1) && !parse_time(comma + 1, &g->t2))
			ret = 0;
		*comma = ',';
	}
	a->job.growth_opt = g->diff ? "--diff" : "--at";
	a->job.growth_val = arg;
	return ret;
}

/* --at and --diff: a view of their own, over every filter. */
static void check_growth(struct argp_state *st, struct args *a)
{
	const struct growth_args *g = &a->job.growth;

	if (!a->job.growth_opt)
		return;
	if (g->diff && g->t1 > g->t2)
		argp_error(st, "--diff: '%s': T1 is after T2", a->job.growth_val);
	if (a->job.raw || a->job.interval_ns || a->job.folded || a->view_set || a->stacks ||
	    a->job.lifetimes || a->pages)
		argp_error(st, "%s is a view of its own: not with --raw, --interval, --folded, "
			   "--stacks, --lifetimes, --pages, --caller, --alloc or --cache",
			   a->job.growth_opt);
	if (a->sort_arg)
		argp_error(st, "%s ranks by growth (most bytes first): it takes no --sort",
			   a->job.growth_opt);
	if (g->diff && a->job.pprof)
		argp_error(st, "--pprof writes one profile: with --at T it ends at T; for --diff, "
			   "write one --at each time and compare them (go tool pprof -diff_base)");
}

static void add_filter_text(struct args *a, const char *label, const char *val)
{
	size_t n = strlen(a->filters);

	snprintf(a->filters + n, sizeof(a->filters) - n, "%s%s %s", n ? ", " : "", label, val);
}

static void set_view(struct argp_state *st, struct args *a, enum out_view v)
{
	if (a->view_set && a->job.out.view != v)
		argp_error(st, "--caller, --alloc and --cache are exclusive");
	a->view_set = true;
	a->job.out.view = v;
}

static error_t parse_opt(int key, char *arg, struct argp_state *st)
{
	struct args *a = st->input;
	char err[512];
	uint64_t v = 0;

	switch (key) {
	case OPT_CALLER:
		set_view(st, a, VIEW_CALLER);
		break;
	case OPT_ALLOC:
		set_view(st, a, VIEW_ALLOC);
		break;
	case OPT_CACHE:
		set_view(st, a, VIEW_CACHE);
		break;
	case OPT_RAW:
		a->job.raw = true;
		break;
	case 's':
		a->sort_arg = arg;
		break;
	case 'l':
		if (parse_u64(arg, 1000000000, &v))
			argp_error(st, "--lines: '%s' is not a number from 0 to 1000000000", arg);
		a->job.out.lines = (long)v;
		break;
	case OPT_JSON:
		a->json = true;
		break;
	case OPT_CSV:
		a->csv = true;
		break;
	case 'w':
		a->job.out.wide = true;
		break;
	case OPT_NO_PROGRESS:
		a->job.no_progress = true;
		break;
	case OPT_CPU:
		if (parse_cpus(a, arg))
			argp_error(st, "--cpu: '%s' is not a list like 0,2-3 of CPUs 0..65535", arg);
		add_filter_text(a, "cpu", arg);
		break;
	case OPT_PID:
		if (parse_u64(arg, UINT32_MAX, &v))
			argp_error(st, "--pid: '%s' is not a pid", arg);
		a->job.f.has_pid = true;
		a->job.f.pid = (uint32_t)v;
		add_filter_text(a, "pid", arg);
		break;
	case OPT_CACHE_NAME:
		/* Longer than a CACHE_DESC holds: an alias may be (sysfs has whole names). */
		if (!*arg || strlen(arg) > 255)
			argp_error(st, "--cache-name: '%s' is not a cache name", arg);
		a->job.f.cache_name = arg;
		add_filter_text(a, "cache", arg);
		break;
	case OPT_MIN_SIZE:
		if (parse_u64(arg, UINT32_MAX, &v))
			argp_error(st, "--min-size: '%s' is not a byte count", arg);
		a->job.f.min_size = v;
		add_filter_text(a, "size >=", arg);
		break;
	case OPT_TIME: {
		char *comma = strchr(arg, ',');
		uint64_t s = 0, e = UINT64_MAX;

		if (!comma)
			argp_error(st, "--time: '%s' is not START,END", arg);
		*comma = '\0';
		if ((*arg && parse_time(arg, &s)) || (comma[1] && parse_time(comma + 1, &e)) ||
		    s > e) {
			*comma = ',';
			argp_error(st, "--time: '%s' is not START,END (like 1.5s,2s or ,500ms)", arg);
		}
		*comma = ',';
		a->job.f.has_time = true;
		a->job.f.t_start = s;
		a->job.f.t_end = e;
		a->job.time_val = arg;
		add_filter_text(a, "time", arg);
		break;
	}
	case OPT_RAW_IP:
		a->job.out.raw_ip = true;
		break;
	case OPT_VMLINUX:
		a->job.vmlinux = arg;
		break;
	case OPT_KO: {
		char **p = realloc(a->job.kos, (a->job.nkos + 1) * sizeof(*p));

		if (!p)
			argp_failure(st, KMT_EXIT_INTERNAL, ENOMEM, "--ko");
		a->job.kos = p;
		a->job.kos[a->job.nkos++] = arg;
		break;
	}
	case OPT_MODDIR:
		a->job.moddir = arg;
		break;
	case OPT_RESOLVER:
		if (strcmp(arg, "dw") == 0)
			a->job.resolver = SRCLINE_DW;
		else if (strcmp(arg, "bfd") == 0)
			a->job.resolver = SRCLINE_BFD;
		else
			argp_error(st, "--resolver: '%s' is neither dw nor bfd", arg);
		if (a->job.resolver == SRCLINE_BFD && !srcline_have_bfd())
			argp_error(st, "--resolver=bfd: this build has no libbfd (binutils-dev)");
		break;
	case OPT_ALLOW_TRUNC:
		a->job.allow_trunc = true;
		break;
	case 'j':
		if (parse_u64(arg, 1024, &v) || !v)
			argp_error(st, "-j: '%s' is not a number of threads from 1 to 1024", arg);
		a->job.jobs = (unsigned int)v;
		break;
	case ARGP_KEY_ARG:
		a->job.inputs = &st->argv[st->next - 1];
		a->job.ninputs = (size_t)(st->argc - st->next + 1);
		st->next = st->argc;
		break;
	case OPT_STACKS:
		a->stacks = true;
		break;
	case OPT_FOLDED:
		a->job.folded = true;
		if (!arg || strcmp(arg, "hits") == 0)
			a->job.stk.weight = FOLD_HITS;
		else if (strcmp(arg, "bytes") == 0)
			a->job.stk.weight = FOLD_BYTES;
		else if (strcmp(arg, "req") == 0)
			a->job.stk.weight = FOLD_REQ;
		else if (strcmp(arg, "frees") == 0)
			a->job.stk.weight = FOLD_FREES;
		else
			argp_error(st, "--folded: '%s' is not hits, bytes, req or frees", arg);
		break;
	case OPT_MIN_COUNT:
		if (parse_u64(arg, UINT64_MAX, &v))
			argp_error(st, "--min-count: '%s' is not a count", arg);
		a->job.stk.min_count = v;
		a->stack_filters = true;
		break;
	case OPT_EXCLUDE: {
		char *save = NULL, *tok;

		for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			char **p = realloc(a->excl, (a->job.stk.nexclude + 1) * sizeof(*p));
			char *end;

			/* An address is 0x and hexadecimal digits, within 64 bits. */
			if (tok[0] == '0' && tok[1] == 'x') {
				errno = 0;
				strtoull(tok + 2, &end, 16);
				if (errno || end == tok + 2 || *end || tok[2] == '-' || tok[2] == '+')
					argp_error(st, "--exclude: '%s' is not an address like "
						   "0xffffffff81234567", tok);
			}

			if (!p)
				argp_failure(st, KMT_EXIT_INTERNAL, ENOMEM, "--exclude");
			a->excl = p;
			a->excl[a->job.stk.nexclude++] = tok;
		}
		if (!a->job.stk.nexclude)
			argp_error(st, "--exclude: no function names in '%s'", arg);
		a->job.stk.exclude = (const char *const *)a->excl;
		a->stack_filters = true;
		break;
	}
	case OPT_LIFETIMES:
		a->job.lifetimes = true;
		break;
	case OPT_PAGES:
		a->pages = true;
		break;
	case OPT_HTML:
		if (!*arg)
			argp_error(st, "--html: no file name");
		a->job.html = arg;
		break;
	case OPT_PPROF:
		if (!*arg)
			argp_error(st, "--pprof: no file name");
		a->job.pprof = arg;
		break;
	case OPT_SHORT:
	case OPT_LONG:
		if (parse_time(arg, key == OPT_SHORT ? &a->job.life.short_ns :
				   &a->job.life.long_ns))
			argp_error(st, "--%s: '%s' is not a duration like 1ms or 250us",
				   key == OPT_SHORT ? "short-lived" : "long-lived", arg);
		a->life_set = true;
		break;
	case OPT_AT:
	case OPT_DIFF:
		if (a->job.growth_opt)
			argp_error(st, "--at and --diff are exclusive, and each is given once");
		if (parse_growth(a, key, arg))
			argp_error(st, key == OPT_AT ?
				   "--at: '%s' is not a time like 2.5s or 1500ms" :
				   "--diff: '%s' is not T1,T2 (like 10s,15s)", arg);
		break;
	case OPT_INTERVAL:
		if (parse_time(arg, &a->job.interval_ns) || !a->job.interval_ns)
			argp_error(st, "--interval: '%s' is not a duration like 1s or 250ms", arg);
		break;
	case ARGP_KEY_END:
		if (a->job.interval_ns) {
			char *c = a->sort_arg ? strchr(a->sort_arg, ',') : NULL;

			if (c)
				*c = '\0';
			if (a->sort_arg && ivl_key_parse(a->sort_arg, &a->job.ivl_sort))
				argp_error(st, "--sort: '%s' is not a key of --interval (%s)",
					   a->sort_arg, ivl_keys_help);
			if (a->job.raw || (a->view_set && a->job.out.view == VIEW_ALLOC))
				argp_error(st, "--interval takes --cache or --caller, not --alloc "
					   "or --raw");
			if (a->stacks && a->view_set)
				argp_error(st, "--interval takes one of --cache, --caller and --stacks");
			if (!a->view_set)
				a->job.out.view = VIEW_CACHE;
			a->job.ivl_by = a->stacks ? IVL_BY_STACK : a->job.out.view == VIEW_CALLER ?
					IVL_BY_SITE : IVL_BY_CACHE;
			if (a->stack_filters)
				argp_error(st, "--min-count and --exclude filter the whole trace's stacks, "
					   "not --interval's");
		} else if (a->sort_arg &&
			   sort_parse(a->sort_arg, a->job.out.sort, &a->job.out.nsort, err,
				      sizeof(err))) {
			argp_error(st, "%s", err);
		}
		if (a->json && a->csv)
			argp_error(st, "--json and --csv are exclusive");
		if (a->job.raw && (a->json || a->csv || a->view_set))
			argp_error(st, "--raw prints records; it takes no view, --json or --csv");
		if (a->stacks && (a->job.raw || a->job.folded || (a->view_set && !a->job.interval_ns)))
			argp_error(st, "--stacks is a view of its own: not with --raw, --folded, "
				   "--caller, --alloc or --cache");
		if (a->job.folded &&
		    (a->job.raw || a->job.interval_ns || a->view_set || a->json || a->csv))
			argp_error(st, "--folded writes folded stacks: not with --raw, --interval, "
				   "a view, --json or --csv");
		if ((a->job.lifetimes || a->pages) &&
		    (a->job.raw || a->job.interval_ns || a->job.folded || a->view_set ||
		     a->stacks || (a->job.lifetimes && a->pages)))
			argp_error(st, "--lifetimes and --pages are views of their own: one of them, "
				   "not with --raw, --interval, --folded, --stacks or another view");
		if (a->life_set && !a->job.lifetimes && !a->job.html)
			argp_error(st, "--short-lived and --long-lived set --lifetimes' thresholds: "
				   "give --lifetimes or --html");
		if (a->job.html && (a->job.raw || a->job.interval_ns || a->job.folded))
			argp_error(st, "--html writes the summary's page: not with --raw, --interval "
				   "or --folded");
		if (a->job.pprof && (a->job.raw || a->job.interval_ns))
			argp_error(st, "--pprof writes the whole trace's (or --time window's) "
				   "profile: not with --raw or --interval");
		if (a->stack_filters && !a->stacks && !a->job.folded && !a->job.html)
			argp_error(st, "--min-count and --exclude filter stacks: give --stacks, "
				   "--folded or --html");
		check_growth(st, a);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = { options, parse_opt, args_doc, doc, NULL, NULL, NULL };

int main(int argc, char **argv)
{
	static char outbuf[1 << 16];
	struct args a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.job.out.lines = -1;
	a.job.life.short_ns = LIFE_SHORT_NS;
	a.job.life.long_ns = LIFE_LONG_NS;
	argp_err_exit_status = KMT_EXIT_USAGE;
	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return KMT_EXIT_USAGE;
	a.job.out.fmt = a.json ? FMT_JSON : a.csv ? FMT_CSV : FMT_TEXT;
	if (a.stacks && !a.job.interval_ns) {
		a.job.out.xview = &view_stacks;
		a.job.out.view_args = &a.job.stk;
	} else if (a.job.lifetimes) {
		a.job.out.xview = &view_life;
		a.job.out.view_args = &a.job.life;
	} else if (a.pages) {
		a.job.out.xview = &view_pages;
	} else if (a.job.growth_opt) {
		a.job.out.xview = &view_growth;
		a.job.out.view_args = &a.job.growth;
	}
	a.job.out.filters = a.filters[0] ? a.filters : NULL;
	if (!a.job.jobs)
		a.job.jobs = kmt_cpus_available();
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));

	ret = report_run(&a.job);
	free(a.cpus);
	free(a.job.kos);
	free(a.excl);
	return ret;
}
