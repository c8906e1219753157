/* SPDX-License-Identifier: MIT */
/*
 * The report -> samples rule table and its interpreter; see samples.h.
 *
 * A rule's path is a small pattern walked inside one metric group:
 *   name        descend into that key
 *   *           every key of an object (the key becomes a label)
 *   *[f,g]      the same, and the string fields f and g of each member
 *               become labels too (cAdvisor's names); a rule with this
 *               step leaves out every captured label that is empty
 *   [] / [f]    every element of an array (its index, or its field f, becomes a label)
 *   {a,b}       each listed key that is present (the key becomes a label)
 *   {a+b}       the sum of the listed keys (no label)
 *   #           the number of members of the object or array
 *   1           the constant 1 (info families: the labels carry the data)
 * Captured values fill the rule's label names in order. A null value is
 * "not measured" and yields nothing; any other non-number is a bad value.
 */
#include "samples.h"
#include "log.h"
#include "schema.h"
#include "timeutil.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const report_format_names[3] = { "accel-monitor", "neuron-monitor 2.x", "neuron-monitor 2020" };

/* ---- families ------------------------------------------------------------ */

#define GAUGE(id, name, help, unit) static const struct family id = { name, help, METRIC_GAUGE, unit }
#define COUNTER(id, name, help, unit) static const struct family id = { name, help, METRIC_COUNTER, unit }

GAUGE(F_NC_UTIL, "neuroncore_utilization_ratio", "NeuronCore utilization ratio", "ratio");
GAUGE(F_NRT_VCPU, "neuron_runtime_vcpu_usage_ratio", "Runtime vCPU utilization ratio", "ratio");
GAUGE(F_NRT_MEM, "neuron_runtime_memory_used_bytes", "Runtime memory used bytes", "bytes");
GAUGE(F_NC_MEM_CONST, "neuroncore_memory_usage_constants", "NeuronCore memory utilization for constants", "bytes");
GAUGE(F_NC_MEM_CODE, "neuroncore_memory_usage_model_code", "NeuronCore memory utilization for model_code", "bytes");
GAUGE(F_NC_MEM_SCRATCH, "neuroncore_memory_usage_model_shared_scratchpad",
      "NeuronCore memory utilization for model_shared_scratchpad", "bytes");
GAUGE(F_NC_MEM_RT, "neuroncore_memory_usage_runtime_memory", "NeuronCore memory utilization for runtime_memory",
      "bytes");
GAUGE(F_NC_MEM_TENSORS, "neuroncore_memory_usage_tensors", "NeuronCore memory utilization for tensors", "bytes");
COUNTER(F_EXEC_ERR, "execution_errors_total", "Execution errors total", "count");
COUNTER(F_EXEC_STATUS, "execution_status_total", "Execution status total", "count");
GAUGE(F_EXEC_LAT, "execution_latency_seconds", "Execution latency in seconds", "seconds");
COUNTER(F_ECC, "hardware_ecc_events_total", "Hardware ecc events total", "count");
GAUGE(F_VCPU_COUNT, "system_vcpu_count", "System vCPU count", "count");
GAUGE(F_VCPU_RATIO, "system_vcpu_usage_ratio", "System CPU utilization ratio", "ratio");
GAUGE(F_MEM_TOTAL, "system_memory_total_bytes", "System memory total_bytes bytes", "bytes");
GAUGE(F_MEM_USED, "system_memory_used_bytes", "System memory used_bytes bytes", "bytes");
GAUGE(F_SWAP_TOTAL, "system_swap_total_bytes", "System swap total_bytes bytes", "bytes");
GAUGE(F_SWAP_USED, "system_swap_used_bytes", "System swap used_bytes bytes", "bytes");
GAUGE(F_RT_VCPU, "runtime_vcpu_usage_ratio", "Runtime process CPU time over the period, as a ratio of host CPU capacity",
      "ratio");
GAUGE(F_RT_MEM, "runtime_memory_used_bytes", "Runtime process memory used bytes", "bytes");
GAUGE(F_INSTANCE, "instance_info", "EC2 instance information", "");
/* Devices, vendor-neutral, base units. */
GAUGE(F_ACC_INFO, "accelerator_info", "Accelerator device identity (value 1)", "");
GAUGE(F_ACC_UTIL, "accelerator_utilization_ratio", "Accelerator engine busy time over the period, as a ratio", "ratio");
GAUGE(F_ACC_MEM_TOTAL, "accelerator_memory_total_bytes", "Accelerator device memory total bytes", "bytes");
GAUGE(F_ACC_MEM_USED, "accelerator_memory_used_bytes", "Accelerator device memory used bytes", "bytes");
GAUGE(F_ACC_MEM_FREE, "accelerator_memory_free_bytes", "Accelerator device memory free bytes", "bytes");
GAUGE(F_ACC_PROC_MEM, "accelerator_process_memory_used_bytes", "Accelerator device memory used by a process, bytes",
      "bytes");
GAUGE(F_ACC_TEMP, "accelerator_temperature_celsius", "Accelerator temperature by sensor, degrees Celsius", "celsius");
GAUGE(F_ACC_FAN, "accelerator_fan_speed_ratio", "Accelerator fan speed as a ratio of its maximum", "ratio");
GAUGE(F_ACC_POWER, "accelerator_power_watts", "Accelerator power draw, watts", "watts");
GAUGE(F_ACC_POWER_LIMIT, "accelerator_power_limit_watts", "Accelerator power limit, watts", "watts");
COUNTER(F_ACC_ENERGY, "accelerator_energy_joules_total", "Accelerator energy consumed, joules", "joules");
GAUGE(F_ACC_CLOCK, "accelerator_clock_hertz", "Accelerator clock frequency by clock domain, hertz", "hertz");
COUNTER(F_ACC_ECC, "accelerator_ecc_errors_total", "Accelerator memory ECC errors by type", "count");
COUNTER(F_ACC_PCIE, "accelerator_pcie_replays_total", "Accelerator PCIe replay events", "count");
GAUGE(F_NEURON_HW, "neuron_hardware_info", "Neuron Hardware Information", "");
GAUGE(F_ACC_PROC_UTIL, "accelerator_process_utilization_ratio",
      "Accelerator engine busy time of a process over the period, as a ratio", "ratio");
GAUGE(F_ACC_FAN_RPM, "accelerator_fan_speed_rpm", "Accelerator or board fan speed, revolutions per minute", "rpm");
GAUGE(F_ACC_POWER_UTIL, "accelerator_power_utilization_ratio",
      "Accelerator power draw as a ratio of its maximum power", "ratio");
GAUGE(F_ACC_RETIRED, "accelerator_retired_pages", "Accelerator memory pages retired for errors", "count");
GAUGE(F_ACC_HOST_MEM, "accelerator_host_memory_used_bytes", "Host memory used for an accelerator by category, bytes",
      "bytes");
COUNTER(F_ACC_EXEC_STATUS, "accelerator_execution_status_total", "Accelerator core executions by return status",
	"count");
COUNTER(F_ACC_INFER, "accelerator_inferences_total", "Accelerator core inferences completed", "count");
COUNTER(F_ACC_FLOPS, "accelerator_flops_total", "Accelerator core floating-point operations", "count");
/* Fields that were read but not exported: NVIDIA, amdgpu, Neuron, the host. */
GAUGE(F_ACC_MEM_RESERVED, "accelerator_memory_reserved_bytes", "Accelerator device memory reserved by the driver, bytes",
      "bytes");
GAUGE(F_ACC_LAST_XID, "accelerator_last_xid", "The last XID error code the device reported since the monitor started",
      "");
GAUGE(F_ACC_PCIE_TPUT, "accelerator_pcie_throughput_bytes_per_second",
      "Accelerator PCIe throughput by direction (the device's own short sample), bytes per second", "bytes_per_second");
GAUGE(F_ACC_REMAPPED, "accelerator_remapped_rows", "Accelerator memory rows remapped, by type (the device's total)",
      "count");
GAUGE(F_ACC_REMAP_FAILED, "accelerator_row_remap_failed", "1 when an accelerator memory row remapping failed", "");
GAUGE(F_ACC_REMAP_PENDING, "accelerator_row_remap_pending", "1 when an accelerator memory row remapping awaits a reset",
      "");
GAUGE(F_ACC_RETIRED_PENDING, "accelerator_retired_pages_pending", "1 when accelerator memory pages await retirement",
      "");
GAUGE(F_ACC_MIG_MEM_TOTAL, "accelerator_mig_memory_total_bytes", "MIG device memory total bytes", "bytes");
GAUGE(F_ACC_MIG_MEM_USED, "accelerator_mig_memory_used_bytes", "MIG device memory used bytes", "bytes");
GAUGE(F_ACC_MIG_MEM_FREE, "accelerator_mig_memory_free_bytes", "MIG device memory free bytes", "bytes");
GAUGE(F_ACC_ENERGY_CONSUMED, "accelerator_energy_consumed_joules",
      "Accelerator energy consumed since the driver loaded (the device's own total), joules", "joules");
GAUGE(F_ACC_GTT_TOTAL, "accelerator_gtt_memory_total_bytes", "Accelerator GTT (host memory the GPU maps) total bytes",
      "bytes");
GAUGE(F_ACC_GTT_USED, "accelerator_gtt_memory_used_bytes", "Accelerator GTT (host memory the GPU maps) used bytes",
      "bytes");
COUNTER(F_ACC_MODEL_LOADS, "accelerator_model_loads_total", "Accelerator core model loads", "count");
COUNTER(F_ACC_RESET_REQ, "accelerator_reset_requests_total", "Accelerator core reset requests", "count");
COUNTER(F_ACC_RESET_FAIL, "accelerator_reset_failures_total", "Accelerator core resets that failed", "count");
/* sysfs fields of hwmon and amdgpu (docs/devices.md). */
GAUGE(F_ACC_TEMP_CRIT, "accelerator_temperature_critical_celsius",
      "Accelerator or chip critical temperature threshold by sensor, degrees Celsius", "celsius");
GAUGE(F_ACC_TEMP_MAX, "accelerator_temperature_max_celsius",
      "Accelerator or chip maximum temperature threshold by sensor, degrees Celsius", "celsius");
GAUGE(F_ACC_ALARM, "accelerator_alarm", "1 while a sensor alarm of the chip is raised", "");
GAUGE(F_ACC_VOLT, "accelerator_voltage_volts", "Accelerator or chip voltage by sensor, volts", "volts");
GAUGE(F_ACC_PCIE_SPEED, "accelerator_pcie_link_speed_transfers_per_second",
      "Accelerator PCIe link speed, current or maximum, transfers per second", "transfers_per_second");
GAUGE(F_ACC_PCIE_WIDTH, "accelerator_pcie_link_width", "Accelerator PCIe link width, current or maximum, lanes", "");
GAUGE(F_ACC_VIS_TOTAL, "accelerator_visible_memory_total_bytes",
      "Accelerator device memory the CPU can map (visible VRAM) total bytes", "bytes");
GAUGE(F_ACC_VIS_USED, "accelerator_visible_memory_used_bytes",
      "Accelerator device memory the CPU can map (visible VRAM) used bytes", "bytes");
