/* SPDX-License-Identifier: MIT */
/*
 * The producer's end of its HTTP helper; see http_async.h.
 *
 * One helper at a time serves the calls in flight. A helper being ended
 * (idle) is kept aside until it has exited, so a new request never waits
 * on an old helper's exit: it starts a new one.
 */
#include "http_async.h"
#include "http_helper.h"
#include "http_wire.h"
#include "../core/loop.h"
#include "../../common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define READ_BUDGET ((size_t)1 << 20)   /* bytes read per loop callback: a large answer takes several */
#define REPLY_MAX_ALL ((size_t)64 << 20) /* the most body bytes any answer may carry */
#define END_WAIT_NS (3 * NS_PER_S)      /* a helper asked to end has this long before it is killed */

extern char **environ;

/* A helper process and our end of its socket. */
struct proc {
	pid_t pid;                /* 0: none */
	int fd;                   /* -1: none */
	struct loop_watch watch;
	int64_t end_by;           /* CLOCK_MONOTONIC: being ended; killed at this time (0: not being ended) */
};

struct http_async {
	struct loop *loop;           /* borrowed */
	char *program;
	struct proc cur;             /* serves the calls */
	struct proc old;             /* being ended */
	struct loop_timer timer;     /* deadlines: calls, the idle end, the old helper's kill */
	struct http_wire_in in;
	struct http_wire_out out;
	struct http_call *calls;     /* in flight */
	uint64_t next_id;
	unsigned next_conn;
	int64_t idle_at;             /* CLOCK_MONOTONIC: end the helper then (0: calls run) */
	char spawn_err[256];         /* the last start's failure, logged once ("" after a start that worked) */
	int64_t idle_ns;             /* HTTP_ASYNC_IDLE_NS */
};

static void arm(struct http_async *h);
static void on_cur(struct loop_watch *w, short revents);
static void on_old(struct loop_watch *w, short revents);

/* ---- the helper process ------------------------------------------------------------------------- */

/* Why a reaped helper ended, for messages. */
static void ended(int status, char *dst, size_t size)
{
	if (WIFEXITED(status))
		snprintf(dst, size, "exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(dst, size, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(dst, size, "status %d", status);
}

/* Reap p (killing it first unless it has exited); describe how it ended into why. */
static void reap(struct http_async *h, struct proc *p, int kill_it, char *why, size_t whysz)
{
	int status = 0;

	if (p->fd >= 0) {
		loop_watch_stop(h->loop, &p->watch);
		close(p->fd);
	}
	if (p->pid > 0) {
		if (kill_it || waitpid(p->pid, &status, WNOHANG) == 0) {
			kill(p->pid, SIGKILL);
			while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
				;
		}
		if (why)
			ended(status, why, whysz);
	}
	p->pid = 0;
	p->fd = -1;
	p->end_by = 0;
}

/* Start a helper. 0, or -errno with err. */
static int spawn(struct http_async *h, char *err, size_t errsz)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, dflt;
	char level[16];
	char *argv[] = { h->program, HTTP_HELPER_ARG, level, NULL };
	int sv[2], rc;

	snprintf(level, sizeof(level), "%d", log_level());
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		rc = errno;
		snprintf(err, errsz, "cannot make a socket for the HTTP helper: %s", strerror(rc));
		return -rc;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sv[1], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, sv[1], STDOUT_FILENO);
	posix_spawnattr_init(&attr);
	/* The producer blocks its signals outside ppoll; the helper must not inherit that. */
	sigemptyset(&none);
	sigemptyset(&dflt);
	sigaddset(&dflt, SIGPIPE);
	sigaddset(&dflt, SIGTERM);
	sigaddset(&dflt, SIGINT);
	sigaddset(&dflt, SIGHUP);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &dflt);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawn(&h->cur.pid, h->program, &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(sv[1]);
	if (rc) {
		close(sv[0]);
		h->cur.pid = 0;
		snprintf(err, errsz, "cannot run the HTTP helper %s: %s", h->program, strerror(rc));
		return -rc;
	}
	h->cur.fd = sv[0];
	fcntl(h->cur.fd, F_SETFL, O_NONBLOCK); /* the loop never blocks on it */
	http_wire_in_free(&h->in);
	http_wire_in_init(&h->in, REPLY_MAX_ALL);
	http_wire_out_free(&h->out);
	http_wire_out_init(&h->out);
	loop_watch_start(h->loop, &h->cur.watch, h->cur.fd, POLLIN, on_cur, h);
	h->spawn_err[0] = '\0';
	log_debug("http: helper %d started", (int)h->cur.pid);
	return 0;
}

