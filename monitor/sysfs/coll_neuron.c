/* SPDX-License-Identifier: MIT */
/*
 * neuron: AWS Inferentia and Trainium devices read from the Neuron driver's
 * sysfs tree (devices/virtual/neuron_device/neuronN, described in the
 * Neuron Sysfs User Guide), with no Neuron runtime or tool installed.
 *
 *   device_info         core_count, info/serial_number, info/architecture/<name>
 *                       (arch_type, device_name, device_type, instance_type),
 *                       connected_devices, module/neuron/version
 *   device_utilization  per NeuronCore (neuron_coreK/stats/...): busy time
 *                       (other_info/nc_time_in_use, µs) over the period,
 *                       inferences, flops, model loads, resets, and the
 *                       status/<name> counters (success, failure, timeout, ...)
 *   device_memory       per NeuronCore device memory by category
 *                       (memory_usage/device_mem/<category>), host memory by category
 *                       (stats/memory_usage/host_mem/<category>)
 *   device_power        stats/power/utilization (percent of maximum power)
 *   device_errors       stats/hardware/<counter> ECC counters
 *
 * Most values are "counters": a directory holding total, present (and
 * peak for memory). accel-monitor reads total, and for event counts reports
 * the increase over the period like neuron-monitor does; a counter that
 * went backwards (driver reload, write-to-clear) starts over, never a
 * negative count. Memory totals are current usage, reported as they are.
 * A value that is a plain file is read the same way. NeuronCores are keyed
 * by neuron-monitor's index: device index * cores per device + core.
 *
 * The same tree also fills the system group neuron_hw_counters in
 * neuron-monitor 2.x's schema (coll_neuron_hw_ops): neuron_devices[] with
 * neuron_device_index and the increase over the period of the driver's
 * mem_ecc_corrected, mem_ecc_uncorrected, sram_ecc_corrected and
 * sram_ecc_uncorrected (each where the driver has it), every device, no
 * device block needed.
 */
#include "../core/collector.h"
#include "../core/devrec.h"
#include "../config/config.h"
#include "sysfs.h"
#include "../host/host.h"
#include "../../common/jsonw.h"
#include "../../common/log.h"
#include "../../common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NRN_NAMES 24
#define NRN_CORES 16

/* Names found in a directory (counters, categories). */
struct namelist {
	char name[NRN_NAMES][40];
	size_t n;
};

/* other_info counters, in this order. */
enum { OI_BUSY, OI_INFER, OI_FLOPS, OI_LOADS, OI_RESET_REQ, OI_RESET_FAIL, OI_COUNT };
static const char *const oi_file[OI_COUNT] = {
	"other_info/nc_time_in_use", "other_info/inference_count",  "other_info/flop_count",
	"other_info/model_load_count", "other_info/reset_req_count", "other_info/reset_fail_count",
};
static const char *const oi_key[OI_COUNT] = { NULL, "inferences", "flops", "model_loads", "reset_requests",
					      "reset_failures" };

struct nrn_core {
	unsigned k;                /* neuron_coreK */
	int fd;                    /* neuron_coreK/stats */
	struct namelist status;    /* status/<name> */
	struct namelist mem;       /* memory_usage/device_mem/<category> */
	struct counter st[NRN_NAMES];
	struct counter oi[OI_COUNT];
	int64_t busy_t;            /* monotonic ns of the oi[OI_BUSY] sample */
};

struct nrn_dev {
	int fd;                    /* neuronN */
	unsigned n;                /* N */
	unsigned core_count;       /* core_count, else the neuron_coreK directories found */
	struct nrn_core core[NRN_CORES];
	size_t ncores;
	struct namelist hw;        /* stats/hardware/<counter> */
	struct counter hwc[NRN_NAMES];
	struct namelist host;      /* stats/memory_usage/host_mem/<category> */
	struct namelist arch;      /* info/architecture/<file> */
	struct warnset warned;
};

/* neuron_hw_counters' record of one device: its hw_fields counters' increases over the period. */
struct nhw_dev {
	unsigned index;
	unsigned char has[4]; /* per hw_fields entry: the driver has it, with a baseline */
	uint64_t delta[4];
};

