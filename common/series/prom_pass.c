/* SPDX-License-Identifier: MIT */
/*
 * accel-prom --passthrough: endpoint runtimes' own families, parsed with
 * common/expo_parse and rendered next to accel-prom's; see prom_pass.h.
 *
 * Each runtime entry (its address and pid) keeps its families as rendered
 * lines, one buffer per output format, made when its exposition is taken:
 * a render only sorts the families by name and copies bytes.
 */
#include "prom_pass.h"
#include "../expo_parse.h"
#include "../log.h"
#include "../samples.h"
#include "prom_expo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PASS_BUF_MAX ((size_t)1 << 30) /* bytes of one family's rendered lines (the report line caps it first) */

/* One family of one runtime. */
struct pfam {
	char *name;          /* as the text format names it: a histogram's or summary's family, else its samples' name */
	enum expo_type type; /* EXPO_OTHER is served as untyped */
	char *help;          /* unescaped; NULL when the server gives none */
	struct buf text, om; /* its sample lines in each format */
	int dropped;         /* one of accel-prom's names: not served */
};

/* One runtime entry's families. */
struct prt {
	char *key;          /* runtime_index "\n" address: which configured endpoint (a restarted server keeps it) */
	char *tag;          /* its runtime_tag label: runtime_tag, else the pid, else the address (as samples.c) */
	char pid[32];       /* its pid label; "" when it has none */
	struct pfam *fams;
	size_t nfams, afams;
	int64_t seen_ns;    /* CLOCK_MONOTONIC of the last report that named it */
};

struct prom_pass {
	struct prt *rts;
	size_t nrts, arts;
	char **warned; /* family names already warned about */
	size_t nwarned, awarned;
	struct log_limit lim_bad;
	struct expo_parser *parser; /* owned */
};

struct prom_pass *prom_pass_new(void)
{
	struct prom_pass *p = xcalloc(1, sizeof(*p));

	p->parser = expo_parser_new();
	return p;
}

static void fams_free(struct prt *r)
{
	for (size_t i = 0; i < r->nfams; i++) {
		free(r->fams[i].name);
		free(r->fams[i].help);
		buf_free(&r->fams[i].text);
		buf_free(&r->fams[i].om);
	}
	free(r->fams);
	r->fams = NULL;
	r->nfams = r->afams = 0;
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
	expo_parser_free(p->parser);
	free(p);
}

size_t prom_pass_nruntimes(const struct prom_pass *p)
{
	return p ? p->nrts : 0;
}

/* Log a warning about family name once for the life of the process. */
static void warn_once(struct prom_pass *p, const char *name, const char *where, const char *tag, const char *why)
{
	char q[LOG_QUOTE_BUF], qt[LOG_QUOTE_BUF];

	for (size_t i = 0; i < p->nwarned; i++)
		if (!strcmp(p->warned[i], name))
			return;
	if (p->nwarned == p->awarned) {
		p->awarned = p->awarned ? p->awarned * 2 : 8;
		p->warned = xrealloc(p->warned, p->awarned * sizeof(*p->warned));
	}
	p->warned[p->nwarned++] = xstrdup(name);
	log_warn("prom: %s: --passthrough: runtime \"%s\": family \"%s\" %s; not served", where,
		 log_quote(qt, sizeof(qt), tag, (size_t)-1), log_quote(q, sizeof(q), name, (size_t)-1), why);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* Is name one of accel-prom's (a family of the mapping, or a self-metric), in either format? */
static int ours(const char *name)
{
	size_t n = strlen(name);

	if (!strncmp(name, "accel_prom_", 11))
		return 1;
	for (size_t i = 0; map_family_at(i); i++) {
		const char *o = map_family_at(i)->name;

		/* the name, or the OpenMetrics family of a counter (its name without _total) */
		if (!strcmp(o, name) || (!strncmp(o, name, n) && !strcmp(o + n, "_total")))
			return 1;
	}
	return 0;
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
	struct pfam *cur;    /* the family of the previous sample (samples of a family are together) */
	int full;            /* a buffer reached its cap: the exposition is not taken */
};

/*
 * The HELP lines of text[0..len). expo_parse skips comments (its callers
 * want samples), so the one comment republishing needs is found here: a
 * line "# HELP NAME TEXT", nothing more is read from it.
 */
static size_t find_helps(const char *text, size_t len, struct help **out)
{
	size_t n = 0, a = 0;
	const char *p = text, *end = text + len;

	*out = NULL;
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
			if (n == a) {
				a = a ? a * 2 : 16;
				*out = xrealloc(*out, a * sizeof(**out));
			}
			(*out)[n++] = h;
		}
		p = eol + 1;
	}
	return n;
}

