/* SPDX-License-Identifier: MIT */
/* Running accel-imds and keeping its answer; see instance.h. */
#include "instance.h"
#include "../core/loop.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FETCH_DEADLINE_NS (12 * NS_PER_S) /* accel-imds makes at most ~10 requests of 1 s */
#define FETCH_OUTPUT_MAX 16384

extern char **environ;

/* The EC2 fields of instance_info, in neuron-monitor's order. */
static const char *const ec2_fields[] = {
	"instance_name", "instance_id", "instance_type", "instance_availability_zone",
	"instance_availability_zone_id", "instance_region", "ami_id", "subnet_id",
};

struct instance {
	struct loop *loop;    /* borrowed */
	struct loop_watch watch; /* the running fetch's stdout */
	struct loop_timer timer; /* its deadline while it runs, else the next fetch */
	char *helper;
	int64_t refresh_ns;
	json_t *info;         /* the current object, hostname and node_name included */
	int have_good;        /* a fetch has succeeded: a failure keeps its values */
	int first_done;
	pid_t child;          /* running fetch, or 0 */
	int fd;               /* its stdout, or -1 */
	struct buf out;       /* what it wrote so far */
	char hostname[256], node_name[256];
	char pod_name[256], pod_namespace[256]; /* the monitor's own pod (downward API), "" outside Kubernetes */
};

/* Replace the current object with the EC2 fields of o (borrowed) and err. */
static void publish(struct instance *in, json_t *o, const char *err)
{
	json_t *n = json_object();

	for (size_t i = 0; i < ARRAY_SIZE(ec2_fields); i++) {
		json_t *v = o ? json_object_get(o, ec2_fields[i]) : NULL;

		if (!json_is_string(v) && in->info)
			v = json_object_get(in->info, ec2_fields[i]); /* keep what we had */
		json_object_set_new(n, ec2_fields[i], json_string(json_is_string(v) ? json_string_value(v) : ""));
	}
	json_object_set_new(n, "error", json_string(err));
	json_object_set_new(n, "hostname", json_string(in->hostname));
	json_object_set_new(n, "node_name", json_string(in->node_name));
	/* The monitor's own pod, when the downward API gives it: only then (other reports stay as they were). */
	if (*in->pod_name)
		json_object_set_new(n, "pod_name", json_string(in->pod_name));
	if (*in->pod_namespace)
		json_object_set_new(n, "pod_namespace", json_string(in->pod_namespace));
	json_decref(in->info);
	in->info = n;
}

static void on_timer(struct loop_timer *t);
static void on_readable(struct loop_watch *w, short revents);

static void fetch_start(struct instance *in)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, dflt;
	char *argv[] = { in->helper, NULL };
	int p[2], rc;

	/* Until a fetch runs, the timer is the next fetch; a running one replaces it with its deadline. */
	loop_timer_start(in->loop, &in->timer, clock_mono_ns() + in->refresh_ns, on_timer, in);
	if (pipe2(p, O_CLOEXEC)) {
		log_warn("instance: cannot create a pipe: %s", strerror(errno));
		return;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
	posix_spawnattr_init(&attr);
	/* The producer blocks its signals outside ppoll; the helper must not inherit that. */
	sigemptyset(&none);
	sigemptyset(&dflt);
	sigaddset(&dflt, SIGPIPE);
	sigaddset(&dflt, SIGTERM);
	sigaddset(&dflt, SIGINT);
	sigaddset(&dflt, SIGHUP);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &dflt);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawn(&in->child, in->helper, &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(p[1]);
	if (rc) {
		char err[512];

		close(p[0]);
		in->child = 0;
		snprintf(err, sizeof(err), "cannot run %s: %s", in->helper, strerror(rc));
		publish(in, NULL, err);
		in->first_done = 1;
		return;
	}
	in->fd = p[0];
	fcntl(in->fd, F_SETFL, O_NONBLOCK); /* reading never blocks the loop */
	buf_reset(&in->out);
	loop_watch_start(in->loop, &in->watch, in->fd, POLLIN, on_readable, in);
	loop_timer_start(in->loop, &in->timer, clock_mono_ns() + FETCH_DEADLINE_NS, on_timer, in);
}

