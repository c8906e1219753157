/* SPDX-License-Identifier: MIT */
/*
 * accel-remote-write: read the report stream (accel-monitor, neuron-monitor
 * 2.x or 2020) on stdin and push it to Prometheus-compatible storage with
 * the remote write 1.0 protocol.
 *
 *   accel-monitor | accel-remote-write --url http://prom:9090/api/v1/write
 *
 * The series are accel-prom's: each report goes through accel-prom's store
 * (common/series/prom_store.c: the common mapping, counters summed from the sink's
 * start, series dropped when their source reports an error), and the series
 * that report refreshed are pushed with the report's timestamps, so one
 * dashboard serves pulled and pushed nodes.
 *
 * A push sink (common/push.h runs the threads and the drain): the reader's
 * hooks map reports and pack samples into batches (max samples, max bytes,
 * max delay), each batch a compressed WriteRequest appended to the queue
 * (common/recq.h: in memory, or on disk with --queue-dir so that it
 * survives a crash; there each report ends its batch, so that no sample
 * read is only in memory); the sender sends the oldest request until the
 * receiver takes it, retrying with backoff and jitter (remote-write_http.h),
 * and acknowledges it in the queue only then. One connection, requests in
 * order: a series' samples never arrive out of order.
 */
#include "../../common/series/prom_store.h"
#include "remote-write_enc.h"
#include "remote-write_http.h"
#include "../../common/recq.h"
#include "../../common/log.h"
#include "../../common/push.h"
#include "../../common/samples.h"
#include "../../common/sink.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_REPEAT 64           /* --label and --header, each */
#define SELF_SAMPLES 7          /* accel_remote_write_* samples added to each request */

/* Everything the options set. */
struct opts {
	const char *url;
	const char *labels[MAX_REPEAT];
	size_t nlabels;
	const char *headers[MAX_REPEAT];
	size_t nheaders;
	const char *ca_file, *cert_file, *key_file, *bearer_file, *basic_user, *basic_pass_file;
	int insecure;
	unsigned long long max_samples, max_bytes;
	int64_t deadline_ms;
	int64_t timeout_ms;
	int64_t backoff_min_ms, backoff_max_ms;
	int64_t metadata_ms;
	int no_metadata;
	const char *queue_dir;
	unsigned long long queue_max_bytes;
	int have_queue_max;
	int fsync_policy;
	int64_t drain_ms;
	int64_t staleness_ms;
	unsigned long long max_line;
};

