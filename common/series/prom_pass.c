/* SPDX-License-Identifier: MIT */
/*
 * accel-prom --passthrough: endpoint runtimes' own families, parsed with
 * common/expo_parse and rendered next to accel-prom's; see prom_pass.h.
 *
 * Each runtime entry (its address and pid) keeps its families as rendered
 * sample lines (the same in both output formats), made when its exposition
 * is taken: a render only sorts the families by name and copies bytes.
 * Families, HELP lines and warnings are found by name in hash tables, so
 * that a report's work grows with its exposition, not with its square
 * (bench/prom_pass_bench.c). What a runtime's families take (kept, and in
 * both rendered bodies) is counted against the budget the store gives
 * (--max-series-bytes).
 */
#include "prom_pass.h"
#include "../expo_parse.h"
#include "../log.h"
#include "../samples.h"
#include "prom_expo.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PASS_BUF_MAX ((size_t)1 << 30) /* bytes of one family's rendered lines (the report line caps it first) */
#define WARN_KEYS 4096 /* warnings remembered (logged once each); past them, warnings are rate-limited */
#define FAM_OVERHEAD 224 /* bytes a family takes besides its strings: struct, table slots, headers, render refs, allocator */

/*
 * A table from names to indices (open addressing, linear probing, never
 * more than half full). The names are borrowed: each is a string that what
 * the index names owns, and outlives its slot.
 */
struct nmap {
	struct nslot {
		const char *k; /* NULL: free */
		size_t klen;
		size_t v;
		uint64_t h;
	} *s;
	size_t n, size; /* size: 0, or a power of two */
};

static uint64_t name_hash(const char *k, size_t klen)
{
	uint64_t h = hash_bytes(0x9e3779b97f4a7c15ull, k, klen);

	return h ^ (h >> 32); /* the table takes the low bits, which a multiply leaves weakest */
}

/* The index stored under k, or NULL. */
static size_t *nmap_get(const struct nmap *m, const char *k, size_t klen)
{
	uint64_t h;

	if (!m->size)
		return NULL;
	h = name_hash(k, klen);
	for (size_t i = h & (m->size - 1);; i = (i + 1) & (m->size - 1)) {
		struct nslot *e = &m->s[i];

		if (!e->k)
			return NULL;
		if (e->h == h && e->klen == klen && !memcmp(e->k, k, klen))
			return &e->v;
	}
}

static void nmap_insert(struct nmap *m, const char *k, size_t klen, uint64_t h, size_t v)
{
	size_t i = h & (m->size - 1);

	while (m->s[i].k)
		i = (i + 1) & (m->size - 1);
	m->s[i] = (struct nslot){ k, klen, v, h };
	m->n++;
}

/* Store v under k (borrowed; not there yet). */
static void nmap_put(struct nmap *m, const char *k, size_t klen, size_t v)
{
	if (2 * (m->n + 1) > m->size) {
		struct nmap g = { xcalloc(m->size ? 2 * m->size : 64, sizeof(struct nslot)), 0,
				  m->size ? 2 * m->size : 64 };

		for (size_t i = 0; i < m->size; i++)
			if (m->s[i].k)
				nmap_insert(&g, m->s[i].k, m->s[i].klen, m->s[i].h, m->s[i].v);
		free(m->s);
		*m = g;
	}
	nmap_insert(m, k, klen, name_hash(k, klen), v);
}

static void nmap_free(struct nmap *m)
{
	free(m->s);
	memset(m, 0, sizeof(*m));
}

/* One family of one runtime. */
struct pfam {
	char *name;          /* as the text format names it: a histogram's or summary's family, else its samples' name */
	enum expo_type type; /* EXPO_OTHER is served as untyped */
	char *help;          /* unescaped; NULL when the server gives none */
	struct buf lines;    /* its sample lines, the same in both formats */
	int dropped;         /* not served (one of accel-prom's names, or not one Prometheus takes) */
};

/* One runtime entry's families. */
struct prt {
	char *key;          /* runtime_index "\n" address: which configured endpoint (a restarted server keeps it) */
	char *tag;          /* its runtime_tag label: runtime_tag, else the pid, else the address (as samples.c) */
	char pid[32];       /* its pid label; "" when it has none */
	struct pfam *fams;
	size_t nfams, afams;
	struct nmap byname; /* family name -> index in fams */
	size_t bytes;       /* what its families take (fam_cost), counted against the budget */
	int64_t seen_ns;    /* CLOCK_MONOTONIC of the last report that named it */
};

