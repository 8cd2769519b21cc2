// SPDX-License-Identifier: GPL-2.0-only
/*
 * report_run.c - kmemtrace-report's pipeline: the trace's files, metadata
 * and symbolizers, the merged read into the analysis (or the --raw dump,
 * or the --interval tables as they close), and the output.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kmt_ahead.h"
#include "kmt_exit.h"
#include "kmt_map.h"
#include "kmt_reader.h"
#include "core/report_gfp.h"
#include "core/report_meta.h"
#include "core/report_slab.h"
#include "core/rpt_shards.h"
#include "report_run.h"
#include "sym/sym_kallsyms.h"
#include "writers/out_html.h"
#include "writers/out_pprof.h"
#include "writers/out_interval.h"
#include "writers/report_out.h"

#define PROG "kmemtrace-report"

/* A step's result besides the KMT_EXIT_* codes: out of memory, said once by report_run(). */
#define RUN_NOMEM	(-1)

/* --interval: each table as it closes, in the chosen format. */
struct ivl_emit {
	FILE *fp;
	enum out_fmt fmt;
	struct ivl_out o;
	bool first;
};

/* What a run holds, released by report_run() whatever step it stopped at. */
struct run {
	struct report_job *j;
	struct kmt_inputs in;
	uint64_t total_bytes;
	struct rpt_meta *meta;
	struct gfp_names *gfp;
	struct ksyms *ks;
	struct srcline *sl;
	struct kmt_merge *m;
	struct kmt_ahead *ahead;	/* -j 2 or more: m read ahead on a thread */
	struct rpt_shards *shards;	/* -j 3 or more: r divided over -j less one threads */
	struct rpt_slab *slab;
	struct rpt *r;
	struct ivl *iv;
	struct ivl_emit ie;
	struct growth *gw;	/* --at, --diff: the snapshots */
	/*
	 * --pprof with --at T: the analysis of the records up to T (its
	 * outstanding objects are those at T), the profile's; else r's.
	 */
	struct rpt *rp;
	struct raw_ctx *raw;	/* --raw: what the dump keeps between records */
	bool flush;		/* the output is complete: its write errors count */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int ivl_emit(const struct ivl_table *t, void *arg)
{
	struct ivl_emit *e = arg;

	if (ivl_doc_table(e->fp, e->fmt, t, &e->o, e->first))
		return -1;
	e->first = false;
	return 0;
}

/* An ivl_feed() or ivl_flush() failure: out of memory, or stacks asked of a trace without. */
static int ivl_failed(struct run *x, int rc)
{
	if (rc != IVL_NO_STACKS)
		return RUN_NOMEM;
	fflush(stdout);
	fprintf(stderr, PROG ": %s: %s\n", x->in.name, ivl_no_stacks_msg);
	return KMT_EXIT_USAGE;
}

static bool dir_has(const char *dir, const char *name)
{
	char p[PATH_MAX + 32];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return stat(p, &st) == 0;
}

/* The trace's files, and how many bytes they hold for the progress indicator. */
static int find_inputs(struct run *x)
{
	struct kmt_error err = { 0 };
	struct stat st;
	size_t i;

	if (kmt_inputs_resolve(x->j->inputs, x->j->ninputs, &x->in, &err)) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		return kmt_error_exit(&err);
	}
	for (i = 0; i < x->in.n; i++)
		if (stat(x->in.paths[i], &st) == 0)
			x->total_bytes += (uint64_t)st.st_size;
	return 0;
}

