/* SPDX-License-Identifier: MIT */
/*
 * The scheduler (monitor/app/sched.c) on a fake clock: a simulated hour of
 * 1 s / 2 s / 5 s / 7 s groups, counted exactly; coalescing; no drift with
 * late wake-ups; skipping (not replaying) slots missed by a slow collector.
 */
#include "../../monitor/app/monitor.h"
#include "../../monitor/app/sched.h"
#include "tap.h"

#include <stdlib.h>

#define S (1000000000LL)
#define MS (1000000LL)

struct run {
	int64_t periods[4];
	struct sched_job jobs[4];
	long count[4];
	long reports;
	long max_late; /* ns a job ran after its slot */
	int drift;     /* a job ran at a time that is not start + k * period (+ wake-up lateness) */
};

/*
 * Drive the scheduler for `span` ns. Each wake-up is `late(i)` ns after the
 * due time; collecting takes `cost` ns (per report).
 */
static void simulate(struct run *r, int njobs, int64_t span, int64_t (*late)(long), int64_t cost)
{
	struct sched s;
	struct sched_job *taken[4];
	int64_t now = 0;

	sched_init(&s);
	for (int i = 0; i < njobs; i++) {
		r->jobs[i].period = r->periods[i];
		r->jobs[i].data = (void *)(long)i;
		sched_add(&s, &r->jobs[i], r->periods[i]);
	}
	for (;;) {
		int64_t due = sched_next_due(&s);
		size_t n;

		if (due > span)
			break;
		now = due + late(r->reports);
		n = sched_take(&s, now, COALESCE_NS, taken, 4);
		r->reports++;
		for (size_t k = 0; k < n; k++) {
			long i = (long)taken[k]->data;
			int64_t slot = taken[k]->next_due;

			r->count[i]++;
			if (slot % r->periods[i] != 0)
				r->drift = 1;
			if (now - slot > r->max_late)
				r->max_late = (long)(now - slot);
		}
		now += cost;
		for (size_t k = 0; k < n; k++)
			sched_requeue(&s, taken[k], now);
	}
	sched_free(&s);
}

static int64_t on_time(long i)
{
	(void)i;
	return 0;
}

static int64_t jittery(long i)
{
	/* 0..3 ms late, deterministic. */
	return (int64_t)((i * 7919) % 3000) * 1000;
}

int main(void)
{
	struct run r = { .periods = { 1 * S, 2 * S, 5 * S, 7 * S } };
	long distinct = 0;

	/* Reports: one per distinct due time in (0, 3600]: inclusion-exclusion by brute force. */
	for (long t = 1; t <= 3600; t++)
		if (t % 1 == 0 || t % 2 == 0 || t % 5 == 0 || t % 7 == 0)
			distinct++;

	simulate(&r, 4, 3600 * S, on_time, 0);
	is_int(r.count[0], 3600, "1 s group runs 3600 times in an hour");
	is_int(r.count[1], 1800, "2 s group runs 1800 times");
	is_int(r.count[2], 720, "5 s group runs 720 times");
	is_int(r.count[3], 514, "7 s group runs 514 times");
	is_int(r.reports, distinct, "groups due together share one report");
	ok(!r.drift, "every run is on its slot (no drift)");

	/* Late wake-ups (0..3 ms) must not accumulate. */
	memset(&r, 0, sizeof(r));
	r.periods[0] = 1 * S;
	r.periods[1] = 2 * S;
	r.periods[2] = 5 * S;
	r.periods[3] = 7 * S;
	simulate(&r, 4, 3600 * S, jittery, 1 * MS);
	is_int(r.count[0], 3600, "with jitter: 1 s group still 3600 runs");
	is_int(r.count[3], 514, "with jitter: 7 s group still 514 runs");
	ok(!r.drift && r.max_late < 5 * MS, "with jitter: no drift, at most %ld us late", r.max_late / 1000);
	is_int(r.reports, distinct, "with jitter: same number of reports");

	/* Coalescing: jobs due within the window join the report; beyond it they do not. */
	{
		struct sched s;
		struct sched_job a = { .period = S }, b = { .period = S }, c = { .period = S }, *out[3];

		sched_init(&s);
		sched_add(&s, &a, 1000 * MS);
		sched_add(&s, &b, 1000 * MS + COALESCE_NS);
		sched_add(&s, &c, 1000 * MS + COALESCE_NS + 1);
		is_int(sched_take(&s, 1000 * MS, COALESCE_NS, out, 3), 2, "jobs within 5 ms coalesce");
		ok(out[0] == &a && out[1] == &b, "taken earliest first");
		is_int(sched_take(&s, 1000 * MS, COALESCE_NS, out, 3), 0, "a job 5 ms + 1 ns later waits");
		sched_free(&s);
	}

	/* Stable tie-break: equal due times come out in insertion order. */
	{
		struct sched s;
		struct sched_job j[8], *out[8];
		int order_ok = 1;

		sched_init(&s);
		for (int i = 0; i < 8; i++) {
			j[i].period = S;
			sched_add(&s, &j[i], 5 * S);
		}
		is_int(sched_take(&s, 5 * S, 0, out, 8), 8, "all eight equal-time jobs taken");
		for (int i = 0; i < 8; i++)
			order_ok &= out[i] == &j[i];
		ok(order_ok, "equal due times keep insertion order");
		sched_free(&s);
	}

	/* A collector slower than its period: missed slots are skipped, not replayed. */
	{
		struct sched s;
		struct sched_job j = { .period = S }, *out[1];
		unsigned skipped;

		sched_init(&s);
		sched_add(&s, &j, S);
		sched_take(&s, S, 0, out, 1);
		skipped = sched_requeue(&s, &j, S + 3500 * MS); /* collection took 3.5 s */
		is_int(skipped, 3, "three slots skipped");
		is_int(j.next_due, 5 * S, "next slot stays on the grid (5 s)");
		is_int(sched_take(&s, 5 * S, 0, out, 1), 1, "one run at 5 s, not a burst");
		is_int(sched_take(&s, 5 * S, 0, out, 1), 0, "nothing else due at 5 s");
		sched_free(&s);
	}
	/* max smaller than what is due: the earliest come out, the rest stay for the next take. */
	{
		struct sched s;
		struct sched_job j[3] = { { .period = S }, { .period = S }, { .period = S } }, *out[3];

		sched_init(&s);
		sched_add(&s, &j[0], 3 * S);
		sched_add(&s, &j[1], 2 * S);
		sched_add(&s, &j[2], 1 * S);
		is_int(sched_take(&s, 3 * S, 0, out, 2), 2, "max 2: two taken");
		ok(out[0] == &j[2] && out[1] == &j[1], "the two earliest, earliest first");
		is_int(sched_next_due(&s), 3 * S, "the third is still due, not taken");
		is_int(sched_take(&s, 3 * S, 0, out, 2), 1, "the next take has it");
		sched_free(&s);
	}
	is_int(sched_next_due(&(struct sched){ 0 }), INT64_MAX, "empty scheduler has nothing due");
	return done_testing();
}
