/* SPDX-License-Identifier: MIT */
/*
 * sysfs_bench: the CPU cost of one collection cycle of the sysfs device
 * collectors (amdgpu, neuron, ncs2, hwmon; every device group) on the
 * fixture trees, next to its floor, measured in one process in one run.
 *
 *  - cycle: what monitor_cycle() does for one device block of each kind:
 *    for each of the 7 device groups group_new() and collect() (a new cycle
 *    each time, so devices are rescanned and /proc is searched for DRM
 *    clients and stick users as on a live host), the device_data entries in
 *    a report envelope, serialized with json_write() into a buffer, freed.
 *  - floor: the same file system operations and nothing else. One cycle is
 *    recorded first: every openat, readlinkat and faccessat the collectors
 *    make, with the directory it was relative to (this binary's own
 *    definitions of those functions, which the collectors' calls resolve
 *    to, log them while recording and pass through otherwise). The floor
 *    replays the list: each file opened relative to an already open
 *    directory, read to EOF and closed; each directory opened, listed with
 *    getdents64 and closed; each link read; each access check made. No
 *    parsing, no JSON: no collector can cost less.
 *
 * CPU time is CLOCK_PROCESS_CPUTIME_ID around whole blocks; the blocks
 * alternate floor, cycle, cycle, floor, ... and each figure is the median
 * over the rounds. Each kind is measured on its own, then all four.
 */
#undef _FORTIFY_SOURCE
#include "../common/jsonw.h"
#include "../common/timeutil.h"
#include "../common/util.h"
#include "../monitor/core/collector.h"
#include "../monitor/host/host.h"
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS 99
#define MAX_OPS 20000
#define MAX_DIRS 4096
#define NKINDS 4

enum { EXIT_OK = 0, EXIT_SYSTEM = 1, EXIT_USAGE = 2 };

/* The sysfs collectors (collectors.c registers them). */
extern const struct collector_ops coll_amdgpu_ops, coll_neuron_ops, coll_ncs2_ops, coll_hwmon_ops;
static const struct collector_ops *const kinds[NKINDS] = { &coll_amdgpu_ops, &coll_neuron_ops, &coll_ncs2_ops,
							    &coll_hwmon_ops };
static const enum group_id groups[] = { GROUP_DEVICE_INFO,    GROUP_DEVICE_UTILIZATION, GROUP_DEVICE_MEMORY,
					GROUP_DEVICE_THERMAL, GROUP_DEVICE_POWER,       GROUP_DEVICE_CLOCKS,
					GROUP_DEVICE_ERRORS };

/* ---- recording the collectors' file system operations -------------------------------- */

enum op_kind { OP_FILE, OP_DIR, OP_PATH, OP_LINK, OP_ACCESS };

struct op {
	enum op_kind kind;
	int dir;        /* index into dirs[] */
	char *rel;      /* relative to it */
	int flags;
};

static struct {
	int on;
	struct op ops[MAX_OPS];
	size_t nops;
	char *dirs[MAX_DIRS]; /* directory paths */
	int dirfd[MAX_DIRS];  /* the floor's handles on them */
	size_t ndirs;
} rec;

static int dir_index(int dirfd)
{
	char link[64], path[4096];
	ssize_t n;

	if (dirfd == AT_FDCWD) {
		if (!getcwd(path, sizeof(path)))
			return -1;
	} else {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
		n = readlink(link, path, sizeof(path) - 1);
		if (n <= 0)
			return -1;
		path[n] = '\0';
	}
	for (size_t i = 0; i < rec.ndirs; i++)
		if (!strcmp(rec.dirs[i], path))
			return (int)i;
	if (rec.ndirs == MAX_DIRS)
		return -1;
	rec.dirs[rec.ndirs] = xstrdup(path);
	return (int)rec.ndirs++;
}

