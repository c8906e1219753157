/* SPDX-License-Identifier: MIT */
/* Members of kept JSON objects, set in place; see jset.h. */
#include "jset.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

void jset_int(json_t *o, const char *k, json_int_t v)
{
	json_t *j = json_object_get(o, k);

	if (json_is_integer(j))
		json_integer_set(j, v);
	else
		json_object_set_new(o, k, json_integer(v));
}

void jset_real(json_t *o, const char *k, double v)
{
	json_t *j = json_object_get(o, k);

	if (json_is_real(j))
		json_real_set(j, v);
	else
		json_object_set_new(o, k, json_real(v));
}

void jset_u64(json_t *o, const char *k, uint64_t v)
{
	if (v <= (uint64_t)INT64_MAX)
		jset_int(o, k, (json_int_t)v);
	else
		jset_real(o, k, (double)v);
}

void jset_u64_na(json_t *o, const char *k, uint64_t v, uint64_t na)
{
	if (v == na)
		json_object_del(o, k);
	else
		jset_u64(o, k, v);
}

void jset_u64sum(json_t *o, const char *k, const struct u64sum *s)
{
	if (s->big)
		jset_real(o, k, s->over);
	else
		jset_u64(o, k, s->v);
}

json_t *json_u64(uint64_t v)
{
	/* jansson's integers are int64_t: a cast would print 2^63 as -9223372036854775808. */
	return v <= (uint64_t)INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}

json_t *json_u64sum(const struct u64sum *s)
{
	return s->big ? json_real(s->over) : json_u64(s->v);
}

void jset_bool(json_t *o, const char *k, int v)
{
	json_t *j = json_object_get(o, k);

	if (!json_is_boolean(j) || json_is_true(j) != !!v)
		json_object_set_new(o, k, json_boolean(v));
}

void jset_str(json_t *o, const char *k, const char *v)
{
	json_t *j = json_object_get(o, k);
	char tmp[JSET_STR_MAX + 1];

	if (json_is_string(j) && !strcmp(json_string_value(j), v))
		return;
	snprintf(tmp, sizeof(tmp), "%s", v);
	json_object_set_new(o, k, json_string(utf8_sanitize(tmp)));
}

void jset_str_opt(json_t *o, const char *k, const char *v)
{
	if (v && *v)
		jset_str(o, k, v);
	else if (json_object_get(o, k))
		json_object_del(o, k);
}

json_t *jset_obj(json_t *o, const char *k)
{
	json_t *j = json_object_get(o, k);

	if (!json_is_object(j)) {
		j = json_object();
		json_object_set_new(o, k, j);
	}
	return j;
}
