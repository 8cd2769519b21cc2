// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_map.c - windows of trace files mapped for reading (KMT_OPEN_MAP),
 * and the guard that turns a fault in one into a message naming its file.
 *
 * A mapped page past a file's end raises SIGBUS when touched: the file
 * shrank after it was mapped. The reader cannot check before each load
 * (the analysis reads records where they lie), so a handler finds the
 * window of the faulting address and ends the process the way any I/O
 * error would, rather than with a signal's core dump. Windows are kept
 * in a fixed table the handler reads without locks: a slot is claimed,
 * then filled, then its address published, and cleared before unmapping.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kmt_exit.h"
#include "kmt_map.h"

/* More windows than any run keeps at once: one per file being read. */
#define MAP_SLOTS	1024
#define SLOT_BUSY	((uintptr_t)1)	/* being filled: no mapping starts at 1 */

struct map_slot {
	_Atomic(uintptr_t) addr;	/* 0: free */
	size_t len;
	const char *path;
};

static struct map_slot slots[MAP_SLOTS];
static atomic_flag guard_set = ATOMIC_FLAG_INIT;
static const char *prog = "kmemtrace";

static void say(const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = write(STDERR_FILENO, s, n);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void on_sigbus(int sig, siginfo_t *si, void *uctx)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	const char *path = NULL;
	size_t i;

	(void)sig;
	(void)uctx;
	for (i = 0; i < MAP_SLOTS; i++) {
		uintptr_t base = atomic_load(&slots[i].addr);

		if (base > SLOT_BUSY && a >= base && a - base < slots[i].len) {
			path = slots[i].path;
			break;
		}
	}
	say(prog);
	say(": ");
	if (path) {
		say(path);
		say(": the file shrank while it was read (truncated by another process?)\n");
	} else {
		say("bus error outside any trace file's mapping\n");
	}
	_exit(path ? KMT_EXIT_IO : KMT_EXIT_INTERNAL);
}

void kmt_map_guard(const char *progname)
{
	struct sigaction sa;

	if (atomic_flag_test_and_set(&guard_set))
		return;
	if (progname)
		prog = progname;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

void *kmt_map_window(int fd, uint64_t off, size_t len, const char *path)
{
	void *p;
	size_t i;

	kmt_map_guard(NULL);
	/* Writable and private: the reader may rewrite a record in its copy. */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, (off_t)off);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_SEQUENTIAL);
	for (i = 0; i < MAP_SLOTS; i++) {
		uintptr_t none = 0;

		/* Claimed (SLOT_BUSY) before it is filled, published after. */
		if (!atomic_compare_exchange_strong(&slots[i].addr, &none, SLOT_BUSY))
			continue;
		slots[i].len = len;
		slots[i].path = path;
		atomic_store(&slots[i].addr, (uintptr_t)p);
		return p;
	}
	/* No slot to name the file in: read it with read(2) instead. */
	munmap(p, len);
	return NULL;
}

void kmt_map_release(void *p, size_t len)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < MAP_SLOTS; i++) {
		if (atomic_load(&slots[i].addr) == (uintptr_t)p) {
			atomic_store(&slots[i].addr, 0);
			break;
		}
	}
	munmap(p, len);
}