/* Metadata and kallsyms: absent files are one note, never a failure. */
static void load_meta_syms(struct run *x)
{
	const struct report_job *j = x->j;
	const char *dir = x->in.dir;
	char msg[1024], absent[64] = "";
	int missing;

	x->meta = meta_load_dir(dir, msg, sizeof(msg), &missing);
	if (!x->meta && !missing)
		fprintf(stderr, PROG ": warning: %s\n", msg);
	if (!x->meta && missing)
		strcat(absent, ", kmemtrace.meta");
	if (!dir_has(dir, "kallsyms"))
		strcat(absent, ", kallsyms");
	if (!dir_has(dir, "modules"))
		strcat(absent, ", modules");
	if (!j->out.raw_ip || j->raw || j->vmlinux || j->nkos || j->moddir) {
		x->ks = ksyms_load_dir(dir, msg, sizeof(msg), &missing);
		if (!x->ks && !missing)
			fprintf(stderr, PROG ": warning: %s: call sites are shown as raw "
				"addresses\n", msg);
		if (x->ks && *ksyms_warnings(x->ks))
			fprintf(stderr, PROG ": warning: %s", ksyms_warnings(x->ks));
	}
	if (absent[0])
		fprintf(stderr, PROG ": note: %s has no %s%s\n", dir, absent + 2,
			strstr(absent, "kallsyms") && !j->out.raw_ip ?
			": call sites are shown as raw addresses" : "");
}

/*
 * The traced kernel's GFP flag names: a trace without tracepoint_formats
 * (no tracefs, an older kmemtraced) shows masks in hex; a file that is
 * there but wrong stops the report with its file and line.
 */
static int load_gfp(struct run *x)
{
	char msg[1024];
	int missing;

	x->gfp = gfp_names_load_dir(x->in.dir, msg, sizeof(msg), &missing);
	if (!x->gfp && !missing) {
		if (errno == ENOMEM)
			return RUN_NOMEM;
		fprintf(stderr, PROG ": %s\n", msg);
		return errno == EINVAL ? KMT_EXIT_DATA : KMT_EXIT_IO;
	}
	x->j->out.gfp = x->gfp;
	return 0;
}

/* file:line from --vmlinux, --ko and --module-dir, each checked readable first. */
static int open_srcline(struct run *x)
{
	const struct report_job *j = x->j;
	const char *chk[2] = { j->vmlinux, j->moddir };
	char msg[1024];
	size_t i;

	if (!j->vmlinux && !j->nkos && !j->moddir)
		return 0;
	for (i = 0; i < 2; i++) {
		if (chk[i] && access(chk[i], R_OK)) {
			fprintf(stderr, PROG ": %s: %s\n", chk[i], strerror(errno));
			return KMT_EXIT_IO;
		}
	}
	for (i = 0; i < j->nkos; i++) {
		if (access(j->kos[i], R_OK)) {
			fprintf(stderr, PROG ": %s: %s\n", j->kos[i], strerror(errno));
			return KMT_EXIT_IO;
		}
	}
	x->sl = srcline_open(j->resolver, j->vmlinux, j->kos, j->nkos, j->moddir, x->ks, msg,
			     sizeof(msg));
	if (!x->sl) {
		fprintf(stderr, PROG ": %s\n", msg);
		return KMT_EXIT_DATA;
	}
	return 0;
}

