/* SPDX-License-Identifier: MIT */
/*
 * The NVIDIA collector's reads and groups: device memory and the process
 * lists, then each device group's fields of one GPU (device_info,
 * device_utilization, device_memory, device_thermal, device_power with its
 * energy split, device_clocks, device_errors). coll_nvidia.c calls them;
 * nvidia_dev.h holds what they share.
 */
#include "nvidia_dev.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading ------------------------------------------------------------- */

/* Memory info, v2 when the driver has it. 1 read (reserved set or -1), 0 absent, -1 lost. */
int read_mem(struct nv_state *s, struct nv_dev *d, uint64_t *total, uint64_t *used, uint64_t *freeb,
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
int read_procs(struct nv_state *s, struct nv_dev *d)
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
 * Read the counters once, as baselines for the first period. On its own
 * cadence ("energy_period") the energy counter (4 ms of driver time a
 * GPU) is not read: the
 * power now is the baseline of the first periods' energy, estimated from
 * power until the counter's first read in the GPU's slot (nv_slot), off
 * the first report's path; and the PCIe replay counter read here is the
 * first report's (0 over the period, the total read here) until its next
 * read in the GPU's slot.
 */
void dev_prime(struct nv_state *s, struct nv_dev *d)
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
	if (s->energy_every && e->have_p && a->energy) {
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

int g_info(struct nv_state *s, struct nv_dev *d, json_t *o)
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

int g_util(struct nv_state *s, struct nv_dev *d, json_t *o)
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

int g_mem(struct nv_state *s, struct nv_dev *d, json_t *o)
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

int g_thermal(struct nv_state *s, struct nv_dev *d, json_t *o)
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
 * read, so it is read on its own cadence ("energy_period",
 * s->energy_every; and whenever there is no power reading to estimate
 * from); in between, the period's energy is the
 * trapezoid of this power reading and the last one over the time between
 * them, and the total is re-anchored to the counter at each read
 * (energy_anchor).
 */
int g_power(struct nv_state *s, struct nv_dev *d, json_t *o)
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
	due = nv_due(s, d, &d->slow_ns[SR_ENERGY], s->energy_every);
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

int g_clocks(struct nv_state *s, struct nv_dev *d, json_t *o)
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

/* d's ECC counters into o: the running totals, and the period's increase as ecc_errors. 0, or -1 lost. */
static int errors_ecc(struct nv_state *s, struct nv_dev *d, json_t *o)
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
	return 0;
}

/* d's PCIe replay counter into o (pcie_replays, pcie_replays_total). 0, or -1 lost. */
static int errors_replay(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	const struct nvml_api *a = &s->api;
	unsigned u;
	int r;

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
	return 0;
}

/* d's retired pages and remapped rows into o. 0, or -1 lost. */
static int errors_pages(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	const struct nvml_api *a = &s->api;
	int r;

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

int g_errors(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	if (errors_ecc(s, d, o) || errors_replay(s, d, o))
		return -1;
	/* events (nvidia_events.c), NVLink errors (nvidia_links.c) */
	if (s->events)
		nv_events_report(s->events, (size_t)(d - s->devs), o);
	{
		nvmlReturn_t lost;

		if (nv_links_errors(s->links, (size_t)(d - s->devs), d->h, o, &lost) < 0)
			return nv_ok(s, d, lost, NF_FIELDS);
	}
	return errors_pages(s, d, o);
}

#undef TRY

