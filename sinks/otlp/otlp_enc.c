/* SPDX-License-Identifier: MIT */
/*
 * accel-otlp's encoder: interning, the pending batch, the flush; see
 * otlp_enc.h. The protobuf request is otlp_pb.c's, OTLP/JSON and the
 * answers' bodies are otlp_json.c's.
 *
 * Each interned series keeps its attributes, key/value pairs (struct
 * oattrs), encoded as protobuf (otlp_pb_attrs) and as JSON text
 * (otlp_json_attrs), so building a request is: group the
 * points taken by resource and metric, then write each point's own fields
 * around its series' attributes.
 */
#include "otlp_enc_int.h"

#include "../../common/hindex.h"
#include "../../common/series/prom_expo.h"
#include "../../common/series/prom_store.h"
#include "../../common/timeutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OTLP_LABELS_MAX 64 /* labels of one series */

/* ---- attribute lists --------------------------------------------------------- */

static void attrs_free(struct oattrs *a)
{
	free(a->kv);
	free(a->pool);
	free(a->json);
	free(a->pb);
	free(a->pbtag);
	memset(a, 0, sizeof(*a));
}

/* Room for n attributes; pool (a new allocation, or NULL) holds their strings and is the list's from now on. */
static void attrs_alloc(struct oattrs *a, size_t n, char *pool)
{
	a->kv = xcalloc(n + 1, sizeof(*a->kv));
	a->pool = pool;
	a->n = 0;
}

/* Append key (with a string value, or a double when sval is NULL); the strings are borrowed (otlp_enc_int.h). */
static void attrs_put(struct oattrs *a, const char *key, const char *sval, double dval)
{
	size_t kl = strlen(key), vl = sval ? strlen(sval) : 8, avl = 1 + otlp_varint_len(vl) + vl;
	size_t kvl = 1 + otlp_varint_len(kl) + kl + 1 + otlp_varint_len(avl) + avl;

	a->kv[a->n++] = (struct oattr){ .key = key, .str = sval, .num = dval };
	a->bytes += 1 + otlp_varint_len(kvl) + kvl;
}

/* Replace the value of key when a has it; 1 when it did. */
static int attrs_replace(struct oattrs *a, const char *key, const char *sval)
{
	for (size_t i = 0; i < a->n; i++) {
		if (strcmp(a->kv[i].key, key))
			continue;
		a->kv[i].str = sval;
		return 1;
	}
	return 0;
}

/* ---- metrics ------------------------------------------------------------------- */

