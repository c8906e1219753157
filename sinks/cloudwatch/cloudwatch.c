/* SPDX-License-Identifier: MIT */
/*
 * accel-cloudwatch: read the report stream (accel-monitor, neuron-monitor
 * 2.x or 2020) on stdin and push it to Amazon CloudWatch with PutMetricData,
 * or write it as Embedded Metric Format events.
 *
 * Three threads: the reader maps each report into datums and queues them;
 * the sender takes full batches (or whatever is queued when the flush
 * interval comes) and delivers them, retrying until CloudWatch has them;
 * the main thread waits for a signal or the end of input and then gives
 * the sender a deadline to empty the queue. Nothing accepted is dropped
 * silently: a datum CloudWatch refuses, one too old, and the oldest ones
 * when the queue is full are each counted and logged.
 */
#include "cloudwatch_creds.h"
#include "cloudwatch_deliver.h"
#include "cloudwatch_emf.h"
#include "cloudwatch_http.h"
#include "cloudwatch_map.h"
#include "cloudwatch_query.h"
#include "cloudwatch_queue.h"
#include "../../common/log.h"
#include "../../common/samples.h"
#include "../../common/sink.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <curl/curl.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum out_format { FMT_PUT, FMT_EMF };

#define DEFAULT_BUFFER_DATUMS 2000000 /* 48 MB at most; over an hour of 500 datums a second */
#define WARN_FIRST 10                 /* log this many of each kind of drop one by one, then every 1000th */

/* Everything the options set. */
static struct opts {
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
} O;

