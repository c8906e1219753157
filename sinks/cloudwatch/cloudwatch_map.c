/* SPDX-License-Identifier: MIT */
/*
 * The sample -> datum table and its checks; see cloudwatch_map.h.
 *
 * Names follow what CloudWatch users see from AWS's own agents: CamelCase
 * metric names and dimension names (InstanceId, InstanceType). A family not
 * in the table still goes out, under its name in CamelCase without its unit
 * suffix, so a new collector needs no change here.
 */
#include "cloudwatch_map.h"

#include "../../common/schema.h"
#include "../../common/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Family name -> metric name. A NULL metric name: not sent. */
static const struct {
	const char *family;
	const char *metric;
} names[] = {
	{ "neuroncore_utilization_ratio", "NeuronCoreUtilization" },
	{ "neuron_runtime_vcpu_usage_ratio", "NeuronRuntimeVCpuUsage" },
	{ "neuron_runtime_memory_used_bytes", "NeuronRuntimeMemoryUsed" },
	{ "neuroncore_memory_usage_constants", "NeuronCoreMemoryUsageConstants" },
	{ "neuroncore_memory_usage_model_code", "NeuronCoreMemoryUsageModelCode" },
	{ "neuroncore_memory_usage_model_shared_scratchpad", "NeuronCoreMemoryUsageModelSharedScratchpad" },
	{ "neuroncore_memory_usage_runtime_memory", "NeuronCoreMemoryUsageRuntimeMemory" },
	{ "neuroncore_memory_usage_tensors", "NeuronCoreMemoryUsageTensors" },
	{ "execution_errors_total", "ExecutionErrors" },
	{ "execution_status_total", "ExecutionStatus" },
	{ "execution_latency_seconds", "ExecutionLatency" }, /* + the percentile: ExecutionLatencyP50 */
	{ "hardware_ecc_events_total", "HardwareEccEvents" },
	{ "system_vcpu_count", "SystemVCpuCount" },
	{ "system_vcpu_usage_ratio", "SystemVCpuUsage" },
	{ "system_memory_total_bytes", "SystemMemoryTotal" },
	{ "system_memory_used_bytes", "SystemMemoryUsed" },
	{ "system_swap_total_bytes", "SystemSwapTotal" },
	{ "system_swap_used_bytes", "SystemSwapUsed" },
	{ "runtime_vcpu_usage_ratio", "RuntimeVCpuUsage" },
	{ "runtime_memory_used_bytes", "RuntimeMemoryUsed" },
	/* 1 per device and owner: summed by Namespace or PodName, the devices allocated to each. */
	{ "accelerator_allocation_info", "AcceleratorAllocated" },
	/* Labels-only "info" gauges of constant 1: a paid metric that says nothing in CloudWatch. */
	{ "instance_info", NULL },
	{ "neuron_hardware_info", NULL },
};

static const struct {
	const char *word;
	unsigned bits;
} dimwords[] = {
	{ "InstanceId", CW_DIM_INSTANCE_ID },
	{ "InstanceType", CW_DIM_INSTANCE_TYPE },
	{ "InstanceName", CW_DIM_INSTANCE_NAME },
	{ "AvailabilityZone", CW_DIM_AVAILABILITY_ZONE },
	{ "Region", CW_DIM_REGION },
	{ "SubnetId", CW_DIM_SUBNET_ID },
	{ "Host", CW_DIM_HOST },
	{ "Pid", CW_DIM_PID },
	{ "none", 0 },
};

/* The --dimensions bit of an instance dimension name; 0: not one --dimensions can choose. */
static unsigned dim_bit(const char *dim)
{
	for (size_t i = 0; i < ARRAY_SIZE(dimwords); i++)
		if (!strcmp(dimwords[i].word, dim))
			return dimwords[i].bits;
	return 0;
}

void cw_map_opts_init(struct cw_map_opts *o, const char *host)
{
	memset(o, 0, sizeof(*o));
	o->auto_dims = 1;
	o->host = host;
	o->max_age_ms = 14LL * 24 * 3600 * 1000;
	o->max_ahead_ms = 2LL * 3600 * 1000;
}

