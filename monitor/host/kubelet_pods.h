/* SPDX-License-Identifier: MIT */
/*
 * The kubelet's pod list (monitor/host/kubelet.h): the kubelet's /pods
 * answer, a PodList of megabytes, reduced on a loop worker (kubelet.c) to the compact
 * object the producer reads, {"<pod UID>": {"name", "namespace",
 * "containers": {"<container id>": "<name>"}, "labels": {...},
 * "labels_dropped": n}}, so the producer never parses the whole list on its
 * loop. Thread-safe: it touches nothing but its arguments.
 *
 * A pod's labels (metadata.labels) are kept only when asked for
 * (labels_max > 0, --kubelet-pod-labels), and bounded: the first
 * labels_max in key order whose key is at most KUBELET_LABEL_KEY_MAX bytes
 * and whose value is a string of at most KUBELET_LABEL_VALUE_MAX bytes
 * (Kubernetes' own limits: a 253-byte prefix, "/" and a 63-byte name; a
 * 63-byte value); every other label is dropped and counted in
 * "labels_dropped" (absent when 0). "labels" is absent when none is kept.
 */
#ifndef ACCEL_KUBELET_PODS_H
#define ACCEL_KUBELET_PODS_H

#include <jansson.h>
#include <stddef.h>

#define KUBELET_LABEL_KEY_MAX 317  /* bytes */
#define KUBELET_LABEL_VALUE_MAX 63 /* bytes */
#define KUBELET_LABELS_MAX 64      /* the most --kubelet-pod-labels allows */

/*
 * A PodList (len bytes) reduced to the compact object above, each pod with
 * at most labels_max labels (0: none), a new object in *out (the caller's
 * reference). 0, or -EINVAL with err "not a PodList: ...".
 */
int kubelet_pods_reduce(const char *body, size_t len, int labels_max, json_t **out, char *err, size_t errsz);

#endif
