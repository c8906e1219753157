/* SPDX-License-Identifier: MIT */
/*
 * accel-otlp's naming table and the rules that resolve a family with it;
 * see otlp_names.h. Adding a semantic-convention name is one row.
 */
#include "otlp_names.h"

#include "../../common/samples.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The attributes of a GPU (a component of hw.type gpu) and of a sensor whose parent is the GPU. */
#define HW_GPU "uuid>hw.id,device>hw.name,model>hw.model,device_type>hw.vendor,+hw.type=gpu"
#define HW_SENSOR(type, label) "uuid>hw.parent," label ">hw.name,+hw.type=" type
#define GPU_MD "docs/hardware/gpu.md"
#define COMMON_MD "docs/hardware/common.md"
#define GENAI "model>gen_ai.request.model"
#define GENAI_MD "docs/gen-ai/gen-ai-metrics.md (attribute)"
#define GENAI_METRICS_MD "docs/gen-ai/gen-ai-metrics.md"

#define ROW(fam, name, unit, attrs, md) { fam, name, unit, 0, attrs, md }
#define UPDOWN(fam, name, unit, attrs, md) { fam, name, unit, 1, attrs, md }
/* A family that keeps its name (rule 2) but names its model as the GenAI conventions do. */
#define MODEL(fam) { fam, NULL, NULL, 0, GENAI, GENAI_MD }

const struct otlp_name_row otlp_name_rows[] = {
	/* Hardware: the GPU (and any accelerator: Neuron, AMD, ...) as a hw.type=gpu component. */
	ROW("accelerator_utilization_ratio", "hw.gpu.utilization", "1", HW_GPU ",engine>hw.gpu.task", GPU_MD),
	UPDOWN("accelerator_memory_used_bytes", "hw.gpu.memory.usage", "By", HW_GPU, GPU_MD),
	UPDOWN("accelerator_memory_total_bytes", "hw.gpu.memory.limit", "By", HW_GPU, GPU_MD),
	ROW("accelerator_ecc_errors_total", "hw.errors", "{error}", HW_GPU ",type>error.type", GPU_MD),
	ROW("accelerator_power_watts", "hw.power", "W", HW_GPU, COMMON_MD),
	ROW("accelerator_energy_joules_total", "hw.energy", "J", HW_GPU, COMMON_MD),
	/* Sensors of the GPU: components of their own, whose hw.parent is the GPU's hw.id. */
	ROW("accelerator_temperature_celsius", "hw.temperature", "Cel", HW_SENSOR("temperature", "sensor"),
	    "docs/hardware/temperature.md"),
	ROW("accelerator_voltage_volts", "hw.voltage", "V", HW_SENSOR("voltage", "sensor"),
	    "docs/hardware/voltage.md"),
	ROW("accelerator_fan_speed_rpm", "hw.fan.speed", "rpm", HW_SENSOR("fan", "fan"), "docs/hardware/fan.md"),
	/* Inference servers: the served model as gen_ai.request.model; the latency histograms as GenAI's server metrics. */
	ROW("accel_model_request_duration_seconds", "gen_ai.server.request.duration", "s", GENAI, GENAI_METRICS_MD),
	ROW("accel_model_time_to_first_token_seconds", "gen_ai.server.time_to_first_token", "s", GENAI,
	    GENAI_METRICS_MD),
	ROW("accel_model_time_per_output_token_seconds", "gen_ai.server.time_per_output_token", "s", GENAI,
	    GENAI_METRICS_MD),
	MODEL("accel_model_queue_duration_seconds"),
	MODEL("execution_errors_total"),
	MODEL("execution_status_total"),
	MODEL("execution_latency_seconds"),
	MODEL("inference_queue_latency_seconds"),
	MODEL("inference_time_to_first_token_seconds"),
	MODEL("inference_time_per_output_token_seconds"),
	MODEL("inference_request_mean_seconds"),
	MODEL("inference_queue_mean_seconds"),
	MODEL("inference_compute_input_mean_seconds"),
	MODEL("inference_compute_infer_mean_seconds"),
	MODEL("inference_compute_output_mean_seconds"),
	MODEL("inference_time_to_first_token_mean_seconds"),
	MODEL("inference_time_per_output_token_mean_seconds"),
	MODEL("inference_request_duration_seconds_total"),
	MODEL("inference_queue_duration_seconds_total"),
	MODEL("inference_compute_input_duration_seconds_total"),
	MODEL("inference_compute_infer_duration_seconds_total"),
	MODEL("inference_compute_output_duration_seconds_total"),
	MODEL("inference_requests_in_flight"),
	MODEL("inference_requests_pending"),
	MODEL("inference_batch_size"),
	MODEL("inference_tokens_total"),
	MODEL("inference_kv_cache_usage_ratio"),
	MODEL("inference_energy_joules_total"),
	MODEL("inference_energy_per_request_joules"),
	MODEL("inference_tokens_per_joule"),
};
const size_t otlp_name_nrows = ARRAY_SIZE(otlp_name_rows);

