/* SPDX-License-Identifier: MIT */
/*
 * Energy meters and the split of a device's energy among its processes
 * (energy.h; docs/energy.md). Pure arithmetic on the caller's structs.
 */
#include "energy.h"

#include "../../common/jset.h"
#include "../../common/timeutil.h"

#include "../../common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int energy_meter_counter(struct energy_meter *m, uint64_t raw, uint64_t range, double unit_j, int64_t now_ns,
			 double *period_j)
{
	uint64_t inc;
	int had = m->have;

	*period_j = 0;
	if (had) {
		if (raw >= m->last_raw)
			inc = raw - m->last_raw;
		else if (range && m->last_raw < range)
			inc = range - m->last_raw + raw; /* wrapped once */
		else
			inc = raw; /* went back with no range: a fresh start */
		*period_j = (double)inc * unit_j;
		m->total_j += *period_j;
	}
	m->have = 1;
	m->last_raw = raw;
	m->last_ns = now_ns;
	return had;
}

void energy_meter_see_power(struct energy_meter *m, double watts)
{
	if (watts < 0)
		return;
	if (!m->have_min || watts < m->min_w)
		m->min_w = watts;
	m->have_min = 1;
}

int energy_meter_power(struct energy_meter *m, double watts, int64_t now_ns, double *period_j)
{
	int had = m->have && now_ns >= m->last_ns;

	*period_j = 0;
	energy_meter_see_power(m, watts);
	if (had) {
		*period_j = (m->last_w + watts) / 2.0 * (double)(now_ns - m->last_ns) / (double)NS_PER_S;
		m->total_j += *period_j;
	}
	m->have = 1;
	m->last_w = watts;
	m->last_ns = now_ns;
	return had;
}

void energy_meter_reset(struct energy_meter *m)
{
	*m = (struct energy_meter){ 0 };
}

void energy_meter_json(const struct energy_meter *m, int have_period, double period_j, json_t *d)
{
	if (m->have && have_period)
		json_object_set_new(d, "energy_joules", json_real(period_j));
	else
		json_object_del(d, "energy_joules");
}

const char *energy_basis_name(enum energy_basis b)
{
	switch (b) {
	case ENERGY_BY_UTILIZATION:
		return "utilization";
	case ENERGY_BY_MEMORY:
		return "memory";
	case ENERGY_BY_EQUAL:
		return "equal";
	default:
		return "";
	}
}

struct energy_share *energy_share_of(struct energy_share **p, size_t *n, size_t *cap, uint32_t pid)
{
	for (size_t i = 0; i < *n; i++)
		if ((*p)[i].pid == pid)
			return &(*p)[i];
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 8;
		*p = xrealloc(*p, *cap * sizeof(**p));
	}
	(*p)[*n] = (struct energy_share){ .pid = pid };
	return &(*p)[(*n)++];
}

struct energy_split energy_split(double energy_j, double period_s, double idle_w, struct energy_share *p,
				 size_t n)
{
	struct energy_split sp = { 0 };
	double sum_u = 0, sum_m = 0;

	if (energy_j < 0)
		energy_j = 0;
	sp.idle_j = idle_w >= 0 && period_s > 0 ? idle_w * period_s : 0;
	if (sp.idle_j > energy_j)
		sp.idle_j = energy_j;
	sp.active_j = energy_j - sp.idle_j;
	for (size_t i = 0; i < n; i++) {
		sum_u += p[i].util > 0 ? p[i].util : 0;
		sum_m += p[i].memory > 0 ? p[i].memory : 0;
	}
	sp.basis = !n ? ENERGY_BY_NONE : sum_u > 0 ? ENERGY_BY_UTILIZATION : sum_m > 0 ? ENERGY_BY_MEMORY
											: ENERGY_BY_EQUAL;
	for (size_t i = 0; i < n; i++) {
		double w = sp.basis == ENERGY_BY_UTILIZATION ? (p[i].util > 0 ? p[i].util / sum_u : 0)
			   : sp.basis == ENERGY_BY_MEMORY    ? (p[i].memory > 0 ? p[i].memory / sum_m : 0)
							     : 1.0 / (double)n;

		p[i].joules = sp.active_j * w;
	}
	return sp;
}

