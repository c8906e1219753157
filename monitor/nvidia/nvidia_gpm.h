/* SPDX-License-Identifier: MIT */
/*
 * NVIDIA profiling metrics through NVML's GPM API (Hopper and newer): SM
 * activity and occupancy, tensor/FP64/FP32/FP16 pipe activity, DRAM
 * bandwidth, PCIe and NVLink bytes per second, for a whole GPU or one MIG
 * GPU instance. GPM computes a metric between two samples, which must be
 * more than 100 ms apart: each device keeps the previous sample and each
 * step takes a new one and computes the metrics over the time between them
 * (the group's period). docs/nvidia.md, "Profiling metrics (GPM)".
 */
#ifndef ACCEL_NVIDIA_GPM_H
#define ACCEL_NVIDIA_GPM_H

#include "nvml.h"
#include "nvidia_ledger.h"

#include <jansson.h>
#include <stdint.h>

#define NV_GPM_MIN_GAP_NS 100000000LL /* NVML wants the two samples more than 100 ms apart */
#define NV_GPM_NMETRICS 12

/* The GPM entry points, resolved with dlsym from the loaded NVML; NULL when the library lacks them. */
struct nv_gpm_api {
	nvml_gpm_support_fn support;
	nvml_gpm_alloc_fn alloc;
	nvml_gpm_free_fn free;
	nvml_gpm_get_fn get;
	nvml_gpm_mig_get_fn mig_get;
	nvml_gpm_metrics_fn metrics;
	const char *(*error_string)(nvmlReturn_t);
	struct nv_lctx *lc; /* the call ledger context (borrowed; may be NULL), set by the caller */
};

/* One device's sampler: a whole GPU, or one GPU instance of a GPU in MIG mode. */
struct nv_gpm {
	int support;               /* a whole GPU's nvmlGpmQueryDeviceSupport: 0 not asked yet, 1 yes, -1 no */
	int state;                 /* 0 not known yet, 1 sampling, -1 no metrics (why says why) */
	char why[200];             /* why there are no profiling metrics; "" when there are */
	nvmlGpmSample_t smp[2];    /* allocated once; smp[prev] holds the previous sample */
	int prev, have_prev;
	int64_t prev_ns;           /* when the previous sample was taken (monotonic) */
	double v[NV_GPM_NMETRICS]; /* the last metrics computed */
	unsigned have;             /* bit i: v[i] is valid */
	unsigned shown;            /* bit i: nv_gpm_put wrote metric i into the object last time */
};

/* Resolve the GPM symbols of an open NVML library (dl from dlopen). */
void nv_gpm_resolve(void *dl, struct nv_gpm_api *a);

/* A fresh sampler (nothing allocated). */
void nv_gpm_init(struct nv_gpm *g);

/* Free the sampler's samples and make it fresh; the support answer is kept when keep_state. */
void nv_gpm_release(const struct nv_gpm_api *a, struct nv_gpm *g, int keep_state);

/*
 * Ask once whether h (a whole GPU) supports GPM; g->state and g->why say.
 * NVML_SUCCESS, or the NVML error that means the GPU is lost.
 */
nvmlReturn_t nv_gpm_query(const struct nv_gpm_api *a, struct nv_gpm *g, nvmlDevice_t h);

/*
 * One step at now_ns (monotonic): take a sample of h (gi == NVML_INVALID_INSTANCE_ID:
 * the whole GPU; else GPU instance gi of h) and, when the previous one is more than
 * 100 ms old, compute the metrics between them. g->have is 0 when there is no
 * new value this step. NVML_SUCCESS, or the NVML error that means the GPU is lost.
 * A whole GPU must have been queried (nv_gpm_query); a GPU instance is taken as
 * supported until its first sample says otherwise.
 */
nvmlReturn_t nv_gpm_step(const struct nv_gpm_api *a, struct nv_gpm *g, nvmlDevice_t h, unsigned gi, int64_t now_ns);

/*
 * Write g's last metrics into o (a device_utilization object) and drop the
 * profiling fields it has no value for. The PCIe fields
 * (pcie_{tx,rx}_bytes_per_second): pcie 0 leaves them alone, 1 writes them
 * when g has them (else they keep what nvmlDeviceGetPcieThroughput gave),
 * 2 writes or drops them as the others.
 */
void nv_gpm_put(struct nv_gpm *g, json_t *o, int pcie);

/*
 * Whether g samples and its last step gave both PCIe rates: then they
 * overwrite nvmlDeviceGetPcieThroughput's, and that 20 ms call can be skipped.
 */
int nv_gpm_gives_pcie(const struct nv_gpm *g);

/* "profiling_unavailable" in o (a device_info object): why there are no profiling metrics, or dropped. */
void nv_gpm_put_info(const struct nv_gpm *g, json_t *o);

#endif
