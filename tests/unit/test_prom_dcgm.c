/* SPDX-License-Identifier: MIT */
/*
 * common/series/prom_dcgm.c: dcgm-exporter's collectors CSV (the default file, and
 * every way a file can be wrong, with file:line), which fields are served
 * and why the others are not, and the DCGM series made of a real report
 * through the common mapping (names, labels, units, counters). The module is
 * included with UNITTEST so the test can add the families the report
 * mapping does not produce yet (running totals made into counters).
 */
#define UNITTEST
#include "../../common/series/prom_dcgm.c"
#include "tap.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the CSV ------------------------------------------------------------- */

static void test_default_file(void)
{
	const char *top = getenv("ACCEL_TOP"), *why, *name;
	char path[512], *err = NULL;
	struct prom_dcgm *d;
	int seen_label = 0;

	snprintf(path, sizeof(path), "%s/tests/fixtures/dcgm/default-counters.csv", top && *top ? top : ".");
	d = prom_dcgm_load(path, &err);
	ok(d != NULL, "dcgm-exporter's default-counters.csv loads");
	if (!d) {
		printf("#   %s\n", err);
		free(err);
		return;
	}
	is_int(d->n, 26, "it lists 26 fields (the others are comments)");
	for (size_t i = 0; (name = prom_dcgm_unsupported(d, i, &why)); i++) {
		printf("# not served: %s: %s\n", name, why);
		seen_label |= !strcmp(name, "DCGM_FI_DRIVER_VERSION") && strstr(why, "label");
	}
	ok(seen_label, "DCGM_FI_DRIVER_VERSION is not served: no driver version label");
	{
		static const char *const always[] = { "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK",
						      "DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_GPU_TEMP",
						      "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
						      "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_GPU_UTIL",
						      "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_ENC_UTIL",
						      "DCGM_FI_DEV_DEC_UTIL", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED",
						      /* the file's five profiling fields, from GPM */
						      "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
						      "DCGM_FI_PROF_DRAM_ACTIVE", "DCGM_FI_PROF_PCIE_TX_BYTES",
						      "DCGM_FI_PROF_PCIE_RX_BYTES" };

		for (size_t i = 0; i < ARRAY_SIZE(always); i++) {
			int served = 0;

			for (size_t k = 0; k < d->n; k++)
				served |= !strcmp(d->f[k].name, always[i]) && d->f[k].served;
			ok(served, "%s is served", always[i]);
		}
	}
	/* Served exactly when the report mapping has the family (it grows without this test changing). */
	for (size_t k = 0; k < d->n; k++) {
		const struct dcgm_row *row = NULL;
		char what[160];

		for (size_t r = 0; r < ARRAY_SIZE(rows); r++)
			if (!strcmp(rows[r].field, d->f[k].name))
				row = &rows[r];
		snprintf(what, sizeof(what), "%s: served exactly when the mapping has %s", d->f[k].name,
			 row ? row->family : "(no row)");
		is_int(d->f[k].served, row && family_named(row->family) != NULL, what);
	}
	is_str(d->f[0].help, "SM clock frequency (in MHz).", "the help text is the file's");
	prom_dcgm_free(d);
}

