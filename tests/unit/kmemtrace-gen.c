// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmemtrace-gen.c - writes realistic synthetic traces (alloc/free pairs
 * with lifetimes, cross-CPU frees, many call sites, objects left
 * outstanding) for benchmarks and fuzz seeds, streaming whatever the
 * length, or exactly the events a script lists, and prints the totals it
 * wrote for tests to compare against.
 */
#include <argp.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "kmt_exit.h"

const char *argp_program_version = "kmemtrace-gen " KMT_VERSION;

static const char doc[] =
	"Write a synthetic kmemtrace trace into DIR/cpuN.out and print what it holds."
	"\v"
	"The summary on standard output is one \"key value\" line per total, as the\n"
	"generator counted them (see tests/unit/gen.h, struct gen_totals).\n"
	"\n"
	"EXAMPLES:\n"
	"  kmemtrace-gen -o /tmp/t --cpus 4 --events 1000000 --seed 1\n"
	"  kmemtrace-gen -o /tmp/be --cpus 2 --events 1000 --big-endian --word-bits 32\n"
	"  kmemtrace-gen -o /tmp/l --events 100000 --lost-every 5000 --first-seq 4294967000\n"
	"  kmemtrace-gen -o /tmp/p --probed-every 10 --abi-minor 1\n"
	"  kmemtrace-gen -o /tmp/k --stack-depth 12 --stacks 40 --stack-table 25\n"
	"  printf 'kmalloc 0 0xffffffff81000100 0xffff888000001000 24 32\\n' |\n"
	"    kmemtrace-gen -o /tmp/s --cpus 1 --script -\n"
	"\n"
	"A script (--script) has one record a line, written in that order, 1000 ns\n"
	"apart. Numbers are decimal or 0x-hexadecimal, '#' starts a comment;\n"
	"\"probed\" at the end of an event line sets KMT_F_PROBED, \"stack=ID\" names\n"
	"the stack a stack line gave ID on that CPU, \"nostack\" sets KMT_F_NO_STACK:\n"
	"  kmalloc CPU CALL_SITE PTR BYTES_REQ BYTES_ALLOC [probed]\n"
	"  kfree CPU CALL_SITE PTR [probed]\n"
	"  cache_alloc CPU CALL_SITE PTR CACHE_ID BYTES_REQ BYTES_ALLOC [probed]\n"
	"  cache_free CPU CALL_SITE PTR CACHE_ID [probed]\n"
	"  cache_desc CPU CACHE_ID OBJECT_SIZE SIZE NAME\n"
	"  lost CPU COUNT\n"
	"  page_alloc CPU PFN ORDER MIGRATETYPE GFP_FLAGS\n"
	"  page_free CPU PFN ORDER\n"
	"  stack CPU ID FRAME[,FRAME...]   (innermost, the call site, first)\n"
	"  sum CPU KIND TYPE CALL_SITE CACHE_ID COUNT BYTES_REQ BYTES_ALLOC CROSS_CPU\n"
	"      CROSS_NODE [probed] [stack=ID] [nostack]\n"
	"                                  a checkpoint's SUM record (1.3; KIND 1 freed,\n"
	"                                  2 failed; TYPE 1 kmalloc, 2 cache_alloc), seq 0\n"
	"  wait NS                         the next record NS + 1000 ns later\n"
	"  at NS                           the next record at NS exactly\n"
	"  seq CPU SEQ                     the next data record of CPU takes SEQ\n"
	"With --checkpoint CUT,SEGMENT[,DROPPED] the files are a checkpoint's (kind 1,\n"
	"format 1.3 at least): records before CUT ns kept from the segments before\n"
	"seg.SEGMENT, DROPPED records each; 'at' and 'seq' write them as they were.\n"
	"\n"
	"With --stack-depth, each slab allocation takes one of --stacks kernel stacks\n"
	"(1..D frames, the first its call site), written into its CPU's stream before\n"
	"its first use there under a per-CPU id, as the module does; once a CPU has\n"
	"given out --stack-table ids, allocations through a stack it has no id for\n"
	"carry KMT_F_NO_STACK. The summary then has a \"stack\" line per stack used:\n"
	"  stack K hits H failed F bytes_req R bytes_alloc A frees N outstanding O\n"
	"  outstanding_bytes B frames 0xINNERMOST,...,0xOUTERMOST\n"
	"With --stack-frees, slab frees carry stacks too (one per call site, one for\n"
	"the frees of objects allocated before the trace), and the summary has a line\n"
	"per free stack used (U of its N frees freed an object not allocated in the trace):\n"
	"  free_stack K frees N bytes_freed B frees_no_alloc U frames 0xINNERMOST,...\n"
	"\n"
	"With --large-every N, every Nth kmalloc is above two pages (KMALLOC_MAX_CACHE_SIZE,\n"
	"served by the page allocator; never failing here); with --twice each is traced\n"
	"twice, as 6.12 and 7.3 do: first at a call site inside the allocator (with\n"
	"--stack-depth, through a stack of its own: that call site, then the caller's\n"
	"frames), then at its caller's. The first events are in no total but records,\n"
	"type_kmalloc and dup_events (those with KMT_F_NO_STACK also in\n"
	"dup_no_stack_events): a report counts the second only. --per-site adds a line\n"
	"per allocation call site:\n"
	"  site 0xADDR hits H failed F bytes_req R bytes_alloc A frees N outstanding O\n"
	"  outstanding_bytes B\n"
	"\n"
	"Exit status: 0 written, 1 usage error, 3 I/O error, 4 out of memory.";

enum {
	OPT_CPUS = 256, OPT_EVENTS, OPT_CALLSITES, OPT_SEED, OPT_BE, OPT_WORD_BITS,
	OPT_LOST_EVERY, OPT_PAGES, OPT_NODES, OPT_FIRST_SEQ, OPT_LIVE, OPT_PAGE_SIZE,
	OPT_FRESH, OPT_ABI_MINOR, OPT_PROBED_EVERY, OPT_SCRIPT, OPT_CHECKPOINT, OPT_STACK_DEPTH, OPT_STACKS,
	OPT_STACK_TABLE, OPT_STACK_FREES, OPT_LARGE_EVERY, OPT_TWICE, OPT_PER_SITE,
};

