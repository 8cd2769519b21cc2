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
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "drain.h"
#include "kmt_writer.h"
#include "kmtd_util.h"

/* poll() timeout: how soon a thread notices a stop it was not woken for. */
#define POLL_MS		250

static void out_path_of(struct kmtd_cpu *c, unsigned int seg)
{
	char dir[PATH_MAX];

	if (!c->dr->rotating) {
		snprintf(c->out_path, sizeof(c->out_path), "%s/cpu%u.out", c->outdir, c->cpu);
		return;
	}
	kmtd_seg_dir(c->outdir, seg, dir, sizeof(dir));
	snprintf(c->out_path, sizeof(c->out_path), "%s/cpu%u.out", dir, c->cpu);
}

/* Creates c->out_path with the header; the fd, or -1 with a message. */
static int create_out(struct kmtd_cpu *c, bool force)
{
	int fd = kmtd_create_file(c->out_path, force);

	if (fd < 0)
		return -1;
	if (kmtd_write_all(fd, &c->hdr, sizeof(c->hdr)) < 0) {
		kmtd_err("%s: write failed: %s", c->out_path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Maps the CPU's ring, its pages faulted in now rather than by the drain
 * while the traced load runs. A kernel whose relay cannot map (ENODEV),
 * or a size the module does not confirm (the first KMT_IOC_RING_NEXT),
 * leaves the CPU to read().
 */
static void map_ring(struct kmtd_cpu *c)
{
	void *ring;

	if (!c->dr->ring_size)
		return;
	ring = mmap(NULL, c->dr->ring_size, PROT_READ, MAP_SHARED | MAP_POPULATE, c->relay_fd, 0);
	if (ring == MAP_FAILED)
		return;
	c->ring = ring;
	c->ring_size = c->dr->ring_size;
	c->ring_taken = 0;
}

/* Back to read(), for a module without the ioctl or a ring of another size. */
static void unmap_ring(struct kmtd_cpu *c)
{
	munmap((void *)c->ring, c->ring_size);
	c->ring = NULL;
}

int kmtd_cpu_setup(const struct kmtd_run *run, struct kmtd_drain *dr, unsigned int cpu,
		   unsigned int seg, struct kmtd_cpu **cp)
{
	struct kmtd_cpu *c;

	c = calloc(1, sizeof(*c));
	if (!c) {
		kmtd_err("out of memory");
		return -1;
	}
	c->dr = dr;
	c->cpu = cpu;
	c->outdir = run->outdir;
	c->seg = seg;
	atomic_store(&c->seg_done, seg);
	c->relay_fd = -1;
	c->out_fd = -1;
	c->next_fd = -1;
	snprintf(c->relay_path, sizeof(c->relay_path), "%s/" KMT_DEBUGFS_CPU_FMT, run->kdir, cpu);
	out_path_of(c, seg);
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
	map_ring(c);
	kmt_header_init(&c->hdr, cpu, run->word_bits, run->page_size, run->start_mono_ns,
			run->start_real_ns);
	/* The records that follow are the module's, so is their version. */
	c->hdr.version_major = (__u16)run->abi_major;
	c->hdr.version_minor = (__u16)run->abi_minor;
	c->out_fd = create_out(c, run->force);
	return c->out_fd < 0 ? -1 : 0;
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

static void fail(struct kmtd_cpu *c, int err, enum kmtd_err_source source)
{
	c->err = err;
	c->err_source = source;
	atomic_store(&c->dr->failed, true);
	/* Wake the main thread; if even this fails it sees the flag within 500 ms. */
	(void)!write(c->dr->wake_efd, &(uint64_t){ 1 }, sizeof(uint64_t));
}

/* Appends n bytes of records to the file fd (the current one, or the next segment's). */
static int put_records(struct kmtd_cpu *c, int fd, const void *p, size_t n)
{
	if (!n)
		return 0;
	if (fd < 0) {
		/* A record after the cut with no switch under way: never. */
		fail(c, EINVAL, KMTD_ERR_OUTPUT);
		return -1;
	}
	if (kmtd_write_all(fd, p, n) < 0) {
		fail(c, errno, KMTD_ERR_OUTPUT);
		return -1;
	}
	if (fd == c->out_fd)
		c->bytes += n;
	else
		c->next_bytes += n;
	if (c->dr->rotating && (fd != c->out_fd || c->seg == atomic_load(&c->dr->seg_want))) {
		uint64_t t = atomic_fetch_add(&c->dr->seg_total, n) + n;

		if (t >= c->dr->seg_size && t - n < c->dr->seg_size)
			(void)!write(c->dr->wake_efd, &(uint64_t){ 1 }, sizeof(uint64_t));
	}
	return 0;
}

/*
 * How many bytes of the whole records at p come before cut: the records
 * of one CPU are in time order (the module drops a nested event rather
 * than write it out of order).
 */
static size_t before_cut(const uint8_t *p, size_t n, uint64_t cut)
{
	size_t off;

	for (off = 0; off + KMT_RECORD_SIZE <= n; off += KMT_RECORD_SIZE) {
		const struct kmt_record_common *r = (const void *)(p + off);

		if (r->timestamp >= cut)
			break;
	}
	return off;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * A switch to segment seg_want is under way (--max-size): opens this CPU's
 * file of it, where records from the cut on go from now on.
 */
static int start_switch(struct kmtd_cpu *c)
{
	unsigned int want = atomic_load(&c->dr->seg_want);

	if (c->next_fd >= 0 || want == c->seg)
		return 0;
	/* The main thread stores the cut before the segment: this sees both. */
	c->cut_ns = atomic_load(&c->dr->seg_cut_ns);
	c->next_seg = want;
	out_path_of(c, want);
	c->next_fd = create_out(c, false);
	out_path_of(c, c->seg);
	if (c->next_fd < 0) {
		fail(c, errno ? errno : EIO, KMTD_ERR_OUTPUT);
		return -1;
	}
	return 0;
}

/*
 * Closes this CPU's file of the current segment, which holds exactly the
 * CPU's records before the cut, and goes on in the next one.
 */
static int finish_switch(struct kmtd_cpu *c)
{
	if (kmtd_cpu_finish(c, false) < 0) {
		close(c->next_fd);
		c->next_fd = -1;
		fail(c, EIO, KMTD_ERR_OUTPUT);
		return -1;
	}
	c->closed_bytes = c->bytes - c->bytes_prev;
	c->bytes_prev = c->bytes;
	c->out_fd = c->next_fd;
	c->next_fd = -1;
	c->seg = c->next_seg;
	out_path_of(c, c->seg);
	/* What was written to the new file before the switch is its segment's. */
	c->bytes += c->next_bytes;
	c->next_bytes = 0;
	atomic_store(&c->seg_done, c->seg);
	/* The main thread finishes the rotation once every CPU switched. */
	(void)!write(c->dr->wake_efd, &(uint64_t){ 1 }, sizeof(uint64_t));
	return 0;
}

/*
 * Binds the thread to its CPU. kmemtrace.ko only lets a reader bound to
 * the buffer's CPU read while tracing is on (elsewhere relay can hand out
 * a stale sub-buffer), and CPU hotplug unbinds threads: so this is done
 * when the thread starts, and again whenever a read is refused with
 * EAGAIN, which is what says the thread lost its binding. Not before every
 * read: sched_setaffinity() each time the buffer filled a sub-buffer cost
 * a few thousand instructions. It fails while the CPU is offline, when any
 * CPU may read (no probe writes there).
 */
static int bind_to_cpu(struct kmtd_cpu *c, bool *warned)
{
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err == EINVAL)
		return 0;
	/* A segment's cut holds only for a thread that reads on its CPU. */
	if (err && c->dr->rotating)
		return err;
	if (err && !*warned) {
		*warned = true;
		fprintf(stderr,
			KMTD_NAME ": cpu%u: cannot run on CPU %u (%s): its buffer is read only once tracing stops\n",
			c->cpu, c->cpu, strerror(err));
	}
	return 0;
}

/*
 * One call on the relay file: with ext, KMT_IOC_RING_NEXT (gives back
 * ext->done bytes of the mapped ring, fills in the next extent); without,
 * a read() into c->buf, whose bytes go to *n. The module refuses (EAGAIN)
 * a reader not bound to the buffer's CPU, which is how the thread learns
 * that it lost its binding: it binds and tries once more. 0; the call's
 * errno (EAGAIN: refused even bound); or -1 after fail(), when the thread
 * cannot bind.
 */
static int relay_call(struct kmtd_cpu *c, struct kmt_ring_extent *ext, ssize_t *n,
		      bool *warned)
{
	bool rebound = false;

	for (;;) {
		int err;

		*n = ext ? ioctl(c->relay_fd, KMT_IOC_RING_NEXT, ext)
			 : read(c->relay_fd, c->buf, KMTD_READ_CHUNK);
		if (*n >= 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN || rebound)
			return errno;
		err = bind_to_cpu(c, warned);
		if (err) {
			fail(c, err, KMTD_ERR_BIND);
			return -1;
		}
		rebound = true;
	}
}

/* TAKE_REFUSED: the module refused even a bound reader (tracing stops soon). */
#define TAKE_REFUSED	(-2)

/*
 * The next records: an extent of the mapped ring, or a read() into buf.
 * Their bytes (0: none now), TAKE_REFUSED, or -1 after fail().
 */
static ssize_t take(struct kmtd_cpu *c, const uint8_t **p, bool *warned)
{
	struct kmt_ring_extent ext = { .done = c->ring_taken };
	ssize_t n;
	int err = relay_call(c, c->ring ? &ext : NULL, &n, warned);

	/* Nothing taken from the ring yet, and a module without the ioctl or another size. */
	if (c->ring && !c->ring_taken &&
	    (err == ENOTTY || (!err && ext.ring_size != c->ring_size))) {
		unmap_ring(c);
		return take(c, p, warned);
	}
	if (err == EAGAIN)
		return TAKE_REFUSED;
	if (err > 0)
		fail(c, err, KMTD_ERR_RELAY);
	if (err)
		return -1;
	if (!c->ring) {
		*p = c->buf;
		return n;
	}
	if (ext.len % KMT_RECORD_SIZE || ext.offset > c->ring_size ||
	    ext.len > c->ring_size - ext.offset) {
		fail(c, EPROTO, KMTD_ERR_RELAY);
		return -1;
	}
	c->ring_taken = ext.len;
	*p = c->ring + ext.offset;
	return (ssize_t)ext.len;
}

/*
 * Moves everything the relay file has now. Returns the bytes moved, or -1
 * after fail(). A read that returns less than asked has emptied the buffer
 * for now: the next records wait for the next poll.
 *
 * With --max-size, a segment switch is looked for after every read: the
 * main thread takes the cut a little in the future, so a record stamped at
 * or after it was committed after the switch was published, and the read
 * that returns it is followed by a look that sees the switch. Records
 * before the cut go to the old file, the rest to the new one. The old file
 * is complete, and closed, once a record from the cut on was read (a CPU
 * writes its records in time order: a nested event is dropped, not written
 * late), or a read that started at or after the cut emptied the buffer:
 * the thread runs bound to its CPU, where a probe that stamped a record
 * before the cut (interrupts off) finished before the thread could run, so
 * that read got every one of them. At the end (last) the buffers are
 * flushed and tracing is off: nothing more can come.
 */
static int64_t drain(struct kmtd_cpu *c, bool last, bool *warned)
{
	bool rotating = c->dr->rotating;
	bool past_cut = false;
	int64_t total = 0;
	uint64_t started;

	for (;;) {
		const uint8_t *p;
		ssize_t n;
		size_t old;

		started = rotating ? mono_ns() : 0;
		n = take(c, &p, warned);
		if (n == TAKE_REFUSED)
			break;
		if (n < 0)
			return -1;
		if (rotating && start_switch(c) < 0)
			return -1;
		if (n == 0)
			break;
		old = c->next_fd >= 0 ? before_cut(p, (size_t)n, c->cut_ns) : (size_t)n;
		past_cut |= old < (size_t)n;
		if (put_records(c, c->out_fd, p, old) < 0 ||
		    put_records(c, c->next_fd, p + old, (size_t)n - old) < 0)
			return -1;
		total += n;
		/* A short read emptied the buffer; the ring says so with an empty extent. */
		if (!c->ring && (size_t)n < KMTD_READ_CHUNK)
			break;
	}
	/* A switch published while the buffer was empty starts here. */
	if (rotating && start_switch(c) < 0)
		return -1;
	if (c->next_fd >= 0 && (last || past_cut || started >= c->cut_ns) &&
	    finish_switch(c) < 0)
		return -1;
	return total;
}

static void *cpu_main(void *arg)
{
	struct kmtd_cpu *c = arg;
	struct kmtd_drain *dr = c->dr;
	bool warned = false;
	int err = bind_to_cpu(c, &warned);

	if (err) {
		fail(c, err, KMTD_ERR_BIND);
		return NULL;
	}
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
			fail(c, errno, KMTD_ERR_RELAY);
			break;
		}
		/*
		 * stopping is set after tracing was switched off and flushed:
		 * a drain that starts after seeing it gets every last record.
		 */
		last = atomic_load(&dr->stopping);
		moved = drain(c, last, &warned);
		if (moved < 0 || last)
			break;
		if (moved == 0 && n > 0 && (p[0].revents & (POLLERR | POLLNVAL))) {
			/* relay says POLLERR once the module closed the buffer. */
			fail(c, EPIPE, KMTD_ERR_RELAY);
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
		c->bytes = c->bytes_prev + (uint64_t)(whole - KMT_RECORD_SIZE);
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

void kmtd_cpu_describe_error(const struct kmtd_cpu *c, char *buf, size_t size)
{
	switch (c->err_source) {
	case KMTD_ERR_RELAY:
		snprintf(buf, size, "%s: read failed: %s", c->relay_path, strerror(c->err));
		break;
	case KMTD_ERR_BIND:
		snprintf(buf, size, "cpu%u: cannot run the drain thread on CPU %u: %s", c->cpu,
			 c->cpu, strerror(c->err));
		break;
	default:
		snprintf(buf, size, "%s: write failed: %s", c->out_path, strerror(c->err));
		break;
	}
}

void kmtd_cpu_free(struct kmtd_cpu *c)
{
	if (!c)
		return;
	if (c->relay_fd >= 0)
		close(c->relay_fd);
	if (c->out_fd >= 0)
		close(c->out_fd);
	if (c->ring)
		munmap((void *)c->ring, c->ring_size);
	free(c->buf);
	free(c);
}
