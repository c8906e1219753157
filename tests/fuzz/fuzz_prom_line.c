/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: stream lines -> samples -> exposition, the path every
 * byte of accel-prom's input takes.
 *
 * The input is written to a memory file and read back with the stream
 * reader (a small line cap, so over-long lines are exercised too); each
 * report goes through the common mapping into one store that lives across
 * inputs, on a fake clock that advances a second per input (so staleness
 * and forgotten counters are exercised), with --passthrough's module (an
 * entry's "exposition" republished). An input that does not start with
 * '{' is an endpoint's exposition instead, republished from one or two
 * runtime entries. After each input the exposition is rendered and checked
 * in both formats against the rules Prometheus holds a scrape to
 * (check_exposition: names, label sets, TYPE and HELP once, each family's
 * samples together under its TYPE; a scrape that breaks one fails whole),
 * then read back with the project's parser; the BIE body is JSON. A
 * violation aborts, which libFuzzer reports with the input.
 *
 * Build and run: tests/fuzz/run.sh (make fuzz), or tests/fuzz/build.sh DIR.
 */
#include "../../common/expo_parse.h"
#include "../../common/log.h"
#include "../../common/stream.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"
#include "../../common/series/prom_expo.h"
#include "../../common/series/prom_pass.h"
#include "../../common/series/prom_store.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct prom_store *store;
static int64_t now_ns = 1000 * NS_PER_S;

static void fail(const char *what, const char *line, size_t len)
{
	fprintf(stderr, "fuzz_prom_line: %s: %.*s\n", what, (int)(len > 300 ? 300 : len), line);
	abort();
}

/* ---- a strict checker of the rules Prometheus holds an exposition to ---------- */

static int metric_char(int c, int first)
{
	return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
}

static int label_char(int c, int first)
{
	return c != ':' && metric_char(c, first);
}

/* The end of the metric name at p (p itself when there is none). */
static const char *metric_name_end(const char *p, const char *e)
{
	const char *q = p;

	if (q < e && metric_char(*q, 1))
		for (q++; q < e && metric_char(*q, 0); q++)
			;
	return q;
}

struct check {
	int om;
	char fam[512];          /* the family of the TYPE line in force ("" none) */
	char type[16];          /* its type */
	int fam_samples;        /* samples of it so far */
	char last_fam[512];     /* the family of the previous sample */
	char **names;           /* TYPE names, and "G:" FAMILY for each group of samples, "H:" for HELP names */
	size_t nnames, anames;
	size_t nsamples;
};

