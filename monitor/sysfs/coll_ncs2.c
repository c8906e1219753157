/* SPDX-License-Identifier: MIT */
/*
 * ncs2: Intel Neural Compute Sticks (Movidius Myriad VPUs on USB), found
 * under bus/usb/devices by vendor 03e7 and product 2485 (NCS2, Myriad X),
 * 2150 (NCS1, Myriad 2) or f63b (a stick whose firmware has been booted),
 * with no OpenVINO.
 *
 *   device_info         model by product id, USB port path, bus and device
 *                       numbers, serial, booted or not, speed
 *   device_utilization  available: no process holds the stick's
 *                       /dev/bus/usb/BBB/DDD node open (found by scanning
 *                       /proc/PID/fd, like fuser), and the pids that do; the
 *                       group also carries num_devices and
 *                       num_available_devices (prometheus_ncs2_exporter's
 *                       ncs2_num_devices and ncs2_num_available_devices)
 *   device_thermal      the stick's temperature needs OpenVINO's device
 *                       API, which only the process holding the stick can
 *                       call: it comes from that application, when it
 *                       serves prometheus_ncs2_exporter's
 *                       ncs2_temperature_celsius{name} and is configured as
 *                       an endpoint runtime (a fact, facts.h: matched by
 *                       the pid holding the stick, and by port where the
 *                       name has one), with where it came from and how old
 *                       it is. Else the field stays absent (never a fake
 *                       0 °C) and the reason is logged once.
 *
 * Sticks come and go (they disconnect when they overheat): a stick that is
 * gone is reported with an error once in each group and then dropped; one
 * that appears is picked up on the next cycle. A stick keeps its index while
 * it stays on the same USB port, also across the re-enumeration that booting
 * its firmware causes.
 */
#include "../core/collector.h"
#include "../core/devrec.h"
#include "../config/config.h"
#include "../host/host.h"
#include "sysfs.h"
#include "../../common/log.h"
#include "../../common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NCS2_USERS 8

struct ncs2_model {
	const char *product;
	const char *model;
	bool booted;
};

static const struct ncs2_model models[] = {
	{ "2485", "Intel Neural Compute Stick 2 (Myriad X)", false },
	{ "2150", "Intel Movidius Neural Compute Stick (Myriad 2)", false },
	{ "f63b", "Intel Movidius Myriad VPU (firmware booted)", true },
};

/* One stick (a devslot's priv). */
struct ncs2_dev {
	const struct ncs2_model *m;
	unsigned busnum, devnum;
	char node[32];               /* "/dev/bus/usb/001/005" */
	pid_t users[NCS2_USERS];     /* processes holding node open (latest scan) */
	size_t nusers;
	bool users_more;             /* more than NCS2_USERS */
	struct warnset warned;
};

struct ncs2_state {
	struct sysfs_coll base; /* first: the shared ops take the state as one */
	int64_t users_cycle;
	bool users_ok;
	bool told_temperature;
	bool any_temperature;  /* this device_thermal gave some stick a temperature */
	size_t available;  /* sticks no process holds, counted while filling device_utilization */
	struct pid_list named; /* the processes device_utilization named this cycle (ncs2_processes) */
	struct devrec rec;     /* the stick being filled (temperatures_celsius); holds no process: nothing to free */
};

#define NCS2_SUPPORTED                                                                         \
	(GROUP_BIT(GROUP_DEVICE_INFO) | GROUP_BIT(GROUP_DEVICE_UTILIZATION) | \
	 GROUP_BIT(GROUP_DEVICE_THERMAL))

/* ---- discovery ------------------------------------------------------------------ */

/* A USB device directory ("1-2", "3-1.4"), not a root hub ("usb1") or an interface ("1-2:1.0"). */
static bool is_usb_device(const char *name)
{
	return name[0] >= '0' && name[0] <= '9' && !strchr(name, ':');
}

/* The model of a USB device directory, or NULL when it is not a Movidius stick. */
static const struct ncs2_model *stick_model(int sysfd, const char *name)
{
	char rel[96], text[16];

	snprintf(rel, sizeof(rel), "bus/usb/devices/%s/idVendor", name);
	if (sysfs_read(sysfd, rel, text, sizeof(text)) <= 0 || strcmp(text, "03e7"))
		return NULL;
	snprintf(rel, sizeof(rel), "bus/usb/devices/%s/idProduct", name);
	if (sysfs_read(sysfd, rel, text, sizeof(text)) <= 0)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(models); i++)
		if (!strcmp(text, models[i].product))
			return &models[i];
	return NULL;
}

