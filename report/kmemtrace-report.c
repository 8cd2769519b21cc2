// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmemtrace-report - merges a kmemtrace trace's cpuN.out files in time
 * order and reports allocations per call site, per cache and per object,
 * errors in the traced kernel, outstanding objects and lost records.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kmt_exit.h"
#include "kmt_reader.h"
#include "core/report_core.h"
#include "core/report_meta.h"
#include "writers/report_out.h"
#include "sym/sym_kallsyms.h"
#include "sym/sym_srcline.h"
#include "views/view_interval.h"
#include "writers/out_html.h"
#include "writers/out_interval.h"
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
	"  kmemtrace-report --interval 1s out/      per cache, second by second\n"
	"  kmemtrace-report --interval 100ms --caller -s allocs --csv out/\n"
	"  kmemtrace-report --stacks -l 10 out/    the 10 commonest kernel stacks\n"
	"  kmemtrace-report --stacks -s bytes --min-count 5 --exclude kmem_cache_alloc_node out/\n"
	"  kmemtrace-report --folded out/ | flamegraph.pl >kmalloc.svg\n"
	"  kmemtrace-report --folded=bytes out/ | inferno-flamegraph >bytes.svg\n"
	"  kmemtrace-report --folded=frees out/ | flamegraph.pl >frees.svg\n"
	"  kmemtrace-report --lifetimes out/       how long each call site's objects live\n"
	"  kmemtrace-report --lifetimes --short-lived 100us --long-lived 10s --json out/\n"
	"  kmemtrace-report --pages out/           page allocator: by order, migrate type, GFP\n"
	"  kmemtrace-report --html report.html out/   one self-contained page with charts\n";

static const char args_doc[] = "[DIR | FILE...]";

enum {
	OPT_CALLER = 256, OPT_ALLOC, OPT_CACHE, OPT_CPU, OPT_PID, OPT_CACHE_NAME, OPT_MIN_SIZE,
	OPT_TIME, OPT_JSON, OPT_CSV, OPT_RAW, OPT_RAW_IP, OPT_VMLINUX, OPT_KO, OPT_MODDIR,
	OPT_RESOLVER, OPT_ALLOW_TRUNC, OPT_NO_PROGRESS, OPT_INTERVAL, OPT_STACKS, OPT_FOLDED,
	OPT_MIN_COUNT, OPT_EXCLUDE, OPT_LIFETIMES, OPT_SHORT, OPT_LONG, OPT_PAGES, OPT_HTML,
};

static const struct argp_option options[] = {
	{ NULL, 0, NULL, 0, "Views (one of):", 1 },
	{ "caller", OPT_CALLER, NULL, 0, "Per call site (default)", 1 },
	{ "alloc", OPT_ALLOC, NULL, 0, "Per object address (memory grows with addresses)", 1 },
	{ "cache", OPT_CACHE, NULL, 0, "Per cache; kmalloc() by size class (kmalloc-N)", 1 },
	{ "raw", OPT_RAW, NULL, 0, "Every record in time order, one line each, no summary", 1 },
	{ "interval", OPT_INTERVAL, "T", 0,
	  "A table per interval of T (like 1s, 100ms): per cache, or per call site with "
	  "--caller; sort keys bytes, allocs, frees, net, frag, name", 1 },
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
	{ NULL, 0, NULL, 0, "Output:", 2 },
	{ "html", OPT_HTML, "FILE", 0,
	  "Also write one self-contained HTML page (tables and SVG charts) to FILE", 2 },
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
	{ NULL, 0, NULL, 0, NULL, 0 },
};

struct args {
	char **inputs;
	size_t ninputs;
	struct out_opts out;
	bool view_set, raw, json, csv, allow_trunc, no_progress;
	struct rpt_filter f;
	uint8_t *cpus;
	const char *vmlinux, *moddir;
	char **kos;
	size_t nkos;
	enum srcline_resolver resolver;
	char filters[512];
	uint64_t interval_ns;
	const char *sort_arg;
	enum ivl_key ivl_sort;
	bool stacks, folded, stack_filters;
	struct stacks_args stk;
	char **excl;
	bool lifetimes, pages, life_set;
	struct life_args life;
	const char *html;
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
	a->f.cpus = a->cpus;
	a->f.ncpus = 65536;
	return 0;
}

