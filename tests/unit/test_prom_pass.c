/* SPDX-License-Identifier: MIT */
/*
 * accel-prom --passthrough (common/series/prom_pass.c): the servers' families
 * rendered in both formats byte for byte, two servers in one block, the
 * runtime's labels (and a server's own of that name kept as exported_*),
 * a restarted server's new pid replacing its old series,
 * accel-prom's names dropped, a type conflict, a bad exposition keeping the
 * last good one, an entry error and the staleness sweep taking a runtime away.
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
	prom_pass_report(p, rep, "test:1", now);
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
	return done_testing();
}
