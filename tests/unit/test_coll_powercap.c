/* SPDX-License-Identifier: MIT */
/*
 * The powercap collector (monitor/sysfs/coll_powercap.c) on a copy of the
 * fixture tree tests/fixtures/sysfs/powercap (RAPL zones as intel_rapl
 * registers them): the zones and their identity, the energy per period
 * across energy_uj's wrap at max_energy_range_uj, the mean power, and an
 * energy_uj only root may read (the group's error, once; no energy fields).
 */
#define COLL_TYPE "powercap"
#define COLL_OPS coll_powercap_ops
#include "coll_harness.h"

static void test_zones_and_wrap(void)
{
	void *st;
	json_t *g;
	int64_t t;

	setup("powercap");
	is_int(ops->probe(&(struct mon_env){ .host = fixture_host() }), 1, "probe: RAPL zones found");
	st = open_state();
	t = clock_mono_ns() + 1000000000;
	g = collect(st, GROUP_DEVICE_INFO, t);
	is_int(json_object_size(jp(g, "devices")), 3, "three zones; the control type intel-rapl is none");
	is_str(jstr(g, "devices.0.zone"), "intel-rapl:0", "zone 0: package 0");
	is_str(jstr(g, "devices.0.name"), "package-0", "its name");
	is_str(jstr(g, "devices.1.name"), "core", "a subzone: core");
	is_str(jstr(g, "devices.2.model"), "package-1", "the name is the model");
	is_double(jnum(g, "devices.0.max_energy_range_uj"), 262143328850.0, 0, "max_energy_range_uj");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_POWER, t);
	is_str(jstr(g, "error"), "", "no error");
	ok(!jp(g, "devices.0.energy_joules"), "first reading: the baseline, no period");
	ok(!jp(g, "devices.0.energy_total_joules"), "no total: the counter wraps, it is no device total");
	json_decref(g);

	put(sys_root, "devices/virtual/powercap/intel-rapl/intel-rapl:0/energy_uj", "1000000\n");
	put(sys_root, "devices/virtual/powercap/intel-rapl/intel-rapl:1/energy_uj", "9000000\n");
	g = collect(st, GROUP_DEVICE_POWER, t + 2000000000);
	is_double(jnum(g, "devices.0.energy_joules"), 2.000001, 1e-9,
		  "wrapped: 262143328851 - 262142328850 + 1000000 µJ = 2.000001 J");
	is_double(jnum(g, "devices.0.power_watts"), 1.0000005, 1e-9, "mean power over 2 s");
	is_double(jnum(g, "devices.2.energy_joules"), 4, 1e-9, "package 1: 4e6 µJ");
	is_double(jnum(g, "devices.1.energy_joules"), 0, 0, "core did not move: 0 J (it has a source)");
	json_decref(g);

	/* Root only: the group's error once, no energy fields, not a warning per zone. */
	fail_on("energy_uj", EACCES);
	g = collect(st, GROUP_DEVICE_POWER, t + 3000000000);
	ok(strstr(jstr(g, "error"), "only root") != NULL, "EACCES: the group's error says root only (%s)",
	   jstr(g, "error"));
	ok(!jp(g, "devices.0.energy_joules") && !jp(g, "devices.0.power_watts"), "no energy fields, never 0");
	ok(jp(g, "devices.0") != NULL, "the zone is still listed");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_POWER, t + 4000000000);
	is_str(jstr(g, "error"), "", "said once");
	json_decref(g);
	fail_on(NULL, 0);
	g = collect(st, GROUP_DEVICE_POWER, t + 5000000000);
	ok(!jp(g, "devices.0.energy_joules") && jp(g, "devices.0") != NULL, "readable again: a fresh baseline");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_POWER, t + 6000000000);
	is_double(jnum(g, "devices.0.energy_joules"), 0, 0, "then periods again");
	json_decref(g);

	/* Read 1 µJ lower: on af149df a full wrap (262 kJ in 1 s); now no energy, the error, afresh. */
	put(sys_root, "devices/virtual/powercap/intel-rapl/intel-rapl:0/energy_uj", "999999\n");
	g = collect(st, GROUP_DEVICE_POWER, t + 7000000000);
	ok(!jp(g, "devices.0.energy_joules") && !jp(g, "devices.0.power_watts"), "1 µJ lower: no energy, no power");
	ok(jstr(g, "error") && strstr(jstr(g, "error"), "intel-rapl:0") && strstr(jstr(g, "error"), "a wrap"),
	   "... the group's error names the zone and the wrap it would have been (%s)", jstr(g, "error"));
	json_decref(g);
	put(sys_root, "devices/virtual/powercap/intel-rapl/intel-rapl:0/energy_uj", "2999999\n");
	g = collect(st, GROUP_DEVICE_POWER, t + 8000000000);
	is_double(jnum(g, "devices.0.energy_joules"), 2, 1e-9, "then afresh from that reading: 2 J");
	is_str(jstr(g, "error"), "", "said once");
	json_decref(g);
	/* Above max_energy_range_uj: on af149df 18 TJ could come of it; now it is no reading. */
	put(sys_root, "devices/virtual/powercap/intel-rapl/intel-rapl:0/energy_uj", "262143328852\n");
	g = collect(st, GROUP_DEVICE_POWER, t + 9000000000);
	ok(!jp(g, "devices.0.energy_joules"), "above the range: no energy");
	ok(jstr(g, "error") && strstr(jstr(g, "error"), "above the counter's range"), "... saying so (%s)",
	   jstr(g, "error"));
	json_decref(g);
	ops->close(st);
}

static void test_none(void)
{
	setup("host");
	is_int(ops->probe(&(struct mon_env){ .host = fixture_host() }), 0, "probe: no powercap zones in the host tree");
}

int main(void)
{
	log_init("test_coll_powercap", LOG_LVL_SILENT);
	test_zones_and_wrap();
	test_none();
	if (work[0])
		sh("rm -rf '%s'", work);
	return done_testing();
}
