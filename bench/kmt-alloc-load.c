// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt-alloc-load.c - a userspace workload that makes the kernel allocate
 * (files, sockets, pipes), for make bench; it times itself. It also times
 * a workload of somebody else's.
 *
 * Usage: kmt-alloc-load ITERATIONS DIR
 *        kmt-alloc-load --run COMMAND [ARG...]
 * Each iteration creates, writes, stats and removes a small file in DIR
 * (dentry, inode, file, page cache), opens and closes a UNIX socket pair
 * and a pipe. Prints "ns N iterations I" (CLOCK_MONOTONIC) on success.
 * --run: runs COMMAND and prints "ns N" (CLOCK_MONOTONIC, from before its
 * fork to its exit) when it exits with status 0 (the guest's busybox has
 * no clock finer than 10 ms).
 * Exit status: 0 ok, 1 usage error, 3 a system call failed (--run: COMMAND
 * could not run or did not exit 0).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int fail(const char *what)
{
	fprintf(stderr, "kmt-alloc-load: %s: %s\n", what, strerror(errno));
	return 3;
}

static int one(const char *path)
{
	static const char data[64] = "kmemtrace bench";
	struct stat st;
	int fd, sv[2], p[2];

	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return fail(path);
	if (write(fd, data, sizeof(data)) != (ssize_t)sizeof(data)) {
		close(fd);
		return fail("write");
	}
	close(fd);
	if (stat(path, &st) < 0)
		return fail("stat");
	if (unlink(path) < 0)
		return fail("unlink");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return fail("socketpair");
	close(sv[0]);
	close(sv[1]);
	if (pipe(p) < 0)
		return fail("pipe");
	close(p[0]);
	close(p[1]);
	return 0;
}

static int run(char **argv)
{
	uint64_t t0 = now_ns();
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return fail("fork");
	if (!pid) {
		execvp(argv[0], argv);
		fprintf(stderr, "kmt-alloc-load: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return fail("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "kmt-alloc-load: %s: %s %d\n", argv[0],
			WIFEXITED(status) ? "exit status" : "killed by signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return 3;
	}
	printf("ns %" PRIu64 "\n", now_ns() - t0);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n, i;
	char path[4096];
	uint64_t t0;
	char *end;
	int ret;

	if (argc >= 3 && !strcmp(argv[1], "--run"))
		return run(argv + 2);
	if (argc != 3) {
		fprintf(stderr, "usage: kmt-alloc-load ITERATIONS DIR\n"
			"       kmt-alloc-load --run COMMAND [ARG...]\n");
		return 1;
	}
	errno = 0;
	n = strtoul(argv[1], &end, 10);
	if (errno || *end || argv[1][0] == '-' || n < 1 || n > 100000000) {
		fprintf(stderr, "kmt-alloc-load: ITERATIONS '%s' is not a number from 1 to 100000000\n",
			argv[1]);
		return 1;
	}
	if (snprintf(path, sizeof(path), "%s/kmt-load.%ld", argv[2], (long)getpid()) >=
	    (int)sizeof(path)) {
		fprintf(stderr, "kmt-alloc-load: DIR too long\n");
		return 1;
	}
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		ret = one(path);
		if (ret)
			return ret;
	}
	printf("ns %" PRIu64 " iterations %lu\n", now_ns() - t0, n);
	return 0;
}
