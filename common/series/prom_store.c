/* SPDX-License-Identifier: MIT */
/*
 * The series store and the renderer of accel-prom; see prom_store.h.
 *
 * Series live in one hash table keyed by (family, rendered label set) and
 * in their family's array, which is sorted by labels lazily, when a render
 * finds it out of order. Each series keeps its label set and its value
 * already formatted, so a render is mostly copying bytes.
 *
 * accel-prom's own metrics (accel_prom_*) are series of this store too,
 * "pinned" so that staleness never drops them.
 */
#include "prom_store.h"
#include "prom_dcgm.h"
#include "prom_hist.h"
#include "prom_kube.h"
#include "prom_pass.h"

#include "../log.h"
#include "../samples.h"
#include "../timeutil.h"
#include "../util.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- self-metrics ---------------------------------------------------------- */

#define SELF_GAUGE(id, name, help, unit) static const struct family id = { name, help, METRIC_GAUGE, unit }
#define SELF_COUNTER(id, name, help, unit) static const struct family id = { name, help, METRIC_COUNTER, unit }

SELF_COUNTER(F_REPORTS, "accel_prom_reports_total", "Reports read from the input and mapped", "count");
SELF_COUNTER(F_BAD_LINES, "accel_prom_bad_lines_total", "Input lines skipped, by reason", "count");
SELF_COUNTER(F_GROUP_ERRORS, "accel_prom_group_errors_total",
	     "Metric groups (or runtime entries, group=\"runtime\") that reported an error", "count");
SELF_COUNTER(F_BAD_VALUES, "accel_prom_bad_values_total", "Values of the wrong type where a number belongs, skipped",
	     "count");
SELF_COUNTER(F_REFUSED, "accel_prom_series_refused_total",
	     "Samples refused because the store already holds its maximum number of series or bytes", "count");
SELF_COUNTER(F_INPUT_BYTES, "accel_prom_input_bytes_total", "Bytes read from the input", "bytes");
SELF_GAUGE(F_LAST_AGE, "accel_prom_last_report_age_seconds", "Seconds since the last report arrived, as of this render",
	   "seconds");
SELF_GAUGE(F_LAST_TS, "accel_prom_last_report_timestamp_seconds", "Unix time at which the last report arrived",
	   "seconds");
SELF_GAUGE(F_INPUT_OPEN, "accel_prom_input_open", "1 while the input is open, 0 after its end", "");
SELF_GAUGE(F_SERIES, "accel_prom_series", "Series in the exposition, accel_prom_* excluded", "count");
SELF_GAUGE(F_SERIES_BYTES, "accel_prom_series_bytes",
	   "Memory the series take in the store and the exposition, departed counters included, accel_prom_* excluded",
	   "bytes");
SELF_GAUGE(F_STALENESS, "accel_prom_staleness_seconds", "Staleness window in force", "seconds");
SELF_GAUGE(F_BUILD, "accel_prom_build_info", "accel-prom build information", "");

/* ---- data ---------------------------------------------------------------- */

struct series;

struct fam {
	const struct family *def; /* static: the mapping's or this file's */
	struct series **ser;      /* every series of the family, hidden ones included */
	size_t nser, aser;
	size_t nvisible;
	int sorted; /* ser[] is in label order */
};

struct series {
	struct fam *fam;
	char *labels;        /* "{a=\"x\",b=\"y\"}", or "" without labels */
	size_t labels_len;
	char *rt_tag;        /* the runtime_tag label's value; NULL for other series */
	char *dev_id;        /* "device_type:device" of a device series; NULL for others */
	double value;
	union {
		char vstr[32];          /* value formatted; valid when vlen > 0 */
		struct prom_hist *hist; /* a histogram family's series: its buckets (prom_hist.h; value: the count) */
	};
	size_t vlen;
	int64_t seen_ns;     /* CLOCK_MONOTONIC of the last refresh */
	int64_t ts_ms;       /* the refreshing sample's timestamp (unix ms) */
	int64_t start_ms;    /* unix ms at which the value began (prom_series_view.start_ms); 0 before the first sample */
	uint32_t slot;       /* prom_store_each's consumer word */
	uint64_t seen_seq;   /* report number of the last refresh */
	int hidden;          /* a counter out of the exposition, kept for continuity */
	int pinned;          /* a self-metric: never stale (beside hidden: start_ms costs the struct no bytes) */
	int64_t hidden_ns;   /* since when hidden */
	struct series *hprev, *hnext; /* the departed counters, oldest first (while hidden) */
	size_t fidx;         /* index in fam->ser */
	size_t cost;         /* bytes counted against the store's byte cap (0 when pinned) */
	uint32_t hash;
	struct series *next; /* hash chain */
};

struct prom_store {
	pthread_mutex_t lock;
	struct fam **fams;
	size_t nfams, afams;
	int fams_sorted;
	struct series **tab; /* hash table, tabsize a power of two */
	size_t tabsize, nall;
	size_t nexported;    /* visible, not pinned */
	size_t nhidden;      /* departed counters kept for continuity */
	struct series *hidden_head, *hidden_tail; /* oldest first: evicted first when the store is full */
	size_t max_series;   /* cap on series, not pinned, departed ones included (they are evicted first) */
	size_t bytes, max_bytes; /* series_cost of the series not pinned, and its cap (the servers' families count too) */
	size_t nrt, rt_bytes; /* of those, the series of runtime entries (departed ones included), and their bytes */
	int64_t staleness_opt_ms;
	double max_period;   /* seconds: the longest group period seen */
	uint64_t seq;        /* reports applied */
	uint64_t bad_lines[STREAM_BAD_COUNT];
	uint64_t bad_values, refused, input_bytes;
	struct log_limit lim_refused;
	struct log_limit lim_bad, lim_long; /* bad values; label sets too long (one per sample) */
	int64_t last_real_ns;
	char *node_name, *version;
	char *instance;      /* instance_info's label set in the last report */
	char *host, *node;   /* and its hostname and node_name (NULL: none yet) */
	struct prom_dcgm *dcgm;    /* borrowed, or NULL */
	struct prom_pass *pass;    /* --passthrough (borrowed), or NULL */
	struct mapper *map;        /* the stream's report -> samples mapping (owned) */
	int old_pod_labels;        /* --use-old-namespace (prom_dcgm_pod_label) */
	struct prom_kube_names *kube; /* --kubernetes-enable-pod-labels: where pods' label names are made; else NULL */
	char lbl[PROM_LABELS_MAX]; /* one sample's label set, being rendered */
	/* The report being applied. */
	const char *where;
	int64_t now_ns;
	char **err_src;      /* sources in error: "r:TAG" a runtime, "d:TYPE" a device entry, "D:TYPE:KEY" a device */
	size_t nerr_src, aerr_src;
	int instance_changed;
	/* Read by /health without the lock. */
	_Atomic int64_t h_last_ns;      /* 0: no report yet */
	_Atomic int64_t h_staleness_ms;
	_Atomic int64_t h_eof_ns;       /* 0: input open */
	_Atomic int64_t h_refused_ns;   /* CLOCK_MONOTONIC of the last refused sample; 0: none */
	atomic_ullong h_refused;        /* samples refused so far */
	atomic_ullong h_reports;
	char eof_why[160];              /* written before h_eof_ns */
};

