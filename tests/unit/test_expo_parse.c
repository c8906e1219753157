/* SPDX-License-Identifier: MIT */
/*
 * common/expo_parse.c: accel-prom's own golden exposition read back sample
 * by sample, label escapes, types from "# TYPE", special values,
 * timestamps in both formats, OpenMetrics' "# EOF" and exemplars, CRLF, and
 * bad lines counted and skipped with the first one described; what real
 * servers write (a label set ending in a comma, _created samples, a value
 * that needs every digit, a missing final newline); each sample's family
 * and suffix; the fast number path against strtod; lines read against the
 * previous line as each line alone; one parser kept from call to call, a
 * callback's call with the parser in use, and a call without a parser.
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
	char families[64][128];
	enum expo_suffix sfx[64];
	char labels[64][256];
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
		snprintf(g->families[g->n], sizeof(g->families[0]), "%s", s->family);
		g->sfx[g->n] = s->suffix;
		g->labels[g->n][0] = '\0';
		for (size_t i = 0; i < s->nlabels; i++) {
			size_t l = strlen(g->labels[g->n]);

			snprintf(g->labels[g->n] + l, sizeof(g->labels[0]) - l, "%s%s=%s", i ? "|" : "", s->labels[i].name,
				 s->labels[i].value);
		}
		g->values[g->n] = s->value;
		g->types[g->n] = s->type;
		g->ts[g->n] = s->has_ts ? s->ts_ms : -1;
		g->nlabels[g->n] = s->nlabels;
	}
	g->n++;
}

static size_t parse(struct expo_parser *p, const char *t, struct got *g, char *err, size_t errsz)
{
	memset(g, 0, sizeof(*g));
	return expo_parse(p, t, strlen(t), on_sample, g, err, errsz);
}

static void test_golden(struct expo_parser *p)
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
	bad = expo_parse(p, text, (size_t)n, on_sample, g, err, sizeof(err));
	is_int((int)bad, 0, "accel-prom's golden text: no bad line");
	is_int((int)g->n, (int)samples, "every sample line is a sample");
	is_str(g->tag, "py \"x\\y\"\nz", "label escapes undone");
	is_str(g->names[0], "accel_prom_bad_lines_total", "the first sample's name");
	is_int(g->types[0], EXPO_COUNTER, "its type from # TYPE accel_prom_bad_lines_total counter");
	free(g);
}

static void test_cases(struct expo_parser *p)
{
	struct got g;
	char err[256];
	size_t bad;

	bad = parse(p, "# TYPE x_total counter\n# HELP x_total Help text\nx_total{a=\"1\",b=\"two\"} 3 1700000000000\n"
		    "y NaN\nz{} +Inf\nw -Inf\n",
		    &g, err, sizeof(err));
	is_int((int)bad, 0, "no bad line");
	is_int((int)g.n, 4, "four samples");
	is_int(g.types[0], EXPO_COUNTER, "counter type");
	is_int((int)g.nlabels[0], 2, "two labels");
	is_str(g.series[0], "x_total{a=\"1\",b=\"two\"}", "the series key: the name and label set as written");
	is_double(g.values[0], 3, 0, "value");
	ok(g.ts[0] == 1700000000000LL, "0.0.4 timestamp in ms");
	ok(isnan(g.values[1]), "NaN");
	is_int(g.types[1], EXPO_UNTYPED, "a sample after another family's TYPE is untyped");
	ok(isinf(g.values[2]) && g.values[2] > 0, "+Inf, empty label set");
	ok(isinf(g.values[3]) && g.values[3] < 0, "-Inf");

	bad = parse(p, "# TYPE a counter\r\na_total 1.5 1700000000.250 # {trace_id=\"x\"} 1\r\n# EOF\n", &g, err,
		    sizeof(err));
	is_int((int)bad, 0, "OpenMetrics: no bad line");
	is_int((int)g.n, 1, "OpenMetrics: one sample, # EOF is a comment");
	ok(g.ts[0] == 1700000000250LL, "OpenMetrics timestamp in seconds with a fraction");
	is_int(g.types[0], EXPO_COUNTER, "a_total belongs to family a");

	bad = parse(p, "ok 1\n9bad 1\nx{a=1} 2\nx{a=\"1\" 2\nx abc\nx{a=\"\\t\"} 1\nfine{l=\"v\"} 2\n", &g, err,
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
		bad = expo_parse(p, b.data, b.len, on_sample, &g, err, sizeof(err));
		is_int((int)bad, 1, "more than EXPO_MAX_LABELS labels: a bad line");
		is_int((int)g.n, 1, "the next line is read");
		buf_reset(&b);
		for (size_t i = 0; i < EXPO_MAX_LINE + 10; i++)
			buf_add(&b, "x", 1);
		buf_printf(&b, " 1\nm 2\n");
		memset(&g, 0, sizeof(g));
		bad = expo_parse(p, b.data, b.len, on_sample, &g, err, sizeof(err));
		is_int((int)bad, 1, "a line over the cap: a bad line");
		is_int((int)g.n, 1, "the next line is read");
		buf_free(&b);
	}
	bad = parse(p, "m 1", &g, err, sizeof(err));
	is_int((int)(bad + g.n * 10), 10, "a last line without a newline");
}

/* What inference servers write (their documented expositions, as in tests/fixtures/infer/). */
static void test_servers(struct expo_parser *p)
{
	struct got g;
	char err[256];
	size_t bad;

	/* TorchServe: label sets end in a comma */
	bad = parse(p, "# TYPE Requests2XX counter\nRequests2XX{Level=\"Host\",Hostname=\"h\",} 500.0\n"
		    "ts_inference_latency_microseconds{model_name=\"m\",model_version=\"default\",} 2511000.058\n",
		    &g, err, sizeof(err));
	is_int((int)bad, 0, "a label set ending in a comma");
	is_int((int)g.n, 2, "both samples");
	is_str(g.labels[0], "Level=Host|Hostname=h", "its labels");
	is_double(g.values[1], 2511000.058, 0, "a value with a fraction");
	is_int(g.types[0], EXPO_COUNTER, "Requests2XX counter");
	is_int((int)parse(p, "m{,} 1\n", &g, err, sizeof(err)), 1, "a comma alone is no label set");

	/* histograms and summaries: # TYPE types the _bucket/_sum/_count samples, and says which they are */
	bad = parse(p, "# HELP h Latency.\n# TYPE h histogram\nh_bucket{le=\"0.1\"} 1\nh_bucket{le=\"+Inf\"} 2\n"
		    "h_sum 0.3\nh_count 2\nh_created 1.7e9\nh 5\nh_total 3\n"
		    "# TYPE s summary\ns{quantile=\"0.5\"} 0.1\ns_sum 1\ns_count 3\n"
		    "# TYPE c counter\nc_total 4\nc_created 1.7e9\nc_bucket 1\n# TYPE g gauge\ng 1\ng_sum 2\n",
		    &g, err, sizeof(err));
	is_int((int)bad, 0, "no bad line");
	is_int((int)g.n, 15, "15 samples");
	for (int i = 0; i < 5; i++)
		ok(g.types[i] == EXPO_HISTOGRAM && !strcmp(g.families[i], "h"), "sample %d: histogram h", i);
	is_int(g.sfx[0], EXPO_SFX_BUCKET, "_bucket");
	is_int(g.sfx[2], EXPO_SFX_SUM, "_sum");
	is_int(g.sfx[3], EXPO_SFX_COUNT, "_count");
	is_int(g.sfx[4], EXPO_SFX_CREATED, "_created");
	ok(g.types[5] == EXPO_UNTYPED && !strcmp(g.families[5], "h"), "a histogram has no sample of its bare name");
	ok(g.types[6] == EXPO_UNTYPED && !strcmp(g.families[6], "h_total"), "nor a _total: its own family");
	ok(g.types[7] == EXPO_SUMMARY && g.sfx[7] == EXPO_SFX_NONE && !strcmp(g.families[7], "s"), "summary quantile");
	ok(g.types[8] == EXPO_SUMMARY && g.sfx[8] == EXPO_SFX_SUM, "summary _sum");
	ok(g.types[10] == EXPO_COUNTER && g.sfx[10] == EXPO_SFX_TOTAL && !strcmp(g.families[10], "c"), "counter _total");
	ok(g.types[11] == EXPO_COUNTER && g.sfx[11] == EXPO_SFX_CREATED, "counter _created");
	is_int(g.types[12], EXPO_UNTYPED, "a counter has no _bucket");
	is_int(g.types[13], EXPO_GAUGE, "gauge");
	is_int(g.types[14], EXPO_UNTYPED, "a gauge has no _sum");

	{
		static const char nul[] = "m{a=\"x\0y\"} 1\nm 1\0\nm{a\0=\"1\"} 1\nm\0 1\nm 2\n";

		memset(&g, 0, sizeof(g));
		bad = expo_parse(p, nul, sizeof(nul) - 1, on_sample, &g, err, sizeof(err));
		is_int((int)bad, 4, "a NUL byte in a value, a number, a label name, a name: bad lines");
		is_str(err, "line 1: a NUL byte", "said as such");
		is_int((int)g.n, 1, "the line after them is read");
	}
	{
		struct buf b;

		buf_init(&b, 1 << 20);
		for (int i = 0; i < 300; i++)
			buf_add(&b, "n", 1);
		buf_printf(&b, "{a=\"1\"} 1\n");
		for (int i = 0; i < 300; i++)
			buf_add(&b, "n", 1);
		buf_printf(&b, " 2\n");
		memset(&g, 0, sizeof(g));
		bad = expo_parse(p, b.data, b.len, on_sample, &g, err, sizeof(err));
		ok(bad == 0 && g.n == 2 && strlen(g.names[0]) == 127 && g.values[1] == 2 && !strcmp(g.labels[0], "a=1"),
		   "metric names of 300 bytes, with and without labels");
		buf_free(&b);
	}
	{
		double v;

		ok(!expo_parse_number("0.25", 4, &v) && v == 0.25, "expo_parse_number, no NUL needed");
		ok(expo_parse_number("0.25x", 5, &v) && expo_parse_number("", 0, &v), "and not a number");
	}
	/* found by fuzz_expo: a sample named as a TYPE line's family that is no metric name is no sample */
	bad = parse(p, "# TYPE a\237b counter\na\237b 1\na\237b_total 2\n# TYPE c\237 gauge\nc\237 3\nab 4\n", &g, err,
		    sizeof(err));
	ok(bad == 3 && g.n == 1 && !strcmp(g.names[0], "ab"), "a TYPE line's name that is no metric name names no sample");
	is_str(err, "line 2: a space is expected after the metric name", "said as for any such line");
	parse(p, "m{a=\"x,b=y\"} 1\nm{a=\"x\",b=\"y\"} 2\n", &g, err, sizeof(err));
	ok(g.n == 2 && strcmp(g.series[0], g.series[1]), "a value holding ',' and '=' is another series");

	/* OpenMetrics: # EOF ends it; exemplars; seconds; a missing final newline */
	bad = parse(p, "# TYPE a counter\n# UNIT a seconds\na_total{x=\"1\"} 1 1700000000.5 # {trace_id=\"t\"} 0.5 "
		    "1700000000.4\n# EOF\nafter 1\n",
		    &g, err, sizeof(err));
	is_int((int)(bad * 100 + g.n), 1, "nothing after # EOF is read");
	ok(g.ts[0] == 1700000000500LL, "seconds with a fraction");
	bad = parse(p, "  # indented comment\n\t\nm{a=\"q\\\"x\\\\y\\nz\"}\t2e3\t-5", &g, err, sizeof(err));
	is_int((int)bad, 0, "an indented comment, a blank line, tabs, a last line without a newline");
	is_str(g.labels[0], "a=q\"x\\y\nz", "escapes undone");
	is_double(g.values[0], 2000, 0, "2e3");
	ok(g.ts[0] == -5, "a negative timestamp");
	bad = parse(p, "m 1 1e300\nm 1 -1e300\nm 1 NaN\nm 1 9300000000000000000\nm 1 1700000000000\n", &g, err,
		    sizeof(err));
	is_int((int)bad, 4, "timestamps out of int64 milliseconds are bad lines, not overflows");
	is_int((int)g.n, 1, "the good one is read");
	bad = parse(p, "m nan\nm Inf\nm -inf\nm +Inf\nm 0x10\nm 1_0\nm 1.5.6\nm --1\nm .\nm 1e\n", &g, err, sizeof(err));
	ok(isnan(g.values[0]) && isinf(g.values[1]) && g.values[2] < 0 && isinf(g.values[3]), "NaN and Inf spellings");
	is_double(g.values[4], 16, 0, "a hexadecimal float (Go's ParseFloat takes it too)");
	is_int((int)bad, 5, "1_0, 1.5.6, --1, . and 1e are not numbers");
}

