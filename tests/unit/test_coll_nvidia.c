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
#include <time.h>
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

/* ---- NVIDIA MIG and GPM (issue 14) ---------------------------------------- */

static struct cfg_group fgroups[] = {
	{ GROUP_DEVICE_INFO, 100 },
	{ GROUP_DEVICE_UTILIZATION, 100 },
	{ GROUP_DEVICE_MEMORY, 100 },
};
static struct cfg_device fdev = { .type = "nvidia", .select_all = 1, .period_ms = 100, .groups = fgroups,
				  .ngroups = 3 };

/* Write text to dir/name; its path in path. 0 or -1. */
static int write_file(const char *name, const char *text, char *path, size_t size)
{
	FILE *f;

	snprintf(path, size, "%s/%s", dir, name);
	f = fopen(path, "w");
	return f && fputs(text, f) >= 0 && !fclose(f) ? 0 : -1;
}

/* The value at a dotted path under devices.<key> (borrowed), NULL when absent. */
static json_t *dat(json_t *g, const char *key, const char *path)
{
	char buf[128], *save = NULL;
	json_t *o = json_object_get(json_object_get(g, "devices"), key);

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
		o = json_object_get(o, k);
	return o;
}

static double dnum(json_t *g, const char *key, const char *path)
{
	json_t *v = dat(g, key, path);

	return json_is_number(v) ? json_number_value(v) : -12345.0;
}

static const char *dstr(json_t *g, const char *key, const char *path)
{
	json_t *v = dat(g, key, path);

	return json_is_string(v) ? json_string_value(v) : "(absent)";
}

