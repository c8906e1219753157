/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus / OpenMetrics text parser; see expo_parse.h.
 *
 * It reads each line where it lies (found with memchr), and copies only the
 * line's name and label set, once, as the series key. The name, the label
 * names and the label values the callback borrows come from caches of what
 * earlier lines had (a family's lines repeat the name and most labels; a
 * histogram's bounds and a server's models cycle): a label is compared
 * whole, `name="value"`, a word at a time with the one the previous line
 * had at its position, else with the one kept under a hash of its value's
 * first bytes, and is scanned and kept only when neither is it. What no
 * cache holds (long or escaped values) is written NUL-terminated into a
 * second buffer. Numbers take a fast path when they are plain decimals
 * that convert exactly (at most 15 digits, at most 22 after the point: one
 * correctly rounded division, the same double strtod gives), their digits
 * read a word at a time; everything else goes to strtod.
 *
 * Most lines are read against the previous sample line as one block
 * (fast_line): a histogram's buckets and a family's models differ from
 * the line before in one label and the value only, so the bytes up to
 * the first that differs are the previous sample's labels, the label
 * there is looked up, the rest of the label set is compared whole, and
 * the value's end is the line's end (no search for it). A line of any
 * other shape is read by sample_line() as if the attempt had not been
 * made. bench/expo_bench.sh measures it.
 */
#include "expo_parse.h"
#include "util.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_MAX 96 /* a multiple of 16 (copies are whole 16-byte blocks) */

/* Which suffixes a family of a TYPE's kind has (bit per enum expo_suffix). */
#define SFX(s) (1u << (s))
enum { K_PLAIN = SFX(EXPO_SFX_NONE) };

/*
 * A label some previous line had, as written (`name="value"`, a value
 * without escapes, nothing between): a line whose bytes are the same there
 * has the same label, compared a word at a time, not scanned. cut is the
 * same bytes with the '=' and the closing quote made NULs: the name and
 * the value the callback borrows.
 */
struct lcache {
	char chunk[CHUNK_MAX];
	char cut[CHUNK_MAX];
	size_t clen; /* 0: none */
	size_t nlen, vlen;
	size_t line; /* the line that last used it (its cut may be lent to that line's callback) */
	struct lcache *next; /* the label the line after had in its place, when it differed (NULL: none) */
};

#define LSLOTS_LOG2 7
#define LSLOTS (1u << LSLOTS_LOG2) /* the labels kept, by a hash of their name's length and value's first 16 bytes */

struct expo_parser {
	char *raw;       /* the series key; and the last line when it has no line end (scans need one) */
	char *tok;       /* tokens no cache holds (long, escaped), NUL-terminated */
	size_t cap;      /* bytes of each of raw and tok */
	const char *lim; /* the end of the readable bytes after the current line (word reads stop there) */
	char type_name[256];
	size_t type_len; /* 0: no TYPE line in force */
	int type_valid;  /* type_name is a metric name (NAME_START, then NAME_CHARs) */
	enum expo_type type;
	unsigned sfx;    /* the suffixes the family of the TYPE line has */
	char name[256];  /* the previous sample's name */
	size_t name_len; /* its length (0: none) */
	int name_sfx;    /* and its family_suffix() under the TYPE line in force */
	size_t bad, lineno;
	char *err;
	size_t errsz;
	struct lcache *at[EXPO_MAX_LABELS]; /* the label the previous line had at each position (NULL: none) */
	struct expo_sample x;               /* the previous sample line's, as lent to its callback */
	const char *prev;                   /* that line, where it lies in the text; NULL when x may not be reused */
	size_t lstart[EXPO_MAX_LABELS];     /* the offset in that line of each label's name */
	size_t lend[EXPO_MAX_LABELS];       /* and of the byte after its closing quote */
	int busy;                           /* a call is reading with it */
	struct lcache slot[LSLOTS];         /* labels kept (last: not zeroed) */
};

/*
 * Character classes: bit 1 a metric or label name's first character
 * ([a-zA-Z_:]), bit 2 any of its characters (those and [0-9]); bytes
 * from 0x80 on are neither.
 */
static const unsigned char cls[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x00 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x10 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x20 */
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 0, 0, 0, 0, 0, /* 0x30: digits, ':' */
	0, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, /* 0x40 */
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 0, 0, 0, 0, 3, /* 0x50: '_' */
	0, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, /* 0x60 */
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 0, 0, 0, 0, 0, /* 0x70 */
};

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

