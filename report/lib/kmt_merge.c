// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_merge.c - finds the cpuN.out files of a trace directory and merges
 * them into one stream in time order with a binary heap, holding one
 * record per file: memory depends on the number of CPUs, not on the trace.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmt_reader_int.h"

/*
 * The heap holds the order key of every file's next record next to the
 * file's index, so that ordering touches no record. The stream's order is
 * (timestamp, cpu, seq, file index), but two files of one merge never
 * share a CPU (kmt_merge_open refuses that) and every record carries its
 * file's CPU, so (timestamp, cpu) alone orders the heap's nodes.
 */
struct merge_node {
	uint64_t ts;
	uint32_t cpu;
	uint32_t i;		/* index into src */
};

struct merge_src {
	struct kmt_file *f;
	const union kmt_rec *rec;	/* the file's next record, in its read buffer */
};

struct kmt_merge {
	size_t n;
	struct merge_src *src;
	struct merge_node *heap;	/* min-heap by record order */
	size_t heap_len;
	int failed;
	struct kmt_error err;
};

/*
 * Whether x comes first. Which file holds the next record is as good as
 * random, so a branch here would be mispredicted half the time: the
 * bitwise form compiles to flag arithmetic instead.
 */
static inline int node_before(const struct merge_node *x, const struct merge_node *y)
{
	return (x->ts < y->ts) | ((x->ts == y->ts) & (x->cpu < y->cpu));
}

static inline void node_set(struct merge_node *nd, const union kmt_rec *rec, size_t i)
{
	nd->ts = rec->c.timestamp;
	nd->cpu = rec->c.cpu;
	nd->i = (uint32_t)i;
}

/* Moves the node at i down to its place. */
static inline void sift_down(struct kmt_merge *m, size_t i)
{
	struct merge_node *h = m->heap, x = h[i];
	size_t len = m->heap_len;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= len)
			break;
		if (c + 1 < len)
			c += (size_t)node_before(&h[c + 1], &h[c]);
		if (!node_before(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

static int cmp_cpu_path(const void *a, const void *b)
{
	const char *const *x = a, *const *y = b;
	long cx = kmt_cpu_of_name(*x), cy = kmt_cpu_of_name(*y);

	return (cx > cy) - (cx < cy);
}

int kmt_find_cpu_files(const char *dir, char ***paths, size_t *n, struct kmt_error *err)
{
	char **v = NULL, **nv;
	size_t len = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	memset(err, 0, sizeof(*err));
	*paths = NULL;
	*n = 0;
	d = opendir(dir);
	if (!d) {
		kmt_err_set(err, KMT_ERR_IO, dir, UINT64_MAX, "cannot open directory: %s",
			    strerror(errno));
		return -1;
	}
	for (;;) {
		size_t sz;
		char *p;

		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno) {
				kmt_err_set(err, KMT_ERR_IO, dir, UINT64_MAX,
					    "cannot read directory: %s", strerror(errno));
				goto err_free;
			}
			break;
		}
		if (kmt_cpu_of_name(de->d_name) < 0)
			continue;
		if (len == cap) {
			cap = cap ? 2 * cap : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				goto err_nomem;
			v = nv;
		}
		sz = strlen(dir) + strlen(de->d_name) + 2;
		p = malloc(sz);
		if (!p)
			goto err_nomem;
		snprintf(p, sz, "%s/%s", dir, de->d_name);
		v[len++] = p;
	}
	closedir(d);
	if (!len) {
		free(v);
		kmt_err_set(err, KMT_ERR_DATA, dir, UINT64_MAX, "no cpu*.out files");
		return -1;
	}
	qsort(v, len, sizeof(*v), cmp_cpu_path);
	*paths = v;
	*n = len;
	return 0;

err_nomem:
	kmt_err_set(err, KMT_ERR_NOMEM, dir, UINT64_MAX, "out of memory");
err_free:
	closedir(d);
	kmt_free_paths(v, len);
	return -1;
}

