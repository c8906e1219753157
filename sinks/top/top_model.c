/* SPDX-License-Identifier: MIT */
/* accel-top's model: samples folded into host, device and process rows; see top_model.h. */
#include "top_model.h"
#include "../../common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The families accel-top reads, found by name once (the rows keep them static: common/rows.h). */
enum fam_id {
	F_VCPU_RATIO,
	F_VCPU_COUNT,
	F_MEM_TOTAL,
	F_MEM_USED,
	F_ACC_INFO,
	F_ACC_UTIL,
	F_NC_UTIL,
	F_ACC_MEM_TOTAL,
	F_ACC_MEM_USED,
	F_ACC_PROC_MEM,
	F_ACC_TEMP,
	F_NCS2_TEMP,
	F_ACC_FAN,
	F_ACC_POWER,
	F_ACC_POWER_LIMIT,
	F_ACC_CLOCK,
	F_ACC_ECC,
	F_ACC_PCIE,
	F_ACC_AER,
	F_ACC_MIG_USED,
	F_RT_VCPU,
	F_NRT_VCPU,
	F_RT_MEM,
	F_NRT_MEM,
	F_EXEC_ERR,
	F_EXEC_STATUS,
	F_EXEC_LAT,
	F_ACC_ACTIVITY,
	F_REQ_MEAN, /* from here on optional: the mapping may not have them yet */
	F_ENERGY_REQ,
	F_TOKENS_J,
	F_ACC_ALLOC,
	F_COUNT
};

#define F_OPTIONAL F_REQ_MEAN

static const char *const fam_names[F_COUNT] = {
	"system_vcpu_usage_ratio",
	"system_vcpu_count",
	"system_memory_total_bytes",
	"system_memory_used_bytes",
	"accelerator_info",
	"accelerator_utilization_ratio",
	"neuroncore_utilization_ratio",
	"accelerator_memory_total_bytes",
	"accelerator_memory_used_bytes",
	"accelerator_process_memory_used_bytes",
	"accelerator_temperature_celsius",
	"ncs2_temperature_celsius",
	"accelerator_fan_speed_ratio",
	"accelerator_power_watts",
	"accelerator_power_limit_watts",
	"accelerator_clock_hertz",
	"accelerator_ecc_errors_total",
	"accelerator_pcie_replays_total",
	"accelerator_pcie_aer_errors_total",
	"accelerator_mig_memory_used_bytes",
	"runtime_vcpu_usage_ratio",
	"neuron_runtime_vcpu_usage_ratio",
	"runtime_memory_used_bytes",
	"neuron_runtime_memory_used_bytes",
	"execution_errors_total",
	"execution_status_total",
	"execution_latency_seconds",
	"accelerator_activity_ratio",
	"inference_request_mean_seconds",
	"inference_energy_per_request_joules",
	"inference_tokens_per_joule",
	"accelerator_allocation_info",
};

_Static_assert(F_COUNT == TOP_MODEL_NFAMS, "top_model.h sizes the model's family table");

/* The model's table of the families it reads, found in the mapping's by name. */
static void fams_init(const struct family *fams[F_COUNT])
{
	for (size_t i = 0; i < F_COUNT; i++)
		fams[i] = map_family(fam_names[i]);
	for (size_t i = 0; i < F_OPTIONAL; i++)
		if (!fams[i]) {
			fprintf(stderr, "accel-top: the mapping has no family %s\n", fam_names[i]);
			abort(); /* a renamed family is a programming error the unit test catches */
		}
}

/* The family's id, or F_COUNT when accel-top does not read it. */
static enum fam_id fam_id(const struct family *const fams[F_COUNT], const struct family *f)
{
	for (size_t i = 0; i < F_COUNT; i++)
		if (fams[i] && fams[i] == f)
			return (enum fam_id)i;
	return F_COUNT;
}