/*
 * Lines read against the previous one (a histogram's bounds, one model
 * after another) give what each line gives alone, whatever the label that
 * changed holds (the next bound, one seen before, an escape, nothing, a
 * long value) and whatever the value (N.0, plain decimals, others).
 */
#define FAST_LINES 3000

struct rec {
	size_t n;
	char (*s)[400];
};

static void on_rec(const struct expo_sample *x, void *ud)
{
	struct rec *r = ud;
	char *w;
	size_t left;
	int k;

	if (r->n >= FAST_LINES)
		return;
	w = r->s[r->n++];
	left = sizeof(r->s[0]);
	k = snprintf(w, left, "%s|%zu|%a|%d|%s|%d|%zu|%zu", x->series, x->series_len, x->value, x->type, x->family,
		     x->suffix, x->name_len, x->nlabels);
	for (size_t i = 0; i < x->nlabels && k > 0 && (size_t)k < left; i++) {
		w += k;
		left -= (size_t)k;
		k = snprintf(w, left, "|%s=%s/%zu", x->labels[i].name, x->labels[i].value, x->labels[i].value_len);
	}
}

static void test_fast_lines(struct expo_parser *p)
{
	static const char *const le[] = { "0.1", "0.25", "1.0", "+Inf", "q\\\"z", "" };
	char long_le[121], val[48], err[64];
	struct rec alone = { 0, xcalloc(FAST_LINES, sizeof(*alone.s)) }, all = { 0, xcalloc(FAST_LINES, sizeof(*all.s)) };
	struct buf b;
	unsigned seed = 777;
	size_t bad = 0, start = 0, differ = FAST_LINES;

	memset(long_le, 'L', sizeof(long_le) - 1);
	long_le[sizeof(long_le) - 1] = '\0';
	buf_init(&b, 1 << 20);
	buf_printf(&b, "# TYPE h histogram\n");
	for (int i = 0; i < FAST_LINES; i++) {
		int k = i % 4;

		seed = seed * 1103515245u + 12345u;
		if ((seed >> 24) % 16 == 0)
			k = 4 + (int)((seed >> 20) % 2); /* an escaped value, an empty one */
		switch ((seed >> 2) % 4) {
		case 0:
			snprintf(val, sizeof(val), "%u.0", seed >> 12);
			break;
		case 1:
			snprintf(val, sizeof(val), "%u.%0*u", (seed >> 20) % 100000, (int)((seed >> 8) % 9), (seed >> 4) % 1000);
			break;
		case 2:
			snprintf(val, sizeof(val), "%u", seed % 100000000);
			break;
		default:
			snprintf(val, sizeof(val), "%s", (seed >> 8) % 2 ? "-1.5" : "2.5e-3");
		}
		start = b.len;
		buf_printf(&b, "h_bucket{a=\"x\",le=\"%s\",m=\"y\"} %s\n", (seed >> 16) % 23 == 0 ? long_le : le[k], val);
		{ /* the line alone, after the same TYPE line */
			char one[512];

			snprintf(one, sizeof(one), "# TYPE h histogram\n%s", b.data + start);
			bad += expo_parse(p, one, strlen(one), on_rec, &alone, err, sizeof(err));
		}
	}
	bad += expo_parse(p, b.data, b.len, on_rec, &all, err, sizeof(err));
	for (size_t i = 0; i < FAST_LINES && differ == FAST_LINES; i++)
		if (strcmp(alone.s[i], all.s[i]))
			differ = i;
	ok(!bad && alone.n == FAST_LINES && all.n == FAST_LINES && differ == FAST_LINES,
	   "%d lines read one after another give what each gives alone", FAST_LINES);
	if (differ < FAST_LINES)
		fprintf(stderr, "#   sample %zu: alone %s\n#   after the others %s\n", differ, alone.s[differ], all.s[differ]);
	free(alone.s);
	free(all.s);
	buf_free(&b);
}

