// SPDX-License-Identifier: GPL-2.0-only
/*
 * meta.c - the files beside the traces that let another machine make sense
 * of them: kallsyms, modules and kmemtrace.meta (Documentation/trace-format.md,
 * section 6), with what the module covers and the cache names SLUB merged.
 * A leaf (kmemtraced.h): it writes what struct kmtd_run says of the run and
 * calls only kmtd_util.c.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kmtd_util.h"
#include "meta.h"

/* SLUB's caches and the names merged into them (sysfs, CONFIG_SLUB_DEBUG). */
/* With KMEMTRACED_TEST_FAKE_DEBUGFS=1 only: a directory read instead of it. */
/* Likewise: a directory whose modules and kallsyms files stand for /proc's. */

/*
 * The start-of-run kmemtrace.meta ends with a comment this long, so that
 * the end-of-run version fits in the blocks the file already owns when
 * the disk is full and a new file cannot be written.
 */
#define META_RESERVE	1024

/* fsync and close a file we wrote, reporting the first failure as a write error. */
static int finish_file(int fd, const char *path)
{
	int err = 0;

	if (fsync(fd) < 0 && errno != EINVAL)
		err = errno;
	if (close(fd) < 0 && !err && errno != EINTR)
		err = errno;
	if (err) {
		kmtd_err("%s: write failed: %s", path, strerror(err));
		return -1;
	}
	return 0;
}

static void dir_path(const struct kmtd_run *run, const char *name, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", run->outdir, name);
}

int kmtd_write_kallsyms(const struct kmtd_run *run)
{
	char path[PATH_MAX + 32], src[PATH_MAX];
	static char buf[1 << 16];
	int in, out;

	dir_path(run, KMTD_KALLSYMS, path, sizeof(path));
	in = open(kmtd_proc_path("kallsyms", src, sizeof(src)), O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		kmtd_err("cannot open %s: %s", src, strerror(errno));
		return -1;
	}
	out = kmtd_create_file(path, run->force);
	if (out < 0) {
		close(in);
		return -1;
	}
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			kmtd_err("%s: read failed: %s", src, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		if (kmtd_write_all(out, buf, (size_t)n) < 0) {
			kmtd_err("%s: write failed: %s", path, strerror(errno));
			goto fail;
		}
	}
	close(in);
	if (finish_file(out, path) < 0) {
		unlink(path);
		return -1;
	}
	return 0;
fail:
	close(in);
	close(out);
	/* Half a kallsyms would mislead the report; we made it, so it goes. */
	unlink(path);
	return -1;
}

/* Reads a whole (procfs/sysfs) file into a malloc'ed string; NULL with errno. */
static char *slurp(const char *path)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	int fd, err;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	for (;;) {
		ssize_t n;

		if (cap - len < 2) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				errno = ENOMEM;
				goto fail_fd;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto fail_fd;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
fail_fd:
	err = errno;
	close(fd);
	errno = err;
fail:
	err = errno;
	free(buf);
	errno = err;
	return NULL;
}

/*
 * /proc/modules now, as lines of the modules file in its order (newest
 * first): "NAME TEXT_ADDR CORE_BASE CORE_SIZE". NULL with errno; a kernel
 * without module support has none and gives an empty array.
 */
/* Room in *v (*cap entries) for entry n: 0, or -1 when out of memory. */
static int mods_reserve(struct kmtd_mod **v, size_t *cap, size_t n)
{
	size_t ncap = *cap ? 2 * *cap : 64;
	struct kmtd_mod *p;

	if (n < *cap)
		return 0;
	p = realloc(*v, ncap * sizeof(*p));
	if (!p)
		return -1;
	*v = p;
	*cap = ncap;
	return 0;
}

/*
 * e's line of the modules file, with the address of its .text from sysfs:
 * root sees it; anyone else (or no sysfs) gets 0. -1 when out of memory.
 */
