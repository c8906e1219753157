/* SPDX-License-Identifier: MIT */
/* See hindex.h. */
#include "hindex.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

void hindex_free(struct hindex *x)
{
	free(x->hash);
	free(x->pos);
	memset(x, 0, sizeof(*x));
}

void hindex_clear(struct hindex *x)
{
	if (x->mask)
		memset(x->pos, 0xff, (x->mask + 1) * sizeof(*x->pos));
	x->n = 0;
}

static void insert(struct hindex *x, uint64_t h, uint32_t pos)
{
	size_t s = (size_t)h & x->mask;

	while (x->pos[s] != HINDEX_NONE)
		s = (s + 1) & x->mask;
	x->hash[s] = h;
	x->pos[s] = pos;
	x->n++;
}

static void grow(struct hindex *x)
{
	struct hindex old = *x;
	size_t slots = old.mask ? (old.mask + 1) * 2 : 64;

	x->hash = xmalloc(slots * sizeof(*x->hash));
	x->pos = xmalloc(slots * sizeof(*x->pos));
	x->mask = slots - 1;
	x->n = 0;
	memset(x->pos, 0xff, slots * sizeof(*x->pos));
	for (size_t s = 0; old.mask && s <= old.mask; s++)
		if (old.pos[s] != HINDEX_NONE)
			insert(x, old.hash[s], old.pos[s]);
	free(old.hash);
	free(old.pos);
}

void hindex_put(struct hindex *x, uint64_t h, uint32_t pos)
{
	if (!x->mask || (x->n + 1) * 2 > x->mask + 1)
		grow(x);
	insert(x, h, pos);
}

uint32_t hindex_next(const struct hindex *x, uint64_t h, struct hindex_iter *it)
{
	if (!x->mask)
		return HINDEX_NONE;
	for (;; it->slot = (it->slot + 1) & x->mask) {
		size_t s = it->slot;

		if (x->pos[s] == HINDEX_NONE)
			return HINDEX_NONE;
		if (x->hash[s] == h) {
			it->slot = (s + 1) & x->mask;
			return x->pos[s];
		}
	}
}

uint32_t hindex_first(const struct hindex *x, uint64_t h, struct hindex_iter *it)
{
	it->slot = (size_t)h & x->mask;
	return hindex_next(x, h, it);
}
