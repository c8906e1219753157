/* SPDX-License-Identifier: MIT */
/*
 * dcgm-exporter's collectors CSV and the DCGM_FI_* series made of NVIDIA
 * device samples; see prom_dcgm.h. The table below is the whole mapping: a
 * DCGM field, the type dcgm-exporter gives it, the accelerator_* family
 * (and label) it is made of, and the scale to dcgm-exporter's unit. A row
 * whose family the report mapping (common/samples.c) does not produce in
 * this build is listed as not served, with the family it waits for.
 *
 * A MIG instance's samples (NVIDIA MIG and GPM) carry
 * dcgm-exporter's GPU_I_ID and GPU_I_PROFILE labels, with the parent GPU's
 * index and UUID in gpu and UUID, as dcgm-exporter labels a GPU instance.
 *
 * Fields listed as "label" (label_rows) are labels on every DCGM series of
 * the GPU, named as the field, valued from the GPU's device_info (learnt
 * by prom_dcgm_report) or its identity. DCGM_FI_DEV_XID_ERRORS is the last
 * Xid of the GPU's device_errors, 0 before any, with dcgm-exporter's
 * err_code and err_msg (nvidia_xid.h) labels: made once per report, from
 * the report, on the first sample of the GPU.
 */
#include "prom_dcgm.h"
#include "nvidia_xid.h"
#include "../derive.h"
#include "../log.h"
#include "../samples.h"
#include "../util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How the DCGM value is made of the family's samples. */
enum src_kind {
	SRC_GAUGE,     /* a gauge: value x scale */
	SRC_INCREMENT, /* a counter family: per-period increments x scale */
	SRC_TOTAL,     /* a gauge holding a running total: as a gauge, or turned into increments */
	SRC_XID,       /* the GPU's last Xid from the report (prom_dcgm_report), 0 before any */
};

struct dcgm_row {
	const char *field;
	enum metric_type type; /* what dcgm-exporter's default file gives it */
	const char *family;    /* the accelerator_* family */
	const char *label;     /* "name=value" the sample must carry, or NULL */
	double scale;
	enum src_kind src;
};

#define MIB (1.0 / 1048576.0)

