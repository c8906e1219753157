/* SPDX-License-Identifier: MIT */
/* The pods of a report, each named once: owners' pod UIDs and the pods' labels; see podmeta.h. */
#include "podmeta.h"
#include "kubelet.h"

#include <string.h>

/* pods (identities.pods) by "<namespace>/<name>": {"ns/name": "<uid>"}, a new object (each owner looks once). */
static json_t *uids_by_name(json_t *pods)
{
	json_t *by = json_object(), *p;
	const char *uid;
	char key[512];

	json_object_foreach(pods, uid, p) {
		const char *n = json_string_value(json_object_get(p, "pod"));
		const char *s = json_string_value(json_object_get(p, "namespace"));

		if (n && s && (size_t)snprintf(key, sizeof(key), "%s/%s", s, n) < sizeof(key) && !json_object_get(by, key))
			json_object_set_new(by, key, json_string(uid));
	}
	return by;
}

/* The UID of pod name in namespace ns in by (uids_by_name), or NULL. */
static const char *uid_named(json_t *by, const char *ns, const char *name)
{
	char key[512];

	if ((size_t)snprintf(key, sizeof(key), "%s/%s", ns, name) >= sizeof(key))
		return NULL;
	return json_string_value(json_object_get(by, key));
}

/* The report's identities.pods, made (with the identities) when the report has none. */
static json_t *report_pods(json_t *report)
{
	json_t *ids = json_object_get(report, "identities");

	if (!json_is_object(ids)) {
		ids = json_pack("{s:{}, s:{}, s:{}}", "containers", "pods", "processes");
		json_object_set_new(report, "identities", ids);
	}
	return json_object_get(ids, "pods");
}

/*
 * Owner ow's "pod_uid" (set, replaced, or removed when the pod is not known
 * now); with labels asked for, an entry in identities.pods for a pod that
 * only owners name and whose labels the kubelet has.
 */
static void owner_pod(struct kubelet *k, json_t *report, json_t *by, json_t *ow, int labels, int64_t now)
{
	const char *ns = json_string_value(json_object_get(ow, "namespace"));
	const char *pod = json_string_value(json_object_get(ow, "pod"));
	const char *uid, *had = json_string_value(json_object_get(ow, "pod_uid"));
	json_t *pods = json_object_get(json_object_get(report, "identities"), "pods"), *kp;

	if (!ns || !pod)
		return;
	if (!(uid = uid_named(by, ns, pod)) && k)
		uid = kubelet_pod_uid(k, ns, pod, now);
	if (!uid) {
		json_object_del(ow, "pod_uid");
		return;
	}
	if (!had || strcmp(had, uid))
		json_object_set_new(ow, "pod_uid", json_string(uid));
	if (labels && !json_object_get(pods, uid) && (kp = kubelet_pod(k, uid, now)) &&
	    (json_object_get(kp, "labels") || json_object_get(kp, "labels_dropped")))
		json_object_set_new(report_pods(report), uid, json_pack("{s:s, s:s}", "pod", pod, "namespace", ns));
}

/* Each pod of identities.pods with its labels from the kubelet's list. */
static void pods_labels(struct kubelet *k, json_t *pods, int64_t now)
{
	const char *uid;
	json_t *p, *kp, *v;

	json_object_foreach(pods, uid, p) {
		if (!(kp = kubelet_pod(k, uid, now)))
			continue;
		if ((v = json_object_get(kp, "labels")))
			json_object_set(p, "labels", v);
		if ((v = json_object_get(kp, "labels_dropped")))
			json_object_set(p, "labels_dropped", v);
	}
}

void podmeta_apply(struct kubelet *k, json_t *report, int64_t now)
{
	int labels = k && kubelet_labels_max(k) > 0;
	json_t *devs = json_object_get(json_object_get(report, "allocations"), "devices"), *by, *bytype, *owners, *ow;
	const char *type, *key;
	size_t i;

	if (json_object_size(devs)) {
		by = uids_by_name(json_object_get(json_object_get(report, "identities"), "pods"));
		json_object_foreach(devs, type, bytype)
			json_object_foreach(bytype, key, owners)
				json_array_foreach(owners, i, ow)
					owner_pod(k, report, by, ow, labels, now);
		json_decref(by);
	}
	if (labels)
		pods_labels(k, json_object_get(json_object_get(report, "identities"), "pods"), now);
}
