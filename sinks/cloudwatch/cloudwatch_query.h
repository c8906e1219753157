/* SPDX-License-Identifier: MIT */
/*
 * CloudWatch's Query protocol, PutMetricData only: the form body exactly as
 * botocore writes it, and the error document CloudWatch answers with.
 *
 * "Exactly as botocore" means: members in the service model's order
 * (MetricName, Dimensions, Timestamp, Value, Unit, StorageResolution),
 * values form-encoded the way Python's urlencode() does (quote_plus),
 * doubles as Python's repr(float), timestamps as botocore's ISO 8601
 * (microseconds only when there is a fraction). The test receiver
 * re-serializes what it parsed with botocore and compares byte for byte.
 */
#ifndef ACCEL_CLOUDWATCH_QUERY_H
#define ACCEL_CLOUDWATCH_QUERY_H

#include "cloudwatch_series.h"
#include "../../common/util.h"

#include <stddef.h>
#include <stdint.h>

#define CW_MAX_DATUMS 1000         /* per request */
#define CW_MAX_BODY 1000000        /* bytes per request, uncompressed (CloudWatch says 1 MB) */

/* Append s (n bytes) form-encoded: unreserved bytes as they are, ' ' as '+', the rest %XX. 0 or -ENOSPC. */
int cw_form_encode(struct buf *b, const char *s, size_t n);
/* The same into a new string (caller frees). */
char *cw_form_encode_dup(const char *s);

/* Python's repr() of a float: shortest round-trip digits, "1.0", "1e-05", "1.5e+16". */
#define CW_DOUBLE_LEN 32
void cw_format_double(double v, char dst[CW_DOUBLE_LEN]);

/* botocore's timestamp: "2026-11-21T05:30:00Z", or "2026-11-21T05:30:00.123000Z" with a fraction. */
#define CW_TS_LEN 40
void cw_format_ts(int64_t ts_ms, char dst[CW_TS_LEN]);

struct cw_body_opts {
	const char *enc_namespace; /* form-encoded */
	int storage_resolution;    /* 1 or 60; 60 is CloudWatch's default and is not written */
	size_t max_bytes;          /* CW_MAX_BODY unless testing */
	size_t max_datums;         /* CW_MAX_DATUMS unless testing */
};

/*
 * Encode a PutMetricData body into b (reset first) from d[from..n), skipping
 * datums marked in dead (may be NULL). Stops before the datum that would
 * pass max_bytes or max_datums. members[k] receives the index in d of
 * MetricData.member.(k+1); *nmembers their count. Returns the index just
 * past the last datum looked at (== n when everything fitted).
 */
size_t cw_body_build(struct buf *b, const struct cw_body_opts *o, const struct cw_datum *d, size_t from, size_t n,
		     const unsigned char *dead, size_t *members, size_t *nmembers);

/* Append one datum as MetricData.member.<member>. 0 or -ENOSPC (b is left as it was). */
int cw_body_add(struct buf *b, const struct cw_body_opts *o, const struct cw_datum *d, size_t member);

/* What a CloudWatch error document says. */
struct cw_error {
	char code[64];     /* "InvalidParameterValue", "Throttling", ...; "" when absent */
	char message[512];
	long member;       /* N of the first "MetricData.member.N" in the message, else 0 */
};

/* Parse an <ErrorResponse> (or anything: missing parts stay empty). */
void cw_parse_error(const char *body, size_t len, struct cw_error *e);

#endif
