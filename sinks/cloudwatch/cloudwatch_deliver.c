/* SPDX-License-Identifier: MIT */
/*
 * Batch delivery with retries and fault isolation; see cloudwatch_deliver.h.
 */
#include "cloudwatch_deliver.h"
#include "../../common/http.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t real_ms(void *ud)
{
	(void)ud;
	return clock_real_ns() / NS_PER_MS;
}

static void plain_sleep(void *ud, int64_t ms)
{
	(void)ud;
	sleep_ns(ms * NS_PER_MS, NULL);
}

static int never(void *ud)
{
	(void)ud;
	return 0;
}

void cw_deliver_init(struct cw_deliver *dl, const char *enc_namespace, int storage_resolution)
{
	memset(dl, 0, sizeof(*dl));
	dl->body.enc_namespace = enc_namespace;
	dl->body.storage_resolution = storage_resolution;
	dl->body.max_bytes = CW_MAX_BODY;
	dl->body.max_datums = CW_MAX_DATUMS;
	dl->backoff_min_ms = 1000;
	dl->backoff_max_ms = 60000;
	dl->max_age_ms = 14LL * 24 * 3600 * 1000;
	dl->wall_ms = real_ms;
	dl->sleep_ms = plain_sleep;
	dl->give_up = never;
	dl->seed = 1;
	buf_init(&dl->bodybuf, CW_MAX_BODY + 4096);
}

void cw_deliver_free(struct cw_deliver *dl)
{
	buf_free(&dl->bodybuf);
}

int64_t cw_backoff_ms(const struct cw_deliver *dl, unsigned attempt, unsigned *seed)
{
	return http_backoff_ms(dl->backoff_min_ms, dl->backoff_max_ms, attempt, seed);
}

void cw_describe(const char *name, const struct cw_dim *dims, size_t ndims, double value, int64_t ts_ms, char *dst,
		 size_t size)
{
	char ts[CW_TS_LEN], v[CW_DOUBLE_LEN];
	size_t n = (size_t)snprintf(dst, size, "%s{", name);

	for (size_t j = 0; j < ndims && n < size; j++)
		n += (size_t)snprintf(dst + n, size - n, "%s%s=%s", j ? "," : "", dims[j].name, dims[j].value);
	cw_format_ts(ts_ms, ts);
	cw_format_double(value, v);
	if (n < size)
		snprintf(dst + n, size - n, "} %s at %s", v, ts);
}

static void describe(const struct cw_datum *d, char *dst, size_t size)
{
	cw_describe(d->series->name, d->series->dims, d->series->ndims, d->value, d->ts_ms, dst, size);
}

static void drop(struct cw_deliver *dl, const struct cw_datum *d, unsigned char *dead, size_t i,
		 const struct cw_reply *r)
{
	char what[512];

	describe(&d[i], what, sizeof(what));
	dead[i] = 1;
	dl->rejected++;
	log_warn("cloudwatch: CloudWatch rejected datum %s: %s: %s (dropped it alone; %llu rejected so far)", what,
		 r->err.code[0] ? r->err.code : "HTTP error", r->err.message[0] ? r->err.message : r->detail,
		 (unsigned long long)dl->rejected);
}

/* Drop what has become too old for CloudWatch while it waited. */
static void drop_stale(struct cw_deliver *dl, const struct cw_datum *d, size_t a, size_t e, unsigned char *dead)
{
	int64_t oldest = dl->wall_ms(dl->ud) - dl->max_age_ms;

	for (size_t i = a; i < e; i++) {
		if (dead[i] || d[i].ts_ms >= oldest)
			continue;
		char what[512];

		describe(&d[i], what, sizeof(what));
		dead[i] = 1;
		dl->stale++;
		log_warn("cloudwatch: dropped datum %s: older than CloudWatch accepts (%llu too old so far)", what,
			 (unsigned long long)dl->stale);
	}
}

struct range {
	size_t a, e;
};

#define STACK_MAX 128

size_t cw_deliver_batch(struct cw_deliver *dl, const struct cw_datum *d, size_t n, unsigned char *dead)
{
	struct range st[STACK_MAX];
	size_t members[CW_MAX_DATUMS], nm, next, left = 0;
	int sp = 0;

	if (dl->body.max_datums > CW_MAX_DATUMS)
		dl->body.max_datums = CW_MAX_DATUMS;
	st[sp++] = (struct range){ 0, n };
	while (sp) {
		struct range *r = &st[sp - 1];
		struct cw_reply rep;

		while (r->a < r->e && dead[r->a])
			r->a++;
		if (r->a == r->e) {
			sp--;
			continue;
		}
		drop_stale(dl, d, r->a, r->e, dead);
		next = cw_body_build(&dl->bodybuf, &dl->body, d, r->a, r->e, dead, members, &nm);
		if (!nm) {
			r->a = next;
			continue;
		}
		memset(&rep, 0, sizeof(rep));
		dl->requests++;
		dl->tp.send(dl->tp.ud, &dl->bodybuf, nm, &rep);
		switch (rep.outcome) {
		case CW_SENT:
			for (size_t k = 0; k < nm; k++)
				dead[members[k]] = 1;
			dl->sent += nm;
			dl->attempt = 0;
			r->a = next;
			break;
		case CW_REJECTED:
		case CW_TOO_LARGE:
			dl->attempt = 0;
			if (rep.outcome == CW_REJECTED && rep.err.member >= 1 && (size_t)rep.err.member <= nm) {
				drop(dl, d, dead, members[rep.err.member - 1], &rep);
			} else if (nm == 1) {
				drop(dl, d, dead, members[0], &rep);
			} else if (sp + 2 <= STACK_MAX) {
				/* Halve: [a, mid) first, then [mid, next), then the rest of the range. */
				size_t a = r->a, e = r->e, mid = members[nm / 2];

				log_info("cloudwatch: %s (%s) for %zu datums: sending them in halves to find the bad one",
					 rep.err.code[0] ? rep.err.code : "rejected", rep.detail, nm);
				*r = (struct range){ next, e };
				st[sp++] = (struct range){ mid, next };
				st[sp++] = (struct range){ a, mid };
			} else {
				drop(dl, d, dead, members[0], &rep);
			}
			break;
		case CW_AUTH:
		case CW_RETRY:
		default: {
			int64_t wait;

			if (dl->give_up(dl->ud))
				goto out;
			dl->attempt++;
			dl->retries++;
			wait = cw_backoff_ms(dl, dl->attempt, &dl->seed);
			log_warn("cloudwatch: PutMetricData of %zu datums failed: %s; retrying in %lld ms (try %u)", nm,
				 rep.detail, (long long)wait, dl->attempt + 1);
			if (rep.outcome == CW_AUTH && dl->on_auth)
				dl->on_auth(dl->ud);
			dl->sleep_ms(dl->ud, wait);
			if (dl->give_up(dl->ud))
				goto out;
			break;
		}
		}
	}
out:
	for (size_t i = 0; i < n; i++)
		left += !dead[i];
	return left;
}
