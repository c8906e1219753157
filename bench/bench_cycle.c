/* SPDX-License-Identifier: MIT */
/*
 * bench_cycle: the CPU cost of one collection cycle of the system groups
 * (vcpu_usage and memory_info), next to its floor, measured in one process
 * in one run.
 *
 *  - floor: open, read to EOF and close "stat" and "meminfo" under the
 *    procfs root, into one buffer; nothing else. No collector can cost less.
 *  - cycle: what monitor_cycle() does for those two groups: take the cycle
 *    clocks, build the report envelope, sample each group into its
 *    collector's record (sample()), write the report with report_write()
 *    into a buffer (each group from its record by write(), the rest with
 *    json_write(), common/jsonw.c), free it. Writing the line to stdout is
 *    left out (its cost depends on the reader).
 *
 * CPU time is CLOCK_PROCESS_CPUTIME_ID (user + system) around whole sweeps.
 * The two figures are measured in blocks that alternate (floor, cycle,
 * cycle, floor, ...) so drift hits both; each figure is the median over the
 * rounds of the per-cycle cost of its block.
 *
 * vcpu_usage only does its real work (per-CPU JSON) when /proc/stat changed
 * since its previous sample, and the kernel's counters move once per tick
 * (10 ms). A tight loop would therefore measure the "no CPU time passed"
 * shortcut. So the cycle rotates over several collector instances (as many
 * monitors would hold), and a sweep over them starts at least --gap-ms after
 * the previous one ended; the sleep costs no CPU time. With --procfs DIR, DIR's
 * stat and meminfo are copied to a private root and the copy's counters are
 * advanced before each sweep (untimed); the floor reads the same copy. The
 * number of cycles that produced complete groups is printed, so a shortcut
 * cannot hide.
 */
#include "../common/timeutil.h"
#include "../common/jsonw.h"
#include "../common/util.h"
#include "../monitor/core/collector.h"
#include "../monitor/app/report.h"
#include "../monitor/host/host.h"
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef ACCEL_VERSION
#define ACCEL_VERSION "0.0.0"
#endif

#define MAX_ROUNDS 99
#define MAX_INSTANCES 256
#define NGROUPS 2

enum { EXIT_OK = 0, EXIT_SYSTEM = 1, EXIT_USAGE = 2 };
enum kind { FLOOR, CYCLE };

static const char *const files[NGROUPS] = { "stat", "meminfo" };

struct opts {
	const char *procfs; /* NULL: the live /proc */
	long cycles;        /* per figure; 0: enough for about `seconds` */
	double seconds;     /* wall time the measurement aims at */
	int rounds;         /* blocks per figure */
	int instances;      /* collector instances in rotation */
	int gap_ms;         /* least time between two sweeps of one kind */
	double target;      /* most cycle/floor ratio that passes */
};

/* The collector states one monitor would hold for the two system groups. */
struct sys_inst {
	void *state[NGROUPS];
	int64_t last_ns[NGROUPS]; /* monotonic time of the previous collection */
};

struct bench {
	struct opts o;
	char root[4096];  /* what the collectors and the floor read */
	char *tmpdir;     /* private root (--procfs); removed at exit */
	int dirfd;
	char *fbuf;       /* the floor's read buffer */
	size_t fsize;     /* bytes */
	struct mon_env env;
	const struct collector_ops *ops[NGROUPS];
	struct sys_inst *inst;
	struct buf instance_info; /* instance_info's text, as instance_text() keeps it */
	struct buf line;
	uint64_t seq;
	/* --procfs: DIR's stat text, and the private copy being advanced */
	char *stat_src;
	struct buf stat_out;
	int stat_fd;
	unsigned long generation;
	int64_t last_sweep[2]; /* monotonic ns each kind last finished a sweep */
	/* what the cycles produced */
	unsigned long ncycles, ncomplete;
	size_t line_bytes;     /* length of the last report line */
};

static struct bench *cleanup_b;