/* ---- families and series ------------------------------------------------------- */

static struct fam *fam_get(struct prom_store *st, const struct family *def)
{
	struct fam *f;

	for (size_t i = 0; i < st->nfams; i++)
		if (st->fams[i]->def == def || !strcmp(st->fams[i]->def->name, def->name))
			return st->fams[i];
	if (st->nfams == st->afams) {
		st->afams = st->afams ? 2 * st->afams : 32;
		st->fams = xrealloc(st->fams, st->afams * sizeof(*st->fams));
	}
	f = xcalloc(1, sizeof(*f));
	f->def = def;
	f->sorted = 1;
	st->fams[st->nfams++] = f;
	st->fams_sorted = 0;
	return f;
}

static void tab_grow(struct prom_store *st)
{
	size_t n = st->tabsize ? 2 * st->tabsize : 1024;
	struct series **t = xcalloc(n, sizeof(*t));

	for (size_t i = 0; i < st->tabsize; i++) {
		struct series *s = st->tab[i], *next;

		for (; s; s = next) {
			next = s->next;
			s->next = t[s->hash & (n - 1)];
			t[s->hash & (n - 1)] = s;
		}
	}
	free(st->tab);
	st->tab = t;
	st->tabsize = n;
}

static uint32_t series_hash(const struct family *def, const char *labels, size_t len)
{
	uint64_t h = hash_bytes(hash_bytes(0x84222325cbf29ce4ull, def->name, strlen(def->name)), labels, len);

	return (uint32_t)(h ^ (h >> 32));
}

static struct series *series_find(struct prom_store *st, const struct family *def, const char *labels, size_t len,
				  uint32_t h)
{
	if (!st->tabsize)
		return NULL;
	for (struct series *s = st->tab[h & (st->tabsize - 1)]; s; s = s->next)
		if (s->hash == h && s->labels_len == len && !memcmp(s->labels, labels, len) &&
		    (s->fam->def == def || !strcmp(s->fam->def->name, def->name)))
			return s;
	return NULL;
}

/* Put a series that just departed at the tail of the hidden list (the newest). */
static void hidden_push(struct prom_store *st, struct series *s)
{
	s->hnext = NULL;
	s->hprev = st->hidden_tail;
	if (st->hidden_tail)
		st->hidden_tail->hnext = s;
	else
		st->hidden_head = s;
	st->hidden_tail = s;
	st->nhidden++;
}

static void hidden_unlink(struct prom_store *st, struct series *s)
{
	if (s->hprev)
		s->hprev->hnext = s->hnext;
	else
		st->hidden_head = s->hnext;
	if (s->hnext)
		s->hnext->hprev = s->hprev;
	else
		st->hidden_tail = s->hprev;
	s->hprev = s->hnext = NULL;
	st->nhidden--;
}

static void series_delete(struct prom_store *st, struct series *s);

/*
 * What a series costs in memory, for the byte cap: the struct and its
 * strings with the allocator's overhead, its slots in the hash table and
 * its family's array, and its lines in the two rendered bodies (text and
 * OpenMetrics: name, labels, value).
 */
static size_t series_cost(const struct family *def, size_t labels_len, const char *rt_tag, const char *dev_type,
			  const char *dev_key)
{
	size_t line = strlen(def->name) + 6 + labels_len + 1 + 32 + 1;
	size_t n = sizeof(struct series) + 16 + labels_len + 1 + 16 + 4 * sizeof(void *) + 2 * line;

	if (rt_tag)
		n += strlen(rt_tag) + 1 + 16;
	if (dev_type)
		n += strlen(dev_type) + 1 + strlen(dev_key) + 1 + 16;
	return n;
}

/* What the runtimes (their series and the servers' families) may take of a cap: the node keeps the rest. */
static size_t rt_share(size_t cap)
{
	return cap - cap / PROM_NODE_SHARE;
}

/*
 * Whether one more series of cost bytes finds the store full: 0 when it
 * fits, 1 when the store is, 2 when the runtimes' share is (rt: a series of
 * a runtime entry).
 */
static int store_full(const struct prom_store *st, size_t cost, int rt)
{
	size_t pass = prom_pass_bytes(st->pass);

	if (st->nexported + st->nhidden >= st->max_series || st->bytes + pass + cost > st->max_bytes)
		return 1;
	if (rt && (st->nrt >= rt_share(st->max_series) || st->rt_bytes + pass + cost > rt_share(st->max_bytes)))
		return 2;
	return 0;
}

/*
 * Make room for one more series of cost bytes: the departed counters give
 * way, oldest first (those of runtimes when it is the runtimes' share that
 * is full). 0 when it fits, else store_full's answer.
 */
static int series_room(struct prom_store *st, size_t cost, int rt)
{
	int full;

	while ((full = store_full(st, cost, rt))) {
		struct series *h = st->hidden_head;

		while (h && full == 2 && !h->rt_tag)
			h = h->hnext;
		if (!h)
			return full;
		series_delete(st, h);
	}
	return 0;
}

