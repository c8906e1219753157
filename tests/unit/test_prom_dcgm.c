/* SPDX-License-Identifier: MIT */
/*
 * common/series/prom_dcgm.c: dcgm-exporter's collectors CSV (the default file, and
 * every way a file can be wrong, with file:line), which fields are served
 * and why the others are not, and the DCGM series made of a real report
 * through the common mapping (names, labels, units, counters); the label
 * fields (DCGM_FI_DRIVER_VERSION on every series) and DCGM_FI_DEV_XID_ERRORS
 * with err_code and err_msg, as dcgm-exporter 4.x gives them. The module is
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
	int line = 0;

	snprintf(path, sizeof(path), "%s/tests/fixtures/dcgm/default-counters.csv", top && *top ? top : ".");
	d = prom_dcgm_load(path, &err);
	ok(d != NULL, "dcgm-exporter's default-counters.csv loads");
	if (!d) {
		printf("#   %s\n", err);
		free(err);
		return;
	}
	is_int(d->n, 26, "it lists 26 fields (the others are comments)");
	for (size_t i = 0; (name = prom_dcgm_unsupported(d, i, &why, &line)); i++) {
		printf("# not served: line %d: %s: %s\n", line, name, why);
		if (!strcmp(name, "DCGM_FI_DEV_VGPU_LICENSE_STATUS"))
			is_int(line, 70, "an unserved field is named with the file's line that lists it");
	}
	{
		static const char *const always[] = { "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK",
						      "DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_GPU_TEMP",
						      "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
						      "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_GPU_UTIL",
						      "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_ENC_UTIL",
						      "DCGM_FI_DEV_DEC_UTIL", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED",
						      /* a label on every series; the last Xid, 0 before any */
						      "DCGM_FI_DRIVER_VERSION", "DCGM_FI_DEV_XID_ERRORS",
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
	/*
	 * Served exactly when the report mapping has the family (it grows without this test changing), or, for a
	 * label field, when the report has its value.
	 */
	for (size_t k = 0; k < d->n; k++) {
		const struct dcgm_row *row = NULL;
		const struct label_row *lrow = NULL;
		char what[160];

		for (size_t r = 0; r < ARRAY_SIZE(rows); r++)
			if (!strcmp(rows[r].field, d->f[k].name))
				row = &rows[r];
		for (size_t r = 0; r < ARRAY_SIZE(label_rows); r++)
			if (!strcmp(label_rows[r].field, d->f[k].name))
				lrow = &label_rows[r];
		snprintf(what, sizeof(what), "%s: served exactly when the mapping has %s", d->f[k].name,
			 row ? row->family : lrow ? "its label's value" : "(no row)");
		is_int(d->f[k].served, (row && family_named(row->family) != NULL) || lrow != NULL, what);
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
		is_str(prom_dcgm_unsupported(d, 0, &why, NULL), "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
		       "a counter listed as a gauge...");
		is_str(why, "listed as a gauge; accel-prom can serve it as a counter only", "... is not served, and why");
		is_str(prom_dcgm_unsupported(d, 1, &why, NULL), "DCGM_FI_DEV_POWER_USAGE", "a gauge listed as a counter...");
		is_str(why, "listed as a counter; accel-prom can serve it as a gauge only", "... is not served, and why");
		is_str(prom_dcgm_unsupported(d, 2, &why, NULL), "DCGM_FI_DEV_GPU_TEMP", "a value listed as a label is not served");
		is_str(prom_dcgm_unsupported(d, 3, &why, NULL), "DCGM_FI_DEV_BOGUS_FIELD", "an unknown field is not served");
		ok(prom_dcgm_unsupported(d, 4, &why, NULL) == NULL, "NULL past the last");
		is_int(prom_dcgm_served(d), 1, "one served");
		free(err);
		prom_dcgm_free(d);
	}
	{
		/* Label fields: served when the report has the value, else named with file:line and why. */
		char *err = NULL;
		const char *text = "# dcgm-exporter's static configuration fields\n"
				   "DCGM_FI_DRIVER_VERSION, label, Driver Version\n"
				   "DCGM_FI_DEV_BRAND, label, Device Brand\n"
				   "DCGM_FI_DEV_SERIAL, label, Device Serial Number\n"
				   "DCGM_FI_DEV_VBIOS_VERSION, label, VBIOS version of the device\n"
				   "DCGM_FI_NVML_VERSION, gauge, NVML Version\n"
				   "DCGM_FI_DEV_NAME, label, name\nDCGM_FI_DEV_UUID, label, uuid\n"
				   "DCGM_FI_DEV_PCI_BUSID, label, bus\nDCGM_FI_DEV_OEM_INFOROM_VER, label, OEM\n";
		struct prom_dcgm *d = prom_dcgm_parse(text, strlen(text), "labels.csv", &err);
		const char *why = NULL;
		int line = 0;

		ok(d != NULL, "label fields: the file loads");
		is_int(prom_dcgm_served(d), 5, "label fields: the five the report has are served");
		is_str(prom_dcgm_unsupported(d, 0, &why, &line), "DCGM_FI_DEV_BRAND", "DCGM_FI_DEV_BRAND is not served...");
		is_int(line, 3, "... named at its line (labels.csv:3)");
		ok(why && strstr(why, "a label field the report has no value for"), "... because the report has no brand");
		is_str(prom_dcgm_unsupported(d, 1, &why, &line), "DCGM_FI_DEV_VBIOS_VERSION", "nor the VBIOS version...");
		is_int(line, 5, "... at labels.csv:5");
		is_str(prom_dcgm_unsupported(d, 2, &why, &line), "DCGM_FI_NVML_VERSION", "a text field listed as a gauge...");
		is_int(line, 6, "... at labels.csv:6");
		is_str(why, "listed as a gauge; a text field, served as a label only", "... is not served, and why");
		is_str(prom_dcgm_unsupported(d, 3, &why, &line), "DCGM_FI_DEV_OEM_INFOROM_VER", "no inforom version");
		is_int(line, 10, "... at labels.csv:10");
		ok(prom_dcgm_unsupported(d, 4, &why, &line) == NULL, "label fields: nothing else refused");
		free(err);
		prom_dcgm_free(d);
	}
	{
		char *err = NULL;
		const char *text = "DCGM_FI_DEV_XID_ERRORS, counter, Value of the last XID error encountered.\n";
		struct prom_dcgm *d = prom_dcgm_parse(text, strlen(text), "x.csv", &err);
		const char *why = NULL;

		is_str(prom_dcgm_unsupported(d, 0, &why, NULL), "DCGM_FI_DEV_XID_ERRORS", "the last Xid as a counter...");
		is_str(why, "listed as a counter; accel-prom can serve it as a gauge only", "... is refused: it is a gauge");
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
	"\"device_info\":{\"period\":1.0,\"timestamp\":\"2026-01-02T03:04:05.000Z\",\"error\":\"\",\"devices\":{"
	"\"0\":{\"index\":0,\"uuid\":\"GPU-a\",\"pci_bus_id\":\"00000000:18:00.0\",\"model\":\"NVIDIA H100 80GB HBM3\","
	"\"error\":\"\",\"serial\":\"1650123456789\",\"driver_version\":\"580.95.05\",\"nvml_version\":\"12.580.95.05\"}}},"
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

/*
 * What the default file gives for that report, in this build, sorted ("counter"/"gauge" first): the driver
 * version label on every series (its DCGM_FI_DRIVER_VERSION label row), the last Xid 0 with "No Error".
 */
#define L0 "DCGM_FI_DRIVER_VERSION=\"580.95.05\",Hostname=\"gpu-host-1\",UUID=\"GPU-a\",device=\"nvidia0\","
#define L1 "gpu=\"0\",instance_id=\"i-0123\",instance_type=\"p5.48xlarge\",modelName=\"NVIDIA H100 80GB HBM3\"," \
	   "pci_bus_id=\"00000000:18:00.0\""
#define L L0 L1
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
	"gauge DCGM_FI_DEV_XID_ERRORS{" L0 "err_code=\"0\",err_msg=\"No Error\"," L1 "} 0",
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
	prom_dcgm_report(g.d, r);
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

/* ---- the last Xid and the label fields ------------------------------------ */

/*
 * A report of one NVIDIA L40S, GPU 0 ("GPU-x"), and a MIG instance of it:
 * device_info (driver info, a JSON member list, or none when NULL), the
 * power of the GPU, the MIG instance's memory, and device_errors (its
 * members after the identity, or none when NULL).
 */
static json_t *xid_report(const char *info, const char *errors)
{
	char text[4096], gi[512], ge[512];
#define ID "\"index\":0,\"uuid\":\"GPU-x\",\"pci_bus_id\":\"00000000:01:00.0\",\"model\":\"NVIDIA L40S\",\"error\":\"\""
#define GRP "\"period\":1.0,\"timestamp\":\"2026-01-02T03:04:05.000Z\",\"error\":\"\",\"devices\":"
	snprintf(gi, sizeof(gi), "\"device_info\":{" GRP "{\"0\":{" ID "%s}}},", info ? info : "");
	snprintf(ge, sizeof(ge), ",\"device_errors\":{" GRP "{\"0\":{" ID "%s}}}", errors ? errors : "");
	snprintf(text, sizeof(text),
		 "{\"timestamp\":\"2026-01-02T03:04:05.000Z\",\"monitor\":{\"version\":\"0.1.0\",\"seq\":0},"
		 "\"runtime_data\":[],\"system_data\":{},\"instance_info\":{\"hostname\":\"h\"},"
		 "\"device_data\":[{\"device_type\":\"nvidia\",\"error\":\"\",\"report\":{%s"
		 "\"device_power\":{" GRP "{\"0\":{" ID ",\"power_watts\":72.5}}},"
		 "\"device_memory\":{" GRP "{\"0/1/0\":{\"index\":0,\"uuid\":\"MIG-y\",\"model\":\"NVIDIA L40S MIG 1g.12gb\","
		 "\"parent_uuid\":\"GPU-x\",\"gpu_instance_id\":1,\"compute_instance_id\":0,\"mig_profile\":\"1g.12gb\","
		 "\"error\":\"\",\"used_bytes\":1048576}}}%s}}]}",
		 info ? gi : "", errors ? ge : "");
#undef ID
#undef GRP
	return json_loads(text, 0, NULL);
}

/* Feed report r (consumed) to g's object as accel-prom does (what the report says first, then its samples). */
static void feed(struct got *g, json_t *r)
{
	struct map_cb cb = { .sample = on_sample, .ud = g };

	g->n = 0;
	prom_dcgm_report(g->d, r);
	map_report(r, 0, &cb);
	qsort(g->lines, g->n, sizeof(g->lines[0]), cmp_line);
	json_decref(r);
}

/* The lines of g that hold needle: how many, and the first in *first (or NULL). */
static size_t lines_with(const struct got *g, const char *needle, const char **first)
{
	size_t n = 0;

	*first = NULL;
	for (size_t i = 0; i < g->n; i++)
		if (strstr(g->lines[i], needle) && !n++)
			*first = g->lines[i];
	return n;
}

#define XL "Hostname=\"h\",UUID=\"GPU-x\",device=\"nvidia0\""
#define XR "gpu=\"0\",modelName=\"NVIDIA L40S\",pci_bus_id=\"00000000:01:00.0\""

/*
 * DCGM_FI_DEV_XID_ERRORS as dcgm-exporter 4.x: 0 with err_code="0" and
 * err_msg="No Error" until an Xid, then the last Xid with its code and
 * NVIDIA's name; "Unknown Error" for a code past the catalog, as
 * dcgm-exporter says. One series per report that has the GPU's
 * device_errors, however many samples the GPU has; none for a MIG instance.
 */
static void test_xid(void)
{
	static const struct {
		int xid;
		const char *msg;
	} xids[] = {
		{ 79, "GPU has fallen off the bus" }, { 48, "Double Bit ECC Error" }, { 13, "Graphics Engine Exception" },
		{ 31, "GPU memory page fault" },      { 43, "GPU stopped processing" }, { 94, "Contained ECC error" },
		{ 95, "Uncontained ECC error" },      { 119, "GSP RPC Timeout" },       { 120, "GSP Error" },
		{ 999, "Unknown Error" },
	};
	const char *csv = "DCGM_FI_DEV_POWER_USAGE, gauge, W\nDCGM_FI_DEV_FB_USED, gauge, MiB\n"
			  "DCGM_FI_DEV_PCIE_REPLAY_COUNTER, counter, n\nDCGM_FI_DEV_ECC_SBE_VOL_TOTAL, counter, n\n"
			  "DCGM_FI_DEV_XID_ERRORS, gauge, Value of the last XID error encountered.\n";
	char *err = NULL, expect[512], members[128], what[160];
	const char *line;
	struct got g;

	memset(&g, 0, sizeof(g));
	g.d = prom_dcgm_parse(csv, strlen(csv), "xid.csv", &err);
	ok(g.d && prom_dcgm_served(g.d) == 5, "Xid: the file loads, every field served");
	if (!g.d) {
		free(err);
		return;
	}
	/* Before any Xid: 0, "No Error"; once, though device_errors gives the GPU two samples. */
	feed(&g, xid_report(NULL, ",\"ecc_errors\":{\"corrected\":1,\"uncorrected\":0},\"pcie_replays\":2"));
	is_int(lines_with(&g, "DCGM_FI_DEV_XID_ERRORS{", &line), 1, "Xid: one series of the GPU before any Xid");
	is_str(line, "gauge DCGM_FI_DEV_XID_ERRORS{" XL ",err_code=\"0\",err_msg=\"No Error\"," XR "} 0",
	       "Xid: 0 with err_code=\"0\", err_msg=\"No Error\" before any Xid");
	is_int(lines_with(&g, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER{", &line), 1, "Xid: the other series are made as before");
	ok(line && !strstr(line, "err_code"), "Xid: err_code and err_msg are on the Xid series only");
	is_int(lines_with(&g, "GPU_I_ID", &line), 1, "Xid: the MIG instance has its series (memory)...");
	ok(line && !strstr(line, "XID"), "... but no Xid series of its own");
	/* Each Xid: its code, and NVIDIA's name of it. */
	for (size_t i = 0; i < ARRAY_SIZE(xids); i++) {
		snprintf(members, sizeof(members), ",\"last_xid\":%d,\"last_xid_time\":\"2026-01-02T03:04:05Z\"", xids[i].xid);
		feed(&g, xid_report(NULL, members));
		snprintf(expect, sizeof(expect),
			 "gauge DCGM_FI_DEV_XID_ERRORS{" XL ",err_code=\"%d\",err_msg=\"%s\"," XR "} %d", xids[i].xid,
			 xids[i].msg, xids[i].xid);
		snprintf(what, sizeof(what), "Xid %d: one series, err_code=\"%d\", err_msg=\"%s\"", xids[i].xid,
			 xids[i].xid, xids[i].msg);
		is_int(lines_with(&g, "DCGM_FI_DEV_XID_ERRORS{", &line), 1, what);
		is_str(line, expect, what);
	}
	/* Not made from a report without the GPU's device_errors, or with the GPU in error there. */
	feed(&g, xid_report(NULL, NULL));
	is_int(lines_with(&g, "DCGM_FI_DEV_XID_ERRORS{", &line), 0, "Xid: no series from a report without device_errors");
	ok(lines_with(&g, "DCGM_FI_DEV_POWER_USAGE{", &line) == 1, "... whose other series are made");
	{
		json_t *r = xid_report(NULL, "");

		json_object_set_new(json_object_get(json_object_get(json_object_get(json_object_get(
					    json_array_get(json_object_get(r, "device_data"), 0), "report"),
									   "device_errors"),
							    "devices"),
					    "0"),
				    "error", json_string("GPU is lost"));
		feed(&g, r);
		is_int(lines_with(&g, "DCGM_FI_DEV_XID_ERRORS{", &line), 0, "Xid: no series for a GPU in error");
	}
	feed(&g, xid_report(NULL, ",\"last_xid\":\"79\""));
	is_int(lines_with(&g, "DCGM_FI_DEV_XID_ERRORS{", &line), 0, "Xid: no series from a last_xid that is no code");
	prom_dcgm_free(g.d);
	free(err);
}

/* NVIDIA's Xid catalog: one name per code 0..172; none past it. */
static void test_xid_catalog(void)
{
	size_t named = 0;

	for (long long c = 0; c <= 172; c++)
		named += nvidia_xid_name(c) && *nvidia_xid_name(c);
	is_int(named, 173, "the catalog names every Xid from 0 to 172");
	ok(nvidia_xid_name(173) == NULL && nvidia_xid_name(-1) == NULL, "none past the catalog, none negative");
	is_str(nvidia_xid_name(0), "No Error", "0: no Xid yet");
	is_str(nvidia_xid_name(109), "Context Switch Timeout Error", "109, as dcgm-exporter 4.x spells it");
	is_str(nvidia_xid_name(5), "Unused", "a code NVIDIA lists as unused");
}

/*
 * The label fields: DCGM_FI_DRIVER_VERSION (device_info's driver_version)
 * and the others the report has, on every series of the GPU, the Xid's and
 * its MIG instance's included; gone when a later device_info lacks it.
 */
static void test_labels(void)
{
	const char *csv = "DCGM_FI_DEV_POWER_USAGE, gauge, W\nDCGM_FI_DEV_FB_USED, gauge, MiB\n"
			  "DCGM_FI_DEV_XID_ERRORS, gauge, x\nDCGM_FI_DRIVER_VERSION, label, Driver Version\n";
	const char *csv_all = "DCGM_FI_DEV_POWER_USAGE, gauge, W\nDCGM_FI_DRIVER_VERSION, label, d\n"
			      "DCGM_FI_NVML_VERSION, label, n\nDCGM_FI_DEV_SERIAL, label, s\nDCGM_FI_DEV_NAME, label, m\n"
			      "DCGM_FI_DEV_UUID, label, u\nDCGM_FI_DEV_PCI_BUSID, label, b\n";
	static const char info[] = ",\"serial\":\"1322021000000\",\"driver_version\":\"580.95.05\","
				   "\"nvml_version\":\"12.580.95.05\",\"cuda_driver_version\":\"13.0\"";
	char *err = NULL;
	const char *line;
	struct got g;
	size_t with = 0;

	memset(&g, 0, sizeof(g));
	g.d = prom_dcgm_parse(csv, strlen(csv), "l.csv", &err);
	ok(g.d && prom_dcgm_served(g.d) == 4, "labels: the file loads, DCGM_FI_DRIVER_VERSION served");
	if (!g.d) {
		free(err);
		return;
	}
	feed(&g, xid_report(info, ""));
	is_int(g.n, 3, "labels: the GPU's power, its MIG instance's memory, the Xid");
	for (size_t i = 0; i < g.n; i++)
		with += strstr(g.lines[i], "{DCGM_FI_DRIVER_VERSION=\"580.95.05\",") != NULL;
	is_int(with, g.n, "labels: DCGM_FI_DRIVER_VERSION=\"580.95.05\" on every series");
	is_str(g.lines[1], "gauge DCGM_FI_DEV_POWER_USAGE{DCGM_FI_DRIVER_VERSION=\"580.95.05\"," XL "," XR "} 72.5",
	       "labels: the GPU's series with its driver version");
	is_str(g.lines[2],
	       "gauge DCGM_FI_DEV_XID_ERRORS{DCGM_FI_DRIVER_VERSION=\"580.95.05\"," XL
	       ",err_code=\"0\",err_msg=\"No Error\"," XR "} 0",
	       "labels: the Xid series with the driver version, err_code and err_msg");
	/* device_info not due in this report: the label kept. */
	feed(&g, xid_report(NULL, ""));
	ok(g.n == 3 && lines_with(&g, "DCGM_FI_DRIVER_VERSION=\"580.95.05\"", &line) == 3,
	   "labels: kept while device_info is not in the report");
	/* A device_info without the driver version: no label, as dcgm-exporter leaves out a blank one. */
	feed(&g, xid_report(",\"serial\":\"1322021000000\"", ""));
	ok(g.n == 3 && lines_with(&g, "DCGM_FI_DRIVER_VERSION", &line) == 0,
	   "labels: gone when the GPU's device_info has no driver version");
	prom_dcgm_free(g.d);
	free(err);
	/* Every label field the report has. */
	memset(&g, 0, sizeof(g));
	g.d = prom_dcgm_parse(csv_all, strlen(csv_all), "all.csv", &err);
	ok(g.d && prom_dcgm_served(g.d) == 7, "labels: all six label fields served");
	if (!g.d) {
		free(err);
		return;
	}
	feed(&g, xid_report(info, NULL));
	is_int(g.n, 1, "labels: the power series");
	is_str(g.lines[0],
	       "gauge DCGM_FI_DEV_POWER_USAGE{DCGM_FI_DEV_NAME=\"NVIDIA L40S\",DCGM_FI_DEV_PCI_BUSID=\"00000000:01:00.0\","
	       "DCGM_FI_DEV_SERIAL=\"1322021000000\",DCGM_FI_DEV_UUID=\"GPU-x\",DCGM_FI_DRIVER_VERSION=\"580.95.05\","
	       "DCGM_FI_NVML_VERSION=\"12.580.95.05\"," XL "," XR "} 72.5",
	       "labels: name, bus, serial, UUID, driver and NVML versions, each as its field");
	prom_dcgm_free(g.d);
	free(err);
}
#undef XL
#undef XR

/*
 * --kubernetes-enable-pod-uid: a process's pod UID (its container's
 * pod_uid; the key of a pod-level process's sum) and an allocation owner's
 * pod_uid as dcgm-exporter's pod_uid label, beside pod, only when on; an
 * owner the producer knew no UID for has none.
 */
static void test_pod_uid(void)
{
	static const char text[] =
		"{\"timestamp\":\"2026-01-02T03:04:05.000Z\",\"monitor\":{\"version\":\"0.1.0\",\"seq\":0,"
		"\"format_version\":3},\"runtime_data\":[],\"system_data\":{},\"instance_info\":{\"hostname\":\"h\"},"
		"\"identities\":{\"containers\":{\"c1\":{\"runtime\":\"containerd\",\"pod_uid\":\"aa-11\",\"name\":\"app\","
		"\"pids\":[11]}},\"pods\":{\"aa-11\":{\"pod\":\"web\",\"namespace\":\"prod\"}},\"processes\":{}},"
		"\"allocations\":{\"error\":\"\",\"devices\":{\"nvidia\":{\"1\":["
		"{\"namespace\":\"ml\",\"pod\":\"train\",\"container\":\"main\",\"pod_uid\":\"bb-22\"},"
		"{\"namespace\":\"ml\",\"pod\":\"ghost\",\"container\":\"c\"}]}}},"
		"\"device_data\":[{\"device_type\":\"nvidia\",\"error\":\"\",\"report\":{"
		"\"device_memory\":{\"period\":1.0,\"timestamp\":\"2026-01-02T03:04:05.000Z\",\"error\":\"\",\"devices\":{"
		"\"0\":{\"index\":0,\"uuid\":\"GPU-x\",\"error\":\"\",\"used_bytes\":1048576,\"processes\":{\"11\":1048576}},"
		"\"1\":{\"index\":1,\"uuid\":\"GPU-y\",\"error\":\"\",\"used_bytes\":0}}}}}]}";
	struct got g;
	const char *line;
	char *err = NULL;

	for (int on = 0; on <= 1; on++) {
		json_t *r = json_loads(text, 0, NULL);

		memset(&g, 0, sizeof(g));
		g.d = prom_dcgm_parse("DCGM_FI_DEV_FB_USED, gauge, used\n", 33, "fb.csv", &err);
		if (!ok(r && g.d, "pod_uid: the report and the file load")) {
			json_decref(r);
			free(err);
			return;
		}
		prom_dcgm_set_pod_uid(g.d, on);
		report_derive(r); /* the sums of format 3, as the stream reader makes them */
		feed(&g, r);
		is_int(lines_with(&g, "DCGM_FI_DEV_FB_USED{", &line), 3,
		       on ? "pod_uid on: one series per user" : "pod_uid off: one series per user");
		if (on) {
			is_int(lines_with(&g, "namespace=\"prod\",pci_bus_id=\"\",pod=\"web\",pod_uid=\"aa-11\"", &line), 1,
			       "pod_uid on: a process's pod UID, from its container's identity");
			is_int(lines_with(&g, "pod=\"train\",pod_uid=\"bb-22\"", &line), 1,
			       "pod_uid on: an allocation owner's pod UID");
			is_int(lines_with(&g, "pod_uid=", &line), 2, "pod_uid on: none for an owner of no known UID");
		} else {
			is_int(lines_with(&g, "pod_uid=", &line), 0, "pod_uid off (the default): no pod_uid label");
		}
		prom_dcgm_free(g.d);
	}
}

int main(void)
{
	test_default_file();
	test_csv_errors();
	test_mapping();
	test_totals();
	test_mig_prof();
	test_xid();
	test_xid_catalog();
	test_labels();
	test_pod_uid();
	return done_testing();
}
