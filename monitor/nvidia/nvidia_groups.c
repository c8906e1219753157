/* SPDX-License-Identifier: MIT */
/*
 * The NVIDIA collector's reads and groups: device memory and the process
 * lists; the rows' own readers and writers and the table of reads
 * (nv_reads: a row per NVML read of a GPU, its field, call, cadence and
 * group, walked by nv_walk in nvidia_reads.c); then each device group's
 * filler (device_info, device_utilization, device_memory, device_thermal,
 * device_power with its energy split, device_clocks, device_errors), which
 * walks its rows. coll_nvidia.c calls them; nvidia_dev.h holds what they
 * share.
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
	    (nv_due(s, d, &d->mem2_ns, s->slow_every) || d->reserved < 0 || !a->mem)) {
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
		d->read_ns[NV_ROW_I(nv_row(GROUP_DEVICE_POWER, NF_ENERGY))] = NV_AT_OPEN;
	} else if (a->energy && NVC(NV_LC, a->energy, d->h, &v) == NVML_SUCCESS) {
		energy_anchor(e, v, clock_mono_ns(), 0);
		/* the first period's energy is estimated from power */
		d->read_ns[NV_ROW_I(nv_row(GROUP_DEVICE_POWER, NF_ENERGY))] = NV_AT_OPEN;
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
		if (s->slow_every) { /* the first report's value: the row's record, as if read in the first cycle */
			const struct nv_read *rd = nv_row(GROUP_DEVICE_ERRORS, NF_REPLAY);

			d->got |= 1ull << NV_ROW_I(rd);
			d->val[NV_ROW_I(rd)] = u;
			d->read_ns[NV_ROW_I(rd)] = NV_AT_OPEN;
		}
	}
	nv_links_prime(s->links, (size_t)(d - s->devs), d->h, clock_mono_ns()); /* NVLink */
}

/* ---- groups: the rows' own readers and putters --------------------------- */

#define TRY(expr, f)                                   \
	do {                                           \
		if ((r = nv_ok(s, d, (expr), (f))) < 0) \
			return -1;                     \
	} while (0)

int nv_mig_cur(const struct nv_dev *d)
{
	const struct nv_read *rd = nv_row(GROUP_DEVICE_INFO, NF_MIG);

	return nv_got(d, rd) && !(d->stale & (1ull << NV_ROW_I(rd))) ? (int)d->val[NV_ROW_I(rd)] : -1;
}

/* The memory total (a static value), through read_mem. */
static int read_total(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd)
{
	uint64_t total = 0, used, freeb;
	int64_t reserved;
	int r = read_mem(s, d, &total, &used, &freeb, &reserved);

	d->val[NV_ROW_I(rd)] = total;
	return r;
}

static int read_mig_mode(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd)
{
	unsigned cur = 0, pend;
	int r = nv_ok(s, d, NVC(NV_LC, s->api.mig_mode, d->h, &cur, &pend), rd->f);

	d->val[NV_ROW_I(rd)] = cur;
	return r;
}

static int put_mig_mode(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now)
{
	(void)s;
	(void)now;
	if (nv_got(d, rd))
		jset_str(o, "mig_mode", d->val[NV_ROW_I(rd)] == NVML_FEATURE_ENABLED ? "enabled" : "disabled");
	else
		json_object_del(o, "mig_mode");
	return 0;
}

static int read_util(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd)
{
	return nv_ok(s, d, NVC(NV_LC, s->api.util, d->h, &d->util), rd->f);
}

static int put_util(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now)
{
	(void)now;
	devrec_clear(&s->rec);
	if (nv_got(d, rd)) {
		s->rec.core_pct = d->util.gpu;
		s->rec.membw_pct = d->util.memory;
		s->rec.have |= DR_CORE_PCT | DR_MEMBW_PCT;
	}
	devrec_util_json(&s->rec, o);
	return 0;
}

static int read_mem_row(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd)
{
	(void)rd;
	return read_mem(s, d, &d->mem.total, &d->mem.used, &d->mem.free, &d->mem.reserved);
}

static int put_mem(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now)
{
	int r = nv_got(d, rd);

	(void)now;
	devrec_clear(&s->rec);
	if (r)
		devrec_set_memory(&s->rec, d->mem.total, d->mem.used, d->mem.free, NVML_VALUE_NOT_AVAILABLE_ULL);
	devrec_memory_json(&s->rec, o);
	if (r && d->mem.reserved >= 0)
		jset_int(o, "reserved_bytes", d->mem.reserved);
	else
		json_object_del(o, "reserved_bytes");
	return 0;
}

