/* SPDX-License-Identifier: MIT */
/* Exposition snapshots, their publication, and the text format's values and escapes; see prom_expo.h. */
#include "prom_expo.h"

#include "../util.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct prom_expo *prom_expo_new(struct expo_body text, struct expo_body om, struct expo_body bie)
{
	struct prom_expo *e = xcalloc(1, sizeof(*e));

	atomic_init(&e->refs, 1);
	e->body[EXPO_TEXT] = text;
	e->body[EXPO_OPENMETRICS] = om;
	e->bie = bie;
	pthread_mutex_init(&e->gz_lock, NULL);
	return e;
}

void prom_expo_ref(struct prom_expo *e)
{
	atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
}

void prom_expo_unref(struct prom_expo *e)
{
	if (!e || atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (int v = 0; v < EXPO_NVARIANT; v++) {
		free(e->body[v].data);
		free(e->gz[v].data);
	}
	free(e->bie.data);
	pthread_mutex_destroy(&e->gz_lock);
	free(e);
}

int prom_gzip(const char *src, size_t len, struct expo_body *out)
{
	z_stream z;
	size_t cap;
	int rc;

	memset(&z, 0, sizeof(z));
	/* windowBits 15 + 16: a gzip wrapper. Level 6: the zlib default, a fair trade for text. */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, (uLong)len);
	out->data = malloc(cap ? cap : 1);
	if (!out->data) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)(uintptr_t)src;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out->data;
	z.avail_out = (uInt)cap;
	rc = deflate(&z, Z_FINISH);
	out->len = cap - z.avail_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(out->data);
		out->data = NULL;
		out->len = 0;
		return -EIO;
	}
	return 0;
}

int prom_expo_gzip(struct prom_expo *e, enum expo_variant v, const struct expo_body **out)
{
	int rc = 0;

	pthread_mutex_lock(&e->gz_lock);
	if (!e->gz_done[v])
		e->gz_done[v] = prom_gzip(e->body[v].data, e->body[v].len, &e->gz[v]) == 0 ? 1 : -1;
	if (e->gz_done[v] < 0)
		rc = -EIO;
	else
		*out = &e->gz[v];
	pthread_mutex_unlock(&e->gz_lock);
	return rc;
}

void prom_pub_init(struct prom_pub *p)
{
	pthread_mutex_init(&p->lock, NULL);
	p->cur = NULL;
}

void prom_pub_destroy(struct prom_pub *p)
{
	prom_expo_unref(p->cur);
	p->cur = NULL;
	pthread_mutex_destroy(&p->lock);
}

void prom_pub_swap(struct prom_pub *p, struct prom_expo *e)
{
	struct prom_expo *old;

	pthread_mutex_lock(&p->lock);
	old = p->cur;
	p->cur = e;
	pthread_mutex_unlock(&p->lock);
	/* The old snapshot is freed outside the lock (or later, by its last scrape). */
	prom_expo_unref(old);
}

struct prom_expo *prom_pub_get(struct prom_pub *p)
{
	struct prom_expo *e;

	pthread_mutex_lock(&p->lock);
	e = p->cur;
	if (e)
		prom_expo_ref(e);
	pthread_mutex_unlock(&p->lock);
	return e;
}

/* ---- the text format ----------------------------------------------------------- */

size_t prom_format_value(double v, char dst[32])
{
	return double_text(v, dst);
}

/* Append s escaping the characters in set ("\\\n" or "\\\"\n"). */
static int escape(struct buf *b, const char *s, const char *set)
{
	while (*s) {
		size_t n = strcspn(s, set);
		int rc;

		if (n && (rc = buf_add(b, s, n)))
			return rc;
		s += n;
		if (!*s)
			break;
		rc = buf_add(b, *s == '\n' ? "\\n" : *s == '"' ? "\\\"" : "\\\\", 2);
		if (rc)
			return rc;
		s++;
	}
	return 0;
}

int prom_escape_label(struct buf *b, const char *s)
{
	return escape(b, s, "\\\"\n");
}

int prom_escape_help(struct buf *b, const char *s, int om)
{
	return escape(b, s, om ? "\\\"\n" : "\\\n");
}

/* ---- /v1/collect (the BIE JSON) ------------------------------------------------------------ */

/*
 * A number of /v1/collect: an integer below 2^63 in magnitude as an
 * integer; anything else (2^63 and above, fractions) in the shortest form
 * that reads back exactly, with an exponent where needed ("1e+19"); a sum
 * beyond the range of a double (long double keeps it) with 17 digits; a
 * fraction (percent: frac) with 15 significant digits and at least one
 * decimal, as jansson's real. JSON has no infinity or NaN: those are null.
 */
static void bie_num(struct buf *b, long double v, int frac)
{
	char s[64];
	int n;

	if (isnan(v) || isinf(v)) {
		buf_add(b, "null", 4);
		return;
	}
	if (frac) {
		n = snprintf(s, sizeof(s), "%.15Lg", v);
		buf_add(b, s, (size_t)n);
		if (!strpbrk(s, ".e"))
			buf_add(b, ".0", 2);
		return;
	}
	if (v == truncl(v) && fabsl(v) < 0x1p63L) {
		buf_printf(b, "%lld", (long long)v);
		return;
	}
	if (fabsl(v) <= DBL_MAX && (long double)(double)v == v) {
		char d[32];

		buf_add(b, d, prom_format_value((double)v, d));
		return;
	}
	n = snprintf(s, sizeof(s), "%.17Lg", v);
	buf_add(b, s, (size_t)n);
}

/* One /v1/collect object: usedMemory, totalMemory, percent (used / total; 0 when total is not above 0). */
void prom_bie_entry(struct buf *b, long double used, long double total)
{
	buf_add(b, "\"usedMemory\":", 13);
	bie_num(b, used, 0);
	buf_add(b, ",\"totalMemory\":", 15);
	bie_num(b, total, 0);
	buf_add(b, ",\"percent\":", 11);
	bie_num(b, total > 0 ? used / total : 0, 1);
}

/* ---- rendered label sets, read back ------------------------------------------------------ */

int prom_parse_labels(const char *s, size_t len, char *pool, size_t poolsz, const char **names, const char **values,
		      size_t max)
{
	const char *p = s, *end = s + len;
	char *w = pool, *wend = pool + poolsz;
	size_t n = 0;

	if (len == 0)
		return 0;
	if (len < 2 || *p != '{' || end[-1] != '}')
		return -EINVAL;
	p++;
	end--;
	while (p < end) {
		const char *eq = memchr(p, '=', (size_t)(end - p));

		if (!eq || eq == p || eq + 1 >= end || eq[1] != '"')
			return -EINVAL;
		if (n == max)
			return -E2BIG;
		if ((size_t)(wend - w) < (size_t)(eq - p) + 1)
			return -E2BIG;
		names[n] = w;
		memcpy(w, p, (size_t)(eq - p));
		w += eq - p;
		*w++ = '\0';
		values[n] = w;
		for (p = eq + 2;; p++) {
			char c;

			if (p >= end)
				return -EINVAL;
			c = *p;
			if (c == '"')
				break;
			if (c == '\\') {
				if (++p >= end)
					return -EINVAL;
				c = *p == 'n' ? '\n' : *p;
			}
			if (w == wend)
				return -E2BIG;
			*w++ = c;
		}
		if (w == wend)
			return -E2BIG;
		*w++ = '\0';
		n++;
		p++; /* the closing quote */
		if (p < end && *p++ != ',')
			return -EINVAL;
	}
	return (int)n;
}
