/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the kubelet's pod-resources answer as it comes off the
 * socket (a gRPC frame and its protobuf message) -> monitor/http/grpc.c's
 * grpc_unframe -> monitor/host/podres_table.c, as a List answer and as a
 * GetAllocatableResources answer; the bare input is also decoded as a
 * message without its frame, for the protobuf decoder's sake.
 *
 * Checked on each table: every string of every record is there (never
 * NULL), the records of a DRA device have no device id, and a lookup of
 * each record's own id (or DRA device name) finds a run of records that
 * holds it. A violation aborts, which libFuzzer reports with the input.
 *
 * Build and run: tests/fuzz/run.sh podres (make fuzz), or tests/fuzz/build.sh DIR podres. The seed
 * corpus is tests/helpers/podres_server.py --seeds (tests/fuzz/seed.sh).
 */
#include "../../monitor/host/podres_table.h"
#include "../../monitor/http/grpc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct podres_table *t)
{
	for (size_t i = 0; i < podres_table_size(t); i++) {
		const struct podres_alloc *a = podres_table_at(t, i);
		const char *f[] = { a->resource, a->device_id, a->ns, a->pod, a->container,
				    a->claim, a->claim_ns, a->driver, a->pool, a->device };
		const char *key = a->device_id[0] ? a->device_id : a->device;
		const struct podres_alloc *const *r;
		size_t n, j;

		for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++)
			if (!f[k])
				abort();
		if (!key[0] || !strncmp(key, "::", 2))
			continue; /* an empty key is found by no lookup */
		r = podres_lookup(t, key, &n);
		for (j = 0; j < n && r[j] != a; j++)
			;
		if (j == n)
			abort();
	}
}

static void decode(enum podres_kind kind, const uint8_t *msg, size_t len)
{
	struct podres_table *t = NULL;
	char err[256];

	if (podres_table_decode(kind, msg, len, 4096, &t, err, sizeof(err))) {
		if (t || !err[0])
			abort();
		return;
	}
	check(t);
	podres_table_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *msg;
	size_t mlen;
	char err[256];

	if (!grpc_unframe(data, size, &msg, &mlen, err, sizeof(err))) {
		decode(PODRES_LIST, msg, mlen);
		decode(PODRES_ALLOCATABLE, msg, mlen);
	} else if (!err[0]) {
		abort();
	}
	decode(PODRES_LIST, data, size);
	return 0;
}
