/* SPDX-License-Identifier: MIT */
/*
 * The Neuron collector (monitor/sysfs/coll_neuron.c) on a copy of the fixture
 * tree tests/fixtures/sysfs/host (two Trainium devices of two NeuronCores,
 * the Neuron Sysfs User Guide's layout), changed between cycles: counters
 * that move, counters that reset (driver reload, write-to-clear), busy
 * time as utilization, a device vanishing, no driver, a read failing with
 * ENODEV, and the broken tree (plain files for counters, a counter without
 * total, garbage).
 * Expected values: tests/fixtures/sysfs/EXPECTED.md.
 */
#define COLL_TYPE "neuron"
#define COLL_OPS coll_neuron_ops
#include "coll_harness.h"
#include "sys_group.h"

/* The collector driven here (collectors.c registers it). */
extern const struct collector_ops coll_neuron_hw_ops;

/* ---- the tests ---------------------------------------------------------------------- */

#define N0 "devices/virtual/neuron_device/neuron0"
#define C0 N0 "/neuron_core0/stats"

/* The member names of the object at path, in order, space-separated. */
static const char *keys(json_t *o, const char *path)
{
	static char text[512];
	size_t n = 0;
	const char *k;
	json_t *v;

	text[0] = '\0';
	json_object_foreach(jp(o, path), k, v) {
		if (n >= sizeof(text))
			break;
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%s", n ? " " : "", k);
	}
	return text;
}

