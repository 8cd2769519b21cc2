// SPDX-License-Identifier: GPL-2.0-only
/*
 * mmaploop.c - guest workload for 46-coverage.t: maps, splits and unmaps
 * anonymous memory in a loop, which makes the kernel's maple tree allocate
 * and free its nodes in bulk (and through kfree_rcu).
 * Usage: mmaploop ROUNDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAPS 64

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	void *maps[MAPS];
	long rounds;
	char *end;

	rounds = argc > 1 ? strtol(argv[1], &end, 10) : 0;
	if (argc != 2 || *end || rounds < 1 || rounds > 100000) {
		fprintf(stderr, "usage: mmaploop ROUNDS (1..100000)\n");
		return 1;
	}
	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < MAPS; i++) {
			size_t len = (size_t)page * (1 + (i * 7 + r) % 16);

			maps[i] = mmap(NULL, len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (maps[i] == MAP_FAILED) {
				perror("mmap");
				return 1;
			}
			/* A different protection in the middle splits the area in three. */
			if (len >= 3 * (size_t)page &&
			    mprotect((char *)maps[i] + page, page, PROT_READ) < 0) {
				perror("mprotect");
				return 1;
			}
			((char *)maps[i])[0] = 1;
		}
		for (int i = 0; i < MAPS; i++) {
			size_t len = (size_t)page * (1 + (i * 7 + r) % 16);

			if (munmap(maps[i], len) < 0) {
				perror("munmap");
				return 1;
			}
		}
	}
	return 0;
}