COUNTER(F_ACC_ECC_EVENTS, "accelerator_ecc_events_total",
	"Accelerator ECC events by the driver's own counter (a finer split of accelerator_ecc_errors_total)", "count");
COUNTER(F_ACC_AER, "accelerator_pcie_aer_errors_total", "Accelerator PCIe AER errors by severity", "count");
/* NVIDIA events and NVLink */
COUNTER(F_ACC_XID, "accelerator_xid_errors_total", "Accelerator XID errors by code, as the driver's events report them",
	"count");
COUNTER(F_ACC_DEV_EVENTS, "accelerator_device_events_total",
	"Accelerator device events by type: ECC, clock change, GPU unavailable (driver events), GPU lost", "count");
GAUGE(F_ACC_CLK_REASON, "accelerator_clock_event_reasons",
      "1 while the reason holds the accelerator's clocks down (clock event, formerly throttle, reason)", "");
GAUGE(F_ACC_CLK_MASK, "accelerator_clock_event_reasons_mask", "The accelerator's clock event reasons as the driver's bit mask",
      "");
GAUGE(F_ACC_NVLINK_ACTIVE, "accelerator_nvlink_active", "1 while the NVLink link is active", "");
GAUGE(F_ACC_NVLINK_TPUT, "accelerator_nvlink_throughput_bytes_per_second",
      "NVLink data throughput by link and direction over the period, bytes per second", "bytes_per_second");
COUNTER(F_ACC_NVLINK_ERR, "accelerator_nvlink_errors_total",
	"NVLink errors by link and type (replay, recovery, crc_flit, crc_data)", "count");
GAUGE(F_NCS2_NUM, "ncs2_num_devices", "Number of Intel Neural Compute Sticks", "count");
GAUGE(F_NCS2_AVAIL, "ncs2_num_available_devices", "Number of Intel Neural Compute Sticks no process holds open",
      "count");
GAUGE(F_NCS2_TEMP, "ncs2_temperature_celsius", "Intel Neural Compute Stick temperature, degrees Celsius", "celsius");
/* container_usage: cAdvisor's families, names and help as cAdvisor serves them */
COUNTER(F_CT_CPU, "container_cpu_usage_seconds_total", "Cumulative cpu time consumed in seconds.", "seconds");
COUNTER(F_CT_USER, "container_cpu_user_seconds_total", "Cumulative user cpu time consumed in seconds.", "seconds");
COUNTER(F_CT_SYS, "container_cpu_system_seconds_total", "Cumulative system cpu time consumed in seconds.", "seconds");
COUNTER(F_CT_PERIODS, "container_cpu_cfs_periods_total", "Number of elapsed enforcement period intervals.", "count");
COUNTER(F_CT_THROTTLED, "container_cpu_cfs_throttled_periods_total", "Number of throttled period intervals.",
	"count");
COUNTER(F_CT_THROTTLED_S, "container_cpu_cfs_throttled_seconds_total",
	"Total time duration the container has been throttled.", "seconds");
GAUGE(F_CT_MEM, "container_memory_usage_bytes",
      "Current memory usage in bytes, including all memory regardless of when it was accessed", "bytes");
GAUGE(F_CT_WS, "container_memory_working_set_bytes", "Current working set in bytes.", "bytes");
GAUGE(F_CT_RSS, "container_memory_rss", "Size of RSS in bytes.", "bytes");
GAUGE(F_CT_CACHE, "container_memory_cache", "Number of bytes of page cache memory.", "bytes");
COUNTER(F_CT_OOM, "container_oom_events_total", "Count of out of memory events observed for the container", "count");
/* containers: per-process device figures summed by pod and by container (docs/report-format.md) */
GAUGE(F_ACC_POD_MEM, "accelerator_pod_memory_used_bytes", "Accelerator device memory used by a pod's processes, bytes",
      "bytes");
GAUGE(F_ACC_CTR_MEM, "accelerator_container_memory_used_bytes",
      "Accelerator device memory used by a container's processes, bytes", "bytes");
GAUGE(F_ACC_POD_UTIL, "accelerator_pod_utilization_ratio",
      "Accelerator engine busy time of a pod's processes over the period, as a ratio", "ratio");
GAUGE(F_ACC_CTR_UTIL, "accelerator_container_utilization_ratio",
      "Accelerator engine busy time of a container's processes over the period, as a ratio", "ratio");
/* NVIDIA MIG and GPM */
GAUGE(F_ACC_ACTIVITY, "accelerator_activity_ratio",
      "Accelerator unit activity over the period from its performance counters (NVIDIA GPM), as a ratio", "ratio");
GAUGE(F_ACC_SM_OCC, "accelerator_sm_occupancy_ratio",
      "Accelerator warps resident over the period as a ratio of the theoretical maximum (NVIDIA GPM)", "ratio");
/* the GPU's (or MIG instance's) total over all links: a family apart from the per-link one (G's, above) */
GAUGE(F_ACC_NVLINK_GPM, "accelerator_nvlink_total_throughput_bytes_per_second",
      "Accelerator NVLink throughput over all links by direction, mean over the period (NVIDIA GPM), bytes per second",
      "bytes_per_second");

/* Endpoint runtimes: per model and version, and the devices a server reports on (report-format §6.5) */
GAUGE(F_INF_QUEUE_LAT, "inference_queue_latency_seconds", "Inference queue time percentiles, seconds", "seconds");
GAUGE(F_INF_TTFT, "inference_time_to_first_token_seconds", "Inference time to first token percentiles, seconds",
      "seconds");
GAUGE(F_INF_TPOT, "inference_time_per_output_token_seconds",
      "Inference time per output token percentiles, seconds", "seconds");
GAUGE(F_INF_REQ_MEAN, "inference_request_mean_seconds", "Mean request time over the period, seconds", "seconds");
GAUGE(F_INF_QUEUE_MEAN, "inference_queue_mean_seconds", "Mean queue time per request over the period, seconds",
      "seconds");
GAUGE(F_INF_CIN_MEAN, "inference_compute_input_mean_seconds",
      "Mean input processing time per request over the period, seconds", "seconds");
GAUGE(F_INF_CINF_MEAN, "inference_compute_infer_mean_seconds",
      "Mean model execution time per request over the period, seconds", "seconds");
GAUGE(F_INF_COUT_MEAN, "inference_compute_output_mean_seconds",
      "Mean output processing time per request over the period, seconds", "seconds");
GAUGE(F_INF_TTFT_MEAN, "inference_time_to_first_token_mean_seconds",
      "Mean time to first token over the period, seconds", "seconds");
GAUGE(F_INF_TPOT_MEAN, "inference_time_per_output_token_mean_seconds",
      "Mean time per output token over the period, seconds", "seconds");
COUNTER(F_INF_REQ_DUR, "inference_request_duration_seconds_total",
	"Request time of completed requests, cumulative, seconds", "seconds");
COUNTER(F_INF_QUEUE_DUR, "inference_queue_duration_seconds_total",
	"Queue time of completed requests, cumulative, seconds", "seconds");
COUNTER(F_INF_CIN_DUR, "inference_compute_input_duration_seconds_total",
	"Input processing time of completed requests, cumulative, seconds", "seconds");
COUNTER(F_INF_CINF_DUR, "inference_compute_infer_duration_seconds_total",
	"Model execution time of completed requests, cumulative, seconds", "seconds");
COUNTER(F_INF_COUT_DUR, "inference_compute_output_duration_seconds_total",
	"Output processing time of completed requests, cumulative, seconds", "seconds");
GAUGE(F_INF_IN_FLIGHT, "inference_requests_in_flight", "Requests being executed at the latest scrape", "count");
GAUGE(F_INF_PENDING, "inference_requests_pending", "Requests waiting in the server's queue at the latest scrape",
      "count");
GAUGE(F_INF_BATCH, "inference_batch_size", "Mean inferences per model execution over the period", "count");
COUNTER(F_INF_TOKENS, "inference_tokens_total", "Prompt and generated tokens", "count");
GAUGE(F_INF_KV, "inference_kv_cache_usage_ratio", "KV-cache blocks in use at the latest scrape, as a ratio", "ratio");
GAUGE(F_SRV_UTIL, "inference_server_device_utilization_ratio",
      "Utilization of a device the inference server reports on, as a ratio", "ratio");
GAUGE(F_SRV_MEM_USED, "inference_server_device_memory_used_bytes",
      "Memory used on a device the inference server reports on, bytes", "bytes");
GAUGE(F_SRV_MEM_TOTAL, "inference_server_device_memory_total_bytes",
      "Memory total of a device the inference server reports on, bytes", "bytes");
GAUGE(F_SRV_POWER, "inference_server_device_power_watts", "Power draw of a device the inference server reports on, watts",
      "watts");
GAUGE(F_SRV_POWER_LIMIT, "inference_server_device_power_limit_watts",
      "Power limit of a device the inference server reports on, watts", "watts");
GAUGE(F_SRV_TEMP, "inference_server_device_temperature_celsius",
      "Temperature of a device the inference server reports on, degrees Celsius", "celsius");
COUNTER(F_SRV_ENERGY, "inference_server_device_energy_joules_total",
	"Energy consumed by a device the inference server reports on, joules", "joules");