static int mod_line(struct kmtd_mod *e)
{
	char textfile[PATH_MAX], text[64], out[256];
	uint64_t text_addr = 0;
	char *end;

	snprintf(textfile, sizeof(textfile), "/sys/module/%s/sections/.text", e->name);
	if (kmtd_read_file(textfile, text, sizeof(text)) > 0) {
		errno = 0;
		text_addr = strtoull(text, &end, 16);
		if (errno || end == text)
			text_addr = 0;
	}
	snprintf(out, sizeof(out), "%s 0x%" PRIx64 " 0x%llx %llu", e->name, text_addr, e->base,
		 e->size);
	e->line = strdup(out);
	return e->line ? 0 : -1;
}

/*
 * /proc/modules now, in its order (newest first). with_lines: each with
 * its line of the modules file, which costs a sysfs read a module; the
 * scans during the trace make lines only for the loads they find, so that
 * kmemtraced's own reads barely show in the trace. NULL with errno; a
 * kernel without module support has none and gives an empty array.
 */
static struct kmtd_mod *read_modules(size_t *nmods, bool with_lines)
{
	char src[PATH_MAX], *mods, *line, *save = NULL;
	struct kmtd_mod *v = NULL;
	size_t n = 0, cap = 0;

	*nmods = 0;
	mods = slurp(kmtd_proc_path("modules", src, sizeof(src)));
	if (!mods && errno == ENOENT)
		mods = strdup("");
	if (!mods)
		return NULL;
	for (line = strtok_r(mods, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char deps[4096], state[32];
		struct kmtd_mod *e;
		int refs;

		if (mods_reserve(&v, &cap, n) < 0)
			goto nomem;
		e = &v[n];
		memset(e, 0, sizeof(*e));
		/* "NAME SIZE REFS DEPS STATE 0xADDR [TAINTS]" */
		if (sscanf(line, "%63s %llu %d %4095s %31s %llx", e->name, &e->size, &refs, deps,
			   state, &e->base) != 6)
			continue;
		n++;
		if (with_lines && mod_line(e) < 0)
			goto nomem;
	}
	free(mods);
	*nmods = n;
	return v ? v : calloc(1, sizeof(*v));
nomem:
	free(mods);
	for (size_t i = 0; i < n; i++)
		free(v[i].line);
	free(v);
	errno = ENOMEM;
	return NULL;
}

static void free_mods(struct kmtd_mod *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].line);
	free(v);
}

int kmtd_write_modules(const struct kmtd_run *run, struct kmtd_meta *m)
{
	char path[PATH_MAX + 32];
	FILE *out = NULL;
	int fd;

	dir_path(run, KMTD_KALLSYMS_LOADED, path, sizeof(path));
	/* One left by an earlier trace would name this one's modules. */
	if (run->force && unlink(path) < 0 && errno != ENOENT) {
		kmtd_err("%s: cannot remove the old file: %s", path, strerror(errno));
		return -1;
	}
	dir_path(run, KMTD_MODULES, path, sizeof(path));
	m->mods = read_modules(&m->nmods, true);
	if (!m->mods) {
		kmtd_err("cannot read /proc/modules: %s", strerror(errno));
		return -1;
	}
	m->mods_cap = m->nmods;
	fd = kmtd_create_file(path, run->force);
	if (fd < 0)
		return -1;
	out = fdopen(fd, "w");
	if (!out) {
		kmtd_err("%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	for (size_t i = 0; i < m->nmods; i++)
		fprintf(out, "%s\n", m->mods[i].line);
	if (fflush(out) != 0 || ferror(out) || (fsync(fileno(out)) < 0 && errno != EINVAL)) {
		kmtd_err("%s: write failed: %s", path, strerror(errno));
		fclose(out);
		unlink(path);
		return -1;
	}
	if (fclose(out) != 0) {
		kmtd_err("%s: write failed: %s", path, strerror(errno));
		unlink(path);
		return -1;
	}
	return 0;
}

/* Appends text to a growing string; -1 when out of memory. */
static int append(char **buf, size_t *len, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *p = realloc(*buf, *len + la + lb + 2);

	if (!p)
		return -1;
	memcpy(p + *len, a, la);
	memcpy(p + *len + la, b, lb);
	p[*len + la + lb] = '\n';
	p[*len + la + lb + 1] = '\0';
	*buf = p;
	*len += la + lb + 1;
	return 0;
}

/* Whether text (len bytes of whole lines) has line as one of them. */
static bool has_line(const char *text, size_t len, const char *line)
{
	size_t ll = strlen(line);
	const char *end = text + len, *p = text;

	while (p < end) {
		size_t l = strcspn(p, "\n");

		if (l == ll && memcmp(p, line, ll) == 0)
			return true;
		p += l + 1;
	}
	return false;
}

/*
 * Appends the lines of text (kallsyms lines) of the modules marked in want
 * (index into now); dedup: not those already appended since offset from.
 */
static int add_module_lines(struct kmtd_meta *m, char *text, const struct kmtd_mod *now,
			    const bool *want, size_t n, const size_t *from)
{
	char *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *tag = strchr(line, '[');
		size_t len;

		if (!tag)
			continue;
		tag++;
		len = strcspn(tag, "]");
		for (size_t i = 0; i < n; i++) {
			if (!want[i] || strlen(now[i].name) != len ||
			    strncmp(now[i].name, tag, len) != 0)
				continue;
			if (from && m->loaded_syms &&
			    has_line(m->loaded_syms + *from, m->loaded_len - *from, line))
				break;
			if (append(&m->loaded_syms, &m->loaded_len, line, "") < 0) {
				errno = ENOMEM;
				return -1;
			}
			break;
		}
	}
	return 0;
}

/* kmemtrace.ko's init_kallsyms: NULL with errno, ENOENT from a module without it. */
static char *read_init_syms(const struct kmtd_run *run)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", run->kdir, KMT_DEBUGFS_INIT_KALLSYMS);
	return slurp(path);
}

