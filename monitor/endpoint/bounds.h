/* SPDX-License-Identifier: MIT */
/*
 * What a remote server controls in a report, bounded where it is read. An
 * endpoint's body is capped (max_body_bytes), but its label values become
 * JSON keys and strings that JSON escaping can make up to 6 times longer,
 * and a few thousand models times their figures can outgrow a report line.
 * So each name (model, version, error type, device UUID) is cut to
 * BOUND_NAME_BYTES of valid UTF-8 without control bytes, and an endpoint
 * runtime's execution_stats group to BOUND_GROUP_BYTES as JSON; past that,
 * the group loses its models with an "error" that says so. The report
 * writer's last resort for many endpoints together is in app/report.h.
 */
#ifndef ACCEL_BOUNDS_H
#define ACCEL_BOUNDS_H

#include <jansson.h>
#include <stddef.h>

#include "../../common/util.h"

#define BOUND_NAME_BYTES 256u             /* one name, NUL not counted */
#define BOUND_GROUP_BYTES (4u << 20)      /* one execution_stats group as JSON: some 4,000 models with every field */

/*
 * Make the n bytes at s (NUL-terminated, as the server wrote them) a name a
 * report can hold, in place: invalid UTF-8 and control bytes become '?';
 * a name longer than BOUND_NAME_BYTES keeps its first bytes (whole
 * characters) and ends with '~' and 16 hex digits of a hash of all its
 * bytes, so that names cut alike stay apart. Returns the new length.
 */
size_t bound_name(char *s, size_t n);

/*
 * Keep group (borrowed, an execution_stats group) within scratch's cap
 * (BOUND_GROUP_BYTES in the producer) as JSON: when it is longer, its
 * "models" and "server_devices" are taken out (the runtime-level sums
 * stay), then, if still longer, every key but "period", "timestamp" and
 * "error"; its "error" then says what was left out and why, after any
 * error it had. scratch is where it is measured (emptied after). Returns 0
 * when it fit, 1 when it was cut.
 */
int bound_group(json_t *group, struct buf *scratch);

#endif
