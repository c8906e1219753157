/* SPDX-License-Identifier: MIT */
/*
 * The amdgpu collector (monitor/sysfs/coll_amdgpu.c) on a copy of the fixture
 * trees tests/fixtures/sysfs/host and tests/fixtures/proc-devices, changed
 * between cycles: counters that move and reset, per-process engine time,
 * a GPU in reset (EPERM, EBUSY), a file that may not be read (EACCES), a
 * GPU vanishing and coming back, selection by UUID, no driver, and the
 * broken tree (garbage, missing files, a directory where a file belongs).
 *
 * Read errors are injected by this binary's own openat(), which the
 * collectors' reads resolve to (root reads every file whatever its mode).
 * Expected values: tests/fixtures/sysfs/EXPECTED.md.
 */
#define COLL_TYPE "amdgpu"
#define COLL_OPS coll_amdgpu_ops
#include "coll_harness.h"

/* ---- the tests ---------------------------------------------------------------------- */

static void test_identity_and_values(void)
{
	struct host *other;
	void *st;
	json_t *g;
	int64_t t;

	setup("host");
	is_int(ops->probe(&(struct mon_env){ .host = fixture_host() }), 1, "probe: amdgpu cards found");
	other = host_new(&(struct host_opts){ .procfs = proc_root, .sysfs = "tests/fixtures/proc" }, NULL);
	is_int(ops->probe(&(struct mon_env){ .host = other }), 0,
	       "probe: none in a tree without class/drm");
	host_free(other);
	st = open_state();
	is_str(ops->error(st) ? ops->error(st) : "", "", "no entry error");
	t = clock_mono_ns() + 1000000000;

	g = collect(st, GROUP_DEVICE_INFO, t);
	is_int(json_object_size(jp(g, "devices")), 2, "two amdgpu devices (card0 is i915's)");
	is_str(jstr(g, "devices.0.pci_bus_id"), "0000:03:00.0", "card1 is index 0, its PCI address");
	is_str(jstr(g, "devices.0.model"), "AMD GPU 1002:73bf", "no product_name: the PCI id names it");
	ok(!jp(g, "devices.0.uuid"), "no unique_id: uuid absent");
	ok(!jp(g, "devices.0.serial"), "no serial_number: serial absent");
	is_str(jstr(g, "devices.1.uuid"), "2f3a5c0d1b4e6a79", "unique_id is the uuid");
	is_str(jstr(g, "devices.1.model"), "AMD Instinct MI210", "product_name is the model");
	is_str(jstr(g, "devices.1.serial"), "692231000131", "serial_number");
	is_double(jnum(g, "devices.1.memory_total_bytes"), 68702699520.0, 0, "memory_total_bytes");
	is_double(jnum(g, "devices.0.power_limit_watts"), 255.0, 1e-9, "power1_cap µW -> W");
	is_str(jstr(g, "devices.1.vbios_version"), "113-D67301-063", "vbios_version");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_UTILIZATION, t);
	is_double(jnum(g, "devices.0.core_percent"), 37, 0, "gpu_busy_percent");
	is_double(jnum(g, "devices.0.memory_bandwidth_percent"), 12, 0, "mem_busy_percent");
	ok(!jp(g, "devices.0.video_percent"), "no vcn_busy_percent: video_percent absent");
	is_double(jnum(g, "devices.1.video_percent"), 5, 0, "vcn_busy_percent");
	ok(jp(g, "devices.0.processes.1000.gfx") && !jp(g, "devices.0.processes.4000"),
	   "per-process engines: Xorg on card1, the i915 client is not amdgpu's");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_MEMORY, t);
	is_double(jnum(g, "devices.0.used_bytes"), 1451888640.0, 0, "mem_info_vram_used");
	is_double(jnum(g, "devices.0.free_bytes"), 17163091968.0 - 1451888640.0, 0, "free = total - used");
	is_double(jnum(g, "devices.0.gtt_used_bytes"), 26435584.0, 0, "mem_info_gtt_used");
	is_double(jnum(g, "devices.0.processes.1000"), (53248.0 + 10240.0) * 1024, 0,
		  "Xorg's VRAM: two clients, the dup'd fd counted once");
	is_double(jnum(g, "devices.1.processes.2000"), (25165824.0 + 1048576.0) * 1024, 0,
		  "python3's VRAM: drm-memory-vram, and drm-resident-vram on a newer kernel");
	ok(!jp(g, "devices.0.processes.2000"), "a process shows only on the GPU it uses");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_THERMAL, t);
	is_double(jnum(g, "devices.0.temperatures_celsius.edge"), 45, 1e-9, "temp1 by its label: edge");
	is_double(jnum(g, "devices.0.temperatures_celsius.junction"), 52, 1e-9, "junction");
	is_double(jnum(g, "devices.0.temperatures_celsius.mem"), 50, 1e-9, "mem");
	ok(!jp(g, "devices.1.temperatures_celsius.edge"), "MI210 without edge sensor: absent");
	is_double(jnum(g, "devices.0.fan_percent"), 76 * 100.0 / 255, 1e-6, "pwm1 / pwm1_max");
	is_double(jnum(g, "devices.0.fan_rpm.fan1"), 1210, 0, "fan1_input");
	ok(!jp(g, "devices.1.fan_percent") && !jp(g, "devices.1.fan_rpm"), "no fan: absent, not 0");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_POWER, t);
	is_double(jnum(g, "devices.0.power_watts"), 35, 1e-9, "power1_average");
	is_double(jnum(g, "devices.1.power_watts"), 245, 1e-9, "power1_input when there is no average");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_CLOCKS, t);
	is_double(jnum(g, "devices.0.clocks_mhz.graphics"), 2100, 1e-9, "freq1_input (sclk) Hz -> MHz");
	is_double(jnum(g, "devices.1.clocks_mhz.memory"), 1600, 1e-9, "no freq2: pp_dpm_mclk's current level");
	json_decref(g);

	g = collect(st, GROUP_DEVICE_ERRORS, t);
	is_double(jnum(g, "devices.1.ecc_corrected_volatile_total"), 3, 0, "RAS ce summed over blocks");
	is_double(jnum(g, "devices.1.ecc_uncorrected_volatile_total"), 1, 0, "RAS ue summed over blocks");
	is_double(jnum(g, "devices.1.ecc_errors.corrected"), 0, 0, "no new errors since open: 0");
	is_double(jnum(g, "devices.1.retired_pages.total"), 2, 0, "gpu_vram_bad_pages: two pages");
	ok(json_is_false(jp(g, "devices.1.retired_pages.pending")), "none pending");
	ok(!jp(g, "devices.0.ecc_errors") && !jp(g, "devices.0.retired_pages"), "no RAS: absent");
	json_decref(g);

	/* Cycle 2, one second later: engines busy, more RAS errors. */
	put(proc_root, "1000/fdinfo/11",
	    "drm-driver:\tamdgpu\ndrm-client-id:\t4\ndrm-pdev:\t0000:03:00.0\ndrm-memory-vram:\t10240 KiB\n"
	    "drm-engine-gfx:\t1500000000 ns\ndrm-engine-dma:\t50000000 ns\n");
	put(proc_root, "2000/fdinfo/5",
	    "drm-driver:\tamdgpu\ndrm-client-id:\t17\ndrm-pdev:\t0000:43:00.0\ndrm-memory-vram:\t25165824 KiB\n"
	    "drm-engine-compute:\t9250000000 ns\n");
	put(sys_root, "class/drm/card2/device/ras/umc_err_count", "ue: 0\nce: 7\n");
	t += 1000000000;
	g = collect(st, GROUP_DEVICE_UTILIZATION, t);
	is_double(jnum(g, "devices.0.processes.1000.gfx"), 50, 0.5, "gfx busy 500 ms of 1 s: 50 %");
	is_double(jnum(g, "devices.0.processes.1000.dma"), 0, 1e-9, "dma idle: 0 %");
	is_double(jnum(g, "devices.1.processes.2000.compute"), 25, 0.5, "compute 250 ms of 1 s: 25 %");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_ERRORS, t);
	is_double(jnum(g, "devices.1.ecc_errors.corrected"), 4, 0, "4 corrected errors in the period");
	is_double(jnum(g, "devices.1.ecc_corrected_volatile_total"), 7, 0, "running total 7");
	json_decref(g);

	/* Cycle 3: the driver was reloaded, the counts restart: a fresh start, never negative. */
	put(sys_root, "class/drm/card2/device/ras/umc_err_count", "ue: 0\nce: 1\n");
	put(sys_root, "class/drm/card2/device/ras/mmhub_err_count", "ue: 0\nce: 0\n");
	t += 1000000000;
	g = collect(st, GROUP_DEVICE_ERRORS, t);
	is_double(jnum(g, "devices.1.ecc_errors.corrected"), 1, 0, "after a reset: the new count, not -6");
	is_double(jnum(g, "devices.1.ecc_errors.uncorrected"), 0, 0, "uncorrected went 1 -> 0: 0, not -1");
	json_decref(g);

	/* Process runtimes' device memory, recorded into the host. */
	{
		struct cycle cy = { .mono_ns = t + 1 };
		struct proc_devmem_list dm = { 0 };
		uint64_t b = 0;

		host_snapshot(env.host, &cy);
		is_int(host_devmem(env.host, 1000, &b), -ENOENT, "nothing recorded yet: -ENOENT");
		ops->proc_memory(st, &cy, &dm);
		host_devmem_take(env.host, &dm);
		free(dm.p);
		is_int(host_devmem(env.host, 1000, &b), 0, "device memory of 1000 known");
		is_double((double)b, (53248.0 + 10240.0) * 1024, 0, "1000: its VRAM");
		is_int(host_devmem(env.host, 3000, &b), 0, "3000 (no DRM client): known");
		is_int(b, 0, "3000: 0 bytes");
	}
	ops->close(st);
}