static int read_procs_row(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd)
{
	(void)rd;
	return read_procs(s, d);
}

/*
 * "processes": {"<pid>": bytes} ({} when none), updated in place; a process
 * whose memory NVML does not give is left out. Each pid written named in
 * s->named.
 */
static void put_procs(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	devrec_clear(&s->rec);
	s->rec.have |= DR_PROCS;
	for (unsigned i = 0; i < d->nprocs; i++) {
		if (d->procs[i].bytes == NVML_VALUE_NOT_AVAILABLE_ULL)
			continue;
		devrec_proc_mem_add(devrec_proc(&s->rec, (pid_t)d->procs[i].pid), d->procs[i].bytes);
		pid_list_add(&s->named, (pid_t)d->procs[i].pid);
	}
	devrec_procs_json(&s->rec, DEVREC_PROC_MEMORY, NULL, o);
}

static int put_procs_row(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now)
{
	(void)now;
	if (nv_got(d, rd))
		put_procs(s, d, o);
	else
		json_object_del(o, "processes");
	return 0;
}

/*
 * A temperature row (whole degrees, key rd->key): its reading into the
 * device record, cleared at the first of the group's put_temp rows (which
 * come one after the other), and the record's temperatures_celsius
 * written at the last (devrec_temps_json: dropped when none was read).
 */
static int put_temp(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now)
{
	uint64_t v = d->val[NV_ROW_I(rd)];
	int first = rd == nv_reads || rd[-1].put != put_temp || rd[-1].group != rd->group;
	int last = rd + 1 == nv_reads + nv_nreads || rd[1].put != put_temp || rd[1].group != rd->group;

	(void)now;
	if (first)
		devrec_clear(&s->rec);
	if (nv_got(d, rd) && v != NVML_VALUE_NOT_AVAILABLE_ULL)
		devrec_temp_whole(&s->rec, rd->key, v);
	if (last)
		devrec_temps_json(&s->rec, o);
	return 0;
}

