/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtraced.h - the daemon's state, owned by kmemtraced.c, and the map of
 * how kmemtraced's files depend on each other.
 *
 * Three layers; a file calls only functions of the layers below its own:
 *
 *   kmemtraced.c   options, struct kmtd, the main loop, signals, COMMAND,
 *        |         starting and stopping the drain threads
 *        v
 *   env.c  drain.c  meta.c  formats.c  filter.c
 *        |         leaves: each is given what it needs (paths, struct
 *        v         kmtd_run, struct kmtd_drain, struct kmtd_meta) and
 *                  calls no other leaf
 *   kmtd_util.c    messages, file helpers, struct kmtd_run
 *
 * Only kmemtraced.c includes this header: the leaves never see struct
 * kmtd, so none can reach into the state the main loop owns. Each leaf's
 * header (env.h, drain.h, meta.h, formats.h, filter.h) says what it offers. scripts/check-layers
 * checks the calls in the built objects (tests/host/22-layers.t).
 */
#ifndef KMEMTRACED_H
#define KMEMTRACED_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "drain.h"
#include "env.h"
#include "filter.h"
#include "formats.h"
#include "kmtd_util.h"
#include "meta.h"
#include "rotate.h"

struct kmtd {
	/* Options; -o, -f and COMMAND are in run, which the files describe. */
	const char *debugfs;
	unsigned long seconds;		/* 0: no time limit */
	bool quiet, verbose;
	/* --tgid, --pid, --cgroup, --size, --call-site: a filter for this run. */
	struct kmtd_filter filter;
	char filter_text[1024];		/* the module's words for it */
	char filter_old[1024];		/* the filter it replaced, put back at the end */
	bool filter_set;		/* written to the module: put the old one back */

	struct kmtd_run run;		/* read by drain.c and meta.c */
	int lock_fd;			/* run.kdir, flock()ed: one reader at a time */

	/* --max-size: segments, the checkpoint of the dropped ones (rotate.c). */
	const char *keep_dropped;	/* --keep-dropped DIR2: move, not remove */
	struct kmt_ckpt *ckpt;
	unsigned int seg_cur;		/* every thread writes it (1 without --max-size) */
	unsigned int seg_oldest;	/* the oldest segment on disk */
	uint64_t *seg_cut;		/* [seg]: when segment seg began; [1] the start */
	uint64_t *seg_bytes;		/* [seg]: record bytes of a closed segment */
	size_t seg_cap;
	uint64_t ckpt_bytes;		/* the checkpoint's files */
	/*
	 * The fold thread (kmemtraced.c) drops segments seg_oldest up to
	 * fold_until - 1. fold_lock guards seg_* and ckpt_bytes above, these
	 * and run.seg_dropped, dropped_bytes and dropped_cut_ns.
	 */
	pthread_t fold_thread;
	pthread_mutex_t fold_lock;
	pthread_cond_t fold_cond;
	unsigned int fold_until;
	bool fold_started, fold_stop, fold_failed;

	struct kmtd_drain drain;	/* shared with the drain threads */
	struct kmtd_cpu *cpus[KMTD_MAX_CPUS];
	unsigned int ncpus;		/* entries of cpus[] in use (highest + 1) */

	struct kmtd_stat *stats_start, *stats_end;	/* [KMTD_MAX_CPUS] */
	struct kmtd_filtered filtered_start, filtered_end;	/* the filter file's sums */
	pid_t child;
	struct kmtd_meta meta;		/* meta.c's, between its two writes */
};

#endif /* KMEMTRACED_H */
