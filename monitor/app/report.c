/* SPDX-License-Identifier: MIT */
/* The report line within the sinks' default line limit; see report.h. */
#include "report.h"
#include "../../common/jsonw.h"
#include "../../common/stream.h"
#include "../core/collector.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_EXPO ",\"exposition\":"
#define KEY_NOTE ",\"exposition_error\":"

/* One entry's exposition while the report is fitted. */
struct expo {
	json_t *entry; /* borrowed */
	size_t at;     /* its index in runtime_data */
	json_t *text;  /* new reference, taken out of entry */
	size_t cost;   /* bytes it adds to the line: key and escaped string */
	char note[200];
	size_t note_cost; /* bytes the note adds instead */
};

/* One runtime entry, by its size without its exposition, while the report is fitted. */
struct ent {
	json_t *entry; /* borrowed */
	size_t at;     /* its index in runtime_data */
	size_t size;   /* bytes as JSON */
};

static int str(struct buf *b, const char *s)
{
	return json_write_string(b, s, strlen(s));
}

/* "collectors": r's timing rows, each collector's groups under it (struct report). */
static int write_timing(const struct report *r, struct buf *b)
{
	const struct report_timing *t = r->timing;
	int rc = buf_puts(b, "{"), first = 1;

	for (size_t i = 0; i < r->ntiming && !rc; i++) {
		size_t k = 0;

		while (k < i && strcmp(t[k].collector, t[i].collector))
			k++;
		if (k < i)
			continue; /* written with its collector's first row */
		rc = (first ? 0 : buf_puts(b, ",")) || str(b, t[i].collector) || buf_puts(b, ":{");
		first = 0;
		for (k = i; k < r->ntiming && !rc; k++) {
			if (strcmp(t[k].collector, t[i].collector))
				continue;
			rc = (k > i ? buf_puts(b, ",") : 0) || str(b, t[k].group) || buf_puts(b, ":{\"seconds\":") ||
			     json_write_real(b, t[k].seconds) || buf_puts(b, ",\"cpu_seconds\":") ||
			     json_write_real(b, t[k].cpu_seconds) ||
			     buf_puts(b, t[k].ok ? ",\"success\":true}" : ",\"success\":false}");
		}
		rc = rc || buf_puts(b, "}");
	}
	return rc || buf_puts(b, "}") ? -ENOSPC : 0;
}

int report_group_write(const struct report_group *g, const char *iso, struct buf *b)
{
	int rc = buf_puts(b, "{\"period\":") || json_write_real(b, g->period) || buf_puts(b, ",\"timestamp\":") ||
		 str(b, iso) || buf_puts(b, ",\"error\":") || str(b, g->error) ||
		 (g->write && g->write(g->state, b)) || buf_puts(b, "}");
	return rc ? -ENOSPC : 0;
}

int report_group_sample(struct report_group *g, const struct collector_ops *ops, void *state, const struct cycle *cy,
			char *err, size_t errsz)
{
	err[0] = '\0';
	g->error = err;
	g->state = state;
	g->write = NULL;
	if (!ops->sample(state, cy, err, errsz))
		g->write = ops->write;
	else if (!err[0])
		snprintf(err, errsz, "%s: no data", group_name(ops->group));
	return !err[0];
}

/* "system_data": r's groups, in order. */
static int write_system(const struct report *r, struct buf *b)
{
	int rc = buf_puts(b, "{");

	for (size_t i = 0; i < r->nsystem && !rc; i++)
		rc = (i ? buf_puts(b, ",") : 0) || str(b, r->system[i].name) || buf_puts(b, ":") ||
		     report_group_write(&r->system[i], r->iso, b);
	return rc || buf_puts(b, "}") ? -ENOSPC : 0;
}

/* Append the report, with rts as its runtime_data; 0, or -ENOSPC past b's cap. */
static int write_doc(const struct report *r, const json_t *rts, struct buf *b)
{
	const char *key;
	json_t *v;
	int rc = buf_puts(b, "{\"timestamp\":") || str(b, r->iso) || buf_puts(b, ",\"monitor\":{\"version\":") ||
		 str(b, ACCEL_VERSION) || buf_puts(b, ",\"format_version\":") ||
		 json_write_u64(b, REPORT_FORMAT_VERSION) || buf_puts(b, ",\"seq\":") || json_write_u64(b, r->seq) ||
		 buf_puts(b, ",\"collectors\":") || write_timing(r, b) || buf_puts(b, "},\"runtime_data\":") ||
		 json_write(rts, b) || buf_puts(b, ",\"device_data\":") || json_write(r->device_data, b) ||
		 buf_puts(b, ",\"system_data\":") || write_system(r, b) || buf_puts(b, ",\"instance_info\":") ||
		 buf_puts(b, r->instance_info);

	json_object_foreach(r->extra, key, v) {
		if (rc)
			break;
		rc = buf_puts(b, ",") || str(b, key) || buf_puts(b, ":") || json_write(v, b);
	}
	return rc || buf_puts(b, "}") ? -ENOSPC : 0;
}

/* Serialize r with its newline; 0 when it fits in max bytes. */
static int write_line(const struct report *r, struct buf *line, size_t max)
{
	buf_reset(line);
	if (write_doc(r, r->runtime_data, line) || line->len + 1 > max)
		return -EMSGSIZE;
	return buf_add(line, "\n", 1) ? -EMSGSIZE : 0;
}

