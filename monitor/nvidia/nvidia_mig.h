/* SPDX-License-Identifier: MIT */
/*
 * NVIDIA MIG instances as device entries of their own: while a GPU is in MIG
 * mode, each MIG device (a GPU instance and its compute instance) gets an
 * object in the device groups that have something to say about it
 * (device_info, device_utilization, device_memory), keyed
 * "<GPU index>/<GPU instance id>/<compute instance id>", next to its parent
 * GPU's object. docs/nvidia.md, "MIG instances"; docs/report-format.md §6a.
 */
#ifndef ACCEL_NVIDIA_MIG_H
#define ACCEL_NVIDIA_MIG_H

#include "../core/collector.h"
#include "nvidia_gpm.h"
#include "nvml.h"

#include <jansson.h>
#include <stdint.h>

#define NV_MIG_MAX 8 /* MIG devices per GPU (NVML's nvmlDeviceGetMaxMigDeviceCount is 7) */

/* The NVML entry points MIG needs, resolved with dlsym; NULL when the library lacks them. */
struct nv_mig_api {
	nvml_mig_mode_fn mig_mode;
	nvml_uint_fn mig_count, gi_id, ci_id;
	nvml_mig_handle_fn mig_handle;
	nvml_dev_string_fn uuid, name;
	nvml_mem_fn mem;
	nvml_procs_fn procs; /* _v3 or _v2: nvmlProcessInfo_v2_t entries */
	struct nv_lctx *lc;  /* the call ledger context (borrowed; may be NULL), set by the caller */
	struct pid_list *named; /* where the instances' processes written are named (borrowed; may be NULL) */
};

/* One GPU's MIG state (opaque). */
struct nv_mig;

/* The parent GPU, as the caller knows it. */
struct nv_mig_parent {
	unsigned index;
	nvmlDevice_t h;
	const char *uuid; /* NULL when unknown */
	const char *pci;  /* NULL when unknown */
	const struct nv_gpm *gpm; /* the GPU's own sampler: its GPM support decides the instances' */
	int mig_mode;             /* the GPU's MIG mode as the caller last read it (NVML_FEATURE_*); -1: ask NVML */
};

void nv_mig_resolve(void *dl, struct nv_mig_api *a);
struct nv_mig *nv_mig_new(void);
/* NULL-safe; frees the GPM samples with ga. */
void nv_mig_free(struct nv_mig *m, const struct nv_gpm_api *ga);
/* The GPU was lost or replaced: forget the layout (handles are stale). */
void nv_mig_reset(struct nv_mig *m, const struct nv_gpm_api *ga);

/*
 * Bring group id's MIG entries of parent p in devices (the group's
 * "devices" object) up to date: entries added, updated in place, and
 * removed when the instance or MIG mode went away. The layout is read once
 * per cycle (cycle: the cycle's time). NVML_SUCCESS, or the NVML error that
 * means the GPU is lost (the caller then reports the GPU's error and calls
 * nv_mig_clear).
 */
nvmlReturn_t nv_mig_collect(struct nv_mig *m, const struct nv_mig_api *a, const struct nv_gpm_api *ga,
			    enum group_id id, const struct nv_mig_parent *p, json_t *devices, int64_t cycle);

/*
 * Append to out the identity of each MIG instance of the layout last read
 * (its key, MIG UUID, handle index), under gpu, its GPU's identity (the
 * type, key, index and bus id they share).
 */
void nv_mig_idents(const struct nv_mig *m, const struct dev_ident *gpu, struct dev_list *out);

/* Remove every MIG entry of GPU index from devices. */
void nv_mig_clear(unsigned index, json_t *devices);

#endif