int cw_map_parse_dimensions(char *spec, struct cw_map_opts *o, char *err, size_t errsz)
{
	char *save = NULL, *tok;

	o->auto_dims = 0;
	o->dims = 0;
	o->nstatic = 0;
	for (tok = strtok_r(spec, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		size_t i;

		if (eq) {
			*eq = '\0';
			if (!*tok || !eq[1] || strlen(tok) > CW_MAX_NAME || strlen(eq + 1) > CW_MAX_DIM_VALUE) {
				snprintf(err, errsz, "--dimensions: \"%s=%s\": a name of 1 to %d and a value of 1 to %d bytes",
					 tok, eq + 1, CW_MAX_NAME, CW_MAX_DIM_VALUE);
				return -EINVAL;
			}
			if (o->nstatic == CW_MAX_STATIC_DIMS) {
				snprintf(err, errsz, "--dimensions: at most %d Name=Value dimensions", CW_MAX_STATIC_DIMS);
				return -EINVAL;
			}
			o->statics[o->nstatic++] = (struct cw_dim){ tok, eq + 1 };
			continue;
		}
		if (!strcmp(tok, "auto")) {
			o->auto_dims = 1;
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(dimwords); i++)
			if (!strcmp(tok, dimwords[i].word))
				break;
		if (i == ARRAY_SIZE(dimwords)) {
			snprintf(err, errsz,
				 "--dimensions: unknown \"%s\" (want InstanceId, InstanceType, InstanceName, "
				 "AvailabilityZone, Region, SubnetId, Host, Pid, auto, none or Name=Value)",
				 tok);
			return -EINVAL;
		}
		o->dims |= dimwords[i].bits;
	}
	return 0;
}

int cw_value_ok(double v)
{
	double a = fabs(v);

	if (!isfinite(v) || a > 0x1p360 || (a != 0 && a < 0x1p-360))
		return -ERANGE;
	return 0;
}

/* "execution_errors_total" -> "ExecutionErrors": CamelCase, unit suffix dropped. */
static void camel(const char *in, char *out, size_t size, int drop_suffix)
{
	static const char *const suffixes[] = { "_total", "_ratio", "_bytes", "_seconds", "_count" };
	size_t n = strlen(in), o = 0;
	int up = 1;

	if (drop_suffix)
		for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
			size_t l = strlen(suffixes[i]);

			if (n > l && !strcmp(in + n - l, suffixes[i])) {
				n -= l;
				break;
			}
		}
	for (size_t i = 0; i < n && o + 1 < size; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c == '_' || c == '-' || c == '.' || c == ' ') {
			up = 1;
			continue;
		}
		if (!isalnum(c))
			continue;
		out[o++] = (char)(up ? toupper(c) : c);
		up = 0;
	}
	out[o] = '\0';
}

static const char *unit_of(const struct family *f)
{
	if (!strcmp(f->unit, "ratio"))
		return "Percent";
	if (!strcmp(f->unit, "bytes"))
		return "Bytes";
	if (!strcmp(f->unit, "seconds"))
		return "Seconds";
	if (!strcmp(f->unit, "count"))
		return "Count";
	if (!strcmp(f->unit, "bytes_per_second"))
		return "Bytes/Second";
	return "None";
}

void cw_map_family(const struct family *f, const char **name, const char **unit, char buf[CW_MAX_NAME + 1])
{
	*unit = unit_of(f);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(names[i].family, f->name)) {
			*name = names[i].metric ? names[i].metric : "";
			return;
		}
	/* Any other labels-only "_info" gauge (accelerator_info, ...) is skipped for the same reason. */
	if (strlen(f->name) > 5 && !strcmp(f->name + strlen(f->name) - 5, "_info") && !f->unit[0]) {
		*name = "";
		return;
	}
	camel(f->name, buf, CW_MAX_NAME + 1, 1);
	*name = buf;
}

/*
 * A dimension value CloudWatch takes: printable ASCII (anything else
 * becomes '?'), at most 1024 bytes. NULL when nothing but blanks remains.
 */
