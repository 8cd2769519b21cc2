// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_merge.c - unit tests of finding a trace's cpuN.out files and of the
 * streaming k-way merge: order with equal timestamps, a larger random
 * trace, the errors that make files unmergeable, and the batch API and the
 * merge read ahead on a thread (kmt_ahead.h), for one reader and for three,
 * against a merge of files read one record at a time.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gen.h"
#include "kmt_ahead.h"
#include "kmt_exit.h"
#include "kmt_reader.h"
#include "kmt_writer.h"
#include "tap.h"
#include "testlib.h"

/* Equal timestamps across CPUs: CPU breaks the tie, then seq within a CPU. */
static void test_equal_timestamps(void)
{
	char *paths[3];
	struct kmt_error err;
	struct kmt_merge *m;
	struct gen *g;
	union kmt_rec r;
	size_t idx, n = 0, bad = 0;
	unsigned int cpu;
	int rc;
	/* Expected (ts, cpu) sequence, derived from what is written below. */
	static const struct { uint64_t ts; unsigned int cpu; uint32_t seq; } want[] = {
		{ 100, 0, 0 }, { 100, 0, 1 }, { 100, 1, 0 }, { 100, 1, 1 }, { 100, 2, 0 },
		{ 100, 2, 1 }, { 200, 0, 2 }, { 200, 1, 2 }, { 200, 2, 2 },
	};

	g = gen_open(test_path("equal"), 3, NULL);
	if (!ok(g, "equal: generator opened"))
		return;
	for (cpu = 0; cpu < 3; cpu++) {
		gen_kmalloc(g, cpu, 100, 0x1000, 0x10000 + cpu * 0x100, 8, 8, -1, cpu);
		gen_kmalloc(g, cpu, 100, 0x1000, 0x10040 + cpu * 0x100, 8, 8, -1, cpu);
		gen_kfree(g, cpu, 200, 0x2000, 0x10000 + cpu * 0x100, cpu);
	}
	gen_close(g);

	/* Given in reverse, so path order cannot pass for merge order. */
	paths[0] = strdup(test_path("equal/cpu2.out"));
	paths[1] = strdup(test_path("equal/cpu1.out"));
	paths[2] = strdup(test_path("equal/cpu0.out"));
	m = kmt_merge_open(paths, 3, 0, &err);
	if (!ok(m, "equal: merge opened")) {
		diag("%s", err.msg);
		goto out;
	}
	is_u64(kmt_merge_nfiles(m), 3, "equal: 3 files");
	while ((rc = kmt_merge_next(m, &r, &idx)) > 0) {
		if (n < sizeof(want) / sizeof(want[0]) &&
		    (r.c.timestamp != want[n].ts || r.c.cpu != want[n].cpu ||
		     r.c.seq != want[n].seq)) {
			diag("record %zu: ts %llu cpu %u seq %u", n,
			     (unsigned long long)r.c.timestamp, r.c.cpu, r.c.seq);
			bad++;
		}
		if (kmt_file_header(kmt_merge_file(m, idx))->cpu != r.c.cpu)
			bad++;
		n++;
	}
	is_u64((uint64_t)rc, 0, "equal: clean end");
	is_u64(n, sizeof(want) / sizeof(want[0]), "equal: every record merged");
	is_u64(bad, 0, "equal: order (ts, cpu, seq) and file index right");
	ok(kmt_merge_file(m, 3) == NULL, "equal: no 4th file");
	kmt_merge_close(m);
out:
	free(paths[0]);
	free(paths[1]);
	free(paths[2]);
}

/* A bigger random trace: merged order is time order and nothing is lost or repeated. */
static void test_random_merge(void)
{
	const unsigned int ncpus = 7;
	const uint64_t per_cpu = 3000;
	uint64_t ts[7] = { 0 }, n = 0, misorder = 0, seq_bad = 0, sum_ts_w = 0, sum_ts_r = 0;
	uint64_t last_ts = 0, i;
	uint32_t next_seq[7];
	unsigned int cpu, last_cpu = 0;
	struct kmt_error err;
	struct kmt_merge *m;
	union kmt_rec r;
	struct gen *g;
	uint64_t rng = 12345;
	int rc;

	g = gen_open(test_path("random"), ncpus, NULL);
	if (!ok(g, "random: generator opened"))
		return;
	for (cpu = 0; cpu < ncpus; cpu++) {
		for (i = 0; i < per_cpu; i++) {
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			/* Steps of 0..3 ns make many equal timestamps across CPUs. */
			ts[cpu] += (rng >> 60) & 3;
			gen_kmalloc(g, cpu, ts[cpu], 0x1000, 0x100000 * (cpu + 1) + 64 * i, 8, 8,
				    -1, 1);
			sum_ts_w += ts[cpu];
		}
		next_seq[cpu] = 0;
	}
	gen_close(g);

	m = kmt_merge_open_dir(test_path("random"), 0, &err);
	if (!ok(m, "random: merge of the directory opened")) {
		diag("%s", err.msg);
		return;
	}
	while ((rc = kmt_merge_next(m, &r, NULL)) > 0) {
		if (n && (r.c.timestamp < last_ts ||
			  (r.c.timestamp == last_ts && r.c.cpu < last_cpu)))
			misorder++;
		if (r.c.cpu >= ncpus || r.c.seq != next_seq[r.c.cpu]++)
			seq_bad++;
		last_ts = r.c.timestamp;
		last_cpu = r.c.cpu;
		sum_ts_r += r.c.timestamp;
		n++;
	}
	is_u64((uint64_t)rc, 0, "random: clean end");
	is_u64(n, ncpus * per_cpu, "random: every record once");
	is_u64(misorder, 0, "random: merged in (timestamp, cpu) order");
	is_u64(seq_bad, 0, "random: each CPU's records in their own order");
	is_u64(sum_ts_r, sum_ts_w, "random: timestamps sum as written");
	kmt_merge_close(m);
}

