/* SPDX-License-Identifier: MIT */
/* CSV fields, numbers, timestamps, series names and column tables; see csv_format.h. */
#include "csv_format.h"
#include "../../common/schema.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const csv_ts_names[CSV_TS_COUNT] = { "iso8601", "unix", "unix_ms" };
const char *const csv_ts_columns[CSV_TS_COUNT] = { "timestamp", "timestamp_unix", "timestamp_unix_ms" };

const unsigned char csv_special[256] = { [','] = 1, ['"'] = 1, ['\r'] = 1, ['\n'] = 1 };
const unsigned char csv_formula_start[256] = { ['='] = 1, ['+'] = 1, ['-'] = 1, ['@'] = 1, ['\t'] = 1, ['\r'] = 1 };

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int csv_is_number(const char *s, size_t n)
{
	size_t i = 0, digits = 0;

	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	for (; i < n && is_digit(s[i]); i++)
		digits++;
	if (i < n && s[i] == '.')
		for (i++; i < n && is_digit(s[i]); i++)
			digits++;
	if (!digits)
		return 0;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		size_t e = 0;

		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		for (; i < n && is_digit(s[i]); i++)
			e++;
		if (!e)
			return 0;
	}
	return i == n;
}

/* csv_put_field()'s path for a field that starts like a formula (csv_format.h). */
char *csv_put_formula(char *d, const char *s, size_t n)
{
	size_t i = 0;
	char *end;

	if (csv_is_number(s, n)) {
		memcpy(d, s, n);
		return d + n;
	}
	while (i < n && !csv_special[(unsigned char)s[i]])
		i++;
	if (i == n) {
		*d++ = '\'';
		memcpy(d, s, n);
		return d + n;
	}
	/* Quoted: the ' goes inside the quotes, as the value's first byte ("'=A1,B1"). */
	end = csv_put_quoted(d + 1, s, n);
	d[0] = '"';
	d[1] = '\'';
	return end;
}

char *csv_put_quoted(char *d, const char *s, size_t n)
{
	const char *q;

	*d++ = '"';
	/* Copy up to and including each quote, then the quote again. */
	while ((q = memchr(s, '"', n))) {
		size_t k = (size_t)(q - s) + 1;

		memcpy(d, s, k);
		d += k;
		*d++ = '"';
		s += k;
		n -= k;
	}
	memcpy(d, s, n);
	d += n;
	*d++ = '"';
	return d;
}