/*
 * The kallsyms lines of the modules marked in want (index into now), and
 * the symbols of their init code that kmemtrace.ko kept (its init_kallsyms):
 * /proc/kallsyms lists those only while the init runs, which a scan every
 * RESCAN_MS seldom sees, and stacks taken during the load have frames
 * there. init_kallsyms is read before /proc/kallsyms and again after: the
 * first has a module unloaded during the long read of /proc/kallsyms
 * (kmemtrace.ko forgets a module as it goes), the second one whose init
 * returned in between (kept before it ran, listed by /proc/kallsyms only
 * until it returned). A line two of them have is written once. A
 * kmemtrace.ko without the file (older) leaves the init code unnamed.
 */
static int add_loaded_syms(const struct kmtd_run *run, struct kmtd_meta *m,
			   const struct kmtd_mod *now, const bool *want, size_t n)
{
	char src[PATH_MAX], *text, *init[2];
	size_t from = m->loaded_len;
	int ret = 0;

	init[0] = read_init_syms(run);
	if (!init[0] && errno != ENOENT)
		return -1;
	text = slurp(kmtd_proc_path("kallsyms", src, sizeof(src)));
	if (!text) {
		free(init[0]);
		return -1;
	}
	ret = add_module_lines(m, text, now, want, n, NULL);
	free(text);
	init[1] = init[0] ? read_init_syms(run) : NULL;
	if (init[0] && !init[1])
		ret = -1;
	for (int i = 0; i < 2; i++) {
		if (!ret && init[i])
			ret = add_module_lines(m, init[i], now, want, n, &from);
		free(init[i]);
	}
	return ret;
}

static int scan_modules(const struct kmtd_run *run, struct kmtd_meta *m)
{
	struct kmtd_mod *now;
	size_t n, i, j;
	bool *added, any = false;
	int ret = -1;

	now = read_modules(&n, false);
	if (!now)
		return -1;
	added = calloc(n ? n : 1, sizeof(*added));
	if (!added)
		goto out;
	/* Gone: a load not in /proc/modules any more (nor at its base). */
	for (j = 0; j < m->nmods; j++) {
		bool here = false;

		for (i = 0; i < n && !m->mods[j].gone && !here; i++)
			here = now[i].base == m->mods[j].base && !strcmp(now[i].name, m->mods[j].name);
		if (m->mods[j].gone || here)
			continue;
		m->mods[j].gone = true;
		if (append(&m->mod_changes, &m->changes_len, "-", m->mods[j].line) < 0)
			goto out;
	}
	/* New: a name at a base not seen loaded; oldest first, as they were loaded. */
	for (i = n; i-- > 0;) {
		bool known = false;

		for (j = 0; j < m->nmods && !known; j++)
			known = !m->mods[j].gone && now[i].base == m->mods[j].base &&
				!strcmp(now[i].name, m->mods[j].name);
		if (known)
			continue;
		if (mods_reserve(&m->mods, &m->mods_cap, m->nmods) < 0)
			goto out;
		if (mod_line(&now[i]) < 0 ||
		    append(&m->mod_changes, &m->changes_len, "+", now[i].line) < 0)
			goto out;
		m->mods[m->nmods++] = now[i];
		now[i].line = NULL;
		added[i] = true;
		any = true;
	}
	ret = any ? add_loaded_syms(run, m, now, added, n) : 0;
out:
	free(added);
	free_mods(now, n);
	return ret;
}

