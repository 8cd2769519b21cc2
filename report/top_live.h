/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * top_live.h - kmemtrace-top's live mode: takes the running module's
 * relay buffers through debugfs, switches tracing on for as long as it
 * reads them and back as it was afterwards.
 */
#ifndef TOP_LIVE_H
#define TOP_LIVE_H

#include <limits.h>

#include "kmt_follow.h"

struct live {
	char kdir[PATH_MAX];	/* the module's debugfs directory */
	int lock_fd;		/* holds kmemtraced's lock; -1 */
	int was_enabled;	/* -1: not touched */
};

/* A live not opened yet: live_close() on it does nothing. */
#define LIVE_INIT { .lock_fd = -1, .was_enabled = -1 }

/*
 * Locks the module's buffers against kmemtraced, adds each CPU's relay
 * buffer to f and switches tracing on, dropping what was buffered before.
 * 0, or -1 with one line in msg: the system is not ready (exit 3).
 */
int live_open(struct live *l, const char *debugfs, struct kmt_follow *f, char *msg, size_t len);
/*
 * The module's stack_depth, from its stacks file: 0 when it records no
 * stacks, -1 when it has no such file (before trace format 1.2).
 */
int live_stack_depth(const struct live *l);
/* Tracing back off if it was off before; releases the lock. */
void live_close(struct live *l);

#endif /* TOP_LIVE_H */
