/* SPDX-License-Identifier: MIT */
/*
 * What the NVIDIA collector's files share (coll_nvidia.c: loading, devices,
 * cadences and the ops; nvidia_groups.c: the table of reads and the groups'
 * fields; nvidia_reads.c: the walk of that table):
 * the NVML table, the per-device and per-instance state, and the helpers
 * both call. Private to monitor/nvidia/.
 */
#ifndef ACCEL_NVIDIA_DEV_H
#define ACCEL_NVIDIA_DEV_H

#include "../core/collector.h"
#include "../config/config.h"
#include "../core/devrec.h"
#include "../core/energy.h"
#include "nvml.h"
#include "nvidia_gpm.h"
#include "nvidia_mig.h"
#include "../host/host.h"
#include "../core/loop.h"
#include "nvidia_config.h"
#include "nvidia_events.h"
#include "nvidia_links.h"
#include "nvidia_pool.h"
#include "nvidia_ledger.h"
#include "../../common/jset.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stddef.h>
#include <stdint.h>

#define NV_DEFAULT_LIBRARY "libnvidia-ml.so.1"
#define NV_RETRY_S 10          /* seconds between attempts to load NVML */
#define NV_PROC_START 32       /* process entries per device, first allocation */
#define NV_PROC_MAX 65536      /* process entries per device, at most */
#define NV_PROCS_FRESH_NS (250 * NS_PER_MS) /* proc_memory reuses a process list this recent */
#define NV_NGROUPS (GROUP_DEVICE_ERRORS - GROUP_DEVICE_INFO + 1)
_Static_assert(NV_NGROUPS == 7, "the device groups are contiguous in enum group_id, device_info first");

/* Fields, for logging an unexpected error once per device and field. */
enum nv_field {
	NF_IDENT, NF_UTIL, NF_ENC, NF_DEC, NF_PCIE, NF_MEM, NF_PROCS, NF_MIG, NF_TEMP, NF_FIELDS, NF_FAN,
	NF_REASONS, NF_POWER, NF_ENERGY, NF_LIMIT, NF_CLOCK, NF_ECC, NF_REPLAY, NF_REMAP, NF_EVENTS,
	NF_MEMTEMP, NF_RETIRED, NF_CLOCK_SM, NF_CLOCK_MEM, NF_CLOCK_VIDEO, NF_PUTIL,
};
_Static_assert(NF_PUTIL < 32, "nv_dev.warned and .unsup hold a bit per field");

/* Is field f of device d asked this cycle? Not after NOT_SUPPORTED, until the static refresh. */
#define ASKS(f) (!(d->unsup & (1u << (f))))

/* A read's *last when it was made at open (the start's baselines): its slot is the first cycle's. */
#define NV_AT_OPEN ((int64_t)-1)

#define NV_E_BASELINE (-1.0) /* energy_anchor: the first reading */
#define NV_E_REFUSED (-2.0)  /* energy_anchor: a step energy_counter_step refused (e->why) */

/* The NVML entry points, resolved once; NULL when the library lacks them. */
struct nvml_api {
	void *dl;
	nvml_init_fn init, shutdown;
	nvml_error_string_fn error_string;
	nvml_sys_string_fn driver_version, nvml_version;
	nvml_sys_int_fn cuda_version;
	nvml_count_fn count;
	nvml_handle_fn handle;
	nvml_dev_string_fn name, uuid, serial;
	nvml_pci_fn pci;
	nvml_util_fn util;
	nvml_codec_fn enc, dec;
	nvml_mem_fn mem;
	nvml_mem2_fn mem2;
	nvml_temp_fn temp;
	nvml_fields_fn fields;
	nvml_uint_fn power, power_limit, fan, replay, mig_count, gi_id, ci_id;
	nvml_ull_fn energy, reasons;
	nvml_clock_fn clock;
	nvml_ecc_fn ecc;
	nvml_pcie_fn pcie;
	nvml_procs_fn procs;
	nvml_putil_fn putil;
	nvml_remap_fn remap;
	nvml_mig_mode_fn mig_mode;
	nvml_mig_handle_fn mig_handle;
	size_t proc_stride; /* bytes per process entry of the procs symbol resolved */
};

