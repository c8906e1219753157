/* SPDX-License-Identifier: MIT */
/* Durations and ISO 8601 timestamps (common/timeutil.c). */
#include "../../common/timeutil.h"
#include "tap.h"

#include <errno.h>

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
	return done_testing();
}
