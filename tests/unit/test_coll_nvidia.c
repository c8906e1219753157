/* SPDX-License-Identifier: MIT */
/*
 * The NVIDIA collector (monitor/nvidia/coll_nvidia.c) with u64 values at the
 * edges, against the fake libnvidia-ml.so.1 (tests/helpers/fake_nvml.c)
 * that this test compiles with $CC (default cc): 2^63 and 1e19 keep their
 * value (a real, never a negative integer), NVML's "not available"
 * (2^64-1) is left out, and a sum past 2^64 does not wrap. The other NVIDIA
 * cases are in test_nvml.c and tests/integration/nvml.sh.
 *
 * The tests after test_edges: NVML events counted as they come
 * (between and during cycles, two XIDs between polls are two), a GPU lost
 * while the event thread waits, NVLink absent and present, PCIe throughput
 * of 8 GPUs whose call sleeps 20 ms read at once (directly and through the
 * asynchronous fetch and the loop), and the clock-event reasons map.
 * MIG instances appearing, changing and going, GPM metrics (of the GPU and
 * of its instances, supported or not), and a GPU whose GPM gives the PCIe
 * rates not read through the 20 ms PCIe call. Then the slow cadence (energy
 * estimated from power between counter reads and re-anchored, NOT_SUPPORTED
 * asked once, static values read once, PCIe replays and throughput per slow
 * period, counted through the fake's fake_nvml_fn_calls) and the NVML call
 * ledger's table.
 *
 * Nothing sleeps a fixed time: the event tests wait until the fake driver
 * says the event thread has taken what they wrote (fake_nvml_events_pending,
 * _event_waits, _lost_returns), and the GPM tests run on a mock clock
 * (common/timeutil.h): the 100 ms GPM needs between two samples are skipped,
 * on the collector's clock and the fake driver's (fake_nvml_clock_skip).
 *
 * Run from the top of the tree (make check does); elsewhere set ACCEL_TOP.
 */
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../monitor/core/collector.h"
#include "../../monitor/core/energy.h"
#include "../../monitor/core/loop.h"
#include "../../monitor/host/host.h"
#include "../../monitor/nvidia/nvidia_dev.h" /* the table of reads (test_table) */
#include "tap.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The collector driven here (collectors.c registers it). */
extern const struct collector_ops coll_nvidia_ops;

#include "nvml_cfg.h"

static char dir[64];
static char lib[160]; /* the fake libnvidia-ml.so.1 */

/* ---- the mock clock and the fake driver's counters ------------------------------------------------- */

static _Atomic int64_t skipped_ns; /* what skip_ms skipped so far */

static int64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* The mock clock, in place of timeutil.c's for every module of this test: the real one plus what was skipped. */
int64_t clock_mono_ns(void)
{
	return real_ns() + skipped_ns;
}

/* The fake library's symbol name, while the collector has the library loaded (*h: dlclose it), or NULL. */
static void *fake_sym(const char *name, void **h)
{
	*h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
	return *h ? dlsym(*h, name) : NULL;
}

/* A count of the fake driver's (fake_nvml_event_waits, _lost_returns, _events_pending); 0 when not loaded. */
static unsigned long fake_count(const char *name)
{
	void *h, *p = fake_sym(name, &h);
	unsigned long (*fn)(void), n = 0;

	if (p) {
		memcpy(&fn, &p, sizeof(fn));
		n = fn();
	}
	if (h)
		dlclose(h);
	return n;
}

/*
 * Time passes by ms at once, for the collector and for the fake driver's GPM samples. Only the GPM tests,
 * the last ones, skip: a wait the collector makes on an absolute CLOCK_MONOTONIC deadline (the PCIe pool's)
 * would last the skipped time longer, and none of theirs times out.
 */
static void skip_ms(int ms)
{
	void *h, *p = fake_sym("fake_nvml_clock_skip", &h);
	void (*fn)(long long);

	skipped_ns += ms * NS_PER_MS;
	if (p) {
		memcpy(&fn, &p, sizeof(fn));
		fn(ms * NS_PER_MS);
	}
	if (h)
		dlclose(h);
}

/* Wait (1 ms steps, 5 s at most, real time) until fake_count(name) >= n. 0, or -1 when it never came. */
static int wait_count(const char *name, unsigned long n)
{
	int64_t end = real_ns() + 5 * NS_PER_S;
	struct timespec ms = { 0, 1000000L };

	while (fake_count(name) < n) {
		if (real_ns() > end) {
			printf("# %s stayed under %lu for 5 s\n", name, n);
			return -1;
		}
		nanosleep(&ms, NULL);
	}
	return 0;
}

/*
 * Every event written so far was returned by nvmlEventSetWait, and the event thread has come back for the
 * next one (a wait that began after the one that returned the last event): each event is then in the
 * collector's pipe, taken at the next collect.
 */
static void handed_over(void)
{
	int64_t end = real_ns() + 5 * NS_PER_S;
	struct timespec ms = { 0, 1000000L };

	while (fake_count("fake_nvml_events_pending") && real_ns() < end)
		nanosleep(&ms, NULL);
	wait_count("fake_nvml_event_waits", fake_count("fake_nvml_event_waits") + 1);
}

/*
 * The event thread got GPU_IS_LOST n times in all, made a new set, and one wait on that set has ended
 * (the thread rebuilds the set only for a new streak of errors: the next loss must come after a wait
 * that did not fail).
 */
static void lost_handled(unsigned long n)
{
	wait_count("fake_nvml_lost_returns", n);
	wait_count("fake_nvml_event_waits", fake_count("fake_nvml_event_waits") + 2);
}

static struct cfg_group groups[] = {
	{ GROUP_DEVICE_INFO, 100 },
	{ GROUP_DEVICE_MEMORY, 100 },
	{ GROUP_DEVICE_ERRORS, 100 },
};
static struct cfg_device dev = { .type = "nvidia", .select_all = 1, .period_ms = 100, .groups = groups,
				 .ngroups = 3 };

/*
 * Cycle n's time: n x 100 ms after cyc_base. 0 for most tests; those that integrate the power read at open set
 * it to the open's time (the mock clock), as a running monitor's cycles come after its open.
 */
static int64_t cyc_base;

/* The cycle's attribution phase, as the monitor runs it after the device groups. */
static void attribute(void *st)
{
	struct energy_obs_list l = { 0 };

	coll_nvidia_ops.energy(st, &l);
	host_energy_attribute(NULL, &l);
	energy_obs_free(&l);
}

/* collect()'s returns: 0, -1, and those that disagreed with the group's error. */
static unsigned collects[3];

