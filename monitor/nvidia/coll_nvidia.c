/* SPDX-License-Identifier: MIT */
/*
 * NVIDIA GPUs through NVML (device type "nvidia"; docs/nvidia.md lists every
 * field, its NVML call and unit).
 *
 * libnvidia-ml.so.1 is opened with dlopen (the block's "library" key, then
 * ACCEL_NVML_LIBRARY, override the path) and its symbols resolved with
 * fallbacks, newest first (nvmlInit_v2 -> nvmlInit, ..._v3 -> _v2 -> v1);
 * the ABI is declared by hand in nvml.h. No library, or no driver, is the
 * entry's "error"; the rest of accel-monitor runs, and loading is retried
 * every NV_RETRY_S seconds.
 *
 * Per device, and per field: NOT_SUPPORTED (or a symbol this driver lacks)
 * leaves the field out; GPU_IS_LOST makes that device's "error" while the
 * others report, drops its handle, and the handle is looked up again once
 * per cycle until the GPU answers (checking that the same UUID came back).
 * Handles are otherwise looked up once, at open.
 *
 * The steady state allocates nothing: each group keeps its "devices" object
 * between cycles and lends it to the report (json_object_set), values are
 * updated in place, and the process-list buffers only grow, when NVML says
 * INSUFFICIENT_SIZE. Keys are created or deleted only when a field appears
 * or disappears.
 *
 * Counters (energy, ECC, PCIe replays) are reported as the increase over the
 * group's period next to NVML's running total; a counter that went
 * backwards (driver reload, reset) starts afresh and never yields a
 * negative increase. Baselines are taken at open, so the first period has
 * data; after a GPU comes back, the first period after its return has
 * totals only.
 *
 * MIG instances (device entries "<gpu>/<gi>/<ci>") and GPM profiling
 * metrics live in nvidia_mig.c and nvidia_gpm.c; nvx_collect hooks them in
 * after each GPU's fields of a group. NVML events (XIDs and the rest, waited
 * for on a thread), NVLink, and the worker pool that reads every GPU's PCIe
 * throughput at once live in nvidia_events.c, nvidia_links.c and
 * nvidia_pool.c.
 */
#include "../core/collector.h"
#include "../core/config.h"
#include "../core/energy.h"
#include "nvml.h"
#include "nvidia_gpm.h"
#include "nvidia_mig.h"
#include "../host/host.h"
/* events, NVLink */
#include "../core/loop.h"
#include "nvidia_config.h"
#include "nvidia_events.h"
#include "nvidia_links.h"
#include "nvidia_pool.h"
#include "nvidia_ledger.h"
#include "../../common/jset.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NV_DEFAULT_LIBRARY "libnvidia-ml.so.1"
#define NV_RETRY_S 10          /* seconds between attempts to load NVML */
#define NV_PROC_START 32       /* process entries per device, first allocation */
#define NV_PROC_MAX 65536      /* process entries per device, at most */
#define NV_PROCS_FRESH_NS (250 * NS_PER_MS) /* proc_memory reuses a process list this recent */
#define NV_NGROUPS (GROUP_DEVICE_ERRORS - GROUP_DEVICE_INFO + 1)
_Static_assert(NV_NGROUPS == 7, "the device groups are contiguous in enum group_id, device_info first");

/* The NVML entry points, resolved once; NULL when the library lacks them. */
struct nvml_api {
	void *dl;
	nvml_init_fn init, shutdown;
	nvml_error_string_fn error_string;
	nvml_sys_string_fn driver_version, nvml_version;
	nvml_sys_int_fn cuda_version;
	nvml_count_fn count;
	nvml_handle_fn handle;
	nvml_dev_string_fn name, uuid, serial;
	nvml_pci_fn pci;
	nvml_util_fn util;
	nvml_codec_fn enc, dec;
	nvml_mem_fn mem;
	nvml_mem2_fn mem2;
	nvml_temp_fn temp;
	nvml_fields_fn fields;
	nvml_uint_fn power, power_limit, fan, replay, mig_count, gi_id, ci_id;
	nvml_ull_fn energy, reasons;
	nvml_clock_fn clock;
	nvml_ecc_fn ecc;
	nvml_pcie_fn pcie;
	nvml_procs_fn procs;
	nvml_putil_fn putil;
	nvml_remap_fn remap;
	nvml_mig_mode_fn mig_mode;
	nvml_mig_handle_fn mig_handle;
	size_t proc_stride; /* bytes per process entry of the procs symbol resolved */
};