struct prom_pass {
	struct prt *rts;
	size_t nrts, arts;
	size_t bytes;  /* every runtime's bytes */
	char **warned; /* what was warned about (warn_key), at most WARN_KEYS */
	size_t nwarned, awarned;
	struct nmap warned_map; /* warned[i] -> i */
	struct log_limit lim_bad, lim_warn, lim_full;
	struct expo_parser *parser; /* owned */
	char **ours;                /* accel-prom's family names in either format (ours_add) */
	size_t nours, aours;
	struct nmap ours_map;       /* ours[i] -> i */
};

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static void ours_add(struct prom_pass *p, const char *name, size_t n)
{
	if (nmap_get(&p->ours_map, name, n))
		return;
	if (p->nours == p->aours) {
		p->aours = p->aours ? 2 * p->aours : 256;
		p->ours = xrealloc(p->ours, p->aours * sizeof(*p->ours));
	}
	p->ours[p->nours] = xmalloc(n + 1);
	memcpy(p->ours[p->nours], name, n);
	p->ours[p->nours][n] = '\0';
	nmap_put(&p->ours_map, p->ours[p->nours], n, p->nours);
	p->nours++;
}

struct prom_pass *prom_pass_new(void)
{
	struct prom_pass *p = xcalloc(1, sizeof(*p));

	p->parser = expo_parser_new();
	/* accel-prom's families (common/samples.c), by their names in the text format and in OpenMetrics
	   (prom_store.c: a counter's family without _total, an info gauge's without _info) */
	for (size_t i = 0; map_family_at(i); i++) {
		const struct family *f = map_family_at(i);
		size_t n = strlen(f->name);

		ours_add(p, f->name, n);
		if (f->type == METRIC_COUNTER && ends_with(f->name, "_total"))
			ours_add(p, f->name, n - 6);
		else if (f->type == METRIC_GAUGE && ends_with(f->name, "_info") && !*f->unit)
			ours_add(p, f->name, n - 5);
	}
	return p;
}

static void fams_free(struct prt *r)
{
	for (size_t i = 0; i < r->nfams; i++) {
		free(r->fams[i].name);
		free(r->fams[i].help);
		buf_free(&r->fams[i].lines);
	}
	free(r->fams);
	r->fams = NULL;
	r->nfams = r->afams = 0;
	nmap_free(&r->byname);
	r->bytes = 0;
}

static void rt_free(struct prt *r)
{
	fams_free(r);
	free(r->key);
	free(r->tag);
}

void prom_pass_free(struct prom_pass *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nrts; i++)
		rt_free(&p->rts[i]);
	free(p->rts);
	for (size_t i = 0; i < p->nwarned; i++)
		free(p->warned[i]);
	free(p->warned);
	nmap_free(&p->warned_map);
	for (size_t i = 0; i < p->nours; i++)
		free(p->ours[i]);
	free(p->ours);
	nmap_free(&p->ours_map);
	expo_parser_free(p->parser);
	free(p);
}

size_t prom_pass_nruntimes(const struct prom_pass *p)
{
	return p ? p->nrts : 0;
}

size_t prom_pass_bytes(const struct prom_pass *p)
{
	return p ? p->bytes : 0;
}

/*
 * Whether a warning about key is to be logged: the first time (1, and key
 * is remembered), not again (0). Past WARN_KEYS keys nothing more is
 * remembered and *limited says that the warning goes to a rate limit.
 */
static int first_time(struct prom_pass *p, const char *key, int *limited)
{
	*limited = 0;
	if (nmap_get(&p->warned_map, key, strlen(key)))
		return 0;
	if (p->nwarned >= WARN_KEYS) {
		*limited = 1;
		return 1;
	}
	if (p->nwarned == p->awarned) {
		p->awarned = p->awarned ? p->awarned * 2 : 8;
		p->warned = xrealloc(p->warned, p->awarned * sizeof(*p->warned));
	}
	p->warned[p->nwarned] = xstrdup(key);
	nmap_put(&p->warned_map, p->warned[p->nwarned], strlen(key), p->nwarned);
	p->nwarned++;
	return 1;
}

