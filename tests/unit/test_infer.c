/* SPDX-License-Identifier: MIT */
/*
 * monitor/endpoint/infer.c: the fixture expositions of tests/fixtures/infer/ (written
 * from each server's documented metric list) read in pairs, and every value
 * of the period checked exactly: counts against the increments written into
 * the fixtures, means as the increments' quotient, percentiles to the last
 * bit against ref_quantile() below (a separate transcription of Prometheus'
 * BucketQuantile, with a linear search) and, for a few, against numbers
 * worked out by hand. Also: the first call (no baseline), a call without a
 * new scrape, counter and histogram resets, summaries' quantiles, the
 * mean-only case, recognition of each flavour, an unknown one, version "",
 * and a body that does not parse.
 */
#include "../../monitor/endpoint/infer.h"
#include "../../common/util.h"
#include "tap.h"

#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define FIX "tests/fixtures/infer/"

#if defined(__SANITIZE_ADDRESS__)
size_t __sanitizer_get_current_allocated_bytes(void); /* the sanitizer's runtime (its header is not installed) */
#endif

static json_t *group;
static json_t *all;        /* every group written, for the golden file */
static const char *label; /* what the current test is called there */

/* Feed one fixture to in (at second t), then fill a fresh group; the group is kept in `group`. */
static int feed(struct infer *in, const char *name, int t)
{
	static char body[1 << 20];
	char path[256], err[256];
	ssize_t n;
	int rc;

	snprintf(path, sizeof(path), FIX "%s", name);
	n = read_regular_file(path, body, sizeof(body));
	if (n < 0) {
		fprintf(stderr, "# %s: %zd\n", path, n);
		return (int)n;
	}
	rc = infer_update(in, body, (size_t)n, (int64_t)t * 1000000000, err, sizeof(err));
	if (rc)
		fprintf(stderr, "# %s: %s\n", path, err);
	return rc;
}

static void stats(struct infer *in)
{
	char key[128];

	json_decref(group);
	group = json_object();
	infer_execution_stats(in, group, NULL);
	if (!all)
		all = json_object();
	snprintf(key, sizeof(key), "%s %zu", label, json_object_size(all));
	json_object_set(all, key, group);
}

/*
 * Every group written, against tests/fixtures/infer/groups.json
 * (INFER_GOLDEN_UPDATE=1 rewrites it). tests/helpers/check_report.py
 * --self-test checks each of them against docs/report-format.md §6.5.
 */
static void test_golden(void)
{
	const char *path = FIX "groups.json";
	json_error_t e;
	json_t *want;

	if (getenv("INFER_GOLDEN_UPDATE")) {
		ok(!json_dump_file(all, path, JSON_INDENT(1) | JSON_REAL_PRECISION(17)), "wrote %s", path);
		return;
	}
	want = json_load_file(path, 0, &e);
	if (!ok(want && json_equal(want, all), "every group as in %s", path)) {
		char *got = json_dumps(all, JSON_INDENT(1) | JSON_REAL_PRECISION(17));

		fprintf(stderr, "# %s\n# got: %.2000s\n", want ? "differs" : e.text, got ? got : "");
		free(got);
	}
	json_decref(want);
}

/* The value at a path of keys under the group (NULL-terminated); NULL when absent. */
static json_t *at(const char *first, ...)
{
	va_list ap;
	json_t *v = group;

	va_start(ap, first);
	for (const char *k = first; k && v; k = va_arg(ap, const char *))
		v = json_object_get(v, k);
	va_end(ap);
	return v;
}

/* A count: must be a JSON integer. */
static void is_count(json_t *v, long long want, const char *name)
{
	if (!ok(json_is_integer(v) && json_integer_value(v) == want, "%s", name))
		fprintf(stderr, "#   got: %s %lld, expected: integer %lld\n", v ? (json_is_integer(v) ? "integer" : "other")
										   : "absent",
			v && json_is_integer(v) ? (long long)json_integer_value(v) : -1LL, want);
}

/* A real, compared to the last bit. */
static void is_real(json_t *v, double want, const char *name)
{
	if (!ok(json_is_real(v) && json_real_value(v) == want, "%s", name))
		fprintf(stderr, "#   got: %s %.17g, expected: %.17g\n", v ? (json_is_real(v) ? "real" : "other") : "absent",
			v && json_is_real(v) ? json_real_value(v) : NAN, want);
}

static void is_absent(json_t *v, const char *name)
{
	if (!ok(!v, "%s", name)) {
		char *s = json_dumps(v, JSON_ENCODE_ANY);

		fprintf(stderr, "#   present: %s\n", s ? s : "?");
		free(s);
	}
}

/*
 * histogram_quantile as Prometheus' promql/quantile.go BucketQuantile
 * computes it for classic buckets, transcribed separately from infer.c:
 * bounds[] ascending (the last +Inf), cum[] cumulative counts.
 */
static double ref_quantile(double q, const double *bounds, const double *cum_in, int n)
{
	double cum[64], prev, rank, lo = 0, cnt;
	int b;

	if (q < 0)
		return -INFINITY;
	if (q > 1)
		return INFINITY;
	if (n < 2 || !isinf(bounds[n - 1]))
		return NAN;
	memcpy(cum, cum_in, (size_t)n * sizeof(double));
	prev = cum[0];
	for (int i = 1; i < n; i++) { /* ensureMonotonicAndIgnoreSmallDeltas, tolerance 1e-12 */
		if (cum[i] == prev)
			continue;
		if (fabs(prev - cum[i]) / (fabs(prev) + fabs(cum[i])) < 1e-12 && prev != 0 && cum[i] != 0)
			cum[i] = prev;
		else if (cum[i] < prev)
			cum[i] = prev;
		else
			prev = cum[i];
	}
	if (cum[n - 1] == 0)
		return NAN;
	rank = q * cum[n - 1];
	for (b = 0; b < n - 1 && !(cum[b] >= rank); b++)
		;
	if (b == n - 1)
		return bounds[n - 2];
	if (b == 0 && bounds[0] <= 0)
		return bounds[0];
	cnt = cum[b];
	if (b > 0) {
		lo = bounds[b - 1];
		cnt -= cum[b - 1];
		rank -= cum[b - 1];
	}
	return lo + (bounds[b] - lo) * (rank / cnt);
}

static const double qs[] = { 0, 0.01, 0.25, 0.5, 0.75, 0.99, 1 };
static const char *const qn[] = { "p0", "p1", "p25", "p50", "p75", "p99", "p100" };

/* Every percentile of obj against ref_quantile of the increments (in server units, divided by div). */
static void check_pcts(json_t *obj, const double *bounds, const double *cum, int n, double div, const char *what)
{
	char name[256];

	ok(json_is_object(obj), "%s: percentiles present", what);
	for (size_t i = 0; i < ARRAY_SIZE(qs); i++) {
		double want = ref_quantile(qs[i], bounds, cum, n);

		snprintf(name, sizeof(name), "%s %s", what, qn[i]);
		if (isnan(want))
			is_absent(json_object_get(obj, qn[i]), name);
		else
			is_real(json_object_get(obj, qn[i]), want / div, name);
	}
}

static void test_names(void)
{
	static const char *const names[] = { "triton", "vllm", "tgi", "torchserve", "ovms", "prometheus" };

	for (int i = 0; i < 6; i++) {
		is_int(infer_server_parse(names[i]), INFER_TRITON + i, names[i]);
		is_str(infer_server_name((enum infer_server)(INFER_TRITON + i)), names[i], "and back");
	}
	is_str(infer_server_name(INFER_AUTO), "", "INFER_AUTO has no name");
	is_int(infer_server_parse("bogus"), -1, "an unknown name");
	is_int(infer_server_parse(""), -1, "an empty name");
}

static void test_recognition(void)
{
	static const struct {
		const char *file;
		enum infer_server want;
	} cases[] = { { "triton_1.prom", INFER_TRITON },	   { "triton_summary_1.prom", INFER_TRITON },
		      { "vllm_1.prom", INFER_VLLM },		   { "tgi_1.prom", INFER_TGI },
		      { "torchserve_1.prom", INFER_TORCHSERVE }, { "ovms_1.prom", INFER_OVMS },
		      { "other_1.prom", INFER_PROMETHEUS } };
	label = "recognition";

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct infer *in = infer_new(INFER_AUTO);

		is_int(infer_server_of(in), INFER_AUTO, "nothing recognised before a scrape");
		is_int(feed(in, cases[i].file, 0), 0, cases[i].file);
		is_int(infer_server_of(in), cases[i].want, "recognised");
		infer_free(in);
	}
	{
		struct infer *in = infer_new(INFER_VLLM);

		feed(in, "triton_1.prom", 0);
		feed(in, "triton_2.prom", 5);
		stats(in);
		is_int(infer_server_of(in), INFER_VLLM, "a configured flavour stays");
		ok(json_is_object(at("models", NULL)) && !json_object_size(at("models", NULL)),
		   "configured vllm, Triton's families: no model");
		infer_free(in);
	}
	{
		struct infer *in = infer_new(INFER_AUTO);

		feed(in, "other_1.prom", 0);
		feed(in, "vllm_1.prom", 5);
		is_int(infer_server_of(in), INFER_VLLM, "\"prometheus\" is recognised again at the next scrape");
		infer_free(in);
	}
}

