/* SPDX-License-Identifier: MIT */
/*
 * The kubelet's pod-resources client on the producer's loop; see podres.h.
 *
 * One cycle: GetAllocatableResources when it is due (the start, after a
 * failure), then List; each answer is unframed (grpc.c), then decoded
 * (podres_table.c) on the loop when small or on a loop worker when large,
 * and the cycle goes on from the decode's end. A cycle that fails anywhere
 * ends there with its error. The next cycle is one loop timer: a refresh
 * period after the last List started, or sooner after a kick.
 */
#include "podres.h"
#include "container.h"
#include "../core/loop.h"
#include "../http/grpc.h"
#include "../http/http_async.h"
#include "../../common/log.h"
#include "../../common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum step { STEP_IDLE, STEP_ALLOCATABLE, STEP_LIST };

static const char *const method_path[] = {
	[STEP_ALLOCATABLE] = "/v1.PodResourcesLister/GetAllocatableResources",
	[STEP_LIST] = "/v1.PodResourcesLister/List",
};
#define LIST_V1ALPHA1 "/v1alpha1.PodResourcesLister/List"

struct podres {
	struct http_async *http;   /* borrowed */
	struct loop *loop;         /* http's */
	unsigned conn;
	char *sock;
	char url[160];             /* the call's URL: http://localhost<method path> */
	int64_t refresh_ns, timeout_ms, kick_min_ns;
	size_t max_bytes;
	struct http_call call;
	struct loop_timer timer;   /* the next cycle */
	struct loop_work work;     /* a large answer's decode */
	enum step step;            /* the call or decode running; STEP_IDLE between cycles */
	struct buf body;           /* the answer a worker decodes (the work's) */
	struct podres_table *decoded; /* its result, or NULL with dec_err */
	char dec_err[256];
	int need_allocatable;      /* ask GetAllocatableResources before the next List */
	int alpha;                 /* List in v1alpha1 */
	int kicked;                /* a kick came: the next List is due kick_min_ns after the last */
	int64_t last_cycle;        /* CLOCK_MONOTONIC ns the last cycle started */
	unsigned long lists, updates, cycles;
	struct podres_table *table, *alloc; /* the last good answers (owned) */
	char error[512];           /* the last call's error, "" when it went well */
};

static void cycle_next(struct podres *p);
static void call_start(struct podres *p, enum step s);

static const char *path_of(const struct podres *p, enum step s)
{
	return s == STEP_LIST && p->alpha ? LIST_V1ALPHA1 : method_path[s];
}

/* The cycle ended with err ("" when it went well): say a new failure once, a recovery once. */
static void cycle_end(struct podres *p, const char *err)
{
	if (*err && !http_error_same(err, p->error))
		log_warn("podres: %s; the last good answer is kept (retried in %lld s)", err,
			 (long long)(p->refresh_ns / NS_PER_S));
	else if (!*err && *p->error)
		log_info("podres: %s answers again (%zu devices in %zu pods)", p->sock, podres_table_size(p->table),
			 podres_table_pods(p->table));
	snprintf(p->error, sizeof(p->error), "%s", err);
	p->step = STEP_IDLE;
	p->cycles++;
	cycle_next(p);
}

/* step's call (or its decode) failed with what: the cycle ends with "pod-resources <sock> <method>: what". */
static void step_fail(struct podres *p, const char *what)
{
	char err[sizeof(p->error)];

	snprintf(err, sizeof(err), "pod-resources %s %s: %s", p->sock, path_of(p, p->step), what);
	cycle_end(p, err);
}

/* step's answer is decoded (t, or NULL with err): keep it and go on. */
static void decoded(struct podres *p, struct podres_table *t, const char *err)
{
	if (!t) {
		step_fail(p, err);
		return;
	}
	if (p->step == STEP_ALLOCATABLE) {
		podres_table_free(p->alloc);
		p->alloc = t;
		p->need_allocatable = 0;
		call_start(p, STEP_LIST);
		return;
	}
	podres_table_free(p->table);
	p->table = t;
	p->updates++;
	cycle_end(p, "");
}

static enum podres_kind kind_of(enum step s)
{
	return s == STEP_LIST ? PODRES_LIST : PODRES_ALLOCATABLE;
}

/* On a loop worker: the answer in p->body decoded; the body freed here. */
static void decode_work(struct loop_work *w)
{
	struct podres *p = w->data;
	const uint8_t *msg;
	size_t mlen;

	p->decoded = NULL;
	if (!grpc_unframe(p->body.data, p->body.len, &msg, &mlen, p->dec_err, sizeof(p->dec_err)))
		podres_table_decode(kind_of(p->step), msg, mlen, PODRES_ALLOCS_MAX, &p->decoded, p->dec_err,
				    sizeof(p->dec_err));
	buf_free(&p->body);
}

static void decode_after(struct loop_work *w)
{
	struct podres *p = w->data;
	struct podres_table *t = p->decoded;

	p->decoded = NULL;
	decoded(p, t, p->dec_err);
}

/* An answer with grpc-status 0: decoded here when small, else on a worker. */
static void answer(struct podres *p, struct http_call *c)
{
	char err[256] = "";
	struct podres_table *t = NULL;
	const uint8_t *msg;
	size_t mlen;
	int rc;

	if (c->body.len <= PODRES_DECODE_ON_LOOP_MAX + GRPC_FRAME_HEADER) {
		if (!grpc_unframe(c->body.data, c->body.len, &msg, &mlen, err, sizeof(err)))
			podres_table_decode(kind_of(p->step), msg, mlen, PODRES_ALLOCS_MAX, &t, err, sizeof(err));
		decoded(p, t, err);
		return;
	}
	http_call_take_body(c, &p->body);
	if (!(rc = loop_work_post(p->loop, &p->work, decode_work, decode_after, p)))
		return;
	buf_free(&p->body);
	snprintf(err, sizeof(err), "cannot decode the answer off the loop: %s", strerror(-rc));
	decoded(p, NULL, err);
}

