/* SPDX-License-Identifier: MIT */
/*
 * The HTTP helper process; see http_helper.h.
 *
 * libcurl drives each connection's transfer through two callbacks: its
 * socket callback says which descriptor to wait on for what (a loop watch
 * each), its timer callback when to call it back (one loop timer per
 * connection). Every loop callback hands the event to
 * curl_multi_socket_action and then reads what finished.
 */
#include "http_helper.h"
#include "http_wire.h"
#include "../core/loop.h"
#include "kubelet_pods.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REQUEST_MAX 65536 /* bytes of one request frame (no body) */
#define HEADERS_MAX 32    /* request headers one request may have */
#define IN_BUDGET 65536   /* bytes of requests read per loop callback */
#define SOCK_FD STDIN_FILENO /* the socket: stdin and stdout are the same one; both ways go through this */

struct helper;

/* One descriptor libcurl waits on. */
struct sock {
	struct loop_watch w;
	struct conn *k;
	curl_socket_t fd;
	struct sock *next;        /* the connection's list: freed with it if libcurl never says REMOVE */
};

/* One connection the producer named: a multi handle, an easy handle, one request at a time. */
struct conn {
	struct helper *hp;
	unsigned id;
	CURLM *multi;
	struct http_client cl;
	struct loop_timer timer;
	struct sock *socks;
	uint64_t call;            /* the request running; 0: none */
	int body_said;            /* its "body" event is sent */
	int filter;               /* reduce a PodList */
	size_t reply_max;         /* bytes */
	int64_t started_ns;       /* CLOCK_MONOTONIC */
	struct conn *next;
};

struct helper {
	struct loop *loop;
	struct http_curl api;
	char load_err[256];       /* "" when libcurl is loaded */
	struct loop_watch watch;  /* the socket */
	struct http_wire_in in;
	struct http_wire_out out;
	struct conn *conns;
	int eof;
};

static void check_done(struct conn *k);

/* ---- answers --------------------------------------------------------------------------------------- */

static void on_sock_fd(struct loop_watch *w, short revents);

/* Write what the socket takes; wait for POLLOUT while some is left. */
static void flush_out(struct helper *hp)
{
	int f = http_wire_flush(&hp->out, SOCK_FD);

	if (f < 0) {
		hp->eof = 1; /* the producer is gone */
		return;
	}
	loop_watch_start(hp->loop, &hp->watch, SOCK_FD, f ? POLLIN | POLLOUT : POLLIN, on_sock_fd, hp);
}

static void put(struct helper *hp, json_t *head, const void *body, size_t len)
{
	http_wire_put(&hp->out, head, body, len);
	flush_out(hp);
}

/* Request id's answer: no answer at all, with error. */
static void fail(struct helper *hp, uint64_t id, const char *error)
{
	json_t *h = json_pack("{s:I, s:s, s:s, s:i}", "id", (json_int_t)id, "ev", "done", "error", error, "status", 0);

	put(hp, h, NULL, 0);
	json_decref(h);
}

/* ---- connections ----------------------------------------------------------------------------------- */

static void on_sock(struct loop_watch *w, short revents)
{
	struct sock *s = w->data;
	struct conn *k = s->k; /* s may be freed inside socket_action (CURL_POLL_REMOVE) */
	int flags = 0, n;

	if (revents & POLLIN)
		flags |= CURL_CSELECT_IN;
	if (revents & POLLOUT)
		flags |= CURL_CSELECT_OUT;
	if (revents & (POLLERR | POLLHUP))
		flags |= CURL_CSELECT_ERR;
	k->hp->api.multi_socket_action(k->multi, s->fd, flags, &n);
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
			loop_watch_stop(k->hp->loop, &s->w);
			k->hp->api.multi_assign(k->multi, fd, NULL);
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
		k->hp->api.multi_assign(k->multi, fd, s);
	}
	if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
		ev |= POLLIN;
	if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
		ev |= POLLOUT;
	loop_watch_start(k->hp->loop, &s->w, fd, ev, on_sock, s);
	return 0;
}

static void on_timer(struct loop_timer *t)
{
	struct conn *k = t->data;
	int n;

	k->hp->api.multi_socket_action(k->multi, CURL_SOCKET_TIMEOUT, 0, &n);
	check_done(k);
}

/* libcurl's CURLMOPT_TIMERFUNCTION: call back in ms milliseconds (-1: never). */
static int timer_cb(CURLM *multi, long ms, void *userp)
{
	struct conn *k = userp;

	(void)multi;
	loop_timer_stop(k->hp->loop, &k->timer);
	if (ms >= 0)
		loop_timer_start(k->hp->loop, &k->timer, clock_mono_ns() + ms * NS_PER_MS, on_timer, k);
	return 0;
}

