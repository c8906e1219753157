/* SPDX-License-Identifier: MIT */
/*
 * containers_bench: the CPU cost of one container_usage cycle
 * (monitor/system/coll_containers.c) on a cgroup tree with many containers, next
 * to its floor, measured in one process in one run.
 *
 *  - cycle: collect() of the group (the scan of the tree on its kept
 *    directory fds, the reads and parses of every container's, pod's and
 *    unit's files, the entries updated) and the group serialized with
 *    json_write() into a buffer, as the report line would hold it.
 *  - floor: the same files and nothing else: for every cgroup the cycle
 *    reported, each file it reads (v2: cpu.stat, memory.current,
 *    memory.stat, memory.events) opened by its path relative to the root,
 *    read to EOF with plain read() and closed. No listing, no parsing, no
 *    JSON: no collector that opens these files can cost less.
 *  - pread floor: what a collector that keeps the files open cannot go
 *    below: the same files, opened once before the run, each read with one
 *    pread from offset 0 and parsed by the least any parse does (every
 *    byte looked at once: each line's number read with a digit loop). Its
 *    cost per cgroup is the figure a period's cycle is measured against.
 *
 * Without --root it builds a cgroup v2 tree in a private directory under
 * $TMPDIR, copying a systemd-driver node: kubepods.slice with the three QoS
 * slices, --containers containers (three to a pod, so a third as many pod
 * slices), and a system.slice of ten services, every file with a real
 * kernel's contents, every directory dated an hour back (a node's cgroups
 * outlive a period by far; see cgroupfs.h, struct cg_files). With --root DIR it measures that tree (a live
 * /sys/fs/cgroup: the floor is then the kernel generating the files).
 *
 * CPU time is CLOCK_PROCESS_CPUTIME_ID around whole blocks of cycles; the
 * blocks alternate floor, cycle, cycle, floor, ... and each figure is the
 * median over the rounds. With --gap-ms MS every cycle of every figure is
 * preceded by a sleep of MS milliseconds (no CPU time), as the producer's
 * cycles are a period apart: what the kernel's and the collector's data
 * cost when the caches went cold meanwhile, which on a virtual machine is
 * several times what back-to-back cycles cost.
 *
 * With --write-tree DIR it only writes the fixture tree of --containers
 * containers to DIR (which must not exist) and exits: bench/node_bench.py
 * runs accel-monitor on it.
 */
#include "../common/jsonw.h"
#include "../common/log.h"
#include "../common/timeutil.h"
#include "../common/util.h"
#include "../monitor/app/report.h"
#include "../monitor/core/collector.h"
#include "../monitor/host/host.h"
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The collector measured here (collectors.c registers it). */
extern const struct collector_ops coll_containers_ops;

#define MAX_ROUNDS 99

static const char *const v2_files[] = { "cpu.stat", "memory.current", "memory.stat", "memory.events" };
/* v1: {hierarchy, file} (cpu and cpuacct are symlinks where they are one hierarchy) */
static const char *const v1_files[][2] = { { "cpuacct", "cpuacct.usage" },	  { "cpuacct", "cpuacct.stat" },
					   { "cpu", "cpu.stat" },			  { "memory", "memory.usage_in_bytes" },
					   { "memory", "memory.stat" },		  { "memory", "memory.oom_control" } };

