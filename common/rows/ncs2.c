/* SPDX-License-Identifier: MIT */
/*
 * The rows of the ncs2 collector (monitor/sysfs/coll_ncs2.c): the fields it writes, the
 * families it adds and the rules that map them (common/rows.h says what
 * rows are). Data only: the mapping library and the collector both read it.
 */
#include "../rows.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const struct map_field ncs2_fields[] = {
	FIELD(DEVICE_INFO, "ncs2", "port_path", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, "ncs2", "busnum", "int", WHY_FACT),
	FIELD(DEVICE_INFO, "ncs2", "devnum", "int", WHY_FACT),
	FIELD(DEVICE_INFO, "ncs2", "usb_id", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, "ncs2", "booted", "bool", WHY_FACT),
	FIELD(DEVICE_INFO, "ncs2", "speed_mbps", "num", WHY_FACT),
	FIELD(DEVICE_INFO, "ncs2", "usb_product", "str", WHY_TEXT),
	FIELD(DEVICE_UTILIZATION, "ncs2", "available", "bool",
	  "a stick's own flag; ncs2_num_available_devices counts them"),
	FIELD(DEVICE_UTILIZATION, "ncs2", "pids", "ints", "process ids: identities, not measurements"),
	FIELD(DEVICE_THERMAL, "ncs2", "temperature_source", "str", WHY_TEXT),
	FIELD(DEVICE_THERMAL, "ncs2", "temperature_age_seconds", "num",
	  "how old the application's reading is: about the reading, not the stick"),
};

static const struct family ncs2_families[] = {
	/* prometheus_ncs2_exporter's families */
	GAUGE("ncs2_num_devices", "Number of Intel Neural Compute Sticks", "count"),
	GAUGE("ncs2_num_available_devices", "Number of Intel Neural Compute Sticks no process holds open", "count"),
	GAUGE("ncs2_temperature_celsius", "Intel Neural Compute Stick temperature, degrees Celsius", "celsius"),
};

static const struct map_rule ncs2_rules[] = {
	{ SC_DEVICE_GROUP, "device_utilization", "num_devices", "ncs2_num_devices", "", NULL, 0, 0, "ncs2" },
	{ SC_DEVICE_GROUP, "device_utilization", "num_available_devices", "ncs2_num_available_devices", "", NULL, 0, 0,
	  "ncs2" },
	{ SC_DEVICE, "device_thermal", "temperatures_celsius.*", "ncs2_temperature_celsius", "name", NULL, 0, 0,
	  "ncs2" },
};

const struct map_rows ncs2_rows = {
	"ncs2", __FILE__, ROWS_FIELDS(ncs2_fields), ROWS_FAMILIES(ncs2_families), ROWS_RULES(ncs2_rules),
};