/* Is pid among p[0..n)? */
static int has_pid(const struct energy_share *p, size_t n, unsigned long pid)
{
	for (size_t i = 0; i < n; i++)
		if (p[i].pid == pid)
			return 1;
	return 0;
}

void energy_split_json(const struct energy_split *sp, double idle_w, const struct energy_share *p, size_t n,
		       json_t *d)
{
	json_t *procs = jset_obj(d, "processes"), *v;
	const char *key;
	void *tmp;
	char k[16];

	if (idle_w >= 0)
		jset_real(d, "idle_power_watts", idle_w);
	else
		json_object_del(d, "idle_power_watts");
	jset_real(d, "idle_energy_joules", sp->idle_j);
	jset_real(d, "active_energy_joules", sp->active_j);
	if (sp->basis != ENERGY_BY_NONE)
		jset_str(d, "energy_attribution", energy_basis_name(sp->basis));
	else
		json_object_del(d, "energy_attribution");
	/* in place: a collector that keeps its objects between cycles allocates only for a new process */
	json_object_foreach_safe(procs, tmp, key, v) {
		char *end;
		unsigned long pid = strtoul(key, &end, 10);

		if (*end || !has_pid(p, n, pid))
			json_object_del(procs, key);
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(k, sizeof(k), "%u", (unsigned)p[i].pid);
		jset_real(procs, k, p[i].joules);
	}
}

/* ---- the ledger ---------------------------------------------------------------------------- */

struct ledger_proc {
	uint32_t pid;
	double j;      /* joules so far */
	int64_t seen;  /* CLOCK_MONOTONIC ns of the last add */
};

struct ledger_dev {
	char uuid[96];
	double j;
};

struct energy_ledger {
	struct ledger_proc *p;
	size_t np, ap;
	struct ledger_dev *d;
	size_t nd, ad;
};

struct energy_ledger *energy_ledger_new(void)
{
	return xcalloc(1, sizeof(struct energy_ledger));
}

void energy_ledger_free(struct energy_ledger *l)
{
	if (!l)
		return;
	free(l->p);
	free(l->d);
	free(l);
}

static struct ledger_proc *ledger_find(struct energy_ledger *l, uint32_t pid)
{
	for (size_t i = 0; i < l->np; i++)
		if (l->p[i].pid == pid)
			return &l->p[i];
	return NULL;
}

void energy_ledger_add_process(struct energy_ledger *l, uint32_t pid, double j, int64_t now_ns)
{
	struct ledger_proc *e = ledger_find(l, pid);
	size_t keep = 0;

	if (!e) {
		for (size_t i = 0; i < l->np; i++) /* room first: processes gone for a while */
			if (now_ns - l->p[i].seen < ENERGY_LEDGER_KEEP_NS)
				l->p[keep++] = l->p[i];
		l->np = keep;
		if (l->np == l->ap) {
			l->ap = l->ap ? l->ap * 2 : 16;
			l->p = xrealloc(l->p, l->ap * sizeof(*l->p));
		}
		e = &l->p[l->np++];
		*e = (struct ledger_proc){ .pid = pid };
	}
	e->j += j;
	e->seen = now_ns;
}

void energy_ledger_add_device(struct energy_ledger *l, const char *uuid, double j)
{
	size_t i;

	for (i = 0; i < l->nd && strcmp(l->d[i].uuid, uuid); i++)
		;
	if (i == l->nd) {
		if (l->nd == l->ad) {
			l->ad = l->ad ? l->ad * 2 : 8;
			l->d = xrealloc(l->d, l->ad * sizeof(*l->d));
		}
		memset(&l->d[i], 0, sizeof(l->d[i]));
		snprintf(l->d[i].uuid, sizeof(l->d[i].uuid), "%s", uuid);
		l->nd++;
	}
	l->d[i].j += j;
}

int energy_ledger_device(const struct energy_ledger *l, const char *uuid, double *j)
{
	for (size_t i = 0; i < l->nd; i++)
		if (!strcmp(l->d[i].uuid, uuid)) {
			*j = l->d[i].j;
			return 0;
		}
	return -ENOENT;
}

size_t energy_ledger_count(const struct energy_ledger *l)
{
	return l->np;
}

uint32_t energy_ledger_at(const struct energy_ledger *l, size_t i, double *j)
{
	*j = i < l->np ? l->p[i].j : 0;
	return i < l->np ? l->p[i].pid : 0;
}
