/* SPDX-License-Identifier: MIT */
/*
 * Which pod holds which device, as the kubelet's pod-resources API says
 * (podres.h fetches it): a table of typed records, one per device a
 * container was given (by a device plugin, or by a Dynamic Resource
 * Allocation claim), decoded from a List answer (v1 or v1alpha1: the same
 * messages on the wire) or a GetAllocatableResources answer (the node's
 * devices, no pod), with an index by device id.
 *
 * A device plugin's ids are its own: NVIDIA's a GPU UUID ("GPU-..."), a
 * MIG UUID ("MIG-...") or, shared by time-slicing, "GPU-...::N" (one id
 * per replica); Neuron's device or core indices ("0", "1"); AMD's PCI
 * address or UUID; Intel's card names. The index key is the id without a
 * "::N" replica suffix, so a lookup of a GPU finds every replica of it;
 * a DRA device is indexed by its device name (pool and driver say whose).
 *
 * Thread-safe: decoding touches nothing but its arguments (the client
 * decodes a large answer on a loop worker); a table is read-only once made.
 * Ownership: a table owns the decoded message its records' strings point
 * into; every string is borrowed from the table until podres_table_free.
 */
#ifndef ACCEL_PODRES_TABLE_H
#define ACCEL_PODRES_TABLE_H

#include <stddef.h>
#include <stdint.h>

/* One device (or DRA device) given to one container; "" for what does not apply. */
struct podres_alloc {
	const char *resource;   /* the device plugin's resource name ("nvidia.com/gpu"); "" for a DRA device */
	const char *device_id;  /* the plugin's id of the device ("GPU-...", "GPU-...::3", "MIG-...", "0") */
	const char *ns;         /* the pod's namespace ("" in an allocatable table) */
	const char *pod;        /* the pod's name */
	const char *container;  /* the container's name */
	const char *claim;      /* DRA: the claim's name */
	const char *claim_ns;   /* DRA: the claim's namespace */
	const char *driver;     /* DRA: the driver's name ("gpu.nvidia.com") */
	const char *pool;       /* DRA: the pool's name (a node, usually) */
	const char *device;     /* DRA: the device's name in its pool ("gpu-0") */
};

struct podres_table;

enum podres_kind { PODRES_LIST, PODRES_ALLOCATABLE };

/*
 * Decode one protobuf message (len bytes, the gRPC frame's content) of kind
 * into a new table (*out, the caller's; podres_table_free). At most
 * max_allocs records (a cap against an answer that says more than a node
 * can hold). 0, or -EBADMSG / -E2BIG with err (what is wrong, and where).
 */
int podres_table_decode(enum podres_kind kind, const uint8_t *msg, size_t len, size_t max_allocs,
			struct podres_table **out, char *err, size_t errsz);
void podres_table_free(struct podres_table *t); /* NULL-safe */

/* How many records; the i-th (borrowed), in the answer's order. */
size_t podres_table_size(const struct podres_table *t);
const struct podres_alloc *podres_table_at(const struct podres_table *t, size_t i);
/* How many pods the answer listed (with or without devices). */
size_t podres_table_pods(const struct podres_table *t);

/*
 * Every record of device id (its "::N" replica suffix, if any, ignored; a
 * DRA device by its device name): the first of *n consecutive pointers
 * (borrowed from t), or NULL with *n = 0. NULL-safe on t.
 */
const struct podres_alloc *const *podres_lookup(const struct podres_table *t, const char *id, size_t *n);

#endif
