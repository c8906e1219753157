/* SPDX-License-Identifier: MIT */
/*
 * NVML events as they happen; see nvidia_events.h.
 *
 * A thread, not a helper process. nvmlEventSetWait_v2 blocks (up to its
 * timeout) and cannot be woken, so it must not run on the producer's
 * thread. A helper process would need an NVML of its own (nvmlInit,
 * device enumeration, matching its handles to ours by UUID, its own GPU-
 * lost handling) and a protocol, and would double the driver's per-process
 * state; the event set and the device handles are only valid inside the
 * process that made them. NVML is documented thread-safe, so one thread
 * that calls nothing but nvmlEventSetWait, and queues fixed-size records
 * for the producer, is the smallest thing that works: it never touches
 * JSON, the report, the configuration or any other state of the producer,
 * and all counting happens on the producer's thread when the loop is woken
 * (loop_async_send, the loop's one way back from threads) or at the next
 * report, whichever comes first. Signals
 * are blocked in the thread, so SIGTERM/SIGHUP still reach the producer's
 * ppoll. The thread checks a stop flag after each wait (NV_EV_WAIT_MS), so
 * closing (shutdown, reload) joins it within that time.
 *
 * The queue holds NV_EV_QUEUE records. When it is full (the producer is
 * busy), the thread waits and queues again:
 * it may fall behind, the driver keeps queueing, and no event is dropped
 * by us. A wait that fails (GPU lost, driver gone) is handed over once per
 * streak of that error. nvmlEventSetWait says GPU_IS_LOST without saying
 * which GPU, and may say it at every call while that GPU is registered, so
 * the other GPUs' events would stop too: the thread then makes a new set
 * with the registered GPUs that still answer (events pending in the old
 * one are lost with it), and the lost GPU is registered again when it
 * answers (nv_events_register, from the collector's lookup). A wait that
 * fails again the same way makes the thread sleep one timeout before
 * trying again, so a driver that keeps failing at once costs no CPU.
 *
 * The set and the registered handles are shared with the thread under mu;
 * the wait itself runs without it. Counting state is the producer's only.
 *
 * Counts are per device slot and per period: "xid_errors" by code (every
 * code seen since start stays, with 0 in a quiet period, so a counter
 * series does not vanish), "events" by kind; "xid_events" lists the
 * period's XIDs with their times (the first NV_EV_LIST; absent in a quiet
 * period); "last_xid" and its time stay.
 */
#include "nvidia_events.h"
#include "../core/loop.h"
#include "../../common/jset.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NV_EV_WAIT_MS 200   /* one nvmlEventSetWait; also how long closing may wait for the thread */
#define NV_EV_CODES 64      /* distinct XID codes counted per device */
#define NV_EV_DRAIN 256     /* records taken per turn of the loop */
#define NV_EV_QUEUE 1024    /* records queued for the producer at most (a pipe's 64 KiB held 1,638) */
#define NV_EV_LIST 32       /* XIDs listed with their times per device and period (all are counted) */

/* What the thread hands over. */
enum { REC_EVENT, REC_WAIT_ERROR };

struct ev_rec {
	nvmlDevice_t dev;         /* REC_EVENT: the device it came from */
	unsigned long long type;  /* REC_EVENT: nvmlEventType* bit(s) */
	unsigned long long data;  /* REC_EVENT: the XID code for an XID */
	int64_t real_ns;          /* when the thread got it (CLOCK_REALTIME) */
	int kind;
	int rc;                   /* REC_WAIT_ERROR: what nvmlEventSetWait returned */
};

/* The event types asked for, and the report's name of each ("events"; XIDs have their own fields). */
static const struct {
	unsigned long long bit;
	const char *name;
} ev_kinds[] = {
	{ nvmlEventTypeDoubleBitEccError, "double_bit_ecc" },
	{ nvmlEventTypeSingleBitEccError, "single_bit_ecc" },
	{ nvmlEventTypeClock, "clock_change" },
	{ nvmlEventTypeGpuUnavailableError, "gpu_unavailable" },
};
#define EV_WANT                                                                                           \
	(nvmlEventTypeXidCriticalError | nvmlEventTypeDoubleBitEccError | nvmlEventTypeSingleBitEccError | \
	 nvmlEventTypeClock | nvmlEventTypeGpuUnavailableError)
#define EV_NKINDS (sizeof(ev_kinds) / sizeof(ev_kinds[0]))

