/* SPDX-License-Identifier: MIT */
/*
 * accel-csv's text and file layers (sinks/csv/csv_format.c, sinks/csv/csv_out.c):
 * RFC 4180 quoting and parsing, shortest round-trip numbers, timestamps,
 * series names, sizes, the column index, and the header rules, rotation
 * and continuation of csv_out in a temporary directory.
 */
#include "../../common/log.h"
#include "../../sinks/csv/csv_format.h"
#include "../../sinks/csv/csv_out.h"
#include "tap.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* s as one text field, formula-escaped when esc is set. */
static char *field(const char *s, int esc)
{
	static struct buf b;

	buf_free(&b);
	buf_init(&b, 1 << 20);
	csv_field(&b, s, strlen(s), esc);
	return b.data ? b.data : "";
}

static void test_fields(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "", "" },
		{ "plain", "plain" },
		{ "a,b", "\"a,b\"" },
		{ "say \"hi\"", "\"say \"\"hi\"\"\"" },
		{ "\"", "\"\"\"\"" },
		{ "two\nlines", "\"two\nlines\"" },
		{ "cr\r", "\"cr\r\"" },
		{ " spaces kept ", " spaces kept " },
		{ "日本語,é", "\"日本語,é\"" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char name[64];

		snprintf(name, sizeof(name), "field %zu", i);
		is_str(field(cases[i].in, 1), cases[i].out, name);
	}
}

/* Formula injection: text that starts like a formula gets a leading ', numbers do not. */
static void test_formula(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "=HYPERLINK(\"http://x\",\"y\")", "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"" },
		{ "=1+2", "'=1+2" },
		{ "+cmd", "'+cmd" },
		{ "-cmd|' /C calc'!A0", "'-cmd|' /C calc'!A0" },
		{ "@SUM(A1)", "'@SUM(A1)" },
		{ "\tx", "'\tx" },
		{ "\rx", "\"'\rx\"" },
		{ "-", "'-" },
		{ "-inf", "'-inf" },
		{ "-1e", "'-1e" },
		{ "-5", "-5" },
		{ "+1.5", "+1.5" },
		{ "-0.25e-3", "-0.25e-3" },
		{ "-.5", "-.5" },
		{ "a=b", "a=b" },
		{ "", "" },
	};
	char *d, out[256];
	size_t n;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char name[96];

		snprintf(name, sizeof(name), "formula %zu: csv_field", i);
		is_str(field(cases[i].in, 1), cases[i].out, name);
		n = strlen(cases[i].in);
		d = csv_put_field(out, cases[i].in, n, 1);
		*d = '\0';
		snprintf(name, sizeof(name), "formula %zu: csv_put_field", i);
		is_str(out, cases[i].out, name);
		ok((size_t)(d - out) <= CSV_FIELD_MAX(n), "formula %zu: within CSV_FIELD_MAX", i);
	}
	d = csv_put_field(out, "-\"\"", 3, 1);
	ok(d - out == 8 && (size_t)(d - out) <= CSV_FIELD_MAX(3), "-\"\": quoted, escaped, within CSV_FIELD_MAX");
	is_str(field("=1+2", 0), "=1+2", "--no-formula-escape: as it is");
	{
		struct buf b;

		buf_init(&b, 1 << 10);
		csv_name(&b, "-x", 2);
		is_str(b.data, "-x", "a header cell is never escaped");
		buf_free(&b);
	}
}

