/* SPDX-License-Identifier: MIT */
/*
 * accel-prom: the Prometheus endpoint sink, a drop-in for
 * neuron-monitor-prometheus.py.
 *
 *   accel-monitor | accel-prom --port 8000
 *   neuron-monitor | accel-prom --port 8000
 *
 * Three kinds of thread: the ingest thread reads stdin (common/stream.h),
 * applies each report to the store (prom_store.h) and publishes a freshly
 * rendered snapshot; libmicrohttpd's threads serve snapshots
 * (prom_http.h); the main thread waits for signals and, once a second,
 * sweeps stale series and re-renders (so ages and staleness move even when
 * no report comes).
 *
 * At the end of the input accel-prom keeps serving: /health answers 503
 * with the reason, accel_prom_input_open drops to 0, and the series go
 * stale one staleness window later. SIGINT or SIGTERM stop it (exit 0).
 */
#include "../../common/log.h"
#include "../../common/sink.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"
#include "../../common/series/prom_dcgm.h"
#include "../../common/series/prom_expo.h"
#include "prom_http.h"
#include "../../common/series/prom_pass.h"
#include "../../common/series/prom_store.h"
#include "prom_web.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_PORT 8000
#define TICK_NS NS_PER_S             /* sweep and re-render at least this often */
#define COALESCE_NS (100 * NS_PER_MS) /* a burst of buffered reports renders at most this often */
#define POLL_MS 200                  /* how often the ingest thread looks at the stop flag */

struct opts {
	unsigned long long port;
	char host[256];
	int have_listen, have_port;
	const char *web_config;
	const char *collectors;
	int64_t staleness_ms;
	unsigned long long max_line;
	size_t max_series_bytes; /* 0: the store's default */
	int old_pod_labels;      /* --use-old-namespace: pod_name, pod_namespace, container_name */
	int pod_uid;             /* --kubernetes-enable-pod-uid: pod_uid on the DCGM series */
	int pod_labels;          /* --kubernetes-enable-pod-labels: pods' labels (label_*) on theirs and allocations' */
	int passthrough;         /* --passthrough: endpoint runtimes' own families too */
};

struct ingest {
	struct prom_store *store;
	struct prom_pub *pub;
	size_t max_line;
	atomic_int stop;
	atomic_int done;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: accel-prom [OPTION]...\n"
		"Read accel-monitor or neuron-monitor reports (one JSON object per line) from\n"
		"stdin and serve them to Prometheus (see docs/accel-prom.md).\n"
		"\n"
		"      --port N                 listen on port N of every address (default %d)\n"
		"      --listen-address ADDR:PORT  listen there instead (\"127.0.0.1:8000\",\n"
		"                               \"[::1]:8000\", \":8000\" for every address)\n"
		"      --web.config.file FILE   TLS and basic auth, in the Prometheus exporter-toolkit\n"
		"                               web configuration format (YAML)\n"
		"      --staleness DUR          drop series not refreshed for DUR (\"90s\", \"5m\");\n"
		"                               default: 5 x the longest group period seen, at least 30s\n"
		"      --max-line-bytes N       skip input lines longer than N bytes (default %u)\n"
		"      --max-series-bytes N     memory the series may take: bytes, or with K, M, G\n"
		"                               (default 128M); new series beyond it are refused\n"
		"      --collectors FILE        also serve, for NVIDIA devices, the DCGM_FI_* fields\n"
		"                               dcgm-exporter's collectors CSV FILE lists (docs/nvidia.md)\n"
		"      --use-old-namespace      label pods as dcgm-exporter's --use-old-namespace does:\n"
		"                               pod_name, pod_namespace, container_name\n"
		"      --kubernetes-enable-pod-uid  with --collectors, pod_uid (the pod's UID) beside\n"
		"                               pod on the DCGM series, as dcgm-exporter's flag does\n"
		"      --kubernetes-enable-pod-labels  the pod's labels that accel-monitor\n"
		"                               --kubelet-pod-labels reports, named as kube-state-metrics\n"
		"                               names them (label_app_kubernetes_io_name), on the DCGM\n"
		"                               series and accelerator_allocation_info of its pod\n"
		"      --passthrough            also serve the families of endpoint runtimes configured\n"
		"                               with \"passthrough\": true, as the servers expose them,\n"
		"                               labelled with runtime_tag and pid (docs/accel-prom.md)\n"
		"  -v, --verbose[=N]            log level: 0 silent, 1 errors and warnings (default),\n"
		"                               2 info, 3 debug, 4 everything; -v, -vv raise it\n"
		"      --version                print the version and exit\n"
		"  -h, --help                   print this help and exit\n"
		"\n"
		"Endpoints: /metrics (Prometheus text 0.0.4, or OpenMetrics 1.0.0 when the Accept\n"
		"header prefers it; gzip when Accept-Encoding allows it), /health (200 while reports\n"
		"arrive within the staleness window, else 503 and the reason), / and /v1/collect\n"
		"(Baidu BIE's accelerator collector API).\n"
		"\n"
		"At the end of the input accel-prom keeps serving; /health then answers 503.\n"
		"SIGINT or SIGTERM stop it.\n"
		"\n"
		"Exit codes: 0 ok, 1 system error, 2 usage error, 3 configuration error.\n",
		DEFAULT_PORT, STREAM_DEFAULT_MAX_LINE);
}

