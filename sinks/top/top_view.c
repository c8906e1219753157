/* SPDX-License-Identifier: MIT */
/* accel-top's frame layout as text cells; see top_view.h. */
#include "top_view.h"
#include "../../common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const top_sort_names[SORT_COUNT] = { "devmem", "cpu", "rss", "pid", "name", "pod", "req/s", "p99" };

#define HEADER_ROWS 2
#define MIN_BAR 8
#define MAX_BAR 40

/* ---- canvas ---------------------------------------------------------------- */

void top_canvas_init(struct top_canvas *c, int w)
{
	memset(c, 0, sizeof(*c));
	c->w = w < 20 ? 20 : w;
}

void top_canvas_free(struct top_canvas *c)
{
	free(c->cells);
	memset(c, 0, sizeof(*c));
}

void top_canvas_clear(struct top_canvas *c)
{
	c->h = 0;
}

/* Make rows up to y exist, blank. */
static void grow(struct top_canvas *c, int y)
{
	if (y < c->h)
		return;
	if (y >= c->arows) {
		int n = c->arows ? c->arows : 32;

		while (n <= y)
			n *= 2;
		c->cells = xrealloc(c->cells, (size_t)n * (size_t)c->w * sizeof(*c->cells));
		c->arows = n;
	}
	memset(&c->cells[(size_t)c->h * (size_t)c->w], 0, (size_t)(y + 1 - c->h) * (size_t)c->w * sizeof(*c->cells));
	c->h = y + 1;
}

/*
 * Whether a terminal would act on code point cp or not show it: the C0 and
 * C1 controls and DEL (ESC, and CSI U+009B and OSC U+009D, start sequences
 * that move the cursor, recolour, retitle or reach the clipboard), and the
 * invisible format characters (Unicode's Cf, Zl, Zp): bidi embeddings,
 * overrides and isolates that reorder what follows them, zero-width
 * characters that hide or join text.
 */
static int terminal_control(uint32_t cp)
{
	static const uint32_t ranges[][2] = {
		{ 0x0000, 0x001F },   { 0x007F, 0x009F },   { 0x00AD, 0x00AD },   { 0x0600, 0x0605 },
		{ 0x061C, 0x061C },   { 0x06DD, 0x06DD },   { 0x070F, 0x070F },   { 0x0890, 0x0891 },
		{ 0x08E2, 0x08E2 },   { 0x180E, 0x180E },   { 0x200B, 0x200F },   { 0x2028, 0x202E },
		{ 0x2060, 0x2064 },   { 0x2066, 0x206F },   { 0xFEFF, 0xFEFF },   { 0xFFF9, 0xFFFB },
		{ 0x110BD, 0x110BD }, { 0x110CD, 0x110CD }, { 0x13430, 0x1343F }, { 0x1BCA0, 0x1BCA3 },
		{ 0x1D173, 0x1D17A }, { 0xE0001, 0xE0001 }, { 0xE0020, 0xE007F },
	};

	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]) && cp >= ranges[i][0]; i++)
		if (cp <= ranges[i][1])
			return 1;
	return 0;
}

int top_canvas_put(struct top_canvas *c, int y, int x, const char *s, int attr)
{
	if (y < 0 || x < 0)
		return x;
	grow(c, y);
	while (*s && x < c->w) {
		struct top_cell *cell = &c->cells[(size_t)y * (size_t)c->w + (size_t)x];
		uint32_t cp;
		size_t n = utf8_char(s, &cp);

		/* Controls, invisible format characters and bytes that are not UTF-8 (each) from the input. */
		if (n == 0 || terminal_control(cp)) {
			cell->ch[0] = '?';
			cell->len = 1;
			s += n ? n : 1;
		} else {
			memcpy(cell->ch, s, n);
			cell->len = (uint8_t)n;
			s += n;
		}
		cell->attr = (uint8_t)attr;
		x++;
	}
	return x;
}

void top_canvas_print(const struct top_canvas *c, FILE *f)
{
	for (int y = 0; y < c->h; y++) {
		const struct top_cell *row = &c->cells[(size_t)y * (size_t)c->w];
		int end = c->w;

		while (end > 0 && (row[end - 1].len == 0 || (row[end - 1].len == 1 && row[end - 1].ch[0] == ' ')))
			end--;
		for (int x = 0; x < end; x++) {
			if (row[x].len)
				fwrite(row[x].ch, 1, row[x].len, f);
			else
				fputc(' ', f);
		}
		fputc('\n', f);
	}
}

/* ---- formatting ------------------------------------------------------------ */

