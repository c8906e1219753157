/* SPDX-License-Identifier: MIT */
/*
 * The protobuf encoding of a request, written directly rather than through
 * protobuf-c's reflective packer: each series' attributes are encoded once,
 * when the series is made (otlp_pb_attrs), and a request is two passes over
 * the groups the flush laid out, one that adds up the sizes of the nested
 * messages (their length prefixes) and one that writes. The bytes are what
 * protobuf-c packs for the same messages (proto3: a field at its default is
 * left out, fields in number order): test_otlp_enc checks that byte for
 * byte, and the receiver of the tests decodes them with OpenTelemetry's
 * own types.
 */
#include "otlp_enc_int.h"
#include "otlp.pb-c.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Wire types. */
#define WT_VARINT 0
#define WT_I64 1
#define WT_LEN 2

#define TAG(field, wt) ((uint8_t)((field) << 3 | (wt))) /* every field here is below 16: one byte */

/* The attributes' field in a NumberDataPoint, in a HistogramDataPoint, in a Resource. */
#define F_ND_ATTRS 7
#define F_HD_ATTRS 9
#define F_RES_ATTRS 1

size_t otlp_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* A length-delimited field of len bytes: its whole size. */
static size_t lenfield(size_t len)
{
	return 1 + otlp_varint_len(len) + len;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static uint8_t *put_fixed64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

static uint8_t *put_double(uint8_t *p, double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof(v));
	return put_fixed64(p, v);
}

/* Tag, length, then the caller writes len bytes. */
static uint8_t *put_len(uint8_t *p, unsigned field, size_t len)
{
	*p++ = TAG(field, WT_LEN);
	return put_varint(p, len);
}

static uint8_t *put_str(uint8_t *p, unsigned field, const char *s, size_t len)
{
	p = put_len(p, field, len);
	memcpy(p, s, len);
	return p + len;
}

/* ---- attributes, encoded once ------------------------------------------------------------------------------ */

/* One KeyValue's body: key (1), value (2): AnyValue {string_value (1) | double_value (4)}. */
static size_t kv_body_len(const struct oattr *kv)
{
	size_t klen = strlen(kv->key), avl = kv->str ? lenfield(strlen(kv->str)) : 1 + 8;

	return (klen ? lenfield(klen) : 0) + lenfield(avl);
}

static uint8_t *kv_body(uint8_t *p, const struct oattr *kv)
{
	size_t klen = strlen(kv->key);

	if (klen)
		p = put_str(p, 1, kv->key, klen);
	if (kv->str) {
		size_t sl = strlen(kv->str);

		p = put_len(p, 2, lenfield(sl));
		return put_str(p, 1, kv->str, sl);
	}
	p = put_len(p, 2, 1 + 8);
	*p++ = TAG(4, WT_I64);
	return put_double(p, kv->num);
}

void otlp_pb_attrs(struct oattrs *a)
{
	size_t len = 0;
	uint8_t *p;

	for (size_t i = 0; i < a->n; i++)
		len += lenfield(kv_body_len(&a->kv[i]));
	free(a->pb);
	free(a->pbtag);
	a->pb = p = xmalloc(len ? len : 1);
	a->pbtag = xmalloc((a->n ? a->n : 1) * sizeof(*a->pbtag));
	a->pb_len = len;
	for (size_t i = 0; i < a->n; i++) {
		a->pbtag[i] = (uint32_t)(p - a->pb);
		p = put_len(p, F_ND_ATTRS, kv_body_len(&a->kv[i]));
		p = kv_body(p, &a->kv[i]);
	}
}

/* a's KeyValues as the repeated field field (encoded as a NumberDataPoint's: other fields patch the tags). */
static uint8_t *put_attrs(uint8_t *p, const struct oattrs *a, unsigned field)
{
	memcpy(p, a->pb, a->pb_len);
	if (field != F_ND_ATTRS)
		for (size_t i = 0; i < a->n; i++)
			p[a->pbtag[i]] = TAG(field, WT_LEN);
	return p + a->pb_len;
}

/* ---- sizes ------------------------------------------------------------------------------------------------- */

