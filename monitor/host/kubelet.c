/* SPDX-License-Identifier: MIT */
/*
 * The kubelet's pod list on the producer's loop; see kubelet.h. The answer's
 * body is taken from the call and reduced (kubelet_pods.c) as the loop's
 * work, off the loop; the reduced object comes back to the loop whole.
 */
#include "kubelet.h"
#include "kubelet_pods.h"
#include "../core/loop.h"
#include "../http/http_async.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KUBELET_TIMEOUT_MS 5000
#define KUBELET_BODY_MAX ((size_t)32 << 20)  /* /pods of a node at its pod limit (110, at most 250) is a few MiB */

struct kubelet {
	struct http_async *http; /* borrowed */
	unsigned conn;
	struct http_call call;   /* the fetch */
	struct loop_work work;   /* its answer's reduction, while that runs */
	struct buf body;         /* the answer being reduced (the work's) */
	json_t *reduced;         /* the work's result, or NULL with red_err */
	char red_err[512];
	char *url, *token_file, *ca_file;
	int64_t refresh_ns;
	int labels_max;          /* --kubelet-pod-labels: the most labels kept per pod; 0: none */
	int64_t last_start;      /* CLOCK_MONOTONIC ns of the last fetch's start */
	unsigned long fetches;
	json_t *pods;            /* the last good answer (owned), or NULL */
	char error[512];         /* the last fetch's error, "" when it succeeded */
};

struct kubelet *kubelet_new(struct http_async *http, const struct container_opts *o)
{
	struct kubelet *k = xcalloc(1, sizeof(*k));
	const char *base = o->kubelet_url;

	k->http = http;
	k->conn = http_async_conn(http);
	k->url = xasprintf("%s%s", base, base[0] && base[strlen(base) - 1] == '/' ? "pods" : "/pods");
	k->token_file = o->kubelet_token_file ? xstrdup(o->kubelet_token_file) : NULL;
	k->ca_file = o->kubelet_ca_file ? xstrdup(o->kubelet_ca_file) : NULL;
	k->refresh_ns = o->kubelet_refresh_ns;
	k->labels_max = o->kubelet_pod_labels;
	k->last_start = INT64_MIN / 2;
	http_call_init(&k->call, KUBELET_BODY_MAX);
	return k;
}

/* A fetch (and its reduction) is over: keep pods (a reference taken) unless err, say what changed once. */
static void fetch_end(struct kubelet *k, json_t *pods, const char *err)
{
	if (!*err) {
		json_decref(k->pods);
		k->pods = pods;
	}
	/* Reported once: a failure that repeats the last one says nothing more. */
	if (*err && !http_error_same(err, k->error))
		log_warn("kubelet: %s; pod and container names fall back to ids (retried at most every %lld s)", err,
			 (long long)(k->refresh_ns / NS_PER_S));
	else if (!*err && *k->error)
		log_info("kubelet: names are read again (%zu pods)", json_object_size(k->pods));
	snprintf(k->error, sizeof(k->error), "%s", err);
}

/* On a loop worker: the PodList reduced; the body freed here, not on the loop (tens of megabytes). */
static void reduce_work(struct loop_work *w)
{
	struct kubelet *k = w->data;
	size_t len = k->body.len;

	k->reduced = NULL;
	kubelet_pods_reduce(k->body.data ? k->body.data : "", len, k->labels_max, &k->reduced, k->red_err,
			    sizeof(k->red_err));
	buf_free(&k->body);
	if (len > ((size_t)1 << 20))
		malloc_trim(0); /* the parse's many small blocks and the body, back to the system */
}

/* Back on the loop: the reduction's result. */
static void reduce_after(struct loop_work *w)
{
	struct kubelet *k = w->data;
	char err[sizeof(k->error)] = "";

	if (!k->reduced)
		snprintf(err, sizeof(err), "GET %s: %s", k->url, k->red_err);
	fetch_end(k, k->reduced, err);
	k->reduced = NULL;
}

/* The fetch is over: its answer goes to be reduced off the loop, or its error is told. */
static void fetch_done(struct http_call *c, void *data)
{
	struct kubelet *k = data;
	char err[sizeof(k->error)] = "";
	int rc;

	if (c->error[0]) {
		snprintf(err, sizeof(err), "GET %s: %s", k->url, c->error);
	} else if (c->status != 200) {
		snprintf(err, sizeof(err), "GET %s: HTTP %ld", k->url, c->status);
	} else {
		http_call_take_body(c, &k->body);
		if (!(rc = loop_work_post(http_async_loop(k->http), &k->work, reduce_work, reduce_after, k)))
			return;
		buf_free(&k->body);
		snprintf(err, sizeof(err), "GET %s: cannot reduce the answer off the loop: %s", k->url, strerror(-rc));
	}
	fetch_end(k, NULL, err);
}

static void fetch_start(struct kubelet *k, int64_t now)
{
	static const char *const accept[] = { "Accept: application/json" };
	struct http_opts o = { .url = k->url, .headers = accept, .nheaders = 1, .timeout_ms = KUBELET_TIMEOUT_MS,
			       .max_body = KUBELET_BODY_MAX, .direct = 1 /* the kubelet is on this node */,
			       .ca_file = k->ca_file, .bearer_token_file = k->token_file,
			       .bearer_what = "--kubelet-token-file" };

	k->last_start = now;
	k->fetches++;
	http_call_start(k->http, &k->call, k->conn, &o, fetch_done, k);
}

/* Start a fetch when none runs and the last one started a refresh period before now. */
static void fetch_due(struct kubelet *k, int64_t now)
{
	if (!http_call_running(&k->call) && !loop_work_active(&k->work) && now - k->last_start >= k->refresh_ns)
		fetch_start(k, now);
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
	fetch_due(k, now);
}

json_t *kubelet_pod(struct kubelet *k, const char *pod_uid, int64_t now)
{
	json_t *pod = k->pods ? json_object_get(k->pods, pod_uid) : NULL;

	/* A miss, or labels asked for: those of a running pod change, so the list is read again each period. */
	if (!pod || k->labels_max > 0)
		fetch_due(k, now);
	return json_is_object(pod) ? pod : NULL;
}

const char *kubelet_pod_uid(struct kubelet *k, const char *ns, const char *name, int64_t now)
{
	const char *uid;
	json_t *pod;

	json_object_foreach(k->pods, uid, pod) {
		const char *n = json_string_value(json_object_get(pod, "name"));
		const char *s = json_string_value(json_object_get(pod, "namespace"));

		if (n && s && !strcmp(n, name) && !strcmp(s, ns))
			return uid;
	}
	fetch_due(k, now);
	return NULL;
}

int kubelet_labels_max(const struct kubelet *k)
{
	return k->labels_max;
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
	http_call_free(&k->call);
	loop_work_cancel(http_async_loop(k->http), &k->work); /* waits for a reduction that runs */
	buf_free(&k->body);
	json_decref(k->reduced);
	http_async_conn_close(k->http, k->conn);
	json_decref(k->pods);
	free(k->url);
	free(k->token_file);
	free(k->ca_file);
	free(k);
}
