/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: an exposition as an endpoint serves it -> common/
 * expo_parse.c -> monitor/endpoint/infer.c, the path every byte an inference server
 * (or anything at a runtime's URL) sends takes through the producer.
 *
 * The input is any bytes. Checked on each sample the parser gives: its name
 * and label names are well-formed names, at most EXPO_MAX_LABELS labels,
 * the series key starts with the name, the name is its family plus the
 * suffix it says, and a type other than untyped comes with a family that
 * is a TYPE line's. Then every sample is written back as a text line (label
 * values escaped, the value with 17 digits) and parsed again: the same
 * names, labels and values must come back, bit for bit (NaN as NaN). Then
 * the input is fed to infer.c as two scrapes, first half and whole (with
 * the flavour recognised, and configured as the input's size picks) and each execution_stats it
 * writes must serialize, with counts that are non-negative integers,
 * percentiles finite and non-decreasing in their order, means finite. A
 * violation aborts, which libFuzzer reports with the input.
 *
 * Build and run: tests/fuzz/run.sh expo (make fuzz), or tests/fuzz/build.sh DIR expo.
 */
#include "../../common/expo_parse.h"
#include "../../common/util.h"
#include "../../monitor/endpoint/infer.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SAMPLES 4096

struct rec {
	char *name;
	char *labels; /* name \1 value \2 ... as given */
	double value;
};

struct ctx {
	struct rec *r;
	size_t n;
	struct buf text; /* the samples written back */
	size_t check;    /* second pass: index of the next expected sample */
	int second;
};

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_expo: %s: %s\n", what, detail ? detail : "");
	abort();
}

static int is_name(const char *s, int metric)
{
	if (!*s || !(((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' || (metric && *s == ':')) ||
		     *s == ':'))
		return 0;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		      *s == ':'))
			return 0;
	return 1;
}

static const char *const suffix_text[] = { "", "_total", "_created", "_bucket", "_sum", "_count", "_info" };

static void on_sample(const struct expo_sample *s, void *ud)
{
	struct ctx *c = ud;
	struct buf l;
	size_t fl = strlen(s->family);

	if (!is_name(s->name, 1))
		fail("a bad metric name", s->name);
	if (s->nlabels > EXPO_MAX_LABELS)
		fail("too many labels", s->name);
	if (strncmp(s->series, s->name, strlen(s->name)))
		fail("the series key does not start with the name", s->series);
	if ((unsigned)s->suffix >= sizeof(suffix_text) / sizeof(suffix_text[0]))
		fail("a suffix out of range", s->name);
	if (strncmp(s->name, s->family, fl))
		fail("the family is not a prefix of the name", s->family);
	/* _sum and _count also stand for _gsum and _gcount */
	if (strcmp(s->name + fl, suffix_text[s->suffix]) &&
	    !(s->suffix == EXPO_SFX_SUM && !strcmp(s->name + fl, "_gsum")) &&
	    !(s->suffix == EXPO_SFX_COUNT && !strcmp(s->name + fl, "_gcount")))
		fail("name is not family + suffix", s->name);
	if (s->family == s->name && s->suffix != EXPO_SFX_NONE)
		fail("a suffix without a family", s->name);
	buf_init(&l, 1u << 20);
	for (size_t i = 0; i < s->nlabels; i++) {
		if (!is_name(s->labels[i].name, 0))
			fail("a bad label name", s->labels[i].name);
		buf_printf(&l, "%s\1%s\2", s->labels[i].name, s->labels[i].value);
	}
	if (c->second) {
		struct rec *r;

		if (c->check >= c->n)
			fail("the text written back gives more samples", s->name);
		r = &c->r[c->check++];
		if (strcmp(r->name, s->name))
			fail("a name changed on the way back", s->name);
		if (strcmp(r->labels, l.data ? l.data : ""))
			fail("labels changed on the way back", s->name);
		if (memcmp(&r->value, &s->value, sizeof(double)) && !(isnan(r->value) && isnan(s->value)))
			fail("a value changed on the way back", s->name);
		buf_free(&l);
		return;
	}
	if (c->n == MAX_SAMPLES) {
		buf_free(&l);
		return;
	}
	c->r[c->n].name = xstrdup(s->name);
	c->r[c->n].labels = xstrdup(l.data ? l.data : "");
	c->r[c->n].value = s->value;
	c->n++;
	/* written back: escapes as the format has them */
	buf_printf(&c->text, "%s{", s->name);
	for (size_t i = 0; i < s->nlabels; i++) {
		buf_printf(&c->text, "%s%s=\"", i ? "," : "", s->labels[i].name);
		for (const char *v = s->labels[i].value; *v; v++) {
			if (*v == '\\' || *v == '"')
				buf_printf(&c->text, "\\%c", *v);
			else if (*v == '\n')
				buf_printf(&c->text, "\\n");
			else
				buf_add(&c->text, v, 1);
		}
		buf_printf(&c->text, "\"");
	}
	if (isnan(s->value))
		buf_printf(&c->text, "} NaN\n");
	else if (isinf(s->value))
		buf_printf(&c->text, "} %cInf\n", s->value > 0 ? '+' : '-');
	else
		buf_printf(&c->text, "} %.17g\n", s->value);
	buf_free(&l);
}

