/* SPDX-License-Identifier: MIT */
/*
 * accel-otlp's encoder against its floor.
 *
 *   otlp_bench [POINTS] [SERIES] [ROUNDS]
 *
 * ours: what the sink does for each request: otlp_enc_add for each data
 * point of a batch of 2000 over SERIES series of three families (a gauge
 * with a semantic-convention name, a counter, a gauge under the default
 * rule) with accel-prom's label sets (12 labels, the instance ones going to
 * the Resource), then otlp_enc_flush (group by metric, lay out the protobuf-c
 * messages, pack). The sink keeps each series' encoder id in accel-prom's
 * store (prom_series_view.slot), so a series' label set is parsed once; the
 * figure with a lookup by label set for every point is printed too, and the
 * same batches as OTLP/JSON.
 *
 * bare: the floor, the same requests already built as protobuf-c messages
 * outside the timing, only otlp__export_metrics_service_request__pack (and
 * its get_packed_size) timed.
 *
 * CPU time (CLOCK_PROCESS_CPUTIME_ID) per 1000 points, rounds alternating
 * ours and bare, medians. Prints points/s of ours and the ratio.
 *
 *   otlp_bench --reports FILE [ROUNDS]
 *
 * Per report, over the reports of FILE (a stream, one report a line, read
 * REPEAT times a round by one encoder that has seen them before), what
 * accel-otlp does with each: otlp_enc_report (accel-prom's store maps it,
 * the refreshed series join the batch) then otlp_enc_flush into one
 * request; beside it the store alone (prom_store_report and prom_store_each,
 * the part accel-prom pays too), so that the encoder's own share is ours
 * minus the store; and bare, the pack of the same requests.
 */
#include "bench.h"
#include "../sinks/otlp/otlp.pb-c.h"
#include "../sinks/otlp/otlp_enc.h"
#include "../common/series/prom_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH 2000
#define T_MS 1795452000000LL
#define REPEAT 200 /* --reports: passes over the file a round */

static const struct family FAMS[] = {
	{ "accelerator_memory_used_bytes", "Accelerator device memory used bytes", METRIC_GAUGE, "bytes" },
	{ "accelerator_energy_joules_total", "Accelerator energy consumed, joules", METRIC_COUNTER, "joules" },
	{ "accelerator_clock_hertz", "Accelerator clock frequency by clock domain, hertz", METRIC_GAUGE, "hertz" },
};

static double cpu_s(void)
{
	return (double)bench_cpu_ns() / 1e9;
}

/* One batch of n points starting at point number first into e; lookup: find each series by its label set. */
static void add_batch(struct otlp_enc *e, size_t first, size_t n, size_t nseries, uint32_t *slots, char **lbls,
		      int lookup)
{
	for (size_t k = 0; k < n; k++) {
		size_t s = first + k, i = s % nseries;
		uint32_t none = 0;

		otlp_enc_add(e, &FAMS[i % 3], lbls[i], strlen(lbls[i]), lookup ? &none : &slots[i],
			     T_MS + (int64_t)(s / nseries) * 1000, T_MS - 1000, (double)(s * 7919 % 100003), NULL);
	}
}

static void noop(const struct prom_series_view *v, void *ud)
{
	(void)v;
	(void)ud;
}

