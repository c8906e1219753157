/* SPDX-License-Identifier: MIT */
/*
 * A fake libnvidia-ml.so.1 for the tests and the benchmark: the same ABI
 * (monitor/nvidia/nvml.h, checked against NVIDIA's header by test_nvml_abi), with
 * devices, values and failures scripted by the file FAKE_NVML_SCRIPT names.
 *
 *   cc -shared -fPIC -o DIR/libnvidia-ml.so.1 tests/helpers/fake_nvml.c
 *   cc -shared -fPIC -DFAKE_NVML_OLD ...   an old driver: no nvmlInit_v2,
 *       _v2/_v3 process lists (v1 structs only), clock *throttle* reasons,
 *       no nvmlDeviceGetMemoryInfo_v2, no _v2 handle/count/PCI/event calls,
 *       no nvmlDeviceGetRemappedRows
 *
 * Script: one directive per line, "#" comments. Globals first, then one
 * "gpu" line per GPU (index = order) followed by its values:
 *   driver S | nvml S | cuda N          host strings (nvmlSystemGet*)
 *   init_error N                        nvmlInit fails with N
 *   gpu                                 a new GPU
 *   name S | uuid S | serial S | pci S  identity (pci: the 8-digit-domain busId)
 *   util GPU MEM | encoder N | decoder N | fan N | temp N | memtemp N
 *   memory TOTAL USED FREE RESERVED    bytes (v1 reports used + reserved as used)
 *   power MW... | limit MW | clocks GR SM MEM VIDEO | reasons MASK | pcie TX RX (KB/s)
 *                                       power: each read gives the next value, then the last
 *   proc_util PID SM...                 per-process utilization (nvmlDeviceGetProcessUtilization):
 *                                       each call gives one sample per process whose next SM
 *                                       value (then the last) is above 0, stamped 1 ms after
 *                                       the call before's; none newer than lastSeenTimeStamp:
 *                                       NOT_FOUND; MIG mode: NOT_SUPPORTED
 *   energy MJ STEP                      counter: STEP added after each read (may be < 0)
 *   power_trace DT_MS T:MW...           the true power, piecewise linear between the knots (T: ms
 *                                       since the GPU's first power read; two knots at one T: a
 *                                       step; constant before the first and after the last); power
 *                                       read k is at k x DT_MS and gives the power then, and the
 *                                       energy counter gains the power's integral since read k-1
 *                                       (fake_nvml_energy: the counter, without a call)
 *   ecc CV UV CA UA [STEP]              corrected/uncorrected x volatile/aggregate
 *   replay N STEP                       PCIe replay counter, STEP as for energy
 *   remap COR UNC PENDING FAILED | retired SBE DBE PENDING
 *   proc PID BYTES                      a compute process (repeatable)
 *   procs N BYTES                       N processes, pids 10000, 10001, ...
 *   proc_grow N                         each process-list call, N more processes
 *   mig N                               MIG mode on, N MIG devices sharing the memory
 *   xid N                               one XID event, delivered at the first wait
 *   unsupported NAME...                 NOT_SUPPORTED for: util encoder decoder fan
 *                                       temp memtemp memory power limit clocks reasons
 *                                       pcie energy ecc replay remap retired procs serial mig
 *                                       proc_util
 *   lost_file PATH                      the GPU is lost while PATH exists
 * Events, NVLink and slow calls (G; see g_directive at the end):
 *   events_file PATH                    (global) events appended to PATH as lines while running:
 *                                       "xid GPU CODE", "dbe GPU", "sbe GPU", "clock GPU",
 *                                       "unavailable GPU"; each is delivered once, by the next
 *                                       nvmlEventSetWait, when GPU registered that type
 *   event_types MASK                    the event types the GPU supports [0x401f: XID, ECC, clock,
 *                                       PState, GPU unavailable]
 *   pcie_delay MS                       each nvmlDeviceGetPcieThroughput sleeps MS (NVML's 20 ms)
 *   nvlink N [TXSTEP RXSTEP]            N links, active, each read of a link's data counters
 *                                       adds TXSTEP/RXSTEP KiB [0 0]
 *   nvlink_down L                       link L inactive
 *   nvlink_errors L RPL REC FLIT DATA [STEP]  link L's error counters, STEP added after each read
 * While a registered GPU is lost (lost_file), every nvmlEventSetWait returns GPU_IS_LOST at once.
 * There is one event set at a time: nvmlEventSetCreate starts with no GPU registered.
 * MIG and GPM (parsed by fx_directive, at the end of this file):
 *   mig_instance PROFILE GI CI TOTAL USED [UUID]
 *                                       a MIG device (MIG mode on): its GPU instance
 *                                       profile ("1g.10gb"), GPU/compute instance ids,
 *                                       memory (bytes); replaces "mig N"'s layout
 *   mig_file PATH                       MIG mode on only while PATH exists; its lines,
 *                                       "PROFILE GI CI TOTAL USED [UUID]", are then the
 *                                       layout (re-read at each call: MIG changing)
 *   mig_proc GI CI PID BYTES            a compute process in that MIG device
 *   gpm NAME=VALUE...                   GPM supported, with these metrics (percent, or
 *                                       MiB/s): graphics sm occupancy tensor dram fp64
 *                                       fp32 fp16 pcie_tx pcie_rx nvlink_tx nvlink_rx
 *   gpm_mig GI NAME=VALUE...            GPM metrics of GPU instance GI
 *   gpm_mig_unsupported                 nvmlGpmMigSampleGet says NOT_SUPPORTED
 *   gpm_gpu_unsupported                 nvmlGpmSampleGet (the whole GPU) says NOT_SUPPORTED
 *   Without a "gpm" line nvmlGpmQueryDeviceSupport says the GPU has no GPM. The
 *   fake refuses nvmlGpmMetricsGet for samples 100 ms apart or less, as the API
 *   documents.
 * With FAKE_NVML_COST=h200 each call costs the CPU time and the wait it
 * costs on a real H200 (the cost model, below).
 * Without FAKE_NVML_SCRIPT, nvmlInit says the driver is not loaded. With
 * FAKE_NVML_STATS=PATH, nvmlShutdown writes call counts there.
 *
 * For tests that wait for the event thread instead of sleeping (dlsym):
 * fake_nvml_event_waits() and fake_nvml_lost_returns() count
 * nvmlEventSetWait calls and their GPU_IS_LOST answers, and
 * fake_nvml_events_pending() is 1 while events wait in the file or the
 * queue. For a test's mock clock (common/timeutil.h):
 * fake_nvml_clock_skip(NS) moves the GPM samples' clock NS ahead.
 */
#include "../../monitor/nvidia/nvml.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))
#define MAX_GPUS 64
#define MAX_PROCS 4096
#define MAX_MIG 7

enum {
	U_UTIL, U_ENC, U_DEC, U_FAN, U_TEMP, U_MEMTEMP, U_MEMORY, U_POWER, U_LIMIT, U_CLOCKS, U_REASONS,
	U_PCIE, U_ENERGY, U_ECC, U_REPLAY, U_REMAP, U_RETIRED, U_PROCS, U_SERIAL, U_MIG, U_PUTIL, U_COUNT
};
static const char *const unames[U_COUNT] = {
	"util", "encoder", "decoder", "fan", "temp", "memtemp", "memory", "power", "limit", "clocks", "reasons",
	"pcie", "energy", "ecc", "replay", "remap", "retired", "procs", "serial", "mig", "proc_util",
};

struct fproc {
	unsigned pid;
	unsigned long long bytes;
};

#define MAX_SEQ 16
#define MAX_KNOTS 48
#define MAX_PUTIL 16

/* A scripted per-process utilization: its SM percent at each call, the last repeated. */
struct fputil {
	unsigned pid;
	unsigned sm[MAX_SEQ], n;
};

struct gpu;

/* What a handle points at: a GPU or one of its MIG devices. */
struct fdev {
	int magic;
	struct gpu *gpu;
	int mig; /* -1: the GPU itself */
};

struct gpu {
	struct fdev self;
	struct fdev migs[MAX_MIG];
	char name[96], uuid[96], serial[32], pci[32];
	unsigned util_gpu, util_mem, enc, dec, fan, temp, memtemp;
	unsigned long long mem_total, mem_used, mem_free, mem_reserved;
	unsigned power, limit, clocks[4], pcie_tx, pcie_rx;
	unsigned power_seq[MAX_SEQ], npower_seq, power_pos; /* "power" with several values */
	struct fputil putil[MAX_PUTIL];
	unsigned nputil, putil_pos;
	unsigned long long putil_ts; /* the last sample's timeStamp (µs) */
	unsigned long long reasons;
	unsigned long long energy;
	long long energy_step;
	unsigned ntrace, trace_dt_ms;           /* "power_trace": its knots and the time between reads */
	long long trace_t[MAX_KNOTS];           /* ms */
	unsigned trace_mw[MAX_KNOTS];
	unsigned long long trace_reads;         /* power reads so far */
	double trace_uj;                        /* the integral so far not yet in the counter (µJ) */
	unsigned long long ecc[4], ecc_step;
	unsigned replay;
	int replay_step;
	unsigned remap[4], retired[3];
	struct fproc procs[MAX_PROCS];
	unsigned nprocs, proc_grow;
	unsigned nmig;
	unsigned long long xid;
	int xid_pending, registered;
	int unsupported[U_COUNT];
	char lost_file[256];
	unsigned long handle_calls, proc_calls, insufficient;
};

#define MAGIC 0x4e564d4c

static struct gpu gpus[MAX_GPUS];
static unsigned ngpus;
static char driver[80] = "535.104.05", nvml_ver[80] = "12.535.104.05";
static int cuda = 12020, init_error, inited;
static _Atomic unsigned long total_calls; /* atomic: the collector calls from several threads */
static int event_set_token;

