/* SPDX-License-Identifier: MIT */
/*
 * Device facts one collector hands another: a reading about a device that
 * only some other source can make. An NCS2 stick's temperature, for one, is
 * readable only inside the process that holds the stick (OpenVINO's device
 * API), and inference applications serve it on their own metrics port as
 * prometheus_ncs2_exporter's ncs2_temperature_celsius{name}: the endpoint
 * runtime that scrapes such an application publishes the reading here, and
 * the ncs2 device collector puts it on the stick the publishing process
 * holds open (docs/devices.md says how a fact is matched to a stick).
 *
 * A reader says which device type it reads facts for while it is open
 * (facts_want), and a publisher looks for facts only of wanted types, so an
 * endpoint without an ncs2 collector configured pays nothing for them.
 * A publisher replaces all its facts at once (facts_set) whenever its
 * source gives a new reading, and withdraws them when it fails or closes;
 * each fact says when it was read and until when it may be used, so a
 * reader never takes a reading older than the publisher promised, whatever
 * order the groups of one cycle run in. The producer's one table is the
 * host layer's (host.h), which collectors publish to and read through; it
 * lives as long as the host, across reloads.
 *
 * Ownership: the table owns copies of the facts; pointers it returns are
 * valid until the next facts_set or facts_free.
 */
#ifndef ACCEL_FACTS_H
#define ACCEL_FACTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct fact {
	char device_type[16]; /* the device collector it is for: "ncs2" */
	char name[64];        /* the device as the publisher names it ("MYRIAD", "MYRIAD.1.2-ma2480") */
	char field[32];       /* what: "temperature_celsius" */
	double value;         /* in the field's unit */
	pid_t pid;            /* the process the reading came from; 0: unknown */
	int64_t at_ns;        /* CLOCK_MONOTONIC ns: when it was read */
	int64_t until_ns;     /* CLOCK_MONOTONIC ns: not used after this */
	char source[192];     /* for the report: "runtime http://127.0.0.1:8085/metrics" */
	const void *owner;    /* the publisher (set by facts_set) */
};

#define FACTS_MAX_WANT 8

struct facts {
	struct fact *f;
	size_t n, a;
	struct {
		char device_type[16];
		int readers;
	} want[FACTS_MAX_WANT]; /* the device types someone reads facts for */
};

void facts_init(struct facts *t);
void facts_free(struct facts *t); /* NULL-safe */

/*
 * A reader of device_type's facts opens (delta 1) or closes (delta -1).
 * t may be NULL (then nothing happens).
 */
void facts_want(struct facts *t, const char *device_type, int delta);
/* Does some open reader want device_type's facts? 0 when t is NULL. */
int facts_wanted(const struct facts *t, const char *device_type);

/* Replace every fact owner published by the n facts in f (copied; n = 0 withdraws them). t may be NULL. */
void facts_set(struct facts *t, const void *owner, const struct fact *f, size_t n);

/*
 * The facts for device_type that are still good at now (now <= until_ns),
 * one per call: start with *pos = 0; NULL when there are no
 * more. t may be NULL (no table: no facts).
 */
const struct fact *facts_next(const struct facts *t, const char *device_type, int64_t now, size_t *pos);

#endif
