/* SPDX-License-Identifier: MIT */
/*
 * Energy: a device's energy over each period from whichever source it has,
 * and the split of that energy among the processes that used the device
 * (docs/energy.md says the model and its limits).
 *
 *  - The meter (struct energy_meter) turns readings into the period's
 *    energy and a running total: an energy counter (amdgpu's and hwmon's
 *    energyN_input in µJ, powercap's energy_uj, which wraps at
 *    max_energy_range_uj), or power readings integrated over time
 *    (trapezoids between readings). The first reading is the baseline:
 *    it has no period. Every counter step passes one plausibility check
 *    (energy_counter_step): a step back that is no wrap, a reading above
 *    the counter's range, or an increase implying more than the device's
 *    power limit over the period gives the period no energy, and the
 *    counter starts afresh from that reading.
 *  - The split (energy_split) divides a period's energy into the device's
 *    idle part (idle power times the period, at most the energy) and the
 *    active rest, shared by the processes' weights: their utilization of
 *    the device when any has some, else their device memory, else equal
 *    shares. Which was used is the returned basis.
 *  The ledger of what was attributed so far is the host's
 *  (monitor/host/ledger.h); a devices block's configured idle power is
 *  parsed with the collectors' config (config.h).
 *
 * Everything here is arithmetic on the caller's structs: no I/O, no
 * globals; the collectors own the meters.
 */
#ifndef ACCEL_ENERGY_H
#define ACCEL_ENERGY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* One device's (or sensor's) energy between readings. Zeroed: no reading yet. */
struct energy_meter {
	int have;          /* a reading was taken */
	int64_t last_ns;   /* CLOCK_MONOTONIC ns of the last reading */
	uint64_t last_raw; /* counter source: its last raw value */
	double last_w;     /* power source: the last power reading (W) */
	double total_j;    /* joules since the first reading */
	double min_w;      /* the lowest power seen (W), when have_min */
	int have_min;
	char why[160];     /* why the last counter reading was refused (energy_meter_counter returned -1) */
};

/*
 * The most power (W) a counter's increase may imply when the device gives
 * no limit of its own (a whole node's worth, as idle_power_watts' bound).
 */
#define ENERGY_MAX_W 100000.0
/*
 * How far above its power limit a device's mean power over a period may
 * be: the limit is enforced over a window, and short excursions past it
 * are real.
 */
#define ENERGY_LIMIT_SLACK 1.5

/*
 * The one plausibility check of an energy counter's step, shared by every
 * source that reads one (NVML's mJ counter, amdgpu's and hwmon's
 * energyN_input, powercap's energy_uj): from last to raw (units of unit_j
 * joules) over period_s seconds, with the counter wrapping to 0 at range
 * (0: it does not wrap) on a device whose power limit is max_w (W; <= 0:
 * unknown, ENERGY_MAX_W). 0 with the increase in *inc (integer units), or
 * -ERANGE with why (a sentence, why_len bytes) when the step is not
 * plausible: raw at or above range, a step back without a range (a driver
 * reload or a misread: no energy is known for the period), or an increase
 * (a wrap included) implying more than ENERGY_LIMIT_SLACK times max_w.
 */
int energy_counter_step(uint64_t last, uint64_t raw, uint64_t range, double unit_j, double period_s, double max_w,
			uint64_t *inc, char *why, size_t why_len);

/*
 * Take a counter reading raw (units of unit_j joules: 1e-6 for µJ) at now
 * (CLOCK_MONOTONIC ns). range: the value at which the counter wraps to 0
 * (powercap's max_energy_range_uj + 1; 0: it does not wrap); max_w: the
 * device's power limit (W; <= 0: unknown). Returns 1 with the increase in
 * *period_j, 0 for the first reading (the baseline; *period_j 0), or -1
 * when energy_counter_step refused the step (m->why says why; *period_j 0):
 * the reading is the new baseline (none when it is above the range).
 */
int energy_meter_counter(struct energy_meter *m, uint64_t raw, uint64_t range, double unit_j, double max_w,
			 int64_t now_ns, double *period_j);
/*
 * Say in group's "error" (added to what is there) and once in the log that
 * device key of collector type had its energy counter refused (why, from
 * energy_counter_step): the period has no energy, the counter starts afresh.
 * *noted is set: the group has an error (what the collector's collect()
 * returns).
 */
void energy_counter_refused(json_t *group, int *noted, const char *type, const char *key, const char *why);
/*
 * Take a power reading (W) at now: returns 1 with the trapezoid of this
 * reading and the last over the time between them in *period_j, or 0 for
 * the first (the baseline). Either way the reading counts toward min_w.
 */