static const struct dcgm_row rows[] = {
	{ "DCGM_FI_DEV_SM_CLOCK", METRIC_GAUGE, "accelerator_clock_hertz", "clock=sm", 1e-6, SRC_GAUGE },
	{ "DCGM_FI_DEV_MEM_CLOCK", METRIC_GAUGE, "accelerator_clock_hertz", "clock=memory", 1e-6, SRC_GAUGE },
	{ "DCGM_FI_DEV_VIDEO_CLOCK", METRIC_GAUGE, "accelerator_clock_hertz", "clock=video", 1e-6, SRC_GAUGE },
	{ "DCGM_FI_DEV_GPU_TEMP", METRIC_GAUGE, "accelerator_temperature_celsius", "sensor=gpu", 1, SRC_GAUGE },
	{ "DCGM_FI_DEV_MEMORY_TEMP", METRIC_GAUGE, "accelerator_temperature_celsius", "sensor=memory", 1, SRC_GAUGE },
	{ "DCGM_FI_DEV_POWER_USAGE", METRIC_GAUGE, "accelerator_power_watts", NULL, 1, SRC_GAUGE },
	{ "DCGM_FI_DEV_ENFORCED_POWER_LIMIT", METRIC_GAUGE, "accelerator_power_limit_watts", NULL, 1, SRC_GAUGE },
	{ "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", METRIC_COUNTER, "accelerator_energy_joules_total", NULL, 1000,
	  SRC_INCREMENT },
	{ "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", METRIC_COUNTER, "accelerator_pcie_replays_total", NULL, 1, SRC_INCREMENT },
	{ "DCGM_FI_DEV_GPU_UTIL", METRIC_GAUGE, "accelerator_utilization_ratio", "engine=core", 100, SRC_GAUGE },
	{ "DCGM_FI_DEV_MEM_COPY_UTIL", METRIC_GAUGE, "accelerator_utilization_ratio", "engine=memory_bandwidth", 100,
	  SRC_GAUGE },
	{ "DCGM_FI_DEV_ENC_UTIL", METRIC_GAUGE, "accelerator_utilization_ratio", "engine=encoder", 100, SRC_GAUGE },
	{ "DCGM_FI_DEV_DEC_UTIL", METRIC_GAUGE, "accelerator_utilization_ratio", "engine=decoder", 100, SRC_GAUGE },
	{ "DCGM_FI_DEV_FB_TOTAL", METRIC_GAUGE, "accelerator_memory_total_bytes", NULL, MIB, SRC_GAUGE },
	{ "DCGM_FI_DEV_FB_USED", METRIC_GAUGE, "accelerator_memory_used_bytes", NULL, MIB, SRC_GAUGE },
	{ "DCGM_FI_DEV_FB_FREE", METRIC_GAUGE, "accelerator_memory_free_bytes", NULL, MIB, SRC_GAUGE },
	{ "DCGM_FI_DEV_FB_RESERVED", METRIC_GAUGE, "accelerator_memory_reserved_bytes", NULL, MIB, SRC_GAUGE },
	{ "DCGM_FI_DEV_FAN_SPEED", METRIC_GAUGE, "accelerator_fan_speed_ratio", NULL, 100, SRC_GAUGE },
	{ "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", METRIC_COUNTER, "accelerator_ecc_errors_total", "type=corrected", 1,
	  SRC_INCREMENT },
	{ "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", METRIC_COUNTER, "accelerator_ecc_errors_total", "type=uncorrected", 1,
	  SRC_INCREMENT },
	/* Its value and err_code/err_msg come from device_errors in the report, 0 ("No Error") until an Xid. */
	{ "DCGM_FI_DEV_XID_ERRORS", METRIC_GAUGE, "accelerator_last_xid", NULL, 1, SRC_XID },
	{ "DCGM_FI_PROF_PCIE_TX_BYTES", METRIC_GAUGE, "accelerator_pcie_throughput_bytes_per_second", "direction=tx", 1,
	  SRC_GAUGE },
	{ "DCGM_FI_PROF_PCIE_RX_BYTES", METRIC_GAUGE, "accelerator_pcie_throughput_bytes_per_second", "direction=rx", 1,
	  SRC_GAUGE },
	{ "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", METRIC_COUNTER, "accelerator_remapped_rows", "type=correctable", 1,
	  SRC_TOTAL },
	{ "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", METRIC_COUNTER, "accelerator_remapped_rows",
	  "type=uncorrectable", 1, SRC_TOTAL },
	{ "DCGM_FI_DEV_ROW_REMAP_FAILURE", METRIC_GAUGE, "accelerator_row_remap_failed", NULL, 1, SRC_GAUGE },
	{ "DCGM_FI_DEV_ROW_REMAP_PENDING", METRIC_GAUGE, "accelerator_row_remap_pending", NULL, 1, SRC_GAUGE },
	/*
	 * NVLink error totals over all links. Every link's increment feeds the one DCGM series of the GPU (the
	 * store adds a counter's increments), so the series is the all-link sum, as DCGM's field is.
	 */
	{ "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", METRIC_COUNTER, "accelerator_nvlink_errors_total",
	  "type=crc_flit", 1, SRC_INCREMENT },
	{ "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", METRIC_COUNTER, "accelerator_nvlink_errors_total",
	  "type=crc_data", 1, SRC_INCREMENT },
	{ "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", METRIC_COUNTER, "accelerator_nvlink_errors_total", "type=replay",
	  1, SRC_INCREMENT },
	{ "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", METRIC_COUNTER, "accelerator_nvlink_errors_total",
	  "type=recovery", 1, SRC_INCREMENT },
	/* NVIDIA MIG and GPM: DCGM's profiling fields, which DCGM computes from GPM on Hopper */
	{ "DCGM_FI_PROF_GR_ENGINE_ACTIVE", METRIC_GAUGE, "accelerator_activity_ratio", "engine=graphics", 1, SRC_GAUGE },
	{ "DCGM_FI_PROF_SM_ACTIVE", METRIC_GAUGE, "accelerator_activity_ratio", "engine=sm", 1, SRC_GAUGE },
	{ "DCGM_FI_PROF_SM_OCCUPANCY", METRIC_GAUGE, "accelerator_sm_occupancy_ratio", NULL, 1, SRC_GAUGE },
	{ "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", METRIC_GAUGE, "accelerator_activity_ratio", "engine=tensor", 1, SRC_GAUGE },
	{ "DCGM_FI_PROF_DRAM_ACTIVE", METRIC_GAUGE, "accelerator_activity_ratio", "engine=dram", 1, SRC_GAUGE },
	{ "DCGM_FI_PROF_PIPE_FP64_ACTIVE", METRIC_GAUGE, "accelerator_activity_ratio", "engine=fp64", 1, SRC_GAUGE },
	{ "DCGM_FI_PROF_PIPE_FP32_ACTIVE", METRIC_GAUGE, "accelerator_activity_ratio", "engine=fp32", 1, SRC_GAUGE },
	{ "DCGM_FI_PROF_PIPE_FP16_ACTIVE", METRIC_GAUGE, "accelerator_activity_ratio", "engine=fp16", 1, SRC_GAUGE },
	{ "DCGM_FI_PROF_NVLINK_TX_BYTES", METRIC_GAUGE, "accelerator_nvlink_total_throughput_bytes_per_second",
	  "direction=tx", 1, SRC_GAUGE },
	{ "DCGM_FI_PROF_NVLINK_RX_BYTES", METRIC_GAUGE, "accelerator_nvlink_total_throughput_bytes_per_second",
	  "direction=rx", 1, SRC_GAUGE },
};

/*
 * dcgm-exporter's label fields (listed with the type "label") that the
 * report gives: each DCGM series of the GPU carries the label
 * FIELD="value". The value is the GPU's device_info field info_key (the
 * latest device_info of the GPU), or the DCGM sample's own label out_label.
 */
struct label_row {
	const char *field;
	const char *info_key;  /* device_info's field, or NULL */
	const char *out_label; /* else this label of the DCGM series (gpu, UUID, ...) */
};

static const struct label_row label_rows[] = {
	{ "DCGM_FI_DRIVER_VERSION", "driver_version", NULL }, /* nvmlSystemGetDriverVersion: "580.95.05" */
	{ "DCGM_FI_NVML_VERSION", "nvml_version", NULL },      /* nvmlSystemGetNVMLVersion: "12.580.95.05" */
	{ "DCGM_FI_DEV_SERIAL", "serial", NULL },              /* nvmlDeviceGetSerial */
	{ "DCGM_FI_DEV_NAME", NULL, "modelName" },
	{ "DCGM_FI_DEV_UUID", NULL, "UUID" },
	{ "DCGM_FI_DEV_PCI_BUSID", NULL, "pci_bus_id" },
};

/* The most label fields a file can have served: each at most once. */
#define LABEL_FIELDS_MAX ARRAY_SIZE(label_rows)