static const struct family *const families[] = {
	&F_NC_UTIL,    &F_NRT_VCPU,  &F_NRT_MEM,  &F_NC_MEM_CONST, &F_NC_MEM_CODE, &F_NC_MEM_SCRATCH, &F_NC_MEM_RT,
	&F_NC_MEM_TENSORS, &F_EXEC_ERR, &F_EXEC_STATUS, &F_EXEC_LAT, &F_ECC, &F_VCPU_COUNT, &F_VCPU_RATIO,
	&F_MEM_TOTAL, &F_MEM_USED, &F_SWAP_TOTAL, &F_SWAP_USED, &F_RT_VCPU, &F_RT_MEM, &F_INSTANCE, &F_NEURON_HW,
	&F_ACC_INFO, &F_ACC_UTIL, &F_ACC_MEM_TOTAL, &F_ACC_MEM_USED, &F_ACC_MEM_FREE, &F_ACC_PROC_MEM, &F_ACC_TEMP,
	&F_ACC_FAN, &F_ACC_POWER, &F_ACC_POWER_LIMIT, &F_ACC_ENERGY, &F_ACC_CLOCK, &F_ACC_ECC, &F_ACC_PCIE,
	&F_ACC_PROC_UTIL, &F_ACC_FAN_RPM, &F_ACC_POWER_UTIL, &F_ACC_RETIRED, &F_ACC_HOST_MEM, &F_ACC_EXEC_STATUS,
	&F_ACC_INFER, &F_ACC_FLOPS, &F_NCS2_NUM, &F_NCS2_AVAIL, &F_NCS2_TEMP, &F_ACC_MEM_RESERVED, &F_ACC_LAST_XID,
	&F_ACC_PCIE_TPUT, &F_ACC_REMAPPED, &F_ACC_REMAP_FAILED, &F_ACC_REMAP_PENDING, &F_ACC_RETIRED_PENDING,
	&F_ACC_MIG_MEM_TOTAL, &F_ACC_MIG_MEM_USED, &F_ACC_MIG_MEM_FREE, &F_ACC_ENERGY_CONSUMED, &F_ACC_GTT_TOTAL,
	&F_ACC_GTT_USED, &F_ACC_MODEL_LOADS, &F_ACC_RESET_REQ, &F_ACC_RESET_FAIL, &F_ACC_TEMP_CRIT, &F_ACC_TEMP_MAX,
	&F_ACC_ALARM, &F_ACC_VOLT, &F_ACC_PCIE_SPEED, &F_ACC_PCIE_WIDTH, &F_ACC_VIS_TOTAL, &F_ACC_VIS_USED, &F_ACC_AER,
	&F_ACC_ECC_EVENTS,
	/* container_usage */
	&F_CT_CPU, &F_CT_USER, &F_CT_SYS, &F_CT_PERIODS, &F_CT_THROTTLED, &F_CT_THROTTLED_S, &F_CT_MEM, &F_CT_WS,
	&F_CT_RSS, &F_CT_CACHE, &F_CT_OOM,
	/* containers */
	&F_ACC_POD_MEM, &F_ACC_CTR_MEM, &F_ACC_POD_UTIL, &F_ACC_CTR_UTIL,
	/* NVIDIA MIG and GPM */
	&F_ACC_ACTIVITY, &F_ACC_SM_OCC, &F_ACC_NVLINK_GPM,
	/* NVIDIA events and NVLink */
	&F_ACC_XID, &F_ACC_DEV_EVENTS, &F_ACC_CLK_REASON, &F_ACC_CLK_MASK, &F_ACC_NVLINK_ACTIVE, &F_ACC_NVLINK_TPUT,
	&F_ACC_NVLINK_ERR,
	/* endpoint runtimes */
	&F_INF_QUEUE_LAT, &F_INF_TTFT, &F_INF_TPOT, &F_INF_REQ_MEAN, &F_INF_QUEUE_MEAN, &F_INF_CIN_MEAN,
	&F_INF_CINF_MEAN, &F_INF_COUT_MEAN, &F_INF_TTFT_MEAN, &F_INF_TPOT_MEAN, &F_INF_REQ_DUR, &F_INF_QUEUE_DUR,
	&F_INF_CIN_DUR, &F_INF_CINF_DUR, &F_INF_COUT_DUR, &F_INF_IN_FLIGHT, &F_INF_PENDING, &F_INF_BATCH,
	&F_INF_TOKENS, &F_INF_KV, &F_SRV_UTIL, &F_SRV_MEM_USED, &F_SRV_MEM_TOTAL, &F_SRV_POWER, &F_SRV_POWER_LIMIT,
	&F_SRV_TEMP, &F_SRV_ENERGY,
	NULL,
};

const struct family *const *map_families(void)
{
	return families;
}

/* ---- rules --------------------------------------------------------------- */

enum scope { SC_SYSTEM, SC_RUNTIME, SC_DEVICE, SC_DEVICE_GROUP };

/*
 * containers: the labels pod, namespace and container (MAP_IDENT_LABELS of them) come from a
 * container identity object (monitor/host/container.h): a runtime entry's "container"; for a device rule that
 * captures "pid", the device's "process_containers" entry of that pid; for a rule with ident set, the
 * object its first "*" reaches, whose key is the pod UID (IDENT_POD: no container label) or the container
 * id (IDENT_CONTAINER), the key not being a label itself. A name the monitor could not resolve falls back
 * to the id: pod to the pod UID, container to the container id.
 */
enum ident { IDENT_NONE, IDENT_POD, IDENT_CONTAINER };
#define MAP_IDENT_LABELS 3

/*
 * Device rules walk each device object of a group ("devices": {"0": {...}}),
 * whose identity becomes the labels device_type, device, uuid, model and
 * pci_bus_id. Device-group rules walk the group object itself (a count over
 * the kind's devices) and carry only the instance labels. Either may be
 * limited to one kind of device (device_type), and a device rule may also
 * label the device index under a second name (neuron-monitor's
 * neuron_device_index).
 */
struct rule {
	enum scope scope;
	const char *group;
	const char *path;
	const struct family *fam;
	const char *labels; /* capture label names, comma-separated */
	const char *fixed;  /* one "name=value" label, or NULL */
	double scale;       /* 0: 1; PERCENT: value / 100.0 */
	double clamp;       /* 0: none */
	const char *device_type; /* device rules: only this kind ("neuron"); NULL: every kind */
	const char *index_label; /* device rules: also label the device index under this name; NULL: no */
	enum ident ident;        /* the object the first "*" reaches is a pod's or container's (containers, below) */
	/*
	 * Endpoint runtimes. unless: the rule is not applied to a group that has this key (the
	 * runtime-level sums of execution_stats when it has "models", which carry them per model);
	 * only_with: applied only to a group that has it (NULL: either way). weight: each value is multiplied
	 * by the number at this path (dot-separated keys) inside the object the pattern's last "*" reached,
	 * and yields nothing where that is absent (a mean per request times the requests: a duration).
	 */
	const char *unless;
	const char *only_with;
	const char *weight;
};

/*
 * A percent read as a ratio: value / 100.0, as neuron-monitor-prometheus.py
 * computes it (value * 0.01 differs in the last bit for about one two-decimal
 * percent in seven: 3.96 * 0.01 is 0.0396, 3.96 / 100.0 is 0.039599999999999996).
 */
#define PERCENT (-100.0)
/* A JSON boolean read as 0 or 1 (a flag exported as a gauge); any other type is a bad value. */
#define BOOLEAN (-2.0)

/* container_usage: one entry per cgroup, labelled as cAdvisor labels it (its key is "id"). */
#define CT_RULE(field, fam, fixed)                                                                           \
	{ SC_SYSTEM, "container_usage", "containers.*[name,pod,namespace,container]." field, &fam,               \
	  CT_LABELS, fixed, 0, 0 }
#define CT_LABELS "id,name,pod,namespace,container"

/* Endpoint runtimes: one model version's field, labelled model and version (report-format §6.5). */
#define MODEL_RULE(field, fam, labels) \
	{ SC_RUNTIME, "execution_stats", "models.*.*." field, &fam, "model,version" labels, NULL, 0, 0 }
/* A mean per request times that model version's completed requests: a cumulative duration (a counter). */
#define DURATION_RULE(phase, fam)                                                                    \
	{ SC_RUNTIME, "execution_stats", "models.*.*.mean_seconds." phase, &fam, "model,version", NULL, 0, 0, \
	  .weight = "execution_summary.completed" }
#define SERVER_DEVICE_RULE(field, fam) \
	{ SC_RUNTIME, "execution_stats", "server_devices.*." field, &fam, "device", NULL, 0, 0 }

#define NC_MEM(fam, key)                                                                                  \
	{ SC_RUNTIME, "memory_used", "neuron_runtime_used_bytes.usage_breakdown.neuroncore_memory_usage.*." key, \
	  &fam, "neuroncore", "memory_location=None", 0, 0 }