static const struct argp_option options[] = {
	{ "output", 'o', "DIR", 0, "Directory to write cpuN.out into (created if needed)", 0 },
	{ "cpus", OPT_CPUS, "N", 0, "Number of CPUs, 1-1024 (default 2)", 0 },
	{ "events", OPT_EVENTS, "M", 0, "Number of alloc/free events (default 10000)", 0 },
	{ "callsites", OPT_CALLSITES, "K", 0, "Number of allocation call sites (default 64)", 0 },
	{ "seed", OPT_SEED, "S", 0, "Random seed (default 1)", 0 },
	{ "big-endian", OPT_BE, NULL, 0, "Write big-endian files", 0 },
	{ "word-bits", OPT_WORD_BITS, "32|64", 0, "Pointer width of the fake kernel (default 64)", 0 },
	{ "page-size", OPT_PAGE_SIZE, "BYTES", 0, "PAGE_SIZE of the fake kernel (default 4096)", 0 },
	{ "lost-every", OPT_LOST_EVERY, "N", 0, "A lost-records marker every N events (default never)", 0 },
	{ "pages", OPT_PAGES, NULL, 0, "Include page allocator events", 0 },
	{ "nodes", OPT_NODES, "N", 0, "NUMA nodes; CPU c is on node c % N (default 1)", 0 },
	{ "first-seq", OPT_FIRST_SEQ, "SEQ", 0, "Seq of each CPU's first record (default 0)", 0 },
	{ "live", OPT_LIVE, "N", 0, "At most N objects live at once (default 4096)", 0 },
	{ "fresh-addresses", OPT_FRESH, NULL, 0,
	  "Never reuse a freed slab object's address (default: last freed, first reused, per cache, as SLUB's freelists do)", 0 },
	{ "abi-minor", OPT_ABI_MINOR, "N", 0, "version_minor of the file headers (default: this build's)", 0 },
	{ "probed-every", OPT_PROBED_EVERY, "N", 0,
	  "Every Nth slab event carries KMT_F_PROBED, as the module's kprobes mark theirs (default never)", 0 },
	{ "stack-depth", OPT_STACK_DEPTH, "D", 0,
	  "Slab allocations carry kernel stacks of 1..D frames, 1-64 (default: no stacks)", 0 },
	{ "stacks", OPT_STACKS, "N", 0, "Distinct stacks with --stack-depth, 1-65535 (default 32)", 0 },
	{ "stack-table", OPT_STACK_TABLE, "T", 0,
	  "Stack ids a CPU gives out before events get KMT_F_NO_STACK, 0-65535 (default 65535)",
	  0 },
	{ "stack-frees", OPT_STACK_FREES, NULL, 0,
	  "Slab frees carry stacks too (a stack per call site), as with stack_frees=1", 0 },
	{ "large-every", OPT_LARGE_EVERY, "N", 0,
	  "Every Nth kmalloc is a large one, above two pages (default none)", 0 },
	{ "twice", OPT_TWICE, NULL, 0,
	  "Trace each large kmalloc twice, first from inside the allocator, as 6.12 and 7.3 do", 0 },
	{ "per-site", OPT_PER_SITE, NULL, 0, "Add a summary line per allocation call site", 0 },
	{ "script", OPT_SCRIPT, "FILE", 0, "Write the records FILE lists ('-': standard input), nothing else", 0 },
	{ "checkpoint", OPT_CHECKPOINT, "CUT,SEG[,DROPPED]", 0,
	  "Write checkpoint files (kind 1) cut at CUT ns, of segment SEG (1.3)", 0 },
	{ 0 }
};

struct args {
	const char *dir;
	uint64_t cpus, events, callsites, seed, word_bits, lost_every, nodes, first_seq, live;
	uint64_t page_size, abi_minor, probed_every, stack_depth, nstacks, stack_table;
	uint64_t large_every;
	int big_endian, pages, fresh, set_minor, stack_frees, twice, per_site;
	const char *script;
	uint64_t cut_ns, segment, dropped;
};

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct args *a = state->input;
	const char *name = NULL;
	uint64_t *dst = NULL, min = 0, max = UINT64_MAX;

	switch (key) {
	case 'o':
		a->dir = arg;
		return 0;
	case OPT_CPUS:
		name = "--cpus", dst = &a->cpus, min = 1, max = 1024;
		break;
	case OPT_EVENTS:
		name = "--events", dst = &a->events;
		break;
	case OPT_CALLSITES:
		name = "--callsites", dst = &a->callsites, min = 1, max = 1u << 20;
		break;
	case OPT_SEED:
		name = "--seed", dst = &a->seed;
		break;
	case OPT_WORD_BITS:
		name = "--word-bits", dst = &a->word_bits, min = 32, max = 64;
		break;
	case OPT_PAGE_SIZE:
		name = "--page-size", dst = &a->page_size, min = 512, max = 1u << 20;
		break;
	case OPT_LOST_EVERY:
		name = "--lost-every", dst = &a->lost_every, min = 1;
		break;
	case OPT_NODES:
		name = "--nodes", dst = &a->nodes, min = 1, max = 64;
		break;
	case OPT_FIRST_SEQ:
		name = "--first-seq", dst = &a->first_seq, max = UINT32_MAX;
		break;
	case OPT_LIVE:
		name = "--live", dst = &a->live, min = 1, max = 1u << 24;
		break;
	case OPT_ABI_MINOR:
		name = "--abi-minor", dst = &a->abi_minor, max = UINT16_MAX;
		a->set_minor = 1;
		break;
	case OPT_PROBED_EVERY:
		name = "--probed-every", dst = &a->probed_every, min = 1;
		break;
	case OPT_STACK_DEPTH:
		name = "--stack-depth", dst = &a->stack_depth, min = 1, max = KMT_STACK_MAX_DEPTH;
		break;
	case OPT_STACKS:
		name = "--stacks", dst = &a->nstacks, min = 1, max = UINT16_MAX;
		break;
	case OPT_STACK_TABLE:
		name = "--stack-table", dst = &a->stack_table, max = UINT16_MAX;
		break;
	case OPT_LARGE_EVERY:
		name = "--large-every", dst = &a->large_every, min = 1;
		break;
	case OPT_TWICE:
		a->twice = 1;
		return 0;
	case OPT_PER_SITE:
		a->per_site = 1;
		return 0;
	case OPT_SCRIPT:
		a->script = arg;
		return 0;
	case OPT_CHECKPOINT: {
		char extra;
		int n = sscanf(arg, "%" SCNu64 ",%" SCNu64 ",%" SCNu64 "%c", &a->cut_ns,
			       &a->segment, &a->dropped, &extra);

		if (n < 2 || n > 3 || !a->cut_ns || !a->segment || a->segment > UINT32_MAX)
			argp_error(state, "--checkpoint: '%s' is not CUT,SEGMENT[,DROPPED] with "
				   "CUT and SEGMENT above 0", arg);
		return 0;
	}
	case OPT_BE:
		a->big_endian = 1;
		return 0;
	case OPT_PAGES:
		a->pages = 1;
		return 0;
	case OPT_FRESH:
		a->fresh = 1;
		return 0;
	case OPT_STACK_FREES:
		a->stack_frees = 1;
		return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		return 0;
	case ARGP_KEY_END:
		if (!a->dir)
			argp_error(state, "-o DIR is required");
		if (a->word_bits != 32 && a->word_bits != 64)
			argp_error(state, "--word-bits must be 32 or 64");
		if (a->page_size & (a->page_size - 1))
			argp_error(state, "--page-size must be a power of two");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	if (parse_u64(arg, min, max, dst) < 0)
		argp_error(state, "%s: '%s' is not a number in %" PRIu64 "..%" PRIu64, name, arg,
			   min, max);
	return 0;
}