/* The fetch is over (EOF, or killed with why set): reap it and take its answer. */
static void fetch_done(struct instance *in, const char *why)
{
	json_t *o = NULL;
	char err[512] = "";
	int status = 0;

	if (why)
		kill(in->child, SIGKILL);
	while (waitpid(in->child, &status, 0) < 0 && errno == EINTR)
		;
	loop_watch_stop(in->loop, &in->watch);
	loop_timer_start(in->loop, &in->timer, clock_mono_ns() + in->refresh_ns, on_timer, in);
	close(in->fd);
	in->fd = -1;
	in->child = 0;
	if (why) {
		snprintf(err, sizeof(err), "%s", why);
	} else if (!in->out.len || !(o = json_loadb(in->out.data, in->out.len, 0, NULL)) || !json_is_object(o)) {
		snprintf(err, sizeof(err), "%s gave no answer (exit status %d)", in->helper,
			 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	} else {
		const char *e = json_string_value(json_object_get(o, "error"));

		snprintf(err, sizeof(err), "%s", e ? e : "");
	}
	if (!*err) {
		in->have_good = 1;
		publish(in, o, "");
	} else if (in->have_good) {
		/* Keep the last good values and say why they are old. */
		publish(in, NULL, err);
	} else {
		publish(in, o, err);
	}
	if (*err)
		log_debug("instance: %s", err);
	json_decref(o);
	in->first_done = 1;
}

static void fetch_read(struct instance *in)
{
	char chunk[4096];
	ssize_t n;

	for (;;) {
		n = read(in->fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0)
			break;
		if (buf_add(&in->out, chunk, (size_t)n)) {
			fetch_done(in, "instance metadata answer too large");
			return;
		}
	}
	fetch_done(in, NULL);
}

/* The fetch's stdout is readable (or hung up): take what it wrote. */
static void on_readable(struct loop_watch *w, short revents)
{
	(void)revents;
	fetch_read(w->data);
}

/* The running fetch's deadline, or the time of the next fetch. */
static void on_timer(struct loop_timer *t)
{
	struct instance *in = t->data;

	if (in->child)
		fetch_done(in, "instance metadata fetch timed out");
	else
		fetch_start(in);
}

struct instance *instance_new(struct loop *loop, const char *helper, int64_t refresh_ns)
{
	struct instance *in = xcalloc(1, sizeof(*in));
	const char *node = getenv("KUBE_NODE_NAME"), *pod = getenv("POD_NAME"), *ns = getenv("POD_NAMESPACE");

	in->loop = loop;
	in->helper = xstrdup(helper);
	in->refresh_ns = refresh_ns;
	in->fd = -1;
	buf_init(&in->out, FETCH_OUTPUT_MAX);
	if (gethostname(in->hostname, sizeof(in->hostname) - 1))
		in->hostname[0] = '\0';
	if (!node || !*node)
		node = getenv("NODE_NAME"); /* the downward API's usual name (fieldRef spec.nodeName) */
	snprintf(in->node_name, sizeof(in->node_name), "%s", node ? node : "");
	snprintf(in->pod_name, sizeof(in->pod_name), "%s", pod ? pod : "");
	snprintf(in->pod_namespace, sizeof(in->pod_namespace), "%s", ns ? ns : "");
	utf8_sanitize(in->hostname);
	utf8_sanitize(in->node_name);
	utf8_sanitize(in->pod_name);
	utf8_sanitize(in->pod_namespace);
	publish(in, NULL, "instance metadata not fetched yet");
	fetch_start(in);
	return in;
}

int instance_ready(const struct instance *in)
{
	return in->first_done;
}

json_t *instance_json(struct instance *in)
{
	return json_incref(in->info);
}

void instance_free(struct instance *in)
{
	if (!in)
		return;
	if (in->child)
		fetch_done(in, "stopped");
	loop_timer_stop(in->loop, &in->timer);
	json_decref(in->info);
	buf_free(&in->out);
	free(in->helper);
	free(in);
}
