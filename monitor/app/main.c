/* SPDX-License-Identifier: MIT */
/*
 * accel-monitor: the command line and signals; sets up the monitor and
 * runs the event loop, whose timers write the reports and reload.
 *
 * stdout carries the report stream and nothing else; logs go to stderr.
 * Signals are blocked except while waiting (ppoll), so a report is always
 * written whole: SIGINT/SIGTERM end the loop after it, SIGHUP reloads the
 * configuration between two reports. When stdout is a pipe whose reader
 * has gone, the wait notices (POLLERR) and the program exits quietly.
 */

#include "../../common/cli.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"
#include "../config/config.h"
#include "../core/fdbudget.h"
#include "../host/host.h"
#include "../host/instance.h"
#include "../host/kubelet_pods.h"
#include "../http/http_async.h"
#include "../core/loop.h"
#include "monitor.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ONCE_WINDOW_NS (250 * NS_PER_MS)
#define INSTANCE_REFRESH_NS (3600 * NS_PER_S)
#define INSTANCE_FIRST_WAIT_NS (1500 * NS_PER_MS)

static volatile sig_atomic_t got_term, got_hup;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		got_hup = 1;
	else
		got_term = 1;
}

struct opts {
	const char *config;
	const char *procfs, *sysfs;
	/*
	 * --path.rootfs, --path.run, --path.cgroupfs, --kubelet-*, --ecs-*,
	 * --instance-metadata (instance_mode -1: not given): over the config's
	 * "host" block. Strings borrowed from argv and the environment.
	 */
	struct cfg_host host;
	int verbose;
	int once, check;
	unsigned long long count;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: accel-monitor [OPTION]...\n"
		"Poll accelerator runtimes, devices and the host, and write one JSON report\n"
		"per line to stdout (see docs/report-format.md).\n"
		"\n"
		"  -c, --config-file PATH  JSON config, or YAML when PATH ends in .yaml/.yml;\n"
		"                          without it: vcpu_usage, memory_info and every\n"
		"                          group of every device found, every 5 s\n"
		"      --once              collect every group once (over 250 ms), print one report, exit\n"
		"  -n, --count N           exit after N reports\n"
		"      --check-config      validate, print the effective configuration as JSON, exit\n"
		"      --path.procfs DIR   read /proc from DIR (default /proc)\n"
		"      --path.sysfs DIR    read /sys from DIR (default /sys)\n"
		"      --path.rootfs DIR   the host's / (container runtimes' state; default /)\n"
		"      --path.run DIR      the host's /run (default ROOTFS/run)\n"
		"      --path.cgroupfs DIR the host's /sys/fs/cgroup (default ROOTFS/sys/fs/cgroup)\n"
		"      --kubelet-url URL   ask the kubelet's /pods for pod names the runtimes'\n"
		"                          files do not give (e.g. https://$NODE_IP:10250)\n"
		"      --kubelet-token-file FILE  bearer token for it (a service-account token)\n"
		"      --kubelet-ca-file FILE     CA of its serving certificate\n"
		"      --kubelet-refresh DURATION at most one /pods fetch per DURATION (default 30s)\n"
		"      --kubelet-pod-labels N  with --kubelet-url, each pod's labels in the report,\n"
		"                          at most N per pod (0 to 64; default 0: none)\n"
		"      --pod-resources-socket PATH  the kubelet's pod-resources gRPC socket: which\n"
		"                          pod holds which device (default ROOTFS/var/lib/kubelet/\n"
		"                          pod-resources/kubelet.sock when it exists; \"\": none);\n"
		"                          asked at most once per --kubelet-refresh\n"
		"      --hpc-job-mapping-dir DIR  the scheduler's files of which HPC jobs run on\n"
		"                          which GPU, as NVIDIA's dcgm-exporter reads them (one\n"
		"                          file per GPU index or GPU.INSTANCE, a job id a line;\n"
		"                          \"\": none); read again when it changes\n"
		"      --ecs-agent-url URL ask the ECS agent's introspection API for task and\n"
		"                          container names (e.g. http://localhost:51678)\n"
		"      --ecs-metadata      ask the task metadata endpoint v4\n"
		"                          ($ECS_CONTAINER_METADATA_URI_V4): the monitor's own task\n"
		"      --ecs-metadata-url URL  the same, at URL\n"
		"      --ecs-refresh DURATION  at most one ECS fetch per DURATION (default 30s)\n"
		"      --instance-metadata auto|on|off  ask the EC2 instance metadata service:\n"
		"                          auto (default) only on an EC2 instance (DMI, the\n"
		"                          hypervisor's uuid; see docs/report-format.md)\n"

