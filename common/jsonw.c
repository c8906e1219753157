/* SPDX-License-Identifier: MIT */
/* Compact JSON writer with printf-free numbers; see jsonw.h. */
#include "jsonw.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Write u in decimal, right-aligned ending at end; returns the first digit. */
static char *u64_digits(uint64_t u, char *end)
{
	do {
		*--end = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	return end;
}

size_t json_format_real(double v, char *dst)
{
	static const double pow10[] = { 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9 };
	char tmp[32], *p;
	size_t n = 0;

	if (!isfinite(v))
		return (size_t)snprintf(dst, 32, "null");
	if (fabs(v) < 1e6) {
		/* 9 decimals, fewer past the integer part's digits: 10 significant digits at most */
		double a = fabs(v), x;
		int digits = a < 1 ? 9 : 10 - (a < 10 ? 1 : a < 100 ? 2 : a < 1e3 ? 3 : a < 1e4 ? 4 : a < 1e5 ? 5 : 6);
		char *end = tmp + sizeof(tmp), *frac;
		uint64_t u;
		size_t flen = (size_t)digits;

		/*
		 * a * 10^digits rounded half away from zero (llround's rule): below
		 * 1e10, so its fraction is exact. Its digits, zero-padded to one
		 * more than the decimals, split at the point: no division by a power
		 * of ten but the digit loop's.
		 */
		x = a * pow10[digits];
		u = (uint64_t)x;
		if (x - (double)u >= 0.5)
			u++;
		p = u64_digits(u, end);
		while (end - p < digits + 1)
			*--p = '0';
		if (v < 0 && u)
			dst[n++] = '-';
		frac = end - digits;
		memcpy(dst + n, p, (size_t)(frac - p));
		n += (size_t)(frac - p);
		dst[n++] = '.';
		while (flen > 1 && frac[flen - 1] == '0')
			flen--; /* trailing zeros trimmed, one digit kept */
		memcpy(dst + n, frac, flen);
		n += flen;
		dst[n] = '\0';
		return n;
	}
	if (fabs(v) < 9223372036854775808.0) {
		n = (size_t)snprintf(dst, 32, "%.10g", v);
	} else {
		/* 2^63 and up: an integer field past int64 (report-format.md), its value kept with the fewest digits */
		for (int prec = 15; prec <= 17; prec++) {
			n = (size_t)snprintf(dst, 32, "%.*g", prec, v);
			if (strtod(dst, NULL) == v)
				break;
		}
	}
	if (!strpbrk(dst, ".eEn")) {
		memcpy(dst + n, ".0", 3);
		n += 2;
	}
	return n;
}

/* The bytes put_string writes for c: 1 as it is, 2 for a short escape, 6 for \u00XX. */
static size_t escaped_len(unsigned char c)
{
	if (c >= 0x20)
		return c == '"' || c == '\\' ? 2 : 1;
	return c == '\n' || c == '\t' || c == '\r' || c == '\b' || c == '\f' ? 2 : 6;
}

size_t json_string_size(const char *s, size_t len)
{
	size_t n = 2;

	for (size_t i = 0; i < len; i++)
		n += escaped_len((unsigned char)s[i]);
	return n;
}

/* Append n bytes known to fit (buf_reserve made room). */
static inline void put_raw(struct buf *b, const void *p, size_t n)
{
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

/* buf_reserve, without the call while n bytes (and the NUL) fit what is allocated and the cap. */
static inline int reserve(struct buf *b, size_t n)
{
	if (b->data && b->alloc - b->len > n && n <= b->cap - b->len)
		return 0;
	return buf_reserve(b, n);
}

/* buf_add for the writer's small pieces: in place while they fit what is allocated. */
static inline int put(struct buf *b, const void *p, size_t n)
{
	if (b->data && b->alloc - b->len > n) {
		put_raw(b, p, n);
		b->data[b->len] = '\0';
		return 0;
	}
	return buf_add(b, p, n);
}

/* Does any of the 8 bytes of x need an escape ('"', '\\', or a control byte)? */
static inline int word_escapes(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t q = x ^ (ones * '"'), bs = x ^ (ones * '\\');

	/* a byte below 0x20, a byte equal to '"' (q's is 0), a byte equal to '\\' (bs's is 0) */
	return !!(((x - ones * 0x20) & ~x & highs) | ((q - ones) & ~q & highs) | ((bs - ones) & ~bs & highs));
}

static int put_string(struct buf *b, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i = 0, start;

	/* The usual string has nothing to escape: one reservation, one copy. */
	if (reserve(b, len + 2))
		return -ENOSPC;
	b->data[b->len++] = '"';
	for (;;) {
		start = i;
		for (uint64_t w; i + 8 <= len && (memcpy(&w, s + i, 8), !word_escapes(w));)
			i += 8; /* 8 bytes at a time while none needs an escape */
		while (i < len && escaped_len((unsigned char)s[i]) == 1)
			i++;
		put_raw(b, s + start, i - start);
		if (i == len)
			break;
		{
			unsigned char c = (unsigned char)s[i++];
			char esc[6] = { '\\', 0, 0, 0, 0, 0 };
			size_t elen = 2;

			switch (c) {
			case '"': esc[1] = '"'; break;
			case '\\': esc[1] = '\\'; break;
			case '\n': esc[1] = 'n'; break;
			case '\t': esc[1] = 't'; break;
			case '\r': esc[1] = 'r'; break;
			case '\b': esc[1] = 'b'; break;
			case '\f': esc[1] = 'f'; break;
			default:
				memcpy(esc + 1, "u00", 3);
				esc[4] = hex[c >> 4];
				esc[5] = hex[c & 15];
				elen = 6;
			}
			/* the rest of the string and its quote, with this escape */
			if (reserve(b, elen + (len - i) + 1))
				return -ENOSPC;
			put_raw(b, esc, elen);
		}
	}
	b->data[b->len++] = '"';
	b->data[b->len] = '\0';
	return 0;
}

int json_write_string(struct buf *b, const char *s, size_t len)
{
	return put_string(b, s, len);
}

int json_write_real(struct buf *b, double v)
{
	char num[32];

	return put(b, num, json_format_real(v, num));
}

int json_write_u64(struct buf *b, uint64_t v)
{
	char num[24], *p = u64_digits(v, num + sizeof(num));

	return put(b, p, (size_t)(num + sizeof(num) - p));
}

int json_write_count(struct buf *b, uint64_t v)
{
	return v <= (uint64_t)INT64_MAX ? json_write_u64(b, v) : json_write_real(b, (double)v);
}

/*
 * The objects of this document already written that other places hold too
 * (refcount above 1: a process's identity in every group that names the
 * process): each written once, then copied from where it was written.
 * Keyed by address; the table starts on the stack (most lines hold a few
 * such objects: a calloc of the whole table cost a small report a quarter
 * of its time) and moves to the heap, twice as large, as it fills.
 */
struct jw_seen {
	const json_t *v;
	size_t off, len; /* where its text is in the buffer */
};

#define JW_SMALL 32

struct jw {
	struct jw_seen *t;
	size_t cap, n; /* cap a power of 2; n at most 3/4 of it */
	struct jw_seen small[JW_SMALL]; /* t until it fills */
};

#define JW_CAP 1024
#define JW_MIN_BYTES 16 /* an object this short is written again: cheaper than remembering it */

static struct jw_seen *jw_slot(struct jw *w, const json_t *v)
{
	size_t i = (size_t)(((uintptr_t)v >> 4) * 0x9E3779B97F4A7C15ull) & (w->cap - 1);

	while (w->t[i].v && w->t[i].v != v)
		i = (i + 1) & (w->cap - 1);
	return &w->t[i];
}

/* Twice the room, up to JW_CAP, when the table is 3/4 full; false when it cannot grow. */
static bool jw_room(struct jw *w)
{
	struct jw_seen *old = w->t, *t;
	size_t cap = w->cap;

	if (w->n < w->cap / 4 * 3)
		return true;
	if (w->cap >= JW_CAP || !(t = calloc(w->cap * 2, sizeof(*t))))
		return false;
	w->t = t;
	w->cap *= 2;
	for (size_t i = 0; i < cap; i++)
		if (old[i].v)
			*jw_slot(w, old[i].v) = old[i];
	if (old != w->small)
		free(old);
	return true;
}

static int write_value(const json_t *v, struct buf *b, struct jw *w);

static int write_object(const json_t *v, struct buf *b, struct jw *w)
{
	size_t off = b->len;
	struct jw_seen *s = NULL;
	const char *key;
	json_t *x;
	int rc = 0, first = 1;

	if (v->refcount > 1) {
		if ((s = jw_slot(w, v))->v) {
			if (reserve(b, s->len))
				return -ENOSPC;
			memcpy(b->data + b->len, b->data + s->off, s->len);
			b->len += s->len;
			b->data[b->len] = '\0';
			return 0;
		}
	}
	rc = put(b, "{", 1);
	json_object_foreach((json_t *)v, key, x) {
		if (rc)
			break;
		if (!first)
			rc = put(b, ",", 1);
		first = 0;
		if (!rc)
			rc = put_string(b, key, json_object_iter_key_len(json_object_key_to_iter(key)));
		if (!rc)
			rc = put(b, ":", 1);
		if (!rc)
			rc = write_value(x, b, w);
	}
	if (!rc)
		rc = put(b, "}", 1);
	/* Remember it; found again, as a member written meanwhile may have taken the slot found above. */
	if (!rc && s && b->len - off >= JW_MIN_BYTES && jw_room(w)) {
		s = jw_slot(w, v);
		*s = (struct jw_seen){ .v = v, .off = off, .len = b->len - off };
		w->n++;
	}
	return rc;
}

static int write_value(const json_t *v, struct buf *b, struct jw *w)
{
	char num[32], *p;
	json_t *x;
	size_t i;
	int rc = 0;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return write_object(v, b, w);
	case JSON_ARRAY:
		rc = put(b, "[", 1);
		json_array_foreach((json_t *)v, i, x) {
			if (rc)
				break;
			if (i)
				rc = put(b, ",", 1);
			if (!rc)
				rc = write_value(x, b, w);
		}
		return rc ? rc : put(b, "]", 1);
	case JSON_STRING:
		return put_string(b, json_string_value(v), json_string_length(v));
	case JSON_INTEGER: {
		json_int_t n = json_integer_value(v);
		uint64_t u = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;

		p = u64_digits(u, num + sizeof(num));
		if (n < 0)
			*--p = '-';
		return put(b, p, (size_t)(num + sizeof(num) - p));
	}
	case JSON_REAL:
		return put(b, num, json_format_real(json_real_value(v), num));
	case JSON_TRUE:
		return put(b, "true", 4);
	case JSON_FALSE:
		return put(b, "false", 5);
	default:
		return put(b, "null", 4);
	}
}

int json_write(const json_t *v, struct buf *b)
{
	struct jw w;
	int rc;

	memset(w.small, 0, sizeof(w.small));
	w.t = w.small;
	w.cap = JW_SMALL;
	w.n = 0;
	rc = write_value(v, b, &w);
	if (w.t != w.small)
		free(w.t);
	return rc;
}
