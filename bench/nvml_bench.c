/* SPDX-License-Identifier: MIT */
/*
 * nvml_bench: the CPU cost of one cycle of the NVIDIA collector
 * (monitor/nvidia/coll_nvidia.c) with N GPUs, next to the bare cost of the same
 * NVML calls made in a plain loop, in one process in one run.
 *
 *  - bare: for each GPU, the NVML calls one cycle of every device group
 *    makes, in the same order with the same arguments, results discarded.
 *    Nothing else. (Events are waited for by the collector's own thread, in
 *    the background: those calls are not counted on either side.)
 *  - collect: what monitor_cycle() does for the nvidia block: group_new() and
 *    collect() for each of the seven device groups.
 *  - cycle: collect, plus the device_data entry serialized with json_write()
 *    (common/jsonw.c) into a buffer, as the report line would carry it.
 *
 * The library is the fake libnvidia-ml.so.1 (tests/helpers/fake_nvml.c),
 * whose calls cost almost nothing, so the difference is the collector's own
 * cost (JSON updates, bookkeeping); against a real driver each NVML call
 * adds an ioctl of its own to both sides. The fake counts its calls
 * (fake_nvml_calls), and the two loops must make the same number per
 * cycle, which is printed.
 *
 * CPU time is CLOCK_PROCESS_CPUTIME_ID around blocks of cycles; blocks
 * alternate (bare, collect, cycle, cycle, collect, bare, ...) and each
 * figure is the median of its blocks' per-cycle cost.
 *
 * With --pcie-delay MS, the fake's nvmlDeviceGetPcieThroughput sleeps MS
 * per call (a real one samples for about 20 ms) and the figure is wall
 * time instead: a whole collector cycle (its PCIe calls on the worker pool,
 * all at once) against the same calls made one after the other, in the
 * same run; the ratio is parallel / serial. Those figures read every value
 * every cycle ("slow_period": "period"), as the bare loop does.
 *
 * With --cost, the fake library runs its cost model (FAKE_NVML_COST=h200:
 * each call spends the CPU time and waits the time it does on a real H200)
 * and the figures are the collector's at a 1 s period, every device group,
 * over CYCLES cycles (-c, default 20) of a clock that the benchmark moves a
 * second per cycle (this file's clock_mono_ns, and the fake's GPM clock),
 * with the block's "slow_period" set by --slow-period (default: the
 * collector's): start-up (open and the first cycle, CPU of the producer's
 * thread; target at most 100 ms), then CPU per GPU
 * per cycle (the whole process: the PCIe workers and the event thread
 * too) against the model's floor, the CPU the model charged for the calls
 * the collector made; the ratio is cycle / floor. --ledger prints the
 * collector's NVML call ledger (ACCEL_NVML_LEDGER) to stderr at the end.
 */
#include "../common/jsonw.h"
#include "../common/timeutil.h"
#include "../common/util.h"
#include "../monitor/core/collector.h"
#include "../monitor/nvidia/nvml.h"
#include "bench.h"

#include <dlfcn.h>
#include <getopt.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The collector measured here (collectors.c registers it). */
extern const struct collector_ops coll_nvidia_ops;

#define MAX_ROUNDS 99
#define START_TARGET_MS 100.0 /* --cost: the producer's thread's CPU from open to the first report */
#define NGROUPS (GROUP_DEVICE_ERRORS - GROUP_DEVICE_INFO + 1)

struct opts {
	const char *library; /* the fake */
	unsigned gpus;
	double seconds;
	int rounds;
	int pcie_delay_ms;   /* > 0: the wall-time figure instead (see above) */
	int cost;            /* --cost: the cost model's figures (see above) */
	int cycles;          /* --cost: cycles of 1 s */
	const char *slow;    /* --cost: the block's "slow_period"; NULL: the collector's default */
	int ledger;          /* --cost: the call ledger to stderr */
};

/*
 * The benchmark's clock: CLOCK_MONOTONIC plus what --cost skipped (a second
 * per cycle). It replaces timeutil.c's weak one for every module here, as a
 * test's mock clock does.
 */
static _Atomic int64_t skipped_ns;

