/* SPDX-License-Identifier: MIT */
/*
 * amdgpu: AMD GPUs read from the amdgpu driver's sysfs files, with no ROCm
 * library. A device is a DRM card (class/drm/cardN) whose PCI device is
 * bound to the amdgpu driver (vendor 0x1002 when the driver link cannot be
 * read). Everything is read under --path.sysfs and --path.procfs.
 *
 *   device_info         serial_number, product_name, unique_id, vbios_version,
 *                       mem_info_vram_total, hwmon power1_cap, the PCIe link
 *                       (current_link_speed/width, max_link_speed/width),
 *                       power_dpm_force_performance_level
 *   device_utilization  gpu_busy_percent, mem_busy_percent, vcn_busy_percent,
 *                       and per process the drm-engine-* busy time of its DRM
 *                       clients (/proc/PID/fdinfo) over the period
 *   device_memory       mem_info_vram_*, mem_info_vis_vram_*, mem_info_gtt_*,
 *                       and per process its clients' drm-memory-vram
 *   device_thermal      hwmon temp*_input by temp*_label and their temp*_crit,
 *                       fan1_input, pwm1
 *   device_power        hwmon power1_average, else power1_input; in*_input
 *                       (vddgfx, vddnb) in volts; the period's energy from
 *                       energy1_input (µJ) where the board has it, else the
 *                       power readings integrated over the period (energy.h)
 *   device_clocks       hwmon freq*_input by label, else the current level
 *                       of pp_dpm_sclk / pp_dpm_mclk (the line marked '*')
 *   device_errors       ras/<block>_err_count ("ue: N" / "ce: M") as per-period
 *                       counts and running totals, ras/gpu_vram_bad_pages,
 *                       pcie_replay_count and the PCIe AER counters
 *                       (aer_dev_correctable/nonfatal/fatal), per period and total
 *
 * The driver answers EPERM (or EBUSY) while the GPU resets or sleeps: that
 * device reports the error for the cycle and the others go on. A file the
 * board lacks is a field left out. The file list, units and sources are in
 * docs/devices.md.
 */
#include "../core/collector.h"
#include "../config/config.h"
#include "../core/devrec.h"
#include "../core/energy.h"
#include "../host/host.h"
#include "amdgpu_clients.h"
#include "sysfs.h"
#include "../../common/log.h"
#include "../../common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AMD_TEMPS 8
#define AMD_FREQS 4
#define AMD_VOLTS 4
#define AMD_RAS 24

/* An hwmon input and the name it is reported under. */
struct amd_sensor {
	char file[24]; /* "temp2_input" */
	char name[40]; /* its label ("junction"), else "temp2" */
};

/* One GPU (a devslot's priv). */
struct amd_dev {
	int fd;        /* the PCI device directory, class/drm/cardN/device */
	int hwfd;      /* its hwmon directory, or -1 */
	char card[16]; /* "card1" */
	char pdev[16]; /* PCI address, as fdinfo's drm-pdev writes it; "" when unknown */
	struct amd_sensor temp[AMD_TEMPS];
	size_t ntemp;
	struct amd_sensor freq[AMD_FREQS];
	size_t nfreq;
	struct amd_sensor volt[AMD_VOLTS];
	size_t nvolt;
	char ras[AMD_RAS][32]; /* "umc_err_count", ... under ras/ */
	size_t nras;
	struct counter ce, ue; /* RAS errors summed over the blocks */
	struct counter replay; /* pcie_replay_count */
	struct counter aer[3]; /* aer_dev_correctable, _nonfatal, _fatal: their TOTAL_ERR_* */
	struct energy_meter energy; /* energy1_input, else power1_* integrated */
	int energy_src;        /* AMD_E_*: the source the meter was fed from */
	int have_period;       /* this cycle's device_power has a period's energy: period_j */
	double period_j;
	int64_t split_ns;      /* the cycle of the last energy split (0: none yet) */
	struct energy_share *shares;
	size_t ashares;
	struct warnset warned;
};

/* Where a GPU's energy comes from: its hwmon energy counter, or its power integrated. */
enum { AMD_E_NONE, AMD_E_COUNTER, AMD_E_POWER };

struct amd_state {
	struct sysfs_coll base; /* first: the shared ops take the state as one */
	struct amd_clients clients; /* the DRM clients (amdgpu_clients.h) */
	int idle_told;             /* an idle_power_watts key that names no GPU was logged */
	struct energy_obs_list obs; /* device_power's observations for the attribution (amd_energy) */
	struct pid_list named;      /* the processes the groups wrote this cycle (amd_processes) */
	struct devrec rec;          /* the device being filled: the shared fields, written by devrec_*_json */
};

_Static_assert(AMD_ENGINES <= DEVREC_ENGINES, "a process's engines fit a device record");
_Static_assert(AMD_TEMPS <= DEVREC_TEMPS, "a GPU's temperatures fit a device record");

/* EPERM and EBUSY: the GPU is in reset or suspended. ENODEV: it went away mid-cycle. */
static const int amd_fatal[] = { EPERM, EBUSY, ENODEV, 0 };

/* ---- discovery ------------------------------------------------------------------ */

