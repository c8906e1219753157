/* SPDX-License-Identifier: MIT */
/*
 * The host layer (monitor/host/host.c) on a procfs tree built in a
 * temporary directory: its options and roots, the snapshot (one scan of
 * /proc per snapshot, a new one each cycle), the process meter
 * (runtime_vcpu_usage and memory_used as process and endpoint runtimes
 * report them), the per-process device memory record, device facts, and
 * the HPC job mapping (read at most once per snapshot, made again when its
 * directory changes).
 */
#include "../../common/timeutil.h"
#include "../../common/util.h"
#include "../../monitor/host/host.h"
#include "../../monitor/host/jobmap.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/test_host.XXXXXX";

/* Write text to root/PID/name (the process's directory made). */
static void put_proc(int pid, const char *name, const char *text)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/%s", root, pid, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, text, strlen(text)) || close(fd)) {
		printf("Bail out! cannot write %s\n", path);
		exit(2);
	}
}

/* Process pid's stat file: its parent, state, CPU times (ticks) and start time (ticks since boot). */
static void stat_child(int pid, int ppid, char state, unsigned long utime, unsigned long stime, unsigned long start)
{
	char text[512];

	snprintf(text, sizeof(text),
		 "%d (srv) %c %d %d %d 0 -1 4194560 100 0 0 0 %lu %lu 0 0 20 0 1 0 %lu 1000000 100 "
		 "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
		 pid, state, ppid, pid, pid, utime, stime, start);
	put_proc(pid, "stat", text);
}

static void stat_line(int pid, char state, unsigned long utime, unsigned long stime, unsigned long start)
{
	stat_child(pid, 1, state, utime, stime, start);
}

static struct cycle at(int64_t mono_s, int64_t boot_s)
{
	return (struct cycle){ .mono_ns = mono_s * NS_PER_S, .boot_ns = boot_s * NS_PER_S, .iso = "2026-01-01T00:00:00.000Z" };
}

static void test_options(void)
{
	struct host *h = host_new(&(struct host_opts){ .ctr = { .rootfs = "/host/" } }, NULL);

	is_str(host_procfs(h), "/proc", "default procfs");
	is_str(host_sysfs(h), "/sys", "default sysfs");
	is_str(host_container_opts(h)->run, "/host/run", "--path.run defaults to ROOTFS/run");
	is_str(host_container_opts(h)->cgroupfs, "/host/sys/fs/cgroup", "--path.cgroupfs defaults to ROOTFS/sys/fs/cgroup");
	is_int(host_container_opts(h)->kubelet_refresh_ns, 30 * NS_PER_S, "the kubelet's refresh: 30 s");
	ok(host_clk_tck(h) > 0 && host_page_size(h) > 0 && host_ncpu(h) > 0, "system constants from sysconf");
	is_int(host_set_roots(h, "/proc", "/sys"), 0, "the same roots: no change");
	is_int(host_set_roots(h, "/proc", "/elsewhere/sys"), 1, "another sysfs: a change");
	is_str(host_sysfs(h), "/elsewhere/sys", "the new sysfs");
	is_int(host_set_roots(h, root, "/elsewhere/sys"), 1, "another procfs: a change");
	is_str(host_procfs(h), root, "the new procfs");
	ok(host_instance_ready(h), "no metadata asked for: ready");
	is_str(host_instance_text(h), "{}", "no metadata: instance_info {}");
	host_free(h);
}

/*
 * A configuration's roots and host block reach the host (host_configure, what each load applies): the
 * same options are no change; another root or container option is (the collectors reading them reopen)
 * and the host reads the new ones from then on.
 */