static void die(const char *what, int line)
{
	fprintf(stderr, "fake_nvml: script line %d: %s\n", line, what);
	exit(99);
}

/* ---- a power trace ("power_trace") --------------------------------------------------- */

/* "power_trace DT_MS T:MW...": g's knots, in order of time. */
static void trace_parse(struct gpu *g, char *rest, int ln)
{
	char *q = rest, *end;

	g->trace_dt_ms = (unsigned)strtoul(q, &end, 10);
	if (end == q || !g->trace_dt_ms)
		die("power_trace: DT_MS", ln);
	for (q = end; ; q = end) {
		long long t = strtoll(q, &end, 10);
		unsigned long mw;

		if (end == q)
			break;
		if (*end != ':' || g->ntrace == MAX_KNOTS || (g->ntrace && t < g->trace_t[g->ntrace - 1]))
			die("power_trace: T:MW knots in order of time", ln);
		q = end + 1;
		mw = strtoul(q, &end, 10);
		if (end == q)
			die("power_trace: T:MW", ln);
		g->trace_t[g->ntrace] = t;
		g->trace_mw[g->ntrace++] = (unsigned)mw;
	}
	if (!g->ntrace)
		die("power_trace: no knot", ln);
}

/* g's true power at t ms (right-continuous at a step). */
static double trace_mw(const struct gpu *g, double t)
{
	unsigned i = 0, n = g->ntrace;

	if (t < (double)g->trace_t[0])
		return g->trace_mw[0];
	while (i + 1 < n && (double)g->trace_t[i + 1] <= t)
		i++;
	if (i + 1 == n)
		return g->trace_mw[i];
	return g->trace_mw[i] + ((double)g->trace_mw[i + 1] - g->trace_mw[i]) * (t - (double)g->trace_t[i]) /
					(double)(g->trace_t[i + 1] - g->trace_t[i]);
}

/*
 * Power read k of g's trace: the power at k x DT, after the counter gained
 * the integral since read k-1 (midpoints of 1 ms steps: exact on the
 * linear pieces; mW x 1 ms = 1 µJ).
 */
static unsigned trace_read(struct gpu *g)
{
	long long t1 = (long long)(g->trace_reads * g->trace_dt_ms);

	if (g->trace_reads++) {
		unsigned long long mj;

		for (long long a = t1 - g->trace_dt_ms; a < t1; a++)
			g->trace_uj += trace_mw(g, (double)a + 0.5);
		mj = (unsigned long long)(g->trace_uj / 1000.0);
		g->energy += mj;
		g->trace_uj -= (double)mj * 1000.0;
	}
	return (unsigned)(trace_mw(g, (double)t1) + 0.5);
}

/* ---- cost model ------------------------------------------------------------------ */

/*
 * With FAKE_NVML_COST=h200 every NVML entry point costs what it cost on a
 * real NVIDIA H200 (driver 580.159.04): CPU time spent in the call, then
 * time waited. The real cost is almost all kernel time (the driver's
 * ioctls); here it is a spin on CLOCK_THREAD_CPUTIME_ID, whose every read is
 * itself a system call, so the model's CPU shows up as the calling thread's
 * CPU time (user and system), which is what the collector and its
 * benchmark measure. The wait is a sleep. Without the variable (or with
 * "0") calls answer in nanoseconds, as the functional tests want.
 *
 * Figures (microseconds): "measured" rows are pynvml's per-call CPU on the
 * H200 (../shared/gpu-check/results-h200.md: 20 calls in a row); "fitted"
 * rows are calls pynvml did not time, set so that accel-monitor's per-group
 * CPU per cycle on the same machine (same file, period 100 ms, less the
 * 0.13 ms a cycle costs without a GPU) comes out: device_info 0.81,
 * device_memory 0.92, device_thermal 0.52, device_utilization 2.5,
 * device_errors 1.05, device_clocks 0.03. The calls each group makes come
 * from the collector's call ledger (ACCEL_NVML_LEDGER, docs/nvidia.md).
 * The fits assume the unexplained part of a group is per cycle, not per
 * second: at a 1 s period the same machine gave about 4 ms per cycle for
 * all groups but device_power, as at 100 ms, so it is not the event
 * thread's waiting. pynvml timed nvmlDeviceGetMemoryInfo (v1) as cheap;
 * device_info and device_memory share v2 and 0.5 ms each unexplained.
 * A name not in the table costs FAKE_COST_DEFAULT_US. Versioned names
 * (_v2, _v3) cost what their base name does.
 */
#define FAKE_COST_DEFAULT_US 3
/*
 * Fitted: a field other than NVLink's (memory temperature, retired pages)
 * in nvmlDeviceGetFieldValues. device_thermal reads one (0.52 ms less the
 * other calls' 0.01 and the fan's 0.27), device_errors three (1.05 ms less
 * the replay counter's 0.18 and the rest's 0.05: 0.27 each).
 */
#define FAKE_COST_FIELD_US 260

struct fake_cost_row {
	const char *fn;
	unsigned cpu_us;  /* CPU time spent in the call */
	unsigned wait_us; /* then time waited (sleeping) */
};

static const struct fake_cost_row fake_cost_h200[] = {
	/* measured */
	{ "nvmlDeviceGetTotalEnergyConsumption", 4170, 0 },
	{ "nvmlDeviceGetPcieThroughput", 900, 20100 }, /* 21 ms wall per call */
	{ "nvmlDeviceGetPcieReplayCounter", 180, 0 },
	{ "nvmlDeviceGetMigMode", 160, 0 },
	{ "nvmlGpmSampleGet", 40, 0 },
	{ "nvmlGpmMigSampleGet", 40, 0 },
	{ "nvmlDeviceGetComputeRunningProcesses", 20, 0 },
	{ "nvmlDeviceGetFieldValues", 10, 0 }, /* one NVLink field; each other field adds FAKE_COST_FIELD_US */
	{ "nvmlDeviceGetUtilizationRates", 5, 0 },
	{ "nvmlDeviceGetMemoryInfo", 5, 0 },
	{ "nvmlDeviceGetPowerUsage", 4, 0 },
	{ "nvmlDeviceGetTemperature", 3, 0 },
	{ "nvmlDeviceGetClockInfo", 2, 0 },
	{ "nvmlDeviceGetEncoderUtilization", 5, 0 },
	{ "nvmlDeviceGetDecoderUtilization", 5, 0 },
	{ "nvmlDeviceGetCurrentClocksEventReasons", 3, 0 },
	{ "nvmlDeviceGetCurrentClocksThrottleReasons", 3, 0 },
	{ "nvmlDeviceGetTotalEccErrors", 7, 0 },
	{ "nvmlDeviceGetRemappedRows", 7, 0 },
	{ "nvmlDeviceGetSerial", 2, 0 },
	{ "nvmlDeviceGetName", 1, 0 },
	{ "nvmlDeviceGetUUID", 1, 0 },
	{ "nvmlDeviceGetPciInfo", 3, 0 },
	{ "nvmlDeviceGetEnforcedPowerLimit", 3, 0 },
	{ "nvmlDeviceGetPowerManagementLimit", 3, 0 },
	{ "nvmlSystemGetDriverVersion", 1, 0 },
	{ "nvmlSystemGetNVMLVersion", 1, 0 },
	{ "nvmlSystemGetCudaDriverVersion", 1, 0 },
	{ "nvmlDeviceGetHandleByIndex", 1, 0 },
	{ "nvmlDeviceGetCount", 1, 0 },
	/* fitted (see above) */
	{ "nvmlDeviceGetMemoryInfo_v2", 450, 0 },   /* device_info and device_memory: 0.5 ms each unexplained */
	{ "nvmlDeviceGetFanSpeed", 270, 0 },        /* device_thermal: 0.27 ms left (NOT_SUPPORTED: no fan on SXM) */
	{ "nvmlGpmMetricsGet", 30, 0 },
	{ "nvmlGpmQueryDeviceSupport", 100, 0 },
	{ "nvmlGpmSampleAlloc", 5, 0 },
	{ "nvmlGpmSampleFree", 5, 0 },
	{ "nvmlDeviceGetNvLinkState", 5, 0 },
	{ "nvmlDeviceGetNvLinkErrorCounter", 5, 0 },
	{ "nvmlDeviceGetMaxMigDeviceCount", 5, 0 },
	{ "nvmlDeviceGetMigDeviceHandleByIndex", 5, 0 },
	{ "nvmlDeviceGetGpuInstanceId", 2, 0 },
	{ "nvmlDeviceGetComputeInstanceId", 2, 0 },
	{ "nvmlDeviceGetSupportedEventTypes", 5, 0 },
	{ "nvmlEventSetCreate", 20, 0 },
	{ "nvmlEventSetFree", 20, 0 },
	{ "nvmlEventSetWait", 20, 0 },
	{ "nvmlDeviceRegisterEvents", 200000, 0 },  /* start-up: 250-300 ms with device_errors, 35-50 without */
	{ "nvmlInit", 30000, 0 },
	{ "nvmlShutdown", 5000, 0 },
};

/* The profile FAKE_NVML_COST names, read once: NULL (no cost) or the table. */
static _Atomic int fake_cost_state; /* 0 not read yet, 1 off, 2 h200 */

static int fake_cost_profile(void)
{
	int st = fake_cost_state;

	if (!st) {
		const char *v = getenv("FAKE_NVML_COST");

		if (!v || !*v || !strcmp(v, "0"))
			st = 1;
		else if (!strcmp(v, "h200"))
			st = 2;
		else {
			fprintf(stderr, "fake_nvml: FAKE_NVML_COST=%s: the profiles are h200 and 0\n", v);
			exit(99);
		}
		fake_cost_state = st;
	}
	return st;
}