static void test_records(void)
{
	static const struct {
		const char *in;
		int eof, ret;
		size_t nfields, used;
		const char *f0, *flast;
	} cases[] = {
		{ "a,b,c\nrest", 0, 1, 3, 6, "a", "c" },
		{ "a,b,c\r\n", 0, 1, 3, 7, "a", "c" },
		{ "\"x,\"\"y\"\"\",z\n", 0, 1, 2, 12, "x,\"y\"", "z" },
		{ "\"multi\nline\",2\n", 0, 1, 2, 15, "multi\nline", "2" },
		{ "a,b", 0, 0, 0, 0, NULL, NULL },
		{ "a,b", 1, 1, 2, 3, "a", "b" },
		{ "\"open", 0, 0, 0, 0, NULL, NULL },
		{ "\"quoted\"", 0, 0, 0, 0, NULL, NULL }, /* a second quote could follow */
		{ ",,\n", 0, 1, 3, 3, "", "" },
		{ "\"a\"\r\n", 0, 1, 1, 5, "a", "a" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct csv_strv sv = { 0 };
		size_t used = 0;
		int r = csv_parse_record(cases[i].in, strlen(cases[i].in), cases[i].eof, &sv, &used);
		char name[96];

		snprintf(name, sizeof(name), "record %zu: result", i);
		is_int(r, cases[i].ret, name);
		snprintf(name, sizeof(name), "record %zu: fields", i);
		is_int(sv.n, cases[i].nfields, name);
		if (r == 1) {
			snprintf(name, sizeof(name), "record %zu: bytes used", i);
			is_int(used, cases[i].used, name);
			snprintf(name, sizeof(name), "record %zu: first field", i);
			is_str(sv.v[0], cases[i].f0, name);
			snprintf(name, sizeof(name), "record %zu: last field", i);
			is_str(sv.v[sv.n - 1], cases[i].flast, name);
		}
		csv_strv_free(&sv);
	}

	/* Every field survives csv_field() then csv_parse_record() (formula escaping aside: see test_formula). */
	{
		static const char *const vals[] = { "", "a", "a,b", "\"", "x\ny", "\r\n", ",\",", "é" };
		struct buf b;
		struct csv_strv sv = { 0 };
		size_t used, i;
		int same = 1;

		buf_init(&b, 1 << 20);
		for (i = 0; i < ARRAY_SIZE(vals); i++) {
			if (i)
				buf_add(&b, ",", 1);
			csv_field(&b, vals[i], strlen(vals[i]), 0);
		}
		buf_add(&b, "\n", 1);
		ok(csv_parse_record(b.data, b.len, 0, &sv, &used) == 1 && used == b.len && sv.n == ARRAY_SIZE(vals),
		   "a quoted record parses back whole");
		for (i = 0; i < sv.n && i < ARRAY_SIZE(vals); i++)
			same &= !strcmp(sv.v[i], vals[i]);
		ok(same, "every field reads back as written");
		csv_strv_free(&sv);
		buf_free(&b);
	}
}

static void test_doubles(void)
{
	static const struct {
		double v;
		const char *out;
	} cases[] = {
		{ 0, "0" },
		{ -0.0, "-0" },
		{ 1, "1" },
		{ 6999188352.0, "6999188352" },
		{ 9007199254740991.0, "9007199254740991" },
		{ 0.1, "0.1" },
		{ 0.6241, "0.6241" },
		{ 0.30000000000000004, "0.30000000000000004" },
		{ 0.003493427, "0.003493427" },
		{ 1e-9, "1e-09" },
		{ 1e300, "1e+300" },
		{ 36028797018963968.0, "3.602879701896397e+16" },
		{ -2.5, "-2.5" },
		{ 1.0 / 3, "0.3333333333333333" },
		{ 5e-324, "4.94065645841247e-324" },
	};
	char d[CSV_DOUBLE_LEN];
	uint64_t x = 88172645463325252ull;
	int all = 1, shortest = 1, same_text = 1;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char name[64];

		snprintf(name, sizeof(name), "double %zu", i);
		csv_double(cases[i].v, d);
		is_str(d, cases[i].out, name);
	}
	csv_double(1.0 / 0.0, d);
	is_str(d, "inf", "infinity");
	csv_double(-1.0 / 0.0, d);
	is_str(d, "-inf", "minus infinity");

	/* 100000 random bit patterns: each reads back exactly, and no shorter %g would. */
	for (int i = 0; i < 100000; i++) {
		double v, back;
		char shorter[64];
		size_t n;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(&v, &x, sizeof(v));
		if (!isfinite(v))
			continue;
		n = csv_double(v, d);
		if (!(v == trunc(v) && fabs(v) < 9007199254740992.0)) {
			for (int prec = 15; prec <= 17; prec++) {
				snprintf(shorter, sizeof(shorter), "%.*g", prec, v);
				if (strtod(shorter, NULL) == v)
					break;
			}
			if (strcmp(d, shorter)) {
				if (same_text)
					printf("# %.17g written as %s, printf says %s\n", v, d, shorter);
				same_text = 0;
			}
		}
		back = strtod(d, NULL);
		if (memcmp(&back, &v, sizeof(v)) && !(v == 0 && back == 0)) {
			if (all)
				printf("# %.17g written as %s\n", v, d);
			all = 0;
		}
		if (n > 0 && strchr(d, '.')) {
			int digits = 0, lead = 1;

			/* Significant digits: leading zeros do not count. */
			for (const char *p = d; *p && *p != 'e'; p++) {
				if (*p >= '1' && *p <= '9')
					lead = 0;
				digits += !lead && *p >= '0' && *p <= '9';
			}
			snprintf(shorter, sizeof(shorter), "%.*g", digits - 1 > 0 ? digits - 1 : 1, v);
			if (digits > 15 && strtod(shorter, NULL) == v) {
				if (shortest)
					printf("# %s could be %s\n", d, shorter);
				shortest = 0;
			}
		}
	}
	ok(all, "random doubles read back bit for bit");
	ok(shortest, "and with no more digits than needed");
	ok(same_text, "and as the same text as the printf loop (%%.15g, then %%.16g, then %%.17g)");

	/* Values like the stream's (decimals, percentages scaled by 0.01, sums): the same text as %.15g/16g/17g. */
	{
		int same = 1, shown = 0;

		for (int i = 0; i < 300000; i++) {
			double v;
			char ref[64];

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			v = (double)(x % 100000000) / (double)(1ull << (x >> 59)) / 1e3 * ((x >> 40 & 1) ? 0.01 : 1);
			if (x >> 41 & 1)
				v += (double)(x % 997) / 100;
			if (x >> 42 & 1)
				v = -v;
			csv_double(v, d);
			if (v == trunc(v) && fabs(v) < 9007199254740992.0)
				continue;
			for (int prec = 15; prec <= 17; prec++) {
				snprintf(ref, sizeof(ref), "%.*g", prec, v);
				if (strtod(ref, NULL) == v)
					break;
			}
			if (strcmp(d, ref)) {
				if (shown++ < 5)
					printf("# %.17g: %s, printf says %s\n", v, d, ref);
				same = 0;
			}
		}
		ok(same, "300000 stream-like values: the same text as the printf loop");
	}
}