static void test_reset_and_permission(void)
{
	void *st;
	json_t *g;
	int64_t t;

	setup("host");
	st = open_state();
	t = clock_mono_ns() + 1000000000;
	fail_on("0000:43:00.0/gpu_busy_percent", EPERM);
	g = collect(st, GROUP_DEVICE_UTILIZATION, t);
	ok(strstr(jstr(g, "devices.1.error"), "gpu_busy_percent") && strstr(jstr(g, "devices.1.error"), "resetting"),
	   "EPERM during a reset: that device's error (%s)", jstr(g, "devices.1.error"));
	ok(!jp(g, "devices.1.core_percent") && !jp(g, "devices.1.processes"), "its data fields are left out");
	is_str(jstr(g, "devices.1.uuid"), "2f3a5c0d1b4e6a79", "its identity stays");
	is_str(jstr(g, "devices.0.error"), "", "the other GPU reports normally");
	is_double(jnum(g, "devices.0.core_percent"), 37, 0, "and its values");
	is_str(jstr(g, "error"), "", "the group has no error");
	json_decref(g);

	fail_on("0000:43:00.0/mem_info_vram_total", EBUSY);
	g = collect(st, GROUP_DEVICE_MEMORY, t + 1000000000);
	ok(strstr(jstr(g, "devices.1.error"), "Device or resource busy") != NULL, "EBUSY: device error");
	json_decref(g);

	fail_on("0000:03:00.0/mem_busy_percent", EACCES);
	g = collect(st, GROUP_DEVICE_UTILIZATION, t + 2000000000);
	is_str(jstr(g, "devices.0.error"), "", "EACCES on one file is not the device's error");
	ok(!jp(g, "devices.0.memory_bandwidth_percent"), "that field is left out");
	is_double(jnum(g, "devices.0.core_percent"), 37, 0, "the others are there");
	json_decref(g);

	fail_on("hwmon3/temp2_input", EIO);
	g = collect(st, GROUP_DEVICE_THERMAL, t + 3000000000);
	ok(!jp(g, "devices.0.temperatures_celsius.junction") && jp(g, "devices.0.temperatures_celsius.edge"),
	   "EIO on one sensor: that sensor is left out");
	json_decref(g);
	fail_on(NULL, 0);

	g = collect(st, GROUP_DEVICE_UTILIZATION, t + 4000000000);
	is_str(jstr(g, "devices.1.error"), "", "after the reset the device reports again");
	is_double(jnum(g, "devices.1.core_percent"), 99, 0, "with its values");
	json_decref(g);
	ops->close(st);
}

