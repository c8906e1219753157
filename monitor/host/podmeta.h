/* SPDX-License-Identifier: MIT */
/*
 * The pods of a report, each named once: what the report's identities and
 * allocations (host_identities, host_allocations) know of a pod, joined on
 * typed records as the report is built, never read back from its JSON.
 *
 *  - The pods of this cycle's processes (their container identities:
 *    UID, namespace, name) are entered as the identities are made
 *    (podmeta_add): an index by "<namespace>/<name>" and by UID.
 *  - An owner of the "allocations" (owners.h) names its pod by namespace
 *    and name, as the pod-resources API does; podmeta_uid gives it the
 *    pod's UID, "pod_uid", from a process of the same pod (the first one
 *    entered), else from the kubelet's pod list (kubelet.h, --kubelet-url).
 *    So the owner refers to its pod's entry in identities.pods as a
 *    process does.
 *  - With --kubelet-pod-labels, each pod's labels, from the kubelet's pod
 *    list, are written once: in its identities.pods entry ("labels",
 *    "labels_dropped"), as the entry is made (podmeta_labels); a pod that
 *    only an owner names gets an entry of its own there ("pod",
 *    "namespace" and the labels: podmeta_owner_pods).
 *
 * Ownership: a struct podmeta is the host's; the names it holds are copies.
 */
#ifndef ACCEL_PODMETA_H
#define ACCEL_PODMETA_H

#include <jansson.h>
#include <stdint.h>

struct kubelet;
struct owner_pod;
struct podmeta;

struct podmeta *podmeta_new(void);
void podmeta_free(struct podmeta *pm); /* NULL-safe */

/* A new report: no pod entered. */
void podmeta_reset(struct podmeta *pm);
/*
 * Enter pod uid (namespace ns, name pod) of one of the report's processes;
 * a UID entered already, or an empty one, is passed over. For a name
 * entered under two UIDs the first stays the name's.
 */
void podmeta_add(struct podmeta *pm, const char *uid, const char *ns, const char *pod);
/*
 * The UID of pod name in namespace ns: an entered pod's, else the kubelet
 * k's (NULL: none) at now (CLOCK_MONOTONIC ns), else NULL. Borrowed until
 * the next call on pm or k.
 */
const char *podmeta_uid(struct podmeta *pm, struct kubelet *k, const char *ns, const char *pod, int64_t now);
/*
 * With --kubelet-pod-labels (k non-NULL, kubelet_labels_max > 0): pod
 * uid's labels and labels_dropped from k's list at now into entry (an
 * identities.pods entry being made). 1 when it has any, else 0.
 */
int podmeta_labels(struct kubelet *k, const char *uid, json_t *entry, int64_t now);
/*
 * With --kubelet-pod-labels: the pods owners[0..n) (the allocations'
 * owners' pods, owners.h) that no process of the report is in, each with
 * labels in k's list, added to ids' "pods" (ids: the report's identities,
 * borrowed; NULL: none yet) as {"pod", "namespace", "labels",
 * "labels_dropped"}, and entered. Returns a new identities object (a new
 * reference) when ids was NULL and a pod was added; else NULL.
 */
json_t *podmeta_owner_pods(struct podmeta *pm, struct kubelet *k, const struct owner_pod *owners, size_t n, json_t *ids,
			   int64_t now);

#endif
