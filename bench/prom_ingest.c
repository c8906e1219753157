/* SPDX-License-Identifier: MIT */
/*
 * accel-prom's ingest rate next to bare jansson parsing of the same lines.
 *
 * Reads a stream file into memory, then, in one process and on the same
 * bytes:
 *   floor: json_loadb + json_decref of every line (what any JSON reader pays);
 *   ingest: what accel-prom's ingest thread does: the stream reader over a
 *           memory file, the report -> samples mapping into the store, and a
 *           render + publish of the whole exposition after each report, or at
 *           most every 100 ms while more lines are already buffered (as
 *           sinks/prom/prom.c does).
 * Each pass runs ROUNDS times; the medians of CPU time (user + system) give
 * reports/s and MB/s, and the ratio ingest/floor (target >= 0.7).
 *
 * Usage: prom_ingest [-r ROUNDS] [--render-every] FILE
 *   --render-every   render after every report, burst or not (the worst case)
 */
#include "../common/log.h"
#include "../common/stream.h"
#include "../common/timeutil.h"
#include "../common/util.h"
#include "../common/series/prom_expo.h"
#include "../common/series/prom_store.h"
#include "bench.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define COALESCE_NS (100 * NS_PER_MS)

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static size_t floor_pass(const char *data, size_t len)
{
	size_t n = 0;

	for (const char *p = data, *end = data + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = (size_t)((nl ? nl : end) - p);
		json_t *j = json_loadb(p, l, JSON_REJECT_DUPLICATES, NULL);

		n += j != NULL;
		json_decref(j);
		p += l + 1;
	}
	return n;
}

/* As sink_input_pending (common/sink.c), which accel-prom uses: a complete line buffered, or the fd readable. */
static int input_pending(const struct stream *s)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };

	return stream_buffered(s) || (!s->eof && poll(&p, 1, 0) == 1);
}

static size_t ingest_pass(int fd, int render_every)
{
	struct prom_store *st = prom_store_new(&(struct prom_store_opts){ .node_name = "bench", .version = "bench" });
	struct prom_pub pub;
	struct stream s;
	int64_t last = 0;
	size_t n = 0;
	char err[256], where[48];
	json_t *r;
	enum stream_bad why;
	size_t l;
	int rc;

	prom_pub_init(&pub);
	lseek(fd, 0, SEEK_SET);
	stream_init(&s, fd, "bench", 0);
	while ((rc = stream_next(&s, &r, &l, &why, err, sizeof(err))) != 0 && rc != -2) {
		int64_t now = clock_mono_ns();

		if (rc != 1)
			continue;
		snprintf(where, sizeof(where), "bench:%llu", (unsigned long long)s.lineno);
		prom_store_report(st, r, where, now, clock_real_ns());
		json_decref(r);
		n++;
		if (render_every || now - last >= COALESCE_NS || !input_pending(&s)) {
			prom_store_publish(st, &pub, now, clock_real_ns());
			last = now;
		}
	}
	prom_store_publish(st, &pub, clock_mono_ns(), clock_real_ns());
	stream_free(&s);
	prom_pub_destroy(&pub);
	prom_store_free(st);
	return n;
}

int main(int argc, char **argv)
{
	int rounds = 5, render_every = 0, fd;
	const char *path = NULL;
	int64_t *tf, *ti, mf, mi;
	char *data;
	size_t len = 0, cap = 1 << 20, nf = 0, ni = 0;
	FILE *f;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-r") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--render-every"))
			render_every = 1;
		else
			path = argv[i];
	}
	if (!path || rounds < 1) {
		fprintf(stderr, "usage: prom_ingest [-r ROUNDS] [--render-every] FILE\n");
		return 2;
	}
	log_init("prom_ingest", LOG_LVL_SILENT);
	f = fopen(path, "r");
	if (!f) {
		perror(path);
		return 1;
	}
	data = xmalloc(cap);
	for (size_t got; (got = fread(data + len, 1, cap - len, f)) > 0;) {
		len += got;
		if (len == cap)
			data = xrealloc(data, cap *= 2);
	}
	fclose(f);
	fd = memfd_create("stream", 0);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len) {
		perror("memfd");
		return 1;
	}
	tf = xcalloc((size_t)rounds, sizeof(*tf));
	ti = xcalloc((size_t)rounds, sizeof(*ti));
	for (int r = 0; r < rounds; r++) {
		int64_t t0 = bench_cpu_ns();

		nf = floor_pass(data, len);
		tf[r] = bench_cpu_ns() - t0;
		t0 = bench_cpu_ns();
		ni = ingest_pass(fd, render_every);
		ti[r] = bench_cpu_ns() - t0;
	}
	qsort(tf, (size_t)rounds, sizeof(*tf), cmp64);
	qsort(ti, (size_t)rounds, sizeof(*ti), cmp64);
	mf = tf[rounds / 2];
	mi = ti[rounds / 2];
	printf("input     %zu lines, %.1f MB, %d rounds (medians of CPU time)\n", nf, (double)len / 1e6, rounds);
	printf("floor     %10.0f reports/s %8.1f MB/s   json_loadb + json_decref\n", (double)nf * 1e9 / (double)mf,
	       (double)len * 1e3 / (double)mf);
	printf("ingest    %10.0f reports/s %8.1f MB/s   stream + map + store + render%s\n",
	       (double)ni * 1e9 / (double)mi, (double)len * 1e3 / (double)mi,
	       render_every ? " after every report" : " (coalesced as accel-prom does)");
	printf("ratio     ingest/floor %.2f   target >= 0.7   %s\n", (double)mf / (double)mi,
	       (double)mf / (double)mi >= 0.7 ? "PASS" : "FAIL");
	free(tf);
	free(ti);
	free(data);
	close(fd);
	return ni == nf ? 0 : 1;
}
