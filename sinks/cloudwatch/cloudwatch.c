/* SPDX-License-Identifier: MIT */
/*
 * accel-cloudwatch: read the report stream (accel-monitor, neuron-monitor
 * 2.x or 2020) on stdin and push it to Amazon CloudWatch with PutMetricData,
 * or write it as Embedded Metric Format events.
 *
 * A push sink (common/push.h runs the threads and the drain): the reader's
 * hook maps each report into datums and queues them (cloudwatch_queue.h);
 * the sender takes full batches, or whatever is queued when the flush
 * interval comes, and delivers them (cloudwatch_deliver.h: retrying until
 * CloudWatch has them; EMF: to stdout or the agent). Nothing accepted is
 * dropped silently: a datum CloudWatch refuses, one too old, and the oldest
 * ones when the queue is full are each counted and logged.
 */
#include "cloudwatch_creds.h"
#include "cloudwatch_deliver.h"
#include "cloudwatch_emf.h"
#include "cloudwatch_http.h"
#include "cloudwatch_map.h"
#include "cloudwatch_query.h"
#include "cloudwatch_queue.h"
#include "../../common/log.h"
#include "../../common/push.h"
#include "../../common/samples.h"
#include "../../common/sink.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum out_format { FMT_PUT, FMT_EMF };

#define DEFAULT_BUFFER_DATUMS 2000000 /* 48 MB at most; over an hour of 500 datums a second */
#define WARN_FIRST 10                 /* log this many of each kind of drop one by one, then every 1000th */

/* Everything the options set. */
struct opts {
	const char *ns;
	char *enc_ns;
	const char *region;
	const char *endpoint;
	int64_t flush_ms;
	int resolution;
	size_t buffer;
	int dry_run;
	enum out_format format;
	const char *emf_endpoint;
	int gzip;
	int64_t timeout_ms;
	int64_t backoff_min_ms, backoff_max_ms;
	int64_t drain_ms;
	struct cw_map_opts map;
	int64_t fake_now_ms; /* ACCEL_CLOUDWATCH_NOW: a fixed wall clock for reproducible tests */
	char host[256];      /* the Host dimension's value */
};

/* The sink: its options, its queue, and what its reader and sender hooks keep. */
struct cw {
	struct opts o;
	struct push push;
	/* Under the push lock: the queue, and the counters of both sides. */
	struct cw_queue q;
	uint64_t bad_values, too_old, too_new, bad_names, group_errors;
	size_t in_flight;        /* datums the sender has taken from the queue and not settled yet */
	uint64_t delivered;
	uint64_t left;           /* undelivered at exit */
	/* The reader's, while it maps a report. */
	const struct sink_input *in;
	int64_t now_ms;
	struct mapper *map;      /* the stream's report -> samples mapping */
	struct cw_scratch sc;
	/* The sender's. */
	struct cw_deliver dl;
	struct cw_http http;
	struct cw_creds creds;
	int force_refresh;
	struct cw_datum *batch;  /* CW_MAX_DATUMS: what take took */
	unsigned char *dead;
	size_t batch_sent, batch_left; /* what the last try came to */
	int emf_fd;              /* -1: not connected; 1: stdout */
	int emf_rendered;        /* out holds the batch's events */
	int emf_err;             /* -errno of the last failed EMF write, for the message */
	struct buf out;
	int stdout_gone;         /* EPIPE: the reader of --dry-run or EMF output went away */
};

static int64_t wall_ms(void *ud)
{
	struct cw *cw = ud;

	return cw->o.fake_now_ms ? cw->o.fake_now_ms : clock_real_ns() / NS_PER_MS;
}

/* ---- the reader ---------------------------------------------------------- */

/* Log the first few of a kind of trouble, then every thousandth, with the count. */
static int worth_logging(uint64_t n)
{
	return n <= WARN_FIRST || n % 1000 == 0;
}

static void describe_point(const struct cw_point *p, char *dst, size_t size)
{
	cw_describe(p->name ? p->name : "?", p->dims, p->ndims, p->value, p->ts_ms, dst, size);
}