static json_t *collect(void *st, enum group_id id, int n)
{
	struct cycle cy = { .mono_ns = cyc_base + (int64_t)n * 100 * NS_PER_MS };
	json_t *g;
	const char *e;
	int rc;

	snprintf(cy.iso, sizeof(cy.iso), "2026-01-02T03:04:05.%03dZ", n % 1000);
	g = group_new(0.1, cy.iso);
	rc = coll_nvidia_ops.collect(st, &cy, &id, 1, g);
	e = json_string_value(json_object_get(g, "error"));
	/*
	 * The monitor takes the self-timing's success from collect's return, not
	 * from the JSON: counted here (some tests collect until a condition
	 * holds), checked once at the end.
	 */
	collects[rc != 0]++;
	if ((rc != 0) != (e && *e) && !ok(0, "nvidia %s: collect returns %d, the group's error is \"%.60s\"",
					    group_name(id), rc, e ? e : ""))
		collects[2]++;
	attribute(st);
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

	is_int(coll_nvidia_ops.open(&env, &(struct coll_target){ .dev = &dev }, &st), 0, "open");
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

/* ---- Events, NVLink, the PCIe pool, clock-event reasons ---------------------- */

static struct cfg_group all_groups[] = {
	{ GROUP_DEVICE_INFO, 100 },    { GROUP_DEVICE_UTILIZATION, 100 }, { GROUP_DEVICE_MEMORY, 100 },
	{ GROUP_DEVICE_THERMAL, 100 }, { GROUP_DEVICE_POWER, 100 },       { GROUP_DEVICE_CLOCKS, 100 },
	{ GROUP_DEVICE_ERRORS, 100 },
};
static struct cfg_device all_dev = { .type = "nvidia", .select_all = 1, .period_ms = 100, .groups = all_groups,
				     .ngroups = 7 };

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static double now_ms(void)
{
	return (double)clock_mono_ns() / 1e6;
}

/* Write text to DIR/name (appending with append), the path into path. */
static void put_file(const char *name, const char *text, int append, char *path, size_t size)
{
	FILE *f;

	snprintf(path, size, "%s/%s", dir, name);
	f = fopen(path, append ? "a" : "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		printf("Bail out! write %s\n", path);
		exit(2);
	}
}

static void *open_script_dev(const char *text, const struct mon_env *env, struct cfg_device *d);

/* The script text as FAKE_NVML_SCRIPT ("@" in it becomes the work directory), then the collector opened. */
static void *open_script(const char *text, const struct mon_env *env)
{
	return open_script_dev(text, env, &all_dev);
}

/* The same with the devices block d. */
static void *open_script_dev(const char *text, const struct mon_env *env, struct cfg_device *d)
{
	char path[160], buf[2048], *o = buf;
	void *st = NULL;

	for (const char *p = text; *p && o < buf + sizeof(buf) - 80; p++)
		if (*p == '@')
			o += snprintf(o, 80, "%s", dir);
		else
			*o++ = *p;
	*o = 0;
	put_file("g.nvml", buf, 0, path, sizeof(path));
	setenv("FAKE_NVML_SCRIPT", path, 1);
	if (coll_nvidia_ops.open(env, &(struct coll_target){ .dev = d }, &st))
		printf("# open failed: %s\n", coll_nvidia_ops.error(st));
	/*
	 * The event thread registers the GPUs before its first wait (off the first report): a test that writes
	 * events or loses a GPU waits until it waits.
	 */
	wait_count("fake_nvml_event_waits", fake_count("fake_nvml_event_waits") + 1);
	return st;
}

/* The value at a dotted path under devices.IDX (borrowed), NULL when absent. */
static json_t *at_dev(json_t *g, const char *idx, const char *path)
{
	char buf[128], *save = NULL;
	json_t *o = json_object_get(json_object_get(g, "devices"), idx);

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
		o = json_object_get(o, k);
	return o;
}

static double num_dev(json_t *g, const char *idx, const char *path)
{
	json_t *v = at_dev(g, idx, path);

	return json_is_number(v) ? json_number_value(v) : -12345.0;
}

/* Two XIDs between polls are two; ECC events; counts start afresh each period, codes seen stay. */
static void test_events_between_cycles(void)
{
	struct mon_env env = { 0 };
	char ev[160];
	void *st;
	json_t *g;

	put_file("ev", "", 0, ev, sizeof(ev));
	st = open_script("events_file @/ev\ngpu\ngpu\n", &env);
	g = collect(st, GROUP_DEVICE_ERRORS, 1);
	ok(json_is_object(at_dev(g, "0", "xid_errors")) && !json_object_size(at_dev(g, "0", "xid_errors")),
	   "events: no XID yet: xid_errors is {}");
	ok(!at_dev(g, "0", "last_xid"), "events: no last_xid before the first XID");
	is_double(num_dev(g, "0", "events.double_bit_ecc"), 0, 0, "events: double_bit_ecc 0");
	is_double(num_dev(g, "0", "events.gpu_lost"), 0, 0, "events: gpu_lost 0");
	json_decref(g);
	put_file("ev", "xid 0 79\nxid 0 79\nxid 1 13\ndbe 1\nsbe 0\nclock 0\n", 1, ev, sizeof(ev));
	handed_over();
	g = collect(st, GROUP_DEVICE_ERRORS, 2);
	is_double(num_dev(g, "0", "xid_errors.79"), 2, 0, "events: two XIDs 79 between two polls are two");
	is_double(num_dev(g, "0", "last_xid"), 79, 0, "events: last_xid 79");
	is_int((int)json_array_size(at_dev(g, "0", "xid_events")), 2, "events: both XIDs listed with their times");
	is_double(json_number_value(json_object_get(json_array_get(at_dev(g, "0", "xid_events"), 1), "xid")), 79, 0,
		  "events: the listed XID's code");
	ok(json_is_string(json_object_get(json_array_get(at_dev(g, "0", "xid_events"), 0), "time")),
	   "events: the listed XID's time");
	ok(json_is_string(at_dev(g, "0", "last_xid_time")) &&
		   strlen(json_string_value(at_dev(g, "0", "last_xid_time"))) == 24,
	   "events: last_xid_time is an ISO 8601 time");
	is_double(num_dev(g, "1", "xid_errors.13"), 1, 0, "events: GPU 1's XID 13 is its own");
	ok(!at_dev(g, "1", "xid_errors.79"), "events: GPU 1 has no XID 79");
	is_double(num_dev(g, "1", "events.double_bit_ecc"), 1, 0, "events: a double-bit ECC event");
	is_double(num_dev(g, "0", "events.single_bit_ecc"), 1, 0, "events: a single-bit ECC event");
	is_double(num_dev(g, "0", "events.clock_change"), 1, 0, "events: a clock-change event");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_ERRORS, 3);
	is_double(num_dev(g, "0", "xid_errors.79"), 0, 0, "events: the next period counts 0 for XID 79 (the key stays)");
	is_double(num_dev(g, "0", "last_xid"), 79, 0, "events: last_xid stays");
	ok(!at_dev(g, "0", "xid_events"), "events: a quiet period lists no XID");
	is_double(num_dev(g, "1", "events.double_bit_ecc"), 0, 0, "events: the ECC count starts afresh");
	json_decref(g);
	coll_nvidia_ops.close(st);
}

/* A burst that spans many cycles: every event is counted once, in one period or the next. */
static void test_events_during_cycles(void)
{
	struct mon_env env = { 0 };
	char ev[160];
	double sum = 0, t0;
	pid_t pid;
	void *st;
	int n = 10, status = 0;

	put_file("ev", "", 0, ev, sizeof(ev));
	st = open_script("events_file @/ev\ngpu\n", &env);
	pid = fork();
	if (pid == 0) { /* 300 XIDs, one every millisecond or so, while the parent collects */
		for (int i = 0; i < 300; i++) {
			FILE *f = fopen(ev, "a");

			if (!f)
				_exit(1);
			fprintf(f, "xid 0 %d\n", 40 + i % 3);
			fclose(f);
			sleep_ms(1);
		}
		_exit(0);
	}
	/* Collect every 3 ms while the writer writes, then once more after the thread took the last ones. */
	t0 = now_ms();
	for (int last = 0; last < 2 && now_ms() - t0 < 10000;) {
		json_t *g = collect(st, GROUP_DEVICE_ERRORS, n++), *x = at_dev(g, "0", "xid_errors"), *v;
		const char *k;

		json_object_foreach(x, k, v)
			sum += json_number_value(v);
		json_decref(g);
		if (last || (pid > 0 && waitpid(pid, &status, WNOHANG) == pid)) {
			pid = 0;
			handed_over();
			last++;
		}
		sleep_ms(3);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "events: the writer wrote its 300 XIDs");
	is_double(sum, 300, 0, "events: 300 XIDs written during cycles are counted 300 times over the periods");
	coll_nvidia_ops.close(st);
}

/* Counts of the fake's "event_waits N lost_returns M" line in FAKE_NVML_STATS (written at nvmlShutdown). */
static void read_waits(const char *stats, unsigned long *waits, unsigned long *lost)
{
	char line[256];
	FILE *f = fopen(stats, "r");

	*waits = *lost = 0;
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "event_waits %lu lost_returns %lu", waits, lost);
	if (f)
		fclose(f);
}

