/* SPDX-License-Identifier: MIT */
/*
 * The NVIDIA collector (monitor/nvidia/coll_nvidia.c) in process, against the fake
 * libnvidia-ml.so.1 (tests/helpers/fake_nvml.c), which this test compiles
 * with $CC (default cc) into a temporary directory: fields read and left
 * out, no JSON allocation per cycle in the steady state, per-process device
 * memory, counters that go backwards, and no library at all. The end-to-end
 * cases (goldens, a GPU lost and back, the old library) are in
 * tests/integration/nvml.sh.
 *
 * Run from the top of the tree (make check does); elsewhere set ACCEL_TOP.
 */
#include "../../common/log.h"
#include "../../monitor/core/collector.h"
#include "../../monitor/core/energy.h"
#include "../../monitor/host/host.h"
#include "tap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The collector driven here (collectors.c registers it). */
extern const struct collector_ops coll_nvidia_ops;

#include "nvml_cfg.h"

static long json_allocs;

static void *count_malloc(size_t n)
{
	json_allocs++;
	return malloc(n);
}

static void count_free(void *p)
{
	free(p);
}

static char dir[64];
static char top[512];

static int write_file(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* Build the fake into dir; 0 when it is there. */
static int build_fake(void)
{
	const char *cc = getenv("CC");
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "%s -std=c11 -D_GNU_SOURCE -shared -fPIC -O1 -o %s/libnvidia-ml.so.1 %s/tests/helpers/fake_nvml.c",
		 cc && *cc ? cc : "cc", dir, top);
	return system(cmd) == 0 ? 0 : -1;
}

/* FAKE_NVML_SCRIPT: name under base (the tree's top, or the temporary directory). */
static void use_script(const char *base, const char *name)
{
	char path[640];

	snprintf(path, sizeof(path), "%s/%s", base, name);
	setenv("FAKE_NVML_SCRIPT", path, 1);
}

static struct cfg_group all_groups[] = {
	{ GROUP_DEVICE_INFO, 100 },    { GROUP_DEVICE_UTILIZATION, 100 }, { GROUP_DEVICE_MEMORY, 100 },
	{ GROUP_DEVICE_THERMAL, 100 }, { GROUP_DEVICE_POWER, 100 },       { GROUP_DEVICE_CLOCKS, 100 },
	{ GROUP_DEVICE_ERRORS, 100 },
};
static struct cfg_device dev_all = { .type = "nvidia", .select_all = 1, .period_ms = 100, .groups = all_groups,
				     .ngroups = sizeof(all_groups) / sizeof(all_groups[0]) };

/* Collect group id at cycle n into a new group (caller's); *allocs gets the JSON allocations collect made. */
static json_t *collect(void *st, enum group_id id, int n, long *allocs)
{
	struct cycle cy = { .mono_ns = (int64_t)n * 100 * NS_PER_MS };
	json_t *g;
	long before;

	snprintf(cy.iso, sizeof(cy.iso), "2026-01-02T03:04:05.%03dZ", n % 1000);
	g = group_new(0.1, cy.iso);
	before = json_allocs;
	coll_nvidia_ops.collect(st, &cy, &id, 1, g);
	if (coll_nvidia_ops.energy) { /* the attribution phase, as the monitor runs it after the device groups */
		struct energy_obs_list l = { 0 };

		coll_nvidia_ops.energy(st, &l);
		host_energy_attribute(NULL, &l);
		energy_obs_free(&l);
	}
	if (allocs)
		*allocs = json_allocs - before;
	return g;
}

static json_t *dev_of(json_t *g, const char *key)
{
	return json_object_get(json_object_get(g, "devices"), key);
}

static double num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return v ? json_number_value(v) : -1;
}