/* docs/resource/host.md, cloud.md. */
const struct otlp_rename otlp_resource_names[] = {
	{ "hostname", "host.name" },
	{ "node_name", "k8s.node.name" },
	{ "instance_name", "instance_name" },
	{ "instance_id", "host.id" },
	{ "instance_type", "host.type" },
	{ "region", "cloud.region" },
	{ "availability_zone", "cloud.availability_zone" },
	{ "subnet_id", "subnet_id" },
	{ "ultraserver_id", "ultraserver_id" },
};
const size_t otlp_resource_nnames = ARRAY_SIZE(otlp_resource_names);

/* docs/registry/attributes/k8s.md, aws.md (ECS: the task's family and id; the cluster is a name, not the ARN). */
const struct otlp_rename otlp_attr_names[] = {
	{ "pod", "k8s.pod.name" },
	{ "namespace", "k8s.namespace.name" },
	{ "container", "k8s.container.name" },
	{ "ecs_task_family", "aws.ecs.task.family" },
	{ "ecs_task_id", "aws.ecs.task.id" },
};
const size_t otlp_attr_nnames = ARRAY_SIZE(otlp_attr_names);

const struct family otlp_health_families[OTLP_HEALTH_FAMILIES] = {
	COUNTER("accel_otlp_points_sent_total", "Data points the receiver acknowledged", "count"),
	COUNTER("accel_otlp_points_failed_total",
		"Data points in requests the receiver refused with a status that is not retried, dropped", "count"),
	COUNTER("accel_otlp_points_dropped_total", "Data points dropped before sending (the queue was full)",
		"count"),
	COUNTER("accel_otlp_points_rejected_total", "Data points the receiver rejected in a partial success",
		"count"),
	COUNTER("accel_otlp_requests_sent_total", "Requests the receiver acknowledged", "count"),
	COUNTER("accel_otlp_requests_failed_total", "Requests that failed for good", "count"),
	COUNTER("accel_otlp_requests_retried_total", "Requests sent again after a retryable failure", "count"),
	GAUGE("accel_otlp_queue_bytes", "Bytes of requests waiting in the queue", "bytes"),
	GAUGE("accel_otlp_queue_requests", "Requests waiting in the queue", "count"),
	COUNTER("accel_otlp_input_lines_total", "Lines read from the input", "count"),
	COUNTER("accel_otlp_input_bad_lines_total", "Lines of the input that were not a report", "count"),
};

/* Rule 2's units: accel-prom's unit, the word a name ends in, the UCUM unit; gauge_only: "1" is a gauge's. */
static const struct {
	const char *unit, *word, *ucum;
	int gauge_only;
} units[] = {
	{ "bytes", "_bytes", "By", 0 },     { "seconds", "_seconds", "s", 0 },   { "ratio", "_ratio", "1", 1 },
	{ "watts", "_watts", "W", 0 },      { "joules", "_joules", "J", 0 },     { "celsius", "_celsius", "Cel", 0 },
	{ "hertz", "_hertz", "Hz", 0 },     { "volts", "_volts", "V", 0 },
	{ "bytes_per_second", "_bytes_per_second", "By/s", 0 },
};

static const struct otlp_name_row *row_of(const char *family)
{
	for (size_t i = 0; i < otlp_name_nrows; i++)
		if (!strcmp(otlp_name_rows[i].family, family))
			return &otlp_name_rows[i];
	return NULL;
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n > k && !memcmp(s + n - k, suffix, k);
}

/* Rule 2: the name and unit of a family without a row (or a row without a name). */
static int default_name(const struct family *f, struct otlp_desc *d)
{
	size_t n = strlen(f->name);
	const char *unit = f->unit ? f->unit : "";
	int w;

	if (f->type == METRIC_COUNTER && ends_with(f->name, n, "_total"))
		n -= 6;
	d->unit[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(units[i].unit, unit) || (units[i].gauge_only && f->type != METRIC_GAUGE) ||
		    !ends_with(f->name, n, units[i].word))
			continue;
		n -= strlen(units[i].word);
		snprintf(d->unit, sizeof(d->unit), "%s", units[i].ucum);
		break;
	}
	if (!d->unit[0] && *unit)
		snprintf(d->unit, sizeof(d->unit), "{%s}", unit);
	w = snprintf(d->name, sizeof(d->name), "%.*s", (int)n, f->name);
	return w > 0 && (size_t)w < sizeof(d->name) ? 0 : -EINVAL;
}