/* Read busnum and devnum: the node /dev/bus/usb/BBB/DDD. 0 or -errno. */
static int stick_node(int sysfd, const char *name, struct ncs2_dev *nd)
{
	char rel[96];
	uint64_t bus, dev;
	int rc;

	snprintf(rel, sizeof(rel), "bus/usb/devices/%s/busnum", name);
	if ((rc = sysfs_u64(sysfd, rel, &bus)))
		return rc;
	snprintf(rel, sizeof(rel), "bus/usb/devices/%s/devnum", name);
	if ((rc = sysfs_u64(sysfd, rel, &dev)))
		return rc;
	if (bus > 999 || dev > 999)
		return -EBADMSG;
	nd->busnum = (unsigned)bus;
	nd->devnum = (unsigned)dev;
	snprintf(nd->node, sizeof(nd->node), "/dev/bus/usb/%03u/%03u", nd->busnum, nd->devnum);
	return 0;
}

static void ncs2_scan(void *state)
{
	struct ncs2_state *s = state;

	if (sysfs_coll_list(&s->base, "bus/usb/devices") < 0)
		return;
	devtab_begin(&s->base.tab);
	for (size_t i = 0; i < s->base.names.n; i++) {
		const char *name = sysfs_name(&s->base.names, i);
		const struct ncs2_model *m;
		struct ncs2_dev probe = { 0 }, *nd;
		struct devslot *sl;
		char rel[96], text[80];
		bool fresh;

		if (!is_usb_device(name) || !(m = stick_model(s->base.sysfd, name)) ||
		    stick_node(s->base.sysfd, name, &probe))
			continue;
		sl = devtab_see(&s->base.tab, name, -1, &fresh);
		if (!fresh) {
			/* Same port: it may have re-enumerated (firmware booted), with a new device number. */
			nd = sl->priv;
			if (nd->m != m && m->booted && !nd->m->booted)
				snprintf(sl->model, sizeof(sl->model), "%s", nd->m->model); /* still that stick */
			else if (nd->m != m)
				snprintf(sl->model, sizeof(sl->model), "%s", m->model);
			nd->m = m;
			nd->busnum = probe.busnum;
			nd->devnum = probe.devnum;
			memcpy(nd->node, probe.node, sizeof(nd->node));
			continue;
		}
		nd = xcalloc(1, sizeof(*nd));
		*nd = probe;
		nd->m = m;
		snprintf(sl->model, sizeof(sl->model), "%s", m->model);
		snprintf(rel, sizeof(rel), "bus/usb/devices/%s/serial", name);
		if (sysfs_read(s->base.sysfd, rel, text, sizeof(text)) > 0)
			snprintf(sl->uuid, sizeof(sl->uuid), "%s", text);
		sl->priv = nd;
		sl->selected = cfg_device_selects(s->base.cfg, sl->index, sl->uuid[0] ? sl->uuid : NULL,
						  sl->uuid[0] ? sl->uuid : NULL);
	}
	devtab_end(&s->base.tab);
}

/* ---- who holds a stick open --------------------------------------------------------- */

static int on_usb_fd(pid_t pid, int piddir, const char *fd, const char *target, void *ud)
{
	struct ncs2_state *s = ud;

	(void)piddir;
	(void)fd;
	for (size_t i = 0; i < s->base.tab.n; i++) {
		struct devslot *sl = s->base.tab.slot[i];
		struct ncs2_dev *nd = sl->priv;

		if (sl->gone || strcmp(nd->node, target))
			continue;
		/* One process may hold the node through several fds: count it once. */
		for (size_t u = 0; u < nd->nusers; u++)
			if (nd->users[u] == pid)
				return 0;
		if (nd->nusers < NCS2_USERS)
			nd->users[nd->nusers++] = pid;
		else
			nd->users_more = true;
	}
	return 0;
}

