/* SPDX-License-Identifier: MIT */
/*
 * gzip for request bodies; see gzip.h.
 */
#include "gzip.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

int gzip_compress(const void *src, size_t len, struct buf *dst)
{
	z_stream z;
	unsigned char out[16384];
	int rc, flush;

	buf_reset(dst);
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)(uintptr_t)src;
	z.avail_in = (uInt)len;
	do {
		flush = Z_FINISH;
		z.next_out = out;
		z.avail_out = sizeof(out);
		rc = deflate(&z, flush);
		if (rc == Z_STREAM_ERROR || buf_add(dst, out, sizeof(out) - z.avail_out)) {
			deflateEnd(&z);
			return -ENOSPC;
		}
	} while (rc != Z_STREAM_END);
	deflateEnd(&z);
	return 0;
}