/* 1536 -> "1.5K"; binary units; "-" when unknown. */
static void fmt_bytes(double v, char *dst, size_t size)
{
	static const char units[] = "BKMGTPE";
	int u = 0;

	if (isnan(v) || v < 0) {
		snprintf(dst, size, "-");
		return;
	}
	while (v >= 1024 && u < 6) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(dst, size, "%.0fB", v);
	else
		snprintf(dst, size, v < 100 ? "%.1f%c" : "%.0f%c", v, units[u]);
}

/* A ratio as a whole percent, "-" when unknown. */
static void fmt_pct(double r, char *dst, size_t size)
{
	if (isnan(r))
		snprintf(dst, size, "-");
	else
		snprintf(dst, size, "%.0f%%", r * 100);
}

/* Seconds as "3.49ms", "1.20s"; "-" when unknown. */
static void fmt_secs(double s, char *dst, size_t size)
{
	if (isnan(s))
		snprintf(dst, size, "-");
	else if (s < 1e-3)
		snprintf(dst, size, "%.0fus", s * 1e6);
	else if (s < 1)
		snprintf(dst, size, "%.2fms", s * 1e3);
	else
		snprintf(dst, size, "%.2fs", s);
}

static void fmt_num(double v, char *dst, size_t size)
{
	if (isnan(v))
		snprintf(dst, size, "-");
	else if (v < 10 && v != floor(v))
		snprintf(dst, size, "%.1f", v);
	else
		snprintf(dst, size, "%.0f", v);
}

/* "[|||||     ]": w cells, the fill rounded to the nearest cell; the attribute by level. */
static int bar(struct top_canvas *c, int y, int x, int w, double r)
{
	int inner = w - 2, fill;
	char *s;

	if (inner < 1)
		return x;
	fill = isnan(r) ? 0 : (int)lround((r < 0 ? 0 : r > 1 ? 1 : r) * inner);
	s = xmalloc((size_t)inner + 1);
	memset(s, '|', (size_t)fill);
	memset(s + fill, ' ', (size_t)(inner - fill));
	s[inner] = '\0';
	top_canvas_put(c, y, x, "[", TA_DIM);
	top_canvas_put(c, y, x + 1, s, r >= 0.9 ? TA_BAD : r >= 0.75 ? TA_WARN : TA_BAR);
	top_canvas_put(c, y, x + 1 + inner, "]", TA_DIM);
	free(s);
	return x + w;
}

/*
 * A sparkline of w cells over the window ending at end_ms: each cell the
 * highest value of the points in its slice of time, blank where none.
 */
static void spark(struct top_canvas *c, int y, int x, int w, const struct top_dev *d, int mem,
		  int64_t end_ms, int64_t window_ms, int utf8)
{
	static const char *const blocks[8] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	static const char ascii[] = "._-=+*#@";
	float *hi;

	if (w < 1 || window_ms <= 0)
		return;
	hi = xmalloc((size_t)w * sizeof(*hi));
	for (int i = 0; i < w; i++)
		hi[i] = -1;
	for (size_t i = 0; i < d->hist_n; i++) {
		const struct top_hist *h = top_dev_hist(d, i);
		float v = mem ? h->mem : h->util;
		int64_t off = h->ts_ms - (end_ms - window_ms);
		int k;

		if (isnan(v) || off < 0)
			continue;
		k = (int)(off * w / window_ms);
		if (k >= w)
			k = w - 1;
		if (v > hi[k])
			hi[k] = v;
	}
	for (int i = 0; i < w; i++) {
		int lvl;
		char a[2] = { 0, 0 };

		if (hi[i] < 0)
			continue;
		lvl = (int)(hi[i] * 8);
		lvl = lvl < 0 ? 0 : lvl > 7 ? 7 : lvl;
		a[0] = ascii[lvl];
		top_canvas_put(c, y, x + i, utf8 ? blocks[lvl] : a, TA_BAR);
	}
	free(hi);
}

/* ---- the view -------------------------------------------------------------- */

void top_view_init(struct top_view *v)
{
	memset(v, 0, sizeof(*v));
	v->history_ms = 5 * 60 * 1000;
	v->detail = -1;
}

static int64_t stale_limit_ms(const struct top_model *m, const struct top_view *v)
{
	int64_t l = (int64_t)(3000.0 * m->max_period);

	if (v->stale_ms)
		return v->stale_ms;
	return l < 5000 ? 5000 : l;
}

int top_view_stale(const struct top_model *m, const struct top_view *v)
{
	return m->reports && (v->now_mono_ns - m->last_mono_ns) / 1000000 > stale_limit_ms(m, v);
}

