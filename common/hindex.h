/* SPDX-License-Identifier: MIT */
/*
 * An index over a caller's array: open addressing from a 64-bit hash to the
 * array's positions, for tables that are looked up many times per cycle (a
 * process, a container, a pid). The index keeps the hashes, not the keys: a
 * lookup walks the positions whose hash matches and the caller compares its
 * own keys, as in
 *
 *	for (uint32_t i = hindex_first(&x, h, &it); i != HINDEX_NONE; i = hindex_next(&x, h, &it))
 *		if (!strcmp(a[i].id, id))
 *			return &a[i];
 *
 * It grows itself (at half full); hindex_clear empties it when the array
 * starts over, and it knows nothing of removals: rebuild it (clear, then put
 * every position again) after the array's entries move.
 */
#ifndef ACCEL_HINDEX_H
#define ACCEL_HINDEX_H

#include <stddef.h>
#include <stdint.h>

#define HINDEX_NONE UINT32_MAX

struct hindex {
	uint64_t *hash; /* per slot; the position is in pos[] */
	uint32_t *pos;  /* per slot: the array position, HINDEX_NONE when the slot is free */
	size_t mask;    /* slots - 1; 0 when nothing is allocated */
	size_t n;       /* positions held */
};

struct hindex_iter {
	size_t slot;
};

void hindex_free(struct hindex *x);
/* No positions; the slots are kept. */
void hindex_clear(struct hindex *x);
/* Index position pos (not HINDEX_NONE) under hash h. */
void hindex_put(struct hindex *x, uint64_t h, uint32_t pos);
/* The first position under h, or HINDEX_NONE; then hindex_next for the others. */
uint32_t hindex_first(const struct hindex *x, uint64_t h, struct hindex_iter *it);
uint32_t hindex_next(const struct hindex *x, uint64_t h, struct hindex_iter *it);

#endif
