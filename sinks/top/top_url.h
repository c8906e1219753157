/* SPDX-License-Identifier: MIT */
/*
 * accel-top --url: accel-prom's /metrics as the input, so one producer can
 * feed both the endpoint and a view over SSH. Each poll GETs the URL
 * (common/http.h; gzip accepted; a body over 64 MiB is refused), parses the
 * exposition with common/expo_parse.h, and turns every series whose name is
 * a family of the mapping into a sample for the model (top_model.h): the
 * labels as they are (instance labels first), device_type/device and
 * runtime_tag as the entity's identity. Counters are running totals in the
 * exposition and increments in the model: a counter's sample is its
 * increase since the previous poll (0 at the first; a decrease is a reset
 * and counts from zero), over the poll interval as its period.
 */
#ifndef ACCEL_TOP_URL_H
#define ACCEL_TOP_URL_H

#include "top_model.h"

#include <stddef.h>
#include <stdint.h>

struct top_url;

/* New poller of url (borrowed: it must outlive the poller), polled every interval_ms. */
struct top_url *top_url_new(const char *url, int64_t interval_ms);
void top_url_free(struct top_url *u);

/* GET the URL once and fold it into m as one report. 0, or -1 with err filled ("http://...: HTTP 404"). */
int top_url_poll(struct top_url *u, struct top_model *m, char *err, size_t errsz);

/*
 * Fold exposition text into m as one report (what top_url_poll does after
 * the GET), for the tests and the benchmark. Returns the lines skipped as bad.
 */
size_t top_url_apply(struct top_url *u, struct top_model *m, const char *text, size_t len);

#endif