static void touch(const char *path)
{
	if (gen_write_file(path, "", 0) < 0)
		diag("cannot create %s: %s", path, strerror(errno));
}

static void test_find_files(void)
{
	static const char *const names[] = { "cpu10.out", "cpu2.out", "cpu0.out", "cpu1.out",
					     "cpu.out", "cpux.out", "cpu1.out.bak", "xcpu3.out",
					     "kmemtrace.meta", "cpu-1.out" };
	char **paths;
	struct kmt_error err;
	char sub[64];
	size_t n, i;

	mkdir(test_path("find"), 0755);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(sub, sizeof(sub), "find/%s", names[i]);
		touch(test_path(sub));
	}
	if (!ok(kmt_find_cpu_files(test_path("find"), &paths, &n, &err) == 0, "find: listed")) {
		diag("%s", err.msg);
		return;
	}
	if (is_u64(n, 4, "find: only the 4 cpuN.out files")) {
		is_str(paths[0], test_path("find/cpu0.out"), "find: cpu0 first");
		is_str(paths[1], test_path("find/cpu1.out"), "find: cpu1 second");
		is_str(paths[2], test_path("find/cpu2.out"), "find: cpu2 third");
		is_str(paths[3], test_path("find/cpu10.out"), "find: cpu10 last (numeric order)");
	}
	kmt_free_paths(paths, n);

	mkdir(test_path("emptydir"), 0755);
	touch(test_path("emptydir/kmemtrace.meta"));
	ok(kmt_find_cpu_files(test_path("emptydir"), &paths, &n, &err) < 0,
	   "find: empty dir fails");
	is_u64(err.cls, KMT_ERR_DATA, "find: empty dir is bad data");
	snprintf(sub, sizeof(sub), "%s", "no cpu*.out files");
	{
		char want[4200];

		snprintf(want, sizeof(want), "%s: %s", test_path("emptydir"), sub);
		is_str(err.msg, want, "find: empty dir message names the directory");
	}
	ok(kmt_merge_open_dir(test_path("emptydir"), 0, &err) == NULL, "merge: empty dir fails");
	ok(kmt_find_cpu_files(test_path("nodir"), &paths, &n, &err) < 0, "find: missing dir fails");
	is_u64(err.cls, KMT_ERR_IO, "find: missing dir is an I/O error");
	is_u64((uint64_t)kmt_error_exit(&err), KMT_EXIT_IO, "find: exit code 3");
}

/* The message of a failed kmt_merge_open() of these files. */
static void expect_merge_reject(char **paths, size_t n, const char *want, const char *label)
{
	struct kmt_error err;
	struct kmt_merge *m = kmt_merge_open(paths, n, 0, &err);

	ok(!m, "%s: refused", label);
	kmt_merge_close(m);
	is_u64(err.cls, KMT_ERR_DATA, "%s: bad data", label);
	is_str(err.msg, want, "%s: message", label);
}

