/* SPDX-License-Identifier: MIT */
/*
 * The NCS collector (monitor/sysfs/coll_ncs2.c) on a copy of the fixture trees
 * tests/fixtures/sysfs/host (an NCS1, an NCS2 and a stick whose firmware
 * runs, next to a keyboard and the root hubs) and tests/fixtures/proc-devices
 * (a process holding the booted stick's /dev/bus/usb node open): models,
 * availability, no fake temperature, hot-plug (a stick leaving: one error,
 * then dropped; a stick arriving: picked up next cycle), the re-enumeration
 * when a stick boots, the broken tree, and a stick's temperature published
 * by the application holding it (facts.h: matched by pid, and by port
 * where the name has one; bounded age).
 * Expected values: tests/fixtures/sysfs/EXPECTED.md.
 */
#define COLL_TYPE "ncs2"
#define COLL_OPS coll_ncs2_ops
#include "coll_harness.h"
#include "../../monitor/host/host.h"

/* ---- the tests ---------------------------------------------------------------------- */

#define USB2 "devices/pci0000:00/0000:00:14.0/usb2"

static void test_sticks(void)
{
	void *st;
	json_t *g;
	int64_t t;

	setup("host");
	is_int(ops->probe(&(struct mon_env){ .host = fixture_host() }), 1, "probe: sticks found");
	st = open_state();
	ok(!ops->error(st), "no entry error");
	t = clock_mono_ns();

	g = collect(st, GROUP_DEVICE_INFO, t);
	is_int(json_object_size(jp(g, "devices")), 3, "three sticks (not the keyboard, not the hubs)");
	is_str(jstr(g, "devices.0.port_path"), "1-4", "index 0: the NCS1 on port 1-4");
	is_str(jstr(g, "devices.0.model"), "Intel Movidius Neural Compute Stick (Myriad 2)", "2150: NCS1");
	ok(!jp(g, "devices.0.serial") && !jp(g, "devices.0.uuid"), "no serial string: absent");
	is_str(jstr(g, "devices.1.model"), "Intel Neural Compute Stick 2 (Myriad X)", "2485: NCS2");
	is_str(jstr(g, "devices.1.uuid"), "03e72485", "its serial is its uuid");
	ok(json_is_false(jp(g, "devices.1.booted")), "not booted");
	is_double(jnum(g, "devices.1.busnum"), 2, 0, "busnum");
	is_double(jnum(g, "devices.1.speed_mbps"), 5000, 0, "speed");
	ok(json_is_true(jp(g, "devices.2.booted")), "f63b: firmware booted");
	is_str(jstr(g, "devices.2.usb_id"), "03e7:f63b", "usb_id");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_UTILIZATION, t);
	ok(json_is_true(jp(g, "devices.0.available")) && json_is_true(jp(g, "devices.1.available")),
	   "no process holds 001/004 or 002/002: available");
	ok(json_is_false(jp(g, "devices.2.available")), "benchmark_app holds 002/005: not available");
	is_int(json_array_size(jp(g, "devices.2.pids")), 1, "one process, though it holds the node twice");
	is_int(json_integer_value(json_array_get(jp(g, "devices.2.pids"), 0)), 3000, "pid 3000");
	is_double(jnum(g, "num_devices"), 3, 0, "num_devices");
	is_double(jnum(g, "num_available_devices"), 2, 0, "num_available_devices");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_THERMAL, t);
	ok(jp(g, "devices.1") && !jp(g, "devices.1.temperatures_celsius"), "no OpenVINO: no temperature, not 0 °C");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_POWER, t);
	ok(json_is_object(jp(g, "devices")) && !json_object_size(jp(g, "devices")), "power: nothing to say, {}");
	json_decref(g);

	/* Another process opens the NCS1. */
	sh("ln -s /dev/bus/usb/001/004 '%s/3000/fd/20'", proc_root);
	t += 1000000000;
	g = collect(st, GROUP_DEVICE_UTILIZATION, t);
	ok(json_is_false(jp(g, "devices.0.available")), "a process opens 001/004: the NCS1 is no longer available");
	is_double(jnum(g, "num_available_devices"), 1, 0, "num_available_devices 1");
	json_decref(g);

	/* The NCS2 boots its firmware: it re-enumerates on the same port as f63b with a new devnum. */
	put(sys_root, USB2 "/2-1/idProduct", "f63b\n");
	put(sys_root, USB2 "/2-1/devnum", "6\n");
	t += 1000000000;
	g = collect(st, GROUP_DEVICE_INFO, t);
	ok(json_is_true(jp(g, "devices.1.booted")), "booted: same port, same index");
	is_str(jstr(g, "devices.1.model"), "Intel Neural Compute Stick 2 (Myriad X)", "still named an NCS2");
	is_double(jnum(g, "devices.1.devnum"), 6, 0, "its new device number");
	json_decref(g);

	/* It overheats and disconnects. */
	sh("rm -rf '%s/bus/usb/devices/2-1' '%s/" USB2 "/2-1'", sys_root, sys_root);
	t += 1000000000;
	for (int c = 0; c < 2; c++, t += 1000000000) {
		json_t *u = collect(st, GROUP_DEVICE_UTILIZATION, t);
		json_t *i = collect(st, GROUP_DEVICE_INFO, t);
		json_t *h = collect(st, GROUP_DEVICE_THERMAL, t);

		if (c == 0) {
			ok(strstr(jstr(i, "devices.1.error"), "disappeared") && strstr(jstr(u, "devices.1.error"), "disappeared")
			   && strstr(jstr(h, "devices.1.error"), "disappeared"),
			   "disconnect: an error for one cycle in each group (%s)", jstr(i, "devices.1.error"));
			is_double(jnum(u, "num_devices"), 2, 0, "and it no longer counts");
		} else {
			ok(!jp(i, "devices.1") && !jp(u, "devices.1") && !jp(h, "devices.1"), "then dropped");
			is_str(jstr(i, "devices.2.port_path"), "2-2", "the others keep their index");
		}
		json_decref(u);
		json_decref(i);
		json_decref(h);
	}

	/* A new stick is plugged in: picked up on the next cycle, at the lowest free index. */
	sh("mkdir -p '%s/" USB2 "/2-3' && cd '%s/" USB2 "/2-3' && printf '03e7\\n' >idVendor && printf '2485\\n' >idProduct"
	   " && printf '2\\n' >busnum && printf '7\\n' >devnum && printf 'CAFE42\\n' >serial && "
	   "ln -s ../../../" USB2 "/2-3 '%s/bus/usb/devices/2-3'", sys_root, sys_root, sys_root);
	g = collect(st, GROUP_DEVICE_INFO, t);
	is_str(jstr(g, "devices.1.serial"), "CAFE42", "plugged in: index 1, picked up at once");
	json_decref(g);
	ops->close(st);
}