struct nrn_state {
	struct sysfs_coll base; /* first: the shared ops take the state as one */
	struct devrec rec;      /* the device being filled (core_percent, used_bytes); holds no process: nothing to free */
	struct nhw_dev *hw;     /* neuron_hw_counters: the last sample's devices, in index order */
	size_t nhw, ahw;
};

static const int nrn_fatal[] = { ENODEV, 0 };

#define NRN_SUPPORTED                                                                                          \
	(GROUP_BIT(GROUP_DEVICE_INFO) | GROUP_BIT(GROUP_DEVICE_UTILIZATION) | GROUP_BIT(GROUP_DEVICE_MEMORY) | \
	 GROUP_BIT(GROUP_DEVICE_POWER) | GROUP_BIT(GROUP_DEVICE_ERRORS))

/* ---- discovery ------------------------------------------------------------------ */

/* "prefixN" -> N; -1 when name is not that. */
static long numbered(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	char *end;
	long v;

	if (strncmp(name, prefix, n) || name[n] < '0' || name[n] > '9')
		return -1;
	v = strtol(name + n, &end, 10);
	return *end ? -1 : v;
}

/* The entries of rel that are counters or categories (not the total/present/peak files themselves). */
static void list_names(int fd, const char *rel, struct namelist *out)
{
	struct sysfs_names names = { 0 };

	out->n = 0;
	if (sysfs_list(fd, rel, &names) == 0)
		for (size_t i = 0; i < names.n && out->n < NRN_NAMES; i++) {
			const char *e = sysfs_name(&names, i);

			if (!strcmp(e, "total") || !strcmp(e, "present") || !strcmp(e, "peak"))
				continue;
			snprintf(out->name[out->n++], sizeof(out->name[0]), "%s", e);
		}
	sysfs_names_free(&names);
}

static void nrn_dev_free(void *priv)
{
	struct nrn_dev *nd = priv;

	if (!nd)
		return;
	for (size_t i = 0; i < nd->ncores; i++)
		if (nd->core[i].fd >= 0)
			close(nd->core[i].fd);
	if (nd->fd >= 0)
		close(nd->fd);
	free(nd);
}

static int util_core(struct nrn_dev *nd, struct nrn_core *c, struct rdctx *r, int64_t now, json_t *out, double *util);
static void errors_dev(struct nrn_dev *nd, struct rdctx *r, json_t *d);

/* A new device in slot sl: its cores and counters, identity, selection, and the counters' baselines. */
static void nrn_dev_open(struct nrn_state *s, struct devslot *sl, unsigned n, int fd)
{
	struct nrn_dev *nd = xcalloc(1, sizeof(*nd));
	struct sysfs_names names = { 0 };
	struct rdctx r = { .type = "neuron", .key = sl->key };
	char text[128];
	uint64_t v;
	int64_t now = clock_mono_ns();

	nd->fd = fd;
	nd->n = n;
	if (sysfs_list(fd, ".", &names) == 0)
		for (size_t i = 0; i < names.n && nd->ncores < NRN_CORES; i++) {
			long k = numbered(sysfs_name(&names, i), "neuron_core");
			struct nrn_core *c = &nd->core[nd->ncores];
			char rel[64];

			if (k < 0)
				continue;
			snprintf(rel, sizeof(rel), "%s/stats", sysfs_name(&names, i));
			c->k = (unsigned)k;
			c->fd = sysfs_dir(fd, rel);
			if (c->fd < 0)
				continue;
			list_names(c->fd, "status", &c->status);
			list_names(c->fd, "memory_usage/device_mem", &c->mem);
			nd->ncores++;
		}
	sysfs_names_free(&names);
	nd->core_count = sysfs_u64(fd, "core_count", &v) == 0 && v > 0 && v < 1024 ? (unsigned)v : (unsigned)nd->ncores;
	list_names(fd, "stats/hardware", &nd->hw);
	list_names(fd, "stats/memory_usage/host_mem", &nd->host);
	list_names(fd, "info/architecture", &nd->arch);
	if (sysfs_read(fd, "info/serial_number", text, sizeof(text)) > 0)
		snprintf(sl->uuid, sizeof(sl->uuid), "%s", text);
	if (sysfs_read(fd, "info/architecture/device_type", text, sizeof(text)) > 0 ||
	    sysfs_read(fd, "info/architecture/device_name", text, sizeof(text)) > 0)
		snprintf(sl->model, sizeof(sl->model), "%s", text);
	else if (sysfs_read(fd, "info/architecture/arch_type", text, sizeof(text)) > 0)
		snprintf(sl->model, sizeof(sl->model), "Neuron %s", text);
	sl->priv = nd;
	sl->selected = !s->base.cfg || cfg_device_selects(s->base.cfg, sl->index, sl->uuid[0] ? sl->uuid : NULL,
							  sl->uuid[0] ? sl->uuid : NULL);
	/* Baselines: the first report counts from here. */
	for (size_t i = 0; i < nd->ncores; i++)
		util_core(nd, &nd->core[i], &r, now, NULL, NULL);
	errors_dev(nd, &r, NULL);
}