static void test_unmergeable(void)
{
	struct gen_opts o32 = { .word_bits = 32 };
	char *paths[2];
	char want[8400];
	struct kmt_error err;
	const uint8_t major_le[2] = { 2, 0 };	/* the generator writes little-endian */
	struct gen *g;

	g = gen_open(test_path("a"), 2, NULL);
	gen_kmalloc(g, 0, 1, 0x1000, 0x2000, 8, 8, -1, 1);
	gen_kmalloc(g, 1, 1, 0x1000, 0x3000, 8, 8, -1, 1);
	gen_close(g);
	g = gen_open(test_path("b"), 1, NULL);
	gen_kmalloc(g, 0, 1, 0x1000, 0x4000, 8, 8, -1, 1);
	gen_close(g);
	g = gen_open(test_path("c32"), 2, &o32);
	gen_close(g);

	paths[0] = strdup(test_path("a/cpu0.out"));
	paths[1] = strdup(test_path("b/cpu0.out"));
	snprintf(want, sizeof(want), "%s: offset 12: CPU 0 again (also in %s)", paths[1],
		 paths[0]);
	expect_merge_reject(paths, 2, want, "same CPU twice");
	free(paths[1]);

	paths[1] = strdup(test_path("c32/cpu1.out"));
	snprintf(want, sizeof(want),
		 "%s: offset 15: not from the same trace as %s (byte order 1/1, word bits 32/64, page size 4096/4096)",
		 paths[1], paths[0]);
	expect_merge_reject(paths, 2, want, "32-bit and 64-bit files");
	free(paths[1]);

	if (gen_patch_file(test_path("a/cpu1.out"), 4, major_le, 2) < 0)
		diag("patch: %s", strerror(errno));
	paths[1] = strdup(test_path("a/cpu1.out"));
	snprintf(want, sizeof(want), "%s: offset 4: mixed ABI versions: 2.%u here, 1.%u in %s",
		 paths[1], KMT_ABI_MINOR, KMT_ABI_MINOR, paths[0]);
	expect_merge_reject(paths, 2, want, "mixed ABI majors");
	free(paths[0]);
	free(paths[1]);

	ok(kmt_merge_open(paths, 0, 0, &err) == NULL, "no files: refused");
	is_u64(err.cls, KMT_ERR_USAGE, "no files: usage error");
}

/* A bad record in one file: the merge returns what came before, then that file's error. */
static void test_error_mid_merge(void)
{
	struct kmt_error err;
	struct kmt_merge *m;
	union kmt_rec r;
	uint64_t bad_off, n = 0;
	struct gen *g;
	char want[4200];
	int rc, i;

	g = gen_open(test_path("mid"), 2, NULL);
	if (!ok(g, "mid: generator opened"))
		return;
	for (i = 0; i < 10; i++)
		gen_kmalloc(g, 0, 10 * i, 0x1000, 0x2000 + 64 * i, 8, 8, -1, 1);
	for (i = 0; i < 5; i++)
		gen_kmalloc(g, 1, 10 * i + 5, 0x1000, 0x9000 + 64 * i, 8, 8, -1, 1);
	gen_set_seq(g, 1, 100);
	bad_off = gen_offset(g, 1);
	gen_kmalloc(g, 1, 55, 0x1000, 0x9400, 8, 8, -1, 1);
	gen_close(g);

	m = kmt_merge_open_dir(test_path("mid"), 0, &err);
	if (!ok(m, "mid: opened")) {
		diag("%s", err.msg);
		return;
	}
	while ((rc = kmt_merge_next(m, &r, NULL)) > 0)
		n++;
	ok(rc < 0, "mid: the merge fails");
	/*
	 * Reading past CPU 1's last good record (ts 45) hits the bad one: the
	 * merge ends there, after CPU 0's records up to ts 40 and CPU 1's 5.
	 */
	is_u64(n, 5 + 5, "mid: the records in time order up to the last good one");
	snprintf(want, sizeof(want),
		 "%s: offset %llu: seq 100 where 5 expected and no lost-records marker",
		 test_path("mid/cpu1.out"), (unsigned long long)bad_off);
	is_str(kmt_merge_error(m)->msg, want, "mid: the failing file's message");
	ok(kmt_merge_next(m, &r, NULL) < 0, "mid: the error sticks");
	kmt_merge_close(m);
}

/* Merging with ALLOW_TRUNCATED passes the flag to every file. */
static void test_merge_truncated(void)
{
	uint8_t part[20] = { KMT_REC_KFREE };
	struct kmt_error err;
	struct kmt_merge *m;
	union kmt_rec r;
	struct gen *g;
	uint64_t n = 0;
	int rc;

	g = gen_open(test_path("mtrunc"), 2, NULL);
	if (!ok(g, "merge truncated: generator opened"))
		return;
	gen_kmalloc(g, 0, 1, 0x1000, 0x2000, 8, 8, -1, 1);
	gen_kmalloc(g, 1, 2, 0x1000, 0x3000, 8, 8, -1, 1);
	gen_raw_bytes(g, 1, part, sizeof(part));
	gen_close(g);
	m = kmt_merge_open_dir(test_path("mtrunc"), KMT_OPEN_ALLOW_TRUNCATED, &err);
	if (!ok(m, "merge truncated: opened")) {
		diag("%s", err.msg);
		return;
	}
	while ((rc = kmt_merge_next(m, &r, NULL)) > 0)
		n++;
	is_u64((uint64_t)rc, 0, "merge truncated: clean end");
	is_u64(n, 2, "merge truncated: both records");
	is_u64(kmt_file_stats(kmt_merge_file(m, 1))->truncated_bytes, sizeof(part),
	       "merge truncated: tail reported on cpu1");
	kmt_merge_close(m);
	m = kmt_merge_open_dir(test_path("mtrunc"), 0, &err);
	if (!ok(m, "merge truncated strict: opened")) {
		diag("%s", err.msg);
		return;
	}
	while ((rc = kmt_merge_next(m, &r, NULL)) > 0)
		;
	ok(rc < 0, "merge truncated strict: an error without the flag");
	kmt_merge_close(m);
}

