/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * view_growth.h - kmemtrace-report --at=T and --diff=T1,T2: what was
 * outstanding at a time of the trace, and what grew between two times,
 * per call site, per cache and per kernel stack, call sites that grew most
 * first, with the objects allocated in the window still live at its end
 * (the survivors) and their ages.
 */
#ifndef VIEW_GROWTH_H
#define VIEW_GROWTH_H

#include <stdbool.h>
#include <stdint.h>

#include "core/rpt_growth.h"
#include "views/view.h"

/* The view's options (out_opts.view_args). */
struct growth_args {
	uint64_t t1, t2;	/* ns after the first record; --at: t1 only */
	bool diff;		/* --diff (else --at) */
	/* The snapshots, taken while the trace is read (report_run.c). */
	const struct growth *g;
};

extern const struct report_view view_growth;

#endif /* VIEW_GROWTH_H */
