// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmemtrace_check.c - verifies cpuN.out trace files one by one and prints
 * a verdict line per file; the checks themselves live in the reader
 * library so that the report applies exactly the same rules.
 */
#include <argp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kmt_exit.h"
#include "kmt_reader.h"
#include "kmt_stacks.h"

const char *argp_program_version = "kmemtrace_check " KMT_VERSION " (trace format 1.x)";

static const char doc[] =
	"Verify kmemtrace trace files (cpuN.out): header, record types, per-CPU sequence\n"
	"numbers, timestamps, the CPU of every record, whole records at the end.\n"
	"A DIRECTORY stands for its cpu*.out files."
	"\v"
	"One verdict line per file on standard output: \"FILE: OK: ...\" or\n"
	"\"FILE: FAIL: offset N: what is wrong\". A partial record at the end (a killed\n"
	"kmemtraced, a full disk) is reported and everything before it accepted, unless\n"
	"--strict.\n"
	"\n"
	"Stack records are checked as the report reads them. An event naming a stack\n"
	"id that no whole stack of its file had before it is counted and shown, not a\n"
	"failure: a file begun by a restarted kmemtraced, or lost records, may hold\n"
	"the event without its stack. An event marked as having no stack\n"
	"(KMT_F_NO_STACK) that names one is a failure.\n"
	"\n"
	"A checkpoint (kmemtraced --max-size: ckpt.NNNNNN/cpuN.out, format 1.3) is\n"
	"checked the same way but for its sequence numbers, whose gaps are by design:\n"
	"its records must be before its cut, its sum records come last and are checked\n"
	"one by one; the verdict says its cut, the events it kept and its sums. A\n"
	"rotated DIRECTORY stands for the files of its checkpoint and segments.\n"
	"\n"
	"EXAMPLES:\n"
	"  kmemtrace_check out/cpu0.out out/cpu1.out\n"
	"  kmemtrace_check -v out/\n"
	"  kmemtrace_check --strict -q out/cpu*.out || echo corrupt\n"
	"\n"
	"Exit status: 0 every file verified, 1 usage error, 2 a file failed\n"
	"verification, 3 a file could not be read, 4 out of memory.";

static const char args_doc[] = "FILE|DIRECTORY...";

static const struct argp_option options[] = {
	{ "verbose", 'v', NULL, 0, "Print the header and per-type counts of every file", 0 },
	{ "quiet", 'q', NULL, 0, "Print verdicts of failed files only", 0 },
	{ "strict", 's', NULL, 0, "A partial record at the end of a file is a failure", 0 },
	{ 0 }
};

struct args {
	int verbose, quiet, strict;
	char **files;
	int nfiles;
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct args *a = state->input;