/* ---- kmt_merge_next_batch() against a reference merge ---------------------- */

/* Records and how the stream ended, as a merge gave them. */
struct stream {
	union kmt_rec *recs;
	size_t n, cap;
	int rc;				/* 0 clean end, -1 error */
	struct kmt_error err;		/* after -1 */
	struct kmt_file_stats st[32];	/* per file, after the end */
};

static int stream_add(struct stream *s, const union kmt_rec *r)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		union kmt_rec *v = realloc(s->recs, cap * sizeof(*v));

		if (!v)
			return -1;
		s->recs = v;
		s->cap = cap;
	}
	s->recs[s->n++] = *r;
	return 0;
}

/*
 * The merge as it was defined before batches, from kmt_file_next() (which
 * validates one record at a time): each file's next record is read as soon
 * as its last one is taken, the least (timestamp, cpu) goes next, and a
 * file's error ends the stream right after that file's last good record.
 * Returns 0, or -1 if the files cannot be read at all.
 */
static int ref_merge(char **paths, size_t n, unsigned int flags, struct stream *out)
{
	struct kmt_file *f[32];
	union kmt_rec head[32];
	int state[32];
	struct kmt_error err;
	size_t i, opened = 0;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (n > 32)
		return -1;
	for (i = 0; i < n; i++) {
		f[i] = kmt_file_open(paths[i], flags, &err);
		if (!f[i]) {
			diag("reference: %s", err.msg);
			goto out;
		}
		opened++;
		state[i] = kmt_file_next(f[i], &head[i]);
		if (state[i] < 0) {
			diag("reference: %s", kmt_file_error(f[i])->msg);
			goto out;
		}
	}
	for (;;) {
		size_t best = n;

		for (i = 0; i < n; i++)
			if (state[i] == 1 && (best == n ||
					      head[i].c.timestamp < head[best].c.timestamp ||
					      (head[i].c.timestamp == head[best].c.timestamp &&
					       head[i].c.cpu < head[best].c.cpu)))
				best = i;
		if (best == n)
			break;
		if (stream_add(out, &head[best]) < 0)
			goto out;
		state[best] = kmt_file_next(f[best], &head[best]);
		if (state[best] < 0) {
			out->rc = -1;
			out->err = *kmt_file_error(f[best]);
			break;
		}
	}
	for (i = 0; i < n; i++)
		out->st[i] = *kmt_file_stats(f[i]);
	ret = 0;
out:
	for (i = 0; i < opened; i++)
		kmt_file_close(f[i]);
	return ret;
}

/* The merge through kmt_merge_next() (batch 0) or kmt_merge_next_batch(). */
/* api_merge()'s batch size for the merge read ahead on a thread (kmt_ahead_next()). */
#define AHEAD	((size_t)-1)
/* The same with three readers, two on threads of their own, each getting every batch. */
#define AHEAD3	((size_t)-2)

/* A reader of kmt_ahead_start_readers() on a thread: every batch into its stream. */
struct reader_arg {
	struct kmt_ahead *a;
	unsigned int reader;
	struct stream s;
	pthread_t thread;
};

static void *read_all(void *arg)
{
	struct reader_arg *ra = arg;
	const union kmt_rec *const *recs;
	int rc, i;

	while ((rc = kmt_ahead_next_of(ra->a, ra->reader, &recs)) > 0)
		for (i = 0; i < rc; i++)
			if (stream_add(&ra->s, recs[i]) < 0)
				ra->s.rc = -2;
	if (ra->s.rc != -2)
		ra->s.rc = rc;
	return NULL;
}

static int api_merge(char **paths, size_t n, unsigned int flags, size_t batch,
		     struct stream *out, uint64_t *bad_batches)
{
	const union kmt_rec *recs[256];
	const union kmt_rec *const *ahead_recs;
	struct reader_arg ra[2] = { 0 };
	struct kmt_ahead *a = NULL;
	struct kmt_error err;
	struct kmt_merge *m;
	unsigned int started = 0;
	size_t i, fi;
	int rc;