/* The sink: its options, its queue, and what its reader, sender and main-thread hooks keep. */
struct rw {
	struct opts o;
	struct push push;
	/* Under the push lock: the queue, and the counters since the start. */
	struct recq *q;
	uint64_t sent, failed, retried, requests, meta_sent;
	uint64_t skipped_old;    /* samples not newer than the last one of their series */
	int64_t last_success_ms; /* unix ms; 0 never */
	/* The reader's. */
	struct prom_store *store;
	struct rw_enc *enc;
	struct buf out;
	int64_t first_ns;      /* monotonic time of the batch's first sample; 0: empty batch */
	int64_t last_self_ms;  /* timestamp of the last self-metric samples */
	int64_t meta_due_ns;   /* 0: at the first batch */
	int64_t sweep_ns;      /* monotonic time of the last sweep while the input was quiet */
	size_t meta_nfams;     /* families in the last metadata sent */
	struct log_limit lim_series;
	/* per encoder series id: pushed and not yet marked stale, the report generation that last saw it visible */
	unsigned char *live;
	uint32_t *gen;
	int64_t *last_ts;
	size_t nids;
	uint32_t cur_gen;
	int64_t report_ms;     /* the newest sample timestamp of the report being pushed */
	int64_t read_ms;       /* the read time given to the last report (unix ms), strictly increasing */
	size_t self_bytes;     /* what the self-metrics add to a request (rw_enc_cost) */
	/* The sender's: the request taken (a copy of the queue's oldest) and the answer to it. */
	struct rw_http http;
	struct buf body;
	struct buf hlab; /* a histogram series' labels with le (hist_each) */
	uint32_t body_samples;
	uint64_t body_id;
	struct rw_reply rep;
	unsigned seed;         /* backoff jitter */
	/* The main thread's. */
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: accel-remote-write --url URL [OPTION]...\n"
		"Read accel-monitor or neuron-monitor reports (one JSON object per line) from stdin\n"
		"and push accel-prom's series to Prometheus-compatible storage with the remote\n"
		"write 1.0 protocol (see docs/accel-remote-write.md).\n"
		"\n"
		"      --url URL                 the receiver (\"http://127.0.0.1:9090/api/v1/write\")\n"
		"      --label NAME=VALUE        an external label added to every series (repeatable);\n"
		"                                instance (KUBE_NODE_NAME, else the host name) and\n"
		"                                job (\"accel-monitor\") are set unless given here\n"
		"Batching and delivery:\n"
		"      --max-samples-per-send N  samples in one request (default 2000)\n"
		"      --max-bytes N             uncompressed bytes of one request, about (default 1048576)\n"
		"      --batch-send-deadline DUR send a batch at the latest this long after its first\n"
		"                                sample (default 5s); with --queue-dir each report's\n"
		"                                samples are a request (on disk) once it is read\n"
		"      --min-backoff DUR         first retry after about this long (default 30ms)\n"
		"      --max-backoff DUR         retries at most this far apart (default 5s);\n"
		"                                a Retry-After from the receiver wins\n"
		"      --timeout DUR             one request (default 30s)\n"
		"      --metadata-interval DUR   send the families' type, help and unit this often\n"
		"                                (default 1m); --no-metadata never\n"
		"      --drain-timeout DUR       at the end of input or on SIGTERM, keep sending what is\n"
		"                                queued for at most this long (default 10s)\n"
		"Queue:\n"
		"      --queue-dir DIR           keep unacknowledged requests in DIR (created), replayed\n"
		"                                after a crash or restart; default: in memory\n"
		"      --queue-max-bytes N       queue bound; the oldest requests are dropped (and\n"
		"                                counted) past it (default 268435456 with --queue-dir,\n"
		"                                67108864 in memory)\n"
		"      --queue-fsync always|never  fsync each append and acknowledgement (default always)\n"
		"Receivers that want more:\n"
		"      --ca-file FILE            CA certificates to verify the receiver with\n"
		"      --cert-file FILE, --key-file FILE   a client certificate and its key\n"
		"      --insecure-skip-verify    do not verify the receiver's certificate\n"
		"      --bearer-token-file FILE  Authorization: Bearer (the file is read at each request)\n"
		"      --basic-auth-user NAME, --basic-auth-password-file FILE   basic auth\n"
		"      --header \"NAME: VALUE\"    an HTTP header of every request (repeatable)\n"
		"Input:\n"
		"      --staleness DUR           as accel-prom's: series not refreshed for DUR are dropped\n"
		"                                (a counter that comes back goes on from its value)\n"
		"      --max-line-bytes N        skip input lines longer than N bytes (default %u)\n"
		"  -v, --verbose[=N]             log level: 0 silent, 1 errors and warnings (default),\n"
		"                                2 info (and the self-metrics every 10 s), 3 debug\n"
		"      --version                 print the version and exit\n"
		"  -h, --help                    print this help and exit\n"
		"\n"
		"Exit codes: 0 ok, 1 system error, 2 usage error, 3 configuration error.\n",
		STREAM_DEFAULT_MAX_LINE);
}

static int add_label(const char *arg, void *dst, char *err, size_t errsz)
{
	struct opts *o = dst;

	if (o->nlabels == MAX_REPEAT) {
		snprintf(err, errsz, "at most %d", MAX_REPEAT);
		return -1;
	}
	if (!strchr(arg, '=') || *arg == '=') {
		snprintf(err, errsz, "expected NAME=VALUE, got \"%s\"", arg);
		return -1;
	}
	o->labels[o->nlabels++] = arg;
	return 0;
}

static int add_header(const char *arg, void *dst, char *err, size_t errsz)
{
	struct opts *o = dst;

	if (o->nheaders == MAX_REPEAT) {
		snprintf(err, errsz, "at most %d", MAX_REPEAT);
		return -1;
	}
	o->headers[o->nheaders++] = arg;
	return 0;
}

/* ---- self-metrics ---------------------------------------------------------------- */

#define F(id, name, help, type, unit) static const struct family id = { name, help, type, unit }
F(F_SENT, "accel_remote_write_samples_sent_total", "Samples the receiver acknowledged", METRIC_COUNTER, "count");
F(F_FAILED, "accel_remote_write_samples_failed_total",
  "Samples in requests the receiver refused with a status that is not retried (4xx but 429), dropped", METRIC_COUNTER,
  "count");
F(F_RETRIED, "accel_remote_write_samples_retried_total",
  "Samples sent again after a network error, a 5xx or a 429", METRIC_COUNTER, "count");
F(F_DROPPED, "accel_remote_write_samples_dropped_total",
  "Samples dropped before sending: the oldest when the queue was full, and records lost to corruption",
  METRIC_COUNTER, "count");