		"  -v, --verbose[=N]       log level: 0 silent, 1 errors and warnings (default),\n"
		"                          2 info, 3 debug, 4 everything; -v, -vv raise it\n"
		"      --version           print the version and exit\n"
		"  -h, --help              print this help and exit\n"
		"\n"
		"The options from --path.rootfs to --instance-metadata can also be in the\n"
		"config's \"host\" block (\"rootfs\", \"run\", \"cgroupfs\", \"kubelet_url\", ...,\n"
		"\"ecs_metadata\": true, \"instance_metadata\"), which SIGHUP reloads; one given\n"
		"on the command line wins over the file's.\n"
		"\n"
		"Signals: SIGINT/SIGTERM finish the current report and exit 0; SIGHUP reloads\n"
		"the config file, its host block included (an invalid one is logged and the\n"
		"old one kept).\n"
		"\n"
		"Exit codes: 0 ok, 1 system error, 2 usage error, 3 configuration error.\n"
		"\n"
		"Example config (periods: \"250ms\", \"1s\", \"1.5s\", \"2m\", \"1h\" or seconds;\n"
		"100ms to 24h; inherited root -> runtime -> group; default 5s):\n"
		"  {\n"
		"    \"period\": \"1s\",\n"
		"    \"runtimes\": [\n"
		"      { \"address\": \"process:tritonserver\", \"period\": \"2s\",\n"
		"        \"metrics\": [ { \"type\": \"runtime_vcpu_usage\" },\n"
		"                     { \"type\": \"memory_used\", \"period\": \"5s\" } ] }\n"
		"    ],\n"
		"    \"system_metrics\": [ { \"type\": \"vcpu_usage\" },\n"
		"                        { \"type\": \"memory_info\", \"period\": \"10s\" } ],\n"
		"    \"devices\": []\n"
		"  }\n");
}

/* Command-line options, beyond what getopt's letters name. */
enum { OPT_ONCE = 256, OPT_CHECK, OPT_PROCFS, OPT_SYSFS, OPT_VERSION, OPT_ROOTFS, OPT_RUN, OPT_CGROUPFS,
	       OPT_KUBELET_URL, OPT_KUBELET_TOKEN, OPT_KUBELET_CA, OPT_KUBELET_REFRESH, OPT_KUBELET_LABELS, OPT_POD_RESOURCES,
	       OPT_HPC_JOBS, OPT_ECS_AGENT, OPT_ECS_METADATA_URL, OPT_ECS_METADATA, OPT_ECS_REFRESH, OPT_INSTANCE };

/*
 * A host option c (OPT_ROOTFS to OPT_INSTANCE) with its argument arg
 * (borrowed: it outlives h) into h, the command line's host block. 0, or -1
 * after saying why on stderr.
 */
