// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_map.c - unit tests of reading trace files through mappings
 * (KMT_OPEN_MAP): record for record and error for error what read(2)
 * gives, across many windows (this binary's reader maps MAP_WINDOW bytes
 * at a time), for a merge, a partial last slot, a FIFO and a file in the
 * other byte order (read, not mapped), and a file that shrinks while
 * mapped (a message naming it, exit code 3).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gen.h"
#include "kmt_exit.h"
#include "kmt_reader_int.h"
#include "tap.h"
#include "testlib.h"

/* As tests/unit/lib.mk builds this binary's reader: four pages of 4 KiB. */
#define MAP_WINDOW	16384
#define NCPUS	3
#define PER_CPU	4000

/* Random events of every common kind, a cache name and a few stacks. */
static int make_trace(const char *dir, const struct gen_opts *opts)
{
	static const uint64_t frames[7] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77 };
	uint64_t rng = 99, ts = 1000;
	struct gen *g = gen_open(dir, NCPUS, opts);
	unsigned int cpu;
	int i, rc = 0;

	if (!g)
		return -1;
	for (cpu = 0; cpu < NCPUS; cpu++)
		rc |= gen_cache_desc(g, cpu, ts, 0xc0de, 96, 128, "test_cache");
	for (i = 0; i < PER_CPU; i++) {
		for (cpu = 0; cpu < NCPUS; cpu++) {
			uint64_t ptr = 0x100000 + 64 * (rng % 5000);

			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			ts += (rng >> 60) & 3;
			switch ((rng >> 40) % 8) {
			case 0:
			case 1:
				rc |= gen_kmalloc(g, cpu, ts, 0x1000 + (rng >> 50) % 16, ptr, 40, 64,
						  -1, 1);
				break;
			case 2:
				rc |= gen_cache_alloc(g, cpu, ts, 0x2000, ptr, 0xc0de, 96, 128, -1, 1);
				break;
			case 3:
			case 4:
				rc |= gen_kfree(g, cpu, ts, 0x3000, ptr, 1);
				break;
			case 5:
				rc |= gen_cache_free(g, cpu, ts, 0x3000, ptr, 0xc0de, 1);
				break;
			case 6:
				rc |= gen_stack(g, cpu, ts, (uint16_t)(i % 50 + 1), frames,
						1 + (unsigned int)(rng >> 33) % 7);
				break;
			default:
				rc |= gen_page_alloc(g, cpu, ts, 0x4000, ptr >> 12, 0, -1, 1);
				break;
			}
		}
	}
	return gen_close(g) | rc;
}

/* Every record of one file both ways: the same bytes, offsets, stats and end. */
static void test_file(const char *path, const char *what, unsigned int flags,
		      uint64_t min_records, int mapped)
{
	struct kmt_error e1, e2;
	struct kmt_file *a = kmt_file_open(path, flags, &e1);
	struct kmt_file *b = kmt_file_open(path, flags | KMT_OPEN_MAP, &e2);
	uint64_t n = 0, differ = 0, windows = 0;
	union kmt_rec ra, rb;
	uint8_t *last_buf;
	int rc1, rc2;

	if (!ok(a && b, "%s: opened both ways", what)) {
		diag("%s / %s", a ? "" : e1.msg, b ? "" : e2.msg);
		goto out;
	}
	is_u64((uint64_t)b->mapped, (uint64_t)mapped, "%s: %s", what,
	       mapped ? "mapped" : "read, not mapped");
	last_buf = b->buf;
	do {
		rc1 = kmt_file_next(a, &ra);
		rc2 = kmt_file_next(b, &rb);
		if (rc1 == 1 && rc2 == 1) {
			n++;
			if (memcmp(&ra, &rb, sizeof(ra)) ||
			    kmt_file_offset(a) != kmt_file_offset(b))
				differ++;
		}
		if (b->buf != last_buf) {
			windows++;
			last_buf = b->buf;
		}
	} while (rc1 == 1 && rc2 == 1);
	is_u64((uint64_t)(rc2 + 1), (uint64_t)(rc1 + 1), "%s: same end (%d)", what, rc1);
	ok(n >= min_records, "%s: %" PRIu64 " records read", what, n);
	is_u64(differ, 0, "%s: every record and offset alike", what);
	if (mapped)
		ok((windows + 2) * MAP_WINDOW >= n * KMT_RECORD_SIZE, "%s: read through %"
		   PRIu64 " windows", what, windows);
	ok(memcmp(kmt_file_stats(a), kmt_file_stats(b), sizeof(struct kmt_file_stats)) == 0,
	   "%s: same stats", what);
	if (rc1 < 0)
		is_str(kmt_file_error(b)->msg, kmt_file_error(a)->msg, "%s: same error", what);
out:
	kmt_file_close(a);
	kmt_file_close(b);
}