/* Fields no row serves, by prefix, with the reason given at start. */
static const struct {
	const char *prefix;
	const char *why;
} unserved[] = {
	{ "DCGM_FI_PROF_", "a DCGM profiling (DCP) field NVML's GPM metrics do not give (docs/nvidia.md)" },
	/*
	 * NVLink bandwidth is per link and direction in accelerator_nvlink_throughput_bytes_per_second; the
	 * GPU's total over its links (GPM) is DCGM_FI_PROF_NVLINK_{TX,RX}_BYTES above.
	 */
	{ "DCGM_FI_DEV_NVLINK_", "NVLink bandwidth is served per link and direction as "
				 "accelerator_nvlink_throughput_bytes_per_second (docs/nvidia.md), not as DCGM's fields" },
	{ "DCGM_FI_DEV_VGPU_", "vGPU fields are not collected" },
	{ "DCGM_FI_DEV_ECC_", "only the volatile single/double-bit totals are served" },
	{ "DCGM_FI_DEV_RETIRED_", "the report mapping has retired pages as one total, not by cause" },
	{ "DCGM_EXP_", "computed by dcgm-exporter itself" },
	{ "DCGM_FI_", "not a field accel-prom can make of NVML's values" },
};

/* A listed field. */
struct dfield {
	char *name;
	char *help;
	enum metric_type type;
	int served;
	const char *why;           /* when not served (static text) */
	char whybuf[96];           /* or this, when the reason names the listed type */
	const struct dcgm_row *row;
	const struct label_row *lrow; /* a label field's, when served (row is NULL then) */
	int line;                  /* where the file lists it */
	const struct family *src;  /* the mapping's family it is made of */
	char lname[32], lvalue[32]; /* the row's label, split */
	struct family fam;         /* what the store renders */
};

/* Last total seen per (field, host, gpu), for SRC_TOTAL rows served as counters. */
struct last_total {
	size_t field;
	char key[192];
	double v;
};

#define LAST_MAX 4096

struct prom_dcgm {
	struct dfield *f;
	size_t n;
	struct last_total *last;
	size_t nlast, alast;
	char devname[40];
	json_t *users;             /* containers: {"<GPU uuid>": [[pod, namespace, container], ...]} */
	/*
	 * What the reports say of each GPU beyond its samples: {"<GPU uuid>":
	 * {"labels": {device_info field: value}, "xid": last Xid, "xid_seq": the
	 * report that gave it, -1 once served}}.
	 */
	json_t *gpus;
	json_int_t seq;            /* reports seen by prom_dcgm_report */
	int pod_uid;               /* --kubernetes-enable-pod-uid: the users' pod_uid label too */
	size_t xid;                /* the served DCGM_FI_DEV_XID_ERRORS field, or SIZE_MAX */
	char xid_code[24];         /* err_code of the series being made */
};

/* ---- the CSV ------------------------------------------------------------- */

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

/*
 * Split one CSV line in place into at most max fields (double quotes as in
 * RFC 4180, "" inside quotes for a quote), each trimmed of spaces as
 * dcgm-exporter trims them. Returns the number of fields, or -1 for an
 * unterminated quote.
 */
static int split_csv(char *line, char **out, int max)
{
	char *p = line;
	int n = 0;

	for (;;) {
		char *field, *w;
		int last;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '"') {
			field = w = ++p;
			for (;;) {
				if (!*p)
					return -1;
				if (*p == '"' && p[1] == '"') {
					*w++ = '"';
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					*w++ = *p++;
				}
			}
			while (*p && *p != ',')
				p++; /* text between the closing quote and the comma is dropped */
			last = !*p;
			*w = 0;
		} else {
			field = p;
			while (*p && *p != ',')
				p++;
			last = !*p;
			*p = 0;
		}
		if (n < max)
			out[n] = trim(field);
		n++;
		if (last)
			return n;
		p++;
	}
}