static void test_configure(void)
{
	struct cfg cfg = { .procfs = "/proc", .sysfs = "/sys", .host = { .rootfs = "/host/" } };
	struct host *h = host_new(&(struct host_opts){ .ctr = host_cfg_ctr(&cfg.host) }, NULL);

	is_int(host_configure(h, &cfg), 0, "configure: the same options, no change");
	cfg.host.cgroupfs = "/elsewhere/cgroup";
	is_int(host_configure(h, &cfg), 1, "configure: another cgroupfs, a change");
	is_str(host_container_opts(h)->cgroupfs, "/elsewhere/cgroup", "configure: the new cgroupfs");
	is_str(host_container_opts(h)->run, "/host/run", "configure: run still under the rootfs");
	cfg.host.kubelet_url = "https://127.0.0.1:10250";
	cfg.host.kubelet_refresh_ms = 5000;
	is_int(host_configure(h, &cfg), 1, "configure: a kubelet URL, a change");
	is_str(host_container_opts(h)->kubelet_url, "https://127.0.0.1:10250", "configure: the new kubelet URL");
	is_int(host_container_opts(h)->kubelet_refresh_ns, 5 * NS_PER_S, "configure: its refresh");
	is_int(host_configure(h, &cfg), 0, "configure: applied again, no change");
	cfg.sysfs = "/elsewhere/sys";
	is_int(host_configure(h, &cfg), 1, "configure: another sysfs, a change");
	is_str(host_sysfs(h), "/elsewhere/sys", "configure: the new sysfs");
	host_free(h);
}

static void test_snapshot(void)
{
	struct host *h = host_new(&(struct host_opts){ .procfs = root }, NULL);
	struct proc_info *procs, *p;
	size_t n;
	struct cycle cy = at(10, 10);

	stat_line(100, 'S', 0, 0, 1);
	host_snapshot(h, &cy);
	is_int(host_processes(h, &procs, &n), 0, "a scan");
	is_int((long)n, 1, "one process");
	stat_line(200, 'S', 0, 0, 1);
	is_int(host_processes(h, &procs, &n), 0, "again in the same snapshot");
	is_int((long)n, 1, "the same scan: one process");
	is_int(host_process(h, 200, &p), 0, "a process the scan did not see");
	ok(p == NULL, "in the scanned snapshot: not there");
	cy = at(11, 11);
	host_snapshot(h, &cy);
	is_int(host_processes(h, &procs, &n), 0, "the next snapshot: a new scan");
	is_int((long)n, 2, "two processes");
	host_free(h);

	/* Descent: 300 started 301, which started 302; 400 and 401 are each other's parent (a fixture's loop). */
	h = host_new(&(struct host_opts){ .procfs = root }, NULL);
	stat_line(300, 'S', 0, 0, 1);
	stat_child(301, 300, 'S', 0, 0, 2);
	stat_child(302, 301, 'S', 0, 0, 3);
	stat_child(400, 401, 'S', 0, 0, 1);
	stat_child(401, 400, 'S', 0, 0, 1);
	cy = at(12, 12);
	host_snapshot(h, &cy);
	ok(host_process_descends(h, 301, 300), "a child descends from its parent");
	ok(host_process_descends(h, 302, 300), "a grandchild too");
	ok(!host_process_descends(h, 300, 301), "a parent does not descend from its child");
	ok(!host_process_descends(h, 300, 300), "nor from itself");
	ok(!host_process_descends(h, 100, 300), "a process of pid 1 does not descend from 300");
	ok(!host_process_descends(h, 400, 300), "a loop of parents ends (at most HOST_DESCENT_MAX steps)");
	ok(!host_process_descends(h, 999, 300), "a process not there descends from nobody");
	is_int(host_processes(h, &procs, &n), 0, "after a scan:");
	ok(host_process_descends(h, 302, 300), "the same answers from the scan");
	host_free(h);

	h = host_new(&(struct host_opts){ .procfs = "/nonexistent/proc" }, NULL);
	is_int(host_processes(h, &procs, &n), -ENOENT, "a missing root: -ENOENT");
	is_int(host_procfs_open(h), -ENOENT, "and its handle cannot be opened");
	host_free(h);
}

static double vcpu(json_t *rep, const char *field)
{
	json_t *v = json_object_get(json_object_get(json_object_get(rep, "runtime_vcpu_usage"), "vcpu_usage"), field);

	return json_is_number(v) ? json_number_value(v) : -1;
}

