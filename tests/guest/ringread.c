// SPDX-License-Identifier: GPL-2.0-only
/*
 * ringread.c - read a kmemtrace cpuN file through its mapped ring, as kmemtraced does
 * (10-module.t): map the whole ring, then ask KMT_IOC_RING_NEXT for extent after extent,
 * giving each back once written to OUT, until an empty one.
 * Usage: ringread FILE OUT. Prints "read BYTES" (exit 0), or "refused" when the module says
 * EAGAIN (its binding rule; exit 2); exit 1 on any other error, with a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kmemtrace_abi.h"

static int die(const char *what)
{
	fprintf(stderr, "ringread: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	struct kmt_ring_extent ext = { .done = 0 };
	unsigned long long total = 0;
	const uint8_t *ring;
	int in, out;

	if (argc != 3) {
		fprintf(stderr, "usage: ringread FILE OUT\n");
		return 1;
	}
	in = open(argv[1], O_RDONLY);
	out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || out < 0)
		return die("open");
	if (ioctl(in, KMT_IOC_RING_NEXT, &ext) < 0) {
		if (errno == EAGAIN) {
			printf("refused\n");
			return 2;
		}
		return die("KMT_IOC_RING_NEXT");
	}
	ring = mmap(NULL, ext.ring_size, PROT_READ, MAP_SHARED, in, 0);
	if (ring == MAP_FAILED)
		return die("mmap");
	while (ext.len) {
		if (ext.offset + ext.len > ext.ring_size || ext.len % KMT_RECORD_SIZE) {
			fprintf(stderr, "ringread: extent %llu+%llu outside a ring of %llu\n",
				(unsigned long long)ext.offset, (unsigned long long)ext.len,
				(unsigned long long)ext.ring_size);
			return 1;
		}
		if (write(out, ring + ext.offset, ext.len) != (ssize_t)ext.len)
			return die("write");
		total += ext.len;
		ext.done = ext.len;
		if (ioctl(in, KMT_IOC_RING_NEXT, &ext) < 0)
			return die("KMT_IOC_RING_NEXT");
	}
	printf("read %llu\n", total);
	return 0;
}