/* A data point's body. */
static size_t point_len(const struct otlp_enc *e, const struct opoint *pt, enum otlp_kind kind)
{
	const struct oattrs *a = &e->ser[pt->ser].a;
	size_t n = a->pb_len;

	if (kind != OTLP_KIND_GAUGE && pt->start_ms)
		n += 1 + 8;
	if (pt->ts_ms)
		n += 1 + 8;
	if (kind == OTLP_KIND_HISTOGRAM) {
		if (pt->hist) {
			const double *h = &e->hp[pt->hist - 1];
			size_t nb = (size_t)h[0];

			n += ((uint64_t)h[2] ? 1 + 8 : 0) + 1 + 8; /* count, sum */
			n += lenfield(8 * (nb + 1));                 /* bucket_counts, packed */
			n += nb ? lenfield(8 * nb) : 0;              /* explicit_bounds, packed */
		}
		return n + (pt->flags ? 1 + otlp_varint_len(pt->flags) : 0);
	}
	if (!pt->flags)
		n += 1 + 8; /* as_double */
	return n + (pt->flags ? 1 + otlp_varint_len(pt->flags) : 0);
}

/* The body of the Gauge, Sum or Histogram of group g (its points' sizes into sz[]), and of its Metric. */
static size_t data_len(const struct otlp_enc *e, const struct ogroup *g, enum otlp_kind kind, size_t *sz)
{
	size_t n = 0;

	for (size_t j = 0; j < g->n; j++) {
		sz[j] = point_len(e, &e->pt[e->head + e->order[g->pos + j]], kind);
		n += lenfield(sz[j]);
	}
	if (kind != OTLP_KIND_GAUGE)
		n += 2; /* aggregation_temporality: cumulative */
	if (kind == OTLP_KIND_SUM)
		n += 2; /* is_monotonic: true */
	return n;
}

static unsigned data_field(enum otlp_kind kind)
{
	return kind == OTLP_KIND_GAUGE ? 5 : kind == OTLP_KIND_HISTOGRAM ? 9 : 7;
}

static size_t metric_len(const struct omet *m, size_t data)
{
	const char *help = m->fam->help ? m->fam->help : "";
	size_t nl = strlen(m->d.name), hl = strlen(help), ul = strlen(m->d.unit);

	return (nl ? lenfield(nl) : 0) + (hl ? lenfield(hl) : 0) + (ul ? lenfield(ul) : 0) + lenfield(data);
}

/* ---- writing ----------------------------------------------------------------------------------------------- */

static uint8_t *put_point(uint8_t *p, const struct otlp_enc *e, const struct opoint *pt, enum otlp_kind kind)
{
	const struct oattrs *a = &e->ser[pt->ser].a;
	uint64_t st = (uint64_t)pt->start_ms * 1000000u, t = (uint64_t)pt->ts_ms * 1000000u;

	if (kind == OTLP_KIND_HISTOGRAM) {
		if (st) {
			*p++ = TAG(2, WT_I64);
			p = put_fixed64(p, st);
		}
		if (t) {
			*p++ = TAG(3, WT_I64);
			p = put_fixed64(p, t);
		}
		if (pt->hist) {
			const double *h = &e->hp[pt->hist - 1];
			size_t nb = (size_t)h[0];

			if ((uint64_t)h[2]) {
				*p++ = TAG(4, WT_I64);
				p = put_fixed64(p, (uint64_t)h[2]);
			}
			*p++ = TAG(5, WT_I64);
			p = put_double(p, h[1]);
			p = put_len(p, 6, 8 * (nb + 1));
			for (size_t i = 0; i <= nb; i++)
				p = put_fixed64(p, (uint64_t)h[3 + nb + i]);
			if (nb) {
				p = put_len(p, 7, 8 * nb);
				for (size_t i = 0; i < nb; i++)
					p = put_double(p, h[3 + i]);
			}
		}
		p = put_attrs(p, a, F_HD_ATTRS);
		if (pt->flags) {
			*p++ = TAG(10, WT_VARINT);
			p = put_varint(p, pt->flags);
		}
		return p;
	}
	if (kind != OTLP_KIND_GAUGE && st) {
		*p++ = TAG(2, WT_I64);
		p = put_fixed64(p, st);
	}
	if (t) {
		*p++ = TAG(3, WT_I64);
		p = put_fixed64(p, t);
	}
	if (!pt->flags) {
		*p++ = TAG(4, WT_I64);
		p = put_double(p, pt->v);
	}
	p = put_attrs(p, a, F_ND_ATTRS);
	if (pt->flags) {
		*p++ = TAG(8, WT_VARINT);
		p = put_varint(p, pt->flags);
	}
	return p;
}