static void test_fields_and_allocations(void)
{
	struct mon_env env = { 0 };
	void *st = NULL;
	long allocs, worst = 0;
	json_t *g;
	uint64_t bytes = 0;
	struct host *host;
	struct proc_devmem_list dm = { 0 };

	use_script(top, "tests/fixtures/nvml/multi.nvml");
	ok(coll_nvidia_ops.probe(&env) == 1, "probe: the fake library has GPUs");
	is_int(coll_nvidia_ops.open(&env, &(struct coll_target){ .dev = &dev_all }, &st), 0, "open");
	ok(coll_nvidia_ops.error(st) == NULL, "error(): NULL when NVML is up");

	g = collect(st, GROUP_DEVICE_POWER, 1, NULL);
	is_double(num(dev_of(g, "0"), "energy_joules"), 5.0, 1e-9, "GPU 0: energy over the first period (baseline at open)");
	is_double(num(dev_of(g, "0"), "power_watts"), 250.5, 1e-9, "GPU 0: power in W");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_THERMAL, 1, NULL);
	ok(!json_object_get(dev_of(g, "1"), "fan_percent"), "GPU 1: unsupported fan is absent, not 0");
	ok(!json_object_get(json_object_get(dev_of(g, "1"), "temperatures_celsius"), "memory"),
	   "GPU 1: unsupported memory temperature is absent");
	is_int(num(json_object_get(dev_of(g, "0"), "temperatures_celsius"), "memory"), 52,
	       "GPU 0: memory temperature from field value 82");
	is_int(json_array_size(json_object_get(dev_of(g, "0"), "throttle_reasons")), 2,
	       "GPU 0: reasons 0x5 are two names");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_UTILIZATION, 1, NULL);
	ok(!json_object_get(dev_of(g, "2"), "core_percent"), "GPU 2 (MIG): utilization absent, never 0");
	json_decref(g);
	usleep(300 * 1000); /* the XID comes through the collector's event thread, within milliseconds */
	g = collect(st, GROUP_DEVICE_ERRORS, 1, NULL);
	is_int(num(dev_of(g, "0"), "last_xid"), 79, "GPU 0: the XID event");
	ok(!json_object_get(dev_of(g, "1"), "ecc_errors"), "GPU 1: no ECC, no ecc_errors");
	json_decref(g);

	for (int n = 2; n <= 6; n++)
		for (int id = GROUP_DEVICE_INFO; id <= GROUP_DEVICE_ERRORS; id++) {
			g = collect(st, (enum group_id)id, n, &allocs);
			if (n >= 3 && allocs > worst)
				worst = allocs;
			json_decref(g);
		}
	ok(worst <= 1, "steady state: at most one JSON allocation per group and cycle (the \"devices\" key)");
	if (worst > 1)
		printf("#   got %ld\n", worst);

	host = host_new(&(struct host_opts){ .procfs = "/nonexistent" }, NULL);
	coll_nvidia_ops.proc_memory(st, &(struct cycle){ .mono_ns = 1 }, &dm);
	host_devmem_take(host, &dm);
	free(dm.p);
	is_int(host_devmem(host, 4242, &bytes), 0, "proc_memory: 4242 known");
	is_int(bytes, 1073741824, "proc_memory: 4242's bytes on GPU 0");
	is_int(host_devmem(host, 10005, &bytes), 0, "proc_memory: 10005 known");
	is_int(bytes, 1048576, "proc_memory: 10005's bytes on GPU 2 (beyond the first buffer)");
	is_int(host_devmem(host, 999999, &bytes), 0, "proc_memory: a process on no GPU is known");
	is_int(bytes, 0, "proc_memory: a process on no GPU: 0 bytes");
	host_free(host);
	coll_nvidia_ops.close(st);
}

static void test_backwards(void)
{
	struct mon_env env = { 0 };
	void *st = NULL;
	json_t *g;

	write_file("back.nvml", "gpu\nenergy 1000000 -5000\nreplay 10 -1\necc 5 5 5 5 0\n");
	use_script(dir, "back.nvml");
	is_int(coll_nvidia_ops.open(&env, &(struct coll_target){ .dev = &dev_all }, &st), 0, "backwards: open");
	for (int n = 1; n <= 2; n++) {
		g = collect(st, GROUP_DEVICE_POWER, n, NULL);
		/* on af149df the increase was the whole counter (about 1 GJ): energy_counter_step refuses the step */
		ok(!json_object_get(dev_of(g, "0"), "energy_joules"), "backwards, cycle %d: the period has no energy", n);
		ok(!json_object_get(dev_of(g, "0"), "processes"), "backwards: nothing split");
		ok(json_is_string(json_object_get(g, "error")) &&
			   strstr(json_string_value(json_object_get(g, "error")), "went back"),
		   "backwards: the group's error says the counter went back");
		is_double(num(dev_of(g, "0"), "energy_total_joules"), (1000000 - 5000.0 * n) / 1000, 1e-9,
			  "backwards: the counter starts afresh from its reading (the total is the counter's)");
		json_decref(g);
		g = collect(st, GROUP_DEVICE_ERRORS, n, NULL);
		is_int(num(dev_of(g, "0"), "pcie_replays"), num(dev_of(g, "0"), "pcie_replays_total"),
		       "backwards: PCIe replays start afresh");
		is_int(num(json_object_get(dev_of(g, "0"), "ecc_errors"), "corrected"), 0, "flat ECC counters: 0 errors");
		json_decref(g);
	}
	coll_nvidia_ops.close(st);
}

