// SPDX-License-Identifier: GPL-2.0-only
/*
 * mkseeds.c - writes the fuzz seed corpus (tests/fuzz/corpus): small
 * crafted traces that reach every record type, error kind and rejection
 * path, the first records of the trace directories given (kmemtrace-gen
 * output, real traces from the guest), and kallsyms/modules/meta samples,
 * each in the input layout of its target (fuzz_targets.h).
 *
 * Usage: mkseeds OUTDIR [[NAME=]TRACE_DIR...]
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gen.h"

/* Records kept from the start of each file of a given trace: seeds stay small. */
#define MAX_SEED_RECORDS	96

static const char *outdir;

static void die(const char *what)
{
	fprintf(stderr, "mkseeds: %s: %s\n", what, strerror(errno));
	exit(3);
}

static void put_one_seed(const char *target, const char *name, const void *a, size_t alen,
		     const void *b, size_t blen)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", outdir, target);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		die(path);
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
	fp = fopen(path, "wb");
	if (!fp || (alen && fwrite(a, alen, 1, fp) != 1) ||
	    (blen && fwrite(b, blen, 1, fp) != 1) || fclose(fp))
		die(path);
}

/* A reader seed is a fold seed too: both targets take one cpuN.out. */
static void put_seed(const char *target, const char *name, const void *a, size_t alen,
		     const void *b, size_t blen)
{
	put_one_seed(target, name, a, alen, b, blen);
	if (!strcmp(target, "reader"))
		put_one_seed("fold", name, a, alen, b, blen);
}

/* A file's first header + max_rec slots (and a partial tail only if keep_tail). */
static unsigned char *load(const char *path, size_t *len, size_t max_rec, int keep_tail)
{
	FILE *fp = fopen(path, "rb");
	size_t cap = 64 + max_rec * 64 + 64;
	unsigned char *buf = malloc(cap);

	if (!fp || !buf)
		die(path);
	*len = fread(buf, 1, cap, fp);
	fclose(fp);
	if (*len > 64 + max_rec * 64)
		*len = 64 + max_rec * 64;
	else if (!keep_tail && *len > 64)
		*len -= (*len - 64) % 64;
	return buf;
}

/* Every seed layout from one trace directory: cpu0 (and cpu1 when there). */
static void seeds_from_dir(const char *dir, const char *name, unsigned int opt, int keep_tail)
{
	char p0[4096], p1[4096], sname[256];
	unsigned char *f0, *f1 = NULL, *rep;
	size_t l0, l1 = 0, max = MAX_SEED_RECORDS;
	struct stat sb;

	snprintf(p0, sizeof(p0), "%s/cpu0.out", dir);
	snprintf(p1, sizeof(p1), "%s/cpu1.out", dir);
	f0 = load(p0, &l0, max, keep_tail);
	if (stat(p1, &sb) == 0)
		f1 = load(p1, &l1, max, keep_tail);
	put_seed("reader", name, f0, l0, NULL, 0);
	if (f1) {
		snprintf(sname, sizeof(sname), "%s-cpu1", name);
		put_seed("reader", sname, f1, l1, NULL, 0);
	}
	{
		unsigned char o = (unsigned char)opt;

		put_seed("check", name, &o, 1, f0, l0);
	}
	rep = malloc(3 + l0 + l1);
	if (!rep)
		die("malloc");
	rep[0] = (unsigned char)opt;
	rep[1] = f1 ? (unsigned char)(l0 & 0xff) : 0;
	rep[2] = f1 ? (unsigned char)(l0 >> 8) : 0;
	memcpy(rep + 3, f0, l0);
	if (f1)
		memcpy(rep + 3 + l0, f1, l1);
	put_seed("report", name, rep, 3 + l0 + l1, NULL, 0);
	free(rep);
	free(f0);
	free(f1);
}

