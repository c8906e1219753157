/* SPDX-License-Identifier: MIT */
/*
 * Durations and clocks. Durations are kept as integer milliseconds; clocks
 * as integer nanoseconds (CLOCK_MONOTONIC for scheduling, CLOCK_REALTIME for
 * the timestamps written into reports).
 */
#ifndef ACCEL_TIMEUTIL_H
#define ACCEL_TIMEUTIL_H

#include <stddef.h>
#include <stdint.h>

#define MS_PER_S 1000LL
#define NS_PER_MS 1000000LL
#define NS_PER_S 1000000000LL

/*
 * Parse a duration: "250ms", "1s", "1.5s", "2m", "1h", or a bare number of
 * seconds ("5", "0.5"). On success stores milliseconds and returns 0; on
 * failure returns -EINVAL and sets *why to a static explanation.
 */
int duration_parse(const char *s, int64_t *ms, const char **why);

/* Format milliseconds the shortest exact way: "250ms", "1s", "1.5s", "2m", "1h". */
void duration_format(int64_t ms, char *dst, size_t size);

/*
 * CLOCK_MONOTONIC in nanoseconds: every deadline, period and age in the programs is measured on it. A test
 * may define a clock_mono_ns of its own (a mock clock, e.g. the real one plus the time the test skipped):
 * the one in timeutil.c is a weak definition, so the test's replaces it when the test is linked, while
 * the programs call this one at no extra cost.
 */
int64_t clock_mono_ns(void);
int64_t clock_real_ns(void);
int64_t clock_boot_ns(void);
/* The calling thread's CPU time (user and system), nanoseconds (CLOCK_THREAD_CPUTIME_ID). */
int64_t clock_thread_cpu_ns(void);

/* "2026-11-21T05:30:00.123Z" (UTC, milliseconds) from a CLOCK_REALTIME value. */
#define ISO8601_LEN 32
void iso8601_format(int64_t real_ns, char dst[ISO8601_LEN]);
/*
 * Parse the format above (also without fraction, or with up to 9 digits); 1970 to 2262 (what 64-bit nanoseconds
 * hold). A date that does not exist (2026-02-30, 2025-02-29) is -EINVAL, never rolled over. 0 or -EINVAL.
 */
int iso8601_parse(const char *s, int64_t *real_ns);

/* Sleep for ns nanoseconds, resuming after signals unless *stop becomes set. */
void sleep_ns(int64_t ns, volatile int *stop);

#endif
