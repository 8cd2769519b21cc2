// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_checkpoint.c - the reader's side of rotated traces (format 1.3): a
 * checkpoint's header and SUM records, each rule with its message and
 * offset; a rotated directory's window as inputs, one stream a CPU; the
 * merge reading a CPU's checkpoint and segments one after another.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "gen.h"
#include "kmt_exit.h"
#include "kmt_reader.h"
#include "tap.h"
#include "testlib.h"

#define CUT	5000u
#define SITE	0xc1000100u
#define CACHE	0xc2000000u

/* A SUM record of count kmallocs of SITE freed, at the cut - 1. */
static union kmt_rec sum_rec(unsigned int cpu)
{
	union kmt_rec r = { .sum = {
		.type = KMT_REC_SUM, .cpu = (uint16_t)cpu, .timestamp = CUT - 1,
		.call_site = SITE, .bytes_req = 48, .bytes_alloc = 64, .count = 2,
		.alloc_type = KMT_REC_KMALLOC, .sum_kind = KMT_SUM_FREED,
	} };

	return r;
}

/*
 * A checkpoint of one CPU at dir: a cache, stack 1, two kept events with
 * a sequence gap between them; then *bad_off, where what the case writes
 * begins.
 */
static struct gen *ckpt_open(const char *dir, int big_endian, unsigned int word_bits,
			     uint64_t *bad_off)
{
	struct gen_opts o = { .cut_ns = CUT, .segment = 2, .dropped_records = 40,
			      .big_endian = big_endian, .word_bits = word_bits };
	const uint64_t frames[2] = { SITE, 0xc1000200u };
	struct gen *g = gen_open(dir, 1, &o);

	if (!g)
		return NULL;
	gen_cache_desc(g, 0, 100, CACHE, 96, 96, "c");
	gen_stack(g, 0, 200, 1, frames, 2);
	gen_kmalloc(g, 0, 300, SITE, 0xc8000000u, 24, 32, -1, 1);
	gen_set_seq(g, 0, 40);	/* a fold keeps records with gaps between them */
	gen_cache_alloc(g, 0, 400, SITE + 0x40, 0xc8000100u, CACHE, 90, 96, -1, 1);
	*bad_off = gen_offset(g, 0);
	return g;
}

struct sum_case {
	const char *label, *msg;	/* msg after "PATH: offset N: " */
	void (*edit)(union kmt_rec *r);
};

static void e_kind(union kmt_rec *r)
{
	r->sum.sum_kind = 3;
}

static void e_type(union kmt_rec *r)
{
	r->sum.alloc_type = KMT_REC_PAGE_ALLOC;
}

static void e_count(union kmt_rec *r)
{
	r->sum.count = 0;
}

static void e_seq(union kmt_rec *r)
{
	r->sum.seq = 5;
}

static void e_cross(union kmt_rec *r)
{
	r->sum.cross_node = 3;
}

static void e_failed_cross(union kmt_rec *r)
{
	r->sum.sum_kind = KMT_SUM_FAILED;
	r->sum.cross_cpu = 1;
}

static void e_ts(union kmt_rec *r)
{
	r->sum.timestamp = CUT - 2;
}

static void e_nostack(union kmt_rec *r)
{
	r->sum.stack_id = 1;
	r->sum.flags = KMT_F_NO_STACK;
}

static void e_addr32(union kmt_rec *r)
{
	r->sum.call_site = 0x1c1000000ull;
}

static const struct sum_case sum_cases[] = {
	{ "sum kind", "sum record of kind 3, expected 1 (freed) or 2 (failed)", e_kind },
	{ "allocation type", "sum record of allocation type 3, expected 1 (kmalloc) or 2 "
	  "(cache_alloc)", e_type },
	{ "count 0", "sum record of no allocations (count 0)", e_count },
	{ "seq", "sum record with seq 5, expected 0", e_seq },
	{ "cross counts", "sum record of 2 allocations with 0 freed on another CPU and 3 on "
	  "another node: more than it holds", e_cross },
	{ "failed and cross-CPU", "sum record of failed allocations with 1 freed on another CPU",
	  e_failed_cross },
	{ "timestamp", "sum record at 4998 ns, expected the cut 5000 ns - 1", e_ts },
	{ "no stack and a stack", "sum record marked as having no stack names stack id 1",
	  e_nostack },
	{ "address above 32 bits", "sum address above 32 bits in a 32-bit trace (call_site "
	  "0x1c1000000, cache 0x0)", e_addr32 },
};

