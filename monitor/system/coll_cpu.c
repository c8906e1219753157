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
#include "../core/collector.h"
#include "../host/host.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cpu_state {
	const char *root; /* borrowed from the host: --path.procfs */
	struct procfs pf;
	int stat_fd;      /* stat kept open (procfs_read_keep) */
	struct proc_stat prev, cur;
	int have_prev;
	/*
	 * usage_data is kept between cycles and lent to each report (the report
	 * takes a reference), so a steady state allocates nothing per CPU:
	 * values are updated in place through fields[cpu][state].
	 */
	json_t *usage_data;
	json_t *(*fields)[7];
	size_t nfields;
	json_t *average_usage; /* the same for average_usage, through avgf */
	json_t *avgf[7];
};

static int cpu_sample(struct cpu_state *s, struct proc_stat *out, char *err, size_t errsz)
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
	s->usage_data = json_object();
	if (rc)
		return rc;
	s->have_prev = cpu_sample(s, &s->prev, err, sizeof(err)) == 0;
	return 0;
}

enum { F_USER, F_NICE, F_SYSTEM, F_IDLE, F_IOWAIT, F_IRQ, F_SOFTIRQ, F_STEAL, F_COUNT };

static const char *const field_names[F_COUNT] = {
	"user", "nice", "system", "idle", "io_wait", "irq", "soft_irq", NULL /* steal: in the total only */
};

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

/* A new {"user": 0.0, ...} object; its values are stored in out[] (borrowed). */
static json_t *split_new(json_t *out[7])
{
	json_t *o = json_object();

	for (int i = 0; i < 7; i++) {
		out[i] = json_real(0);
		json_object_set_new(o, field_names[i], out[i]);
	}
	return o;
}

/* Set the percent split of per-state ticks d; the total includes steal. */
static void split_set(json_t *const f[7], const uint64_t d[F_COUNT])
{
	uint64_t total = 0;

	for (int i = 0; i < F_COUNT; i++)
		total += d[i];
	for (int i = 0; i < 7; i++)
		json_real_set(f[i], 100.0 * (double)d[i] / (double)total);
}

/* The cached object for CPU i, created on first use; NULL-safe removal when it has no interval. */
static json_t *const *cpu_fields(struct cpu_state *s, size_t i, int present)
{
	char key[24];

	if (i >= s->nfields) {
		size_t n = s->nfields ? s->nfields : 8;

		while (n <= i)
			n *= 2;
		s->fields = xrealloc(s->fields, n * sizeof(*s->fields));
		memset(s->fields + s->nfields, 0, (n - s->nfields) * sizeof(*s->fields));
		s->nfields = n;
	}
	if (present && !s->fields[i][0]) {
		snprintf(key, sizeof(key), "%zu", i);
		json_object_set_new(s->usage_data, key, split_new(s->fields[i]));
	} else if (!present && s->fields[i][0]) {
		snprintf(key, sizeof(key), "%zu", i);
		json_object_del(s->usage_data, key);
		memset(s->fields[i], 0, sizeof(s->fields[i]));
	}
	return s->fields[i];
}

static void cpu_collect(void *state, const struct cycle *cy, const enum group_id *due, size_t ndue, json_t *group)
{
	struct cpu_state *s = state;
	struct proc_stat tmp;
	uint64_t d[F_COUNT], sum[F_COUNT] = { 0 };
	char err[256];
	size_t n = 0;

	(void)due;
	(void)ndue;
	(void)cy;
	if (s->pf.dirfd < 0 && procfs_open(&s->pf, s->root)) {
		set_error(group, "cannot open %s: %s", s->root, strerror(errno));
		return;
	}
	if (cpu_sample(s, &s->cur, err, sizeof(err))) {
		set_error(group, "%s", err);
		return;
	}
	if (!s->have_prev) {
		set_error(group, "no baseline sample yet; usage is reported from the next period");
		goto swap;
	}
	/*
	 * The average is taken over the CPUs online in both samples, not from the
	 * aggregate "cpu" line: the kernel sums that over all possible CPUs, so it
	 * jumps when a CPU goes offline or comes back.
	 */
	for (size_t i = 0; i < s->cur.ncpu || i < s->nfields; i++) {
		int ok = i < s->cur.ncpu && i < s->prev.ncpu && cpu_delta(&s->prev.cpu[i], &s->cur.cpu[i], d) == 0;
		json_t *const *f = cpu_fields(s, i, ok);

		if (!ok)
			continue;
		for (int k = 0; k < F_COUNT; k++)
			sum[k] += d[k];
		split_set(f, d);
		n++;
	}
	if (!n) {
		set_error(group, "no CPU time passed between samples");
		goto swap;
	}
	if (!s->average_usage)
		s->average_usage = split_new(s->avgf);
	split_set(s->avgf, sum);
	json_object_set(group, "average_usage", s->average_usage);
	json_object_set(group, "usage_data", s->usage_data);
	json_object_set_new(group, "context_switch_count",
			    json_integer(s->cur.ctxt >= s->prev.ctxt ? (json_int_t)(s->cur.ctxt - s->prev.ctxt) : 0));
swap:
	tmp = s->prev;
	s->prev = s->cur;
	s->cur = tmp;
	s->have_prev = 1;
}

static void cpu_close(void *state)
{
	struct cpu_state *s = state;

	if (!s)
		return;
	procfs_close(&s->pf);
	if (s->stat_fd >= 0)
		close(s->stat_fd);
	json_decref(s->usage_data);
	json_decref(s->average_usage);
	free(s->fields);
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
	.collect = cpu_collect,
	.close = cpu_close,
};
