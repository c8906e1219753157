/* SPDX-License-Identifier: MIT */
/*
 * NVIDIA's Xid catalog: the name NVIDIA gives each Xid code (the driver's
 * "NVRM: Xid" messages, docs.nvidia.com/deploy/xid-errors), as dcgm-exporter
 * 4.x writes it in DCGM_FI_DEV_XID_ERRORS's err_msg label. One row per code
 * in nvidia_xid.c; a code NVIDIA lists as unused or reserved has that word.
 *
 * Ownership: the names are static strings. Thread-safe (read-only data).
 */
#ifndef ACCEL_NVIDIA_XID_H
#define ACCEL_NVIDIA_XID_H

/* The catalog's name of Xid code, or NULL for a code past the catalog (or negative). */
const char *nvidia_xid_name(long long code);

#endif
