/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: stream lines -> samples -> CSV cells and rows -> a file,
 * the path every byte of accel-csv's input takes through its text and file
 * layers (sinks/csv/csv_format.c, sinks/csv/csv_out.c).
 *
 * The input is a report stream, optionally followed by "\n#FILE\n" and the
 * bytes an existing output file holds (any bytes: a partial row, an open
 * quote, another header). Each report goes through the common mapping; each
 * sample becomes one row of text cells (csv_put_field, formula escaping on
 * or off by the input's size), its value (csv_double), its timestamp and
 * its series name (csv_put_series, cross-checked with csv_series). Each row
 * is parsed back with csv_parse_record(): every cell must read back as
 * written (formula-escaped text with its '), the value as the same double,
 * and the series name must parse back into the sample's own labels (so two
 * label sets never share a name). The rows then go through csv_out_write()
 * into a file that starts with the given bytes: either they are refused
 * and the file keeps its bytes, or the file ends in exactly the rows
 * written under a header they fit, every byte
 * before them is the old content cut back to a whole row, and the whole
 * file reads as whole records. A violation aborts, which libFuzzer reports
 * with the input.
 *
 * Build and run: tests/fuzz/run.sh csv (make fuzz), or tests/fuzz/build.sh DIR csv.
 */
#include "../../common/log.h"
#include "../../common/samples.h"
#include "../../common/stream.h"
#include "../../sinks/csv/csv_format.h"
#include "../../sinks/csv/csv_out.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ROWS 2000
#define FILE_MARK "\n#FILE\n"

enum { C_TS, C_HOST, C_GROUP, C_ENTITY, C_METRIC, C_VALUE, C_SERIES, C_LABEL0 };
#define NCOLS (C_LABEL0 + SAMPLE_MAX_LABELS)
static const char *cols[NCOLS];

struct ctx {
	struct buf rows;    /* the rendered rows */
	struct buf scratch;
	size_t nrows;
	int64_t ts_ms;
	int esc; /* formula escaping on (accel-csv's default) */
};

static void fail(const char *what, const char *text, size_t len)
{
	fprintf(stderr, "fuzz_csv: %s: %.*s\n", what, (int)(len > 300 ? 300 : len), text);
	abort();
}

/* What a text cell holding s must read back as (csv_format.h's formula rule). */
static void expect_text(const struct ctx *c, const char *got, const char *s, const char *what)
{
	size_t n = strlen(s);
	int esc = c->esc && n && csv_formula_start[(unsigned char)s[0]] && !csv_is_number(s, n);

	if (esc ? got[0] != '\'' || strcmp(got + 1, s) : strcmp(got, s))
		fail(what, got, strlen(got));
}

/* Read a series name back: family{name=value,...}, values bare or "..." with \" \\ \n \r escapes. */
static void check_series(const char *t, const struct sample *s)
{
	size_t fl = strlen(s->fam->name), i = s->ninstance;
	const char *p = t + fl;
	char *v = malloc(strlen(t) + 1);

	if (strncmp(t, s->fam->name, fl))
		fail("series without its family", t, strlen(t));
	if (!*p) {
		if (i != s->nlabels)
			fail("series without its labels", t, strlen(t));
		free(v);
		return;
	}
	if (*p++ != '{')
		fail("series: no { after the family", t, strlen(t));
	for (;; i++) {
		size_t nl, k = 0;

		if (i >= s->nlabels)
			fail("series: more labels than the sample", t, strlen(t));
		nl = strlen(s->labels[i].name);
		if (strncmp(p, s->labels[i].name, nl) || p[nl] != '=')
			fail("series: a label name differs", t, strlen(t));
		p += nl + 1;
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++) {
				if (*p == '\\') {
					p++;
					v[k++] = *p == 'n' ? '\n' : *p == 'r' ? '\r' : *p;
					if (*p != 'n' && *p != 'r' && *p != '"' && *p != '\\')
						fail("series: a bad escape", t, strlen(t));
				} else {
					v[k++] = *p;
				}
			}
			if (*p++ != '"')
				fail("series: an unterminated value", t, strlen(t));
		} else {
			for (; *p && *p != ',' && *p != '}'; p++)
				v[k++] = *p;
			if (!k)
				fail("series: an empty value not quoted", t, strlen(t));
		}
		v[k] = '\0';
		if (strcmp(v, s->labels[i].value))
			fail("series: a label value differs", t, strlen(t));
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p++ != '}' || *p)
			fail("series: no } at the end", t, strlen(t));
		break;
	}
	if (i + 1 != s->nlabels)
		fail("series: fewer labels than the sample", t, strlen(t));
	free(v);
}

