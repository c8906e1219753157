/* SPDX-License-Identifier: MIT */
/*
 * The report -> samples mapping (common/samples.c) on the three input
 * kinds: families, labels, values, group errors and bad values; and the rows
 * it interprets (common/rows.h): every field mapped or explained, every
 * collector's block in the registry.
 */
#include "../../common/rows.h"
#include "../../common/samples.h"
#include "../../common/util.h"
#include "../../common/series/prom_dcgm.h"
#include "../../monitor/core/collector.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>

struct seen {
	char lines[512][512]; /* "family{k=v,...} value" */
	size_t n;
	char errors[16][256];
	size_t nerr;
	char bad[16][256];
	size_t nbad;
	int64_t ts[512];
};

/* Raw values and the ultraserver_id label, for the exactness checks. */
static double raw_values[8];
static size_t raw_values_n;
static int ultra_count, prom_skipped_pid;
static char ultra_value[64], inst_id[64];
static int hist_misplaced; /* samples whose hist is set but not a histogram's, or the reverse */
static char *last_entity; /* when set: the entity of each sample is copied here (512 bytes) */
static struct mapper *mapper; /* one stream: map() carries instance labels from report to report */

static void on_sample(const struct sample *s, void *ud)
{
	struct seen *z = ud;
	char *l;
	size_t n;

	if (z->n == 512)
		return;
	l = z->lines[z->n];
	n = (size_t)snprintf(l, 512, "%s{", s->fam->name);
	for (size_t i = s->ninstance; i < s->nlabels; i++)
		n += (size_t)snprintf(l + n, 512 - n, "%s%s=%s", i > s->ninstance ? "," : "", s->labels[i].name,
				      s->labels[i].value);
	n += (size_t)snprintf(l + n, 512 - n, "} %.10g", s->value);
	if ((s->fam->type == METRIC_HISTOGRAM) != (s->hist != NULL))
		hist_misplaced++;
	if (s->hist) {
		/* a histogram sample: "|le=b1,b2|c=c1,c2,c3|sum=s" after its value (the count) */
		for (size_t i = 0; i < s->hist->n && n < 512; i++)
			n += (size_t)snprintf(l + n, 512 - n, "%s%.10g", i ? "," : "|le=", s->hist->le[i]);
		for (size_t i = 0; i <= s->hist->n && n < 512; i++)
			n += (size_t)snprintf(l + n, 512 - n, "%s%.10g", i ? "," : "|c=", s->hist->counts[i]);
		if (n < 512)
			snprintf(l + n, 512 - n, "|sum=%.10g", s->hist->sum);
	}
	for (size_t i = 0; i < s->nlabels; i++) {
		if (!strcmp(s->labels[i].name, "ultraserver_id")) {
			ultra_count++;
			snprintf(ultra_value, sizeof(ultra_value), "%s", s->labels[i].value);
		}
		if (!strcmp(s->labels[i].name, "instance_id") && i < s->ninstance)
			snprintf(inst_id, sizeof(inst_id), "%s", s->labels[i].value);
		if (!strcmp(s->labels[i].name, "pid") && (s->prom_skip & (1u << i)))
			prom_skipped_pid++;
	}
	z->ts[z->n++] = s->ts_ms;
	if (last_entity)
		snprintf(last_entity, 512, "%s", s->entity);
}

static void on_sample_raw(const struct sample *s, void *ud)
{
	(void)ud;
	if (raw_values_n < 8)
		raw_values[raw_values_n++] = s->value;
}

static void on_error(const char *group, const char *entity, const char *err, void *ud)
{
	struct seen *z = ud;

	if (z->nerr < 16)
		snprintf(z->errors[z->nerr++], 256, "%s/%s: %s", group, entity, err);
}

static void on_bad(const char *path, const char *why, void *ud)
{
	struct seen *z = ud;

	if (z->nbad < 16)
		snprintf(z->bad[z->nbad++], 256, "%s: %s", path, why);
}

static int has(const struct seen *z, const char *line)
{
	for (size_t i = 0; i < z->n; i++)
		if (!strcmp(z->lines[i], line))
			return 1;
	return 0;
}

static struct seen *map_flags(const char *json, size_t flags, enum report_format *fmt);