/* Count n samples refused; /health says so. */
static void store_refused(struct prom_store *st, size_t n)
{
	st->refused += n;
	atomic_store(&st->h_refused_ns, st->now_ns ? st->now_ns : 1);
	atomic_store(&st->h_refused, st->refused);
}

/* A sample that finds the store full: counted, logged (rate-limited), and /health says so. */
static void series_refuse(struct prom_store *st, const struct family *def, const char *labels, size_t len, int full)
{
	char q[LOG_QUOTE_BUF], cap[256];
	size_t pass = prom_pass_bytes(st->pass);

	store_refused(st, 1);
	if (st->nexported + st->nhidden >= st->max_series)
		snprintf(cap, sizeof(cap), "its maximum of %zu series", st->max_series);
	else if (full == 1)
		snprintf(cap, sizeof(cap), "%zu series in %zu bytes, its maximum is %zu bytes (--max-series-bytes)",
			 st->nexported, st->bytes + pass, st->max_bytes);
	else
		snprintf(cap, sizeof(cap),
			 "%zu series of runtimes in %zu bytes, their share: %zu series, %zu bytes (3/4 of the maximum, "
			 "--max-series-bytes; the rest is the node's own)",
			 st->nrt, st->rt_bytes + pass, rt_share(st->max_series), rt_share(st->max_bytes));
	log_limited(&st->lim_refused,
		    "prom: %s: new series %s%s refused: the store holds %s (see accel_prom_series_refused_total)",
		    st->where ? st->where : "-", def->name, log_quote(q, sizeof(q), labels, len), cap);
}

/* The series, created (visible, value 0) when new; NULL when the store is full. */
static struct series *series_get(struct prom_store *st, const struct family *def, const char *labels, size_t len,
				 const char *rt_tag, const char *dev_type, const char *dev_key, int pinned)
{
	uint32_t h = series_hash(def, labels, len);
	struct series *s = series_find(st, def, labels, len, h);
	size_t cost = pinned ? 0 : series_cost(def, len, rt_tag, dev_type, dev_key);
	struct fam *f;
	int full;

	if (s)
		return s;
	if (!pinned && (full = series_room(st, cost, rt_tag != NULL))) {
		series_refuse(st, def, labels, len, full);
		return NULL;
	}
	if (st->nall >= st->tabsize)
		tab_grow(st);
	f = fam_get(st, def);
	s = xcalloc(1, sizeof(*s));
	s->fam = f;
	s->labels = xmalloc(len + 1);
	memcpy(s->labels, labels, len);
	s->labels[len] = '\0';
	s->labels_len = len;
	s->rt_tag = rt_tag ? xstrdup(rt_tag) : NULL;
	s->dev_id = dev_type ? xasprintf("%s:%s", dev_type, dev_key) : NULL;
	s->pinned = pinned;
	s->cost = cost;
	st->bytes += cost;
	if (rt_tag && !pinned) {
		st->nrt++;
		st->rt_bytes += cost;
	}
	s->hash = h;
	s->next = st->tab[h & (st->tabsize - 1)];
	st->tab[h & (st->tabsize - 1)] = s;
	if (f->nser == f->aser) {
		f->aser = f->aser ? 2 * f->aser : 8;
		f->ser = xrealloc(f->ser, f->aser * sizeof(*f->ser));
	}
	s->fidx = f->nser;
	f->ser[f->nser++] = s;
	f->nvisible++;
	f->sorted = f->nser == 1;
	st->nall++;
	if (!pinned)
		st->nexported++;
	return s;
}

static void series_delete(struct prom_store *st, struct series *s)
{
	struct fam *f = s->fam;
	struct series **pp = &st->tab[s->hash & (st->tabsize - 1)];

	while (*pp != s)
		pp = &(*pp)->next;
	*pp = s->next;
	if (s->hidden)
		hidden_unlink(st, s);
	f->ser[s->fidx] = f->ser[--f->nser];
	f->ser[s->fidx]->fidx = s->fidx;
	f->sorted = 0;
	if (!s->hidden) {
		f->nvisible--;
		if (!s->pinned)
			st->nexported--;
	}
	st->nall--;
	st->bytes -= s->cost;
	if (s->rt_tag && !s->pinned) {
		st->nrt--;
		st->rt_bytes -= s->cost;
	}
	free(s->labels);
	free(s->rt_tag);
	free(s->dev_id);
	if (f->def->type == METRIC_HISTOGRAM)
		prom_hist_free(s->hist);
	free(s);
}

/* Take a series out of the exposition: a counter or histogram is kept (hidden), a gauge is forgotten. */
static void series_drop(struct prom_store *st, struct series *s, int64_t now_ns)
{
	if (s->pinned || s->hidden)
		return;
	if (s->fam->def->type == METRIC_GAUGE) {
		series_delete(st, s);
		return;
	}
	s->hidden = 1;
	s->hidden_ns = now_ns;
	hidden_push(st, s);
	s->fam->nvisible--;
	st->nexported--;
}

static void series_refresh(struct prom_store *st, struct series *s)
{
	s->seen_ns = st->now_ns;
	s->seen_seq = st->seq;
	if (s->hidden) {
		hidden_unlink(st, s);
		s->hidden = 0;
		s->fam->nvisible++;
		st->nexported++;
	}
}

/*
 * When the value of a series that a sample creates began (unix ms): a
 * counter's first increment counts what happened over the group's period
 * before the sample, so it began a period earlier; any other value at the
 * sample. At least 1, since 0 means "not yet".
 */
static int64_t series_start_ms(const struct sample *smp)
{
	int64_t t = smp->ts_ms;

	if (smp->fam->type != METRIC_GAUGE && smp->period > 0 && smp->period < 86400.0)
		t -= (int64_t)(smp->period * 1000.0);
	return t > 0 ? t : 1;
}

static void series_set(struct series *s, double v)
{
	if (s->vlen && s->value == v && signbit(s->value) == signbit(v))
		return;
	s->value = v;
	s->vlen = 0;
}