static void header(const struct top_model *m, const struct top_view *v, struct top_canvas *c)
{
	char t[256], a[32], b[32];
	int x, half, bw;

	x = top_canvas_put(c, 0, 0, "accel-top", TA_BOLD);
	snprintf(t, sizeof(t), "  %s%s%s%s%s", *m->host ? m->host : "-", *m->instance_type ? "  " : "",
		 m->instance_type, *m->instance_id ? "  " : "", m->instance_id);
	top_canvas_put(c, 0, x, t, TA_NONE);
	if (!m->reports) {
		snprintf(t, sizeof(t), "waiting for the first report");
	} else {
		int64_t age = (v->now_mono_ns - m->last_mono_ns) / 1000000000;
		char when[32] = "";

		if (m->format == FORMAT_ACCEL) {
			time_t s = (time_t)(m->last_ts_ms / 1000);
			struct tm tm;

			gmtime_r(&s, &tm);
			strftime(when, sizeof(when), "report %H:%M:%SZ  ", &tm);
		}
		snprintf(t, sizeof(t), "%s%s%sage %llds", v->paused ? "PAUSED  " : "", top_view_stale(m, v) ? "STALE  " : "",
			 when, (long long)(age < 0 ? 0 : age));
	}
	x = c->w - (int)strlen(t) - 1 < 0 ? 0 : c->w - (int)strlen(t) - 1;
	if (x > 0)
		top_canvas_put(c, 0, x - 1, " ", TA_NONE);
	top_canvas_put(c, 0, x, t,
		       top_view_stale(m, v) ? TA_BAD : v->paused ? TA_WARN : TA_NONE);

	half = c->w / 2;
	bw = half - 4 - 16;
	bw = bw < MIN_BAR ? MIN_BAR : bw;
	top_canvas_put(c, 1, 0, "CPU", TA_BOLD);
	x = bar(c, 1, 4, bw, m->cpu);
	fmt_pct(m->cpu, a, sizeof(a));
	fmt_num(m->vcpus, b, sizeof(b));
	snprintf(t, sizeof(t), " %s of %s", a, b);
	top_canvas_put(c, 1, x, t, TA_NONE);
	top_canvas_put(c, 1, half, "MEM", TA_BOLD);
	x = bar(c, 1, half + 4, bw, m->mem_total > 0 ? m->mem_used / m->mem_total : NAN);
	fmt_bytes(m->mem_used, a, sizeof(a));
	fmt_bytes(m->mem_total, b, sizeof(b));
	snprintf(t, sizeof(t), " %s/%s", a, b);
	top_canvas_put(c, 1, x, t, TA_NONE);
}

/* One device: name and facts, then utilization and memory with their history. */
static int device_panel(const struct top_model *m, const struct top_view *v, const struct top_dev *d,
			struct top_canvas *c, int y)
{
	char t[256], a[32], b[32], info[200];
	size_t n = 0;
	int half = (c->w - 1) / 2, bw, sw, x;

	info[0] = '\0';
	if (!isnan(d->temp))
		n += (size_t)snprintf(info + n, sizeof(info) - n, "  %.0f%s", d->temp, v->utf8 ? "°C" : "C");
	if (!isnan(d->power) && n < sizeof(info))
		n += (size_t)snprintf(info + n, sizeof(info) - n, isnan(d->power_limit) ? "  %.0fW" : "  %.0f/%.0fW",
				      d->power, d->power_limit);
	if (!isnan(d->fan) && n < sizeof(info))
		n += (size_t)snprintf(info + n, sizeof(info) - n, "  fan %.0f%%", d->fan * 100);
	if (!isnan(d->clock_core) && n < sizeof(info))
		n += (size_t)snprintf(info + n, sizeof(info) - n, "  core %.0fMHz", d->clock_core / 1e6);
	if (!isnan(d->clock_mem) && n < sizeof(info))
		n += (size_t)snprintf(info + n, sizeof(info) - n, "  mem %.0fMHz", d->clock_mem / 1e6);
	if (d->mig && n < sizeof(info))
		n += (size_t)snprintf(info + n, sizeof(info) - n, "  MIG %d", d->mig);
	if (n < sizeof(info))
		snprintf(info + n, sizeof(info) - n, "  err %.0f", d->errors);
	snprintf(t, sizeof(t), "%s %s  %s", d->type, d->key, *d->model ? d->model : "");
	if (d->nowners > 1)
		snprintf(t + strlen(t), sizeof(t) - strlen(t), "  [%s +%d]", d->owner, d->nowners - 1);
	else if (d->nowners)
		snprintf(t + strlen(t), sizeof(t) - strlen(t), "  [%s]", d->owner);
	top_canvas_put(c, y, 0, t, TA_BOLD);
	/* the facts win over the model's name when the line is short: they overwrite its end */
	x = (int)(strlen(d->type) + strlen(d->key) + 1);
	n = strlen(info);
	if (n > 1) {
		for (int i = c->w - (int)n; i < c->w; i++)
			if (i >= x)
				top_canvas_put(c, y, i, " ", TA_NONE);
		top_canvas_put(c, y, (int)n < c->w - x ? c->w - (int)n : x, info, d->errors > 0 ? TA_WARN : TA_NONE);
	}

