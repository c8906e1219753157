/* SPDX-License-Identifier: MIT */
/* The kubelet's PodList reduced off the producer's loop; see kubelet_pods.h. */
#include "kubelet_pods.h"
#include "../../common/util.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A label that fits the bounds: a key of 1 to KUBELET_LABEL_KEY_MAX bytes, a string value of at most ..._VALUE_MAX. */
static int label_fits(const char *k, json_t *v)
{
	size_t n = json_string_length(v);

	return *k && strlen(k) <= KUBELET_LABEL_KEY_MAX && json_is_string(v) && n <= KUBELET_LABEL_VALUE_MAX &&
	       strlen(json_string_value(v)) == n; /* no NUL inside */
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * A pod's metadata.labels into pod's "labels" and "labels_dropped", bounded
 * as kubelet_pods.h says: the first max in key order that fit.
 */
static void pod_labels(json_t *labels, int max, json_t *pod)
{
	size_t n = json_object_size(labels), i = 0, kept = 0;
	const char **keys;
	const char *k;
	json_t *v, *out;

	if (!json_is_object(labels) || !n)
		return;
	keys = xmalloc(n * sizeof(*keys));
	json_object_foreach(labels, k, v)
		keys[i++] = k;
	qsort(keys, n, sizeof(*keys), cmp_str);
	out = json_object();
	for (i = 0; i < n; i++) {
		v = json_object_get(labels, keys[i]);
		if (kept < (size_t)max && label_fits(keys[i], v)) {
			json_object_set(out, keys[i], v);
			kept++;
		}
	}
	free(keys);
	if (kept)
		json_object_set_new(pod, "labels", out);
	else
		json_decref(out);
	if (n > kept)
		json_object_set_new(pod, "labels_dropped", json_integer((json_int_t)(n - kept)));
}

int kubelet_pods_reduce(const char *body, size_t len, int labels_max, json_t **out, char *err, size_t errsz)
{
	json_error_t jerr;
	json_t *list = json_loadb(body, len, 0, &jerr), *items = json_object_get(list, "items"), *pods, *it;
	size_t i;

	*out = NULL;
	if (!json_is_array(items)) {
		snprintf(err, errsz, "not a PodList%s%s", list ? "" : ": ", list ? "" : jerr.text);
		json_decref(list);
		return -EINVAL;
	}
	pods = json_object();
	json_array_foreach(items, i, it) {
		json_t *meta = json_object_get(it, "metadata"), *status = json_object_get(it, "status");
		const char *uid = json_string_value(json_object_get(meta, "uid"));
		const char *name = json_string_value(json_object_get(meta, "name"));
		const char *ns = json_string_value(json_object_get(meta, "namespace"));
		json_t *ctrs, *pod;

		if (!uid || !name)
			continue;
		ctrs = json_object();
		statuses(json_object_get(status, "containerStatuses"), ctrs);
		statuses(json_object_get(status, "initContainerStatuses"), ctrs);
		statuses(json_object_get(status, "ephemeralContainerStatuses"), ctrs);
		pod = json_pack("{s:s, s:s, s:o}", "name", name, "namespace", ns ? ns : "", "containers", ctrs);
		if (labels_max > 0)
			pod_labels(json_object_get(meta, "labels"), labels_max, pod);
		json_object_set_new(pods, uid, pod);
	}
	json_decref(list);
	*out = pods;
	return 0;
}
