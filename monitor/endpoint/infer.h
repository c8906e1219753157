/* SPDX-License-Identifier: MIT */
/*
 * What an inference server's Prometheus exposition means, per model, over a
 * period. The endpoint collector (coll_endpoint.c) scrapes a server's
 * /metrics and hands each body to infer_update(); each due execution_stats
 * group is then filled by infer_execution_stats() with the increases between
 * the scrape the previous call used and the latest one: request counts,
 * errors, latency percentiles (from the period's histogram bucket increments,
 * interpolated as Prometheus' histogram_quantile does, or the server's
 * summary quantiles), mean times per request, in-flight and pending gauges,
 * batch size, token counts and KV-cache usage, and the device metrics the
 * server exports. The server's flavour (Triton, vLLM, TGI, TorchServe,
 * OpenVINO Model Server, or any other Prometheus endpoint) is configured or
 * recognised from the families served; docs/report-format.md lists the
 * families and labels read for each.
 *
 * Ownership: struct infer owns copies of what it keeps; bodies and groups are
 * borrowed.
 */
#ifndef ACCEL_INFER_H
#define ACCEL_INFER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

enum infer_server { INFER_AUTO, INFER_TRITON, INFER_VLLM, INFER_TGI, INFER_TORCHSERVE, INFER_OVMS, INFER_PROMETHEUS };

struct infer;

/* "triton", "vllm", "tgi", "torchserve", "ovms", "prometheus"; "" for INFER_AUTO. */
const char *infer_server_name(enum infer_server s);

/* The enum value named name (as infer_server_name spells it), or -1 when unknown. */
int infer_server_parse(const char *name);

/* A new state; INFER_AUTO recognises the flavour from the families of the first body that has samples. */
struct infer *infer_new(enum infer_server configured);

/* NULL-safe. */
void infer_free(struct infer *in);

/*
 * Whether each execution_stats also carries, for each latency distribution
 * that is a histogram (per model, and the runtime's merged one), its
 * period's buckets as "latency_histograms" (docs/report-format.md); off
 * until set (the endpoint block's "latency_histograms": true).
 */
void infer_set_histograms(struct infer *in, int on);

/*
 * One scrape's body (len bytes, no NUL needed) taken at mono_ns (CLOCK_MONOTONIC
 * nanoseconds). Returns 0, or -EINVAL with err "line N: ..." when nothing in it
 * parses (then the state is unchanged). Keeps what the next execution_stats
 * needs; lines that do not parse among good ones are skipped.
 */
int infer_update(struct infer *in, const char *body, size_t len, int64_t mono_ns, char *err, size_t errsz);

/* The flavour configured or recognised; INFER_AUTO until known. */
enum infer_server infer_server_of(const struct infer *in);

/*
 * A model version's period as execution_stats says it, typed: what energy
 * per model is split by (model_energy.h). A field the group does not have
 * is NAN.
 */
struct infer_model {
	json_t *obj;       /* its object in the group's "models" (borrowed: the group holds it) */
	double completed;  /* execution_summary.completed */
	double compute_s;  /* mean_seconds.compute_infer */
	double request_s;  /* mean_seconds.request */
	double generation; /* tokens.generation */
};

/* What one execution_stats wrote, as records (borrowed from the reader until its next call). */
struct infer_stats {
	const struct infer_model *models; /* in the group's order */
	size_t nmodels;
	const char *const *devices;       /* server_devices' UUIDs, in the group's order */
	size_t ndevices;
};

/*
 * Fill execution_stats (group: borrowed, its envelope already there) with the
 * period between the scrape used by the previous call and the latest one; then
 * the latest becomes the baseline. The first call (no baseline) writes only
 * what one scrape gives (gauges, KV-cache usage, server_devices) and no counts,
 * percentiles or means. Nothing is written when no scrape succeeded yet. st
 * (may be NULL) gets the models and devices written, as records.
 */
void infer_execution_stats(struct infer *in, json_t *group, struct infer_stats *st);

#endif
