/* SPDX-License-Identifier: MIT */
/*
 * accel-prom's series store and renderer.
 *
 * Reports go through the common mapping (common/samples.h) and land here
 * as series: (family, sorted label set) -> value. Gauges take the latest
 * value; counters add each report's per-period increment and never go
 * back while accel-prom runs, and so do a histogram's buckets, sum and
 * count (prom_hist.h). A series leaves the exposition when it has
 * not been refreshed for the staleness window, when its source reports an
 * error (a runtime entry: the process exited or cannot be read; a device
 * entry or one device), or when the instance labels change. A counter (or
 * histogram) that leaves is remembered for an hour,
 * so that if it comes back it goes on from its old value; such departed
 * counters give way (oldest first) when a new series needs the room.
 * A sample that finds the store full (series cap, or byte cap: what the
 * series take in the store and in the rendered exposition, and the
 * servers' families of --passthrough) is refused: counted, logged
 * (rate-limited) and reported by /health. The series of runtime entries
 * and the servers' families together stop at 3/4 of each cap, so that
 * however many models the servers have, the node's own series (system,
 * devices, instance) always find room.
 *
 * After a report the whole exposition is rendered once (Prometheus text
 * 0.0.4, OpenMetrics 1.0.0, the BIE JSON) into an immutable snapshot
 * (prom_expo.h) that scrapes serve without touching the store.
 *
 * Thread-safety: every function takes the store's lock, except
 * prom_store_health, which reads atomics only and never waits on
 * ingestion.
 */
#ifndef ACCEL_PROM_STORE_H
#define ACCEL_PROM_STORE_H

#include "../samples.h"
#include "../stream.h"
#include "../util.h"
#include "prom_expo.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define PROM_STALENESS_MIN_MS 30000       /* default window floor */
#define PROM_STALENESS_PERIODS 5          /* default window: this many times the longest group period */
#define PROM_HIDDEN_KEEP_MS (3600 * 1000) /* how long a counter that left is remembered */
#define PROM_SERIES_MAX 100000            /* default cap on series (departed counters evicted first) */
#define PROM_SERIES_BYTES_MAX ((size_t)128 << 20) /* default cap on the series' memory (series_cost) */
#define PROM_LABELS_MAX 16384             /* bytes of one series' rendered label set */
#define PROM_NODE_SHARE 4                 /* 1/4 of each cap is the node's own: runtimes' series and families stop at 3/4 */

/* The families that feed /v1/collect (device memory, filled by the device collectors). */
#define PROM_BIE_USED_FAMILY "accelerator_memory_used_bytes"
#define PROM_BIE_TOTAL_FAMILY "accelerator_memory_total_bytes"

struct prom_dcgm;
struct prom_pass;

struct prom_store_opts {
	int64_t staleness_ms;  /* 0: max(30 s, 5 x the longest group period seen) */
	const char *node_name; /* /v1/collect's key (copied) */
	const char *version;   /* accel_prom_build_info's label (copied) */
	struct prom_dcgm *dcgm; /* --collectors (borrowed; outlives the store), or NULL */
	struct prom_pass *pass; /* --passthrough (borrowed; outlives the store), or NULL */
	size_t max_series;     /* 0: PROM_SERIES_MAX; live series beyond it are refused */
	size_t max_bytes;      /* 0: PROM_SERIES_BYTES_MAX; bytes of series (store and exposition) beyond it: refused */
	int old_pod_labels;    /* pod, namespace, container labels named as dcgm-exporter's --use-old-namespace */
	int pod_labels;        /* --kubernetes-enable-pod-labels: a sample's pod_labels served (prom_kube.h) */
};

struct prom_store;

struct prom_store *prom_store_new(const struct prom_store_opts *o);
void prom_store_free(struct prom_store *st); /* NULL-safe */

/*
 * Map and apply one report (borrowed). where names its line for messages
 * ("stdin:12"); mono_ns is CLOCK_MONOTONIC (staleness), real_ns
 * CLOCK_REALTIME (stamps for input without timestamps, and the self-metrics).
 */
void prom_store_report(struct prom_store *st, json_t *report, const char *where, int64_t mono_ns, int64_t real_ns);

/* A line the stream reader rejected. */
void prom_store_bad_line(struct prom_store *st, enum stream_bad why);

/* Bytes consumed from the input so far (for accel_prom_input_bytes_total). */
void prom_store_input_bytes(struct prom_store *st, uint64_t bytes);

/* The input ended (why: "end of input", "read error: ..."); /health fails from now on. */
void prom_store_eof(struct prom_store *st, const char *why, int64_t mono_ns);

/* Drop the series that have not been refreshed within the staleness window. */
void prom_store_sweep(struct prom_store *st, int64_t mono_ns);

/* Render the current state into a new snapshot (one reference, caller's). */
struct prom_expo *prom_store_render(struct prom_store *st, int64_t mono_ns, int64_t real_ns);

/* Sweep, render, and publish into pub, in one step (so snapshots are published in order). */
void prom_store_publish(struct prom_store *st, struct prom_pub *pub, int64_t mono_ns, int64_t real_ns);

/*
 * /health: 1 when the last report arrived within the staleness window,
 * the input is still open and no sample was refused (store full) within
 * the window, else 0. why gets a one-line reason either way (no newline).
 */
int prom_store_health(struct prom_store *st, int64_t mono_ns, char *why, size_t size);

/* The staleness window in force (ms). */
int64_t prom_store_staleness_ms(struct prom_store *st);

/*
 * The last instance_info's hostname and node_name (the Kubernetes node's)
 * into host and node (size bytes each; "" when the stream has none).
 */
void prom_store_instance_names(struct prom_store *st, char *host, char *node, size_t size);

/* Number of series in the exposition, self-metrics excluded. */
size_t prom_store_nseries(struct prom_store *st);

/* One series as prom_store_each shows it (borrowed: valid during the callback). */
struct prom_series_view {
	const struct family *fam;
	const char *labels;   /* rendered, sorted by name: "{a=\"x\",b=\"y\"}", or "" */
	size_t labels_len;
	double value;         /* counters: cumulative since the store's start */
	int64_t ts_ms;        /* the timestamp of the sample that last refreshed it (unix ms) */
	uint32_t *slot;       /* the consumer's own word, 0 at first, kept with the series (accel-remote-write: its id + 1) */
	const struct sample_hist *hist; /* a histogram family's series: its buckets, sum and count, cumulative since the
					   series began (value is its count); NULL for other families */
	/*
	 * When the value began (unix ms): the first sample of the series (a
	 * counter's a period before it, as its first increment covers that
	 * period). A counter that left the exposition and came back within
	 * PROM_HIDDEN_KEEP_MS goes on from its old value, so keeps its start;
	 * one that comes back after being forgotten (or a gauge that left)
	 * starts again from 0 with a new start. accel-otlp's start_time_unix_nano.
	 */
	int64_t start_ms;
	int fresh;            /* the last report refreshed it (what fresh_only selects) */
};

/*
 * Call fn for each visible series of the exposition, self-metrics
 * (accel_prom_*) excluded; with fresh_only, only those the last report
 * refreshed. For accel-remote-write, which pushes what accel-prom serves.
 */
void prom_store_each(struct prom_store *st, int fresh_only, void (*fn)(const struct prom_series_view *v, void *ud),
		     void *ud);

#endif
