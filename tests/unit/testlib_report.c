// SPDX-License-Identifier: GPL-2.0-only
/*
 * testlib_report.c - test_analyse() of testlib.h, apart from testlib.c
 * because it needs the analysis (linked into the test_report*.c tests only).
 */
#include <stdio.h>

#include "core/report_core.h"
#include "kmt_reader.h"
#include "testlib.h"

struct rpt *test_analyse(const char *dir, const struct rpt_filter *f, unsigned int flags)
{
	struct kmt_error err;
	struct kmt_merge *m = kmt_merge_open_dir(dir, 0, &err);
	struct rpt *r;
	union kmt_rec rec;
	int rc;

	if (!m) {
		printf("# %s\n", err.msg);
		return NULL;
	}
	r = rpt_new(f, flags);
	if (!r) {
		kmt_merge_close(m);
		return NULL;
	}
	while ((rc = kmt_merge_next(m, &rec, NULL)) == 1) {
		if (rpt_feed(r, &rec)) {
			printf("# rpt_feed: out of memory\n");
			rc = -2;
			break;
		}
	}
	if (rc == -1)
		printf("# %s\n", kmt_merge_error(m)->msg);
	kmt_merge_close(m);
	if (rc != 0 || rpt_finish(r)) {
		rpt_free(r);
		return NULL;
	}
	return r;
}
