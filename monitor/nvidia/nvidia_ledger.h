/* SPDX-License-Identifier: MIT */
/*
 * The NVML call ledger: a debug mode of the NVIDIA collector that counts
 * every NVML call it makes, with the CPU time (of the calling thread) and
 * the wall time spent in each, by group and function, and prints the table
 * to stderr every N cycles and when the collector closes. On a real driver
 * the CPU time is the driver's (mostly kernel time in its ioctls), so the
 * table attributes a cycle's cost call by call. Set ACCEL_NVML_LEDGER=1
 * (the table at exit) or =N (also every N cycles); docs/nvidia.md.
 *
 * Every NVML call of the collector goes through NVL or NVC with the calling
 * thread's context (struct nv_lctx): the producer's lives in the
 * collector's state, and each worker or event thread keeps one on its
 * stack. Off (no variable), a call costs a NULL test more.
 */
#ifndef ACCEL_NVIDIA_LEDGER_H
#define ACCEL_NVIDIA_LEDGER_H

#include "nvml.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct nv_ledger;

/* One thread's calls: where they are recorded and what they are for; the start of the call in flight. */
struct nv_lctx {
	struct nv_ledger *l; /* borrowed; NULL: the ledger is off */
	const char *group;   /* what the calls are for (a static string: a group's name, "start", "events") */
	int64_t cpu0, wall0; /* the call in flight began at (thread CPU ns, monotonic ns) */
};

/* A ledger when ACCEL_NVML_LEDGER is set (new object), else NULL. */
struct nv_ledger *nv_ledger_new(void);

/* Print the table (title: what it covers) to f. NULL-safe. */
void nv_ledger_print(struct nv_ledger *l, FILE *f, const char *title);

/* A collector cycle began: counted, and every N cycles the table is printed to stderr. NULL-safe. */
void nv_ledger_cycle(struct nv_ledger *l);

/* Print the table to stderr (the totals at close) and free. NULL-safe. */
void nv_ledger_free(struct nv_ledger *l);

/* Record the call that began at c's marks: fn points at the function pointer called (a void (*)(void) size). */
void nv_ledger_add(struct nv_lctx *c, const void *fn, nvmlReturn_t rc);
void nv_ledger_mark(struct nv_lctx *c);

static inline void nv_lbegin(struct nv_lctx *c)
{
	if (c && c->l)
		nv_ledger_mark(c);
}

static inline nvmlReturn_t nv_lend(struct nv_lctx *c, const void *fn, nvmlReturn_t rc)
{
	if (c && c->l)
		nv_ledger_add(c, fn, rc);
	return rc;
}

/*
 * NVL(c, fn, call): call (an expression calling the function pointer fn,
 * an lvalue) recorded in c; its value is call's. NVC(c, fn, args...): the
 * same for fn(args...).
 */
#define NVL(c, fn, call) (nv_lbegin(c), nv_lend((c), (const void *)&(fn), (call)))
#define NVC(c, fn, ...) NVL(c, fn, (fn)(__VA_ARGS__))

#endif
