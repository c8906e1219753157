/* SPDX-License-Identifier: MIT */
/*
 * accel-prom --passthrough (common/series/prom_pass.c): the servers' families
 * rendered in both formats byte for byte, two servers in one block, the
 * runtime's labels (and a server's own of that name kept as exported_*),
 * a restarted server's new pid replacing its old series,
 * accel-prom's names dropped, a type conflict, a bad exposition keeping the
 * last good one, an entry error and the staleness sweep taking a runtime away;
 * what Prometheus would refuse left out (label names it does not take, a
 * label twice, __name__, a counter named _total), exported_ prefixed until
 * unique; the byte budget.
 */
#include "../../common/log.h"
#include "../../common/util.h"
#include "../../common/series/prom_pass.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_NS 1000000000LL

struct out {
	struct buf text, om;
};

/* Render p into o (reset first); the text and OpenMetrics bodies, NUL-terminated. */
static void render(struct prom_pass *p, struct out *o)
{
	buf_reset(&o->text);
	buf_reset(&o->om);
	ok(prom_pass_render(p, &o->text, &o->om) == 0, "render fits");
	buf_add(&o->text, "", 0);
	buf_add(&o->om, "", 0);
}

static const char *text_of(const struct buf *b)
{
	return b->data ? b->data : "";
}

/* One report: entries of (address, pid or -1, runtime_tag, error, exposition or NULL). */
struct ent {
	const char *addr;
	int pid;
	const char *tag, *error, *expo;
};

static void feed(struct prom_pass *p, const struct ent *e, size_t n, int64_t now)
{
	json_t *rep = json_object(), *rts = json_array();

	for (size_t i = 0; i < n; i++) {
		json_t *o = json_pack("{s:s, s:s, s:s, s:{}}", "address", e[i].addr, "runtime_tag", e[i].tag, "error",
				      e[i].error, "report");

		json_object_set_new(o, "pid", e[i].pid < 0 ? json_null() : json_integer(e[i].pid));
		if (e[i].expo)
			json_object_set_new(o, "exposition", json_string(e[i].expo));
		json_array_append_new(rts, o);
	}
	json_object_set_new(rep, "runtime_data", rts);
	prom_pass_report(p, rep, "test:1", now, (size_t)-1);
	json_decref(rep);
}

static const char EXPO_A[] =
	"# HELP req Requests, a \\\\ and a \\n.\n"
	"# TYPE req counter\n"
	"req{model=\"m\",runtime_tag=\"own\"} 5\n"
	"# TYPE lat histogram\n"
	"lat_bucket{le=\"1\"} 2\n"
	"lat_bucket{le=\"+Inf\"} 3\n"
	"lat_sum 2.5\n"
	"lat_count 3\n"
	"# TYPE done_total counter\n"
	"done_total{v=\"a\\\"b\"} 7 1700000000000\n"
	"# TYPE execution_status_total counter\n"
	"execution_status_total 1\n"
	"# TYPE execution_status counter\n"
	"execution_status 1\n"
	"loose 4\n";

/* The histogram's lines, the same in both formats. */
#define LAT_LINES                                                                     \
	"# TYPE lat histogram\n"                                                      \
	"lat_bucket{le=\"1\",runtime_tag=\"srv\",pid=\"7\"} 2\n"                        \
	"lat_bucket{le=\"+Inf\",runtime_tag=\"srv\",pid=\"7\"} 3\n"                     \
	"lat_sum{runtime_tag=\"srv\",pid=\"7\"} 2.5\n"                                  \
	"lat_count{runtime_tag=\"srv\",pid=\"7\"} 3\n"

static const char WANT_A_TEXT[] =
	"# TYPE done_total counter\n"
	"done_total{v=\"a\\\"b\",runtime_tag=\"srv\",pid=\"7\"} 7\n"
	LAT_LINES
	"# TYPE loose untyped\n"
	"loose{runtime_tag=\"srv\",pid=\"7\"} 4\n"
	"# HELP req Requests, a \\\\ and a \\n.\n"
	"# TYPE req counter\n"
	"req{model=\"m\",exported_runtime_tag=\"own\",runtime_tag=\"srv\",pid=\"7\"} 5\n";

static const char WANT_A_OM[] =
	"# TYPE done counter\n"
	"done_total{v=\"a\\\"b\",runtime_tag=\"srv\",pid=\"7\"} 7\n"
	LAT_LINES
	"# TYPE loose unknown\n"
	"loose{runtime_tag=\"srv\",pid=\"7\"} 4\n"
	"# HELP req Requests, a \\\\ and a \\n.\n"
	"# TYPE req unknown\n"
	"req{model=\"m\",exported_runtime_tag=\"own\",runtime_tag=\"srv\",pid=\"7\"} 5\n";

