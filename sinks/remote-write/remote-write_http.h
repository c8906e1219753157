/* SPDX-License-Identifier: MIT */
/*
 * The remote write transport over the HTTP client (common/http.h): POST one snappy-compressed
 * WriteRequest with the protocol's headers (Content-Type
 * application/x-protobuf, Content-Encoding snappy,
 * X-Prometheus-Remote-Write-Version 0.1.0), the options hosted receivers
 * want (TLS with a CA and a client certificate, a bearer token read from
 * its file at each request so a rotated token is picked up, basic auth,
 * custom headers), and the answer sorted as Prometheus's remote write
 * client sorts it: 2xx sent; 5xx, 429 and network errors retried (with the
 * Retry-After the receiver gave); any other status dropped.
 */
#ifndef ACCEL_REMOTE_WRITE_HTTP_H
#define ACCEL_REMOTE_WRITE_HTTP_H

#include "../../common/http.h"
#include "../../common/util.h"

#include <stddef.h>
#include <stdint.h>

enum rw_outcome {
	RW_SENT,  /* 2xx */
	RW_RETRY, /* network error, timeout, 5xx, 429 */
	RW_DROP,  /* any other answer: the data's fault, sending it again cannot help */
};

struct rw_http_opts {
	const char *url;
	const char *ca_file, *cert_file, *key_file; /* NULL: the system's CAs, no client certificate */
	int insecure;                 /* do not verify the server's certificate */
	const char *bearer_file;      /* Authorization: Bearer <the file's content, trimmed> */
	const char *basic_user;       /* with basic_pass_file: basic auth */
	const char *basic_pass_file;
	const char *const *headers;   /* "Name: value", borrowed */
	size_t nheaders;
	int64_t timeout_ms;           /* one request */
};

struct rw_reply {
	enum rw_outcome outcome;
	long status;            /* HTTP status; 0 when none came */
	int64_t retry_after_ms; /* from Retry-After (http_retry_after_ms); -1 when none */
	char detail[320];       /* what happened, for messages (the receiver's answer, quoted) */
};

struct rw_http {
	struct http_client cl; /* reused so the connection stays open */
	struct rw_http_opts o;
	const char **hl;       /* the headers: the protocol's, then --header's (borrowed) */
	size_t nhl;
	int (*abort_now)(void *ud); /* polled during a transfer: 1 stops it; may be NULL */
	void *abort_ud;
};

/*
 * 0, or -errno with err filled: a header that is not "Name: value", a
 * credentials file that cannot be read or holds a control character
 * (http_secret_read).
 */
int rw_http_init(struct rw_http *h, const struct rw_http_opts *o, char *err, size_t errsz);
void rw_http_free(struct rw_http *h);

/*
 * Send one compressed WriteRequest and sort the answer into r. A
 * credentials file that cannot be read now (or holds a control character)
 * sends nothing: RW_RETRY, with the reason in detail.
 */
void rw_http_send(struct rw_http *h, const void *body, size_t len, struct rw_reply *r);

/* The outcome for an HTTP status (0: no answer). */
enum rw_outcome rw_classify(long status);

#endif
