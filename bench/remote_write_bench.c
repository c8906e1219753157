/* SPDX-License-Identifier: MIT */
/*
 * accel-remote-write's encoder against its floor.
 *
 *   remote_write_bench [SAMPLES] [SERIES] [ROUNDS]
 *
 * ours: what the sink does for each request: rw_enc_add for each sample of
 * a batch of 2000 (the default --max-samples-per-send) over SERIES series
 * with accel-prom's label sets (12 labels, instance labels included, plus
 * __name__ and two external labels), then rw_enc_flush (lay out the
 * TimeSeries, protobuf-c pack, snappy compress). The sink keeps each
 * series' encoder id in accel-prom's store (prom_series_view.slot), so it
 * looks a series up by its label set only the first time; the figure with
 * a lookup for every sample is printed too.
 *
 * bare: the floor, the same requests already built as protobuf-c messages
 * outside the timing, only prometheus__write_request__pack and
 * snappy_compress timed.
 *
 * CPU time (CLOCK_PROCESS_CPUTIME_ID) per 1000 samples, rounds alternating
 * ours and bare, medians. Prints samples/s of ours and the ratio.
 */
#include "../sinks/remote-write/remote-write_enc.h"
#include "../sinks/remote-write/remote-write_prompb.pb-c.h"

#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH 2000