/* The bytes v takes as JSON, written into scratch; past scratch's cap, more than the cap. */
static size_t json_size(const json_t *v, struct buf *scratch)
{
	buf_reset(scratch);
	return json_write(v, scratch) ? scratch->cap + 1 : scratch->len;
}

/* Largest first; in runtime order among equals. */
static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->size != y->size)
		return x->size < y->size ? 1 : -1;
	return x->at < y->at ? -1 : x->at > y->at;
}

/*
 * Each group of entry's "report" becomes its envelope ("period",
 * "timestamp") and an "error" that says why, after any error it had.
 */
static void shed(json_t *entry, size_t size, size_t max)
{
	json_t *rep = json_object_get(entry, "report"), *g;
	const char *name;

	json_object_foreach(rep, name, g) {
		const char *key;
		json_t *v, *tmp;

		if (!json_is_object(g))
			continue;
		add_error(g,
			  "left out: this runtime's entry is %s%zu bytes as JSON; with it the report line would be "
			  "longer than %zu bytes, what sinks read by default",
			  size > max ? "over " : "", size > max ? max : size, max);
		json_object_foreach_safe(g, tmp, key, v)
			if (strcmp(key, "period") && strcmp(key, "timestamp") && strcmp(key, "error"))
				json_object_del(g, key);
	}
}

/*
 * The report still too long without expositions: runtime entries are shed,
 * largest first, until it fits. 0 when it fits now (line then holds it),
 * -EMSGSIZE when even without any runtime's data it does not. shed_out[i]
 * says which of rts were shed.
 */
static int shed_runtimes(const struct report *r, struct buf *line, size_t max, unsigned char *shed_out)
{
	json_t *rts = r->runtime_data, *none = json_array();
	size_t n = json_array_size(rts), total;
	struct ent *e = xcalloc(n + 1, sizeof(*e));
	struct buf scratch;

	/*
	 * The line's length: the rest of the report, with "runtime_data":[],
	 * plus each entry and the commas between them. An entry past the cap
	 * counts as cap + 1: so long it is the first shed, and then exact.
	 */
	buf_init(&scratch, max);
	total = (write_doc(r, none, &scratch) ? scratch.cap + 1 : scratch.len) + (n ? n - 1 : 0);
	json_decref(none);
	for (size_t i = 0; i < n; i++) {
		e[i].entry = json_array_get(rts, i);
		e[i].at = i;
		e[i].size = json_size(e[i].entry, &scratch);
		total += e[i].size;
	}
	qsort(e, n, sizeof(*e), cmp_ent);
	for (size_t i = 0; i < n && total + 1 > max; i++) {
		shed(e[i].entry, e[i].size, max);
		total = total - e[i].size + json_size(e[i].entry, &scratch);
		shed_out[e[i].at] = 1;
	}
	buf_free(&scratch);
	free(e);
	return write_line(r, line, max);
}

int report_write(const struct report *r, struct buf *line, size_t max)
{
	json_t *rts = r->runtime_data, *e;
	struct expo *x;
	unsigned char *gone;
	size_t n = 0, i;
	long long budget;
	int rc;

	if (!write_line(r, line, max))
		return 0;
	/* Too long: take every exposition out, and put back in runtime order what fits. */
	x = xcalloc(json_array_size(rts) + 1, sizeof(*x));
	gone = xcalloc(json_array_size(rts) + 1, 1);
	json_array_foreach(rts, i, e) {
		json_t *t = json_object_get(e, "exposition");

		if (!json_is_string(t))
			continue;
		x[n].entry = e;
		x[n].at = i;
		x[n].text = json_incref(t);
		x[n].cost = strlen(KEY_EXPO) + json_string_size(json_string_value(t), json_string_length(t));
		snprintf(x[n].note, sizeof(x[n].note),
			 "left out: %zu bytes as JSON; with it the report line would be longer than %zu bytes, "
			 "what sinks read by default", x[n].cost - strlen(KEY_EXPO), max);
		x[n].note_cost = strlen(KEY_NOTE) + json_string_size(x[n].note, strlen(x[n].note));
		json_object_del(e, "exposition");
		n++;
	}
	/* Each entry's note counted in; still too long: the largest runtimes' data goes too (theirs never comes back). */
	for (i = 0; i < n; i++)
		json_object_set_new(x[i].entry, "exposition_error", json_string(x[i].note));
	rc = write_line(r, line, max);
	if (rc)
		rc = shed_runtimes(r, line, max, gone);
	/* What the line has room for, each entry's note counted in until its exposition takes the place. */
	budget = (long long)max - (long long)line->len;
	for (i = 0; i < n; i++) {
		if (!rc && !gone[x[i].at] && (long long)x[i].cost <= budget + (long long)x[i].note_cost) {
			budget += (long long)x[i].note_cost - (long long)x[i].cost;
			json_object_del(x[i].entry, "exposition_error");
			json_object_set(x[i].entry, "exposition", x[i].text);
		}
		json_decref(x[i].text);
	}
	free(x);
	free(gone);
	if (rc)
		return rc;
	return write_line(r, line, max);
}
