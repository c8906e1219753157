/* SPDX-License-Identifier: MIT */
/*
 * The one place collectors are registered. Adding a collector is a new
 * coll_<name>.c with its ops table (coll_<name>_ops), its rows
 * (common/rows/<name>.c, named by the ops' .rows and listed in map_rows[],
 * common/rows.h) and one row here: the
 * monitor opens what the configuration asks with these tables, and the
 * configuration validator takes the device types and runtime address
 * schemes it accepts from them.
 */
#include "../core/collector.h"
#include "../../common/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/*
 * The registry: one row per collector, naming its ops table coll_<row>_ops
 * (declared here, so the row is all a new collector needs). Device
 * collectors are probed by "auto" in this order.
 */
#define COLLECTORS(X)                                                                                              \
	X(cpu) X(mem) X(neuron_hw) X(containers)                                                                   \
	X(pid) X(process) X(endpoint)                                                                              \
	X(nvidia) X(amdgpu) X(neuron) X(ncs2) X(hwmon) X(powercap)

/* Runtime address schemes accepted without a collector: neuron-monitor's socket. */
static const char *const unpolled_schemes[] = { "unix", NULL };

#define DECLARE(n) extern const struct collector_ops coll_##n##_ops;
#define ENTRY(n) &coll_##n##_ops,
COLLECTORS(DECLARE)

static const struct collector_ops *const registry[] = { COLLECTORS(ENTRY) NULL };

const struct collector_ops *const *collectors(void)
{
	return registry;
}

const struct collector_ops *collector_find(const struct collector_ops *const *reg, enum coll_scope scope,
					   const char *name)
{
	for (size_t i = 0; name && (reg ? reg : registry)[i]; i++) {
		const struct collector_ops *c = (reg ? reg : registry)[i];

		if (c->scope == scope && !strcmp(c->name, name))
			return c;
	}
	return NULL;
}

const struct collector_ops *collector_group(const struct collector_ops *const *reg, enum group_id id)
{
	for (size_t i = 0; (reg ? reg : registry)[i]; i++) {
		const struct collector_ops *c = (reg ? reg : registry)[i];

		if (c->scope == COLL_SYSTEM && c->group == id)
			return c;
	}
	return NULL;
}

const struct collector_ops *collector_scheme(const char *scheme)
{
	for (size_t i = 0; registry[i]; i++)
		for (size_t k = 0; registry[i]->scope == COLL_RUNTIME && registry[i]->schemes[k]; k++)
			if (!strcmp(registry[i]->schemes[k], scheme))
				return registry[i];
	return NULL;
}

const char *const *collector_schemes_unpolled(void)
{
	return unpolled_schemes;
}

size_t collector_schemes_list(char *dst, size_t size)
{
	size_t n = 0;

	if (size)
		dst[0] = '\0';
	for (size_t i = 0; registry[i]; i++)
		for (size_t k = 0; registry[i]->scope == COLL_RUNTIME && registry[i]->schemes[k]; k++)
			n += (size_t)snprintf(dst + n, n < size ? size - n : 0, "%s%s:", n ? ", " : "",
					      registry[i]->schemes[k]);
	return n;
}

json_t *device_entry(json_t *group, unsigned index, const char *uuid, const char *pci_bus_id, const char *model)
{
	json_t *devs = json_object_get(group, "devices"), *d = json_object();
	char key[16], tmp[256];

	if (!devs) {
		devs = json_object();
		json_object_set_new(group, "devices", devs);
	}
	snprintf(key, sizeof(key), "%u", index);
	json_object_set_new(d, "index", json_integer(index));
	if (uuid) {
		snprintf(tmp, sizeof(tmp), "%s", uuid);
		json_object_set_new(d, "uuid", json_string(utf8_sanitize(tmp)));
	}
	if (pci_bus_id) {
		snprintf(tmp, sizeof(tmp), "%s", pci_bus_id);
		json_object_set_new(d, "pci_bus_id", json_string(utf8_sanitize(tmp)));
	}
	if (model) {
		snprintf(tmp, sizeof(tmp), "%s", model);
		json_object_set_new(d, "model", json_string(utf8_sanitize(tmp)));
	}
	json_object_set_new(d, "error", json_string(""));
	json_object_set_new(devs, key, d);
	return d;
}

json_t *group_new(double period_s, const char *iso)
{
	json_t *g = json_object();

	json_object_set_new(g, "period", json_real(period_s));
	json_object_set_new(g, "timestamp", json_string(iso));
	json_object_set_new(g, "error", json_string(""));
	return g;
}

void proc_devmem_add(struct proc_devmem_list *l, pid_t pid, uint64_t bytes)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->p = xrealloc(l->p, l->cap * sizeof(*l->p));
	}
	l->p[l->n++] = (struct proc_devmem){ pid, bytes };
}

void pid_list_add(struct pid_list *l, pid_t pid)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->p = xrealloc(l->p, l->cap * sizeof(*l->p));
	}
	l->p[l->n++] = pid;
}

void pid_list_move(struct pid_list *from, struct pid_list *to)
{
	for (size_t i = 0; i < from->n; i++)
		pid_list_add(to, from->p[i]);
	from->n = 0;
}

struct dev_ident *dev_list_add(struct dev_list *l, const char *type, const char *key)
{
	struct dev_ident *d;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->d = xrealloc(l->d, l->cap * sizeof(*l->d));
	}
	d = &l->d[l->n++];
	memset(d, 0, sizeof(*d));
	d->type = type;
	snprintf(d->key, sizeof(d->key), "%s", key);
	d->index = d->sub = d->gi = -1;
	return d;
}

void dev_list_free(struct dev_list *l)
{
	if (!l)
		return;
	free(l->d);
	l->d = NULL;
	l->n = l->cap = 0;
}

void pid_list_free(struct pid_list *l)
{
	if (!l)
		return;
	free(l->p);
	l->p = NULL;
	l->n = l->cap = 0;
}

void set_error(json_t *obj, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_set_new(obj, "error", json_string(utf8_sanitize(msg)));
}

void add_error(json_t *obj, const char *fmt, ...)
{
	const char *old = json_string_value(json_object_get(obj, "error"));
	char msg[512];
	int n = old && *old ? snprintf(msg, sizeof(msg), "%s; ", old) : 0;
	va_list ap;

	if (n < 0 || (size_t)n >= sizeof(msg))
		n = (int)sizeof(msg) - 1; /* the old error fills it: the part added is cut */
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	json_object_set_new(obj, "error", json_string(utf8_sanitize(msg)));
}