	memset(out, 0, sizeof(*out));
	m = kmt_merge_open(paths, n, flags, &err);
	if (!m) {
		diag("merge: %s", err.msg);
		return -1;
	}
	if (batch == AHEAD || batch == AHEAD3) {
		a = batch == AHEAD ? kmt_ahead_start(m) : kmt_ahead_start_readers(m, 3);
		if (!a) {
			diag("kmt_ahead_start: %s", strerror(errno));
			kmt_merge_close(m);
			return -1;
		}
	}
	for (; batch == AHEAD3 && started < 2; started++) {
		ra[started].a = a;
		ra[started].reader = started + 1;
		if (pthread_create(&ra[started].thread, NULL, read_all, &ra[started])) {
			diag("pthread_create failed");
			(*bad_batches)++;
			break;
		}
	}
	for (;;) {
		if (a) {
			rc = kmt_ahead_next(a, &ahead_recs);
			for (i = 0; rc > 0 && i < (size_t)rc; i++)
				if (stream_add(out, ahead_recs[i]) < 0)
					break;
		} else if (!batch) {
			union kmt_rec r;

			rc = kmt_merge_next(m, &r, &fi);
			if (rc == 1 && (fi >= n || kmt_file_header(kmt_merge_file(m, fi))->cpu !=
				       r.c.cpu))
				(*bad_batches)++;
			if (rc == 1 && stream_add(out, &r) < 0)
				break;
		} else {
			rc = kmt_merge_next_batch(m, recs, batch);
			if (rc > (int)batch)
				(*bad_batches)++;
			/* Every pointer of the batch still good once it is all out. */
			for (i = 0; rc > 0 && i < (size_t)rc; i++)
				if (stream_add(out, recs[i]) < 0)
					break;
		}
		if (rc <= 0)
			break;
	}
	if (a) {
		/* The end is the answer from then on; then the merge is the caller's again. */
		if (kmt_ahead_next(a, &ahead_recs) != rc)
			(*bad_batches)++;
		/* Every other reader got the same batches. */
		for (i = 0; i < started; i++) {
			pthread_join(ra[i].thread, NULL);
			if (ra[i].s.rc != rc || ra[i].s.n != out->n ||
			    (out->n && memcmp(ra[i].s.recs, out->recs, out->n * sizeof(*out->recs))))
				(*bad_batches)++;
			free(ra[i].s.recs);
		}
		kmt_ahead_stop(a);
	}
	out->rc = rc < 0 ? -1 : 0;
	out->err = *kmt_merge_error(m);
	if (rc < 0 && kmt_merge_next_batch(m, recs, 1) != -1)
		(*bad_batches)++;
	for (i = 0; i < n; i++)
		out->st[i] = *kmt_file_stats(kmt_merge_file(m, i));
	kmt_merge_close(m);
	return 0;
}

static int stats_equal(const struct kmt_file_stats *a, const struct kmt_file_stats *b)
{
	unsigned int t;

	for (t = 0; t <= KMT_REC_TYPE_MAX; t++)
		if (a->by_type[t] != b->by_type[t])
			return 0;
	return a->records == b->records && a->events == b->events &&
	       a->unknown == b->unknown && a->cache_descs == b->cache_descs &&
	       a->lost_markers == b->lost_markers && a->lost_records == b->lost_records &&
	       a->last_total_dropped == b->last_total_dropped && a->first_ts == b->first_ts &&
	       a->last_ts == b->last_ts && a->records_timed == b->records_timed &&
	       a->first_seq == b->first_seq && a->last_seq == b->last_seq &&
	       a->truncated_bytes == b->truncated_bytes && a->file_bytes == b->file_bytes;
}

/*
 * What does not depend on the reader at all: the stream in (timestamp,
 * cpu) order, and at a clean end the files' counts summing to what the
 * generator wrote.
 */
static void check_ref(const char *label, const struct stream *ref, size_t nfiles,
		      const struct gen_totals *tot)
{
	uint64_t misorder = 0, sum[KMT_REC_TYPE_MAX + 1] = { 0 }, lost = 0, slots = 0;
	size_t i;
	unsigned int t;

	for (i = 1; i < ref->n; i++) {
		const struct kmt_record_common *a = &ref->recs[i - 1].c, *b = &ref->recs[i].c;

		if (b->timestamp < a->timestamp ||
		    (b->timestamp == a->timestamp && b->cpu < a->cpu))
			misorder++;
	}
	is_u64(misorder, 0, "%s: reference in (timestamp, cpu) order", label);
	if (ref->rc < 0 || !tot)
		return;
	for (i = 0; i < nfiles; i++) {
		for (t = 1; t <= KMT_REC_TYPE_MAX; t++)
			sum[t] += ref->st[i].by_type[t];
		lost += ref->st[i].lost_records;
		slots += ref->st[i].records;
	}
	for (t = 1; t <= KMT_REC_TYPE_MAX; t++)
		is_u64(sum[t], tot->by_type[t], "%s: %s records as written", label,
		       kmt_rec_type_name(t));
	is_u64(lost, tot->lost, "%s: lost records as written", label);
	is_u64(slots, tot->records, "%s: slots as written, unknown ones included", label);
}

