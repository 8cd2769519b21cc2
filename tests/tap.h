/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tap.h - minimal TAP producer for the C unit tests, read by prove(1).
 * Header-only so that every test binary is one translation unit plus the
 * code under test.
 */
#ifndef KMT_TAP_H
#define KMT_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_run, tap_failed;

static inline void tap_result(int pass, const char *file, int line, const char *fmt, va_list ap)
{
	tap_run++;
	if (!pass)
		tap_failed++;
	printf("%sok %d - ", pass ? "" : "not ", tap_run);
	vprintf(fmt, ap);
	printf("\n");
	if (!pass)
		printf("#   failed at %s:%d\n", file, line);
	fflush(stdout);
}

static inline int tap_ok_at(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_result(pass, file, line, fmt, ap);
	va_end(ap);
	return pass;
}

static inline int tap_is_u64_at(uint64_t got, uint64_t want, const char *file, int line,
				const char *fmt, ...)
{
	va_list ap;
	int pass = got == want;

	va_start(ap, fmt);
	tap_result(pass, file, line, fmt, ap);
	va_end(ap);
	if (!pass)
		printf("#   got %" PRIu64 ", want %" PRIu64 "\n", got, want);
	return pass;
}

static inline int tap_is_str_at(const char *got, const char *want, const char *file, int line,
				const char *fmt, ...)
{
	va_list ap;
	int pass = got && want && strcmp(got, want) == 0;

	va_start(ap, fmt);
	tap_result(pass, file, line, fmt, ap);
	va_end(ap);
	if (!pass)
		printf("#   got '%s', want '%s'\n", got ? got : "(null)", want ? want : "(null)");
	return pass;
}

#define ok(cond, ...)		tap_ok_at(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_u64(g, w, ...)	tap_is_u64_at((g), (w), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(g, w, ...)	tap_is_str_at((g), (w), __FILE__, __LINE__, __VA_ARGS__)
#define diag(...)		(printf("# "), printf(__VA_ARGS__), printf("\n"))

/* Ends the test: the plan goes last, and the exit code says whether all passed. */
static inline int done_testing(void)
{
	printf("1..%d\n", tap_run);
	return tap_failed ? 1 : 0;
}

#endif /* KMT_TAP_H */
