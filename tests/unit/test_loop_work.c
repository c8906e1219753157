/* SPDX-License-Identifier: MIT */
/*
 * The loop's hand-backs from threads (monitor/core/loop.c): work posted off
 * the loop runs on its workers in the order posted and its after callback
 * on the loop's thread; many posts all come back; a burst of finished works
 * and of sends to an async costs the loop one wakeup (one turn runs them
 * all, an async's callback once); cancel takes back queued, running and
 * done work (the after never runs, the running one is waited for); a loop
 * freed with work queued and running loses nothing under ASan; loop_count
 * counts what is posted and started; workers run at SCHED_BATCH.
 */
#include "../../common/timeutil.h"
#include "../../monitor/core/loop.h"
#include "tap.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct item {
	struct loop_work w;
	int policy;            /* the worker's scheduling policy */
	int n;                 /* its number */
	int delay_ms;          /* how long its work takes */
	int worked, aftered;
	pthread_t on;          /* the thread its after ran on */
	char *mem;             /* allocated by the work, freed by the after (ASan) */
};

static int order[256], norder;
static atomic_int started;

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void work(struct loop_work *w)
{
	struct item *it = w->data;

	atomic_fetch_add(&started, 1);
	it->policy = sched_getscheduler(0);
	if (it->delay_ms)
		sleep_ms(it->delay_ms);
	it->mem = malloc(64);
	it->worked = 1;
}

static void after(struct loop_work *w)
{
	struct item *it = w->data;

	it->aftered++;
	it->on = pthread_self();
	if (norder < 256)
		order[norder++] = it->n;
	free(it->mem);
	it->mem = NULL;
}

/* Turn l until pred(arg) or 5 s. */
static int turn_until(struct loop *l, int (*pred)(void *), void *arg)
{
	int64_t end = clock_mono_ns() + 5 * NS_PER_S;

	while (!pred(arg) && clock_mono_ns() < end)
		loop_run_once(l, clock_mono_ns() + 10 * NS_PER_MS, NULL);
	return pred(arg);
}

static int all_after(void *arg)
{
	struct item *its = arg;

	for (int i = 0; i < 100; i++)
		if (!its[i].aftered)
			return 0;
	return 1;
}

static int n_after(void *arg)
{
	return norder >= *(int *)arg;
}

static void test_order_many(void)
{
	struct loop *l = loop_new();
	struct item its[100];
	int same = 1, once = 1, thread_ok = 1, want = 2;
	struct item a = { .n = 1, .delay_ms = 50 }, b = { .n = 2 };

	memset(its, 0, sizeof(its));
	is_int(loop_count(l), 0, "an empty loop counts nothing");
	/* Ordering: the one posted first starts first; the afters come as works finish. */
	norder = 0;
	ok(!loop_work_post(l, &a.w, work, after, &a) && !loop_work_post(l, &b.w, work, after, &b), "two posts");
	is_int(loop_count(l), 2, "two works posted count");
	ok(loop_work_active(&a.w) && loop_work_active(&b.w), "posted works are active");
	ok(turn_until(l, n_after, &want), "both afters ran");
	ok(norder == 2 && order[0] == 2 && order[1] == 1, "the quick one's after first, as the works finished (%d %d)",
	   order[0], order[1]);
	ok(!loop_work_active(&a.w) && !loop_work_active(&b.w) && a.aftered == 1 && b.aftered == 1,
	   "idle after their afters, each once");
	ok(pthread_equal(a.on, pthread_self()) && pthread_equal(b.on, pthread_self()), "afters run on the loop's thread");
	is_int(a.policy, SCHED_BATCH, "works run at SCHED_BATCH (a loop at a real-time priority never waits behind them)");
	/* Many posts, more than there are workers: each one's after once, on the loop. */
	norder = 0;
	for (int i = 0; i < 100; i++) {
		its[i].n = i;
		its[i].delay_ms = i % 10 == 0;
		if (loop_work_post(l, &its[i].w, work, after, &its[i]))
			same = 0;
	}
	ok(same, "100 posts");
	is_int(loop_count(l), 100, "100 works count");
	ok(turn_until(l, all_after, its), "100 afters ran");
	for (int i = 0; i < 100; i++) {
		once &= its[i].aftered == 1 && its[i].worked && !its[i].mem;
		thread_ok &= pthread_equal(its[i].on, pthread_self());
	}
	ok(once && norder == 100, "each work ran and its after once (%d)", norder);
	ok(thread_ok, "every after on the loop's thread");
	is_int(loop_count(l), 0, "nothing counts once every after ran");
	/* Re-posting an item whose after ran */
	want = 101;
	ok(!loop_work_post(l, &its[0].w, work, after, &its[0]) && turn_until(l, n_after, &want) && its[0].aftered == 2,
	   "an item is posted again after its after");
	loop_free(l);
}

/* A turn of 30 ms that nothing woke: it waited the whole time. */
static int quiet_turn(struct loop *l)
{
	int64_t t0 = clock_mono_ns();

	loop_run_once(l, t0 + 30 * NS_PER_MS, NULL);
	return clock_mono_ns() - t0 >= 25 * NS_PER_MS;
}

/* All done before the loop turns: one turn runs every after. */
static void test_coalesce(void)
{
	struct loop *l = loop_new();
	struct item its[40];
	int64_t end;
	int all;

	memset(its, 0, sizeof(its));
	norder = 0;
	for (int i = 0; i < 40; i++) {
		its[i].n = i;
		loop_work_post(l, &its[i].w, work, after, &its[i]);
	}
	/* wait (off the loop) until every work is done */
	end = clock_mono_ns() + 5 * NS_PER_S;
	do {
		all = 1;
		sleep_ms(5);
		for (int i = 0; i < 40; i++)
			all &= __atomic_load_n(&its[i].w.state, __ATOMIC_ACQUIRE) == 3;
	} while (!all && clock_mono_ns() < end);
	ok(all, "40 works done before the loop turns");
	is_int(loop_run_once(l, clock_mono_ns() + NS_PER_S, NULL), 0, "one turn");
	is_int(norder, 40, "one wakeup: one turn ran all 40 afters");
	ok(quiet_turn(l) && norder == 40, "and the next turn waits its whole time (the wakeups were one)");
	loop_free(l);
}