/* The analysis the records will be fed to, and --interval's first lines. */
static int start_analysis(struct run *x)
{
	struct report_job *j = x->j;
	unsigned int flags = j->out.view == VIEW_ALLOC ? RPT_PTR_VIEW : 0;
	uint32_t page_size = kmt_file_header(kmt_merge_file(x->m, 0))->page_size;
	struct ivl_opts vo = { 0 };

	/* Coverage decides which double frees are certain; aliases name caches. */
	x->slab = slab_info_new(x->meta);
	if (!x->slab)
		return RUN_NOMEM;
	if (slab_cache_allocs_seen(x->slab))
		flags |= RPT_CACHE_ALLOCS_SEEN;
	if (slab_kmalloc_allocs_missed(x->slab))
		flags |= RPT_KMALLOC_ALLOCS_MISSED;
	if (meta_kernel_at_least(x->meta, 6, 4) == 1)
		flags |= RPT_KFREE_TAKES_CACHE_OBJS;
	if (j->lifetimes || j->html)
		flags |= RPT_LIFETIMES;
	if (j->html)
		flags |= RPT_TIMELINE;
	if (j->pprof && !j->growth_opt)
		flags |= RPT_SAMPLES;
	j->f.slab = x->slab;
	x->r = rpt_new(&j->f, flags);
	if (!x->r)
		return RUN_NOMEM;
	rpt_set_page_size(x->r, page_size);
	if (j->growth_opt) {
		x->gw = growth_new(j->growth.t1, j->growth.t2, j->growth.diff);
		if (!x->gw)
			return RUN_NOMEM;
		j->growth.g = x->gw;
	}
	if (j->pprof && j->growth_opt) {
		struct rpt_filter upto = j->f;

		upto.has_time = true;
		upto.t_start = j->f.has_time ? j->f.t_start : 0;
		upto.t_end = j->growth.t1;
		x->rp = rpt_new(&upto, RPT_SAMPLES);
		if (!x->rp)
			return RUN_NOMEM;
		rpt_set_page_size(x->rp, page_size);
	}
	if (!j->interval_ns)
		return 0;
	/* A trace whose metadata says it was taken without stacks: say so before any table. */
	if (j->ivl_by == IVL_BY_STACK && meta_stack_depth(x->meta) == 0) {
		fprintf(stderr, PROG ": %s: %s\n", x->in.name, ivl_no_stacks_msg);
		return KMT_EXIT_USAGE;
	}
	vo.interval_ns = j->interval_ns;
	vo.by = j->ivl_by;
	vo.sort = j->ivl_sort;
	vo.rows = j->out.lines < 0 ? (j->out.fmt == FMT_TEXT ? 20 : 0) : (size_t)j->out.lines;
	x->iv = ivl_new(x->r, &vo);
	if (!x->iv)
		return RUN_NOMEM;
	/* A rotated trace's intervals are of its kept window, from the cut on. */
	if (j->out.rotated) {
		ivl_set_cut(x->iv, j->out.cut_ns);
		fprintf(stderr, PROG ": note: %s is a rotated trace: its intervals begin at its "
			"first record after the cut, the records before were folded into a "
			"checkpoint\n", x->in.name);
	}
	x->ie.fp = stdout;
	x->ie.fmt = j->out.fmt;
	x->ie.o.by = vo.by;
	x->ie.o.ks = j->out.raw_ip ? NULL : x->ks;
	x->ie.o.sl = x->sl;
	x->ie.first = true;
	if (ivl_doc_begin(stdout, x->ie.fmt, &vo, &x->ie.o, x->in.name))
		return RUN_NOMEM;
	return 0;
}

/*
 * -j: shards of the analysis at most. Past three, the one thread that
 * reads, checks and merges the files is the slower side (architecture.md,
 * "The report on more than one core"): more would only spin.
 */
#define MAX_SHARDS	3