static bool is_card(const char *name)
{
	const char *p = name + 4;

	if (strncmp(name, "card", 4) || !*p)
		return false;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/*
 * Is class/drm/CARD an amdgpu device? Its driver (the driver link, or
 * uevent's DRIVER in a tree copied without links), else vendor 0x1002.
 */
static bool amd_is_ours(int sysfd, const char *card)
{
	char path[96], name[64];
	uint64_t vendor;
	ssize_t n;

	snprintf(path, sizeof(path), "class/drm/%s/device", card);
	n = sysfs_driver(sysfd, path, name, sizeof(name));
	if (n >= 0)
		return !strcmp(name, "amdgpu");
	snprintf(path, sizeof(path), "class/drm/%s/device/vendor", card);
	return sysfs_u64(sysfd, path, &vendor) == 0 && vendor == 0x1002;
}

/* Name a sensor by its label file ("edge"), else by its channel ("temp2"). */
static void sensor_name(int fd, const char *input, struct amd_sensor *sn)
{
	char label[32], text[64], chan[24];

	snprintf(sn->file, sizeof(sn->file), "%s", input);
	snprintf(chan, sizeof(chan), "%.*s", (int)strcspn(input, "_"), input);
	snprintf(label, sizeof(label), "%s_label", chan);
	if (sysfs_read(fd, label, text, sizeof(text)) <= 0)
		text[0] = '\0';
	sysfs_key(text, chan, sn->name, sizeof(sn->name));
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* The device's hwmon directory and its temperature and clock inputs. */
static void amd_find_hwmon(struct amd_dev *ad)
{
	struct sysfs_names names = { 0 };

	if (sysfs_list(ad->fd, "hwmon", &names) == 0)
		for (size_t i = 0; i < names.n && ad->hwfd < 0; i++) {
			char rel[96];

			if (strncmp(sysfs_name(&names, i), "hwmon", 5))
				continue;
			snprintf(rel, sizeof(rel), "hwmon/%s", sysfs_name(&names, i));
			ad->hwfd = sysfs_dir(ad->fd, rel);
		}
	if (ad->hwfd >= 0 && sysfs_list(ad->hwfd, ".", &names) == 0)
		for (size_t i = 0; i < names.n; i++) {
			const char *f = sysfs_name(&names, i);

			if (!strncmp(f, "temp", 4) && has_suffix(f, "_input") && ad->ntemp < AMD_TEMPS)
				sensor_name(ad->hwfd, f, &ad->temp[ad->ntemp++]);
			else if (!strncmp(f, "freq", 4) && has_suffix(f, "_input") && ad->nfreq < AMD_FREQS)
				sensor_name(ad->hwfd, f, &ad->freq[ad->nfreq++]);
			else if (!strncmp(f, "in", 2) && has_suffix(f, "_input") && ad->nvolt < AMD_VOLTS)
				sensor_name(ad->hwfd, f, &ad->volt[ad->nvolt++]);
		}
	if (sysfs_list(ad->fd, "ras", &names) == 0)
		for (size_t i = 0; i < names.n && ad->nras < AMD_RAS; i++)
			if (has_suffix(sysfs_name(&names, i), "_err_count"))
				snprintf(ad->ras[ad->nras++], sizeof(ad->ras[0]), "%s", sysfs_name(&names, i));
	sysfs_names_free(&names);
}

static void amd_dev_free(void *priv)
{
	struct amd_dev *ad = priv;

	if (!ad)
		return;
	if (ad->fd >= 0)
		close(ad->fd);
	if (ad->hwfd >= 0)
		close(ad->hwfd);
	free(ad->shares);
	free(ad);
}

static int ras_sum(struct rdctx *r, struct amd_dev *ad, uint64_t *ue, uint64_t *ce);
static void pcie_errors(struct amd_dev *ad, struct rdctx *r, json_t *d);

/* A new GPU in slot sl: its files, identity, selection, and the baseline of its counters. */
static void amd_dev_open(struct amd_state *s, struct devslot *sl, const char *card, int fd)
{
	struct amd_dev *ad = xcalloc(1, sizeof(*ad));
	char rel[96], serial[80], text[128];
	uint64_t ue, ce;
	struct rdctx r = { .type = "amdgpu", .key = card };

	ad->fd = fd;
	ad->hwfd = -1;
	snprintf(ad->card, sizeof(ad->card), "%s", card);
	snprintf(rel, sizeof(rel), "class/drm/%s/device", card);
	if (sysfs_pci_address(s->base.sysfd, rel, text, sizeof(text)) > 0) {
		snprintf(ad->pdev, sizeof(ad->pdev), "%s", text);
		snprintf(sl->pci, sizeof(sl->pci), "%s", text);
	}
	amd_find_hwmon(ad);
	if (sysfs_read(fd, "unique_id", text, sizeof(text)) > 0)
		snprintf(sl->uuid, sizeof(sl->uuid), "%s", text);
	if (sysfs_read(fd, "product_name", text, sizeof(text)) > 0)
		snprintf(sl->model, sizeof(sl->model), "%s", text);
	else if (sysfs_read(fd, "device", text, sizeof(text)) > 0)
		snprintf(sl->model, sizeof(sl->model), "AMD GPU 1002:%s", text[0] == '0' && text[1] == 'x' ? text + 2 : text);
	if (sysfs_read(fd, "serial_number", serial, sizeof(serial)) <= 0)
		serial[0] = '\0';
	sl->priv = ad;
	sl->selected =
		cfg_device_selects(s->base.cfg, sl->index, sl->uuid[0] ? sl->uuid : NULL, serial[0] ? serial : NULL);
	if (ras_sum(&r, ad, &ue, &ce) == 1) {
		counter_step(&ad->ue, ue, &ue);
		counter_step(&ad->ce, ce, &ce);
	}
	pcie_errors(ad, &r, NULL);
}

/* Find the amdgpu cards under class/drm: new ones are opened, vanished ones become gone. */
static void amd_scan(void *state)
{
	struct amd_state *s = state;

	if (sysfs_coll_list(&s->base, "class/drm") < 0)
		return;
	devtab_begin(&s->base.tab);
	for (size_t i = 0; i < s->base.names.n; i++) {
		const char *card = sysfs_name(&s->base.names, i);
		struct devslot *sl;
		char rel[96];
		bool fresh;
		int fd;

		if (!is_card(card))
			continue;
		sl = devtab_find(&s->base.tab, card);
		if (sl && !sl->gone) {
			/* Still there when its directory still is (a removed device's fd sees nothing). */
			if (faccessat(((struct amd_dev *)sl->priv)->fd, "vendor", F_OK, 0) == 0)
				devtab_see(&s->base.tab, card, -1, &fresh);
			continue;
		}
		if (!amd_is_ours(s->base.sysfd, card))
			continue;
		snprintf(rel, sizeof(rel), "class/drm/%s/device", card);
		fd = sysfs_dir(s->base.sysfd, rel);
		if (fd < 0)
			continue;
		sl = devtab_see(&s->base.tab, card, -1, &fresh);
		amd_dev_open(s, sl, card, fd);
	}
	devtab_end(&s->base.tab);
	if (!s->base.tab.n && faccessat(s->base.sysfd, "module/amdgpu", F_OK, 0))
		snprintf(s->base.error, sizeof(s->base.error),
			 "no amdgpu device: the amdgpu driver is not loaded (%s/module/amdgpu)",
			 host_sysfs(s->base.env->host));
}

/*
 * Device memory per process: the VRAM of its clients on this GPU, summed
 * per process into the record (devrec_procs_json writes it).
 */
static void amd_proc_memory(struct amd_state *s, const struct amd_dev *ad, struct devrec *rec)
{
	rec->have |= DR_PROCS;
	for (size_t i = 0; i < s->clients.ncl; i++) {
		const struct drm_client *cl = &s->clients.cl[i];

		if (!cl->have_vram || strcmp(cl->pdev, ad->pdev))
			continue;
		devrec_proc_mem_add(devrec_proc(rec, cl->pid), cl->vram);
		pid_list_add(&s->named, cl->pid);
	}
}

/*
 * Engine busy time per process over the period: each client's drm-engine-*
 * increase since the previous report, as percent of the time that passed,
 * summed per process and engine in the record.
 */
static void amd_proc_engines(struct amd_state *s, const struct amd_dev *ad, struct devrec *rec)
{
	rec->have |= DR_PROCS;
	for (size_t i = 0; i < s->clients.ncl; i++) {
		struct drm_client *cl = &s->clients.cl[i];
		double dt = (double)(cl->t - cl->prev_t);
		struct devrec_proc *p;

		if (strcmp(cl->pdev, ad->pdev))
			continue;
		if (dt <= 0 || !cl->engines) {
			memcpy(cl->prev_ns, cl->ns, sizeof(cl->prev_ns));
			continue;
		}
		p = devrec_proc(rec, cl->pid);
		pid_list_add(&s->named, cl->pid);
		for (size_t e = 0; e < s->clients.neng; e++) {
			uint64_t busy;

			if (!(cl->engines & (1u << e)))
				continue;
			busy = cl->ns[e] >= cl->prev_ns[e] ? cl->ns[e] - cl->prev_ns[e] : cl->ns[e];
			devrec_proc_engine_add(p, (unsigned)e, (double)busy * 100.0 / dt);
		}
		memcpy(cl->prev_ns, cl->ns, sizeof(cl->prev_ns));
		cl->prev_t = cl->t;
	}
}

/* ---- groups ------------------------------------------------------------------------ */

static void set_real(json_t *d, const char *key, double v)
{
	json_object_set_new(d, key, json_real(v));
}

static void set_text(json_t *d, const char *key, char *v)
{
	json_object_set_new(d, key, json_string(utf8_sanitize(v)));
}

/*
 * A PCIe link speed as the PCI core writes it: "16.0 GT/s PCIe" (newer
 * kernels), "8 GT/s" (older ones). GT/s, or -EBADMSG; -ENODATA for
 * "Unknown" (no link, a virtual function).
 */
static int parse_link_speed(const char *text, double *gts)
{
	char *end;

	if (!strncmp(text, "Unknown", 7))
		return -ENODATA;
	*gts = strtod(text, &end);
	if (end == text || !(*gts > 0) || *gts > 1e4)
		return -EBADMSG;
	while (*end == ' ')
		end++;
	return strncmp(end, "GT/s", 4) ? -EBADMSG : 0;
}

/* current_link_speed/width, max_link_speed/width of the GPU's PCI function. */
static void amd_link(struct amd_dev *ad, struct rdctx *r, json_t *d)
{
	static const char *const speed[][2] = { { "current_link_speed", "pcie_link_speed_gts" },
						{ "max_link_speed", "pcie_link_max_speed_gts" } };
	static const char *const width[][2] = { { "current_link_width", "pcie_link_width" },
						{ "max_link_width", "pcie_link_max_width" } };
	char text[64];
	double gts = 0;
	uint64_t lanes;

	for (size_t i = 0; i < 2; i++) {
		if (rd_text(r, ad->fd, speed[i][0], text, sizeof(text)) == 1 &&
		    rd_check(r, speed[i][0], parse_link_speed(text, &gts)) == 1)
			set_real(d, speed[i][1], gts);
		/* 0 or 255: no link trained (the PCI core reads the Link Status register as is) */
		if (rd_u64(r, ad->fd, width[i][0], &lanes) == 1 && lanes > 0 && lanes <= 32)
			json_set_u64(d, width[i][1], lanes);
	}
}

static void amd_info(struct amd_state *s, struct amd_dev *ad, struct rdctx *r, json_t *d)
{
	char text[128];
	uint64_t v;

	if (rd_text(r, ad->fd, "serial_number", text, sizeof(text)) == 1 && text[0])
		set_text(d, "serial", text);
	if (sysfs_read(s->base.sysfd, "module/amdgpu/version", text, sizeof(text)) > 0)
		set_text(d, "driver_version", text);
	if (rd_u64(r, ad->fd, "mem_info_vram_total", &v) == 1)
		json_set_u64(d, "memory_total_bytes", v);
	if (ad->hwfd >= 0 && rd_u64(r, ad->hwfd, "power1_cap", &v) == 1)
		set_real(d, "power_limit_watts", (double)v / 1e6);
	if (rd_text(r, ad->fd, "product_number", text, sizeof(text)) == 1 && text[0])
		set_text(d, "product_number", text);
	if (rd_text(r, ad->fd, "vbios_version", text, sizeof(text)) == 1 && text[0])
		set_text(d, "vbios_version", text);
	if (rd_text(r, ad->fd, "device", text, sizeof(text)) == 1 && text[0])
		set_text(d, "pci_device_id", text);
	set_text(d, "card", ad->card);
	amd_link(ad, r, d);
	/* auto, low, high, manual, profile_standard, profile_peak, ... */
	if (rd_text(r, ad->fd, "power_dpm_force_performance_level", text, sizeof(text)) == 1 && text[0])
		set_text(d, "performance_level", text);
}

static void amd_util(struct amd_state *s, struct amd_dev *ad, struct rdctx *r, json_t *d)
{
	struct devrec *rec = &s->rec;
	const char *eng[AMD_ENGINES];
	uint64_t v;

	if (rd_u64(r, ad->fd, "gpu_busy_percent", &v) == 1) {
		rec->core_pct = (double)v;
		rec->have |= DR_CORE_PCT;
	}
	if (rd_u64(r, ad->fd, "mem_busy_percent", &v) == 1) {
		rec->membw_pct = (double)v;
		rec->have |= DR_MEMBW_PCT;
	}
	devrec_util_json(rec, d);
	if (rd_u64(r, ad->fd, "vcn_busy_percent", &v) == 1)
		set_real(d, "video_percent", (double)v);
	if (!ad->pdev[0] || !s->clients.ok)
		return;
	amd_proc_engines(s, ad, rec);
	for (size_t e = 0; e < s->clients.neng; e++)
		eng[e] = s->clients.eng[e];
	devrec_procs_json(rec, DEVREC_PROC_ENGINES, eng, d);
}

static void amd_memory(struct amd_state *s, struct amd_dev *ad, struct rdctx *r, json_t *d)
{
	struct devrec *rec = &s->rec;
	uint64_t v, used;

	if (rd_u64(r, ad->fd, "mem_info_vram_total", &rec->mem_total) == 1)
		rec->have |= DR_MEM_TOTAL;
	if (rd_u64(r, ad->fd, "mem_info_vram_used", &used) == 1) {
		rec->mem_used = (struct u64sum){ .v = used }; /* read whole: set, not added to */
		rec->have |= DR_MEM_USED;
	}
	if ((rec->have & (DR_MEM_TOTAL | DR_MEM_USED)) == (DR_MEM_TOTAL | DR_MEM_USED)) {
		rec->mem_free = rec->mem_total > rec->mem_used.v ? rec->mem_total - rec->mem_used.v : 0;
		rec->have |= DR_MEM_FREE;
	}
	devrec_memory_json(rec, d);
	/* The part of VRAM the CPU can map (the BAR; all of it with resizable BAR). */
	if (rd_u64(r, ad->fd, "mem_info_vis_vram_total", &v) == 1)
		json_set_u64(d, "visible_total_bytes", v);
	if (rd_u64(r, ad->fd, "mem_info_vis_vram_used", &v) == 1)
		json_set_u64(d, "visible_used_bytes", v);
	if (rd_u64(r, ad->fd, "mem_info_gtt_total", &v) == 1)
		json_set_u64(d, "gtt_total_bytes", v);
	if (rd_u64(r, ad->fd, "mem_info_gtt_used", &v) == 1)
		json_set_u64(d, "gtt_used_bytes", v);
	if (ad->pdev[0] && s->clients.ok) {
		amd_proc_memory(s, ad, rec);
		devrec_procs_json(rec, DEVREC_PROC_MEMORY, NULL, d);
	}
}

static void amd_thermal(struct amd_dev *ad, struct devrec *rec, struct rdctx *r, json_t *d)
{
	json_t *crit = json_object();
	uint64_t pwm, max, rpm;
	int64_t mc;
	char file[40];

	for (size_t i = 0; ad->hwfd >= 0 && i < ad->ntemp; i++) {
		if (rd_s64(r, ad->hwfd, ad->temp[i].file, &mc) == 1)
			devrec_temp_add(rec, ad->temp[i].name, NULL, (double)mc / 1000.0);
		/* temp2_input -> temp2_crit: the shutdown threshold (absent on some boards) */
		snprintf(file, sizeof(file), "%.*s_crit", (int)strcspn(ad->temp[i].file, "_"), ad->temp[i].file);
		if (rd_s64(r, ad->hwfd, file, &mc) == 1)
			json_object_set_new(crit, utf8_sanitize(ad->temp[i].name), json_real((double)mc / 1000.0));
	}
	devrec_temps_json(rec, d);
	if (json_object_size(crit))
		json_object_set(d, "temperatures_crit_celsius", crit);
	json_decref(crit);
	if (ad->hwfd < 0)
		return;
	if (rd_u64(r, ad->hwfd, "pwm1", &pwm) == 1) {
		if (rd_u64(r, ad->hwfd, "pwm1_max", &max) != 1 || !max)
			max = 255;
		set_real(d, "fan_percent", (double)(pwm > max ? max : pwm) * 100.0 / (double)max);
	}
	if (rd_u64(r, ad->hwfd, "fan1_input", &rpm) == 1)
		json_object_set_new(d, "fan_rpm", json_pack("{s:o}", "fan1", json_u64(rpm)));
}

/*
 * The period's energy: energy1_input (µJ since the driver loaded, also
 * energy_total_joules) where the SMU counts it, else the power reading
 * integrated over the time since the last one (no total then). A change of
 * source starts the meter afresh (its first reading is a baseline, with no
 * period); so does a counter step that is not plausible (energy.h; below
 * the power cap, power1_cap), and the group's error says so. No source:
 * no energy fields.
 */
static void amd_energy(struct amd_dev *ad, struct rdctx *r, const struct cycle *cy, struct devrec *rec)
{
	int have_w = !!(rec->have & DR_POWER);
	double watts = rec->power_w;
	uint64_t uj;
	double j = 0;
	int src = AMD_E_NONE, period = 0;

	if (rd_u64(r, ad->hwfd, "energy1_input", &uj) == 1)
		src = AMD_E_COUNTER;
	else if (have_w)
		src = AMD_E_POWER;
	if (src != ad->energy_src) {
		energy_meter_reset(&ad->energy);
		ad->energy_src = src;
	}
	if (src == AMD_E_COUNTER) {
		uint64_t cap = 0; /* the power cap: the plausibility check's limit */

		if (sysfs_u64(ad->hwfd, "power1_cap", &cap))
			cap = 0;
		period = energy_meter_counter(&ad->energy, uj, 0, 1e-6, (double)cap / 1e6, cy->mono_ns, &j);
		if (period < 0)
			energy_counter_refused(r->group, &r->noted, "amdgpu", r->key, ad->energy.why);
		if (have_w)
			energy_meter_see_power(&ad->energy, watts);
	} else if (src == AMD_E_POWER) {
		period = energy_meter_power(&ad->energy, watts, cy->mono_ns, &j);
	}
	ad->have_period = ad->energy.have && period > 0;
	ad->period_j = j;
	if (ad->have_period) {
		rec->energy_j = j;
		rec->have |= DR_ENERGY;
	}
	if (src == AMD_E_COUNTER) { /* the board's own total since the driver loaded */
		rec->energy_total_j = (double)uj / 1e6;
		rec->have |= DR_ENERGY_TOTAL;
	}
}

/*
 * This period's energy for the core's attribution phase (an energy_obs in
 * s->obs, handed over by the energy op): idle is the block's
 * "idle_power_watts" for this GPU, else the lowest power seen; the
 * processes weigh by their DRM clients' busy time on this GPU's engines
 * over the period (fdinfo), else their VRAM. Without a period's energy, or
 * without this cycle's client scan, the split's fields are left out.
 */
static void amd_energy_split(struct amd_state *s, const struct devslot *sl, const struct cycle *cy, json_t *d)
{
	struct amd_dev *ad = sl->priv;
	int64_t last = ad->split_ns;
	struct energy_obs ob = { .uuid = sl->uuid, .d = d, .now_ns = cy->mono_ns };

	ob.idle_w = energy_idle_watts(s->base.cfg ? s->base.cfg->own : NULL, sl->index, sl->uuid, sl->pci);
	if (ob.idle_w < 0 && ad->energy.have_min)
		ob.idle_w = ad->energy.min_w;
	ad->split_ns = cy->mono_ns;
	for (size_t i = 0; s->clients.ok && i < s->clients.ncl; i++) {
		struct drm_client *cl = &s->clients.cl[i];
		struct energy_share *sh;
		uint64_t busy = 0;

		if (strcmp(cl->pdev, ad->pdev))
			continue;
		for (size_t e = 0; e < AMD_ENGINES; e++)
			busy += cl->ns[e];
		sh = energy_share_of(&ad->shares, &ob.n, &ad->ashares, (uint32_t)cl->pid);
		sh->util += busy > cl->energy_ns ? (double)(busy - cl->energy_ns) : 0;
		sh->memory += cl->have_vram ? (double)cl->vram : 0;
		cl->energy_ns = busy;
	}
	ob.have = ad->have_period && last && cy->mono_ns > last && s->clients.ok;
	ob.energy_j = ad->period_j;
	ob.period_s = (double)(cy->mono_ns - last) / 1e9;
	ob.shares = ad->shares;
	energy_obs_add(&s->obs, &ob);
}

static void amd_power(struct amd_dev *ad, struct devrec *rec, struct rdctx *r, const struct cycle *cy, json_t *d)
{
	uint64_t uw;

	ad->have_period = 0; /* until amd_energy says */
	if (ad->hwfd < 0)
		return;
	/* power1_average where the SMU averages, power1_input on boards that only report the instant value. */
	if (rd_u64(r, ad->hwfd, "power1_average", &uw) == 1 || rd_u64(r, ad->hwfd, "power1_input", &uw) == 1) {
		rec->power_w = (double)uw / 1e6;
		rec->have |= DR_POWER;
	}
	amd_energy(ad, r, cy, rec);
	devrec_power_json(rec, d);
	devrec_energy_json(rec, d);
	if (ad->nvolt) {
		json_t *volts = json_object();
		int64_t mv;

		for (size_t i = 0; i < ad->nvolt; i++)
			if (rd_s64(r, ad->hwfd, ad->volt[i].file, &mv) == 1)
				json_object_set_new(volts, utf8_sanitize(ad->volt[i].name), json_real((double)mv / 1000.0));
		if (json_object_size(volts))
			json_object_set(d, "voltages_volts", volts);
		json_decref(volts);
	}
}

/*
 * The current level of a pp_dpm_* file: "0: 500Mhz \n1: 1000Mhz *\n".
 * The level may be a letter ("S: 19Mhz *", deep sleep). 0 with *mhz, or -EBADMSG.
 */
static int dpm_current(const char *text, uint64_t *mhz)
{
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line), *p = end;

		while (p > line && (p[-1] == ' ' || p[-1] == '\t'))
			p--;
		if (p > line && p[-1] == '*') {
			const char *c = strchr(line, ':');
			uint64_t n = 0;

			if (!c || c > end)
				return -EBADMSG;
			for (c++; *c == ' '; c++)
				;
			if (*c < '0' || *c > '9')
				return -EBADMSG;
			while (*c >= '0' && *c <= '9')
				n = n * 10 + (uint64_t)(*c++ - '0');
			*mhz = n;
			return 0;
		}
		line = nl ? nl + 1 : end;
	}
	return -EBADMSG;
}

