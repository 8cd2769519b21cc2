/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * out_interval.h - the --interval document: each closed interval's table
 * (views/view_interval.h) in text, CSV or JSON as it closes.
 */
#ifndef OUT_INTERVAL_H
#define OUT_INTERVAL_H

#include <stdbool.h>
#include <stdio.h>

#include "views/view.h"
#include "views/view_interval.h"

/* JSON: the document's head up to "intervals":[; CSV: the one header row. 0, or -1 (memory). */
int ivl_doc_begin(FILE *fp, enum out_fmt fmt, const struct ivl_opts *vo,
		  const struct ivl_out *o, const char *trace);
/* One interval (first: the document's first). 0, or -1 out of memory. */
int ivl_doc_table(FILE *fp, enum out_fmt fmt, const struct ivl_table *t,
		  const struct ivl_out *o, bool first);
/* JSON: closes the document. */
void ivl_doc_end(FILE *fp, enum out_fmt fmt);

#endif /* OUT_INTERVAL_H */