/* One device slot: the producer's thread only. */
struct ev_dev {
	nvmlDevice_t h;               /* the handle registered; NULL: none */
	unsigned gpu;                 /* its NVML index, for messages */
	unsigned long long mask;      /* the event types registered (written under mu: rebuild reads it) */
	int lost;                     /* counted as lost, not registered again since */
	/* registration at start, made by the thread before its first wait (shared with it under mu) */
	int pending;                  /* to be registered with pending_want (0: XIDs only) */
	unsigned long long pending_want;
	int reg_done;                 /* the thread registered it: reg_mask is what it got */
	unsigned long long reg_mask;
	struct {
		unsigned long long code;
		uint64_t n;           /* this period */
	} xid[NV_EV_CODES];
	size_t nxid;
	uint64_t kinds[EV_NKINDS];    /* this period, by ev_kinds */
	uint64_t lost_n;              /* this period */
	struct {
		unsigned long long code;
		int64_t ns;           /* CLOCK_REALTIME */
	} list[NV_EV_LIST];           /* this period's first XIDs, in order */
	size_t nlist;
	int have_last;
	unsigned long long last_xid;
	int64_t last_ns;              /* CLOCK_REALTIME */
};

struct nv_events {
	/* NVML, resolved from the library */
	nvml_event_create_fn create;
	nvml_event_free_fn set_free;
	nvml_register_fn reg;
	nvml_event_wait_fn wait;
	nvml_event_types_fn supported;
	nvml_error_string_fn error_string;
	struct nv_lctx *lc;           /* the producer's call ledger context (borrowed; may be NULL) */
	pthread_mutex_t mu;           /* set, dev[].h and dev[].mask as the thread reads them, and the queue */
	nvmlEventSet_t set;
	int have_set;
	/* the thread and its queue */
	pthread_t thread;
	int have_thread;              /* events are on: the thread runs, or will from nv_events_start */
	int started;                  /* the thread was started */
	atomic_int stop;
	struct ev_rec q[NV_EV_QUEUE]; /* a ring: qn records from qhead */
	size_t qhead, qn;
	struct loop *loop;            /* borrowed; NULL: taken at reports only */
	struct loop_async wake;       /* records queued: the loop takes them */
	/* device slots */
	struct ev_dev *dev;
	size_t ndev;
	struct log_limit lim, xid_lim;
};

/* Sleep ms milliseconds, or less when stop is set (checked every 20 ms). */
static void nap(struct nv_events *ev, int ms)
{
	while (ms > 0 && !atomic_load(&ev->stop)) {
		int step = ms < 20 ? ms : 20;
		struct timespec ts = { 0, (long)step * 1000000L };

		nanosleep(&ts, NULL);
		ms -= step;
	}
}

/* Hand one record over, and wake the loop; a full queue is waited out (or until stop). */
static void hand_over(struct nv_events *ev, const struct ev_rec *r)
{
	while (!atomic_load(&ev->stop)) {
		int queued = 0;

		pthread_mutex_lock(&ev->mu);
		if (ev->qn < NV_EV_QUEUE) {
			ev->q[(ev->qhead + ev->qn++) % NV_EV_QUEUE] = *r;
			queued = 1;
		}
		pthread_mutex_unlock(&ev->mu);
		if (queued) {
			if (ev->loop)
				loop_async_send(ev->loop, &ev->wake);
			return;
		}
		nap(ev, 5);
	}
}

/*
 * The thread, after GPU_IS_LOST: a new set with the registered GPUs that
 * still register (a lost one fails), in place of the old one. 1 done, 0 not.
 */
static int rebuild(struct nv_events *ev, struct nv_lctx *lc)
{
	nvmlEventSet_t fresh, old;

	if (NVC(lc, ev->create, &fresh) != NVML_SUCCESS)
		return 0;
	pthread_mutex_lock(&ev->mu);
	for (size_t i = 0; i < ev->ndev; i++)
		if (ev->dev[i].h && ev->dev[i].mask) /* a lost one fails: registered again when it answers */
			(void)NVC(lc, ev->reg, ev->dev[i].h, ev->dev[i].mask, fresh);
	old = ev->set;
	ev->set = fresh;
	pthread_mutex_unlock(&ev->mu);
	NVC(lc, ev->set_free, old);
	return 1;
}

/*
 * The thread, first: register the devices queued at start (nvmlDeviceRegisterEvents
 * can take a driver's hundreds of milliseconds: off the producer's first report).
 * The calls run without mu; the results are stored under it for the producer.
 */