	bw = half / 3;
	bw = bw < MIN_BAR ? MIN_BAR : bw > MAX_BAR ? MAX_BAR : bw;
	sw = half - 6 - bw - 13;
	top_canvas_put(c, y + 1, 1, "util", TA_NONE);
	x = bar(c, y + 1, 6, bw, d->util);
	fmt_pct(d->util, a, sizeof(a));
	snprintf(t, sizeof(t), " %s", a);
	top_canvas_put(c, y + 1, x, t, TA_NONE);
	spark(c, y + 1, x + 13, sw, d, 0, m->last_ts_ms, v->history_ms, v->utf8);
	top_canvas_put(c, y + 1, half + 1, "mem", TA_NONE);
	x = bar(c, y + 1, half + 6, bw, d->mem_total > 0 ? d->mem_used / d->mem_total : NAN);
	fmt_bytes(d->mem_used, a, sizeof(a));
	fmt_bytes(d->mem_total, b, sizeof(b));
	snprintf(t, sizeof(t), " %s/%s", a, b);
	top_canvas_put(c, y + 1, x, t, TA_NONE);
	spark(c, y + 1, x + 13, sw, d, 1, m->last_ts_ms, v->history_ms, v->utf8);
	return y + 2;
}

/*
 * A MIG instance under its GPU's panel: its key and profile, its SM
 * activity where GPM gives it, and its memory in the GPU's mem column.
 */
static int mig_line(const struct top_view *v, const struct top_dev *d, struct top_canvas *c, int y)
{
	char t[128], a[32], b[32];
	int half = (c->w - 1) / 2, bw, x;

	(void)v;
	snprintf(t, sizeof(t), "  MIG %s  %s", d->key, *d->profile ? d->profile : "-");
	x = top_canvas_put(c, y, 0, t, TA_NONE);
	if (!isnan(d->activity)) {
		fmt_pct(d->activity, a, sizeof(a));
		snprintf(t, sizeof(t), "  sm %s", a);
		top_canvas_put(c, y, x, t, TA_NONE);
	}
	bw = half / 3;
	bw = bw < MIN_BAR ? MIN_BAR : bw > MAX_BAR ? MAX_BAR : bw;
	top_canvas_put(c, y, half + 1, "mem", TA_NONE);
	x = bar(c, y, half + 6, bw, d->mem_total > 0 ? d->mem_used / d->mem_total : NAN);
	fmt_bytes(d->mem_used, a, sizeof(a));
	fmt_bytes(d->mem_total, b, sizeof(b));
	snprintf(t, sizeof(t), " %s/%s", a, b);
	top_canvas_put(c, y, x, t, TA_NONE);
	return y + 1;
}

/* The GPU a MIG instance belongs to (same kind, the key before the first '/'), or -1. */
static int mig_parent(const struct top_model *m, const struct top_dev *d)
{
	char key[sizeof(d->key)];
	const struct top_dev *g;

	snprintf(key, sizeof(key), "%.*s", (int)strcspn(d->key, "/"), d->key);
	g = top_model_dev(m, d->type, key);
	return g && !g->is_mig ? (int)(g - m->devs) : -1;
}

/* Whether a MIG instance is in the current layout: seen within three periods (at least 3 s) of the last report. */
static int mig_current(const struct top_model *m, const struct top_dev *d)
{
	int64_t keep_ms = (int64_t)(3000.0 * (m->max_period > 1 ? m->max_period : 1));

	return m->last_ts_ms - d->seen_ms <= keep_ms;
}