static void test_vanish_and_return(void)
{
	void *st;
	json_t *g;
	int64_t t;

	setup("host");
	st = open_state();
	t = clock_mono_ns();
	sh("mv '%s/devices/pci0000:40' '%s/pci0000:40.away' && mv '%s/class/drm/card2' '%s/card2.away'", sys_root, work,
	   sys_root, work);
	for (int c = 0; c < 2; c++) {
		t += 1000000000;
		for (size_t i = 0; i < ARRAY_SIZE(groups); i++) {
			g = collect(st, groups[i].id, t);
			if (c == 0)
				ok(strstr(jstr(g, "devices.1.error"), "disappeared") != NULL,
				   "cycle after the GPU vanished: %s reports it with an error", group_name(groups[i].id));
			else
				ok(!jp(g, "devices.1") && jp(g, "devices.0"), "next cycle: %s drops it",
				   group_name(groups[i].id));
			json_decref(g);
		}
	}
	sh("mv '%s/pci0000:40.away' '%s/devices/pci0000:40' && mv '%s/card2.away' '%s/class/drm/card2'", work, sys_root,
	   work, sys_root);
	t += 1000000000;
	g = collect(st, GROUP_DEVICE_INFO, t);
	is_str(jstr(g, "devices.1.model"), "AMD Instinct MI210", "back: picked up on the next cycle, index 1 again");
	is_str(jstr(g, "devices.0.pci_bus_id"), "0000:03:00.0", "the other kept index 0 throughout");
	json_decref(g);
	ops->close(st);
}

