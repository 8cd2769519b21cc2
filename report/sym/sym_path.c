// SPDX-License-Identifier: GPL-2.0-only
/*
 * sym_path.c - lexical clean-up of source paths from DWARF, so that libdw
 * and libbfd, which join directories differently, print the same file;
 * and the warning lists both symbolizers gather.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym/sym_srcline.h"

void sym_vwarn(char **buf, size_t *len, const char *fmt, va_list ap)
{
	char line[600];
	size_t n;
	char *p;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	/* Out of memory: the warning is lost, the symbols are not. */
	p = realloc(*buf, *len + n + 2);
	if (!p)
		return;
	memcpy(p + *len, line, n);
	p[*len + n] = '\n';
	p[*len + n + 1] = '\0';
	*buf = p;
	*len += n + 1;
}

void srcline_clean_path(char *path)
{
	int abs = path[0] == '/';
	char *start = path + abs, *out = start;
	const char *p = path;

	/*
	 * Output never runs ahead of input, so this works in place: a "/" is
	 * only written where the input had one before the next component.
	 */
	while (*p) {
		const char *seg;
		size_t len;

		while (*p == '/')
			p++;
		seg = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - seg);
		if (len == 0 || (len == 1 && seg[0] == '.'))
			continue;
		if (len == 2 && seg[0] == '.' && seg[1] == '.') {
			char *prev = out;

			while (prev > start && prev[-1] != '/')
				prev--;
			if (out > start && !(out - prev == 2 && prev[0] == '.' && prev[1] == '.')) {
				out = prev > start ? prev - 1 : start;
				continue;
			}
			if (abs)
				continue;	/* "/.." is "/" */
		}
		if (out > start)
			*out++ = '/';
		memmove(out, seg, len);
		out += len;
	}
	if (out == path)
		*out++ = '.';
	*out = '\0';
}
