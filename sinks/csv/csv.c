/* SPDX-License-Identifier: MIT */
/*
 * accel-csv: reads the report stream (accel-monitor's, or neuron-monitor
 * 2.x / 2020 output) on stdin and writes CSV for cron jobs, spreadsheets
 * and pandas. Reports become samples through common/samples.c; this file
 * only lays samples out as rows:
 *
 *   long (default)  one row per sample, a fixed set of columns
 *                   (docs/accel-csv.md): the series key, its value, and
 *                   every label in a column of its own
 *   wide            one row per report and entity (instance, system, each
 *                   runtime), one column per series
 *
 * A histogram family's sample is laid out as Prometheus' series of it
 * (name_bucket with an le label, cumulative over the bounds, name_sum,
 * name_count): counters whose values are the period's increments.
 *
 * Each report's rows go out as one batch through sinks/csv/csv_out.c, which
 * owns files, headers, locking and rotation.
 */
#include "../../common/log.h"
#include "../../common/samples.h"
#include "../../common/sink.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"
#include "csv_format.h"
#include "csv_out.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROWS_MAX (256ull << 20) /* bytes of CSV one report may make */

/* ---- columns ----------------------------------------------------------------- */

/*
 * The long format's columns, in order. Every label the mapping gives has a
 * column of its own name; a label this list does not know yet goes to
 * other_labels, so a newer mapping never changes the header.
 */
enum lcol {
	LC_TIMESTAMP, LC_HOST, LC_GROUP, LC_ENTITY, LC_METRIC, LC_VALUE, LC_UNIT, LC_METRIC_TYPE, LC_PERIOD, LC_SERIES,
	LC_RUNTIME_TAG, LC_PID, LC_NEURONCORE, LC_NEURON_DEVICE, LC_DEVICE_TYPE, LC_DEVICE, LC_UUID, LC_MODEL,
	LC_PCI_BUS_ID, LC_USAGE_TYPE, LC_MEMORY_LOCATION, LC_ERROR_TYPE, LC_STATUS_TYPE, LC_PERCENTILE,
	LC_EVENT_TYPE, LC_ENGINE, LC_SENSOR, LC_CLOCK, LC_TYPE, LC_STATUS, LC_FAN, LC_CATEGORY, LC_NAME,
	LC_DEVICE_COUNT, LC_CORES_PER_DEVICE,
	LC_INSTANCE_NAME, LC_INSTANCE_ID, LC_INSTANCE_TYPE, LC_AZ, LC_REGION, LC_SUBNET,
	LC_OTHER_LABELS, LC_COUNT
};
#define LC_FIRST_LABEL LC_RUNTIME_TAG
_Static_assert(LC_COUNT <= 64, "label columns are tracked in a 64-bit mask");

static const char *const long_names[LC_COUNT + 1] = {
	"timestamp", "host", "group", "entity", "metric", "value", "unit", "metric_type", "period", "series",
	"runtime_tag", "pid", "neuroncore", "neuron_device_index", "device_type", "device", "uuid", "model",
	"pci_bus_id", "usage_type", "memory_location", "error_type", "status_type", "percentile",
	"event_type", "engine", "sensor", "clock", "type", "status", "fan", "category", "name",
	"neuron_device_count", "neuroncore_per_device_count",
	"instance_name", "instance_id", "instance_type", "availability_zone", "region", "subnet_id",
	"other_labels", NULL,
};

/* The wide format's fixed columns (the row's key); one column per series follows. */
enum wcol {
	WC_TIMESTAMP, WC_HOST, WC_ENTITY, WC_PID, WC_DEVICE_TYPE, WC_DEVICE, WC_UUID, WC_MODEL, WC_PCI_BUS_ID,
	WC_INSTANCE_NAME, WC_INSTANCE_ID, WC_INSTANCE_TYPE, WC_AZ, WC_REGION, WC_SUBNET, WC_COUNT
};
static const char *const wide_names[WC_COUNT] = {
	"timestamp", "host", "entity", "pid", "device_type", "device", "uuid", "model", "pci_bus_id",
	"instance_name", "instance_id", "instance_type", "availability_zone", "region", "subnet_id",
};
#define N_INSTANCE 6
#define N_ROWKEY 6 /* pid and the device identity: WC_PID .. WC_PCI_BUS_ID */
/* A wide column's name leaves out the labels in the row's key: runtime_tag (the entity), pid and the device identity. */

struct cell {
	const char *p;
	size_t n;
	int raw; /* already CSV text (a number, or quoted ahead) */
};

/* One wide row: its key and its cells. */
struct wrow {
	size_t ent_off, ent_len;                        /* in arena */
	size_t key_off[N_ROWKEY], key_len[N_ROWKEY];    /* pid, device_type, device, uuid, model, pci_bus_id */
	size_t first, last;                             /* its cells, a list through wcell.next; SIZE_MAX: none */
};
struct wcell {
	size_t col;      /* in the batch's column index */
	size_t off, len; /* the value, in arena */
	size_t next;     /* the row's next cell; SIZE_MAX: none */
};