static void test_values(void)
{
	void *st;
	json_t *g;
	int64_t t;

	setup("host");
	is_int(ops->probe(&(struct mon_env){ .host = fixture_host() }), 1, "probe: Neuron devices found");
	st = open_state();
	ok(!ops->error(st), "no entry error");
	t = clock_mono_ns() + 1000000000;

	g = collect(st, GROUP_DEVICE_INFO, t);
	is_int(json_object_size(jp(g, "devices")), 2, "two devices");
	is_str(jstr(g, "devices.0.uuid"), "4d5a6f0123456789", "the serial is the uuid (no UUID)");
	is_str(jstr(g, "devices.0.serial"), "4d5a6f0123456789", "serial");
	is_str(jstr(g, "devices.0.model"), "Trainium1", "model: info/architecture/device_type");
	is_double(jnum(g, "devices.0.core_count"), 2, 0, "core_count");
	is_str(jstr(g, "devices.1.arch_type"), "NCv2", "architecture/arch_type");
	is_str(jstr(g, "devices.1.instance_type"), "Trn1", "architecture/instance_type");
	is_double(json_integer_value(json_array_get(jp(g, "devices.0.connected_devices"), 0)), 1, 0, "connected_devices");
	is_str(jstr(g, "devices.0.driver_version"), "2.19.64.0", "module/neuron/version");
	ok(!jp(g, "devices.0.pci_bus_id"), "a virtual device: no PCI address");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_UTILIZATION, t);
	is_double(jnum(g, "devices.0.neuroncores.0.utilization_percent"), 0, 1e-9, "no busy time since open: 0 %");
	is_double(jnum(g, "devices.0.neuroncores.0.status_total.success"), 1200, 0, "status/success/total");
	is_double(jnum(g, "devices.0.neuroncores.0.status.success"), 0, 0, "per period: 0 since open");
	ok(jp(g, "devices.1.neuroncores.2") && jp(g, "devices.1.neuroncores.3") && !jp(g, "devices.1.neuroncores.0"),
	   "NeuronCores keyed like neuron-monitor: device 1's are 2 and 3");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_MEMORY, t);
	is_double(jnum(g, "devices.0.neuroncores.0.tensors"), 134217728, 0, "device_mem/tensors/total");
	is_double(jnum(g, "devices.0.neuroncores.1.model_code"), 104857600, 0, "device_mem/model_code of core 1");
	is_double(jnum(g, "devices.0.used_bytes"), 1789931520, 0, "used_bytes: every category of every core");
	is_str(jtext(g, "devices.0.used_bytes"), "1789931520", "written as an integer");
	is_str(keys(g, "devices.0"), "index uuid model error used_bytes host_used_bytes neuroncores host_bytes",
	       "the device's members in the report's order");
	is_double(jnum(g, "devices.0.host_bytes.dma_buffers"), 33554432, 0, "host_mem/dma_buffers");
	is_double(jnum(g, "devices.0.host_used_bytes"), 122949632, 0, "host_used_bytes");
	ok(!jp(g, "devices.0.total_bytes"), "no total in sysfs: total_bytes absent");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_POWER, t);
	is_double(jnum(g, "devices.0.power_percent"), 43.75, 1e-9, "power/utilization: the average");
	ok(!jp(g, "devices.1.power_percent") && jp(g, "devices.1"), "POWER_STATUS_NO_DATA: absent, not 0");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_ERRORS, t);
	is_double(jnum(g, "devices.0.ecc_events_total.mem_ecc_repairable_uncorrected"), 2, 0, "hardware counter total");
	is_double(jnum(g, "devices.0.ecc_uncorrected_volatile_total"), 2, 0, "uncorrected running total");
	is_double(jnum(g, "devices.1.ecc_corrected_volatile_total"), 6, 0, "mem + sram corrected (older counters)");
	is_double(jnum(g, "devices.0.ecc_errors.uncorrected"), 0, 0, "none in the period");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_THERMAL, t);
	ok(json_is_object(jp(g, "devices")) && !json_object_size(jp(g, "devices")),
	   "no thermal data in Neuron sysfs: \"devices\": {}");
	json_decref(g);

	/* One second later: core 0 busy half the time, 100 inferences, a timeout, an ECC event. */
	put(sys_root, C0 "/other_info/nc_time_in_use", "50500000\n");
	put(sys_root, C0 "/other_info/inference_count", "1300\n");
	put(sys_root, C0 "/status/success/total", "1300\n");
	put(sys_root, C0 "/status/timeout/total", "3\n");
	put(sys_root, N0 "/stats/hardware/mem_ecc_repairable_uncorrected/total", "3\n");
	t += 1000000000;
	g = collect(st, GROUP_DEVICE_UTILIZATION, t);
	is_double(jnum(g, "devices.0.neuroncores.0.utilization_percent"), 50, 0.5, "nc_time_in_use: 500 ms of 1 s");
	is_double(jnum(g, "devices.0.neuroncores.1.utilization_percent"), 0, 1e-9, "core 1 idle");
	is_double(jnum(g, "devices.0.core_percent"), 25, 0.5, "core_percent: the cores' mean");
	is_double(jnum(g, "devices.0.neuroncores.0.inferences"), 100, 0, "inferences in the period");
	is_double(jnum(g, "devices.0.neuroncores.0.status.success"), 100, 0, "status/success in the period");
	is_double(jnum(g, "devices.0.neuroncores.0.status.timeout"), 1, 0, "status/timeout in the period");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_ERRORS, t);
	is_double(jnum(g, "devices.0.ecc_events.mem_ecc_repairable_uncorrected"), 1, 0, "one ECC event in the period");
	is_double(jnum(g, "devices.0.ecc_errors.uncorrected"), 1, 0, "counted as uncorrected");
	json_decref(g);

	/* The driver reloads: every counter restarts. A fresh start, never negative. */
	put(sys_root, C0 "/other_info/nc_time_in_use", "100000\n");
	put(sys_root, C0 "/other_info/inference_count", "5\n");
	put(sys_root, C0 "/status/success/total", "5\n");
	put(sys_root, N0 "/stats/hardware/mem_ecc_repairable_uncorrected/total", "0\n");
	t += 1000000000;
	g = collect(st, GROUP_DEVICE_UTILIZATION, t);
	is_double(jnum(g, "devices.0.neuroncores.0.status.success"), 5, 0, "success 1300 -> 5: 5, not -1295");
	is_double(jnum(g, "devices.0.neuroncores.0.inferences"), 5, 0, "inferences restart at their new value");
	is_double(jnum(g, "devices.0.neuroncores.0.utilization_percent"), 10, 0.2, "busy time counts from zero");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_ERRORS, t);
	is_double(jnum(g, "devices.0.ecc_events.mem_ecc_repairable_uncorrected"), 0, 0, "3 -> 0: 0, not -3");
	json_decref(g);

	/* A device that went away mid-cycle: ENODEV is that device's error. */
	fail_on("neuron1/stats/power/utilization", ENODEV);
	t += 1000000000;
	g = collect(st, GROUP_DEVICE_POWER, t);
	ok(strstr(jstr(g, "devices.1.error"), "went away") != NULL, "ENODEV: %s", jstr(g, "devices.1.error"));
	is_str(jstr(g, "devices.0.error"), "", "the other device reports");
	json_decref(g);
	fail_on(NULL, 0);
	ops->close(st);
}

