// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_follow.c - reads cpuN.out files while kmemtraced appends to them, or
 * the module's relay buffers, and sorts what arrived into time order.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmt_follow.h"
#include "kmt_writer.h"

/* Read size per read(): large enough that a busy CPU's buffer empties in a few calls. */
#define FOLLOW_BUF_SIZE (1 << 18)

struct src {
	int fd;
	int cpu;		/* a relay buffer's CPU, or -1 for a file */
	char *path;
	bool swap;		/* file of the other byte order */
	uint64_t off;		/* bytes consumed */
	uint8_t part[KMT_RECORD_SIZE];
	size_t npart;
};

struct kmt_follow {
	struct src *src;
	size_t nsrc;
	union kmt_rec *recs;	/* read, not yet fed */
	size_t n, cap;
	const union kmt_rec **refs;
	size_t refs_cap;
	uint8_t *buf;		/* FOLLOW_BUF_SIZE */
};

static int nomem(struct kmt_error *err)
{
	err->cls = KMT_ERR_NOMEM;
	snprintf(err->msg, sizeof(err->msg), "out of memory");
	return -1;
}

struct kmt_follow *kmt_follow_new(void)
{
	struct kmt_follow *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->buf = malloc(FOLLOW_BUF_SIZE);
	if (!f->buf) {
		free(f);
		return NULL;
	}
	return f;
}

void kmt_follow_free(struct kmt_follow *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nsrc; i++) {
		close(f->src[i].fd);
		free(f->src[i].path);
	}
	free(f->src);
	free(f->recs);
	free(f->refs);
	free(f->buf);
	free(f);
}

size_t kmt_follow_nsources(const struct kmt_follow *f)
{
	return f->nsrc;
}

static int rec_cmp(const void *pa, const void *pb)
{
	const union kmt_rec *a = *(const union kmt_rec *const *)pa;
	const union kmt_rec *b = *(const union kmt_rec *const *)pb;

	if (a->c.timestamp != b->c.timestamp)
		return a->c.timestamp < b->c.timestamp ? -1 : 1;
	if (a->c.cpu != b->c.cpu)
		return a->c.cpu < b->c.cpu ? -1 : 1;
	return (a->c.seq > b->c.seq) - (a->c.seq < b->c.seq);
}

/* One slot: decoded, checked lightly (the full checks are the reader's, in replay). */
static int take_slot(struct kmt_follow *f, struct src *s, const uint8_t *slot,
		     struct kmt_error *err)
{
	union kmt_rec *r;

	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 4096;
		union kmt_rec *p = realloc(f->recs, cap * sizeof(*p));

		if (!p)
			return nomem(err);
		f->recs = p;
		f->cap = cap;
	}
	r = &f->recs[f->n];
	memcpy(r, slot, sizeof(*r));
	if (s->swap)
		kmt_rec_swap(r);
	if (r->c.type == 0) {
		err->cls = KMT_ERR_DATA;
		snprintf(err->msg, sizeof(err->msg), "%s: offset %" PRIu64 ": record type 0 "
			 "(a zeroed slot): the trace is corrupt", s->path,
			 s->off - KMT_RECORD_SIZE);
		return -1;
	}
	if (r->c.type > KMT_REC_TYPE_MAX)
		return 0;	/* a newer minor's record: skipped, as the reader does */
	if (r->c.type == KMT_REC_CACHE_DESC)
		r->cache.name[KMT_CACHE_NAME_LEN - 1] = '\0';
	f->n++;
	return 0;
}

/*
 * While tracing is on, kmemtrace.ko lets only a reader bound to a buffer's
 * CPU read it (elsewhere relay can hand out a stale sub-buffer): the
 * thread moves to each CPU in turn. Binding fails while the CPU is
 * offline, when any CPU may read.
 */