static const char *clean_value(const char *v, char *dst)
{
	size_t i, o = 0;
	int blank = 1;

	for (i = 0; v[i] && o < CW_MAX_DIM_VALUE; i++) {
		unsigned char c = (unsigned char)v[i];

		if ((c & 0xc0) == 0x80)
			continue; /* a UTF-8 continuation byte: its character is already a '?' */
		dst[o++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
		if (!isspace(c))
			blank = 0;
	}
	dst[o] = '\0';
	return blank ? NULL : dst;
}

static void add_dim(struct cw_point *p, const char *name, const char *value, struct cw_scratch *sc)
{
	const char *v;

	if (p->ndims == CW_MAX_DIMS || !value)
		return;
	for (size_t i = 0; i < p->ndims; i++)
		if (!strcmp(p->dims[i].name, name))
			return; /* the first one wins: CloudWatch refuses a name twice */
	v = clean_value(value, sc->vals[p->ndims]);
	if (v)
		p->dims[p->ndims++] = (struct cw_dim){ name, v };
}

double cw_ratio_percent(double r)
{
	double pct = r * 100;
	char t[40];

	if (!isfinite(pct))
		return pct;
	/* The shortest decimal that the mapping's value / 100.0 turns into r: the reading itself. */
	for (int prec = 1; prec <= 17; prec++) {
		double d;

		snprintf(t, sizeof(t), "%.*g", prec, pct);
		d = strtod(t, NULL);
		if (d / 100.0 == r)
			return d;
	}
	return pct;
}

static int has_runtime_tag(const struct sample *s)
{
	for (size_t i = s->ninstance; i < s->nlabels; i++)
		if (!strcmp(s->labels[i].name, "runtime_tag"))
			return 1;
	return 0;
}

enum cw_verdict cw_map_sample(const struct cw_map_opts *o, const struct sample *s, int64_t now_ms, struct cw_point *p,
			      struct cw_scratch *sc)
{
	const char *name, *unit, *pct = NULL;
	unsigned want;
	int on_ec2 = 0;
	size_t i;
	double v = s->value;

	/*
	 * A histogram family is not sent: PutMetricData has no buckets (its Values/Counts are the observed values
	 * themselves, which buckets do not give), and each distribution's percentiles and mean are already metrics
	 * of their own (docs/accel-cloudwatch.md).
	 */
	if (s->fam->type == METRIC_HISTOGRAM)
		return CW_SKIP;
	cw_map_family(s->fam, &name, &unit, sc->family);
	if (!*name)
		return CW_SKIP;
	memset(p, 0, offsetof(struct cw_point, dims));
	p->unit = unit;
	p->ts_ms = s->ts_ms;

	/* Instance dimensions. */
	for (i = 0; i < s->ninstance && i < s->nlabels; i++)
		if (!strcmp(s->labels[i].name, "instance_id") && s->labels[i].value[0])
			on_ec2 = 1;
	want = o->auto_dims ? (on_ec2 ? CW_DIM_INSTANCE_ID | CW_DIM_INSTANCE_TYPE : CW_DIM_HOST) : 0;
	want |= o->dims;
	/* The schema's instance labels, in its order, each under its dimension name (--dimensions words). */
	for (size_t k = 0; k < LBL_COUNT; k++) {
		const struct schema_label *sl = &schema_labels[k];

		if (sl->kind != LK_INSTANCE || !(want & dim_bit(sl->cw_dim)))
			continue;
		for (i = 0; i < s->ninstance && i < s->nlabels; i++)
			if (!strcmp(s->labels[i].name, sl->name) && s->labels[i].value[0])
				add_dim(p, sl->cw_dim, s->labels[i].value, sc);
	}
	if ((want & CW_DIM_HOST) && o->host && o->host[0])
		add_dim(p, "Host", o->host, sc);
	for (i = 0; i < o->nstatic; i++)
		add_dim(p, o->statics[i].name, o->statics[i].value, sc);

	/* The sample's own identity. */
	for (i = s->ninstance; i < s->nlabels; i++) {
		const struct label *l = &s->labels[i];
		const char *dn = NULL;

		if (!strcmp(l->name, "percentile")) {
			pct = l->value;
			continue;
		}
		/* A runtime's pid changes at every restart: a new metric each time, unless asked for. */
		if (!strcmp(l->name, "pid") && !(want & CW_DIM_PID) && has_runtime_tag(s))
			continue;
		/* neuron-monitor-prometheus.py's memory_location="None" on per-core memory: no meaning here. */
		if (!strcmp(l->name, "memory_location") && !strcmp(l->value, "None"))
			continue;
		/* The schema's dimension name; a label it does not know is CamelCased. */
		if (schema_label(l->name))
			dn = schema_label(l->name)->cw_dim;
		if (!dn) {
			camel(l->name, sc->dnames[p->ndims < CW_MAX_DIMS ? p->ndims : CW_MAX_DIMS - 1], 64, 0);
			dn = sc->dnames[p->ndims < CW_MAX_DIMS ? p->ndims : CW_MAX_DIMS - 1];
			if (!*dn)
				continue;
		}
		add_dim(p, dn, l->value, sc);
	}

	/* Latency percentiles are metrics of their own: ExecutionLatencyP50. */
	if (pct) {
		char c[32];

		camel(pct, c, sizeof(c), 0);
		snprintf(sc->name, sizeof(sc->name), "%s%s", name, c);
		name = sc->name;
	}
	p->name = name;

	if (!strcmp(s->fam->unit, "ratio"))
		v = cw_ratio_percent(v);
	p->value = v;
	if (cw_value_ok(v))
		return CW_BAD_VALUE;
	if (s->ts_ms < now_ms - o->max_age_ms)
		return CW_TOO_OLD;
	if (s->ts_ms > now_ms + o->max_ahead_ms)
		return CW_TOO_NEW;
	return CW_OK;
}
