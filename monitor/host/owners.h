/* SPDX-License-Identifier: MIT */
/*
 * Who each device is allocated to, whether or not anything runs on it: the
 * ids of the kubelet's pod-resources answer (podres_table.h: device
 * plugins' ids, DRA claims' devices), and the jobs an HPC scheduler's
 * mapping directory names (jobmap.h), mapped to the devices the collectors
 * reported this cycle (struct dev_ident, collector.h), written as the
 * report's "allocations" (docs/report-format.md, "Allocations").
 *
 * How each kind's plugins and drivers name a device is a row of a table
 * in owners.c (a kind, the resources or DRA driver it answers to, a match
 * function):
 *
 *  - nvidia: NVIDIA's device plugin names a GPU by its UUID, or its index
 *    ("0", DEVICE_ID_STRATEGY=index), a MIG device by its UUID or
 *    "<GPU index>:<MIG index>", and a replica of a time-sliced GPU by its
 *    id and "::N"; its DRA driver (gpu.nvidia.com) names a GPU "gpu-<index>"
 *    and a MIG device "gpu-<index>-mig-...", which maps to its GPU (the name
 *    holds the placement, which the monitor does not read);
 *  - amdgpu: AMD's device plugin (amd.com/gpu) names a GPU by its PCI
 *    address (or its UUID);
 *  - neuron: aws.amazon.com/neuron and neurondevice by the device's index,
 *    aws.amazon.com/neuroncore by the NeuronCore's global index (neuron-
 *    monitor's), which maps to its device with the core listed.
 *
 * An id of one of these resources or drivers that names no device of the
 * kinds reported is logged once, with its resource (or driver) and pod.
 *
 * The object is made again only when the answer or the devices changed;
 * otherwise the last one is handed out again (a new reference to it).
 * Its caller adds each owner's "pod_uid" in place (podmeta.h), a key this
 * file neither writes nor reads.
 *
 * Ownership: an owners table is its caller's (owners_new, owners_free); it
 * borrows nothing between calls.
 */
#ifndef ACCEL_OWNERS_H
#define ACCEL_OWNERS_H

#include "../core/collector.h"
#include "jobmap.h"
#include "podres_table.h"

#include <jansson.h>
#include <stddef.h>

struct owners;

/*
 * Who knows the pods' UIDs: uid(ud, ns, pod) gives pod pod of namespace
 * ns's UID (borrowed until the next call), or NULL when it is not known.
 */
struct owner_pods {
	const char *(*uid)(void *ud, const char *ns, const char *pod);
	void *ud;
};

/* A pod an owner names, as the pod-resources API does. */
struct owner_pod {
	const char *ns, *pod;
};

struct owners *owners_new(void);
void owners_free(struct owners *o); /* NULL-safe */

/*
 * The report's "allocations" for devs[0..n) from t (the latest answer,
 * borrowed; NULL: none yet), whose generation gen changes with each new
 * answer, jm (an HPC job mapping, borrowed; NULL: none) and err (the
 * sources' error, "" when none; written as valid UTF-8, at most 511 bytes):
 * {"error": err, "devices": {"<type>": {"<key>": [owner, ...]}}}, a device
 * with no owner left out. An owner is a container given the device by a
 * plugin ("namespace", "pod", "container", "resource", "device_ids": [the
 * plugin's ids, replicas included], "neuroncores": [global indices] for a
 * NeuronCore resource) or by a DRA claim (the same names and "dra_claim_name",
 * "dra_claim_namespace", "dra_driver_name", "dra_pool_name",
 * "dra_device_name"), or an HPC job on an NVIDIA GPU or MIG instance
 * ({"hpc_job": id}: its file in the mapping directory, dcgm-exporter's
 * "N" or "N.M", after the pods); each key only when known. A container's
 * owner has its pod's UID, "pod_uid", when pods (NULL: none) knows it; an
 * answer of pods that changes makes the object again. A new reference.
 * *fresh is set to 1 when devs holds a device the previous call had not
 * (the caller asks the kubelet again), else 0.
 */
json_t *owners_report(struct owners *o, const struct dev_ident *devs, size_t n, const struct podres_table *t,
		      unsigned long gen, const struct jobmap *jm, const struct owner_pods *pods, const char *err,
		      int *fresh);

/*
 * Check t, a GetAllocatableResources answer (the node's devices, allocated
 * or not; borrowed), against devs[0..n) once per answer (a table it was
 * given last time is not looked at again): an id of a kind the monitor maps
 * that names none of them is logged once (a device the configuration does
 * not select, or that the driver does not show). NULL-safe on t.
 */
void owners_check_allocatable(struct owners *o, const struct dev_ident *devs, size_t n, const struct podres_table *t);

/*
 * The pods the owners of owners_report's last object name (containers'
 * owners only), each once, in the order they come there: *n of them,
 * borrowed until the next owners_report. NULL-safe on o (then none).
 */
const struct owner_pod *owners_pods(const struct owners *o, size_t *n);

#endif