static void test_broken_tree(void)
{
	void *st;
	json_t *g;

	setup("broken");
	st = open_state();
	g = collect(st, GROUP_DEVICE_INFO, clock_mono_ns());
	is_int(json_object_size(jp(g, "devices")), 1,
	       "busnum garbage (no device node to watch) and an unknown product: left out");
	is_str(jstr(g, "devices.0.port_path"), "1-3", "the good stick");
	ok(!jp(g, "devices.0.speed_mbps"), "speed garbage: left out");
	json_decref(g);
	ops->close(st);

	/* No USB at all: no error, no device. */
	sh("rm -rf '%s/bus'", sys_root);
	st = open_state();
	g = collect(st, GROUP_DEVICE_UTILIZATION, clock_mono_ns());
	ok(!ops->error(st) && !json_object_size(jp(g, "devices")), "no bus/usb: no stick, no error");
	is_double(jnum(g, "num_devices"), 0, 0, "num_devices 0");
	json_decref(g);
	ops->close(st);
	fail_on(NULL, 0);
	(void)put;
}

/* A temperature fact as an endpoint runtime publishes it: pid's reading of stick name, read at at. */
static struct fact temp_fact(pid_t pid, const char *name, double celsius, int64_t at)
{
	struct fact f = { .pid = pid, .value = celsius, .at_ns = at, .until_ns = at + 2 * NS_PER_S };