/* One side of test_merge(): its last batch and how far it was taken. */
struct side {
	struct kmt_merge *m;
	const union kmt_rec *recs[100];
	int n, i;
};

/* The side's next record: 1, or its merge's 0 or -1. Batches end where refills fall. */
static int side_next(struct side *s, const union kmt_rec **r)
{
	if (s->i == s->n) {
		s->n = kmt_merge_next_batch(s->m, s->recs, 100);
		s->i = 0;
		if (s->n <= 0)
			return s->n;
	}
	*r = s->recs[s->i++];
	return 1;
}

/* The merge's batches both ways: the same records from the same files. */
static void test_merge(const char *dir)
{
	struct side a = { 0 }, b = { 0 };
	const union kmt_rec *ra = NULL, *rb = NULL;
	struct kmt_error err;
	uint64_t n = 0, differ = 0;
	int rc1, rc2;

	a.m = kmt_merge_open_dir(dir, 0, &err);
	b.m = kmt_merge_open_dir(dir, KMT_OPEN_MAP, &err);
	if (!ok(a.m && b.m, "merge: opened both ways"))
		goto out;
	for (;;) {
		rc1 = side_next(&a, &ra);
		rc2 = side_next(&b, &rb);
		if (rc1 != 1 || rc2 != 1)
			break;
		differ += memcmp(ra, rb, sizeof(*ra)) != 0;
		n++;
	}
	is_u64((uint64_t)(rc2 + 1), (uint64_t)(rc1 + 1), "merge: both end together");
	is_u64((uint64_t)(rc1 + 1), 1, "merge: clean end");
	ok(n > NCPUS * PER_CPU, "merge: %" PRIu64 " records", n);
	is_u64(differ, 0, "merge: every record alike");
out:
	kmt_merge_close(a.m);
	kmt_merge_close(b.m);
}

static int copy_file(const char *from, const char *to, size_t cut, const char *tail, size_t tlen)
{
	size_t len;
	char *buf = test_read_file(from, &len);
	FILE *f;
	int rc;

	if (!buf)
		return -1;
	f = fopen(to, "wb");
	if (!f) {
		free(buf);
		return -1;
	}
	rc = fwrite(buf, 1, cut && cut < len ? cut : len, f) ? 0 : -1;
	if (tlen && fwrite(tail, 1, tlen, f) != tlen)
		rc = -1;
	free(buf);
	return fclose(f) | rc;
}

/* A FIFO cannot be mapped: read as without the flag, with nothing lost. */
static void test_fifo(const char *src)
{
	const char *fifo = test_path("fifo/cpu1.out");
	struct kmt_file_stats want;
	struct kmt_error err;
	struct kmt_file *f;
	union kmt_rec r;
	uint64_t n = 0;
	pid_t pid;
	int rc, st;

	f = kmt_file_open(src, 0, &err);
	if (!ok(f, "fifo: source opened"))
		return;
	while (kmt_file_next(f, &r) == 1)
		;
	want = *kmt_file_stats(f);
	kmt_file_close(f);
	mkdir(test_path("fifo"), 0700);
	if (!ok(mkfifo(fifo, 0600) == 0, "fifo: made"))
		return;
	pid = fork();
	if (pid == 0)
		_exit(copy_file(src, fifo, 0, NULL, 0) ? 1 : 0);
	f = kmt_file_open(fifo, KMT_OPEN_MAP, &err);
	if (ok(f, "fifo: opened with KMT_OPEN_MAP")) {
		ok(!f->mapped, "fifo: read, not mapped");
		while ((rc = kmt_file_next(f, &r)) == 1)
			n++;
		is_u64((uint64_t)(rc + 1), 1, "fifo: clean end");
		is_u64(kmt_file_stats(f)->records, want.records, "fifo: %" PRIu64 " records, all",
		       n);
		kmt_file_close(f);
	} else {
		diag("%s", err.msg);
		kill(pid, SIGKILL);
	}
	waitpid(pid, &st, 0);
}

