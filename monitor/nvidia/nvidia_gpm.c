/* SPDX-License-Identifier: MIT */
/*
 * Profiling metrics through NVML's GPM API; see nvidia_gpm.h. The report
 * keeps NVML's units where the report has the same kind of field (percent
 * of the period, as core_percent) and bytes per second for rates (GPM gives
 * MiB/s). accel-prom turns the percents into ratios (accelerator_*) and
 * into DCGM's DCGM_FI_PROF_* ratios under --collectors.
 */
#include "nvidia_gpm.h"
#include "../../common/jset.h"
#include "../../common/log.h"
#include "../../common/util.h"

#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* What each metric becomes in a device_utilization object. */
static const struct gpm_metric {
	unsigned id;
	const char *field;
	int rate; /* MiB/s -> bytes/s (an integer); else a percent 0-100 */
	int pcie; /* a PCIe field: written only when the caller asks (whole GPUs) */
} metrics[NV_GPM_NMETRICS] = {
	{ NVML_GPM_METRIC_GRAPHICS_UTIL, "graphics_active_percent", 0, 0 },
	{ NVML_GPM_METRIC_SM_UTIL, "sm_active_percent", 0, 0 },
	{ NVML_GPM_METRIC_SM_OCCUPANCY, "sm_occupancy_percent", 0, 0 },
	{ NVML_GPM_METRIC_ANY_TENSOR_UTIL, "tensor_active_percent", 0, 0 },
	{ NVML_GPM_METRIC_DRAM_BW_UTIL, "dram_active_percent", 0, 0 },
	{ NVML_GPM_METRIC_FP64_UTIL, "fp64_active_percent", 0, 0 },
	{ NVML_GPM_METRIC_FP32_UTIL, "fp32_active_percent", 0, 0 },
	{ NVML_GPM_METRIC_FP16_UTIL, "fp16_active_percent", 0, 0 },
	{ NVML_GPM_METRIC_PCIE_TX_PER_SEC, "pcie_tx_bytes_per_second", 1, 1 },
	{ NVML_GPM_METRIC_PCIE_RX_PER_SEC, "pcie_rx_bytes_per_second", 1, 1 },
	{ NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, "nvlink_tx_bytes_per_second", 1, 0 },
	{ NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, "nvlink_rx_bytes_per_second", 1, 0 },
};

void nv_gpm_resolve(void *dl, struct nv_gpm_api *a)
{
	static const struct {
		size_t off;
		const char *name;
	} syms[] = {
		{ offsetof(struct nv_gpm_api, support), "nvmlGpmQueryDeviceSupport" },
		{ offsetof(struct nv_gpm_api, alloc), "nvmlGpmSampleAlloc" },
		{ offsetof(struct nv_gpm_api, free), "nvmlGpmSampleFree" },
		{ offsetof(struct nv_gpm_api, get), "nvmlGpmSampleGet" },
		{ offsetof(struct nv_gpm_api, mig_get), "nvmlGpmMigSampleGet" },
		{ offsetof(struct nv_gpm_api, metrics), "nvmlGpmMetricsGet" },
		{ offsetof(struct nv_gpm_api, error_string), "nvmlErrorString" },
	};

	memset(a, 0, sizeof(*a));
	for (size_t i = 0; dl && i < ARRAY_SIZE(syms); i++) {
		void *p = dlsym(dl, syms[i].name);

		/* POSIX: a function's address and a void * share one representation. */
		memcpy((char *)a + syms[i].off, &p, sizeof(p));
	}
}

void nv_gpm_init(struct nv_gpm *g)
{
	memset(g, 0, sizeof(*g));
}

void nv_gpm_release(const struct nv_gpm_api *a, struct nv_gpm *g, int keep_state)
{
	int state = g->state, support = g->support;
	char why[sizeof(g->why)];

	memcpy(why, g->why, sizeof(why));
	for (int i = 0; i < 2; i++)
		if (g->smp[i] && a->free)
			NVC(a->lc, a->free, g->smp[i]);
	nv_gpm_init(g);
	if (keep_state) {
		g->state = state;
		g->support = support;
		memcpy(g->why, why, sizeof(why));
	}
}

static int gpm_lost(nvmlReturn_t rc)
{
	return rc == NVML_ERROR_GPU_IS_LOST || rc == NVML_ERROR_RESET_REQUIRED;
}

/* Record that g has no profiling metrics, and why (NVML's words for rc). */
static void gpm_refuse(const struct nv_gpm_api *a, struct nv_gpm *g, const char *what, nvmlReturn_t rc)
{
	const char *s = a->error_string ? a->error_string(rc) : NULL;

	g->state = -1;
	g->have = 0;
	snprintf(g->why, sizeof(g->why), "%s: %s (NVML error %d)", what, s && *s ? s : "error", rc);
}

nvmlReturn_t nv_gpm_query(const struct nv_gpm_api *a, struct nv_gpm *g, nvmlDevice_t h)
{
	nvmlGpmSupport_t sup;
	nvmlReturn_t rc;

	if (g->support)
		return NVML_SUCCESS;
	if (!a->support || !a->alloc || !a->free || !a->get || !a->metrics) {
		g->support = g->state = -1;
		snprintf(g->why, sizeof(g->why), "this NVML library has no GPM functions (GPM needs driver R520 or newer)");
		return NVML_SUCCESS;
	}
	memset(&sup, 0, sizeof(sup));
	sup.version = NVML_GPM_SUPPORT_VERSION;
	rc = NVC(a->lc, a->support, h, &sup);
	if (gpm_lost(rc))
		return rc;
	if (rc != NVML_SUCCESS) {
		gpm_refuse(a, g, "nvmlGpmQueryDeviceSupport", rc);
		g->support = -1;
		return NVML_SUCCESS;
	}
	if (!sup.isSupportedDevice) {
		g->support = g->state = -1;
		snprintf(g->why, sizeof(g->why), "this GPU does not support GPM (Hopper and newer do)");
		return NVML_SUCCESS;
	}
	g->support = g->state = 1;
	g->why[0] = 0;
	return NVML_SUCCESS;
}

