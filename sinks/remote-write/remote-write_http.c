/* SPDX-License-Identifier: MIT */
/*
 * The remote write transport; see remote-write_http.h.
 */
#include "remote-write_http.h"

#include "../../common/log.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define RESP_CAP 4096    /* bytes of an answer kept for messages */
#define SECRET_MAX 65536 /* bytes of a token or password file */

enum rw_outcome rw_classify(long status)
{
	if (status >= 200 && status < 300)
		return RW_SENT;
	if (status == 0 || status == 429 || status >= 500)
		return RW_RETRY;
	return RW_DROP;
}

int64_t rw_retry_after_ms(const char *v, int64_t now_ms)
{
	char *end;
	long long s;
	time_t t;

	while (*v == ' ' || *v == '\t')
		v++;
	if (!*v)
		return -1;
	if (isdigit((unsigned char)*v)) {
		errno = 0;
		s = strtoll(v, &end, 10);
		while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
			end++;
		if (errno || *end)
			return -1;
		return s > 3600 ? 3600 * 1000LL : s * 1000LL;
	}
	t = curl_getdate(v, NULL);
	if (t == (time_t)-1)
		return -1;
	s = (long long)t * 1000 - now_ms;
	return s < 0 ? 0 : s > 3600 * 1000LL ? 3600 * 1000LL : s;
}

int64_t rw_backoff_ms(int64_t min_ms, int64_t max_ms, unsigned attempt, unsigned *seed)
{
	int64_t d = min_ms;

	for (unsigned i = 1; i < attempt && d < max_ms; i++)
		d *= 2;
	if (d > max_ms)
		d = max_ms;
	if (d < 2)
		return d;
	return d / 2 + (int64_t)(rand_r(seed) % (unsigned)(d - d / 2 + 1));
}

/* A secret from its file, trailing white space removed. 0 or -errno. */
static int read_secret(const char *path, char *dst, size_t size)
{
	ssize_t n = read_regular_file(path, dst, size);

	if (n < 0)
		return (int)n;
	while (n > 0 && isspace((unsigned char)dst[n - 1]))
		n--;
	dst[n] = '\0';
	return 0;
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	struct buf *b = ud;
	size_t len = sz * n;

	if (b->len < b->cap - 1)
		buf_add(b, p, len < b->cap - 1 - b->len ? len : b->cap - 1 - b->len);
	return len;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
	struct rw_http *h = ud;
	size_t len = sz * n;

	if (len > 12 && !strncasecmp(p, "Retry-After:", 12)) {
		size_t k = len - 12 < sizeof(h->retry_after) - 1 ? len - 12 : sizeof(h->retry_after) - 1;

		memcpy(h->retry_after, p + 12, k);
		h->retry_after[k] = '\0';
	}
	return len;
}

/*
 * Every connection closes with a reset (SO_LINGER 0): a request abandoned
 * after a timeout (a link down) must not stay in the kernel's send buffer
 * and reach the receiver after its retry and the requests that follow,
 * where its samples would be out of order.
 */
static int on_socket(void *ud, curl_socket_t fd, curlsocktype purpose)
{
	struct linger l = { 1, 0 };

	(void)ud;
	if (purpose == CURLSOCKTYPE_IPCXN)
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	return CURL_SOCKOPT_OK;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct rw_http *h = ud;

	(void)dt, (void)dn, (void)ut, (void)un;
	return h->abort_now && h->abort_now(h->abort_ud);
}

int rw_http_init(struct rw_http *h, const struct rw_http_opts *o, char *err, size_t errsz)
{
	struct curl_slist *hl = NULL;
	char *secret = xmalloc(SECRET_MAX);
	int rc = 0;

	memset(h, 0, sizeof(*h));
	h->o = *o;
	buf_init(&h->resp, RESP_CAP);
	hl = curl_slist_append(hl, "Content-Type: application/x-protobuf");
	hl = curl_slist_append(hl, "Content-Encoding: snappy");
	hl = curl_slist_append(hl, "X-Prometheus-Remote-Write-Version: 0.1.0");
	hl = curl_slist_append(hl, "User-Agent: accel-remote-write/" ACCEL_VERSION);
	hl = curl_slist_append(hl, "Expect:");
	for (size_t i = 0; i < o->nheaders; i++) {
		const char *c = strchr(o->headers[i], ':');

		if (!c || c == o->headers[i] || strpbrk(o->headers[i], "\r\n")) {
			snprintf(err, errsz, "--header \"%s\": expected \"Name: value\"", o->headers[i]);
			rc = -EINVAL;
			goto out;
		}
		hl = curl_slist_append(hl, o->headers[i]);
	}
	/* The files are read now so that a wrong path is a configuration error, and again at each request. */
	if (o->bearer_file && (rc = read_secret(o->bearer_file, secret, SECRET_MAX))) {
		snprintf(err, errsz, "--bearer-token-file %s: %s", o->bearer_file, strerror(-rc));
		goto out;
	}
	if (o->basic_pass_file && (rc = read_secret(o->basic_pass_file, secret, SECRET_MAX))) {
		snprintf(err, errsz, "--basic-auth-password-file %s: %s", o->basic_pass_file, strerror(-rc));
		goto out;
	}
	h->curl = curl_easy_init();
	if (!h->curl) {
		snprintf(err, errsz, "cannot start libcurl");
		rc = -ENOMEM;
		goto out;
	}
out:
	h->hl = hl;
	memset(secret, 0, SECRET_MAX);
	free(secret);
	return rc;
}

