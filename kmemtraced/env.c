// SPDX-License-Identifier: GPL-2.0-only
/*
 * env.c - what kmemtraced checks before tracing (root, debugfs, lockdown,
 * the module and its ABI version) and the small debugfs/sysfs files it
 * reads and writes.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "kmemtraced.h"

/* From <linux/magic.h>; spelled out so the tool builds without kernel headers. */
#define KMTD_DEBUGFS_MAGIC	0x64626720

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

int kmtd_read_u64(const char *text, uint64_t *val)
{
	unsigned long long v;
	char *end;

	while (isspace((unsigned char)*text))
		text++;
	if (!isdigit((unsigned char)*text))
		return -1;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno)
		return -1;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return -1;
	*val = v;
	return 0;
}

/* The lockdown mode in force, or NULL when none (or unknown). */
static const char *lockdown_mode(void)
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
		mode = lockdown_mode();
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

int kmtd_check_root(void)
{
	if (geteuid() == 0)
		return 0;
	kmtd_err("must run as root: the kmemtrace debugfs files, enabling tracing and the kernel addresses in /proc/kallsyms are root-only");
	return -1;
}

int kmtd_check_debugfs(struct kmtd *d, bool fake)
{
	struct statfs sfs;
	bool is_default = strcmp(d->debugfs, KMTD_DEFAULT_DEBUGFS) == 0;

	if (statfs(d->debugfs, &sfs) < 0) {
		kmtd_err("%s: %s (give debugfs's mount point with -r)", d->debugfs,
			 strerror(errno));
		return -1;
	}
	if (fake || sfs.f_type == KMTD_DEBUGFS_MAGIC)
		return 0;
	/*
	 * Mount it only at its standard place: mounting over a directory
	 * somebody named with -r would hide what is there.
	 */
	if (is_default && mount("none", d->debugfs, "debugfs", 0, NULL) == 0 &&
	    statfs(d->debugfs, &sfs) == 0 && sfs.f_type == KMTD_DEBUGFS_MAGIC) {
		if (d->verbose)
			fprintf(stderr, KMTD_NAME ": mounted debugfs at %s\n", d->debugfs);
		return 0;
	}
	if (is_default)
		kmtd_err("debugfs is not mounted at %s and mounting it failed (%s); mount it with: mount -t debugfs none %s",
			 d->debugfs, strerror(errno),
			 d->debugfs);
	else
		kmtd_err("%s is not a debugfs mount (filesystem type 0x%lx); mount it with: mount -t debugfs none %s, or give debugfs's mount point with -r",
			 d->debugfs, (unsigned long)sfs.f_type, d->debugfs);
	return -1;
}

int kmtd_open_kfile(const struct kmtd *d, const char *name, int flags)
{
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", d->kdir, name);
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		kmtd_explain_open_error(path, errno);
	return fd;
}

int kmtd_read_kfile(const struct kmtd *d, const char *name, char *buf, size_t size)
{
	char path[PATH_MAX + 64];
	int n;

	snprintf(path, sizeof(path), "%s/%s", d->kdir, name);
	n = kmtd_read_file(path, buf, size);
	if (n < 0) {
		int err = errno;

		if (err == EACCES || err == EPERM || err == ENOENT)
			kmtd_explain_open_error(path, err);
		else
			kmtd_err("%s: read failed: %s", path, strerror(err));
	}
	return n;
}