/* The row of fn (an exact name, else the name less a _vN suffix), or -1: the default. */
static int fake_cost_find(const char *fn)
{
	size_t n = sizeof(fake_cost_h200) / sizeof(fake_cost_h200[0]), len = strlen(fn);
	const char *v = strrchr(fn, '_');

	for (size_t i = 0; i < n; i++)
		if (!strcmp(fake_cost_h200[i].fn, fn))
			return (int)i;
	if (v && v[1] == 'v' && v[2] >= '0' && v[2] <= '9')
		len = (size_t)(v - fn);
	for (size_t i = 0; i < n; i++)
		if (strlen(fake_cost_h200[i].fn) == len && !strncmp(fake_cost_h200[i].fn, fn, len))
			return (int)i;
	return -1;
}

static long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static _Atomic unsigned long long fake_modeled_ns; /* the model's CPU time of every call so far */

/* For the benchmark: the CPU time the cost model charged so far (ns), the floor of the calls made. */
API unsigned long long fake_nvml_modeled_cpu_ns(void)
{
	return fake_modeled_ns;
}

/* Spend us microseconds of this thread's CPU time. */
static void fake_burn_us(unsigned us)
{
	long long end = thread_cpu_ns() + us * 1000LL;

	fake_modeled_ns += us * 1000ULL;
	while (thread_cpu_ns() < end)
		;
}

/*
 * Each entry point's calls, counted for the tests (fake_nvml_fn_calls):
 * a site per API function, registered at its first call.
 */
#define FAKE_SITES 128
static struct fake_site {
	const char *fn;
	int row; /* its cost row, -1: the default */
	_Atomic unsigned long calls;
} fake_sites[FAKE_SITES];
static int fake_nsites;
static pthread_mutex_t fake_site_mu = PTHREAD_MUTEX_INITIALIZER;

/* How many times the entry point named fn was called (its exact name, e.g. "nvmlDeviceGetFanSpeed"). */
API unsigned long fake_nvml_fn_calls(const char *fn)
{
	unsigned long n = 0;

	pthread_mutex_lock(&fake_site_mu);
	for (int i = 0; i < fake_nsites; i++)
		if (!strcmp(fake_sites[i].fn, fn))
			n += fake_sites[i].calls;
	pthread_mutex_unlock(&fake_site_mu);
	return n;
}

/* Count a call of fn and spend what it costs (*site: its site, -1 until its first call). */
static void fake_cost(const char *fn, _Atomic int *site)
{
	unsigned cpu = FAKE_COST_DEFAULT_US, wait = 0;
	int i = *site, r;

	if (i < 0) {
		pthread_mutex_lock(&fake_site_mu);
		if ((i = *site) < 0 && fake_nsites < FAKE_SITES) {
			i = fake_nsites++;
			fake_sites[i].fn = fn;
			fake_sites[i].row = fake_cost_find(fn);
			*site = i;
		}
		pthread_mutex_unlock(&fake_site_mu);
		if (i < 0)
			return;
	}
	fake_sites[i].calls++;
	if (fake_cost_profile() != 2)
		return;
	r = fake_sites[i].row;
	if (r >= 0) {
		cpu = fake_cost_h200[r].cpu_us;
		wait = fake_cost_h200[r].wait_us;
	}
	fake_burn_us(cpu);
	if (wait) {
		struct timespec ts = { wait / 1000000, (long)(wait % 1000000) * 1000L };

		nanosleep(&ts, NULL);
	}
}

/* At the top of every NVML entry point. */
#define FAKE_COST()                                  \
	do {                                         \
		static _Atomic int fake_site_ = -1;  \
		fake_cost(__func__, &fake_site_);    \
	} while (0)

/* events, NVLink */
static int g_directive(struct gpu *g, const char *kw, char *rest, int ln);
static void g_reset(void);
static void g_stats(FILE *f);
/* MIG and GPM, at the end of this file. */
static void fx_reset(struct gpu *g);
static int fx_directive(struct gpu *g, const char *kw, char *rest, int ln);
static void fx_sync(struct gpu *g);
/* For a MIG handle of a GPU with an explicit layout: the answer (an nvmlReturn_t), else -1. */
static int fx_mig_name(struct gpu *g, int mig, char *v, unsigned int len);
static int fx_mig_uuid(struct gpu *g, int mig, char *v, unsigned int len);
static int fx_mig_memory(struct gpu *g, int mig, nvmlMemory_t *m);
static int fx_mig_ids(struct gpu *g, int mig, unsigned int *gi, unsigned int *ci);
/* Process i of g: its MIG ids (v2 entries) and whether it belongs to MIG handle mig (-1: the GPU). */
static void fx_proc_ids(struct gpu *g, unsigned i, unsigned *gi, unsigned *ci);
static int fx_proc_in(struct gpu *g, unsigned i, int mig);

/* Parse the script into gpus[]. */
static int load_script(void)
{
	const char *path = getenv("FAKE_NVML_SCRIPT");
	char line[1024];
	int ln = 0;
	FILE *f;
	struct gpu *g = NULL;

	if (!path)
		return -1;
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "fake_nvml: cannot open %s\n", path);
		return -1;
	}
	/* gpus[] and its MIG/GPM state are cleared a GPU at a time (below): all 64 (7 MB) cost 30 ms of page faults */
	ngpus = 0;
	init_error = 0;
	g_reset(); /* G */
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *kw, *rest;

		ln++;
		line[strcspn(line, "\r\n#")] = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			continue;
		kw = p;
		p += strcspn(p, " \t");
		if (*p)
			*p++ = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		rest = p;
		if (g_directive(g, kw, rest, ln)) /* events, NVLink */
			continue;
		if (!strcmp(kw, "driver")) {
			snprintf(driver, sizeof(driver), "%s", rest);
		} else if (!strcmp(kw, "nvml")) {
			snprintf(nvml_ver, sizeof(nvml_ver), "%s", rest);
		} else if (!strcmp(kw, "cuda")) {
			cuda = atoi(rest);
		} else if (!strcmp(kw, "init_error")) {
			init_error = atoi(rest);
		} else if (!strcmp(kw, "gpu")) {
			if (ngpus == MAX_GPUS)
				die("too many GPUs", ln);
			g = &gpus[ngpus];
			memset(g, 0, sizeof(*g));
			fx_reset(g);
			g->self = (struct fdev){ MAGIC, g, -1 };
			for (int i = 0; i < MAX_MIG; i++)
				g->migs[i] = (struct fdev){ MAGIC, g, i };
			snprintf(g->name, sizeof(g->name), "Fake GPU");
			snprintf(g->uuid, sizeof(g->uuid), "GPU-00000000-0000-0000-0000-%012u", ngpus);
			snprintf(g->pci, sizeof(g->pci), "00000000:%02X:00.0", ngpus + 1);
			ngpus++;
		} else if (!g) {
			die("a GPU value before the first \"gpu\" line", ln);
		} else if (!strcmp(kw, "name")) {
			snprintf(g->name, sizeof(g->name), "%s", rest);
		} else if (!strcmp(kw, "uuid")) {
			snprintf(g->uuid, sizeof(g->uuid), "%s", rest);
		} else if (!strcmp(kw, "serial")) {
			snprintf(g->serial, sizeof(g->serial), "%s", rest);
		} else if (!strcmp(kw, "pci")) {
			snprintf(g->pci, sizeof(g->pci), "%s", rest);
		} else if (!strcmp(kw, "util")) {
			sscanf(rest, "%u %u", &g->util_gpu, &g->util_mem);
		} else if (!strcmp(kw, "encoder")) {
			g->enc = (unsigned)atoi(rest);
		} else if (!strcmp(kw, "decoder")) {
			g->dec = (unsigned)atoi(rest);
		} else if (!strcmp(kw, "fan")) {
			g->fan = (unsigned)atoi(rest);
		} else if (!strcmp(kw, "temp")) {
			g->temp = (unsigned)atoi(rest);
		} else if (!strcmp(kw, "memtemp")) {
			g->memtemp = (unsigned)atoi(rest);
		} else if (!strcmp(kw, "memory")) {
			sscanf(rest, "%llu %llu %llu %llu", &g->mem_total, &g->mem_used, &g->mem_free,
			       &g->mem_reserved);
		} else if (!strcmp(kw, "power")) {
			char *q = rest, *end;

			g->npower_seq = 0;
			for (unsigned long v = strtoul(q, &end, 10); end != q && g->npower_seq < MAX_SEQ;
			     q = end, v = strtoul(q, &end, 10))
				g->power_seq[g->npower_seq++] = (unsigned)v;
			g->power = g->npower_seq ? g->power_seq[0] : 0;
		} else if (!strcmp(kw, "proc_util")) {
			struct fputil *u;
			char *q = rest, *end;

			if (g->nputil == MAX_PUTIL)
				die("too many proc_util lines", ln);
			u = &g->putil[g->nputil++];
			u->pid = (unsigned)strtoul(q, &end, 10);
			for (q = end; u->n < MAX_SEQ; q = end) {
				unsigned long v = strtoul(q, &end, 10);

				if (end == q)
					break;
				u->sm[u->n++] = (unsigned)v;
			}
		} else if (!strcmp(kw, "limit")) {
			g->limit = (unsigned)atoi(rest);
		} else if (!strcmp(kw, "clocks")) {
			sscanf(rest, "%u %u %u %u", &g->clocks[0], &g->clocks[1], &g->clocks[2], &g->clocks[3]);
		} else if (!strcmp(kw, "reasons")) {
			g->reasons = strtoull(rest, NULL, 0);
		} else if (!strcmp(kw, "pcie")) {
			sscanf(rest, "%u %u", &g->pcie_tx, &g->pcie_rx);
		} else if (!strcmp(kw, "energy")) {
			sscanf(rest, "%llu %lld", &g->energy, &g->energy_step);
		} else if (!strcmp(kw, "power_trace")) {
			trace_parse(g, rest, ln);
		} else if (!strcmp(kw, "ecc")) {
			sscanf(rest, "%llu %llu %llu %llu %llu", &g->ecc[0], &g->ecc[1], &g->ecc[2], &g->ecc[3],
			       &g->ecc_step);
		} else if (!strcmp(kw, "replay")) {
			sscanf(rest, "%u %d", &g->replay, &g->replay_step);
		} else if (!strcmp(kw, "remap")) {
			sscanf(rest, "%u %u %u %u", &g->remap[0], &g->remap[1], &g->remap[2], &g->remap[3]);
		} else if (!strcmp(kw, "retired")) {
			sscanf(rest, "%u %u %u", &g->retired[0], &g->retired[1], &g->retired[2]);
		} else if (!strcmp(kw, "proc")) {
			if (g->nprocs == MAX_PROCS)
				die("too many processes", ln);
			sscanf(rest, "%u %llu", &g->procs[g->nprocs].pid, &g->procs[g->nprocs].bytes);
			g->nprocs++;
		} else if (!strcmp(kw, "procs")) {
			unsigned n = 0;
			unsigned long long b = 0;

			sscanf(rest, "%u %llu", &n, &b);
			for (unsigned i = 0; i < n && g->nprocs < MAX_PROCS; i++)
				g->procs[g->nprocs++] = (struct fproc){ 10000 + i, b };
		} else if (!strcmp(kw, "proc_grow")) {
			g->proc_grow = (unsigned)atoi(rest);
		} else if (!strcmp(kw, "mig")) {
			g->nmig = (unsigned)atoi(rest);
			if (g->nmig > MAX_MIG)
				die("at most 7 MIG devices", ln);
		} else if (!strcmp(kw, "xid")) {
			g->xid = strtoull(rest, NULL, 0);
			g->xid_pending = 1;
		} else if (!strcmp(kw, "unsupported")) {
			for (char *t = strtok(rest, " \t"); t; t = strtok(NULL, " \t")) {
				int i;

				for (i = 0; i < U_COUNT && strcmp(unames[i], t); i++)
					;
				if (i == U_COUNT)
					die("unknown field in \"unsupported\"", ln);
				g->unsupported[i] = 1;
			}
		} else if (!strcmp(kw, "lost_file")) {
			snprintf(g->lost_file, sizeof(g->lost_file), "%s", rest);
		} else if (fx_directive(g, kw, rest, ln)) {
			/* a MIG or GPM directive */
		} else {
			die("unknown directive", ln);
		}
	}
	fclose(f);
	return 0;
}

