/* SPDX-License-Identifier: MIT */
/*
 * powercap: the host's CPU energy from the kernel's powercap zones
 * (class/powercap/<zone>, RAPL's intel-rapl:0 for package 0, intel-rapl:0:0
 * for its cores, intel-rapl-mmio:0, ...), so that the cost of a request
 * can include the host's processors beside the accelerators. A zone is an
 * entry whose name has a ':' (the control type "intel-rapl" has none).
 *
 *   device_info   name (the zone's "name": package-0, core, dram, psys),
 *                 zone (its directory), max_energy_range_uj
 *   device_power  energy_joules: the increase of energy_uj (µJ) over the
 *                 period, which wraps to 0 past max_energy_range_uj (so
 *                 no energy_total_joules: the counter is no total); power_watts:
 *                 the period's mean (energy over the time between reads)
 *
 * energy_uj is readable by root only on current kernels (since 5.10, for
 * the side channel it opened): then the zones are listed with their
 * identity and no energy, and the group's error says why, once.
 */
#include "../core/collector.h"
#include "../config/config.h"
#include "../core/energy.h"
#include "sysfs.h"
#include "../../common/jset.h"
#include "../../common/log.h"
#include "../../common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pc_zone {
	int fd;                 /* class/powercap/<zone> */
	char name[64];          /* its "name" file: "package-0" */
	uint64_t range;         /* max_energy_range_uj + 1: where energy_uj wraps; 0: unknown (no wrap) */
	bool have_range;
	double max_w;           /* constraint_0_max_power_uw in W: the plausibility check's limit; 0: none */
	struct energy_meter meter;
	struct warnset warned;
};

struct pc_state {
	struct sysfs_coll base; /* first: the shared ops take the state as one */
	int denied;             /* errno of an energy_uj that may not be read this cycle, else 0 */
	bool told;              /* the group's error said so already */
};

#define PC_SUPPORTED (GROUP_BIT(GROUP_DEVICE_INFO) | GROUP_BIT(GROUP_DEVICE_POWER))

static bool is_zone(int sysfd, const char *name)
{
	char rel[300];

	snprintf(rel, sizeof(rel), "class/powercap/%s/energy_uj", name);
	return strchr(name, ':') && faccessat(sysfd, rel, F_OK, 0) == 0;
}

static void zone_free(void *priv)
{
	struct pc_zone *z = priv;

	if (!z)
		return;
	if (z->fd >= 0)
		close(z->fd);
	free(z);
}

static void pc_scan(void *state)
{
	struct pc_state *s = state;

	if (sysfs_coll_list(&s->base, "class/powercap") < 0)
		return;
	devtab_begin(&s->base.tab);
	for (size_t i = 0; i < s->base.names.n; i++) {
		const char *name = sysfs_name(&s->base.names, i);
		struct devslot *sl;
		struct pc_zone *z;
		char rel[300];
		uint64_t uw;
		bool fresh;

		if (!is_zone(s->base.sysfd, name))
			continue;
		sl = devtab_see(&s->base.tab, name, -1, &fresh);
		if (!fresh)
			continue;
		z = xcalloc(1, sizeof(*z));
		snprintf(rel, sizeof(rel), "class/powercap/%s", name);
		z->fd = sysfs_dir(s->base.sysfd, rel);
		if (z->fd < 0 || sysfs_read(z->fd, "name", z->name, sizeof(z->name)) <= 0)
			snprintf(z->name, sizeof(z->name), "%s", name);
		if (z->fd >= 0 && sysfs_u64(z->fd, "max_energy_range_uj", &z->range) == 0 && z->range < UINT64_MAX) {
			z->have_range = true;
			z->range++;
		} else {
			z->range = 0;
		}
		if (z->fd >= 0 && sysfs_u64(z->fd, "constraint_0_max_power_uw", &uw) == 0)
			z->max_w = (double)uw / 1e6;
		snprintf(sl->model, sizeof(sl->model), "%s", z->name);
		sl->priv = z;
		sl->selected = !s->base.cfg || cfg_device_selects(s->base.cfg, sl->index, NULL, NULL);
	}
	devtab_end(&s->base.tab);
}

