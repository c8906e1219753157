/* SPDX-License-Identifier: MIT */
/*
 * The rows of the nvidia collector (monitor/nvidia/coll_nvidia.c): the fields it writes, the
 * families it adds and the rules that map them (common/rows.h says what
 * rows are). Data only: the mapping library and the collector both read it.
 */
#include "../rows.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const struct map_field nvidia_fields[] = {
	/* beside the fields every kind of device has (common/all_rows.c) */
	FIELD(DEVICE_INFO, "nvidia", "nvml_version", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, "nvidia", "cuda_driver_version", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, "nvidia", "mig_mode", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, "nvidia", "profiling_unavailable", "str",
	  "text: why a GPU or MIG instance has no GPM metrics"),
	/* GPM (nvidia_gpm.c), on GPUs and MIG instances that support it */
	FIELD(DEVICE_UTILIZATION, "nvidia", "graphics_active_percent", "pct", NULL),
	FIELD(DEVICE_UTILIZATION, "nvidia", "sm_active_percent", "pct", NULL),
	FIELD(DEVICE_UTILIZATION, "nvidia", "sm_occupancy_percent", "pct", NULL),
	FIELD(DEVICE_UTILIZATION, "nvidia", "tensor_active_percent", "pct", NULL),
	FIELD(DEVICE_UTILIZATION, "nvidia", "dram_active_percent", "pct", NULL),
	FIELD(DEVICE_UTILIZATION, "nvidia", "fp64_active_percent", "pct", NULL),
	FIELD(DEVICE_UTILIZATION, "nvidia", "fp32_active_percent", "pct", NULL),
	FIELD(DEVICE_UTILIZATION, "nvidia", "fp16_active_percent", "pct", NULL),
	FIELD(DEVICE_UTILIZATION, "nvidia", "nvlink_tx_bytes_per_second", "int", NULL),
	FIELD(DEVICE_UTILIZATION, "nvidia", "nvlink_rx_bytes_per_second", "int", NULL),
	/* MIG (nvidia_mig.c) */
	FIELD(DEVICE_MEMORY, "nvidia", "mig_devices", "mig_devices", NULL),
	FIELD(DEVICE_MEMORY, "nvidia", "mig_devices.*.{total_bytes,used_bytes,free_bytes}", NULL, NULL),
	FIELD(DEVICE_MEMORY, "nvidia", "mig_devices.*.{uuid,gpu_instance_id,compute_instance_id}", NULL,
	  "the MIG device's identity; its memory families are labelled by its index (mig_device)"),
	/* events (nvidia_events.c), NVLink (nvidia_links.c) and clock-event reasons (docs/nvidia.md) */
	FIELD(DEVICE_THERMAL, "nvidia", "clock_event_reasons", "int_map", NULL),
	FIELD(DEVICE_THERMAL, "nvidia", "clock_event_reasons_mask", "int", NULL),
	FIELD(DEVICE_UTILIZATION, "nvidia", "nvlink", "nvlink", NULL),
	FIELD(DEVICE_UTILIZATION, "nvidia", "nvlink.*.{active,tx_bytes_per_second,rx_bytes_per_second}", NULL, NULL),
	FIELD(DEVICE_ERRORS, "nvidia", "nvlink_errors", "nvlink_errors", NULL),
	FIELD(DEVICE_ERRORS, "nvidia", "nvlink_errors.*.{replay,recovery,crc_flit,crc_data}", NULL, NULL),
	FIELD(DEVICE_ERRORS, "nvidia", "xid_errors", "int_map", NULL),
	FIELD(DEVICE_ERRORS, "nvidia", "last_xid_time", "str",
	  "a time as text: accelerator_xid_errors_total's increase marks it in the series"),
	FIELD(DEVICE_ERRORS, "nvidia", "xid_events", "xid_events",
	  "each XID with its time, for readers of the stream: xid_errors counts them, exported"),
	FIELD(DEVICE_ERRORS, "nvidia", "events", "int_map", NULL),
};

