// SPDX-License-Identifier: GPL-2.0-only
/*
 * view.c - what every view shares: the sort keys the tables order their
 * rows by, and duration labels. The registry is in view_registry.c, so
 * that the unit tests can link this without every view.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "views/view.h"

/* ---- sort keys ------------------------------------------------------------ */

static const struct {
	const char *name;
	enum sort_key key;
} sort_names[] = {
	{ "frag", SK_FRAG }, { "hit", SK_HIT }, { "hits", SK_HIT }, { "bytes", SK_BYTES },
	{ "req", SK_REQ }, { "callsite", SK_CALLSITE }, { "ptr", SK_PTR },
	{ "pingpong", SK_PINGPONG }, { "xcpu", SK_PINGPONG }, { "frees", SK_FREES },
	{ "age", SK_AGE }, { "outstanding", SK_OUT }, { "out", SK_OUT },
	{ "failed", SK_FAILED }, { "xnode", SK_XNODE }, { "name", SK_NAME },
	{ "live", SK_LIVE }, { "allocs", SK_HIT },
};

const char sort_keys_help[] =
	"frag, hit, bytes, req, callsite, ptr, pingpong (= xcpu), frees, age, "
	"outstanding, failed, xnode, name, live";

int sort_parse(const char *s, enum sort_key *keys, size_t *n, char *err, size_t errlen)
{
	const char *p = s;

	*n = 0;
	while (*p) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < sizeof(sort_names) / sizeof(sort_names[0]); i++)
			if (strlen(sort_names[i].name) == len &&
			    strncmp(sort_names[i].name, p, len) == 0)
				break;
		if (i == sizeof(sort_names) / sizeof(sort_names[0])) {
			snprintf(err, errlen, "--sort: unknown key '%.*s' (keys: %s)", (int)len, p,
				 sort_keys_help);
			return -1;
		}
		if (*n == SORT_MAX) {
			snprintf(err, errlen, "--sort: at most %d keys", SORT_MAX);
			return -1;
		}
		keys[(*n)++] = sort_names[i].key;
		p += len;
		if (*p == ',')
			p++;
	}
	if (!*n) {
		snprintf(err, errlen, "--sort: no key given (keys: %s)", sort_keys_help);
		return -1;
	}
	return 0;
}

/* ---- labels ------------------------------------------------------------------ */

void out_fmt_per(char *buf, size_t len, uint64_t total, uint64_t n)
{
	snprintf(buf, len, "%" PRIu64 "/%" PRIu64, total, n ? total / n : 0);
}

void out_fmt_secs(char *buf, size_t len, uint64_t ns)
{
	snprintf(buf, len, "%" PRIu64 ".%06" PRIu64 "s", ns / 1000000000u,
		 (ns % 1000000000u) / 1000u);
}

void out_fmt_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2fms", ns / 1e6);
	else
		snprintf(buf, len, "%.3fs", ns / 1e9);
}
