/* SPDX-License-Identifier: MIT */
/*
 * A histogram series of accel-prom's store (prom_store.h): the buckets,
 * sum and count of a histogram family's series, cumulative since the
 * series began, as Prometheus' classic histograms are. Each sample the
 * mapping yields (struct sample_hist: the period's increments) is added
 * bucket by bucket; a sample whose bounds differ from the series' own
 * (the server's buckets were reconfigured) starts the series again from
 * that sample, which a reader sees as a counter reset. Rendered as
 * name_bucket{...,le="b"} (cumulative over the bounds, le="+Inf" last),
 * name_sum and name_count, in Prometheus text 0.0.4 and OpenMetrics 1.0.0
 * alike.
 *
 * Ownership: struct prom_hist owns its arrays; the series that holds it
 * owns it.
 */
#ifndef ACCEL_PROM_HIST_H
#define ACCEL_PROM_HIST_H

#include "../samples.h"
#include "../util.h"

#include <stddef.h>

struct prom_hist {
	struct sample_hist view; /* le and counts point into the arrays below: per-bucket, cumulative in time */
	double *le, *counts;     /* owned: n and n + 1 */
};

/*
 * Add inc (a sample's increments) to *h, made when NULL. Returns 1 when
 * the series started again (new, or bounds that differ from its own), 0
 * when the increments were added.
 */
int prom_hist_add(struct prom_hist **h, const struct sample_hist *inc);

/* NULL-safe. */
void prom_hist_free(struct prom_hist *h);

/*
 * What h costs beyond its series' own line, for the store's byte cap: its
 * arrays, and its n + 2 more lines in each of the two rendered bodies.
 */
size_t prom_hist_cost(const struct prom_hist *h, size_t name_len, size_t labels_len);

/*
 * Append the series' lines to b: name_bucket with labels (the store's
 * rendered set, "{...}" or "") and le, one per bound and +Inf, then
 * name_sum and name_count.
 */
void prom_hist_render(struct buf *b, const char *name, const char *labels, size_t labels_len,
		      const struct prom_hist *h);

#endif