/* The keys of g's devices, comma-separated, in order. */
static const char *keys(json_t *g, char *buf, size_t size)
{
	const char *k;
	json_t *v;
	size_t n = 0;

	buf[0] = 0;
	json_object_foreach(json_object_get(g, "devices"), k, v)
		n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s", n ? "," : "", k);
	return buf;
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* MIG mode off, on with two instances, a different layout, off again: the entries follow each cycle. */
static void test_mig_changes(void)
{
	struct mon_env env = { 0 };
	char script[256], layout[256], kb[256];
	void *st = NULL;
	json_t *g;
	int n = 10;

	snprintf(layout, sizeof(layout), "%s/layout", dir);
	unlink(layout);
	{
		char text[512];

		snprintf(text, sizeof(text),
			 "gpu\nname NVIDIA H100 80GB HBM3\nuuid GPU-aa\nmemory 85520809984 1048576 85175828480 343932928\n"
			 "mig_file %s\nmig_proc 2 0 5101 32212254720\nmig_proc 9 0 5202 8589934592\n",
			 layout);
		if (write_file("mig.nvml", text, script, sizeof(script))) {
			ok(0, "write the MIG script");
			return;
		}
	}
	setenv("FAKE_NVML_SCRIPT", script, 1);
	is_int(coll_nvidia_ops.open(&env, &fdev, &st), 0, "MIG: open");
	g = collect(st, GROUP_DEVICE_MEMORY, n++);
	is_str(keys(g, kb, sizeof(kb)), "0", "MIG off: the GPU only");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_INFO, n++);
	is_str(dstr(g, "0", "mig_mode"), "disabled", "MIG off: mig_mode disabled");
	json_decref(g);

	write_file("layout",
		   "3g.40gb 2 0 42412802048 38797312 MIG-11\n1g.10gb 9 0 10468982784 13631488 MIG-22\n", layout,
		   sizeof(layout));
	g = collect(st, GROUP_DEVICE_MEMORY, n++);
	is_str(keys(g, kb, sizeof(kb)), "0,0/2/0,0/9/0", "MIG on: an entry per instance, \"<gpu>/<gi>/<ci>\"");
	is_double(dnum(g, "0/2/0", "total_bytes"), 42412802048.0, 0, "MIG on: the instance's memory total");
	is_double(dnum(g, "0/9/0", "used_bytes"), 13631488.0, 0, "MIG on: the instance's memory used");
	is_double(dnum(g, "0/9/0", "free_bytes"), 10455351296.0, 0, "MIG on: the instance's memory free");
	is_double(dnum(g, "0/2/0", "processes.5101"), 32212254720.0, 0, "MIG on: the instance's own process");
	ok(!dat(g, "0/2/0", "processes.5202"), "MIG on: another instance's process is not in it");
	is_double(dnum(g, "0/9/0", "index"), 0, 0, "MIG on: index is the parent GPU's");
	is_double(dnum(g, "0/9/0", "gpu_instance_id"), 9, 0, "MIG on: gpu_instance_id");
	is_double(dnum(g, "0/9/0", "compute_instance_id"), 0, 0, "MIG on: compute_instance_id");
	is_str(dstr(g, "0/9/0", "mig_profile"), "1g.10gb", "MIG on: the profile, from the MIG device name");
	is_str(dstr(g, "0/9/0", "uuid"), "MIG-22", "MIG on: the MIG device's UUID");
	is_str(dstr(g, "0/9/0", "parent_uuid"), "GPU-aa", "MIG on: the parent GPU's UUID");
	is_str(dstr(g, "0/9/0", "model"), "NVIDIA H100 80GB HBM3 MIG 1g.10gb", "MIG on: NVML's MIG device name");
	ok(json_is_object(dat(g, "0", "mig_devices.0")), "MIG on: device_memory.mig_devices is kept");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_INFO, n++);
	is_str(keys(g, kb, sizeof(kb)), "0,0/2/0,0/9/0", "MIG on: device_info has the instances");
	is_double(dnum(g, "0/2/0", "memory_total_bytes"), 42412802048.0, 0, "MIG on: device_info memory total");
	is_str(dstr(g, "0", "profiling_unavailable"), "this GPU does not support GPM (Hopper and newer do)",
	       "no GPM: device_info says why");
	is_str(dstr(g, "0/2/0", "profiling_unavailable"), "this GPU does not support GPM (Hopper and newer do)",
	       "no GPM: the instance's device_info says why");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_UTILIZATION, n++);
	is_str(keys(g, kb, sizeof(kb)), "0", "no GPM: no utilization entry for an instance (NVML gives none)");
	json_decref(g);

	write_file("layout", "7g.80gb 0 0 84825604096 1048576 MIG-33\n", layout, sizeof(layout));
	g = collect(st, GROUP_DEVICE_MEMORY, n++);
	is_str(keys(g, kb, sizeof(kb)), "0,0/0/0", "MIG changed: the old instances are gone, the new one is there");
	is_str(dstr(g, "0/0/0", "mig_profile"), "7g.80gb", "MIG changed: its profile");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_INFO, n++);
	is_str(keys(g, kb, sizeof(kb)), "0,0/0/0", "MIG changed: in device_info too");
	json_decref(g);

	unlink(layout);
	g = collect(st, GROUP_DEVICE_MEMORY, n++);
	is_str(keys(g, kb, sizeof(kb)), "0", "MIG off again: no instance entry");
	ok(!dat(g, "0", "mig_devices"), "MIG off again: no mig_devices");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_INFO, n++);
	is_str(keys(g, kb, sizeof(kb)), "0", "MIG off again: device_info too");
	is_str(dstr(g, "0", "mig_mode"), "disabled", "MIG off again: mig_mode disabled");
	json_decref(g);
	coll_nvidia_ops.close(st);
}

