/* SPDX-License-Identifier: MIT */
/*
 * The push sinks' durable record queue (accel-remote-write's and
 * accel-otlp's requests not yet acknowledged): a bounded FIFO of records
 * (one encoded request each, with the number of items it holds: samples,
 * data points), in memory or, with a directory, on disk so that it
 * outlives a crash or a restart.
 *
 * On disk: segment files DIR/<number>.seg, each a run of records
 *     u32 length | u32 count | u32 crc32(count bytes + data) | data
 * (little-endian), appended and fsynced per the policy, and DIR/head, the
 * segment and offset of the oldest record not yet acknowledged, rewritten
 * (write + rename) at each acknowledgement. A segment wholly acknowledged
 * is deleted. At open the records from head on are read back and checked:
 * in the last segment the first one that is cut short or fails its
 * checksum ends it (what a crash in the middle of an append leaves), with a
 * message saying how many bytes were dropped, and is truncated there; in an
 * older segment that is corruption, said so with the segment and offset,
 * and only a record failing its checksum is skipped. A head that cannot be
 * right (past the newest segment, past its segment's end, unreadable)
 * replays every segment, with a warning; one that is not a regular file is
 * an error at open. An append that fails (a full disk) keeps its record in
 * memory, in order, and the segment ends with a whole record: one message
 * while appends fail, one when they work again. One process per directory
 * (DIR/lock, held with flock).
 *
 * A record acknowledged by the receiver but not yet marked in head when
 * the process dies is sent again after the restart: the same data with
 * the same timestamps, a duplicate that a store keyed by series and
 * timestamp keeps once (Prometheus accepts a sample equal in value and
 * timestamp to one it has).
 *
 * Full (max_bytes): the oldest records are dropped to make room, and
 * counted. Not thread-safe: the caller holds its lock around every call.
 */
#ifndef ACCEL_RECQ_H
#define ACCEL_RECQ_H

#include "util.h"

#include <stddef.h>
#include <stdint.h>

#define RECQ_HDR 12                     /* bytes of a record's header */
#define RECQ_RECORD_MAX (64u << 20)     /* a longer length field is corruption */

enum recq_fsync { RECQ_FSYNC_ALWAYS, RECQ_FSYNC_NEVER };

struct recq_opts {
	const char *dir;        /* NULL: in memory */
	uint64_t max_bytes;     /* records (headers included) */
	uint64_t segment_bytes; /* start a new segment past this size; 0: max_bytes / 8, at least 64 KiB */
	enum recq_fsync fsync;
	const char *tag;        /* log prefix: "remote-write"; borrowed */
	const char *unit;       /* what a record's count counts, for messages: "samples"; borrowed */
};

struct recq_stats {
	uint64_t records, bytes, items;     /* queued now */
	uint64_t dropped_records, dropped_items; /* the oldest, dropped because the queue was full */
	uint64_t corrupt_bytes;             /* dropped at open: cut short or failing their checksum */
	uint64_t replayed_records, replayed_items; /* found at open */
};

struct recq;

/* Open (and with a directory, create it or read back what it holds). 0 or -errno, with err filled. */
int recq_open(const struct recq_opts *o, struct recq **q, char *err, size_t errsz);
void recq_close(struct recq *q); /* NULL-safe */

/*
 * Append one record (data copied). When the queue is full the oldest
 * records are dropped first (counted in the stats, and said: "TAG: the
 * queue is full (--queue-max-bytes N): dropped the oldest ...", at most
 * one message every 10 s with the count; *dropped, when not NULL, gets the
 * items dropped by this call, this record's own if it is larger than the
 * whole queue). 0, or -errno when the record could not be
 * written (it is not queued; a disk error is logged).
 */
int recq_push(struct recq *q, const void *data, size_t len, uint32_t count, uint64_t *dropped);

/*
 * Copy the oldest record into out (reset first): 1 with *count and *id
 * (what recq_ack takes), 0 when the queue is empty, -errno on a read
 * error (the record is dropped, logged and counted as corrupt).
 */
int recq_peek(struct recq *q, struct buf *out, uint32_t *count, uint64_t *id);

/* Remove the oldest record if it is still id (a full queue may have dropped it meanwhile). 0 or -errno. */
int recq_ack(struct recq *q, uint64_t id);

void recq_stats(const struct recq *q, struct recq_stats *st);

/* crc32 as the records use it (zlib's). */
uint32_t recq_crc(uint32_t count, const void *data, size_t len);

#endif