/* The first blank (' ', '\t') at or after q, or e: eight bytes at a time, as value_end. */
static const char *blank_at(const char *q, const char *e)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;

	while (e - q >= 8) {
		uint64_t x, a, b, m;

		memcpy(&x, q, 8);
		a = x ^ (ones * ' ');
		b = x ^ (ones * '\t');
		m = (((a - ones) & ~a) | ((b - ones) & ~b)) & highs;
		if (m)
			return q + (__builtin_ctzll(m) >> 3);
		q += 8;
	}
#endif
	while (q < e && *q != ' ' && *q != '\t')
		q++;
	return q;
}

#define NAME_START(c) (cls[(unsigned char)(c)] & 1)
#define NAME_CHAR(c) (cls[(unsigned char)(c)] & 2)
#define BLANK(c) ((c) == ' ' || (c) == '\t')

static void bad(struct expo_parser *p, const char *why)
{
	if (!p->bad++ && p->errsz)
		snprintf(p->err, p->errsz, "line %zu: %s", p->lineno, why);
}

/* A sample line that does not parse: a NUL byte in it is said first (it is what stopped the scan). */
static void bad_line(struct expo_parser *p, const char *s, size_t n, const char *why)
{
	bad(p, memchr(s, '\0', n) ? "a NUL byte" : why);
}

/*
 * The run of decimal digits at q, read as one word (8 bytes at q may be
 * read): its length (8: maybe longer, not read), *v its value. The
 * non-digit test is exact per byte (no carry crosses bytes), the digits
 * are combined pairwise by multiplications.
 */
static inline __attribute__((always_inline)) unsigned digits8(const char *q, uint64_t *v)
{
	uint64_t x, nd;
	unsigned len;

	memcpy(&x, q, 8);
	x ^= 0x3030303030303030ull; /* a digit's byte becomes 0..9 */
	nd = (((x & 0x7f7f7f7f7f7f7f7full) + 0x7676767676767676ull) | x) & 0x8080808080808080ull;
	len = nd ? (unsigned)__builtin_ctzll(nd) >> 3 : 8;
	if (!len || len == 8) {
		*v = 0;
		return len;
	}
	x <<= 8 * (8 - len); /* only the run, as the low digits of eight */
	x = (x * 10 + (x >> 8)) & 0x00ff00ff00ff00ffull;
	x = (x * 100 + (x >> 16)) & 0x0000ffff0000ffffull;
	*v = (x * 10000 + (x >> 32)) & 0xffffffffull;
	return len;
}

/*
 * The number token at q (up to a blank or e; q[e - q] is readable and no
 * digit; lim: how far words may be read): *end is where it ends, 0 with *v
 * set, or -1. Plain decimals of at most 15 digits, at most 22 of them
 * after the point, are an exact integer divided by an exact power of ten:
 * correctly rounded, as strtod would give ("12.0" needs no division);
 * anything else goes to strtod. Runs of fewer than 8 digits are read a
 * word at a time.
 */
static int num_token(const char *q, const char *e, const char *lim, double *v, const char **end)
{
	static const double p10[] = { 1e0,  1e1,	1e2,  1e3,  1e4,  1e5,	1e6,  1e7,  1e8,  1e9,	1e10, 1e11,
					 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
	static const uint64_t u10[] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000 };
	const char *s = q, *d0;
	uint64_t m = 0, mi, f;
	unsigned nz = 0, k, kf;
	long digits = 0, frac = 0;
	int neg = 0, read = 0;
	char tmp[128], *te;
	size_t n;

	if (q < e && (*q == '-' || *q == '+'))
		neg = *q++ == '-';
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (lim - q >= 24 && (k = digits8(q, &mi)) < 8) {
		const char *t = q + k;

		m = mi;
		digits = k;
		if (t[0] == '.' && t[1] == '0' && (t + 2 == e || (t + 2 < e && BLANK(t[2])))) { /* 12.0 */
			t += 2;
			m *= 10;
			frac = 1;
			digits++;
		} else if (*t == '.' && (kf = digits8(t + 1, &f)) < 8) {
			t += 1 + kf;
			m = m * u10[kf] + f;
			nz = f != 0;
			frac = kf;
			digits += kf;
		}
		if (t <= e && *t != '.') {
			q = t;
			read = 1;
		} else { /* a longer run: the loops below */
			m = 0;
			nz = 0;
			frac = 0;
		}
	}
#else
	(void)lim;
	(void)u10;
	(void)f;
	(void)k;
	(void)kf;
#endif
	if (!read) { /* the integer digits, then the fraction's: two tight loops */
		for (d0 = q; q < e && (unsigned char)(*q - '0') <= 9; q++)
			m = m * 10 + (unsigned)(*q - '0');
		mi = m;
		digits = q - d0;
		if (q < e && *q == '.') {
			const char *f0 = ++q;

			for (; q < e && (unsigned char)(*q - '0') <= 9; q++) {
				m = m * 10 + (unsigned)(*q - '0');
				nz |= (unsigned)(*q - '0');
			}
			frac = q - f0;
			digits += frac;
		}
	}
	if ((q == e || (q < e && BLANK(*q))) && digits && digits <= 15 && frac <= 22) {
		double d = nz ? (double)m / p10[frac] : (double)mi; /* "12.0" needs no division */

		*v = neg ? -d : d;
		*end = q;
		return 0;
	}
	q = s;
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
	return num_token(s, s + n, s + n, v, &end);
}