/* Set (or with add, add to) a self-metric. labels is a rendered label set. */
static void self_put(struct prom_store *st, const struct family *def, const char *labels, double v, int add)
{
	struct series *s = series_get(st, def, labels, strlen(labels), NULL, NULL, NULL, 1);

	series_set(s, add ? s->value + v : v);
}

/* ---- ingestion ------------------------------------------------------------- */

static int64_t staleness_ms(const struct prom_store *st)
{
	double d;

	if (st->staleness_opt_ms > 0)
		return st->staleness_opt_ms;
	d = st->max_period * PROM_STALENESS_PERIODS * 1000.0;
	return d > PROM_STALENESS_MIN_MS ? (d < 1e12 ? (int64_t)d : (int64_t)1e12) : PROM_STALENESS_MIN_MS;
}

/* A value the mapping or the store skips: counted, logged rate-limited, the path (built from input keys) quoted. */
static void on_bad_value(const char *path, const char *why, void *ud)
{
	struct prom_store *st = ud;
	char q[LOG_QUOTE_BUF];

	st->bad_values++;
	log_limited(&st->lim_bad, "prom: %s: %s: %s; skipped", st->where, log_quote(q, sizeof(q), path, (size_t)-1),
		    why);
}

static void source_error(struct prom_store *st, char kind, const char *id)
{
	if (st->nerr_src == st->aerr_src) {
		st->aerr_src = st->aerr_src ? 2 * st->aerr_src : 8;
		st->err_src = xrealloc(st->err_src, st->aerr_src * sizeof(*st->err_src));
	}
	st->err_src[st->nerr_src++] = xasprintf("%c:%s", kind, id);
}

/*
 * A group in error keeps its series' last values (as neuron-monitor-prometheus.py
 * does), but a source in error is gone: a runtime entry (group "runtime"), a
 * device entry (group "device", entity the device type) or one device of a
 * device group (group "device_*", entity "TYPE:KEY", as common/samples.c names
 * them). Their series leave at the end of the report.
 */
static void on_group_error(const char *group, const char *entity, const char *error, void *ud)
{
	struct prom_store *st = ud;
	struct buf b;

	if (!strcmp(group, "runtime"))
		source_error(st, 'r', entity);
	else if (!strcmp(group, "device"))
		source_error(st, 'd', entity);
	else if (!strncmp(group, "device_", 7) && strchr(entity, ':'))
		source_error(st, 'D', entity);
	buf_init(&b, 1024);
	if (!buf_add(&b, "{group=\"", 8) && !prom_escape_label(&b, group) && !buf_add(&b, "\"}", 2))
		self_put(st, &F_GROUP_ERRORS, b.data, 1, 1);
	buf_free(&b);
	if (log_level() >= LOG_LVL_INFO) {
		char qe[LOG_QUOTE_BUF], qr[LOG_QUOTE_BUF];

		log_info("prom: %s: %s of %s: %s", st->where, group, log_quote(qe, sizeof(qe), entity, (size_t)-1),
			 log_quote(qr, sizeof(qr), error, (size_t)-1));
	}
}

static int label_cmp(const struct label *a, const struct label *b)
{
	return a->name[0] != b->name[0] ? (unsigned char)a->name[0] - (unsigned char)b->name[0] : strcmp(a->name, b->name);
}

/* Append n bytes at *p if they fit before end. 0 or -ENOSPC. */
static int put(char **p, const char *end, const char *s, size_t n)
{
	if ((size_t)(end - *p) < n)
		return -ENOSPC;
	memcpy(*p, s, n);
	*p += n;
	return 0;
}

/* Append a label value escaped (\\, \", \n). 0 or -ENOSPC. */
static int put_escaped(char **p, const char *end, const char *s)
{
	for (;;) {
		size_t n = strcspn(s, "\\\"\n");

		if (put(p, end, s, n))
			return -ENOSPC;
		s += n;
		if (!*s)
			return 0;
		if (put(p, end, *s == '\n' ? "\\n" : *s == '"' ? "\\\"" : "\\\\", 2))
			return -ENOSPC;
		s++;
	}
}

/*
 * A histogram sample into its series (prom_hist.h); the series' cost counts
 * its buckets' lines too. A series that starts again (new bounds) has a new
 * start (on_sample sets it).
 */
static void hist_add(struct prom_store *st, struct series *s, const struct sample_hist *inc)
{
	size_t old = s->hist ? prom_hist_cost(s->hist, strlen(s->fam->def->name), s->labels_len) : 0, cost;

	if (prom_hist_add(&s->hist, inc))
		s->start_ms = 0;
	series_set(s, s->hist->view.count);
	cost = prom_hist_cost(s->hist, strlen(s->fam->def->name), s->labels_len);
	st->bytes = st->bytes - old + cost;
	if (s->rt_tag)
		st->rt_bytes = st->rt_bytes - old + cost;
	s->cost = s->cost - old + cost;
}

