/* SPDX-License-Identifier: MIT */
/*
 * dcgm-exporter compatibility for accel-prom (--collectors FILE).
 *
 * Reads dcgm-exporter's collectors CSV ("FIELD, type, help" per line, "#"
 * comments; etc/default-counters.csv) and turns the NVIDIA device samples of
 * the common mapping (accelerator_*, device_type="nvidia") into the listed
 * DCGM_FI_* series that NVML can provide, with dcgm-exporter's names,
 * labels (gpu, UUID, pci_bus_id, device "nvidia<N>", modelName, Hostname,
 * plus accel-prom's non-empty instance labels, the file's label fields
 * such as DCGM_FI_DRIVER_VERSION, and -k's pod labels: prom_dcgm_report),
 * types and units (FB in MiB,
 * energy in mJ, clocks in MHz, utilization in percent). The table of what is
 * served and from which family is in prom_dcgm.c and docs/nvidia.md.
 *
 * Counters: a DCGM counter made of an accelerator_*_total family is fed the
 * same per-period increments (scaled), so accel-prom's store accumulates it
 * from its own start: rate() and increase() match dcgm-exporter's, the
 * absolute value starts at accel-prom's start rather than at the driver's
 * load. A DCGM counter made of a running-total gauge family is turned into
 * increments here (the first one being the whole total), so it reads the
 * device's own total.
 *
 * Ownership: prom_dcgm_load/parse return a new object, released with
 * prom_dcgm_free after every store that was fed its samples is freed (the
 * samples' families point into it). Not thread-safe: call prom_dcgm_map
 * under the store's lock.
 */
#ifndef ACCEL_PROM_DCGM_H
#define ACCEL_PROM_DCGM_H

#include "../samples.h"

#include <stddef.h>

#define PROM_DCGM_FILE_MAX (1 << 20) /* bytes of a collectors file */
#define PROM_DCGM_LINE_MAX 4096      /* bytes of one of its lines */
#define PROM_DCGM_FIELDS_MAX 1024    /* fields it may list */

struct prom_dcgm;

/*
 * Read a collectors CSV file. A new object, or NULL with *err a new string
 * "FILE:LINE: reason" (or "FILE: reason") that the caller frees.
 */
struct prom_dcgm *prom_dcgm_load(const char *path, char **err);

/* The same from memory (len bytes of text); name stands for the file in messages. */
struct prom_dcgm *prom_dcgm_parse(const char *text, size_t len, const char *name, char **err);

void prom_dcgm_free(struct prom_dcgm *d); /* NULL-safe */

/*
 * The listed fields this build does not serve, for one message each at
 * start: the i-th one's name, with *why (borrowed) saying why and *line the
 * file's line that lists it (each out pointer may be NULL); NULL past the
 * last.
 */
const char *prom_dcgm_unsupported(const struct prom_dcgm *d, size_t i, const char **why, int *line);

/* Number of listed fields that are served (label fields included). */
size_t prom_dcgm_served(const struct prom_dcgm *d);

/*
 * Whether family f is a DCGM family whose series of one GPU replace each
 * other (DCGM_FI_DEV_XID_ERRORS: its err_code and err_msg change with the
 * Xid): its samples name their GPU (device_type, device), and the caller
 * drops a GPU's series that a report did not refresh when it refreshed
 * another, as dcgm-exporter shows only the latest.
 */
int prom_dcgm_replaces(const struct prom_dcgm *d, const struct family *f);

typedef void (*prom_dcgm_emit_fn)(const struct sample *s, void *ud);

/*
 * Map one sample of the common mapping: for each served field it makes,
 * call emit with the DCGM sample (valid during the call only). Returns how
 * many were emitted: 0 for any other sample, the DCGM ones included, so
 * emit may be the caller's own sample callback.
 */
size_t prom_dcgm_map(struct prom_dcgm *d, const struct sample *s, prom_dcgm_emit_fn emit, void *ud);

/*
 * containers: the name dcgm-exporter gives a pod label under its
 * --use-old-namespace (pod_name, pod_namespace, container_name for pod,
 * namespace, container); any other label name as it is. Static strings.
 */
const char *prom_dcgm_pod_label(const char *name);

/*
 * dcgm-exporter's --kubernetes-enable-pod-uid: with on, the series of a
 * GPU's user in a pod carry pod_uid, the pod's UID, beside pod (a
 * process's from its identity, an allocation owner's "pod_uid" when the
 * producer knew it); off (the default), none.
 */
void prom_dcgm_set_pod_uid(struct prom_dcgm *d, int on);

/*
 * Learn from a report (borrowed), before its samples are mapped, what the
 * DCGM series need beyond the samples: each NVIDIA GPU's label fields
 * (its device_info: DCGM_FI_DRIVER_VERSION from driver_version, ...) and
 * last Xid (its device_errors' last_xid, 0 while it has none: the value of
 * DCGM_FI_DEV_XID_ERRORS, made once per report that has it, with err_code
 * and err_msg); and, for containers, which containers use each NVIDIA GPU (its device_memory's
 * "containers", else "pods": docs/report-format.md §6b; kept until a later
 * device_memory says otherwise). As dcgm-exporter -k does, each GPU's
 * DCGM_FI_* series then carry pod, namespace and container, one series per
 * container when several share the GPU (a time-sliced or MPS GPU), none
 * when no pod uses it.
 */
void prom_dcgm_report(struct prom_dcgm *d, json_t *report);

#endif
