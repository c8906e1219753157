/* SPDX-License-Identifier: MIT */
/*
 * The producer's one descriptor budget. Every part of accel-monitor that
 * keeps descriptors open for a while beyond what the core needs (an
 * endpoint's connection, the process table's kept stat files, the
 * container collector's kept cgroup directories and files) takes them from
 * here, so that together they never starve the rest: a system group that
 * opens a /proc file, reads it and closes it must always find a descriptor.
 *
 * The rule: the budget is the soft RLIMIT_NOFILE less a reserve for the
 * core, FD_BUDGET_CORE (stdio, the loop's and signals' descriptors, the
 * procfs and sysfs roots, a file each synchronous collector opens and
 * closes, NVML's and the worker threads' pipes) plus a sixteenth of the
 * limit for what libraries open on their own (libcurl's resolver threads).
 * A consumer that must have descriptors (an endpoint) takes them or
 * reports that it could not as its own error; a cache that only saves
 * work (kept files) holds at most its share of the budget and, past it or
 * when the budget is spent, opens and closes as it reads.
 *
 * Ownership: the budget is the producer's (main.c); the others borrow it.
 * Everything runs on the loop's thread: no lock.
 */
#ifndef ACCEL_FDBUDGET_H
#define ACCEL_FDBUDGET_H

#include <stddef.h>

#define FD_BUDGET_CORE 32       /* descriptors the core itself may have open at once */
#define FD_BUDGET_MAX (1 << 20) /* an unlimited RLIMIT_NOFILE counts as this */

struct fd_budget {
	size_t limit;     /* the soft RLIMIT_NOFILE it was made from */
	size_t available; /* what the consumers may hold together: limit less the reserve */
	size_t used;      /* what they hold now */
};

/* A budget for a soft limit of limit descriptors (the rule above). */
void fd_budget_init(struct fd_budget *b, size_t limit);
/* The same from this process's RLIMIT_NOFILE now. */
void fd_budget_init_rlimit(struct fd_budget *b);

/* Take n descriptors: 0, or -EMFILE when fewer than n are left (nothing is taken then). */
int fd_budget_take(struct fd_budget *b, size_t n);
/* Give back n taken before. */
void fd_budget_give(struct fd_budget *b, size_t n);
/* How many are left to take. */
size_t fd_budget_left(const struct fd_budget *b);
/* The most one cache may hold: num/den of the budget (at least 1 when the budget is not 0). */
size_t fd_budget_share(const struct fd_budget *b, size_t num, size_t den);
/*
 * A cache that counts its own descriptors (*held as last told, now as it
 * holds them): the budget's count follows, without a check (the cache
 * kept within fd_budget_cap when it opened them).
 */
void fd_budget_hold(struct fd_budget *b, size_t *held, size_t now);
/* The most a cache holding held may hold now: its share, within what is left. */
size_t fd_budget_cap(const struct fd_budget *b, size_t held, size_t num, size_t den);

#endif