static void on_sample(const struct sample *smp, void *ud)
{
	struct prom_store *st = ud;
	struct label l[SAMPLE_MAX_LABELS + PROM_KUBE_LABELS_MAX], kl[PROM_KUBE_LABELS_MAX];
	size_t n = smp->nlabels < SAMPLE_MAX_LABELS ? smp->nlabels : SAMPLE_MAX_LABELS, m = 0;
	size_t nk = st->kube && smp->pod_labels ? prom_kube_labels(smp->pod_labels, kl, ARRAY_SIZE(kl), st->kube)
						: 0;
	const char *rt = NULL, *dtype = NULL, *dkey = NULL, *end = st->lbl + sizeof(st->lbl);
	char *p = st->lbl;
	struct series *s;
	double v = smp->value;
	int rc = 0;

	if (smp->fam->type == METRIC_COUNTER && !(v >= 0 && isfinite(v))) {
		char what[160];

		snprintf(what, sizeof(what), "%s", smp->fam->name);
		on_bad_value(what, "a counter's increment must be a finite number >= 0", st);
		return;
	}
	if ((smp->fam->type == METRIC_HISTOGRAM) != (smp->hist != NULL))
		return; /* the mapping gives buckets to a histogram family's samples and to no other */
	/* Labels sorted by name (insertion sort: at most 16, and a pod's labels), duplicates dropped. */
	for (size_t i = 0; i < n + nk; i++) {
		size_t j = m;
		struct label x = i < n ? smp->labels[i] : kl[i - n];

		if (i < n && (smp->prom_skip & (1u << i)))
			continue; /* neuron-monitor-prometheus.py has no such label: series sum as there */
		if (i < n && st->old_pod_labels)
			x.name = prom_dcgm_pod_label(x.name); /* --use-old-namespace */
		while (j > 0 && label_cmp(&l[j - 1], &x) > 0)
			j--;
		if (j > 0 && !label_cmp(&l[j - 1], &x))
			continue;
		memmove(&l[j + 1], &l[j], (m - j) * sizeof(l[0]));
		l[j] = x;
		m++;
	}
	for (size_t i = 0; i < m && !rc; i++) {
		const char *name = l[i].name, *val = l[i].value ? l[i].value : "";

		rc = put(&p, end, i ? "," : "{", 1);
		rc = rc ? rc : put(&p, end, name, strlen(name));
		rc = rc ? rc : put(&p, end, "=\"", 2);
		rc = rc ? rc : put_escaped(&p, end, val);
		rc = rc ? rc : put(&p, end, "\"", 1);
	}
	/* The entity's identity, from the mapping (no label sniffing): drops on errors use it. */
	rt = smp->runtime_tag;
	dtype = smp->device_type;
	dkey = smp->device;
	if (!rc && m)
		rc = put(&p, end, "}", 1);
	if (rc) {
		/* Every sample of an entry with a huge label would say this: once per 10 s, with the count. */
		st->bad_values++;
		log_limited(&st->lim_long, "prom: %s: %s: label set longer than %d bytes rendered; sample skipped",
			    st->where, smp->fam->name, PROM_LABELS_MAX);
		return;
	}
	s = series_get(st, smp->fam, st->lbl, (size_t)(p - st->lbl), rt, dtype && dkey ? dtype : NULL, dkey, 0);
	if (!s)
		return;
	if (smp->hist)
		hist_add(st, s, smp->hist);
	else
		series_set(s, smp->fam->type == METRIC_COUNTER ? s->value + v : v);
	series_refresh(st, s);
	s->ts_ms = smp->ts_ms;
	if (!s->start_ms)
		s->start_ms = series_start_ms(smp);
	if (smp->period > st->max_period && isfinite(smp->period))
		st->max_period = smp->period;
	if (smp->fam->name[0] == 'i' && !strcmp(smp->fam->name, "instance_info") &&
	    (!st->instance || strcmp(st->instance, s->labels))) {
		st->instance_changed = st->instance != NULL;
		free(st->instance);
		st->instance = xstrdup(s->labels);
	}
	if (smp->fam->name[0] == 'i' && !strcmp(smp->fam->name, "instance_info") &&
	    (!st->host || strcmp(st->host, smp->host) || strcmp(st->node, smp->node))) {
		free(st->host);
		free(st->node);
		st->host = xstrdup(smp->host);
		st->node = xstrdup(smp->node);
	}
	/* dcgm-exporter's names for NVIDIA devices (prom_dcgm.h): its samples come back here, and map to nothing. */
	if (st->dcgm)
		prom_dcgm_map(st->dcgm, smp, on_sample, st);
}

/* Whether series s comes from a source in error in this report. */
static int source_gone(const struct prom_store *st, const struct series *s)
{
	for (size_t e = 0; e < st->nerr_src; e++) {
		const char *id = st->err_src[e] + 2;

		switch (st->err_src[e][0]) {
		case 'r':
			if (s->rt_tag && !strcmp(s->rt_tag, id))
				return 1;
			break;
		case 'd':
			if (s->dev_id && !strncmp(s->dev_id, id, strlen(id)) && s->dev_id[strlen(id)] == ':')
				return 1;
			break;
		case 'D':
			if (s->dev_id && !strcmp(s->dev_id, id))
				return 1;
			break;
		}
	}
	return 0;
}

/* After a report: drop what the report says is gone. */
static void report_drops(struct prom_store *st)
{
	if (!st->nerr_src && !st->instance_changed)
		return;
	for (size_t i = 0; i < st->nfams; i++) {
		struct fam *f = st->fams[i];

		for (size_t k = f->nser; k-- > 0;) {
			struct series *s = f->ser[k];

			if (s->pinned || s->hidden || s->seen_seq == st->seq)
				continue;
			if (st->instance_changed || source_gone(st, s))
				series_drop(st, s, st->now_ns);
		}
	}
}

/*
 * After a report, --collectors: in a DCGM family whose series of a GPU
 * replace each other (prom_dcgm_replaces: DCGM_FI_DEV_XID_ERRORS, whose
 * err_code changes with the Xid), drop the GPU's series this report did not
 * refresh once it refreshed another, as dcgm-exporter shows only the latest.
 */
static void replaced_drops(struct prom_store *st)
{
	for (size_t i = 0; st->dcgm && i < st->nfams; i++) {
		struct fam *f = st->fams[i];

		if (!prom_dcgm_replaces(st->dcgm, f->def))
			continue;
		for (size_t k = f->nser; k-- > 0;) {
			struct series *s = f->ser[k];

			if (s->pinned || s->hidden || s->seen_seq == st->seq || !s->dev_id)
				continue;
			for (size_t j = 0; j < f->nser; j++)
				if (f->ser[j]->seen_seq == st->seq && f->ser[j]->dev_id && !f->ser[j]->hidden &&
				    !strcmp(f->ser[j]->dev_id, s->dev_id)) {
					series_drop(st, s, st->now_ns);
					break;
				}
		}
	}
}