static void note(struct check *c, const char *prefix, const char *s, size_t n)
{
	if (c->nnames == c->anames) {
		c->anames = c->anames ? 2 * c->anames : 64;
		c->names = realloc(c->names, c->anames * sizeof(*c->names));
		if (!c->names)
			abort();
	}
	if (asprintf(&c->names[c->nnames++], "%s%.*s", prefix, (int)n, s) < 0)
		abort();
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is the sample name[0..n) one of family fam's of type type, in this format? */
static int in_family(const struct check *c, const char *name, size_t n)
{
	static const char *const text_sfx[][4] = {
		{ "counter", "", NULL }, { "gauge", "", NULL }, { "untyped", "", NULL },
		{ "histogram", "_bucket", "_sum", "_count" }, { "summary", "", "_sum", "_count" },
	};
	static const char *const om_sfx[][5] = {
		{ "counter", "_total", "_created", NULL }, { "gauge", "", NULL }, { "unknown", "", NULL },
		{ "info", "_info", NULL }, { "histogram", "_bucket", "_sum", "_count", "_created" },
		{ "summary", "", "_sum", "_count", "_created" },
	};
	size_t fl = strlen(c->fam);

	if (n < fl || memcmp(name, c->fam, fl))
		return 0;
	if (c->om) {
		for (size_t t = 0; t < sizeof(om_sfx) / sizeof(om_sfx[0]); t++)
			if (!strcmp(om_sfx[t][0], c->type))
				for (size_t k = 1; k < 5 && om_sfx[t][k]; k++)
					if (n - fl == strlen(om_sfx[t][k]) && !memcmp(name + fl, om_sfx[t][k], n - fl))
						return 1;
	} else {
		for (size_t t = 0; t < sizeof(text_sfx) / sizeof(text_sfx[0]); t++)
			if (!strcmp(text_sfx[t][0], c->type))
				for (size_t k = 1; k < 4 && text_sfx[t][k]; k++)
					if (n - fl == strlen(text_sfx[t][k]) && !memcmp(name + fl, text_sfx[t][k], n - fl))
						return 1;
	}
	return 0;
}

/* "# TYPE NAME TYPE", "# HELP NAME TEXT", "# UNIT NAME UNIT" (OpenMetrics) */
static void check_comment(struct check *c, const char *p, size_t len)
{
	const char *e = p + len, *q = p + 7, *ne = metric_name_end(q, e);
	size_t n = (size_t)(ne - q);

	if (len < 7 || !n || ne >= e || *ne != ' ')
		fail("a comment without a metric name and a space after it", p, len);
	if (!memcmp(p, "# TYPE ", 7)) {
		static const char *const text_types[] = { "counter", "gauge", "histogram", "summary", "untyped", NULL };
		static const char *const om_types[] = { "counter", "gauge", "histogram", "gaugehistogram", "summary",
							"info", "stateset", "unknown", NULL };
		const char *const *types = c->om ? om_types : text_types;
		size_t tl = (size_t)(e - ne - 1), k;

		for (k = 0; types[k] && !(strlen(types[k]) == tl && !memcmp(types[k], ne + 1, tl)); k++)
			;
		if (!types[k])
			fail("an unknown type", p, len);
		if (*c->fam && !c->fam_samples)
			fail("a TYPE without samples", p, len);
		if (n >= sizeof(c->fam))
			fail("a family name too long for the checker", p, len);
		memcpy(c->fam, q, n);
		c->fam[n] = '\0';
		snprintf(c->type, sizeof(c->type), "%s", types[k]);
		c->fam_samples = 0;
		note(c, "T:", q, n);
	} else if (!memcmp(p, "# HELP ", 7)) {
		for (const char *h = ne + 1; h < e; h++) {
			if (*h != '\\')
				continue;
			if (h + 1 >= e || (h[1] != '\\' && h[1] != 'n' && !(c->om && h[1] == '"')))
				fail("a bad escape in a HELP text", p, len);
			h++;
		}
		note(c, "H:", q, n);
	} else if (!(c->om && !memcmp(p, "# UNIT ", 7))) {
		fail("a comment Prometheus does not know", p, len);
	}
}

/* One sample line: name{label="value",...} value */
static void check_sample(struct check *c, const char *p, size_t len)
{
	const char *e = p + len, *q = metric_name_end(p, e);
	const char *lname[64];
	size_t llen[64], nl = 0;
	char num[64];

	if (q == p)
		fail("bad metric name", p, len);
	if (*c->fam && in_family(c, p, (size_t)(q - p))) {
		c->fam_samples++;
	} else {
		if (*c->fam && !c->fam_samples)
			fail("a TYPE line whose family has no sample after it", p, len);
		c->fam[0] = '\0';
	}
	{
		const char *fam = *c->fam ? c->fam : p;
		size_t fl = *c->fam ? strlen(c->fam) : (size_t)(q - p);

		if (strlen(c->last_fam) != fl || memcmp(c->last_fam, fam, fl)) {
			if (fl >= sizeof(c->last_fam))
				fail("a family name too long for the checker", p, len);
			memcpy(c->last_fam, fam, fl);
			c->last_fam[fl] = '\0';
			note(c, "G:", fam, fl); /* a family's samples start here: twice is a family split in two */
		}
	}
	if (q < e && *q == '{') {
		q++;
		while (q < e && *q != '}') {
			const char *ln = q;

			if (!label_char(*q, 1))
				fail("bad label name", p, len);
			while (q < e && label_char(*q, 0))
				q++;
			if (q - ln >= 2 && ln[0] == '_' && ln[1] == '_')
				fail("a label name beginning with __", p, len);
			for (size_t k = 0; k < nl; k++)
				if (llen[k] == (size_t)(q - ln) && !memcmp(lname[k], ln, llen[k]))
					fail("a label name twice in one label set", p, len);
			if (nl == 64)
				fail("more labels than the checker holds", p, len);
			lname[nl] = ln;
			llen[nl++] = (size_t)(q - ln);
			if (e - q < 2 || q[0] != '=' || q[1] != '"')
				fail("label without =\"", p, len);
			q += 2;
			while (q < e && *q != '"') {
				if (*q == '\\') {
					if (q + 1 >= e || (q[1] != '\\' && q[1] != '"' && q[1] != 'n'))
						fail("bad escape", p, len);
					q++;
				}
				q++;
			}
			if (q >= e)
				fail("unterminated label value", p, len);
			q++;
			if (q < e && *q == ',') {
				q++;
				if (q < e && *q == '}')
					fail("a label set ending in a comma", p, len);
				continue;
			}
			if (q >= e || *q != '}')
				fail("bad label separator", p, len);
		}
		if (q >= e)
			fail("unterminated label set", p, len);
		q++;
	}
	if (q >= e || *q != ' ')
		fail("no space before the value", p, len);
	q++;
	if ((size_t)(e - q) >= sizeof(num) || q == e)
		fail("bad value length", p, len);
	memcpy(num, q, (size_t)(e - q));
	num[e - q] = '\0';
	if (strcmp(num, "NaN") && strcmp(num, "+Inf") && strcmp(num, "-Inf")) {
		char *end;
		double v = strtod(num, &end);

		if (*end || !isfinite(v) || strchr(num, ' '))
			fail("bad value", p, len);
	}
	c->nsamples++;
}

static void count_sample(const struct expo_sample *s, void *ud)
{
	(void)s;
	(*(size_t *)ud)++;
}

/*
 * Every line is a HELP, a TYPE, a UNIT (OpenMetrics) or a sample as
 * Prometheus takes it: metric and label names of their character sets, no
 * label name beginning with __ nor twice in a label set, escapes and
 * values of the format; a TYPE of the format's types, once per name, with
 * samples of its family (their names as the type has them) right after
 * it; each family's samples together; HELP once per name; OpenMetrics
 * ends with "# EOF". Then the round trip: the project's parser reads every
 * sample line back, none bad.
 */
static void check_exposition(const struct expo_body *b, int om)
{
	const char *p = b->data, *end = b->data + b->len;
	struct check c;
	size_t parsed = 0, nbad;
	char err[256];

	memset(&c, 0, sizeof(c));
	c.om = om;
	if (b->len && end[-1] != '\n')
		fail("no final newline", p, b->len);
	if (strlen(b->data) != b->len)
		fail("NUL inside the exposition", p, b->len);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)(nl - p);

		if (om && len == 5 && !strncmp(p, "# EOF", 5)) {
			if (nl + 1 != end)
				fail("# EOF before the end", p, len);
		} else if (len && *p == '#') {
			check_comment(&c, p, len);
		} else {
			check_sample(&c, p, len);
		}
		p = nl + 1;
	}
	if (*c.fam && !c.fam_samples)
		fail("a TYPE without samples at the end", c.fam, strlen(c.fam));
	if (om && (b->len < 6 || strcmp(end - 6, "# EOF\n")))
		fail("OpenMetrics without # EOF", b->data, b->len);
	qsort(c.names, c.nnames, sizeof(*c.names), str_cmp);
	for (size_t i = 1; i < c.nnames; i++)
		if (!strcmp(c.names[i - 1], c.names[i]))
			fail("twice: a TYPE (T:), a HELP (H:), or a family's samples in two groups (G:)", c.names[i],
			     strlen(c.names[i]));
	for (size_t i = 0; i < c.nnames; i++)
		free(c.names[i]);
	free(c.names);
	nbad = expo_parse(NULL, b->data, b->len, count_sample, &parsed, err, sizeof(err));
	if (nbad || parsed != c.nsamples)
		fail(nbad ? err : "the parser reads another number of samples", b->data, b->len);
}