static void on_sample(const struct sample *s, void *ud)
{
	struct ctx *c = ud;
	char val[CSV_DOUBLE_LEN], ts[CSV_TS_LEN], *d, *row;
	size_t need = 64, vn, tn, smax = csv_series_max(s);
	struct csv_strv f = { 0 };
	int q;
	size_t used;

	if (c->nrows == MAX_ROWS)
		return;
	need += CSV_FIELD_MAX(strlen(s->host)) + CSV_FIELD_MAX(strlen(s->group)) + CSV_FIELD_MAX(strlen(s->entity)) +
		CSV_FIELD_MAX(strlen(s->fam->name)) + CSV_FIELD_MAX(smax) + NCOLS;
	for (size_t i = 0; i < s->nlabels; i++)
		need += CSV_FIELD_MAX(strlen(s->labels[i].value));
	if (buf_reserve(&c->rows, need) || buf_reserve(&c->scratch, smax + 1))
		return;
	row = d = c->rows.data + c->rows.len;
	tn = csv_timestamp(s->ts_ms, CSV_TS_UNIX_MS, ts);
	memcpy(d, ts, tn);
	d += tn;
	*d++ = ',';
	d = csv_put_field(d, s->host, strlen(s->host), c->esc);
	*d++ = ',';
	d = csv_put_field(d, s->group, strlen(s->group), c->esc);
	*d++ = ',';
	d = csv_put_field(d, s->entity, strlen(s->entity), c->esc);
	*d++ = ',';
	d = csv_put_field(d, s->fam->name, strlen(s->fam->name), c->esc);
	*d++ = ',';
	vn = csv_double(s->value, val);
	memcpy(d, val, vn);
	d += vn;
	*d++ = ',';
	{
		/* As accel-csv writes it: a CSV field when it needs quotes, else as it is. */
		char *e = csv_put_series(c->scratch.data, s, s->ninstance, NULL, NULL, NULL, &q);
		size_t sn = (size_t)(e - c->scratch.data);

		*e = '\0';
		if (q) {
			d = csv_put_field(d, c->scratch.data, sn, c->esc);
		} else {
			memcpy(d, c->scratch.data, sn);
			d += sn;
		}
	}
	for (size_t i = 0; i < SAMPLE_MAX_LABELS; i++) {
		*d++ = ',';
		if (i < s->nlabels)
			d = csv_put_field(d, s->labels[i].value, strlen(s->labels[i].value), c->esc);
	}
	*d++ = '\n';
	if ((size_t)(d - row) > need)
		fail("a row past its reservation", row, (size_t)(d - row));

	/* Read it back. */
	if (csv_parse_record(row, (size_t)(d - row), 0, &f, &used) != 1 || used != (size_t)(d - row) || f.n != NCOLS)
		fail("a row that does not parse back whole", row, (size_t)(d - row));
	if (strtoll(f.v[C_TS], NULL, 10) != s->ts_ms)
		fail("timestamp", f.v[C_TS], strlen(f.v[C_TS]));
	expect_text(c, f.v[C_HOST], s->host, "host");
	expect_text(c, f.v[C_GROUP], s->group, "group");
	expect_text(c, f.v[C_ENTITY], s->entity, "entity");
	expect_text(c, f.v[C_METRIC], s->fam->name, "metric");
	if (isfinite(s->value) ? strtod(f.v[C_VALUE], NULL) != s->value : strcmp(f.v[C_VALUE], val))
		fail("a value that does not read back", f.v[C_VALUE], strlen(f.v[C_VALUE]));
	if (strcmp(f.v[C_SERIES], c->scratch.data))
		fail("the series cell", f.v[C_SERIES], strlen(f.v[C_SERIES]));
	check_series(c->scratch.data, s);
	buf_reset(&c->scratch);
	if (csv_series(&c->scratch, s, s->ninstance, NULL) || strcmp(c->scratch.data, f.v[C_SERIES]))
		fail("csv_series and csv_put_series differ", c->scratch.data ? c->scratch.data : "", c->scratch.len);
	for (size_t i = 0; i < s->nlabels; i++)
		expect_text(c, f.v[C_LABEL0 + i], s->labels[i].value, "label");
	csv_strv_free(&f);
	c->rows.len = (size_t)(d - c->rows.data);
	c->nrows++;
}

static int render(void *ud, const char *const *hcols, size_t ncols, const char **rows, size_t *len)
{
	struct ctx *c = ud;

	(void)hcols;
	(void)ncols;
	*rows = c->rows.data ? c->rows.data : "";
	*len = c->rows.len;
	return 0;
}

static char *slurp(const char *path, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	char *b;

	if (fd < 0 || fstat(fd, &st))
		abort();
	b = malloc((size_t)st.st_size + 1);
	if (pread(fd, b, (size_t)st.st_size, 0) != st.st_size)
		abort();
	close(fd);
	*len = (size_t)st.st_size;
	return b;
}