/* The device panels, each GPU's current MIG instances under it; a MIG instance without its GPU gets a panel. */
static int devices(const struct top_model *m, const struct top_view *v, struct top_canvas *c, int y)
{
	char t[64];
	size_t ngpu = 0, nmig = 0;
	/* Each device's parent GPU (-1: none), and each GPU's MIG instances as a chain in the devices' order. */
	int *parent = xmalloc(3 * (m->ndevs + 1) * sizeof(*parent)), *first = parent + m->ndevs + 1,
	    *next = first + m->ndevs + 1;

	for (size_t i = 0; i < m->ndevs; i++) {
		parent[i] = m->devs[i].is_mig ? mig_parent(m, &m->devs[i]) : -1;
		first[i] = -1;
		if (parent[i] < 0)
			ngpu++;
		else if (mig_current(m, &m->devs[i]))
			nmig++;
	}
	for (size_t k = m->ndevs; k-- > 0;)
		if (parent[k] >= 0) {
			next[k] = first[parent[k]];
			first[parent[k]] = (int)k;
		}
	snprintf(t, sizeof(t), nmig ? "Devices: %zu  MIG instances: %zu" : "Devices: %zu", ngpu, nmig);
	top_canvas_put(c, y++, 0, t, TA_BOLD);
	for (size_t i = 0; i < m->ndevs; i++) {
		if (parent[i] >= 0)
			continue;
		y = device_panel(m, v, &m->devs[i], c, y);
		for (int k = first[i]; k >= 0; k = next[k])
			if (mig_current(m, &m->devs[k]))
				y = mig_line(v, &m->devs[k], c, y);
	}
	free(parent);
	return y;
}

/* Whether process p passes the filter: its pid, name or one of its devices contains the text. */
static int proc_match(const struct top_model *m, const struct top_proc *p, const char *f)
{
	char t[64];

	if (!*f)
		return 1;
	snprintf(t, sizeof(t), "%ld", p->pid);
	if (strstr(t, f) || strcasestr(p->name, f) || strcasestr(p->pod, f) || strcasestr(p->ns, f) ||
	    strcasestr(p->container, f))
		return 1;
	for (size_t i = 0; i < p->nmodels; i++)
		if (strcasestr(p->models[i].model, f))
			return 1;
	for (size_t i = 0; i < p->ndevs; i++) {
		const struct top_dev *d = &m->devs[p->devs[i].dev];

		snprintf(t, sizeof(t), "%s%s", d->type, d->key);
		if (strstr(t, f))
			return 1;
	}
	return 0;
}

struct sort_ctx {
	const struct top_model *m;
	enum top_sort key;
	int reverse;
};

static double sort_value(const struct sort_ctx *ctx, const struct top_proc *p)
{
	switch (ctx->key) {
	case SORT_DEVMEM:
		return top_proc_devmem(ctx->m, p);
	case SORT_CPU:
		return p->cpu;
	case SORT_RSS:
		return p->rss;
	case SORT_RATE:
		return p->rate;
	case SORT_P99:
		return p->p99;
	default:
		return 0;
	}
}

/*
 * Largest first for amounts (unknown last), smallest first for pid and name (nameless last); pid breaks ties.
 * A qsort_r comparison: ud is the struct sort_ctx.
 */
static int proc_cmp(const void *a, const void *b, void *ud)
{
	const struct sort_ctx *ctx = ud;
	const struct top_proc *p = *(const struct top_proc *const *)a, *q = *(const struct top_proc *const *)b;
	int r = 0;

	if (ctx->key == SORT_NAME) {
		if (!*p->name != !*q->name)
			return *p->name ? -1 : 1; /* nameless rows last */
		r = strcmp(p->name, q->name);
	} else if (ctx->key == SORT_POD) {
		char x[160], y[160];

		top_proc_pod(p, x, sizeof(x));
		top_proc_pod(q, y, sizeof(y));
		if (!*x != !*y)
			return *x ? -1 : 1; /* rows in no pod or container last */
		r = strcmp(x, y);
	} else if (ctx->key != SORT_PID) {
		double x = sort_value(ctx, p), y = sort_value(ctx, q);

		if (isnan(x) != isnan(y))
			return isnan(x) ? 1 : -1;
		r = x > y ? -1 : x < y ? 1 : 0;
	}
	if (!r)
		r = p->pid < q->pid ? -1 : p->pid > q->pid;
	return ctx->reverse ? -r : r;
}

/* The process table's columns, left to right. */
enum col { C_PID, C_NAME, C_POD, C_CPU, C_RSS, C_DEVMEM, C_RATE, C_FAIL, C_P50, C_P99, C_NCOLS };

