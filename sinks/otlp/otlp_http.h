/* SPDX-License-Identifier: MIT */
/*
 * accel-otlp's transport: one OTLP/HTTP export over the project's HTTP
 * client (common/http.h). POST the request, gzipped (Content-Encoding:
 * gzip) unless the configuration says none, with the content type of its
 * encoding and the configured headers, TLS with a CA file and a client
 * certificate; and sort the answer the way the OTLP specification says
 * (protocol/otlp.md, "OTLP/HTTP Response"):
 *
 *   - 2xx: sent; its body is an ExportMetricsServiceResponse whose
 *     partial_success says how many points the server rejected and why;
 *   - 429, 502, 503, 504, and no answer at all (a refused or reset
 *     connection, a timeout): retried, after the Retry-After the server
 *     gave (seconds or an HTTP date) when it gave one;
 *   - any other status (400 and the other 4xx, 500, 501, ...): not
 *     retried, the data dropped: the server's google.rpc.Status message
 *     says why (else the body as text, capped and made printable).
 */
#ifndef ACCEL_OTLP_HTTP_H
#define ACCEL_OTLP_HTTP_H

#include "otlp_conf.h"
#include "otlp_enc.h"
#include "../../common/http.h"
#include "../../common/util.h"

#include <stddef.h>
#include <stdint.h>

enum otlp_outcome {
	OTLP_SENT,  /* 2xx */
	OTLP_RETRY, /* no answer, 429, 502, 503, 504 */
	OTLP_DROP,  /* any other status: sending it again cannot help */
};

struct otlp_reply {
	enum otlp_outcome outcome;
	long status;            /* HTTP status; 0 when no answer came */
	int64_t retry_after_ms; /* from Retry-After; -1 when none */
	int64_t rejected;       /* OTLP_SENT: partial_success.rejected_data_points */
	char message[512];      /* the server's own words: partial_success.error_message (OTLP_SENT), the Status
	                           message or the body as text (else); "" when none */
	char detail[640];       /* what happened, for messages: "HTTP 400: <message>", libcurl's error, ... */
};

struct otlp_http {
	struct http_client cl;    /* reused so the connection stays open */
	const struct otlp_conf *conf; /* borrowed */
	const char **hl;          /* the request's headers: the protocol's, then the configured ones */
	size_t nhl;
	struct buf zbody;         /* the gzipped request */
	int (*abort_now)(void *ud); /* polled during a transfer: 1 stops it; may be NULL */
	void *abort_ud;
};

/*
 * Set h up for conf (borrowed until otlp_http_free): the certificate files
 * are read now, so that a bad one is a configuration error. 0, or -errno
 * with err filled.
 */
int otlp_http_init(struct otlp_http *h, const struct otlp_conf *conf, char *err, size_t errsz);
void otlp_http_free(struct otlp_http *h); /* safe on a zeroed or freed one */

/* Send one uncompressed request (body, borrowed) and sort the answer into r. */
void otlp_http_send(struct otlp_http *h, const void *body, size_t len, struct otlp_reply *r);

/* The outcome for an HTTP status (0: no answer). */
enum otlp_outcome otlp_classify(long status);

#endif
