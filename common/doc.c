/* SPDX-License-Identifier: MIT */
/*
 * JSON and YAML configuration documents with value positions; see doc.h.
 *
 * JSON is parsed by jansson (which reports syntax errors with line and
 * column); a second, tiny scan of the already-valid text records where each
 * path starts. YAML is converted event by event with libyaml, recording
 * positions as it builds the tree.
 */
#include "doc.h"
#include "log.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define DOC_PATH_MAX 256
#define DOC_DEPTH_MAX 64

struct doc_pos {
	char *path;
	int key_line, key_col; /* 0 for array elements and the root */
	int line, col;         /* where the value starts */
};

static void doc_pos_add(struct doc *d, const char *path, int kl, int kc, int l, int c)
{
	if (d->npos == d->apos) {
		d->apos = d->apos ? d->apos * 2 : 32;
		d->pos = xrealloc(d->pos, d->apos * sizeof(*d->pos));
	}
	d->pos[d->npos++] = (struct doc_pos){ xstrdup(path), kl, kc, l, c };
}

static const struct doc_pos *doc_pos_find(const struct doc *d, const char *path)
{
	for (size_t i = 0; i < d->npos; i++)
		if (strcmp(d->pos[i].path, path) == 0)
			return &d->pos[i];
	return NULL;
}

void doc_path_key(char *dst, size_t size, const char *base, const char *key)
{
	snprintf(dst, size, "%s%s%s", base, *base ? "." : "", key);
}

void doc_path_index(char *dst, size_t size, const char *base, size_t i)
{
	snprintf(dst, size, "%s[%zu]", base, i);
}

char *doc_error(const struct doc *d, const char *path, int at_key, const char *fmt, ...)
{
	const struct doc_pos *p = doc_pos_find(d, path);
	char msg[4096], qpath[LOG_QUOTE_BUF];
	va_list ap;
	int line = 0, col = 0;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* The path holds the file's keys: capped and escaped like any quoted input. */
	log_quote(qpath, sizeof(qpath), path, (size_t)-1);
	if (p) {
		line = at_key && p->key_line ? p->key_line : p->line;
		col = at_key && p->key_line ? p->key_col : p->col;
	}
	if (line)
		return xasprintf("%s:%d:%d: %s%s%s", d->file, line, col, qpath, *path ? ": " : "", msg);
	return xasprintf("%s: %s%s%s", d->file, qpath, *path ? ": " : "", msg);
}