static int valid_name(const char *s)
{
	if (strncmp(s, "DCGM_FI_", 8) && strncmp(s, "DCGM_EXP_", 9))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

#ifdef UNITTEST
/* The unit test adds families the report mapping does not produce yet (NULL-terminated). */
static const struct family *const *extra_families;
#endif

static const struct family *family_named(const char *name)
{
	const struct family *f = map_family(name);

	if (f)
		return f;
#ifdef UNITTEST
	for (size_t i = 0; extra_families && extra_families[i]; i++)
		if (!strcmp(extra_families[i]->name, name))
			return extra_families[i];
#endif
	return NULL;
}

/* Decide whether label field f (of label row lrow, or NULL) is served. */
static void resolve_label(struct dfield *f, const struct label_row *lrow, const char *type_name)
{
	if (!lrow) {
		f->why = "a label field the report has no value for (the label fields served: DCGM_FI_DRIVER_VERSION, "
			 "DCGM_FI_NVML_VERSION, DCGM_FI_DEV_SERIAL, DCGM_FI_DEV_NAME, DCGM_FI_DEV_UUID, "
			 "DCGM_FI_DEV_PCI_BUSID)";
		return;
	}
	if (strcmp(type_name, "label")) {
		snprintf(f->whybuf, sizeof(f->whybuf), "listed as a %s; a text field, served as a label only", type_name);
		return;
	}
	f->lrow = lrow;
	f->served = 1;
}

/* Decide whether field f is served and from what. */
static void resolve(struct dfield *f, const char *type_name)
{
	const struct dcgm_row *row = NULL;
	const struct label_row *lrow = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		if (!strcmp(rows[i].field, f->name))
			row = &rows[i];
	for (size_t i = 0; i < ARRAY_SIZE(label_rows); i++)
		if (!strcmp(label_rows[i].field, f->name))
			lrow = &label_rows[i];
	f->served = 0;
	if (lrow || (!row && !strcmp(type_name, "label"))) {
		resolve_label(f, lrow, type_name);
		return;
	}
	if (!row) {
		for (size_t i = 0; i < ARRAY_SIZE(unserved); i++)
			if (!strncmp(f->name, unserved[i].prefix, strlen(unserved[i].prefix))) {
				f->why = unserved[i].why;
				return;
			}
		f->why = "not a field accel-prom can make of NVML's values";
		return;
	}
	if (strcmp(type_name, "gauge") && strcmp(type_name, "counter")) {
		f->why = "accel-prom serves it as a gauge or a counter only";
		return;
	}
	if (((row->src == SRC_GAUGE || row->src == SRC_XID) && f->type != METRIC_GAUGE) ||
	    (row->src == SRC_INCREMENT && f->type != METRIC_COUNTER)) {
		snprintf(f->whybuf, sizeof(f->whybuf), "listed as a %s; accel-prom can serve it as a %s only",
			 type_name, row->src == SRC_INCREMENT ? "counter" : "gauge");
		return;
	}
	f->src = family_named(row->family);
	if (!f->src) {
		f->why = "its source family is not produced by this build's report mapping (see docs/nvidia.md)";
		return;
	}
	f->row = row;
	if (row->label) {
		const char *eq = strchr(row->label, '=');

		snprintf(f->lname, sizeof(f->lname), "%.*s", (int)(eq - row->label), row->label);
		snprintf(f->lvalue, sizeof(f->lvalue), "%s", eq + 1);
	}
	f->fam = (struct family){ f->name, f->help, f->type, "" };
	f->served = 1;
}

static struct prom_dcgm *parse_fail(struct prom_dcgm *d, char **err, const char *name, int line, const char *fmt,
				    ...) __attribute__((format(printf, 5, 6)));
static struct prom_dcgm *parse_fail(struct prom_dcgm *d, char **err, const char *name, int line, const char *fmt,
				    ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		*err = xasprintf("%s:%d: %s", name, line, msg);
	else
		*err = xasprintf("%s: %s", name, msg);
	prom_dcgm_free(d);
	return NULL;
}

struct prom_dcgm *prom_dcgm_parse(const char *text, size_t len, const char *name, char **err)
{
	char q[LOG_QUOTE_BUF]; /* outside input, quoted for a message */
	struct prom_dcgm *d = xcalloc(1, sizeof(*d));
	size_t off = 0, afields = 0;
	int ln = 0;

	*err = NULL;
	d->xid = SIZE_MAX;
	if (len > PROM_DCGM_FILE_MAX)
		return parse_fail(d, err, name, 0, "larger than %d bytes", PROM_DCGM_FILE_MAX);
	if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3))
		off = 3;
	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) : len - off;
		char line[PROM_DCGM_LINE_MAX + 1], *p, *cols[3], tn[16];
		int nc;
		enum metric_type type;
		struct dfield *f;

		ln++;
		if (n > PROM_DCGM_LINE_MAX)
			return parse_fail(d, err, name, ln, "line longer than %d bytes", PROM_DCGM_LINE_MAX);
		memcpy(line, text + off, n);
		line[n] = 0;
		off += n + (nl ? 1 : 0);
		if (memchr(line, 0, n))
			return parse_fail(d, err, name, ln, "a NUL byte");
		p = trim(line);
		if (!*p || *p == '#')
			continue;
		nc = split_csv(p, cols, 3);
		if (nc < 0)
			return parse_fail(d, err, name, ln, "unterminated quote");
		if (nc != 3)
			return parse_fail(d, err, name, ln,
					  "expected 3 fields (DCGM field, Prometheus type, help), got %d", nc);
		if (!valid_name(cols[0]))
			return parse_fail(d, err, name, ln,
					  "\"%s\" is not a DCGM field name (DCGM_FI_... or DCGM_EXP_...)",
					  log_quote(q, sizeof(q), cols[0], (size_t)-1));
		snprintf(tn, sizeof(tn), "%s", cols[1]);
		if (!strcmp(cols[1], "gauge") || !strcmp(cols[1], "label"))
			type = METRIC_GAUGE;
		else if (!strcmp(cols[1], "counter"))
			type = METRIC_COUNTER;
		else if (!strcmp(cols[1], "histogram") || !strcmp(cols[1], "summary"))
			type = METRIC_GAUGE; /* accepted, not served */
		else
			return parse_fail(d, err, name, ln,
					  "unknown Prometheus type \"%s\" (gauge, counter, histogram, summary, label)",
					  log_quote(q, sizeof(q), cols[1], (size_t)-1));
		for (size_t i = 0; i < d->n; i++)
			if (!strcmp(d->f[i].name, cols[0]))
				return parse_fail(d, err, name, ln, "%s is listed twice", cols[0]);
		if (d->n == PROM_DCGM_FIELDS_MAX)
			return parse_fail(d, err, name, ln, "more than %d fields", PROM_DCGM_FIELDS_MAX);
		if (d->n == afields) {
			afields = afields ? afields * 2 : 32;
			d->f = xrealloc(d->f, afields * sizeof(*d->f));
		}
		f = &d->f[d->n++];
		memset(f, 0, sizeof(*f));
		f->name = xstrdup(cols[0]);
		f->help = xstrdup(utf8_sanitize(cols[2]));
		f->type = type;
		f->line = ln;
		resolve(f, tn);
		if (f->served && f->row && f->row->src == SRC_XID)
			d->xid = d->n - 1;
	}
	if (!d->n)
		return parse_fail(d, err, name, 0, "lists no field");
	return d;
}