/* A sample: map it and queue it (called with the push lock held). */
static void on_sample(const struct sample *s, void *ud)
{
	struct cw *cw = ud;
	struct cw_point p;
	char what[512];
	enum cw_verdict v = cw_map_sample(&cw->o.map, s, cw->now_ms, &p, &cw->sc);
	int rc;

	switch (v) {
	case CW_SKIP:
		return;
	case CW_BAD_VALUE:
		if (worth_logging(++cw->bad_values)) {
			describe_point(&p, what, sizeof(what));
			log_warn("cloudwatch: dropped datum %s: CloudWatch takes no NaN, infinity, or magnitude past 2^360 "
				 "(%llu bad values so far)", what, (unsigned long long)cw->bad_values);
		}
		return;
	case CW_TOO_OLD:
	case CW_TOO_NEW:
		if (worth_logging(v == CW_TOO_OLD ? ++cw->too_old : ++cw->too_new)) {
			describe_point(&p, what, sizeof(what));
			log_warn("cloudwatch: dropped datum %s: %s (%llu so far)", what,
				 v == CW_TOO_OLD ? "more than two weeks old" : "more than two hours in the future",
				 (unsigned long long)(v == CW_TOO_OLD ? cw->too_old : cw->too_new));
		}
		return;
	case CW_OK:
		break;
	}
	rc = cw_queue_push(&cw->q, &p);
	if (rc < 0) {
		if (worth_logging(++cw->bad_names)) {
			describe_point(&p, what, sizeof(what));
			log_warn("cloudwatch: dropped datum %s: a name past CloudWatch's limits", what);
		}
	} else if (rc == 1 && (cw->q.dropped == 1 || cw->q.dropped % 10000 == 0)) {
		log_warn("cloudwatch: queue full (--buffer-datums %zu): dropping the oldest datums; %llu dropped so far",
			 cw->o.buffer, (unsigned long long)cw->q.dropped);
	}
}

static void on_group_error(const char *group, const char *entity, const char *error, void *ud)
{
	struct cw *cw = ud;

	if (worth_logging(++cw->group_errors))
		log_info("cloudwatch: %s %s reports an error, no datums from it: %s", entity, group, error);
}

static void on_bad_value(const char *path, const char *why, void *ud)
{
	struct cw *cw = ud;

	if (worth_logging(++cw->bad_values))
		log_warn("cloudwatch: %s: %s: %s; skipped it", cw->in->where, path, why);
}

/* push_ops.report: map the report into the queue; a full batch wakes the sender. */
static void cw_report(void *ud, struct push *p, json_t *rep, const struct sink_input *in)
{
	struct cw *cw = ud;
	const struct map_cb cb = { on_sample, on_group_error, on_bad_value, cw };

	push_lock(p);
	cw->in = in;
	cw->now_ms = wall_ms(cw);
	mapper_report(cw->map, rep, cw->now_ms, &cb);
	if (cw->q.len >= CW_MAX_DATUMS)
		push_notify(p);
	push_unlock(p);
}

/* ---- the sender ---------------------------------------------------------- */

static int give_up(void *ud)
{
	struct cw *cw = ud;

	return push_give_up(&cw->push);
}

/* Backoff wait: ends early at the exit deadline. */
static void sleep_or_give_up(void *ud, int64_t ms)
{
	struct cw *cw = ud;

	push_sleep(&cw->push, ms);
}

static void on_auth(void *ud)
{
	struct cw *cw = ud;

	cw->force_refresh = 1;
}

/* The PutMetricData transport: refresh instance-role credentials when due, then send. */
static int put_send(void *ud, const struct buf *body, size_t ndatums, struct cw_reply *r)
{
	struct cw *cw = ud;
	char err[512], hint[16];
	int rc = cw_creds_refresh(&cw->creds, wall_ms(cw), cw->force_refresh, err, sizeof(err));

	if (rc < 0)
		log_warn("cloudwatch: refreshing credentials from %s failed: %s; keeping the current ones",
			 cw->creds.where, err);
	else if (rc == 1)
		log_info("cloudwatch: refreshed credentials from %s (key %s)", cw->creds.where,
			 cw_creds_key_hint(&cw->creds, hint));
	cw->force_refresh = 0;
	return cw_http_send(&cw->http, body, ndatums, r);
}

