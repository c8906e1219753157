/* SPDX-License-Identifier: MIT */
/* The Prometheus text exposition parser; see expo_parse.h. */
#include "expo_parse.h"
#include "util.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct parser {
	char *line;     /* the current line, copied: unescaping writes into it */
	char *series;   /* its name and labels as written */
	char type_name[256];
	enum expo_type type;
	size_t bad, lineno;
	char *err;
	size_t errsz;
};

static int name_start(int c)
{
	return isalpha(c) || c == '_' || c == ':';
}

static int name_char(int c)
{
	return isalnum(c) || c == '_' || c == ':';
}

static void bad(struct parser *p, const char *why)
{
	if (!p->bad++ && p->errsz)
		snprintf(p->err, p->errsz, "line %zu: %s", p->lineno, why);
}

/* A number as the format writes it: a float, NaN, +Inf, -Inf. 0, or -1. */
static int parse_value(const char *s, double *v)
{
	char *end;

	if (!strcmp(s, "NaN")) {
		*v = NAN;
		return 0;
	}
	if (!strcmp(s, "+Inf") || !strcmp(s, "Inf")) {
		*v = INFINITY;
		return 0;
	}
	if (!strcmp(s, "-Inf")) {
		*v = -INFINITY;
		return 0;
	}
	*v = strtod(s, &end);
	return *s && !*end && !isspace((unsigned char)*s) ? 0 : -1;
}

/* "# TYPE name kind" */
static void type_line(struct parser *p, char *s)
{
	static const char *const kinds[] = { "untyped", "counter", "gauge", "histogram", "summary" };
	char name[256], kind[32];

	if (sscanf(s, "# TYPE %255s %31s", name, kind) != 2)
		return;
	snprintf(p->type_name, sizeof(p->type_name), "%s", name);
	p->type = EXPO_OTHER;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kind, kinds[i]))
			p->type = (enum expo_type)i;
}

/* Whether sample name belongs to the family of the last TYPE line (name itself, or name plus a known suffix). */
static int of_family(const struct parser *p, const char *name)
{
	static const char *const suffixes[] = { "_total", "_created", "_bucket", "_sum", "_count", "_info", NULL };
	size_t n = strlen(p->type_name);

	if (!n || strncmp(name, p->type_name, n))
		return 0;
	if (!name[n])
		return 1;
	for (size_t i = 0; suffixes[i]; i++)
		if (!strcmp(name + n, suffixes[i]))
			return 1;
	return 0;
}

static void sample_line(struct parser *p, char *s, expo_cb cb, void *ud)
{
	struct expo_sample x;
	char *q = s, *v, *ts;

	memset(&x, 0, sizeof(x));
	if (!name_start((unsigned char)*q)) {
		bad(p, "a sample line starts with a metric name");
		return;
	}
	while (name_char((unsigned char)*q))
		q++;
	if (*q == '{') {
		char *w;

		*q++ = '\0';
		for (;;) {
			while (*q == ' ' || *q == '\t')
				q++;
			if (*q == '}')
				break;
			if (x.nlabels == EXPO_MAX_LABELS) {
				bad(p, "more labels than a sample may have");
				return;
			}
			if (!name_start((unsigned char)*q)) {
				bad(p, "a label name is expected");
				return;
			}
			x.labels[x.nlabels].name = q;
			while (name_char((unsigned char)*q))
				q++;
			w = q;
			while (*q == ' ' || *q == '\t')
				q++;
			if (*q != '=') {
				bad(p, "'=' is expected after a label name");
				return;
			}
			*w = '\0';
			q++;
			while (*q == ' ' || *q == '\t')
				q++;
			if (*q != '"') {
				bad(p, "a label value is quoted");
				return;
			}
			x.labels[x.nlabels].value = w = ++q;
			for (;; q++) {
				if (!*q) {
					bad(p, "a label value is not closed");
					return;
				}
				if (*q == '"')
					break;
				if (*q == '\\') {
					q++;
					if (*q == 'n')
						*w++ = '\n';
					else if (*q == '\\' || *q == '"')
						*w++ = *q;
					else {
						bad(p, "an unknown escape in a label value");
						return;
					}
					continue;
				}
				*w++ = *q;
			}
			*w = '\0';
			q++;
			x.nlabels++;
			while (*q == ' ' || *q == '\t')
				q++;
			if (*q == ',') {
				q++;
				continue;
			}
			if (*q != '}') {
				bad(p, "',' or '}' is expected after a label");
				return;
			}
			break;
		}
		q++;
	} else if (*q == ' ' || *q == '\t') {
		*q++ = '\0';
	} else {
		bad(p, "a space is expected after the metric name");
		return;
	}
	while (*q == ' ' || *q == '\t')
		q++;
	v = q;
	while (*q && *q != ' ' && *q != '\t')
		q++;
	ts = NULL;
	if (*q) {
		*q++ = '\0';
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q && *q != '#') { /* "# {...}" is an OpenMetrics exemplar */
			ts = q;
			while (*q && *q != ' ' && *q != '\t')
				q++;
			*q = '\0';
		}
	}
	if (parse_value(v, &x.value)) {
		bad(p, "the value is not a number");
		return;
	}
	if (ts) {
		double t;

		if (parse_value(ts, &t) || !isfinite(t)) {
			bad(p, "the timestamp is not a number");
			return;
		}
		x.has_ts = 1;
		/* 0.0.4 writes integer milliseconds, OpenMetrics seconds with a fraction */
		x.ts_ms = strchr(ts, '.') || strchr(ts, 'e') ? (int64_t)(t * 1000) : (int64_t)t;
	}
	x.name = s;
	x.type = of_family(p, s) ? p->type : EXPO_UNTYPED;
	/* the series key: the name and each label, rebuilt (the line's own text was unescaped in place) */
	{
		size_t n = (size_t)snprintf(p->series, EXPO_MAX_LINE + 1, "%s", s);

		for (size_t i = 0; i < x.nlabels && n < EXPO_MAX_LINE; i++)
			n += (size_t)snprintf(p->series + n, EXPO_MAX_LINE + 1 - n, "%c%s=%s", i ? ',' : '{',
					      x.labels[i].name, x.labels[i].value);
	}
	x.series = p->series;
	cb(&x, ud);
}

size_t expo_parse(const char *text, size_t len, expo_cb cb, void *ud, char *err, size_t errsz)
{
	struct parser p;
	size_t i = 0;

	memset(&p, 0, sizeof(p));
	p.line = xmalloc(EXPO_MAX_LINE + 1);
	p.series = xmalloc(EXPO_MAX_LINE + 1);
	p.err = err;
	p.errsz = errsz;
	if (errsz)
		err[0] = '\0';
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t n = (nl ? (size_t)(nl - (text + i)) : len - i);

		p.lineno++;
		if (n && text[i + n - 1] == '\r')
			n--;
		if (n > EXPO_MAX_LINE) {
			bad(&p, "longer than the line cap");
		} else if (memchr(text + i, '\0', n)) {
			bad(&p, "a NUL byte");
		} else {
			memcpy(p.line, text + i, n);
			p.line[n] = '\0';
			if (p.line[0] == '#')
				type_line(&p, p.line);
			else if (n && strspn(p.line, " \t") != n)
				sample_line(&p, p.line + strspn(p.line, " \t"), cb, ud);
		}
		i += (nl ? (size_t)(nl - (text + i)) + 1 : len - i);
	}
	free(p.line);
	free(p.series);
	return p.bad;
}
