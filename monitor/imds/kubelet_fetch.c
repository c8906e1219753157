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
#include "../../common/util.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KUBELET_TIMEOUT_MS 5000L
#define KUBELET_BODY_MAX (64u << 20)  /* /pods of a node at its pod limit is a few MiB */
#define TOKEN_MAX 16384               /* service-account tokens are about 1 KiB */

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	return buf_add(ud, p, size * n) ? 0 : size * n; /* 0 aborts an oversized body */
}

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
	CURL *curl = curl_easy_init();
	struct curl_slist *hdr = NULL;
	struct buf body;
	char cerr[CURL_ERROR_SIZE] = "", url[2048], *token = NULL;
	json_t *list = NULL, *pods = NULL;
	json_error_t jerr;
	long code = 0;
	CURLcode rc;

	buf_init(&body, KUBELET_BODY_MAX);
	if (!curl) {
		snprintf(err, errsz, "cannot initialise libcurl");
		goto out;
	}
	snprintf(url, sizeof(url), "%s%s", base, base[0] && base[strlen(base) - 1] == '/' ? "pods" : "/pods");
	if (token_file) {
		char *hline;
		ssize_t n;

		token = xmalloc(TOKEN_MAX);
		n = read_regular_file(token_file, token, TOKEN_MAX);
		if (n < 0) {
			snprintf(err, errsz, "token file %s: %s", token_file, strerror((int)-n));
			goto out;
		}
		token[strcspn(token, "\r\n")] = '\0';
		hline = xasprintf("Authorization: Bearer %s", token);
		hdr = curl_slist_append(hdr, hline);
		free(hline);
	}
	hdr = curl_slist_append(hdr, "Accept: application/json");
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, KUBELET_TIMEOUT_MS);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, KUBELET_TIMEOUT_MS);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_NOPROXY, "*"); /* the kubelet is on this node */
	if (ca_file)
		curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file);
	rc = curl_easy_perform(curl);
	if (rc != CURLE_OK) {
		snprintf(err, errsz, "GET %s: %s", url, cerr[0] ? cerr : curl_easy_strerror(rc));
		goto out;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
	if (code != 200) {
		snprintf(err, errsz, "GET %s: HTTP %ld", url, code);
		goto out;
	}
	list = json_loadb(body.data ? body.data : "", body.len, 0, &jerr);
	if (!list || !(pods = reduce(list)))
		snprintf(err, errsz, "GET %s: not a PodList%s%s", url, list ? "" : ": ", list ? "" : jerr.text);
out:
	json_decref(list);
	curl_slist_free_all(hdr);
	if (curl)
		curl_easy_cleanup(curl);
	buf_free(&body);
	if (token) {
		memset(token, 0, TOKEN_MAX);
		free(token);
	}
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
	curl_global_init(CURL_GLOBAL_DEFAULT);
	pods = fetch(url, token_file, ca_file, err, sizeof(err));
	curl_global_cleanup();
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
