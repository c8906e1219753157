/* SPDX-License-Identifier: MIT */
/* The schema tables and their JSON dump; see schema.h. */
#include "schema.h"
#include "samples.h"

#include <string.h>

static const struct {
	const char *name;
	const char *alias;
	enum group_scope scope;
} groups[GROUP_COUNT] = {
#define X(id, name, alias, scope) [GROUP_##id] = { name, alias, scope },
	SCHEMA_GROUPS(X)
#undef X
};

static const char *const scope_names[] = { "system", "runtime", "device" };

const char *const schema_config_aliases[][2] = {
	{ "neuron_runtimes", "runtimes" },
	{ NULL, NULL },
};

const struct schema_label schema_labels[LBL_COUNT] = {
#define X(id, name, kind, source, flags, dim) [LBL_##id] = { name, kind, source, flags, dim },
	SCHEMA_LABELS(X)
#undef X
};

/* Why some fields have no family (docs/report-format.md, "What the sinks export", says the same). */
#define TEXT "text: an identity or description, not a measurement (accelerator_info carries uuid, model and pci_bus_id)"
#define FACT "a fixed fact about the device, not a measurement"
#define RUNNING "a running total: the counter family of the same data carries its increases, which sinks sum"
#define SUM "the sum of fields exported on their own"
#define IDENT                                                                                            \
	"a container's or pod's identity: the labels pod, namespace and container of the per-process, per-pod " \
	"and per-container series"