/* An inference application's own exporter (the NCS2 exporter's family): any flavour, by device name. */
static void test_ncs2(void)
{
	struct infer *in = infer_new(INFER_AUTO);

	label = "ncs2";
	feed(in, "ncs2_1.prom", 0);
	stats(in);
	is_int(infer_server_of(in), INFER_PROMETHEUS, "no server's families: prometheus");
	is_real(at("server_devices", "MYRIAD.1.2-ma2480", "temperature_celsius", NULL), 41.5,
		"ncs2_temperature_celsius by the stick's name");
	infer_free(in);
}

static void test_unknown(void)
{
	struct infer *in = infer_new(INFER_AUTO);
	label = "unknown";

	feed(in, "other_1.prom", 0);
	feed(in, "other_1.prom", 5);
	stats(in);
	ok(json_is_object(at("models", NULL)) && !json_object_size(at("models", NULL)), "unknown flavour: models {}");
	is_absent(at("execution_summary", NULL), "unknown flavour: no execution_summary");
	is_absent(at("latency_stats", NULL), "unknown flavour: no latency_stats");
	is_absent(at("server_devices", NULL), "unknown flavour: no server_devices");
	infer_free(in);
}

static void test_bad_body(void)
{
	struct infer *in = infer_new(INFER_AUTO);
	char err[256];
	const char *html = "<html><body>Not the metrics</body></html>\n";
	label = "bad body";

	stats(in);
	is_int((int)json_object_size(group), 0, "no scrape yet: nothing written");
	feed(in, "triton_1.prom", 0);
	is_int(infer_update(in, html, strlen(html), 1, err, sizeof(err)), -EINVAL, "a body where nothing parses");
	is_str(err, "line 1: a sample line starts with a metric name", "err names the line");
	feed(in, "triton_2.prom", 5);
	stats(in);
	stats(in);
	is_absent(at("execution_summary", NULL), "a call without a newer scrape: no counts");
	is_count(at("models", "resnet50", "1", "requests_pending", NULL), 5, "but the gauges");
	is_int(infer_update(in, "", 0, 6, err, sizeof(err)), 0, "an empty body is an exposition without samples");
	infer_free(in);
}

static void test_triton(void)
{
	struct infer *in = infer_new(INFER_AUTO);
	const char *gpu = "GPU-0b6b0a5e-2d1c-4a3c-9f3e-1c2d3e4f5a6b";
	static const double tb[] = { 100, 500, 2000, 5000, INFINITY };
	static const double tc[] = { 0, 1, 2, 3, 4 };
	label = "triton";

	/* the first call: no baseline */
	feed(in, "triton_1.prom", 0);
	stats(in);
	is_absent(at("execution_summary", NULL), "first call: no runtime counts");
	is_absent(at("models", "resnet50", "1", "execution_summary", NULL), "first call: no model counts");
	is_absent(at("models", "resnet50", "1", "mean_seconds", NULL), "first call: no means");
	is_absent(at("models", "llama", "1", "latency_stats", NULL), "first call: no percentiles");
	is_count(at("models", "resnet50", "1", "requests_pending", NULL), 3, "first call: the pending gauge");
	is_real(at("server_devices", gpu, "utilization_ratio", NULL), 0.5, "first call: GPU utilization");
	is_real(at("server_devices", gpu, "energy_total_joules", NULL), 1000000, "first call: energy since start");
	is_absent(at("server_devices", gpu, "energy_joules", NULL), "first call: no energy over the period");

	feed(in, "triton_2.prom", 5);
	stats(in);
	is_count(at("models", "resnet50", "1", "execution_summary", "completed", NULL), 118, "resnet50 completed");
	is_count(at("models", "resnet50", "1", "execution_summary", "failed", NULL), 2, "resnet50 failed");
	is_count(at("models", "resnet50", "1", "error_summary", "rejected", NULL), 2, "resnet50 reason REJECTED");
	is_count(at("models", "resnet50", "1", "error_summary", "backend", NULL), 0, "resnet50 reason BACKEND");
	is_real(at("models", "resnet50", "1", "batch_size", NULL), 472.0 / 59, "resnet50 batch size");
	is_real(at("models", "resnet50", "1", "mean_seconds", "request", NULL), 590000 / 1e6 / 118, "resnet50 request");
	is_real(at("models", "resnet50", "1", "mean_seconds", "queue", NULL), 11800 / 1e6 / 118, "resnet50 queue");
	is_real(at("models", "resnet50", "1", "mean_seconds", "compute_input", NULL), 23600 / 1e6 / 118,
		"resnet50 compute_input");
	is_real(at("models", "resnet50", "1", "mean_seconds", "compute_infer", NULL), 413000 / 1e6 / 118,
		"resnet50 compute_infer");
	is_real(at("models", "resnet50", "1", "mean_seconds", "compute_output", NULL), 11800 / 1e6 / 118,
		"resnet50 compute_output");
	is_absent(at("models", "resnet50", "1", "latency_stats", NULL), "counters only: no percentiles");
	is_count(at("models", "resnet50", "1", "requests_pending", NULL), 5, "resnet50 pending");
	is_absent(at("models", "resnet50", "1", "requests_in_flight", NULL), "Triton gives no in-flight gauge");
	is_count(at("models", "bert", "2", "execution_summary", "completed", NULL), 10, "bert completed");
	is_count(at("models", "bert", "2", "execution_summary", "failed", NULL), 0, "bert failed: 0, given");
	is_real(at("models", "bert", "2", "batch_size", NULL), 2.0, "bert batch size");
	is_real(at("models", "bert", "2", "mean_seconds", "request", NULL), 300000 / 1e6 / 10, "bert request");
	is_real(at("models", "bert", "2", "mean_seconds", "queue", NULL), 500 / 1e6 / 10, "bert queue");
	is_real(at("models", "bert", "2", "mean_seconds", "compute_infer", NULL), 250000 / 1e6 / 10, "bert infer");
	is_count(at("models", "llama", "1", "execution_summary", "completed", NULL), 4, "llama completed");
	is_absent(at("models", "llama", "1", "execution_summary", "failed", NULL), "llama: no failure series, no failed");
	is_absent(at("models", "llama", "1", "mean_seconds", "request", NULL), "llama: no request duration");
	is_real(at("models", "llama", "1", "mean_seconds", "time_to_first_token", NULL), 4000 / 1e3 / 4, "llama TTFT mean");
	check_pcts(at("models", "llama", "1", "latency_stats", "time_to_first_token", NULL), tb, tc, 5, 1e3, "llama TTFT");
	/* by hand: rank 0.04 in (100, 500] holding 1: 100 + 400 * 0.04 ms */
	is_real(at("models", "llama", "1", "latency_stats", "time_to_first_token", "p1", NULL), 116 / 1e3, "p1 by hand");
	is_real(at("models", "llama", "1", "latency_stats", "time_to_first_token", "p50", NULL), 2.0, "p50 by hand");
	is_real(at("models", "llama", "1", "latency_stats", "time_to_first_token", "p99", NULL), 5.0,
		"p99 in +Inf: the highest finite bound");
	is_absent(at("models", "llama", "1", "latency_stats", "time_to_first_token", "p0", NULL),
		  "p0 with an empty lowest bucket: NaN in Prometheus, left out");
	is_str(json_string_value(at("models", "llama", "1", "latency_stats", "percentile_source", NULL)), "histogram",
	       "llama percentile_source");
	is_count(at("execution_summary", "completed", NULL), 132, "runtime completed: the sum");
	is_count(at("execution_summary", "failed", NULL), 2, "runtime failed: the sum");
	is_count(at("error_summary", "rejected", NULL), 2, "runtime rejected");
	is_count(at("error_summary", "backend", NULL), 0, "runtime backend");
	is_absent(at("latency_stats", NULL), "no request histogram: no runtime percentiles");
	is_real(at("server_devices", gpu, "utilization_ratio", NULL), 0.75, "GPU utilization");
	is_count(at("server_devices", gpu, "memory_used_bytes", NULL), 20000000000LL, "GPU memory used");
	is_count(at("server_devices", gpu, "memory_total_bytes", NULL), 85899345920LL, "GPU memory total");
	is_real(at("server_devices", gpu, "power_watts", NULL), 250.5, "GPU power");
	is_real(at("server_devices", gpu, "power_limit_watts", NULL), 400, "GPU power limit");
	is_real(at("server_devices", gpu, "energy_joules", NULL), 1250.5, "GPU energy over the period");
	is_real(at("server_devices", gpu, "energy_total_joules", NULL), 1001250.5, "GPU energy since start");

	/* the server restarted: every counter went back */
	feed(in, "triton_3_reset.prom", 10);
	stats(in);
	is_count(at("models", "resnet50", "1", "execution_summary", "completed", NULL), 20, "reset: counts from zero");
	is_count(at("models", "resnet50", "1", "execution_summary", "failed", NULL), 1, "reset: failed from zero");
	is_count(at("models", "resnet50", "1", "error_summary", "rejected", NULL), 1, "reset: rejected");
	is_absent(at("models", "resnet50", "1", "error_summary", "backend", NULL), "reset: a reason no longer served");
	is_real(at("models", "resnet50", "1", "batch_size", NULL), 160.0 / 20, "reset: batch size");
	is_real(at("models", "resnet50", "1", "mean_seconds", "request", NULL), 100000 / 1e6 / 20, "reset: request");
	is_absent(at("models", "bert", NULL), "reset: a model not loaded again is absent");
	is_count(at("execution_summary", "completed", NULL), 20, "reset: runtime completed");
	is_real(at("server_devices", gpu, "energy_joules", NULL), 500, "reset: energy from zero");
	infer_free(in);
}

