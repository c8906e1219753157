/* SPDX-License-Identifier: MIT */
/*
 * accel-otlp's encoder: reports -> OTLP ExportMetricsServiceRequest
 * (protobuf, otlp.proto, or OTLP/JSON).
 *
 * Reports go through accel-prom's series store (common/series/prom_store.h)
 * as in accel-remote-write: counters are cumulative since the sink's start
 * (OTLP monotonic cumulative Sums whose start_time_unix_nano is when the
 * store's value began), a series leaves when its source reports an error,
 * when it goes stale or when the instance changes, and then gets one data
 * point flagged NO_RECORDED_VALUE (OTLP's staleness marker). Names, units and
 * attributes follow otlp_names.h; the instance labels make the Resource.
 *
 * Each data point a report refreshes joins the pending batch; a flush takes
 * whole points from its head into one request: one ResourceMetrics per
 * resource (instance), one ScopeMetrics ("accel-monitor", the project's
 * version), the points grouped by metric. What repeats is interned: each
 * family's metric descriptor once, each series' attributes once (found
 * through prom_series_view.slot), encoded as protobuf and as JSON text.
 *
 * Not thread-safe: one encoder per thread (the reader's).
 */
#ifndef ACCEL_OTLP_ENC_H
#define ACCEL_OTLP_ENC_H

#include "../../common/rows.h"
#include "../../common/samples.h"
#include "../../common/stream.h"
#include "../../common/util.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define OTLP_SERIES_MAX 200000      /* distinct series interned; beyond, a new one's points are dropped (logged) */
#define OTLP_DEFAULT_SERVICE "accel-monitor" /* service.name when neither option nor resource names one */
#define OTLP_SCOPE_NAME "accel-monitor"

enum otlp_encoding { OTLP_PROTOBUF, OTLP_JSON };

struct otlp_kv {
	const char *key, *value; /* a resource attribute (string value) */
};

struct otlp_enc_opts {
	/* OTEL_RESOURCE_ATTRIBUTES then --resource-attribute (later ones win); copied. They win over the
	 * attributes derived from the instance labels. */
	const struct otlp_kv *resource;
	size_t nresource;
	/* OTEL_SERVICE_NAME / --service-name; NULL: the resource's service.name, else OTLP_DEFAULT_SERVICE
	 * (OpenTelemetry's default would be unknown_service:accel-otlp, which says nothing of the node). */
	const char *service_name;
	enum otlp_encoding encoding;
	int64_t staleness_ms; /* as accel-prom's --staleness; 0: its default */
};

struct otlp_enc;

/* A new encoder (new allocation: otlp_enc_free), or NULL with err filled (a bad resource attribute). */
struct otlp_enc *otlp_enc_new(const struct otlp_enc_opts *o, char *err, size_t errsz);
void otlp_enc_free(struct otlp_enc *e); /* NULL-safe */

/*
 * One report (borrowed); where names its line ("stdin:12"), mono_ns is
 * CLOCK_MONOTONIC (staleness), real_ns CLOCK_REALTIME (the timestamp of
 * points whose input has none). Its refreshed data points, and a
 * NO_RECORDED_VALUE point for each series that left, join the pending batch.
 */
void otlp_enc_report(struct otlp_enc *e, json_t *report, const char *where, int64_t mono_ns, int64_t real_ns);
/* A line the stream reader rejected (counted in the store, as accel-prom does). */
void otlp_enc_bad_line(struct otlp_enc *e, enum stream_bad why);
/*
 * Series past the staleness window leave (accel-prom's sweep), each with a
 * NO_RECORDED_VALUE point stamped real_ns. Call it while the input is
 * quiet, about once a second.
 */
void otlp_enc_sweep(struct otlp_enc *e, int64_t mono_ns, int64_t real_ns);

size_t otlp_enc_pending(const struct otlp_enc *e);       /* data points waiting */
size_t otlp_enc_pending_bytes(const struct otlp_enc *e); /* an estimate of their encoded size (bytes) */

/* The exporter's own health, exported with the next request as accel_otlp_* metrics. */
struct otlp_health {
	uint64_t points_sent, points_failed, points_dropped, points_rejected; /* rejected: partial_success */
	uint64_t requests_sent, requests_failed, requests_retried;
	uint64_t queue_bytes, queue_requests; /* gauges */
	uint64_t input_lines, input_bad_lines;
};
/* Add h's figures, stamped real_ns, to the pending batch (counters: cumulative since otlp_enc_new). */
void otlp_enc_health(struct otlp_enc *e, const struct otlp_health *h, int64_t real_ns);

/*
 * Encode pending data points, at most max_points and about max_bytes (whole
 * data points, at least one; a metric may be split across requests, each
 * request carrying the resource and scope), into out (reset first;
 * uncompressed ExportMetricsServiceRequest in the encoder's encoding).
 * *points gets how many were taken (0: nothing pending; out is then empty).
 * 0 or -errno (-E2BIG: out's cap; the points taken are dropped then).
 */
int otlp_enc_flush(struct otlp_enc *e, size_t max_points, size_t max_bytes, struct buf *out, size_t *points);

/*
 * One data point into the pending batch, as otlp_enc_report adds each
 * series the store refreshed: fam (static, borrowed for the encoder's
 * life), labels as accel-prom renders them ("{a=\"x\"}" or ""), slot a
 * word kept with the series (0 at first; the encoder's id + 1, so the label
 * set is parsed once) or NULL, the point's time and the start of its
 * cumulative value (unix ms), its value, hist for a histogram family (its
 * state as the store keeps it: cumulative since the series began; else
 * NULL; copied). 0, or -EINVAL (labels not in that form), -E2BIG (too many
 * labels), -ENOSPC (OTLP_SERIES_MAX series).
 */
int otlp_enc_add(struct otlp_enc *e, const struct family *fam, const char *labels, size_t len, uint32_t *slot,
		 int64_t ts_ms, int64_t start_ms, double value, const struct sample_hist *hist);

/* The content type of the encoder's requests: "application/x-protobuf" or "application/json". */
const char *otlp_content_type(enum otlp_encoding enc);

/*
 * A 2xx answer's body: ExportMetricsServiceResponse. *rejected =
 * partial_success.rejected_data_points (0 when absent), msg its
 * error_message ("" when absent). 0, or -EINVAL (not a response in that
 * encoding; an empty body is a valid empty response).
 */
int otlp_response_parse(const void *body, size_t len, enum otlp_encoding enc, int64_t *rejected, char *msg,
			size_t msgsz);
/*
 * A 4xx/5xx answer's body: google.rpc.Status; its message into msg. 0, or
 * -EINVAL (not a Status, or one without a message: then the caller shows
 * the body as text, capped and sanitized).
 */
int otlp_status_parse(const void *body, size_t len, enum otlp_encoding enc, char *msg, size_t msgsz);

#endif