static struct gen *open_gen(const char *dir, unsigned int ncpus, int be, unsigned int bits,
			    uint32_t first_seq, uint32_t page_size)
{
	struct gen_opts o = { .big_endian = be, .word_bits = bits, .first_seq = first_seq,
			      .page_size = page_size, .start_mono_ns = 1000,
			      .start_real_ns = 1700000000000000000ULL };
	struct gen *g = gen_open(dir, ncpus, &o);

	if (!g)
		exit(3);
	return g;
}

static void close_gen(struct gen *g)
{
	if (gen_close(g))
		die("gen_close");
}

#define CHK(x)	do { if ((x) < 0) die(#x); } while (0)

/* Every event type, every error kind of the report, lost records, on two CPUs. */
static void trace_all_kinds(const char *dir, int be, unsigned int bits)
{
	uint64_t text = bits == 32 ? 0xc1001000ULL : 0xffffffff81001000ULL;
	uint64_t heap = bits == 32 ? 0xd0000000ULL : 0xffff888100000000ULL;
	uint64_t cache = bits == 32 ? 0xcf000000ULL : 0xffff888003000000ULL;
	uint64_t t = 2000;
	struct gen *g = open_gen(dir, 2, be, bits, 0, 0);

	gen_set_cpu_node(g, 1, 1);
	CHK(gen_cache_desc(g, 0, t++, cache, 192, 192, "dentry"));
	CHK(gen_cache_desc(g, 1, t++, cache, 192, 192, "dentry"));
	CHK(gen_cache_desc(g, 0, t++, cache + 0x100, 64, 80,
			   "a_cache_name_longer_than_thirty_two_bytes"));
	CHK(gen_kmalloc(g, 0, t++, text, heap, 40, 64, KMT_NODE_ANY, 1));
	CHK(gen_kmalloc(g, 0, t++, text + 0x40, heap + 0x40, 100, 128, 1, 1));	/* xnode */
	CHK(gen_kmalloc(g, 1, t++, text + 0x80, 0, 4000, 4096, KMT_NODE_ANY, 2)); /* failed */
	CHK(gen_kmalloc(g, 1, t++, text + 0xc0, heap + 0x80, 64, 32, KMT_NODE_ANY, 2)); /* short */
	CHK(gen_cache_alloc(g, 0, t++, text + 0x100, heap + 0x1000, cache, 192, 192, 0, 3));
	CHK(gen_cache_alloc(g, 1, t++, text + 0x140, heap + 0x1100, cache, 192, 192, 1, 3));
	CHK(gen_cache_alloc(g, 0, t++, text + 0x180, heap + 0x1200, cache + 0x100, 64, 80,
			    KMT_NODE_ANY, 3));
	CHK(gen_page_alloc(g, 0, t++, text + 0x1c0, 0x1234, 2, KMT_NODE_ANY, 4));
	gen_set_flags(g, 1, KMT_F_SOFTIRQ);
	CHK(gen_kfree(g, 1, t++, text + 0x10000, heap, 1));		/* cross-CPU */
	gen_set_flags(g, 1, 0);
	CHK(gen_kfree(g, 0, t++, text + 0x10040, heap, 1));		/* double free */
	CHK(gen_kfree(g, 0, t++, text + 0x10080, heap + 0x1000, 3));	/* kfree of cache obj */
	CHK(gen_cache_free(g, 1, t++, text + 0x100c0, heap + 0x40, cache, 1)); /* of kmalloc */
	CHK(gen_cache_free(g, 1, t++, text + 0x10100, heap + 0x1100, cache + 0x100, 3)); /* mismatch */
	CHK(gen_kfree(g, 0, t++, text + 0x10140, heap - 0x100, 5));	/* pre-trace */
	CHK(gen_cache_free(g, 1, t++, text + 0x10180, heap - 0x200, cache, 5)); /* pre-trace */
	CHK(gen_lost(g, 0, t++, 3));
	CHK(gen_lost(g, 1, t++, 70000));
	CHK(gen_page_free(g, 1, t++, text + 0x101c0, 0x1234, 2, 4));
	CHK(gen_page_free(g, 1, t++, text + 0x101c0, 0x9999, 0, 4));	/* pre-trace page */
	gen_set_flags(g, 0, KMT_F_HARDIRQ | KMT_F_CLAMPED);
	CHK(gen_kmalloc(g, 0, t, text + 0x200, heap + 0x2000, 8, 8, KMT_NODE_ANY, 6));
	CHK(gen_kmalloc(g, 1, t, text + 0x200, heap + 0x2040, 8, 8, KMT_NODE_ANY, 6)); /* tie */
	close_gen(g);
}

