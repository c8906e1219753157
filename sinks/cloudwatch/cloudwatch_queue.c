/* SPDX-License-Identifier: MIT */
/*
 * Series interning and the bounded datum ring; see cloudwatch_queue.h.
 */
#include "cloudwatch_queue.h"
#include "cloudwatch_query.h"
#include "../../common/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- series -------------------------------------------------------------- */

size_t cw_point_key(const struct cw_point *p, char *dst, size_t cap)
{
	size_t n = 0;
	const char *parts[2 + 2 * CW_MAX_DIMS];
	size_t np = 0;

	parts[np++] = p->name;
	parts[np++] = p->unit;
	for (size_t i = 0; i < p->ndims; i++) {
		parts[np++] = p->dims[i].name;
		parts[np++] = p->dims[i].value;
	}
	for (size_t i = 0; i < np; i++) {
		size_t l = strlen(parts[i]);

		if (n + l + 1 > cap)
			return 0;
		memcpy(dst + n, parts[i], l + 1);
		n += l + 1;
	}
	return n;
}

struct cw_series *cw_series_new(const struct cw_point *p)
{
	struct cw_series *s;
	struct buf b;
	size_t off[2 + 4 * CW_MAX_DIMS], k = 0;
	char keybuf[CW_MAX_DIMS * (CW_MAX_NAME + CW_MAX_DIM_VALUE + 2) + 2 * CW_MAX_NAME];
	size_t keylen;

	if (!p->name[0] || strlen(p->name) > CW_MAX_NAME || p->ndims > CW_MAX_DIMS)
		return NULL;
	for (size_t i = 0; i < p->ndims; i++)
		if (!p->dims[i].name[0] || strlen(p->dims[i].name) > CW_MAX_NAME || !p->dims[i].value[0] ||
		    strlen(p->dims[i].value) > CW_MAX_DIM_VALUE)
			return NULL;
	keylen = cw_point_key(p, keybuf, sizeof(keybuf));
	if (!keylen)
		return NULL;
	s = xcalloc(1, sizeof(*s));
	s->unit = p->unit;
	s->ndims = p->ndims;
	/* One string block: raw name, encoded name, then per dim raw name/value and encoded name/value. */
	buf_init(&b, (size_t)1 << 24);
#define ADD_RAW(str) (off[k++] = b.len, buf_add(&b, (str), strlen(str) + 1))
#define ADD_ENC(str) (off[k++] = b.len, cw_form_encode(&b, (str), strlen(str)), buf_add(&b, "", 1))
	ADD_RAW(p->name);
	ADD_ENC(p->name);
	for (size_t i = 0; i < p->ndims; i++) {
		ADD_RAW(p->dims[i].name);
		ADD_RAW(p->dims[i].value);
		ADD_ENC(p->dims[i].name);
		ADD_ENC(p->dims[i].value);
	}
#undef ADD_RAW
#undef ADD_ENC
	s->strs = b.data;
	k = 0;
	s->name = s->strs + off[k++];
	s->enc_name = s->strs + off[k++];
	for (size_t i = 0; i < p->ndims; i++) {
		s->dims[i].name = s->strs + off[k++];
		s->dims[i].value = s->strs + off[k++];
		s->enc_dims[i][0] = s->strs + off[k++];
		s->enc_dims[i][1] = s->strs + off[k++];
	}
	s->key = xmalloc(keylen);
	memcpy(s->key, keybuf, keylen);
	s->keylen = keylen;
	s->hash = hash_bytes(0x84222325cbf29ce4ull, keybuf, keylen);
	return s;
}

void cw_series_free(struct cw_series *s)
{
	if (!s)
		return;
	free(s->strs);
	free(s->key);
	free(s);
}

/* ---- the table ----------------------------------------------------------- */

static void tab_grow(struct cw_queue *q)
{
	size_t n = q->tabsize ? q->tabsize * 2 : 256;
	struct cw_series **t = xcalloc(n, sizeof(*t));

	for (size_t i = 0; i < q->tabsize; i++) {
		struct cw_series *s = q->tab[i], *next;

		for (; s; s = next) {
			next = s->next;
			s->next = t[s->hash & (n - 1)];
			t[s->hash & (n - 1)] = s;
		}
	}
	free(q->tab);
	q->tab = t;
	q->tabsize = n;
}

