/* SPDX-License-Identifier: MIT */
/*
 * Amazon ECS task and container names, for processes whose cgroup names an
 * ECS task (container.h) or a container the runtimes' state files do not
 * tie to one. Two sources, each asked when configured:
 *
 *  - the ECS agent's introspection API (GET <agent>/v1/tasks, the agent on
 *    the container instance, port 51678): every task on the instance, its
 *    ARN, family and revision, and each container's name by Docker id; what
 *    a daemon on the host asks (--ecs-agent-url);
 *  - the task metadata endpoint v4 ($ECS_CONTAINER_METADATA_URI_V4): GET
 *    <uri> is the monitor's own container (its id: the identity of the
 *    processes that share its cgroup, seen as "/" from inside a cgroup
 *    namespace), GET <uri>/task its task (cluster, ARN, family, revision,
 *    containers); what a sidecar asks (--ecs-metadata).
 *
 * As the kubelet (kubelet.h): the requests run on the producer's loop
 * (http_async.h), never blocking a cycle, and their answers are parsed
 * and reduced as the loop's work (loop_work_post), off the loop, to the
 * facts read here; a lookup answers from the last good answers at once,
 * and a miss starts the fetches (at most once per refresh period, none
 * while one runs or is parsed; a container missed before waits 1, 2, 4,
 * ... up to 32 periods, until a container not seen before misses); a
 * failed fetch keeps the last good answer, its error is logged once (again
 * only when it changes), and names fall back to the ids.
 */
#ifndef ACCEL_ECS_H
#define ACCEL_ECS_H

#include <stdint.h>

#include "container.h"

struct ecs;
struct http_async;

/*
 * Fetch through http (borrowed) from agent_url (e.g. "http://localhost:51678")
 * and metadata_url (the v4 endpoint's URI), either NULL: not asked; strings
 * copied. Starts nothing yet.
 */
struct ecs *ecs_new(struct http_async *http, const char *agent_url, const char *metadata_url, int64_t refresh_ns);
void ecs_free(struct ecs *e); /* NULL-safe; stops running fetches (waits for a parse that runs) */

/*
 * Fill what out lacks (name; the task's cluster, ARN, family, revision) for
 * id (its container id, else its ECS task id) from the last answers at now
 * (CLOCK_MONOTONIC ns); on a miss, start the fetches when none runs and the
 * last started a refresh period ago (the back-off's periods for a
 * container missed before).
 */
void ecs_names(struct ecs *e, const struct container_id *id, int64_t now, struct container_names *out);

/*
 * The monitor's own container, from the metadata endpoint: 0 and *id, or
 * -ENOENT when it is not known (yet: a fetch is started as ecs_names does).
 */
int ecs_self(struct ecs *e, int64_t now, struct container_id *id);

/* The last fetches' errors, "; "-joined ("" when they succeeded or none ran yet), for tests. */
const char *ecs_error(const struct ecs *e);
/* How many refreshes have started, for tests. */
unsigned long ecs_fetches(const struct ecs *e);

#endif
