/* SPDX-License-Identifier: MIT */
/*
 * accel-otlp: read the report stream (accel-monitor, neuron-monitor 2.x or
 * 2020) on stdin and export it as OpenTelemetry metrics over OTLP/HTTP, to
 * an OpenTelemetry Collector or any OTLP backend.
 *
 *   accel-monitor | OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 accel-otlp
 *
 * Configured the way every OpenTelemetry exporter is, by the OTEL_*
 * variables, with flags over them (otlp_conf.h). The data is the encoder's
 * (otlp_enc.h: accel-prom's series as OTLP gauges, cumulative sums and
 * histograms); the delivery is accel-remote-write's (common/push.h runs the
 * threads and the drain): the reader's hooks give each report to the
 * encoder and cut its pending points into requests (at most
 * --max-points-per-send points and about --max-bytes, at the latest
 * --batch-send-deadline after the first point), each appended to the queue
 * (common/recq.h: in memory, or on disk with --queue-dir so that it
 * survives a crash; there each report ends its batch, so that no point read
 * is only in memory); the sender sends the oldest request until the server
 * takes it or refuses it for good (otlp_http.h: gzip, retries with
 * Retry-After or jittered exponential backoff), and acknowledges it in the
 * queue only then. One connection, requests in order.
 *
 * The exporter's own health rides along: each batch starts with the
 * accel_otlp_* points (otlp_enc_health) of the counters kept here.
 */
#include "otlp_conf.h"
#include "otlp_enc.h"
#include "otlp_http.h"
#include "../../common/log.h"
#include "../../common/push.h"
#include "../../common/recq.h"
#include "../../common/sink.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_REPEAT 64                  /* --header and --resource-attribute, each */
#define MSG_SEEN 64                    /* distinct server messages remembered (each logged once) */

/* Everything the options set. */
struct opts {
	struct otlp_conf_flags f;
	const char *headers[MAX_REPEAT];
	const char *resource[MAX_REPEAT];
	unsigned long long max_points, max_bytes;
	int64_t deadline_ms, backoff_min_ms, backoff_max_ms;
	int have_timeout;
	const char *queue_dir;
	unsigned long long queue_max_bytes;
	int have_queue_max;
	int fsync_policy;
	int64_t drain_ms;
	int64_t staleness_ms;
	unsigned long long max_line;
};

