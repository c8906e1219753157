/* SPDX-License-Identifier: MIT */
/*
 * accel-top's model and frame (sinks/top/top_model.c, sinks/top/top_view.c): a
 * report folded into device and process rows (per-period counters summed
 * since start, a Neuron device's utilization from its cores, a process's
 * memory on each GPU, runtime CPU and RSS, execution stats), processes
 * dropped when gone, the history ring, and the frame: bar widths for known
 * values, the sparkline, sorting by each key, the filter, UTF-8 cut at the
 * edge, the interactive frame's height and scrolling; pods and containers,
 * an endpoint runtime's model versions, MIG instances under their GPU, and
 * the table's columns dropped by priority as the frame narrows.
 */
#include "../../sinks/top/top_model.h"
#include "../../sinks/top/top_url.h"
#include "../../sinks/top/top_view.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static json_t *parse(const char *s)
{
	json_error_t e;
	json_t *j = json_loads(s, 0, &e);

	if (!j) {
		fprintf(stderr, "# bad test JSON: %s\n", e.text);
		abort();
	}
	return j;
}

/* One accel-monitor report at second sec: GPU 0 with util%, used GiB, an ECC count, pids with MiB; a runtime. */
static void feed(struct top_model *m, int sec, int util, int used_gib, int ecc, const char *procs, const char *runtimes)
{
	char s[4096];
	json_t *r;

	snprintf(s, sizeof(s),
		 "{\"timestamp\":\"2026-01-01T00:00:%02d.000Z\",\"instance_info\":{\"hostname\":\"h1\",\"instance_type\":\"t\","
		 "\"instance_id\":\"i-1\",\"error\":\"\"},"
		 "\"system_data\":{\"memory_info\":{\"period\":1.0,\"timestamp\":\"2026-01-01T00:00:%02d.000Z\",\"error\":\"\","
		 "\"memory_total_bytes\":1000,\"memory_used_bytes\":250}},"
		 "\"runtime_data\":[%s],"
		 "\"device_data\":[{\"device_type\":\"nvidia\",\"error\":\"\",\"report\":{"
		 "\"device_utilization\":{\"period\":1.0,\"timestamp\":\"2026-01-01T00:00:%02d.000Z\",\"error\":\"\",\"devices\":{"
		 "\"0\":{\"index\":0,\"model\":\"G\",\"error\":\"\",\"core_percent\":%d}}},"
		 "\"device_memory\":{\"period\":1.0,\"timestamp\":\"2026-01-01T00:00:%02d.000Z\",\"error\":\"\",\"devices\":{"
		 "\"0\":{\"index\":0,\"error\":\"\",\"total_bytes\":8589934592,\"used_bytes\":%lld,\"processes\":{%s}}}},"
		 "\"device_errors\":{\"period\":1.0,\"timestamp\":\"2026-01-01T00:00:%02d.000Z\",\"error\":\"\",\"devices\":{"
		 "\"0\":{\"index\":0,\"error\":\"\",\"ecc_errors\":{\"corrected\":%d,\"uncorrected\":0}}}}}}]}",
		 sec, sec, runtimes, sec, util, sec, (long long)used_gib << 30, procs, sec, ecc);
	r = parse(s);
	top_model_report(m, r, 0, (int64_t)sec * 1000000000);
	json_decref(r);
}

#define RT(pid, tag, user, rss)                                                                                  \
	"{\"runtime_index\":0,\"address\":\"process:x\",\"pid\":" #pid ",\"runtime_tag\":\"" tag "\",\"error\":\"\"," \
	"\"report\":{\"runtime_vcpu_usage\":{\"period\":1.0,\"error\":\"\",\"vcpu_usage\":{\"user\":" #user           \
	",\"system\":1.0}},\"memory_used\":{\"period\":1.0,\"error\":\"\",\"runtime_used_bytes\":{\"host\":" #rss    \
	",\"device\":null}}}}"

static const struct top_proc *proc(const struct top_model *m, long pid)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].pid == pid)
			return &m->procs[i];
	return NULL;
}

/* Row y of the canvas as text. */
static void row(const struct top_canvas *c, int y, char *dst, size_t size)
{
	size_t n = 0;

	for (int x = 0; x < c->w && y < c->h && n + 5 < size; x++) {
		const struct top_cell *k = &c->cells[(size_t)y * (size_t)c->w + (size_t)x];

		if (k->len) {
			memcpy(dst + n, k->ch, k->len);
			n += k->len;
		} else {
			dst[n++] = ' ';
		}
	}
	while (n && dst[n - 1] == ' ')
		n--;
	dst[n] = '\0';
}