/* "# TYPE name kind": the family whose samples follow. Any other comment line is skipped. */
static void type_line(struct expo_parser *p, const char *s, size_t n)
{
	static const struct {
		const char *kind;
		size_t len;
		enum expo_type type;
		unsigned sfx;
	} kinds[] = {
		{ "counter", 7, EXPO_COUNTER, SFX(EXPO_SFX_NONE) | SFX(EXPO_SFX_TOTAL) | SFX(EXPO_SFX_CREATED) },
		{ "gauge", 5, EXPO_GAUGE, K_PLAIN },
		{ "histogram", 9, EXPO_HISTOGRAM,
		  SFX(EXPO_SFX_BUCKET) | SFX(EXPO_SFX_SUM) | SFX(EXPO_SFX_COUNT) | SFX(EXPO_SFX_CREATED) },
		{ "summary", 7, EXPO_SUMMARY,
		  SFX(EXPO_SFX_NONE) | SFX(EXPO_SFX_SUM) | SFX(EXPO_SFX_COUNT) | SFX(EXPO_SFX_CREATED) },
		{ "untyped", 7, EXPO_UNTYPED, K_PLAIN },
		{ "unknown", 7, EXPO_UNTYPED, K_PLAIN },
		{ "gaugehistogram", 14, EXPO_OTHER, SFX(EXPO_SFX_BUCKET) | SFX(EXPO_SFX_SUM) | SFX(EXPO_SFX_COUNT) },
		{ "info", 4, EXPO_OTHER, SFX(EXPO_SFX_INFO) },
		{ "stateset", 8, EXPO_OTHER, K_PLAIN },
	};
	const char *q = s + 6, *e = s + n, *name, *kind;
	size_t nl, kl;

	p->type_len = 0;
	p->name_len = 0; /* the previous name's suffix was under the previous TYPE */
	p->prev = NULL;
	while (q < e && BLANK(*q))
		q++;
	name = q;
	q = blank_at(q, e);
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
	/* family_name() reads a sample's name as this one only when it is a metric name */
	p->type_valid = NAME_START(name[0]);
	for (size_t i = 1; i < nl; i++) /* no branch a byte */
		p->type_valid &= cls[(unsigned char)name[i]] >> 1;
	p->type = EXPO_OTHER;
	p->sfx = K_PLAIN;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].len == kl && !memcmp(kind, kinds[i].kind, kl)) {
			p->type = kinds[i].type;
			p->sfx = kinds[i].sfx;
		}
}

/* The suffix name has after the TYPE line's family, or -1 when it is not of that family. */
static int family_suffix(const struct expo_parser *p, const char *name, size_t n)
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
 * Whether the n bytes at a and b are equal, a word at a time (no call):
 * both may be read 8 bytes far even when n is smaller (the line copy has
 * that slack, the caches are at least 8 bytes long).
 */
static inline int same(const char *a, const char *b, size_t n)
{
	uint64_t x, y;

	if (n >= 8) {
		for (size_t i = 0; i + 8 < n; i += 8) {
			memcpy(&x, a + i, 8);
			memcpy(&y, b + i, 8);
			if (x != y)
				return 0;
		}
		memcpy(&x, a + n - 8, 8); /* the last word, overlapping the one before */
		memcpy(&y, b + n - 8, 8);
		return x == y;
	}
	memcpy(&x, a, 8);
	memcpy(&y, b, 8);
	return !((x ^ y) & ((1ull << (8 * n)) - 1));
}

/* same(), where q may lie near lim, the end of what may be read (a, n bytes, ends before lim). */
static inline int same_at(const char *q, const char *lim, const char *c, size_t n)
{
	return (size_t)(lim - q) >= 8 ? same(q, c, n) : !memcmp(q, c, n);
}

/*
 * n bytes from src to dst in whole 16-byte blocks (short copies without a
 * call): both may be written or read up to 15 bytes past n, when src has
 * that much before lim; else a plain memcpy.
 */