/* Log a warning: now, or with limited under the rate limit. */
static void warn_line(struct prom_pass *p, int limited, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void warn_line(struct prom_pass *p, int limited, const char *fmt, ...)
{
	char msg[4 * LOG_QUOTE_BUF];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (limited)
		log_limited(&p->lim_warn, "%s", msg);
	else
		log_warn("%s", msg);
}

/* Log a warning about family name once for the life of the process. */
static void warn_once(struct prom_pass *p, const char *name, const char *where, const char *tag, const char *why)
{
	char q[LOG_QUOTE_BUF], qt[LOG_QUOTE_BUF];
	int limited;

	if (!first_time(p, name, &limited))
		return;
	warn_line(p, limited, "prom: %s: --passthrough: runtime \"%s\": family \"%s\" %s; not served", where,
		  log_quote(qt, sizeof(qt), tag, (size_t)-1), log_quote(q, sizeof(q), name, (size_t)-1), why);
}
/*
 * Is a family named name, of type type, one of accel-prom's (a family of
 * the mapping, or a self-metric) in either format: its name, or a
 * counter's OpenMetrics family (its name without _total), is one of
 * accel-prom's names in either format?
 */
static int ours(const struct prom_pass *p, const char *name, enum expo_type type)
{
	size_t n = strlen(name);

	if (!strncmp(name, "accel_prom_", 11) || nmap_get(&p->ours_map, name, n))
		return 1;
	return type == EXPO_COUNTER && ends_with(name, "_total") && nmap_get(&p->ours_map, name, n - 6);
}

/* ---- what Prometheus takes ------------------------------------------------------ */

static int alpha_(int c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int digit(int c)
{
	return c >= '0' && c <= '9';
}

/* A metric name: [a-zA-Z_:][a-zA-Z0-9_:]* */
static int metric_name_ok(const char *s, size_t n)
{
	if (!n || !(alpha_(s[0]) || s[0] == ':'))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!alpha_(s[i]) && !digit(s[i]) && s[i] != ':')
			return 0;
	return 1;
}

/* A label name: [a-zA-Z_][a-zA-Z0-9_]* */
static int label_name_ok(const char *s, size_t n)
{
	if (!n || !alpha_(s[0]))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!alpha_(s[i]) && !digit(s[i]))
			return 0;
	return 1;
}

/*
 * Why Prometheus would refuse the sample's label set (a scrape with one
 * such line fails whole): NULL when it takes it, else the reason, with
 * *bad the label it names.
 */
static const char *labels_refused(const struct expo_sample *s, const struct expo_label **bad)
{
	for (size_t i = 0; i < s->nlabels; i++) {
		const struct expo_label *l = &s->labels[i];

		*bad = l;
		if (!label_name_ok(l->name, l->name_len))
			return "is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)";
		if (l->name_len >= 2 && l->name[0] == '_' && l->name[1] == '_')
			return "is reserved for Prometheus' own use (it begins with __)";
		for (size_t k = 0; k < i; k++)
			if (s->labels[k].name_len == l->name_len && !memcmp(s->labels[k].name, l->name, l->name_len))
				return "is in the label set twice";
	}
	return NULL;
}

/* The labels every sample of a runtime gains (its target labels, in Prometheus' words). */
static const char *const rt_labels[] = { "pid", "runtime_tag" }; /* by length: the order renames are made in */
#define N_RT_LABELS 2
#define RENAME_MAX 512 /* bytes of a renamed label's name: 11 + 9 x (32 labels + 2), at most */

static int names_eq(const char *a, size_t an, const char *b)
{
	return an == strlen(b) && !memcmp(a, b, an);
}

/*
 * The name a server's label named like one of the runtime's gets, as
 * Prometheus names an exposed label that clashes with a target label
 * (honor_labels: false): exported_NAME, with exported_ prefixed again
 * while that is the name of another label of the sample, of the runtime's,
 * or of a rename made before (renames are made shortest name first).
 * at[k] is the index of the label renamed to out[k], or -1.
 */