/* A device counter: the last raw reading, and whether there is one. */
struct ctr {
	uint64_t last;
	int have;
};

/* Counters kept per device, baselines for the per-period increases. */
enum { C_ENERGY, C_ECC_CV, C_ECC_UV, C_ECC_CA, C_ECC_UA, C_REPLAY, C_COUNT };

struct nv_state;
struct nv_dev;

/* A read's cadence (docs/nvidia.md, "What each cycle costs"). */
enum nv_cadence {
	NV_EVERY,  /* every cycle */
	NV_SLOW,   /* once per "slow_period" in the GPU's slots (nv_due); the value last read in between */
	NV_ENERGY, /* the same on "energy_period" (the energy counter) */
	NV_STATIC, /* at start, after a GPU comes back, at each static refresh (nv_dev.stale); kept in between */
	NV_PUT,    /* no call: puts what rows before it read, or another module's fields */
};

#define NV_NO_API ((size_t)-1) /* nv_read.api: the read itself finds its entry points */
#define NV_READS_MAX 64        /* rows at most: a bit each in nv_dev.got and .stale */

/*
 * One NVML read of a GPU: a row of nv_reads (nvidia_groups.c), walked by
 * its group's filler (nv_walk, nvidia_reads.c) in the table's order.
 * Adding a field: a row (and, for more than one value, its record in
 * struct nv_dev).
 */
struct nv_read {
	enum group_id group;   /* the group it belongs to */
	enum nv_field f;       /* its field: NOT_SUPPORTED cache (nv_dev.unsup), an error logged once */
	enum nv_cadence every;
	const char *call;      /* the NVML entry point (what the ledger names) */
	size_t api;            /* offsetof(struct nvml_api, that entry point): the row is skipped without it */
	int arg;               /* the read's argument (a sensor, a clock, an ECC kind, a field id) */
	const char *key;       /* the common putters': the JSON key ... */
	const char *in;        /* ... in this object of the group's (dropped when empty), NULL: the group's */
	double div;            /* ... the value divided by this (nv_put_real) */
	/* the call into d's record (d->val[row] for one value): 1 read, 0 absent, -1 lost */
	int (*read)(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd);
	/* d's record into the group's object o; now: read this cycle. 0, or -1 lost */
	int (*put)(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now);
	/* NULL, or: read now whatever the cadence (the energy counter without a power reading) */
	int (*must)(const struct nv_state *s, const struct nv_dev *d);
};

extern const struct nv_read nv_reads[];
extern const size_t nv_nreads;
#define NV_ROW_I(rd) ((size_t)((rd) - nv_reads))

/*
 * The energy counter between its reads: the running total reported is the
 * counter at its last read plus the power readings integrated since
 * (trapezoids between cycles), re-anchored to the counter at each read.
 * The counter stays in integer mJ and its steps are taken in integers
 * (a double loses whole joules near 2^64); what the estimates add is a
 * small double beside it.
 */
struct nv_energy {
	int have;          /* counter was read: the running total is counter + ahead_mj */
	uint64_t counter;  /* the counter at its last read (mJ) */
	int64_t c_ns;      /* when (CLOCK_MONOTONIC) */
	double ahead_mj;   /* the running total's excess over the counter: estimates not yet matched (mJ, >= 0) */
	double owed_mj;    /* the estimate ran this far past the counter: taken off the next estimates (mJ) */
	double est_mj;     /* this cycle's estimate from the power readings (mJ); -1: none */
	int from_power;    /* opened without reading the counter: power alone until its first read (no total) */
	int have_p;        /* p_mw was read at p_ns */
	unsigned p_mw;     /* the last power reading (mW) */
	int64_t p_ns;      /* when (CLOCK_MONOTONIC) */
	char why[160];     /* why energy_anchor refused the last reading (NV_E_REFUSED) */
};

