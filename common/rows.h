/* SPDX-License-Identifier: MIT */
/*
 * Rows: what a collector declares, beside its code, about the report fields
 * it writes and what the sinks make of them (node_exporter's collectors
 * declare their descriptors in their own files the same way). A block of
 * rows has three tables:
 *
 *   fields    every field the collector puts in a group (a device object's
 *             key, or a path below it written as a rule path), how the stream
 *             checkers check its value, and why it has no family when no rule
 *             maps it;
 *   families  the families it adds: name, help, type, unit;
 *   rules     the mapping: a group, a path pattern inside it (common/samples.c
 *             says the patterns), the family it feeds (by name: a family of any
 *             block), the labels it captures, the scale of its values.
 *
 * Where rows live. Rows are data, in common/ where the producer and every
 * sink read them: a collector's block is common/rows/<name>.c (defining
 * <name>_rows, declared below), the block every vendor shares is
 * common/all_rows.c's own, "common": the fields common to every kind of
 * device and their rules, the attribution of device figures to pods and
 * containers, neuron-monitor's own runtime groups, and the families the
 * mapper itself yields (instance_info, neuron_hardware_info). A family fed by
 * one collector only is that collector's; one fed by several is common's.
 * The collector's registry row names its block (struct collector_ops .rows,
 * monitor/core/collector.h), and map_rows[] below lists every block in the
 * order they apply; test_samples checks, by walking both tables, that each
 * collector's block is in map_rows[] and each block of map_rows[] but
 * common's belongs to a collector. Nothing in common/ includes monitor/.
 *
 * What a change touches. A field: the collector's code that writes it and
 * its rows file (the field row, usually a rule row and a family). A
 * collector: its coll_<name>.c, its common/rows/<name>.c, the registry row
 * in monitor/app/collectors.c, a map_rows[] entry and a declaration below.
 * A label: its schema row (common/schema.c) and the rules that capture it.
 * A sink: its folder sinks/<name>/ (the Makefile finds it).
 *
 * Order. The blocks apply in the registry's order (common first), each
 * block's rules in their order. Within one group, that is the order in which
 * a report's samples come out: accel-csv's rows and accel-cloudwatch's
 * bodies follow it, accel-prom sorts. The first rule a group has also decides
 * whether the mapper looks at that group at all: a group no rule names (for
 * this kind of device) is skipped, its "error" included.
 *
 * Every name a row uses is checked once, when a mapper is made
 * (map_rules_check() in test_samples): its group and labels are the
 * schema's (common/schema.h), its family is defined in exactly one block.
 */
#ifndef ACCEL_ROWS_H
#define ACCEL_ROWS_H

#include "schema.h"
#include "util.h"

#include <stddef.h>

/*
 * A metric family: what a rule feeds (the sinks serve it under this name).
 * A histogram's rule reaches an object {"le", "counts", "sum", "count"}
 * (docs/report-format.md §6.5, latency_histograms) and yields one sample
 * carrying its buckets (struct sample_hist, common/samples.h); its name
 * has no suffix (accel-prom adds _bucket, _sum and _count).
 */
enum metric_type { METRIC_GAUGE, METRIC_COUNTER, METRIC_HISTOGRAM };

struct family {
	const char *name;      /* Prometheus name; counters end in _total, histograms have no suffix */
	const char *help;
	enum metric_type type;
	const char *unit;      /* base unit: "ratio", "bytes", "seconds", "count", "" */
};


/*
 * A field a collector can put in a group: a device object's key, or a path
 * below it written as a rule path ("neuroncores.*.model_loads"). Every field
 * is mapped by a rule (test_samples proves it: a field nothing maps fails the
 * test), or says why it is not exported (the docs say the same). kind is how
 * tests/helpers/check_report.py checks the value of a device object's
 * top-level field ("str", "int", "real" (a float >= 0), "num" (any number),
 * "pct", "bool", "ints", "int_map", "num_map", or a shape of its own).
 */
struct map_field {
	enum group_id group;
	const char *device_type;  /* device groups: only this kind; NULL: any kind (or not a device group) */
	const char *path;
	const char *kind;         /* NULL for a path below a top-level field (not checked on its own) */
	const char *not_exported; /* NULL: a rule maps it; else why it has no family */
};
#define FIELD(g, type, path, kind, why) { GROUP_##g, type, path, kind, why }

/* Why some fields have no family (docs/report-format.md, "What the sinks export", says the same). */
#define WHY_TEXT "text: an identity or description, not a measurement (accelerator_info carries uuid, model and pci_bus_id)"
#define WHY_FACT "a fixed fact about the device, not a measurement"
#define WHY_RUNNING "a running total: the counter family of the same data carries its increases, which sinks sum"
#define WHY_SUM "the sum of fields exported on their own"
#define WHY_IDENT                                                                                        \
	"a container's or pod's identity: the labels pod, namespace and container of the per-process, per-pod " \
	"and per-container series"

#define GAUGE(name, help, unit) { name, help, METRIC_GAUGE, unit }
#define COUNTER(name, help, unit) { name, help, METRIC_COUNTER, unit }
#define HISTOGRAM(name, help, unit) { name, help, METRIC_HISTOGRAM, unit }

