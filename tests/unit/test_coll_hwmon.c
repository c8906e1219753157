/* SPDX-License-Identifier: MIT */
/*
 * The hwmon collector (monitor/coll_hwmon.c) on a copy of the fixture tree
 * tests/fixtures/sysfs/host (coretemp, acpitz, nvme, an ACPI power meter,
 * a Super I/O chip with fans, and two amdgpu chips that are left to the
 * amdgpu collector): labels, units, a chip vanishing, ENODEV, and the
 * broken tree (garbage, a directory where an input belongs, no name).
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
		snprintf(work, sizeof(work), "%s/accel-hwmon.XXXXXX", tmp && *tmp ? tmp : "/tmp");
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
static struct cfg_device cfg = { .type = "hwmon", .select_all = 1, .period_ms = 1000, .groups = groups,
				 .ngroups = 7 };
static struct mon_env env;
static const struct device_ops *ops = &coll_hwmon_ops;

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

int main(void)
{
	/* The warnings about bad files are the integration test's business; keep TAP output clean. */
	log_init("test_coll_hwmon", LOG_LVL_SILENT);
	test_chips();
	test_broken_tree();
	if (work[0])
		sh("rm -rf '%s'", work);
	return done_testing();
}
