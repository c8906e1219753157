/* SPDX-License-Identifier: MIT */
/*
 * The one place collectors are registered. Adding a collector is a new
 * coll_<name>.c with its ops table and one line here.
 */
#include "collector.h"
#include "../common/util.h"

#include <stdarg.h>
#include <stdio.h>

static const struct group_ops *const group_collectors[] = {
	&coll_cpu_ops,
	&coll_mem_ops,
};

static const struct runtime_ops *const runtime_collectors[] = {
	&coll_pid_ops,
	&coll_process_ops,
};

const struct group_ops *group_ops_find(enum group_id id)
{
	for (size_t i = 0; i < sizeof(group_collectors) / sizeof(group_collectors[0]); i++)
		if (group_collectors[i]->id == id)
			return group_collectors[i];
	return NULL;
}

const struct runtime_ops *runtime_ops_find(enum runtime_kind kind)
{
	for (size_t i = 0; i < sizeof(runtime_collectors) / sizeof(runtime_collectors[0]); i++)
		if (runtime_collectors[i]->kind == kind)
			return runtime_collectors[i];
	return NULL;
}

json_t *group_new(double period_s, const char *iso)
{
	json_t *g = json_object();

	json_object_set_new(g, "period", json_real(period_s));
	json_object_set_new(g, "timestamp", json_string(iso));
	json_object_set_new(g, "error", json_string(""));
	return g;
}

void set_error(json_t *obj, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_set_new(obj, "error", json_string(utf8_sanitize(msg)));
}