static void test_vanish_and_driver(void)
{
	void *st;
	json_t *g;
	int64_t t;

	setup("host");
	st = open_state();
	t = clock_mono_ns();
	sh("rm -rf '%s/devices/virtual/neuron_device/neuron1'", sys_root);
	t += 1000000000;
	g = collect(st, GROUP_DEVICE_MEMORY, t);
	ok(strstr(jstr(g, "devices.1.error"), "disappeared") != NULL, "neuron1 removed: reported with an error once");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_THERMAL, t);
	ok(!json_object_size(jp(g, "devices")), "not in a group Neuron has no data for");
	json_decref(g);
	for (size_t i = 0; i < ARRAY_SIZE(groups); i++)
		json_decref(collect(st, groups[i].id, t));
	t += 1000000000;
	g = collect(st, GROUP_DEVICE_MEMORY, t);
	ok(!jp(g, "devices.1") && jp(g, "devices.0.used_bytes"), "then dropped; neuron0 stays index 0");
	json_decref(g);
	ops->close(st);

	sh("rm -rf '%s/devices/virtual/neuron_device'", sys_root);
	is_int(ops->probe(&env), 0, "probe: no Neuron driver");
	st = open_state();
	ok(ops->error(st) && strstr(ops->error(st), "not loaded"), "no driver: %s", ops->error(st) ? ops->error(st) : "");
	ops->close(st);
}

static void test_broken_tree(void)
{
	void *st;
	json_t *g;
	int64_t t;

	setup("broken");
	st = open_state();
	t = clock_mono_ns() + 1000000000;
	g = collect(st, GROUP_DEVICE_INFO, t);
	is_double(jnum(g, "devices.0.core_count"), 1, 0, "core_count \"two\": the NeuronCore directories found");
	ok(!jp(g, "devices.0.connected_devices"), "connected_devices garbage: left out");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_ERRORS, t);
	is_double(jnum(g, "devices.0.ecc_events_total.mem_ecc_uncorrected"), 1, 0, "a counter as a plain file is read");
	ok(!jp(g, "devices.0.ecc_events_total.sram_ecc_uncorrected"), "a garbage counter is left out");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_POWER, t);
	ok(!jp(g, "devices.0.power_percent"), "garbage power utilization: left out");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_UTILIZATION, t);
	is_double(jnum(g, "devices.0.neuroncores.0.status_total.success"), 10, 0, "a good counter");
	ok(!jp(g, "devices.0.neuroncores.0.status_total.failure"), "a counter directory without total: left out");
	ok(!jp(g, "devices.0.neuroncores.0.utilization_percent"), "empty nc_time_in_use: no utilization");
	is_double(jnum(g, "devices.0.neuroncores.0.inferences"), 0, 0, "inference_count as a plain file");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_MEMORY, t);
	ok(!jp(g, "devices.0.neuroncores.0.tensors") && !jp(g, "devices.0.used_bytes"), "\"1e6\" bytes: left out");
	json_decref(g);
	ops->close(st);
}

/* The system group neuron_hw_counters (coll_neuron_hw_ops) in neuron-monitor 2.x's schema. */
static json_t *hw_collect(void *st, int64_t mono)
{
	struct cycle cy = { .mono_ns = mono };

	return sys_group(&coll_neuron_hw_ops, st, &cy);
}