/* "mig_devices": {"<index>": {...}} for a GPU in MIG mode. -1 when lost. */
static int put_mig(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	const struct nvml_api *a = &s->api;
	unsigned max = 0;
	json_t *m;
	int r = 0;

	if (a->mig_count && a->mig_handle && nv_fresh(s, d, nv_row(GROUP_DEVICE_INFO, NF_MIG)) < 0)
		return -1;
	if (!a->mig_count || !a->mig_handle || nv_mig_cur(d) != NVML_FEATURE_ENABLED) {
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
static void put_reasons(struct nv_dev *d, json_t *o, unsigned long long mask)
{
	unsigned long long known = 0;
	json_t *arr;

	for (size_t i = 0; i < ARRAY_SIZE(nv_reasons); i++)
		known |= nv_reasons[i].bit;
	/* Kept while the object still holds the array built from the same known bits (an unknown one: rebuilt). */
	if (json_object_get(o, "throttle_reasons") && d->reasons_put == mask && !(mask & ~known))
		return;
	d->reasons_put = mask;
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

static int put_reasons_row(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now)
{
	(void)s;
	(void)now;
	if (nv_got(d, rd)) {
		put_reasons(d, o, d->val[NV_ROW_I(rd)]);
		put_reason_map(o, d->val[NV_ROW_I(rd)]);
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
 * d's period for the core's attribution phase (an energy_obs in s->obs,
 * handed over by the energy op): have_e with the period's energy_j (J), and
 * the power reading mw when have_w (the lowest seen is the measured idle
 * power). The processes on the GPU weigh by their SM utilization samples
 * over the period, else their device memory (docs/energy.md). Idle power
 * is the block's "idle_power_watts" for this GPU, else the lowest power
 * reading seen on it since start. Without a period's energy (a baseline,
 * no source) the split's fields are removed. 0, or -1 lost.
 */
static int nv_energy_split(struct nv_state *s, struct nv_dev *d, json_t *o, int have_e, double energy_j, int have_w,
			   unsigned mw)
{
	struct energy_obs ob = { .idle_w = -1, .uuid = d->have_ident ? d->uuid : NULL, .d = o, .now_ns = s->cycle_ns };
	int64_t last = d->split_ns;
	size_t n = 0;

	d->split_ns = s->cycle_ns;
	if (have_w && (!d->have_min || mw < d->min_mw)) {
		d->min_mw = mw;
		d->have_min = 1;
	}
	ob.have = have_e && last && s->cycle_ns > last;
	if (!ob.have) {
		energy_obs_add(&s->obs, &ob);
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
	energy_obs_add(&s->obs, &ob);
	return 0;
}

/*
 * Power: power_watts, and this cycle's energy estimate from the power
 * readings (e->est_mj): the trapezoid of this reading and the last one
 * over the time between them.
 */
static int put_power(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now)
{
	struct nv_energy *e = &d->energy;
	int r = nv_got(d, rd);
	unsigned u = r ? (unsigned)d->val[NV_ROW_I(rd)] : 0;

	(void)now;
	devrec_clear(&s->rec);
	if (r) {
		s->rec.power_w = u / 1000.0;
		s->rec.have |= DR_POWER;
	}
	devrec_power_json(&s->rec, o);
	e->est_mj = -1;
	if (r && e->have_p && s->cycle_ns >= e->p_ns)
		e->est_mj = ((double)e->p_mw + (double)u) / 2.0 * (double)(s->cycle_ns - e->p_ns) / (double)NS_PER_S;
	e->have_p = r;
	e->p_mw = u;
	e->p_ns = s->cycle_ns;
	return 0;
}

/* The energy counter is read now whatever its cadence when there is nothing to estimate from. */
static int must_energy(const struct nv_state *s, const struct nv_dev *d)
{
	(void)s;
	return d->energy.est_mj < 0 || (!d->energy.have && !d->energy.from_power);
}

/*
 * Energy: the counter costs milliseconds of driver time per read, so it is
 * read on its own cadence ("energy_period", s->energy_every; and whenever
 * there is no power reading to estimate from: must_energy); in between,
 * the period's energy is the power readings' estimate (put_power), and
 * the total is re-anchored to the counter at each read (energy_anchor).
 * Then the period's split among the processes.
 */
static int put_energy(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now)
{
	const struct nv_read *pw = nv_row(GROUP_DEVICE_POWER, NF_POWER), *lim = nv_row(GROUP_DEVICE_INFO, NF_LIMIT);
	struct nv_energy *e = &d->energy;
	double inc = -1, est = e->est_mj;
	int r = nv_got(d, rd), have_e;

	if (now) {
		if (r)
			inc = energy_anchor(e, d->val[NV_ROW_I(rd)], s->cycle_ns,
					    nv_got(d, lim) ? (unsigned)d->val[NV_ROW_I(lim)] / 1000.0 : 0);
		else
			e->have = 0;
		if (inc == NV_E_REFUSED) {
			char key[16];

			snprintf(key, sizeof(key), "%u", d->index);
			energy_counter_refused(s->group, &s->noted, "nvidia", key, e->why);
		} else if (r && inc < 0 && e->from_power) { /* the counter's first read: this period's still from power */
			inc = est;
		}
		e->from_power = 0;
	} else if (!nv_asks(s, d, rd)) {
		e->have = e->from_power = 0;
	} else if (e->have) {
		inc = energy_estimate(e, est);
	} else {
		inc = est; /* from_power: before the counter's first read, no total */
	}
	have_e = (e->have || e->from_power) && inc >= 0;
	devrec_clear(&s->rec);
	if (have_e) {
		s->rec.energy_j = inc / 1000.0;
		s->rec.have |= DR_ENERGY;
	}
	if (e->have) {
		s->rec.energy_total_j = ((double)e->counter + e->ahead_mj) / 1000.0;
		s->rec.have |= DR_ENERGY_TOTAL;
	}
	devrec_energy_json(&s->rec, o);
	return nv_energy_split(s, d, o, have_e, inc / 1000.0, nv_got(d, pw),
			       nv_got(d, pw) ? (unsigned)d->val[NV_ROW_I(pw)] : 0);
}

/* The ECC counters: kind k of the four (rd->arg), a running total and the period's increase. */
static const int nv_ecc_kinds[4][2] = { { NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC },
					{ NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC },
					{ NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC },
					{ NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC } };

static int read_ecc(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd)
{
	unsigned long long v = 0;
	int r = nv_ok(s, d, NVC(NV_LC, s->api.ecc, d->h, nv_ecc_kinds[rd->arg][0], nv_ecc_kinds[rd->arg][1], &v),
		      rd->f);

	d->val[NV_ROW_I(rd)] = v;
	return r;
}

static int put_ecc(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now)
{
	int k = rd->arg, r = nv_got(d, rd);
	uint64_t v = d->val[NV_ROW_I(rd)];

	(void)s;
	(void)now;
	d->ecc_had[k] = r && ctr_step(&d->c[C_ECC_CV + k], v, &d->ecc_delta[k]);
	if (r) {
		jset_u64_na(o, rd->key, v, NVML_VALUE_NOT_AVAILABLE_ULL);
	} else {
		json_object_del(o, rd->key);
		d->c[C_ECC_CV + k].have = 0;
	}
	return 0;
}

/* ecc_errors: the period's increase, from the volatile counters (live), else the aggregate ones. */
static int put_ecc_errors(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now)
{
	const int *had = d->ecc_had;

	(void)s;
	(void)rd;
	(void)now;
	if ((had[0] && had[1]) || (had[2] && had[3])) {
		json_t *e = jset_obj(o, "ecc_errors");
		int b = had[0] && had[1] ? 0 : 2;

		jset_u64_na(e, "corrected", d->ecc_delta[b], NVML_VALUE_NOT_AVAILABLE_ULL);
		jset_u64_na(e, "uncorrected", d->ecc_delta[b + 1], NVML_VALUE_NOT_AVAILABLE_ULL);
	} else {
		json_object_del(o, "ecc_errors");
	}
	return 0;
}

/*
 * The PCIe replay counter, on the slow cadence: between reads its
 * increase is 0 and the total the last one read; a read reports the
 * increase since the read before, so the increases still add up to the
 * counter's.
 */
static int put_replay(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now)
{
	int r = nv_got(d, rd);
	unsigned u = (unsigned)d->val[NV_ROW_I(rd)];
	uint64_t dl;

	(void)s;
	if (now) {
		if (r && ctr_step(&d->c[C_REPLAY], u, &dl))
			jset_u64_na(o, "pcie_replays", dl, NVML_VALUE_NOT_AVAILABLE_ULL);
		else
			json_object_del(o, "pcie_replays");
		if (r)
			jset_int(o, "pcie_replays_total", u);
		else
			d->c[C_REPLAY].have = 0;
	} else if (r) {
		if (d->c[C_REPLAY].have)
			jset_u64_na(o, "pcie_replays", 0, NVML_VALUE_NOT_AVAILABLE_ULL);
		jset_int(o, "pcie_replays_total", u);
	} else {
		d->c[C_REPLAY].have = 0;
	}
	if (!r) {
		json_object_del(o, "pcie_replays");
		json_object_del(o, "pcie_replays_total");
	}
	return 0;
}

/* NVML events (nvidia_events.c) and NVLink errors (nvidia_links.c): their modules' fields. */
static int put_events_links(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now)
{
	nvmlReturn_t lost;

	(void)rd;
	(void)now;
	if (s->events)
		nv_events_report(s->events, (size_t)(d - s->devs), o);
	if (nv_links_errors(s->links, (size_t)(d - s->devs), d->h, o, &lost) < 0)
		return nv_ok(s, d, lost, NF_FIELDS);
	return 0;
}

/* Retired pages (before Ampere), three field values: SBE, DBE, pending. 1 the call answered, 0, -1 lost. */
static int read_retired(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd)
{
	nvmlFieldValue_t f[3];
	nvmlReturn_t rc;

	memset(f, 0, sizeof(f));
	memset(d->retired_r, 0, sizeof(d->retired_r));
	f[0].fieldId = NVML_FI_DEV_RETIRED_SBE;
	f[1].fieldId = NVML_FI_DEV_RETIRED_DBE;
	f[2].fieldId = NVML_FI_DEV_RETIRED_PENDING;
	rc = NVC(NV_LC, s->api.fields, d->h, 3, f);
	if (rc != NVML_SUCCESS)
		return nv_ok(s, d, rc, rd->f) < 0 ? -1 : 0;
	for (int k = 0; k < 3; k++)
		if ((d->retired_r[k] = nv_field_u64(s, d, &f[k], rd->f, &d->retired[k])) < 0)
			return -1;
	return 1;
}

static int put_retired(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now)
{
	const uint64_t *fv = d->retired;
	const int *fr = d->retired_r;

	(void)s;
	(void)now;
	if (nv_got(d, rd) && fr[0] && fr[1]) {
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
	} else {
		json_object_del(o, "retired_pages");
	}
	return 0;
}

/* Remapped rows (Ampere on). */
static int read_remap(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd)
{
	unsigned *v = d->remap;

	return nv_ok(s, d, NVC(NV_LC, s->api.remap, d->h, &v[0], &v[1], &v[2], &v[3]), rd->f);
}

static int put_remap(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now)
{
	(void)s;
	(void)now;
	if (nv_got(d, rd)) {
		json_t *p = jset_obj(o, "remapped_rows");

		jset_int(p, "correctable", d->remap[0]);
		jset_int(p, "uncorrectable", d->remap[1]);
		jset_bool(p, "pending", d->remap[2] != 0);
		jset_bool(p, "failed", d->remap[3] != 0);
	} else {
		json_object_del(o, "remapped_rows");
	}
	return 0;
}

/* ---- the table ----------------------------------------------------------- */

#define API(fn) offsetof(struct nvml_api, fn)
#define I GROUP_DEVICE_INFO
#define U GROUP_DEVICE_UTILIZATION
#define M GROUP_DEVICE_MEMORY
#define T GROUP_DEVICE_THERMAL
#define P GROUP_DEVICE_POWER
#define C GROUP_DEVICE_CLOCKS
#define E GROUP_DEVICE_ERRORS

/*
 * The NVML reads of a GPU, each group's in the order its fields are
 * written. Beside them, outside the table: the identity (at lookup),
 * PCIe throughput (the worker pool), NVLink, GPM and the MIG instances
 * (their modules), and the process samples the energy split reads.
 */
const struct nv_read nv_reads[] = {
	/* group, field, cadence, call, entry point, arg, key, in, div, read, put, must */
	{ I, NF_MEM, NV_STATIC, "nvmlDeviceGetMemoryInfo(_v2)", NV_NO_API, 0, "memory_total_bytes", NULL, 1,
	  read_total, nv_put_u64, NULL },
	{ I, NF_LIMIT, NV_STATIC, "nvmlDeviceGetEnforcedPowerLimit", API(power_limit), 0, "power_limit_watts", NULL,
	  1000, nv_read_uint, nv_put_real, NULL },
	{ I, NF_MIG, NV_STATIC, "nvmlDeviceGetMigMode", API(mig_mode), 0, "mig_mode", NULL, 1, read_mig_mode,
	  put_mig_mode, NULL },
	{ U, NF_UTIL, NV_EVERY, "nvmlDeviceGetUtilizationRates", API(util), 0, NULL, NULL, 1, read_util, put_util,
	  NULL },
	{ U, NF_ENC, NV_EVERY, "nvmlDeviceGetEncoderUtilization", API(enc), 0, "encoder_percent", NULL, 1,
	  nv_read_codec, nv_put_real, NULL },
	{ U, NF_DEC, NV_EVERY, "nvmlDeviceGetDecoderUtilization", API(dec), 0, "decoder_percent", NULL, 1,
	  nv_read_codec, nv_put_real, NULL },
	{ M, NF_MEM, NV_EVERY, "nvmlDeviceGetMemoryInfo (v2 on the slow cadence)", NV_NO_API, 0, NULL, NULL, 1,
	  read_mem_row, put_mem, NULL },
	{ M, NF_PROCS, NV_EVERY, "nvmlDeviceGetComputeRunningProcesses", API(procs), 0, NULL, NULL, 1,
	  read_procs_row, put_procs_row, NULL },
	/* put_temp's rows: one after the other */
	{ T, NF_TEMP, NV_EVERY, "nvmlDeviceGetTemperature", API(temp), NVML_TEMPERATURE_GPU, "gpu",
	  "temperatures_celsius", 1, nv_read_temp, put_temp, NULL },
	{ T, NF_MEMTEMP, NV_SLOW, "nvmlDeviceGetFieldValues", API(fields), NVML_FI_DEV_MEMORY_TEMP, "memory",
	  "temperatures_celsius", 1, nv_read_field, put_temp, NULL },
	{ T, NF_FAN, NV_SLOW, "nvmlDeviceGetFanSpeed", API(fan), 0, "fan_percent", NULL, 1, nv_read_uint,
	  nv_put_real, NULL },
	{ T, NF_REASONS, NV_EVERY, "nvmlDeviceGetCurrentClocksEventReasons", API(reasons), 0, NULL, NULL, 1,
	  nv_read_ull, put_reasons_row, NULL },
	{ P, NF_POWER, NV_EVERY, "nvmlDeviceGetPowerUsage", API(power), 0, NULL, NULL, 1, nv_read_uint, put_power,
	  NULL },
	{ P, NF_ENERGY, NV_ENERGY, "nvmlDeviceGetTotalEnergyConsumption", API(energy), 0, NULL, NULL, 1, nv_read_ull,
	  put_energy, must_energy },
	{ C, NF_CLOCK, NV_EVERY, "nvmlDeviceGetClockInfo", API(clock), NVML_CLOCK_GRAPHICS, "graphics", "clocks_mhz",
	  1, nv_read_clock, nv_put_int, NULL },
	{ C, NF_CLOCK_SM, NV_EVERY, "nvmlDeviceGetClockInfo", API(clock), NVML_CLOCK_SM, "sm", "clocks_mhz", 1,
	  nv_read_clock, nv_put_int, NULL },
	{ C, NF_CLOCK_MEM, NV_EVERY, "nvmlDeviceGetClockInfo", API(clock), NVML_CLOCK_MEM, "memory", "clocks_mhz", 1,
	  nv_read_clock, nv_put_int, NULL },
	{ C, NF_CLOCK_VIDEO, NV_EVERY, "nvmlDeviceGetClockInfo", API(clock), NVML_CLOCK_VIDEO, "video", "clocks_mhz",
	  1, nv_read_clock, nv_put_int, NULL },
	{ E, NF_ECC, NV_EVERY, "nvmlDeviceGetTotalEccErrors", API(ecc), 0, "ecc_corrected_volatile_total", NULL, 1,
	  read_ecc, put_ecc, NULL },
	{ E, NF_ECC, NV_EVERY, "nvmlDeviceGetTotalEccErrors", API(ecc), 1, "ecc_uncorrected_volatile_total", NULL, 1,
	  read_ecc, put_ecc, NULL },
	{ E, NF_ECC, NV_EVERY, "nvmlDeviceGetTotalEccErrors", API(ecc), 2, "ecc_corrected_aggregate_total", NULL, 1,
	  read_ecc, put_ecc, NULL },
	{ E, NF_ECC, NV_EVERY, "nvmlDeviceGetTotalEccErrors", API(ecc), 3, "ecc_uncorrected_aggregate_total", NULL,
	  1, read_ecc, put_ecc, NULL },
	{ E, NF_ECC, NV_PUT, NULL, NV_NO_API, 0, "ecc_errors", NULL, 1, NULL, put_ecc_errors, NULL },
	{ E, NF_REPLAY, NV_SLOW, "nvmlDeviceGetPcieReplayCounter", API(replay), 0, NULL, NULL, 1, nv_read_uint,
	  put_replay, NULL },
	{ E, NF_EVENTS, NV_PUT, NULL, NV_NO_API, 0, NULL, NULL, 1, NULL, put_events_links, NULL },
	{ E, NF_RETIRED, NV_SLOW, "nvmlDeviceGetFieldValues", API(fields), 0, NULL, NULL, 1, read_retired,
	  put_retired, NULL },
	{ E, NF_REMAP, NV_EVERY, "nvmlDeviceGetRemappedRows", API(remap), 0, NULL, NULL, 1, read_remap, put_remap,
	  NULL },
};
const size_t nv_nreads = sizeof(nv_reads) / sizeof(nv_reads[0]);
_Static_assert(sizeof(nv_reads) / sizeof(nv_reads[0]) <= NV_READS_MAX, "a bit per row in nv_dev.got and .stale");

#undef I
#undef U
#undef M
#undef T
#undef P
#undef C
#undef E

/* ---- groups: each walks its rows ----------------------------------------- */

int g_info(struct nv_state *s, struct nv_dev *d, json_t *o)
{
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
	return nv_walk(s, d, GROUP_DEVICE_INFO, o);
}

int g_util(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	unsigned u;
	int r;

	if (nv_walk(s, d, GROUP_DEVICE_UTILIZATION, o) < 0)
		return -1;
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

int g_mem(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	if (nv_walk(s, d, GROUP_DEVICE_MEMORY, o) < 0)
		return -1;
	return put_mig(s, d, o);
}

int g_thermal(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	return nv_walk(s, d, GROUP_DEVICE_THERMAL, o);
}

int g_power(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	return nv_walk(s, d, GROUP_DEVICE_POWER, o);
}

int g_clocks(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	return nv_walk(s, d, GROUP_DEVICE_CLOCKS, o);
}

int g_errors(struct nv_state *s, struct nv_dev *d, json_t *o)
{
	return nv_walk(s, d, GROUP_DEVICE_ERRORS, o);
}

#undef TRY