static const char *label(const struct sample *s, const char *name)
{
	for (size_t i = s->ninstance; i < s->nlabels; i++)
		if (!strcmp(s->labels[i].name, name))
			return s->labels[i].value;
	return NULL;
}

static const char *instance_label(const struct sample *s, const char *name)
{
	for (size_t i = 0; i < s->ninstance; i++)
		if (!strcmp(s->labels[i].name, name))
			return s->labels[i].value;
	return NULL;
}

static void copy(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

void top_model_init(struct top_model *m)
{
	memset(m, 0, sizeof(*m));
	fams_init(m->fams);
	m->cpu = m->vcpus = m->mem_used = m->mem_total = NAN;
	m->map = mapper_new();
}

void top_model_free(struct top_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++)
		free(m->procs[i].models);
	free(m->devs);
	free(m->procs);
	free(m->dev_ix.slots);
	free(m->proc_ix.slots);
	mapper_free(m->map);
	memset(m, 0, sizeof(*m));
}

/* ---- finding rows by key ----------------------------------------------------------- */

/* A device's key: its kind and key as its row keeps them (cut to the fields' sizes). */
static uint64_t dev_hash(const char *type, const char *key)
{
	return hash_bytes(hash_bytes(0x9e3779b97f4a7c15ull, type, strlen(type) + 1), key, strlen(key));
}

/* A process's: its pid, or for a pidless runtime entry its tag as the row keeps it. */
static uint64_t proc_hash(long pid, const char *name)
{
	return pid >= 0 ? hash_bytes(0x84222325cbf29ce4ull, &pid, sizeof(pid))
			: hash_bytes(0x84222325cbf29ce5ull, name, strlen(name));
}

static uint64_t row_hash(const struct top_model *m, const struct top_index *ix, size_t i)
{
	return ix == &m->dev_ix ? dev_hash(m->devs[i].type, m->devs[i].key) : proc_hash(m->procs[i].pid, m->procs[i].name);
}

/* The first slot to look in: the hash's high half (its last step is a multiplication: the low bits mix least). */
static size_t slot0(const struct top_index *ix, uint64_t h)
{
	return (size_t)(h >> 32) & ix->mask;
}

static void index_put(struct top_index *ix, uint64_t h, size_t row)
{
	size_t j = slot0(ix, h);

	while (ix->slots[j])
		j = (j + 1) & ix->mask;
	ix->slots[j] = (uint32_t)(row + 1);
}

/* Index rows 0..n-1 afresh (devices or processes, as ix is), in a table at least twice their number. */
static void index_build(const struct top_model *m, struct top_index *ix, size_t n)
{
	size_t cap = 16;

	while (cap < 2 * n + 2)
		cap *= 2;
	free(ix->slots);
	ix->slots = xcalloc(cap, sizeof(*ix->slots));
	ix->mask = cap - 1;
	for (size_t i = 0; i < n; i++)
		index_put(ix, row_hash(m, ix, i), i);
}

/* Row `row` (the last one, just added, hash h) into the index; the table doubles when half full. */
static void index_add(const struct top_model *m, struct top_index *ix, uint64_t h, size_t row)
{
	if (2 * (row + 1) >= ix->mask)
		index_build(m, ix, row + 1);
	else
		index_put(ix, h, row);
}

static struct top_dev *dev_find(const struct top_model *m, const char *type, const char *key, uint64_t h)
{
	const struct top_index *ix = &m->dev_ix;

	if (!ix->mask)
		return NULL;
	for (size_t j = slot0(ix, h); ix->slots[j]; j = (j + 1) & ix->mask) {
		struct top_dev *d = &m->devs[ix->slots[j] - 1];

		if (!strcmp(d->key, key) && !strcmp(d->type, type))
			return d;
	}
	return NULL;
}

const struct top_dev *top_model_dev(const struct top_model *m, const char *type, const char *key)
{
	return dev_find(m, type, key, dev_hash(type, key));
}

