// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmemtrace-rotate.c - cuts a trace into the segments kmemtraced --max-size
 * writes and folds the oldest into a checkpoint with kmemtraced's own fold
 * (report/lib/kmt_ckpt.c): a rotated trace whose every record the host
 * tests know, to hold its report to the whole trace's.
 *
 *   kmemtrace-rotate [--fold N] TRACE OUT CUT...
 *
 * TRACE's cpuN.out records with timestamp (ns, the records' clock) before
 * the first CUT go to OUT/seg.000001, those from CUT i on to seg.i+1.
 * The first N segments (default: all but the last) are then folded into
 * OUT/ckpt.N+1 and removed. TRACE's metadata files are copied into OUT.
 * With KMT_ROTATE_STATS set, prints what the fold holds (kmt_ckpt_get_stats()).
 * Exit 0, 1 usage, 2 bad trace, 3 I/O, 4 out of memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmt_ckpt.h"
#include "kmt_exit.h"
#include "kmt_writer.h"

#define MAX_CUTS	64

static const char *const meta_files[] = {
	"kmemtrace.meta", "kallsyms", "modules", "kallsyms.loaded", "tracepoint_formats",
};

static void set_err(struct kmt_error *err, enum kmt_err_class cls, const char *path)
{
	err->cls = cls;
	err->offset = UINT64_MAX;
	snprintf(err->msg, sizeof(err->msg), "%s: %s", path,
		 cls == KMT_ERR_NOMEM ? "out of memory" : strerror(errno));
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in, out, ret = 0;
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return errno == ENOENT ? 0 : -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			ret = -1;
	if (n < 0)
		ret = -1;
	close(in);
	if (close(out) < 0)
		ret = -1;
	return ret;
}

static void seg_path(char *buf, size_t size, const char *out, unsigned int seg)
{
	snprintf(buf, size, "%s/seg.%06u", out, seg);
}

/* Splits one cpuN.out at the cuts into seg.K/cpuN.out. */
static int split_file(const char *path, const char *out, const uint64_t *cut, unsigned int ncut,
		      struct kmt_error *err)
{
	FILE *seg[MAX_CUTS + 1] = { NULL };
	const char *base = strrchr(path, '/');
	uint8_t raw[KMT_RECORD_SIZE];
	struct kmt_file *f;
	union kmt_rec r;
	unsigned int s = 0, i;
	int ret = -1, n, be;

	base = base ? base + 1 : path;
	f = kmt_file_open(path, 0, err);
	if (!f)
		return -1;
	be = kmt_file_big_endian(f);
	kmt_header_encode(raw, kmt_file_header(f), be);
	for (i = 0; i <= ncut; i++) {
		char p[4096];

		seg_path(p, sizeof(p), out, i + 1);
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			goto io;
		snprintf(p + strlen(p), sizeof(p) - strlen(p), "/%s", base);
		seg[i] = fopen(p, "w");
		if (!seg[i] || fwrite(raw, sizeof(raw), 1, seg[i]) != 1)
			goto io;
	}
	while ((n = kmt_file_next(f, &r)) > 0) {
		while (s < ncut && r.c.timestamp >= cut[s])
			s++;
		kmt_rec_encode(raw, &r, be);
		if (fwrite(raw, sizeof(raw), 1, seg[s]) != 1)
			goto io;
	}
	if (n < 0) {
		*err = *kmt_file_error(f);
		goto out;
	}
	ret = 0;
	goto out;
io:
	set_err(err, KMT_ERR_IO, out);
out:
	for (i = 0; i <= ncut; i++)
		if (seg[i] && fclose(seg[i]) && !ret) {
			set_err(err, KMT_ERR_IO, out);
			ret = -1;
		}
	kmt_file_close(f);
	return ret;
}