static const char *const errstr[] = {
	[0] = "Success", [1] = "Uninitialized", [2] = "Invalid Argument", [3] = "Not Supported",
	[4] = "Insufficient Permissions", [6] = "Not Found", [7] = "Insufficient Size", [9] = "Driver Not Loaded",
	[10] = "Timeout", [13] = "Function Not Found", [15] = "GPU is lost", [16] = "GPU requires reset",
	[25] = "Argument version mismatch",
};

API const char *nvmlErrorString(nvmlReturn_t rc)
{
	if (rc >= 0 && (size_t)rc < sizeof(errstr) / sizeof(errstr[0]) && errstr[rc])
		return errstr[rc];
	return "Unknown Error";
}

static int init_refs; /* nvmlInit and nvmlShutdown count, as NVML's do (a reload opens before it closes) */

static nvmlReturn_t do_init(void)
{
	total_calls++;
	if (inited && init_refs++ > 0)
		return NVML_SUCCESS; /* already up: the script is not read again */
	if (load_script())
		return NVML_ERROR_DRIVER_NOT_LOADED;
	if (init_error)
		return init_error;
	inited = 1;
	init_refs = 1;
	return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
API nvmlReturn_t nvmlInit_v2(void)
{
	FAKE_COST();
	return do_init();
}
#endif

API nvmlReturn_t nvmlInit(void)
{
	FAKE_COST();
	return do_init();
}

API nvmlReturn_t nvmlShutdown(void)
{
	FAKE_COST();
	const char *path = getenv("FAKE_NVML_STATS");
	FILE *f;

	total_calls++;
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	if (--init_refs > 0)
		return NVML_SUCCESS;
	inited = 0;
	if (path && (f = fopen(path, "a"))) {
		for (unsigned i = 0; i < ngpus; i++)
			fprintf(f, "gpu %u handle_lookups %lu proc_calls %lu insufficient_size %lu\n", i,
				gpus[i].handle_calls, gpus[i].proc_calls, gpus[i].insufficient);
		fprintf(f, "calls %lu\n", (unsigned long)total_calls);
		g_stats(f); /* G */
		fclose(f);
	}
	return NVML_SUCCESS;
}

/* For the benchmark: every NVML call made so far. */
API unsigned long fake_nvml_calls(void)
{
	return total_calls;
}

static int is_lost(const struct gpu *g)
{
	return g->lost_file[0] && access(g->lost_file, F_OK) == 0;
}

/*
 * Resolve a handle; the macros return from the calling function on a bad
 * handle, an uninitialized library, a lost GPU or an unsupported field.
 */
static struct fdev *fdev_of(nvmlDevice_t h)
{
	struct fdev *d = (struct fdev *)(void *)h;

	return d && d->magic == MAGIC ? d : NULL;
}

#define GPU(h, field) GPU_SYNC(h, field, 1)
/*
 * sync 0: without fx_sync, for the one call the collector makes from its
 * worker threads (nvmlDeviceGetPcieThroughput): fx_sync rewrites the MIG
 * layout that the producer's thread may be reading at that moment.
 */
#define GPU_SYNC(h, field, sync)                                    \
	struct fdev *fd_ = fdev_of(h);                              \
	struct gpu *g;                                              \
	total_calls++;                                              \
	if (!inited)                                                \
		return NVML_ERROR_UNINITIALIZED;                    \
	if (!fd_)                                                   \
		return NVML_ERROR_INVALID_ARGUMENT;                 \
	g = fd_->gpu;                                               \
	if (sync)                                                   \
		fx_sync(g);                                         \
	if (is_lost(g))                                             \
		return NVML_ERROR_GPU_IS_LOST;                      \
	if ((field) >= 0 && g->unsupported[(field) < 0 ? 0 : (field)]) \
		return NVML_ERROR_NOT_SUPPORTED;                    \
	(void)fd_

static nvmlReturn_t do_count(unsigned int *n)
{
	total_calls++;
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	if (!n)
		return NVML_ERROR_INVALID_ARGUMENT;
	*n = ngpus;
	return NVML_SUCCESS;
}

static nvmlReturn_t do_handle(unsigned int i, nvmlDevice_t *h)
{
	total_calls++;
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	if (i >= ngpus || !h)
		return NVML_ERROR_INVALID_ARGUMENT;
	gpus[i].handle_calls++;
	if (is_lost(&gpus[i]))
		return NVML_ERROR_GPU_IS_LOST;
	*h = (nvmlDevice_t)(void *)&gpus[i].self;
	return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
	FAKE_COST();
	return do_count(n);
}

API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *h)
{
	FAKE_COST();
	return do_handle(i, h);
}
#endif

API nvmlReturn_t nvmlDeviceGetCount(unsigned int *n)
{
	FAKE_COST();
	return do_count(n);
}

API nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *h)
{
	FAKE_COST();
	return do_handle(i, h);
}

static nvmlReturn_t put_string(char *dst, unsigned int len, const char *s)
{
	if (!dst)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (strlen(s) + 1 > len)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(dst, s, strlen(s) + 1);
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int len)
{
	FAKE_COST();
	total_calls++;
	return put_string(v, len, driver);
}

API nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned int len)
{
	FAKE_COST();
	total_calls++;
	return put_string(v, len, nvml_ver);
}

#ifndef FAKE_NVML_OLD
API nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
{
	FAKE_COST();
	total_calls++;
	*v = cuda;
	return NVML_SUCCESS;
}
#endif

API nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v)
{
	FAKE_COST();
	total_calls++;
	*v = cuda;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t h, char *v, unsigned int len)
{
	FAKE_COST();
	GPU(h, -1);
	if (fd_->mig >= 0 && fx_mig_name(g, fd_->mig, v, len) >= 0)
		return fx_mig_name(g, fd_->mig, v, len);
	if (fd_->mig >= 0) {
		char tmp[128];

		snprintf(tmp, sizeof(tmp), "%s MIG %dg", g->name, fd_->mig + 1);
		return put_string(v, len, tmp);
	}
	return put_string(v, len, g->name);
}

API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t h, char *v, unsigned int len)
{
	FAKE_COST();
	GPU(h, -1);
	if (fd_->mig >= 0 && fx_mig_uuid(g, fd_->mig, v, len) >= 0)
		return fx_mig_uuid(g, fd_->mig, v, len);
	if (fd_->mig >= 0) {
		char tmp[128];

		snprintf(tmp, sizeof(tmp), "MIG-%s-%d", g->uuid + 4, fd_->mig);
		return put_string(v, len, tmp);
	}
	return put_string(v, len, g->uuid);
}

API nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t h, char *v, unsigned int len)
{
	FAKE_COST();
	GPU(h, U_SERIAL);
	if (!g->serial[0])
		return NVML_ERROR_NOT_SUPPORTED;
	return put_string(v, len, g->serial);
}

static nvmlReturn_t do_pci(nvmlDevice_t h, nvmlPciInfo_t *p)
{
	unsigned dom = 0, bus = 0, dev = 0;

	GPU(h, -1);
	memset(p, 0, sizeof(*p));
	sscanf(g->pci, "%x:%x:%x", &dom, &bus, &dev);
	p->domain = dom;
	p->bus = bus;
	p->device = dev;
	p->pciDeviceId = 0x233010DE;
	snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "%04X:%02X:%02X.0", dom, bus, dev);
	snprintf(p->busId, sizeof(p->busId), "%s", g->pci);
	return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t h, nvmlPciInfo_t *p)
{
	FAKE_COST();
	return do_pci(h, p);
}
#endif

API nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t h, nvmlPciInfo_t *p)
{
	FAKE_COST();
	return do_pci(h, p);
}

API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t h, nvmlUtilization_t *u)
{
	FAKE_COST();
	GPU(h, U_UTIL);
	if (g->nmig)
		return NVML_ERROR_NOT_SUPPORTED; /* as on a real GPU in MIG mode */
	u->gpu = g->util_gpu;
	u->memory = g->util_mem;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t h, unsigned int *u, unsigned int *period)
{
	FAKE_COST();
	GPU(h, U_ENC);
	*u = g->enc;
	*period = 167000;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t h, unsigned int *u, unsigned int *period)
{
	FAKE_COST();
	GPU(h, U_DEC);
	*u = g->dec;
	*period = 167000;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t h, nvmlMemory_t *m)
{
	FAKE_COST();
	GPU(h, U_MEMORY);
	if (fd_->mig >= 0 && fx_mig_memory(g, fd_->mig, m) >= 0)
		return NVML_SUCCESS;
	if (fd_->mig >= 0) {
		m->total = g->mem_total / (g->nmig + 1);
		m->used = g->mem_used / (g->nmig + 1);
		m->free = m->total - m->used;
		return NVML_SUCCESS;
	}
	m->total = g->mem_total;
	m->used = g->mem_used + g->mem_reserved;
	m->free = g->mem_free;
	return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t h, nvmlMemory_v2_t *m)
{
	FAKE_COST();
	GPU(h, U_MEMORY);
	if (m->version != nvmlMemory_v2)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	m->total = g->mem_total;
	m->used = g->mem_used;
	m->free = g->mem_free;
	m->reserved = g->mem_reserved;
	return NVML_SUCCESS;
}
#endif

API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t h, nvmlTemperatureSensors_t sensor, unsigned int *t)
{
	FAKE_COST();
	GPU(h, U_TEMP);
	if (sensor != NVML_TEMPERATURE_GPU)
		return NVML_ERROR_INVALID_ARGUMENT;
	*t = g->temp;
	return NVML_SUCCESS;
}

static int g_field(struct gpu *g, nvmlFieldValue_t *v); /* NVLink */

API nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t h, int n, nvmlFieldValue_t *v)
{
	FAKE_COST();
	GPU(h, -1);
	for (int i = 0; i < n && fake_cost_profile() == 2; i++)
		if (v[i].fieldId != NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX &&
		    v[i].fieldId != NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX)
			fake_burn_us(FAKE_COST_FIELD_US);
	for (int i = 0; i < n; i++) {
		v[i].nvmlReturn = NVML_SUCCESS;
		v[i].valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
		switch (v[i].fieldId) {
		case NVML_FI_DEV_MEMORY_TEMP:
			if (g->unsupported[U_MEMTEMP])
				v[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
			v[i].value.uiVal = g->memtemp;
			break;
		case NVML_FI_DEV_RETIRED_SBE:
		case NVML_FI_DEV_RETIRED_DBE:
		case NVML_FI_DEV_RETIRED_PENDING:
			if (g->unsupported[U_RETIRED])
				v[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
			v[i].valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
			v[i].value.ullVal = g->retired[v[i].fieldId - NVML_FI_DEV_RETIRED_SBE];
			break;
		default:
			if (!g_field(g, &v[i])) /* NVLink */
				v[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
		}
	}
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t h, unsigned int *mw)
{
	FAKE_COST();
	GPU(h, U_POWER);
	if (g->ntrace) {
		*mw = trace_read(g);
		return NVML_SUCCESS;
	}
	if (g->npower_seq > 1) {
		g->power = g->power_seq[g->power_pos];
		if (g->power_pos + 1 < g->npower_seq)
			g->power_pos++;
	}
	*mw = g->power;
	return NVML_SUCCESS;
}

/*
 * One sample per scripted process whose SM value this call is above 0, as
 * NVML gives only processes with some utilization; asked for with NULL or
 * too small a buffer: INSUFFICIENT_SIZE and the count. A call that returns
 * samples moves on to each process's next value.
 */
API nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t h, nvmlProcessUtilizationSample_t *u, unsigned int *n,
						 unsigned long long last_seen)
{
	unsigned want = 0, k = 0;

	FAKE_COST();
	GPU(h, U_PUTIL);
	if (g->nmig || fd_->mig >= 0)
		return NVML_ERROR_NOT_SUPPORTED;
	for (unsigned i = 0; i < g->nputil; i++) {
		const struct fputil *p = &g->putil[i];

		want += p->n && p->sm[g->putil_pos < p->n ? g->putil_pos : p->n - 1] > 0;
	}
	if (!want || g->putil_ts + 1000 <= last_seen)
		return NVML_ERROR_NOT_FOUND;
	if (!u || *n < want) {
		*n = want;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	g->putil_ts = g->putil_ts ? g->putil_ts + 1000 : 1700000000000000ULL;
	for (unsigned i = 0; i < g->nputil; i++) {
		const struct fputil *p = &g->putil[i];
		unsigned sm = p->n ? p->sm[g->putil_pos < p->n ? g->putil_pos : p->n - 1] : 0;

		if (sm > 0)
			u[k++] = (nvmlProcessUtilizationSample_t){ .pid = p->pid, .timeStamp = g->putil_ts, .smUtil = sm };
	}
	g->putil_pos++;
	*n = k;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t h, unsigned int *mw)
{
	FAKE_COST();
	GPU(h, U_LIMIT);
	*mw = g->limit;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t h, unsigned int *pct)
{
	FAKE_COST();
	GPU(h, U_FAN);
	*pct = g->fan;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t h, unsigned int *n)
{
	FAKE_COST();
	GPU(h, U_REPLAY);
	*n = g->replay;
	g->replay += (unsigned)g->replay_step;
	return NVML_SUCCESS;
}

/* GPU i's energy counter now (mJ), without a call counted; 0 for no such GPU. */
API unsigned long long fake_nvml_energy(unsigned i)
{
	return i < ngpus ? gpus[i].energy : 0;
}

API nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t h, unsigned long long *mj)
{
	FAKE_COST();
	GPU(h, U_ENERGY);
	*mj = g->energy;
	g->energy += (unsigned long long)g->energy_step;
	return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
API nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t h, unsigned long long *mask)
{
	FAKE_COST();
	GPU(h, U_REASONS);
	*mask = g->reasons;
	return NVML_SUCCESS;
}
#endif

API nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t h, unsigned long long *mask)
{
	FAKE_COST();
	GPU(h, U_REASONS);
	*mask = g->reasons;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t h, nvmlClockType_t type, unsigned int *mhz)
{
	FAKE_COST();
	GPU(h, U_CLOCKS);
	if (type < 0 || type >= NVML_CLOCK_COUNT)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!g->clocks[type])
		return NVML_ERROR_NOT_SUPPORTED;
	*mhz = g->clocks[type];
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t h, nvmlMemoryErrorType_t type, nvmlEccCounterType_t ctr,
					     unsigned long long *n)
{
	FAKE_COST();
	int k;

	GPU(h, U_ECC);
	if ((type != 0 && type != 1) || (ctr != 0 && ctr != 1))
		return NVML_ERROR_INVALID_ARGUMENT;
	k = ctr * 2 + type;
	*n = g->ecc[k];
	g->ecc[k] += g->ecc_step;
	return NVML_SUCCESS;
}

static void g_pcie_delay(const struct gpu *g); /* G */

API nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t h, nvmlPcieUtilCounter_t c, unsigned int *kbs)
{
	FAKE_COST();
	GPU_SYNC(h, U_PCIE, 0); /* called from the collector's PCIe workers */
	g_pcie_delay(g); /* G */
	*kbs = c == NVML_PCIE_UTIL_TX_BYTES ? g->pcie_tx : g->pcie_rx;
	return NVML_SUCCESS;
}

/* The process list into infos (entries of stride bytes), NVML's INSUFFICIENT_SIZE protocol included. */
static nvmlReturn_t do_procs(nvmlDevice_t h, unsigned int *count, void *infos, size_t stride)
{
	GPU(h, U_PROCS);
	if (fd_->mig >= 0) { /* a MIG handle lists its own instance's processes */
		unsigned n = 0, k = 0;

		for (unsigned i = 0; i < g->nprocs; i++)
			n += fx_proc_in(g, i, fd_->mig);
		if (*count < n) {
			*count = n;
			return NVML_ERROR_INSUFFICIENT_SIZE;
		}
		for (unsigned i = 0; i < g->nprocs; i++) {
			nvmlProcessInfo_v2_t e = { g->procs[i].pid, g->procs[i].bytes, 0, 0 };

			if (!fx_proc_in(g, i, fd_->mig))
				continue;
			fx_proc_ids(g, i, &e.gpuInstanceId, &e.computeInstanceId);
			if (stride == sizeof(nvmlProcessInfo_v1_t))
				memcpy((char *)infos + k++ * stride, &e, stride);
			else
				memcpy((char *)infos + k++ * stride, &e, sizeof(e));
		}
		*count = n;
		return NVML_SUCCESS;
	}
	g->proc_calls++;
	for (unsigned i = 0; i < g->proc_grow && g->nprocs < MAX_PROCS; i++, g->nprocs++)
		g->procs[g->nprocs] = (struct fproc){ 20000 + g->nprocs, 4096 };
	if (*count < g->nprocs) {
		*count = g->nprocs;
		g->insufficient++;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	*count = g->nprocs;
	for (unsigned i = 0; i < g->nprocs; i++) {
		char *p = (char *)infos + i * stride;

		if (stride == sizeof(nvmlProcessInfo_v1_t)) {
			nvmlProcessInfo_v1_t e = { g->procs[i].pid, g->procs[i].bytes };

			memcpy(p, &e, sizeof(e));
		} else {
			nvmlProcessInfo_v2_t e = { g->procs[i].pid, g->procs[i].bytes, g->nmig ? 1 : 0xFFFFFFFFu,
						   g->nmig ? 0 : 0xFFFFFFFFu };

			fx_proc_ids(g, i, &e.gpuInstanceId, &e.computeInstanceId);
			memcpy(p, &e, sizeof(e));
		}
	}
	return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t h, unsigned int *n, nvmlProcessInfo_v2_t *p)
{
	FAKE_COST();
	return do_procs(h, n, p, sizeof(*p));
}

API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t h, unsigned int *n, nvmlProcessInfo_v2_t *p)
{
	FAKE_COST();
	return do_procs(h, n, p, sizeof(*p));
}
#endif

