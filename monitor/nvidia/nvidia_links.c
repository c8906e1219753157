/* SPDX-License-Identifier: MIT */
/*
 * NVLink per link; see nvidia_links.h.
 *
 * Which links a GPU has is found once (nvmlDeviceGetNvLinkState for links
 * 0 to NVML_NVLINK_MAX_LINKS-1: NOT_SUPPORTED or INVALID_ARGUMENT means no
 * such link) and kept until the GPU is lost. Each period then costs one
 * state call per link, one nvmlDeviceGetFieldValues call for every link's
 * TX and RX data counters (NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX/RX, KiB
 * since the driver loaded, scopeId = link) and four
 * nvmlDeviceGetNvLinkErrorCounter calls per link (replay, recovery, CRC
 * flit, CRC data) in device_errors.
 *
 * Throughput is the counters' increase over the time between two reads of
 * device_utilization, in bytes per second; error counts are the
 * increase between two reads of device_errors. A counter that went
 * backwards (driver reload, counters reset) starts afresh; the first read
 * after open, a loss or a reset is a baseline only (open primes it, so the
 * first period has data).
 */
#include "nvidia_links.h"
#include "../../common/jset.h"
#include "../../common/util.h"

#include <dlfcn.h>
#include <string.h>

#define NL_NERR 4

static const struct {
	int counter;
	const char *name;
} nl_errs[NL_NERR] = {
	{ NVML_NVLINK_ERROR_DL_REPLAY, "replay" },
	{ NVML_NVLINK_ERROR_DL_RECOVERY, "recovery" },
	{ NVML_NVLINK_ERROR_DL_CRC_FLIT, "crc_flit" },
	{ NVML_NVLINK_ERROR_DL_CRC_DATA, "crc_data" },
};

/* A counter's last reading. */
struct nl_ctr {
	unsigned long long last;
	int have;
};

struct nl_dev {
	int probed;                 /* the links below are known */
	unsigned nlinks;            /* links 0..nlinks-1 exist */
	struct nl_ctr tput[NVML_NVLINK_MAX_LINKS][2]; /* KiB, TX and RX */
	int64_t tput_ns;            /* when tput was read (CLOCK_MONOTONIC) */
	struct nl_ctr err[NVML_NVLINK_MAX_LINKS][NL_NERR];
};

struct nv_links {
	nvml_nvlink_state_fn state;
	nvml_nvlink_error_fn error;
	nvml_fields_fn fields;
	struct nv_lctx *lc; /* the call ledger (borrowed; may be NULL) */
	struct nl_dev *dev;
	size_t ndev;
};

static int lost_rc(nvmlReturn_t rc)
{
	return rc == NVML_ERROR_GPU_IS_LOST || rc == NVML_ERROR_RESET_REQUIRED;
}

struct nv_links *nv_links_new(void *dl, size_t ndev, struct nv_lctx *lc)
{
	struct nv_links *l = xcalloc(1, sizeof(*l));
	void *p;

	/* POSIX: a function's address and a void * share one representation. */
	p = dlsym(dl, "nvmlDeviceGetNvLinkState");
	memcpy(&l->state, &p, sizeof(p));
	p = dlsym(dl, "nvmlDeviceGetNvLinkErrorCounter");
	memcpy(&l->error, &p, sizeof(p));
	p = dlsym(dl, "nvmlDeviceGetFieldValues");
	memcpy(&l->fields, &p, sizeof(p));
	l->ndev = ndev;
	l->lc = lc;
	l->dev = xcalloc(ndev ? ndev : 1, sizeof(*l->dev));
	return l;
}

/* Count slot d's links once. 0, or -1 when lost. */
static int probe(struct nv_links *l, struct nl_dev *d, nvmlDevice_t h, nvmlReturn_t *lost)
{
	unsigned n = 0, active;

	if (d->probed)
		return 0;
	if (l->state)
		for (n = 0; n < NVML_NVLINK_MAX_LINKS; n++) {
			nvmlReturn_t rc = NVC(l->lc, l->state, h, n, &active);

			if (lost_rc(rc)) {
				*lost = rc;
				return -1;
			}
			if (rc != NVML_SUCCESS)
				break;
		}
	d->nlinks = n;
	d->probed = 1;
	return 0;
}