static const struct {
	const char *head;
	int w;     /* cells; C_POD: the widest value's, within POD_MIN..POD_MAX */
	int left;  /* left-aligned */
	int drop;  /* 0: kept; else dropped in this order (1 first) when the row is too wide */
} columns[C_NCOLS] = {
	[C_PID] = { "PID", 7, 0, 0 },	       [C_NAME] = { "NAME", 15, 1, 0 },	 [C_POD] = { "POD/CONTAINER", 0, 1, 5 },
	[C_CPU] = { "CPU%", 5, 0, 3 },	       [C_RSS] = { "RSS", 7, 0, 1 },	 [C_DEVMEM] = { "DEVMEM", 7, 0, 0 },
	[C_RATE] = { "REQ/s", 8, 0, 0 },       [C_FAIL] = { "FAIL", 6, 0, 2 },	 [C_P50] = { "P50", 8, 0, 4 },
	[C_P99] = { "P99", 8, 0, 0 },
};

#define POD_MIN 13
#define POD_MAX 40

/*
 * Which columns a frame w wide shows (width[i] > 0): the stats only when
 * any row has them, the pod column only when any row is in one; when the
 * row is too wide, the pod column narrows to POD_MIN, then the columns go
 * in their drop order until it fits.
 */
static void table_columns(const struct top_model *m, int w, int width[C_NCOLS])
{
	int stats = 0, pod = 0, total = -1;
	char t[160];

	for (size_t i = 0; i < m->nprocs; i++) {
		const struct top_proc *p = &m->procs[i];
		int n;

		if (!isnan(p->rate) || !isnan(p->p99) || !isnan(p->failures) || p->nmodels)
			stats = 1;
		top_proc_pod(p, t, sizeof(t));
		n = (int)strlen(t);
		if (n && n > pod)
			pod = n;
	}
	for (int i = 0; i < C_NCOLS; i++) {
		width[i] = columns[i].w;
		if (i == C_POD)
			width[i] = pod ? (pod < POD_MIN ? POD_MIN : pod > POD_MAX ? POD_MAX : pod) : 0;
		if (!stats && (i == C_RATE || i == C_FAIL || i == C_P50 || i == C_P99))
			width[i] = 0;
		if (width[i])
			total += width[i] + 1;
	}
	if (total > w && width[C_POD] > POD_MIN) { /* the pod column narrows (its values cut) before any goes */
		int cut = total - w < width[C_POD] - POD_MIN ? total - w : width[C_POD] - POD_MIN;

		width[C_POD] -= cut;
		total -= cut;
	}
	for (int d = 1; total > w && d <= 5; d++)
		for (int i = 0; i < C_NCOLS; i++)
			if (columns[i].drop == d && width[i]) {
				total -= width[i] + 1;
				width[i] = 0;
			}
}

/* Append cell text s to row t (k bytes so far) in column i's width; returns the new length. */
static size_t cell(char *t, size_t size, size_t k, const int width[C_NCOLS], int i, const char *s)
{
	if (!width[i] || k >= size)
		return k;
	k += (size_t)snprintf(t + k, size - k, columns[i].left ? "%s%-*.*s" : "%s%*.*s", i ? " " : "", width[i], width[i],
			      s);
	return k < size ? k : size - 1;
}

/* An endpoint runtime's model version, indented under its row: the name spans the columns left of REQ/s. */
static void model_row(const struct top_rtmodel *r, const int width[C_NCOLS], struct top_canvas *c, int y)
{
	char t[512], name[128], f[16], g[16], h[16];
	int span = -1;
	size_t k;

	for (int i = C_NAME; i < C_RATE; i++)
		if (width[i])
			span += width[i] + 1;
	k = (size_t)snprintf(name, sizeof(name), "  %s%s%s", r->model, *r->version ? ":" : "", r->version);
	/* energy per request and tokens per joule, where the server's energy is known (docs/energy.md) */
	if (!isnan(r->j_per_req) && k < sizeof(name)) {
		fmt_num(r->j_per_req, f, sizeof(f));
		k += (size_t)snprintf(name + k, sizeof(name) - k, "  %s J/req", f);
	}
	if (!isnan(r->tokens_per_j) && k < sizeof(name)) {
		fmt_num(r->tokens_per_j, f, sizeof(f));
		snprintf(name + k, sizeof(name) - k, " %s tok/J", f);
	}
	k = (size_t)snprintf(t, sizeof(t), "%*s %-*.*s", width[C_PID], "", span, span, name);
	fmt_num(r->rate, f, sizeof(f));
	k = cell(t, sizeof(t), k, width, C_RATE, f);
	fmt_num(r->failures, g, sizeof(g));
	k = cell(t, sizeof(t), k, width, C_FAIL, g);
	if (isnan(r->p50) && !isnan(r->mean)) {
		h[0] = '~'; /* the mean where the server gives no percentiles */
		fmt_secs(r->mean, h + 1, sizeof(h) - 1);
	} else {
		fmt_secs(r->p50, h, sizeof(h));
	}
	k = cell(t, sizeof(t), k, width, C_P50, h);
	fmt_secs(r->p99, h, sizeof(h));
	cell(t, sizeof(t), k, width, C_P99, h);
	top_canvas_put(c, y, 0, t, TA_DIM);
}

