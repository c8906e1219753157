/* SPDX-License-Identifier: MIT */
/*
 * PutMetricData over libcurl; see cloudwatch_http.h.
 *
 * libcurl 7.88.1's SigV4 was checked against botocore for POST form bodies,
 * with and without a session token. Two of its bugs shape this file: it
 * signs GET query strings unsorted (so everything is a POST), and an empty
 * header value breaks the signature (so the token header is only ever sent
 * with a value).
 */
#include "cloudwatch_http.h"
#include "../../common/log.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#define RESP_MAX (64u << 10)

void cw_http_default_endpoint(const char *region, char *dst, size_t size)
{
	snprintf(dst, size, "https://monitoring.%s.amazonaws.com%s", region, !strncmp(region, "cn-", 3) ? ".cn" : "");
}

int cw_http_init(struct cw_http *t, const char *url, const char *region, struct cw_creds *creds)
{
	memset(t, 0, sizeof(*t));
	t->curl = curl_easy_init();
	if (!t->curl)
		return -ENOMEM;
	snprintf(t->url, sizeof(t->url), "%s", url);
	snprintf(t->sigv4, sizeof(t->sigv4), "aws:amz:%s:monitoring", region);
	t->creds = creds;
	t->gzip = 1;
	t->timeout_ms = 30000;
	t->connect_timeout_ms = 10000;
	buf_init(&t->resp, RESP_MAX);
	buf_init(&t->zbody, CW_MAX_BODY + 65536);
	return 0;
}

void cw_http_free(struct cw_http *t)
{
	if (t->curl)
		curl_easy_cleanup(t->curl);
	buf_free(&t->resp);
	buf_free(&t->zbody);
	t->curl = NULL;
}

int cw_gzip(const void *src, size_t len, struct buf *dst)
{
	z_stream z;
	unsigned char out[16384];
	int rc, flush;

	buf_reset(dst);
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)(uintptr_t)src;
	z.avail_in = (uInt)len;
	do {
		flush = Z_FINISH;
		z.next_out = out;
		z.avail_out = sizeof(out);
		rc = deflate(&z, flush);
		if (rc == Z_STREAM_ERROR || buf_add(dst, out, sizeof(out) - z.avail_out)) {
			deflateEnd(&z);
			return -ENOSPC;
		}
	} while (rc != Z_STREAM_END);
	deflateEnd(&z);
	return 0;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct buf *b = ud;

	/* Keep what fits of an over-long answer: only its start matters. */
	buf_add(b, p, size * n < b->cap - b->len ? size * n : b->cap - b->len);
	return size * n;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct cw_http *t = ud;

	(void)dt, (void)dn, (void)ut, (void)un;
	return t->abort_now && t->abort_now(t->abort_ud);
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
	CURL *h = t->curl;
	struct curl_slist *hl = NULL;
	char ebuf[CURL_ERROR_SIZE] = "", tok[sizeof(t->creds->token) + 32];
	const struct buf *payload = body;
	CURLcode cc;
	long status = 0;

	(void)ndatums;
	memset(r, 0, sizeof(*r));
	buf_reset(&t->resp);
	if (t->gzip && body->len >= CW_GZIP_MIN && cw_gzip(body->data, body->len, &t->zbody) == 0 &&
	    t->zbody.len < body->len) {
		payload = &t->zbody;
		hl = curl_slist_append(hl, "Content-Encoding: gzip");
		t->gzipped++;
	}
	hl = curl_slist_append(hl, "Content-Type: application/x-www-form-urlencoded; charset=utf-8");
	if (t->creds->token[0]) {
		snprintf(tok, sizeof(tok), "X-Amz-Security-Token: %s", t->creds->token);
		hl = curl_slist_append(hl, tok);
	}
	curl_easy_setopt(h, CURLOPT_URL, t->url);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload->data);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)payload->len);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(h, CURLOPT_AWS_SIGV4, t->sigv4[0] ? t->sigv4 : NULL); /* "" only in the benchmark */
	curl_easy_setopt(h, CURLOPT_USERNAME, t->creds->key);
	curl_easy_setopt(h, CURLOPT_PASSWORD, t->creds->secret);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "accel-cloudwatch/" ACCEL_VERSION);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &t->resp);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)t->timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)t->connect_timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, t);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	cc = curl_easy_perform(h);
	/* The token's copy on the stack is a secret too. */
	memset(tok, 0, sizeof(tok));
	curl_slist_free_all(hl);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	if (cc != CURLE_OK) {
		r->outcome = CW_RETRY;
		snprintf(r->detail, sizeof(r->detail), "%s: %s", t->url, ebuf[0] ? ebuf : curl_easy_strerror(cc));
		return 0;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	r->status = status;
	cw_parse_error(t->resp.data, t->resp.len, &r->err);
	r->outcome = cw_http_classify(status, &r->err);
	if (r->err.code[0])
		snprintf(r->detail, sizeof(r->detail), "HTTP %ld %s: %s", status, r->err.code, r->err.message);
	else
		snprintf(r->detail, sizeof(r->detail), "HTTP %ld from %s", status, t->url);
	return 0;
}
