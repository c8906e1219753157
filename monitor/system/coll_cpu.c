/* SPDX-License-Identifier: MIT */
/*
 * vcpu_usage: per-CPU and average CPU time split over the period, from two
 * samples of /proc/stat, in neuron-monitor's fields (user, nice, system,
 * idle, io_wait, irq, soft_irq, in percent of the CPU time that passed,
 * steal included in that total), plus context switches over the period.
 *
 * A CPU that went offline since the last sample is left out; one that came
 * online appears from the next period on, once it has a baseline.
 */
#include "../../common/jsonw.h"
#include "../core/collector.h"
#include "../host/host.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { F_USER, F_NICE, F_SYSTEM, F_IDLE, F_IOWAIT, F_IRQ, F_SOFTIRQ, F_STEAL, F_COUNT };

/* The members of one CPU's split, in the report's order; steal is in the total only. */
static const char *const split_keys[7] = {
	"{\"user\":", ",\"nice\":", ",\"system\":", ",\"idle\":", ",\"io_wait\":", ",\"irq\":", ",\"soft_irq\":"
};

struct cpu_state {
	const char *root; /* borrowed from the host: --path.procfs */
	struct procfs pf;
	int stat_fd;      /* stat kept open (procfs_read_keep) */
	struct proc_stat prev, cur;
	int have_prev;
	/* The record of the last good sample: what write() writes. */
	uint64_t (*d)[F_COUNT]; /* per CPU: its ticks in each state over the period */
	unsigned char *ok;      /* per CPU: it has an interval (else it is left out) */
	size_t ncpu, cap;
	uint64_t sum[F_COUNT];  /* over the CPUs with an interval: average_usage */
	uint64_t ctxt;          /* context switches over the period */
};

static int stat_read(struct cpu_state *s, struct proc_stat *out, char *err, size_t errsz)
{
	const char *text = procfs_read_keep(&s->pf, "stat", &s->stat_fd);

	if (!text) {
		snprintf(err, errsz, "cannot read stat: %s", strerror(errno));
		return -1;
	}
	if (procfs_parse_stat(text, out)) {
		snprintf(err, errsz, "cannot parse stat: unexpected format");
		return -1;
	}
	return 0;
}

static int cpu_open(const struct mon_env *env, const struct coll_target *t, void **state)
{
	struct cpu_state *s = xcalloc(1, sizeof(*s));
	char err[256];
	int rc = procfs_open(&s->pf, host_procfs(env->host));

	(void)t;
	*state = s;
	s->stat_fd = PROCFS_UNKEPT;
	s->root = host_procfs(env->host);
	if (rc)
		return rc;
	s->have_prev = stat_read(s, &s->prev, err, sizeof(err)) == 0;
	return 0;
}

/*
 * Ticks spent in each state between two samples of one CPU, added to sum.
 * Returns 0, or -1 when the CPU has no valid interval (absent from one
 * sample, or counters that went backwards across a hot-plug).
 */
static int cpu_delta(const struct cpu_times *a, const struct cpu_times *b, uint64_t d[F_COUNT])
{
	const uint64_t va[F_COUNT] = { a->user, a->nice, a->system, a->idle, a->iowait, a->irq, a->softirq, a->steal };
	const uint64_t vb[F_COUNT] = { b->user, b->nice, b->system, b->idle, b->iowait, b->irq, b->softirq, b->steal };
	uint64_t total = 0;

	if (!a->present || !b->present)
		return -1;
	for (int i = 0; i < F_COUNT; i++) {
		if (vb[i] < va[i])
			return -1;
		d[i] = vb[i] - va[i];
		total += d[i];
	}
	return total ? 0 : -1;
}

