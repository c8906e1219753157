/* SPDX-License-Identifier: MIT */
/*
 * The text side of accel-csv, with no I/O: RFC 4180 fields and records,
 * numbers written with the fewest digits that read back as the same double,
 * timestamps, series names ("family{label=value,...}"), size arguments, and
 * a small string -> index table for column names. sinks/csv/csv.c renders rows
 * with these; sinks/csv/csv_out.c parses existing headers with them.
 */
#ifndef ACCEL_CSV_FORMAT_H
#define ACCEL_CSV_FORMAT_H

#include "../../common/samples.h"
#include "../../common/util.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Formula injection (OWASP's "CSV injection"): a spreadsheet runs a cell
 * that starts with =, +, -, @, TAB or CR as a formula, and a process may
 * name itself "=HYPERLINK(...)". With formula_escape set (accel-csv's
 * default; --no-formula-escape clears it), a text field that starts with
 * one of those bytes gets a leading ' (which spreadsheets show as text and
 * do not store), unless the whole field is a plain decimal number ("-5",
 * "+1.5e3"): numbers stay numbers. Numeric columns (value, period,
 * timestamps) are written as numbers and never escaped.
 */
extern const unsigned char csv_formula_start[256]; /* 1 for = + - @ TAB CR */

/* Is s[0..n) a plain decimal number: [+-]digits[.digits][e[+-]digits] (or [+-].digits...)? */
int csv_is_number(const char *s, size_t n);

/*
 * Append s[0..n) to b as one RFC 4180 text field: formula-escaped as
 * above when formula_escape is set, then between double quotes (each
 * quote doubled) when it holds a comma, a quote, CR or LF, as it is
 * otherwise. 0 or -ENOSPC (b's cap).
 */
int csv_field(struct buf *b, const char *s, size_t n, int formula_escape);

/* The same for a header cell (a column name: the project's own text, never formula-escaped). */
int csv_name(struct buf *b, const char *s, size_t n);

/*
 * The fast path for rows: reserve room once, then write fields at a
 * pointer: buf_reserve() (common/util.h) makes room for n more bytes past
 * b->len. csv_put_field() writes s[0..n) as one text field at d (as
 * csv_field() does) and returns the end; d needs room for CSV_FIELD_MAX(n)
 * bytes: every byte doubled, two quotes and the formula escape's '.
 */
#define CSV_FIELD_EXTRA 3
#define CSV_FIELD_MAX(n) (2 * (n) + CSV_FIELD_EXTRA)
extern const unsigned char csv_special[256]; /* 1 for the bytes that make a field need quotes: , " CR LF */
char *csv_put_quoted(char *d, const char *s, size_t n);
char *csv_put_formula(char *d, const char *s, size_t n);
static inline char *csv_put_field(char *d, const char *s, size_t n, int formula_escape)
{
	size_t i = 0;

	if (n && csv_formula_start[(unsigned char)s[0]] && formula_escape)
		return csv_put_formula(d, s, n);
	while (i < n && !csv_special[(unsigned char)s[i]])
		i++;
	if (i < n)
		return csv_put_quoted(d, s, n);
	memcpy(d, s, n);
	return d + n;
}

/*
 * The shortest decimal text that strtod() reads back as exactly v: integral
 * values below 2^53 as plain integers, others with %.15g, %.16g or %.17g,
 * whichever is first to round-trip. "inf", "-inf" and "nan" for the
 * non-finite values (the mapping never yields them). Returns the length.
 */
#define CSV_DOUBLE_LEN 32
size_t csv_double(double v, char dst[CSV_DOUBLE_LEN]);

/* The timestamp column: its name and how a unix-milliseconds time is written in it. */
enum csv_ts_format {
	CSV_TS_ISO8601, /* "timestamp": 2026-11-21T05:30:00.123Z (UTC) */
	CSV_TS_UNIX,    /* "timestamp_unix": 1795239000.123 (seconds, always 3 decimals) */
	CSV_TS_UNIX_MS, /* "timestamp_unix_ms": 1795239000123 */
	CSV_TS_COUNT
};
extern const char *const csv_ts_names[CSV_TS_COUNT];   /* option values: "iso8601", "unix", "unix_ms" */
extern const char *const csv_ts_columns[CSV_TS_COUNT]; /* column names, as above */
#define CSV_TS_LEN 32
size_t csv_timestamp(int64_t ms, enum csv_ts_format f, char dst[CSV_TS_LEN]);

