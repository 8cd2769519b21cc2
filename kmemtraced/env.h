/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * env.h - a leaf of kmemtraced (see kmemtraced.h): the checks made before
 * tracing and the module's small debugfs files. Every call takes the
 * module's directory, <debugfs>/kmemtrace, rather than the daemon's state.
 */
#ifndef KMTD_ENV_H
#define KMTD_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Per-CPU counters of the module's stats file. */
struct kmtd_stat {
	uint64_t emitted, written, dropped;
	bool present;
};

/* How kmemtrace.ko sized its buffers: the "# buffers" line of its stats. */
struct kmtd_buffers {
	char sized[16];			/* given, default or fitted */
	unsigned int subbufs, subbuf_size, cpus, mem_share;
	uint64_t per_cpu, total, available, allowed;	/* bytes */
};

int kmtd_check_root(void);
int kmtd_check_debugfs(const char *debugfs, bool fake, bool verbose);
/*
 * Finds kmemtrace.ko's directory under debugfs (into kdir), locks it (the
 * lock is *lock_fd's: it lasts while that stays open) and reads its ABI.
 */
int kmtd_check_module(const char *debugfs, char *kdir, size_t kdir_size, int *lock_fd,
		      unsigned int *abi_major, unsigned int *abi_minor);
int kmtd_get_enabled(const char *kdir, int *enabled);
int kmtd_set_enabled(const char *kdir, int on);
int kmtd_read_overruns(const char *kdir, uint64_t *val);
/* st has KMTD_MAX_CPUS entries. */
int kmtd_read_stats(const char *kdir, struct kmtd_stat *st);
int kmtd_read_buffers(const char *kdir, struct kmtd_buffers *b);
void kmtd_print_buffers(const char *kdir);
unsigned int kmtd_word_bits(const char *machine);
/*
 * The module's filter file (Documentation/trace-format.md, section 7):
 * the filter in force (its first line, "none" when there is none), and
 * setting one ("none" removes it). -1 with a message.
 */
int kmtd_get_filter(const char *kdir, char *buf, size_t size);
/* What the filter left out, summed over the CPUs of the module's filter file. */
struct kmtd_filtered {
	char spec[256];			/* the filter in force: its first line */
	uint64_t allocs, frees, untracked;
	bool present;			/* the module has the file */
};
void kmtd_read_filtered(const char *kdir, struct kmtd_filtered *f);
int kmtd_set_filter(const char *kdir, const char *text);

#endif /* KMTD_ENV_H */
