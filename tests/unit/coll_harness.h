/* SPDX-License-Identifier: MIT */
/*
 * The harness the sysfs device collectors' unit tests share
 * (test_coll_amdgpu.c, test_coll_neuron.c, test_coll_hwmon.c,
 * test_coll_ncs2.c): a private copy of the fixture trees
 * tests/fixtures/sysfs/TREE and tests/fixtures/proc-devices that a test
 * changes between cycles, read errors injected by openat(), lookups in a
 * group by dotted path, and one collector's state opened on the copy.
 *
 * Read errors are injected by this binary's own openat(), which the
 * collectors' reads resolve to (root reads every file whatever its mode).
 *
 * A test defines COLL_TYPE (the config's device "type", "amdgpu") and
 * COLL_OPS (its ops table, coll_amdgpu_ops), then includes this
 * header first, before any system header. Everything here is static: one
 * test binary includes it once.
 */
#ifndef ACCEL_TEST_COLL_HARNESS_H
#define ACCEL_TEST_COLL_HARNESS_H

#if !defined(COLL_TYPE) || !defined(COLL_OPS)
#error "define COLL_TYPE and COLL_OPS before including coll_harness.h"
#endif

#undef _FORTIFY_SOURCE
#include "../../monitor/core/collector.h"
#include "../../monitor/core/energy.h"
#include "../../monitor/host/host.h"
#include "../../common/jsonw.h"
#include "../../common/log.h"
#include "../../common/util.h"
#include "../../monitor/sysfs/sysfs.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- fault injection: openat of a path ending in fail_name fails with fail_err ---- */

static char fail_name[128];
static int fail_err;

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	char full[4096];
	size_t n, m = strlen(fail_name);

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	/* The whole path: the directory fd's, then path. */
	snprintf(full, sizeof(full), "%s", path);
	if (m && path[0] != '/') {
		char link[64], dir[4000];
		ssize_t k;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
		k = dirfd >= 0 ? readlink(link, dir, sizeof(dir) - 1) : -1;
		if (k > 0) {
			dir[k] = '\0';
			snprintf(full, sizeof(full), "%s/%s", dir, path);
		}
	}
	n = strlen(full);
	if (m && n >= m && !strcmp(full + n - m, fail_name)) {
		errno = fail_err;
		return -1;
	}
	return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}

static void fail_on(const char *name, int err)
{
	snprintf(fail_name, sizeof(fail_name), "%s", name ? name : "");
	fail_err = err;
}

/* ---- a private copy of the fixtures -------------------------------------------------- */

static char work[256], sys_root[300], proc_root[300];

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd)) {
		printf("Bail out! %s\n", cmd);
		exit(2);
	}
}

static void setup(const char *tree)
{
	const char *tmp = getenv("TMPDIR");

	if (!work[0]) {
		snprintf(work, sizeof(work), "%s/accel-" COLL_TYPE ".XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(work)) {
			printf("Bail out! mkdtemp\n");
			exit(2);
		}
	}
	snprintf(sys_root, sizeof(sys_root), "%s/sys", work);
	snprintf(proc_root, sizeof(proc_root), "%s/proc", work);
	sh("rm -rf '%s' '%s' && cp -a tests/fixtures/sysfs/%s '%s' && cp -a tests/fixtures/proc-devices '%s'", sys_root,
	   proc_root, tree, sys_root, proc_root);
}

static void put(const char *root, const char *rel, const char *text)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		printf("Bail out! write %s\n", path);
		exit(2);
	}
}

/* The value at a dotted path ("devices.1.temperatures_celsius.edge"); borrowed, NULL when absent. */
static json_t *jp(json_t *o, const char *path)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
		o = json_object_get(o, k);
	return o;
}

static double jnum(json_t *o, const char *path)
{
	json_t *v = jp(o, path);

	return json_is_number(v) ? json_number_value(v) : -12345.0;
}

static const char *jstr(json_t *o, const char *path)
{
	json_t *v = jp(o, path);

	return json_is_string(v) ? json_string_value(v) : "(absent)";
}

/* The value at a dotted path as the producer writes it (common/jsonw.c); "(absent)" when absent. */
static __attribute__((unused)) const char *jtext(json_t *o, const char *path)
{
	static char text[2][1024]; /* a whole device object fits */
	static int k;
	json_t *v = jp(o, path);
	struct buf b;

	if (!v)
		return "(absent)";
	k ^= 1;
	buf_init(&b, sizeof(text[0]) - 1);
	snprintf(text[k], sizeof(text[k]), "%s", json_write(v, &b) ? "(too long)" : "");
	if (!text[k][0])
		snprintf(text[k], sizeof(text[k]), "%.*s", (int)b.len, b.data);
	buf_free(&b);
	return text[k];
}

static struct cfg_group groups[] = {
	{ GROUP_DEVICE_INFO, 1000 },    { GROUP_DEVICE_UTILIZATION, 1000 }, { GROUP_DEVICE_MEMORY, 1000 },
	{ GROUP_DEVICE_THERMAL, 1000 }, { GROUP_DEVICE_POWER, 1000 },       { GROUP_DEVICE_CLOCKS, 1000 },
	{ GROUP_DEVICE_ERRORS, 1000 },
};
static struct cfg_device cfg = { .type = COLL_TYPE, .select_all = 1, .period_ms = 1000, .groups = groups,
				 .ngroups = 7 };
static struct mon_env env;
extern const struct collector_ops COLL_OPS;
static const struct collector_ops *ops = &COLL_OPS;

/* The host the collectors see (env.host): the private copy's roots, the same for the whole test. */
static struct host *fixture_host(void)
{
	if (!env.host)
		env.host = host_new(&(struct host_opts){ .procfs = proc_root, .sysfs = sys_root, .clk_tck = 100,
							 .page_size = 4096 },
				    NULL);
	return env.host;
}

/* Collect group id for cycle mono (new reference). */
static json_t *collect(void *st, enum group_id id, int64_t mono)
{
	struct cycle cy = { .mono_ns = mono };
	json_t *g = group_new(1.0, "2026-11-21T05:30:00.000Z");
	int rc = ops->collect(st, &cy, &id, 1, g);
	const char *e = json_string_value(json_object_get(g, "error"));

	/* The monitor takes the self-timing's success from collect's return, not from the JSON. */
	ok((rc != 0) == (e && *e), "%s %s: collect returns %d, the group's error is \"%.60s\"", COLL_TYPE,
	   group_name(id), rc, e ? e : "");
	if (ops->energy) { /* the attribution phase, as the monitor runs it after the device groups */
		struct energy_obs_list l = { 0 };

		ops->energy(st, &l);
		host_energy_attribute(env.host, &l);
		energy_obs_free(&l);
	}
	return g;
}

static void *open_state(void)
{
	void *st = NULL;

	fixture_host();
	ops->open(&env, &(struct coll_target){ .dev = &cfg }, &st);
	return st;
}

#endif
