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

/* key = s, cut to DEVREC_NAME - 1 bytes, invalid UTF-8 replaced (ASCII, the usual name, is copied as is). */
static void temp_key(char key[DEVREC_NAME], const char *s)
{
	unsigned char high = 0;
	size_t n;

	for (n = 0; n < DEVREC_NAME - 1 && s[n]; n++) {
		key[n] = s[n];
		high |= (unsigned char)s[n];
	}
	key[n] = '\0';
	if (high & 0x80)
		utf8_sanitize(key);
}

/* The sensor named name (else alt, when name is taken and alt is given), added when new; NULL when full. */
static struct devrec_temp *temp_slot(struct devrec *r, const char *name, const char *alt)
{
	char key[DEVREC_NAME];
	size_t i;

	temp_key(key, name);
	i = temp_find(r, key);
	if (i < r->ntemp && alt) {
		temp_key(key, alt);
		i = temp_find(r, key);
	}
	if (i < r->ntemp)
		return &r->temp[i];
	if (r->ntemp == DEVREC_TEMPS)
		return NULL;
	memcpy(r->temp[r->ntemp].name, key, sizeof(key));
	return &r->temp[r->ntemp++];
}

void devrec_temp_add(struct devrec *r, const char *name, const char *alt, double celsius)
{
	struct devrec_temp *t = temp_slot(r, name, alt);

	if (t) {
		t->celsius = celsius;
		t->whole = 0;
	}
}

void devrec_temp_whole(struct devrec *r, const char *name, uint64_t degrees)
{
	struct devrec_temp *t = temp_slot(r, name, NULL);

	if (t) {
		t->degrees = degrees;
		t->whole = 1;
	}
}

void devrec_set_memory(struct devrec *r, uint64_t total, uint64_t used, uint64_t free_b, uint64_t na)
{
	r->mem_total = total;
	r->mem_used = (struct u64sum){ .v = used }; /* set, not added to */
	r->mem_free = free_b;
	r->have |= (total != na ? DR_MEM_TOTAL : 0) | (used != na ? DR_MEM_USED : 0) | (free_b != na ? DR_MEM_FREE : 0);
}

void devrec_mem_used_add(struct devrec *r, uint64_t bytes)
{
	if (!(r->have & DR_MEM_USED)) {
		r->have |= DR_MEM_USED;
		r->mem_used = (struct u64sum){ 0 };
	}
	u64sum_add(&r->mem_used, bytes);
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
	p->mem = (struct u64sum){ 0 };
	p->has_mem = 0;
	p->neng = 0;
	return p;
}

