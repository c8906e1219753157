/* SPDX-License-Identifier: MIT */
/*
 * hwmon: every hardware-monitoring chip under class/hwmon (the kernel's
 * hwmon sysfs interface) that no device collector above claims, so boards
 * such as a Jetson and a plain server's sensors are covered too. A chip
 * belongs to amdgpu (and is left out here) when its name is "amdgpu" or
 * its device is bound to the amdgpu driver. Its index is N of hwmonN.
 *
 *   device_info     name, the device it measures, that device's driver
 *   device_thermal  temp*_input (m°C) by temp*_label (as a key: "Package id 0"
 *                   becomes "package_id_0"), their temp*_crit and temp*_max
 *                   thresholds, fan*_input (RPM) by fan*_label, pwm1 (0-255)
 *                   as fan_percent, every *_alarm (0/1) by its file's stem
 *   device_power    power*_input, else power*_average (µW), by power*_label;
 *                   in*_input (mV) as volts by in*_label; the period's
 *                   energy by sensor: energy*_input (µJ) by energy*_label,
 *                   or, on a chip without energy inputs, each power input
 *                   integrated over the period (energy.h)
 *   device_clocks   freq*_input (Hz) as MHz by freq*_label
 *
 * The attributes are in class/hwmon/hwmonN, or, on older kernels and some
 * platform drivers (applesmc), in its device directory (hwmonN/device):
 * whichever has them. The device is named by its link (resolved when the
 * link ends in ".."), else, in a tree copied without links, by uevent's
 * PCI_SLOT_NAME or DEVNAME; its driver by the driver link, else uevent's
 * DRIVER.
 *
 * The chip's inputs are listed when it is first seen; an input that cannot
 * be read this cycle is left out.
 */
#include "../core/collector.h"
#include "../config/config.h"
#include "../core/devrec.h"
#include "../core/energy.h"
#include "sysfs.h"
#include "../../common/log.h"
#include "../../common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HW_INPUTS 32
#define HW_ALARMS 64

struct hw_input {
	char file[32]; /* "temp1_input" */
	char name[48]; /* its label as a key ("package_id_0"), else "temp1" */
	bool crit, max; /* temp: temp1_crit, temp1_max are there */
};

struct hw_chip {
	int fd; /* where the attributes are: class/hwmon/hwmonN, or its device directory */
	char name[64];
	char device[64]; /* the device's name ("coretemp.0", "0000:00:18.3", "phy0"); "" when unknown */
	char driver[64];
	struct hw_input temp[HW_INPUTS], fan[HW_INPUTS], power[HW_INPUTS], volt[HW_INPUTS], freq[HW_INPUTS];
	struct hw_input energy[HW_INPUTS];
	size_t ntemp, nfan, npower, nvolt, nfreq, nenergy;
	/* per sensor: energy[i] when the chip has energy inputs, else power[i] integrated */
	struct energy_meter meter[HW_INPUTS];
	char alarm[HW_ALARMS][32]; /* "temp1_crit_alarm", ... */
	size_t nalarm;
	bool pwm;
	char probe[32]; /* a file that was there when the chip was found: gone with the chip */
	struct warnset warned;
};

struct hw_state {
	struct sysfs_coll base; /* first: the shared ops take the state as one */
	struct sysfs_names claimed; /* amdgpu's chips, seen last scan (not opened again while they stay) */
	struct sysfs_names claimed_next;
	struct devrec rec; /* the chip being filled: its temperatures, written by devrec_temps_json */
};

#define HW_SUPPORTED                                                                                         \
	(GROUP_BIT(GROUP_DEVICE_INFO) | GROUP_BIT(GROUP_DEVICE_THERMAL) | GROUP_BIT(GROUP_DEVICE_POWER) | \
	 GROUP_BIT(GROUP_DEVICE_CLOCKS))

static const int hw_fatal[] = { ENODEV, 0 };

/* ---- discovery ------------------------------------------------------------------ */