struct run {
	/* options */
	int wide;
	enum csv_ts_format tsf;
	enum lcol cols[LC_COUNT]; /* long: the columns written, in order */
	size_t ncols;
	struct csv_strv wide_filter; /* wide: family or column names kept (empty: all) */
	char host_default[256];
	int64_t fake_now, fake_step; /* ACCEL_CSV_NOW: a clock for tests (unix ms); 0: the real one */
	int fake;
	struct mapper *map;   /* the stream's report -> samples mapping */
	int formula_escape;          /* text fields starting like a formula get a ' (csv_format.h) */

	/* per report */
	const char *where;    /* "stdin:12": the driver's */
	int64_t report_ms;
	size_t nrows;
	int overflow;         /* the report's rows passed ROWS_MAX */
	struct buf rows;      /* long: the rendered rows */
	struct buf scratch;   /* a series name */
	struct buf other;     /* long: other_labels */
	struct buf pre;       /* long: the report's host and instance labels, quoted */
	struct cell pre_cell[1 + N_INSTANCE];
	const char *inst[N_INSTANCE];
	const char *host;

	/* wide, per report */
	struct csv_index wcols;     /* series columns of this report */
	uint64_t *seen;             /* (row, col) pairs set in this report, an open-addressing set */
	size_t seen_cap, nseen;
	struct wrow *wrows;
	size_t nwrows, awrows;
	struct wcell *wcells;
	size_t nwcells, awcells;
	struct buf arena;
	size_t inst_off[N_INSTANCE], inst_len[N_INSTANCE], host_off, host_len;
	const char **schema;        /* fixed + series column names, for csv_out */
	size_t aschema;

	struct hist_fams {
		const struct family *base; /* a histogram family of the mapping */
		struct family f[3];        /* its rows' families: name_bucket, name_sum, name_count */
		char *name[3];
	} *hf;
	size_t nhf;

	/* caches: samples of one group share their time and period */
	const struct family *fam;
	size_t fam_len, unit_len;
	int64_t ts_ms;
	char ts[CSV_TS_LEN];
	size_t ts_len;
	double period;
	char period_s[CSV_DOUBLE_LEN];
	size_t period_len;
	struct {
		const char *name; /* a label name pointer from the mapping */
		size_t len;
		enum lcol col;
	} lcache[64];
	size_t nlcache;

	uint64_t bad_values, dropped;
};

/* ---- long -------------------------------------------------------------------- */

/* The column of a label, and the length of its name (cached by the name's address: the mapping's are static). */
static enum lcol label_col(struct run *r, const char *name, size_t *len)
{
	enum lcol c = LC_OTHER_LABELS;

	for (size_t i = 0; i < r->nlcache; i++)
		if (r->lcache[i].name == name) {
			*len = r->lcache[i].len;
			return r->lcache[i].col;
		}
	*len = strlen(name);
	for (int k = LC_FIRST_LABEL; k < LC_OTHER_LABELS; k++)
		if (!strcmp(long_names[k], name)) {
			c = (enum lcol)k;
			break;
		}
	if (r->nlcache < ARRAY_SIZE(r->lcache)) {
		r->lcache[r->nlcache].name = name;
		r->lcache[r->nlcache].len = *len;
		r->lcache[r->nlcache++].col = c;
	}
	return c;
}

static const char *ts_text(struct run *r, int64_t ms, size_t *len)
{
	if (ms != r->ts_ms || !r->ts_len) {
		r->ts_ms = ms;
		r->ts_len = csv_timestamp(ms, r->tsf, r->ts);
	}
	*len = r->ts_len;
	return r->ts;
}

static const char *period_text(struct run *r, double p, size_t *len)
{
	if (p != r->period || !r->period_len) {
		r->period = p;
		r->period_len = p > 0 ? csv_double(p, r->period_s) : 0;
		if (!r->period_len)
			r->period_s[0] = '\0';
		r->period_len = strlen(r->period_s);
	}
	*len = r->period_len;
	return r->period_s;
}

/* Quote the report's host and instance labels once: every row of the report repeats them. */
static void long_report_cells(struct run *r, const struct sample *s)
{
	size_t off[1 + N_INSTANCE], len[1 + N_INSTANCE];

	buf_reset(&r->pre);
	for (size_t i = 0; i <= N_INSTANCE; i++) {
		const char *v = i == 0 ? r->host : i - 1 < s->ninstance ? s->labels[i - 1].value : "";

		off[i] = r->pre.len;
		if (csv_field(&r->pre, v, strlen(v), r->formula_escape))
			r->overflow = 1;
		len[i] = r->pre.len - off[i];
	}
	for (size_t i = 0; i <= N_INSTANCE; i++)
		r->pre_cell[i] = (struct cell){ r->pre.data ? r->pre.data + off[i] : "", len[i], 1 };
}