/* Every record in merged order to the dump, the interval tables or the analysis. */
static int read_trace(struct run *x)
{
	const struct report_job *j = x->j;
	const union kmt_rec *here[256];
	const union kmt_rec *const *batch = here;
	bool progress, shown = false, first = true;
	uint64_t nrec = 0, t0 = 0;
	double t_next;
	size_t i;
	int n;

	progress = !j->no_progress && isatty(STDERR_FILENO) && x->total_bytes > (64u << 20);
	t_next = now_s() + 1.0;
	/*
	 * One thread: batches of records read in place, no copy between reader
	 * and analysis. More (-j): the reading and merging on a thread of its
	 * own, ahead of what follows here; three or more: the analysis divided
	 * by address too, its shard 0 here and the others on threads.
	 */
	if (j->jobs > 2 && !j->raw && !x->iv && !x->gw && rpt_shardable(x->r)) {
		unsigned int nsh = j->jobs - 1 < MAX_SHARDS ? j->jobs - 1 : MAX_SHARDS;

		x->shards = rpt_shards_start(x->r, x->m, nsh, &x->ahead);
		if (!x->shards)
			fprintf(stderr, PROG ": no %u threads to analyse with (%s): using two\n",
				nsh, strerror(errno));
	}
	if (j->jobs > 1 && !x->shards) {
		x->ahead = kmt_ahead_start(x->m);
		if (!x->ahead)
			fprintf(stderr, PROG ": no thread to read with (%s): reading on one\n",
				strerror(errno));
	}
	while ((n = x->shards ? rpt_shards_next(x->shards, &batch) :
		    x->ahead ? kmt_ahead_next(x->ahead, &batch) :
		    kmt_merge_next_batch(x->m, here, sizeof(here) / sizeof(here[0]))) > 0) {
		if (x->shards) {
			/* Read to the end whatever happens: the other shards read the same batches. */
			(void)rpt_shards_feed(x->shards, batch, (size_t)n);
		} else if (j->raw) {
			if (first)
				t0 = batch[0]->c.timestamp;
			first = false;
			for (i = 0; i < (size_t)n; i++)
				raw_print(stdout, x->raw, batch[i], t0,
					  j->out.raw_ip ? NULL : x->ks, x->gfp);
		} else if (x->iv) {
			int rc = ivl_feed(x->iv, batch, (size_t)n, ivl_emit, &x->ie);

			if (rc)
				return ivl_failed(x, rc);
		} else if (x->gw) {
			if (growth_feed(x->gw, x->r, batch, (size_t)n) ||
			    (x->rp && rpt_feed_refs(x->rp, batch, (size_t)n)))
				return RUN_NOMEM;
		} else if (rpt_feed_refs(x->r, batch, (size_t)n)) {
			return RUN_NOMEM;
		}
		nrec += (uint64_t)n;
		/* The clock is asked once per 2^20 records. */
		if (progress && nrec >> 20 != (nrec - (uint64_t)n) >> 20 && now_s() >= t_next) {
			t_next = now_s() + 0.5;
			fprintf(stderr, "\r" PROG ": %" PRIu64 " records read, %3d%%", nrec,
				(int)(100.0 * (double)(nrec * KMT_RECORD_SIZE) /
				      (double)x->total_bytes));
			shown = true;
		}
	}
	if (shown)
		fputs("\r\033[K", stderr);
	if (x->shards) {
		int rc = rpt_shards_join(x->shards);

		x->shards = NULL;
		if (rc && n >= 0) {
			kmt_ahead_stop(x->ahead);
			x->ahead = NULL;
			return RUN_NOMEM;
		}
	}
	/* The merge is the caller's again: its error and its files' counts. */
	kmt_ahead_stop(x->ahead);
	x->ahead = NULL;
	if (n < 0) {
		const struct kmt_error *e = kmt_merge_error(x->m);

		fflush(stdout);
		fprintf(stderr, PROG ": %s\n", e->msg);
		return kmt_error_exit(e);
	}
	for (i = 0; i < kmt_merge_nfiles(x->m); i++) {
		const struct kmt_file_stats *fs = kmt_file_stats(kmt_merge_file(x->m, i));

		x->j->out.unknown_records += fs->unknown;
		x->j->out.truncated_bytes += fs->truncated_bytes;
		if (fs->truncated_bytes)
			fprintf(stderr, PROG ": %s: ignored a partial record of %" PRIu64
				" bytes at the end\n", kmt_file_path(kmt_merge_file(x->m, i)),
				fs->truncated_bytes);
	}
	return 0;
}

/*
 * A rotated trace: its checkpoints' cut (one for all CPUs) and what they
 * folded, into the header's facts; and the options that the sums cannot
 * answer, refused before anything is read.
 */
static int find_window(struct run *x)
{
	struct report_job *j = x->j;
	struct out_opts *o = &j->out;
	struct kmt_error err = { 0 };
	const char *what;
	int rc = kmt_merge_checkpoint(x->m, &o->cut_ns, &o->folded_records, &err);

	if (rc < 0) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		return kmt_error_exit(&err);
	}
	o->rotated = rc;
	if (!o->rotated)
		return 0;
	o->first_segment = x->in.first_segment;
	o->last_segment = x->in.last_segment;
	what = j->f.has_pid ? "--pid" : j->f.min_size ? "--min-size" : NULL;
	if (what && !j->raw) {
		fprintf(stderr, PROG ": %s: %s: a rotated trace's records before its cut were "
			"folded into sums by CPU, call site, cache and stack, which a pid or size "
			"filter cannot divide (trace-format.md, section 10)\n", x->in.name, what);
		return KMT_EXIT_USAGE;
	}
	return 0;
}

