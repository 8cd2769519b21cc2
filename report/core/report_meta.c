// SPDX-License-Identifier: GPL-2.0-only
/*
 * report_meta.c - kmemtrace.meta reader: "key value" lines, '#' comments,
 * unknown keys kept but ignored, so newer daemons never break the report.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/report_meta.h"

struct kv {
	char *key, *val;
};

struct rpt_meta {
	struct kv *kv;
	size_t n, cap;
};

void meta_free(struct rpt_meta *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++)
		free(m->kv[i].key);
	free(m->kv);
	free(m);
}

struct rpt_meta *meta_load(const char *path, char *err, size_t errlen, int *missing)
{
	struct rpt_meta *m = calloc(1, sizeof(*m));
	FILE *fp;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	*missing = 0;
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	fp = fopen(path, "r");
	if (!fp) {
		*missing = errno == ENOENT;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(m);
		return NULL;
	}
	while ((len = getline(&line, &cap, fp)) > 0) {
		char *k, *v;

		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		k = line + strspn(line, " \t");
		if (!*k || *k == '#')
			continue;
		if (m->n == m->cap) {
			size_t ncap = m->cap ? m->cap * 2 : 32;
			struct kv *p = realloc(m->kv, ncap * sizeof(*p));

			if (!p)
				goto nomem;
			m->kv = p;
			m->cap = ncap;
		}
		k = strdup(k);
		if (!k)
			goto nomem;
		v = k + strcspn(k, " \t");
		if (*v) {
			*v++ = '\0';
			v += strspn(v, " \t");
		}
		m->kv[m->n].key = k;
		m->kv[m->n].val = v;
		m->n++;
	}
	if (ferror(fp)) {
		snprintf(err, errlen, "%s: read error", path);
		goto fail;
	}
	free(line);
	fclose(fp);
	return m;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	free(line);
	fclose(fp);
	meta_free(m);
	return NULL;
}

const char *meta_get(const struct rpt_meta *m, const char *key)
{
	size_t i;

	if (!m)
		return NULL;
	for (i = 0; i < m->n; i++)
		if (strcmp(m->kv[i].key, key) == 0)
			return m->kv[i].val;
	return NULL;
}

const char *meta_next(const struct rpt_meta *m, const char *key, size_t *pos)
{
	if (!m)
		return NULL;
	for (; *pos < m->n; (*pos)++)
		if (strcmp(m->kv[*pos].key, key) == 0)
			return m->kv[(*pos)++].val;
	return NULL;
}

int meta_kernel_at_least(const struct rpt_meta *m, unsigned int major, unsigned int minor)
{
	const char *rel = meta_get(m, "kernel_release");
	unsigned int ma, mi;

	if (!rel || sscanf(rel, "%u.%u", &ma, &mi) != 2)
		return -1;
	return ma > major || (ma == major && mi >= minor);
}

int meta_get_u64(const struct rpt_meta *m, const char *key, uint64_t *v)
{
	const char *s = meta_get(m, key);
	unsigned long long x;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return 0;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end)
		return 0;
	*v = x;
	return 1;
}

struct rpt_meta *meta_load_dir(const char *dir, char *err, size_t errlen, int *missing)
{
	size_t n = strlen(dir) + sizeof("/kmemtrace.meta");
	struct rpt_meta *m;
	char *p = malloc(n);

	*missing = 0;
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(p, n, "%s/kmemtrace.meta", dir);
	m = meta_load(p, err, errlen, missing);
	free(p);
	return m;
}

int meta_stacks_config_depth(const char *cfg)
{
	unsigned int d;

	return cfg && sscanf(cfg, "depth %u", &d) == 1 && d <= INT_MAX ? (int)d : -1;
}

int meta_stack_depth(const struct rpt_meta *m)
{
	return meta_stacks_config_depth(meta_get(m, "stacks_config"));
}
