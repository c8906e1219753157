/* SPDX-License-Identifier: MIT */
/*
 * Device records: the vocabulary every device kind shares, as C values a
 * collector fills (a device's utilization, memory, power, energy and
 * temperatures; each process's samples on the device), and the one
 * serializer that writes them into the device's object of a report group
 * with the report's keys and number types (docs/report-format.md).
 * Vendor extras (clocks, fans, ECC, links, ...) stay the collector's own
 * key/value writes, made around the serializer's calls so that the keys
 * keep their order in the object.
 *
 * A collector keeps one struct devrec (its process array keeps its room
 * from cycle to cycle), clears it with devrec_clear() before a device's
 * group, sets the fields it read (each with its DR_* bit in have), and
 * calls the devrec_*_json() writer of the part it filled. The writers set
 * the members in place (common/jset.h): on an object a collector keeps
 * from cycle to cycle a member that holds a value of the same type is
 * changed, not replaced, so a steady cycle allocates nothing; a member
 * whose bit is clear is removed, so a kept object never shows a stale
 * value; on a fresh object nothing is removed and the keys come in the
 * writer's order. A collector whose device objects are new every cycle
 * (the sysfs kinds: device_entry) sets fresh in its record once: the
 * writers then add the members without looking any up (what the
 * collector cost before it had records).
 *
 * Nothing here reads a value back out of JSON: what a later step needs
 * (the processes' bytes summed over their clients, a process's engine
 * percentages) is summed in the record. No I/O, no globals.
 */
#ifndef ACCEL_DEVREC_H
#define ACCEL_DEVREC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../common/util.h"

/* Which of a record's fields were read this cycle (struct devrec.have). */
enum devrec_field {
	DR_CORE_PCT = 1u << 0,     /* core_pct: "core_percent" */
	DR_MEMBW_PCT = 1u << 1,    /* membw_pct: "memory_bandwidth_percent" */
	DR_MEM_TOTAL = 1u << 2,    /* mem_total: "total_bytes" */
	DR_MEM_USED = 1u << 3,     /* mem_used: "used_bytes" */
	DR_MEM_FREE = 1u << 4,     /* mem_free: "free_bytes" */
	DR_POWER = 1u << 5,        /* power_w: "power_watts" */
	DR_ENERGY = 1u << 6,       /* energy_j: "energy_joules", the period's */
	DR_ENERGY_TOTAL = 1u << 7, /* energy_total_j: "energy_total_joules", the device's own total */
	DR_PROCS = 1u << 8,        /* the processes were listed: "processes" is written, {} when none */
};

#define DEVREC_TEMPS 32   /* named temperature sensors a record holds; more are left out */
#define DEVREC_NAME 64    /* a sensor's name, NUL included (as long as a device fact's name: host/facts.h) */
#define DEVREC_ENGINES 12 /* engines a process's utilization names */

/* One temperature sensor. */
struct devrec_temp {
	char name[DEVREC_NAME]; /* its key in "temperatures_celsius", valid UTF-8 */
	double celsius;         /* a reading in fractions of a degree: written as a real */
	int whole;              /* else a whole-degree reading (NVML's): degrees, written as a u64 */
	uint64_t degrees;
};

/* One process's samples on the device. */
struct devrec_proc {
	pid_t pid;
	struct u64sum mem;            /* its device memory (bytes), summed over its clients or contexts */
	int has_mem;                  /* mem was added to (devrec_proc_mem_add) */
	double eng[DEVREC_ENGINES];   /* percent of the period each engine was busy for it (0..100) */
	uint8_t order[DEVREC_ENGINES]; /* the engines it has, in the order first added */
	size_t neng;
};

/* The shared vocabulary of one device in one group. Zeroed: empty. */
struct devrec {
	int fresh;                /* the objects written to are new (none of the writers' members): add, look nothing up */
	uint32_t have;            /* DR_* bits: which fields below were read */
	double core_pct;          /* percent */
	double membw_pct;         /* percent */
	uint64_t mem_total;       /* bytes */
	struct u64sum mem_used;   /* bytes: read whole (.v) or summed from parts (devrec_mem_used_add) */
	uint64_t mem_free;        /* bytes */
	double power_w;           /* W */
	double energy_j;          /* J over the period */
	double energy_total_j;    /* J, the device's own counter */
	struct devrec_temp temp[DEVREC_TEMPS];
	size_t ntemp;
	struct devrec_proc *proc; /* the processes, in the order first added; owned */
	size_t nproc, aproc;
};