/* The exporter: its options, its queue, and what its reader, sender and main-thread hooks keep. */
struct ox {
	struct opts o;
	struct otlp_conf conf;
	struct push push;
	/* Under the push lock: the queue, and the counters since the start (points and requests). */
	struct recq *q;
	uint64_t sent, failed, retried, rejected, req_sent, req_failed, req_retried;
	uint64_t seen[MSG_SEEN]; /* hashes of the server messages logged */
	size_t nseen;
	struct log_limit lim_repeat;
	/* The reader's. */
	struct otlp_enc *enc;
	struct buf out;
	int64_t first_ns;       /* monotonic time of the batch's first point; 0: empty batch */
	int64_t last_health_ms; /* unix ms of the last health points */
	int64_t sweep_ns;       /* monotonic time of the last sweep while the input was quiet */
	int64_t read_ms;        /* the read time given to the last report (unix ms), strictly increasing */
	uint64_t lines, bad_lines;
	/* The sender's: the request taken (a copy of the queue's oldest) and the answer to it. */
	struct otlp_http http;
	struct buf body;
	uint32_t body_points;
	uint64_t body_id;
	struct otlp_reply rep;
	unsigned seed;          /* backoff jitter */
	/* The main thread's. */
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: accel-otlp [OPTION]...\n"
		"Read accel-monitor or neuron-monitor reports (one JSON object per line) from stdin\n"
		"and export them as OpenTelemetry metrics over OTLP/HTTP to a collector or backend\n"
		"(see docs/accel-otlp.md). The OTEL_EXPORTER_OTLP_* variables, OTEL_RESOURCE_ATTRIBUTES\n"
		"and OTEL_SERVICE_NAME configure it as they do any OpenTelemetry exporter; a flag\n"
		"wins over its variable.\n"
		"\n"
		"Where and how:\n"
		"      --endpoint URL            base URL, /v1/metrics appended (OTEL_EXPORTER_OTLP_ENDPOINT;\n"
		"                                default http://localhost:4318)\n"
		"      --metrics-endpoint URL    the full URL, used as is\n"
		"                                (OTEL_EXPORTER_OTLP_METRICS_ENDPOINT)\n"
		"      --protocol P              http/protobuf (default) or http/json\n"
		"      --compression C           gzip (default) or none\n"
		"      --header \"NAME: VALUE\"    an HTTP header of every request (repeatable;\n"
		"                                OTEL_EXPORTER_OTLP_HEADERS=name=value,...)\n"
		"      --timeout DUR             one request (default 10s; OTEL_EXPORTER_OTLP_TIMEOUT, ms)\n"
		"      --ca-file FILE            CA certificates to verify the server with\n"
		"                                (OTEL_EXPORTER_OTLP_CERTIFICATE)\n"
		"      --cert-file FILE, --key-file FILE   a client certificate and its key\n"
		"                                (OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE, _CLIENT_KEY)\n"
		"      --resource-attribute KEY=VALUE   a resource attribute (repeatable; added to\n"
		"                                OTEL_RESOURCE_ATTRIBUTES, a later key wins)\n"
		"      --service-name NAME       service.name (OTEL_SERVICE_NAME; default accel-monitor)\n"
		"Batching and delivery:\n"
		"      --max-points-per-send N   data points in one request (default 2000)\n"
		"      --max-bytes N             uncompressed bytes of one request, about (default 1048576)\n"
		"      --batch-send-deadline DUR send a batch at the latest this long after its first\n"
		"                                point (default 5s); with --queue-dir each report's\n"
		"                                points are a request (on disk) once it is read\n"
		"      --min-backoff DUR         first retry after about this long (default 30ms)\n"
		"      --max-backoff DUR         retries at most this far apart (default 5s);\n"
		"                                a Retry-After from the server wins\n"
		"      --drain-timeout DUR       at the end of input or on SIGTERM, keep sending what is\n"
		"                                queued for at most this long (default 10s)\n"
		"Queue:\n"
		"      --queue-dir DIR           keep unacknowledged requests in DIR (created), replayed\n"
		"                                after a crash or restart; default: in memory\n"
		"      --queue-max-bytes N       queue bound; the oldest requests are dropped (and\n"
		"                                counted) past it (default 268435456 with --queue-dir,\n"
		"                                67108864 in memory)\n"
		"      --queue-fsync always|never  fsync each append and acknowledgement (default always)\n"
		"Input:\n"
		"      --staleness DUR           as accel-prom's: series not refreshed for DUR leave\n"
		"      --max-line-bytes N        skip input lines longer than N bytes (default %u)\n"
		"  -v, --verbose[=N]             log level: 0 silent, 1 errors and warnings (default),\n"
		"                                2 info (and the counters every 10 s), 3 debug\n"
		"      --version                 print the version and exit\n"
		"  -h, --help                    print this help and exit\n"
		"\n"
		"Exit codes: 0 ok, 1 system error, 2 usage error, 3 configuration error.\n",
		STREAM_DEFAULT_MAX_LINE);
}

static int add_header(const char *arg, void *dst, char *err, size_t errsz)
{
	struct opts *o = dst;

	if (o->f.nheaders == MAX_REPEAT) {
		snprintf(err, errsz, "at most %d", MAX_REPEAT);
		return -1;
	}
	o->headers[o->f.nheaders++] = arg;
	return 0;
}

static int add_resource(const char *arg, void *dst, char *err, size_t errsz)
{
	struct opts *o = dst;

	if (o->f.nresource == MAX_REPEAT) {
		snprintf(err, errsz, "at most %d", MAX_REPEAT);
		return -1;
	}
	o->resource[o->f.nresource++] = arg;
	return 0;
}

/* ---- the reader ---------------------------------------------------------------------------------- */

/* The health figures now (the reader's own counters; the rest under the lock). */
static void health(struct ox *ox, struct otlp_health *h)
{
	struct recq_stats qs;

	memset(h, 0, sizeof(*h));
	push_lock(&ox->push);
	recq_stats(ox->q, &qs);
	h->points_sent = ox->sent;
	h->points_failed = ox->failed;
	h->points_rejected = ox->rejected;
	h->requests_sent = ox->req_sent;
	h->requests_failed = ox->req_failed;
	h->requests_retried = ox->req_retried;
	push_unlock(&ox->push);
	h->points_dropped = qs.dropped_items;
	h->queue_bytes = qs.bytes;
	h->queue_requests = qs.records;
	h->input_lines = ox->lines;
	h->input_bad_lines = ox->bad_lines;
}