static inline void copy16(char *dst, const char *src, size_t n, const char *lim)
{
	if ((size_t)(lim - src) < n + 16) {
		memcpy(dst, src, n);
		return;
	}
	for (size_t i = 0; i < n; i += 16)
		memcpy(dst + i, src + i, 16);
}

/*
 * The metric name at s (n bytes of line) when it is the family of the TYPE
 * line in force with one of its suffixes: its length, with *sfx set; 0 when
 * it is not (the caller scans it). No byte-by-byte scan of the family.
 */
static size_t family_name(const struct expo_parser *p, const char *s, size_t n, int *sfx)
{
	static const struct {
		const char *s;
		size_t n;
		enum expo_suffix sfx;
	} tail[] = { { "_bucket", 7, EXPO_SFX_BUCKET }, { "_sum", 4, EXPO_SFX_SUM },     { "_count", 6, EXPO_SFX_COUNT },
		     { "_total", 6, EXPO_SFX_TOTAL },   { "_created", 8, EXPO_SFX_CREATED }, { "_gsum", 5, EXPO_SFX_SUM },
		     { "_gcount", 7, EXPO_SFX_COUNT },  { "_info", 5, EXPO_SFX_INFO } };
	size_t t = p->type_len;

	if (!t || !p->type_valid || n <= t || !same_at(s, p->lim, p->type_name, t))
		return 0;
	if (!NAME_CHAR(s[t])) {
		*sfx = p->sfx & SFX(EXPO_SFX_NONE) ? EXPO_SFX_NONE : -1;
		return t;
	}
	for (size_t i = 0; i < ARRAY_SIZE(tail); i++)
		if (n - t > tail[i].n && !memcmp(s + t, tail[i].s, tail[i].n) && !NAME_CHAR(s[t + tail[i].n])) {
			*sfx = p->sfx & SFX(tail[i].sfx) ? (int)tail[i].sfx : -1;
			return t + tail[i].n;
		}
	return 0;
}

/*
 * One sample line: n bytes at s, no line end, no leading blank, and s[n]
 * readable and a line end (or NUL) that stops every scan. The line is read
 * where it lies. Its name, label names and label values come from caches
 * of what the previous lines had (a family's lines repeat their name, and
 * most labels: a label is compared whole, name="value", a word at a time);
 * one that differs is scanned once and cached. Only what the caches cannot
 * hold (long tokens, escaped values) is written out, into tok; the series
 * key, the line's name and label set, is copied into raw once the line has
 * parsed. A NUL byte in the line stops the scans, and is a bad line.
 */
/*
 * The metric name that starts sample line s (n bytes): the line's name and
 * *sfxp, its suffix in the current family (-1: not of it). *qp past it, *wp
 * past what was written into tok. 0, or -1 after bad_line().
 */
static int line_name(struct expo_parser *p, const char *s, size_t n, const char **qp, char **wp, int *sfxp)
{
	struct expo_sample *xp = &p->x;
	const char *q = s;
	char *w = *wp;
	size_t nl;
	int sfx;

	/* a family's samples follow each other: most lines repeat the previous line's name */
	nl = p->name_len;
	if (nl && nl < n && !NAME_CHAR(s[nl]) && same_at(s, p->lim, p->name, nl)) {
		q += nl;
		sfx = p->name_sfx;
		xp->name = p->name;
	} else {
		p->name_len = 0;
		if (!(nl = family_name(p, s, n, &sfx))) {
			if (!NAME_START(*q)) {
				bad_line(p, s, n, "a sample line starts with a metric name");
				return -1;
			}
			while (NAME_CHAR(*q))
				q++;
			nl = (size_t)(q - s);
			sfx = -2; /* not known yet */
		}
		q = s + nl;
		if (nl < sizeof(p->name)) {
			memcpy(p->name, s, nl);
			p->name[nl] = '\0';
			xp->name = p->name;
		} else { /* too long to keep */
			memcpy(w, s, nl);
			w[nl] = '\0';
			xp->name = w;
			w += nl + 1;
		}
		if (sfx == -2)
			sfx = family_suffix(p, xp->name, nl);
		if (xp->name == p->name) {
			p->name_len = nl;
			p->name_sfx = sfx;
		}
	}
	xp->name_len = nl;
	*qp = q;
	*wp = w;
	*sfxp = sfx;
	return 0;
}

/*
 * The rest of a label whose name (ll bytes at ln) no cache had: '=', the
 * quoted value, scanned from *qp. Kept in the slot c (when not NULL) if
 * short and unescaped, else written out into *wp (unescaped). Fills the
 * line's next label; *qp past the value. 0, or -1 after bad_line().
 */
