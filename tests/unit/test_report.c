/* SPDX-License-Identifier: MIT */
/*
 * The report line within a limit (monitor/app/report.c): a report that fits
 * is json_write's line; one that does not leaves out passthrough expositions
 * (runtime order, those that do not fit), each entry saying so, and never
 * comes out longer than the limit; when it still does not fit, the largest
 * runtime entries' groups are cut to their envelope and an "error" (never the
 * whole report); json_string_size is what json_write writes.
 */
#include "../../common/jsonw.h"
#include "../../common/stream.h"
#include "../../monitor/app/report.h"
#include "tap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Self-timing rows: two collectors, one's groups apart, one group that failed. */
static const struct report_timing timing[] = {
	{ "nvidia", "device_memory", 0.00125, 0.001, 1 },
	{ "cpu", "vcpu_usage", 0.0005, 0.00049, 1 },
	{ "nvidia", "device_power", 2.5, 0.0625, 0 },
};

/*
 * A report with n endpoint entries, entry i's exposition len[i] bytes of
 * c[i] (len 0: none), and nothing else.
 */
static struct report *report(size_t n, const size_t *len, const char *c)
{
	struct report *r = calloc(1, sizeof(*r));
	json_t *rts = json_array();

	for (size_t i = 0; i < n; i++) {
		json_t *e = json_pack("{s:I, s:s, s:n, s:s, s:s, s:{}}", "runtime_index", (json_int_t)i, "address",
				      "http://127.0.0.1:9/metrics", "pid", "error", "", "server", "triton", "report");

		if (len[i]) {
			char *t = malloc(len[i]);

			memset(t, c[i], len[i]);
			json_object_set_new(e, "exposition", json_stringn(t, len[i]));
			free(t);
		}
		json_array_append_new(rts, e);
	}
	r->iso = "2026-11-27T15:00:00.000Z";
	r->seq = 12345;
	r->runtime_data = rts;
	r->device_data = json_array();
	r->instance_info = "{}";
	return r;
}

/* memory_info's members as a record's write() gives them. */
static int mem_write(void *state, struct buf *b)
{
	(void)state;
	return buf_puts(b, ",\"memory_total_bytes\":1024");
}

/* A system group written from its collector's record: what test_write writes after the envelope. */
static int test_write(void *state, struct buf *b)
{
	(void)state;
	return buf_puts(b, ",\"context_switch_count\":7,\"usage_data\":{}");
}

/* The rest of a report: the rows above, a system group, instance_info, allocations set before identities. */
static void enrich(struct report *r)
{
	r->timing = timing;
	r->ntiming = sizeof(timing) / sizeof(timing[0]);
	{
		/* system_data: a collector's object, a group written from its record, and one with an error. */
		struct report_group *g = calloc(4, sizeof(*g));

		g[0] = (struct report_group){ .name = "memory_info", .period = 1.0, .error = "", .write = mem_write };
		g[1] = (struct report_group){ .name = "vcpu_usage", .period = 1.5, .error = "", .write = test_write };
		g[2] = (struct report_group){ .name = "neuron_hw_counters", .period = 0.25,
					      .error = "cannot \"read\"" };
		g[3] = (struct report_group){ .name = "container_usage", .period = 2.0, .error = "some missed",
					      .write = test_write };
		r->system = g;
		r->nsystem = 4;
	}
	r->instance_info = "{\"hostname\":\"node-\\u0001\"}"; /* instance_text's of a hostname "node-\x01" */
	r->extra = json_pack("{s:{}, s:{s:{}}}", "allocations", "identities", "pods");
}

/* r as one JSON document, built with jansson: what its line must read back as, and json_write's text of it. */
static json_t *doc(const struct report *r)
{
	json_t *d, *coll = json_object(), *v, *sys = json_object();
	const char *k;

	for (size_t i = 0; i < r->ntiming; i++) {
		json_t *c = json_object_get(coll, r->timing[i].collector);

		if (!c)
			json_object_set_new(coll, r->timing[i].collector, c = json_object());
		json_object_set_new(c, r->timing[i].group,
				    json_pack("{s:f, s:f, s:b}", "seconds", r->timing[i].seconds, "cpu_seconds",
					      r->timing[i].cpu_seconds, "success", r->timing[i].ok));
	}
	for (size_t i = 0; i < r->nsystem; i++) {
		const struct report_group *g = &r->system[i];

		v = json_pack("{s:f, s:s, s:s}", "period", g->period, "timestamp", r->iso, "error", g->error);
		if (g->write == mem_write) {
			json_object_set_new(v, "memory_total_bytes", json_integer(1024));
		} else if (g->write) { /* test_write's members */
			json_object_set_new(v, "context_switch_count", json_integer(7));
			json_object_set_new(v, "usage_data", json_object());
		}
		json_object_set_new(sys, g->name, v);
	}
	d = json_pack("{s:s, s:{s:s, s:i, s:I, s:o}, s:O, s:O, s:o, s:o}", "timestamp", r->iso, "monitor", "version",
		      ACCEL_VERSION, "format_version", REPORT_FORMAT_VERSION, "seq", (json_int_t)r->seq, "collectors",
		      coll, "runtime_data", r->runtime_data, "device_data", r->device_data, "system_data", sys,
		      "instance_info", json_loads(r->instance_info, 0, NULL));
	json_object_foreach(r->extra, k, v)
		json_object_set(d, k, v);
	return d;
}

