/* SPDX-License-Identifier: MIT */
/*
 * instance_info: what the host is. The EC2 fields come from the
 * accel-imds helper program (monitor/imds/imds.c), which accel-monitor runs at
 * start and every refresh period; its one-line JSON answer is read by a
 * watch on the producer's event loop (loop.h), so collecting never waits on
 * the network and the
 * producer itself has no threads and links no HTTP or TLS library.
 * hostname and node_name (KUBE_NODE_NAME, else the downward API's
 * NODE_NAME) are added here, and the monitor's own pod_name and
 * pod_namespace (POD_NAME, POD_NAMESPACE) when those are set.
 *
 * A fetch that has not answered within its deadline is killed and counts
 * as failed. A failed refresh keeps the last good values and sets "error".
 */
#ifndef ACCEL_INSTANCE_H
#define ACCEL_INSTANCE_H

#include <jansson.h>
#include <stdint.h>

struct instance;
struct loop;

/*
 * Start the first fetch. helper: the accel-imds program to run. The fetch's
 * pipe and deadline and the next refresh are registered with loop
 * (borrowed; it must outlive the instance). Never fails.
 */
struct instance *instance_new(struct loop *loop, const char *helper, int64_t refresh_ns);

/* Has the first fetch finished (answered, failed or timed out)? */
int instance_ready(const struct instance *in);

/* The current instance_info object (new reference; do not modify it). */
json_t *instance_json(struct instance *in);

/* Kill a running fetch and free everything. NULL-safe. */
void instance_free(struct instance *in);

#endif