/* --max-series-bytes N, NK, NM or NG (powers of 1024), 64K to 1024G */
static int parse_series_bytes(const char *arg, void *dst, char *err, size_t errsz)
{
	unsigned long long n;
	char *end;
	int sh;

	errno = 0;
	n = strtoull(arg, &end, 10);
	sh = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
	if (!*arg || arg[0] == '-' || arg[0] == '+' || end == arg || errno || (*end && (!strchr("KMG", *end) || end[1])) ||
	    n > (1ull << 40) >> sh || (n << sh) < (64 << 10)) {
		snprintf(err, errsz, "expected 64K to 1024G, got \"%s\"", arg);
		return -1;
	}
	*(size_t *)dst = (size_t)(n << sh);
	return 0;
}

/* --listen-address ADDR:PORT */
static int parse_listen(const char *arg, void *dst, char *err, size_t errsz)
{
	struct opts *o = dst;
	unsigned port;

	if (prom_parse_listen(arg, o->host, sizeof(o->host), &port)) {
		snprintf(err, errsz, "expected ADDR:PORT, [ADDR]:PORT or :PORT, got \"%s\"", arg);
		return -1;
	}
	o->port = port;
	return 0;
}

static void on_bad_line(void *ud, enum stream_bad why)
{
	prom_store_bad_line(ud, why);
}

static void *ingest_main(void *arg)
{
	struct ingest *in = arg;
	struct sink_input si;
	int64_t last_pub = 0;

	sink_input_init(&si, "prom", STDIN_FILENO, in->max_line);
	/* Wait for input in slices, so that a stop request is seen while stdin is quiet. */
	sink_input_set_wait(&si, POLL_MS);
	si.on_bad = on_bad_line;
	si.ud = in->store;
	while (!atomic_load(&in->stop)) {
		json_t *rep;
		int rc = sink_input_next(&si, &rep);
		int64_t now;

		if (rc == SINK_INPUT_AGAIN)
			continue;
		now = clock_mono_ns();
		if (rc == 1) {
			prom_store_report(in->store, rep, si.where, now, clock_real_ns());
			json_decref(rep);
		}
		prom_store_input_bytes(in->store, si.bytes);
		if (rc <= 0) {
			if (rc < 0)
				log_err("prom: %s; serving the last values, /health fails from now on", si.err);
			else
				log_warn("prom: stdin: end of input after %llu lines; serving the last values, /health "
					 "fails from now on",
					 (unsigned long long)si.lines);
			prom_store_eof(in->store, rc < 0 ? si.err : "end of input", now);
			prom_store_publish(in->store, in->pub, now, clock_real_ns());
			break;
		}
		/* Render after each report, but only once for a burst already sitting in the buffer. */
		if (now - last_pub >= COALESCE_NS || !sink_input_pending(&si)) {
			prom_store_publish(in->store, in->pub, now, clock_real_ns());
			last_pub = now;
		}
	}
	sink_input_free(&si);
	atomic_store(&in->done, 1);
	return NULL;
}

/*
 * Load the files the options name: the web configuration (TLS, basic auth)
 * into *web and the --collectors list into *dcgm, each NULL when not given.
 * 0, or -1 after logging why (nothing is left allocated).
 */
static int load_files(const struct opts *o, struct prom_web **web, struct prom_dcgm **dcgm)
{
	const char *name, *why;
	char *e = NULL;
	int line = 0;

	if (o->web_config && prom_web_load(o->web_config, web, &e)) {
		log_err("%s", e ? e : o->web_config);
		free(e);
		return -1;
	}
	if (!o->collectors)
		return 0;
	*dcgm = prom_dcgm_load(o->collectors, &e);
	if (!*dcgm) {
		log_err("prom: --collectors: %s", e ? e : o->collectors);
		free(e);
		prom_web_free(*web);
		*web = NULL;
		return -1;
	}
	for (size_t i = 0; (name = prom_dcgm_unsupported(*dcgm, i, &why, &line)); i++)
		log_warn("prom: --collectors: %s:%d: %s is not served: %s", o->collectors, line, name, why);
	return 0;
}

