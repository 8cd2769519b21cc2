// SPDX-License-Identifier: GPL-2.0-only
/*
 * top_live.c - kmemtrace-top's control of the running module through
 * debugfs: the lock kmemtraced also takes, the relay buffers, tracing on
 * and off.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "core/report_meta.h"
#include "kmemtrace_abi.h"
#include "top_live.h"

#define DEBUGFS_MAGIC 0x64626720

static int kfile_rw(const struct live *l, const char *name, char *buf, size_t len, bool wr)
{
	char p[PATH_MAX + 32];
	int f;
	ssize_t n;

	snprintf(p, sizeof(p), "%s/%s", l->kdir, name);
	f = open(p, (wr ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (f < 0)
		return -1;
	n = wr ? write(f, buf, len) : read(f, buf, len - 1);
	close(f);
	if (n < 0)
		return -1;
	if (!wr)
		buf[n] = '\0';
	return 0;
}

int live_stack_depth(const struct live *l)
{
	char buf[512];
	const char *cfg;

	/* Its first line only: the CPU lines after it need not fit. */
	if (kfile_rw(l, KMT_DEBUGFS_STACKS, buf, sizeof(buf), false))
		return -1;
	cfg = strstr(buf, "# stacks ");
	return cfg ? meta_stacks_config_depth(cfg + 9) : -1;
}

void live_close(struct live *l)
{
	if (l->was_enabled == 0)
		kfile_rw(l, KMT_DEBUGFS_ENABLED, (char *)"0\n", 2, true);
	l->was_enabled = -1;
	if (l->lock_fd >= 0)
		close(l->lock_fd);
	l->lock_fd = -1;
}

int live_open(struct live *l, const char *debugfs, struct kmt_follow *f, char *msg, size_t len)
{
	struct statfs sf;
	struct stat st;
	char buf[32];
	unsigned int cpu;
	int e;

	l->lock_fd = -1;
	l->was_enabled = -1;
	if (statfs(debugfs, &sf) || sf.f_type != DEBUGFS_MAGIC) {
		snprintf(msg, len, "debugfs is not mounted at %s (mount -t debugfs none %s, or "
			 "-D PATH)", debugfs, debugfs);
		return -1;
	}
	snprintf(l->kdir, sizeof(l->kdir), "%s/" KMT_DEBUGFS_DIR, debugfs);
	if (stat(l->kdir, &st)) {
		e = errno;
		if (e == EACCES || e == EPERM)
			snprintf(msg, len, "%s: %s: kmemtrace-top reads the relay buffers as root",
				 l->kdir, strerror(e));
		else
			snprintf(msg, len, "kmemtrace.ko is not loaded (no %s): modprobe kmemtrace, "
				 "or read a trace with -d DIR", l->kdir);
		return -1;
	}
	l->lock_fd = open(l->kdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (l->lock_fd < 0) {
		snprintf(msg, len, "%s: %s%s", l->kdir, strerror(errno),
			 errno == EACCES ? ": kmemtrace-top reads the relay buffers as root" : "");
		return -1;
	}
	/* kmemtraced's lock: a second reader would take records away from it. */
	if (flock(l->lock_fd, LOCK_EX | LOCK_NB)) {
		if (errno == EWOULDBLOCK)
			snprintf(msg, len, "kmemtraced is draining %s: its buffers are its own; "
				 "follow its trace instead: kmemtrace-top -d DIR (kmemtraced -o DIR)",
				 l->kdir);
		else
			snprintf(msg, len, "%s: cannot lock: %s", l->kdir, strerror(errno));
		return -1;
	}
	for (cpu = 0; cpu < 65536; cpu++) {
		char p[PATH_MAX + 32];
		struct kmt_error err;

		snprintf(p, sizeof(p), "%s/" KMT_DEBUGFS_CPU_FMT, l->kdir, cpu);
		if (access(p, F_OK)) {
			if (cpu >= 1024)
				break;
			continue;
		}
		if (kmt_follow_add_relay(f, p, cpu, &err)) {
			snprintf(msg, len, "%s", err.msg);
			return -1;
		}
	}
	if (!kmt_follow_nsources(f)) {
		snprintf(msg, len, "%s has no cpuN buffers", l->kdir);
		return -1;
	}
	if (kfile_rw(l, KMT_DEBUGFS_ENABLED, buf, sizeof(buf), false)) {
		snprintf(msg, len, "%s/" KMT_DEBUGFS_ENABLED ": %s", l->kdir, strerror(errno));
		return -1;
	}
	l->was_enabled = buf[0] == '1';
	/*
	 * Switched (again) on: the module describes every cache anew in each
	 * CPU's stream after that, so the screen has names.
	 */
	if (l->was_enabled)
		kfile_rw(l, KMT_DEBUGFS_ENABLED, (char *)"0\n", 2, true);
	/* What was buffered before is not this screen's: dropped. */
	kmt_follow_drop(f);
	if (kfile_rw(l, KMT_DEBUGFS_ENABLED, (char *)"1\n", 2, true)) {
		snprintf(msg, len, "%s/" KMT_DEBUGFS_ENABLED ": cannot switch tracing on: %s",
			 l->kdir, strerror(errno));
		return -1;
	}
	return 0;
}