static void record(enum op_kind kind, int dirfd, const char *rel, int flags)
{
	int d;

	if (!rec.on || rec.nops == MAX_OPS)
		return;
	rec.on = 0; /* dir_index's own readlink is not the collectors' */
	d = dir_index(dirfd);
	rec.on = 1;
	if (d < 0)
		return;
	rec.ops[rec.nops++] = (struct op){ kind, d, xstrdup(rel), flags };
}

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (rec.on)
		record(flags & O_PATH ? OP_PATH : flags & O_DIRECTORY ? OP_DIR : OP_FILE, dirfd, path, flags);
	return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}

ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t len)
{
	if (rec.on)
		record(OP_LINK, dirfd, path, 0);
	return (ssize_t)syscall(SYS_readlinkat, dirfd, path, buf, len);
}

int faccessat(int dirfd, const char *path, int mode, int flags)
{
	(void)flags;
	if (rec.on)
		record(OP_ACCESS, dirfd, path, mode);
	return (int)syscall(SYS_faccessat, dirfd, path, mode);
}

/* ---- the floor ------------------------------------------------------------------------ */

static char fbuf[65536];

static void floor_once(size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		const struct op *o = &rec.ops[i];
		int dfd = rec.dirfd[o->dir], fd;

		switch (o->kind) {
		case OP_FILE:
			fd = (int)syscall(SYS_openat, dfd, o->rel, O_RDONLY | O_CLOEXEC, 0);
			if (fd >= 0) {
				while (read(fd, fbuf, sizeof(fbuf)) > 0)
					;
				close(fd);
			}
			break;
		case OP_DIR:
			fd = (int)syscall(SYS_openat, dfd, o->rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
			if (fd >= 0) {
				while (syscall(SYS_getdents64, fd, fbuf, sizeof(fbuf)) > 0)
					;
				close(fd);
			}
			break;
		case OP_PATH:
			fd = (int)syscall(SYS_openat, dfd, o->rel, o->flags, 0);
			if (fd >= 0)
				close(fd);
			break;
		case OP_LINK:
			(void)syscall(SYS_readlinkat, dfd, o->rel, fbuf, sizeof(fbuf));
			break;
		case OP_ACCESS:
			(void)syscall(SYS_faccessat, dfd, o->rel, o->flags);
			break;
		}
	}
}

/* ---- the cycle ------------------------------------------------------------------------ */

struct bench {
	struct mon_env env;
	struct cfg_group cg[7];
	struct cfg_device cfg;
	void *state[NKINDS];
	int64_t mono;
	struct buf line;
	size_t line_bytes;
	size_t ndevices[NKINDS];
	/* recorded ops of each kind: [from, to) */
	size_t op_from[NKINDS], op_to[NKINDS];
};

/* One cycle of the kinds k0..k1-1: every group, the report envelope, serialized. */
static void cycle_once(struct bench *b, int k0, int k1)
{
	struct cycle cy;
	json_t *report, *dd = json_array();

	b->mono += NS_PER_S;
	cy.mono_ns = b->mono;
	cy.boot_ns = b->mono;
	cy.real_ns = clock_real_ns();
	iso8601_format(cy.real_ns, cy.iso);
	for (int k = k0; k < k1; k++) {
		json_t *rep = json_object();

		for (size_t g = 0; g < ARRAY_SIZE(groups); g++) {
			json_t *grp = group_new(1.0, cy.iso);

			kinds[k]->collect(b->state[k], &cy, &groups[g], 1, grp);
			json_object_set_new(rep, group_name(groups[g]), grp);
		}
		json_array_append_new(dd, json_pack("{s:s, s:s, s:o}", "device_type", kinds[k]->name, "error", "",
						    "report", rep));
	}
	report = json_pack("{s:s, s:{s:s, s:I}, s:[], s:o, s:{}, s:{}}", "timestamp", cy.iso, "monitor", "version",
			   "bench", "seq", (json_int_t)0, "runtime_data", "device_data", dd, "system_data",
			   "instance_info");
	buf_reset(&b->line);
	json_write(report, &b->line);
	b->line_bytes = b->line.len;
	json_decref(report);
}

