/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * drain.h - a leaf of kmemtraced (see kmemtraced.h): one thread per traced
 * CPU moving its relay buffer into DIR/cpuN.out. The threads share only
 * struct kmtd_drain with the main thread, which owns it.
 */
#ifndef KMTD_DRAIN_H
#define KMTD_DRAIN_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "kmemtrace_abi.h"
#include "kmtd_util.h"

/* What the main thread and every drain thread share. */
struct kmtd_drain {
	int stop_efd;			/* threads: tracing is off, drain and leave */
	int wake_efd;			/* main thread: a drain thread failed, or a segment is full */
	atomic_bool stopping;
	atomic_bool failed;
	/*
	 * --max-size: every thread writes segment seg_want from the time
	 * seg_cut_ns (CLOCK_MONOTONIC, the records' clock) on. The main
	 * thread sets the cut, then seg_want; a thread acknowledges in its
	 * kmtd_cpu.seg_done once its records before the cut are all in the
	 * older segment's file, closed.
	 */
	bool rotating;
	atomic_uint seg_want;
	_Atomic uint64_t seg_cut_ns;
	/*
	 * Bytes written to segment seg_want, all CPUs: the thread that takes
	 * it past seg_size wakes the main thread (wake_efd), which switches.
	 */
	_Atomic uint64_t seg_total;
	uint64_t seg_size;
	/*
	 * subbufs x subbuf_size of the module's stats, what each ring maps
	 * to; 0 when unknown (then every CPU is read()).
	 */
	uint64_t ring_size;
};

/* What a drain thread's failure came from, for the message that names it. */
enum kmtd_err_source {
	KMTD_ERR_OUTPUT,	/* writing cpuN.out */
	KMTD_ERR_RELAY,		/* reading the CPU's relay file */
	KMTD_ERR_BIND,		/* running the thread on its CPU */
};

/* One traced CPU: its relay file, its output file and its thread. */
struct kmtd_cpu {
	struct kmtd_drain *dr;
	unsigned int cpu;
	int relay_fd;
	int out_fd;
	void *buf;		/* KMTD_READ_CHUNK bytes: relay -> buf -> out file */
	/*
	 * The ring mapped (KMT_IOC_RING_NEXT), or NULL (read() through buf):
	 * records go from it to the file with one copy fewer. ring_taken:
	 * bytes of the extent written last, given back at the next call.
	 */
	const uint8_t *ring;
	uint64_t ring_size, ring_taken;
	pthread_t thread;
	bool thread_started;
	uint64_t bytes;		/* record bytes in the output files after their headers */
	uint64_t bytes_prev;	/* of which in closed segments' files */
	uint64_t next_bytes;	/* written to the next segment's file during a switch */
	uint64_t discarded;	/* bytes thrown away before a -- COMMAND run */
	/* --max-size: the segment out_fd belongs to; seg_done is published. */
	unsigned int seg;
	atomic_uint seg_done;
	int next_fd;			/* a switch under way: the next segment's file */
	unsigned int next_seg;
	uint64_t cut_ns;		/* its cut */
	uint64_t closed_bytes;		/* those of the segment closed last */
	struct kmt_file_header hdr;	/* every file's header, host order */
	const char *outdir;
	int err;		/* errno of the failure that ended this thread, or 0 */
	enum kmtd_err_source err_source;	/* what failed with err */
	char out_path[PATH_MAX + 32];
	char relay_path[PATH_MAX + 32];
};

/*
 * Opens the CPU's relay file and creates its output file with the header
 * run describes: DIR/cpuN.out, or with dr->rotating DIR/seg.SSSSSS/cpuN.out
 * of segment seg (whose directory exists). *cp is set as soon as the CPU's
 * struct exists, even when a later step fails: its owner frees it (and
 * removes its file) then.
 */
int kmtd_cpu_setup(const struct kmtd_run *run, struct kmtd_drain *dr, unsigned int cpu,
		   unsigned int seg, struct kmtd_cpu **cp);
int kmtd_cpu_discard(struct kmtd_cpu *c);
int kmtd_cpu_start(struct kmtd_cpu *c);
void kmtd_cpu_join(struct kmtd_cpu *c);
int kmtd_cpu_finish(struct kmtd_cpu *c, bool failed);
/* The message of the failure that ended c's thread (c->err set), into buf. */
void kmtd_cpu_describe_error(const struct kmtd_cpu *c, char *buf, size_t size);
void kmtd_cpu_free(struct kmtd_cpu *c);

#endif /* KMTD_DRAIN_H */
