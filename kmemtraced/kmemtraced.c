// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmemtraced.c - the kmemtrace daemon: checks the machine, then drains
 * kmemtrace.ko's per-CPU relay buffers into DIR/cpuN.out, with the metadata
 * to read them elsewhere, until a signal, a time limit or a command's exit.
 * The top layer (kmemtraced.h): it owns struct kmtd and calls the leaves,
 * env.c, drain.c and meta.c, which never call back.
 */
#include <argp.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kmemtraced.h"
#include "kmt_exit.h"

/* How often the main thread looks for CPUs that came online and modules (un)loaded. */
#define RESCAN_MS	500
/* -t upper bound: a year. */
#define MAX_SECONDS	31536000UL

const char *argp_program_version = "kmemtraced " KMT_VERSION " (trace format 1.x)";
error_t argp_err_exit_status = KMT_EXIT_USAGE;

/* Set by the signal handler, read by the main loop. */
static volatile sig_atomic_t kmtd_signal;
/* SIGINT/SIGTERM received; the handlers block each other, so ++ is safe. */
static volatile sig_atomic_t stop_signals;
static volatile sig_atomic_t child_changed;

static const char doc[] =
	"Drain kmemtrace.ko's per-CPU trace buffers into DIR/cpuN.out, with the metadata "
	"(kmemtrace.meta, kallsyms, modules) needed to read them on another machine.\n"
	"\n"
	"Tracing stops on SIGINT or SIGTERM, after -t SECONDS, or when COMMAND exits; "
	"kmemtraced then switches tracing off, drains every buffer and prints a summary. "
	"With -- COMMAND, whatever the buffers held before is discarded and the trace covers "
	"exactly the command's lifetime."
	"\v"
	"EXAMPLES:\n"
	"  kmemtraced -o /tmp/t              trace until Ctrl-C\n"
	"  kmemtraced -o /tmp/t -t 30        trace for 30 seconds\n"
	"  kmemtraced -o /tmp/t -- make -j4  trace one command, exit with its status\n"
	"  kmemtraced -f -o /tmp/t -r /dbg   overwrite a trace; debugfs is at /dbg\n"
	"  kmemtraced -o /tmp/t --tgid 1234 -t 10\n"
	"                                    only process 1234's allocations and their frees\n"
	"  kmemtraced -o /tmp/t --cgroup /sys/fs/cgroup/db --size 1024- -- sleep 5\n"
	"                                    a cgroup's allocations of 1 KiB or more\n"
	"  kmemtraced -o /tmp/t --max-size 2G --tgid 1234\n"
	"                                    run for hours, at most 2 GiB of records on disk\n"
	"  kmemtrace-report /tmp/t           then analyse it (on any machine)\n"
	"\n"
	"Exit status: 0 ok; 1 usage error, or DIR already holds a trace and -f was not "
	"given; 3 system or I/O error (not root, no debugfs, kmemtrace.ko not loaded or of "
	"another ABI major, cannot write DIR, disk full); 4 out of memory or internal error. "
	"With -- COMMAND and a successful trace: the command's status (128+N if a signal N "
	"killed it, 127 if it could not be run).\n"
	"\n"
	"The filter options have kmemtrace.ko record only the allocations that match all of "
	"them and, whoever frees them, those objects' frees; everything else is counted, not "
	"recorded. kmemtraced sets the filter for the run and puts back the one it found.";

/* Long options without a short form. */
enum {
	OPT_TGID = 0x100,
	OPT_PID,
	OPT_CGROUP,
	OPT_SIZE,
	OPT_CALL_SITE,
	OPT_CACHE,
	OPT_MAX_SIZE,
	OPT_SEGMENT_SIZE,
	OPT_KEEP_DROPPED,
};

/* --max-size lower bound, and the default segment: a quarter of it. */
#define MIN_MAX_SIZE	(64u * 1024)
#define MIN_SEG_SIZE	(16u * 1024)
/* How often the main thread looks at the segment's size with --max-size. */
#define ROTATE_MS	100
/* How far ahead of the switch its cut lies: far beyond a store's visibility. */
#define CUT_AHEAD_NS	1000000ull