static void test_select_and_errors(void)
{
	static char *ids[] = { "2f3a5c0d1b4e6a79" };
	struct cfg_device one = cfg;
	void *st = NULL;
	json_t *g;

	setup("host");
	one.select_all = 0;
	one.ids = ids;
	one.nids = 1;
	fixture_host();
	ops->open(&env, &(struct coll_target){ .dev = &one }, &st);
	g = collect(st, GROUP_DEVICE_INFO, clock_mono_ns());
	ok(json_object_size(jp(g, "devices")) == 1 && jp(g, "devices.1"), "select by unique_id: only that GPU, index 1");
	json_decref(g);
	ops->close(st);

	/* No card and no driver: the entry's error. */
	sh("rm -rf '%s/class/drm' '%s/module/amdgpu'", sys_root, sys_root);
	st = open_state();
	ok(ops->error(st) && strstr(ops->error(st), "not loaded"), "no driver: %s", ops->error(st) ? ops->error(st) : "");
	g = collect(st, GROUP_DEVICE_INFO, clock_mono_ns());
	ok(strstr(jstr(g, "error"), "not loaded") != NULL, "and each group's error");
	json_decref(g);
	ops->close(st);

	/* The driver is loaded but no card is there: no error, "devices" {}. */
	sh("mkdir -p '%s/module/amdgpu'", sys_root);
	st = open_state();
	g = collect(st, GROUP_DEVICE_INFO, clock_mono_ns());
	ok(!ops->error(st) && json_object_size(jp(g, "devices")) == 0 && json_is_object(jp(g, "devices")),
	   "driver loaded, no card: \"devices\": {}");
	json_decref(g);
	ops->close(st);
}

static void test_broken_tree(void)
{
	void *st;
	json_t *g;
	int64_t t;

	setup("broken");
	st = open_state();
	t = clock_mono_ns();
	g = collect(st, GROUP_DEVICE_UTILIZATION, t);
	is_str(jstr(g, "devices.0.error"), "", "garbage is not the device's error");
	ok(!jp(g, "devices.0.core_percent"), "gpu_busy_percent \"busy\": left out");
	is_double(jnum(g, "devices.0.memory_bandwidth_percent"), 12, 0, "its neighbour is read");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_MEMORY, t);
	ok(jp(g, "devices.0.total_bytes") && !jp(g, "devices.0.used_bytes") && !jp(g, "devices.0.free_bytes"),
	   "mem_info_vram_used missing: used and free left out");
	ok(!jp(g, "devices.0.gtt_total_bytes"), "a directory where mem_info_gtt_total belongs: left out");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_CLOCKS, t);
	ok(!jp(g, "devices.0.clocks_mhz"), "pp_dpm_sclk without a current level, pp_dpm_mclk garbage: no clocks");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_THERMAL, t);
	ok(!jp(g, "devices.0.temperatures_celsius.edge"), "temp1_input \"-\": left out");
	is_double(jnum(g, "devices.0.temperatures_celsius.temp2"), 52, 1e-9, "a sensor without a label: its channel");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_POWER, t);
	ok(!jp(g, "devices.0.power_watts"), "power1_average empty, power1_input overflows: left out");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_ERRORS, t);
	ok(!jp(g, "devices.0.ecc_errors") && !jp(g, "devices.0.ecc_corrected_volatile_total"),
	   "a garbage RAS block: no sums (they would be wrong)");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_INFO, t);
	ok(!jp(g, "devices.0.uuid"), "an empty unique_id: no uuid");
	ok(!jp(g, "devices.0.pcie_link_speed_gts"), "current_link_speed \"fast\": left out");
	ok(!jp(g, "devices.0.pcie_link_width"), "current_link_width 255 (no link trained): left out");
	json_decref(g);
	t += 1000000000;
	g = collect(st, GROUP_DEVICE_ERRORS, t);
	ok(!jp(g, "devices.0.pcie_replays_total") && !jp(g, "devices.0.pcie_aer_errors_total"),
	   "pcie_replay_count \"-1\", aer_dev_correctable without its TOTAL line: left out");
	json_decref(g);
	ops->close(st);
}