/* Feed a reading; 1 and *delta when there was a baseline (backwards: a fresh start). */
static int step(struct nl_ctr *c, unsigned long long v, unsigned long long *delta)
{
	int had = c->have;

	*delta = v >= c->last ? v - c->last : v;
	c->last = v;
	c->have = 1;
	return had;
}


/* Read the data counters of every link of d (TX, RX). 1 read, 0 not, -1 lost. */
static int read_tput(struct nv_links *l, struct nl_dev *d, nvmlDevice_t h, unsigned long long v[][2], int ok[][2],
		     nvmlReturn_t *lost)
{
	nvmlFieldValue_t f[2 * NVML_NVLINK_MAX_LINKS];
	nvmlReturn_t rc;

	if (!l->fields || !d->nlinks)
		return 0;
	memset(f, 0, sizeof(f));
	for (unsigned k = 0; k < d->nlinks; k++) {
		f[2 * k].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
		f[2 * k].scopeId = k;
		f[2 * k + 1].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
		f[2 * k + 1].scopeId = k;
	}
	rc = NVC(l->lc, l->fields, h, (int)(2 * d->nlinks), f);
	if (lost_rc(rc)) {
		*lost = rc;
		return -1;
	}
	if (rc != NVML_SUCCESS)
		return 0;
	for (unsigned k = 0; k < 2 * d->nlinks; k++) {
		const nvmlFieldValue_t *x = &f[k];
		int good = x->nvmlReturn == NVML_SUCCESS;

		if (lost_rc(x->nvmlReturn)) {
			*lost = x->nvmlReturn;
			return -1;
		}
		if (good && x->valueType == NVML_VALUE_TYPE_UNSIGNED_LONG_LONG)
			v[k / 2][k % 2] = x->value.ullVal;
		else if (good && x->valueType == NVML_VALUE_TYPE_UNSIGNED_LONG)
			v[k / 2][k % 2] = x->value.ulVal;
		else if (good && x->valueType == NVML_VALUE_TYPE_UNSIGNED_INT)
			v[k / 2][k % 2] = x->value.uiVal;
		else
			good = 0;
		ok[k / 2][k % 2] = good;
	}
	return 1;
}

/* Read d's error counters; per link and counter, ok says which were read. 0, or -1 lost. */
static int read_errs(struct nv_links *l, struct nl_dev *d, nvmlDevice_t h, unsigned long long v[][NL_NERR],
		     int ok[][NL_NERR], nvmlReturn_t *lost)
{
	for (unsigned k = 0; k < d->nlinks; k++)
		for (int e = 0; e < NL_NERR; e++) {
			nvmlReturn_t rc = l->error ? NVC(l->lc, l->error, h, k, nl_errs[e].counter, &v[k][e]) : NVML_ERROR_NOT_SUPPORTED;

			if (lost_rc(rc)) {
				*lost = rc;
				return -1;
			}
			ok[k][e] = rc == NVML_SUCCESS;
		}
	return 0;
}

void nv_links_prime(struct nv_links *l, size_t i, nvmlDevice_t h, int64_t mono_ns)
{
	unsigned long long tv[NVML_NVLINK_MAX_LINKS][2], ev[NVML_NVLINK_MAX_LINKS][NL_NERR], delta;
	int tok[NVML_NVLINK_MAX_LINKS][2], eok[NVML_NVLINK_MAX_LINKS][NL_NERR];
	nvmlReturn_t lost;
	struct nl_dev *d;

	if (!l || i >= l->ndev)
		return;
	d = &l->dev[i];
	if (probe(l, d, h, &lost) || !d->nlinks)
		return;
	if (read_tput(l, d, h, tv, tok, &lost) > 0) {
		for (unsigned k = 0; k < d->nlinks; k++)
			for (int c = 0; c < 2; c++)
				if (tok[k][c])
					step(&d->tput[k][c], tv[k][c], &delta);
		d->tput_ns = mono_ns;
	}
	if (!read_errs(l, d, h, ev, eok, &lost))
		for (unsigned k = 0; k < d->nlinks; k++)
			for (int e = 0; e < NL_NERR; e++)
				if (eok[k][e])
					step(&d->err[k][e], ev[k][e], &delta);
}

