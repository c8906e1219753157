/* SPDX-License-Identifier: MIT */
/*
 * jobmap_bench: what the HPC job mapping (monitor/host/jobmap.c) costs a
 * cycle, on a directory of G GPUs with seven MIG devices each (8 G files,
 * two jobs a file), written to a temporary directory and removed at the
 * end. CPU time (bench.h), the median of 9 rounds:
 *
 *  - unchanged: jobmap_refresh when nothing changed (the watch's one
 *    read()), what a running monitor pays each cycle;
 *  - changed: jobmap_refresh after one file was rewritten (the directory
 *    listed, every file read again);
 *  - stat check: stat() of the directory and of each file, what deciding
 *    from mtimes would pay each cycle instead of the watch.
 *
 *   make build/release/bench/jobmap_bench && build/release/bench/jobmap_bench [G]   (default 8)
 */
#include "../monitor/host/jobmap.h"
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define ROUNDS 9

static char dir[] = "/tmp/accel-jobmap-bench.XXXXXX";

/* File k of gpu g's name: "g" for k 0, "g.(k-1)" for its MIG devices. */
static void name(char *path, size_t size, int g, int k)
{
	if (k)
		snprintf(path, size, "%s/%d.%d", dir, g, k - 1);
	else
		snprintf(path, size, "%s/%d", dir, g);
}

static void put(const char *path, int a, int b)
{
	FILE *f = fopen(path, "w");

	if (!f || fprintf(f, "%d\n%d_%d\n", a, a, b) < 0 || fclose(f)) {
		fprintf(stderr, "jobmap_bench: cannot write %s\n", path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	int gpus = argc > 1 ? atoi(argv[1]) : 8, per = 2000;
	double unchanged[ROUNDS], changed[ROUNDS], stats[ROUNDS];
	char path[128], cmd[160];
	struct jobmap *jm;
	struct stat st;

	if (gpus < 1 || gpus * 8 > JOBMAP_MAX_FILES || !mkdtemp(dir)) {
		fprintf(stderr, "usage: jobmap_bench [GPUS: 1 to %d]\n", JOBMAP_MAX_FILES / 8);
		return 2;
	}
	for (int g = 0; g < gpus; g++)
		for (int k = 0; k < 8; k++) {
			name(path, sizeof(path), g, k);
			put(path, 1000 + g * 8 + k, 0);
		}
	jm = jobmap_new(dir);
	if (jobmap_refresh(jm) || jobmap_size(jm) != (size_t)gpus * 8) {
		fprintf(stderr, "jobmap_bench: the first read failed: %s\n", jobmap_error(jm));
		return 1;
	}
	for (int r = 0; r < ROUNDS; r++) {
		double t = bench_cpu_us(), cost = 0;

		for (int i = 0; i < per * 10; i++)
			jobmap_refresh(jm);
		unchanged[r] = (bench_cpu_us() - t) / (per * 10);
		name(path, sizeof(path), 0, 0);
		for (int i = 0; i < per / 10; i++) {
			put(path, 1000, i); /* not counted: the scheduler's write */
			t = bench_cpu_us();
			jobmap_refresh(jm);
			cost += bench_cpu_us() - t;
		}
		changed[r] = cost / (per / 10);
		t = bench_cpu_us();
		for (int i = 0; i < per; i++) {
			stat(dir, &st);
			for (int g = 0; g < gpus; g++)
				for (int k = 0; k < 8; k++) {
					name(path, sizeof(path), g, k);
					stat(path, &st);
				}
		}
		stats[r] = (bench_cpu_us() - t) / per;
	}
	printf("jobmap_bench: %d GPUs, %d files, CPU time per cycle, median of %d rounds\n", gpus, gpus * 8, ROUNDS);
	printf("  unchanged (the watch's read)   %9.3f us\n", bench_median(unchanged, ROUNDS));
	printf("  changed (every file read)      %9.1f us\n", bench_median(changed, ROUNDS));
	printf("  stat check (mtimes, instead)   %9.1f us\n", bench_median(stats, ROUNDS));
	jobmap_free(jm);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? 1 : 0;
}
