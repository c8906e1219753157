/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus / OpenMetrics text parser; see expo_parse.h.
 *
 * It reads each line where it lies (found with memchr), copies the line's
 * name and label set once as the series key, and writes the name, the label
 * names and the unescaped label values NUL-terminated into a second buffer
 * that the callback borrows. Numbers take a fast path when they are plain
 * decimals that convert exactly (at most 15 digits, at most 22 after the
 * point: one correctly rounded division, the same double strtod gives);
 * everything else goes to strtod. bench/expo_bench.sh measures it.
 */
#include "expo_parse.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Which suffixes a family of a TYPE's kind has (bit per enum expo_suffix). */
#define SFX(s) (1u << (s))
enum { K_PLAIN = SFX(EXPO_SFX_NONE) };

struct parser {
	char *raw;   /* the current line's name and label set as written: the series key */
	char *tok;   /* the line, cut into its label names and unescaped values, NUL-terminated */
	char type_name[256];
	size_t type_len; /* 0: no TYPE line in force */
	enum expo_type type;
	unsigned sfx; /* the suffixes the family of the TYPE line has */
	char name[256];  /* the previous sample's name */
	size_t name_len; /* its length (0: none) */
	struct {
		char name[32];
		size_t len; /* 0: none */
	} lname[EXPO_MAX_LABELS]; /* the label names the previous lines had, by position */
	int name_sfx;    /* and its family_suffix() under the TYPE line in force */
	size_t bad, lineno;
	char *err;
	size_t errsz;
};

/* Character classes: bit 1 a metric or label name's first character, bit 2 any of its characters. */
static unsigned char cls[256];

static void cls_init(void)
{
	if (cls['a'])
		return;
	for (int c = 0; c < 256; c++) {
		int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';

		cls[c] = (unsigned char)((alpha ? 1 : 0) | (alpha || (c >= '0' && c <= '9') ? 2 : 0));
	}
}

/*
 * The first byte of the n at q that is '"', '\\' or NUL (q + n when none):
 * eight bytes at a time (the lowest byte flagged by the zero-byte test is
 * always a true match), as label values are most of a line's bytes.
 */
static const char *value_end(const char *q, const char *e)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;

	while (e - q >= 8) {
		uint64_t x, a, b, m;

		memcpy(&x, q, 8);
		a = x ^ (ones * '"');
		b = x ^ (ones * '\\');
		m = ((a - ones) & ~a) | ((b - ones) & ~b) | ((x - ones) & ~x);
		m &= highs;
		if (m)
			return q + (__builtin_ctzll(m) >> 3);
		q += 8;
	}
#endif
	while (q < e && *q != '"' && *q != '\\' && *q)
		q++;
	return q;
}

#define NAME_START(c) (cls[(unsigned char)(c)] & 1)
#define NAME_CHAR(c) (cls[(unsigned char)(c)] & 2)
#define BLANK(c) ((c) == ' ' || (c) == '\t')

static void bad(struct parser *p, const char *why)
{
	if (!p->bad++ && p->errsz)
		snprintf(p->err, p->errsz, "line %zu: %s", p->lineno, why);
}

/* A sample line that does not parse: a NUL byte in it is said first (it is what stopped the scan). */
static void bad_line(struct parser *p, const char *s, size_t n, const char *why)
{
	bad(p, memchr(s, '\0', n) ? "a NUL byte" : why);
}

/*
 * The number token at q (up to a blank or e): *end is where it ends, 0 with
 * *v set, or -1. Plain decimals of at most 15 digits, at most 22 of them
 * after the point, are an exact integer divided by an exact power of ten:
 * correctly rounded, as strtod would give ("12.0" needs no division);
 * anything else goes to strtod.
 */