/*
 * Rows for every kind of device and the system and runtime rows leave
 * device_type and index_label out (NULL): the table stays one row a line.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct rule rules[] = {
	/* neuron-monitor runtime groups (2.x and 2020) */
	{ SC_RUNTIME, "neuroncore_counters", "neuroncores_in_use.*.neuroncore_utilization", &F_NC_UTIL, "neuroncore",
	  NULL, PERCENT, 0 },
	{ SC_RUNTIME, "neuron_runtime_vcpu_usage", "vcpu_usage.{user,system}", &F_NRT_VCPU, "usage_type", NULL, PERCENT, 0 },
	{ SC_RUNTIME, "memory_used", "neuron_runtime_used_bytes.{host,neuron_device}", &F_NRT_MEM, "memory_location",
	  NULL, 0, 0 },
	NC_MEM(F_NC_MEM_CONST, "constants"),
	NC_MEM(F_NC_MEM_CODE, "model_code"),
	NC_MEM(F_NC_MEM_SCRATCH, "model_shared_scratchpad"),
	NC_MEM(F_NC_MEM_RT, "runtime_memory"),
	NC_MEM(F_NC_MEM_TENSORS, "tensors"),
	/* runtime-level sums: the only figures of neuron-monitor's and of a server that names no model */
	{ SC_RUNTIME, "execution_stats", "error_summary.*", &F_EXEC_ERR, "error_type", NULL, 0, 0, .unless = "models" },
	{ SC_RUNTIME, "execution_stats", "execution_summary.*", &F_EXEC_STATUS, "status_type", NULL, 0, 0,
	  .unless = "models" },
	/* the runtime's merged request-latency distribution (every model's buckets summed by bound): percentiles
	 * add up to nothing, so they stay next to the models' (no model label) */
	{ SC_RUNTIME, "execution_stats", "latency_stats.total_latency.*", &F_EXEC_LAT, "percentile", NULL, 0, 0 },
	/* TorchServe's host-level HTTP errors are in no model: kept at runtime level next to the models' */
	{ SC_RUNTIME, "execution_stats", "error_summary.{http_4xx,http_5xx}", &F_EXEC_ERR, "error_type", NULL, 0, 0,
	  .only_with = "models" },
	/* endpoint runtimes: per model and version (report-format §6.5) */
	MODEL_RULE("execution_summary.*", F_EXEC_STATUS, ",status_type"),
	MODEL_RULE("error_summary.*", F_EXEC_ERR, ",error_type"),
	MODEL_RULE("latency_stats.total_latency.*", F_EXEC_LAT, ",percentile"),
	MODEL_RULE("latency_stats.queue.*", F_INF_QUEUE_LAT, ",percentile"),
	MODEL_RULE("latency_stats.time_to_first_token.*", F_INF_TTFT, ",percentile"),
	MODEL_RULE("latency_stats.time_per_output_token.*", F_INF_TPOT, ",percentile"),
	MODEL_RULE("mean_seconds.request", F_INF_REQ_MEAN, ""),
	MODEL_RULE("mean_seconds.queue", F_INF_QUEUE_MEAN, ""),
	MODEL_RULE("mean_seconds.compute_input", F_INF_CIN_MEAN, ""),
	MODEL_RULE("mean_seconds.compute_infer", F_INF_CINF_MEAN, ""),
	MODEL_RULE("mean_seconds.compute_output", F_INF_COUT_MEAN, ""),
	MODEL_RULE("mean_seconds.time_to_first_token", F_INF_TTFT_MEAN, ""),
	MODEL_RULE("mean_seconds.time_per_output_token", F_INF_TPOT_MEAN, ""),
	DURATION_RULE("request", F_INF_REQ_DUR),
	DURATION_RULE("queue", F_INF_QUEUE_DUR),
	DURATION_RULE("compute_input", F_INF_CIN_DUR),
	DURATION_RULE("compute_infer", F_INF_CINF_DUR),
	DURATION_RULE("compute_output", F_INF_COUT_DUR),
	MODEL_RULE("requests_in_flight", F_INF_IN_FLIGHT, ""),
	MODEL_RULE("requests_pending", F_INF_PENDING, ""),
	MODEL_RULE("batch_size", F_INF_BATCH, ""),
	MODEL_RULE("tokens.{prompt,generation}", F_INF_TOKENS, ",kind"),
	MODEL_RULE("kv_cache_usage_ratio", F_INF_KV, ""),
	SERVER_DEVICE_RULE("utilization_ratio", F_SRV_UTIL),
	SERVER_DEVICE_RULE("memory_used_bytes", F_SRV_MEM_USED),
	SERVER_DEVICE_RULE("memory_total_bytes", F_SRV_MEM_TOTAL),
	SERVER_DEVICE_RULE("power_watts", F_SRV_POWER),
	SERVER_DEVICE_RULE("power_limit_watts", F_SRV_POWER_LIMIT),
	SERVER_DEVICE_RULE("temperature_celsius", F_SRV_TEMP),
	SERVER_DEVICE_RULE("energy_joules", F_SRV_ENERGY),
	{ SC_RUNTIME, "inference_stats", "error_summary.*", &F_EXEC_ERR, "error_type", NULL, 0, 0 },
	{ SC_RUNTIME, "inference_stats", "inference_summary.*", &F_EXEC_STATUS, "status_type", NULL, 0, 0 },
	{ SC_RUNTIME, "inference_stats", "latency_stats.total_latency.*", &F_EXEC_LAT, "percentile", NULL, 0, 0 },
	{ SC_RUNTIME, "hw_counters",
	  "neuron_devices[neuron_device_index].{mem_ecc_corrected,mem_ecc_uncorrected,sram_ecc_corrected,"
	  "sram_ecc_uncorrected}",
	  &F_ECC, "neuron_device_index,event_type", NULL, 0, 0 },
	/* accel-monitor runtime groups */
	{ SC_RUNTIME, "runtime_vcpu_usage", "vcpu_usage.{user,system}", &F_RT_VCPU, "usage_type", NULL, PERCENT, 0 },
	{ SC_RUNTIME, "memory_used", "runtime_used_bytes.{host,device}", &F_RT_MEM, "memory_location", NULL, 0, 0 },
	/* system groups */
	{ SC_SYSTEM, "neuron_hw_counters",
	  "neuron_devices[neuron_device_index].{mem_ecc_corrected,mem_ecc_uncorrected,sram_ecc_corrected,"
	  "sram_ecc_uncorrected}",
	  &F_ECC, "neuron_device_index,event_type", NULL, 0, 0 },
	{ SC_SYSTEM, "vcpu_usage", "usage_data.#", &F_VCPU_COUNT, "", NULL, 0, 0 },
	{ SC_SYSTEM, "vcpu_usage", "average_usage.{user+nice}", &F_VCPU_RATIO, "", "usage_type=user", PERCENT, 100 },
	{ SC_SYSTEM, "vcpu_usage", "average_usage.{system+io_wait+irq+soft_irq}", &F_VCPU_RATIO, "",
	  "usage_type=system", PERCENT, 100 },
	{ SC_SYSTEM, "memory_info", "memory_total_bytes", &F_MEM_TOTAL, "", NULL, 0, 0 },
	{ SC_SYSTEM, "memory_info", "memory_used_bytes", &F_MEM_USED, "", NULL, 0, 0 },
	{ SC_SYSTEM, "memory_info", "swap_total_bytes", &F_SWAP_TOTAL, "", NULL, 0, 0 },
	{ SC_SYSTEM, "memory_info", "swap_used_bytes", &F_SWAP_USED, "", NULL, 0, 0 },
	/* device groups, every vendor (docs/report-format.md, "Devices") */
	{ SC_DEVICE, "device_info", "1", &F_ACC_INFO, "", NULL, 0, 0 },
	{ SC_DEVICE, "device_info", "power_limit_watts", &F_ACC_POWER_LIMIT, "", NULL, 0, 0 },
	{ SC_DEVICE, "device_utilization", "core_percent", &F_ACC_UTIL, "", "engine=core", PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "memory_bandwidth_percent", &F_ACC_UTIL, "", "engine=memory_bandwidth", PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "encoder_percent", &F_ACC_UTIL, "", "engine=encoder", PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "decoder_percent", &F_ACC_UTIL, "", "engine=decoder", PERCENT, 0 },
	{ SC_DEVICE, "device_memory", "total_bytes", &F_ACC_MEM_TOTAL, "", NULL, 0, 0 },
	{ SC_DEVICE, "device_memory", "used_bytes", &F_ACC_MEM_USED, "", NULL, 0, 0 },
	{ SC_DEVICE, "device_memory", "free_bytes", &F_ACC_MEM_FREE, "", NULL, 0, 0 },
	{ SC_DEVICE, "device_memory", "processes.*", &F_ACC_PROC_MEM, "pid", NULL, 0, 0 },
	{ SC_DEVICE, "device_thermal", "temperatures_celsius.*", &F_ACC_TEMP, "sensor", NULL, 0, 0 },
	{ SC_DEVICE, "device_thermal", "fan_percent", &F_ACC_FAN, "", NULL, PERCENT, 0 },
	{ SC_DEVICE, "device_power", "power_watts", &F_ACC_POWER, "", NULL, 0, 0 },
	{ SC_DEVICE, "device_power", "energy_joules", &F_ACC_ENERGY, "", NULL, 0, 0 },
	{ SC_DEVICE, "device_clocks", "clocks_mhz.*", &F_ACC_CLOCK, "clock", NULL, 1e6, 0 },
	{ SC_DEVICE, "device_errors", "ecc_errors.*", &F_ACC_ECC, "type", NULL, 0, 0 },
	{ SC_DEVICE, "device_errors", "pcie_replays", &F_ACC_PCIE, "", NULL, 0, 0 },
	/* device fields more than one kind may have (docs/devices.md) */
	{ SC_DEVICE, "device_utilization", "video_percent", &F_ACC_UTIL, "", "engine=video", PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "processes.*.*", &F_ACC_PROC_UTIL, "pid,engine", NULL, PERCENT, 0 },
	{ SC_DEVICE, "device_thermal", "fan_rpm.*", &F_ACC_FAN_RPM, "fan", NULL, 0, 0 },
	{ SC_DEVICE, "device_power", "power_sensors_watts.*", &F_ACC_POWER, "sensor", NULL, 0, 0 },
	{ SC_DEVICE, "device_power", "power_percent", &F_ACC_POWER_UTIL, "", NULL, PERCENT, 0 },
	{ SC_DEVICE, "device_errors", "retired_pages.total", &F_ACC_RETIRED, "", NULL, 0, 0 },
	/* AWS Neuron devices: neuron-monitor's families where it has one */
	/*
	 * Neuron devices' ECC events by the driver's counter name: not hardware_ecc_events_total, which is
	 * neuron_hw_counters' (as neuron-monitor-prometheus.py serves it), nor accelerator_ecc_errors_total,
	 * which already has their corrected/uncorrected sums: no event is counted twice in any family.
	 */
	{ SC_DEVICE, "device_errors", "ecc_events.*", &F_ACC_ECC_EVENTS, "event_type", NULL, 0, 0, "neuron", NULL },
	{ SC_DEVICE, "device_utilization", "neuroncores.*.utilization_percent", &F_NC_UTIL, "neuroncore", NULL, PERCENT, 0,
	  "neuron", NULL },
	{ SC_DEVICE, "device_utilization", "neuroncores.*.status.*", &F_ACC_EXEC_STATUS, "neuroncore,status", NULL, 0,
	  0, "neuron", NULL },
	{ SC_DEVICE, "device_utilization", "neuroncores.*.inferences", &F_ACC_INFER, "neuroncore", NULL, 0, 0, "neuron",
	  NULL },
	{ SC_DEVICE, "device_utilization", "neuroncores.*.flops", &F_ACC_FLOPS, "neuroncore", NULL, 0, 0, "neuron",
	  NULL },
	{ SC_DEVICE, "device_memory", "neuroncores.*.constants", &F_NC_MEM_CONST, "neuroncore", "memory_location=None",
	  0, 0, "neuron", NULL },
	{ SC_DEVICE, "device_memory", "neuroncores.*.model_code", &F_NC_MEM_CODE, "neuroncore", "memory_location=None",
	  0, 0, "neuron", NULL },
	{ SC_DEVICE, "device_memory", "neuroncores.*.model_shared_scratchpad", &F_NC_MEM_SCRATCH, "neuroncore",
	  "memory_location=None", 0, 0, "neuron", NULL },
	{ SC_DEVICE, "device_memory", "neuroncores.*.runtime_memory", &F_NC_MEM_RT, "neuroncore",
	  "memory_location=None", 0, 0, "neuron", NULL },
	{ SC_DEVICE, "device_memory", "neuroncores.*.tensors", &F_NC_MEM_TENSORS, "neuroncore", "memory_location=None",
	  0, 0, "neuron", NULL },
	{ SC_DEVICE, "device_memory", "host_bytes.*", &F_ACC_HOST_MEM, "category", NULL, 0, 0, "neuron", NULL },
	/* read but never exported before: docs/report-format.md, "Devices" */
	{ SC_DEVICE, "device_memory", "reserved_bytes", &F_ACC_MEM_RESERVED, "", NULL, 0, 0 },
	{ SC_DEVICE, "device_errors", "last_xid", &F_ACC_LAST_XID, "", NULL, 0, 0 },
	{ SC_DEVICE, "device_utilization", "pcie_tx_bytes_per_second", &F_ACC_PCIE_TPUT, "", "direction=tx", 0, 0 },
	{ SC_DEVICE, "device_utilization", "pcie_rx_bytes_per_second", &F_ACC_PCIE_TPUT, "", "direction=rx", 0, 0 },
	{ SC_DEVICE, "device_errors", "remapped_rows.{correctable,uncorrectable}", &F_ACC_REMAPPED, "type", NULL, 0, 0 },
	{ SC_DEVICE, "device_errors", "remapped_rows.failed", &F_ACC_REMAP_FAILED, "", NULL, BOOLEAN, 0 },
	{ SC_DEVICE, "device_errors", "remapped_rows.pending", &F_ACC_REMAP_PENDING, "", NULL, BOOLEAN, 0 },
	{ SC_DEVICE, "device_errors", "retired_pages.pending", &F_ACC_RETIRED_PENDING, "", NULL, BOOLEAN, 0 },
	{ SC_DEVICE, "device_memory", "mig_devices.*.total_bytes", &F_ACC_MIG_MEM_TOTAL, "mig_device", NULL, 0, 0 },
	{ SC_DEVICE, "device_memory", "mig_devices.*.used_bytes", &F_ACC_MIG_MEM_USED, "mig_device", NULL, 0, 0 },
	{ SC_DEVICE, "device_memory", "mig_devices.*.free_bytes", &F_ACC_MIG_MEM_FREE, "mig_device", NULL, 0, 0 },
	{ SC_DEVICE, "device_power", "energy_total_joules", &F_ACC_ENERGY_CONSUMED, "", NULL, 0, 0 },
	{ SC_DEVICE, "device_memory", "gtt_total_bytes", &F_ACC_GTT_TOTAL, "", NULL, 0, 0, "amdgpu", NULL },
	{ SC_DEVICE, "device_memory", "gtt_used_bytes", &F_ACC_GTT_USED, "", NULL, 0, 0, "amdgpu", NULL },
	{ SC_DEVICE, "device_utilization", "neuroncores.*.model_loads", &F_ACC_MODEL_LOADS, "neuroncore", NULL, 0, 0,
	  "neuron", NULL },
	{ SC_DEVICE, "device_utilization", "neuroncores.*.reset_requests", &F_ACC_RESET_REQ, "neuroncore", NULL, 0, 0,
	  "neuron", NULL },
	{ SC_DEVICE, "device_utilization", "neuroncores.*.reset_failures", &F_ACC_RESET_FAIL, "neuroncore", NULL, 0, 0,
	  "neuron", NULL },
	/* sysfs fields of hwmon and amdgpu (docs/devices.md) */
	{ SC_DEVICE, "device_thermal", "temperatures_crit_celsius.*", &F_ACC_TEMP_CRIT, "sensor", NULL, 0, 0 },
	{ SC_DEVICE, "device_thermal", "temperatures_max_celsius.*", &F_ACC_TEMP_MAX, "sensor", NULL, 0, 0 },
	{ SC_DEVICE, "device_thermal", "alarms.*", &F_ACC_ALARM, "alarm", NULL, 0, 0 },
	{ SC_DEVICE, "device_power", "voltages_volts.*", &F_ACC_VOLT, "sensor", NULL, 0, 0 },
	{ SC_DEVICE, "device_info", "pcie_link_speed_gts", &F_ACC_PCIE_SPEED, "", "link=current", 1e9, 0 },
	{ SC_DEVICE, "device_info", "pcie_link_max_speed_gts", &F_ACC_PCIE_SPEED, "", "link=max", 1e9, 0 },
	{ SC_DEVICE, "device_info", "pcie_link_width", &F_ACC_PCIE_WIDTH, "", "link=current", 0, 0 },
	{ SC_DEVICE, "device_info", "pcie_link_max_width", &F_ACC_PCIE_WIDTH, "", "link=max", 0, 0 },
	{ SC_DEVICE, "device_memory", "visible_total_bytes", &F_ACC_VIS_TOTAL, "", NULL, 0, 0, "amdgpu", NULL },
	{ SC_DEVICE, "device_memory", "visible_used_bytes", &F_ACC_VIS_USED, "", NULL, 0, 0, "amdgpu", NULL },
	{ SC_DEVICE, "device_errors", "pcie_aer_errors.*", &F_ACC_AER, "severity", NULL, 0, 0, "amdgpu", NULL },
	/* NVIDIA events and NVLink */
	{ SC_DEVICE, "device_errors", "xid_errors.*", &F_ACC_XID, "xid", NULL, 0, 0, "nvidia", NULL },
	{ SC_DEVICE, "device_errors", "events.*", &F_ACC_DEV_EVENTS, "event_type", NULL, 0, 0, "nvidia", NULL },
	{ SC_DEVICE, "device_thermal", "clock_event_reasons.*", &F_ACC_CLK_REASON, "reason", NULL, 0, 0, "nvidia", NULL },
	{ SC_DEVICE, "device_thermal", "clock_event_reasons_mask", &F_ACC_CLK_MASK, "", NULL, 0, 0, "nvidia", NULL },
	{ SC_DEVICE, "device_utilization", "nvlink.*.active", &F_ACC_NVLINK_ACTIVE, "link", NULL, BOOLEAN, 0, "nvidia",
	  NULL },
	{ SC_DEVICE, "device_utilization", "nvlink.*.tx_bytes_per_second", &F_ACC_NVLINK_TPUT, "link", "direction=tx", 0,
	  0, "nvidia", NULL },
	{ SC_DEVICE, "device_utilization", "nvlink.*.rx_bytes_per_second", &F_ACC_NVLINK_TPUT, "link", "direction=rx", 0,
	  0, "nvidia", NULL },
	{ SC_DEVICE, "device_errors", "nvlink_errors.*.{replay,recovery,crc_flit,crc_data}", &F_ACC_NVLINK_ERR,
	  "link,type", NULL, 0, 0, "nvidia", NULL },
	/* Intel Neural Compute Sticks: prometheus_ncs2_exporter's families */
	{ SC_DEVICE_GROUP, "device_utilization", "num_devices", &F_NCS2_NUM, "", NULL, 0, 0, "ncs2", NULL },
	{ SC_DEVICE_GROUP, "device_utilization", "num_available_devices", &F_NCS2_AVAIL, "", NULL, 0, 0, "ncs2", NULL },
	{ SC_DEVICE, "device_thermal", "temperatures_celsius.*", &F_NCS2_TEMP, "name", NULL, 0, 0, "ncs2", NULL },
	/* container_usage */
	CT_RULE("cpu_usage_seconds", F_CT_CPU, "cpu=total"),
	CT_RULE("cpu_user_seconds", F_CT_USER, NULL),
	CT_RULE("cpu_system_seconds", F_CT_SYS, NULL),
	CT_RULE("cpu_periods", F_CT_PERIODS, NULL),
	CT_RULE("cpu_throttled_periods", F_CT_THROTTLED, NULL),
	CT_RULE("cpu_throttled_seconds", F_CT_THROTTLED_S, NULL),
	CT_RULE("memory_usage_bytes", F_CT_MEM, NULL),
	CT_RULE("memory_working_set_bytes", F_CT_WS, NULL),
	CT_RULE("memory_rss_bytes", F_CT_RSS, NULL),
	CT_RULE("memory_cache_bytes", F_CT_CACHE, NULL),
	CT_RULE("oom_kills", F_CT_OOM, NULL),
	/* containers: per-process figures by pod and by container (monitor/host/container.c) */
	{ SC_DEVICE, "device_memory", "pods.*.memory_bytes", &F_ACC_POD_MEM, "", NULL, 0, 0, NULL, NULL, IDENT_POD },
	{ SC_DEVICE, "device_memory", "containers.*.memory_bytes", &F_ACC_CTR_MEM, "", NULL, 0, 0, NULL, NULL,
	  IDENT_CONTAINER },
	{ SC_DEVICE, "device_utilization", "pods.*.engines.*", &F_ACC_POD_UTIL, "engine", NULL, PERCENT, 0, NULL, NULL,
	  IDENT_POD },
	{ SC_DEVICE, "device_utilization", "containers.*.engines.*", &F_ACC_CTR_UTIL, "engine", NULL, PERCENT, 0, NULL,
	  NULL, IDENT_CONTAINER },
	/* NVIDIA MIG and GPM: profiling metrics of a GPU or a MIG instance (docs/nvidia.md) */
	{ SC_DEVICE, "device_utilization", "graphics_active_percent", &F_ACC_ACTIVITY, "", "engine=graphics", PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "sm_active_percent", &F_ACC_ACTIVITY, "", "engine=sm", PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "tensor_active_percent", &F_ACC_ACTIVITY, "", "engine=tensor", PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "dram_active_percent", &F_ACC_ACTIVITY, "", "engine=dram", PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "fp64_active_percent", &F_ACC_ACTIVITY, "", "engine=fp64", PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "fp32_active_percent", &F_ACC_ACTIVITY, "", "engine=fp32", PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "fp16_active_percent", &F_ACC_ACTIVITY, "", "engine=fp16", PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "sm_occupancy_percent", &F_ACC_SM_OCC, "", NULL, PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "nvlink_tx_bytes_per_second", &F_ACC_NVLINK_GPM, "", "direction=tx", 0, 0 },
	{ SC_DEVICE, "device_utilization", "nvlink_rx_bytes_per_second", &F_ACC_NVLINK_GPM, "", "direction=rx", 0, 0 },
};
#pragma GCC diagnostic pop