static uint64_t ptr_hash(const void *p)
{
	return (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
}

/* The metric of fam, resolved the first time; -EINVAL when its row is malformed (test_otlp_enc: never). */
static int metric_of(struct otlp_enc *e, const struct family *fam, uint32_t *idx)
{
	struct hindex_iter it;
	struct omet *m;
	char err[256];

	for (uint32_t i = hindex_first(&e->mix, ptr_hash(fam), &it); i != HINDEX_NONE;
	     i = hindex_next(&e->mix, ptr_hash(fam), &it)) {
		if (e->met[i].fam == fam) {
			*idx = i;
			return 0;
		}
	}
	if (e->nmet == e->amet) {
		e->amet = e->amet ? 2 * e->amet : 64;
		e->met = xrealloc(e->met, e->amet * sizeof(*e->met));
	}
	m = &e->met[e->nmet];
	memset(m, 0, sizeof(*m));
	if (otlp_desc_resolve(fam, &m->d, err, sizeof(err))) {
		log_limited(&e->lim, "otlp: %s; not sent", err);
		return -EINVAL;
	}
	m->fam = fam;
	m->bytes = (e->o.encoding == OTLP_JSON ? 110 : 16) + strlen(m->d.name) + strlen(m->d.unit) +
		   (fam->help ? strlen(fam->help) : 0);
	*idx = (uint32_t)e->nmet++;
	hindex_put(&e->mix, ptr_hash(fam), *idx);
	return 0;
}

/* ---- resources ---------------------------------------------------------------- */

/* The resource of a series whose instance labels are names[i] = values[i] for the i with mask[i]. */
static uint32_t resource_of(struct otlp_enc *e, const char *const *names, const char *const *values,
			    const unsigned char *mask, size_t n)
{
	struct buf key;
	struct ores *r;
	size_t nattr = 0;
	int aws = 0;
	char *p;

	buf_init(&key, (size_t)1 << 20);
	for (size_t i = 0; i < n; i++)
		if (mask[i])
			(void)buf_printf(&key, "%s=%s\n", names[i], values[i]);
	for (size_t i = 0; i < e->nres; i++) {
		if (!strcmp(e->res[i].key, key.data ? key.data : "")) {
			buf_free(&key);
			return (uint32_t)i;
		}
	}
	if (e->nres == e->ares) {
		e->ares = e->ares ? 2 * e->ares : 4;
		e->res = xrealloc(e->res, e->ares * sizeof(*e->res));
	}
	r = &e->res[e->nres];
	memset(r, 0, sizeof(*r));
	r->key = xstrdup(key.data ? key.data : "");
	buf_free(&key);
	for (size_t i = 0; i < n; i++)
		nattr += mask[i];
	attrs_alloc(&r->a, nattr + e->nconf + 3, xmalloc(strlen(r->key) + 1));
	p = r->a.pool;
	for (size_t i = 0; i < n; i++) {
		size_t vl;

		if (!mask[i])
			continue;
		vl = strlen(values[i]);
		memcpy(p, values[i], vl + 1);
		attrs_put(&r->a, otlp_resource_attr(names[i]), p, 0);
		p += vl + 1;
		aws |= !strcmp(names[i], "instance_id") && !strncmp(values[i], "i-", 2);
	}
	if (aws) { /* an EC2 instance id: the instance facts are EC2's */
		attrs_put(&r->a, "cloud.provider", "aws", 0);
		attrs_put(&r->a, "cloud.platform", "aws_ec2", 0);
	}
	/* The configured attributes win over the derived ones; service.name last. */
	for (size_t i = 0; i < e->nconf; i++)
		if (!attrs_replace(&r->a, e->conf[i].key, e->conf[i].value))
			attrs_put(&r->a, e->conf[i].key, e->conf[i].value, 0);
	if (!attrs_replace(&r->a, "service.name", e->service))
		attrs_put(&r->a, "service.name", e->service, 0);
	otlp_pb_attrs(&r->a);
	otlp_json_attrs(&r->a);
	if (e->o.encoding == OTLP_JSON)
		r->a.bytes = r->a.json_len + 120;
	return (uint32_t)e->nres++;
}

/* ---- series ---------------------------------------------------------------------- */

/* The quantile of a percentile label's value ("p99.9" -> 0.999); NAN when it is not one. */
static double quantile_of(const char *v)
{
	char *end;
	double q;

	if (v[0] != 'p' || !v[1])
		return NAN;
	q = strtod(v + 1, &end);
	return *end || !(q >= 0 && q <= 100) ? NAN : q / 100.0;
}

/* Build a new series' attributes and resource from its rendered labels. */
static int series_build(struct otlp_enc *e, struct oser *s, const char *labels, size_t len)
{
	const struct otlp_desc *d = &e->met[s->met].d;
	const char *names[OTLP_LABELS_MAX + 2], *values[OTLP_LABELS_MAX + 2];
	unsigned char inst[OTLP_LABELS_MAX + 2];
	char *pool = xmalloc(len + 1);
	int rc = prom_parse_labels(labels, len, pool, len + 1, names, values, OTLP_LABELS_MAX);
	size_t n, nr;

	if (rc < 0) {
		free(pool);
		return rc;
	}
	n = nr = (size_t)rc;
	for (size_t i = 0; i < n; i++)
		inst[i] = *values[i] && otlp_resource_attr(names[i]) != NULL;
	/* The node's names, which are no label: the resource's too (host.name, k8s.node.name). */
	names[nr] = "hostname", values[nr] = e->host, inst[nr] = *e->host != 0, nr++;
	names[nr] = "node_name", values[nr] = e->node, inst[nr] = *e->node != 0, nr++;
	s->res = resource_of(e, names, values, inst, nr);
	attrs_alloc(&s->a, n + d->nattrs, pool); /* names and values point into it */
	for (size_t i = 0; i < n; i++) {
		double q;

		if (inst[i] || !*values[i])
			continue; /* an instance label is the resource's; an empty value is no attribute */
		if (!strcmp(names[i], OTLP_PERCENTILE_LABEL) && !isnan(q = quantile_of(values[i])))
			attrs_put(&s->a, OTLP_QUANTILE_KEY, NULL, q);
		else
			attrs_put(&s->a, otlp_desc_attr(d, names[i]), values[i], 0);
	}
	for (size_t i = 0; i < d->nattrs; i++)
		if (!d->attrs[i].from)
			attrs_put(&s->a, d->attrs[i].key, d->attrs[i].value, 0);
	otlp_pb_attrs(&s->a);
	otlp_json_attrs(&s->a);
	if (e->o.encoding == OTLP_JSON)
		s->a.bytes = s->a.json_len;
	return 0;
}

/* The id of the series (fam, labels): found, or interned. */
static int series_of(struct otlp_enc *e, const struct family *fam, const char *labels, size_t len, uint32_t *id)
{
	size_t nlen = strlen(fam->name), klen = nlen + 1 + len;
	uint64_t h = hash_bytes(hash_bytes(0x84222325cbf29ce4ull, fam->name, nlen), labels, len);
	struct hindex_iter it;
	uint32_t met;
	struct oser *s;
	int rc;

	for (uint32_t i = hindex_first(&e->six, h, &it); i != HINDEX_NONE; i = hindex_next(&e->six, h, &it)) {
		s = &e->ser[i];
		if (s->keylen == klen && !memcmp(s->key + nlen + 1, labels, len) && !memcmp(s->key, fam->name, nlen)) {
			*id = i;
			return 0;
		}
	}
	if (e->nser >= OTLP_SERIES_MAX)
		return -ENOSPC;
	if ((rc = metric_of(e, fam, &met)))
		return rc;
	if (e->nser == e->aser) {
		e->aser = e->aser ? 2 * e->aser : 256;
		e->ser = xrealloc(e->ser, e->aser * sizeof(*e->ser));
	}
	s = &e->ser[e->nser];
	memset(s, 0, sizeof(*s));
	s->met = met;
	if ((rc = series_build(e, s, labels, len))) {
		attrs_free(&s->a);
		return rc;
	}
	s->key = xmalloc(klen);
	memcpy(s->key, fam->name, nlen + 1);
	memcpy(s->key + nlen + 1, labels, len);
	s->keylen = klen;
	*id = (uint32_t)e->nser++;
	hindex_put(&e->six, h, *id);
	return 0;
}

/* ---- the batch ---------------------------------------------------------------------- */

static size_t hist_put(struct otlp_enc *e, const struct sample_hist *h)
{
	size_t need = 3 + 2 * h->n + 1, at;

	if (e->nhp + need > e->ahp) {
		e->ahp = (e->nhp + need) * 2;
		e->hp = xrealloc(e->hp, e->ahp * sizeof(*e->hp));
	}
	at = e->nhp;
	e->hp[at] = (double)h->n;
	e->hp[at + 1] = h->sum;
	e->hp[at + 2] = h->count;
	if (h->n)
		memcpy(&e->hp[at + 3], h->le, h->n * sizeof(double));
	memcpy(&e->hp[at + 3 + h->n], h->counts, (h->n + 1) * sizeof(double));
	e->nhp += need;
	return at + 1;
}

static void point_add(struct otlp_enc *e, uint32_t id, int64_t ts_ms, int64_t start_ms, double v,
		      const struct sample_hist *h, uint32_t flags)
{
	struct opoint *p;

	if (e->npt == e->apt) {
		if (e->head && e->head >= e->npt / 2) { /* compact: the taken points make room */
			memmove(e->pt, e->pt + e->head, (e->npt - e->head) * sizeof(*e->pt));
			e->npt -= e->head;
			e->head = 0;
		} else {
			e->apt = e->apt ? 2 * e->apt : 1024;
			e->pt = xrealloc(e->pt, e->apt * sizeof(*e->pt));
		}
	}
	p = &e->pt[e->npt++];
	*p = (struct opoint){ .ser = id, .met = e->ser[id].met, .res = e->ser[id].res, .flags = flags, .ts_ms = ts_ms,
			      .start_ms = start_ms, .v = v };
	p->bytes = (uint32_t)(e->ser[id].a.bytes + e->point_bytes + (h ? 18 * h->n + 24 : 0));
	if (h)
		p->hist = hist_put(e, h);
	e->pending_bytes += p->bytes;
	e->ser[id].live = !flags;
	e->last_res = e->ser[id].res + 1;
}

int otlp_enc_add(struct otlp_enc *e, const struct family *fam, const char *labels, size_t len, uint32_t *slot,
		 int64_t ts_ms, int64_t start_ms, double value, const struct sample_hist *hist)
{
	uint32_t id;
	int rc;

	if (slot && *slot) {
		id = *slot - 1;
	} else {
		if ((rc = series_of(e, fam, labels, len, &id)))
			return rc;
		if (slot)
			*slot = id + 1; /* found by its label set once, then by this word */
	}
	e->ser[id].gen = e->gen;
	point_add(e, id, ts_ms, start_ms, value, hist, 0);
	return 0;
}

size_t otlp_enc_pending(const struct otlp_enc *e)
{
	return e->npt - e->head;
}

size_t otlp_enc_pending_bytes(const struct otlp_enc *e)
{
	return e->pending_bytes;
}

/* ---- reports ---------------------------------------------------------------------- */

/* A series in the store's exposition: noted as there; into the batch when the last report refreshed it. */
static void on_series(const struct prom_series_view *v, void *ud)
{
	struct otlp_enc *e = ud;
	int rc;

	if (!v->fresh || e->sweeping) {
		if (*v->slot)
			e->ser[*v->slot - 1].gen = e->gen;
		return;
	}
	rc = otlp_enc_add(e, v->fam, v->labels, v->labels_len, v->slot, v->ts_ms, v->start_ms, v->value, v->hist);
	if (rc)
		log_limited(&e->lim, "otlp: %s%.*s: %s; not sent", v->fam->name, (int)v->labels_len, v->labels,
			    rc == -ENOSPC ? "too many series" : rc == -E2BIG ? "too many labels" : "bad label set");
}

/*
 * After a pass over the store (on_series): series sent before that have
 * left its exposition (their source reported an error, the instance
 * changed, or they went stale) get a point flagged NO_RECORDED_VALUE,
 * OTLP's staleness marker.
 */
static void mark_left(struct otlp_enc *e, int64_t ts_ms)
{
	for (uint32_t id = 0; id < e->nser; id++) {
		struct oser *s = &e->ser[id];

		if (s->live && !s->pinned && s->gen != e->gen)
			point_add(e, id, ts_ms, 0, 0, NULL, OTLP_FLAG_NO_VALUE);
	}
}

void otlp_enc_report(struct otlp_enc *e, json_t *report, const char *where, int64_t mono_ns, int64_t real_ns)
{
	e->gen++;
	prom_store_report(e->store, report, where, mono_ns, real_ns);
	prom_store_instance_names(e->store, e->host, e->node, sizeof(e->host));
	prom_store_each(e->store, 0, on_series, e);
	mark_left(e, real_ns / NS_PER_MS);
}

void otlp_enc_sweep(struct otlp_enc *e, int64_t mono_ns, int64_t real_ns)
{
	e->gen++;
	prom_store_sweep(e->store, mono_ns);
	e->sweeping = 1; /* the series the last report refreshed are still "fresh": only noted */
	prom_store_each(e->store, 0, on_series, e);
	e->sweeping = 0;
	mark_left(e, real_ns / NS_PER_MS);
}

void otlp_enc_bad_line(struct otlp_enc *e, enum stream_bad why)
{
	prom_store_bad_line(e->store, why);
}

void otlp_enc_health(struct otlp_enc *e, const struct otlp_health *h, int64_t real_ns)
{
	const uint64_t v[] = { h->points_sent,   h->points_failed,   h->points_dropped,  h->points_rejected,
			       h->requests_sent, h->requests_failed, h->requests_retried, h->queue_bytes,
			       h->queue_requests, h->input_lines,    h->input_bad_lines };
	int64_t ts = real_ns / NS_PER_MS;

	_Static_assert(ARRAY_SIZE(v) == OTLP_HEALTH_FAMILIES, "one family per figure");
	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		const struct family *f = &otlp_health_families[i];

		uint32_t id;

		if (series_of(e, f, "", 0, &id))
			continue;
		/* The node's own resource: the last series' */
		e->ser[id].pinned = 1;
		if (e->last_res)
			e->ser[id].res = e->last_res - 1;
		point_add(e, id, ts, f->type == METRIC_COUNTER ? e->start_ms : 0, (double)v[i], NULL, 0);
	}
}

