// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_format.c - unit tests of the trace format through the reader and
 * writer: round trips in both byte orders and word sizes, unknown types,
 * lost markers and seq wrap, and every header and record rejection path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gen.h"
#include "kmt_exit.h"
#include "kmt_reader.h"
#include "kmt_writer.h"
#include "tap.h"
#include "testlib.h"

/* DIR/NAME under the test's directory, in a static buffer per slot. */
static uint64_t be_u64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static uint64_t le_u64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t be_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Compares every field of a record of a known type. */
static void cmp_rec(const union kmt_rec *got, const union kmt_rec *want, const char *what)
{
	unsigned int t = want->c.type;

	is_u64(got->c.type, t, "%s: type", what);
	is_u64(got->c.flags, want->c.flags, "%s: flags", what);
	is_u64(got->c.cpu, want->c.cpu, "%s: cpu", what);
	is_u64(got->c.seq, want->c.seq, "%s: seq", what);
	is_u64(got->c.timestamp, want->c.timestamp, "%s: timestamp", what);
	if (t >= KMT_REC_KMALLOC && t <= KMT_REC_PAGE_FREE) {
		is_u64(got->ev.call_site, want->ev.call_site, "%s: call_site", what);
		is_u64(got->ev.ptr, want->ev.ptr, "%s: ptr", what);
		is_u64(got->ev.cache_id, want->ev.cache_id, "%s: cache_id", what);
		is_u64(got->ev.bytes_req, want->ev.bytes_req, "%s: bytes_req", what);
		is_u64(got->ev.bytes_alloc, want->ev.bytes_alloc, "%s: bytes_alloc", what);
		is_u64(got->ev.gfp_flags, want->ev.gfp_flags, "%s: gfp_flags", what);
		ok(got->ev.node == want->ev.node, "%s: node %d", what, want->ev.node);
		is_u64(got->ev.pid, want->ev.pid, "%s: pid", what);
		ok(got->ev.cpu_node == want->ev.cpu_node, "%s: cpu_node %d", what,
		   want->ev.cpu_node);
		is_u64(got->ev.stack_id, want->ev.stack_id, "%s: stack_id", what);
	} else if (t == KMT_REC_CACHE_DESC) {
		is_u64(got->cache.cache_id, want->cache.cache_id, "%s: cache_id", what);
		is_u64(got->cache.object_size, want->cache.object_size, "%s: object_size", what);
		is_u64(got->cache.size, want->cache.size, "%s: size", what);
		ok(memcmp(got->cache.name, want->cache.name, KMT_CACHE_NAME_LEN) == 0,
		   "%s: name '%.32s'", what, want->cache.name);
	} else if (t == KMT_REC_LOST) {
		is_u64(got->lost.count, want->lost.count, "%s: count", what);
		is_u64(got->lost.first_lost_ns, want->lost.first_lost_ns, "%s: first_lost_ns",
		       what);
		is_u64(got->lost.total_dropped, want->lost.total_dropped, "%s: total_dropped",
		       what);
	}
}

/* Builds one record of every known type with a distinct value in every field. */
static size_t build_all_types(union kmt_rec *r, unsigned int cpu, unsigned int word_bits)
{
	uint64_t amask = word_bits == 32 ? 0xffffffffULL : ~0ULL;
	uint32_t seq = 0xfffffffdU;	/* crosses 2^32 on the way */
	uint64_t ts = 0x0102030405060708ULL;
	size_t n = 0;
	unsigned int t;

	memset(r, 0, 9 * sizeof(*r));
	r[n].cache.type = KMT_REC_CACHE_DESC;
	r[n].cache.flags = KMT_F_NAME_TRUNC;
	r[n].cache.cpu = (uint16_t)cpu;
	r[n].cache.seq = seq++;
	r[n].cache.timestamp = ts++;
	r[n].cache.cache_id = 0xffff888012345678ULL & amask;
	r[n].cache.object_size = 0x11223344;
	r[n].cache.size = 0x55667788;
	strcpy(r[n].cache.name, "kmalloc-rcl-8k_with_a_long_nam");
	n++;
	for (t = KMT_REC_KMALLOC; t <= KMT_REC_PAGE_FREE; t++, n++) {
		struct kmt_event *e = &r[n].ev;

		e->type = (uint8_t)t;
		e->flags = (uint8_t)(t & 3);
		e->cpu = (uint16_t)cpu;
		e->seq = seq++;
		e->timestamp = ts++;
		e->call_site = (0xffffffffc0a1b2c3ULL + t) & amask;
		e->ptr = (0xffff8880deadbe00ULL + 64 * t) & amask;
		e->cache_id = t == 2 || t == 5 ? r[0].cache.cache_id : 0;
		e->bytes_req = 0x01020304 + t;
		e->bytes_alloc = 0x0a0b0c0d + t;
		e->gfp_flags = 0x00400cc0 + t;
		e->node = t == 3 ? -1 : (int32_t)(0x10000 + t);
		e->pid = 0x7f6e5d4c + t;
		e->cpu_node = (int16_t)(-2 - (int)t);
		e->stack_id = (uint16_t)(0xa5a5 + t);
	}
	/* 3 dropped: seq jumps past 0 across the wrap. */
	r[n].lost.type = KMT_REC_LOST;
	r[n].lost.cpu = (uint16_t)cpu;
	seq += 3;
	r[n].lost.seq = seq;
	r[n].lost.timestamp = ts++;
	r[n].lost.count = 3;
	r[n].lost.first_lost_ns = ts - 2;
	r[n].lost.total_dropped = 0x0102030405060708ULL;
	n++;
	r[n] = r[1];
	r[n].ev.seq = seq++;
	r[n].ev.timestamp = ts++;
	n++;
	return n;
}

