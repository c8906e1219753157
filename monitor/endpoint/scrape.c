/* SPDX-License-Identifier: MIT */
/*
 * HTTP(S) scrapes on the event loop with libcurl's multi interface,
 * libcurl loaded with dlopen; see scrape.h for why.
 *
 * libcurl drives the transfer through two callbacks: its socket callback
 * says which descriptor to wait on for what (a loop watch each), its timer
 * callback when to call it back (one loop timer). Every loop callback hands
 * the event to curl_multi_socket_action and then reads what finished.
 */
#include "scrape.h"
#include "../../common/http.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../core/loop.h"

#include <errno.h>
#include <poll.h>
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

/* One descriptor libcurl waits on. */
struct sock {
	struct loop_watch w;
	struct scrape *s;
	curl_socket_t fd;
	struct sock *next;        /* the scrape's list: freed with it if libcurl never says REMOVE */
};

struct scrape {
	struct loop *loop;
	struct http_curl api;     /* libcurl, loaded */
	CURLM *multi;
	struct http_client cl;    /* the easy handle, reused so the connection stays open */
	struct loop_timer timer;
	struct sock *socks;       /* the descriptors being watched */
	int running;              /* a transfer is in the multi handle */
	scrape_done_cb cb;
	void *data;
	char error[512];
	struct scrape_result res;
};

static void check_done(struct scrape *s);

static void on_sock(struct loop_watch *w, short revents)
{
	struct sock *k = w->data;
	struct scrape *s = k->s; /* k may be freed inside socket_action (CURL_POLL_REMOVE) */
	int flags = 0, n;

	if (revents & POLLIN)
		flags |= CURL_CSELECT_IN;
	if (revents & POLLOUT)
		flags |= CURL_CSELECT_OUT;
	if (revents & (POLLERR | POLLHUP))
		flags |= CURL_CSELECT_ERR;
	s->api.multi_socket_action(s->multi, k->fd, flags, &n);
	check_done(s);
}

/* libcurl's CURLMOPT_SOCKETFUNCTION: wait on fd for what, or stop. */
static int sock_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	struct scrape *s = userp;
	struct sock *k = socketp;
	short ev = 0;

	(void)easy;
	if (what == CURL_POLL_REMOVE) {
		if (k) {
			struct sock **pp = &s->socks;

			while (*pp && *pp != k)
				pp = &(*pp)->next;
			if (*pp)
				*pp = k->next;
			loop_watch_stop(s->loop, &k->w);
			s->api.multi_assign(s->multi, fd, NULL);
			free(k);
		}
		return 0;
	}
	if (!k) {
		k = xcalloc(1, sizeof(*k));
		k->s = s;
		k->fd = fd;
		k->next = s->socks;
		s->socks = k;
		s->api.multi_assign(s->multi, fd, k);
	}
	if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
		ev |= POLLIN;
	if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
		ev |= POLLOUT;
	loop_watch_start(s->loop, &k->w, fd, ev, on_sock, k);
	return 0;
}

static void on_timer(struct loop_timer *t)
{
	struct scrape *s = t->data;
	int n;

	s->api.multi_socket_action(s->multi, CURL_SOCKET_TIMEOUT, 0, &n);
	check_done(s);
}

/* libcurl's CURLMOPT_TIMERFUNCTION: call back in ms milliseconds (-1: never). */
static int timer_cb(CURLM *multi, long ms, void *userp)
{
	struct scrape *s = userp;

	(void)multi;
	loop_timer_stop(s->loop, &s->timer);
	if (ms >= 0)
		loop_timer_start(s->loop, &s->timer, clock_mono_ns() + ms * NS_PER_MS, on_timer, s);
	return 0;
}

