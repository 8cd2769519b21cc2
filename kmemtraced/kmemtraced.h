/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kmemtraced.h - state shared by the parts of kmemtraced: the environment
 * checks, the per-CPU drain threads and the metadata writer.
 */
#ifndef KMEMTRACED_H
#define KMEMTRACED_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kmemtrace_abi.h"

#define KMTD_NAME		"kmemtraced"
#define KMTD_DEFAULT_DEBUGFS	"/sys/kernel/debug"
#define KMTD_SYSMOD		"/sys/module/kmemtrace"
#define KMTD_META		"kmemtrace.meta"
#define KMTD_KALLSYMS		"kallsyms"
#define KMTD_MODULES		"modules"
/* SLUB's caches and the names merged into them (sysfs, CONFIG_SLUB_DEBUG). */
#define KMTD_SLAB_DIR		"/sys/kernel/slab"
/* With KMEMTRACED_TEST_FAKE_DEBUGFS=1 only: a directory read instead of it. */
#define KMTD_TEST_SLAB_ENV	"KMEMTRACED_TEST_SLAB_DIR"
/*
 * Bytes each drain thread reads from relay at a time, a whole number of
 * records: with the thread's stack, the memory a CPU costs kmemtraced,
 * whatever the trace's length or the module's buffer size.
 */
#define KMTD_READ_CHUNK		(256u * 1024)
/* Highest CPU number we handle: far above any machine relay runs on. */
#define KMTD_MAX_CPUS		8192

/* One traced CPU: its relay file, its output file and its thread. */
struct kmtd_cpu {
	struct kmtd *d;
	unsigned int cpu;
	int relay_fd;
	int out_fd;
	void *buf;		/* KMTD_READ_CHUNK bytes: relay -> buf -> out file */
	pthread_t thread;
	bool thread_started;
	uint64_t bytes;		/* record bytes in the output file after the header */
	uint64_t discarded;	/* bytes thrown away before a -- COMMAND run */
	int err;		/* errno of the failure that ended this thread, or 0 */
	bool err_relay;		/* err came from the relay file, not the output */
	char out_path[PATH_MAX + 32];
	char relay_path[PATH_MAX + 32];
};

/* A name in /sys/kernel/slab and the cache directory it is or links to. */
struct kmtd_slab_name {
	char *name;
	char *target;
};

/* Per-CPU counters of the module's stats file. */
struct kmtd_stat {
	uint64_t emitted, written, dropped;
	bool present;
};

struct kmtd {
	/* Options. */
	const char *outdir;
	const char *debugfs;
	unsigned long seconds;		/* 0: no time limit */
	bool force, quiet, verbose;
	char **cmd;			/* NULL-terminated, or NULL */

	char kdir[PATH_MAX];		/* <debugfs>/kmemtrace */
	int lock_fd;			/* kdir, flock()ed: one reader at a time */
	unsigned int abi_major, abi_minor;
	unsigned int word_bits;
	uint32_t page_size;
	size_t subbuf_size;		/* 0 when the module does not say */

	struct kmtd_cpu *cpus[KMTD_MAX_CPUS];
	unsigned int ncpus;		/* entries of cpus[] in use (highest + 1) */

	int stop_efd;			/* threads: tracing is off, drain and leave */
	int wake_efd;			/* main thread: a drain thread failed */
	atomic_bool stopping;
	atomic_bool failed;

	uint64_t start_mono_ns, start_real_ns, end_mono_ns, end_real_ns;
	uint64_t overruns_start, overruns_end;
	bool have_overruns_start, have_overruns_end;
	struct kmtd_stat *stats_start, *stats_end;	/* [KMTD_MAX_CPUS] */

	pid_t child;
	int command_status;		/* exit code form: 0..255, 128+signal */
	bool command_done;
	const char *stop_reason;
	char error[PATH_MAX + 256];	/* first fatal error, for the metadata */

	/* For kmemtrace.meta (meta.c), gathered when tracing starts. */
	char *coverage;			/* the module's coverage file, NULL: it has none */
	char *stacks_start, *stacks_end;	/* its stacks file (1.2), NULL: none */
	struct kmtd_slab_name *slab;	/* SLUB's names, sorted, at start and at end */
	size_t nslab, slab_cap;
};

/* How kmemtrace.ko sized its buffers: the "# buffers" line of its stats. */
struct kmtd_buffers {
	char sized[16];			/* given, default or fitted */
	unsigned int subbufs, subbuf_size, cpus, mem_share;
	uint64_t per_cpu, total, available, allowed;	/* bytes */
};

/* Set by the signal handler, read by the main loop. */
extern volatile sig_atomic_t kmtd_signal;

/* Messages: "kmemtraced: ..." on stderr. */
void kmtd_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* env.c: checks and small-file helpers. */
int kmtd_check_root(void);
int kmtd_check_debugfs(struct kmtd *d, bool fake);
int kmtd_check_module(struct kmtd *d);
int kmtd_open_kfile(const struct kmtd *d, const char *name, int flags);
void kmtd_explain_open_error(const char *path, int err);
int kmtd_read_file(const char *path, char *buf, size_t size);
int kmtd_read_kfile(const struct kmtd *d, const char *name, char *buf, size_t size);
int kmtd_read_u64(const char *text, uint64_t *val);
int kmtd_get_enabled(const struct kmtd *d, int *enabled);
int kmtd_set_enabled(const struct kmtd *d, int on);
int kmtd_read_overruns(const struct kmtd *d, uint64_t *val);
int kmtd_read_stats(const struct kmtd *d, struct kmtd_stat *st);
int kmtd_read_buffers(const struct kmtd *d, struct kmtd_buffers *b);
void kmtd_print_buffers(const struct kmtd *d);
int kmtd_parse_cpulist(const char *text, bool *set, unsigned int max);
unsigned int kmtd_word_bits(const char *machine);
int kmtd_write_all(int fd, const void *buf, size_t len);

/*
 * meta.c: kallsyms, modules and kmemtrace.meta. kmtd_write_meta() also
 * reads the module's coverage file (at the end with the calls its probes
 * missed) and takes a kmtd_slab_snapshot(), which adds the names
 * /sys/kernel/slab shows then (a cache created during the trace is there
 * at its end; one destroyed, at its start); the final call frees both.
 */
int kmtd_write_kallsyms(const struct kmtd *d);
int kmtd_write_modules(const struct kmtd *d);
int kmtd_write_meta(struct kmtd *d, bool final);
int kmtd_slab_snapshot(struct kmtd *d);
int kmtd_create_file(const struct kmtd *d, const char *path);

/* drain.c: the per-CPU threads. */
int kmtd_cpu_setup(struct kmtd *d, unsigned int cpu);
int kmtd_cpu_discard(struct kmtd_cpu *c);
int kmtd_cpu_start(struct kmtd_cpu *c);
void kmtd_cpu_join(struct kmtd_cpu *c);
int kmtd_cpu_finish(struct kmtd_cpu *c, bool failed);
void kmtd_cpu_free(struct kmtd_cpu *c);

#endif /* KMEMTRACED_H */