/*
 * Writing to stdout (--dry-run, EMF without an agent) failed: stop. A reader
 * that went away (EPIPE) is how a pipeline ends, not an error; anything else
 * is said, and named at exit as the reason datums were left undelivered.
 */
static void stdout_failed(struct cw *cw, int rc)
{
	char why[160];

	if (rc != -EPIPE)
		log_err("cloudwatch: cannot write to stdout: %s", strerror(-rc));
	cw->stdout_gone = rc == -EPIPE;
	snprintf(why, sizeof(why), "cannot write to stdout: %s", strerror(-rc));
	push_stop(&cw->push, why);
}

/* --dry-run: the body, one a line, on stdout. Sent only once it is written. */
static int print_send(void *ud, const struct buf *body, size_t ndatums, struct cw_reply *r)
{
	struct cw *cw = ud;
	int rc = write_all(1, body->data, body->len);

	(void)ndatums;
	memset(r, 0, sizeof(*r));
	if (!rc)
		rc = write_all(1, "\n", 1);
	if (!rc) {
		r->outcome = CW_SENT;
		return 0;
	}
	stdout_failed(cw, rc);
	r->outcome = CW_RETRY; /* not sent; give_up() now says stop, so it is not retried */
	snprintf(r->detail, sizeof(r->detail), "cannot write to stdout: %s", strerror(-rc));
	return 0;
}

/* Connect to tcp://HOST:PORT. The fd, or -errno. */
static int emf_connect(const char *url)
{
	char host[256], *port;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL, *a;
	int fd = -ENOTCONN, rc;

	snprintf(host, sizeof(host), "%s", url + strlen("tcp://"));
	port = strrchr(host, ':');
	if (!port)
		return -EINVAL;
	*port++ = '\0';
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc)
		return -EHOSTUNREACH;
	for (a = res; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		close(fd);
		fd = -errno;
	}
	freeaddrinfo(res);
	return fd;
}

/* EMF: one try at writing the batch's events to stdout or the agent, connecting first when need be. */
static void emf_try(struct cw *cw, struct push_try *t)
{
	size_t n = cw->in_flight;
	int rc;

	cw->batch_sent = 0;
	cw->batch_left = n;
	if (!cw->emf_rendered) {
		buf_reset(&cw->out);
		if (cw_emf_render(&cw->out, cw->o.ns, cw->o.resolution, cw->batch, n) < 0) {
			log_err("cloudwatch: EMF events for %zu datums do not fit in memory", n);
			t->result = PUSH_LEFT;
			return;
		}
		cw->emf_rendered = 1;
	}
	if (cw->emf_fd < 0)
		cw->emf_fd = emf_connect(cw->o.emf_endpoint);
	rc = cw->emf_fd < 0 ? cw->emf_fd : write_all(cw->emf_fd, cw->out.data, cw->out.len);
	if (rc == 0) {
		cw->batch_sent = n;
		cw->batch_left = 0;
		return;
	}
	if (!cw->o.emf_endpoint) {
		stdout_failed(cw, rc);
		t->result = PUSH_LEFT;
		return;
	}
	if (cw->emf_fd >= 0)
		close(cw->emf_fd);
	cw->emf_fd = -1;
	cw->emf_err = rc;
	t->result = PUSH_RETRY;
	t->wait_ms = cw_backoff_ms(&cw->dl, t->failed + 1, &cw->dl.seed);
}

/* push_ops.take: a full batch, or with flush whatever is queued; an EMF batch being retried stays. */
static int cw_take(void *ud, int flush)
{
	struct cw *cw = ud;

	if (cw->in_flight)
		return 1;
	if (!cw->q.len || (!flush && cw->q.len < CW_MAX_DATUMS))
		return 0;
	cw->in_flight = cw_queue_take(&cw->q, cw->batch, CW_MAX_DATUMS);
	cw->emf_rendered = 0;
	return 1;
}