static void amd_clocks(struct amd_dev *ad, struct rdctx *r, json_t *d)
{
	static const char *const dpm[][2] = { { "pp_dpm_sclk", "graphics" }, { "pp_dpm_mclk", "memory" } };
	json_t *clocks = json_object();
	char text[512];
	uint64_t hz, mhz = 0;
	bool hwmon_has[ARRAY_SIZE(dpm)] = { false }; /* hwmon gave dpm[i][1]: the current level is not needed */

	for (size_t i = 0; ad->hwfd >= 0 && i < ad->nfreq; i++) {
		const char *name = ad->freq[i].name;

		if (rd_u64(r, ad->hwfd, ad->freq[i].file, &hz) != 1)
			continue;
		name = !strcmp(name, "sclk") ? "graphics" : !strcmp(name, "mclk") ? "memory" : name;
		json_object_set_new(clocks, name, json_real((double)hz / 1e6));
		for (size_t k = 0; k < ARRAY_SIZE(dpm); k++)
			hwmon_has[k] |= !strcmp(name, dpm[k][1]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(dpm); i++) {
		int rc = rd_text(r, ad->fd, dpm[i][0], text, sizeof(text));

		if (rc != 1)
			continue;
		if (rd_check(r, dpm[i][0], dpm_current(text, &mhz)) != 1)
			continue;
		if (!hwmon_has[i])
			json_object_set_new(clocks, dpm[i][1], json_real((double)mhz));
	}
	if (json_object_size(clocks))
		json_object_set(d, "clocks_mhz", clocks);
	json_decref(clocks);
}

/*
 * Parse "ue: N\nce: M\n" (newer kernels add "de: K", deferred errors). 0,
 * -EBADMSG, or -ENODATA when a count is 2^64-1 ("not available").
 */
static int parse_ras(char *text, uint64_t *ue, uint64_t *ce)
{
	int have = 0;

	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!strncmp(line, "ue:", 3))
			have |= sysfs_parse_u64(line + 3, ue) == 0 ? 1 : 0;
		else if (!strncmp(line, "ce:", 3))
			have |= sysfs_parse_u64(line + 3, ce) == 0 ? 2 : 0;
	}
	if (have != 3)
		return -EBADMSG;
	return *ue == SYSFS_U64_NA || *ce == SYSFS_U64_NA ? -ENODATA : 0;
}

