/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * meta.h - a leaf of kmemtraced (see kmemtraced.h): the files beside the
 * traces, kallsyms, modules and kmemtrace.meta. They describe the run the
 * main thread sets out in struct kmtd_run, which they only read.
 */
#ifndef KMTD_META_H
#define KMTD_META_H

#include <stdbool.h>
#include <stddef.h>

#include "kmtd_util.h"

#define KMTD_META		"kmemtrace.meta"
#define KMTD_KALLSYMS		"kallsyms"
#define KMTD_MODULES		"modules"

/* A name in /sys/kernel/slab and the cache directory it is or links to. */
struct kmtd_slab_name {
	char *name;
	char *target;
};

/*
 * What meta.c keeps from the start-of-run kmemtrace.meta for the end-of-run
 * one; its owner zeroes it and leaves it to meta.c.
 */
struct kmtd_meta {
	char *coverage;			/* the module's coverage file, NULL: it has none */
	char *stacks_start, *stacks_end;	/* its stacks file (1.2), NULL: none */
	struct kmtd_slab_name *slab;	/* SLUB's names, sorted, at start and at end */
	size_t nslab, slab_cap;
};

int kmtd_write_kallsyms(const struct kmtd_run *run);
int kmtd_write_modules(const struct kmtd_run *run);
/*
 * kmemtrace.meta, at the start (final false) and again at the end. Each
 * call also reads the module's coverage file (at the end with the calls
 * its probes missed) and adds the names /sys/kernel/slab shows then (a
 * cache created during the trace is there at its end; one destroyed, at
 * its start); the final call frees what m holds.
 */
int kmtd_write_meta(const struct kmtd_run *run, struct kmtd_meta *m, bool final);

#endif /* KMTD_META_H */
