/* SPDX-License-Identifier: MIT */
/*
 * PutMetricData bodies (sinks/cloudwatch/cloudwatch_query.c): Python's float repr,
 * botocore's timestamps, form encoding, limits per request, error documents.
 */
#include "../../sinks/cloudwatch/cloudwatch_query.h"
#include "../../sinks/cloudwatch/cloudwatch_queue.h"
#include "tap.h"

#include <stdlib.h>

static struct cw_series *series(const char *name, const char *unit, const char *dn, const char *dv)
{
	struct cw_point p = { .name = name, .unit = unit, .ndims = dn ? 1 : 0 };

	if (dn)
		p.dims[0] = (struct cw_dim){ dn, dv };
	return cw_series_new(&p);
}

int main(void)
{
	/* What Python 3 prints for repr(float(x)): botocore writes doubles that way. */
	static const struct {
		double v;
		const char *want;
	} dbl[] = {
		{ 0.0, "0.0" },
		{ -0.0, "-0.0" },
		{ 1.0, "1.0" },
		{ 62.41, "62.41" },
		{ 0.1, "0.1" },
		{ 0.30000000000000004, "0.30000000000000004" },
		{ 1e-05, "1e-05" },
		{ 1.5e-05, "1.5e-05" },
		{ 0.0001, "0.0001" },
		{ 0.00012345, "0.00012345" },
		{ 100.0, "100.0" },
		{ 123.456, "123.456" },
		{ 1e16, "1e+16" },
		{ 1234567890123456.0, "1234567890123456.0" },
		{ 123456789012345678.0, "1.2345678901234568e+17" },
		{ 1e22, "1e+22" },
		/* Past long long's range: no cast (the fuzzer found 1.86556e+89 cast, undefined behaviour). */
		{ 1.86556e+89, "1.86556e+89" },
		{ -1e19, "-1e+19" },
		{ 9223372036854775808.0, "9.223372036854776e+18" },
		{ 1e300, "1e+300" },
		{ 2.5e-300, "2.5e-300" },
		{ 5e-324, "5e-324" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ -7e15, "-7000000000000000.0" },
		{ 16106127360.0, "16106127360.0" },
		{ 0.003493427, "0.003493427" },
	};
	char out[CW_DOUBLE_LEN], ts[CW_TS_LEN];
	struct buf b;
	struct cw_body_opts o = { "NS", 60, CW_MAX_BODY, CW_MAX_DATUMS };
	struct cw_series *s1, *s2;
	struct cw_datum d[5];
	size_t members[8], nm, next;
	unsigned char dead[5] = { 0, 1, 0, 0, 0 };
	struct cw_error e;
	char *enc;

	for (size_t i = 0; i < sizeof(dbl) / sizeof(dbl[0]); i++) {
		cw_format_double(dbl[i].v, out);
		ok(!strcmp(out, dbl[i].want), "repr(%.17g) is %s (got %s)", dbl[i].v, dbl[i].want, out);
	}

	cw_format_ts(0, ts);
	is_str(ts, "1970-01-01T00:00:00Z", "epoch, no fraction");
	cw_format_ts(1795219200123LL, ts);
	is_str(ts, "2026-11-21T00:00:00.123000Z", "milliseconds as botocore's microseconds");
	cw_format_ts(1795219200001LL, ts);
	is_str(ts, "2026-11-21T00:00:00.001000Z", "one millisecond");

	enc = cw_form_encode_dup("a b&c/d~e_f.g-h:\xc3\xbc=+%");
	is_str(enc, "a+b%26c%2Fd~e_f.g-h%3A%C3%BC%3D%2B%25", "form encoding is quote_plus");
	free(enc);

	s1 = series("CpuUsage", "Percent", "Host", "web 1");
	s2 = series("Mem", "Bytes", NULL, NULL);
	s1->refs = s2->refs = 1;
	for (int i = 0; i < 5; i++)
		d[i] = (struct cw_datum){ i % 2 ? s2 : s1, i + 0.5, 1795219200000LL + i };

	buf_init(&b, 1 << 20);
	next = cw_body_build(&b, &o, d, 0, 1, NULL, members, &nm);
	is_str(b.data,
	       "Action=PutMetricData&Version=2010-08-01&Namespace=NS&MetricData.member.1.MetricName=CpuUsage"
	       "&MetricData.member.1.Dimensions.member.1.Name=Host&MetricData.member.1.Dimensions.member.1.Value=web+1"
	       "&MetricData.member.1.Timestamp=2026-11-21T00%3A00%3A00Z&MetricData.member.1.Value=0.5"
	       "&MetricData.member.1.Unit=Percent",
	       "one datum: botocore's body, members in the model's order");
	is_int(next, 1, "consumed it");
	/* An exponent's "+" is form-encoded (the cloudwatch fuzzer found "1.8e+50" read back as "1.8e 50"). */
	d[4].value = 1.8e50;
	cw_body_build(&b, &o, d + 4, 0, 1, NULL, members, &nm);
	ok(strstr(b.data, "&MetricData.member.1.Value=1.8e%2B50&") != NULL, "1.8e+50 goes out as 1.8e%%2B50");
	d[4].value = 4.5;

	o.storage_resolution = 1;
	o.max_datums = 2;
	next = cw_body_build(&b, &o, d, 0, 5, dead, members, &nm);
	is_int(nm, 2, "max_datums caps the members");
	is_int(members[0], 0, "member 1 is datum 0");
	is_int(members[1], 2, "member 2 skips the dead datum 1");
	is_int(next, 3, "stops after datum 2");
	ok(strstr(b.data, "&MetricData.member.2.StorageResolution=1") != NULL, "StorageResolution=1 written");
	ok(strstr(b.data, "member.3") == NULL, "no third member");

	o.max_datums = CW_MAX_DATUMS;
	o.max_bytes = 400;
	next = cw_body_build(&b, &o, d, 0, 5, NULL, members, &nm);
	ok(b.len <= 400 && nm >= 1 && nm < 5, "max_bytes caps the body (%zu bytes, %zu members)", b.len, nm);
	is_int(next, nm, "and the next request starts at the first datum left out");
	buf_free(&b);

	{
		const char *x = "<ErrorResponse xmlns=\"http://monitoring.amazonaws.com/doc/2010-08-01/\">\n  <Error>\n"
				"    <Type>Sender</Type>\n    <Code>InvalidParameterValue</Code>\n"
				"    <Message>The value NaN &amp; more for parameter MetricData.member.7.Value is "
				"invalid.</Message>\n  </Error>\n  <RequestId>x</RequestId>\n</ErrorResponse>\n";

		cw_parse_error(x, strlen(x), &e);
		is_str(e.code, "InvalidParameterValue", "error Code");
		is_str(e.message, "The value NaN & more for parameter MetricData.member.7.Value is invalid.",
		       "error Message, unescaped");
		is_int(e.member, 7, "the member it names");
		cw_parse_error("<html>502</html>", 16, &e);
		ok(!e.code[0] && !e.message[0] && !e.member, "not an error document: empty");
	}
	cw_series_free(s1);
	cw_series_free(s2);
	return done_testing();
}