/* The first row that starts with prefix, or -1. */
static int find_row(const struct top_canvas *c, const char *prefix, char *dst, size_t size)
{
	for (int y = 0; y < c->h; y++) {
		row(c, y, dst, size);
		if (!strncmp(dst, prefix, strlen(prefix)))
			return y;
	}
	return -1;
}

static void test_model(void)
{
	struct top_model m;
	const struct top_proc *p;

	top_model_init(&m);
	feed(&m, 1, 40, 2, 3, "\"100\":1048576,\"200\":2097152", RT(100, "trainer", 20.0, 4096));
	feed(&m, 2, 60, 4, 2, "\"100\":3145728", RT(100, "trainer", 30.0, 8192));
	is_int((int)m.ndevs, 1, "one device");
	is_str(m.host, "h1", "host");
	is_str(m.instance_type, "t", "instance type");
	is_str(m.devs[0].model, "G", "model from the identity");
	is_double(m.devs[0].util, 0.6, 1e-9, "utilization: the last report's");
	is_double(m.devs[0].mem_used, 4.0 * (1 << 30), 1, "memory used");
	is_double(m.devs[0].errors, 5, 1e-9, "ECC errors summed since start (3 + 2)");
	is_int((int)m.devs[0].hist_n, 2, "two history points");
	is_double(top_dev_hist(&m.devs[0], 0)->util, 0.4, 1e-6, "oldest history point first");
	p = proc(&m, 100);
	ok(p != NULL, "pid 100 has a row");
	if (p) {
		is_str(p->name, "trainer", "its runtime tag");
		is_double(p->cpu, 0.31, 1e-9, "its CPU: user + system");
		is_double(p->rss, 8192, 0, "its RSS");
		is_double(top_proc_devmem(&m, p), 3145728, 0, "its GPU memory: the last process list's");
	}
	p = proc(&m, 200);
	ok(p != NULL, "pid 200, only on the GPU, still has a row a second later");
	if (p)
		ok(isnan(top_proc_devmem(&m, p)), "but no GPU memory: the last list does not have it");
	feed(&m, 9, 10, 1, 0, "", "");
	ok(proc(&m, 200) == NULL && proc(&m, 100) == NULL, "processes not seen for 3 periods (3 s) are dropped");
	is_int((int)m.devs[0].hist_n, 3, "the history grows by a point a report");
	top_model_free(&m);
}

static void test_neuron(void)
{
	struct top_model m;
	json_t *r = parse("{\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"device_data\":[{\"device_type\":\"neuron\","
			  "\"error\":\"\",\"report\":{\"device_utilization\":{\"period\":1.0,\"error\":\"\",\"devices\":"
			  "{\"0\":{\"index\":0,\"error\":\"\",\"neuroncores\":{\"0\":{\"utilization_percent\":20.0},"
			  "\"1\":{\"utilization_percent\":60.0}}}}}}}]}");

	top_model_init(&m);
	top_model_report(&m, r, 0, 0);
	is_int((int)m.ndevs, 1, "neuron: one device");
	if (m.ndevs)
		is_double(m.devs[0].util, 0.4, 1e-9, "neuron: utilization is its cores' mean");
	json_decref(r);
	top_model_free(&m);
}

