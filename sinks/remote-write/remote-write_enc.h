/* SPDX-License-Identifier: MIT */
/*
 * Remote write 1.0 requests: series and samples -> prompb WriteRequest
 * (protobuf-c, remote-write_prompb.proto) -> snappy block format.
 *
 * The encoder interns each series once (family + accel-prom's rendered
 * label set -> its remote-write label list: __name__, the series' labels
 * and the external labels, sorted by name), collects samples into a batch,
 * and packs the batch as one WriteRequest in which each series appears once
 * with its samples in the order they were added. Metadata (type, help,
 * unit of every family seen) is a request of its own, as Prometheus sends it.
 *
 * Not thread-safe: one encoder per thread.
 */
#ifndef ACCEL_REMOTE_WRITE_ENC_H
#define ACCEL_REMOTE_WRITE_ENC_H

#include "../../common/samples.h"
#include "../../common/util.h"

#include <stddef.h>
#include <stdint.h>

#define RW_SERIES_MAX 200000 /* distinct series; beyond this rw_enc_series refuses (-ENOSPC) */
#define RW_LABELS_MAX 64     /* labels of one series, external ones included */

struct rw_enc;

/* ext: "name=value" strings (external labels), n of them, copied. NULL on a bad one, with err filled. */
struct rw_enc *rw_enc_new(const char *const *ext, size_t n, char *err, size_t errsz);
void rw_enc_free(struct rw_enc *e); /* NULL-safe */

/*
 * The id of a series: fam (static, borrowed for the encoder's life) and
 * labels as accel-prom renders them ("{a=\"x\"}" or ""). 0 and *id, or
 * -EINVAL (labels not in that form), -E2BIG (too many labels), -ENOSPC
 * (RW_SERIES_MAX reached).
 */
int rw_enc_series(struct rw_enc *e, const struct family *fam, const char *labels, size_t len, uint32_t *id);
/*
 * The same for one series of a histogram family as Prometheus scrapes it: the family's name with suffix
 * ("_bucket", "_sum", "_count"; labels with le for a bucket), the family (its metadata: type histogram) noted once.
 */
int rw_enc_series_sub(struct rw_enc *e, const struct family *fam, const char *suffix, const char *labels, size_t len,
		      uint32_t *id);

/* Add one sample of series id to the batch. */
void rw_enc_add(struct rw_enc *e, uint32_t id, int64_t ts_ms, double value);

/* What adding a sample of series id would add to rw_enc_pending_bytes (its labels when it is new to the batch). */
size_t rw_enc_cost(const struct rw_enc *e, uint32_t id);

/* Samples in the batch, and the estimated size of its WriteRequest (bytes, before compression). */
size_t rw_enc_pending(const struct rw_enc *e);
size_t rw_enc_pending_bytes(const struct rw_enc *e);

/*
 * Pack the batch into a WriteRequest and compress it with snappy into out
 * (reset first); the batch is emptied. raw_len, when not NULL, gets the
 * size before compression. 0 or -ENOMEM / -E2BIG (out's cap).
 */
int rw_enc_flush(struct rw_enc *e, struct buf *out, size_t *raw_len);

/* A WriteRequest holding the metadata of every family seen so far, compressed into out. 0 or -errno. */
int rw_enc_metadata(struct rw_enc *e, struct buf *out);

/* Number of families seen (what rw_enc_metadata sends). */
size_t rw_enc_nfamilies(const struct rw_enc *e);

/* Snappy-compress src into out (reset first). 0 or -errno. */
int rw_snappy(const void *src, size_t len, struct buf *out);

/* Uncompress a snappy block into out (reset first; out's cap applies). 0 or -EINVAL / -E2BIG. */
int rw_unsnappy(const void *src, size_t len, struct buf *out);

#endif