/*
 * Sum the RAS blocks' counts. 1 when every block was read, 0 when one could
 * not be or the sum does not fit in 64 bits (no sum this cycle: it would be
 * wrong), -1 when the device failed.
 */
static int ras_sum(struct rdctx *r, struct amd_dev *ad, uint64_t *ue, uint64_t *ce)
{
	char rel[48], text[128];
	int all = 1;

	*ue = *ce = 0;
	if (!ad->nras)
		return 0;
	for (size_t i = 0; i < ad->nras; i++) {
		uint64_t u = 0, c = 0;
		int rc;

		snprintf(rel, sizeof(rel), "ras/%s", ad->ras[i]);
		rc = rd_text(r, ad->fd, rel, text, sizeof(text));
		if (rc == 1)
			rc = rd_check(r, rel, parse_ras(text, &u, &c));
		if (rc < 0)
			return -1;
		if (rc == 0 || u > UINT64_MAX - *ue || c > UINT64_MAX - *ce) {
			all = 0;
			continue;
		}
		*ue += u;
		*ce += c;
	}
	return all;
}

/*
 * ras/gpu_vram_bad_pages: one line per bad page, "0x00000c1a : 0x00001000 : R"
 * (R retired, P pending retirement, F failed to retire). 0 with the page
 * count and whether one is pending, or -errno.
 */