static void add_filter_text(struct args *a, const char *label, const char *val)
{
	size_t n = strlen(a->filters);

	snprintf(a->filters + n, sizeof(a->filters) - n, "%s%s %s", n ? ", " : "", label, val);
}

static void set_view(struct argp_state *st, struct args *a, enum out_view v)
{
	if (a->view_set && a->out.view != v)
		argp_error(st, "--caller, --alloc and --cache are exclusive");
	a->view_set = true;
	a->out.view = v;
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
		a->raw = true;
		break;
	case 's':
		a->sort_arg = arg;
		break;
	case 'l':
		if (parse_u64(arg, 1000000000, &v))
			argp_error(st, "--lines: '%s' is not a number from 0 to 1000000000", arg);
		a->out.lines = (long)v;
		break;
	case OPT_JSON:
		a->json = true;
		break;
	case OPT_CSV:
		a->csv = true;
		break;
	case 'w':
		a->out.wide = true;
		break;
	case OPT_NO_PROGRESS:
		a->no_progress = true;
		break;
	case OPT_CPU:
		if (parse_cpus(a, arg))
			argp_error(st, "--cpu: '%s' is not a list like 0,2-3 of CPUs 0..65535", arg);
		add_filter_text(a, "cpu", arg);
		break;
	case OPT_PID:
		if (parse_u64(arg, UINT32_MAX, &v))
			argp_error(st, "--pid: '%s' is not a pid", arg);
		a->f.has_pid = true;
		a->f.pid = (uint32_t)v;
		add_filter_text(a, "pid", arg);
		break;
	case OPT_CACHE_NAME:
		/* Longer than a CACHE_DESC holds: an alias may be (sysfs has whole names). */
		if (!*arg || strlen(arg) > 255)
			argp_error(st, "--cache-name: '%s' is not a cache name", arg);
		a->f.cache_name = arg;
		add_filter_text(a, "cache", arg);
		break;
	case OPT_MIN_SIZE:
		if (parse_u64(arg, UINT32_MAX, &v))
			argp_error(st, "--min-size: '%s' is not a byte count", arg);
		a->f.min_size = v;
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
		a->f.has_time = true;
		a->f.t_start = s;
		a->f.t_end = e;
		add_filter_text(a, "time", arg);
		break;
	}
	case OPT_RAW_IP:
		a->out.raw_ip = true;
		break;
	case OPT_VMLINUX:
		a->vmlinux = arg;
		break;
	case OPT_KO: {
		char **p = realloc(a->kos, (a->nkos + 1) * sizeof(*p));

		if (!p)
			argp_failure(st, KMT_EXIT_INTERNAL, ENOMEM, "--ko");
		a->kos = p;
		a->kos[a->nkos++] = arg;
		break;
	}
	case OPT_MODDIR:
		a->moddir = arg;
		break;
	case OPT_RESOLVER:
		if (strcmp(arg, "dw") == 0)
			a->resolver = SRCLINE_DW;
		else if (strcmp(arg, "bfd") == 0)
			a->resolver = SRCLINE_BFD;
		else
			argp_error(st, "--resolver: '%s' is neither dw nor bfd", arg);
		if (a->resolver == SRCLINE_BFD && !srcline_have_bfd())
			argp_error(st, "--resolver=bfd: this build has no libbfd (binutils-dev)");
		break;
	case OPT_ALLOW_TRUNC:
		a->allow_trunc = true;
		break;
	case ARGP_KEY_ARG:
		a->inputs = &st->argv[st->next - 1];
		a->ninputs = (size_t)(st->argc - st->next + 1);
		st->next = st->argc;
		break;
	case OPT_STACKS:
		a->stacks = true;
		break;
	case OPT_FOLDED:
		a->folded = true;
		if (!arg || strcmp(arg, "hits") == 0)
			a->stk.weight = FOLD_HITS;
		else if (strcmp(arg, "bytes") == 0)
			a->stk.weight = FOLD_BYTES;
		else if (strcmp(arg, "req") == 0)
			a->stk.weight = FOLD_REQ;
		else if (strcmp(arg, "frees") == 0)
			a->stk.weight = FOLD_FREES;
		else
			argp_error(st, "--folded: '%s' is not hits, bytes, req or frees", arg);
		break;
	case OPT_MIN_COUNT:
		if (parse_u64(arg, UINT64_MAX, &v))
			argp_error(st, "--min-count: '%s' is not a count", arg);
		a->stk.min_count = v;
		a->stack_filters = true;
		break;
	case OPT_EXCLUDE: {
		char *save = NULL, *tok;

		for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			char **p = realloc(a->excl, (a->stk.nexclude + 1) * sizeof(*p));
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
			a->excl[a->stk.nexclude++] = tok;
		}
		if (!a->stk.nexclude)
			argp_error(st, "--exclude: no function names in '%s'", arg);
		a->stk.exclude = (const char *const *)a->excl;
		a->stack_filters = true;
		break;
	}
	case OPT_LIFETIMES:
		a->lifetimes = true;
		break;
	case OPT_PAGES:
		a->pages = true;
		break;
	case OPT_HTML:
		if (!*arg)
			argp_error(st, "--html: no file name");
		a->html = arg;
		break;
	case OPT_SHORT:
	case OPT_LONG:
		if (parse_time(arg, key == OPT_SHORT ? &a->life.short_ns : &a->life.long_ns))
			argp_error(st, "--%s: '%s' is not a duration like 1ms or 250us",
				   key == OPT_SHORT ? "short-lived" : "long-lived", arg);
		a->life_set = true;
		break;
	case OPT_INTERVAL:
		if (parse_time(arg, &a->interval_ns) || !a->interval_ns)
			argp_error(st, "--interval: '%s' is not a duration like 1s or 250ms", arg);
		break;
	case ARGP_KEY_END:
		if (a->interval_ns) {
			char *c = a->sort_arg ? strchr(a->sort_arg, ',') : NULL;

			if (c)
				*c = '\0';
			if (a->sort_arg && ivl_key_parse(a->sort_arg, &a->ivl_sort))
				argp_error(st, "--sort: '%s' is not a key of --interval (%s)",
					   a->sort_arg, ivl_keys_help);
			if (a->raw || (a->view_set && a->out.view == VIEW_ALLOC))
				argp_error(st, "--interval takes --cache or --caller, not --alloc "
					   "or --raw");
			if (!a->view_set)
				a->out.view = VIEW_CACHE;
		} else if (a->sort_arg &&
			   sort_parse(a->sort_arg, a->out.sort, &a->out.nsort, err, sizeof(err))) {
			argp_error(st, "%s", err);
		}
		if (a->json && a->csv)
			argp_error(st, "--json and --csv are exclusive");
		if (a->raw && (a->json || a->csv || a->view_set))
			argp_error(st, "--raw prints records; it takes no view, --json or --csv");
		if (a->stacks && (a->raw || a->interval_ns || a->folded || a->view_set))
			argp_error(st, "--stacks is a view of its own: not with --raw, --interval, "
				   "--folded, --caller, --alloc or --cache");
		if (a->folded && (a->raw || a->interval_ns || a->view_set || a->json || a->csv))
			argp_error(st, "--folded writes folded stacks: not with --raw, --interval, "
				   "a view, --json or --csv");
		if ((a->lifetimes || a->pages) &&
		    (a->raw || a->interval_ns || a->folded || a->view_set || a->stacks ||
		     (a->lifetimes && a->pages)))
			argp_error(st, "--lifetimes and --pages are views of their own: one of them, "
				   "not with --raw, --interval, --folded, --stacks or another view");
		if (a->life_set && !a->lifetimes && !a->html)
			argp_error(st, "--short-lived and --long-lived set --lifetimes' thresholds: "
				   "give --lifetimes or --html");
		if (a->html && (a->raw || a->interval_ns || a->folded))
			argp_error(st, "--html writes the summary's page: not with --raw, --interval "
				   "or --folded");
		if (a->stack_filters && !a->stacks && !a->folded && !a->html)
			argp_error(st, "--min-count and --exclude filter stacks: give --stacks, "
				   "--folded or --html");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = { options, parse_opt, args_doc, doc, NULL, NULL, NULL };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The trace's files: DIR's cpuN.out, or the FILEs. */
