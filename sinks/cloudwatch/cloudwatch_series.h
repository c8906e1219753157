/* SPDX-License-Identifier: MIT */
/*
 * The unit accel-cloudwatch moves around: a datum is one value of one
 * CloudWatch metric at one time. What a datum is "of" (its metric name,
 * unit and dimensions) is a series, shared by every datum of that metric so
 * that an hour of queued data costs 24 bytes a datum rather than a copy of
 * its names. Series carry their names both raw (for EMF and messages) and
 * form-encoded (for the PutMetricData body), computed once.
 *
 * Ownership: a series is reference-counted; each queued or in-flight datum
 * holds one reference (see cloudwatch_queue.h, which interns them).
 */
#ifndef ACCEL_CLOUDWATCH_SERIES_H
#define ACCEL_CLOUDWATCH_SERIES_H

#include <stddef.h>
#include <stdint.h>

#define CW_MAX_DIMS 30          /* CloudWatch's limit per datum */
#define CW_MAX_NAME 255         /* metric and dimension names, bytes */
#define CW_MAX_DIM_VALUE 1024   /* dimension values, bytes */

struct cw_dim {
	const char *name;
	const char *value;
};

struct cw_series {
	char *name;              /* MetricName */
	const char *unit;        /* a StandardUnit (static string) */
	size_t ndims;
	struct cw_dim dims[CW_MAX_DIMS]; /* point into strs */
	char *enc_name;          /* form-encoded MetricName */
	char *enc_dims[CW_MAX_DIMS][2]; /* form-encoded name and value, point into strs */
	char *strs;              /* one allocation holding every string above */
	char *key;               /* identity: name, unit and dims, NUL-separated */
	size_t keylen;
	uint64_t hash;
	uint64_t refs;           /* queued and in-flight datums */
	struct cw_series *next;  /* hash chain */
};

struct cw_datum {
	struct cw_series *series; /* one reference held */
	double value;
	int64_t ts_ms;            /* unix milliseconds */
};

/*
 * A series before interning: what the mapping produces. Strings are
 * borrowed from the caller.
 */
struct cw_point {
	const char *name;
	const char *unit;
	size_t ndims;
	struct cw_dim dims[CW_MAX_DIMS];
	double value;
	int64_t ts_ms;
};

/* Build the identity key of a point into dst (cap bytes); returns its length, 0 when it does not fit. */
size_t cw_point_key(const struct cw_point *p, char *dst, size_t cap);

/* A new series for p (refs 0), or NULL when a name does not fit the limits above. */
struct cw_series *cw_series_new(const struct cw_point *p);
void cw_series_free(struct cw_series *s);

#endif
