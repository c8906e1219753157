/* SPDX-License-Identifier: MIT */
/*
 * The cost of endpoint runtimes: the CPU time of one collection
 * cycle of 4 endpoint runtimes (monitor/endpoint/coll_endpoint.c: the scrapes
 * on the event loop through libcurl's multi interface (http_async.h), the
 * body parsed by infer.h, the entries collected and the report line
 * written) against the
 * floor of 4 bare GETs of the same URLs with libcurl's easy interface,
 * measured in the same run, rounds interleaved so both see the same host.
 * Both keep their connections alive between rounds, as the collector does.
 *
 *   endpoint_bench URL [-s SECONDS] [-g GROUPS]
 *
 * GROUPS: "stats" (execution_stats, the default) or "all" (with
 * runtime_vcpu_usage and memory_used, which read /proc for the server).
 * Prints "ratio endpoint / bare" (target <= 2). The server is the caller's
 * (bench/endpoint_bench.sh runs tests/helpers/fake_endpoint.py).
 */
#include "../common/doc.h"
#include "../common/jsonw.h"
#include "../common/timeutil.h"
#include "../common/util.h"
#include "../monitor/core/collector.h"
#include "../monitor/config/config.h"
#include "../monitor/endpoint/infer.h"
#include "../monitor/core/loop.h"
#include "../monitor/host/host.h"
#include "../monitor/http/http_async.h"
#include "bench.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The collector measured here (collectors.c registers it). */
extern const struct collector_ops coll_endpoint_ops;

#define NRT 4
/* The monitor's mon_fetch states (monitor.c): waiting, answered. */
#define WAITING 1
#define ANSWERED 2

static size_t sink(char *p, size_t size, size_t n, void *ud)
{
	struct buf *b = ud;

	(void)size;
	return buf_add(b, p, n) ? 0 : n;
}

/* The floor: 4 GETs with curl_easy_perform, bodies kept in memory. 0, or -1 when one fails. */
static int bare_round(CURL **easy, struct buf *bodies)
{
	for (int i = 0; i < NRT; i++) {
		long code = 0;

		buf_reset(&bodies[i]);
		if (curl_easy_perform(easy[i]) != CURLE_OK)
			return -1;
		curl_easy_getinfo(easy[i], CURLINFO_RESPONSE_CODE, &code);
		if (code != 200)
			return -1;
	}
	return 0;
}

/* One cycle of the collector: fetch on the loop until answered, collect, write the report line. */
static int endpoint_round(struct loop *loop, struct host *host, void **st, struct buf *line, const enum group_id *due,
			  size_t ndue)
{
	struct mon_fetch f[NRT];
	struct cycle cy;
	json_t *rd = json_array(), *report;
	int64_t deadline = clock_mono_ns() + 5 * NS_PER_S;
	int rc = 0;

	for (int i = 0; i < NRT; i++) {
		f[i] = (struct mon_fetch){ .loop = loop, .id = GROUP_EXECUTION_STATS, .started = clock_mono_ns(),
					   .deadline = deadline, .state = WAITING };
		if (coll_endpoint_ops.fetch(st[i], &f[i]))
			f[i].state = ANSWERED;
	}
	for (;;) {
		int waiting = 0;

		for (int i = 0; i < NRT; i++)
			waiting += f[i].state == WAITING;
		if (!waiting || clock_mono_ns() > deadline)
			break;
		loop_run_once(loop, deadline, NULL);
	}
	cy.mono_ns = clock_mono_ns();
	cy.boot_ns = clock_boot_ns();
	cy.real_ns = clock_real_ns();
	iso8601_format(cy.real_ns, cy.iso);
	host_snapshot(host, &cy); /* as the monitor does at each cycle's start */
	for (int i = 0; i < NRT; i++)
		coll_endpoint_ops.collect(st[i], &cy, due, ndue, rd);
	for (int i = 0; i < NRT; i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(rd, (size_t)i), "error")), ""))
			rc = -1;
	report = json_pack("{s:s, s:o}", "timestamp", cy.iso, "runtime_data", rd);
	buf_reset(line);
	json_write(report, line);
	json_decref(report);
	return rc;
}

void mon_fetch_done(struct mon_fetch *f)
{
	if (f->state == WAITING)
		f->state = ANSWERED;
}