static void register_pending(struct nv_events *ev, struct nv_lctx *lc)
{
	for (size_t i = 0; i < ev->ndev; i++) {
		struct ev_dev *d = &ev->dev[i];
		unsigned long long want, got = 0;
		nvmlDevice_t h;
		int pending;

		pthread_mutex_lock(&ev->mu);
		pending = d->pending;
		want = d->pending_want;
		h = d->h;
		d->pending = 0;
		pthread_mutex_unlock(&ev->mu);
		if (!pending || !h)
			continue;
		if (want && NVC(lc, ev->reg, h, want, ev->set) == NVML_SUCCESS)
			got = want;
		else if (NVC(lc, ev->reg, h, nvmlEventTypeXidCriticalError, ev->set) == NVML_SUCCESS)
			got = nvmlEventTypeXidCriticalError; /* NOT_SUPPORTED for some type of the mask: XIDs at least */
		pthread_mutex_lock(&ev->mu);
		d->reg_mask = got;
		d->reg_done = 1;
		pthread_mutex_unlock(&ev->mu);
	}
}

/* The waiting thread: nvmlEventSetWait, each result into the pipe. */
static void *ev_thread(void *arg)
{
	struct nv_events *ev = arg;
	int streak = NVML_SUCCESS;
	struct nv_lctx lc = { ev->lc ? ev->lc->l : NULL, "events (thread)", 0, 0 }; /* the ledger */

	register_pending(ev, &lc);
	while (!atomic_load(&ev->stop)) {
		nvmlEventData_t d;
		struct ev_rec r;
		nvmlReturn_t rc;
		nvmlEventSet_t set;

		pthread_mutex_lock(&ev->mu);
		set = ev->set;
		pthread_mutex_unlock(&ev->mu);
		memset(&d, 0, sizeof(d));
		rc = NVC(&lc, ev->wait, set, &d, NV_EV_WAIT_MS);
		memset(&r, 0, sizeof(r));
		r.real_ns = clock_real_ns();
		if (rc == NVML_SUCCESS) {
			streak = NVML_SUCCESS;
			r.kind = REC_EVENT;
			r.dev = d.device;
			r.type = d.eventType;
			r.data = d.eventData;
			hand_over(ev, &r);
		} else if (rc == NVML_ERROR_TIMEOUT) {
			streak = NVML_SUCCESS; /* the wait works: a later error is a new streak */
		} else {
			int again = rc == streak;

			if (!again) {
				r.kind = REC_WAIT_ERROR;
				r.rc = rc;
				hand_over(ev, &r);
			}
			streak = rc;
			if (again || (rc != NVML_ERROR_GPU_IS_LOST && rc != NVML_ERROR_RESET_REQUIRED) || !rebuild(ev, &lc))
				nap(ev, NV_EV_WAIT_MS); /* a driver that fails at once does not make us spin */
		}
	}
	return NULL;
}

static const char *ev_strerror(const struct nv_events *ev, nvmlReturn_t rc, char *dst, size_t size)
{
	const char *s = ev->error_string ? ev->error_string(rc) : NULL;

	snprintf(dst, size, "%s (NVML error %d)", s && *s ? s : "error", rc);
	return dst;
}

/* Device slot i counts a loss, once until it is registered again. */
static void count_lost(struct nv_events *ev, size_t i)
{
	if (ev->dev[i].lost)
		return;
	ev->dev[i].lost = 1;
	ev->dev[i].lost_n++;
}

/* Count one XID of device d. */
static void count_xid(struct nv_events *ev, struct ev_dev *d, unsigned long long code, int64_t real_ns)
{
	size_t k;

	d->have_last = 1;
	d->last_xid = code;
	d->last_ns = real_ns;
	if (d->nlist < NV_EV_LIST) {
		d->list[d->nlist].code = code;
		d->list[d->nlist++].ns = real_ns;
	}
	for (k = 0; k < d->nxid && d->xid[k].code != code; k++)
		;
	if (k == d->nxid) {
		if (d->nxid == NV_EV_CODES) {
			log_limited(&ev->lim, "nvidia: more than %d distinct XID codes on one GPU; XID %llu is not counted",
				    NV_EV_CODES, code);
			return;
		}
		d->xid[d->nxid].code = code;
		d->xid[d->nxid++].n = 0;
	}
	d->xid[k].n++;
}

