/* SPDX-License-Identifier: MIT */
/* The kubelet's pod list on the producer's loop; see kubelet.h (its reduction: http/kubelet_pods.c). */
#include "kubelet.h"
#include "../http/http_async.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KUBELET_TIMEOUT_MS 5000
#define KUBELET_BODY_MAX ((size_t)32 << 20)  /* /pods of a node at its pod limit (110, at most 250) is a few MiB */
#define KUBELET_REPLY_MAX ((size_t)16 << 20) /* the reduced answer: far less */

struct kubelet {
	struct http_async *http; /* borrowed */
	unsigned conn;
	struct http_call call;   /* the fetch */
	char *url, *token_file, *ca_file;
	int64_t refresh_ns;
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
	k->last_start = INT64_MIN / 2;
	http_call_init(&k->call, KUBELET_REPLY_MAX);
	return k;
}

/* The fetch is over: take its answer, say what changed once. */
static void fetch_done(struct http_call *c, void *data)
{
	struct kubelet *k = data;
	char err[sizeof(k->error)] = "";
	json_t *pods = NULL;

	if (c->error[0])
		snprintf(err, sizeof(err), "GET %s: %s", k->url, c->error);
	else if (c->status != 200)
		snprintf(err, sizeof(err), "GET %s: HTTP %ld", k->url, c->status);
	else if (!(pods = json_loadb(c->body.data ? c->body.data : "", c->body.len, 0, NULL)) || !json_is_object(pods))
		snprintf(err, sizeof(err), "GET %s: the reduced answer is no pod list", k->url);
	if (!*err) {
		json_decref(k->pods);
		k->pods = json_incref(pods);
	}
	json_decref(pods);
	/* Reported once: a failure that repeats the last one says nothing more. */
	if (*err && !http_error_same(err, k->error))
		log_warn("kubelet: %s; pod and container names fall back to ids (retried at most every %lld s)", err,
			 (long long)(k->refresh_ns / NS_PER_S));
	else if (!*err && *k->error)
		log_info("kubelet: names are read again (%zu pods)", json_object_size(k->pods));
	snprintf(k->error, sizeof(k->error), "%s", err);
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
	http_call_start(k->http, &k->call, k->conn, &o, "kubelet_pods", fetch_done, k);
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
	if (!http_call_running(&k->call) && now - k->last_start >= k->refresh_ns)
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
	http_call_free(&k->call);
	http_async_conn_close(k->http, k->conn);
	json_decref(k->pods);
	free(k->url);
	free(k->token_file);
	free(k->ca_file);
	free(k);
}
