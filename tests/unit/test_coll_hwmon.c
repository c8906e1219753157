/* SPDX-License-Identifier: MIT */
/*
 * The hwmon collector (monitor/sysfs/coll_hwmon.c) on a copy of the fixture tree
 * tests/fixtures/sysfs/host (coretemp, acpitz, nvme, an ACPI power meter,
 * a Super I/O chip with fans, voltages and alarms, a radeon chip with a
 * clock, a Wi-Fi chip whose device link is "../..", and two amdgpu chips
 * that are left to the amdgpu collector): labels, units, thresholds, a chip
 * vanishing, ENODEV, and the broken tree (garbage, a directory where an
 * input belongs, no name); the oldkernel tree (attributes in the device's
 * directory) and the nolinks tree (sysfs copied without symlinks).
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
	is_int(ops->probe(&(struct mon_env){ .host = fixture_host() }), 1, "probe: chips found");
	st = open_state();
	t = clock_mono_ns();

	g = collect(st, GROUP_DEVICE_INFO, t);
	is_int(json_object_size(jp(g, "devices")), 7, "seven chips: hwmon3 and hwmon5 are amdgpu's");
	ok(!jp(g, "devices.3") && !jp(g, "devices.5"), "the amdgpu chips are not here");
	is_str(jstr(g, "devices.0.model"), "coretemp", "index = N of hwmonN, model = its name");
	is_str(jstr(g, "devices.0.device"), "coretemp.0", "the device it measures");
	is_str(jstr(g, "devices.0.driver"), "coretemp", "and that device's driver");
	ok(!jp(g, "devices.1.device"), "acpitz: no device link, absent");
	is_str(jstr(g, "devices.8.device"), "phy0", "a device link \"../..\": the directory it resolves to");
	is_str(jstr(g, "devices.7.pci_bus_id"), "0000:09:00.0", "a PCI device's chip: its address");
	is_str(jstr(g, "devices.7.driver"), "radeon", "radeon's chip is not amdgpu's");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_THERMAL, t);
	is_double(jnum(g, "devices.0.temperatures_celsius.package_id_0"), 48, 1e-9, "temp1 by its label, as a key");
	is_double(jnum(g, "devices.1.temperatures_celsius.temp1"), 27.8, 1e-9, "no label: the channel name");
	is_double(jnum(g, "devices.2.temperatures_celsius.composite"), 38.85, 1e-9, "m°C -> °C");
	is_double(jnum(g, "devices.6.fan_rpm.fan1"), 1104, 0, "fan1_input RPM");
	is_double(jnum(g, "devices.6.fan_rpm.fan2"), 0, 0, "a stopped fan is 0 RPM (it is read, not missing)");
	is_double(jnum(g, "devices.6.fan_percent"), 128 * 100.0 / 255, 1e-6, "pwm1 as percent");
	ok(jp(g, "devices.4") && !jp(g, "devices.4.temperatures_celsius"), "a power meter has no temperature: absent");
	is_double(jnum(g, "devices.0.temperatures_crit_celsius.package_id_0"), 100, 1e-9, "temp1_crit by temp1's label");
	is_double(jnum(g, "devices.0.temperatures_max_celsius.core_1"), 80, 1e-9, "temp3_max");
	is_double(jnum(g, "devices.2.temperatures_crit_celsius.composite"), 89.85, 1e-9, "nvme temp1_crit");
	ok(!jp(g, "devices.2.temperatures_crit_celsius.sensor_1"), "no temp2_crit: absent");
	is_double(jnum(g, "devices.1.temperatures_crit_celsius.temp1"), 105, 1e-9, "acpitz: unlabelled channel");
	is_str(jtext(g, "devices.0.alarms.temp1_crit"), "0", "temp1_crit_alarm: 0, keyed by its stem");
	is_str(jtext(g, "devices.6.alarms.in1"), "1", "in1_alarm raised: 1");
	is_str(jtext(g, "devices.6.alarms.intrusion0"), "1", "intrusion0_alarm");
	ok(!jp(g, "devices.6.alarms.in0_beep") && !jp(g, "devices.6.alarms.beep_enable"), "beeps are not alarms");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_POWER, t);
	is_double(jnum(g, "devices.4.power_sensors_watts.power1"), 240.5, 1e-9, "power1_average µW -> W");
	ok(!jp(g, "devices.0.power_sensors_watts"), "coretemp: no power, absent");
	is_double(jnum(g, "devices.6.voltages_volts.in0"), 1.016, 1e-9, "in0_input mV -> V");
	is_double(jnum(g, "devices.7.voltages_volts.in0"), 0.9, 1e-9, "radeon's vddc");
	ok(!jp(g, "devices.0.voltages_volts"), "no voltage: absent");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_CLOCKS, t);
	is_double(jnum(g, "devices.7.clocks_mhz.freq1"), 300, 1e-9, "freq1_input Hz -> MHz (no label: the channel)");
	ok(jp(g, "devices.0") && !jp(g, "devices.0.clocks_mhz"), "no clock: absent");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_MEMORY, t);
	ok(json_is_object(jp(g, "devices")) && !json_object_size(jp(g, "devices")), "memory: {}");
	json_decref(g);

	/* Two inputs with one label keep apart; an input's ENODEV fails that chip for the cycle. */
	put(sys_root, "class/hwmon/hwmon0/temp3_label", "Core 0\n");
	put(sys_root, "class/hwmon/hwmon7/freq1_label", "sclk\n");
	ops->close(st);
	st = open_state();
	g = collect(st, GROUP_DEVICE_THERMAL, t);
	ok(jp(g, "devices.0.temperatures_celsius.core_0") && jp(g, "devices.0.temperatures_celsius.temp3"),
	   "a second \"Core 0\" is reported as temp3");
	ok(jp(g, "devices.0.temperatures_crit_celsius.temp3"), "and so is its threshold");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_CLOCKS, t);
	is_double(jnum(g, "devices.7.clocks_mhz.sclk"), 300, 1e-9, "freq1_label names the clock");
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
	json_decref(collect(st, GROUP_DEVICE_CLOCKS, t));
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