struct prom_dcgm *prom_dcgm_load(const char *path, char **err)
{
	char *text = xmalloc(PROM_DCGM_FILE_MAX + 1);
	ssize_t n = read_regular_file(path, text, PROM_DCGM_FILE_MAX + 1); /* a FIFO: refused, never waited on */
	struct prom_dcgm *d = NULL;

	*err = NULL;
	if (n == -EFBIG)
		*err = xasprintf("%s: larger than %d bytes", path, PROM_DCGM_FILE_MAX);
	else if (n == -EINVAL || n == -EISDIR)
		*err = xasprintf("%s: %s, not a regular file", path, file_kind_name(path));
	else if (n < 0)
		*err = xasprintf("%s: %s", path, strerror((int)-n));
	else
		d = prom_dcgm_parse(text, (size_t)n, path, err);
	free(text);
	return d;
}

void prom_dcgm_free(struct prom_dcgm *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->f[i].name);
		free(d->f[i].help);
	}
	free(d->f);
	free(d->last);
	json_decref(d->users);
	json_decref(d->gpus);
	free(d);
}

const char *prom_dcgm_unsupported(const struct prom_dcgm *d, size_t i, const char **why, int *line)
{
	for (size_t k = 0; d && k < d->n; k++)
		if (!d->f[k].served && i-- == 0) {
			if (why)
				*why = d->f[k].whybuf[0] ? d->f[k].whybuf : d->f[k].why;
			if (line)
				*line = d->f[k].line;
			return d->f[k].name;
		}
	return NULL;
}

int prom_dcgm_replaces(const struct prom_dcgm *d, const struct family *f)
{
	return d && d->xid != SIZE_MAX && f == &d->f[d->xid].fam;
}

size_t prom_dcgm_served(const struct prom_dcgm *d)
{
	size_t n = 0;

	for (size_t k = 0; d && k < d->n; k++)
		n += d->f[k].served;
	return n;
}

/* ---- samples ------------------------------------------------------------- */

static const char *label_of(const struct sample *s, const char *name)
{
	for (size_t i = s->ninstance; i < s->nlabels && i < SAMPLE_MAX_LABELS; i++)
		if (!strcmp(s->labels[i].name, name))
			return s->labels[i].value ? s->labels[i].value : "";
	return NULL;
}

/* A SRC_TOTAL value served as a counter: the increase since the last total (the first: all of it). */
static double total_to_increment(struct prom_dcgm *d, size_t field, const struct sample *s, const char *gpu,
				 const char *uuid, double v)
{
	char key[192];
	struct last_total *t = NULL;
	double inc;

	snprintf(key, sizeof(key), "%s\x1f%s\x1f%s", s->host, gpu, uuid);
	for (size_t i = 0; i < d->nlast; i++)
		if (d->last[i].field == field && !strcmp(d->last[i].key, key)) {
			t = &d->last[i];
			break;
		}
	if (!t) {
		if (d->nlast == LAST_MAX)
			return 0; /* bounded: a series past the cap stays flat */
		if (d->nlast == d->alast) {
			d->alast = d->alast ? d->alast * 2 : 16;
			d->last = xrealloc(d->last, d->alast * sizeof(*d->last));
		}
		t = &d->last[d->nlast++];
		t->field = field;
		snprintf(t->key, sizeof(t->key), "%s", key);
		t->v = v;
		return v;
	}
	inc = v >= t->v ? v - t->v : v; /* went back: a reset, counted afresh */
	t->v = v;
	return inc;
}

/* Labels of a DCGM series besides the instance labels: gpu, UUID, pci_bus_id, device, modelName, Hostname. */
#define OWN_LABELS 6
#define MIG_LABELS 2 /* a MIG instance's GPU_I_PROFILE, GPU_I_ID */
#define XID_LABELS 2 /* DCGM_FI_DEV_XID_ERRORS's err_code, err_msg (a whole GPU's) */
/*
 * A user's labels (USER_KEYS): pod, namespace, container, hpc_job, a DRA
 * claim's five and the pod's UID (USER_UID, with --kubernetes-enable-pod-uid);
 * at most 9 at once (a claim's owner has no hpc_job).
 */
#define POD_LABELS 9
static const char *const user_keys[] = { "pod", "namespace", "container", "hpc_job", "dra_claim_name",
					 "dra_claim_namespace", "dra_driver_name", "dra_pool_name", "dra_device_name",
					 "pod_uid" };
#define USER_UID 9 /* user_keys' "pod_uid" */
#define USER_LABELS 10 /* after the labels: the pod's Kubernetes labels (identities.pods'), or null */
_Static_assert(MAP_INSTANCE_LABELS_MAX + OWN_LABELS + MIG_LABELS + LABEL_FIELDS_MAX + POD_LABELS <= SAMPLE_MAX_LABELS &&
		       XID_LABELS <= MIG_LABELS,
	       "a DCGM series has room for every label");

/* The value of served field k made of sample s (of the GPU with uuid): 0 when s gives it none. */
static int field_value(struct prom_dcgm *d, size_t k, const struct sample *s, const char *uuid, double *v)
{
	struct dfield *f = &d->f[k];

	if (!f->served || f->src != s->fam)
		return 0;
	if (f->lname[0]) {
		const char *lv = label_of(s, f->lname);

		if (!lv || strcmp(lv, f->lvalue))
			return 0;
	}
	*v = s->value * f->row->scale;
	if (!isfinite(*v))
		return 0;
	if (f->row->src == SRC_TOTAL && f->type == METRIC_COUNTER)
		*v = total_to_increment(d, k, s, label_of(s, "device"), uuid ? uuid : "", *v);
	return 1;
}