/* The PCIe link, replays and AER counters, the performance level and visible VRAM. */
static void test_pcie_and_more(void)
{
	void *st;
	json_t *g;
	int64_t t = clock_mono_ns() + 1000000000;

	setup("host");
	st = open_state();
	g = collect(st, GROUP_DEVICE_INFO, t);
	is_double(jnum(g, "devices.0.pcie_link_speed_gts"), 2.5, 0, "current_link_speed \"2.5 GT/s PCIe\" (idle)");
	is_double(jnum(g, "devices.0.pcie_link_max_speed_gts"), 16, 0, "max_link_speed \"16.0 GT/s PCIe\"");
	is_str(jtext(g, "devices.0.pcie_link_width"), "16", "current_link_width: lanes, an integer");
	is_str(jtext(g, "devices.1.pcie_link_max_width"), "16", "max_link_width");
	is_str(jstr(g, "devices.0.performance_level"), "auto", "power_dpm_force_performance_level");
	is_str(jstr(g, "devices.1.performance_level"), "perf_determinism", "an Instinct's determinism mode");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_MEMORY, t);
	is_double(jnum(g, "devices.0.visible_total_bytes"), 268435456, 0, "mem_info_vis_vram_total (a 256 MiB BAR)");
	is_double(jnum(g, "devices.0.visible_used_bytes"), 41381888, 0, "mem_info_vis_vram_used");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_THERMAL, t);
	is_double(jnum(g, "devices.0.temperatures_crit_celsius.junction"), 110, 1e-9, "hwmon temp2_crit by its label");
	ok(!jp(g, "devices.1.temperatures_crit_celsius"), "no temp*_crit: absent");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_POWER, t);
	is_double(jnum(g, "devices.0.voltages_volts.vddgfx"), 0.818, 1e-9, "hwmon in0_input mV -> V by in0_label");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_ERRORS, t);
	is_str(jtext(g, "devices.1.pcie_replays_total"), "3", "pcie_replay_count");
	is_str(jtext(g, "devices.1.pcie_replays"), "0", "no replay since open");
	is_str(jtext(g, "devices.1.pcie_aer_errors_total.correctable"), "2", "aer_dev_correctable's TOTAL_ERR_COR");
	is_str(jtext(g, "devices.1.pcie_aer_errors_total.fatal"), "0", "aer_dev_fatal's TOTAL_ERR_FATAL");
	is_str(jtext(g, "devices.1.pcie_aer_errors.correctable"), "0", "per period: none since open");
	ok(jp(g, "devices.0.pcie_replays") && !jp(g, "devices.0.ecc_errors"), "card1: PCIe counters without RAS");
	json_decref(g);

	put(sys_root, "class/drm/card2/device/pcie_replay_count", "10\n");
	put(sys_root, "class/drm/card2/device/aer_dev_correctable",
	    "RxErr 3\nBadTLP 1\nBadDLLP 1\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\n"
	    "TOTAL_ERR_COR 5\n");
	put(sys_root, "class/drm/card1/device/current_link_speed", "16.0 GT/s PCIe\n");
	t += 1000000000;
	g = collect(st, GROUP_DEVICE_ERRORS, t);
	is_str(jtext(g, "devices.1.pcie_replays"), "7", "7 replays in the period");
	is_str(jtext(g, "devices.1.pcie_aer_errors.correctable"), "3", "3 correctable AER errors in the period");
	is_str(jtext(g, "devices.1.pcie_aer_errors.nonfatal"), "0", "no nonfatal one");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_INFO, t);
	is_double(jnum(g, "devices.0.pcie_link_speed_gts"), 16, 0, "under load: 16 GT/s");
	json_decref(g);
	put(sys_root, "class/drm/card1/device/current_link_speed", "Unknown\n");
	g = collect(st, GROUP_DEVICE_INFO, t + 1000000000);
	ok(!jp(g, "devices.0.pcie_link_speed_gts") && jp(g, "devices.0.pcie_link_max_speed_gts"),
	   "\"Unknown\": left out, no warning");
	json_decref(g);
	ops->close(st);

	/* An older kernel: "8 GT/s", no AER statistics, no pcie_replay_count. */
	setup("oldkernel");
	st = open_state();
	g = collect(st, GROUP_DEVICE_INFO, t);
	is_double(jnum(g, "devices.0.pcie_link_speed_gts"), 8, 0, "old kernel: \"8 GT/s\"");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_ERRORS, t);
	ok(jp(g, "devices.0") && !jp(g, "devices.0.pcie_replays") && !jp(g, "devices.0.pcie_aer_errors"),
	   "no pcie_replay_count, no aer_dev_*: absent");
	json_decref(g);
	ops->close(st);
}

