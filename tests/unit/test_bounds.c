/* SPDX-License-Identifier: MIT */
/*
 * monitor/endpoint/bounds.c: a server's name is cut to 256 bytes of valid
 * UTF-8 without control bytes (a longer one ended by a hash of all of it,
 * whole characters kept), and an execution_stats group over its budget
 * loses its models, then its sums, with an error that says so.
 */
#include "../../monitor/endpoint/bounds.h"
#include "../../common/jsonw.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_names(void)
{
	char s[1200], t[1200];
	size_t n;

	strcpy(s, "resnet50");
	is_int(bound_name(s, 8), 8, "a short name as it is");
	ok(!strcmp(s, "resnet50"), "unchanged");

	memcpy(s, "a\x01\x1f" "b\xff" "c", 6);
	s[6] = '\0';
	is_int(bound_name(s, 6), 6, "control bytes and invalid UTF-8: same length");
	ok(!strcmp(s, "a??b?c"), "each a '?' (%s)", s);

	memset(s, 'x', 256);
	s[256] = '\0';
	is_int(bound_name(s, 256), 256, "256 bytes: kept whole");

	memset(s, 'x', 1000);
	s[1000] = '\0';
	memcpy(t, s, 1001);
	t[999] = 'y';
	n = bound_name(s, 1000);
	is_int(n, 256, "1000 bytes: cut to 256");
	ok(strlen(s) == 256 && s[239] == '~' && strspn(s, "x") == 239 && strspn(s + 240, "0123456789abcdef") == 16,
	   "its first 239 bytes, '~' and 16 hex digits: %s", s + 230);
	bound_name(t, 1000);
	ok(strcmp(s, t) != 0 && !memcmp(s, t, 240), "a name that differs past the cut stays apart");

	/* a 2-byte character across the cut: not split */
	memset(s, 'x', 1000);
	memcpy(s + 238, "\xc3\xa9", 2);
	s[1000] = '\0';
	n = bound_name(s, 1000);
	is_int(n, 255, "a character across the cut: left out whole");
	ok(s[238] == '~' && strlen(s) == 255, "the hash after the last whole character");

	memset(s, '\x01', 600);
	s[600] = '\0';
	bound_name(s, 600);
	ok(strspn(s, "?") == 239 && json_string_size(s, strlen(s)) == 258, "control bytes cut: 258 bytes as JSON");
}

/* An execution_stats group: n models of about 60 bytes, runtime sums, an error. */
static json_t *group(int n, const char *err)
{
	json_t *models = json_object(), *g;
	char name[32];

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "model-%05d", i);
		json_object_set_new(models, name, json_pack("{s:{s:{s:i}}}", "1", "execution_summary", "completed", 7));
	}
	g = json_pack("{s:f, s:s, s:s, s:{s:i}, s:o, s:{}}", "period", 10.0, "timestamp", "2026-11-27T15:00:00.000Z",
		      "error", err, "execution_summary", "completed", 7 * n, "models", models, "server_devices");
	return g;
}

static void test_group(void)
{
	struct buf b;
	json_t *g = group(10, "");
	const char *e;

	buf_init(&b, 4096);
	is_int(bound_group(g, &b), 0, "a group within the budget");
	is_int((int)json_object_size(json_object_get(g, "models")), 10, "its models kept");
	ok(!strcmp(json_string_value(json_object_get(g, "error")), ""), "no error");
	json_decref(g);

	g = group(200, "more than 4096 model versions: 3 samples left out");
	is_int(bound_group(g, &b), 1, "a group over 4096 bytes: cut");
	ok(!json_object_get(g, "models") && !json_object_get(g, "server_devices"), "its models and devices left out");
	ok(json_object_get(g, "execution_summary") && json_object_get(g, "period") && json_object_get(g, "timestamp"),
	   "its runtime sums and envelope kept");
	e = json_string_value(json_object_get(g, "error"));
	ok(e && !strcmp(e, "more than 4096 model versions: 3 samples left out; left out: the models and server devices, "
			   "over 4096 bytes as JSON, what one endpoint runtime's execution_stats may take"),
	   "the error keeps the old one and says why: %s", e ? e : "(none)");
	json_decref(g);

	/* sums alone over the budget: the envelope and the error only */
	buf_free(&b);
	buf_init(&b, 400);
	g = group(3, "");
	{
		json_t *es = json_object();

		for (int i = 0; i < 40; i++) {
			char t[32];

			snprintf(t, sizeof(t), "reason-%02d", i);
			json_object_set_new(es, t, json_integer(i));
		}
		json_object_set_new(g, "error_summary", es);
	}
	is_int(bound_group(g, &b), 1, "a group whose sums alone are over 400 bytes: cut");
	is_int((int)json_object_size(g), 3, "to its period, timestamp and error");
	e = json_string_value(json_object_get(g, "error"));
	ok(e && strstr(e, "left out: the group's data, over 400 bytes"), "the error says so: %s", e ? e : "(none)");
	json_decref(g);
	buf_free(&b);
}

int main(void)
{
	test_names();
	test_group();
	return done_testing();
}
