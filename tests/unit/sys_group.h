/* SPDX-License-Identifier: MIT */
/*
 * A system group as a report carries it, for the tests of one system
 * collector: sampled (report_group_sample) and written
 * (report_group_write) as the monitor does for system_data, then parsed
 * back. Everything here is static: a test binary includes it once.
 */
#ifndef ACCEL_TEST_SYS_GROUP_H
#define ACCEL_TEST_SYS_GROUP_H

#include "../../common/schema.h"
#include "../../common/util.h"
#include "../../monitor/app/report.h"
#include "../../monitor/core/collector.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#define SYS_GROUP_ISO "2026-11-21T05:30:00.000Z" /* every group's timestamp here */

/*
 * sys_ops's group for cycle cy (NULL: all zero), period 1 s, as JSON (a new
 * reference); its text in text when not NULL (at most size bytes). Bails
 * out when the text is no JSON.
 */
static json_t *sys_group_text(const struct collector_ops *sys_ops, void *state, const struct cycle *cy, char *text,
			      size_t size)
{
	static char err[512];
	struct report_group g = { .name = group_name(sys_ops->group), .period = 1.0 };
	struct cycle zero = { 0 };
	struct buf b;
	json_error_t je;
	json_t *v;

	report_group_sample(&g, sys_ops, state, cy ? cy : &zero, err, sizeof(err));
	buf_init(&b, 256 << 20);
	if (report_group_write(&g, SYS_GROUP_ISO, &b)) {
		printf("Bail out! group %s over 256 MiB\n", g.name);
		exit(1);
	}
	if (text)
		snprintf(text, size, "%s", b.data);
	v = json_loads(b.data, 0, &je);
	if (!v) {
		printf("Bail out! group %s is no JSON: %s: %.300s\n", g.name, je.text, b.data);
		exit(1);
	}
	buf_free(&b);
	return v;
}

static inline json_t *sys_group(const struct collector_ops *sys_ops, void *state, const struct cycle *cy)
{
	return sys_group_text(sys_ops, state, cy, NULL, 0);
}

#endif
