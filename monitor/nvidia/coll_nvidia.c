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
 * This file loads NVML, finds the devices, keeps the cadences and the
 * energy counter, and serves the ops; the reads and each group's fields of
 * one GPU are nvidia_groups.c's, and what the two share is nvidia_dev.h.
 *
 * MIG instances (device entries "<gpu>/<gi>/<ci>") and GPM profiling
 * metrics live in nvidia_mig.c and nvidia_gpm.c; nvx_collect hooks them in
 * after each GPU's fields of a group. NVML events (XIDs and the rest, waited
 * for on a thread), NVLink, and the worker pool that reads every GPU's PCIe
 * throughput at once live in nvidia_events.c, nvidia_links.c and
 * nvidia_pool.c.
 */
/* events, NVLink */

#include "nvidia_dev.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int nv_is_lost(nvmlReturn_t rc)
{
	return rc == NVML_ERROR_GPU_IS_LOST || rc == NVML_ERROR_RESET_REQUIRED;
}

void nv_lose(struct nv_state *s, struct nv_dev *d, nvmlReturn_t rc)
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
int nv_ok(struct nv_state *s, struct nv_dev *d, nvmlReturn_t rc, enum nv_field f)
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
int ctr_step(struct ctr *c, uint64_t v, uint64_t *delta)
{
	int had = c->have;

	*delta = v >= c->last ? v - c->last : v;
	c->last = v;
	c->have = 1;
	return had;
}

/* ---- cadences ------------------------------------------------------------ */


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
int nv_due(const struct nv_state *s, const struct nv_dev *d, int64_t *last, int64_t every)
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
	d->stale = NV_STALE_ALL;
	d->static_ns = 0;
	memset(d->read_ns, 0, sizeof(d->read_ns));
	d->mem2_ns = 0;
	d->got = 0;
	d->reserved = -1;
	memset(d->retired_r, 0, sizeof(d->retired_r));
	memset(&d->energy, 0, sizeof(d->energy));
}


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
double energy_anchor(struct nv_energy *e, uint64_t mj, int64_t now_ns, double max_w)
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
double energy_estimate(struct nv_energy *e, double est)
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
void drop_if_empty(json_t *o, const char *k)
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
	jset_str(o, "error", d->err); /* set_error's text: d->err fits its 512 bytes */
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
	s->mig_api.named = &s->named;
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
				   &d->gpm, nv_mig_cur(d) };
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
		/* the energy counter: its own cadence, every cycle too when the slow reads are */
		ms = c && c->have_energy ? c->energy_ms : c && c->have_slow && !c->slow_ms ? 0 : NV_ENERGY_DEFAULT_MS;
		s->energy_every = ms * NS_PER_MS;
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

/*
 * Say in group's error when an idle_power_watts key names none of the GPUs
 * (once their identities are read): then -ENOENT, else 0.
 */
static int nv_idle_check(struct nv_state *s, json_t *group)
{
	const struct nv_conf *c = s->cfg->own;
	struct energy_dev_id *ids;
	int rc;

	if (!c || !c->idle)
		return 0;
	for (size_t i = 0; i < s->ndevs; i++)
		if (!s->devs[i].have_ident)
			return 0;
	ids = xcalloc(s->ndevs ? s->ndevs : 1, sizeof(*ids));
	for (size_t i = 0; i < s->ndevs; i++)
		ids[i] = (struct energy_dev_id){ s->devs[i].index, s->devs[i].uuid,
						 s->devs[i].have_pci ? s->devs[i].pci : NULL };
	rc = energy_idle_check(c->idle, ids, s->ndevs, group, "nvidia", &s->idle_told);
	free(ids);
	return rc;
}

static int nv_collect(void *state, const struct cycle *cy, const enum group_id *due, size_t ndue, json_t *group)
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
		return -1;
	}
	if (!nv_ensure(s, 0)) {
		set_error(group, "%s", s->error);
		return -1;
	}
	s->cycle_ns = cy->mono_ns; /* G */
	s->group = group;
	s->noted = 0;
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
	if (id == GROUP_DEVICE_POWER)
		s->obs.n = 0; /* this collect's observations only (the energy op takes them) */
	for (size_t i = 0; i < s->ndevs; i++) {
		struct nv_dev *d = &s->devs[i];
		json_t *devices = json_object_get(s->holder[g], "devices");
		nvmlReturn_t lost = NVML_SUCCESS;

		if (d->h && nv_due(s, d, &d->static_ns, s->static_every)) { /* the static refresh */
			d->stale = NV_STALE_ALL;
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
	if (id == GROUP_DEVICE_POWER && nv_idle_check(s, group))
		s->noted = 1;
	if (id == GROUP_DEVICE_UTILIZATION)
		s->pcie = NV_PCIE_NONE; /* the next cycle's come from its own fetch */
	return s->noted ? -1 : 0;
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

/* Hand the core this cycle's energy observations (device_power's, one per GPU). */
static void nv_energy(void *state, struct energy_obs_list *out)
{
	struct nv_state *s = state;

	if (s)
		energy_obs_move(&s->obs, out);
}

/* Hand the core the processes this cycle's groups wrote (devices' and MIG instances' "processes"). */
static void nv_processes(void *state, struct pid_list *out)
{
	struct nv_state *s = state;

	if (s)
		pid_list_move(&s->named, out);
}

/* Hand the core the identity of each selected GPU and each of its MIG instances (the owners phase). */
static void nv_devices(void *state, struct dev_list *out)
{
	struct nv_state *s = state;

	for (size_t i = 0; s && i < s->ndevs; i++) {
		const struct nv_dev *d = &s->devs[i];
		struct dev_ident *id, g;
		char key[16];

		snprintf(key, sizeof(key), "%u", d->index);
		id = dev_list_add(out, "nvidia", key);
		id->index = (int)d->index;
		if (d->have_ident) {
			snprintf(id->uuid, sizeof(id->uuid), "%s", d->uuid);
			if (d->have_pci)
				snprintf(id->pci_bus_id, sizeof(id->pci_bus_id), "%s", d->pci);
		}
		g = *id; /* out may grow (and move) as the instances are added */
		nv_mig_idents(d->mig, &g, out);
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
	energy_obs_free(&s->obs);
	pid_list_free(&s->named);
	devrec_free(&s->rec);
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
	.energy = nv_energy,
	.processes = nv_processes,
	.devices = nv_devices,
	.close = nv_close,
	/* The PCIe worker pool. Long enough for the batch (20 ms per call, all at once); at most half the period anyway. */
	.fetch = nv_fetch,
	.abandon = nv_abandon,
	.fetch_timeout_ns = 250 * NS_PER_MS,
};
