/* SPDX-License-Identifier: MIT */
/*
 * Pod and container names from the kubelet's /pods endpoint, for what the
 * runtimes' state files do not name. The producer links no HTTP or TLS
 * library and never blocks: the fetch is made by the accel-imds helper
 * (`accel-imds --kubelet-pods URL [--token-file F] [--ca-file F]`, see
 * kubelet_fetch.c), run the way instance.c runs it for EC2 metadata, whose
 * compact answer ({"error": "", "pods": {"<UID>": {"name", "namespace",
 * "containers": {"<container id>": "<name>"}}}}) is read by a watch on the
 * producer's event loop. A lookup answers from the last good answer at once;
 * a miss starts a fetch (at most one at a time, at most one per refresh
 * period) whose answer serves later lookups. A failed fetch keeps the last
 * good answer; its error is logged once (again only when it changes), and
 * names fall back to the ids.
 */
#ifndef ACCEL_KUBELET_H
#define ACCEL_KUBELET_H

#include <stdint.h>

#include "container.h"

struct kubelet;
struct loop;

/* Start nothing yet: the first miss fetches. loop is borrowed; o's strings are copied. */
struct kubelet *kubelet_new(struct loop *loop, const char *helper, const struct container_opts *o);
void kubelet_free(struct kubelet *k); /* NULL-safe; kills a running fetch */

/*
 * Fill what out lacks (pod, ns; name when ctr_id is not "") from the last
 * answer about pod pod_uid at now (CLOCK_MONOTONIC ns); on a miss, start a
 * fetch when none runs and the last one started a refresh period ago.
 */
void kubelet_names(struct kubelet *k, const char *pod_uid, const char *ctr_id, int64_t now,
		   struct container_names *out);

/* The last fetch's error ("" when it succeeded or none ran yet), for tests. */
const char *kubelet_error(const struct kubelet *k);
/* How many fetches have started, for tests. */
unsigned long kubelet_fetches(const struct kubelet *k);

/*
 * accel-imds' side (kubelet_fetch.c, linked into accel-imds only): GET
 * URL/pods with the token, verifying against the CA file, and print the
 * compact answer above on stdout. argv: "--kubelet-pods", URL, options.
 * Returns the exit status (0 whenever a line was printed).
 */
int kubelet_fetch_main(int argc, char **argv);

#endif
