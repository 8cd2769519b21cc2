/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * view_life.h - kmemtrace-report --lifetimes: how long each call site's
 * and each cache's objects live (freed ones: count, p50, p90, p99, max, a
 * log2 histogram; live ones: count and age), and the short-lived and
 * long-lived lists.
 */
#ifndef VIEW_LIFE_H
#define VIEW_LIFE_H

#include <stdint.h>

#include "views/view.h"
#include "core/report_core.h"

/*
 * Default thresholds. Short: 1 ms, longer than one system call's or one
 * interrupt's work, so an object freed that soon served one operation: a
 * stack buffer, a per-CPU object or a dedicated cache could serve it.
 * Long: 1 s, the objects outliving many rounds of their cache's traffic,
 * which keep slab pages from emptying.
 */
#define LIFE_SHORT_NS	1000000ULL
#define LIFE_LONG_NS	1000000000ULL

/* The view's options (out_opts.view_args). */
struct life_args {
	uint64_t short_ns;	/* short-lived: half the freed objects live at most this */
	uint64_t long_ns;	/* long-lived: half the freed, or the oldest live, beyond this */
};

extern const struct report_view view_life;

/*
 * The log2 histogram as a line of characters, one per power of two from
 * the first non-empty bucket to the last, heavier ones darker, with the
 * range: "1.0us |.:=#| 2.10ms". buf holds at least 96 bytes.
 */
void life_sparkline(char *buf, size_t len, const uint64_t h[64]);

#endif /* VIEW_LIFE_H */
