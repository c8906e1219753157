/* SPDX-License-Identifier: MIT */
/* Device records and their serializer (devrec.h). */
#include "devrec.h"
#include "../../common/jset.h"
#include "../../common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void devrec_clear(struct devrec *r)
{
	r->have = 0;
	r->ntemp = 0;
	r->nproc = 0;
}

void devrec_free(struct devrec *r)
{
	if (!r)
		return;
	free(r->proc);
	r->proc = NULL;
	r->nproc = r->aproc = 0;
}

/* The index of the sensor named key, or r->ntemp. */
static size_t temp_find(const struct devrec *r, const char *key)
{
	size_t i;

	for (i = 0; i < r->ntemp && strcmp(r->temp[i].name, key); i++)
		;
	return i;
}

void devrec_temp_add(struct devrec *r, const char *name, const char *alt, double celsius)
{
	char key[DEVREC_NAME];
	size_t i;

	snprintf(key, sizeof(key), "%s", name);
	utf8_sanitize(key);
	i = temp_find(r, key);
	if (i < r->ntemp && alt) {
		snprintf(key, sizeof(key), "%s", alt);
		utf8_sanitize(key);
		i = temp_find(r, key);
	}
	if (i < r->ntemp) {
		r->temp[i].celsius = celsius;
		return;
	}
	if (r->ntemp == DEVREC_TEMPS)
		return;
	memcpy(r->temp[r->ntemp].name, key, sizeof(key));
	r->temp[r->ntemp++].celsius = celsius;
}

void devrec_set_memory(struct devrec *r, uint64_t total, uint64_t used, uint64_t free_b, uint64_t na)
{
	r->mem_total = total;
	r->mem_used = used;
	r->mem_free = free_b;
	r->have |= (total != na ? DR_MEM_TOTAL : 0) | (used != na ? DR_MEM_USED : 0) | (free_b != na ? DR_MEM_FREE : 0);
}

struct devrec_proc *devrec_proc(struct devrec *r, pid_t pid)
{
	struct devrec_proc *p;

	r->have |= DR_PROCS;
	for (size_t i = 0; i < r->nproc; i++)
		if (r->proc[i].pid == pid)
			return &r->proc[i];
	if (r->nproc == r->aproc) {
		r->aproc = r->aproc ? r->aproc * 2 : 8;
		r->proc = xrealloc(r->proc, r->aproc * sizeof(*r->proc));
	}
	p = &r->proc[r->nproc++];
	p->pid = pid;
	p->mem.kind = DEVREC_B_NONE;
	p->neng = 0;
	return p;
}

/* b = v as the report writes a u64. */
static void bytes_set(struct devrec_bytes *b, uint64_t v)
{
	if (v <= (uint64_t)INT64_MAX) {
		b->kind = DEVREC_B_INT;
		b->n = v;
	} else {
		b->kind = DEVREC_B_REAL;
		b->r = (double)v;
	}
}

void devrec_bytes_add(struct devrec_bytes *b, uint64_t bytes)
{
	switch (b->kind) {
	case DEVREC_B_NONE:
		bytes_set(b, bytes);
		break;
	case DEVREC_B_INT:
		if (b->n <= UINT64_MAX - bytes) {
			bytes_set(b, b->n + bytes);
		} else { /* past 2^64: a real, never a wrapped sum */
			b->kind = DEVREC_B_REAL;
			b->r = (double)b->n + (double)bytes;
		}
		break;
	default:
		b->r += (double)bytes;
		break;
	}
}

void devrec_proc_engine_add(struct devrec_proc *p, unsigned e, double pct)
{
	size_t i;

	if (e >= DEVREC_ENGINES)
		return;
	for (i = 0; i < p->neng && p->order[i] != e; i++)
		;
	if (i == p->neng) {
		p->order[p->neng++] = (uint8_t)e;
		p->eng[e] = pct;
	} else {
		p->eng[e] = pct + p->eng[e];
	}
	if (p->eng[e] > 100.0)
		p->eng[e] = 100.0;
}

/* ---- the serializer ---------------------------------------------------------------------- */

/* d[k] = v (real) when bit is in have, else no d[k]. */
static void put_real(json_t *d, uint32_t have, uint32_t bit, const char *k, double v)
{
	if (have & bit)
		jset_real(d, k, v);
	else
		json_object_del(d, k);
}

