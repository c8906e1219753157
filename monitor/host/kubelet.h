/* SPDX-License-Identifier: MIT */
/*
 * Pod and container names from the kubelet's /pods endpoint, for what the
 * runtimes' state files do not name. The producer never blocks and never
 * parses the kubelet's PodList (51 MB on a full node) on its loop: the
 * request runs on the loop (http_async.h), and the answer is reduced on
 * one of the loop's workers (loop_work_post) to {"<UID>": {"name", "namespace", "containers": {"<container
 * id>": "<name>"}, and the pod's labels when asked for}} (kubelet_pods_reduce in monitor/host/kubelet_pods.c)
 * before the loop reads it. A lookup answers from the last good answer at
 * once; a miss starts a fetch (at most one at a time, at most one per
 * refresh period) whose answer serves later lookups. A failed fetch keeps
 * the last good answer; its error is logged once (again only when it
 * changes), and names fall back to the ids.
 */
#ifndef ACCEL_KUBELET_H
#define ACCEL_KUBELET_H

#include <stdint.h>

#include "container.h"

#include <jansson.h>
#include <stddef.h>

struct kubelet;
struct http_async;

/* Start nothing yet: the first miss fetches, through http (borrowed); o's strings are copied. */
struct kubelet *kubelet_new(struct http_async *http, const struct container_opts *o);
void kubelet_free(struct kubelet *k); /* NULL-safe; stops a running fetch (waits for a reduction that runs) */

/*
 * Fill what out lacks (pod, ns; name when ctr_id is not "") from the last
 * answer about pod pod_uid at now (CLOCK_MONOTONIC ns); on a miss, start a
 * fetch when none runs and the last one started a refresh period ago.
 */
void kubelet_names(struct kubelet *k, const char *pod_uid, const char *ctr_id, int64_t now,
		   struct container_names *out);

/*
 * The last answer's entry of pod pod_uid (kubelet_pods.h: "name",
 * "namespace", "containers", and with --kubelet-pod-labels "labels" and
 * "labels_dropped"), borrowed until the next call on k; NULL when the
 * answer has no such pod. A miss starts a fetch as kubelet_names does;
 * with labels asked for (kubelet_labels_max > 0), so does a hit a refresh
 * period after the last fetch, since a running pod's labels change.
 */
json_t *kubelet_pod(struct kubelet *k, const char *pod_uid, int64_t now);
/*
 * The UID of pod name in namespace ns in the last answer (borrowed, as
 * above), or NULL; a miss starts a fetch as kubelet_names does.
 */
const char *kubelet_pod_uid(struct kubelet *k, const char *ns, const char *name, int64_t now);
/* --kubelet-pod-labels: the most labels the answer keeps per pod (0: none). */
int kubelet_labels_max(const struct kubelet *k);

/* The last fetch's error ("" when it succeeded or none ran yet), for tests. */
const char *kubelet_error(const struct kubelet *k);
/* How many fetches have started, for tests. */
unsigned long kubelet_fetches(const struct kubelet *k);

#endif
