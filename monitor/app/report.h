/* SPDX-License-Identifier: MIT */
/*
 * The report as one line no sink refuses. Every sink reads lines of up to
 * STREAM_DEFAULT_MAX_LINE bytes by default (common/stream.h) and skips a
 * longer one whole, so the producer never writes one. What a remote server
 * controls is bounded where it is read (an endpoint's names and its
 * execution_stats, monitor/endpoint/), but many endpoints together can still
 * pass the limit, and so can their passthrough "exposition" (a server's body,
 * up to its max_body_bytes each, and up to 6 bytes a byte once JSON-escaped).
 * When the report does not fit, expositions are left out, in runtime order
 * those that do not fit in what is left, and each such entry says so in its
 * "exposition_error"; when it still does not fit, the largest runtime
 * entries' groups are cut to their envelope and an "error" that says so,
 * until it fits (docs/report-format.md §1 and §6.1).
 */
#ifndef ACCEL_REPORT_H
#define ACCEL_REPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "../../common/util.h"

/*
 * One report. What the monitor says itself (the cycle's time, its sequence
 * number, its self-timing) is kept as C values and written by report_write
 * straight into the line, and so are the system groups, each from its
 * collector's record (struct report_group), and instance_info's text, made
 * once per change; the other parts collectors and the host fill are JSON,
 * borrowed. The line is, in this order (docs/report-format.md §1):
 * {timestamp, monitor {version, format_version, seq, collectors},
 * runtime_data, device_data, system_data, instance_info, then extra's
 * members in the order they were set (identities, allocations)}.
 */
struct report_timing {
	const char *collector, *group; /* names that outlive the report */
	double seconds, cpu_seconds;
	int ok;
};

/*
 * One group of system_data, which its collector keeps as a record: written
 * as {"period", "timestamp" (the report's), "error"} and then its members
 * by its collector's write (collector.h), unless write is NULL (nothing
 * sampled).
 */
struct report_group {
	const char *name;                         /* its key in system_data */
	double period;                            /* seconds */
	const char *error;                        /* "" or why, borrowed */
	int (*write)(void *state, struct buf *b); /* its collector's; NULL: no members */
	void *state;                              /* its collector's, for write */
};

struct report {
	const char *iso;
	uint64_t seq;
	/*
	 * "collectors": each collector and group once; a collector's groups
	 * under it, collectors in the order their first row comes.
	 */
	const struct report_timing *timing;
	size_t ntiming;
	json_t *runtime_data, *device_data; /* arrays */
	const struct report_group *system;  /* system_data's groups, in order */
	size_t nsystem;
	const char *instance_info;          /* its JSON text, written as it is (host_instance_text) */
	json_t *extra; /* an object, or NULL */
};

/*
 * Write report r (its runtime entries may lose "exposition" and gain
 * "exposition_error", and their groups may lose their data for an "error")
 * into line, replacing its contents, as one JSON line of at most max
 * bytes, newline included. Returns 0, or -EMSGSIZE when even without any
 * runtime's data it is longer (line then holds nothing to write). line's
 * cap must be at least max.
 */
int report_write(const struct report *r, struct buf *line, size_t max);

/*
 * Append group g of a report stamped iso, as report_write writes it in
 * system_data (its key aside). 0, or -ENOSPC once b's cap is reached.
 */
int report_group_write(const struct report_group *g, const char *iso, struct buf *b);

struct collector_ops;
struct cycle;
/*
 * Sample a system group into g for cycle cy: ops's sample() on state, its
 * error into err (errsz bytes; g->error points there), g->write its write()
 * when there are members to write. g's name and period are the caller's.
 * Returns 1 when the group has no error, else 0.
 */
int report_group_sample(struct report_group *g, const struct collector_ops *ops, void *state, const struct cycle *cy,
			char *err, size_t errsz);

#endif
