/* SPDX-License-Identifier: MIT */
/*
 * The table of device facts one collector hands another (facts.h). It holds
 * a handful of entries (one per device an application reports on), so a
 * flat array searched in order is all it needs.
 */
#include "facts.h"
#include "../common/util.h"

#include <stdlib.h>
#include <string.h>

void facts_init(struct facts *t)
{
	memset(t, 0, sizeof(*t));
}

void facts_free(struct facts *t)
{
	if (!t)
		return;
	free(t->f);
	memset(t, 0, sizeof(*t));
}

void facts_set(struct facts *t, const void *owner, const struct fact *f, size_t n)
{
	size_t k = 0;

	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		if (t->f[i].owner != owner)
			t->f[k++] = t->f[i];
	t->n = k;
	if (t->n + n > t->a) {
		t->a = (t->n + n) * 2;
		t->f = xrealloc(t->f, t->a * sizeof(*t->f));
	}
	for (size_t i = 0; i < n; i++) {
		t->f[t->n] = f[i];
		t->f[t->n++].owner = owner;
	}
}

const struct fact *facts_next(const struct facts *t, const char *device_type, int64_t now, size_t *pos)
{
	for (; t && *pos < t->n; (*pos)++) {
		const struct fact *f = &t->f[*pos];

		if (!strcmp(f->device_type, device_type) && now <= f->until_ns) {
			(*pos)++;
			return f;
		}
	}
	return NULL;
}
