/* SPDX-License-Identifier: MIT */
/*
 * Which pod holds which device: a client of the kubelet's pod-resources
 * gRPC service on its unix socket (/var/lib/kubelet/pod-resources/
 * kubelet.sock), the source NVIDIA's dcgm-exporter labels GPUs from. It
 * answers for every device a device plugin or a DRA claim gave a
 * container, whether or not the device is busy, so an idle GPU is still
 * known to be a pod's.
 *
 * The calls are unary gRPC (grpc.h) over the producer's one HTTP client
 * (HTTP/2 with prior knowledge on the unix socket), on its loop: nothing
 * waits for them. List runs at most once per refresh period, and again
 * soon after podres_kick (a new device or process: rate-limited);
 * GetAllocatableResources once at the start and again after a call that
 * could not reach the kubelet (it may have restarted, with other devices). The v1 service is asked first; a kubelet
 * that answers UNIMPLEMENTED is asked v1alpha1's List from then on.
 * An answer is decoded into a table (podres_table.h) on the loop when it
 * is small, on a loop worker when it is large.
 *
 * A failed call keeps the last good table; its error (socket path,
 * method and what failed) is logged once per distinct failure and kept
 * for the report (podres_error).
 *
 * Ownership: the client borrows its http_async (and so its loop); the
 * tables are the client's, borrowed by a reader until the loop next runs a
 * callback of the client's (a new answer replaces them).
 */
#ifndef ACCEL_PODRES_H
#define ACCEL_PODRES_H

#include "podres_table.h"
#include "../../common/timeutil.h"

#include <stddef.h>
#include <stdint.h>

struct podres;
struct http_async;

#define PODRES_SOCKET_DEFAULT "/var/lib/kubelet/pod-resources/kubelet.sock"
#define PODRES_REFRESH_DEFAULT_NS (30 * NS_PER_S)
#define PODRES_TIMEOUT_MS 5000                        /* one call, connection included */
#define PODRES_ANSWER_MAX ((size_t)16 << 20)          /* bytes of one answer's message */
#define PODRES_ALLOCS_MAX ((size_t)1 << 20)           /* records of one answer */
#define PODRES_KICK_MIN_NS (5 * NS_PER_S)             /* the shortest time between two Lists a kick asks for */
#define PODRES_DECODE_ON_LOOP_MAX ((size_t)64 << 10)  /* bytes decoded on the loop (about 0.3 ms); larger: a worker */

struct podres_opts {
	const char *socket;     /* the kubelet's socket path (copied) */
	int64_t refresh_ns;     /* at most one List per period; 0: PODRES_REFRESH_DEFAULT_NS */
	int64_t timeout_ms;     /* 0: PODRES_TIMEOUT_MS */
	size_t max_bytes;       /* 0: PODRES_ANSWER_MAX */
	int64_t kick_min_ns;    /* 0: PODRES_KICK_MIN_NS */
};

/*
 * The socket a client should ask, from the option opt (NULL: unset) and
 * the host's / (rootfs, NULL: "/"): opt itself; unset, the kubelet's
 * default path under rootfs when it exists; NULL (no client) for "" or a
 * default path that does not exist. A new string (the caller's), or NULL.
 */
char *podres_socket_resolve(const char *opt, const char *rootfs);

/* A client on http (borrowed); its first calls start from the loop at once. */
struct podres *podres_new(struct http_async *http, const struct podres_opts *o);
void podres_free(struct podres *p); /* NULL-safe; stops a running call (waits for a decode that runs) */

/*
 * Something new appeared (a device, a process): List again soon, at most
 * once per kick_min_ns after the last List started. NULL-safe.
 */
void podres_kick(struct podres *p);

/* The last good List's table (borrowed), or NULL before one came. NULL-safe. */
const struct podres_table *podres_current(const struct podres *p);
/* The last good GetAllocatableResources' table (borrowed), or NULL (none yet, or unsupported). NULL-safe. */
const struct podres_table *podres_allocatable(const struct podres *p);
/* The last call's error, "" when it succeeded (or none ended yet). NULL-safe (""). */
const char *podres_error(const struct podres *p);
/* The API version List is asked in: "v1", or "v1alpha1" after an UNIMPLEMENTED. */
const char *podres_version(const struct podres *p);
/* How many List calls have started (tests, the cadence). */
unsigned long podres_lists(const struct podres *p);
/* How many good List answers have been decoded (tests). */
unsigned long podres_updates(const struct podres *p);
/* How many cycles (GetAllocatableResources if due, then List) have ended, well or not (tests). */
unsigned long podres_cycles(const struct podres *p);
/* The socket path it asks (borrowed). */
const char *podres_socket(const struct podres *p);

#endif