/* Queue one request and wake the sender. */
static void enqueue(struct ox *ox, const struct buf *b, uint32_t npoints)
{
	push_lock(&ox->push);
	recq_push(ox->q, b->data, b->len, npoints, NULL); /* a full queue drops the oldest, and says so */
	push_notify(&ox->push);
	push_unlock(&ox->push);
}

/*
 * Everything pending into requests and onto the queue, the health points first (in memory with each batch;
 * with --queue-dir, where each report is a batch, at most once per --batch-send-deadline).
 */
static void flush_batch(struct ox *ox)
{
	int64_t now_ms = clock_real_ns() / NS_PER_MS;
	size_t n, before;
	int rc;

	if (!otlp_enc_pending(ox->enc))
		return;
	if (now_ms > ox->last_health_ms && (!ox->o.queue_dir || now_ms - ox->last_health_ms >= ox->o.deadline_ms)) {
		struct otlp_health h;

		health(ox, &h);
		otlp_enc_health(ox->enc, &h, now_ms * NS_PER_MS);
		ox->last_health_ms = now_ms;
	}
	while ((before = otlp_enc_pending(ox->enc))) {
		rc = otlp_enc_flush(ox->enc, (size_t)ox->o.max_points, (size_t)ox->o.max_bytes, &ox->out, &n);
		if (rc) {
			log_err("otlp: cannot encode a request: %s; its points are dropped", strerror(-rc));
			if (otlp_enc_pending(ox->enc) < before)
				continue;
			break; /* nothing was taken: the next batch tries again */
		}
		if (!n)
			break;
		enqueue(ox, &ox->out, (uint32_t)n);
	}
	ox->first_ns = 0;
}

/* The batch's deadline: send it --batch-send-deadline after its first point. */
static void flush_when_due(struct ox *ox, int64_t now_ns)
{
	if (ox->first_ns && now_ns - ox->first_ns >= ox->o.deadline_ms * NS_PER_MS)
		flush_batch(ox);
}

/* After points joined the batch: a full request goes now; with --queue-dir everything does. */
static void batch_added(struct ox *ox, int64_t now_ns)
{
	if (otlp_enc_pending(ox->enc) && !ox->first_ns)
		ox->first_ns = now_ns;
	if (ox->o.queue_dir || otlp_enc_pending(ox->enc) >= ox->o.max_points ||
	    otlp_enc_pending_bytes(ox->enc) >= ox->o.max_bytes)
		flush_batch(ox);
}

/* push_ops.report */
static void ox_report(void *ud, struct push *p, json_t *rep, const struct sink_input *in)
{
	struct ox *ox = ud;
	int64_t now = clock_mono_ns(), read_ms;

	(void)p;
	flush_when_due(ox, now);
	ox->lines = in->lines;
	/* A report without timestamps is stamped with its read time, at least a millisecond after the last one's
	 * (as accel-remote-write does), so that two reports never give a series two points at one time. */
	read_ms = clock_real_ns() / NS_PER_MS;
	ox->read_ms = read_ms > ox->read_ms ? read_ms : ox->read_ms + 1;
	otlp_enc_report(ox->enc, rep, in->where, now, ox->read_ms * NS_PER_MS);
	batch_added(ox, now);
}

/* push_ops.idle: the batch's deadline; once a second, series past the staleness window leave. */
static void ox_idle(void *ud, struct push *p, int64_t now)
{
	struct ox *ox = ud;

	(void)p;
	flush_when_due(ox, now);
	if (now - ox->sweep_ns < NS_PER_S)
		return;
	ox->sweep_ns = now;
	otlp_enc_sweep(ox->enc, now, clock_real_ns());
	batch_added(ox, now);
}

/* push_ops.end: the last batch. */
static void ox_end(void *ud, struct push *p)
{
	struct ox *ox = ud;

	ox->lines = p->in.lines;
	flush_batch(ox);
}

static void ox_bad_line(void *ud, enum stream_bad why)
{
	struct ox *ox = ud;

	ox->bad_lines++;
	otlp_enc_bad_line(ox->enc, why);
}

/* ---- the sender ---------------------------------------------------------------------------------- */

