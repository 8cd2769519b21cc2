// SPDX-License-Identifier: GPL-2.0-only
/*
 * filter.c - the filter at the source kmemtraced's options ask for,
 * resolved to the words kmemtrace.ko's filter file takes. A leaf
 * (kmemtraced.h): it calls only kmtd_util.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filter.h"
#include "kmtd_util.h"

static int parse_u64(const char *s, uint64_t *v)
{
	unsigned long long n;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*v = n;
	return 0;
}

int kmtd_filter_parse_size(const char *arg, uint64_t *lo, uint64_t *hi)
{
	const char *dash = strchr(arg, '-');
	char first[32];

	if (!dash) {
		if (parse_u64(arg, lo) < 0)
			goto bad;
		*hi = *lo;
		return 0;
	}
	if ((size_t)(dash - arg) >= sizeof(first))
		goto bad;
	memcpy(first, arg, (size_t)(dash - arg));
	first[dash - arg] = '\0';
	if (parse_u64(first, lo) < 0)
		goto bad;
	if (!dash[1])
		*hi = UINT64_MAX;
	else if (parse_u64(dash + 1, hi) < 0 || *hi < *lo)
		goto bad;
	return 0;
bad:
	kmtd_err("'%s' is not a size range: MIN-MAX, MIN- or N bytes, MIN <= MAX", arg);
	return -1;
}

int kmtd_filter_parse_pid(const char *arg, long *pid)
{
	uint64_t v;

	if (parse_u64(arg, &v) < 0 || v < 1 || v > 4194304) {
		kmtd_err("'%s' is not a process id (1 to 4194304)", arg);
		return -1;
	}
	*pid = (long)v;
	return 0;
}

int kmtd_filter_parse_cache(const char *arg)
{
	size_t len = strlen(arg);

	if (!len || len >= 64 || strcspn(arg, " \t\n,") != len) {
		kmtd_err("'%s' is not a cache name (1 to 63 bytes, no blank or comma)", arg);
		return -1;
	}
	return 0;
}

/*
 * A cgroup v2 directory's id: the kernfs node id its file handle holds
 * (on 64-bit kernels also its inode number), as the kernel's
 * cgroup_get_from_id() takes it.
 */
static int cgroup_id_of(const char *path, uint64_t *id)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + 64];
	} h;
	struct stat st;
	int mount_id;

	if (stat(path, &st) < 0) {
		kmtd_err("--cgroup %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		kmtd_err("--cgroup %s: not a directory (a cgroup v2 directory, such as /sys/fs/cgroup/NAME)",
			 path);
		return -1;
	}
	memset(&h, 0, sizeof(h));
	h.fh.handle_bytes = 64;
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) == 0 &&
	    h.fh.handle_bytes >= sizeof(uint64_t)) {
		memcpy(id, h.fh.f_handle, sizeof(*id));
		return 0;
	}
	/* No handles here (a test's plain directory): the inode number. */
	*id = (uint64_t)st.st_ino;
	return 0;
}

static FILE *open_kallsyms(void)
{
	char path[PATH_MAX];

	kmtd_proc_path("kallsyms", path, sizeof(path));
	return fopen(path, "re");
}

/* The directory NAME's /sys/kernel/slab entry stands for: its own name, or its link's. */
static int slab_target(const char *name, char *target, size_t size)
{
	char path[PATH_MAX], link[PATH_MAX];
	const char *base;
	struct stat st;
	ssize_t len;

	snprintf(path, sizeof(path), "%s/%s", kmtd_slab_dir(), name);
	if (lstat(path, &st) < 0)
		return -1;
	if (!S_ISLNK(st.st_mode)) {
		snprintf(target, size, "%s", name);
		return 0;
	}
	len = readlink(path, link, sizeof(link) - 1);
	if (len <= 0)
		return -1;
	link[len] = '\0';
	base = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
	if (strlen(base) >= size)
		return -1;
	memcpy(target, base, strlen(base) + 1);
	return 0;
}

/*
 * --cache NAME of a cache SLUB merged into another: the module knows a
 * cache by the name it was first created with, which /proc/slabinfo
 * lists and whose /sys/kernel/slab entry is (or links to) the directory
 * NAME's link points to. Leaves f->cache_name NAME when it is a cache's
 * own name, a kmalloc-N class, or not found (a cache created later).
 */