static void rename_clashes(const struct expo_sample *s, char out[N_RT_LABELS][RENAME_MAX], int at[N_RT_LABELS])
{
	for (int r = 0; r < N_RT_LABELS; r++) {
		size_t n = strlen(rt_labels[r]);
		int taken;

		at[r] = -1;
		for (size_t i = 0; i < s->nlabels && at[r] < 0; i++)
			if (names_eq(s->labels[i].name, s->labels[i].name_len, rt_labels[r]))
				at[r] = (int)i;
		if (at[r] < 0)
			continue;
		memcpy(out[r], rt_labels[r], n + 1);
		do {
			memmove(out[r] + 9, out[r], n + 1);
			memcpy(out[r], "exported_", 9);
			n += 9;
			taken = 0;
			for (size_t i = 0; i < s->nlabels && !taken; i++)
				taken = s->labels[i].name_len == n && !memcmp(s->labels[i].name, out[r], n);
			for (int k = 0; k < N_RT_LABELS && !taken; k++)
				taken = !strcmp(out[r], rt_labels[k]) || (k < r && at[k] >= 0 && !strcmp(out[r], out[k]));
		} while (taken && n + 10 < RENAME_MAX); /* each round passes one more label: it ends well before */
	}
}

/* ---- taking an exposition ---------------------------------------------------- */

/* A "# HELP" line's name and text (escaped as written), found in the raw exposition. */
struct help {
	const char *name, *text;
	size_t name_len, text_len;
};

struct take {
	struct prom_pass *p;
	struct prt *rt;      /* the new families go here */
	const char *where;
	struct help *helps;  /* the exposition's HELP lines */
	size_t nhelps;
	struct nmap helpmap; /* a HELP line's name -> its index in helps (the first line of that name) */
	struct pfam *cur;    /* the family of the previous sample (samples of a family are together) */
	size_t budget;       /* bytes its families may take */
	size_t nsamples;     /* samples read, served or not */
	int full;            /* the families reached the budget or a buffer's cap: the exposition is not taken */
	struct buf val;      /* a label value, NUL-terminated */
};

/*
 * The HELP lines of text[0..len). expo_parse skips comments (its callers
 * want samples), so the one comment republishing needs is found here: a
 * line "# HELP NAME TEXT", nothing more is read from it.
 */
static void find_helps(struct take *t, const char *text, size_t len)
{
	size_t a = 0;
	const char *p = text, *end = text + len;

	t->helps = NULL;
	t->nhelps = 0;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q;

		if (!eol)
			eol = end;
		if (eol - p > 7 && !memcmp(p, "# HELP ", 7)) {
			struct help h;

			q = p + 7;
			h.name = q;
			while (q < eol && *q != ' ')
				q++;
			h.name_len = (size_t)(q - h.name);
			h.text = q < eol ? q + 1 : eol;
			h.text_len = (size_t)(eol - h.text);
			if (h.text_len && h.text[h.text_len - 1] == '\r')
				h.text_len--;
			if (t->nhelps == a) {
				a = a ? a * 2 : 16;
				t->helps = xrealloc(t->helps, a * sizeof(*t->helps));
			}
			if (!nmap_get(&t->helpmap, h.name, h.name_len))
				nmap_put(&t->helpmap, h.name, h.name_len, t->nhelps);
			t->helps[t->nhelps++] = h;
		}
		p = eol + 1;
	}
}

/* The help text of family name, unescaped (a new string), or NULL. */
static char *help_of(const struct take *t, const char *name)
{
	const size_t *i = nmap_get(&t->helpmap, name, strlen(name));
	const struct help *h;
	char *s, *d;

	if (!i)
		return NULL;
	h = &t->helps[*i];
	s = d = xmalloc(h->text_len + 1);
	for (size_t k = 0; k < h->text_len; k++) {
		char c = h->text[k];

		if (c == '\\' && k + 1 < h->text_len) {
			c = h->text[++k];
			c = c == 'n' ? '\n' : c; /* \\ and \" stand for themselves */
		}
		*d++ = c;
	}
	*d = '\0';
	return s;
}

/* A sample (line) of the exposition is not served: warned about once per runtime, family and kind of problem. */
static void warn_sample(struct take *t, const struct expo_sample *s, const char *family, const char *kind,
			const char *what)
{
	char q[LOG_QUOTE_BUF], qt[LOG_QUOTE_BUF], *key = xasprintf("%s\n%s\n%s", kind, t->rt->tag, family);
	int limited;

	if (first_time(t->p, key, &limited))
		warn_line(t->p, limited, "prom: %s: --passthrough: runtime \"%s\": line %zu: family \"%s\": %s; sample not served",
			  t->where, log_quote(qt, sizeof(qt), t->rt->tag, (size_t)-1), s->line,
			  log_quote(q, sizeof(q), family, (size_t)-1), what);
	free(key);
}