F(F_QBYTES, "accel_remote_write_queue_bytes", "Bytes of requests waiting in the queue", METRIC_GAUGE, "bytes");
F(F_QSAMPLES, "accel_remote_write_queue_samples", "Samples waiting in the queue", METRIC_GAUGE, "count");
F(F_LAST, "accel_remote_write_last_success_timestamp_seconds",
  "Unix time of the last request the receiver acknowledged", METRIC_GAUGE, "seconds");
#undef F
static const struct family *const SELF[SELF_SAMPLES] = { &F_SENT, &F_FAILED, &F_RETRIED, &F_DROPPED,
							 &F_QBYTES, &F_QSAMPLES, &F_LAST };

struct self_snapshot {
	uint64_t sent, failed, retried, dropped, requests, skipped;
	struct recq_stats qs;
	int64_t last_ms;
};

static void self_snapshot(struct rw *rw, struct self_snapshot *s)
{
	push_lock(&rw->push);
	recq_stats(rw->q, &s->qs);
	s->sent = rw->sent;
	s->failed = rw->failed;
	s->retried = rw->retried;
	s->requests = rw->requests;
	s->skipped = rw->skipped_old;
	s->last_ms = rw->last_success_ms;
	push_unlock(&rw->push);
	s->dropped = s->qs.dropped_items;
}

/* ---- the reader ---------------------------------------------------------------------- */