static void test_triton_summary(void)
{
	struct infer *in = infer_new(INFER_TRITON);
	json_t *tl, *q;
	label = "triton summary";

	feed(in, "triton_summary_1.prom", 0);
	stats(in);
	is_absent(at("models", "my_model", "1", "latency_stats", NULL), "first call: no summary quantiles");
	feed(in, "triton_summary_2.prom", 5);
	stats(in);
	is_count(at("models", "my_model", "1", "execution_summary", "completed", NULL), 39, "completed");
	is_count(at("models", "my_model", "1", "error_summary", "other", NULL), 1, "reason OTHER");
	tl = at("models", "my_model", "1", "latency_stats", "total_latency", NULL);
	is_real(json_object_get(tl, "p50"), 1000 / 1e6, "summary p50: the server's quantile 0.5");
	is_real(json_object_get(tl, "p90"), 1500 / 1e6, "summary p90");
	is_real(json_object_get(tl, "p95"), 1800 / 1e6, "summary p95");
	is_real(json_object_get(tl, "p99"), 2500 / 1e6, "summary p99");
	is_real(json_object_get(tl, "p99.9"), 4000 / 1e6, "summary p99.9");
	is_int((int)json_object_size(tl), 5, "only the server's quantiles, none invented");
	q = at("models", "my_model", "1", "latency_stats", "queue", NULL);
	is_real(json_object_get(q, "p99"), 120 / 1e6, "queue summary p99");
	is_absent(json_object_get(q, "p99.9"), "a NaN quantile is left out");
	is_str(json_string_value(at("models", "my_model", "1", "latency_stats", "percentile_source", NULL)), "summary",
	       "percentile_source summary");
	is_real(at("models", "my_model", "1", "mean_seconds", "request", NULL), 46800 / 1e6 / 39, "mean from _sum/_count");
	is_real(at("models", "my_model", "1", "mean_seconds", "queue", NULL), 2000 / 1e6 / 39, "queue mean");
	is_real(at("models", "my_model", "1", "mean_seconds", "compute_infer", NULL), 40000 / 1e6 / 39,
		"compute_infer: mean only");
	is_absent(at("models", "my_model", "1", "latency_stats", "compute_infer", NULL), "compute times: no percentiles");
	is_absent(at("latency_stats", NULL), "summaries do not merge: no runtime percentiles");
	infer_free(in);
}

static void test_vllm(void)
{
	struct infer *in = infer_new(INFER_AUTO);
	const char *m = "meta-llama/Llama-3.1-8B-Instruct";
	static const double eb[] = { 0.5, 1.0, 2.5, 5.0, 10.0, INFINITY }, ec[] = { 1, 10, 25, 33, 35, 35 };
	static const double fb[] = { 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, INFINITY },
			    fc[] = { 2, 10, 18, 25, 28, 33, 35, 35 }, fr[] = { 20, 45, 100, 150, 180, 195, 200, 200 };
	static const double pb[] = { 0.01, 0.025, 0.05, 0.075, 0.1, INFINITY },
			    pc[] = { 200, 24000, 29000, 29800, 30000, 30000 };
	static const double qb[] = { 0.01, 0.05, 0.1, 0.5, INFINITY }, qc[] = { 30, 33, 34, 35, 35 };
	static const double rc[] = { 1, 2, 4, 5, 6, 6 };
	label = "vllm";

	feed(in, "vllm_1.prom", 0);
	stats(in);
	is_count(at("models", m, "", "requests_in_flight", NULL), 4, "first call: running");
	is_real(at("models", m, "", "kv_cache_usage_ratio", NULL), 0.25, "first call: KV cache");
	is_absent(at("models", m, "", "tokens", NULL), "first call: no tokens");
	feed(in, "vllm_2.prom", 5);
	stats(in);
	is_count(at("models", m, "", "execution_summary", "completed", NULL), 35, "completed, all finish reasons");
	is_absent(at("models", m, "", "execution_summary", "failed", NULL), "vLLM gives no failure count");
	is_count(at("models", m, "", "tokens", "prompt", NULL), 10000, "prompt tokens");
	is_count(at("models", m, "", "tokens", "generation", NULL), 30000, "generation tokens");
	is_count(at("models", m, "", "requests_in_flight", NULL), 6, "running");
	is_count(at("models", m, "", "requests_pending", NULL), 0, "waiting");
	is_real(at("models", m, "", "kv_cache_usage_ratio", NULL), 0.5, "KV cache");
	check_pcts(at("models", m, "", "latency_stats", "total_latency", NULL), eb, ec, 6, 1, "e2e");
	check_pcts(at("models", m, "", "latency_stats", "time_to_first_token", NULL), fb, fc, 8, 1, "TTFT");
	check_pcts(at("models", m, "", "latency_stats", "time_per_output_token", NULL), pb, pc, 6, 1,
		   "TPOT from time_per_output_token, not inter_token_latency");
	check_pcts(at("models", m, "", "latency_stats", "queue", NULL), qb, qc, 5, 1, "queue");
	is_real(at("models", m, "", "mean_seconds", "request", NULL), (387.5 - 300) / 35, "mean e2e");
	is_real(at("models", m, "", "mean_seconds", "queue", NULL), (2.35 - 2.0) / 35, "mean queue");
	is_real(at("models", m, "", "mean_seconds", "time_to_first_token", NULL), (9.75 - 7.5) / 35, "mean TTFT");
	is_real(at("models", m, "", "mean_seconds", "time_per_output_token", NULL), (3750.0 - 3000) / 30000, "mean TPOT");
	is_count(at("execution_summary", "completed", NULL), 35, "runtime completed");
	check_pcts(at("latency_stats", "total_latency", NULL), eb, ec, 6, 1, "runtime merged e2e");
	is_str(json_string_value(at("latency_stats", "percentile_source", NULL)), "histogram", "runtime source");

	/* restarted: the TTFT histogram's first bucket and count went up, its second went back: all from zero */
	feed(in, "vllm_3_reset.prom", 10);
	stats(in);
	check_pcts(at("models", m, "", "latency_stats", "time_to_first_token", NULL), fb, fr, 8, 1,
		   "reset histogram: the new process's buckets");
	is_real(at("models", m, "", "mean_seconds", "time_to_first_token", NULL), 12.0 / 200, "reset: TTFT mean");
	check_pcts(at("models", m, "", "latency_stats", "total_latency", NULL), eb, rc, 6, 1, "reset: e2e");
	is_count(at("models", m, "", "execution_summary", "completed", NULL), 6, "reset: completed");
	is_count(at("models", m, "", "tokens", "prompt", NULL), 1000, "reset: prompt tokens");
	infer_free(in);
}