/*
 * Many short-lived objects, addresses reused, and double frees at many call
 * site pairs: the analysis's tables grow, shrink and wrap (fuzz builds have
 * tiny ones) and its error table grows.
 */
static void trace_churn(const char *dir)
{
	uint64_t text = 0xffffffff81001000ULL, heap = 0xffff888100000000ULL, t = 100;
	struct gen *g = open_gen(dir, 2, 0, 64, 0, 0);
	unsigned int i;

	for (i = 0; i < 40; i++)
		CHK(gen_kmalloc(g, i & 1, t++, text + 0x40 * (i % 5), heap + 0x40 * (i % 24),
				32, 32, KMT_NODE_ANY, 1));
	/* kmalloc objects freed with kmem_cache_free() at 24 sites: 24 distinct errors. */
	for (i = 0; i < 24; i++)
		CHK(gen_cache_free(g, 0, t++, text + 0x20000 + 0x40 * i, heap + 0x40 * i,
				   0xffff888003000000ULL, 1));
	for (i = 0; i < 40; i++)
		CHK(gen_kfree(g, (i + 1) & 1, t++, text + 0x10000 + 0x40 * (i % 7),
			      heap + 0x40 * (i % 24), 1));
	close_gen(g);
}

/* Seq wrapping at 2^32, with lost markers across the wrap. */
static void trace_wrap(const char *dir)
{
	struct gen *g = open_gen(dir, 2, 0, 64, 0xfffffffaU, 0);
	uint64_t t = 10, i;

	for (i = 0; i < 12; i++) {
		unsigned int cpu = (unsigned int)(i & 1);

		CHK(gen_kmalloc(g, cpu, t++, 0xffffffff81001000ULL + 0x40 * (i % 3),
				0xffff888100000000ULL + 0x40 * i, 16, 16, KMT_NODE_ANY, 1));
		if (i == 4 || i == 7)
			CHK(gen_lost(g, cpu, t++, i));
	}
	close_gen(g);
}

/* Records of types this reader does not know, between known ones. */
static void trace_unknown(const char *dir)
{
	struct gen *g = open_gen(dir, 1, 0, 64, 0, 65536);
	union kmt_rec r;
	uint64_t t = 5;

	CHK(gen_kmalloc(g, 0, t++, 0xffffffff81001000ULL, 0xffff888100000000ULL, 10, 16,
			KMT_NODE_ANY, 1));
	memset(&r, 0xa5, sizeof(r));
	r.c.type = 10;
	r.c.cpu = 0;
	r.c.seq = gen_next_seq(g, 0);
	r.c.timestamp = t++;
	CHK(gen_raw(g, 0, &r));
	gen_set_seq(g, 0, gen_next_seq(g, 0) + 1);	/* the unknown one took a seq */
	r.c.type = 255;
	CHK(gen_raw(g, 0, &r));
	CHK(gen_kfree(g, 0, t++, 0xffffffff81002000ULL, 0xffff888100000000ULL, 1));
	close_gen(g);
}

/*
 * Kernel stacks (1.2) on two CPUs: shared and per-CPU stacks, an id given a
 * new stack, a stack cut by a LOST marker and continued by an orphan, a
 * file starting inside a stack, allocations marked without a stack or
 * naming an unknown id, frees of objects allocated with stacks.
 */