static void test_view(void)
{
	struct top_model m;
	struct top_view v;
	struct top_canvas c;
	char line[2048];
	int y;

	top_model_init(&m);
	feed(&m, 1, 50, 2, 0, "\"100\":1048576,\"200\":2097152,\"300\":524288",
	     RT(100, "zeta", 5.0, 300) "," RT(200, "alpha", 50.0, 100) "," RT(300, "mid", 20.0, 200));
	top_view_init(&v);
	v.now_mono_ns = 1000000000;
	top_canvas_init(&c, 100);
	top_view_render(&m, &v, &c);
	y = find_row(&c, " util ", line, sizeof(line));
	ok(y > 0, "a util row");
	/* width 100: half 49, bar 16 cells, 14 inside; 50% fills 7 */
	ok(strstr(line, "[|||||||       ] 50%") != NULL, "50%% fills 7 of 14 cells: %s", line);
	y = find_row(&c, "accel-top", line, sizeof(line));
	ok(y == 0 && strstr(line, "h1") && strstr(line, "report 00:00:01Z  age 0s"), "header: %s", line);
	ok(strstr(line, "STALE") == NULL, "not stale at once");
	v.now_mono_ns = 7000000000;
	top_view_render(&m, &v, &c);
	row(&c, 0, line, sizeof(line));
	ok(strstr(line, "STALE") != NULL && top_view_stale(&m, &v), "stale after 6 s (limit 5 s): %s", line);
	v.now_mono_ns = 1000000000;

	/* sorting by each key: the first process row */
	{
		static const struct {
			enum top_sort key;
			int reverse;
			const char *first;
		} cases[] = {
			{ SORT_DEVMEM, 0, "200" }, { SORT_CPU, 0, "200" }, { SORT_RSS, 0, "100" }, { SORT_PID, 0, "100" },
			{ SORT_NAME, 0, "200" },   { SORT_PID, 1, "300" }, { SORT_RATE, 0, "100" }, { SORT_P99, 0, "100" },
		};
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			char want[32];

			v.sort = cases[i].key;
			v.reverse = cases[i].reverse;
			top_view_render(&m, &v, &c);
			y = find_row(&c, "    PID", line, sizeof(line));
			row(&c, y + 1, line, sizeof(line));
			snprintf(want, sizeof(want), "    %s ", cases[i].first);
			ok(!strncmp(line, want, strlen(want)), "sort %s%s: pid %s first (%s)", top_sort_names[cases[i].key],
			   cases[i].reverse ? " reversed" : "", cases[i].first, line);
		}
	}
	v.sort = SORT_DEVMEM;
	v.reverse = 0;
	snprintf(v.filter, sizeof(v.filter), "ALP");
	top_view_render(&m, &v, &c);
	y = find_row(&c, "Processes:", line, sizeof(line));
	ok(strstr(line, "Processes: 1 of 3") != NULL, "filter: %s", line);
	y = find_row(&c, "    PID", line, sizeof(line));
	row(&c, y + 1, line, sizeof(line));
	ok(strstr(line, "alpha") != NULL, "the filter matches names without case: %s", line);
	row(&c, y + 2, line, sizeof(line));
	is_str(line, "", "and nothing else");
	v.filter[0] = '\0';

	/* interactive: exactly the screen's rows, the key line last, scrolling clamped */
	v.interactive = 1;
	v.height = 8;
	v.scroll = 1000;
	top_view_render(&m, &v, &c);
	is_int(c.h, 8, "interactive frame: 8 rows");
	row(&c, 7, line, sizeof(line));
	ok(!strncmp(line, "q quit  h help  s sort:devmem", 29), "key line: %s", line);
	ok(v.scroll > 0 && v.scroll < 1000, "scroll clamped to the body (%d)", v.scroll);
	top_canvas_free(&c);
	top_model_free(&m);
}

static void test_canvas(void)
{
	struct top_canvas c;
	char line[256];

	top_canvas_init(&c, 20);
	is_int(top_canvas_put(&c, 0, 15, "ab°cdefgh", TA_NONE), 20, "put stops at the right edge");
	row(&c, 0, line, sizeof(line));
	is_str(line, "               ab°cd", "a UTF-8 character takes one cell");
	top_canvas_put(&c, 1, 0, "a\033[2Jb\xff", TA_NONE);
	row(&c, 1, line, sizeof(line));
	is_str(line, "a?[2Jb?", "control characters and stray bytes are shown as ?");
	top_canvas_free(&c);

	/* C1 controls encoded in UTF-8, bidi controls, invisible format characters, raw C1 bytes, overlong forms. */
	{
		static const struct {
			const char *in, *want, *what;
		} cases[] = {
			{ "a\xc2\x9b" "2Jb", "a?2Jb", "CSI U+009B shown as ?" },
			{ "a\xc2\x9d" "0;t\xc2\x9c" "b", "a?0;t?b", "OSC U+009D ... ST U+009C" },
			{ "a\xc2\x80\xc2\x9f" "b", "a??b", "U+0080, U+009F" },
			{ "a\x7f" "b", "a?b", "DEL shown as ?" },
			{ "x\xe2\x80\xae" "cba", "x?cba", "RLO U+202E" },
			{ "\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", "????", "LRE, RLE, PDF, LRO" },
			{ "\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", "????", "LRI, RLI, FSI, PDI" },
			{ "a\xe2\x80\x8b\xe2\x80\x8f\xef\xbb\xbf" "b", "a???b", "ZWSP, RLM, BOM" },
			{ "a\xe2\x80\xa8" "b", "a?b", "LINE SEPARATOR" },
			{ "a\xf3\xa0\x80\x81" "b", "a?b", "LANGUAGE TAG U+E0001" },
			{ "a\x9b" "2J\x9d" "b", "a?2J?b", "raw bytes 0x9b, 0x9d (not UTF-8)" },
			{ "a\xc0\x9b" "b", "a??b", "overlong ESC" },
			{ "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
			  "printable characters kept" },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			top_canvas_init(&c, 20);
			top_canvas_put(&c, 0, 0, cases[i].in, TA_NONE);
			row(&c, 0, line, sizeof(line));
			is_str(line, cases[i].want, cases[i].what);
			top_canvas_free(&c);
		}
	}
}