/* Writes every type through the writer, reads it back, compares field by field. */
static void test_round_trip(int big_endian, unsigned int word_bits)
{
	struct gen_opts o = { .big_endian = big_endian, .word_bits = word_bits,
			      .page_size = 16384, .start_mono_ns = 123456789,
			      .start_real_ns = 1700000000123456789ULL };
	const struct kmt_file_header *h;
	const struct kmt_file_stats *st;
	char label[64], sub[64];
	union kmt_rec want[9], got;
	struct kmt_error err;
	struct kmt_file *f;
	size_t n, i, len = 0;
	struct gen *g;
	uint8_t *raw;
	int r;

	snprintf(sub, sizeof(sub), "rt-%s-%u", big_endian ? "be" : "le", word_bits);
	snprintf(label, sizeof(label), "%s-endian %u-bit", big_endian ? "big" : "little",
		 word_bits);
	n = build_all_types(want, 1, word_bits);
	g = gen_open(test_path(sub), 2, &o);
	if (!ok(g, "%s: generator opened", label))
		return;
	for (i = 0; i < n; i++)
		gen_raw(g, 1, &want[i]);
	ok(gen_close(g) == 0, "%s: written", label);

	snprintf(sub + strlen(sub), sizeof(sub) - strlen(sub), "/cpu1.out");
	raw = (uint8_t *)test_read_file(test_path(sub), &len);
	if (!ok(raw, "%s: file read back raw", label))
		return;
	is_u64(len, KMT_RECORD_SIZE * (n + 1), "%s: file size is header + %zu slots", label, n);
	/* The bytes on disk really are in the chosen order. */
	ok(memcmp(raw, big_endian ? "RTMK" : "KMTR", 4) == 0, "%s: magic bytes", label);
	is_u64(raw[14], big_endian ? KMT_BYTE_ORDER_BE : KMT_BYTE_ORDER_LE,
	       "%s: byte_order byte", label);
	is_u64(big_endian ? be_u64(raw + 24) : le_u64(raw + 24), 123456789,
	       "%s: start_mono_ns bytes", label);
	is_u64(big_endian ? be_u64(raw + 64 + 8) : le_u64(raw + 64 + 8), want[0].c.timestamp,
	       "%s: first record's timestamp bytes", label);
	if (big_endian)
		is_u64(be_u32(raw + 64 + 24), want[0].cache.object_size,
		       "%s: object_size bytes", label);
	ok(memcmp(raw + 64 + 32, want[0].cache.name, KMT_CACHE_NAME_LEN) == 0,
	   "%s: cache name bytes not swapped", label);
	free(raw);

	f = kmt_file_open(test_path(sub), 0, &err);
	if (!ok(f, "%s: opened", label)) {
		diag("%s", err.msg);
		return;
	}
	h = kmt_file_header(f);
	is_u64(h->magic, KMT_MAGIC, "%s: header magic in host order", label);
	is_u64(h->version_major, KMT_ABI_MAJOR, "%s: major", label);
	is_u64(h->version_minor, KMT_ABI_MINOR, "%s: minor", label);
	is_u64(h->header_size, 64, "%s: header_size", label);
	is_u64(h->record_size, 64, "%s: record_size", label);
	is_u64(h->cpu, 1, "%s: header cpu", label);
	is_u64(h->byte_order, big_endian ? KMT_BYTE_ORDER_BE : KMT_BYTE_ORDER_LE,
	       "%s: header byte_order", label);
	is_u64(h->word_bits, word_bits, "%s: word_bits", label);
	is_u64(h->clock_id, KMT_CLOCK_MONOTONIC, "%s: clock_id", label);
	is_u64(h->page_size, 16384, "%s: page_size", label);
	is_u64(h->start_mono_ns, 123456789, "%s: start_mono_ns", label);
	is_u64(h->start_real_ns, 1700000000123456789ULL, "%s: start_real_ns", label);
	is_u64(!!kmt_file_big_endian(f), !!big_endian, "%s: kmt_file_big_endian", label);

	for (i = 0; i < n; i++) {
		char what[96];

		r = kmt_file_next(f, &got);
		snprintf(what, sizeof(what), "%s: record %zu (%s)", label, i,
			 kmt_rec_type_name(want[i].c.type));
		if (!is_u64((uint64_t)r, 1, "%s read", what)) {
			diag("%s", kmt_file_error(f)->msg);
			break;
		}
		is_u64(kmt_file_offset(f), 64 * (i + 1), "%s: offset", what);
		cmp_rec(&got, &want[i], what);
	}
	is_u64((uint64_t)kmt_file_next(f, &got), 0, "%s: clean end", label);
	st = kmt_file_stats(f);
	is_u64(st->records, n, "%s: stats records", label);
	is_u64(st->events, 7, "%s: stats events", label);
	is_u64(st->by_type[KMT_REC_KMALLOC], 2, "%s: stats kmalloc", label);
	is_u64(st->by_type[KMT_REC_PAGE_FREE], 1, "%s: stats page_free", label);
	is_u64(st->cache_descs, 1, "%s: stats cache descs", label);
	is_u64(st->lost_markers, 1, "%s: stats lost markers", label);
	is_u64(st->lost_records, 3, "%s: stats lost records", label);
	is_u64(st->last_total_dropped, want[7].lost.total_dropped, "%s: stats total dropped",
	       label);
	is_u64(st->first_ts, want[0].c.timestamp, "%s: stats first ts", label);
	is_u64(st->last_ts, want[n - 1].c.timestamp, "%s: stats last ts", label);
	is_u64(st->first_seq, want[0].c.seq, "%s: stats first seq", label);
	is_u64(st->last_seq, want[n - 1].c.seq, "%s: stats last seq", label);
	is_u64(st->truncated_bytes, 0, "%s: no truncated tail", label);
	is_u64(st->file_bytes, 64 * (n + 1), "%s: stats file bytes", label);
	kmt_file_close(f);
}

