/* SPDX-License-Identifier: MIT */
/*
 * The push-sink skeleton: what accel-cloudwatch and accel-remote-write do
 * the same way, so that each is only its mapping or encoding, its queue and
 * its transport (collectd's write plugins around the daemon's threads).
 *
 * Three threads. The reader reads the report stream (sink.h) and hands
 * each report to the sink, which maps it and queues the result under the
 * skeleton's lock; the sender takes work out of the sink's bounded queue
 * and delivers it, trying again after the wait the sink names until the
 * work is delivered or dropped for good; the main thread waits for a
 * signal and then gives the sender --drain-timeout to empty the queue:
 *
 *   - the end of the input (or a read error) starts the drain;
 *   - the first SIGTERM or SIGINT stops the reader (the sink's end hook
 *     queues what it still holds) and starts the drain;
 *   - a second one stops the sender at once (push_stop_why says so);
 *   - the drain ends when the queue is empty and the reader is done, or at
 *     the deadline, whichever comes first: push_give_up is then true, and
 *     the sink's waits and transfers end early.
 *
 * The sink sees the sender's work in three steps: take (with the lock
 * held: out of the queue, or a copy of its head for a queue on disk, acked
 * only once delivered), deliver (without the lock: one try), settle (with
 * the lock: acknowledge, count, log). Work still in the sender's hands
 * when it stops is settled as PUSH_LEFT.
 *
 * No mutable file-scope state: everything is in struct push, which the
 * caller owns (it may live on main's stack: every thread is joined before
 * push_run returns).
 */
#ifndef ACCEL_PUSH_H
#define ACCEL_PUSH_H

#include "sink.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

struct push;

/* What one try of the sender's work came to. */
enum push_result {
	PUSH_DONE,  /* settled: delivered, or dropped for good (the sink counted it and said why) */
	PUSH_RETRY, /* not delivered: try again after wait_ms */
	PUSH_LEFT,  /* not delivered and not to be tried again: the sender stops (it was told to give up) */
};

struct push_try {
	unsigned failed;         /* tries of this work that failed before this one; 0: the first */
	enum push_result result; /* set by deliver; PUSH_DONE when it sets nothing */
	int64_t wait_ms;         /* deliver, with PUSH_RETRY: how long to wait before the next try */
};

/* A sink's part. ud is the pointer given to push_init; p the skeleton. */
struct push_ops {
	/* The reader, without the lock: one report (borrowed); in->where names its line. */
	void (*report)(void *ud, struct push *p, json_t *report, const struct sink_input *in);
	/* The reader: no whole line came for the reader's wait (now_ns: monotonic). May be NULL. */
	void (*idle)(void *ud, struct push *p, int64_t now_ns);
	/* The reader, last: the input ended or the reader was stopped; queue what is held. May be NULL. */
	void (*end)(void *ud, struct push *p);
	/* Told of each bad line of the input after it is logged and counted (sink.h's on_bad). May be NULL. */
	void (*bad_line)(void *ud, enum stream_bad why);

	/*
	 * The sender, with the lock: take the next work into the sender's
	 * hands. flush: partial batches too (the flush interval came, or the
	 * drain). 1: work taken; 0: none now; -errno: none, said; look again.
	 */
	int (*take)(void *ud, int flush);
	/* The sender, without the lock: one try at delivering what take took; fills t. */
	void (*deliver)(void *ud, struct push *p, struct push_try *t);
	/* The sender, with the lock: settle the try t (acknowledge, count, log, release). */
	void (*settle)(void *ud, const struct push_try *t);

	/*
	 * With the lock, once: the drain begins; sig is the signal, 0 at the
	 * end of the input. NULL: the skeleton says, on a signal, that it
	 * sends what is queued for at most --drain-timeout.
	 */
	void (*draining)(void *ud, int sig);
	/* The main thread, without the lock, with -v: the sink's counters on stderr, every PUSH_STATS_NS. May be NULL. */
	void (*stats)(void *ud, int64_t now_ns);
};

#define PUSH_STATS_NS (10 * NS_PER_S) /* -v: how often the sink's counters are logged */

struct push_opts {
	const char *tag;   /* log prefix: "cloudwatch" */
	int fd;            /* the report stream: 0 */
	size_t max_line;   /* bytes; 0: the stream's default */
	int64_t flush_ms;  /* take(flush=1) at least this often; 0: the sender waits to be notified */
	int64_t drain_ms;  /* --drain-timeout */
};

struct push {
	struct push_opts o;
	const struct push_ops *ops;
	void *ud;
	struct sink_input in;    /* the reader's; its counters may be read once push_run returns */
	pthread_mutex_t mu;      /* guards what follows and the sink's queue and counters */
	pthread_cond_t cv;       /* on CLOCK_MONOTONIC */
	atomic_int stop_reading; /* the reader ends at its next look */
	int input_done;          /* the reader has finished (its end hook has run) */
	int draining;
	int64_t deadline_ns;     /* monotonic: the drain's end */
	int stop_now;            /* a second signal, or push_stop */
	char stop_why[160];      /* why stop_now was set; "" at the drain deadline */
	int signals;             /* SIGINT and SIGTERM taken */
	int sender_done;
	int64_t next_stats_ns;   /* the main thread's: when ops->stats runs next */
};

/* Set p up; nothing runs yet. opts is copied, ops and ud are borrowed until push_free. */
void push_init(struct push *p, const struct push_opts *opts, const struct push_ops *ops, void *ud);
void push_free(struct push *p);

/*
 * Run the pipeline until the drain ends: block SIGINT and SIGTERM, start
 * the reader and the sender, take the signals, join both. 0, or -errno
 * when a thread could not start (said).
 */
int push_run(struct push *p);

/* The skeleton's lock, for the reader's queueing and for counters the sender's hooks also touch. */
void push_lock(struct push *p);
void push_unlock(struct push *p);

/* Wake the sender (work queued). With or without the lock. */
void push_notify(struct push *p);

/* Stop the sender now (the work left is undelivered), why for push_stop_why. Without the lock. */
void push_stop(struct push *p, const char *why);

/*
 * 1 when the sender must stop trying: stopped, or draining past the
 * deadline. Without the lock. push is a struct push *: the signature of a
 * transport's abort callback (cw_http, rw_http), so it serves as one.
 */
int push_give_up(void *push);

/* Wait ms, or less when push_give_up turns true meanwhile. Without the lock; push as above. */
void push_sleep(void *push, int64_t ms);

/* After push_run: why the sender was stopped; "" when it was not, or by the drain deadline. */
const char *push_stop_why(const struct push *p);

#endif