/* Whether GPU rec's DCGM_FI_DEV_XID_ERRORS of this report is still to be made. */
static int xid_pending(const struct prom_dcgm *d, json_t *rec)
{
	return d->xid != SIZE_MAX && json_integer_value(json_object_get(rec, "xid_seq")) == d->seq;
}

/*
 * Make GPU rec's DCGM_FI_DEV_XID_ERRORS of this report (marked made): *v
 * the last Xid, 0 before any; out gets dcgm-exporter's err_code (the code)
 * and err_msg (NVIDIA's name of it, "Unknown Error" for a code past the
 * catalog, as dcgm-exporter says).
 */
static void xid_make(struct prom_dcgm *d, json_t *rec, struct sample *out, double *v)
{
	json_int_t code = json_integer_value(json_object_get(rec, "xid"));
	const char *msg = nvidia_xid_name(code);

	json_object_set_new(rec, "xid_seq", json_integer(-1));
	snprintf(d->xid_code, sizeof(d->xid_code), "%" JSON_INTEGER_FORMAT, code);
	out->labels[out->nlabels++] = (struct label){ "err_code", d->xid_code };
	out->labels[out->nlabels++] = (struct label){ "err_msg", msg ? msg : "Unknown Error" };
	*v = (double)code;
}

/* Add the label fields of GPU rec (its device_info's values, or out's own labels) that have a value to out. */
static void add_label_fields(const struct prom_dcgm *d, json_t *rec, struct sample *out)
{
	json_t *info = json_object_get(rec, "labels");

	for (size_t i = 0; i < d->n; i++) {
		const struct label_row *l = d->f[i].lrow;
		const char *v;

		if (!l)
			continue;
		v = l->info_key ? json_string_value(json_object_get(info, l->info_key)) : label_of(out, l->out_label);
		if (v && *v)
			out->labels[out->nlabels++] = (struct label){ d->f[i].name, v };
	}
}

size_t prom_dcgm_map(struct prom_dcgm *d, const struct sample *s, prom_dcgm_emit_fn emit, void *ud)
{
	const char *type, *gpu, *uuid, *pci, *model, *gi, *profile, *parent, *mig;
	char gpubuf[16], modelbuf[96];
	struct sample out;
	size_t n = 0, k, nusers, nfixed;
	json_t *users, *rec;
	int xid_now;

	if (!d || !s || !s->fam)
		return 0;
	for (k = 0; k < d->n; k++)
		if (d->f[k].served && d->f[k].src == s->fam && k != d->xid)
			break;
	if (k == d->n && (d->xid == SIZE_MAX || !s->device_type || strcmp(s->device_type, "nvidia")))
		return 0; /* no field of its family, and no GPU's sample to carry the Xid */
	type = label_of(s, "device_type");
	if (!type || strcmp(type, "nvidia"))
		return 0;
	gpu = label_of(s, "device");
	uuid = label_of(s, "uuid");
	pci = label_of(s, "pci_bus_id");
	model = label_of(s, "model");
	if (!gpu)
		return 0;
	gi = label_of(s, "gpu_instance");
	profile = label_of(s, "mig_profile");
	parent = label_of(s, "parent_uuid");
	if (gi) {
		/* A MIG instance "<GPU>/<GI>/<CI>": dcgm-exporter's gpu and UUID are its parent GPU's. */
		snprintf(gpubuf, sizeof(gpubuf), "%.*s", (int)strcspn(gpu, "/"), gpu);
		gpu = gpubuf;
		uuid = parent;
		/* modelName: the GPU's ("NVIDIA H100 80GB HBM3"), not the MIG device's "... MIG 1g.10gb". */
		if (model && (mig = strstr(model, " MIG "))) {
			snprintf(modelbuf, sizeof(modelbuf), "%.*s", (int)(mig - model), model);
			model = modelbuf;
		}
	}
	rec = uuid ? json_object_get(d->gpus, uuid) : NULL;
	/* The GPU's last Xid: on its first sample of the report that gave it (a MIG instance has none). */
	xid_now = !gi && rec && xid_pending(d, rec);
	if (xid_now && d->xid < k)
		k = d->xid;
	else if (k == d->n)
		return 0;
	snprintf(d->devname, sizeof(d->devname), "nvidia%s", gpu);
	memset(&out, 0, sizeof(out));
	out.group = s->group;
	out.entity = s->entity;
	out.host = s->host;
	out.ts_ms = s->ts_ms;
	out.period = s->period;
	/* accel-prom's instance labels that carry a value, then dcgm-exporter's. */
	for (size_t i = 0; i < s->ninstance && i < SAMPLE_MAX_LABELS; i++)
		if (s->labels[i].value && *s->labels[i].value)
			out.labels[out.nlabels++] = s->labels[i];
	out.ninstance = out.nlabels;
	if (out.nlabels + OWN_LABELS + MIG_LABELS + LABEL_FIELDS_MAX + POD_LABELS > SAMPLE_MAX_LABELS)
		out.nlabels = out.ninstance = SAMPLE_MAX_LABELS - (OWN_LABELS + MIG_LABELS + LABEL_FIELDS_MAX + POD_LABELS);
	out.labels[out.nlabels++] = (struct label){ "gpu", gpu };
	out.labels[out.nlabels++] = (struct label){ "UUID", uuid ? uuid : "" };
	out.labels[out.nlabels++] = (struct label){ "pci_bus_id", pci ? pci : "" };
	out.labels[out.nlabels++] = (struct label){ "device", d->devname };
	out.labels[out.nlabels++] = (struct label){ "modelName", model ? model : "" };
	out.labels[out.nlabels++] = (struct label){ "Hostname", s->host ? s->host : "" };
	if (gi) {
		out.labels[out.nlabels++] = (struct label){ "GPU_I_PROFILE", profile ? profile : "" };
		out.labels[out.nlabels++] = (struct label){ "GPU_I_ID", gi };
	}
	add_label_fields(d, rec, &out);
	nfixed = out.nlabels;
	users = d->users && uuid ? json_object_get(d->users, uuid) : NULL;
	nusers = json_array_size(users);
	for (; k < d->n; k++) {
		struct dfield *f = &d->f[k];
		double v;

		out.nlabels = nfixed;
		out.device_type = out.device = NULL;
		if (k == d->xid) {
			if (!xid_now)
				continue;
			xid_make(d, rec, &out, &v);
			out.device_type = "nvidia"; /* the GPU's series replace each other (prom_dcgm_replaces) */
			out.device = gpu;
		} else if (!field_value(d, k, s, uuid, &v)) {
			continue;
		}
		out.fam = &f->fam;
		out.value = v;
		/*
		 * One series per container using the GPU, as dcgm-exporter -k, and per HPC job of
		 * its processes in no container (dcgm-exporter's hpc_job); their labels after its own.
		 */
		for (size_t u = 0; u < (nusers ? nusers : 1); u++) {
			size_t base = out.nlabels;
			json_t *who = json_array_get(users, u);

			for (size_t i = 0; i < ARRAY_SIZE(user_keys) && who && out.nlabels < base + POD_LABELS; i++) {
				const char *lv = json_string_value(json_array_get(who, i));

				if (lv && *lv && (i != USER_UID || d->pod_uid))
					out.labels[out.nlabels++] = (struct label){ user_keys[i], lv };
			}
			out.pod_labels = json_array_get(who, USER_LABELS);
			if (!json_is_object(out.pod_labels))
				out.pod_labels = NULL;
			emit(&out, ud);
			out.nlabels = base;
			n++;
		}
	}
	return n;
}