/* The samples of lines 1 and 2 of tests/fixtures/streams/endpoint-runtimes.jsonl, from CONTRACT.md's table. */
static const char *const endpoint_report1[] = {
	"inference_requests_pending{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1} 3",
	"inference_requests_pending{runtime_tag=tritonserver,pid=3100,model=resnet50,version=2} 0",
	"inference_requests_pending{runtime_tag=tritonserver,pid=3100,model=bert,version=1} 1",
	"inference_server_device_utilization_ratio{runtime_tag=tritonserver,pid=3100,device=GPU-0b6b0a5e-2d1c-4a3c-9f3e-1c2d3e4f5a6b} 0.5",
	"inference_server_device_memory_used_bytes{runtime_tag=tritonserver,pid=3100,device=GPU-0b6b0a5e-2d1c-4a3c-9f3e-1c2d3e4f5a6b} 2000000000",
	"inference_server_device_memory_total_bytes{runtime_tag=tritonserver,pid=3100,device=GPU-0b6b0a5e-2d1c-4a3c-9f3e-1c2d3e4f5a6b} 2.4e+10",
	"inference_server_device_power_watts{runtime_tag=tritonserver,pid=3100,device=GPU-0b6b0a5e-2d1c-4a3c-9f3e-1c2d3e4f5a6b} 150.5",
	"inference_server_device_power_limit_watts{runtime_tag=tritonserver,pid=3100,device=GPU-0b6b0a5e-2d1c-4a3c-9f3e-1c2d3e4f5a6b} 300",
	"inference_requests_in_flight{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=} 4",
	"inference_requests_pending{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=} 2",
	"inference_kv_cache_usage_ratio{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=} 0.25",
};
static const char *const endpoint_report2[] = {
	"execution_status_total{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1,status_type=completed} 100",
	"execution_status_total{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1,status_type=failed} 2",
	"execution_errors_total{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1,error_type=rejected} 1",
	"execution_errors_total{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1,error_type=backend} 1",
	"inference_queue_latency_seconds{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1,percentile=p50} 0.0004",
	"inference_queue_latency_seconds{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1,percentile=p90} 0.0009",
	"inference_queue_latency_seconds{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1,percentile=p99} 0.002",
	"inference_request_mean_seconds{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1} 0.005",
	"inference_request_duration_seconds_total{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1} 0.5",
	"inference_queue_mean_seconds{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1} 0.0005",
	"inference_queue_duration_seconds_total{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1} 0.05",
	"inference_compute_input_mean_seconds{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1} 0.00025",
	"inference_compute_input_duration_seconds_total{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1} 0.025",
	"inference_compute_infer_mean_seconds{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1} 0.004",
	"inference_compute_infer_duration_seconds_total{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1} 0.4",
	"inference_compute_output_mean_seconds{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1} 0.00025",
	"inference_compute_output_duration_seconds_total{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1} 0.025",
	"inference_requests_pending{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1} 4",
	"inference_batch_size{runtime_tag=tritonserver,pid=3100,model=resnet50,version=1} 4",
	"execution_status_total{runtime_tag=tritonserver,pid=3100,model=resnet50,version=2,status_type=completed} 20",
	"execution_status_total{runtime_tag=tritonserver,pid=3100,model=resnet50,version=2,status_type=failed} 0",
	"inference_request_mean_seconds{runtime_tag=tritonserver,pid=3100,model=resnet50,version=2} 0.0125",
	"inference_request_duration_seconds_total{runtime_tag=tritonserver,pid=3100,model=resnet50,version=2} 0.25",
	"inference_queue_mean_seconds{runtime_tag=tritonserver,pid=3100,model=resnet50,version=2} 0.00125",
	"inference_queue_duration_seconds_total{runtime_tag=tritonserver,pid=3100,model=resnet50,version=2} 0.025",
	"inference_compute_input_mean_seconds{runtime_tag=tritonserver,pid=3100,model=resnet50,version=2} 0.0005",
	"inference_compute_input_duration_seconds_total{runtime_tag=tritonserver,pid=3100,model=resnet50,version=2} 0.01",
	"inference_compute_infer_mean_seconds{runtime_tag=tritonserver,pid=3100,model=resnet50,version=2} 0.01",
	"inference_compute_infer_duration_seconds_total{runtime_tag=tritonserver,pid=3100,model=resnet50,version=2} 0.2",
	"inference_compute_output_mean_seconds{runtime_tag=tritonserver,pid=3100,model=resnet50,version=2} 0.00075",
	"inference_compute_output_duration_seconds_total{runtime_tag=tritonserver,pid=3100,model=resnet50,version=2} 0.015",
	"inference_requests_pending{runtime_tag=tritonserver,pid=3100,model=resnet50,version=2} 0",
	"inference_batch_size{runtime_tag=tritonserver,pid=3100,model=resnet50,version=2} 1",
	"execution_status_total{runtime_tag=tritonserver,pid=3100,model=bert,version=1,status_type=completed} 10",
	"execution_status_total{runtime_tag=tritonserver,pid=3100,model=bert,version=1,status_type=failed} 1",
	"execution_errors_total{runtime_tag=tritonserver,pid=3100,model=bert,version=1,error_type=canceled} 1",
	"inference_request_mean_seconds{runtime_tag=tritonserver,pid=3100,model=bert,version=1} 0.05",
	"inference_request_duration_seconds_total{runtime_tag=tritonserver,pid=3100,model=bert,version=1} 0.5",
	"inference_queue_mean_seconds{runtime_tag=tritonserver,pid=3100,model=bert,version=1} 0.01",
	"inference_queue_duration_seconds_total{runtime_tag=tritonserver,pid=3100,model=bert,version=1} 0.1",
	"inference_compute_input_mean_seconds{runtime_tag=tritonserver,pid=3100,model=bert,version=1} 0.0025",
	"inference_compute_input_duration_seconds_total{runtime_tag=tritonserver,pid=3100,model=bert,version=1} 0.025",
	"inference_compute_infer_mean_seconds{runtime_tag=tritonserver,pid=3100,model=bert,version=1} 0.0375",
	"inference_compute_infer_duration_seconds_total{runtime_tag=tritonserver,pid=3100,model=bert,version=1} 0.375",
	"inference_compute_output_mean_seconds{runtime_tag=tritonserver,pid=3100,model=bert,version=1} 0",
	"inference_compute_output_duration_seconds_total{runtime_tag=tritonserver,pid=3100,model=bert,version=1} 0",
	"inference_requests_pending{runtime_tag=tritonserver,pid=3100,model=bert,version=1} 1",
	"inference_batch_size{runtime_tag=tritonserver,pid=3100,model=bert,version=1} 2.5",
	"inference_server_device_utilization_ratio{runtime_tag=tritonserver,pid=3100,device=GPU-0b6b0a5e-2d1c-4a3c-9f3e-1c2d3e4f5a6b} 0.25",
	"inference_server_device_memory_used_bytes{runtime_tag=tritonserver,pid=3100,device=GPU-0b6b0a5e-2d1c-4a3c-9f3e-1c2d3e4f5a6b} 2001000000",
	"inference_server_device_memory_total_bytes{runtime_tag=tritonserver,pid=3100,device=GPU-0b6b0a5e-2d1c-4a3c-9f3e-1c2d3e4f5a6b} 2.4e+10",
	"inference_server_device_power_watts{runtime_tag=tritonserver,pid=3100,device=GPU-0b6b0a5e-2d1c-4a3c-9f3e-1c2d3e4f5a6b} 151.5",
	"inference_server_device_power_limit_watts{runtime_tag=tritonserver,pid=3100,device=GPU-0b6b0a5e-2d1c-4a3c-9f3e-1c2d3e4f5a6b} 300",
	"inference_server_device_energy_joules_total{runtime_tag=tritonserver,pid=3100,device=GPU-0b6b0a5e-2d1c-4a3c-9f3e-1c2d3e4f5a6b} 150.5",
	"execution_status_total{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,status_type=completed} 8",
	"execution_latency_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p0} 0.5",
	"execution_latency_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p1} 0.5",
	"execution_latency_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p25} 0.75",
	"execution_latency_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p50} 1",
	"execution_latency_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p75} 1.5",
	"execution_latency_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p99} 2.5",
	"execution_latency_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p100} 2.5",
	/* the runtime's merged distribution, next to the models' (no model label) */
	"execution_latency_seconds{runtime_tag=python3,pid=3200,percentile=p0} 0.5",
	"execution_latency_seconds{runtime_tag=python3,pid=3200,percentile=p1} 0.5",
	"execution_latency_seconds{runtime_tag=python3,pid=3200,percentile=p25} 0.75",
	"execution_latency_seconds{runtime_tag=python3,pid=3200,percentile=p50} 1",
	"execution_latency_seconds{runtime_tag=python3,pid=3200,percentile=p75} 1.5",
	"execution_latency_seconds{runtime_tag=python3,pid=3200,percentile=p99} 2.5",
	"execution_latency_seconds{runtime_tag=python3,pid=3200,percentile=p100} 2.5",
	"inference_time_to_first_token_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p0} 0.01",
	"inference_time_to_first_token_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p1} 0.01",
	"inference_time_to_first_token_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p25} 0.02",
	"inference_time_to_first_token_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p50} 0.04",
	"inference_time_to_first_token_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p75} 0.06",
	"inference_time_to_first_token_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p99} 0.1",
	"inference_time_to_first_token_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p100} 0.1",
	"inference_time_per_output_token_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p0} 0.01",
	"inference_time_per_output_token_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p1} 0.01",
	"inference_time_per_output_token_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p25} 0.0125",
	"inference_time_per_output_token_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p50} 0.015",
	"inference_time_per_output_token_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p75} 0.02",
	"inference_time_per_output_token_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p99} 0.025",
	"inference_time_per_output_token_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,percentile=p100} 0.025",
	"inference_request_mean_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=} 1.25",
	"inference_request_duration_seconds_total{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=} 10",
	"inference_queue_mean_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=} 0.125",
	"inference_queue_duration_seconds_total{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=} 1",
	"inference_compute_infer_mean_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=} 1",
	"inference_compute_infer_duration_seconds_total{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=} 8",
	"inference_time_to_first_token_mean_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=} 0.0625",
	"inference_time_per_output_token_mean_seconds{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=} 0.015625",
	"inference_requests_in_flight{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=} 5",
	"inference_requests_pending{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=} 2",
	"inference_kv_cache_usage_ratio{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=} 0.375",
	"inference_tokens_total{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,kind=prompt} 1000",
	"inference_tokens_total{runtime_tag=python3,pid=3200,model=meta-llama/Llama-3.1-8B,version=,kind=generation} 4096",
	"execution_errors_total{runtime_tag=java,pid=3300,error_type=http_4xx} 1",
	"execution_errors_total{runtime_tag=java,pid=3300,error_type=http_5xx} 0",
	"execution_status_total{runtime_tag=java,pid=3300,model=mnist,version=1.0,status_type=completed} 30",
	"inference_request_mean_seconds{runtime_tag=java,pid=3300,model=mnist,version=1.0} 0.002",
	"inference_request_duration_seconds_total{runtime_tag=java,pid=3300,model=mnist,version=1.0} 0.06",
	"inference_queue_mean_seconds{runtime_tag=java,pid=3300,model=mnist,version=1.0} 0.001",
	"inference_queue_duration_seconds_total{runtime_tag=java,pid=3300,model=mnist,version=1.0} 0.03",
};

/* Line n (from 1) of a fixture stream into buf; 0 when the file has no such line. */
static int fixture_line(const char *path, int n, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	int got = 0;

	while (f && n-- > 0)
		got = fgets(buf, (int)size, f) != NULL;
	if (f)
		fclose(f);
	return got;
}