/*
 * The file shrinks under its mapping: the process ends with exit code 3
 * and a message that names the file, not with a signal.
 */
static void test_shrink(const char *src)
{
	const char *path = test_path("shrink/cpu1.out");
	char msg[512] = "";
	int fds[2], st = 0;
	ssize_t got = 0, r;
	pid_t pid;

	mkdir(test_path("shrink"), 0700);
	if (!ok(copy_file(src, path, 0, NULL, 0) == 0 && pipe(fds) == 0, "shrink: file copied"))
		return;
	pid = fork();
	if (pid == 0) {
		struct kmt_error err;
		struct kmt_file *f;
		union kmt_rec rec;

		dup2(fds[1], STDERR_FILENO);
		f = kmt_file_open(path, KMT_OPEN_MAP, &err);
		if (!f || !f->mapped || kmt_file_next(f, &rec) != 1)
			_exit(10);
		/* The window's pages past the first are gone. */
		if (truncate(path, 4096) < 0)
			_exit(11);
		while (kmt_file_next(f, &rec) == 1)
			;
		_exit(12);
	}
	close(fds[1]);
	while (got < (ssize_t)sizeof(msg) - 1 &&
	       (r = read(fds[0], msg + got, sizeof(msg) - 1 - (size_t)got)) > 0)
		got += r;
	msg[got] = '\0';
	close(fds[0]);
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st), "shrink: exited, not killed by a signal (status %#x)", st);
	is_u64((uint64_t)WEXITSTATUS(st), KMT_EXIT_IO, "shrink: exit code %d (KMT_EXIT_IO)",
	       KMT_EXIT_IO);
	ok(strstr(msg, path) && strstr(msg, "shrank while it was read"),
	   "shrink: the message names the file: %s", msg);
}

int main(void)
{
	struct gen_opts be = { .big_endian = 1 };
	char path[2][4096];

	if (!ok(test_dir_make("map"), "temporary directory"))
		return done_testing();
	if (!ok(make_trace(test_path("t"), NULL) == 0, "trace written") ||
	    !ok(make_trace(test_path("be"), &be) == 0, "big-endian trace written"))
		goto out;
	snprintf(path[0], sizeof(path[0]), "%s", test_path("t/cpu1.out"));
	test_file(path[0], "whole file", 0, PER_CPU, 1);
	test_file(test_path("be/cpu2.out"), "big-endian", 0, PER_CPU, 0);
	test_merge(test_path("t"));

	/* A partial slot at the end, mid-window: an error, or cut off with the flag. */
	mkdir(test_path("part"), 0700);
	snprintf(path[1], sizeof(path[1]), "%s", test_path("part/cpu1.out"));
	ok(copy_file(path[0], path[1], 0, "0123456789", 10) == 0, "partial: file made");
	test_file(path[1], "partial slot", 0, PER_CPU, 1);
	test_file(path[1], "partial slot, allowed", KMT_OPEN_ALLOW_TRUNCATED, PER_CPU, 1);
	/* Cut at a window's end: the last slot straddles where a window would end. */
	ok(copy_file(path[0], path[1], 2 * MAP_WINDOW + 20, NULL, 0) == 0, "straddling: file made");
	test_file(path[1], "cut past a window", KMT_OPEN_ALLOW_TRUNCATED, 2 * MAP_WINDOW / KMT_RECORD_SIZE - 1, 1);

	test_fifo(path[0]);
	test_shrink(path[0]);
out:
	ok(test_dir_remove() == 0, "temporary directory removed");
	return done_testing();
}
