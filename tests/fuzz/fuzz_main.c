// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_main.c - libFuzzer entry points; FUZZ_TARGET names the target
 * function (fuzz_targets.h) this binary drives.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_targets.h"

#ifndef FUZZ_TARGET
#error "build with -DFUZZ_TARGET=fuzz_NAME"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* Made (and its removal registered) before libFuzzer forks or times anything. */
	if (!fuzz_tmpdir())
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_outcome out;

	FUZZ_TARGET(data, size, &out);
	return 0;
}