/* xorshift64*: fast, reproducible from the seed, good enough for load shapes. */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	return gen_xorshift(&rng_state);
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

#define NCACHES		16

struct obj {
	uint64_t ptr, cache_id, site_addr;
	int32_t stk;		/* the stack it was allocated through, -1 for none */
	uint32_t site;		/* index of its call site */
	uint32_t bytes;		/* bytes_alloc */
	uint32_t order;
	uint32_t freelist;	/* slab objects: where its address goes when freed */
	uint8_t kind;		/* 0 kmalloc, 1 cache, 2 page */
	uint16_t cpu;
};

struct site {
	uint64_t addr;
	uint8_t kind;
	uint8_t cache;
	uint32_t size;
};

static const uint32_t kmalloc_sizes[] = { 8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048,
					  4096, 8192 };

/* Freed slab addresses of one cache, the last freed on top. */
struct freelist {
	uint64_t *ptr;
	size_t n, cap;
};

#define NKMALLOC	(sizeof(kmalloc_sizes) / sizeof(kmalloc_sizes[0]))

/* A kernel stack of --stack-depth, and what the allocations through it did. */
struct gstack {
	uint64_t frames[KMT_STACK_MAX_DEPTH];
	unsigned int depth, site;
	uint64_t hits, failed, bytes_req, bytes_alloc, frees, out, out_bytes;
	/* A free stack's: free events with it, their objects' bytes, those of no allocation. */
	uint64_t fhits, fbytes, fno_alloc;
};

/* Caches 0..NCACHES-1, then one per kmalloc size class, then one for larger sizes. */
#define NFREELISTS	(NCACHES + NKMALLOC + 1)

/* The stacks and each CPU's ids for them, given out as the module does. */
struct gstacks {
	struct gstack *stk;
	uint16_t *id, *next;	/* [cpu * n + k], [cpu] */
	uint64_t n, table;
};

/*
 * The id of stack k on cpu: given out, and the stack written, the first
 * time it is needed there; 0 once the CPU's table is full. -1: I/O error.
 */
static int stack_id_of(struct gen *g, struct gstacks *s, unsigned int cpu, uint64_t k,
		       uint64_t t)
{
	uint16_t *id = &s->id[cpu * s->n + k];

	if (!*id && s->next[cpu] < s->table) {
		*id = ++s->next[cpu];
		if (gen_stack(g, cpu, t, *id, s->stk[k].frames, s->stk[k].depth) < 0)
			return -1;
	}
	return *id;
}

static int freelist_push(struct freelist *fl, uint64_t ptr)
{
	if (fl->n == fl->cap) {
		size_t ncap = fl->cap ? 2 * fl->cap : 64;
		uint64_t *p = realloc(fl->ptr, ncap * sizeof(*p));

		if (!p)
			return -1;
		fl->ptr = p;
		fl->cap = ncap;
	}
	fl->ptr[fl->n++] = ptr;
	return 0;
}

/* Index of the kmalloc size class of req in kmalloc_sizes; NKMALLOC when larger. */
static size_t kmalloc_class(uint32_t req)
{
	size_t i;

	for (i = 0; i < NKMALLOC; i++)
		if (req <= kmalloc_sizes[i])
			break;
	return i;
}

static uint32_t kmalloc_slab(uint32_t req)
{
	size_t i = kmalloc_class(req);

	return i < NKMALLOC ? kmalloc_sizes[i] : req;
}

/* Which freelist a slab object of site s, asking for req bytes, goes back to. */
static size_t freelist_of(const struct site *s, uint32_t req)
{
	return s->kind == 1 ? s->cache : NCACHES + kmalloc_class(req);
}

/*
 * As the module does: a CPU describes a cache in its own stream before
 * its first event naming it, a free included.
 */
static int describe(struct gen *g, uint8_t *described, unsigned int cpu, unsigned int cache,
		    uint64_t cache_base, uint64_t t)
{
	uint8_t *d = &described[cpu * NCACHES + cache];
	uint32_t osz = 32 + 32 * cache;
	char name[32];

	if (*d)
		return 0;
	*d = 1;
	snprintf(name, sizeof(name), "gen_cache_%u", cache);
	return gen_cache_desc(g, cpu, t, cache_base + cache * 0x100, osz, osz + 16, name);
}

