// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_stacks.c - unit tests of stack records (KMT_REC_STACK): round trips
 * in both byte orders and word sizes, every rejection of a bad slot or
 * sequence with its offset, stacks cut by LOST markers or begun before the
 * file, and kmt_stacks joining, interning and replacing stacks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "kmt_exit.h"
#include "kmt_reader.h"
#include "kmt_stacks.h"
#include "tap.h"
#include "testlib.h"

/* Frames of a stack of depth d numbered n, innermost first, within 32 bits. */
static void frames_of(uint64_t *f, unsigned int d, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < d; i++)
		f[i] = 0xc1000000u + n * 0x10000u + i * 0x40u + 3u;
}

/* Reads a whole file, feeding its stacks; returns records read or -1 at an error. */
static long read_stacks(const char *path, struct kmt_stacks *s, struct kmt_error *err,
			struct kmt_file_stats *st, uint16_t *ids, uint32_t *found, size_t *nev)
{
	struct kmt_file *f = kmt_file_open(path, 0, err);
	union kmt_rec r;
	long n = 0;
	int rc;

	if (!f)
		return -1;
	while ((rc = kmt_file_next(f, &r)) > 0) {
		n++;
		if (r.c.type == KMT_REC_STACK && s && kmt_stacks_feed(s, &r.stack))
			rc = -2;
		if (r.c.type == KMT_REC_KMALLOC && s && nev) {
			ids[*nev] = r.ev.stack_id;
			found[(*nev)++] = kmt_stacks_lookup(s, r.ev.cpu, r.ev.stack_id);
		}
	}
	*st = *kmt_file_stats(f);
	if (rc < 0)
		*err = *kmt_file_error(f);
	kmt_file_close(f);
	return rc < 0 ? -1 : n;
}

/* Stacks of depth 1, 5, 6, 13 and 64 read back the same in every byte order and word size. */
static void test_round_trip(int be, unsigned int bits)
{
	static const unsigned int depths[] = { 1, 5, 6, 13, KMT_STACK_MAX_DEPTH };
	struct gen_opts o = { .big_endian = be, .word_bits = bits };
	uint64_t fr[KMT_STACK_MAX_DEPTH];
	struct kmt_file_stats st;
	struct kmt_error err;
	struct kmt_stacks *s;
	struct gen *g;
	char sub[64];
	uint16_t ids[16];
	uint32_t found[16];
	size_t nev = 0, i, slots = 0;
	long n;

	snprintf(sub, sizeof(sub), "rt-%d-%u", be, bits);
	g = gen_open(test_path(sub), 1, &o);
	if (!ok(g, "%s: generator", sub))
		return;
	for (i = 0; i < 5; i++) {
		struct kmt_event ev = { .type = KMT_REC_KMALLOC, .timestamp = 10 + i,
					.call_site = 0xc1000003u, .ptr = 0xd0000000u + i * 64,
					.bytes_req = 8, .bytes_alloc = 8, .node = -1,
					.stack_id = (uint16_t)(i + 1) };

		frames_of(fr, depths[i], (unsigned int)i);
		gen_stack(g, 0, 10 + i, (uint16_t)(i + 1), fr, depths[i]);
		slots += (depths[i] + 4) / 5;
		gen_event(g, 0, &ev);
	}
	ok(gen_close(g) == 0, "%s: written", sub);
	s = kmt_stacks_new();
	snprintf(sub + strlen(sub), sizeof(sub) - strlen(sub), "/cpu0.out");
	n = read_stacks(test_path(sub), s, &err, &st, ids, found, &nev);
	if (!ok(n >= 0, "%s: read without error", sub))
		diag("%s", err.msg);
	is_u64(st.stack_slots, slots, "%s: stack slots counted", sub);
	is_u64(st.stacks, 5, "%s: 5 whole stacks", sub);
	is_u64(st.stacks_incomplete, 0, "%s: none incomplete", sub);
	is_u64(kmt_stacks_count(s), 5, "%s: 5 distinct stacks", sub);
	is_u64(nev, 5, "%s: 5 events", sub);
	for (i = 0; i < nev && i < 5; i++) {
		unsigned int d = 0;
		const uint64_t *got = kmt_stacks_frames(s, found[i], &d);

		frames_of(fr, depths[i], (unsigned int)i);
		is_u64(d, depths[i], "%s: event %zu: depth", sub, i);
		ok(got && d == depths[i] && memcmp(got, fr, d * sizeof(*fr)) == 0,
		   "%s: event %zu: frames as written", sub, i);
	}
	kmt_stacks_free(s);
}