/* Reads path to its end: the records returned, and the error's message (or ""). */
static int read_to_end(const char *path, unsigned int *n, char *msg, size_t len)
{
	struct kmt_error err;
	struct kmt_file *f = kmt_file_open(path, 0, &err);
	union kmt_rec r;
	int rc;

	*n = 0;
	if (!f) {
		snprintf(msg, len, "%s", err.msg);
		return -2;
	}
	while ((rc = kmt_file_next(f, &r)) > 0)
		(*n)++;
	snprintf(msg, len, "%s", rc < 0 ? kmt_file_error(f)->msg : "");
	kmt_file_close(f);
	return rc;
}

static void test_sum_rejects(void)
{
	size_t i;

	for (i = 0; i < sizeof(sum_cases) / sizeof(sum_cases[0]); i++) {
		const struct sum_case *c = &sum_cases[i];
		char sub[32], want[1024], msg[1024];
		union kmt_rec r = sum_rec(0);
		unsigned int n;
		uint64_t off;
		struct gen *g;

		snprintf(sub, sizeof(sub), "sum%zu", i);
		g = ckpt_open(test_path(sub), 0, c->edit == e_addr32 ? 32 : 64, &off);
		if (!ok(g, "%s: generator opened", c->label))
			continue;
		c->edit(&r);
		gen_raw(g, 0, &r);
		gen_close(g);
		snprintf(sub, sizeof(sub), "sum%zu/cpu0.out", i);
		ok(read_to_end(test_path(sub), &n, msg, sizeof(msg)) == -1, "%s: an error",
		   c->label);
		is_u64(n, 4, "%s: after the 4 records before it", c->label);
		snprintf(want, sizeof(want), "%s: offset %llu: %s", test_path(sub),
			 (unsigned long long)off, c->msg);
		is_str(msg, want, "%s: its message and offset", c->label);
	}
}