/* accel-prom's exposition as the input: counters become increases since the last poll, rates per interval. */
static void test_url(void)
{
	static const char *const polls[2] = {
		"# TYPE accelerator_ecc_errors_total counter\n"
		"accelerator_ecc_errors_total{device=\"0\",device_type=\"nvidia\",instance_type=\"t\",type=\"corrected\"} 10\n"
		"runtime_vcpu_usage_ratio{pid=\"7\",runtime_tag=\"w\",usage_type=\"system\"} 0.1\n"
		"runtime_vcpu_usage_ratio{pid=\"7\",runtime_tag=\"w\",usage_type=\"user\"} 0.2\n"
		"execution_status_total{pid=\"7\",runtime_tag=\"w\",status_type=\"completed\"} 100\n"
		"accel_prom_reports_total 5\nbad line\n",
		"accelerator_ecc_errors_total{device=\"0\",device_type=\"nvidia\",instance_type=\"t\",type=\"corrected\"} 15\n"
		"runtime_vcpu_usage_ratio{pid=\"7\",runtime_tag=\"w\",usage_type=\"system\"} 0.1\n"
		"runtime_vcpu_usage_ratio{pid=\"7\",runtime_tag=\"w\",usage_type=\"user\"} 0.2\n"
		"execution_status_total{pid=\"7\",runtime_tag=\"w\",status_type=\"completed\"} 140\n",
	};
	struct top_model m;
	struct top_url *u = top_url_new("http://test/metrics", 2000);
	const struct top_proc *p;

	top_model_init(&m);
	is_int((int)top_url_apply(u, &m, polls[0], strlen(polls[0])), 1, "url: the bad line is counted");
	is_int((int)m.ndevs, 1, "url: the device from its labels");
	if (m.ndevs)
		is_double(m.devs[0].errors, 0, 0, "url: a counter's first sight counts 0");
	is_str(m.instance_type, "t", "url: instance labels");
	top_url_apply(u, &m, polls[1], strlen(polls[1]));
	if (m.ndevs)
		is_double(m.devs[0].errors, 5, 0, "url: then its increase (15 - 10)");
	p = proc(&m, 7);
	ok(p != NULL, "url: the runtime's row");
	if (p) {
		is_double(p->cpu, 0.3, 1e-9, "url: CPU is system + user whatever their order");
		is_double(p->rate, 20, 1e-9, "url: 40 executions over the 2 s interval: 20/s");
	}
	top_url_free(u);
	top_model_free(&m);
}

