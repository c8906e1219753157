/* SPDX-License-Identifier: MIT */
/*
 * The exposition parser's cost (parsing a 1 MB exposition of many
 * histogram series costs at most 3x the CPU of a floor that reads the same
 * bytes and finds the line ends).
 *
 * The input: an inference server's exposition (vLLM's names and labels:
 * per model, five latency histograms of 16 buckets each with _sum and
 * _count, HELP and TYPE lines, counters and gauges) for as many models as
 * make --mb MB (default 1), written to a file under $TMPDIR. Three figures,
 * each CPU time (CLOCK_PROCESS_CPUTIME_ID) of --reps passes, in alternating
 * blocks (floor, parse, infer, infer, parse, floor, ...), median of --rounds:
 *
 *   floor   open, read the file into a buffer, close, and count its lines
 *           with memchr: nothing that reads the text can cost less;
 *   parse   the same read, then expo_parse() with a callback that only sums
 *           the values (every sample is read, nothing kept);
 *   infer   the same read, then infer_update() of one struct infer, scrape
 *           after scrape: the parse plus the snapshot monitor/endpoint/infer.c keeps
 *           of every known sample (for information).
 *
 * Printed: each figure's MB/s and the ratio parse / floor with PASS or FAIL
 * against --target (default 3). Exit 0 when measured, 1 when not.
 */
#include "../common/expo_parse.h"
#include "../common/util.h"
#include "../monitor/endpoint/infer.h"
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS 64

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The exposition: histograms of vLLM's families for model after model until mb megabytes. */
static void make_text(struct buf *b, double mb)
{
	static const char *const hist[] = { "vllm:e2e_request_latency_seconds", "vllm:time_to_first_token_seconds",
					     "vllm:time_per_output_token_seconds", "vllm:request_queue_time_seconds",
					     "vllm:request_inference_time_seconds" };
	static const char *const le[] = { "0.001", "0.005", "0.01", "0.02", "0.04", "0.06", "0.08", "0.1",
					  "0.25",  "0.5",   "0.75", "1.0",  "2.5",  "5.0",  "7.5",  "+Inf" };
	unsigned seed = 42;

	for (int m = 0; b->len < (size_t)(mb * 1e6); m++) {
		long n = 0;

		for (size_t h = 0; h < ARRAY_SIZE(hist); h++) {
			buf_printf(b, "# HELP %s Histogram of latency in seconds.\n# TYPE %s histogram\n", hist[h], hist[h]);
			for (size_t k = 0; k < ARRAY_SIZE(le); k++) {
				seed = seed * 1103515245u + 12345u;
				n += (long)(seed >> 20);
				buf_printf(b, "%s_bucket{engine=\"0\",le=\"%s\",model_name=\"org/model-%04d\"} %ld.0\n", hist[h],
					   le[k], m, n);
			}
			buf_printf(b, "%s_sum{engine=\"0\",model_name=\"org/model-%04d\"} %.6f\n", hist[h], m, n * 0.0371);
			buf_printf(b, "%s_count{engine=\"0\",model_name=\"org/model-%04d\"} %ld.0\n", hist[h], m, n);
		}
		buf_printf(b, "# HELP vllm:request_success_total Count of successfully processed requests.\n"
			      "# TYPE vllm:request_success_total counter\n"
			      "vllm:request_success_total{engine=\"0\",finished_reason=\"stop\",model_name=\"org/model-%04d\"} "
			      "%ld.0\n",
			   m, n);
		buf_printf(b, "# TYPE vllm:kv_cache_usage_perc gauge\n"
			      "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"org/model-%04d\"} 0.%04d\n",
			   m, m % 10000);
	}
}

static size_t read_all(const char *path, char *dst, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;

	if (fd < 0)
		return 0;
	while ((n = read(fd, dst + len, cap - len)) > 0)
		len += (size_t)n;
	close(fd);
	return len;
}

static double sink;
static struct infer *in;
static struct expo_parser *parser; /* kept from pass to pass, as a caller keeps it */

static void on_sample(const struct expo_sample *s, void *ud)
{
	(void)ud;
	sink += s->value;
}

enum fig { F_FLOOR, F_PARSE, F_INFER, F_N };