static void cleanup(void)
{
	struct bench *b = cleanup_b;

	if (!b || !b->tmpdir)
		return;
	for (size_t i = 0; i < NGROUPS; i++) {
		char p[4200];

		snprintf(p, sizeof(p), "%s/%s", b->tmpdir, files[i]);
		unlink(p);
	}
	rmdir(b->tmpdir);
	free(b->tmpdir);
	b->tmpdir = NULL;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("bench_cycle: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_SYSTEM);
}

/* Read a whole file into a new NUL-terminated string; *len gets its length. */
static char *slurp(int dirfd, const char *path, size_t *len)
{
	size_t size = 64 * 1024;
	char *p = xmalloc(size);
	ssize_t n;

	while ((n = read_file_at(dirfd, path, p, size)) == -EFBIG && size < (64u << 20)) {
		size *= 2;
		p = xrealloc(p, size);
	}
	if (n < 0) {
		free(p);
		die("cannot read %s: %s", path, strerror((int)-n));
	}
	*len = (size_t)n;
	return p;
}

/* Parse an unsigned decimal at *p after blanks; advance *p. */
static int take_u64(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t n = 0;

	while (*s == ' ')
		s++;
	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9')
		n = n * 10 + (uint64_t)(*s++ - '0');
	*p = s;
	*v = n;
	return 0;
}

/*
 * Ticks added per generation to field f of CPU line `cpu`: uneven, so the
 * percentages have as many digits as real ones do.
 */
static uint64_t tick_step(size_t cpu, int f)
{
	static const uint64_t base[8] = { 37, 2, 13, 151, 3, 1, 4, 2 };

	return base[f] + (cpu * 7 + (size_t)f * 3) % 5;
}

/*
 * Write generation g of the private stat: DIR's text with every CPU line's
 * eight time fields and ctxt advanced g steps. Everything else is copied.
 */
static void stat_advance(struct bench *b, unsigned long g)
{
	const char *p = b->stat_src;
	size_t cpu = 0;

	buf_reset(&b->stat_out);
	while (*p) {
		const char *nl = strchr(p, '\n');
		const char *end = nl ? nl + 1 : p + strlen(p);
		const char *q = p;
		uint64_t v;

		if (!strncmp(p, "cpu", 3)) {
			while (q < end && *q != ' ')
				q++;
			buf_add(&b->stat_out, p, (size_t)(q - p));
			for (int f = 0; f < 8 && !take_u64(&q, &v); f++)
				buf_printf(&b->stat_out, " %llu", (unsigned long long)(v + g * tick_step(cpu, f)));
			cpu++;
		} else if (!strncmp(p, "ctxt ", 5)) {
			q += 5;
			if (!take_u64(&q, &v))
				buf_printf(&b->stat_out, "ctxt %llu", (unsigned long long)(v + g * 4321));
			else
				q = p;
		}
		buf_add(&b->stat_out, q, (size_t)(end - q));
		p = end;
	}
	if (pwrite(b->stat_fd, b->stat_out.data, b->stat_out.len, 0) != (ssize_t)b->stat_out.len ||
	    ftruncate(b->stat_fd, (off_t)b->stat_out.len))
		die("cannot write %s/stat: %s", b->tmpdir, strerror(errno));
}

/* --procfs DIR: copy DIR's stat and meminfo into a private root. */
static void fixture_setup(struct bench *b)
{
	const char *tmp = getenv("TMPDIR");
	char path[4200];
	size_t len;
	char *mem;
	int fd;

	b->tmpdir = xasprintf("%s/bench_cycle.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(b->tmpdir))
		die("cannot create %s: %s", b->tmpdir, strerror(errno));
	snprintf(path, sizeof(path), "%s/stat", b->o.procfs);
	b->stat_src = slurp(-1, path, &len);
	snprintf(path, sizeof(path), "%s/meminfo", b->o.procfs);
	mem = slurp(-1, path, &len);
	snprintf(path, sizeof(path), "%s/meminfo", b->tmpdir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, mem, len) || close(fd))
		die("cannot write %s: %s", path, strerror(errno));
	free(mem);
	snprintf(path, sizeof(path), "%s/stat", b->tmpdir);
	b->stat_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (b->stat_fd < 0)
		die("cannot create %s: %s", path, strerror(errno));
	buf_init(&b->stat_out, 64 << 20);
	stat_advance(b, 0);
	snprintf(b->root, sizeof(b->root), "%s", b->tmpdir);
}

static void sleep_until(int64_t mono_ns)
{
	struct timespec ts = { .tv_sec = mono_ns / NS_PER_S, .tv_nsec = mono_ns % NS_PER_S };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/*
 * Before each sweep (untimed): let at least gap_ms pass since this kind's
 * previous sweep ended, and with --procfs move the private stat's counters on.
 */
static void pace(struct bench *b, enum kind k)
{
	if (b->o.gap_ms > 0)
		sleep_until(b->last_sweep[k] + b->o.gap_ms * NS_PER_MS);
	if (b->tmpdir)
		stat_advance(b, ++b->generation);
}

/* The floor: open, read to EOF, close each file, once per instance. */
static void floor_sweep(struct bench *b)
{
	for (int i = 0; i < b->o.instances; i++) {
		for (size_t f = 0; f < NGROUPS; f++) {
			int fd = openat(b->dirfd, files[f], O_RDONLY | O_CLOEXEC);
			size_t len = 0;
			ssize_t n;

			if (fd < 0)
				die("cannot open %s/%s: %s", b->root, files[f], strerror(errno));
			while ((n = read(fd, b->fbuf + len, b->fsize - len - 1)) > 0)
				len += (size_t)n;
			close(fd);
			b->fbuf[len] = '\0';
		}
	}
}

/* One collection cycle of the system groups, as monitor_cycle() runs it. */
static void cycle_once(struct bench *b, struct sys_inst *in)
{
	struct cycle cy;
	struct report report = { 0 };
	struct report_group groups[NGROUPS];
	char err[NGROUPS][512];
	int complete = 1;

	cy.mono_ns = clock_mono_ns();
	cy.boot_ns = clock_boot_ns();
	cy.real_ns = clock_real_ns();
	iso8601_format(cy.real_ns, cy.iso);
	report.iso = cy.iso;
	report.seq = b->seq;
	report.runtime_data = json_array();
	report.device_data = json_array();
	report.system = groups;
	report.nsystem = NGROUPS;
	report.instance_info = b->instance_info.data; /* instance_text() lends its text */
	/* The self-timing ("collectors") is left empty: monitor.c's timing_put is not part of this model. */
	for (size_t i = 0; i < NGROUPS; i++) {
		int64_t t0 = clock_mono_ns();

		groups[i] = (struct report_group){ .name = group_name(b->ops[i]->group),
						   .period = (double)(cy.mono_ns - in->last_ns[i]) / 1e9 };
		/* A group that came back complete: sampled, no error. */
		complete &= report_group_sample(&groups[i], b->ops[i], in->state[i], &cy, err[i], sizeof(err[i]));
		/* monitor.c times each collect to warn about slow ones. */
		if (clock_mono_ns() - t0 < 0)
			die("monotonic clock went backwards");
		in->last_ns[i] = cy.mono_ns;
	}
	if (report_write(&report, &b->line, b->line.cap))
		die("report %llu does not fit in %zu bytes", (unsigned long long)b->seq, b->line.cap);
	json_decref(report.runtime_data);
	json_decref(report.device_data);
	b->seq++;
	b->ncycles++;
	b->ncomplete += (unsigned long)complete;
	b->line_bytes = b->line.len;
}

static void cycle_sweep(struct bench *b)
{
	for (int i = 0; i < b->o.instances; i++)
		cycle_once(b, &b->inst[i]);
}

/* CPU time (ns) of `sweeps` sweeps of one kind, pacing left out. */
static int64_t run_block(struct bench *b, enum kind k, long sweeps)
{
	int64_t total = 0;

	for (long s = 0; s < sweeps; s++) {
		int64_t t0;

		pace(b, k);
		t0 = bench_cpu_ns();
		if (k == FLOOR)
			floor_sweep(b);
		else
			cycle_sweep(b);
		total += bench_cpu_ns() - t0;
		/* From the end: a sweep slowed down by preemption must not shorten the next gap. */
		b->last_sweep[k] = clock_mono_ns();
	}
	return total;
}

static void bench_open(struct bench *b)
{
	size_t len, biggest = 0;
	char *text;
	int64_t now;
	json_t *info;

	if (b->o.procfs)
		fixture_setup(b);
	else
		snprintf(b->root, sizeof(b->root), "/proc");
	b->dirfd = open(b->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b->dirfd < 0)
		die("cannot open %s: %s", b->root, strerror(errno));
	for (size_t f = 0; f < NGROUPS; f++) {
		text = slurp(b->dirfd, files[f], &len);
		free(text);
		if (len > biggest)
			biggest = len;
	}
	/* Room for the file to grow (a CPU coming online) without a short read. */
	for (b->fsize = 64 * 1024; b->fsize < 4 * biggest; b->fsize *= 2)
		;
	b->fbuf = xmalloc(b->fsize);

	b->env.host = host_new(&(struct host_opts){ .procfs = b->root }, NULL);
	b->ops[0] = collector_group(NULL, GROUP_VCPU_USAGE);
	b->ops[1] = collector_group(NULL, GROUP_MEMORY_INFO);
	if (!b->ops[0] || !b->ops[1])
		die("this build has no vcpu_usage or memory_info collector");
	b->inst = xcalloc((size_t)b->o.instances, sizeof(*b->inst));
	for (int i = 0; i < b->o.instances; i++)
		for (size_t g = 0; g < NGROUPS; g++)
			if (b->ops[g]->open(&b->env, &(struct coll_target){ .dev = NULL }, &b->inst[i].state[g]))
				die("%s: cannot open %s: %s", group_name(b->ops[g]->group), b->root, strerror(errno));
	now = clock_mono_ns();
	for (int i = 0; i < b->o.instances; i++)
		for (size_t g = 0; g < NGROUPS; g++)
			b->inst[i].last_ns[g] = now;
	b->last_sweep[FLOOR] = b->last_sweep[CYCLE] = now;

	/* instance_info as a monitor off EC2 reports it. */
	info = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "instance_name", "",
				     "instance_id", "", "instance_type", "", "instance_availability_zone", "",
				     "instance_availability_zone_id", "", "instance_region", "", "ami_id", "",
				     "subnet_id", "", "error",
				     "instance metadata token request to http://169.254.169.254: HTTP 403");
	json_object_set_new(info, "hostname", json_string("bench-host"));
	json_object_set_new(info, "node_name", json_string(""));
	buf_init(&b->instance_info, 1 << 20);
	json_write(info, &b->instance_info);
	json_decref(info);
	buf_init(&b->line, 64 << 20);
}

static void bench_close(struct bench *b)
{
	for (int i = 0; i < b->o.instances; i++)
		for (size_t g = 0; g < NGROUPS; g++)
			b->ops[g]->close(b->inst[i].state[g]);
	free(b->inst);
	host_free(b->env.host);
	free(b->fbuf);
	free(b->stat_src);
	buf_free(&b->line);
	buf_free(&b->stat_out);
	buf_free(&b->instance_info);
	if (b->tmpdir)
		close(b->stat_fd);
	close(b->dirfd);
	cleanup();
}

/* Median, min and max of n values (n >= 1). */
static void stats(const double *v, int n, double *med, double *lo, double *hi)
{
	double s[MAX_ROUNDS];

	memcpy(s, v, (size_t)n * sizeof(*v));
	qsort(s, (size_t)n, sizeof(*s), bench_cmp_double);
	*med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	*lo = s[0];
	*hi = s[n - 1];
}

/* CPU lines ("cpuN") in the stat text the collectors read. */
static int count_cpus(struct bench *b, size_t *stat_len, size_t *mem_len)
{
	char *text = slurp(b->dirfd, "stat", stat_len);
	int n = 0;

	for (const char *p = text; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, "cpu", 3) && p[3] >= '0' && p[3] <= '9')
			n++;
	}
	free(text);
	free(slurp(b->dirfd, "meminfo", mem_len));
	return n;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: bench_cycle [OPTION]...\n"
		"CPU cost of one accel-monitor collection cycle of the system groups\n"
		"(vcpu_usage + memory_info) against the floor: opening and reading the same\n"
		"/proc files. See bench/README.md.\n"
		"\n"
		"  -n, --cycles N      cycles per figure (default: enough for about --seconds)\n"
		"  -s, --seconds S     wall time to aim at when -n is not given (default 2)\n"
		"  -r, --rounds R      alternating blocks per figure; the median is reported (default 5)\n"
		"  -i, --instances K   collector instances in rotation (default 64)\n"
		"  -g, --gap-ms MS     least time between two samples of one instance (default 20;\n"
		"                      vcpu_usage needs /proc/stat to have moved, which it does per tick)\n"
		"      --procfs DIR    read DIR/stat and DIR/meminfo (a fixture tree) instead of /proc\n"
		"      --target X      largest cycle/floor ratio that passes (default 2)\n"
		"  -h, --help          print this help and exit\n"
		"\n"
		"Exit codes: 0 measured (PASS or FAIL), 1 system error, 2 usage error.\n");
}