/* One bad slot or sequence after a good prefix; the message and offset. */
struct bad_stack {
	const char *label, *msg;
	unsigned int bits;
	/* Writes what comes after the good prefix; returns the offset of the bad slot. */
	uint64_t (*write)(struct gen *g);
};

static union kmt_rec slot(uint16_t id, uint8_t depth, uint8_t first, uint8_t n)
{
	union kmt_rec r;
	unsigned int i;

	memset(&r, 0, sizeof(r));
	r.stack.type = KMT_REC_STACK;
	r.stack.timestamp = 500;
	r.stack.stack_id = id;
	r.stack.depth = depth;
	r.stack.first = first;
	r.stack.nframes = n;
	for (i = 0; i < n && i < KMT_STACK_SLOT_FRAMES; i++)
		r.stack.frames[i] = 0xc1000100u + (first + i) * 0x10u;
	return r;
}

/* Writes r numbered as the next data record of CPU 0; returns its offset. */
static uint64_t put_slot(struct gen *g, union kmt_rec r)
{
	uint64_t off = gen_offset(g, 0);

	r.c.seq = gen_next_seq(g, 0);
	gen_set_seq(g, 0, r.c.seq + 1);
	gen_raw(g, 0, &r);
	return off;
}

static uint64_t w_id0(struct gen *g)
{
	return put_slot(g, slot(0, 3, 0, 3));
}

static uint64_t w_depth0(struct gen *g)
{
	return put_slot(g, slot(7, 0, 0, 1));
}

static uint64_t w_depth65(struct gen *g)
{
	return put_slot(g, slot(7, 65, 0, 5));
}

static uint64_t w_n0(struct gen *g)
{
	return put_slot(g, slot(7, 3, 0, 0));
}

static uint64_t w_n6(struct gen *g)
{
	return put_slot(g, slot(7, 10, 0, 6));
}

static uint64_t w_first3(struct gen *g)
{
	return put_slot(g, slot(7, 10, 3, 5));
}

static uint64_t w_beyond(struct gen *g)
{
	return put_slot(g, slot(7, 7, 5, 3));
}

static uint64_t w_short(struct gen *g)
{
	return put_slot(g, slot(7, 10, 0, 4));
}

static uint64_t w_unused(struct gen *g)
{
	union kmt_rec r = slot(7, 3, 0, 3);

	r.stack.frames[4] = 1;
	return put_slot(g, r);
}

static uint64_t w_reserved(struct gen *g)
{
	union kmt_rec r = slot(7, 3, 0, 3);

	r.stack.reserved[1] = 1;
	return put_slot(g, r);
}

static uint64_t w_addr64(struct gen *g)
{
	union kmt_rec r = slot(7, 3, 0, 3);

	r.stack.frames[1] = 0xffffffff81000000ULL;
	return put_slot(g, r);
}

static uint64_t w_order(struct gen *g)
{
	put_slot(g, slot(7, 12, 0, 5));
	return put_slot(g, slot(7, 12, 10, 2));
}

static uint64_t w_interleaved(struct gen *g)
{
	put_slot(g, slot(7, 12, 0, 5));
	return put_slot(g, slot(8, 3, 0, 3));
}

static uint64_t w_event_inside(struct gen *g)
{
	uint64_t off;

	put_slot(g, slot(7, 12, 0, 5));
	off = gen_offset(g, 0);
	gen_kmalloc(g, 0, 600, 0xc1000000, 0xc8000100, 8, 8, -1, 1);
	return off;
}

static uint64_t w_marked(struct gen *g)
{
	struct kmt_event ev = { .type = KMT_REC_KMALLOC, .flags = KMT_F_NO_STACK, .timestamp = 600,
				.call_site = 0xc1000000, .ptr = 0xc8000100, .bytes_req = 8,
				.bytes_alloc = 8, .node = -1, .stack_id = 3 };
	uint64_t off = gen_offset(g, 0);

	gen_event(g, 0, &ev);
	return off;
}

static uint64_t w_no_first(struct gen *g)
{
	return put_slot(g, slot(7, 12, 5, 5));
}