static int long_row(struct run *r, const struct sample *s)
{
	struct cell c[LC_COUNT];
	char val[CSV_DOUBLE_LEN];
	size_t count, need = 0, smax, nlen[SAMPLE_MAX_LABELS], vlen[SAMPLE_MAX_LABELS];
	int rc = 0, q, instance_row = !strcmp(s->entity, "instance");
	uint64_t set = 0; /* label columns that have a value in this row */
	char *d;

	c[LC_TIMESTAMP].p = ts_text(r, s->ts_ms, &c[LC_TIMESTAMP].n);
	c[LC_TIMESTAMP].raw = 1;
	c[LC_HOST] = r->pre_cell[0];
	c[LC_GROUP] = (struct cell){ s->group, strlen(s->group), 0 };
	c[LC_ENTITY] = (struct cell){ s->entity, strlen(s->entity), 0 };
	if (s->fam != r->fam) { /* families are static: their lengths can be kept */
		r->fam = s->fam;
		r->fam_len = strlen(s->fam->name);
		r->unit_len = strlen(s->fam->unit);
	}
	c[LC_METRIC] = (struct cell){ s->fam->name, r->fam_len, 0 };
	c[LC_VALUE] = (struct cell){ val, csv_double(s->value, val), 1 };
	c[LC_UNIT] = (struct cell){ s->fam->unit, r->unit_len, 0 };
	c[LC_METRIC_TYPE] = s->fam->type == METRIC_COUNTER ? (struct cell){ "counter", 7, 1 } : (struct cell){ "gauge", 5, 1 };
	c[LC_PERIOD].p = period_text(r, s->period, &c[LC_PERIOD].n);
	c[LC_PERIOD].raw = 1;
	buf_reset(&r->scratch);
	buf_reset(&r->other);
	/* Each label's column and lengths, once; instance labels only on the instance rows. */
	smax = r->fam_len + 2;
	for (size_t i = 0; i < s->nlabels; i++) {
		enum lcol k = label_col(r, s->labels[i].name, &nlen[i]);

		vlen[i] = i < s->ninstance ? 0 : strlen(s->labels[i].value);
		smax += nlen[i] + 2 * vlen[i] + 4;
		if (i < s->ninstance) {
			if (i < N_INSTANCE && instance_row) {
				c[k] = r->pre_cell[1 + i];
				set |= 1ull << k;
				need += c[k].n;
			}
		} else if (k != LC_OTHER_LABELS) {
			c[k] = (struct cell){ s->labels[i].value, vlen[i], 0 };
			set |= 1ull << k;
			need += vlen[i];
		} else if (!rc) {
			/* A label no column is named after (none today): "name=value,..." in one column. */
			struct sample one = *s;

			one.labels[0] = s->labels[i];
			one.nlabels = 1;
			if (r->other.len)
				rc = buf_add(&r->other, ",", 1);
			if (!rc)
				rc = csv_labels(&r->other, &one, 0, NULL, &count);
			c[LC_OTHER_LABELS] = (struct cell){ r->other.data, r->other.len, 0 };
			set |= 1ull << LC_OTHER_LABELS;
		}
	}
	if (!rc && buf_reserve(&r->scratch, smax))
		rc = -ENOSPC;
	if (!rc) {
		d = csv_put_series(r->scratch.data, s, s->ninstance, NULL, nlen, vlen, &q);
		c[LC_SERIES] = (struct cell){ r->scratch.data, (size_t)(d - r->scratch.data), !q };
	}
	if (rc)
		return rc;
	need += r->other.len;
	/* One reservation for the row (at worst every byte doubled and quoted), then plain stores. */
	for (int k = 0; k < LC_FIRST_LABEL; k++)
		need += c[k].n;
	need = 2 * need + (1 + CSV_FIELD_EXTRA) * LC_COUNT + 2;
	if (buf_reserve(&r->rows, need))
		return -ENOSPC;
	d = r->rows.data + r->rows.len;
	for (size_t i = 0; i < r->ncols; i++) {
		enum lcol k = r->cols[i];
		const struct cell *x = &c[k];

		if (i)
			*d++ = ',';
		if (k >= LC_FIRST_LABEL && !(set >> k & 1))
			continue;
		if (x->raw) {
			memcpy(d, x->p, x->n);
			d += x->n;
		} else {
			d = csv_put_field(d, x->p, x->n, r->formula_escape);
		}
	}
	*d++ = '\n';
	*d = '\0';
	r->rows.len = (size_t)(d - r->rows.data);
	return 0;
}

/* ---- wide -------------------------------------------------------------------- */

static size_t arena_add(struct run *r, const char *s, size_t n)
{
	size_t off = r->arena.len;

	if (buf_add(&r->arena, s, n))
		r->overflow = 1;
	return off;
}

static int arena_eq(const struct run *r, size_t off, size_t len, const char *s)
{
	return strlen(s) == len && !memcmp(r->arena.data + off, s, len);
}

static int wide_keep(const struct run *r, const struct sample *s, const char *col)
{
	if (!r->wide_filter.n)
		return 1;
	for (size_t i = 0; i < r->wide_filter.n; i++)
		if (!strcmp(r->wide_filter.v[i], s->fam->name) || !strcmp(r->wide_filter.v[i], col))
			return 1;
	return 0;
}

