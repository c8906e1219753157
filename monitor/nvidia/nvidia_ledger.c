/* SPDX-License-Identifier: MIT */
/*
 * The NVML call ledger; see nvidia_ledger.h.
 *
 * Entries are keyed by (group, function pointer) and named once, with
 * dladdr, by the symbol the pointer was resolved from, so the table shows
 * the version the driver gave (nvmlDeviceGetComputeRunningProcesses_v3).
 * One mutex guards them: the producer, the PCIe workers and the event
 * thread all record. This is a debug mode; its own cost (two clock reads
 * and a lock per call, a few hundred nanoseconds) is small next to a
 * driver's ioctl but is in the figures.
 */
#include "nvidia_ledger.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NVL_MAX 160 /* (group, function) pairs at most; more are counted as "other" */

struct nvl_entry {
	const char *group;
	void *fn;
	char name[64];
	uint64_t calls, failed; /* failed: answered other than NVML_SUCCESS */
	int64_t cpu_ns, wall_ns;
};

struct nv_ledger {
	pthread_mutex_t mu;
	long every;       /* print every this many cycles; 0: at close only */
	uint64_t cycles;
	struct nvl_entry e[NVL_MAX];
	size_t n;
	uint64_t dropped; /* calls past NVL_MAX entries */
};

struct nv_ledger *nv_ledger_new(void)
{
	const char *v = getenv("ACCEL_NVML_LEDGER");
	struct nv_ledger *l;
	long n;

	if (!v || !*v || !strcmp(v, "0"))
		return NULL;
	n = strtol(v, NULL, 10);
	l = xcalloc(1, sizeof(*l));
	pthread_mutex_init(&l->mu, NULL);
	l->every = n > 1 ? n : 0;
	return l;
}

void nv_ledger_mark(struct nv_lctx *c)
{
	c->cpu0 = clock_thread_cpu_ns();
	c->wall0 = clock_mono_ns();
}

void nv_ledger_add(struct nv_lctx *c, const void *fn, nvmlReturn_t rc)
{
	int64_t cpu = clock_thread_cpu_ns() - c->cpu0, wall = clock_mono_ns() - c->wall0;
	struct nv_ledger *l = c->l;
	const char *group = c->group ? c->group : "?";
	void *p;
	size_t i;

	memcpy(&p, fn, sizeof(p)); /* POSIX: a function's address and a void * share one representation */
	pthread_mutex_lock(&l->mu);
	for (i = 0; i < l->n && (l->e[i].fn != p || strcmp(l->e[i].group, group)); i++)
		;
	if (i == l->n) {
		Dl_info info;

		if (l->n == NVL_MAX) {
			l->dropped++;
			pthread_mutex_unlock(&l->mu);
			return;
		}
		l->n++;
		memset(&l->e[i], 0, sizeof(l->e[i]));
		l->e[i].group = group;
		l->e[i].fn = p;
		if (dladdr(p, &info) && info.dli_sname)
			snprintf(l->e[i].name, sizeof(l->e[i].name), "%s", info.dli_sname);
		else
			snprintf(l->e[i].name, sizeof(l->e[i].name), "%p", p);
	}
	l->e[i].calls++;
	l->e[i].failed += rc != NVML_SUCCESS;
	l->e[i].cpu_ns += cpu;
	l->e[i].wall_ns += wall;
	pthread_mutex_unlock(&l->mu);
}

/* Table order: by group name, and within a group the costliest call first. */
static int by_cpu(const void *a, const void *b)
{
	const struct nvl_entry *x = a, *y = b;
	int g = strcmp(x->group, y->group);

	if (g)
		return g;
	return (x->cpu_ns < y->cpu_ns) - (x->cpu_ns > y->cpu_ns);
}

void nv_ledger_print(struct nv_ledger *l, FILE *f, const char *title)
{
	struct nvl_entry *e;
	size_t n;
	uint64_t cycles;
	double per, cpu_total = 0, wall_total = 0;

	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	n = l->n;
	cycles = l->cycles;
	e = xmalloc((n ? n : 1) * sizeof(*e));
	memcpy(e, l->e, n * sizeof(*e));
	pthread_mutex_unlock(&l->mu);
	qsort(e, n, sizeof(*e), by_cpu);
	per = cycles ? (double)cycles : 1;
	fprintf(f, "nvidia: NVML call ledger, %s, %llu cycles (CPU: the calling thread's; per cycle: over %llu)\n",
		title, (unsigned long long)cycles, (unsigned long long)(cycles ? cycles : 1));
	fprintf(f, "  %-20s %-44s %9s %9s %10s %10s %10s %7s\n", "group", "function", "calls", "per cycle",
		"CPU ms", "CPU us/call", "wall us/call", "not ok");
	for (size_t i = 0; i < n; i++) {
		double c = (double)e[i].calls;

		fprintf(f, "  %-20s %-44s %9llu %9.2f %10.3f %10.1f %10.1f %7llu\n", e[i].group, e[i].name,
			(unsigned long long)e[i].calls, c / per, e[i].cpu_ns / 1e6, e[i].cpu_ns / 1e3 / c,
			e[i].wall_ns / 1e3 / c, (unsigned long long)e[i].failed);
		cpu_total += e[i].cpu_ns / 1e6;
		wall_total += e[i].wall_ns / 1e6;
	}
	fprintf(f, "  total CPU %.3f ms (%.3f ms per cycle), wall %.3f ms%s\n", cpu_total, cpu_total / per, wall_total,
		l->dropped ? " (some calls past the table's size were not counted)" : "");
	fflush(f);
	free(e);
}

void nv_ledger_cycle(struct nv_ledger *l)
{
	int print;

	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	l->cycles++;
	print = l->every && l->cycles % (uint64_t)l->every == 0;
	pthread_mutex_unlock(&l->mu);
	if (print)
		nv_ledger_print(l, stderr, "so far");
}

void nv_ledger_free(struct nv_ledger *l)
{
	if (!l)
		return;
	nv_ledger_print(l, stderr, "at close");
	pthread_mutex_destroy(&l->mu);
	free(l);
}
