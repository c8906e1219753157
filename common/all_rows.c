/* SPDX-License-Identifier: MIT */
/*
 * The rows registry (common/rows.h says what rows are): the rows every
 * vendor shares, block "common", then every collector's block
 * (common/rows/<name>.c). map_rows[] is the order in which the blocks apply.
 *
 * A collector's block is one map_rows[] entry here; test_samples fails when
 * a collector's registry row names a block that map_rows[] lacks, or the
 * other way round.
 */
#include "rows.h"

/* Rows leave trailing fields out (NULL, 0): one row a line or two. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

/* ---- common ---------------------------------------------------------------- */

/* The fields every kind of device may have, and what the host adds to every kind's (containers). */
static const struct map_field common_fields[] = {
	/* device_info */
	FIELD(DEVICE_INFO, NULL, "serial", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, NULL, "driver_version", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, NULL, "memory_total_bytes", "int",
	  "the same as device_memory.total_bytes, which is exported"),
	FIELD(DEVICE_INFO, NULL, "power_limit_watts", "real", NULL),
	/* device_utilization */
	FIELD(DEVICE_UTILIZATION, NULL, "core_percent", "pct", NULL),
	FIELD(DEVICE_UTILIZATION, NULL, "memory_bandwidth_percent", "pct", NULL),
	FIELD(DEVICE_UTILIZATION, NULL, "encoder_percent", "pct", NULL),
	FIELD(DEVICE_UTILIZATION, NULL, "decoder_percent", "pct", NULL),
	FIELD(DEVICE_UTILIZATION, NULL, "pcie_tx_bytes_per_second", "int", NULL),
	FIELD(DEVICE_UTILIZATION, NULL, "pcie_rx_bytes_per_second", "int", NULL),
	/* device_memory */
	FIELD(DEVICE_MEMORY, NULL, "total_bytes", "int", NULL),
	FIELD(DEVICE_MEMORY, NULL, "used_bytes", "int", NULL),
	FIELD(DEVICE_MEMORY, NULL, "free_bytes", "int", NULL),
	FIELD(DEVICE_MEMORY, NULL, "reserved_bytes", "int", NULL),
	FIELD(DEVICE_MEMORY, NULL, "processes", "procs", NULL),
	/* device_thermal */
	FIELD(DEVICE_THERMAL, NULL, "temperatures_celsius", "temps", NULL),
	FIELD(DEVICE_THERMAL, NULL, "fan_percent", "pct", NULL),
	FIELD(DEVICE_THERMAL, NULL, "throttle_reasons", "reasons",
	  "a list of reason names: text, not a measurement (clock_event_reasons carries the same, exported)"),
	/* device_power */
	FIELD(DEVICE_POWER, NULL, "power_watts", "real", NULL),
	FIELD(DEVICE_POWER, NULL, "energy_joules", "real", NULL),
	FIELD(DEVICE_POWER, NULL, "energy_total_joules", "real", NULL),
	/* device_clocks */
	FIELD(DEVICE_CLOCKS, NULL, "clocks_mhz", "clocks", NULL),
	/* device_errors */
	FIELD(DEVICE_ERRORS, NULL, "ecc_errors", "ecc", NULL),
	FIELD(DEVICE_ERRORS, NULL, "ecc_corrected_volatile_total", "int", WHY_RUNNING),
	FIELD(DEVICE_ERRORS, NULL, "ecc_uncorrected_volatile_total", "int", WHY_RUNNING),
	FIELD(DEVICE_ERRORS, NULL, "ecc_corrected_aggregate_total", "int", WHY_RUNNING),
	FIELD(DEVICE_ERRORS, NULL, "ecc_uncorrected_aggregate_total", "int", WHY_RUNNING),
	FIELD(DEVICE_ERRORS, NULL, "pcie_replays", "int", NULL),
	FIELD(DEVICE_ERRORS, NULL, "pcie_replays_total", "int", WHY_RUNNING),
	FIELD(DEVICE_ERRORS, NULL, "last_xid", "int", NULL),
	FIELD(DEVICE_ERRORS, NULL, "retired_pages", "retired", NULL),
	FIELD(DEVICE_ERRORS, NULL, "retired_pages.{total,pending}", NULL, NULL),
	FIELD(DEVICE_ERRORS, NULL, "retired_pages.{single_bit,double_bit}", NULL,
	  WHY_SUM ": accelerator_retired_pages is their total"),
	FIELD(DEVICE_ERRORS, NULL, "remapped_rows", "remapped", NULL),
	FIELD(DEVICE_ERRORS, NULL, "remapped_rows.{correctable,uncorrectable,pending,failed}", NULL, NULL),
	/*
	 * containers: per-process figures attributed to containers and pods (monitor/host/container.c).
	 * The identity fields (process_containers, the sums' names) are format 1's; format 2 writes them
	 * once, in the report's "identities" (docs/report-format.md), and the sinks read either.
	 */
	FIELD(DEVICE_MEMORY, NULL, "process_containers", "process_containers", WHY_IDENT),
	FIELD(DEVICE_MEMORY, NULL, "pods", "pod_memory", NULL),
	FIELD(DEVICE_MEMORY, NULL, "pods.*.memory_bytes", NULL, NULL),
	FIELD(DEVICE_MEMORY, NULL, "pods.*.{pod,namespace,qos,pids}", NULL, WHY_IDENT),
	FIELD(DEVICE_MEMORY, NULL, "containers", "container_memory", NULL),
	FIELD(DEVICE_MEMORY, NULL, "containers.*.memory_bytes", NULL, NULL),
	FIELD(DEVICE_MEMORY, NULL,
	      "containers.*.{runtime,pod_uid,pod,namespace,name,ecs_cluster,ecs_task_id,ecs_task_family,pids}", NULL,
	      WHY_IDENT),
	/* device_power: the period's energy split into idle and the processes' shares (monitor/core/energy.h),
	 * and the shares summed by pod and container */
	FIELD(DEVICE_POWER, NULL, "idle_power_watts", "real", NULL),
	FIELD(DEVICE_POWER, NULL, "idle_energy_joules", "real", NULL),
	FIELD(DEVICE_POWER, NULL, "active_energy_joules", "real", NULL),
	FIELD(DEVICE_POWER, NULL, "energy_attribution", "str",
	  "text: what shared the active energy (utilization, memory or equal)"),
	FIELD(DEVICE_POWER, NULL, "processes", "num_map", NULL),
	FIELD(DEVICE_POWER, NULL, "process_containers", "process_containers", WHY_IDENT),
	FIELD(DEVICE_POWER, NULL, "pods", "pod_energy", NULL),
	FIELD(DEVICE_POWER, NULL, "pods.*.energy_joules", NULL, NULL),
	FIELD(DEVICE_POWER, NULL, "pods.*.{pod,namespace,qos,pids}", NULL, WHY_IDENT),
	FIELD(DEVICE_POWER, NULL, "containers", "container_energy", NULL),
	FIELD(DEVICE_POWER, NULL, "containers.*.energy_joules", NULL, NULL),
	FIELD(DEVICE_POWER, NULL,
	      "containers.*.{runtime,pod_uid,pod,namespace,name,ecs_cluster,ecs_task_id,ecs_task_family,pids}", NULL,
	      WHY_IDENT),
	FIELD(DEVICE_UTILIZATION, NULL, "process_containers", "process_containers", WHY_IDENT),
	FIELD(DEVICE_UTILIZATION, NULL, "pods", "pod_engines", NULL),
	FIELD(DEVICE_UTILIZATION, NULL, "pods.*.engines", NULL, NULL),
	FIELD(DEVICE_UTILIZATION, NULL, "pods.*.{pod,namespace,qos,pids}", NULL, WHY_IDENT),
	FIELD(DEVICE_UTILIZATION, NULL, "containers", "container_engines", NULL),
	FIELD(DEVICE_UTILIZATION, NULL, "containers.*.engines", NULL, NULL),
	FIELD(DEVICE_UTILIZATION, NULL,
	      "containers.*.{runtime,pod_uid,pod,namespace,name,ecs_cluster,ecs_task_id,ecs_task_family,pids}", NULL,
	      WHY_IDENT),
};

