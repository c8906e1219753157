/* SPDX-License-Identifier: MIT */
/*
 * common/hindex.c: positions found by hash, colliding hashes walked in
 * turn, growth past half full keeping every position, clear.
 */
#include "../../common/hindex.h"
#include "../../common/util.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

#define N 5000

static unsigned keys[N];

static uint32_t find(const struct hindex *x, unsigned key)
{
	uint64_t h = hash_bytes(0, &key, sizeof(key));
	struct hindex_iter it;

	for (uint32_t i = hindex_first(x, h, &it); i != HINDEX_NONE; i = hindex_next(x, h, &it))
		if (keys[i] == key)
			return i;
	return HINDEX_NONE;
}

int main(void)
{
	struct hindex x = { 0 };
	struct hindex_iter it;
	uint32_t seen = 0, i;
	int all = 1;

	ok(hindex_first(&x, 42, &it) == HINDEX_NONE, "empty: nothing under any hash");
	hindex_clear(&x);
	for (unsigned k = 0; k < N; k++) {
		keys[k] = k * 7919u;
		hindex_put(&x, hash_bytes(0, &keys[k], sizeof(keys[k])), k);
	}
	for (unsigned k = 0; k < N; k++)
		all &= find(&x, keys[k]) == k;
	ok(all, "%d positions, each found by its key's hash after the index grew", N);
	ok(find(&x, 3) == HINDEX_NONE, "a key never put: not found");
	is_int((long)x.n, N, "n counts the positions");
	ok((x.mask + 1) >= 2 * (size_t)N, "at most half full (%zu slots)", x.mask + 1);

	/* Every position under one hash: the walk yields each once. */
	hindex_clear(&x);
	for (i = 0; i < 100; i++)
		hindex_put(&x, 7, i);
	for (i = hindex_first(&x, 7, &it); i != HINDEX_NONE; i = hindex_next(&x, 7, &it))
		seen++;
	is_int(seen, 100, "100 positions under one hash: all walked");
	ok(hindex_first(&x, 8, &it) == HINDEX_NONE, "another hash: none of them");
	hindex_clear(&x);
	is_int((long)x.n, 0, "clear: no positions");
	ok(hindex_first(&x, 7, &it) == HINDEX_NONE, "clear: nothing found");
	hindex_free(&x);
	ok(x.mask == 0 && x.pos == NULL, "free: back to empty");
	return done_testing();
}