static void src_bind(const struct src *s)
{
	cpu_set_t set;

	if (s->cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(s->cpu, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

/* Reads what the source has now. 0, or -1 with *err. */
static int src_drain(struct kmt_follow *f, struct src *s, struct kmt_error *err)
{
	src_bind(s);
	for (;;) {
		ssize_t got = read(s->fd, f->buf, FOLLOW_BUF_SIZE);
		size_t i = 0;

		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (got < 0) {
			err->cls = KMT_ERR_IO;
			snprintf(err->msg, sizeof(err->msg), "%s: read: %s", s->path,
				 strerror(errno));
			return -1;
		}
		if (got == 0)
			return 0;
		while (i < (size_t)got) {
			size_t take = KMT_RECORD_SIZE - s->npart;

			if (take > (size_t)got - i)
				take = (size_t)got - i;
			memcpy(s->part + s->npart, f->buf + i, take);
			s->npart += take;
			i += take;
			if (s->npart < KMT_RECORD_SIZE)
				break;
			s->npart = 0;
			s->off += KMT_RECORD_SIZE;
			if (take_slot(f, s, s->part, err))
				return -1;
		}
	}
}

static int src_add(struct kmt_follow *f, const char *path, int cpu, struct kmt_error *err)
{
	struct src *p = realloc(f->src, (f->nsrc + 1) * sizeof(*p));
	bool header = cpu < 0;
	struct src *s;

	if (!p)
		return nomem(err);
	f->src = p;
	s = &p[f->nsrc];
	memset(s, 0, sizeof(*s));
	s->cpu = cpu;
	s->path = strdup(path);
	if (header) {
		/* The reader checks the header; the records are read here as they come. */
		struct stat st;
		struct kmt_file *kf;

		if (stat(path, &st) == 0 && st.st_size < KMT_RECORD_SIZE) {
			free(s->path);
			return 0;	/* kmemtraced is writing it: next time */
		}
		kf = kmt_file_open(path, KMT_OPEN_ALLOW_TRUNCATED, err);
		if (!kf) {
			free(s->path);
			return -1;
		}
		s->swap = kmt_file_big_endian(kf) != kmt_host_big_endian();
		kmt_file_close(kf);
		s->off = KMT_RECORD_SIZE;
	}
	s->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (header && s->fd >= 0 && lseek(s->fd, KMT_RECORD_SIZE, SEEK_SET) < 0) {
		close(s->fd);
		s->fd = -1;
	}
	if (!s->path || s->fd < 0) {
		int e = errno;

		free(s->path);
		if (s->fd >= 0)
			close(s->fd);
		err->cls = KMT_ERR_IO;
		snprintf(err->msg, sizeof(err->msg), "%s: cannot open: %s%s", path, strerror(e),
			 e == EACCES || e == EPERM ? " (run as root)" : "");
		return -1;
	}
	f->nsrc++;
	return 0;
}

int kmt_follow_add_file(struct kmt_follow *f, const char *path, struct kmt_error *err)
{
	return src_add(f, path, -1, err);
}

int kmt_follow_add_relay(struct kmt_follow *f, const char *path, unsigned int cpu,
			 struct kmt_error *err)
{
	return src_add(f, path, (int)cpu, err);
}

int kmt_follow_scan_dir(struct kmt_follow *f, const char *dir, struct kmt_error *err)
{
	char **paths;
	size_t n, i, j;
	struct kmt_error e2;

	if (kmt_find_cpu_files(dir, &paths, &n, &e2))
		return 0;	/* none yet: kmemtraced may not have started */
	for (i = 0; i < n; i++) {
		/*
		 * A rotated trace (kmemtraced --max-size): its segments are
		 * followed as they come; a checkpoint holds records of segments
		 * dropped after they were read, which would count twice.
		 */
		if (strncmp(paths[i] + strlen(dir), "/ckpt.", 6) == 0)
			continue;
		for (j = 0; j < f->nsrc; j++)
			if (strcmp(f->src[j].path, paths[i]) == 0)
				break;
		if (j == f->nsrc && src_add(f, paths[i], -1, err)) {
			kmt_free_paths(paths, n);
			return -1;
		}
	}
	kmt_free_paths(paths, n);
	return 0;
}

int kmt_follow_collect(struct kmt_follow *f, uint64_t upto, const union kmt_rec ***recs,
		       size_t *n, struct kmt_error *err)
{
	size_t i, k = 0;

	for (i = 0; i < f->nsrc; i++)
		if (src_drain(f, &f->src[i], err))
			return -1;
	if (f->n > f->refs_cap) {
		const union kmt_rec **p = realloc(f->refs, f->n * sizeof(*p));

		if (!p)
			return nomem(err);
		f->refs = p;
		f->refs_cap = f->n;
	}
	for (i = 0; i < f->n; i++)
		f->refs[i] = &f->recs[i];
	qsort(f->refs, f->n, sizeof(*f->refs), rec_cmp);
	while (k < f->n && f->refs[k]->c.timestamp < upto)
		k++;
	*recs = f->refs;
	*n = k;
	return 0;
}

int kmt_follow_keep_rest(struct kmt_follow *f, size_t k)
{
	size_t rest = f->n - k, i;
	union kmt_rec *tmp;

	if (!rest) {
		f->n = 0;
		return 0;
	}
	/* refs point into recs: the rest is gathered aside before recs is rewritten. */
	tmp = malloc(rest * sizeof(*tmp));
	if (!tmp)
		return -1;
	for (i = 0; i < rest; i++)
		tmp[i] = *f->refs[k + i];
	memcpy(f->recs, tmp, rest * sizeof(*tmp));
	free(tmp);
	f->n = rest;
	return 0;
}

void kmt_follow_drop(struct kmt_follow *f)
{
	struct kmt_error err;
	size_t i;

	/* A source that fails now fails again at the next collect, which reports it. */
	for (i = 0; i < f->nsrc; i++)
		if (src_drain(f, &f->src[i], &err))
			break;
	f->n = 0;
}
