/* SPDX-License-Identifier: MIT */
/* Running accel-imds --kubelet-pods and keeping its answer; see kubelet.h. */
#include "kubelet.h"
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

#define FETCH_DEADLINE_NS (10 * NS_PER_S)  /* the helper's own request times out after 5 s */
#define FETCH_OUTPUT_MAX (16u << 20)       /* the compact answer for a node's pods: far less */

extern char **environ;

struct kubelet {
	struct loop *loop;       /* borrowed */
	struct loop_watch watch; /* the running fetch's stdout */
	struct loop_timer timer; /* its deadline */
	char *helper, *url, *token_file, *ca_file;
	int64_t refresh_ns;
	int64_t last_start;      /* CLOCK_MONOTONIC ns of the last fetch's start */
	unsigned long fetches;
	json_t *pods;            /* the last good answer's "pods" (owned), or NULL */
	pid_t child;             /* the running fetch, or 0 */
	int fd;
	struct buf out;
	char error[512];         /* the last fetch's error, "" when it succeeded */
};

static void on_readable(struct loop_watch *w, short revents);
static void on_timer(struct loop_timer *t);

struct kubelet *kubelet_new(struct loop *loop, const char *helper, const struct container_opts *o)
{
	struct kubelet *k = xcalloc(1, sizeof(*k));

	k->loop = loop;
	k->helper = xstrdup(helper);
	k->url = xstrdup(o->kubelet_url);
	k->token_file = o->kubelet_token_file ? xstrdup(o->kubelet_token_file) : NULL;
	k->ca_file = o->kubelet_ca_file ? xstrdup(o->kubelet_ca_file) : NULL;
	k->refresh_ns = o->kubelet_refresh_ns;
	k->last_start = INT64_MIN / 2;
	k->fd = -1;
	buf_init(&k->out, FETCH_OUTPUT_MAX);
	return k;
}

/*
 * The same error as before, numbers aside: curl's messages carry elapsed
 * times ("Failed to connect to 127.0.0.1 port 10250 after 3 ms: ..."), which
 * must not make a repeated failure look new.
 */
static int same_error(const char *a, const char *b)
{
	for (;;) {
		while (*a >= '0' && *a <= '9')
			a++;
		while (*b >= '0' && *b <= '9')
			b++;
		if (*a != *b)
			return 0;
		if (!*a)
			return 1;
		a++;
		b++;
	}
}