static const struct family common_families[] = {
	/* neuron-monitor's runtime groups (also fed by the neuron collector and endpoint runtimes) */
	GAUGE("neuroncore_utilization_ratio", "NeuronCore utilization ratio", "ratio"),
	GAUGE("neuron_runtime_vcpu_usage_ratio", "Runtime vCPU utilization ratio", "ratio"),
	GAUGE("neuron_runtime_memory_used_bytes", "Runtime memory used bytes", "bytes"),
	GAUGE("neuroncore_memory_usage_constants", "NeuronCore memory utilization for constants", "bytes"),
	GAUGE("neuroncore_memory_usage_model_code", "NeuronCore memory utilization for model_code", "bytes"),
	GAUGE("neuroncore_memory_usage_model_shared_scratchpad",
	      "NeuronCore memory utilization for model_shared_scratchpad", "bytes"),
	GAUGE("neuroncore_memory_usage_runtime_memory", "NeuronCore memory utilization for runtime_memory", "bytes"),
	GAUGE("neuroncore_memory_usage_tensors", "NeuronCore memory utilization for tensors", "bytes"),
	COUNTER("execution_errors_total", "Execution errors total", "count"),
	COUNTER("execution_status_total", "Execution status total", "count"),
	GAUGE("execution_latency_seconds", "Execution latency in seconds", "seconds"),
	COUNTER("hardware_ecc_events_total", "Hardware ecc events total", "count"),
	/* the mapper's own: instance_info, neuron_hardware_info and the allocations, gauges of 1 carrying labels */
	GAUGE("instance_info", "EC2 instance information", ""),
	GAUGE("neuron_hardware_info", "Neuron Hardware Information", ""),
	GAUGE("accelerator_allocation_info",
	      "An owner of the accelerator (a container given it by a device plugin or DRA claim, an HPC job), 1", ""),
	/* the producer's self-timing (report.monitor.collectors), as node_exporter's node_scrape_collector_* */
	GAUGE("accel_monitor_collector_duration_seconds",
	      "Wall time the collector took for the group in the last cycle, seconds", "seconds"),
	GAUGE("accel_monitor_collector_cpu_seconds",
	      "CPU time (the producer's thread) the collector took for the group in the last cycle, seconds", "seconds"),
	GAUGE("accel_monitor_collector_success", "1 when the collector's group had no error in the last cycle", ""),
	/* devices, vendor-neutral, base units */
	GAUGE("accelerator_info", "Accelerator device identity (value 1)", ""),
	GAUGE("accelerator_utilization_ratio", "Accelerator engine busy time over the period, as a ratio", "ratio"),
	GAUGE("accelerator_memory_total_bytes", "Accelerator device memory total bytes", "bytes"),
	GAUGE("accelerator_memory_used_bytes", "Accelerator device memory used bytes", "bytes"),
	GAUGE("accelerator_memory_free_bytes", "Accelerator device memory free bytes", "bytes"),
	GAUGE("accelerator_process_memory_used_bytes", "Accelerator device memory used by a process, bytes", "bytes"),
	GAUGE("accelerator_temperature_celsius", "Accelerator temperature by sensor, degrees Celsius", "celsius"),
	GAUGE("accelerator_fan_speed_ratio", "Accelerator fan speed as a ratio of its maximum", "ratio"),
	GAUGE("accelerator_power_watts", "Accelerator power draw, watts", "watts"),
	GAUGE("accelerator_power_limit_watts", "Accelerator power limit, watts", "watts"),
	COUNTER("accelerator_energy_joules_total", "Accelerator energy consumed, joules", "joules"),
	GAUGE("accelerator_clock_hertz", "Accelerator clock frequency by clock domain, hertz", "hertz"),
	COUNTER("accelerator_ecc_errors_total", "Accelerator memory ECC errors by type", "count"),
	COUNTER("accelerator_pcie_replays_total", "Accelerator PCIe replay events", "count"),
	GAUGE("accelerator_fan_speed_rpm", "Accelerator or board fan speed, revolutions per minute", "rpm"),
	GAUGE("accelerator_retired_pages", "Accelerator memory pages retired for errors", "count"),
	/* fields that were read but not exported before (docs/report-format.md, "Devices") */
	GAUGE("accelerator_memory_reserved_bytes", "Accelerator device memory reserved by the driver, bytes", "bytes"),
	GAUGE("accelerator_last_xid", "The last XID error code the device reported since the monitor started", ""),
	GAUGE("accelerator_pcie_throughput_bytes_per_second",
	      "Accelerator PCIe throughput by direction (the device's own short sample), bytes per second",
	      "bytes_per_second"),
	GAUGE("accelerator_remapped_rows", "Accelerator memory rows remapped, by type (the device's total)", "count"),
	GAUGE("accelerator_row_remap_failed", "1 when an accelerator memory row remapping failed", ""),
	GAUGE("accelerator_row_remap_pending", "1 when an accelerator memory row remapping awaits a reset", ""),
	GAUGE("accelerator_retired_pages_pending", "1 when accelerator memory pages await retirement", ""),
	GAUGE("accelerator_energy_consumed_joules",
	      "Accelerator energy consumed since the driver loaded (the device's own total), joules", "joules"),
	/* sysfs fields of more than one kind (hwmon, amdgpu: docs/devices.md) */
	GAUGE("accelerator_temperature_critical_celsius",
	      "Accelerator or chip critical temperature threshold by sensor, degrees Celsius", "celsius"),
	GAUGE("accelerator_voltage_volts", "Accelerator or chip voltage by sensor, volts", "volts"),
	/* containers: per-process device figures summed by pod and by container (docs/report-format.md) */
	GAUGE("accelerator_pod_memory_used_bytes",
	      "Accelerator device memory used by a pod's processes, bytes", "bytes"),
	GAUGE("accelerator_container_memory_used_bytes",
	      "Accelerator device memory used by a container's processes, bytes", "bytes"),
	GAUGE("accelerator_pod_utilization_ratio",
	      "Accelerator engine busy time of a pod's processes over the period, as a ratio", "ratio"),
	GAUGE("accelerator_container_utilization_ratio",
	      "Accelerator engine busy time of a container's processes over the period, as a ratio", "ratio"),
	/* energy: a device's energy split into idle and the processes' shares, summed by pod and container */
	GAUGE("accelerator_idle_power_watts",
	      "Accelerator idle power the energy split uses (the lowest power seen), watts", "watts"),
	COUNTER("accelerator_idle_energy_joules_total",
		"Accelerator energy at idle power (nobody's share), joules", "joules"),
	COUNTER("accelerator_active_energy_joules_total",
		"Accelerator energy above idle power (shared by its processes), joules", "joules"),
	COUNTER("accelerator_process_energy_joules_total",
		"Accelerator energy above idle attributed to a process, joules", "joules"),
	COUNTER("accelerator_pod_energy_joules_total",
		"Accelerator energy above idle attributed to a pod's processes, joules", "joules"),
	COUNTER("accelerator_container_energy_joules_total",
		"Accelerator energy above idle attributed to a container's processes, joules", "joules"),
};