static void put(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		fprintf(stderr, "containers_bench: cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void mkdirs(const char *path)
{
	char tmp[4096];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(tmp, 0755);
			*p = '/';
		}
	if (mkdir(tmp, 0755) && errno != EEXIST) {
		fprintf(stderr, "containers_bench: mkdir %s: %s\n", tmp, strerror(errno));
		exit(1);
	}
}

/* A cgroup v2 directory with every file a real one has that the collector or a reader would list. */
static void cgroup_dir(const char *dir, unsigned seed, int leaf)
{
	static const char *const others[] = { "cgroup.controllers", "cgroup.events", "cgroup.freeze", "cgroup.kill",
					      "cgroup.max.depth", "cgroup.max.descendants", "cgroup.procs",
					      "cgroup.stat", "cgroup.subtree_control", "cgroup.threads",
					      "cgroup.type", "cpu.idle", "cpu.max", "cpu.max.burst", "cpu.pressure",
					      "cpu.weight", "cpu.weight.nice", "io.max", "io.pressure", "io.stat",
					      "io.weight", "memory.high", "memory.low", "memory.max", "memory.min",
					      "memory.numa_stat", "memory.oom.group", "memory.peak",
					      "memory.pressure", "memory.reclaim", "memory.swap.current",
					      "memory.swap.events", "memory.swap.max", "memory.zswap.current",
					      "memory.zswap.max", "pids.current", "pids.events", "pids.max",
					      "pids.peak" };
	char text[4096];
	unsigned long long anon = 40000000ull + seed * 4096ull, file = 20000000ull + seed * 8192ull;

	mkdirs(dir);
	for (size_t i = 0; i < ARRAY_SIZE(others); i++)
		put(dir, others[i], "0\n");
	snprintf(text, sizeof(text),
		 "usage_usec %u\nuser_usec %u\nsystem_usec %u\ncore_sched.force_idle_usec 0\nnr_periods %u\n"
		 "nr_throttled %u\nthrottled_usec %u\nnr_bursts 0\nburst_usec 0\n",
		 123456789 + seed * 7, 100000000 + seed * 5, 23456789 + seed * 2, leaf ? 45000 + seed : 0,
		 leaf ? 1200 + seed : 0, leaf ? 9876543 + seed : 0);
	put(dir, "cpu.stat", text);
	snprintf(text, sizeof(text), "%llu\n", anon + file + 3000000);
	put(dir, "memory.current", text);
	snprintf(text, sizeof(text),
		 "anon %llu\nfile %llu\nkernel 3153920\nkernel_stack 245760\npagetables 573440\nsec_pagetables 0\n"
		 "percpu 5760\nsock 0\nvmalloc 8192\nshmem 4096\nzswap 0\nzswapped 0\nfile_mapped 18350080\n"
		 "file_dirty 12288\nfile_writeback 0\nswapcached 0\nanon_thp 0\nfile_thp 0\nshmem_thp 0\n"
		 "inactive_anon %llu\nactive_anon 1048576\ninactive_file %llu\nactive_file %llu\nunevictable 0\n"
		 "slab_reclaimable 1812392\nslab_unreclaimable 611080\nslab 2423472\nworkingset_refault_anon 0\n"
		 "workingset_refault_file 1482\nworkingset_activate_anon 0\nworkingset_activate_file 208\n"
		 "workingset_restore_anon 0\nworkingset_restore_file 0\nworkingset_nodereclaim 0\npgscan 0\n"
		 "pgsteal 0\npgscan_kswapd 0\npgscan_direct 0\npgscan_khugepaged 0\npgsteal_kswapd 0\n"
		 "pgsteal_direct 0\npgsteal_khugepaged 0\npgfault 1903216\npgmajfault 204\npgrefill 0\n"
		 "pgactivate 4310\npgdeactivate 0\npglazyfree 0\npglazyfreed 0\nzswpin 0\nzswpout 0\nzswpwb 0\n"
		 "thp_fault_alloc 0\nthp_collapse_alloc 0\nthp_swpout 0\nthp_swpout_fallback 0\n",
		 anon, file, anon - 1048576, file / 2, file - file / 2);
	put(dir, "memory.stat", text);
	put(dir, "memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n");
}

/* Date dir and every directory below it secs back (after every change to them: a change dates one again). */
static void backdate(const char *dir, time_t secs)
{
	struct timespec t[2];
	char sub[4096];
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d) {
		fprintf(stderr, "containers_bench: opendir %s: %s\n", dir, strerror(errno));
		exit(1);
	}
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.') {
			snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
			backdate(sub, secs);
		}
	closedir(d);
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= secs;
	t[1] = t[0];
	if (utimensat(AT_FDCWD, dir, t, 0)) {
		fprintf(stderr, "containers_bench: utimensat %s: %s\n", dir, strerror(errno));
		exit(1);
	}
}

