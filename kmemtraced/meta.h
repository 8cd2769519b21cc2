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
#define KMTD_KALLSYMS_LOADED	"kallsyms.loaded"

/* A name in /sys/kernel/slab and the cache directory it is or links to. */
struct kmtd_slab_name {
	char *name;
	char *target;
};

/* A module as /proc/modules showed it: a load is a name at a base. */
struct kmtd_mod {
	char *line;			/* its line of the modules file, without "\n" */
	char name[64];
	unsigned long long base, size;
	bool gone;			/* unloaded since */
};

/*
 * What meta.c keeps from the start-of-run kmemtrace.meta for the end-of-run
 * one; its owner zeroes it and leaves it to meta.c.
 */
struct kmtd_meta {
	struct kmtd_mod *mods;		/* every load seen: at start, then during the trace */
	size_t nmods, mods_cap;
	char *mod_changes;		/* "+LINE" and "-LINE" lines seen, not yet in the file */
	size_t changes_len;
	bool changes_head;		/* the modules file has the changes' comment line */
	bool changes_failed;		/* writing them failed: left for the end */
	char *loaded_syms;		/* /proc/kallsyms lines of the "+" modules, and init_kallsyms' */
	size_t loaded_len;
	bool mods_failed;		/* a scan failed: said once */
	char *coverage;			/* the module's coverage file, NULL: it has none */
	char *stacks_start, *stacks_end;	/* its stacks file (1.2), NULL: none */
	char *filter_start, *filter_end;	/* its filter file, NULL: none */
	struct kmtd_slab_name *slab;	/* SLUB's names, sorted, at start and at end */
	size_t nslab, slab_cap;
};

int kmtd_write_kallsyms(const struct kmtd_run *run);
/* The modules file from /proc/modules, each load remembered in m. */
int kmtd_write_modules(const struct kmtd_run *run, struct kmtd_meta *m);
/*
 * Reads /proc/modules again (every RESCAN_MS while tracing): a module
 * loaded since (a name at a new base) becomes a "+" line, with its
 * kallsyms lines read now (and its init symbols kmemtrace.ko kept); one
 * gone, a "-" line. No error: a failed scan
 * is said once and the trace goes on (its modules file then says less).
 */
void kmtd_scan_modules(const struct kmtd_run *run, struct kmtd_meta *m);
/*
 * At the end, after a last scan: appends the changes to the modules file
 * and writes kallsyms.loaded when a module was loaded; frees what the
 * scans kept. -1 when a file could not be written.
 */
int kmtd_finish_modules(const struct kmtd_run *run, struct kmtd_meta *m);
/* Frees what the scans kept, without writing (a run that failed). */
void kmtd_forget_modules(struct kmtd_meta *m);
/*
 * kmemtrace.meta, at the start (final false) and again at the end. Each
 * call also reads the module's coverage file (at the end with the calls
 * its probes missed) and adds the names /sys/kernel/slab shows then (a
 * cache created during the trace is there at its end; one destroyed, at
 * its start); the final call frees what m holds.
 */
int kmtd_write_meta(const struct kmtd_run *run, struct kmtd_meta *m, bool final);

#endif /* KMTD_META_H */
