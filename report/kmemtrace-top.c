// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmemtrace-top - slabratetop's screen for kmemtrace: the caches (call
 * sites, kernel stacks) allocating most in each interval, from the running system's relay
 * buffers, from a trace directory kmemtraced is writing, or replayed from
 * a finished trace. Its tables are kmemtrace-report --interval's
 * (report/views/view_interval.c); growing traces are read by the trace
 * library's kmt_follow, the module is driven by top_live.c.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "kmt_exit.h"
#include "kmt_follow.h"
#include "kmt_reader.h"
#include "core/report_core.h"
#include "core/report_meta.h"
#include "core/report_slab.h"
#include "sym/sym_kallsyms.h"
#include "views/view_interval.h"
#include "top_live.h"
#include "writers/out_interval.h"
#include "writers/out_table.h"

#define PROG "kmemtrace-top"

const char *argp_program_version = PROG " " KMT_VERSION " (trace format 1.x)";

static const char doc[] =
	"Show the kernel caches allocating the most, refreshed every INTERVAL seconds (default "
	"1) like top, COUNT times (default: until q or Ctrl-C): allocations, bytes, frees, net "
	"change in live objects and internal fragmentation per cache, per call site with -c, or "
	"per kernel stack with -cstack (a trace taken with kmemtrace.ko's stack_depth=N): each "
	"stack named by its call site's function and that one's caller, its whole stack one "
	"frame a line under it when the tables are printed (-b, or not a terminal).\n"
	"\n"
	"Without -d, reads kmemtrace.ko's relay buffers itself (as root; switches tracing on "
	"for as long as it runs). While kmemtraced records, the buffers are its own: follow its "
	"trace directory with -d DIR instead. With -d DIR, follows the cpuN.out files while "
	"they grow; a finished kmemtraced trace (or --replay) is replayed interval by interval "
	"in trace time.\n"
	"\n"
	"When standard output is not a terminal (or with -b), every interval is printed as a "
	"table, without clearing.\n"
	"\n"
	"Exit status: 0 success, 1 usage error (also -cstack where the module or the trace has "
	"no stacks), 2 bad trace data, 3 system or I/O error (no module, no debugfs, not root, "
	"buffers held by kmemtraced), 4 internal error."
	"\v"
	"Keys: q quits. Sort keys: bytes (size), allocs (count), frees, net, frag, name.\n"
	"\n"
	"EXAMPLES:\n"
	"  kmemtrace-top                   refresh every second, top 20 caches\n"
	"  kmemtrace-top -C 5 10           every 5 s, 10 times, without clearing\n"
	"  kmemtrace-top -c -s allocs      call sites with the most allocations\n"
	"  kmemtrace-top -cstack           kernel stacks allocating most\n"
	"  kmemtrace-top -b --stacks 5 1   the stacks of the next 5 s, in full\n"
	"  kmemtrace-top -cstack --replay -d out/ 0.5   a recorded trace's stacks\n"
	"  kmemtrace-top -d out/           follow kmemtraced -o out/\n"
	"  kmemtrace-top --replay -d out/ 0.1   replay a trace in 100 ms intervals\n"
	"  kmemtrace-top -b 1 3 > top.txt  three one-second tables, plain text\n";

static const char args_doc[] = "[INTERVAL [COUNT]]";

enum { OPT_REPLAY = 256, OPT_FOLLOW, OPT_RAW_IP, OPT_STACKS };

