/* SPDX-License-Identifier: MIT */
/*
 * Unary gRPC calls over the producer's one HTTP client (http_async.h),
 * without a gRPC library: a gRPC call is an HTTP/2 POST of one framed
 * message (a byte that says whether it is compressed, then its length in 4
 * bytes, big-endian, then the message) with "content-type:
 * application/grpc" and "te: trailers", answered by one framed message and
 * the trailers grpc-status and grpc-message. The transport (HTTP/2 with
 * prior knowledge, a unix socket, trailers kept) is http_async's; this
 * file only frames, unframes and reads the status. The messages themselves
 * are the caller's (protobuf-c).
 *
 * Compression is never asked for (no grpc-accept-encoding is sent), so a
 * compressed answer is refused as malformed.
 */
#ifndef ACCEL_GRPC_H
#define ACCEL_GRPC_H

#include "http_async.h"

#include <stddef.h>
#include <stdint.h>

#define GRPC_FRAME_HEADER 5 /* bytes before each message */

/* gRPC status codes the callers name. */
enum { GRPC_OK = 0, GRPC_UNIMPLEMENTED = 12 };

/*
 * Options for a unary call of path (e.g. "/v1.PodResourcesLister/List")
 * on the unix socket sock, with the framed request frame (len bytes,
 * borrowed until the call ends), a timeout and a cap on the answer's
 * bytes. The headers and kept trailers are static.
 */
void grpc_opts(struct http_opts *o, const char *url, const char *sock, const void *frame, size_t len,
	       int64_t timeout_ms, size_t max_body);

/* The frame of an empty message (a request without fields): 5 zero bytes. */
extern const uint8_t grpc_empty_frame[GRPC_FRAME_HEADER];

/*
 * The one message of a unary answer (len bytes): *msg (borrowed from body)
 * and *mlen. 0, or -EBADMSG with err saying what is wrong (too short, a
 * compressed message, a length past the end, bytes after the message).
 */
int grpc_unframe(const void *body, size_t len, const uint8_t **msg, size_t *mlen, char *err, size_t errsz);

/*
 * How an ended call went: 0 when an answer with grpc-status 0 came; the
 * gRPC status (> 0) with err "gRPC status N (NAME): <grpc-message>" when
 * it is not 0; -1 with err when the transport failed, the HTTP status is
 * not 200 or no grpc-status came.
 */
int grpc_call_result(const struct http_call *c, char *err, size_t errsz);

/* The name of a gRPC status code ("UNIMPLEMENTED"), or "UNKNOWN" past the table. */
const char *grpc_code_name(int code);

#endif
