/* SPDX-License-Identifier: MIT */
/*
 * Report -> samples: the one place in the project that knows the report
 * schema. Every sink renders what this yields and parses nothing itself.
 *
 * Accepted unchanged: accel-monitor's reports (docs/report-format.md),
 * neuron-monitor 2.x output and neuron-monitor 2020 output (the variants in
 * docs/neuron-monitor-formats.md). Families and labels follow
 * neuron-monitor-prometheus.py where the meaning is the same, so existing
 * dashboards keep working.
 *
 * The mapping is a table of rules: a group name, a small path pattern
 * inside the group, and the family it feeds. The rules, the families and the
 * report fields are rows each collector declares beside its code
 * (common/rows.h; the rows every vendor shares are common/all_rows.c's); this
 * module is their interpreter. New families and fields are new rows, not new
 * code paths.
 *
 * State: a mapper (struct mapper) carries what one stream needs from one
 * report to the next (the last instance labels, the count of invalid
 * timestamps) and the compiled rules; each sink owns its own. The rows are
 * constant and shared.
 */
#ifndef ACCEL_SAMPLES_H
#define ACCEL_SAMPLES_H

#include "rows.h"
#include "schema.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct label {
	const char *name;
	const char *value;
};

/*
 * The most labels a sample carries. Not a quiet cut: map_rules_check()
 * proves (test_samples) that no rule can yield more, and mapper_new() stops
 * the program rather than drop one.
 */
#define SAMPLE_MAX_LABELS 32
_Static_assert(SAMPLE_MAX_LABELS <= 32, "struct sample's prom_skip has a bit per label");
/* Instance labels: the six of instance_info, and ultraserver_id where it has one (common/schema.h). */
#define MAP_INSTANCE_LABELS_MAX SCHEMA_INSTANCE_LABELS

/*
 * A histogram sample's buckets (a family of type METRIC_HISTOGRAM). As the
 * mapper yields it, counts, sum and count are the period's increments.
 */
struct sample_hist {
	size_t n;             /* finite bounds */
	const double *le;     /* n upper bounds, ascending */
	const double *counts; /* n + 1 per-bucket counts (not cumulative; the last is (le[n-1], +Inf]) */
	double sum, count;    /* of the observations */
};

/* The most finite bounds a histogram sample may have (the producer keeps 512 per distribution). */
#define SAMPLE_HIST_MAX_BOUNDS 512

/*
 * A histogram bucket's bound as the value of its le label, the same in every
 * sink: OpenMetrics' canonical form ("0.005", "1.0" with ".0" on an integral
 * bound, "+Inf"), which Prometheus' clients write in OpenMetrics and to
 * which Prometheus 3 normalizes either format's; the shortest text that
 * reads back as le. dst gets at most 32 bytes. Returns the length.
 */
size_t sample_le_text(double le, char dst[32]);

/* One value. Strings are borrowed: valid only during the callback. */
struct sample {
	const struct family *fam;
	const char *group;   /* the input group ("vcpu_usage", "execution_stats", "instance_info") */
	const char *entity;  /* what it is about: "system", "instance", or the runtime tag */
	const char *host;    /* the report's instance_info.hostname; "" when it has none (neuron-monitor) */
	const char *node;    /* and its node_name (the Kubernetes node's); "" when it has none */
	struct label labels[SAMPLE_MAX_LABELS]; /* instance labels first (ninstance of them), then the rest */
	size_t nlabels, ninstance;
	unsigned prom_skip;  /* bit i set: labels[i] is identity accel-prom leaves out (neuron-monitor's pid) */
	/* The entity's identity, so no sink sniffs label names for it (also in labels[]): */
	const char *runtime_tag; /* a runtime entry's sample: its runtime_tag; else NULL */
	const char *device_type; /* a device's sample: its kind ("nvidia"); else NULL */
	const char *device;      /* a device's sample: its key ("0"); else NULL */
	double value;        /* counters: the count over the group's period (an increment); histograms: hist->count */
	int64_t ts_ms;       /* when the group was collected (unix ms) */
	double period;       /* the group's period in seconds; 0 when the input has none */
	/*
	 * The Kubernetes labels of the sample's pod (identities.pods' "labels",
	 * borrowed), or NULL: an allocation's owner's pod, a DCGM series' user's;
	 * accel-prom serves them (--kubernetes-enable-pod-labels, prom_kube.h).
	 */
	json_t *pod_labels;
	const struct sample_hist *hist; /* a histogram family's buckets (borrowed); NULL for any other family */
};