static void test_timestamps(void)
{
	char t[CSV_TS_LEN], d[11];

	csv_timestamp(1795239000123LL, CSV_TS_ISO8601, t);
	is_str(t, "2026-11-21T05:30:00.123Z", "iso8601");
	csv_timestamp(1795239000123LL, CSV_TS_UNIX, t);
	is_str(t, "1795239000.123", "unix seconds");
	csv_timestamp(1795239000005LL, CSV_TS_UNIX, t);
	is_str(t, "1795239000.005", "unix seconds keep 3 decimals");
	csv_timestamp(1795239000123LL, CSV_TS_UNIX_MS, t);
	is_str(t, "1795239000123", "unix ms");
	csv_timestamp(-1, CSV_TS_ISO8601, t);
	is_str(t, "1969-12-31T23:59:59.999Z", "before 1970");
	csv_timestamp(-1500, CSV_TS_UNIX, t);
	is_str(t, "-1.500", "negative unix seconds");
	csv_date(1795305599999LL, d);
	is_str(d, "2026-11-21", "date, last ms of the day");
	csv_date(1795305600000LL, d);
	is_str(d, "2026-11-22", "date, next day");
}

static void test_series(void)
{
	static const struct family fam = { "fam_total", "help", METRIC_COUNTER, "count" };
	static const char *const skip[] = { "runtime_tag", NULL };
	struct sample s;
	struct buf b;

	memset(&s, 0, sizeof(s));
	s.fam = &fam;
	s.labels[0] = (struct label){ "instance_id", "i-1" };
	s.labels[1] = (struct label){ "runtime_tag", "app" };
	s.labels[2] = (struct label){ "kind", "a,b" };
	s.labels[3] = (struct label){ "q", "x\"y\\z\n" };
	s.labels[4] = (struct label){ "empty", "" };
	s.ninstance = 1;
	s.nlabels = 5;
	buf_init(&b, 1 << 20);
	csv_series(&b, &s, s.ninstance, NULL);
	is_str(b.data, "fam_total{runtime_tag=app,kind=\"a,b\",q=\"x\\\"y\\\\z\\n\",empty=\"\"}", "series name");
	buf_reset(&b);
	s.nlabels = 2;
	csv_series(&b, &s, s.ninstance, skip);
	is_str(b.data, "fam_total", "no labels left: no braces");
	buf_free(&b);
}