static void nrn_scan(void *state)
{
	struct nrn_state *s = state;
	int rc = sysfs_coll_list(&s->base, "devices/virtual/neuron_device");

	if (rc == 0) {
		snprintf(s->base.error, sizeof(s->base.error),
			 "the Neuron driver is not loaded (no devices/virtual/neuron_device under %s)",
			 host_sysfs(s->base.env->host));
		devtab_clear(&s->base.tab);
	}
	if (rc <= 0)
		return;
	devtab_begin(&s->base.tab);
	for (size_t i = 0; i < s->base.names.n; i++) {
		const char *name = sysfs_name(&s->base.names, i);
		long n = numbered(name, "neuron");
		struct devslot *sl;
		char rel[96];
		bool fresh;
		int fd;

		if (n < 0)
			continue;
		sl = devtab_find(&s->base.tab, name);
		if (sl && !sl->gone) {
			if (faccessat(((struct nrn_dev *)sl->priv)->fd, "core_count", F_OK, 0) == 0)
				devtab_see(&s->base.tab, name, n, &fresh);
			continue;
		}
		snprintf(rel, sizeof(rel), "devices/virtual/neuron_device/%s", name);
		fd = sysfs_dir(s->base.sysfd, rel);
		if (fd < 0)
			continue;
		sl = devtab_see(&s->base.tab, name, n, &fresh);
		nrn_dev_open(s, sl, (unsigned)n, fd);
	}
	devtab_end(&s->base.tab);
}

/* ---- groups ------------------------------------------------------------------------ */

static void nrn_info(struct nrn_state *s, struct nrn_dev *nd, struct rdctx *r, json_t *d)
{
	char text[256];

	if (rd_text(r, nd->fd, "info/serial_number", text, sizeof(text)) == 1 && text[0])
		json_object_set_new(d, "serial", json_string(utf8_sanitize(text)));
	if (sysfs_read(s->base.sysfd, "module/neuron/version", text, sizeof(text)) > 0)
		json_object_set_new(d, "driver_version", json_string(utf8_sanitize(text)));
	json_object_set_new(d, "core_count", json_integer(nd->core_count));
	for (size_t i = 0; i < nd->arch.n; i++) {
		char rel[96];

		snprintf(rel, sizeof(rel), "info/architecture/%s", nd->arch.name[i]);
		/* arch_type, device_name, device_type, instance_type: scalars next to the others */
		if (rd_text(r, nd->fd, rel, text, sizeof(text)) == 1 && text[0] && !json_object_get(d, nd->arch.name[i]))
			json_object_set_new(d, nd->arch.name[i], json_string(utf8_sanitize(text)));
	}
	/* "1, 3" (neuron-ls's CONNECTED DEVICES); empty on single-device instances. */
	if (rd_text(r, nd->fd, "connected_devices", text, sizeof(text)) == 1) {
		json_t *list = json_array();
		const char *p = text;

		while (*p) {
			char *end;
			long v;

			while (*p == ' ' || *p == ',' || *p == '\t' || *p == '\n')
				p++;
			if (!*p)
				break;
			v = strtol(p, &end, 10);
			if (end == p) {
				json_decref(list);
				list = NULL;
				rd_check(r, "connected_devices", -EBADMSG);
				break;
			}
			json_array_append_new(list, json_integer(v));
			p = end;
		}
		if (list)
			json_object_set_new(d, "connected_devices", list);
	}
}

