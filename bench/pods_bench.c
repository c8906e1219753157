/* SPDX-License-Identifier: MIT */
/*
 * pods_bench: the cost of naming a device's processes by pod and
 * container (host_identities: monitor/host/host.c, container.c and identities.c),
 * one collection cycle after another, for N processes in N/10 pods on one
 * device, next to its floor.
 *
 *  - floor: read each process's /proc/PID/stat, which any per-process
 *    lookup must (the pid's start time tells a reused pid apart).
 *  - first cycle: every process's cgroup file parsed and every container's
 *    state file (a containerd task bundle) read.
 *  - later cycles: what a running monitor pays each cycle; the identities
 *    and names are remembered.
 *
 * The tree (a procfs root and a rootfs with the bundles) is written to a
 * temporary directory and removed at the end. Wall time, CLOCK_MONOTONIC;
 * each later-cycle figure is the median of 9 cycles.
 *
 *   make build/release/bench/pods_bench && build/release/bench/pods_bench [-p PER_POD] [N]
 *
 * -p: processes per pod (default 10). With --write-tree DIR the tree is
 * written to DIR (which must not exist: DIR/proc, DIR/rootfs) and kept,
 * nothing measured: bench/node_bench.py runs accel-monitor on it.
 */
#include "../common/timeutil.h"
#include "../common/util.h"
#include "../monitor/host/host.h"
#include "bench.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[4096] = "/tmp/accel-ctr-bench.XXXXXX";

/* Write text to root/rel, making its directories. */
static void put(const char *rel, const char *text)
{
	char path[8192], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		fprintf(stderr, "pods_bench: cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = { { "write-tree", required_argument, NULL, 'W' },
						  { NULL, 0, NULL, 0 } };
	int n = 500, per_pod = 10, opt;
	const char *write_only = NULL;
	char rel[512], text[512], procfs[4200], rootfs[4200], cmd[4300];
	json_t *ids;
	pid_t *pids;
	struct host *h;
	double later[9], floor_ms;
	int64_t t0;

	while ((opt = getopt_long(argc, argv, "p:", longopts, NULL)) != -1) {
		if (opt == 'p')
			per_pod = atoi(optarg);
		else if (opt == 'W')
			write_only = optarg;
		else
			n = -1;
	}
	if (optind < argc)
		n = atoi(argv[optind]);
	if (write_only && strlen(write_only) < sizeof(root))
		snprintf(root, sizeof(root), "%s", write_only);
	if (n <= 0 || n > 100000 || per_pod <= 0 || (write_only ? mkdir(root, 0755) != 0 : !mkdtemp(root))) {
		fprintf(stderr, "usage: pods_bench [-p PER_POD] [--write-tree DIR] [N processes, 1..100000]\n");
		return 2;
	}
	pids = xcalloc((size_t)n, sizeof(*pids));
	for (int i = 0; i < n; i++) {
		int pid = 20000 + i, pod = i / per_pod;
		char id[65];

		/* Runtimes' ids are random: they differ from the first digit. */
		for (int k = 0; k < 8; k++)
			snprintf(id + 8 * k, sizeof(id) - 8 * (size_t)k, "%08x", (unsigned)(i + 1) * 2654435761u + (unsigned)k);
		snprintf(rel, sizeof(rel), "proc/%d/stat", pid);
		snprintf(text, sizeof(text), "%d (python3) S 1 %d %d 0 -1 0 0 0 0 0 100 50 0 0 20 0 4 0 200000 1 1 1 1 1 0 "
			 "0 0 0 0 0 0 0 17 1\n", pid, pid, pid);
		put(rel, text);
		snprintf(rel, sizeof(rel), "proc/%d/cgroup", pid);
		snprintf(text, sizeof(text),
			 "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%08x_0000_4000_8000_%012x.slice/"
			 "cri-containerd-%s.scope\n", pod, pod, id);
		put(rel, text);
		snprintf(rel, sizeof(rel), "rootfs/run/containerd/io.containerd.runtime.v2.task/k8s.io/%s/config.json", id);
		snprintf(text, sizeof(text), "{\"annotations\": {\"io.kubernetes.cri.sandbox-name\": \"pod-%d\", "
			 "\"io.kubernetes.cri.sandbox-namespace\": \"ns\", \"io.kubernetes.cri.container-name\": \"c%d\"}}\n",
			 pod, i % per_pod);
		put(rel, text);
		pids[i] = pid;
	}
	if (write_only) {
		free(pids);
		return 0;
	}
	snprintf(procfs, sizeof(procfs), "%s/proc", root);
	snprintf(rootfs, sizeof(rootfs), "%s/rootfs", root);
	h = host_new(&(struct host_opts){ .procfs = procfs, .ctr = { .rootfs = rootfs } }, NULL);

	t0 = clock_mono_ns();
	for (int i = 0; i < n; i++) {
		char path[4300], buf[4096];

		snprintf(path, sizeof(path), "%s/%d/stat", procfs, 20000 + i);
		if (read_file_at(-1, path, buf, sizeof(buf)) < 0)
			return 1;
	}
	floor_ms = (double)(clock_mono_ns() - t0) / 1e6;
	t0 = clock_mono_ns();
	host_snapshot(h, &(struct cycle){ .mono_ns = 1 });
	ids = host_identities(h, pids, (size_t)n); /* a report's identities: each cycle's afresh */
	printf("pods_bench: %d processes, %zu pods on one device\n", n, json_object_size(json_object_get(ids, "pods")));
	json_decref(ids);
	printf("  floor (read every /proc/PID/stat):  %8.3f ms\n", floor_ms);
	printf("  first cycle (parse, state files):   %8.3f ms\n", (double)(clock_mono_ns() - t0) / 1e6);
	for (int c = 0; c < 9; c++) {
		t0 = clock_mono_ns();
		host_snapshot(h, &(struct cycle){ .mono_ns = 2 + c });
		json_decref(host_identities(h, pids, (size_t)n));
		later[c] = (double)(clock_mono_ns() - t0) / 1e6;
	}
	qsort(later, 9, sizeof(later[0]), bench_cmp_double);
	printf("  later cycles (median of 9):         %8.3f ms\n", later[4]);
	free(pids);
	host_free(h);
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", root);
	return system(cmd) == 0 ? 0 : 1;
}