/* neuron-monitor's memory_used: one NeuronCore's memory by category. */
#define NC_MEM(key, family)                                                                               \
	{ SC_RUNTIME, "memory_used", "neuron_runtime_used_bytes.usage_breakdown.neuroncore_memory_usage.*." key, \
	  family, "neuroncore", "memory_location=None", 0, 0 }

static const struct map_rule common_rules[] = {
	/* neuron-monitor's runtime groups (2.x and 2020) */
	{ SC_RUNTIME, "neuroncore_counters", "neuroncores_in_use.*.neuroncore_utilization",
	  "neuroncore_utilization_ratio", "neuroncore", NULL, PERCENT, 0 },
	{ SC_RUNTIME, "neuron_runtime_vcpu_usage", "vcpu_usage.{user,system}", "neuron_runtime_vcpu_usage_ratio",
	  "usage_type", NULL, PERCENT, 0 },
	{ SC_RUNTIME, "memory_used", "neuron_runtime_used_bytes.{host,neuron_device}",
	  "neuron_runtime_memory_used_bytes", "memory_location", NULL, 0, 0 },
	NC_MEM("constants", "neuroncore_memory_usage_constants"),
	NC_MEM("model_code", "neuroncore_memory_usage_model_code"),
	NC_MEM("model_shared_scratchpad", "neuroncore_memory_usage_model_shared_scratchpad"),
	NC_MEM("runtime_memory", "neuroncore_memory_usage_runtime_memory"),
	NC_MEM("tensors", "neuroncore_memory_usage_tensors"),
	/* runtime-level sums: the only figures of neuron-monitor's and of a server that names no model */
	{ SC_RUNTIME, "execution_stats", "error_summary.*", "execution_errors_total", "error_type", NULL, 0, 0,
	  .unless = "models" },
	{ SC_RUNTIME, "execution_stats", "execution_summary.*", "execution_status_total", "status_type", NULL, 0, 0,
	  .unless = "models" },
	/* the runtime's merged request-latency distribution (every model's buckets summed by bound): percentiles
	 * add up to nothing, so they stay next to the models' (no model label) */
	{ SC_RUNTIME, "execution_stats", "latency_stats.total_latency.*", "execution_latency_seconds", "percentile",
	  NULL, 0, 0 },
	{ SC_RUNTIME, "inference_stats", "error_summary.*", "execution_errors_total", "error_type", NULL, 0, 0 },
	{ SC_RUNTIME, "inference_stats", "inference_summary.*", "execution_status_total", "status_type", NULL, 0, 0 },
	{ SC_RUNTIME, "inference_stats", "latency_stats.total_latency.*", "execution_latency_seconds", "percentile",
	  NULL, 0, 0 },
	{ SC_RUNTIME, "hw_counters",
	  "neuron_devices[neuron_device_index].{mem_ecc_corrected,mem_ecc_uncorrected,sram_ecc_corrected,"
	  "sram_ecc_uncorrected}",
	  "hardware_ecc_events_total", "neuron_device_index,event_type", NULL, 0, 0 },
	/* device groups, every vendor (docs/report-format.md, "Devices") */
	{ SC_DEVICE, "device_info", "1", "accelerator_info", "", NULL, 0, 0 },
	{ SC_DEVICE, "device_info", "power_limit_watts", "accelerator_power_limit_watts", "", NULL, 0, 0 },
	{ SC_DEVICE, "device_utilization", "core_percent", "accelerator_utilization_ratio", "", "engine=core", PERCENT,
	  0 },
	{ SC_DEVICE, "device_utilization", "memory_bandwidth_percent", "accelerator_utilization_ratio", "",
	  "engine=memory_bandwidth", PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "encoder_percent", "accelerator_utilization_ratio", "", "engine=encoder",
	  PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "decoder_percent", "accelerator_utilization_ratio", "", "engine=decoder",
	  PERCENT, 0 },
	{ SC_DEVICE, "device_memory", "total_bytes", "accelerator_memory_total_bytes", "", NULL, 0, 0 },
	{ SC_DEVICE, "device_memory", "used_bytes", "accelerator_memory_used_bytes", "", NULL, 0, 0 },
	{ SC_DEVICE, "device_memory", "free_bytes", "accelerator_memory_free_bytes", "", NULL, 0, 0 },
	{ SC_DEVICE, "device_memory", "processes.*", "accelerator_process_memory_used_bytes", "pid", NULL, 0, 0 },
	{ SC_DEVICE, "device_thermal", "temperatures_celsius.*", "accelerator_temperature_celsius", "sensor", NULL, 0,
	  0 },
	{ SC_DEVICE, "device_thermal", "fan_percent", "accelerator_fan_speed_ratio", "", NULL, PERCENT, 0 },
	{ SC_DEVICE, "device_power", "power_watts", "accelerator_power_watts", "", NULL, 0, 0 },
	{ SC_DEVICE, "device_power", "energy_joules", "accelerator_energy_joules_total", "", NULL, 0, 0 },
	{ SC_DEVICE, "device_clocks", "clocks_mhz.*", "accelerator_clock_hertz", "clock", NULL, 1e6, 0 },
	{ SC_DEVICE, "device_errors", "ecc_errors.*", "accelerator_ecc_errors_total", "type", NULL, 0, 0 },
	{ SC_DEVICE, "device_errors", "pcie_replays", "accelerator_pcie_replays_total", "", NULL, 0, 0 },
	/* device fields more than one kind may have (docs/devices.md) */
	{ SC_DEVICE, "device_thermal", "fan_rpm.*", "accelerator_fan_speed_rpm", "fan", NULL, 0, 0 },
	{ SC_DEVICE, "device_errors", "retired_pages.total", "accelerator_retired_pages", "", NULL, 0, 0 },
	/* read but never exported before: docs/report-format.md, "Devices" */
	{ SC_DEVICE, "device_memory", "reserved_bytes", "accelerator_memory_reserved_bytes", "", NULL, 0, 0 },
	{ SC_DEVICE, "device_errors", "last_xid", "accelerator_last_xid", "", NULL, 0, 0 },
	{ SC_DEVICE, "device_utilization", "pcie_tx_bytes_per_second", "accelerator_pcie_throughput_bytes_per_second",
	  "", "direction=tx", 0, 0 },
	{ SC_DEVICE, "device_utilization", "pcie_rx_bytes_per_second", "accelerator_pcie_throughput_bytes_per_second",
	  "", "direction=rx", 0, 0 },
	{ SC_DEVICE, "device_errors", "remapped_rows.{correctable,uncorrectable}", "accelerator_remapped_rows", "type",
	  NULL, 0, 0 },
	{ SC_DEVICE, "device_errors", "remapped_rows.failed", "accelerator_row_remap_failed", "", NULL, BOOLEAN, 0 },
	{ SC_DEVICE, "device_errors", "remapped_rows.pending", "accelerator_row_remap_pending", "", NULL, BOOLEAN, 0 },
	{ SC_DEVICE, "device_errors", "retired_pages.pending", "accelerator_retired_pages_pending", "", NULL, BOOLEAN,
	  0 },
	{ SC_DEVICE, "device_power", "energy_total_joules", "accelerator_energy_consumed_joules", "", NULL, 0, 0 },
	/* sysfs fields of hwmon and amdgpu (docs/devices.md) */
	{ SC_DEVICE, "device_thermal", "temperatures_crit_celsius.*", "accelerator_temperature_critical_celsius",
	  "sensor", NULL, 0, 0 },
	{ SC_DEVICE, "device_power", "voltages_volts.*", "accelerator_voltage_volts", "sensor", NULL, 0, 0 },
	/* containers: per-process figures by pod and by container (monitor/host/container.c) */
	{ SC_DEVICE, "device_memory", "pods.*.memory_bytes", "accelerator_pod_memory_used_bytes", "", NULL, 0, 0, NULL,
	  NULL, IDENT_POD },
	{ SC_DEVICE, "device_memory", "containers.*.memory_bytes", "accelerator_container_memory_used_bytes", "", NULL,
	  0, 0, NULL, NULL, IDENT_CONTAINER },
	{ SC_DEVICE, "device_utilization", "pods.*.engines.*", "accelerator_pod_utilization_ratio", "engine", NULL,
	  PERCENT, 0, NULL, NULL, IDENT_POD },
	{ SC_DEVICE, "device_utilization", "containers.*.engines.*", "accelerator_container_utilization_ratio",
	  "engine", NULL, PERCENT, 0, NULL, NULL, IDENT_CONTAINER },
	/* energy: the split of a device's period energy (monitor/core/energy.h), by process, pod and container */
	{ SC_DEVICE, "device_power", "idle_power_watts", "accelerator_idle_power_watts", "", NULL, 0, 0 },
	{ SC_DEVICE, "device_power", "idle_energy_joules", "accelerator_idle_energy_joules_total", "", NULL, 0, 0 },
	{ SC_DEVICE, "device_power", "active_energy_joules", "accelerator_active_energy_joules_total", "", NULL, 0,
	  0 },
	{ SC_DEVICE, "device_power", "processes.*", "accelerator_process_energy_joules_total", "pid", NULL, 0, 0 },
	{ SC_DEVICE, "device_power", "pods.*.energy_joules", "accelerator_pod_energy_joules_total", "", NULL, 0, 0,
	  NULL, NULL, IDENT_POD },
	{ SC_DEVICE, "device_power", "containers.*.energy_joules", "accelerator_container_energy_joules_total", "",
	  NULL, 0, 0, NULL, NULL, IDENT_CONTAINER },
	/* the producer's self-timing: report.monitor.collectors.<collector>.<group> */
	{ SC_MONITOR, "monitor", "collectors.*.*.seconds", "accel_monitor_collector_duration_seconds",
	  "collector,group", NULL, 0, 0 },
	{ SC_MONITOR, "monitor", "collectors.*.*.cpu_seconds", "accel_monitor_collector_cpu_seconds",
	  "collector,group", NULL, 0, 0 },
	{ SC_MONITOR, "monitor", "collectors.*.*.success", "accel_monitor_collector_success", "collector,group",
	  NULL, BOOLEAN, 0 },
};
#undef NC_MEM