struct nv_proc {
	unsigned pid;
	uint64_t bytes;
};

struct nv_dev {
	unsigned index;
	nvmlDevice_t h;          /* NULL: not looked up yet, or lost */
	int have_ident;          /* uuid/name/pci below were read */
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	char serial[NVML_DEVICE_SERIAL_BUFFER_SIZE + 2];
	char pci[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE + 1];
	int have_serial, have_pci, have_name;
	char err[256];           /* why it cannot be read now; "" when fine */
	int64_t tried_cycle;     /* the cycle of the last handle lookup that failed */
	struct ctr c[C_COUNT];
	int mem_v1;              /* nvmlDeviceGetMemoryInfo_v2 refused: use v1 */
	unsigned long long reasons_put; /* the clock event mask "throttle_reasons" was last built from */
	/* cadences (docs/nvidia.md, "What each cycle costs") */
	uint32_t unsup;          /* bit f: field f answered NOT_SUPPORTED, not asked again until the static refresh */
	int64_t static_ns;       /* when the static values were last marked stale (CLOCK_MONOTONIC; 0: never) */
	/* the reads' records (nv_reads): bit i of got and stale is row i */
	uint64_t got;            /* row i's record holds a value (read now, or the last read between reads) */
	uint64_t stale;          /* static row i is to be read again at its next use */
	int64_t read_ns[NV_READS_MAX]; /* when row i was last read (its slots; 0: never: due) */
	uint64_t val[NV_READS_MAX];    /* row i's value, for the rows with one */
	int64_t mem2_ns;         /* when nvmlDeviceGetMemoryInfo_v2 was last made (the slow cadence) */
	int64_t reserved;        /* slow: reserved memory from nvmlDeviceGetMemoryInfo_v2; -1 unknown */
	struct {                 /* device_memory's read */
		uint64_t total, used, free;
		int64_t reserved;
	} mem;
	nvmlUtilization_t util;  /* device_utilization's read */
	int ecc_had[4];          /* each ECC counter's increase over the period was taken (ecc_delta) */
	uint64_t ecc_delta[4];
	unsigned remap[4];       /* remapped rows: correctable, uncorrectable, pending, failed */
	uint64_t retired[3];     /* slow: retired pages (SBE, DBE, pending), retired_r[k]: read */
	int retired_r[3];
	struct nv_energy energy; /* the energy counter and its estimate between reads */
	/* compute processes: the raw NVML buffer and the parsed list */
	void *pbuf;
	unsigned pcap;           /* entries pbuf holds */
	struct nv_proc *procs;
	unsigned nprocs, aprocs;
	int procs_ok;            /* the list was read */
	int64_t procs_ns;        /* when (monotonic) */
	/* the split of device_power's energy among the processes (nv_energy_split) */
	nvmlProcessUtilizationSample_t *ubuf; /* per-process utilization samples */
	unsigned ucap;           /* samples ubuf holds */
	unsigned long long useen; /* the newest sample's timeStamp taken so far (µs) */
	struct energy_share *shares;
	size_t ashares;
	unsigned min_mw;         /* the lowest power reading seen: the measured idle power, when have_min */
	int have_min;
	int64_t split_ns;        /* the cycle of the last split (monotonic; 0: none yet) */
	uint32_t warned;         /* fields whose unexpected error was logged */
	/* this device's object in each group's "devices" (borrowed from the holder) */
	json_t *obj[NV_NGROUPS];
	int obj_err[NV_NGROUPS]; /* the object holds an error, no data */
	/* MIG instances and GPM (nvidia_mig.c, nvidia_gpm.c) */
	struct nv_mig *mig;      /* its MIG instances' state */
	struct nv_gpm gpm;       /* the whole GPU's profiling sampler */
};