static int num_token(const char *q, const char *e, double *v, const char **end)
{
	static const double p10[] = { 1e0,  1e1,	1e2,  1e3,  1e4,  1e5,	1e6,  1e7,  1e8,  1e9,	1e10, 1e11,
					 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
	const char *s = q;
	uint64_t m = 0, mi = 0;
	int digits = 0, frac = -1, neg = 0, nz = 0;
	char tmp[128], *te;
	size_t n;

	if (q < e && (*q == '-' || *q == '+'))
		neg = *q++ == '-';
	for (; q < e; q++) {
		unsigned d = (unsigned)(unsigned char)*q - '0';

		if (d <= 9) {
			m = m * 10 + d;
			digits++;
			if (frac >= 0) {
				frac++;
				nz |= d != 0;
			}
		} else if (*q == '.' && frac < 0) {
			frac = 0;
			mi = m;
		} else {
			break;
		}
	}
	if ((q == e || BLANK(*q)) && digits && digits <= 15 && frac <= 22) {
		double d = frac > 0 && !nz ? (double)mi : (double)m;

		if (frac > 0 && nz)
			d /= p10[frac];
		*v = neg ? -d : d;
		*end = q;
		return 0;
	}
	while (q < e && !BLANK(*q))
		q++;
	*end = q;
	n = (size_t)(q - s);
	if (!n || n >= sizeof(tmp))
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	if (!strcmp(tmp, "+Inf") || !strcmp(tmp, "Inf")) {
		*v = INFINITY;
		return 0;
	}
	*v = strtod(tmp, &te);
	return te != tmp + n ? -1 : 0;
}

int expo_parse_number(const char *s, size_t n, double *v)
{
	const char *end;

	for (size_t i = 0; i < n; i++)
		if (BLANK(s[i]))
			return -1;
	return num_token(s, s + n, v, &end);
}

/* "# TYPE name kind": the family whose samples follow. Any other comment line is skipped. */
static void type_line(struct parser *p, const char *s, size_t n)
{
	static const struct {
		const char *kind;
		enum expo_type type;
		unsigned sfx;
	} kinds[] = {
		{ "counter", EXPO_COUNTER, SFX(EXPO_SFX_NONE) | SFX(EXPO_SFX_TOTAL) | SFX(EXPO_SFX_CREATED) },
		{ "gauge", EXPO_GAUGE, K_PLAIN },
		{ "histogram", EXPO_HISTOGRAM,
		  SFX(EXPO_SFX_BUCKET) | SFX(EXPO_SFX_SUM) | SFX(EXPO_SFX_COUNT) | SFX(EXPO_SFX_CREATED) },
		{ "summary", EXPO_SUMMARY,
		  SFX(EXPO_SFX_NONE) | SFX(EXPO_SFX_SUM) | SFX(EXPO_SFX_COUNT) | SFX(EXPO_SFX_CREATED) },
		{ "untyped", EXPO_UNTYPED, K_PLAIN },
		{ "unknown", EXPO_UNTYPED, K_PLAIN },
		{ "gaugehistogram", EXPO_OTHER, SFX(EXPO_SFX_BUCKET) | SFX(EXPO_SFX_SUM) | SFX(EXPO_SFX_COUNT) },
		{ "info", EXPO_OTHER, SFX(EXPO_SFX_INFO) },
		{ "stateset", EXPO_OTHER, K_PLAIN },
	};
	const char *q = s + 6, *e = s + n, *name, *kind;
	size_t nl, kl;

	p->type_len = 0;
	p->name_len = 0; /* the previous name's suffix was under the previous TYPE */
	while (q < e && BLANK(*q))
		q++;
	for (name = q; q < e && !BLANK(*q); q++)
		;
	nl = (size_t)(q - name);
	while (q < e && BLANK(*q))
		q++;
	for (kind = q; q < e && !BLANK(*q); q++)
		;
	kl = (size_t)(q - kind);
	if (!nl || nl >= sizeof(p->type_name) || !kl)
		return;
	memcpy(p->type_name, name, nl);
	p->type_name[nl] = '\0';
	p->type_len = nl;
	p->type = EXPO_OTHER;
	p->sfx = K_PLAIN;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strlen(kinds[i].kind) == kl && !memcmp(kind, kinds[i].kind, kl)) {
			p->type = kinds[i].type;
			p->sfx = kinds[i].sfx;
		}
}

/* The suffix name has after the TYPE line's family, or -1 when it is not of that family. */
static int family_suffix(const struct parser *p, const char *name, size_t n)
{
	static const struct {
		const char *s;
		enum expo_suffix sfx;
	} sfx[] = { { "_total", EXPO_SFX_TOTAL }, { "_created", EXPO_SFX_CREATED }, { "_bucket", EXPO_SFX_BUCKET },
		    { "_sum", EXPO_SFX_SUM },	  { "_count", EXPO_SFX_COUNT },	    { "_gsum", EXPO_SFX_SUM },
		    { "_gcount", EXPO_SFX_COUNT }, { "_info", EXPO_SFX_INFO } };
	size_t t = p->type_len;

	if (!t || n < t || memcmp(name, p->type_name, t))
		return -1;
	if (n == t)
		return p->sfx & SFX(EXPO_SFX_NONE) ? EXPO_SFX_NONE : -1;
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
		if (!strcmp(name + t, sfx[i].s))
			return p->sfx & SFX(sfx[i].sfx) ? (int)sfx[i].sfx : -1;
	return -1;
}