/*
 * An input that is not a stream line (it does not start with '{') is an
 * endpoint's exposition: sanitized as accel-monitor makes it (NUL and
 * invalid UTF-8 become '?') and put in one runtime entry, or two (an even
 * length: two servers serving it), of a report (a new reference).
 */
static json_t *exposition_report(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	json_t *rep, *rts = json_array();

	if (!text || !rts)
		abort();
	for (size_t i = 0; i < size; i++)
		text[i] = data[i] ? (char)data[i] : '?';
	text[size] = '\0';
	utf8_sanitize(text);
	for (int i = 0; i < 1 + !(size & 1); i++)
		json_array_append_new(rts, json_pack("{s:i, s:s, s:i, s:s, s:s, s:s, s:{}}", "runtime_index", i, "address",
						     i ? "http://b/metrics" : "http://a/metrics", "pid", 7 + i,
						     "runtime_tag", i ? "srv" : "fz", "error", "", "exposition", text,
						     "report"));
	rep = json_pack("{s:o}", "runtime_data", rts);
	free(text);
	return rep;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stream s;
	struct prom_expo *e;
	const struct expo_body *gz;
	json_t *report, *bie;
	enum stream_bad why;
	char err[512];
	size_t len;
	int fd, rc;

	if (!store) {
		log_init("fuzz", LOG_LVL_SILENT);
		/* --passthrough on: a runtime entry's "exposition" goes through expo_parse and prom_pass too */
		store = prom_store_new(
			&(struct prom_store_opts){ .node_name = "fuzz-node", .version = "0", .pass = prom_pass_new() });
	}
	if (size && data[0] != '{') {
		report = exposition_report(data, size);
		prom_store_report(store, report, "fuzz:1", now_ns, now_ns);
		json_decref(report);
		goto render;
	}
	fd = memfd_create("fuzz", 0);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	stream_init(&s, fd, "fuzz", 4096);
	while ((rc = stream_next(&s, &report, &len, &why, err, sizeof(err))) != 0 && rc != -2) {
		if (rc == 1) {
			prom_store_report(store, report, "fuzz:1", now_ns, now_ns);
			json_decref(report);
		} else {
			prom_store_bad_line(store, why);
		}
	}
	stream_free(&s);
	close(fd);
render:
	now_ns += NS_PER_S;
	prom_store_sweep(store, now_ns);
	e = prom_store_render(store, now_ns, now_ns);
	check_exposition(&e->body[EXPO_TEXT], 0);
	check_exposition(&e->body[EXPO_OPENMETRICS], 1);
	bie = json_loadb(e->bie.data, e->bie.len, 0, NULL);
	if (!json_is_object(bie))
		fail("BIE body is not a JSON object", e->bie.data, e->bie.len);
	json_decref(bie);
	if ((now_ns / NS_PER_S) % 64 == 0 && prom_expo_gzip(e, EXPO_TEXT, &gz) != 0)
		fail("gzip failed", "", 0);
	prom_expo_unref(e);
	return 0;
}
