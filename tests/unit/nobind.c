// SPDX-License-Identifier: GPL-2.0-only
/*
 * nobind.c - an LD_PRELOAD shim for the host tests: every
 * pthread_setaffinity_np() fails with EPERM, as it does for a task that a
 * security policy keeps from choosing its CPU, so that kmemtraced's
 * drain threads cannot bind to theirs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>

int pthread_setaffinity_np(pthread_t thread, size_t size, const cpu_set_t *set)
{
	(void)thread;
	(void)size;
	(void)set;
	return EPERM;
}