/* Record that row has a value in col; 1 when it had one already. A hash set of (row, col), per report. */
static int seen_add(struct run *r, size_t row, size_t col)
{
	uint64_t key = ((uint64_t)row << 32 | (uint64_t)col) + 1;
	size_t i;

	if ((r->nseen + 1) * 2 > r->seen_cap) {
		uint64_t *old = r->seen;
		size_t oldcap = r->seen_cap;

		r->seen_cap = oldcap ? oldcap * 2 : 1024;
		r->seen = xcalloc(r->seen_cap, sizeof(*r->seen));
		for (size_t k = 0; k < oldcap; k++) {
			if (!old[k])
				continue;
			for (i = (size_t)(old[k] * 0x9E3779B97F4A7C15ull >> 20) & (r->seen_cap - 1); r->seen[i];
			     i = (i + 1) & (r->seen_cap - 1))
				;
			r->seen[i] = old[k];
		}
		free(old);
	}
	for (i = (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & (r->seen_cap - 1); r->seen[i];
	     i = (i + 1) & (r->seen_cap - 1))
		if (r->seen[i] == key)
			return 1;
	r->seen[i] = key;
	r->nseen++;
	return 0;
}

/* The row of this report for (entity, key) that has no value in col yet; a new one when there is none. */
static size_t wide_row(struct run *r, const char *entity, const char *const key[N_ROWKEY], size_t col)
{
	struct wrow *row;
	size_t i;

	for (i = r->nwrows; i-- > 0;) {
		size_t k;

		row = &r->wrows[i];
		if (!arena_eq(r, row->ent_off, row->ent_len, entity))
			continue;
		for (k = 0; k < N_ROWKEY && arena_eq(r, row->key_off[k], row->key_len[k], key[k]); k++)
			;
		if (k < N_ROWKEY)
			continue;
		if (!seen_add(r, i, col))
			return i;
		break; /* the same series twice for one key: a second row keeps both */
	}
	if (r->nwrows == r->awrows) {
		r->awrows = r->awrows ? r->awrows * 2 : 16;
		r->wrows = xrealloc(r->wrows, r->awrows * sizeof(*r->wrows));
	}
	i = r->nwrows++;
	row = &r->wrows[i];
	row->ent_len = strlen(entity);
	row->ent_off = arena_add(r, entity, row->ent_len);
	for (size_t k = 0; k < N_ROWKEY; k++) {
		row->key_len[k] = strlen(key[k]);
		row->key_off[k] = arena_add(r, key[k], row->key_len[k]);
	}
	row->first = row->last = SIZE_MAX;
	seen_add(r, i, col);
	return i;
}

static int wide_sample(struct run *r, const struct sample *s)
{
	const char *key[N_ROWKEY] = { "", "", "", "", "", "" };
	char val[CSV_DOUBLE_LEN];
	size_t col, vn, c, len, ri;
	struct wrow *row;
	struct sample t = *s; /* s without the labels that are in the row's key */

	t.nlabels = s->ninstance;
	for (size_t i = s->ninstance; i < s->nlabels; i++) {
		enum lcol k = label_col(r, s->labels[i].name, &len);

		if (k == LC_PID || (k >= LC_DEVICE_TYPE && k <= LC_PCI_BUS_ID))
			key[k == LC_PID ? 0 : k - LC_DEVICE_TYPE + 1] = s->labels[i].value;
		else if (k != LC_RUNTIME_TAG)
			t.labels[t.nlabels++] = s->labels[i];
	}
	buf_reset(&r->scratch);
	if (csv_series(&r->scratch, &t, t.ninstance, NULL))
		return -ENOSPC;
	if (!wide_keep(r, s, r->scratch.data))
		return 0;
	col = csv_index_add(&r->wcols, r->scratch.data, r->scratch.len);
	ri = wide_row(r, s->entity, key, col); /* may move r->wrows */
	row = &r->wrows[ri];
	if (r->nwcells == r->awcells) {
		r->awcells = r->awcells ? r->awcells * 2 : 64;
		r->wcells = xrealloc(r->wcells, r->awcells * sizeof(*r->wcells));
	}
	vn = csv_double(s->value, val);
	c = r->nwcells++;
	r->wcells[c] = (struct wcell){ col, arena_add(r, val, vn), vn, SIZE_MAX };
	if (row->last == SIZE_MAX)
		row->first = c;
	else
		r->wcells[row->last].next = c;
	row->last = c;
	return 0;
}

static int wide_render(void *ud, const char *const *cols, size_t ncols, const char **rows, size_t *len)
{
	struct run *r = ud;
	struct buf *out = &r->rows;
	long *map = xmalloc((ncols + 1) * sizeof(*map));
	size_t *val = xmalloc((r->wcols.names.n + 1) * sizeof(*val));
	char ts[CSV_TS_LEN];
	size_t tsn = csv_timestamp(r->report_ms, r->tsf, ts);
	const char *a = r->arena.data;
	int rc = 0;

	buf_reset(out);
	for (size_t j = WC_COUNT; j < ncols; j++)
		map[j] = csv_index_find(&r->wcols, cols[j], strlen(cols[j]));
	for (size_t i = 0; !rc && i < r->nwrows; i++) {
		const struct wrow *w = &r->wrows[i];

		for (size_t k = 0; k < r->wcols.names.n; k++)
			val[k] = SIZE_MAX;
		for (size_t c = w->first; c != SIZE_MAX; c = r->wcells[c].next)
			val[r->wcells[c].col] = c;
		rc = buf_add(out, ts, tsn);
		if (!rc)
			rc = buf_add(out, ",", 1);
		if (!rc)
			rc = csv_field(out, a + r->host_off, r->host_len, r->formula_escape);
		if (!rc)
			rc = buf_add(out, ",", 1);
		if (!rc)
			rc = csv_field(out, a + w->ent_off, w->ent_len, r->formula_escape);
		for (size_t k = 0; !rc && k < N_ROWKEY; k++) {
			rc = buf_add(out, ",", 1);
			if (!rc)
				rc = csv_field(out, a + w->key_off[k], w->key_len[k], r->formula_escape);
		}
		for (size_t k = 0; !rc && k < N_INSTANCE; k++) {
			rc = buf_add(out, ",", 1);
			if (!rc)
				rc = csv_field(out, a + r->inst_off[k], r->inst_len[k], r->formula_escape);
		}
		for (size_t j = WC_COUNT; !rc && j < ncols; j++) {
			rc = buf_add(out, ",", 1);
			if (!rc && map[j] >= 0 && val[map[j]] != SIZE_MAX) {
				const struct wcell *c = &r->wcells[val[map[j]]];

				rc = buf_add(out, a + c->off, c->len);
			}
		}
		if (!rc)
			rc = buf_add(out, "\n", 1);
	}
	free(map);
	free(val);
	*rows = out->data ? out->data : "";
	*len = out->len;
	return rc;
}

static int long_render(void *ud, const char *const *cols, size_t ncols, const char **rows, size_t *len)
{
	struct run *r = ud;

	(void)cols;
	(void)ncols;
	*rows = r->rows.data ? r->rows.data : "";
	*len = r->rows.len;
	return 0;
}

/* ---- the mapping's callbacks ---------------------------------------------------- */

static void on_sample(const struct sample *s, void *ud);

/* A histogram family's three row families (name_bucket, name_sum, name_count: counters), made on first use. */
static const struct family *hist_fams(struct run *r, const struct family *base)
{
	static const char *const suffix[3] = { "_bucket", "_sum", "_count" };
	struct hist_fams *h;

	for (size_t i = 0; i < r->nhf; i++)
		if (r->hf[i].base == base)
			return r->hf[i].f;
	r->hf = xrealloc(r->hf, (r->nhf + 1) * sizeof(*r->hf));
	h = &r->hf[r->nhf++];
	h->base = base;
	for (int k = 0; k < 3; k++) {
		h->name[k] = xasprintf("%s%s", base->name, suffix[k]);
		h->f[k] = (struct family){ h->name[k], base->help, METRIC_COUNTER, k == 1 ? base->unit : "count" };
	}
	return h->f;
}

/*
 * A histogram sample as the rows of Prometheus' series of it: name_bucket
 * with le (as accel-prom writes it) for each bound and +Inf, cumulative
 * over the bounds, then name_sum and name_count; the period's increments.
 */
static void hist_rows(struct run *r, const struct sample *s)
{
	const struct family *f = hist_fams(r, s->fam);
	const struct sample_hist *h = s->hist;
	struct sample t = *s;
	char le[32];
	double cum = 0;

	t.hist = NULL;
	for (size_t i = 0; i <= h->n + 2; i++) {
		t.nlabels = s->nlabels;
		if (i <= h->n) {
			cum += h->counts[i];
			if (i < h->n)
				sample_le_text(h->le[i], le);
			if (t.nlabels < SAMPLE_MAX_LABELS)
				t.labels[t.nlabels++] = (struct label){ "le", i < h->n ? le : "+Inf" };
		}
		t.fam = &f[i <= h->n ? 0 : i == h->n + 1 ? 1 : 2];
		t.value = i <= h->n ? cum : i == h->n + 1 ? h->sum : h->count;
		on_sample(&t, r);
	}
}

static void on_sample(const struct sample *s, void *ud)
{
	struct run *r = ud;

	if (r->overflow)
		return;
	if (s->hist) {
		hist_rows(r, s);
		return;
	}
	if (!r->nrows) {
		/* The first sample of a report is instance_info, stamped with the report's time. */
		r->report_ms = s->ts_ms;
		r->host = *s->host ? s->host : r->host_default;
		for (size_t i = 0; i < N_INSTANCE && i < s->ninstance; i++)
			r->inst[i] = s->labels[i].value;
		if (!r->wide)
			long_report_cells(r, s);
		if (r->wide) {
			r->host_len = strlen(r->host);
			r->host_off = arena_add(r, r->host, r->host_len);
			for (size_t i = 0; i < N_INSTANCE; i++) {
				r->inst_len[i] = i < s->ninstance ? strlen(r->inst[i]) : 0;
				r->inst_off[i] = arena_add(r, i < s->ninstance ? r->inst[i] : "", r->inst_len[i]);
			}
		}
	}
	if (r->wide ? wide_sample(r, s) : long_row(r, s))
		r->overflow = 1;
	else
		r->nrows++;
}

static void on_group_error(const char *group, const char *entity, const char *error, void *ud)
{
	struct run *r = ud;

	log_info("csv: %s: %s (%s): %s; no rows", r->where, group, entity, error);
}

static void on_bad_value(const char *path, const char *why, void *ud)
{
	struct run *r = ud;

	r->bad_values++;
	log_warn("csv: %s: %s: %s; skipped", r->where, path, why);
}

static int64_t now_ms(struct run *r)
{
	int64_t t;

	if (!r->fake)
		return clock_real_ns() / NS_PER_MS;
	t = r->fake_now;
	r->fake_now += r->fake_step;
	return t;
}

/* Map one report and append its rows. 0, or a csv_out_write() error. */
static int do_report(struct run *r, struct csv_out *out, json_t *report)
{
	struct map_cb cb = { on_sample, on_group_error, on_bad_value, r };
	struct csv_batch b;
	int rc;

	r->nrows = 0;
	r->overflow = 0;
	buf_reset(&r->rows);
	buf_reset(&r->arena);
	csv_index_clear(&r->wcols);
	r->nwrows = r->nwcells = 0;
	if (r->nseen)
		memset(r->seen, 0, r->seen_cap * sizeof(*r->seen));
	r->nseen = 0;
	r->report_ms = now_ms(r);
	mapper_report(r->map, report, r->report_ms, &cb);
	if (r->overflow) {
		r->dropped++;
		log_err("csv: %s: the report makes more than %llu bytes of CSV; skipped", r->where,
			(unsigned long long)ROWS_MAX);
		return 0;
	}
	memset(&b, 0, sizeof(b));
	b.report_ms = r->report_ms;
	b.where = r->where;
	b.ud = r;
	if (r->wide) {
		size_t n = WC_COUNT + r->wcols.names.n;

		if (n > r->aschema) {
			r->aschema = n * 2;
			r->schema = xrealloc(r->schema, r->aschema * sizeof(*r->schema));
		}
		for (size_t i = 0; i < WC_COUNT; i++)
			r->schema[i] = i == WC_TIMESTAMP ? csv_ts_columns[r->tsf] : wide_names[i];
		for (size_t i = 0; i < r->wcols.names.n; i++)
			r->schema[WC_COUNT + i] = r->wcols.names.v[i];
		b.schema = (struct csv_schema){ r->schema, n, WC_COUNT, 1 };
		b.render = wide_render;
		b.nrows = r->nwrows;
	} else {
		b.schema = (struct csv_schema){ r->schema, r->ncols, r->ncols, 0 };
		b.render = long_render;
		b.nrows = r->nrows;
	}
	if (!b.nrows)
		return 0;
	rc = csv_out_write(out, &b);
	return rc;
}

/* ---- jansson's memory ----------------------------------------------------------- */

/*
 * Parsing one report line makes thousands of small jansson allocations
 * that all die together when the report is released. Under accel-csv they
 * come from a per-report arena (json_set_alloc_funcs): a pointer bump each,
 * no free, and the whole arena reset after the report. Nothing jansson
 * allocates outlives its report in this program. An ASan build keeps
 * malloc so that misuse of JSON memory is still caught.
 */
#define ARENA_MIN (1u << 20)  /* bytes kept between reports */
#define ARENA_MAX (64u << 20) /* the most kept between reports */

struct spill {
	struct spill *next;
};

/*
 * File scope because jansson's allocator hooks take no context pointer:
 * like a signal handler, ja_malloc can reach only what file scope holds.
 * Without the arena accel-csv spends about 5 % more CPU on an
 * accel-monitor stream (bench/csv_bench.c's accel case).
 */
static struct {
	char *base;          /* the main block */
	size_t used, size;
	struct spill *spill; /* blocks taken when the main one was full, freed at reset */
	size_t spilled;      /* their bytes */
} ja;

static void *ja_malloc(size_t n)
{
	struct spill *s;

	n = (n + 15) & ~(size_t)15;
	if (ja.used + n <= ja.size) {
		void *p = ja.base + ja.used;

		ja.used += n;
		return p;
	}
	s = malloc(sizeof(*s) + 16 + n);
	if (!s)
		return NULL; /* jansson reports it */
	s->next = ja.spill;
	ja.spill = s;
	ja.spilled += n;
	return (char *)s + ((sizeof(*s) + 15) & ~(size_t)15);
}

static void ja_free(void *p)
{
	(void)p; /* everything goes at ja_reset() */
}

/* Drop every allocation; size the main block for the largest report seen (within bounds). */
static void ja_reset(void)
{
	size_t want = ja.used + ja.spilled;

	while (ja.spill) {
		struct spill *s = ja.spill;

		ja.spill = s->next;
		free(s);
	}
	if (want > ja.size && ja.size < ARENA_MAX) {
		want = want < ARENA_MAX ? want : ARENA_MAX;
		free(ja.base);
		ja.base = xmalloc(want);
		ja.size = want;
	}
	ja.spilled = 0;
	ja.used = 0;
}

#ifdef __SANITIZE_ADDRESS__
#define ARENA_ON 0
#else
#define ARENA_ON 1
#endif

static void ja_init(void)
{
	if (!ARENA_ON)
		return;
	ja.base = xmalloc(ARENA_MIN);
	ja.size = ARENA_MIN;
	json_set_alloc_funcs(ja_malloc, ja_free);
}

static void ja_done(void)
{
	ja_reset();
	free(ja.base);
	ja.base = NULL;
	ja.size = 0;
}

/* ---- command line ---------------------------------------------------------------- */

/* Release what r holds (zeroed, or set up by main). */
static void run_free(struct run *r)
{
	buf_free(&r->rows);
	buf_free(&r->arena);
	buf_free(&r->scratch);
	buf_free(&r->other);
	buf_free(&r->pre);
	csv_index_free(&r->wcols);
	csv_strv_free(&r->wide_filter);
	free(r->wrows);
	free(r->seen);
	free(r->wcells);
	free(r->schema);
	for (size_t i = 0; i < r->nhf; i++)
		for (int k = 0; k < 3; k++)
			free(r->hf[i].name[k]);
	free(r->hf);
	mapper_free(r->map);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: accel-csv [OPTION]...\n"
		"Read the report stream (accel-monitor, or neuron-monitor 2.x/2020 output) on\n"
		"stdin and write CSV (see docs/accel-csv.md).\n"
		"\n"
		"  -o, --output FILE       append to FILE (default: stdout); a new or empty file\n"
		"                          gets the header, an existing one must have the same\n"
		"      --format long|wide  long (default): one row per sample, fixed columns;\n"
		"                          wide: one row per report and entity, a column per series\n"
		"      --columns LIST      long: the columns to write, in this order (comma-separated);\n"
		"                          wide: the series to keep (family or column names)\n"
		"      --timestamp-format iso8601|unix|unix_ms\n"
		"                          the first column: timestamp (UTC ISO 8601, default),\n"
		"                          timestamp_unix (seconds) or timestamp_unix_ms\n"
		"      --rotate daily|SIZE one file per UTC day (FILE's name + .YYYY-MM-DD), or a\n"
		"                          next file (.1, .2, ...) before one grows past SIZE bytes\n"
		"                          (K, M, G suffixes); never splits a report\n"
		"      --fsync             fsync each report's rows to disk before reading on\n"
		"      --no-formula-escape write text cells that start with = + - @ TAB CR as they\n"
		"                          are (default: with a leading ', so no spreadsheet runs them)\n"
		"      --host NAME         the host column when a report names none\n"
		"                          (neuron-monitor's; default: this machine's hostname)\n"
		"  -v, --verbose[=N]       log level: 0 silent, 1 errors and warnings (default),\n"
		"                          2 info, 3 debug, 4 everything; -v, -vv raise it\n"
		"      --version           print the version and exit\n"
		"  -h, --help              print this help and exit\n"
		"\n"
		"Bad input lines are skipped with their line number on stderr. A write error\n"
		"stops the program with the file name and the rows written.\n"
		"\n"
		"Exit codes: 0 ok, 1 read or write error, 2 usage error, 3 the output file's\n"
		"header does not match, or it does not end in a whole row that can be repaired\n"
		"(nothing written to it).\n"
		"\n"
		"Cron, one snapshot a minute:\n"
		"  * * * * * accel-monitor --once | accel-csv -o /var/log/accel/accel.csv --rotate daily\n");
}