static void sweep_locked(struct prom_store *st, int64_t now_ns)
{
	int64_t win_ns = staleness_ms(st) * NS_PER_MS;

	atomic_store(&st->h_staleness_ms, staleness_ms(st));
	prom_pass_sweep(st->pass, now_ns, win_ns);
	for (size_t i = 0; i < st->nfams; i++) {
		struct fam *f = st->fams[i];

		for (size_t k = f->nser; k-- > 0;) {
			struct series *s = f->ser[k];

			if (s->pinned)
				continue;
			if (s->hidden && now_ns - s->hidden_ns >= (int64_t)PROM_HIDDEN_KEEP_MS * NS_PER_MS)
				series_delete(st, s);
			else if (!s->hidden && now_ns - s->seen_ns > win_ns)
				series_drop(st, s, now_ns);
		}
	}
}

void prom_store_report(struct prom_store *st, json_t *report, const char *where, int64_t mono_ns, int64_t real_ns)
{
	const struct map_cb cb = { on_sample, on_group_error, on_bad_value, st };

	pthread_mutex_lock(&st->lock);
	st->seq++;
	st->where = where;
	st->now_ns = mono_ns;
	st->instance_changed = 0;
	if (st->dcgm)
		prom_dcgm_report(st->dcgm, report); /* each GPU's labels, last Xid and pods, before its samples */
	mapper_report(st->map, report, real_ns / NS_PER_MS, &cb);
	if (st->pass) {
		/* the servers' own families (--passthrough), within what the caps leave them (store_full) */
		size_t all = st->max_bytes > st->bytes ? st->max_bytes - st->bytes : 0;
		size_t rt = rt_share(st->max_bytes) > st->rt_bytes ? rt_share(st->max_bytes) - st->rt_bytes : 0;
		size_t refused = prom_pass_report(st->pass, report, where, mono_ns, all < rt ? all : rt);

		if (refused)
			store_refused(st, refused);
	}
	report_drops(st);
	replaced_drops(st);
	for (size_t i = 0; i < st->nerr_src; i++)
		free(st->err_src[i]);
	st->nerr_src = 0;
	st->last_real_ns = real_ns;
	sweep_locked(st, mono_ns);
	atomic_store(&st->h_last_ns, mono_ns ? mono_ns : 1);
	atomic_store(&st->h_reports, st->seq);
	pthread_mutex_unlock(&st->lock);
}

void prom_store_bad_line(struct prom_store *st, enum stream_bad why)
{
	pthread_mutex_lock(&st->lock);
	if ((unsigned)why < STREAM_BAD_COUNT)
		st->bad_lines[why]++;
	pthread_mutex_unlock(&st->lock);
}

void prom_store_input_bytes(struct prom_store *st, uint64_t bytes)
{
	pthread_mutex_lock(&st->lock);
	st->input_bytes = bytes;
	pthread_mutex_unlock(&st->lock);
}

void prom_store_eof(struct prom_store *st, const char *why, int64_t mono_ns)
{
	pthread_mutex_lock(&st->lock);
	snprintf(st->eof_why, sizeof(st->eof_why), "%s", why);
	atomic_store(&st->h_eof_ns, mono_ns ? mono_ns : 1);
	pthread_mutex_unlock(&st->lock);
}

void prom_store_sweep(struct prom_store *st, int64_t mono_ns)
{
	pthread_mutex_lock(&st->lock);
	sweep_locked(st, mono_ns);
	pthread_mutex_unlock(&st->lock);
}

/* ---- rendering --------------------------------------------------------------- */

static int fam_cmp(const void *a, const void *b)
{
	return strcmp((*(struct fam *const *)a)->def->name, (*(struct fam *const *)b)->def->name);
}

