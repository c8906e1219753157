/* SPDX-License-Identifier: MIT */
/*
 * The rows of the cpu collector (monitor/system/coll_cpu.c): the fields it writes, the
 * families it adds and the rules that map them (common/rows.h says what
 * rows are). Data only: the mapping library and the collector both read it.
 */
#include "../rows.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const struct map_field cpu_fields[] = {
	FIELD(VCPU_USAGE, NULL, "average_usage.{user,nice,system,io_wait,irq,soft_irq}", NULL, NULL),
	FIELD(VCPU_USAGE, NULL, "average_usage.idle", NULL,
	  "the rest of 100%: system_vcpu_usage_ratio gives user and system"),
	FIELD(VCPU_USAGE, NULL, "usage_data", NULL, NULL),
	FIELD(VCPU_USAGE, NULL, "usage_data.*.*", NULL,
	  "per-CPU detail: neuron-monitor-prometheus.py exports only the average and the count, and so do the sinks"),
	FIELD(VCPU_USAGE, NULL, "context_switch_count", NULL,
	  "neuron-monitor-prometheus.py exports none, and accel-prom serves neuron-monitor's vcpu_usage as it does"),
};

static const struct family cpu_families[] = {
	GAUGE("system_vcpu_count", "System vCPU count", "count"),
	GAUGE("system_vcpu_usage_ratio", "System CPU utilization ratio", "ratio"),
};

static const struct map_rule cpu_rules[] = {
	/* neuron-monitor-prometheus.py's: the CPU count; user (with nice) and system (with I/O wait and interrupts) */
	{ SC_SYSTEM, "vcpu_usage", "usage_data.#", "system_vcpu_count", "", NULL, 0, 0 },
	{ SC_SYSTEM, "vcpu_usage", "average_usage.{user+nice}", "system_vcpu_usage_ratio", "", "usage_type=user",
	  PERCENT, 100 },
	{ SC_SYSTEM, "vcpu_usage", "average_usage.{system+io_wait+irq+soft_irq}", "system_vcpu_usage_ratio", "",
	  "usage_type=system", PERCENT, 100 },
};

const struct map_rows cpu_rows = {
	"cpu", __FILE__, ROWS_FIELDS(cpu_fields), ROWS_FAMILIES(cpu_families), ROWS_RULES(cpu_rules),
};
