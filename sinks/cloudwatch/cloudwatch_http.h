/* SPDX-License-Identifier: MIT */
/*
 * The PutMetricData transport over the HTTP client (common/http.h): POST /
 * with the form body,
 * signed by libcurl's own SigV4 (CURLOPT_AWS_SIGV4 "aws:amz:REGION:monitoring",
 * the key pair as user and password, the session token as an
 * X-Amz-Security-Token header only when there is one), gzip when it pays,
 * and CloudWatch's answer sorted into the outcomes cloudwatch_deliver.h
 * acts on.
 */
#ifndef ACCEL_CLOUDWATCH_HTTP_H
#define ACCEL_CLOUDWATCH_HTTP_H

#include "cloudwatch_creds.h"
#include "cloudwatch_deliver.h"
#include "../../common/http.h"
#include "../../common/util.h"

#include <stdint.h>

#define CW_GZIP_MIN 10240 /* bytes: the AWS SDKs' request_min_compression_size_bytes */

struct cw_http {
	struct http_client cl;     /* reused so the connection stays open */
	char url[512];
	char sigv4[160];           /* "aws:amz:REGION:monitoring" */
	struct cw_creds *creds;    /* borrowed; the caller refreshes it */
	int gzip;                  /* compress bodies of CW_GZIP_MIN bytes or more when it shrinks them */
	int64_t timeout_ms;        /* whole request */
	int64_t connect_timeout_ms;
	int (*abort_now)(void *ud); /* polled during a transfer: 1 stops it (exit deadline); may be NULL */
	void *abort_ud;
	struct buf zbody;          /* the gzipped body */
	uint64_t gzipped;          /* requests sent compressed */
};

/* "https://monitoring.REGION.amazonaws.com" (".com.cn" for cn- regions) into dst. */
void cw_http_default_endpoint(const char *region, char *dst, size_t size);

/* 0 or -errno. creds is borrowed. */
int cw_http_init(struct cw_http *t, const char *url, const char *region, struct cw_creds *creds);
void cw_http_free(struct cw_http *t);

/* The cw_transport send function; ud is a struct cw_http. */
int cw_http_send(void *ud, const struct buf *body, size_t ndatums, struct cw_reply *r);

/* Sort an HTTP answer into an outcome (exposed for the unit tests). */
enum cw_outcome cw_http_classify(long status, const struct cw_error *e);


#endif