int64_t clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec + skipped_ns;
}

/* The NVML calls of one collector cycle, resolved from the same library. */
struct bare {
	nvml_handle_fn handle;
	nvml_mem2_fn mem2;
	nvml_uint_fn limit, power, fan, replay;
	nvml_mig_mode_fn mig_mode;
	nvml_util_fn util;
	nvml_codec_fn enc, dec;
	nvml_pcie_fn pcie;
	nvml_procs_fn procs;
	nvml_putil_fn putil;
	nvml_temp_fn temp;
	nvml_fields_fn fields;
	nvml_ull_fn reasons, energy;
	nvml_clock_fn clock;
	nvml_ecc_fn ecc;
	nvml_remap_fn remap;
	nvmlDevice_t h[64];
	nvmlProcessInfo_v2_t procbuf[64];
	nvmlProcessUtilizationSample_t ubuf[64];
	unsigned long (*calls)(void);
	unsigned long (*waits)(void);
};

/* NVML calls so far, less the collector's background event waits. */
static unsigned long calls_now(const struct bare *b)
{
	return b->calls() - b->waits();
}

static void die(const char *msg, const char *arg)
{
	fprintf(stderr, "nvml_bench: %s%s\n", msg, arg ? arg : "");
	exit(1);
}

static void sym(void *dl, const char *name, void *slot)
{
	void *p = dlsym(dl, name);

	if (!p)
		die("the library lacks ", name);
	memcpy(slot, &p, sizeof(p));
}

static void bare_open(struct bare *b, const char *path, unsigned gpus)
{
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!dl)
		die("cannot open ", dlerror());
	sym(dl, "nvmlDeviceGetHandleByIndex_v2", &b->handle);
	sym(dl, "nvmlDeviceGetMemoryInfo_v2", &b->mem2);
	sym(dl, "nvmlDeviceGetEnforcedPowerLimit", &b->limit);
	sym(dl, "nvmlDeviceGetPowerUsage", &b->power);
	sym(dl, "nvmlDeviceGetFanSpeed", &b->fan);
	sym(dl, "nvmlDeviceGetPcieReplayCounter", &b->replay);
	sym(dl, "nvmlDeviceGetMigMode", &b->mig_mode);
	sym(dl, "nvmlDeviceGetUtilizationRates", &b->util);
	sym(dl, "nvmlDeviceGetEncoderUtilization", &b->enc);
	sym(dl, "nvmlDeviceGetDecoderUtilization", &b->dec);
	sym(dl, "nvmlDeviceGetPcieThroughput", &b->pcie);
	sym(dl, "nvmlDeviceGetComputeRunningProcesses_v3", &b->procs);
	sym(dl, "nvmlDeviceGetTemperature", &b->temp);
	sym(dl, "nvmlDeviceGetFieldValues", &b->fields);
	sym(dl, "nvmlDeviceGetCurrentClocksEventReasons", &b->reasons);
	sym(dl, "nvmlDeviceGetTotalEnergyConsumption", &b->energy);
	sym(dl, "nvmlDeviceGetProcessUtilization", &b->putil);
	sym(dl, "nvmlDeviceGetClockInfo", &b->clock);
	sym(dl, "nvmlDeviceGetTotalEccErrors", &b->ecc);
	sym(dl, "nvmlDeviceGetRemappedRows", &b->remap);
	sym(dl, "fake_nvml_calls", &b->calls);
	sym(dl, "fake_nvml_event_waits", &b->waits);
	/* The collector has NVML initialized already; the handles are the same pointers. */
	for (unsigned i = 0; i < gpus; i++)
		if (b->handle(i, &b->h[i]) != NVML_SUCCESS)
			die("no handle for a GPU", NULL);
}

