/* SPDX-License-Identifier: MIT */
/*
 * What a report of format 3 leaves to its reader (docs/report-format.md,
 * "Format versions"), put back in by the reader so that the rows, the DCGM
 * mapping and every sink read one model whatever the producer's version:
 *
 *   - a container's identity in "identities" names its pod by "pod_uid"
 *     only; the pod's names ("pod", "namespace", "qos") are the pod's entry.
 *     Each container (and process) identity without them takes them from
 *     its pod;
 *   - a device object's per-pod and per-container sums ("pods",
 *     "containers": {"<key>": {"pids", "memory_bytes" | "energy_joules" |
 *     "engines"}}) are not written: they are the device's "processes"
 *     summed by the identity of each process, in the order the processes
 *     come, as the producer summed them before format 3 (an integer while
 *     every figure is one and the sum fits, else a real).
 *
 * A report of format 1 or 2 (or a neuron-monitor report) is left as it is.
 */
#ifndef ACCEL_DERIVE_H
#define ACCEL_DERIVE_H

#include <jansson.h>

/* A pod's names, which format 3 writes once, in its entry of "identities"."pods". */
extern const char *const report_pod_names[3]; /* "pod", "namespace", "qos" */

/*
 * The report's format version: "monitor"."format_version", 1 for a report of
 * accel-monitor's without it (or with a value that is no positive integer),
 * 0 for a report that is not accel-monitor's (no "monitor").
 */
int report_format_version(json_t *report);

/* Derive, in report (a parsed line, changed in place), what format 3 leaves to its reader; a no-op for others. */
void report_derive(json_t *report);

/*
 * {"<pid>": "<container id>"} for every pid of the "pids" of ids'
 * "containers" (ids: a report's "identities"): a new object; NULL when ids
 * is NULL.
 */
json_t *report_pid_index(json_t *ids);

#endif