/* Append the rows to a file that holds old[0..n) and check what the file holds afterwards. */
static void check_file(struct ctx *c, const char *path, const char *old, size_t n)
{
	struct csv_out_cfg cfg = { .path = path };
	struct csv_batch b = { { cols, NCOLS, NCOLS, 0 }, render, c, c->nrows, 0, "fuzz:1" };
	struct csv_scan sc = { CSV_SCAN_FIELD };
	struct csv_out *o;
	struct buf hdr;
	size_t len, keep;
	char *got;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600), rc;

	if (fd < 0 || (n && write(fd, old, n) != (ssize_t)n))
		abort();
	close(fd);
	if (csv_out_open(&o, &cfg))
		abort();
	rc = csv_out_write(o, &b);
	csv_out_close(o);
	got = slurp(path, &len);
	if (rc) {
		if (rc != -EBADMSG)
			fail("csv_out_write failed", strerror(-rc), strlen(strerror(-rc)));
		/* Refused: the file keeps its bytes. */
		if (len != n || memcmp(got, old, n))
			fail("a refused file was changed", got, len);
		free(got);
		return;
	}
	/* Written: whole records from the start, the rows last, after the old bytes cut back to a whole row. */
	if (csv_scan_records(&sc, got, len) != (long)len && len)
		fail("the file does not end in a whole record", got, len);
	if (len < c->rows.len || memcmp(got + len - c->rows.len, c->rows.data ? c->rows.data : "", c->rows.len))
		fail("the file does not end in the rows written", got, len);
	keep = len - c->rows.len;
	buf_init(&hdr, 1 << 20);
	for (size_t i = 0; i < NCOLS; i++) {
		if (i)
			buf_add(&hdr, ",", 1);
		csv_name(&hdr, cols[i], strlen(cols[i]));
	}
	buf_add(&hdr, "\n", 1);
	/* Before the rows: our header (the old bytes cut back to nothing), the old bytes cut back to a whole
	 * record, or a lone old line with its newline added. */
	if (!((keep == hdr.len && !memcmp(got, hdr.data, hdr.len)) || (keep <= n && !memcmp(got, old, keep)) ||
	      (keep == n + 1 && !memcmp(got, old, n) && got[n] == '\n')))
		fail("the old bytes before the rows were changed, not only cut back", got, len);
	/* And whatever it is, its first record is a header these rows fit. */
	{
		struct csv_strv f = { 0 };
		size_t used;

		if (csv_parse_record(got, len, 1, &f, &used) != 1 || f.n != NCOLS)
			fail("rows appended under a header they do not fit", got, len);
		for (size_t i = 0; i < NCOLS; i++)
			if (strcmp(f.v[i], cols[i]))
				fail("rows appended under a header they do not fit", got, len);
		csv_strv_free(&f);
	}
	buf_free(&hdr);
	free(got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	static struct ctx c;
	struct map_cb cb = { .sample = on_sample, .ud = &c };
	const char *mark = memmem(data, size, FILE_MARK, strlen(FILE_MARK));
	size_t slen = mark ? (size_t)(mark - (const char *)data) : size;
	struct stream s;
	json_t *report;
	enum stream_bad why;
	char err[512];
	size_t len;
	int fd, rc;

	if (!path[0]) {
		char dir[] = "/tmp/fuzz_csv.XXXXXX";

		log_init("fuzz", LOG_LVL_SILENT);
		if (!mkdtemp(dir))
			abort();
		snprintf(path, sizeof(path), "%s/out.csv", dir);
		buf_init(&c.rows, 64 << 20);
		buf_init(&c.scratch, 16 << 20);
		cols[C_TS] = "timestamp_unix_ms";
		cols[C_HOST] = "host";
		cols[C_GROUP] = "group";
		cols[C_ENTITY] = "entity";
		cols[C_METRIC] = "metric";
		cols[C_VALUE] = "value";
		cols[C_SERIES] = "series";
		for (size_t i = 0; i < SAMPLE_MAX_LABELS; i++) {
			static char names[SAMPLE_MAX_LABELS][16];

			snprintf(names[i], sizeof(names[i]), "label%zu", i);
			cols[C_LABEL0 + i] = names[i];
		}
	}
	c.esc = !(size & 1);
	buf_reset(&c.rows);
	c.nrows = 0;
	fd = memfd_create("fuzz", 0);
	if (fd < 0 || (slen && write(fd, data, slen) != (ssize_t)slen) || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	stream_init(&s, fd, "fuzz", 1 << 16);
	while ((rc = stream_next(&s, &report, &len, &why, err, sizeof(err))) != 0 && rc != -2) {
		if (rc == 1) {
			map_report(report, 1795239000000LL, &cb);
			json_decref(report);
		}
	}
	stream_free(&s);
	close(fd);
	if (mark)
		check_file(&c, path, mark + strlen(FILE_MARK), size - slen - strlen(FILE_MARK));
	else if (c.nrows)
		check_file(&c, path, "", 0);
	return 0;
}