static int usage(void)
{
	fprintf(stderr, "usage: kmemtrace-rotate [--fold N] TRACE OUT CUT...\n");
	return KMT_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	uint64_t cut[MAX_CUTS];
	unsigned int ncut = 0, fold, i;
	struct kmt_ckpt *k = NULL;
	struct kmt_error err;
	long nfold = -1;
	char **paths = NULL, p[4096], q[4096];
	size_t npaths = 0;
	int a = 1, ret;

	memset(&err, 0, sizeof(err));
	if (a + 1 < argc && !strcmp(argv[a], "--fold")) {
		char *end;

		errno = 0;
		nfold = strtol(argv[a + 1], &end, 10);
		if (errno || *end || nfold < 0)
			return usage();
		a += 2;
	}
	if (argc - a < 3 || argc - a - 2 > MAX_CUTS)
		return usage();
	for (i = (unsigned int)a + 2; i < (unsigned int)argc; i++) {
		char *end;

		errno = 0;
		cut[ncut] = strtoull(argv[i], &end, 10);
		if (errno || *end || (ncut && cut[ncut] <= cut[ncut - 1]))
			return usage();
		ncut++;
	}
	fold = nfold < 0 ? ncut : (unsigned int)nfold;
	if (fold > ncut)
		return usage();
	if (mkdir(argv[a + 1], 0700) < 0 && errno != EEXIST) {
		perror(argv[a + 1]);
		return KMT_EXIT_IO;
	}
	for (i = 0; i < sizeof(meta_files) / sizeof(meta_files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", argv[a], meta_files[i]);
		snprintf(q, sizeof(q), "%s/%s", argv[a + 1], meta_files[i]);
		if (copy_file(p, q) < 0) {
			perror(q);
			return KMT_EXIT_IO;
		}
	}
	if (kmt_find_cpu_files(argv[a], &paths, &npaths, &err) < 0)
		goto fail;
	for (i = 0; i < npaths; i++)
		if (split_file(paths[i], argv[a + 1], cut, ncut, &err) < 0)
			goto fail;
	if (fold) {
		k = kmt_ckpt_new();
		if (!k) {
			set_err(&err, KMT_ERR_NOMEM, argv[a + 1]);
			goto fail;
		}
		for (i = 1; i <= fold; i++) {
			seg_path(p, sizeof(p), argv[a + 1], i);
			if (kmt_ckpt_fold_dir(k, p, cut[i - 1], &err) < 0)
				goto fail;
		}
		snprintf(p, sizeof(p), "%s/ckpt.%06u", argv[a + 1], fold + 1);
		if (kmt_ckpt_write(k, p, fold + 1, cut[fold - 1], &err) < 0)
			goto fail;
		if (getenv("KMT_ROTATE_STATS")) {
			struct kmt_ckpt_stats st;

			kmt_ckpt_get_stats(k, &st);
			printf("fed %llu folded %llu live %llu kept %llu sums %llu memory %llu\n",
			       (unsigned long long)st.fed, (unsigned long long)st.folded,
			       (unsigned long long)st.live, (unsigned long long)st.kept,
			       (unsigned long long)st.sums, (unsigned long long)st.memory);
		}
		for (i = 1; i <= fold; i++) {
			for (size_t j = 0; j < npaths; j++) {
				const char *base = strrchr(paths[j], '/');

				seg_path(q, sizeof(q), argv[a + 1], i);
				snprintf(q + strlen(q), sizeof(q) - strlen(q), "/%s",
					 base ? base + 1 : paths[j]);
				unlink(q);
			}
			seg_path(q, sizeof(q), argv[a + 1], i);
			rmdir(q);
		}
	}
	kmt_ckpt_free(k);
	kmt_free_paths(paths, npaths);
	return 0;
fail:
	fprintf(stderr, "kmemtrace-rotate: %s\n", err.msg);
	ret = kmt_error_exit(&err);
	kmt_ckpt_free(k);
	kmt_free_paths(paths, npaths);
	return ret ? ret : KMT_EXIT_INTERNAL;
}
