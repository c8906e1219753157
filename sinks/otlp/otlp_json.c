/* SPDX-License-Identifier: MIT */
/*
 * accel-otlp's OTLP/JSON, and the answers' bodies in either encoding.
 *
 * OTLP/JSON is protobuf's JSON mapping with OTLP's exceptions: keys in
 * lowerCamelCase, 64-bit integers (the times, counts) as decimal strings,
 * enums as integers, trace and span ids as hex (none here). Written
 * straight from the encoder's layout (otlp_enc_int.h) with the project's
 * string escaper (common/jsonw.h): no JSON object is built per point, and
 * each series' attributes are text made once, when it is interned. Numbers
 * are printed as accel-prom's exposition prints them (prom_format_value: the
 * shortest text that reads back exactly), not with jsonw's 10 significant
 * digits, so that a value reads back as the protobuf request's does.
 */
#include "otlp_enc_int.h"
#include "otlp.pb-c.h"

#include "../../common/jsonw.h"
#include "../../common/series/prom_expo.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PUT(b, lit) buf_add((b), (lit), sizeof(lit) - 1)

/* A double as OTLP/JSON writes it: a number, or "NaN", "Infinity", "-Infinity". */
static int put_double(struct buf *b, double v)
{
	char t[32];
	size_t n;

	if (isnan(v))
		return PUT(b, "\"NaN\"");
	if (isinf(v))
		return v > 0 ? PUT(b, "\"Infinity\"") : PUT(b, "\"-Infinity\"");
	n = prom_format_value(v, t);
	return buf_add(b, t, n);
}

/* A 64-bit integer as OTLP/JSON writes it: a decimal string. */
static int put_u64(struct buf *b, uint64_t u)
{
	char t[24], *p = t + sizeof(t);

	*--p = '"';
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	*--p = '"';
	return buf_add(b, p, (size_t)(t + sizeof(t) - p));
}

static int put_str(struct buf *b, const char *s)
{
	return json_write_string(b, s, strlen(s));
}

void otlp_json_attrs(struct oattrs *a)
{
	struct buf b;
	int rc = 0;

	buf_init(&b, (size_t)1 << 24);
	rc |= PUT(&b, "[");
	for (size_t i = 0; i < a->n; i++) {
		const struct oattr *kv = &a->kv[i];

		rc |= i ? PUT(&b, ",{\"key\":") : PUT(&b, "{\"key\":");
		rc |= put_str(&b, kv->key);
		if (!kv->str) {
			rc |= PUT(&b, ",\"value\":{\"doubleValue\":");
			rc |= put_double(&b, kv->num);
		} else {
			rc |= PUT(&b, ",\"value\":{\"stringValue\":");
			rc |= put_str(&b, kv->str);
		}
		rc |= PUT(&b, "}}");
	}
	rc |= PUT(&b, "]");
	free(a->json);
	a->json_len = rc ? 2 : b.len;
	a->json = rc ? xstrdup("[]") : b.data;
	if (rc)
		buf_free(&b);
}

/* One data point. */
static int json_point(struct otlp_enc *e, const struct opoint *p, enum otlp_kind kind, struct buf *b)
{
	const struct oattrs *a = &e->ser[p->ser].a;
	int rc = 0;

	rc |= PUT(b, "{");
	if (a->n) {
		rc |= PUT(b, "\"attributes\":");
		rc |= buf_add(b, a->json, a->json_len);
		rc |= PUT(b, ",");
	}
	if (kind != OTLP_KIND_GAUGE) {
		rc |= PUT(b, "\"startTimeUnixNano\":");
		rc |= put_u64(b, (uint64_t)p->start_ms * 1000000u);
		rc |= PUT(b, ",");
	}
	rc |= PUT(b, "\"timeUnixNano\":");
	rc |= put_u64(b, (uint64_t)p->ts_ms * 1000000u);
	if (p->flags) {
		rc |= buf_printf(b, ",\"flags\":%" PRIu32, p->flags);
	} else if (kind != OTLP_KIND_HISTOGRAM) {
		rc |= PUT(b, ",\"asDouble\":");
		rc |= put_double(b, p->v);
	}
	if (p->hist) {
		const double *h = &e->hp[p->hist - 1];
		size_t n = (size_t)h[0];

		rc |= PUT(b, ",\"count\":");
		rc |= put_u64(b, (uint64_t)h[2]);
		rc |= PUT(b, ",\"sum\":");
		rc |= put_double(b, h[1]);
		rc |= PUT(b, ",\"bucketCounts\":[");
		for (size_t i = 0; i <= n; i++) {
			rc |= i ? PUT(b, ",") : 0;
			rc |= put_u64(b, (uint64_t)h[3 + n + i]);
		}
		rc |= PUT(b, "],\"explicitBounds\":[");
		for (size_t i = 0; i < n; i++) {
			rc |= i ? PUT(b, ",") : 0;
			rc |= put_double(b, h[3 + i]);
		}
		rc |= PUT(b, "]");
	}
	rc |= PUT(b, "}");
	return rc;
}