/*
 * What a family takes (bytes): its name, help and lines as kept and as
 * copied into both rendered bodies, and FAM_OVERHEAD. While an exposition
 * is taken its buffers may hold up to twice their lines (they double as
 * they grow; fams_trim gives the slack back).
 */
static size_t fam_cost(const struct pfam *f)
{
	return 3 * (strlen(f->name) + 1 + (f->help ? strlen(f->help) + 1 : 0) + f->lines.len) + FAM_OVERHEAD;
}

static struct pfam *fam_add(struct take *t, const char *name, enum expo_type type, const char *family)
{
	struct prt *r = t->rt;
	struct pfam *f;
	size_t n = strlen(name);

	if (r->nfams == r->afams) {
		r->afams = r->afams ? r->afams * 2 : 16;
		r->fams = xrealloc(r->fams, r->afams * sizeof(*r->fams));
	}
	f = &r->fams[r->nfams];
	memset(f, 0, sizeof(*f));
	f->name = xstrdup(name);
	nmap_put(&r->byname, f->name, n, r->nfams++);
	f->type = type == EXPO_OTHER ? EXPO_UNTYPED : type;
	f->help = help_of(t, family);
	buf_init(&f->lines, PASS_BUF_MAX);
	/* its name and help in the store and in both rendered bodies, and what a family takes besides */
	r->bytes += fam_cost(f);
	if (r->bytes > t->budget)
		t->full = 1;
	if (ours(t->p, name, f->type)) {
		f->dropped = 1;
		warn_once(t->p, name, t->where, r->tag, "has the name of one of accel-prom's own");
	} else if (!metric_name_ok(name, n)) {
		f->dropped = 1;
		warn_once(t->p, name, t->where, r->tag, "is not a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)");
	} else if (f->type == EXPO_COUNTER && !strcmp(name, "_total")) {
		/* OpenMetrics names a counter's family by its name without _total: nothing would be left */
		f->dropped = 1;
		warn_once(t->p, name, t->where, r->tag, "is a counter whose OpenMetrics family name would be empty");
	}
	return f;
}

/* Append {labels...,runtime_tag="",pid=""} to b: the server's labels, then the runtime's. 0 or -ENOSPC. */
static int put_labels(struct take *t, struct buf *b, const struct expo_sample *s)
{
	const struct prt *r = t->rt;
	char renamed[N_RT_LABELS][RENAME_MAX];
	int at[N_RT_LABELS], rc;

	rename_clashes(s, renamed, at);
	rc = buf_add(b, "{", 1);
	for (size_t i = 0; i < s->nlabels; i++) {
		const struct expo_label *l = &s->labels[i];
		const char *name = NULL;

		for (int k = 0; k < N_RT_LABELS; k++)
			if (at[k] == (int)i)
				name = renamed[k];
		if (name)
			rc |= buf_add(b, name, strlen(name));
		else
			rc |= buf_add(b, l->name, l->name_len);
		rc |= buf_add(b, "=\"", 2);
		if (memchr(l->value, '\\', l->value_len) || memchr(l->value, '"', l->value_len) ||
		    memchr(l->value, '\n', l->value_len)) {
			buf_reset(&t->val);
			buf_add(&t->val, l->value, l->value_len);
			rc |= prom_escape_label(b, t->val.data ? t->val.data : "");
		} else {
			rc |= buf_add(b, l->value, l->value_len); /* nothing to escape: the common case */
		}
		rc |= buf_add(b, "\",", 2);
	}
	rc |= buf_add(b, "runtime_tag=\"", 13);
	rc |= prom_escape_label(b, r->tag);
	rc |= buf_add(b, "\"", 1);
	if (*r->pid) {
		rc |= buf_add(b, ",pid=\"", 6);
		rc |= buf_add(b, r->pid, strlen(r->pid));
		rc |= buf_add(b, "\"", 1);
	}
	return rc | buf_add(b, "}", 1) ? -ENOSPC : 0;
}