/* Append {"user": ..., "soft_irq": ...}: the percent split of per-state ticks d, the total including steal. */
static int split_write(struct buf *b, const uint64_t d[F_COUNT])
{
	uint64_t total = 0;
	int rc = 0;

	for (int i = 0; i < F_COUNT; i++)
		total += d[i];
	for (int i = 0; i < 7 && !rc; i++)
		rc = buf_puts(b, split_keys[i]) ||
		     json_write_real(b, 100.0 * (double)d[i] / (double)total);
	return rc || buf_puts(b, "}") ? -ENOSPC : 0;
}

/* Room in the record for n CPUs. */
static void record_reserve(struct cpu_state *s, size_t n)
{
	if (n <= s->cap)
		return;
	s->cap = n;
	s->d = xrealloc(s->d, n * sizeof(*s->d));
	s->ok = xrealloc(s->ok, n);
}

static int cpu_sample(void *state, const struct cycle *cy, char *err, size_t errsz)
{
	struct cpu_state *s = state;
	struct proc_stat tmp;
	int rc = 0;

	(void)cy;
	if (s->pf.dirfd < 0 && procfs_open(&s->pf, s->root)) {
		snprintf(err, errsz, "cannot open %s: %s", s->root, strerror(errno));
		return -1;
	}
	if (stat_read(s, &s->cur, err, errsz))
		return -1;
	if (!s->have_prev) {
		snprintf(err, errsz, "no baseline sample yet; usage is reported from the next period");
		rc = -1;
		goto swap;
	}
	/*
	 * The average is taken over the CPUs online in both samples, not from the
	 * aggregate "cpu" line: the kernel sums that over all possible CPUs, so it
	 * jumps when a CPU goes offline or comes back.
	 */
	record_reserve(s, s->cur.ncpu);
	s->ncpu = s->cur.ncpu;
	memset(s->sum, 0, sizeof(s->sum));
	rc = -1;
	for (size_t i = 0; i < s->ncpu; i++) {
		s->ok[i] = i < s->prev.ncpu && cpu_delta(&s->prev.cpu[i], &s->cur.cpu[i], s->d[i]) == 0;
		for (int k = 0; s->ok[i] && k < F_COUNT; k++)
			s->sum[k] += s->d[i][k];
		if (s->ok[i])
			rc = 0;
	}
	if (rc)
		snprintf(err, errsz, "no CPU time passed between samples");
	s->ctxt = s->cur.ctxt >= s->prev.ctxt ? s->cur.ctxt - s->prev.ctxt : 0;
swap:
	tmp = s->prev;
	s->prev = s->cur;
	s->cur = tmp;
	s->have_prev = 1;
	return rc;
}

static int cpu_write(void *state, struct buf *b)
{
	const struct cpu_state *s = state;
	int rc, first = 1;

	rc = buf_puts(b, ",\"average_usage\":") || split_write(b, s->sum) || buf_puts(b, ",\"usage_data\":{");
	for (size_t i = 0; i < s->ncpu && !rc; i++) {
		if (!s->ok[i])
			continue;
		rc = buf_puts(b, first ? "\"" : ",\"") || json_write_u64(b, i) || buf_puts(b, "\":") ||
		     split_write(b, s->d[i]);
		first = 0;
	}
	rc = rc || buf_puts(b, "},\"context_switch_count\":") || json_write_u64(b, s->ctxt);
	return rc ? -ENOSPC : 0;
}

static void cpu_close(void *state)
{
	struct cpu_state *s = state;

	if (!s)
		return;
	procfs_close(&s->pf);
	if (s->stat_fd >= 0)
		close(s->stat_fd);
	free(s->d);
	free(s->ok);
	proc_stat_free(&s->prev);
	proc_stat_free(&s->cur);
	free(s);
}

const struct collector_ops coll_cpu_ops = {
	.name = "cpu",
	.rows = &cpu_rows,
	.scope = COLL_SYSTEM,
	.group = GROUP_VCPU_USAGE,
	.open = cpu_open,
	.sample = cpu_sample,
	.write = cpu_write,
	.close = cpu_close,
};