/* push_ops.deliver */
static void cw_deliver(void *ud, struct push *p, struct push_try *t)
{
	struct cw *cw = ud;
	uint64_t before = cw->dl.sent;

	(void)p;
	if (cw->o.format == FMT_EMF) {
		emf_try(cw, t);
		return;
	}
	/* PutMetricData retries inside: dead[] also marks what CloudWatch rejected or was too old. */
	memset(cw->dead, 0, cw->in_flight);
	cw->batch_left = cw_deliver_batch(&cw->dl, cw->batch, cw->in_flight, cw->dead);
	cw->batch_sent = (size_t)(cw->dl.sent - before);
	t->result = cw->batch_left ? PUSH_LEFT : PUSH_DONE;
}

/* push_ops.settle */
static void cw_settle(void *ud, const struct push_try *t)
{
	struct cw *cw = ud;

	if (t->result == PUSH_RETRY) {
		log_warn("cloudwatch: sending EMF to %s failed: %s; retrying in %lld ms", cw->o.emf_endpoint,
			 strerror(-cw->emf_err), (long long)t->wait_ms);
		return;
	}
	for (size_t i = 0; i < cw->in_flight; i++)
		cw_queue_release(&cw->q, &cw->batch[i]);
	cw->delivered += cw->batch_sent;
	if (t->result == PUSH_LEFT)
		cw->left += cw->batch_left;
	cw->in_flight = 0;
}

/* push_ops.draining */
static void cw_draining(void *ud, int sig)
{
	struct cw *cw = ud;

	log_info("cloudwatch: %s: delivering the %zu datums not yet delivered (%zu queued, %zu being sent; deadline "
		 "%lld ms)",
		 sig ? strsignal(sig) : "end of input", cw->q.len + cw->in_flight, cw->q.len, cw->in_flight,
		 (long long)cw->o.drain_ms);
}

static const struct push_ops cw_ops = {
	.report = cw_report,
	.take = cw_take,
	.deliver = cw_deliver,
	.settle = cw_settle,
	.draining = cw_draining,
};

/* ---- options --------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: accel-cloudwatch --namespace NS [--region REGION] [OPTION]...\n"
		"Read accel-monitor (or neuron-monitor) reports on stdin and push them to Amazon\n"
		"CloudWatch with PutMetricData, or write them as Embedded Metric Format.\n"
		"\n"
		"      --namespace NS            CloudWatch namespace (required; not \"AWS/...\")\n"
		"      --region REGION           default: $AWS_REGION, then $AWS_DEFAULT_REGION\n"
		"      --endpoint-url URL        default: https://monitoring.REGION.amazonaws.com\n"
		"      --flush-interval DUR      send what is queued this often (default 30s);\n"
		"                                full batches of 1000 datums go at once\n"
		"      --storage-resolution 1|60 seconds (default 60)\n"
		"      --dimensions LIST         instance dimensions, comma-separated: InstanceId,\n"
		"                                InstanceType, InstanceName, AvailabilityZone, Region,\n"
		"                                SubnetId, Host, Pid, auto (the default: InstanceId and\n"
		"                                InstanceType on EC2, else Host), none, or Name=Value\n"
		"      --buffer-datums N         most datums held while CloudWatch cannot be reached\n"
		"                                (default %d); past it the oldest are dropped\n"
		"      --dry-run                 print the request bodies (or EMF events); send nothing\n"
		"      --format putmetricdata|emf\n"
		"      --emf-endpoint tcp://HOST:PORT  the CloudWatch agent (default: EMF to stdout)\n"
		"      --no-gzip                 never compress request bodies\n"
		"      --timeout DUR             per request (default 30s)\n"
		"      --backoff-min DUR         first retry delay (default 1s); doubles each try\n"
		"      --backoff-max DUR         longest retry delay (default 1m)\n"
		"      --drain-timeout DUR       at end of input or SIGTERM, time to empty the queue (default 20s)\n"
		"  -v, --verbose[=N]             log level 0-4 (default 1)\n"
		"      --version                 print the version and exit\n"
		"  -h, --help                    print this help and exit\n"
		"\n"
		"Credentials, in the AWS SDKs' order: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY\n"
		"[/AWS_SESSION_TOKEN]; the shared credentials file (AWS_SHARED_CREDENTIALS_FILE,\n"
		"~/.aws/credentials; profile AWS_PROFILE); ECS/EKS container credentials\n"
		"(AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI); the EC2 instance role\n"
		"(IMDSv2; AWS_EC2_METADATA_SERVICE_ENDPOINT, AWS_EC2_METADATA_DISABLED).\n"
		"\n"
		"Exit codes: 0 ok, 1 datums left undelivered or a system error, 2 usage error,\n"
		"3 configuration error (no credentials, bad namespace or region).\n"
		"See docs/accel-cloudwatch.md for the metric names, dimensions and units.\n",
		DEFAULT_BUFFER_DATUMS);
}

static int check_namespace(const char *ns, char *err, size_t errsz)
{
	size_t n = strlen(ns);

	if (n < 1 || n > 255) {
		snprintf(err, errsz, "--namespace: 1 to 255 characters, got %zu", n);
		return -EINVAL;
	}
	if (ns[0] == ':' || !strncmp(ns, "AWS/", 4)) {
		snprintf(err, errsz, "--namespace \"%s\": may not start with ':' or \"AWS/\" (reserved by AWS)", ns);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)ns[i] < 0x20 || (unsigned char)ns[i] >= 0x7f) {
			snprintf(err, errsz, "--namespace: printable ASCII only (byte %zu is 0x%02x)", i,
				 (unsigned char)ns[i]);
			return -EINVAL;
		}
	return 0;
}

/* --dimensions LIST */
static int parse_dims(const char *arg, void *dst, char *err, size_t errsz)
{
	/* argv's own string: the map may keep pointers into it, as it did when it was handed optarg. */
	return cw_map_parse_dimensions((char *)arg, dst, err, errsz);
}