static const struct bad_stack bad[] = {
	{ "stack id 0", "stack record with stack id 0", 64, w_id0 },
	{ "depth 0", "stack id 7: depth 0, expected 1..64", 64, w_depth0 },
	{ "depth 65", "stack id 7: depth 65, expected 1..64", 64, w_depth65 },
	{ "no frames", "stack id 7: 0 frames in a slot, expected 1..5", 64, w_n0 },
	{ "6 frames", "stack id 7: 6 frames in a slot, expected 1..5", 64, w_n6 },
	{ "first 3", "stack id 7: slot starts at frame 3, not a multiple of 5", 64, w_first3 },
	{ "beyond depth", "stack id 7: slot holds frames 5..7, beyond the depth 7", 64, w_beyond },
	{ "short slot", "stack id 7: slot at frame 0 holds 4 frames where 5 expected (depth 10): "
	  "only the last slot may be partly used", 64, w_short },
	{ "unused frame", "stack id 7: unused frame slot 4 is not zero", 64, w_unused },
	{ "reserved", "stack id 7: reserved bytes are not zero", 64, w_reserved },
	{ "64-bit frame", "stack id 7: frame 1 (0xffffffff81000000) above 32 bits in a 32-bit "
	  "trace", 32, w_addr64 },
	{ "out of order", "stack id 7 slot at frame 10 (depth 12) where stack id 7's frames from 5 "
	  "(depth 12) were expected: the slots of a stack must be consecutive and in order", 64,
	  w_order },
	{ "interleaved", "stack id 8 slot at frame 0 (depth 3) where stack id 7's frames from 5 "
	  "(depth 12) were expected: the slots of a stack must be consecutive and in order", 64,
	  w_interleaved },
	{ "event inside", "kmalloc record inside stack id 7: its frames from 5 (of 12) must come "
	  "first", 64, w_event_inside },
	{ "no first slot", "stack id 7: slot at frame 5 without the stack's first slot before it",
	  64, w_no_first },
	{ "marked with an id", "kmalloc record marked as having no stack names stack id 3", 64,
	  w_marked },
};

static void test_rejects(void)
{
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct bad_stack *c = &bad[i];
		struct gen_opts o = { .word_bits = c->bits };
		struct kmt_file_stats st;
		struct kmt_error err;
		char sub[32], want[1024];
		uint64_t off;
		struct gen *g;
		long n;

		snprintf(sub, sizeof(sub), "bad%zu", i);
		g = gen_open(test_path(sub), 1, &o);
		if (!ok(g, "%s: generator", c->label))
			continue;
		gen_kmalloc(g, 0, 100, 0xc1000000, 0xc8000000, 8, 8, -1, 1);
		off = c->write(g);
		gen_kfree(g, 0, 2000, 0xc1000080, 0xc8000000, 1);
		gen_close(g);
		snprintf(sub, sizeof(sub), "bad%zu/cpu0.out", i);
		memset(&err, 0, sizeof(err));
		n = read_stacks(test_path(sub), NULL, &err, &st, NULL, NULL, NULL);
		snprintf(want, sizeof(want), "%s: offset %llu: %s", test_path(sub),
			 (unsigned long long)off, c->msg);
		ok(n < 0, "%s: refused", c->label);
		is_str(err.msg, want, "%s: message names file and offset", c->label);
		is_u64((uint64_t)kmt_error_exit(&err), KMT_EXIT_DATA, "%s: exit 2", c->label);
	}
}

/*
 * A file starting inside a stack, a stack cut by a LOST marker, another
 * stack's continuation right after the marker, and a stack cut by the end.
 */
static void test_incomplete(void)
{
	struct kmt_file_stats st;
	struct kmt_error err;
	struct kmt_stacks *s = kmt_stacks_new();
	uint16_t ids[8];
	uint32_t found[8];
	size_t nev = 0;
	struct gen *g;
	long n;

	g = gen_open(test_path("cut"), 1, NULL);
	if (!ok(g, "cut: generator"))
		return;
	put_slot(g, slot(3, 8, 5, 3));		/* begun before the file */
	put_slot(g, slot(4, 3, 0, 3));		/* whole */
	gen_kmalloc(g, 0, 500, 0xc1000000, 0xc8000100, 8, 8, -1, 1);
	put_slot(g, slot(5, 12, 0, 5));		/* cut by the marker */
	gen_lost(g, 0, 500, 2);
	put_slot(g, slot(6, 12, 10, 2));	/* its beginning was dropped */
	put_slot(g, slot(9, 12, 0, 5));		/* cut by the end */
	gen_close(g);
	n = read_stacks(test_path("cut/cpu0.out"), s, &err, &st, ids, found, &nev);
	if (!ok(n == 7, "cut: all 7 records read"))
		diag("%s", err.msg);
	is_u64(st.stacks, 1, "cut: one whole stack");
	is_u64(st.stacks_incomplete, 4, "cut: four incomplete (before, LOST, after LOST, end)");
	is_u64(kmt_stacks_count(s), 1, "cut: kmt_stacks keeps only the whole one");
	is_u64(kmt_stacks_lookup(s, 0, 5), KMT_STACK_NONE, "cut: the cut stack names nothing");
	ok(kmt_stacks_lookup(s, 0, 4) == 0, "cut: id 4 names the whole one");
	kmt_stacks_free(s);
}