/* Symbols, each with its fallbacks newest first. */
static const struct nv_sym {
	size_t off;
	const char *names[3];
} nv_syms[] = {
#define S(field, ...) { offsetof(struct nvml_api, field), { __VA_ARGS__ } }
	S(init, "nvmlInit_v2", "nvmlInit"),
	S(shutdown, "nvmlShutdown"),
	S(error_string, "nvmlErrorString"),
	S(driver_version, "nvmlSystemGetDriverVersion"),
	S(nvml_version, "nvmlSystemGetNVMLVersion"),
	S(cuda_version, "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"),
	S(count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"),
	S(handle, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"),
	S(name, "nvmlDeviceGetName"),
	S(uuid, "nvmlDeviceGetUUID"),
	S(serial, "nvmlDeviceGetSerial"),
	S(pci, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"),
	S(util, "nvmlDeviceGetUtilizationRates"),
	S(enc, "nvmlDeviceGetEncoderUtilization"),
	S(dec, "nvmlDeviceGetDecoderUtilization"),
	S(mem, "nvmlDeviceGetMemoryInfo"),
	S(mem2, "nvmlDeviceGetMemoryInfo_v2"),
	S(temp, "nvmlDeviceGetTemperature"),
	S(fields, "nvmlDeviceGetFieldValues"),
	S(power, "nvmlDeviceGetPowerUsage"),
	S(power_limit, "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetPowerManagementLimit"),
	S(fan, "nvmlDeviceGetFanSpeed"),
	S(replay, "nvmlDeviceGetPcieReplayCounter"),
	S(mig_count, "nvmlDeviceGetMaxMigDeviceCount"),
	S(gi_id, "nvmlDeviceGetGpuInstanceId"),
	S(ci_id, "nvmlDeviceGetComputeInstanceId"),
	S(energy, "nvmlDeviceGetTotalEnergyConsumption"),
	S(reasons, "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"),
	S(clock, "nvmlDeviceGetClockInfo"),
	S(ecc, "nvmlDeviceGetTotalEccErrors"),
	S(pcie, "nvmlDeviceGetPcieThroughput"),
	/* _v3 and _v2 fill nvmlProcessInfo_v2_t, v1 nvmlProcessInfo_v1_t (proc_stride). */
	S(procs, "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
	  "nvmlDeviceGetComputeRunningProcesses"),
	S(putil, "nvmlDeviceGetProcessUtilization"),
	S(remap, "nvmlDeviceGetRemappedRows"),
	S(mig_mode, "nvmlDeviceGetMigMode"),
	S(mig_handle, "nvmlDeviceGetMigDeviceHandleByIndex"),
#undef S
};

/* A device counter: the last raw reading, and whether there is one. */
struct ctr {
	uint64_t last;
	int have;
};

/* Counters kept per device, baselines for the per-period increases. */
enum { C_ENERGY, C_ECC_CV, C_ECC_UV, C_ECC_CA, C_ECC_UA, C_REPLAY, C_COUNT };

/* Reads on the slow cadence ("slow_period"), each with its own clock per device. */
enum { SR_ENERGY, SR_REPLAY, SR_MEMTEMP, SR_RETIRED, SR_MEM2, SR_FAN, SR_COUNT };

/* Static values, read again at their next use after a refresh marked them (nv_dev.stale). */
enum { ST_LIMIT = 1, ST_MIG = 2, ST_TOTAL = 4, ST_ALL = 7 };

/*
 * The energy counter between its reads: the running total reported is the
 * counter at its last read plus the power readings integrated since
 * (trapezoids between cycles), re-anchored to the counter at each read.
 * The counter stays in integer mJ and its steps are taken in integers
 * (a double loses whole joules near 2^64); what the estimates add is a
 * small double beside it.
 */
struct nv_energy {
	int have;          /* counter was read: the running total is counter + ahead_mj */
	uint64_t counter;  /* the counter at its last read (mJ) */
	int64_t c_ns;      /* when (CLOCK_MONOTONIC) */
	double ahead_mj;   /* the running total's excess over the counter: estimates not yet matched (mJ, >= 0) */
	double owed_mj;    /* the estimate ran this far past the counter: taken off the next estimates (mJ) */
	int from_power;    /* opened without reading the counter: power alone until its first read (no total) */
	int have_p;        /* p_mw was read at p_ns */
	unsigned p_mw;     /* the last power reading (mW) */
	int64_t p_ns;      /* when (CLOCK_MONOTONIC) */
	char why[160];     /* why energy_anchor refused the last reading (NV_E_REFUSED) */
};

struct nv_proc {
	unsigned pid;
	uint64_t bytes;
};

struct nv_dev {
	unsigned index;
	nvmlDevice_t h;          /* NULL: not looked up yet, or lost */
	int have_ident;          /* uuid/name/pci below were read */
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	char serial[NVML_DEVICE_SERIAL_BUFFER_SIZE + 2];
	char pci[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE + 1];
	int have_serial, have_pci, have_name;
	char err[256];           /* why it cannot be read now; "" when fine */
	int64_t tried_cycle;     /* the cycle of the last handle lookup that failed */
	struct ctr c[C_COUNT];
	int mem_v1;              /* nvmlDeviceGetMemoryInfo_v2 refused: use v1 */
	/* cadences (docs/nvidia.md, "What each cycle costs") */
	uint32_t unsup;          /* bit f: field f answered NOT_SUPPORTED, not asked again until the static refresh */
	unsigned stale;          /* ST_* bits: static values to read again at their next use */
	int64_t static_ns;       /* when the static values were last marked stale (CLOCK_MONOTONIC; 0: never) */
	int64_t slow_ns[SR_COUNT]; /* when each slow read was last made (0: never: due) */
	unsigned limit_mw;       /* static: the power limit, when have_limit */
	unsigned mig_cur;        /* static: the MIG mode (NVML_FEATURE_*), when have_mig */
	int have_limit, have_mig;
	uint64_t mem_total;      /* static: memory total, when have_total */
	int have_total;
	int64_t reserved;        /* slow: reserved memory from nvmlDeviceGetMemoryInfo_v2; -1 unknown */
	uint64_t memtemp;        /* slow: the memory temperature, when have_memtemp */
	int have_memtemp;
	unsigned fan;            /* slow: the fan speed (percent), when have_fan */
	int have_fan;
	unsigned replay;         /* slow: the PCIe replay counter at its last read, when have_replay */
	int have_replay;
	uint64_t retired[3];     /* slow: retired pages (SBE, DBE, pending), retired_r[k]: read */
	int retired_r[3];
	struct nv_energy energy; /* the energy counter and its estimate between reads */
	/* compute processes: the raw NVML buffer and the parsed list */
	void *pbuf;
	unsigned pcap;           /* entries pbuf holds */
	struct nv_proc *procs;
	unsigned nprocs, aprocs;
	int procs_ok;            /* the list was read */
	int64_t procs_ns;        /* when (monotonic) */
	/* the split of device_power's energy among the processes (nv_energy_split) */
	nvmlProcessUtilizationSample_t *ubuf; /* per-process utilization samples */
	unsigned ucap;           /* samples ubuf holds */
	unsigned long long useen; /* the newest sample's timeStamp taken so far (µs) */
	struct energy_share *shares;
	size_t ashares;
	unsigned min_mw;         /* the lowest power reading seen: the measured idle power, when have_min */
	int have_min;
	int64_t split_ns;        /* the cycle of the last split (monotonic; 0: none yet) */
	uint32_t warned;         /* fields whose unexpected error was logged */
	/* this device's object in each group's "devices" (borrowed from the holder) */
	json_t *obj[NV_NGROUPS];
	int obj_err[NV_NGROUPS]; /* the object holds an error, no data */
	/* MIG instances and GPM (nvidia_mig.c, nvidia_gpm.c) */
	struct nv_mig *mig;      /* its MIG instances' state */
	struct nv_gpm gpm;       /* the whole GPU's profiling sampler */
};

struct nv_state {
	const struct cfg_device *cfg; /* borrowed */
	struct nvml_api api;
	int ready;               /* the library is loaded, initialized and the devices enumerated */
	int64_t tried_ns;        /* last attempt to load (monotonic) */
	char error[512];         /* why the whole kind cannot be read; "" when ready */
	char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE + 1];
	char nvml[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE + 1];
	char cuda[16];
	struct nv_dev *devs;
	size_t ndevs;
	json_t *holder[NV_NGROUPS]; /* {"devices": {...}}, kept between cycles */
	/* events, NVLink, the PCIe worker pool */
	struct loop *loop;          /* the producer's (borrowed; NULL in tests that drive the ops) */
	struct host *host;          /* the producer's (borrowed): the energy ledger (host_energy) */
	struct nv_events *events;   /* NULL unless device_errors is collected */
	struct nv_links *links;
	struct nv_pool *pool;       /* NULL unless device_utilization is collected and NVML has the call */
	struct mon_fetch *fetch;    /* device_utilization's fetch waiting for the pool (borrowed) */
	nvmlDevice_t *pcie_h;       /* ndevs handles, for the pool */
	struct loop_timer pcie_timer; /* answers the fetch at its deadline with the calls that returned */
	int pcie;                   /* NV_PCIE_*: where this cycle's PCIe throughput comes from */
	int64_t cycle_ns;           /* the cycle being collected (CLOCK_MONOTONIC) */
	json_t *group;              /* the group being collected (borrowed, in collect): its error */
	int idle_told;              /* an idle_power_watts key that names no GPU was logged */
	struct log_limit pcie_lim;
	/* MIG instances and GPM */
	struct nv_gpm_api gpm_api;
	struct nv_mig_api mig_api;
	/* the call ledger (nvidia_ledger.h): NULL unless ACCEL_NVML_LEDGER is set */
	struct nv_ledger *ledger;
	struct nv_lctx lc;          /* the producer thread's calls */
	int64_t ledger_cycle;       /* the last cycle counted (CLOCK_MONOTONIC) */
	/* cadences: 0 = every cycle ("slow_period": "period") */
	int64_t slow_every;         /* ns between two slow reads of a device */
	int64_t static_every;       /* ns between two refreshes of the static values */
	int64_t pcie_ns;            /* when the PCIe worker pool's last batch started (0: never) */
	int64_t origin_ns;          /* the first cycle once NVML was up: where every GPU's slots are counted from */
	int have_origin;
};

/* The producer thread's call context, for NVL and NVC (nvidia_ledger.h). */
#define NV_LC (&s->lc)

/*
 * s->pcie: this cycle's PCIe batch is to be started at collect, or was
 * started by the fetch, or is not due (the last batch's results stand).
 */
enum { NV_PCIE_NONE, NV_PCIE_FETCHED, NV_PCIE_KEEP };

/* ---- loading ------------------------------------------------------------- */

#define NV_STATIC_S 60           /* seconds between refreshes of the static values (not with "period") */
#define NV_SLACK_NS (50 * NS_PER_MS) /* a slow read this early is due already (cycles' jitter) */

/*
 * The NVML library to load: the block's "library", else ACCEL_NVML_LIBRARY,
 * else libnvidia-ml.so.1 (dev is NULL when "auto" probes).
 */
static const char *nv_library_path(const struct cfg_device *dev)
{
	const struct nv_conf *c = dev ? dev->own : NULL;
	const char *p = getenv("ACCEL_NVML_LIBRARY");

	if (c && c->library)
		return c->library;
	return p && *p ? p : NV_DEFAULT_LIBRARY;
}

/* Resolve every symbol (dl must be open); api->procs also sets proc_stride. */
static void nv_resolve(struct nvml_api *api)
{
	for (size_t i = 0; i < ARRAY_SIZE(nv_syms); i++) {
		void *p = NULL;
		size_t k;

		for (k = 0; k < 3 && nv_syms[i].names[k] && !p; k++)
			p = dlsym(api->dl, nv_syms[i].names[k]);
		/* POSIX: a function's address and a void * share one representation. */
		memcpy((char *)api + nv_syms[i].off, &p, sizeof(p));
		if (p && nv_syms[i].off == offsetof(struct nvml_api, procs))
			api->proc_stride = k == 3 ? sizeof(nvmlProcessInfo_v1_t) : sizeof(nvmlProcessInfo_v2_t);
	}
}

static const char *nv_strerror(const struct nvml_api *api, nvmlReturn_t rc, char *dst, size_t size)
{
	const char *s = api->error_string ? api->error_string(rc) : NULL;

	snprintf(dst, size, "%s (NVML error %d)", s && *s ? s : "error", rc);
	return dst;
}

/*
 * Open the library (dev's, or NULL: the environment's or the default) and
 * start NVML. 0, or -1 with why in err. On failure nothing stays open.
 */
static int nv_load(struct nvml_api *api, struct nv_lctx *lc, const struct cfg_device *dev, char *err,
		   size_t errsz)
{
	const char *path = nv_library_path(dev);
	nvmlReturn_t rc;
	char why[160];

	memset(api, 0, sizeof(*api));
	api->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!api->dl) {
		const char *e = dlerror();

		snprintf(err, errsz, "NVML not found: %s", e ? e : path);
		return -1;
	}
	nv_resolve(api);
	if (!api->init || !api->count || !api->handle) {
		snprintf(err, errsz, "NVML library %s lacks nvmlInit, nvmlDeviceGetCount or nvmlDeviceGetHandleByIndex",
			 path);
		goto fail;
	}
	rc = NVL(lc, api->init, api->init());
	if (rc != NVML_SUCCESS) {
		snprintf(err, errsz, "NVML cannot start: %s", nv_strerror(api, rc, why, sizeof(why)));
		goto fail;
	}
	return 0;
fail:
	dlclose(api->dl);
	memset(api, 0, sizeof(*api));
	return -1;
}

static void nv_unload(struct nvml_api *api, struct nv_lctx *lc)
{
	if (!api->dl)
		return;
	if (api->shutdown)
		NVL(lc, api->shutdown, api->shutdown());
	dlclose(api->dl);
	memset(api, 0, sizeof(*api));
}

/* ---- field results ------------------------------------------------------- */

/* Fields, for logging an unexpected error once per device and field. */
enum nv_field {
	NF_IDENT, NF_UTIL, NF_ENC, NF_DEC, NF_PCIE, NF_MEM, NF_PROCS, NF_MIG, NF_TEMP, NF_FIELDS, NF_FAN,
	NF_REASONS, NF_POWER, NF_ENERGY, NF_LIMIT, NF_CLOCK, NF_ECC, NF_REPLAY, NF_REMAP, NF_EVENTS,
	NF_MEMTEMP, NF_RETIRED, NF_CLOCK_SM, NF_CLOCK_MEM, NF_CLOCK_VIDEO, NF_PUTIL,
};
_Static_assert(NF_PUTIL < 32, "nv_dev.warned and .unsup hold a bit per field");

/* Is field f of device d asked this cycle? Not after NOT_SUPPORTED, until the static refresh. */
#define ASKS(f) (!(d->unsup & (1u << (f))))

static int nv_is_lost(nvmlReturn_t rc)
{
	return rc == NVML_ERROR_GPU_IS_LOST || rc == NVML_ERROR_RESET_REQUIRED;
}

static void nv_lose(struct nv_state *s, struct nv_dev *d, nvmlReturn_t rc)
{
	char why[160];

	snprintf(d->err, sizeof(d->err), "%s; it is looked up again each period",
		 nv_strerror(&s->api, rc, why, sizeof(why)));
	if (d->h) {
		log_warn("nvidia: GPU %u (%s): %s", d->index, d->uuid, d->err);
		nv_events_lost(s->events, (size_t)(d - s->devs)); /* events */
		nv_links_reset(s->links, (size_t)(d - s->devs));
	}
	d->h = NULL;
}

/*
 * Classify one NVML result for a field of device d: 1 the value was read;
 * 0 the field is absent (not supported, not permitted, or another error,
 * logged once); -1 the device is lost (d->err says why).
 */
static int nv_ok(struct nv_state *s, struct nv_dev *d, nvmlReturn_t rc, enum nv_field f)
{
	char why[160];

	if (rc == NVML_SUCCESS)
		return 1;
	if (nv_is_lost(rc)) {
		nv_lose(s, d, rc);
		return -1;
	}
	if ((rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND) && s->static_every)
		d->unsup |= 1u << f; /* not asked again until the static refresh */
	if (rc != NVML_ERROR_NOT_SUPPORTED && rc != NVML_ERROR_FUNCTION_NOT_FOUND && rc != NVML_ERROR_NO_PERMISSION &&
	    rc != NVML_ERROR_NOT_FOUND && rc != NVML_ERROR_NO_DATA && !(d->warned & (1u << f))) {
		d->warned |= 1u << f;
		log_warn("nvidia: GPU %u: field %d: %s; left out of the report", d->index, (int)f,
			 nv_strerror(&s->api, rc, why, sizeof(why)));
	}
	return 0;
}

/* Feed a counter reading; 1 and *delta when there was a baseline. Backwards means a fresh start. */
static int ctr_step(struct ctr *c, uint64_t v, uint64_t *delta)
{
	int had = c->have;

	*delta = v >= c->last ? v - c->last : v;
	c->last = v;
	c->have = 1;
	return had;
}

/* ---- cadences ------------------------------------------------------------ */

/* A read's *last when it was made at open (the start's baselines): its slot is the first cycle's. */
#define NV_AT_OPEN ((int64_t)-1)

/*
 * The slot of time t for GPU d on a cadence of `every` ns: GPU k of n
 * counts its slots of `every` from the first cycle plus every * (k + 1) /
 * (n + 1), so the GPUs' slow reads fall in different cycles (n reads
 * spread over a slow period instead of n in one cycle), none of them in
 * the first cycle. A cycle up to NV_SLACK_NS early (jitter) counts as in
 * the next slot.
 */
static int64_t nv_slot(const struct nv_state *s, const struct nv_dev *d, int64_t t, int64_t every)
{
	int64_t k = d - s->devs, n = (int64_t)s->ndevs;
	int64_t x = t + NV_SLACK_NS - s->origin_ns - every / (n + 1) * (k + 1);

	return x >= 0 ? x / every : -((every - 1 - x) / every);
}

/*
 * Is GPU d's read made last at *last (0: never; NV_AT_OPEN: at open) due in
 * this cycle, on a cadence of one every `every` ns (0: every cycle)? It is
 * when it was never made, or when the cycle is in a later slot of d's
 * (nv_slot) than that read: exactly one read per slot. When it is due,
 * *last becomes the cycle's time.
 */
static int nv_due(const struct nv_state *s, const struct nv_dev *d, int64_t *last, int64_t every)
{
	if (every > 0 && *last &&
	    nv_slot(s, d, s->cycle_ns, every) == nv_slot(s, d, *last == NV_AT_OPEN ? s->origin_ns : *last, every))
		return 0;
	*last = s->cycle_ns;
	return 1;
}

/* Forget what device d's cadences kept: at open, and when it answers again (another GPU, perhaps). */
static void dev_cadence_reset(struct nv_dev *d)
{
	d->unsup = 0;
	d->stale = ST_ALL;
	d->static_ns = 0;
	memset(d->slow_ns, 0, sizeof(d->slow_ns));
	d->have_limit = d->have_mig = d->have_total = d->have_memtemp = d->have_replay = d->have_fan = 0;
	d->reserved = -1;
	memset(d->retired_r, 0, sizeof(d->retired_r));
	memset(&d->energy, 0, sizeof(d->energy));
}

#define NV_E_BASELINE (-1.0) /* energy_anchor: the first reading */
#define NV_E_REFUSED (-2.0)  /* energy_anchor: a step energy_counter_step refused (e->why) */

/*
 * A reading of the energy counter (mJ) at now_ns on a GPU whose power
 * limit is max_w (W; 0: unknown): the increase since the running total
 * reported last (mJ), NV_E_BASELINE for the first reading, or
 * NV_E_REFUSED when the step is not plausible (energy_counter_step: a step
 * back, a jump past the power limit): the period has no energy and the
 * counter starts afresh from this reading. The total never goes back
 * while the counter goes forward: when the estimate ran past the counter,
 * the increase is 0 and the excess is taken off the next estimates.
 */
static double energy_anchor(struct nv_energy *e, uint64_t mj, int64_t now_ns, double max_w)
{
	int refused = 0;
	uint64_t d = 0;
	double inc;

	if (e->have && energy_counter_step(e->counter, mj, 0, 1e-3,
					   now_ns > e->c_ns ? (double)(now_ns - e->c_ns) / (double)NS_PER_S : 0,
					   max_w, &d, e->why, sizeof(e->why))) {
		e->have = 0;
		refused = 1;
	}
	if (!e->have) {
		e->have = 1;
		e->counter = mj;
		e->c_ns = now_ns;
		e->ahead_mj = e->owed_mj = 0;
		return refused ? NV_E_REFUSED : NV_E_BASELINE;
	}
	if ((double)d >= e->ahead_mj) {
		inc = (double)d - e->ahead_mj;
		e->ahead_mj = e->owed_mj = 0;
	} else {
		inc = 0;
		e->ahead_mj = e->owed_mj = e->ahead_mj - (double)d;
	}
	e->counter = mj;
	e->c_ns = now_ns;
	return inc;
}

/* An estimate between counter readings (mJ over the period, from the power readings): what is reported. */
static double energy_estimate(struct nv_energy *e, double est)
{
	double take = est - e->owed_mj;

	if (take < 0) {
		e->owed_mj = -take;
		take = 0;
	} else {
		e->owed_mj = 0;
	}
	e->ahead_mj += take;
	return take;
}

/* ---- JSON kept between cycles: common/jset.h ----------------------------- */

/* Drop o[k] when it ended up empty. */
static void drop_if_empty(json_t *o, const char *k)
{
	json_t *j = json_object_get(o, k);

	if (j && json_is_object(j) && json_object_size(j) == 0)
		json_object_del(o, k);
}

/* The identity object device_entry() makes, into obj (emptied first). */
static void dev_obj_fill(struct nv_dev *d, json_t *obj)
{
	json_t *tmp = json_object(), *fresh;

	fresh = device_entry(tmp, d->index, d->have_ident ? d->uuid : NULL, d->have_pci ? d->pci : NULL,
			     d->have_name ? d->name : NULL);
	json_object_clear(obj);
	json_object_update(obj, fresh);
	json_decref(tmp);
}

/* Device d's object in group g, created on first use; data fields cleared when it held an error. */
static json_t *dev_obj(struct nv_state *s, struct nv_dev *d, int g)
{
	if (!d->obj[g]) {
		d->obj[g] = device_entry(s->holder[g], d->index, d->have_ident ? d->uuid : NULL,
					 d->have_pci ? d->pci : NULL, d->have_name ? d->name : NULL);
		d->obj_err[g] = 0;
	} else if (d->obj_err[g]) {
		dev_obj_fill(d, d->obj[g]);
		d->obj_err[g] = 0;
	}
	return d->obj[g];
}

/* Device d's object in group g reduced to its identity and error. */
static void dev_obj_error(struct nv_state *s, struct nv_dev *d, int g)
{
	json_t *o;

	if (!d->obj[g]) {
		o = dev_obj(s, d, g);
	} else {
		o = d->obj[g];
		if (!d->obj_err[g])
			dev_obj_fill(d, o);
	}
	if (strcmp(json_string_value(json_object_get(o, "error")), d->err))
		set_error(o, "%s", d->err);
	d->obj_err[g] = 1;
}

/* Identity changed (first read, or another GPU at this index): rebuild every object. */
static void dev_obj_refresh(struct nv_dev *d)
{
	for (int g = 0; g < NV_NGROUPS; g++)
		if (d->obj[g]) {
			dev_obj_fill(d, d->obj[g]);
			d->obj_err[g] = 0;
		}
}

/* ---- devices ------------------------------------------------------------- */

/* Read name, UUID, serial and PCI bus id of d->h into the scratch fields of t. -1 when lost. */
static int dev_read_ident(struct nv_state *s, struct nv_dev *d, struct nv_dev *t)
{
	const struct nvml_api *a = &s->api;
	nvmlPciInfo_t pci;
	int r;

	memset(t->uuid, 0, sizeof(t->uuid));
	memset(t->name, 0, sizeof(t->name));
	memset(t->serial, 0, sizeof(t->serial));
	t->have_ident = t->have_name = t->have_serial = t->have_pci = 0;
	if (a->uuid) {
		if ((r = nv_ok(s, d, NVC(NV_LC, a->uuid, d->h, t->uuid, sizeof(t->uuid) - 1), NF_IDENT)) < 0)
			return -1;
		t->have_ident = r && t->uuid[0];
	}
	if (a->name) {
		if ((r = nv_ok(s, d, NVC(NV_LC, a->name, d->h, t->name, sizeof(t->name) - 1), NF_IDENT)) < 0)
			return -1;
		t->have_name = r && t->name[0];
	}
	if (a->serial) {
		if ((r = nv_ok(s, d, NVC(NV_LC, a->serial, d->h, t->serial, NVML_DEVICE_SERIAL_BUFFER_SIZE), NF_IDENT)) < 0)
			return -1;
		t->have_serial = r && t->serial[0];
	}
	if (a->pci) {
		memset(&pci, 0, sizeof(pci));
		if ((r = nv_ok(s, d, NVC(NV_LC, a->pci, d->h, &pci), NF_IDENT)) < 0)
			return -1;
		pci.busId[sizeof(pci.busId) - 1] = 0;
		snprintf(t->pci, sizeof(t->pci), "%s", pci.busId);
		t->have_pci = r && t->pci[0];
	}
	return 0;
}

static void dev_take_ident(struct nv_dev *d, const struct nv_dev *t)
{
	memcpy(d->uuid, t->uuid, sizeof(d->uuid));
	memcpy(d->name, t->name, sizeof(d->name));
	memcpy(d->serial, t->serial, sizeof(d->serial));
	memcpy(d->pci, t->pci, sizeof(d->pci));
	d->have_ident = t->have_ident;
	d->have_name = t->have_name;
	d->have_serial = t->have_serial;
	d->have_pci = t->have_pci;
}

/* events. Register d for events (nvidia_events.c); a no-op until the event module is up. */
static void dev_register_xid(struct nv_state *s, struct nv_dev *d)
{
	if (d->h)
		nv_events_register(s->events, (size_t)(d - s->devs), d->index, d->h);
}

/*
 * Take device d's handle and identity. 1 done, 0 not (d->err says why).
 * Another GPU at the same index (a different UUID) starts afresh. Counter
 * baselines are dropped: after a loss they may span any time, so the first
 * period back has totals only.
 */
static int dev_lookup(struct nv_state *s, struct nv_dev *d)
{
	struct nv_dev t;
	nvmlDevice_t h = NULL;
	nvmlReturn_t rc;
	char why[160];

	rc = NVC(NV_LC, s->api.handle, d->index, &h);
	if (rc != NVML_SUCCESS || !h) {
		snprintf(d->err, sizeof(d->err), "%s; it is looked up again each period",
			 nv_strerror(&s->api, rc == NVML_SUCCESS ? NVML_ERROR_UNKNOWN : rc, why, sizeof(why)));
		return 0;
	}
	d->h = h;
	if (dev_read_ident(s, d, &t))
		return 0;
	if (d->have_ident && t.have_ident && strcmp(d->uuid, t.uuid)) {
		log_warn("nvidia: GPU %u was %s and is now %s", d->index, d->uuid, t.uuid);
		if (!cfg_device_selects(s->cfg, d->index, t.uuid, t.have_serial ? t.serial : NULL)) {
			snprintf(d->err, sizeof(d->err), "index %u now holds %s, which \"select\" does not list",
				 d->index, t.uuid);
			d->h = NULL;
			return 0;
		}
		d->mem_v1 = 0;
		nv_links_reset(s->links, (size_t)(d - s->devs)); /* NVLink */
	}
	if (d->have_ident != t.have_ident || strcmp(d->uuid, t.uuid) || strcmp(d->name, t.name) ||
	    strcmp(d->pci, t.pci)) {
		dev_take_ident(d, &t);
		dev_obj_refresh(d);
	} else {
		dev_take_ident(d, &t);
	}
	memset(d->c, 0, sizeof(d->c));
	dev_cadence_reset(d);
	d->procs_ok = 0;
	d->err[0] = 0;
	dev_register_xid(s, d);
	nv_mig_reset(d->mig, &s->gpm_api); /* MIG handles and GPM samples start afresh */
	nv_gpm_release(&s->gpm_api, &d->gpm, 0);
	return 1;
}

/* Device d has a handle, or gets one: looked up again at most once per cycle after a loss. */
static int dev_ready(struct nv_state *s, struct nv_dev *d, int64_t cycle)
{
	if (d->h)
		return 1;
	if (d->tried_cycle == cycle)
		return 0;
	d->tried_cycle = cycle;
	if (!dev_lookup(s, d))
		return 0;
	log_warn("nvidia: GPU %u (%s) answers again", d->index, d->uuid);
	return 1;
}

/*
 * Enumerate the devices "select" names and take their handles and
 * identities. 0, or -1 with s->error set.
 */
static int nv_enumerate(struct nv_state *s)
{
	const struct cfg_device *cfg = s->cfg;
	unsigned n = 0;
	nvmlReturn_t rc;
	char why[160];

	rc = NVC(NV_LC, s->api.count, &n);
	if (rc != NVML_SUCCESS) {
		snprintf(s->error, sizeof(s->error), "cannot count NVIDIA devices: %s",
			 nv_strerror(&s->api, rc, why, sizeof(why)));
		return -1;
	}
	s->devs = xcalloc(n ? n : 1, sizeof(*s->devs));
	s->ndevs = 0;
	for (unsigned i = 0; i < n; i++) {
		struct nv_dev *d = &s->devs[s->ndevs];

		memset(d, 0, sizeof(*d));
		d->index = i;
		d->tried_cycle = INT64_MIN;
		if (!dev_lookup(s, d)) {
			/* Not answering: kept when "select" can name it without its identity. */
			if (!cfg_device_selects(cfg, i, NULL, NULL)) {
				log_warn("nvidia: GPU %u does not answer (%s) and \"select\" names GPUs by UUID or "
					 "serial: it is left out",
					 i, d->err);
				continue;
			}
		} else if (!cfg_device_selects(cfg, i, d->have_ident ? d->uuid : NULL,
					       d->have_serial ? d->serial : NULL)) {
			continue;
		}
		d->pcap = NV_PROC_START;
		d->pbuf = xcalloc(d->pcap, sizeof(nvmlProcessInfo_v2_t));
		s->ndevs++;
	}
	for (size_t i = 0; i < cfg->nids; i++) {
		size_t k;

		for (k = 0; k < s->ndevs; k++)
			if (!strcmp(s->devs[k].uuid, cfg->ids[i]) || !strcmp(s->devs[k].serial, cfg->ids[i]))
				break;
		if (k == s->ndevs)
			log_warn("nvidia: \"select\" lists %s, which no NVIDIA device has", cfg->ids[i]);
	}
	for (size_t i = 0; i < cfg->nindices; i++)
		if (cfg->indices[i] >= (long)n)
			log_warn("nvidia: \"select\" lists device %ld, but NVML counts %u", cfg->indices[i], n);
	return 0;
}

static void dev_prime(struct nv_state *s, struct nv_dev *d);

/* Does the device block collect group id? */
static int nv_wants(const struct nv_state *s, enum group_id id)
{
	for (size_t i = 0; i < s->cfg->ngroups; i++)
		if (s->cfg->groups[i].id == id)
			return 1;
	return 0;
}

/*
 * Once the library is up: the host-wide strings, the GPM and MIG entry
 * points, the devices, the event thread (for device_errors), NVLink, the
 * PCIe worker pool, and with prime the counter baselines (at open: the
 * first period then has increases; a late start has totals only).
 */
static int nv_start(struct nv_state *s, int prime)
{
	const struct nvml_api *a = &s->api;
	int v = 0;

	s->driver[0] = s->nvml[0] = s->cuda[0] = 0;
	if (a->driver_version && NVC(NV_LC, a->driver_version, s->driver, sizeof(s->driver) - 1) != NVML_SUCCESS)
		s->driver[0] = 0;
	if (a->nvml_version && NVC(NV_LC, a->nvml_version, s->nvml, sizeof(s->nvml) - 1) != NVML_SUCCESS)
		s->nvml[0] = 0;
	if (a->cuda_version && NVC(NV_LC, a->cuda_version, &v) == NVML_SUCCESS && v > 0)
		snprintf(s->cuda, sizeof(s->cuda), "%d.%d", v / 1000, (v % 1000) / 10);
	nv_gpm_resolve(s->api.dl, &s->gpm_api); /* before the devices, whose lookup may release samples */
	nv_mig_resolve(s->api.dl, &s->mig_api);
	s->gpm_api.lc = s->mig_api.lc = &s->lc; /* the ledger */
	if (nv_enumerate(s))
		return -1;
	for (size_t i = 0; i < s->ndevs; i++)
		s->devs[i].mig = nv_mig_new();
	/* events (a thread waits on the set), NVLink, the PCIe worker pool. */
	if (nv_wants(s, GROUP_DEVICE_ERRORS))
		s->events = nv_events_new(a->dl, s->loop, s->ndevs, &s->lc);
	s->links = nv_links_new(a->dl, s->ndevs, &s->lc);
	if (a->pcie && nv_wants(s, GROUP_DEVICE_UTILIZATION)) {
		s->pool = nv_pool_new(a->pcie, s->loop, s->ndevs, &s->lc);
		s->pcie_h = xcalloc(s->ndevs ? s->ndevs : 1, sizeof(*s->pcie_h));
	}
	for (size_t i = 0; i < s->ndevs; i++)
		dev_register_xid(s, &s->devs[i]);
	nv_events_start(s->events); /* the registrations just queued are the thread's */
	for (size_t i = 0; prime && i < s->ndevs; i++)
		if (s->devs[i].h)
			dev_prime(s, &s->devs[i]);
	return 0;
}

/* stop the event thread and the PCIe workers (before NVML is shut down). */
static void nv_free_g(struct nv_state *s)
{
	if (s->loop)
		loop_timer_stop(s->loop, &s->pcie_timer);
	nv_events_free(s->events);
	s->events = NULL;
	nv_pool_free(s->pool);
	s->pool = NULL;
	free(s->pcie_h);
	s->pcie_h = NULL;
	s->fetch = NULL;
	nv_links_free(s->links);
	s->links = NULL;
}

static void nv_free_devs(struct nv_state *s)
{
	for (size_t i = 0; i < s->ndevs; i++) {
		free(s->devs[i].pbuf);
		free(s->devs[i].procs);
		free(s->devs[i].ubuf);
		free(s->devs[i].shares);
		nv_mig_free(s->devs[i].mig, &s->gpm_api);
		nv_gpm_release(&s->gpm_api, &s->devs[i].gpm, 0);
	}
	free(s->devs);
	s->devs = NULL;
	s->ndevs = 0;
}

/* Load NVML when it is not up, at most every NV_RETRY_S (prime: see nv_start). 1 when ready. */
static int nv_ensure(struct nv_state *s, int prime)
{
	int64_t now;

	if (s->ready)
		return 1;
	now = clock_mono_ns();
	if (s->tried_ns && now - s->tried_ns < NV_RETRY_S * NS_PER_S)
		return 0;
	s->tried_ns = now;
	if (nv_load(&s->api, &s->lc, s->cfg, s->error, sizeof(s->error)))
		return 0;
	if (nv_start(s, prime)) {
		nv_free_g(s);
		nv_free_devs(s);
		nv_unload(&s->api, &s->lc);
		return 0;
	}
	s->error[0] = 0;
	s->ready = 1;
	return 1;
}

/* ---- reading ------------------------------------------------------------- */

/* Memory info, v2 when the driver has it. 1 read (reserved set or -1), 0 absent, -1 lost. */
static int read_mem(struct nv_state *s, struct nv_dev *d, uint64_t *total, uint64_t *used, uint64_t *freeb,
		    int64_t *reserved)
{
	const struct nvml_api *a = &s->api;
	int r;

	*reserved = -1;
	/*
	 * nvmlDeviceGetMemoryInfo_v2 costs far more than v1 on a GSP driver: it
	 * is made on the slow cadence for the reserved memory, which is fixed
	 * by the driver, and v1 (whose used includes it) in between.
	 */
	if (a->mem2 && !d->mem_v1 &&
	    (nv_due(s, d, &d->slow_ns[SR_MEM2], s->slow_every) || d->reserved < 0 || !a->mem)) {
		nvmlMemory_v2_t m;
		nvmlReturn_t rc;

		memset(&m, 0, sizeof(m));
		m.version = nvmlMemory_v2;
		rc = NVC(NV_LC, a->mem2, d->h, &m);
		if (rc == NVML_SUCCESS) {
			*total = m.total;
			*used = m.used;
			*freeb = m.free;
			*reserved = (int64_t)m.reserved;
			d->reserved = *reserved;
			return 1;
		}
		if (nv_is_lost(rc))
			return nv_ok(s, d, rc, NF_MEM);
		d->mem_v1 = 1; /* an older driver: the v1 call from now on */
	}
	if (a->mem) {
		nvmlMemory_t m;

		memset(&m, 0, sizeof(m));
		if ((r = nv_ok(s, d, NVC(NV_LC, a->mem, d->h, &m), NF_MEM)) <= 0)
			return r;
		*total = m.total;
		*used = m.used;
		*freeb = m.free;
		if (a->mem2 && !d->mem_v1 && d->reserved >= 0) { /* v2's figures: used without the reserved memory */
			*reserved = d->reserved;
			*used = m.used > (uint64_t)d->reserved ? m.used - (uint64_t)d->reserved : 0;
		}
		return 1;
	}
	return 0;
}

/* Process entry i of the raw buffer, whichever struct version filled it. */
static void proc_entry(const struct nvml_api *a, const void *buf, unsigned i, unsigned *pid, uint64_t *bytes)
{
	const char *p = (const char *)buf + (size_t)i * a->proc_stride;

	if (a->proc_stride == sizeof(nvmlProcessInfo_v1_t)) {
		nvmlProcessInfo_v1_t e;

		memcpy(&e, p, sizeof(e));
		*pid = e.pid;
		*bytes = e.usedGpuMemory;
	} else {
		nvmlProcessInfo_v2_t e;

		memcpy(&e, p, sizeof(e));
		*pid = e.pid;
		*bytes = e.usedGpuMemory;
	}
}

/*
 * Refresh d's compute process list: the buffer grows when NVML says
 * INSUFFICIENT_SIZE (the list can grow between two calls, so a few tries).
 * 1 read, 0 absent, -1 lost.
 */
static int read_procs(struct nv_state *s, struct nv_dev *d)
{
	const struct nvml_api *a = &s->api;
	nvmlReturn_t rc = NVML_ERROR_NOT_SUPPORTED;
	unsigned n = 0;
	int r;

	d->procs_ok = 0;
	if (!a->procs || !ASKS(NF_PROCS))
		return 0;
	for (int tries = 0; tries < 4; tries++) {
		n = d->pcap;
		rc = NVC(NV_LC, a->procs, d->h, &n, d->pbuf);
		if (rc != NVML_ERROR_INSUFFICIENT_SIZE)
			break;
		if (d->pcap >= NV_PROC_MAX)
			break;
		{
			unsigned want = n > d->pcap ? n + n / 4 + 8 : d->pcap * 2;

			d->pcap = want < NV_PROC_MAX ? want : NV_PROC_MAX;
			free(d->pbuf);
			d->pbuf = xcalloc(d->pcap, sizeof(nvmlProcessInfo_v2_t));
		}
	}
	if ((r = nv_ok(s, d, rc, NF_PROCS)) <= 0)
		return r;
	if (n > d->pcap)
		n = d->pcap;
	if (n > d->aprocs) {
		d->aprocs = n;
		d->procs = xrealloc(d->procs, d->aprocs * sizeof(*d->procs));
	}
	d->nprocs = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned pid, k;
		uint64_t bytes;

		proc_entry(a, d->pbuf, i, &pid, &bytes);
		/*
		 * A process in several MIG instances of one GPU: its memory summed.
		 * One whose memory NVML does not give (NVML_VALUE_NOT_AVAILABLE_ULL,
		 * as under WDDM or in some containers) stays, without memory: it is
		 * on the GPU and gets its share of the energy.
		 */
		for (k = 0; k < d->nprocs && d->procs[k].pid != pid; k++)
			;
		if (k < d->nprocs && bytes != NVML_VALUE_NOT_AVAILABLE_ULL)
			d->procs[k].bytes = d->procs[k].bytes == NVML_VALUE_NOT_AVAILABLE_ULL ? bytes
												: d->procs[k].bytes + bytes;
		else if (k == d->nprocs)
			d->procs[d->nprocs++] = (struct nv_proc){ pid, bytes };
	}
	d->procs_ok = 1;
	d->procs_ns = clock_mono_ns();
	return 1;
}