#define NRULES (sizeof(rules) / sizeof(rules[0]))

/* ---- compiled patterns ----------------------------------------------------- */

enum step_kind { ST_KEY, ST_ANY, ST_ELEM, ST_KEYS, ST_SUM, ST_COUNT, ST_ONE };

#define STEP_MAX 8
#define NAMES_MAX 6
#define CAPS_MAX 8
#define NUM_TEXT_MAX 32 /* the text of any JSON integer (int64) or of a real with %.17g */

struct step {
	enum step_kind kind;
	char *names[NAMES_MAX]; /* ST_KEY: names[0]; ST_KEYS/ST_SUM: the list; ST_ELEM: names[0] = label field or NULL */
	size_t nnames;
};

struct compiled {
	struct step steps[STEP_MAX];
	size_t nsteps;
	char *capnames[CAPS_MAX];
	size_t ncaps;
	int pid_cap;            /* the capture labelled "pid" (its identity: process_containers), or -1 */
	int drop_empty;         /* a "*[f,g]" step: captures that are "" are no labels */
	char *fixed_name, *fixed_value;
	char *weight[STEP_MAX]; /* the rule's weight path, split at '.' (nweight keys; 0: none) */
	size_t nweight;
};

static struct compiled compiled[NRULES];
static int compiled_done;

static void split(char *s, char sep, char **out, size_t max, size_t *n)
{
	*n = 0;
	while (s && *s && *n < max) {
		char *e = strchr(s, sep);

		out[(*n)++] = s;
		if (e)
			*e++ = '\0';
		s = e;
	}
}

/*
 * The most labels a sample of rule r can carry: the instance labels, the
 * entry's (runtime: runtime_tag and pid; device: the identity and the index
 * label), the captures and the fixed label.
 */
static size_t rule_max_labels(const struct rule *r, size_t ncaps)
{
	size_t n = MAP_INSTANCE_LABELS_MAX + ncaps + (r->fixed ? 1 : 0);

	switch (r->scope) {
	case SC_RUNTIME:
		n += SCHEMA_RUNTIME_LABELS + MAP_IDENT_LABELS;
		break;
	case SC_DEVICE:
		n += SCHEMA_DEVICE_LABELS + (r->index_label ? 1 : 0) + MAP_IDENT_LABELS;
		break;
	default:
		break;
	}
	return n;
}

/* Split s at sep into out[0..max); -E2BIG (nothing split) when it has more parts than that. */
static int split_checked(char *s, char sep, char **out, size_t max, size_t *n)
{
	size_t parts = 1;

	for (const char *p = s; *p; p++)
		parts += *p == sep;
	if (parts > max)
		return -E2BIG;
	split(s, sep, out, max, n);
	return 0;
}

/*
 * Compile rule r's pattern into c. -E2BIG (with *why) when it has more steps,
 * listed keys or captures than the compiled form holds, or its samples could
 * carry more than SAMPLE_MAX_LABELS labels.
 */