/* push_ops.take: a copy of the oldest request; it leaves the queue once settled. */
static int ox_take(void *ud, int flush)
{
	struct ox *ox = ud;

	(void)flush; /* the reader queues whole requests */
	return recq_peek(ox->q, &ox->body, &ox->body_points, &ox->body_id);
}

/* push_ops.deliver: one POST; no answer, 429, 502, 503 and 504 wait the Retry-After or the backoff. */
static void ox_deliver(void *ud, struct push *p, struct push_try *t)
{
	struct ox *ox = ud;

	(void)p;
	otlp_http_send(&ox->http, ox->body.data, ox->body.len, &ox->rep);
	if (ox->rep.outcome != OTLP_RETRY)
		return;
	t->result = PUSH_RETRY;
	t->wait_ms = ox->rep.retry_after_ms >= 0
			     ? ox->rep.retry_after_ms
			     : http_backoff_ms(ox->o.backoff_min_ms, ox->o.backoff_max_ms, t->failed + 1, &ox->seed);
}

/* Whether the server's message msg is new (and now remembered): each distinct one is logged once. */
static int first_time(struct ox *ox, const char *msg)
{
	uint64_t h = hash_bytes(0x6f746c70, msg, strlen(msg));

	for (size_t i = 0; i < ox->nseen; i++)
		if (ox->seen[i] == h)
			return 0;
	if (ox->nseen == MSG_SEEN)
		return 0; /* that many distinct messages: the rest go to the limited one */
	ox->seen[ox->nseen++] = h;
	return 1;
}

/* A 2xx: what the server took, and what it rejected (partial_success), said once per distinct message. */
static void settle_sent(struct ox *ox, const struct push_try *t, uint32_t n)
{
	uint64_t rejected = ox->rep.rejected > 0 ? (uint64_t)ox->rep.rejected : 0;

	if (rejected > n)
		rejected = n;
	ox->req_sent++;
	ox->sent += n - rejected;
	ox->rejected += rejected;
	if (rejected || ox->rep.message[0]) {
		if (first_time(ox, ox->rep.message))
			log_warn("otlp: %s took a request of %u points but rejected %" PRIu64 " of them: \"%s\" (each "
				 "message is logged once; %" PRIu64 " rejected since the start)",
				 ox->conf.url, n, rejected, ox->rep.message, ox->rejected);
		else
			log_limited(&ox->lim_repeat, "otlp: %s rejected %" PRIu64 " more points with a message "
				    "already logged (%" PRIu64 " rejected since the start)",
				    ox->conf.url, rejected, ox->rejected);
	}
	if (t->failed)
		log_info("otlp: %s: delivered after %u attempts", ox->conf.url, t->failed + 1);
}

/* push_ops.settle: acknowledge what the server took or refused for good; count; say. */
static void ox_settle(void *ud, const struct push_try *t)
{
	struct ox *ox = ud;
	uint32_t n = ox->body_points;

	if (t->result == PUSH_LEFT)
		return; /* stopped between tries: the request stays queued */
	if (t->result == PUSH_RETRY) {
		unsigned attempt = t->failed + 1;

		ox->retried += n;
		ox->req_retried++;
		if (attempt == 1 || attempt % 20 == 0)
			log_warn("otlp: %s: %s; retrying in %" PRId64 " ms (attempt %u, %u points)", ox->conf.url,
				 ox->rep.detail, t->wait_ms, attempt, n);
		return;
	}
	recq_ack(ox->q, ox->body_id);
	if (ox->rep.outcome == OTLP_SENT) {
		settle_sent(ox, t, n);
		return;
	}
	ox->failed += n;
	ox->req_failed++;
	if (first_time(ox, ox->rep.detail))
		log_err("otlp: %s refused a request of %u points (%zu bytes): %s; dropped, not retried (the "
			"OTLP specification's rule for this status; each message is logged once; %" PRIu64
			" points refused since the start)",
			ox->conf.url, n, ox->body.len, ox->rep.detail, ox->failed);
	else
		log_limited(&ox->lim_repeat, "otlp: %s refused another request of %u points with a message already "
			    "logged; dropped (%" PRIu64 " points refused since the start)", ox->conf.url, n, ox->failed);
}

/* ---- main ---------------------------------------------------------------------------------------- */