static int label_value(struct expo_parser *p, const char *s, size_t n, const char *ln, size_t ll, struct lcache *c,
		       const char **qp, char **wp)
{
	struct expo_sample *xp = &p->x;
	struct expo_label *lb = &xp->labels[xp->nlabels];
	const char *e = s + n, *q = *qp, *r;
	char *w = *wp;
	size_t vl;

	while (BLANK(*q))
		q++;
	if (*q != '=') {
		bad_line(p, s, n, "'=' is expected after a label name");
		return -1;
	}
	q++;
	while (BLANK(*q))
		q++;
	if (*q != '"') {
		bad_line(p, s, n, "a label value is quoted");
		return -1;
	}
	q++;
	r = value_end(q, e);
	vl = (size_t)(r - q);
	if (c && *r == '"' && (size_t)(r + 1 - ln) <= sizeof(c->chunk)) {
		/* name="value", no escape, short: kept for the next lines */
		c->clen = (size_t)(r + 1 - ln);
		c->nlen = ll;
		c->vlen = vl;
		c->line = p->lineno;
		copy16(c->chunk, ln, c->clen, p->lim);
		copy16(c->cut, c->chunk, c->clen, c->chunk + sizeof(c->chunk));
		c->cut[ll] = '\0';
		c->cut[c->clen - 1] = '\0';
		lb->name = c->cut;
		lb->value = c->cut + ll + 2;
		p->at[xp->nlabels] = c;
		q = r + 1;
	} else {
		char *v;

		memcpy(w, ln, ll);
		w[ll] = '\0';
		lb->name = w;
		w += ll + 1;
		v = w;
		for (;;) { /* unescaped into tok */
			memcpy(w, q, (size_t)(r - q));
			w += r - q;
			q = r;
			if (*q == '"')
				break;
			if (q == e || !*q || ++q == e) {
				bad_line(p, s, n, "a label value is not closed");
				return -1;
			}
			if (*q == 'n')
				*w++ = '\n';
			else if (*q == '\\' || *q == '"')
				*w++ = *q;
			else {
				bad_line(p, s, n, "an unknown escape in a label value");
				return -1;
			}
			q++;
			r = value_end(q, e);
		}
		*w = '\0';
		vl = (size_t)(w - v);
		lb->value = v;
		w++;
		q++;
	}
	lb->name_len = ll;
	lb->value_len = vl;
	*qp = q;
	*wp = w;
	return 0;
}

/*
 * The label at *qp of sample line s (n bytes) into the line's next label
 * (the caller counts it): from the cache of the label at this place on the
 * previous line, or of its name and value's first bytes, else scanned
 * (label_value). *qp past it, *wp past what was written into tok. 0, or -1
 * after bad_line().
 */
static int line_label(struct expo_parser *p, const char *s, size_t n, const char **qp, char **wp)
{
	struct expo_sample *xp = &p->x;
	struct expo_label *lb = &xp->labels[xp->nlabels];
	const char *e = s + n, *q = *qp;
	char *w = *wp;
	struct lcache *c;

	p->lstart[xp->nlabels] = (size_t)(q - s);
	c = p->at[xp->nlabels];
	if (c && (size_t)(e - q) > c->clen && same_at(q, p->lim, c->chunk, c->clen)) {
		/* the cached value has no '"', '\\' or NUL: the same bytes are the same label */
		lb->name = c->cut;
		lb->name_len = c->nlen;
		lb->value = c->cut + c->nlen + 2;
		lb->value_len = c->vlen;
		c->line = p->lineno;
		q += c->clen;
	} else {
		const char *ln = q;
		size_t ll;
		int hit;

		p->at[xp->nlabels] = NULL;
		if (!NAME_START(*q)) {
			bad_line(p, s, n, "a label name is expected");
			return -1;
		}
		while (NAME_CHAR(*q))
			q++;
		ll = (size_t)(q - ln);
		c = NULL;
		hit = 0;
		if (q[0] == '=' && q[1] == '"' && p->lim - q >= 18) {
			/* kept from an earlier line? (values cycle: a histogram's bounds, model after model) */
			uint64_t v0, v1;

			memcpy(&v0, q + 2, 8);
			memcpy(&v1, q + 10, 8);
			v0 ^= ll ^ (v1 * 0x9e3779b97f4a7c15ull);
			v0 ^= v0 >> 33; /* mixed (MurmurHash3's finaliser): every byte reaches the top bits */
			v0 *= 0xff51afd7ed558ccdull;
			v0 ^= v0 >> 33;
			c = &p->slot[(v0 * 0xc4ceb9fe1a85ec53ull) >> (64 - LSLOTS_LOG2)];
			if (c->clen && c->nlen == ll && (size_t)(e - ln) > c->clen &&
			    same_at(ln, p->lim, c->chunk, c->clen)) {
				lb->name = c->cut;
				lb->name_len = ll;
				lb->value = c->cut + ll + 2;
				lb->value_len = c->vlen;
				c->line = p->lineno;
				p->at[xp->nlabels] = c;
				q = ln + c->clen;
				hit = 1;
			} else if (c->line == p->lineno) {
				c = NULL; /* lent to this line's callback already */
			}
		}
		if (!hit && label_value(p, s, n, ln, ll, c, &q, &w))
			return -1;
	}
	*qp = q;
	*wp = w;
	return 0;
}

