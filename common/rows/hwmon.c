/* SPDX-License-Identifier: MIT */
/*
 * The rows of the hwmon collector (monitor/sysfs/coll_hwmon.c): the fields it writes, the
 * families it adds and the rules that map them (common/rows.h says what
 * rows are). Data only: the mapping library and the collector both read it.
 */
#include "../rows.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const struct map_field hwmon_fields[] = {
	/* beside the fields every kind of device has; fan_rpm, temperatures_crit_celsius and voltages_volts
	 * are amdgpu's too (their rules are common/all_rows.c's) */
	FIELD(DEVICE_INFO, "hwmon", "name", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, "hwmon", "device", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, "hwmon", "driver", "str", WHY_TEXT),
	FIELD(DEVICE_THERMAL, "hwmon", "fan_rpm", "num_map", NULL),
	FIELD(DEVICE_THERMAL, "hwmon", "temperatures_crit_celsius", "num_map", NULL),
	FIELD(DEVICE_THERMAL, "hwmon", "temperatures_max_celsius", "num_map", NULL),
	FIELD(DEVICE_THERMAL, "hwmon", "alarms", "int_map", NULL),
	FIELD(DEVICE_POWER, "hwmon", "power_sensors_watts", "num_map", NULL),
	FIELD(DEVICE_POWER, "hwmon", "voltages_volts", "num_map", NULL),
	FIELD(DEVICE_POWER, "hwmon", "energy_sensors_joules", "num_map", NULL),
};

static const struct family hwmon_families[] = {
	GAUGE("accelerator_temperature_max_celsius",
	      "Accelerator or chip maximum temperature threshold by sensor, degrees Celsius", "celsius"),
	GAUGE("accelerator_alarm", "1 while a sensor alarm of the chip is raised", ""),
};

static const struct map_rule hwmon_rules[] = {
	{ SC_DEVICE, "device_power", "power_sensors_watts.*", "accelerator_power_watts", "sensor", NULL, 0, 0 },
	{ SC_DEVICE, "device_power", "energy_sensors_joules.*", "accelerator_energy_joules_total", "sensor", NULL, 0,
	  0 },
	{ SC_DEVICE, "device_thermal", "temperatures_max_celsius.*", "accelerator_temperature_max_celsius", "sensor",
	  NULL, 0, 0 },
	{ SC_DEVICE, "device_thermal", "alarms.*", "accelerator_alarm", "alarm", NULL, 0, 0 },
};

const struct map_rows hwmon_rows = {
	"hwmon", __FILE__, ROWS_FIELDS(hwmon_fields), ROWS_FAMILIES(hwmon_families), ROWS_RULES(hwmon_rules),
};
