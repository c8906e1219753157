/* SPDX-License-Identifier: MIT */
/*
 * csv_bench: what accel-csv costs next to the least any sink must spend on
 * the same stream, reading it and parsing every line with jansson.
 *
 *   csv_bench [-r ROUNDS] [-o OUTDIR] STREAM ACCEL-CSV [ARG...]
 *
 * floor  in this process: the stream reader of common/stream.c (read(2) in
 *        64 KiB blocks, split lines, json_loadb() with the flags accel-csv
 *        uses, json_decref()) over STREAM, nothing else.
 * csv    ACCEL-CSV ARG... -o OUTDIR/bench.csv run as a child with STREAM on
 *        stdin; its user + system CPU time from wait4(2), so start-up and
 *        writing the CSV (to the page cache) count.
 * Both are CPU time, in alternating rounds (floor, csv, csv, floor, ...),
 * and each figure is the median of its rounds. The ratio is floor / csv:
 * 1.0 means CSV costs nothing beyond parsing, 0.5 that it doubles the cost.
 * Rows are counted in the CSV (records, RFC 4180 aware, header excluded).
 */
#include "../common/stream.h"
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS 31

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Parse every line of path with the stream reader; returns CPU seconds, counts reports. */
static double floor_run(const char *path, unsigned long *reports)
{
	struct stream st;
	json_t *r;
	size_t len;
	enum stream_bad why;
	char err[256];
	double t0;
	int fd = open(path, O_RDONLY), n;

	if (fd < 0) {
		perror(path);
		exit(1);
	}
	*reports = 0;
	t0 = cpu_now();
	stream_init(&st, fd, "bench", 0);
	while ((n = stream_next(&st, &r, &len, &why, err, sizeof(err))) != 0) {
		if (n == 1) {
			json_decref(r);
			++*reports;
		} else if (n == -2) {
			fprintf(stderr, "csv_bench: %s\n", err);
			exit(1);
		}
	}
	stream_free(&st);
	t0 = cpu_now() - t0;
	close(fd);
	return t0;
}

/* Run argv with stdin from path; returns its CPU seconds. */
static double csv_run(char **argv, const char *path)
{
	struct rusage ru;
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		int fd = open(path, O_RDONLY);

		if (fd < 0 || dup2(fd, 0) < 0) {
			perror(path);
			_exit(127);
		}
		execv(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "csv_bench: %s failed (status %d)\n", argv[0], status);
		exit(1);
	}
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
}

/* Records in a CSV file after its first (the header): newlines outside quotes. */
static unsigned long long count_rows(const char *path, unsigned long long *bytes)
{
	static char b[1 << 16];
	unsigned long long rows = 0;
	int quoted = 0, fd = open(path, O_RDONLY);
	ssize_t n;

	*bytes = 0;
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	while ((n = read(fd, b, sizeof(b))) > 0) {
		*bytes += (unsigned long long)n;
		for (ssize_t i = 0; i < n; i++) {
			if (b[i] == '"')
				quoted = !quoted;
			else if (b[i] == '\n' && !quoted)
				rows++;
		}
	}
	close(fd);
	return rows ? rows - 1 : 0;
}

int main(int argc, char **argv)
{
	int rounds = 5, c, nf = 0, nc = 0;
	const char *outdir = "/tmp";
	double fl[MAX_ROUNDS], cs[MAX_ROUNDS], f, t;
	unsigned long reports = 0;
	unsigned long long rows, bytes;
	struct stat st;
	char out[4096], **args;

	while ((c = getopt(argc, argv, "+r:o:h")) != -1) {
		switch (c) {
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'o':
			outdir = optarg;
			break;
		default:
			fprintf(stderr, "usage: csv_bench [-r ROUNDS] [-o OUTDIR] STREAM ACCEL-CSV [ARG...]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (argc - optind < 2 || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: csv_bench [-r ROUNDS 1..%d] [-o OUTDIR] STREAM ACCEL-CSV [ARG...]\n", MAX_ROUNDS);
		return 2;
	}
	snprintf(out, sizeof(out), "%s/bench.csv", outdir);
	args = calloc((size_t)(argc - optind) + 3, sizeof(*args));
	for (int i = optind + 1; i < argc; i++)
		args[i - optind - 1] = argv[i];
	args[argc - optind - 1] = "-o";
	args[argc - optind] = out;
	if (stat(argv[optind], &st)) {
		perror(argv[optind]);
		return 1;
	}

	floor_run(argv[optind], &reports); /* warm the page cache and the allocator */
	for (int i = 0; i < 2 * rounds; i++) {
		if (i % 4 == 0 || i % 4 == 3) {
			fl[nf++] = floor_run(argv[optind], &reports);
		} else {
			unlink(out);
			cs[nc++] = csv_run(args, argv[optind]);
		}
	}
	rows = count_rows(out, &bytes);
	unlink(out);
	f = bench_median(fl, nf);
	t = bench_median(cs, nc);
	printf("input      %lu reports, %.1f MB\n", reports, (double)st.st_size / 1e6);
	printf("floor      %.3f s CPU  %8.1f MB/s of input   (jansson parse, median of %d)\n", f,
	       (double)st.st_size / 1e6 / f, nf);
	printf("accel-csv  %.3f s CPU  %8.1f MB/s of input   %.0f rows/s  %.1f MB/s of CSV (%llu rows, %.1f MB; median of %d)\n",
	       t, (double)st.st_size / 1e6 / t, (double)rows / t, (double)bytes / 1e6 / t, rows, (double)bytes / 1e6, nc);
	printf("ratio      %.2f (floor / accel-csv; target >= 0.70): %s\n", f / t, f / t >= 0.7 ? "PASS" : "FAIL");
	free(args);
	return 0;
}
