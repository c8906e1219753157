/* SPDX-License-Identifier: MIT */
/*
 * proc_bench: what asking after a GPU's processes costs a cycle on this
 * machine's own /proc (monitor/host/proctab.c), for N real processes of T
 * threads each (children of this one, paused, killed at the end). Every
 * cycle asks each process once, as the energy split and the identities do;
 * CPU time of this process (bench.h), per cycle, the median of 7 rounds of
 * 20 cycles, the two ways alternately:
 *
 *  - get: proctab_get, which reads each process's kept stat file (the
 *    kernel adds up every thread's times for it);
 *  - live: proctab_get_live, one poll of the processes' pidfds a cycle,
 *    each stat file read again every 16th cycle.
 *
 *   make build/release/bench/proc_bench && build/release/bench/proc_bench [N [T [GAP_MS]]]
 *   (default 300 processes of 16 threads, no gap; GAP_MS sleeps before each cycle, as a period does)
 */
#include "../monitor/host/proctab.h"
#include "bench.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 7
#define CYCLES 20

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* A child of t threads that waits to be killed. */
static pid_t spawn(int t)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (int i = 1; i < t; i++) {
			pthread_t th;

			pthread_create(&th, NULL, idle_thread, NULL);
		}
		for (;;)
			pause();
	}
	return pid;
}

static void gap(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	if (ms > 0)
		nanosleep(&ts, NULL);
}

/* One round of CYCLES cycles from cycle *c on, each asking every pid once: CPU µs a cycle. */
static double round_us(struct proctab *t, const pid_t *pids, int n, int live, int64_t *c, int gap_ms, int *missing)
{
	double cpu = 0;

	for (int k = 0; k < CYCLES; k++, (*c)++) {
		double t0;

		gap(gap_ms);
		t0 = bench_cpu_us();
		for (int i = 0; i < n; i++) {
			struct proc_info *p;

			if ((live ? proctab_get_live(t, *c, pids[i], &p) : proctab_get(t, *c, pids[i], &p)) || !p)
				(*missing)++;
		}
		cpu += bench_cpu_us() - t0;
	}
	return cpu / CYCLES;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 300, threads = argc > 2 ? atoi(argv[2]) : 16;
	int gap_ms = argc > 3 ? atoi(argv[3]) : 0, missing = 0;
	double get[ROUNDS], live[ROUNDS];
	struct proctab tg, tl;
	int64_t cg = 1, cl = 1;
	pid_t *pids;

	if (n < 1 || threads < 1) {
		fprintf(stderr, "usage: proc_bench [PROCESSES [THREADS [GAP_MS]]]\n");
		return 2;
	}
	pids = calloc((size_t)n, sizeof(*pids));
	for (int i = 0; i < n; i++)
		pids[i] = spawn(threads);
	sleep(1); /* their threads started */
	proctab_init(&tg, "/proc");
	proctab_init(&tl, "/proc");
	round_us(&tg, pids, n, 0, &cg, 0, &missing); /* the files opened, the pidfds taken */
	round_us(&tl, pids, n, 1, &cl, 0, &missing);
	for (int r = 0; r < ROUNDS; r++) {
		get[r] = round_us(&tg, pids, n, 0, &cg, gap_ms, &missing);
		live[r] = round_us(&tl, pids, n, 1, &cl, gap_ms, &missing);
	}
	printf("== asking after %d processes of %d threads each on /proc, once a cycle%s (bench/proc_bench.c)\n", n,
	       threads, gap_ms ? " a gap apart" : "");
	printf("  pidfds: %s (descriptors kept: get %zu, live %zu)\n", tl.pidfd_ok == 1 ? "yes" : "no", tg.kp_fds,
	       tl.kp_fds);
	{
		double g = bench_median(get, ROUNDS), l = bench_median(live, ROUNDS);

		printf("  get  (a stat read each)     %9.1f us/cycle  %6.2f us/process\n", g, g / n);
		printf("  live (one poll, 1/16 reads) %9.1f us/cycle  %6.2f us/process\n", l, l / n);
		printf("  ratio live / get            %9.2f   target <= 0.5   %s\n", l / g,
		       l / g <= 0.5 && !missing && tl.pidfd_ok == 1 ? "PASS" : "FAIL");
		if (missing)
			printf("  %d answers had no process: FAIL\n", missing);
	}
	proctab_free(&tg);
	proctab_free(&tl);
	for (int i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	for (int i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);
	free(pids);
	return 0;
}
