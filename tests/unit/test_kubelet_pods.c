/* SPDX-License-Identifier: MIT */
/*
 * The kubelet's PodList reduced (monitor/host/kubelet_pods.c): names and
 * containers as before, and with labels asked for each pod's labels,
 * bounded: the first N in key order, a key or value past Kubernetes' own
 * lengths and a value that is not a string dropped, every dropped label
 * counted; none at all (no "labels" key) when not asked for.
 */
#include "../../monitor/host/kubelet_pods.h"
#include "tap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* reduced's pod uid, as compact JSON ("" when it has none). */
static char *pod_text(json_t *reduced, const char *uid)
{
	json_t *p = json_object_get(reduced, uid);

	return p ? json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS) : strdup("");
}

static json_t *reduce(const char *body, int max)
{
	char err[256] = "";
	json_t *out = NULL;

	if (kubelet_pods_reduce(body, strlen(body), max, &out, err, sizeof(err)))
		printf("# not reduced: %s\n", err);
	return out;
}

int main(void)
{
	char key[400], val[80], *body, *t;
	json_t *r;
	char err[256];

	memset(key, 'k', sizeof(key));
	memcpy(key + 300, "/x", 2);
	key[KUBELET_LABEL_KEY_MAX + 1] = 0; /* one byte too long */
	memset(val, 'v', sizeof(val));
	val[KUBELET_LABEL_VALUE_MAX + 1] = 0;
	body = NULL;
	if (asprintf(&body,
		     "{\"kind\":\"PodList\",\"items\":["
		     "{\"metadata\":{\"name\":\"web\",\"namespace\":\"prod\",\"uid\":\"u1\",\"labels\":{"
		     "\"zeta\":\"z\",\"app.kubernetes.io/name\":\"web\",\"tier\":\"front\",\"%s\":\"long key\","
		     "\"long-value\":\"%s\",\"number\":7,\"\":\"empty key\"}},"
		     "\"status\":{\"containerStatuses\":[{\"name\":\"app\",\"containerID\":\"containerd://c1\"}]}},"
		     "{\"metadata\":{\"name\":\"bare\",\"namespace\":\"prod\",\"uid\":\"u2\"}}]}",
		     key, val) < 0)
		return 2;

	r = reduce(body, 2);
	t = pod_text(r, "u1");
	is_str(t, "{\"containers\":{\"c1\":\"app\"},\"labels\":{\"app.kubernetes.io/name\":\"web\",\"tier\":\"front\"},"
		  "\"labels_dropped\":5,\"name\":\"web\",\"namespace\":\"prod\"}",
	       "2 labels: the first two in key order that fit; the other 5 counted as dropped");
	free(t);
	t = pod_text(r, "u2");
	is_str(t, "{\"containers\":{},\"name\":\"bare\",\"namespace\":\"prod\"}", "a pod with no labels: no label keys");
	free(t);
	json_decref(r);

	r = reduce(body, 64);
	t = pod_text(r, "u1");
	is_str(t, "{\"containers\":{\"c1\":\"app\"},\"labels\":{\"app.kubernetes.io/name\":\"web\",\"tier\":\"front\","
		  "\"zeta\":\"z\"},\"labels_dropped\":4,\"name\":\"web\",\"namespace\":\"prod\"}",
	       "64: every label that fits; a key over 317 bytes, a value over 63, a number and an empty key dropped");
	free(t);
	json_decref(r);

	key[KUBELET_LABEL_KEY_MAX] = 0; /* the longest key kept, and the longest value */
	val[KUBELET_LABEL_VALUE_MAX] = 0;
	free(body);
	if (asprintf(&body, "{\"items\":[{\"metadata\":{\"name\":\"p\",\"uid\":\"u3\",\"labels\":{\"%s\":\"%s\"}}}]}",
		     key, val) < 0)
		return 2;
	r = reduce(body, 1);
	ok(json_object_size(json_object_get(json_object_get(r, "u3"), "labels")) == 1 &&
	   !json_object_get(json_object_get(r, "u3"), "labels_dropped"),
	   "a key of exactly 317 bytes and a value of exactly 63 are kept");
	json_decref(r);

	r = reduce(body, 0);
	t = pod_text(r, "u3");
	is_str(t, "{\"containers\":{},\"name\":\"p\",\"namespace\":\"\"}", "0 (the default): no labels, none counted");
	free(t);
	json_decref(r);
	free(body);

	r = (json_t *)1;
	is_int(kubelet_pods_reduce("{\"items\": 3}", 12, 8, &r, err, sizeof(err)), -EINVAL, "not a PodList: -EINVAL");
	ok(!r, "... and no object");
	is_str(err, "not a PodList", "... saying so");
	return done_testing();
}
