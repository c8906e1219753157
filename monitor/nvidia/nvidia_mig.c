/* SPDX-License-Identifier: MIT */
/*
 * MIG instances as device entries; see nvidia_mig.h.
 *
 * The layout (which MIG devices exist, their handles and identities) is
 * read once per cycle from the parent GPU: nvmlDeviceGetMigMode,
 * nvmlDeviceGetMaxMigDeviceCount, nvmlDeviceGetMigDeviceHandleByIndex, then
 * per MIG device its GPU/compute instance ids, UUID ("MIG-...") and name
 * ("NVIDIA H100 80GB HBM3 MIG 1g.10gb", whose last word is the profile).
 * An instance that stays (same ids and UUID) keeps its GPM baseline; one
 * that goes away is removed from every group it is written to, the next
 * time that group is collected.
 *
 * Per group: device_info has the instance's memory total and, when it has
 * no profiling metrics, why; device_utilization its GPM metrics (sampled per
 * GPU instance with nvmlGpmMigSampleGet); device_memory its memory and its
 * processes (nvmlDeviceGetComputeRunningProcesses on the MIG handle, which
 * lists that instance's processes only).
 */
#include "nvidia_mig.h"
#include "../core/devrec.h"
#include "../../common/jset.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIG_PROC_START 16
#define MIG_PROC_MAX 65536

struct mig_inst {
	nvmlDevice_t h;
	unsigned gi, ci;
	unsigned idx; /* its index among the GPU's MIG devices (nvmlDeviceGetMigDeviceHandleByIndex) */
	char key[48]; /* "<GPU>/<GI>/<CI>" */
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	char profile[32]; /* "1g.10gb"; "" when the name has none */
	struct nv_gpm gpm;
	nvmlProcessInfo_v2_t *pbuf;
	unsigned pcap;
};

struct nv_mig {
	struct mig_inst in[NV_MIG_MAX];
	unsigned n;
	int have_cycle;
	int64_t cycle;     /* the cycle whose layout in[] is */
	nvmlReturn_t lost; /* that read's lost-GPU error, NVML_SUCCESS when none */
	unsigned char written[GROUP_COUNT]; /* group g's devices may hold entries of this GPU's instances */
	struct devrec rec; /* the instance being filled: memory and processes, written by devrec_*_json */
};

void nv_mig_resolve(void *dl, struct nv_mig_api *a)
{
	static const struct {
		size_t off;
		const char *names[2];
	} syms[] = {
		{ offsetof(struct nv_mig_api, mig_mode), { "nvmlDeviceGetMigMode", NULL } },
		{ offsetof(struct nv_mig_api, mig_count), { "nvmlDeviceGetMaxMigDeviceCount", NULL } },
		{ offsetof(struct nv_mig_api, gi_id), { "nvmlDeviceGetGpuInstanceId", NULL } },
		{ offsetof(struct nv_mig_api, ci_id), { "nvmlDeviceGetComputeInstanceId", NULL } },
		{ offsetof(struct nv_mig_api, mig_handle), { "nvmlDeviceGetMigDeviceHandleByIndex", NULL } },
		{ offsetof(struct nv_mig_api, uuid), { "nvmlDeviceGetUUID", NULL } },
		{ offsetof(struct nv_mig_api, name), { "nvmlDeviceGetName", NULL } },
		{ offsetof(struct nv_mig_api, mem), { "nvmlDeviceGetMemoryInfo", NULL } },
		{ offsetof(struct nv_mig_api, procs),
		  { "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2" } },
	};

	memset(a, 0, sizeof(*a));
	for (size_t i = 0; dl && i < ARRAY_SIZE(syms); i++) {
		void *p = NULL;

		for (size_t k = 0; k < 2 && syms[i].names[k] && !p; k++)
			p = dlsym(dl, syms[i].names[k]);
		/* POSIX: a function's address and a void * share one representation. */
		memcpy((char *)a + syms[i].off, &p, sizeof(p));
	}
}

struct nv_mig *nv_mig_new(void)
{
	struct nv_mig *m = xcalloc(1, sizeof(*m));

	for (unsigned i = 0; i < NV_MIG_MAX; i++)
		nv_gpm_init(&m->in[i].gpm);
	return m;
}

static void inst_release(struct mig_inst *in, const struct nv_gpm_api *ga)
{
	nv_gpm_release(ga, &in->gpm, 0);
	free(in->pbuf);
	memset(in, 0, sizeof(*in));
}

void nv_mig_reset(struct nv_mig *m, const struct nv_gpm_api *ga)
{
	if (!m)
		return;
	for (unsigned i = 0; i < NV_MIG_MAX; i++)
		inst_release(&m->in[i], ga);
	m->n = 0;
	m->have_cycle = 0;
	m->lost = NVML_SUCCESS;
}

