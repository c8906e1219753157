/* SPDX-License-Identifier: MIT */
/* A pod's labels named as kube-state-metrics names them; see prom_kube.h. */
#include "prom_kube.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_lower_or_digit(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static int is_name_char(char c)
{
	return is_lower_or_digit(c) || is_upper(c) || c == '_';
}

void prom_kube_label_name(const char *key, char *dst, size_t size)
{
	size_t n = 0;
	char prev = 0;

	if (!size)
		return;
	for (const char *p = "label_"; *p && n + 1 < size; p++)
		dst[n++] = *p;
	for (const unsigned char *k = (const unsigned char *)key; *k && n + 1 < size; k++) {
		char c = (char)*k;

		if ((*k & 0xC0) == 0x80)
			continue; /* a UTF-8 continuation byte: its character is one "_", as Go's regexp sees runes */
		if (!is_name_char(c))
			c = '_';
		if (is_upper(c) && is_lower_or_digit(prev)) { /* snake case: "appVersion" is app_version */
			dst[n++] = '_';
			if (n + 1 >= size)
				break;
		}
		prev = c;
		dst[n++] = is_upper(c) ? (char)(c - 'A' + 'a') : c;
	}
	dst[n] = 0;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Is name among the first n of out? Its index, or -1. */
static long used(const struct label *out, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(out[i].name, name))
			return (long)i;
	return -1;
}

/* base with the next conflict suffix (*count + 1, ...) that no label of out[0..n) has, into dst. */
static void next_free(const char *base, int *count, const struct label *out, size_t n, char *dst)
{
	do
		snprintf(dst, PROM_KUBE_NAME_MAX, "%s_conflict%d", base, ++*count);
	while (used(out, n, dst) >= 0);
}

size_t prom_kube_labels(json_t *labels, struct label *out, size_t max, struct prom_kube_names *buf)
{
	size_t nkeys = 0, n = 0, nc = 0;
	const char *keys[PROM_KUBE_LABELS_MAX], *k;
	int counts[PROM_KUBE_LABELS_MAX]; /* suffixes handed out per name that collided (buf->base[0..nc)) */
	char base[PROM_KUBE_NAME_MAX], tmp[PROM_KUBE_NAME_MAX];
	json_t *v;

	if (max > PROM_KUBE_LABELS_MAX)
		max = PROM_KUBE_LABELS_MAX;
	json_object_foreach(labels, k, v)
		if (json_is_string(v) && nkeys < max)
			keys[nkeys++] = k;
	qsort(keys, nkeys, sizeof(keys[0]), cmp_key);
	for (size_t i = 0; i < nkeys; i++) {
		size_t c;
		long at;
		int count = 0;

		prom_kube_label_name(keys[i], base, sizeof(base));
		for (c = 0; c < nc && strcmp(buf->base[c], base); c++)
			;
		if (c < nc) { /* it collided before: the next free suffix */
			count = counts[c];
			next_free(base, &count, out, n, tmp);
			counts[c] = count;
		} else if ((at = used(out, n, base)) >= 0) {
			/* The first collision: the label named so already becomes _conflict1, this one the next. */
			next_free(base, &count, out, n, tmp);
			snprintf(buf->name[at], PROM_KUBE_NAME_MAX, "%s", tmp);
			next_free(base, &count, out, n, tmp);
			snprintf(buf->base[nc], PROM_KUBE_NAME_MAX, "%s", base);
			counts[nc++] = count;
		} else {
			snprintf(tmp, sizeof(tmp), "%s", base);
		}
		snprintf(buf->name[n], PROM_KUBE_NAME_MAX, "%s", tmp);
		out[n].name = buf->name[n];
		out[n].value = json_string_value(json_object_get(labels, keys[i]));
		n++;
	}
	return n;
}