/* The GPU is lost while the thread waits: it says so once, does not spin, counts one loss, and events resume. */
static void test_lost_during_wait(void)
{
	struct mon_env env = { 0 };
	char ev[160], lost[160], stats[160];
	unsigned long waits, lost_n;
	double t0 = now_ms(), took;
	void *st;
	json_t *g;

	put_file("ev", "", 0, ev, sizeof(ev));
	snprintf(lost, sizeof(lost), "%s/lost", dir);
	snprintf(stats, sizeof(stats), "%s/stats", dir);
	unlink(lost);
	unlink(stats);
	setenv("FAKE_NVML_STATS", stats, 1);
	st = open_script("events_file @/ev\ngpu\nlost_file @/lost\ngpu\n", &env);
	g = collect(st, GROUP_DEVICE_ERRORS, 1);
	is_str(json_string_value(at_dev(g, "0", "error")), "", "lost: GPU 0 answers first");
	json_decref(g);
	put_file("lost", "", 0, lost, sizeof(lost)); /* lost while the thread is in nvmlEventSetWait */
	lost_handled(1);
	put_file("ev", "xid 1 48\n", 1, ev, sizeof(ev)); /* the other GPU's events still arrive */
	handed_over();
	g = collect(st, GROUP_DEVICE_ERRORS, 2);
	ok(strstr(json_string_value(at_dev(g, "0", "error")), "lost") != NULL, "lost: GPU 0's entry says it is lost");
	is_double(num_dev(g, "1", "xid_errors.48"), 1, 0, "lost: GPU 1's XID arrives while GPU 0 is lost");
	json_decref(g);
	unlink(lost);
	g = collect(st, GROUP_DEVICE_ERRORS, 3);
	is_str(json_string_value(at_dev(g, "0", "error")), "", "lost: GPU 0 answers again");
	is_double(num_dev(g, "0", "events.gpu_lost"), 1, 0, "lost: one loss, counted once");
	json_decref(g);
	put_file("ev", "xid 0 31\n", 1, ev, sizeof(ev));
	handed_over();
	g = collect(st, GROUP_DEVICE_ERRORS, 4);
	is_double(num_dev(g, "0", "xid_errors.31"), 1, 0, "lost: registered again, GPU 0's next XID is counted");
	is_double(num_dev(g, "0", "events.gpu_lost"), 0, 0, "lost: no loss this period");
	json_decref(g);
	coll_nvidia_ops.close(st);
	took = now_ms() - t0;
	unsetenv("FAKE_NVML_STATS");
	read_waits(stats, &waits, &lost_n);
	ok(lost_n >= 1, "lost: the wait returned GPU_IS_LOST (%lu times)", lost_n);
	/* One wait per 200 ms of back-off at most while lost: a thread that spun would make one every few µs. */
	ok(lost_n <= 10, "lost: the thread backs off instead of spinning (%lu waits returned lost)", lost_n);
	/* A wait ends after 200 ms or with an event (a few here); a thread that spun would wait every 2 ms. */
	ok(waits < 20 + took / 20, "lost: %lu waits in %.0f ms", waits, took);
}

/* Two GPUs lost one after the other (a quiet wait between): the third GPU's events still arrive. */
static void test_lost_twice(void)
{
	struct mon_env env = { 0 };
	char ev[160], l0[160], l1[160];
	void *st;
	json_t *g;

	put_file("ev", "", 0, ev, sizeof(ev));
	snprintf(l0, sizeof(l0), "%s/lost0", dir);
	snprintf(l1, sizeof(l1), "%s/lost1", dir);
	unlink(l0);
	unlink(l1);
	st = open_script("events_file @/ev\ngpu\nlost_file @/lost0\ngpu\nlost_file @/lost1\ngpu\n", &env);
	put_file("lost0", "", 0, l0, sizeof(l0));
	lost_handled(1); /* the thread makes a new set without GPU 0, then waits quietly */
	put_file("lost1", "", 0, l1, sizeof(l1));
	lost_handled(2);
	put_file("ev", "xid 2 94\n", 1, ev, sizeof(ev));
	handed_over();
	g = collect(st, GROUP_DEVICE_ERRORS, 1);
	is_double(num_dev(g, "2", "xid_errors.94"), 1, 0, "lost twice: GPU 2's XID arrives while GPUs 0 and 1 are lost");
	json_decref(g);
	unlink(l0);
	unlink(l1);
	coll_nvidia_ops.close(st);
}

/* NVLink: absent on one GPU, present (one link down) on another: state, throughput, error increments. */
static void test_nvlink(void)
{
	struct mon_env env = { 0 };
	void *st = open_script("gpu\ngpu\nnvlink 2 100 50\nnvlink_down 1\nnvlink_errors 0 1 2 3 4 1\n", &env);
	json_t *g;

	g = collect(st, GROUP_DEVICE_UTILIZATION, 1);
	json_decref(g);
	g = collect(st, GROUP_DEVICE_UTILIZATION, 2);
	ok(!at_dev(g, "0", "nvlink"), "nvlink: a GPU without NVLink has no \"nvlink\"");
	ok(json_is_true(at_dev(g, "1", "nvlink.0.active")), "nvlink: link 0 active");
	ok(json_is_false(at_dev(g, "1", "nvlink.1.active")), "nvlink: link 1 inactive");
	is_double(num_dev(g, "1", "nvlink.0.tx_bytes_per_second"), 100 * 1024 / 0.1, 1e-6,
		  "nvlink: 100 KiB in 0.1 s sent");
	is_double(num_dev(g, "1", "nvlink.1.rx_bytes_per_second"), 50 * 1024 / 0.1, 1e-6,
		  "nvlink: 50 KiB in 0.1 s received");
	ok(!at_dev(g, "1", "nvlink.2"), "nvlink: only the GPU's links");
	json_decref(g);
	g = collect(st, GROUP_DEVICE_ERRORS, 2);
	ok(!at_dev(g, "0", "nvlink_errors"), "nvlink: no \"nvlink_errors\" without NVLink");
	is_double(num_dev(g, "1", "nvlink_errors.0.replay"), 1, 0, "nvlink: link 0's replays over the period");
	is_double(num_dev(g, "1", "nvlink_errors.0.crc_data"), 1, 0, "nvlink: link 0's CRC data errors over the period");
	is_double(num_dev(g, "1", "nvlink_errors.1.crc_flit"), 0, 0, "nvlink: link 1 had none");
	json_decref(g);
	coll_nvidia_ops.close(st);
}

#define PCIE_8 "gpu\npcie 1000 2000\npcie_delay 20\n"

/* 8 GPUs whose PCIe call sleeps 20 ms: one cycle takes about one call, not 16 (collect without a fetch). */
static void test_pcie_parallel(void)
{
	struct mon_env env = { 0 };
	void *st = open_script(PCIE_8 PCIE_8 PCIE_8 PCIE_8 PCIE_8 PCIE_8 PCIE_8 PCIE_8, &env);
	double t0, took;
	json_t *g;
	int all = 1;

	g = collect(st, GROUP_DEVICE_UTILIZATION, 1);
	json_decref(g);
	t0 = now_ms();
	g = collect(st, GROUP_DEVICE_UTILIZATION, 2);
	took = now_ms() - t0;
	for (int i = 0; i < 8; i++) {
		char k[4];

		snprintf(k, sizeof(k), "%d", i);
		all &= num_dev(g, k, "pcie_tx_bytes_per_second") == 1024000 &&
		       num_dev(g, k, "pcie_rx_bytes_per_second") == 2048000;
	}
	ok(all, "pcie: all 8 GPUs' TX and RX read");
	ok(took < 150, "pcie: 16 calls of 20 ms in %.1f ms (serially: 320 ms)", took);
	json_decref(g);
	coll_nvidia_ops.close(st);
}

