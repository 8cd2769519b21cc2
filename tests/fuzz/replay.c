// SPDX-License-Identifier: GPL-2.0-only
/*
 * replay.c - make check's side of fuzzing: runs every input kept in
 * tests/fuzz/corpus/TARGET and tests/fuzz/regressions/TARGET through the
 * fuzz target TARGET (REPLAY_TARGET), without libFuzzer, as TAP. A crash,
 * a sanitizer report or a broken invariant ends the test without its plan;
 * a regression must also end as its NAME.expect file says:
 *   exit N        the exit code the tool gives for it
 *   msg TEXT      a substring of the first error message
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz_targets.h"
#include "tap.h"

#ifndef REPLAY_TARGET
#error "build with -DREPLAY_TARGET='\"name\"'"
#endif
#ifndef FUZZ_SRCDIR
#define FUZZ_SRCDIR "tests/fuzz"
#endif

/* In sanitizer builds: called before a report ends the process, so no file is left. */
void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the inputs in dir (no dot files, no .expect); NULL if none. */
static char **list_inputs(const char *dir, size_t *n)
{
	char **v = NULL;
	size_t cap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	*n = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' ||
		    (len > 7 && strcmp(de->d_name + len - 7, ".expect") == 0))
			continue;
		if (*n == cap) {
			char **nv;

			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				exit(4);
			v = nv;
		}
		v[*n] = strdup(de->d_name);
		if (!v[*n])
			exit(4);
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t cap = 0;

	*len = 0;
	if (!fp)
		return NULL;
	for (;;) {
		size_t got;

		if (*len == cap) {
			unsigned char *nb;

			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap);
			if (!nb)
				exit(4);
			buf = nb;
		}
		got = fread(buf + *len, 1, cap - *len, fp);
		*len += got;
		if (got == 0)
			break;
	}
	if (ferror(fp)) {
		free(buf);
		buf = NULL;
	}
	fclose(fp);
	return buf ? buf : malloc(1);
}

/* Checks a regression's outcome against NAME.expect. */
static void check_expect(const char *path, const char *name, const struct fuzz_outcome *o)
{
	char ep[8192 + 8], line[1024];
	int have_exit = 0;
	FILE *fp;

	snprintf(ep, sizeof(ep), "%s.expect", path);
	fp = fopen(ep, "r");
	if (!ok(fp != NULL, "%s: has %s.expect", name, name))
		return;
	while (fgets(line, sizeof(line), fp)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "exit ", 5) == 0) {
			have_exit = 1;
			is_u64((uint64_t)o->exit_code, strtoull(line + 5, NULL, 10),
			       "%s: exit code", name);
		} else if (strncmp(line, "msg ", 4) == 0) {
			if (!ok(strstr(o->msg, line + 4) != NULL, "%s: message has '%s'", name,
				line + 4))
				diag("message: %s", o->msg);
		} else if (line[0] && line[0] != '#') {
			ok(0, "%s.expect: unknown line '%s'", name, line);
		}
	}
	fclose(fp);
	ok(have_exit, "%s.expect gives an exit code", name);
}

int main(void)
{
	static const char *const kinds[] = { "corpus", "regressions" };
	const struct fuzz_target *t = fuzz_target_find(REPLAY_TARGET);
	const char *base = getenv("KMT_FUZZ_DIR");
	struct timespec t0, t1;
	size_t k;

	if (!base || !*base)
		base = FUZZ_SRCDIR;
	if (!ok(t != NULL, "fuzz target %s exists", REPLAY_TARGET))
		return done_testing();
	if (!ok(fuzz_tmpdir() != NULL, "temporary directory"))
		return done_testing();
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(fuzz_cleanup);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (k = 0; k < 2; k++) {
		char dir[4096];
		char **names;
		size_t n, i;

		snprintf(dir, sizeof(dir), "%s/%s/%s", base, kinds[k], REPLAY_TARGET);
		names = list_inputs(dir, &n);
		/* Seeds must exist; a target may have no regression yet. */
		if (k == 0)
			ok(n > 0, "%s holds seed inputs", dir);
		for (i = 0; i < n; i++) {
			char path[8192];
			struct fuzz_outcome o = { 0 };
			char shown[200], *c;
			unsigned char *data;
			size_t len;

			snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
			data = slurp(path, &len);
			if (!data) {
				ok(0, "%s/%s: cannot read: %s", kinds[k], names[i], strerror(errno));
				continue;
			}
			t->fn(data, len, &o);
			/* The message as a TAP description: no directive, one line. */
			for (c = shown; (size_t)(c - shown) < sizeof(shown) - 1 &&
			     o.msg[c - shown]; c++)
				*c = o.msg[c - shown] == '#' || o.msg[c - shown] == '\n' ?
				     '_' : o.msg[c - shown];
			*c = '\0';
			ok(1, "%s/%s/%s: %zu bytes, exit %d%s%s", kinds[k], REPLAY_TARGET,
			   names[i], len, o.exit_code, shown[0] ? ": " : "", shown);
			if (k == 1)
				check_expect(path, names[i], &o);
			free(data);
			free(names[i]);
		}
		free(names);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	diag("%s: %.2f s", REPLAY_TARGET,
	     (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	fuzz_cleanup();
	return done_testing();
}