/*
 * Read the counters once, as baselines for the first period. On the slow
 * cadence the energy counter (4 ms of driver time a GPU) is not read: the
 * power now is the baseline of the first periods' energy, estimated from
 * power until the counter's first read in the GPU's slot (nv_slot), off
 * the first report's path; and the PCIe replay counter read here is the
 * first report's (0 over the period, the total read here) until its next
 * read in the GPU's slot.
 */
static void dev_prime(struct nv_state *s, struct nv_dev *d)
{
	const struct nvml_api *a = &s->api;
	struct nv_energy *e = &d->energy;
	unsigned long long v;
	unsigned u;
	uint64_t delta;

	if (a->power && NVC(NV_LC, a->power, d->h, &u) == NVML_SUCCESS) {
		e->have_p = 1;
		e->p_mw = u;
		e->p_ns = clock_mono_ns();
	}
	if (s->slow_every && e->have_p && a->energy) {
		e->from_power = 1;
		d->slow_ns[SR_ENERGY] = NV_AT_OPEN;
	} else if (a->energy && NVC(NV_LC, a->energy, d->h, &v) == NVML_SUCCESS) {
		energy_anchor(e, v, clock_mono_ns(), 0);
		d->slow_ns[SR_ENERGY] = NV_AT_OPEN; /* the first period's energy is estimated from power */
	}
	if (a->ecc) {
		static const int kinds[4][2] = { { NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC },
						 { NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC },
						 { NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC },
						 { NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC } };

		for (int k = 0; k < 4; k++)
			if (NVC(NV_LC, a->ecc, d->h, kinds[k][0], kinds[k][1], &v) == NVML_SUCCESS)
				ctr_step(&d->c[C_ECC_CV + k], v, &delta);
	}
	if (a->replay && NVC(NV_LC, a->replay, d->h, &u) == NVML_SUCCESS) {
		ctr_step(&d->c[C_REPLAY], u, &delta);
		if (s->slow_every) {
			d->have_replay = 1;
			d->replay = u;
			d->slow_ns[SR_REPLAY] = NV_AT_OPEN;
		}
	}
	nv_links_prime(s->links, (size_t)(d - s->devs), d->h, clock_mono_ns()); /* NVLink */
}