/* Lines Prometheus refuses (a scrape with one of them fails whole), next to good ones. */
static const char EXPO_BAD[] =
	"# TYPE good gauge\n"
	"good{a=\"1\"} 1\n"
	"colon{a:b=\"1\"} 2\n"
	"twice{a=\"1\",a=\"2\"} 3\n"
	"# TYPE h histogram\n"
	"h_bucket{le=\"1\",le=\"2\"} 4\n"
	"h_bucket{le=\"+Inf\"} 5\n"
	"h_sum 6\n"
	"h_count 5\n"
	"# TYPE s summary\n"
	"s{quantile=\"0.5\",quantile=\"0.9\"} 7\n"
	"s_count 1\n"
	"named{__name__=\"x\"} 8\n"
	"reserved{__x=\"1\"} 9\n"
	"# TYPE _total counter\n"
	"_total 10\n"
	"clash{runtime_tag=\"a\",exported_runtime_tag=\"b\"} 11\n"
	"clash2{pid=\"1\",exported_pid=\"2\",exported_exported_pid=\"3\",runtime_tag=\"4\"} 12\n";

static const char WANT_BAD_TEXT[] =
	"# TYPE clash untyped\n"
	"clash{exported_exported_runtime_tag=\"a\",exported_runtime_tag=\"b\",runtime_tag=\"srv\",pid=\"7\"} 11\n"
	"# TYPE clash2 untyped\n"
	"clash2{exported_exported_exported_pid=\"1\",exported_pid=\"2\",exported_exported_pid=\"3\","
	"exported_runtime_tag=\"4\",runtime_tag=\"srv\",pid=\"7\"} 12\n"
	"# TYPE good gauge\n"
	"good{a=\"1\",runtime_tag=\"srv\",pid=\"7\"} 1\n"
	"# TYPE h histogram\n"
	"h_bucket{le=\"+Inf\",runtime_tag=\"srv\",pid=\"7\"} 5\n"
	"h_sum{runtime_tag=\"srv\",pid=\"7\"} 6\n"
	"h_count{runtime_tag=\"srv\",pid=\"7\"} 5\n"
	"# TYPE s summary\n"
	"s_count{runtime_tag=\"srv\",pid=\"7\"} 1\n";

/* What Prometheus refuses is left out; the rest is served; exported_ is prefixed until the name is unique. */
static void test_refused_lines(void)
{
	struct prom_pass *p = prom_pass_new();
	struct out o;

	buf_init(&o.text, 1 << 20);
	buf_init(&o.om, 1 << 20);
	feed(p, (struct ent[]){ { "http://a/metrics", 7, "srv", "", EXPO_BAD } }, 1, 1 * S_NS);
	render(p, &o);
	is_str(text_of(&o.text), WANT_BAD_TEXT, "text: only what Prometheus takes");
	ok(!strstr(text_of(&o.om), "# TYPE  ") && !strstr(text_of(&o.om), "_total"),
	   "OpenMetrics: no counter family without a name");
	/* a counter foo_total next to a family foo: OpenMetrics would have two families foo */
	feed(p, (struct ent[]){ { "http://b/metrics", 7, "srv", "", "# TYPE foo_total counter\nfoo_total 1\n# TYPE foo gauge\nfoo 2\n" } },
	     1, 1 * S_NS);
	render(p, &o);
	ok(strstr(text_of(&o.om), "# TYPE foo gauge\nfoo{") && strstr(text_of(&o.om), "# TYPE foo_total unknown\nfoo_total{"),
	   "OpenMetrics: the counter whose family would be another's is typed unknown");
	ok(strstr(text_of(&o.text), "# TYPE foo_total counter\n") != NULL, "and a counter in the text format");
	/* the same exposition again: the same output (the warnings were given once) */
	feed(p,
	     (struct ent[]){ { "http://a/metrics", 7, "srv", "", EXPO_BAD },
			     { "http://b/metrics", 7, "srv", "http://b/metrics: HTTP 503", NULL } },
	     2, 2 * S_NS);
	render(p, &o);
	is_str(text_of(&o.text), WANT_BAD_TEXT, "the same the second time");
	buf_free(&o.text);
	buf_free(&o.om);
	prom_pass_free(p);
}

/* A report's families take at most the budget the store gives: beyond it, refused whole. */
static void test_budget(void)
{
	struct prom_pass *p = prom_pass_new();
	struct buf big;
	json_t *rep;
	size_t n;

	buf_init(&big, 1 << 24);
	for (int i = 0; i < 1000; i++)
		buf_printf(&big, "# TYPE f%d gauge\nf%d{model=\"m%d\"} %d\n", i, i, i, i);
	rep = json_pack("{s:[{s:i, s:s, s:i, s:s, s:s, s:s}]}", "runtime_data", "runtime_index", 0, "address", "http://a/m",
			"pid", 7, "runtime_tag", "srv", "error", "", "exposition", big.data);
	n = prom_pass_report(p, rep, "test:1", S_NS, 10000);
	is_int(n, 1000, "over the budget: its 1000 samples refused");
	is_int(prom_pass_nruntimes(p), 0, "none of its families kept");
	is_int(prom_pass_bytes(p), 0, "nothing counted");
	n = prom_pass_report(p, rep, "test:1", S_NS, 1 << 20);
	is_int(n, 0, "within 1 MiB: taken");
	ok(prom_pass_bytes(p) > 1000 * 40 && prom_pass_bytes(p) <= 1 << 20, "counted: %zu bytes", prom_pass_bytes(p));
	n = prom_pass_report(p, rep, "test:1", S_NS, prom_pass_bytes(p));
	is_int(n, 0, "the same again within what it takes: its own old families do not count twice");
	n = prom_pass_report(p, rep, "test:1", S_NS, prom_pass_bytes(p) / 2);
	is_int(n, 1000, "a budget that shrank below it: refused");
	is_int(prom_pass_nruntimes(p), 0, "and its families leave");
	json_decref(rep);
	buf_free(&big);
	prom_pass_free(p);
}

