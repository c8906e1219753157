/* SPDX-License-Identifier: MIT */
/*
 * The push-sink skeleton (common/push.c) driving a fake sink over a pipe:
 * everything queued is delivered at the end of the input, tries that fail
 * are tried again after the wait the sink names, the flush interval sends
 * a partial batch, the first SIGTERM stops the reader and drains, a second
 * one stops at once and says so, the drain deadline stops a sender that
 * cannot deliver.
 */
#include "../../common/log.h"
#include "../../common/push.h"
#include "../../common/timeutil.h"
#include "tap.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

struct fake {
	struct push p;
	int queued;          /* reports waiting: the fake's queue, under the push lock */
	int batch;           /* take waits for this many unless told to flush */
	int in_hand;
	int fail_first;      /* tries that fail before one succeeds */
	int always_fail;
	int reports, ended, delivered, left, retries, drains, drain_sig;
	unsigned max_failed; /* the most failed tries seen in one push_try */
	int64_t first_delivery_ns;
};

static void f_report(void *ud, struct push *p, json_t *report, const struct sink_input *in)
{
	struct fake *f = ud;

	(void)report, (void)in;
	push_lock(p);
	f->reports++;
	f->queued++;
	push_notify(p);
	push_unlock(p);
}

static void f_end(void *ud, struct push *p)
{
	struct fake *f = ud;

	(void)p;
	f->ended = 1;
}

static int f_take(void *ud, int flush)
{
	struct fake *f = ud;

	if (f->in_hand)
		return 1;
	if (!f->queued || (!flush && f->queued < f->batch))
		return 0;
	f->queued--;
	f->in_hand = 1;
	return 1;
}

static void f_deliver(void *ud, struct push *p, struct push_try *t)
{
	struct fake *f = ud;

	(void)p;
	if (t->failed > f->max_failed)
		f->max_failed = t->failed;
	if (f->always_fail || (int)t->failed < f->fail_first) {
		t->result = PUSH_RETRY;
		t->wait_ms = 5;
	}
}

static void f_settle(void *ud, const struct push_try *t)
{
	struct fake *f = ud;

	if (t->result == PUSH_RETRY) {
		f->retries++;
		return;
	}
	f->in_hand = 0;
	if (t->result == PUSH_LEFT) {
		f->left++;
		return;
	}
	if (!f->delivered)
		f->first_delivery_ns = clock_mono_ns();
	f->delivered++;
}

static void f_draining(void *ud, int sig)
{
	struct fake *f = ud;

	f->drains++;
	f->drain_sig = sig;
}

static const struct push_ops ops = {
	.report = f_report,
	.end = f_end,
	.take = f_take,
	.deliver = f_deliver,
	.settle = f_settle,
	.draining = f_draining,
};

/* SIGTERM to the process after each of the delays (ms) in a 0-terminated list. */
static void *signaller(void *arg)
{
	const int *ms = arg;

	for (; *ms; ms++) {
		sleep_ns((int64_t)*ms * NS_PER_MS, NULL);
		kill(getpid(), SIGTERM);
	}
	return NULL;
}

/*
 * Run the fake: n reports written to the pipe, which is closed (eof) or
 * left open; SIGTERMs after the delays in sig (NULL: none). Returns the
 * seconds push_run took.
 */
static double run(struct fake *f, const struct push_opts *o, int n, int eof, const int *sig)
{
	int fds[2];
	pthread_t th;
	int64_t t0;

	if (pipe(fds))
		exit(2);
	for (int i = 0; i < n; i++)
		if (write(fds[1], "{\"n\":1}\n", 8) != 8)
			exit(2);
	if (eof)
		close(fds[1]);
	push_init(&f->p, &(struct push_opts){ .tag = "test", .fd = fds[0], .flush_ms = o->flush_ms,
					     .drain_ms = o->drain_ms },
		  &ops, f);
	if (sig)
		pthread_create(&th, NULL, signaller, (void *)sig);
	t0 = clock_mono_ns();
	is_int(push_run(&f->p), 0, "push_run: 0");
	t0 = clock_mono_ns() - t0;
	if (sig)
		pthread_join(th, NULL);
	push_free(&f->p);
	if (!eof)
		close(fds[1]);
	close(fds[0]);
	return (double)t0 / NS_PER_S;
}