/* Count one record (producer's thread). */
static void take(struct nv_events *ev, const struct ev_rec *r)
{
	char why[160];
	size_t i;

	if (r->kind == REC_WAIT_ERROR) { /* once per streak of one error (the thread's) */
		log_warn("nvidia: waiting for events: %s%s", ev_strerror(ev, r->rc, why, sizeof(why)),
			 r->rc == NVML_ERROR_GPU_IS_LOST ? "; the lost GPU shows at its next read" : "");
		return;
	}
	for (i = 0; i < ev->ndev && (!ev->dev[i].h || ev->dev[i].h != r->dev); i++)
		;
	if (i == ev->ndev)
		return; /* a device not selected, or a handle dropped since */
	if (r->type & nvmlEventTypeXidCriticalError) {
		count_xid(ev, &ev->dev[i], r->data, r->real_ns);
		log_limited(&ev->xid_lim, "nvidia: GPU %u: XID %llu", ev->dev[i].gpu, r->data);
	}
	for (size_t k = 0; k < EV_NKINDS; k++)
		if (r->type & ev_kinds[k].bit)
			ev->dev[i].kinds[k]++;
	if (r->type & nvmlEventTypeGpuUnavailableError)
		count_lost(ev, i);
}

/* Take the queued records, NV_EV_DRAIN at most (more: the loop is woken again for them). */
static void drain(struct nv_events *ev)
{
	struct ev_rec r[16];

	for (int rounds = 0; rounds < NV_EV_DRAIN / 16; rounds++) {
		size_t n = 0, left;

		pthread_mutex_lock(&ev->mu);
		while (n < ARRAY_SIZE(r) && ev->qn) {
			r[n++] = ev->q[ev->qhead];
			ev->qhead = (ev->qhead + 1) % NV_EV_QUEUE;
			ev->qn--;
		}
		left = ev->qn;
		pthread_mutex_unlock(&ev->mu);
		for (size_t k = 0; k < n; k++)
			take(ev, &r[k]);
		if (!left)
			return;
	}
	if (ev->loop)
		loop_async_send(ev->loop, &ev->wake);
}

static void on_wake(struct loop_async *a)
{
	drain(a->data);
}

/* Start the thread with every signal blocked (they are the producer's, taken in its ppoll). 0 or -errno. */
static int start_thread(struct nv_events *ev)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&ev->thread, NULL, ev_thread, ev);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
}

struct nv_events *nv_events_new(void *dl, struct loop *loop, size_t ndev, struct nv_lctx *lc)
{
	struct nv_events *ev = xcalloc(1, sizeof(*ev));
	void *sym;
	int err;
	char why[160];
	nvmlReturn_t rc;

	ev->lc = lc;
	ev->ndev = ndev;
	pthread_mutex_init(&ev->mu, NULL);
	ev->dev = xcalloc(ndev ? ndev : 1, sizeof(*ev->dev));
	/* POSIX: a function's address and a void * share one representation. */
#define RESOLVE(field, ...)                                                         \
	do {                                                                        \
		const char *names_[] = { __VA_ARGS__, NULL };                       \
		sym = NULL;                                                         \
		for (size_t k_ = 0; names_[k_] && !sym; k_++)                       \
			sym = dlsym(dl, names_[k_]);                                \
		memcpy(&ev->field, &sym, sizeof(sym));                              \
	} while (0)
	RESOLVE(create, "nvmlEventSetCreate");
	RESOLVE(set_free, "nvmlEventSetFree");
	RESOLVE(reg, "nvmlDeviceRegisterEvents");
	RESOLVE(wait, "nvmlEventSetWait_v2", "nvmlEventSetWait");
	RESOLVE(supported, "nvmlDeviceGetSupportedEventTypes");
	RESOLVE(error_string, "nvmlErrorString");
#undef RESOLVE
	if (!ev->create || !ev->set_free || !ev->reg || !ev->wait) {
		log_info("nvidia: this NVML has no event sets; XIDs and other events are not reported");
		return ev;
	}
	rc = NVC(ev->lc, ev->create, &ev->set);
	if (rc != NVML_SUCCESS) {
		log_warn("nvidia: cannot create an NVML event set: %s; XIDs and other events are not reported",
			 ev_strerror(ev, rc, why, sizeof(why)));
		return ev;
	}
	ev->have_set = 1;
	if (loop && (err = loop_async_start(loop, &ev->wake, on_wake, ev)))
		log_warn("nvidia: cannot wake the loop: %s; events are counted at reports only", strerror(-err));
	else
		ev->loop = loop;
	ev->have_thread = 1; /* started by nv_events_start, once the devices are queued */
	return ev;
}

void nv_events_start(struct nv_events *ev)
{
	int rc;

	if (!ev || !ev->have_thread || ev->started)
		return;
	if ((rc = start_thread(ev)) < 0) {
		log_warn("nvidia: cannot start the event thread: %s; XIDs and other events are not reported",
			 strerror(-rc));
		ev->have_thread = 0;
		for (size_t i = 0; i < ev->ndev; i++)
			ev->dev[i].mask = 0;
		return;
	}
	ev->started = 1;
}