/* ---- the encoder's life ------------------------------------------------------------ */

struct otlp_enc *otlp_enc_new(const struct otlp_enc_opts *o, char *err, size_t errsz)
{
	struct otlp_enc *e = xcalloc(1, sizeof(*e));
	const char *svc = o->service_name;

	e->o = *o;
	e->o.resource = NULL;
	e->point_bytes = o->encoding == OTLP_JSON ? OTLP_JSON_POINT_BYTES : OTLP_POINT_BYTES;
	e->conf = xcalloc(o->nresource + 1, sizeof(*e->conf));
	for (size_t i = 0; i < o->nresource; i++) {
		const struct otlp_kv *kv = &o->resource[i];
		size_t j;

		if (!kv->key || !*kv->key || !kv->value) {
			snprintf(err, errsz, "resource attribute %zu: %s", i + 1,
				 !kv->key || !*kv->key ? "empty key" : "no value");
			otlp_enc_free(e);
			return NULL;
		}
		for (j = 0; j < e->nconf && strcmp(e->conf[j].key, kv->key); j++)
			;
		if (j == e->nconf) /* a later one of the same key replaces the earlier */
			e->conf[e->nconf++].key = xstrdup(kv->key);
		else
			free((char *)e->conf[j].value);
		e->conf[j].value = xstrdup(kv->value);
		if (!o->service_name && !strcmp(kv->key, "service.name"))
			svc = kv->value;
	}
	e->service = xstrdup(svc && *svc ? svc : OTLP_DEFAULT_SERVICE);
	e->store = prom_store_new(&(struct prom_store_opts){ .staleness_ms = o->staleness_ms, .node_name = "",
							      .version = ACCEL_VERSION });
	e->start_ms = clock_real_ns() / NS_PER_MS;
	return e;
}

