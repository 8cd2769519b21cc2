// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_ahead.c - a merge read ahead on a thread of its own (kmt_ahead.h).
 *
 * A ring of AHEAD_SLOTS batches. The thread fills the next free slot with
 * copies of the records kmt_merge_next_batch() points to (they live in the
 * files' read buffers, which its next call reuses) and publishes it; the
 * caller takes the slots in order, each until its next call. One lock and
 * two conditions, taken once a batch of up to AHEAD_BATCH records.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "kmt_ahead.h"

#define AHEAD_SLOTS	4
#define AHEAD_BATCH	4096

struct ahead_slot {
	int n;		/* records in it, may be 0 */
	int last;	/* 1: more follow; 0: the end; -1: the merge's error after them */
	const union kmt_rec *refs[AHEAD_BATCH];
	union kmt_rec recs[AHEAD_BATCH];
};

struct kmt_ahead {
	struct kmt_merge *m;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t filled, freed;
	unsigned int head;	/* the slot the caller takes next, or holds */
	/* Published slots not given back, the held one included: the thread fills head + count. */
	unsigned int count;
	bool held;		/* the caller holds slot head (its last batch) */
	bool stop;		/* the caller is done: the thread ends */
	bool ended;		/* the caller saw the last slot: end_rc is the answer */
	int end_rc;
	struct ahead_slot slot[AHEAD_SLOTS];
};

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
		struct ahead_slot *s;

		pthread_mutex_lock(&a->lock);
		while (!a->stop && a->count == AHEAD_SLOTS)
			pthread_cond_wait(&a->freed, &a->lock);
		if (a->stop) {
			pthread_mutex_unlock(&a->lock);
			break;
		}
		s = &a->slot[(a->head + a->count) % AHEAD_SLOTS];
		pthread_mutex_unlock(&a->lock);

		/* The slot is the thread's alone until it is published. */
		fill(a, s);
		more = s->last == 1;

		pthread_mutex_lock(&a->lock);
		a->count++;
		pthread_cond_signal(&a->filled);
		pthread_mutex_unlock(&a->lock);
	}
	return NULL;
}

struct kmt_ahead *kmt_ahead_start(struct kmt_merge *m)
{
	struct kmt_ahead *a = calloc(1, sizeof(*a));
	int err;

	if (!a)
		return NULL;
	a->m = m;
	err = pthread_mutex_init(&a->lock, NULL);
	if (err)
		goto err_free;
	err = pthread_cond_init(&a->filled, NULL);
	if (err)
		goto err_lock;
	err = pthread_cond_init(&a->freed, NULL);
	if (err)
		goto err_filled;
	err = pthread_create(&a->thread, NULL, ahead_thread, a);
	if (err)
		goto err_freed;
	return a;

err_freed:
	pthread_cond_destroy(&a->freed);
err_filled:
	pthread_cond_destroy(&a->filled);
err_lock:
	pthread_mutex_destroy(&a->lock);
err_free:
	free(a);
	errno = err;
	return NULL;
}

/* Gives the held slot back to the thread; under the lock. */
static void give_back(struct kmt_ahead *a)
{
	if (!a->held)
		return;
	a->held = false;
	a->head = (a->head + 1) % AHEAD_SLOTS;
	a->count--;
	pthread_cond_signal(&a->freed);
}

int kmt_ahead_next(struct kmt_ahead *a, const union kmt_rec *const **recs)
{
	struct ahead_slot *s;
	int rc;

	pthread_mutex_lock(&a->lock);
	give_back(a);
	while (!a->ended) {
		while (!a->count)
			pthread_cond_wait(&a->filled, &a->lock);
		s = &a->slot[a->head];
		if (s->last != 1) {
			a->ended = true;
			a->end_rc = s->last;
		}
		a->held = true;
		if (s->n) {
			*recs = s->refs;
			pthread_mutex_unlock(&a->lock);
			return s->n;
		}
		give_back(a);
	}
	rc = a->end_rc;
	pthread_mutex_unlock(&a->lock);
	return rc;
}

void kmt_ahead_stop(struct kmt_ahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_signal(&a->freed);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	pthread_cond_destroy(&a->freed);
	pthread_cond_destroy(&a->filled);
	pthread_mutex_destroy(&a->lock);
	free(a);
}