/*
 * One NeuronCore's utilization-group values into out (NULL: only take the
 * counters' samples, as a baseline). Counts are increases over the period.
 */
static int util_core(struct nrn_dev *nd, struct nrn_core *c, struct rdctx *r, int64_t now, json_t *out, double *util)
{
	json_t *status = json_object(), *totals = json_object();
	uint64_t v, delta;
	char rel[96];
	int have_util = 0;

	for (size_t i = 0; i < OI_COUNT; i++) {
		bool had;

		if (rd_counter(r, c->fd, oi_file[i], &v) != 1)
			continue;
		had = counter_step(&c->oi[i], v, &delta);
		if (i == OI_BUSY) {
			int64_t dt = now - c->busy_t;

			c->busy_t = now;
			if (had && dt > 0 && out) {
				double pct = (double)delta * 1e3 * 100.0 / (double)dt; /* µs over ns */

				*util = pct > 100.0 ? 100.0 : pct;
				have_util = 1;
				json_object_set_new(out, "utilization_percent", json_real(*util));
			}
		} else if (had && out) {
			json_set_u64(out, oi_key[i], delta);
		}
	}
	for (size_t i = 0; i < c->status.n; i++) {
		snprintf(rel, sizeof(rel), "status/%s", c->status.name[i]);
		if (rd_counter(r, c->fd, rel, &v) != 1)
			continue;
		if (counter_step(&c->st[i], v, &delta))
			json_set_u64(status, c->status.name[i], delta);
		json_set_u64(totals, c->status.name[i], v);
	}
	if (out && json_object_size(status))
		json_object_set(out, "status", status);
	if (out && json_object_size(totals))
		json_object_set(out, "status_total", totals);
	json_decref(status);
	json_decref(totals);
	(void)nd;
	return have_util;
}

static void core_key(const struct nrn_dev *nd, const struct nrn_core *c, char key[16])
{
	snprintf(key, 16, "%u", nd->n * nd->core_count + c->k);
}

/* core_percent (the device record's): the mean of its cores' utilization; each core's counters in neuroncores. */
static void nrn_util(struct nrn_dev *nd, struct devrec *rec, struct rdctx *r, const struct cycle *cy, json_t *d)
{
	json_t *cores = json_object();
	double sum = 0, u;
	size_t nsum = 0;

	for (size_t i = 0; i < nd->ncores; i++) {
		json_t *c = json_object();
		char key[16];

		if (util_core(nd, &nd->core[i], r, cy->mono_ns, c, &u)) {
			sum += u;
			nsum++;
		}
		core_key(nd, &nd->core[i], key);
		json_object_set_new(cores, key, c);
	}
	devrec_clear(rec);
	if (nsum) {
		rec->core_pct = sum / (double)nsum;
		rec->have |= DR_CORE_PCT;
	}
	devrec_util_json(rec, d);
	json_object_set_new(d, "neuroncores", cores);
}

/*
 * used_bytes (the device record's, summed over every category of every
 * core); each core's categories in neuroncores, the host's in host_bytes
 * and their sum in host_used_bytes.
 */
static void nrn_memory(struct nrn_dev *nd, struct devrec *rec, struct rdctx *r, json_t *d)
{
	json_t *cores = json_object(), *host = json_object();
	struct u64sum host_used = { 0 };
	uint64_t v;
	bool have_host = false;
	char rel[128], key[16];

	devrec_clear(rec);
	for (size_t i = 0; i < nd->ncores; i++) {
		struct nrn_core *c = &nd->core[i];
		json_t *cats = json_object();

		for (size_t m = 0; m < c->mem.n; m++) {
			snprintf(rel, sizeof(rel), "memory_usage/device_mem/%s", c->mem.name[m]);
			if (rd_counter(r, c->fd, rel, &v) != 1)
				continue;
			json_set_u64(cats, c->mem.name[m], v);
			devrec_mem_used_add(rec, v);
		}
		/* Drivers without categories keep one device_mem counter. */
		if (!c->mem.n && rd_counter(r, c->fd, "memory_usage/device_mem", &v) == 1)
			devrec_mem_used_add(rec, v);
		core_key(nd, c, key);
		json_object_set_new(cores, key, cats);
	}
	for (size_t m = 0; m < nd->host.n; m++) {
		snprintf(rel, sizeof(rel), "stats/memory_usage/host_mem/%s", nd->host.name[m]);
		if (rd_counter(r, nd->fd, rel, &v) != 1)
			continue;
		json_set_u64(host, nd->host.name[m], v);
		u64sum_add(&host_used, v);
		have_host = true;
	}
	if (!nd->host.n && rd_counter(r, nd->fd, "stats/memory_usage/host_mem", &v) == 1) {
		u64sum_add(&host_used, v);
		have_host = true;
	}
	devrec_memory_json(rec, d);
	if (have_host)
		json_object_set_new(d, "host_used_bytes", json_u64sum(&host_used));
	json_object_set_new(d, "neuroncores", cores);
	if (json_object_size(host))
		json_object_set(d, "host_bytes", host);
	json_decref(host);
}

