/* SPDX-License-Identifier: MIT */
/*
 * The producer's HTTP on its event loop; see http_async.h.
 *
 * Each connection is a multi handle with one easy handle (one request at a
 * time). libcurl drives a transfer through two callbacks: its socket
 * callback says which descriptor to wait on for what (a loop watch each),
 * its timer callback when to call it back (one loop timer per connection).
 * Every loop callback hands the event to curl_multi_socket_action and then
 * reads what finished.
 *
 * The answer's body goes to the call as the client's buffer itself, not a
 * copy: an answer of megabytes is neither doubled nor kept by the
 * connection for its next request. A caller that parses it off the loop
 * (the kubelet's PodList, ECS's answers) takes it with http_call_take_body.
 */
#include "http_async.h"
#include "../core/fdbudget.h"
#include "../core/loop.h"
#include "../../common/log.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct conn;

/* One descriptor libcurl waits on. */
struct sock {
	struct loop_watch w;
	struct conn *k;
	curl_socket_t fd;
	struct sock *next;        /* the connection's list: freed with it if libcurl never says REMOVE */
};

/* One connection: a multi handle, an easy handle, one request at a time. */
struct conn {
	struct http_async *h;
	unsigned id;
	CURLM *multi;
	struct http_client cl;
	struct loop_timer timer;
	struct sock *socks;
	struct http_call *call;   /* the request running; NULL: none */
	size_t fds;               /* descriptors taken from the budget for it */
	struct conn *next;
};

struct http_async {
	struct loop *loop;          /* borrowed */
	struct http_curl api;
	int loaded;                 /* 1: api is filled; -1: it could not be (load_err) */
	char load_err[256];
	struct conn *conns;
	unsigned next_conn;
	uint64_t next_id;
	struct http_call *ended;    /* calls that ended before they started: told from the loop */
	struct loop_timer later;
	struct fd_budget *fdb;      /* borrowed; NULL: none */
};

/* The call has ended: it is no longer running, and its callback is told. */
static void finish(struct http_call *c)
{
	c->id = 0;
	c->cb(c, c->data);
}

/* The answer's body (the client's buffer from) into c, within its cap: moved, from left empty. */
static void take_body(struct http_call *c, struct buf *from)
{
	size_t cap = c->body.cap;

	buf_reset(&c->body);
	if (from->len > cap) {
		if (!c->error[0])
			snprintf(c->error, sizeof(c->error), "the answer is over %zu bytes", cap);
		buf_reset(from);
		return;
	}
	if (!from->data)
		return;
	buf_free(&c->body);
	c->body = *from;
	c->body.cap = cap;
	buf_init(from, 0); /* the next request sets its cap */
}

/* ---- calls that end before they start --------------------------------------------------------------- */

static void on_later(struct loop_timer *t)
{
	struct http_async *h = t->data;

	while (h->ended) {
		struct http_call *c = h->ended;

		h->ended = c->next;
		c->next = NULL;
		finish(c);
	}
}

static void end_later(struct http_async *h, struct http_call *c, const char *error)
{
	snprintf(c->error, sizeof(c->error), "%s", error);
	c->next = h->ended;
	h->ended = c;
	loop_timer_start(h->loop, &h->later, 0, on_later, h);
}

/* ---- connections ----------------------------------------------------------------------------------- */

static void check_done(struct conn *k);

/*
 * Hand an event on fd (CURL_SOCKET_TIMEOUT: the timer) to libcurl. The CPU
 * time it takes on the loop (reading, TLS, decoding into the body) is the
 * running call's: its loop_cpu_ns.
 */
static void socket_action(struct conn *k, curl_socket_t fd, int flags)
{
	struct http_call *c = k->call;
	int64_t cpu0 = clock_thread_cpu_ns();
	int n;

	k->h->api.multi_socket_action(k->multi, fd, flags, &n);
	if (c)
		c->loop_cpu_ns += clock_thread_cpu_ns() - cpu0;
}

static void on_sock(struct loop_watch *w, short revents)
{
	struct sock *s = w->data;
	struct conn *k = s->k; /* s may be freed inside socket_action (CURL_POLL_REMOVE) */
	int flags = 0;

	if (revents & POLLIN)
		flags |= CURL_CSELECT_IN;
	if (revents & POLLOUT)
		flags |= CURL_CSELECT_OUT;
	if (revents & (POLLERR | POLLHUP))
		flags |= CURL_CSELECT_ERR;
	socket_action(k, s->fd, flags);
	check_done(k);
}