/* push_ops.stats: -v: the counters on stderr (and once at exit). */
static void ox_stats(void *ud, int64_t now_ns)
{
	struct ox *ox = ud;
	struct otlp_health h;

	(void)now_ns;
	health(ox, &h);
	log_info("otlp: points sent %" PRIu64 " (%" PRIu64 " requests), rejected %" PRIu64 ", failed %" PRIu64
		 " (%" PRIu64 " requests), retried %" PRIu64 " requests, dropped %" PRIu64 "; queue %" PRIu64
		 " bytes, %" PRIu64 " requests; input %" PRIu64 " lines, %" PRIu64 " bad",
		 h.points_sent, h.requests_sent, h.points_rejected, h.points_failed, h.requests_failed,
		 h.requests_retried, h.points_dropped, h.queue_bytes, h.queue_requests, h.input_lines,
		 h.input_bad_lines);
}

static const struct push_ops ox_ops = {
	.report = ox_report,
	.idle = ox_idle,
	.end = ox_end,
	.bad_line = ox_bad_line,
	.take = ox_take,
	.deliver = ox_deliver,
	.settle = ox_settle,
	.stats = ox_stats,
};

/* Read the command line into o. SINK_RUN, or the exit code to return now. */
static int parse_args(struct opts *o, int argc, char **argv)
{
	static const char *const fsyncs[] = { "always", "never", NULL };
	const struct sink_opt table[] = {
		{ .name = "endpoint", .arg = SINK_STR, .dst = &o->f.endpoint },
		{ .name = "metrics-endpoint", .arg = SINK_STR, .dst = &o->f.metrics_endpoint },
		{ .name = "protocol", .arg = SINK_STR, .dst = &o->f.protocol },
		{ .name = "compression", .arg = SINK_STR, .dst = &o->f.compression },
		{ .name = "header", .arg = SINK_FN, .dst = o, .parse = add_header },
		{ .name = "timeout", .arg = SINK_DUR, .dst = &o->f.timeout_ms, .min = 1, .given = &o->have_timeout },
		{ .name = "ca-file", .arg = SINK_STR, .dst = &o->f.ca_file },
		{ .name = "cert-file", .arg = SINK_STR, .dst = &o->f.cert_file },
		{ .name = "key-file", .arg = SINK_STR, .dst = &o->f.key_file },
		{ .name = "resource-attribute", .arg = SINK_FN, .dst = o, .parse = add_resource },
		{ .name = "service-name", .arg = SINK_STR, .dst = &o->f.service_name },
		{ .name = "max-points-per-send", .arg = SINK_UINT, .dst = &o->max_points, .min = 16, .max = 1000000 },
		{ .name = "max-bytes", .arg = SINK_UINT, .dst = &o->max_bytes, .min = 1024, .max = 32 << 20 },
		{ .name = "batch-send-deadline", .arg = SINK_DUR, .dst = &o->deadline_ms, .min = 1 },
		{ .name = "min-backoff", .arg = SINK_DUR, .dst = &o->backoff_min_ms, .min = 1 },
		{ .name = "max-backoff", .arg = SINK_DUR, .dst = &o->backoff_max_ms, .min = 1 },
		{ .name = "drain-timeout", .arg = SINK_DUR, .dst = &o->drain_ms, .min = 0 },
		{ .name = "queue-dir", .arg = SINK_STR, .dst = &o->queue_dir },
		{ .name = "queue-max-bytes", .arg = SINK_UINT, .dst = &o->queue_max_bytes, .min = 4096,
		  .max = 1LL << 40, .given = &o->have_queue_max },
		{ .name = "queue-fsync", .arg = SINK_CHOICE, .dst = &o->fsync_policy, .choices = fsyncs },
		{ .name = "staleness", .arg = SINK_DUR, .dst = &o->staleness_ms, .min = 1 },
		{ .name = "max-line-bytes", .arg = SINK_UINT, .dst = &o->max_line, .min = 1, .max = 1 << 30 },
		{ .name = NULL },
	};
	const struct sink_def def = { "accel-otlp", usage, table };
	int rc;

	o->max_points = 2000;
	o->max_bytes = 1 << 20;
	o->deadline_ms = 5000;
	o->backoff_min_ms = 30;
	o->backoff_max_ms = 5000;
	o->drain_ms = 10000;
	o->max_line = STREAM_DEFAULT_MAX_LINE;
	if ((rc = sink_start(&def, argc, argv)) != SINK_RUN)
		return rc;
	if (!o->have_timeout)
		o->f.timeout_ms = -1;
	o->f.headers = o->headers;
	o->f.resource = o->resource;
	if (o->backoff_max_ms < o->backoff_min_ms)
		o->backoff_max_ms = o->backoff_min_ms;
	if (!o->have_queue_max)
		o->queue_max_bytes = o->queue_dir ? 256ull << 20 : 64ull << 20;
	return SINK_RUN;
}