static void trace_stacks(const char *dir, int be, unsigned int bits)
{
	uint64_t text = bits == 32 ? 0xc1001000ULL : 0xffffffff81001000ULL;
	uint64_t heap = bits == 32 ? 0xd0000000ULL : 0xffff888100000000ULL;
	struct gen *g = open_gen(dir, 2, be, bits, 0, 0);
	uint64_t fr[KMT_STACK_MAX_DEPTH], t = 300;
	union kmt_rec r;
	unsigned int i, cpu;

	for (i = 0; i < KMT_STACK_MAX_DEPTH; i++)
		fr[i] = text + 0x40 * i + 7;
	/* CPU 1 begins inside a stack: its last slot. */
	memset(&r, 0, sizeof(r));
	r.stack.type = KMT_REC_STACK;
	r.stack.cpu = 1;
	r.stack.seq = gen_next_seq(g, 1);
	r.stack.timestamp = t;
	r.stack.stack_id = 9;
	r.stack.depth = 7;
	r.stack.first = 5;
	r.stack.nframes = 2;
	r.stack.frames[0] = fr[5];
	r.stack.frames[1] = fr[6];
	CHK(gen_raw(g, 1, &r));
	gen_set_seq(g, 1, r.stack.seq + 1);
	for (cpu = 0; cpu < 2; cpu++) {
		CHK(gen_stack(g, cpu, t++, 1, fr, 3));
		CHK(gen_stack(g, cpu, t++, 2, fr + 1, 12));
	}
	for (i = 0; i < 12; i++) {
		struct kmt_event ev = { .type = i & 1 ? KMT_REC_CACHE_ALLOC : KMT_REC_KMALLOC,
					.timestamp = t++, .call_site = fr[i % 2],
					.ptr = i == 5 ? 0 : heap + 0x40 * i, .bytes_req = 24,
					.bytes_alloc = 32, .node = KMT_NODE_ANY, .pid = 1,
					.cache_id = i & 1 ? heap - 0x1000 : 0,
					.stack_id = (uint16_t)(1 + i % 2) };

		if (i == 7) {
			ev.stack_id = 0;
			ev.flags = KMT_F_NO_STACK;
		} else if (i == 9) {
			ev.stack_id = 77;
		}
		CHK(gen_event(g, i % 2, &ev));
	}
	/* Id 1 of CPU 0 becomes another stack; a stack cut short, then an orphan. */
	CHK(gen_stack(g, 0, t++, 1, fr + 20, KMT_STACK_MAX_DEPTH - 20));
	CHK(gen_kmalloc(g, 0, t++, fr[20], heap + 0x1000, 8, 8, KMT_NODE_ANY, 1));
	CHK(gen_stack(g, 1, t, 3, fr, 10));
	CHK(gen_lost(g, 1, t++, 1));
	CHK(gen_kfree(g, 0, t++, text + 0x10000, heap, 1));
	CHK(gen_kfree(g, 1, t++, text + 0x10000, heap + 0x40, 1));
	CHK(gen_kfree(g, 0, t++, text + 0x10000, heap + 0x80, 1));
	close_gen(g);
}