/* The help text of family name, unescaped (a new string), or NULL. */
static char *help_of(const struct take *t, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < t->nhelps; i++) {
		const struct help *h = &t->helps[i];
		char *s, *d;

		if (h->name_len != n || memcmp(h->name, name, n))
			continue;
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
	return NULL;
}

static struct pfam *fam_add(struct take *t, const char *name, enum expo_type type, const char *family)
{
	struct prt *r = t->rt;
	struct pfam *f;

	if (r->nfams == r->afams) {
		r->afams = r->afams ? r->afams * 2 : 16;
		r->fams = xrealloc(r->fams, r->afams * sizeof(*r->fams));
	}
	f = &r->fams[r->nfams++];
	memset(f, 0, sizeof(*f));
	f->name = xstrdup(name);
	f->type = type == EXPO_OTHER ? EXPO_UNTYPED : type;
	f->help = help_of(t, family);
	buf_init(&f->text, PASS_BUF_MAX);
	buf_init(&f->om, PASS_BUF_MAX);
	if (ours(name)) {
		f->dropped = 1;
		warn_once(t->p, name, t->where, r->tag, "has the name of one of accel-prom's own");
	}
	return f;
}

/* Append {labels...,runtime_tag="",pid=""} to b: the server's labels, then the runtime's. */
static void put_labels(struct buf *b, const struct expo_sample *s, const struct prt *r)
{
	struct buf v;

	buf_init(&v, EXPO_MAX_LINE);
	buf_add(b, "{", 1);
	for (size_t i = 0; i < s->nlabels; i++) {
		const struct expo_label *l = &s->labels[i];
		int clash = (l->name_len == 11 && !memcmp(l->name, "runtime_tag", 11)) ||
			    (l->name_len == 3 && !memcmp(l->name, "pid", 3));

		buf_reset(&v);
		buf_add(&v, l->value, l->value_len);
		buf_printf(b, "%s%.*s=\"", clash ? "exported_" : "", (int)l->name_len, l->name);
		prom_escape_label(b, v.data ? v.data : "");
		buf_add(b, "\",", 2);
	}
	buf_add(b, "runtime_tag=\"", 13);
	prom_escape_label(b, r->tag);
	buf_add(b, "\"", 1);
	if (*r->pid)
		buf_printf(b, ",pid=\"%s\"", r->pid);
	buf_add(b, "}", 1);
	buf_free(&v);
}

static void on_expo_sample(const struct expo_sample *s, void *ud)
{
	struct take *t = ud;
	int dist = s->type == EXPO_HISTOGRAM || s->type == EXPO_SUMMARY;
	const char *name = dist ? s->family : s->name;
	char val[32];
	size_t vn, mark_text, mark_om;
	struct pfam *f = t->cur;

	if (s->suffix == EXPO_SFX_CREATED)
		return; /* OpenMetrics' creation times: no place in the text format */
	if (!f || strcmp(f->name, name)) {
		f = NULL;
		for (size_t i = 0; i < t->rt->nfams && !f; i++)
			if (!strcmp(t->rt->fams[i].name, name))
				f = &t->rt->fams[i];
		if (!f)
			f = fam_add(t, name, s->type, s->family);
		t->cur = f;
	}
	if (f->dropped)
		return;
	vn = prom_format_value(s->value, val);
	mark_text = f->text.len;
	mark_om = f->om.len;
	buf_add(&f->text, s->name, s->name_len);
	put_labels(&f->text, s, t->rt);
	buf_printf(&f->text, " %.*s\n", (int)vn, val);
	/* the same in OpenMetrics (a counter not named _total is typed unknown there: put_header) */
	buf_add(&f->om, s->name, s->name_len);
	put_labels(&f->om, s, t->rt);
	if (buf_printf(&f->om, " %.*s\n", (int)vn, val) || f->text.len == mark_text || f->om.len == mark_om)
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

	rt_free(r);
	memmove(&p->rts[i], &p->rts[i + 1], (p->nrts - i - 1) * sizeof(*p->rts));
	p->nrts--;
}

/*
 * Parse one entry's exposition into a fresh set of families; it replaces the
 * runtime's when the whole exposition parsed, else the error is logged and
 * the last good set stays.
 */