static void pc_fill(void *state, enum group_id id, const struct cycle *cy, struct devslot *sl, struct rdctx *r,
		    json_t *d)
{
	struct pc_state *s = state;
	struct pc_zone *z = sl->priv;
	int64_t last = z->meter.last_ns;
	uint64_t uj;
	double j;
	int rc;

	r->warned = &z->warned;
	if (id == GROUP_DEVICE_INFO) {
		jset_str(d, "name", z->name);
		jset_str(d, "zone", sl->key);
		if (z->have_range)
			jset_u64(d, "max_energy_range_uj", z->range - 1);
		return;
	}
	/* Root only on current kernels: not a per-file warning but the group's error (pc_collect). */
	rc = z->fd < 0 ? -ENOENT : sysfs_u64(z->fd, "energy_uj", &uj);
	if (rc == -EACCES || rc == -EPERM) {
		s->denied = -rc;
		energy_meter_reset(&z->meter);
	} else if (rd_check(r, "energy_uj", rc) == 1) {
		rc = energy_meter_counter(&z->meter, uj, z->range, 1e-6, z->max_w, cy->mono_ns, &j);
		if (rc > 0) {
			energy_meter_json(&z->meter, 1, j, d);
			if (cy->mono_ns > last)
				jset_real(d, "power_watts", j / ((double)(cy->mono_ns - last) / (double)NS_PER_S));
		} else {
			energy_meter_json(&z->meter, 0, 0, d);
			if (rc < 0) {
				json_object_del(d, "power_watts");
				energy_counter_refused(r->group, &r->noted, "powercap", sl->key, z->meter.why);
			}
		}
		return;
	}
	energy_meter_json(&z->meter, 0, 0, d); /* no reading: no energy fields */
}

static int pc_open(const struct mon_env *env, const struct coll_target *t, void **state)
{
	struct pc_state *s = xcalloc(1, sizeof(*s));

	sysfs_coll_init(&s->base, env, t->dev, PC_SUPPORTED, zone_free);
	*state = s;
	pc_scan(s);
	return s->base.error[0] ? -EIO : 0;
}

static int pc_collect(void *state, const struct cycle *cy, const enum group_id *due, size_t ndue, json_t *group)
{
	enum group_id id = due[0]; /* one group at a time */
	struct pc_state *s = state;
	int rc;

	(void)ndue;
	if (!sysfs_coll_begin(&s->base, cy, group, pc_scan))
		return -1;
	if (!(GROUP_BIT(id) & PC_SUPPORTED))
		return 0;
	s->denied = 0;
	rc = sysfs_coll_fill(&s->base, id, cy, group, "powercap", NULL, pc_fill);
	if (s->denied && !s->told) {
		s->told = true;
		set_error(group, "powercap: energy_uj may not be read (%s): the kernel lets only root read it; "
				 "no CPU energy is reported",
			  strerror(s->denied));
		log_warn("powercap: energy_uj may not be read (%s): the kernel lets only root read it; no CPU "
			 "energy is reported", strerror(s->denied));
		rc = -1;
	} else if (!s->denied) {
		s->told = false; /* readable again: a later refusal is said again */
	}
	return rc;
}

static int pc_probe(const struct mon_env *env)
{
	return sysfs_probe(env, "class/powercap", is_zone);
}

const struct collector_ops coll_powercap_ops = {
	.name = "powercap",
	.rows = &powercap_rows,
	.scope = COLL_DEVICE,
	.probe = pc_probe,
	.open = pc_open,
	.collect = pc_collect,
	.error = sysfs_coll_error,
	.close = sysfs_coll_free,
};