static uint8_t *put_metric(uint8_t *p, const struct otlp_enc *e, const struct ogroup *g, const size_t *sz,
			   size_t data)
{
	const struct omet *m = &e->met[g->met];
	const char *help = m->fam->help ? m->fam->help : "";
	enum otlp_kind kind = m->d.kind;

	if (*m->d.name)
		p = put_str(p, 1, m->d.name, strlen(m->d.name));
	if (*help)
		p = put_str(p, 2, help, strlen(help));
	if (*m->d.unit)
		p = put_str(p, 3, m->d.unit, strlen(m->d.unit));
	p = put_len(p, data_field(kind), data);
	for (size_t j = 0; j < g->n; j++) {
		p = put_len(p, 1, sz[j]);
		p = put_point(p, e, &e->pt[e->head + e->order[g->pos + j]], kind);
	}
	if (kind != OTLP_KIND_GAUGE) {
		*p++ = TAG(2, WT_VARINT);
		*p++ = OTLP__AGGREGATION_TEMPORALITY__AGGREGATION_TEMPORALITY_CUMULATIVE;
	}
	if (kind == OTLP_KIND_SUM) {
		*p++ = TAG(3, WT_VARINT);
		*p++ = 1;
	}
	return p;
}

int otlp_pb_request(struct otlp_enc *e, size_t k, struct buf *out)
{
	const size_t nl = strlen(OTLP_SCOPE_NAME), vl = strlen(ACCEL_VERSION);
	const size_t scope = (nl ? lenfield(nl) : 0) + (vl ? lenfield(vl) : 0);
	size_t *sz = xmalloc((k ? k : 1) * sizeof(*sz)), *gdata = xcalloc(e->ngrp + 1, sizeof(*gdata));
	size_t total = 0, *rsm = xcalloc(e->nridx + 1, sizeof(*rsm));
	uint8_t *p, *start;
	int rc;

	/* Sizes: each group's data and Metric, each resource's ScopeMetrics, the request. */
	for (size_t g = 0; g < e->ngrp; g++)
		gdata[g] = data_len(e, &e->grp[g], e->met[e->grp[g].met].d.kind, sz + e->grp[g].pos);
	for (size_t r = 0; r < e->nridx; r++) {
		size_t sm = lenfield(scope);

		for (size_t g = 0; g < e->ngrp; g++)
			if (e->grp[g].res == e->ridx[r])
				sm += lenfield(metric_len(&e->met[e->grp[g].met], gdata[g]));
		rsm[r] = sm;
		total += lenfield(lenfield(e->res[e->ridx[r]].a.pb_len) + lenfield(sm));
	}
	buf_reset(out);
	if ((rc = buf_reserve(out, total + 1))) {
		free(sz);
		free(gdata);
		free(rsm);
		return rc == -ENOSPC ? -E2BIG : rc;
	}
	p = start = (uint8_t *)out->data;
	for (size_t r = 0; r < e->nridx; r++) {
		const struct oattrs *ra = &e->res[e->ridx[r]].a;

		p = put_len(p, 1, lenfield(ra->pb_len) + lenfield(rsm[r])); /* ResourceMetrics */
		p = put_len(p, 1, ra->pb_len);                              /* Resource */
		p = put_attrs(p, ra, F_RES_ATTRS);
		p = put_len(p, 2, rsm[r]);                                  /* ScopeMetrics */
		p = put_len(p, 1, scope);                                   /* InstrumentationScope */
		if (nl)
			p = put_str(p, 1, OTLP_SCOPE_NAME, nl);
		if (vl)
			p = put_str(p, 2, ACCEL_VERSION, vl);
		for (size_t g = 0; g < e->ngrp; g++) { /* this resource's metrics, in the order their points came */
			const struct ogroup *gr = &e->grp[g];

			if (gr->res != e->ridx[r])
				continue;
			p = put_len(p, 2, metric_len(&e->met[gr->met], gdata[g]));
			p = put_metric(p, e, gr, sz + gr->pos, gdata[g]);
		}
	}
	out->len = (size_t)(p - start);
	out->data[out->len] = '\0';
	free(sz);
	free(gdata);
	free(rsm);
	return out->len == total ? 0 : -EPROTO;
}
