// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_merge.c - unit tests of finding a trace's cpuN.out files and of the
 * streaming k-way merge: order with equal timestamps, a larger random
 * trace, and the errors that make files unmergeable.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gen.h"
#include "kmt_exit.h"
#include "kmt_reader.h"
#include "kmt_writer.h"
#include "tap.h"

static char *top;

static const char *tpath(const char *name)
{
	static char buf[4][4096];
	static int slot;
	char *p = buf[slot++ & 3];

	snprintf(p, sizeof(buf[0]), "%s/%s", top, name);
	return p;
}

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

	g = gen_open(tpath("equal"), 3, NULL);
	if (!ok(g, "equal: generator opened"))
		return;
	for (cpu = 0; cpu < 3; cpu++) {
		gen_kmalloc(g, cpu, 100, 0x1000, 0x10000 + cpu * 0x100, 8, 8, -1, cpu);
		gen_kmalloc(g, cpu, 100, 0x1000, 0x10040 + cpu * 0x100, 8, 8, -1, cpu);
		gen_kfree(g, cpu, 200, 0x2000, 0x10000 + cpu * 0x100, cpu);
	}
	gen_close(g);

	/* Given in reverse, so path order cannot pass for merge order. */
	paths[0] = strdup(tpath("equal/cpu2.out"));
	paths[1] = strdup(tpath("equal/cpu1.out"));
	paths[2] = strdup(tpath("equal/cpu0.out"));
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

	g = gen_open(tpath("random"), ncpus, NULL);
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

	m = kmt_merge_open_dir(tpath("random"), 0, &err);
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

	mkdir(tpath("find"), 0755);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(sub, sizeof(sub), "find/%s", names[i]);
		touch(tpath(sub));
	}
	if (!ok(kmt_find_cpu_files(tpath("find"), &paths, &n, &err) == 0, "find: listed")) {
		diag("%s", err.msg);
		return;
	}
	if (is_u64(n, 4, "find: only the 4 cpuN.out files")) {
		is_str(paths[0], tpath("find/cpu0.out"), "find: cpu0 first");
		is_str(paths[1], tpath("find/cpu1.out"), "find: cpu1 second");
		is_str(paths[2], tpath("find/cpu2.out"), "find: cpu2 third");
		is_str(paths[3], tpath("find/cpu10.out"), "find: cpu10 last (numeric order)");
	}
	kmt_free_paths(paths, n);

	mkdir(tpath("emptydir"), 0755);
	touch(tpath("emptydir/kmemtrace.meta"));
	ok(kmt_find_cpu_files(tpath("emptydir"), &paths, &n, &err) < 0, "find: empty dir fails");
	is_u64(err.cls, KMT_ERR_DATA, "find: empty dir is bad data");
	snprintf(sub, sizeof(sub), "%s", "no cpu*.out files");
	{
		char want[4200];

		snprintf(want, sizeof(want), "%s: %s", tpath("emptydir"), sub);
		is_str(err.msg, want, "find: empty dir message names the directory");
	}
	ok(kmt_merge_open_dir(tpath("emptydir"), 0, &err) == NULL, "merge: empty dir fails");
	ok(kmt_find_cpu_files(tpath("nodir"), &paths, &n, &err) < 0, "find: missing dir fails");
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

	g = gen_open(tpath("a"), 2, NULL);
	gen_kmalloc(g, 0, 1, 0x1000, 0x2000, 8, 8, -1, 1);
	gen_kmalloc(g, 1, 1, 0x1000, 0x3000, 8, 8, -1, 1);
	gen_close(g);
	g = gen_open(tpath("b"), 1, NULL);
	gen_kmalloc(g, 0, 1, 0x1000, 0x4000, 8, 8, -1, 1);
	gen_close(g);
	g = gen_open(tpath("c32"), 2, &o32);
	gen_close(g);

	paths[0] = strdup(tpath("a/cpu0.out"));
	paths[1] = strdup(tpath("b/cpu0.out"));
	snprintf(want, sizeof(want), "%s: offset 12: CPU 0 again (also in %s)", paths[1],
		 paths[0]);
	expect_merge_reject(paths, 2, want, "same CPU twice");
	free(paths[1]);

	paths[1] = strdup(tpath("c32/cpu1.out"));
	snprintf(want, sizeof(want),
		 "%s: offset 15: not from the same trace as %s (byte order 1/1, word bits 32/64, page size 4096/4096)",
		 paths[1], paths[0]);
	expect_merge_reject(paths, 2, want, "32-bit and 64-bit files");
	free(paths[1]);

	if (gen_patch_file(tpath("a/cpu1.out"), 4, major_le, 2) < 0)
		diag("patch: %s", strerror(errno));
	paths[1] = strdup(tpath("a/cpu1.out"));
	snprintf(want, sizeof(want), "%s: offset 4: mixed ABI versions: 2.0 here, 1.0 in %s",
		 paths[1], paths[0]);
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

	g = gen_open(tpath("mid"), 2, NULL);
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

	m = kmt_merge_open_dir(tpath("mid"), 0, &err);
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
		 tpath("mid/cpu1.out"), (unsigned long long)bad_off);
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

	g = gen_open(tpath("mtrunc"), 2, NULL);
	if (!ok(g, "merge truncated: generator opened"))
		return;
	gen_kmalloc(g, 0, 1, 0x1000, 0x2000, 8, 8, -1, 1);
	gen_kmalloc(g, 1, 2, 0x1000, 0x3000, 8, 8, -1, 1);
	gen_raw_bytes(g, 1, part, sizeof(part));
	gen_close(g);
	m = kmt_merge_open_dir(tpath("mtrunc"), KMT_OPEN_ALLOW_TRUNCATED, &err);
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
	m = kmt_merge_open_dir(tpath("mtrunc"), 0, &err);
	if (!ok(m, "merge truncated strict: opened")) {
		diag("%s", err.msg);
		return;
	}
	while ((rc = kmt_merge_next(m, &r, NULL)) > 0)
		;
	ok(rc < 0, "merge truncated strict: an error without the flag");
	kmt_merge_close(m);
}

int main(void)
{
	top = gen_mkdtemp("merge");
	if (!ok(top, "temporary directory"))
		return done_testing();
	test_equal_timestamps();
	test_random_merge();
	test_find_files();
	test_unmergeable();
	test_error_mid_merge();
	test_merge_truncated();
	ok(gen_rm_rf(top) == 0, "temporary directory removed");
	free(top);
	return done_testing();
}