/*
 * Appends the changes seen and not yet written to the modules file, after
 * its comment line the first time: as they are seen, so that a kmemtraced
 * killed during the trace leaves them, and whoever watches the file sees
 * each change within a scan. Kept for the end's try when a write fails.
 */
static int write_mod_changes(const struct kmtd_run *run, struct kmtd_meta *m)
{
	static const char head[] = "# loaded (+) and unloaded (-) during the trace\n";
	char path[PATH_MAX + 32];
	int fd;

	if (!m->changes_len)
		return 0;
	dir_path(run, KMTD_MODULES, path, sizeof(path));
	fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		kmtd_err("%s: %s", path, strerror(errno));
		return -1;
	}
	if (!m->changes_head) {
		if (kmtd_write_all(fd, head, sizeof(head) - 1) < 0)
			goto fail;
		m->changes_head = true;
	}
	if (kmtd_write_all(fd, m->mod_changes, m->changes_len) < 0)
		goto fail;
	if (finish_file(fd, path) < 0)
		return -1;
	m->changes_len = 0;
	m->mod_changes[0] = '\0';
	return 0;
fail:
	kmtd_err("%s: write failed: %s", path, strerror(errno));
	close(fd);
	return -1;
}

void kmtd_scan_modules(const struct kmtd_run *run, struct kmtd_meta *m)
{
	if (scan_modules(run, m) < 0 && !m->mods_failed) {
		m->mods_failed = true;
		kmtd_err("warning: cannot read /proc/modules, /proc/kallsyms or %s/%s again: %s; modules loaded or unloaded during the trace may be missing from its modules file, or their symbols from kallsyms.loaded",
			 run->kdir, KMT_DEBUGFS_INIT_KALLSYMS,
			 strerror(errno));
	}
	/* After a failed write, the changes wait for the end's try: said once, not per scan. */
	if (!m->changes_failed && write_mod_changes(run, m) < 0)
		m->changes_failed = true;
}

int kmtd_finish_modules(const struct kmtd_run *run, struct kmtd_meta *m)
{
	char path[PATH_MAX + 32];
	int fd, ret = 0;

	/* The last scan's write also takes what a failed one left: failing now, it is lost. */
	m->changes_failed = false;
	kmtd_scan_modules(run, m);
	if (m->changes_failed)
		ret = -1;
	if (m->loaded_syms) {
		dir_path(run, KMTD_KALLSYMS_LOADED, path, sizeof(path));
		fd = kmtd_create_file(path, run->force);
		if (fd < 0) {
			ret = -1;
		} else if (kmtd_write_all(fd, m->loaded_syms, m->loaded_len) < 0) {
			kmtd_err("%s: write failed: %s", path, strerror(errno));
			close(fd);
			unlink(path);
			ret = -1;
		} else if (finish_file(fd, path) < 0) {
			unlink(path);
			ret = -1;
		}
	}
	kmtd_forget_modules(m);
	return ret;
}

void kmtd_forget_modules(struct kmtd_meta *m)
{
	free_mods(m->mods, m->nmods);
	m->mods = NULL;
	m->nmods = m->mods_cap = 0;
	free(m->mod_changes);
	free(m->loaded_syms);
	m->mod_changes = m->loaded_syms = NULL;
	m->changes_len = m->loaded_len = 0;
	m->changes_head = m->changes_failed = false;
}

