/* SPDX-License-Identifier: MIT */
/* The pods of a report, each named once: owners' pod UIDs and the pods' labels; see podmeta.h. */
#include "podmeta.h"
#include "kubelet.h"
#include "owners.h"
#include "../../common/hindex.h"
#include "../../common/jset.h"
#include "../../common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pod_seen {
	char uid[48], ns[64], pod[256];
};

struct podmeta {
	struct pod_seen *p; /* the pods entered for this report, in order */
	size_t n, cap;
	struct hindex by_name; /* p by namespace and name */
	struct hindex by_uid;  /* p by UID */
};

struct podmeta *podmeta_new(void)
{
	return xcalloc(1, sizeof(struct podmeta));
}

void podmeta_free(struct podmeta *pm)
{
	if (!pm)
		return;
	free(pm->p);
	hindex_free(&pm->by_name);
	hindex_free(&pm->by_uid);
	free(pm);
}

void podmeta_reset(struct podmeta *pm)
{
	pm->n = 0;
	hindex_clear(&pm->by_name);
	hindex_clear(&pm->by_uid);
}

static uint64_t name_hash(const char *ns, const char *pod)
{
	return hash_bytes(hash_bytes(0, ns, strlen(ns) + 1), pod, strlen(pod));
}

static const struct pod_seen *by_name(const struct podmeta *pm, const char *ns, const char *pod)
{
	struct hindex_iter it;
	uint64_t h = name_hash(ns, pod);

	for (uint32_t i = hindex_first(&pm->by_name, h, &it); i != HINDEX_NONE; i = hindex_next(&pm->by_name, h, &it))
		if (!strcmp(pm->p[i].ns, ns) && !strcmp(pm->p[i].pod, pod))
			return &pm->p[i];
	return NULL;
}

static int have_uid(const struct podmeta *pm, const char *uid)
{
	struct hindex_iter it;
	uint64_t h = hash_bytes(0, uid, strlen(uid));

	for (uint32_t i = hindex_first(&pm->by_uid, h, &it); i != HINDEX_NONE; i = hindex_next(&pm->by_uid, h, &it))
		if (!strcmp(pm->p[i].uid, uid))
			return 1;
	return 0;
}

void podmeta_add(struct podmeta *pm, const char *uid, const char *ns, const char *pod)
{
	struct pod_seen *s;

	if (!uid[0] || have_uid(pm, uid))
		return;
	if (pm->n == pm->cap) {
		pm->cap = pm->cap ? pm->cap * 2 : 16;
		pm->p = xrealloc(pm->p, pm->cap * sizeof(*pm->p));
	}
	s = &pm->p[pm->n];
	snprintf(s->uid, sizeof(s->uid), "%s", uid);
	snprintf(s->ns, sizeof(s->ns), "%s", ns);
	snprintf(s->pod, sizeof(s->pod), "%s", pod);
	hindex_put(&pm->by_uid, hash_bytes(0, s->uid, strlen(s->uid)), (uint32_t)pm->n);
	/* A pod without both names is found by no owner; the first UID of a name stays the name's. */
	if (s->ns[0] && s->pod[0] && !by_name(pm, s->ns, s->pod))
		hindex_put(&pm->by_name, name_hash(s->ns, s->pod), (uint32_t)pm->n);
	pm->n++;
}

const char *podmeta_uid(struct podmeta *pm, struct kubelet *k, const char *ns, const char *pod, int64_t now)
{
	const struct pod_seen *s = by_name(pm, ns, pod);

	if (s)
		return s->uid;
	return k ? kubelet_pod_uid(k, ns, pod, now) : NULL;
}

int podmeta_labels(struct kubelet *k, const char *uid, json_t *entry, int64_t now)
{
	json_t *kp, *v;
	int any = 0;

	if (!k || kubelet_labels_max(k) <= 0 || !(kp = kubelet_pod(k, uid, now)))
		return 0;
	if ((v = json_object_get(kp, "labels"))) {
		json_object_set(entry, "labels", v);
		any = 1;
	}
	if ((v = json_object_get(kp, "labels_dropped"))) {
		json_object_set(entry, "labels_dropped", v);
		any = 1;
	}
	return any;
}

json_t *podmeta_owner_pods(struct podmeta *pm, struct kubelet *k, const struct owner_pod *owners, size_t n, json_t *ids,
			   int64_t now)
{
	json_t *made = NULL;

	if (!k || kubelet_labels_max(k) <= 0)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct owner_pod *o = &owners[i];
		const char *uid;
		json_t *e;

		if (!(uid = podmeta_uid(pm, k, o->ns, o->pod, now)) || have_uid(pm, uid))
			continue;
		e = json_object();
		jset_str(e, "pod", o->pod);
		jset_str(e, "namespace", o->ns);
		if (!podmeta_labels(k, uid, e, now)) {
			json_decref(e);
			continue;
		}
		if (!ids)
			ids = made = json_pack("{s:{}, s:{}, s:{}}", "containers", "pods", "processes");
		json_object_set_new(json_object_get(ids, "pods"), uid, e);
		podmeta_add(pm, uid, o->ns, o->pod);
	}
	return made;
}
