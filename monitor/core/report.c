/* SPDX-License-Identifier: MIT */
/* The report line within the sinks' default line limit; see report.h. */
#include "report.h"
#include "../../common/jsonw.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_EXPO ",\"exposition\":"
#define KEY_NOTE ",\"exposition_error\":"

/* One entry's exposition while the report is fitted. */
struct expo {
	json_t *entry; /* borrowed */
	json_t *text;  /* new reference, taken out of entry */
	size_t cost;   /* bytes it adds to the line: key and escaped string */
	char note[200];
	size_t note_cost; /* bytes the note adds instead */
};

/* Serialize report with its newline; 0 when it fits in max bytes. */
static int write_line(const json_t *report, struct buf *line, size_t max)
{
	buf_reset(line);
	if (json_write(report, line) || line->len + 1 > max)
		return -EMSGSIZE;
	return buf_add(line, "\n", 1) ? -EMSGSIZE : 0;
}

int report_write(json_t *report, struct buf *line, size_t max)
{
	json_t *rts = json_object_get(report, "runtime_data"), *e;
	struct expo *x;
	size_t n = 0, i;
	long long budget;
	int rc;

	if (!write_line(report, line, max))
		return 0;
	/* Too long: take every exposition out, and put back in runtime order what fits. */
	x = xcalloc(json_array_size(rts) + 1, sizeof(*x));
	json_array_foreach(rts, i, e) {
		json_t *t = json_object_get(e, "exposition");

		if (!json_is_string(t))
			continue;
		x[n].entry = e;
		x[n].text = json_incref(t);
		x[n].cost = strlen(KEY_EXPO) + json_string_size(json_string_value(t), json_string_length(t));
		snprintf(x[n].note, sizeof(x[n].note),
			 "left out: %zu bytes as JSON; with it the report line would be longer than %zu bytes, "
			 "what sinks read by default", x[n].cost - strlen(KEY_EXPO), max);
		x[n].note_cost = strlen(KEY_NOTE) + json_string_size(x[n].note, strlen(x[n].note));
		json_object_del(e, "exposition");
		n++;
	}
	rc = write_line(report, line, max);
	/* What the line has room for, each entry's note counted in until its exposition takes the place. */
	budget = (long long)max - (long long)line->len;
	for (i = 0; i < n; i++)
		budget -= (long long)x[i].note_cost;
	for (i = 0; i < n; i++) {
		if (!rc && (long long)x[i].cost <= budget + (long long)x[i].note_cost) {
			budget += (long long)x[i].note_cost - (long long)x[i].cost;
			json_object_set(x[i].entry, "exposition", x[i].text);
		} else {
			json_object_set_new(x[i].entry, "exposition_error", json_string(x[i].note));
		}
		json_decref(x[i].text);
	}
	free(x);
	if (rc)
		return rc;
	return write_line(report, line, max);
}