/* The configuration, the encoder, the transport and the queue. An exit code or SINK_RUN. */
static int open_all(struct ox *ox)
{
	const struct opts *o = &ox->o;
	struct recq_opts qo = { .dir = o->queue_dir, .max_bytes = o->queue_max_bytes,
				.fsync = o->fsync_policy ? RECQ_FSYNC_NEVER : RECQ_FSYNC_ALWAYS, .tag = "otlp",
				.unit = "points" };
	struct otlp_enc_opts eo;
	char err[1024];

	if (otlp_conf_load(&ox->conf, &o->f, NULL, err, sizeof(err))) {
		fprintf(stderr, "accel-otlp: %s\n", err);
		return EXIT_CONFIG;
	}
	eo = (struct otlp_enc_opts){ .resource = ox->conf.resource, .nresource = ox->conf.nresource,
				     .service_name = ox->conf.service_name, .encoding = ox->conf.encoding,
				     .staleness_ms = o->staleness_ms };
	if (!(ox->enc = otlp_enc_new(&eo, err, sizeof(err)))) {
		fprintf(stderr, "accel-otlp: %s\n", err);
		return EXIT_CONFIG;
	}
	if (otlp_http_init(&ox->http, &ox->conf, err, sizeof(err)) || recq_open(&qo, &ox->q, err, sizeof(err))) {
		log_err("otlp: %s", err);
		return EXIT_CONFIG;
	}
	ox->http.abort_now = push_give_up;
	ox->http.abort_ud = &ox->push;
	return SINK_RUN;
}

int main(int argc, char **argv)
{
	struct ox *ox = xcalloc(1, sizeof(*ox));
	struct otlp_health h;
	int rc = parse_args(&ox->o, argc, argv), curl = 0;

	if (rc == SINK_RUN) {
		curl = 1;
		if (http_curl_linked()->global_init(CURL_GLOBAL_DEFAULT)) {
			log_err("otlp: cannot start libcurl");
			rc = EXIT_SYSTEM;
		}
	}
	if (rc == SINK_RUN)
		rc = open_all(ox);
	if (rc != SINK_RUN)
		goto out;
	buf_init(&ox->out, (size_t)RECQ_RECORD_MAX);
	buf_init(&ox->body, (size_t)RECQ_RECORD_MAX + 1);
	ox->seed = (unsigned)clock_real_ns() ^ (unsigned)getpid();
	push_init(&ox->push,
		  &(struct push_opts){ .tag = "otlp", .fd = STDIN_FILENO, .max_line = (size_t)ox->o.max_line,
				       .drain_ms = ox->o.drain_ms },
		  &ox_ops, ox);
	log_info("otlp: exporting to %s (from %s; %s, %s); queue %s%s, at most %llu bytes", ox->conf.url,
		 ox->conf.url_from, ox->conf.encoding == OTLP_JSON ? "http/json" : "http/protobuf",
		 ox->conf.gzip ? "gzip" : "uncompressed", ox->o.queue_dir ? "in " : "in memory", ox->o.queue_dir ? ox->o.queue_dir : "", ox->o.queue_max_bytes);
	rc = push_run(&ox->push) ? EXIT_SYSTEM : EXIT_OK;
	health(ox, &h);
	if (h.queue_requests)
		log_warn("otlp: %" PRIu64 " requests not delivered at exit%s", h.queue_requests,
			 ox->o.queue_dir ? ": they stay in --queue-dir and go at the next start" : " (in memory: lost)");
	if (log_level() >= LOG_LVL_INFO)
		ox_stats(ox, clock_mono_ns());
	push_free(&ox->push);
	buf_free(&ox->out);
	buf_free(&ox->body);
out:
	recq_close(ox->q);
	otlp_http_free(&ox->http);
	otlp_enc_free(ox->enc);
	otlp_conf_free(&ox->conf);
	free(ox);
	if (curl)
		http_curl_linked()->global_cleanup();
	return rc;
}