static int host_option(int c, char *arg, struct cfg_host *h)
{
	switch (c) {
	case OPT_ROOTFS:
	case OPT_RUN:
	case OPT_CGROUPFS:
	case OPT_KUBELET_URL:
	case OPT_KUBELET_TOKEN:
	case OPT_KUBELET_CA: {
		static const char *const names[] = { "path.rootfs", "path.run", "path.cgroupfs", "kubelet-url",
						     "kubelet-token-file", "kubelet-ca-file" };
		char **dst[] = { &h->rootfs, &h->run, &h->cgroupfs, &h->kubelet_url,
				 &h->kubelet_token_file, &h->kubelet_ca_file };

		if (!*arg) {
			fprintf(stderr, "accel-monitor: --%s: expected a %s, got \"\"\n", names[c - OPT_ROOTFS],
				c == OPT_KUBELET_URL ? "URL" : c >= OPT_KUBELET_TOKEN ? "file" : "directory");
			return -1;
		}
		if (c == OPT_KUBELET_URL && strncmp(arg, "https://", 8) && strncmp(arg, "http://", 7)) {
			fprintf(stderr, "accel-monitor: --kubelet-url: expected an http:// or https:// URL, got \"%s\"\n",
				arg);
			return -1;
		}
		*dst[c - OPT_ROOTFS] = arg; /* borrowed: never freed */
		break;
	}
	case OPT_KUBELET_LABELS: {
		char *end;
		long n;

		errno = 0;
		n = strtol(arg, &end, 10);
		if (!*arg || *end || errno || n < 0 || n > KUBELET_LABELS_MAX) {
			fprintf(stderr, "accel-monitor: --kubelet-pod-labels: expected an integer from 0 (none) to %d, "
				"got \"%s\"\n", KUBELET_LABELS_MAX, arg);
			return -1;
		}
		h->kubelet_pod_labels = (int)n;
		break;
	}
	case OPT_POD_RESOURCES:
		h->pod_resources_socket = arg; /* borrowed: never freed; "" turns the client off */
		break;
	case OPT_HPC_JOBS:
		h->hpc_job_mapping_dir = arg; /* borrowed: never freed; "" turns the mapping off */
		break;
	case OPT_KUBELET_REFRESH:
	case OPT_ECS_REFRESH: {
		int64_t ms;
		const char *why;

		if (duration_parse(arg, &ms, &why) || ms < 1000) {
			fprintf(stderr, "accel-monitor: --%s-refresh: expected a duration of 1s or more, got \"%s\"\n",
				c == OPT_ECS_REFRESH ? "ecs" : "kubelet", arg);
			return -1;
		}
		*(c == OPT_ECS_REFRESH ? &h->ecs_refresh_ms : &h->kubelet_refresh_ms) = ms;
		break;
	}
	case OPT_ECS_METADATA:
	case OPT_ECS_AGENT:
	case OPT_ECS_METADATA_URL: {
		/* The agent sets the variable in every container of a task (Fargate 1.4, agent 1.39 on EC2). */
		char *url = c == OPT_ECS_METADATA ? getenv("ECS_CONTAINER_METADATA_URI_V4") : arg;

		if (c == OPT_ECS_METADATA && (!url || !*url)) {
			fprintf(stderr, "accel-monitor: --ecs-metadata: ECS_CONTAINER_METADATA_URI_V4 is not set "
					"(not in an ECS task?); --ecs-metadata-url URL names the endpoint\n");
			return -1;
		}
		if (strncmp(url, "https://", 8) && strncmp(url, "http://", 7)) {
			fprintf(stderr, "accel-monitor: --%s: expected an http:// or https:// URL, got \"%s\"\n",
				c == OPT_ECS_AGENT ? "ecs-agent-url" : c == OPT_ECS_METADATA ? "ecs-metadata" :
				"ecs-metadata-url", url);
			return -1;
		}
		*(c == OPT_ECS_AGENT ? &h->ecs_agent_url : &h->ecs_metadata_url) = url;
		break;
	}
	case OPT_INSTANCE:
		h->instance_mode = instance_mode_parse(arg);
		if (h->instance_mode < 0) {
			fprintf(stderr, "accel-monitor: --instance-metadata: expected auto, on or off, got \"%s\"\n",
				arg);
			return -1;
		}
		break;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "config-file", required_argument, NULL, 'c' },
		{ "count", required_argument, NULL, 'n' },
		{ "verbose", optional_argument, NULL, 'v' },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "check-config", no_argument, NULL, OPT_CHECK },
		{ "path.procfs", required_argument, NULL, OPT_PROCFS },
		{ "path.sysfs", required_argument, NULL, OPT_SYSFS },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "path.rootfs", required_argument, NULL, OPT_ROOTFS },
		{ "path.run", required_argument, NULL, OPT_RUN },
		{ "path.cgroupfs", required_argument, NULL, OPT_CGROUPFS },
		{ "kubelet-url", required_argument, NULL, OPT_KUBELET_URL },
		{ "kubelet-token-file", required_argument, NULL, OPT_KUBELET_TOKEN },
		{ "kubelet-ca-file", required_argument, NULL, OPT_KUBELET_CA },
		{ "kubelet-refresh", required_argument, NULL, OPT_KUBELET_REFRESH },
		{ "kubelet-pod-labels", required_argument, NULL, OPT_KUBELET_LABELS },
		{ "pod-resources-socket", required_argument, NULL, OPT_POD_RESOURCES },
		{ "hpc-job-mapping-dir", required_argument, NULL, OPT_HPC_JOBS },
		{ "ecs-agent-url", required_argument, NULL, OPT_ECS_AGENT },
		{ "ecs-metadata-url", required_argument, NULL, OPT_ECS_METADATA_URL },
		{ "ecs-metadata", no_argument, NULL, OPT_ECS_METADATA },
		{ "ecs-refresh", required_argument, NULL, OPT_ECS_REFRESH },
		{ "instance-metadata", required_argument, NULL, OPT_INSTANCE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	char *end;

	memset(o, 0, sizeof(*o));
	o->verbose = LOG_LVL_WARN;
	o->host.instance_mode = -1;
	o->host.kubelet_pod_labels = -1; /* not given: the file's */
	while ((c = getopt_long(argc, argv, "c:n:v::h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case 'n':
			errno = 0;
			o->count = strtoull(optarg, &end, 10);
			if (!*optarg || *end || errno || o->count == 0 || optarg[0] == '-') {
				fprintf(stderr, "accel-monitor: --count: expected a positive integer, got \"%s\"\n",
					optarg);
				return -1;
			}
			break;
		case 'v':
			if (log_verbose_option("accel-monitor", argc, argv, &o->verbose))
				return -1;
			break;
		case OPT_ONCE:
			o->once = 1;
			break;
		case OPT_CHECK:
			o->check = 1;
			break;
		case OPT_PROCFS:
		case OPT_SYSFS:
			/* As in the config ("procfs": ""): an empty root would read the current directory as /proc. */
			if (!*optarg) {
				fprintf(stderr, "accel-monitor: --path.%s: expected a directory, got \"\"\n",
					c == OPT_PROCFS ? "procfs" : "sysfs");
				return -1;
			}
			*(c == OPT_PROCFS ? &o->procfs : &o->sysfs) = optarg;
			break;
		case OPT_ROOTFS:
		case OPT_RUN:
		case OPT_CGROUPFS:
		case OPT_KUBELET_URL:
		case OPT_KUBELET_TOKEN:
		case OPT_KUBELET_CA:
		case OPT_KUBELET_REFRESH:
		case OPT_KUBELET_LABELS:
		case OPT_POD_RESOURCES:
		case OPT_HPC_JOBS:
		case OPT_ECS_REFRESH:
		case OPT_ECS_METADATA:
		case OPT_ECS_AGENT:
		case OPT_ECS_METADATA_URL:
		case OPT_INSTANCE:
			if (host_option(c, optarg, &o->host))
				return -1;
			break;
		case OPT_VERSION:
			printf("accel-monitor %s\n", ACCEL_VERSION);
			exit(cli_finish_stdout("accel-monitor"));
		case 'h':
			usage(stdout);
			exit(cli_finish_stdout("accel-monitor"));
		default:
			fprintf(stderr, "Try 'accel-monitor --help'.\n");
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "accel-monitor: unexpected argument \"%s\"\nTry 'accel-monitor --help'.\n",
			argv[optind]);
		return -1;
	}
	return 0;
}

/*
 * Load the configuration named in o (or the default) and apply the
 * command line's roots and host options: each wins over the file's.
 */
static int load_config(const struct opts *o, struct cfg *cfg)
{
	char *err = NULL;

	if (!o->config) {
		cfg_default(cfg);
	} else if (cfg_load(o->config, cfg, &err)) {
		log_err("%s", err);
		free(err);
		return -1;
	}
	cfg_override(cfg, o->procfs, o->sysfs, &o->host);
	return 0;
}

/* stdout is a pipe whose reader has gone (POLLERR): the watch on it saw that. */
static int stdout_gone;

static void on_stdout_error(struct loop_watch *w, short revents)
{
	if (revents & (POLLERR | POLLHUP)) {
		stdout_gone = 1;
		loop_watch_stop(w->data, w); /* an error stays ready: stop polling it */
	}
}

/*
 * Turn the event loop (every source's watches and timers, the HTTP
 * requests' included) until deadline (monotonic ns), a signal, or the reader
 * of stdout going away. Returns 1 when stdout is gone, else 0. With
 * until_ready, it also returns once the host's first metadata fetch has
 * finished.
 */
static int wait_until(struct loop *loop, int64_t deadline, const sigset_t *waitmask, const struct host *host,
		      int until_ready)
{
	while (!got_term && !got_hup && !stdout_gone && !(until_ready && host_instance_ready(host))) {
		int r = loop_run_once(loop, deadline, waitmask);

		if (r == 1)
			break;
		if (r < 0 && r != -EINTR) {
			log_err("monitor: waiting: %s", strerror(-r));
			break;
		}
	}
	return stdout_gone;
}

/* Is stdout something whose reader can go away (a pipe or socket)? */
static int stdout_is_pipe(void)
{
	struct stat st;

	return fstat(STDOUT_FILENO, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

/*
 * Signals are delivered only inside ppoll, so a report is never cut short:
 * SIGINT, SIGTERM and SIGHUP are blocked, *waitmask is the mask to wait
 * with (them unblocked), and SIGPIPE is ignored (a write says EPIPE).
 */
static void signals_setup(sigset_t *waitmask)
{
	struct sigaction sa;
	sigset_t block;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, waitmask);
	sigdelset(waitmask, SIGINT);
	sigdelset(waitmask, SIGTERM);
	sigdelset(waitmask, SIGHUP);
}

/*
 * The stream's state, for the loop's callbacks: the monitor in charge (a
 * reload replaces it), the SIGHUP reload's timer, and why the loop is to
 * stop (stop set, rc the exit code).
 */
struct stream {
	const struct opts *o;
	struct monitor *m;
	struct loop *loop;
	struct host *host;
	struct loop_timer reload; /* a SIGHUP's reload is due */
	int64_t last_reload;
	int stop, rc;
};

/* After each report (the monitor's done): stop on a write error, a gone reader, or o->count reports. */
static void on_report(struct monitor *m, int e, void *arg)
{
	struct stream *s = arg;

	if (e && e != -EPIPE) {
		log_err("cannot write to stdout: %s", strerror(-e));
		s->rc = EXIT_SYSTEM;
	}
	if (e || (s->o->count && monitor_seq(m) >= s->o->count)) {
		s->stop = 1;
		monitor_stop(m); /* no other group due in this turn writes another report */
	}
}

/* The reload's timer: load the configuration again; groups that did not change keep their schedule. */
static void on_reload(struct loop_timer *t)
{
	struct stream *s = t->data;
	struct cfg next;

	s->last_reload = clock_mono_ns();
	if (!s->o->config) {
		log_info("monitor: SIGHUP: no config file to reload");
	} else if (load_config(s->o, &next) == 0) {
		s->m = monitor_new(&next, NULL, s->loop, s->host, s->m); /* started as the old one was */
		log_info("monitor: reloaded %s", s->o->config);
	} else {
		log_err("monitor: SIGHUP: keeping the previous configuration");
	}
}

/*
 * The stream: the loop runs every group's, fetch's and the reload's timer
 * until SIGINT or SIGTERM, the reader of stdout going away or o->count
 * reports. A SIGHUP arms the reload's timer: at once for the first, at the
 * end of the root period after the previous reload for those that follow
 * within it (a storm of them must not stop the reports). Replaces *m on a
 * reload. EXIT_OK, or EXIT_SYSTEM when stdout cannot be written.
 */
static int run_stream(const struct opts *o, struct monitor **m, struct loop *loop, struct host *host,
		      const sigset_t *waitmask)
{
	struct stream s = { .o = o, .m = *m, .loop = loop, .host = host, .last_reload = INT64_MIN / 2 };

	monitor_start(s.m, STDOUT_FILENO, on_report, &s);
	while (!got_term && !stdout_gone && !s.stop) {
		int r = loop_run_once(loop, INT64_MAX, waitmask);

		if (r < 0 && r != -EINTR) {
			log_err("monitor: waiting: %s", strerror(-r));
			break;
		}
		if (got_hup) {
			int64_t now = clock_mono_ns(), at = s.last_reload + monitor_period(s.m);

			got_hup = 0;
			if (!loop_timer_active(&s.reload))
				loop_timer_start(loop, &s.reload, at > now ? at : now, on_reload, &s);
		}
	}
	loop_timer_stop(loop, &s.reload);
	*m = s.m;
	return s.rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct cfg cfg;
	struct monitor *m;
	struct host *host;
	struct loop *loop;
	struct http_async *http;
	struct fd_budget fdb; /* the producer's descriptors (fdbudget.h): connections and kept files share it */
	struct loop_watch out_watch = { 0 };
	sigset_t waitmask;
	int rc = EXIT_OK, w;

	/* Before anything opens a descriptor: a closed stdout must not be taken by a pipe and look like a reader gone. */
	if (cli_std_fds("accel-monitor", CLI_STDOUT))
		return EXIT_SYSTEM;
	if (parse_args(argc, argv, &o))
		return EXIT_USAGE;
	log_init("accel-monitor", o.verbose);
	if (load_config(&o, &cfg))
		return EXIT_CONFIG;
	if (o.check) {
		json_t *eff = cfg_effective(&cfg);

		json_dumpf(eff, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
		putchar('\n');
		json_decref(eff);
		cfg_free(&cfg);
		return cli_finish_stdout("accel-monitor");
	}

	signals_setup(&waitmask);

	loop = loop_new();
	/* A pipe's reader going away shows as POLLERR on our end, while we wait. */
	if (stdout_is_pipe())
		loop_watch_start(loop, &out_watch, STDOUT_FILENO, 0, on_stdout_error, loop);
	fd_budget_init_rlimit(&fdb);
	http = http_async_new(loop); /* every request this program makes, on its loop */
	http_async_set_fd_budget(http, &fdb);
	/* The host's roots and options are the configuration's: monitor_new applies them again at each load. */
	host = host_new(&(struct host_opts){ .procfs = cfg.procfs, .sysfs = cfg.sysfs, .ctr = host_cfg_ctr(&cfg.host),
					    .http = http, .fds = &fdb, .instance_refresh_ns = INSTANCE_REFRESH_NS,
					    .instance_mode = cfg.host.instance_mode,
					    .pod_resources_socket = cfg.host.pod_resources_socket,
					    .hpc_job_mapping_dir = cfg.host.hpc_job_mapping_dir },
			loop);
	/* Reports should carry instance_info from the start: wait for it, at most ~1.5 s (off EC2). */
	if (wait_until(loop, clock_mono_ns() + INSTANCE_FIRST_WAIT_NS, &waitmask, host, 1))
		got_term = 1; /* the reader is gone already */
	m = monitor_new(&cfg, NULL, loop, host, NULL); /* takes cfg */
	log_info("monitor: started with %s", o.config ? o.config : "the default configuration");

	if (o.once) {
		int64_t until = clock_mono_ns() + ONCE_WINDOW_NS;

		monitor_fetch_all(m, until, ONCE_WINDOW_NS); /* asynchronous sources answer within the window */
		w = wait_until(loop, until, &waitmask, host, 0);
		if (!w && !got_term) {
			int e = monitor_cycle(m, STDOUT_FILENO, 1);

			if (e && e != -EPIPE) {
				log_err("cannot write to stdout: %s", strerror(-e));
				rc = EXIT_SYSTEM;
			}
		}
		goto out;
	}
	rc = run_stream(&o, &m, loop, host, &waitmask);
out:
	monitor_free(m);
	host_free(host);
	http_async_free(http);
	loop_watch_stop(loop, &out_watch);
	loop_free(loop);
	return rc;
}
