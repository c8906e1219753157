/* SPDX-License-Identifier: MIT */
/*
 * A minimal TAP producer for unit tests: each check prints "ok N - name"
 * or "not ok N - name" with the expected and actual values, and
 * done_testing() prints the plan and returns the exit status.
 */
#ifndef ACCEL_TAP_H
#define ACCEL_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

static inline int tap_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		tap_failed++;
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok(!!(cond), __VA_ARGS__)

#define is_int(got, want, name)                                                                   \
	do {                                                                                      \
		long long g_ = (long long)(got), w_ = (long long)(want);                          \
		if (!tap_ok(g_ == w_, "%s", name))                                                \
			fprintf(stderr, "#   got:      %lld\n#   expected: %lld\n", g_, w_);          \
	} while (0)

#define is_str(got, want, name)                                                                   \
	do {                                                                                      \
		const char *g_ = (got), *w_ = (want);                                             \
		if (!tap_ok(g_ && w_ ? strcmp(g_, w_) == 0 : g_ == w_, "%s", name))               \
			fprintf(stderr, "#   got:      %s\n#   expected: %s\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
	} while (0)

#define is_double(got, want, eps, name)                                                           \
	do {                                                                                      \
		double g_ = (got), w_ = (want);                                                   \
		if (!tap_ok(fabs(g_ - w_) <= (eps), "%s", name))                                  \
			fprintf(stderr, "#   got:      %.17g\n#   expected: %.17g\n", g_, w_);        \
	} while (0)

static inline int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
