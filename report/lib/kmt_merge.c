// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt_merge.c - finds the cpuN.out files of a trace directory and merges
 * them into one stream in time order, handing out records where they lie
 * in the files' read buffers: memory depends on the number of CPUs, not
 * on the trace.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmt_reader_int.h"

/*
 * Each file's next record, its head, waits validated in the file's read
 * buffer (kmt_file_examine()); the nodes hold the order key of every head
 * next to the file, so that ordering touches no record. The stream's
 * order is (timestamp, cpu, seq, file index), but two files of one merge
 * never share a CPU (kmt_merge_open refuses that) and every record
 * carries its file's CPU, so (timestamp, cpu) alone orders the nodes.
 */
struct merge_node {
	uint64_t ts;
	/*
	 * The timestamp of the record after the head when it is validated
	 * already: the next key of the file, read early, so that choosing the
	 * next record need not wait for memory.
	 */
	uint64_t next_ts;
	struct kmt_file *f;
	uint32_t cpu;
	uint32_t i;		/* index into files */
};

/*
 * Up to this many files, the next record is found by looking at each
 * file's: a few compares without a branch to mispredict beat a heap,
 * whose every step hinges on which file happens to be next. The nodes are
 * then kept in CPU order, so that the first of equal timestamps wins, and
 * padded to a power of two with nodes that never win (scan_min()).
 */
#define MERGE_SCAN_MAX	8