/* sysfs copied without links: the cards found by uevent's DRIVER, their address from PCI_SLOT_NAME. */
static void test_no_links(void)
{
	void *st;
	json_t *g;
	int64_t t = clock_mono_ns();

	setup("nolinks");
	sh("test -z \"$(find '%s' -type l)\"", sys_root);
	is_int(ops->probe(&(struct mon_env){ .host = fixture_host() }), 1, "no links: probe finds them");
	st = open_state();
	g = collect(st, GROUP_DEVICE_INFO, t);
	is_int(json_object_size(jp(g, "devices")), 2, "two amdgpu cards, card0 (i915) not one of them");
	is_str(jstr(g, "devices.0.pci_bus_id"), "0000:03:00.0", "pci_bus_id from uevent's PCI_SLOT_NAME");
	is_str(jstr(g, "devices.1.pci_bus_id"), "0000:43:00.0", "for each card");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_MEMORY, t);
	is_double(jnum(g, "devices.0.processes.1000"), (53248.0 + 10240.0) * 1024, 0,
		  "per-process VRAM matched by that address");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_THERMAL, t);
	is_double(jnum(g, "devices.0.temperatures_celsius.edge"), 45, 1e-9, "its hwmon directory found");
	json_decref(g);
	ops->close(st);
}

#define P63 "9223372036854775808\n"   /* 2^63 */
#define NA "18446744073709551615\n"     /* 2^64-1: "not available" */
#define E19 "10000000000000000000\n"    /* 1e19 */

/* u64 values at the edges: kept (a real past 2^63), 2^64-1 left out, sums that would wrap left out. */
static void test_u64_edges(void)
{
	void *st;
	json_t *g;
	int64_t t = clock_mono_ns() + 1000000000;

	setup("host");
	put(sys_root, "class/drm/card1/device/mem_info_vram_total", NA);
	put(sys_root, "class/drm/card1/device/mem_info_vram_used", P63);
	put(sys_root, "class/drm/card1/device/mem_info_gtt_total", E19);
	put(sys_root, "class/drm/card1/device/hwmon/hwmon3/fan1_input", P63);
	put(sys_root, "class/drm/card2/device/ras/umc_err_count", "ue: 0\nce: 10000000000000000000\n");
	put(sys_root, "class/drm/card2/device/ras/gfx_err_count", "ue: 0\nce: 10000000000000000000\n");
	st = open_state();
	g = collect(st, GROUP_DEVICE_MEMORY, t);
	ok(!jp(g, "devices.0.total_bytes") && !jp(g, "devices.0.free_bytes"), "VRAM total 2^64-1: left out");
	is_str(jtext(g, "devices.0.used_bytes"), "9.223372036854776e+18", "VRAM used 2^63: a real, its value");
	is_str(jtext(g, "devices.0.gtt_total_bytes"), "1e+19", "GTT total 1e19");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_INFO, t);
	ok(!jp(g, "devices.0.memory_total_bytes"), "memory_total_bytes 2^64-1: left out");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_THERMAL, t);
	is_str(jtext(g, "devices.0.fan_rpm.fan1"), "9.223372036854776e+18", "fan1_input 2^63: not negative");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_ERRORS, t);
	ok(!jp(g, "devices.1.ecc_corrected_volatile_total") && !jp(g, "devices.1.ecc_errors"),
	   "RAS counts whose sum passes 2^64: no sum rather than a wrapped one");
	is_double(jnum(g, "devices.1.retired_pages.total"), 2, 0, "the rest of the group reports");
	json_decref(g);
	put(sys_root, "class/drm/card2/device/ras/umc_err_count", "ue: 0\nce: " NA);
	put(sys_root, "class/drm/card2/device/ras/gfx_err_count", "ue: 0\nce: " P63);
	g = collect(st, GROUP_DEVICE_ERRORS, t + 1000000000);
	ok(!jp(g, "devices.1.ecc_corrected_volatile_total"), "a block's count 2^64-1: no sum");
	json_decref(g);
	put(sys_root, "class/drm/card2/device/ras/umc_err_count", "ue: 0\nce: 3\n");
	g = collect(st, GROUP_DEVICE_ERRORS, t + 2000000000);
	is_str(jtext(g, "devices.1.ecc_corrected_volatile_total"), "9.223372036854776e+18",
	       "2^63 + 3 corrected: a real (the nearest double)");
	json_decref(g);
	ops->close(st);
}

/* python3 (2000) a second client of card1, beside Xorg (1000): 1 MiB of VRAM, no busy time yet. */
static void second_client(void)
{
	sh("ln -s /dev/dri/renderD128 '%s/2000/fd/8'", proc_root);
	put(proc_root, "2000/fdinfo/8",
	    "drm-driver:\tamdgpu\ndrm-client-id:\t40\ndrm-pdev:\t0000:03:00.0\ndrm-memory-vram:\t1024 KiB\n"
	    "drm-engine-gfx:\t0 ns\n");
}