/*
 * The counter's steps in integers, and the plausibility check against the
 * power limit: on af149df a 1 J step near 2^64 came out as 0 or 4.096 J
 * (a double's mJ), and 100 J in 0.1 s on a 300 W GPU was counted.
 */
static void test_energy_check(void)
{
	struct mon_env env = { 0 };
	void *st = NULL;
	json_t *g;

	write_file("big.nvml", "gpu\nenergy 18446744073709000000 1000\n");
	use_script(dir, "big.nvml");
	is_int(coll_nvidia_ops.open(&env, &(struct coll_target){ .dev = &dev_all }, &st), 0, "near 2^64: open");
	for (int n = 1; n <= 3; n++) {
		g = collect(st, GROUP_DEVICE_POWER, n, NULL);
		ok(num(dev_of(g, "0"), "energy_joules") == 1.0, "near 2^64, cycle %d: a 1000 mJ step is 1 J (%.17g)", n,
		   num(dev_of(g, "0"), "energy_joules"));
		json_decref(g);
	}
	coll_nvidia_ops.close(st);

	/* GPU 0: 3 J a read; GPU 1: 100 J a read; both 300 W, and a read every 0.1 s */
	write_file("jump.nvml", "gpu\nlimit 300000\nenergy 1000000 3000\ngpu\nlimit 300000\nenergy 1000000 100000\n");
	use_script(dir, "jump.nvml");
	is_int(coll_nvidia_ops.open(&env, &(struct coll_target){ .dev = &dev_all }, &st), 0, "jump: open");
	json_decref(collect(st, GROUP_DEVICE_INFO, 1, NULL)); /* the power limits */
	json_decref(collect(st, GROUP_DEVICE_POWER, 1, NULL));
	g = collect(st, GROUP_DEVICE_POWER, 2, NULL);
	is_double(num(dev_of(g, "0"), "energy_joules"), 3, 1e-9, "3 J in 0.1 s (30 W) on a 300 W GPU: counted");
	ok(!json_object_get(dev_of(g, "1"), "energy_joules"), "100 J in 0.1 s on a 300 W GPU: the period has no energy");
	ok(json_is_string(json_object_get(g, "error")) &&
		   strstr(json_string_value(json_object_get(g, "error")), "device 1") &&
		   strstr(json_string_value(json_object_get(g, "error")), "1000 W"),
	   "... and the group's error names the GPU and the power it implies (%s)",
	   json_string_value(json_object_get(g, "error")));
	json_decref(g);
	coll_nvidia_ops.close(st);

	/* An idle_power_watts key that names no GPU: on af149df accepted silently; now the group's error names it. */
	if (nvml_config(&dev_all, json_pack("{s:s,s:{s:f,s:f}}", "slow_period", "period", "idle_power_watts", "0", 50.0,
					    "GPU-nosuch", 60.0)))
		return;
	is_int(coll_nvidia_ops.open(&env, &(struct coll_target){ .dev = &dev_all }, &st), 0, "idle key: open");
	json_decref(collect(st, GROUP_DEVICE_INFO, 1, NULL));
	g = collect(st, GROUP_DEVICE_POWER, 1, NULL);
	ok(json_is_string(json_object_get(g, "error")) &&
		   strstr(json_string_value(json_object_get(g, "error")), "idle_power_watts.GPU-nosuch names no device"),
	   "idle key: the group's error names the key that names no GPU (%s)",
	   json_string_value(json_object_get(g, "error")));
	ok(!strstr(json_string_value(json_object_get(g, "error")), "idle_power_watts.0 "), "... not the one that does");
	json_decref(g);
	coll_nvidia_ops.close(st);
	if (nvml_slow_period(&dev_all, "period"))
		return;
}

