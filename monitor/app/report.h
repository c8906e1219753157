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
 * A new report's envelope, taking the references it is given (each a new
 * object of its own): {timestamp: iso, monitor {version, format_version,
 * seq, collectors: timing}, runtime_data, device_data, system_data,
 * instance_info}, in that order (docs/report-format.md §1).
 */
json_t *report_new(const char *iso, uint64_t seq, json_t *timing, json_t *runtime_data, json_t *device_data,
		   json_t *system_data, json_t *instance_info);

/*
 * Write report (borrowed; its runtime entries may lose "exposition" and
 * gain "exposition_error", and their groups may lose their data for an
 * "error") into line, replacing its contents, as one JSON line of at most
 * max bytes, newline included. Returns 0, or -EMSGSIZE when even without
 * any runtime's data it is longer (line then holds nothing to write).
 * line's cap must be at least max.
 */
int report_write(json_t *report, struct buf *line, size_t max);

#endif