static int series_cmp(const void *a, const void *b)
{
	return strcmp((*(struct series *const *)a)->labels, (*(struct series *const *)b)->labels);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* The self-metrics, refreshed just before a render. */
static void self_update(struct prom_store *st, int64_t mono_ns, int64_t real_ns)
{
	int64_t last = atomic_load(&st->h_last_ns);
	char lbl[64];

	(void)real_ns;
	self_put(st, &F_REPORTS, "", (double)st->seq, 0);
	for (int i = 0; i < STREAM_BAD_COUNT; i++) {
		snprintf(lbl, sizeof(lbl), "{reason=\"%s\"}", stream_bad_names[i]);
		self_put(st, &F_BAD_LINES, lbl, (double)st->bad_lines[i], 0);
	}
	self_put(st, &F_BAD_VALUES, "", (double)st->bad_values, 0);
	self_put(st, &F_REFUSED, "", (double)st->refused, 0);
	self_put(st, &F_INPUT_BYTES, "", (double)st->input_bytes, 0);
	self_put(st, &F_INPUT_OPEN, "", atomic_load(&st->h_eof_ns) ? 0 : 1, 0);
	self_put(st, &F_SERIES, "", (double)st->nexported, 0);
	self_put(st, &F_SERIES_BYTES, "", (double)(st->bytes + prom_pass_bytes(st->pass)), 0);
	self_put(st, &F_STALENESS, "", (double)staleness_ms(st) / 1000.0, 0);
	if (last) {
		self_put(st, &F_LAST_AGE, "", (double)(mono_ns - last) / 1e9, 0);
		self_put(st, &F_LAST_TS, "", (double)(st->last_real_ns / NS_PER_MS) / 1000.0, 0);
	}
}

static void put_series(struct buf *b, const struct fam *f, const struct series *s, int om)
{
	buf_add(b, f->def->name, strlen(f->def->name));
	if (om && f->def->type == METRIC_COUNTER && !ends_with(f->def->name, "_total"))
		buf_add(b, "_total", 6);
	buf_add(b, s->labels, s->labels_len);
	buf_add(b, " ", 1);
	buf_add(b, s->vstr, s->vlen);
	buf_add(b, "\n", 1);
}

/* HELP and TYPE (and UNIT in OpenMetrics) of one family. */
static void put_header(struct buf *b, const struct fam *f, int om)
{
	const struct family *d = f->def;
	const char *type = d->type == METRIC_COUNTER ? "counter" : d->type == METRIC_HISTOGRAM ? "histogram" : "gauge";
	size_t n = strlen(d->name);
	char unit[64];

	if (om && d->type == METRIC_COUNTER && ends_with(d->name, "_total")) {
		n -= 6;
	} else if (om && d->type == METRIC_GAUGE && ends_with(d->name, "_info") && !*d->unit) {
		/* OpenMetrics has a type for these: family "instance", sample "instance_info". */
		n -= 5;
		type = "info";
	}
	buf_printf(b, "# HELP %.*s ", (int)n, d->name);
	prom_escape_help(b, d->help, om);
	buf_printf(b, "\n# TYPE %.*s %s\n", (int)n, d->name, type);
	snprintf(unit, sizeof(unit), "_%s", d->unit);
	if (om && *d->unit && n > strlen(unit) && !strncmp(d->name + n - strlen(unit), unit, strlen(unit)))
		buf_printf(b, "# UNIT %.*s %s\n", (int)n, d->name, d->unit);
}

/*
 * /v1/collect: Baidu BIE's accelerator collector API, from the device
 * memory families. Written by hand rather than by jansson, whose integers
 * stop at 2^63 and whose reals are cut to a fixed precision; sums are
 * taken in long double so that they neither wrap nor overflow.
 */
static char *render_bie(struct prom_store *st, size_t *len)
{
	const struct family used_def = { PROM_BIE_USED_FAMILY, "", METRIC_GAUGE, "bytes" };
	const struct family total_def = { PROM_BIE_TOTAL_FAMILY, "", METRIC_GAUGE, "bytes" };
	json_t *name = json_string(st->node_name);
	char *key = name ? json_dumps(name, JSON_ENCODE_ANY) : NULL;
	long double used_sum = 0, total_sum = 0;
	struct fam *uf = NULL, *tf = NULL;
	struct buf devs, b;
	size_t ndev = 0;

	json_decref(name);
	for (size_t i = 0; i < st->nfams; i++) {
		if (!strcmp(st->fams[i]->def->name, PROM_BIE_USED_FAMILY))
			uf = st->fams[i];
		else if (!strcmp(st->fams[i]->def->name, PROM_BIE_TOTAL_FAMILY))
			tf = st->fams[i];
	}
	buf_init(&devs, (size_t)1 << 40);
	buf_init(&b, (size_t)1 << 40);
	/* One device per label set: each used series with its total, then totals without a used one. */
	for (int pass = 0; pass < 2; pass++) {
		struct fam *f = pass ? tf : uf;
		const struct family *other = pass ? &used_def : &total_def;

		for (size_t k = 0; f && k < f->nser; k++) {
			struct series *s = f->ser[k], *o;
			double used, total;

			if (s->hidden)
				continue;
			o = series_find(st, other, s->labels, s->labels_len, series_hash(other, s->labels, s->labels_len));
			if (o && o->hidden)
				o = NULL;
			if (pass && o)
				continue; /* already listed */
			used = pass ? (o ? o->value : 0) : s->value;
			total = pass ? s->value : (o ? o->value : 0);
			used_sum += used;
			total_sum += total;
			buf_add(&devs, ",{", 2);
			ndev++;
			prom_bie_entry(&devs, used, total);
			buf_add(&devs, "}", 1);
		}
	}
	buf_printf(&b, "{%s:{\"deviceNum\":%zu,\"devices\":[", key ? key : "\"\"", ndev);
	if (devs.len)
		buf_add(&b, devs.data + 1, devs.len - 1); /* without the first comma */
	buf_add(&b, "],", 2);
	prom_bie_entry(&b, used_sum, total_sum);
	buf_add(&b, "}}", 2);
	free(key);
	buf_free(&devs);
	*len = b.len;
	return b.data;
}

static struct expo_body take(struct buf *b)
{
	struct expo_body e = { b->data, b->len };

	if (!e.data)
		e.data = xstrdup("");
	buf_init(b, b->cap);
	return e;
}

static struct prom_expo *render_locked(struct prom_store *st, int64_t mono_ns, int64_t real_ns)
{
	struct buf text, om;
	struct expo_body bie;

	self_update(st, mono_ns, real_ns);
	if (!st->fams_sorted) {
		qsort(st->fams, st->nfams, sizeof(*st->fams), fam_cmp);
		st->fams_sorted = 1;
	}
	buf_init(&text, (size_t)1 << 40);
	buf_init(&om, (size_t)1 << 40);
	for (size_t i = 0; i < st->nfams; i++) {
		struct fam *f = st->fams[i];

		if (!f->nvisible)
			continue;
		if (!f->sorted) {
			qsort(f->ser, f->nser, sizeof(*f->ser), series_cmp);
			for (size_t k = 0; k < f->nser; k++)
				f->ser[k]->fidx = k;
			f->sorted = 1;
		}
		put_header(&text, f, 0);
		put_header(&om, f, 1);
		for (size_t k = 0; k < f->nser; k++) {
			struct series *s = f->ser[k];

			if (s->hidden)
				continue;
			if (f->def->type == METRIC_HISTOGRAM) {
				prom_hist_render(&text, f->def->name, s->labels, s->labels_len, s->hist);
				prom_hist_render(&om, f->def->name, s->labels, s->labels_len, s->hist);
				continue;
			}
			if (!s->vlen)
				s->vlen = prom_format_value(s->value, s->vstr);
			put_series(&text, f, s, 0);
			put_series(&om, f, s, 1);
		}
	}
	/* --passthrough: the servers' own families, after accel-prom's (prom_pass.h) */
	if (prom_pass_render(st->pass, &text, &om))
		log_limited(&st->lim_long, "prom: --passthrough: the exposition reached its size cap; some families cut");
	buf_add(&om, "# EOF\n", 6);
	bie.data = render_bie(st, &bie.len);
	return prom_expo_new(take(&text), take(&om), bie);
}

struct prom_expo *prom_store_render(struct prom_store *st, int64_t mono_ns, int64_t real_ns)
{
	struct prom_expo *e;

	pthread_mutex_lock(&st->lock);
	e = render_locked(st, mono_ns, real_ns);
	pthread_mutex_unlock(&st->lock);
	return e;
}

void prom_store_publish(struct prom_store *st, struct prom_pub *pub, int64_t mono_ns, int64_t real_ns)
{
	pthread_mutex_lock(&st->lock);
	sweep_locked(st, mono_ns);
	prom_pub_swap(pub, render_locked(st, mono_ns, real_ns));
	pthread_mutex_unlock(&st->lock);
}

void prom_store_each(struct prom_store *st, int fresh_only, void (*fn)(const struct prom_series_view *v, void *ud),
		     void *ud)
{
	pthread_mutex_lock(&st->lock);
	for (size_t i = 0; i < st->nfams; i++) {
		struct fam *f = st->fams[i];

		for (size_t k = 0; k < f->nser; k++) {
			struct series *s = f->ser[k];
			struct prom_series_view v = { .fam = f->def, .labels = s->labels, .labels_len = s->labels_len,
							.value = s->value, .ts_ms = s->ts_ms, .slot = &s->slot,
							.hist = f->def->type == METRIC_HISTOGRAM ? &s->hist->view : NULL,
							.start_ms = s->start_ms, .fresh = s->seen_seq == st->seq };

			if (s->hidden || s->pinned || (fresh_only && s->seen_seq != st->seq))
				continue;
			fn(&v, ud);
		}
	}
	pthread_mutex_unlock(&st->lock);
}

/* ---- health and lifetime ------------------------------------------------------- */

int prom_store_health(struct prom_store *st, int64_t mono_ns, char *why, size_t size)
{
	int64_t last = atomic_load(&st->h_last_ns), eof = atomic_load(&st->h_eof_ns);
	int64_t refused_ns = atomic_load(&st->h_refused_ns);
	int64_t win = atomic_load(&st->h_staleness_ms);
	unsigned long long n = atomic_load(&st->h_reports);

	if (eof) {
		snprintf(why, size, "input ended %.1f s ago (%s) after %llu reports", (double)(mono_ns - eof) / 1e9,
			 st->eof_why, n);
		return 0;
	}
	if (!last) {
		snprintf(why, size, "no report received yet");
		return 0;
	}
	if (mono_ns - last > win * NS_PER_MS) {
		snprintf(why, size, "last report %.1f s ago, older than the staleness window (%.1f s)",
			 (double)(mono_ns - last) / 1e9, (double)win / 1000.0);
		return 0;
	}
	if (refused_ns && mono_ns - refused_ns <= win * NS_PER_MS) {
		snprintf(why, size,
			 "new series refused %.1f s ago (%llu samples so far): the store is full, see "
			 "accel_prom_series_refused_total and the log",
			 (double)(mono_ns - refused_ns) / 1e9, (unsigned long long)atomic_load(&st->h_refused));
		return 0;
	}
	snprintf(why, size, "ok: last report %.1f s ago, %llu reports", (double)(mono_ns - last) / 1e9, n);
	return 1;
}

int64_t prom_store_staleness_ms(struct prom_store *st)
{
	int64_t ms;

	pthread_mutex_lock(&st->lock);
	ms = staleness_ms(st);
	pthread_mutex_unlock(&st->lock);
	return ms;
}

void prom_store_instance_names(struct prom_store *st, char *host, char *node, size_t size)
{
	pthread_mutex_lock(&st->lock);
	snprintf(host, size, "%s", st->host ? st->host : "");
	snprintf(node, size, "%s", st->node ? st->node : "");
	pthread_mutex_unlock(&st->lock);
}

size_t prom_store_nseries(struct prom_store *st)
{
	size_t n;

	pthread_mutex_lock(&st->lock);
	n = st->nexported;
	pthread_mutex_unlock(&st->lock);
	return n;
}

struct prom_store *prom_store_new(const struct prom_store_opts *o)
{
	struct prom_store *st = xcalloc(1, sizeof(*st));
	struct buf b;

	pthread_mutex_init(&st->lock, NULL);
	st->staleness_opt_ms = o->staleness_ms;
	st->max_series = o->max_series ? o->max_series : PROM_SERIES_MAX;
	st->max_bytes = o->max_bytes ? o->max_bytes : PROM_SERIES_BYTES_MAX;
	st->dcgm = o->dcgm;
	st->pass = o->pass;
	st->old_pod_labels = o->old_pod_labels;
	st->kube = o->pod_labels ? xmalloc(sizeof(*st->kube)) : NULL;
	st->map = mapper_new();
	st->node_name = xstrdup(o->node_name ? o->node_name : "");
	st->version = xstrdup(o->version ? o->version : "");
	atomic_init(&st->h_last_ns, 0);
	atomic_init(&st->h_eof_ns, 0);
	atomic_init(&st->h_refused_ns, 0);
	atomic_init(&st->h_refused, 0);
	atomic_init(&st->h_reports, 0);
	atomic_init(&st->h_staleness_ms, staleness_ms(st));
	buf_init(&b, 4096);
	buf_add(&b, "{version=\"", 10);
	prom_escape_label(&b, st->version);
	buf_add(&b, "\"}", 2);
	self_put(st, &F_BUILD, b.data, 1, 0);
	buf_free(&b);
	return st;
}

void prom_store_free(struct prom_store *st)
{
	if (!st)
		return;
	free(st->kube);
	for (size_t i = 0; i < st->nfams; i++) {
		struct fam *f = st->fams[i];

		for (size_t k = 0; k < f->nser; k++) {
			free(f->ser[k]->labels);
			free(f->ser[k]->rt_tag);
			free(f->ser[k]->dev_id);
			if (f->def->type == METRIC_HISTOGRAM)
				prom_hist_free(f->ser[k]->hist);
			free(f->ser[k]);
		}
		free(f->ser);
		free(f);
	}
	free(st->fams);
	free(st->tab);
	for (size_t i = 0; i < st->nerr_src; i++)
		free(st->err_src[i]);
	free(st->err_src);
	free(st->host);
	free(st->node);
	free(st->instance);
	free(st->node_name);
	free(st->version);
	mapper_free(st->map);
	pthread_mutex_destroy(&st->lock);
	free(st);
}