/* A process's joules in group g's device 0, or -1 when absent. */
static double proc_j(json_t *g, const char *pid)
{
	return num(json_object_get(dev_of(g, "0"), "processes"), pid);
}

/*
 * The split of a GPU's energy among its processes, hand-computed: the
 * counter gives 30 J a period (read every cycle), a period is 0.1 s (the
 * test's cycle clock), the power readings go 50 W, 200 W, so the idle
 * power is 50 W and the idle energy 5 J a period; the 25 J above idle go by
 * the SM samples (60 : 20) while there are any, then by device memory
 * (1 GiB : 3 GiB); a GPU whose process holds no memory: equal shares.
 */
static void test_split(void)
{
	struct mon_env env = { 0 };
	void *st = NULL;
	json_t *g, *d;

	write_file("split.nvml", "gpu\nenergy 1000000 30000\npower 50000 50000 200000\n"
				 "proc 4242 1073741824\nproc 4343 3221225472\n"
				 "proc_util 4242 60 60 0\nproc_util 4343 20 20 0\n"
				 "gpu\nenergy 0 10000\npower 0\nproc 5000 18446744073709551615\nproc 5001 0\n");
	use_script(dir, "split.nvml");
	is_int(coll_nvidia_ops.open(&env, &(struct coll_target){ .dev = &dev_all }, &st), 0, "split: open");
	g = collect(st, GROUP_DEVICE_POWER, 1, NULL);
	d = dev_of(g, "0");
	ok(json_object_get(d, "energy_joules") && !json_object_get(d, "processes") &&
	   !json_object_get(d, "idle_energy_joules"), "split: the first report is the split's baseline");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_POWER, 2, NULL);
	d = dev_of(g, "0");
	is_double(num(d, "energy_joules"), 30, 1e-9, "split: 30 J in the period");
	is_double(num(d, "idle_power_watts"), 50, 1e-9, "split: idle power, the lowest seen");
	is_double(num(d, "idle_energy_joules"), 5, 1e-9, "split: idle 50 W x 0.1 s");
	is_double(num(d, "active_energy_joules"), 25, 1e-9, "split: active 25 J");
	is_str(json_string_value(json_object_get(d, "energy_attribution")), "utilization", "split: by utilization");
	is_double(proc_j(g, "4242"), 18.75, 1e-9, "split: 60 of 80 SM: 18.75 J");
	is_double(proc_j(g, "4343"), 6.25, 1e-9, "split: 20 of 80 SM: 6.25 J");
	d = dev_of(g, "1");
	is_str(json_string_value(json_object_get(d, "energy_attribution")), "equal",
	       "split: no utilization, no memory known: equal shares");
	/* on af149df a process whose memory NVML does not give was dropped, and 5001 had all 10 J */
	is_double(num(json_object_get(d, "processes"), "5000"), 5, 1e-9,
		  "split: a process whose memory NVML does not give keeps its equal share (5 of 10 J)");
	is_double(num(json_object_get(d, "processes"), "5001"), 5, 1e-9,
		  "split: 10 J at 0 W idle, two processes: 5 J each (equal shares)");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_POWER, 3, NULL);
	d = dev_of(g, "0");
	is_str(json_string_value(json_object_get(d, "energy_attribution")), "memory",
	       "split: no SM sample in the period: device memory");
	is_double(proc_j(g, "4242"), 6.25, 1e-9, "split: 1 GiB of 4: 6.25 J");
	is_double(proc_j(g, "4343"), 18.75, 1e-9, "split: 3 GiB of 4: 18.75 J");
	is_double(proc_j(g, "4242") + proc_j(g, "4343") + num(d, "idle_energy_joules"), num(d, "energy_joules"), 1e-9,
		  "split: the shares and idle add up to the period's energy");
	json_decref(g);
	coll_nvidia_ops.close(st);

	/* The block's "idle_power_watts" for GPU 0 (by index) instead of the 50 W seen: idle 2 J, active 28 J. */
	{
		struct cfg_device idle = dev_all;

		idle.own = NULL;
		if (nvml_config(&idle, json_pack("{s:s,s:{s:i}}", "slow_period", "period", "idle_power_watts", "0", 20)))
			return;
		use_script(dir, "split.nvml");
		is_int(coll_nvidia_ops.open(&env, &(struct coll_target){ .dev = &idle }, &st), 0, "configured idle: open");
		json_decref(collect(st, GROUP_DEVICE_POWER, 1, NULL));
		g = collect(st, GROUP_DEVICE_POWER, 2, NULL);
		d = dev_of(g, "0");
		is_double(num(d, "idle_power_watts"), 20, 1e-9, "configured idle: 20 W, not the 50 W seen");
		is_double(num(d, "idle_energy_joules"), 2, 1e-9, "configured idle: 20 W x 0.1 s");
		is_double(proc_j(g, "4242"), 21, 1e-9, "configured idle: 60 of 80 SM of 28 J");
		is_double(proc_j(g, "4343"), 7, 1e-9, "configured idle: 20 of 80 SM of 28 J");
		is_double(num(dev_of(g, "1"), "idle_power_watts"), 0, 1e-9, "GPU 1, not named: the lowest seen (0 W)");
		json_decref(g);
		coll_nvidia_ops.close(st);
		nvml_cfg_free(&idle);
	}
}