/* ---- groups -------------------------------------------------------------- */

#define TRY(expr, f)                                   \
	do {                                           \
		if ((r = nv_ok(s, d, (expr), (f))) < 0) \
			return -1;                     \
	} while (0)

/* Device d's MIG mode into d->mig_cur and d->have_mig, read when stale (a static value). 0, or -1 lost. */
static int dev_mig_mode(struct nv_state *s, struct nv_dev *d)
{
	const struct nvml_api *a = &s->api;
	unsigned cur = 0, pend;
	int r = 0;

	if (!(d->stale & ST_MIG))
		return 0;
	if (a->mig_mode)
		TRY(NVC(NV_LC, a->mig_mode, d->h, &cur, &pend), NF_MIG);
	d->have_mig = r;
	d->mig_cur = cur;
	d->stale &= ~ST_MIG;
	return 0;
}

static int g_info(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	const struct nvml_api *a = &s->api;
	uint64_t total = 0, used, freeb;
	int64_t reserved;
	unsigned u = 0;
	int r;

	if (d->have_serial)
		jset_str(o, "serial", d->serial);
	else
		json_object_del(o, "serial");
	if (s->driver[0])
		jset_str(o, "driver_version", s->driver);
	if (s->nvml[0])
		jset_str(o, "nvml_version", s->nvml);
	if (s->cuda[0])
		jset_str(o, "cuda_driver_version", s->cuda);
	/* Static values: read when a refresh marked them (nv_collect), kept in between. */
	if (d->stale & ST_TOTAL) {
		if ((r = read_mem(s, d, &total, &used, &freeb, &reserved)) < 0)
			return -1;
		d->have_total = r;
		d->mem_total = total;
		d->stale &= ~ST_TOTAL;
	}
	if (d->have_total)
		jset_u64_na(o, "memory_total_bytes", d->mem_total, NVML_VALUE_NOT_AVAILABLE_ULL);
	else
		json_object_del(o, "memory_total_bytes");
	if (d->stale & ST_LIMIT) {
		r = 0;
		if (a->power_limit)
			TRY(NVC(NV_LC, a->power_limit, d->h, &u), NF_LIMIT);
		d->have_limit = r;
		d->limit_mw = u;
		d->stale &= ~ST_LIMIT;
	}
	if (d->have_limit)
		jset_real(o, "power_limit_watts", d->limit_mw / 1000.0);
	else
		json_object_del(o, "power_limit_watts");
	if (dev_mig_mode(s, d) < 0)
		return -1;
	if (d->have_mig)
		jset_str(o, "mig_mode", d->mig_cur == NVML_FEATURE_ENABLED ? "enabled" : "disabled");
	else
		json_object_del(o, "mig_mode");
	return 0;
}

