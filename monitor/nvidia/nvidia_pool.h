/* SPDX-License-Identifier: MIT */
/*
 * NVML's blocking reads in parallel, for the NVIDIA collector
 * (coll_nvidia.c): nvmlDeviceGetPcieThroughput samples for about 20 ms per
 * call, so reading TX and RX of 8 GPUs one after the other would take
 * 320 ms of the producer's time each period. A small pool of threads makes
 * all of a period's calls at once (one job per GPU and direction), so the
 * batch takes about one call's time whatever the number of GPUs; the
 * collector starts it ahead of the group's due time (its asynchronous
 * fetch, collector.h) and the loop is woken (loop_async_send) when it is
 * complete, so no report waits for it.
 *
 * Functions here run on the producer's thread; the workers only call the
 * NVML function and store its result.
 */
#ifndef ACCEL_NVIDIA_POOL_H
#define ACCEL_NVIDIA_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "nvml.h"
#include "nvidia_ledger.h"

struct loop;
struct nv_pool;

/*
 * A pool for ndev device slots reading with fn (borrowed: the library stays
 * loaded until nv_pool_free). With loop (may be NULL), a batch's end is
 * heard there and calls the batch's done callback. No thread starts before
 * the first batch. lc (borrowed, may be NULL): the caller's thread's call
 * ledger context, whose ledger the workers' calls go to as well. New
 * object, never NULL.
 */
struct nv_pool *nv_pool_new(nvml_pcie_fn fn, struct loop *loop, size_t ndev, struct nv_lctx *lc);

/*
 * Start a batch: TX and RX of each slot whose handle h[i] is not NULL
 * (h has ndev entries), except a call of an earlier batch still in the
 * driver (that one is "not returned" in this batch). When every call of the
 * batch has returned, done(ud) runs from the loop (if any; never from inside
 * this call). 0.
 */
int nv_pool_start(struct nv_pool *p, const nvmlDevice_t *h, void (*done)(void *ud), void *ud);

/* Forget the current batch's done callback (its calls finish on their own). */
void nv_pool_forget(struct nv_pool *p);

/* Wait for the current batch until deadline (CLOCK_MONOTONIC ns). 1 complete, 0 not. */
int nv_pool_wait(struct nv_pool *p, int64_t deadline);

/*
 * Slot i's result for counter c (NVML_PCIE_UTIL_TX_BYTES or _RX_BYTES) in
 * the current batch: NVML's return, and *kbs when NVML_SUCCESS;
 * NVML_ERROR_TIMEOUT when that call has not returned yet, or the slot was
 * not in the batch.
 */
nvmlReturn_t nv_pool_result(struct nv_pool *p, size_t i, int c, unsigned *kbs);

/* Stop the workers (each finishes the call it is in) and free. NULL-safe. */
void nv_pool_free(struct nv_pool *p);

#endif