static void test_tgi(void)
{
	struct infer *in = infer_new(INFER_AUTO);
	static const double db[] = { 0.1, 0.5, 1, 2, 5, 10, INFINITY }, dc[] = { 2, 8, 15, 18, 18, 18, 18 };
	static const double qb[] = { 0.001, 0.01, 0.1, 1, INFINITY }, qc[] = { 10, 14, 16, 18, 18 };
	static const double tb[] = { 0.01, 0.02, 0.05, 0.1, INFINITY }, tc[] = { 3, 10, 16, 18, 18 };
	label = "tgi";

	feed(in, "tgi_1.prom", 0);
	stats(in);
	feed(in, "tgi_2.prom", 5); /* no final newline */
	stats(in);
	is_count(at("models", "", "", "execution_summary", "completed", NULL), 18, "TGI: one model, key \"\"");
	is_count(at("models", "", "", "execution_summary", "failed", NULL), 1, "TGI failed");
	is_count(at("models", "", "", "error_summary", "validation", NULL), 1, "TGI err=validation");
	is_count(at("models", "", "", "error_summary", "generation", NULL), 0, "TGI err=generation");
	check_pcts(at("models", "", "", "latency_stats", "total_latency", NULL), db, dc, 7, 1, "TGI duration");
	is_real(at("models", "", "", "latency_stats", "total_latency", "p0", NULL), 0.0, "p0 by hand: the lower bound 0");
	is_real(at("models", "", "", "latency_stats", "total_latency", "p50", NULL), 0.5 + 0.5 * (1.0 / 7),
		"p50 by hand");
	is_real(at("models", "", "", "latency_stats", "total_latency", "p100", NULL), 2.0, "p100 by hand");
	check_pcts(at("models", "", "", "latency_stats", "queue", NULL), qb, qc, 5, 1, "TGI queue");
	check_pcts(at("models", "", "", "latency_stats", "time_per_output_token", NULL), tb, tc, 5, 1, "TGI TPOT");
	is_absent(at("models", "", "", "latency_stats", "time_to_first_token", NULL), "TGI gives no TTFT");
	is_real(at("models", "", "", "mean_seconds", "request", NULL), (115.75 - 95.5) / 18, "TGI mean request");
	is_real(at("models", "", "", "mean_seconds", "queue", NULL), (3.65 - 3.2) / 18, "TGI mean queue");
	is_real(at("models", "", "", "mean_seconds", "compute_infer", NULL), (95.0 - 80) / 18, "TGI mean inference");
	is_real(at("models", "", "", "mean_seconds", "time_per_output_token", NULL), (2.64 - 2.1) / 18, "TGI mean TPOT");
	is_count(at("models", "", "", "tokens", "prompt", NULL), 2000, "TGI prompt tokens (input_length _sum)");
	is_count(at("models", "", "", "tokens", "generation", NULL), 5400, "TGI generated tokens");
	is_count(at("models", "", "", "requests_pending", NULL), 0, "TGI queue size");
	is_count(at("models", "", "", "requests_in_flight", NULL), 10, "TGI batch size now");
	check_pcts(at("latency_stats", "total_latency", NULL), db, dc, 7, 1, "TGI runtime");
	infer_free(in);
}

static void test_torchserve(void)
{
	struct infer *in = infer_new(INFER_AUTO);
	label = "torchserve";

	feed(in, "torchserve_1.prom", 0);
	stats(in);
	feed(in, "torchserve_2.prom", 5);
	stats(in);
	is_count(at("models", "resnet-18", "default", "execution_summary", "completed", NULL), 50, "resnet-18 requests");
	is_real(at("models", "resnet-18", "default", "mean_seconds", "request", NULL), (9000000.75 - 8000000.5) / 1e6 / 50,
		"resnet-18 mean inference latency");
	is_real(at("models", "resnet-18", "default", "mean_seconds", "queue", NULL), 5000 / 1e6 / 50,
		"resnet-18 mean queue latency");
	is_count(at("models", "mnist", "1.0", "execution_summary", "completed", NULL), 10, "mnist requests");
	is_real(at("models", "mnist", "1.0", "mean_seconds", "request", NULL), 15000 / 1e6 / 10, "mnist latency");
	is_real(at("models", "mnist", "1.0", "mean_seconds", "queue", NULL), 100 / 1e6 / 10, "mnist queue");
	is_absent(at("models", "mnist", "1.0", "latency_stats", NULL), "TorchServe: means only, no percentiles");
	is_absent(at("models", "resnet-18", "", NULL), "PredictionTime{ModelName} is not read");
	is_count(at("execution_summary", "completed", NULL), 60, "runtime completed");
	is_absent(at("execution_summary", "failed", NULL), "no per-model failures");
	is_count(at("error_summary", "http_4xx", NULL), 1, "Requests4XX (host level)");
	is_count(at("error_summary", "http_5xx", NULL), 0, "Requests5XX (host level)");
	infer_free(in);
}

static void test_ovms(void)
{
	struct infer *in = infer_new(INFER_AUTO);
	static const double rb[] = { 1585.8, 2775.1, 4856.5, 8498.8, INFINITY }, rc[] = { 32, 64, 75, 80, 80 };
	static const double wb[] = { 10, 100, 1000, INFINITY }, wc[] = { 60, 75, 80, 80 };
	label = "ovms";

	feed(in, "ovms_1.prom", 0);
	stats(in);
	is_count(at("models", "resnet", "1", "requests_in_flight", NULL), 3, "first call: current requests");
	feed(in, "ovms_2.prom", 5);
	stats(in);
	is_count(at("models", "resnet", "1", "execution_summary", "completed", NULL), 80,
		 "ModelInfer + Predict, not metadata or status calls");
	is_count(at("models", "resnet", "1", "execution_summary", "failed", NULL), 1, "failed ModelInfer");
	is_count(at("models", "resnet", "1", "error_summary", "generic", NULL), 1, "OVMS: generic");
	is_absent(at("models", "resnet", "", NULL), "GetModelStatus/ModelReady (no version) are not requests");
	check_pcts(at("models", "resnet", "1", "latency_stats", "total_latency", NULL), rb, rc, 5, 1e6,
		   "request time, gRPC and REST summed by le");
	check_pcts(at("models", "resnet", "1", "latency_stats", "queue", NULL), wb, wc, 4, 1e6, "wait for infer request");
	is_real(at("models", "resnet", "1", "mean_seconds", "request", NULL), 215000 / 1e6 / 80, "mean request");
	is_real(at("models", "resnet", "1", "mean_seconds", "queue", NULL), 1000 / 1e6 / 80, "mean wait");
	is_real(at("models", "resnet", "1", "mean_seconds", "compute_infer", NULL), 160000 / 1e6 / 80, "mean inference");
	is_count(at("models", "resnet", "1", "requests_in_flight", NULL), 1, "current requests");
	is_count(at("models", "llm_graph", "", "execution_summary", "completed", NULL), 10, "a graph: version \"\"");
	is_count(at("models", "llm_graph", "", "execution_summary", "failed", NULL), 0, "graph failed");
	is_count(at("execution_summary", "completed", NULL), 90, "runtime completed");
	is_count(at("execution_summary", "failed", NULL), 1, "runtime failed");
	check_pcts(at("latency_stats", "total_latency", NULL), rb, rc, 5, 1e6, "runtime merged");
	infer_free(in);
}

/* The runtime-level distribution merges every model's bucket increments by bound. */
static void test_merge(void)
{
	struct infer *in = infer_new(INFER_VLLM);
	static const char a[] = "vllm:e2e_request_latency_seconds_bucket{model_name=\"a\",le=\"1\"} 0\n"
				"vllm:e2e_request_latency_seconds_bucket{model_name=\"a\",le=\"+Inf\"} 0\n"
				"vllm:e2e_request_latency_seconds_count{model_name=\"a\"} 0\n"
				"vllm:e2e_request_latency_seconds_bucket{model_name=\"b\",le=\"1\"} 0\n"
				"vllm:e2e_request_latency_seconds_bucket{model_name=\"b\",le=\"2\"} 0\n"
				"vllm:e2e_request_latency_seconds_bucket{model_name=\"b\",le=\"+Inf\"} 0\n"
				"vllm:e2e_request_latency_seconds_count{model_name=\"b\"} 0\n";
	static const char b[] = "vllm:e2e_request_latency_seconds_bucket{model_name=\"a\",le=\"1\"} 3\n"
				"vllm:e2e_request_latency_seconds_bucket{model_name=\"a\",le=\"+Inf\"} 4\n"
				"vllm:e2e_request_latency_seconds_count{model_name=\"a\"} 4\n"
				"vllm:e2e_request_latency_seconds_bucket{model_name=\"b\",le=\"1\"} 1\n"
				"vllm:e2e_request_latency_seconds_bucket{model_name=\"b\",le=\"2\"} 5\n"
				"vllm:e2e_request_latency_seconds_bucket{model_name=\"b\",le=\"+Inf\"} 6\n"
				"vllm:e2e_request_latency_seconds_count{model_name=\"b\"} 6\n";
	/* sum by (le): 1 -> 4, 2 -> 5 (b only: the envelope makes it at least 4), +Inf -> 10 */
	static const double mb[] = { 1, 2, INFINITY }, mc[] = { 4, 5, 10 };
	char err[64];
	label = "merge";

	infer_update(in, a, sizeof(a) - 1, 0, err, sizeof(err));
	stats(in);
	infer_update(in, b, sizeof(b) - 1, 1, err, sizeof(err));
	stats(in);
	check_pcts(at("latency_stats", "total_latency", NULL), mb, mc, 3, 1, "merged by le over models");
	is_real(at("latency_stats", "total_latency", "p25", NULL), 0.625, "p25 by hand: rank 2.5 of 4 in (0,1]");
	is_real(at("latency_stats", "total_latency", "p50", NULL), 2.0, "p50 by hand: rank 5, the one in (1,2]");
	infer_free(in);
}