/* A callback may parse another text, with the parser in use (it then gets one of its own). */
struct nested {
	struct expo_parser *p;
	size_t outer, inner, bad;
};

static void on_inner(const struct expo_sample *s, void *ud)
{
	struct nested *n = ud;

	n->inner++;
	if (strcmp(s->labels[0].value, "in") || s->value != 7)
		n->bad++;
}

static void on_outer(const struct expo_sample *s, void *ud)
{
	static const char inner[] = "i{a=\"in\"} 7\ni{a=\"in\",b=\"2\"} 7\n";
	struct nested *n = ud;
	char err[64];

	n->outer++;
	if (strcmp(s->labels[0].value, n->outer % 2 ? "x" : "y") || s->value != (double)n->outer)
		n->bad++;
	n->bad += expo_parse(n->p, inner, sizeof(inner) - 1, on_inner, n, err, sizeof(err));
	if (strcmp(s->labels[0].value, n->outer % 2 ? "x" : "y"))
		n->bad++; /* what the outer callback was lent still holds */
}

static void test_nested(struct expo_parser *p)
{
	static const char outer[] = "o{a=\"x\"} 1\no{a=\"y\"} 2\no{a=\"x\"} 3\no{a=\"y\"} 4\n";
	struct nested n = { p, 0, 0, 0 };
	char err[64];
	size_t bad = expo_parse(p, outer, sizeof(outer) - 1, on_outer, &n, err, sizeof(err));

	ok(!bad && n.outer == 4 && n.inner == 8 && !n.bad, "a callback parsing another text");
}