const char *doc_kind(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER:
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

char *doc_check_keys(const struct doc *d, const char *path, json_t *obj, const char *const *keys)
{
	const char *k;
	json_t *val;
	char sub[DOC_PATH_MAX], known[512], q[LOG_QUOTE_BUF];

	json_object_foreach(obj, k, val) {
		size_t i, n = 0;

		for (i = 0; keys[i] && strcmp(keys[i], k); i++)
			;
		if (keys[i])
			continue;
		known[0] = '\0';
		for (i = 0; keys[i]; i++)
			n += (size_t)snprintf(known + n, n < sizeof(known) ? sizeof(known) - n : 0, "%s%s",
					      i ? ", " : "", keys[i]);
		doc_path_key(sub, sizeof(sub), path, k);
		return doc_error(d, sub, 1, "unknown key \"%s\"; known: %s", log_quote(q, sizeof(q), k, (size_t)-1),
				 known);
	}
	return NULL;
}

/* ---- JSON position scan ------------------------------------------------ */

struct scan {
	const char *s, *end;
	int line, col;
};

static void scan_adv(struct scan *sc)
{
	if (*sc->s == '\n') {
		sc->line++;
		sc->col = 1;
	} else if (((unsigned char)*sc->s & 0xC0) != 0x80) {
		sc->col++; /* count UTF-8 characters, as jansson does */
	}
	sc->s++;
}

static void scan_ws(struct scan *sc)
{
	while (sc->s < sc->end && isspace((unsigned char)*sc->s))
		scan_adv(sc);
}

/* Scan a string literal; copy its (simply unescaped) text into dst. */
static void scan_string(struct scan *sc, char *dst, size_t size)
{
	size_t n = 0;

	scan_adv(sc); /* opening quote */
	while (sc->s < sc->end && *sc->s != '"') {
		char c = *sc->s;

		if (c == '\\' && sc->s + 1 < sc->end) {
			scan_adv(sc);
			c = *sc->s;
			if (c == 'u' && sc->end - sc->s > 4) {
				/* \uXXXX in a key: decode it so the path matches the parsed key (BMP only). */
				char hex[5] = { sc->s[1], sc->s[2], sc->s[3], sc->s[4], 0 };
				unsigned long cp = strtoul(hex, NULL, 16);
				char u[3];
				size_t k, un = cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;

				if (un == 1) {
					u[0] = (char)cp;
				} else if (un == 2) {
					u[0] = (char)(0xC0 | (cp >> 6));
					u[1] = (char)(0x80 | (cp & 0x3F));
				} else {
					u[0] = (char)(0xE0 | (cp >> 12));
					u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
					u[2] = (char)(0x80 | (cp & 0x3F));
				}
				for (k = 0; k < un && dst && n + 1 < size; k++)
					dst[n++] = u[k];
				for (k = 0; k < 5; k++)
					scan_adv(sc);
				continue;
			}
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c == 'b' ? '\b' : c == 'f' ? '\f' : c;
		}
		if (dst && n + 1 < size)
			dst[n++] = c;
		scan_adv(sc);
	}
	if (sc->s < sc->end)
		scan_adv(sc);
	if (dst)
		dst[n] = '\0';
}

static void scan_value(struct doc *d, struct scan *sc, const char *path, int kl, int kc, int depth)
{
	char sub[DOC_PATH_MAX], key[DOC_PATH_MAX];
	size_t i = 0;

	scan_ws(sc);
	if (sc->s >= sc->end)
		return;
	doc_pos_add(d, path, kl, kc, sc->line, sc->col);
	if (*sc->s == '"') {
		scan_string(sc, NULL, 0);
	} else if (*sc->s == '{' || *sc->s == '[') {
		char close = *sc->s == '{' ? '}' : ']';
		int obj = close == '}';

		scan_adv(sc);
		for (;;) {
			int l = 0, c = 0;

			scan_ws(sc);
			if (sc->s >= sc->end)
				return;
			if (*sc->s == close) {
				scan_adv(sc);
				return;
			}
			if (*sc->s == ',') {
				scan_adv(sc);
				continue;
			}
			if (obj) {
				l = sc->line;
				c = sc->col;
				scan_string(sc, key, sizeof(key));
				scan_ws(sc);
				if (sc->s < sc->end && *sc->s == ':')
					scan_adv(sc);
				doc_path_key(sub, sizeof(sub), path, key);
			} else {
				doc_path_index(sub, sizeof(sub), path, i++);
			}
			if (depth < DOC_DEPTH_MAX)
				scan_value(d, sc, sub, l, c, depth + 1);
			else
				return;
		}
	} else {
		while (sc->s < sc->end && !strchr(",]} \t\r\n", *sc->s))
			scan_adv(sc);
	}
}

static int load_json(struct doc *d, const char *text, size_t len, char **err)
{
	json_error_t je;
	struct scan sc = { text, text + len, 1, 1 };

	d->root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!d->root) {
		/* jansson says column 0 at the very end of a line; positions here are 1-based. */
		*err = xasprintf("%s:%d:%d: %s", d->file, je.line, je.column > 0 ? je.column : 1, je.text);
		return -EINVAL;
	}
	scan_value(d, &sc, "", 0, 0, 0);
	return 0;
}

/* ---- YAML -------------------------------------------------------------- */

struct yctx {
	struct doc *d;
	yaml_parser_t p;
	char **err;
	struct {
		char *name;
		json_t *v;
		int open; /* a collection still being built: an alias to it would be a cycle */
	} anchors[64];
	size_t nanchors;
};

static int yerr(struct yctx *y, const yaml_mark_t *m, const char *what)
{
	*y->err = xasprintf("%s:%zu:%zu: %s", y->d->file, m->line + 1, m->column + 1, what);
	return -EINVAL;
}

static int ynext(struct yctx *y, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&y->p, ev)) {
		*y->err = xasprintf("%s:%zu:%zu: %s%s%s", y->d->file, y->p.problem_mark.line + 1,
				    y->p.problem_mark.column + 1, y->p.problem ? y->p.problem : "YAML error",
				    y->p.context ? " " : "", y->p.context ? y->p.context : "");
		return -EINVAL;
	}
	return 0;
}