/* The encoder alone, compared with bytes laid out by hand. */
static void test_encode_bytes(void)
{
	static const uint8_t want_be[16] = { 1, 0x81, 0x01, 0x02, 0xa0, 0xb0, 0xc0, 0xd0,
					     0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };
	static const uint8_t want_le[16] = { 1, 0x81, 0x02, 0x01, 0xd0, 0xc0, 0xb0, 0xa0,
					     0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 };
	uint8_t out[KMT_RECORD_SIZE];
	union kmt_rec r, back;

	memset(&r, 0, sizeof(r));
	r.c.type = KMT_REC_KMALLOC;
	r.c.flags = 0x81;
	r.c.cpu = 0x0102;
	r.c.seq = 0xa0b0c0d0;
	r.c.timestamp = 0x1122334455667788ULL;
	r.ev.node = -1;
	r.ev.cpu_node = -2;
	kmt_rec_encode(out, &r, 1);
	ok(memcmp(out, want_be, 16) == 0, "encode: big-endian common prefix bytes");
	ok(out[52] == 0xff && out[55] == 0xff && out[60] == 0xff && out[61] == 0xfe,
	   "encode: big-endian negative node and cpu_node");
	memcpy(&back, out, sizeof(back));
	if (!kmt_host_big_endian())
		kmt_rec_swap(&back);
	ok(memcmp(&back, &r, sizeof(r)) == 0, "encode: swap is its own inverse");
	kmt_rec_encode(out, &r, 0);
	ok(memcmp(out, want_le, 16) == 0, "encode: little-endian common prefix bytes");
}

