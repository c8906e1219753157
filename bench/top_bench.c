/* SPDX-License-Identifier: MIT */
/*
 * accel-top's frame cost (<= 5 ms per frame with 8 GPUs x 7 MIG
 * instances and 500 processes). A synthetic accel-monitor report of that
 * size (8 NVIDIA GPUs in MIG mode with 7 MIG devices each, also as MIG
 * instance entries "<gpu>/<gi>/0" (drawn as lines under their GPU), every
 * device group, 500 process runtimes each holding memory on one GPU and
 * each in a Kubernetes pod, and a Triton endpoint runtime with 8 model
 * versions) is folded
 * into the model HISTORY times, a second apart, so the sparklines are full;
 * then the frame is laid out ROUNDS times at each size, timed with
 * CLOCK_PROCESS_CPUTIME_ID (CPU time of this process only).
 *
 *   top_bench [--rounds N] [--history N]   the figures
 *   top_bench --emit N                     print N such reports (for bench/top_bench.sh)
 *   top_bench --devices N                  a wide node instead: two reports of N GPUs (each in
 *                                          every device group, no MIG, no processes) folded into
 *                                          the model, then one --once frame: the CPU time of each
 *                                          (how the model's lookups and the layout scale with N)
 *
 * Printed: the ingest cost per report (map_report plus the model), and per
 * frame size the median and the maximum layout time. Drawing onto the
 * terminal (curses' diff) is not in these figures: bench/top_bench.sh
 * measures the whole process, drawing included, per report.
 */
#include "../common/util.h"
#include "../sinks/top/top_model.h"
#include "../sinks/top/top_view.h"
#include "bench.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GPUS 8
#define MIGS 7
#define PROCS 500