/* Resolve a plain scalar the way YAML 1.2's core schema does. */
static json_t *yscalar(const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;
	char *end;

	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return json_stringn(s, n);
	if (n == 0 || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"))
		return json_null();
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
		return json_true();
	if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
		return json_false();
	if (isdigit((unsigned char)s[0]) || ((s[0] == '-' || s[0] == '+') && isdigit((unsigned char)s[1]))) {
		long long ll;
		double dv;

		errno = 0;
		ll = strtoll(s, &end, 10);
		if (*end == '\0' && !errno)
			return json_integer(ll);
		dv = strtod(s, &end);
		if (*end == '\0' && isfinite(dv))
			return json_real(dv);
	}
	return json_stringn(s, n);
}

static int yvalue(struct yctx *y, yaml_event_t *ev, const char *path, const yaml_mark_t *km, json_t **out,
		  int depth);

/* Record anchor (if any) for v; open: v is a collection whose members are still to come. */
static int yanchor(struct yctx *y, const yaml_char_t *anchor, json_t *v, const yaml_mark_t *m, int open)
{
	if (!anchor)
		return 0;
	if (y->nanchors == ARRAY_SIZE(y->anchors))
		return yerr(y, m, "too many anchors");
	y->anchors[y->nanchors].name = xstrdup((const char *)anchor);
	y->anchors[y->nanchors].open = open;
	y->anchors[y->nanchors++].v = json_incref(v);
	return 0;
}

static int ycollection(struct yctx *y, yaml_event_t *start, const char *path, json_t **out, int depth)
{
	int is_map = start->type == YAML_MAPPING_START_EVENT;
	json_t *c = is_map ? json_object() : json_array();
	char sub[DOC_PATH_MAX];
	const yaml_char_t *aname = is_map ? start->data.mapping_start.anchor : start->data.sequence_start.anchor;
	size_t i = 0, anchor = SIZE_MAX; /* its entry in y->anchors */
	int rc;

	if (depth > DOC_DEPTH_MAX) {
		json_decref(c);
		return yerr(y, &start->start_mark, "nesting too deep");
	}
	rc = yanchor(y, aname, c, &start->start_mark, 1);
	if (rc == 0 && aname)
		anchor = y->nanchors - 1;
	for (; rc == 0;) {
		yaml_event_t ev, kev;
		json_t *v = NULL;

		if ((rc = ynext(y, &ev)))
			break;
		if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (!is_map) {
			doc_path_index(sub, sizeof(sub), path, i++);
			rc = yvalue(y, &ev, sub, NULL, &v, depth + 1);
			if (rc == 0)
				json_array_append_new(c, v);
			continue;
		}
		if (ev.type != YAML_SCALAR_EVENT) {
			rc = yerr(y, &ev.start_mark, "mapping keys must be plain strings");
			yaml_event_delete(&ev);
			break;
		}
		kev = ev;
		doc_path_key(sub, sizeof(sub), path, (const char *)kev.data.scalar.value);
		if (json_object_get(c, (const char *)kev.data.scalar.value)) {
			char q[LOG_QUOTE_BUF];
			char *m = xasprintf("duplicate key \"%s\"", log_quote(q, sizeof(q), (const char *)kev.data.scalar.value,
									 kev.data.scalar.length));

			rc = yerr(y, &kev.start_mark, m);
			free(m);
			yaml_event_delete(&kev);
			break;
		}
		if ((rc = ynext(y, &ev)) == 0) {
			rc = yvalue(y, &ev, sub, &kev.start_mark, &v, depth + 1);
			if (rc == 0)
				json_object_setn_new(c, (const char *)kev.data.scalar.value,
						     kev.data.scalar.length, v);
		}
		yaml_event_delete(&kev);
	}
	if (anchor != SIZE_MAX)
		y->anchors[anchor].open = 0; /* complete: aliases may refer to it from now on */
	if (rc) {
		json_decref(c);
		return rc;
	}
	*out = c;
	return 0;
}

/* Convert the node that starts with ev (consumed here) into *out. */
static int yvalue(struct yctx *y, yaml_event_t *ev, const char *path, const yaml_mark_t *km, json_t **out,
		  int depth)
{
	int rc = 0;

	doc_pos_add(y->d, path, km ? (int)km->line + 1 : 0, km ? (int)km->column + 1 : 0,
		    (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1);
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		*out = yscalar(ev);
		if (!*out) {
			rc = yerr(y, &ev->start_mark, "invalid scalar (not UTF-8?)");
		} else if ((rc = yanchor(y, ev->data.scalar.anchor, *out, &ev->start_mark, 0))) {
			json_decref(*out);
			*out = NULL;
		}
		break;
	case YAML_ALIAS_EVENT:
		/* The latest anchor of that name; one still open is an ancestor of this alias: a cycle. */
		*out = NULL;
		for (size_t i = y->nanchors; i-- > 0;) {
			if (strcmp(y->anchors[i].name, (const char *)ev->data.alias.anchor))
				continue;
			if (y->anchors[i].open)
				rc = yerr(y, &ev->start_mark, "alias cycle: this alias is inside the node it refers to");
			else
				*out = json_incref(y->anchors[i].v);
			break;
		}
		if (!*out && !rc)
			rc = yerr(y, &ev->start_mark, "unknown alias");
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		rc = ycollection(y, ev, path, out, depth);
		break;
	default:
		rc = yerr(y, &ev->start_mark, "unexpected YAML event");
	}
	yaml_event_delete(ev);
	return rc;
}

static int load_yaml(struct doc *d, const char *text, size_t len, char **err)
{
	struct yctx y = { .d = d, .err = err };
	yaml_event_t ev;
	int rc;

	yaml_parser_initialize(&y.p);
	yaml_parser_set_input_string(&y.p, (const unsigned char *)text, len);
	/* stream start, document start (an empty file has none) */
	rc = ynext(&y, &ev);
	if (rc == 0) {
		yaml_event_delete(&ev);
		rc = ynext(&y, &ev);
	}
	if (rc == 0 && ev.type == YAML_STREAM_END_EVENT) {
		rc = yerr(&y, &ev.start_mark, "empty document");
		yaml_event_delete(&ev);
	} else if (rc == 0) {
		yaml_event_delete(&ev);
		rc = ynext(&y, &ev);
		if (rc == 0)
			rc = yvalue(&y, &ev, "", NULL, &d->root, 0);
		if (rc == 0)
			rc = ynext(&y, &ev); /* document end */
		if (rc == 0) {
			yaml_event_delete(&ev);
			rc = ynext(&y, &ev);
			if (rc == 0 && ev.type != YAML_STREAM_END_EVENT)
				rc = yerr(&y, &ev.start_mark, "only one YAML document is allowed");
			if (rc == 0 || ev.type != YAML_NO_EVENT)
				yaml_event_delete(&ev);
		}
	}
	for (size_t i = 0; i < y.nanchors; i++) {
		free(y.anchors[i].name);
		json_decref(y.anchors[i].v);
	}
	yaml_parser_delete(&y.p);
	if (rc) {
		json_decref(d->root);
		d->root = NULL;
	}
	return rc;
}

/* ---- entry points ------------------------------------------------------ */

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

int doc_load_mem(const char *name, const char *text, size_t len, int yaml, struct doc *d, char **err)
{
	int rc;

	memset(d, 0, sizeof(*d));
	d->file = xstrdup(name);
	*err = NULL;
	rc = yaml ? load_yaml(d, text, len, err) : load_json(d, text, len, err);
	if (rc)
		doc_free(d);
	return rc;
}

int doc_load(const char *path, struct doc *d, char **err)
{
	char *text = xmalloc(DOC_MAX_BYTES + 1);
	/* Never read_file_at: a FIFO put where the file was would block open() (a SIGHUP reload forever). */
	ssize_t n = read_regular_file(path, text, DOC_MAX_BYTES + 1);
	int rc;

	memset(d, 0, sizeof(*d));
	if (n < 0) {
		if (n == -EFBIG)
			*err = xasprintf("%s: larger than %d bytes", path, DOC_MAX_BYTES);
		else if (n == -EINVAL || n == -EISDIR)
			*err = xasprintf("%s: not a regular file (%s)", path, file_kind_name(path));
		else
			*err = xasprintf("%s: %s", path, strerror((int)-n));
		free(text);
		return (int)n;
	}
	rc = doc_load_mem(path, text, (size_t)n, ends_with(path, ".yaml") || ends_with(path, ".yml"), d, err);
	free(text);
	return rc;
}

void doc_free(struct doc *d)
{
	for (size_t i = 0; i < d->npos; i++)
		free(d->pos[i].path);
	free(d->pos);
	free(d->file);
	json_decref(d->root);
	memset(d, 0, sizeof(*d));
}