static int parse_columns(struct run *r, const char *list)
{
	char *copy = xstrdup(list), *save = NULL, *tok;
	int rc = 0;

	r->ncols = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (r->wide) {
			int known = strchr(tok, '{') != NULL || map_family(tok);

			if (!known) {
				fprintf(stderr, "accel-csv: --columns: \"%s\" is not a metric family; known:", tok);
				for (size_t i = 0; map_family_at(i); i++)
					fprintf(stderr, " %s", map_family_at(i)->name);
				fprintf(stderr, " (or a whole column name such as \"family{label=value}\")\n");
				rc = -1;
				break;
			}
			csv_strv_push(&r->wide_filter, tok, strlen(tok));
			continue;
		}
		int k;

		for (k = 0; k < LC_COUNT; k++)
			if (!strcmp(tok, long_names[k]) || (k == LC_TIMESTAMP && !strcmp(tok, csv_ts_columns[r->tsf])))
				break;
		if (k == LC_COUNT) {
			fprintf(stderr, "accel-csv: --columns: unknown column \"%s\"; known:", tok);
			for (k = 0; k < LC_COUNT; k++)
				fprintf(stderr, "%s%s", k ? "," : " ", long_names[k]);
			fputc('\n', stderr);
			rc = -1;
			break;
		}
		for (size_t i = 0; i < r->ncols; i++)
			if (r->cols[i] == (enum lcol)k) {
				fprintf(stderr, "accel-csv: --columns: \"%s\" is listed twice\n", tok);
				rc = -1;
			}
		if (rc)
			break;
		r->cols[r->ncols++] = (enum lcol)k;
	}
	if (!rc && !r->wide && !r->ncols) {
		fprintf(stderr, "accel-csv: --columns: no column named\n");
		rc = -1;
	}
	free(copy);
	return rc;
}