static void test_csv_errors(void)
{
	static const struct {
		const char *text;
		const char *err; /* NULL: parses */
	} cases[] = {
		{ "DCGM_FI_DEV_GPU_UTIL, gauge\n", "x.csv:1: expected 3 fields (DCGM field, Prometheus type, help), got 2" },
		{ "DCGM_FI_DEV_GPU_UTIL, gauge, a, b\n", "x.csv:1: expected 3 fields (DCGM field, Prometheus type, help), got 4" },
		{ "# comment\n\nDCGM_FI_DEV_GPU_UTIL, gauges, GPU\n", "x.csv:3: unknown Prometheus type \"gauges\"" },
		{ "GPU_UTIL, gauge, GPU\n", "x.csv:1: \"GPU_UTIL\" is not a DCGM field name" },
		{ "DCGM_FI_dev_gpu_util, gauge, GPU\n", "x.csv:1: \"DCGM_FI_dev_gpu_util\" is not a DCGM field name" },
		{ "DCGM_FI_DEV_GPU_UTIL, gauge, a\nDCGM_FI_DEV_GPU_UTIL, gauge, b\n",
		  "x.csv:2: DCGM_FI_DEV_GPU_UTIL is listed twice" },
		{ "DCGM_FI_DEV_GPU_UTIL, gauge, \"GPU utilization\n", "x.csv:1: unterminated quote" },
		{ "# only comments\n\n", "x.csv: lists no field" },
		{ "", "x.csv: lists no field" },
		{ "DCGM_FI_DEV_GPU_UTIL, gauge, a\0b\n", "x.csv:1: a NUL byte" },
		{ "DCGM_FI_DEV_GPU_UTIL, gauge, \"GPU utilization, in %\"\n", NULL },
		{ "DCGM_FI_DEV_GPU_UTIL,gauge,GPU\r\nDCGM_FI_DEV_SM_CLOCK , gauge ,  SM\r\n", NULL },
		{ "\xEF\xBB\xBF" "DCGM_FI_DEV_GPU_UTIL, gauge, GPU\n", NULL },
		{ "DCGM_FI_DEV_GPU_UTIL, gauge, GPU", NULL },
		{ "  # indented comment\nDCGM_EXP_XID_ERRORS_COUNT, counter, XIDs\n", NULL },
		{ "DCGM_FI_DEV_GPU_UTIL, histogram, GPU\n", NULL },
	};
	char long_line[PROM_DCGM_LINE_MAX + 64];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *err = NULL;
		size_t len = strlen(cases[i].text);
		struct prom_dcgm *d;

		if (strstr(cases[i].err ? cases[i].err : "", "NUL"))
			len += 3; /* the text goes on after its NUL */
		d = prom_dcgm_parse(cases[i].text, len, "x.csv", &err);
		if (cases[i].err) {
			ok(!d && err && strstr(err, cases[i].err), "rejected: %s", cases[i].err);
			if (err && !strstr(err, cases[i].err))
				printf("#   got: %s\n", err);
		} else {
			ok(d && !err, "accepted: case %zu", i);
			if (err)
				printf("#   got: %s\n", err);
		}
		free(err);
		prom_dcgm_free(d);
	}
	memset(long_line, 'A', sizeof(long_line) - 1);
	long_line[sizeof(long_line) - 1] = 0;
	{
		char *err = NULL;
		struct prom_dcgm *d = prom_dcgm_parse(long_line, strlen(long_line), "x.csv", &err);

		ok(!d && err && strstr(err, "x.csv:1: line longer than 4096 bytes"), "a line over 4096 bytes is refused");
		free(err);
	}
	{
		/* A bad field quoted in the message: escaped, cut at 200 bytes. */
		char *err = NULL, line[1100];
		struct prom_dcgm *d;

		memcpy(line, "\033[31m", 5);
		memset(line + 5, 'A', 1000);
		snprintf(line + 1005, sizeof(line) - 1005, ", gauge, x\n");
		d = prom_dcgm_parse(line, strlen(line), "q.csv", &err);
		ok(!d && err && !strchr(err, '\033') && strstr(err, "\\u001b[31m") && strstr(err, "...") && strlen(err) < 400,
		   "a bad field is quoted escaped and capped (%.80s...)", err ? err : "");
		free(err);
	}
	{
		char *err = NULL;
		struct prom_dcgm *d = prom_dcgm_load("/nonexistent/collectors.csv", &err);

		is_str(err, "/nonexistent/collectors.csv: No such file or directory", "a missing file says so");
		free(err);
		prom_dcgm_free(d);
	}
	{
		char *err = NULL, dir[] = "/tmp/test_prom_dcgm.XXXXXX", fifo[64];
		struct prom_dcgm *d = NULL;

		if (ok(mkdtemp(dir) != NULL, "a temporary directory")) {
			snprintf(fifo, sizeof(fifo), "%s/collectors.csv", dir);
			ok(mkfifo(fifo, 0600) == 0, "a FIFO for the collectors file");
			alarm(30); /* read the old way, a FIFO waits for a writer forever */
			d = prom_dcgm_load(fifo, &err);
			alarm(0);
			ok(!d && err && strstr(err, "collectors.csv: a FIFO, not a regular file"),
			   "a FIFO as collectors file is refused at once, and named (%s)", err ? err : "");
			free(err);
			err = NULL;
			d = prom_dcgm_load(dir, &err);
			ok(!d && err && strstr(err, ": a directory, not a regular file"), "a directory is named (%s)",
			   err ? err : "");
			free(err);
			unlink(fifo);
			rmdir(dir);
		}
	}
	{
		char *err = NULL;
		const char *text = "DCGM_FI_DEV_GPU_UTIL, gauge, \"GPU utilization, in %\"\n"
				   "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, gauge, energy\n"
				   "DCGM_FI_DEV_POWER_USAGE, counter, power\n"
				   "DCGM_FI_DEV_GPU_TEMP, label, temp\n"
				   "DCGM_FI_DEV_BOGUS_FIELD, gauge, ?\n";
		struct prom_dcgm *d = prom_dcgm_parse(text, strlen(text), "x.csv", &err);
		const char *why = NULL;

		is_str(d ? d->f[0].help : NULL, "GPU utilization, in %", "a quoted help keeps its comma");
		is_str(prom_dcgm_unsupported(d, 0, &why), "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "a counter listed as a gauge...");
		is_str(why, "listed as a gauge; accel-prom can serve it as a counter only", "... is not served, and why");
		is_str(prom_dcgm_unsupported(d, 1, &why), "DCGM_FI_DEV_POWER_USAGE", "a gauge listed as a counter...");
		is_str(why, "listed as a counter; accel-prom can serve it as a gauge only", "... is not served, and why");
		is_str(prom_dcgm_unsupported(d, 2, &why), "DCGM_FI_DEV_GPU_TEMP", "a value listed as a label is not served");
		is_str(prom_dcgm_unsupported(d, 3, &why), "DCGM_FI_DEV_BOGUS_FIELD", "an unknown field is not served");
		ok(prom_dcgm_unsupported(d, 4, &why) == NULL, "NULL past the last");
		is_int(prom_dcgm_served(d), 1, "one served");
		free(err);
		prom_dcgm_free(d);
	}
}