/* A report with a GPU in MIG mode (one instance), processes in a pod and a container, and an endpoint runtime. */
static const char pods_report[] =
	"{\"timestamp\":\"2026-01-01T00:00:05.000Z\",\"runtime_data\":["
	"{\"runtime_index\":0,\"address\":\"process:x\",\"pid\":10,\"runtime_tag\":\"w\",\"error\":\"\","
	"\"container\":{\"runtime\":\"containerd\",\"id\":\"c1\",\"pod\":\"zpod\",\"namespace\":\"ns1\",\"name\":\"main\"},"
	"\"report\":{\"memory_used\":{\"period\":1.0,\"error\":\"\",\"runtime_used_bytes\":{\"host\":100,\"device\":null}}}},"
	"{\"runtime_index\":0,\"address\":\"process:x\",\"pid\":20,\"runtime_tag\":\"w\",\"error\":\"\","
	"\"container\":{\"runtime\":\"docker\",\"id\":\"c2\",\"name\":\"apod\"},"
	"\"report\":{\"memory_used\":{\"period\":1.0,\"error\":\"\",\"runtime_used_bytes\":{\"host\":200,\"device\":null}}}},"
	"{\"runtime_index\":1,\"address\":\"http://127.0.0.1:8002/metrics\",\"pid\":30,\"runtime_tag\":\"triton\","
	"\"error\":\"\",\"report\":{\"execution_stats\":{\"period\":2.0,\"error\":\"\","
	"\"models\":{\"resnet\":{\"1\":{\"execution_summary\":{\"completed\":100,\"failed\":2},"
	"\"error_summary\":{\"rejected\":2},\"mean_seconds\":{\"request\":0.005},"
	"\"energy_joules\":250.0,\"energy_per_request_joules\":2.5,\"tokens_per_joule\":4.0}},"
	"\"bert\":{\"\":{\"execution_summary\":{\"completed\":20},"
	"\"latency_stats\":{\"total_latency\":{\"p50\":0.01,\"p99\":0.03},\"percentile_source\":\"histogram\"}}}}}}}],"
	"\"device_data\":[{\"device_type\":\"nvidia\",\"error\":\"\",\"report\":{"
	"\"device_memory\":{\"period\":1.0,\"error\":\"\",\"devices\":{"
	"\"0\":{\"index\":0,\"model\":\"H\",\"error\":\"\",\"total_bytes\":8589934592,\"used_bytes\":1073741824,"
	"\"processes\":{\"10\":1048576}},"
	"\"0/2/0\":{\"index\":0,\"uuid\":\"MIG-1\",\"parent_uuid\":\"GPU-1\",\"gpu_instance_id\":2,"
	"\"compute_instance_id\":0,\"mig_profile\":\"3g.40gb\",\"model\":\"H MIG 3g.40gb\",\"error\":\"\","
	"\"total_bytes\":4294967296,\"used_bytes\":1073741824,\"processes\":{\"10\":1048576}}}}}}]}";