/* A number of a script line: decimal or 0x-hexadecimal, at most max. */
static int script_num(const char *w, uint64_t max, uint64_t *v, unsigned int lineno)
{
	char *end;

	errno = 0;
	if (!isdigit((unsigned char)*w))
		goto bad;
	*v = strtoull(w, &end, 0);
	if (errno || *end || *v > max)
		goto bad;
	return 0;
bad:
	fprintf(stderr, "kmemtrace-gen: script line %u: '%s' is not a number from 0 to %" PRIu64
		"\n", lineno, w, max);
	return -1;
}

/*
 * --script: the records a file lists, in its order, 1000 ns apart from t.
 * KMT_EXIT_OK, KMT_EXIT_USAGE for a bad line, KMT_EXIT_IO.
 */
static int run_script(struct gen *g, const char *path, unsigned int ncpus, uint64_t t,
		      uint64_t page_size)
{
	/* The numbers after the kind: c the CPU, 8 a 64-bit field, 4 a 32-bit one. */
	static const struct {
		const char *kind, *nums;
	} kinds[] = {
		{ "kmalloc", "c8844" }, { "kfree", "c88" }, { "cache_alloc", "c88844" },
		{ "cache_free", "c888" }, { "cache_desc", "c844" }, { "lost", "c8" },
		{ "page_alloc", "c8444" }, { "page_free", "c84" }, { "stack", "c4" },
		{ "sum", "c448848844" },
	};
	FILE *in = strcmp(path, "-") ? fopen(path, "r") : stdin;
	unsigned int lineno = 0;
	int ret = KMT_EXIT_OK;
	char *line = NULL;
	size_t cap = 0;

	if (!in) {
		fprintf(stderr, "kmemtrace-gen: %s: %s\n", path, strerror(errno));
		return KMT_EXIT_IO;
	}
	while (ret == KMT_EXIT_OK && getline(&line, &cap, in) > 0) {
		char *w[16], *p, *save = NULL;
		uint64_t v[10], stack_id = 0;
		size_t nw = 0, nnum, k, i;
		unsigned int cpu, flags = 0;
		int r = 0;

		lineno++;
		line[strcspn(line, "#\n")] = '\0';
		for (p = strtok_r(line, " \t\r", &save); p && nw < 16; p = strtok_r(NULL, " \t\r", &save))
			w[nw++] = p;
		if (!nw)
			continue;
		/* wait NS: time passes (a leak at a rate over seconds, without a line a us). */
		if (strcmp(w[0], "wait") == 0) {
			if (nw != 2 || script_num(w[1], UINT64_MAX - t, &v[0], lineno) < 0) {
				if (nw != 2)
					fprintf(stderr, "kmemtrace-gen: script line %u: wait takes "
						"one number\n", lineno);
				ret = KMT_EXIT_USAGE;
				break;
			}
			t += v[0];
			continue;
		}
		/* at NS: a checkpoint's or segment's records keep the times they had. */
		if (strcmp(w[0], "at") == 0) {
			if (nw != 2 || script_num(w[1], UINT64_MAX, &v[0], lineno) < 0 ||
			    v[0] < t) {
				fprintf(stderr, "kmemtrace-gen: script line %u: at takes one time, "
					"after the record before\n", lineno);
				ret = KMT_EXIT_USAGE;
				break;
			}
			t = v[0] - 1000;
			continue;
		}
		/* seq CPU SEQ: and their sequence numbers, gaps included. */
		if (strcmp(w[0], "seq") == 0) {
			if (nw != 3 || script_num(w[1], ncpus - 1, &v[0], lineno) < 0 ||
			    script_num(w[2], UINT32_MAX, &v[1], lineno) < 0) {
				fprintf(stderr, "kmemtrace-gen: script line %u: seq takes a CPU and "
					"a seq\n", lineno);
				ret = KMT_EXIT_USAGE;
				break;
			}
			gen_set_seq(g, (unsigned int)v[0], (uint32_t)v[1]);
			continue;
		}
		for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			if (strcmp(w[0], kinds[k].kind) == 0)
				break;
		ret = KMT_EXIT_USAGE;
		if (k == sizeof(kinds) / sizeof(kinds[0])) {
			fprintf(stderr, "kmemtrace-gen: script line %u: unknown record '%s'\n", lineno,
				w[0]);
			break;
		}
		/*
		 * The numbers, then a name (cache_desc) or frames (stack), or
		 * maybe "probed", "stack=ID", "nostack" (events, k < 4, and sums).
		 */
		nnum = strlen(kinds[k].nums);
		while ((k < 4 || k == 9) && nw > 1 + nnum) {
			if (strcmp(w[nw - 1], "probed") == 0)
				flags |= KMT_F_PROBED;
			else if (strcmp(w[nw - 1], "nostack") == 0)
				flags |= KMT_F_NO_STACK;
			else if (strncmp(w[nw - 1], "stack=", 6) == 0 &&
				 script_num(w[nw - 1] + 6, UINT16_MAX, &stack_id, lineno) == 0)
				;
			else
				break;
			nw--;
		}
		if (nw != 1 + nnum + (k == 4 || k == 8)) {
			fprintf(stderr, "kmemtrace-gen: script line %u: %s takes %zu numbers%s\n",
				lineno, w[0], nnum, k == 4 ? " and a name" : k == 8 ? " and frames" :
				k < 4 ? " and maybe \"probed\", \"stack=ID\", \"nostack\"" : "");
			break;
		}
		for (i = 0; i < nnum; i++) {
			char c = kinds[k].nums[i];

			if (script_num(w[1 + i], c == 'c' ? ncpus - 1 : c == '4' ? UINT32_MAX :
				       UINT64_MAX, &v[i], lineno) < 0)
				break;
		}
		if (i < nnum)
			break;
		ret = KMT_EXIT_OK;
		cpu = (unsigned int)v[0];
		t += 1000;
		gen_set_flags(g, cpu, flags);
		gen_set_stack(g, cpu, (uint16_t)stack_id);
		switch (k) {
		case 0:
			r = gen_kmalloc(g, cpu, t, v[1], v[2], (uint32_t)v[3], (uint32_t)v[4],
					KMT_NODE_ANY, 1);
			break;
		case 1:
			r = gen_kfree(g, cpu, t, v[1], v[2], 1);
			break;
		case 2:
			r = gen_cache_alloc(g, cpu, t, v[1], v[2], v[3], (uint32_t)v[4],
					    (uint32_t)v[5], KMT_NODE_ANY, 1);
			break;
		case 3:
			r = gen_cache_free(g, cpu, t, v[1], v[2], v[3], 1);
			break;
		case 4:
			r = gen_cache_desc(g, cpu, t, v[1], (uint32_t)v[2], (uint32_t)v[3], w[5]);
			break;
		case 5:
			r = gen_lost(g, cpu, t, v[1]);
			break;
		case 6: {
			/* The module's record: migrate type in cache_id (1.2), PFN 0 a failure. */
			struct kmt_event e = {
				.type = KMT_REC_PAGE_ALLOC, .timestamp = t, .ptr = v[1],
				.bytes_req = (uint32_t)(page_size << (v[2] & 31)),
				.bytes_alloc = (uint32_t)(page_size << (v[2] & 31)),
				.cache_id = KMT_PAGE_MT_VALID | v[3], .gfp_flags = (uint32_t)v[4],
				.node = KMT_NODE_ANY, .pid = 1,
			};

			if (v[2] > 31 || (page_size << v[2]) > UINT32_MAX || v[3] > 0xff) {
				fprintf(stderr, "kmemtrace-gen: script line %u: order or migrate type "
					"out of range\n", lineno);
				ret = KMT_EXIT_USAGE;
				break;
			}
			r = gen_event(g, cpu, &e);
			break;
		}
		case 8: {
			/* Frames innermost first, as the module's stack records hold them. */
			uint64_t fr[KMT_STACK_MAX_DEPTH];
			unsigned int d = 0;
			char *f, *fs = NULL;

			for (f = strtok_r(w[3], ",", &fs); f && d <= KMT_STACK_MAX_DEPTH;
			     f = strtok_r(NULL, ",", &fs)) {
				if (d < KMT_STACK_MAX_DEPTH &&
				    script_num(f, UINT64_MAX, &fr[d], lineno) < 0) {
					ret = KMT_EXIT_USAGE;
					break;
				}
				d++;
			}
			if (ret == KMT_EXIT_OK && (!v[1] || v[1] > UINT16_MAX || !d ||
						   d > KMT_STACK_MAX_DEPTH)) {
				fprintf(stderr, "kmemtrace-gen: script line %u: a stack has an id from "
					"1 to %u and 1 to %u frames\n", lineno, UINT16_MAX,
					KMT_STACK_MAX_DEPTH);
				ret = KMT_EXIT_USAGE;
			}
			if (ret == KMT_EXIT_OK)
				r = gen_stack(g, cpu, t, (uint16_t)v[1], fr, d);
			break;
		}
		case 9: {
			/* Not numbered: a SUM record's seq is 0 whatever the CPU's. */
			union kmt_rec rec = { .sum = {
				.type = KMT_REC_SUM, .flags = (uint8_t)flags, .cpu = (uint16_t)cpu,
				.timestamp = t, .sum_kind = (uint8_t)v[1], .alloc_type = (uint8_t)v[2],
				.call_site = v[3], .cache_id = v[4], .count = (uint32_t)v[5],
				.bytes_req = v[6], .bytes_alloc = v[7], .cross_cpu = (uint32_t)v[8],
				.cross_node = (uint32_t)v[9], .stack_id = (uint16_t)stack_id,
			} };

			r = gen_raw(g, cpu, &rec);
			break;
		}
		default: {
			struct kmt_event e = {
				.type = KMT_REC_PAGE_FREE, .timestamp = t, .ptr = v[1],
				.bytes_alloc = (uint32_t)(page_size << (v[2] & 31)),
				.node = KMT_NODE_ANY, .pid = 1,
			};

			r = gen_event(g, cpu, &e);
			break;
		}
		}
		gen_set_flags(g, cpu, 0);
		gen_set_stack(g, cpu, 0);
		if (r < 0)
			ret = KMT_EXIT_IO;
	}
	if (ret == KMT_EXIT_OK && ferror(in)) {
		fprintf(stderr, "kmemtrace-gen: %s: read error\n", path);
		ret = KMT_EXIT_IO;
	}
	free(line);
	if (in != stdin)
		fclose(in);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { options, parse_opt, NULL, doc, NULL, NULL, NULL };
	struct args a = { .cpus = 2, .events = 10000, .callsites = 64, .seed = 1,
			  .word_bits = 64, .nodes = 1, .live = 4096, .page_size = 4096,
			  .nstacks = 32, .stack_table = UINT16_MAX };
	uint64_t text, heap, cache_base, pfn_base, large_site, t = 1000000, next_ptr = 0, i;
	struct gen_opts opts = { 0 };
	const struct gen_totals *tot;
	uint8_t *described = NULL;
	struct site *sites = NULL;
	struct freelist fl[NFREELISTS] = { { 0 } };
	struct obj *live = NULL;
	size_t nlive = 0;
	bool probed;
	struct gen *g = NULL;
	struct gstacks gs = { 0 };
	struct gstack *stk = NULL;
	/* Free stacks (--stack-frees), then those of the allocator's first events (--twice). */
	uint64_t nstk = 0, free_base = 0, dup_base = 0;
	/* Large kmallocs written, and those traced twice by whether each event had a stack. */
	uint64_t nkmalloc = 0, nlarge = 0, pairs[2][2] = { { 0 } };
	int ret = KMT_EXIT_INTERNAL;

	/* argp's default is EX_USAGE (64); every kmemtrace tool says 1. */
	argp_err_exit_status = KMT_EXIT_USAGE;
	argp_parse(&argp, argc, argv, 0, NULL, &a);
	rng_state = a.seed * 0x9e3779b97f4a7c15ULL + 1;
	if (a.word_bits == 32) {
		text = 0xc1000000ULL;
		heap = 0xd0000000ULL;
		cache_base = 0xcf000000ULL;
		pfn_base = 0x1000;
	} else {
		text = 0xffffffff81000000ULL;
		heap = 0xffff888100000000ULL;
		cache_base = 0xffff888003000000ULL;
		pfn_base = 0x100000;
	}
	/* Inside the allocator: __do_kmalloc_node()'s call of __kmalloc_large_node_noprof(). */
	large_site = text + 0x300040;

	sites = calloc(a.callsites, sizeof(*sites));
	live = calloc(a.live, sizeof(*live));
	described = calloc(a.cpus, NCACHES);
	if (!sites || !live || !described) {
		fprintf(stderr, "kmemtrace-gen: out of memory\n");
		goto out;
	}
	for (i = 0; i < a.callsites; i++) {
		sites[i].addr = text + 0x1000 + i * 0x40 + below(0x30);
		sites[i].kind = a.pages && below(10) == 0 ? 2 : (uint8_t)below(2);
		sites[i].cache = (uint8_t)below(NCACHES);
		sites[i].size = (uint32_t)(1 + below(below(4) ? 256 : 6000));
	}

	if (a.stack_depth) {
		/*
		 * Free stacks (--stack-frees) follow the allocation ones, one per
		 * call site, and one for the frees of objects allocated before the trace.
		 */
		free_base = a.nstacks;
		dup_base = free_base + (a.stack_frees ? a.callsites + 1 : 0);
		nstk = dup_base + (a.twice ? a.nstacks : 0);
		stk = calloc(nstk, sizeof(*stk));
		gs = (struct gstacks){ .stk = stk, .n = nstk, .table = a.stack_table,
				       .id = calloc(a.cpus * nstk, sizeof(*gs.id)),
				       .next = calloc(a.cpus, sizeof(*gs.next)) };
		if (!stk || !gs.id || !gs.next) {
			fprintf(stderr, "kmemtrace-gen: out of memory\n");
			goto out;
		}
		/* A few callers per call site and a pool of outer frames: stacks share parts. */
		for (i = 0; i < a.nstacks; i++) {
			struct gstack *k = &stk[i];
			unsigned int j;

			k->site = (unsigned int)(i % a.callsites);
			k->depth = 1 + (unsigned int)below(a.stack_depth);
			k->frames[0] = sites[k->site].addr;
			for (j = 1; j < k->depth; j++)
				k->frames[j] = text + (j == 1 ? 0x400000 + below(4) * 0x80 :
						       0x500000 + below(64) * 0x100) + j;
		}
		for (i = free_base; i < dup_base; i++) {
			struct gstack *k = &stk[i];
			unsigned int j;

			k->site = (unsigned int)(i - free_base);
			k->depth = a.stack_depth < 3 ? (unsigned int)a.stack_depth : 3;
			k->frames[0] = k->site < a.callsites ? sites[k->site].addr + 0x100000 :
				       text + 0x200000;
			for (j = 1; j < k->depth; j++)
				k->frames[j] = text + 0x600000 +
					       (k->site < a.callsites ? k->site % 3 : 3) * 0x80 + j;
		}
		/* The allocator's call site on top of an allocation stack (at the limit, less its outermost). */
		for (i = dup_base; i < nstk; i++) {
			const struct gstack *c = &stk[i - dup_base];
			struct gstack *k = &stk[i];

			k->site = c->site;
			k->depth = c->depth < a.stack_depth ? c->depth + 1 : c->depth;
			k->frames[0] = large_site;
			memcpy(&k->frames[1], c->frames, (k->depth - 1) * sizeof(k->frames[0]));
		}
	}

	opts.big_endian = a.big_endian;
	opts.word_bits = (unsigned int)a.word_bits;
	opts.page_size = (uint32_t)a.page_size;
	opts.first_seq = (uint32_t)a.first_seq;
	opts.start_mono_ns = t;
	opts.start_real_ns = 1700000000ULL * 1000000000ULL;
	opts.set_minor = a.set_minor;
	opts.abi_minor = (uint16_t)a.abi_minor;
	opts.cut_ns = a.cut_ns;
	opts.segment = (uint32_t)a.segment;
	opts.dropped_records = a.dropped;
	g = gen_open(a.dir, (unsigned int)a.cpus, &opts);
	if (!g) {
		ret = KMT_EXIT_IO;
		goto out;
	}
	for (i = 0; i < a.cpus; i++)
		gen_set_cpu_node(g, (unsigned int)i, (int)(i % a.nodes));
	if (a.script) {
		ret = run_script(g, a.script, (unsigned int)a.cpus, t, a.page_size);
		if (ret != KMT_EXIT_OK)
			goto out;
		a.events = 0;
	}

	for (i = 0; i < a.events; i++) {
		unsigned int cpu = (unsigned int)below(a.cpus);
		uint32_t pid = 100 + (uint32_t)below(50);
		int r = 0;

		/* Marks slab events only: the probes are on slab entry points. */
		probed = a.probed_every && (i + 1) % a.probed_every == 0;
		t += 1 + below(2000);
		if (a.lost_every && i && i % a.lost_every == 0) {
			if (gen_lost(g, cpu, t, 1 + below(64)) < 0)
				goto io_err;
			t++;
		}
		/* Free when the pool is full, else half the time once there are objects. */
		if (nlive == a.live || (nlive && below(100) < 48)) {
			size_t k = below(nlive);
			struct obj o = live[k];

			live[k] = live[--nlive];
			if (o.kind != 2 && !a.fresh && freelist_push(&fl[o.freelist], o.ptr) < 0) {
				fprintf(stderr, "kmemtrace-gen: out of memory\n");
				goto out;
			}
			/* Mostly freed where allocated: other CPUs a quarter of the time. */
			if (below(4))
				cpu = o.cpu;
			gen_set_flags(g, cpu, probed && o.kind != 2 ? KMT_F_PROBED : 0);
			if (o.stk >= 0) {
				stk[o.stk].frees++;
				stk[o.stk].out--;
				stk[o.stk].out_bytes -= o.bytes;
			}
			if (a.stack_frees && a.stack_depth && o.kind != 2) {
				/* The module's way: the stack once per CPU, then its id, or none. */
				int id = stack_id_of(g, &gs, cpu, free_base + o.site, t);
				struct kmt_event ev = { 0 };

				if (id < 0)
					goto io_err;
				if (id) {
					stk[free_base + o.site].fhits++;
					stk[free_base + o.site].fbytes += o.bytes;
				}
				ev.type = o.kind == 0 ? KMT_REC_KFREE : KMT_REC_CACHE_FREE;
				ev.timestamp = t;
				ev.call_site = o.site_addr + 0x100000;
				ev.ptr = o.ptr;
				ev.cache_id = o.kind == 1 ? o.cache_id : 0;
				ev.node = KMT_NODE_ANY;
				ev.pid = pid;
				ev.stack_id = (uint16_t)id;
				ev.flags = id ? 0 : KMT_F_NO_STACK;
				if (o.kind == 1)
					r = describe(g, described, cpu,
						     (unsigned int)((o.cache_id - cache_base) / 0x100),
						     cache_base, t);
				if (!r)
					r = gen_event(g, cpu, &ev);
			} else if (o.kind == 0) {
				r = gen_kfree(g, cpu, t, o.site_addr + 0x100000, o.ptr, pid);
			} else if (o.kind == 1) {
				unsigned int c = (unsigned int)((o.cache_id - cache_base) / 0x100);

				r = describe(g, described, cpu, c, cache_base, t);
				if (!r)
					r = gen_cache_free(g, cpu, t, o.site_addr + 0x100000, o.ptr,
							   o.cache_id, pid);
			} else {
				r = gen_page_free(g, cpu, t, o.site_addr + 0x100000, o.ptr,
						  o.order, pid);
			}
		} else if (below(1000) == 0) {
			/* A free of an object allocated before the trace began. */
			uint64_t ptr = heap - 0x10000 + below(0x1000) * 8;

			gen_set_flags(g, cpu, probed ? KMT_F_PROBED : 0);
			if (a.stack_frees && a.stack_depth) {
				struct gstack *k = &stk[free_base + a.callsites];
				int id = stack_id_of(g, &gs, cpu, free_base + a.callsites, t);
				struct kmt_event ev = {
					.type = KMT_REC_KFREE, .timestamp = t,
					.call_site = text + 0x200000, .ptr = ptr,
					.node = KMT_NODE_ANY, .pid = pid,
				};

				if (id < 0)
					goto io_err;
				ev.stack_id = (uint16_t)id;
				ev.flags = id ? 0 : KMT_F_NO_STACK;
				k->fhits += id != 0;
				k->fno_alloc += id != 0;
				r = gen_event(g, cpu, &ev);
			} else {
				r = gen_kfree(g, cpu, t, text + 0x200000, ptr, pid);
			}
		} else {
			int32_t ki = a.stack_depth ? (int32_t)below(a.nstacks) : -1;
			uint32_t si = ki >= 0 ? stk[ki].site : (uint32_t)below(a.callsites);
			struct site *s = &sites[si];
			int32_t node = below(8) ? KMT_NODE_ANY : (int32_t)below(a.nodes);
			int fail = below(2000) == 0;
			struct obj o = { .site_addr = s->addr, .kind = s->kind, .cpu = (uint16_t)cpu,
					 .site = si };
			uint32_t req = s->size - (uint32_t)below(s->size / 4 + 1);
			struct freelist *f;
			int large = 0, sid = 0, dup_id = -1;

			if (req == 0)
				req = 1;
			if (a.large_every && s->kind == 0 && ++nkmalloc % a.large_every == 0) {
				large = 1;
				fail = 0;
				req = (uint32_t)(2 * a.page_size + 1 + below(6 * a.page_size));
				nlarge++;
			}
			gen_set_flags(g, cpu, probed && s->kind != 2 ? KMT_F_PROBED : 0);
			o.freelist = (uint32_t)freelist_of(s, req);
			f = &fl[o.freelist];
			/* New addresses are unique: a 32-bit space wraps only after 2^28 objects. */
			if (fail)
				o.ptr = 0;
			else if (s->kind != 2 && f->n)
				o.ptr = f->ptr[--f->n];
			else
				o.ptr = heap + ((next_ptr++ * 64) & 0x0fffffffULL);
			/* Page allocations carry no stack here: the stacks view is of slab ones. */
			o.stk = s->kind != 2 ? ki : -1;
			/* Traced twice: the allocator's event, its stack's id first. */
			if (large && a.twice) {
				dup_id = ki >= 0 ? stack_id_of(g, &gs, cpu, dup_base + (uint64_t)ki, t) : 0;
				if (dup_id < 0)
					goto io_err;
			}
			if (o.stk >= 0) {
				sid = stack_id_of(g, &gs, cpu, (uint64_t)o.stk, t);
				if (sid < 0)
					goto io_err;
				if (!sid)
					o.stk = -1;
			}
			if (s->kind != 2) {
				struct kmt_event ev = { 0 };

				ev.type = s->kind == 0 ? KMT_REC_KMALLOC : KMT_REC_CACHE_ALLOC;
				ev.timestamp = t;
				ev.call_site = s->addr;
				ev.ptr = o.ptr;
				ev.bytes_req = req;
				ev.bytes_alloc = kmalloc_slab(req);
				/* The page allocator's block: PAGE_SIZE << get_order(req). */
				if (large)
					for (ev.bytes_alloc = (uint32_t)a.page_size; ev.bytes_alloc < req;)
						ev.bytes_alloc <<= 1;
				if (s->kind == 1) {
					uint32_t osz = 32 + 32 * s->cache;

					o.cache_id = cache_base + s->cache * 0x100;
					if (describe(g, described, cpu, s->cache, cache_base, t) < 0)
						goto io_err;
					ev.cache_id = o.cache_id;
					ev.bytes_req = osz;
					ev.bytes_alloc = osz + 16;
				}
				/* GFP_KERNEL, as the helpers write it. */
				ev.gfp_flags = 0xcc0;
				ev.node = node;
				ev.pid = pid;
				ev.stack_id = (uint16_t)sid;
				if (ki >= 0 && !sid)
					ev.flags = KMT_F_NO_STACK;
				if (dup_id >= 0) {
					struct kmt_event first = ev;

					first.call_site = large_site;
					first.stack_id = (uint16_t)dup_id;
					first.flags = ki >= 0 && !dup_id ? KMT_F_NO_STACK : 0;
					if (gen_dup_event(g, cpu, &first) < 0)
						goto io_err;
					pairs[dup_id > 0][sid > 0]++;
				}
				r = gen_event(g, cpu, &ev);
				o.bytes = ev.bytes_alloc;
				if (o.stk >= 0) {
					struct gstack *k = &stk[o.stk];

					k->hits++;
					if (fail) {
						k->failed++;
					} else {
						k->bytes_req += ev.bytes_req;
						k->bytes_alloc += ev.bytes_alloc;
						k->out++;
						k->out_bytes += ev.bytes_alloc;
					}
				}
			} else {
				o.order = (uint32_t)below(3);
				o.ptr = fail ? 0 : pfn_base + next_ptr * 8;
				r = gen_page_alloc(g, cpu, t, s->addr, o.ptr, o.order, node, pid);
			}
			if (!fail)
				live[nlive++] = o;
		}
		gen_set_flags(g, cpu, 0);
		gen_set_stack(g, cpu, 0);
		if (r < 0)
			goto io_err;
	}
	if (gen_flush(g) < 0)
		goto io_err;

	tot = gen_totals(g);
	printf("cpus %" PRIu64 "\n", a.cpus);
	printf("records %" PRIu64 "\n", tot->records);
	printf("events %" PRIu64 "\n", tot->allocs + tot->frees);
	printf("allocs %" PRIu64 "\n", tot->allocs);
	printf("failed_allocs %" PRIu64 "\n", tot->failed_allocs);
	printf("frees %" PRIu64 "\n", tot->frees);
	printf("tracked_frees %" PRIu64 "\n", tot->tracked_frees);
	printf("untracked_frees %" PRIu64 "\n", tot->untracked_frees);
	printf("bytes_req %" PRIu64 "\n", tot->bytes_req);
	printf("bytes_alloc %" PRIu64 "\n", tot->bytes_alloc);
	printf("bytes_freed %" PRIu64 "\n", tot->bytes_freed);
	printf("cross_cpu_frees %" PRIu64 "\n", tot->cross_cpu_frees);
	printf("cross_node_allocs %" PRIu64 "\n", tot->cross_node_allocs);
	printf("outstanding %" PRIu64 "\n", tot->outstanding);
	printf("outstanding_bytes %" PRIu64 "\n", tot->outstanding_bytes);
	printf("cache_descs %" PRIu64 "\n", tot->cache_descs);
	printf("probed_allocs %" PRIu64 "\n", tot->probed_allocs);
	printf("probed_frees %" PRIu64 "\n", tot->probed_frees);
	printf("lost_markers %" PRIu64 "\n", tot->lost_markers);
	printf("lost %" PRIu64 "\n", tot->lost);
	printf("callsites %zu\n", gen_ncallsites(g));
	for (i = 1; i <= KMT_REC_TYPE_MAX; i++)
		printf("type_%s %" PRIu64 "\n", kmt_rec_type_name((unsigned int)i), tot->by_type[i]);
	printf("stacks_written %" PRIu64 "\n", tot->stacks);
	printf("stack_allocs %" PRIu64 "\n", tot->stack_allocs);
	printf("no_stack_allocs %" PRIu64 "\n", tot->no_stack_allocs);
	printf("no_stack_frees %" PRIu64 "\n", tot->no_stack_frees);
	printf("large_kmallocs %" PRIu64 "\n", nlarge);
	printf("dup_events %" PRIu64 "\n", tot->dup_events);
	printf("dup_no_stack_events %" PRIu64 "\n", tot->dup_no_stack_events);
	/* Which of the two events of a large kmalloc traced twice had a stack. */
	printf("dup_pairs_both_stacks %" PRIu64 "\n", pairs[1][1]);
	printf("dup_pairs_first_only %" PRIu64 "\n", pairs[1][0]);
	printf("dup_pairs_second_only %" PRIu64 "\n", pairs[0][1]);
	printf("dup_pairs_neither %" PRIu64 "\n", pairs[0][0]);
	for (i = 0; a.per_site && i < gen_ncallsites(g); i++) {
		const struct gen_callsite *c = gen_callsite_at(g, i);

		printf("site 0x%" PRIx64 " hits %" PRIu64 " failed %" PRIu64 " bytes_req %" PRIu64
		       " bytes_alloc %" PRIu64 " frees %" PRIu64 " outstanding %" PRIu64
		       " outstanding_bytes %" PRIu64 "\n", c->addr, c->hits, c->failed, c->bytes_req,
		       c->bytes_alloc, c->frees, c->outstanding, c->outstanding_bytes);
	}
	/* Allocation stacks only: the report's stacks are those of allocations. */
	for (i = 0; stk && i < a.nstacks; i++) {
		const struct gstack *k = &stk[i];
		unsigned int j;

		if (!k->hits)
			continue;
		printf("stack %" PRIu64 " hits %" PRIu64 " failed %" PRIu64 " bytes_req %" PRIu64
		       " bytes_alloc %" PRIu64 " frees %" PRIu64 " outstanding %" PRIu64
		       " outstanding_bytes %" PRIu64 " frames ", i, k->hits, k->failed, k->bytes_req,
		       k->bytes_alloc, k->frees, k->out, k->out_bytes);
		for (j = 0; j < k->depth; j++)
			printf("%s0x%" PRIx64, j ? "," : "", k->frames[j]);
		printf("\n");
	}
	/* Free stacks: free events with each, their objects' bytes, those of no allocation. */
	for (i = free_base; stk && i < dup_base; i++) {
		const struct gstack *k = &stk[i];
		unsigned int j;

		if (!k->fhits)
			continue;
		printf("free_stack %" PRIu64 " frees %" PRIu64 " bytes_freed %" PRIu64
		       " frees_no_alloc %" PRIu64 " frames ", i, k->fhits, k->fbytes, k->fno_alloc);
		for (j = 0; j < k->depth; j++)
			printf("%s0x%" PRIx64, j ? "," : "", k->frames[j]);
		printf("\n");
	}
	ret = KMT_EXIT_OK;
	goto out;

io_err:
	ret = KMT_EXIT_IO;
out:
	if (g && gen_close(g) < 0 && ret == KMT_EXIT_OK)
		ret = KMT_EXIT_IO;
	for (i = 0; i < NFREELISTS; i++)
		free(fl[i].ptr);
	free(sites);
	free(live);
	free(described);
	free(stk);
	free(gs.id);
	free(gs.next);
	return ret;
}
