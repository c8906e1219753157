/* SPDX-License-Identifier: MIT */
/*
 * accel-top's model: what a frame shows, built only from the samples that
 * common/samples.h's mapper_report yields (accel-top parses no report field
 * itself), so every input the mapping accepts (accel-monitor, neuron-monitor
 * 2.x and 2020) and accel-prom's /metrics (top_url.h) feed the same view.
 *
 *   - the host: name, instance, CPU and memory use, the time of the last
 *     report and the longest group period seen (for staleness);
 *   - one entry per device (device_type and key), any vendor: utilization,
 *     memory, the hottest temperature, power, clocks, error counts summed
 *     since accel-top started, a history of utilization and memory, and
 *     every sample of the last report that touched it (the detail view);
 *   - one entry per process: a runtime entry's pid and tag, its pod,
 *     namespace and container (the labels of docs/report-format.md §6b),
 *     its CPU share and RSS, device memory per device (from the devices'
 *     process lists), and, where the runtime reports them (neuron-monitor's
 *     execution_stats, an endpoint runtime's), executions per second,
 *     failures since start and p50/p99 latency; an endpoint runtime's
 *     per-model series (labels model and version) make one sub-entry per
 *     model version;
 *   - an NVIDIA MIG instance (a device keyed "<gpu>/<gi>/<ci>" with the
 *     label gpu_instance) is a device entry too, marked as such, with its
 *     profile; the view shows it under its GPU.
 *
 * Values the input never carried are NAN and shown as "-".
 */
#ifndef ACCEL_TOP_MODEL_H
#define ACCEL_TOP_MODEL_H

#include "../../common/samples.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define TOP_HIST 1024     /* history points kept per device (a ring) */
#define TOP_PROC_DEVS 16  /* devices whose memory a process row lists */
#define TOP_DETAIL_MAX 256 /* samples a device's detail view keeps */

struct top_hist {
	int64_t ts_ms; /* report time */
	float util;    /* ratio, NAN: unknown */
	float mem;     /* ratio of total, NAN: unknown */
};

struct top_detail {
	char name[96]; /* family and its non-identity labels: "accelerator_clock_hertz{clock=sm}" */
	double value;
};

struct top_dev {
	char type[16];   /* device_type: "nvidia" */
	char key[24];    /* its key in the report: "0" */
	char model[64];  /* "" when unknown */
	char uuid[64];
	double util;             /* ratio */
	double mem_used, mem_total; /* bytes */
	double temp;             /* hottest sensor, degrees Celsius */
	double power, power_limit; /* watts */
	double clock_core, clock_mem; /* hertz */
	double fan;              /* ratio */
	double errors;           /* ECC errors, PCIe replays and AER errors counted since accel-top started */
	char owner[96];          /* its first owner in the last report ("namespace/pod", "job 42"), when nowners */
	int nowners;             /* owners the last report gave it (accelerator_allocation_info) */
	char last_owner[320];    /* the last owner counted, whole ("ns/pod/container/claim/job") */
	int mig;                 /* MIG devices seen in the last report */
	int is_mig;              /* a MIG instance ("0/9/0", label gpu_instance): shown under its GPU */
	char profile[24];        /* a MIG instance's mig_profile: "1g.10gb" */
	double activity;         /* a MIG instance's SM activity (GPM), ratio */
	int64_t mem_ts_ms;       /* when its process list was last collected */
	int64_t seen_ms;         /* report time it was last in */
	/* accumulated within one report */
	double nc_util_sum, temp_max, sensor_power;
	int nc_n, temp_n, sensor_n, plain_power, touched;
	struct top_hist hist[TOP_HIST];
	size_t hist_n, hist_head; /* points kept; the next slot */
	struct top_detail detail[TOP_DETAIL_MAX];
	size_t ndetail;
};

struct top_procdev {
	int dev;        /* index in top_model.devs */
	double bytes;
	int64_t ts_ms;  /* the device's process list it came from */
};

