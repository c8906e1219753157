/* SPDX-License-Identifier: MIT */
/*
 * The amdgpu collector's DRM clients: each open DRM file of a process, as
 * /proc/PID/fdinfo describes it (Documentation/gpu/drm-usage-stats.rst:
 * drm-driver, drm-pdev, drm-client-id, drm-memory-vram, drm-engine-*),
 * scanned once per cycle for the groups that need them (per-process engine
 * busy time and VRAM, and the energy split's weights). A client is its
 * pid, client id and PCI device; the same client through another fd (dup,
 * fork) counts once. Owned by the collector's state; one thread.
 */
#ifndef ACCEL_AMDGPU_CLIENTS_H
#define ACCEL_AMDGPU_CLIENTS_H

#include "sysfs.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define AMD_ENGINES 12
#define FDINFO_MAX 8192

/* One DRM client (an open DRM file of a process) seen in /proc/PID/fdinfo. */
struct drm_client {
	pid_t pid;
	char pdev[16];
	uint64_t id;                /* drm-client-id */
	uint64_t vram;              /* bytes, latest scan */
	bool have_vram;
	uint64_t ns[AMD_ENGINES];   /* busy ns per engine (state's eng[]), latest scan */
	uint64_t prev_ns[AMD_ENGINES]; /* at the previous utilization report */
	uint32_t engines;           /* engines this client reports (bits of eng[]) */
	int64_t t, prev_t;          /* monotonic ns of the latest scan / of prev_ns */
	uint64_t energy_ns;         /* busy ns over its engines at the last energy split (or its start) */
	uint64_t gen;               /* the scan that last saw it */
};

/* The clients seen, and what the scan keeps between cycles. Zeroed, then cycle = -1: none scanned. */
struct amd_clients {
	struct drm_client *cl;
	size_t ncl, acl;
	char eng[AMD_ENGINES][16]; /* engine names seen so far ("gfx", "compute", ...) */
	size_t neng;
	uint64_t gen;              /* the latest scan */
	int64_t cycle;             /* the cycle of the latest scan */
	bool ok;                   /* and it could list /proc */
	char fdinfo[FDINFO_MAX];   /* the file being read */
};

/*
 * Scan the clients for cycle cy unless they were scanned for it already,
 * through b's procfd (opened on first use from the host's procfs root).
 * s->ok says whether /proc could be listed.
 */
void amd_clients_for_cycle(struct amd_clients *s, struct sysfs_coll *b, const struct cycle *cy);
void amd_clients_free(struct amd_clients *s); /* what s holds; s itself is the caller's */

#endif