static int g_util(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	const struct nvml_api *a = &s->api;
	nvmlUtilization_t ut;
	unsigned u, period;
	int r = 0;

	if (a->util && ASKS(NF_UTIL))
		TRY(NVC(NV_LC, a->util, d->h, &ut), NF_UTIL);
	if (r) {
		jset_real(o, "core_percent", ut.gpu);
		jset_real(o, "memory_bandwidth_percent", ut.memory);
	} else {
		json_object_del(o, "core_percent");
		json_object_del(o, "memory_bandwidth_percent");
	}
	r = 0;
	if (a->enc && ASKS(NF_ENC))
		TRY(NVC(NV_LC, a->enc, d->h, &u, &period), NF_ENC);
	if (r)
		jset_real(o, "encoder_percent", u);
	else
		json_object_del(o, "encoder_percent");
	r = 0;
	if (a->dec && ASKS(NF_DEC))
		TRY(NVC(NV_LC, a->dec, d->h, &u, &period), NF_DEC);
	if (r)
		jset_real(o, "decoder_percent", u);
	else
		json_object_del(o, "decoder_percent");
	/*
	 * KB/s over NVML's 20 ms sample (KB taken as 1024 bytes), read by the
	 * worker pool for every GPU at once (nv_pcie_settle); a call that has not
	 * returned (NVML_ERROR_TIMEOUT here) leaves the field out.
	 */
	for (int c = 0; c < 2; c++) {
		static const char *const names[2] = { "pcie_tx_bytes_per_second", "pcie_rx_bytes_per_second" };
		nvmlReturn_t rc = s->pool ? nv_pool_result(s->pool, (size_t)(d - s->devs), c, &u) : NVML_ERROR_TIMEOUT;

		r = 0;
		if (rc != NVML_ERROR_TIMEOUT)
			TRY(rc, NF_PCIE);
		else if (s->pool && s->pcie == NV_PCIE_FETCHED && s->pcie_h[d - s->devs]) /* it was in the batch */
			log_limited(&s->pcie_lim, "nvidia: GPU %u: its PCIe throughput read had not returned when the "
						  "report was due; the PCIe fields are left out", d->index);
		if (r)
			jset_int(o, names[c], (json_int_t)u * 1024);
		else
			json_object_del(o, names[c]);
	}
	{
		nvmlReturn_t lost;

		if (nv_links_util(s->links, (size_t)(d - s->devs), d->h, s->cycle_ns, o, &lost) < 0)
			return nv_ok(s, d, lost, NF_FIELDS);
	}
	return 0;
}

/* "processes": {"<pid>": bytes}, updated in place. */
static void put_procs(struct nv_dev *d, json_t *o)
{
	json_t *p = jset_obj(o, "processes"), *v;
	const char *key;
	void *tmp;
	char k[16];

	json_object_foreach_safe(p, tmp, key, v) {
		unsigned i;
		char *end;
		unsigned long pid = strtoul(key, &end, 10);

		for (i = 0; i < d->nprocs && d->procs[i].pid != pid; i++)
			;
		if (i == d->nprocs || *end)
			json_object_del(p, key);
	}
	for (unsigned i = 0; i < d->nprocs; i++) {
		snprintf(k, sizeof(k), "%u", d->procs[i].pid);
		jset_u64_na(p, k, d->procs[i].bytes, NVML_VALUE_NOT_AVAILABLE_ULL);
	}
}

/* "mig_devices": {"<index>": {...}} for a GPU in MIG mode. -1 when lost. */
static int put_mig(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	const struct nvml_api *a = &s->api;
	unsigned max = 0;
	json_t *m;
	int r = 0;

	if (a->mig_count && a->mig_handle && dev_mig_mode(s, d) < 0)
		return -1;
	if (!a->mig_count || !a->mig_handle || !d->have_mig || d->mig_cur != NVML_FEATURE_ENABLED) {
		json_object_del(o, "mig_devices");
		return 0;
	}
	TRY(NVC(NV_LC, a->mig_count, d->h, &max), NF_MIG);
	m = jset_obj(o, "mig_devices");
	for (unsigned i = 0; i < max && i < 64; i++) {
		nvmlDevice_t mh = NULL;
		nvmlReturn_t rc = NVC(NV_LC, a->mig_handle, d->h, i, &mh);
		char k[16], uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
		json_t *e;
		nvmlMemory_t mem;
		unsigned id;

		snprintf(k, sizeof(k), "%u", i);
		if (rc != NVML_SUCCESS || !mh) {
			if (nv_is_lost(rc))
				return nv_ok(s, d, rc, NF_MIG);
			json_object_del(m, k);
			continue;
		}
		e = jset_obj(m, k);
		memset(uuid, 0, sizeof(uuid));
		if (a->uuid && NVC(NV_LC, a->uuid, mh, uuid, sizeof(uuid) - 1) == NVML_SUCCESS && uuid[0])
			jset_str(e, "uuid", uuid);
		if (a->gi_id && NVC(NV_LC, a->gi_id, mh, &id) == NVML_SUCCESS)
			jset_int(e, "gpu_instance_id", id);
		if (a->ci_id && NVC(NV_LC, a->ci_id, mh, &id) == NVML_SUCCESS)
			jset_int(e, "compute_instance_id", id);
		memset(&mem, 0, sizeof(mem));
		if (a->mem && NVC(NV_LC, a->mem, mh, &mem) == NVML_SUCCESS) {
			jset_u64_na(e, "total_bytes", mem.total, NVML_VALUE_NOT_AVAILABLE_ULL);
			jset_u64_na(e, "used_bytes", mem.used, NVML_VALUE_NOT_AVAILABLE_ULL);
			jset_u64_na(e, "free_bytes", mem.free, NVML_VALUE_NOT_AVAILABLE_ULL);
		}
	}
	drop_if_empty(o, "mig_devices");
	return 0;
}

static int g_mem(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	uint64_t total, used, freeb;
	int64_t reserved;
	int r;

	if ((r = read_mem(s, d, &total, &used, &freeb, &reserved)) < 0)
		return -1;
	if (r) {
		jset_u64_na(o, "total_bytes", total, NVML_VALUE_NOT_AVAILABLE_ULL);
		jset_u64_na(o, "used_bytes", used, NVML_VALUE_NOT_AVAILABLE_ULL);
		jset_u64_na(o, "free_bytes", freeb, NVML_VALUE_NOT_AVAILABLE_ULL);
	} else {
		json_object_del(o, "total_bytes");
		json_object_del(o, "used_bytes");
		json_object_del(o, "free_bytes");
	}
	if (r && reserved >= 0)
		jset_int(o, "reserved_bytes", reserved);
	else
		json_object_del(o, "reserved_bytes");
	if ((r = read_procs(s, d)) < 0)
		return -1;
	if (r)
		put_procs(d, o);
	else
		json_object_del(o, "processes");
	return put_mig(s, d, o);
}

