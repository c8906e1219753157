/* SPDX-License-Identifier: MIT */
/*
 * The event loop; see loop.h.
 *
 * Watches and timers live in two small arrays of borrowed pointers. The
 * producer has a few dozen at most (a few per HTTP connection, one per
 * metric group and per asynchronous source), so a linear scan for the earliest timer costs less
 * than keeping a heap consistent while callbacks start and stop timers.
 *
 * A callback may stop, and then free, any watch or timer. So the loop never
 * touches a watch or timer it is about to call back without first finding
 * it, by address and start id, in its own arrays: a stopped one is not
 * there, and its (possibly freed) memory is never read.
 *
 * Works and asyncs (the hand-backs from threads) share one eventfd, made at
 * the first of them, and one internal watch on it. A thread that finishes
 * a work or sends an async writes the eventfd only when no write is
 * pending since the loop last read it ("signalled", under the mutex), so a
 * burst of hand-backs costs the loop one wakeup. Reading it, the loop
 * clears "signalled" before it looks at what is done or sent, so nothing
 * handed back after that is missed: it writes again.
 */
#include "loop.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

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
	/* the hand-backs from threads */
	int efd;              /* -1 until the first work or async */
	struct loop_watch wake;
	pthread_mutex_t mu;   /* the fields below but asyncs and nasync */
	pthread_cond_t work_cv, idle_cv;
	struct loop_work *queue, *queue_tail, *done, *done_tail;
	int signalled;        /* the eventfd was written since the loop read it */
	int stop;
	size_t nthr, nidle, nposted;
	pthread_t thr[LOOP_WORKERS_MAX];
	struct loop_async **async;
	size_t nasync, aasync;
};

struct loop *loop_new(void)
{
	struct loop *l = xcalloc(1, sizeof(*l));

	l->next_id = 1;
	l->efd = -1;
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->work_cv, NULL);
	pthread_cond_init(&l->idle_cv, NULL);
	return l;
}

static void hand_back_free(struct loop *l);

void loop_free(struct loop *l)
{
	if (!l)
		return;
	hand_back_free(l);
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
	pthread_cond_destroy(&l->work_cv);
	pthread_cond_destroy(&l->idle_cv);
	pthread_mutex_destroy(&l->mu);
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
	return l->nw - (l->wake.id != 0) + l->nt + l->nasync + l->nposted;
}

/* ---- hand-backs from threads ---------------------------------------------------------------------------- */

/* Wake the loop unless a wakeup is pending already. Called with mu held. */
static void signal_locked(struct loop *l)
{
	uint64_t one = 1;

	if (l->signalled)
		return;
	l->signalled = 1;
	if (write(l->efd, &one, sizeof(one)) < 0) {
		/* the counter at its maximum: readable already */
	}
}

/* The eventfd is readable: the asyncs sent, then the works done (as many as were done now). */
static void on_wake(struct loop_watch *wt, short revents)
{
	struct loop *l = wt->data;
	struct loop_async **sent;
	uint64_t *ids, n;
	size_t nsent = 0, ndone = 0;

	(void)revents;
	if (read(l->efd, &n, sizeof(n)) < 0) {
		/* EAGAIN: nothing new */
	}
	pthread_mutex_lock(&l->mu);
	l->signalled = 0;
	for (struct loop_work *w = l->done; w; w = w->next)
		ndone++;
	pthread_mutex_unlock(&l->mu);
	/* Copy first: a callback may stop asyncs, which moves the array. */
	sent = xcalloc(l->nasync + 1, sizeof(*sent));
	ids = xcalloc(l->nasync + 1, sizeof(*ids));
	for (size_t i = 0; i < l->nasync; i++)
		if (atomic_exchange((_Atomic int *)&l->async[i]->pending, 0)) {
			ids[nsent] = l->async[i]->id;
			sent[nsent++] = l->async[i];
		}
	for (size_t i = 0; i < nsent; i++)
		for (size_t j = 0; j < l->nasync; j++)
			if (l->async[j] == sent[i] && sent[i]->id == ids[i]) {
				sent[i]->cb(sent[i]);
				break;
			}
	free(sent);
	free(ids);
	while (ndone--) { /* one at a time: an after may cancel a work still on the list */
		struct loop_work *w;

		pthread_mutex_lock(&l->mu);
		if ((w = l->done) && !(l->done = w->next))
			l->done_tail = NULL;
		pthread_mutex_unlock(&l->mu);
		if (!w)
			break;
		w->state = 0;
		w->next = NULL;
		l->nposted--;
		w->after(w);
	}
}

