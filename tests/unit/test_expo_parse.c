/* SPDX-License-Identifier: MIT */
/*
 * common/expo_parse.c: accel-prom's own golden exposition read back sample
 * by sample, label escapes, types from "# TYPE", special values,
 * timestamps in both formats, OpenMetrics' "# EOF" and exemplars, CRLF, and
 * bad lines counted and skipped with the first one described.
 */
#include "../../common/expo_parse.h"
#include "../../common/util.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct got {
	size_t n;
	char names[64][128];
	char series[64][256];
	double values[64];
	enum expo_type types[64];
	int64_t ts[64];
	char tag[128];
	size_t nlabels[64];
};

static void on_sample(const struct expo_sample *s, void *ud)
{
	struct got *g = ud;

	for (size_t i = 0; i < s->nlabels; i++)
		if (!strcmp(s->labels[i].name, "runtime_tag") && strchr(s->labels[i].value, '"'))
			snprintf(g->tag, sizeof(g->tag), "%s", s->labels[i].value);
	if (g->n < 64) {
		snprintf(g->names[g->n], sizeof(g->names[0]), "%s", s->name);
		snprintf(g->series[g->n], sizeof(g->series[0]), "%s", s->series);
		g->values[g->n] = s->value;
		g->types[g->n] = s->type;
		g->ts[g->n] = s->has_ts ? s->ts_ms : -1;
		g->nlabels[g->n] = s->nlabels;
	}
	g->n++;
}

static size_t parse(const char *t, struct got *g, char *err, size_t errsz)
{
	memset(g, 0, sizeof(*g));
	return expo_parse(t, strlen(t), on_sample, g, err, errsz);
}

static void test_golden(void)
{
	char path[] = "tests/fixtures/prom/accel-monitor.prom", err[256];
	static char text[1 << 20];
	size_t samples = 0, bad;
	struct got *g = calloc(1, sizeof(*g));
	ssize_t n = read_regular_file(path, text, sizeof(text) - 1);

	ok(n > 0, "read %s", path);
	if (n <= 0) {
		free(g);
		return;
	}
	for (char *l = text; l < text + n; l = strchr(l, '\n') + 1) {
		samples += *l != '#' && *l != '\n';
		if (!strchr(l, '\n'))
			break;
	}
	bad = expo_parse(text, (size_t)n, on_sample, g, err, sizeof(err));
	is_int((int)bad, 0, "accel-prom's golden text: no bad line");
	is_int((int)g->n, (int)samples, "every sample line is a sample");
	is_str(g->tag, "py \"x\\y\"\nz", "label escapes undone");
	is_str(g->names[0], "accel_prom_bad_lines_total", "the first sample's name");
	is_int(g->types[0], EXPO_COUNTER, "its type from # TYPE accel_prom_bad_lines_total counter");
	free(g);
}

static void test_cases(void)
{
	struct got g;
	char err[256];
	size_t bad;

	bad = parse("# TYPE x_total counter\n# HELP x_total Help text\nx_total{a=\"1\",b=\"two\"} 3 1700000000000\n"
		    "y NaN\nz{} +Inf\nw -Inf\n",
		    &g, err, sizeof(err));
	is_int((int)bad, 0, "no bad line");
	is_int((int)g.n, 4, "four samples");
	is_int(g.types[0], EXPO_COUNTER, "counter type");
	is_int((int)g.nlabels[0], 2, "two labels");
	is_str(g.series[0], "x_total{a=1,b=two", "the series key");
	is_double(g.values[0], 3, 0, "value");
	ok(g.ts[0] == 1700000000000LL, "0.0.4 timestamp in ms");
	ok(isnan(g.values[1]), "NaN");
	is_int(g.types[1], EXPO_UNTYPED, "a sample after another family's TYPE is untyped");
	ok(isinf(g.values[2]) && g.values[2] > 0, "+Inf, empty label set");
	ok(isinf(g.values[3]) && g.values[3] < 0, "-Inf");

	bad = parse("# TYPE a counter\r\na_total 1.5 1700000000.250 # {trace_id=\"x\"} 1\r\n# EOF\n", &g, err,
		    sizeof(err));
	is_int((int)bad, 0, "OpenMetrics: no bad line");
	is_int((int)g.n, 1, "OpenMetrics: one sample, # EOF is a comment");
	ok(g.ts[0] == 1700000000250LL, "OpenMetrics timestamp in seconds with a fraction");
	is_int(g.types[0], EXPO_COUNTER, "a_total belongs to family a");

	bad = parse("ok 1\n9bad 1\nx{a=1} 2\nx{a=\"1\" 2\nx abc\nx{a=\"\\t\"} 1\nfine{l=\"v\"} 2\n", &g, err,
		    sizeof(err));
	is_int((int)bad, 5, "five bad lines");
	is_int((int)g.n, 2, "the good ones around them are read");
	is_str(err, "line 2: a sample line starts with a metric name", "the first bad line is described");
	{
		struct buf b;

		buf_init(&b, 1 << 20);
		buf_printf(&b, "m{");
		for (int i = 0; i < EXPO_MAX_LABELS + 1; i++)
			buf_printf(&b, "l%d=\"v\",", i);
		buf_printf(&b, "} 1\nm 2\n");
		memset(&g, 0, sizeof(g));
		bad = expo_parse(b.data, b.len, on_sample, &g, err, sizeof(err));
		is_int((int)bad, 1, "more than EXPO_MAX_LABELS labels: a bad line");
		is_int((int)g.n, 1, "the next line is read");
		buf_reset(&b);
		for (size_t i = 0; i < EXPO_MAX_LINE + 10; i++)
			buf_add(&b, "x", 1);
		buf_printf(&b, " 1\nm 2\n");
		memset(&g, 0, sizeof(g));
		bad = expo_parse(b.data, b.len, on_sample, &g, err, sizeof(err));
		is_int((int)bad, 1, "a line over the cap: a bad line");
		is_int((int)g.n, 1, "the next line is read");
		buf_free(&b);
	}
	bad = parse("m 1", &g, err, sizeof(err));
	is_int((int)(bad + g.n * 10), 10, "a last line without a newline");
}

int main(void)
{
	test_golden();
	test_cases();
	return done_testing();
}