/* card1's power1_average 45 W; over the period Xorg's client 3 busy 600 ms on gfx, python3's 200 ms. */
static void busy_period(void)
{
	put(sys_root, "class/drm/card1/device/hwmon/hwmon3/power1_average", "45000000\n");
	put(proc_root, "1000/fdinfo/10",
	    "drm-driver:\tamdgpu\ndrm-client-id:\t3\ndrm-pdev:\t0000:03:00.0\ndrm-memory-vram:\t53248 KiB\n"
	    "drm-engine-gfx:\t4600000000 ns\n");
	put(proc_root, "2000/fdinfo/8",
	    "drm-driver:\tamdgpu\ndrm-client-id:\t40\ndrm-pdev:\t0000:03:00.0\ndrm-memory-vram:\t1024 KiB\n"
	    "drm-engine-gfx:\t200000000 ns\n");
}

/*
 * Energy per period: card2 counts energy1_input (µJ), card1 has only
 * power1_average (integrated: trapezoids), and a board that loses its power
 * file has no energy fields at all.
 */
static void test_energy(void)
{
	const char *hw1 = "class/drm/card1/device/hwmon/hwmon3/", *hw2 = "class/drm/card2/device/hwmon/hwmon5/";
	char f[200];
	void *st;
	json_t *g;
	int64_t t;

	setup("host");
	snprintf(f, sizeof(f), "%senergy1_input", hw2);
	put(sys_root, f, "1000000000\n");
	second_client();
	st = open_state();
	t = clock_mono_ns() + 1000000000;
	g = collect(st, GROUP_DEVICE_POWER, t);
	ok(!jp(g, "devices.0.energy_joules") && !jp(g, "devices.1.energy_joules"),
	   "first report: the baseline, no period's energy");
	ok(!jp(g, "devices.0.energy_total_joules"), "power source: no device total");
	is_double(jnum(g, "devices.1.energy_total_joules"), 1000, 1e-9, "energy1_input: the board's total, 1000 J");
	json_decref(g);

	snprintf(f, sizeof(f), "%senergy1_input", hw2);
	put(sys_root, f, "1003500000\n");
	busy_period();
	g = collect(st, GROUP_DEVICE_POWER, t + 2000000000);
	is_double(jnum(g, "devices.0.energy_joules"), 80, 1e-9, "power1_average 35 W then 45 W over 2 s: 80 J");
	is_double(jnum(g, "devices.0.idle_power_watts"), 35, 1e-9, "idle: the lowest power seen");
	is_double(jnum(g, "devices.0.idle_energy_joules"), 70, 1e-9, "idle energy 35 W x 2 s");
	is_str(jstr(g, "devices.0.energy_attribution"), "utilization", "split by the clients' busy time (fdinfo)");
	is_double(jnum(g, "devices.0.processes.1000"), 7.5, 1e-9, "Xorg: 600 of 800 ms of the 10 J above idle");
	is_double(jnum(g, "devices.0.processes.2000"), 2.5, 1e-9, "python3: 200 of 800 ms");
	is_double(jnum(g, "devices.1.energy_joules"), 3.5, 1e-9, "energy1_input +3500000 µJ: 3.5 J");
	is_double(jnum(g, "devices.1.energy_total_joules"), 1003.5, 1e-9, "the board's total");
	json_decref(g);

	/* A driver reload: the counter starts again; the step back is no period (energy.h's check), never negative. */
	put(sys_root, f, "250000\n");
	g = collect(st, GROUP_DEVICE_POWER, t + 3000000000);
	is_str(jstr(g, "devices.0.energy_attribution"), "memory", "no busy time in the period: VRAM shares");
	is_double(jnum(g, "devices.0.processes.1000"), 10.0 * 63488 / 64512, 1e-9, "Xorg: 63488 of 64512 KiB");
	is_double(jnum(g, "devices.0.processes.2000"), 10.0 * 1024 / 64512, 1e-9, "python3: 1024 of 64512 KiB");
	ok(!jp(g, "devices.1.energy_joules"), "counter went back: the period has no energy (was its value, 0.25 J)");
	ok(jstr(g, "error") && strstr(jstr(g, "error"), "card") && strstr(jstr(g, "error"), "went back"),
	   "counter went back: the group's error says so (%s)", jstr(g, "error") ? jstr(g, "error") : "none");
	is_double(jnum(g, "devices.1.energy_total_joules"), 0.25, 1e-9, "the board's total restarted");
	json_decref(g);
	put(sys_root, f, "1250000\n");
	g = collect(st, GROUP_DEVICE_POWER, t + 3500000000);
	is_double(jnum(g, "devices.1.energy_joules"), 1, 1e-9, "then afresh from the step back: 1 J");
	ok(!jstr(g, "error") || !strstr(jstr(g, "error"), "went back"), "the error is said once");
	json_decref(g);

	/* No source left on card1: no energy fields, never 0. */
	snprintf(f, sizeof(f), "%s/%spower1_average", sys_root, hw1);
	unlink(f);
	g = collect(st, GROUP_DEVICE_POWER, t + 4000000000);
	ok(!jp(g, "devices.0.power_watts") && !jp(g, "devices.0.energy_joules") &&
	   !jp(g, "devices.0.energy_total_joules"), "no power, no counter: no energy fields");
	json_decref(g);
	ops->close(st);
}