static void test_sizes_and_index(void)
{
	uint64_t v = 0;
	struct csv_index x = { 0 };
	char name[32];
	int same = 1;

	ok(csv_parse_size("100M", &v) == 0 && v == 100ull << 20, "100M");
	ok(csv_parse_size("4096", &v) == 0 && v == 4096, "plain bytes");
	ok(csv_parse_size("2G", &v) == 0 && v == 2ull << 30, "2G");
	ok(csv_parse_size("1k", &v) == 0 && v == 1024, "1k");
	ok(csv_parse_size("0", &v) == -EINVAL, "0 refused");
	ok(csv_parse_size("10X", &v) == -EINVAL, "unknown suffix refused");
	ok(csv_parse_size("-1", &v) == -EINVAL, "negative refused");
	ok(csv_parse_size("99999999999999999999", &v) == -EINVAL, "overflow refused");

	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "col%d", i);
		same &= csv_index_add(&x, name, strlen(name)) == (size_t)i;
	}
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "col%d", i);
		same &= csv_index_find(&x, name, strlen(name)) == i && csv_index_add(&x, name, strlen(name)) == (size_t)i;
	}
	ok(same, "index: 1000 names keep their positions");
	is_int(csv_index_find(&x, "col", 3), -1, "index: a prefix is not a name");
	csv_index_clear(&x);
	is_int(csv_index_find(&x, "col1", 4), -1, "index: cleared");
	is_int(csv_index_add(&x, "z", 1), 0, "index: reused after clear");
	csv_index_free(&x);
}

/* ---- csv_out in a temporary directory ------------------------------------------- */

struct rows {
	const char *text;
	size_t n;
};

static int render_rows(void *ud, const char *const *cols, size_t ncols, const char **rows, size_t *len)
{
	const struct rows *r = ud;

	(void)cols;
	(void)ncols;
	*rows = r->text;
	*len = strlen(r->text);
	return 0;
}

/* Wide-like: one row with a value in each column named "m*", in the file's order. */
static int render_wide(void *ud, const char *const *cols, size_t ncols, const char **rows, size_t *len)
{
	static struct buf out;

	(void)ud;
	buf_free(&out);
	buf_init(&out, 1 << 20);
	for (size_t i = 0; i < ncols; i++) {
		if (i)
			buf_add(&out, ",", 1);
		buf_add(&out, cols[i][0] == 'm' ? cols[i] : "k", cols[i][0] == 'm' ? strlen(cols[i]) : 1);
	}
	buf_add(&out, "\n", 1);
	*rows = out.data;
	*len = out.len;
	return 0;
}

static char *slurp(const char *path)
{
	static char b[8192];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(b, 1, sizeof(b) - 1, f) : 0;

	b[n] = '\0';
	if (f)
		fclose(f);
	return f ? b : "(missing)";
}

static int write_batch(struct csv_out *o, const char *const *cols, size_t ncols, const char *rows, int64_t ms)
{
	struct rows r = { rows, 1 };
	struct csv_batch b = { { cols, ncols, ncols, 0 }, render_rows, &r, 1, ms, "test:1" };

	return csv_out_write(o, &b);
}

