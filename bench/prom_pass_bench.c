/* SPDX-License-Identifier: MIT */
/*
 * accel-prom --passthrough's cost per report as the number of families an
 * endpoint serves grows: it must grow with the exposition, not with its
 * square.
 *
 * The input: one endpoint runtime's exposition of N families (HELP, TYPE
 * and one labelled sample each, distinct names, as a server with one
 * family per model writes them), in a report accel-prom's store takes with
 * --passthrough on (common/series/prom_store.c, prom_pass.c). Figures, CPU
 * time (CLOCK_PROCESS_CPUTIME_ID) per report, median of --rounds, each
 * round alternating the two sizes:
 *
 *   parse   expo_parse() of the exposition with a callback that only sums
 *           the values: what reading the text costs at the least;
 *   pass    prom_store_report() of the report (the store already holds the
 *           previous report's families: the steady state) and a render of
 *           the exposition accel-prom serves.
 *
 * For a small N (--small, default 10 000) and a large one (--large, default
 * 100 000). Printed: each figure, pass / parse at the large size (target
 * <= --target, default 60: a family is kept, looked up by name, rendered in
 * two formats and freed, where the parse only reads it), and the growth:
 * pass per family at the large size over pass per family at the small one
 * (target <= 5: linear work gives 1 to 3, the rest being caches that 15 MB
 * do not fit; a lookup that scans every family gives about large / small,
 * 26 before the families were hashed). Exit 0 when measured, 1 when not.
 */
#include "../common/expo_parse.h"
#include "../common/log.h"
#include "../common/timeutil.h"
#include "../common/util.h"
#include "../common/series/prom_pass.h"
#include "../common/series/prom_store.h"
#include "bench.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ROUNDS 64

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A report with one endpoint runtime whose exposition has n families (a new reference). */
static json_t *make_report(size_t n, size_t *expo_len, char **expo)
{
	struct buf b;
	json_t *rep;

	buf_init(&b, (size_t)1 << 34);
	for (size_t i = 0; i < n; i++)
		buf_printf(&b,
			   "# HELP srv_model_%zu_requests Requests of model %zu.\n# TYPE srv_model_%zu_requests gauge\n"
			   "srv_model_%zu_requests{model=\"m%zu\",version=\"1\"} %zu\n",
			   i, i, i, i, i, i * 7);
	rep = json_pack("{s:{s:s}, s:[{s:i, s:s, s:i, s:s, s:s, s:s%, s:{}}], s:[], s:{}}", "monitor", "version", "0",
			"runtime_data", "runtime_index", 0, "address", "http://127.0.0.1:8002/metrics", "pid", 4242,
			"runtime_tag", "server", "error", "", "exposition", b.data, b.len, "report", "device_data",
			"system_data");
	*expo_len = b.len;
	*expo = b.data;
	return rep;
}

static void sum_cb(const struct expo_sample *s, void *ud)
{
	*(double *)ud += s->value;
}

struct size_run {
	size_t n;
	json_t *rep;
	char *expo;
	size_t len;
	struct prom_store *st;
	struct prom_pass *pass;
	struct expo_parser *parser;
	double parse[MAX_ROUNDS], pass_s[MAX_ROUNDS];
	int64_t now;
};

static int one_round(struct size_run *r, int k)
{
	double t0, sum = 0;
	char err[128];
	struct prom_expo *e;

	t0 = cpu_s();
	if (expo_parse(r->parser, r->expo, r->len, sum_cb, &sum, err, sizeof(err))) {
		fprintf(stderr, "prom_pass_bench: the exposition does not parse: %s\n", err);
		return -1;
	}
	r->parse[k] = cpu_s() - t0;
	r->now += NS_PER_S;
	t0 = cpu_s();
	prom_store_report(r->st, r->rep, "bench:1", r->now, r->now);
	e = prom_store_render(r->st, r->now, r->now);
	r->pass_s[k] = cpu_s() - t0;
	if (!memmem(e->body[EXPO_TEXT].data, e->body[EXPO_TEXT].len, "srv_model_0_requests{", 21)) {
		fprintf(stderr, "prom_pass_bench: the families are not served\n");
		prom_expo_unref(e);
		return -1;
	}
	prom_expo_unref(e);
	return 0;
}

static void size_init(struct size_run *r, size_t n)
{
	memset(r, 0, sizeof(*r));
	r->n = n;
	r->rep = make_report(n, &r->len, &r->expo);
	r->pass = prom_pass_new();
	r->st = prom_store_new(&(struct prom_store_opts){ .node_name = "bench", .version = "0", .pass = r->pass });
	r->parser = expo_parser_new();
	r->now = 1000 * NS_PER_S;
}

static void size_free(struct size_run *r)
{
	prom_store_free(r->st);
	prom_pass_free(r->pass);
	expo_parser_free(r->parser);
	json_decref(r->rep);
	free(r->expo);
}

static void usage(void)
{
	fprintf(stderr, "usage: prom_pass_bench [-s SMALL] [-l LARGE] [-r ROUNDS] [-t TARGET]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "small", 1, 0, 's' }, { "large", 1, 0, 'l' }, { "rounds", 1, 0, 'r' },
					      { "target", 1, 0, 't' }, { "help", 0, 0, 'h' },  { 0, 0, 0, 0 } };
	size_t small = 10000, large = 100000;
	int rounds = 3, c, rc = 0;
	double target = 60, ps, pl, qs, ql, growth, ratio;
	struct size_run rs, rl;

	while ((c = getopt_long(argc, argv, "s:l:r:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': small = strtoul(optarg, NULL, 10); break;
		case 'l': large = strtoul(optarg, NULL, 10); break;
		case 'r': rounds = atoi(optarg); break;
		case 't': target = atof(optarg); break;
		default: usage(); return c == 'h' ? 0 : 1;
		}
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || !small || large <= small) {
		usage();
		return 1;
	}
	log_init("prom_pass_bench", LOG_LVL_SILENT);
	size_init(&rs, small);
	size_init(&rl, large);
	/* the first report of each (families new) is a warm-up */
	if (one_round(&rs, 0) || one_round(&rl, 0))
		return 1;
	for (int k = 0; k < rounds && !rc; k++)
		rc = k % 2 ? one_round(&rl, k) || one_round(&rs, k) : one_round(&rs, k) || one_round(&rl, k);
	if (rc)
		return 1;
	ps = bench_median(rs.parse, rounds);
	pl = bench_median(rl.parse, rounds);
	qs = bench_median(rs.pass_s, rounds);
	ql = bench_median(rl.pass_s, rounds);
	growth = (ql / (double)large) / (qs / (double)small);
	ratio = ql / pl;
	printf("accel-prom --passthrough, one report (CPU, median of %d)\n", rounds);
	printf("  %7zu families: parse %8.1f ms  pass %8.1f ms  (%.2f us/family)\n", small, ps * 1e3, qs * 1e3,
	       qs / (double)small * 1e6);
	printf("  %7zu families: parse %8.1f ms  pass %8.1f ms  (%.2f us/family), exposition %.1f MB\n", large,
	       pl * 1e3, ql * 1e3, ql / (double)large * 1e6, (double)rl.len / 1e6);
	printf("  pass / parse at %zu families: %.2f  %s (target <= %g)\n", large, ratio, ratio <= target ? "PASS" : "FAIL",
	       target);
	printf("  growth per family, %zu over %zu: %.2f  %s (target <= 5)\n", large, small, growth,
	       growth <= 5 ? "PASS" : "FAIL");
	size_free(&rs);
	size_free(&rl);
	return 0;
}