/* One cycle of every group's calls, as coll_nvidia.c makes them. */
static void bare_cycle(struct bare *b, unsigned gpus)
{
	unsigned u, v, w, x;
	unsigned long long ull;
	nvmlMemory_v2_t m;
	nvmlUtilization_t ut;
	nvmlFieldValue_t f[3];

	for (unsigned i = 0; i < gpus; i++) {
		nvmlDevice_t h = b->h[i];

		/* device_info */
		m.version = nvmlMemory_v2;
		b->mem2(h, &m);
		b->limit(h, &u);
		b->mig_mode(h, &u, &v); /* the MIG instances' layout (nvidia_mig.c) uses the mode just read */
		/* device_utilization */
		b->util(h, &ut);
		b->enc(h, &u, &v);
		b->dec(h, &u, &v);
		b->pcie(h, NVML_PCIE_UTIL_TX_BYTES, &u);
		b->pcie(h, NVML_PCIE_UTIL_RX_BYTES, &u);
		/* device_memory */
		m.version = nvmlMemory_v2;
		b->mem2(h, &m);
		u = 64;
		b->procs(h, &u, b->procbuf);
		b->mig_mode(h, &u, &v);
		/* device_thermal */
		b->temp(h, NVML_TEMPERATURE_GPU, &u);
		memset(f, 0, sizeof(f));
		f[0].fieldId = NVML_FI_DEV_MEMORY_TEMP;
		b->fields(h, 1, f);
		b->fan(h, &u);
		b->reasons(h, &ull);
		/* device_power */
		b->power(h, &u);
		b->energy(h, &ull);
		u = 64;
		b->putil(h, b->ubuf, &u, 0); /* the energy split's per-process samples */
		/* device_clocks */
		for (int k = 0; k < NVML_CLOCK_COUNT; k++)
			b->clock(h, k, &u);
		/* device_errors */
		for (int k = 0; k < 4; k++)
			b->ecc(h, k & 1, k >> 1, &ull);
		b->replay(h, &u);
		memset(f, 0, sizeof(f));
		f[0].fieldId = NVML_FI_DEV_RETIRED_SBE;
		f[1].fieldId = NVML_FI_DEV_RETIRED_DBE;
		f[2].fieldId = NVML_FI_DEV_RETIRED_PENDING;
		b->fields(h, 3, f);
		b->remap(h, &u, &v, &w, &x);
	}
}

static void coll_cycle_at(void *st, int64_t mono_ns, double period);

/* One cycle of the collector: every device group; serialized when out is not NULL. */
static void coll_cycle(void *st, int64_t n, struct buf *out)
{
	json_t *rep = out ? json_object() : NULL;
	struct cycle cy;

	if (!out) {
		coll_cycle_at(st, n * 100 * NS_PER_MS, 0.1);
		return;
	}
	memset(&cy, 0, sizeof(cy));
	cy.mono_ns = n * 100 * NS_PER_MS;
	snprintf(cy.iso, sizeof(cy.iso), "2026-01-02T03:04:05.000Z");
	for (int g = GROUP_DEVICE_INFO; g <= GROUP_DEVICE_ERRORS; g++) {
		json_t *grp = group_new(0.1, cy.iso);

		coll_nvidia_ops.collect(st, &cy, &(enum group_id){ (enum group_id)g }, 1, grp);
		if (rep)
			json_object_set_new(rep, group_name((enum group_id)g), grp);
		else
			json_decref(grp);
	}
	if (rep) {
		json_t *ent = json_pack("{s:s, s:s, s:o}", "device_type", "nvidia", "error", "", "report", rep);

		buf_reset(out);
		if (json_write(ent, out))
			die("the entry does not fit the buffer", NULL);
		json_decref(ent);
	}
}

/* One cycle of the collector at mono_ns (every device group of the given period), nothing kept. */
static void coll_cycle_at(void *st, int64_t mono_ns, double period)
{
	struct cycle cy;

	memset(&cy, 0, sizeof(cy));
	cy.mono_ns = mono_ns;
	snprintf(cy.iso, sizeof(cy.iso), "2026-01-02T03:04:05.000Z");
	for (int g = GROUP_DEVICE_INFO; g <= GROUP_DEVICE_ERRORS; g++) {
		json_t *grp = group_new(period, cy.iso);

		coll_nvidia_ops.collect(st, &cy, &(enum group_id){ (enum group_id)g }, 1, grp);
		json_decref(grp);
	}
}

static double wall_ms(int64_t t0)
{
	return (double)(clock_mono_ns() - t0) / 1e6;
}