/* --emf-endpoint tcp://HOST:PORT */
static int parse_emf_endpoint(const char *arg, void *dst, char *err, size_t errsz)
{
	if (strncmp(arg, "tcp://", 6) || !strrchr(arg + 6, ':')) {
		snprintf(err, errsz, "expected tcp://HOST:PORT, got \"%s\"", arg);
		return -1;
	}
	*(const char **)dst = arg;
	return 0;
}

/* Read the command line into o. SINK_RUN, or the exit code to return now. */
static int parse_args(struct opts *o, int argc, char **argv)
{
	static const char *const formats[] = { "putmetricdata", "emf", NULL };
	static const char *const resolutions[] = { "60", "1", NULL };
	unsigned long long buffer = DEFAULT_BUFFER_DATUMS;
	int format = 0, resolution = 0, no_gzip = 0;
	const struct sink_opt table[] = {
		{ .name = "namespace", .arg = SINK_STR, .dst = &o->ns },
		{ .name = "region", .arg = SINK_STR, .dst = &o->region },
		{ .name = "endpoint-url", .arg = SINK_STR, .dst = &o->endpoint },
		{ .name = "flush-interval", .arg = SINK_DUR, .dst = &o->flush_ms, .min = 10 },
		{ .name = "storage-resolution", .arg = SINK_CHOICE, .dst = &resolution, .choices = resolutions },
		{ .name = "dimensions", .arg = SINK_FN, .dst = &o->map, .parse = parse_dims },
		{ .name = "buffer-datums", .arg = SINK_UINT, .dst = &buffer, .min = 1, .max = 1LL << 40 },
		{ .name = "dry-run", .arg = SINK_FLAG, .dst = &o->dry_run },
		{ .name = "format", .arg = SINK_CHOICE, .dst = &format, .choices = formats },
		{ .name = "emf-endpoint", .arg = SINK_FN, .dst = &o->emf_endpoint, .parse = parse_emf_endpoint },
		{ .name = "no-gzip", .arg = SINK_FLAG, .dst = &no_gzip },
		{ .name = "timeout", .arg = SINK_DUR, .dst = &o->timeout_ms, .min = 10 },
		{ .name = "backoff-min", .arg = SINK_DUR, .dst = &o->backoff_min_ms, .min = 1 },
		{ .name = "backoff-max", .arg = SINK_DUR, .dst = &o->backoff_max_ms, .min = 1 },
		{ .name = "drain-timeout", .arg = SINK_DUR, .dst = &o->drain_ms, .min = 0 },
		{ .name = NULL },
	};
	const struct sink_def def = { "accel-cloudwatch", usage, table };
	char err[512];
	const char *now = getenv("ACCEL_CLOUDWATCH_NOW");
	int rc;

	o->flush_ms = 30000;
	o->timeout_ms = 30000;
	o->backoff_min_ms = 1000;
	o->backoff_max_ms = 60000;
	o->drain_ms = 20000;
	if (gethostname(o->host, sizeof(o->host)) != 0)
		o->host[0] = '\0';
	o->host[sizeof(o->host) - 1] = '\0';
	cw_map_opts_init(&o->map, o->host);
	if ((rc = sink_start(&def, argc, argv)) != SINK_RUN)
		return rc;
	o->buffer = (size_t)buffer;
	o->format = format == 1 ? FMT_EMF : FMT_PUT;
	o->resolution = resolution == 1 ? 1 : 60;
	o->gzip = !no_gzip;
	if (!o->ns) {
		fprintf(stderr, "accel-cloudwatch: --namespace is required\n");
		return EXIT_USAGE;
	}
	if (check_namespace(o->ns, err, sizeof(err))) {
		fprintf(stderr, "accel-cloudwatch: %s\n", err);
		return EXIT_CONFIG;
	}
	if (o->backoff_max_ms < o->backoff_min_ms)
		o->backoff_max_ms = o->backoff_min_ms;
	if (o->emf_endpoint && o->format != FMT_EMF) {
		fprintf(stderr, "accel-cloudwatch: --emf-endpoint goes with --format emf\n");
		return EXIT_USAGE;
	}
	if (!o->region)
		o->region = getenv("AWS_REGION");
	if (!o->region || !*o->region)
		o->region = getenv("AWS_DEFAULT_REGION");
	if (o->format == FMT_PUT && !o->dry_run && (!o->region || !*o->region)) {
		fprintf(stderr, "accel-cloudwatch: no region: give --region or set AWS_REGION\n");
		return EXIT_CONFIG;
	}
	if ((o->dry_run || (o->format == FMT_EMF && !o->emf_endpoint)) && (rc = sink_need_stdout("accel-cloudwatch")))
		return rc;
	if (now) {
		int64_t ns;

		if (iso8601_parse(now, &ns)) {
			fprintf(stderr, "accel-cloudwatch: ACCEL_CLOUDWATCH_NOW \"%s\" is not ISO 8601\n", now);
			return EXIT_USAGE;
		}
		o->fake_now_ms = ns / NS_PER_MS;
	}
	return SINK_RUN;
}