/* Compute the metrics between g->smp[g->prev] and next into g->v. NVML_SUCCESS or an error. */
static nvmlReturn_t gpm_compute(const struct nv_gpm_api *a, struct nv_gpm *g, nvmlGpmSample_t next)
{
	nvmlGpmMetricsGet_t mg; /* 3944 bytes */
	nvmlReturn_t rc;

	memset(&mg, 0, sizeof(mg));
	mg.version = NVML_GPM_METRICS_GET_VERSION;
	mg.numMetrics = NV_GPM_NMETRICS;
	mg.sample1 = g->smp[g->prev];
	mg.sample2 = next;
	for (int i = 0; i < NV_GPM_NMETRICS; i++)
		mg.metrics[i].metricId = metrics[i].id;
	rc = NVC(a->lc, a->metrics, &mg);
	if (rc != NVML_SUCCESS)
		return rc;
	g->have = 0;
	for (int i = 0; i < NV_GPM_NMETRICS; i++) {
		double v = mg.metrics[i].value;

		if (mg.metrics[i].nvmlReturn != NVML_SUCCESS || !isfinite(v) || v < 0)
			continue;
		if (metrics[i].rate)
			v = round(v * 1048576.0);
		else if (v > 100)
			v = 100; /* a counter's rounding past the whole period */
		g->v[i] = v;
		g->have |= 1u << i;
	}
	return NVML_SUCCESS;
}

nvmlReturn_t nv_gpm_step(const struct nv_gpm_api *a, struct nv_gpm *g, nvmlDevice_t h, unsigned gi, int64_t now_ns)
{
	int mig = gi != NVML_INVALID_INSTANCE_ID;
	int next;
	nvmlReturn_t rc;

	g->have = 0;
	if (mig && !g->state) {
		if (!a->mig_get || !a->alloc || !a->free || !a->metrics) {
			g->state = -1;
			snprintf(g->why, sizeof(g->why), "this NVML library has no nvmlGpmMigSampleGet");
			return NVML_SUCCESS;
		}
		g->state = 1;
	}
	if (g->state != 1)
		return NVML_SUCCESS;
	if (g->have_prev && now_ns - g->prev_ns <= NV_GPM_MIN_GAP_NS)
		return NVML_SUCCESS; /* too soon: the previous sample stays the baseline */
	next = g->have_prev ? !g->prev : g->prev;
	if (!g->smp[next]) {
		rc = NVC(a->lc, a->alloc, &g->smp[next]);
		if (rc != NVML_SUCCESS) {
			g->smp[next] = NULL;
			gpm_refuse(a, g, "nvmlGpmSampleAlloc", rc);
			return NVML_SUCCESS;
		}
	}
	rc = mig ? NVC(a->lc, a->mig_get, h, gi, g->smp[next]) : NVC(a->lc, a->get, h, g->smp[next]);
	if (gpm_lost(rc))
		return rc;
	if (rc != NVML_SUCCESS) {
		gpm_refuse(a, g, mig ? "nvmlGpmMigSampleGet" : "nvmlGpmSampleGet", rc);
		return NVML_SUCCESS;
	}
	if (g->have_prev) {
		rc = gpm_compute(a, g, g->smp[next]);
		if (rc != NVML_SUCCESS) {
			if (gpm_lost(rc))
				return rc;
			/* One bad pair (a reset between samples): the new sample is the next baseline. */
			log_debug("nvidia: nvmlGpmMetricsGet: NVML error %d", rc);
		}
	}
	g->prev = next;
	g->have_prev = 1;
	g->prev_ns = now_ns;
	return NVML_SUCCESS;
}

/* o[k] = v in place (jset.h): an integer for a rate below 2^53, else a real. */
static void gpm_set(json_t *o, const char *k, double v, int integer)
{
	if (integer && v < 9007199254740992.0)
		jset_int(o, k, (json_int_t)v);
	else
		jset_real(o, k, v);
}

void nv_gpm_put(struct nv_gpm *g, json_t *o, int pcie)
{
	if (!g->have && !g->shown)
		return; /* nothing to write, nothing to drop: a GPU without GPM costs nothing here */
	g->shown = g->have;
	for (int i = 0; i < NV_GPM_NMETRICS; i++) {
		if (metrics[i].pcie && !pcie)
			continue;
		if (g->have & (1u << i))
			gpm_set(o, metrics[i].field, g->v[i], metrics[i].rate);
		else if (!metrics[i].pcie || pcie == 2)
			json_object_del(o, metrics[i].field);
	}
}

int nv_gpm_gives_pcie(const struct nv_gpm *g)
{
	unsigned want = 0;

	for (int i = 0; i < NV_GPM_NMETRICS; i++)
		if (metrics[i].pcie)
			want |= 1u << i;
	return g->state == 1 && (g->have & want) == want;
}

void nv_gpm_put_info(const struct nv_gpm *g, json_t *o)
{
	if (g->state >= 0 || !g->why[0])
		json_object_del(o, "profiling_unavailable");
	else
		jset_str(o, "profiling_unavailable", g->why);
}