API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t h, unsigned int *n, nvmlProcessInfo_v1_t *p)
{
	FAKE_COST();
	return do_procs(h, n, p, sizeof(*p));
}

#ifndef FAKE_NVML_OLD
API nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t h, unsigned int *cor, unsigned int *unc, unsigned int *pending,
					   unsigned int *failed)
{
	FAKE_COST();
	GPU(h, U_REMAP);
	*cor = g->remap[0];
	*unc = g->remap[1];
	*pending = g->remap[2];
	*failed = g->remap[3];
	return NVML_SUCCESS;
}
#endif

API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t h, unsigned int *cur, unsigned int *pending)
{
	FAKE_COST();
	GPU(h, U_MIG);
	*cur = *pending = g->nmig ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t h, unsigned int *n)
{
	FAKE_COST();
	GPU(h, U_MIG);
	*n = g->nmig ? MAX_MIG : 0;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t h, unsigned int i, nvmlDevice_t *mh)
{
	FAKE_COST();
	GPU(h, U_MIG);
	if (i >= MAX_MIG)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (i >= g->nmig)
		return NVML_ERROR_NOT_FOUND;
	*mh = (nvmlDevice_t)(void *)&g->migs[i];
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t h, unsigned int *id)
{
	FAKE_COST();
	GPU(h, -1);
	if (fd_->mig < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (fx_mig_ids(g, fd_->mig, id, NULL) >= 0)
		return NVML_SUCCESS;
	*id = (unsigned)fd_->mig + 1;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t h, unsigned int *id)
{
	FAKE_COST();
	GPU(h, -1);
	if (fd_->mig < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (fx_mig_ids(g, fd_->mig, NULL, id) >= 0)
		return NVML_SUCCESS;
	*id = 0;
	return NVML_SUCCESS;
}

static void g_set_created(void); /* G */

API nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
	FAKE_COST();
	total_calls++;
	g_set_created();
	*set = (nvmlEventSet_t)(void *)&event_set_token;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
	FAKE_COST();
	total_calls++;
	return set == (nvmlEventSet_t)(void *)&event_set_token ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

/* events. Registration keeps the mask; a type the GPU lacks fails the call, as NVML does. */
static nvmlReturn_t g_register(struct gpu *g, unsigned long long types);
static nvmlReturn_t do_wait(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeout, size_t size);

API nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t h, unsigned long long types, nvmlEventSet_t set)
{
	FAKE_COST();
	GPU(h, -1);
	(void)set;
	return g_register(g, types);
}

#ifndef FAKE_NVML_OLD
API nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeout)
{
	FAKE_COST();
	return do_wait(set, data, timeout, sizeof(*data));
}
#endif

/* The v1 call fills the 24 bytes before the instance ids. */
API nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeout)
{
	FAKE_COST();
	return do_wait(set, data, timeout, 24);
}

/* ---- events, NVLink, slow calls --------------------------------------------------- */

#define G_DEFAULT_TYPES 0x401fULL /* SBE, DBE, PState, XID, clock, GPU unavailable */
#define G_QUEUE 1024

/* What the G directives add to a GPU (gext[i] goes with gpus[i]). */
static struct gext {
	unsigned long long event_types, registered;
	int have_types;
	unsigned pcie_delay_ms;
	unsigned nlinks;
	int link_down[NVML_NVLINK_MAX_LINKS];
	unsigned long long tput[NVML_NVLINK_MAX_LINKS][2], tput_step[2];
	unsigned long long nlerr[NVML_NVLINK_MAX_LINKS][4], nlerr_step[NVML_NVLINK_MAX_LINKS];
} gext[MAX_GPUS];

/* Events: the file's lines become a queue that nvmlEventSetWait pops (under ev_mu: another thread waits). */
static pthread_mutex_t ev_mu = PTHREAD_MUTEX_INITIALIZER;
static char events_file[256];
static long events_off;
static struct {
	unsigned gpu;
	unsigned long long type, data;
} evq[G_QUEUE];
static unsigned evq_head, evq_len;
static _Atomic unsigned long event_waits, lost_returns;

static struct gext *gx(const struct gpu *g)
{
	return &gext[g - gpus];
}

static void g_reset(void)
{
	memset(gext, 0, sizeof(gext));
	events_file[0] = 0;
	events_off = 0;
	evq_head = evq_len = 0;
}

/* One set at a time: a new one has no GPU registered (nvmlEventSetCreate). */
static void g_set_created(void)
{
	pthread_mutex_lock(&ev_mu);
	for (unsigned i = 0; i < MAX_GPUS; i++)
		gext[i].registered = 0;
	pthread_mutex_unlock(&ev_mu);
}

static void g_stats(FILE *f)
{
	fprintf(f, "event_waits %lu lost_returns %lu\n", (unsigned long)event_waits, (unsigned long)lost_returns);
}

/* A G directive: 1 when kw is one (parsed), 0 when not. */
static int g_directive(struct gpu *g, const char *kw, char *rest, int ln)
{
	struct gext *x = g ? gx(g) : NULL;
	unsigned l = 0;

	if (!strcmp(kw, "events_file")) {
		snprintf(events_file, sizeof(events_file), "%s", rest);
		return 1;
	}
	if (strcmp(kw, "event_types") && strcmp(kw, "pcie_delay") && strncmp(kw, "nvlink", 6))
		return 0;
	if (!x)
		die("a GPU value before the first \"gpu\" line", ln);
	if (!strcmp(kw, "event_types")) {
		x->event_types = strtoull(rest, NULL, 0);
		x->have_types = 1;
	} else if (!strcmp(kw, "pcie_delay")) {
		x->pcie_delay_ms = (unsigned)atoi(rest);
	} else if (!strcmp(kw, "nvlink")) {
		sscanf(rest, "%u %llu %llu", &x->nlinks, &x->tput_step[0], &x->tput_step[1]);
		if (x->nlinks > NVML_NVLINK_MAX_LINKS)
			die("at most 18 NVLinks", ln);
		for (unsigned k = 0; k < x->nlinks; k++) {
			x->tput[k][0] = 1000 * (k + 1);
			x->tput[k][1] = 2000 * (k + 1);
		}
	} else if (!strcmp(kw, "nvlink_down")) {
		l = (unsigned)atoi(rest);
		if (l >= NVML_NVLINK_MAX_LINKS)
			die("no such link", ln);
		x->link_down[l] = 1;
	} else if (!strcmp(kw, "nvlink_errors")) {
		unsigned long long a = 0, b = 0, c = 0, d = 0, st = 0;

		sscanf(rest, "%u %llu %llu %llu %llu %llu", &l, &a, &b, &c, &d, &st);
		if (l >= NVML_NVLINK_MAX_LINKS)
			die("no such link", ln);
		x->nlerr[l][0] = a;
		x->nlerr[l][1] = b;
		x->nlerr[l][2] = c;
		x->nlerr[l][3] = d;
		x->nlerr_step[l] = st;
	} else {
		die("unknown directive", ln);
	}
	return 1;
}

static void g_pcie_delay(const struct gpu *g)
{
	unsigned ms = gext[g - gpus].pcie_delay_ms;
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	if (ms)
		nanosleep(&ts, NULL);
}

/* NVLink data counters through nvmlDeviceGetFieldValues (scopeId: the link). 1 handled, 0 not ours. */
static int g_field(struct gpu *g, nvmlFieldValue_t *v)
{
	struct gext *x = gx(g);
	int c;

	if (v->fieldId != NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX && v->fieldId != NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX)
		return 0;
	c = v->fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
	if (!x->nlinks) {
		v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
		return 1;
	}
	if (v->scopeId >= x->nlinks) {
		v->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
		return 1;
	}
	v->valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
	v->value.ullVal = x->tput[v->scopeId][c];
	x->tput[v->scopeId][c] += x->tput_step[c];
	return 1;
}

API nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t h, unsigned int link, unsigned int *active)
{
	FAKE_COST();
	struct gext *x;

	GPU(h, -1);
	x = gx(g);
	if (!x->nlinks)
		return NVML_ERROR_NOT_SUPPORTED;
	if (link >= x->nlinks)
		return NVML_ERROR_INVALID_ARGUMENT;
	*active = x->link_down[link] ? NVML_FEATURE_DISABLED : NVML_FEATURE_ENABLED;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t h, unsigned int link, int counter,
						 unsigned long long *value)
{
	FAKE_COST();
	struct gext *x;

	GPU(h, -1);
	x = gx(g);
	if (!x->nlinks)
		return NVML_ERROR_NOT_SUPPORTED;
	if (link >= x->nlinks || counter < 0 || counter > NVML_NVLINK_ERROR_DL_ECC_DATA)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (counter == NVML_NVLINK_ERROR_DL_ECC_DATA)
		return NVML_ERROR_NOT_SUPPORTED;
	*value = x->nlerr[link][counter];
	x->nlerr[link][counter] += x->nlerr_step[link];
	return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
API nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t h, unsigned long long *types)
{
	FAKE_COST();
	GPU(h, -1);
	*types = gx(g)->have_types ? gx(g)->event_types : G_DEFAULT_TYPES;
	return NVML_SUCCESS;
}
#endif

