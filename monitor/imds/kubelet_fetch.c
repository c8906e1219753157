/* SPDX-License-Identifier: MIT */
/*
 * accel-imds --kubelet-pods URL [--token-file F] [--ca-file F]: GET
 * URL/pods from the kubelet (HTTPS, the bearer token read from F, the
 * server verified against the CA file F; with no CA file, the system's
 * trust store) and print the compact answer kubelet.h describes on one
 * line. Linked into accel-imds only (it uses libcurl); accel-monitor runs
 * it from kubelet.c. Exit status 0 whenever a line was printed, also when
 * the kubelet was unreachable or answered garbage ("error" says why).
 */
#include "../host/kubelet.h"
#include "../../common/http.h"
#include "../../common/util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KUBELET_TIMEOUT_MS 5000
#define KUBELET_BODY_MAX (64u << 20)  /* /pods of a node at its pod limit is a few MiB */

/* One containerStatuses-style array into containers {"<id without the scheme>": "<name>"}. */
static void statuses(json_t *arr, json_t *containers)
{
	size_t i;
	json_t *st;

	json_array_foreach(arr, i, st) {
		const char *id = json_string_value(json_object_get(st, "containerID"));
		const char *name = json_string_value(json_object_get(st, "name"));
		const char *sep;

		if (!id || !name)
			continue;
		sep = strstr(id, "://"); /* "containerd://<id>", "cri-o://<id>", "docker://<id>" */
		json_object_set_new(containers, sep ? sep + 3 : id, json_string(name));
	}
}

/* The PodList's items reduced to {"<uid>": {"name", "namespace", "containers"}}; NULL when it is no PodList. */
static json_t *reduce(json_t *list)
{
	json_t *items = json_object_get(list, "items"), *pods, *it;
	size_t i;

	if (!json_is_array(items))
		return NULL;
	pods = json_object();
	json_array_foreach(items, i, it) {
		json_t *meta = json_object_get(it, "metadata"), *status = json_object_get(it, "status");
		const char *uid = json_string_value(json_object_get(meta, "uid"));
		const char *name = json_string_value(json_object_get(meta, "name"));
		const char *ns = json_string_value(json_object_get(meta, "namespace"));
		json_t *ctrs;

		if (!uid || !name)
			continue;
		ctrs = json_object();
		statuses(json_object_get(status, "containerStatuses"), ctrs);
		statuses(json_object_get(status, "initContainerStatuses"), ctrs);
		statuses(json_object_get(status, "ephemeralContainerStatuses"), ctrs);
		json_object_set_new(pods, uid, json_pack("{s:s, s:s, s:o}", "name", name, "namespace", ns ? ns : "",
							 "containers", ctrs));
	}
	return pods;
}

/* Fetch and reduce; err says why when NULL is returned. */
static json_t *fetch(const char *base, const char *token_file, const char *ca_file, char *err, size_t errsz)
{
	static const char *const accept[] = { "Accept: application/json" };
	struct http_client c = { 0 };
	struct http_result r;
	char url[2048], e[512];
	struct http_opts o = { .url = url, .headers = accept, .nheaders = 1, .timeout_ms = KUBELET_TIMEOUT_MS,
			       .max_body = KUBELET_BODY_MAX, .direct = 1 /* the kubelet is on this node */,
			       .ca_file = ca_file, .bearer_token_file = token_file,
			       .bearer_what = "--kubelet-token-file" };
	json_t *list = NULL, *pods = NULL;
	json_error_t jerr;

	snprintf(url, sizeof(url), "%s%s", base, base[0] && base[strlen(base) - 1] == '/' ? "pods" : "/pods");
	if (http_client_init(&c, http_curl_linked(), err, errsz))
		goto out;
	if (http_setup(&c, &o, e, sizeof(e))) {
		snprintf(err, errsz, "%s", e);
		goto out;
	}
	http_perform(&c, &r);
	if (r.error[0]) {
		snprintf(err, errsz, "GET %s: %s", url, r.error);
		goto out;
	}
	if (r.status != 200) {
		snprintf(err, errsz, "GET %s: HTTP %ld", url, r.status);
		goto out;
	}
	list = json_loadb(r.body, r.len, 0, &jerr);
	if (!list || !(pods = reduce(list)))
		snprintf(err, errsz, "GET %s: not a PodList%s%s", url, list ? "" : ": ", list ? "" : jerr.text);
out:
	json_decref(list);
	http_client_free(&c);
	return pods;
}

int kubelet_fetch_main(int argc, char **argv)
{
	const char *url = NULL, *token_file = NULL, *ca_file = NULL;
	char err[1024] = "";
	json_t *pods = NULL, *o;
	char *line;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--kubelet-pods") && i + 1 < argc)
			url = argv[++i];
		else if (!strcmp(argv[i], "--token-file") && i + 1 < argc)
			token_file = argv[++i];
		else if (!strcmp(argv[i], "--ca-file") && i + 1 < argc)
			ca_file = argv[++i];
		else {
			fprintf(stderr, "usage: accel-imds --kubelet-pods URL [--token-file FILE] [--ca-file FILE]\n");
			return 2;
		}
	}
	if (!url) {
		fprintf(stderr, "usage: accel-imds --kubelet-pods URL [--token-file FILE] [--ca-file FILE]\n");
		return 2;
	}
	http_curl_linked()->global_init(CURL_GLOBAL_DEFAULT);
	pods = fetch(url, token_file, ca_file, err, sizeof(err));
	http_curl_linked()->global_cleanup();
	o = json_pack("{s:s, s:o}", "error", utf8_sanitize(err), "pods", pods ? pods : json_object());
	line = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!line || printf("%s\n", line) < 0 || fflush(stdout)) {
		free(line);
		return 1;
	}
	free(line);
	return 0;
}