int main(int argc, char **argv)
{
	const char *url = argc > 1 ? argv[1] : NULL, *groups = "stats";
	double seconds = 2;
	char text[2048], *err = NULL;
	struct doc d;
	struct cfg cfg;
	struct mon_env env = { 0 };
	struct cycle cy = { 0 };
	struct buf line, bodies[NRT];
	CURL *easy[NRT];
	void *st[NRT];
	enum group_id due[3] = { GROUP_EXECUTION_STATS, GROUP_RUNTIME_VCPU_USAGE, GROUP_MEMORY_USED };
	size_t ndue;
	int64_t t_bare = 0, t_ep = 0, t_parse, deadline;
	struct http_async *http;
	long rounds = 0;

	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-s"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "-g"))
			groups = argv[i + 1];
	}
	if (!url || strncmp(url, "http", 4)) {
		fprintf(stderr, "usage: endpoint_bench URL [-s SECONDS] [-g stats|all]\n");
		return 2;
	}
	ndue = strcmp(groups, "all") ? 1 : 3;
	snprintf(text, sizeof(text), "{\"period\": \"1s\", \"runtimes\": [");
	for (int i = 0; i < NRT; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "%s{\"address\": \"%s\", \"metrics\": [{\"type\": \"execution_stats\"}%s]}", i ? ", " : "", url,
			 ndue == 3 ? ", {\"type\": \"runtime_vcpu_usage\"}, {\"type\": \"memory_used\"}" : "");
	snprintf(text + strlen(text), sizeof(text) - strlen(text), "]}");
	if (doc_load_mem("bench.json", text, strlen(text), 0, &d, &err) || cfg_from_doc(&d, &cfg, &err)) {
		fprintf(stderr, "endpoint_bench: %s\n", err);
		return 1;
	}
	doc_free(&d);
	env.loop = loop_new();
	http = http_async_new(env.loop);
	env.host = host_new(&(struct host_opts){ .http = http }, NULL); /* no loop: no metadata fetch */
	cy.mono_ns = clock_mono_ns();
	cy.boot_ns = clock_boot_ns();
	for (int i = 0; i < NRT; i++) {
		if (coll_endpoint_ops.open(&env, &(struct coll_target){ .rt = &cfg.runtimes[i], .index = (size_t)i, .cy = &cy },
					   &st[i])) {
			fprintf(stderr, "endpoint_bench: cannot open runtime %d\n", i);
			return 1;
		}
		easy[i] = curl_easy_init();
		buf_init(&bodies[i], 64 << 20);
		curl_easy_setopt(easy[i], CURLOPT_URL, url);
		curl_easy_setopt(easy[i], CURLOPT_WRITEFUNCTION, sink);
		curl_easy_setopt(easy[i], CURLOPT_WRITEDATA, &bodies[i]);
		curl_easy_setopt(easy[i], CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(easy[i], CURLOPT_PROXY, "");
	}
	buf_init(&line, 256 << 20);
	/* A warm-up of each: connections made, buffers grown, libraries paged in. */
	if (bare_round(easy, bodies) || endpoint_round(env.loop, env.host, st, &line, due, ndue)) {
		fprintf(stderr, "endpoint_bench: the warm-up failed: is %s serving?\n", url);
		return 1;
	}
	deadline = clock_mono_ns() + (int64_t)(seconds * 1e9);
	while (clock_mono_ns() < deadline) {
		int64_t t0 = bench_cpu_ns(), t1, t2;

		if (bare_round(easy, bodies))
			return 1;
		t1 = bench_cpu_ns();
		if (endpoint_round(env.loop, env.host, st, &line, due, ndue))
			return 1;
		t2 = bench_cpu_ns();
		t_bare += t1 - t0;
		t_ep += t2 - t1;
		rounds++;
	}
	/* Of the cycle, the part that is the exposition's parse (infer.h), on the same body: for the reader. */
	{
		struct infer *in = infer_new(INFER_AUTO);
		char perr[256];
		int64_t t0 = bench_cpu_ns();
		long k;

		for (k = 0; k < rounds * NRT; k++)
			infer_update(in, bodies[0].data, bodies[0].len, clock_mono_ns(), perr, sizeof(perr));
		t_parse = (bench_cpu_ns() - t0) / (k ? k : 1) * NRT;
		infer_free(in);
	}
	printf("%-44s %9zu bytes\n", "body", bodies[0].len);
	printf("%-44s %9ld\n", "rounds (each: 4 GETs, then one cycle)", rounds);
	printf("%-44s %9.1f us CPU\n", "4 bare GETs (libcurl easy, keep-alive)", (double)t_bare / (double)rounds / 1e3);
	printf("%-44s %9.1f us CPU  (%s)\n", "cycle of 4 endpoint runtimes", (double)t_ep / (double)rounds / 1e3,
	       ndue == 3 ? "execution_stats, runtime_vcpu_usage, memory_used" : "execution_stats");
	printf("%-44s %9.1f us CPU  (4 x infer_update of the body alone)\n", "  of which parsing", (double)t_parse / 1e3);
	printf("%-44s %9.2f\n", "ratio (cycle - parsing) / bare", (double)(t_ep / rounds - t_parse) / (double)(t_bare / rounds));
	printf("ratio endpoint / bare %.2f   target <= 2.0   %s\n", (double)t_ep / (double)t_bare,
	       (double)t_ep <= 2.0 * (double)t_bare ? "PASS" : "FAIL");
	for (int i = 0; i < NRT; i++) {
		coll_endpoint_ops.close(st[i]);
		curl_easy_cleanup(easy[i]);
		buf_free(&bodies[i]);
	}
	buf_free(&line);
	host_free(env.host);
	http_async_free(http);
	loop_free(env.loop);
	cfg_free(&cfg);
	return 0;
}