/* The NUMA node of a CPU: the nodeN link sysfs puts in its directory. */
static int cpu_node(unsigned int cpu)
{
	char path[96];
	struct dirent *de;
	int node = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u", cpu);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		unsigned long n;
		char *end;

		if (strncmp(de->d_name, "node", 4) != 0 || de->d_name[4] < '0' ||
		    de->d_name[4] > '9')
			continue;
		errno = 0;
		n = strtoul(de->d_name + 4, &end, 10);
		if (!errno && !*end && n < 65536) {
			node = (int)n;
			break;
		}
	}
	closedir(dir);
	return node;
}

/* "0-3,5\n" -> set[0..3] = set[5] = true. */
static int parse_cpulist(const char *text, bool *set, unsigned int max)
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

/* A word of the command line, quoted for sh when it needs it; no line breaks. */
static void put_word(FILE *f, const char *w)
{
	bool plain = *w != '\0';

	for (const char *p = w; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%", *p))
			plain = false;
	if (plain) {
		fputs(w, f);
		return;
	}
	fputc('\'', f);
	for (const char *p = w; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", f);
		else if ((unsigned char)*p < 0x20 || *p == 0x7f)
			fputc('?', f);
		else
			fputc(*p, f);
	}
	fputc('\'', f);
}

static int cmp_names(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int no_dots(const struct dirent *de)
{
	return de->d_name[0] != '.';
}

/*
 * The module's coverage file, one "PATH HOW DETAIL" line per allocation
 * path (trace format 1.1). A module without one (1.0) leaves m->coverage
 * NULL: the metadata then says nothing, and readers know it is unknown.
 * Read again at the end, when DETAIL also counts the calls a probe missed;
 * should that fail, the copy from the start stays.
 */
static void read_coverage(const char *kdir, struct kmtd_meta *m, bool final)
{
	char path[PATH_MAX + 64];
	char *text;

	snprintf(path, sizeof(path), "%s/%s", kdir, KMT_DEBUGFS_COVERAGE);
	text = slurp(path);
	if (!text && errno != ENOENT && !final)
		kmtd_err("warning: %s: %s; the trace will not say which allocation paths it covers",
			 path, strerror(errno));
	if (text || !final) {
		free(m->coverage);
		m->coverage = text;
	}
}

/*
 * "PREFIX LINE" for each line of a module file's text, in its order: '#'
 * lines are comments, and a line is printed without control characters.
 */
static void put_lines(FILE *f, const char *prefix, const char *text)
{
	const char *p = text;

	while (p && *p) {
		size_t len = strcspn(p, "\n");

		while (len && (p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len && p[0] != '#') {
			fprintf(f, "%s ", prefix);
			for (size_t i = 0; i < len; i++)
				fputc((unsigned char)p[i] < 0x20 || p[i] == 0x7f ? '?' : p[i], f);
			fputc('\n', f);
		}
		p += strcspn(p, "\n");
		if (*p)
			p++;
	}
}

/*
 * The module's stacks file (trace format 1.2), read with tracing off when
 * the trace starts and when it ends, so the difference of its counters is
 * exactly the trace's. A module without one leaves NULL: nothing is said.
 */
static char *read_stacks(const char *kdir)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", kdir, KMT_DEBUGFS_STACKS);
	return slurp(path);
}

/* "stacks_config ..." from the file's "# stacks ..." line, then its CPU lines. */
static void put_stacks(FILE *f, const char *text, bool config, const char *prefix)
{
	const char *cfg = text ? strstr(text, "# stacks ") : NULL;

	if (config && cfg) {
		size_t len = strcspn(cfg + 9, "\n");

		fputs("stacks_config ", f);
		for (size_t i = 0; i < len; i++)
			fputc((unsigned char)cfg[9 + i] < 0x20 ? '?' : cfg[9 + i], f);
		fputc('\n', f);
	}
	put_lines(f, prefix, text);
}

/*
 * The module's filter file, read when the trace starts and when it ends
 * (with tracing off, as the stacks file): "filter SPEC" (or filter_end)
 * from its first line, the table's size from "# track slots S used U",
 * then its CPU lines under PREFIX. A module without one leaves NULL:
 * nothing is said.
 */
static char *read_filter(const char *kdir)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", kdir, KMT_DEBUGFS_FILTER);
	return slurp(path);
}

static void put_filter(FILE *f, const char *text, bool start)
{
	const char *slots;
	size_t len;

	if (!text)
		return;
	len = strcspn(text, "\n");
	fputs(start ? "filter " : "filter_end ", f);
	for (size_t i = 0; i < len; i++)
		fputc((unsigned char)text[i] < 0x20 || text[i] == 0x7f ? '?' : text[i], f);
	fputc('\n', f);
	slots = strstr(text, "\n# track slots ");
	if (start && slots) {
		unsigned long long n;

		if (sscanf(slots, "\n# track slots %llu", &n) == 1)
			fprintf(f, "filter_track_slots %llu\n", n);
	}
	put_lines(f, start ? "filtered_start" : "filtered_end", text + len);
}

static int cmp_slab_name(const void *a, const void *b)
{
	return strcmp(((const struct kmtd_slab_name *)a)->name,
		      ((const struct kmtd_slab_name *)b)->name);
}

/*
 * Adds the names /sys/kernel/slab shows now: a directory is a cache, a
 * symlink the name of a cache merged into the one it points to. A name
 * already known keeps its target. No such directory (SLUB without sysfs,
 * another allocator) is no error: nothing is added.
 */
static int slab_snapshot(struct kmtd_meta *m)
{
	const char *dir = kmtd_slab_dir();
	struct dirent **names;
	size_t had = m->nslab;
	int n, ret = 0;

	n = scandir(dir, &names, no_dots, cmp_names);
	if (n < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
	for (int i = 0; i < n; i++) {
		struct kmtd_slab_name key = { .name = names[i]->d_name }, *e;
		char path[PATH_MAX], link[PATH_MAX];
		const char *target;
		struct stat st;
		ssize_t len;

		e = had ? bsearch(&key, m->slab, had, sizeof(*m->slab), cmp_slab_name) : NULL;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (e || lstat(path, &st) < 0)
			goto next;
		if (S_ISLNK(st.st_mode)) {
			len = readlink(path, link, sizeof(link) - 1);
			if (len <= 0)
				goto next;
			link[len] = '\0';
			/* Relative, "../slab/:0000096" or ":0000096": the directory's name. */
			target = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
			if (!*target)
				goto next;
		} else if (S_ISDIR(st.st_mode)) {
			target = names[i]->d_name;
		} else {
			goto next;
		}
		if (m->nslab == m->slab_cap) {
			size_t cap = m->slab_cap ? 2 * m->slab_cap : 256;
			struct kmtd_slab_name *p = realloc(m->slab, cap * sizeof(*p));

			if (!p) {
				ret = -1;
				goto next;
			}
			m->slab = p;
			m->slab_cap = cap;
		}
		e = &m->slab[m->nslab];
		e->name = strdup(names[i]->d_name);
		e->target = strdup(target);
		if (!e->name || !e->target) {
			free(e->name);
			free(e->target);
			ret = -1;
			goto next;
		}
		m->nslab++;
next:
		free(names[i]);
	}
	free(names);
	if (m->nslab > had)
		qsort(m->slab, m->nslab, sizeof(*m->slab), cmp_slab_name);
	if (ret < 0)
		errno = ENOMEM;
	return ret;
}

/* A name with every blank, control byte and backslash written as \xHH. */
static void put_slab_word(FILE *f, const char *w)
{
	for (const unsigned char *p = (const unsigned char *)w; *p; p++) {
		if (*p <= 0x20 || *p == 0x7f || *p == '\\')
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}

static void free_slab(struct kmtd_meta *m)
{
	for (size_t i = 0; i < m->nslab; i++) {
		free(m->slab[i].name);
		free(m->slab[i].target);
	}
	free(m->slab);
	m->slab = NULL;
	m->nslab = m->slab_cap = 0;
}

static void put_params(FILE *f)
{
	struct dirent **names;
	int n;

	n = scandir(KMTD_SYSMOD "/parameters", &names, no_dots, cmp_names);
	if (n < 0)
		return;
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX], val[256];

		snprintf(path, sizeof(path), KMTD_SYSMOD "/parameters/%s", names[i]->d_name);
		if (kmtd_read_file(path, val, sizeof(val)) >= 0) {
			val[strcspn(val, "\n")] = '\0';
			fprintf(f, "param %s %s\n", names[i]->d_name, val);
		}
		free(names[i]);
	}
	free(names);
}

/* The text of kmemtrace.meta; malloc'ed, NULL when out of memory. */
static char *meta_text(const struct kmtd_run *run, const struct kmtd_meta *m, bool final,
		       size_t *len)
{
	char online_text[4096];
	struct utsname uts;
	char *text = NULL;
	bool *online;
	FILE *f;

	online = calloc(KMTD_MAX_CPUS, sizeof(*online));
	if (!online)
		return NULL;
	f = open_memstream(&text, len);
	if (!f) {
		free(online);
		return NULL;
	}
	if (uname(&uts) < 0)
		memset(&uts, 0, sizeof(uts));
	fprintf(f, "# kmemtrace trace metadata (Documentation/trace-format.md), written by kmemtraced\n");
	fprintf(f, "meta_version 1\n");
	fprintf(f, "abi_version %u.%u\n", run->abi_major, run->abi_minor);
	fprintf(f, "kernel_release %s\n", uts.release);
	fprintf(f, "kernel_version %s\n", uts.version);
	fprintf(f, "machine %s\n", uts.machine);
	fprintf(f, "hostname %s\n", uts.nodename);
	fprintf(f, "page_size %" PRIu32 "\n", run->page_size);
	fprintf(f, "word_bits %u\n", run->word_bits);
	fprintf(f, "byte_order %s\n",
		__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? "big" : "little");
	fprintf(f, "clock monotonic\n");
	if (kmtd_read_file("/sys/devices/system/cpu/online", online_text,
			   sizeof(online_text)) > 0 &&
	    parse_cpulist(online_text, online, KMTD_MAX_CPUS) == 0) {
		for (unsigned int cpu = 0; cpu < KMTD_MAX_CPUS; cpu++)
			if (online[cpu])
				fprintf(f, "cpu_node %u %d\n", cpu, cpu_node(cpu));
	}
	put_params(f);
	if (run->formats[0]) {
		fputs("tracepoint_formats ", f);
		for (const char *p = run->formats; *p; p++)
			fputc((unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p, f);
		fputc('\n', f);
	}
	put_lines(f, "coverage", m->coverage);
	put_stacks(f, m->stacks_start, true, "stacks_start");
	put_filter(f, m->filter_start, true);
	for (size_t i = 0; i < m->nslab; i++) {
		fputs("slab_alias ", f);
		put_slab_word(f, m->slab[i].name);
		fputc(' ', f);
		put_slab_word(f, m->slab[i].target);
		fputc('\n', f);
	}
	if (run->max_size)
		fprintf(f, "max_size %" PRIu64 "\nsegment_size %" PRIu64 "\n", run->max_size,
			run->seg_size);
	fprintf(f, "start_mono_ns %" PRIu64 "\n", run->start_mono_ns);
	fprintf(f, "start_real_ns %" PRIu64 "\n", run->start_real_ns);
	if (run->have_overruns_start)
		fprintf(f, "overruns_start %" PRIu64 "\n", run->overruns_start);
	if (run->cmd) {
		fputs("command", f);
		for (char **w = run->cmd; *w; w++) {
			fputc(' ', f);
			put_word(f, *w);
		}
		fputc('\n', f);
	}
	if (final) {
		fprintf(f, "end_mono_ns %" PRIu64 "\n", run->end_mono_ns);
		fprintf(f, "end_real_ns %" PRIu64 "\n", run->end_real_ns);
		if (run->have_overruns_end)
			fprintf(f, "overruns_end %" PRIu64 "\n", run->overruns_end);
		if (run->cmd && run->command_done)
			fprintf(f, "command_status %d\n", run->command_status);
		if (run->stop_reason)
			fprintf(f, "stop_reason %s\n", run->stop_reason);
		put_stacks(f, m->stacks_end, false, "stacks_end");
		put_filter(f, m->filter_end, false);
		if (run->max_size)
			fprintf(f, "segments %u %u\nsegments_dropped %" PRIu64 " %" PRIu64
				" %" PRIu64 "\n", run->seg_first, run->segments, run->seg_dropped,
				run->dropped_bytes, run->dropped_cut_ns);
		for (unsigned int cpu = 0; cpu < run->ncpus; cpu++)
			if (run->cpu_records[cpu] >= 0)
				fprintf(f, "cpu_records %u %" PRId64 "\n", cpu,
					run->cpu_records[cpu]);
		if (run->error[0])
			fprintf(f, "error %s\n", run->error);
	} else {
		/* Room for the end-of-run keys (see META_RESERVE). */
		fputs("#", f);
		for (int i = 0; i < META_RESERVE - 2; i++)
			fputc(' ', f);
		fputc('\n', f);
	}
	free(online);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* In place: the fallback when a new file cannot be created (disk full). */
static int rewrite_in_place(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	const char *p = text;
	size_t left = len;
	off_t off = 0;

	if (fd < 0)
		return -1;
	while (left) {
		ssize_t n = pwrite(fd, p, left, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -1;
		}
		p += n;
		off += n;
		left -= (size_t)n;
	}
	if (ftruncate(fd, (off_t)len) < 0 || fsync(fd) < 0) {
		close(fd);
		return -1;
	}
	return close(fd);
}

int kmtd_write_meta(const struct kmtd_run *run, struct kmtd_meta *m, bool final)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 32];
	size_t len = 0;
	char *text;
	int fd, err;

	read_coverage(run->kdir, m, final);
	if (!final) {
		free(m->stacks_start);
		m->stacks_start = read_stacks(run->kdir);
		free(m->filter_start);
		m->filter_start = read_filter(run->kdir);
	} else {
		free(m->stacks_end);
		m->stacks_end = read_stacks(run->kdir);
		free(m->filter_end);
		m->filter_end = read_filter(run->kdir);
	}
	if (slab_snapshot(m) < 0)
		kmtd_err("warning: %s: %s; some merged cache names are not recorded", kmtd_slab_dir(),
			 strerror(errno));
	dir_path(run, KMTD_META, path, sizeof(path));
	text = meta_text(run, m, final, &len);
	if (final) {
		free(m->coverage);
		m->coverage = NULL;
		free(m->stacks_start);
		free(m->stacks_end);
		m->stacks_start = m->stacks_end = NULL;
		free(m->filter_start);
		free(m->filter_end);
		m->filter_start = m->filter_end = NULL;
		free_slab(m);
	}
	if (!text) {
		kmtd_err("out of memory");
		return -1;
	}
	if (!final) {
		fd = kmtd_create_file(path, run->force);
		if (fd < 0)
			goto fail;
		if (kmtd_write_all(fd, text, len) < 0) {
			kmtd_err("%s: write failed: %s", path, strerror(errno));
			close(fd);
			unlink(path);
			goto fail;
		}
		if (finish_file(fd, path) < 0) {
			unlink(path);
			goto fail;
		}
		free(text);
		return 0;
	}

	/* A reader sees the old file or the new one, never half of one. */
	dir_path(run, "." KMTD_META ".tmp", tmp, sizeof(tmp));
	if (unlink(tmp) < 0 && errno != ENOENT) {
		err = errno;
		goto in_place;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = errno;
		goto in_place;
	}
	if (fchmod(fd, 0600) < 0 || kmtd_write_all(fd, text, len) < 0 || fsync(fd) < 0) {
		err = errno;
		close(fd);
		unlink(tmp);
		goto in_place;
	}
	if (close(fd) < 0 && errno != EINTR) {
		err = errno;
		unlink(tmp);
		goto in_place;
	}
	if (rename(tmp, path) < 0) {
		err = errno;
		unlink(tmp);
		goto in_place;
	}
	fd = open(run->outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(text);
	return 0;
in_place:
	if (rewrite_in_place(path, text, len) == 0) {
		free(text);
		return 0;
	}
	kmtd_err("%s: write failed: %s", path, strerror(err));
fail:
	free(text);
	return -1;
}