void otlp_enc_free(struct otlp_enc *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nconf; i++) {
		free((char *)e->conf[i].key);
		free((char *)e->conf[i].value);
	}
	free(e->conf);
	free(e->service);
	prom_store_free(e->store);
	free(e->met);
	hindex_free(&e->mix);
	for (size_t i = 0; i < e->nres; i++) {
		free(e->res[i].key);
		attrs_free(&e->res[i].a);
	}
	free(e->res);
	for (size_t i = 0; i < e->nser; i++) {
		free(e->ser[i].key);
		attrs_free(&e->ser[i].a);
	}
	free(e->ser);
	hindex_free(&e->six);
	free(e->pt);
	free(e->hp);
	free(e->grp);
	free(e->ridx);
	free(e->order);
	free(e);
}

const char *otlp_content_type(enum otlp_encoding enc)
{
	return enc == OTLP_JSON ? "application/json" : "application/x-protobuf";
}

/* ---- flush: the request's layout ------------------------------------------------------- */

/* The group of point p in the request being built (e->flush_no), made when new; its index. */
static uint32_t group_of(struct otlp_enc *e, const struct opoint *p)
{
	const struct opoint *s = p;
	struct omet *m = &e->met[s->met];
	struct ores *r = &e->res[s->res];
	struct ogroup *g;

	if (m->stamp == e->flush_no && e->grp[m->grp].res == s->res)
		return m->grp;
	if (m->stamp == e->flush_no) /* the metric under a second resource (the instance changed): rare */
		for (uint32_t i = 0; i < e->ngrp; i++)
			if (e->grp[i].met == s->met && e->grp[i].res == s->res)
				return i;
	if (e->ngrp == e->agrp) {
		e->agrp = e->agrp ? 2 * e->agrp : 64;
		e->grp = xrealloc(e->grp, e->agrp * sizeof(*e->grp));
	}
	if (r->stamp != e->flush_no) {
		if (e->nridx == e->aridx) {
			e->aridx = e->aridx ? 2 * e->aridx : 4;
			e->ridx = xrealloc(e->ridx, e->aridx * sizeof(*e->ridx));
		}
		r->stamp = e->flush_no;
		r->idx = (uint32_t)e->nridx;
		e->ridx[e->nridx++] = s->res;
	}
	g = &e->grp[e->ngrp];
	*g = (struct ogroup){ .met = s->met, .res = s->res };
	m->stamp = e->flush_no;
	m->grp = (uint32_t)e->ngrp;
	return (uint32_t)e->ngrp++;
}

