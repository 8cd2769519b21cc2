// SPDX-License-Identifier: GPL-2.0-only
/*
 * rotate.c - kmemtraced --max-size: segment directories, and dropping the
 * oldest segment into the checkpoint (report/lib/kmt_ckpt.c) so that a
 * report of the kept ones still knows every object live at their start.
 *
 * A leaf (kmemtraced.h): it calls kmtd_util.c and the trace library.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rotate.h"

int kmtd_parse_size(const char *arg, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (*arg < '0' || *arg > '9')
		return -1;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	case 't': case 'T':
		shift = 40;
		break;
	default:
		return -1;
	}
	if (*end && end[1] && strcmp(end + 1, "iB") != 0 && strcmp(end + 1, "B") != 0)
		return -1;
	if (shift && v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

void kmtd_ckpt_dir(const char *outdir, unsigned int seg, char *buf, size_t size)
{
	snprintf(buf, size, "%s/ckpt.%06u", outdir, seg);
}

int kmtd_make_seg_dir(const char *outdir, unsigned int seg)
{
	char dir[PATH_MAX];

	kmtd_seg_dir(outdir, seg, dir, sizeof(dir));
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		kmtd_err("cannot create directory %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

int kmtd_remove_dir(const char *path)
{
	struct dirent *de;
	int ret = 0;
	DIR *dir;

	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(dir))) {
		char p[PATH_MAX + 300];

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		if (unlink(p) < 0 && errno != ENOENT)
			ret = -1;
	}
	closedir(dir);
	if (rmdir(path) < 0 && errno != ENOENT)
		ret = -1;
	return ret;
}

static uint64_t dir_bytes(const char *path)
{
	struct dirent *de;
	uint64_t sum = 0;
	DIR *dir;

	dir = opendir(path);
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		char p[PATH_MAX + 300];
		struct stat st;

		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		if (de->d_name[0] != '.' && stat(p, &st) == 0 && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_size;
	}
	closedir(dir);
	return sum;
}

static int sync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fsync(fd) < 0 && errno != EINVAL) {
		close(fd);
		return -1;
	}
	return close(fd);
}

int kmtd_drop_segment(struct kmt_ckpt *k, const char *outdir, unsigned int seg, uint64_t cut_ns,
		      const char *keep_dir, uint64_t *ckpt_bytes)
{
	char segdir[PATH_MAX], tmp[PATH_MAX + 8], ckdir[PATH_MAX], old[PATH_MAX];
	struct kmt_error err;

	kmtd_seg_dir(outdir, seg, segdir, sizeof(segdir));
	if (kmt_ckpt_fold_dir(k, segdir, cut_ns, &err) < 0) {
		kmtd_err("cannot fold %s into a checkpoint: %s", segdir, err.msg);
		return -1;
	}
	/*
	 * Written aside, then renamed: a reader (and a crash) sees the old
	 * checkpoint with the segment, or the new one; the segment goes last.
	 */
	kmtd_ckpt_dir(outdir, seg + 1, ckdir, sizeof(ckdir));
	snprintf(tmp, sizeof(tmp), "%s.tmp", ckdir);
	kmtd_remove_dir(tmp);
	if (kmt_ckpt_write(k, tmp, seg + 1, cut_ns, &err) < 0) {
		kmtd_err("cannot write the checkpoint: %s", err.msg);
		kmtd_remove_dir(tmp);
		return -1;
	}
	if (sync_dir(tmp) < 0 || rename(tmp, ckdir) < 0 || sync_dir(outdir) < 0) {
		kmtd_err("cannot put the checkpoint in place as %s: %s", ckdir, strerror(errno));
		kmtd_remove_dir(tmp);
		return -1;
	}
	*ckpt_bytes = dir_bytes(ckdir);
	kmtd_ckpt_dir(outdir, seg, old, sizeof(old));
	if (kmtd_remove_dir(old) < 0)
		kmtd_err("warning: cannot remove %s: %s", old, strerror(errno));
	if (keep_dir) {
		char dest[PATH_MAX + 16];

		snprintf(dest, sizeof(dest), "%s/seg.%06u", keep_dir, seg);
		if (rename(segdir, dest) == 0)
			return 0;
		kmtd_err("warning: cannot move %s to %s: %s; removing it", segdir, dest,
			 strerror(errno));
	}
	if (kmtd_remove_dir(segdir) < 0) {
		kmtd_err("cannot remove %s: %s", segdir, strerror(errno));
		return -1;
	}
	return 0;
}
