/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report_meta.h - reads kmemtrace.meta, the daemon's description of the
 * traced machine and run (key value lines), for the report's header.
 */
#ifndef REPORT_META_H
#define REPORT_META_H

#include <stddef.h>
#include <stdint.h>

struct rpt_meta;

/*
 * Loads PATH. NULL with err on failure; *missing is set when the file
 * does not exist (which is not an error for the report).
 */
struct rpt_meta *meta_load(const char *path, char *err, size_t errlen, int *missing);
/* The same for DIR/kmemtrace.meta, a trace directory's. */
struct rpt_meta *meta_load_dir(const char *dir, char *err, size_t errlen, int *missing);
void meta_free(struct rpt_meta *m);

/* Value of the first line with this key, or NULL. */
const char *meta_get(const struct rpt_meta *m, const char *key);
/*
 * Values of every line with this key, in file order (repeated keys such as
 * cpu_node, coverage, slab_alias): *pos starts at 0; NULL after the last.
 */
const char *meta_next(const struct rpt_meta *m, const char *key, size_t *pos);
/* Numeric value: 1 with *v, 0 if absent or not a number. */
int meta_get_u64(const struct rpt_meta *m, const char *key, uint64_t *v);
/*
 * Is the traced kernel (kernel_release, "MAJOR.MINOR...") at least
 * MAJOR.MINOR? 1 or 0; -1 when the metadata does not say.
 */
int meta_kernel_at_least(const struct rpt_meta *m, unsigned int major, unsigned int minor);
/*
 * The module's stack_depth from its stacks file's "# stacks depth D ..."
 * line, given from "depth" on (kmemtrace.meta's stacks_config): D, 0 for
 * no stacks, -1 when cfg does not say.
 */
int meta_stacks_config_depth(const char *cfg);
/* The same from the metadata's stacks_config; -1 without one (a trace before 1.2). */
int meta_stack_depth(const struct rpt_meta *m);

#endif /* REPORT_META_H */
