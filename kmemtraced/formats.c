// SPDX-License-Identifier: GPL-2.0-only
/*
 * formats.c - copies the traced kernel's tracepoint formats of the kmem
 * events into the trace (tracepoint_formats, Documentation/trace-format.md
 * section 6), so that the report can print GFP masks with that kernel's own
 * names: the table behind ftrace's "gfp_flags=GFP_KERNEL" is in each event's
 * print fmt and changes between kernels. A leaf (kmemtraced.h): it calls
 * only kmtd_util.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats.h"
#include "kmtd_util.h"

/* With KMEMTRACED_TEST_FAKE_DEBUGFS=1 only: the tracefs directory to read instead. */
#define KMTD_TEST_TRACEFS_ENV	"KMEMTRACED_TEST_TRACEFS"
#define KMTD_TRACEFS		"/sys/kernel/tracing"
/* A format file is a few KiB; one larger than this is not one we know how to read. */
#define FORMAT_MAX		(256 * 1024)
#define FORMATS_HEADER \
	"# kmemtrace: the traced kernel's tracepoint formats (Documentation/trace-format.md)\n"

/*
 * The events kmemtrace.ko records, under their names of 5.11 to 7.3: the
 * _node variants exist before 6.1 only. Those a kernel lacks are left out.
 */
#define KMTD_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const char *const kmem_events[] = {
	"kmalloc", "kmalloc_node", "kmem_cache_alloc", "kmem_cache_alloc_node",
	"kfree", "kmem_cache_free", "mm_page_alloc", "mm_page_free",
};

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * The events/kmem directory to read, or NULL. tracefs has its own mount
 * point since 4.1; <debugfs>/tracing mounts it on first access where
 * nobody mounted /sys/kernel/tracing. A test's fake debugfs only ever
 * reads its own directories, never the host's tracefs.
 */
static const char *events_dir(const char *debugfs, char *buf, size_t size)
{
	const char *fake = getenv(KMTD_FAKE_ENV);

	if (fake && strcmp(fake, "1") == 0) {
		const char *dir = getenv(KMTD_TEST_TRACEFS_ENV);

		if (dir)
			snprintf(buf, size, "%s/events/kmem", dir);
		else
			snprintf(buf, size, "%s/tracing/events/kmem", debugfs);
		return is_dir(buf) ? buf : NULL;
	}
	snprintf(buf, size, KMTD_TRACEFS "/events/kmem");
	if (is_dir(buf))
		return buf;
	snprintf(buf, size, "%s/tracing/events/kmem", debugfs);
	return is_dir(buf) ? buf : NULL;
}

/* EVENT's format appended to f under an "event kmem/EVENT" line; 0 if it has none. */
static int copy_format(FILE *f, const char *dir, const char *event, char *buf)
{
	char path[PATH_MAX + 192];
	int n;

	snprintf(path, sizeof(path), "%s/%s/format", dir, event);
	n = kmtd_read_file(path, buf, FORMAT_MAX);
	if (n < 0) {
		if (errno != ENOENT)
			kmtd_err("warning: %s: %s; GFP masks of this event will be shown in hex",
				 path, strerror(errno));
		return 0;
	}
	if (n == 0 || (size_t)n >= FORMAT_MAX - 1) {
		kmtd_err("warning: %s: %s; GFP masks of this event will be shown in hex", path,
			 n ? "larger than any format file" : "empty");
		return 0;
	}
	fprintf(f, "event kmem/%s\n%s", event, buf);
	if (buf[n - 1] != '\n')
		fputc('\n', f);
	return 1;
}

int kmtd_write_formats(const struct kmtd_run *run, const char *debugfs, char *what,
		       size_t what_size)
{
	char dirbuf[PATH_MAX + 64], path[PATH_MAX + 32];
	const char *dir = events_dir(debugfs, dirbuf, sizeof(dirbuf));
	char *text = NULL, *buf = NULL;
	size_t len = 0, i;
	int fd, copied = 0, ret = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", run->outdir, KMTD_FORMATS);
	/* With -f, an earlier trace's formats must not pass for this kernel's. */
	if (run->force && unlink(path) < 0 && errno != ENOENT) {
		kmtd_err("%s: cannot remove the old file: %s", path, strerror(errno));
		return -1;
	}
	if (!dir) {
		snprintf(what, what_size, "none: no tracefs (%s, or %s/tracing) with events/kmem",
			 KMTD_TRACEFS, debugfs);
		return 0;
	}
	buf = malloc(FORMAT_MAX);
	f = open_memstream(&text, &len);
	if (!buf || !f) {
		kmtd_err("out of memory");
		goto out;
	}
	fputs(FORMATS_HEADER, f);
	for (i = 0; i < KMTD_ARRAY_SIZE(kmem_events); i++)
		copied += copy_format(f, dir, kmem_events[i], buf);
	if (fclose(f) != 0) {
		f = NULL;
		kmtd_err("out of memory");
		goto out;
	}
	f = NULL;
	if (!copied) {
		snprintf(what, what_size, "none: no readable format file in %s", dir);
		ret = 0;
		goto out;
	}
	fd = kmtd_create_file(path, run->force);
	if (fd < 0)
		goto out;
	if (kmtd_write_all(fd, text, len) < 0 || (fsync(fd) < 0 && errno != EINVAL)) {
		kmtd_err("%s: write failed: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		goto out;
	}
	if (close(fd) < 0 && errno != EINTR) {
		kmtd_err("%s: write failed: %s", path, strerror(errno));
		unlink(path);
		goto out;
	}
	snprintf(what, what_size, "%s", dir);
	ret = 1;
out:
	if (f)
		fclose(f);
	free(text);
	free(buf);
	return ret;
}