/* The tree: n containers, three to a pod, over the three QoS classes; ten services. */
static void build_tree(const char *root, unsigned n)
{
	static const char *const qos[] = { "guaranteed", "burstable", "besteffort" };
	char dir[4096], pod[4096];

	mkdirs(root);
	put(root, "cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
	put(root, "cpu.stat", "usage_usec 1\nuser_usec 1\nsystem_usec 0\n");
	snprintf(dir, sizeof(dir), "%s/kubepods.slice", root);
	cgroup_dir(dir, 1, 0);
	for (int q = 1; q < 3; q++) {
		snprintf(dir, sizeof(dir), "%s/kubepods.slice/kubepods-%s.slice", root, qos[q]);
		cgroup_dir(dir, 2, 0);
	}
	for (unsigned c = 0; c < n; c++) {
		unsigned p = c / 3, q = p % 3;

		if (q == 0)
			snprintf(pod, sizeof(pod), "%s/kubepods.slice/kubepods-pod%08x_1a2b_4c3d_8e5f_%012x.slice", root,
				 p, p);
		else
			snprintf(pod, sizeof(pod), "%s/kubepods.slice/kubepods-%s.slice/kubepods-%s-pod%08x_1a2b_4c3d_8e5f_%012x.slice",
				 root, qos[q], qos[q], p, p);
		if (c % 3 == 0)
			cgroup_dir(pod, p, 0);
		snprintf(dir, sizeof(dir), "%s/cri-containerd-%064x.scope", pod, c + 1);
		/* %064x of an unsigned: 64 hex digits, zero-padded */
		cgroup_dir(dir, c, 1);
	}
	for (unsigned s = 0; s < 10; s++) {
		snprintf(dir, sizeof(dir), "%s/system.slice/svc%u.service", root, s);
		cgroup_dir(dir, 1000 + s, 1);
	}
	backdate(root, 3600);
}

static char fbuf[65536];

/* The floor: every file of every reported cgroup, by path from the root, read to EOF. */
static void floor_once(int rootfd, char **paths, size_t n, int v2)
{
	char rel[4200];

	for (size_t i = 0; i < n; i++) {
		size_t nf = v2 ? ARRAY_SIZE(v2_files) : ARRAY_SIZE(v1_files);

		for (size_t k = 0; k < nf; k++) {
			int fd;

			if (v2)
				snprintf(rel, sizeof(rel), "%s/%s", paths[i] + 1, v2_files[k]);
			else
				snprintf(rel, sizeof(rel), "%s/%s/%s", v1_files[k][0], paths[i] + 1, v1_files[k][1]);
			fd = openat(rootfd, rel, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			while (read(fd, fbuf, sizeof(fbuf)) > 0)
				;
			close(fd);
		}
	}
}

/*
 * The pread floor: fds (nfds, -1 where a file could not be opened) kept
 * open, each read with one pread from offset 0 and every line's number
 * read with a digit loop. Returns the sum of the numbers (so that the
 * parse is not optimised away).
 */
static uint64_t pread_once(const int *fds, size_t nfds)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < nfds; i++) {
		ssize_t n = fds[i] >= 0 ? pread(fds[i], fbuf, sizeof(fbuf) - 1, 0) : -1;
		uint64_t x = 0;

		for (ssize_t k = 0; k < n; k++) {
			unsigned d = (unsigned)(fbuf[k] - '0');

			if (d < 10) {
				x = x * 10 + d;
			} else if (fbuf[k] == '\n') {
				sum += x;
				x = 0;
			} else if (fbuf[k] == ' ') {
				x = 0;
			}
		}
		sum += x;
	}
	return sum;
}

/* One period of container_usage as the monitor runs it: sampled, and written from its record into line. */
static void cycle_once(void *st, struct buf *line)
{
	struct cycle cy = { .mono_ns = clock_mono_ns() };
	struct report_group g = { .name = "container_usage", .period = 1.0 };
	char err[512];

	report_group_sample(&g, &coll_containers_ops, st, &cy, err, sizeof(err));
	buf_reset(line);
	if (report_group_write(&g, "2026-11-23T19:00:00.000Z", line)) {
		fprintf(stderr, "containers_bench: container_usage over %zu bytes\n", line->cap);
		exit(1);
	}
}

/* One period's group, parsed back (a new reference; the line keeps its text). */
static json_t *cycle_json(void *st, struct buf *line)
{
	json_error_t je;
	json_t *g;

	cycle_once(st, line);
	g = json_loadb(line->data, line->len, 0, &je);
	if (!g) {
		fprintf(stderr, "containers_bench: container_usage is no JSON: %s\n", je.text);
		exit(1);
	}
	return g;
}

