/* SPDX-License-Identifier: MIT */
/* Duration parsing and clock helpers; see timeutil.h. */

#include "timeutil.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int duration_parse(const char *s, int64_t *ms, const char **why)
{
	static const struct {
		const char *suffix;
		double ms;
	} units[] = {
		{ "ms", 1.0 }, { "s", 1e3 }, { "m", 60e3 }, { "h", 3600e3 }, { "", 1e3 },
	};
	const char *p = s;
	char *end;
	double v;
	size_t i;

	while (isdigit((unsigned char)*p) || *p == '.')
		p++;
	if (p == s || !isdigit((unsigned char)s[0]) || strchr(s, ' ')) {
		*why = "expected a number followed by ms, s, m or h (e.g. \"250ms\", \"1.5s\", \"2m\")";
		return -EINVAL;
	}
	errno = 0;
	v = strtod(s, &end);
	if (end != p || errno || !isfinite(v)) {
		*why = "not a valid number";
		return -EINVAL;
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].suffix) == 0) {
			double r = v * units[i].ms;

			if (r > 1e15) {
				*why = "too large";
				return -EINVAL;
			}
			/* Sub-millisecond precision is not kept: round to the nearest ms. */
			*ms = (int64_t)llround(r);
			return 0;
		}
	}
	*why = "unknown unit; use ms, s, m or h";
	return -EINVAL;
}

void duration_format(int64_t ms, char *dst, size_t size)
{
	if (ms % 3600000 == 0 && ms > 0)
		snprintf(dst, size, "%lldh", (long long)(ms / 3600000));
	else if (ms % 60000 == 0 && ms > 0)
		snprintf(dst, size, "%lldm", (long long)(ms / 60000));
	else if (ms % 1000 == 0)
		snprintf(dst, size, "%llds", (long long)(ms / 1000));
	else if (ms < 1000)
		snprintf(dst, size, "%lldms", (long long)ms);
	else
		snprintf(dst, size, "%g%s", (double)ms / 1e3, "s");
}

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* Weak: a test's own definition (a mock clock) replaces it; see timeutil.h. */
__attribute__((weak)) int64_t clock_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

int64_t clock_real_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

int64_t clock_boot_ns(void)
{
	return clock_ns(CLOCK_BOOTTIME);
}

int64_t clock_thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* v (0 to 10^width - 1) as width decimal digits at p. */
static char *put_digits(char *p, unsigned v, int width)
{
	for (int i = width - 1; i >= 0; i--) {
		p[i] = (char)('0' + v % 10);
		v /= 10;
	}
	return p + width;
}

/*
 * The civil date (proleptic Gregorian) of day days since 1970-01-01, days >= 0
 * (Howard Hinnant's days_from_civil inverted: 400-year eras of 146097 days,
 * years counted from March so that February's leap day ends the year).
 */
static void civil_from_days(int64_t days, unsigned *y, unsigned *m, unsigned *d)
{
	int64_t z = days + 719468, era = z / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;

	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (unsigned)(yoe + era * 400) + (*m <= 2);
}

/*
 * Every report's timestamp: written digit by digit from 1970 on (to 2262,
 * where int64 nanoseconds end; snprintf's formatting was a twentieth of a
 * small report's cycle); gmtime_r and snprintf, with the same format,
 * before 1970.
 */
void iso8601_format(int64_t real_ns, char dst[ISO8601_LEN])
{
	time_t sec = (time_t)(real_ns / NS_PER_S);
	int msec = (int)((real_ns % NS_PER_S) / NS_PER_MS);
	struct tm tm;

	if (real_ns >= 0) {
		unsigned y, m, d, s = (unsigned)(sec % 86400);
		char *p = dst;

		civil_from_days(sec / 86400, &y, &m, &d);
		p = put_digits(p, y, 4);
		*p++ = '-';
		p = put_digits(p, m, 2);
		*p++ = '-';
		p = put_digits(p, d, 2);
		*p++ = 'T';
		p = put_digits(p, s / 3600, 2);
		*p++ = ':';
		p = put_digits(p, s / 60 % 60, 2);
		*p++ = ':';
		p = put_digits(p, s % 60, 2);
		*p++ = '.';
		p = put_digits(p, (unsigned)msec, 3);
		*p++ = 'Z';
		*p = '\0';
		return;
	}
	gmtime_r(&sec, &tm);
	snprintf(dst, ISO8601_LEN, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, msec);
}

/* Days in month mon (1-12) of year y, proleptic Gregorian. */
static int days_in_month(int y, int mon)
{
	static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return mon == 2 && leap ? 29 : days[mon - 1];
}

int iso8601_parse(const char *s, int64_t *real_ns)
{
	struct tm tm;
	const char *p;
	int64_t frac = 0, scale = NS_PER_S;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		return -EINVAL;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		while (isdigit((unsigned char)*p)) {
			if (scale > 1) {
				scale /= 10;
				frac += (*p - '0') * scale;
			}
			p++;
		}
	}
	if (strcmp(p, "Z") != 0 && strcmp(p, "+00:00") != 0)
		return -EINVAL;
	/* strptime takes any day 1-31 and timegm would roll 2026-02-30 over into March: refuse it. */
	if (tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday > days_in_month(tm.tm_year + 1900, tm.tm_mon + 1) ||
	    tm.tm_sec > 60)
		return -EINVAL;
	t = timegm(&tm);
	/* 64-bit nanoseconds since 1970 end in April 2262: refuse what would overflow. */
	if (t == (time_t)-1 || t < 0 || t >= INT64_MAX / NS_PER_S)
		return -EINVAL;
	*real_ns = (int64_t)t * NS_PER_S + frac;
	return 0;
}

void sleep_ns(int64_t ns, volatile int *stop)
{
	struct timespec ts = { .tv_sec = ns / NS_PER_S, .tv_nsec = ns % NS_PER_S };

	if (ns <= 0)
		return;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		if (stop && *stop)
			return;
}