int csv_name(struct buf *b, const char *s, size_t n)
{
	size_t i = 0;
	int rc = buf_reserve(b, CSV_FIELD_MAX(n));

	if (rc)
		return rc;
	while (i < n && !csv_special[(unsigned char)s[i]])
		i++;
	if (i < n) {
		b->len = (size_t)(csv_put_quoted(b->data + b->len, s, n) - b->data);
		b->data[b->len] = '\0';
		return 0;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int csv_field(struct buf *b, const char *s, size_t n, int formula_escape)
{
	int rc = buf_reserve(b, CSV_FIELD_MAX(n));

	if (rc)
		return rc;
	b->len = (size_t)(csv_put_field(b->data + b->len, s, n, formula_escape) - b->data);
	b->data[b->len] = '\0';
	return 0;
}

/* Unsigned decimal, right to left; returns the length written at dst. */
static size_t utoa(uint64_t u, char *dst)
{
	char tmp[24];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	for (size_t i = 0; i < n; i++)
		dst[i] = tmp[n - 1 - i];
	return n;
}

/* Powers of ten, exact as doubles up to 1e22. */
static const double pow10d[23] = { 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
				   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

/* Write m (nd digits, its decimal exponent e: m = d.ddd x 10^e) the way %g does; returns the length. */
static size_t format_g(char *dst, int neg, uint64_t m, int e)
{
	char dig[24];
	int nd = 0;
	size_t n = 0;

	for (uint64_t t = m; t; t /= 10)
		dig[nd++] = (char)('0' + t % 10); /* reversed */
	if (neg)
		dst[n++] = '-';
	if (e < -4) {
		/* d.ddde-XX */
		dst[n++] = dig[nd - 1];
		if (nd > 1) {
			dst[n++] = '.';
			for (int i = nd - 2; i >= 0; i--)
				dst[n++] = dig[i];
		}
		dst[n++] = 'e';
		dst[n++] = '-';
		if (-e >= 100)
			dst[n++] = (char)('0' + (-e) / 100);
		dst[n++] = (char)('0' + (-e) / 10 % 10);
		dst[n++] = (char)('0' + (-e) % 10);
	} else if (e < 0) {
		/* 0.000ddd */
		dst[n++] = '0';
		dst[n++] = '.';
		for (int i = 0; i < -e - 1; i++)
			dst[n++] = '0';
		for (int i = nd - 1; i >= 0; i--)
			dst[n++] = dig[i];
	} else {
		/* ddd.ddd: e + 1 digits before the point */
		for (int i = nd - 1, k = 0; i >= 0; i--, k++) {
			if (k == e + 1)
				dst[n++] = '.';
			dst[n++] = dig[i];
		}
		for (int k = nd; k < e + 1; k++)
			dst[n++] = '0';
	}
	dst[n] = '\0';
	return n;
}

__extension__ typedef unsigned __int128 u128;

/*
 * a x 10^s rounded to an integer, half to even, exactly: a = M x 2^E with
 * M < 2^53, and M x 5^s < 2^116 for s <= 27, so a x 10^s = M x 5^s x 2^(s+E)
 * is one 128-bit product and a shift. The caller keeps the result below 2^64.
 */
static uint64_t scaled_round(double a, int s)
{
	static const uint64_t p5[28] = { /* 5^0 .. 5^27 */
		1ULL, 5ULL, 25ULL, 125ULL,
		625ULL, 3125ULL, 15625ULL, 78125ULL,
		390625ULL, 1953125ULL, 9765625ULL, 48828125ULL,
		244140625ULL, 1220703125ULL, 6103515625ULL, 30517578125ULL,
		152587890625ULL, 762939453125ULL, 3814697265625ULL, 19073486328125ULL,
		95367431640625ULL, 476837158203125ULL, 2384185791015625ULL, 11920928955078125ULL,
		59604644775390625ULL, 298023223876953125ULL, 1490116119384765625ULL, 7450580596923828125ULL,
	};
	int ex, k;
	uint64_t mant;
	u128 prod, rem, half, q;

	mant = (uint64_t)ldexp(frexp(a, &ex), 53); /* a = mant x 2^(ex - 53) */
	prod = (u128)mant * p5[s];
	k = -(s + ex - 53); /* prod x 2^-k */
	if (k <= 0)
		return (uint64_t)(prod << -k);
	if (k >= 127)
		return 0;
	q = prod >> k;
	rem = prod & (((u128)1 << k) - 1);
	half = (u128)1 << (k - 1);
	if (rem > half || (rem == half && (q & 1)))
		q++;
	return (uint64_t)q;
}

/*
 * The fast path for a non-integral |v| in [1e-11, 1e15): the digits %.15g,
 * %.16g and %.17g print (correctly rounded, half to even, as glibc does),
 * stripped of trailing zeros, written like %g, checked to read back as v:
 * for 15 digits with one correctly rounded division (m / 10^q with m < 2^53
 * and q <= 22 gives the double strtod() gives), for 16 with strtod(); 17
 * correctly rounded digits always read back. Returns the length, or 0 for
 * the slow path.
 */
static size_t double_fast(double v, char *dst)
{
	static const uint64_t lim[19] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
					  1000000000, 10000000000ull, 100000000000ull, 1000000000000ull,
					  10000000000000ull, 100000000000000ull, 1000000000000000ull,
					  10000000000000000ull, 100000000000000000ull, 1000000000000000000ull };
	double a = fabs(v);
	int e0;

	if (!(a >= 1e-11 && a < 1e15))
		return 0;
	e0 = (int)floor(log10(a));
	for (int p = 15; p <= 17; p++) {
		int e = e0, s = 0, z = 0, q, ok;
		uint64_t m = 0;
		size_t n;

		/* m: the p-digit mantissa (log10 can be off by one near a power of ten) */
		for (int tries = 0; tries < 3; tries++) {
			s = p - 1 - e;
			if (s < 0 || s > 27)
				return 0;
			m = scaled_round(a, s);
			if (m >= lim[p] && m != lim[p])
				e++;
			else if (m < lim[p - 1])
				e--;
			else
				break;
		}
		if (m == lim[p]) { /* rounded up to the next power of ten */
			m = lim[p - 1];
			e++;
			s--;
		}
		if (m >= lim[p] || m < lim[p - 1])
			return 0;
		while (m % 10 == 0 && z < p - 1) {
			m /= 10;
			z++;
		}
		if (p > 15 && m < lim[15])
			continue; /* no more digits than the shorter try, which did not read back */
		q = s - z; /* a == m / 10^q, if it reads back */
		if (q <= 0)
			return 0; /* integral: not this path's */
		n = format_g(dst, v < 0, m, e);
		if (p == 15)
			ok = q <= 22 ? (double)m / pow10d[q] == a : strtod(dst, NULL) == v;
		else
			ok = p == 17 || strtod(dst, NULL) == v;
		if (ok)
			return n;
	}
	return 0;
}

size_t csv_double(double v, char dst[CSV_DOUBLE_LEN])
{
	size_t n;

	if (!isfinite(v)) {
		const char *t = isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";

		strcpy(dst, t);
		return strlen(t);
	}
	/* Integral and exactly representable: digits only ("-0" keeps the sign of zero). */
	if (v == trunc(v) && fabs(v) < 9007199254740992.0) {
		n = 0;
		if (signbit(v))
			dst[n++] = '-';
		n += utoa((uint64_t)fabs(v), dst + n);
		dst[n] = '\0';
		return n;
	}
	if ((n = double_fast(v, dst)))
		return n;
	for (int prec = 15; prec <= 17; prec++) {
		int k = snprintf(dst, CSV_DOUBLE_LEN, "%.*g", prec, v);

		if (prec == 17 || strtod(dst, NULL) == v)
			return (size_t)k;
	}
	return 0; /* not reached: %.17g always reads back */
}

static void two(char *d, int v)
{
	d[0] = (char)('0' + v / 10 % 10);
	d[1] = (char)('0' + v % 10);
}

/* Split ms into whole seconds (floor) and a 0..999 remainder. */
static void split_ms(int64_t ms, int64_t *sec, int *rem)
{
	*sec = ms / 1000;
	*rem = (int)(ms % 1000);
	if (*rem < 0) {
		*rem += 1000;
		(*sec)--;
	}
}

size_t csv_timestamp(int64_t ms, enum csv_ts_format f, char dst[CSV_TS_LEN])
{
	int64_t sec;
	int rem;
	size_t n = 0;
	struct tm tm;
	time_t t;

	switch (f) {
	case CSV_TS_UNIX_MS:
		if (ms < 0)
			dst[n++] = '-';
		n += utoa(ms < 0 ? (uint64_t)0 - (uint64_t)ms : (uint64_t)ms, dst + n);
		break;
	case CSV_TS_UNIX: {
		uint64_t a = ms < 0 ? (uint64_t)0 - (uint64_t)ms : (uint64_t)ms;

		if (ms < 0)
			dst[n++] = '-';
		n += utoa(a / 1000, dst + n);
		dst[n++] = '.';
		dst[n++] = (char)('0' + a % 1000 / 100);
		two(dst + n, (int)(a % 100));
		n += 2;
		break;
	}
	default:
		split_ms(ms, &sec, &rem);
		t = (time_t)sec;
		if (!gmtime_r(&t, &tm) || tm.tm_year + 1900 < 0 || tm.tm_year + 1900 > 9999) {
			n = (size_t)snprintf(dst, CSV_TS_LEN, "%lld", (long long)ms);
			return n;
		}
		two(dst, (tm.tm_year + 1900) / 100);
		two(dst + 2, (tm.tm_year + 1900) % 100);
		dst[4] = '-';
		two(dst + 5, tm.tm_mon + 1);
		dst[7] = '-';
		two(dst + 8, tm.tm_mday);
		dst[10] = 'T';
		two(dst + 11, tm.tm_hour);
		dst[13] = ':';
		two(dst + 14, tm.tm_min);
		dst[16] = ':';
		two(dst + 17, tm.tm_sec);
		dst[19] = '.';
		dst[20] = (char)('0' + rem / 100);
		two(dst + 21, rem % 100);
		dst[23] = 'Z';
		n = 24;
		break;
	}
	dst[n] = '\0';
	return n;
}

void csv_date(int64_t ms, char dst[11])
{
	int64_t sec;
	int rem;
	time_t t;
	struct tm tm;

	split_ms(ms, &sec, &rem);
	t = (time_t)sec;
	if (!gmtime_r(&t, &tm) || tm.tm_year + 1900 < 0 || tm.tm_year + 1900 > 9999)
		memset(&tm, 0, sizeof(tm));
	snprintf(dst, 11, "%04d-%02d-%02d", (tm.tm_year + 1900) % 10000, (tm.tm_mon + 1) % 100, tm.tm_mday % 100);
}

/* Bytes that make a label value in a series name be written quoted: ,{}="\ and control characters. */
static const unsigned char label_special[256] = {
	[1] = 1, [2] = 1, [3] = 1, [4] = 1, [5] = 1, [6] = 1, [7] = 1, [8] = 1, [9] = 1, [10] = 1, [11] = 1,
	[12] = 1, [13] = 1, [14] = 1, [15] = 1, [16] = 1, [17] = 1, [18] = 1, [19] = 1, [20] = 1, [21] = 1,
	[22] = 1, [23] = 1, [24] = 1, [25] = 1, [26] = 1, [27] = 1, [28] = 1, [29] = 1, [30] = 1, [31] = 1,
	[','] = 1, ['{'] = 1, ['}'] = 1, ['='] = 1, ['"'] = 1, ['\\'] = 1,
};

/* A label value that would make a series name ambiguous is written quoted. */
static int label_needs_quotes(const char *v)
{
	if (!*v)
		return 1;
	for (; *v; v++)
		if (label_special[(unsigned char)*v])
			return 1;
	return 0;
}

static int add_label_value(struct buf *b, const char *v)
{
	int rc;

	if (!label_needs_quotes(v))
		return buf_add(b, v, strlen(v));
	rc = buf_add(b, "\"", 1);
	for (; !rc && *v; v++) {
		switch (*v) {
		case '"':
			rc = buf_add(b, "\\\"", 2);
			break;
		case '\\':
			rc = buf_add(b, "\\\\", 2);
			break;
		case '\n':
			rc = buf_add(b, "\\n", 2);
			break;
		case '\r':
			rc = buf_add(b, "\\r", 2);
			break;
		default:
			rc = buf_add(b, v, 1);
		}
	}
	return rc ? rc : buf_add(b, "\"", 1);
}

static int skipped(const char *name, const char *const *skip)
{
	for (; skip && *skip; skip++)
		if (!strcmp(name, *skip))
			return 1;
	return 0;
}

int csv_labels(struct buf *b, const struct sample *s, size_t first, const char *const *skip, size_t *count)
{
	int rc = 0;

	*count = 0;
	for (size_t i = first; !rc && i < s->nlabels; i++) {
		const struct label *l = &s->labels[i];

		if (skipped(l->name, skip))
			continue;
		if (*count)
			rc = buf_add(b, ",", 1);
		if (!rc)
			rc = buf_add(b, l->name, strlen(l->name));
		if (!rc)
			rc = buf_add(b, "=", 1);
		if (!rc)
			rc = add_label_value(b, l->value);
		++*count;
	}
	return rc;
}

size_t csv_series_max(const struct sample *s)
{
	size_t n = strlen(s->fam->name) + 2;

	for (size_t i = 0; i < s->nlabels; i++)
		n += strlen(s->labels[i].name) + 2 * strlen(s->labels[i].value) + 4;
	return n;
}

char *csv_put_series(char *d, const struct sample *s, size_t first, const char *const *skip, const size_t *nlen,
		     const size_t *vlen, int *csv_quote)
{
	size_t n = strlen(s->fam->name), count = 0;

	*csv_quote = 0;
	memcpy(d, s->fam->name, n);
	d += n;
	for (size_t i = first; i < s->nlabels; i++) {
		const char *v = s->labels[i].value;

		if (skip && skipped(s->labels[i].name, skip))
			continue;
		*d++ = count++ ? ',' : '{';
		n = nlen ? nlen[i] : strlen(s->labels[i].name);
		memcpy(d, s->labels[i].name, n);
		d += n;
		*d++ = '=';
		if (!label_needs_quotes(v)) {
			n = vlen ? vlen[i] : strlen(v);
			memcpy(d, v, n);
			d += n;
			continue;
		}
		*csv_quote = 1;
		*d++ = '"';
		for (; *v; v++) {
			switch (*v) {
			case '"':
			case '\\':
				*d++ = '\\';
				*d++ = *v;
				break;
			case '\n':
				*d++ = '\\';
				*d++ = 'n';
				break;
			case '\r':
				*d++ = '\\';
				*d++ = 'r';
				break;
			default:
				*d++ = *v;
			}
		}
		*d++ = '"';
	}
	if (count)
		*d++ = '}';
	if (count > 1)
		*csv_quote = 1;
	return d;
}

int csv_series(struct buf *b, const struct sample *s, size_t first, const char *const *skip)
{
	int rc = buf_reserve(b, csv_series_max(s)), q;

	if (rc)
		return rc;
	b->len = (size_t)(csv_put_series(b->data + b->len, s, first, skip, NULL, NULL, &q) - b->data);
	b->data[b->len] = '\0';
	return 0;
}

/* ---- columns from the schema ------------------------------------------------ */

size_t csv_label_columns(const char **names, size_t max)
{
	size_t n = 0;

	for (int inst = 0; inst < 2; inst++)
		for (size_t i = 0; i < LBL_COUNT; i++) {
			const struct schema_label *l = &schema_labels[i];

			if (!(l->flags & LABEL_CSV_COLUMN) || (l->kind == LK_INSTANCE) != inst)
				continue;
			if (n < max)
				names[n] = l->name;
			n++;
		}
	return n;
}

int csv_row_key_label(const char *name)
{
	const struct schema_label *l = schema_label(name);

	return l && (l->kind == LK_DEVICE || (l->kind == LK_RUNTIME && l != &schema_labels[LBL_RUNTIME_TAG]));
}

/* ---- string vectors and records ------------------------------------------ */

void csv_strv_push(struct csv_strv *sv, const char *s, size_t n)
{
	char *c = xmalloc(n + 1);

	memcpy(c, s, n);
	c[n] = '\0';
	if (sv->n == sv->alloc) {
		sv->alloc = sv->alloc ? sv->alloc * 2 : 16;
		sv->v = xrealloc(sv->v, sv->alloc * sizeof(*sv->v));
	}
	sv->v[sv->n++] = c;
}

static void strv_truncate(struct csv_strv *sv, size_t n)
{
	while (sv->n > n)
		free(sv->v[--sv->n]);
}

void csv_strv_clear(struct csv_strv *sv)
{
	strv_truncate(sv, 0);
}

void csv_strv_free(struct csv_strv *sv)
{
	csv_strv_clear(sv);
	free(sv->v);
	sv->v = NULL;
	sv->alloc = 0;
}

int csv_parse_record(const char *p, size_t n, int eof, struct csv_strv *out, size_t *used)
{
	size_t start = out->n, i = 0;
	struct buf f;

	buf_init(&f, SIZE_MAX / 2);
	for (;;) {
		size_t s, e;

		buf_reset(&f);
		if (i < n && p[i] == '"') {
			i++;
			for (;;) {
				const char *q = memchr(p + i, '"', n - i);

				if (!q) { /* unterminated */
					if (!eof)
						goto incomplete;
					buf_add(&f, p + i, n - i);
					i = n;
					break;
				}
				buf_add(&f, p + i, (size_t)(q - (p + i)));
				i = (size_t)(q - p) + 1;
				if (i < n && p[i] == '"') {
					buf_add(&f, "\"", 1);
					i++;
					continue;
				}
				if (i == n && !eof)
					goto incomplete; /* the next byte could be a second quote */
				break;
			}
		}
		/* The unquoted field, or whatever follows a closing quote before the separator. */
		s = i;
		while (i < n && p[i] != ',' && p[i] != '\n')
			i++;
		if (i == n && !eof)
			goto incomplete;
		e = i;
		if ((i == n || p[i] == '\n') && e > s && p[e - 1] == '\r')
			e--;
		buf_add(&f, p + s, e - s);
		csv_strv_push(out, f.data ? f.data : "", f.len);
		if (i < n && p[i] == ',') {
			i++;
			continue;
		}
		if (i < n)
			i++; /* the LF */
		*used = i;
		buf_free(&f);
		return 1;
	}
incomplete:
	strv_truncate(out, start);
	buf_free(&f);
	return 0;
}

long csv_scan_records(struct csv_scan *st, const char *p, size_t n)
{
	enum csv_scan_state q = st->state;
	long last = -1;
	size_t i = 0;

	while (i < n) {
		const char *x;

		switch (q) {
		case CSV_SCAN_QUOTED:
			/* The bulk of a quoted field: skip to its next quote. */
			x = memchr(p + i, '"', n - i);
			if (!x) {
				i = n;
				break;
			}
			i = (size_t)(x - p) + 1;
			q = CSV_SCAN_QUOTE;
			break;
		case CSV_SCAN_QUOTE:
			if (p[i] == '"') {
				q = CSV_SCAN_QUOTED; /* a doubled quote */
				i++;
				break;
			}
			q = CSV_SCAN_BARE;
			break;
		case CSV_SCAN_FIELD:
			if (p[i] == '"') {
				q = CSV_SCAN_QUOTED;
				i++;
				break;
			}
			q = CSV_SCAN_BARE;
			/* fall through */
		case CSV_SCAN_BARE:
			while (i < n && p[i] != ',' && p[i] != '\n')
				i++;
			if (i == n)
				break;
			if (p[i] == '\n')
				last = (long)i + 1;
			q = CSV_SCAN_FIELD;
			i++;
			break;
		}
	}
	st->state = q;
	return last;
}

int csv_parse_size(const char *s, uint64_t *bytes)
{
	uint64_t v = 0, mult = 1;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	switch (*p) {
	case '\0':
		break;
	case 'k':
	case 'K':
		mult = 1ULL << 10;
		p++;
		break;
	case 'M':
		mult = 1ULL << 20;
		p++;
		break;
	case 'G':
		mult = 1ULL << 30;
		p++;
		break;
	default:
		return -EINVAL;
	}
	if (*p || v == 0 || v > UINT64_MAX / mult)
		return -EINVAL;
	*bytes = v * mult;
	return 0;
}

/* ---- column index ---------------------------------------------------------- */

/* A multiply-xorshift hash over 8-byte words (column names are long and share prefixes). */
static uint32_t hash(const char *s, size_t n)
{
	uint64_t h = (uint64_t)n * 0x9E3779B97F4A7C15ull, w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	return (uint32_t)h;
}

long csv_index_find(const struct csv_index *x, const char *name, size_t n)
{
	if (!x->cap)
		return -1;
	for (size_t i = hash(name, n) & (x->cap - 1);; i = (i + 1) & (x->cap - 1)) {
		uint32_t s = x->slots[i];
		const char *c;

		if (!s)
			return -1;
		c = x->names.v[s - 1];
		if (!strncmp(c, name, n) && !c[n])
			return (long)s - 1;
	}
}

static void index_grow(struct csv_index *x)
{
	size_t cap = x->cap ? x->cap * 2 : 64;

	free(x->slots);
	x->slots = xcalloc(cap, sizeof(*x->slots));
	x->cap = cap;
	for (size_t k = 0; k < x->names.n; k++) {
		const char *c = x->names.v[k];
		size_t i = hash(c, strlen(c)) & (cap - 1);

		while (x->slots[i])
			i = (i + 1) & (cap - 1);
		x->slots[i] = (uint32_t)k + 1;
	}
}

size_t csv_index_add(struct csv_index *x, const char *name, size_t n)
{
	long f = csv_index_find(x, name, n);
	size_t i;

	if (f >= 0)
		return (size_t)f;
	csv_strv_push(&x->names, name, n);
	if ((x->names.n) * 2 > x->cap) {
		index_grow(x); /* also inserts the new name */
		return x->names.n - 1;
	}
	for (i = hash(name, n) & (x->cap - 1); x->slots[i]; i = (i + 1) & (x->cap - 1))
		;
	x->slots[i] = (uint32_t)x->names.n;
	return x->names.n - 1;
}

void csv_index_clear(struct csv_index *x)
{
	csv_strv_clear(&x->names);
	if (x->slots)
		memset(x->slots, 0, x->cap * sizeof(*x->slots));
}

void csv_index_free(struct csv_index *x)
{
	csv_strv_free(&x->names);
	free(x->slots);
	x->slots = NULL;
	x->cap = 0;
}