void rw_http_free(struct rw_http *h)
{
	if (h->curl)
		curl_easy_cleanup(h->curl);
	curl_slist_free_all(h->hl);
	buf_free(&h->resp);
	memset(h, 0, sizeof(*h));
}

void rw_http_send(struct rw_http *h, const void *body, size_t len, struct rw_reply *r)
{
	CURL *c = h->curl;
	struct curl_slist *hl = h->hl, *extra = NULL;
	char ebuf[CURL_ERROR_SIZE] = "", *secret = NULL, q[LOG_QUOTE_BUF];
	CURLcode cc;
	long status = 0;

	memset(r, 0, sizeof(*r));
	r->retry_after_ms = -1;
	buf_reset(&h->resp);
	h->retry_after[0] = '\0';
	if (h->o.bearer_file || h->o.basic_pass_file) {
		secret = xmalloc(SECRET_MAX + 32);
		if (h->o.bearer_file) {
			memcpy(secret, "Authorization: Bearer ", 22);
			if (read_secret(h->o.bearer_file, secret + 22, SECRET_MAX)) {
				log_warn("remote-write: --bearer-token-file %s cannot be read now; sending without it",
					 h->o.bearer_file);
			} else {
				/* A header list of its own for this request: the fixed ones, then the token. */
				for (struct curl_slist *p = h->hl; p; p = p->next)
					extra = curl_slist_append(extra, p->data);
				extra = curl_slist_append(extra, secret);
				hl = extra;
			}
		} else if (read_secret(h->o.basic_pass_file, secret, SECRET_MAX)) {
			log_warn("remote-write: --basic-auth-password-file %s cannot be read now", h->o.basic_pass_file);
		} else {
			curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
			curl_easy_setopt(c, CURLOPT_USERNAME, h->o.basic_user ? h->o.basic_user : "");
			curl_easy_setopt(c, CURLOPT_PASSWORD, secret);
		}
	}
	curl_easy_setopt(c, CURLOPT_URL, h->o.url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &h->resp);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)h->o.timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(h->o.timeout_ms < 10000 ? h->o.timeout_ms : 10000));
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, h);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_SOCKOPTFUNCTION, on_socket);
	if (h->o.ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, h->o.ca_file);
	if (h->o.cert_file)
		curl_easy_setopt(c, CURLOPT_SSLCERT, h->o.cert_file);
	if (h->o.key_file)
		curl_easy_setopt(c, CURLOPT_SSLKEY, h->o.key_file);
	if (h->o.insecure) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	cc = curl_easy_perform(c);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(c, CURLOPT_PASSWORD, NULL);
	curl_slist_free_all(extra);
	if (secret) {
		memset(secret, 0, SECRET_MAX + 32);
		free(secret);
	}
	if (cc != CURLE_OK) {
		r->outcome = RW_RETRY;
		snprintf(r->detail, sizeof(r->detail), "%s", ebuf[0] ? ebuf : curl_easy_strerror(cc));
		return;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	r->status = status;
	r->outcome = rw_classify(status);
	if (h->retry_after[0])
		r->retry_after_ms = rw_retry_after_ms(h->retry_after, (int64_t)time(NULL) * 1000);
	log_quote(q, sizeof(q), h->resp.data ? h->resp.data : "", h->resp.len);
	snprintf(r->detail, sizeof(r->detail), "HTTP %ld%s%s", status, h->resp.len ? ": " : "", h->resp.len ? q : "");
}
