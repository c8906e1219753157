/* SPDX-License-Identifier: MIT */
/*
 * The rows of the powercap collector (monitor/sysfs/coll_powercap.c): the fields it writes, the
 * families it adds and the rules that map them (common/rows.h says what
 * rows are). Data only: the mapping library and the collector both read it.
 */
#include "../rows.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const struct map_field powercap_fields[] = {
	/* beside the fields every kind of device has (energy_joules, energy_total_joules, power_watts) */
	FIELD(DEVICE_INFO, "powercap", "name", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, "powercap", "zone", "str", WHY_TEXT),
	FIELD(DEVICE_INFO, "powercap", "max_energy_range_uj", "int", WHY_FACT),
};

const struct map_rows powercap_rows = {
	"powercap", __FILE__, ROWS_FIELDS(powercap_fields), NULL, 0, NULL, 0,
};
