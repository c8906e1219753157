/* SPDX-License-Identifier: MIT */
/*
 * Getting a batch of datums into CloudWatch without losing one that
 * CloudWatch would take: requests within PutMetricData's limits, retries
 * with exponential backoff and jitter on anything that is not the data's
 * fault (network errors, 5xx, throttling, credentials), and on a 400 that
 * names bad data, finding the datum at fault (the member CloudWatch names,
 * else by halving the request) and dropping only it.
 *
 * The transport is an ops table so the same logic drives libcurl
 * (cloudwatch_http.c), --dry-run's printer and the unit tests' fakes.
 */
#ifndef ACCEL_CLOUDWATCH_DELIVER_H
#define ACCEL_CLOUDWATCH_DELIVER_H

#include "cloudwatch_query.h"
#include "cloudwatch_series.h"
#include "../../common/util.h"

#include <stddef.h>
#include <stdint.h>

enum cw_outcome {
	CW_SENT,      /* 2xx */
	CW_RETRY,     /* network error, timeout, 5xx, throttling, an endpoint that answers nonsense */
	CW_AUTH,      /* 403: credentials expired or refused; refresh them, then retry */
	CW_REJECTED,  /* 400 about the data: find the datum at fault */
	CW_TOO_LARGE, /* 413: split */
};

struct cw_reply {
	enum cw_outcome outcome;
	long status;            /* HTTP status, 0 when none came */
	struct cw_error err;    /* CloudWatch's Code and Message when it sent them */
	char detail[256];       /* what went wrong, in words */
};

struct cw_transport {
	/* Send one PutMetricData body holding ndatums datums. Fills r; returns 0 (the outcome says the rest). */
	int (*send)(void *ud, const struct buf *body, size_t ndatums, struct cw_reply *r);
	void *ud;
};

struct cw_deliver {
	struct cw_body_opts body;     /* namespace, resolution, limits */
	struct cw_transport tp;
	int64_t backoff_min_ms;       /* first retry waits about this long */
	int64_t backoff_max_ms;       /* cap */
	int64_t max_age_ms;           /* datums older than this at send time are dropped (two weeks) */
	int64_t (*wall_ms)(void *ud); /* unix ms now */
	/* Wait ms, returning early when it is time to give up. */
	void (*sleep_ms)(void *ud, int64_t ms);
	/* 1 when retrying must stop (the exit deadline passed). */
	int (*give_up)(void *ud);
	/* Called before a retry after CW_AUTH (refresh the credentials). May be NULL. */
	void (*on_auth)(void *ud);
	void *ud;                     /* of wall_ms, sleep_ms, give_up and on_auth */
	unsigned seed;                /* jitter */
	unsigned attempt;             /* consecutive failed tries */
	/* counters, ever */
	uint64_t requests, sent, retries, rejected, stale;
	struct buf bodybuf;           /* reused between requests */
};

/* Set defaults: 1 s to 60 s backoff, two weeks, the real clock, CloudWatch's limits. */
void cw_deliver_init(struct cw_deliver *dl, const char *enc_namespace, int storage_resolution);
void cw_deliver_free(struct cw_deliver *dl);

/*
 * Deliver d[0..n). dead[i] is set for each datum delivered or dropped
 * (rejected by CloudWatch, or too old), each drop logged with the reason.
 * Returns the number of datums neither delivered nor dropped: 0 unless
 * give_up() said to stop.
 */
size_t cw_deliver_batch(struct cw_deliver *dl, const struct cw_datum *d, size_t n, unsigned char *dead);

/* "NeuronCoreUtilization{InstanceId=i-1,NeuronCore=0} 42.0 at 2026-...": a datum in messages. */
void cw_describe(const char *name, const struct cw_dim *dims, size_t ndims, double value, int64_t ts_ms, char *dst,
		 size_t size);

/* The wait before retry number attempt (1, 2, ...): http_backoff_ms with the deliverer's bounds. */
int64_t cw_backoff_ms(const struct cw_deliver *dl, unsigned attempt, unsigned *seed);

#endif