/*
 * Whether the n bytes at a and b are equal, for the short names it sees
 * most: whole words, masked. Both may be read 16 bytes far (the line buffer
 * has that slack, the cached names are longer).
 */
static inline int same(const char *a, const char *b, size_t n)
{
	uint64_t x, y, u, v;

	if (n > 16)
		return !memcmp(a, b, n);
	memcpy(&x, a, 8);
	memcpy(&y, b, 8);
	if (n <= 8) {
		uint64_t mask = n == 8 ? ~0ull : (1ull << (8 * n)) - 1;

		return !((x ^ y) & mask);
	}
	memcpy(&u, a + 8, 8);
	memcpy(&v, b + 8, 8);
	return x == y && !((u ^ v) & (n == 16 ? ~0ull : (1ull << (8 * (n - 8))) - 1));
}

/*
 * One sample line: n bytes at s, no line end, no leading blank. It is
 * copied twice: once as the series key, once to be cut in place into the
 * NUL-terminated name, label names and unescaped values the callback
 * borrows (a NUL byte of the line stops every scan, and is a bad line).
 */
static void sample_line(struct parser *p, const char *s, size_t n, expo_cb cb, void *ud)
{
	struct expo_sample x;
	char *l = p->tok, *e = l + n, *q = l;
	size_t nl;
	int sfx;

	memcpy(l, s, n);
	*e = '\0';
	/* a family's samples follow each other: most lines repeat the previous line's name */
	nl = p->name_len;
	if (nl && nl < n && !NAME_CHAR(l[nl]) && same(l, p->name, nl)) {
		q += nl;
		sfx = p->name_sfx;
	} else {
		p->name_len = 0;
		if (!NAME_START(*q)) {
			bad_line(p, s, n, "a sample line starts with a metric name");
			return;
		}
		while (NAME_CHAR(*q))
			q++;
		nl = (size_t)(q - l);
		if (nl < sizeof(p->name)) {
			memcpy(p->name, l, nl);
			p->name[nl] = '\0';
			sfx = family_suffix(p, p->name, nl);
			p->name_len = nl;
			p->name_sfx = sfx;
		} else { /* too long to keep: cut in place once the next byte is checked */
			char c = l[nl];

			l[nl] = '\0';
			sfx = family_suffix(p, l, nl);
			l[nl] = c;
		}
	}
	x.name = p->name_len ? p->name : l;
	x.nlabels = 0;
	if (*q == '{') {
		q++;
		l[nl] = x.name == l ? '\0' : l[nl];
		for (;;) {
			char *ln, *ne, *v, *w;
			size_t ll;

			while (BLANK(*q))
				q++;
			if (*q == '}')
				break;
			if (x.nlabels == EXPO_MAX_LABELS) {
				bad_line(p, s, n, "more labels than a sample may have");
				return;
			}
			if (!NAME_START(*q)) {
				bad_line(p, s, n, "a label name is expected");
				return;
			}
			/* the lines of a family repeat their label names: compared, not scanned */
			ll = p->lname[x.nlabels].len;
			if (ll && (size_t)(e - q) > ll && !NAME_CHAR(q[ll]) && same(q, p->lname[x.nlabels].name, ll)) {
				x.labels[x.nlabels].name = p->lname[x.nlabels].name;
				q += ll;
				ne = NULL;
			} else {
				for (ln = q; NAME_CHAR(*q); q++)
					;
				ll = (size_t)(q - ln);
				x.labels[x.nlabels].name = ln;
				ne = q; /* cut there once it is known to be a label name */
				if (ll < sizeof(p->lname[0].name)) {
					memcpy(p->lname[x.nlabels].name, ln, ll);
					p->lname[x.nlabels].name[ll] = '\0';
					p->lname[x.nlabels].len = ll;
				}
			}
			while (BLANK(*q))
				q++;
			if (*q != '=') {
				bad_line(p, s, n, "'=' is expected after a label name");
				return;
			}
			if (ne)
				*ne = '\0';
			q++;
			while (BLANK(*q))
				q++;
			if (*q != '"') {
				bad_line(p, s, n, "a label value is quoted");
				return;
			}
			v = w = ++q;
			for (;;) {
				char *r = (char *)value_end(q, e);

				if (w != q)
					memmove(w, q, (size_t)(r - q));
				w += r - q;
				q = r;
				if (*q == '"')
					break;
				if (q == e || !*q || ++q == e) {
					bad_line(p, s, n, "a label value is not closed");
					return;
				}
				if (*q == 'n')
					*w++ = '\n';
				else if (*q == '\\' || *q == '"')
					*w++ = *q;
				else {
					bad_line(p, s, n, "an unknown escape in a label value");
					return;
				}
				q++;
			}
			*w = '\0'; /* w <= q: at worst it overwrites the closing quote */
			q++;
			x.labels[x.nlabels++].value = v;
			while (BLANK(*q))
				q++;
			if (*q == ',') {
				q++;
				continue;
			}
			if (*q != '}') {
				bad_line(p, s, n, "',' or '}' is expected after a label");
				return;
			}
			break;
		}
		q++;
	} else if (!BLANK(*q)) {
		bad_line(p, s, n, "a space is expected after the metric name");
		return;
	} else if (x.name == l) {
		*q++ = '\0';
	}
	memcpy(p->raw, s, (size_t)(q - l));
	p->raw[q - l] = '\0';
	x.series = p->raw;

	while (BLANK(*q))
		q++;
	if (num_token(q, e, &x.value, (const char **)&q)) {
		bad_line(p, s, n, "the value is not a number");
		return;
	}
	x.has_ts = 0;
	x.ts_ms = 0;
	while (BLANK(*q))
		q++;
	if (q < e && *q != '#') { /* "# {...}" is an OpenMetrics exemplar */
		const char *t = q;
		double ts;
		int sec;

		while (q < e && !BLANK(*q))
			q++;
		sec = memchr(t, '.', (size_t)(q - t)) || memchr(t, 'e', (size_t)(q - t)) || memchr(t, 'E', (size_t)(q - t));
		/* 0.0.4 writes integer milliseconds, OpenMetrics seconds with a fraction */
		if (expo_parse_number(t, (size_t)(q - t), &ts) || !isfinite(ts) || fabs(sec ? ts * 1000 : ts) >= 9.2e18) {
			bad_line(p, s, n, "the timestamp is not a number");
			return;
		}
		x.has_ts = 1;
		x.ts_ms = (int64_t)(sec ? ts * 1000 : ts);
	}
	if (sfx >= 0) {
		x.type = p->type;
		x.family = p->type_name;
		x.suffix = (enum expo_suffix)sfx;
	} else {
		x.type = EXPO_UNTYPED;
		x.family = x.name;
		x.suffix = EXPO_SFX_NONE;
	}
	cb(&x, ud);
}