/* An older kernel's layout: class/hwmon/hwmonN holds only the device link, the attributes are the device's. */
static void test_old_kernel(void)
{
	void *st;
	json_t *g;
	int64_t t = clock_mono_ns();

	setup("oldkernel");
	st = open_state();
	g = collect(st, GROUP_DEVICE_INFO, t);
	is_int(json_object_size(jp(g, "devices")), 2, "old kernel: applesmc and coretemp (hwmon2 is amdgpu's)");
	is_str(jstr(g, "devices.0.model"), "applesmc", "the name file in the device's directory");
	is_str(jstr(g, "devices.0.device"), "applesmc.768", "the device");
	is_str(jstr(g, "devices.1.driver"), "coretemp", "its driver");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_THERMAL, t);
	is_double(jnum(g, "devices.0.temperatures_celsius.ta0p"), 41.25, 1e-9, "applesmc temp1_input by its label");
	is_double(jnum(g, "devices.0.fan_rpm.master"), 2000, 0, "applesmc fan1_input by its label");
	is_double(jnum(g, "devices.1.temperatures_celsius.core_0"), 52, 1e-9, "old coretemp: temp2_input");
	is_double(jnum(g, "devices.1.temperatures_crit_celsius.core_0"), 105, 1e-9, "its temp2_crit");
	is_double(jnum(g, "devices.1.temperatures_max_celsius.core_0"), 95, 1e-9, "its temp2_max");
	json_decref(g);

	/* The platform device goes away (module unloaded): gone, then dropped. */
	sh("rm -rf '%s/devices/platform/applesmc.768'", sys_root);
	t += 1000000000;
	g = collect(st, GROUP_DEVICE_THERMAL, t);
	ok(strstr(jstr(g, "devices.0.error"), "disappeared") != NULL, "old layout, device removed: an error once");
	json_decref(g);
	ops->close(st);
}

