/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * filter.h - a leaf of kmemtraced (see kmemtraced.h): the filter at the
 * source its options ask of kmemtrace.ko (--tgid, --pid, --cgroup,
 * --size, --call-site, --cache), resolved to what the module takes (a cgroup path
 * to its v2 id, a function name to its address range from
 * /proc/kallsyms) and written as the module's filter words
 * (Documentation/trace-format.md, section 7).
 */
#ifndef KMTD_FILTER_H
#define KMTD_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* As many call sites as the module takes (kmod/kmt_internal.h). */
#define KMTD_FILTER_SITES	4

struct kmtd_filter {
	bool any;			/* an option asked for a filter */
	long tgid, pid;			/* 0: not asked */
	const char *cgroup;		/* a path, or a number (the id itself) */
	uint64_t cgroup_id;
	bool has_size;
	uint64_t size_min, size_max;	/* bytes, both included */
	const char *cache;		/* a cache name, or kmalloc-N */
	char cache_name[64];		/* the module's name for it (a merged cache's) */
	unsigned int nsites;
	const char *site_name[KMTD_FILTER_SITES];
	uint64_t site_start[KMTD_FILTER_SITES], site_end[KMTD_FILTER_SITES];
};

/*
 * Option values: 0, or -1 with a message naming what was wrong (the
 * caller names the option). "MIN-MAX", "MIN-" or "N" (exactly N) for a
 * size.
 */
int kmtd_filter_parse_size(const char *arg, uint64_t *lo, uint64_t *hi);
int kmtd_filter_parse_pid(const char *arg, long *pid);
/* A cache name the module's filter file can take: no blank or comma, under 64 bytes. */
int kmtd_filter_parse_cache(const char *arg);
/*
 * Resolves --cgroup and --call-site (each site name to the range from
 * its address to the next higher symbol's in /proc/kallsyms), then
 * writes the module's filter words into buf. 0, or -1 with a message.
 */
int kmtd_filter_resolve(struct kmtd_filter *f, char *buf, size_t size);

#endif /* KMTD_FILTER_H */