static int input_paths(struct args *a, char ***paths, size_t *n, char **dir, bool *owned,
		       struct kmt_error *err)
{
	struct stat st;
	size_t i;

	if (a->ninputs <= 1) {
		const char *d = a->ninputs ? a->inputs[0] : ".";

		if (stat(d, &st) == 0 && S_ISDIR(st.st_mode)) {
			*dir = strdup(d);
			if (!*dir)
				return -1;
			*owned = true;
			return kmt_find_cpu_files(d, paths, n, err);
		}
	}
	for (i = 0; i < a->ninputs; i++) {
		if (stat(a->inputs[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			fprintf(stderr, PROG ": %s: a directory among files; give one directory "
				"or files\n", a->inputs[i]);
			return -2;
		}
	}
	*paths = a->inputs;
	*n = a->ninputs;
	*owned = false;
	{
		char *tmp = strdup(a->inputs[0]);

		if (!tmp)
			return -1;
		*dir = strdup(dirname(tmp));
		free(tmp);
		if (!*dir)
			return -1;
	}
	return 0;
}

/* --interval: each table as it closes, in the chosen format. */
struct ivl_emit {
	FILE *fp;
	enum out_fmt fmt;
	struct ivl_out o;
	bool first;
};

static int ivl_emit(const struct ivl_table *t, void *arg)
{
	struct ivl_emit *e = arg;

	if (ivl_doc_table(e->fp, e->fmt, t, &e->o, e->first))
		return -1;
	e->first = false;
	return 0;
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

int main(int argc, char **argv)
{
	struct args a;
	struct kmt_error err = { 0 };
	struct kmt_merge *m = NULL;
	struct rpt *r = NULL;
	struct rpt_meta *meta = NULL;
	struct rpt_slab *slab = NULL;
	struct ksyms *ks = NULL;
	struct srcline *sl = NULL;
	struct ivl *iv = NULL;
	struct ivl_emit ie = { 0 };
	char **paths = NULL, *dir = NULL, msg[1024];
	bool owned = false, progress, shown = false;
	size_t npaths = 0, i;
	uint64_t total_bytes = 0, nrec = 0;
	double t_start, t_next;
	int ret = KMT_EXIT_INTERNAL, rc, missing;
	static char outbuf[1 << 16];

	memset(&a, 0, sizeof(a));
	a.out.lines = -1;
	a.life.short_ns = LIFE_SHORT_NS;
	a.life.long_ns = LIFE_LONG_NS;
	argp_err_exit_status = KMT_EXIT_USAGE;
	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return KMT_EXIT_USAGE;
	a.out.fmt = a.json ? FMT_JSON : a.csv ? FMT_CSV : FMT_TEXT;
	if (a.stacks) {
		a.out.xview = &view_stacks;
		a.out.view_args = &a.stk;
	} else if (a.lifetimes) {
		a.out.xview = &view_life;
		a.out.view_args = &a.life;
	} else if (a.pages) {
		a.out.xview = &view_pages;
	}
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));

	rc = input_paths(&a, &paths, &npaths, &dir, &owned, &err);
	if (rc == -2) {
		ret = KMT_EXIT_USAGE;
		goto out;
	}
	if (rc == -1 && err.cls == KMT_ERR_NONE) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	if (rc) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		ret = kmt_error_exit(&err);
		goto out;
	}
	for (i = 0; i < npaths; i++) {
		struct stat st;

		if (stat(paths[i], &st) == 0)
			total_bytes += (uint64_t)st.st_size;
	}

