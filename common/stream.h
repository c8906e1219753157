/* SPDX-License-Identifier: MIT */
/*
 * The report stream reader every sink uses: reads a file descriptor line by
 * line with a hard cap on line length, parses each line with jansson, and
 * reports a bad line as "NAME:LINE: reason" so the caller can log it and go
 * on with the next one. An over-long line is skipped without being
 * buffered, so a 100 MB line costs no more memory than a short one.
 *
 * By default stream_next blocks until a whole line is in. With wait_ms set
 * (stream_set_wait) it waits at most that long for input, once per call,
 * and answers STREAM_AGAIN when no whole line came: the part of a line
 * already read is kept for the next call, so a thread that must also look
 * at a stop flag or a clock is never stuck in the middle of a line.
 */
#ifndef ACCEL_STREAM_H
#define ACCEL_STREAM_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The line cap every sink reads with by default (--max-line-bytes), newline
 * excluded; accel-monitor never writes a line this long (monitor/app/report.h).
 */
#define STREAM_DEFAULT_MAX_LINE (16u << 20)

/*
 * The version of accel-monitor's report format, written as "monitor"."format_version"
 * (docs/report-format.md, "Format versions"). 3: each process's, container's and pod's
 * identity once, in the report's "identities" (a pod's names in its pod's entry only), and
 * no per-pod or per-container sums in the devices: the reader derives them (derive.h).
 * Sinks still read version 2 (the sums written, a container naming its pod) and version 1
 * (no "format_version": device groups with "process_containers" and named sums).
 */
#define REPORT_FORMAT_VERSION 3

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
	int wait_ms;        /* -1: block until a line is whole; else the longest wait for input in one call */
	size_t part;        /* bytes of the line being read, kept across STREAM_AGAIN */
	int part_any;       /* the line being read has begun (an empty line too) */
	int part_too_long;  /* ... and is past max_line (its bytes are dropped, not kept) */
};

/* stream_next's answer when wait_ms passed without a whole line (only with a wait set). */
#define STREAM_AGAIN (-3)

void stream_init(struct stream *s, int fd, const char *name, size_t max_line);
void stream_free(struct stream *s);

/* Wait at most ms (0: not at all) for input in each stream_next call; -1 blocks (the default). */
void stream_set_wait(struct stream *s, int ms);

/* Whether a whole line is already buffered: the next stream_next needs no read. */
int stream_buffered(const struct stream *s);

/*
 * Next report.
 *  1: *report is a parsed object (new reference), with what its format
 *     leaves to the reader derived (derive.h); *len its line's bytes.
 *  0: end of input.
 * -1: a bad line, skipped: *why says which kind, err holds "name:LINE: reason".
 * -2: a read error (err says which); the stream is at its end.
 * STREAM_AGAIN: with a wait set, no whole line came within it; call again.
 */
int stream_next(struct stream *s, json_t **report, size_t *len, enum stream_bad *why, char *err, size_t errsz);

#endif