struct nv_state {
	const struct cfg_device *cfg; /* borrowed */
	struct nvml_api api;
	int ready;               /* the library is loaded, initialized and the devices enumerated */
	int64_t tried_ns;        /* last attempt to load (monotonic) */
	char error[512];         /* why the whole kind cannot be read; "" when ready */
	char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE + 1];
	char nvml[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE + 1];
	char cuda[16];
	struct nv_dev *devs;
	size_t ndevs;
	json_t *holder[NV_NGROUPS]; /* {"devices": {...}}, kept between cycles */
	/* events, NVLink, the PCIe worker pool */
	struct loop *loop;          /* the producer's (borrowed; NULL in tests that drive the ops) */
	struct host *host;          /* the producer's (borrowed): the energy ledger (host_energy) */
	struct nv_events *events;   /* NULL unless device_errors is collected */
	struct nv_links *links;
	struct nv_pool *pool;       /* NULL unless device_utilization is collected and NVML has the call */
	struct mon_fetch *fetch;    /* device_utilization's fetch waiting for the pool (borrowed) */
	nvmlDevice_t *pcie_h;       /* ndevs handles, for the pool */
	struct loop_timer pcie_timer; /* answers the fetch at its deadline with the calls that returned */
	int pcie;                   /* NV_PCIE_*: where this cycle's PCIe throughput comes from */
	int64_t cycle_ns;           /* the cycle being collected (CLOCK_MONOTONIC) */
	json_t *group;              /* the group being collected (borrowed, in collect): its error */
	int noted;                  /* and an error was added to it (collect's return) */
	struct energy_obs_list obs; /* device_power's observations for the attribution (nv_energy) */
	struct pid_list named;      /* the processes the groups wrote this cycle (nv_processes) */
	struct devrec rec;          /* the shared fields of the row being put, written by devrec_*_json */
	int idle_told;              /* an idle_power_watts key that names no GPU was logged */
	struct log_limit pcie_lim;
	/* MIG instances and GPM */
	struct nv_gpm_api gpm_api;
	struct nv_mig_api mig_api;
	/* the call ledger (nvidia_ledger.h): NULL unless ACCEL_NVML_LEDGER is set */
	struct nv_ledger *ledger;
	struct nv_lctx lc;          /* the producer thread's calls */
	int64_t ledger_cycle;       /* the last cycle counted (CLOCK_MONOTONIC) */
	/* cadences: 0 = every cycle ("slow_period": "period") */
	int64_t slow_every;         /* ns between two slow reads of a device */
	int64_t energy_every;       /* ns between two reads of a device's energy counter ("energy_period") */
	int64_t static_every;       /* ns between two refreshes of the static values */
	int64_t pcie_ns;            /* when the PCIe worker pool's last batch started (0: never) */
	int64_t origin_ns;          /* the first cycle once NVML was up: where every GPU's slots are counted from */
	int have_origin;
};

/* The producer thread's call context, for NVL and NVC (nvidia_ledger.h). */
#define NV_LC (&s->lc)

/*
 * s->pcie: this cycle's PCIe batch is to be started at collect, or was
 * started by the fetch, or is not due (the last batch's results stand).
 */
enum { NV_PCIE_NONE, NV_PCIE_FETCHED, NV_PCIE_KEEP };


/* ---- coll_nvidia.c: results, counters, cadences, energy, kept JSON ---------- */

/* Is rc NVML's "the GPU is lost" (GPU_IS_LOST, and the errors that mean the same)? */
int nv_is_lost(nvmlReturn_t rc);
/* One NVML result rc for field f of d: 1 read; 0 absent (an unexpected error logged once); -1 d is lost. */
int nv_ok(struct nv_state *s, struct nv_dev *d, nvmlReturn_t rc, enum nv_field f);
/* d is lost (rc): its handle dropped, its error set, looked up again each cycle. */
void nv_lose(struct nv_state *s, struct nv_dev *d, nvmlReturn_t rc);
/* Feed a counter reading; 1 and *delta when there was a baseline. Backwards means a fresh start. */
int ctr_step(struct ctr *c, uint64_t v, uint64_t *delta);
/* Is d's read on a cadence of `every` ns (last made at *last) due this cycle? Sets *last when it is. */
int nv_due(const struct nv_state *s, const struct nv_dev *d, int64_t *last, int64_t every);
/* Drop o[k] when it ended up empty. */
void drop_if_empty(json_t *o, const char *k);
/* The energy counter's new reading mj: the increase to report (mJ), NV_E_BASELINE or NV_E_REFUSED. */
double energy_anchor(struct nv_energy *e, uint64_t mj, int64_t now_ns, double max_w);
/* An estimate between counter readings (mJ over the period, from the power readings): what is reported. */
double energy_estimate(struct nv_energy *e, double est);