static int bad_pages(int fd, uint64_t *pages, bool *pending)
{
	int f = openat(fd, "ras/gpu_vram_bad_pages", O_RDONLY | O_CLOEXEC);
	char buf[4096], last = '\n', prev = 0;
	ssize_t n;
	uint64_t lines = 0;

	if (f < 0)
		return -errno;
	*pending = false;
	while ((n = read(f, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++) {
			/* The flag is the line's last character. */
			if (buf[i] == '\n') {
				lines += last != '\n';
				*pending |= prev == 'P';
			} else if (buf[i] != ' ') {
				prev = buf[i];
			}
			last = buf[i];
		}
	if (n < 0) {
		int err = errno;

		close(f);
		return -err;
	}
	close(f);
	*pages = lines + (last != '\n');
	return 0;
}

/*
 * An AER statistics file (Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats):
 * "RxErr 0\nBadTLP 0\n...\nTOTAL_ERR_COR 2\n". 0 with the TOTAL_ line's
 * count, or -EBADMSG.
 */
static int parse_aer(char *text, const char *total_key, uint64_t *total)
{
	size_t klen = strlen(total_key);

	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!strncmp(line, total_key, klen) && line[klen] == ' ')
			return sysfs_parse_u64(line + klen + 1, total) ? -EBADMSG
			       : *total == SYSFS_U64_NA ? -ENODATA : 0;
	}
	return -EBADMSG;
}