/* Every line of want is a sample of z, and z has no other (its instance_info sample aside). */
static void exactly(const struct seen *z, const char *const *want, size_t nwant, const char *what)
{
	size_t missing = 0;

	for (size_t i = 0; i < nwant; i++)
		if (!has(z, want[i]) && missing++ < 5)
			printf("# %s: missing %s\n", what, want[i]);
	ok(!missing, "%s: every expected sample (%zu)", what, nwant);
	ok(z->n - 1 == nwant, "%s: and no other (%zu samples)", what, z->n - 1);
	ok(z->nbad == 0, "%s: no bad value (%zu)", what, z->nbad);
}

static struct seen *map(const char *json, enum report_format *fmt)
{
	return map_flags(json, 0, fmt);
}

/* json_loads flags: JSON_DECODE_INT_AS_REAL reads integers >= 2^63 as the sinks' reader does. */
static struct seen *map_flags(const char *json, size_t flags, enum report_format *fmt)
{
	static struct seen z;
	struct map_cb cb = { on_sample, on_error, on_bad, &z };
	json_error_t je;
	json_t *r = json_loads(json, flags, &je);

	memset(&z, 0, sizeof(z));
	ultra_count = prom_skipped_pid = 0;
	inst_id[0] = '\0';
	if (!r) {
		printf("# bad test JSON: %s\n", je.text);
		exit(2);
	}
	*fmt = mapper_report(mapper, r, 42, &cb);
	json_decref(r);
	return &z;
}

#define HAS(z, line) ok(has(z, line), "%s", line)

/*
 * Expand a rule or field path into its concrete alternatives: each "{a,b}"
 * or "{a+b}" segment becomes one alternative per key ("key[field]" is the
 * key). Appends to out (n so far), at most max.
 */
static void expand(const char *path, char out[][256], size_t *n, size_t max)
{
	char head[256] = "";
	const char *p = path;

	for (;;) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);

		if (*p == '{') {
			/* Each listed key, then the rest of the path. */
			const char *k = p + 1, *end = p + len - 1;

			while (k < end) {
				size_t kl = strcspn(k, ",+}");
				char alt[512];

				snprintf(alt, sizeof(alt), "%s%s%.*s%s%s", head, *head ? "." : "", (int)kl, k, dot ? "." : "",
					 dot ? dot + 1 : "");
				expand(alt, out, n, max);
				k += kl + 1;
			}
			return;
		}
		{
			size_t hl = strlen(head), kl = strcspn(p, ".[");

			snprintf(head + hl, sizeof(head) - hl, "%s%.*s", hl ? "." : "", (int)(kl < len ? kl : len), p);
		}
		if (!dot)
			break;
		p = dot + 1;
	}
	if (*n < max)
		snprintf(out[(*n)++], 256, "%s", head);
}

/* Does the rule alternative r reach the field alternative f (f is r, or a prefix of it at a step)? */
static int reaches(const char *r, const char *f)
{
	size_t fl = strlen(f);

	return !strncmp(r, f, fl) && (r[fl] == '\0' || r[fl] == '.');
}

/*
 * Every field of the schema is mapped
 * by a rule of its group (for its kind of device), or says why not (and
 * then no rule maps it); every device rule reads a field the schema lists.
 */
static void test_every_field_mapped(void)
{
	json_t *m = map_schema_json(), *rules = json_object_get(m, "rules"), *r;
	static char falt[64][256], ralt[64][256];
	static const struct map_field *fields[1024];
	size_t nf, nr, i, unmapped = 0, dishonest = 0, unknown = 0, n = 0;

	/* Every block's fields. */
	for (const struct map_rows *const *b = map_rows; *b; b++)
		for (size_t k = 0; k < (*b)->nfields && n + 1 < ARRAY_SIZE(fields); k++)
			fields[n++] = &(*b)->fields[k];

	for (size_t k = 0; fields[k]; k++) {
		const struct map_field *f = fields[k];

		nf = 0;
		expand(f->path, falt, &nf, 64);
		for (size_t a = 0; a < nf; a++) {
			int covered = 0;

			json_array_foreach(rules, i, r) {
				const char *rt = json_string_value(json_object_get(r, "device_type"));
				const char *sc = json_string_value(json_object_get(r, "scope"));

				if (strcmp(json_string_value(json_object_get(r, "group")), group_name(f->group)) ||
				    (group_scope(f->group) == SCOPE_DEVICE) != !strcmp(sc, "device") ||
				    (rt && (!f->device_type || strcmp(rt, f->device_type))))
					continue;
				nr = 0;
				expand(json_string_value(json_object_get(r, "path")), ralt, &nr, 64);
				for (size_t b = 0; b < nr; b++)
					covered |= reaches(ralt[b], falt[a]);
			}
			if (!covered && !f->not_exported) {
				fprintf(stderr, "# %s%s%s.%s: no rule maps it and the schema gives no reason\n",
					f->device_type ? f->device_type : "", f->device_type ? ": " : "", group_name(f->group),
					falt[a]);
				unmapped++;
			}
			if (covered && f->not_exported) {
				fprintf(stderr, "# %s.%s: mapped, yet the schema says \"%s\"\n", group_name(f->group), falt[a],
					f->not_exported);
				dishonest++;
			}
		}
	}
	ok(unmapped == 0, "every field of the report schema has a family, or a reason (%zu without)", unmapped);
	ok(dishonest == 0, "no field with a reason is mapped (%zu)", dishonest);
	json_array_foreach(rules, i, r) {
		const char *rt = json_string_value(json_object_get(r, "device_type"));
		int known = 0;

		if (strcmp(json_string_value(json_object_get(r, "scope")), "device"))
			continue;
		nr = 0;
		expand(json_string_value(json_object_get(r, "path")), ralt, &nr, 64);
		for (size_t b = 0; b < nr; b++) {
			known = 0;
			for (size_t k = 0; fields[k]; k++) {
				const struct map_field *f = fields[k];

				if (strcmp(group_name(f->group), json_string_value(json_object_get(r, "group"))) ||
				    (f->device_type && rt && strcmp(rt, f->device_type)))
					continue;
				nf = 0;
				expand(f->path, falt, &nf, 64);
				for (size_t a = 0; a < nf; a++)
					known |= reaches(ralt[b], falt[a]) || !strcmp(ralt[b], "1");
			}
			if (!known) {
				fprintf(stderr, "# rule %s.%s reads a field the schema does not list\n",
					json_string_value(json_object_get(r, "group")), ralt[b]);
				unknown++;
			}
		}
	}
	ok(unknown == 0, "every device rule reads a field of the schema (%zu do not)", unknown);
	json_decref(m);
}

/*
 * The two registries agree, by walking them: every collector's rows
 * (collector_ops .rows) are a block of map_rows[], and every block of
 * map_rows[] but common's belongs to a collector; and a collector's family
 * is fed by its own rules (one fed by several collectors, or by none, is
 * common's).
 */
/*
 * Format 2's report-level identities give every sample the labels format 1's
 * per-device copies gave: a Kubernetes container's process and sums, an ECS
 * container's (its task's labels, its id as its name), a pod-level process
 * with no names (the pod's UID), a unit's process (no labels), and a pid of
 * no identity.
 */
#define IDENT_DEV(extra)                                                                                          \
	"{\"monitor\":{},\"device_data\":[{\"device_type\":\"nvidia\",\"error\":\"\",\"report\":{"                     \
	"\"device_memory\":{\"error\":\"\",\"devices\":{\"0\":{\"processes\":{\"11\":100,\"12\":50,\"13\":7,\"14\":3," \
	"\"15\":1}," extra "}}}}}]"
