/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * out_html.h - kmemtrace-report --html: one self-contained page (inline
 * CSS and SVG, no script, nothing fetched) with the report's tables and
 * charts of sizes, lifetimes and rates over time.
 */
#ifndef OUT_HTML_H
#define OUT_HTML_H

#include "writers/report_out.h"
#include "views/view_life.h"
#include "views/view_stacks.h"

/*
 * Writes the page of a finished analysis (made with RPT_LIFETIMES and
 * RPT_TIMELINE) to path, its stacks filtered by sa (its weight unused).
 * 0; -1 out of memory; an errno value when the file could not be written.
 */
int html_write_file(const char *path, const struct rpt *r, const struct out_opts *o,
		    const struct life_args *la, const struct stacks_args *sa);

#endif /* OUT_HTML_H */