static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The report time of second sec, ISO 8601 UTC. */
static void stamp(int sec, char ts[64])
{
	time_t t = 1767225600 + sec;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(ts, 64, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
}

/* One report at second sec (values move with sec so every frame differs). */
static char *report(int sec)
{
	struct buf b;
	char ts[64];

	stamp(sec, ts);
	buf_init(&b, 64u << 20);
	buf_printf(&b, "{\"timestamp\":\"%s\",\"monitor\":{\"version\":\"0.1.0\",\"seq\":%d},\"instance_info\":{"
		       "\"hostname\":\"bench\",\"instance_type\":\"p4d.24xlarge\",\"instance_id\":\"i-0\",\"error\":\"\"},"
		       "\"system_data\":{\"vcpu_usage\":{\"period\":1.0,\"timestamp\":\"%s\",\"error\":\"\",\"usage_data\":{},"
		       "\"average_usage\":{\"user\":30,\"nice\":0,\"system\":5,\"idle\":65,\"io_wait\":0,\"irq\":0,"
		       "\"soft_irq\":0},\"context_switch_count\":1},\"memory_info\":{\"period\":1.0,\"timestamp\":\"%s\","
		       "\"error\":\"\",\"memory_total_bytes\":1200000000000,\"memory_used_bytes\":300000000000,"
		       "\"swap_total_bytes\":0,\"swap_used_bytes\":0}},\"runtime_data\":[",
		   ts, sec, ts, ts);
	for (int p = 0; p < PROCS; p++)
		buf_printf(&b, "%s{\"runtime_index\":0,\"address\":\"process:python3\",\"pid\":%d,\"runtime_tag\":\"worker%d\","
			       "\"error\":\"\",\"report\":{\"runtime_vcpu_usage\":{\"period\":1.0,\"timestamp\":\"%s\","
			       "\"error\":\"\",\"vcpu_usage\":{\"user\":%.1f,\"system\":0.5}},\"memory_used\":{\"period\":1.0,"
			       "\"timestamp\":\"%s\",\"error\":\"\",\"runtime_used_bytes\":{\"host\":%d,\"device\":%d}}},"
			       "\"container\":{\"runtime\":\"containerd\",\"id\":\"%064d\",\"pod\":\"trainer-%d\","
			       "\"namespace\":\"ml\",\"name\":\"worker\"}}",
			   p ? "," : "", 10000 + p, p, ts, (p * 7 + sec) % 100 / 10.0, ts, 100000000 + p * 4096,
			   (p + 1) << 20, p, p / 4);
	buf_printf(&b, ",{\"runtime_index\":1,\"address\":\"http://127.0.0.1:8002/metrics\",\"pid\":9999,"
		       "\"runtime_tag\":\"tritonserver\",\"error\":\"\",\"report\":{\"execution_stats\":{\"period\":1.0,"
		       "\"timestamp\":\"%s\",\"error\":\"\",\"models\":{",
		   ts);
	for (int k = 0; k < 8; k++)
		buf_printf(&b, "%s\"model%d\":{\"1\":{\"execution_summary\":{\"completed\":%d,\"failed\":%d},"
			       "\"error_summary\":{\"rejected\":%d},\"mean_seconds\":{\"request\":0.00%d}}}",
			   k ? "," : "", k, 100 + sec % 50, sec % 3, sec % 3, k + 1);
	buf_printf(&b, "}}}}");
	buf_printf(&b, "],\"device_data\":[{\"device_type\":\"nvidia\",\"error\":\"\",\"report\":{");
	static const char *const groups[] = { "device_info", "device_utilization", "device_memory", "device_thermal",
					       "device_power", "device_clocks", "device_errors" };
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		buf_printf(&b, "%s\"%s\":{\"period\":1.0,\"timestamp\":\"%s\",\"error\":\"\",\"devices\":{", g ? "," : "",
			   groups[g], ts);
		for (int d = 0; d < GPUS; d++) {
			buf_printf(&b, "%s\"%d\":{\"index\":%d,\"uuid\":\"GPU-%08d\",\"pci_bus_id\":\"0000:%02x:00.0\","
				       "\"model\":\"NVIDIA A100-SXM4-80GB\",\"error\":\"\"",
				   d ? "," : "", d, d, d, 0x10 + d);
			switch (g) {
			case 0:
				buf_printf(&b, ",\"power_limit_watts\":400.0,\"mig_mode\":\"enabled\"");
				break;
			case 1:
				buf_printf(&b, ",\"core_percent\":%d,\"memory_bandwidth_percent\":%d", (sec * 3 + d * 11) % 101,
					   (sec + d) % 50);
				break;
			case 2:
				buf_printf(&b, ",\"total_bytes\":85899345920,\"used_bytes\":%lld,\"free_bytes\":1,\"processes\":{",
					   (long long)((sec * 7 + d * 13) % 100) * 858993459);
				for (int p = d, n = 0; p < PROCS; p += GPUS, n++)
					buf_printf(&b, "%s\"%d\":%d", n ? "," : "", 10000 + p, (p + 1) << 20);
				buf_printf(&b, "},\"mig_devices\":{");
				for (int m = 0; m < MIGS; m++)
					buf_printf(&b, "%s\"%d\":{\"uuid\":\"MIG-%d-%d\",\"gpu_instance_id\":%d,"
						       "\"compute_instance_id\":0,\"total_bytes\":10737418240,"
						       "\"used_bytes\":%d,\"free_bytes\":1}",
						   m ? "," : "", m, d, m, m, m << 20);
				buf_printf(&b, "}");
				break;
			case 3:
				buf_printf(&b, ",\"temperatures_celsius\":{\"gpu\":%d,\"memory\":%d}", 40 + (sec + d) % 30,
					   45 + d);
				break;
			case 4:
				buf_printf(&b, ",\"power_watts\":%.1f,\"energy_joules\":250.0", 100.0 + (sec + d) % 300);
				break;
			case 5:
				buf_printf(&b, ",\"clocks_mhz\":{\"sm\":1410,\"memory\":1593}");
				break;
			case 6:
				buf_printf(&b, ",\"ecc_errors\":{\"corrected\":%d,\"uncorrected\":0},\"pcie_replays\":0",
					   sec % 2);
				break;
			}
			buf_printf(&b, "}");
			for (int m = 0; g == 2 && m < MIGS; m++)
				buf_printf(&b, ",\"%d/%d/0\":{\"index\":%d,\"uuid\":\"MIG-%d-%d\",\"parent_uuid\":\"GPU-%08d\","
					       "\"gpu_instance_id\":%d,\"compute_instance_id\":0,\"mig_profile\":\"1g.10gb\","
					       "\"model\":\"NVIDIA A100-SXM4-80GB MIG 1g.10gb\",\"error\":\"\","
					       "\"total_bytes\":10737418240,\"used_bytes\":%d,\"free_bytes\":1,\"processes\":{}}",
					   d, m + 7, d, d, m, d, m + 7, m << 20);
		}
		buf_printf(&b, "}}");
	}
	buf_printf(&b, "}}]}");
	return b.data; /* the caller frees it */
}