/* Ask the current helper to end (it reads EOF and exits); it is reaped when it has, or killed at end_by. */
static void end_cur(struct http_async *h)
{
	if (h->cur.pid <= 0)
		return;
	if (h->old.pid > 0)
		reap(h, &h->old, 1, NULL, 0);
	loop_watch_stop(h->loop, &h->cur.watch); /* the loop holds the watch's address: stopped before it moves */
	h->old = h->cur;
	h->cur.pid = 0;
	h->cur.fd = -1;
	shutdown(h->old.fd, SHUT_WR);
	h->old.end_by = clock_mono_ns() + END_WAIT_NS;
	loop_watch_start(h->loop, &h->old.watch, h->old.fd, POLLIN, on_old, h);
}

/* The old helper's socket: EOF once it has exited. */
static void on_old(struct loop_watch *w, short revents)
{
	struct http_async *h = w->data;
	char b[4096];

	(void)revents;
	for (;;) {
		ssize_t n = read(h->old.fd, b, sizeof(b));

		if (n > 0 || (n < 0 && errno == EINTR))
			continue; /* answers nobody waits for */
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		break;
	}
	reap(h, &h->old, 0, NULL, 0);
	arm(h);
}

/* ---- calls ---------------------------------------------------------------------------------------- */

static void unlink_call(struct http_async *h, struct http_call *c)
{
	for (struct http_call **pp = &h->calls; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	c->next = NULL;
	c->id = 0;
	if (!h->calls)
		h->idle_at = clock_mono_ns() + h->idle_ns;
}

/* End c with error (unless its answer is already set) and tell its owner. */
static void finish(struct http_async *h, struct http_call *c, const char *error)
{
	unlink_call(h, c);
	if (error)
		snprintf(c->error, sizeof(c->error), "%s", error);
	if (c->cb)
		c->cb(c, c->data);
}

/* Every call in flight ends with why (the helper is gone). */
static void fail_all(struct http_async *h, const char *why)
{
	while (h->calls)
		finish(h, h->calls, why);
}

/* The current helper is gone or useless: reap it and fail what it had. */
static void lost(struct http_async *h, const char *what, int kill_it)
{
	char how[64] = "", why[256];

	reap(h, &h->cur, kill_it, how, sizeof(how));
	snprintf(why, sizeof(why), "the HTTP helper %s (%s)", what, how);
	log_debug("http: %s", why);
	fail_all(h, why);
}

static struct http_call *find(struct http_async *h, uint64_t id)
{
	for (struct http_call *c = h->calls; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

/* One frame from the helper. */
static void frame(struct http_async *h, json_t *head, const char *body, size_t len)
{
	struct http_call *c = find(h, (uint64_t)json_integer_value(json_object_get(head, "id")));
	const char *ev = json_string_value(json_object_get(head, "ev"));

	if (!c || !ev)
		return; /* cancelled meanwhile */
	if (!strcmp(ev, "body")) {
		c->body_begun = 1;
		return;
	}
	if (strcmp(ev, "done"))
		return;
	snprintf(c->error, sizeof(c->error), "%s", json_string_value(json_object_get(head, "error")) ?
								 json_string_value(json_object_get(head, "error")) : "");
	c->status = (long)json_integer_value(json_object_get(head, "status"));
	c->over = json_is_true(json_object_get(head, "over"));
	c->first_byte_ns = json_integer_value(json_object_get(head, "first_byte_ns"));
	c->retry_after_ms = json_object_get(head, "retry_after_ms") ?
				    json_integer_value(json_object_get(head, "retry_after_ms")) : -1;
	buf_reset(&c->body);
	if (buf_add(&c->body, body, len) && !c->error[0])
		snprintf(c->error, sizeof(c->error), "the answer is over %zu bytes", c->body.cap);
	finish(h, c, NULL);
}

/* The current helper's socket: answers to read, requests to write. */
static void on_cur(struct loop_watch *w, short revents)
{
	struct http_async *h = w->data;
	json_t *head;
	const char *body;
	size_t len;
	int r = 0, f;

	if (revents & POLLOUT) {
		if ((f = http_wire_flush(&h->out, h->cur.fd)) < 0) {
			lost(h, "cannot be written to", 1);
			arm(h);
			return;
		}
		if (!f)
			loop_watch_start(h->loop, &h->cur.watch, h->cur.fd, POLLIN, on_cur, h);
	}
	if (h->cur.fd < 0)
		return;
	if (revents & (POLLIN | POLLHUP | POLLERR))
		r = http_wire_read(&h->in, h->cur.fd, READ_BUDGET);
	for (;;) {
		int k = http_wire_next(&h->in, &head, &body, &len);

		if (k < 0) {
			lost(h, "said something that is no answer", 1);
			arm(h);
			return;
		}
		if (!k)
			break;
		frame(h, head, body, len);
		json_decref(head);
		if (h->cur.fd < 0) /* a callback freed nothing of ours, but be sure */
			break;
	}
	if (r < 0 && h->cur.pid > 0)
		lost(h, r == -EPIPE ? "ended" : "cannot be read", r != -EPIPE);
	arm(h);
}

/*
 * Queue a frame to the current helper; it is written when the loop next
 * finds the socket writable (at once), with every frame queued meanwhile:
 * the requests of one cycle's due groups wake the helper once. A helper
 * that cannot be written to is killed there; its end is then read (EOF)
 * from the loop, which fails the calls, never from within a caller's call.
 */
static void send_frame(struct http_async *h, json_t *head)
{
	http_wire_put(&h->out, head, NULL, 0);
	loop_watch_start(h->loop, &h->cur.watch, h->cur.fd, POLLIN | POLLOUT, on_cur, h);
}

/* The timer: calls past their deadline, the idle end, the old helper's kill. */
static void on_timer(struct loop_timer *t)
{
	struct http_async *h = t->data;
	int64_t now = clock_mono_ns();

	if (h->old.pid > 0 && h->old.end_by && now >= h->old.end_by)
		reap(h, &h->old, 1, NULL, 0);
	for (struct http_call *c = h->calls; c; c = c->next) {
		if (now < c->deadline_ns)
			continue;
		if (c->error[0]) { /* ended before the helper could take it */
			finish(h, c, NULL);
		} else {
			char why[128];

			snprintf(why, sizeof(why), "no answer from the HTTP helper within %.3g s",
				 (double)(now - c->started_ns) / 1e9);
			log_warn("http: %s; it is stopped and started again", why);
			reap(h, &h->cur, 1, NULL, 0);
			fail_all(h, why);
		}
		break; /* the list changed: look again at the next turn */
	}
	if (!h->calls && h->cur.pid > 0 && h->idle_at && now >= h->idle_at) {
		log_debug("http: helper %d idle: ended", (int)h->cur.pid);
		end_cur(h);
	}
	arm(h);
}

/* The timer at the earliest of what it waits for. */
static void arm(struct http_async *h)
{
	int64_t due = INT64_MAX;

	for (struct http_call *c = h->calls; c; c = c->next)
		if (c->deadline_ns < due)
			due = c->deadline_ns;
	if (!h->calls && h->cur.pid > 0 && h->idle_at && h->idle_at < due)
		due = h->idle_at;
	if (h->old.pid > 0 && h->old.end_by && h->old.end_by < due)
		due = h->old.end_by;
	if (due == INT64_MAX)
		loop_timer_stop(h->loop, &h->timer);
	else
		loop_timer_start(h->loop, &h->timer, due, on_timer, h);
}

struct http_async *http_async_new(struct loop *loop, const char *program)
{
	struct http_async *h = xcalloc(1, sizeof(*h));

	h->loop = loop;
	h->program = xstrdup(program ? program : "/proc/self/exe");
	h->cur.fd = h->old.fd = -1;
	h->idle_ns = HTTP_ASYNC_IDLE_NS;
	http_wire_in_init(&h->in, REPLY_MAX_ALL);
	http_wire_out_init(&h->out);
	return h;
}

/* Ask p to end, wait for it at most END_WAIT_NS (blocking: the producer is exiting), then kill it. */
static void end_now(struct http_async *h, struct proc *p)
{
	int64_t until = clock_mono_ns() + END_WAIT_NS;
	char b[4096];

	if (p->pid <= 0)
		return;
	loop_watch_stop(h->loop, &p->watch);
	shutdown(p->fd, SHUT_WR);
	for (;;) {
		struct pollfd pf = { .fd = p->fd, .events = POLLIN };
		int64_t left = until - clock_mono_ns();
		ssize_t n;

		if (left <= 0 || poll(&pf, 1, (int)(left / NS_PER_MS) + 1) <= 0)
			break;
		n = read(p->fd, b, sizeof(b));
		if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
			break; /* it has exited */
	}
	reap(h, p, 0, NULL, 0);
}

void http_async_free(struct http_async *h)
{
	if (!h)
		return;
	while (h->calls)
		unlink_call(h, h->calls);
	end_now(h, &h->cur);
	end_now(h, &h->old);
	loop_timer_stop(h->loop, &h->timer);
	http_wire_in_free(&h->in);
	http_wire_out_free(&h->out);
	free(h->program);
	free(h);
}

unsigned http_async_conn(struct http_async *h)
{
	return ++h->next_conn;
}

void http_async_conn_close(struct http_async *h, unsigned conn)
{
	json_t *f;

	if (!h || h->cur.pid <= 0)
		return;
	f = json_pack("{s:s, s:I}", "op", "close", "conn", (json_int_t)conn);
	send_frame(h, f);
	json_decref(f);
}

pid_t http_async_helper_pid(const struct http_async *h)
{
	return h->cur.pid;
}

void http_async_idle(struct http_async *h, int64_t idle_ns)
{
	h->idle_ns = idle_ns;
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
		    const char *filter, http_call_cb cb, void *data)
{
	char err[512] = "";
	int64_t now = clock_mono_ns();
	json_t *f;

	if (c->id)
		return -EBUSY;
	c->h = h;
	c->cb = cb;
	c->data = data;
	c->id = ++h->next_id;
	c->error[0] = '\0';
	c->status = 0;
	c->over = 0;
	c->first_byte_ns = 0;
	c->retry_after_ms = -1;
	c->body_begun = 0;
	c->started_ns = now;
	buf_reset(&c->body);
	c->deadline_ns = now + (o->timeout_ms > 0 ? o->timeout_ms * NS_PER_MS : 60 * NS_PER_S) + HTTP_ASYNC_SLACK_NS;
	c->next = h->calls;
	h->calls = c;
	h->idle_at = 0;
	if (h->cur.pid <= 0 && spawn(h, err, sizeof(err))) {
		if (strcmp(err, h->spawn_err))
			log_warn("http: %s; every HTTP request fails until it can be run", err);
		snprintf(h->spawn_err, sizeof(h->spawn_err), "%s", err);
		/* Told from the loop, as any answer. */
		snprintf(c->error, sizeof(c->error), "%s", err);
		c->deadline_ns = now;
		arm(h);
		return 0;
	}
	f = json_pack("{s:s, s:I, s:I, s:o, s:I}", "op", "start", "id", (json_int_t)c->id, "conn", (json_int_t)conn,
		      "opts", http_wire_opts(o), "reply_max", (json_int_t)c->body.cap);
	if (filter)
		json_object_set_new(f, "filter", json_string(filter));
	send_frame(h, f);
	json_decref(f);
	arm(h);
	return 0;
}

void http_call_cancel(struct http_call *c)
{
	struct http_async *h = c->h;
	json_t *f;

	if (!c->id)
		return;
	if (h->cur.pid > 0 && !c->error[0]) {
		f = json_pack("{s:s, s:I}", "op", "cancel", "id", (json_int_t)c->id);
		send_frame(h, f);
		json_decref(f);
	}
	if (c->id)
		unlink_call(h, c);
	arm(h);
}
