/* SPDX-License-Identifier: MIT */
/*
 * EMF rendering; see cloudwatch_emf.h.
 */
#include "cloudwatch_emf.h"
#include "cloudwatch_query.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int same_dims(const struct cw_series *a, const struct cw_series *b)
{
	if (a == b)
		return 1;
	if (a->ndims != b->ndims)
		return 0;
	for (size_t i = 0; i < a->ndims; i++)
		if (strcmp(a->dims[i].name, b->dims[i].name) || strcmp(a->dims[i].value, b->dims[i].value))
			return 0;
	return 1;
}

/* A JSON string literal for s (ASCII and UTF-8 pass through; quotes, backslashes and controls escaped). */
static int json_str(struct buf *b, const char *s)
{
	int rc = buf_add(b, "\"", 1);

	for (; *s && !rc; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			rc = buf_printf(b, "\\%c", c);
		else if (c < 0x20)
			rc = buf_printf(b, "\\u%04x", c);
		else
			rc = buf_add(b, s, 1);
	}
	return rc ? rc : buf_add(b, "\"", 1);
}

/* One event: datum i and every later unused datum of the same time and dimensions, up to 100 metrics. */
static int render_event(struct buf *out, const char *ns, int res, const struct cw_datum *d, size_t n, size_t i,
			unsigned char *used)
{
	const struct cw_series *s = d[i].series;
	const struct cw_datum *pick[CW_EMF_MAX_METRICS];
	size_t np = 0;
	int rc;

	for (size_t j = i; j < n && np < CW_EMF_MAX_METRICS; j++) {
		size_t k;

		if (used[j] || d[j].ts_ms != d[i].ts_ms || !same_dims(s, d[j].series))
			continue;
		for (k = 0; k < np; k++)
			if (!strcmp(pick[k]->series->name, d[j].series->name))
				break;
		if (k < np)
			continue; /* the same metric twice: it goes in a later event */
		pick[np++] = &d[j];
		used[j] = 1;
	}
	rc = buf_printf(out, "{\"_aws\":{\"Timestamp\":%lld,\"CloudWatchMetrics\":[{\"Namespace\":", (long long)d[i].ts_ms);
	rc |= json_str(out, ns);
	rc |= buf_add(out, ",\"Dimensions\":[[", 16);
	for (size_t k = 0; k < s->ndims; k++) {
		rc |= k ? buf_add(out, ",", 1) : 0;
		rc |= json_str(out, s->dims[k].name);
	}
	rc |= buf_add(out, "]],\"Metrics\":[", 14);
	for (size_t k = 0; k < np; k++) {
		rc |= buf_add(out, k ? ",{\"Name\":" : "{\"Name\":", k ? 9 : 8);
		rc |= json_str(out, pick[k]->series->name);
		rc |= buf_add(out, ",\"Unit\":", 8);
		rc |= json_str(out, pick[k]->series->unit);
		rc |= res == 1 ? buf_add(out, ",\"StorageResolution\":1}", 23) : buf_add(out, "}", 1);
	}
	rc |= buf_add(out, "]}]}", 4);
	for (size_t k = 0; k < s->ndims; k++) {
		rc |= buf_add(out, ",", 1);
		rc |= json_str(out, s->dims[k].name);
		rc |= buf_add(out, ":", 1);
		rc |= json_str(out, s->dims[k].value);
	}
	for (size_t k = 0; k < np; k++) {
		char v[CW_DOUBLE_LEN];

		cw_format_double(pick[k]->value, v);
		rc |= buf_add(out, ",", 1);
		rc |= json_str(out, pick[k]->series->name);
		rc |= buf_printf(out, ":%s", v);
	}
	rc |= buf_add(out, "}\n", 2);
	return rc ? -ENOSPC : 0;
}

int cw_emf_render(struct buf *out, const char *ns, int storage_resolution, const struct cw_datum *d, size_t n)
{
	unsigned char *used = xcalloc(n ? n : 1, 1);
	int events = 0, rc = 0;

	for (size_t i = 0; i < n && !rc; i++) {
		if (used[i])
			continue;
		rc = render_event(out, ns, storage_resolution, d, n, i, used);
		events++;
	}
	free(used);
	return rc ? rc : events;
}