/* The same through the asynchronous fetch and the loop: answered ahead, then collect does not wait. */
static void test_pcie_fetch(void)
{
	struct loop *loop = loop_new();
	struct mon_env env = { .loop = loop };
	void *st = open_script(PCIE_8 PCIE_8 PCIE_8 PCIE_8 PCIE_8 PCIE_8 PCIE_8 PCIE_8, &env);
	/* monitor.c's states: 1 waiting, 2 answered */
	struct mon_fetch f = { .loop = loop, .id = GROUP_DEVICE_UTILIZATION, .state = 1 };
	double t0, fetched, took;
	json_t *g;

	ok(coll_nvidia_ops.fetch != NULL, "fetch: the NVIDIA collector has an asynchronous fetch");
	f.started = clock_mono_ns();
	f.deadline = f.started + NS_PER_S;
	t0 = now_ms();
	is_int(coll_nvidia_ops.fetch(st, &f), 0, "fetch: device_utilization's fetch starts");
	ok(f.state == 1, "fetch: it is not answered at once (the calls take 20 ms)");
	while (f.state != 2 && now_ms() - t0 < 2000)
		loop_run_once(loop, clock_mono_ns() + 100 * NS_PER_MS, NULL);
	fetched = now_ms() - t0;
	ok(f.state == 2, "fetch: answered through the loop in %.1f ms", fetched);
	ok(fetched < 150, "fetch: the 16 calls ran at once (%.1f ms)", fetched);
	t0 = now_ms();
	g = collect(st, GROUP_DEVICE_UTILIZATION, 1);
	took = now_ms() - t0;
	ok(took < 10, "fetch: the due collect does not wait (%.2f ms)", took);
	is_double(num_dev(g, "7", "pcie_rx_bytes_per_second"), 2048000, 0, "fetch: GPU 7's value is in the report");
	json_decref(g);
	f.state = 1;
	coll_nvidia_ops.fetch(st, &f);
	ok(f.state == 1, "fetch: another one in flight");
	coll_nvidia_ops.abandon(st, &f); /* late: the monitor gives up; closing still joins */
	coll_nvidia_ops.close(st);
	is_int((int)loop_count(loop), 0, "fetch: closing stops every watch");
	loop_free(loop);
}

/* One GPU's call outlasts the report's due time: the fetch is answered then, only that GPU's fields are left out. */
static void test_pcie_hung(void)
{
	struct loop *loop = loop_new();
	struct mon_env env = { .loop = loop };
	void *st = open_script("gpu\npcie 1 2\npcie_delay 700\ngpu\npcie 1000 2000\npcie_delay 20\n", &env);
	struct mon_fetch f = { .loop = loop, .id = GROUP_DEVICE_UTILIZATION, .state = 1 };
	double t0, fetched;
	json_t *g;

	f.started = clock_mono_ns();
	f.deadline = f.started + 200 * NS_PER_MS;
	t0 = now_ms();
	coll_nvidia_ops.fetch(st, &f);
	while (f.state != 2 && now_ms() - t0 < 2000)
		loop_run_once(loop, clock_mono_ns() + 50 * NS_PER_MS, NULL);
	fetched = now_ms() - t0;
	ok(f.state == 2 && fetched > 150 && fetched < 400, "hung: answered at the due time (%.0f ms), not after 700 ms",
	   fetched);
	g = collect(st, GROUP_DEVICE_UTILIZATION, 1);
	is_str(json_string_value(json_object_get(g, "error")), "", "hung: the group reports");
	ok(!at_dev(g, "0", "pcie_tx_bytes_per_second"), "hung: GPU 0's PCIe fields are left out");
	is_double(num_dev(g, "1", "pcie_tx_bytes_per_second"), 1024000, 0, "hung: GPU 1's are there");
	json_decref(g);
	f.state = 1;
	f.deadline = clock_mono_ns() + 200 * NS_PER_MS;
	coll_nvidia_ops.fetch(st, &f);
	t0 = now_ms();
	while (f.state != 2 && now_ms() - t0 < 2000)
		loop_run_once(loop, clock_mono_ns() + 50 * NS_PER_MS, NULL);
	fetched = now_ms() - t0;
	ok(f.state == 2 && fetched < 150, "hung: the next fetch, GPU 0's call still in the driver: answered when "
					  "GPU 1's calls return (%.0f ms)", fetched);
	g = collect(st, GROUP_DEVICE_UTILIZATION, 2);
	ok(!at_dev(g, "0", "pcie_tx_bytes_per_second"), "hung: GPU 0 has no second call stacked, no fields");
	is_double(num_dev(g, "1", "pcie_rx_bytes_per_second"), 2048000, 0, "hung: GPU 1 is read as usual");
	json_decref(g);
	sleep_ms(600); /* GPU 0's late call returns: its result is dropped; the next batch reads it again */
	f.state = 1;
	f.deadline = clock_mono_ns() + 900 * NS_PER_MS;
	coll_nvidia_ops.fetch(st, &f);
	t0 = now_ms();
	while (f.state != 2 && now_ms() - t0 < 2000)
		loop_run_once(loop, clock_mono_ns() + 50 * NS_PER_MS, NULL);
	g = collect(st, GROUP_DEVICE_UTILIZATION, 3);
	is_double(num_dev(g, "0", "pcie_tx_bytes_per_second"), 1024, 0, "hung: GPU 0 is read again once it answers");
	json_decref(g);
	coll_nvidia_ops.close(st); /* joins the worker once its call returns */
	is_int((int)loop_count(loop), 0, "hung: closing stops every watch and timer");
	loop_free(loop);
}

/*
 * F's MIG instances and G's PCIe pool together: the workers call NVML while
 * the producer's thread walks MIG layouts; every device_memory report taken
 * while a batch runs shows each GPU's whole layout, and the batches answer.
 */
#define MIG_PCIE "gpu\npcie 1 2\npcie_delay 1\nmig_file @/race\n"
static void test_pcie_mig_race(void)
{
	struct loop *loop = loop_new();
	struct mon_env env = { .loop = loop };
	char race[160];
	void *st;
	int bad = 0, reports = 0, answered = 0, n = 500;
	double t0;

	put_file("race", "3g.40gb 2 0 42412802048 38797312\n1g.10gb 9 0 10468982784 13631488\n", 0, race,
		 sizeof(race));
	st = open_script(MIG_PCIE MIG_PCIE MIG_PCIE MIG_PCIE MIG_PCIE MIG_PCIE MIG_PCIE MIG_PCIE, &env);
	/* 500 ms, and on a slow machine on until 11 batches have answered (10 s at most). */
	t0 = now_ms();
	while ((now_ms() - t0 < 500 || answered <= 10) && now_ms() - t0 < 10000) {
		struct mon_fetch f = { .loop = loop, .id = GROUP_DEVICE_UTILIZATION, .state = 1 };
		json_t *g;

		f.started = clock_mono_ns();
		f.deadline = f.started + 200 * NS_PER_MS;
		coll_nvidia_ops.fetch(st, &f);
		while (f.state != 2 && now_ms() - t0 < 12000) {
			g = collect(st, GROUP_DEVICE_MEMORY, n++);
			bad += json_object_size(json_object_get(g, "devices")) != 24; /* 8 GPUs, 2 instances each */
			reports++;
			json_decref(g);
			loop_run_once(loop, clock_mono_ns() + NS_PER_MS, NULL);
		}
		answered += f.state == 2;
		json_decref(collect(st, GROUP_DEVICE_UTILIZATION, n++));
	}
	ok(answered > 10, "race: %d PCIe batches answered during MIG reads", answered);
	ok(reports > 0 && bad == 0, "race: %d of %d device_memory reports taken during PCIe batches lack an instance",
	   bad, reports);
	coll_nvidia_ops.close(st);
	loop_free(loop);
	unlink(race);
}

/* Clock-event reasons: every known name 0/1, and the raw mask with unknown bits. */
static void test_reasons(void)
{
	struct mon_env env = { 0 };
	void *st = open_script("gpu\nreasons 0x10044\n", &env);
	json_t *g = collect(st, GROUP_DEVICE_THERMAL, 1);

	is_double(num_dev(g, "0", "clock_event_reasons.sw_power_cap"), 1, 0, "reasons: sw_power_cap 1");
	is_double(num_dev(g, "0", "clock_event_reasons.hw_thermal_slowdown"), 1, 0, "reasons: hw_thermal_slowdown 1");
	is_double(num_dev(g, "0", "clock_event_reasons.gpu_idle"), 0, 0, "reasons: gpu_idle 0");
	is_int((int)json_object_size(at_dev(g, "0", "clock_event_reasons")), 9, "reasons: every known reason");
	is_double(num_dev(g, "0", "clock_event_reasons_mask"), 0x10044, 0, "reasons: the raw mask, unknown bits too");
	json_decref(g);
	coll_nvidia_ops.close(st);
}

