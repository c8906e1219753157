/* SPDX-License-Identifier: MIT */
/*
 * accel-otlp's transport; see otlp_http.h.
 */
#include "otlp_http.h"

#include "../../common/gzip.h"
#include "../../common/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RESP_CAP 16384          /* bytes of an answer kept: a Status or partial_success message, capped */
#define ZBODY_CAP (96u << 20)   /* bytes of a gzipped request: more than any request the queue holds */

enum otlp_outcome otlp_classify(long status)
{
	if (status >= 200 && status < 300)
		return OTLP_SENT;
	if (status == 0 || status == 429 || status == 502 || status == 503 || status == 504)
		return OTLP_RETRY;
	return OTLP_DROP;
}

/* The answer's fields whose values are kept: its content type says how to read its body. */
static const char *const keep_headers[] = { "content-type" };

int otlp_http_init(struct otlp_http *h, const struct otlp_conf *conf, char *err, size_t errsz)
{
	static const char *const ctype[] = { [OTLP_PROTOBUF] = "Content-Type: application/x-protobuf",
					     [OTLP_JSON] = "Content-Type: application/json" };
	struct http_opts ho = { .url = conf->url, .ca_file = conf->ca_file, .cert_file = conf->cert_file,
				.key_file = conf->key_file };
	int rc;

	memset(h, 0, sizeof(*h));
	h->conf = conf;
	h->hl = xcalloc(3 + conf->nheaders, sizeof(*h->hl));
	h->hl[h->nhl++] = ctype[conf->encoding];
	if (conf->gzip)
		h->hl[h->nhl++] = "Content-Encoding: gzip";
	h->hl[h->nhl++] = "Expect:"; /* no 100-continue round trip for a large request */
	for (size_t i = 0; i < conf->nheaders; i++)
		h->hl[h->nhl++] = conf->headers[i];
	buf_init(&h->zbody, ZBODY_CAP);
	if ((rc = http_client_init(&h->cl, http_curl_linked(), err, errsz)))
		return rc;
	ho.headers = h->hl;
	ho.nheaders = h->nhl;
	return http_setup(&h->cl, &ho, err, errsz);
}

void otlp_http_free(struct otlp_http *h)
{
	http_client_free(&h->cl);
	free(h->hl);
	buf_free(&h->zbody);
	memset(h, 0, sizeof(*h));
}

/* How to read the answer's body: by its Content-Type, else as the request was encoded. */
static enum otlp_encoding answer_encoding(const struct otlp_http *h, const struct http_result *res)
{
	char ct[128];

	if (res->kept && http_kept_get(res->kept, "content-type", ct, sizeof(ct)) == 0) {
		if (!strncasecmp(ct, "application/json", 16))
			return OTLP_JSON;
		if (!strncasecmp(ct, "application/x-protobuf", 22) || !strncasecmp(ct, "application/protobuf", 20))
			return OTLP_PROTOBUF;
	}
	return h->conf->encoding;
}

/* The server's words for a 2xx (partial_success) or another status (google.rpc.Status, else the body). */
static void read_answer(struct otlp_http *h, const struct http_result *res, struct otlp_reply *r)
{
	enum otlp_encoding enc = answer_encoding(h, res);
	char q[LOG_QUOTE_BUF];

	if (r->outcome == OTLP_SENT) {
		if (otlp_response_parse(res->body, res->len, enc, &r->rejected, r->message, sizeof(r->message))) {
			r->rejected = 0;
			r->message[0] = 0;
			log_quote(q, sizeof(q), res->body, res->len);
			snprintf(r->detail, sizeof(r->detail), "HTTP %ld with a body that is not an "
				 "ExportMetricsServiceResponse: %s", res->status, q);
			return;
		}
		snprintf(r->detail, sizeof(r->detail), "HTTP %ld", res->status);
		return;
	}
	if (res->len && otlp_status_parse(res->body, res->len, enc, r->message, sizeof(r->message)) == 0) {
		log_quote(q, sizeof(q), r->message, (size_t)-1);
		snprintf(r->message, sizeof(r->message), "%s", q);
	} else if (res->len) {
		log_quote(r->message, sizeof(r->message), res->body, res->len);
	}
	snprintf(r->detail, sizeof(r->detail), "HTTP %ld%s%s", res->status, r->message[0] ? ": " : "", r->message);
}

void otlp_http_send(struct otlp_http *h, const void *body, size_t len, struct otlp_reply *r)
{
	struct http_opts ho = { .url = h->conf->url, .headers = h->hl, .nheaders = h->nhl,
				.user_agent = "accel-otlp/" ACCEL_VERSION, .timeout_ms = h->conf->timeout_ms,
				.connect_timeout_ms = h->conf->timeout_ms < 10000 ? h->conf->timeout_ms : 10000,
				.max_body = RESP_CAP, .keep_head = 1, .reset_on_close = 1, .ca_file = h->conf->ca_file,
				.cert_file = h->conf->cert_file, .key_file = h->conf->key_file,
				.abort_now = h->abort_now, .abort_ud = h->abort_ud, .keep_headers = keep_headers,
				.nkeep_headers = ARRAY_SIZE(keep_headers) };
	struct http_result res;
	int rc;

	memset(r, 0, sizeof(*r));
	r->retry_after_ms = -1;
	ho.body = body;
	ho.body_len = len;
	if (h->conf->gzip) {
		if ((rc = gzip_compress(body, len, &h->zbody))) {
			r->outcome = OTLP_DROP;
			snprintf(r->detail, sizeof(r->detail), "cannot gzip a request of %zu bytes: %s", len, strerror(-rc));
			return;
		}
		ho.body = h->zbody.data;
		ho.body_len = h->zbody.len;
	}
	if (http_setup(&h->cl, &ho, r->detail, sizeof(r->detail))) {
		r->outcome = OTLP_RETRY; /* nothing sent: a file may be fixed before the next try */
		return;
	}
	http_perform(&h->cl, &res);
	if (res.rc != CURLE_OK) {
		r->outcome = OTLP_RETRY;
		snprintf(r->detail, sizeof(r->detail), "%s", res.error[0] ? res.error : res.detail);
		return;
	}
	r->status = res.status;
	r->outcome = otlp_classify(res.status);
	r->retry_after_ms = res.retry_after_ms;
	read_answer(h, &res, r);
}