/* Where whole records end: csv_scan_records() on the whole input and byte by byte agree. */
static void test_scan(void)
{
	static const struct {
		const char *in;
		long last;                 /* offset past the last record end; -1: none */
		enum csv_scan_state state; /* at the end */
	} cases[] = {
		{ "", -1, CSV_SCAN_FIELD },
		{ "a,b\n", 4, CSV_SCAN_FIELD },
		{ "a,b\n1,2", 4, CSV_SCAN_BARE },
		{ "a,b\n1,", 4, CSV_SCAN_FIELD },
		{ "a,\"x\ny\"\n", 8, CSV_SCAN_FIELD },
		{ "a,\"x\ny\n", -1, CSV_SCAN_QUOTED },         /* an unterminated quote swallows the LF */
		{ "h\n1,\"open\n2,3\n4,5\n", 2, CSV_SCAN_QUOTED },
		{ "\"a\"\"b\"\n", 7, CSV_SCAN_FIELD },           /* a doubled quote */
		{ "\"a\"", -1, CSV_SCAN_QUOTE },
		{ "\"a\"x,y\n", 7, CSV_SCAN_FIELD },             /* after the closing quote, as csv_parse_record() */
		{ "5\" screen,1\n", 12, CSV_SCAN_FIELD },        /* a quote inside a bare field is text */
		{ "a\r\nb\r\n", 6, CSV_SCAN_FIELD },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *in = cases[i].in;
		struct csv_scan whole = { CSV_SCAN_FIELD }, bytes = { CSV_SCAN_FIELD };
		long last = csv_scan_records(&whole, in, strlen(in)), last1 = -1;
		char name[64];

		for (size_t k = 0; in[k]; k++)
			if (csv_scan_records(&bytes, in + k, 1) == 1)
				last1 = (long)k + 1;
		snprintf(name, sizeof(name), "scan %zu: last record end", i);
		is_int(last, cases[i].last, name);
		snprintf(name, sizeof(name), "scan %zu: state at the end", i);
		is_int(whole.state, cases[i].state, name);
		snprintf(name, sizeof(name), "scan %zu: the same fed a byte at a time", i);
		is_int(last1, cases[i].last, name);
		snprintf(name, sizeof(name), "scan %zu: the same state a byte at a time", i);
		is_int(bytes.state, cases[i].state, name);
	}
}

static void put_file(const char *path, const char *mode, const char *text, size_t repeat)
{
	FILE *f = fopen(path, mode);

	for (size_t i = 0; f && i < repeat; i++)
		fputs(text, f);
	if (f)
		fclose(f);
}