/* One group's Metric. */
static int json_metric(struct otlp_enc *e, const struct ogroup *g, struct buf *b)
{
	const struct omet *m = &e->met[g->met];
	int rc = 0;

	rc |= PUT(b, "{\"name\":");
	rc |= put_str(b, m->d.name);
	rc |= PUT(b, ",\"description\":");
	rc |= put_str(b, m->fam->help ? m->fam->help : "");
	rc |= PUT(b, ",\"unit\":");
	rc |= put_str(b, m->d.unit);
	rc |= m->d.kind == OTLP_KIND_GAUGE	? PUT(b, ",\"gauge\":{\"dataPoints\":[")
	      : m->d.kind == OTLP_KIND_HISTOGRAM ? PUT(b, ",\"histogram\":{\"dataPoints\":[")
						 : PUT(b, ",\"sum\":{\"dataPoints\":[");
	for (size_t j = 0; j < g->n && !rc; j++) {
		rc |= j ? PUT(b, ",") : 0;
		rc |= json_point(e, &e->pt[e->head + e->order[g->pos + j]], m->d.kind, b);
	}
	rc |= PUT(b, "]");
	if (m->d.kind != OTLP_KIND_GAUGE)
		rc |= PUT(b, ",\"aggregationTemporality\":2");
	if (m->d.kind == OTLP_KIND_SUM)
		rc |= PUT(b, ",\"isMonotonic\":true");
	else if (m->d.kind == OTLP_KIND_UPDOWN)
		rc |= PUT(b, ",\"isMonotonic\":false");
	rc |= PUT(b, "}}");
	return rc;
}

int otlp_json_request(struct otlp_enc *e, size_t k, struct buf *out)
{
	int rc = PUT(out, "{\"resourceMetrics\":[");

	(void)k;
	for (size_t r = 0; r < e->nridx && !rc; r++) {
		const struct ores *res = &e->res[e->ridx[r]];
		int first = 1;

		rc |= r ? PUT(out, ",") : 0;
		rc |= PUT(out, "{\"resource\":{\"attributes\":");
		rc |= buf_add(out, res->a.json, res->a.json_len);
		rc |= PUT(out, "},\"scopeMetrics\":[{\"scope\":{\"name\":\"" OTLP_SCOPE_NAME "\",\"version\":");
		rc |= put_str(out, ACCEL_VERSION);
		rc |= PUT(out, "},\"metrics\":[");
		for (size_t g = 0; g < e->ngrp && !rc; g++) {
			if (e->grp[g].res != e->ridx[r])
				continue;
			rc |= first ? 0 : PUT(out, ",");
			first = 0;
			rc |= json_metric(e, &e->grp[g], out);
		}
		rc |= PUT(out, "]}]}");
	}
	rc |= PUT(out, "]}");
	return rc ? -E2BIG : 0;
}

/* ---- answers ---------------------------------------------------------------------------- */

static void copy_msg(char *msg, size_t msgsz, const char *s)
{
	if (msgsz)
		snprintf(msg, msgsz, "%s", s ? s : "");
}

/* obj's member under either of OTLP/JSON's spellings (lowerCamelCase, or the proto field name). */
static json_t *member(json_t *obj, const char *camel, const char *snake)
{
	json_t *v = json_object_get(obj, camel);

	return v ? v : json_object_get(obj, snake);
}

static int json_response(const void *body, size_t len, int64_t *rejected, char *msg, size_t msgsz)
{
	json_t *root = json_loadb(body, len, 0, NULL), *ps, *n, *m;
	int rc = 0;

	if (!json_is_object(root)) {
		json_decref(root);
		return -EINVAL;
	}
	ps = member(root, "partialSuccess", "partial_success");
	if (ps && !json_is_object(ps) && !json_is_null(ps))
		rc = -EINVAL;
	if (!rc && json_is_object(ps)) {
		n = member(ps, "rejectedDataPoints", "rejected_data_points");
		m = member(ps, "errorMessage", "error_message");
		if (json_is_integer(n)) {
			*rejected = json_integer_value(n);
		} else if (json_is_string(n)) {
			char *end;
			long long v = strtoll(json_string_value(n), &end, 10);

			if (*end || end == json_string_value(n))
				rc = -EINVAL;
			*rejected = v;
		} else if (n && !json_is_null(n)) {
			rc = -EINVAL;
		}
		if (m && !json_is_string(m) && !json_is_null(m))
			rc = -EINVAL;
		else if (json_is_string(m))
			copy_msg(msg, msgsz, json_string_value(m));
	}
	json_decref(root);
	return rc;
}

int otlp_response_parse(const void *body, size_t len, enum otlp_encoding enc, int64_t *rejected, char *msg,
			size_t msgsz)
{
	Otlp__ExportMetricsServiceResponse *r;
	int rc = 0;

	*rejected = 0;
	copy_msg(msg, msgsz, "");
	if (!len)
		return 0;
	if (enc == OTLP_JSON)
		return json_response(body, len, rejected, msg, msgsz);
	r = otlp__export_metrics_service_response__unpack(NULL, len, body);
	if (!r)
		return -EINVAL;
	/* Bytes that decode to fields the message does not have are not a response (text, an HTML page). */
	if (r->base.n_unknown_fields && !r->partial_success) {
		rc = -EINVAL;
	} else if (r->partial_success) {
		*rejected = r->partial_success->rejected_data_points;
		copy_msg(msg, msgsz, r->partial_success->error_message);
	}
	otlp__export_metrics_service_response__free_unpacked(r, NULL);
	return rc;
}

int otlp_status_parse(const void *body, size_t len, enum otlp_encoding enc, char *msg, size_t msgsz)
{
	int rc = -EINVAL;

	copy_msg(msg, msgsz, "");
	if (!len)
		return -EINVAL;
	if (enc == OTLP_JSON) {
		json_t *root = json_loadb(body, len, 0, NULL), *m = json_object_get(root, "message");

		if (json_is_object(root) && json_is_string(m) && *json_string_value(m)) {
			copy_msg(msg, msgsz, json_string_value(m));
			rc = 0;
		}
		json_decref(root);
	} else {
		Otlp__Status *s = otlp__status__unpack(NULL, len, body);

		if (s && !s->base.n_unknown_fields && s->message && *s->message) {
			copy_msg(msg, msgsz, s->message);
			rc = 0;
		}
		if (s)
			otlp__status__free_unpacked(s, NULL);
	}
	return rc;
}