/* Unknown record types are skipped and counted; each may have taken a seq. */
static void test_unknown_types(void)
{
	struct gen_opts o = { .first_seq = 10 };
	union kmt_rec r, got;
	struct kmt_error err;
	struct kmt_file *f;
	struct gen *g;
	uint64_t bad_off;
	int n = 0, rc;

	g = gen_open(test_path("unknown"), 1, &o);
	if (!ok(g, "unknown: generator opened"))
		return;
	gen_kmalloc(g, 0, 100, 0x1000, 0x2000, 8, 8, -1, 1);		/* seq 10 */
	memset(&r, 0, sizeof(r));
	r.c.type = 11;
	r.c.seq = 11;
	r.c.timestamp = 1;	/* never checked: the layout is not known */
	gen_raw(g, 0, &r);
	r.c.type = 200;
	gen_raw(g, 0, &r);
	gen_set_seq(g, 0, 12);	/* the two unknown slots took one seq between them */
	gen_kfree(g, 0, 101, 0x1004, 0x2000, 1);			/* seq 12 */
	r.c.type = 11;
	gen_raw(g, 0, &r);
	gen_set_seq(g, 0, 15);	/* one unknown slot cannot explain two seqs */
	bad_off = gen_offset(g, 0);
	gen_kfree(g, 0, 102, 0x1004, 0x2000, 1);			/* seq 15 */
	gen_close(g);

	f = kmt_file_open(test_path("unknown/cpu0.out"), 0, &err);
	if (!ok(f, "unknown: opened"))
		return;
	while ((rc = kmt_file_next(f, &got)) > 0)
		n++;
	is_u64((uint64_t)n, 2, "unknown: two known records returned before the gap");
	is_u64(kmt_file_stats(f)->unknown, 3, "unknown: three unknown slots counted");
	is_u64(kmt_file_stats(f)->records, 5, "unknown: records include unknown slots");
	ok(rc < 0, "unknown: a gap of two after one unknown slot is an error");
	is_u64(kmt_file_error(f)->offset, bad_off, "unknown: error at the record's offset");
	kmt_file_close(f);
	is_str(kmt_rec_type_name(11), "unknown", "unknown: type name of 11");
	is_str(kmt_rec_type_name(KMT_REC_CACHE_FREE), "cache_free", "type name of 5");
}

/* Lost markers explain gaps, also across the 2^32 wrap; a file may start with one. */
static void test_lost_and_wrap(void)
{
	struct gen_opts o = { .first_seq = 0xfffffffeU };
	uint32_t seqs[8];
	size_t nseq = 0, i, n = 0;
	union kmt_rec got;
	struct kmt_error err;
	struct kmt_file *f;
	struct gen *g;
	int rc;

	g = gen_open(test_path("wrap"), 1, &o);
	if (!ok(g, "wrap: generator opened"))
		return;
	gen_lost(g, 0, 10, 2);		/* first record: a marker, fixes expected */
	seqs[nseq++] = gen_next_seq(g, 0);
	gen_kmalloc(g, 0, 11, 0x1000, 0x2000, 8, 8, -1, 1);
	seqs[nseq++] = gen_next_seq(g, 0);
	gen_kmalloc(g, 0, 12, 0x1000, 0x2040, 8, 8, -1, 1);
	gen_lost(g, 0, 13, 5);
	seqs[nseq++] = gen_next_seq(g, 0);
	gen_kfree(g, 0, 13, 0x1004, 0x2000, 1);
	gen_lost(g, 0, 14, 0x100000003ULL);	/* count beyond 2^32: seq moves by 3 */
	seqs[nseq++] = gen_next_seq(g, 0);
	gen_kfree(g, 0, 15, 0x1004, 0x2040, 1);
	gen_close(g);
	is_u64(seqs[0], 0, "wrap: first event seq wrapped to 0 after 2 lost");
	is_u64(seqs[2], 7, "wrap: 5 lost advance seq to 7");

	f = kmt_file_open(test_path("wrap/cpu0.out"), 0, &err);
	if (!ok(f, "wrap: opened"))
		return;
	i = 0;
	while ((rc = kmt_file_next(f, &got)) > 0) {
		n++;
		if (got.c.type != KMT_REC_LOST && i < nseq) {
			is_u64(got.c.seq, seqs[i], "wrap: event %zu has the generator's seq", i);
			i++;
		}
	}
	if (!is_u64((uint64_t)rc, 0, "wrap: whole file valid"))
		diag("%s", kmt_file_error(f)->msg);
	is_u64(n, 7, "wrap: 7 records");
	is_u64(kmt_file_stats(f)->lost_markers, 3, "wrap: 3 lost markers");
	is_u64(kmt_file_stats(f)->lost_records, 2 + 5 + 0x100000003ULL, "wrap: lost total");
	is_u64(kmt_file_stats(f)->last_total_dropped, 2 + 5 + 0x100000003ULL,
	       "wrap: total dropped of the last marker");
	kmt_file_close(f);
}

/* Header with one field changed, written as DIR/NAME; returns the path. */
static const char *write_header(const char *name, int big_endian, size_t off, const void *val,
				size_t len, unsigned int cpu)
{
	struct kmt_file_header h;
	uint8_t raw[2 * KMT_RECORD_SIZE];
	union kmt_rec r;
	const char *p = test_path(name);

	kmt_header_init(&h, cpu, 64, 4096, 1, 2);
	kmt_header_encode(raw, &h, big_endian);
	if (val)
		memcpy(raw + off, val, len);
	memset(&r, 0, sizeof(r));
	r.ev.type = KMT_REC_KMALLOC;
	r.ev.cpu = (uint16_t)cpu;
	r.ev.timestamp = 5;
	kmt_rec_encode(raw + KMT_RECORD_SIZE, &r, big_endian);
	if (gen_write_file(p, raw, sizeof(raw)) < 0)
		diag("cannot write %s: %s", p, strerror(errno));
	return p;
}

