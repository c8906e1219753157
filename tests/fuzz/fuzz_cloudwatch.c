/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: stream lines -> samples -> CloudWatch datums -> the
 * PutMetricData query body and EMF events, the path every byte of
 * accel-cloudwatch's input takes (its HTTP transport aside).
 *
 * The input is read with the stream reader; each report goes through the
 * common mapping and cw_map_sample() into datums. The datums are then sent
 * through cw_body_build() in as many bodies as it takes (with the request
 * limits CloudWatch has, and again with small limits taken from the input,
 * so that splitting is exercised), and through cw_emf_render(). Each body
 * is parsed back: its members must be numbered 1..N in order, its form
 * encoding must decode to each datum's name, dimensions and unit, and its
 * values must read back as the datum's double exactly; it must not pass its
 * byte limit. Each EMF event must be a JSON object whose metrics and
 * dimensions are where its directive says, and every datum must be in
 * exactly one event. A violation aborts, which libFuzzer reports with the
 * input.
 *
 * Build and run: tests/fuzz/run.sh cloudwatch (make fuzz), or tests/fuzz/build.sh DIR.
 */
#include "../../common/log.h"
#include "../../common/samples.h"
#include "../../common/stream.h"
#include "../../sinks/cloudwatch/cloudwatch_emf.h"
#include "../../sinks/cloudwatch/cloudwatch_map.h"
#include "../../sinks/cloudwatch/cloudwatch_query.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_DATUMS 4000
#define NOW_MS 1795239000000LL

struct ctx {
	struct cw_map_opts opts;
	struct cw_scratch sc;
	struct cw_datum d[MAX_DATUMS];
	size_t n;
};

static void fail(const char *what, const char *text, size_t len)
{
	fprintf(stderr, "fuzz_cloudwatch: %s: %.*s\n", what, (int)(len > 300 ? 300 : len), text);
	abort();
}

static void on_sample(const struct sample *s, void *ud)
{
	struct ctx *c = ud;
	struct cw_point p;
	struct cw_series *se;

	if (c->n == MAX_DATUMS || cw_map_sample(&c->opts, s, NOW_MS, &p, &c->sc) != CW_OK)
		return;
	p.value = s->value;
	if (cw_value_ok(p.value))
		fail("a value CloudWatch refuses was mapped as ok", s->fam->name, strlen(s->fam->name));
	se = cw_series_new(&p);
	if (!se)
		return; /* names past CloudWatch's limits: the sink drops those too */
	se->refs = 1;
	c->d[c->n++] = (struct cw_datum){ se, s->value, p.ts_ms };
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Form-decode p[0..n) into a new string; aborts on an invalid escape or a byte quote_plus() would have encoded. */
static char *form_decode(const char *p, size_t n)
{
	char *o = malloc(n + 1), *q = o;

	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)p[i];

		if (ch == '+') {
			*q++ = ' ';
		} else if (ch == '%') {
			if (i + 2 >= n || hexval(p[i + 1]) < 0 || hexval(p[i + 2]) < 0)
				fail("bad %-escape", p, n);
			*q++ = (char)(hexval(p[i + 1]) * 16 + hexval(p[i + 2]));
			i += 2;
		} else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
			   ch == '_' || ch == '.' || ch == '~') {
			*q++ = (char)ch;
		} else {
			fail("a byte that form encoding does not leave as it is", p, n);
		}
	}
	*q = '\0';
	return o;
}

/* The next "key=value" pair of a body at *pos: key and decoded value (caller frees both). */
static int next_pair(const char *b, size_t len, size_t *pos, char **key, char **val)
{
	const char *p = b + *pos, *end = b + len, *amp, *eq;

	if (p >= end)
		return 0;
	amp = memchr(p, '&', (size_t)(end - p));
	if (!amp)
		amp = end;
	eq = memchr(p, '=', (size_t)(amp - p));
	if (!eq)
		fail("a pair without =", p, (size_t)(amp - p));
	*key = strndup(p, (size_t)(eq - p));
	*val = form_decode(eq + 1, (size_t)(amp - eq - 1));
	*pos = (size_t)(amp - b) + (amp < end);
	return 1;
}