	/* Metadata: absent files are one note, never a failure. */
	{
		char *mp = join(dir, "kmemtrace.meta"), *kp = join(dir, "kallsyms");
		char *mdp = join(dir, "modules"), absent[64] = "";
		struct stat st;

		if (!mp || !kp || !mdp) {
			free(mp);
			free(kp);
			free(mdp);
			goto nomem;
		}
		meta = meta_load(mp, msg, sizeof(msg), &missing);
		if (!meta && !missing)
			fprintf(stderr, PROG ": warning: %s\n", msg);
		if (!meta && missing)
			strcat(absent, ", kmemtrace.meta");
		if (stat(kp, &st) != 0)
			strcat(absent, ", kallsyms");
		if (stat(mdp, &st) != 0)
			strcat(absent, ", modules");
		if (!a.out.raw_ip || a.raw || a.vmlinux || a.nkos || a.moddir) {
			ks = ksyms_load(kp, stat(mdp, &st) == 0 ? mdp : NULL, msg, sizeof(msg),
					&missing);
			if (!ks && !missing)
				fprintf(stderr, PROG ": warning: %s: call sites are shown as raw "
					"addresses\n", msg);
		}
		if (absent[0])
			fprintf(stderr, PROG ": note: %s has no %s%s\n", dir, absent + 2,
				strstr(absent, "kallsyms") && !a.out.raw_ip ?
				": call sites are shown as raw addresses" : "");
		free(mp);
		free(kp);
		free(mdp);
	}
	if (a.vmlinux || a.nkos || a.moddir) {
		const char *chk[2] = { a.vmlinux, a.moddir };

		for (i = 0; i < 2; i++) {
			if (chk[i] && access(chk[i], R_OK)) {
				fprintf(stderr, PROG ": %s: %s\n", chk[i], strerror(errno));
				ret = KMT_EXIT_IO;
				goto out;
			}
		}
		for (i = 0; i < a.nkos; i++) {
			if (access(a.kos[i], R_OK)) {
				fprintf(stderr, PROG ": %s: %s\n", a.kos[i], strerror(errno));
				ret = KMT_EXIT_IO;
				goto out;
			}
		}
		sl = srcline_open(a.resolver, a.vmlinux, a.kos, a.nkos, a.moddir, ks, msg,
				  sizeof(msg));
		if (!sl) {
			fprintf(stderr, PROG ": %s\n", msg);
			ret = KMT_EXIT_DATA;
			goto out;
		}
	}