static void test_pods_models_mig(void)
{
	struct top_model m;
	struct top_view v;
	struct top_canvas c;
	const struct top_proc *p;
	char line[2048];
	json_t *r = parse(pods_report);
	int y;

	top_model_init(&m);
	top_model_report(&m, r, 0, 5000000000);
	json_decref(r);
	p = proc(&m, 10);
	ok(p && !strcmp(p->pod, "zpod") && !strcmp(p->ns, "ns1") && !strcmp(p->container, "main"),
	   "pid 10: pod, namespace and container from its labels");
	p = proc(&m, 20);
	ok(p && !*p->pod && !strcmp(p->container, "apod"), "pid 20: a container without a pod");
	p = proc(&m, 30);
	ok(p != NULL, "the endpoint runtime has a row");
	if (p) {
		is_int((int)p->nmodels, 2, "two model versions");
		if (p->nmodels == 2) {
			is_str(p->models[0].model, "bert", "models sorted by name: bert first");
			is_double(p->models[0].rate, 10, 1e-9, "bert: 20 completed over 2 s");
			is_double(p->models[0].p99, 0.03, 1e-12, "bert: p99");
			is_str(p->models[1].version, "1", "resnet: version 1");
			is_double(p->models[1].rate, 50, 1e-9, "resnet: 100 completed over 2 s (failed not counted)");
			is_double(p->models[1].failures, 2, 0, "resnet: failures");
			is_double(p->models[1].mean, 0.005, 1e-12, "resnet: the mean request time");
			ok(isnan(p->models[1].p50), "resnet: no percentiles");
			is_double(p->models[1].j_per_req, 2.5, 1e-12, "resnet: joules per request");
			is_double(p->models[1].tokens_per_j, 4, 1e-12, "resnet: tokens per joule");
			ok(isnan(p->models[0].j_per_req), "bert: no energy, no J/req");
		}
		is_double(p->rate, 60, 1e-9, "the runtime's rate: its models' sum");
		is_double(p->failures, 2, 0, "the runtime's failures: its models' sum");
	}
	is_int((int)m.ndevs, 2, "the GPU and its MIG instance are two device entries");
	if (m.ndevs == 2) {
		ok(!m.devs[0].is_mig && m.devs[1].is_mig, "the instance is marked MIG");
		is_str(m.devs[1].profile, "3g.40gb", "its profile");
	}
	p = proc(&m, 10);
	ok(p && p->ndevs == 1, "a MIG instance's process memory is counted on the GPU only");

	top_view_init(&v);
	v.now_mono_ns = 5000000000;
	top_canvas_init(&c, 200);
	top_view_render(&m, &v, &c);
	ok(find_row(&c, "Devices: 1  MIG instances: 1", line, sizeof(line)) >= 0, "one GPU, one MIG instance");
	ok(find_row(&c, "nvidia 0/2/0", line, sizeof(line)) < 0, "no panel for the instance");
	y = find_row(&c, "  MIG 0/2/0  3g.40gb", line, sizeof(line));
	ok(y > 0 && strstr(line, "1.0G/4.0G") != NULL, "its line under the GPU, with its memory: %s", line);
	y = find_row(&c, "    PID", line, sizeof(line));
	ok(strstr(line, "POD/CONTAINER") && strstr(line, "RSS") && strstr(line, "FAIL"), "200 wide: every column: %s",
	   line);
	find_row(&c, "     10 ", line, sizeof(line));
	ok(strstr(line, "zpod/main") != NULL, "pod/container: %s", line);
	find_row(&c, "          resnet:1", line, sizeof(line));
	ok(strstr(line, " 50 ") && strstr(line, "~5.00ms"), "a model row: rate and ~mean: %s", line);
	ok(strstr(line, "2.5 J/req 4 tok/J") != NULL, "a model row: J per request and tokens per J: %s", line);
	find_row(&c, "          bert ", line, sizeof(line));
	ok(strstr(line, "10.00ms") && strstr(line, "30.00ms"), "a model without version: p50 and p99: %s", line);

	v.sort = SORT_POD;
	top_view_render(&m, &v, &c);
	y = find_row(&c, "    PID", line, sizeof(line));
	row(&c, y + 1, line, sizeof(line));
	ok(!strncmp(line, "     20 ", 8), "sort by pod: apod (a container) first: %s", line);
	v.sort = SORT_DEVMEM;
	snprintf(v.filter, sizeof(v.filter), "RESN");
	top_view_render(&m, &v, &c);
	find_row(&c, "Processes:", line, sizeof(line));
	ok(strstr(line, "Processes: 1 of 3") != NULL, "the filter matches a model name: %s", line);
	snprintf(v.filter, sizeof(v.filter), "ns1");
	top_view_render(&m, &v, &c);
	y = find_row(&c, "    PID", line, sizeof(line));
	row(&c, y + 1, line, sizeof(line));
	ok(!strncmp(line, "     10 ", 8), "the filter matches a namespace: %s", line);
	v.filter[0] = '\0';
	top_canvas_free(&c);

	top_canvas_init(&c, 80);
	top_view_render(&m, &v, &c);
	y = find_row(&c, "    PID", line, sizeof(line));
	ok(!strstr(line, "RSS") && !strstr(line, "FAIL") && strstr(line, "POD/CONTAINER") && strstr(line, "P50") &&
		   strstr(line, "P99") && strstr(line, "REQ/s") && strstr(line, "CPU%"),
	   "80 wide: RSS and FAIL dropped first: %s", line);
	top_canvas_free(&c);
	top_canvas_init(&c, 60);
	top_view_render(&m, &v, &c);
	y = find_row(&c, "    PID", line, sizeof(line));
	ok(!strstr(line, "CPU%") && !strstr(line, "P50") && !strstr(line, "POD") && strstr(line, "DEVMEM") &&
		   strstr(line, "P99"),
	   "60 wide: then CPU%%, P50, POD: %s", line);
	for (int i = 0; i < c.h; i++) {
		row(&c, i, line, sizeof(line));
		if (strlen(line) > 60 && !strchr(line, (char)0xe2))
			ok(0, "row %d wider than 60: %s", i, line);
	}
	top_canvas_free(&c);
	top_model_free(&m);
}

