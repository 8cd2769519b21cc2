// SPDX-License-Identifier: GPL-2.0-only
/*
 * report_gfp.c - reads the traced kernel's gfp_flags table from its
 * tracepoint formats and names masks with it, as ftrace does.
 *
 * The table is the one argument of __print_flags(REC->gfp_flags, "|", ...)
 * in an event's "print fmt" line: {(unsigned long)(EXPR), "NAME"} pairs in
 * which the kernel's preprocessor left each mask an expression of numbers
 * (6.1: "(( gfp_t)0x400u|0x800u)", 6.12 and 7.3: "((((1UL))) << (10))",
 * with casts, |, &, ~ and shifts), and 7.3 ends it with { 0, ((void *)0) }.
 * So the masks are evaluated here, by a small C expression evaluator that
 * knows numbers, casts and the integer operators, and refuses anything else
 * (a name the kernel's eval map left unreplaced, say) with the file, line
 * and column.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/report_gfp.h"

/* The deepest nesting of parentheses and operators an expression may have. */
#define EXPR_DEPTH_MAX	256

struct gfp_flag {
	uint64_t mask;
	char name[GFP_NAME_MAX + 1];
};

struct gfp_names {
	bool has;			/* a table was found */
	char event[64];			/* the event it came from */
	char delim[GFP_DELIM_MAX + 1];
	char zero[GFP_NAME_MAX + 1];	/* what a 0 mask prints as; "" when not said */
	bool has_zero;
	struct gfp_flag flags[GFP_TABLE_MAX];
	size_t n;
};

/* One "print fmt" line being parsed. */
struct px {
	const char *line;		/* NUL-terminated */
	const char *p;
	const char *path;
	unsigned int lineno;
	int depth;
	char *err;
	size_t errlen;
	bool failed;
};

__attribute__((format(printf, 2, 3)))
static void px_fail(struct px *x, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (x->failed)
		return;
	x->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(x->err, x->errlen, "%s:%u: column %zu: %s", x->path, x->lineno,
		 (size_t)(x->p - x->line) + 1, msg);
}

static void skip_ws(struct px *x)
{
	while (*x->p == ' ' || *x->p == '\t')
		x->p++;
}

/* Consumes TOK (after blanks) if it is next; true if it was. */
static bool take(struct px *x, const char *tok)
{
	size_t n = strlen(tok);

	skip_ws(x);
	if (strncmp(x->p, tok, n) != 0)
		return false;
	x->p += n;
	return true;
}

static bool expect(struct px *x, const char *tok, const char *where)
{
	if (take(x, tok))
		return true;
	px_fail(x, "expected '%s' %s", tok, where);
	return false;
}

static bool is_ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* A C string literal into out (at most size - 1 bytes); false after px_fail. */
static bool string_lit(struct px *x, char *out, size_t size, const char *what)
{
	size_t n = 0;

	skip_ws(x);
	if (*x->p != '"') {
		px_fail(x, "expected a string (%s)", what);
		return false;
	}
	x->p++;
	while (*x->p != '"') {
		char c = *x->p;

		if (c == '\\' && x->p[1])
			c = *++x->p;
		if (!c) {
			px_fail(x, "unterminated string (%s)", what);
			return false;
		}
		/* Names are printed as they are: no control bytes in them. */
		if ((unsigned char)c < 0x20 || c == 0x7f) {
			px_fail(x, "control character in a string (%s)", what);
			return false;
		}
		if (n + 1 >= size) {
			px_fail(x, "string longer than %zu bytes (%s)", size - 1, what);
			return false;
		}
		out[n++] = c;
		x->p++;
	}
	x->p++;
	out[n] = '\0';
	return true;
}

/* ---- the mask expressions ---------------------------------------------------- */

static bool expr(struct px *x, uint64_t *v);

/*
 * The width of a cast's type: gfp_t and int are 32 bits on every Linux
 * architecture, short 16, char 8; long, pointers and unknown types keep
 * all 64 bits (no kernel mask is wider than 32: they are only kept).
 */
static unsigned int cast_bits(const char *type)
{
	if (strchr(type, '*') || strstr(type, "long"))
		return 64;
	if (strstr(type, "gfp_t") || strstr(type, "int") || strcmp(type, "unsigned") == 0 ||
	    strcmp(type, "signed") == 0)
		return 32;
	if (strstr(type, "short"))
		return 16;
	if (strstr(type, "char"))
		return 8;
	return 64;
}

