/* SPDX-License-Identifier: MIT */
/*
 * The NVIDIA collector's worker pool for blocking reads; see nvidia_pool.h.
 *
 * One job per slot and direction; workers (at most NV_POOL_MAX, started on
 * the first batch, as many as a batch has jobs) take jobs in order under
 * one mutex, call NVML without it, and store the result under it. The
 * last job of a batch signals a condition variable (for nv_pool_wait) and
 * wakes the loop (loop_async_send, the loop's one way back from threads)
 * for the done callback. The pool keeps threads of its own rather than
 * posting loop work: a call that hangs in the driver holds its thread,
 * and must hold none of the loop's. A slot whose call
 * of an earlier batch is still in the driver is left out of the next batch
 * (its result there is "not returned"), so a GPU whose call hangs never has
 * two calls stacked and the other GPUs are read as usual; the late call's
 * result is dropped when it returns. Workers run with every signal blocked.
 *
 * Calls that return at once (a driver or a fake library that does not
 * sample: every call of a batch under NV_POOL_FAST_NS) are made on the
 * caller's thread from the next batch on, since waking threads would then
 * cost more than the calls; one call over NV_POOL_SLOW_NS there sends the
 * batches after it back to the workers. A real nvmlDeviceGetPcieThroughput
 * always samples for about 20 ms, so on a GPU the workers are used.
 */
#include "nvidia_pool.h"
#include "../core/loop.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NV_POOL_MAX 16 /* workers at most: 8 GPUs' TX and RX at once */
#define NV_POOL_FAST_NS (100 * 1000LL)   /* a batch whose calls all took less runs inline next time */
#define NV_POOL_SLOW_NS (1000 * 1000LL)  /* an inline call that took more sends the next batch to the workers */

struct pool_job {
	nvmlDevice_t h;
	nvmlReturn_t rc;
	unsigned kbs;
	int state; /* 0 not in the batch, 1 queued, 2 in the driver, 3 done */
	unsigned batch; /* the batch it was queued for */
};

struct nv_pool {
	nvml_pcie_fn fn;
	struct nv_lctx *lc;    /* the caller's thread's ledger context (borrowed; NULL: none) */
	pthread_mutex_t mu;
	pthread_cond_t work, done_cv;
	pthread_t thr[NV_POOL_MAX];
	size_t nthr;
	int stop;
	int inline_calls;      /* the calls are fast: make them on the caller's thread */
	int64_t slowest;       /* the current batch's slowest call, ns */
	struct pool_job *jobs; /* 2 per slot: [2i] TX, [2i+1] RX */
	size_t njobs, next, pending; /* pending: the current batch's jobs not returned */
	unsigned batch;
	struct loop *loop;     /* borrowed; NULL: no done callback */
	struct loop_async wake;
	void (*done)(void *);
	void *ud;
};

