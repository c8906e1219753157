/* SPDX-License-Identifier: MIT */
/*
 * The report schema (common/schema.c): groups, aliases, labels, and the
 * generated tests/fixtures/schema.json the Python checkers load, which must
 * be exactly what map_schema_json() gives (SCHEMA_UPDATE=1 rewrites it):
 * the schema's tables and every block of rows (common/rows.h).
 */
#include "../../common/samples.h"
#include "../../common/schema.h"
#include "../../common/util.h"
#include "../../sinks/csv/csv_format.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>

#define SCHEMA_JSON "tests/fixtures/schema.json"

int main(void)
{
	json_t *dump = map_schema_json();
	char *got = json_dumps(dump, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	size_t n = 0;

	/* Groups and aliases. */
	is_int(schema_group_lookup("memory_info", SCOPE_SYSTEM), GROUP_MEMORY_INFO, "memory_info is a system group");
	is_int(schema_group_lookup("memory_info", SCOPE_RUNTIME), -1, "not a runtime group");
	is_int(schema_group_lookup("neuron_runtime_vcpu_usage", SCOPE_RUNTIME), GROUP_RUNTIME_VCPU_USAGE,
	       "neuron-monitor's alias neuron_runtime_vcpu_usage");
	is_int(schema_group_lookup("inference_stats", SCOPE_RUNTIME), GROUP_EXECUTION_STATS,
	       "neuron-monitor's alias inference_stats");
	is_str(group_name(GROUP_DEVICE_ERRORS), "device_errors", "a device group's name");
	is_str(scope_name(group_scope(GROUP_DEVICE_ERRORS)), "device", "its scope");
	is_str(schema_config_aliases[0][1], "runtimes", "neuron_runtimes is an alias of runtimes");

	/* Labels. */
	ok(schema_label("runtime_tag") && schema_label("runtime_tag")->kind == LK_RUNTIME, "runtime_tag is a runtime label");
	ok(schema_label("ultraserver_id") && (schema_label("ultraserver_id")->flags & LABEL_OPTIONAL),
	   "ultraserver_id is an optional instance label");
	ok(!schema_label("no_such_label"), "an unknown label is NULL");
	is_int(SCHEMA_INSTANCE_LABELS, 7, "seven instance labels (six and ultraserver_id)");
	{
		int unique = 1;

		for (size_t i = 0; i < LBL_COUNT; i++)
			for (size_t j = i + 1; j < LBL_COUNT; j++)
				unique &= strcmp(schema_labels[i].name, schema_labels[j].name) != 0 &&
					  strcmp(schema_labels[i].cw_dim, schema_labels[j].cw_dim) != 0;
		ok(unique, "label names and CloudWatch dimension names are unique");
	}

	/* accel-csv's column choices come from the labels (sinks/csv/csv_format.c). */
	{
		const char *cols[64];
		size_t nc = csv_label_columns(cols, 64);

		is_int(nc, 31, "31 label columns (the header of existing files)");
		is_str(cols[0], "runtime_tag", "runtime_tag first");
		is_str(cols[24], "neuroncore_per_device_count", "the last of the non-instance labels");
		is_str(cols[25], "instance_name", "then the instance labels");
		is_str(cols[30], "subnet_id", "subnet_id last");
		ok(csv_row_key_label("pid") && csv_row_key_label("pci_bus_id") && !csv_row_key_label("runtime_tag") &&
			   !csv_row_key_label("neuroncore"),
		   "a wide row's key: pid and the device identity");
	}

	/* The generated file the Python checkers load. */
	{
		FILE *f;
		char *want = NULL;

		if (getenv("SCHEMA_UPDATE")) {
			f = fopen(SCHEMA_JSON, "w");
			ok(f && fputs(got, f) >= 0 && fputc('\n', f) != EOF && fclose(f) == 0, "%s rewritten", SCHEMA_JSON);
		} else {
			f = fopen(SCHEMA_JSON, "r");
			if (f) {
				want = xmalloc((size_t)1 << 20);
				n = fread(want, 1, ((size_t)1 << 20) - 1, f);
				want[n] = '\0';
				fclose(f);
				if (n && want[n - 1] == '\n')
					want[n - 1] = '\0';
			}
			if (!ok(want && !strcmp(want, got), "%s is what map_schema_json() gives", SCHEMA_JSON))
				fprintf(stderr, "# regenerate it: SCHEMA_UPDATE=1 build/release/tests/test_schema\n");
			free(want);
		}
	}
	free(got);
	json_decref(dump);
	return done_testing();
}