static struct top_dev *dev_get(struct top_model *m, const char *type, const char *key)
{
	struct top_dev *d;
	char t[sizeof(d->type)], k[sizeof(d->key)];
	uint64_t h;

	copy(t, sizeof(t), type);
	copy(k, sizeof(k), key);
	h = dev_hash(t, k);
	if ((d = dev_find(m, t, k, h)))
		return d;
	if (m->ndevs == m->adevs) {
		m->adevs = m->adevs ? 2 * m->adevs : 8;
		m->devs = xrealloc(m->devs, m->adevs * sizeof(*m->devs));
	}
	d = &m->devs[m->ndevs++];
	memset(d, 0, sizeof(*d));
	copy(d->type, sizeof(d->type), t);
	copy(d->key, sizeof(d->key), k);
	d->util = d->mem_used = d->mem_total = d->temp = d->power = d->power_limit = NAN;
	d->clock_core = d->clock_mem = d->fan = d->activity = NAN;
	index_add(m, &m->dev_ix, h, m->ndevs - 1);
	return d;
}

/* A process row by pid; a pidless runtime entry is found by its tag. */
static struct top_proc *proc_get(struct top_model *m, long pid, const char *tag)
{
	struct top_proc *p;
	char name[sizeof(p->name)];
	const struct top_index *ix = &m->proc_ix;
	uint64_t h;

	copy(name, sizeof(name), pid >= 0 ? "" : tag);
	h = proc_hash(pid, name);
	for (size_t j = ix->mask ? slot0(ix, h) : 0; ix->mask && ix->slots[j]; j = (j + 1) & ix->mask) {
		p = &m->procs[ix->slots[j] - 1];
		if (p->pid == pid && (pid >= 0 || !strcmp(p->name, name)))
			return p;
	}
	if (m->nprocs == m->aprocs) {
		m->aprocs = m->aprocs ? 2 * m->aprocs : 64;
		m->procs = xrealloc(m->procs, m->aprocs * sizeof(*m->procs));
	}
	p = &m->procs[m->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	copy(p->name, sizeof(p->name), name); /* a pidless entry's key; a process's name comes with its samples */
	p->cpu = p->rss = p->rt_devmem = p->rate = p->failures = p->p50 = p->p99 = NAN;
	index_add(m, &m->proc_ix, h, m->nprocs - 1);
	return p;
}

/* A runtime's model version entry, kept sorted by model, then version (found by bisection). */
static struct top_rtmodel *rtmodel_get(struct top_proc *p, const char *model_in, const char *version_in)
{
	struct top_rtmodel *r;
	char model[sizeof(r->model)], version[sizeof(r->version)];
	size_t lo = 0, hi = p->nmodels;

	copy(model, sizeof(model), model_in);
	copy(version, sizeof(version), version_in);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(p->models[mid].model, model);