static void test_meter(void)
{
	struct host *h = host_new(&(struct host_opts){ .procfs = root, .clk_tck = 100, .page_size = 4096 }, NULL);
	static const enum group_id due[] = { GROUP_RUNTIME_VCPU_USAGE, GROUP_MEMORY_USED, GROUP_EXECUTION_STATS };
	struct proc_meter m = { 0 };
	struct proc_info *p;
	struct cycle cy = at(100, 100);
	double ncpu = host_ncpu(h);
	json_t *rep, *mem;
	uint64_t b;

	stat_line(300, 'R', 1000, 200, 50);
	put_proc(300, "statm", "9000 250 10 1 0 100 0\n");
	host_snapshot(h, &cy);
	host_process(h, 300, &p);
	ok(p != NULL, "process 300");
	if (!p)
		return;
	host_meter_start(h, &m, p, &cy, 1); /* primed: a process there at open */

	stat_line(300, 'R', 1000 + (unsigned long)(50 * ncpu), 200 + (unsigned long)(25 * ncpu), 50);
	cy = at(102, 102);
	host_snapshot(h, &cy);
	rep = json_object();
	is_int(host_process_sample(h, &m, 300, &cy, due, ARRAY_SIZE(due), rep), 0, "sampled");
	is_double(vcpu(rep, "user"), 25, 1e-9, "user: 50 ticks a CPU over 2 s, 25 %");
	is_double(vcpu(rep, "system"), 12.5, 1e-9, "system: 12.5 %");
	is_double(json_real_value(json_object_get(json_object_get(rep, "runtime_vcpu_usage"), "period")), 2, 1e-9,
		  "period: 2 s since the baseline");
	mem = json_object_get(json_object_get(rep, "memory_used"), "runtime_used_bytes");
	is_int(json_integer_value(json_object_get(mem, "host")), 250 * 4096, "host: the resident pages in bytes");
	ok(json_is_null(json_object_get(mem, "device")), "device: null when no device collector recorded");
	ok(!json_object_get(rep, "execution_stats"), "only the process groups are added");
	json_decref(rep);

	/* Device memory: unknown until a collector records; summed per process; afresh each snapshot. */
	is_int(host_devmem(h, 300, &b), -ENOENT, "device memory: -ENOENT when no collector recorded");
	{
		struct proc_devmem_list l = { 0 };

		proc_devmem_add(&l, 300, 10);
		proc_devmem_add(&l, 300, 5);
		host_devmem_take(h, &l);
		is_int((long)l.n, 0, "device memory: the list is emptied for the next cycle");
		free(l.p);
	}
	is_int(host_devmem(h, 300, &b), 0, "device memory of 300 known");
	is_int((long)b, 15, "two devices' bytes summed");
	is_int(host_devmem(h, 1, &b), 0, "a process on no device: known");
	is_int((long)b, 0, "a process on no device: 0 bytes");
	rep = json_object();
	host_process_sample(h, &m, 300, &cy, due, ARRAY_SIZE(due), rep);
	mem = json_object_get(json_object_get(rep, "memory_used"), "runtime_used_bytes");
	is_int(json_integer_value(json_object_get(mem, "device")), 15, "memory_used: the device bytes recorded");
	json_decref(rep);
	cy = at(103, 103);
	host_snapshot(h, &cy);
	is_int(host_devmem(h, 300, &b), -ENOENT, "a new snapshot: a new record");
	host_devmem_take(h, &(struct proc_devmem_list){ .known = 1 });
	is_int(host_devmem(h, 300, &b), 0, "a collector that found no process: known, 0");

	/* Another process on the same meter (a restarted server): measured from its start. */
	stat_line(400, 'S', 30, 10, 10200); /* started at 102 s of boot */
	put_proc(400, "statm", "100 10 1 1 0 10 0\n");
	rep = json_object();
	is_int(host_process_sample(h, &m, 400, &cy, due, 1, rep), 0, "another process");
	is_int(m.pid, 400, "the meter follows it");
	is_double(json_real_value(json_object_get(json_object_get(rep, "runtime_vcpu_usage"), "period")), 1, 1e-9,
		  "its first period: since its start");
	is_double(vcpu(rep, "user"), 30 / ncpu, 1e-9, "its CPU time since its start");
	json_decref(rep);

	stat_line(500, 'Z', 0, 0, 1);
	rep = json_object();
	is_int(host_process_sample(h, &m, 500, &cy, due, 2, rep), -ESRCH, "a zombie: -ESRCH");
	is_int(host_process_sample(h, &m, 555, &cy, due, 2, rep), -ESRCH, "no such process: -ESRCH");
	is_int((long)json_object_size(rep), 0, "nothing added");
	is_int(host_process_sample(h, &m, 555, &cy, due + 2, 1, rep), 0, "no process group due: nothing to do");
	json_decref(rep);
	host_free(h);
}