int energy_meter_power(struct energy_meter *m, double watts, int64_t now_ns, double *period_j);
/* Count watts toward the lowest power seen (the measured idle power) without integrating it. */
void energy_meter_see_power(struct energy_meter *m, double watts);
/* Forget every reading (the device went away or reset): the next is a baseline. */
void energy_meter_reset(struct energy_meter *m);
/*
 * Write a device object's "energy_joules" (period_j) into d when m has a
 * reading and have_period, else remove it (a device without a source has no
 * energy fields, never 0). "energy_total_joules" is the device's own total
 * (NVIDIA's counter, amdgpu's energy1_input): its collector writes it, as
 * m's total since the monitor's first reading means something else.
 */
void energy_meter_json(const struct energy_meter *m, int have_period, double period_j, json_t *d);

/* ---- the split among processes ------------------------------------------------------ */

/* What the active energy was shared by. */
enum energy_basis { ENERGY_BY_NONE, ENERGY_BY_UTILIZATION, ENERGY_BY_MEMORY, ENERGY_BY_EQUAL };

/* The basis's name in the report ("utilization", "memory", "equal"; "" for none). */
const char *energy_basis_name(enum energy_basis b);

/* One process on a device in one period. */
struct energy_share {
	uint32_t pid;
	double util;   /* its utilization of the device over the period (any unit, >= 0; 0: none seen) */
	double memory; /* its device memory (bytes, >= 0) */
	double joules; /* out: its share of the active energy */
};

/*
 * The entry of pid among (*p)[0..*n), added with no weight when it is not
 * there yet (the array, *cap entries, grows and is the caller's to free).
 * Borrowed: valid until the next call.
 */
struct energy_share *energy_share_of(struct energy_share **p, size_t *n, size_t *cap, uint32_t pid);

/* The split of one device's period energy. */
struct energy_split {
	double idle_j;   /* idle power times the period, at most the energy */
	double active_j; /* the rest */
	enum energy_basis basis; /* how active_j was shared; NONE when there are no processes */
};

/*
 * Split energy_j, spent over period_s seconds by a device whose idle power
 * is idle_w (W; < 0: unknown, then all of it is active), into idle and
 * active, and share the active part among p[0..n) (their joules): by util
 * when any util is above 0, else by memory when any is above 0, else
 * equally. With no process the active energy is nobody's (basis NONE).
 * The shares add up to active_j.
 */
struct energy_split energy_split(double energy_j, double period_s, double idle_w, struct energy_share *p,
				 size_t n);

/*
 * Write a split into a device object d: "idle_power_watts" (when idle_w
 * >= 0), "idle_energy_joules", "active_energy_joules",
 * "energy_attribution" (the basis, when there were processes) and
 * "processes": {"<pid>": joules}, each updated in place (jset.h: a kept
 * object allocates only for a new key); a process no longer there is removed.
 */
void energy_split_json(const struct energy_split *sp, double idle_w, const struct energy_share *p, size_t n,
		       json_t *d);

/*
 * One device's observation for the attribution of one period, as a device
 * collector hands it over (energy_obs_list; the core's attribution phase,
 * host_energy_attribute, does the rest, the same for every kind): the
 * period's energy, the idle power, the processes on the device with their
 * weights, and where the split goes.
 */
struct energy_obs {
	int have;                    /* the period has energy: energy_j over period_s seconds */
	double energy_j, period_s;
	double idle_w;               /* the device's idle power (W; < 0: unknown) */
	const char *uuid;            /* the device's UUID for the ledger (NULL or "": none) */
	struct energy_share *shares; /* the processes (pid, util, memory); their joules are filled in */
	size_t n;
	json_t *d;                   /* the device's object in device_power: the split is written there */
	int64_t now_ns;              /* the cycle's CLOCK_MONOTONIC ns */
};

/*
 * A cycle's observations: a device collector adds one per device whose
 * device_power it collected, and hands them over (the collector_ops
 * energy). What they point to (uuid, shares, d) is borrowed from the
 * collector until its next collect().
 */
struct energy_obs_list {
	struct energy_obs *o;
	size_t n, cap;
};

/* Add a copy of o. */
void energy_obs_add(struct energy_obs_list *l, const struct energy_obs *o);
/* Move every observation of from to the end of to; from is left empty (its room kept). */
void energy_obs_move(struct energy_obs_list *from, struct energy_obs_list *to);
void energy_obs_free(struct energy_obs_list *l); /* its room; NULL-safe */

#endif