	snprintf(f.device_type, sizeof(f.device_type), "ncs2");
	snprintf(f.name, sizeof(f.name), "%s", name);
	snprintf(f.field, sizeof(f.field), "temperature_celsius");
	snprintf(f.source, sizeof(f.source), "runtime http://127.0.0.1:8085/metrics");
	return f;
}

static void test_app_temperature(void)
{
	struct fact f[3];
	int owner;
	void *st;
	json_t *g;
	int64_t t = clock_mono_ns();

	setup("host");
	st = open_state();
	ok(host_facts_wanted(env.host, "ncs2"), "an open ncs2 collector wants ncs2 facts (endpoints look for them)");

	/* benchmark_app (pid 3000) holds the booted stick on port 2-2 (index 2), and serves its temperature. */
	f[0] = temp_fact(3000, "MYRIAD", 41.5, t - NS_PER_S / 2);
	host_facts_publish(env.host, &owner, f, 1);
	g = collect(st, GROUP_DEVICE_THERMAL, t);
	is_str(jtext(g, "devices.2.temperatures_celsius"), "{\"MYRIAD\":41.5}",
	       "the holder's reading, keyed by its name label (ncs2_temperature_celsius{name})");
	is_str(jstr(g, "devices.2.temperature_source"), "runtime http://127.0.0.1:8085/metrics", "where it came from");
	is_double(jnum(g, "devices.2.temperature_age_seconds"), 0.5, 1e-9, "and how old it is");
	ok(!jp(g, "devices.0.temperatures_celsius") && !jp(g, "devices.1.temperatures_celsius"),
	   "sticks that process does not hold: no temperature");
	json_decref(g);

	/* Too old: past what the publisher promised. */
	g = collect(st, GROUP_DEVICE_THERMAL, t + 3 * NS_PER_S);
	ok(!jp(g, "devices.2.temperatures_celsius") && !jp(g, "devices.2.temperature_source"),
	   "a reading past its validity is not used");
	json_decref(g);

	/* A process that holds no stick. */
	f[0] = temp_fact(4242, "MYRIAD", 39.0, t);
	host_facts_publish(env.host, &owner, f, 1);
	g = collect(st, GROUP_DEVICE_THERMAL, t + NS_PER_S);
	ok(!jp(g, "devices.0.temperatures_celsius") && !jp(g, "devices.1.temperatures_celsius") &&
	   !jp(g, "devices.2.temperatures_celsius"), "a reading from a process that holds no stick: on no stick");
	json_decref(g);

	/* The same process opens the NCS1 (port 1-4) too: a plain "MYRIAD" no longer says which. */
	sh("ln -s /dev/bus/usb/001/004 '%s/3000/fd/20'", proc_root);
	f[0] = temp_fact(3000, "MYRIAD", 41.5, t);
	host_facts_publish(env.host, &owner, f, 1);
	g = collect(st, GROUP_DEVICE_THERMAL, t + 2 * NS_PER_S);
	ok(!jp(g, "devices.0.temperatures_celsius") && !jp(g, "devices.2.temperatures_celsius"),
	   "\"MYRIAD\" from a process with two sticks: on neither");
	json_decref(g);

	/* OpenVINO's per-stick names carry the port: MYRIAD.<bus>.<port>-<chip>. */
	f[0] = temp_fact(3000, "MYRIAD.1.4-ma2450", 38.25, t + NS_PER_S);
	f[1] = temp_fact(3000, "MYRIAD.2.2-ma2480", 44.0, t + NS_PER_S);
	f[2] = temp_fact(3000, "MYRIAD.2.1-ma2480", 50.0, t + NS_PER_S); /* port 2-1: the NCS2 it does not hold */
	host_facts_publish(env.host, &owner, f, 3);
	g = collect(st, GROUP_DEVICE_THERMAL, t + 2 * NS_PER_S);
	is_str(jtext(g, "devices.0.temperatures_celsius"), "{\"MYRIAD.1.4-ma2450\":38.25}", "port 1-4: the NCS1's");
	is_str(jtext(g, "devices.2.temperatures_celsius"), "{\"MYRIAD.2.2-ma2480\":44.0}", "port 2-2: the booted stick's");
	ok(!jp(g, "devices.1.temperatures_celsius"), "port 2-1: not held by that process, not used");
	json_decref(g);

	/* Withdrawn (the scrape failed): gone at once. */
	host_facts_publish(env.host, &owner, NULL, 0);
	g = collect(st, GROUP_DEVICE_THERMAL, t + 2 * NS_PER_S);
	ok(!jp(g, "devices.0.temperatures_celsius") && !jp(g, "devices.2.temperatures_celsius"), "withdrawn: none");
	json_decref(g);
	ops->close(st);
	ok(!host_facts_wanted(env.host, "ncs2"), "closed: no longer");
}