/*
 * --pcie-delay: the wall time of one collector cycle (every device group;
 * the PCIe calls on the worker pool) against the same PCIe calls made one
 * after the other, rounds alternating, medians. 0, or 1 when a cycle read
 * no PCIe value (the figure would be meaningless).
 */
static int wall_figures(void *st, struct bare *b, const struct opts *o, int64_t n)
{
	double par[MAX_ROUNDS], ser[MAX_ROUNDS];
	struct buf out;
	unsigned u;

	buf_init(&out, 16 << 20);
	coll_cycle(st, n++, &out); /* the pool's threads start here */
	coll_cycle(st, n++, &out);
	if (!strstr((const char *)out.data, "\"pcie_tx_bytes_per_second\"")) {
		fprintf(stderr, "nvml_bench: the cycle read no PCIe throughput\n");
		buf_free(&out);
		return 1;
	}
	for (int r = 0; r < o->rounds; r++) {
		int64_t t0 = clock_mono_ns();

		coll_cycle(st, n++, NULL);
		par[r] = wall_ms(t0);
		t0 = clock_mono_ns();
		for (unsigned i = 0; i < o->gpus; i++) {
			b->pcie(b->h[i], NVML_PCIE_UTIL_TX_BYTES, &u);
			b->pcie(b->h[i], NVML_PCIE_UTIL_RX_BYTES, &u);
		}
		ser[r] = wall_ms(t0);
	}
	qsort(par, (size_t)o->rounds, sizeof(double), bench_cmp_double);
	qsort(ser, (size_t)o->rounds, sizeof(double), bench_cmp_double);
	printf("gpus %u, PCIe throughput call sleeping %d ms (TX and RX: %u calls per cycle), %d rounds, medians\n",
	       o->gpus, o->pcie_delay_ms, 2 * o->gpus, o->rounds);
	printf("%-44s %9.1f ms  (min %.1f max %.1f)\n", "cycle: every device group, PCIe on the pool", par[o->rounds / 2],
	       par[0], par[o->rounds - 1]);
	printf("%-44s %9.1f ms  (min %.1f max %.1f)\n", "serial: the same PCIe calls one by one", ser[o->rounds / 2],
	       ser[0], ser[o->rounds - 1]);
	printf("%-44s %9.3f\n", "ratio cycle / serial", par[o->rounds / 2] / ser[o->rounds / 2]);
	buf_free(&out);
	return 0;
}

/* The devices block's "slow_period", through the collector's own config callback. */
static void set_slow_period(struct cfg_device *dev, const char *v)
{
	json_t *o = json_pack("{s:s}", "slow_period", v);
	char *err = NULL;
	struct cfg_block blk = { .path = "devices[0]", .obj = o, .err = &err, .own = &dev->own, .dev = dev };

	if (coll_nvidia_ops.config(&blk))
		die("\"slow_period\": ", err ? err : v);
	json_decref(o);
}

/*
 * --cost: start-up and steady-state CPU of the collector with the H200 cost
 * model at a 1 s period (see the top of this file). 0, or 1 when a figure
 * could not be had.
 */
