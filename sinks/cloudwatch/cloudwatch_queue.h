/* SPDX-License-Identifier: MIT */
/*
 * The datum queue of accel-cloudwatch: a ring of datums in arrival order,
 * bounded by --buffer-datums, with the series they belong to interned in a
 * hash table. When the bound is reached the oldest datum goes, and the
 * queue counts it so the loss can be stated.
 *
 * Not thread-safe: the caller serializes access (cloudwatch.c holds one
 * mutex around it, as collectd's write plugins do around their caches).
 */
#ifndef ACCEL_CLOUDWATCH_QUEUE_H
#define ACCEL_CLOUDWATCH_QUEUE_H

#include "cloudwatch_series.h"

#include <stddef.h>
#include <stdint.h>

struct cw_queue {
	struct cw_datum *ring;    /* grows by doubling up to bound */
	size_t alloc, head, len;  /* datums */
	size_t bound;             /* most datums queued at once */
	uint64_t dropped;         /* oldest datums dropped because the queue was full, ever */
	uint64_t pushed;          /* datums accepted, ever */
	struct cw_series **tab;   /* interned series, chained */
	size_t tabsize, nseries;
};

void cw_queue_init(struct cw_queue *q, size_t bound);
/* Release every queued datum and every series. */
void cw_queue_free(struct cw_queue *q);

/*
 * Queue a datum for p, interning its series. When the queue is full the
 * oldest datum is dropped first (q->dropped counts it) and 1 is returned;
 * otherwise 0. -EINVAL when p cannot be a series (a name past the limits).
 */
int cw_queue_push(struct cw_queue *q, const struct cw_point *p);

/* Move up to max datums from the head into out (their references go with them). Returns the count. */
size_t cw_queue_take(struct cw_queue *q, struct cw_datum *out, size_t max);

/* Give back the reference a taken datum holds; the series is freed with its last datum. */
void cw_queue_release(struct cw_queue *q, struct cw_datum *d);

#endif
