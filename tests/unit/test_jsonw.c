/* SPDX-License-Identifier: MIT */
/*
 * common/jsonw.c's reals: at most 10 significant digits at every magnitude
 * below 2^63 (docs/report-format.md §1), each with a fraction or an
 * exponent, each reading back within half a unit of its 10th digit; from
 * 2^63 up (integer fields past int64) the value kept; and a few written out
 * exactly.
 */
#include "../../common/jsonw.h"
#include "tap.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The significant digits of the number text s: its mantissa's digits but leading and trailing zeros. */
static int significant(const char *s)
{
	char d[40];
	size_t n = 0, a = 0;

	for (; *s && *s != 'e' && *s != 'E'; s++)
		if (*s >= '0' && *s <= '9')
			d[n++] = *s;
	while (a < n && d[a] == '0')
		a++;
	while (n > a && d[n - 1] == '0')
		n--;
	return (int)(n - a);
}

static void is_text(double v, const char *want)
{
	char got[32];

	json_format_real(v, got);
	ok(!strcmp(got, want), "%.17g is written %s (got %s)", v, want, got);
}

int main(void)
{
	unsigned seed = 2026;
	int bad_digits = 0, bad_form = 0, bad_value = 0, n = 0;

	is_text(0, "0.0");
	is_text(6.25, "6.25");
	is_text(1.000397199, "1.000397199");
	is_text(-0.5, "-0.5");
	is_text(1e-7, "0.0000001");
	is_text(123456.123456789, "123456.1235");
	is_text(999.9999999999, "1000.0");
	is_text(1e6, "1000000.0");
	is_text(18014398509481985.0, "1.801439851e+16");
	is_text(1.8e16 + 2, "1.8e+16");
	is_text(9223372036854775807.0 - 1024, "9.223372037e+18");
	/* from 2^63 up, an integer field past int64: its value kept */
	is_text(9223372036854775808.0, "9.223372036854776e+18");
	is_text(18446744073709549568.0, "1.844674407370955e+19");
	is_text(-123456789012.5, "-1.23456789e+11");

	/* every magnitude from 1e-12 to 2^63, random mantissas, both signs */
	for (int e = -12; e <= 18; e++) {
		for (int k = 0; k < 200; k++) {
			char t[32];
			double v, back;

			seed = seed * 1103515245u + 12345u;
			v = (1 + (double)(seed >> 8) / (1 << 24) * 9) * pow(10, e) * (k & 1 ? -1 : 1);
			if (fabs(v) >= 9223372036854775808.0)
				v /= 10;
			json_format_real(v, t);
			back = strtod(t, NULL);
			n++;
			if (significant(t) > 10 && bad_digits++ < 3)
				printf("# %.17g: %s has %d significant digits\n", v, t, significant(t));
			if (!strpbrk(t, ".e") && bad_form++ < 3)
				printf("# %.17g: %s has neither a fraction nor an exponent\n", v, t);
			/* 10 digits: within half a unit of the 10th; fixed point's 9 decimals below 1 keep less */
			if (fabs(back - v) > (fabs(v) < 1 ? 5e-10 : 5.000001e-10 * fabs(v)) && bad_value++ < 3)
				printf("# %.17g: %s reads back as %.17g\n", v, t, back);
		}
	}
	ok(!bad_digits, "%d reals from 1e-12 to 2^63: none with more than 10 significant digits", n);
	ok(!bad_form, "each with a fraction or an exponent");
	ok(!bad_value, "each reads back within half a unit of its 10th digit");

	/* json_write_string: the writer's escapes, for writers of their own (accel-otlp's OTLP/JSON) */
	{
		static const char *const cases[][2] = {
			{ "plain", "\"plain\"" },
			{ "a \"q\" \\ b", "\"a \\\"q\\\" \\\\ b\"" },
			{ "tab\tnl\n\x01", "\"tab\\tnl\\n\\u0001\"" },
			{ "", "\"\"" },
		};
		struct buf b;

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			buf_init(&b, 1 << 10);
			is_int(json_write_string(&b, cases[i][0], strlen(cases[i][0])), 0, "json_write_string: 0");
			is_str(b.data, cases[i][1], "json_write_string: quoted and escaped as json_write does");
			buf_free(&b);
		}
		buf_init(&b, 4);
		ok(json_write_string(&b, "longer", 6) == -ENOSPC, "json_write_string past the cap: -ENOSPC");
		buf_free(&b);
	}
	return done_testing();
}