enum report_format { FORMAT_ACCEL, FORMAT_NEURON_2X, FORMAT_NEURON_2020 };
extern const char *const report_format_names[3];

struct mapper;

struct map_cb {
	void (*sample)(const struct sample *s, void *ud);
	/* A group (or runtime entry, group "runtime") whose "error" was set: it yields no samples. */
	void (*group_error)(const char *group, const char *entity, const char *error, void *ud);
	/* A value of the wrong type where a number belongs: path like "system_data.memory_info.memory_used_bytes". */
	void (*bad_value)(const char *path, const char *why, void *ud);
	void *ud;
};

/*
 * A new mapper, its rules compiled (new allocation: mapper_free). A row that
 * does not compile is a programming error test_samples catches
 * (map_rules_check): here it stops the program rather than lose a label.
 */
struct mapper *mapper_new(void);
void mapper_free(struct mapper *m); /* NULL-safe */

/*
 * Map one parsed report (borrowed) of a stream; now_ms stamps samples whose
 * input carries no timestamp (neuron-monitor's). Returns the input format
 * detected. The mapper remembers the instance labels of the last report that
 * had instance_info (a report without one keeps them: missing is not a change
 * of instance).
 */
enum report_format mapper_report(struct mapper *m, json_t *report, int64_t now_ms, const struct map_cb *cb);

/* Forget the instance labels, as at the start of a stream. */
void mapper_reset(struct mapper *m);

/*
 * How many "timestamp" values mapper_report found invalid (not ISO 8601 UTC,
 * an impossible date such as 2026-02-30, before 1970 or after 2262) since
 * the mapper was made; each was logged (rate-limited) and replaced by the
 * time the report was read.
 */
unsigned long long mapper_bad_timestamps(const struct mapper *m);

/*
 * Map one report on its own, with a mapper made for it and freed after (no
 * instance labels carried over from an earlier report): for tests and
 * one-off readers, not for a stream.
 */
enum report_format map_report(json_t *report, int64_t now_ms, const struct map_cb *cb);

/*
 * containers: the identity (borrowed) of a device's per-pod (IDENT_POD) or
 * per-container sum object sum under key: ids."pods" / ids."containers"
 * entry of key when there is one (format 2), else sum itself (format 1
 * carries the names in the sum).
 */
json_t *report_sum_identity(json_t *ids, enum map_ident kind, const char *key, json_t *sum);

/*
 * Compile and check every rule of every block: its pattern fits the compiled
 * form, its group and labels are the schema's, its family is defined in
 * exactly one block, and no sample it yields can carry more than
 * SAMPLE_MAX_LABELS labels. 0, or -E2BIG / -EINVAL with a message naming the
 * rule in err.
 */
int map_rules_check(char *err, size_t size);

/* The most labels any sample of the mapping can carry (<= SAMPLE_MAX_LABELS when map_rules_check passes). */
size_t map_max_labels(void);

/*
 * The whole schema as one JSON object (new reference): schema_json()'s
 * groups, config aliases and labels, and every block's rows in the order
 * they apply: "fields", "families" (name, type, unit, help) and "rules"
 * (scope, group, path, family, labels, fixed, scale, clamp, device_type,
 * index_label). tests/fixtures/schema.json is this object as written by
 * test_schema (SCHEMA_UPDATE=1), for the Python checkers; test_schema fails
 * when the file differs.
 */
json_t *map_schema_json(void);

/*
 * The families the mapping can produce (for documentation and tests), every
 * block's in order: the i-th, or NULL past the last.
 */
const struct family *map_family_at(size_t i);
/* A family by name; NULL when the mapping has none of that name. */
const struct family *map_family(const char *name);

#endif
