/* SPDX-License-Identifier: MIT */
/*
 * instance_info: what the host is. The EC2 fields come from the instance
 * metadata service over IMDSv2 (PUT a session token, then one GET per
 * field), asked at start and every refresh period on the producer's loop
 * (http_async.h), so collecting never waits on the network. Each request
 * times out after 1 s.
 *
 * Nothing leaves the host unless it is an EC2 instance or the user asks:
 * the service is asked when --instance-metadata=on; else (auto) not when
 * AWS_EC2_METADATA_DISABLED=true (as in the AWS SDKs), yes when
 * AWS_EC2_METADATA_SERVICE_ENDPOINT names one (default
 * http://169.254.169.254), else only when the host's own facts say EC2
 * (instance_ec2_local); --instance-metadata=off never asks.
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

/* --instance-metadata: whether the metadata service is asked. */
enum instance_mode {
	INSTANCE_AUTO, /* on an EC2 instance (instance_ec2_local), or when the AWS variables say so */
	INSTANCE_ON,   /* always (AWS_EC2_METADATA_DISABLED ignored) */
	INSTANCE_OFF,  /* never */
};

/* "auto", "on" or "off": the mode, or -EINVAL. */
int instance_mode_parse(const char *s);

/*
 * Do the host's own facts under sysfs (the sysfs root, "/sys" or
 * --path.sysfs) say it is an EC2 instance? The facts cloud-init's
 * ds-identify and the AWS agents read, no request made: DMI sys_vendor or
 * bios_vendor "Amazon EC2", board_asset_tag an instance id "i-..." (Nitro);
 * hypervisor/uuid starting "ec2" (or so in little-endian) with
 * hypervisor/version/extra ".amazon" or DMI product_uuid or product_serial
 * the same, DMI product_uuid starting so and product_serial the same,
 * bios_version "....amazon" (Xen): a random UUID starts so once in 4096,
 * so a UUID alone never counts. Returns 1 with why
 * naming the fact, else 0 with why saying what was seen.
 */
int instance_ec2_local(const char *sysfs, char *why, size_t size);

/*
 * Would instance_new ask the metadata service? From mode, the AWS
 * variables and the facts under sysfs; no request is made. 1 with why
 * saying what decided, or 0 with why the instance_info error to report.
 */
int instance_should_ask(enum instance_mode mode, const char *sysfs, char *why, size_t size);

/*
 * Decide whether to ask the metadata service (instance_should_ask; sysfs
 * borrowed) and start the first fetch if so,
 * through http (borrowed). The fetch's deadline and the next refresh are
 * timers of loop (borrowed); both must outlive the instance. Never fails.
 */
struct instance *instance_new(struct loop *loop, struct http_async *http, int64_t refresh_ns,
			      enum instance_mode mode, const char *sysfs);

/* Has the first fetch finished (answered, failed or timed out)? */
int instance_ready(const struct instance *in);

/* The current instance_info object (new reference; do not modify it). */
json_t *instance_json(struct instance *in);
/*
 * The same as JSON text, made once when the object is: what each report
 * writes (borrowed until the object next changes, on the loop).
 */
const char *instance_text(const struct instance *in);

/* Stop a running fetch and free everything. NULL-safe. */
void instance_free(struct instance *in);

#endif
