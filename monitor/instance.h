/* SPDX-License-Identifier: MIT */
/*
 * instance_info: what the host is, from the EC2 Instance Metadata Service
 * (IMDSv2: PUT a session token, then GET with it) through libcurl, plus
 * hostname and node_name (KUBE_NODE_NAME).
 *
 * A background thread fetches at start and every refresh period, so the
 * reporting path only copies a snapshot. Off EC2 the first attempt gives
 * up within about a second and the error says why. The AWS SDK conventions
 * AWS_EC2_METADATA_DISABLED=true and AWS_EC2_METADATA_SERVICE_ENDPOINT are
 * honoured.
 */
#ifndef ACCEL_INSTANCE_H
#define ACCEL_INSTANCE_H

#include <jansson.h>
#include <stdint.h>

struct instance;

/* Start fetching (curl_global_init must have been called). Never fails. */
struct instance *instance_start(int64_t refresh_ns);

/* Wait until the first fetch has finished or timeout_ns passed. */
void instance_wait_first(struct instance *in, int64_t timeout_ns);

/* The current instance_info object (new reference). */
json_t *instance_json(struct instance *in);

/* Stop the thread and free everything. NULL-safe. */
void instance_stop(struct instance *in);

#endif