/* A stack slot broken one way after a good stack: each a reader rejection. */
static void trace_bad_stack(const char *dir, const char *what)
{
	struct gen *g = open_gen(dir, 1, 0, 64, 0, 0);
	uint64_t fr[8] = { 0xffffffff81001007ULL, 0xffffffff81001047ULL, 0xffffffff81001087ULL,
			   0xffffffff810010c7ULL, 0xffffffff81001107ULL, 0xffffffff81001147ULL };
	union kmt_rec r;

	CHK(gen_stack(g, 0, 10, 1, fr, 2));
	CHK(gen_kmalloc(g, 0, 11, fr[0], 0xffff888100000000ULL, 8, 8, KMT_NODE_ANY, 1));
	memset(&r, 0, sizeof(r));
	r.stack.type = KMT_REC_STACK;
	r.stack.seq = gen_next_seq(g, 0);
	r.stack.timestamp = 12;
	r.stack.stack_id = 2;
	r.stack.depth = 6;
	r.stack.nframes = 5;
	memcpy(r.stack.frames, fr, 5 * sizeof(fr[0]));
	if (strcmp(what, "depth") == 0)
		r.stack.depth = 65;
	else if (strcmp(what, "short") == 0)
		r.stack.nframes = 4, r.stack.frames[4] = 0;
	else if (strcmp(what, "order") == 0)
		r.stack = (struct kmt_stack){ .type = KMT_REC_STACK, .seq = r.stack.seq, .timestamp = 12,
					      .stack_id = 2, .depth = 6, .first = 5, .nframes = 1,
					      .frames = { fr[5] } };
	CHK(gen_raw(g, 0, &r));
	gen_set_seq(g, 0, r.stack.seq + 1);
	if (strcmp(what, "inside") == 0)
		CHK(gen_kmalloc(g, 0, 13, fr[0], 0xffff888100000040ULL, 8, 8, KMT_NODE_ANY, 1));
	close_gen(g);
}

/* One good record, then one bad thing: each a reader rejection path. */
static void trace_bad(const char *dir, const char *what, int be, unsigned int bits)
{
	struct gen *g = open_gen(dir, 1, be, bits, 100, 0);
	uint64_t text = bits == 32 ? 0xc1001000ULL : 0xffffffff81001000ULL;
	uint64_t heap = bits == 32 ? 0xd0000000ULL : 0xffff888100000000ULL;
	union kmt_rec r;

	CHK(gen_kmalloc(g, 0, 50, text, heap, 10, 16, KMT_NODE_ANY, 1));
	memset(&r, 0, sizeof(r));
	r.ev.type = KMT_REC_KFREE;
	r.ev.cpu = 0;
	r.ev.seq = gen_next_seq(g, 0);
	r.ev.timestamp = 60;
	r.ev.call_site = text + 0x100;
	r.ev.ptr = heap;
	r.ev.node = KMT_NODE_ANY;
	if (strcmp(what, "seq-gap") == 0) {
		r.ev.seq += 5;
	} else if (strcmp(what, "ts-back") == 0) {
		r.ev.timestamp = 40;
	} else if (strcmp(what, "cpu") == 0) {
		r.ev.cpu = 3;
	} else if (strcmp(what, "zero") == 0) {
		memset(&r, 0, sizeof(r));
	} else if (strcmp(what, "name") == 0) {
		memset(&r, 0, sizeof(r));
		r.cache.type = KMT_REC_CACHE_DESC;
		r.cache.seq = gen_next_seq(g, 0);
		r.cache.timestamp = 60;
		r.cache.cache_id = heap;
		memset(r.cache.name, 'x', sizeof(r.cache.name));
	} else if (strcmp(what, "addr32") == 0) {
		r.ev.ptr = 0x100000000ULL;
	} else if (strcmp(what, "lost") == 0) {
		memset(&r, 0, sizeof(r));
		r.lost.type = KMT_REC_LOST;
		r.lost.seq = gen_next_seq(g, 0) + 4;
		r.lost.count = 3;
		r.lost.timestamp = 60;
	}
	if (strcmp(what, "trunc") == 0) {
		static const char tail[17] = "partial record..";

		CHK(gen_kfree(g, 0, 60, text + 0x100, heap, 1));
		CHK(gen_raw_bytes(g, 0, tail, sizeof(tail)));
	} else {
		CHK(gen_raw(g, 0, &r));
	}
	close_gen(g);
}