/* The fetch is over (EOF, or stopped with why set): reap it, take its answer, say what changed once. */
static void fetch_done(struct kubelet *k, const char *why)
{
	json_t *o = NULL, *pods;
	char err[sizeof(k->error)] = "";
	int status = 0;

	if (why)
		kill(k->child, SIGKILL);
	while (waitpid(k->child, &status, 0) < 0 && errno == EINTR)
		;
	loop_watch_stop(k->loop, &k->watch);
	loop_timer_stop(k->loop, &k->timer);
	close(k->fd);
	k->fd = -1;
	k->child = 0;
	if (why) {
		snprintf(err, sizeof(err), "%s", why);
	} else if (!k->out.len || !(o = json_loadb(k->out.data, k->out.len, 0, NULL)) || !json_is_object(o)) {
		snprintf(err, sizeof(err), "%s gave no answer (exit status %d)", k->helper,
			 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	} else {
		const char *e = json_string_value(json_object_get(o, "error"));

		snprintf(err, sizeof(err), "%s", e ? e : "");
		pods = json_object_get(o, "pods");
		if (!*err && !json_is_object(pods))
			snprintf(err, sizeof(err), "%s: no \"pods\" in the answer", k->helper);
		if (!*err) {
			json_decref(k->pods);
			k->pods = json_incref(pods);
		}
	}
	json_decref(o);
	/* Reported once: a failure that repeats the last one says nothing more. */
	if (*err && !same_error(err, k->error))
		log_warn("kubelet: %s; pod and container names fall back to ids (retried at most every %lld s)", err,
			 (long long)(k->refresh_ns / NS_PER_S));
	else if (!*err && *k->error)
		log_info("kubelet: names are read again (%zu pods)", json_object_size(k->pods));
	snprintf(k->error, sizeof(k->error), "%s", err);
}

static void fetch_start(struct kubelet *k, int64_t now)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, dflt;
	char *argv[9];
	int p[2], rc, n = 0;

	k->last_start = now;
	k->fetches++;
	argv[n++] = k->helper;
	argv[n++] = "--kubelet-pods";
	argv[n++] = k->url;
	if (k->token_file) {
		argv[n++] = "--token-file";
		argv[n++] = k->token_file;
	}
	if (k->ca_file) {
		argv[n++] = "--ca-file";
		argv[n++] = k->ca_file;
	}
	argv[n] = NULL;
	if (pipe2(p, O_CLOEXEC)) {
		log_warn("kubelet: cannot create a pipe: %s", strerror(errno));
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
	rc = posix_spawn(&k->child, k->helper, &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(p[1]);
	if (rc) {
		char err[sizeof(k->error)];

		close(p[0]);
		k->child = 0;
		snprintf(err, sizeof(err), "cannot run %s: %s", k->helper, strerror(rc));
		if (!same_error(err, k->error))
			log_warn("kubelet: %s; pod and container names fall back to ids", err);
		snprintf(k->error, sizeof(k->error), "%s", err);
		return;
	}
	k->fd = p[0];
	fcntl(k->fd, F_SETFL, O_NONBLOCK); /* reading never blocks the loop */
	buf_reset(&k->out);
	loop_watch_start(k->loop, &k->watch, k->fd, POLLIN, on_readable, k);
	loop_timer_start(k->loop, &k->timer, clock_mono_ns() + FETCH_DEADLINE_NS, on_timer, k);
}

static void on_readable(struct loop_watch *w, short revents)
{
	struct kubelet *k = w->data;
	char chunk[16384];
	ssize_t n;

	(void)revents;
	for (;;) {
		n = read(k->fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0)
			break;
		if (buf_add(&k->out, chunk, (size_t)n)) {
			fetch_done(k, "the kubelet's pod list is too large");
			return;
		}
	}
	fetch_done(k, NULL);
}

static void on_timer(struct loop_timer *t)
{
	struct kubelet *k = t->data;

	if (k->child)
		fetch_done(k, "no answer from the kubelet within 10 s");
}

void kubelet_names(struct kubelet *k, const char *pod_uid, const char *ctr_id, int64_t now,
		   struct container_names *out)
{
	json_t *pod = k->pods ? json_object_get(k->pods, pod_uid) : NULL;
	const char *v;

	if (json_is_object(pod)) {
		if (!out->pod[0] && (v = json_string_value(json_object_get(pod, "name"))))
			snprintf(out->pod, sizeof(out->pod), "%s", v);
		if (!out->ns[0] && (v = json_string_value(json_object_get(pod, "namespace"))))
			snprintf(out->ns, sizeof(out->ns), "%s", v);
		if (*ctr_id && !out->name[0] &&
		    (v = json_string_value(json_object_get(json_object_get(pod, "containers"), ctr_id))))
			snprintf(out->name, sizeof(out->name), "%s", v);
		utf8_sanitize(out->pod);
		utf8_sanitize(out->ns);
		utf8_sanitize(out->name);
		if (out->pod[0] && (!*ctr_id || out->name[0]))
			return;
	}
	/* A miss: the pod (or the container) is newer than the answer, or no answer yet. */
	if (!k->child && now - k->last_start >= k->refresh_ns)
		fetch_start(k, now);
}

const char *kubelet_error(const struct kubelet *k)
{
	return k->error;
}

unsigned long kubelet_fetches(const struct kubelet *k)
{
	return k->fetches;
}

void kubelet_free(struct kubelet *k)
{
	if (!k)
		return;
	if (k->child) {
		snprintf(k->error, sizeof(k->error), "stopped"); /* nothing to say on the way out */
		fetch_done(k, "stopped");
	}
	json_decref(k->pods);
	buf_free(&k->out);
	free(k->helper);
	free(k->url);
	free(k->token_file);
	free(k->ca_file);
	free(k);
}