size_t expo_parse(const char *text, size_t len, expo_cb cb, void *ud, char *err, size_t errsz)
{
	struct parser p;
	size_t i = 0;

	cls_init();
	memset(&p, 0, sizeof(p));
	/* the series key and the line to cut, each as long as the longest line can be, plus 16 bytes to read past */
	{
		size_t cap = (len < EXPO_MAX_LINE ? len : EXPO_MAX_LINE) + 1;

		p.raw = xcalloc(2 * cap + 16, 1);
		p.tok = p.raw + cap;
	}
	p.err = err;
	p.errsz = errsz;
	if (errsz)
		err[0] = '\0';
	while (i < len) {
		const char *s = text + i, *nl = memchr(s, '\n', len - i);
		size_t n = nl ? (size_t)(nl - s) : len - i;

		i += nl ? n + 1 : n;
		p.lineno++;
		if (n && s[n - 1] == '\r')
			n--;
		while (n && BLANK(*s)) {
			s++;
			n--;
		}
		if (!n)
			continue;
		if (*s == '#') {
			if (n >= 7 && !memcmp(s, "# TYPE", 6) && BLANK(s[6]))
				type_line(&p, s, n);
			else if (n >= 5 && !memcmp(s, "# EOF", 5) && (n == 5 || BLANK(s[5])))
				break;
			continue;
		}
		if (n > EXPO_MAX_LINE)
			bad(&p, "longer than the line cap");
		else
			sample_line(&p, s, n, cb, ud); /* a NUL byte stops its scans: a bad line */
	}
	free(p.raw);
	return p.bad;
}
