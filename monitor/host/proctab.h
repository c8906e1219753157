/* SPDX-License-Identifier: MIT */
/*
 * The producer's table of the host's processes: pid, start time, comm,
 * state and CPU times from /proc/PID/stat, and on demand argv[0], the
 * cgroup path and the container identity parsed from it (container.h).
 * The host layer (host.h) keeps the producer's one table, which serves
 * every reader; it is refreshed at most once per collection cycle, and only
 * when a reader asks in that cycle. argv[0] and the cgroup path are read
 * the first time someone asks for a process and kept while the process
 * (pid, start time and comm) stays the same.
 *
 * Ownership: the table borrows its procfs root string; entries returned are
 * valid until the next refresh.
 */
#ifndef ACCEL_PROCTAB_H
#define ACCEL_PROCTAB_H

#include <stdint.h>
#include <sys/types.h>

#include "../../common/hindex.h"
#include "procfs.h"

struct container_id;
struct pollfd;

struct proc_info {
	pid_t pid;
	uint64_t starttime;    /* ticks since boot: with pid, the identity */
	char comm[64];
	char state;            /* 'R', 'S', ..., 'Z' (a zombie: it has exited) */
	pid_t ppid;            /* its parent, as of the last refresh (0: none in this pid namespace) */
	uint64_t utime, stime; /* ticks, as of the last refresh */
	char *argv0;           /* owned; NULL until proctab_argv0 read it */
	char *cgroup;          /* owned; NULL until proctab_cgroup read it */
	struct container_id *ctr; /* owned; NULL until proctab_container parsed it, or on the host */
	unsigned have;         /* internal: which of argv0, cgroup, ctr were read */
};

struct proctab {
	const char *root;      /* borrowed: --path.procfs */
	struct procfs pf;
	struct proc_info *p;   /* sorted by pid */
	size_t n, a;
	struct proc_info *old; /* the previous refresh's (argv0 and cgroup carry over) */
	struct proc_kept **kp; /* proctab_get's processes when no scan was needed, by kpi */
	size_t nkp, akp, kp_fds, kp_cap; /* ...; their stat files kept open, at most kp_cap */
	struct fd_budget *fdb; /* borrowed: the producer's descriptor budget (kept files are taken from it); NULL: none */
	struct hindex kpi;     /* kp by pid */
	int pidfd_ok;          /* the root's pids are this process's own: kept processes get a pidfd; -1 until known */
	struct pollfd *pfd;    /* the sweep's poll of the pidfds */
	size_t apfd;
	uint64_t stat_reads;   /* kept processes' stat files read so far */
	int64_t kp_cycle, kp_prev; /* the cycle proctab_get last ran in, and the one before */
	int real_proc;         /* the root is a procfs (not a fixture tree): -1 until known */
	int ino_fd;            /* a fixture tree: inotify on kept processes' directories (proctab.c); -1 not yet, -2 none */
	unsigned long long root_dev; /* ... and the tree's device (a directory elsewhere is a link to a live /proc) */
	size_t nold, aold;
	int64_t cycle;         /* the cycle (its CLOCK_MONOTONIC start) of the last refresh */
	int error;             /* errno of the last refresh's failure, 0 if fine */
	uint64_t refreshes;    /* how many scans of /proc so far */
	struct proc_ctr_memo {
		pid_t pid;
		uint64_t starttime;
		struct container_id *id; /* owned; NULL on the host */
	} *cm;                 /* identities parsed so far, by (pid, start time): a process looked up
	                          cycle after cycle without a scan of /proc reads its cgroup file once */
	size_t ncm, acm;
	struct hindex cmi;     /* cm by (pid, start time) */
};

void proctab_init(struct proctab *t, const char *procfs_root);
void proctab_free(struct proctab *t);

/*
 * Scan /proc for the cycle that started at cycle (CLOCK_MONOTONIC ns),
 * unless the table already holds that cycle's scan. 0, or -errno when
 * /proc cannot be listed (the table is then empty) or a process's stat file
 * cannot be read for another reason than its exit (ENOENT, ESRCH): EMFILE,
 * EACCES (the table then holds the processes that could be read); t->error
 * says why.
 */
int proctab_refresh(struct proctab *t, int64_t cycle);

/* The process pid in the last refresh, or NULL. */
struct proc_info *proctab_find(struct proctab *t, pid_t pid);
/*
 * One process in the cycle that started at cycle: from the table when this
 * cycle's scan was made, else from its own stat file only (a pid:N runtime
 * costs one read, not a scan of /proc; the same process asked for again in
 * the same cycle, as an endpoint runtime's entry and its process groups
 * do, is not read again). A process asked for cycle after cycle (a GPU's
 * processes) keeps its stat file open: a pread a cycle, which fails once
 * the process is gone even when another has its pid since; processes not
 * asked for in two cycles are let go. 0 with *out (NULL when there is no
 * such process; valid until the next proctab call), or -errno when /proc
 * or the process's file cannot be read for another reason than its exit
 * (EMFILE, EACCES: the process is not reported gone).
 */
int proctab_get(struct proctab *t, int64_t cycle, pid_t pid, struct proc_info **out);
/*
 * The same for a caller that needs only the process's identity (pid,
 * start time, comm) and whether it is alive, not this cycle's CPU times or
 * parent: where the root's pids are the producer's own (its /proc), a kept
 * process holds a pidfd (and its stat file only once a proctab_get asked
 * for it: one descriptor for a process asked after live), and all of the
 * pidfds are polled once a cycle; one that did not exit is answered as
 * last read (it cannot have given its pid to another) without reading its
 * stat file, which is read again at least every 16th cycle and as soon as
 * the process exited (a zombie's state 'Z' is then seen). One poll a cycle
 * instead of a stat read a process: /proc/PID/stat adds up every thread's
 * times under the process's locks.
 */
int proctab_get_live(struct proctab *t, int64_t cycle, pid_t pid, struct proc_info **out);

/*
 * argv[0] of p ("" for a kernel thread or a process gone meanwhile).
 * Borrowed. NULL with errno set when its cmdline cannot be read for another
 * reason than the process's exit (EMFILE, EACCES); nothing is kept then, so
 * the next call reads again.
 */
const char *proctab_argv0(struct proctab *t, struct proc_info *p);

/*
 * p's cgroup path: the cgroup v2 path ("0::/system.slice/x.service" gives
 * "/system.slice/x.service"), else the first v1 line's path; "" when
 * unknown or the process is gone. Borrowed. NULL with errno set when the
 * file cannot be read for another reason (nothing kept; read again next time).
 */
const char *proctab_cgroup(struct proctab *t, struct proc_info *p);

/*
 * p's container identity, parsed from /proc/PID/cgroup (every line: v2, v1,
 * hybrid; container.h) the first time someone asks and kept while the
 * process stays the same. NULL when the process is on the host (or gone);
 * an identity with only ns_root set when its cgroup reads "/" (the host's
 * root, or the reader's own cgroup from inside a namespace). Borrowed.
 * When NULL, errno is 0 (on the host, or gone) or says why the file could
 * not be read now (EMFILE, EACCES: nothing is remembered; read again next
 * time).
 */
const struct container_id *proctab_container(struct proctab *t, struct proc_info *p);

#endif
