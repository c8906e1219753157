/* SPDX-License-Identifier: MIT */
/*
 * instance_info: what the host is. The EC2 fields come from the instance
 * metadata service over IMDSv2 (PUT a session token, then one GET per
 * field), asked at start and every refresh period on the producer's loop
 * (http_async.h), so collecting never waits on the network. Environment, as in the AWS
 * SDKs: AWS_EC2_METADATA_DISABLED=true (no request at all),
 * AWS_EC2_METADATA_SERVICE_ENDPOINT (default http://169.254.169.254). Each
 * request times out after 1 s.
 * hostname and node_name (KUBE_NODE_NAME, else the downward API's
 * NODE_NAME) are added here, and the monitor's own pod_name and
 * pod_namespace (POD_NAME, POD_NAMESPACE) when those are set.
 *
 * A fetch that has not finished within its deadline counts as failed. A
 * failed refresh keeps the last good values and sets "error".
 */
#ifndef ACCEL_INSTANCE_H
#define ACCEL_INSTANCE_H

#include <jansson.h>
#include <stdint.h>

struct instance;
struct loop;
struct http_async;

/*
 * Start the first fetch, through http (borrowed). The fetch's deadline and
 * the next refresh are timers of loop (borrowed); both must outlive the
 * instance. Never fails.
 */
struct instance *instance_new(struct loop *loop, struct http_async *http, int64_t refresh_ns);

/* Has the first fetch finished (answered, failed or timed out)? */
int instance_ready(const struct instance *in);

/* The current instance_info object (new reference; do not modify it). */
json_t *instance_json(struct instance *in);

/* Stop a running fetch and free everything. NULL-safe. */
void instance_free(struct instance *in);

#endif