static void expect(const char *b, size_t len, size_t *pos, const char *key, const char *val)
{
	char *k, *v;

	if (!next_pair(b, len, pos, &k, &v))
		fail("the body ends early, before", key, strlen(key));
	if (strcmp(k, key))
		fail("unexpected key", k, strlen(k));
	if (val && strcmp(v, val))
		fail("unexpected value", v, strlen(v));
	free(k);
	free(v);
}

/* Parse one body back and compare it with the datums it claims to hold. */
static void check_body(const struct buf *b, const struct cw_body_opts *o, const struct cw_datum *d,
		       const size_t *members, size_t nm)
{
	size_t pos = 0;
	char key[128], *k, *v, *end;

	if (b->len > o->max_bytes)
		fail("body past its byte limit", b->data, b->len);
	if (nm > o->max_datums)
		fail("body past its datum limit", b->data, b->len);
	expect(b->data, b->len, &pos, "Action", "PutMetricData");
	expect(b->data, b->len, &pos, "Version", "2010-08-01");
	expect(b->data, b->len, &pos, "Namespace", "Fuzz/Accel ns");
	for (size_t m = 0; m < nm; m++) {
		const struct cw_datum *x = &d[members[m]];
		const struct cw_series *s = x->series;
		char pfx[48];

		snprintf(pfx, sizeof(pfx), "MetricData.member.%zu.", m + 1);
		snprintf(key, sizeof(key), "%sMetricName", pfx);
		expect(b->data, b->len, &pos, key, s->name);
		for (size_t j = 0; j < s->ndims; j++) {
			snprintf(key, sizeof(key), "%sDimensions.member.%zu.Name", pfx, j + 1);
			expect(b->data, b->len, &pos, key, s->dims[j].name);
			snprintf(key, sizeof(key), "%sDimensions.member.%zu.Value", pfx, j + 1);
			expect(b->data, b->len, &pos, key, s->dims[j].value);
		}
		snprintf(key, sizeof(key), "%sTimestamp", pfx);
		expect(b->data, b->len, &pos, key, NULL);
		snprintf(key, sizeof(key), "%sValue", pfx);
		if (!next_pair(b->data, b->len, &pos, &k, &v) || strcmp(k, key))
			fail("no Value where it belongs", b->data, b->len);
		if (strtod(v, &end) != x->value || *end)
			fail("a Value that does not read back as the datum's", v, strlen(v));
		free(k);
		free(v);
		snprintf(key, sizeof(key), "%sUnit", pfx);
		expect(b->data, b->len, &pos, key, s->unit);
		if (o->storage_resolution == 1) {
			snprintf(key, sizeof(key), "%sStorageResolution", pfx);
			expect(b->data, b->len, &pos, key, "1");
		}
	}
	if (pos != b->len)
		fail("bytes after the last member", b->data + pos, b->len - pos);
}

/* Send every datum through bodies of the given limits. */
static void check_bodies(const struct cw_datum *d, size_t n, size_t max_bytes, size_t max_datums, int res)
{
	struct cw_body_opts o = { "Fuzz%2FAccel+ns", res, max_bytes, max_datums };
	struct buf b;
	size_t *members = malloc((n + 1) * sizeof(*members)), from = 0, nm, seen = 0;

	buf_init(&b, (size_t)4 << 20);
	while (from < n) {
		size_t next = cw_body_build(&b, &o, d, from, n, NULL, members, &nm);

		check_body(&b, &o, d, members, nm);
		for (size_t m = 0; m < nm; m++)
			if (members[m] != from + m)
				fail("members out of order", b.data, b.len);
		seen += nm;
		if (nm == 0) {
			/* One datum larger than the limit: only allowed with the small test limits. */
			if (max_bytes == CW_MAX_BODY)
				fail("a datum that fits no body of CloudWatch's size", b.data, b.len);
			next = from + 1;
			seen++;
		}
		from = next;
	}
	if (seen != n)
		fail("datums lost between bodies", "", 0);
	buf_free(&b);
	free(members);
}

