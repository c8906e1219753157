/* SPDX-License-Identifier: MIT */
/*
 * The event loop; see loop.h.
 *
 * Watches and timers live in two small arrays of borrowed pointers. The
 * producer has a handful of each (a few per HTTP connection,
 * one per asynchronous source), so a linear scan for the earliest timer costs less
 * than keeping a heap consistent while callbacks start and stop timers.
 *
 * A callback may stop, and then free, any watch or timer. So the loop never
 * touches a watch or timer it is about to call back without first finding
 * it, by address and start id, in its own arrays: a stopped one is not
 * there, and its (possibly freed) memory is never read.
 */
#include "loop.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

struct loop {
	struct loop_watch **w;
	size_t nw, aw;
	struct loop_timer **t;
	size_t nt, at;
	uint64_t next_id;     /* ids of started watches and timers; never 0 */
	struct pollfd *pfd;   /* ppoll's array, grown with w */
	struct {
		struct loop_watch *w;
		uint64_t id;
		short revents;
	} *ready;             /* what ppoll found, copied before any callback runs */
};

struct loop *loop_new(void)
{
	struct loop *l = xcalloc(1, sizeof(*l));

	l->next_id = 1;
	return l;
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	if (l->nw || l->nt)
		log_debug("loop: freed with %zu watch(es) and %zu timer(s) started", l->nw, l->nt);
	for (size_t i = 0; i < l->nw; i++)
		l->w[i]->id = 0;
	for (size_t i = 0; i < l->nt; i++)
		l->t[i]->id = 0;
	free(l->w);
	free(l->t);
	free(l->pfd);
	free(l->ready);
	free(l);
}

void loop_watch_start(struct loop *l, struct loop_watch *w, int fd, short events, loop_watch_cb cb, void *data)
{
	loop_watch_stop(l, w);
	if (l->nw == l->aw) {
		l->aw = l->aw ? l->aw * 2 : 8;
		l->w = xrealloc(l->w, l->aw * sizeof(*l->w));
		l->pfd = xrealloc(l->pfd, l->aw * sizeof(*l->pfd));
		l->ready = xrealloc(l->ready, l->aw * sizeof(*l->ready));
	}
	w->fd = fd;
	w->events = events;
	w->cb = cb;
	w->data = data;
	w->id = l->next_id++;
	l->w[l->nw++] = w;
}

void loop_watch_stop(struct loop *l, struct loop_watch *w)
{
	if (!w->id)
		return;
	for (size_t i = 0; i < l->nw; i++)
		if (l->w[i] == w) {
			memmove(&l->w[i], &l->w[i + 1], (l->nw - i - 1) * sizeof(*l->w));
			l->nw--;
			break;
		}
	w->id = 0;
}

void loop_timer_start(struct loop *l, struct loop_timer *t, int64_t due, loop_timer_cb cb, void *data)
{
	loop_timer_stop(l, t);
	if (l->nt == l->at) {
		l->at = l->at ? l->at * 2 : 8;
		l->t = xrealloc(l->t, l->at * sizeof(*l->t));
	}
	t->due = due;
	t->cb = cb;
	t->data = data;
	t->id = l->next_id++;
	l->t[l->nt++] = t;
}

void loop_timer_stop(struct loop *l, struct loop_timer *t)
{
	if (!t->id)
		return;
	for (size_t i = 0; i < l->nt; i++)
		if (l->t[i] == t) {
			l->t[i] = l->t[--l->nt];
			break;
		}
	t->id = 0;
}

/* The index of the earliest timer (ties: the one started first), or -1. */
static long earliest(const struct loop *l)
{
	long best = -1;

	for (size_t i = 0; i < l->nt; i++)
		if (best < 0 || l->t[i]->due < l->t[best]->due ||
		    (l->t[i]->due == l->t[best]->due && l->t[i]->id < l->t[best]->id))
			best = (long)i;
	return best;
}

int64_t loop_next_timer(const struct loop *l)
{
	long i = earliest(l);

	return i < 0 ? INT64_MAX : l->t[i]->due;
}

/*
 * Run every timer due at now, earliest first. A timer started by a callback
 * during this (an id at or above first_new) waits for the next turn, even
 * when it is already due, so a callback that rearms itself cannot spin.
 * Returns how many ran.
 */
static int run_timers(struct loop *l, int64_t now)
{
	uint64_t first_new = l->next_id;
	int ran = 0;

	for (;;) {
		long best = -1;
		struct loop_timer *t;

		for (size_t i = 0; i < l->nt; i++) {
			struct loop_timer *c = l->t[i];

			if (c->due > now || c->id >= first_new)
				continue;
			if (best < 0 || c->due < l->t[best]->due || (c->due == l->t[best]->due && c->id < l->t[best]->id))
				best = (long)i;
		}
		if (best < 0)
			return ran;
		t = l->t[best];
		loop_timer_stop(l, t);
		t->cb(t);
		ran++;
	}
}

/* Is w (started with id) still started? Reads only the loop's own array. */
static int watch_started(const struct loop *l, const struct loop_watch *w, uint64_t id)
{
	for (size_t i = 0; i < l->nw; i++)
		if (l->w[i] == w)
			return w->id == id;
	return 0;
}

int loop_run_once(struct loop *l, int64_t until, const sigset_t *sigmask)
{
	int64_t now = clock_mono_ns(), wake;
	struct timespec ts;
	size_t nw = l->nw, nready = 0;
	int n;

	if (run_timers(l, now))
		return 0;
	if (now >= until)
		return 1;
	wake = loop_next_timer(l);
	if (until < wake)
		wake = until;
	ts.tv_sec = (wake - now) / NS_PER_S;
	ts.tv_nsec = (wake - now) % NS_PER_S;
	for (size_t i = 0; i < nw; i++)
		l->pfd[i] = (struct pollfd){ .fd = l->w[i]->fd, .events = l->w[i]->events };
	n = ppoll(l->pfd, nw, &ts, sigmask);
	if (n < 0)
		return -errno;
	/* Copy first: a callback may start or stop watches, which moves the arrays. */
	for (size_t i = 0; i < nw && n > 0; i++)
		if (l->pfd[i].revents) {
			l->ready[nready].w = l->w[i];
			l->ready[nready].id = l->w[i]->id;
			l->ready[nready++].revents = l->pfd[i].revents;
		}
	for (size_t i = 0; i < nready; i++)
		if (watch_started(l, l->ready[i].w, l->ready[i].id))
			l->ready[i].w->cb(l->ready[i].w, l->ready[i].revents);
	run_timers(l, clock_mono_ns());
	return 0;
}

size_t loop_count(const struct loop *l)
{
	return l->nw + l->nt;
}