static void on_expo_sample(const struct expo_sample *s, void *ud)
{
	struct take *t = ud;
	int dist = s->type == EXPO_HISTOGRAM || s->type == EXPO_SUMMARY;
	const char *name = dist ? s->family : s->name, *why;
	enum expo_type type = s->type == EXPO_OTHER ? EXPO_UNTYPED : s->type;
	const struct expo_label *bad;
	char val[33], q[LOG_QUOTE_BUF];
	size_t vn, mark;
	struct pfam *f = t->cur;

	if (s->suffix == EXPO_SFX_CREATED)
		return; /* OpenMetrics' creation times: no place in the text format */
	t->nsamples++;
	if (t->full)
		return; /* counted (refused), nothing more kept */
	if (!f || strcmp(f->name, name)) {
		const size_t *i = nmap_get(&t->rt->byname, name, strlen(name));

		f = i ? &t->rt->fams[*i] : fam_add(t, name, s->type, s->family);
		t->cur = f;
	}
	if (f->dropped || t->full)
		return;
	if (f->type != type) {
		warn_sample(t, s, name, "type", "a sample of another type than its family's before");
		return;
	}
	if ((why = labels_refused(s, &bad))) {
		char what[LOG_QUOTE_BUF + 128];

		snprintf(what, sizeof(what), "label name \"%s\" %s", log_quote(q, sizeof(q), bad->name, bad->name_len), why);
		warn_sample(t, s, name, why, what);
		return;
	}
	vn = prom_format_value(s->value, val);
	mark = f->lines.len;
	val[vn++] = '\n';
	if (buf_add(&f->lines, s->name, s->name_len) || put_labels(t, &f->lines, s) || buf_add(&f->lines, " ", 1) ||
	    buf_add(&f->lines, val, vn)) {
		t->full = 1;
		return;
	}
	t->rt->bytes += 3 * (f->lines.len - mark); /* as fam_cost counts it */
	if (t->rt->bytes > t->budget)
		t->full = 1;
}

static struct prt *rt_find(struct prom_pass *p, const char *key)
{
	for (size_t i = 0; i < p->nrts; i++)
		if (!strcmp(p->rts[i].key, key))
			return &p->rts[i];
	return NULL;
}

static void rt_remove(struct prom_pass *p, struct prt *r)
{
	size_t i = (size_t)(r - p->rts);

	p->bytes -= r->bytes;
	rt_free(r);
	memmove(&p->rts[i], &p->rts[i + 1], (p->nrts - i - 1) * sizeof(*p->rts));
	p->nrts--;
}

/* Give back the slack of each family's buffer (it doubles as it grows while an exposition is taken). */
static void fams_trim(struct prt *r)
{
	for (size_t i = 0; i < r->nfams; i++) {
		struct pfam *f = &r->fams[i];

		if (f->lines.data && f->lines.alloc > f->lines.len + 1) {
			f->lines.data = xrealloc(f->lines.data, f->lines.len + 1);
			f->lines.alloc = f->lines.len + 1;
		}
	}
}

/*
 * Parse one entry's exposition into a fresh set of families, within budget
 * bytes for every runtime's together; it replaces the runtime's when the
 * whole exposition parsed, else the error is logged and the last good set
 * stays. One whose families would go beyond the budget is refused: the
 * runtime's families leave. Returns how many samples were refused.
 */