struct result {
	double floor[MAX_ROUNDS], cycle[MAX_ROUNDS];
	long n;
};

/* Measure kinds k0..k1-1: rounds blocks of n cycles each, floor and cycle alternating (ABBA). */
static void measure(struct bench *b, int k0, int k1, int rounds, double seconds, struct result *r)
{
	size_t from = b->op_from[k0], to = b->op_to[k1 - 1];
	double t0, per;
	long n = 20;

	/* Calibrate: about seconds of CPU in all, half floor, half cycle. */
	t0 = bench_cpu_us();
	for (long i = 0; i < n; i++)
		cycle_once(b, k0, k1);
	per = (bench_cpu_us() - t0) / (double)n;
	n = (long)(seconds * 1e6 / 2 / rounds / (per > 1 ? per : 1));
	if (n < 20)
		n = 20;
	r->n = n;
	for (int i = 0; i < rounds; i++) {
		for (int half = 0; half < 2; half++) {
			int is_floor = (i + half) % 2 == 0;

			t0 = bench_cpu_us();
			for (long c = 0; c < n; c++) {
				if (is_floor)
					floor_once(from, to);
				else
					cycle_once(b, k0, k1);
			}
			(is_floor ? r->floor : r->cycle)[i] = (bench_cpu_us() - t0) / (double)n;
		}
	}
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: sysfs_bench [--sysfs DIR] [--procfs DIR] [-s SECONDS] [-r ROUNDS] [--target X]\n"
		   "The CPU cost of a cycle of the amdgpu, neuron, ncs2 and hwmon collectors (every\n"
		   "device group) next to the bare cost of the same file system operations.\n"
		   "Defaults: tests/fixtures/sysfs/host, tests/fixtures/proc-devices, 2 s per kind,\n"
		   "5 rounds, target 2.\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "sysfs", required_argument, NULL, 'S' }, { "procfs", required_argument, NULL, 'P' },
		{ "seconds", required_argument, NULL, 's' }, { "rounds", required_argument, NULL, 'r' },
		{ "target", required_argument, NULL, 't' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench b = { 0 };
	const char *sysfs = "tests/fixtures/sysfs/host", *procfs = "tests/fixtures/proc-devices";
	double seconds = 2, target = 2;
	int rounds = 5, c;
	const char *names[NKINDS + 1] = { "amdgpu", "neuron", "ncs2", "hwmon", "all four" };

	while ((c = getopt_long(argc, argv, "s:r:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			sysfs = optarg;
			break;
		case 'P':
			procfs = optarg;
			break;
		case 's':
			seconds = atof(optarg);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 't':
			target = atof(optarg);
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (seconds <= 0 || rounds < 1 || rounds > MAX_ROUNDS || target <= 0) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (size_t g = 0; g < ARRAY_SIZE(groups); g++)
		b.cg[g] = (struct cfg_group){ groups[g], 1000 };
	b.cfg = (struct cfg_device){ .type = "auto", .select_all = 1, .period_ms = 1000, .groups = b.cg,
				     .ngroups = ARRAY_SIZE(groups) };
	buf_init(&b.line, 64 << 20);
	b.env.host = host_new(&(struct host_opts){ .procfs = procfs, .sysfs = sysfs, .clk_tck = 100, .page_size = 4096 },
			      NULL);
	b.mono = clock_mono_ns();
	for (int k = 0; k < NKINDS; k++) {
		if (kinds[k]->open(&b.env, &(struct coll_target){ .dev = &b.cfg }, &b.state[k]) ||
		    (kinds[k]->error && kinds[k]->error(b.state[k]))) {
			fprintf(stderr, "sysfs_bench: %s: cannot read %s: %s\n", kinds[k]->name, sysfs,
				kinds[k]->error ? kinds[k]->error(b.state[k]) : "open failed");
			return EXIT_SYSTEM;
		}
	}
	/* Warm up, then record one cycle of each kind. */
	cycle_once(&b, 0, NKINDS);
	for (int k = 0; k < NKINDS; k++) {
		json_t *g = group_new(1.0, "2026-01-01T00:00:00.000Z");
		struct cycle cy = { .mono_ns = b.mono + 1 };

		kinds[k]->collect(b.state[k], &cy, &(enum group_id){ GROUP_DEVICE_INFO }, 1, g);
		b.ndevices[k] = json_object_size(json_object_get(g, "devices"));
		json_decref(g);
		b.op_from[k] = rec.nops;
		rec.on = 1;
		cycle_once(&b, k, k + 1);
		rec.on = 0;
		b.op_to[k] = rec.nops;
	}
	for (size_t i = 0; i < rec.ndirs; i++) {
		rec.dirfd[i] = (int)syscall(SYS_openat, AT_FDCWD, rec.dirs[i], O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
		if (rec.dirfd[i] < 0) {
			fprintf(stderr, "sysfs_bench: cannot open %s: %s\n", rec.dirs[i], strerror(errno));
			return EXIT_SYSTEM;
		}
	}

	printf("sysfs_bench: amdgpu + neuron + ncs2 + hwmon, every device group, from %s and %s\n", sysfs,
	       procfs);
	cycle_once(&b, 0, NKINDS);
	printf("  devices: amdgpu %zu, neuron %zu, ncs2 %zu, hwmon %zu; report line %zu B\n", b.ndevices[0],
	       b.ndevices[1], b.ndevices[2], b.ndevices[3], b.line_bytes);
	printf("  %d rounds per figure, floor and cycle blocks alternating (ABBA); CPU time from\n"
	       "  CLOCK_PROCESS_CPUTIME_ID; floor = the same openat/read/getdents/readlinkat/faccessat\n\n",
	       rounds);
	printf("  %-10s %6s %6s %6s %6s %6s %11s %11s %8s %8s %8s  %s\n", "kind", "files", "dirs", "links", "access",
	       "paths", "floor us", "cycle us", "ratio", "min", "max", "result");
	for (int k = 0; k <= NKINDS; k++) {
		int k0 = k == NKINDS ? 0 : k, k1 = k == NKINDS ? NKINDS : k + 1;
		struct result r;
		size_t cnt[5] = { 0 };
		double fm, cm, lo = 1e9, hi = 0, ratio;

		for (size_t i = b.op_from[k0]; i < b.op_to[k1 - 1]; i++)
			cnt[rec.ops[i].kind]++;
		measure(&b, k0, k1, rounds, seconds, &r);
		for (int i = 0; i < rounds; i++) {
			double x = r.cycle[i] / r.floor[i];

			lo = x < lo ? x : lo;
			hi = x > hi ? x : hi;
		}
		fm = bench_median(r.floor, rounds);
		cm = bench_median(r.cycle, rounds);
		ratio = cm / fm;
		printf("  %-10s %6zu %6zu %6zu %6zu %6zu %11.2f %11.2f %8.2f %8.2f %8.2f  %s\n", names[k], cnt[OP_FILE],
		       cnt[OP_DIR], cnt[OP_LINK], cnt[OP_ACCESS], cnt[OP_PATH], fm, cm, ratio, lo, hi,
		       ratio <= target ? "PASS" : "FAIL");
	}
	printf("\n  ratio cycle/floor of all four: target <= %g; (files, dirs, links, access, paths: the\n"
	       "  operations of one cycle; ratio of the medians, min/max per round)\n", target);
	for (int k = 0; k < NKINDS; k++)
		kinds[k]->close(b.state[k]);
	host_free(b.env.host);
	buf_free(&b.line);
	return EXIT_OK;
}
