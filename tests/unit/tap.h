/* SPDX-License-Identifier: MIT */
/*
 * A minimal TAP producer for unit tests: each check prints "ok N - name"
 * or "not ok N - name" with the expected and actual values, and
 * done_testing() prints the plan and returns the exit status.
 *
 * Before main, the environment is cleaned as tests/helpers/clean_env.sh cleans a script's (keep the two
 * lists alike): a binary run alone sees none of the caller's AWS_*, OTEL_*, KUBERNETES_*, POD_*, ECS_* and
 * the like, and no ~/.aws file; a test that needs one sets it.
 */
#ifndef ACCEL_TAP_H
#define ACCEL_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int tap_n, tap_failed;

/* Whether the variable KEY (the text before '=') is one a test must not inherit. */
static inline int tap_env_dirty(const char *key, size_t n)
{
	static const char *const prefix[] = {"AWS_", "ECS_", "POD_", "KUBERNETES_", "OTEL_", "ACCEL_NVML_",
					     "FAKE_NVML_", "FAIL_WRITE_", "ACCEL_CSV_NOW"};
	static const char *const name[] = {"KUBE_NODE_NAME", "NODE_NAME", "ACCEL_CLOUDWATCH_NOW", "CW_CHECK_NOW",
					   "NO_COLOR", "COLUMNS"};
	size_t k;

	for (k = 0; k < sizeof(prefix) / sizeof(prefix[0]); k++)
		if (n >= strlen(prefix[k]) && !strncmp(key, prefix[k], strlen(prefix[k])))
			return 1;
	for (k = 0; k < sizeof(name) / sizeof(name[0]); k++)
		if (n == strlen(name[k]) && !strncmp(key, name[k], n))
			return 1;
	return 0;
}

/* Unsets each variable tap_env_dirty names, then points the AWS shared files at a path that does not
 * exist. Runs before main. */
static void tap_clean_env(void) __attribute__((constructor));
static void tap_clean_env(void)
{
	char key[256];
	size_t i, n;

	for (i = 0; environ && environ[i];) {
		n = strcspn(environ[i], "=");
		if (n == 0 || n >= sizeof(key) || !tap_env_dirty(environ[i], n)) {
			i++;
			continue;
		}
		memcpy(key, environ[i], n);
		key[n] = '\0';
		unsetenv(key); /* moves the later entries down: look at index i again */
	}
	setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/accel-test/aws-credentials", 1);
	setenv("AWS_CONFIG_FILE", "/nonexistent/accel-test/aws-config", 1);
}

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
