/* SPDX-License-Identifier: MIT */
/*
 * NVLink per link, for the NVIDIA collector (coll_nvidia.c): each link's
 * state and data throughput (device_utilization "nvlink") and its error
 * counters' increase over the period (device_errors "nvlink_errors");
 * docs/nvidia.md, "NVLink". A GPU without NVLink (NVML says NOT_SUPPORTED
 * for link 0), or a library without the calls, gets neither field.
 *
 * Producer's thread only.
 */
#ifndef ACCEL_NVIDIA_LINKS_H
#define ACCEL_NVIDIA_LINKS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "nvml.h"
#include "nvidia_ledger.h"

struct nv_links;

/*
 * NVLink state for ndev device slots from the NVML library dl (borrowed);
 * its calls are recorded in lc (the producer's call ledger context,
 * borrowed, may be NULL). New object, never NULL.
 */
struct nv_links *nv_links_new(void *dl, size_t ndev, struct nv_lctx *lc);

/* Take slot i's baselines (at open, and when the GPU answers again), at mono_ns (CLOCK_MONOTONIC). */
void nv_links_prime(struct nv_links *l, size_t i, nvmlDevice_t h, int64_t mono_ns);

/*
 * Slot i's "nvlink" into its device_utilization object o, read at mono_ns.
 * 0, or -1 when NVML says the GPU is lost (*lost: what it returned).
 */
int nv_links_util(struct nv_links *l, size_t i, nvmlDevice_t h, int64_t mono_ns, json_t *o, nvmlReturn_t *lost);

/* Slot i's "nvlink_errors" into its device_errors object o. 0, or -1 as nv_links_util. */
int nv_links_errors(struct nv_links *l, size_t i, nvmlDevice_t h, json_t *o, nvmlReturn_t *lost);

/* Forget slot i's links and baselines (a lost GPU, or another GPU at its index). */
void nv_links_reset(struct nv_links *l, size_t i);

void nv_links_free(struct nv_links *l); /* NULL-safe */

#endif