/* accel-prom's per-model series: model rows from --url too. */
/* A model's latency_histograms (histogram families) change nothing: its row is its percentiles' and counts'. */
static void test_histograms_ignored(void)
{
	struct top_model m;
	const struct top_proc *p;
	const char *at = strstr(pods_report, "\"percentile_source\":\"histogram\"}");
	char *rep;
	json_t *r;

	if (!ok(at != NULL, "the report has bert's percentiles"))
		return;
	at += strlen("\"percentile_source\":\"histogram\"}");
	rep = xasprintf("%.*s,\"latency_histograms\":{\"total_latency\":{\"le\":[0.01,0.1],\"counts\":[10,10,0],"
			"\"sum\":0.3,\"count\":20}}%s",
			(int)(at - pods_report), pods_report, at);
	r = parse(rep);
	free(rep);
	top_model_init(&m);
	top_model_report(&m, r, 0, 5000000000);
	json_decref(r);
	p = proc(&m, 30);
	ok(p && p->nmodels == 2, "still two model versions");
	if (p && p->nmodels == 2) {
		is_double(p->models[0].rate, 10, 1e-9, "bert: its rate");
		is_double(p->models[0].p50, 0.01, 1e-12, "bert: p50, the percentile's");
		is_double(p->models[0].p99, 0.03, 1e-12, "bert: p99, the percentile's");
	}
	top_model_free(&m);
}

static void test_url_models(void)
{
	static const char *const polls[2] = {
		"execution_status_total{model=\"m\",pid=\"8\",runtime_tag=\"t\",status_type=\"completed\",version=\"1\"} 10\n"
		"inference_request_mean_seconds{model=\"m\",pid=\"8\",runtime_tag=\"t\",version=\"1\"} 0.004\n",
		"execution_status_total{model=\"m\",pid=\"8\",runtime_tag=\"t\",status_type=\"completed\",version=\"1\"} 30\n"
		"inference_request_mean_seconds{model=\"m\",pid=\"8\",runtime_tag=\"t\",version=\"1\"} 0.004\n"
		"accelerator_memory_used_bytes{device=\"0/2/0\",device_type=\"nvidia\",gpu_instance=\"2\",mig_profile=\"1g.10gb\"} 5\n",
	};
	struct top_model m;
	struct top_url *u = top_url_new("http://test/metrics", 2000);
	const struct top_proc *p;

	top_model_init(&m);
	top_url_apply(u, &m, polls[0], strlen(polls[0]));
	top_url_apply(u, &m, polls[1], strlen(polls[1]));
	p = proc(&m, 8);
	ok(p && p->nmodels == 1, "url: the runtime's model version");
	if (p && p->nmodels == 1) {
		is_str(p->models[0].model, "m", "url: the model's name");
		is_double(p->models[0].rate, 10, 1e-9, "url: 20 completed over the 2 s interval: 10/s");
		is_double(p->models[0].mean, 0.004, 1e-12, "url: its mean request time");
	}
	ok(m.ndevs == 1 && m.devs[0].is_mig && !strcmp(m.devs[0].profile, "1g.10gb"), "url: a MIG instance by its labels");
	top_url_free(u);
	top_model_free(&m);
}

/* One sample of family fam for device (type, key) or runtime (tag, pid; pid NULL: none), with up to two more labels. */
static void put(struct top_model *m, const char *fam, const char *type, const char *key, const char *tag,
		const char *pid, const char *l1, const char *v1, const char *l2, const char *v2, double value,
		int64_t ts_ms)
{
	struct sample s = { 0 };

	s.fam = map_family(fam);
	s.host = "h";
	s.device_type = type;
	s.device = key;
	s.runtime_tag = tag;
	if (pid)
		s.labels[s.nlabels++] = (struct label){ "pid", pid };
	if (l1)
		s.labels[s.nlabels++] = (struct label){ l1, v1 };
	if (l2)
		s.labels[s.nlabels++] = (struct label){ l2, v2 };
	s.value = value;
	s.ts_ms = ts_ms;
	s.period = 1;
	top_model_sample(m, &s);
}

/*
 * Many devices and processes, found by key: 3000 GPUs and 2000 processes
 * over reports (each value lands on its own row), processes that leave and
 * come back (rows move: still found, not doubled), MIG instances under
 * their GPU; and keys longer than the rows keep (a device key, a pidless
 * runtime's tag, a model name) are one row, not one per sample.
 */
