/* SPDX-License-Identifier: MIT */
/* A histogram series of accel-prom's store, cumulative; see prom_hist.h. */
#include "prom_hist.h"
#include "prom_expo.h"

#include <stdlib.h>
#include <string.h>

/* Whether inc has exactly h's bounds. */
static int same_bounds(const struct prom_hist *h, const struct sample_hist *inc)
{
	return h->view.n == inc->n && (!inc->n || !memcmp(h->le, inc->le, inc->n * sizeof(*inc->le)));
}

int prom_hist_add(struct prom_hist **hp, const struct sample_hist *inc)
{
	struct prom_hist *h = *hp;

	if (h && same_bounds(h, inc)) {
		for (size_t i = 0; i <= inc->n; i++)
			h->counts[i] += inc->counts[i];
		h->view.sum += inc->sum;
		h->view.count += inc->count;
		return 0;
	}
	if (!h)
		h = *hp = xcalloc(1, sizeof(*h));
	free(h->le);
	free(h->counts);
	h->le = xmalloc((inc->n ? inc->n : 1) * sizeof(*h->le));
	h->counts = xmalloc((inc->n + 1) * sizeof(*h->counts));
	if (inc->n)
		memcpy(h->le, inc->le, inc->n * sizeof(*h->le));
	memcpy(h->counts, inc->counts, (inc->n + 1) * sizeof(*h->counts));
	h->view = (struct sample_hist){ inc->n, h->le, h->counts, inc->sum, inc->count };
	return 1;
}

void prom_hist_free(struct prom_hist *h)
{
	if (!h)
		return;
	free(h->le);
	free(h->counts);
	free(h);
}

size_t prom_hist_cost(const struct prom_hist *h, size_t name_len, size_t labels_len)
{
	size_t line = name_len + 7 + labels_len + 32 + 32 + 8;

	return sizeof(*h) + 32 + (2 * h->view.n + 1) * sizeof(double) + 2 * (h->view.n + 3) * line;
}

/* One line: name suffix, the labels with le="text" added when le is given, the value. */
static void line(struct buf *b, const char *name, const char *suffix, const char *labels, size_t labels_len,
		 const char *le, double v)
{
	char val[32];

	buf_add(b, name, strlen(name));
	buf_add(b, suffix, strlen(suffix));
	if (le) {
		if (labels_len) {
			buf_add(b, labels, labels_len - 1); /* without its '}' */
			buf_add(b, ",", 1);
		} else {
			buf_add(b, "{", 1);
		}
		buf_printf(b, "le=\"%s\"}", le);
	} else {
		buf_add(b, labels, labels_len);
	}
	buf_add(b, " ", 1);
	buf_add(b, val, prom_format_value(v, val));
	buf_add(b, "\n", 1);
}

void prom_hist_render(struct buf *b, const char *name, const char *labels, size_t labels_len,
		      const struct prom_hist *h)
{
	double cum = 0;
	char le[32];

	for (size_t i = 0; i <= h->view.n; i++) {
		cum += h->counts[i];
		if (i < h->view.n)
			sample_le_text(h->le[i], le);
		line(b, name, "_bucket", labels, labels_len, i < h->view.n ? le : "+Inf", cum);
	}
	line(b, name, "_sum", labels, labels_len, NULL, h->view.sum);
	line(b, name, "_count", labels, labels_len, NULL, h->view.count);
}