int scrape_new(struct loop *loop, struct scrape **out, char *err, size_t errsz)
{
	struct scrape *s = xcalloc(1, sizeof(*s));
	int rc;

	*out = NULL;
	s->loop = loop;
	if ((rc = http_curl_load(&s->api, err, errsz))) {
		free(s);
		return rc;
	}
	if ((rc = http_client_init(&s->cl, &s->api, err, errsz)) || !(s->multi = s->api.multi_init())) {
		snprintf(err, errsz, "libcurl: cannot make a handle");
		scrape_free(s);
		return -ENOMEM;
	}
	s->api.multi_setopt(s->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
	s->api.multi_setopt(s->multi, CURLMOPT_SOCKETDATA, s);
	s->api.multi_setopt(s->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	s->api.multi_setopt(s->multi, CURLMOPT_TIMERDATA, s);
	s->api.multi_setopt(s->multi, CURLMOPT_MAXCONNECTS, 1L); /* one connection per endpoint */
	*out = s;
	return 0;
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
	int rc;

	if (s->running) {
		snprintf(err, errsz, "a scrape is still running");
		return -EBUSY;
	}
	if (scrape_url_parse(o->url, &u, &why)) {
		snprintf(err, errsz, "%s", why);
		return -EINVAL;
	}
	if ((rc = http_setup(&s->cl, &ho, err, errsz)))
		return rc;
	s->error[0] = '\0';
	memset(&s->res, 0, sizeof(s->res));
	s->res.error = s->error;
	s->res.body = "";
	s->res.started_ns = clock_mono_ns();
	s->cb = cb;
	s->data = data;
	if (s->api.multi_add_handle(s->multi, s->cl.easy) != CURLM_OK) {
		snprintf(err, errsz, "libcurl: cannot start the transfer");
		return -EIO;
	}
	s->running = 1;
	return 0;
}

/* Read what libcurl finished: the transfer's result, then the owner's callback. */
static void check_done(struct scrape *s)
{
	CURLMsg *msg;
	int left;

	while ((msg = s->api.multi_info_read(s->multi, &left))) {
		struct http_result r;

		if (msg->msg != CURLMSG_DONE || msg->easy_handle != s->cl.easy)
			continue;
		http_finish(&s->cl, msg->data.result, &r);
		s->api.multi_remove_handle(s->multi, s->cl.easy); /* the connection stays in the cache when it can */
		s->running = 0;
		if (r.over)
			snprintf(s->error, sizeof(s->error), "body over %zu bytes (max_body_bytes)", s->cl.max_body);
		else if (r.error[0])
			snprintf(s->error, sizeof(s->error), "%s", r.error);
		else if (r.status < 200 || r.status > 299)
			snprintf(s->error, sizeof(s->error), "HTTP %ld", r.status);
		s->res.http_code = r.status;
		s->res.body = r.body;
		s->res.len = r.len;
		s->res.first_byte_ns = s->res.started_ns + r.first_byte_us * 1000;
		if (s->cb)
			s->cb(s, s->data);
		return; /* one transfer per scrape object */
	}
}

int scrape_busy(const struct scrape *s)
{
	return s->running;
}

size_t scrape_received(const struct scrape *s)
{
	return s->running ? s->cl.body.len : 0;
}

void scrape_cancel(struct scrape *s)
{
	if (!s || !s->running)
		return;
	/* Removing a transfer mid-way closes its connection; the socket callback stops the watches. */
	s->api.multi_remove_handle(s->multi, s->cl.easy);
	s->running = 0;
	loop_timer_stop(s->loop, &s->timer);
}

const struct scrape_result *scrape_result(const struct scrape *s)
{
	return &s->res;
}

void scrape_free(struct scrape *s)
{
	if (!s)
		return;
	scrape_cancel(s);
	http_client_free(&s->cl);
	if (s->multi)
		s->api.multi_cleanup(s->multi); /* closes the cached connection: the socket callback frees its watch */
	loop_timer_stop(s->loop, &s->timer);
	while (s->socks) { /* what libcurl closed without a CURL_POLL_REMOVE */
		struct sock *k = s->socks;

		s->socks = k->next;
		loop_watch_stop(s->loop, &k->w);
		free(k);
	}
	if (s->api.global_cleanup)
		s->api.global_cleanup();
	free(s);
}
