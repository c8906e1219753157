/* SPDX-License-Identifier: MIT */
/*
 * /proc parsers (monitor/host/procfs.c) and the vcpu_usage / memory_info
 * collectors on fixture files copied from real kernels: 2 and 96 CPUs, a
 * CPU going offline and one coming online, a meminfo without MemAvailable,
 * and a process whose name holds spaces and parentheses.
 * Expected values: tests/fixtures/proc/EXPECTED.md.
 */
#include "../../monitor/core/collector.h"
#include "../../monitor/host/host.h"
#include "../../monitor/host/procfs.h"
#include "sys_group.h"
#include "tap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The collector driven here (collectors.c registers it). */
extern const struct collector_ops coll_cpu_ops, coll_mem_ops;

#ifndef FIXTURES
#define FIXTURES "tests/fixtures/proc"
#endif

static char *slurp(const char *path)
{
	static char text[1 << 20];
	ssize_t n = read_file_at(-1, path, text, sizeof(text));

	if (n < 0) {
		printf("# cannot read %s: %s\n", path, strerror((int)-n));
		exit(2);
	}
	return text;
}

/* A procfs root whose stat and meminfo are symlinks we can re-point between samples. */
static char root[64];

static void point_at(const char *scenario, const char *snap)
{
	char src[256], dst[128];
	const char *files[] = { "stat", "meminfo" };

	for (int i = 0; i < 2; i++) {
		snprintf(src, sizeof(src), "%s/%s/%s/%s/%s", getcwd((char[512]){ 0 }, 512), FIXTURES, scenario,
			 snap, files[i]);
		snprintf(dst, sizeof(dst), "%s/%s", root, files[i]);
		unlink(dst);
		if (symlink(src, dst)) {
			printf("# symlink %s: %s\n", dst, strerror(errno));
			exit(2);
		}
	}
}

/* A host on the test's procfs root. */
static struct host *test_host(void)
{
	return host_new(&(struct host_opts){ .procfs = root, .sysfs = "/sys", .clk_tck = 100, .page_size = 4096 }, NULL);
}

/* Run vcpu_usage from snapshot a to b of a scenario; new reference to the group, its text in text (or NULL). */
static json_t *cpu_text(const char *scenario, char *text, size_t size)
{
	struct mon_env env = { .host = test_host() };
	void *state;
	json_t *g;

	point_at(scenario, "a");
	coll_cpu_ops.open(&env, &(struct coll_target){ .dev = NULL }, &state);
	point_at(scenario, "b");
	g = sys_group_text(&coll_cpu_ops, state, NULL, text, size);
	coll_cpu_ops.close(state);
	host_free(env.host);
	return g;
}

static json_t *cpu_between(const char *scenario)
{
	return cpu_text(scenario, NULL, 0);
}

static double pct(json_t *g, const char *cpu, const char *field)
{
	json_t *o = cpu ? json_object_get(json_object_get(g, "usage_data"), cpu) : json_object_get(g, "average_usage");

	return o && json_object_get(o, field) ? json_real_value(json_object_get(o, field)) : -1;
}

static void check_split(json_t *g, const char *cpu, const double want[7], const char *label)
{
	static const char *const f[] = { "user", "nice", "system", "idle", "io_wait", "irq", "soft_irq" };
	char name[128];

	for (int i = 0; i < 7; i++) {
		snprintf(name, sizeof(name), "%s: %s %s", label, cpu ? cpu : "average", f[i]);
		is_double(pct(g, cpu, f[i]), want[i], 1e-9, name);
	}
}