#define F(g, type, path, kind, why) { GROUP_##g, type, path, kind, why }
const struct schema_field schema_fields[] = {
	/* system and runtime groups (accel-monitor's; neuron-monitor's are mapped as they are, samples.c) */
	F(VCPU_USAGE, NULL, "average_usage.{user,nice,system,io_wait,irq,soft_irq}", NULL, NULL),
	F(VCPU_USAGE, NULL, "average_usage.idle", NULL, "the rest of 100%: system_vcpu_usage_ratio gives user and system"),
	F(VCPU_USAGE, NULL, "usage_data", NULL, NULL),
	F(VCPU_USAGE, NULL, "usage_data.*.*", NULL,
	  "per-CPU detail: neuron-monitor-prometheus.py exports only the average and the count, and so do the sinks"),
	F(VCPU_USAGE, NULL, "context_switch_count", NULL,
	  "neuron-monitor-prometheus.py exports none, and accel-prom serves neuron-monitor's vcpu_usage as it does"),
	F(MEMORY_INFO, NULL, "{memory_total_bytes,memory_used_bytes,swap_total_bytes,swap_used_bytes}", NULL, NULL),
	F(RUNTIME_VCPU_USAGE, NULL, "vcpu_usage.{user,system}", NULL, NULL),
	F(MEMORY_USED, NULL, "runtime_used_bytes.{host,device}", NULL, NULL),
	/* device_info */
	F(DEVICE_INFO, NULL, "serial", "str", TEXT),
	F(DEVICE_INFO, NULL, "driver_version", "str", TEXT),
	F(DEVICE_INFO, NULL, "memory_total_bytes", "int", "the same as device_memory.total_bytes, which is exported"),
	F(DEVICE_INFO, NULL, "power_limit_watts", "real", NULL),
	F(DEVICE_INFO, "nvidia", "nvml_version", "str", TEXT),
	F(DEVICE_INFO, "nvidia", "cuda_driver_version", "str", TEXT),
	F(DEVICE_INFO, "nvidia", "mig_mode", "str", TEXT),
	F(DEVICE_INFO, "nvidia", "profiling_unavailable", "str", "text: why a GPU or MIG instance has no GPM metrics"),
	F(DEVICE_INFO, "amdgpu", "product_number", "str", TEXT),
	F(DEVICE_INFO, "amdgpu", "vbios_version", "str", TEXT),
	F(DEVICE_INFO, "amdgpu", "pci_device_id", "str", TEXT),
	F(DEVICE_INFO, "amdgpu", "card", "str", TEXT),
	F(DEVICE_INFO, "amdgpu", "pcie_link_speed_gts", "num", NULL),
	F(DEVICE_INFO, "amdgpu", "pcie_link_max_speed_gts", "num", NULL),
	F(DEVICE_INFO, "amdgpu", "pcie_link_width", "int", NULL),
	F(DEVICE_INFO, "amdgpu", "pcie_link_max_width", "int", NULL),
	F(DEVICE_INFO, "amdgpu", "performance_level", "str", "a setting's name (power_dpm_force_performance_level): text"),
	F(DEVICE_INFO, "neuron", "core_count", "int", FACT),
	F(DEVICE_INFO, "neuron", "arch_type", "str", TEXT),
	F(DEVICE_INFO, "neuron", "device_name", "str", TEXT),
	F(DEVICE_INFO, "neuron", "device_type", "str", TEXT),
	F(DEVICE_INFO, "neuron", "instance_type", "str", TEXT),
	F(DEVICE_INFO, "neuron", "connected_devices", "ints", FACT),
	F(DEVICE_INFO, "ncs2", "port_path", "str", TEXT),
	F(DEVICE_INFO, "ncs2", "busnum", "int", FACT),
	F(DEVICE_INFO, "ncs2", "devnum", "int", FACT),
	F(DEVICE_INFO, "ncs2", "usb_id", "str", TEXT),
	F(DEVICE_INFO, "ncs2", "booted", "bool", FACT),
	F(DEVICE_INFO, "ncs2", "speed_mbps", "num", FACT),
	F(DEVICE_INFO, "ncs2", "usb_product", "str", TEXT),
	F(DEVICE_INFO, "hwmon", "name", "str", TEXT),
	F(DEVICE_INFO, "hwmon", "device", "str", TEXT),
	F(DEVICE_INFO, "hwmon", "driver", "str", TEXT),
	/* device_utilization */
	F(DEVICE_UTILIZATION, NULL, "core_percent", "pct", NULL),
	F(DEVICE_UTILIZATION, NULL, "memory_bandwidth_percent", "pct", NULL),
	F(DEVICE_UTILIZATION, NULL, "encoder_percent", "pct", NULL),
	F(DEVICE_UTILIZATION, NULL, "decoder_percent", "pct", NULL),
	F(DEVICE_UTILIZATION, NULL, "pcie_tx_bytes_per_second", "int", NULL),
	F(DEVICE_UTILIZATION, NULL, "pcie_rx_bytes_per_second", "int", NULL),
	F(DEVICE_UTILIZATION, "amdgpu", "video_percent", "pct", NULL),
	/* NVIDIA GPM, on GPUs and MIG instances that support it */
	F(DEVICE_UTILIZATION, "nvidia", "graphics_active_percent", "pct", NULL),
	F(DEVICE_UTILIZATION, "nvidia", "sm_active_percent", "pct", NULL),
	F(DEVICE_UTILIZATION, "nvidia", "sm_occupancy_percent", "pct", NULL),
	F(DEVICE_UTILIZATION, "nvidia", "tensor_active_percent", "pct", NULL),
	F(DEVICE_UTILIZATION, "nvidia", "dram_active_percent", "pct", NULL),
	F(DEVICE_UTILIZATION, "nvidia", "fp64_active_percent", "pct", NULL),
	F(DEVICE_UTILIZATION, "nvidia", "fp32_active_percent", "pct", NULL),
	F(DEVICE_UTILIZATION, "nvidia", "fp16_active_percent", "pct", NULL),
	F(DEVICE_UTILIZATION, "nvidia", "nvlink_tx_bytes_per_second", "int", NULL),
	F(DEVICE_UTILIZATION, "nvidia", "nvlink_rx_bytes_per_second", "int", NULL),
	F(DEVICE_UTILIZATION, "amdgpu", "processes", "engine_pct_by_pid", NULL),
	F(DEVICE_UTILIZATION, "neuron", "neuroncores", "neuroncores_util", NULL),
	F(DEVICE_UTILIZATION, "neuron", "neuroncores.*.{utilization_percent,inferences,flops,model_loads}", NULL, NULL),
	F(DEVICE_UTILIZATION, "neuron", "neuroncores.*.{reset_requests,reset_failures,status}", NULL, NULL),
	F(DEVICE_UTILIZATION, "neuron", "neuroncores.*.status_total", NULL, RUNNING),
	F(DEVICE_UTILIZATION, "ncs2", "available", "bool", "a stick's own flag; ncs2_num_available_devices counts them"),
	F(DEVICE_UTILIZATION, "ncs2", "pids", "ints", "process ids: identities, not measurements"),
	/* device_memory */
	F(DEVICE_MEMORY, NULL, "total_bytes", "int", NULL),
	F(DEVICE_MEMORY, NULL, "used_bytes", "int", NULL),
	F(DEVICE_MEMORY, NULL, "free_bytes", "int", NULL),
	F(DEVICE_MEMORY, NULL, "reserved_bytes", "int", NULL),
	F(DEVICE_MEMORY, NULL, "processes", "procs", NULL),
	F(DEVICE_MEMORY, "nvidia", "mig_devices", "mig_devices", NULL),
	F(DEVICE_MEMORY, "nvidia", "mig_devices.*.{total_bytes,used_bytes,free_bytes}", NULL, NULL),
	F(DEVICE_MEMORY, "nvidia", "mig_devices.*.{uuid,gpu_instance_id,compute_instance_id}", NULL,
	  "the MIG device's identity; its memory families are labelled by its index (mig_device)"),
	F(DEVICE_MEMORY, "amdgpu", "gtt_total_bytes", "int", NULL),
	F(DEVICE_MEMORY, "amdgpu", "gtt_used_bytes", "int", NULL),
	F(DEVICE_MEMORY, "amdgpu", "visible_total_bytes", "int", NULL),
	F(DEVICE_MEMORY, "amdgpu", "visible_used_bytes", "int", NULL),
	F(DEVICE_MEMORY, "neuron", "neuroncores", "int_map_by_core", NULL),
	F(DEVICE_MEMORY, "neuron", "host_bytes", "int_map", NULL),
	F(DEVICE_MEMORY, "neuron", "host_used_bytes", "int", SUM " (host_bytes, by category)"),
	/* device_thermal */
	F(DEVICE_THERMAL, NULL, "temperatures_celsius", "temps", NULL),
	F(DEVICE_THERMAL, NULL, "fan_percent", "pct", NULL),
	F(DEVICE_THERMAL, NULL, "throttle_reasons", "reasons",
	  "a list of reason names: text, not a measurement (clock_event_reasons carries the same, exported)"),
	F(DEVICE_THERMAL, "amdgpu", "fan_rpm", "num_map", NULL),
	F(DEVICE_THERMAL, "hwmon", "fan_rpm", "num_map", NULL),
	F(DEVICE_THERMAL, "amdgpu", "temperatures_crit_celsius", "num_map", NULL),
	F(DEVICE_THERMAL, "hwmon", "temperatures_crit_celsius", "num_map", NULL),
	F(DEVICE_THERMAL, "hwmon", "temperatures_max_celsius", "num_map", NULL),
	F(DEVICE_THERMAL, "hwmon", "alarms", "int_map", NULL),
	F(DEVICE_THERMAL, "ncs2", "temperature_source", "str", TEXT),
	F(DEVICE_THERMAL, "ncs2", "temperature_age_seconds", "num",
	  "how old the application's reading is: about the reading, not the stick"),
	/* device_power */
	F(DEVICE_POWER, NULL, "power_watts", "real", NULL),
	F(DEVICE_POWER, NULL, "energy_joules", "real", NULL),
	F(DEVICE_POWER, NULL, "energy_total_joules", "real", NULL),
	F(DEVICE_POWER, "neuron", "power_percent", "pct", NULL),
	F(DEVICE_POWER, "hwmon", "power_sensors_watts", "num_map", NULL),
	F(DEVICE_POWER, "amdgpu", "voltages_volts", "num_map", NULL),
	F(DEVICE_POWER, "hwmon", "voltages_volts", "num_map", NULL),
	/* device_clocks */
	F(DEVICE_CLOCKS, NULL, "clocks_mhz", "clocks", NULL),
	/* device_errors */
	F(DEVICE_ERRORS, NULL, "ecc_errors", "ecc", NULL),
	F(DEVICE_ERRORS, NULL, "ecc_corrected_volatile_total", "int", RUNNING),
	F(DEVICE_ERRORS, NULL, "ecc_uncorrected_volatile_total", "int", RUNNING),
	F(DEVICE_ERRORS, NULL, "ecc_corrected_aggregate_total", "int", RUNNING),
	F(DEVICE_ERRORS, NULL, "ecc_uncorrected_aggregate_total", "int", RUNNING),
	F(DEVICE_ERRORS, NULL, "pcie_replays", "int", NULL),
	F(DEVICE_ERRORS, NULL, "pcie_replays_total", "int", RUNNING),
	F(DEVICE_ERRORS, NULL, "last_xid", "int", NULL),
	F(DEVICE_ERRORS, NULL, "retired_pages", "retired", NULL),
	F(DEVICE_ERRORS, NULL, "retired_pages.{total,pending}", NULL, NULL),
	F(DEVICE_ERRORS, NULL, "retired_pages.{single_bit,double_bit}", NULL,
	  SUM ": accelerator_retired_pages is their total"),
	F(DEVICE_ERRORS, NULL, "remapped_rows", "remapped", NULL),
	F(DEVICE_ERRORS, NULL, "remapped_rows.{correctable,uncorrectable,pending,failed}", NULL, NULL),
	F(DEVICE_ERRORS, "neuron", "ecc_events", "int_map", NULL),
	F(DEVICE_ERRORS, "neuron", "ecc_events_total", "int_map", RUNNING),
	F(DEVICE_ERRORS, "amdgpu", "pcie_aer_errors", "int_map", NULL),
	F(DEVICE_ERRORS, "amdgpu", "pcie_aer_errors_total", "int_map", RUNNING),
	/* containers: per-process figures attributed to containers and pods (monitor/host/container.c) */
	F(DEVICE_MEMORY, NULL, "process_containers", "process_containers", IDENT),
	F(DEVICE_MEMORY, NULL, "pods", "pod_memory", NULL),
	F(DEVICE_MEMORY, NULL, "pods.*.memory_bytes", NULL, NULL),
	F(DEVICE_MEMORY, NULL, "pods.*.{pod,namespace,qos,pids}", NULL, IDENT),
	F(DEVICE_MEMORY, NULL, "containers", "container_memory", NULL),
	F(DEVICE_MEMORY, NULL, "containers.*.memory_bytes", NULL, NULL),
	F(DEVICE_MEMORY, NULL, "containers.*.{runtime,pod_uid,pod,namespace,name,pids}", NULL, IDENT),
	F(DEVICE_UTILIZATION, NULL, "process_containers", "process_containers", IDENT),
	F(DEVICE_UTILIZATION, NULL, "pods", "pod_engines", NULL),
	F(DEVICE_UTILIZATION, NULL, "pods.*.engines", NULL, NULL),
	F(DEVICE_UTILIZATION, NULL, "pods.*.{pod,namespace,qos,pids}", NULL, IDENT),
	F(DEVICE_UTILIZATION, NULL, "containers", "container_engines", NULL),
	F(DEVICE_UTILIZATION, NULL, "containers.*.engines", NULL, NULL),
	F(DEVICE_UTILIZATION, NULL, "containers.*.{runtime,pod_uid,pod,namespace,name,pids}", NULL, IDENT),
	/* NVIDIA events, NVLink and clock-event reasons (docs/nvidia.md) */
	F(DEVICE_THERMAL, "nvidia", "clock_event_reasons", "int_map", NULL),
	F(DEVICE_THERMAL, "nvidia", "clock_event_reasons_mask", "int", NULL),
	F(DEVICE_UTILIZATION, "nvidia", "nvlink", "nvlink", NULL),
	F(DEVICE_UTILIZATION, "nvidia", "nvlink.*.{active,tx_bytes_per_second,rx_bytes_per_second}", NULL, NULL),
	F(DEVICE_ERRORS, "nvidia", "nvlink_errors", "nvlink_errors", NULL),
	F(DEVICE_ERRORS, "nvidia", "nvlink_errors.*.{replay,recovery,crc_flit,crc_data}", NULL, NULL),
	F(DEVICE_ERRORS, "nvidia", "xid_errors", "int_map", NULL),
	F(DEVICE_ERRORS, "nvidia", "last_xid_time", "str",
	  "a time as text: accelerator_xid_errors_total's increase marks it in the series"),
	F(DEVICE_ERRORS, "nvidia", "xid_events", "xid_events",
	  "each XID with its time, for readers of the stream: xid_errors counts them, exported"),
	F(DEVICE_ERRORS, "nvidia", "events", "int_map", NULL),
};
#undef F
const size_t schema_nfields = sizeof(schema_fields) / sizeof(schema_fields[0]);

