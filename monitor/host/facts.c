/* SPDX-License-Identifier: MIT */
/*
 * The table of device facts one collector hands another (facts.h). It holds
 * a handful of entries (one per device an application reports on), so a
 * flat array searched in order is all it needs.
 */
#include "facts.h"
#include "../../common/util.h"

#include <stdio.h>
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

void facts_want(struct facts *t, const char *device_type, int delta)
{
	size_t i, slot = FACTS_MAX_WANT;

	if (!t)
		return;
	for (i = 0; i < FACTS_MAX_WANT; i++) {
		if (t->want[i].readers && !strcmp(t->want[i].device_type, device_type))
			break;
		if (!t->want[i].readers && slot == FACTS_MAX_WANT)
			slot = i;
	}
	if (i == FACTS_MAX_WANT) {
		if (delta <= 0 || slot == FACTS_MAX_WANT)
			return; /* more device types than collectors: cannot happen */
		i = slot;
		snprintf(t->want[i].device_type, sizeof(t->want[i].device_type), "%s", device_type);
	}
	t->want[i].readers += delta;
	if (t->want[i].readers < 0)
		t->want[i].readers = 0;
}

int facts_wanted(const struct facts *t, const char *device_type)
{
	for (size_t i = 0; t && i < FACTS_MAX_WANT; i++)
		if (t->want[i].readers && !strcmp(t->want[i].device_type, device_type))
			return 1;
	return 0;
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
