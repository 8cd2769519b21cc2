// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_follow.c - unit tests of kmt_follow, the reader of a trace that is
 * still being written: files found as they appear, records handed out in
 * time order up to a bound and the rest kept, a record written in two
 * pieces, a zeroed slot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gen.h"
#include "kmt_follow.h"
#include "kmt_reader.h"
#include "tap.h"

static char *top;

/* The timestamps of recs[0..n), as "100,200": one comparison says order and content. */
static const char *stamps(const union kmt_rec **recs, size_t n)
{
	static char buf[256];
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < n && len < sizeof(buf) - 24; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%llu", i ? "," : "",
					(unsigned long long)recs[i]->c.timestamp);
	return buf;
}

static void test_growing(void)
{
	char dir[4096];
	struct kmt_error err = { 0 };
	const union kmt_rec **recs;
	struct kmt_follow *f;
	union kmt_rec r;
	struct gen *g;
	size_t n = 0;

	snprintf(dir, sizeof(dir), "%s/grow", top);
	mkdir(dir, 0755);
	f = kmt_follow_new();
	if (!ok(f != NULL, "follow created"))
		return;
	ok(kmt_follow_scan_dir(f, dir, &err) == 0 && kmt_follow_nsources(f) == 0,
	   "no cpuN.out yet: no source, no error");

	g = gen_open(dir, 2, NULL);
	if (!ok(g, "generator opened"))
		goto out;
	gen_kmalloc(g, 0, 100, 0x1000, 0x10000, 8, 8, -1, 1);
	gen_kmalloc(g, 0, 300, 0x1000, 0x10040, 8, 8, -1, 1);
	gen_kmalloc(g, 1, 200, 0x1000, 0x20000, 8, 8, -1, 1);
	gen_kmalloc(g, 1, 400, 0x1000, 0x20040, 8, 8, -1, 1);
	gen_flush(g);
	ok(kmt_follow_scan_dir(f, dir, &err) == 0 && kmt_follow_nsources(f) == 2,
	   "both files followed");
	ok(kmt_follow_scan_dir(f, dir, &err) == 0 && kmt_follow_nsources(f) == 2,
	   "scanning again adds nothing");

	ok(kmt_follow_collect(f, 350, &recs, &n, &err) == 0, "collect before 350");
	is_str(stamps(recs, n), "100,200,300", "records before the bound, in time order");
	ok(kmt_follow_keep_rest(f, n) == 0, "the rest kept");
	ok(kmt_follow_collect(f, UINT64_MAX, &recs, &n, &err) == 0, "collect all");
	is_str(stamps(recs, n), "400", "the kept record comes next");
	kmt_follow_keep_rest(f, n);

	/* A record written in two pieces is handed out once it is whole. */
	memset(&r, 0, sizeof(r));
	r.ev.type = KMT_REC_KMALLOC;
	r.ev.cpu = 1;
	r.ev.seq = gen_next_seq(g, 1);
	r.ev.timestamp = 500;
	r.ev.call_site = 0x1000;
	r.ev.ptr = 0x20080;
	r.ev.bytes_req = 8;
	r.ev.bytes_alloc = 8;
	r.ev.node = -1;
	gen_raw_bytes(g, 1, &r, 20);
	gen_flush(g);
	ok(kmt_follow_collect(f, UINT64_MAX, &recs, &n, &err) == 0 && n == 0,
	   "a partial record waits");
	kmt_follow_keep_rest(f, n);
	gen_raw_bytes(g, 1, (const char *)&r + 20, sizeof(r) - 20);
	gen_kmalloc(g, 0, 450, 0x1000, 0x10080, 8, 8, -1, 1);
	gen_flush(g);
	ok(kmt_follow_collect(f, UINT64_MAX, &recs, &n, &err) == 0, "collect the completed record");
	is_str(stamps(recs, n), "450,500", "completed record in order with the others");
	kmt_follow_keep_rest(f, n);

	/* A zeroed slot is corruption, named by file and offset. */
	memset(&r, 0, sizeof(r));
	gen_raw_bytes(g, 0, &r, sizeof(r));
	gen_flush(g);
	ok(kmt_follow_collect(f, UINT64_MAX, &recs, &n, &err) == -1 &&
	   err.cls == KMT_ERR_DATA && strstr(err.msg, "record type 0") &&
	   strstr(err.msg, "cpu0.out"), "a zeroed slot is an error: %s", err.msg);
	gen_close(g);
out:
	kmt_follow_free(f);
}

int main(void)
{
	top = gen_mkdtemp("follow");
	if (!ok(top, "temporary directory"))
		return done_testing();
	test_growing();
	ok(gen_rm_rf(top) == 0, "temporary directory removed");
	free(top);
	return done_testing();
}
