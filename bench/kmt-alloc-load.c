// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt-alloc-load.c - a userspace workload that makes the kernel allocate
 * (files, sockets, pipes), for make bench; it times itself. It also times
 * a workload of somebody else's.
 *
 * Usage: kmt-alloc-load ITERATIONS DIR
 *        kmt-alloc-load --run COMMAND [ARG...]
 *        kmt-alloc-load --write BYTES CHUNK FILE
 * Each iteration creates, writes, stats and removes a small file in DIR
 * (dentry, inode, file, page cache), opens and closes a UNIX socket pair
 * and a pipe. Prints "ns N iterations I" (CLOCK_MONOTONIC) on success.
 * --run: runs COMMAND and prints "ns N" (CLOCK_MONOTONIC, from before its
 * fork to its exit) when it exits with status 0 (the guest's busybox has
 * no clock finer than 10 ms).
 * --write: creates FILE and writes BYTES to it with write(2) calls of CHUNK
 * bytes (the last one shorter), as kmemtraced writes a drained sub-buffer,
 * then removes it; prints "ns N" for the writes alone: what the kernel
 * takes for the writes of a drain of BYTES, without the drain.
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

/* ARG as a number from 1 to max, or 0 with a message naming it as WHAT. */
static uint64_t number(const char *arg, const char *what, uint64_t max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || *end || arg[0] == '-' || v < 1 || v > max) {
		fprintf(stderr, "kmt-alloc-load: %s '%s' is not a number from 1 to %" PRIu64 "\n",
			what, arg, max);
		return 0;
	}
	return v;
}

static int write_file(const char *bytes_arg, const char *chunk_arg, const char *path)
{
	uint64_t bytes = number(bytes_arg, "BYTES", UINT64_C(1) << 34);
	size_t chunk = number(chunk_arg, "CHUNK", 1U << 26);
	uint64_t done;
	uint64_t t0, t1;
	char *buf;
	int fd;

	if (!bytes || !chunk)
		return 1;
	buf = malloc(chunk);
	if (!buf)
		return fail("malloc");
	/* Not zeros, and touched now: the timed loop copies, it does not fault. */
	memset(buf, 0x5a, chunk);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		free(buf);
		return fail(path);
	}
	t0 = now_ns();
	for (done = 0; done < bytes;) {
		size_t n = bytes - done < chunk ? (size_t)(bytes - done) : chunk;
		ssize_t w = write(fd, buf, n);

		if (w <= 0) {
			close(fd);
			unlink(path);
			free(buf);
			return fail("write");
		}
		done += (uint64_t)w;
	}
	t1 = now_ns();
	close(fd);
	free(buf);
	if (unlink(path) < 0)
		return fail("unlink");
	printf("ns %" PRIu64 "\n", t1 - t0);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n, i;
	char path[4096];
	uint64_t t0;
	int ret;

	if (argc >= 3 && !strcmp(argv[1], "--run"))
		return run(argv + 2);
	if (argc == 5 && !strcmp(argv[1], "--write"))
		return write_file(argv[2], argv[3], argv[4]);
	if (argc != 3) {
		fprintf(stderr, "usage: kmt-alloc-load ITERATIONS DIR\n"
			"       kmt-alloc-load --run COMMAND [ARG...]\n"
			"       kmt-alloc-load --write BYTES CHUNK FILE\n");
		return 1;
	}
	n = (unsigned long)number(argv[1], "ITERATIONS", 100000000);
	if (!n)
		return 1;
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