/*
 * The merge of dir through kmt_merge_next() and through batches of 1, 7,
 * 64 and 256 gives the reference's records, byte for byte, and ends as it
 * does: cleanly with every file's stats as read alone, or with the same
 * error after the same records (the failing file's stats up to it). tot,
 * if not NULL, is what the generator wrote.
 */
static void check_batches(const char *label, const char *dir, unsigned int flags,
			  uint64_t min_records, int want_rc, const struct gen_totals *tot)
{
	static const size_t batches[] = { 0, 1, 7, 64, 256, AHEAD, AHEAD3 };
	struct stream ref, got;
	char **paths;
	struct kmt_error err;
	size_t n, b, i;

	if (!ok(kmt_find_cpu_files(dir, &paths, &n, &err) == 0, "%s: files found", label)) {
		diag("%s", err.msg);
		return;
	}
	if (!ok(ref_merge(paths, n, flags, &ref) == 0, "%s: reference merged", label))
		goto out;
	ok(ref.n >= min_records, "%s: %zu records in the reference (at least %llu)", label,
	   ref.n, (unsigned long long)min_records);
	is_u64((uint64_t)(int64_t)ref.rc, (uint64_t)(int64_t)want_rc, "%s: reference ends with %d",
	       label, want_rc);
	check_ref(label, &ref, n, tot);
	for (b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
		uint64_t bad = 0, differ = 0, stats_bad = 0;
		char how[48];

		if (batches[b] == AHEAD)
			snprintf(how, sizeof(how), "read ahead");
		else if (batches[b] == AHEAD3)
			snprintf(how, sizeof(how), "read ahead for three readers");
		else
			snprintf(how, sizeof(how), "%s %zu", batches[b] ? "batch" : "kmt_merge_next",
				 batches[b]);

		if (!ok(api_merge(paths, n, flags, batches[b], &got, &bad) == 0,
			"%s: %s merged", label, how))
			continue;
		for (i = 0; i < got.n && i < ref.n; i++)
			if (memcmp(&got.recs[i], &ref.recs[i], sizeof(got.recs[i])) != 0)
				differ++;
		is_u64(got.n, ref.n, "%s: %s: as many records", label, how);
		is_u64(differ, 0, "%s: %s: the same records, in the same order", label, how);
		is_u64(bad, 0, "%s: %s: counts, file indexes and a sticky error", label, how);
		is_u64((uint64_t)(int64_t)got.rc, (uint64_t)(int64_t)ref.rc,
		       "%s: %s: the same end", label, how);
		if (ref.rc < 0) {
			is_str(got.err.msg, ref.err.msg, "%s: %s: the same message", label, how);
			is_u64(got.err.offset, ref.err.offset, "%s: %s: the same offset", label,
			       how);
			is_u64(got.err.cls, ref.err.cls, "%s: %s: the same class", label, how);
			/* Other files may have been validated ahead of the stream. */
			for (i = 0; i < n; i++)
				if (strncmp(ref.err.msg, paths[i], strlen(paths[i])) == 0 &&
				    ref.err.msg[strlen(paths[i])] == ':' &&
				    !stats_equal(&got.st[i], &ref.st[i]))
					stats_bad++;
		} else {
			for (i = 0; i < n; i++)
				if (!stats_equal(&got.st[i], &ref.st[i]))
					stats_bad++;
		}
		is_u64(stats_bad, 0, "%s: %s: stats as read alone", label, how);
		free(got.recs);
	}
	free(ref.recs);
out:
	kmt_free_paths(paths, n);
}

/* What a generated trace holds besides plain events. */
struct mix {
	unsigned int ncpus;
	unsigned int per_cpu;		/* records of CPU 0; the others have more */
	int rare;			/* cache descriptions, LOST markers, unknown slots */
	struct gen_opts opts;
	/* A corruption: what, at which CPU and record (0: none). */
	enum { CORRUPT_NONE, CORRUPT_SEQ, CORRUPT_TS, CORRUPT_ZERO } corrupt;
	unsigned int bad_cpu, bad_at;
};

static uint64_t rng_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

/*
 * A trace of random interleaving: steps of 0..3 ns make many timestamps
 * equal across CPUs, and CPUs of different lengths end at different times.
 */
