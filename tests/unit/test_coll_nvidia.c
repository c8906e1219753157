/* SPDX-License-Identifier: MIT */
/*
 * The NVIDIA collector (monitor/coll_nvidia.c) with u64 values at the
 * edges, against the fake libnvidia-ml.so.1 (tests/helpers/fake_nvml.c)
 * that this test compiles with $CC (default cc): 2^63 and 1e19 keep their
 * value (a real, never a negative integer), NVML's "not available"
 * (2^64-1) is left out, and a sum past 2^64 does not wrap. The other NVIDIA
 * cases are in test_nvml.c and tests/integration/nvml.sh.
 *
 * Run from the top of the tree (make check does); elsewhere set ACCEL_TOP.
 */
#include "../../common/log.h"
#include "../../monitor/collector.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static struct cfg_group groups[] = {
	{ GROUP_DEVICE_INFO, 100 },
	{ GROUP_DEVICE_MEMORY, 100 },
	{ GROUP_DEVICE_ERRORS, 100 },
};
static struct cfg_device dev = { .type = "nvidia", .select_all = 1, .period_ms = 100, .groups = groups,
				 .ngroups = 3 };

static json_t *collect(void *st, enum group_id id, int n)
{
	struct cycle cy = { .mono_ns = (int64_t)n * 100 * NS_PER_MS };
	json_t *g;

	snprintf(cy.iso, sizeof(cy.iso), "2026-01-02T03:04:05.%03dZ", n % 1000);
	g = group_new(0.1, cy.iso);
	coll_nvidia_ops.collect(st, id, &cy, g);
	return g;
}

/* The value at a dotted path under devices.0 (borrowed), NULL when absent. */
static json_t *at(json_t *g, const char *path)
{
	char buf[128], *save = NULL;
	json_t *o = json_object_get(json_object_get(g, "devices"), "0");

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
		o = json_object_get(o, k);
	return o;
}

static double num(json_t *g, const char *path)
{
	json_t *v = at(g, path);

	return json_is_number(v) ? json_number_value(v) : -12345.0;
}

static void test_edges(void)
{
	struct mon_env env = { 0 };
	void *st = NULL;
	json_t *g;

	is_int(coll_nvidia_ops.open(&env, &dev, &st), 0, "open");
	g = collect(st, GROUP_DEVICE_INFO, 1);
	is_double(num(g, "memory_total_bytes"), 9223372036854775808.0, 0, "memory total 2^63: its value");
	ok(json_is_real(at(g, "memory_total_bytes")), "as a real (jansson's integers stop at 2^63-1)");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_MEMORY, 1);
	is_double(num(g, "used_bytes"), 1e19, 0, "used 1e19: not negative");
	ok(!at(g, "free_bytes"), "free 2^64-1 (not available): left out");
	is_double(num(g, "processes.100"), 9223372036854775808.0, 0, "a process's 2^63 bytes");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_ERRORS, 1);
	is_double(num(g, "ecc_corrected_volatile_total"), 9223372036854775808.0, 0, "ECC corrected 2^63");
	ok(!at(g, "ecc_uncorrected_volatile_total"), "ECC uncorrected 2^64-1: left out");
	is_double(num(g, "ecc_corrected_aggregate_total"), 1e19, 0, "ECC aggregate 1e19");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_ERRORS, 2);
	is_double(num(g, "ecc_errors.corrected"), 0, 0, "the increase of a 2^63 counter: 0, from volatile");
	json_decref(g);
	coll_nvidia_ops.close(st);
}

int main(void)
{
	const char *t = getenv("ACCEL_TOP"), *cc = getenv("CC");
	char cmd[1024], path[160];
	FILE *f;

	log_init("test_coll_nvidia", LOG_LVL_SILENT);
	snprintf(dir, sizeof(dir), "%s", "/tmp/accel-nvml-u64.XXXXXX");
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		return 2;
	}
	snprintf(cmd, sizeof(cmd),
		 "%s -std=c11 -D_GNU_SOURCE -shared -fPIC -O1 -o %s/libnvidia-ml.so.1 %s/tests/helpers/fake_nvml.c",
		 cc && *cc ? cc : "cc", dir, t && *t ? t : ".");
	if (system(cmd)) {
		printf("Bail out! cannot build the fake libnvidia-ml.so.1: %s\n", cmd);
		return 2;
	}
	snprintf(path, sizeof(path), "%s/edges.nvml", dir);
	f = fopen(path, "w");
	if (!f || fputs("gpu\n"
			"memory 9223372036854775808 10000000000000000000 18446744073709551615 0\n"
			"ecc 9223372036854775808 18446744073709551615 10000000000000000000 0\n"
			"proc 100 9223372036854775808\n",
			f) < 0 || fclose(f)) {
		printf("Bail out! write %s\n", path);
		return 2;
	}
	setenv("FAKE_NVML_SCRIPT", path, 1);
	snprintf(path, sizeof(path), "%s/libnvidia-ml.so.1", dir);
	setenv("ACCEL_NVML_LIBRARY", path, 1);
	test_edges();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
	return done_testing();
}
