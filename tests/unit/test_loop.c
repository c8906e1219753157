/* SPDX-License-Identifier: MIT */
/*
 * The producer's event loop (monitor/core/loop.c) and asynchronous sources on it
 * (monitor/app/monitor.c): timers fire in order, callbacks may stop and free
 * what the loop is about to call; and a monitor with two fake asynchronous
 * groups served over pipes by child processes (one answers, one never does)
 * and one ordinary group writes every report on time, the answer in the
 * report of its due cycle and "no answer within 0.1 s" for the silent one;
 * the same for an asynchronous runtime, one of whose groups answers; and
 * a source that asks for its own lead (kept within the period) and reports
 * its own timeouts (overdue), never the monitor's "no answer within".
 *
 * The monitor tests run on a mock clock (common/timeutil.h lets a test
 * define clock_mono_ns): the real one plus what the test skipped. While a
 * fake server's answer is on its way (a child process: real milliseconds,
 * more on a loaded machine) the test waits for it with the clock standing
 * still, so the answer comes at once; otherwise time skips to the loop's
 * next timer or the next report. So a second of 100 ms reports takes
 * milliseconds, and each report's lateness and each cycle's length are
 * still measured, less the time the test waited for a CPU (a loaded
 * machine's delay, not the monitor's). The loop alone runs on the real
 * clock.
 */
#include "../../common/jsonw.h"
#include "../../common/timeutil.h"
#include "../../monitor/core/collector.h"
#include "../../monitor/host/host.h"
#include "../../monitor/http/http_async.h"
#include "../../monitor/core/loop.h"
#include "../../monitor/app/monitor.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- the mock clock ---------------------------------------------------------------------------------- */

static int64_t skipped_ns; /* what turn() skipped so far */

/* In place of timeutil.c's, for every module of this test. */
int64_t clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec + skipped_ns;
}

/*
 * Nanoseconds this process has waited for a CPU while it could run (/proc/self/schedstat's second
 * field; 0 without it): the timings of reports and cycles leave them out.
 */
static int64_t queued_ns(void)
{
	unsigned long long on_cpu = 0, waited = 0;
	FILE *f = fopen("/proc/self/schedstat", "r");

	if (f) {
		if (fscanf(f, "%llu %llu", &on_cpu, &waited) != 2)
			waited = 0;
		fclose(f);
	}
	return (int64_t)waited;
}

struct fake;
static int await_answer(void);

/*
 * loop_run_once(l, until) on the mock clock: when an answer is on its way, the test first waits for it
 * with the clock standing still (await_answer); else the clock skips to the loop's next timer or to until,
 * whichever comes first.
 */
static int turn(struct loop *l, int64_t until)
{
	int64_t now = clock_mono_ns(), to = loop_next_timer(l);

	if (to > until)
		to = until;
	if (!await_answer() && to > now)
		skipped_ns += to - now;
	return loop_run_once(l, until, NULL);
}

/* ---- the loop alone ---------------------------------------------------------------------------------- */

static char order[16];
static size_t norder;

static void note_timer(struct loop_timer *t)
{
	order[norder++] = *(const char *)t->data;
}

static struct loop_timer rearm_t;
static int rearms;

static void rearm_now(struct loop_timer *t)
{
	rearms++;
	loop_timer_start(t->data, t, 0, rearm_now, t->data); /* already due: must wait for the next turn */
}

struct two {
	struct loop *l;
	struct loop_watch a, *b; /* a's callback stops and frees b */
	int a_calls, b_calls;
};

static void cb_b(struct loop_watch *w, short revents)
{
	struct two *t = w->data;

	(void)revents;
	t->b_calls++;
}

static void cb_a(struct loop_watch *w, short revents)
{
	struct two *t = w->data;

	(void)revents;
	t->a_calls++;
	loop_watch_stop(t->l, w);
	if (t->b) {
		loop_watch_stop(t->l, t->b);
		free(t->b);
		t->b = NULL;
	}
}

static void test_loop(void)
{
	struct loop *l = loop_new();
	struct loop_timer t[4];
	int64_t now = clock_mono_ns();
	struct two two = { .l = l };
	int p[2];

	/* Timers: by due time, ties in start order; a stopped one never runs. */
	loop_timer_start(l, &t[0], now + 2, note_timer, "c");
	loop_timer_start(l, &t[1], now + 1, note_timer, "a");
	loop_timer_start(l, &t[2], now + 1, note_timer, "b");
	loop_timer_start(l, &t[3], now, note_timer, "x");
	loop_timer_stop(l, &t[3]);
	is_int((long)loop_count(l), 3, "three timers started, one stopped");
	ok(loop_next_timer(l) == now + 1, "loop_next_timer: the earliest");
	while (norder < 3 && loop_run_once(l, now + NS_PER_S, NULL) >= 0)
		;
	order[norder] = '\0';
	is_str(order, "abc", "timers run by due time, ties in start order");
	is_int(loop_run_once(l, now, NULL), 1, "nothing started and until passed: 1");

	/* A timer that rearms itself already due runs once per turn, not forever. */
	loop_timer_start(l, &rearm_t, 0, rearm_now, l);
	is_int(loop_run_once(l, now, NULL), 0, "a due timer ran: 0");
	is_int(rearms, 1, "a self-rearming due timer ran once in that turn");
	loop_run_once(l, now, NULL);
	is_int(rearms, 2, "and once more in the next");
	loop_timer_stop(l, &rearm_t);

	/* Two ready watches; the first callback stops and frees the second: it is not called. */
	if (pipe(p) == 0 && write(p[1], "x", 1) == 1) {
		two.b = calloc(1, sizeof(*two.b));
		loop_watch_start(l, &two.a, p[0], POLLIN, cb_a, &two);
		loop_watch_start(l, two.b, p[0], POLLIN, cb_b, &two);
		is_int(loop_run_once(l, clock_mono_ns() + NS_PER_S, NULL), 0, "a ready fd: callbacks ran");
		is_int(two.a_calls, 1, "the first watch was called");
		is_int(two.b_calls, 0, "the watch it stopped and freed was not");
		is_int((long)loop_count(l), 0, "nothing left started");
		close(p[0]);
		close(p[1]);
	} else {
		ok(0, "pipe: %s", strerror(errno));
	}
	/* A wait with nothing ready ends at until. */
	{
		int64_t t0 = clock_mono_ns();

		while (loop_run_once(l, t0 + 30 * NS_PER_MS, NULL) != 1)
			;
		ok(clock_mono_ns() - t0 >= 30 * NS_PER_MS, "an idle loop waits until until");
	}
	loop_free(l);
}

