/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for accel-prom's store and renderer (common/series/prom_store.c):
 * value formatting and escaping, counters over reports (also reports with
 * no runtimes), runtime errors, staleness on a fake clock, health, instance
 * changes, bad values, the series cap, and golden expositions of the three
 * input kinds compared byte for byte.
 *
 * PROM_GOLDEN_UPDATE=1 rewrites the golden files instead of comparing.
 */
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"
#include "../../common/series/prom_expo.h"
#include "../../common/series/prom_store.h"
#include "tap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GOLDEN "tests/fixtures/prom"
#define T0 (1000 * NS_PER_S)              /* the fake monotonic clock's start */
#define REAL0 (1795000000LL * NS_PER_S)   /* the fake wall clock's start */

static struct prom_store *new_store(int64_t staleness_ms)
{
	return prom_store_new(
		&(struct prom_store_opts){ .staleness_ms = staleness_ms, .node_name = "node-1", .version = "9.9.9" });
}

static void feed(struct prom_store *st, const char *json, int64_t t)
{
	json_error_t je;
	json_t *r = json_loads(json, 0, &je);

	if (!r) {
		printf("# bad test JSON: %s\n", je.text);
		exit(1);
	}
	prom_store_report(st, r, "test:1", t, REAL0 + (t - T0));
	json_decref(r);
}

/* Render and keep the text (or OpenMetrics) body as a new string. */
static char *render(struct prom_store *st, int64_t t, int om)
{
	struct prom_expo *e = prom_store_render(st, t, REAL0 + (t - T0));
	char *s = xstrdup(e->body[om ? EXPO_OPENMETRICS : EXPO_TEXT].data);

	prom_expo_unref(e);
	return s;
}

/* The value printed for the series whose line starts with prefix followed by a space, or NULL. */
static const char *value_of(const char *text, const char *prefix)
{
	static char v[64];
	size_t n = strlen(prefix);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (!strncmp(p, prefix, n) && p[n] == ' ') {
			size_t k = strcspn(p + n + 1, "\n");

			snprintf(v, sizeof(v), "%.*s", (int)k, p + n + 1);
			return v;
		}
	}
	return NULL;
}

static void test_format(void)
{
	static const struct {
		double v;
		const char *want;
	} cases[] = {
		{ 0, "0" },
		{ -0.0, "0" },
		{ 1, "1" },
		{ -3, "-3" },
		{ 0.5, "0.5" },
		{ 0.1, "0.1" },
		{ 1.0 / 3, "0.3333333333333333" },
		{ 0.101 - 1e-17, "0.10099999999999999" },
		{ 123456.789, "123456.789" },
		{ 16481140736, "16481140736" },
		{ 9007199254740993.0, "9007199254740992" },
		{ 1e18, "1000000000000000000" },
		{ 1e19, "1e+19" },
		{ 1e300, "1e+300" },
		{ -1.5e-7, "-1.5e-07" },
		{ 5e-324, "4.94065645841247e-324" },
		{ NAN, "NaN" },
		{ INFINITY, "+Inf" },
		{ -INFINITY, "-Inf" },
	};
	char buf[32];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t n = prom_format_value(cases[i].v, buf);

		is_str(buf, cases[i].want, "format value");
		is_int(n, strlen(cases[i].want), "format value length");
	}
}

