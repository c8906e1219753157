/* SPDX-License-Identifier: MIT */
/*
 * The producer's HTTP on its event loop; see http_async.h.
 *
 * One multi handle runs every transfer; each connection id is an easy
 * handle (one request at a time) with a connection cache of its own (a
 * CURLSH sharing CURL_LOCK_DATA_CONNECT), so an endpoint keeps its own
 * kept-alive connection and costs one descriptor: the multi handle's wakeup
 * socketpair (libcurl >= 7.68 makes one per multi handle) is paid once.
 * libcurl drives the transfers through two callbacks: its socket callback
 * says which descriptor to wait on for what (a loop watch each), its timer
 * callback when to call it back (one loop timer). Every loop callback hands
 * the event to curl_multi_socket_action and then reads what finished.
 *
 * The answer's body goes to the call as the client's buffer itself, not a
 * copy: an answer of megabytes is neither doubled nor kept by the
 * connection for its next request. A caller that parses it off the loop
 * (on a loop worker, loop_work_post) takes it with http_call_take_body.
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
	struct http_async *h;
	struct conn *k;           /* the connection whose transfer it serves (NULL: none known) */
	curl_socket_t fd;
	struct sock *next;        /* every watched socket: freed at the end if libcurl never says REMOVE */
};

/*
 * One connection: an easy handle, one request at a time, and a connection
 * cache of its own (a share of CURL_LOCK_DATA_CONNECT), so its kept-alive
 * connection serves no other connection id, even one to the same server.
 */
struct conn {
	struct http_async *h;
	unsigned id;
	struct http_client cl;
	CURLSH *share;            /* the connection cache of this id */
	struct http_call *call;   /* the request running; NULL: none */
	size_t fds;               /* descriptors taken from the budget for it */
	struct conn *next;
};

struct http_async {
	struct loop *loop;          /* borrowed */
	struct http_curl api;
	int loaded;                 /* 1: api is filled; -1: it could not be (load_err) */
	char load_err[256];
	CURLM *multi;               /* every transfer's, made at the first request */
	size_t multi_fds;           /* descriptors taken from the budget for it: its wakeup socketpair */
	struct loop_timer timer;    /* libcurl's timer */
	struct sock *socks;         /* the sockets watched */
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

/* ---- transfers ------------------------------------------------------------------------------------- */

static void check_done(struct http_async *h, struct conn *k);

/* The connection whose easy handle is easy (CURLOPT_PRIVATE), or NULL. */
static struct conn *conn_of(struct http_async *h, CURL *easy)
{
	char *p = NULL;

	if (!easy || h->api.easy_getinfo(easy, CURLINFO_PRIVATE, &p) != CURLE_OK)
		return NULL;
	return (struct conn *)(void *)p;
}

/*
 * Hand an event on fd (CURL_SOCKET_TIMEOUT: the timer) to libcurl. The CPU
 * time it takes on the loop (reading, TLS, decoding into the body) is the
 * running call's of k, the connection the socket serves (NULL: nobody's).
 */
static void socket_action(struct http_async *h, struct conn *k, curl_socket_t fd, int flags)
{
	struct http_call *c = k ? k->call : NULL;
	int64_t cpu0 = clock_thread_cpu_ns();
	int n;

	h->api.multi_socket_action(h->multi, fd, flags, &n);
	if (c)
		c->loop_cpu_ns += clock_thread_cpu_ns() - cpu0;
}

static void on_sock(struct loop_watch *w, short revents)
{
	struct sock *s = w->data;
	struct http_async *h = s->h;
	struct conn *k = s->k; /* s may be freed inside socket_action (CURL_POLL_REMOVE) */
	int flags = 0;

	if (revents & POLLIN)
		flags |= CURL_CSELECT_IN;
	if (revents & POLLOUT)
		flags |= CURL_CSELECT_OUT;
	if (revents & (POLLERR | POLLHUP))
		flags |= CURL_CSELECT_ERR;
	socket_action(h, k, s->fd, flags);
	check_done(h, k);
}

/* Stop watching s and forget it. */
static void sock_free(struct http_async *h, struct sock *s)
{
	struct sock **pp = &h->socks;

	while (*pp && *pp != s)
		pp = &(*pp)->next;
	if (*pp)
		*pp = s->next;
	loop_watch_stop(h->loop, &s->w);
	free(s);
}

/* libcurl's CURLMOPT_SOCKETFUNCTION: wait on fd for what, or stop. */
static int sock_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	struct http_async *h = userp;
	struct sock *s = socketp;
	short ev = 0;

	if (what == CURL_POLL_REMOVE) {
		if (s) {
			h->api.multi_assign(h->multi, fd, NULL);
			sock_free(h, s);
		}
		return 0;
	}
	if (!s) {
		s = xcalloc(1, sizeof(*s));
		s->h = h;
		s->fd = fd;
		s->next = h->socks;
		h->socks = s;
		h->api.multi_assign(h->multi, fd, s);
	}
	s->k = conn_of(h, easy);
	if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
		ev |= POLLIN;
	if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
		ev |= POLLOUT;
	loop_watch_start(h->loop, &s->w, fd, ev, on_sock, s);
	return 0;
}

static void on_timer(struct loop_timer *t)
{
	struct http_async *h = t->data;

	socket_action(h, NULL, CURL_SOCKET_TIMEOUT, 0);
	check_done(h, NULL);
}