static long hwmon_number(const char *name)
{
	char *end;
	long v;

	if (strncmp(name, "hwmon", 5) || name[5] < '0' || name[5] > '9')
		return -1;
	v = strtol(name + 5, &end, 10);
	return *end ? -1 : v;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* Add input file f ("temp1_input") to list, named by its label file. */
static void add_input(int fd, const char *f, struct hw_input *list, size_t *n)
{
	struct hw_input *in;
	char label[48], text[64], chan[24];

	if (*n == HW_INPUTS)
		return;
	in = &list[(*n)++];
	snprintf(in->file, sizeof(in->file), "%s", f);
	snprintf(chan, sizeof(chan), "%.*s", (int)strcspn(f, "_"), f);
	snprintf(label, sizeof(label), "%s_label", chan);
	if (sysfs_read(fd, label, text, sizeof(text)) <= 0)
		text[0] = '\0';
	sysfs_key(text, chan, in->name, sizeof(in->name));
}

/* Is the chip amdgpu's (reported by the amdgpu collector)? */
static bool claimed(const struct hw_chip *c)
{
	return !strcmp(c->name, "amdgpu") || !strcmp(c->driver, "amdgpu");
}

/* Is f an input (or alarm) the chip is read for? */
static bool is_sensor(const char *f)
{
	return has_suffix(f, "_input") || has_suffix(f, "_average") || has_suffix(f, "_alarm") || !strcmp(f, "pwm1");
}

/* Is there a file in names? */
static bool has_name(const struct sysfs_names *names, const char *f)
{
	for (size_t i = 0; i < names->n; i++)
		if (!strcmp(sysfs_name(names, i), f))
			return true;
	return false;
}

/* The chip's inputs among names (the files of c->fd). */
static void chip_inputs(struct hw_chip *c, const struct sysfs_names *names)
{
	for (size_t i = 0; i < names->n; i++) {
		const char *f = sysfs_name(names, i);
		size_t chan = strcspn(f, "_");
		bool dup = false;

		if (!strncmp(f, "temp", 4) && has_suffix(f, "_input")) {
			char t[40];

			add_input(c->fd, f, c->temp, &c->ntemp);
			snprintf(t, sizeof(t), "%.*s_crit", (int)chan, f);
			c->temp[c->ntemp - 1].crit = has_name(names, t);
			snprintf(t, sizeof(t), "%.*s_max", (int)chan, f);
			c->temp[c->ntemp - 1].max = has_name(names, t);
		} else if (!strncmp(f, "fan", 3) && has_suffix(f, "_input")) {
			add_input(c->fd, f, c->fan, &c->nfan);
		} else if (!strncmp(f, "in", 2) && f[2] >= '0' && f[2] <= '9' && has_suffix(f, "_input")) {
			add_input(c->fd, f, c->volt, &c->nvolt);
		} else if (!strncmp(f, "freq", 4) && has_suffix(f, "_input")) {
			add_input(c->fd, f, c->freq, &c->nfreq);
		} else if (has_suffix(f, "_alarm") && c->nalarm < HW_ALARMS && strlen(f) < sizeof(c->alarm[0])) {
			snprintf(c->alarm[c->nalarm++], sizeof(c->alarm[0]), "%s", f);
		} else if (!strncmp(f, "power", 5) && (has_suffix(f, "_input") || has_suffix(f, "_average"))) {
			/* One per channel: power1_input wins over power1_average. */
			for (size_t k = 0; k < c->npower; k++)
				if (!strncmp(c->power[k].file, f, chan) && c->power[k].file[chan] == '_') {
					dup = true;
					if (has_suffix(f, "_input"))
						snprintf(c->power[k].file, sizeof(c->power[k].file), "%s", f);
				}
			if (!dup)
				add_input(c->fd, f, c->power, &c->npower);
		} else if (!strncmp(f, "energy", 6) && has_suffix(f, "_input")) {
			add_input(c->fd, f, c->energy, &c->nenergy);
		} else if (!strcmp(f, "pwm1")) {
			c->pwm = true;
		}
	}
}

/* Does the directory listing hold a sensor? */
static bool has_sensors(const struct sysfs_names *names)
{
	for (size_t i = 0; i < names->n; i++)
		if (is_sensor(sysfs_name(names, i)))
			return true;
	return false;
}

/*
 * Open chip hwmonN: its name, device and inputs. NULL when it is claimed
 * (*is_claimed true: not opened again while it stays listed) or cannot be
 * opened now (*is_claimed false: a dangling or looping link, tried again
 * next cycle).
 */
static struct hw_chip *chip_open(struct hw_state *s, const char *hwmon, bool *is_claimed)
{
	struct hw_chip *c = xcalloc(1, sizeof(*c));
	struct sysfs_names names = { 0 };
	char rel[96];
	int hw;

	*is_claimed = false;
	snprintf(rel, sizeof(rel), "class/hwmon/%s", hwmon);
	hw = c->fd = sysfs_dir(s->base.sysfd, rel);
	if (c->fd < 0) {
		free(c);
		return NULL;
	}
	/* Older kernels, applesmc and some platform drivers keep the attributes in the device's directory. */
	if (sysfs_list(hw, ".", &names) == 0 && !has_sensors(&names)) {
		int dfd = sysfs_dir(hw, "device");

		if (dfd >= 0 && sysfs_list(dfd, ".", &names) == 0 && has_sensors(&names)) {
			c->fd = dfd;
		} else {
			if (dfd >= 0)
				close(dfd);
			sysfs_list(hw, ".", &names);
		}
	}
	/* The probe is a file of the attribute directory: "name", else the first input (below). */
	if (sysfs_read(c->fd, "name", c->name, sizeof(c->name)) > 0)
		snprintf(c->probe, sizeof(c->probe), "name");
	else if (c->fd == hw || sysfs_read(hw, "name", c->name, sizeof(c->name)) <= 0)
		snprintf(c->name, sizeof(c->name), "%s", hwmon);
	/* Without links: the PCI address, else the device node's name (DEVNAME=nvme0). */
	if (sysfs_link_name(hw, "device", c->device, sizeof(c->device)) < 0 &&
	    sysfs_pci_address(hw, "device", c->device, sizeof(c->device)) < 0 &&
	    sysfs_uevent(hw, "device", "DEVNAME", c->device, sizeof(c->device)) < 0)
		c->device[0] = '\0';
	if (sysfs_driver(hw, "device", c->driver, sizeof(c->driver)) < 0)
		c->driver[0] = '\0';
	if (c->fd != hw)
		close(hw);
	*is_claimed = claimed(c);
	if (*is_claimed) {
		sysfs_names_free(&names);
		close(c->fd);
		free(c);
		return NULL;
	}
	chip_inputs(c, &names);
	sysfs_names_free(&names);
	if (!c->probe[0])
		snprintf(c->probe, sizeof(c->probe), "%s",
			 c->ntemp    ? c->temp[0].file
			 : c->nfan   ? c->fan[0].file
			 : c->npower ? c->power[0].file
			 : c->nenergy ? c->energy[0].file
			 : c->nvolt  ? c->volt[0].file
			 : c->nfreq  ? c->freq[0].file
			 : c->nalarm ? c->alarm[0]
				     : ".");
	return c;
}

static void chip_free(void *priv)
{
	struct hw_chip *c = priv;

	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

static bool in_names(const struct sysfs_names *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(sysfs_name(l, i), name))
			return true;
	return false;
}

static void add_name(struct sysfs_names *l, const char *name)
{
	size_t len = strlen(name) + 1;

	if (l->pool_size + len > l->pool_alloc) {
		l->pool_alloc = (l->pool_size + len) * 2 + 64;
		l->pool = xrealloc(l->pool, l->pool_alloc);
	}
	if (l->n == l->off_alloc) {
		l->off_alloc = l->off_alloc ? l->off_alloc * 2 : 8;
		l->off = xrealloc(l->off, l->off_alloc * sizeof(*l->off));
	}
	memcpy(l->pool + l->pool_size, name, len);
	l->off[l->n++] = l->pool_size;
	l->pool_size += len;
}

static void hw_scan(void *state)
{
	struct hw_state *s = state;

	if (sysfs_coll_list(&s->base, "class/hwmon") < 0)
		return;
	devtab_begin(&s->base.tab);
	s->claimed_next.n = s->claimed_next.pool_size = 0;
	for (size_t i = 0; i < s->base.names.n; i++) {
		const char *name = sysfs_name(&s->base.names, i);
		long n = hwmon_number(name);
		struct devslot *sl;
		struct hw_chip *c;
		bool fresh, is_claimed;

		if (n < 0)
			continue;
		sl = devtab_find(&s->base.tab, name);
		if (sl && !sl->gone) {
			const struct hw_chip *c0 = sl->priv;

			if (faccessat(c0->fd, c0->probe, F_OK, 0) == 0)
				devtab_see(&s->base.tab, name, n, &fresh);
			continue;
		}
		if (in_names(&s->claimed, name)) {
			add_name(&s->claimed_next, name);
			continue;
		}
		if (!(c = chip_open(s, name, &is_claimed))) {
			if (is_claimed)
				add_name(&s->claimed_next, name);
			continue;
		}
		sl = devtab_see(&s->base.tab, name, n, &fresh);
		snprintf(sl->model, sizeof(sl->model), "%s", c->name);
		if (sysfs_is_pci_address(c->device))
			snprintf(sl->pci, sizeof(sl->pci), "%s", c->device);
		sl->priv = c;
		sl->selected = !s->base.cfg || cfg_device_selects(s->base.cfg, sl->index, NULL, NULL);
	}
	devtab_end(&s->base.tab);
	{
		struct sysfs_names t = s->claimed;

		s->claimed = s->claimed_next;
		s->claimed_next = t;
	}
}

/* ---- groups ------------------------------------------------------------------------ */

/* One object of sensor values being built, and the keys put in it so far (one per input at most). */
struct hw_obj {
	json_t *o;
	char key[HW_INPUTS][48];
	size_t n;
};

static void hw_obj_init(struct hw_obj *h)
{
	h->o = json_object();
	h->n = 0;
}

static bool hw_obj_has(const struct hw_obj *h, const char *k)
{
	for (size_t i = 0; i < h->n; i++)
		if (!strcmp(h->key[i], k))
			return true;
	return false;
}

/* An input's channel name: "temp3" of temp3_input (dst: 48 bytes, more than a file name). */
static void channel(const struct hw_input *in, char dst[48])
{
	size_t n = strcspn(in->file, "_");

	memcpy(dst, in->file, n);
	dst[n] = '\0';
}

/* Add value v (stolen) under in's name to h; a second input with the same label keeps its channel name. */
static void put(struct hw_obj *h, const struct hw_input *in, json_t *v)
{
	char name[48];

	snprintf(name, sizeof(name), "%s", in->name);
	if (hw_obj_has(h, name))
		channel(in, name);
	if (json_object_set_new(h->o, name, v) == 0 && !hw_obj_has(h, name) && h->n < HW_INPUTS)
		memcpy(h->key[h->n++], name, sizeof(name));
}

static void hw_info(struct hw_chip *c, json_t *d)
{
	json_object_set_new(d, "name", json_string(utf8_sanitize(c->name)));
	if (c->device[0])
		json_object_set_new(d, "device", json_string(utf8_sanitize(c->device)));
	if (c->driver[0])
		json_object_set_new(d, "driver", json_string(utf8_sanitize(c->driver)));
}

/* Set obj under key in d when it is not empty; obj is released either way. */
static void set_nonempty(json_t *d, const char *key, json_t *obj)
{
	if (json_object_size(obj))
		json_object_set(d, key, obj);
	json_decref(obj);
}

static void set_nonempty_h(json_t *d, const char *key, struct hw_obj *h)
{
	set_nonempty(d, key, h->o);
}

/* temp1_input -> temp1_<what> ("crit", "max") */
static void threshold_file(const struct hw_input *in, const char *what, char *dst, size_t size)
{
	snprintf(dst, size, "%.*s_%s", (int)strcspn(in->file, "_"), in->file, what);
}

/*
 * temperatures_celsius (the device record's), the thresholds, fans and
 * alarms. rec: the collector's record, cleared here.
 */
static void hw_thermal(struct hw_chip *c, struct devrec *rec, struct rdctx *r, json_t *d)
{
	struct hw_obj fans, crit, max;
	json_t *alarms = json_object();
	char file[48], chan[48];
	int64_t mc;
	uint64_t v;

	devrec_clear(rec);
	hw_obj_init(&fans);
	hw_obj_init(&crit);
	hw_obj_init(&max);
	for (size_t i = 0; i < c->ntemp; i++) {
		if (rd_s64(r, c->fd, c->temp[i].file, &mc) == 1) {
			channel(&c->temp[i], chan);
			devrec_temp_add(rec, c->temp[i].name, chan, (double)mc / 1000.0);
		}
		threshold_file(&c->temp[i], "crit", file, sizeof(file));
		if (c->temp[i].crit && rd_s64(r, c->fd, file, &mc) == 1)
			put(&crit, &c->temp[i], json_real((double)mc / 1000.0));
		threshold_file(&c->temp[i], "max", file, sizeof(file));
		if (c->temp[i].max && rd_s64(r, c->fd, file, &mc) == 1)
			put(&max, &c->temp[i], json_real((double)mc / 1000.0));
	}
	for (size_t i = 0; i < c->nfan; i++)
		if (rd_u64(r, c->fd, c->fan[i].file, &v) == 1)
			put(&fans, &c->fan[i], json_u64(v));
	/* An alarm is 0 or 1 (a few chips latch it until read). Keyed by the file's stem: "temp1_crit". */
	for (size_t i = 0; i < c->nalarm; i++) {
		if (rd_u64(r, c->fd, c->alarm[i], &v) != 1)
			continue;
		if (v > 1) {
			rd_check(r, c->alarm[i], -EBADMSG);
			continue;
		}
		snprintf(file, sizeof(file), "%.*s", (int)(strlen(c->alarm[i]) - 6), c->alarm[i]);
		json_object_set_new(alarms, file, json_integer((json_int_t)v));
	}
	devrec_temps_json(rec, d);
	set_nonempty_h(d, "temperatures_crit_celsius", &crit);
	set_nonempty_h(d, "temperatures_max_celsius", &max);
	set_nonempty_h(d, "fan_rpm", &fans);
	set_nonempty(d, "alarms", alarms);
	if (c->pwm && rd_u64(r, c->fd, "pwm1", &v) == 1)
		json_object_set_new(d, "fan_percent", json_real((double)(v > 255 ? 255 : v) * 100.0 / 255.0));
}

static void hw_power(struct hw_chip *c, struct rdctx *r, const struct cycle *cy, json_t *d)
{
	struct hw_obj watts, volts, joules;
	uint64_t uw, uj;
	int64_t mv;
	double j;

	hw_obj_init(&watts);
	hw_obj_init(&volts);
	hw_obj_init(&joules);
	for (size_t i = 0; i < c->npower; i++) {
		if (rd_u64(r, c->fd, c->power[i].file, &uw) != 1) {
			energy_meter_reset(&c->meter[i]); /* a gap: the next reading is a baseline */
			continue;
		}
		put(&watts, &c->power[i], json_real((double)uw / 1e6));
		if (!c->nenergy && energy_meter_power(&c->meter[i], (double)uw / 1e6, cy->mono_ns, &j))
			put(&joules, &c->power[i], json_real(j));
	}
	/* energy*_input: µJ, a counter since the driver loaded (a step back or a jump: no energy, afresh) */
	for (size_t i = 0; i < c->nenergy; i++) {
		if (rd_u64(r, c->fd, c->energy[i].file, &uj) != 1)
			continue;
		int rc = energy_meter_counter(&c->meter[i], uj, 0, 1e-6, 0, cy->mono_ns, &j);

		if (rc > 0)
			put(&joules, &c->energy[i], json_real(j));
		else if (rc < 0)
			energy_counter_refused(r->group, &r->noted, "hwmon", r->key, c->meter[i].why);
	}
	set_nonempty_h(d, "energy_sensors_joules", &joules);
	/* in*_input: mV (signed: some rails are negative) */
	for (size_t i = 0; i < c->nvolt; i++)
		if (rd_s64(r, c->fd, c->volt[i].file, &mv) == 1)
			put(&volts, &c->volt[i], json_real((double)mv / 1000.0));
	set_nonempty_h(d, "power_sensors_watts", &watts);
	set_nonempty_h(d, "voltages_volts", &volts);
}

static void hw_clocks(struct hw_chip *c, struct rdctx *r, json_t *d)
{
	struct hw_obj mhz;
	uint64_t hz;

	hw_obj_init(&mhz);
	for (size_t i = 0; i < c->nfreq; i++)
		if (rd_u64(r, c->fd, c->freq[i].file, &hz) == 1)
			put(&mhz, &c->freq[i], json_real((double)hz / 1e6));
	set_nonempty_h(d, "clocks_mhz", &mhz);
}

/* ---- ops ------------------------------------------------------------------------------ */

static int hw_open(const struct mon_env *env, const struct coll_target *t, void **state);
static void hw_close(void *state);

/* A state without a block (every chip selected), scanned once. */
static int hw_probe(const struct mon_env *env)
{
	void *st = NULL;
	int found;

	hw_open(env, &(struct coll_target){ .dev = NULL }, &st);
	found = devtab_present(&((struct hw_state *)st)->base.tab) > 0;
	hw_close(st);
	return found;
}

static int hw_open(const struct mon_env *env, const struct coll_target *t, void **state)
{
	const struct cfg_device *dev = t->dev;
	struct hw_state *s = xcalloc(1, sizeof(*s));

	sysfs_coll_init(&s->base, env, dev, HW_SUPPORTED, chip_free);
	s->rec.fresh = 1; /* device_entry makes the chip objects anew each cycle */
	*state = s;
	hw_scan(s);
	return s->base.error[0] ? -EIO : 0;
}

static void hw_fill(void *state, enum group_id id, const struct cycle *cy, struct devslot *sl, struct rdctx *r,
		    json_t *d)
{
	struct hw_chip *c = sl->priv;

	r->warned = &c->warned;
	if (id == GROUP_DEVICE_INFO)
		hw_info(c, d);
	else if (id == GROUP_DEVICE_THERMAL)
		hw_thermal(c, &((struct hw_state *)state)->rec, r, d);
	else if (id == GROUP_DEVICE_CLOCKS)
		hw_clocks(c, r, d);
	else
		hw_power(c, r, cy, d);
}

static int hw_collect(void *state, const struct cycle *cy, const enum group_id *due, size_t ndue, json_t *group)
{
	enum group_id id = due[0]; /* one group at a time */
	struct hw_state *s = state;

	(void)ndue;
	if (!sysfs_coll_begin(&s->base, cy, group, hw_scan))
		return -1;
	if (!(GROUP_BIT(id) & HW_SUPPORTED))
		return 0;
	return sysfs_coll_fill(&s->base, id, cy, group, "hwmon", hw_fatal, hw_fill);
}

static void hw_close(void *state)
{
	struct hw_state *s = state;

	if (!s)
		return;
	sysfs_names_free(&s->claimed);
	sysfs_names_free(&s->claimed_next);
	devrec_free(&s->rec);
	sysfs_coll_free(s);
}

/* Config: a hwmon chip has no UUID or serial, so a block selects chips by index. */
static int hw_config(const struct cfg_block *b)
{
	const struct cfg_device *dev = b->dev;
	json_t *sel = json_object_get(b->obj, "select"), *e;
	char sub[32];
	size_t i;

	if (!dev->nids)
		return 0;
	json_array_foreach(sel, i, e) {
		if (json_is_string(e)) {
			snprintf(sub, sizeof(sub), "select[%zu]", i);
			return cfg_block_error(b, sub, 0,
					       "hwmon chips have no UUID or serial; select them by index (0, 1, ...)");
		}
	}
	return 0;
}

const struct collector_ops coll_hwmon_ops = {
	.name = "hwmon",
	.rows = &hwmon_rows,
	.scope = COLL_DEVICE,
	.config = hw_config,
	.probe = hw_probe,
	.open = hw_open,
	.collect = hw_collect,
	.error = sysfs_coll_error,
	.close = hw_close,
};