/* sysfs copied without links: chips found, their PCI address, device node and driver from uevent. */
static void test_no_links(void)
{
	void *st;
	json_t *g;
	int64_t t = clock_mono_ns();

	setup("nolinks");
	sh("test -z \"$(find '%s' -type l)\"", sys_root);
	st = open_state();
	g = collect(st, GROUP_DEVICE_INFO, t);
	is_int(json_object_size(jp(g, "devices")), 7, "no links: the same seven chips");
	ok(!jp(g, "devices.3") && !jp(g, "devices.5"), "amdgpu's chips still amdgpu's (by name)");
	is_str(jstr(g, "devices.7.pci_bus_id"), "0000:09:00.0", "the PCI address from uevent's PCI_SLOT_NAME");
	is_str(jstr(g, "devices.7.driver"), "radeon", "the driver from uevent's DRIVER");
	is_str(jstr(g, "devices.0.driver"), "coretemp", "a platform device's driver from uevent");
	is_str(jstr(g, "devices.2.device"), "nvme0", "a device node's name from uevent's DEVNAME");
	ok(!jp(g, "devices.0.device"), "a platform device without a link: no name, absent");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_THERMAL, t);
	is_double(jnum(g, "devices.0.temperatures_celsius.package_id_0"), 48, 1e-9, "values as with links");
	is_str(jtext(g, "devices.6.alarms.in1"), "1", "alarms too");
	json_decref(g);
	ops->close(st);
}

/*
 * Energy by sensor: an amd_energy chip's energy*_input counters (µJ, by
 * label), the power meter's power1_average integrated, and chips with
 * neither have no energy field.
 */
static void test_energy(void)
{
	void *st;
	json_t *g;
	int64_t t;

	setup("host");
	sh("mkdir -p '%s/class/hwmon/hwmon9'", sys_root);
	put(sys_root, "class/hwmon/hwmon9/name", "amd_energy\n");
	put(sys_root, "class/hwmon/hwmon9/energy1_input", "7000000\n");
	put(sys_root, "class/hwmon/hwmon9/energy1_label", "Ecore000\n");
	put(sys_root, "class/hwmon/hwmon9/energy2_input", "90000000\n");
	put(sys_root, "class/hwmon/hwmon9/energy2_label", "Esocket0\n");
	st = open_state();
	t = clock_mono_ns() + 1000000000;
	g = collect(st, GROUP_DEVICE_POWER, t);
	ok(!jp(g, "devices.9.energy_sensors_joules") && !jp(g, "devices.4.energy_sensors_joules"),
	   "first report: baselines, no energy yet");
	json_decref(g);
	put(sys_root, "class/hwmon/hwmon9/energy1_input", "7250000\n");
	put(sys_root, "class/hwmon/hwmon9/energy2_input", "93000000\n");
	put(sys_root, "class/hwmon/hwmon4/power1_average", "260500000\n");
	g = collect(st, GROUP_DEVICE_POWER, t + 4000000000);
	is_double(jnum(g, "devices.9.energy_sensors_joules.ecore000"), 0.25, 1e-9, "energy1_input +250000 µJ");
	is_double(jnum(g, "devices.9.energy_sensors_joules.esocket0"), 3, 1e-9, "energy2_input +3e6 µJ");
	is_double(jnum(g, "devices.4.energy_sensors_joules.power1"), 1002, 1e-9,
		  "power meter: (240.5 + 260.5) / 2 W x 4 s = 1002 J");
	ok(!jp(g, "devices.6.energy_sensors_joules"), "no power, no energy input: no energy field, never 0");
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
	test_old_kernel();
	test_no_links();
	test_energy();
	if (work[0])
		sh("rm -rf '%s'", work);
	return done_testing();
}