static void sample_line(struct expo_parser *p, const char *s, size_t n, expo_cb cb, void *ud)
{
	struct expo_sample *xp = &p->x;
	const char *e = s + n, *q = s;
	char *w = p->tok;
	int sfx;

	p->prev = NULL;
	if (line_name(p, s, n, &q, &w, &sfx))
		return;
	xp->nlabels = 0;
	if (*q == '{') {
		q++;
		for (;;) {
			while (BLANK(*q))
				q++;
			if (*q == '}')
				break;
			if (xp->nlabels == EXPO_MAX_LABELS) {
				bad_line(p, s, n, "more labels than a sample may have");
				return;
			}
			if (line_label(p, s, n, &q, &w))
				return;
			p->lend[xp->nlabels++] = (size_t)(q - s);
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
	}
	xp->series_len = (size_t)(q - s);

	while (BLANK(*q))
		q++;
	if (num_token(q, e, p->lim, &xp->value, &q)) {
		bad_line(p, s, n, "the value is not a number");
		return;
	}
	xp->has_ts = 0;
	xp->ts_ms = 0;
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
		xp->has_ts = 1;
		xp->ts_ms = (int64_t)(sec ? ts * 1000 : ts);
	}
	if (s != p->raw)
		copy16(p->raw, s, xp->series_len, p->lim);
	p->raw[xp->series_len] = '\0';
	xp->series = p->raw;
	if (sfx >= 0) {
		xp->type = p->type;
		xp->family = p->type_name;
		xp->suffix = (enum expo_suffix)sfx;
	} else {
		xp->type = EXPO_UNTYPED;
		xp->family = xp->name;
		xp->suffix = EXPO_SFX_NONE;
	}
	xp->line = p->lineno;
	p->prev = NULL; /* reused by fast_line() when every token is in a cache, and the line is in the text */
	if (s != p->raw && xp->name == p->name) {
		size_t i = 0;

		while (i < xp->nlabels && p->at[i])
			i++;
		if (i == xp->nlabels)
			p->prev = s;
	}
	cb(xp, ud);
}

/*
 * The first byte of the n at q that is '"', '\\', NUL or a line end, as
 * value_end() (at least 8 bytes before lim; else q's byte-by-byte loop).
 */
static const char *value_end_nl(const char *q, const char *lim)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;

	while (lim - q >= 8) {
		uint64_t x, a, b, c, m;

		memcpy(&x, q, 8);
		a = x ^ (ones * '"');
		b = x ^ (ones * '\\');
		c = x ^ (ones * '\n');
		m = ((a - ones) & ~a) | ((b - ones) & ~b) | ((c - ones) & ~c) | ((x - ones) & ~x);
		m &= highs;
		if (m)
			return q + (__builtin_ctzll(m) >> 3);
		q += 8;
	}
#endif
	while (q < lim && *q != '"' && *q != '\\' && *q != '\n' && *q)
		q++;
	return q;
}

/*
 * The offset of the first byte where the n bytes at a and b differ (n when
 * none), a word at a time; both may be read 8 bytes past n.
 */
static inline size_t diff_at(const char *a, const char *b, size_t n)
{
	size_t i = 0;
	uint64_t x, y;

	for (; i < n; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y) {
			i += (unsigned)__builtin_ctzll(x ^ y) >> 3;
			return i < n ? i : n;
		}
	}
	return n;
}

/*
 * The label name="value" at ln (lim - ln >= 32 + CHUNK_MAX), the line's
 * k-th, found in the table of kept labels as sample_line() finds it, or
 * read and kept there: its cache, or NULL when it is not such a label
 * (escaped, long, not closed on its line) or its slot holds one of the
 * line's other labels (the previous line's at[], which this line reuses).
 */