const char *prom_dcgm_pod_label(const char *name)
{
	if (!strcmp(name, "pod"))
		return "pod_name";
	if (!strcmp(name, "namespace"))
		return "pod_namespace";
	if (!strcmp(name, "container"))
		return "container_name";
	return name;
}

/* A user of a GPU: its labels' values in user_keys' order ("" for one it has not). */
#define USER_SHAPE "[s, s, s, s, s, s, s, s, s, s]"

/* A user's labels [pod, namespace, container, hpc_job, the claim's five, pod_uid] of names, a job and a UID. */
static json_t *user_new(const char *pod, const char *ns, const char *ctr, const char *job, const char *uid)
{
	return json_pack(USER_SHAPE, pod ? pod : "", ns ? ns : "", ctr ? ctr : "", job ? job : "", "", "", "", "", "",
			 uid ? uid : "");
}

/*
 * The user an identity object o is (names, else ids; the pod's UID, key
 * for a pod); container "" for a pod, hpc_job "" unless the container is
 * in an HPC job.
 */
static json_t *user_of(json_t *o, const char *key, int is_pod)
{
	const char *uid = is_pod ? key : json_string_value(json_object_get(o, "pod_uid"));
	const char *pod = json_string_value(json_object_get(o, "pod"));
	const char *ns = json_string_value(json_object_get(o, "namespace"));
	const char *ctr = is_pod ? "" : json_string_value(json_object_get(o, "name"));
	const char *job = is_pod ? NULL : json_string_value(json_object_get(o, "hpc_job"));

	if (!pod)
		pod = uid;
	if (!ctr)
		ctr = key;
	return user_new(pod, ns, ctr, job, uid);
}

/*
 * The users of device key of kind nvidia that the report's "allocations"
 * names (its owners: a container given it by a device plugin or a DRA
 * claim, an HPC job), as dcgm-exporter labels an allocated GPU, busy or
 * idle: a new list, empty when none.
 */
static json_t *owner_users(json_t *report, const char *key)
{
	json_t *list = json_array(), *ow;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(json_object_get(json_object_get(report, "allocations"),
									    "devices"), "nvidia"), key), i, ow) {
		json_t *u = json_array();

		for (size_t k = 0; k < ARRAY_SIZE(user_keys); k++) {
			const char *v = json_string_value(json_object_get(ow, user_keys[k]));

			json_array_append_new(u, json_string(v ? v : ""));
		}
		json_array_append_new(list, u);
	}
	return list;
}

/* list already has a user of these pod, namespace and container names (an owner the processes confirm). */
static int has_user(json_t *list, json_t *u)
{
	json_t *v;
	size_t i;

	json_array_foreach(list, i, v) {
		size_t k;

		for (k = 0; k < 4 && json_equal(json_array_get(v, k), json_array_get(u, k)); k++)
			;
		if (k == 4)
			return 1;
	}
	return 0;
}

/*
 * Add to list a user ["", "", "", job] for each HPC job of device dev's
 * processes in no container (identities' "processes" entries with an
 * "hpc_job"), each job once, in the order the processes come.
 */
static void job_users(json_t *list, json_t *dev, json_t *ids, json_t *pidx)
{
	const char *pid;
	json_t *fig, *u;
	size_t i;

	json_object_foreach(json_object_get(dev, "processes"), pid, fig) {
		const char *job = json_object_get(pidx, pid) ? NULL
				  : json_string_value(json_object_get(json_object_get(json_object_get(ids, "processes"),
											pid), "hpc_job"));
		int seen = 0;

		if (!job || !*job)
			continue;
		json_array_foreach(list, i, u)
			seen |= !strcmp(json_string_value(json_array_get(u, 3)), job) &&
				!*json_string_value(json_array_get(u, 2));
		if (!seen)
			json_array_append_new(list, user_new("", "", "", job, NULL));
	}
}