/* What point p (own: its bytes) adds to the request: with its metric's and resource's when new to it. */
static size_t point_cost(const struct otlp_enc *e, const struct opoint *p, size_t own)
{
	const struct opoint *s = p;
	size_t c = own;

	if (e->met[s->met].stamp != e->flush_no)
		c += e->met[s->met].bytes;
	if (e->res[s->res].stamp != e->flush_no)
		c += e->res[s->res].a.bytes + 32;
	return c;
}

/*
 * Take points from the head of the batch (at most max_points, about
 * max_bytes, at least one) and lay them out: e->grp the groups, resources
 * first-seen first; e->order the points' indices (from head), group by
 * group. Returns how many were taken.
 */
static size_t layout(struct otlp_enc *e, size_t max_points, size_t max_bytes, size_t *own)
{
	size_t avail = e->npt - e->head, k = 0, bytes = 0, pos = 0;
	uint32_t *gi;

	e->flush_no++;
	e->ngrp = 0;
	e->nridx = 0;
	if (avail > e->aorder) {
		e->aorder = avail;
		free(e->order);
		e->order = xmalloc(2 * avail * sizeof(*e->order));
	}
	gi = e->order + avail; /* each point's group, then the order */
	while (k < avail && k < max_points) {
		const struct opoint *p = &e->pt[e->head + k];
		size_t b = p->bytes, c = point_cost(e, p, b);

		if (k && bytes + c > max_bytes)
			break;
		bytes += c;
		*own += b;
		gi[k] = group_of(e, p);
		e->grp[gi[k]].n++;
		k++;
	}
	/* Groups resource by resource (each resource's in first-seen order), then each group's points in order. */
	for (size_t r = 0; r < e->nridx; r++)
		for (size_t g = 0; g < e->ngrp; g++)
			if (e->grp[g].res == e->ridx[r]) {
				e->grp[g].pos = (uint32_t)pos;
				pos += e->grp[g].n;
			}
	for (size_t i = 0; i < k; i++)
		e->order[e->grp[gi[i]].pos++] = (uint32_t)i;
	for (size_t g = 0; g < e->ngrp; g++)
		e->grp[g].pos -= e->grp[g].n;
	return k;
}

/*
 * After a flush took k points (own: their bytes in pending_bytes): the
 * head moves on; the hist pool empties with the batch.
 */
static void consume(struct otlp_enc *e, size_t k, size_t own)
{
	e->pending_bytes -= own < e->pending_bytes ? own : e->pending_bytes;
	e->head += k;
	if (e->head == e->npt) {
		e->head = e->npt = 0;
		e->nhp = 0;
		e->pending_bytes = 0;
	}
}

int otlp_enc_flush(struct otlp_enc *e, size_t max_points, size_t max_bytes, struct buf *out, size_t *points)
{
	size_t k, own = 0;
	int rc;

	buf_reset(out);
	*points = 0;
	if (e->head == e->npt)
		return 0;
	k = layout(e, max_points ? max_points : SIZE_MAX, max_bytes ? max_bytes : SIZE_MAX, &own);
	rc = e->o.encoding == OTLP_JSON ? otlp_json_request(e, k, out) : otlp_pb_request(e, k, out);
	if (rc)
		buf_reset(out);
	consume(e, k, own);
	*points = k;
	return rc;
}