/* One block of reps passes of figure f over the file; its CPU seconds. */
static double block(enum fig f, const char *path, char *dst, size_t cap, int reps, size_t *lines)
{
	double t0 = cpu_s();
	char err[256];

	for (int r = 0; r < reps; r++) {
		size_t len = read_all(path, dst, cap), n = 0;

		if (f == F_FLOOR) {
			for (const char *p = dst, *e = dst + len; p < e; n++) {
				const char *nl = memchr(p, '\n', (size_t)(e - p));

				p = nl ? nl + 1 : e;
			}
			*lines = n;
		} else if (f == F_PARSE) {
			if (expo_parse(parser, dst, len, on_sample, NULL, err, sizeof(err)))
				fprintf(stderr, "expo_bench: bad lines: %s\n", err);
		} else {
			if (infer_update(in, dst, len, r, err, sizeof(err)))
				fprintf(stderr, "expo_bench: %s\n", err);
		}
	}
	return cpu_s() - t0;
}

int main(int argc, char **argv)
{
	static const char *const names[F_N] = { "floor", "parse", "infer" };
	static const enum fig order[] = { F_FLOOR, F_PARSE, F_INFER, F_INFER, F_PARSE, F_FLOOR };
	double mb = 1, target = 3, t[F_N][MAX_ROUNDS], med[F_N];
	int rounds = 7, reps = 20, c, n[F_N] = { 0 };
	char path[4096];
	const char *tmp = getenv("TMPDIR");
	struct buf text;
	char *dst;
	size_t lines = 0, len;
	FILE *f;

	while ((c = getopt(argc, argv, "m:r:n:t:h")) != -1) {
		switch (c) {
		case 'm':
			mb = atof(optarg);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'n':
			reps = atoi(optarg);
			break;
		case 't':
			target = atof(optarg);
			break;
		default:
			fprintf(stderr, "usage: expo_bench [-m MB] [-r ROUNDS] [-n REPS] [-t TARGET]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (mb <= 0 || mb > 256 || rounds < 1 || rounds > MAX_ROUNDS || reps < 1) {
		fprintf(stderr, "expo_bench: bad arguments\n");
		return 2;
	}
	buf_init(&text, (size_t)(mb * 1e6) + (1u << 20));
	make_text(&text, mb);
	snprintf(path, sizeof(path), "%s/expo_bench.%d.prom", tmp && *tmp ? tmp : "/tmp", (int)getpid());
	if (!(f = fopen(path, "w")) || fwrite(text.data, 1, text.len, f) != text.len || fclose(f)) {
		fprintf(stderr, "expo_bench: %s: %s\n", path, strerror(errno));
		return 1;
	}
	dst = xmalloc(text.len + 1);
	in = infer_new(INFER_VLLM);
	parser = expo_parser_new();
	len = text.len;
	for (int w = 0; w < F_N; w++) /* warm-up: page cache, allocator */
		block((enum fig)w, path, dst, len + 1, 1, &lines);
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < ARRAY_SIZE(order) / 2; i++) {
			enum fig g = order[(size_t)(r % 2) * 3 + i];

			t[g][n[g]++] = block(g, path, dst, len + 1, reps, &lines);
		}
	if (!getenv("EXPO_BENCH_KEEP"))
		unlink(path);
	printf("input: %.2f MB, %zu lines (vLLM-style histograms); %d rounds of %d passes, CPU time, medians\n",
	       (double)len / 1e6, lines, rounds, reps);
	for (int g = 0; g < F_N; g++) {
		med[g] = bench_median(t[g], n[g]) / reps;
		printf("%-6s %9.1f us/pass  %8.1f MB/s\n", names[g], med[g] * 1e6, (double)len / 1e6 / med[g]);
	}
	printf("parse / floor = %.2f  %s (target <= %g)\n", med[F_PARSE] / med[F_FLOOR],
	       med[F_PARSE] / med[F_FLOOR] <= target ? "PASS" : "FAIL", target);
	printf("infer / floor = %.2f  (parse and the snapshot infer.c keeps; no target)\n", med[F_INFER] / med[F_FLOOR]);
	free(dst);
	infer_free(in);
	expo_parser_free(parser);
	buf_free(&text);
	return sink == 12345.678 ? 1 : 0; /* keeps the sum alive */
}
