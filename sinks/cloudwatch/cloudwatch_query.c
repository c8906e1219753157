/* SPDX-License-Identifier: MIT */
/*
 * PutMetricData form bodies and CloudWatch error documents; see
 * cloudwatch_query.h for the rules the encoding follows and why.
 */
#include "cloudwatch_query.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Python's quote_plus(): letters, digits and "_.-~" stay; space becomes '+'. */
static const unsigned char unreserved[256] = {
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1,
	['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1,
	['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1,
	['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1,
	['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1,
	['y'] = 1, ['z'] = 1, ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
	['8'] = 1, ['9'] = 1, ['_'] = 1, ['.'] = 1, ['-'] = 1, ['~'] = 1,
};

int cw_form_encode(struct buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	char tmp[256];
	size_t t = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (t + 3 > sizeof(tmp)) {
			if (buf_add(b, tmp, t))
				return -ENOSPC;
			t = 0;
		}
		if (unreserved[c]) {
			tmp[t++] = (char)c;
		} else if (c == ' ') {
			tmp[t++] = '+';
		} else {
			tmp[t++] = '%';
			tmp[t++] = hex[c >> 4];
			tmp[t++] = hex[c & 15];
		}
	}
	return t ? buf_add(b, tmp, t) : 0;
}

char *cw_form_encode_dup(const char *s)
{
	struct buf b;
	char *out;

	buf_init(&b, (size_t)1 << 30);
	cw_form_encode(&b, s, strlen(s));
	out = b.data ? b.data : xstrdup("");
	return out;
}

void cw_format_double(double v, char dst[CW_DOUBLE_LEN])
{
	char e[40], digits[24], *p = e, *o = dst;
	int prec, exp10, decpt, nd = 0;

	if (v != v) {
		snprintf(dst, CW_DOUBLE_LEN, "nan");
		return;
	}
	if (v == 1.0 / 0.0 || v == -1.0 / 0.0) {
		snprintf(dst, CW_DOUBLE_LEN, "%sinf", v < 0 ? "-" : "");
		return;
	}
	/*
	 * Integers below 2^53 print exactly: counters and byte counts, the common case. The range is
	 * checked before the cast: a double outside long long's range has no defined conversion.
	 */
	if (v > -9007199254740992.0 && v < 9007199254740992.0 && v == (double)(long long)v) {
		snprintf(dst, CW_DOUBLE_LEN, "%s%lld.0", v == 0 && 1 / v < 0 ? "-" : "", (long long)v);
		return;
	}
	/*
	 * The fewest significant digits that read back as v (glibc rounds
	 * correctly). Reading back is monotonic in the digit count: search.
	 */
	{
		int lo = 1, hi = 17;

		while (lo < hi) {
			int mid = (lo + hi) / 2;

			snprintf(e, sizeof(e), "%.*e", mid - 1, v);
			if (strtod(e, NULL) == v)
				hi = mid;
			else
				lo = mid + 1;
		}
		prec = lo;
		snprintf(e, sizeof(e), "%.*e", prec - 1, v);
	}
	if (*p == '-') {
		*o++ = '-';
		p++;
	}
	for (; *p && *p != 'e'; p++)
		if (*p != '.')
			digits[nd++] = *p;
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	digits[nd] = '\0';
	exp10 = atoi(p + 1);
	decpt = exp10 + 1;
	/* Python's float_repr_style "short": fixed notation for -4 < decpt <= 16. */
	if (decpt > -4 && decpt <= 16) {
		if (decpt <= 0) {
			o += sprintf(o, "0.");
			for (int i = 0; i < -decpt; i++)
				*o++ = '0';
			o += sprintf(o, "%s", digits);
		} else if (decpt >= nd) {
			o += sprintf(o, "%s", digits);
			for (int i = nd; i < decpt; i++)
				*o++ = '0';
			o += sprintf(o, ".0");
		} else {
			o += sprintf(o, "%.*s.%s", decpt, digits, digits + decpt);
		}
	} else {
		*o++ = digits[0];
		if (nd > 1)
			o += sprintf(o, ".%s", digits + 1);
		o += sprintf(o, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
	}
	*o = '\0';
}

void cw_format_ts(int64_t ts_ms, char dst[CW_TS_LEN])
{
	time_t t = (time_t)(ts_ms / 1000);
	int ms = (int)(ts_ms % 1000);
	struct tm tm;
	size_t n;

	if (ms < 0) {
		ms += 1000;
		t--;
	}
	gmtime_r(&t, &tm);
	n = strftime(dst, CW_TS_LEN, "%Y-%m-%dT%H:%M:%S", &tm);
	if (ms)
		snprintf(dst + n, CW_TS_LEN - n, ".%03d000Z", ms);
	else
		snprintf(dst + n, CW_TS_LEN - n, "Z");
}

#define ADD(b, lit) buf_add((b), (lit), sizeof(lit) - 1)

static int add_str(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

/* Appends with memcpy only: this is the hot path (see bench/cloudwatch.sh). */
int cw_body_add(struct buf *b, const struct cw_body_opts *o, const struct cw_datum *d, size_t member)
{
	const struct cw_series *s = d->series;
	size_t save = b->len;
	char num[CW_DOUBLE_LEN], ts[CW_TS_LEN], enc[3 * CW_TS_LEN], pfx[48], dp[80], *q = enc;
	int np, rc = 0;

	np = snprintf(pfx, sizeof(pfx), "&MetricData.member.%zu.", member);
	rc |= buf_add(b, pfx, (size_t)np) | ADD(b, "MetricName=") | add_str(b, s->enc_name);
	for (size_t j = 0; j < s->ndims && !rc; j++) {
		int nd = snprintf(dp, sizeof(dp), "%sDimensions.member.%zu.", pfx, j + 1);

		rc |= buf_add(b, dp, (size_t)nd) | ADD(b, "Name=") | add_str(b, s->enc_dims[j][0]);
		rc |= buf_add(b, dp, (size_t)nd) | ADD(b, "Value=") | add_str(b, s->enc_dims[j][1]);
	}
	cw_format_ts(d->ts_ms, ts);
	cw_format_double(d->value, num);
	/* The timestamp's ':' are the only bytes that need encoding. */
	for (const char *t = ts; *t; t++) {
		if (*t == ':') {
			memcpy(q, "%3A", 3);
			q += 3;
		} else {
			*q++ = *t;
		}
	}
	rc |= buf_add(b, pfx, (size_t)np) | ADD(b, "Timestamp=") | buf_add(b, enc, (size_t)(q - enc));
	/* Form-encoded: an exponent's "+" would read back as a space (botocore sends %2B). */
	rc |= buf_add(b, pfx, (size_t)np) | ADD(b, "Value=") | cw_form_encode(b, num, strlen(num));
	rc |= buf_add(b, pfx, (size_t)np) | ADD(b, "Unit=") | cw_form_encode(b, s->unit, strlen(s->unit));
	if (o->storage_resolution == 1)
		rc |= buf_add(b, pfx, (size_t)np) | ADD(b, "StorageResolution=1");
	if (rc) {
		b->len = save;
		if (b->data)
			b->data[save] = '\0';
		return -ENOSPC;
	}
	return 0;
}

size_t cw_body_build(struct buf *b, const struct cw_body_opts *o, const struct cw_datum *d, size_t from, size_t n,
		     const unsigned char *dead, size_t *members, size_t *nmembers)
{
	size_t i, k = 0, cap = b->cap;

	buf_reset(b);
	b->cap = o->max_bytes < cap ? o->max_bytes : cap;
	buf_printf(b, "Action=PutMetricData&Version=2010-08-01&Namespace=%s", o->enc_namespace);
	for (i = from; i < n; i++) {
		if (dead && dead[i])
			continue;
		if (k == o->max_datums || cw_body_add(b, o, &d[i], k + 1))
			break;
		members[k++] = i;
	}
	b->cap = cap;
	*nmembers = k;
	return i;
}

/* Copy the text of <tag>...</tag> into dst, unescaping XML's five entities. */
static void xml_text(const char *body, size_t len, const char *tag, char *dst, size_t size)
{
	static const struct { const char *ent; char c; } ents[] = {
		{ "&lt;", '<' }, { "&gt;", '>' }, { "&amp;", '&' }, { "&quot;", '"' }, { "&apos;", '\'' },
	};
	char open[32], close[32];
	const char *s, *e, *end = body + len;
	size_t n = 0;

	dst[0] = '\0';
	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close, sizeof(close), "</%s>", tag);
	s = memmem(body, len, open, strlen(open));
	if (!s)
		return;
	s += strlen(open);
	e = memmem(s, (size_t)(end - s), close, strlen(close));
	if (!e)
		e = end;
	while (s < e && n + 1 < size) {
		size_t k;

		for (k = 0; k < ARRAY_SIZE(ents); k++) {
			size_t el = strlen(ents[k].ent);

			if ((size_t)(e - s) >= el && !memcmp(s, ents[k].ent, el)) {
				dst[n++] = ents[k].c;
				s += el;
				break;
			}
		}
		if (k == ARRAY_SIZE(ents))
			dst[n++] = *s++;
	}
	dst[n] = '\0';
}

void cw_parse_error(const char *body, size_t len, struct cw_error *e)
{
	const char *m;

	memset(e, 0, sizeof(*e));
	if (!body)
		return;
	xml_text(body, len, "Code", e->code, sizeof(e->code));
	xml_text(body, len, "Message", e->message, sizeof(e->message));
	m = strstr(e->message, "MetricData.member.");
	if (m)
		e->member = strtol(m + strlen("MetricData.member."), NULL, 10);
}