struct opts {
	struct csv_out_cfg out;
	const char *output;
	int format, tsf, fsync, no_formula_escape;
	const char *columns;
	const char *host;
};

/* --rotate daily|SIZE */
static int parse_rotate(const char *arg, void *dst, char *err, size_t errsz)
{
	struct csv_out_cfg *out = dst;

	if (!strcmp(arg, "daily")) {
		out->rotate = CSV_ROTATE_DAILY;
	} else if (csv_parse_size(arg, &out->max_bytes) == 0) {
		out->rotate = CSV_ROTATE_SIZE;
	} else {
		snprintf(err, errsz, "expected daily or a size such as 100M, got \"%s\"", arg);
		return -1;
	}
	return 0;
}

/* What the options say together, once all are read. 0, or -1 after saying what is wrong. */
static int check_args(struct run *r, struct opts *o)
{
	o->out.path = o->output && strcmp(o->output, "-") ? o->output : NULL;
	o->out.fsync = o->fsync;
	r->wide = o->format == 1;
	r->tsf = (enum csv_ts_format)o->tsf;
	if (o->out.rotate != CSV_ROTATE_NONE && !o->out.path) {
		fprintf(stderr, "accel-csv: --rotate needs -o FILE\n");
		return -1;
	}
	o->out.continuation = r->wide;
	if (o->columns && parse_columns(r, o->columns))
		return -1;
	if (!o->columns)
		for (r->ncols = 0; r->ncols < LC_COUNT; r->ncols++)
			r->cols[r->ncols] = (enum lcol)r->ncols;
	return 0;
}