static struct lcache *fast_label(struct expo_parser *p, size_t k, const char *ln, const char *lim)
{
	const char *q = ln, *r;
	struct lcache *c;
	uint64_t v0, v1;
	size_t ll;

	if (!NAME_START(*q))
		return NULL;
	while (NAME_CHAR(*q))
		q++;
	ll = (size_t)(q - ln);
	if (q[0] != '=' || q[1] != '"')
		return NULL;
	memcpy(&v0, q + 2, 8);
	memcpy(&v1, q + 10, 8);
	v0 ^= ll ^ (v1 * 0x9e3779b97f4a7c15ull); /* the hash sample_line() uses */
	v0 ^= v0 >> 33;
	v0 *= 0xff51afd7ed558ccdull;
	v0 ^= v0 >> 33;
	c = &p->slot[(v0 * 0xc4ceb9fe1a85ec53ull) >> (64 - LSLOTS_LOG2)];
	if (c->clen && c->nlen == ll && same(ln, c->chunk, c->clen))
		return c; /* a kept label holds no line end, nor NUL */
	if (c->line == p->lineno)
		return NULL; /* lent to this line */
	for (size_t i = 0; i < p->x.nlabels; i++)
		if (i != k && p->at[i] == c)
			return NULL; /* the others are this line's too: not to be replaced */
	r = value_end_nl(q + 2, lim);
	if (*r != '"' || (size_t)(r + 1 - ln) > sizeof(c->chunk))
		return NULL;
	c->clen = (size_t)(r + 1 - ln);
	c->nlen = ll;
	c->vlen = (size_t)(r - q - 2);
	c->next = NULL;
	copy16(c->chunk, ln, c->clen, lim);
	copy16(c->cut, c->chunk, c->clen, c->chunk + sizeof(c->chunk));
	c->cut[ll] = '\0';
	c->cut[c->clen - 1] = '\0';
	return c;
}

/*
 * The common line of a histogram or of a model's series, read against the
 * previous sample line (p->prev, whose every token was in a cache): the
 * same bytes up to one label that differs, that label found in or added
 * to the cache of labels, the same bytes after it up to the end of the
 * label set, then a plain decimal value and the line end. The parse of
 * that line is the previous one's with that label and the value replaced:
 * p->x is changed only there, and the line end is known without a search.
 * Returns the bytes of the line with its line end once its callback ran,
 * or 0 when the line is not of that shape: nothing was lent or counted,
 * sample_line() reads it (some caches may have changed, never what a
 * label reads as). s is before lim, the text's end; the caller has
 * counted the line.
 */
static size_t fast_line(struct expo_parser *p, const char *s, const char *lim, expo_cb cb, void *ud)
{
	static const double p10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7 };
	static const uint64_t u10[] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000 };
	struct expo_sample *xp = &p->x;
	const char *ps = p->prev, *q, *ln, *t;
	size_t sl = xp->series_len, d, k, nk, tail, ll, len;
	struct lcache *c;
	uint64_t m, f;
	unsigned ki, kf;
	double v;

#if !(defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
	return 0;
#endif
	if (!xp->nlabels || (size_t)(lim - s) < sl + 128)
		return 0;
	d = diff_at(s, ps, sl);
	if (d <= p->lstart[0] || d >= p->lend[xp->nlabels - 1])
		return 0; /* the name, or the label set's brace or end, differs (or nothing does) */
	for (k = 0; p->lend[k] <= d; k++)
		;
	if (d < p->lstart[k])
		return 0; /* a separator differs */
	/* label k: its name, then a cached name="value" or one read and cached here */
	ln = q = s + p->lstart[k];
	if (lim - q < 32 + CHUNK_MAX)
		return 0;
	c = p->at[k]->next; /* a histogram's bounds follow each other in the same order: tried first */
	if (c && c->clen && same(ln, c->chunk, c->clen))
		q = ln + c->clen;
	else if ((c = fast_label(p, k, ln, lim)))
		q = ln + c->clen;
	else
		return 0;
	ll = c->nlen;
	/* the rest of the label set as the previous line had it */
	tail = sl - p->lend[k];
	if ((size_t)(lim - q) < tail + 40 || !same(q, ps + p->lend[k], tail))
		return 0;
	nk = (size_t)(q - s); /* label k's end here */
	q += tail;
	/* the value: a plain decimal of at most 7 + 7 digits, then the line end */
	if (*q++ != ' ' || (ki = digits8(q, &m)) - 1 > 6)
		return 0;
	t = q + ki;
	f = 0;
	kf = 0;
	if (t[0] == '.' && t[1] == '0' && t[2] == '\n') { /* a count as Python's clients write it, 12.0 */
		t += 2;
		kf = 1;
	} else if (*t == '.') {
		if ((kf = digits8(t + 1, &f)) == 8)
			return 0;
		t += 1 + kf;
	}
	if (*t != '\n')
		return 0;
	v = f ? (double)(m * u10[kf] + f) / p10[kf] : (double)m;
	len = (size_t)(t + 1 - s);
	if (len > EXPO_MAX_LINE || len + 64 > p->cap)
		return 0;
	/* committed: label k is c, the labels after it moved by the length it changed by */
	p->at[k]->next = c;
	p->at[k] = c;
	c->line = p->lineno;
	xp->labels[k].name = c->cut;
	xp->labels[k].name_len = ll;
	xp->labels[k].value = c->cut + ll + 2;
	xp->labels[k].value_len = c->vlen;
	for (size_t i = k + 1; i < xp->nlabels; i++) {
		p->lstart[i] = p->lstart[i] + nk - p->lend[k];
		p->lend[i] = p->lend[i] + nk - p->lend[k];
	}
	p->lend[k] = nk;
	xp->series_len = nk + tail;
	xp->value = v;
	xp->has_ts = 0;
	xp->ts_ms = 0;
	copy16(p->raw + (d & ~(size_t)15), s + (d & ~(size_t)15), xp->series_len - (d & ~(size_t)15), lim);
	p->raw[xp->series_len] = '\0';
	p->prev = s;
	xp->line = p->lineno;
	cb(xp, ud);
	return len;
}