static void ncs2_users(struct ncs2_state *s, const struct cycle *cy)
{
	if (s->users_cycle == cy->mono_ns)
		return;
	s->users_cycle = cy->mono_ns;
	for (size_t i = 0; i < s->base.tab.n; i++) {
		struct ncs2_dev *nd = s->base.tab.slot[i]->priv;

		nd->nusers = 0;
		nd->users_more = false;
	}
	s->users_ok = false;
	if (s->base.procfd < 0 &&
	    (s->base.procfd = open(host_procfs(s->base.env->host), O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	s->users_ok = procfd_scan(s->base.procfd, "/dev/bus/usb/", on_usb_fd, s) == 0;
}

/* ---- groups ------------------------------------------------------------------------ */

static void ncs2_info(struct ncs2_state *s, struct devslot *sl, struct rdctx *r, json_t *d)
{
	struct ncs2_dev *nd = sl->priv;
	char rel[96], text[128];
	uint64_t speed;

	if (sl->uuid[0])
		json_object_set_new(d, "serial", json_string(sl->uuid));
	json_object_set_new(d, "port_path", json_string(sl->key));
	json_object_set_new(d, "busnum", json_integer(nd->busnum));
	json_object_set_new(d, "devnum", json_integer(nd->devnum));
	snprintf(text, sizeof(text), "03e7:%s", nd->m->product);
	json_object_set_new(d, "usb_id", json_string(text));
	json_object_set_new(d, "booted", json_boolean(nd->m->booted));
	snprintf(rel, sizeof(rel), "bus/usb/devices/%s/speed", sl->key);
	if (rd_u64(r, s->base.sysfd, rel, &speed) == 1)
		json_set_u64(d, "speed_mbps", speed);
	snprintf(rel, sizeof(rel), "bus/usb/devices/%s/product", sl->key);
	if (rd_text(r, s->base.sysfd, rel, text, sizeof(text)) == 1 && text[0])
		json_object_set_new(d, "usb_product", json_string(utf8_sanitize(text)));
}

static void ncs2_util(struct ncs2_state *s, struct devslot *sl, json_t *d)
{
	struct ncs2_dev *nd = sl->priv;
	json_t *pids;

	if (!s->users_ok)
		return; /* /proc could not be read: availability unknown, left out */
	pids = json_array();
	for (size_t u = 0; u < nd->nusers; u++) {
		json_array_append_new(pids, json_integer(nd->users[u]));
		pid_list_add(&s->named, (pid_t)nd->users[u]);
	}
	json_object_set_new(d, "available", json_boolean(nd->nusers == 0));
	json_object_set_new(d, "pids", pids);
}

/*
 * Does a device name an application gives ("MYRIAD", "MYRIAD.1.2-ma2480")
 * fit the stick on USB port port ("1-2")? OpenVINO names a stick
 * MYRIAD.<bus>.<port>[.<port>...]-<chip> when there are several: that
 * fits the stick on port <bus>-<port>[.<port>...] only (*named set). A name
 * without a port fits any stick (the caller checks it is the holder's only
 * one).
 */
static bool name_fits(const char *name, const char *port, bool *named)
{
	const char *p, *dash;
	size_t n;

	*named = false;
	if (strncmp(name, "MYRIAD.", 7))
		return true;
	p = name + 7;
	dash = strchr(p, '-');
	n = dash ? (size_t)(dash - p) : strlen(p);
	if (!n || !strchr(p, '.') || (dash && strchr(p, '.') > dash))
		return true; /* no <bus>.<port>: not a port */
	*named = true;
	if (strlen(port) != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		char want = p[i] == '.' && p + i == strchr(p, '.') ? '-' : p[i]; /* the first dot is the bus's */

		if (port[i] != want)
			return false;
	}
	return true;
}

static bool holds(const struct ncs2_dev *nd, pid_t pid)
{
	for (size_t u = 0; u < nd->nusers; u++)
		if (nd->users[u] == pid)
			return true;
	return false;
}

/*
 * device_thermal of one stick: the temperatures applications published
 * (the host's device facts, host.h) that are about it: from a process holding the stick open, with
 * a name that fits its port, or a name without a port when that process
 * holds no other stick. Keyed by the application's name for the stick
 * (ncs2_temperature_celsius's "name" label: the device record's sensors, at
 * most DEVREC_TEMPS, a name seen again taking the later value in its
 * place); temperature_source and temperature_age_seconds say where the
 * first came from and how old it is.
 */
static void ncs2_thermal(struct ncs2_state *s, struct devslot *sl, const struct cycle *cy, json_t *d)
{
	struct ncs2_dev *nd = sl->priv;
	const struct fact *f, *first = NULL;
	size_t pos = 0;

	if (!s->users_ok)
		return;
	devrec_clear(&s->rec);
	while ((f = host_facts_next(s->base.env->host, "ncs2", cy->mono_ns, &pos))) {
		size_t others = 0;
		bool named;

		if (strcmp(f->field, "temperature_celsius") || !f->pid || !holds(nd, f->pid) ||
		    !name_fits(f->name, sl->key, &named))
			continue;
		for (size_t i = 0; !named && i < s->base.tab.n; i++) {
			struct devslot *o = s->base.tab.slot[i];

			others += o != sl && !o->gone && holds(o->priv, f->pid);
		}
		if (others)
			continue; /* "MYRIAD" from a process with several sticks: which one is not said */
		devrec_temp_add(&s->rec, f->name, NULL, f->value);
		if (!first)
			first = f;
	}
	if (!first)
		return;
	devrec_temps_json(&s->rec, d);
	json_object_set_new(d, "temperature_source", json_string(first->source));
	json_object_set_new(d, "temperature_age_seconds",
			    json_real(cy->mono_ns > first->at_ns ? (double)(cy->mono_ns - first->at_ns) / 1e9 : 0.0));
	s->any_temperature = true;
}

/* ---- ops ------------------------------------------------------------------------------ */

static bool is_stick(int sysfd, const char *name)
{
	return is_usb_device(name) && stick_model(sysfd, name);
}

static int ncs2_probe(const struct mon_env *env)
{
	return sysfs_probe(env, "bus/usb/devices", is_stick);
}

static int ncs2_open(const struct mon_env *env, const struct coll_target *t, void **state)
{
	const struct cfg_device *dev = t->dev;
	struct ncs2_state *s = xcalloc(1, sizeof(*s));

	sysfs_coll_init(&s->base, env, dev, NCS2_SUPPORTED, free);
	s->users_cycle = -1;
	s->rec.fresh = 1; /* device_entry makes the device objects anew each cycle */
	host_facts_want(env->host, "ncs2", 1); /* temperatures from the applications holding sticks */
	*state = s;
	ncs2_scan(s);
	return s->base.error[0] ? -EIO : 0;
}

static void ncs2_fill(void *state, enum group_id id, const struct cycle *cy, struct devslot *sl, struct rdctx *r,
		      json_t *d)
{
	struct ncs2_state *s = state;
	struct ncs2_dev *nd = sl->priv;

	r->warned = &nd->warned;
	if (id == GROUP_DEVICE_INFO) {
		ncs2_info(s, sl, r, d);
	} else if (id == GROUP_DEVICE_UTILIZATION) {
		ncs2_util(s, sl, d);
		s->available += nd->nusers == 0;
	} else if (id == GROUP_DEVICE_THERMAL) {
		ncs2_thermal(s, sl, cy, d);
	}
}

static int ncs2_collect(void *state, const struct cycle *cy, const enum group_id *due, size_t ndue, json_t *group)
{
	enum group_id id = due[0]; /* one group at a time */
	struct ncs2_state *s = state;
	int rc;

	(void)ndue;
	if (!sysfs_coll_begin(&s->base, cy, group, ncs2_scan))
		return -1;
	if (!(GROUP_BIT(id) & NCS2_SUPPORTED))
		return 0;
	if (id == GROUP_DEVICE_UTILIZATION)
		ncs2_users(s, cy);
	if (id == GROUP_DEVICE_THERMAL) {
		size_t pos = 0;

		/* Who holds each stick, only when some application published a temperature (one /proc scan a cycle). */
		if (host_facts_next(s->base.env->host, "ncs2", cy->mono_ns, &pos))
			ncs2_users(s, cy);
	}
	s->available = 0;
	s->any_temperature = false;
	rc = sysfs_coll_fill(&s->base, id, cy, group, "ncs2", NULL, ncs2_fill);
	if (id == GROUP_DEVICE_THERMAL && !s->any_temperature && devtab_present(&s->base.tab) &&
	    !s->told_temperature) {
		log_warn("ncs2: a stick's temperature needs OpenVINO's device API, which only the process holding the "
			 "stick can call; device_thermal has it when that application serves ncs2_temperature_celsius "
			 "and is configured as an endpoint runtime (docs/devices.md), and leaves it out otherwise");
		s->told_temperature = true;
	}
	if (id == GROUP_DEVICE_UTILIZATION) {
		/* The sticks just added: the selected ones that are present. */
		json_object_set_new(group, "num_devices", json_integer((json_int_t)devtab_present(&s->base.tab)));
		if (s->users_ok)
			json_object_set_new(group, "num_available_devices", json_integer((json_int_t)s->available));
	}
	return rc;
}

/* Hand the core the processes this cycle's device_utilization named (each stick's "pids"). */
static void ncs2_processes(void *state, struct pid_list *out)
{
	struct ncs2_state *s = state;

	if (s)
		pid_list_move(&s->named, out);
}

static void ncs2_close(void *state)
{
	struct ncs2_state *s = state;

	if (s) {
		host_facts_want(s->base.env->host, "ncs2", -1);
		pid_list_free(&s->named);
	}
	sysfs_coll_free(state);
}

const struct collector_ops coll_ncs2_ops = {
	.name = "ncs2",
	.rows = &ncs2_rows,
	.scope = COLL_DEVICE,
	.probe = ncs2_probe,
	.open = ncs2_open,
	.collect = ncs2_collect,
	.error = sysfs_coll_error,
	.processes = ncs2_processes,
	.devices = sysfs_coll_devices,
	.close = ncs2_close,
};
