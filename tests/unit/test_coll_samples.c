/* SPDX-License-Identifier: MIT */
/*
 * The device rows of the report -> samples mapping (common/samples.c) on the
 * sysfs collectors' golden report fragments (tests/fixtures/sysfs/golden):
 * neuron-monitor's and prometheus_ncs2_exporter's family names, rows limited
 * to one kind of device, the device index labelled again, counts on a group,
 * and a device in error yielding nothing.
 */
#include "../../common/samples.h"
#include "../../common/util.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct seen {
	char lines[2048][320]; /* "family{k=v,...} value", labels after the instance's and the device's */
	size_t n;
	int errors;
};

static void on_sample(const struct sample *s, void *ud)
{
	struct seen *z = ud;
	char *l;
	size_t n = 0, first = s->ninstance;

	if (z->n == ARRAY_SIZE(z->lines))
		return;
	l = z->lines[z->n++];
	n += (size_t)snprintf(l + n, 320 - n, "%s{", s->fam->name);
	for (size_t i = first; i < s->nlabels && n < 320; i++)
		n += (size_t)snprintf(l + n, 320 - n, "%s%s=%s", i > first ? "," : "", s->labels[i].name,
				      s->labels[i].value);
	if (n < 320)
		snprintf(l + n, 320 - n, "} %.10g", s->value);
}

static void on_error(const char *group, const char *entity, const char *error, void *ud)
{
	(void)group;
	(void)entity;
	(void)error;
	((struct seen *)ud)->errors++;
}

static int has(const struct seen *z, const char *line)
{
	for (size_t i = 0; i < z->n; i++)
		if (!strcmp(z->lines[i], line))
			return 1;
	return 0;
}

static int count(const struct seen *z, const char *prefix)
{
	int n = 0;

	for (size_t i = 0; i < z->n; i++)
		n += !strncmp(z->lines[i], prefix, strlen(prefix));
	return n;
}

#define HAS(z, line) ok(has(z, line), "%s", line)

/* A report holding the golden device_data entries of the given kinds. */
static json_t *report_of(const char *const *kinds)
{
	json_t *dd = json_array();

	for (; *kinds; kinds++) {
		char path[256];
		json_error_t err;
		json_t *ents;

		snprintf(path, sizeof(path), "tests/fixtures/sysfs/golden/%s.json", *kinds);
		ents = json_load_file(path, 0, &err);
		if (!ents) {
			printf("Bail out! %s: %s\n", path, err.text);
			exit(2);
		}
		json_array_extend(dd, ents);
		json_decref(ents);
	}
	return json_pack("{s:s, s:{s:s, s:i}, s:[], s:o, s:{}, s:{s:s}}", "timestamp", "2026-11-21T05:30:00.000Z",
			 "monitor", "version", "test", "seq", 0, "runtime_data", "device_data", dd, "system_data",
			 "instance_info", "hostname", "h");
}

/* device_data[entry].report.<group>.devices.<dev> of report r (borrowed). */
static json_t *device_of(json_t *r, size_t entry, const char *group, const char *dev)
{
	json_t *e = json_array_get(json_object_get(r, "device_data"), entry);

	return json_object_get(json_object_get(json_object_get(json_object_get(e, "report"), group), "devices"), dev);
}

static struct seen z;

static void map(json_t *r)
{
	struct map_cb cb = { on_sample, on_error, NULL, &z };

	memset(&z, 0, sizeof(z));
	map_report(r, 0, &cb);
}