/* A report of n GPUs at second sec, each in every device group (bench --devices). */
static char *wide_report(int sec, int n)
{
	static const char *const groups[] = { "device_info", "device_utilization", "device_memory", "device_thermal",
					       "device_power", "device_errors" };
	struct buf b;
	char ts[64];

	stamp(sec, ts);
	buf_init(&b, 1u << 30);
	buf_printf(&b, "{\"timestamp\":\"%s\",\"monitor\":{\"version\":\"0.1.0\",\"seq\":%d},\"instance_info\":{"
		       "\"hostname\":\"wide\",\"instance_type\":\"t\",\"instance_id\":\"i-0\",\"error\":\"\"},"
		       "\"device_data\":[{\"device_type\":\"nvidia\",\"error\":\"\",\"report\":{",
		   ts, sec);
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		buf_printf(&b, "%s\"%s\":{\"period\":1.0,\"timestamp\":\"%s\",\"error\":\"\",\"devices\":{", g ? "," : "",
			   groups[g], ts);
		for (int d = 0; d < n; d++) {
			buf_printf(&b, "%s\"%d\":{\"index\":%d,\"uuid\":\"GPU-%08d\",\"model\":\"NVIDIA A100\",\"error\":\"\"",
				   d ? "," : "", d, d, d);
			switch (g) {
			case 0:
				buf_printf(&b, ",\"power_limit_watts\":400.0");
				break;
			case 1:
				buf_printf(&b, ",\"core_percent\":%d,\"memory_bandwidth_percent\":%d", (sec + d) % 101, d % 50);
				break;
			case 2:
				buf_printf(&b, ",\"total_bytes\":85899345920,\"used_bytes\":%d,\"free_bytes\":1", d << 10);
				break;
			case 3:
				buf_printf(&b, ",\"temperatures_celsius\":{\"gpu\":%d,\"memory\":%d}", 40 + d % 30, 45);
				break;
			case 4:
				buf_printf(&b, ",\"power_watts\":%.1f", 100.0 + d % 300);
				break;
			case 5:
				buf_printf(&b, ",\"ecc_errors\":{\"corrected\":%d,\"uncorrected\":0},\"pcie_replays\":0", sec % 2);
				break;
			}
			buf_printf(&b, "}");
		}
		buf_printf(&b, "}}");
	}
	buf_printf(&b, "}}]}");
	return b.data; /* the caller frees it */
}

/* bench --devices n: two reports into the model, then one --once frame, each timed. */
static int wide(int n)
{
	struct top_model m;
	struct top_view v;
	struct top_canvas c;
	double t0, ingest[2], frame;
	int rows;

	top_model_init(&m);
	for (int s = 0; s < 2; s++) {
		char *r = wide_report(s, n);
		json_t *j = json_loads(r, 0, NULL);

		if (!j) {
			fprintf(stderr, "top_bench: the wide report does not parse\n");
			return 1;
		}
		t0 = cpu_ms();
		top_model_report(&m, j, 0, (int64_t)s * 1000000000);
		ingest[s] = cpu_ms() - t0;
		json_decref(j);
		free(r);
	}
	if (m.ndevs != (size_t)n) {
		fprintf(stderr, "top_bench: the model has %zu devices, not %d\n", m.ndevs, n);
		return 1;
	}
	top_view_init(&v);
	v.now_mono_ns = 2 * 1000000000LL;
	top_canvas_init(&c, 300);
	t0 = cpu_ms();
	rows = top_view_render(&m, &v, &c);
	frame = cpu_ms() - t0;
	printf("%d devices: ingest (map_report + model) ms: first report %.1f, second %.1f; --once frame %.1f ms "
	       "(%d rows)\n",
	       n, ingest[0], ingest[1], frame, rows);
	top_canvas_free(&c);
	top_model_free(&m);
	return 0;
}