static const struct family FAM = { "accelerator_memory_used_bytes", "Device memory in use", METRIC_GAUGE, "bytes" };

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	size_t nsamples = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	size_t nseries = argc > 2 ? strtoul(argv[2], NULL, 10) : 500;
	int rounds = argc > 3 ? atoi(argv[3]) : 5;
	const char *ext[] = { "instance=node-0001.example.internal", "job=accel-monitor", "cluster=bench" };
	char err[256], lbl[1024];
	struct rw_enc *e = rw_enc_new(ext, 3, err, sizeof(err));
	uint32_t *ids = malloc(nseries * sizeof(*ids));
	char **lbls = calloc(nseries, sizeof(*lbls));
	struct buf out, braw, bz;
	double *t_ours = calloc((size_t)rounds, sizeof(double)), *t_bare = calloc((size_t)rounds, sizeof(double));
	double *t_look = calloc((size_t)rounds, sizeof(double));
	size_t nbatches = (nsamples + BATCH - 1) / BATCH, total_z = 0;
	Prometheus__WriteRequest **reqs;

	if (!e || !ids || !lbls || !t_ours || !t_bare || !t_look || rounds < 1 || nseries == 0 || nseries > BATCH) {
		fprintf(stderr, "remote_write_bench: bad arguments (SERIES 1..%d)\n", BATCH);
		return 2;
	}
	buf_init(&out, 1 << 28);
	buf_init(&braw, 1 << 28);
	buf_init(&bz, 1 << 28);
	for (size_t i = 0; i < nseries; i++) {
		snprintf(lbl, sizeof(lbl),
			 "{availability_zone=\"us-west-2b\",device=\"%zu\",device_type=\"nvidia\",instance_id=\"i-0a1b2c3d4e5f60718\","
			 "instance_name=\"bench-host\",instance_type=\"p4d.24xlarge\",model=\"NVIDIA A100-SXM4-40GB\","
			 "pci_bus_id=\"0000:%02zx:00.0\",region=\"us-west-2\",subnet_id=\"subnet-0123abcd4567ef890\","
			 "uuid=\"GPU-%08zx-1234-5678-9abc-def012345678\"}",
			 i, i % 256, i);
		lbls[i] = xstrdup(lbl);
		if (rw_enc_series(e, &FAM, lbl, strlen(lbl), &ids[i])) {
			fprintf(stderr, "remote_write_bench: cannot intern a series\n");
			return 1;
		}
	}
	/* The floor's requests: the same batches as protobuf-c messages, built once. */
	reqs = calloc(nbatches, sizeof(*reqs));
	for (size_t b = 0; b < nbatches; b++) {
		size_t n = nsamples - b * BATCH < BATCH ? nsamples - b * BATCH : BATCH;
		struct buf raw;

		buf_init(&raw, 1 << 28);
		for (size_t k = 0; k < n; k++) {
			size_t s = b * BATCH + k;

			rw_enc_add(e, ids[s % nseries], 1795452000000 + (int64_t)(s / nseries) * 1000, (double)(s * 7919 % 100003));
		}
		rw_enc_flush(e, &out, NULL);
		rw_unsnappy(out.data, out.len, &raw);
		reqs[b] = prometheus__write_request__unpack(NULL, raw.len, (const uint8_t *)raw.data);
		buf_free(&raw);
	}
	for (int r = -1; r < rounds; r++) {
		double t0, t1;

		for (int lookup = 0; lookup < 2; lookup++) {
			t0 = cpu_s();
			for (size_t b = 0; b < nbatches; b++) {
				size_t n = nsamples - b * BATCH < BATCH ? nsamples - b * BATCH : BATCH;

				for (size_t k = 0; k < n; k++) {
					size_t s = b * BATCH + k;
					uint32_t id = ids[s % nseries];

					if (lookup) /* a series' first sample: found by its label set */
						rw_enc_series(e, &FAM, lbls[s % nseries], strlen(lbls[s % nseries]), &id);
					rw_enc_add(e, id, 1795452000000 + (int64_t)(s / nseries) * 1000,
						   (double)(s * 7919 % 100003));
				}
				rw_enc_flush(e, &out, NULL);
				if (r == 0 && !lookup)
					total_z += out.len;
			}
			t1 = cpu_s();
			if (r >= 0)
				(lookup ? t_look : t_ours)[r] = (t1 - t0) / (double)nsamples * 1000.0;
		}
		t0 = cpu_s();
		for (size_t b = 0; b < nbatches; b++) {
			size_t len = prometheus__write_request__get_packed_size(reqs[b]), zl;

			buf_reset(&braw);
			buf_reserve(&braw, len + 1);
			braw.len = prometheus__write_request__pack(reqs[b], (uint8_t *)braw.data);
			zl = snappy_max_compressed_length(braw.len);
			buf_reset(&bz);
			buf_reserve(&bz, zl + 1);
			snappy_compress(braw.data, braw.len, bz.data, &zl);
		}
		t1 = cpu_s();
		if (r >= 0)
			t_bare[r] = (t1 - t0) / (double)nsamples * 1000.0;
	}
	qsort(t_ours, (size_t)rounds, sizeof(double), dcmp);
	qsort(t_look, (size_t)rounds, sizeof(double), dcmp);
	qsort(t_bare, (size_t)rounds, sizeof(double), dcmp);
	{
		double o = t_ours[rounds / 2], l = t_look[rounds / 2], f = t_bare[rounds / 2];

		printf("samples %zu, series %zu, %zu requests of %d, %.1f compressed bytes/sample, %d rounds (medians)\n",
		       nsamples, nseries, nbatches, BATCH, (double)total_z / (double)nsamples, rounds);
		printf("ours (add + layout + pack + snappy):  %8.2f us CPU/1000 samples = %.2f M samples/s "
		       "[target >= 1 M/s: %s]\n",
		       o * 1e6, 1000.0 / o / 1e6, 1000.0 / o >= 1e6 ? "PASS" : "FAIL");
		printf("  with a label-set lookup per sample: %8.2f us CPU/1000 samples = %.2f M samples/s (ratio %.2f)\n",
		       l * 1e6, 1000.0 / l / 1e6, l / f);
		printf("bare (protobuf-c pack + snappy):      %8.2f us CPU/1000 samples\n", f * 1e6);
		printf("ratio ours / bare: %.2f  [target <= 1.5: %s]\n", o / f, o / f <= 1.5 ? "PASS" : "FAIL");
	}
	for (size_t b = 0; b < nbatches; b++)
		prometheus__write_request__free_unpacked(reqs[b], NULL);
	free(reqs);
	for (size_t i = 0; i < nseries; i++)
		free(lbls[i]);
	free(lbls);
	free(ids);
	free(t_ours);
	free(t_bare);
	free(t_look);
	buf_free(&out);
	buf_free(&braw);
	buf_free(&bz);
	rw_enc_free(e);
	return 0;
}