static const struct map_rows common_rows = {
	"common", __FILE__, ROWS_FIELDS(common_fields), ROWS_FAMILIES(common_families), ROWS_RULES(common_rules),
};

#pragma GCC diagnostic pop

/*
 * containers: the labels an identity gives (rows.h): its pod (else the pod's
 * UID), namespace, container (else its id; none on a pod's sums), an ECS
 * task's cluster, family and id, and a Slurm job's id, step and user id
 * (dcgm-exporter's hpc_job; none of these on a pod's sums).
 */
const struct ident_label ident_label_rows[] = {
	{ "pod", "pod", IDENT_POD, "pod_uid", IDENT_NONE },
	{ "namespace", "namespace", IDENT_NONE, NULL, IDENT_NONE },
	{ "container", "name", IDENT_CONTAINER, "id", IDENT_POD },
	{ "ecs_cluster", "ecs_cluster", IDENT_NONE, NULL, IDENT_POD },
	{ "ecs_task_family", "ecs_task_family", IDENT_NONE, NULL, IDENT_POD },
	{ "ecs_task_id", "ecs_task_id", IDENT_NONE, NULL, IDENT_POD },
	{ "hpc_job", "hpc_job", IDENT_NONE, NULL, IDENT_POD },
	{ "hpc_step", "hpc_step", IDENT_NONE, NULL, IDENT_POD },
	{ "hpc_uid", "hpc_uid", IDENT_NONE, NULL, IDENT_POD },
};
const size_t ident_label_count = ARRAY_SIZE(ident_label_rows);
_Static_assert(ARRAY_SIZE(ident_label_rows) <= IDENT_LABELS_MAX, "IDENT_LABELS_MAX: the rows' count");

const struct map_rows *const map_rows[] = {
	&common_rows, &cpu_rows,    &mem_rows,    &process_rows, &containers_rows, &endpoint_rows,
	&nvidia_rows, &amdgpu_rows, &neuron_rows, &ncs2_rows,    &hwmon_rows,      &powercap_rows, NULL,
};