/*
 * pcie_replay_count and the AER counters into d (NULL: baselines only):
 * pcie_replays / pcie_aer_errors.<severity> over the period, and their
 * running totals.
 */
static void pcie_errors(struct amd_dev *ad, struct rdctx *r, json_t *d)
{
	static const char *const aer[][3] = { { "aer_dev_correctable", "TOTAL_ERR_COR", "correctable" },
					      { "aer_dev_nonfatal", "TOTAL_ERR_NONFATAL", "nonfatal" },
					      { "aer_dev_fatal", "TOTAL_ERR_FATAL", "fatal" } };
	json_t *per = json_object(), *tot = json_object();
	uint64_t v, delta;
	char text[1024];

	if (rd_u64(r, ad->fd, "pcie_replay_count", &v) == 1) {
		if (counter_step(&ad->replay, v, &delta) && d)
			json_set_u64(d, "pcie_replays", delta);
		if (d)
			json_set_u64(d, "pcie_replays_total", v);
	}
	for (size_t i = 0; i < ARRAY_SIZE(aer); i++) {
		if (rd_text(r, ad->fd, aer[i][0], text, sizeof(text)) != 1 ||
		    rd_check(r, aer[i][0], parse_aer(text, aer[i][1], &v)) != 1)
			continue;
		if (counter_step(&ad->aer[i], v, &delta))
			json_set_u64(per, aer[i][2], delta);
		json_set_u64(tot, aer[i][2], v);
	}
	if (d && json_object_size(per))
		json_object_set(d, "pcie_aer_errors", per);
	if (d && json_object_size(tot))
		json_object_set(d, "pcie_aer_errors_total", tot);
	json_decref(per);
	json_decref(tot);
}