#define IDENT_K8S "\"runtime\":\"containerd\",\"pod_uid\":\"u1\",\"pod\":\"web\",\"namespace\":\"ns\",\"name\":\"app\",\"qos\":\"burstable\""
#define IDENT_ECS "\"runtime\":\"docker\",\"ecs_cluster\":\"prod\",\"ecs_task_id\":\"t1\",\"ecs_task_family\":\"fam\""
static void test_identities(void)
{
	static const char *const v1 = IDENT_DEV(
		"\"process_containers\":{\"11\":{\"id\":\"c1\"," IDENT_K8S "},\"12\":{\"id\":\"e1\"," IDENT_ECS "},"
		"\"13\":{\"pod_uid\":\"u2\"},\"14\":{\"runtime\":\"systemd\",\"unit\":\"x.service\"}},"
		"\"pods\":{\"u1\":{\"pod\":\"web\",\"namespace\":\"ns\",\"qos\":\"burstable\",\"pids\":[11],\"memory_bytes\":100},"
		"\"u2\":{\"pids\":[13],\"memory_bytes\":7}},"
		"\"containers\":{\"c1\":{\"runtime\":\"containerd\",\"pod_uid\":\"u1\",\"pod\":\"web\",\"namespace\":\"ns\","
		"\"name\":\"app\",\"pids\":[11],\"memory_bytes\":100},\"e1\":{" IDENT_ECS ",\"pids\":[12],\"memory_bytes\":50}}") "}";
	static const char *const v2 = IDENT_DEV(
		"\"pods\":{\"u1\":{\"pids\":[11],\"memory_bytes\":100},\"u2\":{\"pids\":[13],\"memory_bytes\":7}},"
		"\"containers\":{\"c1\":{\"pids\":[11],\"memory_bytes\":100},\"e1\":{\"pids\":[12],\"memory_bytes\":50}}")
		",\"identities\":{\"containers\":{\"c1\":{" IDENT_K8S ",\"pids\":[11]},\"e1\":{" IDENT_ECS ",\"pids\":[12]}},"
		"\"pods\":{\"u1\":{\"pod\":\"web\",\"namespace\":\"ns\",\"qos\":\"burstable\"},\"u2\":{}},"
		"\"processes\":{\"13\":{\"pod_uid\":\"u2\"},\"14\":{\"runtime\":\"systemd\",\"unit\":\"x.service\"}}}}";
	static char a[64][512];
	enum report_format fmt;
	struct seen *z;
	size_t n, same = 0;

	z = map(v1, &fmt);
	n = z->n < 64 ? z->n : 64;
	for (size_t i = 0; i < n; i++)
		snprintf(a[i], sizeof(a[i]), "%s", z->lines[i]);
	z = map(v2, &fmt);
	for (size_t i = 0; i < n && i < z->n; i++)
		same += !strcmp(a[i], z->lines[i]);
	ok(n > 8 && z->n == n && same == n, "identities: format 2 gives format 1's samples (%zu of %zu, %zu)", same, n,
	   z->n);
#define MEMDEV "{device_type=nvidia,device=0,uuid=,model=,pci_bus_id="
	HAS(z, "accelerator_process_memory_used_bytes" MEMDEV ",pid=11,pod=web,namespace=ns,container=app} 100");
	HAS(z, "accelerator_process_memory_used_bytes" MEMDEV
	       ",pid=12,container=e1,ecs_cluster=prod,ecs_task_family=fam,ecs_task_id=t1} 50");
	HAS(z, "accelerator_process_memory_used_bytes" MEMDEV ",pid=13,pod=u2} 7");
	HAS(z, "accelerator_process_memory_used_bytes" MEMDEV ",pid=14} 3");
	HAS(z, "accelerator_process_memory_used_bytes" MEMDEV ",pid=15} 1");
	HAS(z, "accelerator_pod_memory_used_bytes" MEMDEV ",pod=web,namespace=ns} 100");
	HAS(z, "accelerator_pod_memory_used_bytes" MEMDEV ",pod=u2} 7");
	HAS(z, "accelerator_container_memory_used_bytes" MEMDEV ",pod=web,namespace=ns,container=app} 100");
	HAS(z, "accelerator_container_memory_used_bytes" MEMDEV
	       ",container=e1,ecs_cluster=prod,ecs_task_family=fam,ecs_task_id=t1} 50");
#undef MEMDEV
}

static void test_registry(void)
{
	const struct collector_ops *const *reg = collectors();
	size_t colls = 0, missing = 0, orphans = 0, strays = 0;

	for (size_t i = 0; reg[i]; i++) {
		int found = 0;

		if (!reg[i]->rows) {
			fprintf(stderr, "# collector %s names no rows\n", reg[i]->name);
			missing++;
			continue;
		}
		colls++;
		for (const struct map_rows *const *b = map_rows; *b; b++)
			found |= *b == reg[i]->rows;
		if (!found) {
			fprintf(stderr, "# collector %s: its rows (%s) are not in map_rows[]\n", reg[i]->name,
				reg[i]->rows->name);
			missing++;
		}
	}
	for (const struct map_rows *const *b = map_rows; *b; b++) {
		int owned = 0;

		for (size_t i = 0; reg[i]; i++)
			owned |= reg[i]->rows == *b;
		if (!owned && strcmp((*b)->name, "common")) {
			fprintf(stderr, "# block %s (%s): no collector names it\n", (*b)->name, (*b)->source);
			orphans++;
		}
	}
	ok(colls >= 10 && missing == 0, "every collector's rows are in map_rows[] (%zu collectors, %zu missing)",
	   colls, missing);
	ok(orphans == 0, "every block of map_rows[] but common's is a collector's (%zu are not)", orphans);
	for (const struct map_rows *const *b = map_rows; *b; b++) {
		if (!strcmp((*b)->name, "common"))
			continue;
		for (size_t i = 0; i < (*b)->nfamilies; i++) {
			int fed = 0;

			for (size_t k = 0; k < (*b)->nrules; k++)
				fed |= !strcmp((*b)->rules[k].family, (*b)->families[i].name);
			if (!fed) {
				fprintf(stderr, "# %s: family %s is fed by none of its rules\n", (*b)->name,
					(*b)->families[i].name);
				strays++;
			}
		}
	}
	ok(strays == 0, "a collector's families are fed by its own rules (%zu are not)", strays);
}

/* An endpoint's report with one model's latency_histograms.<kind> = h (JSON text), and the runtime's merged one. */
static struct seen *map_hist(const char *kind, const char *h)
{
	static char json[4096 + 16 * 513];
	enum report_format fmt;

	snprintf(json, sizeof(json),
		 "{\"monitor\":{},\"runtime_data\":[{\"runtime_tag\":\"t\",\"pid\":1,\"error\":\"\",\"report\":"
		 "{\"execution_stats\":{\"error\":\"\",\"latency_histograms\":{\"total_latency\":{\"le\":[1.0],"
		 "\"counts\":[1,1],\"sum\":1.5,\"count\":2}},\"models\":{\"m\":{\"1\":{\"latency_histograms\":"
		 "{\"%s\":%s}}}}}}}]}",
		 kind, h);
	return map(json, &fmt);
}

