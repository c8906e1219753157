/* SPDX-License-Identifier: MIT */
/*
 * The remote write transport; see remote-write_http.h.
 */
#include "remote-write_http.h"

#include "../../common/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESP_CAP 4096    /* bytes of an answer kept for messages */

enum rw_outcome rw_classify(long status)
{
	if (status >= 200 && status < 300)
		return RW_SENT;
	if (status == 0 || status == 429 || status >= 500)
		return RW_RETRY;
	return RW_DROP;
}

/* The protocol's headers, sent with every request. */
static const char *const fixed_headers[] = {
	"Content-Type: application/x-protobuf",
	"Content-Encoding: snappy",
	"X-Prometheus-Remote-Write-Version: 0.1.0",
	"Expect:", /* no 100-continue round trip for a large request */
};

/* The options of every request (the body aside), from the sink's. */
static void request_opts(const struct rw_http *h, struct http_opts *ho)
{
	*ho = (struct http_opts){ .url = h->o.url, .headers = (const char *const *)h->hl, .nheaders = h->nhl,
				  .user_agent = "accel-remote-write/" ACCEL_VERSION, .timeout_ms = h->o.timeout_ms,
				  .connect_timeout_ms = h->o.timeout_ms < 10000 ? h->o.timeout_ms : 10000,
				  .max_body = RESP_CAP, .keep_head = 1, .reset_on_close = 1,
				  .ca_file = h->o.ca_file, .cert_file = h->o.cert_file, .key_file = h->o.key_file,
				  .insecure = h->o.insecure, .bearer_token_file = h->o.bearer_file,
				  .bearer_what = "--bearer-token-file", .password_file = h->o.basic_pass_file,
				  .password_what = "--basic-auth-password-file", .abort_now = h->abort_now,
				  .abort_ud = h->abort_ud };
	if (h->o.basic_pass_file)
		ho->username = h->o.basic_user ? h->o.basic_user : "";
}

int rw_http_init(struct rw_http *h, const struct rw_http_opts *o, char *err, size_t errsz)
{
	struct http_opts ho;
	const char *why;
	int rc;

	memset(h, 0, sizeof(*h));
	h->o = *o;
	h->hl = xcalloc(ARRAY_SIZE(fixed_headers) + o->nheaders, sizeof(*h->hl));
	for (size_t i = 0; i < ARRAY_SIZE(fixed_headers); i++)
		h->hl[h->nhl++] = fixed_headers[i];
	for (size_t i = 0; i < o->nheaders; i++) {
		if (http_header_check(o->headers[i], &why)) {
			snprintf(err, errsz, "--header \"%s\": expected \"Name: value\"", o->headers[i]);
			return -EINVAL;
		}
		h->hl[h->nhl++] = o->headers[i];
	}
	if ((rc = http_client_init(&h->cl, http_curl_linked(), err, errsz)))
		return rc;
	/* The files are read now so that a wrong path is a configuration error, and again at each request. */
	request_opts(h, &ho);
	ho.abort_now = NULL;
	return http_setup(&h->cl, &ho, err, errsz);
}

void rw_http_free(struct rw_http *h)
{
	http_client_free(&h->cl);
	free(h->hl);
	memset(h, 0, sizeof(*h));
}

void rw_http_send(struct rw_http *h, const void *body, size_t len, struct rw_reply *r)
{
	struct http_opts ho;
	struct http_result res;
	char q[LOG_QUOTE_BUF];

	memset(r, 0, sizeof(*r));
	r->retry_after_ms = -1;
	request_opts(h, &ho);
	ho.body = body;
	ho.body_len = len;
	if (http_setup(&h->cl, &ho, r->detail, sizeof(r->detail))) {
		r->outcome = RW_RETRY; /* nothing sent: the file may be fixed before the next try */
		return;
	}
	http_perform(&h->cl, &res);
	if (res.rc != CURLE_OK) {
		r->outcome = RW_RETRY;
		snprintf(r->detail, sizeof(r->detail), "%s", res.detail);
		return;
	}
	r->status = res.status;
	r->outcome = rw_classify(res.status);
	r->retry_after_ms = res.retry_after_ms;
	log_quote(q, sizeof(q), res.body, res.len);
	snprintf(r->detail, sizeof(r->detail), "HTTP %ld%s%s", res.status, res.len ? ": " : "", res.len ? q : "");
}