static bool number(struct px *x, uint64_t *v)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(x->p, &end, 0);
	if (errno || end == x->p) {
		px_fail(x, "bad number");
		return false;
	}
	x->p = end;
	/* The suffixes the kernel writes: 0x400u, 1UL. */
	while (*x->p == 'u' || *x->p == 'U' || *x->p == 'l' || *x->p == 'L')
		x->p++;
	if (is_ident(*x->p)) {
		px_fail(x, "bad number");
		return false;
	}
	*v = n;
	return true;
}

/* "(TYPE)" at x->p, after its '(': the type words into type; false if not a cast. */
static bool cast_type(struct px *x, char *type, size_t size)
{
	const char *start = x->p, *q = x->p;
	size_t n = 0;

	while (*q == ' ' || *q == '\t')
		q++;
	if (!is_ident_start(*q))
		return false;
	while (*q && *q != ')') {
		if (!is_ident(*q) && *q != ' ' && *q != '\t' && *q != '*')
			return false;
		if (n + 1 < size)
			type[n++] = *q;
		q++;
	}
	if (*q != ')')
		return false;
	type[n] = '\0';
	/*
	 * "(NAME)" followed by what cannot start an operand is a name in
	 * parentheses, "<< (___GFP_IO_BIT)": not a cast, and reported as a name.
	 */
	x->p = ++q;
	while (*q == ' ' || *q == '\t')
		q++;
	if (!*q || (!isalnum((unsigned char)*q) && !strchr("_(~-+!", *q))) {
		x->p = start;
		return false;
	}
	return true;
}

static bool unary(struct px *x, uint64_t *v)
{
	char type[64];
	bool ok;

	if (++x->depth > EXPR_DEPTH_MAX) {
		px_fail(x, "expression nested deeper than %d", EXPR_DEPTH_MAX);
		return false;
	}
	skip_ws(x);
	if (take(x, "~")) {
		ok = unary(x, v);
		*v = ~*v;
	} else if (take(x, "-")) {
		ok = unary(x, v);
		*v = 0 - *v;
	} else if (take(x, "+")) {
		ok = unary(x, v);
	} else if (take(x, "!")) {
		ok = unary(x, v);
		*v = !*v;
	} else if (take(x, "(")) {
		if (cast_type(x, type, sizeof(type))) {
			unsigned int bits = cast_bits(type);

			ok = unary(x, v);
			if (bits < 64)
				*v &= (1ull << bits) - 1;
		} else {
			ok = expr(x, v) && expect(x, ")", "closing a parenthesis");
		}
	} else if (isdigit((unsigned char)*x->p)) {
		ok = number(x, v);
	} else if (is_ident_start(*x->p)) {
		int k = 0;

		while (is_ident(x->p[k]) && k < 64)
			k++;
		px_fail(x, "unknown name '%.*s' in a mask (only numbers are understood)", k,
			x->p);
		ok = false;
	} else {
		px_fail(x, "expected a number, a cast or '('");
		ok = false;
	}
	x->depth--;
	return ok;
}

/* Binary operators by C's precedence, lowest first; each level's operators. */
static const char *const levels[][3] = {
	{ "|", NULL, NULL }, { "^", NULL, NULL }, { "&", NULL, NULL },
	{ "<<", ">>", NULL }, { "+", "-", NULL },
};
#define NLEVELS	(sizeof(levels) / sizeof(levels[0]))

static bool binary(struct px *x, size_t level, uint64_t *v)
{
	if (level == NLEVELS)
		return unary(x, v);
	if (!binary(x, level + 1, v))
		return false;
	for (;;) {
		const char *op = NULL;
		uint64_t r;
		size_t i;

		skip_ws(x);
		/* "||" and "&&" are not masks: "|" and "&" must not take them. */
		if (strncmp(x->p, "||", 2) == 0 || strncmp(x->p, "&&", 2) == 0)
			break;
		for (i = 0; i < 3 && levels[level][i]; i++)
			if (strncmp(x->p, levels[level][i], strlen(levels[level][i])) == 0)
				op = levels[level][i];
		if (!op)
			break;
		x->p += strlen(op);
		if (!binary(x, level + 1, &r))
			return false;
		switch (op[0]) {
		case '|':
			*v |= r;
			break;
		case '^':
			*v ^= r;
			break;
		case '&':
			*v &= r;
			break;
		case '+':
			*v += r;
			break;
		case '-':
			*v -= r;
			break;
		default:	/* << and >> */
			if (r >= 64) {
				px_fail(x, "shift by %llu", (unsigned long long)r);
				return false;
			}
			*v = op[0] == '<' ? *v << r : *v >> r;
			break;
		}
	}
	return true;
}