static nvmlReturn_t g_register(struct gpu *g, unsigned long long types)
{
	struct gext *x = gx(g);
	unsigned long long sup = x->have_types ? x->event_types : G_DEFAULT_TYPES;

	if (types & ~sup)
		return NVML_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&ev_mu);
	x->registered = types;
	pthread_mutex_unlock(&ev_mu);
	return NVML_SUCCESS;
}

/* Read the events file's new complete lines into the queue. Under ev_mu. */
static void g_read_events(void)
{
	char line[256];
	FILE *f;

	if (!events_file[0] || !(f = fopen(events_file, "r")))
		return;
	if (fseek(f, events_off, SEEK_SET) == 0)
		while (fgets(line, sizeof(line), f) && strchr(line, '\n') && evq_len < G_QUEUE) {
			char kind[32];
			unsigned gpu = 0;
			unsigned long long data = 0, type = 0;
			unsigned slot;

			events_off = ftell(f);
			if (sscanf(line, "%31s %u %llu", kind, &gpu, &data) < 2 || gpu >= ngpus)
				continue;
			if (!strcmp(kind, "xid"))
				type = nvmlEventTypeXidCriticalError;
			else if (!strcmp(kind, "dbe"))
				type = nvmlEventTypeDoubleBitEccError;
			else if (!strcmp(kind, "sbe"))
				type = nvmlEventTypeSingleBitEccError;
			else if (!strcmp(kind, "clock"))
				type = nvmlEventTypeClock;
			else if (!strcmp(kind, "unavailable"))
				type = nvmlEventTypeGpuUnavailableError;
			else
				continue;
			slot = (evq_head + evq_len++) % G_QUEUE;
			evq[slot].gpu = gpu;
			evq[slot].type = type;
			evq[slot].data = type == nvmlEventTypeXidCriticalError ? data : 0;
		}
	fclose(f);
}

/* One event for data, or 0 (under ev_mu). The script's "xid" first, then the file's queue. */
static int g_next_event(nvmlEventData_t *e)
{
	for (unsigned i = 0; i < ngpus; i++) {
		struct gpu *g = &gpus[i];

		if ((gext[i].registered & nvmlEventTypeXidCriticalError) && g->xid_pending && !is_lost(g)) {
			*e = (nvmlEventData_t){ (nvmlDevice_t)(void *)&g->self, nvmlEventTypeXidCriticalError, g->xid,
						0xFFFFFFFFu, 0xFFFFFFFFu };
			g->xid_pending = 0;
			return 1;
		}
	}
	g_read_events();
	while (evq_len) {
		unsigned i = evq[evq_head].gpu;
		unsigned long long type = evq[evq_head].type, data = evq[evq_head].data;

		evq_head = (evq_head + 1) % G_QUEUE;
		evq_len--;
		if (!(gext[i].registered & type))
			continue; /* not registered: the driver does not queue it for this set */
		*e = (nvmlEventData_t){ (nvmlDevice_t)(void *)&gpus[i].self, type, data, 0xFFFFFFFFu, 0xFFFFFFFFu };
		return 1;
	}
	return 0;
}

/* nvmlEventSetWait: an event, GPU_IS_LOST while a registered GPU is lost, or TIMEOUT after timeout ms. */
static nvmlReturn_t do_wait(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeout, size_t size)
{
	struct timespec start, now, nap = { 0, 2000000L };
	int quiet = 0;
	long waited;

	total_calls++;
	event_waits++;
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	if (fake_cost_profile() == 2) {
		/*
		 * The cost model: the real call blocks in the driver until an event
		 * or the timeout, so the fake's own polling must not add to its
		 * cost. Without an events file or a lost file only the scripted Xid
		 * (seen at once below) can come: the wait is one sleep.
		 */
		nap.tv_nsec = 50000000L;
		quiet = !events_file[0];
		for (unsigned i = 0; i < ngpus && quiet; i++)
			quiet = !gpus[i].lost_file[0];
	}
	(void)set;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		nvmlEventData_t e;
		int got = 0;

		pthread_mutex_lock(&ev_mu);
		for (unsigned i = 0; i < ngpus && got >= 0; i++)
			if (gext[i].registered && is_lost(&gpus[i]))
				got = -1;
		if (got == 0)
			got = g_next_event(&e);
		pthread_mutex_unlock(&ev_mu);
		if (got < 0) {
			lost_returns++;
			return NVML_ERROR_GPU_IS_LOST;
		}
		if (got) {
			memcpy(data, &e, size);
			return NVML_SUCCESS;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		waited = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
		if (waited >= (long)timeout)
			return NVML_ERROR_TIMEOUT;
		if (quiet) /* nothing can come meanwhile: blocked until the timeout, as in the driver */
			nap = (struct timespec){ ((long)timeout - waited) / 1000, ((long)timeout - waited) % 1000 * 1000000L };
		nanosleep(&nap, NULL);
	}
}

/* For the benchmark: nvmlEventSetWait calls so far (the collector's event thread makes them in the background). */
API unsigned long fake_nvml_event_waits(void)
{
	return event_waits;
}

/* For tests: nvmlEventSetWait's GPU_IS_LOST answers so far. */
API unsigned long fake_nvml_lost_returns(void)
{
	return lost_returns;
}

/* For tests: 1 while an event waits for nvmlEventSetWait (complete lines not read yet, or queued), else 0. */
API unsigned long fake_nvml_events_pending(void)
{
	struct stat st;
	int n;

	pthread_mutex_lock(&ev_mu);
	n = evq_len > 0 || (events_file[0] && stat(events_file, &st) == 0 && st.st_size > events_off);
	pthread_mutex_unlock(&ev_mu);
	return n;
}

/* ---- MIG instances and GPM ------------------------------------ */

#include <time.h>

enum { GM_GRAPHICS, GM_SM, GM_OCC, GM_TENSOR, GM_DRAM, GM_FP64, GM_FP32, GM_FP16, GM_PCIE_TX, GM_PCIE_RX,
       GM_NVL_TX, GM_NVL_RX, GM_COUNT };
static const struct {
	const char *name;
	unsigned id;
} gm_names[GM_COUNT] = {
	{ "graphics", NVML_GPM_METRIC_GRAPHICS_UTIL }, { "sm", NVML_GPM_METRIC_SM_UTIL },
	{ "occupancy", NVML_GPM_METRIC_SM_OCCUPANCY }, { "tensor", NVML_GPM_METRIC_ANY_TENSOR_UTIL },
	{ "dram", NVML_GPM_METRIC_DRAM_BW_UTIL },	 { "fp64", NVML_GPM_METRIC_FP64_UTIL },
	{ "fp32", NVML_GPM_METRIC_FP32_UTIL },		 { "fp16", NVML_GPM_METRIC_FP16_UTIL },
	{ "pcie_tx", NVML_GPM_METRIC_PCIE_TX_PER_SEC }, { "pcie_rx", NVML_GPM_METRIC_PCIE_RX_PER_SEC },
	{ "nvlink_tx", NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC },
	{ "nvlink_rx", NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC },
};

struct fx_inst {
	char profile[32], uuid[96];
	unsigned gi, ci;
	unsigned long long total, used;
};

struct fx_gpm {
	double v[GM_COUNT];
	unsigned have; /* bit per GM_* */
	unsigned gi;   /* gpm_mig: the GPU instance */
};

/* What a GPU has beyond struct gpu. */
static struct fx {
	struct fx_inst inst[MAX_MIG]; /* the static layout (mig_instance) */
	unsigned ninst;
	char mig_file[256];
	struct fx_inst finst[MAX_MIG]; /* the layout mig_file gave at the last call */
	unsigned nfinst;
	unsigned char proc_set[MAX_PROCS]; /* mig_proc: proc_gi/proc_ci hold the process's ids */
	unsigned proc_gi[MAX_PROCS], proc_ci[MAX_PROCS];
	int gpm;                       /* "gpm" seen: GPM supported */
	struct fx_gpm gpm_gpu, gpm_gi[MAX_MIG];
	unsigned ngpm_gi;
	int gpm_mig_unsupported, gpm_gpu_unsupported;
} fxs[MAX_GPUS];

/* GPU g's MIG and GPM state, cleared for a new script. */
static void fx_reset(struct gpu *g)
{
	memset(&fxs[g - gpus], 0, sizeof(fxs[0]));
}

static struct fx *fx_of(struct gpu *g)
{
	return &fxs[g - gpus];
}

/* "PROFILE GI CI TOTAL USED [UUID]" into in; 0, or -1 when it does not parse. */
static int fx_parse_inst(struct gpu *g, unsigned n, const char *text, struct fx_inst *in)
{
	memset(in, 0, sizeof(*in));
	if (sscanf(text, "%31s %u %u %llu %llu %95s", in->profile, &in->gi, &in->ci, &in->total, &in->used,
		   in->uuid) < 5)
		return -1;
	if (!in->uuid[0])
		snprintf(in->uuid, sizeof(in->uuid), "MIG-%.8s-0000-4000-8000-%012u", g->uuid + 4, n);
	return 0;
}

/* "name=value ..." into m; 0, or -1 for an unknown name. */
static int fx_parse_gpm(char *rest, struct fx_gpm *m)
{
	for (char *t = strtok(rest, " \t"); t; t = strtok(NULL, " \t")) {
		char *eq = strchr(t, '=');
		int i;

		if (!eq)
			return -1;
		*eq = 0;
		for (i = 0; i < GM_COUNT && strcmp(gm_names[i].name, t); i++)
			;
		if (i == GM_COUNT)
			return -1;
		m->v[i] = strtod(eq + 1, NULL);
		m->have |= 1u << i;
	}
	return 0;
}