static size_t take_exposition(struct prom_pass *p, const char *key, const char *addr, const char *tag, const char *pid,
			      const char *text, size_t len, const char *where, int64_t mono_ns, size_t budget)
{
	struct prt fresh, *r = rt_find(p, key);
	struct take t;
	char err[256], q[LOG_QUOTE_BUF], qa[LOG_QUOTE_BUF];
	size_t nbad, others = p->bytes - (r ? r->bytes : 0);

	memset(&fresh, 0, sizeof(fresh));
	fresh.tag = xstrdup(tag);
	snprintf(fresh.pid, sizeof(fresh.pid), "%s", pid);
	memset(&t, 0, sizeof(t));
	t.p = p;
	t.rt = &fresh;
	t.where = where;
	t.budget = budget > others ? budget - others : 0;
	buf_init(&t.val, EXPO_MAX_LINE);
	find_helps(&t, text, len);
	err[0] = '\0';
	nbad = expo_parse(p->parser, text, len, on_expo_sample, &t, err, sizeof(err));
	free(t.helps);
	nmap_free(&t.helpmap);
	buf_free(&t.val);
	if (nbad) {
		log_limited(&p->lim_bad, "prom: %s: --passthrough: runtime \"%s\" (%s): bad exposition: %s; %s", where,
			    log_quote(q, sizeof(q), tag, (size_t)-1), log_quote(qa, sizeof(qa), addr, (size_t)-1), err,
			    r ? "its last good families stay" : "none of its families are served yet");
		free(fresh.tag);
		fams_free(&fresh);
		if (r)
			r->seen_ns = mono_ns;
		return 0;
	}
	if (t.full) {
		log_limited(&p->lim_full,
			    "prom: %s: --passthrough: runtime \"%s\" (%s): its %zu samples refused: its families would take "
			    "more than the %zu bytes left to the servers' families (--max-series-bytes, see "
			    "accel_prom_series_refused_total); %s",
			    where, log_quote(q, sizeof(q), tag, (size_t)-1), log_quote(qa, sizeof(qa), addr, (size_t)-1),
			    t.nsamples, t.budget, r ? "its families leave" : "none of its families are served");
		free(fresh.tag);
		fams_free(&fresh);
		if (r)
			rt_remove(p, r);
		return t.nsamples;
	}
	if (!r) {
		if (p->nrts == p->arts) {
			p->arts = p->arts ? p->arts * 2 : 4;
			p->rts = xrealloc(p->rts, p->arts * sizeof(*p->rts));
		}
		r = &p->rts[p->nrts++];
		memset(r, 0, sizeof(*r));
		r->key = xstrdup(key);
	}
	p->bytes -= r->bytes;
	fams_free(r);
	free(r->tag);
	fams_trim(&fresh);
	r->tag = fresh.tag;
	memcpy(r->pid, fresh.pid, sizeof(r->pid));
	r->fams = fresh.fams;
	r->nfams = fresh.nfams;
	r->afams = fresh.afams;
	r->byname = fresh.byname;
	r->bytes = fresh.bytes;
	p->bytes += r->bytes;
	r->seen_ns = mono_ns;
	return 0;
}

size_t prom_pass_report(struct prom_pass *p, json_t *report, const char *where, int64_t mono_ns, size_t budget)
{
	json_t *rts = json_object_get(report, "runtime_data"), *e;
	size_t i, refused = 0;

	if (!p || !json_is_array(rts))
		return 0;
	json_array_foreach(rts, i, e) {
		json_t *pid = json_object_get(e, "pid"), *expo = json_object_get(e, "exposition");
		json_t *idx = json_object_get(e, "runtime_index");
		const char *addr = json_string_value(json_object_get(e, "address"));
		const char *tag = json_string_value(json_object_get(e, "runtime_tag"));
		const char *err = json_string_value(json_object_get(e, "error"));
		char pidbuf[32] = "", *key;
		struct prt *r;

		if (!json_is_object(e))
			continue;
		if (json_is_integer(pid))
			snprintf(pidbuf, sizeof(pidbuf), "%lld", (long long)json_integer_value(pid));
		/* the entity samples.c names the runtime's own series by */
		if (!tag || !*tag)
			tag = *pidbuf ? pidbuf : addr ? addr : "";
		/* one endpoint per configured runtime: its index and URL (not the pid, which a restart changes) */
		key = xasprintf("%lld\n%s", json_is_integer(idx) ? (long long)json_integer_value(idx) : -1LL,
				addr ? addr : "");
		r = rt_find(p, key);
		if ((err && *err) || !json_is_string(expo)) {
			/* the scrape failed, or the runtime republishes nothing: its families leave */
			if (r)
				rt_remove(p, r);
		} else {
			refused += take_exposition(p, key, addr ? addr : "", tag, pidbuf, json_string_value(expo),
						   json_string_length(expo), where, mono_ns, budget);
		}
		free(key);
	}
	return refused;
}

void prom_pass_sweep(struct prom_pass *p, int64_t now_ns, int64_t window_ns)
{
	for (size_t i = 0; p && i < p->nrts;) {
		if (now_ns - p->rts[i].seen_ns > window_ns)
			rt_remove(p, &p->rts[i]);
		else
			i++;
	}
}

/* ---- rendering --------------------------------------------------------------- */

struct fref {
	const struct pfam *f;
	size_t rt; /* the runtime's index: the same family of two runtimes, in a stable order */
};

