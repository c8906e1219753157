/* SPDX-License-Identifier: MIT */
/*
 * The rows of the neuron collector (monitor/sysfs/coll_neuron.c): the fields it writes, the
 * families it adds and the rules that map them (common/rows.h says what
 * rows are). Data only: the mapping library and the collector both read it.
 */
#include "../rows.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const struct map_field neuron_fields[] = {
	/* beside the fields every kind of device has (common/all_rows.c) */
	FIELD(DEVICE_INFO, "neuron", "core_count", "int", WHY_FACT),
	FIELD(DEVICE_INFO, "neuron", "arch_type", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, "neuron", "device_name", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, "neuron", "device_type", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, "neuron", "instance_type", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, "neuron", "connected_devices", "ints", WHY_FACT),
	FIELD(DEVICE_UTILIZATION, "neuron", "neuroncores", "neuroncores_util", NULL),
	FIELD(DEVICE_UTILIZATION, "neuron", "neuroncores.*.{utilization_percent,inferences,flops,model_loads}", NULL,
	  NULL),
	FIELD(DEVICE_UTILIZATION, "neuron", "neuroncores.*.{reset_requests,reset_failures,status}", NULL, NULL),
	FIELD(DEVICE_UTILIZATION, "neuron", "neuroncores.*.status_total", NULL, WHY_RUNNING),
	FIELD(DEVICE_MEMORY, "neuron", "neuroncores", "int_map_by_core", NULL),
	FIELD(DEVICE_MEMORY, "neuron", "host_bytes", "int_map", NULL),
	FIELD(DEVICE_MEMORY, "neuron", "host_used_bytes", "int", WHY_SUM " (host_bytes, by category)"),
	FIELD(DEVICE_POWER, "neuron", "power_percent", "pct", NULL),
	FIELD(DEVICE_ERRORS, "neuron", "ecc_events", "int_map", NULL),
	FIELD(DEVICE_ERRORS, "neuron", "ecc_events_total", "int_map", WHY_RUNNING),
};

static const struct family neuron_families[] = {
	/* neuron-monitor's families where it has one (common/all_rows.c: neuroncore_*), else these */
	GAUGE("accelerator_power_utilization_ratio", "Accelerator power draw as a ratio of its maximum power", "ratio"),
	GAUGE("accelerator_host_memory_used_bytes", "Host memory used for an accelerator by category, bytes", "bytes"),
	COUNTER("accelerator_execution_status_total", "Accelerator core executions by return status", "count"),
	COUNTER("accelerator_inferences_total", "Accelerator core inferences completed", "count"),
	COUNTER("accelerator_flops_total", "Accelerator core floating-point operations", "count"),
	COUNTER("accelerator_model_loads_total", "Accelerator core model loads", "count"),
	COUNTER("accelerator_reset_requests_total", "Accelerator core reset requests", "count"),
	COUNTER("accelerator_reset_failures_total", "Accelerator core resets that failed", "count"),
	COUNTER("accelerator_ecc_events_total",
	        "Accelerator ECC events by the driver's own counter (a finer split of accelerator_ecc_errors_total)",
	        "count"),
};

static const struct map_rule neuron_rules[] = {
	/* the system group in neuron-monitor 2.x's schema (coll_neuron_hw_ops; neuron-monitor's own too) */
	{ SC_SYSTEM, "neuron_hw_counters",
	  "neuron_devices[neuron_device_index].{mem_ecc_corrected,mem_ecc_uncorrected,sram_ecc_corrected,"
	  "sram_ecc_uncorrected}",
	  "hardware_ecc_events_total", "neuron_device_index,event_type", NULL, 0, 0 },
	{ SC_DEVICE, "device_power", "power_percent", "accelerator_power_utilization_ratio", "", NULL, PERCENT, 0 },
	/*
	 * Neuron devices' ECC events by the driver's counter name: not hardware_ecc_events_total, which is
	 * neuron_hw_counters' (as neuron-monitor-prometheus.py serves it), nor accelerator_ecc_errors_total,
	 * which already has their corrected/uncorrected sums: no event is counted twice in any family.
	 */
	{ SC_DEVICE, "device_errors", "ecc_events.*", "accelerator_ecc_events_total", "event_type", NULL, 0, 0,
	  "neuron" },
	/* per NeuronCore: neuron-monitor's families where it has one */
	{ SC_DEVICE, "device_utilization", "neuroncores.*.utilization_percent", "neuroncore_utilization_ratio",
	  "neuroncore", NULL, PERCENT, 0, "neuron" },
	{ SC_DEVICE, "device_utilization", "neuroncores.*.status.*", "accelerator_execution_status_total",
	  "neuroncore,status", NULL, 0, 0, "neuron" },
	{ SC_DEVICE, "device_utilization", "neuroncores.*.inferences", "accelerator_inferences_total", "neuroncore",
	  NULL, 0, 0, "neuron" },
	{ SC_DEVICE, "device_utilization", "neuroncores.*.flops", "accelerator_flops_total", "neuroncore", NULL, 0, 0,
	  "neuron" },
	{ SC_DEVICE, "device_memory", "neuroncores.*.constants", "neuroncore_memory_usage_constants", "neuroncore",
	  "memory_location=None", 0, 0, "neuron" },
	{ SC_DEVICE, "device_memory", "neuroncores.*.model_code", "neuroncore_memory_usage_model_code", "neuroncore",
	  "memory_location=None", 0, 0, "neuron" },
	{ SC_DEVICE, "device_memory", "neuroncores.*.model_shared_scratchpad",
	  "neuroncore_memory_usage_model_shared_scratchpad", "neuroncore", "memory_location=None", 0, 0, "neuron" },
	{ SC_DEVICE, "device_memory", "neuroncores.*.runtime_memory", "neuroncore_memory_usage_runtime_memory",
	  "neuroncore", "memory_location=None", 0, 0, "neuron" },
	{ SC_DEVICE, "device_memory", "neuroncores.*.tensors", "neuroncore_memory_usage_tensors", "neuroncore",
	  "memory_location=None", 0, 0, "neuron" },
	{ SC_DEVICE, "device_memory", "host_bytes.*", "accelerator_host_memory_used_bytes", "category", NULL, 0, 0,
	  "neuron" },
	{ SC_DEVICE, "device_utilization", "neuroncores.*.model_loads", "accelerator_model_loads_total", "neuroncore",
	  NULL, 0, 0, "neuron" },
	{ SC_DEVICE, "device_utilization", "neuroncores.*.reset_requests", "accelerator_reset_requests_total",
	  "neuroncore", NULL, 0, 0, "neuron" },
	{ SC_DEVICE, "device_utilization", "neuroncores.*.reset_failures", "accelerator_reset_failures_total",
	  "neuroncore", NULL, 0, 0, "neuron" },
};

const struct map_rows neuron_rows = {
	"neuron", __FILE__, ROWS_FIELDS(neuron_fields), ROWS_FAMILIES(neuron_families), ROWS_RULES(neuron_rules),
};
