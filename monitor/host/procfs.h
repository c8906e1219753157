/* SPDX-License-Identifier: MIT */
/*
 * Parsers for the /proc files accel-monitor reads, and a reader rooted at
 * --path.procfs. Parsers take the file's text so tests can feed them
 * fixtures copied from real kernels; they never allocate per call once
 * their output arrays are large enough.
 */
#ifndef ACCEL_PROCFS_H
#define ACCEL_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../common/util.h"

/* One "cpu" line of /proc/stat, in USER_HZ ticks. */
struct cpu_times {
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
	bool present; /* the line was there (the CPU was online) */
};

struct proc_stat {
	struct cpu_times all;   /* the aggregate "cpu" line */
	struct cpu_times *cpu;  /* indexed by CPU number; owned, grown as needed */
	size_t ncpu;            /* highest CPU number seen + 1 */
	size_t acpu;            /* allocated entries */
	uint64_t ctxt;          /* context switches since boot */
};

/* Parse /proc/stat text into st (reusing its array). 0 or -EINVAL. */
int procfs_parse_stat(const char *text, struct proc_stat *st);
void proc_stat_free(struct proc_stat *st);

struct meminfo {
	uint64_t total, free, available, buffers, cached, sreclaimable, swap_total, swap_free; /* bytes */
	bool has_available; /* MemAvailable present (Linux >= 3.14) */
};

/* Parse /proc/meminfo text. 0 or -EINVAL (MemTotal missing). */
int procfs_parse_meminfo(const char *text, struct meminfo *mi);
/* Used memory: MemTotal - MemAvailable, or on old kernels MemTotal - (MemFree + Buffers + Cached + SReclaimable). */
uint64_t meminfo_used(const struct meminfo *mi);

/* The fields of /proc/PID/stat accel-monitor needs. */
struct pid_stat {
	char comm[64];        /* between the first '(' and the last ')' */
	char state;
	pid_t ppid;            /* the parent's pid (0 for the root of a pid namespace) */
	uint64_t utime, stime; /* ticks */
	uint64_t starttime;    /* ticks since boot */
};

int procfs_parse_pid_stat(const char *text, struct pid_stat *ps);
/* Resident pages from /proc/PID/statm. 0 or -EINVAL. */
int procfs_parse_statm_rss(const char *text, uint64_t *rss_pages);

/*
 * A handle on a procfs root: a directory fd plus a growable read buffer.
 * procfs_read returns the file's text (valid until the next read) or NULL
 * with errno set.
 */
struct procfs {
	int dirfd;
	char *text;  /* read buffer; doubles up to 16 MiB (/proc/stat on huge machines) */
	size_t size; /* bytes allocated */
};

/* pf must be zeroed (or closed) before the first open; it may be reopened after a failure. */
int procfs_open(struct procfs *pf, const char *root);
const char *procfs_read(struct procfs *pf, const char *relpath);
/* The same from a file kept open (read_kept_file, util.h: check_links off a procfs). */
const char *procfs_read_kept(struct procfs *pf, int fd, int check_links);
/*
 * procfs_read of relpath, kept open in *fd where the file is on a kernel
 * file system (procfs: each pread from offset 0 is a fresh text), so that a
 * period costs one pread instead of an openat, two reads and a close. *fd
 * starts at PROCFS_UNKEPT; a file that is no procfs or sysfs file (a fixture
 * tree) is read by path each time, as procfs_read does, and so is one
 * whose kept read failed, once. The caller closes *fd when it is >= 0.
 */
#define PROCFS_UNKEPT (-1)
const char *procfs_read_keep(struct procfs *pf, const char *relpath, int *fd);
void procfs_close(struct procfs *pf);

#endif