static void test_many_rows(void)
{
	struct top_model m;
	char key[32], pid[32], tag[32];
	size_t bad = 0;
	const char *long_key = "a-device-key-longer-than-its-field", *long_tag = "a-runtime-tag-longer-than-the-name-field",
		   *long_model = "a-model-name-longer-than-the-sixty-four-bytes-a-model-entry-keeps-for-it";

	top_model_init(&m);
	for (int r = 0; r < 3; r++) {
		int64_t ts = 1767225600000LL + r * 10000; /* 10 s apart: a process absent once is gone */

		top_model_begin(&m);
		for (int i = 0; i < 3000; i++) {
			snprintf(key, sizeof(key), "%d", i);
			put(&m, "accelerator_utilization_ratio", "nvidia", key, NULL, NULL, "engine", "core", NULL, NULL,
			    (i + r) / 10000.0, ts);
		}
		put(&m, "accelerator_utilization_ratio", "nvidia", "7/1/0", NULL, NULL, "engine", "core", "gpu_instance",
		    "1", 0.5, ts);
		for (int i = 0; i < 2000; i++) {
			if (r == 1 && i % 2)
				continue; /* odd pids leave in the second report and come back in the third */
			snprintf(pid, sizeof(pid), "%d", 100 + i);
			snprintf(tag, sizeof(tag), "w%d", i);
			put(&m, "runtime_memory_used_bytes", NULL, NULL, tag, pid, "memory_location", "host", NULL, NULL,
			    1000.0 * i + r, ts);
		}
		for (int k = 0; k < 2; k++) {
			put(&m, "accelerator_utilization_ratio", "nvidia", long_key, NULL, NULL, "engine", "core", NULL, NULL,
			    0.25, ts);
			put(&m, "runtime_memory_used_bytes", NULL, NULL, long_tag, NULL, "memory_location", "host", NULL,
			    NULL, 7, ts);
			put(&m, "execution_status_total", NULL, NULL, "srv", "99999", "model", long_model, "status_type",
			    "completed", 1, ts);
		}
		top_model_end(&m, (int64_t)r * 1000000000);
		if (r == 1)
			is_int(m.nprocs, 1000 + 2, "second report: the processes that left are gone");
	}
	is_int(m.ndevs, 3000 + 2, "3000 GPUs, a MIG instance and a long-keyed device: one row each");
	is_int(m.nprocs, 2000 + 2, "2000 processes (half of them back), a long-tagged runtime, a server: one row each");
	for (int i = 0; i < 3000; i++) {
		snprintf(key, sizeof(key), "%d", i);
		const struct top_dev *d = top_model_dev(&m, "nvidia", key);

		bad += !d || fabs(d->util - (i + 2) / 10000.0) > 1e-12;
	}
	is_int(bad, 0, "every GPU found by its key, with its own value");
	bad = 0;
	for (size_t i = 0; i < m.nprocs; i++) {
		const struct top_proc *p = &m.procs[i];

		if (p->pid >= 100 && p->pid < 2100)
			bad += p->rss != 1000.0 * (double)(p->pid - 100) + 2;
	}
	is_int(bad, 0, "every process row has its own last value");
	ok(top_model_dev(&m, "nvidia", "7/1/0") && top_model_dev(&m, "nvidia", "7/1/0")->is_mig,
	   "the MIG instance found by its key");
	ok(!top_model_dev(&m, "nvidia", "3000") && !top_model_dev(&m, "amd", "0"), "an unknown key finds nothing");
	{
		const struct top_proc *srv = NULL;

		for (size_t i = 0; i < m.nprocs; i++)
			if (m.procs[i].pid == 99999)
				srv = &m.procs[i];
		ok(srv && srv->nmodels == 1, "a model name longer than the entry keeps: one model entry (%zu)",
		   srv ? srv->nmodels : 0);
	}
	{
		struct top_view v;
		struct top_canvas c;
		char line[256];
		int y, found;

		top_view_init(&v);
		v.now_mono_ns = 3000000000LL;
		top_canvas_init(&c, 200);
		top_view_render(&m, &v, &c);
		y = find_row(&c, "  MIG 7/1/0", line, sizeof(line));
		row(&c, y - 2, line, sizeof(line));
		found = y > 2 && !strncmp(line, "nvidia 7 ", 9);
		if (!found)
			fprintf(stderr, "# row %d: %s\n", y - 2, line);
		ok(found, "the MIG instance drawn under its GPU");
		top_canvas_free(&c);
	}
	top_model_free(&m);
}

int main(void)
{
	test_many_rows();
	test_url_models();
	test_pods_models_mig();
	test_histograms_ignored();
	test_url();
	test_model();
	test_neuron();
	test_view();
	test_canvas();
	return done_testing();
}
