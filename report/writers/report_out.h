/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report_out.h - kmemtrace-report's output: the text tables (80 columns),
 * the stable JSON document (Documentation/report-json.md), CSV, and the
 * one-line-per-record --raw dump. Symbols are resolved here, once per
 * address, never per event.
 */
#ifndef REPORT_OUT_H
#define REPORT_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kmt_reader.h"
#include "writers/out_table.h"
#include "core/report_core.h"
#include "core/report_meta.h"
#include "sym/sym_kallsyms.h"
#include "sym/sym_srcline.h"

/*
 * The views and tables of a rotated trace that see only the records its
 * window kept, not its checkpoint's sums ("window_only" in JSON):
 * lifetimes (--lifetimes, --short-lived, --long-lived, --html), the
 * timelines (--html), the per-address view (--alloc), the errors, the
 * intervals (--interval, kmemtrace-top --replay: from the cut on).
 */
#define REPORT_WINDOW_ONLY_N	4
extern const char *const report_window_only[REPORT_WINDOW_ONLY_N];

/* Writes the whole report. 0, -1 out of memory (errno ENOMEM). */
int report_print(FILE *fp, const struct rpt *r, const struct out_opts *o);

/*
 * What --raw keeps from one record to the next: each CPU's last stack slot,
 * whose last frame says how the first frame of the next slot of its stack is
 * named (an interrupted instruction after the kernel's entry code). NULL
 * when out of memory.
 */
struct raw_ctx *raw_ctx_new(void);
void raw_ctx_free(struct raw_ctx *c);

/*
 * --raw: one line for any record, all its fields; t0 is the trace's first
 * timestamp (times are printed relative to it and absolute). c: the records
 * before it, or NULL (a stack slot after the first then names its first
 * frame as a return address).
 */
void raw_print(FILE *fp, struct raw_ctx *c, const union kmt_rec *rec, uint64_t t0,
	       const struct ksyms *ks, const struct gfp_names *gfp);
/* The column legend printed before the records. */
void raw_print_legend(FILE *fp);

#endif /* REPORT_OUT_H */
