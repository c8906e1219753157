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
 * Three threads: the reader maps reports and packs samples into batches
 * (max samples, max bytes, max delay), each batch a compressed
 * WriteRequest appended to the queue (remote-write_queue.h: in memory, or
 * on disk with --queue-dir so that it survives a crash; there each report
 * ends its batch, so that no sample read is only in memory); the sender sends
 * the oldest request until the receiver takes it, retrying with backoff
 * and jitter (remote-write_http.h); the main thread waits for a signal or
 * the end of input and then gives the sender --drain-timeout to empty the
 * queue. One connection, requests in order: a series' samples never
 * arrive out of order.
 */
#include "../../common/series/prom_store.h"
#include "remote-write_enc.h"
#include "remote-write_http.h"
#include "remote-write_queue.h"
#include "../../common/log.h"
#include "../../common/samples.h"
#include "../../common/sink.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_REPEAT 64           /* --label and --header, each */
#define POLL_MS 100             /* the reader looks at the clock and the stop flag this often */
#define SELF_SAMPLES 7          /* accel_remote_write_* samples added to each request */
#define STATS_EVERY_NS (10 * NS_PER_S) /* -v: self-metrics on stderr this often */

/* Everything the options set. */
static struct opts {
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
	const char *instance, *job;
} O;

/* What the threads share, under mu. */
static struct state {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct rw_queue *q;
	int input_done;      /* the reader has finished and queued its last batch */
	int draining;        /* signal or end of input: send what is queued until the deadline */
	int64_t deadline_ns; /* monotonic */
	int stop_now;        /* a second signal, or the deadline passed */
	int sender_done;
	/* counters, since the start */
	uint64_t sent, failed, retried, requests, meta_sent;
	uint64_t skipped_old;  /* samples not newer than the last one of their series */
	int64_t last_success_ms; /* unix ms; 0 never */
} S = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

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
	(void)dst;
	if (O.nlabels == MAX_REPEAT) {
		snprintf(err, errsz, "at most %d", MAX_REPEAT);
		return -1;
	}
	if (!strchr(arg, '=') || *arg == '=') {
		snprintf(err, errsz, "expected NAME=VALUE, got \"%s\"", arg);
		return -1;
	}
	O.labels[O.nlabels++] = arg;
	return 0;
}

static int add_header(const char *arg, void *dst, char *err, size_t errsz)
{
	(void)dst;
	if (O.nheaders == MAX_REPEAT) {
		snprintf(err, errsz, "at most %d", MAX_REPEAT);
		return -1;
	}
	O.headers[O.nheaders++] = arg;
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
	struct rw_queue_stats qs;
	int64_t last_ms;
};

static void self_snapshot(struct self_snapshot *s)
{
	pthread_mutex_lock(&S.mu);
	rw_queue_stats(S.q, &s->qs);
	s->sent = S.sent;
	s->failed = S.failed;
	s->retried = S.retried;
	s->requests = S.requests;
	s->skipped = S.skipped_old;
	s->last_ms = S.last_success_ms;
	pthread_mutex_unlock(&S.mu);
	s->dropped = s->qs.dropped_samples;
}

/* ---- the reader ---------------------------------------------------------------------- */

struct reader {
	struct prom_store *store;
	struct rw_enc *enc;
	struct buf out;
	int64_t first_ns;      /* monotonic time of the batch's first sample; 0: empty batch */
	int64_t last_self_ms;  /* timestamp of the last self-metric samples */
	int64_t meta_due_ns;   /* 0: at the first batch */
	int64_t sweep_ns;      /* monotonic time of the last sweep while the input was quiet */
	size_t meta_nfams;     /* families in the last metadata sent */
	struct log_limit lim_series;
	atomic_int stop;
	/* per encoder series id: pushed and not yet marked stale, the report generation that last saw it visible */
	unsigned char *live;
	uint32_t *gen;
	int64_t *last_ts;
	size_t nids;
	uint32_t cur_gen;
	int64_t report_ms;     /* the newest sample timestamp of the report being pushed */
	size_t self_bytes;     /* what the self-metrics add to a request (rw_enc_cost) */
};