/* neuron_devices[i].key, or -12345 when absent. */
static double hw_num(json_t *g, size_t i, const char *key)
{
	json_t *v = json_object_get(json_array_get(json_object_get(g, "neuron_devices"), i), key);

	return json_is_number(v) ? json_number_value(v) : -12345.0;
}

static void test_hw_counters(void)
{
	struct mon_env e = { 0 };
	void *st = NULL;
	json_t *g, *d1;
	int64_t t = clock_mono_ns() + 1000000000;

	setup("host");
	e.host = fixture_host();
	is_int(coll_neuron_hw_ops.open(&e, &(struct coll_target){ .dev = NULL }, &st), 0, "neuron_hw_counters: open");
	g = hw_collect(st, t);
	is_str(jstr(g, "error"), "", "no error");
	is_int(json_array_size(json_object_get(g, "neuron_devices")), 2, "neuron_devices[]: both devices");
	is_double(hw_num(g, 0, "neuron_device_index"), 0, 0, "neuron_device_index 0");
	is_double(hw_num(g, 1, "neuron_device_index"), 1, 0, "neuron_device_index 1");
	is_double(hw_num(g, 0, "mem_ecc_uncorrected"), 0, 0, "mem_ecc_uncorrected: none since open");
	is_double(hw_num(g, 0, "sram_ecc_uncorrected"), 0, 0, "sram_ecc_uncorrected");
	is_double(hw_num(g, 0, "mem_ecc_corrected"), -12345, 0, "the newer driver has no mem_ecc_corrected: absent");
	is_double(hw_num(g, 1, "sram_ecc_corrected"), 0, 0, "the older one has sram_ecc_corrected");
	ok(!json_object_get(json_array_get(json_object_get(g, "neuron_devices"), 0), "mem_ecc_repairable_uncorrected"),
	   "only neuron-monitor's four fields");
	json_decref(g);

	put(sys_root, "devices/virtual/neuron_device/neuron1/stats/hardware/mem_ecc_corrected/total", "9\n");
	put(sys_root, N0 "/stats/hardware/mem_ecc_uncorrected/total", "2\n");
	g = hw_collect(st, t + 1000000000);
	is_double(hw_num(g, 1, "mem_ecc_corrected"), 4, 0, "5 -> 9: 4 corrected in the period");
	is_double(hw_num(g, 0, "mem_ecc_uncorrected"), 2, 0, "0 -> 2: 2 uncorrected");
	json_decref(g);

	fail_on("neuron1/stats/hardware/mem_ecc_corrected/total", ENODEV);
	g = hw_collect(st, t + 2000000000);
	is_int(json_array_size(json_object_get(g, "neuron_devices")), 1, "a device that fails is left out");
	ok(strstr(jstr(g, "error"), "neuron1") != NULL, "and named in the error: %s", jstr(g, "error"));
	json_decref(g);
	fail_on(NULL, 0);

	sh("rm -rf '%s/devices/virtual/neuron_device/neuron0'", sys_root);
	g = hw_collect(st, t + 3000000000);
	d1 = json_array_get(json_object_get(g, "neuron_devices"), 0);
	ok(json_array_size(json_object_get(g, "neuron_devices")) == 1 &&
	   json_integer_value(json_object_get(d1, "neuron_device_index")) == 1, "neuron0 removed: neuron1 alone");
	json_decref(g);
	coll_neuron_hw_ops.close(st);

	sh("rm -rf '%s/devices/virtual/neuron_device'", sys_root);
	st = NULL;
	ok(coll_neuron_hw_ops.open(&e, &(struct coll_target){ .dev = NULL }, &st) < 0, "no driver: open fails");
	g = hw_collect(st, t);
	ok(strstr(jstr(g, "error"), "not loaded") != NULL, "and the group says why: %s", jstr(g, "error"));
	ok(!json_object_get(g, "neuron_devices"), "without neuron_devices");
	json_decref(g);
	coll_neuron_hw_ops.close(st);
}