/* ---- the slow cadence and static values ------------------------------------------------------------ */

/* Every device group with "slow_period": "1s" (main sets it): cycles here are 100 ms apart. */
static struct cfg_device cad_dev = { .type = "nvidia", .select_all = 1, .period_ms = 100, .groups = all_groups,
				     .ngroups = 7 };

/* How many times the fake library's entry point fn was called (0 when it is not loaded). */
static unsigned long fn_calls(const char *fn)
{
	void *h, *p = fake_sym("fake_nvml_fn_calls", &h);
	unsigned long (*f)(const char *), n = 0;

	if (p) {
		memcpy(&f, &p, sizeof(f));
		n = f(fn);
	}
	if (h)
		dlclose(h);
	return n;
}

/* Group id at cycle n; field k of GPU 0 (-12345 when absent). */
static double cyc_num(void *st, enum group_id id, int n, const char *k)
{
	json_t *g = collect(st, id, n);
	double v = num_dev(g, "0", k);

	json_decref(g);
	return v;
}

/*
 * The energy counter, read once per slow period; in between, the power
 * readings integrated (100 W over 100 ms: 10 J a cycle); each read
 * re-anchors the total to the counter, so the increases add up to it. The
 * open reads no counter: until the counter's first read, in the GPU's slot
 * (one GPU, a slow period of 1 s: half a period after the first cycle,
 * cycle 6), the energy comes from the power alone and there is no total.
 */
static void test_energy_estimate(void)
{
	static const char *const E = "nvmlDeviceGetTotalEnergyConsumption";
	struct mon_env env = { 0 };
	void *st;
	double sum = 0, v[24];
	int total_from = 0;
	unsigned long before = fn_calls(E);

	/* The counter gains 120 J at each read: more than the estimate (100 J a slow period). */
	st = open_script_dev("gpu\npower 100000\nenergy 1000000 120000\n", &env, &cad_dev);
	cyc_base = clock_mono_ns();
	is_int((int)(fn_calls(E) - before), 0, "energy: the open reads no counter");
	for (int n = 1; n <= 17; n++) {
		json_t *g = collect(st, GROUP_DEVICE_POWER, n);

		v[n] = num_dev(g, "0", "energy_joules");
		if (n >= 7 && n <= 16)
			sum += v[n];
		if (!total_from && at_dev(g, "0", "energy_total_joules"))
			total_from = n;
		if (n == 6)
			is_double(num_dev(g, "0", "energy_total_joules"), 1000, 1e-9, "energy: the first read, the total");
		if (n == 16)
			is_double(num_dev(g, "0", "energy_total_joules"), 1120, 1e-9,
				  "energy: at the second read the total is the counter's (1000 + 120 J)");
		json_decref(g);
		if (n == 1)
			is_int((int)(fn_calls(E) - before), 0, "energy: the first report reads no counter");
	}
	/* from the power read at open: 100 W over 100 ms, and the time the open took before cyc_base */
	ok(v[1] >= 10 - 1e-9 && v[1] < 600, "energy: the first period from the power read at open (%g J)", v[1]);
	is_double(v[5], 10, 1e-9, "energy: from power until the counter's first read");
	is_int(total_from, 6, "energy: the total from the counter's first read (cycle 6) on");
	is_double(v[6], 10, 1e-9, "energy: the first read's period from power too");
	is_double(v[7], 10, 1e-9, "energy: between reads, 100 W over 100 ms");
	is_double(v[15], 10, 1e-9, "energy: ... until the period is over");
	is_double(v[16], 30, 1e-9, "energy: the read re-anchors (1120 - 1090 J estimated so far)");
	is_double(v[17], 10, 1e-9, "energy: estimated again");
	is_double(sum, 120, 1e-9, "energy: the increases between two reads add up to the counter's");
	is_int((int)(fn_calls(E) - before), 2, "energy: the counter read twice (cycles 6 and 16)");
	coll_nvidia_ops.close(st);

	/* The counter gains 50 J a read: the estimate runs ahead, the total holds until the counter catches up. */
	st = open_script_dev("gpu\npower 100000\nenergy 1000000 50000\n", &env, &cad_dev);
	cyc_base = clock_mono_ns();
	for (int n = 1; n <= 21; n++)
		v[n] = cyc_num(st, GROUP_DEVICE_POWER, n, "energy_joules");
	is_double(v[16], 0, 1e-9, "energy ahead: the read gives no increase (the counter is 40 J behind)");
	is_double(v[20], 0, 1e-9, "energy ahead: the next estimates pay the 40 J back");
	is_double(v[21], 10, 1e-9, "energy ahead: then count again");
	ok(cyc_num(st, GROUP_DEVICE_POWER, 22, "energy_total_joules") >= 1090, "energy ahead: the total never goes back");
	coll_nvidia_ops.close(st);
	cyc_base = 0;

	/* Without a power reading there is nothing to estimate from: the counter at open and every cycle. */
	before = fn_calls(E);
	st = open_script_dev("gpu\nenergy 1000000 5000\nunsupported power\n", &env, &cad_dev);
	for (int n = 1; n <= 4; n++)
		v[n] = cyc_num(st, GROUP_DEVICE_POWER, n, "energy_joules");
	is_double(v[1], 5, 1e-9, "energy without power: the first period's increase (baseline at open)");
	is_double(v[4], 5, 1e-9, "energy without power: the counter's increase");
	is_int((int)(fn_calls(E) - before), 5, "energy without power: read at open and every cycle");
	coll_nvidia_ops.close(st);
}

/* ---- the energy counter's cadence: the estimate's error against the true counter ---------------------- */

/* GPU i's energy counter now (J), as the fake driver keeps it, without an NVML call (fake_nvml_energy). */
static double true_j(unsigned i)
{
	void *h, *p = fake_sym("fake_nvml_energy", &h);
	unsigned long long (*fn)(unsigned), mj = 0;

	if (p) {
		memcpy(&fn, &p, sizeof(fn));
		mj = fn(i);
	}
	if (h)
		dlclose(h);
	return (double)mj / 1000.0;
}

/* device_power; device_errors for the event thread open_script_dev waits for */
static struct cfg_group power_group[] = { { GROUP_DEVICE_POWER, 1000 }, { GROUP_DEVICE_ERRORS, 1000 } };
static struct cfg_device tr_dev = { .type = "nvidia", .select_all = 1, .period_ms = 1000, .groups = power_group,
				    .ngroups = 2 };

/*
 * A varying load, sampled once a second (instantaneous readings; the
 * counter is the true power's integral): 100 W, a step to 600 W at 40.2 s,
 * a ramp down to 150 W from 90 s to 150 s, 700 W from 180.3 s to 200.7 s,
 * then 100 W. The trapezoids are exact on the ramp (its knots fall on
 * readings) and miss a step by (1/2 - its place in the second) x its
 * height: -150 J, -110 J and -120 J.
 */
#define TRACE_SCRIPT                                                                                              \
	"gpu\nenergy 1000000 0\nproc 100 1000\nproc 200 3000\n"                                                   \
	"power_trace 1000 0:100000 40200:100000 40200:600000 90000:600000 150000:150000 180300:150000 "           \
	"180300:700000 200700:700000 200700:100000\n"
#define TRACE_CYCLES 240

/* What energy_trace measured over TRACE_CYCLES cycles 1 s apart. */
struct trace_err {
	double total_j;  /* the most |energy_total_joules - the counter| */
	double period_j; /* the most |energy_joules - the counter's increase over the period| */
	double drift_j;  /* |the energy_joules summed from the first counter read to the last - the counter's| */
	double split_j;  /* the most |processes' joules + idle_energy_joules - energy_joules| */
	int reads;       /* counter reads */
	int off_at_read; /* cycles with a counter read whose total was not the counter's */
};

