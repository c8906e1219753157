/* SPDX-License-Identifier: MIT */
/*
 * A parser of the Prometheus text exposition format (0.0.4) and of the
 * OpenMetrics 1.0 text, for programs that read an exporter rather than the
 * report stream: accel-top --url reads accel-prom's /metrics, the endpoint
 * runtimes (monitor/endpoint/infer.c) read inference servers'.
 *
 * It is a reader of what exporters write, not a validator: each sample line
 * is NAME[{LABEL="VALUE",...}] VALUE [TIMESTAMP] [# EXEMPLAR]; a label set
 * may end in a comma (TorchServe writes `{Level="Host",}`) and may be empty;
 * label values are unescaped (\\, \", \n); values and timestamps may be
 * NaN, +Inf, -Inf or any float; a timestamp is 0.0.4's integer milliseconds
 * or OpenMetrics' seconds with a fraction. "# TYPE" gives its family's type
 * to the samples after it that belong to the family (NAME itself, and the
 * suffixes the type has: _total and _created for counters; _bucket, _sum,
 * _count and _created for histograms; _sum, _count and _created for
 * summaries; _gsum and _gcount for gauge histograms; _info for info); "#
 * HELP", "# UNIT" and other comments are skipped; "# EOF" ends the
 * exposition (OpenMetrics: nothing after it is read); a missing final
 * newline and CRLF line ends are fine. A line that does not parse is
 * counted and skipped, and the first one is described in err; a line
 * longer than EXPO_MAX_LINE or with more than EXPO_MAX_LABELS labels is
 * such a line (the caps hold outside input).
 */
#ifndef ACCEL_EXPO_PARSE_H
#define ACCEL_EXPO_PARSE_H

#include <stddef.h>
#include <stdint.h>

#define EXPO_MAX_LABELS 32
#define EXPO_MAX_LINE (64u << 10)

enum expo_type { EXPO_UNTYPED, EXPO_COUNTER, EXPO_GAUGE, EXPO_HISTOGRAM, EXPO_SUMMARY, EXPO_OTHER };

/* Which sample of its family a sample is: the part of its name after the family's. */
enum expo_suffix {
	EXPO_SFX_NONE,    /* the family's own name (a gauge, a summary's quantile, an untyped sample) */
	EXPO_SFX_TOTAL,   /* _total (an OpenMetrics counter) */
	EXPO_SFX_CREATED, /* _created */
	EXPO_SFX_BUCKET,  /* _bucket */
	EXPO_SFX_SUM,     /* _sum, _gsum */
	EXPO_SFX_COUNT,   /* _count, _gcount */
	EXPO_SFX_INFO,    /* _info */
};

struct expo_label {
	const char *name;
	const char *value; /* unescaped */
	size_t name_len, value_len; /* strlen of each (a value may hold no NUL: the line would be bad) */
};

/* One sample; every string is borrowed, valid during the callback only. */
struct expo_sample {
	const char *name;
	size_t name_len; /* its strlen */
	struct expo_label labels[EXPO_MAX_LABELS]; /* the first nlabels, in the line's order */
	size_t nlabels;
	double value;       /* NaN, +Inf and -Inf as the format spells them */
	int has_ts;
	int64_t ts_ms;
	enum expo_type type;     /* from the "# TYPE" line of the family it belongs to; EXPO_UNTYPED when none */
	const char *family;      /* that family's name as its TYPE line gives it; else name itself */
	enum expo_suffix suffix; /* name = family + suffix */
	const char *series;      /* the line's name and label set as written (escapes kept): a key that tells
				    series apart, the same for the same series from one exporter */
	size_t series_len; /* its strlen */
	size_t line;       /* its line in the text, from 1 (for messages) */
};

typedef void (*expo_cb)(const struct expo_sample *s, void *ud);

/*
 * A parser's buffers and caches (about 30 kB), kept from one expo_parse()
 * to the next so that a call allocates nothing. The caller owns it: a new
 * object from expo_parser_new(), released by expo_parser_free() (NULL-safe).
 * One thread uses it at a time.
 */
struct expo_parser;
struct expo_parser *expo_parser_new(void);
void expo_parser_free(struct expo_parser *p);

/*
 * Parse len bytes of text (no NUL needed) with parser p, calling cb once
 * per sample in order. p NULL, or in use by the call whose callback this
 * is: a parser for this call alone (allocated and freed here). Returns how
 * many lines were skipped as bad (0: none); err gets the first one's "line
 * N: reason" (left empty when none).
 */
size_t expo_parse(struct expo_parser *p, const char *text, size_t len, expo_cb cb, void *ud, char *err,
		  size_t errsz);

/*
 * A number as the format writes it, n bytes at s (no NUL needed): a float in
 * any spelling strtod takes, NaN, +Inf, -Inf. 0 with *v set, or -1. For
 * label values that hold numbers (a bucket's le, a quantile), read the way
 * sample values are.
 */
int expo_parse_number(const char *s, size_t n, double *v);

#endif
