/* SPDX-License-Identifier: MIT */
/*
 * The NCS collector (monitor/coll_ncs2.c) on a copy of the fixture trees
 * tests/fixtures/sysfs/host (an NCS1, an NCS2 and a stick whose firmware
 * runs, next to a keyboard and the root hubs) and tests/fixtures/proc-devices
 * (a process holding the booted stick's /dev/bus/usb node open): models,
 * availability, no fake temperature, hot-plug (a stick leaving: one error,
 * then dropped; a stick arriving: picked up next cycle), the re-enumeration
 * when a stick boots, and the broken tree.
 * Expected values: tests/fixtures/sysfs/EXPECTED.md.
 */
#undef _FORTIFY_SOURCE
#include "../../common/log.h"
#include "../../common/util.h"
#include "../../monitor/collector.h"
#include "../../monitor/sysfs.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- fault injection: openat of a path ending in fail_name fails with fail_err ---- */

static char fail_name[128];
static int fail_err;

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	char full[4096];
	size_t n, m = strlen(fail_name);

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	/* The whole path: the directory fd's, then path. */
	snprintf(full, sizeof(full), "%s", path);
	if (m && path[0] != '/') {
		char link[64], dir[4000];
		ssize_t k;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
		k = dirfd >= 0 ? readlink(link, dir, sizeof(dir) - 1) : -1;
		if (k > 0) {
			dir[k] = '\0';
			snprintf(full, sizeof(full), "%s/%s", dir, path);
		}
	}
	n = strlen(full);
	if (m && n >= m && !strcmp(full + n - m, fail_name)) {
		errno = fail_err;
		return -1;
	}
	return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}

static void fail_on(const char *name, int err)
{
	snprintf(fail_name, sizeof(fail_name), "%s", name ? name : "");
	fail_err = err;
}

/* ---- a private copy of the fixtures -------------------------------------------------- */

static char work[256], sys_root[300], proc_root[300];

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd)) {
		printf("Bail out! %s\n", cmd);
		exit(2);
	}
}

static void setup(const char *tree)
{
	const char *tmp = getenv("TMPDIR");

	if (!work[0]) {
		snprintf(work, sizeof(work), "%s/accel-ncs2.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(work)) {
			printf("Bail out! mkdtemp\n");
			exit(2);
		}
	}
	snprintf(sys_root, sizeof(sys_root), "%s/sys", work);
	snprintf(proc_root, sizeof(proc_root), "%s/proc", work);
	sh("rm -rf '%s' '%s' && cp -a tests/fixtures/sysfs/%s '%s' && cp -a tests/fixtures/proc-devices '%s'", sys_root,
	   proc_root, tree, sys_root, proc_root);
}

static void put(const char *root, const char *rel, const char *text)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		printf("Bail out! write %s\n", path);
		exit(2);
	}
}

/* The value at a dotted path ("devices.1.temperatures_celsius.edge"); borrowed, NULL when absent. */
static json_t *jp(json_t *o, const char *path)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
		o = json_object_get(o, k);
	return o;
}

static double jnum(json_t *o, const char *path)
{
	json_t *v = jp(o, path);

	return json_is_number(v) ? json_number_value(v) : -12345.0;
}

static const char *jstr(json_t *o, const char *path)
{
	json_t *v = jp(o, path);

	return json_is_string(v) ? json_string_value(v) : "(absent)";
}

static struct cfg_group groups[] = {
	{ GROUP_DEVICE_INFO, 1000 },    { GROUP_DEVICE_UTILIZATION, 1000 }, { GROUP_DEVICE_MEMORY, 1000 },
	{ GROUP_DEVICE_THERMAL, 1000 }, { GROUP_DEVICE_POWER, 1000 },       { GROUP_DEVICE_CLOCKS, 1000 },
	{ GROUP_DEVICE_ERRORS, 1000 },
};
static struct cfg_device cfg = { .type = "ncs2", .select_all = 1, .period_ms = 1000, .groups = groups,
				 .ngroups = 7 };
static struct mon_env env;
static const struct device_ops *ops = &coll_ncs2_ops;

/* Collect group id for cycle mono (new reference). */
static json_t *collect(void *st, enum group_id id, int64_t mono)
{
	struct cycle cy = { .mono_ns = mono };
	json_t *g = group_new(1.0, "2026-11-21T05:30:00.000Z");

	ops->collect(st, id, &cy, g);
	return g;
}

static void *open_state(void)
{
	void *st = NULL;

	env.procfs = proc_root;
	env.sysfs = sys_root;
	env.clk_tck = 100;
	env.page_size = 4096;
	ops->open(&env, &cfg, &st);
	return st;
}

/* ---- the tests ---------------------------------------------------------------------- */

#define USB2 "devices/pci0000:00/0000:00:14.0/usb2"

static void test_sticks(void)
{
	void *st;
	json_t *g;
	int64_t t;

	setup("host");
	is_int(ops->probe(&(struct mon_env){ .sysfs = sys_root }), 1, "probe: sticks found");
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

int main(void)
{
	/* The warnings about bad files are the integration test's business; keep TAP output clean. */
	log_init("test_coll_ncs2", LOG_LVL_SILENT);
	test_sticks();
	test_broken_tree();
	if (work[0])
		sh("rm -rf '%s'", work);
	return done_testing();
}