/* A row's attrs into d->attrs (copied into d->pool). */
static int parse_attrs(const char *spec, struct otlp_desc *d, char *err, size_t errsz)
{
	size_t len = strlen(spec);
	char *p = d->pool, *end;

	if (len >= sizeof(d->pool)) {
		snprintf(err, errsz, "%s: attrs longer than %zu bytes", d->fam->name, sizeof(d->pool) - 1);
		return -EINVAL;
	}
	memcpy(p, spec, len + 1);
	end = p + len;
	while (p < end) {
		char *comma = strchr(p, ','), *sep;
		struct otlp_attr_rule *r;

		if (comma)
			*comma = '\0';
		if (d->nattrs == OTLP_ATTRS_MAX) {
			snprintf(err, errsz, "%s: more than %d attrs", d->fam->name, OTLP_ATTRS_MAX);
			return -EINVAL;
		}
		r = &d->attrs[d->nattrs++];
		if (*p == '+' && (sep = strchr(p, '=')) && sep > p + 1 && sep[1]) {
			*sep = '\0';
			*r = (struct otlp_attr_rule){ NULL, p + 1, sep + 1 };
		} else if ((sep = strchr(p, '>')) && sep > p && sep[1]) {
			*sep = '\0';
			*r = (struct otlp_attr_rule){ p, sep + 1, NULL };
		} else {
			snprintf(err, errsz, "%s: attrs: \"%s\" is neither label>attribute nor +key=value", d->fam->name,
				 p);
			return -EINVAL;
		}
		p = comma ? comma + 1 : end;
	}
	return 0;
}

int otlp_desc_resolve(const struct family *fam, struct otlp_desc *d, char *err, size_t errsz)
{
	const struct otlp_name_row *row = row_of(fam->name);

	memset(d, 0, sizeof(*d));
	d->fam = fam;
	d->row = row;
	d->kind = fam->type == METRIC_COUNTER ? OTLP_KIND_SUM
		  : fam->type == METRIC_GAUGE ? OTLP_KIND_GAUGE
					       : OTLP_KIND_HISTOGRAM;
	if (row && row->updown) {
		if (fam->type != METRIC_GAUGE) {
			snprintf(err, errsz, "%s: only a gauge can be an UpDownCounter", fam->name);
			return -EINVAL;
		}
		d->kind = OTLP_KIND_UPDOWN;
	}
	if (row && row->name) {
		int a = snprintf(d->name, sizeof(d->name), "%s", row->name);
		int b = snprintf(d->unit, sizeof(d->unit), "%s", row->unit ? row->unit : "");

		if (a <= 0 || (size_t)a >= sizeof(d->name) || b < 0 || (size_t)b >= sizeof(d->unit)) {
			snprintf(err, errsz, "%s: its row's name or unit is empty or too long", fam->name);
			return -EINVAL;
		}
	} else if (default_name(fam, d)) {
		snprintf(err, errsz, "%s: the name does not fit %d bytes", fam->name, OTLP_NAME_MAX);
		return -EINVAL;
	}
	return row && row->attrs ? parse_attrs(row->attrs, d, err, errsz) : 0;
}

const char *otlp_resource_attr(const char *label)
{
	for (size_t i = 0; i < otlp_resource_nnames; i++)
		if (!strcmp(otlp_resource_names[i].label, label))
			return otlp_resource_names[i].key;
	return NULL;
}

const char *otlp_desc_attr(const struct otlp_desc *d, const char *label)
{
	if (otlp_resource_attr(label))
		return NULL;
	for (size_t i = 0; i < d->nattrs; i++)
		if (d->attrs[i].from && !strcmp(d->attrs[i].from, label))
			return d->attrs[i].key;
	for (size_t i = 0; i < otlp_attr_nnames; i++)
		if (!strcmp(otlp_attr_names[i].label, label))
			return otlp_attr_names[i].key;
	return label;
}

const char *otlp_kind_name(enum otlp_kind k)
{
	switch (k) {
	case OTLP_KIND_GAUGE:
		return "Gauge";
	case OTLP_KIND_SUM:
		return "Sum (monotonic, cumulative)";
	case OTLP_KIND_UPDOWN:
		return "Sum (non-monotonic, cumulative)";
	case OTLP_KIND_HISTOGRAM:
		return "Histogram (explicit buckets, cumulative)";
	}
	return "?";
}

int otlp_names_doc(struct buf *b)
{
	const struct family *f;
	size_t n = 0;
	int rc = buf_printf(b, "| accel-prom family | OTLP metric | type | unit | attributes | convention |\n"
			       "| --- | --- | --- | --- | --- | --- |\n");

	for (size_t i = 0; !rc && ((f = map_family_at(i)) || (i - n < OTLP_HEALTH_FAMILIES)); i++) {
		struct otlp_desc d;

		if (!f) /* after the mapping's, the exporter's own */
			f = &otlp_health_families[i - n];
		else
			n++;
		char err[256];

		if (otlp_desc_resolve(f, &d, err, sizeof(err)))
			return -EINVAL;
		rc = buf_printf(b, "| `%s` | `%s` | %s | %s%s%s | ", f->name, d.name, otlp_kind_name(d.kind),
				d.unit[0] ? "`" : "", d.unit[0] ? d.unit : "", d.unit[0] ? "`" : "");
		for (size_t k = 0; !rc && k < d.nattrs; k++) {
			if (d.attrs[k].from)
				rc = buf_printf(b, "%s`%s` → `%s`", k ? ", " : "", d.attrs[k].from, d.attrs[k].key);
			else
				rc = buf_printf(b, "%s`%s`=`%s`", k ? ", " : "", d.attrs[k].key, d.attrs[k].value);
		}
		if (!rc)
			rc = buf_printf(b, " | %s |\n", d.row && d.row->semconv ? d.row->semconv : "");
	}
	return rc;
}