/* GPM: two samples more than 100 ms apart give the metrics; sooner, none (NVML refuses them). */
static void test_gpm(void)
{
	struct mon_env env = { 0 };
	char script[256], lost[256], kb[256];
	void *st = NULL;
	json_t *g;
	int n = 100;

	snprintf(lost, sizeof(lost), "%s/lost", dir);
	unlink(lost);
	{
		char text[1024];

		snprintf(text, sizeof(text),
			 "gpu\nname NVIDIA H100 80GB HBM3\nuuid GPU-bb\npcie 1000 2000\nlost_file %s\n"
			 "gpm graphics=98.2 sm=91.5 occupancy=38.25 tensor=61.75 dram=72.5 fp64=0 fp32=11.5 fp16=3.25 "
			 "pcie_tx=1525.5 pcie_rx=2960.25 nvlink_tx=40960 nvlink_rx=40448\n"
			 "mig_instance 3g.40gb 2 0 42412802048 38797312\nmig_instance 1g.10gb 9 0 10468982784 13631488\n"
			 "gpm_mig 2 graphics=97.5 sm=95 tensor=70.5\n",
			 lost);
		if (write_file("gpm.nvml", text, script, sizeof(script))) {
			ok(0, "write the GPM script");
			return;
		}
	}
	setenv("FAKE_NVML_SCRIPT", script, 1);
	is_int(coll_nvidia_ops.open(&env, &fdev, &st), 0, "GPM: open");
	g = collect(st, GROUP_DEVICE_UTILIZATION, n++);
	ok(!dat(g, "0", "sm_active_percent"), "GPM: the first sample alone gives no metric");
	is_double(dnum(g, "0", "pcie_tx_bytes_per_second"), 1000 * 1024.0, 0,
		  "GPM: until then PCIe is nvmlDeviceGetPcieThroughput's");
	json_decref(g);
	nap_ms(150);
	g = collect(st, GROUP_DEVICE_UTILIZATION, n++);
	is_double(dnum(g, "0", "graphics_active_percent"), 98.2, 1e-9, "GPM: graphics (GR engine) active, percent");
	is_double(dnum(g, "0", "sm_active_percent"), 91.5, 1e-9, "GPM: SM active");
	is_double(dnum(g, "0", "sm_occupancy_percent"), 38.25, 1e-9, "GPM: SM occupancy");
	is_double(dnum(g, "0", "tensor_active_percent"), 61.75, 1e-9, "GPM: tensor pipe active");
	is_double(dnum(g, "0", "dram_active_percent"), 72.5, 1e-9, "GPM: DRAM bandwidth");
	is_double(dnum(g, "0", "fp64_active_percent"), 0, 0, "GPM: FP64 pipe (0 is a value)");
	is_double(dnum(g, "0", "fp32_active_percent"), 11.5, 1e-9, "GPM: FP32 pipe");
	is_double(dnum(g, "0", "fp16_active_percent"), 3.25, 1e-9, "GPM: FP16 pipe");
	is_double(dnum(g, "0", "pcie_tx_bytes_per_second"), 1525.5 * 1048576, 0, "GPM: PCIe TX, MiB/s -> bytes/s");
	is_double(dnum(g, "0", "pcie_rx_bytes_per_second"), 2960.25 * 1048576, 0, "GPM: PCIe RX");
	is_double(dnum(g, "0", "nvlink_tx_bytes_per_second"), 40960.0 * 1048576, 0, "GPM: NVLink TX");
	is_double(dnum(g, "0", "nvlink_rx_bytes_per_second"), 40448.0 * 1048576, 0, "GPM: NVLink RX");
	is_str(keys(g, kb, sizeof(kb)), "0,0/2/0,0/9/0", "GPM: the MIG instances have utilization entries");
	is_double(dnum(g, "0/2/0", "sm_active_percent"), 95, 1e-9, "GPM: a MIG instance's SM active");
	ok(!dat(g, "0/2/0", "sm_occupancy_percent"), "GPM: a metric the instance does not give is absent");
	ok(!dat(g, "0/9/0", "sm_active_percent"), "GPM: an instance without metrics has none");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_UTILIZATION, n++);
	ok(!dat(g, "0", "sm_active_percent"), "GPM: 100 ms or less after a sample: no metric (no refused call)");
	json_decref(g);
	nap_ms(150);
	g = collect(st, GROUP_DEVICE_UTILIZATION, n++);
	is_double(dnum(g, "0", "sm_active_percent"), 91.5, 1e-9, "GPM: the next period has them again");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_INFO, n++);
	ok(!dat(g, "0", "profiling_unavailable"), "GPM: a GPU with GPM has no profiling_unavailable");
	json_decref(g);

	/* The GPU lost: its error, no instance entries; back: the instances again, GPM from a new baseline. */
	write_file("lost", "", lost, sizeof(lost));
	g = collect(st, GROUP_DEVICE_MEMORY, n++);
	ok(*dstr(g, "0", "error") != 0 && strcmp(dstr(g, "0", "error"), "(absent)"), "lost: the GPU's error");
	is_str(keys(g, kb, sizeof(kb)), "0", "lost: no MIG entry");
	json_decref(g);
	unlink(lost);
	g = collect(st, GROUP_DEVICE_MEMORY, n++);
	is_str(keys(g, kb, sizeof(kb)), "0,0/2/0,0/9/0", "back: the MIG entries again");
	is_str(dstr(g, "0", "error"), "", "back: no error");
	json_decref(g);
	coll_nvidia_ops.close(st);
}