static const struct argp_option options[] = {
	{ "output", 'o', "DIR", 0, "write the trace into DIR (default: the current "
	  "directory; created if missing)", 0 },
	{ "debugfs", 'r', "PATH", 0, "debugfs is mounted at PATH (default: "
	  KMTD_DEFAULT_DEBUGFS ")", 0 },
	{ "time", 't', "SECONDS", 0, "stop after SECONDS (1 to 31536000)", 0 },
	{ "force", 'f', NULL, 0, "overwrite a trace already in DIR", 0 },
	{ "quiet", 'q', NULL, 0, "print no summary, only errors", 0 },
	{ "verbose", 'v', NULL, 0, "say what is being done", 0 },
	{ NULL, 0, NULL, 0, "Bounded disk, for runs of hours:", 2 },
	{ "max-size", OPT_MAX_SIZE, "SIZE", 0, "keep at most SIZE bytes of records on disk "
	  "(k, M, G suffixes: KiB, MiB, GiB; at least 64k): write DIR/seg.NNNNNN segments and "
	  "fold the oldest into a checkpoint, DIR/ckpt.NNNNNN, that keeps every object live "
	  "at the start of the kept ones", 2 },
	{ "segment-size", OPT_SEGMENT_SIZE, "SIZE", 0, "switch segments every SIZE bytes of "
	  "records (default: a quarter of --max-size)", 2 },
	{ "keep-dropped", OPT_KEEP_DROPPED, "DIR2", 0, "move dropped segments into DIR2 "
	  "instead of removing them (to check a window's report against the whole run's)", 2 },
	{ NULL, 0, NULL, 0, "Filters at the source (all must match):", 1 },
	{ "tgid", OPT_TGID, "PID", 0, "only allocations by the threads of process PID (in "
	  "task context, as the initial pid namespace numbers it)", 1 },
	{ "pid", OPT_PID, "TID", 0, "only allocations by thread TID", 1 },
	{ "cgroup", OPT_CGROUP, "PATH|ID", 0, "only allocations by tasks in this cgroup v2 "
	  "directory or below it (or its id)", 1 },
	{ "size", OPT_SIZE, "MIN-MAX", 0, "only allocations asking for MIN to MAX bytes "
	  "(MIN- : no upper bound; N: exactly N)", 1 },
	{ "call-site", OPT_CALL_SITE, "FUNCTION", 0, "only allocations called from FUNCTION "
	  "(from /proc/kallsyms; up to 4, any of them)", 1 },
	{ "cache", OPT_CACHE, "NAME", 0, "only allocations from the kmem_cache NAME; "
	  "kmalloc-N (N bytes, or Nk) also takes the kmalloc() calls of that size class", 1 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct kmtd *d = state->input;
	unsigned long v;
	char *end;

	switch (key) {
	case 'o':
		if (!*arg)
			argp_error(state, "-o: the directory name is empty");
		d->run.outdir = arg;
		break;
	case 'r':
		if (!*arg)
			argp_error(state, "-r: the debugfs path is empty");
		d->debugfs = arg;
		break;
	case 't':
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (*arg < '0' || *arg > '9' || errno || *end || v < 1 || v > MAX_SECONDS)
			argp_error(state, "-t: '%s' is not a number of seconds from 1 to %lu",
				   arg, MAX_SECONDS);
		d->seconds = v;
		break;
	case 'f':
		d->run.force = true;
		break;
	case 'q':
		d->quiet = true;
		break;
	case 'v':
		d->verbose = true;
		break;
	case OPT_TGID:
		if (kmtd_filter_parse_pid(arg, &d->filter.tgid) < 0)
			argp_error(state, "--tgid: bad value");
		d->filter.any = true;
		break;
	case OPT_PID:
		if (kmtd_filter_parse_pid(arg, &d->filter.pid) < 0)
			argp_error(state, "--pid: bad value");
		d->filter.any = true;
		break;
	case OPT_CGROUP:
		if (!*arg)
			argp_error(state, "--cgroup: the path is empty");
		d->filter.cgroup = arg;
		d->filter.any = true;
		break;
	case OPT_SIZE:
		if (kmtd_filter_parse_size(arg, &d->filter.size_min, &d->filter.size_max) < 0)
			argp_error(state, "--size: bad value");
		d->filter.has_size = true;
		d->filter.any = true;
		break;
	case OPT_CACHE:
		if (kmtd_filter_parse_cache(arg) < 0)
			argp_error(state, "--cache: bad value");
		d->filter.cache = arg;
		d->filter.any = true;
		break;
	case OPT_MAX_SIZE:
		if (kmtd_parse_size(arg, &d->run.max_size) < 0 || d->run.max_size < MIN_MAX_SIZE)
			argp_error(state, "--max-size: '%s' is not a size of at least 64k", arg);
		break;
	case OPT_SEGMENT_SIZE:
		if (kmtd_parse_size(arg, &d->run.seg_size) < 0 || d->run.seg_size < MIN_SEG_SIZE)
			argp_error(state, "--segment-size: '%s' is not a size of at least 16k", arg);
		break;
	case OPT_KEEP_DROPPED:
		if (!*arg)
			argp_error(state, "--keep-dropped: the directory name is empty");
		d->keep_dropped = arg;
		break;
	case ARGP_KEY_END:
		if ((d->run.seg_size || d->keep_dropped) && !d->run.max_size)
			argp_error(state, "--segment-size and --keep-dropped need --max-size");
		if (d->run.max_size && !d->run.seg_size)
			d->run.seg_size = d->run.max_size / 4;
		if (d->run.seg_size > d->run.max_size / 2)
			argp_error(state, "--segment-size: at most half of --max-size, so that a "
				   "segment can be dropped while the next one fills");
		break;
	case OPT_CALL_SITE:
		if (!*arg)
			argp_error(state, "--call-site: the function name is empty");
		if (d->filter.nsites == KMTD_FILTER_SITES)
			argp_error(state, "--call-site: at most %d", KMTD_FILTER_SITES);
		d->filter.site_name[d->filter.nsites++] = arg;
		d->filter.any = true;
		break;
	case ARGP_KEY_ARG:
		/*
		 * The first operand starts COMMAND: everything after it is the
		 * command's (ARGP_IN_ORDER keeps its options from being ours).
		 */
		for (int i = state->next - 1; i >= 0; i--) {
			if (state->argv[i] == arg) {
				d->run.cmd = &state->argv[i];
				break;
			}
		}
		if (!d->run.cmd)
			argp_error(state, "cannot find COMMAND on the command line");
		state->next = state->argc;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = {
	options, parse_opt, "[-- COMMAND [ARG]...]", doc, NULL, NULL, NULL,
};

static void on_stop_signal(int sig)
{
	kmtd_signal = sig;
	stop_signals++;
}

static void on_child(int sig)
{
	(void)sig;
	child_changed = 1;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* mkdir -p, new directories 0700: the trace holds kernel addresses. */
static int make_dir(const char *path)
{
	char buf[PATH_MAX];
	struct stat st;
	char *slash;

	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return 0;
		kmtd_err("-o %s: not a directory", path);
		return -1;
	}
	if (strlen(path) >= sizeof(buf)) {
		kmtd_err("-o: path too long");
		return -1;
	}
	strcpy(buf, path);
	for (slash = strchr(buf + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST) {
			kmtd_err("cannot create directory %s: %s", buf, strerror(errno));
			return -1;
		}
		*slash = '/';
	}
	if (mkdir(buf, 0700) < 0 && errno != EEXIST) {
		kmtd_err("cannot create directory %s: %s", buf, strerror(errno));
		return -1;
	}
	return 0;
}

/* N of a name "cpuN" + suffix, or -1. */
static long cpu_of(const char *name, const char *suffix)
{
	unsigned long n;
	char *end;

	if (strncmp(name, "cpu", 3) != 0 || name[3] < '0' || name[3] > '9')
		return -1;
	errno = 0;
	n = strtoul(name + 3, &end, 10);
	if (errno || strcmp(end, suffix) != 0 || n >= KMTD_MAX_CPUS)
		return -1;
	return (long)n;
}

/* An earlier trace in DIR: refuse it, or with -f remove its cpu files. */
static int check_old_trace(const struct kmtd *d)
{
	struct dirent *de;
	int ret = 0;
	DIR *dir;

	dir = opendir(d->run.outdir);
	if (!dir) {
		kmtd_err("cannot read directory %s: %s", d->run.outdir, strerror(errno));
		return KMT_EXIT_IO;
	}
	while ((de = readdir(dir))) {
		char path[PATH_MAX + 300];

		bool seg = !strncmp(de->d_name, "seg.", 4) || !strncmp(de->d_name, "ckpt.", 5);

		if (!seg && (strncmp(de->d_name, "cpu", 3) != 0 ||
			     strcmp(de->d_name + strlen(de->d_name) - 4, ".out") != 0))
			continue;
		if (!d->run.force) {
			kmtd_err("%s already holds a trace (%s): use -f to overwrite it, or another -o DIR",
				 d->run.outdir, de->d_name);
			ret = KMT_EXIT_USAGE;
			break;
		}
		/* Every CPU's file goes: a stale cpu7.out must not join the new trace. */
		snprintf(path, sizeof(path), "%s/%s", d->run.outdir, de->d_name);
		if (seg ? kmtd_remove_dir(path) < 0 : unlink(path) < 0) {
			kmtd_err("%s: cannot remove: %s", path, strerror(errno));
			ret = KMT_EXIT_IO;
			break;
		}
	}
	closedir(dir);
	return ret;
}

/*
 * New cpuN files in <debugfs>/kmemtrace: relay makes one for each CPU that
 * comes online. Returns how many were added, -1 on failure.
 */
static int scan_cpus(struct kmtd *d, bool start)
{
	struct dirent *de;
	int added = 0, r;
	DIR *dir;

	dir = opendir(d->run.kdir);
	if (!dir) {
		kmtd_err("cannot read directory %s: %s", d->run.kdir, strerror(errno));
		return -1;
	}
	while ((de = readdir(dir))) {
		long cpu = cpu_of(de->d_name, "");

		if (cpu < 0 || d->cpus[cpu])
			continue;
		r = kmtd_cpu_setup(&d->run, &d->drain, (unsigned int)cpu, d->seg_cur, &d->cpus[cpu]);
		/* Even half set up, it is ours to finish or free. */
		if (d->cpus[cpu] && (unsigned int)cpu >= d->ncpus)
			d->ncpus = (unsigned int)cpu + 1;
		if (r < 0)
			goto fail;
		if (start && kmtd_cpu_start(d->cpus[cpu]) < 0)
			goto fail;
		if (start && d->verbose)
			fprintf(stderr, KMTD_NAME ": cpu%ld came online: tracing it into %s\n",
				cpu, d->cpus[cpu]->out_path);
		added++;
	}
	closedir(dir);
	return added;
fail:
	closedir(dir);
	return -1;
}

/* The child: waits for tracing to be on, then becomes COMMAND. */
static void child_main(struct kmtd *d, const sigset_t *mask, int go, int report)
{
	int signals[] = { SIGINT, SIGTERM, SIGCHLD, SIGPIPE, SIGXFSZ };
	char b;
	int err;

	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		signal(signals[i], SIG_DFL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	/* COMMAND runs as it would without us: huge pages as the system has them. */
	(void)prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
	if (read(go, &b, 1) != 1)
		_exit(127);
	execvp(d->run.cmd[0], d->run.cmd);
	err = errno;
	(void)!write(report, &err, sizeof(err));
	_exit(err == ENOENT ? 127 : 126);
}

static int status_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 128;
}

/* Non-blocking reap; true once the command has ended. */
static bool reap(struct kmtd *d)
{
	int st;

	if (d->child < 0 || d->run.command_done)
		return d->run.command_done;
	if (waitpid(d->child, &st, WNOHANG) == d->child &&
	    (WIFEXITED(st) || WIFSIGNALED(st))) {
		d->run.command_status = status_code(st);
		d->run.command_done = true;
	}
	return d->run.command_done;
}

/* After tracing stopped: wait for the command; a further signal kills it. */
static void wait_command(struct kmtd *d, const sigset_t *waitmask)
{
	bool killed = false;

	kmtd_signal = 0;
	while (!reap(d)) {
		struct timespec ts = { 0, 200 * 1000000L };

		if (kmtd_signal && !killed) {
			kmtd_err("killing COMMAND (pid %d)", (int)d->child);
			kill(d->child, SIGKILL);
			killed = true;
		}
		ppoll(NULL, 0, &ts, waitmask);
	}
}

static void print_summary(const struct kmtd *d, const char *dir)
{
	uint64_t tot_rec = 0, tot_bytes = 0, tot_drop = 0;
	bool have_drop = d->stats_start && d->stats_end;
	uint64_t ms = (d->run.end_mono_ns - d->run.start_mono_ns) / 1000000u;
	unsigned int n = 0;

	for (unsigned int cpu = 0; cpu < d->ncpus; cpu++)
		n += d->cpus[cpu] != NULL;
	fprintf(stderr, KMTD_NAME ": traced %u CPU%s for %" PRIu64 ".%03" PRIu64 " s into %s",
		n, n == 1 ? "" : "s", ms / 1000, ms % 1000, dir);
	if (d->run.cmd && d->run.command_done)
		fprintf(stderr, " (command exited with status %d)", d->run.command_status);
	else if (d->run.stop_reason)
		fprintf(stderr, " (stopped by %s)", d->run.stop_reason);
	fputc('\n', stderr);
	fprintf(stderr, "%6s %12s %14s %10s\n", "CPU", "RECORDS", "BYTES", "DROPPED");
	for (unsigned int cpu = 0; cpu < d->ncpus; cpu++) {
		const struct kmtd_cpu *c = d->cpus[cpu];
		uint64_t rec;

		if (!c)
			continue;
		rec = c->bytes / KMT_RECORD_SIZE;
		tot_rec += rec;
		tot_bytes += c->bytes;
		fprintf(stderr, "%6u %12" PRIu64 " %14" PRIu64, cpu, rec, c->bytes);
		if (have_drop && d->stats_start[cpu].present && d->stats_end[cpu].present) {
			uint64_t dr = d->stats_end[cpu].dropped - d->stats_start[cpu].dropped;

			tot_drop += dr;
			fprintf(stderr, " %10" PRIu64 "\n", dr);
		} else {
			fprintf(stderr, " %10s\n", "-");
		}
	}
	fprintf(stderr, "%6s %12" PRIu64 " %14" PRIu64, "total", tot_rec, tot_bytes);
	if (have_drop)
		fprintf(stderr, " %10" PRIu64 "\n", tot_drop);
	else
		fprintf(stderr, " %10s\n", "-");
	if (d->filtered_start.present && d->filtered_end.present &&
	    (strcmp(d->filtered_start.spec, "none") != 0 ||
	     strcmp(d->filtered_end.spec, "none") != 0)) {
		const struct kmtd_filtered *a = &d->filtered_start, *b = &d->filtered_end;

		fprintf(stderr, "filter at the source: %s; left out %" PRIu64 " allocations and %"
			PRIu64 " frees (not lost); %" PRIu64 " allocations recorded untracked\n",
			a->spec, b->allocs >= a->allocs ? b->allocs - a->allocs : 0,
			b->frees >= a->frees ? b->frees - a->frees : 0,
			b->untracked >= a->untracked ? b->untracked - a->untracked : 0);
	}
	if (d->run.max_size) {
		struct kmt_ckpt_stats st;

		kmt_ckpt_get_stats(d->ckpt, &st);
		fprintf(stderr, "max-size: segments %u to %u kept in %s", d->run.seg_first,
			d->run.segments, dir);
		if (d->run.seg_dropped)
			fprintf(stderr, "; %" PRIu64 " dropped (%" PRIu64 " bytes of records), "
				"folded into ckpt.%06u: %" PRIu64 " live objects, %" PRIu64
				" records kept, %" PRIu64 " sums (not lost)", d->run.seg_dropped,
				d->run.dropped_bytes, d->run.seg_first, st.live, st.kept, st.sums);
		fputc('\n', stderr);
	}
	if (d->run.have_overruns_start && d->run.have_overruns_end)
		fprintf(stderr, "total_overruns: %" PRIu64 " during this trace (%" PRIu64
			" since kmemtrace.ko was loaded)\n",
			d->run.overruns_end - d->run.overruns_start, d->run.overruns_end);
	else if (d->run.have_overruns_end)
		fprintf(stderr, "total_overruns: %" PRIu64 " since kmemtrace.ko was loaded\n",
			d->run.overruns_end);
}

/* When records were lost: say how to give the module more buffer. */
static void overrun_hint(const struct kmtd *d)
{
	struct kmtd_buffers b;
	uint64_t lost, more, need, share;
	char extra[64] = "";

	if (!d->run.have_overruns_start || !d->run.have_overruns_end ||
	    d->run.overruns_end == d->run.overruns_start)
		return;
	lost = d->run.overruns_end - d->run.overruns_start;
	if (kmtd_read_buffers(d->run.kdir, &b) < 0) {
		kmtd_err("%" PRIu64 " records were lost because a buffer was full: reload the module with a bigger subbufs= parameter",
			 lost);
		return;
	}
	more = (uint64_t)b.subbufs * 4 < KMT_PARAM_SUBBUFS_MAX ? (uint64_t)b.subbufs * 4 :
		KMT_PARAM_SUBBUFS_MAX;
	/* The module refuses buffers beyond mem_share of what is available. */
	need = b.total / b.subbufs * more;
	if (need > b.allowed && b.available) {
		share = need * 100 / b.available + 1;
		if (share <= KMT_PARAM_MEM_SHARE_MAX)
			snprintf(extra, sizeof(extra), " mem_share=%" PRIu64, share);
		else
			snprintf(extra, sizeof(extra), " (more than this machine's memory allows)");
	}
	kmtd_err("%" PRIu64 " records were lost because a buffer was full: reload the module with more sub-buffers than now (subbufs=%u), e.g. rmmod kmemtrace; modprobe kmemtrace subbufs=%" PRIu64 "%s",
		 lost, b.subbufs, more, extra);
}

/* Room in the per-segment arrays for segment seg. */
static int seg_room(struct kmtd *d, unsigned int seg)
{
	size_t cap = d->seg_cap ? d->seg_cap : 64;
	uint64_t *cut, *bytes;

	if (seg < d->seg_cap)
		return 0;
	while (cap <= seg)
		cap *= 2;
	cut = realloc(d->seg_cut, cap * sizeof(*cut));
	if (cut)
		d->seg_cut = cut;
	bytes = realloc(d->seg_bytes, cap * sizeof(*bytes));
	if (bytes)
		d->seg_bytes = bytes;
	if (!cut || !bytes) {
		kmtd_err("out of memory");
		return -1;
	}
	memset(cut + d->seg_cap, 0, (cap - d->seg_cap) * sizeof(*cut));
	memset(bytes + d->seg_cap, 0, (cap - d->seg_cap) * sizeof(*bytes));
	d->seg_cap = cap;
	return 0;
}

static void *fold_main(void *arg);

static int rotation_start(struct kmtd *d, bool fake)
{
	static const char *const unfolded[] = { "pages", "stack_frees" };

	/* What a checkpoint cannot sum would stay whole: the disk would not be bounded. */
	for (size_t i = 0; !fake && i < sizeof(unfolded) / sizeof(unfolded[0]); i++) {
		char path[128], val[16] = "";

		snprintf(path, sizeof(path), KMTD_SYSMOD "/parameters/%s", unfolded[i]);
		if (kmtd_read_file(path, val, sizeof(val)) > 0 && (val[0] == 'Y' || val[0] == '1')) {
			kmtd_err("--max-size: kmemtrace.ko was loaded with %s=1, whose events a "
				 "checkpoint does not fold: load it without", unfolded[i]);
			return KMT_EXIT_USAGE;
		}
	}
	if (d->keep_dropped && make_dir(d->keep_dropped) < 0)
		return KMT_EXIT_IO;
	d->ckpt = kmt_ckpt_new();
	if (!d->ckpt || seg_room(d, 2) < 0) {
		kmtd_err("out of memory");
		return KMT_EXIT_INTERNAL;
	}
	d->seg_cur = d->seg_oldest = d->fold_until = 1;
	if (pthread_create(&d->fold_thread, NULL, fold_main, d)) {
		kmtd_err("cannot start a thread");
		return KMT_EXIT_INTERNAL;
	}
	d->fold_started = true;
	d->drain.rotating = true;
	d->drain.seg_size = d->run.seg_size;
	atomic_store(&d->drain.seg_want, 1);
	return kmtd_make_seg_dir(d->run.outdir, 1) < 0 ? KMT_EXIT_IO : 0;
}

/*
 * The fold thread: drops the segments the main thread hands it, oldest
 * first, so that the main loop goes on switching segments (and answering
 * signals) while a big one is read. It shares with the main thread only
 * what the mutex guards in struct kmtd.
 */
static void *fold_main(void *arg)
{
	struct kmtd *d = arg;

	pthread_mutex_lock(&d->fold_lock);
	for (;;) {
		unsigned int s = d->seg_oldest;
		uint64_t cut, bytes, ckpt_bytes;
		int r;

		if (s >= d->fold_until) {
			if (d->fold_stop)
				break;
			pthread_cond_wait(&d->fold_cond, &d->fold_lock);
			continue;
		}
		cut = d->seg_cut[s + 1];
		bytes = d->seg_bytes[s];
		pthread_mutex_unlock(&d->fold_lock);
		r = kmtd_drop_segment(d->ckpt, d->run.outdir, s, cut, d->keep_dropped,
				      &ckpt_bytes);
		pthread_mutex_lock(&d->fold_lock);
		if (r < 0) {
			d->fold_failed = true;
			(void)!write(d->drain.wake_efd, &(uint64_t){ 1 }, sizeof(uint64_t));
			break;
		}
		d->ckpt_bytes = ckpt_bytes;
		d->run.seg_dropped++;
		d->run.dropped_bytes += bytes;
		d->run.dropped_cut_ns = cut;
		d->seg_oldest = s + 1;
		if (d->verbose) {
			struct kmt_ckpt_stats st;

			kmt_ckpt_get_stats(d->ckpt, &st);
			fprintf(stderr, KMTD_NAME ": dropped segment %u; checkpoint: %" PRIu64
				" live objects, %" PRIu64 " records kept, %" PRIu64 " sums, %"
				PRIu64 " bytes of memory\n", s, st.live, st.kept, st.sums, st.memory);
		}
	}
	pthread_mutex_unlock(&d->fold_lock);
	return NULL;
}

/*
 * Ends the fold thread: after it dropped the segments it was handed
 * (finish), or at once (after a failure to start tracing).
 */
static void stop_fold_thread(struct kmtd *d, bool finish)
{
	pthread_mutex_lock(&d->fold_lock);
	d->fold_stop = true;
	if (!finish)
		d->fold_until = 0;
	pthread_cond_signal(&d->fold_cond);
	pthread_mutex_unlock(&d->fold_lock);
	pthread_join(d->fold_thread, NULL);
	d->fold_started = false;
}

/*
 * Once a switch is done: hands the fold thread the oldest segments while
 * what is on disk, with a whole segment more to come, passes --max-size.
 * Called with fold_lock held.
 */
static void drop_old_segments(struct kmtd *d)
{
	unsigned int until = d->fold_until > d->seg_oldest ? d->fold_until : d->seg_oldest;

	while (until < d->seg_cur) {
		uint64_t disk = d->ckpt_bytes + d->run.seg_size;

		for (unsigned int i = until; i < d->seg_cur; i++)
			disk += d->seg_bytes[i];
		if (disk <= d->run.max_size)
			break;
		until++;
	}
	if (until > d->fold_until) {
		d->fold_until = until;
		pthread_cond_signal(&d->fold_cond);
	}
}

/*
 * A switch every thread took: the closed segment's size is known, and the
 * oldest segments go to the fold thread if the disk needs it. false while
 * a thread has not switched yet.
 */
static bool switch_done(struct kmtd *d)
{
	unsigned int want = atomic_load(&d->drain.seg_want);
	uint64_t closed = 0;

	if (want == d->seg_cur)
		return true;
	for (unsigned int cpu = 0; cpu < d->ncpus; cpu++) {
		const struct kmtd_cpu *c = d->cpus[cpu];

		if (c && atomic_load(&c->seg_done) != want)
			return false;
	}
	for (unsigned int cpu = 0; cpu < d->ncpus; cpu++)
		if (d->cpus[cpu])
			closed += d->cpus[cpu]->closed_bytes;
	pthread_mutex_lock(&d->fold_lock);
	d->seg_bytes[d->seg_cur] = closed;
	d->seg_cur = want;
	drop_old_segments(d);
	pthread_mutex_unlock(&d->fold_lock);
	return true;
}

/* Finishes a switch the threads all took; starts one when the segment is full. */
static int rotation_step(struct kmtd *d)
{
	unsigned int want;
	uint64_t cut;
	bool fold_failed;
	int r;

	pthread_mutex_lock(&d->fold_lock);
	fold_failed = d->fold_failed;
	pthread_mutex_unlock(&d->fold_lock);
	if (fold_failed)
		return -1;
	/* The new segment may be full already: it filled during the switch. */
	if (!switch_done(d))
		return 0;
	want = d->seg_cur;
	if (atomic_load(&d->drain.seg_total) < d->run.seg_size)
		return 0;
	pthread_mutex_lock(&d->fold_lock);
	r = seg_room(d, want + 2);
	pthread_mutex_unlock(&d->fold_lock);
	if (r < 0 || kmtd_make_seg_dir(d->run.outdir, want + 1) < 0)
		return -1;
	/*
	 * The cut before the segment number: a thread that sees one sees both.
	 * A little ahead, so that every record stamped from the cut on is read
	 * by a drain that sees the switch first (drain.c).
	 */
	cut = now_ns(CLOCK_MONOTONIC) + CUT_AHEAD_NS;
	d->seg_cut[want + 1] = cut;
	atomic_store(&d->drain.seg_total, 0);
	atomic_store(&d->drain.seg_cut_ns, cut);
	atomic_store(&d->drain.seg_want, want + 1);
	return 0;
}

/*
 * The size of each CPU's relay ring, which the drain threads map, from the
 * module's stats; 0 (every thread reads with read()) when it does not say.
 */
static uint64_t ring_size_of(const char *kdir)
{
	struct kmtd_buffers b;

	if (kmtd_read_buffers(kdir, &b) < 0)
		return 0;
	return (uint64_t)b.subbufs * b.subbuf_size;
}

static int run(struct kmtd *d)
{
	bool fake = getenv(KMTD_FAKE_ENV) && strcmp(getenv(KMTD_FAKE_ENV), "1") == 0;
	bool changed_enabled = false, threads = false, failed = false;
	bool made_kallsyms = false, made_modules = false, made_meta = false;
	bool made_formats = false;
	int go_w = -1, report_r = -1, enabled = 0, ret = KMT_EXIT_IO;
	sigset_t block, waitmask;
	struct sigaction sa;
	struct utsname uts;
	uint64_t deadline = 0, next_scan;
	long pagesz;
	int r;

	if (!fake && kmtd_check_root() < 0)
		return KMT_EXIT_IO;
	if (kmtd_check_debugfs(d->debugfs, fake, d->verbose) < 0 ||
	    kmtd_check_module(d->debugfs, d->run.kdir, sizeof(d->run.kdir), &d->lock_fd,
			      &d->run.abi_major, &d->run.abi_minor) < 0)
		return KMT_EXIT_IO;
	if (d->filter.any &&
	    (kmtd_filter_resolve(&d->filter, d->filter_text, sizeof(d->filter_text)) < 0 ||
	     kmtd_get_filter(d->run.kdir, d->filter_old, sizeof(d->filter_old)) < 0))
		return KMT_EXIT_IO;
	if (d->filter.cache && strcmp(d->filter.cache, d->filter.cache_name) != 0 && !d->quiet)
		fprintf(stderr, KMTD_NAME ": --cache %s: SLUB merged it into the cache %s, which the "
			"module knows by that name: recording its allocations, whatever name they "
			"were made through\n", d->filter.cache, d->filter.cache_name);
	if (uname(&uts) < 0) {
		kmtd_err("uname: %s", strerror(errno));
		return KMT_EXIT_IO;
	}
	d->run.word_bits = kmtd_word_bits(uts.machine);
	pagesz = sysconf(_SC_PAGESIZE);
	d->run.page_size = pagesz > 0 ? (uint32_t)pagesz : 4096;
	d->stats_start = calloc(KMTD_MAX_CPUS, sizeof(*d->stats_start));
	d->stats_end = calloc(KMTD_MAX_CPUS, sizeof(*d->stats_end));
	if (!d->stats_start || !d->stats_end) {
		kmtd_err("out of memory");
		return KMT_EXIT_INTERNAL;
	}
	if (strlen(d->run.outdir) > PATH_MAX - 64) {
		kmtd_err("-o: path too long");
		return KMT_EXIT_USAGE;
	}
	if (make_dir(d->run.outdir) < 0)
		return KMT_EXIT_IO;
	r = check_old_trace(d);
	if (r)
		return r;
	if (d->run.max_size) {
		r = rotation_start(d, fake);
		if (r)
			return r;
	}

	/*
	 * Signals wait until the main loop's ppoll(), so the handlers only
	 * ever interrupt that; every thread inherits the blocked mask.
	 */
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sa.sa_handler = on_stop_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_child;
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	/* A full pipe or a file size limit must be an error we handle, not death. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGCHLD);

	d->drain.stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	d->drain.wake_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->drain.stop_efd < 0 || d->drain.wake_efd < 0) {
		kmtd_err("eventfd: %s", strerror(errno));
		goto abort;
	}

	d->drain.ring_size = ring_size_of(d->run.kdir);
	if (kmtd_write_kallsyms(&d->run) < 0)
		goto abort;
	made_kallsyms = true;
	if (kmtd_write_modules(&d->run, &d->meta) < 0)
		goto abort;
	made_modules = true;
	/* No tracefs costs only the GFP names: the report prints masks in hex then. */
	r = kmtd_write_formats(&d->run, d->debugfs, d->run.formats, sizeof(d->run.formats));
	if (r < 0)
		goto abort;
	made_formats = r > 0;

	if (d->run.cmd) {
		int go[2], rep[2];
		pid_t pid;

		if (pipe2(go, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0) {
			kmtd_err("pipe: %s", strerror(errno));
			goto abort;
		}
		/* Forked before any thread exists, so the child is a clean copy. */
		pid = fork();
		if (pid < 0) {
			kmtd_err("fork: %s", strerror(errno));
			goto abort;
		}
		if (pid == 0) {
			close(go[1]);
			close(rep[0]);
			child_main(d, &waitmask, go[0], rep[1]);
		}
		close(go[0]);
		close(rep[1]);
		go_w = go[1];
		report_r = rep[0];
		d->child = pid;
	}

	d->run.start_mono_ns = now_ns(CLOCK_MONOTONIC);
	d->run.start_real_ns = now_ns(CLOCK_REALTIME);
	r = scan_cpus(d, false);
	if (r < 0)
		goto abort;
	if (r == 0) {
		kmtd_err("%s has no cpuN buffer files", d->run.kdir);
		goto abort;
	}

	if (kmtd_get_enabled(d->run.kdir, &enabled) < 0)
		goto abort;
	if (d->run.cmd) {
		uint64_t discarded = 0;

		/* Off first: writing 0 also flushes, so everything old can be dropped. */
		if (kmtd_set_enabled(d->run.kdir, 0) < 0)
			goto abort;
		changed_enabled = enabled;
		for (unsigned int cpu = 0; cpu < d->ncpus; cpu++) {
			if (!d->cpus[cpu])
				continue;
			if (kmtd_cpu_discard(d->cpus[cpu]) < 0)
				goto abort;
			discarded += d->cpus[cpu]->discarded;
		}
		if (d->verbose)
			fprintf(stderr, KMTD_NAME ": discarded %" PRIu64 " bytes (%" PRIu64
				" records) buffered before COMMAND\n", discarded,
				discarded / KMT_RECORD_SIZE);
	}
	if (d->filter.any) {
		/* Before the start's metadata, which says what is in force. */
		if (kmtd_set_filter(d->run.kdir, d->filter_text) < 0)
			goto abort;
		d->filter_set = true;
		if (d->verbose)
			fprintf(stderr, KMTD_NAME ": filter at the source: %s (was: %s)\n",
				d->filter_text, d->filter_old);
	}
	if (kmtd_read_overruns(d->run.kdir, &d->run.overruns_start) == 0)
		d->run.have_overruns_start = true;
	kmtd_read_filtered(d->run.kdir, &d->filtered_start);
	if (kmtd_read_stats(d->run.kdir, d->stats_start) < 0) {
		free(d->stats_start);
		d->stats_start = NULL;
	}
	if (kmtd_write_meta(&d->run, &d->meta, false) < 0)
		goto abort;
	made_meta = true;

	d->run.stop_reason = "SIGINT/SIGTERM";
	for (unsigned int cpu = 0; cpu < d->ncpus; cpu++) {
		if (d->cpus[cpu] && kmtd_cpu_start(d->cpus[cpu]) < 0)
			goto abort;
		threads = true;
	}
	if (d->run.cmd || !enabled) {
		if (kmtd_set_enabled(d->run.kdir, 1) < 0)
			goto abort;
		changed_enabled = !enabled || changed_enabled;
	}
	if (!d->quiet)
		kmtd_print_buffers(d->run.kdir);
	if (d->verbose)
		fprintf(stderr, KMTD_NAME ": tracing into %s%s\n",
			d->run.outdir, enabled && !d->run.cmd ?
			", keeping what was buffered since tracing was enabled" : "");
	if (d->run.cmd) {
		int err = 0;
		ssize_t n;

		(void)!write(go_w, "g", 1);
		close(go_w);
		go_w = -1;
		/* EOF: exec worked (the pipe is close-on-exec); else its errno. */
		do {
			n = read(report_r, &err, sizeof(err));
		} while (n < 0 && errno == EINTR);
		close(report_r);
		report_r = -1;
		if (n == (ssize_t)sizeof(err))
			kmtd_err("cannot run %s: %s", d->run.cmd[0], strerror(err));
	}

	if (d->seconds)
		deadline = now_ns(CLOCK_MONOTONIC) + d->seconds * 1000000000ull;
	next_scan = now_ns(CLOCK_MONOTONIC) + RESCAN_MS * 1000000ull;
	for (;;) {
		struct pollfd p = { .fd = d->drain.wake_efd, .events = POLLIN };
		uint64_t now, wait_ns;
		struct timespec ts;

		if (kmtd_signal) {
			d->run.stop_reason = kmtd_signal == SIGINT ? "SIGINT" : "SIGTERM";
			break;
		}
		if (child_changed) {
			child_changed = 0;
			if (reap(d)) {
				d->run.stop_reason = "command exit";
				break;
			}
		}
		if (atomic_load(&d->drain.failed)) {
			d->run.stop_reason = "error";
			break;
		}
		now = now_ns(CLOCK_MONOTONIC);
		if (deadline && now >= deadline) {
			d->run.stop_reason = "time limit (-t)";
			break;
		}
		if (d->drain.rotating && rotation_step(d) < 0) {
			snprintf(d->run.error, sizeof(d->run.error),
				 "the oldest segment could not be dropped");
			failed = true;
			d->run.stop_reason = "error";
			break;
		}
		if (now >= next_scan) {
			if (scan_cpus(d, true) < 0) {
				snprintf(d->run.error, sizeof(d->run.error),
					 "a CPU that came online could not be traced");
				failed = true;
				d->run.stop_reason = "error";
				break;
			}
			kmtd_scan_modules(&d->run, &d->meta);
			next_scan = now + RESCAN_MS * 1000000ull;
		}
		wait_ns = next_scan > now ? next_scan - now : 0;
		if (deadline && deadline - now < wait_ns)
			wait_ns = deadline - now;
		if (d->drain.rotating && wait_ns > ROTATE_MS * 1000000ull)
			wait_ns = ROTATE_MS * 1000000ull;
		ts.tv_sec = (time_t)(wait_ns / 1000000000u);
		ts.tv_nsec = (long)(wait_ns % 1000000000u);
		if (ppoll(&p, 1, &ts, &waitmask) > 0 && (p.revents & POLLIN)) {
			uint64_t v;

			/* A full segment (or a failure, seen above next time round). */
			(void)!read(d->drain.wake_efd, &v, sizeof(v));
		}
	}

	/* Off (and flushed): from here on the buffers only shrink. */
	if (kmtd_set_enabled(d->run.kdir, 0) < 0) {
		snprintf(d->run.error, sizeof(d->run.error), "could not switch tracing off");
		failed = true;
	}
	changed_enabled = false;
	d->run.end_mono_ns = now_ns(CLOCK_MONOTONIC);
	d->run.end_real_ns = now_ns(CLOCK_REALTIME);
	if (kmtd_read_overruns(d->run.kdir, &d->run.overruns_end) == 0)
		d->run.have_overruns_end = true;
	kmtd_read_filtered(d->run.kdir, &d->filtered_end);
	if (kmtd_read_stats(d->run.kdir, d->stats_end) < 0) {
		free(d->stats_end);
		d->stats_end = NULL;
	}
	atomic_store(&d->drain.stopping, true);
	(void)!write(d->drain.stop_efd, &(uint64_t){ 1 }, sizeof(uint64_t));
	for (unsigned int cpu = 0; cpu < d->ncpus; cpu++)
		if (d->cpus[cpu])
			kmtd_cpu_join(d->cpus[cpu]);
	threads = false;
	/*
	 * Tracing ended before the command (signal, -t, error): it goes too.
	 * Not earlier: a Ctrl-C reached it as well, let it die of that.
	 */
	if (d->run.cmd && !reap(d) && d->child > 0)
		kill(d->child, SIGTERM);
	{
		sigset_t pending;

		/* Two at once are both handled in ppoll(); a later one waits, blocked. */
		if (stop_signals > 1 || (sigpending(&pending) == 0 &&
		    (sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM))))
			kmtd_err("signal received while draining: finishing the files first");
	}

	if (atomic_load(&d->drain.failed))
		failed = true;
	for (unsigned int cpu = 0; cpu < d->ncpus; cpu++) {
		struct kmtd_cpu *c = d->cpus[cpu];

		if (!c)
			continue;
		if (c->err) {
			kmtd_cpu_describe_error(c, d->run.error, sizeof(d->run.error));
			kmtd_err("%s", d->run.error);
		}
	}
	/* Every file, failed or not, ends on a whole record. */
	for (unsigned int cpu = 0; cpu < d->ncpus; cpu++) {
		if (d->cpus[cpu] && kmtd_cpu_finish(d->cpus[cpu], failed) < 0) {
			if (!d->run.error[0])
				snprintf(d->run.error, sizeof(d->run.error), "%s: write failed",
					 d->cpus[cpu]->out_path);
			failed = true;
		}
	}
	if (failed)
		kmtd_err("tracing stopped; every file in %s ends on a whole record", d->run.outdir);
	if (d->run.cmd)
		wait_command(d, &waitmask);
	if (d->fold_started) {
		/*
		 * The last drain took every thread into the newest segment: the
		 * one it closed counts, and may send older ones to the fold
		 * thread, which drops what it holds before it ends.
		 */
		switch_done(d);
		stop_fold_thread(d, true);
		if (d->fold_failed && !failed) {
			snprintf(d->run.error, sizeof(d->run.error),
				 "the oldest segment could not be dropped");
			failed = true;
		}
	}
	if (d->drain.rotating) {
		d->run.segments = d->seg_cur;
		d->run.seg_first = d->seg_oldest;
	}
	/* What the end-of-run metadata says of each CPU. */
	d->run.ncpus = d->ncpus;
	for (unsigned int cpu = 0; cpu < d->ncpus; cpu++)
		d->run.cpu_records[cpu] = d->cpus[cpu] ?
			(int64_t)(d->cpus[cpu]->bytes / KMT_RECORD_SIZE) : -1;
	if (kmtd_finish_modules(&d->run, &d->meta) < 0)
		failed = true;
	if (kmtd_write_meta(&d->run, &d->meta, true) < 0)
		failed = true;
	/* The filter this run set goes; the one it found comes back. */
	if (d->filter_set && kmtd_set_filter(d->run.kdir, d->filter_old) < 0)
		failed = true;
	d->filter_set = false;
	if (!d->quiet) {
		print_summary(d, d->run.outdir);
		/* After a failure the buffers overflowed because draining stopped. */
		if (!failed)
			overrun_hint(d);
	}
	if (failed)
		ret = KMT_EXIT_IO;
	else if (d->run.cmd)
		ret = d->run.command_status;
	else
		ret = KMT_EXIT_OK;
	goto out;

abort:
	/* Tracing never started: leave the module as we found it, and no files. */
	if (threads) {
		atomic_store(&d->drain.stopping, true);
		(void)!write(d->drain.stop_efd, &(uint64_t){ 1 }, sizeof(uint64_t));
		for (unsigned int cpu = 0; cpu < d->ncpus; cpu++)
			if (d->cpus[cpu])
				kmtd_cpu_join(d->cpus[cpu]);
	}
	if (changed_enabled)
		kmtd_set_enabled(d->run.kdir, enabled);
	if (d->filter_set)
		kmtd_set_filter(d->run.kdir, d->filter_old);
	if (d->child > 0) {
		kill(d->child, SIGKILL);
		waitpid(d->child, NULL, 0);
	}
	for (unsigned int cpu = 0; cpu < d->ncpus; cpu++)
		if (d->cpus[cpu] && d->cpus[cpu]->out_fd >= 0)
			unlink(d->cpus[cpu]->out_path);
	if (d->drain.rotating) {
		char seg[PATH_MAX];

		kmtd_seg_dir(d->run.outdir, d->seg_cur, seg, sizeof(seg));
		kmtd_remove_dir(seg);
	}
	{
		const char *made[] = { made_kallsyms ? KMTD_KALLSYMS : NULL,
				       made_modules ? KMTD_MODULES : NULL,
				       made_meta ? KMTD_META : NULL,
				       made_formats ? KMTD_FORMATS : NULL };
		char path[PATH_MAX + 32];

		for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
			if (!made[i])
				continue;
			snprintf(path, sizeof(path), "%s/%s", d->run.outdir, made[i]);
			unlink(path);
		}
	}
	ret = KMT_EXIT_IO;
out:
	if (go_w >= 0)
		close(go_w);
	if (report_r >= 0)
		close(report_r);
	for (unsigned int cpu = 0; cpu < d->ncpus; cpu++)
		kmtd_cpu_free(d->cpus[cpu]);
	if (d->drain.stop_efd >= 0)
		close(d->drain.stop_efd);
	if (d->drain.wake_efd >= 0)
		close(d->drain.wake_efd);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	free(d->stats_start);
	free(d->stats_end);
	if (d->fold_started)
		stop_fold_thread(d, false);
	free(d->seg_cut);
	free(d->seg_bytes);
	kmt_ckpt_free(d->ckpt);
	kmtd_forget_modules(&d->meta);
	return ret;
}

int main(int argc, char **argv)
{
	static struct kmtd d;

	d.run.outdir = ".";
	d.debugfs = KMTD_DEFAULT_DEBUGFS;
	pthread_mutex_init(&d.fold_lock, NULL);
	pthread_cond_init(&d.fold_cond, NULL);
	d.drain.stop_efd = d.drain.wake_efd = d.lock_fd = -1;
	d.child = -1;
	/*
	 * With transparent huge pages "always" (Debian's default) the kernel may
	 * back a thread's stack or read buffer with a 2 MiB page: the bound of
	 * KMTD_READ_CHUNK and a stack per CPU holds only without them.
	 */
	(void)prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, &d);
	return run(&d);
}