/*
 * stats/power/utilization: "<status>,<unix time>,<min>,<max>,<avg>" in
 * percent of the device's maximum power, refreshed every minute. Only a
 * POWER_STATUS_VALID sample is reported.
 */
static void nrn_power(struct nrn_dev *nd, struct rdctx *r, json_t *d)
{
	char text[160], *f[5], *save = NULL, *p;
	size_t n = 0;

	if (rd_text(r, nd->fd, "stats/power/utilization", text, sizeof(text)) != 1)
		return;
	for (p = strtok_r(text, ",", &save); p && n < 5; p = strtok_r(NULL, ",", &save))
		f[n++] = p;
	if (n == 5 && !strcmp(f[0], "POWER_STATUS_VALID")) {
		double v[3];
		char *end;

		/* min, max and average over the last minute: the average is reported, the others checked. */
		for (size_t i = 0; i < 3; i++) {
			v[i] = strtod(f[2 + i], &end);
			if (end == f[2 + i] || *end || v[i] < 0 || v[i] > 100) {
				rd_check(r, "stats/power/utilization", -EBADMSG);
				return;
			}
		}
		json_object_set_new(d, "power_percent", json_real(v[2]));
	} else if (n != 5 || (strcmp(f[0], "POWER_STATUS_NO_DATA") && strcmp(f[0], "POWER_STATUS_INVALID"))) {
		rd_check(r, "stats/power/utilization", -EBADMSG);
	}
}

/* One reading of a device's stats/hardware counters (nd->hw.name[i]). */
struct nrn_hwread {
	bool read[NRN_NAMES];     /* counter i was read: its total is v[i] */
	bool had[NRN_NAMES];      /* and it had a baseline: the period's increase is delta[i] */
	uint64_t v[NRN_NAMES], delta[NRN_NAMES];
};

/* Read the hardware counters into h, each one's baseline moved to now. */
static void hw_read(struct nrn_dev *nd, struct rdctx *r, struct nrn_hwread *h)
{
	char rel[96];

	for (size_t i = 0; i < nd->hw.n; i++) {
		snprintf(rel, sizeof(rel), "stats/hardware/%s", nd->hw.name[i]);
		h->read[i] = rd_counter(r, nd->fd, rel, &h->v[i]) == 1;
		h->had[i] = h->read[i] && counter_step(&nd->hwc[i], h->v[i], &h->delta[i]);
	}
}