/* ---- samples through the common mapping ------------------------------------ */

struct got {
	char lines[64][512];
	size_t n;
	struct prom_dcgm *d;
	size_t mapped_other;
};

static int cmp_label(const void *a, const void *b)
{
	return strcmp(((const struct label *)a)->name, ((const struct label *)b)->name);
}

static void on_dcgm(const struct sample *s, void *ud)
{
	struct got *g = ud;
	struct label l[SAMPLE_MAX_LABELS];
	char *p;
	size_t left;

	if (g->n == ARRAY_SIZE(g->lines))
		return;
	memcpy(l, s->labels, s->nlabels * sizeof(l[0]));
	qsort(l, s->nlabels, sizeof(l[0]), cmp_label);
	p = g->lines[g->n];
	left = sizeof(g->lines[0]);
	p += snprintf(p, left, "%s %s{", s->fam->type == METRIC_COUNTER ? "counter" : "gauge", s->fam->name);
	for (size_t i = 0; i < s->nlabels; i++)
		p += snprintf(p, left - (size_t)(p - g->lines[g->n]), "%s%s=\"%s\"", i ? "," : "", l[i].name, l[i].value);
	snprintf(p, left - (size_t)(p - g->lines[g->n]), "} %.10g", s->value);
	g->n++;
}