static int parse_num(const char *s, double lo, double hi, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return !*s || *end || errno || *v < lo || *v > hi ? -1 : 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	enum { OPT_PROCFS = 256, OPT_TARGET };
	static const struct option longopts[] = {
		{ "cycles", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, 's' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "instances", required_argument, NULL, 'i' },
		{ "gap-ms", required_argument, NULL, 'g' },
		{ "procfs", required_argument, NULL, OPT_PROCFS },
		{ "target", required_argument, NULL, OPT_TARGET },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	double v;
	int c;

	memset(o, 0, sizeof(*o));
	o->seconds = 2;
	o->rounds = 5;
	o->instances = 64;
	o->gap_ms = 20;
	o->target = 2;
	while ((c = getopt_long(argc, argv, "n:s:r:i:g:h", longopts, NULL)) != -1) {
		const char *what = NULL;

		switch (c) {
		case 'n':
			if (parse_num(optarg, 1, 1e9, &v))
				what = "--cycles: expected 1 to 1e9";
			o->cycles = (long)v;
			break;
		case 's':
			if (parse_num(optarg, 0.01, 3600, &v))
				what = "--seconds: expected 0.01 to 3600";
			o->seconds = v;
			break;
		case 'r':
			if (parse_num(optarg, 1, MAX_ROUNDS, &v))
				what = "--rounds: expected 1 to 99";
			o->rounds = (int)v;
			break;
		case 'i':
			if (parse_num(optarg, 1, MAX_INSTANCES, &v))
				what = "--instances: expected 1 to 256";
			o->instances = (int)v;
			break;
		case 'g':
			if (parse_num(optarg, 0, 10000, &v))
				what = "--gap-ms: expected 0 to 10000";
			o->gap_ms = (int)v;
			break;
		case OPT_PROCFS:
			o->procfs = optarg;
			break;
		case OPT_TARGET:
			if (parse_num(optarg, 0.01, 1e6, &v))
				what = "--target: expected a positive ratio";
			o->target = v;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		default:
			fprintf(stderr, "Try 'bench_cycle --help'.\n");
			return -1;
		}
		if (what) {
			fprintf(stderr, "bench_cycle: %s, got \"%s\"\n", what, optarg);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "bench_cycle: unexpected argument \"%s\"\n", argv[optind]);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct bench bench;
	struct bench *b = &bench;
	double fl[MAX_ROUNDS], cy[MAX_ROUNDS], ra[MAX_ROUNDS];
	double fmed, flo, fhi, cmed, clo, chi, rmed, rlo, rhi, ratio, sweep_ns;
	size_t stat_len, mem_len;
	long sweeps;
	int ncpu;

	if (parse_args(argc, argv, &b->o))
		return EXIT_USAGE;
	cleanup_b = b;
	atexit(cleanup);
	bench_open(b);
	ncpu = count_cpus(b, &stat_len, &mem_len);

	/* Warm-up (discarded): caches, the collectors' buffers, jansson's hash seed. */
	fl[0] = (double)run_block(b, FLOOR, 2) / 2;
	cy[0] = (double)run_block(b, CYCLE, 2) / 2;
	if (b->o.cycles) {
		sweeps = (b->o.cycles + (long)b->o.rounds * b->o.instances - 1) / ((long)b->o.rounds * b->o.instances);
	} else {
		/* A sweep takes its CPU time or the gap, whichever is longer. */
		sweep_ns = (fl[0] > b->o.gap_ms * 1e6 ? fl[0] : b->o.gap_ms * 1e6) +
			   (cy[0] > b->o.gap_ms * 1e6 ? cy[0] : b->o.gap_ms * 1e6);
		sweeps = (long)(b->o.seconds * 1e9 / (b->o.rounds * sweep_ns));
	}
	if (sweeps < 1)
		sweeps = 1;
	b->ncycles = b->ncomplete = 0;

	for (int r = 0; r < b->o.rounds; r++) {
		double per = (double)sweeps * b->o.instances * 1e3; /* ns -> µs per cycle */

		/* ABBA: floor first in even rounds, cycle first in odd ones. */
		if (r % 2 == 0) {
			fl[r] = (double)run_block(b, FLOOR, sweeps) / per;
			cy[r] = (double)run_block(b, CYCLE, sweeps) / per;
		} else {
			cy[r] = (double)run_block(b, CYCLE, sweeps) / per;
			fl[r] = (double)run_block(b, FLOOR, sweeps) / per;
		}
		ra[r] = fl[r] > 0 ? cy[r] / fl[r] : 0;
	}
	stats(fl, b->o.rounds, &fmed, &flo, &fhi);
	stats(cy, b->o.rounds, &cmed, &clo, &chi);
	stats(ra, b->o.rounds, &rmed, &rlo, &rhi);
	ratio = fmed > 0 ? cmed / fmed : 0;

	printf("bench_cycle: vcpu_usage + memory_info from %s%s\n", b->o.procfs ? b->o.procfs : "/proc",
	       b->o.procfs ? " (private copy, counters advanced per sweep)" : " (live)");
	printf("  %d CPUs; stat %zu B, meminfo %zu B; report line %zu B\n", ncpu, stat_len, mem_len,
	       b->line_bytes);
	printf("  %d rounds x %ld cycles per figure, floor and cycle blocks alternating (ABBA);\n", b->o.rounds,
	       sweeps * b->o.instances);
	printf("  %d collector instances in rotation, >= %d ms between one instance's samples;\n",
	       b->o.instances, b->o.gap_ms);
	printf("  CPU time from CLOCK_PROCESS_CPUTIME_ID; complete groups in %lu of %lu cycles\n", b->ncomplete,
	       b->ncycles);
	if (b->ncomplete < b->ncycles)
		printf("  WARNING: some cycles took a shortcut (no CPU time passed?); raise --gap-ms\n");
	printf("\n  %-28s %10s %9s %9s %9s  %s\n", "figure", "median", "min", "max", "target", "result");
	printf("  %-28s %10.2f %9.2f %9.2f %9s\n", "floor  us/cycle (read only)", fmed, flo, fhi, "");
	printf("  %-28s %10.2f %9.2f %9.2f %9s\n", "cycle  us/cycle (collect)", cmed, clo, chi, "");
	printf("  %-28s %10.2f %9.2f %9.2f   <= %-4.4g  %s\n", "ratio  cycle/floor", ratio, rlo, rhi, b->o.target,
	       ratio <= b->o.target ? "PASS" : "FAIL");
	printf("  (ratio: of the medians; min/max: per round)\n");

	bench_close(b);
	if (fflush(stdout) || ferror(stdout))
		return EXIT_SYSTEM;
	return EXIT_OK;
}