/* The eventfd and its watch, at the first hand-back. 0 or -errno. */
static int wake_init(struct loop *l)
{
	if (l->efd >= 0)
		return 0;
	if ((l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		return -errno;
	loop_watch_start(l, &l->wake, l->efd, POLLIN, on_wake, l);
	return 0;
}

static void *worker(void *arg)
{
	struct sched_param sp = { .sched_priority = 0 };
	struct loop *l = arg;

	/*
	 * SCHED_BATCH whatever the loop's own policy, so a producer run at a
	 * real-time priority (chrt) never has its loop wait behind a parse of
	 * tens of megabytes at that priority. Set here: pthread attributes
	 * take SCHED_OTHER, FIFO and RR only, and a refused attribute would
	 * leave the worker inheriting the loop's policy.
	 */
	if ((errno = pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp)))
		log_debug("loop: a worker keeps the loop's scheduling: %s", strerror(errno));
	pthread_mutex_lock(&l->mu);
	for (;;) {
		struct loop_work *w;

		while (!l->stop && !l->queue) {
			l->nidle++;
			pthread_cond_wait(&l->work_cv, &l->mu);
			l->nidle--;
		}
		if (l->stop)
			break;
		w = l->queue;
		if (!(l->queue = w->next))
			l->queue_tail = NULL;
		w->next = NULL;
		w->state = 2;
		pthread_mutex_unlock(&l->mu);
		w->work(w);
		pthread_mutex_lock(&l->mu);
		w->state = 3;
		if (l->done_tail)
			l->done_tail->next = w;
		else
			l->done = w;
		l->done_tail = w;
		signal_locked(l);
		pthread_cond_broadcast(&l->idle_cv);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

/* A worker, every signal blocked (they are the loop's). 0 or an errno. */
static int worker_start(struct loop *l, pthread_t *th)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(th, NULL, worker, l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

int loop_work_post(struct loop *l, struct loop_work *w, loop_work_fn work, loop_work_fn after, void *data)
{
	int rc = wake_init(l);

	if (rc)
		return rc;
	pthread_mutex_lock(&l->mu);
	if (!l->nidle && l->nthr < LOOP_WORKERS_MAX && !(rc = worker_start(l, &l->thr[l->nthr])))
		l->nthr++;
	if (!l->nthr) {
		pthread_mutex_unlock(&l->mu);
		return -rc;
	}
	w->work = work;
	w->after = after;
	w->data = data;
	w->next = NULL;
	w->state = 1;
	l->nposted++;
	if (l->queue_tail)
		l->queue_tail->next = w;
	else
		l->queue = w;
	l->queue_tail = w;
	pthread_cond_signal(&l->work_cv);
	pthread_mutex_unlock(&l->mu);
	return 0;
}

/* Take w off the list at *head (tail: its last). 1 when it was there. */
static int unlink_work(struct loop_work **head, struct loop_work **tail, struct loop_work *w)
{
	struct loop_work *prev = NULL;

	for (struct loop_work **pp = head; *pp; prev = *pp, pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			if (*tail == w)
				*tail = prev;
			w->next = NULL;
			return 1;
		}
	return 0;
}

void loop_work_cancel(struct loop *l, struct loop_work *w)
{
	pthread_mutex_lock(&l->mu);
	if (!w->state) {
		pthread_mutex_unlock(&l->mu);
		return;
	}
	while (w->state == 2)
		pthread_cond_wait(&l->idle_cv, &l->mu);
	if (!unlink_work(&l->queue, &l->queue_tail, w))
		unlink_work(&l->done, &l->done_tail, w);
	w->state = 0;
	pthread_mutex_unlock(&l->mu);
	l->nposted--;
}

int loop_async_start(struct loop *l, struct loop_async *a, loop_async_cb cb, void *data)
{
	int rc = wake_init(l);

	if (rc)
		return rc;
	loop_async_stop(l, a);
	if (l->nasync == l->aasync) {
		l->aasync = l->aasync ? l->aasync * 2 : 4;
		l->async = xrealloc(l->async, l->aasync * sizeof(*l->async));
	}
	a->cb = cb;
	a->data = data;
	atomic_store((_Atomic int *)&a->pending, 0);
	a->id = l->next_id++;
	l->async[l->nasync++] = a;
	return 0;
}

void loop_async_send(struct loop *l, struct loop_async *a)
{
	if (atomic_exchange((_Atomic int *)&a->pending, 1))
		return; /* sent already: its cb has not run yet */
	pthread_mutex_lock(&l->mu);
	signal_locked(l);
	pthread_mutex_unlock(&l->mu);
}

void loop_async_stop(struct loop *l, struct loop_async *a)
{
	if (!a->id)
		return;
	for (size_t i = 0; i < l->nasync; i++)
		if (l->async[i] == a) {
			memmove(&l->async[i], &l->async[i + 1], (l->nasync - i - 1) * sizeof(*l->async));
			l->nasync--;
			break;
		}
	a->id = 0;
}

/* At loop_free: the workers stop (each finishes the work it is in), what is queued or done is dropped. */
static void hand_back_free(struct loop *l)
{
	pthread_mutex_lock(&l->mu);
	l->stop = 1;
	pthread_cond_broadcast(&l->work_cv);
	pthread_mutex_unlock(&l->mu);
	for (size_t i = 0; i < l->nthr; i++)
		pthread_join(l->thr[i], NULL);
	if (l->nposted || l->nasync)
		log_debug("loop: freed with %zu work(s) posted and %zu async(s) started", l->nposted, l->nasync);
	for (struct loop_work *w = l->queue; w; w = w->next)
		w->state = 0;
	for (struct loop_work *w = l->done; w; w = w->next)
		w->state = 0;
	for (size_t i = 0; i < l->nasync; i++)
		l->async[i]->id = 0;
	free(l->async);
	if (l->efd >= 0) {
		loop_watch_stop(l, &l->wake);
		close(l->efd);
	}
}