	m = kmt_merge_open(paths, npaths, a.allow_trunc ? KMT_OPEN_ALLOW_TRUNCATED : 0, &err);
	if (!m) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		ret = kmt_error_exit(&err);
		goto out;
	}
	if (!a.raw) {
		unsigned int flags = a.out.view == VIEW_ALLOC ? RPT_PTR_VIEW : 0;

		/* Coverage decides which double frees are certain; aliases name caches. */
		slab = slab_info_new(meta);
		if (!slab)
			goto nomem;
		if (slab_cache_allocs_seen(slab))
			flags |= RPT_CACHE_ALLOCS_SEEN;
		if (slab_kmalloc_allocs_missed(slab))
			flags |= RPT_KMALLOC_ALLOCS_MISSED;
		if (meta_kernel_at_least(meta, 6, 4) == 1)
			flags |= RPT_KFREE_TAKES_CACHE_OBJS;
		if (a.lifetimes || a.html)
			flags |= RPT_LIFETIMES;
		if (a.html)
			flags |= RPT_TIMELINE;
		a.f.slab = slab;
		r = rpt_new(&a.f, flags);
		if (!r)
			goto nomem;
		rpt_set_page_size(r, kmt_file_header(kmt_merge_file(m, 0))->page_size);
		if (a.interval_ns) {
			struct ivl_opts vo = { 0 };

			vo.interval_ns = a.interval_ns;
			vo.sites = a.out.view == VIEW_CALLER;
			vo.sort = a.ivl_sort;
			vo.rows = a.out.lines < 0 ? (a.out.fmt == FMT_TEXT ? 20 : 0) :
						    (size_t)a.out.lines;
			iv = ivl_new(r, &vo);
			if (!iv)
				goto nomem;
			ie.fp = stdout;
			ie.fmt = a.out.fmt;
			ie.o.sites = vo.sites;
			ie.o.ks = a.out.raw_ip ? NULL : ks;
			ie.first = true;
			if (ivl_doc_begin(stdout, ie.fmt, &vo, &ie.o, owned ? dir : paths[0]))
				goto nomem;
		}
	} else {
		raw_print_legend(stdout);
	}

	progress = !a.no_progress && isatty(STDERR_FILENO) && total_bytes > (64u << 20);
	t_start = now_s();
	t_next = t_start + 1.0;
	{
		const union kmt_rec *batch[256];
		uint64_t t0 = 0;
		bool first = true;
		int n;

		/* Batches of records read in place: no copy between reader and analysis. */
		while ((n = kmt_merge_next_batch(m, batch, sizeof(batch) / sizeof(batch[0]))) > 0) {
			if (a.raw) {
				if (first)
					t0 = batch[0]->c.timestamp;
				first = false;
				for (i = 0; i < (size_t)n; i++)
					raw_print(stdout, batch[i], t0, a.out.raw_ip ? NULL : ks);
			} else if (iv) {
				if (ivl_feed(iv, batch, (size_t)n, ivl_emit, &ie))
					goto nomem;
			} else if (rpt_feed_refs(r, batch, (size_t)n)) {
				goto nomem;
			}
			nrec += (uint64_t)n;
			/* The clock is asked once per 2^20 records. */
			if (progress && nrec >> 20 != (nrec - (uint64_t)n) >> 20 && now_s() >= t_next) {
				t_next = now_s() + 0.5;
				fprintf(stderr, "\r" PROG ": %" PRIu64 " records read, %3d%%", nrec,
					(int)(100.0 * (double)(nrec * KMT_RECORD_SIZE) /
					      (double)total_bytes));
				shown = true;
			}
		}
		rc = n;
	}
	if (shown)
		fputs("\r\033[K", stderr);
	if (rc < 0) {
		const struct kmt_error *e = kmt_merge_error(m);

		fflush(stdout);
		fprintf(stderr, PROG ": %s\n", e->msg);
		ret = kmt_error_exit(e);
		goto out;
	}

	for (i = 0; i < kmt_merge_nfiles(m); i++) {
		const struct kmt_file_stats *fs = kmt_file_stats(kmt_merge_file(m, i));

		a.out.unknown_records += fs->unknown;
		a.out.truncated_bytes += fs->truncated_bytes;
		if (fs->truncated_bytes)
			fprintf(stderr, PROG ": %s: ignored a partial record of %" PRIu64
				" bytes at the end\n", kmt_file_path(kmt_merge_file(m, i)),
				fs->truncated_bytes);
	}
	if (a.raw) {
		ret = KMT_EXIT_OK;
		goto flush;
	}
	if (iv) {
		/* The last interval ends with the trace: it is as long as the others. */
		if (ivl_flush(iv, ivl_emit, &ie))
			goto nomem;
		ivl_doc_end(stdout, ie.fmt);
		if (rpt_totals(r)->lost)
			fprintf(stderr, PROG ": warning: %" PRIu64 " records were lost: every "
				"number is a lower bound\n", rpt_totals(r)->lost);
		ret = KMT_EXIT_OK;
		goto flush;
	}
	if (rpt_finish(r))
		goto nomem;

	{
		const struct kmt_file_header *h = kmt_file_header(kmt_merge_file(m, 0));
		uint64_t o1, o2;

		a.out.trace = owned ? dir : paths[0];
		a.out.nfiles = npaths;
		a.out.word_bits = h->word_bits;
		a.out.big_endian = kmt_file_big_endian(kmt_merge_file(m, 0));
		a.out.page_size = h->page_size;
		/*
		 * Drops after a CPU's last LOST record (tracing stopped while its
		 * buffer was full) only show in the module's overrun counter.
		 */
		if (!a.f.cpus && !a.f.has_time && meta_get_u64(meta, "overruns_start", &o1) &&
		    meta_get_u64(meta, "overruns_end", &o2) && o2 >= o1 &&
		    o2 - o1 > rpt_totals(r)->lost)
			a.out.lost_unmarked = o2 - o1 - rpt_totals(r)->lost;
	}
	a.out.filters = a.filters[0] ? a.filters : NULL;
	a.out.meta = meta;
	a.out.ks = ks;
	a.out.sl = sl;
	a.out.resolver = a.resolver == SRCLINE_BFD ? "bfd" : "dw";
	if (a.out.fmt != FMT_TEXT && rpt_totals(r)->lost + a.out.lost_unmarked)
		fprintf(stderr, PROG ": warning: %" PRIu64 " records were lost: every number is a "
			"lower bound\n", rpt_totals(r)->lost + a.out.lost_unmarked);
	/* CSV has no header to say it in (JSON has its "coverage"). */
	if (a.out.fmt == FMT_CSV && slab_nmissed(slab)) {
		fputs(PROG ": note: not seen by this trace:", stderr);
		for (i = 0; i < slab_ncov(slab); i++)
			if (slab_cov(slab, i)->missed)
				fprintf(stderr, " %s", slab_cov(slab, i)->path);
		fputs(" (see the text report)\n", stderr);
	}
	if (a.folded) {
		const struct rpt_totals *t = rpt_totals(r);

		if (!rpt_has_stacks(r))
			fprintf(stderr, PROG ": note: the trace has no stacks (trace with the module "
				"parameter stack_depth): nothing to fold\n");
		else if (a.stk.weight == FOLD_FREES && !rpt_has_free_stacks(r))
			fprintf(stderr, PROG ": note: the trace has no stacks of frees (trace with "
				"the module parameter stack_frees=1): nothing to fold\n");
		else if (a.stk.weight == FOLD_FREES && t->no_stack_frees + t->unknown_stack_frees)
			fprintf(stderr, PROG ": note: %" PRIu64 " frees without a stack are not in the "
				"folded stacks (%" PRIu64 " marked, %" PRIu64 " naming a stack not in "
				"the trace)\n", t->no_stack_frees + t->unknown_stack_frees,
				t->no_stack_frees, t->unknown_stack_frees);
		else if (a.stk.weight != FOLD_FREES && t->allocs > t->stack_allocs)
			fprintf(stderr, PROG ": note: %" PRIu64 " events without a stack are not in the "
				"folded stacks (%" PRIu64 " marked, %" PRIu64 " naming a stack not in "
				"the trace)\n", t->allocs - t->stack_allocs, t->no_stack_allocs,
				t->unknown_stack_allocs);
		if (stacks_folded(stdout, r, &a.out, &a.stk))
			goto nomem;
	} else if (report_print(stdout, r, &a.out)) {
		goto nomem;
	}
	if (a.html) {
		rc = html_write_file(a.html, r, &a.out, &a.life, &a.stk);
		if (rc == -1)
			goto nomem;
		if (rc) {
			fprintf(stderr, PROG ": %s: %s\n", a.html, strerror(rc));
			ret = KMT_EXIT_IO;
			goto flush;
		}
	}
	if (sl && *srcline_warnings(sl))
		fprintf(stderr, PROG ": warning: %s", srcline_warnings(sl));
	ret = KMT_EXIT_OK;
flush:
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, PROG ": writing the report: %s\n", strerror(errno));
		ret = KMT_EXIT_IO;
	}
	goto out;
nomem:
	fprintf(stderr, PROG ": out of memory\n");
	ret = KMT_EXIT_INTERNAL;
out:
	kmt_merge_close(m);
	ivl_free(iv);
	rpt_free(r);
	slab_info_free(slab);
	srcline_close(sl);
	ksyms_free(ks);
	meta_free(meta);
	if (owned)
		kmt_free_paths(paths, npaths);
	free(dir);
	free(a.cpus);
	free(a.kos);
	free(a.excl);
	return ret;
}
