// SPDX-License-Identifier: GPL-2.0-only
/* testlib.c - scratch directory and file helpers of the C unit tests (testlib.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "testlib.h"

char *test_dir;

char *test_dir_make(const char *tag)
{
	test_dir = gen_mkdtemp(tag);
	return test_dir;
}

int test_dir_remove(void)
{
	int ret = 0;

	if (test_dir && gen_rm_rf(test_dir) != 0) {
		printf("# could not remove %s\n", test_dir);
		ret = -1;
	}
	free(test_dir);
	test_dir = NULL;
	return ret;
}

const char *test_path(const char *name)
{
	static char buf[4][4096];
	static int slot;
	char *p = buf[slot++ & 3];

	snprintf(p, sizeof(buf[0]), "%s/%s", test_dir, name);
	return p;
}

char *test_read_file(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!fp)
		return NULL;
	if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0) {
		rewind(fp);
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf)
			buf[n] = '\0';
		if (len)
			*len = (size_t)n;
	}
	fclose(fp);
	return buf;
}

int test_write_text(const char *path, const char *text)
{
	return gen_write_file(path, text, strlen(text));
}