int main(int argc, char **argv)
{
	int rounds = 200, history = 300;
	static const struct {
		int w, h, interactive;
		const char *name;
	} sizes[] = {
		{ 80, 24, 1, "80x24" },
		{ 300, 80, 1, "300x80" },
		{ 300, 0, 0, "--once 300 wide (every row)" },
	};
	struct top_model m;
	double t0, ingest;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--emit") && i + 1 < argc) {
			int n = atoi(argv[++i]);

			for (int s = 0; s < n; s++) {
				char *r = report(s);

				puts(r);
				free(r);
			}
			return fflush(stdout) ? 1 : 0;
		} else if (!strcmp(argv[i], "--devices") && i + 1 < argc) {
			return wide(atoi(argv[++i]));
		} else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
			rounds = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--history") && i + 1 < argc) {
			history = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: top_bench [--rounds N] [--history N] | --emit N | --devices N\n");
			return 2;
		}
	}
	if (rounds < 1 || history < 1) {
		fprintf(stderr, "top_bench: --rounds and --history are at least 1\n");
		return 2;
	}
	top_model_init(&m);
	ingest = 0;
	for (int s = 0; s < history; s++) {
		char *r = report(s);
		json_t *j = json_loads(r, 0, NULL);

		if (!j) {
			fprintf(stderr, "top_bench: the synthetic report does not parse\n");
			return 1;
		}
		t0 = cpu_ms();
		top_model_report(&m, j, 0, (int64_t)s * 1000000000);
		ingest += cpu_ms() - t0;
		json_decref(j);
		free(r);
	}
	printf("model: %zu devices, %zu processes, %zu history points each\n", m.ndevs, m.nprocs,
	       m.ndevs ? m.devs[0].hist_n : 0);
	if (m.ndevs != GPUS * (1 + MIGS) || m.nprocs != PROCS + 1 || m.devs[0].mig != MIGS ||
	    m.procs[PROCS].nmodels != 8 || !*m.procs[0].pod) {
		fprintf(stderr, "top_bench: the model is not %d GPUs x %d MIG with %d processes in pods and 8 models\n",
			GPUS, MIGS, PROCS);
		return 1;
	}
	printf("ingest (map_report + model), ms/report: %.3f (report parsing by jansson not included)\n",
	       ingest / history);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct top_view v;
		struct top_canvas c;
		double *t = xmalloc((size_t)rounds * sizeof(*t));
		int rows = 0;

		top_view_init(&v);
		v.utf8 = 1;
		v.interactive = sizes[k].interactive;
		v.height = sizes[k].h;
		v.now_mono_ns = (int64_t)history * 1000000000;
		top_canvas_init(&c, sizes[k].w);
		for (int r = 0; r < rounds; r++) {
			v.sort = (enum top_sort)(r % SORT_COUNT);
			t0 = cpu_ms();
			rows = top_view_render(&m, &v, &c);
			t[r] = cpu_ms() - t0;
		}
		qsort(t, (size_t)rounds, sizeof(*t), bench_cmp_double);
		printf("frame %-28s ms: median %.3f  max %.3f  (%d body rows)  %s (target <= 5 ms)\n", sizes[k].name,
		       t[rounds / 2], t[rounds - 1], rows, t[rounds / 2] <= 5.0 ? "PASS" : "FAIL");
		top_canvas_free(&c);
		free(t);
	}
	top_model_free(&m);
	return 0;
}
