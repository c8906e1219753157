/* SPDX-License-Identifier: MIT */
/*
 * A parser of the Prometheus text exposition format (0.0.4, and the
 * OpenMetrics 1.0 text accel-prom also serves: "# EOF", "_created" and
 * exemplars are taken as they come), for programs that read an exporter
 * rather than the report stream (accel-top --url reads accel-prom's
 * /metrics).
 *
 * It is a reader of what exporters write, not a validator: each sample line
 * is NAME[{LABEL="VALUE",...}] VALUE [TIMESTAMP]; label values are
 * unescaped (\\, \", \n); "# TYPE" lines give the family's type to the
 * samples after them; "# HELP" and other comments are skipped. A line that
 * does not parse is counted and skipped, and the first one is described in
 * err; a line longer than EXPO_MAX_LINE or with more than EXPO_MAX_LABELS
 * labels is such a line (the cap holds outside input).
 */
#ifndef ACCEL_EXPO_PARSE_H
#define ACCEL_EXPO_PARSE_H

#include <stddef.h>
#include <stdint.h>

#define EXPO_MAX_LABELS 32
#define EXPO_MAX_LINE (64u << 10)

enum expo_type { EXPO_UNTYPED, EXPO_COUNTER, EXPO_GAUGE, EXPO_HISTOGRAM, EXPO_SUMMARY, EXPO_OTHER };

struct expo_label {
	const char *name;
	const char *value; /* unescaped */
};

/* One sample; every string is borrowed, valid during the callback only. */
struct expo_sample {
	const char *name;
	struct expo_label labels[EXPO_MAX_LABELS];
	size_t nlabels;
	double value;       /* NaN, +Inf and -Inf as the format spells them */
	int has_ts;
	int64_t ts_ms;
	enum expo_type type; /* from the last "# TYPE" line naming this family (name, or name without _total etc.) */
	const char *series;  /* the line's name and labels as written: a key that tells series apart */
};

typedef void (*expo_cb)(const struct expo_sample *s, void *ud);

/*
 * Parse len bytes of text (no NUL needed), calling cb once per sample in
 * order. Returns how many lines were skipped as bad (0: none); err gets the
 * first one's "line N: reason" (left empty when none).
 */
size_t expo_parse(const char *text, size_t len, expo_cb cb, void *ud, char *err, size_t errsz);

#endif