static void report_free(struct report *r)
{
	json_decref(r->runtime_data);
	json_decref(r->device_data);
	free((void *)r->system);
	json_decref(r->extra);
	free(r);
}

/* Does line (newline included) read back as r's document? */
static int reads_back(const struct buf *line, const struct report *r)
{
	json_t *back = json_loadb(line->data, line->len, 0, NULL), *want = doc(r);
	int same = back && json_equal(back, want);

	json_decref(back);
	json_decref(want);
	return same;
}

/* Give entry i of rep an execution_stats group whose models take about bytes bytes; err: the group's error. */
static void stats(struct report *rep, size_t i, size_t bytes, const char *err)
{
	json_t *e = json_array_get(rep->runtime_data, i), *models = json_object();
	char name[32];

	for (size_t k = 0; k * 40 < bytes; k++) {
		snprintf(name, sizeof(name), "model-%05zu", k);
		json_object_set_new(models, name, json_pack("{s:{s:i}}", "execution_summary", "completed", 7));
	}
	json_object_set_new(json_object_get(e, "report"), "execution_stats",
			    json_pack("{s:f, s:s, s:s, s:o}", "period", 10.0, "timestamp", "2026-11-27T15:00:00.000Z",
				      "error", err, "models", models));
}

static json_t *group_of(struct report *rep, size_t i)
{
	return json_object_get(json_object_get(json_array_get(rep->runtime_data, i), "report"), "execution_stats");
}

static int has(struct report *rep, size_t i, const char *key)
{
	return json_object_get(json_array_get(rep->runtime_data, i), key) != NULL;
}

