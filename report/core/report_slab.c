// SPDX-License-Identifier: GPL-2.0-only
/*
 * report_slab.c - the coverage and slab_alias lines of kmemtrace.meta
 * (Documentation/trace-format.md, section 6): which paths the module
 * recorded, and the names SLUB merged, looked up by binary search.
 */
#include <stdlib.h>
#include <string.h>

#include "kmt_reader.h"
#include "core/report_slab.h"

/* A name in /sys/kernel/slab and the directory it is, or links to. */
struct alias {
	char *name;
	char *target;
};

struct rpt_slab {
	struct slab_cov *cov;
	char **cov_text;		/* one malloc'ed copy per line, cov[] points into them */
	size_t ncov, ntext;
	struct alias *by_name;		/* sorted by name, names unique */
	const struct alias **by_target;	/* the same, sorted by target then name */
	size_t nalias;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * One word of a slab_alias line, \xHH escapes decoded, into a malloc'ed
 * string; *p moves past it. NULL when there is no word or it decodes to a
 * NUL byte; *nomem when out of memory.
 */
static char *word(const char **p, bool *nomem)
{
	const char *s = *p, *e;
	char *out, *o;

	while (is_space(*s))
		s++;
	for (e = s; *e && !is_space(*e); e++)
		;
	*p = e;
	if (e == s)
		return NULL;
	out = malloc((size_t)(e - s) + 1);
	if (!out) {
		*nomem = true;
		return NULL;
	}
	for (o = out; s < e; s++) {
		int hi, lo;

		if (s[0] == '\\' && e - s >= 4 && s[1] == 'x' && (hi = hexval(s[2])) >= 0 &&
		    (lo = hexval(s[3])) >= 0) {
			if (!hi && !lo) {
				free(out);
				return NULL;
			}
			*o++ = (char)(hi << 4 | lo);
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return out;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct alias *)a)->name, ((const struct alias *)b)->name);
}

static int cmp_target(const void *a, const void *b)
{
	const struct alias *x = *(const struct alias *const *)a;
	const struct alias *y = *(const struct alias *const *)b;
	int c = strcmp(x->target, y->target);

	return c ? c : strcmp(x->name, y->name);
}

static enum slab_path_kind path_kind(const char *path)
{
	if (strstr(path, "free"))
		return SLAB_PATH_FREE;
	if (strncmp(path, "kmem_cache", 10) == 0)
		return SLAB_PATH_CACHE_ALLOC;
	return SLAB_PATH_KMALLOC;
}

static bool how_covers(const char *how)
{
	static const char *const seen[] = { "tracepoint", "kprobe", "kretprobe", "absent" };
	size_t i;

	for (i = 0; i < sizeof(seen) / sizeof(seen[0]); i++)
		if (strcmp(how, seen[i]) == 0)
			return true;
	return false;
}

/* N of a "(N calls missed)" in DETAIL, 0 without one. */
static uint64_t calls_missed(const char *detail)
{
	const char *end = strstr(detail, " calls missed)"), *p = end;
	uint64_t n = 0, scale = 1;

	if (!end)
		return 0;
	while (p > detail && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p == end || p == detail || p[-1] != '(' || end - p > 19)
		return 0;
	for (; end > p; end--, scale *= 10)
		n += (uint64_t)(end[-1] - '0') * scale;
	return n;
}

/* "PATH HOW DETAIL...": split in place. false when there is no PATH. */
static bool parse_cov(char *text, struct slab_cov *c)
{
	char *p = text, *end;

	while (is_space(*p))
		p++;
	if (!*p)
		return false;
	c->path = p;
	while (*p && !is_space(*p))
		p++;
	if (*p)
		*p++ = '\0';
	while (is_space(*p))
		p++;
	c->how = p;
	while (*p && !is_space(*p))
		p++;
	if (*p)
		*p++ = '\0';
	while (is_space(*p))
		p++;
	c->detail = p;
	end = p + strlen(p);
	while (end > p && is_space(end[-1]))
		*--end = '\0';
	c->kind = path_kind(c->path);
	c->calls_missed = calls_missed(c->detail);
	c->missed = !how_covers(c->how) || c->calls_missed;
	return true;
}

static int read_coverage(struct rpt_slab *s, const struct rpt_meta *m)
{
	size_t pos = 0, n = 0, i;
	const char *v;

	while (meta_next(m, "coverage", &pos))
		n++;
	if (!n)
		return 0;
	s->cov = calloc(n, sizeof(*s->cov));
	s->cov_text = calloc(n, sizeof(*s->cov_text));
	if (!s->cov || !s->cov_text)
		return -1;
	pos = 0;
	for (i = 0; i < n && (v = meta_next(m, "coverage", &pos)); i++) {
		char *copy = strdup(v);

		if (!copy)
			return -1;
		s->cov_text[s->ntext++] = copy;
		if (parse_cov(copy, &s->cov[s->ncov]))
			s->ncov++;
	}
	return 0;
}

