/* SPDX-License-Identifier: MIT */
/*
 * The rows of the amdgpu collector (monitor/sysfs/coll_amdgpu.c): the fields it writes, the
 * families it adds and the rules that map them (common/rows.h says what
 * rows are). Data only: the mapping library and the collector both read it.
 */
#include "../rows.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const struct map_field amdgpu_fields[] = {
	/* beside the fields every kind of device has (common/all_rows.c) */
	FIELD(DEVICE_INFO, "amdgpu", "product_number", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, "amdgpu", "vbios_version", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, "amdgpu", "pci_device_id", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, "amdgpu", "card", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, "amdgpu", "pcie_link_speed_gts", "num", NULL),
	FIELD(DEVICE_INFO, "amdgpu", "pcie_link_max_speed_gts", "num", NULL),
	FIELD(DEVICE_INFO, "amdgpu", "pcie_link_width", "int", NULL),
	FIELD(DEVICE_INFO, "amdgpu", "pcie_link_max_width", "int", NULL),
	FIELD(DEVICE_INFO, "amdgpu", "performance_level", "str",
	  "a setting's name (power_dpm_force_performance_level): text"),
	FIELD(DEVICE_UTILIZATION, "amdgpu", "video_percent", "pct", NULL),
	FIELD(DEVICE_UTILIZATION, "amdgpu", "processes", "engine_pct_by_pid", NULL),
	FIELD(DEVICE_MEMORY, "amdgpu", "gtt_total_bytes", "int", NULL),
	FIELD(DEVICE_MEMORY, "amdgpu", "gtt_used_bytes", "int", NULL),
	FIELD(DEVICE_MEMORY, "amdgpu", "visible_total_bytes", "int", NULL),
	FIELD(DEVICE_MEMORY, "amdgpu", "visible_used_bytes", "int", NULL),
	FIELD(DEVICE_THERMAL, "amdgpu", "fan_rpm", "num_map", NULL),
	FIELD(DEVICE_THERMAL, "amdgpu", "temperatures_crit_celsius", "num_map", NULL),
	FIELD(DEVICE_POWER, "amdgpu", "voltages_volts", "num_map", NULL),
	FIELD(DEVICE_ERRORS, "amdgpu", "pcie_aer_errors", "int_map", NULL),
	FIELD(DEVICE_ERRORS, "amdgpu", "pcie_aer_errors_total", "int_map", WHY_RUNNING),
};

static const struct family amdgpu_families[] = {
	GAUGE("accelerator_process_utilization_ratio",
	      "Accelerator engine busy time of a process over the period, as a ratio", "ratio"),
	GAUGE("accelerator_gtt_memory_total_bytes", "Accelerator GTT (host memory the GPU maps) total bytes", "bytes"),
	GAUGE("accelerator_gtt_memory_used_bytes", "Accelerator GTT (host memory the GPU maps) used bytes", "bytes"),
	GAUGE("accelerator_pcie_link_speed_transfers_per_second",
	      "Accelerator PCIe link speed, current or maximum, transfers per second", "transfers_per_second"),
	GAUGE("accelerator_pcie_link_width", "Accelerator PCIe link width, current or maximum, lanes", ""),
	GAUGE("accelerator_visible_memory_total_bytes",
	      "Accelerator device memory the CPU can map (visible VRAM) total bytes", "bytes"),
	GAUGE("accelerator_visible_memory_used_bytes",
	      "Accelerator device memory the CPU can map (visible VRAM) used bytes", "bytes"),
	COUNTER("accelerator_pcie_aer_errors_total", "Accelerator PCIe AER errors by severity", "count"),
};

static const struct map_rule amdgpu_rules[] = {
	/* amdgpu's own fields; rows without a device_type apply to any kind that has the field */
	{ SC_DEVICE, "device_utilization", "video_percent", "accelerator_utilization_ratio", "", "engine=video",
	  PERCENT, 0 },
	{ SC_DEVICE, "device_utilization", "processes.*.*", "accelerator_process_utilization_ratio", "pid,engine", NULL,
	  PERCENT, 0 },
	{ SC_DEVICE, "device_memory", "gtt_total_bytes", "accelerator_gtt_memory_total_bytes", "", NULL, 0, 0,
	  "amdgpu" },
	{ SC_DEVICE, "device_memory", "gtt_used_bytes", "accelerator_gtt_memory_used_bytes", "", NULL, 0, 0, "amdgpu" },
	/* the PCIe link, current and maximum (docs/devices.md) */
	{ SC_DEVICE, "device_info", "pcie_link_speed_gts", "accelerator_pcie_link_speed_transfers_per_second", "",
	  "link=current", 1e9, 0 },
	{ SC_DEVICE, "device_info", "pcie_link_max_speed_gts", "accelerator_pcie_link_speed_transfers_per_second", "",
	  "link=max", 1e9, 0 },
	{ SC_DEVICE, "device_info", "pcie_link_width", "accelerator_pcie_link_width", "", "link=current", 0, 0 },
	{ SC_DEVICE, "device_info", "pcie_link_max_width", "accelerator_pcie_link_width", "", "link=max", 0, 0 },
	{ SC_DEVICE, "device_memory", "visible_total_bytes", "accelerator_visible_memory_total_bytes", "", NULL, 0, 0,
	  "amdgpu" },
	{ SC_DEVICE, "device_memory", "visible_used_bytes", "accelerator_visible_memory_used_bytes", "", NULL, 0, 0,
	  "amdgpu" },
	{ SC_DEVICE, "device_errors", "pcie_aer_errors.*", "accelerator_pcie_aer_errors_total", "severity", NULL, 0, 0,
	  "amdgpu" },
};

const struct map_rows amdgpu_rows = {
	"amdgpu", __FILE__, ROWS_FIELDS(amdgpu_fields), ROWS_FAMILIES(amdgpu_families), ROWS_RULES(amdgpu_rules),
};