/* --reports FILE [ROUNDS]: the cost per report of a real stream. */
static int per_report(const char *path, int rounds)
{
	FILE *f = fopen(path, "r");
	json_t **reps = NULL;
	Otlp__ExportMetricsServiceRequest **reqs;
	size_t n = 0, cap = 0, points = 0, bytes = 0, k;
	double *t_ours = calloc((size_t)rounds, sizeof(double)), *t_store = calloc((size_t)rounds, sizeof(double));
	double *t_bare = calloc((size_t)rounds, sizeof(double));
	char line[1 << 16], err[256];
	struct buf out, bare;
	struct otlp_enc *e;
	struct prom_store *st;
	int64_t clk = 1000000000LL, sclk = 1000000000LL;

	if (!f || rounds < 1) {
		fprintf(stderr, "otlp_bench: cannot read %s\n", path);
		return 2;
	}
	while (fgets(line, sizeof(line), f)) {
		json_t *r = json_loads(line, 0, NULL);

		if (!r)
			continue;
		if (n == cap)
			reps = realloc(reps, (cap = cap ? 2 * cap : 64) * sizeof(*reps));
		reps[n++] = r;
	}
	fclose(f);
	reqs = calloc(n + 1, sizeof(*reqs));
	buf_init(&out, 1 << 28);
	buf_init(&bare, 1 << 28);
	e = otlp_enc_new(&(struct otlp_enc_opts){ .encoding = OTLP_PROTOBUF }, err, sizeof(err));
	st = prom_store_new(&(struct prom_store_opts){ .node_name = "", .version = "" });
	/* Round -1 warms up: the series are interned, as in a sink that has run for a while. */
	for (int r = -1; r < rounds; r++) {
		double t0 = cpu_s(), t1;

		for (size_t i = 0; i < n * REPEAT; i++, clk += 1000000000LL) {
			otlp_enc_report(e, reps[i % n], "bench", clk, T_MS * 1000000LL + clk);
			otlp_enc_flush(e, 0, 0, &out, &k);
			if (r == -1 && i >= n * (REPEAT - 1)) { /* the last pass's requests: the floor's */
				reqs[i % n] = otlp__export_metrics_service_request__unpack(NULL, out.len, (uint8_t *)out.data);
				points += k;
				bytes += out.len;
			}
		}
		t1 = cpu_s();
		if (r >= 0)
			t_ours[r] = (t1 - t0) / (double)(n * REPEAT);
		t0 = cpu_s();
		for (size_t i = 0; i < n * REPEAT; i++, sclk += 1000000000LL) {
			prom_store_report(st, reps[i % n], "bench", sclk, T_MS * 1000000LL + sclk);
			prom_store_each(st, 1, noop, NULL);
		}
		t1 = cpu_s();
		if (r >= 0)
			t_store[r] = (t1 - t0) / (double)(n * REPEAT);
		t0 = cpu_s();
		for (size_t i = 0; i < n * REPEAT; i++) {
			size_t len;

			if (!reqs[i % n])
				continue;
			len = otlp__export_metrics_service_request__get_packed_size(reqs[i % n]);
			buf_reset(&bare);
			buf_reserve(&bare, len + 1);
			bare.len = otlp__export_metrics_service_request__pack(reqs[i % n], (uint8_t *)bare.data);
		}
		t1 = cpu_s();
		if (r >= 0)
			t_bare[r] = (t1 - t0) / (double)(n * REPEAT);
	}
	otlp_enc_free(e);
	prom_store_free(st);
	{
		double o = bench_median(t_ours, rounds), s = bench_median(t_store, rounds);
		double b = bench_median(t_bare, rounds);

		printf("%s: %zu reports x %d a round, %.1f points and %.0f bytes a request, %d rounds (medians)\n",
		       path, n, REPEAT, (double)points / (double)n, (double)bytes / (double)n, rounds);
		printf("  ours (report + flush):   %8.1f us CPU/report\n", o * 1e6);
		printf("  of which the store:      %8.1f us CPU/report (what accel-prom pays too)\n", s * 1e6);
		printf("  encoder (ours - store):  %8.1f us CPU/report\n", (o - s) * 1e6);
		printf("  bare (protobuf-c pack):  %8.1f us CPU/report\n", b * 1e6);
		printf("  ratio encoder / bare: %.2f  [target <= 1.2: %s]\n", (o - s) / b, (o - s) / b <= 1.2 ? "PASS" : "FAIL");
	}
	for (size_t i = 0; i < n; i++) {
		json_decref(reps[i]);
		if (reqs[i])
			otlp__export_metrics_service_request__free_unpacked(reqs[i], NULL);
	}
	free(reps);
	free(reqs);
	free(t_ours);
	free(t_store);
	free(t_bare);
	buf_free(&out);
	buf_free(&bare);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--reports"))
		return per_report(argv[2], argc > 3 ? atoi(argv[3]) : 5);

	size_t npoints = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	size_t nseries = argc > 2 ? strtoul(argv[2], NULL, 10) : 500;
	int rounds = argc > 3 ? atoi(argv[3]) : 5;
	char err[256], lbl[1024];
	struct otlp_enc *e = otlp_enc_new(&(struct otlp_enc_opts){ .encoding = OTLP_PROTOBUF }, err, sizeof(err));
	struct otlp_enc *ej = otlp_enc_new(&(struct otlp_enc_opts){ .encoding = OTLP_JSON }, err, sizeof(err));
	uint32_t *slots = calloc(nseries, sizeof(*slots)), *jslots = calloc(nseries, sizeof(*jslots));
	char **lbls = calloc(nseries, sizeof(*lbls));
	double *t_ours = calloc((size_t)rounds, sizeof(double)), *t_bare = calloc((size_t)rounds, sizeof(double));
	double *t_look = calloc((size_t)rounds, sizeof(double)), *t_json = calloc((size_t)rounds, sizeof(double));
	size_t nbatches = (npoints + BATCH - 1) / BATCH, total = 0, total_json = 0, k;
	Otlp__ExportMetricsServiceRequest **reqs;
	struct buf out, bare;

	if (!e || !ej || !slots || !lbls || !t_ours || !t_bare || !t_look || !t_json || rounds < 1 || nseries == 0 ||
	    nseries > BATCH) {
		fprintf(stderr, "otlp_bench: bad arguments (SERIES 1..%d)\n", BATCH);
		return 2;
	}
	buf_init(&out, 1 << 28);
	buf_init(&bare, 1 << 28);
	for (size_t i = 0; i < nseries; i++) {
		snprintf(lbl, sizeof(lbl),
			 "{availability_zone=\"us-west-2b\",device=\"%zu\",device_type=\"nvidia\",instance_id=\"i-0a1b2c3d4e5f60718\","
			 "instance_name=\"bench-host\",instance_type=\"p4d.24xlarge\",model=\"NVIDIA A100-SXM4-40GB\","
			 "pci_bus_id=\"0000:%02zx:00.0\",region=\"us-west-2\",subnet_id=\"subnet-0123abcd4567ef890\","
			 "uuid=\"GPU-%08zx-1234-5678-9abc-def012345678\"}",
			 i, i % 256, i);
		lbls[i] = strdup(lbl);
	}
	/* The floor's requests: the same batches as protobuf-c messages, built once. */
	reqs = calloc(nbatches, sizeof(*reqs));
	for (size_t b = 0; b < nbatches; b++) {
		size_t n = npoints - b * BATCH < BATCH ? npoints - b * BATCH : BATCH;

		add_batch(e, b * BATCH, n, nseries, slots, lbls, 0);
		otlp_enc_flush(e, 0, 0, &out, &k);
		reqs[b] = otlp__export_metrics_service_request__unpack(NULL, out.len, (const uint8_t *)out.data);
		if (!reqs[b] || k != n) {
			fprintf(stderr, "otlp_bench: a request does not unpack\n");
			return 1;
		}
	}
	for (int r = -1; r < rounds; r++) {
		double t0, t1;

		for (int mode = 0; mode < 3; mode++) { /* ours, with a lookup per point, JSON */
			struct otlp_enc *x = mode == 2 ? ej : e;

			t0 = cpu_s();
			for (size_t b = 0; b < nbatches; b++) {
				size_t n = npoints - b * BATCH < BATCH ? npoints - b * BATCH : BATCH;

				add_batch(x, b * BATCH, n, nseries, mode == 2 ? jslots : slots, lbls, mode == 1);
				otlp_enc_flush(x, 0, 0, &out, &k);
				if (r == 0 && mode != 1)
					*(mode ? &total_json : &total) += out.len;
			}
			t1 = cpu_s();
			if (r >= 0)
				(mode == 0 ? t_ours : mode == 1 ? t_look : t_json)[r] = (t1 - t0) / (double)npoints * 1000.0;
		}
		t0 = cpu_s();
		for (size_t b = 0; b < nbatches; b++) {
			size_t len = otlp__export_metrics_service_request__get_packed_size(reqs[b]);

			buf_reset(&bare);
			buf_reserve(&bare, len + 1);
			bare.len = otlp__export_metrics_service_request__pack(reqs[b], (uint8_t *)bare.data);
		}
		t1 = cpu_s();
		if (r >= 0)
			t_bare[r] = (t1 - t0) / (double)npoints * 1000.0;
	}
	{
		double o = bench_median(t_ours, rounds), l = bench_median(t_look, rounds);
		double j = bench_median(t_json, rounds);
		double f = bench_median(t_bare, rounds);

		printf("points %zu, series %zu, %zu requests of %d, %.1f bytes/point (JSON %.1f), %d rounds (medians)\n",
		       npoints, nseries, nbatches, BATCH, (double)total / (double)npoints,
		       (double)total_json / (double)npoints, rounds);
		printf("ours (add + group + layout + pack):   %8.2f us CPU/1000 points = %.2f M points/s\n", o * 1e6,
		       1000.0 / o / 1e6);
		printf("  with a label-set lookup per point:  %8.2f us CPU/1000 points (ratio %.2f)\n", l * 1e6, l / f);
		printf("  OTLP/JSON:                          %8.2f us CPU/1000 points (ratio %.2f)\n", j * 1e6, j / f);
		printf("bare (protobuf-c pack):               %8.2f us CPU/1000 points\n", f * 1e6);
		printf("ratio ours / bare: %.2f  [target <= 1.2: %s]\n", o / f, o / f <= 1.2 ? "PASS" : "FAIL");
	}
	for (size_t b = 0; b < nbatches; b++)
		otlp__export_metrics_service_request__free_unpacked(reqs[b], NULL);
	free(reqs);
	for (size_t i = 0; i < nseries; i++)
		free(lbls[i]);
	free(lbls);
	free(slots);
	free(jslots);
	free(t_ours);
	free(t_bare);
	free(t_look);
	free(t_json);
	buf_free(&out);
	buf_free(&bare);
	otlp_enc_free(e);
	otlp_enc_free(ej);
	return 0;
}