int nv_links_util(struct nv_links *l, size_t i, nvmlDevice_t h, int64_t mono_ns, json_t *o, nvmlReturn_t *lost)
{
	unsigned long long v[NVML_NVLINK_MAX_LINKS][2], delta;
	int ok[NVML_NVLINK_MAX_LINKS][2], r;
	struct nl_dev *d;
	json_t *links;
	int64_t dt;
	char key[8];

	if (!l || i >= l->ndev)
		return 0;
	d = &l->dev[i];
	if (probe(l, d, h, lost))
		return -1;
	if (!d->nlinks) {
		json_object_del(o, "nvlink");
		return 0;
	}
	links = jset_obj(o, "nvlink");
	for (unsigned k = 0; k < d->nlinks; k++) {
		unsigned active = 0;
		nvmlReturn_t rc = NVC(l->lc, l->state, h, k, &active);
		json_t *e;

		if (lost_rc(rc)) {
			*lost = rc;
			return -1;
		}
		snprintf(key, sizeof(key), "%u", k);
		e = jset_obj(links, key);
		if (rc == NVML_SUCCESS)
			json_object_set_new(e, "active", json_boolean(active == NVML_FEATURE_ENABLED));
		else
			json_object_del(e, "active");
	}
	if ((r = read_tput(l, d, h, v, ok, lost)) < 0)
		return -1;
	dt = mono_ns - d->tput_ns;
	for (unsigned k = 0; k < d->nlinks; k++) {
		static const char *const names[2] = { "tx_bytes_per_second", "rx_bytes_per_second" };
		json_t *e;

		snprintf(key, sizeof(key), "%u", k);
		e = jset_obj(links, key);
		for (int c = 0; c < 2; c++) {
			if (r > 0 && ok[k][c] && step(&d->tput[k][c], v[k][c], &delta) && dt > 0)
				jset_real(e, names[c], (double)delta * 1024.0 * 1e9 / (double)dt);
			else
				json_object_del(e, names[c]);
			if (r <= 0 || !ok[k][c])
				d->tput[k][c].have = 0;
		}
		if (!json_object_size(e))
			json_object_del(links, key);
	}
	d->tput_ns = mono_ns;
	if (!json_object_size(links))
		json_object_del(o, "nvlink");
	return 0;
}

int nv_links_errors(struct nv_links *l, size_t i, nvmlDevice_t h, json_t *o, nvmlReturn_t *lost)
{
	unsigned long long v[NVML_NVLINK_MAX_LINKS][NL_NERR], delta;
	int ok[NVML_NVLINK_MAX_LINKS][NL_NERR];
	struct nl_dev *d;
	json_t *links;
	char key[8];

	if (!l || i >= l->ndev)
		return 0;
	d = &l->dev[i];
	if (probe(l, d, h, lost))
		return -1;
	if (!d->nlinks) {
		json_object_del(o, "nvlink_errors");
		return 0;
	}
	if (read_errs(l, d, h, v, ok, lost))
		return -1;
	links = jset_obj(o, "nvlink_errors");
	for (unsigned k = 0; k < d->nlinks; k++) {
		json_t *e;

		snprintf(key, sizeof(key), "%u", k);
		e = jset_obj(links, key);
		for (int c = 0; c < NL_NERR; c++) {
			if (ok[k][c] && step(&d->err[k][c], v[k][c], &delta))
				jset_u64(e, nl_errs[c].name, delta);
			else
				json_object_del(e, nl_errs[c].name);
			if (!ok[k][c])
				d->err[k][c].have = 0;
		}
		if (!json_object_size(e))
			json_object_del(links, key);
	}
	if (!json_object_size(links))
		json_object_del(o, "nvlink_errors");
	return 0;
}

void nv_links_reset(struct nv_links *l, size_t i)
{
	if (l && i < l->ndev)
		memset(&l->dev[i], 0, sizeof(l->dev[i]));
}

void nv_links_free(struct nv_links *l)
{
	if (!l)
		return;
	free(l->dev);
	free(l);
}
