/* SPDX-License-Identifier: MIT */
/*
 * The host's energy ledger: joules attributed since start to each process
 * (its shares of the active energy) and spent by each device (by UUID),
 * summed over device collectors. The attribution (host_energy_attribute)
 * adds each period's figures; readers (an endpoint runtime) take
 * differences between their own reports, so each reads over its own
 * period whatever the device groups' periods are. A process is its pid
 * and its start time (a reused pid is another process), found by hash; it
 * is forgotten when it exits (energy_ledger_forget). Each process gets a
 * serial when first added, and the ledger lists them in that order. Owned
 * by the host (host_energy); one thread.
 */
#ifndef ACCEL_LEDGER_H
#define ACCEL_LEDGER_H

#include <stddef.h>
#include <stdint.h>

struct energy_ledger;

/* One process in the ledger (energy_ledger_at). */
struct energy_ledger_proc {
	uint32_t pid;
	uint64_t start;  /* its start time (ticks since boot; 0: unknown) */
	uint64_t serial; /* the order it was first added in: larger is later */
	double j;        /* joules so far */
	int64_t seen;    /* CLOCK_MONOTONIC ns of the last add */
};

struct energy_ledger *energy_ledger_new(void);
void energy_ledger_free(struct energy_ledger *l); /* NULL-safe */
/* Add j joules to the process pid started at start (0: unknown) at now (CLOCK_MONOTONIC ns). */
void energy_ledger_add_process(struct energy_ledger *l, uint32_t pid, uint64_t start, double j, int64_t now_ns);
/*
 * Forget every process not added to at the ledger's last add for which
 * alive(ud, pid, start) says 0 (it exited, or its pid is another
 * process's now); the others keep their order.
 */
void energy_ledger_forget(struct energy_ledger *l, int (*alive)(void *ud, uint32_t pid, uint64_t start), void *ud);
/* Add j joules to the device uuid (not empty). */
void energy_ledger_add_device(struct energy_ledger *l, const char *uuid, double j);
/* The joules of the device uuid so far: 0 and *j, or -ENOENT when never added to. */
int energy_ledger_device(const struct energy_ledger *l, const char *uuid, double *j);
/* The processes: count, and the i-th (0 <= i < count) in the order of their serials. Borrowed. */
size_t energy_ledger_count(const struct energy_ledger *l);
const struct energy_ledger_proc *energy_ledger_at(const struct energy_ledger *l, size_t i);
/* The serial the next new process will get: a process with one at least this is newer than now. */
uint64_t energy_ledger_next_serial(const struct energy_ledger *l);

#endif
