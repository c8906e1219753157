/* SPDX-License-Identifier: MIT */
/*
 * Endpoint scrapes on the producer's loop (http_async.h); see scrape.h.
 */
#include "scrape.h"
#include "../http/http_async.h"
#include "../../common/timeutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the URL --------------------------------------------------------------------------------- */

int scrape_url_parse(const char *url, struct scrape_url *u, const char **why)
{
	const char *p, *end, *host_end;
	size_t hlen;

	memset(u, 0, sizeof(*u));
	if (!strncmp(url, "http://", 7)) {
		p = url + 7;
	} else if (!strncmp(url, "https://", 8)) {
		p = url + 8;
		u->https = 1;
	} else {
		*why = "expected http://HOST[:PORT]/PATH or https://...";
		return -EINVAL;
	}
	end = p + strcspn(p, "/?#");
	u->path = end;
	if (memchr(p, '@', (size_t)(end - p))) {
		*why = "credentials in the URL are not accepted (use basic_auth with a password_file)";
		return -EINVAL;
	}
	if (*p == '[') { /* an IPv6 literal */
		host_end = memchr(p, ']', (size_t)(end - p));
		if (!host_end) {
			*why = "unterminated [IPv6 address]";
			return -EINVAL;
		}
		hlen = (size_t)(host_end - p - 1);
		memcpy(u->host, p + 1, hlen < sizeof(u->host) ? hlen : 0);
		p = host_end + 1;
	} else {
		host_end = p + strcspn(p, ":/?#");
		hlen = (size_t)(host_end - p);
		if (hlen < sizeof(u->host))
			memcpy(u->host, p, hlen);
		p = host_end;
	}
	if (hlen == 0 || hlen >= sizeof(u->host) || strspn(u->host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
								  "0123456789.-_:%") != hlen) {
		*why = hlen ? "invalid host" : "no host";
		return -EINVAL;
	}
	u->port = u->https ? 443 : 80;
	if (p < end && *p == ':') {
		unsigned long port = 0;
		const char *d = p + 1;

		if (d == end) {
			*why = "empty port";
			return -EINVAL;
		}
		for (; d < end; d++) {
			if (*d < '0' || *d > '9' || (port = port * 10 + (unsigned)(*d - '0')) > 65535) {
				*why = "invalid port (1-65535)";
				return -EINVAL;
			}
		}
		if (port == 0) {
			*why = "invalid port (1-65535)";
			return -EINVAL;
		}
		u->port = (unsigned)port;
	} else if (p != end) {
		*why = "invalid host";
		return -EINVAL;
	}
	for (const char *c = url; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f) {
			*why = "a space or control character in the URL";
			return -EINVAL;
		}
	return 0;
}

/* ---- the transfer ---------------------------------------------------------------------------- */

struct scrape {
	struct http_async *http;  /* borrowed */
	unsigned conn;            /* this endpoint's connection */
	struct http_call call;
	scrape_done_cb cb;
	void *data;
	size_t max_body;
	char error[512];
	struct scrape_result res;
};

int scrape_new(struct http_async *http, struct scrape **out, char *err, size_t errsz)
{
	struct scrape *s = xcalloc(1, sizeof(*s));

	(void)err;
	(void)errsz;
	s->http = http;
	s->conn = http_async_conn(http);
	http_call_init(&s->call, 0);
	*out = s;
	return 0;
}

/* The transfer ended: its result, then the owner's callback. */
static void on_done(struct http_call *c, void *data)
{
	struct scrape *s = data;

	if (c->over)
		snprintf(s->error, sizeof(s->error), "body over %zu bytes (max_body_bytes)", s->max_body);
	else if (c->error[0])
		snprintf(s->error, sizeof(s->error), "%s", c->error);
	else if (c->status < 200 || c->status > 299)
		snprintf(s->error, sizeof(s->error), "HTTP %ld", c->status);
	s->res.http_code = c->status;
	s->res.body = c->body.data ? c->body.data : "";
	s->res.len = c->body.len;
	s->res.first_byte_ns = c->first_byte_ns;
	if (s->cb)
		s->cb(s, s->data);
}

int scrape_start(struct scrape *s, const struct scrape_opts *o, int64_t timeout_ns, scrape_done_cb cb, void *data,
		 char *err, size_t errsz)
{
	static const char *const accept[] = { "Accept: text/plain;version=0.0.4;q=1,"
					      "application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1" };
	int64_t ms = (timeout_ns + NS_PER_MS - 1) / NS_PER_MS;
	struct http_opts ho = {
		.url = o->url, .headers = accept, .nheaders = 1, .user_agent = "accel-monitor/" ACCEL_VERSION,
		.timeout_ms = ms > 0 ? ms : 1, .max_body = o->max_body, .decode = 1,
		.direct = 1, /* as Prometheus: the environment's proxy is not used */
		.ca_file = o->ca_file, .cert_file = o->cert_file, .key_file = o->key_file,
		.server_name = o->server_name, .insecure = o->insecure,
		.bearer_token_file = o->bearer_token_file, .bearer_what = "bearer_token_file",
		.username = o->username, .password_file = o->password_file, .password_what = "basic_auth password_file",
	};
	struct scrape_url u;
	const char *why;

	if (http_call_running(&s->call)) {
		snprintf(err, errsz, "a scrape is still running");
		return -EBUSY;
	}
	if (scrape_url_parse(o->url, &u, &why)) {
		snprintf(err, errsz, "%s", why);
		return -EINVAL;
	}
	s->error[0] = '\0';
	s->max_body = o->max_body;
	memset(&s->res, 0, sizeof(s->res));
	s->res.error = s->error;
	s->res.body = "";
	s->res.started_ns = clock_mono_ns();
	s->cb = cb;
	s->data = data;
	s->call.body.cap = o->max_body; /* the answer is the body: as much as may be read */
	return http_call_start(s->http, &s->call, s->conn, &ho, on_done, s);
}

int scrape_busy(const struct scrape *s)
{
	return http_call_running(&s->call);
}

int64_t scrape_loop_cpu_ns(const struct scrape *s)
{
	return s->call.loop_cpu_ns;
}

size_t scrape_received(const struct scrape *s)
{
	return http_call_running(&s->call) && s->call.body_begun;
}

void scrape_cancel(struct scrape *s)
{
	if (s)
		http_call_cancel(&s->call); /* its connection is closed */
}

const struct scrape_result *scrape_result(const struct scrape *s)
{
	return &s->res;
}

void scrape_free(struct scrape *s)
{
	if (!s)
		return;
	http_call_free(&s->call);
	http_async_conn_close(s->http, s->conn);
	free(s);
}
