/* SPDX-License-Identifier: MIT */
/* Durations and ISO 8601 timestamps (common/timeutil.c). */
#include "../../common/timeutil.h"
#include "tap.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* The timestamp as iso8601_format wrote it before it wrote digits itself. */
static void ref_iso8601(int64_t real_ns, char dst[ISO8601_LEN])
{
	time_t sec = (time_t)(real_ns / NS_PER_S);
	int msec = (int)((real_ns % NS_PER_S) / NS_PER_MS);
	struct tm tm;

	gmtime_r(&sec, &tm);
	snprintf(dst, ISO8601_LEN, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, msec);
}

int main(void)
{
	static const struct {
		const char *in;
		long long ms; /* -1: must be rejected */
	} cases[] = {
		{ "250ms", 250 }, { "1s", 1000 }, { "1.5s", 1500 }, { "2m", 120000 }, { "1h", 3600000 },
		{ "5", 5000 },    { "0.5", 500 }, { "24h", 86400000 }, { "100ms", 100 }, { "0.1s", 100 },
		{ "", -1 },       { "s", -1 },    { "1x", -1 },        { "-1s", -1 },  { "1 s", -1 },
		{ "1.2.3s", -1 }, { "ms", -1 },   { ".5s", -1 },       { "1e3", -1 },  { "nan", -1 },
		{ "1sec", -1 },   { "10d", -1 },
	};
	char out[32];
	int64_t ns;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t ms = 0;
		const char *why = NULL;
		int rc = duration_parse(cases[i].in, &ms, &why);

		if (cases[i].ms < 0) {
			ok(rc == -EINVAL && why && *why, "duration \"%s\" is rejected (%s)", cases[i].in, why ? why : "");
		} else {
			is_int(rc, 0, cases[i].in);
			is_int(ms, cases[i].ms, cases[i].in);
		}
	}

	duration_format(250, out, sizeof(out));
	is_str(out, "250ms", "format 250 ms");
	duration_format(1500, out, sizeof(out));
	is_str(out, "1.5s", "format 1500 ms");
	duration_format(120000, out, sizeof(out));
	is_str(out, "2m", "format 2 min");
	duration_format(7200000, out, sizeof(out));
	is_str(out, "2h", "format 2 h");

	{
		char iso[ISO8601_LEN];

		iso8601_format(1795239000123000000LL, iso);
		is_str(iso, "2026-11-21T05:30:00.123Z", "ISO 8601 with milliseconds");
		is_int(iso8601_parse("2026-11-21T05:30:00.123Z", &ns), 0, "parse ISO 8601");
		is_int(ns, 1795239000123000000LL, "parsed value round-trips");
		is_int(iso8601_parse("2026-11-21T05:30:00Z", &ns), 0, "parse without fraction");
		is_int(iso8601_parse("2026-11-21 05:30:00Z", &ns), -EINVAL, "reject a space separator");
		is_int(iso8601_parse("2026-11-21T05:30:00.123+02:00", &ns), -EINVAL, "reject a non-UTC offset");
		/* Found by the fuzzer: a far-future year overflowed the nanoseconds. */
		is_int(iso8601_parse("4053-01-01T00:00:00.000Z", &ns), -EINVAL, "year 4053 is rejected, not overflowed");
		is_int(iso8601_parse("2262-01-01T00:00:00Z", &ns), 0, "year 2262 parses");
		is_int(iso8601_parse("2263-01-01T00:00:00Z", &ns), -EINVAL, "year 2263 is rejected");
		is_int(iso8601_parse("1969-12-31T23:59:59Z", &ns), -EINVAL, "before 1970 is rejected");
		/* Impossible dates were rolled over (02-30 read as 03-02). */
		is_int(iso8601_parse("2026-02-30T00:00:00Z", &ns), -EINVAL, "2026-02-30 is rejected, not read as March 2");
		is_int(iso8601_parse("2025-02-29T00:00:00Z", &ns), -EINVAL, "2025-02-29 (not a leap year) is rejected");
		is_int(iso8601_parse("2026-04-31T00:00:00Z", &ns), -EINVAL, "April 31 is rejected");
		is_int(iso8601_parse("2024-02-29T12:00:00Z", &ns), 0, "2024-02-29 (a leap year) parses");
		is_int(ns, 1709208000000000000LL, "2024-02-29T12:00:00Z is its own day");
		is_int(iso8601_parse("2000-02-29T00:00:00Z", &ns), 0, "2000-02-29 (divisible by 400) parses");
		is_int(iso8601_parse("2100-02-29T00:00:00Z", &ns), -EINVAL, "2100-02-29 (divisible by 100) is rejected");
		is_int(iso8601_parse("2026-12-31T23:59:59Z", &ns), 0, "December 31 parses");
	}
	{
		/*
		 * The digit-by-digit timestamp against gmtime_r and snprintf: every day
		 * from 1970 to the last one int64 nanoseconds reach (2262-04-11; leap
		 * days, 2000, 2100, 2200), at a time and millisecond that move with the
		 * day, each year's last millisecond, and the edges: the epoch, the
		 * largest value, and times before 1970 (left to gmtime_r).
		 */
		static const int64_t edges[] = { 0, 999999999, INT64_MAX, -1, -1000000, -86400LL * NS_PER_S - 1,
						 -2208988800LL * NS_PER_S };
		char got[ISO8601_LEN], want[ISO8601_LEN];
		int bad = 0;

		for (int64_t day = 0; day < INT64_MAX / NS_PER_S / 86400; day++) {
			int64_t sec = day * 86400 + (day * 7919) % 86400, t = sec * NS_PER_S + (day % 1000) * NS_PER_MS;

			iso8601_format(t, got);
			ref_iso8601(t, want);
			if (strcmp(got, want) && bad++ < 5)
				printf("# %lld ns: %s, want %s\n", (long long)t, got, want);
		}
		for (int y = 1971; y < 2262; y++) {
			struct tm tm = { .tm_year = y - 1900, .tm_mon = 0, .tm_mday = 1 };
			int64_t t = (int64_t)timegm(&tm) * NS_PER_S - NS_PER_MS;

			iso8601_format(t, got);
			ref_iso8601(t, want);
			if (strcmp(got, want) && bad++ < 10)
				printf("# %lld ns: %s, want %s\n", (long long)t, got, want);
		}
		is_int(bad, 0, "every day from 1970 to 2262 and each year's last ms written as gmtime_r and snprintf do");
		for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
			iso8601_format(edges[i], got);
			ref_iso8601(edges[i], want);
			is_str(got, want, "a timestamp at an edge written as gmtime_r and snprintf do");
		}
		iso8601_format(0, got);
		is_str(got, "1970-01-01T00:00:00.000Z", "the epoch");
		iso8601_format(951782400LL * NS_PER_S + 7 * NS_PER_MS, got);
		is_str(got, "2000-02-29T00:00:00.007Z", "2000-02-29");
		iso8601_format(INT64_MAX, got);
		is_str(got, "2262-04-11T23:47:16.854Z", "the largest time");
	}
	return done_testing();
}