int kmtd_check_module(struct kmtd *d)
{
	char buf[64];
	unsigned long major, minor;
	struct stat st;
	char *end;

	if ((size_t)snprintf(d->kdir, sizeof(d->kdir), "%s/%s", d->debugfs, KMT_DEBUGFS_DIR) >=
	    sizeof(d->kdir)) {
		kmtd_err("-r: path too long");
		return -1;
	}
	if (stat(d->kdir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		const char *mode = lockdown_mode();

		/* Under lockdown, "modprobe it" would only fail again. */
		if (stat(KMTD_SYSMOD, &st) < 0 && mode)
			kmtd_err("kmemtrace.ko is not loaded (no %s), and the kernel is in lockdown mode '%s', which refuses unsigned modules and closes debugfs; tracing needs a kernel booted without lockdown (lockdown=none, Secure Boot off)",
				 d->kdir, mode);
		else if (stat(KMTD_SYSMOD, &st) < 0)
			kmtd_err("kmemtrace.ko is not loaded (no %s); load it with: modprobe kmemtrace, or from a build tree: insmod kmod/kmemtrace.ko",
				 d->kdir);
		else
			kmtd_err("kmemtrace.ko is loaded but %s does not exist: is %s really where debugfs is mounted (-r)?",
				 d->kdir, d->debugfs);
		return -1;
	}
	/*
	 * Two readers would each get part of every buffer: neither trace
	 * would be whole. The lock dies with its holder, even on kill -9.
	 */
	d->lock_fd = open(d->kdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->lock_fd < 0) {
		kmtd_explain_open_error(d->kdir, errno);
		return -1;
	}
	if (flock(d->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			kmtd_err("another kmemtraced is already draining %s: only one can; stop it first",
				 d->kdir);
		else
			kmtd_err("%s: cannot lock: %s", d->kdir, strerror(errno));
		return -1;
	}
	if (kmtd_read_kfile(d, KMT_DEBUGFS_ABI, buf, sizeof(buf)) < 0)
		return -1;
	errno = 0;
	major = strtoul(buf, &end, 10);
	if (errno || end == buf || *end != '.' || !isdigit((unsigned char)end[1]))
		goto bad;
	minor = strtoul(end + 1, &end, 10);
	if (errno || (*end && *end != '\n') || major > 65535 || minor > 65535)
		goto bad;
	if (major != KMT_ABI_MAJOR) {
		kmtd_err("kmemtrace.ko writes trace ABI %lu.%lu but this kmemtraced supports %u.x (it was built for %u.%u); use a kmemtraced and a kmemtrace.ko from the same release",
			 major, minor, KMT_ABI_MAJOR, KMT_ABI_MAJOR,
			 KMT_ABI_MINOR);
		return -1;
	}
	d->abi_major = (unsigned int)major;
	d->abi_minor = (unsigned int)minor;
	return 0;
bad:
	buf[strcspn(buf, "\n")] = '\0';
	kmtd_err("%s/%s: unexpected content '%.20s' (expected MAJOR.MINOR)", d->kdir,
		 KMT_DEBUGFS_ABI, buf);
	return -1;
}

int kmtd_get_enabled(const struct kmtd *d, int *enabled)
{
	char buf[32];
	uint64_t v;

	if (kmtd_read_kfile(d, KMT_DEBUGFS_ENABLED, buf, sizeof(buf)) < 0)
		return -1;
	if (kmtd_read_u64(buf, &v) < 0 || v > 1) {
		buf[strcspn(buf, "\n")] = '\0';
		kmtd_err("%s/%s: unexpected content '%.20s' (expected 0 or 1)", d->kdir,
			 KMT_DEBUGFS_ENABLED, buf);
		return -1;
	}
	*enabled = (int)v;
	return 0;
}

int kmtd_set_enabled(const struct kmtd *d, int on)
{
	const char *val = on ? "1\n" : "0\n";
	int fd, err;

	fd = kmtd_open_kfile(d, KMT_DEBUGFS_ENABLED, O_WRONLY);
	if (fd < 0)
		return -1;
	if (kmtd_write_all(fd, val, 2) < 0) {
		err = errno;
		kmtd_err("%s/%s: writing %c failed: %s", d->kdir, KMT_DEBUGFS_ENABLED, val[0],
			 strerror(err));
		close(fd);
		return -1;
	}
	if (close(fd) < 0 && errno != EINTR) {
		kmtd_err("%s/%s: writing %c failed: %s", d->kdir, KMT_DEBUGFS_ENABLED, val[0],
			 strerror(errno));
		return -1;
	}
	return 0;
}

int kmtd_read_overruns(const struct kmtd *d, uint64_t *val)
{
	char buf[64];

	if (kmtd_read_kfile(d, KMT_DEBUGFS_OVERRUNS, buf, sizeof(buf)) < 0)
		return -1;
	if (kmtd_read_u64(buf, val) < 0) {
		buf[strcspn(buf, "\n")] = '\0';
		kmtd_err("%s/%s: unexpected content '%.20s' (expected a number)", d->kdir,
			 KMT_DEBUGFS_OVERRUNS, buf);
		return -1;
	}
	return 0;
}

/*
 * stats: "# cpu emitted written dropped" then "CPU E W D" per possible
 * CPU. st has KMTD_MAX_CPUS entries; CPUs not listed stay !present.
 */
int kmtd_read_stats(const struct kmtd *d, struct kmtd_stat *st)
{
	/* 8192 CPUs at most 80 bytes a line. */
	size_t size = 80 * KMTD_MAX_CPUS + 128;
	char *buf, *line, *save = NULL;
	unsigned int lineno = 0;
	int ret = -1;

	buf = malloc(size);
	if (!buf) {
		kmtd_err("out of memory");
		return -1;
	}
	memset(st, 0, KMTD_MAX_CPUS * sizeof(*st));
	if (kmtd_read_kfile(d, KMT_DEBUGFS_STATS, buf, size) < 0)
		goto out;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long cpu, e, w, dr;
		int used = 0;

		lineno++;
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (sscanf(line, "%llu %llu %llu %llu %n", &cpu, &e, &w, &dr, &used) != 4 ||
		    line[used] != '\0' || cpu >= KMTD_MAX_CPUS || line[0] == '-') {
			kmtd_err("%s/%s: line %u: unexpected content '%.40s' (expected CPU EMITTED WRITTEN DROPPED)",
				 d->kdir, KMT_DEBUGFS_STATS, lineno,
				 line);
			goto out;
		}
		st[cpu].emitted = e;
		st[cpu].written = w;
		st[cpu].dropped = dr;
		st[cpu].present = true;
	}
	ret = 0;
out:
	free(buf);
	return ret;
}

/*
 * The "# buffers" line of the module's stats file: how kmemtrace.ko sized
 * its buffers at load. Returns -1, quietly, when the module does not say
 * (an older module, or a test's fake debugfs).
 */
int kmtd_read_buffers(const struct kmtd *d, struct kmtd_buffers *b)
{
	char path[PATH_MAX + 64], buf[4096];
	const char *line;

	/* The line comes first: the start of the file is enough. */
	snprintf(path, sizeof(path), "%s/%s", d->kdir, KMT_DEBUGFS_STATS);
	if (kmtd_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	line = strstr(buf, "# buffers ");
	if (!line || sscanf(line, "# buffers %15[a-z]: subbufs %u subbuf_size %u bytes_per_cpu %" SCNu64 " possible_cpus %u total %" SCNu64 " mem_share %u available %" SCNu64 " allowed %" SCNu64,
			    b->sized, &b->subbufs, &b->subbuf_size, &b->per_cpu, &b->cpus,
			    &b->total, &b->mem_share, &b->available, &b->allowed) != 9)
		return -1;
	return 0;
}

/* Says what the module's buffers cost and what kmemtraced holds per CPU. */
void kmtd_print_buffers(const struct kmtd *d)
{
	struct kmtd_buffers b;

	if (kmtd_read_buffers(d, &b) < 0)
		return;
	fprintf(stderr,
		KMTD_NAME ": module buffers (%s): %u x %u bytes per CPU, %" PRIu64 " KiB for %u possible CPUs, within mem_share %u%% of %" PRIu64 " MiB available; kmemtraced reads %u KiB at a time per CPU\n",
		b.sized, b.subbufs, b.subbuf_size, b.total >> 10, b.cpus, b.mem_share,
		b.available >> 20, KMTD_READ_CHUNK >> 10);
}

/* "0-3,5\n" -> set[0..3] = set[5] = true. */
int kmtd_parse_cpulist(const char *text, bool *set, unsigned int max)
{
	const char *p = text;

	memset(set, 0, max * sizeof(*set));
	while (*p && *p != '\n') {
		unsigned long lo, hi;
		char *end;

		if (!isdigit((unsigned char)*p))
			return -1;
		errno = 0;
		lo = strtoul(p, &end, 10);
		hi = lo;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -1;
			hi = strtoul(end + 1, &end, 10);
		}
		if (errno || hi < lo || hi >= max)
			return -1;
		for (unsigned long i = lo; i <= hi; i++)
			set[i] = true;
		if (*end == ',')
			end++;
		else if (*end && *end != '\n')
			return -1;
		p = end;
	}
	return 0;
}

/*
 * The traced kernel's pointer width from uname -m: the 64-bit Linux
 * architectures (uname -m of a 32-bit kernel, or of a 64-bit one under
 * linux32, names a 32-bit machine).
 */
unsigned int kmtd_word_bits(const char *machine)
{
	static const char *const exact[] = {
		"x86_64", "aarch64", "aarch64_be", "s390x", "riscv64", "mips64",
		"loongarch64", "sparc64", "ia64", "alpha", "parisc64",
	};

	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (strcmp(machine, exact[i]) == 0)
			return 64;
	if (strncmp(machine, "ppc64", 5) == 0)
		return 64;
	return 32;
}
