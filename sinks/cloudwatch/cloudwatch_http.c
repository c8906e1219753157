/* SPDX-License-Identifier: MIT */
/*
 * PutMetricData over the HTTP client; see cloudwatch_http.h.
 *
 * libcurl 7.88.1's SigV4 was checked against botocore for POST form bodies,
 * with and without a session token. Two of its bugs shape this file: it
 * signs GET query strings unsorted (so everything is a POST), and an empty
 * header value breaks the signature (so the token header is only ever sent
 * with a value).
 */
#include "cloudwatch_http.h"
#include "../../common/gzip.h"
#include "../../common/log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define RESP_MAX (64u << 10)

void cw_http_default_endpoint(const char *region, char *dst, size_t size)
{
	snprintf(dst, size, "https://monitoring.%s.amazonaws.com%s", region, !strncmp(region, "cn-", 3) ? ".cn" : "");
}

int cw_http_init(struct cw_http *t, const char *url, const char *region, struct cw_creds *creds)
{
	char err[128];

	memset(t, 0, sizeof(*t));
	if (http_client_init(&t->cl, http_curl_linked(), err, sizeof(err)))
		return -ENOMEM;
	snprintf(t->url, sizeof(t->url), "%s", url);
	snprintf(t->sigv4, sizeof(t->sigv4), "aws:amz:%s:monitoring", region);
	t->creds = creds;
	t->gzip = 1;
	t->timeout_ms = 30000;
	t->connect_timeout_ms = 10000;
	buf_init(&t->zbody, CW_MAX_BODY + 65536);
	return 0;
}

void cw_http_free(struct cw_http *t)
{
	http_client_free(&t->cl);
	buf_free(&t->zbody);
}

enum cw_outcome cw_http_classify(long status, const struct cw_error *e)
{
	static const char *const retry_codes[] = {
		"Throttling", "ThrottlingException", "ThrottledException", "RequestThrottled", "RequestLimitExceeded",
		"TooManyRequestsException", "ServiceUnavailable", "InternalFailure", "InternalServiceError",
		"RequestTimeout", "RequestTimeoutException",
	};

	if (status >= 200 && status < 300)
		return CW_SENT;
	for (size_t i = 0; i < ARRAY_SIZE(retry_codes); i++)
		if (!strcmp(e->code, retry_codes[i]))
			return CW_RETRY;
	if (status == 413)
		return CW_TOO_LARGE;
	if (status == 401 || status == 403)
		return CW_AUTH;
	/*
	 * A 400 is about the request. CloudWatch's own "The parameter ... is
	 * invalid" family: find the datum. Anything else 4xx (a wrong endpoint,
	 * a proxy) is not the data's fault: keep it and retry.
	 */
	if (status == 400 && e->code[0] &&
	    (!strcmp(e->code, "InvalidParameterValue") || !strcmp(e->code, "MissingParameter") ||
	     !strcmp(e->code, "InvalidParameterCombination") || !strcmp(e->code, "ValidationError") ||
	     !strcmp(e->code, "InvalidParameter")))
		return CW_REJECTED;
	if (status == 400 && !strcmp(e->code, "ExpiredToken"))
		return CW_AUTH;
	return CW_RETRY;
}

int cw_http_send(void *ud, const struct buf *body, size_t ndatums, struct cw_reply *r)
{
	struct cw_http *t = ud;
	const struct http_curl *api = t->cl.api;
	const char *hdr[3];
	char tok[sizeof(t->creds->token) + 32], err[512];
	const struct buf *payload = body;
	struct http_opts o = { .url = t->url, .headers = hdr, .user_agent = "accel-cloudwatch/" ACCEL_VERSION,
			       .timeout_ms = t->timeout_ms, .connect_timeout_ms = t->connect_timeout_ms,
			       .max_body = RESP_MAX, .keep_head = 1 /* only its start matters */,
			       .abort_now = t->abort_now, .abort_ud = t->abort_ud };
	struct http_result res;

	(void)ndatums;
	memset(r, 0, sizeof(*r));
	if (t->gzip && body->len >= CW_GZIP_MIN && gzip_compress(body->data, body->len, &t->zbody) == 0 &&
	    t->zbody.len < body->len) {
		payload = &t->zbody;
		hdr[o.nheaders++] = "Content-Encoding: gzip";
		t->gzipped++;
	}
	hdr[o.nheaders++] = "Content-Type: application/x-www-form-urlencoded; charset=utf-8";
	if (t->creds->token[0]) {
		snprintf(tok, sizeof(tok), "X-Amz-Security-Token: %s", t->creds->token);
		hdr[o.nheaders++] = tok;
	}
	o.body = payload->data ? payload->data : "";
	o.body_len = payload->len;
	if (http_setup(&t->cl, &o, err, sizeof(err))) {
		/* A token with a control character: refused, never sent (the message does not quote it). */
		memset(tok, 0, sizeof(tok));
		r->outcome = CW_AUTH;
		snprintf(r->detail, sizeof(r->detail), "%s: the session token of %s cannot be sent: a control character "
			 "in it", t->url, t->creds->where);
		return 0;
	}
	memset(tok, 0, sizeof(tok)); /* libcurl has its own copy; ours on the stack is a secret too */
	api->easy_setopt(t->cl.easy, CURLOPT_AWS_SIGV4, t->sigv4[0] ? t->sigv4 : NULL); /* "" only in the benchmark */
	api->easy_setopt(t->cl.easy, CURLOPT_USERNAME, t->creds->key);
	api->easy_setopt(t->cl.easy, CURLOPT_PASSWORD, t->creds->secret);
	http_perform(&t->cl, &res);
	if (res.rc != CURLE_OK) {
		r->outcome = CW_RETRY;
		snprintf(r->detail, sizeof(r->detail), "%s: %s", t->url, res.detail);
		return 0;
	}
	r->status = res.status;
	cw_parse_error(res.body, res.len, &r->err);
	r->outcome = cw_http_classify(res.status, &r->err);
	if (r->err.code[0])
		snprintf(r->detail, sizeof(r->detail), "HTTP %ld %s: %s", res.status, r->err.code, r->err.message);
	else
		snprintf(r->detail, sizeof(r->detail), "HTTP %ld from %s", res.status, t->url);
	return 0;
}