static void on_sample(const struct sample *s, void *ud)
{
	struct got *g = ud;
	size_t before = g->n;

	prom_dcgm_map(g->d, s, on_dcgm, g);
	if (g->n != before && strncmp(s->fam->name, "accelerator_", 12))
		g->mapped_other++;
	/* A DCGM sample fed back in maps to nothing (accel-prom may pass its own callback). */
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

static const char report[] =
	"{\"timestamp\":\"2026-01-02T03:04:05.000Z\",\"monitor\":{\"version\":\"0.1.0\",\"seq\":0},"
	"\"runtime_data\":[],\"system_data\":{},"
	"\"instance_info\":{\"instance_id\":\"i-0123\",\"instance_type\":\"p5.48xlarge\",\"hostname\":\"gpu-host-1\"},"
	"\"device_data\":[{\"device_type\":\"nvidia\",\"error\":\"\",\"report\":{"
	"\"device_utilization\":{\"period\":1.0,\"timestamp\":\"2026-01-02T03:04:05.000Z\",\"error\":\"\",\"devices\":{"
	"\"0\":{\"index\":0,\"uuid\":\"GPU-a\",\"pci_bus_id\":\"00000000:18:00.0\",\"model\":\"NVIDIA H100 80GB HBM3\","
	"\"error\":\"\",\"core_percent\":37.0,\"memory_bandwidth_percent\":12.0,\"decoder_percent\":3.0},"
	"\"1\":{\"index\":1,\"uuid\":\"GPU-b\",\"error\":\"GPU is lost\"}}},"
	"\"device_memory\":{\"period\":1.0,\"timestamp\":\"2026-01-02T03:04:05.000Z\",\"error\":\"\",\"devices\":{"
	"\"0\":{\"index\":0,\"uuid\":\"GPU-a\",\"pci_bus_id\":\"00000000:18:00.0\",\"model\":\"NVIDIA H100 80GB HBM3\","
	"\"error\":\"\",\"total_bytes\":85520809984,\"used_bytes\":1073741824,\"free_bytes\":83946012672,"
	"\"reserved_bytes\":501055488,\"processes\":{\"4242\":1073741824}}}},"
	"\"device_power\":{\"period\":1.0,\"timestamp\":\"2026-01-02T03:04:05.000Z\",\"error\":\"\",\"devices\":{"
	"\"0\":{\"index\":0,\"uuid\":\"GPU-a\",\"pci_bus_id\":\"00000000:18:00.0\",\"model\":\"NVIDIA H100 80GB HBM3\","
	"\"error\":\"\",\"power_watts\":250.5,\"energy_joules\":5.0,\"energy_total_joules\":1010.0}}},"
	"\"device_thermal\":{\"period\":1.0,\"timestamp\":\"2026-01-02T03:04:05.000Z\",\"error\":\"\",\"devices\":{"
	"\"0\":{\"index\":0,\"uuid\":\"GPU-a\",\"pci_bus_id\":\"00000000:18:00.0\",\"model\":\"NVIDIA H100 80GB HBM3\","
	"\"error\":\"\",\"temperatures_celsius\":{\"gpu\":45,\"memory\":52},\"fan_percent\":30.0}}},"
	"\"device_clocks\":{\"period\":1.0,\"timestamp\":\"2026-01-02T03:04:05.000Z\",\"error\":\"\",\"devices\":{"
	"\"0\":{\"index\":0,\"uuid\":\"GPU-a\",\"pci_bus_id\":\"00000000:18:00.0\",\"model\":\"NVIDIA H100 80GB HBM3\","
	"\"error\":\"\",\"clocks_mhz\":{\"graphics\":1755,\"sm\":1980,\"memory\":2619,\"video\":1530}}}},"
	"\"device_errors\":{\"period\":1.0,\"timestamp\":\"2026-01-02T03:04:05.000Z\",\"error\":\"\",\"devices\":{"
	"\"0\":{\"index\":0,\"uuid\":\"GPU-a\",\"pci_bus_id\":\"00000000:18:00.0\",\"model\":\"NVIDIA H100 80GB HBM3\","
	"\"error\":\"\",\"ecc_errors\":{\"corrected\":2,\"uncorrected\":0},\"pcie_replays\":1,\"pcie_replays_total\":5}}}"
	"}},"
	"{\"device_type\":\"amdgpu\",\"error\":\"\",\"report\":{"
	"\"device_utilization\":{\"period\":1.0,\"timestamp\":\"2026-01-02T03:04:05.000Z\",\"error\":\"\",\"devices\":{"
	"\"0\":{\"index\":0,\"uuid\":\"0x1234\",\"error\":\"\",\"core_percent\":50.0}}}}}]}";

/* What the default file gives for that report, in this build, sorted ("counter"/"gauge" first). */
#define L "Hostname=\"gpu-host-1\",UUID=\"GPU-a\",device=\"nvidia0\",gpu=\"0\",instance_id=\"i-0123\"," \
	  "instance_type=\"p5.48xlarge\",modelName=\"NVIDIA H100 80GB HBM3\",pci_bus_id=\"00000000:18:00.0\""
static const char *const want[] = {
	"counter DCGM_FI_DEV_PCIE_REPLAY_COUNTER{" L "} 1",
	"counter DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{" L "} 5000",
	"gauge DCGM_FI_DEV_DEC_UTIL{" L "} 3",
	"gauge DCGM_FI_DEV_FB_FREE{" L "} 80057.15625",
	"gauge DCGM_FI_DEV_FB_USED{" L "} 1024",
	"gauge DCGM_FI_DEV_GPU_TEMP{" L "} 45",
	"gauge DCGM_FI_DEV_GPU_UTIL{" L "} 37",
	"gauge DCGM_FI_DEV_MEMORY_TEMP{" L "} 52",
	"gauge DCGM_FI_DEV_MEM_CLOCK{" L "} 2619",
	"gauge DCGM_FI_DEV_MEM_COPY_UTIL{" L "} 12",
	"gauge DCGM_FI_DEV_POWER_USAGE{" L "} 250.5",
	"gauge DCGM_FI_DEV_SM_CLOCK{" L "} 1980",
};

static void test_mapping(void)
{
	const char *top = getenv("ACCEL_TOP");
	char path[512], *err = NULL;
	struct got g;
	struct map_cb cb = { .sample = on_sample, .ud = &g };
	json_t *r = json_loads(report, 0, NULL);
	size_t w = 0, extra = 0;

	memset(&g, 0, sizeof(g));
	snprintf(path, sizeof(path), "%s/tests/fixtures/dcgm/default-counters.csv", top && *top ? top : ".");
	g.d = prom_dcgm_load(path, &err);
	ok(r && g.d, "the report and the default file load");
	if (!r || !g.d) {
		free(err);
		json_decref(r);
		return;
	}
	map_report(r, 0, &cb);
	qsort(g.lines, g.n, sizeof(g.lines[0]), cmp_line);
	/* Lines for fields whose family a newer mapping adds (FB_RESERVED, ...) may come on top. */
	for (size_t i = 0; i < g.n; i++) {
		if (w < ARRAY_SIZE(want) && !strcmp(g.lines[i], want[w])) {
			w++;
			continue;
		}
		extra++;
		printf("# also: %s\n", g.lines[i]);
	}
	is_int(w, ARRAY_SIZE(want), "every expected DCGM series, with dcgm-exporter's labels and units");
	if (w < ARRAY_SIZE(want))
		printf("#   first missing: %s\n", want[w]);
	ok(extra <= 3, "nothing else but fields of families a newer mapping adds");
	is_int(g.mapped_other, 0, "only accelerator_* samples are mapped");
	{
		struct sample s;
		size_t n;

		memset(&s, 0, sizeof(s));
		s.fam = &g.d->f[0].fam;
		n = prom_dcgm_map(g.d, &s, on_dcgm, &g);
		is_int(n, 0, "a DCGM sample maps to nothing (no loop through the caller's callback)");
	}
	json_decref(r);
	prom_dcgm_free(g.d);
}

/* Running totals served as counters: the first increment is the whole total; a reset counts afresh. */
static void test_totals(void)
{
	static const struct family remap = { "accelerator_remapped_rows", "", METRIC_GAUGE, "" };
	static const struct family *const fams[] = { &remap, NULL };
	const char *text = "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS, counter, rows\n"
			   "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS, gauge, rows\n";
	char *err = NULL;
	struct prom_dcgm *d;
	struct got g;
	struct sample s;
	static const double totals[] = { 7, 7, 9, 2 }, incs[] = { 7, 0, 2, 2 };

	extra_families = fams;
	d = prom_dcgm_parse(text, strlen(text), "x.csv", &err);
	extra_families = NULL;
	is_int(prom_dcgm_served(d), 2, "a running-total family serves a counter and a gauge");
	memset(&s, 0, sizeof(s));
	s.fam = map_family(remap.name) ? map_family(remap.name) : &remap; /* the mapping has it now: the DCGM rows use it */
	s.host = "h";
	s.labels[0] = (struct label){ "device_type", "nvidia" };
	s.labels[1] = (struct label){ "device", "3" };
	s.labels[2] = (struct label){ "uuid", "GPU-c" };
	s.labels[3] = (struct label){ "type", "correctable" };
	s.nlabels = 4;
	for (size_t i = 0; i < ARRAY_SIZE(totals); i++) {
		memset(&g, 0, sizeof(g));
		s.value = totals[i];
		prom_dcgm_map(d, &s, on_dcgm, &g);
		is_int(g.n, 1, "one series per sample");
		ok(strstr(g.lines[0], "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS{") != NULL, "the counter");
		is_double(strtod(strrchr(g.lines[0], ' ') + 1, NULL), incs[i], 1e-9, "total -> increment");
	}
	s.labels[3].value = "uncorrectable";
	memset(&g, 0, sizeof(g));
	s.value = 4;
	prom_dcgm_map(d, &s, on_dcgm, &g);
	ok(g.n == 1 && strstr(g.lines[0], "gauge DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{") &&
		   strstr(g.lines[0], "} 4"),
	   "listed as a gauge: the total itself");
	free(err);
	prom_dcgm_free(d);
}

/*
 * NVIDIA MIG and GPM: a GPU's and a MIG instance's profiling
 * metrics as DCGM_FI_PROF_* ratios; the instance's series carry
 * GPU_I_PROFILE and GPU_I_ID, with its parent GPU's index, UUID and model
 * name as dcgm-exporter labels a GPU instance.
 */
static void test_mig_prof(void)
{
	static const char rep_mig[] =
		"{\"timestamp\":\"2026-01-02T03:04:05.000Z\",\"monitor\":{\"version\":\"0.1.0\",\"seq\":0},"
		"\"runtime_data\":[],\"system_data\":{},\"instance_info\":{\"hostname\":\"h\"},"
		"\"device_data\":[{\"device_type\":\"nvidia\",\"error\":\"\",\"report\":{"
		"\"device_utilization\":{\"period\":1.0,\"timestamp\":\"2026-01-02T03:04:05.000Z\",\"error\":\"\","
		"\"devices\":{\"0\":{\"index\":0,\"uuid\":\"GPU-p\",\"model\":\"NVIDIA H100 80GB HBM3\",\"error\":\"\","
		"\"graphics_active_percent\":64.5,\"tensor_active_percent\":40.25,\"dram_active_percent\":35.0,"
		"\"sm_occupancy_percent\":22.5,\"pcie_tx_bytes_per_second\":536870912},"
		"\"0/9/0\":{\"index\":0,\"uuid\":\"MIG-x\",\"model\":\"NVIDIA H100 80GB HBM3 MIG 1g.10gb\","
		"\"parent_uuid\":\"GPU-p\",\"gpu_instance_id\":9,\"compute_instance_id\":0,\"mig_profile\":\"1g.10gb\","
		"\"error\":\"\",\"graphics_active_percent\":88.0}}},"
		"\"device_memory\":{\"period\":1.0,\"timestamp\":\"2026-01-02T03:04:05.000Z\",\"error\":\"\","
		"\"devices\":{\"0/9/0\":{\"index\":0,\"uuid\":\"MIG-x\",\"model\":\"NVIDIA H100 80GB HBM3 MIG 1g.10gb\","
		"\"parent_uuid\":\"GPU-p\",\"gpu_instance_id\":9,\"compute_instance_id\":0,\"mig_profile\":\"1g.10gb\","
		"\"error\":\"\",\"used_bytes\":13631488}}}}}]}";
#define GL "Hostname=\"h\",UUID=\"GPU-p\",device=\"nvidia0\",gpu=\"0\",modelName=\"NVIDIA H100 80GB HBM3\",pci_bus_id=\"\""
#define ML "GPU_I_ID=\"9\",GPU_I_PROFILE=\"1g.10gb\"," GL
	static const char *const want_mig[] = {
		"gauge DCGM_FI_DEV_FB_USED{" ML "} 13",
		"gauge DCGM_FI_PROF_DRAM_ACTIVE{" GL "} 0.35",
		"gauge DCGM_FI_PROF_GR_ENGINE_ACTIVE{" ML "} 0.88",
		"gauge DCGM_FI_PROF_GR_ENGINE_ACTIVE{" GL "} 0.645",
		"gauge DCGM_FI_PROF_PCIE_TX_BYTES{" GL "} 536870912",
		"gauge DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{" GL "} 0.4025",
		"gauge DCGM_FI_PROF_SM_OCCUPANCY{" GL "} 0.225",
	};
#undef GL
#undef ML
	const char *csv = "DCGM_FI_DEV_FB_USED, gauge, MiB\n"
			  "DCGM_FI_PROF_GR_ENGINE_ACTIVE, gauge, r\nDCGM_FI_PROF_PIPE_TENSOR_ACTIVE, gauge, r\n"
			  "DCGM_FI_PROF_DRAM_ACTIVE, gauge, r\nDCGM_FI_PROF_SM_OCCUPANCY, gauge, r\n"
			  "DCGM_FI_PROF_PCIE_TX_BYTES, gauge, B/s\n";
	char *err = NULL;
	struct got g;
	struct map_cb cb = { .sample = on_sample, .ud = &g };
	json_t *r = json_loads(rep_mig, 0, NULL);

	memset(&g, 0, sizeof(g));
	g.d = prom_dcgm_parse(csv, strlen(csv), "mig.csv", &err);
	ok(r && g.d, "MIG/GPM: the report and the file load (%s)", err ? err : "");
	if (!r || !g.d) {
		free(err);
		json_decref(r);
		return;
	}
	is_int(prom_dcgm_served(g.d), 6, "MIG/GPM: every listed field is served");
	map_report(r, 0, &cb);
	qsort(g.lines, g.n, sizeof(g.lines[0]), cmp_line);
	is_int(g.n, ARRAY_SIZE(want_mig), "MIG/GPM: one DCGM series per value");
	for (size_t i = 0; i < ARRAY_SIZE(want_mig) && i < g.n; i++)
		is_str(g.lines[i], want_mig[i], "MIG/GPM: a DCGM series as dcgm-exporter labels it");
	json_decref(r);
	prom_dcgm_free(g.d);
}

int main(void)
{
	test_default_file();
	test_csv_errors();
	test_mapping();
	test_totals();
	test_mig_prof();
	return done_testing();
}
