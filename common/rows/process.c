/* SPDX-License-Identifier: MIT */
/*
 * The rows of the process collector (monitor/system/coll_process.c): the fields it writes, the
 * families it adds and the rules that map them (common/rows.h says what
 * rows are). Data only: the mapping library and the collector both read it.
 */
#include "../rows.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const struct map_field process_fields[] = {
	FIELD(RUNTIME_VCPU_USAGE, NULL, "vcpu_usage.{user,system}", NULL, NULL),
	FIELD(MEMORY_USED, NULL, "runtime_used_bytes.{host,device}", NULL, NULL),
};

static const struct family process_families[] = {
	GAUGE("runtime_vcpu_usage_ratio",
	      "Runtime process CPU time over the period, as a ratio of host CPU capacity", "ratio"),
	GAUGE("runtime_memory_used_bytes", "Runtime process memory used bytes", "bytes"),
};

static const struct map_rule process_rules[] = {
	{ SC_RUNTIME, "runtime_vcpu_usage", "vcpu_usage.{user,system}", "runtime_vcpu_usage_ratio", "usage_type", NULL,
	  PERCENT, 0 },
	{ SC_RUNTIME, "memory_used", "runtime_used_bytes.{host,device}", "runtime_memory_used_bytes", "memory_location",
	  NULL, 0, 0 },
};

const struct map_rows process_rows = {
	"process", __FILE__, ROWS_FIELDS(process_fields), ROWS_FAMILIES(process_families), ROWS_RULES(process_rules),
};