/* Run TRACE_SCRIPT with "energy_period": every (NULL: the default) and measure the estimate's error. */
static void energy_trace(const char *every, struct trace_err *te)
{
	static const char *const E = "nvmlDeviceGetTotalEnergyConsumption";
	struct mon_env env = { 0 };
	double c_prev = 0, first_c = 0, sum = 0, last_sum = 0, last_c = 0;
	int anchored = 0;
	unsigned long calls;
	int64_t base;
	void *st;

	memset(te, 0, sizeof(*te));
	if (nvml_config(&tr_dev, every ? json_pack("{s:s}", "energy_period", every) : json_object()))
		return;
	st = open_script_dev(TRACE_SCRIPT, &env, &tr_dev);
	base = clock_mono_ns();
	for (int n = 1; n <= TRACE_CYCLES; n++) {
		struct cycle cy = { .mono_ns = base + (int64_t)n * NS_PER_S };
		enum group_id id = GROUP_DEVICE_POWER;
		json_t *g = group_new(1, "2026-01-02T03:04:05.000Z"), *procs, *v;
		double c, e, parts, d;
		const char *k;

		calls = fn_calls(E);
		coll_nvidia_ops.collect(st, &cy, &id, 1, g);
		attribute(st);
		c = true_j(0);
		e = num_dev(g, "0", "energy_joules");
		if (n > 1 && (d = fabs(e - (c - c_prev))) > te->period_j)
			te->period_j = d;
		parts = num_dev(g, "0", "idle_energy_joules");
		procs = at_dev(g, "0", "processes");
		json_object_foreach(procs, k, v)
			parts += json_number_value(v);
		if (n > 1 && (d = fabs(parts - e)) > te->split_j)
			te->split_j = d;
		if (at_dev(g, "0", "energy_total_joules")) {
			d = fabs(num_dev(g, "0", "energy_total_joules") - c);
			te->total_j = d > te->total_j ? d : te->total_j;
			if (anchored)
				sum += e;
			if (fn_calls(E) != calls) {
				te->reads++;
				te->off_at_read += d > 1e-6;
				if (!anchored)
					first_c = c;
				anchored = 1;
				last_sum = sum;
				last_c = c;
			}
		}
		c_prev = c;
		json_decref(g);
	}
	te->drift_j = fabs(last_sum - (last_c - first_c));
	coll_nvidia_ops.close(st);
	printf("# energy_period %s: %d counter reads in %d s; the most |total - counter| %.1f J, the most |period "
	       "energy - counter's| %.1f J\n",
	       every ? every : "(default)", te->reads, TRACE_CYCLES, te->total_j, te->period_j);
}

/*
 * The energy counter read every "energy_period" (10 s, the default 60 s,
 * every cycle) under TRACE_SCRIPT's load: the total between reads is off
 * the true counter by the steps the trapezoids missed since the last read
 * (no more than their sum, 380 J), it is the counter's at each read, the
 * increases add up to the counter's (no drift), and the split of each
 * period adds up to its energy.
 */
static void test_energy_trace(void)
{
	static const struct {
		const char *every;
		int reads;       /* in TRACE_CYCLES s */
		double total_j;  /* the most |total - counter| expected: the missed steps between two reads */
	} runs[] = {
		{ "period", TRACE_CYCLES, 0 },
		{ "10s", TRACE_CYCLES / 10, 150 },   /* each step alone in its 10 s */
		{ NULL, TRACE_CYCLES / 60, 230 },    /* 60 s: 180.3 s and 200.7 s's steps between the same reads */
	};

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct trace_err te;
		const char *w = runs[i].every ? runs[i].every : "default";

		char nm[6][96];

		snprintf(nm[0], sizeof(nm[0]), "energy trace (%s): the counter's reads", w);
		snprintf(nm[1], sizeof(nm[1]), "energy trace (%s): the most the total is off the counter", w);
		snprintf(nm[2], sizeof(nm[2]), "energy trace (%s): the total is the counter's at each read", w);
		snprintf(nm[3], sizeof(nm[3]), "energy trace (%s): the increases add up to the counter's", w);
		snprintf(nm[4], sizeof(nm[4]), "energy trace (%s): each period's split adds up to its energy", w);
		energy_trace(runs[i].every, &te);
		is_int(te.reads, runs[i].reads, nm[0]);
		is_double(te.total_j, runs[i].total_j, 1, nm[1]);
		ok(te.total_j <= 380 + 1, "energy trace (%s): never more than the missed steps' sum", w);
		is_int(te.off_at_read, 0, nm[2]);
		is_double(te.drift_j, 0, 1e-6, nm[3]);
		is_double(te.split_j, 0, 1e-6, nm[4]);
	}
	nvml_cfg_free(&tr_dev);
}

/*
 * The plausibility check (energy_counter_step) on the counter's real reads
 * between estimates: the counter goes back 5 J at each read, so its second
 * read (cycle 16) is refused: that period has no energy and the group's
 * error says why; the counter starts afresh there (the total is its
 * reading) and the next periods are estimated from power again.
 */
static void test_energy_refused(void)
{
	struct mon_env env = { 0 };
	void *st = open_script_dev("gpu\npower 100000\nenergy 1000000 -5000\n", &env, &cad_dev);
	json_t *g;

	cyc_base = clock_mono_ns();
	for (int n = 1; n <= 15; n++)
		json_decref(collect(st, GROUP_DEVICE_POWER, n));
	g = collect(st, GROUP_DEVICE_POWER, 16);
	ok(!at_dev(g, "0", "energy_joules"), "refused: the read's period has no energy");
	ok(json_is_string(json_object_get(g, "error")) &&
		   strstr(json_string_value(json_object_get(g, "error")), "energy counter not plausible") &&
		   strstr(json_string_value(json_object_get(g, "error")), "went back"),
	   "refused: the group's error says the counter went back");
	is_double(num_dev(g, "0", "energy_total_joules"), 995, 1e-9, "refused: the counter starts afresh at its reading");
	json_decref(g);
	is_double(cyc_num(st, GROUP_DEVICE_POWER, 17, "energy_joules"), 10, 1e-9, "refused: then estimated from power");
	coll_nvidia_ops.close(st);
	cyc_base = 0;
}

/*
 * 8 GPUs, a slow period of 1 s, cycles of 100 ms: each GPU's slow reads in
 * slots of its own. No power (0 W), so the energy total moves only when
 * the counter (1 J more at each read) is read: the cycles each GPU reads
 * it in are seen in the report. The first report reads no counter; no
 * cycle reads more than one GPU's; each GPU reads once per slow period,
 * 10 cycles apart. The memory temperature (read by every GPU in the first
 * report) is read on the same slots from then on.
 */