static void amd_errors(struct amd_dev *ad, struct rdctx *r, json_t *d)
{
	uint64_t ue, ce, due, dce, pages;
	bool pending;
	int rc = ras_sum(r, ad, &ue, &ce);

	if (rc == 1) {
		bool hu = counter_step(&ad->ue, ue, &due), hc = counter_step(&ad->ce, ce, &dce);

		if (hu && hc)
			json_object_set_new(d, "ecc_errors", json_pack("{s:o, s:o}", "corrected", json_u64(dce),
								       "uncorrected", json_u64(due)));
		json_set_u64(d, "ecc_corrected_volatile_total", ce);
		json_set_u64(d, "ecc_uncorrected_volatile_total", ue);
	}
	if (rc >= 0 && rd_check(r, "ras/gpu_vram_bad_pages", bad_pages(ad->fd, &pages, &pending)) == 1)
		json_object_set_new(d, "retired_pages",
				    json_pack("{s:o, s:b}", "total", json_u64(pages), "pending", pending));
	pcie_errors(ad, r, d);
}

/* ---- ops ------------------------------------------------------------------------------ */

static bool wants(const struct cfg_device *cfg, enum group_id id)
{
	for (size_t i = 0; i < cfg->ngroups; i++)
		if (cfg->groups[i].id == id)
			return true;
	return false;
}

static bool is_amd_card(int sysfd, const char *name)
{
	return is_card(name) && amd_is_ours(sysfd, name);
}

static int amd_probe(const struct mon_env *env)
{
	return sysfs_probe(env, "class/drm", is_amd_card);
}

static int amd_open(const struct mon_env *env, const struct coll_target *t, void **state)
{
	const struct cfg_device *dev = t->dev;
	struct amd_state *s = xcalloc(1, sizeof(*s));
	struct cycle cy = { .mono_ns = clock_mono_ns() };

	sysfs_coll_init(&s->base, env, dev, ~0u, amd_dev_free);
	s->clients.cycle = -1;
	s->rec.fresh = 1; /* device_entry makes the device objects anew each cycle */
	*state = s;
	amd_scan(s);
	/* Baseline of the per-process engine times, so the first report has a period to measure. */
	if (wants(dev, GROUP_DEVICE_UTILIZATION) || wants(dev, GROUP_DEVICE_MEMORY))
		amd_clients_for_cycle(&s->clients, &s->base, &cy);
	return s->base.error[0] ? -EIO : 0;
}

