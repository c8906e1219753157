/* SPDX-License-Identifier: MIT */
/* The schema tables (groups, config aliases, labels) and their JSON; see schema.h. */
#include "schema.h"

#include <string.h>

static const struct {
	const char *name;
	const char *alias;
	enum group_scope scope;
} groups[GROUP_COUNT] = {
#define X(id, name, alias, scope) [GROUP_##id] = { name, alias, scope },
	SCHEMA_GROUPS(X)
#undef X
};

static const char *const scope_names[] = { "system", "runtime", "device" };

const char *const schema_config_aliases[][2] = {
	{ "neuron_runtimes", "runtimes" },
	{ NULL, NULL },
};

const struct schema_label schema_labels[LBL_COUNT] = {
#define X(id, name, kind, source, flags, dim) [LBL_##id] = { name, kind, source, flags, dim },
	SCHEMA_LABELS(X)
#undef X
};

const char *group_name(enum group_id id)
{
	return groups[id].name;
}

const char *group_alias(enum group_id id)
{
	return groups[id].alias;
}

enum group_scope group_scope(enum group_id id)
{
	return groups[id].scope;
}

const char *scope_name(enum group_scope scope)
{
	return scope_names[scope];
}

int schema_group_lookup(const char *name, enum group_scope scope)
{
	for (int i = 0; i < GROUP_COUNT; i++)
		if (groups[i].scope == scope &&
		    (!strcmp(groups[i].name, name) || (groups[i].alias && !strcmp(groups[i].alias, name))))
			return i;
	return -1;
}

const struct schema_label *schema_label(const char *name)
{
	for (size_t i = 0; i < LBL_COUNT; i++)
		if (!strcmp(schema_labels[i].name, name))
			return &schema_labels[i];
	return NULL;
}

json_t *schema_json(void)
{
	static const char *const kinds[] = { "instance", "runtime", "device", "value" };
	json_t *o = json_object(), *g = json_array(), *a = json_object(), *l = json_array();

	for (int i = 0; i < GROUP_COUNT; i++)
		json_array_append_new(g, json_pack("{s:s, s:s?, s:s}", "name", groups[i].name, "alias", groups[i].alias,
						   "scope", scope_names[groups[i].scope]));
	for (size_t i = 0; schema_config_aliases[i][0]; i++)
		json_object_set_new(a, schema_config_aliases[i][0], json_string(schema_config_aliases[i][1]));
	for (size_t i = 0; i < LBL_COUNT; i++) {
		const struct schema_label *x = &schema_labels[i];

		json_array_append_new(l, json_pack("{s:s, s:s, s:s?, s:b, s:b, s:s}", "name", x->name, "kind",
						   kinds[x->kind], "source", x->source, "csv_column",
						   !!(x->flags & LABEL_CSV_COLUMN), "optional", !!(x->flags & LABEL_OPTIONAL),
						   "cloudwatch_dimension", x->cw_dim));
	}
	json_object_set_new(o, "groups", g);
	json_object_set_new(o, "config_aliases", a);
	json_object_set_new(o, "labels", l);
	return o;
}