static const struct argp_option options[] = {
	{ "noclear", 'C', NULL, 0, "Do not clear the screen", 0 },
	{ "maxrows", 'r', "ROWS", 0, "Rows to show (default 20)", 0 },
	{ "sort", 's', "KEY", 0, "Sort by bytes (default), allocs, frees, net, frag or name", 0 },
	{ "caller", 'c', "BY", OPTION_ARG_OPTIONAL,
	  "Per call site (BY site, the default) or per kernel stack (BY stack: -cstack, "
	  "--caller=stack) instead of per cache", 0 },
	{ "stacks", OPT_STACKS, NULL, 0, "Per kernel stack: --caller=stack", 0 },
	{ "batch", 'b', NULL, 0, "Plain tables, no screen, even on a terminal", 0 },
	{ "dir", 'd', "DIR", 0, "Read this trace directory (kmemtraced -o DIR)", 0 },
	{ "follow", OPT_FOLLOW, NULL, 0, "-d: follow DIR as it grows (default unless finished)", 0 },
	{ "replay", OPT_REPLAY, NULL, 0, "-d: replay DIR interval by interval in trace time", 0 },
	{ "debugfs", 'D', "PATH", 0, "Where debugfs is mounted (default /sys/kernel/debug)", 0 },
	{ "raw-ip", OPT_RAW_IP, NULL, 0, "-c: raw addresses instead of function+0xoff", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

enum mode { M_LIVE, M_FOLLOW, M_REPLAY };

struct args {
	uint64_t interval_ns;
	uint64_t count;		/* 0: until q */
	long maxrows;
	bool noclear, batch, raw_ip, follow, replay;
	enum ivl_by by;
	enum ivl_key sort;
	const char *dir, *debugfs;
	int nargs;
};

static error_t parse_opt(int key, char *arg, struct argp_state *st)
{
	struct args *a = st->input;
	char *end;
	long v;

	switch (key) {
	case 'C':
		a->noclear = true;
		break;
	case 'r':
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 1 || v > 100000)
			argp_error(st, "--maxrows: '%s' is not a number from 1 to 100000", arg);
		a->maxrows = v;
		break;
	case 's':
		if (ivl_key_parse(arg, &a->sort))
			argp_error(st, "--sort: '%s' is not one of %s", arg, ivl_keys_help);
		break;
	case 'c':
		if (!arg || strcmp(arg, "site") == 0 || strcmp(arg, "callsite") == 0)
			a->by = IVL_BY_SITE;
		else if (strcmp(arg, "stack") == 0)
			a->by = IVL_BY_STACK;
		else
			argp_error(st, "--caller: '%s' is not site or stack", arg);
		break;
	case OPT_STACKS:
		a->by = IVL_BY_STACK;
		break;
	case 'b':
		a->batch = true;
		break;
	case 'd':
		a->dir = arg;
		break;
	case 'D':
		a->debugfs = arg;
		break;
	case OPT_FOLLOW:
		a->follow = true;
		break;
	case OPT_REPLAY:
		a->replay = true;
		break;
	case OPT_RAW_IP:
		a->raw_ip = true;
		break;
	case ARGP_KEY_ARG:
		if (a->nargs == 0) {
			double d;

			errno = 0;
			d = strtod(arg, &end);
			/* An optional argument is never the next word: -c stack is -c, then "stack". */
			if (strcmp(arg, "stack") == 0 || strcmp(arg, "site") == 0)
				argp_error(st, "INTERVAL: '%s' is not a number of seconds; to group "
					   "by %s, write -c%s or --caller=%s", arg, arg, arg, arg);
			if (errno || end == arg || *end || !(d >= 0.001 && d <= 86400))
				argp_error(st, "INTERVAL: '%s' is not a number of seconds from 0.001 "
					   "to 86400", arg);
			a->interval_ns = (uint64_t)(d * 1e9 + 0.5);
		} else if (a->nargs == 1) {
			unsigned long long c;

			errno = 0;
			c = strtoull(arg, &end, 10);
			if (errno || end == arg || *end || *arg == '-' || c < 1 || c > UINT32_MAX)
				argp_error(st, "COUNT: '%s' is not a number from 1 to %u", arg,
					   UINT32_MAX);
			a->count = c;
		} else {
			argp_error(st, "too many arguments: INTERVAL and COUNT at most");
		}
		a->nargs++;
		break;
	case ARGP_KEY_END:
		if (a->follow && a->replay)
			argp_error(st, "--follow and --replay are exclusive");
		if ((a->follow || a->replay) && !a->dir)
			argp_error(st, "--follow and --replay read a trace directory: give -d DIR");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = { options, parse_opt, args_doc, doc, NULL, NULL, NULL };

/* ---- signals and the terminal ------------------------------------------- */

static volatile sig_atomic_t stop_flag, winch_flag;

static void on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void on_winch(int sig)
{
	(void)sig;
	winch_flag = 1;
}

static struct termios saved_tio;
static bool tio_saved;

static void tty_restore(void)
{
	if (tio_saved)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
}

static void tty_raw(void)
{
	struct termios t;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_tio))
		return;
	tio_saved = true;
	t = saved_tio;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &t);
	atexit(tty_restore);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Waits until the monotonic time until (ns), or a key: 1 when q was pressed. */
static int wait_until(uint64_t until, bool keys)
{
	for (;;) {
		uint64_t now = mono_ns();
		struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
		int ms;

		if (stop_flag)
			return 1;
		if (now >= until || winch_flag)
			return 0;
		ms = (int)((until - now + 999999) / 1000000);
		if (!keys) {
			struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 };

			nanosleep(&ts, NULL);
			continue;
		}
		if (poll(&p, 1, ms) > 0) {
			char c;

			if (read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q'))
				return 1;
		}
	}
}

/* ---- output ------------------------------------------------------------ */

struct screen {
	const struct args *a;
	enum mode mode;
	const char *source;
	struct ivl_out o;
	bool tty;		/* the refreshing screen */
	uint64_t shown;
	uint64_t wall_start;	/* follow: mono ns of interval 0's start */
	uint64_t tick_start;
};

static void term_size(int *rows, int *cols)
{
	struct winsize ws;

	*rows = 24;
	*cols = 80;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

static void header_line(FILE *fp)
{
	char t[16] = "", la[128] = "";
	time_t now = time(NULL);
	struct tm tm;
	FILE *f;

	if (localtime_r(&now, &tm))
		strftime(t, sizeof(t), "%H:%M:%S", &tm);
	f = fopen("/proc/loadavg", "r");
	if (f) {
		if (!fgets(la, sizeof(la), f))
			la[0] = '\0';
		fclose(f);
		la[strcspn(la, "\n")] = '\0';
	}
	fprintf(fp, "%s loadavg: %s\n", t, la);
}

static const char *mode_name(enum mode m)
{
	return m == M_LIVE ? "live" : m == M_FOLLOW ? "following" : "replay";
}

static int show(const struct ivl_table *t, void *arg)
{
	struct screen *s = arg;
	FILE *fp = stdout;
	struct ivl_table tab = *t;

	if (s->mode == M_FOLLOW) {
		/* Follow intervals are refresh periods: what arrived in each. */
		tab.start_ns = s->tick_start - s->wall_start;
		tab.end_ns = mono_ns() - s->wall_start;
	}
	if (!s->tty) {
		header_line(fp);
		/* The table kmemtrace-report --interval writes, by the same writer. */
		if (ivl_doc_table(fp, FMT_TEXT, &tab, &s->o, false))
			return -1;
	} else {
		int rows, cols, fixed = 48, maxr, *cw;
		struct ivl_out o = s->o;
		struct ivl_tab v;
		size_t i, n;

		term_size(&rows, &cols);
		if (!s->a->noclear)
			fputs("\033[H\033[2J", fp);
		header_line(fp);
		fprintf(fp, "%s %.*s\n", mode_name(s->mode), cols > 12 ? cols - 12 : 1,
			s->source);
		o.name_width = cols - 1 - fixed;
		if (o.name_width < 8)
			o.name_width = 8;
		if (ivl_tab_init(&v, &tab, &o)) {
			ivl_tab_free(&v);
			return -1;
		}
		out_text_heading(fp, &v.t);
		maxr = rows - 4;
		if (s->a->noclear)
			maxr = (int)s->a->maxrows;
		if (maxr > s->a->maxrows)
			maxr = (int)s->a->maxrows;
		if (maxr < 1)
			maxr = 1;
		/* The same table in pieces: its header in reverse video, the rows that fit. */
		cw = out_text_widths(&v.t, false);
		fputs("\033[7m", fp);
		out_text_header(fp, &v.t, cw);
		fputs("\033[0m", fp);
		n = tab.nrows < (size_t)maxr ? tab.nrows : (size_t)maxr;
		for (i = 0; i < n; i++)
			out_text_row(fp, &v.t, i, cw, false);
		free(cw);
		ivl_tab_free(&v);
		if (s->a->noclear)
			fputc('\n', fp);
	}
	fflush(fp);
	s->shown++;
	s->tick_start = mono_ns();
	if (s->a->count && s->shown >= s->a->count)
		return 1;
	return 0;
}

/* An ivl_*() failure: out of memory, or stacks asked of a trace without. Exit status. */
static int ivl_failed(const struct screen *s, int rc)
{
	fflush(stdout);
	if (rc != IVL_NO_STACKS) {
		fprintf(stderr, PROG ": out of memory\n");
		return KMT_EXIT_INTERNAL;
	}
	fprintf(stderr, PROG ": %s: %s\n", s->source, ivl_no_stacks_msg);
	return KMT_EXIT_USAGE;
}

/* A finished kmemtraced trace: kmemtrace.meta says how tracing ended. */
static bool trace_finished(const char *dir)
{
	char msg[256];
	struct rpt_meta *m;
	uint64_t v;
	int missing;
	bool fin;

	m = meta_load_dir(dir, msg, sizeof(msg), &missing);
	if (!m)
		return false;
	fin = meta_get_u64(m, "overruns_end", &v);
	meta_free(m);
	return fin;
}

/*
 * -cstack where there can be none: the module records no stacks, or the
 * trace's metadata says it was taken without. Said before any table (a
 * trace without metadata is found out as it is read). 0, or the exit status.
 */
static int stacks_refused(const struct args *a, const struct live *l)
{
	char msg[256];
	struct rpt_meta *m;
	int missing, depth;

	if (a->by != IVL_BY_STACK)
		return 0;
	if (!a->dir) {
		if (live_stack_depth(l) > 0)
			return 0;
		fprintf(stderr, PROG ": %s: kmemtrace.ko records no kernel stacks to group by: "
			"load it with stack_depth=N (1..64)\n", l->kdir);
		return KMT_EXIT_USAGE;
	}
	m = meta_load_dir(a->dir, msg, sizeof(msg), &missing);
	depth = meta_stack_depth(m);
	meta_free(m);
	if (depth)
		return 0;
	fprintf(stderr, PROG ": %s: %s\n", a->dir, ivl_no_stacks_msg);
	return KMT_EXIT_USAGE;
}

static struct ksyms *load_syms(const struct args *a)
{
	char msg[256];
	int missing;

	if (a->by == IVL_BY_CACHE || a->raw_ip)
		return NULL;
	if (!a->dir)
		return ksyms_load("/proc/kallsyms", NULL, msg, sizeof(msg), &missing);
	return ksyms_load_dir(a->dir, msg, sizeof(msg), &missing);
}

static int run_replay(const struct args *a, struct ivl *iv, struct screen *s)
{
	struct kmt_error err = { 0 };
	struct kmt_merge *m = kmt_merge_open_dir(a->dir, KMT_OPEN_ALLOW_TRUNCATED, &err);
	const union kmt_rec *batch[256];
	uint64_t next = mono_ns() + a->interval_ns;
	uint64_t before = 0, cut, dropped;
	int n, rc = 0, ret = KMT_EXIT_OK, rotated;

	if (!m) {
		fprintf(stderr, PROG ": %s\n", err.msg);
		return kmt_error_exit(&err);
	}
	/* A rotated trace replays its kept window: its checkpoint is no interval's. */
	rotated = kmt_merge_checkpoint(m, &cut, &dropped, &err);
	if (rotated < 0) {
		kmt_merge_close(m);
		fprintf(stderr, PROG ": %s\n", err.msg);
		return kmt_error_exit(&err);
	}
	if (rotated)
		ivl_set_cut(iv, cut);
	while (!rc && (n = kmt_merge_next_batch(m, batch, 256)) != 0) {
		if (n < 0) {
			const struct kmt_error *e = kmt_merge_error(m);

			fprintf(stderr, PROG ": %s\n", e->msg);
			ret = kmt_error_exit(e);
			break;
		}
		rc = ivl_feed(iv, batch, (size_t)n, show, s);
		if (rc < 0) {
			ret = ivl_failed(s, rc);
			break;
		}
		/* On the screen, one interval per refresh. */
		if (s->tty && s->shown != before) {
			before = s->shown;
			if (wait_until(next, true))
				break;
			next = mono_ns() + a->interval_ns;
		}
		if (stop_flag)
			break;
	}
	if (!rc && ret == KMT_EXIT_OK && !stop_flag) {
		rc = ivl_flush(iv, show, s);
		if (rc < 0)
			ret = ivl_failed(s, rc);
	}
	kmt_merge_close(m);
	return ret;
}

/* Live and follow: read at each tick what the sources have. */
/* How often live mode empties the relay buffers between refreshes. */
#define LIVE_DRAIN_NS	25000000ull

static int run_stream(const struct args *a, struct ivl *iv, struct screen *s,
		      struct kmt_follow *fd, enum mode mode)
{
	struct kmt_error err = { 0 };
	uint64_t start = mono_ns(), next = start + a->interval_ns;
	int rc = 0;

	s->wall_start = s->tick_start = start;
	while (!rc) {
		const union kmt_rec **recs;
		uint64_t upto = next;
		size_t n;
		int q;

		/*
		 * Live: drain the relay buffers every LIVE_DRAIN_NS, not only
		 * at a refresh, or a CPU's buffer fills within the interval and
		 * the module drops what does not fit (a default buffer holds
		 * about 65 k records: a 1 s refresh lost records above 65 k
		 * events/s).
		 */
		if (mode == M_LIVE) {
			uint64_t drain = mono_ns() + LIVE_DRAIN_NS;

			if (drain < next)
				upto = drain;
		}
		q = wait_until(upto, s->tty);
		if (q)
			break;
		if (winch_flag) {
			/* Resized: the next screen is drawn for the new size, now. */
			winch_flag = 0;
			if (mono_ns() < next)
				continue;
		}
		if (mode == M_FOLLOW && kmt_follow_scan_dir(fd, a->dir, &err))
			goto fail;
		/* Live: the module writes synchronously, so everything before now is there. */
		if (kmt_follow_collect(fd, mode == M_LIVE ? upto : UINT64_MAX, &recs, &n, &err))
			goto fail;
		rc = ivl_feed(iv, recs, n, show, s);
		if (rc < 0)
			return ivl_failed(s, rc);
		if (kmt_follow_keep_rest(fd, n))
			goto nomem;
		if (rc)
			break;
		if (upto < next)
			continue;	/* drained mid-interval: nothing to show yet */
		if (mode == M_LIVE)
			rc = ivl_close_until(iv, next, show, s);
		else
			rc = ivl_close_now(iv, show, s);
		if (rc < 0)
			return ivl_failed(s, rc);
		next += a->interval_ns;
	}
	return KMT_EXIT_OK;
fail:
	fprintf(stderr, PROG ": %s\n", err.msg);
	return kmt_error_exit(&err);
nomem:
	fprintf(stderr, PROG ": out of memory\n");
	return KMT_EXIT_INTERNAL;
}

int main(int argc, char **argv)
{
	struct args a;
	struct screen s;
	struct kmt_follow *fd = NULL;
	struct live l = LIVE_INIT;
	struct ivl_opts vo;
	struct rpt *r = NULL;
	struct ivl *iv = NULL;
	struct ksyms *ks = NULL;
	enum mode mode;
	char msg[PATH_MAX + 256];
	int ret = KMT_EXIT_INTERNAL;

	memset(&a, 0, sizeof(a));
	memset(&s, 0, sizeof(s));
	a.interval_ns = 1000000000;
	a.maxrows = 20;
	a.debugfs = "/sys/kernel/debug";
	argp_err_exit_status = KMT_EXIT_USAGE;
	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return KMT_EXIT_USAGE;

	if (!a.dir)
		mode = M_LIVE;
	else if (a.replay || (!a.follow && trace_finished(a.dir)))
		mode = M_REPLAY;
	else
		mode = M_FOLLOW;

	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_stop;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		sa.sa_handler = on_winch;
		sigaction(SIGWINCH, &sa, NULL);
		signal(SIGPIPE, SIG_IGN);
	}

	/*
	 * Symbols first: reading kallsyms takes long enough (a second in
	 * a slow guest) for live mode's buffers to overflow after it has
	 * switched tracing on.
	 */
	ks = load_syms(&a);
	fd = kmt_follow_new();
	if (!fd) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	if (mode == M_LIVE) {
		if (live_open(&l, a.debugfs, fd, msg, sizeof(msg))) {
			fprintf(stderr, PROG ": %s\n", msg);
			ret = KMT_EXIT_IO;
			goto out;
		}
	} else {
		struct stat st;

		if (stat(a.dir, &st) || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, PROG ": %s: %s\n", a.dir,
				errno ? strerror(errno) : "not a directory");
			ret = KMT_EXIT_IO;
			goto out;
		}
	}
	ret = stacks_refused(&a, &l);
	if (ret)
		goto out;
	ret = KMT_EXIT_INTERNAL;

	r = rpt_new(NULL, 0);
	memset(&vo, 0, sizeof(vo));
	vo.interval_ns = a.interval_ns;
	vo.by = a.by;
	vo.sort = a.sort;
	vo.rows = (size_t)a.maxrows;
	if (mode == M_LIVE) {
		vo.has_origin = true;
		vo.origin = mono_ns();
	}
	vo.manual = mode == M_FOLLOW;
	iv = r ? ivl_new(r, &vo) : NULL;
	if (!iv) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	s.a = &a;
	s.mode = mode;
	s.source = mode == M_LIVE ? l.kdir : a.dir;
	s.o.by = a.by;
	s.o.ks = ks;
	s.o.name_width = a.by != IVL_BY_CACHE ? 40 : 24;
	s.tty = !a.batch && isatty(STDOUT_FILENO);
	/* The screen has a line a row: a stack by its label; -b prints each in full. */
	s.o.one_line = s.tty;
	if (s.tty)
		tty_raw();
	if (!s.tty)
		s.o.name_width = 0;

	if (mode == M_REPLAY)
		ret = run_replay(&a, iv, &s);
	else
		ret = run_stream(&a, iv, &s, fd, mode);
	if (s.tty && !a.noclear)
		fputs("\n", stdout);
out:
	live_close(&l);
	kmt_follow_free(fd);
	ivl_free(iv);
	rpt_free(r);
	ksyms_free(ks);
	if (fflush(stdout) && ret == KMT_EXIT_OK)
		ret = KMT_EXIT_IO;
	return ret;
}
