// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmt-peakrss.c - runs a command and reads its peak resident set (VmHWM) at the instant it
 * exits, for make bench's memory part (bench/guest-memory.sh).
 *
 * Usage: kmt-peakrss OUTFILE COMMAND [ARG]...
 * COMMAND's main thread runs under ptrace with PTRACE_O_TRACEEXIT: it stops on its way out,
 * before the kernel releases its memory, and the Vm and Rss lines of /proc/PID/status are
 * copied to OUTFILE then. VmHWM is the kernel's own high-water mark of the process's resident
 * set, so the figure is exact, with no sampling interval; unlike wait4's ru_maxrss it leaves
 * out the process's children. Only the main thread is traced (not its other threads nor its
 * children); every signal it receives is passed on unchanged.
 * Exit status: COMMAND's (128+N when killed by signal N); 1 usage error; 3 system error.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void copy_status(pid_t pid, const char *path)
{
	char name[64], line[256];
	FILE *in, *out;

	snprintf(name, sizeof(name), "/proc/%d/status", (int)pid);
	in = fopen(name, "r");
	out = fopen(path, "w");
	if (!in || !out) {
		fprintf(stderr, "kmt-peakrss: %s: %s\n", in ? path : name, strerror(errno));
		exit(3);
	}
	while (fgets(line, sizeof(line), in))
		if (!strncmp(line, "Vm", 2) || !strncmp(line, "Rss", 3) ||
		    !strncmp(line, "Threads:", 8))
			fputs(line, out);
	fclose(in);
	if (fclose(out)) {
		fprintf(stderr, "kmt-peakrss: %s: %s\n", path, strerror(errno));
		exit(3);
	}
}

int main(int argc, char **argv)
{
	int st, seen_exit = 0;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: kmt-peakrss OUTFILE COMMAND [ARG]...\n");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("kmt-peakrss: fork");
		return 3;
	}
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0) {
			perror("kmt-peakrss: PTRACE_TRACEME");
			_exit(3);
		}
		raise(SIGSTOP);
		execvp(argv[2], argv + 2);
		fprintf(stderr, "kmt-peakrss: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		fprintf(stderr, "kmt-peakrss: the child did not stop\n");
		return 3;
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL)) < 0 ||
	    ptrace(PTRACE_CONT, pid, NULL, NULL) < 0) {
		perror("kmt-peakrss: ptrace");
		return 3;
	}
	for (;;) {
		int sig = 0;

		if (waitpid(pid, &st, 0) < 0) {
			if (errno == EINTR)
				continue;
			perror("kmt-peakrss: waitpid");
			return 3;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st))
			break;
		if (!WIFSTOPPED(st))
			continue;
		if (st >> 16 == PTRACE_EVENT_EXIT) {
			copy_status(pid, argv[1]);
			seen_exit = 1;
		} else if (!(st >> 16)) {
			/* A signal on its way to the command: deliver it. */
			sig = WSTOPSIG(st);
		}
		ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
	}
	if (!seen_exit)
		fprintf(stderr, "kmt-peakrss: %s exited without an exit stop\n", argv[2]);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}
