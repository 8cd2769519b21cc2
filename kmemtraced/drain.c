// SPDX-License-Identifier: GPL-2.0-only
/*
 * drain.c - one thread per CPU moving that CPU's relay buffer into
 * DIR/cpuN.out with read(2) and write(2).
 *
 * read() is what relay offers on every kernel: its splice_read was removed
 * in 6.8, and even before that it addressed the ring modulo its page-aligned
 * size and needed the file offset synced by a first read(). read() starts
 * at the buffer's real read position, returns whole records (kmemtrace.ko
 * commits a record before moving the write offset) and also returns the
 * sub-buffer being written, so a quiet CPU's records arrive within one
 * poll period instead of when its sub-buffer fills.
 *
 * A leaf (kmemtraced.h): it calls only kmtd_util.c, and its threads share
 * with the main thread only struct kmtd_drain.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drain.h"
#include "kmt_writer.h"
#include "kmtd_util.h"

/* poll() timeout: how soon a thread notices a stop it was not woken for. */
#define POLL_MS		250

int kmtd_cpu_setup(const struct kmtd_run *run, struct kmtd_drain *dr, unsigned int cpu,
		   struct kmtd_cpu **cp)
{
	struct kmt_file_header h;
	struct kmtd_cpu *c;

	c = calloc(1, sizeof(*c));
	if (!c) {
		kmtd_err("out of memory");
		return -1;
	}
	c->dr = dr;
	c->cpu = cpu;
	c->relay_fd = c->out_fd = -1;
	snprintf(c->relay_path, sizeof(c->relay_path), "%s/" KMT_DEBUGFS_CPU_FMT, run->kdir, cpu);
	snprintf(c->out_path, sizeof(c->out_path), "%s/cpu%u.out", run->outdir, cpu);
	*cp = c;

	c->relay_fd = open(c->relay_path, O_RDONLY | O_CLOEXEC);
	if (c->relay_fd < 0) {
		kmtd_explain_open_error(c->relay_path, errno);
		return -1;
	}
	c->buf = malloc(KMTD_READ_CHUNK);
	if (!c->buf) {
		kmtd_err("out of memory");
		return -1;
	}

	c->out_fd = kmtd_create_file(c->out_path, run->force);
	if (c->out_fd < 0)
		return -1;
	kmt_header_init(&h, cpu, run->word_bits, run->page_size, run->start_mono_ns,
			run->start_real_ns);
	/* The records that follow are the module's, so is their version. */
	h.version_major = (__u16)run->abi_major;
	h.version_minor = (__u16)run->abi_minor;
	if (kmtd_write_all(c->out_fd, &h, sizeof(h)) < 0) {
		kmtd_err("%s: write failed: %s", c->out_path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Before a -- COMMAND run, with tracing off: throw away what is buffered. */
int kmtd_cpu_discard(struct kmtd_cpu *c)
{
	for (;;) {
		ssize_t n = read(c->relay_fd, c->buf, KMTD_READ_CHUNK);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			kmtd_err("%s: read failed: %s", c->relay_path, strerror(errno));
			return -1;
		}
		if (n == 0)
			return 0;
		c->discarded += (uint64_t)n;
	}
}

static void fail(struct kmtd_cpu *c, int err, bool relay)
{
	c->err = err;
	c->err_relay = relay;
	atomic_store(&c->dr->failed, true);
	/* Wake the main thread; if even this fails it sees the flag within 500 ms. */
	(void)!write(c->dr->wake_efd, &(uint64_t){ 1 }, sizeof(uint64_t));
}

/*
 * Moves everything the relay file has now. Returns the bytes moved, or -1
 * after fail(). A read that returns less than asked has emptied the buffer
 * for now: the next records wait for the next poll.
 */
static int64_t drain(struct kmtd_cpu *c)
{
	int64_t total = 0;

	for (;;) {
		ssize_t n = read(c->relay_fd, c->buf, KMTD_READ_CHUNK);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			fail(c, errno, true);
			return -1;
		}
		if (n == 0)
			break;
		if (kmtd_write_all(c->out_fd, c->buf, (size_t)n) < 0) {
			fail(c, errno, false);
			return -1;
		}
		c->bytes += (uint64_t)n;
		total += n;
		if ((size_t)n < KMTD_READ_CHUNK)
			break;
	}
	return total;
}

/*
 * Binds the thread to its CPU. kmemtrace.ko only lets a reader bound to
 * the buffer's CPU read while tracing is on (elsewhere relay can hand out
 * a stale sub-buffer), and CPU hotplug unbinds threads: so this is done
 * before every drain. It fails while the CPU is offline, when any CPU may
 * read (no probe writes there).
 */
static void bind_to_cpu(struct kmtd_cpu *c, bool *warned)
{
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err && err != EINVAL && !*warned) {
		*warned = true;
		fprintf(stderr,
			KMTD_NAME ": cpu%u: cannot run on CPU %u (%s): its buffer is read only once tracing stops\n",
			c->cpu, c->cpu, strerror(err));
	}
}