/*
 * A rotated trace: a time of --time, --at or --diff before the cut (T ns
 * after the trace's first record) is refused, naming the option.
 */
static int window_time(struct run *x, const char *opt, const char *val, uint64_t t)
{
	const struct out_opts *o = &x->j->out;
	uint64_t first = rpt_totals(x->r)->first_ts;
	char c[32];

	if (!o->rotated || t > UINT64_MAX - first || first + t >= o->cut_ns)
		return 0;
	out_fmt_secs(c, sizeof(c), o->cut_ns > first ? o->cut_ns - first : 0);
	fprintf(stderr, PROG ": %s=%s: before the trace's cut at +%s: records before it were "
		"folded into a checkpoint's sums, which have no time\n", opt, val, c);
	return KMT_EXIT_USAGE;
}

/* --interval: the last table, which ends with the trace. */
static int finish_intervals(struct run *x)
{
	/* The last interval ends with the trace: it is as long as the others. */
	int rc = ivl_flush(x->iv, ivl_emit, &x->ie);

	if (rc)
		return ivl_failed(x, rc);
	ivl_doc_end(stdout, x->ie.fmt);
	if (rpt_totals(x->r)->lost)
		fprintf(stderr, PROG ": warning: %" PRIu64 " records were lost: every "
			"number is a lower bound\n", rpt_totals(x->r)->lost);
	x->flush = true;
	return KMT_EXIT_OK;
}

/* What the header says about the trace. */
static void describe_trace(struct run *x)
{
	struct out_opts *o = &x->j->out;
	const struct kmt_file_header *h = kmt_file_header(kmt_merge_file(x->m, 0));
	uint64_t o1, o2;

	o->trace = x->in.name;
	o->nfiles = x->in.n;
	o->word_bits = h->word_bits;
	o->big_endian = kmt_file_big_endian(kmt_merge_file(x->m, 0));
	o->page_size = h->page_size;
	o->start_mono_ns = h->start_mono_ns;
	o->start_real_ns = h->start_real_ns;
	/*
	 * Drops after a CPU's last LOST record (tracing stopped while its
	 * buffer was full) only show in the module's overrun counter.
	 */
	if (!x->j->f.cpus && !x->j->f.has_time && meta_get_u64(x->meta, "overruns_start", &o1) &&
	    meta_get_u64(x->meta, "overruns_end", &o2) && o2 >= o1 &&
	    o2 - o1 > rpt_totals(x->r)->lost)
		o->lost_unmarked = o2 - o1 - rpt_totals(x->r)->lost;
	o->meta = x->meta;
	o->ks = x->ks;
	o->sl = x->sl;
	o->resolver = x->j->resolver == SRCLINE_BFD ? "bfd" : "dw";
}

/* --folded: what the folded stacks leave out. */
static void folded_notes(const struct rpt *r, const struct stacks_args *stk)
{
	const struct rpt_totals *t = rpt_totals(r);

	if (!rpt_has_stacks(r))
		fprintf(stderr, PROG ": note: the trace has no stacks (trace with the module "
			"parameter stack_depth): nothing to fold\n");
	else if (stk->weight == FOLD_FREES && !rpt_has_free_stacks(r))
		fprintf(stderr, PROG ": note: the trace has no stacks of frees (trace with "
			"the module parameter stack_frees=1): nothing to fold\n");
	else if (stk->weight == FOLD_FREES && t->no_stack_frees + t->unknown_stack_frees)
		fprintf(stderr, PROG ": note: %" PRIu64 " frees without a stack are not in the "
			"folded stacks (%" PRIu64 " marked, %" PRIu64 " naming a stack not in "
			"the trace)\n", t->no_stack_frees + t->unknown_stack_frees,
			t->no_stack_frees, t->unknown_stack_frees);
	else if (stk->weight != FOLD_FREES && t->allocs > t->stack_allocs)
		fprintf(stderr, PROG ": note: %" PRIu64 " events without a stack are not in the "
			"folded stacks (%" PRIu64 " marked, %" PRIu64 " naming a stack not in "
			"the trace)\n", t->allocs - t->stack_allocs, t->no_stack_allocs,
			t->unknown_stack_allocs);
}

