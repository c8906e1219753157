/* SPDX-License-Identifier: MIT */
/*
 * The kubelet's pod list (monitor/host/kubelet.h): the kubelet's /pods
 * answer, a PodList of megabytes, reduced on a loop worker (kubelet.c) to the compact
 * object the producer reads, {"<pod UID>": {"name", "namespace",
 * "containers": {"<container id>": "<name>"}}}, so the producer never
 * parses the whole list on its loop. Thread-safe: it touches nothing but
 * its arguments.
 */
#ifndef ACCEL_KUBELET_PODS_H
#define ACCEL_KUBELET_PODS_H

#include <jansson.h>
#include <stddef.h>

/*
 * A PodList (len bytes) reduced to the compact object above, a new object in
 * *out (the caller's reference). 0, or -EINVAL with err "not a PodList: ...".
 */
int kubelet_pods_reduce(const char *body, size_t len, json_t **out, char *err, size_t errsz);

#endif