/* The NaN Prometheus writes as a staleness marker (value.StaleNaN). */
static double stale_nan(void)
{
	uint64_t bits = 0x7ff0000000000002ull;
	double d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

static void ids_grow(struct reader *r, uint32_t id)
{
	size_t n;

	if (id < r->nids)
		return;
	n = r->nids ? r->nids : 1024;
	while (n <= id)
		n *= 2;
	r->live = xrealloc(r->live, n);
	r->gen = xrealloc(r->gen, n * sizeof(*r->gen));
	r->last_ts = xrealloc(r->last_ts, n * sizeof(*r->last_ts));
	memset(r->live + r->nids, 0, n - r->nids);
	memset(r->gen + r->nids, 0, (n - r->nids) * sizeof(*r->gen));
	memset(r->last_ts + r->nids, 0, (n - r->nids) * sizeof(*r->last_ts));
	r->nids = n;
}

/* Queue one compressed request. */
static void enqueue(const struct buf *b, uint32_t nsamples)
{
	static struct log_limit lim; /* a full queue drops at each push: one message every 10 s, with the count */
	uint64_t dropped = 0;

	pthread_mutex_lock(&S.mu);
	if (rw_queue_push(S.q, b->data, b->len, nsamples, &dropped) == 0 && dropped) {
		struct rw_queue_stats qs;

		rw_queue_stats(S.q, &qs);
		log_limited(&lim,
			    "remote-write: the queue is full (--queue-max-bytes %llu): dropped the oldest %" PRIu64
			    " samples (%" PRIu64 " dropped since the start)",
			    O.queue_max_bytes, dropped, qs.dropped_samples);
	}
	pthread_cond_broadcast(&S.cv);
	pthread_mutex_unlock(&S.mu);
}

static void self_add(struct reader *r, const struct family *f, double v, int64_t ts)
{
	uint32_t id;

	if (rw_enc_series(r->enc, f, "", 0, &id) == 0)
		rw_enc_add(r->enc, id, ts, v);
}

/* Pack the batch (with the self-metrics, stamped now) into a request and queue it; metadata first when due. */
static void flush_batch(struct reader *r, int64_t now_ns)
{
	size_t n = rw_enc_pending(r->enc);
	int64_t now_ms = clock_real_ns() / NS_PER_MS;
	int rc;

	if (!n)
		return;
	/* In memory, with each batch; with --queue-dir (a request per report) at most once per --batch-send-deadline. */
	if (now_ms > r->last_self_ms && (!O.queue_dir || now_ms - r->last_self_ms >= O.deadline_ms)) {
		struct self_snapshot s;

		self_snapshot(&s);
		self_add(r, &F_SENT, (double)s.sent, now_ms);
		self_add(r, &F_FAILED, (double)s.failed, now_ms);
		self_add(r, &F_RETRIED, (double)s.retried, now_ms);
		self_add(r, &F_DROPPED, (double)s.dropped, now_ms);
		self_add(r, &F_QBYTES, (double)s.qs.bytes, now_ms);
		self_add(r, &F_QSAMPLES, (double)s.qs.samples, now_ms);
		if (s.last_ms)
			self_add(r, &F_LAST, (double)s.last_ms / 1000.0, now_ms);
		r->last_self_ms = now_ms;
		n = rw_enc_pending(r->enc);
	}
	if (!O.no_metadata && (now_ns >= r->meta_due_ns || rw_enc_nfamilies(r->enc) != r->meta_nfams)) {
		if ((rc = rw_enc_metadata(r->enc, &r->out)) == 0)
			enqueue(&r->out, 0);
		else
			log_err("remote-write: cannot encode the metadata: %s", strerror(-rc));
		r->meta_due_ns = now_ns + O.metadata_ms * NS_PER_MS;
		r->meta_nfams = rw_enc_nfamilies(r->enc);
	}
	if ((rc = rw_enc_flush(r->enc, &r->out, NULL))) {
		log_err("remote-write: cannot encode a batch of %zu samples: %s; dropped", n, strerror(-rc));
		return;
	}
	enqueue(&r->out, (uint32_t)n);
	r->first_ns = 0;
}

/* Send the batch first if one more sample of series id (and the self-metrics) would not fit in a request. */
static void make_room(struct reader *r, uint32_t id)
{
	size_t n = rw_enc_pending(r->enc);

	if (n && (n + 1 + SELF_SAMPLES > O.max_samples ||
		  rw_enc_pending_bytes(r->enc) + rw_enc_cost(r->enc, id) + r->self_bytes > O.max_bytes))
		flush_batch(r, clock_mono_ns());
}

/*
 * One series the last report refreshed: into the batch, unless its
 * timestamp is not newer than the last sample (or staleness marker) sent
 * for it: Prometheus refuses those (out of order, or a duplicate), and
 * would refuse the whole request with them.
 */
static void on_series(const struct prom_series_view *v, void *ud)
{
	struct reader *r = ud;
	uint32_t id;
	int rc;

	if (*v->slot) {
		id = *v->slot - 1;
	} else if ((rc = rw_enc_series(r->enc, v->fam, v->labels, v->labels_len, &id)) == 0) {
		*v->slot = id + 1; /* found by its label set once, then by this word */
	} else {
		log_limited(&r->lim_series, "remote-write: %s%.*s: %s; not sent", v->fam->name, (int)v->labels_len,
			    v->labels,
			    rc == -ENOSPC ? "too many series" : rc == -E2BIG ? "too many labels" : "bad label set");
		return;
	}
	ids_grow(r, id);
	if (v->ts_ms <= r->last_ts[id]) {
		pthread_mutex_lock(&S.mu);
		S.skipped_old++;
		pthread_mutex_unlock(&S.mu);
		return;
	}
	/* A request holds at most --max-samples-per-send samples and about --max-bytes, the self-metrics included. */
	make_room(r, id);
	rw_enc_add(r->enc, id, v->ts_ms, v->value);
	r->live[id] = 1;
	r->last_ts[id] = v->ts_ms;
	if (v->ts_ms > r->report_ms)
		r->report_ms = v->ts_ms;
}

/* A series still in accel-prom's exposition after the report. */
static void on_visible(const struct prom_series_view *v, void *ud)
{
	struct reader *r = ud;
	uint32_t id;

	if (*v->slot)
		id = *v->slot - 1;
	else if (rw_enc_series(r->enc, v->fam, v->labels, v->labels_len, &id))
		return;
	else
		*v->slot = id + 1;
	ids_grow(r, id);
	r->gen[id] = r->cur_gen;
}

/*
 * Series pushed before that have left accel-prom's exposition (their
 * source reported an error, the instance changed, or they went stale) get
 * a staleness marker, as Prometheus writes one when a scrape no longer has
 * a series: queries stop returning them at once instead of 5 minutes later.
 */
static void mark_stale(struct reader *r)
{
	r->cur_gen++;
	prom_store_each(r->store, 0, on_visible, r);
	for (uint32_t id = 0; id < r->nids; id++) {
		int64_t ts;

		if (!r->live[id] || r->gen[id] == r->cur_gen)
			continue;
		ts = r->report_ms > r->last_ts[id] ? r->report_ms : r->last_ts[id] + 1;
		make_room(r, id);
		rw_enc_add(r->enc, id, ts, stale_nan());
		r->live[id] = 0;
		r->last_ts[id] = ts;
	}
}

static void on_bad_line(void *ud, enum stream_bad why)
{
	prom_store_bad_line(ud, why);
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct sink_input si;

	sink_input_init(&si, "remote-write", STDIN_FILENO, (size_t)O.max_line);
	si.on_bad = on_bad_line;
	si.ud = r->store;
	while (!atomic_load(&r->stop)) {
		json_t *rep;
		int rc;
		int64_t now = clock_mono_ns();

		if (r->first_ns && (now - r->first_ns >= O.deadline_ms * NS_PER_MS))
			flush_batch(r, now);
		if (si.st.rpos == si.st.rlen && !si.st.eof) {
			struct pollfd p = { .fd = si.st.fd, .events = POLLIN };

			if (poll(&p, 1, POLL_MS) == 0) {
				/* Quiet input: series past the staleness window leave, as accel-prom's sweep
				 * drops them, and get their staleness markers now. */
				if (now - r->sweep_ns >= NS_PER_S) {
					r->sweep_ns = now;
					prom_store_sweep(r->store, now);
					r->report_ms = clock_real_ns() / NS_PER_MS;
					mark_stale(r);
					if (rw_enc_pending(r->enc) && !r->first_ns)
						r->first_ns = now;
					if (O.queue_dir)
						flush_batch(r, now); /* the staleness markers, durable now */
				}
				continue;
			}
		}
		rc = sink_input_next(&si, &rep);
		now = clock_mono_ns();
		if (rc == 1) {
			prom_store_report(r->store, rep, si.where, now, clock_real_ns());
			json_decref(rep);
			r->report_ms = clock_real_ns() / NS_PER_MS;
			prom_store_each(r->store, 1, on_series, r);
			mark_stale(r);
			if (rw_enc_pending(r->enc) && !r->first_ns)
				r->first_ns = now;
			/* With --queue-dir every sample is on disk once its report is read: the report's
			 * samples are sealed into a request now rather than at --batch-send-deadline. */
			if (O.queue_dir)
				flush_batch(r, now);
			continue;
		}
		if (rc < 0)
			log_err("remote-write: %s", si.err);
		else
			log_info("remote-write: stdin: end of input after %llu lines", (unsigned long long)si.st.lineno);
		break;
	}
	flush_batch(r, clock_mono_ns());
	sink_input_free(&si);
	pthread_mutex_lock(&S.mu);
	S.input_done = 1;
	pthread_cond_broadcast(&S.cv);
	pthread_mutex_unlock(&S.mu);
	return NULL;
}

/* ---- the sender ------------------------------------------------------------------------- */

static int abort_now(void *ud)
{
	int stop;

	(void)ud;
	pthread_mutex_lock(&S.mu);
	stop = S.stop_now;
	pthread_mutex_unlock(&S.mu);
	return stop;
}

/* Wait ms (locked), returning early on stop_now, and with any_wake on any broadcast (new work). */
static void wait_locked(int64_t ms, int any_wake)
{
	struct timespec ts;
	int64_t until = clock_real_ns() + ms * NS_PER_MS;

	ts.tv_sec = until / NS_PER_S;
	ts.tv_nsec = until % NS_PER_S;
	while (!S.stop_now && clock_real_ns() < until)
		if (pthread_cond_timedwait(&S.cv, &S.mu, &ts) == ETIMEDOUT || any_wake)
			break;
}

static void *sender_main(void *arg)
{
	struct rw_http *h = arg;
	struct buf body;
	unsigned attempt = 0, seed = (unsigned)clock_real_ns() ^ (unsigned)getpid();

	buf_init(&body, (size_t)RW_QUEUE_RECORD_MAX + 1);
	pthread_mutex_lock(&S.mu);
	while (!S.stop_now) {
		uint32_t ns = 0;
		uint64_t id = 0;
		struct rw_reply rep;
		int rc = rw_queue_peek(S.q, &body, &ns, &id);

		if (rc < 0)
			continue; /* dropped and logged */
		if (rc == 0) {
			if (S.input_done)
				break;
			wait_locked(1000, 1);
			continue;
		}
		pthread_mutex_unlock(&S.mu);
		rw_http_send(h, body.data, body.len, &rep);
		pthread_mutex_lock(&S.mu);
		S.requests++;
		if (rep.outcome == RW_SENT) {
			rw_queue_ack(S.q, id);
			if (ns)
				S.sent += ns;
			else
				S.meta_sent++;
			S.last_success_ms = clock_real_ns() / NS_PER_MS;
			if (attempt)
				log_info("remote-write: %s: delivered after %u attempts", O.url, attempt + 1);
			attempt = 0;
			continue;
		}
		if (rep.outcome == RW_DROP) {
			rw_queue_ack(S.q, id);
			S.failed += ns;
			log_err("remote-write: %s refused a request of %u samples (%zu bytes): %s; dropped, as Prometheus "
				"does (%" PRIu64 " samples refused since the start)",
				O.url, ns, body.len, rep.detail, S.failed);
			attempt = 0;
			continue;
		}
		attempt++;
		S.retried += ns;
		{
			int64_t ms = http_backoff_ms(O.backoff_min_ms, O.backoff_max_ms, attempt, &seed);

			if (rep.retry_after_ms >= 0)
				ms = rep.retry_after_ms;
			if (attempt == 1 || attempt % 20 == 0)
				log_warn("remote-write: %s: %s; retrying in %" PRId64 " ms (attempt %u, %u samples)", O.url,
					 rep.detail, ms, attempt, ns);
			wait_locked(ms, 0);
		}
	}
	S.sender_done = 1;
	pthread_cond_broadcast(&S.cv);
	pthread_mutex_unlock(&S.mu);
	buf_free(&body);
	return NULL;
}

/* ---- main ---------------------------------------------------------------------------------- */

static void log_stats(void)
{
	struct self_snapshot s;
	int64_t now_ms = clock_real_ns() / NS_PER_MS;

	self_snapshot(&s);
	log_info("remote-write: samples sent %" PRIu64 " (%" PRIu64 " requests), failed %" PRIu64 ", retried %" PRIu64
		 ", dropped %" PRIu64 "; queue %" PRIu64 " bytes, %" PRIu64 " samples; last success %s%.1f s ago; "
		 "%" PRIu64 " samples not newer than their series' last, not sent",
		 s.sent, s.requests, s.failed, s.retried, s.dropped, s.qs.bytes, s.qs.samples, s.last_ms ? "" : "never, ",
		 s.last_ms ? (double)(now_ms - s.last_ms) / 1000.0 : 0.0, s.skipped);
}

int main(int argc, char **argv)
{
	static const char *const fsyncs[] = { "always", "never", NULL };
	struct rw_http http;
	struct rw_http_opts ho;
	struct reader rd;
	pthread_t rt, st;
	sigset_t sigs;
	char err[512], inst[300], inst_label[320];
	const char *ext[MAX_REPEAT + 2];
	size_t next = 0;
	int rc, have_inst = 0, have_job = 0, signals = 0;
	struct self_snapshot snap;
	int64_t next_stats;

	const struct sink_opt table[] = {
		{ .name = "url", .arg = SINK_STR, .dst = &O.url },
		{ .name = "label", .arg = SINK_FN, .parse = add_label },
		{ .name = "header", .arg = SINK_FN, .parse = add_header },
		{ .name = "max-samples-per-send", .arg = SINK_UINT, .dst = &O.max_samples, .min = 2 * SELF_SAMPLES,
		  .max = 1000000 },
		{ .name = "max-bytes", .arg = SINK_UINT, .dst = &O.max_bytes, .min = 1024, .max = 32 << 20 },
		{ .name = "batch-send-deadline", .arg = SINK_DUR, .dst = &O.deadline_ms, .min = 1 },
		{ .name = "min-backoff", .arg = SINK_DUR, .dst = &O.backoff_min_ms, .min = 1 },
		{ .name = "max-backoff", .arg = SINK_DUR, .dst = &O.backoff_max_ms, .min = 1 },
		{ .name = "timeout", .arg = SINK_DUR, .dst = &O.timeout_ms, .min = 1 },
		{ .name = "metadata-interval", .arg = SINK_DUR, .dst = &O.metadata_ms, .min = 1 },
		{ .name = "no-metadata", .arg = SINK_FLAG, .dst = &O.no_metadata },
		{ .name = "drain-timeout", .arg = SINK_DUR, .dst = &O.drain_ms, .min = 0 },
		{ .name = "queue-dir", .arg = SINK_STR, .dst = &O.queue_dir },
		{ .name = "queue-max-bytes", .arg = SINK_UINT, .dst = &O.queue_max_bytes, .min = 4096,
		  .max = 1LL << 40, .given = &O.have_queue_max },
		{ .name = "queue-fsync", .arg = SINK_CHOICE, .dst = &O.fsync_policy, .choices = fsyncs },
		{ .name = "ca-file", .arg = SINK_STR, .dst = &O.ca_file },
		{ .name = "cert-file", .arg = SINK_STR, .dst = &O.cert_file },
		{ .name = "key-file", .arg = SINK_STR, .dst = &O.key_file },
		{ .name = "insecure-skip-verify", .arg = SINK_FLAG, .dst = &O.insecure },
		{ .name = "bearer-token-file", .arg = SINK_STR, .dst = &O.bearer_file },
		{ .name = "basic-auth-user", .arg = SINK_STR, .dst = &O.basic_user },
		{ .name = "basic-auth-password-file", .arg = SINK_STR, .dst = &O.basic_pass_file },
		{ .name = "staleness", .arg = SINK_DUR, .dst = &O.staleness_ms, .min = 1 },
		{ .name = "max-line-bytes", .arg = SINK_UINT, .dst = &O.max_line, .min = 1, .max = 1 << 30 },
		{ .name = NULL },
	};
	const struct sink_def def = { "accel-remote-write", usage, table };

	O.max_samples = 2000;
	O.max_bytes = 1 << 20;
	O.deadline_ms = 5000;
	O.backoff_min_ms = 30;
	O.backoff_max_ms = 5000;
	O.timeout_ms = 30000;
	O.metadata_ms = 60000;
	O.drain_ms = 10000;
	O.max_line = STREAM_DEFAULT_MAX_LINE;
	if ((rc = sink_start(&def, argc, argv)) != SINK_RUN)
		return rc;
	if (!O.url) {
		fprintf(stderr, "accel-remote-write: --url is required (try --help)\n");
		return EXIT_USAGE;
	}
	if (strncmp(O.url, "http://", 7) && strncmp(O.url, "https://", 8)) {
		fprintf(stderr, "accel-remote-write: --url: expected http:// or https://, got \"%s\"\n", O.url);
		return EXIT_USAGE;
	}
	if (!!O.cert_file != !!O.key_file) {
		fprintf(stderr, "accel-remote-write: --cert-file and --key-file go together\n");
		return EXIT_USAGE;
	}
	if (O.bearer_file && O.basic_pass_file) {
		fprintf(stderr, "accel-remote-write: --bearer-token-file and basic auth: give one of them\n");
		return EXIT_USAGE;
	}
	if (!!O.basic_user != !!O.basic_pass_file) {
		fprintf(stderr, "accel-remote-write: --basic-auth-user and --basic-auth-password-file go together\n");
		return EXIT_USAGE;
	}
	if (O.backoff_max_ms < O.backoff_min_ms)
		O.backoff_max_ms = O.backoff_min_ms;
	if (!O.have_queue_max)
		O.queue_max_bytes = O.queue_dir ? 256ull << 20 : 64ull << 20;

	/* External labels: instance and job unless --label gives them. */
	for (size_t i = 0; i < O.nlabels; i++) {
		have_inst |= !strncmp(O.labels[i], "instance=", 9);
		have_job |= !strncmp(O.labels[i], "job=", 4);
	}
	if (!have_inst) { /* the node, as the Prometheus agent names its own scrape */
		node_name(inst, sizeof(inst));
		snprintf(inst_label, sizeof(inst_label), "instance=%s", inst);
		ext[next++] = inst_label;
	}
	if (!have_job)
		ext[next++] = "job=accel-monitor";
	for (size_t i = 0; i < O.nlabels; i++)
		ext[next++] = O.labels[i];

	memset(&rd, 0, sizeof(rd));
	rd.enc = rw_enc_new(ext, next, err, sizeof(err));
	if (!rd.enc) {
		fprintf(stderr, "accel-remote-write: --label: %s\n", err);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < SELF_SAMPLES; i++) {
		uint32_t id;

		if (rw_enc_series(rd.enc, SELF[i], "", 0, &id) == 0)
			rd.self_bytes += rw_enc_cost(rd.enc, id);
	}
	if (http_curl_linked()->global_init(CURL_GLOBAL_DEFAULT)) {
		log_err("remote-write: cannot start libcurl");
		rw_enc_free(rd.enc);
		return EXIT_SYSTEM;
	}
	ho = (struct rw_http_opts){ .url = O.url, .ca_file = O.ca_file, .cert_file = O.cert_file,
				    .key_file = O.key_file, .insecure = O.insecure, .bearer_file = O.bearer_file,
				    .basic_user = O.basic_user, .basic_pass_file = O.basic_pass_file,
				    .headers = O.headers, .nheaders = O.nheaders, .timeout_ms = O.timeout_ms };
	if (rw_http_init(&http, &ho, err, sizeof(err))) {
		log_err("remote-write: %s", err);
		rw_http_free(&http);
		rw_enc_free(rd.enc);
		http_curl_linked()->global_cleanup();
		return EXIT_CONFIG;
	}
	http.abort_now = abort_now;
	if (rw_queue_open(&(struct rw_queue_opts){ .dir = O.queue_dir, .max_bytes = O.queue_max_bytes,
						   .fsync = O.fsync_policy ? RW_FSYNC_NEVER : RW_FSYNC_ALWAYS },
			  &S.q, err, sizeof(err))) {
		log_err("remote-write: %s", err);
		rw_http_free(&http);
		rw_enc_free(rd.enc);
		http_curl_linked()->global_cleanup();
		return EXIT_CONFIG;
	}
	rd.store = prom_store_new(&(struct prom_store_opts){ .staleness_ms = O.staleness_ms, .node_name = "",
							     .version = ACCEL_VERSION });
	buf_init(&rd.out, (size_t)RW_QUEUE_RECORD_MAX);
	atomic_init(&rd.stop, 0);

	/* Signals go to the main thread only, through sigtimedwait. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	if (pthread_create(&rt, NULL, reader_main, &rd) || pthread_create(&st, NULL, sender_main, &http)) {
		log_err("remote-write: cannot start the threads");
		_exit(EXIT_SYSTEM);
	}
	log_info("remote-write: pushing to %s; queue %s%s, at most %llu bytes", O.url,
		 O.queue_dir ? "in " : "in memory", O.queue_dir ? O.queue_dir : "", O.queue_max_bytes);

	next_stats = clock_mono_ns() + STATS_EVERY_NS;
	for (;;) {
		struct timespec tick = { 0, 200 * NS_PER_MS };
		int sig = sigtimedwait(&sigs, NULL, &tick);
		int64_t now = clock_mono_ns();

		if (sig == SIGINT || sig == SIGTERM) {
			signals++;
			atomic_store(&rd.stop, 1);
			pthread_mutex_lock(&S.mu);
			if (signals == 1) {
				log_info("remote-write: %s: sending what is queued for at most %" PRId64 " ms",
					 sig == SIGINT ? "SIGINT" : "SIGTERM", O.drain_ms);
				if (!S.draining) {
					S.draining = 1;
					S.deadline_ns = now + O.drain_ms * NS_PER_MS;
				}
			} else {
				S.stop_now = 1;
			}
			pthread_cond_broadcast(&S.cv);
			pthread_mutex_unlock(&S.mu);
		}
		if (now >= next_stats) {
			if (log_level() >= LOG_LVL_INFO)
				log_stats();
			next_stats = now + STATS_EVERY_NS;
		}
		pthread_mutex_lock(&S.mu);
		if (S.input_done && !S.draining) {
			S.draining = 1;
			S.deadline_ns = now + O.drain_ms * NS_PER_MS;
		}
		if (S.draining && now >= S.deadline_ns && !S.stop_now) {
			S.stop_now = 1;
			pthread_cond_broadcast(&S.cv);
		}
		rc = S.sender_done && S.input_done;
		pthread_mutex_unlock(&S.mu);
		if (rc)
			break;
	}
	pthread_join(rt, NULL);
	pthread_join(st, NULL);
	self_snapshot(&snap);
	if (snap.qs.samples)
		log_warn("remote-write: %" PRIu64 " samples not delivered at exit%s", snap.qs.samples,
			 O.queue_dir ? ": they stay in --queue-dir and go at the next start" : " (in memory: lost)");
	if (log_level() >= LOG_LVL_INFO)
		log_stats();
	rw_queue_close(S.q);
	prom_store_free(rd.store);
	rw_enc_free(rd.enc);
	buf_free(&rd.out);
	free(rd.live);
	free(rd.gen);
	free(rd.last_ts);
	rw_http_free(&http);
	http_curl_linked()->global_cleanup();
	return EXIT_OK;
}