static bool expr(struct px *x, uint64_t *v)
{
	return binary(x, 0, v);
}

/* ---- the table --------------------------------------------------------------- */

/* The name after a mask: a string, or the null pointer that ends the table. */
static bool entry_name(struct px *x, char *name, bool *end)
{
	uint64_t v;

	skip_ws(x);
	*end = false;
	if (*x->p == '"')
		return string_lit(x, name, GFP_NAME_MAX + 1, "a flag's name");
	if (take(x, "NULL")) {
		v = 0;
	} else if (!expr(x, &v)) {
		return false;
	}
	if (v) {
		px_fail(x, "expected a flag's name or a null pointer");
		return false;
	}
	*end = true;
	return true;
}

/*
 * The __print_flags() call at x->p (just after "REC->gfp_flags,"), into g.
 * Entries after a null name are read but not kept: the kernel stops there.
 */
static bool flag_table(struct px *x, struct gfp_names *g)
{
	bool ended = false;

	if (!string_lit(x, g->delim, sizeof(g->delim), "the delimiter") ||
	    !expect(x, ",", "after the delimiter"))
		return false;
	g->n = 0;
	for (;;) {
		struct gfp_flag f;
		bool end;

		if (take(x, ")"))
			break;
		if (!expect(x, "{", "opening a flag"))
			return false;
		x->depth = 0;
		if (!expr(x, &f.mask) || !expect(x, ",", "after a flag's mask") ||
		    !entry_name(x, f.name, &end) || !expect(x, "}", "closing a flag"))
			return false;
		if (end)
			ended = true;
		if (!ended) {
			if (g->n == GFP_TABLE_MAX) {
				px_fail(x, "more than %d flags", GFP_TABLE_MAX);
				return false;
			}
			if (!f.name[0]) {
				px_fail(x, "empty flag name");
				return false;
			}
			g->flags[g->n++] = f;
		}
		if (take(x, ")"))
			break;
		if (!expect(x, ",", "between flags"))
			return false;
	}
	if (!g->n) {
		px_fail(x, "no flag in the gfp_flags table");
		return false;
	}
	return true;
}

/*
 * gfp_flags's table in one "print fmt" line, if it has one. The kernel's
 * show_gfp_flags() is "(REC->gfp_flags) ? __print_flags(...) : "none"":
 * the string after the table is what a 0 mask prints as.
 */
static bool print_fmt(struct px *x, struct gfp_names *g)
{
	const char *call = x->line;
	const char *q;

	for (;;) {
		call = strstr(call, "__print_flags(");
		if (!call)
			return true;
		q = call + strlen("__print_flags(");
		while (*q == ' ' || *q == '\t')
			q++;
		if (strncmp(q, "REC->gfp_flags", 14) == 0) {
			q += 14;
			while (*q == ' ' || *q == '\t')
				q++;
			if (*q == ',')
				break;
		}
		call++;
	}
	x->p = q + 1;
	if (!flag_table(x, g))
		return false;
	g->has_zero = false;
	q = call;
	while (q > x->line && (q[-1] == ' ' || q[-1] == '\t'))
		q--;
	if (q > x->line && q[-1] == '?' && take(x, ":")) {
		if (!string_lit(x, g->zero, sizeof(g->zero), "what a 0 mask prints as"))
			return false;
		/* "" names nothing (a flag's "" is refused): 0 then prints by the table, or as 0. */
		g->has_zero = g->zero[0] != '\0';
	}
	g->has = true;
	return true;
}