static void test_escape(void)
{
	static const char *const cases[][2] = {
		{ "plain", "plain" },
		{ "a\"b", "a\\\"b" },
		{ "a\\b", "a\\\\b" },
		{ "a\nb", "a\\nb" },
		{ "\"\\\n", "\\\"\\\\\\n" },
		{ "推論 ok", "推論 ok" },
		{ "", "" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct buf b;

		buf_init(&b, 64);
		ok(prom_escape_label(&b, cases[i][0]) == 0, "escape returns 0");
		is_str(b.data ? b.data : "", cases[i][1], "escape label value");
		buf_free(&b);
	}
	{
		struct buf b;

		buf_init(&b, 4);
		ok(prom_escape_label(&b, "abcdef") == -ENOSPC, "escape past the cap: -ENOSPC");
		buf_free(&b);
	}
}

/* A neuron-monitor 2.x report with one runtime (or none) and execution counts. */
static char *nm2x(const char *tag, int completed, int timed_out, double util, long long mem_used)
{
	char rts[8192] = "";

	if (tag)
		snprintf(rts, sizeof(rts),
			 "{\"pid\":42,\"neuron_runtime_tag\":\"%s\",\"error\":\"\",\"report\":{"
			 "\"execution_stats\":{\"period\":1.0,\"error\":\"\",\"error_summary\":{\"generic\":0},"
			 "\"execution_summary\":{\"completed\":%d,\"timed_out\":%d},"
			 "\"latency_stats\":{\"total_latency\":null,\"device_latency\":null}},"
			 "\"neuroncore_counters\":{\"period\":1.0,\"error\":\"\","
			 "\"neuroncores_in_use\":{\"0\":{\"neuroncore_utilization\":%g}}}}}",
			 tag, completed, timed_out, util);
	return xasprintf("{\"neuron_runtime_data\":[%s],\"system_data\":{"
			 "\"memory_info\":{\"period\":1.0,\"error\":\"\",\"memory_total_bytes\":1000,\"memory_used_bytes\":%lld,"
			 "\"swap_total_bytes\":0,\"swap_used_bytes\":0},"
			 "\"neuron_hw_counters\":{\"period\":1.0,\"error\":\"\",\"neuron_devices\":[{\"neuron_device_index\":0,"
			 "\"mem_ecc_corrected\":1}]}},"
			 "\"instance_info\":{\"instance_id\":\"i-1\"},\"neuron_hardware_info\":{\"neuron_device_count\":1,"
			 "\"neuroncore_per_device_count\":2,\"error\":\"\"}}",
			 rts, mem_used);
}

#define LBL "{availability_zone=\"\",instance_id=\"i-1\",instance_name=\"\",instance_type=\"\",region=\"\","
#define COMPLETED(tag) "execution_status_total" LBL "runtime_tag=\"" tag "\",status_type=\"completed\",subnet_id=\"\"}"
#define MEMUSED "system_memory_used_bytes" LBL "subnet_id=\"\"}"
#define ECC "hardware_ecc_events_total" LBL_ECC
#define LBL_ECC                                                                                            \
	"{availability_zone=\"\",event_type=\"mem_ecc_corrected\",instance_id=\"i-1\",instance_name=\"\","   \
	"instance_type=\"\",neuron_device_index=\"0\",region=\"\",subnet_id=\"\"}"

static void feed_nm2x(struct prom_store *st, const char *tag, int completed, int timed_out, double util,
		      long long mem, int64_t t)
{
	char *j = nm2x(tag, completed, timed_out, util, mem);

	feed(st, j, t);
	free(j);
}

static void test_counters(void)
{
	struct prom_store *st = new_store(0);
	char *text;

	feed_nm2x(st, "app", 5, 0, 50, 100, T0);
	feed_nm2x(st, "app", 7, 1, 60, 200, T0 + NS_PER_S);
	text = render(st, T0 + NS_PER_S, 0);
	is_str(value_of(text, COMPLETED("app")), "12", "counter: sum of per-period counts");
	is_str(value_of(text, ECC), "2", "system counter: sum over reports");
	is_str(value_of(text, MEMUSED), "200", "gauge: the latest value");
	free(text);

	/* A report with no runtimes: counters and system series stay (the Python exporter clears them). */
	feed_nm2x(st, NULL, 0, 0, 0, 300, T0 + 2 * NS_PER_S);
	text = render(st, T0 + 2 * NS_PER_S, 0);
	is_str(value_of(text, COMPLETED("app")), "12", "no runtimes: the counter keeps its value");
	is_str(value_of(text, ECC), "3", "no runtimes: the system counter goes on");
	is_str(value_of(text, MEMUSED), "300", "no runtimes: system gauges still update");
	free(text);

	feed_nm2x(st, "app", 3, 0, 10, 300, T0 + 3 * NS_PER_S);
	text = render(st, T0 + 3 * NS_PER_S, 0);
	is_str(value_of(text, COMPLETED("app")), "15", "the runtime is back: the counter goes on from 12");
	free(text);
	prom_store_free(st);
}

static void test_runtime_error(void)
{
	struct prom_store *st = new_store(0);
	char *text, *err;

	feed_nm2x(st, "app", 5, 0, 50, 100, T0);
	feed_nm2x(st, "other", 1, 0, 20, 100, T0);
	text = render(st, T0, 0);
	ok(value_of(text, "neuroncore_utilization_ratio{availability_zone=\"\",instance_id=\"i-1\",instance_name=\"\","
			  "instance_type=\"\",neuroncore=\"0\",region=\"\",runtime_tag=\"app\",subnet_id=\"\"}") != NULL,
	   "runtime gauge present");
	free(text);
	err = xasprintf("{\"neuron_runtime_data\":[{\"pid\":42,\"neuron_runtime_tag\":\"app\",\"error\":\"gone\","
			"\"report\":{}}],\"instance_info\":{\"instance_id\":\"i-1\"}}");
	feed(st, err, T0 + NS_PER_S);
	free(err);
	text = render(st, T0 + NS_PER_S, 0);
	ok(!strstr(text, "runtime_tag=\"app\""), "runtime error: its series leave the exposition");
	ok(strstr(text, "runtime_tag=\"other\"") != NULL, "runtime error: other runtimes stay");
	is_str(value_of(text, "accel_prom_group_errors_total{group=\"runtime\"}"), "1", "runtime error counted");
	free(text);
	feed_nm2x(st, "app", 2, 0, 50, 100, T0 + 2 * NS_PER_S);
	text = render(st, T0 + 2 * NS_PER_S, 0);
	is_str(value_of(text, COMPLETED("app")), "7", "back after an error: the hidden counter goes on (5 + 2)");
	free(text);
	prom_store_free(st);
}

static void test_staleness_and_health(void)
{
	struct prom_store *st = new_store(0);
	char why[256], *text;

	ok(!prom_store_health(st, T0, why, sizeof(why)), "health: fails before the first report");
	is_str(why, "no report received yet", "health reason before the first report");
	is_int(prom_store_staleness_ms(st), 30000, "default staleness: 30 s before any period is seen");
	feed_nm2x(st, "app", 5, 0, 50, 100, T0);
	ok(prom_store_health(st, T0 + NS_PER_S, why, sizeof(why)), "health: ok after a report");
	ok(prom_store_health(st, T0 + 30 * NS_PER_S, why, sizeof(why)), "health: ok at the edge of the window");
	ok(!prom_store_health(st, T0 + 31 * NS_PER_S, why, sizeof(why)), "health: fails past the window");
	ok(strstr(why, "staleness window") != NULL, "health reason names the window");

	prom_store_sweep(st, T0 + 30 * NS_PER_S);
	text = render(st, T0 + 30 * NS_PER_S, 0);
	ok(value_of(text, MEMUSED) != NULL, "sweep within the window keeps series");
	free(text);
	prom_store_sweep(st, T0 + 31 * NS_PER_S);
	text = render(st, T0 + 31 * NS_PER_S, 0);
	ok(value_of(text, MEMUSED) == NULL, "stale gauge dropped");
	ok(value_of(text, COMPLETED("app")) == NULL, "stale counter out of the exposition");
	is_str(value_of(text, "accel_prom_series"), "0", "no series left");
	is_str(value_of(text, "accel_prom_last_report_age_seconds"), "31", "age of the last report");
	free(text);

	/* The counter comes back within the hour: it goes on. */
	feed_nm2x(st, "app", 1, 0, 50, 100, T0 + 40 * NS_PER_S);
	text = render(st, T0 + 40 * NS_PER_S, 0);
	is_str(value_of(text, COMPLETED("app")), "6", "stale counter back: goes on from 5");
	free(text);
	/* After an hour away it is forgotten. */
	prom_store_sweep(st, T0 + 40 * NS_PER_S + 31 * NS_PER_S + (int64_t)PROM_HIDDEN_KEEP_MS * NS_PER_MS);
	prom_store_sweep(st, T0 + 40 * NS_PER_S + 32 * NS_PER_S + 2 * (int64_t)PROM_HIDDEN_KEEP_MS * NS_PER_MS);
	feed_nm2x(st, "app", 1, 0, 50, 100, T0 + 3 * (int64_t)PROM_HIDDEN_KEEP_MS * NS_PER_MS);
	text = render(st, T0 + 3 * (int64_t)PROM_HIDDEN_KEEP_MS * NS_PER_MS, 0);
	is_str(value_of(text, COMPLETED("app")), "1", "a counter away for over an hour starts again");
	free(text);

	prom_store_eof(st, "end of input", T0 + 3 * (int64_t)PROM_HIDDEN_KEEP_MS * NS_PER_MS + NS_PER_S);
	ok(!prom_store_health(st, T0 + 3 * (int64_t)PROM_HIDDEN_KEEP_MS * NS_PER_MS + 2 * NS_PER_S, why, sizeof(why)),
	   "health: fails after the end of input");
	ok(strstr(why, "input ended") && strstr(why, "end of input"), "health reason names the end of input");
	text = render(st, T0 + 3 * (int64_t)PROM_HIDDEN_KEEP_MS * NS_PER_MS + 2 * NS_PER_S, 0);
	is_str(value_of(text, "accel_prom_input_open"), "0", "accel_prom_input_open 0 after the end");
	free(text);
	prom_store_free(st);

	/* The window follows the longest period: 5 x 10 s. */
	st = new_store(0);
	feed(st, "{\"neuron_runtime_data\":[],\"system_data\":{\"memory_info\":{\"period\":10.0,\"error\":\"\","
		 "\"memory_total_bytes\":1}},\"instance_info\":{}}",
	     T0);
	is_int(prom_store_staleness_ms(st), 50000, "default staleness: 5 x the longest period");
	prom_store_free(st);
	/* --staleness wins. */
	st = new_store(2000);
	feed_nm2x(st, "app", 5, 0, 50, 100, T0);
	is_int(prom_store_staleness_ms(st), 2000, "--staleness sets the window");
	ok(!prom_store_health(st, T0 + 3 * NS_PER_S, why, sizeof(why)), "health fails after a short window");
	prom_store_free(st);
}

static void test_instance_change(void)
{
	struct prom_store *st = new_store(0);
	char *text;

	feed(st, "{\"neuron_runtime_data\":[],\"system_data\":{\"memory_info\":{\"period\":1,\"error\":\"\","
		 "\"memory_total_bytes\":1}},\"instance_info\":{\"instance_id\":\"\"}}",
	     T0);
	feed(st, "{\"neuron_runtime_data\":[],\"system_data\":{\"memory_info\":{\"period\":1,\"error\":\"\","
		 "\"memory_total_bytes\":2}},\"instance_info\":{\"instance_id\":\"i-2\"}}",
	     T0 + NS_PER_S);
	text = render(st, T0 + NS_PER_S, 0);
	ok(!strstr(text, "instance_id=\"\""), "instance labels changed: the old series leave at once");
	ok(strstr(text, "system_memory_total_bytes{availability_zone=\"\",instance_id=\"i-2\"") != NULL,
	   "instance labels changed: the new series are there");
	free(text);
	prom_store_free(st);
}

static void test_bad_values(void)
{
	struct prom_store *st = new_store(0);
	char *text;

	log_init("test", LOG_LVL_SILENT);
	feed(st, "{\"neuron_runtime_data\":[],\"system_data\":{\"memory_info\":{\"period\":1,\"error\":\"\","
		 "\"memory_total_bytes\":\"lots\",\"memory_used_bytes\":5}},\"instance_info\":{}}",
	     T0);
	feed(st, "{\"neuron_runtime_data\":[{\"pid\":1,\"neuron_runtime_tag\":\"a\",\"error\":\"\",\"report\":{"
		 "\"execution_stats\":{\"period\":1,\"error\":\"\",\"execution_summary\":{\"completed\":-4,\"timed_out\":2}}}}],"
		 "\"instance_info\":{}}",
	     T0);
	text = render(st, T0, 0);
	ok(!strstr(text, "system_memory_total_bytes"), "a string where a number belongs: no series");
	ok(strstr(text, "system_memory_used_bytes") != NULL, "the group's other values are kept");
	ok(!strstr(text, "status_type=\"completed\""), "a negative counter increment is refused");
	ok(strstr(text, "status_type=\"timed_out\"") != NULL, "the other counter is kept");
	is_str(value_of(text, "accel_prom_bad_values_total"), "2", "bad values counted");
	free(text);
	prom_store_bad_line(st, STREAM_BAD_JSON);
	prom_store_bad_line(st, STREAM_BAD_TOO_LONG);
	prom_store_bad_line(st, STREAM_BAD_TOO_LONG);
	text = render(st, T0, 0);
	is_str(value_of(text, "accel_prom_bad_lines_total{reason=\"too_long\"}"), "2", "bad lines by reason");
	is_str(value_of(text, "accel_prom_bad_lines_total{reason=\"not_object\"}"), "0", "every reason is listed");
	free(text);
	prom_store_free(st);
	log_init("test", LOG_LVL_WARN);
}

static void test_series_cap(void)
{
	struct prom_store *st = new_store(0);
	struct buf b;
	char *text;

	buf_init(&b, (size_t)64 << 20);
	buf_printf(&b, "{\"neuron_runtime_data\":[{\"pid\":1,\"neuron_runtime_tag\":\"a\",\"error\":\"\",\"report\":{"
		       "\"neuroncore_counters\":{\"period\":1,\"error\":\"\",\"neuroncores_in_use\":{");
	for (int i = 0; i < PROM_SERIES_MAX + 10; i++)
		buf_printf(&b, "%s\"%d\":{\"neuroncore_utilization\":1}", i ? "," : "", i);
	buf_printf(&b, "}}}}],\"instance_info\":{}}");
	feed(st, b.data, T0);
	buf_free(&b);
	ok(prom_store_nseries(st) <= PROM_SERIES_MAX, "series capped");
	text = render(st, T0, 0);
	ok(value_of(text, "accel_prom_series_refused_total") && strcmp(value_of(text, "accel_prom_series_refused_total"), "0"),
	   "refused samples counted");
	free(text);
	prom_store_free(st);
}

/* Run from here to stop_capture with stderr going to a temporary file; stop_capture returns its text. */
static int saved_stderr = -1;
static FILE *capture_f;

static void start_capture(void)
{
	fflush(stderr);
	capture_f = tmpfile();
	saved_stderr = dup(2);
	if (!capture_f || saved_stderr < 0 || dup2(fileno(capture_f), 2) < 0) {
		printf("# cannot capture stderr\n");
		exit(1);
	}
}

static char *stop_capture(void)
{
	char *text = xmalloc(1 << 16);
	size_t n;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	rewind(capture_f);
	n = fread(text, 1, (1 << 16) - 1, capture_f);
	text[n] = '\0';
	fclose(capture_f);
	return text;
}

static size_t count_of(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/*
 * Runtimes that come and go (neuron-monitor tags are pids)
 * leave departed counters behind for an hour; they must not take the room
 * of live series. A sample that really finds the store full is logged
 * (rate-limited) and /health fails with the reason.
 */
static void test_departed_give_way(void)
{
	struct prom_store *st = prom_store_new(&(struct prom_store_opts){
		.staleness_ms = 1000, .node_name = "n", .version = "v", .max_series = 40 });
	struct buf b;
	char why[256], tag[32], *text, *log;
	int64_t t = T0;

	for (int i = 0; i < 300; i++, t += 2 * NS_PER_S) {
		snprintf(tag, sizeof(tag), "pid-%d", 1000 + i);
		feed_nm2x(st, tag, 1, 0, 50, 100 + i, t);
	}
	t -= 2 * NS_PER_S;
	text = render(st, t, 0);
	is_str(value_of(text, MEMUSED), "399", "after 300 runtime restarts the system series are still served");
	is_str(value_of(text, COMPLETED("pid-1299")), "1", "and the newest runtime's counter");
	is_str(value_of(text, "accel_prom_series_refused_total"), "0", "nothing refused: departed counters gave way");
	free(text);
	ok(prom_store_health(st, t, why, sizeof(why)), "health ok (%s)", why);
	/* A departed counter that is still remembered goes on from its value. */
	feed_nm2x(st, "pid-1298", 2, 0, 50, 1, t + NS_PER_S);
	text = render(st, t + NS_PER_S, 0);
	is_str(value_of(text, COMPLETED("pid-1298")), "3", "a recent departed counter is still remembered");
	free(text);
	prom_store_free(st);

	/* Live series beyond the cap: refused, logged once for many, /health fails with the reason. */
	st = prom_store_new(&(struct prom_store_opts){ .staleness_ms = 10000, .node_name = "n", .version = "v",
						       .max_series = 20 });
	buf_init(&b, (size_t)1 << 20);
	buf_printf(&b, "{\"neuron_runtime_data\":[{\"pid\":1,\"neuron_runtime_tag\":\"a\",\"error\":\"\",\"report\":{"
		       "\"neuroncore_counters\":{\"period\":1,\"error\":\"\",\"neuroncores_in_use\":{");
	for (int i = 0; i < 50; i++)
		buf_printf(&b, "%s\"%d\":{\"neuroncore_utilization\":1}", i ? "," : "", i);
	buf_printf(&b, "}}}}],\"instance_info\":{}}");
	start_capture();
	feed(st, b.data, T0);
	feed(st, b.data, T0 + NS_PER_S);
	log = stop_capture();
	buf_free(&b);
	text = render(st, T0 + NS_PER_S, 0);
	is_int(count_of(text, "\nneuroncore_utilization_ratio{"), 15, "a runtime's live series stop at its share, 3/4 of the cap");
	ok(value_of(text, "accel_prom_series_refused_total") && atoi(value_of(text, "accel_prom_series_refused_total")) >= 60,
	   "refused samples counted");
	free(text);
	is_int(count_of(log, "new series"), 1, "the refusal is logged once, not once per sample");
	ok(strstr(log, "their share: 15 series") != NULL, "the message names the share");
	if (!ok(!prom_store_health(st, T0 + 2 * NS_PER_S, why, sizeof(why)), "health fails while samples are refused"))
		printf("#   why: %s\n", why);
	ok(strstr(why, "refused") != NULL, "health names the refusal (%s)", why);
	free(log);
	prom_store_free(st);
}

/* The store is bounded by bytes as well, with the same refusal, log and health. */
static void test_byte_cap(void)
{
	const size_t cap = (size_t)1 << 20;
	struct prom_store *st = prom_store_new(&(struct prom_store_opts){
		.staleness_ms = 1000, .node_name = "n", .version = "v", .max_bytes = cap });
	char why[256], tag[2100], *text, *log;
	int64_t t = T0;

	/* Runtimes with 2 KiB tags come and go: departed counters give way under the byte cap too. */
	for (int i = 0; i < 400; i++, t += 2 * NS_PER_S) {
		memset(tag, 'x', 2048);
		snprintf(tag + 2048, sizeof(tag) - 2048, "%d", i);
		feed_nm2x(st, tag, 1, 0, 50, 100 + i, t);
	}
	t -= 2 * NS_PER_S;
	text = render(st, t, 0);
	is_str(value_of(text, MEMUSED), "499", "long tags coming and going: the system series are still served");
	is_str(value_of(text, "accel_prom_series_refused_total"), "0", "nothing refused");
	ok(value_of(text, "accel_prom_series_bytes") && strtod(value_of(text, "accel_prom_series_bytes"), NULL) <= (double)cap,
	   "accel_prom_series_bytes within the cap (%s)", value_of(text, "accel_prom_series_bytes"));
	free(text);
	ok(prom_store_health(st, t, why, sizeof(why)), "health ok (%s)", why);
	prom_store_free(st);

	/* Live series with 2 KiB labels: the byte cap stops them long before the series cap. */
	st = prom_store_new(&(struct prom_store_opts){ .staleness_ms = 10000, .node_name = "n", .version = "v",
						       .max_bytes = cap });
	start_capture();
	for (int i = 0; i < 400; i++) {
		memset(tag, 'y', 2048);
		snprintf(tag + 2048, sizeof(tag) - 2048, "%d", i);
		feed_nm2x(st, tag, 1, 0, 50, 100, T0);
	}
	log = stop_capture();
	ok(prom_store_nseries(st) > 50 && prom_store_nseries(st) < 400, "series stop at the byte cap (%zu)",
	   prom_store_nseries(st));
	text = render(st, T0, 0);
	ok(strtod(value_of(text, "accel_prom_series_bytes"), NULL) <= (double)cap, "bytes within the cap (%s)",
	   value_of(text, "accel_prom_series_bytes"));
	ok(strcmp(value_of(text, "accel_prom_series_refused_total"), "0"), "refused samples counted");
	free(text);
	is_int(count_of(log, "new series"), 1, "the refusal is logged once");
	ok(strstr(log, "--max-series-bytes") != NULL, "the message names the byte cap");
	ok(!prom_store_health(st, T0 + NS_PER_S, why, sizeof(why)) && strstr(why, "refused"), "health fails (%s)", why);
	free(log);
	prom_store_free(st);
}

/*
 * However many series the runtimes have, the node's own (system, devices)
 * find room: runtimes stop at 3/4 of each cap, series and bytes.
 */
static void test_node_share(void)
{
	struct prom_store *st = prom_store_new(&(struct prom_store_opts){ .staleness_ms = 10000, .node_name = "n",
									   .version = "v", .max_series = 40 });
	struct buf b;
	char *text, *log;

	buf_init(&b, (size_t)1 << 20);
	/* the runtime's 200 series first in the report, the system's after them */
	buf_printf(&b, "{\"neuron_runtime_data\":[{\"pid\":1,\"neuron_runtime_tag\":\"a\",\"error\":\"\",\"report\":{"
		       "\"neuroncore_counters\":{\"period\":1,\"error\":\"\",\"neuroncores_in_use\":{");
	for (int i = 0; i < 200; i++)
		buf_printf(&b, "%s\"%d\":{\"neuroncore_utilization\":1}", i ? "," : "", i);
	buf_printf(&b, "}}}}],\"system_data\":{\"memory_info\":{\"period\":1,\"error\":\"\",\"memory_total_bytes\":"
		       "1000,\"memory_used_bytes\":600,\"swap_total_bytes\":0,\"swap_used_bytes\":0}},"
		       "\"instance_info\":{\"instance_id\":\"i-1\"}}");
	start_capture();
	feed(st, b.data, T0);
	log = stop_capture();
	text = render(st, T0, 0);
	is_int(count_of(text, "\nneuroncore_utilization_ratio{"), 30, "the runtime's series stop at 3/4 of the cap");
	ok(value_of(text, "system_memory_used_bytes" LBL "subnet_id=\"\"}") != NULL,
	   "the system's series, after them in the report, are served");
	ok(strstr(log, "their share") != NULL, "the refusal names the runtimes' share");
	free(text);
	free(log);
	prom_store_free(st);
	buf_free(&b);
}

/*
 * Numbers at the edges (2^63, 2^64-1, 1e19, 1e308) through
 * the text and OpenMetrics expositions and /v1/collect: printed exactly,
 * never as a negative int64, and percent kept when the sums overflow a
 * double. (Written as reals here: integers of 2^63 and above are the
 * stream reader's to decode.)
 */
static void test_edge_numbers(void)
{
	static const struct {
		const char *in, *out, *sum;
	} cases[] = {
		{ "9223372036854775808.0", "9.223372036854776e+18", "1.8446744073709552e+19" },
		{ "18446744073709551615.0", "1.8446744073709552e+19", "3.6893488147419103e+19" },
		{ "1e19", "1e+19", "2e+19" },
		{ "1e308", "1e+308", "2e+308" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct prom_store *st = new_store(0);
		struct prom_expo *e;
		char *j, want[512], line[256];

		j = xasprintf("{\"timestamp\":\"2026-11-21T05:51:24.722Z\",\"monitor\":{\"version\":\"0.1.0\",\"seq\":0},"
			      "\"runtime_data\":[],\"system_data\":{},\"instance_info\":{\"instance_id\":\"i-1\"},"
			      "\"device_data\":[{\"device_type\":\"nvidia\",\"error\":\"\",\"report\":{\"device_memory\":{"
			      "\"period\":1.0,\"error\":\"\",\"devices\":{"
			      "\"0\":{\"uuid\":\"GPU-a\",\"error\":\"\",\"total_bytes\":%s,\"used_bytes\":%s},"
			      "\"1\":{\"uuid\":\"GPU-b\",\"error\":\"\",\"total_bytes\":%s,\"used_bytes\":%s}}}}}]}",
			      cases[i].in, cases[i].in, cases[i].in, cases[i].in);
		feed(st, j, T0);
		free(j);
		e = prom_store_render(st, T0, REAL0);
		for (int om = 0; om < 2; om++) {
			const char *body = e->body[om ? EXPO_OPENMETRICS : EXPO_TEXT].data, *p;

			p = strstr(body, "\naccelerator_memory_used_bytes{");
			snprintf(line, sizeof(line), "%.*s", p ? (int)strcspn(p + 1, "\n") : 0, p ? p + 1 : "");
			ok(p && strrchr(line, ' ') && !strcmp(strrchr(line, ' ') + 1, cases[i].out),
			   "%s %s: printed as %s (%s)", om ? "OpenMetrics" : "text", cases[i].in, cases[i].out, line);
		}
		snprintf(want, sizeof(want),
			 "{\"node-1\":{\"deviceNum\":2,\"devices\":[{\"usedMemory\":%s,\"totalMemory\":%s,\"percent\":1.0},"
			 "{\"usedMemory\":%s,\"totalMemory\":%s,\"percent\":1.0}],\"usedMemory\":%s,\"totalMemory\":%s,"
			 "\"percent\":1.0}}",
			 cases[i].out, cases[i].out, cases[i].out, cases[i].out, cases[i].sum, cases[i].sum);
		snprintf(line, sizeof(line), "/v1/collect with %s: exact, sums not wrapped, percent kept", cases[i].in);
		is_str(e->bie.data, want, line);
		ok(!strstr(e->bie.data, "-9223372036854775808"), "/v1/collect with %s: no negative int64", cases[i].in);
		prom_expo_unref(e);
		prom_store_free(st);
	}
}

/*
 * "label set too long" comes once per sample (30+ per
 * report); it is logged once per 10 s with the count, and counted. Input
 * quoted in a message is capped and escaped.
 */
static void test_messages(void)
{
	struct prom_store *st = new_store(0);
	char *tag = xmalloc(PROM_LABELS_MAX + 2), *text, *log, *j;
	long nbad;

	memset(tag, 't', PROM_LABELS_MAX + 1);
	tag[PROM_LABELS_MAX + 1] = '\0';
	start_capture();
	feed_nm2x(st, "ok", 1, 0, 50, 100, T0);
	j = xasprintf("{\"neuron_runtime_data\":[{\"pid\":42,\"neuron_runtime_tag\":\"%s\",\"error\":\"\",\"report\":{"
		      "\"neuroncore_counters\":{\"period\":1.0,\"error\":\"\",\"neuroncores_in_use\":{"
		      "\"0\":{\"neuroncore_utilization\":1},\"1\":{\"neuroncore_utilization\":1},"
		      "\"2\":{\"neuroncore_utilization\":1},\"3\":{\"neuroncore_utilization\":1}}}}}],"
		      "\"instance_info\":{}}",
		      tag);
	feed(st, j, T0);
	feed(st, j, T0 + NS_PER_S);
	free(j);
	/* A runtime in error whose tag and error carry escape sequences (logged at -v): escaped. */
	log_init("test", LOG_LVL_INFO);
	feed(st, "{\"neuron_runtime_data\":[{\"pid\":7,\"neuron_runtime_tag\":\"\\u001b[31mred\",\"error\":"
		 "\"gone\\u001b[0m\",\"report\":{}}],\"instance_info\":{}}",
	     T0 + NS_PER_S);
	log_init("test", LOG_LVL_WARN);
	log = stop_capture();
	ok(strstr(log, "\\u001b[31mred") && strstr(log, "gone\\u001b[0m"), "input in a message is escaped");
	is_int(count_of(log, "label set longer than"), 1, "label set too long: logged once for 8 samples");
	ok(!strchr(log, '\033'), "no escape character reaches the log");
	text = render(st, T0 + NS_PER_S, 0);
	nbad = strtol(value_of(text, "accel_prom_bad_values_total"), NULL, 10);
	ok(nbad >= 8, "label set too long: every sample counted in accel_prom_bad_values_total (%ld)", nbad);
	free(text);
	free(log);
	free(tag);
	prom_store_free(st);
}

static void test_openmetrics(void)
{
	struct prom_store *st = new_store(0);
	char *om;
	struct prom_expo *e;

	feed_nm2x(st, "app", 5, 0, 50, 100, T0);
	om = render(st, T0, 1);
	ok(strstr(om, "# TYPE execution_status counter\n") != NULL, "OpenMetrics: counter family without _total");
	ok(strstr(om, "\nexecution_status_total{") != NULL, "OpenMetrics: counter samples with _total");
	ok(strstr(om, "# TYPE instance info\n") != NULL, "OpenMetrics: instance_info is an info family");
	ok(strstr(om, "# UNIT system_memory_used_bytes bytes\n") != NULL, "OpenMetrics: unit line");
	ok(!strstr(om, "# UNIT neuroncore_memory"), "OpenMetrics: no unit where the name lacks it");
	ok(strlen(om) > 6 && !strcmp(om + strlen(om) - 6, "# EOF\n"), "OpenMetrics: ends with # EOF");
	free(om);
	e = prom_store_render(st, T0, REAL0);
	is_str(e->bie.data, "{\"node-1\":{\"deviceNum\":0,\"devices\":[],\"usedMemory\":0,\"totalMemory\":0,\"percent\":0.0}}",
	       "BIE: no devices yet");
	prom_expo_unref(e);
	prom_store_free(st);
}

/* An accel-monitor report with device_data: NVIDIA devices 0 and 1 (memory), or errors. */
static char *accel_devices(const char *entry_error, const char *dev1_error, long long used0, long long used1)
{
	return xasprintf(
		"{\"timestamp\":\"2026-11-21T05:51:24.722Z\",\"monitor\":{\"version\":\"0.1.0\",\"seq\":0},"
		"\"runtime_data\":[],\"system_data\":{},\"instance_info\":{\"instance_id\":\"i-1\"},"
		"\"device_data\":[{\"device_type\":\"nvidia\",\"error\":\"%s\",\"report\":{\"device_memory\":{"
		"\"period\":1.0,\"timestamp\":\"2026-11-21T05:51:24.722Z\",\"error\":\"\",\"devices\":{"
		"\"0\":{\"uuid\":\"GPU-a\",\"model\":\"H100\",\"pci_bus_id\":\"0000:01:00.0\",\"error\":\"\","
		"\"total_bytes\":1000,\"used_bytes\":%lld,\"free_bytes\":1},"
		"\"1\":{\"uuid\":\"GPU-b\",\"model\":\"H100\",\"pci_bus_id\":\"0000:02:00.0\",\"error\":\"%s\","
		"\"total_bytes\":3000,\"used_bytes\":%lld,\"free_bytes\":1}}}}}]}",
		entry_error, used0, dev1_error, used1);
}

static void test_devices_and_bie(void)
{
	struct prom_store *st = new_store(0);
	struct prom_expo *e;
	char *j;

	j = accel_devices("", "", 250, 1500);
	feed(st, j, T0);
	free(j);
	e = prom_store_render(st, T0, REAL0);
	is_str(e->bie.data,
	       "{\"node-1\":{\"deviceNum\":2,\"devices\":[{\"usedMemory\":250,\"totalMemory\":1000,\"percent\":0.25},"
	       "{\"usedMemory\":1500,\"totalMemory\":3000,\"percent\":0.5}],\"usedMemory\":1750,\"totalMemory\":4000,"
	       "\"percent\":0.4375}}",
	       "BIE: devices from accelerator_memory_*");
	ok(strstr(e->body[EXPO_TEXT].data,
		  "accelerator_memory_used_bytes{availability_zone=\"\",device=\"1\",device_type=\"nvidia\"") != NULL,
	   "device series carry device_type and device");
	prom_expo_unref(e);

	/* Device 1 fails: its series leave; device 0 stays. */
	j = accel_devices("", "GPU is lost", 300, 1500);
	feed(st, j, T0 + NS_PER_S);
	free(j);
	e = prom_store_render(st, T0 + NS_PER_S, REAL0);
	ok(!strstr(e->body[EXPO_TEXT].data, "device=\"1\""), "a device in error leaves the exposition");
	ok(strstr(e->body[EXPO_TEXT].data, "device=\"0\"") != NULL, "the other device stays");
	is_str(e->bie.data,
	       "{\"node-1\":{\"deviceNum\":1,\"devices\":[{\"usedMemory\":300,\"totalMemory\":1000,\"percent\":0.3}],"
	       "\"usedMemory\":300,\"totalMemory\":1000,\"percent\":0.3}}",
	       "BIE: the lost device is gone");
	prom_expo_unref(e);

	/* The whole entry fails (no NVML): every nvidia series leaves. */
	j = accel_devices("cannot load libnvidia-ml.so.1", "", 300, 1500);
	feed(st, j, T0 + 2 * NS_PER_S);
	free(j);
	e = prom_store_render(st, T0 + 2 * NS_PER_S, REAL0);
	ok(!strstr(e->body[EXPO_TEXT].data, "device_type=\"nvidia\""), "a device entry in error: its series leave");
	is_str(value_of(e->body[EXPO_TEXT].data, "accel_prom_group_errors_total{group=\"device\"}"), "1",
	       "device entry error counted");
	prom_expo_unref(e);
	prom_store_free(st);
}

/* Compare (or with PROM_GOLDEN_UPDATE=1, write) got against the golden file path. */
static void golden(const char *path, const char *got)
{
	FILE *f;
	char *want = NULL;
	size_t n = 0;

	if (getenv("PROM_GOLDEN_UPDATE")) {
		f = fopen(path, "w");
		ok(f && fputs(got, f) >= 0 && fclose(f) == 0, "golden %s rewritten", path);
		return;
	}
	f = fopen(path, "r");
	if (f) {
		want = xmalloc((size_t)1 << 20);
		n = fread(want, 1, ((size_t)1 << 20) - 1, f);
		want[n] = '\0';
		fclose(f);
	}
	if (!ok(want && !strcmp(want, got), "golden %s byte for byte", path)) {
		/* Show the first differing line. */
		const char *a = want ? want : "", *b = got;
		size_t line = 1;

		while (*a && *a == *b) {
			if (*a == '\n')
				line++;
			a++;
			b++;
		}
		printf("#   first difference at line %zu\n#   expected: %.*s\n#   got:      %.*s\n", line,
		       (int)strcspn(a, "\n"), a, (int)strcspn(b, "\n"), b);
	}
	free(want);
}

/* Feed the first nlines lines of stream (0: all) and compare the exposition with GOLDEN/name.{prom,om}. */
static void test_golden(const char *stream, const char *name, int nlines)
{
	struct prom_store *st = new_store(0);
	struct prom_expo *e;
	FILE *f = fopen(stream, "r");
	char *line = NULL, path[256];
	size_t cap = 0;
	ssize_t len;
	uint64_t bytes = 0;
	int64_t t = T0;
	int n = 0;

	if (!ok(f != NULL, "open %s", stream))
		return;
	log_init("test", LOG_LVL_SILENT);
	while ((!nlines || n < nlines) && (len = getline(&line, &cap, f)) > 0) {
		char where[64];
		json_t *r = json_loadb(line, (size_t)len, 0, NULL);

		bytes += (uint64_t)len;
		snprintf(where, sizeof(where), "%s:%d", name, ++n);
		if (r)
			prom_store_report(st, r, where, t, REAL0 + (t - T0));
		json_decref(r);
		prom_store_input_bytes(st, bytes);
		t += NS_PER_S;
	}
	log_init("test", LOG_LVL_WARN);
	free(line);
	fclose(f);
	e = prom_store_render(st, t, REAL0 + (t - T0));
	snprintf(path, sizeof(path), GOLDEN "/%s.prom", name);
	golden(path, e->body[EXPO_TEXT].data);
	snprintf(path, sizeof(path), GOLDEN "/%s.om", name);
	golden(path, e->body[EXPO_OPENMETRICS].data);
	prom_expo_unref(e);
	prom_store_free(st);
}

/* An endpoint runtime "srv" whose model m has latency_histograms.total_latency (or, with error, the entry's error). */
static void feed_hist(struct prom_store *st, const char *error, const char *le, const char *counts, const char *sum,
		      int count, int64_t t)
{
	char *j = xasprintf(
		"{\"timestamp\":\"2026-11-21T05:51:24.722Z\",\"monitor\":{\"version\":\"0.1.0\",\"seq\":0},"
		"\"runtime_data\":[{\"runtime_tag\":\"srv\",\"pid\":7,\"error\":\"%s\",\"report\":{\"execution_stats\":{"
		"\"period\":1.0,\"timestamp\":\"2026-11-21T05:51:24.722Z\",\"error\":\"\",\"models\":{\"m\":{\"1\":{"
		"\"latency_histograms\":{\"total_latency\":{\"le\":[%s],\"counts\":[%s],\"sum\":%s,\"count\":%d}}}}}}}}],"
		"\"system_data\":{},\"instance_info\":{\"instance_id\":\"i-1\"}}",
		error, le, counts, sum, count);

	feed(st, j, t);
	free(j);
}

#define HNAME "accel_model_request_duration_seconds"
#define HLAB                                                                                                  \
	"availability_zone=\"\",instance_id=\"i-1\",instance_name=\"\",instance_type=\"\",model=\"m\",pid=\"7\",region=\"\"," \
	"runtime_tag=\"srv\",subnet_id=\"\",version=\"1\""

struct seen_hist {
	int n;
	double count, sum, c0;
	size_t nb;
};

static void on_view(const struct prom_series_view *v, void *ud)
{
	struct seen_hist *h = ud;

	if (!v->hist)
		return;
	h->n++;
	h->count = v->hist->count;
	h->sum = v->hist->sum;
	h->c0 = v->hist->counts[0];
	h->nb = v->hist->n;
	h->count = v->value == v->hist->count ? h->count : -1; /* the value is the count */
}

/* A histogram series: cumulative buckets, sum and count over reports, in both formats; leaves and comes back. */
static void test_histograms(void)
{
	struct prom_store *st = new_store(0);
	struct seen_hist h = { 0 };
	char *text, *om;

	feed_hist(st, "", "0.1,0.5,2.0", "3,4,3,0", "4.25", 10, T0);
	feed_hist(st, "", "0.1,0.5,2.0", "1,0,2,1", "7.5", 4, T0 + NS_PER_S);
	text = render(st, T0 + NS_PER_S, 0);
	om = render(st, T0 + NS_PER_S, 1);
	ok(strstr(text, "# TYPE " HNAME " histogram\n" HNAME "_bucket{" HLAB ",le=\"0.1\"} 4\n" HNAME "_bucket{" HLAB
			",le=\"0.5\"} 8\n" HNAME "_bucket{" HLAB ",le=\"2.0\"} 13\n" HNAME "_bucket{" HLAB
			",le=\"+Inf\"} 14\n" HNAME "_sum{" HLAB "} 11.75\n" HNAME "_count{" HLAB "} 14\n") != NULL,
	   "text: cumulative buckets (over bounds and reports), +Inf, sum, count");
	ok(strstr(om, "# TYPE " HNAME " histogram\n# UNIT " HNAME " seconds\n" HNAME "_bucket{" HLAB
		      ",le=\"0.1\"} 4\n") != NULL && strstr(om, HNAME "_bucket{" HLAB ",le=\"+Inf\"} 14\n" HNAME "_sum{" HLAB
							   "} 11.75\n" HNAME "_count{" HLAB "} 14\n") != NULL,
	   "OpenMetrics: the same lines, with the unit");
	free(text);
	free(om);
	prom_store_each(st, 1, on_view, &h);
	ok(h.n == 1 && h.count == 14 && h.sum == 11.75 && h.c0 == 4 && h.nb == 3,
	   "prom_store_each: the histogram's view, cumulative, its value the count");

	/* the runtime's entry in error: the series leaves; back, it goes on from where it was */
	feed_hist(st, "gone", "0.1,0.5,2.0", "0,0,0,0", "0", 0, T0 + 2 * NS_PER_S);
	text = render(st, T0 + 2 * NS_PER_S, 0);
	ok(!strstr(text, HNAME), "entry in error: the histogram leaves the exposition");
	free(text);
	feed_hist(st, "", "0.1,0.5,2.0", "1,0,0,0", "0.05", 1, T0 + 3 * NS_PER_S);
	text = render(st, T0 + 3 * NS_PER_S, 0);
	is_str(value_of(text, HNAME "_bucket{" HLAB ",le=\"0.1\"}"), "5", "back: its buckets go on (4 + 1)");
	is_str(value_of(text, HNAME "_count{" HLAB "}"), "15", "back: its count goes on");
	is_str(value_of(text, HNAME "_sum{" HLAB "}"), "11.8", "back: its sum goes on");
	free(text);

	/* the server's bounds changed: the series starts again from the new buckets (a counter reset) */
	feed_hist(st, "", "1,5", "2,0,1", "9", 3, T0 + 4 * NS_PER_S);
	text = render(st, T0 + 4 * NS_PER_S, 0);
	ok(!strstr(text, "le=\"0.1\""), "new bounds: the old ones are gone");
	is_str(value_of(text, HNAME "_bucket{" HLAB ",le=\"1.0\"}"), "2", "new bounds: from the new sample");
	is_str(value_of(text, HNAME "_bucket{" HLAB ",le=\"5.0\"}"), "2", "... cumulative over bounds");
	is_str(value_of(text, HNAME "_bucket{" HLAB ",le=\"+Inf\"}"), "3", "... +Inf");
	is_str(value_of(text, HNAME "_count{" HLAB "}"), "3", "... count from zero");
	free(text);
	/* stale: gone from the exposition, yet remembered like a counter */
	prom_store_sweep(st, T0 + 400 * NS_PER_S);
	text = render(st, T0 + 400 * NS_PER_S, 0);
	ok(!strstr(text, HNAME), "stale: the histogram leaves");
	free(text);
	feed_hist(st, "", "1,5", "1,0,0", "0.5", 1, T0 + 401 * NS_PER_S);
	text = render(st, T0 + 401 * NS_PER_S, 0);
	is_str(value_of(text, HNAME "_count{" HLAB "}"), "4", "back after staleness: goes on (3 + 1)");
	free(text);
	prom_store_free(st);
}

/* What prom_store_each shows of the counter COMPLETED("app") and of the gauge MEMUSED. */
struct view_seen {
	int64_t start_ms, mem_start_ms;
	double value;
	int found, fresh, mem_fresh;
};

static void on_view_start(const struct prom_series_view *v, void *ud)
{
	struct view_seen *w = ud;
	size_t n = strlen(v->fam->name);

	if (!strncmp(COMPLETED("app"), v->fam->name, n) && !strcmp(COMPLETED("app") + n, v->labels)) {
		w->found = 1;
		w->start_ms = v->start_ms;
		w->value = v->value;
		w->fresh = v->fresh;
	}
	if (!strncmp(MEMUSED, v->fam->name, n) && !strcmp(MEMUSED + n, v->labels)) {
		w->mem_start_ms = v->start_ms;
		w->mem_fresh = v->fresh;
	}
}

static struct view_seen view_of(struct prom_store *st)
{
	struct view_seen w = { 0 };

	prom_store_each(st, 0, on_view_start, &w);
	return w;
}

/*
 * prom_series_view.start_ms: a counter's value begins a period (1 s here) before its first sample, and keeps that
 * start while it goes on (back within the hour included); forgotten and back, it starts again. A gauge's start is
 * its first sample. fresh: refreshed by the last report.
 */
static void test_start_ms(void)
{
	struct prom_store *st = new_store(0);
	int64_t hour = (int64_t)PROM_HIDDEN_KEEP_MS * NS_PER_MS, real0_ms = REAL0 / NS_PER_MS;
	struct view_seen w;
	char *err;

	feed_nm2x(st, "app", 5, 0, 50, 100, T0);
	w = view_of(st);
	ok(w.found && w.start_ms == real0_ms - 1000, "a counter starts a period before its first sample");
	ok(w.mem_start_ms == real0_ms, "a gauge starts at its first sample");
	ok(w.fresh && w.mem_fresh, "both refreshed by the report: fresh");
	feed_nm2x(st, NULL, 0, 0, 0, 300, T0 + NS_PER_S);
	w = view_of(st);
	ok(w.found && !w.fresh, "a report without the runtime: its counter is still shown, not fresh");
	ok(w.mem_fresh, "the system gauge is fresh");
	err = xasprintf("{\"neuron_runtime_data\":[{\"pid\":42,\"neuron_runtime_tag\":\"app\",\"error\":\"gone\","
			"\"report\":{}}],\"instance_info\":{\"instance_id\":\"i-1\"}}");
	feed(st, err, T0 + 2 * NS_PER_S);
	free(err);
	ok(!view_of(st).found, "the runtime's error: the counter leaves");
	feed_nm2x(st, "app", 2, 0, 50, 100, T0 + 3 * NS_PER_S);
	w = view_of(st);
	ok(w.found && w.value == 7 && w.start_ms == real0_ms - 1000, "back within the hour: goes on, same start");
	prom_store_sweep(st, T0 + 3 * NS_PER_S + 31 * NS_PER_S);
	prom_store_sweep(st, T0 + 3 * NS_PER_S + 32 * NS_PER_S + hour);
	feed_nm2x(st, "app", 1, 0, 50, 100, T0 + 2 * hour);
	w = view_of(st);
	ok(w.found && w.value == 1, "forgotten after the hour: back from 0");
	is_int(w.start_ms, real0_ms + 2 * hour / NS_PER_MS - 1000, "with a new start");
	prom_store_free(st);
}

int main(void)
{
	test_format();
	test_escape();
	test_counters();
	test_start_ms();
	test_runtime_error();
	test_staleness_and_health();
	test_instance_change();
	test_bad_values();
	test_series_cap();
	test_departed_give_way();
	test_byte_cap();
	test_node_share();
	test_messages();
	test_openmetrics();
	test_devices_and_bie();
	test_edge_numbers();
	test_histograms();
	test_golden("tests/fixtures/streams/neuron-monitor-2x.jsonl", "neuron-monitor-2x", 0);
	test_golden("tests/fixtures/streams/neuron-monitor-2020.jsonl", "neuron-monitor-2020", 0);
	/* Line 3 of the 2020 stream is a runtime error that takes the runtime's series away: show them before. */
	test_golden("tests/fixtures/streams/neuron-monitor-2020.jsonl", "neuron-monitor-2020-lines-1-2", 2);
	test_golden(GOLDEN "/accel-monitor.jsonl", "accel-monitor", 0);
	/* Endpoint runtimes: per-model counters accumulated over four reports, gauges of the last. */
	test_golden("tests/fixtures/streams/endpoint-runtimes.jsonl", "endpoint-runtimes", 0);
	return done_testing();
}