int main(void)
{
	json_t *r = report_of((const char *const[]){ "amdgpu", "neuron", "ncs2", "hwmon", NULL });
	json_t *ncs2_dev;

	map(r);
	is_int(z.errors, 0, "no group or device in error");
#define D0 "device_type=neuron,device=0,uuid=4d5a6f0123456789,model=Trainium1,pci_bus_id="
	HAS(&z, "accelerator_ecc_events_total{" D0 ",event_type=mem_ecc_repairable_uncorrected} 0");
	HAS(&z, "neuroncore_utilization_ratio{" D0 ",neuroncore=1} 0");
	HAS(&z, "neuroncore_memory_usage_tensors{" D0 ",neuroncore=0,memory_location=None} 134217728");
	HAS(&z, "neuroncore_memory_usage_model_code{" D0 ",neuroncore=1,memory_location=None} 104857600");
	HAS(&z, "accelerator_execution_status_total{" D0 ",neuroncore=0,status=timeout} 0");
	HAS(&z, "accelerator_host_memory_used_bytes{" D0 ",category=dma_buffers} 33554432");
	HAS(&z, "accelerator_memory_used_bytes{" D0 "} 1789931520");
	HAS(&z, "accelerator_power_utilization_ratio{" D0 "} 0.4375");
	is_int(count(&z, "accelerator_ecc_events_total{"), 7, "one ECC family sample per counter of each device");
	is_int(count(&z, "hardware_ecc_events_total{"), 0, "device ECC events are not neuron_hw_counters' family (never counted twice)");
	HAS(&z, "ncs2_num_devices{} 3");
	HAS(&z, "ncs2_num_available_devices{} 2");
	is_int(count(&z, "ncs2_temperature_celsius{"), 0, "no NCS temperature without OpenVINO");
	HAS(&z, "accelerator_retired_pages{device_type=amdgpu,device=1,uuid=2f3a5c0d1b4e6a79,model=AMD Instinct MI210,"
		"pci_bus_id=0000:43:00.0} 2");
	HAS(&z, "accelerator_utilization_ratio{device_type=amdgpu,device=1,uuid=2f3a5c0d1b4e6a79,model=AMD Instinct "
		"MI210,pci_bus_id=0000:43:00.0,engine=video} 0.05");
	HAS(&z, "accelerator_process_memory_used_bytes{device_type=amdgpu,device=0,uuid=,model=AMD GPU 1002:73bf,"
		"pci_bus_id=0000:03:00.0,pid=1000} 65011712");
	HAS(&z, "accelerator_process_utilization_ratio{device_type=amdgpu,device=1,uuid=2f3a5c0d1b4e6a79,model=AMD "
		"Instinct MI210,pci_bus_id=0000:43:00.0,pid=2000,engine=compute} 0");
	HAS(&z, "accelerator_fan_speed_rpm{device_type=hwmon,device=6,uuid=,model=nct6798,pci_bus_id=,fan=fan1} 1104");
	HAS(&z, "accelerator_power_watts{device_type=hwmon,device=4,uuid=,model=power_meter,pci_bus_id=,sensor=power1} "
		"240.5");
	HAS(&z, "accelerator_temperature_celsius{device_type=hwmon,device=0,uuid=,model=coretemp,pci_bus_id=,"
		"sensor=package_id_0} 48");
	is_int(count(&z, "neuroncore_utilization_ratio{device_type=amdgpu"), 0, "neuron rows do not fire on amdgpu");

	/* A temperature on an NCS stick (the day one is known): both families; a stick in error: nothing. */
	ncs2_dev = device_of(r, 2, "device_thermal", "1");
	ok(json_is_object(ncs2_dev), "golden ncs2 entry found");
	json_object_set_new(ncs2_dev, "temperatures_celsius", json_pack("{s:f}", "MYRIAD.2.1-ma2480", 41.5));
	json_object_set_new(device_of(r, 2, "device_info", "0"), "error", json_string("the device disappeared"));
	map(r);
	HAS(&z, "ncs2_temperature_celsius{device_type=ncs2,device=1,uuid=03e72485,model=Intel Neural Compute Stick 2 "
		"(Myriad X),pci_bus_id=,name=MYRIAD.2.1-ma2480} 41.5");
	HAS(&z, "accelerator_temperature_celsius{device_type=ncs2,device=1,uuid=03e72485,model=Intel Neural Compute "
		"Stick 2 (Myriad X),pci_bus_id=,sensor=MYRIAD.2.1-ma2480} 41.5");
	is_int(count(&z, "accelerator_info{device_type=ncs2,device=0,"), 0, "a device in error yields no sample");
	is_int(z.errors, 1, "and is reported as an error");
	json_decref(r);
	return done_testing();
}