/* A checkpoint's own rules: records before the cut, SUM records last, seq gaps allowed. */
static void test_ckpt_rules(void)
{
	union kmt_rec r = sum_rec(0), late = sum_rec(0);
	char want[1024], msg[1024];
	const struct kmt_file_header *h;
	struct kmt_error err;
	struct kmt_file *f;
	unsigned int n;
	uint64_t off;
	struct gen *g;

	g = ckpt_open(test_path("good"), 1, 64, &off);
	if (!ok(g, "good: generator opened"))
		return;
	r.sum.stack_id = 1;
	gen_raw(g, 0, &r);
	r = sum_rec(0);
	r.sum.sum_kind = KMT_SUM_FAILED;
	r.sum.bytes_alloc = 0;
	gen_raw(g, 0, &r);
	gen_close(g);
	f = kmt_file_open(test_path("good/cpu0.out"), 0, &err);
	if (ok(f, "good: a big-endian checkpoint opens")) {
		union kmt_rec got;
		unsigned int sums = 0;

		while (kmt_file_next(f, &got) > 0) {
			if (got.c.type != KMT_REC_SUM)
				continue;
			sums++;
			is_u64(got.sum.call_site, SITE, "good: sum %u: call site", sums);
			is_u64(got.sum.count, 2, "good: sum %u: count", sums);
		}
		is_u64(sums, 2, "good: both sums returned, sequence gap and all");
		is_str(kmt_file_error(f)->msg, "", "good: no error");
		is_u64(kmt_file_stats(f)->sums, 2, "good: stats count the sums");
		is_u64(kmt_file_stats(f)->records_timed, 6, "good: and every record");
		h = kmt_file_checkpoint(f);
		ok(h && h->cut_ns == CUT && h->segment == 2 && h->dropped_records == 40,
		   "good: kmt_file_checkpoint() has the cut, segment and dropped records");
		kmt_file_close(f);
	}

	/* A record after the sums, and one at the cut. */
	g = ckpt_open(test_path("after"), 0, 64, &off);
	if (!ok(g, "after: generator opened"))
		return;
	gen_raw(g, 0, &late);
	off = gen_offset(g, 0);
	gen_kfree(g, 0, CUT - 1, SITE, 0xc8000000u, 1);
	gen_close(g);
	read_to_end(test_path("after/cpu0.out"), &n, msg, sizeof(msg));
	snprintf(want, sizeof(want), "%s: offset %llu: kfree record after the checkpoint's sum "
		 "records: they come last", test_path("after/cpu0.out"), (unsigned long long)off);
	is_str(msg, want, "a record after the sums: its message and offset");

	g = ckpt_open(test_path("atcut"), 0, 64, &off);
	if (!ok(g, "at the cut: generator opened"))
		return;
	gen_kfree(g, 0, CUT, SITE, 0xc8000000u, 1);
	gen_close(g);
	read_to_end(test_path("atcut/cpu0.out"), &n, msg, sizeof(msg));
	snprintf(want, sizeof(want), "%s: offset %llu: kfree record at 5000 ns in a checkpoint cut "
		 "at 5000 ns: its records are before the cut", test_path("atcut/cpu0.out"),
		 (unsigned long long)off);
	is_str(msg, want, "a record at the cut: its message and offset");

	/* A SUM record in a records file, and a sequence gap there. */
	g = gen_open(test_path("plain"), 1, NULL);
	if (!ok(g, "plain: generator opened"))
		return;
	gen_kmalloc(g, 0, 300, SITE, 0xc8000000u, 24, 32, -1, 1);
	off = gen_offset(g, 0);
	gen_raw(g, 0, &late);
	gen_close(g);
	read_to_end(test_path("plain/cpu0.out"), &n, msg, sizeof(msg));
	snprintf(want, sizeof(want), "%s: offset %llu: sum record in a file that is not a "
		 "checkpoint (kind 0)", test_path("plain/cpu0.out"), (unsigned long long)off);
	is_str(msg, want, "a SUM record in a records file: its message and offset");
}