/* Every number under v where it must be sane; pcts: v is a percentile object. */
static void check_json(json_t *v, const char *key, int pcts)
{
	const char *k;
	json_t *x;

	if (json_is_object(v)) {
		double prev = -INFINITY;

		json_object_foreach(v, k, x) {
			int p = !strcmp(k, "total_latency") || !strcmp(k, "time_to_first_token") ||
				!strcmp(k, "time_per_output_token") || !strcmp(k, "queue");

			if (pcts) {
				/* keys come in increasing order of their quantile */
				if (!json_is_real(x) || !isfinite(json_real_value(x)) || json_real_value(x) < prev)
					fail("percentiles decrease or are not finite", k);
				prev = json_real_value(x);
				continue;
			}
			/* model, version and device names are the server's: never taken for the report's keys */
			check_json(x,
				   !strcmp(key, "models")	  ? "<model>"
				   : !strcmp(key, "<model>")	  ? "<version>"
				   : !strcmp(key, "server_devices") ? "<device>"
								    : k,
				   p && json_is_object(x) && strcmp(key, "latency_stats") == 0);
			if ((!strcmp(key, "execution_summary") || !strcmp(key, "error_summary") || !strcmp(key, "tokens")) &&
			    (!json_is_integer(x) || json_integer_value(x) < 0))
				fail("a count is not a non-negative integer", k);
		}
	} else if (json_is_real(v) && !isfinite(json_real_value(v))) {
		fail("a number is not finite", key);
	}
}

/* A number at a.b in o, NAN when absent. */
static double num_at(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(json_object_get(o, a), b);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Two numbers the same, NAN equal to NAN. */
static int same_num(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

/* The records execution_stats gave: each model's object, in the group's order, with its numbers; its devices. */
static void check_records(const json_t *g, const struct infer_stats *st)
{
	const char *mk, *vk, *uuid;
	json_t *vs, *m, *dev;
	size_t i = 0;

	json_object_foreach((json_t *)json_object_get(g, "models"), mk, vs) {
		json_object_foreach(vs, vk, m) {
			const struct infer_model *r = i < st->nmodels ? &st->models[i] : NULL;

			if (!r || r->obj != m)
				fail("a model's record is not its object, in the group's order", mk);
			if (!same_num(r->completed, num_at(m, "execution_summary", "completed")) ||
			    !same_num(r->compute_s, num_at(m, "mean_seconds", "compute_infer")) ||
			    !same_num(r->request_s, num_at(m, "mean_seconds", "request")) ||
			    !same_num(r->generation, num_at(m, "tokens", "generation")))
				fail("a model's record differs from its object", mk);
			i++;
		}
	}
	if (i != st->nmodels)
		fail("more model records than objects", NULL);
	i = 0;
	json_object_foreach((json_t *)json_object_get(g, "server_devices"), uuid, dev) {
		if (i >= st->ndevices || strcmp(st->devices[i], uuid))
			fail("a device's UUID is not its key, in the group's order", uuid);
		i++;
	}
	if (i != st->ndevices)
		fail("more device records than keys", NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct expo_parser *parser; /* kept from input to input, as a caller keeps it */
	struct ctx c;
	char err[256];
	size_t bad;

	if (!parser)
		parser = expo_parser_new();
	memset(&c, 0, sizeof(c));
	c.r = xcalloc(MAX_SAMPLES, sizeof(*c.r));
	buf_init(&c.text, 64u << 20);
	bad = expo_parse(parser, (const char *)data, size, on_sample, &c, err, sizeof(err));
	if (bad && !strstr(err, "line "))
		fail("a bad line without its description", err);
	if (c.n < MAX_SAMPLES) {
		c.second = 1;
		bad = expo_parse(parser, c.text.data ? c.text.data : "", c.text.len, on_sample, &c, err, sizeof(err));
		if (bad)
			fail("the text written back has bad lines", err);
		if (c.check != c.n)
			fail("the text written back gives fewer samples", NULL);
	}
	for (size_t i = 0; i < c.n; i++) {
		free(c.r[i].name);
		free(c.r[i].labels);
	}
	free(c.r);
	buf_free(&c.text);

	/* recognised, and the flavour the input's size picks (every one in turn over a run) */
	for (int s = INFER_AUTO; s <= INFER_PROMETHEUS; s += size % INFER_PROMETHEUS + 1) {
		struct infer *in = infer_new((enum infer_server)s);
		json_t *g;
		char *out;

		infer_update(in, (const char *)data, size / 2, 1, err, sizeof(err));
		infer_update(in, (const char *)data, size, 2, err, sizeof(err));
		for (int k = 0; k < 2; k++) {
			struct infer_stats st;

			g = json_object();
			infer_execution_stats(in, g, &st);
			out = json_dumps(g, JSON_COMPACT);
			if (!out)
				fail("execution_stats does not serialize", NULL);
			free(out);
			check_json(g, "", 0);
			check_records(g, &st);
			json_decref(g);
		}
		infer_free(in);
	}
	return 0;
}