void nv_mig_free(struct nv_mig *m, const struct nv_gpm_api *ga)
{
	if (!m)
		return;
	nv_mig_reset(m, ga);
	devrec_free(&m->rec);
	free(m);
}

static int mig_lost(nvmlReturn_t rc)
{
	return rc == NVML_ERROR_GPU_IS_LOST || rc == NVML_ERROR_RESET_REQUIRED;
}

/* The GPU instance profile in a MIG device name: its last word, without a compute-instance "Nc." prefix. */
static void profile_of(const char *name, char *dst, size_t size)
{
	const char *p = strstr(name, " MIG "), *q;

	dst[0] = 0;
	if (!p)
		return;
	while ((q = strstr(p + 1, " MIG ")))
		p = q;
	p += 5;
	q = strchr(p, '.');
	/* "1c.2g.20gb": compute instance 1c of GPU instance profile 2g.20gb */
	if (q && q[-1] == 'c' && strchr(q + 1, '.'))
		p = q + 1;
	snprintf(dst, size, "%s", p);
}

/*
 * Read the layout of parent p into fresh[] (*n entries); old instances that
 * match (ids and UUID) are moved over with their GPM state, the rest freed.
 * NVML_SUCCESS or a lost-GPU error.
 */
static nvmlReturn_t read_layout(struct nv_mig *m, const struct nv_mig_api *a, const struct nv_gpm_api *ga,
				const struct nv_mig_parent *p)
{
	struct mig_inst fresh[NV_MIG_MAX];
	unsigned cur = 0, pend = 0, max = NV_MIG_MAX - 1, n = 0;
	nvmlReturn_t rc;

	if (!a->mig_mode || !a->mig_handle || !a->gi_id || !a->ci_id)
		return NVML_SUCCESS;
	if (p->mig_mode >= 0) { /* the caller's, read on its slow cadence (MIG mode hardly ever changes) */
		rc = NVML_SUCCESS;
		cur = (unsigned)p->mig_mode;
	} else {
		rc = NVC(a->lc, a->mig_mode, p->h, &cur, &pend);
	}
	if (mig_lost(rc))
		return rc;
	if ((rc != NVML_SUCCESS || cur != NVML_FEATURE_ENABLED) && !m->n)
		return NVML_SUCCESS; /* off, and it was: the steady state of most GPUs costs one call */
	memset(fresh, 0, sizeof(fresh));
	if (rc != NVML_SUCCESS || cur != NVML_FEATURE_ENABLED)
		goto done;
	if (a->mig_count) {
		rc = NVC(a->lc, a->mig_count, p->h, &max);
		if (mig_lost(rc))
			return rc;
		if (rc != NVML_SUCCESS)
			max = NV_MIG_MAX - 1;
	}
	for (unsigned i = 0; i < max && i < 64 && n < NV_MIG_MAX; i++) {
		struct mig_inst *f = &fresh[n];
		nvmlDevice_t mh = NULL;

		rc = NVC(a->lc, a->mig_handle, p->h, i, &mh);
		if (mig_lost(rc))
			return rc;
		if (rc != NVML_SUCCESS || !mh)
			continue;
		f->h = mh;
		f->idx = i;
		if ((rc = NVC(a->lc, a->gi_id, mh, &f->gi)) != NVML_SUCCESS || (rc = NVC(a->lc, a->ci_id, mh, &f->ci)) != NVML_SUCCESS) {
			if (mig_lost(rc))
				return rc;
			continue;
		}
		if (a->uuid && (rc = NVC(a->lc, a->uuid, mh, f->uuid, sizeof(f->uuid) - 1)) != NVML_SUCCESS) {
			if (mig_lost(rc))
				return rc;
			f->uuid[0] = 0;
		}
		if (a->name && (rc = NVC(a->lc, a->name, mh, f->name, sizeof(f->name) - 1)) != NVML_SUCCESS) {
			if (mig_lost(rc))
				return rc;
			f->name[0] = 0;
		}
		profile_of(f->name, f->profile, sizeof(f->profile));
		snprintf(f->key, sizeof(f->key), "%u/%u/%u", p->index, f->gi, f->ci);
		n++;
	}
done:
	/* Keep what stays: the GPM baseline and the process buffer. */
	for (unsigned k = 0; k < n; k++) {
		struct mig_inst *f = &fresh[k];

		nv_gpm_init(&f->gpm);
		for (unsigned j = 0; j < m->n; j++) {
			struct mig_inst *o = &m->in[j];

			if (o->key[0] && o->gi == f->gi && o->ci == f->ci && !strcmp(o->uuid, f->uuid)) {
				f->gpm = o->gpm;
				f->pbuf = o->pbuf;
				f->pcap = o->pcap;
				o->pbuf = NULL;
				o->key[0] = 0;
				nv_gpm_init(&o->gpm);
				break;
			}
		}
	}
	for (unsigned j = 0; j < NV_MIG_MAX; j++)
		inst_release(&m->in[j], ga);
	memcpy(m->in, fresh, sizeof(fresh));
	m->n = n;
	return NVML_SUCCESS;
}


