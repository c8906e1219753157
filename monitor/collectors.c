/* SPDX-License-Identifier: MIT */
/*
 * The one place collectors are registered. Adding a collector is a new
 * coll_<name>.c with its ops table and one line here.
 */
#include "collector.h"
#include "../common/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct group_ops *const group_collectors[] = {
	&coll_cpu_ops,
	&coll_mem_ops,
	&coll_neuron_hw_ops,
};

static const struct runtime_ops *const runtime_collectors[] = {
	&coll_pid_ops,
	&coll_process_ops,
};

/* Probed in this order by "auto". */
static const struct device_ops *const device_collectors[] = {
	&coll_nvidia_ops,
	&coll_amdgpu_ops,
	&coll_neuron_ops,
	&coll_ncs2_ops,
	&coll_hwmon_ops,
	NULL,
};

const struct group_ops *group_ops_find(enum group_id id)
{
	for (size_t i = 0; i < sizeof(group_collectors) / sizeof(group_collectors[0]); i++)
		if (group_collectors[i]->id == id)
			return group_collectors[i];
	return NULL;
}

const struct runtime_ops *runtime_ops_find(enum runtime_kind kind)
{
	for (size_t i = 0; i < sizeof(runtime_collectors) / sizeof(runtime_collectors[0]); i++)
		if (runtime_collectors[i]->kind == kind)
			return runtime_collectors[i];
	return NULL;
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
