/* SPDX-License-Identifier: MIT */
/*
 * The producer's one way to do HTTP: every request accel-monitor makes
 * (endpoint scrapes, the kubelet's /pods and its pod-resources gRPC socket
 * (grpc.h: HTTP/2 on a unix socket), the ECS agent's introspection API
 * and the task metadata endpoint, EC2 instance metadata) runs on its
 * event loop (loop.h) with the one HTTP client (common/http.h) through
 * libcurl's multi interface, and each answer is handed to its caller's
 * callback from the loop: the producer never blocks on the network (libcurl
 * resolves names on a thread of its own).
 *
 * libcurl is loaded (dlopen) at the first request, not linked: a producer
 * that makes none (no endpoint, no kubelet, no ECS, not on EC2) never maps it or a
 * TLS library (2.5 MB of RSS, against about 9 MB once loaded; it stays
 * loaded, as its TLS libraries cannot be unloaded).
 *
 * The transport parses nothing: a caller whose answer is large (the
 * kubelet's PodList of tens of megabytes takes seconds to parse) takes the
 * body (http_call_take_body) and parses it off the loop (loop_work_post).
 *
 * Ownership: the http_async borrows its loop; a call (struct http_call) is
 * the caller's, embedded in its state, and must be stopped (http_call_free)
 * before the http_async is freed.
 */
#ifndef ACCEL_HTTP_ASYNC_H
#define ACCEL_HTTP_ASYNC_H

#include "../../common/http.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <stdint.h>
#include <sys/types.h>

struct loop;
struct http_async;
struct http_call;

/* An answer came (or the request failed): the call's fields below say which. */
typedef void (*http_call_cb)(struct http_call *c, void *data);

/* One request, and when it has ended its answer. */
struct http_call {
	/* the answer, from the callback until the next http_call_start */
	char error[512];          /* "" when an answer came (whatever its status), else what went wrong */
	long status;              /* HTTP status; 0 when none came */
	int over;                 /* the body went past the request's max_body */
	struct buf body;          /* the (decoded) body; its cap is reply_max */
	int64_t started_ns;       /* CLOCK_MONOTONIC: the request was started */
	int64_t first_byte_ns;    /* CLOCK_MONOTONIC: the answer began; 0 when none did */
	int64_t retry_after_ms;   /* -1 when none */
	char kept[HTTP_KEPT_MAX]; /* the answer's header and trailer fields the request named in keep_headers,
	                             "name: value\n" each (http_kept_get reads one) */
	int body_begun;           /* while it runs: the body has begun to arrive */
	int64_t loop_cpu_ns;      /* this thread's CPU time libcurl took for it in the loop's callbacks
	                             (reading, TLS, decoding): ns since http_call_start; for self-timing */
	/* internal */
	struct http_async *h;
	uint64_t id;              /* while it runs; 0 when not */
	struct conn *k;           /* its connection while the transfer runs */
	http_call_cb cb;
	void *data;
	struct http_call *next;   /* the calls that ended before they started */
};

/* A producer's HTTP on loop (borrowed). Nothing is loaded until the first request. */
struct http_async *http_async_new(struct loop *loop);
/* Close every connection. NULL-safe. No call may be running. */
void http_async_free(struct http_async *h);

/*
 * What HTTP costs in descriptors: once, libcurl's multi handle's wakeup
 * socketpair (libcurl >= 7.68 makes one per multi handle; Debian 12 has
 * 7.88), then each connection its socket.
 */
#define HTTP_MULTI_FDS 2
#define HTTP_CONN_FDS 1

struct fd_budget;
/*
 * Take the multi handle's descriptors (HTTP_MULTI_FDS, at the first
 * request) and each connection's (HTTP_CONN_FDS, at its first request)
 * from b (borrowed; fdbudget.h): a connection that cannot have them is not
 * made, and its requests end with an error that says so. NULL: no budget.
 */
void http_async_set_fd_budget(struct http_async *h, struct fd_budget *b);

/* A new connection: requests made on it share one kept-alive connection, one request at a time. */
unsigned http_async_conn(struct http_async *h);
/* Forget a connection (its socket is closed). */
void http_async_conn_close(struct http_async *h, unsigned conn);

/* The loop it runs on (borrowed), for a caller's work off it. */
struct loop *http_async_loop(const struct http_async *h);

/* Has a request loaded libcurl (tests)? */
int http_async_loaded(const struct http_async *h);

/* Ready a call whose answers keep at most reply_max body bytes. */
void http_call_init(struct http_call *c, size_t reply_max);
/* Stop it if it runs (no callback) and free its body. */
void http_call_free(struct http_call *c);

/*
 * Start o on connection conn of h; cb(c, data) is called from the loop once,
 * when it ends (never from within this call). o's strings are copied; its body and keep_headers
 * are borrowed until c ends. A request that cannot start (libcurl cannot be loaded, a secret is
 * refused, ...) ends with c->error, also from the loop. 0, or -EBUSY when c
 * runs already.
 */
int http_call_start(struct http_async *h, struct http_call *c, unsigned conn, const struct http_opts *o,
		    http_call_cb cb, void *data);

/*
 * Take c's body (from its callback): *out gets the data (the caller's,
 * buf_free), c keeps an empty body. For a caller that parses a large
 * answer off the loop (loop_work_post) without a copy.
 */
void http_call_take_body(struct http_call *c, struct buf *out);

/* Is it running? */
int http_call_running(const struct http_call *c);

/* Stop it (no callback; its connection is closed). No-op when it does not run. */
void http_call_cancel(struct http_call *c);

/*
 * Is error a the same as b, numbers aside? curl's messages carry elapsed
 * times ("Failed to connect to 127.0.0.1 port 10250 after 3 ms: ..."), which
 * must not make a repeated failure look new to a caller that logs a
 * failure once.
 */
int http_error_same(const char *a, const char *b);

#endif