static void test_no_library(void)
{
	struct mon_env env = { 0 };
	void *st = NULL;
	const char *e;
	json_t *g;

	setenv("ACCEL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	ok(coll_nvidia_ops.probe(&env) == 0, "no library: probe finds nothing");
	is_int(coll_nvidia_ops.open(&env, &(struct coll_target){ .dev = &dev_all }, &st), -ENOENT,
	       "no library: open says -ENOENT");
	e = coll_nvidia_ops.error(st);
	ok(e && !strncmp(e, "NVML not found: /nonexistent/libnvidia-ml.so.1", 46), "no library: error() says why");
	g = collect(st, GROUP_DEVICE_MEMORY, 1, NULL);
	is_str(json_string_value(json_object_get(g, "error")), e, "no library: the group carries the error");
	ok(!json_object_get(g, "devices"), "no library: no devices");
	{
		struct host *host = host_new(&(struct host_opts){ .procfs = "/nonexistent" }, NULL);
		uint64_t bytes;

		struct proc_devmem_list dm = { 0 };

		coll_nvidia_ops.proc_memory(st, &(struct cycle){ .mono_ns = 2 }, &dm);
		host_devmem_take(host, &dm);
		ok(host_devmem(host, 1, &bytes) == -ENOENT, "no library: proc_memory records nothing");
		free(dm.p);
		host_free(host);
	}
	json_decref(g);
	coll_nvidia_ops.close(st);
	coll_nvidia_ops.close(NULL);
}

int main(void)
{
	const char *t = getenv("ACCEL_TOP");
	char lib[128];

	json_set_alloc_funcs(count_malloc, count_free);
	log_init("test_nvml", LOG_LVL_SILENT); /* the collector's warnings are expected here */
	snprintf(top, sizeof(top), "%s", t && *t ? t : ".");
	snprintf(dir, sizeof(dir), "%s", "/tmp/accel-nvml.XXXXXX");
	snprintf(lib, sizeof(lib), "%s/tests/helpers/fake_nvml.c", top);
	/*
	 * The fake library is built with the C compiler the build itself needs:
	 * failing to build it is a failure of this test, never a skip.
	 */
	if (access(lib, R_OK) != 0) {
		ok(0, "the fake NVML source is at %s", lib);
		fprintf(stderr, "# run from the top of the tree, or set ACCEL_TOP\n");
		return done_testing();
	}
	if (!mkdtemp(dir) || build_fake()) {
		ok(0, "the fake libnvidia-ml.so.1 builds (with $CC, default cc)");
		return done_testing();
	}
	snprintf(lib, sizeof(lib), "%s/libnvidia-ml.so.1", dir);
	setenv("ACCEL_NVML_LIBRARY", lib, 1);
	/*
	 * Counters read every cycle, as before the slow cadence: the first period's energy from the baseline read
	 * at open, and each read goes backwards (test_coll_nvidia checks the slow cadence).
	 */
	if (nvml_slow_period(&dev_all, "period"))
		return 2;
	test_fields_and_allocations();
	test_backwards();
	test_energy_check();
	test_split();
	nvml_cfg_free(&dev_all);
	test_no_library();
	{
		char cmd[160];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "# could not remove %s\n", dir);
	}
	return done_testing();
}