/* ---- nvidia_reads.c: walking the table of reads ------------------------------ */

/* The row of group g for field f (the first), or NULL. */
const struct nv_read *nv_row(enum group_id g, enum nv_field f);
/* Does d get asked rd this cycle: the library has its entry point, and NOT_SUPPORTED is not cached? */
int nv_asks(const struct nv_state *s, const struct nv_dev *d, const struct nv_read *rd);
/* rd of d brought up to date by its cadence: 1 read this cycle, 0 not (kept or dropped), -1 d lost. */
int nv_fresh(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd);
/* Each row of group g, in order: made when due (nv_fresh), then put into o. 0, or -1 d lost. */
int nv_walk(struct nv_state *s, struct nv_dev *d, enum group_id g, json_t *o);
/* Does rd's record of d hold a value? */
static inline int nv_got(const struct nv_dev *d, const struct nv_read *rd)
{
	return (d->got >> NV_ROW_I(rd)) & 1;
}
/* One NVML field value as an unsigned integer into *v: 1, 0 absent, -1 lost. */
int nv_field_u64(struct nv_state *s, struct nv_dev *d, const nvmlFieldValue_t *f, enum nv_field nf, uint64_t *v);
/* The common readers (rd->api's function into d->val[row]; rd->arg its argument) and putters (rd->key). */
int nv_read_uint(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd);
int nv_read_ull(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd);
int nv_read_codec(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd);
int nv_read_temp(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd);
int nv_read_clock(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd);
int nv_read_field(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd);
int nv_put_int(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now);
int nv_put_real(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now);
int nv_put_u64(struct nv_state *s, struct nv_dev *d, const struct nv_read *rd, json_t *o, int now);

/* ---- nvidia_groups.c: the reads and each group's fields of one GPU ---------- */

/* d's MIG mode (NVML_FEATURE_*) as last read, or -1 when unknown or to be read again. */
int nv_mig_cur(const struct nv_dev *d);
/* Every static row of d to be read again at its next use. */
#define NV_STALE_ALL (~(uint64_t)0)

/* Memory info, v2 when the driver has it. 1 read (reserved set or -1), 0 absent, -1 lost. */
int read_mem(struct nv_state *s, struct nv_dev *d, uint64_t *total, uint64_t *used, uint64_t *freeb,
	     int64_t *reserved);
/* Refresh d's compute process list: 1 read, 0 absent, -1 lost. */
int read_procs(struct nv_state *s, struct nv_dev *d);
/* The baselines of d's counters at open, so that the first period has data. */
void dev_prime(struct nv_state *s, struct nv_dev *d);
/* Each group's fields of GPU d into its object o (nv_collect's table): negative when d was lost. */
int g_info(struct nv_state *s, struct nv_dev *d, json_t *o);
int g_util(struct nv_state *s, struct nv_dev *d, json_t *o);
int g_mem(struct nv_state *s, struct nv_dev *d, json_t *o);
int g_thermal(struct nv_state *s, struct nv_dev *d, json_t *o);
int g_power(struct nv_state *s, struct nv_dev *d, json_t *o);
int g_clocks(struct nv_state *s, struct nv_dev *d, json_t *o);
int g_errors(struct nv_state *s, struct nv_dev *d, json_t *o);

#endif