/*
 * kmt_stacks alone: the same content on two CPUs and ids is one stack; an
 * id given a new stack names the new one from its completion (and nothing
 * while it is being written); memory follows distinct stacks.
 */
static void test_intern(void)
{
	struct kmt_stacks *s = kmt_stacks_new();
	uint64_t fr[KMT_STACK_MAX_DEPTH], f2[KMT_STACK_MAX_DEPTH];
	struct kmt_stack k;
	unsigned int d = 0, cpu, rep;
	size_t mem1 = 0;
	const uint64_t *got;

	if (!ok(s, "intern: created"))
		return;
	frames_of(fr, 7, 1);
	frames_of(f2, 7, 2);
	for (rep = 0; rep < 1000; rep++) {
		for (cpu = 0; cpu < 4; cpu++) {
			unsigned int first;

			for (first = 0; first < 7; first += 5) {
				memset(&k, 0, sizeof(k));
				k.type = KMT_REC_STACK;
				k.cpu = (uint16_t)cpu;
				k.stack_id = (uint16_t)(1 + (cpu + rep) % 300);
				k.depth = 7;
				k.first = (uint8_t)first;
				k.nframes = first ? 2 : 5;
				memcpy(k.frames, fr + first, k.nframes * sizeof(*fr));
				kmt_stacks_feed(s, &k);
			}
		}
		if (rep == 299)
			mem1 = kmt_stacks_memory(s);
	}
	is_u64(kmt_stacks_count(s), 1, "intern: 4000 copies on 4 CPUs and 300 ids: one stack");
	is_u64(kmt_stacks_joined(s), 4000, "intern: 4000 joined");
	is_u64(kmt_stacks_memory(s), mem1, "intern: memory did not grow with repeats");
	got = kmt_stacks_frames(s, kmt_stacks_lookup(s, 2, 5), &d);
	ok(got && d == 7 && memcmp(got, fr, sizeof(*fr) * 7) == 0, "intern: frames kept");

	/* Id 5 of CPU 2 gets another stack: nothing while half written, the new one after. */
	memset(&k, 0, sizeof(k));
	k.type = KMT_REC_STACK;
	k.cpu = 2;
	k.stack_id = 5;
	k.depth = 7;
	k.nframes = 5;
	memcpy(k.frames, f2, 5 * sizeof(*f2));
	kmt_stacks_feed(s, &k);
	is_u64(kmt_stacks_lookup(s, 2, 5), KMT_STACK_NONE, "replace: nothing while half written");
	ok(kmt_stacks_lookup(s, 1, 5) == 0, "replace: other CPUs' id 5 unchanged");
	k.first = 5;
	k.nframes = 2;
	memset(k.frames, 0, sizeof(k.frames));
	memcpy(k.frames, f2 + 5, 2 * sizeof(*f2));
	kmt_stacks_feed(s, &k);
	ok(kmt_stacks_lookup(s, 2, 5) == 1, "replace: names the new stack");
	got = kmt_stacks_frames(s, 1, &d);
	ok(got && d == 7 && memcmp(got, f2, sizeof(*f2) * 7) == 0, "replace: new frames");
	is_u64(kmt_stacks_lookup(s, 2, 0), KMT_STACK_NONE, "id 0 names nothing");
	is_u64(kmt_stacks_lookup(s, 9, 5), KMT_STACK_NONE, "an unknown CPU names nothing");
	ok(kmt_stacks_frames(s, 2, &d) == NULL, "no stack 2");
	kmt_stacks_free(s);
}

int main(void)
{
	if (!ok(test_dir_make("stacks"), "temporary directory"))
		return done_testing();
	test_round_trip(0, 64);
	test_round_trip(1, 64);
	test_round_trip(0, 32);
	test_round_trip(1, 32);
	test_rejects();
	test_incomplete();
	test_intern();
	ok(test_dir_remove() == 0, "temporary directory removed");
	return done_testing();
}