/* The instance's object in devices, with its identity (created, or updated in place). Borrowed. */
static json_t *inst_obj(const struct mig_inst *in, const struct nv_mig_parent *p, json_t *devices)
{
	json_t *e = jset_obj(devices, in->key);

	jset_int(e, "index", p->index);
	jset_str_opt(e, "uuid", in->uuid);
	jset_str_opt(e, "pci_bus_id", p->pci);
	jset_str_opt(e, "model", in->name);
	jset_str_opt(e, "parent_uuid", p->uuid);
	jset_int(e, "gpu_instance_id", in->gi);
	jset_int(e, "compute_instance_id", in->ci);
	jset_str_opt(e, "mig_profile", in->profile);
	jset_str(e, "error", "");
	return e;
}

/*
 * The instance's compute processes into e's "processes" ({} when none),
 * through rec: a process with several contexts has their memory summed,
 * and is left out when its first context's memory is not available.
 * NVML_SUCCESS or lost.
 */
static nvmlReturn_t inst_procs(struct mig_inst *in, const struct nv_mig_api *a, struct devrec *rec, json_t *e)
{
	nvmlReturn_t rc = NVML_ERROR_NOT_SUPPORTED;
	unsigned n = 0;

	if (a->procs) {
		if (!in->pbuf) {
			in->pcap = MIG_PROC_START;
			in->pbuf = xcalloc(in->pcap, sizeof(*in->pbuf));
		}
		for (int tries = 0; tries < 4; tries++) {
			n = in->pcap;
			rc = NVC(a->lc, a->procs, in->h, &n, in->pbuf);
			if (rc != NVML_ERROR_INSUFFICIENT_SIZE || in->pcap >= MIG_PROC_MAX)
				break;
			in->pcap = n > in->pcap ? n + n / 4 + 8 : in->pcap * 2;
			if (in->pcap > MIG_PROC_MAX)
				in->pcap = MIG_PROC_MAX;
			free(in->pbuf);
			in->pbuf = xcalloc(in->pcap, sizeof(*in->pbuf));
		}
	}
	if (mig_lost(rc))
		return rc;
	if (rc != NVML_SUCCESS) {
		json_object_del(e, "processes");
		return NVML_SUCCESS;
	}
	if (n > in->pcap)
		n = in->pcap;
	devrec_clear(rec);
	rec->have |= DR_PROCS;
	for (unsigned i = 0; i < n; i++) {
		uint64_t bytes = 0;
		unsigned j;

		/* A process with several contexts in one instance: its memory summed, once. */
		for (j = 0; j < i && in->pbuf[j].pid != in->pbuf[i].pid; j++)
			;
		if (j < i)
			continue;
		for (j = i; j < n; j++)
			if (in->pbuf[j].pid == in->pbuf[i].pid && in->pbuf[j].usedGpuMemory != NVML_VALUE_NOT_AVAILABLE_ULL)
				bytes += in->pbuf[j].usedGpuMemory;
		if (in->pbuf[i].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE_ULL || bytes == NVML_VALUE_NOT_AVAILABLE_ULL)
			continue;
		devrec_proc_mem_add(devrec_proc(rec, (pid_t)in->pbuf[i].pid), bytes);
		if (a->named)
			pid_list_add(a->named, (pid_t)in->pbuf[i].pid);
	}
	devrec_procs_json(rec, DEVREC_PROC_MEMORY, NULL, e);
	return NVML_SUCCESS;
}

/* One GPM step of the instance (its GPU's support decides first). NVML_SUCCESS or lost. */
static nvmlReturn_t inst_gpm(struct mig_inst *in, const struct nv_gpm_api *ga, const struct nv_mig_parent *p)
{
	/* The GPU's own answer decides (not its own sampling, which MIG mode may refuse). */
	if (p->gpm && p->gpm->support < 0 && !in->gpm.state) {
		in->gpm.state = -1;
		snprintf(in->gpm.why, sizeof(in->gpm.why), "%s", p->gpm->why);
	}
	if (p->gpm && p->gpm->support == 0)
		return NVML_SUCCESS; /* the GPU's support is not known yet */
	return nv_gpm_step(ga, &in->gpm, p->h, in->gi, clock_mono_ns());
}

/* Group id's fields of one instance into e. NVML_SUCCESS or lost. */
static nvmlReturn_t inst_fill(struct mig_inst *in, const struct nv_mig_api *a, struct devrec *rec,
			      enum group_id id, const struct nv_mig_parent *p, json_t *e)
{
	nvmlMemory_t mem;
	nvmlReturn_t rc;