static int compile_rule(const struct rule *r, struct compiled *c, const char **why)
{
	char *p = xstrdup(r->path), *segs[STEP_MAX + 1];
	size_t nseg;

	memset(c, 0, sizeof(*c));
	split(p, '.', segs, STEP_MAX + 1, &nseg);
	if (nseg > STEP_MAX) {
		*why = "more path steps than STEP_MAX";
		return -E2BIG;
	}
	for (size_t i = 0; i < nseg; i++) {
		char *s = segs[i], *br = strchr(s, '[');
		struct step *st;

		if (c->nsteps >= STEP_MAX - (br ? 1 : 0)) {
			*why = "more path steps than STEP_MAX";
			return -E2BIG;
		}
		st = &c->steps[c->nsteps++];
		if (!strcmp(s, "*")) {
			st->kind = ST_ANY;
		} else if (s[0] == '*' && s[1] == '[' && s[strlen(s) - 1] == ']') {
			/* "*[f,g]": every key, with fields of each member as labels too */
			st->kind = ST_ANY;
			c->drop_empty = 1;
			s[strlen(s) - 1] = '\0';
			if (split_checked(s + 2, ',', st->names, NAMES_MAX, &st->nnames)) {
				*why = "more listed keys than NAMES_MAX";
				return -E2BIG;
			}
		} else if (!strcmp(s, "#")) {
			st->kind = ST_COUNT;
		} else if (!strcmp(s, "1")) {
			st->kind = ST_ONE;
			st->names[0] = s; /* keeps the pattern's copy reachable (no leak report) */
		} else if (s[0] == '{') {
			s[strlen(s) - 1] = '\0';
			st->kind = strchr(s, '+') ? ST_SUM : ST_KEYS;
			if (split_checked(s + 1, st->kind == ST_SUM ? '+' : ',', st->names, NAMES_MAX, &st->nnames)) {
				*why = "more listed keys than NAMES_MAX";
				return -E2BIG;
			}
		} else {
			st->kind = ST_KEY;
			st->names[0] = s;
			st->nnames = 1;
			if (br) {
				/* "key[field]": the key, then each element */
				struct step *el = &c->steps[c->nsteps++];

				*br = '\0';
				el->kind = ST_ELEM;
				br[strlen(br + 1)] = '\0';
				el->names[0] = br[1] ? br + 1 : NULL;
			}
		}
	}
	if (r->labels[0] && split_checked(xstrdup(r->labels), ',', c->capnames, CAPS_MAX, &c->ncaps)) {
		*why = "more captured labels than CAPS_MAX";
		return -E2BIG;
	}
	c->pid_cap = -1;
	for (size_t i = 0; i < c->ncaps; i++)
		if (r->scope == SC_DEVICE && !strcmp(c->capnames[i], "pid"))
			c->pid_cap = (int)i;
	if (r->fixed) {
		char *f = xstrdup(r->fixed);

		c->fixed_name = f;
		c->fixed_value = strchr(f, '=');
		if (!c->fixed_value) {
			*why = "a fixed label without '='";
			return -EINVAL;
		}
		*c->fixed_value++ = '\0';
	}
	/* Its group and labels are the schema's (common/schema.h): a new one is a row there first. */
	if (schema_group_lookup(r->group, r->scope == SC_SYSTEM ? SCOPE_SYSTEM : r->scope == SC_RUNTIME ? SCOPE_RUNTIME
					  : SCOPE_DEVICE) < 0) {
		*why = "its group is not in the schema (SCHEMA_GROUPS)";
		return -EINVAL;
	}
	for (size_t i = 0; i < c->ncaps; i++)
		if (!schema_label(c->capnames[i])) {
			*why = "a captured label is not in the schema (SCHEMA_LABELS)";
			return -EINVAL;
		}
	if ((c->fixed_name && !schema_label(c->fixed_name)) || (r->index_label && !schema_label(r->index_label))) {
		*why = "a fixed or index label is not in the schema (SCHEMA_LABELS)";
		return -EINVAL;
	}
	if (r->weight) {
		size_t any = 0;

		for (size_t i = 0; i < c->nsteps; i++)
			any += c->steps[i].kind == ST_ANY;
		if (!any) {
			*why = "a weight without a \"*\" step to find it from";
			return -EINVAL;
		}
		if (split_checked(xstrdup(r->weight), '.', c->weight, STEP_MAX, &c->nweight)) {
			*why = "a weight path longer than STEP_MAX";
			return -E2BIG;
		}
	}
	if (rule_max_labels(r, c->ncaps) > SAMPLE_MAX_LABELS) {
		*why = "its samples could carry more than SAMPLE_MAX_LABELS labels";
		return -E2BIG;
	}
	return 0;
}

int map_rules_check(char *err, size_t size)
{
	static int rc;
	static char msg[256];

	if (!compiled_done) {
		for (size_t r = 0; r < NRULES && !rc; r++) {
			const char *why = NULL;

			rc = compile_rule(&rules[r], &compiled[r], &why);
			if (rc)
				snprintf(msg, sizeof(msg), "rule %zu (%s: %s): %s", r, rules[r].group, rules[r].path, why);
		}
		compiled_done = 1;
	}
	snprintf(err, size, "%s", msg);
	return rc;
}

size_t map_max_labels(void)
{
	size_t m = MAP_INSTANCE_LABELS_MAX + 2; /* neuron_hardware_info: the two counts */

	for (size_t r = 0; r < NRULES; r++) {
		size_t ncaps = 0;

		for (const char *l = rules[r].labels; *l; l++)
			ncaps += *l == ',';
		ncaps += rules[r].labels[0] ? 1 : 0;
		if (rule_max_labels(&rules[r], ncaps) > m)
			m = rule_max_labels(&rules[r], ncaps);
	}
	return m;
}

json_t *map_schema_json(void)
{
	static const char *const scopes[] = { "system", "runtime", "device", "device_group" };
	static const char *const types[] = { "gauge", "counter" };
	json_t *o = json_object(), *fams = json_array(), *rs = json_array();

	for (const struct family *const *f = families; *f; f++)
		json_array_append_new(fams, json_pack("{s:s, s:s, s:s, s:s}", "name", (*f)->name, "type",
						      types[(*f)->type], "unit", (*f)->unit, "help", (*f)->help));
	for (size_t r = 0; r < NRULES; r++) {
		const struct rule *x = &rules[r];
		json_t *scale = x->scale == PERCENT	? json_string("percent")
				: x->scale == BOOLEAN ? json_string("boolean")
						      : json_real(x->scale ? x->scale : 1);

		json_t *rule = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s?, s:o, s:f, s:s?, s:s?}", "scope",
					 scopes[x->scope], "group", x->group, "path", x->path, "family", x->fam->name,
					 "labels", x->labels, "fixed", x->fixed, "scale", scale, "clamp", x->clamp,
					 "device_type", x->device_type, "index_label", x->index_label);

		/* containers: only on the rules that have it, so the other rows read as before */
		if (x->ident)
			json_object_set_new(rule, "ident", json_string(x->ident == IDENT_POD ? "pod" : "container"));
		/* endpoint runtimes: the same */
		if (x->unless)
			json_object_set_new(rule, "unless", json_string(x->unless));
		if (x->only_with)
			json_object_set_new(rule, "only_with", json_string(x->only_with));
		if (x->weight)
			json_object_set_new(rule, "weight", json_string(x->weight));
		json_array_append_new(rs, rule);
	}
	json_object_set_new(o, "families", fams);
	json_object_set_new(o, "rules", rs);
	return o;
}

/*
 * Compile every rule's pattern once. The table is static: a rule that does
 * not fit is a programming error, which test_samples catches
 * (map_rules_check); here it stops the program rather than lose a label.
 */
static void compile_rules(void)
{
	char err[256];

	if (map_rules_check(err, sizeof(err))) {
		log_err("samples: %s", err);
		abort();
	}
}

/* ---- walking ------------------------------------------------------------- */

struct walk {
	const struct rule *rule;
	const struct compiled *c;
	const struct map_cb *cb;
	struct sample s;              /* labels filled up to base_labels */
	size_t base_labels;
	const char *caps[CAPS_MAX];   /* borrowed from the report, or capbuf */
	char capbuf[CAPS_MAX][NUM_TEXT_MAX]; /* a number's text: always fits */
	size_t ncaps;
	const char *where;            /* JSON path of the group, for messages */
	const char *trail[STEP_MAX + 2];
	char trailbuf[STEP_MAX + 2][NUM_TEXT_MAX];
	size_t ntrail;
	struct buf entity;            /* a device's entity, "type:key": any length */
	json_t *dev;                  /* the device object a device rule walks, else NULL */
	json_t *ident;                /* an ident rule: the pod's or container's object its first "*" reached */
	json_t *anchor;               /* the object the last "*" reached (a weight is found from it), or NULL */
	size_t anchor_trail;          /* the length of trail[] at the anchor (messages about a weight) */
	const char *ident_key;        /* and its key (the pod UID or the container id) */
};

static void bad(struct walk *w, const char *leaf, const char *why)
{
	char path[512];
	size_t n = (size_t)snprintf(path, sizeof(path), "%s", w->where);

	for (size_t i = 0; i < w->ntrail && n < sizeof(path); i++)
		n += (size_t)snprintf(path + n, sizeof(path) - n, "%s%s", w->trail[i][0] == '[' ? "" : ".", w->trail[i]);
	if (leaf && n < sizeof(path))
		snprintf(path + n, sizeof(path) - n, ".%s", leaf);
	if (w->cb->bad_value)
		w->cb->bad_value(path, why, w->cb->ud);
}

static const char *kind_of(const json_t *v)
{
	return json_is_string(v) ? "a string" : json_is_object(v) ? "an object" : json_is_array(v) ? "an array"
	       : json_is_boolean(v) ? "a boolean" : "null";
}

/* 1: *out set; 0: absent (missing or null); -1: wrong type (reported). */
static int number(struct walk *w, json_t *v, const char *leaf, double *out)
{
	if (!v || json_is_null(v))
		return 0;
	if (w->rule->scale == BOOLEAN && json_is_boolean(v)) {
		*out = json_is_true(v);
		return 1;
	}
	if (!json_is_number(v) || w->rule->scale == BOOLEAN) {
		char why[64];

		snprintf(why, sizeof(why), "expected %s, got %s", w->rule->scale == BOOLEAN ? "a boolean" : "a number",
			 json_is_number(v) ? "a number" : kind_of(v));
		bad(w, leaf, why);
		return -1;
	}
	*out = json_number_value(v);
	return 1;
}

/*
 * The text of a number used as a label value; 0 when v is not a number. An
 * integral real (an integer a reader decoded as a real, such as one >= 2^63)
 * is written like an integer where it fits int64, else with %.17g: never
 * cast out of range.
 */
static int number_text(const json_t *v, char buf[NUM_TEXT_MAX])
{
	double d;

	if (json_is_integer(v)) {
		snprintf(buf, NUM_TEXT_MAX, "%lld", (long long)json_integer_value(v));
		return 1;
	}
	if (!json_is_real(v))
		return 0;
	d = json_real_value(v);
	if (d == trunc(d) && d >= -0x1p63 && d < 0x1p63)
		snprintf(buf, NUM_TEXT_MAX, "%lld", (long long)d);
	else
		snprintf(buf, NUM_TEXT_MAX, "%.17g", d);
	return 1;
}

static const char *str_or(json_t *o, const char *key, const char *dflt);

/*
 * containers: append pod, namespace and container from identity
 * object o (NULL: nothing) to labels[n..]; pod_key/ctr_key are the
 * aggregate's key when it has one. Each only when it has a value; the
 * container label only for a container. Returns the new count.
 */