/* ECC counters of stats/hardware into d (NULL: baseline only). */
static void errors_dev(struct nrn_dev *nd, struct rdctx *r, json_t *d)
{
	json_t *events, *totals;
	struct u64sum dc = { 0 }, du = { 0 }, tc = { 0 }, tu = { 0 };
	struct nrn_hwread h;
	bool all_delta = true;

	hw_read(nd, r, &h);
	if (!d)
		return;
	events = json_object();
	totals = json_object();
	for (size_t i = 0; i < nd->hw.n; i++) {
		const char *name = nd->hw.name[i];
		bool unc = strstr(name, "uncorrected") != NULL;
		uint64_t v, delta;

		if (!h.read[i])
			continue;
		v = h.v[i];
		delta = h.delta[i]; /* counter_step's, baseline or not */
		json_set_u64(totals, name, v);
		if (h.had[i])
			json_set_u64(events, name, delta);
		else
			all_delta = false;
		if (unc) {
			u64sum_add(&du, delta);
			u64sum_add(&tu, v);
		} else if (strstr(name, "corrected")) {
			u64sum_add(&dc, delta);
			u64sum_add(&tc, v);
		}
	}
	if (d && json_object_size(totals)) {
		if (all_delta)
			json_object_set_new(d, "ecc_errors", json_pack("{s:o, s:o}", "corrected", json_u64sum(&dc),
								       "uncorrected", json_u64sum(&du)));
		json_object_set_new(d, "ecc_corrected_volatile_total", json_u64sum(&tc));
		json_object_set_new(d, "ecc_uncorrected_volatile_total", json_u64sum(&tu));
		if (json_object_size(events))
			json_object_set(d, "ecc_events", events);
		json_object_set(d, "ecc_events_total", totals);
	}
	json_decref(events);
	json_decref(totals);
}

/* ---- ops ------------------------------------------------------------------------------ */

static bool is_neuron(int sysfd, const char *name)
{
	(void)sysfd;
	return numbered(name, "neuron") >= 0;
}

static int nrn_probe(const struct mon_env *env)
{
	return sysfs_probe(env, "devices/virtual/neuron_device", is_neuron);
}

static int nrn_open(const struct mon_env *env, const struct coll_target *t, void **state)
{
	const struct cfg_device *dev = t->dev;
	struct nrn_state *s = xcalloc(1, sizeof(*s));

	sysfs_coll_init(&s->base, env, dev, NRN_SUPPORTED, nrn_dev_free);
	s->rec.fresh = 1; /* device_entry makes the device objects anew each cycle */
	*state = s;
	nrn_scan(s);
	return s->base.error[0] ? -ENODEV : 0;
}

static void nrn_fill(void *state, enum group_id id, const struct cycle *cy, struct devslot *sl, struct rdctx *r,
		     json_t *d)
{
	struct nrn_state *s = state;
	struct nrn_dev *nd = sl->priv;

	r->warned = &nd->warned;
	switch (id) {
	case GROUP_DEVICE_INFO:
		nrn_info(s, nd, r, d);
		break;
	case GROUP_DEVICE_UTILIZATION:
		nrn_util(nd, &s->rec, r, cy, d);
		break;
	case GROUP_DEVICE_MEMORY:
		nrn_memory(nd, &s->rec, r, d);
		break;
	case GROUP_DEVICE_POWER:
		nrn_power(nd, r, d);
		break;
	case GROUP_DEVICE_ERRORS:
		errors_dev(nd, r, d);
		break;
	default:
		break;
	}
}

static int nrn_collect(void *state, const struct cycle *cy, const enum group_id *due, size_t ndue, json_t *group)
{
	enum group_id id = due[0]; /* one group at a time */
	struct nrn_state *s = state;

	(void)ndue;
	if (!sysfs_coll_begin(&s->base, cy, group, nrn_scan))
		return -1;
	if (!(GROUP_BIT(id) & NRN_SUPPORTED))
		return 0; /* no thermal or clock data in the Neuron sysfs: "devices" stays {} */
	return sysfs_coll_fill(&s->base, id, cy, group, "neuron", nrn_fatal, nrn_fill);
}

/* ---- the system group neuron_hw_counters ----------------------------------------- */

/* neuron-monitor 2.x's neuron_hw_counters fields: the driver's stats/hardware counters of the same name. */
static const char *const hw_fields[] = { "mem_ecc_corrected", "mem_ecc_uncorrected", "sram_ecc_corrected",
					 "sram_ecc_uncorrected" };
_Static_assert(ARRAY_SIZE(hw_fields) == sizeof(((struct nhw_dev *)0)->has), "a has[] and delta[] per hw_fields");

/* Every Neuron device (no block, no selection), its counters' baselines taken now. */
static int nhw_open(const struct mon_env *env, const struct coll_target *t, void **state)
{
	struct nrn_state *s = xcalloc(1, sizeof(*s));

	(void)t;
	sysfs_coll_init(&s->base, env, NULL, GROUP_BIT(GROUP_DEVICE_ERRORS), nrn_dev_free);
	*state = s;
	nrn_scan(s);
	return s->base.error[0] ? -ENODEV : 0;
}