static void test_stagger(void)
{
	static const char *const E = "nvmlDeviceGetTotalEnergyConsumption", *const F = "nvmlDeviceGetFieldValues";
	struct mon_env env = { 0 };
	char script[512] = "";
	double last[8];
	int reads[8][4], nreads[8] = { 0 }, most = 0, most_temp = 0, bad = 0, first_ok = 1;
	unsigned long e0 = fn_calls(E), f0, calls;
	void *st;

	for (int k = 0; k < 8; k++)
		strcat(script, "gpu\npower 0\nenergy 1000000 1000\nmemtemp 40\n");
	st = open_script_dev(script, &env, &cad_dev);
	cyc_base = clock_mono_ns();
	f0 = fn_calls(F);
	for (int n = 1; n <= 30; n++) {
		json_t *g = collect(st, GROUP_DEVICE_POWER, n);
		int here = 0;
		unsigned long f = fn_calls(F);

		for (int k = 0; k < 8; k++) {
			char idx[4];
			json_t *t;

			snprintf(idx, sizeof(idx), "%d", k);
			t = at_dev(g, idx, "energy_total_joules");
			if (n == 1)
				first_ok &= !t && num_dev(g, idx, "energy_joules") == 0;
			if (t && (nreads[k] == 0 || json_number_value(t) != last[k])) {
				if (nreads[k] < 4)
					reads[k][nreads[k]] = n;
				nreads[k]++;
				here++;
				last[k] = json_number_value(t);
			}
		}
		json_decref(g);
		if (n == 1)
			is_int((int)(fn_calls(E) - e0), 0, "stagger: the first report reads no energy counter");
		most = here > most ? here : most;
		json_decref(collect(st, GROUP_DEVICE_THERMAL, n));
		if (n == 1)
			is_int((int)(fn_calls(F) - f), 8, "stagger: every GPU's memory temperature in the first report");
		else if ((int)(fn_calls(F) - f) > most_temp)
			most_temp = (int)(fn_calls(F) - f);
	}
	ok(first_ok, "stagger: the first report has each GPU's energy from power, no total yet");
	is_int(most, 1, "stagger: no cycle reads more than one GPU's energy counter");
	for (int k = 0; k < 8; k++) {
		bad |= nreads[k] != 3 || reads[k][0] < 2 || reads[k][0] > 11;
		for (int j = 1; j < 3 && j < nreads[k]; j++)
			bad |= reads[k][j] - reads[k][j - 1] != 10;
		for (int j = 0; j < k; j++)
			bad |= nreads[j] && nreads[k] && reads[j][0] == reads[k][0];
		if (bad) {
			printf("# GPU %d: %d reads, from cycle %d\n", k, nreads[k], nreads[k] ? reads[k][0] : 0);
			break;
		}
	}
	ok(!bad, "stagger: each GPU reads its counter once per slow period, 10 cycles apart, in a cycle of its own");
	calls = fn_calls(E) - e0;
	is_int((int)calls, 24, "stagger: 24 reads of the counter in 30 cycles (8 GPUs, 3 slow periods)");
	is_int(most_temp, 1, "stagger: after the first report, at most one GPU's memory temperature a cycle");
	is_int((int)(fn_calls(F) - f0), 8 + 24, "stagger: the memory temperature on the same slots");
	coll_nvidia_ops.close(st);
	cyc_base = 0;
}

/* NOT_SUPPORTED is not asked again until the static refresh; static values are read once until then. */
static void test_cadence(void)
{
	struct mon_env env = { 0 };
	unsigned long fan = fn_calls("nvmlDeviceGetFanSpeed"), lim = fn_calls("nvmlDeviceGetEnforcedPowerLimit");
	unsigned long mig = fn_calls("nvmlDeviceGetMigMode"), v2 = fn_calls("nvmlDeviceGetMemoryInfo_v2");
	unsigned long pcie, replay;
	int same = 1;
	void *st = open_script_dev("gpu\nlimit 300000\nmemory 1000 300 600 100\npcie 64 128\nreplay 10 3\n"
				   "unsupported fan\n",
				   &env, &cad_dev);

	for (int n = 1; n <= 5; n++) {
		json_t *g;

		g = collect(st, GROUP_DEVICE_THERMAL, n);
		if (n == 5)
			ok(!at_dev(g, "0", "fan_percent"), "cadence: no fan");
		json_decref(g);
		same &= cyc_num(st, GROUP_DEVICE_INFO, n, "power_limit_watts") == 300;
		same &= cyc_num(st, GROUP_DEVICE_MEMORY, n, "used_bytes") == 300; /* v1 less the reserved v2 gave */
		same &= cyc_num(st, GROUP_DEVICE_MEMORY, n, "reserved_bytes") == 100;
	}
	ok(same, "cadence: power limit, used and reserved memory in every cycle as read");
	is_int((int)(fn_calls("nvmlDeviceGetFanSpeed") - fan), 1, "cadence: NOT_SUPPORTED asked once in 5 cycles");
	is_int((int)(fn_calls("nvmlDeviceGetEnforcedPowerLimit") - lim), 1, "cadence: the power limit read once");
	is_int((int)(fn_calls("nvmlDeviceGetMigMode") - mig), 1, "cadence: the MIG mode read once");
	is_int((int)(fn_calls("nvmlDeviceGetMemoryInfo_v2") - v2), 1, "cadence: memory v2 once, v1 since");
	/* the static refresh, 60 s on */
	json_decref(collect(st, GROUP_DEVICE_THERMAL, 700));
	json_decref(collect(st, GROUP_DEVICE_INFO, 700));
	is_int((int)(fn_calls("nvmlDeviceGetFanSpeed") - fan), 2, "cadence: asked again after the static refresh");
	is_int((int)(fn_calls("nvmlDeviceGetEnforcedPowerLimit") - lim), 2, "cadence: the limit read again");
	/*
	 * PCIe replays: the increase at each read, 0 in between; the increases add up to the counter's. The
	 * read at open is the first report's; the next in the GPU's slot (half a slow period on: cycle 6).
	 */
	replay = fn_calls("nvmlDeviceGetPcieReplayCounter");
	is_double(cyc_num(st, GROUP_DEVICE_ERRORS, 1, "pcie_replays"), 0, 0, "replays: the first report, 0");
	is_double(cyc_num(st, GROUP_DEVICE_ERRORS, 2, "pcie_replays_total"), 10, 0, "replays: the total read at open");
	is_int((int)(fn_calls("nvmlDeviceGetPcieReplayCounter") - replay), 0, "replays: not read again at first");
	is_double(cyc_num(st, GROUP_DEVICE_ERRORS, 6, "pcie_replays"), 3, 0, "replays: the first read (13 - 10)");
	is_double(cyc_num(st, GROUP_DEVICE_ERRORS, 7, "pcie_replays"), 0, 0, "replays: between reads, 0");
	is_double(cyc_num(st, GROUP_DEVICE_ERRORS, 8, "pcie_replays_total"), 13, 0, "replays: the total read last");
	is_double(cyc_num(st, GROUP_DEVICE_ERRORS, 16, "pcie_replays"), 3, 0, "replays: the next read (16 - 13)");
	/* PCIe throughput without GPM: one batch per slow period (time on the collector's clock) */
	pcie = fn_calls("nvmlDeviceGetPcieThroughput");
	same = 1;
	for (int n = 1; n <= 4; n++)
		same &= cyc_num(st, GROUP_DEVICE_UTILIZATION, n, "pcie_rx_bytes_per_second") == 128 * 1024;
	ok(same, "pcie: the value in every cycle");
	is_int((int)(fn_calls("nvmlDeviceGetPcieThroughput") - pcie), 2, "pcie: one batch (TX and RX) in 4 cycles");
	skip_ms(1000);
	json_decref(collect(st, GROUP_DEVICE_UTILIZATION, 15));
	is_int((int)(fn_calls("nvmlDeviceGetPcieThroughput") - pcie), 4, "pcie: the next a slow period later");
	coll_nvidia_ops.close(st);
}

/*
 * The table of reads (nv_reads, monitor/nvidia/nvidia_groups.c): every row
 * of a device group, a call and a reader unless it only puts, a bit free
 * for it in the device's masks; and device_memory's read, now a row like
 * the others, asked once after NOT_SUPPORTED until the static refresh
 * (it was asked every cycle).
 */
