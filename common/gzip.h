/* SPDX-License-Identifier: MIT */
/*
 * gzip for request bodies (zlib): the push sinks compress what they send
 * (accel-cloudwatch's PutMetricData bodies, accel-otlp's export requests)
 * with the one function here. Fast over small: Z_BEST_SPEED, since a
 * sender compresses each request once and usually on a busy node.
 */
#ifndef ACCEL_GZIP_H
#define ACCEL_GZIP_H

#include "util.h"

#include <stddef.h>

/*
 * gzip src (len bytes, borrowed) into dst (reset first; its cap bounds the
 * result). 0, -ENOMEM when zlib cannot start, -ENOSPC past dst's cap.
 */
int gzip_compress(const void *src, size_t len, struct buf *dst);

#endif