/*
 * Which part of a report a rule walks. Device rules walk each device object
 * of a group ("devices": {"0": {...}}), whose identity becomes the labels
 * device_type, device, uuid, model and pci_bus_id. Device-group rules walk
 * the group object itself (a count over the kind's devices) and carry only
 * the instance labels. Monitor rules walk the report's "monitor" object (the
 * producer's own figures: its self-timing); their group is "monitor".
 */
enum map_scope { SC_SYSTEM, SC_RUNTIME, SC_DEVICE, SC_DEVICE_GROUP, SC_MONITOR };

/*
 * containers: the labels pod, namespace and container come from a container
 * identity object (monitor/host/container.h): a runtime entry's "container";
 * for a device rule that captures "pid", that process's identity (format 2:
 * the report's "identities"; format 1: the device's "process_containers"
 * entry); for a rule with ident set, the identity of the object its first
 * "*" reaches (format 2: the report's "identities" entry of its key; format
 * 1: the object itself), whose key is the pod UID (IDENT_POD: no container
 * label) or the container id (IDENT_CONTAINER), the key not being a label
 * itself. Which labels an identity gives is ident_label_rows' data. A name
 * the monitor could not resolve falls back to the id: pod to the pod UID,
 * container to the container id.
 */
enum map_ident { IDENT_NONE, IDENT_POD, IDENT_CONTAINER };

/*
 * containers: one label an identity gives a sample, in the order they are
 * added. It takes the identity's string field; when that is empty, the
 * sum's own key where the sum is of kind key_of (a pod's UID, a container's
 * id), else the identity's field fallback (NULL: none); no label when still
 * empty. not_for: the kind of sum that never has it (a pod's sums have no
 * container label). Adding an identity label is one row (ident_label_rows,
 * common/all_rows.c).
 */
struct ident_label {
	const char *label;
	const char *field;
	enum map_ident key_of;
	const char *fallback;
	enum map_ident not_for;
};
/* The rows, and how many (at most IDENT_LABELS_MAX). */
extern const struct ident_label ident_label_rows[];
extern const size_t ident_label_count;
#define IDENT_LABELS_MAX 12

/*
 * A percent read as a ratio: value / 100.0, as neuron-monitor-prometheus.py
 * computes it (value * 0.01 differs in the last bit for about one two-decimal
 * percent in seven: 3.96 * 0.01 is 0.0396, 3.96 / 100.0 is 0.039599999999999996).
 */
#define PERCENT (-100.0)
/* A JSON boolean read as 0 or 1 (a flag exported as a gauge); any other type is a bad value. */
#define BOOLEAN (-2.0)

/*
 * One rule. Rows for every kind of device, and system and runtime rows,
 * leave device_type and index_label out (NULL), so a table stays one row a
 * line or two; the rows files compile with -Wmissing-field-initializers off
 * for that.
 */
struct map_rule {
	enum map_scope scope;
	const char *group;       /* as the input names it (neuron-monitor's aliases are groups of their own) */
	const char *path;
	const char *family;      /* a family's name, defined in any block */
	const char *labels;      /* capture label names, comma-separated */
	const char *fixed;       /* one "name=value" label, or NULL */
	double scale;            /* 0: 1; PERCENT: value / 100.0; BOOLEAN */
	double clamp;            /* 0: none */
	const char *device_type; /* device rules: only this kind ("neuron"); NULL: every kind */
	const char *index_label; /* device rules: also label the device index under this name; NULL: no */
	enum map_ident ident;    /* the object the first "*" reaches is a pod's or container's (above) */
	/*
	 * Endpoint runtimes. unless: the rule is not applied to a group that has this key (the
	 * runtime-level sums of execution_stats when it has "models", which carry them per model);
	 * only_with: applied only to a group that has it (NULL: either way). weight: each value is multiplied
	 * by the number at this path (dot-separated keys) inside the object the pattern's last "*" reached,
	 * and yields nothing where that is absent (a mean per request times the requests: a duration).
	 */
	const char *unless;
	const char *only_with;
	const char *weight;
};

/* One block: a collector's rows, or common's. */
struct map_rows {
	const char *name;   /* "common", or the collector's ("nvidia") */
	const char *source; /* the file that declares them (__FILE__) */
	const struct map_field *fields;
	size_t nfields;
	const struct family *families;
	size_t nfamilies;
	const struct map_rule *rules;
	size_t nrules;
};
/* A block's tables, in its struct map_rows initializer; one a block has none of is left out. */
#define ROWS_FIELDS(a) .fields = (a), .nfields = ARRAY_SIZE(a)
#define ROWS_FAMILIES(a) .families = (a), .nfamilies = ARRAY_SIZE(a)
#define ROWS_RULES(a) .rules = (a), .nrules = ARRAY_SIZE(a)

/* Every block, common's first, in the order they apply; NULL-terminated (common/all_rows.c). */
extern const struct map_rows *const map_rows[];

/* Each collector's block (common/rows/<name>.c). */
extern const struct map_rows cpu_rows, mem_rows, process_rows, containers_rows, endpoint_rows, nvidia_rows,
	amdgpu_rows, neuron_rows, ncs2_rows, hwmon_rows, powercap_rows;

#endif
