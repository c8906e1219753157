/* SPDX-License-Identifier: MIT */
/*
 * Energy per model: an endpoint runtime's energy over its execution_stats
 * period, and its split among the server's models (docs/energy.md).
 *
 * The server's energy comes from the host's energy ledger (energy.h),
 * which the device collectors feed: the shares of the processes of the
 * server (its listening process, and the processes in the same container
 * or pod as it, or on the host its descendants) when any of them has a
 * share, else the whole energy of the devices the server reports on itself (Triton's nv_gpu_* UUIDs, the
 * group's server_devices). Each is the increase since the runtime's
 * previous execution_stats, so it covers the runtime's own period.
 *
 * The models get that energy in proportion to their compute time in the
 * period (mean_seconds.compute_infer times completed requests: Triton's
 * compute_infer duration, vLLM's and TGI's inference-time histograms' sums,
 * OVMS's inference time), else their request time (mean_seconds.request
 * times completed: TorchServe's inference latency), else their completed
 * requests.
 */
#ifndef ACCEL_MODEL_ENERGY_H
#define ACCEL_MODEL_ENERGY_H

#include "infer.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct host;

/*
 * Split energy_j among the models of an execution_stats group (st: the
 * records infer_execution_stats gave with it), writing in each model
 * version's object "energy_joules", "energy_per_request_joules" (when it
 * completed requests) and "tokens_per_joule" (generation tokens per joule,
 * when it counts tokens and had energy), and in group "energy_joules",
 * "energy_source" (source: "processes" or "devices") and
 * "energy_attribution" ("compute_time", "request_time" or "requests";
 * absent when no model completed a request, then the models get nothing).
 */
void model_energy_split(json_t *group, const struct infer_stats *st, double energy_j, const char *source);

/* What a runtime keeps between two execution_stats: the ledger's values it last took. */
struct server_energy {
	struct se_proc {
		uint64_t serial; /* the ledger's process (energy_ledger_proc.serial) */
		double j;        /* its joules then */
	} *prev;             /* in the order of their serials, as the ledger lists them */
	size_t n, a;
	uint64_t serial;     /* the ledger's next serial then: a process with one at least this is new since */
	struct se_dev {
		char uuid[96];
		double j;
	} *dprev;            /* the devices' joules then */
	size_t nd, ad;
	int have;            /* a baseline was taken */
	int from_devices;    /* ... of the devices (else of the processes): a change of source is a new baseline */
};

/*
 * The server's energy since the previous call (above), from h's ledger:
 * the processes of listener (pid; 0: none known) else the devices the
 * server reports on (st's, its server_devices). A process the last call
 * saw counts its joules since then; one new to the ledger since, all of
 * its joules; one that was in the ledger then but not among the server's
 * processes, none (it starts from now). 0 with *j and *source
 * ("processes" or "devices"), -EAGAIN on the first call or when the
 * source changed (a baseline), or -ENOENT when the ledger has none of
 * them (no energy fields then). se's baseline moves to now.
 */
int server_energy_take(struct server_energy *se, struct host *h, pid_t listener, const struct infer_stats *st,
		       double *j, const char **source);
void server_energy_free(struct server_energy *se); /* NULL-safe; se itself is the caller's */

#endif