void devrec_proc_mem_add(struct devrec_proc *p, uint64_t bytes)
{
	u64sum_add(&p->mem, bytes);
	p->has_mem = 1;
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

/* d[k] = v (real) when bit is in r's have, else no d[k]; on a fresh object added, nothing looked up. */
static void put_real(const struct devrec *r, json_t *d, uint32_t bit, const char *k, double v)
{
	if (r->fresh) {
		if (r->have & bit)
			json_object_set_new(d, k, json_real(v));
	} else if (r->have & bit) {
		jset_real(d, k, v);
	} else {
		json_object_del(d, k);
	}
}

/* The same for a never-wrapping sum (jset_u64sum's types). */
static void put_sum(const struct devrec *r, json_t *d, uint32_t bit, const char *k, const struct u64sum *v)
{
	if (r->fresh) {
		if (r->have & bit)
			json_object_set_new(d, k, json_u64sum(v));
	} else if (r->have & bit) {
		jset_u64sum(d, k, v);
	} else {
		json_object_del(d, k);
	}
}

/* The same for a u64 (jset_u64's types). */
static void put_u64(const struct devrec *r, json_t *d, uint32_t bit, const char *k, uint64_t v)
{
	put_sum(r, d, bit, k, &(struct u64sum){ .v = v });
}

/* o[k] = a new object (fresh), else o's kept one. Borrowed. */
static json_t *obj_of(const struct devrec *r, json_t *o, const char *k)
{
	json_t *j;

	if (!r->fresh)
		return jset_obj(o, k);
	j = json_object();
	json_object_set_new(o, k, j);
	return j;
}

void devrec_util_json(const struct devrec *r, json_t *d)
{
	put_real(r, d, DR_CORE_PCT, "core_percent", r->core_pct);
	put_real(r, d, DR_MEMBW_PCT, "memory_bandwidth_percent", r->membw_pct);
}

void devrec_memory_json(const struct devrec *r, json_t *d)
{
	put_u64(r, d, DR_MEM_TOTAL, "total_bytes", r->mem_total);
	put_sum(r, d, DR_MEM_USED, "used_bytes", &r->mem_used);
	put_u64(r, d, DR_MEM_FREE, "free_bytes", r->mem_free);
}

void devrec_power_json(const struct devrec *r, json_t *d)
{
	put_real(r, d, DR_POWER, "power_watts", r->power_w);
}

void devrec_energy_json(const struct devrec *r, json_t *d)
{
	put_real(r, d, DR_ENERGY, "energy_joules", r->energy_j);
	put_real(r, d, DR_ENERGY_TOTAL, "energy_total_joules", r->energy_total_j);
}

/* A sensor's value, new: a real, or a whole-degree reading as a u64. */
static json_t *temp_json(const struct devrec_temp *t)
{
	if (!t->whole)
		return json_real(t->celsius);
	return t->degrees <= (uint64_t)INT64_MAX ? json_integer((json_int_t)t->degrees) : json_real((double)t->degrees);
}

void devrec_temps_json(const struct devrec *r, json_t *d)
{
	json_t *t, *v;
	const char *k;
	void *tmp;

	if (!r->ntemp) {
		if (!r->fresh)
			json_object_del(d, "temperatures_celsius");
		return;
	}
	if (r->fresh) {
		t = obj_of(r, d, "temperatures_celsius");
		for (size_t i = 0; i < r->ntemp; i++)
			json_object_set_new(t, r->temp[i].name, temp_json(&r->temp[i]));
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
		if (r->temp[i].whole)
			jset_u64(t, r->temp[i].name, r->temp[i].degrees);
		else
			jset_real(t, r->temp[i].name, r->temp[i].celsius);
}

/* Does p have what view writes? */
static int proc_shown(const struct devrec_proc *p, enum devrec_pview view)
{
	return view == DEVREC_PROC_MEMORY ? p->has_mem : p->neng > 0;
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

/* A process's engines into its object o, in place (fresh: o is new). */
static void engines_json(const struct devrec *r, const struct devrec_proc *p, const char *const *eng, json_t *o)
{
	json_t *v;
	const char *k;
	void *tmp;

	if (r->fresh) {
		for (size_t i = 0; i < p->neng; i++)
			json_object_set_new(o, eng[p->order[i]], json_real(p->eng[p->order[i]]));
		return;
	}
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
		if (!r->fresh)
			json_object_del(d, "processes");
		return;
	}
	ps = obj_of(r, d, "processes");
	if (!r->fresh)
		json_object_foreach_safe(ps, tmp, k, v)
			if (proc_by_key(r, view, k) < 0)
				json_object_del(ps, k);
	for (size_t i = 0; i < r->nproc; i++) {
		const struct devrec_proc *p = &r->proc[i];

		if (!proc_shown(p, view))
			continue;
		snprintf(key, sizeof(key), "%ld", (long)p->pid);
		if (view == DEVREC_PROC_ENGINES)
			engines_json(r, p, eng, obj_of(r, ps, key));
		else if (r->fresh)
			json_object_set_new(ps, key, json_u64sum(&p->mem));
		else
			jset_u64sum(ps, key, &p->mem);
	}
}