static size_t ident_labels(json_t *o, const char *pod_key, const char *ctr_key, struct label *labels, size_t n)
{
	const char *pod, *ns, *ctr;

	if (!json_is_object(o))
		return n;
	pod = str_or(o, "pod", "");
	if (!*pod)
		pod = pod_key ? pod_key : str_or(o, "pod_uid", "");
	ns = str_or(o, "namespace", "");
	ctr = "";
	if (!pod_key) {
		ctr = str_or(o, "name", "");
		if (!*ctr)
			ctr = ctr_key ? ctr_key : str_or(o, "id", "");
	}
	if (*pod)
		labels[n++] = (struct label){ "pod", pod };
	if (*ns)
		labels[n++] = (struct label){ "namespace", ns };
	if (*ctr)
		labels[n++] = (struct label){ "container", ctr };
	return n;
}

static void emit(struct walk *w, double v)
{
	const struct compiled *c = w->c;
	size_t n = w->base_labels;

	if (w->rule->clamp && v > w->rule->clamp)
		v = w->rule->clamp;
	if (w->rule->scale == PERCENT)
		v = v / 100.0;
	else if (w->rule->scale && w->rule->scale != BOOLEAN)
		v *= w->rule->scale;
	/*
	 * A finite reading whose base-unit value is not (1e308 MHz in hertz, a sum
	 * past DBL_MAX): a bad value for every sink, never "inf" in a CSV cell.
	 */
	if (!isfinite(v)) {
		bad(w, NULL, "out of range once converted to base units");
		return;
	}
	/* compile_rule proved that every capture and the fixed label fit (rule_max_labels). */
	for (size_t i = 0; i < w->ncaps && i < c->ncaps; i++)
		if (!c->drop_empty || w->caps[i][0])
			w->s.labels[n++] = (struct label){ c->capnames[i], w->caps[i] };
	if (c->fixed_name)
		w->s.labels[n++] = (struct label){ c->fixed_name, c->fixed_value };
	if (w->ident)
		n = ident_labels(w->ident, w->rule->ident == IDENT_POD ? w->ident_key : NULL,
				 w->rule->ident == IDENT_CONTAINER ? w->ident_key : NULL, w->s.labels, n);
	else if (c->pid_cap >= 0 && (size_t)c->pid_cap < w->ncaps && w->dev)
		n = ident_labels(json_object_get(json_object_get(w->dev, "process_containers"), w->caps[c->pid_cap]),
				 NULL, NULL, w->s.labels, n);
	w->s.nlabels = n;
	w->s.fam = w->rule->fam;
	w->s.value = v;
	w->cb->sample(&w->s, w->cb->ud);
}

static void walk(struct walk *w, json_t *node, size_t i);

static void descend(struct walk *w, json_t *child, size_t i, const char *trail, const char *cap)
{
	size_t nc = w->ncaps, nt = w->ntrail;

	if (cap && w->ncaps < CAPS_MAX)
		w->caps[w->ncaps++] = cap;
	if (w->ntrail < STEP_MAX + 2)
		w->trail[w->ntrail++] = trail;
	walk(w, child, i + 1);
	w->ncaps = nc;
	w->ntrail = nt;
}

/*
 * A weighted rule's value times the number at its weight path inside the
 * object the last "*" reached: 1 with *d updated; 0 when that is absent
 * (nothing to yield) or not a number (reported).
 */
static int weigh(struct walk *w, double *d)
{
	json_t *v = w->anchor;
	size_t nt = w->ntrail;
	double f;
	int rc;

	if (!w->c->nweight)
		return 1;
	for (size_t k = 0; k < w->c->nweight && v; k++)
		v = json_object_get(v, w->c->weight[k]);
	w->ntrail = w->anchor_trail; /* a message names the weight's own path */
	rc = number(w, v, w->rule->weight, &f);
	w->ntrail = nt;
	if (rc != 1)
		return 0;
	*d *= f;
	return 1;
}

static void walk(struct walk *w, json_t *node, size_t i)
{
	const struct step *st;
	const char *key;
	json_t *v;
	double d = 0, sum = 0;
	size_t k;

	if (i == w->c->nsteps) {
		if (number(w, node, NULL, &d) == 1 && weigh(w, &d))
			emit(w, d);
		return;
	}
	st = &w->c->steps[i];
	switch (st->kind) {
	case ST_KEY:
		if (json_is_object(node) && (v = json_object_get(node, st->names[0])))
			descend(w, v, i, st->names[0], NULL);
		break;
	case ST_ANY:
		if (!json_is_object(node))
			break;
		if (w->rule->ident && !w->ident) {
			/* The pod's or container's object: its identity labels the samples, its key does not. */
			json_object_foreach(node, key, v) {
				w->ident = v;
				w->ident_key = key;
				descend(w, v, i, key, NULL);
				w->ident = NULL;
			}
			break;
		}
		json_object_foreach(node, key, v) {
			size_t nc = w->ncaps;
			json_t *anchor = w->anchor;
			size_t anchor_trail = w->anchor_trail;

			w->anchor = v;
			w->anchor_trail = w->ntrail + 1;
			if (st->nnames && nc + 1 + st->nnames <= CAPS_MAX) {
				/* "*[f,g]": the key, then each listed string field of the member ("" where it has none). */
				w->caps[w->ncaps++] = key;
				for (k = 0; k < st->nnames; k++) {
					json_t *fv = json_object_get(v, st->names[k]);

					w->caps[w->ncaps++] = json_is_string(fv) ? json_string_value(fv) : "";
				}
				descend(w, v, i, key, NULL);
			} else {
				descend(w, v, i, key, key);
			}
			w->ncaps = nc;
			w->anchor = anchor;
			w->anchor_trail = anchor_trail;
		}
		break;
	case ST_KEYS:
		if (json_is_object(node))
			for (k = 0; k < st->nnames; k++)
				if ((v = json_object_get(node, st->names[k])))
					descend(w, v, i, st->names[k], st->names[k]);
		break;
	case ST_ELEM:
		if (!json_is_array(node))
			break;
		json_array_foreach(node, k, v) {
			char *buf = w->capbuf[w->ncaps < CAPS_MAX ? w->ncaps : CAPS_MAX - 1];
			char *tb = w->trailbuf[w->ntrail < STEP_MAX + 2 ? w->ntrail : STEP_MAX + 1];
			json_t *f = st->names[0] ? json_object_get(v, st->names[0]) : NULL;
			const char *cap = buf;

			snprintf(tb, NUM_TEXT_MAX, "[%zu]", k);
			if (st->names[0] && json_is_string(f))
				cap = json_string_value(f); /* borrowed whole, never cut */
			else if (!st->names[0] || !number_text(f, buf))
				snprintf(buf, NUM_TEXT_MAX, "%zu", k);
			descend(w, v, i, tb, cap);
		}
		break;
	case ST_SUM:
		if (!json_is_object(node))
			break;
		for (k = 0; k < st->nnames; k++) {
			int rc = number(w, json_object_get(node, st->names[k]), st->names[k], &d);

			if (rc != 1)
				return; /* absent or bad: no sum */
			sum += d;
		}
		if (i + 1 == w->c->nsteps)
			emit(w, sum);
		break;
	case ST_ONE:
		emit(w, 1);
		break;
	case ST_COUNT:
		if (json_is_object(node))
			emit(w, (double)json_object_size(node));
		else if (json_is_array(node))
			emit(w, (double)json_array_size(node));
		break;
	}
}

/* ---- reports ------------------------------------------------------------- */

static const char *str_or(json_t *o, const char *key, const char *dflt)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : dflt;
}

static unsigned long long bad_timestamps;
static struct log_limit bad_ts_limit;

unsigned long long map_bad_timestamps(void)
{
	return bad_timestamps;
}

/*
 * Parse a report's or group's "timestamp"; an invalid one (not ISO 8601 UTC,
 * an impossible date, out of range) is counted and logged (rate-limited),
 * and the caller uses its fallback time. 0 or -EINVAL.
 */
static int parse_ts(const char *iso, const char *where, int64_t *ms)
{
	char q[LOG_QUOTE_BUF];
	int64_t ns;

	if (!iso8601_parse(iso, &ns)) {
		*ms = ns / NS_PER_MS;
		return 0;
	}
	bad_timestamps++;
	log_limited(&bad_ts_limit, "samples: %s.timestamp: invalid time \"%s\"; the time it was read is used instead",
		    where, log_quote(q, sizeof(q), iso, (size_t)-1));
	return -EINVAL;
}

/* The group's collection time: its own "timestamp", else the report's. */
static int64_t group_ts(json_t *g, const char *where, const char *root_iso, int64_t root_ms)
{
	const char *iso = str_or(g, "timestamp", NULL);
	int64_t ms = root_ms;

	if (!iso || (root_iso && !strcmp(iso, root_iso)) || parse_ts(iso, where, &ms))
		return root_ms;
	return ms;
}

/* Does rule r apply to group g, by the keys g has (its unless and only_with)? */
static int rule_applies(const struct rule *r, json_t *g)
{
	return (!r->unless || !json_object_get(g, r->unless)) && (!r->only_with || json_object_get(g, r->only_with));
}

/* Apply every rule of scope sc to each group of the object groups. */
static void map_groups(struct walk *w, enum scope sc, json_t *groups, const char *where, const char *root_iso,
		       int64_t root_ms)
{
	const char *name;
	json_t *g;
	char gwhere[256];

	if (!json_is_object(groups))
		return;
	json_object_foreach(groups, name, g) {
		const char *err;
		json_t *per;
		int seen = 0;

		if (!json_is_object(g))
			continue;
		err = str_or(g, "error", "");
		for (size_t r = 0; r < NRULES; r++) {
			if (rules[r].scope != sc || strcmp(rules[r].group, name))
				continue;
			if (!seen++) {
				if (*err) {
					if (w->cb->group_error)
						w->cb->group_error(name, w->s.entity, err, w->cb->ud);
					break;
				}
				w->s.group = name;
				snprintf(gwhere, sizeof(gwhere), "%s.%s", where, name);
				w->s.ts_ms = group_ts(g, gwhere, root_iso, root_ms);
				per = json_object_get(g, "period");
				w->s.period = json_is_number(per) ? json_number_value(per) : 0;
				w->where = gwhere;
			}
			if (!rule_applies(&rules[r], g))
				continue;
			w->rule = &rules[r];
			w->c = &compiled[r];
			w->ncaps = w->ntrail = 0;
			walk(w, g, 0);
		}
	}
}

/* Does rule r apply to group gname of a device_data entry of this type, in scope sc? */
static int device_rule(const struct rule *r, enum scope sc, const char *gname, const char *type)
{
	return r->scope == sc && !strcmp(r->group, gname) && (!r->device_type || !strcmp(r->device_type, type));
}