/* latency_histograms: one histogram sample per model and distribution, its buckets as written; bad ones named. */
static void test_histograms(void)
{
	static const char *const kinds[][2] = {
		{ "total_latency", "accel_model_request_duration_seconds" },
		{ "queue", "accel_model_queue_duration_seconds" },
		{ "time_to_first_token", "accel_model_time_to_first_token_seconds" },
		{ "time_per_output_token", "accel_model_time_per_output_token_seconds" },
	};
	static const char good[] = "{\"le\":[0.1,0.5,2.0],\"counts\":[3,4,3,0],\"sum\":4.25,\"count\":10}";
	static const struct {
		const char *h, *why;
	} bad[] = {
		{ "{\"le\":[0.5,0.1],\"counts\":[1,1,0],\"sum\":1,\"count\":2}",
		  "expected bounds in ascending order, each once" },
		{ "{\"le\":[0.1,0.1],\"counts\":[1,1,0],\"sum\":1,\"count\":2}",
		  "expected bounds in ascending order, each once" },
		{ "{\"le\":[0.1],\"counts\":[1],\"sum\":1,\"count\":1}",
		  "expected one count more than bounds (the +Inf bucket last)" },
		{ "{\"le\":[0.1],\"counts\":[1,-1],\"sum\":1,\"count\":0}", "expected counts: finite numbers >= 0" },
		{ "{\"le\":[\"0.1\"],\"counts\":[1,1],\"sum\":1,\"count\":2}", "expected bounds: finite numbers" },
		{ "{\"le\":[0.1],\"counts\":[1,1],\"sum\":1,\"count\":3}",
		  "expected a finite sum and a count that is the counts' sum" },
		{ "{\"le\":[0.1],\"counts\":[1,1],\"count\":2}",
		  "expected a histogram: {\"le\": [...], \"counts\": [...], \"sum\": number, \"count\": number}" },
		{ "0.5", "expected a histogram: {\"le\": [...], \"counts\": [...], \"sum\": number, \"count\": number}" },
	};
	static char big[16 * 520];
	char want[512];
	struct seen *z;
	size_t n;

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		hist_misplaced = 0;
		z = map_hist(kinds[i][0], good);
		snprintf(want, sizeof(want), "%s{runtime_tag=t,pid=1,model=m,version=1} 10|le=0.1,0.5,2|c=3,4,3,0|sum=4.25",
			 kinds[i][1]);
		HAS(z, want);
		ok(z->n == 2, "%s: instance_info and the model's histogram; the runtime's merged one is not mapped",
		   kinds[i][0]);
		ok(z->nbad == 0, "%s: no bad value", kinds[i][0]);
		ok(hist_misplaced == 0, "%s: hist set on histogram samples only", kinds[i][0]);
		ok(map_family(kinds[i][1]) && map_family(kinds[i][1])->type == METRIC_HISTOGRAM &&
			   !strcmp(map_family(kinds[i][1])->unit, "seconds"),
		   "%s: a histogram family in seconds", kinds[i][1]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		z = map_hist("queue", bad[i].h);
		ok(z->n == 1, "bad histogram %s: nothing yielded", bad[i].h);
		snprintf(want, sizeof(want), "runtime_data[0].report.execution_stats.models.m.1.latency_histograms.queue: %s",
			 bad[i].why);
		is_str(z->nbad == 1 ? z->bad[0] : "", want, "... a bad value that names its path and why");
	}
	/* at most 512 bounds: the producer's limit, and 513 is refused */
	for (size_t lim = 512; lim <= 513; lim++) {
		n = (size_t)snprintf(big, sizeof(big), "{\"le\":[");
		for (size_t k = 0; k < lim; k++)
			n += (size_t)snprintf(big + n, sizeof(big) - n, "%s%zu", k ? "," : "", k + 1);
		n += (size_t)snprintf(big + n, sizeof(big) - n, "],\"counts\":[");
		for (size_t k = 0; k <= lim; k++)
			n += (size_t)snprintf(big + n, sizeof(big) - n, "%s1", k ? "," : "");
		snprintf(big + n, sizeof(big) - n, "],\"sum\":1,\"count\":%zu}", lim + 1);
		z = map_hist("queue", big);
		ok(z->n == (lim == 512 ? 2u : 1u), "%zu bounds: %s", lim, lim == 512 ? "mapped" : "refused");
		ok(z->nbad == (lim == 512 ? 0u : 1u), "... %s", lim == 512 ? "no bad value" : "a bad value");
	}
}

