/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report_slab.h - what kmemtrace.meta says about the traced kernel's slab
 * allocator: which allocation and free paths the module recorded (its
 * coverage lines) and which cache names SLUB merged into one cache (the
 * slab_alias lines), for the report's header, the certainty of double
 * frees and the names a cache is shown and selected by.
 */
#ifndef REPORT_SLAB_H
#define REPORT_SLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/report_meta.h"

/* What a path's objects are: it decides what missing it does to the report. */
enum slab_path_kind {
	SLAB_PATH_CACHE_ALLOC,	/* hands out kmem_cache objects: kmem_cache_alloc_bulk */
	SLAB_PATH_KMALLOC,	/* hands out kmalloc objects: kmalloc_nolock */
	SLAB_PATH_FREE,		/* frees objects: kmem_cache_free_bulk, kfree_nolock */
};

/* One coverage line: "coverage PATH HOW DETAIL...". */
struct slab_cov {
	const char *path;	/* kmalloc, kmem_cache_alloc_bulk, ... */
	const char *how;	/* tracepoint, kprobe, kretprobe, absent, unseen ("" if none) */
	const char *detail;	/* the rest of the line, "" when there is none */
	enum slab_path_kind kind;
	/*
	 * Calls the path's probe let pass unrecorded, since the module was
	 * loaded: the "(N calls missed)" the module puts at the end of DETAIL.
	 */
	uint64_t calls_missed;
	/*
	 * Events of the path are not all in the trace: HOW is unseen, or a word
	 * this reader does not know (never taken as seen), or calls_missed.
	 */
	bool missed;
};

struct rpt_slab;

/*
 * Reads the coverage and slab_alias lines of m (NULL: none). NULL only
 * when out of memory. Malformed lines are skipped.
 */
struct rpt_slab *slab_info_new(const struct rpt_meta *m);
void slab_info_free(struct rpt_slab *s);

/* Coverage lines, in the module's order; 0 when the metadata has none. */
size_t slab_ncov(const struct rpt_slab *s);
const struct slab_cov *slab_cov(const struct rpt_slab *s, size_t i);
/* Coverage lines that are missed. */
size_t slab_nmissed(const struct rpt_slab *s);
/*
 * Every path that hands out kmem_cache objects is in the trace: there are
 * coverage lines and none of SLAB_PATH_CACHE_ALLOC is missed.
 */
bool slab_cache_allocs_seen(const struct rpt_slab *s);
/* A path that hands out kmalloc objects is missed (only coverage lines say so). */
bool slab_kmalloc_allocs_missed(const struct rpt_slab *s);

/* slab_alias lines read (names SLUB's sysfs showed). */
size_t slab_nnames(const struct rpt_slab *s);
/*
 * The other names of the cache called name (a CACHE_DESC name, which the
 * module cuts to 31 bytes): every name SLUB's sysfs shows for the same
 * cache, but name itself and SLUB's generated ":..." names, in
 * alphabetical order. Up to max go to out (pointers into s); returns how
 * many there are.
 */
size_t slab_aliases(const struct rpt_slab *s, const char *name, const char **out, size_t max);
/*
 * Whether want names the cache called name: name itself, one of its
 * aliases, or the name SLUB's sysfs gives the merged cache (":0000096").
 * s may be NULL (then only name itself).
 */
bool slab_names_cache(const struct rpt_slab *s, const char *want, const char *name);

#endif /* REPORT_SLAB_H */