/* Every device of every group of one device_data entry. */
static void map_device_entry(struct walk *w, json_t *ent, size_t idx, const char *root_iso, int64_t root_ms)
{
	const char *type = str_or(ent, "device_type", ""), *gname, *dkey;
	json_t *g, *dev, *per;
	size_t base = w->s.ninstance, ndev = base;
	char gwhere[256], numbuf[LBL_COUNT][NUM_TEXT_MAX]; /* optional device labels' numbers as text */

	if (*str_or(ent, "error", "")) {
		if (w->cb->group_error)
			w->cb->group_error("device", type, str_or(ent, "error", ""), w->cb->ud);
		return;
	}
	json_object_foreach(json_object_get(ent, "report"), gname, g) {
		size_t r0;

		for (r0 = 0; r0 < NRULES && !device_rule(&rules[r0], SC_DEVICE, gname, type) &&
			     !device_rule(&rules[r0], SC_DEVICE_GROUP, gname, type);
		     r0++)
			;
		if (r0 == NRULES || !json_is_object(g))
			continue;
		if (*str_or(g, "error", "")) {
			if (w->cb->group_error)
				w->cb->group_error(gname, type, str_or(g, "error", ""), w->cb->ud);
			continue;
		}
		w->s.group = gname;
		snprintf(gwhere, sizeof(gwhere), "device_data[%zu].report.%s", idx, gname);
		w->s.ts_ms = group_ts(g, gwhere, root_iso, root_ms);
		per = json_object_get(g, "period");
		w->s.period = json_is_number(per) ? json_number_value(per) : 0;
		/* Counts over the kind's devices: instance labels only. */
		w->s.entity = type;
		w->s.device_type = w->s.device = NULL;
		w->base_labels = base;
		w->where = gwhere;
		for (size_t r = r0; r < NRULES; r++) {
			if (!device_rule(&rules[r], SC_DEVICE_GROUP, gname, type) || !rule_applies(&rules[r], g))
				continue;
			w->rule = &rules[r];
			w->c = &compiled[r];
			w->ncaps = w->ntrail = 0;
			walk(w, g, 0);
		}
		json_object_foreach(json_object_get(g, "devices"), dkey, dev) {
			const char *entity;

			if (!json_is_object(dev))
				continue;
			buf_reset(&w->entity);
			if (buf_add(&w->entity, type, strlen(type)) || buf_add(&w->entity, ":", 1) ||
			    buf_add(&w->entity, dkey, strlen(dkey)))
				continue; /* not reached: the cap is the report's own size */
			entity = w->entity.data;
			if (*str_or(dev, "error", "")) {
				if (w->cb->group_error)
					w->cb->group_error(gname, entity, str_or(dev, "error", ""), w->cb->ud);
				continue;
			}
			w->s.entity = entity;
			w->s.device_type = type;
			w->s.device = dkey;
			/* The schema's device labels, in its order: the kind, the key, then the device's own keys. */
			ndev = base;
			for (size_t l = 0; l < LBL_COUNT; l++) {
				const struct schema_label *sl = &schema_labels[l];

				if (sl->kind != LK_DEVICE)
					continue;
				if (sl->flags & LABEL_OPTIONAL) {
					/* Only on devices that have it (NVIDIA MIG instances' ids and profile). */
					json_t *v = json_object_get(dev, sl->source);

					if (json_is_string(v))
						w->s.labels[ndev++] = (struct label){ sl->name, json_string_value(v) };
					else if (number_text(v, numbuf[l]))
						w->s.labels[ndev++] = (struct label){ sl->name, numbuf[l] };
					continue;
				}
				w->s.labels[ndev++] = (struct label){ sl->name, l == LBL_DEVICE_TYPE ? type
									: l == LBL_DEVICE ? dkey
									: str_or(dev, sl->source, "") };
			}
			snprintf(gwhere, sizeof(gwhere), "device_data[%zu].report.%s.devices.%s", idx, gname, dkey);
			w->where = gwhere;
			for (size_t r = r0; r < NRULES; r++) {
				if (!device_rule(&rules[r], SC_DEVICE, gname, type) || !rule_applies(&rules[r], g))
					continue;
				w->base_labels = ndev;
				if (rules[r].index_label)
					w->s.labels[w->base_labels++] = (struct label){ rules[r].index_label, dkey };
				w->rule = &rules[r];
				w->c = &compiled[r];
				w->ncaps = w->ntrail = 0;
				w->dev = dev;
				walk(w, dev, 0);
				w->dev = NULL;
			}
		}
	}
}

/* The instance labels of the last report that had instance_info (owned copies); host NULL: none yet. */
static struct {
	const char *name[MAP_INSTANCE_LABELS_MAX];
	char *value[MAP_INSTANCE_LABELS_MAX];
	char *host;
	size_t n;
} last_inst;

void map_reset(void)
{
	for (size_t i = 0; i < last_inst.n; i++)
		free(last_inst.value[i]);
	free(last_inst.host);
	memset(&last_inst, 0, sizeof(last_inst));
}

/*
 * Keep inst's labels (the schema's instance labels) and hostname for this
 * and later reports; inst NULL: every label empty (no instance_info yet).
 */
static void remember_instance(json_t *inst)
{
	map_reset();
	for (size_t i = 0; i < LBL_COUNT; i++) {
		const struct schema_label *l = &schema_labels[i];

		/* Optional ones (ultraserver_id: Trn2 UltraServers, as the AWS exporter) only when present. */
		if (l->kind != LK_INSTANCE || ((l->flags & LABEL_OPTIONAL) && !json_object_get(inst, l->source)))
			continue;
		last_inst.name[last_inst.n] = l->name;
		last_inst.value[last_inst.n++] = xstrdup(str_or(inst, l->source, ""));
	}
	last_inst.host = xstrdup(str_or(inst, "hostname", ""));
}

static enum report_format detect(json_t *report, json_t **rts)
{
	json_t *first;

	if ((*rts = json_object_get(report, "runtime_data")) || json_object_get(report, "monitor"))
		return FORMAT_ACCEL;
	*rts = json_object_get(report, "neuron_runtime_data");
	first = json_array_get(*rts, 0);
	if (json_object_get(report, "instance_data") || json_object_get(first, "neuron_runtime_index"))
		return FORMAT_NEURON_2020;
	return FORMAT_NEURON_2X;
}

enum report_format map_report(json_t *report, int64_t now_ms, const struct map_cb *cb)
{
	struct walk w;
	json_t *rts, *inst, *hw, *e;
	enum report_format fmt;
	const char *root_iso;
	int64_t root_ms = now_ms;
	char where[64], tagbuf[NUM_TEXT_MAX], pidbuf[NUM_TEXT_MAX];
	size_t i, ninst;

	if (!compiled_done)
		compile_rules();
	memset(&w, 0, sizeof(w));
	w.cb = cb;
	buf_init(&w.entity, SIZE_MAX / 2);
	fmt = detect(report, &rts);
	root_iso = str_or(report, "timestamp", NULL);
	/* Invalid: root_ms stays now_ms; a group with the same text gets it too, counted once. */
	if (root_iso)
		(void)parse_ts(root_iso, "report", &root_ms);

	/*
	 * Instance labels, on every sample. A report without instance_info keeps
	 * those of the last report that had one: missing is not a change of instance.
	 */
	inst = json_object_get(report, fmt == FORMAT_NEURON_2020 ? "instance_data" : "instance_info");
	if (!inst)
		inst = json_object_get(report, "instance_data");
	if (json_is_object(inst) || !last_inst.host)
		remember_instance(json_is_object(inst) ? inst : NULL);
	for (i = 0; i < last_inst.n; i++)
		w.s.labels[i] = (struct label){ last_inst.name[i], last_inst.value[i] };
	ninst = w.s.ninstance = last_inst.n;
	w.s.host = last_inst.host ? last_inst.host : "";

	/* instance_info and neuron_hardware_info: gauges of 1 carrying labels. */
	w.s.entity = "instance";
	w.s.group = "instance_info";
	w.s.ts_ms = root_ms;
	w.s.period = 0;
	w.s.fam = &F_INSTANCE;
	w.s.value = 1;
	w.s.nlabels = ninst;
	cb->sample(&w.s, cb->ud);
	hw = json_object_get(report, "neuron_hardware_info");
	if (json_is_object(hw) && !*str_or(hw, "error", "")) {
		json_t *dc = json_object_get(hw, "neuron_device_count"), *cc = json_object_get(hw, "neuroncore_per_device_count");
		char dcs[NUM_TEXT_MAX] = "0", ccs[NUM_TEXT_MAX] = "0";

		number_text(dc, dcs);
		number_text(cc, ccs);
		w.s.group = "neuron_hardware_info";
		w.s.fam = &F_NEURON_HW;
		w.s.labels[ninst] = (struct label){ "neuron_device_count", dcs };
		w.s.labels[ninst + 1] = (struct label){ "neuroncore_per_device_count", ccs };
		w.s.nlabels = ninst + 2;
		cb->sample(&w.s, cb->ud);
	} else if (json_is_object(hw) && cb->group_error) {
		cb->group_error("neuron_hardware_info", "instance", str_or(hw, "error", ""), cb->ud);
	}

	/* Runtime entries. */
	json_array_foreach(rts, i, e) {
		const char *tag, *err;
		json_t *pid = json_object_get(e, "pid");

		if (!json_is_object(e))
			continue;
		if (fmt == FORMAT_NEURON_2020) {
			if (!number_text(json_object_get(e, "neuron_runtime_index"), tagbuf))
				snprintf(tagbuf, sizeof(tagbuf), "0");
			tag = tagbuf;
		} else {
			tag = str_or(e, fmt == FORMAT_ACCEL ? "runtime_tag" : "neuron_runtime_tag", NULL);
			if ((!tag || !*tag) && number_text(pid, tagbuf)) {
				tag = tagbuf;
			} else if (!tag || !*tag) {
				tag = str_or(e, "address", "");
			}
		}
		w.s.entity = tag;
		w.s.prom_skip = 0;
		err = str_or(e, "error", "");
		if (*err) {
			if (cb->group_error)
				cb->group_error("runtime", tag, err, cb->ud);
			continue;
		}
		w.s.labels[ninst] = (struct label){ "runtime_tag", tag };
		w.s.runtime_tag = tag;
		w.base_labels = ninst + 1;
		/*
		 * The pid keeps runtimes apart that share a name (accel-monitor: one entry per process)
		 * or a neuron_runtime_tag. neuron-monitor-prometheus.py has no pid label: accel-prom
		 * leaves it out of neuron-monitor's series (prom_skip) and sums them as it does.
		 */
		if (fmt != FORMAT_NEURON_2020 && number_text(pid, pidbuf)) {
			if (fmt == FORMAT_NEURON_2X)
				w.s.prom_skip = 1u << w.base_labels;
			w.s.labels[w.base_labels++] = (struct label){ "pid", pidbuf };
		}
		/* containers: whose process it is */
		w.base_labels = ident_labels(json_object_get(e, "container"), NULL, NULL, w.s.labels, w.base_labels);
		snprintf(where, sizeof(where), "%s[%zu].report", fmt == FORMAT_ACCEL ? "runtime_data" : "neuron_runtime_data", i);
		map_groups(&w, SC_RUNTIME, json_object_get(e, "report"), where, root_iso, root_ms);
	}

	w.s.prom_skip = 0;
	w.s.runtime_tag = NULL;
	json_array_foreach(json_object_get(report, "device_data"), i, e)
		if (json_is_object(e))
			map_device_entry(&w, e, i, root_iso, root_ms);

	w.s.prom_skip = 0;
	w.s.device_type = w.s.device = NULL;
	w.s.entity = "system";
	w.base_labels = ninst;
	map_groups(&w, SC_SYSTEM, json_object_get(report, "system_data"), "system_data", root_iso, root_ms);
	buf_free(&w.entity);
	return fmt;
}