/* A file that does not end in a whole row is repaired or refused, never appended to as it is. */
static void test_out_tail(void)
{
	static const char *const ab[] = { "a", "b" };
	char dir[] = "/tmp/test_csv.XXXXXX", path[256], p2[300];
	struct csv_out_cfg cfg = { 0 };
	struct csv_out *o;
	struct stat st;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/t.csv", dir);
	snprintf(p2, sizeof(p2), "%s/t.1.csv", dir);
	cfg.path = path;

	put_file(path, "w", "a,b\n1,2\n3,", 1); /* a crash, or truncate(1), in the middle of a row */
	csv_out_open(&o, &cfg);
	is_int(write_batch(o, ab, 2, "5,6\n", 0), 0, "partial last row: written");
	is_str(slurp(path), "a,b\n1,2\n5,6\n", "partial last row: cut back to the last whole row first");
	/* Another writer leaves a partial row between two batches of this run. */
	put_file(path, "a", "7,\"x", 1);
	is_int(write_batch(o, ab, 2, "8,9\n", 0), 0, "a partial row written since the last batch: written");
	is_str(slurp(path), "a,b\n1,2\n5,6\n8,9\n", "and cut off first");
	csv_out_close(o);

	put_file(path, "w", "a,b", 1); /* a header another tool wrote without its newline */
	csv_out_open(&o, &cfg);
	is_int(write_batch(o, ab, 2, "1,2\n", 0), 0, "header without its newline: written");
	is_str(slurp(path), "a,b\n1,2\n", "header without its newline: the newline added, no second header");
	csv_out_close(o);

	put_file(path, "w", "x,y", 1); /* ... and one that does not match */
	csv_out_open(&o, &cfg);
	is_int(write_batch(o, ab, 2, "1,2\n", 0), -EBADMSG, "another header without its newline: refused");
	is_str(slurp(path), "x,y", "and the file is left as it was");
	csv_out_close(o);

	put_file(path, "w", "x,y\n1,2\n3,", 1); /* another header and a partial row (found by fuzz_csv) */
	csv_out_open(&o, &cfg);
	is_int(write_batch(o, ab, 2, "1,2\n", 0), -EBADMSG, "another header and a partial row: refused");
	is_str(slurp(path), "x,y\n1,2\n3,", "and the file is left exactly as it was, partial row included");
	csv_out_close(o);

	put_file(path, "w", "a,b\n1,\"open\n2,3\n", 1); /* an unterminated quote swallows what follows */
	csv_out_open(&o, &cfg);
	is_int(write_batch(o, ab, 2, "4,5\n", 0), 0, "unterminated quote: written");
	is_str(slurp(path), "a,b\n4,5\n", "unterminated quote: cut back to the last whole row");
	csv_out_close(o);

	put_file(path, "w", "a,b\n1,\"open\n", 1); /* ... with more than 1 MiB after it */
	put_file(path, "a", "2,3\n", 300000);
	csv_out_open(&o, &cfg);
	is_int(write_batch(o, ab, 2, "4,5\n", 0), -EBADMSG, "1.2 MB in an unterminated quote: refused");
	csv_out_close(o);
	ok(stat(path, &st) == 0 && st.st_size == 4 + 8 + 1200000, "and the file is left as it was");
	cfg.rotate = CSV_ROTATE_SIZE;
	cfg.max_bytes = 1 << 30;
	csv_out_open(&o, &cfg);
	is_int(write_batch(o, ab, 2, "4,5\n", 0), 0, "the same under --rotate: written");
	csv_out_close(o);
	is_str(slurp(p2), "a,b\n4,5\n", "in the next file");
	ok(stat(path, &st) == 0 && st.st_size == 4 + 8 + 1200000, "the first one left as it was");
	unlink(p2);
	unlink(path);
	rmdir(dir);
}