/* Older Triton: failures without a reason label, a model without a version label; several vLLM engines. */
static void test_labels(void)
{
	struct infer *in = infer_new(INFER_AUTO);
	static const char a[] = "nv_inference_request_success{model=\"old\"} 5\n"
				"nv_inference_request_failure{model=\"old\"} 1\n"
				"nv_inference_pending_request_count{model=\"old\"} 2\n";
	static const char b[] = "nv_inference_request_success{model=\"old\"} 9\n"
				"nv_inference_request_failure{model=\"old\"} 4\n"
				"nv_inference_pending_request_count{model=\"old\"} 0\n";
	static const char c[] = "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 3\n"
				"vllm:num_requests_running{engine=\"1\",model_name=\"m\"} 4\n"
				"vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.25\n"
				"vllm:kv_cache_usage_perc{engine=\"1\",model_name=\"m\"} 0.75\n"
				"vllm:prompt_tokens_total{engine=\"0\",model_name=\"m\"} 10\n"
				"vllm:prompt_tokens_total{engine=\"1\",model_name=\"m\"} 20\n";
	static const char d[] = "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 1\n"
				"vllm:num_requests_running{engine=\"1\",model_name=\"m\"} 1\n"
				"vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.5\n"
				"vllm:kv_cache_usage_perc{engine=\"1\",model_name=\"m\"} 0.125\n"
				"vllm:prompt_tokens_total{engine=\"0\",model_name=\"m\"} 15\n"
				"vllm:prompt_tokens_total{engine=\"1\",model_name=\"m\"} 2\n";
	char err[64];

	label = "labels";
	infer_update(in, a, sizeof(a) - 1, 0, err, sizeof(err));
	stats(in);
	infer_update(in, b, sizeof(b) - 1, 1, err, sizeof(err));
	stats(in);
	is_count(at("models", "old", "", "execution_summary", "completed", NULL), 4, "no version label: version \"\"");
	is_count(at("models", "old", "", "error_summary", "generic", NULL), 3, "no reason label: generic");
	is_count(at("models", "old", "", "requests_pending", NULL), 0, "pending");
	infer_free(in);

	in = infer_new(INFER_AUTO);
	infer_update(in, c, sizeof(c) - 1, 0, err, sizeof(err));
	stats(in);
	infer_update(in, d, sizeof(d) - 1, 1, err, sizeof(err));
	stats(in);
	is_count(at("models", "m", "", "requests_in_flight", NULL), 2, "running: summed over engines");
	is_real(at("models", "m", "", "kv_cache_usage_ratio", NULL), 0.5, "KV cache: the fullest engine");
	is_count(at("models", "m", "", "tokens", "prompt", NULL), 7,
		 "tokens per engine: 5, and 2 from an engine that restarted");
	infer_free(in);
}

/* OpenMetrics spells every counter's sample NAME_total, ends in # EOF, and may give timestamps. */
static void test_openmetrics(void)
{
	struct infer *in = infer_new(INFER_AUTO);
	static const char a[] = "# TYPE nv_inference_request_success counter\n"
				"nv_inference_request_success_total{model=\"m\",version=\"1\"} 10 1700000000.000\n"
				"nv_inference_request_success_created{model=\"m\",version=\"1\"} 1700000000.0\n"
				"# EOF\n";
	static const char b[] = "# TYPE nv_inference_request_success counter\n"
				"nv_inference_request_success_total{model=\"m\",version=\"1\"} 25 1700000005.000\n"
				"nv_inference_request_success_created{model=\"m\",version=\"1\"} 1700000000.0\n"
				"# EOF\n"
				"nv_inference_request_success_total{model=\"m\",version=\"1\"} 99\n";
	char err[64];

	label = "openmetrics";
	infer_update(in, a, sizeof(a) - 1, 0, err, sizeof(err));
	stats(in);
	infer_update(in, b, sizeof(b) - 1, 1, err, sizeof(err));
	stats(in);
	is_int(infer_server_of(in), INFER_TRITON, "OpenMetrics Triton recognised");
	is_count(at("models", "m", "1", "execution_summary", "completed", NULL), 15,
		 "NAME_total read, _created not, nothing after # EOF");
	infer_free(in);
}

/*
 * A series is matched with the previous scrape's at its own place, else
 * through an index: series that moved, a new one, one gone, and a
 * histogram whose buckets moved all give what they gave matched by name.
 * (Its groups are not written to the golden file.)
 */
static void test_series_order(void)
{
	static const char b1[] = "# TYPE vllm:request_success_total counter\n"
				 "vllm:request_success_total{model_name=\"a\"} 10\n"
				 "vllm:request_success_total{model_name=\"b\"} 20\n"
				 "vllm:request_success_total{model_name=\"gone\"} 7\n"
				 "# TYPE vllm:e2e_request_latency_seconds histogram\n"
				 "vllm:e2e_request_latency_seconds_bucket{model_name=\"a\",le=\"1\"} 1\n"
				 "vllm:e2e_request_latency_seconds_bucket{model_name=\"a\",le=\"+Inf\"} 2\n"
				 "vllm:e2e_request_latency_seconds_sum{model_name=\"a\"} 1.5\n"
				 "vllm:e2e_request_latency_seconds_count{model_name=\"a\"} 2\n";
	static const char b2[] = "# TYPE vllm:e2e_request_latency_seconds histogram\n"
				 "vllm:e2e_request_latency_seconds_count{model_name=\"a\"} 6\n"
				 "vllm:e2e_request_latency_seconds_sum{model_name=\"a\"} 5.5\n"
				 "vllm:e2e_request_latency_seconds_bucket{model_name=\"a\",le=\"+Inf\"} 6\n"
				 "vllm:e2e_request_latency_seconds_bucket{model_name=\"a\",le=\"1\"} 5\n"
				 "# TYPE vllm:request_success_total counter\n"
				 "vllm:request_success_total{model_name=\"new\"} 4\n"
				 "vllm:request_success_total{model_name=\"b\"} 25\n"
				 "vllm:request_success_total{model_name=\"a\"} 13\n";
	struct infer *in = infer_new(INFER_AUTO);
	json_t *g = json_object();
	char err[256];

	is_int(infer_update(in, b1, sizeof(b1) - 1, 0, err, sizeof(err)), 0, "order: first scrape");
	infer_execution_stats(in, g, NULL);
	json_decref(g);
	g = json_object();
	is_int(infer_update(in, b2, sizeof(b2) - 1, 5000000000, err, sizeof(err)), 0, "order: second, reordered");
	infer_execution_stats(in, g, NULL);
	is_int((int)json_integer_value(json_object_get(
		       json_object_get(json_object_get(json_object_get(json_object_get(g, "models"), "a"), ""),
				       "execution_summary"),
		       "completed")),
	       3, "a series that moved: its increase");
	is_int((int)json_integer_value(json_object_get(
		       json_object_get(json_object_get(json_object_get(json_object_get(g, "models"), "b"), ""),
				       "execution_summary"),
		       "completed")),
	       5, "and the other");
	is_int((int)json_integer_value(json_object_get(
		       json_object_get(json_object_get(json_object_get(json_object_get(g, "models"), "new"), ""),
				       "execution_summary"),
		       "completed")),
	       4, "a new series counts from zero");
	is_real(json_object_get(
			json_object_get(json_object_get(json_object_get(json_object_get(g, "models"), "a"), ""),
					"mean_seconds"),
			"request"),
		1.0, "a histogram whose samples moved: (5.5 - 1.5) / (6 - 2)");
	is_real(json_object_get(json_object_get(json_object_get(json_object_get(json_object_get(json_object_get(
								g, "models"), "a"), ""), "latency_stats"), "total_latency"),
				"p100"),
		1.0, "and its buckets' increments: all four in le=1");
	json_decref(g);
	infer_free(in);
}

/* A body built line by line (the limits' tests write many series). */
struct text {
	char *p;
	size_t n, cap;
};

static void addf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void addf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (t->cap - t->n < 256) {
		t->cap = t->cap ? 2 * t->cap : 1 << 16;
		t->p = xrealloc(t->p, t->cap);
	}
	va_start(ap, fmt);
	k = vsnprintf(t->p + t->n, t->cap - t->n, fmt, ap);
	va_end(ap);
	t->n += (size_t)k;
}