static void amd_fill(void *state, enum group_id id, const struct cycle *cy, struct devslot *sl, struct rdctx *r,
		     json_t *d)
{
	struct amd_state *s = state;
	struct amd_dev *ad = sl->priv;

	r->warned = &ad->warned;
	devrec_clear(&s->rec);
	switch (id) {
	case GROUP_DEVICE_INFO:
		amd_info(s, ad, r, d);
		break;
	case GROUP_DEVICE_UTILIZATION:
		amd_util(s, ad, r, d);
		break;
	case GROUP_DEVICE_MEMORY:
		amd_memory(s, ad, r, d);
		break;
	case GROUP_DEVICE_THERMAL:
		amd_thermal(ad, &s->rec, r, d);
		break;
	case GROUP_DEVICE_POWER:
		amd_power(ad, &s->rec, r, cy, d);
		if (ad->pdev[0])
			amd_energy_split(s, sl, cy, d);
		break;
	case GROUP_DEVICE_CLOCKS:
		amd_clocks(ad, r, d);
		break;
	case GROUP_DEVICE_ERRORS:
		amd_errors(ad, r, d);
		break;
	default:
		break;
	}
}

static int amd_collect(void *state, const struct cycle *cy, const enum group_id *due, size_t ndue, json_t *group)
{
	enum group_id id = due[0]; /* one group at a time */
	struct amd_state *s = state;
	int rc;

	(void)ndue;
	if (!sysfs_coll_begin(&s->base, cy, group, amd_scan))
		return -1;
	if (id == GROUP_DEVICE_UTILIZATION || id == GROUP_DEVICE_MEMORY || id == GROUP_DEVICE_POWER)
		amd_clients_for_cycle(&s->clients, &s->base, cy);
	if (id == GROUP_DEVICE_POWER)
		s->obs.n = 0; /* this collect's observations only (the energy op takes them) */
	rc = sysfs_coll_fill(&s->base, id, cy, group, "amdgpu", amd_fatal, amd_fill);
	if (id == GROUP_DEVICE_POWER && s->base.cfg && s->base.cfg->own) {
		struct energy_dev_id *ids = xcalloc(s->base.tab.n + 1, sizeof(*ids));
		size_t n = 0;

		for (size_t i = 0; i < s->base.tab.n; i++) {
			const struct devslot *sl = s->base.tab.slot[i];

			if (sl->selected && !sl->gone)
				ids[n++] = (struct energy_dev_id){ sl->index, sl->uuid, sl->pci };
		}
		if (energy_idle_check(s->base.cfg->own, ids, n, group, "amdgpu", &s->idle_told))
			rc = -1;
		free(ids);
	}
	return rc;
}

static bool pdev_selected(const struct amd_state *s, const char *pdev)
{
	for (size_t i = 0; i < s->base.tab.n; i++) {
		const struct devslot *sl = s->base.tab.slot[i];

		if (sl->selected && !sl->gone && !strcmp(((const struct amd_dev *)sl->priv)->pdev, pdev))
			return true;
	}
	return false;
}

/*
 * Hand the core (out) the VRAM each process holds on the selected GPUs: its DRM clients' drm-memory-vram, each client once,
 * from this cycle's scan of DRM clients.
 */
static void amd_record_proc_memory(void *state, const struct cycle *cy, struct proc_devmem_list *out)
{
	struct amd_state *s = state;

	if (s->base.error[0] || !devtab_present(&s->base.tab))
		return;
	amd_clients_for_cycle(&s->clients, &s->base, cy);
	if (!s->clients.ok)
		return;
	out->known = 1;
	for (size_t i = 0; i < s->clients.ncl; i++)
		if (pdev_selected(s, s->clients.cl[i].pdev))
			proc_devmem_add(out, s->clients.cl[i].pid, s->clients.cl[i].vram);
}

/* Hand the core this cycle's energy observations (device_power's, one per GPU). */
static void amd_energy_obs(void *state, struct energy_obs_list *out)
{
	struct amd_state *s = state;

	if (s)
		energy_obs_move(&s->obs, out);
}

/* Hand the core the processes this cycle's groups wrote (each GPU's "processes"). */
static void amd_processes(void *state, struct pid_list *out)
{
	struct amd_state *s = state;

	if (s)
		pid_list_move(&s->named, out);
}

static void amd_close(void *state)
{
	struct amd_state *s = state;

	if (!s)
		return;
	energy_obs_free(&s->obs);
	pid_list_free(&s->named);
	devrec_free(&s->rec);
	amd_clients_free(&s->clients);
	sysfs_coll_free(s);
}

/* Config: "idle_power_watts" (energy.h). */
static const char *const amd_keys[] = { ENERGY_IDLE_KEY, NULL };

static int amd_config(const struct cfg_block *b)
{
	struct energy_idle *idle = NULL;

	if (energy_idle_config(b, &idle))
		return -EINVAL;
	if (idle)
		*b->own = idle;
	return 0;
}

static void amd_config_print(const void *own, json_t *block)
{
	energy_idle_print(own, block);
}

static void amd_config_free(void *own)
{
	energy_idle_free(own);
}

const struct collector_ops coll_amdgpu_ops = {
	.name = "amdgpu",
	.rows = &amdgpu_rows,
	.scope = COLL_DEVICE,
	.keys = amd_keys,
	.config = amd_config,
	.config_print = amd_config_print,
	.config_free = amd_config_free,
	.probe = amd_probe,
	.open = amd_open,
	.collect = amd_collect,
	.error = sysfs_coll_error,
	.proc_memory = amd_record_proc_memory,
	.energy = amd_energy_obs,
	.processes = amd_processes,
	.devices = sysfs_coll_devices,
	.close = amd_close,
};