int main(void)
{
	struct prom_pass *p = prom_pass_new();
	struct out o;

	log_init("test", LOG_LVL_SILENT);
	buf_init(&o.text, 1 << 20);
	buf_init(&o.om, 1 << 20);

	/* One server: its families sorted, unchanged but for the runtime's labels; accel-prom's names dropped. */
	feed(p, (struct ent[]){ { "http://a/metrics", 7, "srv", "", EXPO_A } }, 1, 1 * S_NS);
	render(p, &o);
	is_str(text_of(&o.text), WANT_A_TEXT, "text: the server's families, the runtime's labels, ours dropped");
	is_str(text_of(&o.om), WANT_A_OM, "OpenMetrics: _total family base, counters not named _total unknown");
	is_int(prom_pass_nruntimes(p), 1, "one runtime");

	/* A second server with the same family (one block, one header) and a type conflict (left out). */
	feed(p,
	     (struct ent[]){ { "http://a/metrics", 7, "srv", "", EXPO_A },
			     { "http://b/metrics", -1, "", "", "# TYPE req counter\nreq{model=\"m\"} 9\n# TYPE lat gauge\nlat 1\n" } },
	     2, 2 * S_NS);
	render(p, &o);
	ok(strstr(text_of(&o.text), "# TYPE req counter\nreq{model=\"m\",exported_runtime_tag=\"own\",runtime_tag=\"srv\","
				     "pid=\"7\"} 5\nreq{model=\"m\",runtime_tag=\"http://b/metrics\"} 9\n") != NULL,
	   "two servers' req: one block, the address as runtime_tag where there is no tag nor pid");
	ok(!strstr(text_of(&o.text), "lat{"), "a family of another type than the first server's: left out");
	ok(strstr(text_of(&o.text), "# TYPE lat histogram\n") != NULL, "the first server's type stays");

	/* A bad exposition: the last good families stay. */
	feed(p,
	     (struct ent[]){ { "http://a/metrics", 7, "srv", "", "# TYPE req counter\nreq{model=\"m\"} 6\nreq{model=m} 1\n" },
			     { "http://b/metrics", -1, "", "", "# TYPE req counter\nreq{model=\"m\"} 10\n" } },
	     2, 3 * S_NS);
	render(p, &o);
	ok(strstr(text_of(&o.text), "pid=\"7\"} 5\n") != NULL, "bad exposition: the last good value (5) stays");
	ok(strstr(text_of(&o.text), "runtime_tag=\"http://b/metrics\"} 10\n") != NULL, "the other server moves on");
	ok(strstr(text_of(&o.text), "# TYPE lat histogram\n") != NULL, "its other families stay too");

	/* The server restarted under a new pid: the same endpoint, its series now carry the new pid only. */
	feed(p, (struct ent[]){ { "http://a/metrics", 8, "srv", "", "# TYPE req counter\nreq 1\n" } }, 1, 3 * S_NS);
	render(p, &o);
	ok(strstr(text_of(&o.text), "req{runtime_tag=\"srv\",pid=\"8\"} 1\n") && !strstr(text_of(&o.text), "pid=\"7\""),
	   "a restart: the new pid's series replace the old one's");
	feed(p, (struct ent[]){ { "http://a/metrics", 8, "srv", "", EXPO_A } }, 1, 3 * S_NS);

	/* The scrape failed: the runtime's families leave. */
	feed(p, (struct ent[]){ { "http://a/metrics", 8, "srv", "http://a/metrics: HTTP 503", NULL } }, 1, 4 * S_NS);
	render(p, &o);
	ok(!strstr(text_of(&o.text), "pid=\"8\""), "an entry in error: its families leave");
	is_int(prom_pass_nruntimes(p), 1, "one runtime left");

	/* Not named for the staleness window: swept. */
	prom_pass_sweep(p, 4 * S_NS, 2 * S_NS);
	is_int(prom_pass_nruntimes(p), 1, "named 1 s ago: kept");
	prom_pass_sweep(p, 6 * S_NS, 2 * S_NS);
	is_int(prom_pass_nruntimes(p), 0, "named 3 s ago, window 2 s: swept");
	render(p, &o);
	is_str(text_of(&o.text), "", "nothing left to render");

	buf_free(&o.text);
	buf_free(&o.om);
	prom_pass_free(p);
	prom_pass_free(NULL);
	test_refused_lines();
	test_budget();
	return done_testing();
}
