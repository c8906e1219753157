/* SPDX-License-Identifier: MIT */
/* The push-sink skeleton: reader, sender, drain; see push.h. */
#include "push.h"
#include "log.h"
#include "timeutil.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define READ_WAIT_MS 100           /* the reader looks at its stop flag and calls idle this often */
#define TICK_NS (50 * NS_PER_MS)   /* the main thread looks at the signals and the sender this often */
#define IDLE_WAIT_NS NS_PER_S      /* an idle sender looks at its queue at least this often */

void push_init(struct push *p, const struct push_opts *opts, const struct push_ops *ops, void *ud)
{
	pthread_condattr_t ca;

	memset(p, 0, sizeof(*p));
	p->o = *opts;
	p->ops = ops;
	p->ud = ud;
	pthread_mutex_init(&p->mu, NULL);
	/* The timed waits run on the monotonic clock: a wall clock set back does not stretch them. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	atomic_init(&p->stop_reading, 0);
	sink_input_init(&p->in, p->o.tag, p->o.fd, p->o.max_line);
	p->next_stats_ns = clock_mono_ns() + PUSH_STATS_NS;
	sink_input_set_wait(&p->in, READ_WAIT_MS);
	p->in.on_bad = ops->bad_line;
	p->in.ud = ud;
}

void push_free(struct push *p)
{
	sink_input_free(&p->in);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
}

void push_lock(struct push *p)
{
	pthread_mutex_lock(&p->mu);
}

void push_unlock(struct push *p)
{
	pthread_mutex_unlock(&p->mu);
}

void push_notify(struct push *p)
{
	pthread_cond_broadcast(&p->cv);
}

const char *push_stop_why(const struct push *p)
{
	return p->stop_why;
}

/* With the lock. */
static int give_up_locked(const struct push *p)
{
	return p->stop_now || (p->draining && clock_mono_ns() >= p->deadline_ns);
}

int push_give_up(void *push)
{
	struct push *p = push;
	int r;

	pthread_mutex_lock(&p->mu);
	r = give_up_locked(p);
	pthread_mutex_unlock(&p->mu);
	return r;
}

/* With the lock: wait for a notification, until mono until_ns, or until the drain deadline. */
static void wait_locked(struct push *p, int64_t until_ns)
{
	struct timespec ts;

	if (p->draining && p->deadline_ns < until_ns)
		until_ns = p->deadline_ns;
	ts.tv_sec = (time_t)(until_ns / NS_PER_S);
	ts.tv_nsec = (long)(until_ns % NS_PER_S);
	pthread_cond_timedwait(&p->cv, &p->mu, &ts);
}

/* With the lock: wait ms, notifications notwithstanding, ending early when it is time to give up. */
static void sleep_locked(struct push *p, int64_t ms)
{
	int64_t end = clock_mono_ns() + ms * NS_PER_MS;

	while (!give_up_locked(p) && clock_mono_ns() < end)
		wait_locked(p, end);
}

void push_sleep(void *push, int64_t ms)
{
	struct push *p = push;

	pthread_mutex_lock(&p->mu);
	sleep_locked(p, ms);
	pthread_mutex_unlock(&p->mu);
}

void push_stop(struct push *p, const char *why)
{
	pthread_mutex_lock(&p->mu);
	if (!p->stop_now) {
		p->stop_now = 1;
		snprintf(p->stop_why, sizeof(p->stop_why), "%s", why);
	}
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

/* With the lock: the drain begins (once), with its deadline; sig 0: the end of the input. */
static void start_drain(struct push *p, int sig)
{
	if (p->draining)
		return;
	p->draining = 1;
	p->deadline_ns = clock_mono_ns() + p->o.drain_ms * NS_PER_MS;
	if (p->ops->draining)
		p->ops->draining(p->ud, sig);
	else if (sig)
		log_info("%s: %s: sending what is queued for at most %" PRId64 " ms", p->o.tag,
			 sig == SIGINT ? "SIGINT" : "SIGTERM", p->o.drain_ms);
	pthread_cond_broadcast(&p->cv);
}

/* ---- the reader ---------------------------------------------------------- */

static void *reader_main(void *arg)
{
	struct push *p = arg;
	int ended = 0; /* by itself: the end of the input or a read error, not a stop */

	while (!atomic_load(&p->stop_reading)) {
		json_t *rep = NULL;
		int rc = sink_input_next(&p->in, &rep);

		if (rc == SINK_INPUT_AGAIN) {
			if (p->ops->idle)
				p->ops->idle(p->ud, p, clock_mono_ns());
			continue;
		}
		if (rc == 1) {
			p->ops->report(p->ud, p, rep, &p->in);
			json_decref(rep);
			continue;
		}
		if (rc < 0)
			log_err("%s: %s", p->o.tag, p->in.err);
		else
			log_info("%s: stdin: end of input after %llu lines", p->o.tag, (unsigned long long)p->in.lines);
		ended = 1;
		break;
	}
	if (p->ops->end)
		p->ops->end(p->ud, p);
	pthread_mutex_lock(&p->mu);
	p->input_done = 1;
	if (ended)
		start_drain(p, 0);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* ---- the sender ---------------------------------------------------------- */

static void *sender_main(void *arg)
{
	struct push *p = arg;
	struct push_try t = { 0 };
	int64_t flush_ns = p->o.flush_ms * NS_PER_MS, next_flush = clock_mono_ns() + flush_ns;
	int flushing = 0, in_hand = 0;

	pthread_mutex_lock(&p->mu);
	while (!give_up_locked(p)) {
		int rc = p->ops->take(p->ud, flushing || p->draining || p->input_done);
		int64_t now;

		if (rc < 0)
			continue;
		if (rc == 0) {
			if (p->input_done)
				break; /* the queue is empty and nothing more comes */
			now = clock_mono_ns();
			if (flushing) {
				/* Everything queued went: the next flush one interval on. */
				flushing = 0;
				next_flush += flush_ns;
				if (next_flush < now)
					next_flush = now + flush_ns;
			}
			if (flush_ns && now >= next_flush) {
				flushing = 1;
				continue;
			}
			wait_locked(p, flush_ns && next_flush < now + IDLE_WAIT_NS ? next_flush : now + IDLE_WAIT_NS);
			if (flush_ns && clock_mono_ns() >= next_flush)
				flushing = 1;
			continue;
		}
		in_hand = 1;
		pthread_mutex_unlock(&p->mu);
		t.result = PUSH_DONE;
		t.wait_ms = 0;
		p->ops->deliver(p->ud, p, &t);
		pthread_mutex_lock(&p->mu);
		p->ops->settle(p->ud, &t);
		if (t.result == PUSH_LEFT) {
			in_hand = 0;
			break;
		}
		if (t.result == PUSH_RETRY) {
			t.failed++;
			sleep_locked(p, t.wait_ms);
		} else {
			in_hand = 0;
			t.failed = 0;
		}
	}
	if (in_hand) {
		/* Stopped between tries: what it holds stays undelivered. */
		t.result = PUSH_LEFT;
		p->ops->settle(p->ud, &t);
	}
	p->sender_done = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* ---- the main thread ----------------------------------------------------- */

/* With the lock: a SIGINT or SIGTERM. The first drains, the second stops. */
static void on_signal(struct push *p, int sig)
{
	const char *name = sig == SIGINT ? "SIGINT" : "SIGTERM";

	p->signals++;
	atomic_store(&p->stop_reading, 1);
	if (p->signals == 1) {
		start_drain(p, sig);
		return;
	}
	log_warn("%s: %s again: exiting now", p->o.tag, strsignal(sig));
	if (!p->stop_now) {
		p->stop_now = 1;
		snprintf(p->stop_why, sizeof(p->stop_why), "a second %s", name);
	}
	pthread_cond_broadcast(&p->cv);
}

int push_run(struct push *p)
{
	pthread_t rt, st;
	sigset_t sigs;
	int rc;

	/* Signals go to the main thread only, through sigtimedwait: the threads inherit the mask. */
	sink_block_signals(&sigs);
	if ((rc = pthread_create(&rt, NULL, reader_main, p))) {
		log_err("%s: cannot start the reader thread: %s", p->o.tag, strerror(rc));
		return -rc;
	}
	if ((rc = pthread_create(&st, NULL, sender_main, p))) {
		log_err("%s: cannot start the sender thread: %s", p->o.tag, strerror(rc));
		atomic_store(&p->stop_reading, 1);
		pthread_join(rt, NULL);
		return -rc;
	}
	for (;;) {
		struct timespec tick = { TICK_NS / NS_PER_S, TICK_NS % NS_PER_S };
		int sig = sigtimedwait(&sigs, NULL, &tick), done;

		if (sig == SIGINT || sig == SIGTERM) {
			pthread_mutex_lock(&p->mu);
			on_signal(p, sig);
			pthread_mutex_unlock(&p->mu);
		}
		if (p->ops->stats && clock_mono_ns() >= p->next_stats_ns) {
			if (log_level() >= LOG_LVL_INFO)
				p->ops->stats(p->ud, clock_mono_ns());
			p->next_stats_ns = clock_mono_ns() + PUSH_STATS_NS;
		}
		pthread_mutex_lock(&p->mu);
		done = p->sender_done;
		pthread_mutex_unlock(&p->mu);
		if (done)
			break;
	}
	/* The sender is done: the reader has nobody to queue for. It sees the flag within READ_WAIT_MS. */
	atomic_store(&p->stop_reading, 1);
	pthread_join(st, NULL);
	pthread_join(rt, NULL);
	return 0;
}
