/* SPDX-License-Identifier: MIT */
/*
 * The one place collectors are registered. Adding a collector is a new
 * coll_<name>.c with its ops table (coll_<name>_ops) and one row here: the
 * configuration validator takes the device types and runtime address
 * schemes it accepts from these tables.
 */
#include "collector.h"
#include "../../common/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/*
 * The registry: one row per collector, naming its ops table coll_<row>_ops
 * (declared here, so the row is all a new collector needs).
 */
#define GROUP_COLLECTORS(X) X(cpu) X(mem) X(neuron_hw) X(containers)
#define RUNTIME_COLLECTORS(X) X(pid) X(process) X(endpoint)
/* Probed in this order by "auto". */
#define DEVICE_COLLECTORS(X) X(nvidia) X(amdgpu) X(neuron) X(ncs2) X(hwmon)

/* Runtime address schemes accepted without a collector: neuron-monitor's socket. */
static const char *const unpolled_schemes[] = { "unix", NULL };

#define DECLARE_GROUP(n) extern const struct group_ops coll_##n##_ops;
#define DECLARE_RUNTIME(n) extern const struct runtime_ops coll_##n##_ops;
#define DECLARE_DEVICE(n) extern const struct device_ops coll_##n##_ops;
#define ENTRY(n) &coll_##n##_ops,
GROUP_COLLECTORS(DECLARE_GROUP)
RUNTIME_COLLECTORS(DECLARE_RUNTIME)
DEVICE_COLLECTORS(DECLARE_DEVICE)

static const struct group_ops *const group_collectors[] = { GROUP_COLLECTORS(ENTRY) NULL };
static const struct runtime_ops *const runtime_collectors[] = { RUNTIME_COLLECTORS(ENTRY) NULL };
static const struct device_ops *const device_collectors[] = { DEVICE_COLLECTORS(ENTRY) NULL };

const struct group_ops *group_ops_find(enum group_id id)
{
	for (size_t i = 0; group_collectors[i]; i++)
		if (group_collectors[i]->id == id)
			return group_collectors[i];
	return NULL;
}

const struct runtime_ops *runtime_ops_find(enum runtime_kind kind)
{
	for (size_t i = 0; runtime_collectors[i]; i++)
		if (runtime_collectors[i]->kind == kind)
			return runtime_collectors[i];
	return NULL;
}

const struct runtime_ops *runtime_ops_scheme(const char *scheme)
{
	for (size_t i = 0; runtime_collectors[i]; i++)
		if (!strcmp(runtime_collectors[i]->scheme, scheme) ||
		    (runtime_collectors[i]->scheme2 && !strcmp(runtime_collectors[i]->scheme2, scheme)))
			return runtime_collectors[i];
	return NULL;
}

const struct runtime_ops *const *runtime_ops_all(void)
{
	return runtime_collectors;
}

const char *const *runtime_schemes_unpolled(void)
{
	return unpolled_schemes;
}

const struct device_ops *device_ops_find(const char *type)
{
	for (size_t i = 0; device_collectors[i]; i++)
		if (!strcmp(device_collectors[i]->type, type))
			return device_collectors[i];
	return NULL;
}

const struct device_ops *const *device_ops_all(void)
{
	return device_collectors;
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

void set_error(json_t *obj, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_set_new(obj, "error", json_string(utf8_sanitize(msg)));
}