static void usage(void)
{
	fprintf(stderr, "Usage: containers_bench [--root DIR] [-c CONTAINERS] [-r ROUNDS] [-n CYCLES] [--gap-ms MS] "
			"[--target X]\n"
			"       containers_bench --write-tree DIR [-c CONTAINERS]\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = { { "root", required_argument, NULL, 'R' },
						  { "containers", required_argument, NULL, 'c' },
						  { "rounds", required_argument, NULL, 'r' },
						  { "cycles", required_argument, NULL, 'n' },
						  { "target", required_argument, NULL, 't' },
						  { "write-tree", required_argument, NULL, 'W' },
						  { "gap-ms", required_argument, NULL, 'g' },
						  { NULL, 0, NULL, 0 } };
	const char *root = NULL, *tmp = getenv("TMPDIR"), *write_only = NULL;
	unsigned ncont = 200;
	int rounds = 7, ncycles = 20, gap_ms = 0, opt, rootfd, v2;
	double target = 2.0, per_cgroup_target = 10.0, fl[MAX_ROUNDS], pr[MAX_ROUNDS], cy[MAX_ROUNDS],
	       ratio[MAX_ROUNDS], pratio[MAX_ROUNDS], first_us;
	volatile uint64_t sink = 0;
	int *fds;
	size_t nfds = 0;
	char work[512] = "", cmd[1100];
	struct mon_env env = { 0 };
	struct container_opts copts = { 0 };
	struct buf line;
	void *st = NULL;
	json_t *g, *cs;
	char **paths;
	size_t npaths = 0, nrep = 0;
	const char *key;
	json_t *v;

	while ((opt = getopt_long(argc, argv, "c:r:n:g:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'R':
			root = optarg;
			break;
		case 'c':
			ncont = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'n':
			ncycles = atoi(optarg);
			break;
		case 't':
			target = strtod(optarg, NULL);
			break;
		case 'W':
			write_only = optarg;
			break;
		case 'g':
			gap_ms = atoi(optarg);
			break;
		default:
			usage();
			return 2;
		}
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || ncycles < 1 || ncont < 1 || gap_ms < 0 || gap_ms > 10000) {
		usage();
		return 2;
	}
	log_init("containers_bench", LOG_LVL_WARN);
	if (write_only) {
		if (mkdir(write_only, 0755)) {
			fprintf(stderr, "containers_bench: mkdir %s: %s\n", write_only, strerror(errno));
			return 1;
		}
		build_tree(write_only, ncont);
		return 0;
	}
	if (!root) {
		snprintf(work, sizeof(work), "%s/accel-containers-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(work)) {
			perror("mkdtemp");
			return 1;
		}
		strcat(work, "/cg");
		build_tree(work, ncont);
		root = work;
	}
	copts.cgroupfs = root;
	env.host = host_new(&(struct host_opts){ .ctr = copts, .clk_tck = 100, .page_size = 4096 }, NULL);
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		fprintf(stderr, "containers_bench: %s: %s\n", root, strerror(errno));
		return 1;
	}
	v2 = faccessat(rootfd, "cgroup.controllers", F_OK, 0) == 0;

	/* open() is the first scan: every directory opened (measured once, cold). */
	first_us = bench_cpu_us();
	coll_containers_ops.open(&env, &(struct coll_target){ .dev = NULL }, &st);
	first_us = bench_cpu_us() - first_us;

	/* What one cycle reports: the paths the floor reads. */
	buf_init(&line, 256 << 20);
	g = cycle_json(st, &line);
	if (*json_string_value(json_object_get(g, "error"))) {
		fprintf(stderr, "containers_bench: %s\n", json_string_value(json_object_get(g, "error")));
		return 1;
	}
	cs = json_object_get(g, "containers");
	paths = xcalloc(json_object_size(cs) + 1, sizeof(*paths));
	json_object_foreach(cs, key, v)
		paths[npaths++] = xstrdup(key);
	json_decref(g);

	/* The pread floor's files, opened once. */
	fds = xcalloc(npaths * ARRAY_SIZE(v1_files) + 1, sizeof(*fds));
	for (size_t i = 0; i < npaths; i++) {
		char rel[4200];
		size_t nf = v2 ? ARRAY_SIZE(v2_files) : ARRAY_SIZE(v1_files);

		for (size_t k = 0; k < nf; k++) {
			if (v2)
				snprintf(rel, sizeof(rel), "%s/%s", paths[i] + 1, v2_files[k]);
			else
				snprintf(rel, sizeof(rel), "%s/%s/%s", v1_files[k][0], paths[i] + 1, v1_files[k][1]);
			fds[nfds++] = open_kept(rootfd, rel); /* as the collector keeps them */
		}
	}

	/* A warm-up of each, then alternating blocks: floor, pread floor, cycle, then the other way round. */
	floor_once(rootfd, paths, npaths, v2);
	sink += pread_once(fds, nfds);
	cycle_once(st, &line);
	nrep = npaths;
	for (int r = 0; r < rounds; r++) {
		double t[4];

		for (int k = 0; k < 3; k++) {
			int which = r % 2 == 0 ? k : 2 - k;

			t[k] = bench_cpu_us();
			for (int i = 0; i < ncycles; i++) {
				if (gap_ms) /* asleep: no CPU time */
					nanosleep(&(struct timespec){ gap_ms / 1000, gap_ms % 1000 * 1000000L }, NULL);
				if (which == 0)
					floor_once(rootfd, paths, npaths, v2);
				else if (which == 1)
					sink += pread_once(fds, nfds);
				else
					cycle_once(st, &line);
			}
			t[k + 1] = bench_cpu_us();
			*(which == 0 ? &fl[r] : which == 1 ? &pr[r] : &cy[r]) = (t[k + 1] - t[k]) / ncycles;
		}
		ratio[r] = cy[r] / fl[r];
		pratio[r] = cy[r] / pr[r];
	}
	{
		double f = 0, c = 0, p = 0, rmin, rmax, ncg = nrep ? (double)nrep : 1;

		qsort(fl, (size_t)rounds, sizeof(double), bench_cmp_double);
		qsort(pr, (size_t)rounds, sizeof(double), bench_cmp_double);
		qsort(cy, (size_t)rounds, sizeof(double), bench_cmp_double);
		qsort(ratio, (size_t)rounds, sizeof(double), bench_cmp_double);
		qsort(pratio, (size_t)rounds, sizeof(double), bench_cmp_double);
		f = fl[rounds / 2];
		p = pr[rounds / 2];
		c = cy[rounds / 2];
		rmin = ratio[0];
		rmax = ratio[rounds - 1];
		printf("tree: %s (cgroup v%d), %zu cgroups reported, report group %zu bytes\n",
		       work[0] ? "fixture" : root, v2 ? 2 : 1, nrep, line.len);
		printf("first scan (open, cold):  %10.1f us\n", first_us);
		if (gap_ms)
			printf("every cycle %d ms after the previous one (--gap-ms): caches as cold as the producer's\n",
			       gap_ms);
		printf("floor  us/cycle (median): %10.1f   (plain openat+read+close of the %zu files)\n", f,
		       npaths * (v2 ? ARRAY_SIZE(v2_files) : ARRAY_SIZE(v1_files)));
		printf("cycle  us/cycle (median): %10.1f   (scan + read + parse + entries + json_write)\n", c);
		printf("ratio cycle/floor:        %10.2f   (min %.2f, max %.2f over %d rounds of %d cycles)   %s (target <= %.1f)\n",
		       c / f, rmin, rmax, rounds, ncycles, c / f <= target ? "PASS" : "FAIL", target);
		printf("pread floor us/cycle:     %10.1f   (the files kept open: one pread and a digit loop each)\n", p);
		/*
		 * The per-cgroup target is the fixture's, whose floor is page-cache reads; a live tree's
		 * floor is the kernel making each file (v1's memory.stat alone can pass 10 us), so there the
		 * figures are printed without a verdict.
		 */
		if (nrep && work[0])
			printf("per cgroup: pread floor %.2f us, cycle %.2f us, above the floor %.2f us   %s "
			       "(target: cycle <= %.0f us)\n",
			       p / ncg, c / ncg, (c - p) / ncg, c / ncg <= per_cgroup_target ? "PASS" : "FAIL",
			       per_cgroup_target);
		else if (nrep)
			printf("per cgroup: pread floor %.2f us, cycle %.2f us, above the floor %.2f us   "
			       "(the kernel's files: the %.0f us target is the fixture's)\n",
			       p / ncg, c / ncg, (c - p) / ncg, per_cgroup_target);
		printf("ratio cycle/pread floor:  %10.2f   (min %.2f, max %.2f)\n", c / p, pratio[0], pratio[rounds - 1]);
	}
	coll_containers_ops.close(st);
	host_free(env.host);
	for (size_t i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	for (size_t i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	buf_free(&line);
	close(rootfd);
	if (work[0]) {
		*strrchr(work, '/') = '\0';
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work);
		if (system(cmd))
			fprintf(stderr, "containers_bench: could not remove %s\n", work);
	}
	return 0;
}
