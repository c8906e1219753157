/* SPDX-License-Identifier: MIT */
/*
 * NVML events as they happen, for the NVIDIA collector (coll_nvidia.c):
 * XID errors with their codes and times, double- and single-bit ECC
 * events, clock-change events and lost GPUs, counted per device and
 * reported per period in device_errors (docs/nvidia.md, "Events").
 *
 * nvmlEventSetWait blocks, so one thread of this module waits on the event
 * set and queues each event for the producer, waking its event loop
 * (loop_async_send, monitor/core/loop.h); the producer's thread
 * does all the counting and never waits. nvidia_events.c says why a
 * thread and not a helper process.
 *
 * Every function here runs on the producer's thread; the object is not
 * shared with anything but the module's own waiting thread.
 */
#ifndef ACCEL_NVIDIA_EVENTS_H
#define ACCEL_NVIDIA_EVENTS_H

#include <jansson.h>
#include <stddef.h>

#include "nvml.h"
#include "nvidia_ledger.h"

struct loop;
struct nv_events;

/*
 * Events for ndev device slots from the NVML library dl (dlopen'ed and
 * initialized; borrowed, and it must stay loaded until nv_events_free).
 * Creates the event set when the library has event sets (the waiting
 * thread starts at nv_events_start); without them, or when the set cannot be created, the
 * object still counts lost GPUs (nv_events_lost). With loop (may be NULL),
 * arriving events are taken as they come; otherwise at each report.
 * lc (borrowed, may be NULL): the producer thread's call ledger context;
 * the waiting thread records in the same ledger. Never NULL (new object).
 */
struct nv_events *nv_events_new(void *dl, struct loop *loop, size_t ndev, struct nv_lctx *lc);

/*
 * Register device slot i (NVML index gpu) with its handle h for the events
 * it supports (at open, and again when it answers after a loss).
 */
void nv_events_register(struct nv_events *ev, size_t i, unsigned gpu, nvmlDevice_t h);

/*
 * Start the waiting thread. The registrations made before it (at start)
 * are queued: the thread makes them before its first wait, so they do not
 * delay the first report; later ones are made at once. NULL-safe.
 */
void nv_events_start(struct nv_events *ev);

/* A read found device slot i lost: one loss until it is registered again. */
void nv_events_lost(struct nv_events *ev, size_t i);

/*
 * Take the events that arrived, then write device slot i's fields into its
 * device_errors object o ("xid_errors", "xid_events", "last_xid",
 * "last_xid_time", "events") and start its next period.
 */
void nv_events_report(struct nv_events *ev, size_t i, json_t *o);

/* Stop the thread (it notices within one wait timeout), free the set. NULL-safe. */
void nv_events_free(struct nv_events *ev);

#endif