/*
 * neuron_devices[]: one entry per present device, in index order, with the
 * per-period increase of each hw_fields counter the driver has. A device
 * whose read fails (ENODEV) is left out and named in the group's error.
 */
static int nhw_sample(void *state, const struct cycle *cy, char *err, size_t errsz)
{
	struct nrn_state *s = state;

	if (devtab_new_cycle(&s->base.tab, cy))
		nrn_scan(s);
	if (s->base.error[0]) {
		snprintf(err, errsz, "%s", s->base.error);
		return -1;
	}
	s->nhw = 0;
	for (size_t i = 0; i < s->base.tab.n; i++) {
		struct devslot *sl = s->base.tab.slot[i];
		struct nrn_dev *nd = sl->priv;
		struct rdctx r = { .type = "neuron", .key = sl->key, .fatal = nrn_fatal, .warned = &nd->warned };
		struct nrn_hwread h;
		struct nhw_dev *d;

		if (sl->gone || !sl->selected)
			continue;
		hw_read(nd, &r, &h);
		if (r.err) {
			snprintf(err, errsz, "%s: cannot read %s: %s", sl->key, r.file, strerror(r.err));
			continue;
		}
		if (s->nhw == s->ahw) {
			s->ahw = s->ahw ? s->ahw * 2 : 8;
			s->hw = xrealloc(s->hw, s->ahw * sizeof(*s->hw));
		}
		d = &s->hw[s->nhw++];
		memset(d, 0, sizeof(*d));
		d->index = sl->index;
		for (size_t k = 0; k < ARRAY_SIZE(hw_fields); k++)
			for (size_t c = 0; c < nd->hw.n; c++)
				if (h.had[c] && !strcmp(nd->hw.name[c], hw_fields[k])) {
					d->has[k] = 1;
					d->delta[k] = h.delta[c];
					break;
				}
	}
	return 0;
}

static int nhw_write(void *state, struct buf *b)
{
	const struct nrn_state *s = state;
	int rc = buf_puts(b, ",\"neuron_devices\":[");

	for (size_t i = 0; i < s->nhw && !rc; i++) {
		const struct nhw_dev *d = &s->hw[i];

		rc = buf_puts(b, i ? ",{\"neuron_device_index\":" : "{\"neuron_device_index\":") ||
		     json_write_u64(b, d->index);
		for (size_t k = 0; k < ARRAY_SIZE(hw_fields) && !rc; k++)
			if (d->has[k])
				rc = buf_puts(b, ",\"") || buf_puts(b, hw_fields[k]) || buf_puts(b, "\":") ||
				     json_write_count(b, d->delta[k]);
		rc = rc || buf_puts(b, "}");
	}
	return rc || buf_puts(b, "]") ? -ENOSPC : 0;
}

static void nhw_close(void *state)
{
	struct nrn_state *s = state;

	if (s)
		free(s->hw);
	sysfs_coll_free(state);
}

const struct collector_ops coll_neuron_hw_ops = {
	.name = "neuron_hw",
	.rows = &neuron_rows,
	.scope = COLL_SYSTEM,
	.group = GROUP_NEURON_HW_COUNTERS,
	.open = nhw_open,
	.sample = nhw_sample,
	.write = nhw_write,
	.close = nhw_close,
};

/* The devices op: each device's identity, with its NeuronCores' global indices (the device plugin's neuroncore ids). */
static void nrn_devices(void *state, struct dev_list *out)
{
	struct dev_ident *d;
	void *priv = NULL;
	size_t it = 0;

	while ((d = sysfs_coll_devices_each(state, out, &priv, &it))) {
		const struct nrn_dev *nd = priv;

		if (nd) {
			d->core_base = nd->n * nd->core_count;
			d->cores = nd->core_count;
		}
	}
}

const struct collector_ops coll_neuron_ops = {
	.name = "neuron",
	.rows = &neuron_rows,
	.scope = COLL_DEVICE,
	.probe = nrn_probe,
	.open = nrn_open,
	.collect = nrn_collect,
	.error = sysfs_coll_error,
	.devices = nrn_devices,
	.close = sysfs_coll_free,
};