/* Opening must fail with exactly this class, offset and message. */
static void expect_reject(const char *path, unsigned int flags, enum kmt_err_class cls,
			  uint64_t offset, const char *what, const char *label)
{
	struct kmt_error err;
	struct kmt_file *f = kmt_file_open(path, flags, &err);
	char want[1024];

	if (offset == UINT64_MAX)
		snprintf(want, sizeof(want), "%s: %s", path, what);
	else
		snprintf(want, sizeof(want), "%s: offset %llu: %s", path,
			 (unsigned long long)offset, what);
	ok(!f, "%s: rejected", label);
	kmt_file_close(f);
	is_u64(err.cls, cls, "%s: error class", label);
	is_u64(err.offset, offset, "%s: error offset", label);
	is_str(err.msg, want, "%s: message", label);
}

/* Opening must succeed and the one record must read. */
static void expect_accept(const char *path, unsigned int flags, const char *label)
{
	struct kmt_error err;
	struct kmt_file *f = kmt_file_open(path, flags, &err);
	union kmt_rec r;

	if (!ok(f, "%s: accepted", label)) {
		diag("%s", err.msg);
		return;
	}
	is_u64((uint64_t)kmt_file_next(f, &r), 1, "%s: its record reads", label);
	kmt_file_close(f);
}

static void test_header_rejects(void)
{
	char msg[128];
	uint16_t u16;
	uint8_t u8, junk[64];
	uint32_t u32;
	const char *p;

	p = test_path("empty.out");
	gen_write_file(p, "", 0);
	expect_reject(p, 0, KMT_ERR_DATA, 0, "empty file, not a kmemtrace file", "empty file");

	p = write_header("short.out", 0, 0, NULL, 0, 0);
	if (truncate(p, 10) < 0)
		diag("truncate: %s", strerror(errno));
	expect_reject(p, 0, KMT_ERR_DATA, 0,
		      "file too short for a kmemtrace header (10 bytes, need 64)", "short file");

	p = test_path("text.out");
	gen_write_file(p, "hello\n", 6);
	expect_reject(p, 0, KMT_ERR_DATA, 0,
		      "not a kmemtrace file (magic bytes 68 65 6c 6c, expected 4b 4d 54 52 or 52 54 4d 4b)",
		      "short text file");
	memset(junk, 'x', sizeof(junk));
	p = test_path("junk.out");
	gen_write_file(p, junk, sizeof(junk));
	expect_reject(p, 0, KMT_ERR_DATA, 0,
		      "not a kmemtrace file (magic bytes 78 78 78 78, expected 4b 4d 54 52 or 52 54 4d 4b)",
		      "64 bytes of junk");

	/* The headers are this build's: their minor is KMT_ABI_MINOR. */
	snprintf(msg, sizeof(msg), "ABI version 2.%u not supported (this reader: 1.x)",
		 KMT_ABI_MINOR);
	u16 = 2;
	p = write_header("major.out", 0, 4, &u16, 2, 0);
	expect_reject(p, 0, KMT_ERR_DATA, 4, msg, "major 2 little-endian");
	u16 = 0x0200;	/* 2 in big-endian */
	if (kmt_host_big_endian())
		u16 = 2;
	p = write_header("major-be.out", 1, 4, &u16, 2, 0);
	expect_reject(p, 0, KMT_ERR_DATA, 4, msg, "major 2 big-endian");
	u16 = 7;
	p = write_header("minor.out", 0, 6, &u16, 2, 0);
	expect_accept(p, 0, "newer minor 1.7");

	u16 = 128;
	p = write_header("hsize.out", 0, 8, &u16, 2, 0);
	expect_reject(p, 0, KMT_ERR_DATA, 8, "header size 128, expected 64", "header_size 128");
	u16 = 32;
	p = write_header("rsize.out", 0, 10, &u16, 2, 0);
	expect_reject(p, 0, KMT_ERR_DATA, 10, "record size 32, expected 64", "record_size 32");

	u8 = KMT_BYTE_ORDER_BE;
	p = write_header("order.out", 0, 14, &u8, 1, 0);
	expect_reject(p, 0, KMT_ERR_DATA, 14,
		      "byte order field is 2 but the magic is little-endian (expected 1)",
		      "byte_order BE in a little-endian file");
	u8 = KMT_BYTE_ORDER_LE;
	p = write_header("order-be.out", 1, 14, &u8, 1, 0);
	expect_reject(p, 0, KMT_ERR_DATA, 14,
		      "byte order field is 1 but the magic is big-endian (expected 2)",
		      "byte_order LE in a big-endian file");
	u8 = 0;
	p = write_header("order0.out", 0, 14, &u8, 1, 0);
	expect_reject(p, 0, KMT_ERR_DATA, 14,
		      "byte order field is 0 but the magic is little-endian (expected 1)",
		      "byte_order 0");

	u8 = 16;
	p = write_header("bits.out", 0, 15, &u8, 1, 0);
	expect_reject(p, 0, KMT_ERR_DATA, 15, "word size 16 bits, expected 32 or 64",
		      "word_bits 16");
	u8 = 2;
	p = write_header("clock.out", 0, 16, &u8, 1, 0);
	expect_reject(p, 0, KMT_ERR_DATA, 16,
		      "unknown clock id 2 (this reader knows 1, CLOCK_MONOTONIC)", "clock 2");
	u32 = 0;
	p = write_header("page0.out", 0, 20, &u32, 4, 0);
	expect_reject(p, 0, KMT_ERR_DATA, 20, "page size 0 is not a power of two",
		      "page_size 0");
	u32 = 3000;
	p = write_header("page3000.out", 0, 20, &u32, 4, 0);
	expect_reject(p, 0, KMT_ERR_DATA, 20, "page size 3000 is not a power of two",
		      "page_size 3000");

	/* Reserved bytes may gain meaning in a newer minor: tolerated. */
	memset(junk, 0x5a, 24);
	p = write_header("reserved.out", 0, 40, junk, 24, 0);
	expect_accept(p, 0, "nonzero reserved header bytes");

	p = write_header("cpu1.out", 0, 0, NULL, 0, 0);
	expect_reject(p, 0, KMT_ERR_DATA, 12, "file name says CPU 1, header says CPU 0",
		      "CPU 0 in cpu1.out");
	expect_accept(p, KMT_OPEN_NO_NAME_CHECK, "CPU 0 in cpu1.out with NO_NAME_CHECK");
	p = write_header("cpu12.out", 0, 0, NULL, 0, 12);
	expect_accept(p, 0, "CPU 12 in cpu12.out");
	p = write_header("trace-of-cpu3.bin", 0, 0, NULL, 0, 0);
	expect_accept(p, 0, "other file names are not checked");

	p = test_path("missing.out");
	expect_reject(p, 0, KMT_ERR_IO, UINT64_MAX, "cannot open: No such file or directory",
		      "missing file");
	p = test_path("adir.out");
	mkdir(p, 0755);
	expect_reject(p, 0, KMT_ERR_IO, UINT64_MAX, "is a directory, not a trace file",
		      "a directory");
}