/* ---- main ------------------------------------------------------------------ */

/* The transport: --dry-run's printer, or PutMetricData over libcurl (credentials first). An exit code or SINK_RUN. */
static int open_transport(struct cw *cw)
{
	char err[1024], hint[16], url[512];

	if (cw->o.format == FMT_PUT && cw->o.dry_run) {
		cw->dl.tp = (struct cw_transport){ print_send, cw };
		return SINK_RUN;
	}
	if (cw->o.format != FMT_PUT)
		return SINK_RUN;
	if (cw_creds_resolve(&cw->creds, wall_ms(cw), err, sizeof(err))) {
		log_err("cloudwatch: %s", err);
		return EXIT_CONFIG;
	}
	log_info("cloudwatch: credentials from %s (key %s%s)", cw->creds.where, cw_creds_key_hint(&cw->creds, hint),
		 cw->creds.token[0] ? ", with a session token" : "");
	if (cw->o.endpoint)
		snprintf(url, sizeof(url), "%s", cw->o.endpoint);
	else
		cw_http_default_endpoint(cw->o.region, url, sizeof(url));
	if (cw_http_init(&cw->http, url, cw->o.region, &cw->creds)) {
		log_err("cloudwatch: cannot start libcurl");
		return EXIT_SYSTEM;
	}
	cw->http.gzip = cw->o.gzip;
	cw->http.timeout_ms = cw->o.timeout_ms;
	cw->http.abort_now = push_give_up;
	cw->http.abort_ud = &cw->push;
	cw->dl.tp = (struct cw_transport){ put_send, cw };
	log_info("cloudwatch: PutMetricData to %s, namespace %s, every %lld ms", url, cw->o.ns,
		 (long long)cw->o.flush_ms);
	return SINK_RUN;
}