/* 63 bytes: the longest name a device fact holds (facts.h), kept whole. */
#define LONG_NAME "MYRIAD.2.2-ma2480-with-a-name-as-long-as-a-fact-holds-012345678"

/*
 * A stick with several named readings, one name twice: the whole device
 * object as the report writes it (the sensors in the order first seen, the
 * name seen again taking the later value in its place, the longest name
 * whole, reals; then the source and age of the first reading).
 */
static void test_app_temperature_sensors(void)
{
	struct fact f[4];
	int owner;
	void *st;
	json_t *g;
	int64_t t = clock_mono_ns();

	setup("host");
	st = open_state();
	f[0] = temp_fact(3000, "MYRIAD", 41.5, t - NS_PER_S / 2);
	f[1] = temp_fact(3000, "MYRIAD.2.2-ma2480", 44.0, t);
	f[2] = temp_fact(3000, "MYRIAD", 42.25, t);
	snprintf(f[2].source, sizeof(f[2].source), "runtime http://127.0.0.1:9090/metrics");
	f[3] = temp_fact(3000, LONG_NAME, 40.0, t);
	is_int(strlen(LONG_NAME), sizeof(f[3].name) - 1, "the name fills a fact's");
	host_facts_publish(env.host, &owner, f, 4);
	g = collect(st, GROUP_DEVICE_THERMAL, t);
	is_str(jtext(g, "devices.2"),
	       "{\"index\":2,\"model\":\"Intel Movidius Myriad VPU (firmware booted)\",\"error\":\"\","
	       "\"temperatures_celsius\":{\"MYRIAD\":42.25,\"MYRIAD.2.2-ma2480\":44.0,\"" LONG_NAME
	       "\":40.0},\"temperature_source\":\"runtime http://127.0.0.1:8085/metrics\","
	       "\"temperature_age_seconds\":0.5}",
	       "the stick's object: its sensors, a name seen again replaced in place, then the first's source and age");
	ok(!jp(g, "devices.0.temperatures_celsius") && !jp(g, "devices.1.temperatures_celsius"), "the others: none");
	json_decref(g);
	host_facts_publish(env.host, &owner, NULL, 0);
	ops->close(st);
}

int main(void)
{
	/* The warnings about bad files are the integration test's business; keep TAP output clean. */
	log_init("test_coll_ncs2", LOG_LVL_SILENT);
	test_sticks();
	test_broken_tree();
	test_app_temperature();
	test_app_temperature_sensors();
	if (work[0])
		sh("rm -rf '%s'", work);
	return done_testing();
}
