/* SPDX-License-Identifier: MIT */
/*
 * The report's identities, written from the processes' typed identities;
 * see identities.h. Each entry of a report (a container's, by its id; a
 * process's, by its pid) is remembered with the values it was written
 * from, packed (each field's number as a byte, then its value and a NUL,
 * in the fields' order). The next report packs an entry's values again,
 * into a scratch buffer, and takes the last report's object when the bytes
 * are the same: an unchanged container costs its values compared, and
 * allocates nothing but its pids. The pods' entries are each report's
 * (the caller adds to them as they are made).
 */
#include "identities.h"
#include "../../common/derive.h"
#include "../../common/hindex.h"
#include "../../common/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POD_NAMES ARRAY_SIZE(report_pod_names)
#define PACK_OUT 0x80 /* in a packed field's number: the entry leaves the value out */

/* An entry of the last report or of the one being made. */
struct ident_ent {
	char *key;       /* 'c' and the container id, or 'p' and the pid (owned) */
	uint64_t hash;   /* of key */
	char *vals;      /* the identity the entry was written from, packed (owned) */
	size_t nvals;    /* their bytes */
	json_t *obj;     /* the entry (a reference) */
	json_t *pids;    /* a container's: obj's "pids" (borrowed); NULL: a process's */
	uint64_t report; /* the report it was last entered in */
};

/* A pod of the report being made, with its entry's names (report_pod_names' values; "" when it has none). */
struct ident_pod {
	char uid[sizeof(((struct container_id *)0)->pod_uid)];
	uint64_t hash;
	char name[POD_NAMES][sizeof(((struct container_names *)0)->pod)]; /* the longest of the three */
};

struct ident_last {
	struct ident_ent *e; /* the last report's entries, then this one's as they are entered */
	size_t n, a;
	struct hindex ei;    /* e by key */
	uint64_t report;     /* reports made: the one being made */
	struct ident_pod *p; /* the pods of the report being made */
	size_t np, ap;
	struct hindex pi;    /* p by uid */
	char *buf;           /* scratch: an entry's values packed */
	size_t nbuf, abuf;
};

/* The report being made, its three objects borrowed from ids. */
struct ids_out {
	json_t *ids, *ctrs, *pods, *procs;
};

struct ident_last *ident_last_new(void)
{
	return xcalloc(1, sizeof(struct ident_last));
}

/* Let go of what entry e holds. */
static void ent_free(struct ident_ent *e)
{
	free(e->key);
	free(e->vals);
	json_decref(e->obj);
}

/* Let go of what l holds, leaving it empty (and unusable until zeroed). */
static void ident_last_clear(struct ident_last *l)
{
	for (size_t i = 0; i < l->n; i++)
		ent_free(&l->e[i]);
	free(l->e);
	free(l->p);
	free(l->buf);
	hindex_free(&l->ei);
	hindex_free(&l->pi);
}

void ident_last_free(struct ident_last *l)
{
	if (!l)
		return;
	ident_last_clear(l);
	free(l);
}

/*
 * l's scratch buffer = the identity's values val (NULL: none) packed, each
 * marked (PACK_OUT) when the entry leaves it out (out[f] NULL).
 */
static void pack(struct ident_last *l, const char *const val[CF_COUNT], const char *const out[CF_COUNT])
{
	if (!l->buf) { /* never NULL once packed, even for an identity that says nothing */
		l->abuf = 256;
		l->buf = xmalloc(l->abuf);
	}
	l->nbuf = 0;
	for (size_t f = 0; f < CF_COUNT; f++) {
		size_t k;

		if (!val[f])
			continue;
		k = strlen(val[f]) + 1;
		if (l->nbuf + 1 + k > l->abuf) {
			l->abuf = (l->nbuf + 1 + k) * 2;
			l->buf = xrealloc(l->buf, l->abuf);
		}
		l->buf[l->nbuf++] = (char)(f | (out[f] ? 0 : PACK_OUT));
		memcpy(l->buf + l->nbuf, val[f], k);
		l->nbuf += k;
	}
}