/*
 * Writes a good prefix on CPU 0, lets corrupt() append the bad part, and
 * checks that reading stops at the bad slot with this message.
 */
struct bad_case {
	const char *label;
	const char *msg;
	void (*corrupt)(struct gen *g);
	unsigned int word_bits;
};

static void bad_cpu(struct gen *g)
{
	union kmt_rec r;

	memset(&r, 0, sizeof(r));
	r.ev.type = KMT_REC_KFREE;
	r.ev.cpu = 5;
	r.ev.seq = gen_next_seq(g, 0);
	r.ev.timestamp = 1000;
	gen_raw(g, 0, &r);
}

static void bad_zero(struct gen *g)
{
	uint8_t zero[KMT_RECORD_SIZE] = { 0 };

	gen_raw_bytes(g, 0, zero, sizeof(zero));
}

static void bad_ts(struct gen *g)
{
	gen_kfree(g, 0, 199, 0x1004, 0x2000, 1);
}

static void bad_gap(struct gen *g)
{
	gen_set_seq(g, 0, gen_next_seq(g, 0) + 1);
	gen_kfree(g, 0, 1000, 0x1004, 0x2000, 1);
}

static void bad_repeat(struct gen *g)
{
	gen_set_seq(g, 0, gen_next_seq(g, 0) - 1);
	gen_kfree(g, 0, 1000, 0x1004, 0x2000, 1);
}

static void bad_lost(struct gen *g)
{
	union kmt_rec r;

	memset(&r, 0, sizeof(r));
	r.lost.type = KMT_REC_LOST;
	r.lost.seq = gen_next_seq(g, 0) + 3;
	r.lost.count = 4;
	r.lost.timestamp = 1000;
	gen_raw(g, 0, &r);
}

static void bad_name(struct gen *g)
{
	union kmt_rec r;

	memset(&r, 0, sizeof(r));
	r.cache.type = KMT_REC_CACHE_DESC;
	r.cache.seq = gen_next_seq(g, 0);
	r.cache.timestamp = 1000;
	memset(r.cache.name, 'a', sizeof(r.cache.name));
	gen_raw(g, 0, &r);
}

