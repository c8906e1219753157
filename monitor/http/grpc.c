/* SPDX-License-Identifier: MIT */
/* Unary gRPC calls over http_async; see grpc.h. */
#include "grpc.h"
#include "../../common/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const uint8_t grpc_empty_frame[GRPC_FRAME_HEADER] = { 0 };

void grpc_opts(struct http_opts *o, const char *url, const char *sock, const void *frame, size_t len,
	       int64_t timeout_ms, size_t max_body)
{
	static const char *const headers[] = { "content-type: application/grpc", "te: trailers" };
	static const char *const keep[] = { "grpc-status", "grpc-message" };

	memset(o, 0, sizeof(*o));
	o->url = url;
	o->unix_socket = sock;
	o->http2 = 1;
	o->body = frame;
	o->body_len = len;
	o->headers = headers;
	o->nheaders = ARRAY_SIZE(headers);
	o->keep_headers = keep;
	o->nkeep_headers = ARRAY_SIZE(keep);
	o->timeout_ms = timeout_ms;
	o->max_body = max_body;
	o->direct = 1;
}

int grpc_unframe(const void *body, size_t len, const uint8_t **msg, size_t *mlen, char *err, size_t errsz)
{
	const uint8_t *p = body;
	uint32_t n;

	if (len < GRPC_FRAME_HEADER) {
		snprintf(err, errsz, "malformed answer: %zu bytes, not a gRPC message", len);
		return -EBADMSG;
	}
	if (p[0] != 0) {
		snprintf(err, errsz, "malformed answer: the message is compressed (flag %u), which was not asked for",
			 p[0]);
		return -EBADMSG;
	}
	n = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
	if (n != len - GRPC_FRAME_HEADER) {
		snprintf(err, errsz, "malformed answer: the message says %u bytes, %zu came after its header", n,
			 len - GRPC_FRAME_HEADER);
		return -EBADMSG;
	}
	*msg = p + GRPC_FRAME_HEADER;
	*mlen = n;
	return 0;
}

const char *grpc_code_name(int code)
{
	static const char *const names[] = { "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
					     "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
					     "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
					     "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED" };

	return code >= 0 && (size_t)code < ARRAY_SIZE(names) ? names[code] : "UNKNOWN";
}

/* grpc-message is percent-encoded (the gRPC HTTP/2 protocol): decoded in place. */
static void percent_decode(char *s)
{
	char *w = s;

	for (const char *r = s; *r; r++) {
		unsigned v;

		if (r[0] == '%' && r[1] && r[2] && sscanf(r + 1, "%2x", &v) == 1) {
			*w++ = (char)v;
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

int grpc_call_result(const struct http_call *c, char *err, size_t errsz)
{
	char st[32], msg[512] = "";
	char *end;
	long code;

	if (c->error[0]) {
		snprintf(err, errsz, "%s", c->error);
		return -1;
	}
	if (c->status != 200) {
		snprintf(err, errsz, "HTTP %ld, not a gRPC answer", c->status);
		return -1;
	}
	if (http_kept_get(c->kept, "grpc-status", st, sizeof(st))) {
		snprintf(err, errsz, "the answer has no grpc-status (not a gRPC server?)");
		return -1;
	}
	code = strtol(st, &end, 10);
	if (end == st || *end || code < 0 || code > 255) {
		snprintf(err, errsz, "malformed grpc-status \"%.16s\"", st);
		return -1;
	}
	if (code == GRPC_OK)
		return 0;
	http_kept_get(c->kept, "grpc-message", msg, sizeof(msg));
	percent_decode(msg);
	utf8_sanitize(msg);
	snprintf(err, errsz, "gRPC status %ld (%s)%s%s", code, grpc_code_name((int)code), msg[0] ? ": " : "", msg);
	return (int)code;
}
