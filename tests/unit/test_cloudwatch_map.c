/* SPDX-License-Identifier: MIT */
/*
 * Samples -> CloudWatch datums (sinks/cloudwatch/cloudwatch_map.c): names, units and
 * dimensions on the neuron-monitor 2.x fixture, --dimensions, value and
 * timestamp checks, and the fallback for a family the table does not know.
 */
#include "../../common/samples.h"
#include "../../sinks/cloudwatch/cloudwatch_map.h"
#include "../../sinks/cloudwatch/cloudwatch_query.h"
#include "tap.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define NOW 1795219200000LL /* 2026-11-21T00:00:00Z */

/* Each datum of line 1 as "Name{D=v,...} value Unit". */
struct coll {
	struct cw_map_opts *o;
	char lines[512][256];
	size_t n, skipped;
};

static void on_sample(const struct sample *s, void *ud)
{
	struct coll *c = ud;
	struct cw_point p;
	struct cw_scratch sc;
	char *l;
	size_t k;

	if (cw_map_sample(c->o, s, NOW, &p, &sc) != CW_OK) {
		c->skipped++;
		return;
	}
	if (c->n == 512)
		return;
	l = c->lines[c->n++];
	k = (size_t)snprintf(l, 256, "%s{", p.name);
	for (size_t i = 0; i < p.ndims; i++)
		k += (size_t)snprintf(l + k, 256 - k, "%s%s=%s", i ? "," : "", p.dims[i].name, p.dims[i].value);
	snprintf(l + k, 256 - k, "} %.10g %s", p.value, p.unit);
}

static int has(const struct coll *c, const char *line)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->lines[i], line))
			return 1;
	return 0;
}

static int has_prefix(const struct coll *c, const char *pfx)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strncmp(c->lines[i], pfx, strlen(pfx)))
			return 1;
	return 0;
}

static void map_line(const char *path, struct coll *c)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	json_error_t je;
	json_t *r;
	struct map_cb cb = { on_sample, NULL, NULL, c };

	if (!f || getline(&line, &cap, f) < 0) {
		ok(0, "read %s", path);
		return;
	}
	fclose(f);
	r = json_loads(line, 0, &je);
	free(line);
	map_report(r, NOW, &cb);
	json_decref(r);
}