/* Header fields a newer minor may set: accepted. */
static void trace_minor(const char *dir)
{
	struct gen *g = open_gen(dir, 1, 1, 64, 0, 0);
	static const unsigned char minor_be[2] = { 0, 7 }, reserved[3] = { 1, 2, 3 };
	char path[4096];

	CHK(gen_kmalloc(g, 0, 50, 0xffffffff81001000ULL, 0xffff888100000000ULL, 10, 16,
			KMT_NODE_ANY, 1));
	snprintf(path, sizeof(path), "%s", gen_path(g, 0));
	close_gen(g);
	CHK(gen_patch_file(path, 6, minor_be, sizeof(minor_be)));
	CHK(gen_patch_file(path, 17, reserved, sizeof(reserved)));
}

static void crafted(void)
{
	static const struct {
		const char *name, *bad;
		int be;
		unsigned int bits, opt;
	} bad[] = {
		{ "bad-seq-gap", "seq-gap", 0, 64, 0x00 }, { "bad-ts-back", "ts-back", 1, 64, 0x02 },
		{ "bad-cpu", "cpu", 0, 32, 0x04 }, { "bad-zero-slot", "zero", 0, 64, 0x06 },
		{ "bad-name", "name", 1, 32, 0x01 }, { "bad-addr32", "addr32", 0, 32, 0x03 },
		{ "bad-lost", "lost", 0, 64, 0x05 }, { "trunc-tail", "trunc", 1, 64, 0x01 },
	};
	char *dir;
	size_t i;

	dir = gen_mkdtemp("seeds");
	if (!dir)
		exit(3);
#define SEED(fn, name, opt, tail)	do {	\
		char d[4096];			\
		snprintf(d, sizeof(d), "%s/%s", dir, name); \
		fn;				\
		seeds_from_dir(d, name, opt, tail); \
	} while (0)
	SEED(trace_all_kinds(d, 0, 64), "kinds-le64", 0x00, 0);
	SEED(trace_all_kinds(d, 1, 64), "kinds-be64", 0x12, 0);
	SEED(trace_all_kinds(d, 1, 32), "kinds-be32", 0x24, 0);
	SEED(trace_all_kinds(d, 0, 32), "kinds-le32", 0x46, 0);
	SEED(trace_all_kinds(d, 0, 64), "kinds-sorted", 0x8e, 0);
	SEED(trace_wrap(d), "seq-wrap", 0x30, 0);
	SEED(trace_churn(d), "churn", 0x02, 0);
	SEED(trace_unknown(d), "unknown-types", 0x08, 0);
	SEED(trace_minor(d), "newer-minor", 0x60, 0);
	SEED(trace_stacks(d, 0, 64), "stacks-le64", 0x00, 0);
	SEED(trace_stacks(d, 1, 32), "stacks-be32", 0x9a, 0);
	SEED(trace_stacks(d, 1, 64), "stacks-be64", 0x31, 0);
	SEED(trace_bad_stack(d, "depth"), "bad-stack-depth", 0x01, 1);
	SEED(trace_bad_stack(d, "short"), "bad-stack-short", 0x02, 1);
	SEED(trace_bad_stack(d, "order"), "bad-stack-order", 0x04, 1);
	SEED(trace_bad_stack(d, "inside"), "bad-stack-inside", 0x08, 1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		SEED(trace_bad(d, bad[i].bad, bad[i].be, bad[i].bits), bad[i].name, bad[i].opt, 1);
#undef SEED
	gen_rm_rf(dir);
	free(dir);
}

