// SPDX-License-Identifier: GPL-2.0-only
/*
 * env.c - what kmemtraced checks before tracing (root, debugfs, lockdown,
 * the module and its ABI version) and the small debugfs/sysfs files it
 * reads and writes. A leaf (kmemtraced.h): given paths, not the daemon's
 * state, and calling only kmtd_util.c.
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

#include "env.h"
#include "kmtd_util.h"

/* From <linux/magic.h>; spelled out so the tool builds without kernel headers. */
#define KMTD_DEBUGFS_MAGIC	0x64626720

static int read_u64(const char *text, uint64_t *val)
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

int kmtd_check_root(void)
{
	if (geteuid() == 0)
		return 0;
	kmtd_err("must run as root: the kmemtrace debugfs files, enabling tracing and the kernel addresses in /proc/kallsyms are root-only");
	return -1;
}

int kmtd_check_debugfs(const char *debugfs, bool fake, bool verbose)
{
	struct statfs sfs;
	bool is_default = strcmp(debugfs, KMTD_DEFAULT_DEBUGFS) == 0;

	if (statfs(debugfs, &sfs) < 0) {
		kmtd_err("%s: %s (give debugfs's mount point with -r)", debugfs,
			 strerror(errno));
		return -1;
	}
	if (fake || sfs.f_type == KMTD_DEBUGFS_MAGIC)
		return 0;
	/*
	 * Mount it only at its standard place: mounting over a directory
	 * somebody named with -r would hide what is there.
	 */
	if (is_default && mount("none", debugfs, "debugfs", 0, NULL) == 0 &&
	    statfs(debugfs, &sfs) == 0 && sfs.f_type == KMTD_DEBUGFS_MAGIC) {
		if (verbose)
			fprintf(stderr, KMTD_NAME ": mounted debugfs at %s\n", debugfs);
		return 0;
	}
	if (is_default)
		kmtd_err("debugfs is not mounted at %s and mounting it failed (%s); mount it with: mount -t debugfs none %s",
			 debugfs, strerror(errno),
			 debugfs);
	else
		kmtd_err("%s is not a debugfs mount (filesystem type 0x%lx); mount it with: mount -t debugfs none %s, or give debugfs's mount point with -r",
			 debugfs, (unsigned long)sfs.f_type, debugfs);
	return -1;
}

static int open_kfile(const char *kdir, const char *name, int flags)
{
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", kdir, name);
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		kmtd_explain_open_error(path, errno);
	return fd;
}