int main(void)
{
	static struct coll c;
	struct cw_map_opts o;
	char spec[128], err[256];
	const char *name, *unit;
	const char *I = "InstanceId=i-0a1b2c3d4e5f60718,InstanceType=inf2.xlarge";
	char want[256];

	cw_map_opts_init(&o, "myhost");
	c.o = &o;
	map_line("tests/fixtures/streams/neuron-monitor-2x.jsonl", &c);
	ok(c.n > 50, "line 1 gives %zu datums", c.n);
#define HAS(fmt, ...)                                          \
	do {                                                   \
		snprintf(want, sizeof(want), fmt, __VA_ARGS__); \
		ok(has(&c, want), "%s", want);                  \
	} while (0)
	HAS("NeuronCoreUtilization{%s,RuntimeTag=my_app_1,NeuronCore=0} 62.41 Percent", I);
	HAS("NeuronRuntimeVCpuUsage{%s,RuntimeTag=my_app_1,UsageType=user} 42.01 Percent", I);
	HAS("NeuronRuntimeMemoryUsed{%s,RuntimeTag=my_app_1,MemoryLocation=host} 6999188352 Bytes", I);
	HAS("NeuronCoreMemoryUsageConstants{%s,RuntimeTag=my_app_1,NeuronCore=0} 61766864 Bytes", I);
	HAS("ExecutionStatus{%s,RuntimeTag=my_app_1,StatusType=completed} 118 Count", I);
	HAS("ExecutionErrors{%s,RuntimeTag=my_app_1,ErrorType=generic} 0 Count", I);
	HAS("ExecutionLatencyP50{%s,RuntimeTag=my_app_1} 0.003493427 Seconds", I);
	HAS("ExecutionLatencyP100{%s,RuntimeTag=my_app_1} 0.005358613 Seconds", I);
	HAS("SystemVCpuCount{%s} 2 Count", I);
	ok(has_prefix(&c, "SystemMemoryTotal{InstanceId=i-0a1b2c3d4e5f60718,InstanceType=inf2.xlarge} "),
	   "system memory: instance dimensions only");
	ok(has_prefix(&c, "HardwareEccEvents{InstanceId=i-0a1b2c3d4e5f60718,InstanceType=inf2.xlarge,NeuronDevice=0,"
			  "EventType=mem_ecc_corrected} "),
	   "ECC events per NeuronDevice and EventType");
	ok(!has_prefix(&c, "InstanceInfo") && !has_prefix(&c, "NeuronHardwareInfo"), "info gauges are not sent");
	ok(c.skipped == 2, "exactly the two info samples skipped (%zu)", c.skipped);

	/* --dimensions */
	snprintf(spec, sizeof(spec), "InstanceId,Host,Pid,Cluster=blue");
	is_int(cw_map_parse_dimensions(spec, &o, err, sizeof(err)), 0, "InstanceId,Host,Pid,Cluster=blue parses");
	ok(!o.auto_dims && o.dims == (CW_DIM_INSTANCE_ID | CW_DIM_HOST | CW_DIM_PID) && o.nstatic == 1,
	   "flags and one static dimension");
	c.n = c.skipped = 0;
	map_line("tests/fixtures/streams/neuron-monitor-2x.jsonl", &c);
	HAS("SystemVCpuCount{InstanceId=i-0a1b2c3d4e5f60718,Host=myhost,Cluster=blue} 2 Count%s", "");
	snprintf(spec, sizeof(spec), "Bogus");
	is_int(cw_map_parse_dimensions(spec, &o, err, sizeof(err)), -EINVAL, "an unknown dimension is refused");
	ok(strstr(err, "unknown \"Bogus\"") != NULL, "saying which: %s", err);
	snprintf(spec, sizeof(spec), "none");
	cw_map_parse_dimensions(spec, &o, err, sizeof(err));
	c.n = c.skipped = 0;
	map_line("tests/fixtures/streams/neuron-monitor-2x.jsonl", &c);
	HAS("SystemVCpuCount{} 2 Count%s", "");

	/* A histogram family's sample (latency_histograms) is not sent: no datum, no bad value. */
	{
		struct family f = { "accel_model_request_duration_seconds", "", METRIC_HISTOGRAM, "seconds" };
		static const double le[] = { 0.1, 1 }, counts[] = { 1, 2, 0 };
		struct sample_hist h = { 2, le, counts, 1.5, 3 };
		struct sample s = { .fam = &f, .group = "execution_stats", .entity = "srv", .value = 3, .ts_ms = NOW,
				    .hist = &h };
		struct cw_point p;
		struct cw_scratch sc;

		cw_map_opts_init(&o, "myhost");
		is_int(cw_map_sample(&o, &s, NOW, &p, &sc), CW_SKIP, "a histogram family is skipped");
		f.type = METRIC_COUNTER;
		s.hist = NULL;
		is_int(cw_map_sample(&o, &s, NOW, &p, &sc), CW_OK, "the same as a counter maps (the skip is the type's)");
	}

	/* Not on EC2: Host instead of InstanceId/InstanceType. */
	{
		struct family f = { "system_memory_used_bytes", "", METRIC_GAUGE, "bytes" };
		struct sample s = { .fam = &f, .group = "memory_info", .entity = "system", .value = 5, .ts_ms = NOW };
		struct cw_point p;
		struct cw_scratch sc;

		cw_map_opts_init(&o, "myhost");
		s.labels[0] = (struct label){ "instance_id", "" };
		s.labels[1] = (struct label){ "instance_type", "" };
		s.nlabels = s.ninstance = 2;
		is_int(cw_map_sample(&o, &s, NOW, &p, &sc), CW_OK, "a gauge maps");
		ok(p.ndims == 1 && !strcmp(p.dims[0].name, "Host") && !strcmp(p.dims[0].value, "myhost"),
		   "off EC2 the dimension is Host");
		s.value = 1e300;
		is_int(cw_map_sample(&o, &s, NOW, &p, &sc), CW_BAD_VALUE, "1e300 is a bad value");
		/* Ratios were rounded to 15 significant digits; now the percent read, to the last bit. */
		{
			static const double pcts[] = { 3.96, 62.41, 0.01, 100, 12.345678901234567, 33.333333333333336,
						       1e-100, 99.99999999999999 };
			int all = 1;

			f.unit = "ratio";
			for (size_t k = 0; k < sizeof(pcts) / sizeof(pcts[0]); k++) {
				s.value = pcts[k] / 100.0;
				if (cw_map_sample(&o, &s, NOW, &p, &sc) != CW_OK || p.value / 100.0 != s.value) {
					fprintf(stderr, "# ratio %.17g: sent %.17g, which does not read back\n", s.value,
						p.value);
					all = 0;
				}
			}
			ok(all, "every ratio goes out as a percent that reads back as the same ratio");
			s.value = 3.96 / 100.0;
			cw_map_sample(&o, &s, NOW, &p, &sc);
			ok(p.value == 3.96, "0.039599999999999996 goes out as 3.96 (%.17g)", p.value);
			s.value = 12.345678901234567 / 100.0;
			cw_map_sample(&o, &s, NOW, &p, &sc);
			ok(p.value == 12.345678901234567, "17 significant digits are kept (%.17g)", p.value);
			f.unit = "bytes";
		}
		/* Values at the edges of int64 and double go out as they are, or not at all. */
		{
			static const double edge[] = { 9223372036854775808.0, 18446744073709551615.0, 1e19 };
			char txt[CW_DOUBLE_LEN];
			int all = 1;

			for (size_t k = 0; k < sizeof(edge) / sizeof(edge[0]); k++) {
				s.value = edge[k];
				if (cw_map_sample(&o, &s, NOW, &p, &sc) != CW_OK || p.value != edge[k])
					all = 0;
				cw_format_double(p.value, txt);
				if (strtod(txt, NULL) != edge[k])
					all = 0;
			}
			ok(all, "2^63, 2^64-1 and 1e19 bytes go out exactly");
			s.value = 1e308;
			is_int(cw_map_sample(&o, &s, NOW, &p, &sc), CW_BAD_VALUE, "1e308 is past what CloudWatch stores: bad");
			f.unit = "ratio";
			s.value = 1.7e308;
			is_int(cw_map_sample(&o, &s, NOW, &p, &sc), CW_BAD_VALUE, "a ratio whose percent overflows: bad, not inf");
			f.unit = "bytes";
			s.value = 1;
		}
		s.value = 1;
		s.ts_ms = NOW - 15LL * 86400 * 1000;
		is_int(cw_map_sample(&o, &s, NOW, &p, &sc), CW_TOO_OLD, "15 days old");
		s.ts_ms = NOW + 3LL * 3600 * 1000;
		is_int(cw_map_sample(&o, &s, NOW, &p, &sc), CW_TOO_NEW, "3 hours ahead");
		s.ts_ms = NOW - 13LL * 86400 * 1000;
		is_int(cw_map_sample(&o, &s, NOW, &p, &sc), CW_OK, "13 days old is fine");
		s.labels[2] = (struct label){ "runtime_tag", "   " };
		s.labels[3] = (struct label){ "weird_label-x", "caf\xc3\xa9\x01" };
		s.nlabels = 4;
		is_int(cw_map_sample(&o, &s, NOW, &p, &sc), CW_OK, "odd labels map");
		ok(p.ndims == 2 && !strcmp(p.dims[1].name, "WeirdLabelX") && !strcmp(p.dims[1].value, "caf??"),
		   "a blank value is left out; an unknown label is CamelCased; non-ASCII becomes '?' (%s=%s)",
		   p.ndims > 1 ? p.dims[1].name : "", p.ndims > 1 ? p.dims[1].value : "");
	}

	/* Values */
	ok(cw_value_ok(0) == 0 && cw_value_ok(-1e100) == 0 && cw_value_ok(0x1p360) == 0, "0, -1e100, 2^360 are fine");
	ok(cw_value_ok(0x1p361) && cw_value_ok(-0x1p361) && cw_value_ok(1e-200) && cw_value_ok(NAN) &&
	       cw_value_ok(INFINITY),
	   "2^361, -2^361, 1e-200, NaN, Inf are not");

	/* A family the table does not know. */
	{
		char fbuf[CW_MAX_NAME + 1];
		struct family f = { "device_power_draw_seconds_total", "", METRIC_COUNTER, "seconds" };
		struct family g = { "device_temperature", "", METRIC_GAUGE, "" };

		cw_map_family(&f, &name, &unit, fbuf);
		is_str(name, "DevicePowerDrawSeconds", "unknown family: CamelCase, one unit suffix dropped");
		is_str(unit, "Seconds", "its unit");
		struct family h = { "accelerator_info", "", METRIC_GAUGE, "" };

		cw_map_family(&g, &name, &unit, fbuf);
		is_str(name, "DeviceTemperature", "no unit suffix");
		is_str(unit, "None", "unit None");
		cw_map_family(&h, &name, &unit, fbuf);
		is_str(name, "", "an unknown labels-only _info gauge is not sent");
	}
	return done_testing();
}
