/* SPDX-License-Identifier: MIT */
/*
 * What every benchmark measures with: this process's CPU time (user and
 * system, every thread; time spent descheduled does not count) and the
 * median of its rounds. Header only: each benchmark is its own program.
 */
#ifndef ACCEL_BENCH_H
#define ACCEL_BENCH_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* CPU time of this process so far (CLOCK_PROCESS_CPUTIME_ID), in ns. */
static inline int64_t bench_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The same in µs. */
static inline double bench_cpu_us(void)
{
	return (double)bench_cpu_ns() / 1e3;
}

/* qsort's comparison of two doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of v's n values (n >= 1); v is sorted in place. */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