static void bad_addr32(struct gen *g)
{
	gen_kmalloc(g, 0, 1000, 0xc1000000, 0x100000000ULL, 8, 8, -1, 1);
}

static void bad_cache32(struct gen *g)
{
	gen_cache_desc(g, 0, 1000, 0x1c1000000ULL, 8, 8, "x");
}

static void bad_partial(struct gen *g)
{
	uint8_t part[10] = { KMT_REC_KFREE };

	gen_raw_bytes(g, 0, part, sizeof(part));
}

static const struct bad_case bad_cases[] = {
	{ "record of another CPU", "kfree record of CPU 5 in a file of CPU 0", bad_cpu, 64 },
	{ "zeroed slot", "zeroed record slot (type 0)", bad_zero, 64 },
	{ "timestamp backwards", "timestamp 199 goes backwards (previous record: 200)",
	  bad_ts, 64 },
	{ "seq gap", "seq 4 where 3 expected and no lost-records marker", bad_gap, 64 },
	{ "seq repeated", "seq 2 where 3 expected and no lost-records marker", bad_repeat, 64 },
	{ "lost marker off by one", "lost-records marker with seq 6 where 7 expected (3 + count 4)",
	  bad_lost, 64 },
	{ "cache name without NUL", "cache name not NUL-terminated", bad_name, 64 },
	{ "address above 32 bits", "kmalloc address above 32 bits in a 32-bit trace (call_site 0xc1000000, ptr 0x100000000, cache 0x0)",
	  bad_addr32, 32 },
	{ "cache id above 32 bits", "cache id 0x1c1000000 does not fit a 32-bit trace",
	  bad_cache32, 32 },
	{ "partial record", "truncated record: 10 of 64 bytes at the end of the file",
	  bad_partial, 64 },
};

static void test_record_rejects(void)
{
	size_t i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct gen_opts o = { .word_bits = c->word_bits };
		char sub[32], want[1024];
		struct kmt_error err;
		struct kmt_file *f;
		union kmt_rec r;
		uint64_t bad_off;
		struct gen *g;
		int n = 0, rc;

		snprintf(sub, sizeof(sub), "bad%zu", i);
		g = gen_open(test_path(sub), 1, &o);
		if (!ok(g, "%s: generator opened", c->label))
			continue;
		gen_cache_desc(g, 0, 100, 0xc2000000, 8, 8, "c");
		gen_kmalloc(g, 0, 100, 0xc1000000, 0xc8000000, 8, 8, -1, 1);
		gen_cache_alloc(g, 0, 200, 0xc1000040, 0xc8000040, 0xc2000000, 8, 8, -1, 1);
		bad_off = gen_offset(g, 0);
		c->corrupt(g);
		/* Something good after the bad slot, except where the bad part is the end. */
		if (c->corrupt != bad_partial)
			gen_kfree(g, 0, 2000, 0xc1000080, 0xc8000000, 1);
		gen_close(g);

		snprintf(sub, sizeof(sub), "bad%zu/cpu0.out", i);
		f = kmt_file_open(test_path(sub), 0, &err);
		if (!ok(f, "%s: header accepted", c->label)) {
			diag("%s", err.msg);
			continue;
		}
		while ((rc = kmt_file_next(f, &r)) > 0)
			n++;
		snprintf(want, sizeof(want), "%s: offset %llu: %s", test_path(sub),
			 (unsigned long long)bad_off, c->msg);
		is_u64((uint64_t)n, 3, "%s: the 3 good records come first", c->label);
		ok(rc < 0, "%s: then an error", c->label);
		is_u64(kmt_file_error(f)->cls, KMT_ERR_DATA, "%s: bad data", c->label);
		is_u64((uint64_t)kmt_error_exit(kmt_file_error(f)), KMT_EXIT_DATA,
		       "%s: exit code 2", c->label);
		is_u64(kmt_file_error(f)->offset, bad_off, "%s: offset of the bad slot",
		       c->label);
		is_str(kmt_file_error(f)->msg, want, "%s: message", c->label);
		is_u64(kmt_file_stats(f)->records, 3, "%s: stats stop before it", c->label);
		ok(kmt_file_next(f, &r) < 0, "%s: the error sticks", c->label);
		kmt_file_close(f);
	}
}

