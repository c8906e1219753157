/* SPDX-License-Identifier: MIT */
/*
 * The groups' slots: which jobs are due, and where each goes next. It
 * keeps no clock and wakes nobody: each job's loop timer (loop.h, the
 * producer's one clock) fires at its next_due, and the monitor then takes
 * every job due by then from here, so tests drive it with a fake clock.
 *
 * Each job runs on its own period. next_due always advances by whole
 * periods from the first due time, so there is no drift over hours; a slot
 * that has already passed when a job is requeued is skipped, never
 * replayed in a burst. The jobs are a small array of borrowed pointers,
 * scanned linearly, as the loop scans its timers.
 */
#ifndef ACCEL_SCHED_H
#define ACCEL_SCHED_H

#include <stddef.h>
#include <stdint.h>

struct sched_job {
	int64_t period;   /* ns */
	int64_t next_due; /* ns, monotonic */
	uint64_t order;   /* tie-break: insertion order */
	int taken;        /* internal: taken, not yet requeued */
	void *data;       /* the caller's */
};

struct sched {
	struct sched_job **jobs;
	size_t n, cap;
	uint64_t added;
};

void sched_init(struct sched *s);
void sched_free(struct sched *s); /* frees the array, not the jobs */

/* Add a job (borrowed: it must outlive its time in the scheduler) first due at first_due. */
void sched_add(struct sched *s, struct sched_job *job, int64_t first_due);

/* Earliest next_due of the jobs not taken, or INT64_MAX when none. */
int64_t sched_next_due(const struct sched *s);

/*
 * Take every job not taken that is due at or before now + window
 * (coalescing jobs due within a few milliseconds into one report) and store
 * them in out, earliest first, ties in insertion order. Returns how many
 * (at most max).
 */
size_t sched_take(struct sched *s, int64_t now, int64_t window, struct sched_job **out, size_t max);

/*
 * Put a taken job back: next_due advances by one period, then by as many
 * more as needed to be after now. Returns the number of slots skipped.
 */
unsigned sched_requeue(struct sched *s, struct sched_job *job, int64_t now);

#endif