static int fx_directive(struct gpu *g, const char *kw, char *rest, int ln)
{
	struct fx *x = fx_of(g);

	if (!strcmp(kw, "mig_instance")) {
		if (x->ninst == MAX_MIG)
			die("at most 7 MIG devices", ln);
		if (fx_parse_inst(g, x->ninst, rest, &x->inst[x->ninst]))
			die("mig_instance PROFILE GI CI TOTAL USED [UUID]", ln);
		x->ninst++;
		g->nmig = x->ninst;
	} else if (!strcmp(kw, "mig_file")) {
		snprintf(x->mig_file, sizeof(x->mig_file), "%s", rest);
	} else if (!strcmp(kw, "mig_proc")) {
		unsigned gi, ci, pid;
		unsigned long long b;

		if (sscanf(rest, "%u %u %u %llu", &gi, &ci, &pid, &b) != 4)
			die("mig_proc GI CI PID BYTES", ln);
		if (g->nprocs == MAX_PROCS)
			die("too many processes", ln);
		x->proc_set[g->nprocs] = 1;
		x->proc_gi[g->nprocs] = gi;
		x->proc_ci[g->nprocs] = ci;
		g->procs[g->nprocs++] = (struct fproc){ pid, b };
	} else if (!strcmp(kw, "gpm")) {
		x->gpm = 1;
		if (fx_parse_gpm(rest, &x->gpm_gpu))
			die("gpm NAME=VALUE... (graphics sm occupancy tensor dram fp64 fp32 fp16 pcie_tx pcie_rx "
			    "nvlink_tx nvlink_rx)",
			    ln);
	} else if (!strcmp(kw, "gpm_mig")) {
		struct fx_gpm *m;
		char *end;

		if (x->ngpm_gi == MAX_MIG)
			die("at most 7 gpm_mig lines", ln);
		m = &x->gpm_gi[x->ngpm_gi++];
		m->gi = (unsigned)strtoul(rest, &end, 10);
		if (end == rest || fx_parse_gpm(end, m))
			die("gpm_mig GI NAME=VALUE...", ln);
	} else if (!strcmp(kw, "gpm_mig_unsupported")) {
		x->gpm_mig_unsupported = 1;
	} else if (!strcmp(kw, "gpm_gpu_unsupported")) {
		x->gpm_gpu_unsupported = 1;
	} else {
		return 0;
	}
	return 1;
}

/* The layout in effect: mig_file's while it exists (none when it does not), else mig_instance's. */
static const struct fx_inst *fx_layout(struct gpu *g, unsigned *n)
{
	struct fx *x = fx_of(g);

	if (x->mig_file[0]) {
		*n = x->nfinst;
		return x->finst;
	}
	*n = x->ninst;
	return x->inst;
}

/* Before each call on g: with mig_file, MIG is on (with the file's layout) only while the file exists. */
static void fx_sync(struct gpu *g)
{
	struct fx *x = fx_of(g);
	char line[256];
	FILE *f;

	if (!x->mig_file[0])
		return;
	x->nfinst = 0;
	f = fopen(x->mig_file, "r");
	if (f) {
		while (x->nfinst < MAX_MIG && fgets(line, sizeof(line), f))
			if (line[0] != '#' && !fx_parse_inst(g, x->nfinst, line, &x->finst[x->nfinst]))
				x->nfinst++;
		fclose(f);
	}
	g->nmig = x->nfinst;
}

static const struct fx_inst *fx_inst_of(struct gpu *g, int mig)
{
	unsigned n;
	const struct fx_inst *l = fx_layout(g, &n);

	if (!fx_of(g)->ninst && !fx_of(g)->mig_file[0])
		return NULL; /* "mig N": the old layout */
	return mig >= 0 && (unsigned)mig < n ? &l[mig] : NULL;
}

static int fx_mig_name(struct gpu *g, int mig, char *v, unsigned int len)
{
	const struct fx_inst *in = fx_inst_of(g, mig);
	char tmp[160];

	if (!in)
		return -1;
	snprintf(tmp, sizeof(tmp), "%s MIG %s", g->name, in->profile);
	return put_string(v, len, tmp);
}

static int fx_mig_uuid(struct gpu *g, int mig, char *v, unsigned int len)
{
	const struct fx_inst *in = fx_inst_of(g, mig);

	return in ? put_string(v, len, in->uuid) : -1;
}

static int fx_mig_memory(struct gpu *g, int mig, nvmlMemory_t *m)
{
	const struct fx_inst *in = fx_inst_of(g, mig);

	if (!in)
		return -1;
	m->total = in->total;
	m->used = in->used;
	m->free = in->total - in->used;
	return NVML_SUCCESS;
}

static int fx_mig_ids(struct gpu *g, int mig, unsigned int *gi, unsigned int *ci)
{
	const struct fx_inst *in = fx_inst_of(g, mig);

	if (!in)
		return -1;
	if (gi)
		*gi = in->gi;
	if (ci)
		*ci = in->ci;
	return NVML_SUCCESS;
}

static void fx_proc_ids(struct gpu *g, unsigned i, unsigned *gi, unsigned *ci)
{
	struct fx *x = fx_of(g);

	if (!x->proc_set[i])
		return;
	*gi = x->proc_gi[i];
	*ci = x->proc_ci[i];
}

static int fx_proc_in(struct gpu *g, unsigned i, int mig)
{
	const struct fx_inst *in = fx_inst_of(g, mig);
	struct fx *x = fx_of(g);

	if (!x->proc_set[i])
		return mig == 0; /* "proc" lines: the first MIG device's (GPU instance 1, as the v2 entries say) */
	return in && in->gi == x->proc_gi[i] && in->ci == x->proc_ci[i];
}

#ifndef FAKE_NVML_OLD
#define GPM_MAGIC 0x47504d53

struct nvmlGpmSample_st {
	int magic;
	struct gpu *g; /* NULL until filled */
	int gi;        /* -1: the whole GPU */
	long long ns;  /* CLOCK_MONOTONIC when taken */
};

static _Atomic long long fx_skipped_ns; /* fake_nvml_clock_skip */

static long long fx_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec + fx_skipped_ns;
}

/* For a test's mock clock: the GPM samples' clock runs ns further ahead, as the test's does. */
API void fake_nvml_clock_skip(long long ns)
{
	fx_skipped_ns += ns;
}

API nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t h, nvmlGpmSupport_t *sup)
{
	FAKE_COST();
	GPU(h, -1);
	if (!sup)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (sup->version != NVML_GPM_SUPPORT_VERSION)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	sup->isSupportedDevice = fd_->mig < 0 && fx_of(g)->gpm;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *s)
{
	FAKE_COST();
	total_calls++;
	if (!s)
		return NVML_ERROR_INVALID_ARGUMENT;
	*s = calloc(1, sizeof(**s));
	if (!*s)
		return NVML_ERROR_UNKNOWN;
	(*s)->magic = GPM_MAGIC;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t s)
{
	FAKE_COST();
	total_calls++;
	if (!s || s->magic != GPM_MAGIC)
		return NVML_ERROR_INVALID_ARGUMENT;
	s->magic = 0;
	free(s);
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t h, nvmlGpmSample_t s)
{
	FAKE_COST();
	GPU(h, -1);
	if (!s || s->magic != GPM_MAGIC || fd_->mig >= 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!fx_of(g)->gpm || fx_of(g)->gpm_gpu_unsupported)
		return NVML_ERROR_NOT_SUPPORTED;
	s->g = g;
	s->gi = -1;
	s->ns = fx_now_ns();
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t h, unsigned int gi, nvmlGpmSample_t s)
{
	FAKE_COST();
	unsigned n, i;
	const struct fx_inst *l;

	GPU(h, -1);
	if (!s || s->magic != GPM_MAGIC || fd_->mig >= 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!fx_of(g)->gpm || fx_of(g)->gpm_mig_unsupported)
		return NVML_ERROR_NOT_SUPPORTED;
	l = fx_layout(g, &n);
	for (i = 0; i < n && l[i].gi != gi; i++)
		;
	if (!g->nmig || i == n)
		return NVML_ERROR_NOT_FOUND;
	s->g = g;
	s->gi = (int)gi;
	s->ns = fx_now_ns();
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *m)
{
	FAKE_COST();
	const struct fx_gpm *vals = NULL;
	struct fx *x;

	total_calls++;
	if (!inited)
		return NVML_ERROR_UNINITIALIZED;
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (m->version != NVML_GPM_METRICS_GET_VERSION)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if (!m->sample1 || !m->sample2 || m->sample1->magic != GPM_MAGIC || m->sample2->magic != GPM_MAGIC ||
	    !m->sample1->g || m->sample1->g != m->sample2->g || m->sample1->gi != m->sample2->gi ||
	    m->numMetrics > NVML_GPM_METRIC_MAX)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (m->sample2->ns - m->sample1->ns <= 100000000LL) {
		fprintf(stderr, "fake_nvml: nvmlGpmMetricsGet: samples %lld ms apart, GPM needs more than 100\n",
			(m->sample2->ns - m->sample1->ns) / 1000000);
		return NVML_ERROR_INVALID_ARGUMENT;
	}
	if (is_lost(m->sample1->g))
		return NVML_ERROR_GPU_IS_LOST;
	x = fx_of(m->sample1->g);
	if (m->sample1->gi < 0)
		vals = &x->gpm_gpu;
	for (unsigned i = 0; !vals && i < x->ngpm_gi; i++)
		if (x->gpm_gi[i].gi == (unsigned)m->sample1->gi)
			vals = &x->gpm_gi[i];
	for (unsigned i = 0; i < m->numMetrics; i++) {
		int k;

		m->metrics[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
		m->metrics[i].value = 0;
		for (k = 0; k < GM_COUNT && gm_names[k].id != m->metrics[i].metricId; k++)
			;
		if (k < GM_COUNT && vals && (vals->have & (1u << k))) {
			m->metrics[i].nvmlReturn = NVML_SUCCESS;
			m->metrics[i].value = vals->v[k];
		}
	}
	return NVML_SUCCESS;
}
#endif
