// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmtd_util.c - the bottom layer of kmemtraced: its messages and the file
 * helpers that the environment checks, the drain threads and the metadata
 * writer all need. It calls nothing else of kmemtraced's (kmemtraced.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmtd_util.h"

void kmtd_err(const char *fmt, ...)
{
	va_list ap;

	fputs(KMTD_NAME ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int kmtd_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			/* A regular file never does this; treat it as an I/O error. */
			errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int kmtd_read_file(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd, saved;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (len + 1 < size) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			saved = errno;
			close(fd);
			errno = saved;
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(fd);
	return (int)len;
}

const char *kmtd_lockdown_mode(void)
{
	char buf[256];

	if (kmtd_read_file("/sys/kernel/security/lockdown", buf, sizeof(buf)) < 0)
		return NULL;
	if (strstr(buf, "[integrity]"))
		return "integrity";
	if (strstr(buf, "[confidentiality]"))
		return "confidentiality";
	return NULL;
}

void kmtd_explain_open_error(const char *path, int err)
{
	const char *mode = NULL;

	if (err == EPERM)
		mode = kmtd_lockdown_mode();
	if (mode) {
		kmtd_err("%s: %s: the kernel is in lockdown mode '%s', which closes debugfs; tracing needs a kernel booted without lockdown (lockdown=none, Secure Boot off)",
			 path, strerror(err), mode);
	} else if (err == EPERM && geteuid() == 0) {
		/* Root refused: lockdown is the usual cause, securityfs may just be unmounted. */
		kmtd_err("%s: %s: is the kernel in lockdown mode (see /sys/kernel/security/lockdown)? It closes debugfs",
			 path, strerror(err));
	} else if (err == EACCES || err == EPERM) {
		kmtd_err("%s: %s (the kmemtrace debugfs files are root-only)", path,
			 strerror(err));
	} else {
		kmtd_err("cannot open %s: %s", path, strerror(err));
	}
}

int kmtd_create_file(const char *path, bool force)
{
	int fd;

	if (force && unlink(path) < 0 && errno != ENOENT) {
		kmtd_err("%s: cannot remove the old file: %s", path, strerror(errno));
		return -1;
	}
	/* O_EXCL also refuses a symlink planted where the file goes. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		int err = errno;

		if (err == EEXIST)
			kmtd_err("%s: already exists (use -f to overwrite the trace)", path);
		else
			kmtd_err("%s: cannot create: %s", path, strerror(err));
		errno = err;
		return -1;
	}
	/* The files hold kernel addresses: exactly 0600 whatever the umask. */
	if (fchmod(fd, 0600) < 0) {
		kmtd_err("%s: chmod 0600 failed: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

void kmtd_seg_dir(const char *outdir, unsigned int seg, char *buf, size_t size)
{
	snprintf(buf, size, "%s/seg.%06u", outdir, seg);
}

static bool faked(void)
{
	const char *fake = getenv(KMTD_FAKE_ENV);

	return fake && strcmp(fake, "1") == 0;
}

const char *kmtd_slab_dir(void)
{
	const char *dir = getenv("KMEMTRACED_TEST_SLAB_DIR");

	return faked() && dir ? dir : "/sys/kernel/slab";
}

const char *kmtd_proc_path(const char *name, char *buf, size_t size)
{
	const char *dir = getenv("KMEMTRACED_TEST_PROC_DIR");

	if (faked() && dir)
		snprintf(buf, size, "%s/%s", dir, name);
	else
		snprintf(buf, size, "/proc/%s", name);
	return buf;
}
