/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * view_interval.h - the per-interval view shared by kmemtrace-report
 * --interval and kmemtrace-top: allocations, bytes, frees, net live change
 * and fragmentation per cache, call site or kernel stack in each interval
 * of a trace.
 */
#ifndef VIEW_INTERVAL_H
#define VIEW_INTERVAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kmt_reader.h"
#include "core/report_core.h"
#include "sym/sym_kallsyms.h"
#include "views/view.h"
#include "views/view_stacks.h"

/* Sort keys of the rows; ties go to more allocations, then the name. */
enum ivl_key { IK_BYTES, IK_ALLOCS, IK_FREES, IK_NET, IK_FRAG, IK_NAME };

/* "bytes" (= size), "allocs" (= count, hit), "frees", "net" (= live), "frag", "name". */
int ivl_key_parse(const char *s, enum ivl_key *k);
extern const char ivl_keys_help[];

/* What a row is. */
enum ivl_by {
	IVL_BY_CACHE,
	IVL_BY_SITE,
	/* A distinct kernel stack (traces with stacks), like bcc's stackcount -i. */
	IVL_BY_STACK,
};

/* An ivl_* call's return when grouping by stack: the trace has allocations but no stacks. */
#define IVL_NO_STACKS	(-2)
/* What to say then, after the trace's name and ": ". */
extern const char ivl_no_stacks_msg[];

struct ivl_opts {
	uint64_t interval_ns;	/* > 0 */
	enum ivl_by by;
	enum ivl_key sort;
	size_t rows;		/* rows kept per table; 0: all */
	bool has_origin;	/* intervals start at origin; else at the first record */
	uint64_t origin;	/* CLOCK_MONOTONIC ns */
	/*
	 * Intervals close only by ivl_close_now(), whatever the timestamps
	 * (kmemtrace-top following a trace: what arrived in each refresh).
	 */
	bool manual;
};

/* One row: a cache, a call site or a stack over one interval. */
struct ivl_row {
	const char *name;	/* cache name; NULL for a call site or a stack */
	uint64_t addr;		/* call site (a stack's innermost frame) */
	uint32_t stack;		/* the stack's index in rpt_stacks() (IVL_BY_STACK) */
	uint64_t allocs;	/* allocation events, failed ones included */
	uint64_t bytes_req, bytes_alloc;
	uint64_t frees;		/* frees counted for it (see Documentation/kmemtrace-report.1) */
	uint64_t bytes_freed;
	int64_t net;		/* successful allocations - frees */
};

struct ivl_table {
	uint64_t index;		/* 0, 1, ... */
	uint64_t start_ns, end_ns; /* relative to the origin */
	uint64_t origin;	/* absolute ns of interval 0's start */
	uint64_t records;	/* records fed in the interval (all types) */
	uint64_t late;		/* records older than the interval, counted in it (live) */
	uint64_t lost;		/* records the module reported lost in it */
	/* By stack: allocations without one (the module's table was full...), in no row. */
	uint64_t unstacked;
	struct ivl_row total;	/* of every row, shown or not */
	size_t nactive;		/* rows with any activity */
	size_t nrows;		/* rows kept (opts.rows) */
	const struct ivl_row *rows;
	const struct rpt *r;	/* the report fed: the rows' stacks */
};

struct ivl;

/* The view over r, which the caller feeds only through ivl_feed(). NULL: no memory. */
struct ivl *ivl_new(struct rpt *r, const struct ivl_opts *o);
void ivl_free(struct ivl *v);
const struct ivl_opts *ivl_opts(const struct ivl *v);

/*
 * Called for each interval as it closes, in order, empty ones included.
 * The table is valid during the call. Returns 0, or nonzero to stop.
 * By stack, the first interval that closes with allocations fed but none
 * with a stack or a mark of having none (a trace taken without
 * stack_depth) is not emitted: every call below returns IVL_NO_STACKS.
 */
typedef int (*ivl_emit_fn)(const struct ivl_table *t, void *arg);

/*
 * A rotated trace (kmemtraced --max-size): records before cut_ns (its
 * checkpoint's: kept records and sums of what was folded) are fed to the
 * analysis and counted in no interval; the first interval starts at the
 * first record at or after the cut.
 */
void ivl_set_cut(struct ivl *v, uint64_t cut_ns);

/*
 * Feeds records in time order into the report, closing every interval a
 * record's timestamp passes first. A record older than the open interval
 * (live sources deliver some late) is counted in it (table.late).
 * 0, -1 out of memory, or the callback's nonzero value.
 */
int ivl_feed(struct ivl *v, const union kmt_rec *const *recs, size_t n, ivl_emit_fn fn,
	     void *arg);
/* Closes every interval that ends at or before ts (absolute ns). Same returns. */
int ivl_close_until(struct ivl *v, uint64_t ts, ivl_emit_fn fn, void *arg);
/* Closes the open interval now (opts.manual). Same returns. */
int ivl_close_now(struct ivl *v, ivl_emit_fn fn, void *arg);
/* Closes the open interval if anything was fed since the last one closed (trace end). */
int ivl_flush(struct ivl *v, ivl_emit_fn fn, void *arg);
/* Absolute ns at which the open interval ends; UINT64_MAX before the origin is known. */
uint64_t ivl_open_end(const struct ivl *v);
/* Index of the open interval. */
uint64_t ivl_open_index(const struct ivl *v);

/*
 * What the table of an interval names its rows with. ks may be NULL (raw
 * addresses), sl (file:line of a stack's frames) too; name_width 0 sizes
 * the text name column to the names, else names are cut to it. A stack's
 * row is named by its call site and that one's caller; its whole stack,
 * one frame a line, follows the row in text unless one_line (a screen).
 */
struct ivl_out {
	enum ivl_by by;
	const struct ksyms *ks;
	struct srcline *sl;
	int name_width;
	bool one_line;
};

/*
 * A closed interval as tables (views/view.h), valid while the interval's
 * table is: t its rows (JSON key "rows"; text, the interval screen: its
 * heading line, then the columns), total the one row of the figures of
 * every row (the same columns, without a name). The rest is the tables'.
 */
struct ivl_tab {
	struct out_table t, total;
	const struct ivl_table *it;
	const struct ivl_out *o;
	struct out_col cols[20];
	unsigned char colmap[20];	/* cols[i] is the view's column colmap[i] */
	struct out_text_layout text;
	char title[192], none[256];
	char (*names)[256];
	struct stack_frames *frames;	/* by stack: each row's frames as text */
};

/* 0, or -1 out of memory; ivl_tab_free() in either case. */
int ivl_tab_init(struct ivl_tab *v, const struct ivl_table *t, const struct ivl_out *o);
void ivl_tab_free(struct ivl_tab *v);

#endif /* VIEW_INTERVAL_H */