struct expo_parser *expo_parser_new(void)
{
	return xcalloc(1, sizeof(struct expo_parser));
}

void expo_parser_free(struct expo_parser *p)
{
	if (!p)
		return;
	free(p->raw);
	free(p);
}

/*
 * The caller's parser (30 kB: not on the stack) and its buffers are kept
 * for its next call: a call allocates nothing (a block that large, each
 * call, made malloc consolidate every small block freed since, such as a
 * report's JSON). A call without one, or made while it is in use (from
 * its own callback), gets one for that call alone.
 */
size_t expo_parse(struct expo_parser *kept, const char *text, size_t len, expo_cb cb, void *ud, char *err,
		  size_t errsz)
{
	int own = !kept || kept->busy;
	struct expo_parser *p = own ? expo_parser_new() : kept;
	size_t i = 0, nbad, cap;
	char *raw;

	raw = p->raw;
	cap = p->cap;
	memset(p, 0, offsetof(struct expo_parser, slot));
	p->busy = 1;
	p->raw = raw;
	p->cap = cap;
	p->tok = raw ? raw + cap : NULL;
	for (size_t k = 0; k < LSLOTS; k++) {
		p->slot[k].clen = 0;
		p->slot[k].line = 0; /* lines count from 1 */
		p->slot[k].next = NULL;
	}
	p->err = err;
	p->errsz = errsz;
	if (errsz)
		err[0] = '\0';
	while (i < len) {
		const char *s = text + i, *nl;
		size_t n;

		p->lineno++;
		if (p->prev && *s != '#' && (n = fast_line(p, s, text + len, cb, ud))) {
			i += n;
			continue;
		}
		nl = memchr(s, '\n', len - i);
		n = nl ? (size_t)(nl - s) : len - i;
		i += nl ? n + 1 : n;
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
				type_line(p, s, n);
			else if (n >= 5 && !memcmp(s, "# EOF", 5) && (n == 5 || BLANK(s[5])))
				break;
			continue;
		}
		if (n > EXPO_MAX_LINE) {
			bad(p, "longer than the line cap");
			continue;
		}
		if (n + 64 > p->cap) { /* the series key and the tokens: as long as the longest line, plus 64 bytes */
			p->cap = n + 64 > 2 * p->cap ? n + 64 : 2 * p->cap;
			if (p->cap < 1024)
				p->cap = 1024;
			free(p->raw);
			p->raw = xmalloc(2 * p->cap);
			p->tok = p->raw + p->cap;
		}
		if (s + n < text + len) { /* s[n] is its line end: read in place */
			p->lim = text + len;
			sample_line(p, s, n, cb, ud); /* a NUL byte stops its scans: a bad line */
		} else { /* the last line, without a line end: copied to end with a NUL */
			memcpy(p->raw, s, n);
			memset(p->raw + n, 0, 64); /* the slack word reads may touch: defined */
			p->lim = p->raw + n + 64;
			sample_line(p, p->raw, n, cb, ud);
		}
	}
	nbad = p->bad;
	if (own)
		expo_parser_free(p);
	else
		p->busy = 0;
	return nbad;
}
