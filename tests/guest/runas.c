// SPDX-License-Identifier: GPL-2.0-only
/*
 * runas.c - run a command under another uid in the guest; built static by build_runas (lib.sh).
 *
 * busybox in the guest has no su that works without /etc/passwd, nor setpriv --reuid.
 * Usage: runas UID COMMAND [ARG]...; exit 126 if the uid cannot be taken, 127 if COMMAND
 * cannot be run.
 */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	uid_t id;

	if (argc < 3) {
		fprintf(stderr, "usage: runas UID COMMAND [ARG]...\n");
		return 127;
	}
	id = (uid_t)strtoul(argv[1], NULL, 10);
	if (setgroups(0, NULL) || setgid(id) || setuid(id)) {
		perror("runas");
		return 126;
	}
	execvp(argv[2], argv + 2);
	perror("runas: exec");
	return 127;
}