static int read_aliases(struct rpt_slab *s, const struct rpt_meta *m)
{
	size_t pos = 0, n = 0, i, j;
	bool nomem = false;
	const char *v;

	while (meta_next(m, "slab_alias", &pos))
		n++;
	if (!n)
		return 0;
	s->by_name = calloc(n, sizeof(*s->by_name));
	if (!s->by_name)
		return -1;
	pos = 0;
	while ((v = meta_next(m, "slab_alias", &pos))) {
		struct alias *a = &s->by_name[s->nalias];

		a->name = word(&v, &nomem);
		a->target = a->name ? word(&v, &nomem) : NULL;
		if (nomem)
			break;
		if (!a->target) {
			free(a->name);
			a->name = NULL;
			continue;
		}
		s->nalias++;
	}
	if (nomem) {
		free(s->by_name[s->nalias].name);
		free(s->by_name[s->nalias].target);
		return -1;
	}
	if (!s->nalias)
		return 0;
	/*
	 * A name listed twice keeps one target: qsort() is not stable, but
	 * kmemtraced never writes a name twice.
	 */
	qsort(s->by_name, s->nalias, sizeof(*s->by_name), cmp_name);
	for (i = j = 0; i < s->nalias; i++) {
		if (j && strcmp(s->by_name[j - 1].name, s->by_name[i].name) == 0) {
			free(s->by_name[i].name);
			free(s->by_name[i].target);
			continue;
		}
		s->by_name[j++] = s->by_name[i];
	}
	s->nalias = j;
	s->by_target = calloc(s->nalias, sizeof(*s->by_target));
	if (!s->by_target)
		return -1;
	for (i = 0; i < s->nalias; i++)
		s->by_target[i] = &s->by_name[i];
	qsort(s->by_target, s->nalias, sizeof(*s->by_target), cmp_target);
	return 0;
}

struct rpt_slab *slab_info_new(const struct rpt_meta *m)
{
	struct rpt_slab *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (read_coverage(s, m) || read_aliases(s, m)) {
		slab_info_free(s);
		return NULL;
	}
	return s;
}

void slab_info_free(struct rpt_slab *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->ntext; i++)
		free(s->cov_text[i]);
	for (i = 0; i < s->nalias; i++) {
		free(s->by_name[i].name);
		free(s->by_name[i].target);
	}
	free(s->cov);
	free(s->cov_text);
	free(s->by_name);
	free(s->by_target);
	free(s);
}

size_t slab_ncov(const struct rpt_slab *s)
{
	return s ? s->ncov : 0;
}

const struct slab_cov *slab_cov(const struct rpt_slab *s, size_t i)
{
	return s && i < s->ncov ? &s->cov[i] : NULL;
}

size_t slab_nmissed(const struct rpt_slab *s)
{
	size_t i, n = 0;

	for (i = 0; i < slab_ncov(s); i++)
		n += s->cov[i].missed;
	return n;
}

bool slab_cache_allocs_seen(const struct rpt_slab *s)
{
	size_t i;

	if (!slab_ncov(s))
		return false;
	for (i = 0; i < s->ncov; i++)
		if (s->cov[i].kind == SLAB_PATH_CACHE_ALLOC && s->cov[i].missed)
			return false;
	return true;
}

bool slab_kmalloc_allocs_missed(const struct rpt_slab *s)
{
	size_t i;

	for (i = 0; i < slab_ncov(s); i++)
		if (s->cov[i].kind == SLAB_PATH_KMALLOC && s->cov[i].missed)
			return true;
	return false;
}

size_t slab_nnames(const struct rpt_slab *s)
{
	return s ? s->nalias : 0;
}

/* First entry whose name is >= name (s->nalias if none). */
static size_t lower_bound(const struct rpt_slab *s, const char *name)
{
	size_t lo = 0, hi = s->nalias;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(s->by_name[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The entry of a cache's name. A name of 31 bytes may have been cut by
 * the module: then the one cache whose names start with it, if only one.
 */
static const struct alias *find(const struct rpt_slab *s, const char *name)
{
	size_t i, len = strlen(name);
	const struct alias *hit = NULL;

	if (!s || !s->nalias)
		return NULL;
	i = lower_bound(s, name);
	if (i < s->nalias && strcmp(s->by_name[i].name, name) == 0)
		return &s->by_name[i];
	if (len != KMT_CACHE_NAME_LEN - 1)
		return NULL;
	for (; i < s->nalias && strncmp(s->by_name[i].name, name, len) == 0; i++) {
		if (hit && strcmp(hit->target, s->by_name[i].target) != 0)
			return NULL;
		hit = &s->by_name[i];
	}
	return hit;
}

size_t slab_aliases(const struct rpt_slab *s, const char *name, const char **out, size_t max)
{
	const struct alias *a = find(s, name);
	size_t lo = 0, hi, n = 0;

	if (!a)
		return 0;
	hi = s->nalias;
	/* The first entry of a's target in by_target. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(s->by_target[mid]->target, a->target) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < s->nalias && strcmp(s->by_target[lo]->target, a->target) == 0; lo++) {
		const char *other = s->by_target[lo]->name;

		/* SLUB's own ":[flags-]size" names were never given to kmem_cache_create(). */
		if (strcmp(other, name) == 0 || other[0] == ':')
			continue;
		if (n < max)
			out[n] = other;
		n++;
	}
	return n;
}

bool slab_names_cache(const struct rpt_slab *s, const char *want, const char *name)
{
	const struct alias *a, *w;

	if (strcmp(want, name) == 0)
		return true;
	a = find(s, name);
	if (!a)
		return false;
	if (strcmp(want, a->target) == 0)
		return true;
	w = find(s, want);
	return w && strcmp(w->target, a->target) == 0;
}