/* Text samples for the symbol and metadata parsers. */
static void syms(void)
{
	static const char ks[] =
		"0000000000000000 A fixed_percpu_data\n"
		"ffffffff81000000 T _stext\n"
		"ffffffff81000000 T startup_64\n"
		"ffffffff81000070 t __pfx_verify_cpu\n"
		"ffffffff81000080 t verify_cpu\n"
		"ffffffff81001000 W weak_fn\n"
		"ffffffff81001100 w weak_local\n"
		"ffffffff81002000 T __kmalloc\n"
		"ffffffff81002400 T kfree\n"
		"ffffffff81003000 D some_data\n"
		"ffffffff81004000 b some_bss\n"
		"ffffffffc0a01000 t oracle_alloc\t[kmemtrace_oracle]\n"
		"ffffffffc0a01080 t oracle_free\t[kmemtrace_oracle]\n"
		"ffffffffc0a03000 d oracle_data\t[kmemtrace_oracle]\n"
		"ffffffffc0b00000 T ext4_fn\t[ext4]\n";
	static const char mods[] =
		"kmemtrace_oracle ffffffffc0a01000 ffffffffc0a00000 16384\n"
		"ext4 ffffffffc0b00000 ffffffffc0aff000 1048576\n"
		"nosyms_mod 0 ffffffffc0c00000 4096\n";
	static const char meta[] =
		"# kmemtrace.meta written by kmemtraced\n"
		"meta_version 1\n"
		"abi_version 1.0\n"
		"kernel_release 6.1.0-56-amd64\n"
		"kernel_version #1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1\n"
		"machine x86_64\n"
		"hostname guest\n"
		"page_size 4096\n"
		"word_bits 64\n"
		"byte_order little\n"
		"clock monotonic\n"
		"cpu_node 0 0\n"
		"cpu_node 1 0\n"
		"param buf_size 262144\n"
		"start_mono_ns 123456789\n"
		"start_real_ns 1700000000123456789\n"
		"end_mono_ns 223456789\n"
		"end_real_ns 1700000000223456789\n"
		"overruns_start 0\n"
		"overruns_end 12\n"
		"command sh -c 'ls /'\n"
		"command_status 0\n";
	/* A tracepoint_formats cut to one event, its masks as 6.1 and 6.12 write them. */
	static const char formats[] =
		"# kmemtrace: the traced kernel's tracepoint formats\n"
		"event kmem/kmalloc\n"
		"name: kmalloc\n"
		"ID: 552\n"
		"format:\n"
		"\tfield:unsigned long gfp_flags;\toffset:40;\tsize:8;\tsigned:0;\n"
		"\n"
		"print fmt: \"gfp_flags=%s\", (REC->gfp_flags) ? __print_flags(REC->gfp_flags, \"|\", "
		"{( unsigned long)((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u) | (( gfp_t)0x80u)), "
		"\"GFP_KERNEL\"}, {( unsigned long)(( gfp_t)((((1UL))) << (8))), \"__GFP_ZERO\"}, "
		"{( unsigned long)(((( gfp_t)(0x400u|0x800u)) & ~(( gfp_t)0x400u))), \"GFP_NOWAIT\"}, "
		"{ 0, ((void *)0) } ) : \"none\", REC->node\n"
		"event kmem/kfree\n"
		"print fmt: \"call_site=%pS ptr=%p\", (void *)REC->call_site, REC->ptr\n";
	static const char sep[] = "====\n";
	static const char crlf[] =
		"ffffffff81000000 T _stext\r\n"
		"ffffffff81000100\tT\ttabbed\r\n"
		"ffffffff81000200 t mod_fn [a_mod]\r\n";
	char buf[8192];
	int n;

	put_seed("syms", "kallsyms-only", ks, strlen(ks), NULL, 0);
	n = snprintf(buf, sizeof(buf), "%s%s%s", ks, sep, mods);
	put_seed("syms", "kallsyms-modules", buf, (size_t)n, NULL, 0);
	n = snprintf(buf, sizeof(buf), "%s%s%s%s%s", ks, sep, mods, sep, meta);
	put_seed("syms", "kallsyms-modules-meta", buf, (size_t)n, NULL, 0);
	n = snprintf(buf, sizeof(buf), "%s%s%s%s", crlf, sep, sep, meta);
	put_seed("syms", "crlf-empty-modules", buf, (size_t)n, NULL, 0);
	n = snprintf(buf, sizeof(buf), "%s%s%s%s%s%s%s", ks, sep, mods, sep, meta, sep, formats);
	put_seed("syms", "kallsyms-modules-meta-formats", buf, (size_t)n, NULL, 0);
	/* Modules loaded (+) and unloaded (-) during the trace, their symbols in a fifth part. */
	n = snprintf(buf, sizeof(buf), "%s%s%s%s%s%s%s%s%s", ks, sep, mods,
		     "# loaded (+) and unloaded (-) during the trace\n"
		     "-kmemtrace_oracle ffffffffc0a01000 ffffffffc0a00000 16384\n"
		     "+kmemtrace_oracle ffffffffc0d01000 ffffffffc0d00000 16384\n"
		     "+late ffffffffc0a00000 ffffffffc0a00000 8192\n", sep, meta, sep, sep,
		     "ffffffffc0d01000 t oracle_alloc\t[kmemtrace_oracle]\n"
		     "ffffffffc0a00100 t late_fn\t[late]\n");
	put_seed("syms", "modules-loaded-during", buf, (size_t)n, NULL, 0);
	put_seed("syms", "no-root-zeros",
		 "0000000000000000 T _stext\n0000000000000000 t x [m]\n", 51, NULL, 0);
}