/* GPM on a GPU whose MIG instances cannot be sampled: the GPU's metrics, and each instance's device_info says why. */
static void test_gpm_no_mig(void)
{
	struct mon_env env = { 0 };
	char script[256], kb[256];
	void *st = NULL;
	json_t *g;
	int n = 200;

	if (write_file("nomig.nvml",
		       "gpu\nname NVIDIA H100 80GB HBM3\ngpm sm=50\ngpm_mig_unsupported\n"
		       "mig_instance 7g.80gb 0 0 84825604096 1048576\n",
		       script, sizeof(script))) {
		ok(0, "write the script");
		return;
	}
	setenv("FAKE_NVML_SCRIPT", script, 1);
	is_int(coll_nvidia_ops.open(&env, &fdev, &st), 0, "GPM without MIG sampling: open");
	g = collect(st, GROUP_DEVICE_UTILIZATION, n++);
	json_decref(g);
	nap_ms(150);
	g = collect(st, GROUP_DEVICE_UTILIZATION, n++);
	is_double(dnum(g, "0", "sm_active_percent"), 50, 1e-9, "GPM without MIG sampling: the GPU's metric");
	is_str(keys(g, kb, sizeof(kb)), "0", "GPM without MIG sampling: no utilization entry for the instance");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_INFO, n++);
	is_str(dstr(g, "0/0/0", "profiling_unavailable"), "nvmlGpmMigSampleGet: Not Supported (NVML error 3)",
	       "GPM without MIG sampling: the instance's device_info says why");
	json_decref(g);
	coll_nvidia_ops.close(st);
}

/* The whole GPU's sampling refused (MIG mode may do that), its instances' not: they still have metrics. */
static void test_gpm_mig_only(void)
{
	struct mon_env env = { 0 };
	char script[256], kb[256];
	void *st = NULL;
	json_t *g;
	int n = 300;

	if (write_file("migonly.nvml",
		       "gpu\nname NVIDIA H100 80GB HBM3\ngpm sm=50\ngpm_gpu_unsupported\n"
		       "mig_instance 7g.80gb 0 0 84825604096 1048576\ngpm_mig 0 sm=42.5\n",
		       script, sizeof(script))) {
		ok(0, "write the script");
		return;
	}
	setenv("FAKE_NVML_SCRIPT", script, 1);
	is_int(coll_nvidia_ops.open(&env, &fdev, &st), 0, "GPM of MIG instances only: open");
	g = collect(st, GROUP_DEVICE_UTILIZATION, n++);
	json_decref(g);
	nap_ms(150);
	g = collect(st, GROUP_DEVICE_UTILIZATION, n++);
	ok(!dat(g, "0", "sm_active_percent"), "GPM of MIG instances only: none for the GPU");
	is_double(dnum(g, "0/0/0", "sm_active_percent"), 42.5, 1e-9, "GPM of MIG instances only: the instance's");
	is_str(keys(g, kb, sizeof(kb)), "0,0/0/0", "GPM of MIG instances only: the instance's utilization entry");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_INFO, n++);
	is_str(dstr(g, "0", "profiling_unavailable"), "nvmlGpmSampleGet: Not Supported (NVML error 3)",
	       "GPM of MIG instances only: the GPU's device_info says why it has none");
	ok(!dat(g, "0/0/0", "profiling_unavailable"), "GPM of MIG instances only: the instance's says nothing");
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
	test_mig_changes();
	test_gpm();
	test_gpm_no_mig();
	test_gpm_mig_only();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
	return done_testing();
}
