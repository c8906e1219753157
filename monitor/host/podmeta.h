/* SPDX-License-Identifier: MIT */
/*
 * The pods of a report, each named once: the last step of the report's
 * identities and allocations (host_identities, host_allocations), which
 * joins what each knows of a pod.
 *
 *  - An owner of the "allocations" (owners.h) names its pod by namespace
 *    and name, as the pod-resources API does; it gets the pod's UID,
 *    "pod_uid", when the report knows the pod: from a process identity of
 *    the same pod (identities.pods, keyed by UID), else from the kubelet's
 *    pod list (kubelet.h, --kubelet-url). So the owner refers to its pod's
 *    entry in identities.pods as a process does.
 *  - With --kubelet-pod-labels, each pod's labels, from the kubelet's pod
 *    list, are written once: in its identities.pods entry ("labels",
 *    "labels_dropped"). A pod that only an owner names gets an entry of its
 *    own there ("pod", "namespace" and the labels); a report without
 *    identities gets them.
 *
 * Ownership: the report's objects are changed in place; the owners' objects
 * are owners.c's cached ones, which it never reads "pod_uid" from.
 */
#ifndef ACCEL_PODMETA_H
#define ACCEL_PODMETA_H

#include <jansson.h>
#include <stdint.h>

struct kubelet;

/*
 * Complete report's "identities" and "allocations" as above, asking k
 * (NULL: no kubelet) at now (CLOCK_MONOTONIC ns).
 */
void podmeta_apply(struct kubelet *k, json_t *report, int64_t now);

#endif
