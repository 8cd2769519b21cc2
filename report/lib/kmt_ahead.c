// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_ahead.c - a merge read ahead on a thread of its own (kmt_ahead.h).
 *
 * A ring of AHEAD_SLOTS batches between one writer, the thread, and one
 * or more readers (the caller, and with a divided analysis its shards'
 * threads, each of which reads every batch). The thread fills the next
 * free slot with copies of the records kmt_merge_next_batch() points to
 * (they live in the files' read buffers, which its next call reuses) and
 * publishes it; each reader takes the slots in order, each until its
 * next call. Counters, each written by one side, say which slots are
 * whose: a slot is free again once every reader gave it back. A side
 * waits on a condition only when the ring gives it nothing to do.
 *
 * The two sides run about as fast as each other (Documentation/
 * architecture.md, "The report on more than one core"), so the caller
 * often finds the ring empty for a few microseconds. Put to sleep then, it
 * waited for the scheduler (in a virtual machine, for the host's) far
 * longer than the batch took: so it spins a while first, AHEAD_SPIN_NS,
 * the time the thread takes for two or three batches. The thread, when the
 * ring is full, spins as long for a slot before it sleeps until half the
 * ring is free: sleeping at once, it had the caller wake it every four
 * batches, a system call and an interprocessor interrupt that were 5% of
 * the caller's time (-j 2 on 100 M events: 2.29 s, 1.96 s spinning).
 * Neither side spins when the threads outnumber the CPUs (a->spin).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kmt_ahead.h"

/*
 * Eight batches of 1024 records, 576 KiB with their pointers: the ring of
 * 4096-record batches, 2.3 MiB, was more than a core's L2 cache here, and
 * -j 2 on 100 M events took 2.10-2.19 s where it takes 1.95-2.04 (512:
 * 1.97-2.03).
 */
#define AHEAD_SLOTS	8
#define AHEAD_BATCH	1024
#define AHEAD_SPIN_NS	50000

/* The counters wrap at 2^32: slot = counter % AHEAD_SLOTS must not jump there. */
_Static_assert((AHEAD_SLOTS & (AHEAD_SLOTS - 1)) == 0, "AHEAD_SLOTS is a power of two");

struct ahead_slot {
	int n;		/* records in it, may be 0 */
	int last;	/* 1: more follow; 0: the end; -1: the merge's error after them */
	const union kmt_rec *refs[AHEAD_BATCH];
	union kmt_rec recs[AHEAD_BATCH];
};

/*
 * One reader's side of the ring, on a cache line of its own: released is
 * the one counter it writes that the thread reads.
 */
struct ahead_reader {
	atomic_uint released;	/* slots given back since the start */
	unsigned int taken;	/* slots taken, the held one included */
	bool held;		/* it holds slot taken - 1 (its last batch) */
	bool ended;		/* it saw the last slot: end_rc is the answer */
	int end_rc;
} __attribute__((aligned(64)));

struct kmt_ahead {
	struct kmt_merge *m;
	pthread_t thread;
	/*
	 * Slots published by the thread since the start (unsigned: it wraps
	 * with the readers' counters); the thread fills slot published %
	 * AHEAD_SLOTS while every reader has given back all but fewer than
	 * AHEAD_SLOTS of them.
	 */
	atomic_uint published;
	atomic_bool stop;	/* the caller is done: the thread ends */
	atomic_uint thread_asleep;	/* 1 while the thread waits on wake */
	atomic_uint readers_asleep;	/* how many readers wait on wake */
	pthread_mutex_t lock;	/* only to sleep and to wake */
	pthread_cond_t wake;
	unsigned int nreaders;
	bool spin;		/* every side has a CPU of its own: waits spin first */
	struct ahead_slot slot[AHEAD_SLOTS];
	struct ahead_reader rd[];
};

/*
 * Sleeps until ready(a, rd). The side that makes it true wakes the
 * sleepers only if it sees one counted in *asleep: the count is raised
 * before ready() is asked again and the counters are sequentially
 * consistent, so one of the two sees the other's change, and the lock
 * keeps the wake from falling between the question and the sleep.
 */
static void sleep_until(struct kmt_ahead *a, bool (*ready)(struct kmt_ahead *, struct ahead_reader *),
			struct ahead_reader *rd, atomic_uint *asleep)
{
	pthread_mutex_lock(&a->lock);
	atomic_fetch_add(asleep, 1);
	while (!ready(a, rd))
		pthread_cond_wait(&a->wake, &a->lock);
	atomic_fetch_sub(asleep, 1);
	pthread_mutex_unlock(&a->lock);
}

static void wake_all(struct kmt_ahead *a)
{
	pthread_mutex_lock(&a->lock);
	pthread_cond_broadcast(&a->wake);
	pthread_mutex_unlock(&a->lock);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A spinning core's hint to its sibling threads and to the hypervisor. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/*
 * Spins until ready(a, rd), AHEAD_SPIN_NS at most: whether it became so.
 * A side the other has to wake costs that side a system call (and in a
 * virtual machine an interprocessor interrupt) and itself the scheduler's
 * delay, where the other often has what it waits for within microseconds.
 */
static bool spin_until(struct kmt_ahead *a, bool (*ready)(struct kmt_ahead *, struct ahead_reader *),
		       struct ahead_reader *rd)
{
	uint64_t until = 0;
	unsigned int i;

	if (!a->spin)
		return ready(a, rd);
	for (i = 0; !ready(a, rd); i++) {
		cpu_relax();
		/* The clock is asked once each 64 questions. */
		if (i % 64 == 0) {
			uint64_t t = now_ns();

			if (!until)
				until = t + AHEAD_SPIN_NS;
			else if (t >= until)
				return false;
		}
	}
	return true;
}

/* How many published slots the reader furthest behind has not given back. */
static unsigned int behind(struct kmt_ahead *a, unsigned int published)
{
	unsigned int most = 0, i;

	for (i = 0; i < a->nreaders; i++) {
		unsigned int d = published - atomic_load(&a->rd[i].released);

		if (d > most)
			most = d;
	}
	return most;
}

/* The thread may fill a slot: told to stop, or half the ring is free. */
static bool thread_ready(struct kmt_ahead *a, struct ahead_reader *rd)
{
	(void)rd;
	return atomic_load(&a->stop) ||
	       behind(a, atomic_load(&a->published)) <= AHEAD_SLOTS / 2;
}

/* The thread may fill a slot: told to stop, or one is free. */
static bool thread_may_fill(struct kmt_ahead *a, struct ahead_reader *rd)
{
	(void)rd;
	return atomic_load(&a->stop) || behind(a, atomic_load(&a->published)) < AHEAD_SLOTS;
}

/* The reader may take a slot. */
static bool reader_ready(struct kmt_ahead *a, struct ahead_reader *rd)
{
	return atomic_load(&a->published) != rd->taken;
}

/* Fills s from the merge: until it is full, the merge ends or fails. */
static void fill(struct kmt_ahead *a, struct ahead_slot *s)
{
	int n = 0, rc = 1, i;

	while (n < AHEAD_BATCH) {
		rc = kmt_merge_next_batch(a->m, s->refs + n, (size_t)(AHEAD_BATCH - n));
		if (rc <= 0)
			break;
		for (i = n; i < n + rc; i++) {
			s->recs[i] = *s->refs[i];
			s->refs[i] = &s->recs[i];
		}
		n += rc;
	}
	s->n = n;
	s->last = rc > 0 ? 1 : rc;
}

static void *ahead_thread(void *arg)
{
	struct kmt_ahead *a = arg;
	bool more = true;

	while (more) {
		unsigned int p = atomic_load(&a->published);

		if (behind(a, p) == AHEAD_SLOTS && !spin_until(a, thread_may_fill, NULL))
			sleep_until(a, thread_ready, NULL, &a->thread_asleep);
		if (atomic_load(&a->stop))
			break;
		/* The slot is the thread's alone until it is published. */
		fill(a, &a->slot[p % AHEAD_SLOTS]);
		more = a->slot[p % AHEAD_SLOTS].last == 1;
		atomic_store(&a->published, p + 1);
		if (atomic_load(&a->readers_asleep))
			wake_all(a);
	}
	return NULL;
}

unsigned int kmt_cpus_available(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	return CPU_COUNT(&set) > 0 ? (unsigned int)CPU_COUNT(&set) : 1;
}

struct kmt_ahead *kmt_ahead_start_readers(struct kmt_merge *m, unsigned int nreaders)
{
	struct kmt_ahead *a;
	int err;

	if (!nreaders) {
		errno = EINVAL;
		return NULL;
	}
	a = aligned_alloc(64, (sizeof(*a) + nreaders * sizeof(a->rd[0]) + 63) / 64 * 64);
	if (!a)
		return NULL;
	memset(a, 0, sizeof(*a) + nreaders * sizeof(a->rd[0]));
	a->m = m;
	a->nreaders = nreaders;
	/*
	 * A side that spins while more threads than CPUs share them takes the
	 * CPU from the side it waits for: -j 3 on two CPUs, 20 M events, took
	 * 1.40-1.58 s with the reading thread spinning, 1.18-1.25 s without.
	 */
	a->spin = nreaders + 1 <= kmt_cpus_available();
	err = pthread_mutex_init(&a->lock, NULL);
	if (err)
		goto err_free;
	err = pthread_cond_init(&a->wake, NULL);
	if (err)
		goto err_lock;
	err = pthread_create(&a->thread, NULL, ahead_thread, a);
	if (err)
		goto err_wake;
	return a;

err_wake:
	pthread_cond_destroy(&a->wake);
err_lock:
	pthread_mutex_destroy(&a->lock);
err_free:
	free(a);
	errno = err;
	return NULL;
}

struct kmt_ahead *kmt_ahead_start(struct kmt_merge *m)
{
	return kmt_ahead_start_readers(m, 1);
}

/* Gives the reader's held slot back to the thread. */
static void give_back(struct kmt_ahead *a, struct ahead_reader *rd)
{
	if (!rd->held)
		return;
	rd->held = false;
	atomic_store(&rd->released, rd->taken);
	if (atomic_load(&a->thread_asleep))
		wake_all(a);
}

int kmt_ahead_next_of(struct kmt_ahead *a, unsigned int reader, const union kmt_rec *const **recs)
{
	struct ahead_reader *rd = &a->rd[reader];
	struct ahead_slot *s;

	give_back(a, rd);
	while (!rd->ended) {
		if (!spin_until(a, reader_ready, rd))
			sleep_until(a, reader_ready, rd, &a->readers_asleep);
		s = &a->slot[rd->taken % AHEAD_SLOTS];
		rd->taken++;
		rd->held = true;
		if (s->last != 1) {
			rd->ended = true;
			rd->end_rc = s->last;
		}
		if (s->n) {
			*recs = s->refs;
			return s->n;
		}
		give_back(a, rd);
	}
	return rd->end_rc;
}

int kmt_ahead_next(struct kmt_ahead *a, const union kmt_rec *const **recs)
{
	return kmt_ahead_next_of(a, 0, recs);
}

void kmt_ahead_stop(struct kmt_ahead *a)
{
	if (!a)
		return;
	atomic_store(&a->stop, true);
	wake_all(a);
	pthread_join(a->thread, NULL);
	pthread_cond_destroy(&a->wake);
	pthread_mutex_destroy(&a->lock);
	free(a);
}
