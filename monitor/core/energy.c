/* SPDX-License-Identifier: MIT */
/*
 * Energy meters and the split of a device's energy among its processes
 * (energy.h; docs/energy.md): arithmetic on the caller's structs.
 */
#include "energy.h"
#include "collector.h"

#include "../../common/jset.h"
#include "../../common/log.h"
#include "../../common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int energy_counter_step(uint64_t last, uint64_t raw, uint64_t range, double unit_j, double period_s, double max_w,
			uint64_t *inc, char *why, size_t why_len)
{
	double lim = max_w > 0 ? max_w * ENERGY_LIMIT_SLACK : ENERGY_MAX_W, j;

	*inc = 0;
	if (range && raw >= range) {
		snprintf(why, why_len, "the reading %llu is above the counter's range (%llu)", (unsigned long long)raw,
			 (unsigned long long)(range - 1));
		return -ERANGE;
	}
	if (raw < last && !(range && last < range)) {
		snprintf(why, why_len, "the counter went back (from %llu to %llu)", (unsigned long long)last,
			 (unsigned long long)raw);
		return -ERANGE;
	}
	*inc = raw >= last ? raw - last : range - last + raw; /* in integers: exact near 2^64 */
	j = (double)*inc * unit_j;
	if (period_s > 0 && j / period_s > lim) {
		snprintf(why, why_len, "the counter rose by %.0f J in %.3f s: %.0f W, more than the %.0f W it can be%s",
			 j, period_s, j / period_s, lim, raw < last ? " (a wrap)" : "");
		*inc = 0;
		return -ERANGE;
	}
	return 0;
}

int energy_meter_counter(struct energy_meter *m, uint64_t raw, uint64_t range, double unit_j, double max_w,
			 int64_t now_ns, double *period_j)
{
	uint64_t inc;
	int had = m->have;

	*period_j = 0;
	if (had) {
		double s = now_ns > m->last_ns ? (double)(now_ns - m->last_ns) / (double)NS_PER_S : 0;

		if (energy_counter_step(m->last_raw, raw, range, unit_j, s, max_w, &inc, m->why, sizeof(m->why))) {
			m->have = !(range && raw >= range); /* afresh from this reading, unless it is no reading */
			m->last_raw = raw;
			m->last_ns = now_ns;
			return -1;
		}
		*period_j = (double)inc * unit_j;
		m->total_j += *period_j;
	}
	m->have = 1;
	m->last_raw = raw;
	m->last_ns = now_ns;
	return had;
}

void energy_counter_refused(json_t *group, int *noted, const char *type, const char *key, const char *why)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "%s: device %s: energy counter not plausible, %s: the period has no energy and the "
		 "counter starts afresh", type, key, why);
	log_warn("%s", msg);
	add_error(group, "%s", msg);
	*noted = 1;
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

/* ---- a cycle's observations ------------------------------------------------------------------------ */

void energy_obs_add(struct energy_obs_list *l, const struct energy_obs *o)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		l->o = xrealloc(l->o, l->cap * sizeof(*l->o));
	}
	l->o[l->n++] = *o;
}

void energy_obs_move(struct energy_obs_list *from, struct energy_obs_list *to)
{
	for (size_t i = 0; i < from->n; i++)
		energy_obs_add(to, &from->o[i]);
	from->n = 0;
}

void energy_obs_free(struct energy_obs_list *l)
{
	if (!l)
		return;
	free(l->o);
	l->o = NULL;
	l->n = l->cap = 0;
}