/* Two scrapes of one server whose bodies body(v) writes with value v: the second period's group, new. */
static json_t *two_scrapes(void (*body)(struct text *, int))
{
	struct infer *in = infer_new(INFER_AUTO);
	struct text t = { NULL, 0, 0 };
	json_t *g = json_object();
	char err[256];

	body(&t, 1);
	is_int(infer_update(in, t.p, t.n, 0, err, sizeof(err)), 0, "limits: first scrape");
	infer_execution_stats(in, g, NULL);
	json_decref(g);
	g = json_object();
	t.n = 0;
	body(&t, 3);
	is_int(infer_update(in, t.p, t.n, 1000000000, err, sizeof(err)), 0, "limits: second scrape");
	infer_execution_stats(in, g, NULL);
	free(t.p);
	infer_free(in);
	return g;
}

static void many_models(struct text *t, int v)
{
	addf(t, "# TYPE nv_inference_request_success counter\n");
	for (int i = 0; i < 5000; i++)
		addf(t, "nv_inference_request_success{model=\"m%d\",version=\"1\"} %d\n", i, v);
}

static void many_reasons(struct text *t, int v)
{
	addf(t, "# TYPE nv_inference_request_failure counter\n");
	for (int i = 0; i < 200; i++)
		addf(t, "nv_inference_request_failure{model=\"m\",version=\"1\",reason=\"r%d\"} %d\n", i, v);
}

static void many_bounds(struct text *t, int v)
{
	addf(t, "# TYPE vllm:e2e_request_latency_seconds histogram\n");
	for (int i = 1; i <= 600; i++)
		addf(t, "vllm:e2e_request_latency_seconds_bucket{model_name=\"a\",le=\"%d\"} %d\n", i, v);
	addf(t, "vllm:e2e_request_latency_seconds_bucket{model_name=\"a\",le=\"+Inf\"} %d\n", v);
}

static void many_gpus(struct text *t, int v)
{
	addf(t, "# TYPE nv_gpu_utilization gauge\n");
	for (int i = 0; i < 300; i++)
		addf(t, "nv_gpu_utilization{gpu_uuid=\"GPU-%04d\"} 0.%d\n", i, v);
}

static int error_has(json_t *g, const char *want)
{
	const char *e = json_string_value(json_object_get(g, "error"));

	if (e && strstr(e, want))
		return 1;
	fprintf(stderr, "# error: %s\n# wanted: %s\n", e ? e : "(none)", want);
	return 0;
}

/*
 * What one scrape may hold is bounded, each lookup a hash: past a limit the
 * rest is left out and the group's error says what; below it, nothing
 * changes (the first 4096 models keep their counts).
 */
static void test_limits(void)
{
	json_t *g = two_scrapes(many_models);

	is_int((int)json_object_size(json_object_get(g, "models")), 4096, "limits: 4096 of 5000 model versions");
	is_int((int)json_integer_value(json_object_get(json_object_get(json_object_get(json_object_get(
		       json_object_get(g, "models"), "m4095"), "1"), "execution_summary"), "completed")),
	       2, "limits: the last kept model's count");
	is_absent(json_object_get(json_object_get(g, "models"), "m4096"), "limits: the first left out");
	ok(error_has(g, "more than 4096 model versions: 904 samples left out"), "limits: models: the error says so");
	json_decref(g);

	g = two_scrapes(many_reasons);
	is_int((int)json_object_size(json_object_get(json_object_get(json_object_get(json_object_get(g, "models"), "m"),
									 "1"), "error_summary")),
	       128, "limits: 128 of 200 error reasons");
	ok(error_has(g, "more than 128 error reasons of one model: 72 samples left out"), "limits: reasons: the error");
	json_decref(g);

	g = two_scrapes(many_bounds);
	ok(error_has(g, "more than 512 bounds of one distribution: 89 samples left out"), "limits: bounds: the error");
	json_decref(g);

	g = two_scrapes(many_gpus);
	is_int((int)json_object_size(json_object_get(g, "server_devices")), 256, "limits: 256 of 300 server devices");
	ok(error_has(g, "more than 256 server devices: 44 samples left out"), "limits: devices: the error");
	json_decref(g);
}

/* 3900 models, each named by 1000 control bytes (the last four: its number), or by 1000 letters. */
static void long_names(struct text *t, int v, char first)
{
	char name[1001];

	addf(t, "# TYPE nv_inference_request_success counter\n");
	for (int i = 0; i < 3900; i++) {
		memset(name, first, 1000);
		for (int k = 0; k < 4; k++)
			name[996 + k] = (char)(first == 'x' ? 'a' + (i >> (4 * k) & 15) : 0x10 + (i >> (4 * k) & 15));
		name[1000] = '\0';
		/* addf's room is 256 bytes a call: the name in pieces */
		addf(t, "nv_inference_request_success{model=\"");
		for (int k = 0; k < 1000; k += 200)
			addf(t, "%.200s", name + k);
		addf(t, "\",version=\"1\"} %d\n", v);
	}
}

static void control_names(struct text *t, int v)
{
	long_names(t, v, '\x01');
}

static void letter_names(struct text *t, int v)
{
	long_names(t, v, 'x');
}

/* Whether every key of models is at most 256 bytes, without a control byte, and ends in '~' and 16 hex digits. */
static int names_bounded(json_t *models)
{
	const char *k;
	json_t *v;

	json_object_foreach(models, k, v) {
		size_t n = strlen(k);

		for (size_t i = 0; i < n; i++)
			if ((unsigned char)k[i] < 0x20)
				return 0;
		if (n != 256 || k[239] != '~' || strspn(k + 240, "0123456789abcdef") != 16)
			return 0;
	}
	return 1;
}

/*
 * A server's names are bounded where they are read: 256 bytes, control
 * bytes as '?', a longer one cut and ended by a hash of all of it, so that
 * 3900 names alike in their first bytes stay 3900 models; the group stays
 * far below the report line.
 */
static void test_long_names(void)
{
	json_t *g = two_scrapes(control_names), *models = json_object_get(g, "models");
	const char *k;
	json_t *v;
	char *text;
	int counts = 1;

	is_int((int)json_object_size(models), 3900, "long names: 3900 models of 1000 control bytes, all kept apart");
	ok(names_bounded(models), "long names: each 256 bytes, '?' for control bytes, a hash at the end");
	json_object_foreach(models, k, v)
		counts = counts && json_integer_value(json_object_get(json_object_get(json_object_get(v, "1"),
									    "execution_summary"), "completed")) == 2;
	ok(counts, "long names: each model its own count");
	text = json_dumps(g, JSON_COMPACT);
	ok(text && strlen(text) < 2000000, "long names: the group is %zu bytes as JSON, not 23 MB",
	   text ? strlen(text) : 0);
	free(text);
	ok(!strncmp(json_object_iter_key(json_object_iter(models)), "??????????", 10), "long names: control bytes are '?'");
	json_decref(g);

	g = two_scrapes(letter_names);
	models = json_object_get(g, "models");
	is_int((int)json_object_size(models), 3900, "long names: 3900 models of 1000 letters");
	ok(names_bounded(models), "long names: letters cut the same way");
	json_decref(g);
}

/* Bytes of heap in use now (the sanitizer's allocator when it is the one). */
static size_t heap_in_use(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return __sanitizer_get_current_allocated_bytes();
#else
	struct mallinfo2 m = mallinfo2();

	return m.uordblks + m.hblkhd;
#endif
}

/* A Triton body as its documented families write it: per model its counters, 4 failure reasons, a histogram. */
static void triton_models(struct text *t, int v)
{
	static const char *const counters[] = { "nv_inference_request_success", "nv_inference_count",
						"nv_inference_exec_count", "nv_inference_request_duration_us",
						"nv_inference_queue_duration_us", "nv_inference_compute_input_duration_us",
						"nv_inference_compute_infer_duration_us",
						"nv_inference_compute_output_duration_us" };
	static const char *const reasons[] = { "REJECTED", "CANCELED", "BACKEND", "OTHER" };
	static const char *const le[] = { "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5",
					  "5", "10", "+Inf" };
	const char *h = "nv_inference_first_response_histogram_ms";

	for (size_t f = 0; f < sizeof(counters) / sizeof(*counters); f++) {
		addf(t, "# TYPE %s counter\n", counters[f]);
		for (int m = 0; m < 700; m++)
			addf(t, "%s{model=\"resnet50_variant_%04d\",version=\"1\"} %d\n", counters[f], m, v * (m + 1));
	}
	addf(t, "# TYPE nv_inference_request_failure counter\n");
	for (int m = 0; m < 700; m++)
		for (int r = 0; r < 4; r++)
			addf(t, "nv_inference_request_failure{model=\"resnet50_variant_%04d\",version=\"1\",reason=\"%s\"} %d\n",
			     m, reasons[r], v);
	addf(t, "# TYPE %s histogram\n", h);
	for (int m = 0; m < 700; m++) {
		for (int b = 0; b < 12; b++)
			addf(t, "%s_bucket{model=\"resnet50_variant_%04d\",version=\"1\",le=\"%s\"} %d\n", h, m, le[b],
			     v * (b + 1));
		addf(t, "%s_sum{model=\"resnet50_variant_%04d\",version=\"1\"} %d\n", h, m, v * 100);
		addf(t, "%s_count{model=\"resnet50_variant_%04d\",version=\"1\"} %d\n", h, m, v * 12);
	}
}