static void call_done(struct http_call *c, void *data)
{
	struct podres *p = data;
	char err[512];
	int rc = grpc_call_result(c, err, sizeof(err));

	if (!rc) {
		answer(p, c);
	} else if (rc == GRPC_UNIMPLEMENTED && p->step == STEP_ALLOCATABLE) {
		/* A kubelet before 1.23 (or with the feature gate off): no allocatable table, no error. */
		p->need_allocatable = 0;
		call_start(p, STEP_LIST);
	} else if (rc == GRPC_UNIMPLEMENTED && !p->alpha) {
		log_info("podres: %s has no v1 List (%s); asking v1alpha1", p->sock, err);
		p->alpha = 1;
		call_start(p, STEP_LIST);
	} else {
		if (rc < 0 && !c->first_byte_ns) /* no answer: the kubelet may have restarted, with other devices */
			p->need_allocatable = 1;
		step_fail(p, err);
	}
}

static void call_start(struct podres *p, enum step s)
{
	struct http_opts o;

	p->step = s;
	if (s == STEP_LIST)
		p->lists++;
	snprintf(p->url, sizeof(p->url), "http://localhost%s", path_of(p, s));
	grpc_opts(&o, p->url, p->sock, grpc_empty_frame, sizeof(grpc_empty_frame), p->timeout_ms,
		  p->max_bytes + GRPC_FRAME_HEADER);
	http_call_start(p->http, &p->call, p->conn, &o, call_done, p);
}

static void on_timer(struct loop_timer *t)
{
	struct podres *p = t->data;

	p->last_cycle = clock_mono_ns();
	p->kicked = 0;
	call_start(p, p->need_allocatable && !p->alpha ? STEP_ALLOCATABLE : STEP_LIST);
}

/*
 * Between cycles: the next one's timer, a refresh period (or, kicked,
 * kick_min_ns) after the last one started, whether it failed or not.
 */
static void cycle_next(struct podres *p)
{
	int64_t due = p->last_cycle + (p->kicked ? p->kick_min_ns : p->refresh_ns);

	if (p->step != STEP_IDLE)
		return;
	loop_timer_start(p->loop, &p->timer, due, on_timer, p);
}

char *podres_socket_resolve(const char *opt, const char *rootfs)
{
	char *path;

	if (opt)
		return *opt ? xstrdup(opt) : NULL;
	path = container_root_path(rootfs ? rootfs : "/", PODRES_SOCKET_DEFAULT + 1);
	if (!access(path, F_OK))
		return path;
	free(path);
	return NULL;
}

struct podres *podres_new(struct http_async *http, const struct podres_opts *o)
{
	struct podres *p = xcalloc(1, sizeof(*p));

	p->http = http;
	p->loop = http_async_loop(http);
	p->conn = http_async_conn(http);
	p->sock = xstrdup(o->socket);
	p->refresh_ns = o->refresh_ns > 0 ? o->refresh_ns : PODRES_REFRESH_DEFAULT_NS;
	p->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : PODRES_TIMEOUT_MS;
	p->max_bytes = o->max_bytes ? o->max_bytes : PODRES_ANSWER_MAX;
	p->kick_min_ns = o->kick_min_ns > 0 ? o->kick_min_ns : PODRES_KICK_MIN_NS;
	p->need_allocatable = 1;
	http_call_init(&p->call, p->max_bytes + GRPC_FRAME_HEADER);
	loop_timer_start(p->loop, &p->timer, 0, on_timer, p); /* the first cycle, from the loop */
	return p;
}

void podres_free(struct podres *p)
{
	if (!p)
		return;
	http_call_free(&p->call);
	loop_work_cancel(p->loop, &p->work); /* waits for a decode that runs */
	loop_timer_stop(p->loop, &p->timer);
	http_async_conn_close(p->http, p->conn);
	buf_free(&p->body);
	podres_table_free(p->decoded);
	podres_table_free(p->table);
	podres_table_free(p->alloc);
	free(p->sock);
	free(p);
}

void podres_kick(struct podres *p)
{
	if (!p || p->kicked)
		return;
	p->kicked = 1;
	if (p->step == STEP_IDLE && p->last_cycle + p->kick_min_ns < p->timer.due)
		cycle_next(p); /* sooner than the refresh it waited for */
}

const struct podres_table *podres_current(const struct podres *p)
{
	return p ? p->table : NULL;
}

const struct podres_table *podres_allocatable(const struct podres *p)
{
	return p ? p->alloc : NULL;
}

const char *podres_error(const struct podres *p)
{
	return p ? p->error : "";
}

const char *podres_version(const struct podres *p)
{
	return p && p->alpha ? "v1alpha1" : "v1";
}

unsigned long podres_lists(const struct podres *p)
{
	return p ? p->lists : 0;
}

unsigned long podres_updates(const struct podres *p)
{
	return p ? p->updates : 0;
}

unsigned long podres_cycles(const struct podres *p)
{
	return p ? p->cycles : 0;
}

const char *podres_socket(const struct podres *p)
{
	return p->sock;
}