int main(void)
{
	struct buf line, plain;
	struct report *rep;
	json_t *j, *whole;
	size_t max = 4096;
	char *pad;

	/* json_string_size: quotes, short escapes, \u00XX */
	is_int(json_string_size("", 0), 2, "empty string: the quotes");
	is_int(json_string_size("a\"\\\n", 4), 2 + 1 + 2 + 2 + 2, "short escapes are 2 bytes");
	is_int(json_string_size("\x01\x1f", 2), 2 + 12, "control bytes are 6 bytes");
	buf_init(&plain, 1 << 20);
	j = json_pack("{s:s}", "k", "a\x01\"\\\t\x7f\xc3\xa9z");
	json_write(json_object_get(j, "k"), &plain);
	is_int(json_string_size("a\x01\"\\\t\x7f\xc3\xa9z", 9), plain.len, "json_string_size is json_write's length");
	json_decref(j);

	/* Strings 8 bytes at a time: each byte escaped where it needs to be, wherever it falls in a word. */
	{
		static const char pool[] = "ab\"\\\x01\x1f\x7f\x80\xff \n\t/0";
		unsigned seed = 12345;
		int bad = 0;

		for (int n = 0; n < 3000 && !bad; n++) {
			char str[48], want[48 * 6 + 3];
			size_t len = (size_t)(n % 41), w = 0;
			json_t *js;

			want[w++] = '"';
			for (size_t i = 0; i < len; i++) {
				unsigned char c;

				seed = seed * 1103515245u + 12345u;
				/* mostly plain letters, so that whole words pass, now and then one to escape */
				c = (seed >> 16) % 8 ? (unsigned char)('a' + (seed >> 20) % 26)
						     : (unsigned char)pool[(seed >> 20) % (sizeof(pool) - 1)];
				str[i] = (char)c;
				if (c == '"' || c == '\\')
					w += (size_t)sprintf(want + w, "\\%c", c);
				else if (c == '\n')
					w += (size_t)sprintf(want + w, "\\n");
				else if (c == '\t')
					w += (size_t)sprintf(want + w, "\\t");
				else if (c < 0x20)
					w += (size_t)sprintf(want + w, "\\u%04x", c);
				else
					want[w++] = (char)c;
			}
			want[w++] = '"';
			js = json_stringn_nocheck(str, len);
			buf_reset(&plain);
			json_write(js, &plain);
			bad = plain.len != w || memcmp(plain.data, want, w);
			if (bad)
				printf("# string %d: got %.*s, want %.*s\n", n, (int)plain.len, plain.data, (int)w, want);
			json_decref(js);
		}
		ok(!bad, "3000 strings with bytes to escape at every place in a word: as escaped byte by byte");
	}

	/*
	 * Objects held in several places (a process's identity in each group):
	 * written once and copied, byte for byte what jansson's compact dump
	 * writes, past the table's capacity too, nested, and short ones.
	 */
	{
		json_t *doc = json_array(), *small = json_pack("{s:i}", "a", 1), *ids[1500];
		char *want;

		for (int i = 0; i < 1500; i++) {
			ids[i] = json_pack("{s:s, s:i, s:O}", "id", "0123456789abcdef0123456789abcdef", "n", i, "small",
					   small);
			json_array_append(doc, ids[i]);
		}
		for (int r = 0; r < 3; r++)
			for (int i = 0; i < 1500; i += 7)
				json_array_append_new(doc, json_pack("{s:O, s:O}", "ident", ids[i], "s", small));
		want = json_dumps(doc, JSON_COMPACT);
		buf_reset(&plain);
		is_int(json_write(doc, &plain), 0, "a document of shared objects");
		ok(want && plain.len == strlen(want) && !memcmp(plain.data, want, plain.len),
		   "each shared object written as jansson does, where it appears again too");
		buf_init(&line, plain.len / 2);
		is_int(json_write(doc, &line), -ENOSPC, "past the cap: -ENOSPC, also while copying");
		ok(line.len <= plain.len / 2 && !memcmp(line.data, plain.data, line.len), "a partial document, as written");
		buf_free(&line);
		free(want);
		for (int i = 0; i < 1500; i++)
			json_decref(ids[i]);
		json_decref(small);
		json_decref(doc);
	}

	/*
	 * Fits: the line json_write gives for the same document built with
	 * jansson (the monitor's part written from its C values: the self-timing
	 * grouped by collector, reals and the escaped hostname as json_write
	 * writes them, the extra members in the order they were set), nothing
	 * left out.
	 */
	buf_init(&line, max);
	rep = report(2, (size_t[]){ 100, 0 }, "xx");
	enrich(rep);
	buf_reset(&plain);
	json_write(whole = doc(rep), &plain);
	json_decref(whole);
	is_int(report_write(rep, &line, max), 0, "a report that fits");
	ok(line.len == plain.len + 1 && !memcmp(line.data, plain.data, plain.len) && line.data[plain.len] == '\n',
	   "it is json_write's line of the whole document and a newline");
	ok(strstr(line.data, "\"collectors\":{\"nvidia\":{\"device_memory\":{\"seconds\":0.00125,\"cpu_seconds\":0.001,"
			     "\"success\":true},\"device_power\":{\"seconds\":2.5,\"cpu_seconds\":0.0625,\"success\":false}},"
			     "\"cpu\":{\"vcpu_usage\":") != NULL,
	   "the self-timing: a collector's groups together under it, in the order of its first row");
	ok(strstr(line.data, "\"instance_info\":{\"hostname\":\"node-\\u0001\"},\"allocations\":{},\"identities\":") &&
		   line.data[line.len - 2] == '}',
	   "the extra members after instance_info, in the order set");
	ok(strstr(line.data, "\"system_data\":{\"memory_info\":{\"period\":1.0,"
			     "\"timestamp\":\"2026-11-27T15:00:00.000Z\",\"error\":\"\",\"memory_total_bytes\":1024},"
			     "\"vcpu_usage\":{\"period\":1.5,\"timestamp\":\"2026-11-27T15:00:00.000Z\",\"error\":\"\","
			     "\"context_switch_count\":7,\"usage_data\":{}},\"neuron_hw_counters\":{\"period\":0.25,"
			     "\"timestamp\":\"2026-11-27T15:00:00.000Z\",\"error\":\"cannot \\\"read\\\"\"},"
			     "\"container_usage\":{\"period\":2.0,\"timestamp\":\"2026-11-27T15:00:00.000Z\","
			     "\"error\":\"some missed\",\"context_switch_count\":7,\"usage_data\":{}}},"
			     "\"instance_info\":") != NULL,
	   "system_data: each group's envelope and then its record's members; one with nothing sampled, its "
	   "envelope alone; one with an error and members, both");
	ok(has(rep, 0, "exposition") && !has(rep, 0, "exposition_error"), "its exposition kept");
	report_free(rep);
	rep = report(0, NULL, "");
	is_int(report_write(rep, &line, max), 0, "a report without timing rows or extra members");
	ok(strstr(line.data, "\"collectors\":{}},\"runtime_data\":[],") && reads_back(&line, rep) &&
		   !strstr(line.data, "identities"),
	   "its collectors {} and nothing after instance_info");
	report_free(rep);

	/* One exposition of control bytes: 800 bytes, 4800 escaped: left out, the entry says so. */
	rep = report(2, (size_t[]){ 800, 100 }, "\x01y");
	is_int(report_write(rep, &line, max), 0, "800 control bytes in a 4096-byte line");
	ok(line.len <= max && line.data[line.len - 1] == '\n' && !memchr(line.data, '\n', line.len - 1),
	   "one line of %zu bytes, at most %zu", line.len, max);
	ok(!has(rep, 0, "exposition") && has(rep, 0, "exposition_error"), "the control bytes are left out");
	ok(strstr(json_string_value(json_object_get(json_array_get(rep->runtime_data, 0), "exposition_error")),
		  "4802 bytes as JSON"),
	   "exposition_error says how long it was");
	ok(has(rep, 1, "exposition") && !has(rep, 1, "exposition_error"), "the next entry's still fits: kept");
	ok(reads_back(&line, rep), "the line is the report as left");
	report_free(rep);

	/* Four of 1500 bytes: two fit (runtime order), two are left out; exactly at the limit or under. */
	rep = report(4, (size_t[]){ 1500, 1500, 1500, 1500 }, "abcd");
	is_int(report_write(rep, &line, max), 0, "four 1500-byte expositions in 4096 bytes");
	ok(line.len <= max, "%zu bytes, at most %zu", line.len, max);
	ok(has(rep, 0, "exposition") && has(rep, 1, "exposition"), "the first two kept");
	ok(has(rep, 2, "exposition_error") && has(rep, 3, "exposition_error") && !has(rep, 2, "exposition") &&
		   !has(rep, 3, "exposition"),
	   "the last two left out, each saying so");
	report_free(rep);

	/* Too long even without expositions: -EMSGSIZE. */
	rep = report(1, (size_t[]){ 10 }, "z");
	pad = memset(calloc(1, 5000), 'p', 5000);
	rep->extra = json_object();
	json_object_set_new(rep->extra, "padding", json_stringn(pad, 5000));
	free(pad);
	is_int(report_write(rep, &line, max), -EMSGSIZE, "too long without expositions");
	report_free(rep);

	/*
	 * Runtimes' own data, no exposition, too long together: the largest
	 * entry's groups are cut to their envelope and an error, the others
	 * kept whole; the line is written, within the limit.
	 */
	rep = report(3, (size_t[]){ 0, 0, 0 }, "xyz");
	stats(rep, 0, 1000, "");
	stats(rep, 1, 2500, "one model left out");
	stats(rep, 2, 1200, "");
	is_int(report_write(rep, &line, max), 0, "three runtimes' models over 4096 bytes: written");
	ok(line.len <= max && line.data[line.len - 1] == '\n', "%zu bytes, at most %zu", line.len, max);
	ok(json_object_get(group_of(rep, 0), "models") && json_object_get(group_of(rep, 2), "models") &&
		   !*json_string_value(json_object_get(group_of(rep, 0), "error")),
	   "the two smaller runtimes kept whole");
	ok(!json_object_get(group_of(rep, 1), "models") && json_object_size(group_of(rep, 1)) == 3 &&
		   json_object_get(group_of(rep, 1), "period") && json_object_get(group_of(rep, 1), "timestamp"),
	   "the largest cut to its envelope and error");
	{
		const char *err = json_string_value(json_object_get(group_of(rep, 1), "error"));

		ok(err && !strncmp(err, "one model left out; left out: this runtime's entry is ", 54) &&
			   strstr(err, "bytes as JSON; with it the report line would be longer than 4096 bytes"),
		   "its error keeps the old one and says why: %s", err ? err : "(none)");
	}
	ok(reads_back(&line, rep), "the line is the report as left");
	report_free(rep);

	/*
	 * One runtime over the whole limit, with an exposition, next to one with
	 * a short exposition: the big one is shed and its exposition not put
	 * back; the other's exposition is.
	 */
	rep = report(2, (size_t[]){ 100, 100 }, "ab");
	stats(rep, 0, 9000, "");
	is_int(report_write(rep, &line, max), 0, "a runtime of more than 4096 bytes: written");
	ok(line.len <= max, "%zu bytes, at most %zu", line.len, max);
	ok(!json_object_get(group_of(rep, 0), "models") &&
		   strstr(json_string_value(json_object_get(group_of(rep, 0), "error")), "is over 4096 bytes as JSON"),
	   "cut, its error saying it is over the limit");
	ok(!has(rep, 0, "exposition") && has(rep, 0, "exposition_error"), "its exposition left out, saying so");
	ok(has(rep, 1, "exposition") && !has(rep, 1, "exposition_error"), "the other's exposition put back");
	report_free(rep);

	buf_free(&line);
	buf_free(&plain);
	return done_testing();
}