/* ACCEL_CSV_NOW (unix ms or ISO 8601) and ACCEL_CSV_NOW_STEP (a duration added per report): a clock for tests. */
static int fake_clock(struct run *r)
{
	const char *now = getenv("ACCEL_CSV_NOW"), *step = getenv("ACCEL_CSV_NOW_STEP"), *why;
	int64_t ns;
	char *end;

	if (!now || !*now)
		return 0;
	errno = 0;
	r->fake_now = strtoll(now, &end, 10);
	if (*end || errno) {
		if (iso8601_parse(now, &ns)) {
			fprintf(stderr, "accel-csv: ACCEL_CSV_NOW: expected unix milliseconds or ISO 8601, got \"%s\"\n",
				now);
			return -1;
		}
		r->fake_now = ns / NS_PER_MS;
	}
	if (step && *step && duration_parse(step, &r->fake_step, &why)) {
		fprintf(stderr, "accel-csv: ACCEL_CSV_NOW_STEP: %s\n", why);
		return -1;
	}
	r->fake = 1;
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const formats[] = { "long", "wide", NULL };
	static const char *const ts_formats[CSV_TS_COUNT + 1] = { "iso8601", "unix", "unix_ms", NULL };
	struct run r;
	struct opts o;
	struct sink_input in;
	struct csv_out *out = NULL;
	int rc, n;
	const struct sink_opt table[] = {
		{ .name = "output", .short_name = 'o', .arg = SINK_STR, .dst = &o.output },
		{ .name = "format", .arg = SINK_CHOICE, .dst = &o.format, .choices = formats },
		{ .name = "columns", .arg = SINK_STR, .dst = &o.columns },
		{ .name = "timestamp-format", .arg = SINK_CHOICE, .dst = &o.tsf, .choices = ts_formats },
		{ .name = "rotate", .arg = SINK_FN, .dst = &o.out, .parse = parse_rotate },
		{ .name = "fsync", .arg = SINK_FLAG, .dst = &o.fsync },
		{ .name = "no-formula-escape", .arg = SINK_FLAG, .dst = &o.no_formula_escape },
		{ .name = "host", .arg = SINK_STR, .dst = &o.host },
		{ .name = NULL },
	};
	const struct sink_def def = { "accel-csv", usage, table };

	_Static_assert(CSV_TS_COUNT == 3, "ts_formats lists csv_ts_names");
	memset(&r, 0, sizeof(r));
	memset(&o, 0, sizeof(o));
	if ((rc = sink_start(&def, argc, argv)) != SINK_RUN)
		return rc;
	if (check_args(&r, &o) || fake_clock(&r)) {
		run_free(&r);
		return EXIT_USAGE;
	}
	r.formula_escape = !o.no_formula_escape;
	if (!o.out.path && (rc = sink_need_stdout("accel-csv"))) {
		run_free(&r);
		return rc;
	}
	rc = EXIT_OK;
	if (o.host)
		snprintf(r.host_default, sizeof(r.host_default), "%s", o.host);
	else if (gethostname(r.host_default, sizeof(r.host_default) - 1))
		r.host_default[0] = '\0';
	if (!r.wide) {
		r.schema = xmalloc(LC_COUNT * sizeof(*r.schema));
		for (size_t i = 0; i < r.ncols; i++)
			r.schema[i] = r.cols[i] == LC_TIMESTAMP ? csv_ts_columns[r.tsf] : long_names[r.cols[i]];
	}
	buf_init(&r.rows, ROWS_MAX);
	buf_init(&r.arena, ROWS_MAX);
	buf_init(&r.scratch, 1u << 20);
	buf_init(&r.other, 1u << 20);
	buf_init(&r.pre, 1u << 20);
	r.map = mapper_new();
	if (csv_out_open(&out, &o.out)) {
		run_free(&r);
		return EXIT_SYSTEM;
	}

	ja_init();
	sink_input_init(&in, "csv", STDIN_FILENO, 0);
	r.where = in.where;
	for (;;) {
		json_t *report;

		ja_reset(); /* the previous report is released */
		n = sink_input_next(&in, &report);
		if (n == 0)
			break;
		if (n < 0) {
			log_err("csv: %s; %llu rows written", in.err, (unsigned long long)csv_out_rows(out));
			rc = EXIT_SYSTEM;
			break;
		}
		n = do_report(&r, out, report);
		json_decref(report);
		if (n == -EPIPE)
			break; /* the reader of stdout is gone: stop quietly */
		if (n) {
			rc = n == -EBADMSG ? EXIT_CONFIG : EXIT_SYSTEM;
			break;
		}
	}
	if (in.bad_lines || r.bad_values)
		log_info("csv: %llu bad lines and %llu bad values skipped", (unsigned long long)in.bad_lines,
			 (unsigned long long)r.bad_values);
	if (csv_out_close(out) && rc == EXIT_OK)
		rc = EXIT_SYSTEM;
	sink_input_free(&in);
	ja_done();
	run_free(&r);
	return rc;
}