static void put_u64(json_t *d, uint32_t have, uint32_t bit, const char *k, uint64_t v)
{
	if (have & bit)
		jset_u64(d, k, v);
	else
		json_object_del(d, k);
}

void devrec_util_json(const struct devrec *r, json_t *d)
{
	put_real(d, r->have, DR_CORE_PCT, "core_percent", r->core_pct);
	put_real(d, r->have, DR_MEMBW_PCT, "memory_bandwidth_percent", r->membw_pct);
}

void devrec_memory_json(const struct devrec *r, json_t *d)
{
	put_u64(d, r->have, DR_MEM_TOTAL, "total_bytes", r->mem_total);
	put_u64(d, r->have, DR_MEM_USED, "used_bytes", r->mem_used);
	put_u64(d, r->have, DR_MEM_FREE, "free_bytes", r->mem_free);
}

void devrec_power_json(const struct devrec *r, json_t *d)
{
	put_real(d, r->have, DR_POWER, "power_watts", r->power_w);
}

void devrec_energy_json(const struct devrec *r, json_t *d)
{
	put_real(d, r->have, DR_ENERGY, "energy_joules", r->energy_j);
	put_real(d, r->have, DR_ENERGY_TOTAL, "energy_total_joules", r->energy_total_j);
}

void devrec_temps_json(const struct devrec *r, json_t *d)
{
	json_t *t, *v;
	const char *k;
	void *tmp;

	if (!r->ntemp) {
		json_object_del(d, "temperatures_celsius");
		return;
	}
	t = jset_obj(d, "temperatures_celsius");
	json_object_foreach_safe(t, tmp, k, v) {
		size_t i;

		for (i = 0; i < r->ntemp && strcmp(r->temp[i].name, k); i++)
			;
		if (i == r->ntemp)
			json_object_del(t, k);
	}
	for (size_t i = 0; i < r->ntemp; i++)
		jset_real(t, r->temp[i].name, r->temp[i].celsius);
}

/* Does p have what view writes? */
static int proc_shown(const struct devrec_proc *p, enum devrec_pview view)
{
	return view == DEVREC_PROC_MEMORY ? p->mem.kind != DEVREC_B_NONE : p->neng > 0;
}

/* The index in r of the shown process whose key is k, or -1. */
static long proc_by_key(const struct devrec *r, enum devrec_pview view, const char *k)
{
	char *end;
	long pid = strtol(k, &end, 10);

	if (*end || end == k)
		return -1;
	for (size_t i = 0; i < r->nproc; i++)
		if (r->proc[i].pid == pid && proc_shown(&r->proc[i], view))
			return (long)i;
	return -1;
}

/* A process's engines into its object o, in place. */
static void engines_json(const struct devrec_proc *p, const char *const *eng, json_t *o)
{
	json_t *v;
	const char *k;
	void *tmp;

	json_object_foreach_safe(o, tmp, k, v) {
		size_t i;

		for (i = 0; i < p->neng && strcmp(eng[p->order[i]], k); i++)
			;
		if (i == p->neng)
			json_object_del(o, k);
	}
	for (size_t i = 0; i < p->neng; i++)
		jset_real(o, eng[p->order[i]], p->eng[p->order[i]]);
}

void devrec_procs_json(const struct devrec *r, enum devrec_pview view, const char *const *eng, json_t *d)
{
	json_t *ps, *v;
	const char *k;
	void *tmp;
	char key[24];

	if (!(r->have & DR_PROCS)) {
		json_object_del(d, "processes");
		return;
	}
	ps = jset_obj(d, "processes");
	json_object_foreach_safe(ps, tmp, k, v)
		if (proc_by_key(r, view, k) < 0)
			json_object_del(ps, k);
	for (size_t i = 0; i < r->nproc; i++) {
		const struct devrec_proc *p = &r->proc[i];

		if (!proc_shown(p, view))
			continue;
		snprintf(key, sizeof(key), "%ld", (long)p->pid);
		if (view == DEVREC_PROC_ENGINES)
			engines_json(p, eng, jset_obj(ps, key));
		else if (p->mem.kind == DEVREC_B_INT)
			jset_int(ps, key, (json_int_t)p->mem.n);
		else
			jset_real(ps, key, p->mem.r);
	}
}