		if (!c)
			c = strcmp(p->models[mid].version, version);
		if (!c)
			return &p->models[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (p->nmodels == p->amodels) {
		p->amodels = p->amodels ? 2 * p->amodels : 4;
		p->models = xrealloc(p->models, p->amodels * sizeof(*p->models));
	}
	memmove(&p->models[lo + 1], &p->models[lo], (p->nmodels - lo) * sizeof(*p->models));
	p->nmodels++;
	r = &p->models[lo];
	memset(r, 0, sizeof(*r));
	copy(r->model, sizeof(r->model), model);
	copy(r->version, sizeof(r->version), version);
	r->rate = r->failures = r->p50 = r->p99 = r->mean = r->j_per_req = r->tokens_per_j = NAN;
	return r;
}

/* The pod, namespace and container labels of a process's sample, when it has them. */
static void proc_ident(struct top_proc *p, const struct sample *s)
{
	const char *v;

	if ((v = label(s, "pod")))
		copy(p->pod, sizeof(p->pod), v);
	if ((v = label(s, "namespace")))
		copy(p->ns, sizeof(p->ns), v);
	if ((v = label(s, "container")))
		copy(p->container, sizeof(p->container), v);
}

static long parse_pid(const char *s)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	v = strtol(s, &end, 10);
	return *end || v < 0 ? -1 : v;
}

/* NAN + x is x: the first value of a sum. */
static double add(double acc, double v)
{
	return isnan(acc) ? v : acc + v;
}

/* The detail view's line for a device sample: the family and the labels that are not the device's identity. */
static void detail_add(struct top_dev *d, const struct sample *s)
{
	struct top_detail *t;
	size_t n;

	if (d->ndetail >= TOP_DETAIL_MAX)
		return;
	t = &d->detail[d->ndetail++];
	n = (size_t)snprintf(t->name, sizeof(t->name), "%s", s->fam->name);
	for (size_t i = s->ninstance, first = 1; i < s->nlabels && n < sizeof(t->name); i++) {
		const char *ln = s->labels[i].name;

		if (!strcmp(ln, "device_type") || !strcmp(ln, "device") || !strcmp(ln, "uuid") ||
		    !strcmp(ln, "model") || !strcmp(ln, "pci_bus_id"))
			continue;
		n += (size_t)snprintf(t->name + n, sizeof(t->name) - n, "%s%s=%s", first ? "{" : ",", ln,
				      s->labels[i].value);
		first = 0;
		if (i + 1 == s->nlabels && n < sizeof(t->name))
			n += (size_t)snprintf(t->name + n, sizeof(t->name) - n, "}");
	}
	if (n < sizeof(t->name) && strchr(t->name, '{') && !strchr(t->name, '}'))
		snprintf(t->name + n, sizeof(t->name) - n, "}");
	t->value = s->value;
}

static void device_sample(struct top_model *m, const struct sample *s, enum fam_id id)
{
	struct top_dev *d = dev_get(m, s->device_type, s->device);
	const char *v;

	if (!d->touched) {
		d->touched = 1;
		d->ndetail = 0;
		d->nc_util_sum = 0;
		d->nc_n = d->temp_n = d->sensor_n = d->plain_power = 0;
		d->temp_max = d->sensor_power = 0;
		d->mig = 0;
		d->nowners = 0;
	}
	if (s->ts_ms > d->seen_ms)
		d->seen_ms = s->ts_ms;
	if ((v = label(s, "model")) && *v)
		copy(d->model, sizeof(d->model), v);
	if ((v = label(s, "uuid")) && *v)
		copy(d->uuid, sizeof(d->uuid), v);
	if (label(s, "gpu_instance") && strchr(d->key, '/'))
		d->is_mig = 1;
	if ((v = label(s, "mig_profile")) && *v)
		copy(d->profile, sizeof(d->profile), v);
	detail_add(d, s);
	switch (id) {
	case F_ACC_ALLOC: { /* who it is allocated to: the first owner named, and how many there are */
		const char *ns = label(s, "namespace"), *pod = label(s, "pod"), *job = label(s, "hpc_job");
		const char *ctr = label(s, "container"), *claim = label(s, "dra_claim_name");
		char who[sizeof(d->last_owner)];

		/* An owner of several NeuronCores comes once per core, one after another: counted once. */
		snprintf(who, sizeof(who), "%s/%s/%s/%s/%s", ns ? ns : "", pod ? pod : "", ctr ? ctr : "",
			 claim ? claim : "", job ? job : "");
		if (d->nowners && !strcmp(who, d->last_owner))
			break;
		snprintf(d->last_owner, sizeof(d->last_owner), "%s", who);
		if (d->nowners++)
			break;
		if (pod && *pod)
			snprintf(d->owner, sizeof(d->owner), "%s%s%s", ns ? ns : "", ns && *ns ? "/" : "", pod);
		else
			snprintf(d->owner, sizeof(d->owner), "job %s", job ? job : "?");
		break;
	}
	case F_ACC_UTIL:
		if ((v = label(s, "engine")) && !strcmp(v, "core"))
			d->util = s->value;
		break;
	case F_NC_UTIL:
		d->nc_util_sum += s->value;
		d->nc_n++;
		break;
	case F_ACC_MEM_TOTAL:
		d->mem_total = s->value;
		break;
	case F_ACC_MEM_USED:
		d->mem_used = s->value;
		d->mem_ts_ms = s->ts_ms;
		break;
	case F_ACC_PROC_MEM: {
		long pid = parse_pid(label(s, "pid"));
		struct top_proc *p;
		size_t di = (size_t)(d - m->devs), k;

		/* An NVIDIA MIG instance's processes are its GPU's too: counted once, on the GPU. */
		if (pid < 0 || label(s, "gpu_instance"))
			break;
		p = proc_get(m, pid, NULL);
		p->touched = 1;
		proc_ident(p, s);
		if (s->ts_ms > p->seen_ms)
			p->seen_ms = s->ts_ms;
		d->mem_ts_ms = s->ts_ms;
		for (k = 0; k < p->ndevs && p->devs[k].dev != (int)di; k++)
			;
		if (k == p->ndevs) {
			if (k == TOP_PROC_DEVS)
				break;
			p->ndevs++;
		}
		p->devs[k] = (struct top_procdev){ (int)di, s->value, s->ts_ms };
		break;
	}
	case F_ACC_TEMP:
	case F_NCS2_TEMP:
		if (!d->temp_n++ || s->value > d->temp_max)
			d->temp_max = s->value;
		break;
	case F_ACC_FAN:
		d->fan = s->value;
		break;
	case F_ACC_POWER:
		if (label(s, "sensor")) {
			d->sensor_power += s->value;
			d->sensor_n++;
		} else {
			d->power = s->value;
			d->plain_power = 1;
		}
		break;
	case F_ACC_POWER_LIMIT:
		d->power_limit = s->value;
		break;
	case F_ACC_CLOCK:
		v = label(s, "clock");
		if (v && (!strcmp(v, "sm") || !strcmp(v, "graphics") || !strcmp(v, "sclk") || !strcmp(v, "core")))
			d->clock_core = s->value;
		else if (v && (!strcmp(v, "memory") || !strcmp(v, "mclk") || !strcmp(v, "mem")))
			d->clock_mem = s->value;
		break;
	case F_ACC_ECC:
	case F_ACC_PCIE:
	case F_ACC_AER:
		d->errors += s->value;
		break;
	case F_ACC_MIG_USED:
		d->mig++;
		break;
	case F_ACC_ACTIVITY:
		if ((v = label(s, "engine")) && !strcmp(v, "sm"))
			d->activity = s->value;
		break;
	default:
		break;
	}
}

/* An execution_latency_seconds sample: into *p50 or *p99 by its percentile label (the others are not shown). */
static void latency(const struct sample *s, double *p50, double *p99)
{
	const char *v = label(s, "percentile");

	if (v && !strcmp(v, "p50"))
		*p50 = s->value;
	else if (v && !strcmp(v, "p99"))
		*p99 = s->value;
}

/*
 * An endpoint runtime's per-model sample (labels model and version): into
 * the model's entry, and its counts into the runtime's row too (the row
 * shows the runtime's totals).
 */
static void model_sample(struct top_proc *p, const struct sample *s, enum fam_id id, const char *model)
{
	const char *ver = label(s, "version"), *v;
	struct top_rtmodel *r = rtmodel_get(p, model, ver ? ver : "");

	if (s->ts_ms > r->seen_ms)
		r->seen_ms = s->ts_ms;
	switch (id) {
	case F_EXEC_ERR:
		r->failures = add(r->failures, s->value);
		p->failures = add(p->failures, s->value);
		break;
	case F_EXEC_STATUS:
		r->status_sum += s->value;
		r->status_period = s->period;
		if ((v = label(s, "status_type")) && !strcmp(v, "completed")) {
			r->completed += s->value;
			r->completed_n++;
			p->model_completed += s->value;
			p->model_period = s->period;
			p->model_status = 1;
		}
		break;
	case F_EXEC_LAT:
		latency(s, &r->p50, &r->p99);
		break;
	case F_REQ_MEAN:
		r->mean = s->value;
		break;
	case F_ENERGY_REQ:
		r->j_per_req = s->value;
		break;
	case F_TOKENS_J:
		r->tokens_per_j = s->value;
		break;
	default:
		break;
	}
}

static void runtime_sample(struct top_model *m, const struct sample *s, enum fam_id id)
{
	long pid = parse_pid(label(s, "pid"));
	struct top_proc *p = proc_get(m, pid, s->runtime_tag);
	const char *v;

	if (s->runtime_tag && *s->runtime_tag)
		copy(p->name, sizeof(p->name), s->runtime_tag);
	if (s->ts_ms > p->seen_ms)
		p->seen_ms = s->ts_ms;
	p->touched = 1;
	proc_ident(p, s);
	if ((v = label(s, "model")) && *v) {
		model_sample(p, s, id, v);
		return;
	}
	switch (id) {
	case F_RT_VCPU:
	case F_NRT_VCPU:
		p->cpu_acc += s->value; /* user + system */
		p->cpu_n++;
		break;
	case F_RT_MEM:
	case F_NRT_MEM:
		v = label(s, "memory_location");
		if (v && !strcmp(v, "host"))
			p->rss = s->value;
		else
			p->rt_devmem = s->value;
		break;
	case F_EXEC_ERR:
		p->failures = add(p->failures, s->value);
		break;
	case F_EXEC_STATUS:
		p->status_sum += s->value;
		p->status_period = s->period;
		break;
	case F_EXEC_LAT:
		latency(s, &p->p50, &p->p99);
		break;
	default:
		break;
	}
}

void top_model_sample(struct top_model *m, const struct sample *s)
{
	enum fam_id id = fam_id(m->fams, s->fam);
	const char *v;

	if (s->ts_ms > m->last_ts_ms)
		m->last_ts_ms = s->ts_ms;
	if (s->period > m->max_period)
		m->max_period = s->period;
	if (s->host && *s->host)
		copy(m->host, sizeof(m->host), s->host);
	if ((v = instance_label(s, "instance_type")))
		copy(m->instance_type, sizeof(m->instance_type), v);
	if ((v = instance_label(s, "instance_id")))
		copy(m->instance_id, sizeof(m->instance_id), v);
	if (s->device_type && s->device) {
		device_sample(m, s, id);
		return;
	}
	if (s->runtime_tag) {
		runtime_sample(m, s, id);
		return;
	}
	switch (id) {
	case F_VCPU_RATIO:
		m->cpu_acc += s->value;
		m->cpu_n++;
		break;
	case F_VCPU_COUNT:
		m->vcpus = s->value;
		break;
	case F_MEM_TOTAL:
		m->mem_total = s->value;
		break;
	case F_MEM_USED:
		m->mem_used = s->value;
		break;
	default:
		break;
	}
}

static void on_sample(const struct sample *s, void *ud)
{
	top_model_sample(ud, s);
}

void top_model_begin(struct top_model *m)
{
	m->cpu_acc = 0;
	m->cpu_n = 0;
	for (size_t i = 0; i < m->ndevs; i++)
		m->devs[i].touched = 0;
	for (size_t i = 0; i < m->nprocs; i++) {
		struct top_proc *p = &m->procs[i];

		p->touched = p->cpu_n = p->model_status = 0;
		p->status_sum = p->status_period = p->cpu_acc = p->model_completed = p->model_period = 0;
		for (size_t k = 0; k < p->nmodels; k++) {
			struct top_rtmodel *r = &p->models[k];

			r->completed = r->status_sum = r->status_period = 0;
			r->completed_n = 0;
		}
	}
}

/* The report's device values that need all its samples: averages, maxima, sums; then a history point. */
static void dev_finish(struct top_dev *d, int64_t ts_ms)
{
	struct top_hist *h;

	if (d->nc_n) /* a Neuron device: the mean of its NeuronCores */
		d->util = d->nc_util_sum / d->nc_n;
	if (d->temp_n)
		d->temp = d->temp_max;
	if (!d->plain_power && d->sensor_n)
		d->power = d->sensor_power;
	h = &d->hist[d->hist_head];
	h->ts_ms = ts_ms;
	h->util = isnan(d->util) ? NAN : (float)d->util;
	h->mem = d->mem_total > 0 && !isnan(d->mem_used) ? (float)(d->mem_used / d->mem_total) : NAN;
	d->hist_head = (d->hist_head + 1) % TOP_HIST;
	if (d->hist_n < TOP_HIST)
		d->hist_n++;
}

/*
 * A runtime's model versions after a report: the request rate (completed
 * per second; all statuses when the server names none "completed"), and
 * the versions not seen for keep_ms dropped.
 */
static void models_finish(struct top_proc *p, int64_t last_ms, int64_t keep_ms)
{
	size_t k = 0;

	for (size_t i = 0; i < p->nmodels; i++) {
		struct top_rtmodel *r = &p->models[i];

		if (r->status_period > 0)
			r->rate = (r->completed_n ? r->completed : r->status_sum) / r->status_period;
		if (last_ms - r->seen_ms > keep_ms)
			continue;
		p->models[k++] = *r;
	}
	p->nmodels = k;
}

void top_model_end(struct top_model *m, int64_t mono_ns)
{
	int64_t keep_ms = (int64_t)(3000.0 * (m->max_period > 1 ? m->max_period : 1));
	size_t k = 0;

	if (m->cpu_n)
		m->cpu = m->cpu_acc;
	for (size_t i = 0; i < m->ndevs; i++)
		if (m->devs[i].touched)
			dev_finish(&m->devs[i], m->last_ts_ms);
	for (size_t i = 0; i < m->nprocs; i++) {
		struct top_proc *p = &m->procs[i];

		if (p->touched && p->status_period > 0)
			p->rate = p->status_sum / p->status_period;
		else if (p->touched && p->model_status && p->model_period > 0)
			p->rate = p->model_completed / p->model_period; /* the sum over its models */
		if (p->touched && p->cpu_n)
			p->cpu = p->cpu_acc;
		if (m->last_ts_ms - p->seen_ms > keep_ms) {
			free(p->models); /* gone */
			continue;
		}
		models_finish(p, m->last_ts_ms, keep_ms);
		m->procs[k++] = *p;
	}
	if (k != m->nprocs) {
		m->nprocs = k;
		index_build(m, &m->proc_ix, k); /* rows moved */
	}
	m->last_mono_ns = mono_ns;
	m->reports++;
}

void top_model_report(struct top_model *m, json_t *report, int64_t now_ms, int64_t mono_ns)
{
	struct map_cb cb = { .sample = on_sample, .ud = m };

	top_model_begin(m);
	m->format = mapper_report(m->map, report, now_ms, &cb);
	top_model_end(m, mono_ns);
}

const struct top_hist *top_dev_hist(const struct top_dev *d, size_t i)
{
	return &d->hist[(d->hist_head + TOP_HIST - d->hist_n + i) % TOP_HIST];
}

void top_proc_pod(const struct top_proc *p, char *dst, size_t size)
{
	snprintf(dst, size, "%s%s%s", p->pod, *p->pod && *p->container ? "/" : "", p->container);
}

double top_proc_devmem(const struct top_model *m, const struct top_proc *p)
{
	double sum = NAN;

	for (size_t i = 0; i < p->ndevs; i++) {
		const struct top_dev *d = &m->devs[p->devs[i].dev];

		if (p->devs[i].ts_ms == d->mem_ts_ms)
			sum = add(sum, p->devs[i].bytes);
	}
	return isnan(sum) ? p->rt_devmem : sum;
}