/*
 * A configured idle power ("idle_power_watts": {"0000:03:00.0": 30}) takes
 * the place of the lowest power seen on that GPU; one the block does not
 * name keeps the measured one.
 */
static void test_configured_idle(void)
{
	json_t *blk = json_pack("{s:{s:f}}", "idle_power_watts", "0000:03:00.0", 30.0), *eff = json_object();
	json_t *bad = json_pack("{s:{s:f}}", "idle_power_watts", "0000:99:00.0", 30.0);
	struct cfg_device one = cfg;
	void *own = NULL, *st = NULL;
	char *err = NULL;
	struct cfg_block b = { .path = "devices[0]", .obj = blk, .err = &err, .own = &own };
	json_t *g;
	int64_t t;

	setup("host");
	is_int(ops->config(&b), 0, "idle_power_watts by pci_bus_id parses");
	ops->config_print(own, eff);
	is_double(json_real_value(json_object_get(json_object_get(eff, "idle_power_watts"), "0000:03:00.0")), 30, 0,
		  "and prints back as given");
	one.own = own;
	second_client();
	fixture_host();
	ops->open(&env, &(struct coll_target){ .dev = &one }, &st);
	t = clock_mono_ns() + 1000000000;
	json_decref(collect(st, GROUP_DEVICE_POWER, t));
	busy_period();
	g = collect(st, GROUP_DEVICE_POWER, t + 2000000000);
	is_double(jnum(g, "devices.0.energy_joules"), 80, 1e-9, "80 J over 2 s, as without the key");
	is_double(jnum(g, "devices.0.idle_power_watts"), 30, 1e-9, "idle: the configured 30 W, not the 35 W seen");
	is_double(jnum(g, "devices.0.idle_energy_joules"), 60, 1e-9, "idle energy 30 W x 2 s");
	is_double(jnum(g, "devices.0.active_energy_joules"), 20, 1e-9, "active: the other 20 J");
	is_double(jnum(g, "devices.0.processes.1000"), 15, 1e-9, "Xorg: 600 of 800 ms of 20 J");
	is_double(jnum(g, "devices.0.processes.2000"), 5, 1e-9, "python3: 200 of 800 ms");
	is_str(jstr(g, "error"), "", "every key names a GPU: no error");
	json_decref(g);
	ops->close(st);
	ops->config_free(own);

	/* A key that names no GPU of the block: on af149df accepted silently; now the group's error names it. */
	own = NULL;
	b.obj = bad;
	is_int(ops->config(&b), 0, "idle_power_watts naming no GPU parses (the devices are known only at collect)");
	one.own = own;
	ops->open(&env, &(struct coll_target){ .dev = &one }, &st);
	g = collect(st, GROUP_DEVICE_POWER, t + 3000000000);
	ok(jstr(g, "error") && strstr(jstr(g, "error"), "idle_power_watts.0000:99:00.0 names no device"),
	   "the group's error names the key (%s)", jstr(g, "error") ? jstr(g, "error") : "none");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_POWER, t + 4000000000);
	ok(jstr(g, "error") && strstr(jstr(g, "error"), "0000:99:00.0"), "... at each collection");
	json_decref(g);
	ops->close(st);
	ops->config_free(own);
	json_decref(bad);
	json_decref(blk);
	json_decref(eff);
}

int main(void)
{
	/* The warnings about bad files are the integration test's business; keep TAP output clean. */
	log_init("test_coll_amdgpu", LOG_LVL_SILENT);
	test_identity_and_values();
	test_reset_and_permission();
	test_vanish_and_return();
	test_select_and_errors();
	test_broken_tree();
	test_u64_edges();
	test_pcie_and_more();
	test_no_links();
	test_energy();
	test_configured_idle();
	if (work[0])
		sh("rm -rf '%s'", work);
	return done_testing();
}