	switch (id) {
	case GROUP_DEVICE_INFO:
	case GROUP_DEVICE_MEMORY:
		memset(&mem, 0, sizeof(mem));
		rc = a->mem ? NVC(a->lc, a->mem, in->h, &mem) : NVML_ERROR_FUNCTION_NOT_FOUND;
		if (mig_lost(rc))
			return rc;
		if (id == GROUP_DEVICE_INFO) {
			if (rc == NVML_SUCCESS)
				jset_u64_na(e, "memory_total_bytes", mem.total, NVML_VALUE_NOT_AVAILABLE_ULL);
			else
				json_object_del(e, "memory_total_bytes");
			if (p->gpm && p->gpm->support < 0 && !in->gpm.state) {
				in->gpm.state = -1;
				snprintf(in->gpm.why, sizeof(in->gpm.why), "%s", p->gpm->why);
			}
			nv_gpm_put_info(&in->gpm, e);
			return NVML_SUCCESS;
		}
		devrec_clear(rec);
		if (rc == NVML_SUCCESS)
			devrec_set_memory(rec, mem.total, mem.used, mem.free, NVML_VALUE_NOT_AVAILABLE_ULL);
		devrec_memory_json(rec, e);
		return inst_procs(in, a, rec, e);
	case GROUP_DEVICE_UTILIZATION:
		nv_gpm_put(&in->gpm, e, 2); /* sampled by inst_gpm */
		return NVML_SUCCESS;
	default:
		return NVML_SUCCESS;
	}
}

nvmlReturn_t nv_mig_collect(struct nv_mig *m, const struct nv_mig_api *a, const struct nv_gpm_api *ga,
			    enum group_id id, const struct nv_mig_parent *p, json_t *devices, int64_t cycle)
{
	char prefix[24];
	const char *key;
	json_t *v;
	void *tmp;
	nvmlReturn_t rc;

	if (id != GROUP_DEVICE_INFO && id != GROUP_DEVICE_UTILIZATION && id != GROUP_DEVICE_MEMORY)
		return NVML_SUCCESS; /* no MIG entries in the other groups */
	if (!m->have_cycle || m->cycle != cycle) {
		m->have_cycle = 1;
		m->cycle = cycle;
		m->lost = read_layout(m, a, ga, p);
	}
	if (m->lost)
		return m->lost;
	/* Entries of instances that went away (or of every instance, MIG off). */
	if (m->written[id]) {
		snprintf(prefix, sizeof(prefix), "%u/", p->index);
		json_object_foreach_safe(devices, tmp, key, v) {
			unsigned i;

			if (strncmp(key, prefix, strlen(prefix)))
				continue;
			for (i = 0; i < m->n && strcmp(m->in[i].key, key); i++)
				;
			if (i == m->n)
				json_object_del(devices, key);
		}
		m->written[id] = m->n > 0;
	}
	for (unsigned i = 0; i < m->n; i++) {
		struct mig_inst *in = &m->in[i];
		json_t *e;

		if (id == GROUP_DEVICE_UTILIZATION) {
			/* NVML has no utilization of a MIG instance but GPM's: no GPM, no entry here. */
			if ((rc = inst_gpm(in, ga, p)))
				return rc;
			if (in->gpm.state != 1) {
				json_object_del(devices, in->key);
				continue;
			}
		}
		e = inst_obj(in, p, devices);
		m->written[id] = 1;
		if ((rc = inst_fill(in, a, &m->rec, id, p, e)))
			return rc;
	}
	return NVML_SUCCESS;
}

void nv_mig_clear(unsigned index, json_t *devices)
{
	char prefix[24];
	const char *key;
	json_t *v;
	void *tmp;

	snprintf(prefix, sizeof(prefix), "%u/", index);
	json_object_foreach_safe(devices, tmp, key, v)
		if (!strncmp(key, prefix, strlen(prefix)))
			json_object_del(devices, key);
}

void nv_mig_idents(const struct nv_mig *m, const struct dev_ident *gpu, struct dev_list *out)
{
	for (unsigned i = 0; m && i < m->n; i++) {
		const struct mig_inst *in = &m->in[i];
		struct dev_ident *d;

		if (!in->key[0])
			continue;
		d = dev_list_add(out, gpu->type, in->key);
		snprintf(d->uuid, sizeof(d->uuid), "%s", in->uuid);
		snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "%s", gpu->pci_bus_id);
		snprintf(d->parent, sizeof(d->parent), "%s", gpu->key);
		d->index = gpu->index;
		d->sub = (int)in->idx;
		d->gi = (int)in->gi;
	}
}
