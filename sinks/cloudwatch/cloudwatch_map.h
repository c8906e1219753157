/* SPDX-License-Identifier: MIT */
/*
 * Samples -> CloudWatch datums: metric names, units and dimensions as a
 * CloudWatch user expects them (docs/accel-cloudwatch.md has the table),
 * and the checks that keep a datum CloudWatch would reject out of a batch.
 *
 * The samples come from common/samples.c; nothing here reads a report.
 */
#ifndef ACCEL_CLOUDWATCH_MAP_H
#define ACCEL_CLOUDWATCH_MAP_H

#include "cloudwatch_series.h"
#include "../../common/samples.h"

#include <stddef.h>
#include <stdint.h>

/* Instance-level dimensions --dimensions can choose. */
enum cw_inst_dim {
	CW_DIM_INSTANCE_ID = 1 << 0,
	CW_DIM_INSTANCE_TYPE = 1 << 1,
	CW_DIM_INSTANCE_NAME = 1 << 2,
	CW_DIM_AVAILABILITY_ZONE = 1 << 3,
	CW_DIM_REGION = 1 << 4,
	CW_DIM_SUBNET_ID = 1 << 5,
	CW_DIM_HOST = 1 << 6,
	CW_DIM_PID = 1 << 7,
};

#define CW_MAX_STATIC_DIMS 8

struct cw_map_opts {
	int auto_dims;         /* default: InstanceId, InstanceType on EC2, else Host */
	unsigned dims;         /* enum cw_inst_dim bits when !auto_dims */
	const char *host;      /* the Host dimension's value */
	size_t nstatic;        /* Name=Value dimensions from --dimensions */
	struct cw_dim statics[CW_MAX_STATIC_DIMS];
	int64_t max_age_ms;    /* older datums are dropped (two weeks) */
	int64_t max_ahead_ms;  /* datums further in the future are dropped (two hours) */
};

/*
 * Fill o from a --dimensions value: a comma-separated list of InstanceId,
 * InstanceType, InstanceName, AvailabilityZone, Region, SubnetId, Host,
 * Pid, "auto", "none", or Name=Value. The strings of statics point into
 * spec, which must outlive o. 0, or -EINVAL with err set.
 */
int cw_map_parse_dimensions(char *spec, struct cw_map_opts *o, char *err, size_t errsz);

/* Defaults: auto dimensions, two weeks back, two hours ahead. */
void cw_map_opts_init(struct cw_map_opts *o, const char *host);

enum cw_verdict {
	CW_OK,
	CW_SKIP,      /* a family that is not sent to CloudWatch (instance_info, ...) */
	CW_BAD_VALUE, /* NaN, infinite, or outside what CloudWatch stores */
	CW_TOO_OLD,
	CW_TOO_NEW,
};

/* Scratch space for the strings a point may need (names built, values cleaned). */
struct cw_scratch {
	char family[CW_MAX_NAME + 1]; /* the family's metric name */
	char name[CW_MAX_NAME + 1];
	char vals[CW_MAX_DIMS][CW_MAX_DIM_VALUE + 1];
	char dnames[CW_MAX_DIMS][64];
};

/*
 * Map one sample into p at now_ms. p's strings are borrowed from s, o and
 * sc: use p before the next call. Returns what became of it.
 */
enum cw_verdict cw_map_sample(const struct cw_map_opts *o, const struct sample *s, int64_t now_ms, struct cw_point *p,
			      struct cw_scratch *sc);

/* 0 when CloudWatch accepts v as a Value, else -ERANGE (NaN, +-Inf, |v| > 2^360, 0 < |v| < 2^-360). */
int cw_value_ok(double v);

/*
 * A ratio as the percent CloudWatch shows: the shortest decimal d with
 * d / 100.0 == r (the percent the report held, when the ratio came from
 * one: 0.039599999999999996 -> 3.96), else r * 100. Never rounded to fewer
 * digits than it takes to read back.
 */
double cw_ratio_percent(double r);

/*
 * The metric name and unit a family maps to ("" name: not sent). *name may
 * point into buf (CW_MAX_NAME + 1 bytes, the caller's), *unit is static.
 */
void cw_map_family(const struct family *f, const char **name, const char **unit, char buf[CW_MAX_NAME + 1]);

#endif