/* libcurl's CURLMOPT_SOCKETFUNCTION: wait on fd for what, or stop. */
static int sock_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	struct conn *k = userp;
	struct sock *s = socketp;
	short ev = 0;

	(void)easy;
	if (what == CURL_POLL_REMOVE) {
		if (s) {
			struct sock **pp = &k->socks;

			while (*pp && *pp != s)
				pp = &(*pp)->next;
			if (*pp)
				*pp = s->next;
			loop_watch_stop(k->h->loop, &s->w);
			k->h->api.multi_assign(k->multi, fd, NULL);
			free(s);
		}
		return 0;
	}
	if (!s) {
		s = xcalloc(1, sizeof(*s));
		s->k = k;
		s->fd = fd;
		s->next = k->socks;
		k->socks = s;
		k->h->api.multi_assign(k->multi, fd, s);
	}
	if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
		ev |= POLLIN;
	if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
		ev |= POLLOUT;
	loop_watch_start(k->h->loop, &s->w, fd, ev, on_sock, s);
	return 0;
}

static void on_timer(struct loop_timer *t)
{
	struct conn *k = t->data;

	socket_action(k, CURL_SOCKET_TIMEOUT, 0);
	check_done(k);
}

/* libcurl's CURLMOPT_TIMERFUNCTION: call back in ms milliseconds (-1: never). */
static int timer_cb(CURLM *multi, long ms, void *userp)
{
	struct conn *k = userp;

	(void)multi;
	loop_timer_stop(k->h->loop, &k->timer);
	if (ms >= 0)
		loop_timer_start(k->h->loop, &k->timer, clock_mono_ns() + ms * NS_PER_MS, on_timer, k);
	return 0;
}

static void conn_free(struct conn *k)
{
	const struct http_curl *api = &k->h->api;

	if (k->call)
		api->multi_remove_handle(k->multi, k->cl.easy);
	http_client_free(&k->cl);
	if (k->multi)
		api->multi_cleanup(k->multi); /* closes the cached connection: the socket callback frees its watch */
	loop_timer_stop(k->h->loop, &k->timer);
	while (k->socks) { /* what libcurl closed without a CURL_POLL_REMOVE */
		struct sock *s = k->socks;

		k->socks = s->next;
		loop_watch_stop(k->h->loop, &s->w);
		free(s);
	}
	if (k->h->fdb)
		fd_budget_give(k->h->fdb, k->fds);
	free(k);
}

/* libcurl, loaded at the first request. 0, or -ENOENT with err. */
static int load(struct http_async *h, char *err, size_t errsz)
{
	if (!h->loaded) {
		h->loaded = http_curl_load(&h->api, h->load_err, sizeof(h->load_err)) ? -1 : 1;
		if (h->loaded < 0)
			log_warn("http: %s; every HTTP request fails", h->load_err);
	}
	if (h->loaded < 0) {
		snprintf(err, errsz, "%s", h->load_err);
		return -ENOENT;
	}
	return 0;
}

/* Connection id, made at its first request. NULL with err when libcurl cannot make one. */
static struct conn *conn_get(struct http_async *h, unsigned id, char *err, size_t errsz)
{
	struct conn *k;

