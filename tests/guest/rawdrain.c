// SPDX-License-Identifier: GPL-2.0-only
/*
 * rawdrain.c - copy what a tracefs trace_pipe_raw holds now, without blocking (45-truth.t).
 *
 * Read with a plain cat, trace_pipe_raw blocks once the ring buffer is empty, and busybox has
 * no way to open a file O_NONBLOCK: this opens it non-blocking and copies whole ring-buffer
 * pages (read(2) of a sub-buffer's size) to OUT until the kernel says there is nothing more
 * (EAGAIN, or end of file).
 * Usage: rawdrain FILE OUT [BLOCK]; BLOCK is the read size (default: the page size).
 * Prints the number of bytes copied; exit 1 on any other error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long block = sysconf(_SC_PAGESIZE);
	long long total = 0;
	char *buf;
	int in, out;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: rawdrain FILE OUT [BLOCK]\n");
		return 1;
	}
	if (argc == 4)
		block = strtol(argv[3], NULL, 0);
	if (block <= 0) {
		fprintf(stderr, "rawdrain: bad block size\n");
		return 1;
	}
	buf = malloc(block);
	in = open(argv[1], O_RDONLY | O_NONBLOCK);
	out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (!buf || in < 0 || out < 0) {
		fprintf(stderr, "rawdrain: %s\n", strerror(errno));
		return 1;
	}
	for (;;) {
		ssize_t n = read(in, buf, block);

		if (n == 0 || (n < 0 && errno == EAGAIN))
			break;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "rawdrain: read %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		if (write(out, buf, n) != n) {
			fprintf(stderr, "rawdrain: write %s: %s\n", argv[2], strerror(errno));
			return 1;
		}
		total += n;
	}
	if (close(out)) {
		fprintf(stderr, "rawdrain: close %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	printf("%lld\n", total);
	return 0;
}
