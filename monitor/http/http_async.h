/* SPDX-License-Identifier: MIT */
/*
 * The producer's one way to do HTTP: every request accel-monitor makes
 * (endpoint scrapes, the kubelet's /pods, EC2 instance metadata) is made by
 * its HTTP helper, a child process (the same program run as
 * "accel-monitor --http-helper", http_helper.h) that loads libcurl and runs
 * the requests with the one HTTP client (common/http.h). The producer
 * itself never maps libcurl or a TLS library (8.4 MB of RSS against 2.5 MB
 * measured) and never blocks on the network: requests and answers travel
 * over a socket that the producer's event loop watches (loop.h), framed as
 * http_wire.h says, and each answer is handed to its caller's callback from
 * the loop.
 *
 * The helper is started at the first request and ended when no request has
 * been in flight for HTTP_ASYNC_IDLE_NS (a producer without endpoints runs
 * it at start and hourly for a few seconds: instance metadata), so it costs
 * nothing while nothing is asked. A helper that dies, or answers nothing
 * past a request's timeout, fails what was in flight with an error and is
 * started again at the next request.
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

#define HTTP_ASYNC_IDLE_NS (10 * NS_PER_S)     /* no request for this long: the helper ends */
#define HTTP_ASYNC_SLACK_NS (5 * NS_PER_S)     /* past a request's timeout: the helper is stuck */

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
	struct buf body;          /* the (decoded, maybe filtered) body; its cap is reply_max */
	int64_t started_ns;       /* CLOCK_MONOTONIC: the request was handed to the helper */
	int64_t first_byte_ns;    /* CLOCK_MONOTONIC: the answer began; 0 when none did */
	int64_t retry_after_ms;   /* -1 when none */
	int body_begun;           /* while it runs: the body has begun to arrive */
	/* internal */
	struct http_async *h;
	uint64_t id;              /* while it runs; 0 when not */
	int64_t deadline_ns;      /* CLOCK_MONOTONIC: fail it if the helper has not answered by then */
	http_call_cb cb;
	void *data;
	struct http_call *next;   /* the calls in flight */
};

/*
 * A producer's HTTP on loop (borrowed). program: what to run as the helper
 * (NULL: this program, /proc/self/exe); it is given "--http-helper" and
 * the log level. Nothing starts until the first request.
 */
struct http_async *http_async_new(struct loop *loop, const char *program);
/* Stop the helper (it is given a moment to end cleanly, then killed). NULL-safe. No call may be running. */
void http_async_free(struct http_async *h);

/* A new connection: requests made on it share one kept-alive connection, one request at a time. */
unsigned http_async_conn(struct http_async *h);
/* Forget a connection (its socket is closed). */
void http_async_conn_close(struct http_async *h, unsigned conn);

/* Is the helper process running (tests)? Its pid, or 0. */
pid_t http_async_helper_pid(const struct http_async *h);

/* End the helper after idle_ns without a request instead of HTTP_ASYNC_IDLE_NS (tests). */
void http_async_idle(struct http_async *h, int64_t idle_ns);

/* Ready a call whose answers keep at most reply_max body bytes. */
void http_call_init(struct http_call *c, size_t reply_max);
/* Stop it if it runs (no callback) and free its body. */
void http_call_free(struct http_call *c);

/*
 * Start o on connection conn of h; cb(c, data) is called from the loop once,
 * when it ends (never from within this call). filter: NULL, or
 * "kubelet_pods" (the helper reduces a PodList, kubelet.h). o's strings are
 * copied. 0, or -EBUSY when c runs already.
 */
int http_call_start(struct http_async *h, struct http_call *c, unsigned conn, const struct http_opts *o,
		    const char *filter, http_call_cb cb, void *data);

/* Is it running? */
int http_call_running(const struct http_call *c);

/* Stop it (no callback; its connection is closed). No-op when it does not run. */
void http_call_cancel(struct http_call *c);

#endif