/* The main thread's part until SIGINT or SIGTERM: re-render the exposition at least every TICK_NS. */
static void serve(const sigset_t *sigs, struct prom_store *store, struct prom_pub *pub)
{
	for (;;) {
		struct timespec ts = { TICK_NS / NS_PER_S, TICK_NS % NS_PER_S };
		int sig = sigtimedwait(sigs, NULL, &ts);

		if (sig == SIGINT || sig == SIGTERM) {
			log_info("prom: %s: stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
			return;
		}
		prom_store_publish(store, pub, clock_mono_ns(), clock_real_ns());
	}
}

/*
 * Stop the ingest thread th and join it. It sees the flag within POLL_MS,
 * unless a report takes longer than that: after 2 s the process exits with
 * rc at once, since the thread still uses the store.
 */
static void stop_ingest(struct ingest *in, pthread_t th, int rc)
{
	int64_t until = clock_mono_ns() + 2 * NS_PER_S;

	atomic_store(&in->stop, 1);
	while (!atomic_load(&in->done) && clock_mono_ns() < until)
		sleep_ns(10 * NS_PER_MS, NULL);
	if (!atomic_load(&in->done)) {
		log_info("prom: the ingest thread is still busy; not waiting for it");
		_exit(rc);
	}
	pthread_join(th, NULL);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct prom_web *web = NULL;
	struct prom_dcgm *dcgm = NULL;
	struct prom_pass *pass = NULL;
	struct prom_store *store;
	struct prom_pub pub;
	struct prom_http *http = NULL;
	struct prom_http_opts ho;
	struct ingest in;
	pthread_t th;
	sigset_t sigs;
	char node[256], err[512];
	int rc, started = 0;

	const struct sink_opt table[] = {
		{ .name = "port", .arg = SINK_UINT, .dst = &o.port, .max = 65535, .given = &o.have_port },
		{ .name = "listen-address", .arg = SINK_FN, .dst = &o, .parse = parse_listen, .given = &o.have_listen },
		{ .name = "web.config.file", .arg = SINK_STR, .dst = &o.web_config },
		{ .name = "staleness", .arg = SINK_DUR, .dst = &o.staleness_ms, .min = 1 },
		{ .name = "max-line-bytes", .arg = SINK_UINT, .dst = &o.max_line, .min = 1, .max = 1 << 30 },
		{ .name = "collectors", .arg = SINK_STR, .dst = &o.collectors },
		{ .name = "max-series-bytes", .arg = SINK_FN, .dst = &o.max_series_bytes, .parse = parse_series_bytes },
		{ .name = "use-old-namespace", .arg = SINK_FLAG, .dst = &o.old_pod_labels },
		{ .name = "kubernetes-enable-pod-uid", .arg = SINK_FLAG, .dst = &o.pod_uid },
		{ .name = "kubernetes-enable-pod-labels", .arg = SINK_FLAG, .dst = &o.pod_labels },
		{ .name = "passthrough", .arg = SINK_FLAG, .dst = &o.passthrough },
		{ .name = NULL },
	};
	const struct sink_def def = { "accel-prom", usage, table };

	memset(&o, 0, sizeof(o));
	o.port = DEFAULT_PORT;
	o.max_line = STREAM_DEFAULT_MAX_LINE;
	if ((rc = sink_start(&def, argc, argv)) != SINK_RUN)
		return rc;
	if (o.have_port && o.have_listen) {
		fprintf(stderr, "accel-prom: --port and --listen-address: give one of them\n");
		return EXIT_USAGE;
	}
	if (load_files(&o, &web, &dcgm))
		return EXIT_CONFIG;
	prom_dcgm_set_pod_uid(dcgm, o.pod_uid);
	/* Signals are taken by sigtimedwait in the main thread only; the threads inherit the mask. */
	signal(SIGPIPE, SIG_IGN);
	sink_block_signals(&sigs);

	node_name(node, sizeof(node));
	if (o.passthrough)
		pass = prom_pass_new();
	store = prom_store_new(&(struct prom_store_opts){
		.staleness_ms = o.staleness_ms, .node_name = node, .version = ACCEL_VERSION, .dcgm = dcgm,
		.pass = pass, .max_bytes = o.max_series_bytes, .old_pod_labels = o.old_pod_labels,
		.pod_labels = o.pod_labels });
	prom_pub_init(&pub);
	prom_store_publish(store, &pub, clock_mono_ns(), clock_real_ns());

	rc = EXIT_OK;
	ho = (struct prom_http_opts){ o.host, (unsigned)o.port, &pub, store, web, ACCEL_VERSION };
	if (prom_http_start(&ho, &http, err, sizeof(err))) {
		log_err("prom: %s", err);
		rc = EXIT_SYSTEM;
		goto out;
	}
	log_info("prom: listening on %s%s%s:%u%s", strchr(o.host, ':') ? "[" : "", *o.host ? o.host : "*",
		 strchr(o.host, ':') ? "]" : "", prom_http_port(http), web ? " (web config)" : "");

	memset(&in, 0, sizeof(in));
	in.store = store;
	in.pub = &pub;
	in.max_line = (size_t)o.max_line;
	atomic_init(&in.stop, 0);
	atomic_init(&in.done, 0);
	if (pthread_create(&th, NULL, ingest_main, &in)) {
		log_err("prom: cannot start the ingest thread");
		rc = EXIT_SYSTEM;
		goto out;
	}
	started = 1;

	serve(&sigs, store, &pub);

out:
	prom_http_stop(http);
	if (started)
		stop_ingest(&in, th, rc);
	prom_pub_destroy(&pub);
	prom_store_free(store);
	prom_dcgm_free(dcgm);
	prom_pass_free(pass);
	prom_web_free(web);
	return rc;
}
