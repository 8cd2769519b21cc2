// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_gen.c - checks the trace generator's own tallies, since other tests
 * take their expected values from them: a hand-made scenario with every
 * kind of event, its totals derived here from the same constants, and the
 * files read back through the reader.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "kmt_reader.h"
#include "tap.h"
#include "testlib.h"

#define S1	0xffffffff81001000ULL
#define S2	0xffffffff81002000ULL
#define S3	0xffffffff81003000ULL
#define SP	0xffffffff81004000ULL
#define SF	0xffffffff81009000ULL
#define A	0xffff888000001000ULL
#define B	0xffff888000002000ULL
#define D	0xffff888000004000ULL
#define X	0xffff888000009000ULL
#define CACHE	0xffff888003000000ULL
#define PFN	0x12345ULL

int main(void)
{
	const struct gen_totals *t;
	const struct gen_callsite *s;
	char *top = test_dir_make("gen");
	struct gen_opts o = { .page_size = 4096 };
	uint64_t by_type[KMT_REC_TYPE_MAX + 1] = { 0 }, records = 0;
	struct kmt_error err;
	struct gen *g;
	unsigned int cpu;
	char path[4200];

	if (!ok(top, "temporary directory"))
		return done_testing();
	g = gen_open(top, 2, &o);
	if (!ok(g, "generator opened"))
		return done_testing();
	gen_set_cpu_node(g, 1, 1);
	ok(gen_cache_desc(g, 0, 1, CACHE, 24, 32, "test_cache") == 0, "cache desc on cpu0");
	ok(gen_kmalloc(g, 0, 2, S1, A, 10, 16, 1, 100) == 0, "kmalloc A, node 1 from node 0");
	ok(gen_cache_alloc(g, 0, 3, S2, B, CACHE, 24, 32, -1, 100) == 0, "cache alloc B");
	ok(gen_kfree(g, 1, 4, SF, A, 101) == 0, "kfree A on the other CPU");
	ok(gen_kmalloc(g, 1, 5, S1, 0, 100, 128, 0, 101) == 0, "failed kmalloc, node 0 from node 1");
	ok(gen_kfree(g, 1, 6, SF, X, 101) == 0, "kfree of X, never allocated");
	ok(gen_cache_free(g, 0, 7, SF, B, CACHE, 100) == 0, "cache free B on its CPU");
	ok(gen_kmalloc(g, 0, 8, S3, D, 200, 256, -1, 100) == 0, "kmalloc D, kept");
	ok(gen_page_alloc(g, 1, 9, SP, PFN, 2, 1, 101) == 0, "page alloc order 2");
	ok(gen_page_free(g, 1, 10, SF, PFN, 2, 101) == 0, "page free");
	ok(gen_kfree(g, 0, 11, SF, A, 100) == 0, "kfree A again");
	is_u64(gen_next_seq(g, 1), 5, "cpu1 took 5 seqs");
	ok(gen_lost(g, 1, 12, 3) == 0, "3 lost on cpu1");
	is_u64(gen_next_seq(g, 1), 8, "lost advanced cpu1's seq by 3");
	ok(gen_flush(g) == 0, "flushed");

	t = gen_totals(g);
	is_u64(t->allocs, 5, "allocs: A, B, failed, D, page");
	is_u64(t->failed_allocs, 1, "failed allocs");
	is_u64(t->bytes_req, 10 + 24 + 200 + (4096 << 2), "bytes requested, failed excluded");
	is_u64(t->bytes_alloc, 16 + 32 + 256 + (4096 << 2), "bytes allocated, failed excluded");
	is_u64(t->frees, 5, "frees");
	is_u64(t->tracked_frees, 3, "tracked frees: A, B, page");
	is_u64(t->untracked_frees, 2, "untracked frees: X and A again");
	is_u64(t->bytes_freed, 16 + 32 + (4096 << 2), "bytes freed");
	is_u64(t->cross_cpu_frees, 1, "cross-CPU frees: A");
	is_u64(t->cross_node_allocs, 2, "cross-node allocs: A and the failed one");
	is_u64(t->outstanding, 1, "outstanding: D");
	is_u64(t->outstanding_bytes, 256, "outstanding bytes");
	is_u64(t->lost_markers, 1, "lost markers");
	is_u64(t->lost, 3, "lost records");
	is_u64(t->cache_descs, 1, "cache descs");
	is_u64(t->records, 12, "records");
	is_u64(gen_ncallsites(g), 4, "4 allocating call sites");

	s = gen_callsite_find(g, S1);
	if (ok(s, "call site S1 known")) {
		is_u64(s->hits, 2, "S1 hits");
		is_u64(s->failed, 1, "S1 failed");
		is_u64(s->bytes_req, 10, "S1 bytes req");
		is_u64(s->bytes_alloc, 16, "S1 bytes alloc");
		is_u64(s->frees, 1, "S1 frees");
		is_u64(s->cross_cpu_frees, 1, "S1 cross-CPU frees");
		is_u64(s->outstanding, 0, "S1 outstanding");
	}
	s = gen_callsite_find(g, S3);
	if (ok(s, "call site S3 known")) {
		is_u64(s->outstanding, 1, "S3 outstanding");
		is_u64(s->outstanding_bytes, 256, "S3 outstanding bytes");
		is_u64(s->frees, 0, "S3 frees");
	}
	ok(gen_callsite_find(g, SF) == NULL, "free call sites are not allocation sites");
	is_u64(gen_callsite_at(g, 0)->addr, S1, "call sites in order of appearance");

	/* What the reader finds in the files matches what the generator counted. */
	for (cpu = 0; cpu < 2; cpu++) {
		struct kmt_file *f;
		union kmt_rec r;
		int rc;

		snprintf(path, sizeof(path), "%s/cpu%u.out", top, cpu);
		f = kmt_file_open(path, 0, &err);
		if (!ok(f, "cpu%u read back", cpu)) {
			diag("%s", err.msg);
			continue;
		}
		while ((rc = kmt_file_next(f, &r)) > 0)
			by_type[r.c.type]++;
		if (!is_u64((uint64_t)rc, 0, "cpu%u valid", cpu))
			diag("%s", kmt_file_error(f)->msg);
		records += kmt_file_stats(f)->records;
		kmt_file_close(f);
	}
	is_u64(records, t->records, "reader's records == generator's");
	for (cpu = 1; cpu <= KMT_REC_TYPE_MAX; cpu++)
		is_u64(by_type[cpu], t->by_type[cpu], "type %s: reader == generator",
		       kmt_rec_type_name(cpu));

	ok(gen_close(g) == 0, "closed");
	ok(test_dir_remove() == 0, "temporary directory removed");
	return done_testing();
}