/* The NaN Prometheus writes as a staleness marker (value.StaleNaN). */
static double stale_nan(void)
{
	uint64_t bits = 0x7ff0000000000002ull;
	double d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

static void ids_grow(struct rw *rw, uint32_t id)
{
	size_t n;

	if (id < rw->nids)
		return;
	n = rw->nids ? rw->nids : 1024;
	while (n <= id)
		n *= 2;
	rw->live = xrealloc(rw->live, n);
	rw->gen = xrealloc(rw->gen, n * sizeof(*rw->gen));
	rw->last_ts = xrealloc(rw->last_ts, n * sizeof(*rw->last_ts));
	memset(rw->live + rw->nids, 0, n - rw->nids);
	memset(rw->gen + rw->nids, 0, (n - rw->nids) * sizeof(*rw->gen));
	memset(rw->last_ts + rw->nids, 0, (n - rw->nids) * sizeof(*rw->last_ts));
	rw->nids = n;
}

/* Queue one compressed request and wake the sender. */
static void enqueue(struct rw *rw, const struct buf *b, uint32_t nsamples)
{
	push_lock(&rw->push);
	recq_push(rw->q, b->data, b->len, nsamples, NULL); /* a full queue drops the oldest, and says so */
	push_notify(&rw->push);
	push_unlock(&rw->push);
}

static void self_add(struct rw *rw, const struct family *f, double v, int64_t ts)
{
	uint32_t id;

	if (rw_enc_series(rw->enc, f, "", 0, &id) == 0)
		rw_enc_add(rw->enc, id, ts, v);
}

/* Pack the batch (with the self-metrics, stamped now) into a request and queue it; metadata first when due. */
static void flush_batch(struct rw *rw, int64_t now_ns)
{
	size_t n = rw_enc_pending(rw->enc);
	int64_t now_ms = clock_real_ns() / NS_PER_MS;
	int rc;

	if (!n)
		return;
	/* In memory, with each batch; with --queue-dir (a request per report) at most once per --batch-send-deadline. */
	if (now_ms > rw->last_self_ms && (!rw->o.queue_dir || now_ms - rw->last_self_ms >= rw->o.deadline_ms)) {
		struct self_snapshot s;

		self_snapshot(rw, &s);
		self_add(rw, &F_SENT, (double)s.sent, now_ms);
		self_add(rw, &F_FAILED, (double)s.failed, now_ms);
		self_add(rw, &F_RETRIED, (double)s.retried, now_ms);
		self_add(rw, &F_DROPPED, (double)s.dropped, now_ms);
		self_add(rw, &F_QBYTES, (double)s.qs.bytes, now_ms);
		self_add(rw, &F_QSAMPLES, (double)s.qs.items, now_ms);
		if (s.last_ms)
			self_add(rw, &F_LAST, (double)s.last_ms / 1000.0, now_ms);
		rw->last_self_ms = now_ms;
		n = rw_enc_pending(rw->enc);
	}
	if (!rw->o.no_metadata && (now_ns >= rw->meta_due_ns || rw_enc_nfamilies(rw->enc) != rw->meta_nfams)) {
		if ((rc = rw_enc_metadata(rw->enc, &rw->out)) == 0)
			enqueue(rw, &rw->out, 0);
		else
			log_err("remote-write: cannot encode the metadata: %s", strerror(-rc));
		rw->meta_due_ns = now_ns + rw->o.metadata_ms * NS_PER_MS;
		rw->meta_nfams = rw_enc_nfamilies(rw->enc);
	}
	if ((rc = rw_enc_flush(rw->enc, &rw->out, NULL))) {
		log_err("remote-write: cannot encode a batch of %zu samples: %s; dropped", n, strerror(-rc));
		return;
	}
	enqueue(rw, &rw->out, (uint32_t)n);
	rw->first_ns = 0;
}

/* Send the batch first if one more sample of series id (and the self-metrics) would not fit in a request. */
static void make_room(struct rw *rw, uint32_t id)
{
	size_t n = rw_enc_pending(rw->enc);

	if (n && (n + 1 + SELF_SAMPLES > rw->o.max_samples ||
		  rw_enc_pending_bytes(rw->enc) + rw_enc_cost(rw->enc, id) + rw->self_bytes > rw->o.max_bytes))
		flush_batch(rw, clock_mono_ns());
}

/*
 * One series the last report refreshed: into the batch, unless its
 * timestamp is not newer than the last sample (or staleness marker) sent
 * for it: Prometheus refuses those (out of order, or a duplicate), and
 * would refuse the whole request with them.
 */
static void send_one(struct rw *rw, uint32_t id, int64_t ts_ms, double value);

/* A series that has no id: logged (rate-limited), not sent. */
static void series_refused(struct rw *rw, const char *name, const char *suffix, const char *labels, size_t len, int rc)
{
	log_limited(&rw->lim_series, "remote-write: %s%s%.*s: %s; not sent", name, suffix, (int)len, labels,
		    rc == -ENOSPC ? "too many series" : rc == -E2BIG ? "too many labels" : "bad label set");
}

/*
 * Each series of a histogram as Prometheus scrapes it from accel-prom (name_bucket{le} cumulative, name_sum,
 * name_count): fn with its id. Found by name and labels each time (a histogram has n + 3 of them, one slot word).
 */
static void hist_each(struct rw *rw, const struct prom_series_view *v, int log,
		      void (*fn)(struct rw *rw, uint32_t id, int64_t ts_ms, double value))
{
	const struct sample_hist *h = v->hist;
	double cum = 0;
	uint32_t id;
	int rc;

	for (size_t i = 0; i <= h->n + 2; i++) {
		const char *suffix = i <= h->n ? "_bucket" : i == h->n + 1 ? "_sum" : "_count";
		char le[32];

		buf_reset(&rw->hlab);
		if (i <= h->n) {
			cum += h->counts[i];
			if (i < h->n)
				sample_le_text(h->le[i], le);
			if (v->labels_len)
				buf_add(&rw->hlab, v->labels, v->labels_len - 1);
			buf_printf(&rw->hlab, "%sle=\"%s\"}", v->labels_len ? "," : "{", i < h->n ? le : "+Inf");
		} else {
			buf_add(&rw->hlab, v->labels, v->labels_len);
		}
		rc = rw_enc_series_sub(rw->enc, v->fam, suffix, rw->hlab.data ? rw->hlab.data : "", rw->hlab.len, &id);
		if (rc) {
			if (log)
				series_refused(rw, v->fam->name, suffix, rw->hlab.data, rw->hlab.len, rc);
			continue;
		}
		fn(rw, id, v->ts_ms, i <= h->n ? cum : i == h->n + 1 ? h->sum : h->count);
	}
}

static void on_series(const struct prom_series_view *v, void *ud)
{
	struct rw *rw = ud;
	uint32_t id;
	int rc;

	if (v->hist) {
		hist_each(rw, v, 1, send_one);
		return;
	}
	if (*v->slot) {
		id = *v->slot - 1;
	} else if ((rc = rw_enc_series(rw->enc, v->fam, v->labels, v->labels_len, &id)) == 0) {
		*v->slot = id + 1; /* found by its label set once, then by this word */
	} else {
		series_refused(rw, v->fam->name, "", v->labels, v->labels_len, rc);
		return;
	}
	send_one(rw, id, v->ts_ms, v->value);
}

/* One sample of series id into the batch (see on_series). */
static void send_one(struct rw *rw, uint32_t id, int64_t ts_ms, double value)
{
	ids_grow(rw, id);
	if (ts_ms <= rw->last_ts[id]) {
		push_lock(&rw->push);
		rw->skipped_old++;
		push_unlock(&rw->push);
		return;
	}
	/* A request holds at most --max-samples-per-send samples and about --max-bytes, the self-metrics included. */
	make_room(rw, id);
	rw_enc_add(rw->enc, id, ts_ms, value);
	rw->live[id] = 1;
	rw->last_ts[id] = ts_ms;
	if (ts_ms > rw->report_ms)
		rw->report_ms = ts_ms;
}

/* A series id still in accel-prom's exposition (see on_visible). */
static void mark_visible(struct rw *rw, uint32_t id, int64_t ts_ms, double value)
{
	(void)ts_ms;
	(void)value;
	ids_grow(rw, id);
	rw->gen[id] = rw->cur_gen;
}

/* A series still in accel-prom's exposition after the report. */
static void on_visible(const struct prom_series_view *v, void *ud)
{
	struct rw *rw = ud;
	uint32_t id;

	if (v->hist) {
		hist_each(rw, v, 0, mark_visible);
		return;
	}
	if (*v->slot)
		id = *v->slot - 1;
	else if (rw_enc_series(rw->enc, v->fam, v->labels, v->labels_len, &id))
		return;
	else
		*v->slot = id + 1;
	mark_visible(rw, id, 0, 0);
}

/*
 * Series pushed before that have left accel-prom's exposition (their
 * source reported an error, the instance changed, or they went stale) get
 * a staleness marker, as Prometheus writes one when a scrape no longer has
 * a series: queries stop returning them at once instead of 5 minutes later.
 */
static void mark_stale(struct rw *rw)
{
	rw->cur_gen++;
	prom_store_each(rw->store, 0, on_visible, rw);
	for (uint32_t id = 0; id < rw->nids; id++) {
		int64_t ts;

		if (!rw->live[id] || rw->gen[id] == rw->cur_gen)
			continue;
		ts = rw->report_ms > rw->last_ts[id] ? rw->report_ms : rw->last_ts[id] + 1;
		make_room(rw, id);
		rw_enc_add(rw->enc, id, ts, stale_nan());
		rw->live[id] = 0;
		rw->last_ts[id] = ts;
	}
}

/* The batch's deadline: send it --batch-send-deadline after its first sample. */
static void flush_when_due(struct rw *rw, int64_t now_ns)
{
	if (rw->first_ns && now_ns - rw->first_ns >= rw->o.deadline_ms * NS_PER_MS)
		flush_batch(rw, now_ns);
}

/* After the samples or markers of a report or a sweep are in the batch. */
static void batch_added(struct rw *rw, int64_t now_ns)
{
	if (rw_enc_pending(rw->enc) && !rw->first_ns)
		rw->first_ns = now_ns;
	/* With --queue-dir every sample is on disk once its report is read: the report's samples (or the
	 * sweep's staleness markers) are sealed into a request now rather than at --batch-send-deadline. */
	if (rw->o.queue_dir)
		flush_batch(rw, now_ns);
}

/* push_ops.report */
static void rw_report(void *ud, struct push *p, json_t *rep, const struct sink_input *in)
{
	struct rw *rw = ud;
	int64_t now = clock_mono_ns(), read_ms;

	(void)p;
	flush_when_due(rw, now);
	/* A report without timestamps (neuron-monitor's, a capture replayed) is stamped with its read time. Two
	 * read within one millisecond would give the second one's samples the first one's timestamps, and those
	 * are not sent (a counter's last value would never arrive): each report's read time is at least a
	 * millisecond after the last one's. */
	read_ms = clock_real_ns() / NS_PER_MS;
	rw->read_ms = read_ms > rw->read_ms ? read_ms : rw->read_ms + 1;
	prom_store_report(rw->store, rep, in->where, now, rw->read_ms * NS_PER_MS);
	rw->report_ms = rw->read_ms;
	prom_store_each(rw->store, 1, on_series, rw);
	mark_stale(rw);
	batch_added(rw, now);
}

/*
 * push_ops.idle: the batch's deadline; and, once a second, series past the
 * staleness window leave, as accel-prom's sweep drops them, and get their
 * staleness markers now.
 */
static void rw_idle(void *ud, struct push *p, int64_t now)
{
	struct rw *rw = ud;

	(void)p;
	flush_when_due(rw, now);
	if (now - rw->sweep_ns < NS_PER_S)
		return;
	rw->sweep_ns = now;
	prom_store_sweep(rw->store, now);
	rw->report_ms = clock_real_ns() / NS_PER_MS;
	mark_stale(rw);
	batch_added(rw, now);
}

/* push_ops.end: the last batch. */
static void rw_end(void *ud, struct push *p)
{
	(void)p;
	flush_batch(ud, clock_mono_ns());
}

static void on_bad_line(void *ud, enum stream_bad why)
{
	struct rw *rw = ud;

	prom_store_bad_line(rw->store, why);
}

/* ---- the sender ------------------------------------------------------------------------- */

/* push_ops.take: a copy of the oldest request; it leaves the queue once settled. */
static int rw_take(void *ud, int flush)
{
	struct rw *rw = ud;

	(void)flush; /* the reader queues whole requests */
	return recq_peek(rw->q, &rw->body, &rw->body_samples, &rw->body_id);
}

/* push_ops.deliver: one POST; 5xx, 429 and network errors wait the backoff, or the receiver's Retry-After. */
static void rw_deliver(void *ud, struct push *p, struct push_try *t)
{
	struct rw *rw = ud;

	(void)p;
	rw_http_send(&rw->http, rw->body.data, rw->body.len, &rw->rep);
	if (rw->rep.outcome != RW_RETRY)
		return;
	t->result = PUSH_RETRY;
	t->wait_ms = rw->rep.retry_after_ms >= 0
			     ? rw->rep.retry_after_ms
			     : http_backoff_ms(rw->o.backoff_min_ms, rw->o.backoff_max_ms, t->failed + 1, &rw->seed);
}

/* push_ops.settle: acknowledge what the receiver took or refused for good; count; say. */
static void rw_settle(void *ud, const struct push_try *t)
{
	struct rw *rw = ud;
	uint32_t ns = rw->body_samples;

	if (t->result == PUSH_LEFT)
		return; /* stopped between tries: the request stays queued */
	rw->requests++;
	if (t->result == PUSH_RETRY) {
		unsigned attempt = t->failed + 1;

		rw->retried += ns;
		if (attempt == 1 || attempt % 20 == 0)
			log_warn("remote-write: %s: %s; retrying in %" PRId64 " ms (attempt %u, %u samples)", rw->o.url,
				 rw->rep.detail, t->wait_ms, attempt, ns);
		return;
	}
	recq_ack(rw->q, rw->body_id);
	if (rw->rep.outcome == RW_DROP) {
		rw->failed += ns;
		log_err("remote-write: %s refused a request of %u samples (%zu bytes): %s; dropped, as Prometheus "
			"does (%" PRIu64 " samples refused since the start)",
			rw->o.url, ns, rw->body.len, rw->rep.detail, rw->failed);
		return;
	}
	if (ns)
		rw->sent += ns;
	else
		rw->meta_sent++;
	rw->last_success_ms = clock_real_ns() / NS_PER_MS;
	if (t->failed)
		log_info("remote-write: %s: delivered after %u attempts", rw->o.url, t->failed + 1);
}

/* ---- main ---------------------------------------------------------------------------------- */

/* push_ops.stats: -v: the counters on stderr (and once at exit). */
static void rw_stats(void *ud, int64_t now_ns)
{
	struct rw *rw = ud;
	struct self_snapshot s;
	int64_t now_ms = clock_real_ns() / NS_PER_MS;

	(void)now_ns;
	self_snapshot(rw, &s);
	log_info("remote-write: samples sent %" PRIu64 " (%" PRIu64 " requests), failed %" PRIu64 ", retried %" PRIu64
		 ", dropped %" PRIu64 "; queue %" PRIu64 " bytes, %" PRIu64 " samples; last success %s%.1f s ago; "
		 "%" PRIu64 " samples not newer than their series' last, not sent",
		 s.sent, s.requests, s.failed, s.retried, s.dropped, s.qs.bytes, s.qs.items, s.last_ms ? "" : "never, ",
		 s.last_ms ? (double)(now_ms - s.last_ms) / 1000.0 : 0.0, s.skipped);
}

static const struct push_ops rw_ops = {
	.report = rw_report,
	.idle = rw_idle,
	.end = rw_end,
	.bad_line = on_bad_line,
	.take = rw_take,
	.deliver = rw_deliver,
	.settle = rw_settle,
	.stats = rw_stats,
};

/* Read the command line into o. SINK_RUN, or the exit code to return now. */
static int parse_args(struct opts *o, int argc, char **argv)
{
	static const char *const fsyncs[] = { "always", "never", NULL };
	const struct sink_opt table[] = {
		{ .name = "url", .arg = SINK_STR, .dst = &o->url },
		{ .name = "label", .arg = SINK_FN, .dst = o, .parse = add_label },
		{ .name = "header", .arg = SINK_FN, .dst = o, .parse = add_header },
		{ .name = "max-samples-per-send", .arg = SINK_UINT, .dst = &o->max_samples, .min = 2 * SELF_SAMPLES,
		  .max = 1000000 },
		{ .name = "max-bytes", .arg = SINK_UINT, .dst = &o->max_bytes, .min = 1024, .max = 32 << 20 },
		{ .name = "batch-send-deadline", .arg = SINK_DUR, .dst = &o->deadline_ms, .min = 1 },
		{ .name = "min-backoff", .arg = SINK_DUR, .dst = &o->backoff_min_ms, .min = 1 },
		{ .name = "max-backoff", .arg = SINK_DUR, .dst = &o->backoff_max_ms, .min = 1 },
		{ .name = "timeout", .arg = SINK_DUR, .dst = &o->timeout_ms, .min = 1 },
		{ .name = "metadata-interval", .arg = SINK_DUR, .dst = &o->metadata_ms, .min = 1 },
		{ .name = "no-metadata", .arg = SINK_FLAG, .dst = &o->no_metadata },
		{ .name = "drain-timeout", .arg = SINK_DUR, .dst = &o->drain_ms, .min = 0 },
		{ .name = "queue-dir", .arg = SINK_STR, .dst = &o->queue_dir },
		{ .name = "queue-max-bytes", .arg = SINK_UINT, .dst = &o->queue_max_bytes, .min = 4096,
		  .max = 1LL << 40, .given = &o->have_queue_max },
		{ .name = "queue-fsync", .arg = SINK_CHOICE, .dst = &o->fsync_policy, .choices = fsyncs },
		{ .name = "ca-file", .arg = SINK_STR, .dst = &o->ca_file },
		{ .name = "cert-file", .arg = SINK_STR, .dst = &o->cert_file },
		{ .name = "key-file", .arg = SINK_STR, .dst = &o->key_file },
		{ .name = "insecure-skip-verify", .arg = SINK_FLAG, .dst = &o->insecure },
		{ .name = "bearer-token-file", .arg = SINK_STR, .dst = &o->bearer_file },
		{ .name = "basic-auth-user", .arg = SINK_STR, .dst = &o->basic_user },
		{ .name = "basic-auth-password-file", .arg = SINK_STR, .dst = &o->basic_pass_file },
		{ .name = "staleness", .arg = SINK_DUR, .dst = &o->staleness_ms, .min = 1 },
		{ .name = "max-line-bytes", .arg = SINK_UINT, .dst = &o->max_line, .min = 1, .max = 1 << 30 },
		{ .name = NULL },
	};
	const struct sink_def def = { "accel-remote-write", usage, table };
	int rc;

	o->max_samples = 2000;
	o->max_bytes = 1 << 20;
	o->deadline_ms = 5000;
	o->backoff_min_ms = 30;
	o->backoff_max_ms = 5000;
	o->timeout_ms = 30000;
	o->metadata_ms = 60000;
	o->drain_ms = 10000;
	o->max_line = STREAM_DEFAULT_MAX_LINE;
	if ((rc = sink_start(&def, argc, argv)) != SINK_RUN)
		return rc;
	if (!o->url) {
		fprintf(stderr, "accel-remote-write: --url is required (try --help)\n");
		return EXIT_USAGE;
	}
	if (strncmp(o->url, "http://", 7) && strncmp(o->url, "https://", 8)) {
		fprintf(stderr, "accel-remote-write: --url: expected http:// or https://, got \"%s\"\n", o->url);
		return EXIT_USAGE;
	}
	if (!!o->cert_file != !!o->key_file) {
		fprintf(stderr, "accel-remote-write: --cert-file and --key-file go together\n");
		return EXIT_USAGE;
	}
	if (o->bearer_file && o->basic_pass_file) {
		fprintf(stderr, "accel-remote-write: --bearer-token-file and basic auth: give one of them\n");
		return EXIT_USAGE;
	}
	if (!!o->basic_user != !!o->basic_pass_file) {
		fprintf(stderr, "accel-remote-write: --basic-auth-user and --basic-auth-password-file go together\n");
		return EXIT_USAGE;
	}
	if (o->backoff_max_ms < o->backoff_min_ms)
		o->backoff_max_ms = o->backoff_min_ms;
	if (!o->have_queue_max)
		o->queue_max_bytes = o->queue_dir ? 256ull << 20 : 64ull << 20;
	return SINK_RUN;
}

/* The encoder with the external labels: instance and job unless --label gives them. An exit code or SINK_RUN. */
static int open_encoder(struct rw *rw)
{
	const char *ext[MAX_REPEAT + 2];
	char err[512], inst[300], inst_label[320];
	size_t next = 0;
	int have_inst = 0, have_job = 0;

	for (size_t i = 0; i < rw->o.nlabels; i++) {
		have_inst |= !strncmp(rw->o.labels[i], "instance=", 9);
		have_job |= !strncmp(rw->o.labels[i], "job=", 4);
	}
	if (!have_inst) { /* the node, as the Prometheus agent names its own scrape */
		node_name(inst, sizeof(inst));
		snprintf(inst_label, sizeof(inst_label), "instance=%s", inst);
		ext[next++] = inst_label;
	}
	if (!have_job)
		ext[next++] = "job=accel-monitor";
	for (size_t i = 0; i < rw->o.nlabels; i++)
		ext[next++] = rw->o.labels[i];
	rw->enc = rw_enc_new(ext, next, err, sizeof(err));
	if (!rw->enc) {
		fprintf(stderr, "accel-remote-write: --label: %s\n", err);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < SELF_SAMPLES; i++) {
		uint32_t id;

		if (rw_enc_series(rw->enc, SELF[i], "", 0, &id) == 0)
			rw->self_bytes += rw_enc_cost(rw->enc, id);
	}
	return SINK_RUN;
}

/* The transport and the queue. An exit code or SINK_RUN. */
static int open_transport(struct rw *rw)
{
	const struct opts *o = &rw->o;
	struct rw_http_opts ho = { .url = o->url, .ca_file = o->ca_file, .cert_file = o->cert_file,
				   .key_file = o->key_file, .insecure = o->insecure, .bearer_file = o->bearer_file,
				   .basic_user = o->basic_user, .basic_pass_file = o->basic_pass_file,
				   .headers = o->headers, .nheaders = o->nheaders, .timeout_ms = o->timeout_ms };
	struct recq_opts qo = { .dir = o->queue_dir, .max_bytes = o->queue_max_bytes,
				.fsync = o->fsync_policy ? RECQ_FSYNC_NEVER : RECQ_FSYNC_ALWAYS, .tag = "remote-write",
				.unit = "samples" };
	char err[512];

	if (rw_http_init(&rw->http, &ho, err, sizeof(err)) || recq_open(&qo, &rw->q, err, sizeof(err))) {
		log_err("remote-write: %s", err);
		return EXIT_CONFIG;
	}
	rw->http.abort_now = push_give_up;
	rw->http.abort_ud = &rw->push;
	return SINK_RUN;
}

int main(int argc, char **argv)
{
	struct rw *rw = xcalloc(1, sizeof(*rw));
	struct self_snapshot snap;
	int rc = parse_args(&rw->o, argc, argv), curl = 0;

	if (rc == SINK_RUN)
		rc = open_encoder(rw);
	if (rc == SINK_RUN) {
		curl = 1;
		if (http_curl_linked()->global_init(CURL_GLOBAL_DEFAULT)) {
			log_err("remote-write: cannot start libcurl");
			rc = EXIT_SYSTEM;
		}
	}
	if (rc == SINK_RUN)
		rc = open_transport(rw);
	if (rc != SINK_RUN)
		goto out;
	rw->store = prom_store_new(&(struct prom_store_opts){ .staleness_ms = rw->o.staleness_ms, .node_name = "",
							      .version = ACCEL_VERSION });
	buf_init(&rw->out, (size_t)RECQ_RECORD_MAX);
	buf_init(&rw->body, (size_t)RECQ_RECORD_MAX + 1);
	buf_init(&rw->hlab, PROM_LABELS_MAX + 64);
	rw->seed = (unsigned)clock_real_ns() ^ (unsigned)getpid();
	push_init(&rw->push,
		  &(struct push_opts){ .tag = "remote-write", .fd = STDIN_FILENO, .max_line = (size_t)rw->o.max_line,
				       .drain_ms = rw->o.drain_ms },
		  &rw_ops, rw);
	log_info("remote-write: pushing to %s; queue %s%s, at most %llu bytes", rw->o.url,
		 rw->o.queue_dir ? "in " : "in memory", rw->o.queue_dir ? rw->o.queue_dir : "", rw->o.queue_max_bytes);
	rc = push_run(&rw->push) ? EXIT_SYSTEM : EXIT_OK;
	self_snapshot(rw, &snap);
	if (snap.qs.items)
		log_warn("remote-write: %" PRIu64 " samples not delivered at exit%s", snap.qs.items,
			 rw->o.queue_dir ? ": they stay in --queue-dir and go at the next start" : " (in memory: lost)");
	if (log_level() >= LOG_LVL_INFO)
		rw_stats(rw, clock_mono_ns());
	push_free(&rw->push);
	prom_store_free(rw->store);
	buf_free(&rw->out);
	buf_free(&rw->body);
	buf_free(&rw->hlab);
out:
	recq_close(rw->q);
	rw_http_free(&rw->http);
	rw_enc_free(rw->enc);
	free(rw->live);
	free(rw->gen);
	free(rw->last_ts);
	free(rw);
	if (curl)
		http_curl_linked()->global_cleanup();
	return rc;
}
