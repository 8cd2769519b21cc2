/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report_run.h - kmemtrace-report's pipeline, the options in: finds the
 * trace's files, loads its metadata and symbols, reads and merges it into
 * the analysis (or prints its records), and writes the chosen output.
 */
#ifndef REPORT_RUN_H
#define REPORT_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/report_core.h"
#include "sym/sym_srcline.h"
#include "views/view.h"
#include "views/view_growth.h"
#include "views/view_interval.h"
#include "views/view_life.h"
#include "views/view_stacks.h"

/* What the command line asked for; kmemtrace-report's main fills it. */
struct report_job {
	char **inputs;		/* DIR, or FILEs; none: the current directory */
	size_t ninputs;
	/*
	 * The view, format, sort and selected view (xview) as parsed; the
	 * trace's facts, symbols and metadata are filled in by report_run().
	 */
	struct out_opts out;
	struct rpt_filter f;
	bool raw;		/* --raw: every record, no analysis */
	bool allow_trunc, no_progress;
	unsigned int jobs;	/* -j: threads; 2 or more reads the files ahead of the analysis */
	bool folded;		/* --folded: stacks for flame graphs, weighted by stk.weight */
	bool lifetimes;		/* --lifetimes: the analysis keeps objects' ages */
	const char *vmlinux, *moddir;
	char **kos;
	size_t nkos;
	enum srcline_resolver resolver;
	uint64_t interval_ns;	/* --interval; 0: one summary */
	enum ivl_key ivl_sort;
	enum ivl_by ivl_by;	/* --interval: per cache, --caller or --stacks */
	struct stacks_args stk;
	struct life_args life;
	const char *html;	/* --html FILE, or NULL */
	const char *pprof;	/* --pprof FILE, or NULL */
	/*
	 * --at or --diff (growth_opt names which, growth_val its value, for
	 * messages); NULL: neither. report_run() fills growth.g.
	 */
	const char *growth_opt, *growth_val;
	struct growth_args growth;
	const char *time_val;	/* --time's value as given, for messages; NULL: none */
};

/*
 * Runs the report; messages go to stderr prefixed "kmemtrace-report: ".
 * Returns the exit status (KMT_EXIT_*).
 */
int report_run(struct report_job *j);

#endif /* REPORT_RUN_H */