static void *worker(void *arg)
{
	struct nv_pool *p = arg;
	struct nv_lctx lc = { p->lc ? p->lc->l : NULL, "device_utilization", 0, 0 }; /* the ledger */

	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct pool_job *j;
		nvmlReturn_t rc;
		unsigned kbs = 0;
		int64_t t0;
		size_t k;

		while (!p->stop && p->next >= p->njobs)
			pthread_cond_wait(&p->work, &p->mu);
		if (p->stop)
			break;
		k = p->next++;
		j = &p->jobs[k];
		if (j->state != 1)
			continue;
		j->state = 2;
		pthread_mutex_unlock(&p->mu);
		t0 = clock_mono_ns();
		rc = NVC(&lc, p->fn, j->h, (k & 1) ? NVML_PCIE_UTIL_RX_BYTES : NVML_PCIE_UTIL_TX_BYTES, &kbs);
		t0 = clock_mono_ns() - t0;
		pthread_mutex_lock(&p->mu);
		if (j->batch != p->batch) { /* a late call of an earlier batch: its result is nobody's now */
			j->state = 0;
			continue;
		}
		j->rc = rc;
		j->kbs = kbs;
		j->state = 3;
		if (t0 > p->slowest)
			p->slowest = t0;
		if (--p->pending == 0) {
			p->inline_calls = p->slowest < NV_POOL_FAST_NS;
			pthread_cond_broadcast(&p->done_cv);
			if (p->loop)
				loop_async_send(p->loop, &p->wake);
		}
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* The batch is complete (loop callback): the done callback, once. */
static void on_done(struct loop_async *a)
{
	struct nv_pool *p = a->data;
	void (*done)(void *) = NULL;
	void *ud = NULL;

	pthread_mutex_lock(&p->mu);
	if (p->pending == 0) {
		done = p->done;
		ud = p->ud;
		p->done = NULL;
	}
	pthread_mutex_unlock(&p->mu);
	if (done)
		done(ud);
}

struct nv_pool *nv_pool_new(nvml_pcie_fn fn, struct loop *loop, size_t ndev, struct nv_lctx *lc)
{
	struct nv_pool *p = xcalloc(1, sizeof(*p));
	int rc;

	p->fn = fn;
	p->lc = lc;
	p->jobs = xcalloc(2 * (ndev ? ndev : 1), sizeof(*p->jobs));
	p->njobs = p->next = 2 * ndev;
	pthread_condattr_t ca;

	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* nv_pool_wait's deadline is monotonic */
	pthread_cond_init(&p->done_cv, &ca);
	pthread_condattr_destroy(&ca);
	if (loop && (rc = loop_async_start(loop, &p->wake, on_done, p)))
		log_warn("nvidia: cannot wake the loop: %s; PCIe throughput is read at the due time", strerror(-rc));
	else
		p->loop = loop;
	return p;
}

/* Start workers up to want (at most NV_POOL_MAX), signals blocked. Called with mu held. */
static void grow(struct nv_pool *p, size_t want)
{
	sigset_t all, old;

	if (want > NV_POOL_MAX)
		want = NV_POOL_MAX;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	while (p->nthr < want) {
		int rc = pthread_create(&p->thr[p->nthr], NULL, worker, p);

		if (rc) {
			log_warn("nvidia: cannot start a PCIe worker: %s", strerror(rc));
			break;
		}
		p->nthr++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int nv_pool_start(struct nv_pool *p, const nvmlDevice_t *h, void (*done)(void *ud), void *ud)
{
	size_t n = 0;

	pthread_mutex_lock(&p->mu);
	p->batch++;
	for (size_t k = 0; k < p->njobs; k++) {
		struct pool_job *j = &p->jobs[k];

		if (j->state == 2)
			continue; /* still in the driver since an earlier batch: not in this one */
		j->batch = p->batch;
		j->h = h[k / 2];
		j->rc = NVML_ERROR_TIMEOUT;
		j->kbs = 0;
		j->state = j->h ? 1 : 0;
		n += j->h != NULL;
	}
	p->next = 0;
	p->pending = n;
	p->done = done;
	p->ud = ud;
	p->slowest = 0;
	if (n && !p->inline_calls)
		grow(p, n);
	if (n && (p->inline_calls || !p->nthr)) { /* fast calls, or no thread: here, one after the other */
		p->next = p->njobs;
		for (size_t k = 0; k < p->njobs; k++)
			if (p->jobs[k].state == 1) {
				int64_t t0 = clock_mono_ns();

				p->jobs[k].rc = NVC(p->lc, p->fn, p->jobs[k].h,
						    (k & 1) ? NVML_PCIE_UTIL_RX_BYTES : NVML_PCIE_UTIL_TX_BYTES,
						    &p->jobs[k].kbs);
				p->jobs[k].state = 3;
				if (clock_mono_ns() - t0 > NV_POOL_SLOW_NS)
					p->inline_calls = 0;
			}
		p->pending = n = 0;
	}
	if (!n && p->loop) /* nothing to wait for: done at the loop's next turn */
		loop_async_send(p->loop, &p->wake);
	if (n) /* jobs for the workers */
		pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	return 0;
}

void nv_pool_forget(struct nv_pool *p)
{
	pthread_mutex_lock(&p->mu);
	p->done = NULL;
	pthread_mutex_unlock(&p->mu);
}

int nv_pool_wait(struct nv_pool *p, int64_t deadline)
{
	int complete;

	pthread_mutex_lock(&p->mu);
	while (p->pending && clock_mono_ns() < deadline) {
		struct timespec ts = { (time_t)(deadline / NS_PER_S), (long)(deadline % NS_PER_S) };

		pthread_cond_timedwait(&p->done_cv, &p->mu, &ts);
	}
	complete = p->pending == 0;
	pthread_mutex_unlock(&p->mu);
	return complete;
}

nvmlReturn_t nv_pool_result(struct nv_pool *p, size_t i, int c, unsigned *kbs)
{
	nvmlReturn_t rc = NVML_ERROR_TIMEOUT;
	size_t k = 2 * i + (c == NVML_PCIE_UTIL_RX_BYTES);

	pthread_mutex_lock(&p->mu);
	if (k < p->njobs && p->jobs[k].state == 3 && p->jobs[k].batch == p->batch) {
		rc = p->jobs[k].rc;
		*kbs = p->jobs[k].kbs;
	}
	pthread_mutex_unlock(&p->mu);
	return rc;
}

void nv_pool_free(struct nv_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	for (size_t i = 0; i < p->nthr; i++)
		pthread_join(p->thr[i], NULL);
	if (p->loop) /* the workers, which send to it, are gone */
		loop_async_stop(p->loop, &p->wake);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done_cv);
	pthread_mutex_destroy(&p->mu);
	free(p->jobs);
	free(p);
}