/* Header fields of 1.3: the kind, and what a checkpoint must have. */
static void test_header(void)
{
	static const struct {
		const char *label;
		size_t off, len;
		uint64_t val;
		const char *msg;
	} cases[] = {
		{ "kind 2", 17, 1, 2, "offset 17: unknown file kind 2 (this reader knows 0, records, "
		  "and 1, checkpoint)" },
		{ "checkpoint of minor 2", 6, 2, 2, "offset 6: checkpoint of format 1.2: checkpoints "
		  "came with 1.3" },
		{ "cut 0", 40, 8, 0, "offset 40: checkpoint with a cut at 0 ns" },
		{ "segment 0", 56, 4, 0, "offset 56: checkpoint of segment 0 (segments count from 1)" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char sub[32], want[1024], msg[1024];
		unsigned int n;
		uint64_t off;
		struct gen *g;

		snprintf(sub, sizeof(sub), "hdr%zu", i);
		g = ckpt_open(test_path(sub), 0, 64, &off);
		if (!ok(g, "%s: generator opened", cases[i].label))
			continue;
		gen_close(g);
		snprintf(sub, sizeof(sub), "hdr%zu/cpu0.out", i);
		/* Little-endian: the value's first len bytes. */
		gen_patch_file(test_path(sub), cases[i].off, &cases[i].val, cases[i].len);
		ok(read_to_end(test_path(sub), &n, msg, sizeof(msg)) == -2, "%s: refused at open",
		   cases[i].label);
		snprintf(want, sizeof(want), "%s: %s", test_path(sub), cases[i].msg);
		is_str(msg, want, "%s: its message", cases[i].label);
	}
}

/* script-free trace files: a CPU's segment of records seq..seq+1 at ts, ts+1. */
static int segment(const char *dir, unsigned int ncpus, uint32_t seq, uint64_t ts,
		   int big_endian)
{
	struct gen_opts o = { .big_endian = big_endian };
	struct gen *g = gen_open(dir, ncpus, &o);
	unsigned int c;

	if (!g)
		return -1;
	for (c = 0; c < ncpus; c++) {
		gen_set_seq(g, c, seq);
		gen_kmalloc(g, c, ts, SITE, 0xc9000000u + 0x100 * c, 24, 32, -1, 1);
		gen_kfree(g, c, ts + 1, SITE, 0xc9000000u + 0x100 * c, 1);
	}
	return gen_close(g);
}

/* A two-CPU rotated trace in dir: ckpt.000002, seg.000002, seg.000003, leftover seg.000001. */
static int rotated(const char *dir)
{
	char p[4096];
	struct gen_opts o = { .cut_ns = CUT, .segment = 2, .dropped_records = 9 };
	struct gen *g;

	mkdir(dir, 0700);
	snprintf(p, sizeof(p), "%s/ckpt.000002", dir);
	g = gen_open(p, 2, &o);
	if (!g)
		return -1;
	gen_cache_desc(g, 0, 100, CACHE, 96, 96, "c");
	gen_cache_desc(g, 1, 100, CACHE, 96, 96, "c");
	{
		union kmt_rec r0 = sum_rec(0), r1 = sum_rec(1);

		gen_raw(g, 0, &r0);
		gen_raw(g, 1, &r1);
	}
	if (gen_close(g))
		return -1;
	snprintf(p, sizeof(p), "%s/seg.000001", dir);
	if (segment(p, 2, 0, 1000, 0))
		return -1;
	snprintf(p, sizeof(p), "%s/seg.000002", dir);
	if (segment(p, 2, 10, 6000, 0))
		return -1;
	snprintf(p, sizeof(p), "%s/seg.000003", dir);
	return segment(p, 2, 12, 7000, 0);
}

static void test_inputs_and_merge(void)
{
	char *dir = (char *)test_path("rot"), *args[1] = { dir }, want[4096], p[4096];
	static const char *const order[] = {
		"ckpt.000002/cpu0.out", "seg.000002/cpu0.out", "seg.000003/cpu0.out",
		"ckpt.000002/cpu1.out", "seg.000002/cpu1.out", "seg.000003/cpu1.out",
	};
	struct kmt_inputs in;
	struct kmt_error err;
	struct kmt_merge *m;
	union kmt_rec r;
	uint64_t cut, dropped, last = 0;
	unsigned int n = 0, back = 0;
	size_t i, fi;
	char **paths;
	size_t np;

	if (!ok(rotated(dir) == 0, "rotated: written"))
		return;
	if (ok(kmt_inputs_resolve(args, 1, &in, &err) == 0, "rotated: inputs resolved")) {
		is_u64(in.n, 6, "rotated: six files, not the leftover segment's");
		is_u64(in.nstreams, 2, "rotated: two streams");
		ok(in.stream_len && in.stream_len[0] == 3 && in.stream_len[1] == 3,
		   "rotated: three files each");
		for (i = 0; i < in.n && i < 6; i++) {
			snprintf(want, sizeof(want), "%s/%s", dir, order[i]);
			is_str(in.paths[i], want, "rotated: file %zu in reading order", i);
		}
		is_u64(in.ckpt_segment, 2, "rotated: checkpoint 2");
		ok(in.first_segment == 2 && in.last_segment == 3, "rotated: segments 2 to 3");
		is_str(in.dir, dir, "rotated: the metadata is in the directory itself");
		m = kmt_merge_open_inputs(&in, 0, &err);
		if (ok(m, "rotated: merge opened")) {
			is_u64(kmt_merge_nfiles(m), 2, "rotated: one merge file a CPU");
			is_u64(kmt_merge_checkpoint(m, &cut, &dropped, &err), 1,
			       "rotated: a checkpoint");
			ok(cut == CUT && dropped == 18, "rotated: its cut and dropped records");
			while (kmt_merge_next(m, &r, &fi) > 0) {
				n++;
				back += r.c.timestamp < last;
				last = r.c.timestamp;
				if (fi != r.c.cpu)
					back++;
			}
			is_str(kmt_merge_error(m)->msg, "", "rotated: read to its end");
			is_u64(n, 2 * (1 + 1 + 2 + 2), "rotated: every record of the window");
			is_u64(back, 0, "rotated: in time order, each with its CPU's stream index");
			is_u64(kmt_file_stats(kmt_merge_file(m, 0))->files, 3,
			       "rotated: a stream's stats count its files");
			is_u64(kmt_file_stats(kmt_merge_file(m, 0))->file_bytes, 64 * (3 + 6),
			       "rotated: and their bytes, headers included");
			kmt_merge_close(m);
		}
		kmt_inputs_free(&in);
	}
	if (ok(kmt_find_cpu_files(dir, &paths, &np, &err) == 0, "find: rotated listed")) {
		snprintf(want, sizeof(want), "%s/seg.000002/cpu1.out", dir);
		ok(np == 6 && strcmp(paths[3], want) == 0,
		   "find: checkpoint then segments, each by CPU");
		kmt_free_paths(paths, np);
	}

	/* A gap in the window. */
	snprintf(p, sizeof(p), "%s/seg.000005", dir);
	segment(p, 2, 20, 9000, 0);
	ok(kmt_inputs_resolve(args, 1, &in, &err) < 0, "gap: refused");
	snprintf(want, sizeof(want), "%s: segment seg.000004 is missing: the trace's window runs "
		 "from ckpt.000002 to seg.000005", dir);
	is_str(err.msg, want, "gap: naming the segment");
	is_u64(err.cls, KMT_ERR_DATA, "gap: bad data");
	kmt_inputs_free(&in);

	/* A segment of the other byte order: not the stream's next file. */
	dir = (char *)test_path("mixed");
	args[0] = dir;
	if (!ok(rotated(dir) == 0, "mixed: written"))
		return;
	snprintf(p, sizeof(p), "%s/seg.000003", dir);
	gen_rm_rf(p);
	segment(p, 2, 12, 7000, 1);
	if (ok(kmt_inputs_resolve(args, 1, &in, &err) == 0, "mixed: inputs resolved")) {
		m = kmt_merge_open_inputs(&in, 0, &err);
		if (ok(m, "mixed: merge opened")) {
			while (kmt_merge_next(m, &r, NULL) > 0)
				;
			snprintf(want, sizeof(want), "%s/seg.000003/cpu0.out: offset 12: not the next "
				 "file of %s/seg.000002/cpu0.out's stream (CPU 0/0, big/little-endian, "
				 "word bits 64/64, page size 4096/4096, format 1/1)", dir, dir);
			is_str(kmt_merge_error(m)->msg, want, "mixed: the segment is refused");
			kmt_merge_close(m);
		}
		kmt_inputs_free(&in);
	}

	/* No checkpoint and a first segment that is not 1: what was dropped is not there. */
	dir = (char *)test_path("nockpt");
	args[0] = dir;
	mkdir(dir, 0700);
	snprintf(p, sizeof(p), "%s/seg.000002", dir);
	segment(p, 1, 0, 1000, 0);
	ok(kmt_inputs_resolve(args, 1, &in, &err) < 0, "no checkpoint: refused");
	snprintf(want, sizeof(want), "%s: rotated trace without a checkpoint: its first segment is "
		 "seg.000002, and no ckpt.000002 holds what was dropped before it", dir);
	is_str(err.msg, want, "no checkpoint: saying so");
	kmt_inputs_free(&in);
}

int main(void)
{
	if (!ok(test_dir_make("checkpoint"), "temporary directory"))
		return done_testing();
	test_sum_rejects();
	test_ckpt_rules();
	test_header();
	test_inputs_and_merge();
	ok(test_dir_remove() == 0, "temporary directory removed");
	return done_testing();
}