#define P63 "9223372036854775808\n"   /* 2^63 */
#define NA "18446744073709551615\n"     /* 2^64-1: "not available" */
#define E19 "10000000000000000000\n"    /* 1e19 */

/*
 * u64 values at the edges: 2^63 and 1e19 keep their value (a real, never a
 * negative integer), 2^64-1 is left out, sums past 2^64 do not wrap.
 */
static void test_u64_edges(void)
{
	void *st;
	json_t *g;
	int64_t t = clock_mono_ns() + 1000000000;

	setup("host");
	put(sys_root, N0 "/stats/hardware/mem_ecc_uncorrected/total", P63);
	put(sys_root, N0 "/stats/hardware/mem_ecc_repairable_uncorrected/total", NA);
	put(sys_root, N0 "/stats/hardware/sram_ecc_uncorrected/total", E19);
	put(sys_root, "devices/virtual/neuron_device/neuron1/stats/hardware/mem_ecc_corrected/total", E19);
	put(sys_root, "devices/virtual/neuron_device/neuron1/stats/hardware/sram_ecc_corrected/total", E19);
	put(sys_root, C0 "/memory_usage/device_mem/tensors/total", E19);
	put(sys_root, C0 "/memory_usage/device_mem/constants/total", E19);
	put(sys_root, C0 "/status/success/total", P63);
	st = open_state();

	g = collect(st, GROUP_DEVICE_ERRORS, t);
	is_str(jtext(g, "devices.0.ecc_events_total.mem_ecc_uncorrected"), "9.223372036854776e+18",
	       "2^63: written as a real that reads back as 2^63");
	is_double(jnum(g, "devices.0.ecc_events_total.mem_ecc_uncorrected"), 9223372036854775808.0, 0, "its value");
	ok(!jp(g, "devices.0.ecc_events_total.mem_ecc_repairable_uncorrected"), "2^64-1 (not available): left out");
	is_str(jtext(g, "devices.0.ecc_events_total.sram_ecc_uncorrected"), "1e+19", "1e19: kept");
	is_double(jnum(g, "devices.0.ecc_uncorrected_volatile_total"), 9223372036854775808.0 + 1e19, 1e4,
		  "a sum past 2^64 does not wrap");
	is_double(jnum(g, "devices.1.ecc_corrected_volatile_total"), 2e19, 0, "1e19 + 1e19 = 2e19");
	is_double(jnum(g, "devices.0.ecc_errors.uncorrected"), 0, 0, "per period: 0");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_MEMORY, t);
	is_str(jtext(g, "devices.0.neuroncores.0.tensors"), "1e+19", "a memory category of 1e19");
	is_double(jnum(g, "devices.0.used_bytes"), 2e19 + 1550856192.0, 1e4,
		  "used_bytes summed past 2^64 (core 1 and the rest of core 0 added)");
	is_str(jtext(g, "devices.0.used_bytes"), "2.0000000001550856e+19", "written as a real");
	is_str(keys(g, "devices.0"), "index uuid model error used_bytes host_used_bytes neuroncores host_bytes",
	       "in its place among the device's members");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_UTILIZATION, t);
	is_str(jtext(g, "devices.0.neuroncores.0.status_total.success"), "9.223372036854776e+18",
	       "a status counter of 2^63");
	json_decref(g);
	put(sys_root, C0 "/status/success/total", "9223372036854775818\n");
	g = collect(st, GROUP_DEVICE_UTILIZATION, t + 1000000000);
	is_str(jtext(g, "devices.0.neuroncores.0.status.success"), "10", "its increase past 2^63: 10");
	json_decref(g);
	ops->close(st);
}

int main(void)
{
	/* The warnings about bad files are the integration test's business; keep TAP output clean. */
	log_init("test_coll_neuron", LOG_LVL_SILENT);
	test_values();
	test_vanish_and_driver();
	test_broken_tree();
	test_u64_edges();
	test_hw_counters();
	if (work[0])
		sh("rm -rf '%s'", work);
	return done_testing();
}