static void resolve_cache(struct kmtd_filter *f)
{
	char target[256], other[256], path[PATH_MAX], line[512], name[256];
	FILE *fp;

	snprintf(f->cache_name, sizeof(f->cache_name), "%s", f->cache);
	if (!strncmp(f->cache, "kmalloc-", 8) || slab_target(f->cache, target, sizeof(target)) < 0 ||
	    !strcmp(target, f->cache))
		return;
	/* A directory with a name of its own (not SLUB's ":0000096") is the cache's. */
	if (target[0] != ':') {
		if (strlen(target) < sizeof(f->cache_name))
			memcpy(f->cache_name, target, strlen(target) + 1);
		return;
	}
	kmtd_proc_path("slabinfo", path, sizeof(path));
	fp = fopen(path, "re");
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		if (line[0] == '#' || sscanf(line, "%255s", name) != 1 || !strcmp(name, f->cache))
			continue;
		if (slab_target(name, other, sizeof(other)) == 0 && !strcmp(other, target) &&
		    strlen(name) < sizeof(f->cache_name)) {
			memcpy(f->cache_name, name, strlen(name) + 1);
			break;
		}
	}
	fclose(fp);
}

/*
 * Each --call-site name to [its address, the next higher address of any
 * symbol): one pass over kallsyms finds the names' addresses, a second
 * the least address above each. A name that is several functions (static
 * ones of several files) is refused: which was meant is not known.
 */
static int resolve_sites(struct kmtd_filter *f)
{
	bool found[KMTD_FILTER_SITES] = { false }, several[KMTD_FILTER_SITES] = { false };
	char line[1024], name[512];
	unsigned long long addr;
	FILE *fp;

	if (!f->nsites)
		return 0;
	fp = open_kallsyms();
	if (!fp) {
		kmtd_err("--call-site: cannot open kallsyms: %s", strerror(errno));
		return -1;
	}
	for (unsigned int i = 0; i < f->nsites; i++)
		f->site_end[i] = UINT64_MAX;
	while (fgets(line, sizeof(line), fp)) {
		char type;

		if (sscanf(line, "%llx %c %511s", &addr, &type, name) != 3)
			continue;
		for (unsigned int i = 0; i < f->nsites; i++) {
			if ((type != 't' && type != 'T') || strcmp(name, f->site_name[i]) != 0)
				continue;
			if (found[i] && f->site_start[i] != addr)
				several[i] = true;
			found[i] = true;
			f->site_start[i] = addr;
		}
	}
	for (unsigned int i = 0; i < f->nsites; i++) {
		if (!found[i]) {
			fclose(fp);
			kmtd_err("--call-site %s: no such function in kallsyms", f->site_name[i]);
			return -1;
		}
		if (several[i]) {
			fclose(fp);
			kmtd_err("--call-site %s: several functions have this name in kallsyms",
				 f->site_name[i]);
			return -1;
		}
		if (!f->site_start[i]) {
			fclose(fp);
			kmtd_err("--call-site %s: kallsyms shows address 0 (not root, or kptr_restrict)",
				 f->site_name[i]);
			return -1;
		}
	}
	rewind(fp);
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%llx", &addr) != 1)
			continue;
		for (unsigned int i = 0; i < f->nsites; i++)
			if (addr > f->site_start[i] && addr < f->site_end[i])
				f->site_end[i] = addr;
	}
	fclose(fp);
	for (unsigned int i = 0; i < f->nsites; i++) {
		if (f->site_end[i] == UINT64_MAX) {
			kmtd_err("--call-site %s: no symbol follows it in kallsyms: its end is unknown",
				 f->site_name[i]);
			return -1;
		}
	}
	return 0;
}

int kmtd_filter_resolve(struct kmtd_filter *f, char *buf, size_t size)
{
	size_t len = 0;

	if (f->cgroup) {
		if (f->cgroup[0] >= '0' && f->cgroup[0] <= '9' &&
		    parse_u64(f->cgroup, &f->cgroup_id) == 0) {
			/* The id itself. */
		} else if (cgroup_id_of(f->cgroup, &f->cgroup_id) < 0) {
			return -1;
		}
	}
	if (resolve_sites(f) < 0)
		return -1;
	if (f->cache)
		resolve_cache(f);
#define PUT(...) \
	do { \
		int n_ = snprintf(buf + len, size - len, __VA_ARGS__); \
		if (n_ < 0 || (size_t)n_ >= size - len) \
			goto too_long; \
		len += (size_t)n_; \
	} while (0)
	buf[0] = '\0';
	if (f->tgid)
		PUT("tgid=%ld ", f->tgid);
	if (f->pid)
		PUT("pid=%ld ", f->pid);
	if (f->cgroup)
		PUT("cgroup=%" PRIu64 " ", f->cgroup_id);
	if (f->has_size) {
		PUT("size=%" PRIu64 "-", f->size_min);
		if (f->size_max != UINT64_MAX)
			PUT("%" PRIu64, f->size_max);
		PUT(" ");
	}
	for (unsigned int i = 0; i < f->nsites; i++)
		PUT("site=0x%" PRIx64 "-0x%" PRIx64 " ", f->site_start[i], f->site_end[i]);
	if (f->cache)
		PUT("cache=%s ", f->cache_name);
#undef PUT
	if (len)
		buf[len - 1] = '\0';
	return 0;
too_long:
	kmtd_err("the filter is too long");
	return -1;
}