const char *group_name(enum group_id id)
{
	return groups[id].name;
}

const char *group_alias(enum group_id id)
{
	return groups[id].alias;
}

enum group_scope group_scope(enum group_id id)
{
	return groups[id].scope;
}

const char *scope_name(enum group_scope scope)
{
	return scope_names[scope];
}

int schema_group_lookup(const char *name, enum group_scope scope)
{
	for (int i = 0; i < GROUP_COUNT; i++)
		if (groups[i].scope == scope &&
		    (!strcmp(groups[i].name, name) || (groups[i].alias && !strcmp(groups[i].alias, name))))
			return i;
	return -1;
}

const struct schema_label *schema_label(const char *name)
{
	for (size_t i = 0; i < LBL_COUNT; i++)
		if (!strcmp(schema_labels[i].name, name))
			return &schema_labels[i];
	return NULL;
}

json_t *schema_dump_json(void)
{
	static const char *const kinds[] = { "instance", "runtime", "device", "value" };
	json_t *o = json_object(), *g = json_array(), *a = json_object(), *l = json_array(), *fl = json_array(), *m;

	for (int i = 0; i < GROUP_COUNT; i++)
		json_array_append_new(g, json_pack("{s:s, s:s?, s:s}", "name", groups[i].name, "alias", groups[i].alias,
						   "scope", scope_names[groups[i].scope]));
	for (size_t i = 0; schema_config_aliases[i][0]; i++)
		json_object_set_new(a, schema_config_aliases[i][0], json_string(schema_config_aliases[i][1]));
	for (size_t i = 0; i < LBL_COUNT; i++) {
		const struct schema_label *x = &schema_labels[i];

		json_array_append_new(l, json_pack("{s:s, s:s, s:s?, s:b, s:b, s:s}", "name", x->name, "kind",
						   kinds[x->kind], "source", x->source, "csv_column",
						   !!(x->flags & LABEL_CSV_COLUMN), "optional", !!(x->flags & LABEL_OPTIONAL),
						   "cloudwatch_dimension", x->cw_dim));
	}
	for (size_t i = 0; i < schema_nfields; i++) {
		const struct schema_field *x = &schema_fields[i];

		json_array_append_new(fl, json_pack("{s:s, s:s?, s:s, s:s?, s:s?}", "group", groups[x->group].name,
						    "device_type", x->device_type, "path", x->path, "kind", x->kind,
						    "not_exported", x->not_exported));
	}
	json_object_set_new(o, "groups", g);
	json_object_set_new(o, "fields", fl);
	json_object_set_new(o, "config_aliases", a);
	json_object_set_new(o, "labels", l);
	m = map_schema_json();
	json_object_update_missing(o, m);
	json_decref(m);
	return o;
}
