/* SPDX-License-Identifier: MIT */
/* What a remote server controls in a report, bounded; see bounds.h. */
#include "bounds.h"
#include "../../common/jsonw.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t bound_name(char *s, size_t n)
{
	uint64_t acc = 0, ctl = 0, x, h = n > BOUND_NAME_BYTES ? hash_bytes(0, s, n) : 0;
	size_t i = 0, cut;

	/* a word at a time: any byte with its high bit set, any below 0x20 */
	for (; i + 8 <= n; i += 8) {
		memcpy(&x, s + i, 8);
		acc |= x;
		ctl |= (x - 0x2020202020202020ull) & ~x;
	}
	for (; i < n; i++) {
		acc |= (unsigned char)s[i];
		ctl |= (unsigned char)s[i] < 0x20 ? 0x80 : 0;
	}
	if (acc & 0x8080808080808080ull)
		utf8_sanitize(s);
	if (ctl & 0x8080808080808080ull)
		for (i = 0; i < n; i++)
			if ((unsigned char)s[i] < 0x20)
				s[i] = '?';
	if (n <= BOUND_NAME_BYTES)
		return n;
	cut = BOUND_NAME_BYTES - 17;
	while (cut && ((unsigned char)s[cut] & 0xc0) == 0x80)
		cut--; /* not inside a character */
	snprintf(s + cut, 18, "~%016llx", (unsigned long long)h);
	return cut + 17;
}

/* Every key of g but "period", "timestamp" and "error" (keep_sums: also all but "models", "server_devices"). */
static void cut(json_t *g, int keep_sums)
{
	const char *key;
	json_t *v, *tmp;

	json_object_foreach_safe(g, tmp, key, v) {
		if (!strcmp(key, "period") || !strcmp(key, "timestamp") || !strcmp(key, "error"))
			continue;
		if (!keep_sums || !strcmp(key, "models") || !strcmp(key, "server_devices"))
			json_object_del(g, key);
	}
}

/* The group's error: old, then what was left out and why. */
static void say(json_t *group, const char *old, const char *what, size_t max)
{
	char msg[512];

	snprintf(msg, sizeof(msg),
		 "%s%sleft out: %s, over %zu bytes as JSON, what one endpoint runtime's execution_stats may take",
		 old, *old ? "; " : "", what, max);
	json_object_set_new(group, "error", json_string(msg));
}

int bound_group(json_t *group, struct buf *scratch)
{
	const char *e = json_string_value(json_object_get(group, "error"));
	char *old;

	buf_reset(scratch);
	if (!json_write(group, scratch))
		return 0;
	old = xstrdup(e ? e : "");
	cut(group, 1);
	say(group, old, "the models and server devices", scratch->cap);
	buf_reset(scratch);
	if (json_write(group, scratch)) {
		cut(group, 0);
		say(group, old, "the group's data", scratch->cap);
	}
	free(old);
	buf_reset(scratch);
	return 1;
}