static int gen_mix(const char *dir, const struct mix *x, uint64_t seed, struct gen_totals *tot)
{
	uint8_t zero[KMT_RECORD_SIZE] = { 0 };
	struct gen *g = gen_open(dir, x->ncpus, &x->opts);
	unsigned int cpu, i;

	if (!g)
		return -1;
	for (cpu = 0; cpu < x->ncpus; cpu++) {
		unsigned int len = x->per_cpu + cpu * (x->per_cpu / 5);
		uint64_t ts = 1000;

		for (i = 0; i < len; i++) {
			uint64_t r = rng_next(&seed), ptr = 0x1000000ULL * (cpu + 1) + 64 * i;
			uint64_t site = 0x100000 + 16 * (r % 50);
			union kmt_rec u;

			ts += r & 3;
			if (x->corrupt && cpu == x->bad_cpu && i == x->bad_at) {
				if (x->corrupt == CORRUPT_SEQ)
					gen_set_seq(g, cpu, gen_next_seq(g, cpu) + 3);
				else if (x->corrupt == CORRUPT_TS)
					ts -= 10;
				else
					gen_raw_bytes(g, cpu, zero, sizeof(zero));
			}
			switch (x->rare ? (r >> 8) % 50 : 9) {
			case 0:
				gen_cache_desc(g, cpu, ts, 0x5000 + 64 * (r % 8), 64, 64,
					       "kmalloc-64");
				break;
			case 1:
				gen_lost(g, cpu, ts, 1 + r % 5);
				break;
			case 2:
			case 3:
				/* A newer minor's record, which may take a seq of its own. */
				memset(&u, 0, sizeof(u));
				u.c.type = (uint8_t)(KMT_REC_TYPE_MAX + 1 + r % 200);
				u.c.cpu = (uint16_t)cpu;
				u.c.seq = gen_next_seq(g, cpu);
				u.c.timestamp = r;
				gen_raw(g, cpu, &u);
				if (r & 0x10000)
					gen_set_seq(g, cpu, gen_next_seq(g, cpu) + 1);
				break;
			case 4:
				gen_kfree(g, cpu, ts, site, ptr - 64, 1);
				break;
			case 5:
				gen_cache_alloc(g, cpu, ts, site, ptr, 0x5000, 32, 64, -1, 1);
				break;
			default:
				gen_kmalloc(g, cpu, ts, site, ptr, 24, 32, -1, 1);
				break;
			}
		}
	}
	*tot = *gen_totals(g);
	return gen_close(g);
}

static void test_batches(void)
{
	/* A read buffer holds 4096 slots: files of 5000 and more are refilled. */
	static const struct {
		const char *label;
		struct mix x;
		int want_rc;
	} cases[] = {
		{ "1 cpu", { .ncpus = 1, .per_cpu = 9000 }, 0 },
		{ "2 cpus, rare records", { .ncpus = 2, .per_cpu = 9000, .rare = 1 }, 0 },
		{ "4 cpus", { .ncpus = 4, .per_cpu = 10000 }, 0 },
		{ "4 cpus, rare records", { .ncpus = 4, .per_cpu = 10000, .rare = 1 }, 0 },
		{ "9 cpus (heap), rare records", { .ncpus = 9, .per_cpu = 5000, .rare = 1 }, 0 },
		{ "17 cpus (heap)", { .ncpus = 17, .per_cpu = 5000, .rare = 1 }, 0 },
		/* Seq 0x01000001 reads the same in either byte order. */
		{ "4 cpus big-endian", { .ncpus = 4, .per_cpu = 6000, .rare = 1,
					 .opts = { .big_endian = 1, .first_seq = 0x01000000 } },
		  0 },
		{ "3 cpus 32-bit", { .ncpus = 3, .per_cpu = 6000, .rare = 1,
				     .opts = { .word_bits = 32 } }, 0 },
		{ "4 cpus, seq gap mid-file", { .ncpus = 4, .per_cpu = 10000, .rare = 1,
						.corrupt = CORRUPT_SEQ, .bad_cpu = 2,
						.bad_at = 6000 }, -1 },
		{ "4 cpus, timestamp back mid-file", { .ncpus = 4, .per_cpu = 10000,
						       .corrupt = CORRUPT_TS, .bad_cpu = 0,
						       .bad_at = 4500 }, -1 },
		{ "9 cpus, zeroed slot mid-file", { .ncpus = 9, .per_cpu = 5000,
						    .corrupt = CORRUPT_ZERO, .bad_cpu = 8,
						    .bad_at = 3000 }, -1 },
		{ "4 cpus big-endian, seq gap", { .ncpus = 4, .per_cpu = 6000,
						  .opts = { .big_endian = 1 },
						  .corrupt = CORRUPT_SEQ, .bad_cpu = 1,
						  .bad_at = 5000 }, -1 },
	};
	struct gen_totals tot;
	uint64_t min;
	char dir[64];
	size_t c;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		snprintf(dir, sizeof(dir), "batch%zu", c);
		if (!ok(gen_mix(test_path(dir), &cases[c].x, 7 + c, &tot) == 0, "%s: generated",
			cases[c].label))
			continue;
		/* Most records of a clean trace, a good part of a corrupt one. */
		min = cases[c].x.ncpus * (uint64_t)cases[c].x.per_cpu * 9 / 10;
		if (cases[c].want_rc)
			min = 1000;
		check_batches(cases[c].label, test_path(dir), 0, min, cases[c].want_rc, &tot);
	}
}