/* Many models, each with one short counter: the most samples a body of its size can hold. */
static void counters_only(struct text *t, int v)
{
	addf(t, "# TYPE nv_inference_request_success counter\n");
	for (int m = 0; m < 43000; m++)
		addf(t, "nv_inference_request_success{model=\"model_%05d\",version=\"1\"} %d\n", m, v * (m + 1));
}

/*
 * What an endpoint keeps between scrapes is a small multiple of its body:
 * the latest scrape and the one the previous period used (their samples and
 * strings), the period's sums per model and the lookups. Four periods of a
 * steady body, then the heap held by the reader is weighed against the body.
 */
static void test_memory(void)
{
	static const struct {
		const char *what;
		void (*body)(struct text *, int);
		double most; /* heap held, in bodies */
	} cases[] = {
		{ "a Triton body of 700 models", triton_models, 5.0 },
		{ "43,000 one-line counters", counters_only, 5.0 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(*cases); c++) {
		size_t before = heap_in_use(), held, len = 0;
		struct infer *in = infer_new(INFER_TRITON);
		struct text t = { NULL, 0, 0 };
		char err[256];
		int rc = 0;

		for (int k = 1; k <= 4; k++) {
			json_t *g = json_object();

			t.n = 0;
			cases[c].body(&t, k);
			len = t.n;
			rc |= infer_update(in, t.p, t.n, (int64_t)k * 1000000000, err, sizeof(err));
			infer_execution_stats(in, g, NULL);
			json_decref(g);
		}
		free(t.p);
		t.p = NULL;
		held = heap_in_use() - before;
		ok(rc == 0, "memory: %s: four scrapes read", cases[c].what);
		ok((double)held <= cases[c].most * (double)len, "memory: %s: %.1f MB held for a %.1f MB body (%.1f×, at most %.0f×)",
		   cases[c].what, held / 1e6, len / 1e6, (double)held / (double)len, cases[c].most);
		infer_free(in);
	}
}

/* A series written twice in one body counts once, as Prometheus keeps the first; a negative device gauge is no reading. */
static void test_duplicates(void)
{
	static const char b1[] = "nv_inference_request_success{model=\"a\",version=\"1\"} 10\n"
				 "nv_inference_request_success{model=\"a\",version=\"1\"} 10\n"
				 "nv_gpu_utilization{gpu_uuid=\"GPU-1\"} 0.5\n"
				 "nv_gpu_utilization{gpu_uuid=\"GPU-2\"} -0.25\n"
				 "nv_gpu_power_usage{gpu_uuid=\"GPU-2\"} 70\n";
	static const char b2[] = "nv_inference_request_success{model=\"a\",version=\"1\"} 13\n"
				 "nv_inference_request_success{model=\"a\",version=\"1\"} 99\n"
				 "nv_gpu_utilization{gpu_uuid=\"GPU-1\"} 0.5\n"
				 "nv_gpu_utilization{gpu_uuid=\"GPU-2\"} -0.25\n"
				 "nv_gpu_power_usage{gpu_uuid=\"GPU-2\"} 70\n";
	struct infer *in = infer_new(INFER_TRITON);
	json_t *g = json_object();
	char err[256];

	is_int(infer_update(in, b1, sizeof(b1) - 1, 0, err, sizeof(err)), 0, "duplicates: first scrape");
	infer_execution_stats(in, g, NULL);
	json_decref(g);
	g = json_object();
	is_int(infer_update(in, b2, sizeof(b2) - 1, 1000000000, err, sizeof(err)), 0, "duplicates: second scrape");
	infer_execution_stats(in, g, NULL);
	is_int((int)json_integer_value(json_object_get(json_object_get(json_object_get(json_object_get(
		       json_object_get(g, "models"), "a"), "1"), "execution_summary"), "completed")),
	       3, "duplicates: the first of a series written twice, not their sum");
	is_real(json_object_get(json_object_get(json_object_get(g, "server_devices"), "GPU-1"), "utilization_ratio"), 0.5,
		"duplicates: a GPU's utilization");
	is_absent(json_object_get(json_object_get(json_object_get(g, "server_devices"), "GPU-2"), "utilization_ratio"),
		  "a negative utilization is left out");
	is_real(json_object_get(json_object_get(json_object_get(g, "server_devices"), "GPU-2"), "power_watts"), 70,
		"and the device's other fields stay");
	json_decref(g);
	infer_free(in);
}

/*
 * A latency_histograms entry: le (seconds, n finite bounds) and counts (n + 1
 * per-bucket increments, integers) exactly, sum to the last bit, count the
 * +Inf bucket; and the numbers are those of the percentiles beside it
 * (ref_quantile of the same buckets, cumulated again).
 */
static void check_hist(json_t *h, const double *le, size_t n, const long long *counts, double sum, const char *what,
		       json_t *pcts)
{
	json_t *jl = json_object_get(h, "le"), *jc = json_object_get(h, "counts");
	double bounds[64], cum[64], acc = 0;
	long long total = 0;
	int same = json_array_size(jl) == n && json_array_size(jc) == n + 1;
	char name[256];

	ok(json_is_object(h) && json_object_size(h) == 4, "%s: histogram with le, counts, sum, count", what);
	for (size_t i = 0; same && i <= n; i++) {
		if (i < n)
			same = json_is_real(json_array_get(jl, i)) && json_real_value(json_array_get(jl, i)) == le[i];
		same = same && json_is_integer(json_array_get(jc, i)) && json_integer_value(json_array_get(jc, i)) == counts[i];
		total += counts[i];
		acc += (double)counts[i];
		bounds[i] = i < n ? le[i] : INFINITY;
		cum[i] = acc;
	}
	if (!ok(same, "%s: bounds and per-bucket counts", what)) {
		char *t = json_dumps(h, JSON_COMPACT);

		fprintf(stderr, "#   got: %s\n", t ? t : "?");
		free(t);
	}
	snprintf(name, sizeof(name), "%s: sum", what);
	is_real(json_object_get(h, "sum"), sum, name);
	snprintf(name, sizeof(name), "%s: count, the +Inf bucket", what);
	is_count(json_object_get(h, "count"), total, name);
	if (pcts) {
		snprintf(name, sizeof(name), "%s: the percentiles are these buckets'", what);
		check_pcts(pcts, bounds, cum, (int)n + 1, 1, name);
	}
}

/* Fill a fresh group, kept out of the golden file (which has every group as the option-off default writes). */
static void stats_hist(struct infer *in)
{
	json_decref(group);
	group = json_object();
	infer_execution_stats(in, group, NULL);
}

/* "latency_histograms": the period's buckets of each histogram distribution, on when asked only. */
static void test_histograms(void)
{
	struct infer *in = infer_new(INFER_AUTO);
	const char *m = "meta-llama/Llama-3.1-8B-Instruct";
	static const double eb[] = { 0.5, 1.0, 2.5, 5.0, 10.0 }, fb[] = { 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5 },
			    pb[] = { 0.01, 0.025, 0.05, 0.075, 0.1 }, qb[] = { 0.01, 0.05, 0.1, 0.5 },
			    tb[] = { 0.1, 0.5, 2, 5 }, mb[] = { 1, 2 };
	static const long long ec[] = { 1, 9, 15, 8, 2, 0 }, fc[] = { 2, 8, 8, 7, 3, 5, 2, 0 },
			       pc[] = { 200, 23800, 5000, 800, 200, 0 }, qc[] = { 30, 3, 1, 1, 0 },
			       fr[] = { 20, 25, 55, 50, 30, 15, 5, 0 }, tc[] = { 0, 1, 1, 1, 1 }, mc[] = { 4, 1, 5 };
	static const char a[] = "vllm:e2e_request_latency_seconds_bucket{model_name=\"a\",le=\"1\"} 0\n"
				"vllm:e2e_request_latency_seconds_bucket{model_name=\"a\",le=\"+Inf\"} 0\n"
				"vllm:e2e_request_latency_seconds_sum{model_name=\"a\"} 0\n"
				"vllm:e2e_request_latency_seconds_count{model_name=\"a\"} 0\n"
				"vllm:e2e_request_latency_seconds_bucket{model_name=\"b\",le=\"2\"} 0\n"
				"vllm:e2e_request_latency_seconds_bucket{model_name=\"b\",le=\"1\"} 0\n"
				"vllm:e2e_request_latency_seconds_bucket{model_name=\"b\",le=\"+Inf\"} 0\n"
				"vllm:e2e_request_latency_seconds_sum{model_name=\"b\"} 0\n"
				"vllm:e2e_request_latency_seconds_count{model_name=\"b\"} 0\n";
	static const char b[] = "vllm:e2e_request_latency_seconds_bucket{model_name=\"a\",le=\"1\"} 3\n"
				"vllm:e2e_request_latency_seconds_bucket{model_name=\"a\",le=\"+Inf\"} 4\n"
				"vllm:e2e_request_latency_seconds_sum{model_name=\"a\"} 4.5\n"
				"vllm:e2e_request_latency_seconds_count{model_name=\"a\"} 4\n"
				"vllm:e2e_request_latency_seconds_bucket{model_name=\"b\",le=\"2\"} 5\n"
				"vllm:e2e_request_latency_seconds_bucket{model_name=\"b\",le=\"1\"} 1\n"
				"vllm:e2e_request_latency_seconds_bucket{model_name=\"b\",le=\"+Inf\"} 6\n"
				"vllm:e2e_request_latency_seconds_sum{model_name=\"b\"} 10.25\n"
				"vllm:e2e_request_latency_seconds_count{model_name=\"b\"} 6\n";
	static const long long ac[] = { 3, 1 };
	static const double ab[] = { 1 };
	char err[64];

	/* off (the default): no histograms, whatever the server serves */
	feed(in, "vllm_1.prom", 0);
	stats_hist(in);
	feed(in, "vllm_2.prom", 5);
	stats_hist(in);
	is_absent(at("models", m, "", "latency_histograms", NULL), "off: no model histograms");
	is_absent(at("latency_histograms", NULL), "off: no runtime histogram");
	infer_free(in);

	in = infer_new(INFER_AUTO);
	infer_set_histograms(in, 1);
	feed(in, "vllm_1.prom", 0);
	stats_hist(in);
	is_absent(at("models", m, "", "latency_histograms", NULL), "on, first call: no period, no histograms");
	feed(in, "vllm_2.prom", 5);
	stats_hist(in);
	check_hist(at("models", m, "", "latency_histograms", "total_latency", NULL), eb, 5, ec, 387.5 - 300, "vLLM e2e",
		   at("models", m, "", "latency_stats", "total_latency", NULL));
	check_hist(at("models", m, "", "latency_histograms", "time_to_first_token", NULL), fb, 7, fc, 9.75 - 7.5,
		   "vLLM TTFT", at("models", m, "", "latency_stats", "time_to_first_token", NULL));
	check_hist(at("models", m, "", "latency_histograms", "time_per_output_token", NULL), pb, 5, pc, 3750.0 - 3000,
		   "vLLM TPOT", at("models", m, "", "latency_stats", "time_per_output_token", NULL));
	check_hist(at("models", m, "", "latency_histograms", "queue", NULL), qb, 4, qc, 2.35 - 2.0, "vLLM queue",
		   at("models", m, "", "latency_stats", "queue", NULL));
	is_int((int)json_object_size(at("models", m, "", "latency_histograms", NULL)), 4, "vLLM: the four, no other");
	check_hist(at("latency_histograms", "total_latency", NULL), eb, 5, ec, 387.5 - 300, "runtime merged e2e",
		   at("latency_stats", "total_latency", NULL));
	is_int((int)json_object_size(at("latency_histograms", NULL)), 1, "runtime: total_latency only");
	feed(in, "vllm_3_reset.prom", 10);
	stats_hist(in);
	check_hist(at("models", m, "", "latency_histograms", "time_to_first_token", NULL), fb, 7, fr, 12.0,
		   "restarted server: the new process's buckets", NULL);
	infer_free(in);

	/* Triton: TTFT in milliseconds, in seconds here; counters only (resnet50): none */
	in = infer_new(INFER_AUTO);
	infer_set_histograms(in, 1);
	feed(in, "triton_1.prom", 0);
	stats_hist(in);
	feed(in, "triton_2.prom", 5);
	stats_hist(in);
	check_hist(at("models", "llama", "1", "latency_histograms", "time_to_first_token", NULL), tb, 4, tc, 4000 / 1e3,
		   "Triton TTFT, ms to s", at("models", "llama", "1", "latency_stats", "time_to_first_token", NULL));
	is_absent(at("models", "resnet50", "1", "latency_histograms", NULL), "counters only: no histograms");
	is_absent(at("latency_histograms", NULL), "no request histogram: no runtime histogram");
	infer_free(in);

	/* TGI (one unnamed model) and OVMS (µs; gRPC and REST series summed by bound, their sums added) */
	{
		static const double db[] = { 0.1, 0.5, 1, 2, 5, 10 }, gq[] = { 0.001, 0.01, 0.1, 1 },
				    gt[] = { 0.01, 0.02, 0.05, 0.1 }, rb[] = { 1585.8 / 1e6, 2775.1 / 1e6, 4856.5 / 1e6,
									       8498.8 / 1e6 },
				    wb[] = { 10 / 1e6, 100 / 1e6, 1000 / 1e6 };
		static const long long dc[] = { 2, 6, 7, 3, 0, 0, 0 }, qc2[] = { 10, 4, 2, 2, 0 },
				       tc2[] = { 3, 7, 6, 2, 0 }, rc[] = { 32, 32, 11, 5, 0 }, wc[] = { 60, 15, 5, 0 };

		in = infer_new(INFER_AUTO);
		infer_set_histograms(in, 1);
		feed(in, "tgi_1.prom", 0);
		stats_hist(in);
		feed(in, "tgi_2.prom", 5);
		stats_hist(in);
		check_hist(at("models", "", "", "latency_histograms", "total_latency", NULL), db, 6, dc, 115.75 - 95.5,
			   "TGI request", at("models", "", "", "latency_stats", "total_latency", NULL));
		check_hist(at("models", "", "", "latency_histograms", "queue", NULL), gq, 4, qc2, 3.65 - 3.2, "TGI queue",
			   at("models", "", "", "latency_stats", "queue", NULL));
		check_hist(at("models", "", "", "latency_histograms", "time_per_output_token", NULL), gt, 4, tc2,
			   2.64 - 2.1, "TGI TPOT", at("models", "", "", "latency_stats", "time_per_output_token", NULL));
		check_hist(at("latency_histograms", "total_latency", NULL), db, 6, dc, 115.75 - 95.5, "TGI runtime", NULL);
		infer_free(in);
		in = infer_new(INFER_AUTO);
		infer_set_histograms(in, 1);
		feed(in, "ovms_1.prom", 0);
		stats_hist(in);
		feed(in, "ovms_2.prom", 5);
		stats_hist(in);
		check_hist(at("models", "resnet", "1", "latency_histograms", "total_latency", NULL), rb, 4, rc,
			   215000 / 1e6, "OVMS request, gRPC and REST summed by le, µs to s", NULL);
		check_hist(at("models", "resnet", "1", "latency_histograms", "queue", NULL), wb, 3, wc, 1000 / 1e6,
			   "OVMS wait for infer request", NULL);
		infer_free(in);
	}

	/* summaries: none */
	in = infer_new(INFER_TRITON);
	infer_set_histograms(in, 1);
	feed(in, "triton_summary_1.prom", 0);
	stats_hist(in);
	feed(in, "triton_summary_2.prom", 5);
	stats_hist(in);
	ok(at("models", "my_model", "1", "latency_stats", "total_latency", NULL) != NULL, "summary: percentiles");
	is_absent(at("models", "my_model", "1", "latency_histograms", NULL), "summary: no histograms");
	infer_free(in);

	/* merged over models by bound (b's bounds out of order on the wire), sums added */
	in = infer_new(INFER_VLLM);
	infer_set_histograms(in, 1);
	infer_update(in, a, sizeof(a) - 1, 0, err, sizeof(err));
	stats_hist(in);
	infer_update(in, b, sizeof(b) - 1, 1, err, sizeof(err));
	stats_hist(in);
	check_hist(at("models", "a", "", "latency_histograms", "total_latency", NULL), ab, 1, ac, 4.5, "model a", NULL);
	check_hist(at("latency_histograms", "total_latency", NULL), mb, 2, mc, 4.5 + 10.25, "merged by le, sums added",
		   at("latency_stats", "total_latency", NULL));
	infer_free(in);
}

int main(void)
{
	test_names();
	test_recognition();
	test_unknown();
	test_ncs2();
	test_bad_body();
	test_triton();
	test_triton_summary();
	test_vllm();
	test_tgi();
	test_torchserve();
	test_ovms();
	test_merge();
	test_openmetrics();
	test_labels();
	test_series_order();
	test_limits();
	test_long_names();
	test_memory();
	test_duplicates();
	test_histograms();
	test_golden();
	json_decref(group);
	json_decref(all);
	return done_testing();
}