/*
 * --at, --diff: the snapshots not taken yet (times at or past the last
 * record), then whether each time lies in the trace (and in --time's
 * window, outside which the report saw nothing): a usage error naming the
 * option and its value otherwise.
 */
static int growth_check(struct run *x)
{
	const struct report_job *j = x->j;
	uint64_t dur = growth_duration(x->gw), t[2] = { j->growth.t1, j->growth.t2 };
	uint64_t lo = j->f.has_time ? j->f.t_start : 0;
	uint64_t hi = j->f.has_time && j->f.t_end < dur ? j->f.t_end : dur;
	char d[32], l[32], h[32];
	unsigned int i;

	if (growth_finish(x->gw, x->r))
		return RUN_NOMEM;
	if (!growth_seen(x->gw)) {
		fprintf(stderr, PROG ": %s=%s: the trace holds no records\n", j->growth_opt,
			j->growth_val);
		return KMT_EXIT_USAGE;
	}
	for (i = 0; i < (j->growth.diff ? 2u : 1u); i++)
		if (window_time(x, j->growth_opt, j->growth_val, t[i]))
			return KMT_EXIT_USAGE;
	out_fmt_secs(d, sizeof(d), dur);
	out_fmt_secs(l, sizeof(l), lo);
	out_fmt_secs(h, sizeof(h), hi);
	for (i = 0; i < (j->growth.diff ? 2u : 1u); i++) {
		if (t[i] > dur) {
			fprintf(stderr, PROG ": %s=%s: %s is past the trace's end (its last record "
				"is %s after its first)\n", j->growth_opt, j->growth_val,
				j->growth.diff ? (i ? "T2" : "T1") : "T", d);
			return KMT_EXIT_USAGE;
		}
		if (t[i] < lo || t[i] > hi) {
			fprintf(stderr, PROG ": %s=%s: %s is outside --time's window (%s to %s): "
				"the report sees no record outside it\n", j->growth_opt,
				j->growth_val, j->growth.diff ? (i ? "T2" : "T1") : "T", l, h);
			return KMT_EXIT_USAGE;
		}
	}
	return 0;
}

/*
 * What a writer of an output file returned (0, -1 out of memory, or an
 * errno value) as the run's status, the error said with the file's name.
 */
static int file_status(const char *path, int rc)
{
	if (rc == -1)
		return RUN_NOMEM;
	if (rc) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(rc));
		return KMT_EXIT_IO;
	}
	return 0;
}

/* --pprof's file: of the whole trace (or --time window), or up to --at's time. */
static int write_pprof(struct run *x)
{
	const struct report_job *j = x->j;
	struct out_opts o = j->out;
	char *filters = NULL;
	int rc;

	if (!x->rp)
		return pprof_write_file(j->pprof, x->r, &o);
	if (rpt_finish(x->rp))
		return -1;
	/* Its comments say where the profile ends, with the filters. */
	if (asprintf(&filters, "%s%s--at %s (the profile's records end there)",
		     o.filters ? o.filters : "", o.filters ? ", " : "", j->growth_val) < 0)
		return -1;
	o.filters = filters;
	rc = pprof_write_file(j->pprof, x->rp, &o);
	free(filters);
	return rc;
}