/* ---- asyncs ---- */

static int async_runs;

static void on_async(struct loop_async *a)
{
	(void)a;
	async_runs++;
}

struct sender {
	struct loop *l;
	struct loop_async *a;
	int n;
};

static void *send_many(void *arg)
{
	struct sender *s = arg;

	for (int i = 0; i < s->n; i++)
		loop_async_send(s->l, s->a);
	return NULL;
}

static int async_ran(void *arg)
{
	(void)arg;
	return async_runs > 0;
}

static void test_async(void)
{
	struct loop *l = loop_new();
	struct loop_async a = { 0 }, b = { 0 };
	struct sender s = { l, &a, 10000 };
	pthread_t th[4];

	async_runs = 0;
	ok(!loop_async_start(l, &a, on_async, NULL) && !loop_async_start(l, &b, on_async, NULL), "two asyncs start");
	is_int(loop_count(l), 2, "started asyncs count");
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, send_many, &s);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	is_int(loop_run_once(l, clock_mono_ns() + NS_PER_S, NULL), 0, "40000 sends from 4 threads: one turn");
	is_int(async_runs, 1, "its callback ran once, the other's not at all");
	ok(quiet_turn(l) && async_runs == 1, "nothing left for the next turn");
	/* A send from a thread wakes a loop that waits */
	async_runs = 0;
	s.n = 1;
	pthread_create(&th[0], NULL, send_many, &s);
	ok(turn_until(l, async_ran, NULL), "a send from a thread wakes the waiting loop");
	pthread_join(th[0], NULL);
	loop_async_stop(l, &b);
	loop_async_send(l, &a);
	loop_async_stop(l, &a);
	async_runs = 0;
	loop_run_once(l, clock_mono_ns() + 20 * NS_PER_MS, NULL);
	is_int(async_runs, 0, "a stopped async's send is never called back");
	is_int(loop_count(l), 0, "stopped asyncs do not count");
	loop_free(l);
}

/* ---- cancel and free with work in flight ---- */

static void test_cancel(void)
{
	struct loop *l = loop_new();
	struct item *slow = calloc(LOOP_WORKERS_MAX, sizeof(*slow)), *queued = calloc(1, sizeof(*queued));
	struct item *done = calloc(1, sizeof(*done));
	int64_t t0, end;

	atomic_store(&started, 0);
	norder = 0;
	for (int i = 0; i < LOOP_WORKERS_MAX; i++) {
		slow[i].n = i;
		slow[i].delay_ms = i ? 800 : 100; /* the others still run at loop_free */
		loop_work_post(l, &slow[i].w, work, after, &slow[i]);
	}
	loop_work_post(l, &queued->w, work, after, queued);
	end = clock_mono_ns() + 5 * NS_PER_S;
	while (atomic_load(&started) < LOOP_WORKERS_MAX && clock_mono_ns() < end)
		sleep_ms(1);
	/* every worker busy: queued waits in the queue */
	loop_work_cancel(l, &queued->w);
	ok(!loop_work_active(&queued->w) && !queued->worked, "a queued work cancelled never runs");
	free(queued); /* ASan: nothing touches it after */
	t0 = clock_mono_ns();
	loop_work_cancel(l, &slow[0].w);
	ok(slow[0].worked && clock_mono_ns() - t0 >= 50 * NS_PER_MS, "cancelling a running work waits for its work");
	free(slow[0].mem); /* the after that would have freed it never runs */
	slow[0].mem = NULL;
	/* done, its after not yet run */
	done->n = 99;
	loop_work_post(l, &done->w, work, after, done);
	end = clock_mono_ns() + 5 * NS_PER_S;
	while (__atomic_load_n(&done->w.state, __ATOMIC_ACQUIRE) != 3 && clock_mono_ns() < end)
		sleep_ms(1);
	loop_work_cancel(l, &done->w);
	free(done->mem);
	free(done);
	loop_run_once(l, clock_mono_ns() + 20 * NS_PER_MS, NULL);
	ok(norder == 0 || (norder > 0 && order[0] != 99), "a done work cancelled: its after never runs");
	is_int(slow[0].aftered, 0, "nor a cancelled running one's");
	/* free with 3 works running: the loop waits for them, runs no after, leaks nothing */
	loop_free(l);
	for (int i = 1; i < LOOP_WORKERS_MAX; i++) {
		ok(slow[i].worked && !slow[i].aftered, "work %d in flight at loop_free finished, no after", i);
		free(slow[i].mem);
	}
	free(slow);
	/* free with work still queued behind busy workers */
	l = loop_new();
	{
		struct item it[LOOP_WORKERS_MAX + 3];

		memset(it, 0, sizeof(it));
		for (int i = 0; i < LOOP_WORKERS_MAX + 3; i++) {
			it[i].delay_ms = 30;
			loop_work_post(l, &it[i].w, work, after, &it[i]);
		}
		loop_free(l);
		for (int i = 0; i < LOOP_WORKERS_MAX + 3; i++) {
			ok(!loop_work_active(&it[i].w) && !it[i].aftered, "work %d: idle after loop_free, no after", i);
			free(it[i].mem);
		}
	}
}

int main(void)
{
	test_order_many();
	test_coalesce();
	test_async();
	test_cancel();
	return done_testing();
}