static const struct {
	unsigned long long bit;
	const char *name;
} nv_reasons[] = {
	{ nvmlClocksEventReasonGpuIdle, "gpu_idle" },
	{ nvmlClocksEventReasonApplicationsClocksSetting, "applications_clocks_setting" },
	{ nvmlClocksEventReasonSwPowerCap, "sw_power_cap" },
	{ nvmlClocksThrottleReasonHwSlowdown, "hw_slowdown" },
	{ nvmlClocksEventReasonSyncBoost, "sync_boost" },
	{ nvmlClocksEventReasonSwThermalSlowdown, "sw_thermal_slowdown" },
	{ nvmlClocksThrottleReasonHwThermalSlowdown, "hw_thermal_slowdown" },
	{ nvmlClocksThrottleReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown" },
	{ nvmlClocksEventReasonDisplayClockSetting, "display_clock_setting" },
};

/* "throttle_reasons": the names of the bits in mask (unknown bits as "0x..."), rebuilt only when it changes. */
static void put_reasons(json_t *o, unsigned long long mask)
{
	json_t *cur = json_object_get(o, "throttle_reasons"), *arr;
	unsigned long long known = 0;
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(nv_reasons); i++) {
		known |= nv_reasons[i].bit;
		n += (mask & nv_reasons[i].bit) != 0;
	}
	n += (mask & ~known) != 0;
	if (json_is_array(cur) && json_array_size(cur) == n) {
		size_t k = 0;
		int same = 1;

		for (size_t i = 0; i < ARRAY_SIZE(nv_reasons) && same; i++)
			if (mask & nv_reasons[i].bit)
				same = !strcmp(json_string_value(json_array_get(cur, k++)), nv_reasons[i].name);
		if (same && !(mask & ~known))
			return;
	}
	arr = json_array();
	for (size_t i = 0; i < ARRAY_SIZE(nv_reasons); i++)
		if (mask & nv_reasons[i].bit)
			json_array_append_new(arr, json_string(nv_reasons[i].name));
	if (mask & ~known) {
		char hex[32];

		snprintf(hex, sizeof(hex), "0x%llx", mask & ~known);
		json_array_append_new(arr, json_string(hex));
	}
	json_object_set_new(o, "throttle_reasons", arr);
}

/*
 * the same mask for exporters: "clock_event_reasons" {name: 1 or 0} for
 * every reason this build knows, and "clock_event_reasons_mask", the raw
 * bits (unknown ones included).
 */
static void put_reason_map(json_t *o, unsigned long long mask)
{
	json_t *m = jset_obj(o, "clock_event_reasons");

	for (size_t i = 0; i < ARRAY_SIZE(nv_reasons); i++)
		jset_int(m, nv_reasons[i].name, (mask & nv_reasons[i].bit) != 0);
	jset_u64_na(o, "clock_event_reasons_mask", mask, NVML_VALUE_NOT_AVAILABLE_ULL);
}

/* One NVML field value (nvmlDeviceGetFieldValues) as an unsigned integer. 1, 0 absent, -1 lost. */
static int field_u64(struct nv_state *s, struct nv_dev *d, const nvmlFieldValue_t *f, enum nv_field nf,
		     uint64_t *v)
{
	int r = nv_ok(s, d, f->nvmlReturn, nf);

	if (r <= 0)
		return r;
	switch (f->valueType) {
	case NVML_VALUE_TYPE_DOUBLE:
		if (!(f->value.dVal >= 0) || f->value.dVal >= 18446744073709551616.0) /* no u64 can hold it */
			return 0;
		*v = (uint64_t)f->value.dVal;
		return 1;
	case NVML_VALUE_TYPE_UNSIGNED_INT:
		*v = f->value.uiVal;
		return 1;
	case NVML_VALUE_TYPE_UNSIGNED_LONG:
		*v = f->value.ulVal;
		return 1;
	case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
		if (f->value.ullVal == NVML_VALUE_NOT_AVAILABLE_ULL)
			return 0;
		*v = f->value.ullVal;
		return 1;
	case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
		if (f->value.sllVal < 0)
			return 0;
		*v = (uint64_t)f->value.sllVal;
		return 1;
	case NVML_VALUE_TYPE_SIGNED_INT:
		if (f->value.siVal < 0)
			return 0;
		*v = (uint64_t)f->value.siVal;
		return 1;
	default:
		return 0;
	}
}

static int g_thermal(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	const struct nvml_api *a = &s->api;
	json_t *t = jset_obj(o, "temperatures_celsius");
	unsigned u;
	unsigned long long mask;
	uint64_t v;
	int r = 0;

	if (a->temp && ASKS(NF_TEMP))
		TRY(NVC(NV_LC, a->temp, d->h, NVML_TEMPERATURE_GPU, &u), NF_TEMP);
	if (r)
		jset_int(t, "gpu", u);
	else
		json_object_del(t, "gpu");
	/* The memory temperature: a field value that costs a driver round trip, on the slow cadence. */
	if (a->fields && ASKS(NF_MEMTEMP) && nv_due(s, d, &d->slow_ns[SR_MEMTEMP], s->slow_every)) {
		nvmlFieldValue_t f;
		nvmlReturn_t rc;

		r = 0;
		memset(&f, 0, sizeof(f));
		f.fieldId = NVML_FI_DEV_MEMORY_TEMP;
		rc = NVC(NV_LC, a->fields, d->h, 1, &f);
		if (rc != NVML_SUCCESS)
			TRY(rc, NF_MEMTEMP);
		else if ((r = field_u64(s, d, &f, NF_MEMTEMP, &v)) < 0)
			return -1;
		d->have_memtemp = r;
		d->memtemp = v;
	} else if (!a->fields || !ASKS(NF_MEMTEMP)) {
		d->have_memtemp = 0;
	}
	if (d->have_memtemp)
		jset_u64_na(t, "memory", d->memtemp, NVML_VALUE_NOT_AVAILABLE_ULL);
	else
		json_object_del(t, "memory");
	drop_if_empty(o, "temperatures_celsius");
	/* The fan: a driver round trip too (0.27 ms answering NOT_SUPPORTED on an H200), on the slow cadence. */
	if (a->fan && ASKS(NF_FAN) && nv_due(s, d, &d->slow_ns[SR_FAN], s->slow_every)) {
		r = 0;
		TRY(NVC(NV_LC, a->fan, d->h, &u), NF_FAN);
		d->have_fan = r;
		d->fan = u;
	} else if (!a->fan || !ASKS(NF_FAN)) {
		d->have_fan = 0;
	}
	if (d->have_fan)
		jset_real(o, "fan_percent", d->fan);
	else
		json_object_del(o, "fan_percent");
	r = 0;
	if (a->reasons && ASKS(NF_REASONS))
		TRY(NVC(NV_LC, a->reasons, d->h, &mask), NF_REASONS);
	if (r) {
		put_reasons(o, mask);
		put_reason_map(o, mask);
	} else {
		json_object_del(o, "throttle_reasons");
		json_object_del(o, "clock_event_reasons");
		json_object_del(o, "clock_event_reasons_mask");
	}
	return 0;
}

/*
 * Add the per-process utilization samples NVML took since the last call
 * (nvmlDeviceGetProcessUtilization after d->useen) to the shares: each
 * process's smUtil summed over its samples, which come at the driver's
 * fixed sampling interval, so the sums are in proportion to each process's
 * SM time over the period. NOT_FOUND (no sample since) adds nothing. The
 * buffer grows on INSUFFICIENT_SIZE. 0, or -1 when the GPU is lost.
 */
static int read_putil(struct nv_state *s, struct nv_dev *d, size_t *n)
{
	const struct nvml_api *a = &s->api;
	nvmlReturn_t rc = NVML_ERROR_NOT_SUPPORTED;
	unsigned k = 0;
	int r;

	if (!a->putil || !ASKS(NF_PUTIL))
		return 0;
	for (int tries = 0; tries < 4; tries++) {
		k = d->ucap;
		rc = NVC(NV_LC, a->putil, d->h, d->ubuf, &k, d->useen);
		if (rc != NVML_ERROR_INSUFFICIENT_SIZE || d->ucap >= NV_PROC_MAX)
			break;
		d->ucap = k > d->ucap && k < NV_PROC_MAX ? k + k / 4 + 8 : d->ucap ? d->ucap * 2 : 16;
		if (d->ucap > NV_PROC_MAX)
			d->ucap = NV_PROC_MAX;
		free(d->ubuf);
		d->ubuf = xcalloc(d->ucap, sizeof(*d->ubuf));
	}
	if (rc == NVML_ERROR_NOT_FOUND)
		return 0;
	if ((r = nv_ok(s, d, rc, NF_PUTIL)) <= 0)
		return r < 0 ? -1 : 0;
	for (unsigned i = 0; i < k && i < d->ucap; i++) {
		const nvmlProcessUtilizationSample_t *u = &d->ubuf[i];

		energy_share_of(&d->shares, n, &d->ashares, u->pid)->util += u->smUtil;
		if (u->timeStamp > d->useen)
			d->useen = u->timeStamp;
	}
	return 0;
}

/*
 * The attribution of d's period (host_energy_attribute): have_e with the
 * period's energy_j (J), and the power reading mw when have_w (the lowest
 * seen is the measured idle power). The processes on the GPU weigh by their
 * SM utilization samples over the period, else their device memory (docs/energy.md).
 * Idle power is the block's "idle_power_watts" for this GPU, else the
 * lowest power reading seen on it since start. Without a period's energy
 * (a baseline, no source) the split's fields are removed. 0, or -1 lost.
 */
static int nv_energy_split(struct nv_state *s, struct nv_dev *d, json_t *o, int have_e, double energy_j, int have_w,
			   unsigned mw)
{
	struct energy_obs ob = { .idle_w = -1, .uuid = d->have_ident ? d->uuid : NULL };
	int64_t last = d->split_ns;
	size_t n = 0;

	d->split_ns = s->cycle_ns;
	if (have_w && (!d->have_min || mw < d->min_mw)) {
		d->min_mw = mw;
		d->have_min = 1;
	}
	ob.have = have_e && last && s->cycle_ns > last;
	if (!ob.have) {
		host_energy_attribute(s->host, &ob, s->cycle_ns, o);
		return d->h && read_putil(s, d, &n) < 0 ? -1 : 0; /* moves the samples' baseline to now */
	}
	if ((!d->procs_ok || clock_mono_ns() - d->procs_ns > NV_PROCS_FRESH_NS) && read_procs(s, d) < 0)
		return -1;
	for (unsigned i = 0; d->procs_ok && i < d->nprocs; i++)
		energy_share_of(&d->shares, &n, &d->ashares, d->procs[i].pid)->memory =
			d->procs[i].bytes == NVML_VALUE_NOT_AVAILABLE_ULL ? 0 : (double)d->procs[i].bytes;
	if (read_putil(s, d, &n) < 0)
		return -1;
	ob.idle_w = energy_idle_watts(s->cfg->own ? ((const struct nv_conf *)s->cfg->own)->idle : NULL, d->index,
				      d->have_ident ? d->uuid : NULL, d->have_pci ? d->pci : NULL);
	if (ob.idle_w < 0 && d->have_min)
		ob.idle_w = d->min_mw / 1000.0;
	ob.energy_j = energy_j;
	ob.period_s = (double)(s->cycle_ns - last) / (double)NS_PER_S;
	ob.shares = d->shares;
	ob.n = n;
	host_energy_attribute(s->host, &ob, s->cycle_ns, o);
	return 0;
}