static int proc_table(const struct top_model *m, const struct top_view *v, struct top_canvas *c, int y)
{
	const struct top_proc **rows = xmalloc((m->nprocs + 1) * sizeof(*rows));
	size_t n = 0, k;
	int width[C_NCOLS];
	char t[512], a[16], e[16], pod[160];

	for (size_t i = 0; i < m->nprocs; i++)
		if (proc_match(m, &m->procs[i], v->filter))
			rows[n++] = &m->procs[i];
	qsort_r(rows, n, sizeof(*rows), proc_cmp, &(struct sort_ctx){ m, v->sort, v->reverse });
	table_columns(m, c->w, width);

	snprintf(t, sizeof(t), "Processes: %zu", n);
	if (n != m->nprocs)
		snprintf(t + strlen(t), sizeof(t) - strlen(t), " of %zu", m->nprocs);
	snprintf(t + strlen(t), sizeof(t) - strlen(t), "  sort: %s%s", top_sort_names[v->sort],
		 v->reverse ? " (reversed)" : "");
	if (*v->filter)
		snprintf(t + strlen(t), sizeof(t) - strlen(t), "  filter: \"%s\"", v->filter);
	top_canvas_put(c, y++, 0, t, TA_BOLD);
	k = 0;
	for (int i = 0; i < C_NCOLS; i++)
		k = cell(t, sizeof(t), k, width, i, columns[i].head);
	snprintf(t + k, sizeof(t) - k, " DEVICES");
	grow(c, y);
	for (int x = 0; x < c->w; x++)
		top_canvas_put(c, y, x, " ", TA_HEAD);
	top_canvas_put(c, y++, 0, t, TA_HEAD);
	for (size_t i = 0; i < n; i++) {
		const struct top_proc *p = rows[i];

		if (p->pid >= 0)
			snprintf(a, sizeof(a), "%ld", p->pid);
		else
			snprintf(a, sizeof(a), "-");
		k = cell(t, sizeof(t), 0, width, C_PID, a);
		k = cell(t, sizeof(t), k, width, C_NAME, *p->name ? p->name : "-");
		top_proc_pod(p, pod, sizeof(pod));
		k = cell(t, sizeof(t), k, width, C_POD, *pod ? pod : "-");
		fmt_pct(p->cpu, e, sizeof(e));
		k = cell(t, sizeof(t), k, width, C_CPU, e);
		fmt_bytes(p->rss, e, sizeof(e));
		k = cell(t, sizeof(t), k, width, C_RSS, e);
		fmt_bytes(top_proc_devmem(m, p), e, sizeof(e));
		k = cell(t, sizeof(t), k, width, C_DEVMEM, e);
		fmt_num(p->rate, e, sizeof(e));
		k = cell(t, sizeof(t), k, width, C_RATE, e);
		fmt_num(p->failures, e, sizeof(e));
		k = cell(t, sizeof(t), k, width, C_FAIL, e);
		fmt_secs(p->p50, e, sizeof(e));
		k = cell(t, sizeof(t), k, width, C_P50, e);
		fmt_secs(p->p99, e, sizeof(e));
		k = cell(t, sizeof(t), k, width, C_P99, e);
		for (size_t j = 0; j < p->ndevs && k < sizeof(t); j++) {
			const struct top_dev *dv = &m->devs[p->devs[j].dev];

			if (p->devs[j].ts_ms != dv->mem_ts_ms)
				continue;
			fmt_bytes(p->devs[j].bytes, e, sizeof(e));
			k += (size_t)snprintf(t + k, sizeof(t) - k, " %s%s:%s", dv->type, dv->key, e);
		}
		top_canvas_put(c, y++, 0, t, TA_NONE);
		for (size_t j = 0; j < p->nmodels; j++)
			model_row(&p->models[j], width, c, y++);
	}
	free(rows);
	return y;
}

