// SPDX-License-Identifier: GPL-2.0-only
/*
 * json_check.c - a strict JSON (RFC 8259) validator for the fuzz targets:
 * the report promises a document any JSON parser reads, so whatever bytes
 * a trace or a kallsyms file holds, its output must pass this.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_targets.h"

/* Far deeper than the report ever nests; bounds the recursion. */
#define JSON_MAX_DEPTH	32

struct jp {
	const unsigned char *s;
	size_t len, pos;
};

static int peek(const struct jp *p)
{
	return p->pos < p->len ? p->s[p->pos] : -1;
}

static void skip_ws(struct jp *p)
{
	while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
				   p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
		p->pos++;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Four hex digits after "\u": 0 with *cp, -1. */
static int hex4(struct jp *p, uint32_t *cp)
{
	int i;

	*cp = 0;
	for (i = 0; i < 4; i++) {
		int v = hexval(peek(p));

		if (v < 0)
			return -1;
		*cp = *cp << 4 | (uint32_t)v;
		p->pos++;
	}
	return 0;
}

/* One UTF-8 sequence (first byte >= 0x80): shortest form, no surrogates, <= U+10FFFF. */
static int utf8_seq(struct jp *p)
{
	unsigned char c = p->s[p->pos];
	size_t n, i;
	uint32_t cp;

	if ((c & 0xe0) == 0xc0)
		n = 2, cp = c & 0x1f;
	else if ((c & 0xf0) == 0xe0)
		n = 3, cp = c & 0x0f;
	else if ((c & 0xf8) == 0xf0)
		n = 4, cp = c & 0x07;
	else
		return -1;
	if (p->len - p->pos < n)
		return -1;
	for (i = 1; i < n; i++) {
		if ((p->s[p->pos + i] & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (p->s[p->pos + i] & 0x3f);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return -1;
	p->pos += n;
	return 0;
}

static int string(struct jp *p)
{
	p->pos++;	/* the opening quote */
	for (;;) {
		int c = peek(p);

		if (c < 0 || c < 0x20)
			return -1;
		if (c == '"') {
			p->pos++;
			return 0;
		}
		if (c >= 0x80) {
			if (utf8_seq(p))
				return -1;
			continue;
		}
		p->pos++;
		if (c != '\\')
			continue;
		c = peek(p);
		p->pos++;
		switch (c) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
			break;
		case 'u': {
			uint32_t cp, lo;

			if (hex4(p, &cp))
				return -1;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return -1;	/* a lone low surrogate */
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (peek(p) != '\\')
					return -1;
				p->pos++;
				if (peek(p) != 'u')
					return -1;
				p->pos++;
				if (hex4(p, &lo) || lo < 0xdc00 || lo > 0xdfff)
					return -1;
			}
			break;
		}
		default:
			return -1;
		}
	}
}

static int digits(struct jp *p)
{
	size_t start = p->pos;

	while (peek(p) >= '0' && peek(p) <= '9')
		p->pos++;
	return p->pos > start ? 0 : -1;
}

static int number(struct jp *p)
{
	if (peek(p) == '-')
		p->pos++;
	if (peek(p) == '0')
		p->pos++;
	else if (digits(p))
		return -1;
	if (peek(p) == '.') {
		p->pos++;
		if (digits(p))
			return -1;
	}
	if (peek(p) == 'e' || peek(p) == 'E') {
		p->pos++;
		if (peek(p) == '+' || peek(p) == '-')
			p->pos++;
		if (digits(p))
			return -1;
	}
	return 0;
}

static int literal(struct jp *p, const char *word)
{
	for (; *word; word++, p->pos++)
		if (peek(p) != (unsigned char)*word)
			return -1;
	return 0;
}

static int value(struct jp *p, int depth);

static int members(struct jp *p, int depth, int close, int keyed)
{
	p->pos++;	/* '{' or '[' */
	skip_ws(p);
	if (peek(p) == close) {
		p->pos++;
		return 0;
	}
	for (;;) {
		skip_ws(p);
		if (keyed) {
			if (peek(p) != '"' || string(p))
				return -1;
			skip_ws(p);
			if (peek(p) != ':')
				return -1;
			p->pos++;
		}
		if (value(p, depth + 1))
			return -1;
		skip_ws(p);
		if (peek(p) == ',') {
			p->pos++;
			continue;
		}
		if (peek(p) != close)
			return -1;
		p->pos++;
		return 0;
	}
}

static int value(struct jp *p, int depth)
{
	int c;

	if (depth > JSON_MAX_DEPTH)
		return -1;
	skip_ws(p);
	c = peek(p);
	switch (c) {
	case '{':
		return members(p, depth, '}', 1);
	case '[':
		return members(p, depth, ']', 0);
	case '"':
		return string(p);
	case 't':
		return literal(p, "true");
	case 'f':
		return literal(p, "false");
	case 'n':
		return literal(p, "null");
	default:
		if (c == '-' || (c >= '0' && c <= '9'))
			return number(p);
		return -1;
	}
}

int fuzz_json_valid(const char *s, size_t len, size_t *err_off)
{
	struct jp p = { (const unsigned char *)s, len, 0 };

	if (value(&p, 0) == 0) {
		skip_ws(&p);
		if (p.pos == p.len)
			return 1;
	}
	if (err_off)
		*err_off = p.pos;
	return 0;
}