static void *cpu_main(void *arg)
{
	struct kmtd_cpu *c = arg;
	struct kmtd_drain *dr = c->dr;
	bool warned = false;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = c->relay_fd, .events = POLLIN },
			{ .fd = dr->stop_efd, .events = POLLIN },
		};
		int64_t moved;
		bool last;
		int n;

		n = poll(p, 2, POLL_MS);
		if (n < 0 && errno != EINTR) {
			fail(c, errno, true);
			break;
		}
		/*
		 * stopping is set after tracing was switched off and flushed:
		 * a drain that starts after seeing it gets every last record.
		 */
		last = atomic_load(&dr->stopping);
		bind_to_cpu(c, &warned);
		moved = drain(c);
		if (moved < 0 || last)
			break;
		if (moved == 0 && n > 0 && (p[0].revents & (POLLERR | POLLNVAL))) {
			/* relay says POLLERR once the module closed the buffer. */
			fail(c, EPIPE, true);
			break;
		}
		if (moved == 0 && n > 0 && !(p[1].revents & POLLIN)) {
			/* Readable yet nothing to move: do not spin on it. */
			struct pollfd s = { .fd = dr->stop_efd, .events = POLLIN };

			poll(&s, 1, POLL_MS);
		}
	}
	return NULL;
}

int kmtd_cpu_start(struct kmtd_cpu *c)
{
	int err = pthread_create(&c->thread, NULL, cpu_main, c);

	if (err) {
		kmtd_err("cpu%u: cannot start a thread: %s", c->cpu, strerror(err));
		return -1;
	}
	c->thread_started = true;
	return 0;
}

void kmtd_cpu_join(struct kmtd_cpu *c)
{
	if (c->thread_started) {
		pthread_join(c->thread, NULL);
		c->thread_started = false;
	}
}

/*
 * After the thread ended: cut any partial record off the end (a write cut
 * short by a full disk), fsync and close. Returns 0, or -1 with a message.
 */
int kmtd_cpu_finish(struct kmtd_cpu *c, bool failed)
{
	struct stat st;
	off_t whole;
	int err = 0;

	if (c->out_fd < 0)
		return 0;
	if (fstat(c->out_fd, &st) < 0) {
		err = errno;
		goto out;
	}
	if (st.st_size >= KMT_RECORD_SIZE) {
		whole = KMT_RECORD_SIZE +
			(st.st_size - KMT_RECORD_SIZE) / KMT_RECORD_SIZE * KMT_RECORD_SIZE;
		if (whole != st.st_size) {
			if (!failed)
				kmtd_err("%s: %jd bytes of a partial record removed from the end",
					 c->out_path, (intmax_t)(st.st_size - whole));
			if (ftruncate(c->out_fd, whole) < 0) {
				err = errno;
				goto out;
			}
		}
		c->bytes = (uint64_t)(whole - KMT_RECORD_SIZE);
	}
	if (fsync(c->out_fd) < 0 && errno != EINVAL)
		err = errno;
out:
	if (close(c->out_fd) < 0 && !err && errno != EINTR)
		err = errno;
	c->out_fd = -1;
	if (err) {
		kmtd_err("%s: write failed: %s", c->out_path, strerror(err));
		return -1;
	}
	return 0;
}

void kmtd_cpu_free(struct kmtd_cpu *c)
{
	if (!c)
		return;
	if (c->relay_fd >= 0)
		close(c->relay_fd);
	if (c->out_fd >= 0)
		close(c->out_fd);
	free(c->buf);
	free(c);
}
