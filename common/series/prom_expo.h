/* SPDX-License-Identifier: MIT */
/*
 * accel-prom's published exposition: one immutable, reference-counted
 * snapshot of everything a scrape can ask for (the Prometheus text,
 * the OpenMetrics text, their gzip forms, the BIE JSON), rendered once
 * per report by the ingest side and swapped in under a mutex.
 *
 * A scrape takes a reference, hands the bytes to the HTTP library and
 * drops the reference when the response is freed: it never waits on
 * ingestion, and ingestion never waits on a slow client (it only swaps a
 * pointer). The gzip forms are made on the first request that wants
 * them, once per snapshot.
 *
 * Also the text format's values and escapes, which the store
 * (prom_store.h) and the servers' own families (prom_pass.h) both write.
 */
#ifndef ACCEL_PROM_EXPO_H
#define ACCEL_PROM_EXPO_H

#include "../util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

enum expo_variant {
	EXPO_TEXT,        /* text/plain; version=0.0.4 */
	EXPO_OPENMETRICS, /* application/openmetrics-text; version=1.0.0 */
	EXPO_NVARIANT
};

struct expo_body {
	char *data; /* owned */
	size_t len; /* bytes */
};

struct prom_expo {
	atomic_uint refs;
	struct expo_body body[EXPO_NVARIANT];
	struct expo_body bie;                /* /v1/collect JSON */
	pthread_mutex_t gz_lock;             /* guards gz and gz_done */
	struct expo_body gz[EXPO_NVARIANT];  /* gzip of body[], made lazily */
	int gz_done[EXPO_NVARIANT];          /* 1 made, -1 failed (serve plain) */
};

/* A new snapshot (one reference) that steals the three malloc'd bodies. */
struct prom_expo *prom_expo_new(struct expo_body text, struct expo_body om, struct expo_body bie);

void prom_expo_ref(struct prom_expo *e);
void prom_expo_unref(struct prom_expo *e); /* NULL-safe; frees on the last reference */

/*
 * The gzip form of variant v, made on first use. Returns 0 with *out
 * borrowed (valid while the caller holds a reference), or -ENOMEM / -EIO
 * when compression failed (the caller serves the plain body).
 */
int prom_expo_gzip(struct prom_expo *e, enum expo_variant v, const struct expo_body **out);

/* The current snapshot, swapped in by the ingest side. */
struct prom_pub {
	pthread_mutex_t lock;
	struct prom_expo *cur; /* may be NULL before the first render */
};

void prom_pub_init(struct prom_pub *p);
void prom_pub_destroy(struct prom_pub *p);
/* Publish e (steals the caller's reference); the previous snapshot is released. */
void prom_pub_swap(struct prom_pub *p, struct prom_expo *e);
/* The current snapshot as a new reference, or NULL. */
struct prom_expo *prom_pub_get(struct prom_pub *p);

/* gzip (RFC 1952) of src into a new malloc'd buffer. 0 or -ENOMEM / -EIO. Exposed for tests. */
int prom_gzip(const char *src, size_t len, struct expo_body *out);

/*
 * Print v the way the exposition does: integers without exponent or
 * fraction, other values in the shortest form that reads back exactly,
 * NaN, +Inf, -Inf. dst gets at most 32 bytes. Returns the length.
 */
size_t prom_format_value(double v, char dst[32]);

/* Append s to b escaped for a label value (\\, \", \n); 0 or -ENOSPC. */
int prom_escape_label(struct buf *b, const char *s);

/* Append s to b escaped for a HELP line: \\ and \n, and \" too in OpenMetrics (om set); 0 or -ENOSPC. */
int prom_escape_help(struct buf *b, const char *s, int om);

/*
 * Parse a rendered label set (prom_store.h's prom_series_view.labels) back into name/value
 * pairs written into pool: names[i] and values[i] point into pool. Returns
 * the number of labels, or -EINVAL / -E2BIG (more than max, or pool too
 * small). For the push sinks, which send the store's series with labels of
 * their own (accel-remote-write, accel-otlp).
 */
int prom_parse_labels(const char *s, size_t len, char *pool, size_t poolsz, const char **names, const char **values,
		      size_t max);

/*
 * One /v1/collect object's members (Baidu BIE's collector API): usedMemory,
 * totalMemory and percent (used / total; 0 when total is not above 0),
 * numbers written exactly (sums in long double neither wrap nor overflow).
 */
void prom_bie_entry(struct buf *b, long double used, long double total);

#endif
