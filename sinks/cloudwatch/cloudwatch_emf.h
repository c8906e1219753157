/* SPDX-License-Identifier: MIT */
/*
 * CloudWatch Embedded Metric Format: datums as JSON log events, one a line,
 * for the CloudWatch agent (or Lambda, or anything that forwards logs):
 *
 *   {"_aws":{"Timestamp":MS,"CloudWatchMetrics":[{"Namespace":NS,
 *     "Dimensions":[[D1,D2]],"Metrics":[{"Name":M,"Unit":U}]}]},
 *    "D1":"v1","D2":"v2","M":42}
 *
 * Datums that share a timestamp and the same dimensions travel in one event,
 * at most 100 metrics each (EMF's limit per directive).
 */
#ifndef ACCEL_CLOUDWATCH_EMF_H
#define ACCEL_CLOUDWATCH_EMF_H

#include "cloudwatch_series.h"
#include "../../common/util.h"

#include <stddef.h>

#define CW_EMF_MAX_METRICS 100

/*
 * Append the events for d[0..n) to out, one JSON object and '\n' each.
 * Returns the number of events, or -ENOSPC when out's cap is reached.
 */
int cw_emf_render(struct buf *out, const char *ns, int storage_resolution, const struct cw_datum *d, size_t n);

#endif
