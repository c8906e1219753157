/* SPDX-License-Identifier: MIT */
/*
 * The rows of the mem collector (monitor/system/coll_mem.c): the fields it writes, the
 * families it adds and the rules that map them (common/rows.h says what
 * rows are). Data only: the mapping library and the collector both read it.
 */
#include "../rows.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const struct map_field mem_fields[] = {
	FIELD(MEMORY_INFO, NULL, "{memory_total_bytes,memory_used_bytes,swap_total_bytes,swap_used_bytes}", NULL, NULL),
};

static const struct family mem_families[] = {
	GAUGE("system_memory_total_bytes", "System memory total_bytes bytes", "bytes"),
	GAUGE("system_memory_used_bytes", "System memory used_bytes bytes", "bytes"),
	GAUGE("system_swap_total_bytes", "System swap total_bytes bytes", "bytes"),
	GAUGE("system_swap_used_bytes", "System swap used_bytes bytes", "bytes"),
};

static const struct map_rule mem_rules[] = {
	{ SC_SYSTEM, "memory_info", "memory_total_bytes", "system_memory_total_bytes", "", NULL, 0, 0 },
	{ SC_SYSTEM, "memory_info", "memory_used_bytes", "system_memory_used_bytes", "", NULL, 0, 0 },
	{ SC_SYSTEM, "memory_info", "swap_total_bytes", "system_swap_total_bytes", "", NULL, 0, 0 },
	{ SC_SYSTEM, "memory_info", "swap_used_bytes", "system_swap_used_bytes", "", NULL, 0, 0 },
};

const struct map_rows mem_rows = {
	"mem", __FILE__, ROWS_FIELDS(mem_fields), ROWS_FAMILIES(mem_families), ROWS_RULES(mem_rules),
};