static void test_table(void)
{
	struct mon_env env = { 0 };
	int bad = 0;
	unsigned long v1 = fn_calls("nvmlDeviceGetMemoryInfo"), v2 = fn_calls("nvmlDeviceGetMemoryInfo_v2");
	void *st;

	for (size_t i = 0; i < nv_nreads; i++) {
		const struct nv_read *rd = &nv_reads[i];
		int puts_only = rd->every == NV_PUT;

		if (rd->group < GROUP_DEVICE_INFO || rd->group > GROUP_DEVICE_ERRORS || !rd->put ||
		    puts_only != !rd->read || puts_only != !rd->call) {
			printf("# row %zu (%s): not a well-formed row\n", i, rd->call ? rd->call : "no call");
			bad = 1;
		}
	}
	ok(!bad, "table: every row a device group's, with a call and a reader unless it only puts");
	ok(nv_nreads <= NV_READS_MAX, "table: %zu rows, a bit each in the device's masks", nv_nreads);
	ok(nv_row(GROUP_DEVICE_POWER, NF_ENERGY) && nv_row(GROUP_DEVICE_POWER, NF_ENERGY)->every == NV_ENERGY,
	   "table: the energy counter on its own cadence");
	st = open_script_dev("gpu\nunsupported memory\n", &env, &cad_dev);
	for (int n = 1; n <= 5; n++) {
		json_t *g = collect(st, GROUP_DEVICE_MEMORY, n);

		if (n == 5)
			ok(!at_dev(g, "0", "used_bytes") && !at_dev(g, "0", "total_bytes"), "table: no memory fields");
		json_decref(g);
	}
	is_int((int)(fn_calls("nvmlDeviceGetMemoryInfo_v2") - v2), 1, "table: memory v2 asked once");
	is_int((int)(fn_calls("nvmlDeviceGetMemoryInfo") - v1), 1, "table: memory NOT_SUPPORTED asked once in 5 cycles");
	coll_nvidia_ops.close(st);
}

/* The calls the ledger's table text counts for group and function fn, or -1 when it has no such row. */
static long ledger_calls(const char *text, const char *group, const char *fn)
{
	char g[64], f[96];
	long n;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (sscanf(l, "%63s %95s %ld", g, f, &n) == 3 && !strcmp(g, group) && !strcmp(f, fn))
			return n;
	return -1;
}

/* The call ledger (ACCEL_NVML_LEDGER): its table on stderr at close counts each group's calls. */
static void test_ledger(void)
{
	struct mon_env env = { 0 };
	char path[160], text[16384] = "";
	int saved = dup(2), fd;
	size_t n = 0;
	FILE *f;
	void *st;

	snprintf(path, sizeof(path), "%s/ledger.txt", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || saved < 0 || dup2(fd, 2) < 0) {
		printf("Bail out! redirect stderr to %s\n", path);
		exit(2);
	}
	setenv("ACCEL_NVML_LEDGER", "1", 1);
	st = open_script_dev("gpu\npower 100000\nunsupported fan\n", &env, &cad_dev);
	for (int k = 1; k <= 3; k++) {
		json_decref(collect(st, GROUP_DEVICE_POWER, k));
		json_decref(collect(st, GROUP_DEVICE_THERMAL, k));
	}
	coll_nvidia_ops.close(st);
	unsetenv("ACCEL_NVML_LEDGER");
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	if ((f = fopen(path, "r"))) {
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
	}
	text[n] = 0;
	ok(strstr(text, "NVML call ledger, at close, 3 cycles") != NULL, "ledger: the table at close, 3 cycles");
	is_int(ledger_calls(text, "device_power", "nvmlDeviceGetPowerUsage"), 3, "ledger: device_power's 3 power readings");
	is_int(ledger_calls(text, "device_thermal", "nvmlDeviceGetFanSpeed"), 1,
	       "ledger: the fan asked once (NOT_SUPPORTED)");
	ok(strstr(text, "start ") != NULL, "ledger: the calls at open, as \"start\"");
}

/* ---- NVIDIA MIG and GPM ---------------------------------------- */

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
	is_int(coll_nvidia_ops.open(&env, &(struct coll_target){ .dev = &fdev }, &st), 0, "MIG: open");
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
	is_int(coll_nvidia_ops.open(&env, &(struct coll_target){ .dev = &fdev }, &st), 0, "GPM: open");
	g = collect(st, GROUP_DEVICE_UTILIZATION, n++);
	ok(!dat(g, "0", "sm_active_percent"), "GPM: the first sample alone gives no metric");
	is_double(dnum(g, "0", "pcie_tx_bytes_per_second"), 1000 * 1024.0, 0,
		  "GPM: until then PCIe is nvmlDeviceGetPcieThroughput's");
	json_decref(g);
	skip_ms(150);
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
	skip_ms(150);
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
	is_int(coll_nvidia_ops.open(&env, &(struct coll_target){ .dev = &fdev }, &st), 0, "GPM without MIG sampling: open");
	g = collect(st, GROUP_DEVICE_UTILIZATION, n++);
	json_decref(g);
	skip_ms(150);
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
	is_int(coll_nvidia_ops.open(&env, &(struct coll_target){ .dev = &fdev }, &st), 0, "GPM of MIG instances only: open");
	g = collect(st, GROUP_DEVICE_UTILIZATION, n++);
	json_decref(g);
	skip_ms(150);
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

/* GPM gives the PCIe rates: the 20 ms-per-call PCIe read is skipped for that GPU (here it would sleep 300 ms). */
static void test_gpm_pcie_skip(void)
{
	struct mon_env env = { 0 };
	char script[256];
	void *st = NULL;
	json_t *g;
	double t0, took;
	int n = 400;

	if (write_file("gpmpcie.nvml",
		       "gpu\nname NVIDIA H100 80GB HBM3\npcie 1000 2000\npcie_delay 300\ngpm sm=50 pcie_tx=10 pcie_rx=20\n"
		       "gpu\npcie 1000 2000\n",
		       script, sizeof(script))) {
		ok(0, "write the script");
		return;
	}
	setenv("FAKE_NVML_SCRIPT", script, 1);
	is_int(coll_nvidia_ops.open(&env, &(struct coll_target){ .dev = &fdev }, &st), 0, "GPM PCIe: open");
	g = collect(st, GROUP_DEVICE_UTILIZATION, n++);
	is_double(dnum(g, "0", "pcie_tx_bytes_per_second"), 1000 * 1024.0, 0,
		  "GPM PCIe: before GPM has a value, the PCIe call's");
	json_decref(g);
	skip_ms(150);
	g = collect(st, GROUP_DEVICE_UTILIZATION, n++);
	is_double(dnum(g, "0", "pcie_tx_bytes_per_second"), 10.0 * 1048576, 0, "GPM PCIe: then GPM's");
	json_decref(g);
	skip_ms(150);
	t0 = now_ms();
	g = collect(st, GROUP_DEVICE_UTILIZATION, n++);
	took = now_ms() - t0;
	ok(took < 150, "GPM PCIe: the 300 ms PCIe call is not made once GPM gives PCIe (%.1f ms)", took);
	is_double(dnum(g, "0", "pcie_rx_bytes_per_second"), 20.0 * 1048576, 0, "GPM PCIe: GPM's RX");
	is_double(dnum(g, "1", "pcie_rx_bytes_per_second"), 2000 * 1024.0, 0,
		  "GPM PCIe: a GPU without GPM still has the PCIe call's");
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
	snprintf(lib, sizeof(lib), "%s/libnvidia-ml.so.1", dir);
	setenv("ACCEL_NVML_LIBRARY", lib, 1);
	/* The tests before test_cadence read every value every cycle, as before the slow cadence. */
	if (nvml_slow_period(&dev, "period") || nvml_slow_period(&all_dev, "period") ||
	    nvml_slow_period(&fdev, "period") ||
	    nvml_config(&cad_dev, json_pack("{s:s,s:s}", "slow_period", "1s", "energy_period", "1s")))
		return 2;
	test_edges();
	test_events_between_cycles();
	test_events_during_cycles();
	test_lost_during_wait();
	test_lost_twice();
	test_nvlink();
	test_pcie_parallel();
	test_pcie_fetch();
	test_pcie_hung();
	test_reasons();
	test_pcie_mig_race();
	test_mig_changes();
	test_gpm();
	test_gpm_no_mig();
	test_gpm_mig_only();
	test_gpm_pcie_skip();
	test_energy_estimate();
	test_energy_trace();
	test_energy_refused();
	test_stagger();
	test_cadence();
	test_table();
	test_ledger();
	nvml_cfg_free(&dev);
	nvml_cfg_free(&cad_dev);
	nvml_cfg_free(&all_dev);
	nvml_cfg_free(&fdev);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
	ok(collects[0] && collects[1] && !collects[2],
	   "collect's return agreed with the group's error in every collect (%u with 0, %u with -1)", collects[0],
	   collects[1]);
	return done_testing();
}