/*
 * Power, and energy: the counter costs milliseconds of driver time per
 * read, so it is read on the slow cadence (and whenever there is no power
 * reading to estimate from); in between, the period's energy is the
 * trapezoid of this power reading and the last one over the time between
 * them, and the total is re-anchored to the counter at each read
 * (energy_anchor).
 */
static int g_power(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	const struct nvml_api *a = &s->api;
	struct nv_energy *e = &d->energy;
	unsigned u = 0;
	unsigned long long mj;
	double inc = -1, est = -1;
	int r = 0, due, have_w, have_e;

	if (a->power && ASKS(NF_POWER))
		TRY(NVC(NV_LC, a->power, d->h, &u), NF_POWER);
	have_w = r;
	if (r)
		jset_real(o, "power_watts", u / 1000.0);
	else
		json_object_del(o, "power_watts");
	if (r && e->have_p && s->cycle_ns >= e->p_ns)
		est = ((double)e->p_mw + (double)u) / 2.0 * (double)(s->cycle_ns - e->p_ns) / (double)NS_PER_S;
	e->have_p = r;
	e->p_mw = u;
	e->p_ns = s->cycle_ns;
	r = 0;
	due = nv_due(s, d, &d->slow_ns[SR_ENERGY], s->slow_every);
	if (!due && (est < 0 || (!e->have && !e->from_power))) { /* nothing to estimate from: the counter now */
		due = 1;
		d->slow_ns[SR_ENERGY] = s->cycle_ns;
	}
	if (a->energy && ASKS(NF_ENERGY) && due) {
		TRY(NVC(NV_LC, a->energy, d->h, &mj), NF_ENERGY);
		if (r)
			inc = energy_anchor(e, mj, s->cycle_ns, d->have_limit ? d->limit_mw / 1000.0 : 0);
		else
			e->have = 0;
		if (inc == NV_E_REFUSED) {
			char key[16];

			snprintf(key, sizeof(key), "%u", d->index);
			energy_counter_refused(s->group, "nvidia", key, e->why);
		}
		else if (r && inc < 0 && e->from_power) /* the counter's first read: this period's still from power */
			inc = est;
		e->from_power = 0;
	} else if (!a->energy || !ASKS(NF_ENERGY)) {
		e->have = e->from_power = 0;
	} else if (e->have) {
		inc = energy_estimate(e, est);
	} else {
		inc = est; /* from_power: before the counter's first read, no total */
	}
	have_e = (e->have || e->from_power) && inc >= 0;
	if (have_e)
		jset_real(o, "energy_joules", inc / 1000.0);
	else
		json_object_del(o, "energy_joules");
	if (e->have)
		jset_real(o, "energy_total_joules", ((double)e->counter + e->ahead_mj) / 1000.0);
	else
		json_object_del(o, "energy_total_joules");
	return nv_energy_split(s, d, o, have_e, inc / 1000.0, have_w, u);
}

static int g_clocks(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	static const char *const names[NVML_CLOCK_COUNT] = { "graphics", "sm", "memory", "video" };
	const struct nvml_api *a = &s->api;
	json_t *c = jset_obj(o, "clocks_mhz");
	unsigned u;
	int r;

	static const enum nv_field nf[NVML_CLOCK_COUNT] = { NF_CLOCK, NF_CLOCK_SM, NF_CLOCK_MEM, NF_CLOCK_VIDEO };

	for (int k = 0; k < NVML_CLOCK_COUNT; k++) {
		r = 0;
		if (a->clock && ASKS(nf[k]))
			TRY(NVC(NV_LC, a->clock, d->h, k, &u), nf[k]);
		if (r)
			jset_int(c, names[k], u);
		else
			json_object_del(c, names[k]);
	}
	drop_if_empty(o, "clocks_mhz");
	return 0;
}

static int g_errors(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	static const char *const totals[4] = { "ecc_corrected_volatile_total", "ecc_uncorrected_volatile_total",
					       "ecc_corrected_aggregate_total", "ecc_uncorrected_aggregate_total" };
	static const int kinds[4][2] = { { NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC },
					 { NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC },
					 { NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC },
					 { NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC } };
	const struct nvml_api *a = &s->api;
	unsigned long long v[4];
	uint64_t delta[4];
	int had[4], r;
	unsigned u;

	for (int k = 0; k < 4; k++) {
		r = 0;
		if (a->ecc && ASKS(NF_ECC))
			TRY(NVC(NV_LC, a->ecc, d->h, kinds[k][0], kinds[k][1], &v[k]), NF_ECC);
		had[k] = r && ctr_step(&d->c[C_ECC_CV + k], v[k], &delta[k]);
		if (r) {
			jset_u64_na(o, totals[k], v[k], NVML_VALUE_NOT_AVAILABLE_ULL);
		} else {
			json_object_del(o, totals[k]);
			d->c[C_ECC_CV + k].have = 0;
		}
	}
	/* The increase: from the volatile counters (live), else the aggregate ones. */
	if ((had[0] && had[1]) || (had[2] && had[3])) {
		json_t *e = jset_obj(o, "ecc_errors");
		int b = had[0] && had[1] ? 0 : 2;

		jset_u64_na(e, "corrected", delta[b], NVML_VALUE_NOT_AVAILABLE_ULL);
		jset_u64_na(e, "uncorrected", delta[b + 1], NVML_VALUE_NOT_AVAILABLE_ULL);
	} else {
		json_object_del(o, "ecc_errors");
	}
	/*
	 * The PCIe replay counter, on the slow cadence: between reads its
	 * increase is 0 and the total the last one read; a read reports the
	 * increase since the read before, so the increases still add up to the
	 * counter's.
	 */
	if (a->replay && ASKS(NF_REPLAY) && nv_due(s, d, &d->slow_ns[SR_REPLAY], s->slow_every)) {
		uint64_t dl;

		r = 0;
		TRY(NVC(NV_LC, a->replay, d->h, &u), NF_REPLAY);
		d->have_replay = r;
		if (r && ctr_step(&d->c[C_REPLAY], u, &dl))
			jset_u64_na(o, "pcie_replays", dl, NVML_VALUE_NOT_AVAILABLE_ULL);
		else
			json_object_del(o, "pcie_replays");
		if (r) {
			d->replay = u;
			jset_int(o, "pcie_replays_total", u);
		} else {
			d->c[C_REPLAY].have = 0;
		}
	} else if (a->replay && ASKS(NF_REPLAY) && d->have_replay) {
		if (d->c[C_REPLAY].have)
			jset_u64_na(o, "pcie_replays", 0, NVML_VALUE_NOT_AVAILABLE_ULL);
		jset_int(o, "pcie_replays_total", d->replay);
	} else {
		d->have_replay = 0;
		d->c[C_REPLAY].have = 0;
	}
	if (!d->have_replay) {
		json_object_del(o, "pcie_replays");
		json_object_del(o, "pcie_replays_total");
	}
	/* events (nvidia_events.c), NVLink errors (nvidia_links.c) */
	if (s->events)
		nv_events_report(s->events, (size_t)(d - s->devs), o);
	{
		nvmlReturn_t lost;

		if (nv_links_errors(s->links, (size_t)(d - s->devs), d->h, o, &lost) < 0)
			return nv_ok(s, d, lost, NF_FIELDS);
	}
	/* Retired pages (before Ampere) through field values, on the slow cadence; remapped rows (Ampere on). */
	r = 0;
	if (a->fields && ASKS(NF_RETIRED) && nv_due(s, d, &d->slow_ns[SR_RETIRED], s->slow_every)) {
		nvmlFieldValue_t f[3];
		nvmlReturn_t rc;

		memset(f, 0, sizeof(f));
		memset(d->retired_r, 0, sizeof(d->retired_r));
		f[0].fieldId = NVML_FI_DEV_RETIRED_SBE;
		f[1].fieldId = NVML_FI_DEV_RETIRED_DBE;
		f[2].fieldId = NVML_FI_DEV_RETIRED_PENDING;
		rc = NVC(NV_LC, a->fields, d->h, 3, f);
		if (rc != NVML_SUCCESS) {
			TRY(rc, NF_RETIRED);
		} else {
			for (int k = 0; k < 3; k++)
				if ((d->retired_r[k] = field_u64(s, d, &f[k], NF_RETIRED, &d->retired[k])) < 0)
					return -1;
		}
	} else if (!a->fields || !ASKS(NF_RETIRED)) {
		memset(d->retired_r, 0, sizeof(d->retired_r));
	}
	{
		const uint64_t *fv = d->retired;
		const int *fr = d->retired_r;

		if (fr[0] && fr[1]) {
			json_t *p = jset_obj(o, "retired_pages");

			if (fv[0] <= UINT64_MAX - fv[1])
				jset_u64_na(p, "total", fv[0] + fv[1], NVML_VALUE_NOT_AVAILABLE_ULL);
			else /* past 2^64: a real, never a wrapped sum */
				jset_real(p, "total", (double)fv[0] + (double)fv[1]);
			jset_u64_na(p, "single_bit", fv[0], NVML_VALUE_NOT_AVAILABLE_ULL);
			jset_u64_na(p, "double_bit", fv[1], NVML_VALUE_NOT_AVAILABLE_ULL);
			if (fr[2])
				jset_bool(p, "pending", fv[2] != 0);
			else
				json_object_del(p, "pending");
			r = 1;
		}
	}
	if (!r)
		json_object_del(o, "retired_pages");
	r = 0;
	{
		unsigned cor, unc, pending, failed;

		if (a->remap && ASKS(NF_REMAP))
			TRY(NVC(NV_LC, a->remap, d->h, &cor, &unc, &pending, &failed), NF_REMAP);
		if (r) {
			json_t *p = jset_obj(o, "remapped_rows");

			jset_int(p, "correctable", cor);
			jset_int(p, "uncorrectable", unc);
			jset_bool(p, "pending", pending != 0);
			jset_bool(p, "failed", failed != 0);
		} else {
			json_object_del(o, "remapped_rows");
		}
	}
	return 0;
}

#undef TRY

/* ---- MIG instances and GPM (nvidia_mig.c, nvidia_gpm.c) ---------------- */

/*
 * After group id's fields of GPU d were read into its object o: its GPM
 * fields (device_info: why there are none; device_utilization: the
 * metrics) and its MIG instances' entries in the group's devices object.
 * NVML_SUCCESS, or the NVML error that means the GPU is lost.
 */
static nvmlReturn_t nvx_collect(struct nv_state *s, struct nv_dev *d, enum group_id id, json_t *o, json_t *devices,
				int64_t cycle)
{
	struct nv_mig_parent p = { d->index, d->h, d->have_ident ? d->uuid : NULL, d->have_pci ? d->pci : NULL,
				   &d->gpm, d->have_mig && !(d->stale & ST_MIG) ? (int)d->mig_cur : -1 };
	nvmlReturn_t rc;

	if (id == GROUP_DEVICE_INFO || id == GROUP_DEVICE_UTILIZATION) {
		if ((rc = nv_gpm_query(&s->gpm_api, &d->gpm, d->h)))
			return rc;
		if (id == GROUP_DEVICE_INFO) {
			nv_gpm_put_info(&d->gpm, o);
		} else {
			if ((rc = nv_gpm_step(&s->gpm_api, &d->gpm, d->h, NVML_INVALID_INSTANCE_ID, clock_mono_ns())))
				return rc;
			nv_gpm_put(&d->gpm, o, 1);
		}
	}
	return d->mig ? nv_mig_collect(d->mig, &s->mig_api, &s->gpm_api, id, &p, devices, cycle) : NVML_SUCCESS;
}