int main(void)
{
	sigset_t sigs;
	struct fake f;
	double s;

	log_init("test", LOG_LVL_WARN);
	/* SIGTERM is for push_run's sigtimedwait alone: blocked before any thread starts. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	memset(&f, 0, sizeof(f));
	f.batch = 1;
	f.fail_first = 3;
	s = run(&f, &(struct push_opts){ .drain_ms = 5000 }, 5, 1, NULL);
	is_int(f.reports, 5, "end of input: five reports read");
	is_int(f.delivered, 5, "  all five delivered");
	is_int(f.retries, 15, "  each after three failed tries");
	is_int(f.max_failed, 3, "  the tries counted in push_try.failed");
	ok(f.drains == 1 && f.drain_sig == 0 && f.ended, "  one drain, for the end of input, after the end hook");
	is_str(push_stop_why(&f.p), "", "  no stop");
	ok(s < 2, "  and it returns at once (%.2f s)", s);

	/* The flush interval: one report of a batch of 10 goes after 100 ms; SIGTERM ends it. */
	{
		static const int at[] = { 1000, 0 };
		int64_t t0 = clock_mono_ns();

		memset(&f, 0, sizeof(f));
		f.batch = 10;
		run(&f, &(struct push_opts){ .flush_ms = 100, .drain_ms = 5000 }, 1, 0, at);
		ok(f.delivered == 1 && f.first_delivery_ns - t0 >= 90 * NS_PER_MS &&
			   f.first_delivery_ns - t0 < 900 * NS_PER_MS,
		   "a partial batch goes at the flush interval (%.0f ms)",
		   (double)(f.first_delivery_ns - t0) / NS_PER_MS);
	}

	/* SIGTERM with the input open: the reader stops, what is queued is delivered. */
	{
		static const int at[] = { 300, 0 };

		memset(&f, 0, sizeof(f));
		f.batch = 10;
		s = run(&f, &(struct push_opts){ .flush_ms = 60000, .drain_ms = 5000 }, 3, 0, at);
		ok(f.drains == 1 && f.drain_sig == SIGTERM, "SIGTERM: the drain, for SIGTERM");
		ok(f.ended, "  the reader was stopped (its end hook ran)");
		is_int(f.delivered, 3, "  the three queued were delivered at once (no flush interval)");
		ok(s < 2, "  in %.2f s", s);
	}

	/* A second SIGTERM while the sender retries: it stops at once, and says why. */
	{
		static const int at[] = { 200, 200, 0 };

		memset(&f, 0, sizeof(f));
		f.batch = 1;
		f.always_fail = 1;
		s = run(&f, &(struct push_opts){ .drain_ms = 60000 }, 1, 0, at);
		is_int(f.left, 1, "a second SIGTERM: the work in hand is left");
		is_str(push_stop_why(&f.p), "a second SIGTERM", "  named as the reason");
		ok(s < 3, "  at once, not at the 60 s deadline (%.2f s)", s);
	}

	/* The drain deadline: a sender that cannot deliver stops there. */
	memset(&f, 0, sizeof(f));
	f.batch = 1;
	f.always_fail = 1;
	s = run(&f, &(struct push_opts){ .drain_ms = 200 }, 2, 1, NULL);
	ok(f.left == 1 && f.delivered == 0 && f.queued == 1, "the drain deadline: one left in hand, one queued");
	is_str(push_stop_why(&f.p), "", "  no stop reason: the deadline");
	ok(s >= 0.19 && s < 2, "  after about the deadline (%.2f s)", s);
	return done_testing();
}