/* A real kallsyms is megabytes: its first text symbols and some of each module's. */
static void syms_from_dir(const char *dir, const char *name)
{
	char path[4096], line[1024], *buf;
	size_t len = 0, cap = 32768, core = 0, modl = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	fp = fopen(path, "r");
	if (!fp)
		return;
	buf = malloc(cap);
	if (!buf)
		die("malloc");
	while (fgets(line, sizeof(line), fp) && len + sizeof(line) < cap / 2) {
		int is_mod = strchr(line, '[') != NULL;

		if ((is_mod ? modl++ : core++) < 40) {
			memcpy(buf + len, line, strlen(line));
			len += strlen(line);
		}
	}
	fclose(fp);
	memcpy(buf + len, "====\n", 5);
	len += 5;
	snprintf(path, sizeof(path), "%s/modules", dir);
	fp = fopen(path, "r");
	while (fp && fgets(line, sizeof(line), fp) && len + sizeof(line) < cap - 2048) {
		memcpy(buf + len, line, strlen(line));
		len += strlen(line);
	}
	if (fp)
		fclose(fp);
	memcpy(buf + len, "====\n", 5);
	len += 5;
	snprintf(path, sizeof(path), "%s/kmemtrace.meta", dir);
	fp = fopen(path, "r");
	while (fp && fgets(line, sizeof(line), fp) && len + sizeof(line) < cap) {
		memcpy(buf + len, line, strlen(line));
		len += strlen(line);
	}
	if (fp)
		fclose(fp);
	put_seed("syms", name, buf, len, NULL, 0);
	free(buf);
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: mkseeds OUTDIR [[NAME=]TRACE_DIR...]\n");
		return 1;
	}
	outdir = argv[1];
	if (mkdir(outdir, 0755) < 0 && errno != EEXIST)
		die(outdir);
	crafted();
	syms();
	for (i = 2; i < argc; i++) {
		char name[256];
		const char *dir = argv[i], *eq = strchr(dir, '='), *base;
		size_t l;

		/* NAME=DIR names the seeds; a bare DIR gives them its base name. */
		if (eq) {
			snprintf(name, sizeof(name), "%.*s", (int)(eq - dir), dir);
			dir = eq + 1;
		} else {
			base = strrchr(dir, '/');
			snprintf(name, sizeof(name), "dir-%s", base && base[1] ? base + 1 : dir);
		}
		l = strlen(name);
		while (l && name[l - 1] == '/')
			name[--l] = '\0';
		seeds_from_dir(dir, name, (unsigned int)(i * 0x15) & 0xff, 0);
		syms_from_dir(dir, name);
	}
	return 0;
}