/* ---- ops ----------------------------------------------------------------- */

static int nv_probe(const struct mon_env *env)
{
	struct nvml_api api;
	unsigned n = 0;
	char err[512];
	int found;

	(void)env;
	if (nv_load(&api, NULL, NULL, err, sizeof(err))) {
		log_debug("nvidia: %s", err);
		return 0;
	}
	found = api.count(&n) == NVML_SUCCESS && n > 0;
	nv_unload(&api, NULL);
	return found;
}

static int nv_open(const struct mon_env *env, const struct coll_target *t, void **state)
{
	const struct cfg_device *dev = t->dev;
	struct nv_state *s = xcalloc(1, sizeof(*s));

	s->cfg = dev;
	s->loop = env->loop; /* G */
	s->host = env->host;
	s->ledger = nv_ledger_new();
	s->lc.l = s->ledger;
	s->lc.group = "start";
	{
		const struct nv_conf *c = dev->own;
		int64_t ms = c && c->have_slow ? c->slow_ms : NV_SLOW_DEFAULT_MS;

		s->slow_every = ms * NS_PER_MS;
		s->static_every = ms ? NV_STATIC_S * NS_PER_S : 0; /* "period": static values every cycle too */
	}
	for (int g = 0; g < NV_NGROUPS; g++) {
		s->holder[g] = json_object();
		json_object_set_new(s->holder[g], "devices", json_object());
	}
	*state = s;
	if (!nv_ensure(s, 1)) {
		log_warn("nvidia: %s", s->error);
		return -ENOENT;
	}
	return 0;
}

/*
 * this cycle's PCIe throughput. Normally the group's fetch started the
 * pool's batch ahead of the due time and it is in (or the busy GPU's
 * fields are left out). Without a fetch (a program that drives the ops
 * directly, or NVML loaded late), the batch runs now, its calls in
 * parallel, waited for at most NV_PCIE_WAIT_NS.
 */
#define NV_PCIE_WAIT_NS (500 * NS_PER_MS)

/*
 * The handles of the pool's batch (NULL: a GPU not answering, or one whose
 * GPM gives the PCIe rates: they overwrite the pool's after g_util, so its
 * 20 ms call is skipped).
 */
static const nvmlDevice_t *nv_pcie_handles(struct nv_state *s)
{
	for (size_t i = 0; i < s->ndevs; i++)
		s->pcie_h[i] = nv_gpm_gives_pcie(&s->devs[i].gpm) ? NULL : s->devs[i].h;
	return s->pcie_h;
}

/*
 * Is a PCIe batch due (the slow cadence: 40 ms of driver time and two
 * 20 ms samples per GPU)? When it is not, the last batch's results stand.
 */
static int nv_pcie_due(struct nv_state *s)
{
	int64_t now = clock_mono_ns();

	if (s->slow_every && s->pcie_ns && now - s->pcie_ns < s->slow_every - NV_SLACK_NS)
		return 0;
	s->pcie_ns = now;
	return 1;
}

static void nv_pcie_settle(struct nv_state *s)
{
	if (!s->pool || s->pcie != NV_PCIE_NONE)
		return;
	if (!nv_pcie_due(s)) {
		s->pcie = NV_PCIE_KEEP;
		return;
	}
	nv_pool_start(s->pool, nv_pcie_handles(s), NULL, NULL);
	nv_pool_wait(s->pool, clock_mono_ns() + NV_PCIE_WAIT_NS);
	s->pcie = NV_PCIE_FETCHED;
}

/* The batch is complete, or (the timer) the report is about to be due: answer the fetch with what is in. */
static void nv_pcie_done(void *ud)
{
	struct nv_state *s = ud;

	if (s->loop)
		loop_timer_stop(s->loop, &s->pcie_timer);
	if (s->pool)
		nv_pool_forget(s->pool);
	if (s->fetch)
		mon_fetch_done(s->fetch);
	s->fetch = NULL;
}

static void nv_pcie_deadline(struct loop_timer *t)
{
	nv_pcie_done(t->data);
}

/*
 * the asynchronous fetch (collector.h): device_utilization starts the
 * pool's batch ahead of its due time and is answered when every call has
 * returned; the other groups are answered at once.
 */
static int nv_fetch(void *state, struct mon_fetch *f)
{
	struct nv_state *s = state;

	if (!s || f->id != GROUP_DEVICE_UTILIZATION || !s->ready || !s->pool) {
		mon_fetch_done(f);
		return 0;
	}
	if (!nv_pcie_due(s)) { /* the last batch's results stand */
		s->pcie = NV_PCIE_KEEP;
		mon_fetch_done(f);
		return 0;
	}
	s->lc.group = group_name(f->id);
	nv_pool_start(s->pool, nv_pcie_handles(s), nv_pcie_done, s);
	s->pcie = NV_PCIE_FETCHED;
	if (nv_pool_wait(s->pool, 0)) { /* the calls were made inline (fast ones): answered now */
		nv_pool_forget(s->pool);
		mon_fetch_done(f);
		return 0;
	}
	s->fetch = f;
	if (!s->loop) { /* nobody would hear the end: wait here */
		nv_pool_wait(s->pool, f->deadline);
		nv_pcie_done(s);
	} else {
		/* A call still in the driver then leaves only its GPU's fields out, not the group's report. */
		loop_timer_start(s->loop, &s->pcie_timer, f->deadline - NS_PER_MS, nv_pcie_deadline, s);
	}
	return 0;
}

static void nv_abandon(void *state, struct mon_fetch *f)
{
	struct nv_state *s = state;

	(void)f;
	if (!s)
		return;
	if (s->pool)
		nv_pool_forget(s->pool);
	if (s->loop)
		loop_timer_stop(s->loop, &s->pcie_timer);
	s->fetch = NULL;
	s->pcie = NV_PCIE_NONE; /* the group reports "no answer"; its calls finish on their own */
}

/* Say in group's error when an idle_power_watts key names none of the GPUs (once their identities are read). */
static void nv_idle_check(struct nv_state *s, json_t *group)
{
	const struct nv_conf *c = s->cfg->own;
	struct energy_dev_id *ids;

	if (!c || !c->idle)
		return;
	for (size_t i = 0; i < s->ndevs; i++)
		if (!s->devs[i].have_ident)
			return;
	ids = xcalloc(s->ndevs ? s->ndevs : 1, sizeof(*ids));
	for (size_t i = 0; i < s->ndevs; i++)
		ids[i] = (struct energy_dev_id){ s->devs[i].index, s->devs[i].uuid,
						 s->devs[i].have_pci ? s->devs[i].pci : NULL };
	energy_idle_check(c->idle, ids, s->ndevs, group, "nvidia", &s->idle_told);
	free(ids);
}

static void nv_collect(void *state, const struct cycle *cy, const enum group_id *due, size_t ndue, json_t *group)
{
	static int (*const fill[NV_NGROUPS])(struct nv_state *, struct nv_dev *, json_t *) = {
		g_info, g_util, g_mem, g_thermal, g_power, g_clocks, g_errors,
	};
	enum group_id id = due[0]; /* one group at a time */
	struct nv_state *s = state;
	int g = (int)id - GROUP_DEVICE_INFO;

	(void)ndue;
	if (g < 0 || g >= NV_NGROUPS) {
		set_error(group, "%s is not a device group", group_name(id));
		return;
	}
	if (!nv_ensure(s, 0)) {
		set_error(group, "%s", s->error);
		return;
	}
	s->cycle_ns = cy->mono_ns; /* G */
	s->group = group;
	if (!s->have_origin) {
		s->origin_ns = cy->mono_ns;
		s->have_origin = 1;
	}
	s->lc.group = group_name(id);
	if (s->ledger && s->ledger_cycle != cy->mono_ns) {
		s->ledger_cycle = cy->mono_ns;
		nv_ledger_cycle(s->ledger);
	}
	if (id == GROUP_DEVICE_UTILIZATION)
		nv_pcie_settle(s);
	for (size_t i = 0; i < s->ndevs; i++) {
		struct nv_dev *d = &s->devs[i];
		json_t *devices = json_object_get(s->holder[g], "devices");
		nvmlReturn_t lost = NVML_SUCCESS;

		if (d->h && nv_due(s, d, &d->static_ns, s->static_every)) { /* the static refresh */
			d->stale = ST_ALL;
			d->unsup = 0;
		}
		if (!dev_ready(s, d, cy->mono_ns) || fill[g](s, d, dev_obj(s, d, g)) < 0 ||
		    (lost = nvx_collect(s, d, id, d->obj[g], devices, cy->mono_ns))) {
			if (lost) /* lost during a MIG or GPM call */
				nv_lose(s, d, lost);
			dev_obj_error(s, d, g);
			nv_mig_clear(d->index, devices);
		}
	}
	json_object_set(group, "devices", json_object_get(s->holder[g], "devices"));
	if (id == GROUP_DEVICE_POWER)
		nv_idle_check(s, group);
	if (id == GROUP_DEVICE_UTILIZATION)
		s->pcie = NV_PCIE_NONE; /* the next cycle's come from its own fetch */
}

static const char *nv_error(void *state)
{
	const struct nv_state *s = state;

	return s && !s->ready && s->error[0] ? s->error : NULL;
}

/*
 * Hand the core (out) each process's device memory over the selected
 * GPUs, from process lists at most NV_PROCS_FRESH_NS old; a process whose
 * memory NVML does not give is left out.
 */
static void nv_proc_memory(void *state, const struct cycle *cy, struct proc_devmem_list *out)
{
	struct nv_state *s = state;
	int64_t now = clock_mono_ns();

	(void)cy;
	if (!s || !s->ready)
		return;
	s->lc.group = "proc_memory";
	for (size_t i = 0; i < s->ndevs; i++) {
		struct nv_dev *d = &s->devs[i];

		if (!d->h)
			continue;
		if ((!d->procs_ok || now - d->procs_ns > NV_PROCS_FRESH_NS) && read_procs(s, d) <= 0)
			continue;
		out->known = 1;
		for (unsigned k = 0; k < d->nprocs; k++)
			if (d->procs[k].bytes != NVML_VALUE_NOT_AVAILABLE_ULL)
				proc_devmem_add(out, (pid_t)d->procs[k].pid, d->procs[k].bytes);
	}
}

static void nv_close(void *state)
{
	struct nv_state *s = state;

	if (!s)
		return;
	s->lc.group = "close";
	nv_free_g(s); /* the threads stop before NVML shuts down */
	nv_free_devs(s);
	nv_unload(&s->api, &s->lc);
	nv_ledger_free(s->ledger); /* its table, when on */
	for (int g = 0; g < NV_NGROUPS; g++)
		json_decref(s->holder[g]);
	free(s);
}

const struct collector_ops coll_nvidia_ops = {
	.name = "nvidia",
	.rows = &nvidia_rows,
	.scope = COLL_DEVICE,
	.keys = nv_config_keys,
	.config = nv_config,
	.config_print = nv_config_print,
	.config_free = nv_config_free,
	.probe = nv_probe,
	.open = nv_open,
	.collect = nv_collect,
	.error = nv_error,
	.proc_memory = nv_proc_memory,
	.close = nv_close,
	/* The PCIe worker pool. Long enough for the batch (20 ms per call, all at once); at most half the period anyway. */
	.fetch = nv_fetch,
	.abandon = nv_abandon,
	.fetch_timeout_ns = 250 * NS_PER_MS,
};
