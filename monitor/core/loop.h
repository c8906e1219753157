/* SPDX-License-Identifier: MIT */
/*
 * The producer's event loop: one thread waits, in one ppoll, on every file
 * descriptor and deadline that any part of the program registered, and
 * calls the owner back when one is ready (redis ae's file and time events,
 * libuv's uv_poll and uv_timer). An HTTP transfer's socket, an
 * asynchronous collector's descriptor, stdout's hang-up: each is a watch; a
 * metric group's due time, a fetch's deadline, the next metadata fetch or
 * the SIGHUP reload is a timer (the producer has no other clock).
 *
 * A callback does a bounded amount of work and returns; it may start and
 * stop any watch or timer, its own included, and free what it owns once
 * that is stopped. Nothing here reads or writes the report stream.
 *
 * Threads hand back to the loop one way (libuv's uv_queue_work and
 * uv_async_send): work posted with loop_work_post runs on the loop's own
 * worker threads and its after callback runs on the loop; a thread of the
 * caller's wakes the loop with loop_async_send. Both share one eventfd the
 * loop watches, written once however many hand-backs pile up before the
 * loop turns.
 *
 * Ownership: watches, timers, works and asyncs are the caller's (embedded
 * in its own state); the loop borrows each while it is started or posted,
 * so stop (cancel) it before freeing it. A loop must be empty (every watch
 * and timer stopped) when it is freed.
 */
#ifndef ACCEL_LOOP_H
#define ACCEL_LOOP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

struct loop;
struct loop_watch;
struct loop_timer;
struct loop_work;
struct loop_async;

/* revents: poll(2)'s POLLIN, POLLOUT, POLLERR, POLLHUP, ... as ppoll returned them. */
typedef void (*loop_watch_cb)(struct loop_watch *w, short revents);
typedef void (*loop_timer_cb)(struct loop_timer *t);

struct loop_watch {
	int fd;
	short events;     /* POLLIN, POLLOUT; POLLERR and POLLHUP are always reported */
	loop_watch_cb cb;
	void *data;       /* the caller's */
	uint64_t id;      /* internal: 0 when stopped */
};

struct loop_timer {
	int64_t due;      /* CLOCK_MONOTONIC ns */
	loop_timer_cb cb;
	void *data;       /* the caller's */
	uint64_t id;      /* internal: 0 when stopped; also the tie-break (earlier start first) */
};

struct loop *loop_new(void);
/* NULL-safe. Logs (debug) and forgets whatever is still registered. */
void loop_free(struct loop *l);

/* Call cb(w, revents) whenever fd is ready for events (restarting a started watch moves it). */
void loop_watch_start(struct loop *l, struct loop_watch *w, int fd, short events, loop_watch_cb cb, void *data);
/* No-op on a stopped watch. */
void loop_watch_stop(struct loop *l, struct loop_watch *w);

/* Call cb(t) once, at due (CLOCK_MONOTONIC ns) or as soon after as the loop gets to it. */
void loop_timer_start(struct loop *l, struct loop_timer *t, int64_t due, loop_timer_cb cb, void *data);
/* No-op on a stopped timer. */
void loop_timer_stop(struct loop *l, struct loop_timer *t);

/* Is it started? */
static inline int loop_timer_active(const struct loop_timer *t)
{
	return t->id != 0;
}
static inline int loop_watch_active(const struct loop_watch *w)
{
	return w->id != 0;
}

/*
 * Work off the loop. work(w) runs on one of the loop's worker threads
 * (started as posts need them, at most LOOP_WORKERS_MAX, SCHED_BATCH, every
 * signal blocked), in the order posted; it must touch nothing but what w
 * reaches. Then after(w) runs on the loop, in the order the works
 * finished, unless w was cancelled.
 */
typedef void (*loop_work_fn)(struct loop_work *w);

struct loop_work {
	loop_work_fn work;  /* on a worker */
	loop_work_fn after; /* on the loop */
	void *data;         /* the caller's */
	/* internal */
	int state;          /* 0 idle, 1 queued, 2 running, 3 done (after not yet run) */
	struct loop_work *next;
};

#define LOOP_WORKERS_MAX 4

/*
 * Post w (idle: not posted, or its after has run). 0, or -errno when the
 * loop can make no eventfd or start no worker (w is not posted then).
 */
int loop_work_post(struct loop *l, struct loop_work *w, loop_work_fn work, loop_work_fn after, void *data);
/*
 * Take w back: queued, it never runs; running, this waits until its work
 * returns; done, its after never runs. w is idle after it (the caller may
 * free it and what work used). No-op on an idle work.
 */
void loop_work_cancel(struct loop *l, struct loop_work *w);
static inline int loop_work_active(const struct loop_work *w)
{
	return w->state != 0;
}

/* A wakeup any thread may send: cb(a) runs on the loop once per turn however many sends came. */
typedef void (*loop_async_cb)(struct loop_async *a);

struct loop_async {
	loop_async_cb cb;
	void *data;         /* the caller's */
	/* internal */
	int pending;        /* atomic: sent, cb not yet run */
	uint64_t id;        /* 0 when stopped */
};

/* Start a (loop thread). 0, or -errno when the loop can make no eventfd. */
int loop_async_start(struct loop *l, struct loop_async *a, loop_async_cb cb, void *data);
/* Any thread, a started async: cb(a) runs at the loop's next turn. Async-signal-unsafe. */
void loop_async_send(struct loop *l, struct loop_async *a);
/* Stop a (loop thread; no thread may send to it after). No-op on a stopped one. */
void loop_async_stop(struct loop *l, struct loop_async *a);

/* The earliest timer's due time, or INT64_MAX when none is started. */
int64_t loop_next_timer(const struct loop *l);

/*
 * One turn (libuv's UV_RUN_ONCE): run the timers that are due, or else wait
 * in ppoll (with sigmask, NULL for the current mask) until the first of:
 * a watched fd is ready, a timer is due, until (CLOCK_MONOTONIC ns) comes,
 * or a signal; then run the callbacks of what became ready. Returns 1 when
 * until has come and nothing was left to run, 0 after running callbacks
 * (the caller checks its own conditions and turns again), -EINTR after a
 * signal, or another -errno from ppoll.
 */
int loop_run_once(struct loop *l, int64_t until, const sigset_t *sigmask);

/* How many watches, timers and asyncs are started and works posted (tests, and the check at exit). */
size_t loop_count(const struct loop *l);

#endif
