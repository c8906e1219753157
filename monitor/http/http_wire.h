/* SPDX-License-Identifier: MIT */
/*
 * What the producer and its HTTP helper (http_helper.h) say to each other
 * over their socket: frames of one compact JSON line (the head) followed
 * by "len" bytes of body. Both ends use nonblocking descriptors: frames
 * going out wait in a buffer (http_wire_out) until the socket takes them;
 * bytes coming in are cut into frames (http_wire_in).
 *
 * The producer asks:
 *   {"op":"start","id":N,"conn":C,"opts":{...},"reply_max":B[,"filter":"kubelet_pods"]}
 *       one request (http_wire_opts: the fields of struct http_opts) on
 *       connection C (each its own kept-alive connection, one request at a
 *       time); reply_max: the most bytes the answer's body may have.
 *   {"op":"cancel","id":N}    stop request N (no answer follows)
 *   {"op":"close","conn":C}   forget connection C
 * The helper answers:
 *   {"id":N,"ev":"body"}      request N's answer began to arrive (once)
 *   {"id":N,"ev":"done","error":"...","status":S,"over":0|1,"started_ns":T,
 *    "first_byte_ns":T,"retry_after_ms":R,"len":L} and L bytes of body
 * (times on CLOCK_MONOTONIC, which both processes share).
 */
#ifndef ACCEL_HTTP_WIRE_H
#define ACCEL_HTTP_WIRE_H

#include "../../common/http.h"
#include "../../common/util.h"

#include <jansson.h>
#include <stddef.h>

#define HTTP_WIRE_HEAD_MAX 65536 /* bytes of a frame's head */

/* Frames coming in. */
struct http_wire_in {
	struct buf buf;      /* read, not yet taken */
	size_t off;          /* where the next frame starts in buf */
	size_t max_body;     /* the most body bytes a frame may announce */
};

/* Frames going out. */
struct http_wire_out {
	struct buf buf;
	size_t off;          /* written so far */
};

void http_wire_in_init(struct http_wire_in *w, size_t max_body);
void http_wire_in_free(struct http_wire_in *w);

/*
 * Read at most budget bytes from fd (nonblocking) into w. 0 when fd has
 * nothing more now, 1 when the budget ran out first (more may wait),
 * -EPIPE at end of file, or -errno.
 */
int http_wire_read(struct http_wire_in *w, int fd, size_t budget);

/*
 * Take the next whole frame: 1 with *head (new reference) and the body
 * (borrowed until the next call on w), 0 when none is whole yet, -EPROTO
 * when the bytes are no frame (a head that is not a JSON object, or too long,
 * or a body over max_body).
 */
int http_wire_next(struct http_wire_in *w, json_t **head, const char **body, size_t *len);

void http_wire_out_init(struct http_wire_out *w);
void http_wire_out_free(struct http_wire_out *w);

/* Queue a frame: head (borrowed; "len" is set in it) and len bytes of body. */
void http_wire_put(struct http_wire_out *w, json_t *head, const void *body, size_t len);

/* Is anything waiting to be written? */
int http_wire_pending(const struct http_wire_out *w);

/* Write what fd takes now. 0 when all is written, 1 when some waits (wait for POLLOUT), or -errno. */
int http_wire_flush(struct http_wire_out *w, int fd);

/* o as the "opts" object (new reference). */
json_t *http_wire_opts(const struct http_opts *o);

/*
 * The "opts" object j back into o; o's strings and headers are borrowed from
 * j (headers: an array of at most nmax pointers the caller gives). 0, or
 * -EINVAL with *why (static).
 */
int http_wire_opts_parse(json_t *j, struct http_opts *o, const char **headers, size_t nmax, const char **why);

#endif