/*
 * Enter the entry key (a container's when ctr: with "pids") of the
 * identity val, with its values out (val's, or NULL where the entry leaves
 * one out), in the report being made: the one already entered in it, else
 * the last report's when it was made from the same identity and left out
 * the same (its "pids" emptied), else one made from out. *was = the report
 * the entry was last entered in before (0: none, a new key). Returns the
 * entry (borrowed: l holds it, and it moves when an entry is added).
 */
static struct ident_ent *ent_enter(struct ident_last *l, const char *key, const char *const val[CF_COUNT],
				   const char *const out[CF_COUNT], int ctr, uint64_t *was)
{
	uint64_t h = hash_bytes(0, key, strlen(key));
	struct ident_ent *e = NULL;
	struct hindex_iter it;

	for (uint32_t i = hindex_first(&l->ei, h, &it); i != HINDEX_NONE && !e; i = hindex_next(&l->ei, h, &it))
		if (!strcmp(l->e[i].key, key))
			e = &l->e[i];
	*was = e ? e->report : 0;
	if (e && e->report == l->report)
		return e;
	pack(l, val, out);
	if (e && e->nvals == l->nbuf && !memcmp(e->vals, l->buf, l->nbuf)) {
		e->report = l->report;
		if (e->pids)
			json_array_clear(e->pids); /* the last report's, written already */
		return e;
	}
	if (!e) {
		if (l->n == l->a) {
			l->a = l->a ? l->a * 2 : 16;
			l->e = xrealloc(l->e, l->a * sizeof(*l->e));
		}
		e = &l->e[l->n];
		memset(e, 0, sizeof(*e));
		e->key = xstrdup(key);
		e->hash = h;
		hindex_put(&l->ei, h, (uint32_t)l->n++);
	}
	json_decref(e->obj);
	e->obj = container_fields_json(out);
	e->pids = NULL;
	if (ctr) {
		e->pids = json_array();
		json_object_set_new(e->obj, "pids", e->pids);
	}
	e->vals = xrealloc(e->vals, l->nbuf + 1); /* + 1: not NULL for an identity that says nothing */
	memcpy(e->vals, l->buf, l->nbuf);
	e->nvals = l->nbuf;
	e->report = l->report;
	return e;
}

/*
 * The pod of the identity val (val[CF_POD_UID] set) in the report being
 * made: its entry (report_pod_names' values of val) made and cb->pod told
 * when it is the pod's first process.
 */
static const struct ident_pod *pod_enter(struct ident_last *l, struct ids_out *o, const char *const val[CF_COUNT],
					 const size_t pf[POD_NAMES], struct ident_cb *cb)
{
	const char *uid = val[CF_POD_UID];
	uint64_t h = hash_bytes(0, uid, strlen(uid));
	struct ident_pod *p;
	struct hindex_iter it;
	json_t *entry;

	for (uint32_t i = hindex_first(&l->pi, h, &it); i != HINDEX_NONE; i = hindex_next(&l->pi, h, &it))
		if (!strcmp(l->p[i].uid, uid))
			return &l->p[i];
	if (l->np == l->ap) {
		l->ap = l->ap ? l->ap * 2 : 8;
		l->p = xrealloc(l->p, l->ap * sizeof(*l->p));
	}
	p = &l->p[l->np];
	snprintf(p->uid, sizeof(p->uid), "%s", uid);
	p->hash = h;
	entry = json_object();
	for (size_t i = 0; i < POD_NAMES; i++) {
		const char *v = val[pf[i]];

		snprintf(p->name[i], sizeof(p->name[i]), "%s", v ? v : "");
		if (v)
			json_object_set_new(entry, report_pod_names[i], json_string(v));
	}
	if (cb->pod)
		cb->pod(cb->ud, uid, val[CF_NAMESPACE] ? val[CF_NAMESPACE] : "", val[CF_POD] ? val[CF_POD] : "", entry);
	json_object_set_new(o->pods, uid, entry);
	hindex_put(&l->pi, h, (uint32_t)l->np);
	return &l->p[l->np++];
}

/*
 * Enter process pid's identity (its fields val) in the report being made:
 * its pod's entry once; one with a container id under "containers" (its
 * fields but "id", which is its key, and the pod's names its pod's entry
 * has; and "pids", to which the process is added), the others whole under
 * "processes".
 */