static struct cw_series *intern(struct cw_queue *q, const struct cw_point *p)
{
	char keybuf[CW_MAX_DIMS * (CW_MAX_NAME + CW_MAX_DIM_VALUE + 2) + 2 * CW_MAX_NAME];
	size_t keylen = cw_point_key(p, keybuf, sizeof(keybuf));
	uint64_t h;
	struct cw_series *s;

	if (!keylen)
		return NULL;
	h = hash_bytes(0x84222325cbf29ce4ull, keybuf, keylen);
	if (q->tabsize)
		for (s = q->tab[h & (q->tabsize - 1)]; s; s = s->next)
			if (s->hash == h && s->keylen == keylen && !memcmp(s->key, keybuf, keylen))
				return s;
	s = cw_series_new(p);
	if (!s)
		return NULL;
	if (!q->tabsize || q->nseries + 1 > q->tabsize / 4 * 3)
		tab_grow(q);
	s->next = q->tab[s->hash & (q->tabsize - 1)];
	q->tab[s->hash & (q->tabsize - 1)] = s;
	q->nseries++;
	return s;
}

static void unintern(struct cw_queue *q, struct cw_series *s)
{
	struct cw_series **pp = &q->tab[s->hash & (q->tabsize - 1)];

	while (*pp && *pp != s)
		pp = &(*pp)->next;
	if (*pp)
		*pp = s->next;
	q->nseries--;
	cw_series_free(s);
}

/* ---- the ring ------------------------------------------------------------ */

void cw_queue_init(struct cw_queue *q, size_t bound)
{
	memset(q, 0, sizeof(*q));
	q->bound = bound ? bound : 1;
}

void cw_queue_release(struct cw_queue *q, struct cw_datum *d)
{
	if (d->series && --d->series->refs == 0)
		unintern(q, d->series);
	d->series = NULL;
}

void cw_queue_free(struct cw_queue *q)
{
	struct cw_datum d;

	while (cw_queue_take(q, &d, 1))
		cw_queue_release(q, &d);
	for (size_t i = 0; i < q->tabsize; i++) {
		struct cw_series *s = q->tab[i], *next;

		for (; s; s = next) {
			next = s->next;
			cw_series_free(s);
		}
	}
	free(q->tab);
	free(q->ring);
	memset(q, 0, sizeof(*q));
}

/* Double the ring (up to the bound), unrolling it so head is 0. */
static void ring_grow(struct cw_queue *q)
{
	size_t n = q->alloc ? q->alloc * 2 : 1024;
	struct cw_datum *r;

	if (n > q->bound)
		n = q->bound;
	r = xmalloc(n * sizeof(*r));
	for (size_t i = 0; i < q->len; i++)
		r[i] = q->ring[(q->head + i) % q->alloc];
	free(q->ring);
	q->ring = r;
	q->alloc = n;
	q->head = 0;
}

int cw_queue_push(struct cw_queue *q, const struct cw_point *p)
{
	struct cw_series *s = intern(q, p);
	int dropped = 0;

	if (!s)
		return -EINVAL;
	s->refs++; /* before any drop, so the series cannot go with the dropped datum */
	if (q->len == q->bound) {
		struct cw_datum old;

		cw_queue_take(q, &old, 1);
		cw_queue_release(q, &old);
		q->dropped++;
		dropped = 1;
	}
	if (q->len == q->alloc)
		ring_grow(q);
	q->ring[(q->head + q->len) % q->alloc] = (struct cw_datum){ s, p->value, p->ts_ms };
	q->len++;
	q->pushed++;
	return dropped;
}

size_t cw_queue_take(struct cw_queue *q, struct cw_datum *out, size_t max)
{
	size_t n = 0;

	while (n < max && q->len) {
		out[n++] = q->ring[q->head];
		q->head = (q->head + 1) % q->alloc;
		q->len--;
	}
	return n;
}