static const struct family nvidia_families[] = {
	/* MIG and GPM */
	GAUGE("accelerator_mig_memory_total_bytes", "MIG device memory total bytes", "bytes"),
	GAUGE("accelerator_mig_memory_used_bytes", "MIG device memory used bytes", "bytes"),
	GAUGE("accelerator_mig_memory_free_bytes", "MIG device memory free bytes", "bytes"),
	GAUGE("accelerator_activity_ratio",
	      "Accelerator unit activity over the period from its performance counters (NVIDIA GPM), as a ratio",
	      "ratio"),
	GAUGE("accelerator_sm_occupancy_ratio",
	      "Accelerator warps resident over the period as a ratio of the theoretical maximum (NVIDIA GPM)", "ratio"),
	/* the GPU's (or MIG instance's) total over all links: a family apart from the per-link one, below */
	GAUGE("accelerator_nvlink_total_throughput_bytes_per_second",
	      "Accelerator NVLink throughput over all links by direction, mean over the period (NVIDIA GPM), "
	      "bytes per second",
	      "bytes_per_second"),
	/* events and NVLink */
	COUNTER("accelerator_xid_errors_total",
	        "Accelerator XID errors by code, as the driver's events report them", "count"),
	COUNTER("accelerator_device_events_total",
	        "Accelerator device events by type: ECC, clock change, GPU unavailable (driver events), GPU lost",
	        "count"),
	GAUGE("accelerator_clock_event_reasons",
	      "1 while the reason holds the accelerator's clocks down (clock event, formerly throttle, reason)", ""),
	GAUGE("accelerator_clock_event_reasons_mask",
	      "The accelerator's clock event reasons as the driver's bit mask", ""),
	GAUGE("accelerator_nvlink_active", "1 while the NVLink link is active", ""),
	GAUGE("accelerator_nvlink_throughput_bytes_per_second",
	      "NVLink data throughput by link and direction over the period, bytes per second", "bytes_per_second"),
	COUNTER("accelerator_nvlink_errors_total",
	        "NVLink errors by link and type (replay, recovery, crc_flit, crc_data)", "count"),
};

static const struct map_rule nvidia_rules[] = {
	/*
	 * MIG and GPM rows have no device_type: only NVIDIA GPUs and their MIG instances have these fields,
	 * and the MIG instances' own fields are the GPU's.
	 */
	{ SC_DEVICE, "device_memory", "mig_devices.*.total_bytes", "accelerator_mig_memory_total_bytes", "mig_device",
	  NULL, 0, 0 },
	{ SC_DEVICE, "device_memory", "mig_devices.*.used_bytes", "accelerator_mig_memory_used_bytes", "mig_device",
	  NULL, 0, 0 },
	{ SC_DEVICE, "device_memory", "mig_devices.*.free_bytes", "accelerator_mig_memory_free_bytes", "mig_device",
	  NULL, 0, 0 },
	/* events and NVLink */
	{ SC_DEVICE, "device_errors", "xid_errors.*", "accelerator_xid_errors_total", "xid", NULL, 0, 0, "nvidia" },
	{ SC_DEVICE, "device_errors", "events.*", "accelerator_device_events_total", "event_type", NULL, 0, 0,
	  "nvidia" },
	{ SC_DEVICE, "device_thermal", "clock_event_reasons.*", "accelerator_clock_event_reasons", "reason", NULL, 0, 0,
	  "nvidia" },
	{ SC_DEVICE, "device_thermal", "clock_event_reasons_mask", "accelerator_clock_event_reasons_mask", "", NULL, 0,
	  0, "nvidia" },
	{ SC_DEVICE, "device_utilization", "nvlink.*.active", "accelerator_nvlink_active", "link", NULL, BOOLEAN, 0,
	  "nvidia" },
	{ SC_DEVICE, "device_utilization", "nvlink.*.tx_bytes_per_second",
	  "accelerator_nvlink_throughput_bytes_per_second", "link", "direction=tx", 0, 0, "nvidia" },
	{ SC_DEVICE, "device_utilization", "nvlink.*.rx_bytes_per_second",
	  "accelerator_nvlink_throughput_bytes_per_second", "link", "direction=rx", 0, 0, "nvidia" },
	{ SC_DEVICE, "device_errors", "nvlink_errors.*.{replay,recovery,crc_flit,crc_data}",
	  "accelerator_nvlink_errors_total", "link,type", NULL, 0, 0, "nvidia" },
	/* GPM: profiling metrics of a GPU or a MIG instance (docs/nvidia.md) */
	{ SC_DEVICE, "device_utilization", "graphics_active_percent", "accelerator_activity_ratio", "",
	  "engine=graphics", PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "sm_active_percent", "accelerator_activity_ratio", "", "engine=sm", PERCENT,
	  0 },
	{ SC_DEVICE, "device_utilization", "tensor_active_percent", "accelerator_activity_ratio", "", "engine=tensor",
	  PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "dram_active_percent", "accelerator_activity_ratio", "", "engine=dram",
	  PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "fp64_active_percent", "accelerator_activity_ratio", "", "engine=fp64",
	  PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "fp32_active_percent", "accelerator_activity_ratio", "", "engine=fp32",
	  PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "fp16_active_percent", "accelerator_activity_ratio", "", "engine=fp16",
	  PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "sm_occupancy_percent", "accelerator_sm_occupancy_ratio", "", NULL, PERCENT,
	  0 },
	{ SC_DEVICE, "device_utilization", "nvlink_tx_bytes_per_second",
	  "accelerator_nvlink_total_throughput_bytes_per_second", "", "direction=tx", 0, 0 },
	{ SC_DEVICE, "device_utilization", "nvlink_rx_bytes_per_second",
	  "accelerator_nvlink_total_throughput_bytes_per_second", "", "direction=rx", 0, 0 },
};

const struct map_rows nvidia_rows = {
	"nvidia", __FILE__, ROWS_FIELDS(nvidia_fields), ROWS_FAMILIES(nvidia_families), ROWS_RULES(nvidia_rules),
};