/* What the threads share, under mu. */
static struct state {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct cw_queue q;
	int input_done;         /* the reader has finished */
	int draining;           /* deliver everything now, until the deadline */
	int64_t deadline_ns;    /* monotonic */
	int stop_now;           /* a second signal, or stdout is gone */
	int stdout_gone;        /* EPIPE: the reader of --dry-run or EMF output went away */
	char stop_why[160];     /* why stop_now was set, for the exit message */
	size_t in_flight;       /* datums the sender has taken from the queue and not settled yet */
	int sender_done;
	uint64_t left;          /* undelivered at exit */
	uint64_t bad_values, too_old, too_new, bad_names, group_errors;
	uint64_t delivered;
} S = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static int64_t wall_ms(void)
{
	return O.fake_now_ms ? O.fake_now_ms : clock_real_ns() / NS_PER_MS;
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

struct map_ctx {
	int64_t now_ms;
	struct cw_scratch sc;
};

/*
 * The reader's state lives in a static so that, when the process exits with
 * the reader still blocked in read() (SIGTERM while the producer runs), its
 * buffers are still referenced: the reader is never cancelled, because a
 * cancelled read() unwinds through code that keeps no cleanup handlers.
 */
static struct reader {
	struct sink_input in;
	struct map_ctx *m;
} R;

/* A sample: map it and queue it (called with S.mu held). */
static void on_sample(const struct sample *s, void *ud)
{
	struct map_ctx *m = ud;
	struct cw_point p;
	char what[512];
	enum cw_verdict v = cw_map_sample(&O.map, s, m->now_ms, &p, &m->sc);
	int rc;

	switch (v) {
	case CW_SKIP:
		return;
	case CW_BAD_VALUE:
		if (worth_logging(++S.bad_values)) {
			describe_point(&p, what, sizeof(what));
			log_warn("cloudwatch: dropped datum %s: CloudWatch takes no NaN, infinity, or magnitude past 2^360 "
				 "(%llu bad values so far)", what, (unsigned long long)S.bad_values);
		}
		return;
	case CW_TOO_OLD:
	case CW_TOO_NEW:
		if (worth_logging(v == CW_TOO_OLD ? ++S.too_old : ++S.too_new)) {
			describe_point(&p, what, sizeof(what));
			log_warn("cloudwatch: dropped datum %s: %s (%llu so far)", what,
				 v == CW_TOO_OLD ? "more than two weeks old" : "more than two hours in the future",
				 (unsigned long long)(v == CW_TOO_OLD ? S.too_old : S.too_new));
		}
		return;
	case CW_OK:
		break;
	}
	rc = cw_queue_push(&S.q, &p);
	if (rc < 0) {
		if (worth_logging(++S.bad_names)) {
			describe_point(&p, what, sizeof(what));
			log_warn("cloudwatch: dropped datum %s: a name past CloudWatch's limits", what);
		}
	} else if (rc == 1 && (S.q.dropped == 1 || S.q.dropped % 10000 == 0)) {
		log_warn("cloudwatch: queue full (--buffer-datums %zu): dropping the oldest datums; %llu dropped so far",
			 O.buffer, (unsigned long long)S.q.dropped);
	}
}

static void on_group_error(const char *group, const char *entity, const char *error, void *ud)
{
	(void)ud;
	if (worth_logging(++S.group_errors))
		log_info("cloudwatch: %s %s reports an error, no datums from it: %s", entity, group, error);
}

static void on_bad_value(const char *path, const char *why, void *ud)
{
	(void)ud;
	if (worth_logging(++S.bad_values))
		log_warn("cloudwatch: %s: %s: %s; skipped it", R.in.where, path, why);
}


static void *reader_main(void *arg)
{
	struct map_ctx *m = xcalloc(1, sizeof(*m));
	struct map_cb cb = { on_sample, on_group_error, on_bad_value, m };
	struct mapper *map = mapper_new();

	(void)arg;
	R.m = m;
	sink_input_init(&R.in, "cloudwatch", STDIN_FILENO, 0);
	for (;;) {
		json_t *rep = NULL;
		int rc = sink_input_next(&R.in, &rep);

		if (rc == 0)
			break;
		if (rc < 0) {
			log_err("cloudwatch: %s", R.in.err);
			break;
		}
		pthread_mutex_lock(&S.mu);
		m->now_ms = wall_ms();
		mapper_report(map, rep, m->now_ms, &cb);
		if (S.q.len >= CW_MAX_DATUMS)
			pthread_cond_broadcast(&S.cv);
		pthread_mutex_unlock(&S.mu);
		json_decref(rep);
	}
	sink_input_free(&R.in);
	mapper_free(map);
	free(m);
	R.m = NULL;
	pthread_mutex_lock(&S.mu);
	S.input_done = 1;
	pthread_cond_broadcast(&S.cv);
	pthread_mutex_unlock(&S.mu);
	return NULL;
}

/* ---- the sender ---------------------------------------------------------- */

/* With S.mu held. */
static int give_up_locked(void)
{
	return S.stop_now || (S.draining && clock_mono_ns() >= S.deadline_ns);
}

static int give_up(void *ud)
{
	int r;

	(void)ud;
	pthread_mutex_lock(&S.mu);
	r = give_up_locked();
	pthread_mutex_unlock(&S.mu);
	return r;
}

static void abs_time(int64_t mono_ns, struct timespec *ts)
{
	/* pthread_cond_timedwait runs on CLOCK_REALTIME unless the condvar says otherwise; it says CLOCK_MONOTONIC. */
	ts->tv_sec = (time_t)(mono_ns / NS_PER_S);
	ts->tv_nsec = (long)(mono_ns % NS_PER_S);
}

/* Backoff wait: ends early at the exit deadline. */
static void sleep_until_or_give_up(void *ud, int64_t ms)
{
	int64_t end = clock_mono_ns() + ms * NS_PER_MS;
	struct timespec ts;

	(void)ud;
	pthread_mutex_lock(&S.mu);
	while (!give_up_locked() && clock_mono_ns() < end) {
		int64_t until = end;

		if (S.draining && S.deadline_ns < until)
			until = S.deadline_ns;
		abs_time(until, &ts);
		pthread_cond_timedwait(&S.cv, &S.mu, &ts);
	}
	pthread_mutex_unlock(&S.mu);
}

struct sender {
	struct cw_deliver dl;
	struct cw_http http;
	struct cw_creds creds;
	int force_refresh;
	int emf_fd;             /* -1: not connected; 1: stdout */
	unsigned emf_attempt;
	struct buf out;
};

static void on_auth(void *ud)
{
	struct sender *sd = ud;

	sd->force_refresh = 1;
}

/* The PutMetricData transport: refresh instance-role credentials when due, then send. */
static int put_send(void *ud, const struct buf *body, size_t ndatums, struct cw_reply *r)
{
	struct sender *sd = ud;
	char err[512], hint[16];
	int rc = cw_creds_refresh(&sd->creds, wall_ms(), sd->force_refresh, err, sizeof(err));

	if (rc < 0)
		log_warn("cloudwatch: refreshing credentials from %s failed: %s; keeping the current ones",
			 sd->creds.where, err);
	else if (rc == 1)
		log_info("cloudwatch: refreshed credentials from %s (key %s)", sd->creds.where,
			 cw_creds_key_hint(&sd->creds, hint));
	sd->force_refresh = 0;
	return cw_http_send(&sd->http, body, ndatums, r);
}

/*
 * Writing to stdout (--dry-run, EMF without an agent) failed: stop. A reader
 * that went away (EPIPE) is how a pipeline ends, not an error; anything else
 * is said, and named at exit as the reason datums were left undelivered.
 */
static void stdout_failed(int rc)
{
	if (rc != -EPIPE)
		log_err("cloudwatch: cannot write to stdout: %s", strerror(-rc));
	pthread_mutex_lock(&S.mu);
	S.stop_now = 1;
	S.stdout_gone = rc == -EPIPE;
	snprintf(S.stop_why, sizeof(S.stop_why), "cannot write to stdout: %s", strerror(-rc));
	pthread_cond_broadcast(&S.cv);
	pthread_mutex_unlock(&S.mu);
}

/* --dry-run: the body, one a line, on stdout. Sent only once it is written. */
static int print_send(void *ud, const struct buf *body, size_t ndatums, struct cw_reply *r)
{
	int rc = write_all(1, body->data, body->len);

	(void)ud, (void)ndatums;
	memset(r, 0, sizeof(*r));
	if (!rc)
		rc = write_all(1, "\n", 1);
	if (!rc) {
		r->outcome = CW_SENT;
		return 0;
	}
	stdout_failed(rc);
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

/* EMF: render, then write to stdout or the agent, reconnecting and retrying until written or time is up. */
static size_t emf_deliver(struct sender *sd, const struct cw_datum *d, size_t n, unsigned char *dead)
{
	buf_reset(&sd->out);
	if (cw_emf_render(&sd->out, O.ns, O.resolution, d, n) < 0) {
		log_err("cloudwatch: EMF events for %zu datums do not fit in memory", n);
		return n;
	}
	for (;;) {
		int rc;

		if (sd->emf_fd < 0)
			sd->emf_fd = emf_connect(O.emf_endpoint);
		rc = sd->emf_fd < 0 ? sd->emf_fd : write_all(sd->emf_fd, sd->out.data, sd->out.len);
		if (rc == 0) {
			memset(dead, 1, n);
			sd->emf_attempt = 0;
			return 0;
		}
		if (!O.emf_endpoint) {
			stdout_failed(rc);
			return n;
		}
		if (sd->emf_fd >= 0)
			close(sd->emf_fd);
		sd->emf_fd = -1;
		if (give_up(NULL))
			return n;
		sd->emf_attempt++;
		{
			int64_t wait = cw_backoff_ms(&sd->dl, sd->emf_attempt, &sd->dl.seed);

			log_warn("cloudwatch: sending EMF to %s failed: %s; retrying in %lld ms", O.emf_endpoint,
				 strerror(-rc), (long long)wait);
			sleep_until_or_give_up(NULL, wait);
		}
		if (give_up(NULL))
			return n;
	}
}

static void *sender_main(void *arg)
{
	struct sender *sd = arg;
	struct cw_datum *batch = xmalloc(CW_MAX_DATUMS * sizeof(*batch));
	unsigned char *dead = xmalloc(CW_MAX_DATUMS);
	int64_t next_flush = clock_mono_ns() + O.flush_ms * NS_PER_MS;
	int flushing = 0;
	struct timespec ts;

	pthread_mutex_lock(&S.mu);
	for (;;) {
		size_t n, left, sent;

		while (!S.draining && !flushing && S.q.len < CW_MAX_DATUMS && !S.stop_now) {
			if (clock_mono_ns() >= next_flush) {
				flushing = 1;
				break;
			}
			abs_time(next_flush, &ts);
			pthread_cond_timedwait(&S.cv, &S.mu, &ts);
		}
		if (S.stop_now)
			break;
		if (!S.q.len) {
			if (S.draining)
				break;
			flushing = 0;
			next_flush += O.flush_ms * NS_PER_MS;
			if (next_flush < clock_mono_ns())
				next_flush = clock_mono_ns() + O.flush_ms * NS_PER_MS;
			continue;
		}
		n = cw_queue_take(&S.q, batch, CW_MAX_DATUMS);
		S.in_flight = n;
		pthread_mutex_unlock(&S.mu);

		memset(dead, 0, n);
		if (O.format == FMT_EMF) {
			left = emf_deliver(sd, batch, n, dead);
			sent = n - left;
		} else {
			uint64_t before = sd->dl.sent;

			/* dead[] also marks what CloudWatch rejected or was too old: only "sent" arrived. */
			left = cw_deliver_batch(&sd->dl, batch, n, dead);
			sent = (size_t)(sd->dl.sent - before);
		}

		pthread_mutex_lock(&S.mu);
		for (size_t i = 0; i < n; i++)
			cw_queue_release(&S.q, &batch[i]);
		S.in_flight = 0;
		S.delivered += sent;
		if (left) {
			S.left += left;
			break;
		}
	}
	S.left += S.q.len;
	S.sender_done = 1;
	pthread_cond_broadcast(&S.cv);
	pthread_mutex_unlock(&S.mu);
	free(batch);
	free(dead);
	return NULL;
}

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

/* Read the command line into O. SINK_RUN, or the exit code to return now. */
static int parse_args(int argc, char **argv, char *hostbuf)
{
	static const char *const formats[] = { "putmetricdata", "emf", NULL };
	static const char *const resolutions[] = { "60", "1", NULL };
	static unsigned long long buffer = DEFAULT_BUFFER_DATUMS;
	static int format, resolution, no_gzip;
	static const struct sink_opt table[] = {
		{ .name = "namespace", .arg = SINK_STR, .dst = &O.ns },
		{ .name = "region", .arg = SINK_STR, .dst = &O.region },
		{ .name = "endpoint-url", .arg = SINK_STR, .dst = &O.endpoint },
		{ .name = "flush-interval", .arg = SINK_DUR, .dst = &O.flush_ms, .min = 10 },
		{ .name = "storage-resolution", .arg = SINK_CHOICE, .dst = &resolution, .choices = resolutions },
		{ .name = "dimensions", .arg = SINK_FN, .dst = &O.map, .parse = parse_dims },
		{ .name = "buffer-datums", .arg = SINK_UINT, .dst = &buffer, .min = 1, .max = 1LL << 40 },
		{ .name = "dry-run", .arg = SINK_FLAG, .dst = &O.dry_run },
		{ .name = "format", .arg = SINK_CHOICE, .dst = &format, .choices = formats },
		{ .name = "emf-endpoint", .arg = SINK_FN, .dst = &O.emf_endpoint, .parse = parse_emf_endpoint },
		{ .name = "no-gzip", .arg = SINK_FLAG, .dst = &no_gzip },
		{ .name = "timeout", .arg = SINK_DUR, .dst = &O.timeout_ms, .min = 10 },
		{ .name = "backoff-min", .arg = SINK_DUR, .dst = &O.backoff_min_ms, .min = 1 },
		{ .name = "backoff-max", .arg = SINK_DUR, .dst = &O.backoff_max_ms, .min = 1 },
		{ .name = "drain-timeout", .arg = SINK_DUR, .dst = &O.drain_ms, .min = 0 },
		{ .name = NULL },
	};
	static const struct sink_def def = { "accel-cloudwatch", usage, table };
	char err[512];
	const char *now = getenv("ACCEL_CLOUDWATCH_NOW");
	int rc;

	memset(&O, 0, sizeof(O));
	O.flush_ms = 30000;
	O.timeout_ms = 30000;
	O.backoff_min_ms = 1000;
	O.backoff_max_ms = 60000;
	O.drain_ms = 20000;
	if (gethostname(hostbuf, 256) != 0)
		hostbuf[0] = '\0';
	hostbuf[255] = '\0';
	cw_map_opts_init(&O.map, hostbuf);
	if ((rc = sink_start(&def, argc, argv)) != SINK_RUN)
		return rc;
	O.buffer = (size_t)buffer;
	O.format = format == 1 ? FMT_EMF : FMT_PUT;
	O.resolution = resolution == 1 ? 1 : 60;
	O.gzip = !no_gzip;
	if (!O.ns) {
		fprintf(stderr, "accel-cloudwatch: --namespace is required\n");
		return EXIT_USAGE;
	}
	if (check_namespace(O.ns, err, sizeof(err))) {
		fprintf(stderr, "accel-cloudwatch: %s\n", err);
		return EXIT_CONFIG;
	}
	if (O.backoff_max_ms < O.backoff_min_ms)
		O.backoff_max_ms = O.backoff_min_ms;
	if (O.emf_endpoint && O.format != FMT_EMF) {
		fprintf(stderr, "accel-cloudwatch: --emf-endpoint goes with --format emf\n");
		return EXIT_USAGE;
	}
	if (!O.region)
		O.region = getenv("AWS_REGION");
	if (!O.region || !*O.region)
		O.region = getenv("AWS_DEFAULT_REGION");
	if (O.format == FMT_PUT && !O.dry_run && (!O.region || !*O.region)) {
		fprintf(stderr, "accel-cloudwatch: no region: give --region or set AWS_REGION\n");
		return EXIT_CONFIG;
	}
	if ((O.dry_run || (O.format == FMT_EMF && !O.emf_endpoint)) && (rc = sink_need_stdout("accel-cloudwatch")))
		return rc;
	if (now) {
		int64_t ns;

		if (iso8601_parse(now, &ns)) {
			fprintf(stderr, "accel-cloudwatch: ACCEL_CLOUDWATCH_NOW \"%s\" is not ISO 8601\n", now);
			return EXIT_USAGE;
		}
		O.fake_now_ms = ns / NS_PER_MS;
	}
	return SINK_RUN;
}

/* ---- main ------------------------------------------------------------------ */

static void start_drain(const char *why)
{
	if (S.draining)
		return;
	S.draining = 1;
	S.deadline_ns = clock_mono_ns() + O.drain_ms * NS_PER_MS;
	log_info("cloudwatch: %s: delivering the %zu datums not yet delivered (%zu queued, %zu being sent; deadline "
		 "%lld ms)",
		 why, S.q.len + S.in_flight, S.q.len, S.in_flight, (long long)O.drain_ms);
	pthread_cond_broadcast(&S.cv);
}

int main(int argc, char **argv)
{
	static char host[256];
	struct sender *sd;
	pthread_t rt, stt;
	pthread_condattr_t ca;
	sigset_t sigs;
	int rc = parse_args(argc, argv, host), sig;
	char err[1024], hint[16];

	if (rc != SINK_RUN)
		return rc;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	sd = xcalloc(1, sizeof(*sd));
	if (O.dry_run)
		O.emf_endpoint = NULL; /* EMF events go to stdout instead */
	sd->emf_fd = O.format == FMT_EMF && !O.emf_endpoint ? 1 : -1;
	buf_init(&sd->out, 64u << 20);
	O.enc_ns = cw_form_encode_dup(O.ns);
	cw_deliver_init(&sd->dl, O.enc_ns, O.resolution);
	sd->dl.backoff_min_ms = O.backoff_min_ms;
	sd->dl.backoff_max_ms = O.backoff_max_ms;
	sd->dl.wall_ms = wall_ms;
	sd->dl.sleep_ms = sleep_until_or_give_up;
	sd->dl.give_up = give_up;
	sd->dl.on_auth = on_auth;
	sd->dl.ud = sd;
	sd->dl.seed = (unsigned)(clock_real_ns() ^ getpid());
	if (O.format == FMT_PUT && O.dry_run) {
		sd->dl.tp = (struct cw_transport){ print_send, sd };
	} else if (O.format == FMT_PUT) {
		char url[512];

		if (cw_creds_resolve(&sd->creds, wall_ms(), err, sizeof(err))) {
			log_err("cloudwatch: %s", err);
			rc = EXIT_CONFIG;
			goto out;
		}
		log_info("cloudwatch: credentials from %s (key %s%s)", sd->creds.where, cw_creds_key_hint(&sd->creds, hint),
			 sd->creds.token[0] ? ", with a session token" : "");
		if (O.endpoint)
			snprintf(url, sizeof(url), "%s", O.endpoint);
		else
			cw_http_default_endpoint(O.region, url, sizeof(url));
		if (cw_http_init(&sd->http, url, O.region, &sd->creds)) {
			log_err("cloudwatch: cannot start libcurl");
			rc = EXIT_SYSTEM;
			goto out;
		}
		sd->http.gzip = O.gzip;
		sd->http.timeout_ms = O.timeout_ms;
		sd->http.abort_now = give_up;
		sd->dl.tp = (struct cw_transport){ put_send, sd };
		log_info("cloudwatch: PutMetricData to %s, namespace %s, every %lld ms", url, O.ns, (long long)O.flush_ms);
	}

	/* The sender's timed waits run on the monotonic clock. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_destroy(&S.cv);
	pthread_cond_init(&S.cv, &ca);
	pthread_condattr_destroy(&ca);
	cw_queue_init(&S.q, O.buffer);

	/* Signals go to the main thread only, through sigtimedwait. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	if (pthread_create(&rt, NULL, reader_main, NULL) || pthread_create(&stt, NULL, sender_main, sd)) {
		log_err("cloudwatch: cannot start threads");
		exit(EXIT_SYSTEM);
	}
	for (;;) {
		struct timespec tick = { 0, 50 * 1000000L };

		sig = sigtimedwait(&sigs, NULL, &tick);
		pthread_mutex_lock(&S.mu);
		if (sig > 0) {
			if (S.draining) {
				log_warn("cloudwatch: %s again: exiting now", strsignal(sig));
				S.stop_now = 1;
				snprintf(S.stop_why, sizeof(S.stop_why), "a second %s", sig == SIGINT ? "SIGINT" : "SIGTERM");
				pthread_cond_broadcast(&S.cv);
			} else {
				start_drain(strsignal(sig));
			}
		}
		if (S.input_done && !S.draining)
			start_drain("end of input");
		if (S.sender_done) {
			pthread_mutex_unlock(&S.mu);
			break;
		}
		pthread_mutex_unlock(&S.mu);
	}
	pthread_join(stt, NULL);
	/*
	 * A reader still waiting for input is left blocked: S.mu stays held from
	 * here to the exit, so it cannot touch the queue freed below.
	 */
	pthread_mutex_lock(&S.mu);
	if (S.input_done) {
		pthread_mutex_unlock(&S.mu);
		pthread_join(rt, NULL);
		pthread_mutex_lock(&S.mu);
	}

	log_info("cloudwatch: %llu reports; %llu datums delivered in %llu requests (%llu retries, %llu gzipped); "
		 "dropped: %llu rejected by CloudWatch, %llu bad values, %llu too old, %llu too new, %llu queue overflow",
		 (unsigned long long)R.in.reports, (unsigned long long)S.delivered, (unsigned long long)sd->dl.requests,
		 (unsigned long long)sd->dl.retries, (unsigned long long)sd->http.gzipped,
		 (unsigned long long)sd->dl.rejected, (unsigned long long)S.bad_values,
		 (unsigned long long)(S.too_old + sd->dl.stale), (unsigned long long)S.too_new,
		 (unsigned long long)S.q.dropped);
	if (S.q.dropped)
		log_warn("cloudwatch: %llu datums were dropped because the queue was full (--buffer-datums %zu)",
			 (unsigned long long)S.q.dropped, O.buffer);
	rc = EXIT_OK;
	if (S.left && !S.stdout_gone) {
		char why[64];

		if (!S.stop_why[0])
			snprintf(why, sizeof(why), "--drain-timeout %lld ms passed", (long long)O.drain_ms);
		log_err("cloudwatch: exiting with %llu datums undelivered: %s", (unsigned long long)S.left,
			S.stop_why[0] ? S.stop_why : why);
		rc = EXIT_SYSTEM;
	}
	cw_queue_free(&S.q);
out:
	if (sd->emf_fd > 1)
		close(sd->emf_fd);
	cw_http_free(&sd->http);
	cw_deliver_free(&sd->dl);
	buf_free(&sd->out);
	memset(&sd->creds, 0, sizeof(sd->creds));
	free(sd);
	free(O.enc_ns);
	curl_global_cleanup();
	return rc;
}
