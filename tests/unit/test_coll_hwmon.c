/* SPDX-License-Identifier: MIT */
/*
 * The hwmon collector (monitor/coll_hwmon.c) on a copy of the fixture tree
 * tests/fixtures/sysfs/host (coretemp, acpitz, nvme, an ACPI power meter,
 * a Super I/O chip with fans, and two amdgpu chips that are left to the
 * amdgpu collector): labels, units, a chip vanishing, ENODEV, and the
 * broken tree (garbage, a directory where an input belongs, no name).
 * Expected values: tests/fixtures/sysfs/EXPECTED.md.
 */
#define COLL_TYPE "hwmon"
#define COLL_OPS coll_hwmon_ops
#include "coll_harness.h"

/* ---- the tests ---------------------------------------------------------------------- */

static void test_chips(void)
{
	void *st;
	json_t *g;
	int64_t t;

	setup("host");
	is_int(ops->probe(&(struct mon_env){ .sysfs = sys_root }), 1, "probe: chips found");
	st = open_state();
	t = clock_mono_ns();

	g = collect(st, GROUP_DEVICE_INFO, t);
	is_int(json_object_size(jp(g, "devices")), 5, "five chips: hwmon3 and hwmon5 are amdgpu's");
	ok(!jp(g, "devices.3") && !jp(g, "devices.5"), "the amdgpu chips are not here");
	is_str(jstr(g, "devices.0.model"), "coretemp", "index = N of hwmonN, model = its name");
	is_str(jstr(g, "devices.0.device"), "coretemp.0", "the device it measures");
	is_str(jstr(g, "devices.0.driver"), "coretemp", "and that device's driver");
	ok(!jp(g, "devices.1.device"), "acpitz: no device link, absent");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_THERMAL, t);
	is_double(jnum(g, "devices.0.temperatures_celsius.package_id_0"), 48, 1e-9, "temp1 by its label, as a key");
	is_double(jnum(g, "devices.1.temperatures_celsius.temp1"), 27.8, 1e-9, "no label: the channel name");
	is_double(jnum(g, "devices.2.temperatures_celsius.composite"), 38.85, 1e-9, "m°C -> °C");
	is_double(jnum(g, "devices.6.fan_rpm.fan1"), 1104, 0, "fan1_input RPM");
	is_double(jnum(g, "devices.6.fan_rpm.fan2"), 0, 0, "a stopped fan is 0 RPM (it is read, not missing)");
	is_double(jnum(g, "devices.6.fan_percent"), 128 * 100.0 / 255, 1e-6, "pwm1 as percent");
	ok(jp(g, "devices.4") && !jp(g, "devices.4.temperatures_celsius"), "a power meter has no temperature: absent");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_POWER, t);
	is_double(jnum(g, "devices.4.power_sensors_watts.power1"), 240.5, 1e-9, "power1_average µW -> W");
	ok(!jp(g, "devices.0.power_sensors_watts"), "coretemp: no power, absent");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_MEMORY, t);
	ok(json_is_object(jp(g, "devices")) && !json_object_size(jp(g, "devices")), "memory: {}");
	json_decref(g);

	/* Two inputs with one label keep apart; an input's ENODEV fails that chip for the cycle. */
	put(sys_root, "class/hwmon/hwmon0/temp3_label", "Core 0\n");
	ops->close(st);
	st = open_state();
	g = collect(st, GROUP_DEVICE_THERMAL, t);
	ok(jp(g, "devices.0.temperatures_celsius.core_0") && jp(g, "devices.0.temperatures_celsius.temp3"),
	   "a second \"Core 0\" is reported as temp3");
	json_decref(g);
	fail_on("hwmon2/temp2_input", ENODEV);
	g = collect(st, GROUP_DEVICE_THERMAL, t + 1000000000);
	ok(strstr(jstr(g, "devices.2.error"), "went away") && !jp(g, "devices.2.temperatures_celsius"),
	   "ENODEV: the chip's error this cycle");
	is_str(jstr(g, "devices.0.error"), "", "the others report");
	json_decref(g);
	fail_on(NULL, 0);

	/* The nvme drive is removed. */
	sh("rm -rf '%s/class/hwmon/hwmon2' '%s/devices/pci0000:00/0000:00:1d.0'", sys_root, sys_root);
	t += 2000000000;
	g = collect(st, GROUP_DEVICE_THERMAL, t);
	ok(strstr(jstr(g, "devices.2.error"), "disappeared") != NULL, "a chip gone: an error once");
	json_decref(g);
	json_decref(collect(st, GROUP_DEVICE_INFO, t));
	json_decref(collect(st, GROUP_DEVICE_POWER, t));
	g = collect(st, GROUP_DEVICE_THERMAL, t + 1000000000);
	ok(!jp(g, "devices.2") && jp(g, "devices.6"), "then dropped");
	json_decref(g);
	ops->close(st);
}

