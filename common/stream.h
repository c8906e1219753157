/* SPDX-License-Identifier: MIT */
/*
 * The report stream reader every sink uses: reads a file descriptor line by
 * line with a hard cap on line length, parses each line with jansson, and
 * reports a bad line as "NAME:LINE: reason" so the caller can log it and go
 * on with the next one. An over-long line is skipped without being
 * buffered, so a 100 MB line costs no more memory than a short one.
 */
#ifndef ACCEL_STREAM_H
#define ACCEL_STREAM_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define STREAM_DEFAULT_MAX_LINE (16u << 20)

/* Why a line was rejected: indexes stream_bad_reason_names. */
enum stream_bad {
	STREAM_BAD_JSON,     /* not valid JSON (includes NaN, Infinity, too deep) */
	STREAM_BAD_TOO_LONG, /* longer than the cap */
	STREAM_BAD_NOT_OBJECT,
	STREAM_BAD_COUNT
};
extern const char *const stream_bad_names[STREAM_BAD_COUNT]; /* "json", "too_long", "not_object" */

struct stream {
	int fd;
	const char *name;   /* "stdin" in messages */
	size_t max_line;    /* bytes, newline excluded */
	uint64_t lineno;    /* of the line last returned */
	char *rbuf;         /* read buffer */
	size_t rpos, rlen;
	char *line;         /* current line, grown up to max_line */
	size_t lalloc;
	int eof;
	uint64_t bytes;     /* bytes consumed so far */
};

void stream_init(struct stream *s, int fd, const char *name, size_t max_line);
void stream_free(struct stream *s);

/*
 * Next report.
 *  1: *report is a parsed object (new reference), *len its line's bytes.
 *  0: end of input.
 * -1: a bad line, skipped: *why says which kind, err holds "name:LINE: reason".
 * -2: a read error (err says which); the stream is at its end.
 */
int stream_next(struct stream *s, json_t **report, size_t *len, enum stream_bad *why, char *err, size_t errsz);

#endif