void nv_events_register(struct nv_events *ev, size_t i, unsigned gpu, nvmlDevice_t h)
{
	struct ev_dev *d;
	unsigned long long want = EV_WANT, sup = 0;

	if (!ev || i >= ev->ndev || !h)
		return;
	d = &ev->dev[i];
	d->lost = 0;
	d->gpu = gpu;
	if (!ev->have_thread)
		return;
	drain(ev); /* events of the handle before are counted under it */
	if (ev->supported && NVC(ev->lc, ev->supported, h, &sup) == NVML_SUCCESS)
		want &= sup;
	pthread_mutex_lock(&ev->mu); /* the thread may be making a new set */
	d->h = h;
	d->mask = 0;
	if (!ev->started) { /* at start: the thread registers it before its first wait */
		d->pending = 1;
		d->pending_want = want;
		d->reg_done = 0;
		d->mask = want ? want : nvmlEventTypeXidCriticalError; /* what it will register, short of a refusal */
	} else if (want && NVC(ev->lc, ev->reg, h, want, ev->set) == NVML_SUCCESS)
		d->mask = want;
	else if (NVC(ev->lc, ev->reg, h, nvmlEventTypeXidCriticalError, ev->set) == NVML_SUCCESS)
		d->mask = nvmlEventTypeXidCriticalError; /* NOT_SUPPORTED for some type of the mask: XIDs at least */
	pthread_mutex_unlock(&ev->mu);
}

void nv_events_lost(struct nv_events *ev, size_t i)
{
	if (ev && i < ev->ndev)
		count_lost(ev, i);
}


void nv_events_report(struct nv_events *ev, size_t i, json_t *o)
{
	struct ev_dev *d;
	json_t *e;

	if (!ev || i >= ev->ndev)
		return;
	drain(ev);
	d = &ev->dev[i];
	if (ev->started) { /* what the thread's registration at start got */
		pthread_mutex_lock(&ev->mu);
		if (d->reg_done) {
			d->mask = d->reg_mask;
			d->reg_done = 0;
		}
		pthread_mutex_unlock(&ev->mu);
	}
	if (d->mask & nvmlEventTypeXidCriticalError) {
		json_t *x = jset_obj(o, "xid_errors");
		char key[24];

		for (size_t k = 0; k < d->nxid; k++) {
			snprintf(key, sizeof(key), "%llu", d->xid[k].code);
			jset_u64(x, key, d->xid[k].n);
			d->xid[k].n = 0;
		}
	} else {
		json_object_del(o, "xid_errors");
	}
	if (d->nlist) { /* built only in a period with XIDs */
		json_t *a = json_array();
		char iso[ISO8601_LEN];

		for (size_t k = 0; k < d->nlist; k++) {
			iso8601_format(d->list[k].ns, iso);
			json_array_append_new(a, json_pack("{s:I, s:s}", "xid", (json_int_t)d->list[k].code, "time", iso));
		}
		json_object_set_new(o, "xid_events", a);
		d->nlist = 0;
	} else {
		json_object_del(o, "xid_events");
	}
	if (d->have_last) {
		char iso[ISO8601_LEN];

		jset_u64(o, "last_xid", d->last_xid);
		iso8601_format(d->last_ns, iso);
		jset_str(o, "last_xid_time", iso);
	} else {
		json_object_del(o, "last_xid");
		json_object_del(o, "last_xid_time");
	}
	e = jset_obj(o, "events");
	for (size_t k = 0; k < EV_NKINDS; k++) {
		if (d->mask & ev_kinds[k].bit)
			jset_u64(e, ev_kinds[k].name, d->kinds[k]);
		else
			json_object_del(e, ev_kinds[k].name);
		d->kinds[k] = 0;
	}
	jset_u64(e, "gpu_lost", d->lost_n);
	d->lost_n = 0;
}

void nv_events_free(struct nv_events *ev)
{
	if (!ev)
		return;
	if (ev->started) {
		atomic_store(&ev->stop, 1);
		pthread_join(ev->thread, NULL);
	}
	if (ev->loop) /* the thread, which sends to it, is gone */
		loop_async_stop(ev->loop, &ev->wake);
	if (ev->have_set)
		NVC(ev->lc, ev->set_free, ev->set);
	pthread_mutex_destroy(&ev->mu);
	free(ev->dev);
	free(ev);
}
