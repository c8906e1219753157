/* SPDX-License-Identifier: MIT */
/* The kubelet's PodList reduced off the producer's loop; see kubelet_pods.h. */
#include "kubelet_pods.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
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

int kubelet_pods_reduce(const char *body, size_t len, json_t **out, char *err, size_t errsz)
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
	json_decref(list);
	*out = pods;
	return 0;
}