int main(void)
{
	struct proc_stat st = { 0 };
	struct meminfo mi;
	struct pid_stat ps;
	uint64_t rss;
	char path[256];
	json_t *g;

	snprintf(root, sizeof(root), "/tmp/accel-procfs.XXXXXX");
	if (!mkdtemp(root))
		return 2;

	/* Parsers. */
	snprintf(path, sizeof(path), "%s/96cpu/a/stat", FIXTURES);
	is_int(procfs_parse_stat(slurp(path), &st), 0, "96-CPU stat parses");
	is_int(st.ncpu, 96, "96 CPUs");
	ok(st.all.idle > (1ULL << 32), "aggregate idle above 2^32 survives (%llu)", (unsigned long long)st.all.idle);
	snprintf(path, sizeof(path), "%s/cpu-offline/b/stat", FIXTURES);
	is_int(procfs_parse_stat(slurp(path), &st), 0, "stat with an offline CPU parses");
	ok(st.cpu[0].present && st.cpu[1].present && !st.cpu[2].present && st.cpu[3].present,
	   "offline cpu2 is absent, its neighbours present");
	is_int(procfs_parse_stat("intr 0\nctxt 5\n", &st), -EINVAL, "stat without a cpu line is rejected");
	is_int(procfs_parse_stat("cpu  1 2 x\n", &st), -EINVAL, "garbage cpu line is rejected");
	proc_stat_free(&st);

	snprintf(path, sizeof(path), "%s/2cpu/a/meminfo", FIXTURES);
	is_int(procfs_parse_meminfo(slurp(path), &mi), 0, "meminfo parses");
	ok(mi.has_available, "MemAvailable found");
	is_int(mi.total, 8039920ULL * 1024, "MemTotal in bytes");
	is_int(meminfo_used(&mi), (8039920ULL - 6912324ULL) * 1024, "used = MemTotal - MemAvailable");
	snprintf(path, sizeof(path), "%s/no-memavailable/a/meminfo", FIXTURES);
	is_int(procfs_parse_meminfo(slurp(path), &mi), 0, "old meminfo parses");
	ok(!mi.has_available, "no MemAvailable on a 3.2-era kernel");
	is_int(meminfo_used(&mi), (2054392ULL - (812344 + 65536 + 524288 + 40960)) * 1024,
	       "used = MemTotal - (MemFree + Buffers + Cached + SReclaimable)");
	is_int(procfs_parse_meminfo("MemFree: 1 kB\n", &mi), -EINVAL, "meminfo without MemTotal is rejected");

	snprintf(path, sizeof(path), "%s/pid/stat", FIXTURES);
	is_int(procfs_parse_pid_stat(slurp(path), &ps), 0, "pid stat parses");
	is_str(ps.comm, "my (weird) srv", "comm with spaces and parentheses");
	is_int(ps.state, 'S', "state");
	is_int(ps.ppid, 1, "ppid");
	is_int(ps.utime, 12345, "utime");
	is_int(ps.stime, 6789, "stime");
	is_int(ps.starttime, 123456, "starttime");
	snprintf(path, sizeof(path), "%s/pid/statm", FIXTURES);
	is_int(procfs_parse_statm_rss(slurp(path), &rss), 0, "statm parses");
	is_int(rss, 25600, "resident pages");
	is_int(procfs_parse_pid_stat("42 (x) S 1 2", &ps), -EINVAL, "truncated pid stat is rejected");

	/* vcpu_usage between two samples. */
	{
		char text[2048];

		/* The text the line gets, written from the record: keys in order, reals as json_write writes them. */
		json_decref(cpu_text("2cpu", text, sizeof(text)));
		is_str(text,
		       "{\"period\":1.0,\"timestamp\":\"2026-11-21T05:30:00.000Z\",\"error\":\"\",\"average_usage\":"
		       "{\"user\":20.0,\"nice\":2.5,\"system\":7.5,\"idle\":62.5,\"io_wait\":2.5,\"irq\":1.5,"
		       "\"soft_irq\":2.5},\"usage_data\":{\"0\":{\"user\":25.0,\"nice\":5.0,\"system\":10.0,"
		       "\"idle\":50.0,\"io_wait\":5.0,\"irq\":2.0,\"soft_irq\":3.0},\"1\":{\"user\":15.0,\"nice\":0.0,"
		       "\"system\":5.0,\"idle\":75.0,\"io_wait\":0.0,\"irq\":1.0,\"soft_irq\":2.0}},"
		       "\"context_switch_count\":4000}",
		       "2cpu: the group's text");
	}
	g = cpu_between("2cpu");
	is_str(json_string_value(json_object_get(g, "error")), "", "2cpu: no error");
	check_split(g, "0", (const double[]){ 25, 5, 10, 50, 5, 2, 3 }, "2cpu");
	check_split(g, "1", (const double[]){ 15, 0, 5, 75, 0, 1, 2 }, "2cpu");
	check_split(g, NULL, (const double[]){ 20, 2.5, 7.5, 62.5, 2.5, 1.5, 2.5 }, "2cpu");
	is_int(json_integer_value(json_object_get(g, "context_switch_count")), 4000, "2cpu: context switches");
	json_decref(g);

	g = cpu_between("96cpu");
	is_int(json_object_size(json_object_get(g, "usage_data")), 96, "96cpu: 96 CPUs reported");
	check_split(g, "0", (const double[]){ 88, 0, 8, 0, 0, 1, 3 }, "96cpu");
	check_split(g, "95", (const double[]){ 1, 0, 1, 98, 0, 0, 0 }, "96cpu");
	check_split(g, NULL, (const double[]){ 36, 1.25, 6, 53.75, 1.25, 0.25, 1 }, "96cpu");
	is_int(json_integer_value(json_object_get(g, "context_switch_count")), 480000, "96cpu: context switches");
	json_decref(g);

	g = cpu_between("cpu-offline");
	is_str(json_string_value(json_object_get(g, "error")), "", "cpu-offline: no error");
	ok(!json_object_get(json_object_get(g, "usage_data"), "2"), "cpu-offline: offline cpu2 left out");
	is_int(json_object_size(json_object_get(g, "usage_data")), 3, "cpu-offline: three CPUs reported");
	check_split(g, "3", (const double[]){ 10, 6, 6, 72, 0, 0, 0 }, "cpu-offline");
	check_split(g, NULL, (const double[]){ 30, 2, 12, 50, 2, 0, 2 }, "cpu-offline");
	json_decref(g);

	g = cpu_between("cpu-online");
	ok(!json_object_get(json_object_get(g, "usage_data"), "2"), "cpu-online: cpu2 has no baseline yet");
	check_split(g, NULL, (const double[]){ 30, 2, 12, 50, 2, 0, 2 }, "cpu-online");
	json_decref(g);

	/* Same sample twice: no time passed, an error rather than 0/0. */
	{
		struct mon_env env = { .host = test_host() };
		void *state;

		point_at("2cpu", "a");
		coll_cpu_ops.open(&env, &(struct coll_target){ .dev = NULL }, &state);
		g = sys_group(&coll_cpu_ops, state, NULL);
		is_str(json_string_value(json_object_get(g, "error")), "no CPU time passed between samples",
		       "identical samples: error, no division by zero");
		ok(!json_object_get(g, "average_usage"), "identical samples: no usage fields");
		json_decref(g);
		coll_cpu_ops.close(state);
		host_free(env.host);
	}

	/* memory_info. */
	{
		struct mon_env env = { .host = test_host() };
		void *state;

		point_at("no-memavailable", "a");
		coll_mem_ops.open(&env, &(struct coll_target){ .dev = NULL }, &state);
		g = sys_group(&coll_mem_ops, state, NULL);
		is_int(json_integer_value(json_object_get(g, "memory_total_bytes")), 2054392LL * 1024, "memory_total_bytes");
		is_int(json_integer_value(json_object_get(g, "memory_used_bytes")),
		       (2054392LL - (812344 + 65536 + 524288 + 40960)) * 1024, "memory_used_bytes without MemAvailable");
		is_int(json_integer_value(json_object_get(g, "swap_total_bytes")), 1048572LL * 1024, "swap_total_bytes");
		is_int(json_integer_value(json_object_get(g, "swap_used_bytes")), (1048572LL - 1001468) * 1024,
		       "swap_used_bytes");
		json_decref(g);

		/* The file vanishing is the group's error, not a crash. */
		snprintf(path, sizeof(path), "%s/meminfo", root);
		unlink(path);
		g = sys_group(&coll_mem_ops, state, NULL);
		is_str(json_string_value(json_object_get(g, "error")), "cannot read meminfo: No such file or directory",
		       "missing meminfo is reported in error");
		json_decref(g);
		coll_mem_ops.close(state);
		host_free(env.host);
	}

	/*
	 * procfs_read_keep: a procfs file is kept open and each read is a fresh
	 * text; a fixture's file is read by path each time, so a new file at
	 * the path is what the next read sees.
	 */
	{
		struct procfs pf = { 0 };
		int fd = PROCFS_UNKEPT, first;
		const char *t;

		procfs_open(&pf, "/proc");
		t = procfs_read_keep(&pf, "stat", &fd);
		ok(t && !strncmp(t, "cpu ", 4) && fd >= 0, "keep: /proc/stat read and kept open");
		first = fd;
		t = procfs_read_keep(&pf, "stat", &fd);
		ok(t && !strncmp(t, "cpu ", 4) && fd == first, "keep: read again through the same fd");
		close(fd);
		procfs_close(&pf);

		point_at("2cpu", "a");
		procfs_open(&pf, root);
		fd = PROCFS_UNKEPT;
		t = procfs_read_keep(&pf, "stat", &fd);
		is_int(procfs_parse_stat(t, &st), 0, "keep: a fixture's stat read");
		ok(fd < 0 && fd != PROCFS_UNKEPT, "keep: a fixture's file is not kept (no kernel fs)");
		point_at("96cpu", "a");
		t = procfs_read_keep(&pf, "stat", &fd);
		ok(t && !procfs_parse_stat(t, &st) && st.ncpu == 96, "keep: the file now at the path is read");
		procfs_close(&pf);
		proc_stat_free(&st);
	}

	snprintf(path, sizeof(path), "%s/stat", root);
	unlink(path);
	rmdir(root);
	return done_testing();
}