static void take_exposition(struct prom_pass *p, const char *key, const char *addr, const char *tag, const char *pid,
			    const char *text, size_t len, const char *where, int64_t mono_ns)
{
	struct prt fresh, *r = rt_find(p, key);
	struct take t;
	char err[256], q[LOG_QUOTE_BUF], qa[LOG_QUOTE_BUF];
	size_t nbad;

	memset(&fresh, 0, sizeof(fresh));
	fresh.tag = xstrdup(tag);
	snprintf(fresh.pid, sizeof(fresh.pid), "%s", pid);
	memset(&t, 0, sizeof(t));
	t.p = p;
	t.rt = &fresh;
	t.where = where;
	t.nhelps = find_helps(text, len, &t.helps);
	err[0] = '\0';
	nbad = expo_parse(p->parser, text, len, on_expo_sample, &t, err, sizeof(err));
	free(t.helps);
	if (nbad || t.full) {
		log_limited(&p->lim_bad, "prom: %s: --passthrough: runtime \"%s\" (%s): bad exposition: %s; %s", where,
			    log_quote(q, sizeof(q), tag, (size_t)-1), log_quote(qa, sizeof(qa), addr, (size_t)-1),
			    nbad ? err : "larger than accel-prom keeps",
			    r ? "its last good families stay" : "none of its families are served yet");
		free(fresh.tag);
		fams_free(&fresh);
		if (r)
			r->seen_ns = mono_ns;
		return;
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
	fams_free(r);
	free(r->tag);
	r->tag = fresh.tag;
	memcpy(r->pid, fresh.pid, sizeof(r->pid));
	r->fams = fresh.fams;
	r->nfams = fresh.nfams;
	r->afams = fresh.afams;
	r->seen_ns = mono_ns;
}

void prom_pass_report(struct prom_pass *p, json_t *report, const char *where, int64_t mono_ns)
{
	json_t *rts = json_object_get(report, "runtime_data"), *e;
	size_t i;

	if (!p || !json_is_array(rts))
		return;
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
			take_exposition(p, key, addr ? addr : "", tag, pidbuf, json_string_value(expo),
					json_string_length(expo), where, mono_ns);
		}
		free(key);
	}
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
	buf_printf(b, "# HELP %.*s ", (int)n, name);
	prom_escape_help(b, help, om);
	buf_add(b, "\n", 1);
}

/*
 * HELP and TYPE of one family in both formats. OpenMetrics names a
 * counter's samples FAMILY_total: a counter named so has its family
 * without _total there; one that is not (Triton's
 * nv_inference_request_success) is typed unknown, so that its samples keep
 * their names whichever format Prometheus asks for (it asks for
 * OpenMetrics first) and the server's own queries find them.
 */
static void put_header(struct buf *text, struct buf *om, const struct pfam *f, const char *help)
{
	static const char *const text_types[] = { "untyped", "counter", "gauge", "histogram", "summary", "untyped" };
	static const char *const om_types[] = { "unknown", "counter", "gauge", "histogram", "summary", "unknown" };
	size_t n = strlen(f->name), omn = n;
	int unknown = f->type == EXPO_COUNTER && !ends_with(f->name, "_total");

	if (f->type == EXPO_COUNTER && !unknown)
		omn -= 6;
	if (help) {
		put_help(text, f->name, n, help, 0);
		put_help(om, f->name, omn, help, 1);
	}
	buf_printf(text, "# TYPE %s %s\n", f->name, text_types[f->type]);
	buf_printf(om, "# TYPE %.*s %s\n", (int)omn, f->name, unknown ? "unknown" : om_types[f->type]);
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
			if (!p->rts[i].fams[k].dropped && p->rts[i].fams[k].text.len)
				refs[n++] = (struct fref){ &p->rts[i].fams[k], i };
	qsort(refs, n, sizeof(*refs), fref_cmp);
	for (size_t i = 0; i < n;) {
		const struct pfam *first = refs[i].f;
		const char *help = NULL;
		size_t j;

		for (j = i; j < n && !strcmp(refs[j].f->name, first->name); j++)
			if (!help && refs[j].f->type == first->type)
				help = refs[j].f->help;
		put_header(text, om, first, help);
		for (; i < j; i++) {
			const struct pfam *f = refs[i].f;

			if (f->type != first->type) {
				warn_once(p, f->name, "render", p->rts[refs[i].rt].tag,
					  "has another type than another server's family of that name");
				continue;
			}
			rc |= buf_add(text, f->text.data, f->text.len) | buf_add(om, f->om.data, f->om.len);
		}
	}
	free(refs);
	return rc ? -ENOSPC : 0;
}