struct kmt_merge {
	size_t n;
	struct kmt_file **files;
	/* Min-heap by record order; in CPU order and padded once scanned. */
	struct merge_node *heap;
	size_t heap_len;
	/*
	 * 1 + the node whose file ran out of buffered slots in the last call:
	 * its buffer is refilled, and its head found, at the start of the next.
	 */
	size_t refill;
	uint32_t last;			/* file of the last record returned */
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

/*
 * The timestamp of the record after the head (at f->pos) when that one is
 * validated already, else the head's own: a slot not validated yet may be
 * anything, so its key waits for kmt_file_vet().
 */
static inline uint64_t ts_after_head(const struct kmt_file *f)
{
	const union kmt_rec *r = (const union kmt_rec *)(const void *)(f->buf + f->pos);

	return (f->pos + KMT_RECORD_SIZE < f->vet ? r + 1 : r)->c.timestamp;
}

/* Sets nd's keys from its file's head (after kmt_file_examine() said 1). */
static inline void node_keys(struct merge_node *nd)
{
	const struct kmt_file *f = nd->f;

	nd->ts = ((const union kmt_rec *)(const void *)(f->buf + f->pos))->c.timestamp;
	nd->next_ts = ts_after_head(f);
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

/*
 * Pads the nodes from i up to MERGE_SCAN_MAX with ones of the greatest key:
 * to the right of every file's node, they lose every tie too.
 */
static void pad_nodes(struct kmt_merge *m, size_t i)
{
	for (; i < MERGE_SCAN_MAX; i++)
		m->heap[i] = (struct merge_node){ .ts = UINT64_MAX, .next_ts = UINT64_MAX };
}

/* Makes the nodes (at most MERGE_SCAN_MAX) ready for scan_run(). */
static void sort_by_cpu(struct kmt_merge *m)
{
	struct merge_node *h = m->heap;
	size_t i, j;

	for (i = 1; i < m->heap_len; i++) {
		struct merge_node x = h[i];

		for (j = i; j > 0 && h[j - 1].cpu > x.cpu; j--)
			h[j] = h[j - 1];
		h[j] = x;
	}
	pad_nodes(m, m->heap_len);
}

static int cmp_cpu_path(const void *a, const void *b)
{
	const char *const *x = a, *const *y = b;
	long cx = kmt_cpu_of_name(*x), cy = kmt_cpu_of_name(*y);

	return (cx > cy) - (cx < cy);
}

/*
 * N of "PREFIXNNNNNN" (six decimal digits or more: kmemtraced writes %06u,
 * so a run of a million segments goes on with seven; 0 < N < 2^32), else 0.
 */
static uint32_t seg_number(const char *name, const char *prefix)
{
	size_t pl = strlen(prefix), len = strlen(name), i;
	uint64_t v = 0;

	if (strncmp(name, prefix, pl) != 0 || len < pl + 6 || len > pl + 10)
		return 0;
	for (i = pl; i < len; i++) {
		if (name[i] < '0' || name[i] > '9')
			return 0;
		v = v * 10 + (uint64_t)(name[i] - '0');
	}
	return v <= UINT32_MAX ? (uint32_t)v : 0;
}

/*
 * DIR/cpuN.out sorted by N; *rot_segs counts the seg.NNNNNN entries when
 * there is no cpuN.out (a rotated trace), and then no error is set for
 * the missing files, nor when allow_empty.
 */
static int list_cpu_files(const char *dir, char ***paths, size_t *n, size_t *rot_segs,
			  int allow_empty, struct kmt_error *err)
{
	char **v = NULL, **nv;
	size_t len = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	memset(err, 0, sizeof(*err));
	*paths = NULL;
	*n = 0;
	if (rot_segs)
		*rot_segs = 0;
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
		if (kmt_cpu_of_name(de->d_name) < 0) {
			if (rot_segs && seg_number(de->d_name, "seg.") > 0)
				(*rot_segs)++;
			continue;
		}
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
		if (allow_empty || (rot_segs && *rot_segs))
			return 0;
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

/* A rotated trace's window: which checkpoint and segments (kmt_find_cpu_files()). */
struct window {
	uint32_t ckpt, first, last;
};

/* Finds the window of a rotated DIR. 0, or -1 with *err. */
static int find_window(const char *dir, struct window *w, struct kmt_error *err)
{
	uint32_t lo = UINT32_MAX, hi = 0, k;
	struct dirent *de;
	DIR *d;

	memset(w, 0, sizeof(*w));
	d = opendir(dir);
	if (!d) {
		kmt_err_set(err, KMT_ERR_IO, dir, UINT64_MAX, "cannot open directory: %s",
			    strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		char p[PATH_MAX];
		struct stat st;

		if ((k = seg_number(de->d_name, "seg."))) {
			lo = k < lo ? k : lo;
			hi = k > hi ? k : hi;
			continue;
		}
		/* An interrupted drop may leave several: the newest whose segment is there. */
		k = seg_number(de->d_name, "ckpt.");
		if (k <= w->ckpt)
			continue;
		snprintf(p, sizeof(p), "%s/seg.%06" PRIu32, dir, k);
		if (stat(p, &st) == 0)
			w->ckpt = k;
	}
	closedir(d);
	w->first = w->ckpt ? w->ckpt : lo;
	w->last = hi;
	if (!w->ckpt && lo != 1) {
		kmt_err_set(err, KMT_ERR_DATA, dir, UINT64_MAX, "rotated trace without a "
			    "checkpoint: its first segment is seg.%06" PRIu32 ", and no ckpt.%06"
			    PRIu32 " holds what was dropped before it", lo, lo);
		return -1;
	}
	for (k = w->first; k <= hi; k++) {
		char p[PATH_MAX];
		struct stat st;

		snprintf(p, sizeof(p), "%s/seg.%06" PRIu32, dir, k);
		if (stat(p, &st) != 0) {
			kmt_err_set(err, KMT_ERR_DATA, dir, UINT64_MAX, "segment seg.%06" PRIu32
				    " is missing: the trace's window runs from %s.%06" PRIu32
				    " to seg.%06" PRIu32, k, w->ckpt ? "ckpt" : "seg", w->first, hi);
			return -1;
		}
	}
	return 0;
}

/*
 * Appends the cpuN.out files of DIR/NAME.NNNNNN (by N) to *v, of *len. A
 * segment kmemtraced just began may have none yet. 0, or -1 with *err.
 */
static int append_files(const char *dir, const char *name, uint32_t num, char ***v, size_t *len,
			struct kmt_error *err)
{
	char p[PATH_MAX], **sub, **nv;
	size_t nsub, i;

	snprintf(p, sizeof(p), "%s/%s.%06" PRIu32, dir, name, num);
	if (list_cpu_files(p, &sub, &nsub, NULL, 1, err) < 0)
		return -1;
	nv = realloc(*v, (*len + nsub + 1) * sizeof(**v));
	if (!nv) {
		kmt_free_paths(sub, nsub);
		kmt_err_set(err, KMT_ERR_NOMEM, dir, UINT64_MAX, "out of memory");
		return -1;
	}
	*v = nv;
	for (i = 0; i < nsub; i++)
		nv[(*len)++] = sub[i];
	free(sub);
	return 0;
}

/*
 * The files of a rotated DIR's window, in reading order: the
 * checkpoint's, then each segment's. 0, or -1 with *err.
 */
static int rotated_files(const char *dir, const struct window *w, char ***paths, size_t *n,
			 struct kmt_error *err)
{
	char **v = NULL;
	size_t len = 0;
	uint32_t k;

	*paths = NULL;
	*n = 0;
	if (w->ckpt && append_files(dir, "ckpt", w->ckpt, &v, &len, err) < 0)
		goto err_free;
	for (k = w->first; k <= w->last; k++)
		if (append_files(dir, "seg", k, &v, &len, err) < 0)
			goto err_free;
	if (!len) {
		kmt_err_set(err, KMT_ERR_DATA, dir, UINT64_MAX, "no cpu*.out files in its "
			    "checkpoint and segments");
		goto err_free;
	}
	*paths = v;
	*n = len;
	return 0;

err_free:
	kmt_free_paths(v, len);
	return -1;
}

int kmt_find_cpu_files(const char *dir, char ***paths, size_t *n, struct kmt_error *err)
{
	struct window w;
	size_t segs;

	if (list_cpu_files(dir, paths, n, &segs, 0, err) < 0)
		return -1;
	if (*n)
		return 0;
	if (find_window(dir, &w, err) < 0)
		return -1;
	return rotated_files(dir, &w, paths, n, err);
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

static int inputs_nomem(struct kmt_error *err)
{
	err->cls = KMT_ERR_NOMEM;
	snprintf(err->msg, sizeof(err->msg), "out of memory");
	return -1;
}

/*
 * Orders references to a rotated window's files by CPU, each CPU's in
 * reading order: the order of the references' targets in the listing.
 */
static int cmp_stream_ref(const void *a, const void *b)
{
	char **const *x = a, **const *y = b;
	long cx = kmt_cpu_of_name(**x), cy = kmt_cpu_of_name(**y);

	if (cx != cy)
		return (cx > cy) - (cx < cy);
	return (*x > *y) - (*x < *y);
}

/* A directory's files: its cpuN.out, or a rotated trace's window as streams. */
static int inputs_dir(struct kmt_inputs *in, struct kmt_error *err)
{
	char ***ref = NULL, **sorted = NULL;
	struct window w;
	size_t segs, i, j;
	int ret = -1;

	if (list_cpu_files(in->dir, &in->paths, &in->n, &segs, 0, err) < 0)
		return -1;
	if (in->n)
		return 0;
	if (find_window(in->dir, &w, err) < 0 ||
	    rotated_files(in->dir, &w, &in->paths, &in->n, err) < 0)
		return -1;
	in->ckpt_segment = w.ckpt;
	in->first_segment = w.first;
	in->last_segment = w.last;
	/* qsort is not stable: references keep the reading order among a CPU's files. */
	ref = malloc(in->n * sizeof(*ref));
	sorted = malloc(in->n * sizeof(*sorted));
	in->stream_len = calloc(in->n, sizeof(*in->stream_len));
	if (!ref || !sorted || !in->stream_len) {
		inputs_nomem(err);
		goto out;
	}
	for (i = 0; i < in->n; i++)
		ref[i] = &in->paths[i];
	qsort(ref, in->n, sizeof(*ref), cmp_stream_ref);
	for (i = 0; i < in->n; i++)
		sorted[i] = *ref[i];
	memcpy(in->paths, sorted, in->n * sizeof(*sorted));
	for (i = 0; i < in->n; i = j) {
		long cpu = kmt_cpu_of_name(in->paths[i]);

		for (j = i; j < in->n && kmt_cpu_of_name(in->paths[j]) == cpu; j++)
			;
		in->stream_len[in->nstreams++] = j - i;
	}
	ret = 0;
out:
	free(ref);
	free(sorted);
	return ret;
}

int kmt_inputs_resolve(char *const *args, size_t n, struct kmt_inputs *in,
		       struct kmt_error *err)
{
	struct stat st;
	char *tmp;
	size_t i;

	memset(in, 0, sizeof(*in));
	if (n <= 1) {
		const char *d = n ? args[0] : ".";

		if (stat(d, &st) == 0 && S_ISDIR(st.st_mode)) {
			in->dir = strdup(d);
			if (!in->dir)
				return inputs_nomem(err);
			in->name = in->dir;
			return inputs_dir(in, err);
		}
	}
	for (i = 0; i < n; i++) {
		if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			err->cls = KMT_ERR_USAGE;
			snprintf(err->msg, sizeof(err->msg), "%s: a directory among files; give "
				 "one directory or files", args[i]);
			return -1;
		}
	}
	in->paths = calloc(n, sizeof(*in->paths));
	if (!in->paths)
		return inputs_nomem(err);
	for (i = 0; i < n; i++) {
		in->paths[i] = strdup(args[i]);
		if (!in->paths[i])
			return inputs_nomem(err);
		in->n++;
	}
	in->name = in->paths[0];
	tmp = strdup(args[0]);
	if (!tmp)
		return inputs_nomem(err);
	in->dir = strdup(dirname(tmp));
	free(tmp);
	if (!in->dir)
		return inputs_nomem(err);
	return 0;
}

void kmt_inputs_free(struct kmt_inputs *in)
{
	kmt_free_paths(in->paths, in->n);
	free(in->stream_len);
	free(in->dir);
	memset(in, 0, sizeof(*in));
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
	const struct kmt_file_header *h = kmt_file_header(m->files[i]);
	const char *path = kmt_file_path(m->files[i]);
	size_t j;

	for (j = 0; j < i; j++) {
		const struct kmt_file_header *o = kmt_file_header(m->files[j]);
		const char *opath = kmt_file_path(m->files[j]);

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

/*
 * n streams of files: stream_len[i] files of paths each, one after the
 * other (NULL: one file a stream).
 */
static struct kmt_merge *merge_open(char *const *paths, const size_t *stream_len, size_t n,
				    unsigned int flags, struct kmt_error *err)
{
	struct kmt_merge *m;
	size_t i, first = 0, nfiles = 0;

	memset(err, 0, sizeof(*err));
	if (!n) {
		kmt_err_set(err, KMT_ERR_USAGE, "kmemtrace", UINT64_MAX, "no trace files given");
		return NULL;
	}
	for (i = 0; i < n; i++)
		nfiles += stream_len ? stream_len[i] : 1;
	if (check_majors(paths, nfiles, err) < 0)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		goto err_nomem;
	m->files = calloc(n, sizeof(*m->files));
	m->heap = calloc(n > MERGE_SCAN_MAX ? n : MERGE_SCAN_MAX, sizeof(*m->heap));
	if (!m->files || !m->heap)
		goto err_nomem;
	m->n = n;
	for (i = 0; i < n; i++) {
		size_t len = stream_len ? stream_len[i] : 1;

		m->files[i] = kmt_file_open(paths[first], flags, err);
		if (!m->files[i])
			goto err_close;
		if (len > 1 && kmt_file_chain(m->files[i], paths + first + 1, len - 1) < 0)
			goto err_nomem;
		first += len;
		if (check_same_trace(m, i, err) < 0)
			goto err_close;
	}
	for (i = 0; i < n; i++) {
		int r = kmt_file_examine(m->files[i], 1);
		struct merge_node *nd = &m->heap[m->heap_len];

		if (r < 0) {
			*err = *kmt_file_error(m->files[i]);
			goto err_close;
		}
		if (r == 0)
			continue;
		nd->f = m->files[i];
		node_keys(nd);
		nd->cpu = m->files[i]->tr.cpu;
		nd->i = (uint32_t)i;
		m->heap_len++;
	}
	if (m->heap_len > MERGE_SCAN_MAX)
		for (i = m->heap_len / 2; i-- > 0;)
			sift_down(m, i);
	else
		sort_by_cpu(m);
	return m;

err_nomem:
	kmt_err_set(err, KMT_ERR_NOMEM, "kmemtrace", UINT64_MAX, "out of memory");
err_close:
	kmt_merge_close(m);
	return NULL;
}

struct kmt_merge *kmt_merge_open(char *const *paths, size_t n, unsigned int flags,
				 struct kmt_error *err)
{
	return merge_open(paths, NULL, n, flags, err);
}

struct kmt_merge *kmt_merge_open_inputs(const struct kmt_inputs *in, unsigned int flags,
					struct kmt_error *err)
{
	if (in->stream_len)
		return merge_open(in->paths, in->stream_len, in->nstreams, flags, err);
	return merge_open(in->paths, NULL, in->n, flags, err);
}

struct kmt_merge *kmt_merge_open_dir(const char *dir, unsigned int flags, struct kmt_error *err)
{
	struct kmt_inputs in = { 0 };
	struct kmt_merge *m = NULL;

	memset(err, 0, sizeof(*err));
	/* A directory, whatever it is: not a file's name taken as the trace. */
	in.dir = strdup(dir);
	if (!in.dir)
		inputs_nomem(err);
	else if (inputs_dir(&in, err) == 0)
		m = kmt_merge_open_inputs(&in, flags, err);
	kmt_inputs_free(&in);
	return m;
}

/*
 * Takes the answer of kmt_file_examine() for the file of node j, whose
 * head was just taken.
 */
static void settle(struct kmt_merge *m, size_t j, int rc)
{
	struct merge_node *h = m->heap;

	if (rc == 1) {
		node_keys(&h[j]);
		if (m->heap_len > MERGE_SCAN_MAX)
			sift_down(m, j);
	} else if (rc == KMT_NEED_FILL) {
		m->refill = j + 1;
	} else if (rc < 0) {
		m->err = *kmt_file_error(h[j].f);
		m->failed = 1;
	} else if (m->heap_len > MERGE_SCAN_MAX) {
		/* Only the top is ever taken from a heap: j is 0. */
		h[j] = h[--m->heap_len];
		if (m->heap_len > MERGE_SCAN_MAX)
			sift_down(m, j);
		else
			sort_by_cpu(m);
	} else {
		m->heap_len--;
		memmove(&h[j], &h[j + 1], (m->heap_len - j) * sizeof(*h));
		pad_nodes(m, m->heap_len);
	}
}

/* Hands out the head of nd's file and makes the next record its head. */
static inline int take_head(struct merge_node *nd, const union kmt_rec **out)
{
	struct kmt_file *f = nd->f;
	size_t pos = f->pos;
	int rc;

	*out = (const union kmt_rec *)(void *)(f->buf + pos);
	f->pos = pos += KMT_RECORD_SIZE;
	if (kmt_likely(pos < f->vet)) {
		/* The new head's key was read early, with the old head's. */
		nd->ts = nd->next_ts;
		nd->next_ts = ts_after_head(f);
		return 1;
	}
	/* No refill: the records handed out must stay where they are. */
	rc = kmt_file_vet(f, 0, SIZE_MAX);
	if (rc == 1)
		node_keys(nd);
	return rc;
}

/* A node in the running for the next record, with its key at hand. */
struct pick {
	uint64_t ts;
	struct merge_node *nd;
};

/*
 * The node with the next record among len (2, 4 or 8, a constant once
 * inlined) in CPU order: a tournament, whose depth is what each record
 * waits for. The left side, of lower CPUs, wins ties.
 */
static inline __attribute__((always_inline)) struct merge_node *
scan_min(struct merge_node *h, const size_t len)
{
	struct pick p[MERGE_SCAN_MAX];
	size_t k, w;

#pragma GCC unroll 8
	for (k = 0; k < len; k++) {
		p[k].ts = h[k].ts;
		p[k].nd = &h[k];
	}
#pragma GCC unroll 4
	for (w = 1; w < len; w *= 2) {
#pragma GCC unroll 4
		for (k = 0; k + w < len; k += 2 * w) {
			int lt = p[k + w].ts < p[k].ts;

			p[k].nd = lt ? p[k + w].nd : p[k].nd;
			p[k].ts = lt ? p[k + w].ts : p[k].ts;
		}
	}
	return p[0].nd;
}

/*
 * The files' heads in order, up to max, from len nodes (padded) in CPU
 * order. The first of equal timestamps is the lowest CPU's, so a strict
 * compare of timestamps suffices. Stops early at anything but a new head
 * (a file's end, an error, an empty buffer), which settle() takes and
 * which may change the number of nodes. Always inlined with a constant
 * len, which unrolls the scan.
 */
static inline __attribute__((always_inline)) size_t
scan_run(struct kmt_merge *m, const union kmt_rec **recs, size_t max, const size_t len)
{
	struct merge_node *h = m->heap, *nd;
	size_t n = 0;
	int rc;

	do {
		nd = scan_min(h, len);
		rc = take_head(nd, &recs[n++]);
	} while (kmt_likely(rc == 1) && n < max);
	m->last = nd->i;
	if (rc != 1)
		settle(m, (size_t)(nd - h), rc);
	return n;
}

static size_t heap_run(struct kmt_merge *m, const union kmt_rec **recs, size_t max)
{
	size_t n = 0;
	int rc;

	do {
		m->last = m->heap[0].i;
		rc = take_head(&m->heap[0], &recs[n++]);
		if (rc != 1) {
			settle(m, 0, rc);
			break;
		}
		sift_down(m, 0);
	} while (n < max);
	return n;
}

/* kmt_merge_next_batch() for any max > 0. */
static size_t merge_run(struct kmt_merge *m, const union kmt_rec **recs, size_t max)
{
	size_t n = 0;

	if (m->refill) {
		size_t j = m->refill - 1;

		m->refill = 0;
		settle(m, j, kmt_file_examine(m->heap[j].f, 1));
	}
	while (n < max && m->heap_len && !m->failed && !m->refill) {
		const union kmt_rec **out = recs + n;
		size_t left = max - n;

		if (m->heap_len <= 2)
			n += scan_run(m, out, left, 2);
		else if (m->heap_len <= 4)
			n += scan_run(m, out, left, 4);
		else if (m->heap_len <= MERGE_SCAN_MAX)
			n += scan_run(m, out, left, MERGE_SCAN_MAX);
		else
			n += heap_run(m, out, left);
	}
	return n;
}

int kmt_merge_next_batch(struct kmt_merge *m, const union kmt_rec **recs, size_t max)
{
	size_t n;

	if (m->failed)
		return -1;
	if (!max) {
		kmt_err_set(&m->err, KMT_ERR_USAGE, "kmemtrace", UINT64_MAX,
			    "%s() asked for no records", __func__);
		return -1;
	}
	n = merge_run(m, recs, max < INT_MAX ? max : INT_MAX);
	/* The records before an error first; the error is the next call's answer. */
	if (!n && m->failed)
		return -1;
	return (int)n;
}

int kmt_merge_next(struct kmt_merge *m, union kmt_rec *rec, size_t *file_index)
{
	const union kmt_rec *r;
	int ret = kmt_merge_next_batch(m, &r, 1);

	if (ret == 1) {
		memcpy(rec, r, sizeof(*rec));
		if (file_index)
			*file_index = m->last;
	}
	return ret;
}

int kmt_merge_checkpoint(const struct kmt_merge *m, uint64_t *cut_ns, uint64_t *dropped,
			 struct kmt_error *err)
{
	const char *cut_path = NULL;
	size_t i;

	*cut_ns = 0;
	*dropped = 0;
	for (i = 0; i < m->n; i++) {
		const struct kmt_file_header *h = kmt_file_checkpoint(m->files[i]);
		const char *path = kmt_file_path(m->files[i]);

		if (!h)
			continue;
		if (cut_path && h->cut_ns != *cut_ns) {
			kmt_err_set(err, KMT_ERR_DATA, path, 40, "a checkpoint cut at %" PRIu64
				    " ns, and %s at %" PRIu64 " ns: not one rotated trace",
				    (uint64_t)h->cut_ns, cut_path, *cut_ns);
			return -1;
		}
		cut_path = path;
		*cut_ns = h->cut_ns;
		*dropped += h->dropped_records;
	}
	return cut_path != NULL;
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
	return i < m->n ? m->files[i] : NULL;
}

void kmt_merge_close(struct kmt_merge *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; m->files && i < m->n; i++)
		kmt_file_close(m->files[i]);
	free(m->files);
	free(m->heap);
	free(m);
}