struct gfp_names *gfp_names_parse(const char *text, size_t len, const char *path, char *err,
				  size_t errlen)
{
	struct gfp_names *g = calloc(1, sizeof(*g)), *t = calloc(1, sizeof(*t));
	const char *p = text, *end = text + len;
	char event[64] = "", *line = NULL;
	unsigned int lineno = 0;
	size_t cap = 0;

	if (!g || !t)
		goto nomem;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct px x = { .path = path, .err = err, .errlen = errlen };

		lineno++;
		if (n + 1 > cap) {
			char *b = realloc(line, n + 1);

			if (!b)
				goto nomem;
			line = b;
			cap = n + 1;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + (nl ? 1 : 0);
		x.line = x.p = line;
		x.lineno = lineno;
		if (n && line[n - 1] == '\r')
			line[--n] = '\0';
		if (memchr(line, '\0', n)) {
			px_fail(&x, "NUL byte");
			goto fail;
		}
		if (strncmp(line, "event ", 6) == 0) {
			const char *name = line + 6;

			if (strncmp(name, "kmem/", 5) == 0)
				name += 5;
			if (!*name || strlen(name) >= sizeof(event) ||
			    name[strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_")]) {
				x.p = line + 6;
				px_fail(&x, "expected 'event kmem/NAME'");
				goto fail;
			}
			snprintf(event, sizeof(event), "%s", name);
			continue;
		}
		if (!event[0]) {
			if (n && line[0] != '#') {
				px_fail(&x, "expected 'event kmem/NAME' before an event's format");
				goto fail;
			}
			continue;
		}
		if (strncmp(line, "print fmt:", 10) != 0)
			continue;
		memset(t, 0, sizeof(*t));
		if (!print_fmt(&x, t))
			goto fail;
		/* The first event's table names every mask: all show_gfp_flags(). */
		if (t->has && !g->has) {
			*g = *t;
			snprintf(g->event, sizeof(g->event), "%s", event);
		}
	}
	free(line);
	free(t);
	return g;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	free(line);
	free(t);
	free(g);
	return NULL;
}

struct gfp_names *gfp_names_load_dir(const char *dir, char *err, size_t errlen, int *missing)
{
	char path[4096];
	struct gfp_names *g = NULL;
	char *text = NULL;
	size_t len = 0, cap = 0;
	int e = 0;
	FILE *fp;

	*missing = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, GFP_FORMATS_FILE);
	fp = fopen(path, "r");
	if (!fp) {
		e = errno;
		*missing = e == ENOENT;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		errno = e;
		return NULL;
	}
	for (;;) {
		size_t n;

		if (cap - len < 4096) {
			char *b;

			/* A real file is some 15 KiB; 64 MiB is no file of ours. */
			if (cap >= (64u << 20)) {
				snprintf(err, errlen, "%s: larger than 64 MiB", path);
				e = EINVAL;
				goto out;
			}
			b = realloc(text, cap ? 2 * cap : 65536);
			if (!b) {
				snprintf(err, errlen, "out of memory");
				e = ENOMEM;
				goto out;
			}
			text = b;
			cap = cap ? 2 * cap : 65536;
		}
		n = fread(text + len, 1, cap - len, fp);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(fp)) {
		e = errno ? errno : EIO;
		snprintf(err, errlen, "%s: read error: %s", path, strerror(e));
		goto out;
	}
	g = gfp_names_parse(text, len, path, err, errlen);
	if (!g)
		e = strcmp(err, "out of memory") ? EINVAL : ENOMEM;
out:
	fclose(fp);
	free(text);
	errno = e;
	return g;
}

void gfp_names_free(struct gfp_names *g)
{
	free(g);
}

int gfp_names_has_table(const struct gfp_names *g)
{
	return g && g->has;
}

const char *gfp_names_event(const struct gfp_names *g)
{
	return g && g->has ? g->event : NULL;
}

/* Appends s to buf (of len, *used so far), cut if it must be. */
static void put(char *buf, size_t len, size_t *used, const char *s)
{
	size_t n = strlen(s);

	if (*used + 1 >= len)
		return;
	if (n > len - 1 - *used)
		n = len - 1 - *used;
	memcpy(buf + *used, s, n);
	*used += n;
	buf[*used] = '\0';
}

/*
 * The kernel's trace_print_flags_seq(): each entry in the table's order
 * whose bits are all in what is left is printed and its bits taken out;
 * what no entry covers follows in hex.
 */
const char *gfp_names_format(const struct gfp_names *g, uint32_t mask, char *buf, size_t len)
{
	uint64_t left = mask;
	size_t used = 0, i;
	char hex[24];

	if (!len)
		return buf;
	buf[0] = '\0';
	if (!g || !g->has) {
		snprintf(buf, len, "0x%x", mask);
		return buf;
	}
	if (!mask) {
		if (g->has_zero) {
			put(buf, len, &used, g->zero);
			return buf;
		}
		for (i = 0; i < g->n; i++) {
			if (!g->flags[i].mask) {
				put(buf, len, &used, g->flags[i].name);
				return buf;
			}
		}
		put(buf, len, &used, "0");
		return buf;
	}
	for (i = 0; i < g->n && left; i++) {
		uint64_t m = g->flags[i].mask;

		if ((left & m) != m)
			continue;
		if (used)
			put(buf, len, &used, g->delim);
		put(buf, len, &used, g->flags[i].name);
		left &= ~m;
	}
	if (left) {
		if (used)
			put(buf, len, &used, g->delim);
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)left);
		put(buf, len, &used, hex);
	}
	return buf;
}