/* "YYYY-MM-DD" (UTC) of a unix-milliseconds time, for daily file names. */
void csv_date(int64_t ms, char dst[11]);

/*
 * Append a sample's series name: the family name, then its labels from
 * index first on, skipping those named in skip (NULL-terminated, or NULL),
 * as "{name=value,...}" (no braces when none are left). A value holding
 * any of ,{}="\ or a control character, or an empty one, is written
 * between double quotes with \" \\ \n escapes, so two label sets never
 * give the same name. 0 or -ENOSPC.
 */
int csv_series(struct buf *b, const struct sample *s, size_t first, const char *const *skip);

/*
 * The same, written at d (room: csv_series_max(s) bytes); returns the end.
 * *csv_quote is set when the name holds a comma or a quote (it then needs
 * quoting as a CSV field).
 */
size_t csv_series_max(const struct sample *s);
/* nlen, vlen: the labels' name and value lengths when the caller has them (or NULL). */
char *csv_put_series(char *d, const struct sample *s, size_t first, const char *const *skip, const size_t *nlen,
		     const size_t *vlen, int *csv_quote);

/* The same labels without the family name and braces ("a=1,b=2"); *count: how many. */
int csv_labels(struct buf *b, const struct sample *s, size_t first, const char *const *skip, size_t *count);

/*
 * The column choices, from the report schema (common/schema.h): the long
 * format's label columns are the schema's labels with LABEL_CSV_COLUMN, in
 * its order (non-instance labels, then the instance ones); a label without
 * a column goes to other_labels. csv_label_columns() fills names[0..max)
 * and returns how many there are.
 */
size_t csv_label_columns(const char **names, size_t max);
/* 1 when label name is part of a wide row's key: pid and the device identity (runtime_tag is the entity). */
int csv_row_key_label(const char *name);

/* A growable vector of owned strings. */
struct csv_strv {
	char **v;
	size_t n, alloc;
};
void csv_strv_push(struct csv_strv *sv, const char *s, size_t n); /* copies s[0..n) */
void csv_strv_clear(struct csv_strv *sv);
void csv_strv_free(struct csv_strv *sv);

/*
 * Parse the first RFC 4180 record of p[0..n) into out (its fields are
 * appended). A record ends at an unquoted LF (a CR before it is dropped),
 * or at the end of the input when eof is set.
 * Returns 1 with *used = bytes consumed, or 0 when the record is not
 * complete in p[0..n) and eof is not set.
 */
int csv_parse_record(const char *p, size_t n, int eof, struct csv_strv *out, size_t *used);

/*
 * Where whole records end, for a stream of CSV read in pieces (a file's
 * tail before appending to it). Fields and records as csv_parse_record()
 * reads them: a quote opens a quoted field only at the start of a field,
 * and a record ends at an LF outside quotes. Start zeroed, at a record's
 * start.
 */
enum csv_scan_state {
	CSV_SCAN_FIELD,  /* at the start of a field */
	CSV_SCAN_BARE,   /* in an unquoted field, or after a quoted field's closing quote */
	CSV_SCAN_QUOTED, /* inside a quoted field */
	CSV_SCAN_QUOTE,  /* a quote inside a quoted field: its end, or the first of a doubled quote */
};
struct csv_scan {
	enum csv_scan_state state;
};
/* Feed p[0..n). Returns the offset in p just past the last record end in it, or -1 when none ends in it. */
long csv_scan_records(struct csv_scan *st, const char *p, size_t n);

/* Parse a size: digits with an optional K, M or G suffix (powers of 1024). 0 or -EINVAL. */
int csv_parse_size(const char *s, uint64_t *bytes);

/*
 * Column names and their positions: an insertion-ordered list with a hash
 * lookup. Indexes are stable until csv_index_clear().
 */
struct csv_index {
	struct csv_strv names;
	uint32_t *slots; /* index + 1; 0: empty */
	size_t cap;      /* slots, a power of two */
};
/* The index of name[0..n), or -1. */
long csv_index_find(const struct csv_index *x, const char *name, size_t n);
/* The index of name[0..n), added at the end when missing. */
size_t csv_index_add(struct csv_index *x, const char *name, size_t n);
void csv_index_clear(struct csv_index *x);
void csv_index_free(struct csv_index *x);

#endif