/* Each user of list with its pod's Kubernetes labels (ids' pods, by its pod_uid) after its labels, or null. */
static void users_labels(json_t *list, json_t *ids)
{
	json_t *u, *pods = json_object_get(ids, "pods");
	size_t i;

	json_array_foreach(list, i, u) {
		const char *uid = json_string_value(json_array_get(u, USER_UID));
		json_t *labels = uid && *uid ? json_object_get(json_object_get(pods, uid), "labels") : NULL;

		json_array_append(u, labels ? labels : json_null());
	}
}

/* The record of the GPU with uuid in d->gpus, made when new (NULL past the cap). */
static json_t *gpu_record(struct prom_dcgm *d, const char *uuid)
{
	json_t *rec = json_object_get(d->gpus, uuid);

	if (!rec && json_object_size(d->gpus) < LAST_MAX) {
		rec = json_object();
		json_object_set_new(d->gpus, uuid, rec);
	}
	return rec;
}

/*
 * Learn from the device groups of an NVIDIA entry ent what the DCGM series
 * need beyond the samples: from device_info, the label fields' values of
 * each GPU (replaced by each device_info that reads the GPU); from
 * device_errors, its last Xid (0 while it has none), to be made once.
 * MIG instances and devices in error are passed over.
 */
static void learn_gpus(struct prom_dcgm *d, json_t *ent)
{
	json_t *rep = json_object_get(ent, "report"), *dev, *rec, *x;
	const char *type = json_string_value(json_object_get(ent, "device_type")), *key, *uuid;

	if (!type || strcmp(type, "nvidia"))
		return;
	json_object_foreach(json_object_get(json_object_get(rep, "device_info"), "devices"), key, dev) {
		json_t *labels = json_object();

		uuid = json_string_value(json_object_get(dev, "uuid"));
		if (!uuid || strchr(key, '/') || json_string_length(json_object_get(dev, "error")) ||
		    !(rec = gpu_record(d, uuid))) {
			json_decref(labels);
			continue;
		}
		for (size_t i = 0; i < ARRAY_SIZE(label_rows); i++)
			if (label_rows[i].info_key && json_is_string(x = json_object_get(dev, label_rows[i].info_key)))
				json_object_set(labels, label_rows[i].info_key, x);
		json_object_set_new(rec, "labels", labels);
	}
	json_object_foreach(json_object_get(json_object_get(rep, "device_errors"), "devices"), key, dev) {
		uuid = json_string_value(json_object_get(dev, "uuid"));
		x = json_object_get(dev, "last_xid");
		if (!uuid || strchr(key, '/') || json_string_length(json_object_get(dev, "error")) ||
		    (x && !(json_is_integer(x) && json_integer_value(x) >= 0)) || !(rec = gpu_record(d, uuid)))
			continue;
		json_object_set_new(rec, "xid", json_integer(x ? json_integer_value(x) : 0));
		json_object_set_new(rec, "xid_seq", json_integer(d->seq));
	}
}

void prom_dcgm_set_pod_uid(struct prom_dcgm *d, int on)
{
	if (d)
		d->pod_uid = on;
}

void prom_dcgm_report(struct prom_dcgm *d, json_t *report)
{
	json_t *ent, *ids = json_object_get(report, "identities"); /* formats 2 and 3: the sums' names */
	json_t *pidx = report_pid_index(json_is_object(ids) ? ids : NULL);
	size_t i;

	if (!d)
		return;
	if (!d->users)
		d->users = json_object();
	if (!d->gpus)
		d->gpus = json_object();
	d->seq++;
	json_array_foreach(json_object_get(report, "device_data"), i, ent)
		learn_gpus(d, ent);

	json_array_foreach(json_object_get(report, "device_data"), i, ent) {
		json_t *g = json_object_get(json_object_get(ent, "report"), "device_memory"), *dev;
		const char *key, *uuid;
		const char *type = json_string_value(json_object_get(ent, "device_type"));

		if (!json_is_object(g) || !type || strcmp(type, "nvidia"))
			continue;
		json_object_foreach(json_object_get(g, "devices"), key, dev) {
			json_t *list, *agg, *o;
			const char *k;
			int is_pod;

			uuid = json_string_value(json_object_get(dev, "uuid"));
			if (!uuid || !json_is_object(dev) || json_string_length(json_object_get(dev, "error")))
				continue;
			/* Pods with no container (a pod-level process) count as the pod. */
			agg = json_object_get(dev, "containers");
			is_pod = !json_object_size(agg);
			if (is_pod)
				agg = json_object_get(dev, "pods");
			/* Its owners first; then the users of its processes that no owner is (process-based). */
			list = owner_users(report, key);
			json_object_foreach(agg, k, o) {
				json_t *u;

				if (!json_is_object(o))
					continue;
				u = user_of(report_sum_identity(ids, is_pod ? IDENT_POD : IDENT_CONTAINER, k, o), k, is_pod);
				if (has_user(list, u))
					json_decref(u);
				else
					json_array_append_new(list, u);
			}
			job_users(list, dev, ids, pidx);
			users_labels(list, ids);
			if (json_object_size(d->users) < LAST_MAX || json_object_get(d->users, uuid))
				json_object_set_new(d->users, uuid, list);
			else
				json_decref(list);
		}
	}
	json_decref(pidx);
}