static void check_emf(const struct cw_datum *d, size_t n, int res)
{
	struct buf out;
	const char *p, *end;
	size_t metrics = 0;
	int events;

	buf_init(&out, (size_t)64 << 20);
	events = cw_emf_render(&out, "Fuzz/Accel \"ns\"", res, d, n);
	if (events < 0)
		fail("EMF render failed", "", 0);
	p = out.data ? out.data : "";
	end = p + out.len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		json_t *ev, *dir, *dims, *ms;
		json_error_t err;
		size_t i;
		json_t *x;

		if (!nl)
			fail("EMF without a final newline", p, (size_t)(end - p));
		ev = json_loadb(p, (size_t)(nl - p), JSON_DECODE_INT_AS_REAL, &err);
		if (!json_is_object(ev))
			fail(err.text, p, (size_t)(nl - p));
		dir = json_array_get(json_object_get(json_object_get(ev, "_aws"), "CloudWatchMetrics"), 0);
		if (!json_is_number(json_object_get(json_object_get(ev, "_aws"), "Timestamp")) ||
		    strcmp(json_string_value(json_object_get(dir, "Namespace")) ?: "", "Fuzz/Accel \"ns\""))
			fail("EMF event without its _aws directive", p, (size_t)(nl - p));
		dims = json_array_get(json_object_get(dir, "Dimensions"), 0);
		json_array_foreach(dims, i, x)
			if (!json_is_string(json_object_get(ev, json_string_value(x))))
				fail("an EMF dimension without its value", p, (size_t)(nl - p));
		ms = json_object_get(dir, "Metrics");
		if (!json_array_size(ms) || json_array_size(ms) > CW_EMF_MAX_METRICS)
			fail("an EMF event with no metrics or too many", p, (size_t)(nl - p));
		json_array_foreach(ms, i, x) {
			json_t *v = json_object_get(ev, json_string_value(json_object_get(x, "Name")));

			if (!json_is_number(v) && !json_is_string(v))
				fail("an EMF metric without its value", p, (size_t)(nl - p));
		}
		metrics += json_array_size(ms);
		json_decref(ev);
		events--;
		p = nl + 1;
	}
	if (events != 0)
		fail("EMF event count differs from the lines", out.data, out.len);
	if (metrics != n)
		fail("EMF lost or repeated datums", out.data, out.len);
	buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ctx c;
	struct map_cb cb = { .sample = on_sample, .ud = &c };
	struct stream s;
	json_t *report;
	enum stream_bad why;
	char err[512];
	size_t len;
	int fd, rc;

	if (!c.opts.max_age_ms) {
		log_init("fuzz", LOG_LVL_SILENT);
		cw_map_opts_init(&c.opts, "fuzz-host");
	}
	c.n = 0;
	fd = memfd_create("fuzz", 0);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	stream_init(&s, fd, "fuzz", 1 << 16);
	while ((rc = stream_next(&s, &report, &len, &why, err, sizeof(err))) != 0 && rc != -2) {
		if (rc == 1) {
			map_report(report, NOW_MS, &cb);
			json_decref(report);
		}
	}
	stream_free(&s);
	close(fd);
	check_bodies(c.d, c.n, CW_MAX_BODY, CW_MAX_DATUMS, 60);
	check_bodies(c.d, c.n, 300 + size % 4096, 1 + size % 7, 1);
	check_emf(c.d, c.n, (int)(size & 1) ? 1 : 60);
	for (size_t i = 0; i < c.n; i++)
		cw_series_free(c.d[i].series);
	return 0;
}