/* libcurl's CURLMOPT_TIMERFUNCTION: call back in ms milliseconds (-1: never). */
static int timer_cb(CURLM *multi, long ms, void *userp)
{
	struct http_async *h = userp;

	(void)multi;
	loop_timer_stop(h->loop, &h->timer);
	if (ms >= 0)
		loop_timer_start(h->loop, &h->timer, clock_mono_ns() + ms * NS_PER_MS, on_timer, h);
	return 0;
}

/* ---- connections ----------------------------------------------------------------------------------- */

static void conn_free(struct conn *k)
{
	struct http_async *h = k->h;
	const struct http_curl *api = &h->api;

	if (k->call)
		api->multi_remove_handle(h->multi, k->cl.easy);
	http_client_free(&k->cl);
	if (k->share)
		api->share_cleanup(k->share); /* closes the cached connection */
	for (struct sock *s = h->socks, *next; s; s = next) { /* what libcurl closed without a CURL_POLL_REMOVE */
		next = s->next;
		if (s->k == k) {
			api->multi_assign(h->multi, s->fd, NULL); /* never handed back freed, should libcurl still know fd */
			sock_free(h, s);
		}
	}
	if (h->fdb)
		fd_budget_give(h->fdb, k->fds);
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

/* The multi handle every transfer runs in, made once. 0, or -1 with err. */
static int multi_get(struct http_async *h, char *err, size_t errsz)
{
	if (h->multi)
		return 0;
	if (h->fdb && fd_budget_take(h->fdb, HTTP_MULTI_FDS)) {
		snprintf(err, errsz, "no descriptor left for libcurl: the %zu that a limit of %zu (ulimit -n) lends to "
			 "connections and kept files are in use", h->fdb->available, h->fdb->limit);
		return -1;
	}
	if (!(h->multi = h->api.multi_init())) {
		if (h->fdb)
			fd_budget_give(h->fdb, HTTP_MULTI_FDS);
		snprintf(err, errsz, "libcurl: cannot make a handle");
		return -1;
	}
	h->multi_fds = h->fdb ? HTTP_MULTI_FDS : 0;
	h->api.multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
	h->api.multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
	h->api.multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	h->api.multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
	return 0;
}

/* Connection id, made at its first request. NULL with err when libcurl cannot make one. */
static struct conn *conn_get(struct http_async *h, unsigned id, char *err, size_t errsz)
{
	struct conn *k;

	for (k = h->conns; k; k = k->next)
		if (k->id == id)
			return k;
	if (load(h, err, errsz) || multi_get(h, err, errsz))
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
	if (http_client_init(&k->cl, &h->api, err, errsz) || !(k->share = h->api.share_init()) ||
	    h->api.share_setopt(k->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT) != CURLSHE_OK) {
		snprintf(err, errsz, "libcurl: cannot make a handle");
		conn_free(k);
		return NULL;
	}
	k->next = h->conns;
	h->conns = k;
	return k;
}

/*
 * Read what libcurl finished and end those calls (a callback may start the
 * next request on its connection, or close it: nothing of a connection is
 * read after its call's callback). k: the connection an event was for, whose
 * transfer, still running, says so when its body has begun.
 */
static void check_done(struct http_async *h, struct conn *k)
{
	const struct http_curl *api = &h->api;
	struct http_result r;
	CURLMsg *msg;
	int left;

	while ((msg = api->multi_info_read(h->multi, &left))) {
		struct conn *d = conn_of(h, msg->easy_handle);
		struct http_call *c = d ? d->call : NULL;

		if (msg->msg != CURLMSG_DONE || !c)
			continue;
		http_finish(&d->cl, msg->data.result, &r);
		api->multi_remove_handle(h->multi, d->cl.easy); /* the connection stays in d's cache when it can */
		d->call = NULL;
		c->k = NULL;
		snprintf(c->error, sizeof(c->error), "%s", r.error);
		c->status = r.status;
		c->over = r.over;
		c->retry_after_ms = r.retry_after_ms;
		snprintf(c->kept, sizeof(c->kept), "%s", r.kept ? r.kept : "");
		c->first_byte_ns = r.first_byte_us > 0 ? c->started_ns + r.first_byte_us * 1000 : 0;
		take_body(c, &d->cl.body);
		if (d == k)
			k = NULL; /* its callback may free it */
		finish(c);
	}
	if (k && k->call && k->cl.body.len > 0)
		k->call->body_begun = 1;
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
	if (h->multi)
		h->api.multi_cleanup(h->multi);
	while (h->socks)
		sock_free(h, h->socks);
	loop_timer_stop(h->loop, &h->timer);
	loop_timer_stop(h->loop, &h->later);
	if (h->fdb)
		fd_budget_give(h->fdb, h->multi_fds);
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
	c->kept[0] = '\0';
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
	/* After http_setup, which resets the handle: its own cache, its connection, one connection kept. */
	h->api.easy_setopt(k->cl.easy, CURLOPT_SHARE, k->share);
	h->api.easy_setopt(k->cl.easy, CURLOPT_PRIVATE, (char *)(void *)k);
	h->api.easy_setopt(k->cl.easy, CURLOPT_MAXCONNECTS, 1L);
	if (h->api.multi_add_handle(h->multi, k->cl.easy) != CURLM_OK) {
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
		h->api.multi_remove_handle(h->multi, c->k->cl.easy);
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