/* A partial slot at the end: an error, or with the flag a clean end that is reported. */
static void test_truncated_tail(void)
{
	struct kmt_error err;
	struct kmt_file *f;
	union kmt_rec r;
	uint8_t part[37];
	uint64_t tail_off;
	struct gen *g;
	int n = 0, rc;

	g = gen_open(test_path("trunc"), 1, NULL);
	if (!ok(g, "truncated: generator opened"))
		return;
	gen_kmalloc(g, 0, 100, 0x1000, 0x2000, 8, 8, -1, 1);
	gen_kfree(g, 0, 101, 0x1004, 0x2000, 1);
	tail_off = gen_offset(g, 0);
	memset(part, 0x33, sizeof(part));
	part[0] = KMT_REC_KMALLOC;
	gen_raw_bytes(g, 0, part, sizeof(part));
	gen_close(g);

	f = kmt_file_open(test_path("trunc/cpu0.out"), KMT_OPEN_ALLOW_TRUNCATED, &err);
	if (!ok(f, "truncated: opened with ALLOW_TRUNCATED"))
		return;
	while ((rc = kmt_file_next(f, &r)) > 0)
		n++;
	is_u64((uint64_t)rc, 0, "truncated: clean end with the flag");
	is_u64((uint64_t)n, 2, "truncated: both whole records read");
	is_u64(kmt_file_stats(f)->truncated_bytes, sizeof(part), "truncated: tail size reported");
	is_u64(kmt_file_stats(f)->file_bytes, tail_off + sizeof(part),
	       "truncated: file bytes include the tail");
	kmt_file_close(f);

	f = kmt_file_open(test_path("trunc/cpu0.out"), 0, &err);
	if (!ok(f, "truncated: opened without the flag"))
		return;
	n = 0;
	while ((rc = kmt_file_next(f, &r)) > 0)
		n++;
	ok(rc < 0, "truncated: an error without the flag");
	is_u64((uint64_t)n, 2, "truncated: after the whole records");
	is_u64(kmt_file_error(f)->offset, tail_off, "truncated: at the tail's offset");
	kmt_file_close(f);
}

/* A file larger than the read buffer, a slot straddling each refill. */
static void test_big_file(void)
{
	struct gen_opts o = { .big_endian = 1 };
	const uint64_t nev = 40000;	/* 2.5 MB: several 1 MiB refills */
	struct kmt_error err;
	struct kmt_file *f;
	union kmt_rec r;
	uint64_t i, n = 0, bad = 0;
	struct gen *g;
	int rc;

	g = gen_open(test_path("big"), 1, &o);
	if (!ok(g, "big: generator opened"))
		return;
	/* An odd-sized first write shifts later slots off the buffer boundary... */
	for (i = 0; i < nev; i++)
		gen_kmalloc(g, 0, 1000 + i, 0xffffffff81000000ULL + i, 0xffff888000000000ULL + 64 * i,
			    (uint32_t)i, (uint32_t)i + 8, -1, (uint32_t)i);
	gen_close(g);
	f = kmt_file_open(test_path("big/cpu0.out"), 0, &err);
	if (!ok(f, "big: opened"))
		return;
	while ((rc = kmt_file_next(f, &r)) > 0) {
		if (r.ev.timestamp != 1000 + n || r.ev.bytes_req != n || r.ev.pid != n ||
		    r.ev.ptr != 0xffff888000000000ULL + 64 * n)
			bad++;
		n++;
	}
	is_u64((uint64_t)rc, 0, "big: clean end");
	is_u64(n, nev, "big: every record read");
	is_u64(bad, 0, "big: every record decoded with its own values");
	kmt_file_close(f);
}

static void test_exit_codes(void)
{
	struct kmt_error e = { 0 };

	is_u64((uint64_t)kmt_error_exit(&e), KMT_EXIT_OK, "exit: none -> 0");
	e.cls = KMT_ERR_USAGE;
	is_u64((uint64_t)kmt_error_exit(&e), KMT_EXIT_USAGE, "exit: usage -> 1");
	e.cls = KMT_ERR_DATA;
	is_u64((uint64_t)kmt_error_exit(&e), KMT_EXIT_DATA, "exit: data -> 2");
	e.cls = KMT_ERR_IO;
	is_u64((uint64_t)kmt_error_exit(&e), KMT_EXIT_IO, "exit: I/O -> 3");
	e.cls = KMT_ERR_NOMEM;
	is_u64((uint64_t)kmt_error_exit(&e), KMT_EXIT_INTERNAL, "exit: no memory -> 4");
}

int main(void)
{
	if (!ok(test_dir_make("format"), "temporary directory"))
		return done_testing();
	test_encode_bytes();
	test_round_trip(0, 64);
	test_round_trip(1, 64);
	test_round_trip(1, 32);
	test_round_trip(0, 32);
	test_unknown_types();
	test_lost_and_wrap();
	test_header_rejects();
	test_record_rejects();
	test_truncated_tail();
	test_big_file();
	test_exit_codes();
	ok(test_dir_remove() == 0, "temporary directory removed");
	return done_testing();
}
