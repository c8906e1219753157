/* SPDX-License-Identifier: MIT */
/*
 * The report as one line no sink refuses. Every sink reads lines of up to
 * STREAM_DEFAULT_MAX_LINE bytes by default (common/stream.h) and skips a
 * longer one whole, so the producer never writes one: what makes a report
 * that long is the endpoint runtimes' passthrough "exposition" (a server's
 * body, up to its max_body_bytes each, and up to 6 bytes a byte once
 * JSON-escaped). When the report does not fit, expositions are left out, in
 * runtime order those that do not fit in what is left, and each such entry
 * says so in its "exposition_error" (docs/report-format.md §6.1).
 */
#ifndef ACCEL_REPORT_H
#define ACCEL_REPORT_H

#include <jansson.h>
#include <stddef.h>

#include "../../common/util.h"

/*
 * Write report (borrowed; its runtime entries may lose "exposition" and
 * gain "exposition_error") into line, replacing its contents, as one JSON
 * line of at most max bytes, newline included. Returns 0, or -EMSGSIZE when
 * even without any exposition it is longer (line then holds nothing to
 * write). line's cap must be at least max.
 */
int report_write(json_t *report, struct buf *line, size_t max);

#endif