/* The summary (or folded stacks) on stdout, and the --html page. */
static int write_report(struct run *x)
{
	struct report_job *j = x->j;
	struct out_opts *o = &j->out;
	size_t i;
	int rc;

	if (rpt_finish(x->r))
		return RUN_NOMEM;
	describe_trace(x);
	if (o->fmt != FMT_TEXT && rpt_totals(x->r)->lost + o->lost_unmarked)
		fprintf(stderr, PROG ": warning: %" PRIu64 " records were lost: every number is a "
			"lower bound\n", rpt_totals(x->r)->lost + o->lost_unmarked);
	/* CSV has no header to say it in (JSON has its "rotated", "coverage"). */
	if (o->fmt == FMT_CSV && o->rotated)
		fprintf(stderr, PROG ": note: %s is a rotated trace: the records before its cut were "
			"folded into a checkpoint (%" PRIu64 " records of dropped segments, folded, "
			"not lost; see the text report)\n", x->in.name, o->folded_records);
	if (o->fmt == FMT_CSV && slab_nmissed(x->slab)) {
		fputs(PROG ": note: not seen by this trace:", stderr);
		for (i = 0; i < slab_ncov(x->slab); i++)
			if (slab_cov(x->slab, i)->missed)
				fprintf(stderr, " %s", slab_cov(x->slab, i)->path);
		fputs(" (see the text report)\n", stderr);
	}
	if (j->folded) {
		folded_notes(x->r, &j->stk);
		if (stacks_folded(stdout, x->r, o, &j->stk))
			return RUN_NOMEM;
	} else if (report_print(stdout, x->r, o)) {
		return RUN_NOMEM;
	}
	x->flush = true;
	if (j->html) {
		rc = file_status(j->html, html_write_file(j->html, x->r, o, &j->life, &j->stk));
		if (rc)
			return rc;
	}
	if (j->pprof) {
		rc = file_status(j->pprof, write_pprof(x));
		if (rc)
			return rc;
	}
	if (x->sl && *srcline_warnings(x->sl))
		fprintf(stderr, PROG ": warning: %s", srcline_warnings(x->sl));
	return KMT_EXIT_OK;
}

static int run_steps(struct run *x)
{
	struct kmt_error err = { 0 };
	int ret;

	ret = find_inputs(x);
	if (ret)
		return ret;
	load_meta_syms(x);
	ret = load_gfp(x);
	if (ret)
		return ret;
	ret = open_srcline(x);
	if (ret)
		return ret;
	/* The files are finished ones: mapped, not copied (kmt_map.h says what if not). */
	kmt_map_guard(PROG);
	x->m = kmt_merge_open_inputs(&x->in, KMT_OPEN_MAP |
				     (x->j->allow_trunc ? KMT_OPEN_ALLOW_TRUNCATED : 0), &err);
	if (!x->m) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		return kmt_error_exit(&err);
	}
	ret = find_window(x);
	if (ret)
		return ret;
	if (x->j->raw) {
		x->raw = raw_ctx_new();
		if (!x->raw)
			return RUN_NOMEM;
		raw_print_legend(stdout);
	} else if ((ret = start_analysis(x)))
		return ret;
	ret = read_trace(x);
	if (ret)
		return ret;
	if (x->j->raw) {
		x->flush = true;
		return KMT_EXIT_OK;
	}
	if (x->j->f.has_time) {
		ret = window_time(x, "--time", x->j->time_val ? x->j->time_val : "?",
				  x->j->f.t_start);
		if (ret)
			return ret;
	}
	if (x->iv)
		return finish_intervals(x);
	if (x->gw) {
		ret = growth_check(x);
		if (ret)
			return ret;
	}
	return write_report(x);
}

int report_run(struct report_job *j)
{
	struct run x = { .j = j };
	int ret = run_steps(&x);

	if (ret == RUN_NOMEM) {
		fprintf(stderr, PROG ": out of memory\n");
		ret = KMT_EXIT_INTERNAL;
	} else if (x.flush && (fflush(stdout) || ferror(stdout))) {
		fprintf(stderr, PROG ": writing the report: %s\n", strerror(errno));
		ret = KMT_EXIT_IO;
	}
	kmt_ahead_stop(x.ahead);
	kmt_merge_close(x.m);
	ivl_free(x.iv);
	growth_free(x.gw);
	raw_ctx_free(x.raw);
	rpt_free(x.rp);
	rpt_free(x.r);
	slab_info_free(x.slab);
	srcline_close(x.sl);
	ksyms_free(x.ks);
	meta_free(x.meta);
	gfp_names_free(x.gfp);
	kmt_inputs_free(&x.in);
	return ret;
}
