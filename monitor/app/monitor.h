/* SPDX-License-Identifier: MIT */
/*
 * The collection loop's engine: turns a configuration into scheduled jobs
 * (one per metric group, per runtime), runs the jobs that are due, and
 * writes each report as one JSON line.
 *
 * Ownership: a monitor owns its cfg (monitor_new takes it) and borrows its
 * loop and host (host.h), which must outlive it. Every group is a timer on
 * that loop (the producer's one clock), as are the asynchronous sources'
 * fetches: once monitor_start has armed them, turning the loop
 * (loop_run_once) writes each report when it is due. Tests may instead
 * turn the loop until monitor_next_due and call monitor_cycle themselves.
 */
#ifndef ACCEL_MONITOR_H
#define ACCEL_MONITOR_H

#include <stdint.h>

#include "../config/config.h"

#ifndef ACCEL_VERSION
#define ACCEL_VERSION "0.0.0"
#endif

/* Groups due within this window of each other share one report. */
#define COALESCE_NS (5 * 1000 * 1000LL)

struct monitor;
struct host;
struct loop;
struct collector_ops;

/*
 * Apply cfg's roots and host block to the host (host_configure) and open a collector for
 * every system group, runtime and "devices" entry of cfg ("auto": every
 * kind of device found), taking first samples so rate groups have a
 * baseline, and schedule each group one period from now. Takes cfg (its
 * contents are moved; *cfg is left empty). reg is the collectors to open,
 * NULL-terminated (collector.h; NULL: the registry's, collectors()); tests
 * pass their own.
 *
 * A reload passes the running monitor as old (which this frees; NULL at
 * start): a system group, runtime or "devices" entry whose configuration
 * did not change keeps its collector, baseline and schedule, as if there
 * had been no reload; the rest is opened afresh. Sequence numbers go on.
 */
struct monitor *monitor_new(struct cfg *cfg, const struct collector_ops *const *reg, struct loop *loop,
			    struct host *host, struct monitor *old);

/* The root period (ns): a reload waits at least this long after the previous one. */
int64_t monitor_period(const struct monitor *m);

/*
 * --once: start every asynchronous source's fetch now, for a report written
 * at deadline (CLOCK_MONOTONIC ns) by monitor_cycle(m, fd, 1); window (ns)
 * is the time the caller gives them, named in a silent source's error.
 */
void monitor_fetch_all(struct monitor *m, int64_t deadline, int64_t window);

/* Called on the loop after each report a started monitor writes: rc is monitor_cycle's. */
typedef void (*monitor_report_fn)(struct monitor *m, int rc, void *arg);

/*
 * Arm every group's loop timer: at its due time a cycle collects it with
 * every group due within COALESCE_NS, writes the report to fd and calls
 * done(m, rc, arg) (which may call monitor_stop, not monitor_free). A
 * monitor that a reload (monitor_new's old) replaces hands this on: the
 * new one is started with the same fd, done and arg.
 */
void monitor_start(struct monitor *m, int fd, monitor_report_fn done, void *arg);

/* Disarm the groups' timers: no report is written until monitor_start again. */
void monitor_stop(struct monitor *m);

/* When the next group is due (CLOCK_MONOTONIC ns). */
int64_t monitor_next_due(const struct monitor *m);

/*
 * Take the host snapshot (host_snapshot), collect the groups due now (all
 * of them with all != 0, for --once) and write one report line to fd. Returns 0, or -errno from the write
 * (-EPIPE when the reader went away).
 */
int monitor_cycle(struct monitor *m, int fd, int all);

/* The sequence number the next report will carry. */
uint64_t monitor_seq(const struct monitor *m);

void monitor_free(struct monitor *m);

#endif