	for (k = h->conns; k; k = k->next)
		if (k->id == id)
			return k;
	if (load(h, err, errsz))
		return NULL;
	if (h->fdb && fd_budget_take(h->fdb, HTTP_CONN_FDS)) {
		snprintf(err, errsz,
			 "no descriptor left for another connection: the %zu that a limit of %zu (ulimit -n) lends to "
			 "connections and kept files are in use", h->fdb->available, h->fdb->limit);
		return NULL;
	}
	k = xcalloc(1, sizeof(*k));
	k->h = h;
	k->id = id;
	k->fds = h->fdb ? HTTP_CONN_FDS : 0;
	if (http_client_init(&k->cl, &h->api, err, errsz) || !(k->multi = h->api.multi_init())) {
		snprintf(err, errsz, "libcurl: cannot make a handle");
		conn_free(k);
		return NULL;
	}
	h->api.multi_setopt(k->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
	h->api.multi_setopt(k->multi, CURLMOPT_SOCKETDATA, k);
	h->api.multi_setopt(k->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	h->api.multi_setopt(k->multi, CURLMOPT_TIMERDATA, k);
	h->api.multi_setopt(k->multi, CURLMOPT_MAXCONNECTS, 1L); /* one connection per connection id */
	k->next = h->conns;
	h->conns = k;
	return k;
}

/*
 * Read what libcurl finished on k and end its call (the callback may start
 * the next request on k, or close k: nothing of k is read after it). A
 * transfer still running whose body has begun says so.
 */
static void check_done(struct conn *k)
{
	const struct http_curl *api = &k->h->api;
	struct http_call *c = k->call;
	struct http_result r;
	CURLMsg *msg;
	int left;

	while ((msg = api->multi_info_read(k->multi, &left))) {
		if (msg->msg != CURLMSG_DONE || msg->easy_handle != k->cl.easy || !c)
			continue;
		http_finish(&k->cl, msg->data.result, &r);
		api->multi_remove_handle(k->multi, k->cl.easy); /* the connection stays in the cache when it can */
		k->call = NULL;
		c->k = NULL;
		snprintf(c->error, sizeof(c->error), "%s", r.error);
		c->status = r.status;
		c->over = r.over;
		c->retry_after_ms = r.retry_after_ms;
		c->first_byte_ns = r.first_byte_us > 0 ? c->started_ns + r.first_byte_us * 1000 : 0;
		take_body(c, &k->cl.body);
		finish(c);
		return; /* one request per connection */
	}
	if (c && k->cl.body.len > 0)
		c->body_begun = 1;
}

/* ---- the API --------------------------------------------------------------------------------------- */

struct http_async *http_async_new(struct loop *loop)
{
	struct http_async *h = xcalloc(1, sizeof(*h));

	h->loop = loop;
	return h;
}

void http_async_free(struct http_async *h)
{
	if (!h)
		return;
	while (h->conns) {
		struct conn *k = h->conns;

		h->conns = k->next;
		conn_free(k);
	}
	loop_timer_stop(h->loop, &h->later);
	if (h->loaded > 0)
		h->api.global_cleanup();
	free(h);
}

void http_async_set_fd_budget(struct http_async *h, struct fd_budget *b)
{
	h->fdb = b;
}

unsigned http_async_conn(struct http_async *h)
{
	return ++h->next_conn;
}

void http_async_conn_close(struct http_async *h, unsigned conn)
{
	if (!h)
		return;
	for (struct conn **pp = &h->conns; *pp; pp = &(*pp)->next)
		if ((*pp)->id == conn) {
			struct conn *k = *pp;

			*pp = k->next;
			if (k->call)
				k->call->k = NULL;
			conn_free(k);
			return;
		}
}

struct loop *http_async_loop(const struct http_async *h)
{
	return h->loop;
}

int http_async_loaded(const struct http_async *h)
{
	return h->loaded > 0;
}

void http_call_init(struct http_call *c, size_t reply_max)
{
	memset(c, 0, sizeof(*c));
	buf_init(&c->body, reply_max);
	c->retry_after_ms = -1;
}

void http_call_free(struct http_call *c)
{
	http_call_cancel(c);
	buf_free(&c->body);
}

int http_call_running(const struct http_call *c)
{
	return c->id != 0;
}

int http_call_start(struct http_async *h, struct http_call *c, unsigned conn, const struct http_opts *o,
		    http_call_cb cb, void *data)
{
	char err[512] = "";
	struct conn *k;

	if (c->id)
		return -EBUSY;
	c->h = h;
	c->cb = cb;
	c->data = data;
	c->id = ++h->next_id;
	c->k = NULL;
	c->error[0] = '\0';
	c->status = 0;
	c->over = 0;
	c->first_byte_ns = 0;
	c->retry_after_ms = -1;
	c->body_begun = 0;
	c->loop_cpu_ns = 0;
	c->started_ns = clock_mono_ns();
	buf_reset(&c->body);
	if (!(k = conn_get(h, conn, err, sizeof(err)))) {
		end_later(h, c, err);
		return 0;
	}
	if (k->call) {
		end_later(h, c, "a request is still running on this connection");
		return 0;
	}
	if (http_setup(&k->cl, o, err, sizeof(err))) {
		end_later(h, c, err);
		return 0;
	}
	if (h->api.multi_add_handle(k->multi, k->cl.easy) != CURLM_OK) {
		end_later(h, c, "libcurl: cannot start the transfer");
		return 0;
	}
	k->call = c;
	c->k = k;
	return 0;
}

void http_call_cancel(struct http_call *c)
{
	struct http_async *h = c->h;

	if (!c->id)
		return;
	if (c->k) {
		/* Removing a transfer mid-way closes its connection; the socket callback stops the watches. */
		h->api.multi_remove_handle(c->k->multi, c->k->cl.easy);
		loop_timer_stop(h->loop, &c->k->timer);
		c->k->call = NULL;
		c->k = NULL;
	}
	for (struct http_call **pp = &h->ended; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	c->next = NULL;
	c->id = 0;
}

void http_call_take_body(struct http_call *c, struct buf *out)
{
	size_t cap = c->body.cap;

	*out = c->body;
	buf_init(&c->body, cap);
}

int http_error_same(const char *a, const char *b)
{
	for (;;) {
		while (*a >= '0' && *a <= '9')
			a++;
		while (*b >= '0' && *b <= '9')
			b++;
		if (*a != *b)
			return 0;
		if (!*a)
			return 1;
		a++;
		b++;
	}
}