static void test_out(void)
{
	static const char *const ab[] = { "a", "b" }, *const ac[] = { "a", "c" };
	char dir[] = "/tmp/test_csv.XXXXXX", path[256], p2[300];
	struct csv_out_cfg cfg = { 0 };
	struct csv_out *o;
	FILE *f;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/x.csv", dir);
	cfg.path = path;

	/* A new file gets the header; a second run appends without one. */
	ok(csv_out_open(&o, &cfg) == 0, "open");
	is_int(write_batch(o, ab, 2, "1,2\n", 0), 0, "first batch");
	is_int(write_batch(o, ab, 2, "3,4\n", 0), 0, "second batch");
	is_int(csv_out_rows(o), 2, "two rows counted");
	csv_out_close(o);
	csv_out_open(&o, &cfg);
	is_int(write_batch(o, ab, 2, "5,6\n", 0), 0, "another run appends");
	csv_out_close(o);
	is_str(slurp(path), "a,b\n1,2\n3,4\n5,6\n", "one header, three rows");

	/* A different header is refused without rotation, and nothing is written. */
	csv_out_open(&o, &cfg);
	is_int(write_batch(o, ac, 2, "7,8\n", 0), -EBADMSG, "mismatching header refused");
	csv_out_close(o);
	is_str(slurp(path), "a,b\n1,2\n3,4\n5,6\n", "file unchanged");

	/* An empty file gets the header. */
	f = fopen(path, "w");
	fclose(f);
	csv_out_open(&o, &cfg);
	is_int(write_batch(o, ac, 2, "7,8\n", 0), 0, "empty file");
	csv_out_close(o);
	is_str(slurp(path), "a,c\n7,8\n", "header written into an empty file");

	/* With rotation, a mismatch goes on in x.1.csv. */
	cfg.rotate = CSV_ROTATE_SIZE;
	cfg.max_bytes = 1 << 20;
	csv_out_open(&o, &cfg);
	is_int(write_batch(o, ab, 2, "9,9\n", 0), 0, "mismatch under --rotate");
	csv_out_close(o);
	snprintf(p2, sizeof(p2), "%s/x.1.csv", dir);
	is_str(slurp(p2), "a,b\n9,9\n", "went on in x.1.csv");
	unlink(p2);

	/* Size: a batch that would pass the limit starts the next file; one bigger than it still goes whole. */
	unlink(path);
	cfg.max_bytes = 12;
	csv_out_open(&o, &cfg);
	write_batch(o, ab, 2, "1,2\n", 0);            /* 8 bytes */
	write_batch(o, ab, 2, "3,4\n", 0);            /* 12: still fits */
	write_batch(o, ab, 2, "5,6\n", 0);            /* would be 16: x.1.csv */
	write_batch(o, ab, 2, "7,7\n8,8\n9,9\n", 0); /* 4+12 > 12 in x.1.csv: x.2.csv, whole */
	csv_out_close(o);
	is_str(slurp(path), "a,b\n1,2\n3,4\n", "size: first file");
	snprintf(p2, sizeof(p2), "%s/x.1.csv", dir);
	is_str(slurp(p2), "a,b\n5,6\n", "size: second file");
	unlink(p2);
	snprintf(p2, sizeof(p2), "%s/x.2.csv", dir);
	is_str(slurp(p2), "a,b\n7,7\n8,8\n9,9\n", "size: a big batch is not split");
	unlink(p2);
	unlink(path);

	/* Daily: the report's UTC date names the file. */
	cfg.rotate = CSV_ROTATE_DAILY;
	csv_out_open(&o, &cfg);
	write_batch(o, ab, 2, "1,1\n", 1795305599999LL);
	write_batch(o, ab, 2, "2,2\n", 1795305600000LL);
	csv_out_close(o);
	snprintf(p2, sizeof(p2), "%s/x.2026-11-21.csv", dir);
	is_str(slurp(p2), "a,b\n1,1\n", "daily: first day");
	unlink(p2);
	snprintf(p2, sizeof(p2), "%s/x.2026-11-22.csv", dir);
	is_str(slurp(p2), "a,b\n2,2\n", "daily: next day");
	unlink(p2);

	/* Open-ended (wide): a new column continues in x.1.csv with the old columns kept. */
	cfg.rotate = CSV_ROTATE_NONE;
	cfg.continuation = 1;
	{
		static const char *const c1[] = { "k", "m1", "m2" }, *const c2[] = { "k", "m2" },
				       *const c3[] = { "k", "m3", "m1" };
		struct csv_batch b = { { c1, 3, 1, 1 }, render_wide, NULL, 1, 0, "test:1" };

		csv_out_open(&o, &cfg);
		is_int(csv_out_write(o, &b), 0, "wide: first");
		b.schema.cols = c2;
		b.schema.ncols = 2;
		is_int(csv_out_write(o, &b), 0, "wide: a subset of the columns");
		b.schema.cols = c3;
		b.schema.ncols = 3;
		is_int(csv_out_write(o, &b), 0, "wide: a new column");
		csv_out_close(o);
		is_str(slurp(path), "k,m1,m2\nk,m1,m2\nk,m1,m2\n", "wide: first file");
		snprintf(p2, sizeof(p2), "%s/x.1.csv", dir);
		is_str(slurp(p2), "k,m1,m2,m3\nk,m1,m2,m3\n", "wide: next file keeps the old columns");
		/* A later run finds x.1.csv and appends there. */
		b.schema.cols = c2;
		b.schema.ncols = 2;
		csv_out_open(&o, &cfg);
		is_int(csv_out_write(o, &b), 0, "wide: a later run");
		csv_out_close(o);
		is_str(slurp(p2), "k,m1,m2,m3\nk,m1,m2,m3\nk,m1,m2,m3\n", "wide: it appended to the newest file");
		unlink(p2);
	}
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	log_init("test_csv", 0);
	test_fields();
	test_formula();
	test_records();
	test_doubles();
	test_timestamps();
	test_series();
	test_sizes_and_index();
	test_out();
	test_scan();
	test_out_tail();
	return done_testing();
}