void kmt_free_paths(char **paths, size_t n)
{
	size_t i;

	if (!paths)
		return;
	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

/*
 * Reads just enough of a file to know its ABI version: 0 with *h, -1 if
 * it cannot be read or is no trace (the full open says why, later).
 */
static int peek_header(const char *path, struct kmt_file_header *h)
{
	uint8_t raw[KMT_RECORD_SIZE];
	ssize_t got;
	int fd, be;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	got = pread(fd, raw, sizeof(raw), 0);
	close(fd);
	if (got != (ssize_t)sizeof(raw))
		return -1;
	return kmt_header_decode(raw, h, &be);
}

/* Files that disagree on a mixed major are named together, before any other check. */
static int check_majors(char *const *paths, size_t n, struct kmt_error *err)
{
	struct kmt_file_header first, h;
	size_t i, first_i = 0;
	int have = 0;

	for (i = 0; i < n; i++) {
		if (peek_header(paths[i], &h) < 0)
			continue;
		if (!have) {
			first = h;
			first_i = i;
			have = 1;
		} else if (h.version_major != first.version_major) {
			kmt_err_set(err, KMT_ERR_DATA, paths[i], 4,
				    "mixed ABI versions: %u.%u here, %u.%u in %s",
				    h.version_major, h.version_minor, first.version_major,
				    first.version_minor, paths[first_i]);
			return -1;
		}
	}
	return 0;
}

/* Files of one trace come from one machine and hold one CPU each. */
static int check_same_trace(struct kmt_merge *m, size_t i, struct kmt_error *err)
{
	const struct kmt_file_header *h = kmt_file_header(m->src[i].f);
	const char *path = kmt_file_path(m->src[i].f);
	size_t j;

	for (j = 0; j < i; j++) {
		const struct kmt_file_header *o = kmt_file_header(m->src[j].f);
		const char *opath = kmt_file_path(m->src[j].f);

		if (o->cpu == h->cpu) {
			kmt_err_set(err, KMT_ERR_DATA, path, 12, "CPU %u again (also in %s)",
				    h->cpu, opath);
			return -1;
		}
		if (o->byte_order != h->byte_order || o->word_bits != h->word_bits ||
		    o->page_size != h->page_size) {
			/* At the offset of the first field that differs. */
			uint64_t off = o->byte_order != h->byte_order ? 14 :
				       o->word_bits != h->word_bits ? 15 : 20;

			kmt_err_set(err, KMT_ERR_DATA, path, off,
				    "not from the same trace as %s (byte order %u/%u, word bits %u/%u, page size %u/%u)",
				    opath, h->byte_order, o->byte_order, h->word_bits,
				    o->word_bits, h->page_size, o->page_size);
			return -1;
		}
	}
	return 0;
}

struct kmt_merge *kmt_merge_open(char *const *paths, size_t n, unsigned int flags,
				 struct kmt_error *err)
{
	struct kmt_merge *m;
	size_t i;

	memset(err, 0, sizeof(*err));
	if (!n) {
		kmt_err_set(err, KMT_ERR_USAGE, "kmemtrace", UINT64_MAX, "no trace files given");
		return NULL;
	}
	if (check_majors(paths, n, err) < 0)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		goto err_nomem;
	m->src = calloc(n, sizeof(*m->src));
	m->heap = calloc(n, sizeof(*m->heap));
	if (!m->src || !m->heap)
		goto err_nomem;
	m->n = n;
	for (i = 0; i < n; i++) {
		m->src[i].f = kmt_file_open(paths[i], flags, err);
		if (!m->src[i].f)
			goto err_close;
		if (check_same_trace(m, i, err) < 0)
			goto err_close;
	}
	for (i = 0; i < n; i++) {
		int r = kmt_file_next_ref(m->src[i].f, &m->src[i].rec);

		if (r < 0) {
			*err = *kmt_file_error(m->src[i].f);
			goto err_close;
		}
		if (r > 0)
			node_set(&m->heap[m->heap_len++], m->src[i].rec, i);
	}
	for (i = m->heap_len / 2; i-- > 0;)
		sift_down(m, i);
	return m;

err_nomem:
	kmt_err_set(err, KMT_ERR_NOMEM, "kmemtrace", UINT64_MAX, "out of memory");
err_close:
	kmt_merge_close(m);
	return NULL;
}

struct kmt_merge *kmt_merge_open_dir(const char *dir, unsigned int flags, struct kmt_error *err)
{
	struct kmt_merge *m;
	char **paths;
	size_t n;

	if (kmt_find_cpu_files(dir, &paths, &n, err) < 0)
		return NULL;
	m = kmt_merge_open(paths, n, flags, err);
	kmt_free_paths(paths, n);
	return m;
}

/*
 * Up to this many files, the next record is found by looking at each
 * file's: a few compares without a branch to mispredict beat a heap,
 * whose every step hinges on which file happens to be next.
 */
#define MERGE_SCAN_MAX	8

int kmt_merge_next(struct kmt_merge *m, union kmt_rec *rec, size_t *file_index)
{
	struct merge_node *h = m->heap;
	struct merge_src *src;
	size_t j = 0, k, top;
	int r;

	if (m->failed)
		return -1;
	if (!m->heap_len)
		return 0;
	/* heap_len only goes down: once scanning, never a heap again. */
	if (m->heap_len <= MERGE_SCAN_MAX)
		for (k = 1; k < m->heap_len; k++)
			j = node_before(&h[k], &h[j]) ? k : j;
	top = h[j].i;
	src = &m->src[top];
	memcpy(rec, src->rec, sizeof(*rec));
	if (file_index)
		*file_index = top;
	r = kmt_file_next_ref(src->f, &src->rec);
	if (r < 0) {
		/* The record in hand is good; the error is the next call's answer. */
		m->err = *kmt_file_error(src->f);
		m->failed = 1;
		return 1;
	}
	if (r > 0)
		node_set(&h[j], src->rec, top);
	else
		h[j] = h[--m->heap_len];
	if (m->heap_len > MERGE_SCAN_MAX)
		sift_down(m, 0);
	return 1;
}

const struct kmt_error *kmt_merge_error(const struct kmt_merge *m)
{
	return &m->err;
}

size_t kmt_merge_nfiles(const struct kmt_merge *m)
{
	return m->n;
}

struct kmt_file *kmt_merge_file(const struct kmt_merge *m, size_t i)
{
	return i < m->n ? m->src[i].f : NULL;
}

void kmt_merge_close(struct kmt_merge *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; m->src && i < m->n; i++)
		kmt_file_close(m->src[i].f);
	free(m->src);
	free(m->heap);
	free(m);
}