/* ---- asynchronous sources in a monitor --------------------------------------------------------------- */

/* A fake server: a child that reads one request byte at a time and, if it answers, writes "42\n". */
struct fake {
	int req, resp;   /* our ends: write requests, read answers */
	pid_t child;
	struct loop_watch w;
	struct mon_fetch *f;
	char answer[16];
	int fetches, answers, abandons, collects;
};

/* The answering fakes of the running test: their answers come in real time. */
static struct fake *answering[4];
static size_t nanswering;

/*
 * When an answering fake has a request out: wait (5 s at most) until its answer can be read, the clock
 * standing still meanwhile (what the wait took is taken off it, before anything reads it again), and
 * return 1. Else 0.
 */
static int await_answer(void)
{
	struct pollfd p[4];
	nfds_t n = 0;
	struct timespec t0, t1;

	for (size_t i = 0; i < nanswering; i++)
		if (answering[i]->fetches > answering[i]->answers + answering[i]->abandons)
			p[n++] = (struct pollfd){ .fd = answering[i]->resp, .events = POLLIN };
	if (!n)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	(void)poll(p, n, 5000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	skipped_ns -= (int64_t)(t1.tv_sec - t0.tv_sec) * NS_PER_S + (t1.tv_nsec - t0.tv_nsec);
	return 1;
}

static int fake_open(void **state, int answers)
{
	struct fake *s = calloc(1, sizeof(*s));
	int a[2], b[2];

	*state = s;
	if (!s || pipe(a) || pipe(b))
		return -errno;
	s->child = fork();
	if (s->child == 0) {
		char c;

		close(a[1]);
		close(b[0]);
		while (read(a[0], &c, 1) == 1)
			if (answers && write(b[1], "42\n", 3) != 3)
				_exit(1);
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	s->req = a[1];
	s->resp = b[0];
	fcntl(s->resp, F_SETFL, O_NONBLOCK);
	return 0;
}

static int open_answering(const struct mon_env *env, const struct coll_target *t, void **state)
{
	int rc;

	(void)env;
	(void)t;
	rc = fake_open(state, 1);
	if (*state && nanswering < 4)
		answering[nanswering++] = *state;
	return rc;
}

static int open_silent(const struct mon_env *env, const struct coll_target *t, void **state)
{
	(void)env;
	(void)t;
	return fake_open(state, 0);
}

static void fake_readable(struct loop_watch *w, short revents)
{
	struct fake *s = w->data;
	ssize_t n = read(s->resp, s->answer, sizeof(s->answer) - 1);

	(void)revents;
	if (n <= 0)
		return;
	s->answer[n] = '\0';
	s->answer[strcspn(s->answer, "\n")] = '\0'; /* a late answer to an abandoned request may follow */
	s->answers++;
	loop_watch_stop(s->f->loop, w);
	mon_fetch_done(s->f);
}

static int fake_fetch(void *state, struct mon_fetch *f)
{
	struct fake *s = state;

	char stale[64];

	s->fetches++;
	s->f = f;
	s->answer[0] = '\0';
	while (read(s->resp, stale, sizeof(stale)) > 0) /* answers to abandoned requests */
		;
	if (write(s->req, "?", 1) != 1)
		return -errno;
	loop_watch_start(f->loop, &s->w, s->resp, POLLIN, fake_readable, s);
	return 0;
}

static void fake_abandon(void *state, struct mon_fetch *f)
{
	struct fake *s = state;

	s->abandons++;
	loop_watch_stop(f->loop, &s->w);
}

static int fake_sample(void *state, const struct cycle *cy, char *err, size_t errsz)
{
	struct fake *s = state;

	(void)cy;
	(void)err;
	(void)errsz;
	s->collects++;
	return 0;
}

static int fake_write(void *state, struct buf *b)
{
	const struct fake *s = state;

	return buf_puts(b, ",\"answer\":") || json_write_string(b, s->answer, strlen(s->answer)) ? -ENOSPC : 0;
}

static struct fake *last_closed[2];
static size_t nclosed;

static void fake_close(void *state)
{
	struct fake *s = state;
	int st;

	if (!s)
		return;
	kill(s->child, SIGKILL); /* a sibling may hold its pipe too: EOF alone would not end it */
	close(s->req);
	close(s->resp);
	waitpid(s->child, &st, 0);
	if (nclosed < 2)
		last_closed[nclosed++] = s; /* kept for the counts; freed by the test */
}

static const struct collector_ops answering_ops = {
	.name = "answering",
	.scope = COLL_SYSTEM,
	.group = GROUP_VCPU_USAGE,
	.fetch = fake_fetch,
	.abandon = fake_abandon,
	.open = open_answering,
	.sample = fake_sample,
	.write = fake_write,
	.close = fake_close,
};

static const struct collector_ops silent_ops = {
	.name = "silent",
	.scope = COLL_SYSTEM,
	.group = GROUP_MEMORY_INFO,
	.fetch = fake_fetch,
	.abandon = fake_abandon,
	.open = open_silent,
	.sample = fake_sample,
	.write = fake_write,
	.close = fake_close,
};

/* An ordinary (synchronous) group; a collect takes sync_cost_ns on the mock clock. */
static int64_t sync_cost_ns;

static int sync_open(const struct mon_env *env, const struct coll_target *t, void **state)
{
	(void)env;
	(void)t;
	*state = NULL;
	return 0;
}

static int sync_sample(void *state, const struct cycle *cy, char *err, size_t errsz)
{
	(void)state;
	(void)cy;
	(void)err;
	(void)errsz;
	skipped_ns += sync_cost_ns;
	return 0;
}

static int sync_write(void *state, struct buf *b)
{
	(void)state;
	return buf_puts(b, ",\"ok\":true");
}

static void sync_close(void *state)
{
	(void)state;
}

static const struct collector_ops sync_ops = {
	.name = "sync",
	.scope = COLL_SYSTEM,
	.group = GROUP_NEURON_HW_COUNTERS,
	.open = sync_open,
	.sample = sync_sample,
	.write = sync_write,
	.close = sync_close,
};

/* The monitor's collectors in this test: the three system groups above. */
static const struct collector_ops *const system_fakes[] = { &answering_ops, &silent_ops, &sync_ops, NULL };

/* Read back the report lines written to f. A new array. */
static json_t *reports(FILE *f)
{
	json_t *all = json_array();
	char line[65536];

	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		json_t *o = json_loads(line, 0, NULL);

		if (o)
			json_array_append_new(all, o);
	}
	return all;
}

static const char *or(const char *s, const char *dflt)
{
	return s ? s : dflt;
}

static const char *group_err(json_t *rep, const char *g)
{
	return json_string_value(json_object_get(json_object_get(json_object_get(rep, "system_data"), g), "error"));
}

static void test_async_monitor(void)
{
	static const struct cfg_group groups[] = {
		{ .id = GROUP_VCPU_USAGE, .period_ms = 200 },         /* answers within a few ms */
		{ .id = GROUP_MEMORY_INFO, .period_ms = 200 },        /* never answers: its fetch gets 0.1 s */
		{ .id = GROUP_NEURON_HW_COUNTERS, .period_ms = 100 }, /* synchronous */
	};
	struct cfg cfg = { .period_ms = 100, .procfs = strdup("/proc"), .sysfs = strdup("/sys"), .nsystem = 3 };
	struct loop *l = loop_new();
	struct http_async *http = http_async_new(l);
	struct host *host = host_new(&(struct host_opts){ .http = http }, l);
	FILE *out = tmpfile();
	struct monitor *m;
	int64_t end, max_late = 0, max_cycle = 0;
	int cycles = 0, answered = 0, silent_late = 0, sync_in_all = 1, bad = 0;
	json_t *all;

	cfg.system = malloc(sizeof(groups)); /* the monitor takes cfg, and frees it */
	memcpy(cfg.system, groups, sizeof(groups));
	m = monitor_new(&cfg, system_fakes, l, host, NULL);
	end = clock_mono_ns() + 1250 * NS_PER_MS;
	while (clock_mono_ns() < end) {
		int64_t due = monitor_next_due(m), q0 = queued_ns(), t0;
		int r = turn(l, due);

		if (r != 1)
			continue;
		t0 = clock_mono_ns();
		if (t0 - due - (queued_ns() - q0) > max_late)
			max_late = t0 - due - (queued_ns() - q0);
		q0 = queued_ns();
		monitor_cycle(m, fileno(out), 0);
		if (clock_mono_ns() - t0 - (queued_ns() - q0) > max_cycle)
			max_cycle = clock_mono_ns() - t0 - (queued_ns() - q0);
		cycles++;
	}
	fflush(out);
	all = reports(out);
	for (size_t i = 0; i < json_array_size(all); i++) {
		json_t *rep = json_array_get(all, i), *sd = json_object_get(rep, "system_data");
		json_t *v = json_object_get(sd, "vcpu_usage");

		if (!json_object_get(sd, "neuron_hw_counters"))
			sync_in_all = 0;
		if (v && !strcmp(or(json_string_value(json_object_get(v, "answer")), ""), "42") &&
		    !strcmp(or(group_err(rep, "vcpu_usage"), "?"), ""))
			answered++;
		else if (v)
			bad++;
		if (json_object_get(sd, "memory_info")) {
			if (!strcmp(or(group_err(rep, "memory_info"), ""), "no answer within 0.1 s") &&
			    !json_object_get(json_object_get(sd, "memory_info"), "answer"))
				silent_late++;
			else
				bad++;
		}
	}
	{
		/* self-timing: each group collected in a report is in its monitor.collectors, with its outcome */
		json_t *r = json_array_get(all, json_array_size(all) - 1), *c;
		const char *name;
		int timed = 1, ngroups = 0;

		json_object_foreach(json_object_get(json_object_get(r, "monitor"), "collectors"), name, c) {
			const char *g;
			json_t *t;

			json_object_foreach(c, g, t) {
				ngroups++;
				timed &= json_is_real(json_object_get(t, "seconds")) &&
					 json_real_value(json_object_get(t, "cpu_seconds")) >= 0 &&
					 json_is_true(json_object_get(t, "success")) ==
						 !strcmp(or(group_err(r, g), "?"), "");
			}
		}
		is_int(ngroups, (long)json_object_size(json_object_get(r, "system_data")),
		       "self-timing: every group of the report is timed");
		ok(timed, "self-timing: seconds, CPU seconds, and success as the group's error says");
	}
	ok(cycles >= 11, "12 reports in 1.25 s at 100 ms (%d)", cycles);
	is_int((long)json_array_size(all), cycles, "every cycle wrote one report");
	ok(max_late < 30 * NS_PER_MS, "every report on time: at most %.1f ms after its due time", max_late / 1e6);
	ok(max_cycle < 20 * NS_PER_MS, "a cycle never waits on a source: the longest took %.1f ms", max_cycle / 1e6);
	ok(sync_in_all, "the synchronous group is in every report");
	ok(answered >= 5, "the answering source's answer is in the report of its due cycle (%d times)", answered);
	ok(silent_late >= 5, "the silent source reports \"no answer within 0.1 s\" (%d times)", silent_late);
	is_int(bad, 0, "no other outcome");
	is_int(answered + silent_late, 2 * (cycles / 2), "the 200 ms groups are in every other report");
	json_decref(all);

	/* --once: every fetch starts at once and is settled by the report at the window's end. */
	ok(ftruncate(fileno(out), 0) == 0 && lseek(fileno(out), 0, SEEK_SET) == 0, "ftruncate");
	{
		int64_t until = clock_mono_ns() + 250 * NS_PER_MS;

		monitor_fetch_all(m, until, 250 * NS_PER_MS);
		while (turn(l, until) != 1)
			;
		monitor_cycle(m, fileno(out), 1);
		fflush(out);
		all = reports(out);
		json_t *sd = json_object_get(json_array_get(all, 0), "system_data");

		is_str(or(json_string_value(json_object_get(json_object_get(sd, "vcpu_usage"), "answer")), "(none)"),
		       "42", "--once: the answer is in");
		is_str(or(group_err(json_array_get(all, 0), "memory_info"), "(none)"), "no answer within 0.25 s",
		       "--once: the silent source had the whole window");
		json_decref(all);
	}
	monitor_free(m);
	nanswering = 0; /* its fakes are closed */
	is_int((long)nclosed, 2, "both fake sources closed");
	if (nclosed == 2) {
		struct fake *a = last_closed[0]->answers ? last_closed[0] : last_closed[1];
		struct fake *s = a == last_closed[0] ? last_closed[1] : last_closed[0];

		is_int(a->answers + a->abandons, a->fetches, "the answering source answered every fetch");
		ok(a->abandons <= 1, "but the one --once replaced (%d)", a->abandons);
		is_int(s->answers, 0, "the silent source never answered");
		is_int(s->abandons, s->fetches, "each of its fetches was abandoned (freeing the monitor included)");
		is_int(s->collects, 0, "and never collected");
		free(a);
		free(s);
	}
	host_free(host);
	http_async_free(http);
	is_int((long)loop_count(l), 0, "nothing is left on the loop");
	loop_free(l);
	fclose(out);
}

/* ---- an asynchronous runtime: one group answers, one never does ------------------------------------ */

struct fake_rt {
	struct fake srv;           /* answers runtime_vcpu_usage's requests */
	const struct cfg_runtime *rt;
	size_t index;
	int silent_fetches, silent_abandons;
};

static int rt_open(const struct mon_env *env, const struct coll_target *t, void **state)
{
	struct fake_rt *s = calloc(1, sizeof(*s));
	void *srv;
	int rc;

	(void)env;
	*state = s;
	s->rt = t->rt;
	s->index = t->index;
	rc = fake_open(&srv, 1);
	s->srv = *(struct fake *)srv;
	free(srv);
	if (nanswering < 4)
		answering[nanswering++] = &s->srv;
	return rc;
}

static int rt_fetch(void *state, struct mon_fetch *f)
{
	struct fake_rt *s = state;

	if (f->id == GROUP_RUNTIME_VCPU_USAGE)
		return fake_fetch(&s->srv, f);
	s->silent_fetches++; /* memory_used: a request that never gets an answer */
	return 0;
}

static void rt_abandon(void *state, struct mon_fetch *f)
{
	struct fake_rt *s = state;

	if (f->id == GROUP_RUNTIME_VCPU_USAGE)
		fake_abandon(&s->srv, f);
	else
		s->silent_abandons++;
}

static int rt_collect(void *state, const struct cycle *cy, const enum group_id *due, size_t ndue, json_t *out)
{
	struct fake_rt *s = state;
	json_t *rep = json_object();

	for (size_t k = 0; k < ndue; k++) {
		json_t *g = group_new(0.2, cy->iso);

		if (due[k] == GROUP_RUNTIME_VCPU_USAGE)
			json_object_set_new(g, "answer", json_string(s->srv.answer));
		json_object_set_new(rep, group_name(due[k]), g);
	}
	json_array_append_new(out, json_pack("{s:I, s:s, s:i, s:s, s:s, s:o}", "runtime_index", (json_int_t)s->index,
					     "address", s->rt->address, "pid", 1, "runtime_tag", "fake", "error", "",
					     "report", rep));
	return 0;
}

static struct fake_rt *rt_closed[2];
static size_t nrt_closed;

static void rt_close(void *state)
{
	struct fake_rt *s = state;
	int st;

	if (!s)
		return;
	kill(s->srv.child, SIGKILL);
	close(s->srv.req);
	close(s->srv.resp);
	waitpid(s->srv.child, &st, 0);
	if (nrt_closed < 2)
		rt_closed[nrt_closed++] = s;
}

static const struct collector_ops fake_rt_ops = {
	.name = "fake",
	.scope = COLL_RUNTIME,
	.schemes = (const char *const[]){ "fake", NULL },
	.fetch = rt_fetch,
	.abandon = rt_abandon,
	.fetch_timeout_ns = 50 * NS_PER_MS,
	.open = rt_open,
	.collect = rt_collect,
	.close = rt_close,
};

static const struct collector_ops *const runtime_fakes[] = { &fake_rt_ops, NULL };

/* A runtime of the "fake" collector (whichever a test's registry has under that name). */
static struct cfg_runtime fake_runtime(const char *address, enum group_id a, enum group_id b)
{
	struct cfg_runtime r = { .address = strdup(address), .collector = "fake", .period_ms = 200 };

	r.groups = calloc(2, sizeof(*r.groups));
	r.groups[r.ngroups++] = (struct cfg_group){ .id = a, .period_ms = 200 };
	if (b != GROUP_COUNT)
		r.groups[r.ngroups++] = (struct cfg_group){ .id = b, .period_ms = 200 };
	return r;
}

static json_t *rt_entry(json_t *rep, long index)
{
	json_t *rd = json_object_get(rep, "runtime_data");

	for (size_t i = 0; i < json_array_size(rd); i++)
		if (json_integer_value(json_object_get(json_array_get(rd, i), "runtime_index")) == index)
			return json_array_get(rd, i);
	return NULL;
}

static const char *str_at(json_t *o, const char *a, const char *b)
{
	return json_string_value(json_object_get(b ? json_object_get(o, a) : o, b ? b : a));
}

static void test_async_runtime(void)
{
	struct cfg cfg = { .period_ms = 200, .procfs = strdup("/proc"), .sysfs = strdup("/sys"), .nruntimes = 2 };
	struct loop *l = loop_new();
	struct http_async *http = http_async_new(l);
	struct host *host = host_new(&(struct host_opts){ .http = http }, l);
	FILE *out = tmpfile();
	struct monitor *m;
	int64_t end, max_late = 0;
	int cycles = 0, good0 = 0, good1 = 0;
	json_t *all;

	cfg.runtimes = calloc(2, sizeof(*cfg.runtimes));
	/* Runtime 0: runtime_vcpu_usage answers, memory_used never does. Runtime 1: memory_used only. */
	cfg.runtimes[0] = fake_runtime("fake:a", GROUP_RUNTIME_VCPU_USAGE, GROUP_MEMORY_USED);
	cfg.runtimes[1] = fake_runtime("fake:b", GROUP_MEMORY_USED, GROUP_COUNT);
	m = monitor_new(&cfg, runtime_fakes, l, host, NULL);
	end = clock_mono_ns() + 1050 * NS_PER_MS;
	while (clock_mono_ns() < end) {
		int64_t due = monitor_next_due(m), q0 = queued_ns();

		if (turn(l, due) != 1)
			continue;
		if (clock_mono_ns() - due - (queued_ns() - q0) > max_late)
			max_late = clock_mono_ns() - due - (queued_ns() - q0);
		monitor_cycle(m, fileno(out), 0);
		cycles++;
	}
	fflush(out);
	all = reports(out);
	for (size_t i = 0; i < json_array_size(all); i++) {
		json_t *rep = json_array_get(all, i), *e0 = rt_entry(rep, 0), *e1 = rt_entry(rep, 1);
		json_t *r0 = json_object_get(e0, "report"), *r1 = json_object_get(e1, "report");

		if (e0 && !strcmp(or(str_at(e0, "error", NULL), "?"), "") &&
		    !strcmp(or(str_at(r0, "runtime_vcpu_usage", "answer"), ""), "42") &&
		    !strcmp(or(str_at(r0, "runtime_vcpu_usage", "error"), "?"), "") &&
		    !strcmp(or(str_at(r0, "memory_used", "error"), ""), "no answer within 0.05 s"))
			good0++;
		if (e1 && !strcmp(or(str_at(e1, "error", NULL), ""), "no answer within 0.05 s") &&
		    json_is_null(json_object_get(e1, "pid")) &&
		    !strcmp(or(str_at(e1, "address", NULL), ""), "fake:b") &&
		    !strcmp(or(str_at(r1, "memory_used", "error"), ""), "no answer within 0.05 s"))
			good1++;
	}
	ok(cycles >= 4, "runtimes: 5 reports in 1.05 s at 200 ms (%d)", cycles);
	ok(max_late < 30 * NS_PER_MS, "runtimes: every report on time (at most %.1f ms late)", max_late / 1e6);
	is_int(good0, cycles,
	       "a runtime with one group answered: the answer in its entry, the other group \"no answer within 0.05 s\"");
	is_int(good1, cycles, "a runtime with no group answered: the monitor's entry says \"no answer within 0.05 s\"");
	json_decref(all);
	monitor_free(m);
	nanswering = 0; /* its fakes are closed */
	is_int((long)nrt_closed, 2, "runtimes: both closed");
	if (nrt_closed == 2) {
		struct fake_rt *a = rt_closed[0], *b = rt_closed[1];

		is_int(a->srv.answers + a->srv.abandons, a->srv.fetches,
		       "runtime 0: every runtime_vcpu_usage request answered (or abandoned when the monitor was freed)");
		ok(a->srv.abandons <= 1, "runtime 0: at most the one in flight at the end abandoned (%d)", a->srv.abandons);
		ok(a->srv.fetches >= cycles, "runtime 0: one request per cycle (%d)", a->srv.fetches);
		is_int(a->silent_abandons, a->silent_fetches, "runtime 0: every memory_used request abandoned");
		is_int(b->silent_abandons, b->silent_fetches, "runtime 1: every request abandoned");
		free(a);
		free(b);
	}
	host_free(host);
	http_async_free(http);
	is_int((long)loop_count(l), 0, "runtimes: nothing is left on the loop");
	loop_free(l);
	fclose(out);
}

/* ---- a source that asks for its own lead and reports its own timeouts (the lead and overdue ops) ------------ */

struct lead_src {
	struct fake srv;              /* answers runtime_vcpu_usage */
	size_t index;
	const struct cfg_runtime *rt;
	int64_t min_lead, max_lead;   /* deadline - started over the fetches */
	int fetches, overdues, abandons, collects;
	char err[64];                 /* this cycle's own error for memory_used */
};

static int lead_open(const struct mon_env *env, const struct coll_target *t, void **state)
{
	struct lead_src *s = calloc(1, sizeof(*s));
	void *srv;
	int rc;

	(void)env;
	*state = s;
	s->rt = t->rt;
	s->index = t->index;
	s->min_lead = INT64_MAX;
	rc = fake_open(&srv, 1);
	s->srv = *(struct fake *)srv;
	free(srv);
	if (nanswering < 4)
		answering[nanswering++] = &s->srv;
	return rc;
}

static int lead_fetch(void *state, struct mon_fetch *f)
{
	struct lead_src *s = state;
	int64_t lead = f->deadline - f->started;

	s->fetches++;
	if (lead < s->min_lead)
		s->min_lead = lead;
	if (lead > s->max_lead)
		s->max_lead = lead;
	if (f->id == GROUP_RUNTIME_VCPU_USAGE)
		return fake_fetch(&s->srv, f);
	return 0; /* memory_used: never answered */
}

static void lead_abandon(void *state, struct mon_fetch *f)
{
	struct lead_src *s = state;

	s->abandons++;
	if (f->id == GROUP_RUNTIME_VCPU_USAGE)
		fake_abandon(&s->srv, f);
}

/* Asks for 10 s: the monitor keeps it to the group's period. */
static int64_t lead_lead(void *state, enum group_id id, int64_t period_ns)
{
	(void)state;
	(void)id;
	(void)period_ns;
	return 10 * NS_PER_S;
}

static int lead_overdue(void *state, struct mon_fetch *f)
{
	struct lead_src *s = state;

	s->overdues++;
	snprintf(s->err, sizeof(s->err), "fake:c: timeout after %.3g s", (double)(f->deadline - f->started) / 1e9);
	return 0;
}

static int lead_collect(void *state, const struct cycle *cy, const enum group_id *due, size_t ndue, json_t *out)
{
	struct lead_src *s = state;
	json_t *rep = json_object();

	s->collects++;
	for (size_t k = 0; k < ndue; k++) {
		json_t *g = group_new(0.2, cy->iso);

		if (due[k] == GROUP_RUNTIME_VCPU_USAGE)
			json_object_set_new(g, "answer", json_string(s->srv.answer));
		else
			set_error(g, "%s", s->err);
		json_object_set_new(rep, group_name(due[k]), g);
	}
	json_array_append_new(out, json_pack("{s:I, s:s, s:i, s:s, s:s, s:o}", "runtime_index", (json_int_t)s->index,
					     "address", s->rt->address, "pid", 1, "runtime_tag", "fake", "error", "",
					     "report", rep));
	s->err[0] = '\0';
	return 0; /* the entry has no error (a group's is the group's) */
}

static struct lead_src *lead_closed;

static void lead_close(void *state)
{
	struct lead_src *s = state;
	int st;

	if (!s)
		return;
	kill(s->srv.child, SIGKILL);
	close(s->srv.req);
	close(s->srv.resp);
	waitpid(s->srv.child, &st, 0);
	lead_closed = s;
}

static const struct collector_ops lead_rt_ops = {
	.name = "fake",
	.scope = COLL_RUNTIME,
	.schemes = (const char *const[]){ "fake", NULL },
	.fetch = lead_fetch,
	.abandon = lead_abandon,
	.lead = lead_lead,
	.overdue = lead_overdue,
	.open = lead_open,
	.collect = lead_collect,
	.close = lead_close,
};

static void test_async_lead_overdue(void)
{
	struct cfg cfg = { .period_ms = 200, .procfs = strdup("/proc"), .sysfs = strdup("/sys"), .nruntimes = 1 };
	struct loop *l = loop_new();
	struct http_async *http = http_async_new(l);
	struct host *host = host_new(&(struct host_opts){ .http = http }, l);
	FILE *out = tmpfile();
	struct monitor *m;
	int64_t end, max_late = 0;
	int cycles = 0, good = 0, bare = 0;
	json_t *all;

	cfg.runtimes = calloc(1, sizeof(*cfg.runtimes));
	cfg.runtimes[0] = fake_runtime("fake:c", GROUP_RUNTIME_VCPU_USAGE, GROUP_MEMORY_USED);
	m = monitor_new(&cfg, (const struct collector_ops *const[]){ &lead_rt_ops, NULL }, l, host, NULL);
	end = clock_mono_ns() + 1050 * NS_PER_MS;
	while (clock_mono_ns() < end) {
		int64_t due = monitor_next_due(m), q0 = queued_ns();

		if (turn(l, due) != 1)
			continue;
		if (clock_mono_ns() - due - (queued_ns() - q0) > max_late)
			max_late = clock_mono_ns() - due - (queued_ns() - q0);
		monitor_cycle(m, fileno(out), 0);
		cycles++;
	}
	fflush(out);
	all = reports(out);
	for (size_t i = 0; i < json_array_size(all); i++) {
		json_t *e = rt_entry(json_array_get(all, i), 0), *r = json_object_get(e, "report");
		const char *merr = or(str_at(r, "memory_used", "error"), "");

		bare += strstr(merr, "no answer within") != NULL ||
			strstr(or(str_at(e, "error", NULL), ""), "no answer within") != NULL;
		if (e && !strcmp(or(str_at(r, "runtime_vcpu_usage", "answer"), ""), "42") &&
		    !strncmp(merr, "fake:c: timeout after 0.", 24))
			good++;
	}
	ok(cycles >= 4, "lead/overdue: 5 reports in 1.05 s at 200 ms (%d)", cycles);
	ok(max_late < 30 * NS_PER_MS, "lead/overdue: every report on time (at most %.1f ms late)", max_late / 1e6);
	is_int(good, cycles, "the answered group has its answer, the overdue one the source's own error");
	is_int(bare, 0, "never the monitor's \"no answer within\"");
	json_decref(all);
	monitor_free(m);
	nanswering = 0; /* its fakes are closed */
	ok(lead_closed != NULL, "lead/overdue: closed");
	if (lead_closed) {
		struct lead_src *s = lead_closed;

		ok(s->min_lead > 170 * NS_PER_MS && s->max_lead <= 200 * NS_PER_MS,
		   "a lead of 10 s asked: each fetch had between %.1f and %.1f ms, the 200 ms period at most",
		   s->min_lead / 1e6, s->max_lead / 1e6);
		ok(s->overdues >= cycles, "memory_used was overdue each cycle (%d), and the source said why", s->overdues);
		is_int(s->collects, cycles, "collected every cycle");
		free(s);
	}
	host_free(host);
	http_async_free(http);
	is_int((long)loop_count(l), 0, "lead/overdue: nothing is left on the loop");
	loop_free(l);
	fclose(out);
}

/* ---- a started monitor: its groups are the loop's timers ------------------------------------------- */

struct started {
	int reports, errs;
	int stop_at; /* monitor_stop after this many reports (0: never) */
};

static void on_started_report(struct monitor *m, int rc, void *arg)
{
	struct started *s = arg;

	s->reports++;
	s->errs += rc != 0;
	if (s->stop_at && s->reports >= s->stop_at)
		monitor_stop(m);
}

/* The system groups of test_async_monitor, as a fresh cfg (the monitor takes it). */
static struct cfg started_cfg(void)
{
	static const struct cfg_group groups[] = {
		{ .id = GROUP_VCPU_USAGE, .period_ms = 200 },
		{ .id = GROUP_MEMORY_INFO, .period_ms = 200 },
		{ .id = GROUP_NEURON_HW_COUNTERS, .period_ms = 100 },
	};
	struct cfg cfg = { .period_ms = 100, .procfs = strdup("/proc"), .sysfs = strdup("/sys"), .nsystem = 3 };

	cfg.system = malloc(sizeof(groups));
	memcpy(cfg.system, groups, sizeof(groups));
	return cfg;
}

/* Turn only the loop until t0 + ms: no monitor_cycle here, the group timers write the reports. */
static void turn_to(struct loop *l, int64_t t0, int ms)
{
	int64_t end = t0 + ms * NS_PER_MS;

	while (clock_mono_ns() < end)
		turn(l, end);
}

/*
 * monitor_start: the groups' timers and the fetches' interleave on the one loop (each 200 ms group's
 * fetch starts 100 ms ahead, between two reports of the 100 ms group); a reload while a fetch is out
 * hands the started state on; monitor_stop ends the reports.
 */
static void test_started_monitor(void)
{
	struct cfg cfg = started_cfg();
	struct loop *l = loop_new();
	struct http_async *http = http_async_new(l);
	struct host *host = host_new(&(struct host_opts){ .http = http }, l);
	FILE *out = tmpfile();
	struct started st = { 0 };
	struct monitor *m = monitor_new(&cfg, system_fakes, l, host, NULL);
	int64_t t0 = clock_mono_ns();
	int sync_in_all = 1, answered = 0, silent = 0, seq_ok = 1, after_reload = 0, reload_answered = 0;
	int before;
	json_t *all;

	nclosed = 0;
	monitor_start(m, fileno(out), on_started_report, &st);
	turn_to(l, t0, 1050);
	is_int(st.reports, 10, "started: the 100 ms group's timer wrote 10 reports in 1.05 s, the loop alone");
	/* 1150 ms: the 200 ms groups' fetches for 1200 ms went out at 1100 ms; reload now, while they are out. */
	turn_to(l, t0, 1150);
	before = st.reports;
	ok(nanswering == 1 && answering[0]->fetches == answering[0]->collects + 1,
	   "reload: the answering source's fetch for the next report has gone out (%d fetches, %d collected)",
	   nanswering ? answering[0]->fetches : -1, nanswering ? answering[0]->collects : -1);
	cfg = started_cfg();
	m = monitor_new(&cfg, system_fakes, l, host, m); /* unchanged: every group keeps its schedule */
	turn_to(l, t0, 1650);
	is_int(st.reports - before, 5, "reload: the new monitor is started, on the same grid (1200..1600 ms)");
	st.stop_at = st.reports + 2;
	turn_to(l, t0, 2150);
	is_int(st.reports, st.stop_at, "monitor_stop in done: no report after it");
	is_int(st.errs, 0, "every report written");
	fflush(out);
	all = reports(out);
	is_int((long)json_array_size(all), st.reports, "one line per report");
	for (size_t i = 0; i < json_array_size(all); i++) {
		json_t *rep = json_array_get(all, i), *sd = json_object_get(rep, "system_data");
		json_t *v = json_object_get(sd, "vcpu_usage");

		seq_ok &= json_integer_value(json_object_get(json_object_get(rep, "monitor"), "seq")) == (json_int_t)i;
		sync_in_all &= json_object_get(sd, "neuron_hw_counters") != NULL;
		if (v && !strcmp(or(json_string_value(json_object_get(v, "answer")), ""), "42")) {
			answered++;
			if ((int)i == before)
				reload_answered = 1;
		}
		if (json_object_get(sd, "memory_info") &&
		    !strcmp(or(group_err(rep, "memory_info"), ""), "no answer within 0.1 s"))
			silent++;
		after_reload += (int)i >= before;
	}
	ok(seq_ok, "seq goes on across the reload, one report per due instant");
	ok(sync_in_all, "the 100 ms group is in every report");
	is_int(answered, st.reports / 2, "the 200 ms groups share every other report; the answer is in each");
	is_int(silent, st.reports / 2, "the silent source's group says \"no answer within 0.1 s\" each time");
	ok(reload_answered, "the first report after the reload has the fetch the reload restarted");
	json_decref(all);
	is_int((long)nclosed, 0, "the reload kept both asynchronous sources open (unchanged)");
	monitor_free(m);
	nanswering = 0;
	is_int((long)nclosed, 2, "both closed once, with the last monitor");
	for (size_t i = 0; i < nclosed; i++)
		free(last_closed[i]);
	host_free(host);
	http_async_free(http);
	is_int((long)loop_count(l), 0, "started: nothing is left on the loop");
	loop_free(l);
	fclose(out);
}

/*
 * A started monitor's cycle that overruns: the 100 ms group's collect at 300 ms takes 350 ms, so the
 * slots at 400, 500 and 600 ms have passed when its timer is armed again: they are skipped (not
 * replayed in a burst), the next report is at 700 ms, on the grid, and its period covers the gap.
 */
static void test_started_late(void)
{
	static const struct cfg_group groups[] = { { .id = GROUP_NEURON_HW_COUNTERS, .period_ms = 100 } };
	struct cfg cfg = { .period_ms = 100, .procfs = strdup("/proc"), .sysfs = strdup("/sys"), .nsystem = 1 };
	struct loop *l = loop_new();
	struct http_async *http = http_async_new(l);
	struct host *host = host_new(&(struct host_opts){ .http = http }, l);
	FILE *out = tmpfile();
	struct started st = { 0 };
	struct monitor *m;
	int64_t t0;
	json_t *all;

	cfg.system = malloc(sizeof(groups));
	memcpy(cfg.system, groups, sizeof(groups));
	m = monitor_new(&cfg, system_fakes, l, host, NULL);
	t0 = clock_mono_ns();
	monitor_start(m, fileno(out), on_started_report, &st);
	turn_to(l, t0, 250);
	sync_cost_ns = 350 * NS_PER_MS;
	turn_to(l, t0, 310); /* the cycle at 300 ms, 350 ms long */
	sync_cost_ns = 0;
	is_int(st.reports, 3, "late: three reports by 300 ms, the third 350 ms long");
	ok(llabs(monitor_next_due(m) - t0 - 700 * NS_PER_MS) < NS_PER_MS,
	   "late: the next slot is 700 ms, on the grid (%.3f ms)", (monitor_next_due(m) - t0) / 1e6);
	turn_to(l, t0, 1050);
	is_int(st.reports, 7, "late: 400..600 ms skipped, not replayed: reports at 700..1000 ms");
	fflush(out);
	all = reports(out);
	{
		json_t *g = json_object_get(json_object_get(json_array_get(all, 3), "system_data"), "neuron_hw_counters");
		double p = json_real_value(json_object_get(g, "period"));

		ok(p > 0.39 && p < 0.41, "late: the report after the skip covers the whole gap (period %.3f s)", p);
	}
	json_decref(all);
	monitor_free(m);
	host_free(host);
	http_async_free(http);
	is_int((long)loop_count(l), 0, "late: nothing is left on the loop");
	loop_free(l);
	fclose(out);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1); /* the monitors' hosts ask no metadata service */
	test_loop();
	test_async_monitor();
	test_async_runtime();
	test_async_lead_overdue();
	test_started_monitor();
	test_started_late();
	return done_testing();
}
