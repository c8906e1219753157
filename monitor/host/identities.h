/* SPDX-License-Identifier: MIT */
/*
 * The report's "identities" (docs/report-format.md): who the processes the
 * device groups named are, each container, pod and process once, written
 * from the processes' typed identities (container.h's struct container_id
 * and struct container_names, as the host worked them out) by the rule of
 * container_fields. An entry unchanged since the last report is that
 * report's object again: the caller keeps a struct ident_last from one
 * report to the next, which remembers each entry's values as text, not as
 * JSON to be read back.
 */
#ifndef ACCEL_IDENTITIES_H
#define ACCEL_IDENTITIES_H

#include "container.h"

#include <jansson.h>
#include <sys/types.h>

/*
 * What containers_identities asks and tells its caller:
 *  - lookup(ud, pid, &id, &n): 1 when process pid has an identity, with
 *    *id its identity and *n its names (NULL: none), both borrowed: they
 *    must stay as they are until the next call of lookup, which uses them
 *    before it asks again; 0 when the process is on the host or gone;
 *  - pod(ud, uid, ns, name, entry), NULL or called once for each pod entry
 *    as it is made (entry: its identities.pods object, borrowed; the
 *    caller may add to it, as the pod's labels, but not its names);
 *  - new_containers, set (1) when a container id the last report's
 *    identities did not have was entered.
 */
struct ident_cb {
	int (*lookup)(void *ud, pid_t pid, const struct container_id **id, const struct container_names **n);
	void (*pod)(void *ud, const char *uid, const char *ns, const char *name, json_t *entry);
	void *ud;
	int new_containers; /* out */
};

/* The pids containers_identities takes: 1..IDENT_PID_MAX (the kernel's PID_MAX_LIMIT is 2^22); the others are passed over. */
#define IDENT_PID_MAX 0x3fffffff

/*
 * The last report's container and process entries, each with its values,
 * for the next report to take over those that are the same. Owned by the
 * caller; ident_last_free is NULL-safe.
 */
struct ident_last;
struct ident_last *ident_last_new(void);
void ident_last_free(struct ident_last *l);

/*
 * The report's "identities" of processes pids[0..n) (the pids the device
 * groups named this cycle, in that order; repeats and pids out of range are
 * passed over), each process's identity as cb->lookup gives it:
 * {"containers": {"<container id>": {its container_json fields but "id"
 * and those of the pod's names ("pod", "namespace", "qos") its pod's entry
 * has with the same value, "pids": [...]}}, "pods": {"<pod UID>": {"pod",
 * "namespace", "qos" of the pod's first process}}, "processes": {"<pid>":
 * container_json}} (only the processes in no container: a unit's, a pod's
 * or an ECS task's own). last (NULL: none) is the last report's entries:
 * one with the same values is taken over (a container's "pids" made this
 * report's; the object is the last report's, so that report must be
 * written already) rather than made again, and last is made this report's.
 * A new reference; NULL when no process has an identity.
 */
json_t *containers_identities(const pid_t *pids, size_t n, struct ident_cb *cb, struct ident_last *last);

#endif