static void ids_enter(struct ident_last *l, struct ids_out *o, pid_t pid, const char *const val[CF_COUNT],
		      const size_t pf[POD_NAMES], struct ident_cb *cb)
{
	const struct ident_pod *pod = val[CF_POD_UID] ? pod_enter(l, o, val, pf, cb) : NULL;
	char key[2 + sizeof(((struct container_id *)0)->id)];
	const char *out[CF_COUNT];
	struct ident_ent *e;
	uint64_t was;

	if (!val[CF_ID]) {
		snprintf(key, sizeof(key), "p%d", (int)pid);
		json_object_set(o->procs, key + 1, ent_enter(l, key, val, val, 0, &was)->obj);
		return;
	}
	snprintf(key, sizeof(key), "c%s", val[CF_ID]);
	memcpy(out, val, sizeof(out));
	out[CF_ID] = NULL;
	for (size_t i = 0; pod && i < POD_NAMES; i++)
		if (val[pf[i]] && !strcmp(val[pf[i]], pod->name[i]))
			out[pf[i]] = NULL;
	e = ent_enter(l, key, val, out, 1, &was);
	if (was != l->report) {
		if (!was)
			cb->new_containers = 1;
		json_object_set(o->ctrs, key + 1, e->obj);
	}
	json_array_append_new(e->pids, json_integer(pid));
}

/* Let go of the entries not entered in the report just made. */
static void ents_keep_report(struct ident_last *l)
{
	size_t keep = 0;

	for (size_t i = 0; i < l->n; i++) {
		if (l->e[i].report == l->report) {
			if (keep != i)
				l->e[keep] = l->e[i];
			keep++;
		} else {
			ent_free(&l->e[i]);
		}
	}
	if (keep == l->n)
		return;
	l->n = keep;
	hindex_clear(&l->ei);
	for (size_t i = 0; i < l->n; i++)
		hindex_put(&l->ei, l->e[i].hash, (uint32_t)i);
}

/* Whether pids[i] is one of pids[0..i) (seen indexes those entered so far, and gets pids[i] when it is new). */
static int seen_before(struct hindex *seen, const pid_t *pids, size_t i)
{
	uint64_t h = hash_bytes(0, &pids[i], sizeof(pids[i]));
	struct hindex_iter it;

	for (uint32_t j = hindex_first(seen, h, &it); j != HINDEX_NONE; j = hindex_next(seen, h, &it))
		if (pids[j] == pids[i])
			return 1;
	hindex_put(seen, h, (uint32_t)i);
	return 0;
}

json_t *containers_identities(const pid_t *pids, size_t n, struct ident_cb *cb, struct ident_last *last)
{
	struct ident_last none = { 0 }, *l = last ? last : &none;
	struct ids_out o;
	struct hindex seen = { 0 };
	size_t pf[POD_NAMES];

	l->report++;
	l->np = 0;
	hindex_clear(&l->pi);
	cb->new_containers = 0;
	o.ids = NULL;
	if (n) { /* no process named (a node without devices): no object made to be dropped */
		for (size_t i = 0; i < POD_NAMES; i++) /* the fields of the pod's names: each is a container's field */
			for (pf[i] = 0; strcmp(container_field_keys[pf[i]], report_pod_names[i]);)
				pf[i]++;
		o.ids = json_object();
		json_object_set_new_nocheck(o.ids, "containers", o.ctrs = json_object());
		json_object_set_new_nocheck(o.ids, "pods", o.pods = json_object());
		json_object_set_new_nocheck(o.ids, "processes", o.procs = json_object());
	}
	for (size_t i = 0; i < n; i++) {
		const struct container_id *id;
		const struct container_names *names;
		const char *val[CF_COUNT];

		if (pids[i] <= 0 || pids[i] > IDENT_PID_MAX || seen_before(&seen, pids, i))
			continue;
		if (!cb->lookup(cb->ud, pids[i], &id, &names))
			continue;
		container_fields(id, names, val);
		ids_enter(l, &o, pids[i], val, pf, cb);
	}
	hindex_free(&seen);
	ents_keep_report(l);
	if (!last)
		ident_last_clear(&none);
	if (o.ids && (json_object_size(o.ctrs) || json_object_size(o.pods) || json_object_size(o.procs)))
		return o.ids;
	json_decref(o.ids);
	return NULL;
}