static void test_broken_tree(void)
{
	void *st;
	json_t *g;

	setup("broken");
	st = open_state();
	g = collect(st, GROUP_DEVICE_THERMAL, clock_mono_ns());
	ok(!jp(g, "devices.0"), "broken tree: the amdgpu chip is still amdgpu's");
	ok(!jp(g, "devices.1.temperatures_celsius.package_id_0"), "\"hot\": left out");
	ok(!jp(g, "devices.1.temperatures_celsius.temp2"), "a directory named temp2_input: left out");
	is_double(jnum(g, "devices.1.temperatures_celsius.core_1"), 47, 1e-9, "the good input");
	ok(!jp(g, "devices.1.fan_rpm"), "fan1_input \"-5\": left out");
	is_double(jnum(g, "devices.2.temperatures_celsius.temp1"), 30, 1e-9, "a chip without a name file");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_INFO, clock_mono_ns());
	is_str(jstr(g, "devices.2.model"), "hwmon2", "is named by its directory");
	json_decref(g);
	ops->close(st);
}

/*
 * class/hwmon/hwmonN briefly a dangling or self-referencing link (a driver
 * rebinding): the chip is retried every cycle and comes back once the link
 * is good again (it used to be taken for amdgpu's from an unset flag, and
 * lost for good).
 */
static void test_link_flaps(void)
{
	void *st;
	json_t *g;
	int64_t t = clock_mono_ns();

	setup("host");
	sh("ln -sfn ../../devices/platform/nct6775.656/hwmon/gone '%s/class/hwmon/hwmon6'", sys_root);
	st = open_state();
	g = collect(st, GROUP_DEVICE_THERMAL, t);
	ok(jp(g, "devices.0") && !jp(g, "devices.6"), "a dangling link: that chip is not there, the others are");
	json_decref(g);
	sh("ln -sfn hwmon6 '%s/class/hwmon/hwmon6'", sys_root);
	g = collect(st, GROUP_DEVICE_THERMAL, t + 1000000000);
	ok(jp(g, "devices.0") && !jp(g, "devices.6"), "a link to itself: still not there");
	json_decref(g);
	sh("ln -sfn ../../devices/platform/nct6775.656/hwmon/hwmon6 '%s/class/hwmon/hwmon6'", sys_root);
	g = collect(st, GROUP_DEVICE_THERMAL, t + 2000000000);
	is_double(jnum(g, "devices.6.fan_rpm.fan1"), 1104, 0, "the link fixed: the chip is back the next cycle");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_INFO, t + 2000000000);
	is_str(jstr(g, "devices.6.model"), "nct6798", "with its identity");
	json_decref(g);
	ops->close(st);
}

/* u64 inputs at the edges: 1e19 RPM kept as a real, 2^64-1 (not available) left out. */
static void test_u64_edges(void)
{
	void *st;
	json_t *g;

	setup("host");
	put(sys_root, "class/hwmon/hwmon6/fan1_input", "10000000000000000000\n");
	put(sys_root, "class/hwmon/hwmon6/fan2_input", "18446744073709551615\n");
	put(sys_root, "class/hwmon/hwmon4/power1_average", "9223372036854775808\n");
	st = open_state();
	g = collect(st, GROUP_DEVICE_THERMAL, clock_mono_ns());
	is_str(jtext(g, "devices.6.fan_rpm.fan1"), "1e+19", "fan1_input 1e19: its value, not negative");
	ok(!jp(g, "devices.6.fan_rpm.fan2"), "fan2_input 2^64-1: left out");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_POWER, clock_mono_ns());
	is_double(jnum(g, "devices.4.power_sensors_watts.power1"), 9223372036854.775808, 1e-3, "2^63 µW in W");
	json_decref(g);
	ops->close(st);
}

int main(void)
{
	/* The warnings about bad files are the integration test's business; keep TAP output clean. */
	log_init("test_coll_hwmon", LOG_LVL_SILENT);
	test_chips();
	test_broken_tree();
	test_link_flaps();
	test_u64_edges();
	if (work[0])
		sh("rm -rf '%s'", work);
	return done_testing();
}