/* A partial slot at the end of one file, with and without KMT_OPEN_ALLOW_TRUNCATED. */
static void test_batch_truncated(void)
{
	const struct mix x = { .ncpus = 3, .per_cpu = 7000, .rare = 1 };
	struct gen_totals tot;
	uint8_t part[40];
	FILE *fp;

	if (!ok(gen_mix(test_path("btrunc"), &x, 99, &tot) == 0, "batch truncated: generated"))
		return;
	memset(part, 0x5a, sizeof(part));
	part[0] = KMT_REC_KMALLOC;
	fp = fopen(test_path("btrunc/cpu1.out"), "ab");
	ok(fp && fwrite(part, sizeof(part), 1, fp) == 1, "batch truncated: tail appended");
	if (fp)
		fclose(fp);
	check_batches("truncated, allowed", test_path("btrunc"), KMT_OPEN_ALLOW_TRUNCATED, 20000, 0,
		      &tot);
	check_batches("truncated, strict", test_path("btrunc"), 0, 20000, -1, NULL);
}

/* max 0 is a caller's error that does not stop the merge. */
static void test_batch_zero(void)
{
	const union kmt_rec *recs[4];
	struct kmt_error err;
	struct kmt_merge *m = kmt_merge_open_dir(test_path("batch0"), 0, &err);

	if (!ok(m, "batch of 0: opened")) {
		diag("%s", err.msg);
		return;
	}
	is_u64((uint64_t)(int64_t)kmt_merge_next_batch(m, recs, 0), (uint64_t)-1,
	       "batch of 0: refused");
	is_u64(kmt_merge_error(m)->cls, KMT_ERR_USAGE, "batch of 0: a usage error");
	is_u64((uint64_t)kmt_merge_next_batch(m, recs, 4), 4, "batch of 0: the merge goes on");
	kmt_merge_close(m);
}

/*
 * The read ahead stopped before the end: at once, after one batch while
 * the thread waits for a free slot, and after a few: nothing left behind
 * (the sanitizer build sees leaks), the merge usable again where it was.
 */
static void test_ahead_stop_early(void)
{
	const struct mix x = { .ncpus = 4, .per_cpu = 30000 };
	const union kmt_rec *const *recs;
	struct gen_totals tot;
	struct kmt_error err;
	unsigned int reads;

	if (!ok(gen_mix(test_path("ahead"), &x, 5, &tot) == 0, "read ahead: generated"))
		return;
	for (reads = 0; reads < 6; reads += 3) {
		struct kmt_merge *m = kmt_merge_open_dir(test_path("ahead"), 0, &err);
		struct kmt_ahead *a;
		const union kmt_rec *rest[1];
		uint64_t got = 0, last = 0;
		unsigned int r;
		int rc = 1;

		if (!ok(m, "read ahead: opened")) {
			diag("%s", err.msg);
			return;
		}
		a = kmt_ahead_start(m);
		ok(a != NULL, "read ahead: started");
		for (r = 0; a && r < reads && rc > 0; r++) {
			rc = kmt_ahead_next(a, &recs);
			if (rc > 0) {
				got += (uint64_t)rc;
				last = recs[rc - 1]->c.timestamp;
			}
		}
		kmt_ahead_stop(a);
		ok(got >= reads, "read ahead, stopped after %u batches: %llu records", reads,
		   (unsigned long long)got);
		rc = kmt_merge_next_batch(m, rest, 1);
		ok(rc == 1 && rest[0]->c.timestamp >= last,
		   "read ahead, stopped after %u batches: the merge goes on after them", reads);
		kmt_merge_close(m);
	}
}

int main(void)
{
	if (!ok(test_dir_make("merge"), "temporary directory"))
		return done_testing();
	test_equal_timestamps();
	test_random_merge();
	test_find_files();
	test_unmergeable();
	test_error_mid_merge();
	test_merge_truncated();
	test_batches();
	test_batch_truncated();
	test_batch_zero();
	test_ahead_stop_early();
	ok(test_dir_remove() == 0, "temporary directory removed");
	return done_testing();
}