/* The fast path gives the very double strtod gives. */
static void test_numbers(struct expo_parser *p)
{
	static const char *const nums[] = { "0.1",     "0.005",   "123456789012345", "1234567890123456", "-0",
					    "3.0",     "0.000000000000000000001", "0.0000000000000000000001",
					    "99.9",    "2511000.058", "1.7976931348623157e308", "4.9e-324", "-12.5",
					    "+7",      "00000000000000000000012" };
	char line[128], err[64];
	struct got g;
	unsigned seed = 12345;
	int same = 1;

	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		double want = strtod(nums[i], NULL);

		snprintf(line, sizeof(line), "m %s\n", nums[i]);
		parse(p, line, &g, err, sizeof(err));
		if (!ok(g.n == 1 && memcmp(&g.values[0], &want, sizeof(want)) == 0, "%s as strtod reads it", nums[i]))
			fprintf(stderr, "#   got %.17g, strtod %.17g\n", g.values[0], want);
	}
	for (int i = 0; i < 20000 && same; i++) {
		double want;
		int ip, fp, fd;

		seed = seed * 1103515245u + 12345u;
		ip = (int)(seed >> 8) % 1000000;
		seed = seed * 1103515245u + 12345u;
		fd = (int)(seed >> 4) % 10;
		fp = (int)(seed >> 8) % 1000000000;
		snprintf(line, sizeof(line), "m %d.%0*d\n", ip, fd, fd ? fp % (int)pow(10, fd) : 0);
		want = strtod(line + 2, NULL);
		parse(p, line, &g, err, sizeof(err));
		same = g.n == 1 && memcmp(&g.values[0], &want, sizeof(want)) == 0;
		if (!same)
			fprintf(stderr, "#   %s: got %.17g, strtod %.17g\n", line, g.values[0], want);
	}
	ok(same, "20000 random decimals read as strtod reads them");
}

/* A call without a parser reads as one with a parser does. */
static void test_no_parser(void)
{
	static const char text[] = "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 3\nbad{ 1\n";
	struct got g;
	char err[64];
	struct expo_parser *p = NULL;
	size_t bad = parse(p, text, &g, err, sizeof(err));

	ok(bad == 1 && g.n == 2 && g.sfx[1] == EXPO_SFX_BUCKET && g.values[1] == 3, "no parser: one for the call");
	expo_parser_free(NULL);
}

int main(void)
{
	struct expo_parser *p = expo_parser_new();

	test_golden(p);
	test_cases(p);
	test_servers(p);
	test_numbers(p);
	test_fast_lines(p);
	test_nested(p);
	test_no_parser();
	expo_parser_free(p);
	return done_testing();
}