static int help_body(struct top_canvas *c, int y)
{
	static const char *const lines[] = {
		"Keys",
		"  q            quit",
		"  h, ?         this help (any key closes it)",
		"  s            sort the processes by the next column (devmem, cpu, rss, pid, name, pod, req/s, p99)",
		"  r            reverse the sort",
		"  /            filter the processes by text (pid, name, pod, container, model, device); Enter keeps it, Esc clears it",
		"  d            device detail: the next device's every value; Esc leaves it",
		"  Up, Down     scroll one line; PgUp, PgDn one page; Home, End",
		"  p            pause: stop reading the input until p again",
		"",
		"Bars: utilization, memory; sparklines: their history over the window (--history).",
		"The age turns red when no report came for the stale limit (--stale).",
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		top_canvas_put(c, y++, 0, lines[i], i == 0 ? TA_BOLD : TA_NONE);
	return y;
}

static int detail_body(const struct top_model *m, const struct top_view *v, struct top_canvas *c, int y)
{
	const struct top_dev *d = &m->devs[v->detail];
	char t[256];
	int colw = 64, cols = c->w / colw < 1 ? 1 : c->w / colw;

	snprintf(t, sizeof(t), "Device %d of %zu: %s %s  %s  %s", v->detail + 1, m->ndevs, d->type, d->key, d->model,
		 d->uuid);
	top_canvas_put(c, y++, 0, t, TA_BOLD);
	y = device_panel(m, v, d, c, y);
	for (size_t i = 0; i < d->ndetail; i++) {
		int row = y + (int)(i / (size_t)cols), col = (int)(i % (size_t)cols) * colw;
		char val[40];

		snprintf(val, sizeof(val), "%.6g", d->detail[i].value);
		snprintf(t, sizeof(t), "%-*.*s %s", colw - 16, colw - 16, d->detail[i].name, val);
		top_canvas_put(c, row, col, t, TA_NONE);
	}
	return y + (int)((d->ndetail + (size_t)cols - 1) / (size_t)cols);
}

/* The key line: the keys, or the filter being typed; the status message on its right. */
static void key_line(const struct top_view *v, struct top_canvas *c, int y)
{
	char t[256];

	grow(c, y);
	for (int x = 0; x < c->w; x++)
		top_canvas_put(c, y, x, " ", TA_HEAD);
	if (v->filtering)
		snprintf(t, sizeof(t), "filter: %s_   (Enter keep, Esc clear)", v->filter);
	else
		snprintf(t, sizeof(t), "q quit  h help  s sort:%s  / filter  d detail  p %s", top_sort_names[v->sort],
			 v->paused ? "resume" : "pause");
	top_canvas_put(c, y, 0, t, TA_HEAD);
	if (*v->status) {
		int len = (int)strlen(v->status), x = c->w - len - 1;

		top_canvas_put(c, y, x < (int)strlen(t) + 2 ? (int)strlen(t) + 2 : x, v->status, TA_BAD);
	}
}

int top_view_render_header(const struct top_model *m, struct top_view *v, struct top_canvas *c)
{
	grow(c, HEADER_ROWS - 1);
	memset(c->cells, 0, (size_t)HEADER_ROWS * (size_t)c->w * sizeof(*c->cells));
	header(m, v, c);
	return HEADER_ROWS;
}

int top_view_render(const struct top_model *m, struct top_view *v, struct top_canvas *c)
{
	struct top_canvas body;
	int y = 0, rows, room;

	top_canvas_clear(c);
	header(m, v, c);
	top_canvas_init(&body, c->w);
	if (v->help) {
		y = help_body(&body, 0);
	} else if (v->detail >= 0 && (size_t)v->detail < m->ndevs) {
		y = detail_body(m, v, &body, 0);
	} else {
		y = devices(m, v, &body, y);
		y = proc_table(m, v, &body, y);
	}
	rows = y;
	room = v->interactive ? v->height - HEADER_ROWS - 1 : rows;
	if (room < 0)
		room = 0;
	if (v->scroll > rows - room)
		v->scroll = rows - room;
	if (v->scroll < 0 || !v->interactive)
		v->scroll = 0;
	for (int r = 0; r < room && v->scroll + r < body.h; r++) {
		grow(c, HEADER_ROWS + r);
		memcpy(&c->cells[(size_t)(HEADER_ROWS + r) * (size_t)c->w],
		       &body.cells[(size_t)(v->scroll + r) * (size_t)body.w], (size_t)c->w * sizeof(*c->cells));
	}
	if (v->interactive) {
		grow(c, v->height - 2);
		key_line(v, c, v->height - 1);
	}
	top_canvas_free(&body);
	return rows;
}