	(void)arg;
	switch (key) {
	case 'v':
		a->verbose = 1;
		return 0;
	case 'q':
		a->quiet = 1;
		return 0;
	case 's':
		a->strict = 1;
		return 0;
	case ARGP_KEY_ARGS:
		a->files = state->argv + state->next;
		a->nfiles = state->argc - state->next;
		return 0;
	case ARGP_KEY_NO_ARGS:
		argp_usage(state);
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/* The message without its leading "PATH: ", which the verdict line already shows. */
static const char *without_path(const struct kmt_error *err, const char *path)
{
	size_t n = strlen(path);

	if (strncmp(err->msg, path, n) == 0 && strncmp(err->msg + n, ": ", 2) == 0)
		return err->msg + n + 2;
	return err->msg;
}

static void print_header(const struct kmt_file *f)
{
	const struct kmt_file_header *h = kmt_file_header(f);

	printf("  header: format %u.%u, CPU %u, %s-endian, %u-bit, page size %" PRIu32
	       ", clock monotonic\n", h->version_major, h->version_minor, h->cpu,
	       kmt_file_big_endian(f) ? "big" : "little", h->word_bits, h->page_size);
	printf("  started: monotonic %" PRIu64 " ns, realtime %" PRIu64 " ns\n",
	       (uint64_t)h->start_mono_ns, (uint64_t)h->start_real_ns);
	if (h->kind == KMT_FILE_CHECKPOINT)
		printf("  checkpoint: cut %" PRIu64 " ns, first kept segment seg.%06" PRIu32
		       ", %" PRIu64 " records of the dropped segments\n", (uint64_t)h->cut_ns,
		       h->segment, (uint64_t)h->dropped_records);
}

static void print_details(const struct kmt_file_stats *st)
{
	unsigned int t;

	for (t = 1; t <= KMT_REC_TYPE_MAX; t++)
		printf("  %-11s %" PRIu64 "\n", kmt_rec_type_name(t), st->by_type[t]);
	printf("  %-11s %" PRIu64 "\n", "unknown", st->unknown);
	if (st->records_timed)
		printf("  seq %" PRIu32 "..%" PRIu32 ", ts %" PRIu64 "..%" PRIu64 " ns\n",
		       st->first_seq, st->last_seq, st->first_ts, st->last_ts);
	if (st->stack_slots || st->stacks_incomplete)
		printf("  stacks: %" PRIu64 " whole, %" PRIu64 " incomplete, in %" PRIu64
		       " records\n", st->stacks, st->stacks_incomplete, st->stack_slots);
	if (st->lost_markers)
		printf("  lost: %" PRIu64 " records in %" PRIu64
		       " markers; CPU total dropped at the last marker: %" PRIu64 "\n",
		       st->lost_records, st->lost_markers, st->last_total_dropped);
	printf("  bytes: %" PRIu64 "\n", st->file_bytes);
}

static void print_ok(const char *path, const struct kmt_file *f,
		     const struct kmt_stack_use *su)
{
	const struct kmt_file_stats *st = kmt_file_stats(f);
	const struct kmt_file_header *ck = kmt_file_checkpoint(f);

	printf("%s: OK: %" PRIu64 " records (%" PRIu64 " events, %" PRIu64 " cache descs, %"
	       PRIu64 " lost markers covering %" PRIu64 " records", path, st->records,
	       st->events, st->cache_descs, st->lost_markers, st->lost_records);
	if (st->unknown)
		printf(", %" PRIu64 " of unknown type skipped", st->unknown);
	printf(")");
	if (st->stack_slots)
		printf(", %" PRIu64 " stacks in %" PRIu64 " stack records", st->stacks,
		       st->stack_slots);
	if (st->stacks_incomplete)
		printf(", %" PRIu64 " incomplete (begun before the file or cut by lost records)",
		       st->stacks_incomplete);

	if (st->records_timed)
		printf(", ts %.6fs..%.6fs", st->first_ts / 1e9, st->last_ts / 1e9);
	if (st->truncated_bytes)
		printf("; truncated: %" PRIu64 "-byte partial record at offset %" PRIu64
		       " ignored", st->truncated_bytes, st->file_bytes - st->truncated_bytes);
	if (su->unknown)
		printf("; warning: %" PRIu64 " events name a stack id not in the file before them"
		       " (first at offset %" PRIu64 ")", su->unknown, su->first_off);
	/* What a checkpoint holds: the events kept verbatim are the live and unpaired ones. */
	if (ck)
		printf("; checkpoint cut at %" PRIu64 " ns of seg.%06" PRIu32 ": %" PRIu64
		       " events kept (live at the cut, or unpaired), %" PRIu64 " sums, of %" PRIu64
		       " records dropped", (uint64_t)ck->cut_ns, ck->segment, st->events, st->sums,
		       (uint64_t)ck->dropped_records);
	printf("\n");
}

/* Verifies one file; returns its KMT_EXIT_* code. */
static int check_file(const char *path, const struct args *a)
{
	unsigned int flags = a->strict ? 0 : KMT_OPEN_ALLOW_TRUNCATED;
	struct kmt_stack_use su;
	struct kmt_error err;
	struct kmt_file *f;
	int r, ret;

	f = kmt_file_open(path, flags, &err);
	if (!f) {
		printf("%s: FAIL: %s\n", path, without_path(&err, path));
		return kmt_error_exit(&err);
	}
	r = kmt_stacks_verify_file(f, &su);
	if (r == -2) {
		printf("%s: FAIL: out of memory\n", path);
		ret = KMT_EXIT_INTERNAL;
	} else if (r < 0) {
		const struct kmt_error *e = kmt_file_error(f);

		printf("%s: FAIL: %s\n", path, without_path(e, path));
		if (a->verbose) {
			print_header(f);
			printf("  valid before the error: %" PRIu64 " records\n",
			       kmt_file_stats(f)->records);
			print_details(kmt_file_stats(f));
		}
		ret = kmt_error_exit(e);
	} else {
		if (!a->quiet)
			print_ok(path, f, &su);
		if (a->verbose) {
			print_header(f);
			print_details(kmt_file_stats(f));
		}
		ret = KMT_EXIT_OK;
	}
	kmt_file_close(f);
	return ret;
}

static int worse(int a, int b)
{
	return a > b ? a : b;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { options, parse_opt, args_doc, doc, NULL, NULL, NULL };
	struct args a = { 0 };
	int i, ret = KMT_EXIT_OK;

	/* argp's default is EX_USAGE (64); every kmemtrace tool says 1. */
	argp_err_exit_status = KMT_EXIT_USAGE;
	argp_parse(&argp, argc, argv, 0, NULL, &a);
	for (i = 0; i < a.nfiles; i++) {
		struct stat sb;

		if (stat(a.files[i], &sb) == 0 && S_ISDIR(sb.st_mode)) {
			struct kmt_error err;
			char **paths;
			size_t n, j;

			if (kmt_find_cpu_files(a.files[i], &paths, &n, &err) < 0) {
				printf("%s: FAIL: %s\n", a.files[i],
				       without_path(&err, a.files[i]));
				ret = worse(ret, kmt_error_exit(&err));
				continue;
			}
			for (j = 0; j < n; j++)
				ret = worse(ret, check_file(paths[j], &a));
			kmt_free_paths(paths, n);
		} else {
			ret = worse(ret, check_file(a.files[i], &a));
		}
	}
	fflush(stdout);
	return ret;
}