static void test_facts(void)
{
	struct host *h = host_new(&(struct host_opts){ 0 }, NULL);
	struct fact f = { .device_type = "ncs2", .name = "MYRIAD", .field = "temperature_celsius", .value = 41.5,
			  .pid = 3000, .at_ns = 100, .until_ns = 200 };
	const struct fact *got;
	size_t pos = 0;
	int owner;

	ok(!host_facts_wanted(h, "ncs2"), "no reader: not wanted");
	host_facts_want(h, "ncs2", 1);
	ok(host_facts_wanted(h, "ncs2"), "a reader: wanted");
	host_facts_publish(h, &owner, &f, 1);
	got = host_facts_next(h, "ncs2", 150, &pos);
	ok(got && got->value == 41.5 && got->pid == 3000, "published, read back");
	ok(!host_facts_next(h, "ncs2", 150, &pos), "one fact");
	pos = 0;
	ok(!host_facts_next(h, "ncs2", 201, &pos), "past its validity: none");
	host_facts_publish(h, &owner, NULL, 0);
	pos = 0;
	ok(!host_facts_next(h, "ncs2", 150, &pos), "withdrawn");
	host_facts_want(h, "ncs2", -1);
	ok(!host_facts_wanted(h, "ncs2"), "the reader closed");
	host_free(h);
}

/* The jobs host_jobmap gives GPU gpu (its first one), "" when none, "(no map)" when there is no map. */
static const char *first_job(struct host *h, int gpu)
{
	const struct jobmap *jm = host_jobmap(h);
	size_t n;
	const char *const *ids;

	if (!jm)
		return "(no map)";
	ids = jobmap_lookup(jm, gpu, -1, &n);
	return n ? ids[0] : "";
}

static void test_jobmap(void)
{
	char dir[300], dir2[300], path[320];
	struct cfg cfg = { .procfs = "/proc", .sysfs = "/sys" };
	struct host *h = host_new(&(struct host_opts){ 0 }, NULL);
	FILE *f;

	ok(!host_jobmap(h), "no --hpc-job-mapping-dir: host_jobmap NULL");
	host_free(h);

	snprintf(dir, sizeof(dir), "%s/jobs", root);
	snprintf(dir2, sizeof(dir2), "%s/jobs2", root);
	mkdir(dir, 0755);
	mkdir(dir2, 0755);
	snprintf(path, sizeof(path), "%s/0", dir);
	f = fopen(path, "w");
	fputs("j1\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/1", dir2);
	f = fopen(path, "w");
	fputs("other\n", f);
	fclose(f);

	h = host_new(&(struct host_opts){ .hpc_job_mapping_dir = dir }, NULL);
	is_str(first_job(h, 0), "j1", "host_jobmap: the directory read at the host's first snapshot");
	snprintf(path, sizeof(path), "%s/0", dir);
	f = fopen(path, "w");
	fputs("j2\n", f);
	fclose(f);
	is_str(first_job(h, 0), "j1", "a change within the snapshot: not read (at most once per snapshot)");
	host_snapshot(h, &(struct cycle){ .mono_ns = clock_mono_ns() });
	is_str(first_job(h, 0), "j2", "the next snapshot: read again");
	cfg.host.hpc_job_mapping_dir = dir;
	host_configure(h, &cfg);
	is_str(first_job(h, 0), "j2", "configured with the same directory: the same map");
	cfg.host.hpc_job_mapping_dir = dir2;
	host_configure(h, &cfg);
	is_str(jobmap_dir(host_jobmap(h)), dir2, "configured with another directory: a map of it");
	is_str(first_job(h, 1), "other", "... read when first asked for");
	is_str(first_job(h, 0), "", "... the old directory's jobs gone");
	cfg.host.hpc_job_mapping_dir = "";
	host_configure(h, &cfg);
	ok(!host_jobmap(h), "configured with \"\": no map");
	host_free(h);
}

int main(void)
{
	char cmd[300];

	if (!mkdtemp(root)) {
		printf("Bail out! mkdtemp\n");
		return 2;
	}
	test_options();
	test_configure();
	test_snapshot();
	test_meter();
	test_facts();
	test_jobmap();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		printf("# could not remove %s\n", root);
	return done_testing();
}