static int fref_cmp(const void *a, const void *b)
{
	const struct fref *x = a, *y = b;
	int c = strcmp(x->f->name, y->f->name);

	return c ? c : x->rt < y->rt ? -1 : x->rt > y->rt;
}

static void put_help(struct buf *b, const char *name, size_t n, const char *help, int om)
{
	buf_add(b, "# HELP ", 7);
	buf_add(b, name, n);
	buf_add(b, " ", 1);
	prom_escape_help(b, help, om);
	buf_add(b, "\n", 1);
}

static void put_type(struct buf *b, const char *name, size_t n, const char *type)
{
	buf_add(b, "# TYPE ", 7);
	buf_add(b, name, n);
	buf_add(b, " ", 1);
	buf_add(b, type, strlen(type));
	buf_add(b, "\n", 1);
}

struct name_key {
	const char *s;
	size_t n;
};

static int fref_name_cmp(const void *key, const void *e)
{
	const struct name_key *k = key;
	const char *name = ((const struct fref *)e)->f->name;
	int c = strncmp(k->s, name, k->n);

	return c ? c : name[k->n] ? -1 : 0;
}

/*
 * HELP and TYPE of one family in both formats. OpenMetrics names a
 * counter's samples FAMILY_total: a counter named so has its family
 * without _total there, unless another family served has that name
 * (sorted refs[0..n) say); one that is not (Triton's
 * nv_inference_request_success), or whose family would be another's, is
 * typed unknown, so that its samples keep their names whichever format
 * Prometheus asks for (it asks for OpenMetrics first) and the server's own
 * queries find them.
 */
static void put_header(struct buf *text, struct buf *om, const struct pfam *f, const char *help,
		       const struct fref *refs, size_t nrefs)
{
	static const char *const text_types[] = { "untyped", "counter", "gauge", "histogram", "summary", "untyped" };
	static const char *const om_types[] = { "unknown", "counter", "gauge", "histogram", "summary", "unknown" };
	size_t n = strlen(f->name), omn = n;
	int unknown = f->type == EXPO_COUNTER && !ends_with(f->name, "_total");

	if (f->type == EXPO_COUNTER && !unknown) {
		struct name_key k = { f->name, n - 6 };

		unknown = bsearch(&k, refs, nrefs, sizeof(*refs), fref_name_cmp) != NULL;
	}

	if (f->type == EXPO_COUNTER && !unknown)
		omn -= 6;
	if (help) {
		put_help(text, f->name, n, help, 0);
		put_help(om, f->name, omn, help, 1);
	}
	put_type(text, f->name, n, text_types[f->type]);
	put_type(om, f->name, omn, unknown ? "unknown" : om_types[f->type]);
}

int prom_pass_render(struct prom_pass *p, struct buf *text, struct buf *om)
{
	struct fref *refs;
	size_t n = 0;
	int rc = 0;

	if (!p || !p->nrts)
		return 0;
	for (size_t i = 0; i < p->nrts; i++)
		n += p->rts[i].nfams;
	refs = xmalloc((n ? n : 1) * sizeof(*refs));
	n = 0;
	for (size_t i = 0; i < p->nrts; i++)
		for (size_t k = 0; k < p->rts[i].nfams; k++)
			if (!p->rts[i].fams[k].dropped && p->rts[i].fams[k].lines.len)
				refs[n++] = (struct fref){ &p->rts[i].fams[k], i };
	qsort(refs, n, sizeof(*refs), fref_cmp);
	for (size_t i = 0; i < n;) {
		const struct pfam *first = refs[i].f;
		const char *help = NULL;
		size_t j;

		for (j = i; j < n && !strcmp(refs[j].f->name, first->name); j++)
			if (!help && refs[j].f->type == first->type)
				help = refs[j].f->help;
		put_header(text, om, first, help, refs, n);
		for (; i < j; i++) {
			const struct pfam *f = refs[i].f;

			if (f->type != first->type) {
				warn_once(p, f->name, "render", p->rts[refs[i].rt].tag,
					  "has another type than another server's family of that name");
				continue;
			}
			rc |= buf_add(text, f->lines.data, f->lines.len) | buf_add(om, f->lines.data, f->lines.len);
		}
	}
	free(refs);
	return rc ? -ENOSPC : 0;
}