static int read_kfile(const char *kdir, const char *name, char *buf, size_t size)
{
	char path[PATH_MAX + 64];
	int n;

	snprintf(path, sizeof(path), "%s/%s", kdir, name);
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

int kmtd_check_module(const char *debugfs, char *kdir, size_t kdir_size, int *lock_fd,
		      unsigned int *abi_major, unsigned int *abi_minor)
{
	char buf[64];
	unsigned long major, minor;
	struct stat st;
	char *end;

	if ((size_t)snprintf(kdir, kdir_size, "%s/%s", debugfs, KMT_DEBUGFS_DIR) >=
	    kdir_size) {
		kmtd_err("-r: path too long");
		return -1;
	}
	if (stat(kdir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		const char *mode = kmtd_lockdown_mode();

		/* Under lockdown, "modprobe it" would only fail again. */
		if (stat(KMTD_SYSMOD, &st) < 0 && mode)
			kmtd_err("kmemtrace.ko is not loaded (no %s), and the kernel is in lockdown mode '%s', which refuses unsigned modules and closes debugfs; tracing needs a kernel booted without lockdown (lockdown=none, Secure Boot off)",
				 kdir, mode);
		else if (stat(KMTD_SYSMOD, &st) < 0)
			kmtd_err("kmemtrace.ko is not loaded (no %s); load it with: modprobe kmemtrace, or from a build tree: insmod kmod/kmemtrace.ko",
				 kdir);
		else
			kmtd_err("kmemtrace.ko is loaded but %s does not exist: is %s really where debugfs is mounted (-r)?",
				 kdir, debugfs);
		return -1;
	}
	/*
	 * Two readers would each get part of every buffer: neither trace
	 * would be whole. The lock dies with its holder, even on kill -9.
	 */
	*lock_fd = open(kdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*lock_fd < 0) {
		kmtd_explain_open_error(kdir, errno);
		return -1;
	}
	if (flock(*lock_fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			kmtd_err("another kmemtraced is already draining %s: only one can; stop it first",
				 kdir);
		else
			kmtd_err("%s: cannot lock: %s", kdir, strerror(errno));
		return -1;
	}
	if (read_kfile(kdir, KMT_DEBUGFS_ABI, buf, sizeof(buf)) < 0)
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
	*abi_major = (unsigned int)major;
	*abi_minor = (unsigned int)minor;
	return 0;
bad:
	buf[strcspn(buf, "\n")] = '\0';
	kmtd_err("%s/%s: unexpected content '%.20s' (expected MAJOR.MINOR)", kdir,
		 KMT_DEBUGFS_ABI, buf);
	return -1;
}

int kmtd_get_enabled(const char *kdir, int *enabled)
{
	char buf[32];
	uint64_t v;

	if (read_kfile(kdir, KMT_DEBUGFS_ENABLED, buf, sizeof(buf)) < 0)
		return -1;
	if (read_u64(buf, &v) < 0 || v > 1) {
		buf[strcspn(buf, "\n")] = '\0';
		kmtd_err("%s/%s: unexpected content '%.20s' (expected 0 or 1)", kdir,
			 KMT_DEBUGFS_ENABLED, buf);
		return -1;
	}
	*enabled = (int)v;
	return 0;
}

int kmtd_set_enabled(const char *kdir, int on)
{
	const char *val = on ? "1\n" : "0\n";
	int fd, err;

	fd = open_kfile(kdir, KMT_DEBUGFS_ENABLED, O_WRONLY);
	if (fd < 0)
		return -1;
	if (kmtd_write_all(fd, val, 2) < 0) {
		err = errno;
		kmtd_err("%s/%s: writing %c failed: %s", kdir, KMT_DEBUGFS_ENABLED, val[0],
			 strerror(err));
		close(fd);
		return -1;
	}
	if (close(fd) < 0 && errno != EINTR) {
		kmtd_err("%s/%s: writing %c failed: %s", kdir, KMT_DEBUGFS_ENABLED, val[0],
			 strerror(errno));
		return -1;
	}
	return 0;
}

int kmtd_read_overruns(const char *kdir, uint64_t *val)
{
	char buf[64];

	if (read_kfile(kdir, KMT_DEBUGFS_OVERRUNS, buf, sizeof(buf)) < 0)
		return -1;
	if (read_u64(buf, val) < 0) {
		buf[strcspn(buf, "\n")] = '\0';
		kmtd_err("%s/%s: unexpected content '%.20s' (expected a number)", kdir,
			 KMT_DEBUGFS_OVERRUNS, buf);
		return -1;
	}
	return 0;
}

/*
 * stats: "# cpu emitted written dropped" then "CPU E W D" per possible
 * CPU. st has KMTD_MAX_CPUS entries; CPUs not listed stay !present.
 */
int kmtd_read_stats(const char *kdir, struct kmtd_stat *st)
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
	if (read_kfile(kdir, KMT_DEBUGFS_STATS, buf, size) < 0)
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
				 kdir, KMT_DEBUGFS_STATS, lineno,
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
int kmtd_read_buffers(const char *kdir, struct kmtd_buffers *b)
{
	char path[PATH_MAX + 64], buf[4096];
	const char *line;

	/* The line comes first: the start of the file is enough. */
	snprintf(path, sizeof(path), "%s/%s", kdir, KMT_DEBUGFS_STATS);
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
void kmtd_print_buffers(const char *kdir)
{
	struct kmtd_buffers b;

	if (kmtd_read_buffers(kdir, &b) < 0)
		return;
	fprintf(stderr,
		KMTD_NAME ": module buffers (%s): %u x %u bytes per CPU, %" PRIu64 " KiB for %u possible CPUs, within mem_share %u%% of %" PRIu64 " MiB available; kmemtraced reads %u KiB at a time per CPU\n",
		b.sized, b.subbufs, b.subbuf_size, b.total >> 10, b.cpus, b.mem_share,
		b.available >> 20, KMTD_READ_CHUNK >> 10);
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

int kmtd_get_filter(const char *kdir, char *buf, size_t size)
{
	char path[PATH_MAX + 64];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", kdir, KMT_DEBUGFS_FILTER);
	if (stat(path, &st) < 0 && errno == ENOENT) {
		kmtd_err("%s: no such file: this kmemtrace.ko cannot filter at the source (an older module); load one from the same release as kmemtraced",
			 path);
		return -1;
	}
	if (read_kfile(kdir, KMT_DEBUGFS_FILTER, buf, size) < 0)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int kmtd_set_filter(const char *kdir, const char *text)
{
	bool fake = getenv(KMTD_FAKE_ENV) && strcmp(getenv(KMTD_FAKE_ENV), "1") == 0;
	size_t len = strlen(text);
	char line[1024];
	int fd, err = 0;

	if (len + 2 > sizeof(line)) {
		kmtd_err("the filter is too long");
		return -1;
	}
	memcpy(line, text, len);
	line[len++] = '\n';
	/* A fake module's file is a plain one: start it again. */
	fd = open_kfile(kdir, KMT_DEBUGFS_FILTER, O_WRONLY | (fake ? O_TRUNC : 0));
	if (fd < 0)
		return -1;
	if (kmtd_write_all(fd, line, len) < 0) {
		err = errno;
		close(fd);
	} else if (close(fd) < 0 && errno != EINTR) {
		err = errno;
	}
	if (err) {
		kmtd_err("%s/%s: the module refused the filter '%s': %s%s", kdir,
			 KMT_DEBUGFS_FILTER, text, strerror(err),
			 err == ENOENT ? " (no such cgroup)" : "");
		return -1;
	}
	return 0;
}

void kmtd_read_filtered(const char *kdir, struct kmtd_filtered *f)
{
	char path[PATH_MAX + 64], line[256];
	unsigned long long cpu, a, fr, u;
	bool first = true;
	FILE *fp;

	memset(f, 0, sizeof(*f));
	snprintf(path, sizeof(path), "%s/%s", kdir, KMT_DEBUGFS_FILTER);
	fp = fopen(path, "re");
	if (!fp)
		return;
	f->present = true;
	while (fgets(line, sizeof(line), fp)) {
		if (first) {
			first = false;
			line[strcspn(line, "\n")] = '\0';
			snprintf(f->spec, sizeof(f->spec), "%s", line);
			continue;
		}
		if (line[0] == '#' ||
		    sscanf(line, "%llu %llu %llu %llu", &cpu, &a, &fr, &u) != 4)
			continue;
		f->allocs += a;
		f->frees += fr;
		f->untracked += u;
	}
	fclose(fp);
}