/* The closing summary; EXIT_OK, or EXIT_SYSTEM when datums were left undelivered for a reason to say. */
static int report_exit(struct cw *cw)
{
	const char *stop_why = push_stop_why(&cw->push);
	uint64_t left = cw->left + cw->q.len;

	log_info("cloudwatch: %llu reports; %llu datums delivered in %llu requests (%llu retries, %llu gzipped); "
		 "dropped: %llu rejected by CloudWatch, %llu bad values, %llu too old, %llu too new, %llu queue overflow",
		 (unsigned long long)cw->push.in.reports, (unsigned long long)cw->delivered,
		 (unsigned long long)cw->dl.requests, (unsigned long long)cw->dl.retries,
		 (unsigned long long)cw->http.gzipped, (unsigned long long)cw->dl.rejected,
		 (unsigned long long)cw->bad_values, (unsigned long long)(cw->too_old + cw->dl.stale),
		 (unsigned long long)cw->too_new, (unsigned long long)cw->q.dropped);
	if (cw->q.dropped)
		log_warn("cloudwatch: %llu datums were dropped because the queue was full (--buffer-datums %zu)",
			 (unsigned long long)cw->q.dropped, cw->o.buffer);
	if (!left || cw->stdout_gone)
		return EXIT_OK;
	if (stop_why[0])
		log_err("cloudwatch: exiting with %llu datums undelivered: %s", (unsigned long long)left, stop_why);
	else
		log_err("cloudwatch: exiting with %llu datums undelivered: --drain-timeout %lld ms passed",
			(unsigned long long)left, (long long)cw->o.drain_ms);
	return EXIT_SYSTEM;
}

int main(int argc, char **argv)
{
	struct cw *cw = xcalloc(1, sizeof(*cw));
	int rc = parse_args(&cw->o, argc, argv);

	if (rc != SINK_RUN) {
		free(cw);
		return rc;
	}
	http_curl_linked()->global_init(CURL_GLOBAL_DEFAULT);
	if (cw->o.dry_run)
		cw->o.emf_endpoint = NULL; /* EMF events go to stdout instead */
	cw->emf_fd = cw->o.format == FMT_EMF && !cw->o.emf_endpoint ? 1 : -1;
	buf_init(&cw->out, 64u << 20);
	cw->o.enc_ns = cw_form_encode_dup(cw->o.ns);
	cw_deliver_init(&cw->dl, cw->o.enc_ns, cw->o.resolution);
	cw->dl.backoff_min_ms = cw->o.backoff_min_ms;
	cw->dl.backoff_max_ms = cw->o.backoff_max_ms;
	cw->dl.wall_ms = wall_ms;
	cw->dl.sleep_ms = sleep_or_give_up;
	cw->dl.give_up = give_up;
	cw->dl.on_auth = on_auth;
	cw->dl.ud = cw;
	cw->dl.seed = (unsigned)(clock_real_ns() ^ getpid());
	cw->batch = xmalloc(CW_MAX_DATUMS * sizeof(*cw->batch));
	cw->dead = xmalloc(CW_MAX_DATUMS);
	cw_queue_init(&cw->q, cw->o.buffer);
	cw->map = mapper_new();
	push_init(&cw->push,
		  &(struct push_opts){ .tag = "cloudwatch", .fd = STDIN_FILENO, .flush_ms = cw->o.flush_ms,
				       .drain_ms = cw->o.drain_ms },
		  &cw_ops, cw);
	rc = open_transport(cw);
	if (rc == SINK_RUN)
		rc = push_run(&cw->push) ? EXIT_SYSTEM : report_exit(cw);
	push_free(&cw->push);
	mapper_free(cw->map);
	cw_queue_free(&cw->q);
	if (cw->emf_fd > 1)
		close(cw->emf_fd);
	cw_http_free(&cw->http);
	cw_deliver_free(&cw->dl);
	buf_free(&cw->out);
	memset(&cw->creds, 0, sizeof(cw->creds));
	free(cw->batch);
	free(cw->dead);
	free(cw->o.enc_ns);
	free(cw);
	http_curl_linked()->global_cleanup();
	return rc;
}