static int cost_figures(void *dl, void *st, const struct opts *o, int64_t t_open, int64_t cpu_open, int64_t thr_open)
{
	unsigned long long (*modeled)(void);
	unsigned long (*waits)(void);
	void (*fake_skip)(long long);
	void *p;
	int64_t cpu0, wall0;
	unsigned long long m0;
	double cpu_ms, floor_ms, start_ms, thr_ms;
	int64_t worst = 0; /* the producer's thread's CPU in the dearest cycle (ns) */

	p = dlsym(dl, "fake_nvml_modeled_cpu_ns");
	if (!p)
		die("the library has no cost model (fake_nvml_modeled_cpu_ns)", NULL);
	memcpy(&modeled, &p, sizeof(p));
	p = dlsym(dl, "fake_nvml_clock_skip");
	if (!p)
		die("the library lacks fake_nvml_clock_skip", NULL);
	memcpy(&fake_skip, &p, sizeof(p));
	p = dlsym(dl, "fake_nvml_event_waits");
	if (!p)
		die("the library lacks fake_nvml_event_waits", NULL);
	memcpy(&waits, &p, sizeof(p));
	/* the first cycle: with open, the CPU before the first report (the producer's thread, and the process's) */
	coll_cycle_at(st, clock_mono_ns(), 1.0);
	start_ms = (double)(bench_cpu_ns() - cpu_open) / 1e6;
	thr_ms = (double)(clock_thread_cpu_ns() - thr_open) / 1e6;
	printf("start-up: open and the first cycle, %u GPUs: %.1f ms CPU of the producer's thread (%.1f ms of the "
	       "process), %.1f ms wall   target <= %.0f ms   %s\n",
	       o->gpus, thr_ms, start_ms, wall_ms(t_open), START_TARGET_MS, thr_ms <= START_TARGET_MS ? "PASS" : "FAIL");
	/* the event thread registers the GPUs before its first wait: the steady state begins after it */
	for (int k = 0; k < 1000 && !waits(); k++)
		nanosleep(&(struct timespec){ 0, 10 * 1000000L }, NULL);
	cpu0 = bench_cpu_ns();
	wall0 = clock_mono_ns();
	m0 = modeled();
	for (int k = 0; k < o->cycles; k++) {
		int64_t t = clock_thread_cpu_ns();

		skipped_ns += NS_PER_S;
		fake_skip(NS_PER_S);
		coll_cycle_at(st, clock_mono_ns(), 1.0);
		t = clock_thread_cpu_ns() - t;
		if (k > 0) /* the first also has the slots that passed while the event thread registered */
			worst = t > worst ? t : worst;
	}
	cpu_ms = (double)(bench_cpu_ns() - cpu0) / 1e6;
	floor_ms = (double)(modeled() - m0) / 1e6;
	printf("%d cycles of 1 s (%.0f ms wall), slow_period %s, every device group\n", o->cycles,
	       (double)(clock_mono_ns() - wall0 - (int64_t)o->cycles * NS_PER_S) / 1e6, o->slow ? o->slow : "(default)");
	printf("%-44s %9.3f ms  (%.3f ms per GPU)\n", "cycle: CPU per cycle, whole process", cpu_ms / o->cycles,
	       cpu_ms / o->cycles / o->gpus);
	printf("%-44s %9.3f ms  (%.3f ms per GPU)\n", "floor: the model's CPU for the calls made", floor_ms / o->cycles,
	       floor_ms / o->cycles / o->gpus);
	printf("%-44s %9.3f\n", "ratio cycle / floor", floor_ms > 0 ? cpu_ms / floor_ms : 0.0);
	printf("%-44s %9.3f ms  (the slow reads fall on each GPU's own cycles)\n",
	       "worst cycle: CPU of the producer's thread", (double)worst / 1e6);
	return floor_ms > 0 ? 0 : 1;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: nvml_bench --library PATH [-g GPUS] [-s SECONDS] [-r ROUNDS]\n"
		   "  --library PATH  the fake libnvidia-ml.so.1 (tests/helpers/fake_nvml.c)\n"
		   "  -g, --gpus N    fake GPUs (default 8, at most 64)\n"
		   "  -s, --seconds S wall time of the whole run (default 2)\n"
		   "  -r, --rounds N  blocks per figure (default 5)\n"
		   "  --pcie-delay MS the PCIe throughput call sleeps MS: wall time of a cycle vs serial calls\n"
		   "  --cost          the H200 cost model at a 1 s period: CPU per GPU per cycle vs the floor\n"
		   "  -c, --cycles N  --cost: cycles (default 20)\n"
		   "  --slow-period P --cost: the block's \"slow_period\" (\"period\": every value every cycle)\n"
		   "  --ledger        --cost: print the NVML call ledger to stderr at the end\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "library", required_argument, NULL, 'l' }, { "gpus", required_argument, NULL, 'g' },
		{ "seconds", required_argument, NULL, 's' }, { "rounds", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },          { "pcie-delay", required_argument, NULL, 'p' },
		{ "cost", no_argument, NULL, 'C' },          { "cycles", required_argument, NULL, 'c' },
		{ "slow-period", required_argument, NULL, 'S' }, { "ledger", no_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { NULL, 8, 2.0, 5, 0, 0, 20, NULL, 0 };
	int64_t t_open, cpu_open, thr_open;
	struct cfg_group groups[NGROUPS];
	struct cfg_device dev = { .type = "nvidia", .select_all = 1, .period_ms = 100, .groups = groups,
				  .ngroups = NGROUPS };
	struct mon_env env;
	struct bare b;
	struct buf out;
	char dir[] = "/tmp/nvml-bench.XXXXXX", script[64];
	double fig[3][MAX_ROUNDS];
	unsigned long calls[3] = { 0, 0, 0 };
	int64_t per_block, n = 1;
	void *st = NULL;
	FILE *f;
	int c;

	while ((c = getopt_long(argc, argv, "l:g:s:r:c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'l': o.library = optarg; break;
		case 'g': o.gpus = (unsigned)atoi(optarg); break;
		case 's': o.seconds = atof(optarg); break;
		case 'r': o.rounds = atoi(optarg); break;
		case 'p': o.pcie_delay_ms = atoi(optarg); break;
		case 'C': o.cost = 1; break;
		case 'c': o.cycles = atoi(optarg); break;
		case 'S': o.slow = optarg; break;
		case 'L': o.ledger = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!o.library || o.gpus < 1 || o.gpus > 64 || o.rounds < 1 || o.rounds > MAX_ROUNDS || !(o.seconds > 0) ||
	    o.cycles < 1) {
		usage(stderr);
		return 2;
	}
	for (int g = 0; g < NGROUPS; g++)
		groups[g] = (struct cfg_group){ (enum group_id)(GROUP_DEVICE_INFO + g), o.cost ? 1000 : 100 };
	if (o.cost) {
		dev.period_ms = 1000;
		setenv("FAKE_NVML_COST", "h200", 1);
		if (o.ledger)
			setenv("ACCEL_NVML_LEDGER", "1", 1);
		if (o.slow)
			set_slow_period(&dev, o.slow);
	} else {
		set_slow_period(&dev, "period"); /* every value every cycle, as the bare loop reads them */
	}
	/* N GPUs with every field, 4 processes each, no MIG. */
	if (!mkdtemp(dir))
		die("cannot make a temporary directory", NULL);
	snprintf(script, sizeof(script), "%s/gpus.nvml", dir);
	f = fopen(script, "w");
	if (!f)
		die("cannot write ", script);
	for (unsigned i = 0; i < o.gpus; i++)
		fprintf(f, "gpu\nname NVIDIA H100 80GB HBM3\nserial 16501234567%02u\nutil 37 12\nencoder 1\ndecoder 2\n"
			   "memory 85520809984 1073741824 83946012672 501055488\ntemp 45\nmemtemp 52\nfan 30\n"
			   "power 250500\nlimit 700000\nenergy 1000000 5000\nclocks 1755 1980 2619 1530\nreasons 0x5\n"
			   "ecc 2 0 7 1 1\nreplay 3 1\npcie 1000 2000\nremap 1 0 0 0\nretired 0 0 0\n"
			   "proc %u 1073741824\nproc %u 1073741824\nproc %u 1073741824\nproc %u 1073741824\n"
			   "pcie_delay %d\n%s",
			i, 1000 + 4 * i, 1001 + 4 * i, 1002 + 4 * i, 1003 + 4 * i, o.pcie_delay_ms,
			/* --cost: an H200 as the one measured: no fan, no page retirement (row remapping), GPM */
			o.cost ? "unsupported fan retired\ngpm graphics=12.5 sm=10.25 occupancy=4.5 tensor=6 dram=8.75 "
				 "fp64=0 fp32=1.5 fp16=0.25 pcie_tx=96 pcie_rx=192 nvlink_tx=0 nvlink_rx=0\n"
			       : "");
	fclose(f);
	setenv("FAKE_NVML_SCRIPT", script, 1);
	setenv("ACCEL_NVML_LIBRARY", o.library, 1);
	memset(&env, 0, sizeof(env));
	t_open = clock_mono_ns();
	cpu_open = bench_cpu_ns();
	thr_open = clock_thread_cpu_ns();
	if (coll_nvidia_ops.open(&env, &(struct coll_target){ .dev = &dev }, &st) || coll_nvidia_ops.error(st))
		die("the collector cannot open the library: ", coll_nvidia_ops.error(st));
	if (o.cost) {
		void *dl = dlopen(o.library, RTLD_NOW | RTLD_NOLOAD);
		int rc = dl ? cost_figures(dl, st, &o, t_open, cpu_open, thr_open) : 1;

		coll_nvidia_ops.close(st);
		if (dl)
			dlclose(dl);
		coll_nvidia_ops.config_free(dev.own);
		unlink(script);
		rmdir(dir);
		return rc;
	}
	memset(&b, 0, sizeof(b));
	bare_open(&b, o.library, o.gpus);
	if (o.pcie_delay_ms > 0) {
		int rc = wall_figures(st, &b, &o, n);

		coll_nvidia_ops.close(st);
		coll_nvidia_ops.config_free(dev.own);
		unlink(script);
		rmdir(dir);
		return rc;
	}
	buf_init(&out, 16 << 20);

	/* Warm up, and count the NVML calls of one cycle of each. */
	for (int k = 0; k < 3; k++) {
		unsigned long before;

		bare_cycle(&b, o.gpus);
		coll_cycle(st, n++, &out);
		before = calls_now(&b);
		bare_cycle(&b, o.gpus);
		calls[0] = calls_now(&b) - before;
		before = calls_now(&b);
		coll_cycle(st, n++, NULL);
		calls[1] = calls_now(&b) - before;
	}
	{
		int64_t t0 = bench_cpu_ns();

		for (int k = 0; k < 200; k++)
			coll_cycle(st, n++, &out);
		per_block = (int64_t)(o.seconds * 1e9 / 3 / o.rounds / ((double)(bench_cpu_ns() - t0) / 200));
		if (per_block < 50)
			per_block = 50;
	}
	for (int r = 0; r < o.rounds; r++)
		for (int k = 0; k < 3; k++) {
			int which = r % 2 ? 2 - k : k;
			int64_t t0 = bench_cpu_ns();

			for (int64_t i = 0; i < per_block; i++) {
				if (which == 0)
					bare_cycle(&b, o.gpus);
				else
					coll_cycle(st, n++, which == 2 ? &out : NULL);
			}
			fig[which][r] = (double)(bench_cpu_ns() - t0) / (double)per_block / 1000.0;
		}
	for (int k = 0; k < 3; k++)
		qsort(fig[k], (size_t)o.rounds, sizeof(double), bench_cmp_double);
	{
		double bare = fig[0][o.rounds / 2], coll = fig[1][o.rounds / 2], cyc = fig[2][o.rounds / 2];

		printf("gpus %u, %d rounds of %lld cycles per figure, %zu bytes of device_data per report\n", o.gpus,
		       o.rounds, (long long)per_block, out.len);
		printf("NVML calls per cycle: bare %lu, collector %lu%s\n", calls[0], calls[1],
		       calls[0] == calls[1] ? "" : "  (DIFFERENT: the comparison is off)");
		printf("%-44s %9.2f us/cycle  (%.2f us per GPU)\n", "bare: the same NVML calls in a loop", bare,
		       bare / o.gpus);
		printf("%-44s %9.2f us/cycle  (%.2f us per GPU)\n", "collect: group_new + collect, 7 groups", coll,
		       coll / o.gpus);
		printf("%-44s %9.2f us/cycle  (%.2f us per GPU)\n", "cycle: collect + serialize the entry", cyc,
		       cyc / o.gpus);
		printf("%-44s %9.2f us/cycle  (collect - bare)\n", "collector's own cost", coll - bare);
		printf("%-44s %9.2f  min %.2f max %.2f\n", "ratio collect / bare", coll / bare,
		       fig[1][0] / fig[0][o.rounds - 1], fig[1][o.rounds - 1] / fig[0][0]);
	}
	coll_nvidia_ops.close(st);
	coll_nvidia_ops.config_free(dev.own);
	buf_free(&out);
	unlink(script);
	rmdir(dir);
	return calls[0] == calls[1] ? 0 : 1;
}