int main(void)
{
	enum report_format fmt;
	struct seen *z;
	FILE *f;
	static char line[1 << 20];

	mapper = mapper_new();

	/* accel-monitor's own report. */
	z = map("{\"timestamp\":\"2026-11-21T05:30:00.000Z\",\"monitor\":{\"version\":\"0.1.0\",\"seq\":3},"
		"\"runtime_data\":[{\"runtime_index\":0,\"address\":\"process:srv\",\"pid\":42,\"runtime_tag\":\"srv\",\"error\":\"\","
		"\"report\":{\"runtime_vcpu_usage\":{\"period\":1.0,\"timestamp\":\"2026-11-21T05:30:00.000Z\",\"error\":\"\","
		"\"vcpu_usage\":{\"user\":50.0,\"system\":12.5}},\"memory_used\":{\"period\":1.0,\"timestamp\":"
		"\"2026-11-21T05:29:59.500Z\",\"error\":\"\",\"runtime_used_bytes\":{\"host\":4096,\"device\":null}}}},"
		"{\"runtime_index\":0,\"address\":\"process:srv\",\"pid\":43,\"runtime_tag\":\"srv\",\"error\":\"process 43 exited\",\"report\":{}}],"
		"\"device_data\":[],\"system_data\":{\"vcpu_usage\":{\"period\":1.0,\"timestamp\":\"2026-11-21T05:30:00.000Z\",\"error\":\"\","
		"\"average_usage\":{\"user\":70,\"nice\":40,\"system\":1,\"idle\":0,\"io_wait\":2,\"irq\":3,\"soft_irq\":4},"
		"\"usage_data\":{\"0\":{},\"1\":{}},\"context_switch_count\":5},"
		"\"memory_info\":{\"period\":1.0,\"timestamp\":\"2026-11-21T05:30:00.000Z\",\"error\":\"cannot read meminfo\"}},"
		"\"instance_info\":{\"instance_id\":\"i-1\",\"instance_type\":\"t3\",\"instance_availability_zone\":\"az\","
		"\"instance_region\":\"r\",\"subnet_id\":\"s\",\"instance_name\":\"n\",\"error\":\"\"}}",
		&fmt);
	is_int(fmt, FORMAT_ACCEL, "accel-monitor format detected");
	HAS(z, "instance_info{} 1");
	HAS(z, "runtime_vcpu_usage_ratio{runtime_tag=srv,pid=42,usage_type=user} 0.5");
	HAS(z, "runtime_vcpu_usage_ratio{runtime_tag=srv,pid=42,usage_type=system} 0.125");
	HAS(z, "runtime_memory_used_bytes{runtime_tag=srv,pid=42,memory_location=host} 4096");
	ok(!has(z, "runtime_memory_used_bytes{runtime_tag=srv,pid=42,memory_location=device} 0"),
	   "device null yields no sample (not 0)");
	HAS(z, "system_vcpu_count{} 2");
	HAS(z, "system_vcpu_usage_ratio{usage_type=user} 1");
	HAS(z, "system_vcpu_usage_ratio{usage_type=system} 0.1");
	is_int(z->nerr, 2, "two errors: the exited runtime and memory_info");
	is_str(z->errors[0], "runtime/srv: process 43 exited", "runtime entry error");
	is_str(z->errors[1], "memory_info/system: cannot read meminfo", "group error");
	ok(!has(z, "system_memory_total_bytes{} 0"), "a group in error yields no samples");
	is_int(z->n, 7, "seven samples in all");
	{
		int64_t want = 1795239000000LL, mem = 1795238999500LL;
		int ts_ok = 1;

		for (size_t i = 0; i < z->n; i++)
			ts_ok &= z->ts[i] == (strstr(z->lines[i], "runtime_memory") ? mem : want);
		ok(ts_ok, "samples carry their group's timestamp");
	}

	/* Wrong types where numbers belong: reported with their path, the rest still mapped. */
	z = map("{\"system_data\":{\"memory_info\":{\"error\":\"\",\"memory_total_bytes\":\"big\",\"memory_used_bytes\":7,"
		"\"swap_total_bytes\":[1],\"swap_used_bytes\":null}}}",
		&fmt);
	is_int(fmt, FORMAT_NEURON_2X, "no accel keys: read as neuron-monitor 2.x");
	HAS(z, "system_memory_used_bytes{} 7");
	is_int(z->nbad, 2, "two bad values");
	is_str(z->bad[0], "system_data.memory_info.memory_total_bytes: expected a number, got a string", "string value");
	is_str(z->bad[1], "system_data.memory_info.swap_total_bytes: expected a number, got an array", "array value");
	is_int(z->ts[0], 42, "no timestamp in the input: now is used");

	/* An invalid timestamp is replaced by the read time, counted and logged, not silently. */
	{
		unsigned long long before = mapper_bad_timestamps(mapper);

		z = map("{\"timestamp\":\"2026-02-30T00:00:00Z\",\"monitor\":{},\"system_data\":{\"memory_info\":"
			"{\"timestamp\":\"2026-02-30T00:00:00Z\",\"error\":\"\",\"memory_used_bytes\":7}}}",
			&fmt);
		HAS(z, "system_memory_used_bytes{} 7");
		is_int(z->ts[z->n - 1], 42, "2026-02-30: the read time is used");
		is_int(mapper_bad_timestamps(mapper) - before, 1, "counted once (the group repeats the report's text)");
		z = map("{\"timestamp\":\"2026-11-21T05:30:00.000Z\",\"monitor\":{},\"system_data\":{\"memory_info\":"
			"{\"timestamp\":\"yesterday\",\"error\":\"\",\"memory_used_bytes\":7}}}",
			&fmt);
		is_int(z->ts[z->n - 1], 1795239000000LL, "a group's invalid time: the report's time is used");
		is_int(mapper_bad_timestamps(mapper) - before, 2, "the group's invalid time is counted");
	}

	/* neuron-monitor 2.x fixture, line 1. */
	f = fopen("tests/fixtures/streams/neuron-monitor-2x.jsonl", "r");
	if (!f || !fgets(line, sizeof(line), f))
		return 2;
	fclose(f);
	z = map(line, &fmt);
	is_int(fmt, FORMAT_NEURON_2X, "2.x detected");
	HAS(z, "neuroncore_utilization_ratio{runtime_tag=my_app_1,pid=4242,neuroncore=0} 0.6241");
	HAS(z, "neuron_runtime_vcpu_usage_ratio{runtime_tag=my_app_1,pid=4242,usage_type=user} 0.4201");
	HAS(z, "execution_status_total{runtime_tag=my_app_1,pid=4242,status_type=completed} 118");
	HAS(z, "execution_latency_seconds{runtime_tag=my_app_1,pid=4242,percentile=p50} 0.003493427");
	HAS(z, "neuroncore_memory_usage_runtime_memory{runtime_tag=my_app_1,pid=4242,neuroncore=0,memory_location=None} 43216");
	HAS(z, "hardware_ecc_events_total{neuron_device_index=1,event_type=mem_ecc_corrected} 0");
	HAS(z, "neuron_hardware_info{neuron_device_count=2,neuroncore_per_device_count=2} 1");
	HAS(z, "neuron_runtime_vcpu_usage_ratio{runtime_tag=5151,pid=5151,usage_type=user} 0.0098");

	/* neuron-monitor 2020 fixture, line 1. */
	f = fopen("tests/fixtures/streams/neuron-monitor-2020.jsonl", "r");
	if (!f || !fgets(line, sizeof(line), f))
		return 2;
	fclose(f);
	z = map(line, &fmt);
	is_int(fmt, FORMAT_NEURON_2020, "2020 detected");
	HAS(z, "neuroncore_utilization_ratio{runtime_tag=0,neuroncore=0} 0.4201");
	HAS(z, "hardware_ecc_events_total{runtime_tag=0,neuron_device_index=0,event_type=mem_ecc_corrected} 0");
	HAS(z, "execution_latency_seconds{runtime_tag=0,percentile=p99} 0.013938");

	/* Drop-in exactness with neuron-monitor-prometheus.py. */
	{
		struct seen *y;
		int exact = 1;

		/* Ratios are value / 100.0, bit for bit: 3.96 gives 0.039599999999999996, not 0.0396. */
		z = map("{\"neuron_runtime_data\":[{\"pid\":7,\"neuron_runtime_tag\":\"1\",\"error\":\"\",\"report\":"
			"{\"neuroncore_counters\":{\"error\":\"\",\"neuroncores_in_use\":{\"0\":{\"neuroncore_utilization\":3.96},"
			"\"1\":{\"neuroncore_utilization\":55.4}}}}}]}",
			&fmt);
		for (size_t i = 0; i < z->n; i++)
			if (strstr(z->lines[i], "neuroncore=0"))
				exact &= strstr(z->lines[i], " 0.0396\0") != NULL || !strcmp(strchr(z->lines[i], ' '), " 0.0396");
		ok(z->n == 3, "two cores and instance_info (%zu)", z->n);
		{
			static struct seen raw;
			struct map_cb cb = { on_sample_raw, NULL, NULL, &raw };
			json_t *r = json_loads("{\"neuron_runtime_data\":[{\"pid\":7,\"neuron_runtime_tag\":\"1\",\"error\":\"\","
					       "\"report\":{\"neuroncore_counters\":{\"error\":\"\",\"neuroncores_in_use\":"
					       "{\"0\":{\"neuroncore_utilization\":3.96}}}}}]}",
					       0, NULL);

			memset(&raw, 0, sizeof(raw));
			raw_values_n = 0;
			map_report(r, 42, &cb);
			json_decref(r);
			ok(raw_values_n == 2 && raw_values[1] == 3.96 / 100.0 && raw_values[1] != 3.96 * 0.01,
			   "3.96 percent is 3.96 / 100.0 = 0.039599999999999996 (%.17g)", raw_values_n == 2 ? raw_values[1] : -1);
		}
		ok(exact, "the ratio is in the sample");

		/* Trn2 UltraServers: ultraserver_id on every series, only when instance_info has it. */
		y = map("{\"instance_info\":{\"instance_id\":\"i-1\",\"ultraserver_id\":\"us-42\",\"error\":\"\"},"
			"\"neuron_runtime_data\":[],\"system_data\":{\"memory_info\":{\"error\":\"\",\"memory_used_bytes\":7}}}",
			&fmt);
		is_int(ultra_count, 2, "ultraserver_id on both samples (instance_info and memory)");
		is_str(ultra_value, "us-42", "its value");
		y = map("{\"instance_info\":{\"instance_id\":\"i-1\",\"error\":\"\"},"
			"\"neuron_runtime_data\":[],\"system_data\":{\"memory_info\":{\"error\":\"\",\"memory_used_bytes\":7}}}",
			&fmt);
		is_int(ultra_count, 0, "no ultraserver_id label when instance_info has no such key");
		(void)y;

		/* The producer's self-timing: monitor.collectors.<collector>.<group>. */
		z = map("{\"monitor\":{\"version\":\"0.1.0\",\"seq\":0,\"collectors\":{\"nvidia\":{\"device_power\":"
			"{\"seconds\":0.5,\"cpu_seconds\":0.25,\"success\":true}},\"mem\":{\"memory_info\":"
			"{\"seconds\":0.125,\"cpu_seconds\":0.125,\"success\":false}}}},\"runtime_data\":[]}",
			&fmt);
		HAS(z, "accel_monitor_collector_duration_seconds{collector=nvidia,group=device_power} 0.5");
		HAS(z, "accel_monitor_collector_cpu_seconds{collector=nvidia,group=device_power} 0.25");
		HAS(z, "accel_monitor_collector_success{collector=nvidia,group=device_power} 1");
		HAS(z, "accel_monitor_collector_success{collector=mem,group=memory_info} 0");

		/* Four neuron-monitor runtimes tagged "1": the pid keeps them apart (accel-prom leaves it out). */
		z = map("{\"neuron_runtime_data\":["
			"{\"pid\":11,\"neuron_runtime_tag\":\"1\",\"error\":\"\",\"report\":{\"memory_used\":{\"error\":\"\","
			"\"neuron_runtime_used_bytes\":{\"host\":1}}}},"
			"{\"pid\":12,\"neuron_runtime_tag\":\"1\",\"error\":\"\",\"report\":{\"memory_used\":{\"error\":\"\","
			"\"neuron_runtime_used_bytes\":{\"host\":2}}}},"
			"{\"pid\":13,\"neuron_runtime_tag\":\"1\",\"error\":\"\",\"report\":{\"memory_used\":{\"error\":\"\","
			"\"neuron_runtime_used_bytes\":{\"host\":3}}}},"
			"{\"pid\":14,\"neuron_runtime_tag\":\"1\",\"error\":\"\",\"report\":{\"memory_used\":{\"error\":\"\","
			"\"neuron_runtime_used_bytes\":{\"host\":4}}}}]}",
			&fmt);
		HAS(z, "neuron_runtime_memory_used_bytes{runtime_tag=1,pid=11,memory_location=host} 1");
		HAS(z, "neuron_runtime_memory_used_bytes{runtime_tag=1,pid=14,memory_location=host} 4");
		is_int(prom_skipped_pid, 4, "the pid of each neuron-monitor runtime is marked for accel-prom to leave out");
	}

	/* A report without instance_info keeps the instance labels of the last one that had it. */
	mapper_reset(mapper);
	z = map("{\"neuron_runtime_data\":[],\"system_data\":{\"memory_info\":{\"error\":\"\",\"memory_used_bytes\":7}}}",
		&fmt);
	is_str(inst_id, "", "before any instance_info: empty instance labels");
	z = map("{\"instance_info\":{\"instance_id\":\"i-1\",\"error\":\"\"},\"neuron_runtime_data\":[]}", &fmt);
	is_str(inst_id, "i-1", "instance_info read");
	z = map("{\"neuron_runtime_data\":[],\"system_data\":{\"memory_info\":{\"error\":\"\",\"memory_used_bytes\":7}}}",
		&fmt);
	is_str(inst_id, "i-1", "a report without instance_info keeps the last instance labels");
	HAS(z, "system_memory_used_bytes{} 7");
	z = map("{\"instance_info\":{\"instance_id\":\"i-2\",\"error\":\"\"},\"neuron_runtime_data\":[]}", &fmt);
	is_str(inst_id, "i-2", "a new instance_info replaces them");
	mapper_reset(mapper);

	/* No silent limits: every rule fits, and nothing captured is cut. */
	{
		char err[256] = "";
		static char big[4096];
		static char entity_seen[512];
		int rc = map_rules_check(err, sizeof(err));

		ok(rc == 0, "every rule compiles and fits SAMPLE_MAX_LABELS (%s)", err);
		ok(map_max_labels() <= SAMPLE_MAX_LABELS, "the most labels a sample can carry: %zu of %d",
		   map_max_labels(), SAMPLE_MAX_LABELS);
		/* A [field] capture longer than 23 bytes (it was cut there). */
		snprintf(big, sizeof(big),
			 "{\"system_data\":{\"neuron_hw_counters\":{\"error\":\"\",\"neuron_devices\":[{\"neuron_device_index\":"
			 "\"a-device-index-that-is-longer-than-23-bytes\",\"mem_ecc_corrected\":3}]}}}");
		z = map(big, &fmt);
		HAS(z, "hardware_ecc_events_total{neuron_device_index=a-device-index-that-is-longer-than-23-bytes,"
		       "event_type=mem_ecc_corrected} 3");
		/* A device key longer than 96 bytes makes an entity that is not cut. */
		snprintf(big, sizeof(big),
			 "{\"monitor\":{},\"device_data\":[{\"device_type\":\"hwmon\",\"error\":\"\",\"report\":{\"device_power\":"
			 "{\"error\":\"\",\"devices\":{\"%0200d\":{\"power_watts\":5}}}}}]}",
			 7);
		entity_seen[0] = '\0';
		last_entity = entity_seen;
		z = map(big, &fmt);
		last_entity = NULL;
		is_int(strlen(entity_seen), strlen("hwmon:") + 200, "a 206-byte entity is kept whole");
	}

	/* Integers >= 2^63 arrive as reals; nothing overflows or wraps. */
	{
		int exact = 1;

		z = map_flags("{\"neuron_runtime_data\":[{\"pid\":9223372036854775808,\"neuron_runtime_tag\":\"\","
			      "\"error\":\"\",\"report\":{\"memory_used\":{\"error\":\"\",\"neuron_runtime_used_bytes\":"
			      "{\"host\":18446744073709551615,\"neuron_device\":1e19}}}}],"
			      "\"system_data\":{\"memory_info\":{\"error\":\"\",\"memory_total_bytes\":9223372036854775808,"
			      "\"memory_used_bytes\":1e308,\"swap_total_bytes\":4242}}}",
			      JSON_DECODE_INT_AS_REAL, &fmt);
		HAS(z, "system_memory_total_bytes{} 9.223372037e+18");
		HAS(z, "system_memory_used_bytes{} 1e+308");
		HAS(z, "system_swap_total_bytes{} 4242");
		HAS(z, "neuron_runtime_memory_used_bytes{runtime_tag=9.2233720368547758e+18,pid=9.2233720368547758e+18,"
		       "memory_location=host} 1.844674407e+19");
		HAS(z, "neuron_runtime_memory_used_bytes{runtime_tag=9.2233720368547758e+18,pid=9.2233720368547758e+18,"
		       "memory_location=neuron_device} 1e+19");
		is_int(z->nbad, 0, "no bad values");
		/* A real pid that fits: written as the integer it is. */
		z = map_flags("{\"neuron_runtime_data\":[{\"pid\":4242,\"neuron_runtime_tag\":\"a\",\"error\":\"\","
			      "\"report\":{\"memory_used\":{\"error\":\"\",\"neuron_runtime_used_bytes\":{\"host\":1}}}}]}",
			      JSON_DECODE_INT_AS_REAL, &fmt);
		HAS(z, "neuron_runtime_memory_used_bytes{runtime_tag=a,pid=4242,memory_location=host} 1");
		/* Scaling past DBL_MAX: a bad value, no sample (no "inf" in any sink). */
		z = map("{\"monitor\":{},\"device_data\":[{\"device_type\":\"nvidia\",\"error\":\"\",\"report\":{"
			"\"device_clocks\":{\"error\":\"\",\"devices\":{\"0\":{\"clocks_mhz\":{\"sm\":1e308,\"memory\":1e300}}}}}}],"
			"\"system_data\":{\"vcpu_usage\":{\"error\":\"\",\"average_usage\":{\"user\":1e308,\"nice\":1e308}}}}",
			&fmt);
		for (size_t i = 0; i < z->n; i++)
			if (strstr(z->lines[i], " inf")) {
				fprintf(stderr, "# %s\n", z->lines[i]);
				exact = 0;
			}
		ok(exact, "no sample is infinite");
		HAS(z, "accelerator_clock_hertz{device_type=nvidia,device=0,uuid=,model=,pci_bus_id=,clock=memory} 1e+306");
		is_int(z->nbad, 1, "1e308 MHz is one bad value");
		is_str(z->bad[0], "device_data[0].report.device_clocks.devices.0.clocks_mhz.sm: out of range once converted to base units",
		       "saying where");
		HAS(z, "system_vcpu_usage_ratio{usage_type=user} 1");
	}

	test_every_field_mapped();

	/* The dcgm-exporter name table has no row that points at a family the mapping does not produce. */
	{
		static const char extra[] = "DCGM_FI_DEV_ROW_REMAP_PENDING, gauge, p\n";
		char *err = NULL, *text = NULL;
		size_t len = 0, waiting = 0;
		struct prom_dcgm *d;
		FILE *cf = fopen("tests/fixtures/dcgm/default-counters.csv", "r");
		FILE *mem = open_memstream(&text, &len);

		while (cf && mem && fgets(line, sizeof(line), cf))
			fputs(line, mem);
		if (mem) {
			fputs(extra, mem);
			fclose(mem);
		}
		if (cf)
			fclose(cf);
		d = prom_dcgm_parse(text ? text : "", len, "default-counters.csv", &err);
		for (size_t i = 0; d; i++) {
			const char *why = NULL, *name = prom_dcgm_unsupported(d, i, &why, NULL);

			if (!name)
				break;
			if (why && strstr(why, "not produced")) {
				fprintf(stderr, "# %s: %s\n", name, why);
				waiting++;
			}
		}
		if (!d)
			fprintf(stderr, "# %s\n", err ? err : "?");
		ok(d && waiting == 0, "no DCGM field waits for a family (%zu do)", waiting);
		ok(d && prom_dcgm_served(d) >= 21, "the DCGM rows are served (%zu)", d ? prom_dcgm_served(d) : 0);
		prom_dcgm_free(d);
		free(text);
		free(err);
	}

	/* The fields that were read but never exported now have families. */
	z = map("{\"monitor\":{},\"device_data\":[{\"device_type\":\"nvidia\",\"error\":\"\",\"report\":{"
		"\"device_memory\":{\"error\":\"\",\"devices\":{\"0\":{\"reserved_bytes\":512,\"mig_devices\":{\"1\":"
		"{\"uuid\":\"MIG-1\",\"gpu_instance_id\":2,\"compute_instance_id\":0,\"total_bytes\":10,\"used_bytes\":4,"
		"\"free_bytes\":6}}}}},"
		"\"device_utilization\":{\"error\":\"\",\"devices\":{\"0\":{\"pcie_tx_bytes_per_second\":1024,"
		"\"pcie_rx_bytes_per_second\":2048}}},"
		"\"device_power\":{\"error\":\"\",\"devices\":{\"0\":{\"energy_total_joules\":123.5}}},"
		"\"device_errors\":{\"error\":\"\",\"devices\":{\"0\":{\"last_xid\":79,\"retired_pages\":{\"total\":3,"
		"\"single_bit\":1,\"double_bit\":2,\"pending\":true},\"remapped_rows\":{\"correctable\":5,"
		"\"uncorrectable\":1,\"pending\":false,\"failed\":true}}}}}},"
		"{\"device_type\":\"amdgpu\",\"error\":\"\",\"report\":{\"device_memory\":{\"error\":\"\",\"devices\":"
		"{\"0\":{\"gtt_total_bytes\":4096,\"gtt_used_bytes\":100}}}}}]}",
		&fmt);
#define DEV0(t) "{device_type=" t ",device=0,uuid=,model=,pci_bus_id="
	HAS(z, "accelerator_memory_reserved_bytes" DEV0("nvidia") "} 512");
	HAS(z, "accelerator_mig_memory_total_bytes" DEV0("nvidia") ",mig_device=1} 10");
	HAS(z, "accelerator_mig_memory_used_bytes" DEV0("nvidia") ",mig_device=1} 4");
	HAS(z, "accelerator_mig_memory_free_bytes" DEV0("nvidia") ",mig_device=1} 6");
	HAS(z, "accelerator_pcie_throughput_bytes_per_second" DEV0("nvidia") ",direction=tx} 1024");
	HAS(z, "accelerator_pcie_throughput_bytes_per_second" DEV0("nvidia") ",direction=rx} 2048");
	HAS(z, "accelerator_energy_consumed_joules" DEV0("nvidia") "} 123.5");
	HAS(z, "accelerator_last_xid" DEV0("nvidia") "} 79");
	HAS(z, "accelerator_retired_pages" DEV0("nvidia") "} 3");
	HAS(z, "accelerator_retired_pages_pending" DEV0("nvidia") "} 1");
	HAS(z, "accelerator_remapped_rows" DEV0("nvidia") ",type=correctable} 5");
	HAS(z, "accelerator_remapped_rows" DEV0("nvidia") ",type=uncorrectable} 1");
	HAS(z, "accelerator_row_remap_pending" DEV0("nvidia") "} 0");
	HAS(z, "accelerator_row_remap_failed" DEV0("nvidia") "} 1");
	HAS(z, "accelerator_gtt_memory_total_bytes" DEV0("amdgpu") "} 4096");
	HAS(z, "accelerator_gtt_memory_used_bytes" DEV0("amdgpu") "} 100");
	is_int(z->nbad, 0, "booleans are read as 0/1 where a flag is exported");
	z = map("{\"monitor\":{},\"device_data\":[{\"device_type\":\"nvidia\",\"error\":\"\",\"report\":{"
		"\"device_errors\":{\"error\":\"\",\"devices\":{\"0\":{\"remapped_rows\":{\"failed\":1}}}}}}]}",
		&fmt);
	is_str(z->nbad ? z->bad[0] : "", "device_data[0].report.device_errors.devices.0.remapped_rows.failed: expected a boolean, got a number",
	       "a number where a flag belongs is a bad value");

	/* Endpoint runtimes: per model and version, server devices, the runtime level only without models. */
	{
		static char el[16384];

		if (!fixture_line("tests/fixtures/streams/endpoint-runtimes.jsonl", 1, el, sizeof(el)))
			return 2;
		z = map(el, &fmt);
		exactly(z, endpoint_report1, sizeof(endpoint_report1) / sizeof(endpoint_report1[0]),
			"endpoint-runtimes line 1 (gauges only)");
		if (!fixture_line("tests/fixtures/streams/endpoint-runtimes.jsonl", 2, el, sizeof(el)))
			return 2;
		z = map(el, &fmt);
		exactly(z, endpoint_report2, sizeof(endpoint_report2) / sizeof(endpoint_report2[0]),
			"endpoint-runtimes line 2");
		ok(!has(z, "execution_status_total{runtime_tag=tritonserver,pid=3100,status_type=completed} 130"),
		   "no runtime-level sum next to the models'");
		HAS(z, "inference_compute_infer_duration_seconds_total{runtime_tag=tritonserver,pid=3100,model=resnet50,"
		       "version=1} 0.4");
		HAS(z, "execution_errors_total{runtime_tag=java,pid=3300,error_type=http_4xx} 1");
		/* A weight that is absent yields nothing; one of the wrong type is a bad value. */
		z = map("{\"monitor\":{},\"runtime_data\":[{\"runtime_tag\":\"t\",\"pid\":1,\"error\":\"\",\"report\":"
			"{\"execution_stats\":{\"error\":\"\",\"models\":{\"m\":{\"\":{\"mean_seconds\":{\"queue\":0.5}},"
			"\"2\":{\"mean_seconds\":{\"queue\":0.5},\"execution_summary\":{\"completed\":\"x\"}}}}}}}]}",
			&fmt);
		HAS(z, "inference_queue_mean_seconds{runtime_tag=t,pid=1,model=m,version=} 0.5");
		HAS(z, "inference_queue_mean_seconds{runtime_tag=t,pid=1,model=m,version=2} 0.5");
		is_int(z->n, 3, "no duration without completed requests");
		is_int(z->nbad, 2, "a completed count of the wrong type: a bad value (status and weight)");
		for (int b = 0; b < 2; b++)
			is_str(z->nbad == 2 ? z->bad[b] : "",
			       "runtime_data[0].report.execution_stats.models.m.2.execution_summary.completed: "
			       "expected a number, got a string",
			       "the status rule's and the weight's messages name the field's own path");
		/* neuron-monitor's execution_stats (no models): the runtime level, as before. */
		z = map("{\"monitor\":{},\"runtime_data\":[{\"runtime_tag\":\"t\",\"pid\":1,\"error\":\"\",\"report\":"
			"{\"execution_stats\":{\"error\":\"\",\"execution_summary\":{\"completed\":5},"
			"\"error_summary\":{\"http_4xx\":1}}}}]}",
			&fmt);
		HAS(z, "execution_status_total{runtime_tag=t,pid=1,status_type=completed} 5");
		HAS(z, "execution_errors_total{runtime_tag=t,pid=1,error_type=http_4xx} 1");
		is_int(z->n, 3, "each once (only_with: not again without models)");
	}

	/* Every family is documented with a help text and a unit-consistent name. */
	{
		int fam_ok = 1;

		for (size_t i = 0; map_family_at(i); i++)
			fam_ok &= map_family_at(i)->help[0] &&
				  (map_family_at(i)->type != METRIC_COUNTER || strstr(map_family_at(i)->name, "_total")) &&
				  (map_family_at(i)->type != METRIC_HISTOGRAM ||
				   (!strstr(map_family_at(i)->name, "_total") && !strstr(map_family_at(i)->name, "_bucket") &&
				    !strstr(map_family_at(i)->name, "_count") && !strstr(map_family_at(i)->name, "_sum")));
		ok(fam_ok, "every family has help; counters end in _total; histograms have no suffix");
	}
	test_registry();
	test_identities();
	test_histograms();
	mapper_free(mapper);
	return done_testing();
}
