/* SPDX-License-Identifier: MIT */
/*
 * accel-otlp's naming: which OpenTelemetry metric each accel-prom family
 * becomes, with which unit, kind and attribute names. Data, not code: the
 * rows below (otlp_names.c) and three rules every row shares.
 *
 *   1. A family with a row takes its name, unit and kind from it; a row's
 *      attrs renames labels ("uuid>hw.id") and adds fixed attributes
 *      ("+hw.type=gpu"). The rows follow OpenTelemetry's semantic conventions
 *      (hw.*: docs/hardware/; gen_ai.*: docs/gen-ai/) where those define the
 *      metric with the same meaning.
 *   2. Any other family keeps accel-prom's name under OpenTelemetry's rules
 *      for Prometheus compatibility, so that an OpenTelemetry Prometheus
 *      exporter turns it back into the family: a counter drops "_total"; a
 *      name ending in its unit's word (_bytes, _seconds, _ratio, _watts,
 *      _joules, _celsius, _hertz, _volts, _bytes_per_second) drops it and the
 *      unit becomes the UCUM unit (By, s, 1, W, J, Cel, Hz, V, By/s); any
 *      other unit ("count", "rpm", a unit the name does not end in) becomes a
 *      UCUM annotation ("{count}"), which such an exporter leaves out of the
 *      name; no unit, "".
 *   3. Labels: the instance labels go to the Resource (otlp_resource_names),
 *      pod, namespace and container become k8s.pod.name, k8s.namespace.name
 *      and k8s.container.name, an ECS task's ecs_task_family and ecs_task_id
 *      aws.ecs.task.family and aws.ecs.task.id (otlp_attr_names), a "percentile" label pN
 *      becomes the double attribute "quantile" N/100, and every other label
 *      keeps its name. A label with an empty value is no attribute.
 *
 * Gauges are OTLP Gauges (a row may make one an UpDownCounter, a
 * non-monotonic cumulative Sum, where the convention says so), counters
 * monotonic cumulative Sums, histograms explicit-bucket Histograms
 * (cumulative).
 *
 * test_otlp_enc walks map_family_at and proves that every family resolves,
 * that every row names a family, and that no two families share an OTLP
 * name and attribute set; otlp_names_doc writes the table of docs/accel-otlp.md.
 */
#ifndef ACCEL_OTLP_NAMES_H
#define ACCEL_OTLP_NAMES_H

#include "../../common/rows.h"
#include "../../common/util.h"

#include <stddef.h>

#define OTLP_NAME_MAX 128 /* bytes of an OTLP metric name or unit, NUL included */
#define OTLP_ATTRS_MAX 8  /* renames and fixed attributes of one row */

enum otlp_kind { OTLP_KIND_GAUGE, OTLP_KIND_SUM, OTLP_KIND_UPDOWN, OTLP_KIND_HISTOGRAM };

/* One row of the table. */
struct otlp_name_row {
	const char *family;  /* accel-prom's family */
	const char *name;    /* the OTLP metric */
	const char *unit;    /* UCUM */
	int updown;          /* a gauge sent as an UpDownCounter (non-monotonic cumulative Sum) */
	const char *attrs;   /* "label>attribute" renames and "+key=value" fixed attributes, comma-separated */
	const char *semconv; /* the semantic convention it follows (a path of open-telemetry/semantic-conventions) */
};

/* A label renamed, or a fixed attribute (from NULL). */
struct otlp_attr_rule {
	const char *from; /* the label; NULL: a fixed attribute */
	const char *key;
	const char *value; /* fixed attributes: the value */
};

/* What a family becomes, resolved from its row or the default rule. */
struct otlp_desc {
	const struct family *fam;
	const struct otlp_name_row *row; /* NULL: the default rule */
	char name[OTLP_NAME_MAX];
	char unit[OTLP_NAME_MAX];
	enum otlp_kind kind;
	struct otlp_attr_rule attrs[OTLP_ATTRS_MAX]; /* pointers into the row's attrs, copied into pool */
	size_t nattrs;
	char pool[256];
};

/* The rows, and the instance-label and global attribute renames. */
extern const struct otlp_name_row otlp_name_rows[];
extern const size_t otlp_name_nrows;
struct otlp_rename {
	const char *label, *key;
};
extern const struct otlp_rename otlp_resource_names[]; /* instance label -> resource attribute */
extern const size_t otlp_resource_nnames;
extern const struct otlp_rename otlp_attr_names[];     /* label -> attribute, every family */
extern const size_t otlp_attr_nnames;

/* The exporter's health (otlp_enc_health), as families: struct otlp_health's figures in its order. */
#define OTLP_HEALTH_FAMILIES 11
extern const struct family otlp_health_families[OTLP_HEALTH_FAMILIES];

/* The quantile attribute and the label it comes from. */
#define OTLP_PERCENTILE_LABEL "percentile"
#define OTLP_QUANTILE_KEY "quantile"

/*
 * Resolve fam (static, borrowed) into d. 0, or -EINVAL with a message in
 * err when its row is malformed or the name does not fit (test_otlp_enc
 * proves no family fails).
 */
int otlp_desc_resolve(const struct family *fam, struct otlp_desc *d, char *err, size_t errsz);

/*
 * The attribute key of label on a data point of d: its rename, the global
 * one, or the label itself; NULL when the label goes to the resource
 * (an instance label). The quantile rule is the caller's.
 */
const char *otlp_desc_attr(const struct otlp_desc *d, const char *label);

/* The resource attribute of an instance label; NULL when label is none. */
const char *otlp_resource_attr(const char *label);

/* The OTLP kind's name as the docs write it ("Gauge", "Sum (monotonic)", ...). */
const char *otlp_kind_name(enum otlp_kind k);

/*
 * docs/accel-otlp.md's mapping table (Markdown, one row per family of the
 * mapping, map_family_at's order, then the health families) appended to b.
 * 0 or -ENOSPC / -EINVAL.
 */
int otlp_names_doc(struct buf *b);

#endif