static void conn_free(struct conn *k)
{
	const struct http_curl *api = &k->hp->api;

	if (k->call)
		api->multi_remove_handle(k->multi, k->cl.easy);
	http_client_free(&k->cl);
	if (k->multi)
		api->multi_cleanup(k->multi); /* closes the cached connection: the socket callback frees its watch */
	loop_timer_stop(k->hp->loop, &k->timer);
	while (k->socks) { /* what libcurl closed without a CURL_POLL_REMOVE */
		struct sock *s = k->socks;

		k->socks = s->next;
		loop_watch_stop(k->hp->loop, &s->w);
		free(s);
	}
	free(k);
}

/* Connection id, made at its first request. NULL with err when libcurl cannot make one. */
static struct conn *conn_get(struct helper *hp, unsigned id, char *err, size_t errsz)
{
	struct conn *k;

	for (k = hp->conns; k; k = k->next)
		if (k->id == id)
			return k;
	if (hp->load_err[0]) {
		snprintf(err, errsz, "%s", hp->load_err);
		return NULL;
	}
	k = xcalloc(1, sizeof(*k));
	k->hp = hp;
	k->id = id;
	if (http_client_init(&k->cl, &hp->api, err, errsz) || !(k->multi = hp->api.multi_init())) {
		snprintf(err, errsz, "libcurl: cannot make a handle");
		conn_free(k);
		return NULL;
	}
	hp->api.multi_setopt(k->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
	hp->api.multi_setopt(k->multi, CURLMOPT_SOCKETDATA, k);
	hp->api.multi_setopt(k->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	hp->api.multi_setopt(k->multi, CURLMOPT_TIMERDATA, k);
	hp->api.multi_setopt(k->multi, CURLMOPT_MAXCONNECTS, 1L); /* one connection per connection id */
	k->next = hp->conns;
	hp->conns = k;
	return k;
}

static void conn_close(struct helper *hp, unsigned id)
{
	for (struct conn **pp = &hp->conns; *pp; pp = &(*pp)->next)
		if ((*pp)->id == id) {
			struct conn *k = *pp;

			*pp = k->next;
			conn_free(k);
			return;
		}
}

/* ---- requests --------------------------------------------------------------------------------------- */

/* Send what the request on k came to, its body reduced when asked. */
static void answer(struct conn *k, const struct http_result *r)
{
	char *reduced = NULL, err[512];
	const char *body = r->body, *error = r->error;
	size_t len = r->len;
	json_t *h;

	if (k->filter && !error[0] && r->status == 200) {
		if (kubelet_pods_reduce(r->body, r->len, &reduced, err, sizeof(err))) {
			error = err;
			len = 0;
		} else {
			body = reduced;
			len = strlen(reduced);
		}
	}
	if (len > k->reply_max) {
		snprintf(err, sizeof(err), "the answer is over %zu bytes", k->reply_max);
		error = err;
		len = 0;
	}
	h = json_pack("{s:I, s:s, s:s, s:I, s:b, s:I, s:I}", "id", (json_int_t)k->call, "ev", "done", "error", error,
		      "status", (json_int_t)r->status, "over", r->over, "started_ns", (json_int_t)k->started_ns,
		      "first_byte_ns",
		      (json_int_t)(r->first_byte_us > 0 ? k->started_ns + r->first_byte_us * 1000 : 0));
	if (r->retry_after_ms >= 0)
		json_object_set_new(h, "retry_after_ms", json_integer(r->retry_after_ms));
	put(k->hp, h, body, len);
	json_decref(h);
	free(reduced);
}

/*
 * Read what libcurl finished on k: the answer goes to the producer. A
 * transfer still running whose body has begun says so, once (a body that
 * came whole in one go needs no word of it).
 */
static void check_done(struct conn *k)
{
	const struct http_curl *api = &k->hp->api;
	CURLMsg *msg;
	int left;

	while ((msg = api->multi_info_read(k->multi, &left))) {
		struct http_result r;

		if (msg->msg != CURLMSG_DONE || msg->easy_handle != k->cl.easy)
			continue;
		http_finish(&k->cl, msg->data.result, &r);
		api->multi_remove_handle(k->multi, k->cl.easy); /* the connection stays in the cache when it can */
		answer(k, &r);
		k->call = 0;
		return; /* one request per connection */
	}
	if (k->call && !k->body_said && k->cl.body.len > 0) {
		json_t *h = json_pack("{s:I, s:s}", "id", (json_int_t)k->call, "ev", "body");

		k->body_said = 1;
		put(k->hp, h, NULL, 0);
		json_decref(h);
	}
}

static void start(struct helper *hp, json_t *f)
{
	uint64_t id = (uint64_t)json_integer_value(json_object_get(f, "id"));
	json_int_t reply_max = json_integer_value(json_object_get(f, "reply_max"));
	const char *filter = json_string_value(json_object_get(f, "filter")), *why, *headers[HEADERS_MAX];
	char err[512];
	struct http_opts o;
	struct conn *k;

	if (!(k = conn_get(hp, (unsigned)json_integer_value(json_object_get(f, "conn")), err, sizeof(err)))) {
		fail(hp, id, err);
		return;
	}
	if (k->call) {
		fail(hp, id, "a request is still running on this connection");
		return;
	}
	if (http_wire_opts_parse(json_object_get(f, "opts"), &o, headers, HEADERS_MAX, &why)) {
		fail(hp, id, why);
		return;
	}
	if (filter && strcmp(filter, "kubelet_pods")) {
		fail(hp, id, "unknown filter");
		return;
	}
	if (http_setup(&k->cl, &o, err, sizeof(err))) {
		fail(hp, id, err);
		return;
	}
	k->filter = filter != NULL;
	k->reply_max = reply_max > 0 ? (size_t)reply_max : 0;
	k->body_said = 0;
	k->started_ns = clock_mono_ns();
	if (hp->api.multi_add_handle(k->multi, k->cl.easy) != CURLM_OK) {
		fail(hp, id, "libcurl: cannot start the transfer");
		return;
	}
	k->call = id;
}

static void cancel(struct helper *hp, uint64_t id)
{
	for (struct conn *k = hp->conns; k; k = k->next)
		if (k->call == id) {
			/* Removing a transfer mid-way closes its connection; the socket callback stops the watches. */
			hp->api.multi_remove_handle(k->multi, k->cl.easy);
			loop_timer_stop(hp->loop, &k->timer);
			k->call = 0;
			return;
		}
}

/* The socket: requests to read, answers to write. */
static void on_sock_fd(struct loop_watch *w, short revents)
{
	struct helper *hp = w->data;
	const char *body;
	json_t *f;
	size_t len;
	int r = 0, k = 0;

	if ((revents & POLLOUT) && !hp->eof)
		flush_out(hp);
	if (revents & (POLLIN | POLLHUP | POLLERR))
		r = http_wire_read(&hp->in, SOCK_FD, IN_BUDGET);
	while (!hp->eof && (k = http_wire_next(&hp->in, &f, &body, &len)) > 0) {
		const char *op = json_string_value(json_object_get(f, "op"));

		if (op && !strcmp(op, "start"))
			start(hp, f);
		else if (op && !strcmp(op, "cancel"))
			cancel(hp, (uint64_t)json_integer_value(json_object_get(f, "id")));
		else if (op && !strcmp(op, "close"))
			conn_close(hp, (unsigned)json_integer_value(json_object_get(f, "conn")));
		json_decref(f);
	}
	if (r < 0 || k < 0)
		hp->eof = 1; /* the producer is done with us (or said nonsense) */
}

int http_helper_main(int argc, char **argv)
{
	struct helper hp;

	memset(&hp, 0, sizeof(hp));
	log_init("accel-monitor", argc > 2 ? atoi(argv[2]) : LOG_LVL_WARN);
	signal(SIGPIPE, SIG_IGN);
	fcntl(SOCK_FD, F_SETFL, fcntl(SOCK_FD, F_GETFL) | O_NONBLOCK);
	hp.loop = loop_new();
	if (http_curl_load(&hp.api, hp.load_err, sizeof(hp.load_err)))
		log_debug("http: %s", hp.load_err);
	http_wire_in_init(&hp.in, 0);
	http_wire_out_init(&hp.out);
	loop_watch_start(hp.loop, &hp.watch, SOCK_FD, POLLIN, on_sock_fd, &hp);
	while (!hp.eof) {
		int r = loop_run_once(hp.loop, INT64_MAX, NULL);

		if (r < 0 && r != -EINTR) {
			log_err("http: waiting: %s", strerror(-r));
			break;
		}
	}
	while (hp.conns) {
		struct conn *k = hp.conns;

		hp.conns = k->next;
		conn_free(k);
	}
	loop_watch_stop(hp.loop, &hp.watch);
	loop_free(hp.loop);
	http_wire_in_free(&hp.in);
	http_wire_out_free(&hp.out);
	if (!hp.load_err[0])
		hp.api.global_cleanup();
	return 0;
}