/* One model version of an endpoint runtime (the series with labels model and version). */
struct top_rtmodel {
	char model[64], version[32]; /* version "" when the server gives none */
	double rate;     /* completed requests per second over the last period */
	double failures; /* errors since accel-top started */
	double p50, p99; /* seconds */
	double mean;     /* seconds: the request's mean, for servers that give no percentiles */
	double j_per_req;   /* joules of accelerator energy per completed request (docs/energy.md); NAN: none */
	double tokens_per_j; /* generated tokens per joule; NAN: none */
	int64_t seen_ms; /* report time it was last in */
	/* accumulated within one report */
	double completed, status_sum, status_period;
	int completed_n;
};

struct top_proc {
	long pid;        /* -1: none (an entry without a process) */
	char name[32];   /* runtime_tag; "" when only a device lists the pid */
	char pod[64], ns[64], container[64]; /* the labels pod, namespace, container; "" when none */
	double cpu;      /* ratio of the host's CPU capacity */
	double rss;      /* bytes */
	double rt_devmem; /* the runtime's own device memory figure, bytes */
	double rate;     /* executions per second over the last period */
	double failures; /* execution errors since accel-top started */
	double p50, p99; /* seconds */
	int64_t seen_ms; /* report time it was last in */
	struct top_procdev devs[TOP_PROC_DEVS];
	size_t ndevs;
	struct top_rtmodel *models; /* owned; sorted by model, then version */
	size_t nmodels, amodels;
	/* accumulated within one report */
	double status_sum, status_period, cpu_acc, model_completed, model_period;
	int touched, cpu_n, model_status;
};

#define TOP_MODEL_NFAMS 32 /* how many families accel-top reads */

/* Rows found by their key in constant time: open addressing, a slot holds a row's index + 1 (0: empty). */
struct top_index {
	uint32_t *slots;
	size_t mask; /* slots - 1 (a power of two, at least twice the rows); 0: no table yet */
};

struct top_model {
	char host[64];
	char instance_type[32], instance_id[32];
	double cpu;                 /* ratio: user + system */
	double vcpus;
	double mem_used, mem_total; /* bytes */
	int64_t last_ts_ms;         /* the newest sample time of the last report */
	int64_t last_mono_ns;       /* when the last report was read */
	double max_period;          /* seconds: the longest group period seen */
	uint64_t reports;
	enum report_format format;
	struct mapper *map;         /* the stream's report -> samples mapping */
	struct top_dev *devs;
	size_t ndevs, adevs;
	struct top_proc *procs;
	size_t nprocs, aprocs;
	struct top_index dev_ix;    /* devs by device_type and key */
	struct top_index proc_ix;   /* procs by pid; a pidless runtime entry by its tag */
	/* within one report */
	double cpu_acc;
	int cpu_n;
	const struct family *fams[TOP_MODEL_NFAMS]; /* the mapping's families it reads (top_model.c's fam_names) */
};

/* An empty model (the mapping's instance labels reset too). */
void top_model_init(struct top_model *m);
void top_model_free(struct top_model *m);

/*
 * Apply one report (borrowed): map it to samples and fold them in. now_ms
 * stamps samples whose input has no time (neuron-monitor's); mono_ns is
 * when it was read. Processes not seen for three times the longest period
 * (at least 3 s of report time) are dropped.
 */
void top_model_report(struct top_model *m, json_t *report, int64_t now_ms, int64_t mono_ns);

/*
 * The same, one sample at a time, for inputs that are not reports
 * (accel-prom's exposition): begin, each sample, end.
 */
void top_model_begin(struct top_model *m);
void top_model_sample(struct top_model *m, const struct sample *s);
void top_model_end(struct top_model *m, int64_t mono_ns);

/* The device of that kind and key (borrowed), or NULL. */
const struct top_dev *top_model_dev(const struct top_model *m, const char *type, const char *key);

/* A device's history point i, 0 the oldest of hist_n. */
const struct top_hist *top_dev_hist(const struct top_dev *d, size_t i);

/* A process row's pod and container as the table shows them: "pod/container", "pod" or "container"; "" when none. */
void top_proc_pod(const struct top_proc *p, char *dst, size_t size);

/* The total device memory a process row shows: the sum over its devices, else the runtime's figure, else NAN. */
double top_proc_devmem(const struct top_model *m, const struct top_proc *p);

#endif