/*
 * Set the memory fields (bytes) and their DR_MEM_* bits, each one that is
 * not na (a source's "not available", such as NVML_VALUE_NOT_AVAILABLE_ULL).
 */
void devrec_set_memory(struct devrec *r, uint64_t total, uint64_t used, uint64_t free_b, uint64_t na);
/*
 * Add bytes to the device's used memory (a device whose use is read in
 * parts, such as Neuron's per core and category) and set DR_MEM_USED: the
 * exact sum while it fits in 64 bits, written as a u64; past 2^64 a real
 * (struct u64sum, util.h), never a wrapped sum.
 */
void devrec_mem_used_add(struct devrec *r, uint64_t bytes);

/* Empty r for the next device or group: no field, no sensor, no process (the process array's room and fresh are kept). */
void devrec_clear(struct devrec *r);
/* Free what r holds (its process array); r itself is the caller's. NULL-safe. */
void devrec_free(struct devrec *r);

/*
 * Add temperature sensor name (copied, cut to DEVREC_NAME - 1 bytes,
 * invalid UTF-8 replaced) at celsius. When name is already there and alt
 * is not NULL, the sensor is named alt (hwmon: a second input with the
 * same label keeps its channel name, "temp3"); a name already there gets
 * the new value in its place. A sensor past DEVREC_TEMPS is left out.
 */
void devrec_temp_add(struct devrec *r, const char *name, const char *alt, double celsius);
/* The same for a sensor that reads whole degrees (NVML's): written as an integer (a real from 2^63). */
void devrec_temp_whole(struct devrec *r, const char *name, uint64_t degrees);

/*
 * The entry of pid in r's processes, added (no memory, no engine) when it
 * is not there yet; DR_PROCS is set. Borrowed: valid until the next call.
 */
struct devrec_proc *devrec_proc(struct devrec *r, pid_t pid);
/* Add bytes to p's device memory (u64sum_add) and mark it as having some. */
void devrec_proc_mem_add(struct devrec_proc *p, uint64_t bytes);
/*
 * Add pct (percent of the period) to engine e (< DEVREC_ENGINES) of p, the
 * sum held at 100: an engine with several rings can add up past 100, and a
 * share of the period cannot.
 */
void devrec_proc_engine_add(struct devrec_proc *p, unsigned e, double pct);

/* ---- the serializer: members of a device object d (borrowed), set in place -------------- */

/* "core_percent" and "memory_bandwidth_percent" (reals) from DR_CORE_PCT and DR_MEMBW_PCT. */
void devrec_util_json(const struct devrec *r, json_t *d);
/*
 * "total_bytes", "used_bytes", "free_bytes" (u64: integer below 2^63, else
 * real) from DR_MEM_*; "used_bytes" a real when the sum went past 2^64.
 */
void devrec_memory_json(const struct devrec *r, json_t *d);
/* "power_watts" (real) from DR_POWER. */
void devrec_power_json(const struct devrec *r, json_t *d);
/*
 * "energy_joules" and "energy_total_joules" (reals) from DR_ENERGY and
 * DR_ENERGY_TOTAL: a device without an energy source has no energy
 * member, never 0.
 */
void devrec_energy_json(const struct devrec *r, json_t *d);
/*
 * "temperatures_celsius": {name: celsius (real; a whole-degree sensor's an
 * integer)} in the order the sensors were added; removed when r has none.
 * A kept object's sensor that is no longer in r is removed.
 */
void devrec_temps_json(const struct devrec *r, json_t *d);

/* What devrec_procs_json writes for each process. */
enum devrec_pview {
	DEVREC_PROC_MEMORY,  /* {"<pid>": bytes}: each process with memory */
	DEVREC_PROC_ENGINES, /* {"<pid>": {"<engine>": percent}}: each process with an engine */
};

/*
 * "processes" of d when DR_PROCS is set ({} when no process has what view
 * writes), else removed. eng names the engines (eng[e], DEVREC_PROC_ENGINES
 * only; NULL for DEVREC_PROC_MEMORY). A kept object's process (or engine)
 * that is no longer in r is removed.
 */
void devrec_procs_json(const struct devrec *r, enum devrec_pview view, const char *const *eng, json_t *d);

#endif
