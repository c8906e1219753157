/* SPDX-License-Identifier: MIT */
/*
 * Reading a cgroup's CPU and memory accounting, cgroup v2 or v1, the way
 * cAdvisor reads it (container/libcontainer/handler.go, setCPUStats and
 * setMemoryStats), for the container_usage group (coll_containers.c).
 *
 *  - v2: cpu.stat (usage_usec, user_usec, system_usec; nr_periods,
 *    nr_throttled, throttled_usec with the cpu controller), memory.current,
 *    memory.stat (anon, file, inactive_file), memory.events (oom_kill).
 *  - v1: cpuacct.usage (ns), cpuacct.stat (user, system in USER_HZ ticks),
 *    cpu.stat (nr_periods, nr_throttled, throttled_time in ns),
 *    memory.usage_in_bytes, memory.stat (total_rss, total_cache,
 *    total_inactive_file; the non-total keys when those are missing),
 *    memory.oom_control (oom_kill, Linux >= 4.13).
 *
 * The working set is usage - inactive_file, 0 when inactive_file is larger
 * (cAdvisor's computation). Files are opened relative to directory fds the
 * caller keeps, so a period costs one openat per file and no path walk.
 * Parsers take the file's text, so tests feed them fixtures.
 */
#ifndef ACCEL_CGROUPFS_H
#define ACCEL_CGROUPFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/inotify.h>

/* Which parts of struct cg_stats were read. */
#define CG_CPU 1u        /* usage_ns */
#define CG_CPU_SPLIT 2u  /* user_ns, system_ns */
#define CG_CFS 4u        /* nr_periods, nr_throttled, throttled_ns (the cpu controller's bandwidth stats) */
#define CG_MEM 8u        /* mem_usage */
#define CG_MEM_STAT 16u  /* mem_rss, mem_cache, and mem_working_set (with CG_MEM) */
#define CG_OOM 32u       /* oom_kills */

/* One cgroup's accounting, as read now. */
struct cg_stats {
	unsigned has;                        /* CG_* bits */
	uint64_t usage_ns, user_ns, system_ns; /* CPU time since the cgroup was created, ns */
	uint64_t nr_periods, nr_throttled;   /* CFS enforcement periods elapsed, and those throttled */
	uint64_t throttled_ns;               /* time throttled, ns */
	uint64_t mem_usage;                  /* bytes charged now (memory.current / memory.usage_in_bytes) */
	uint64_t mem_working_set;            /* usage - inactive_file, bytes */
	uint64_t mem_rss, mem_cache;         /* anonymous and page-cache bytes */
	uint64_t inactive_file;              /* bytes (what the working set leaves out) */
	uint64_t oom_kills;                  /* processes the OOM killer killed in the cgroup */
};

/* The hierarchies a cgroup is read from. */
enum cg_hier { CG_H_UNIFIED, CG_H_CPU, CG_H_CPUACCT, CG_H_MEMORY, CG_NHIER };

/*
 * Find the keys of a "key value" file (cpu.stat, memory.stat,
 * memory.events, cpuacct.stat, memory.oom_control) in text: vals[i] is set
 * and bit i of the result is set for each keys[i] found (at most 32 keys).
 */
unsigned cg_keyed(const char *text, const char *const *keys, size_t nkeys, uint64_t *vals);

/* Parse a file's text into st (setting its CG_* bits). */
void cg_parse_v2_cpu_stat(const char *text, struct cg_stats *st);
void cg_parse_v2_memory_stat(const char *text, struct cg_stats *st);
void cg_parse_v2_memory_events(const char *text, struct cg_stats *st);
void cg_parse_v1_cpuacct_stat(const char *text, long clk_tck, struct cg_stats *st);
void cg_parse_v1_cpu_stat(const char *text, struct cg_stats *st);
void cg_parse_v1_memory_stat(const char *text, struct cg_stats *st);
void cg_parse_v1_oom_control(const char *text, struct cg_stats *st);
/* The working set from usage and inactive_file, once both were read (cAdvisor's floor at 0). */
void cg_finish(struct cg_stats *st);

/*
 * The files cg_read reads (four on v2, six on v1), kept open between reads
 * where the caller has room for them. A cgroup file is one record the
 * kernel writes afresh for every read from offset 0, so a kept file costs
 * one pread a period (a read shorter than the buffer is all of it) instead
 * of an openat, two reads and a close. Every fd starts at -1. Outside a
 * cgroup file system (a fixture tree) a file removed since it was opened
 * still reads, so there a read checks the directory's mtime (one fstat per
 * directory), and each kept file's link count only when that moved; with
 * an inotify descriptor, a directory watched since its last check and
 * without an event since (dir_quiet) is not looked at at all.
 */
#define CG_NFILE 6
struct cg_files {
	int fd[CG_NFILE];
	int check_links; /* not a cgroup file system: a kept file whose link count is 0 is gone */
	/*
	 * With check_links: each directory as it was when its kept files were
	 * last known to be linked (its inode and mtime). While a directory
	 * shows the same, none of its names was removed or replaced since, so
	 * its kept files are read without checking them one by one.
	 */
	unsigned stamped;          /* bit per enum cg_hier whose stamp is set */
	unsigned long long ino[CG_NHIER];
	long long mtime_ns[CG_NHIER];
	/*
	 * With check_links and ino_fd: a watch on each directory read from
	 * (CG_DIR_EVENTS: a name made, removed or renamed there, or the
	 * directory itself gone), added before its files are checked. A
	 * stamped directory with no event since (dir_quiet, which the caller
	 * clears: cg_files_event) is read without an fstat: its names are the
	 * ones checked. The watch is never removed here: the caller may watch
	 * the same directory with the same mask (inotify gives one watch per
	 * inode), and the kernel removes it with the directory (IN_IGNORED).
	 */
	int dir_wd[CG_NHIER];      /* per hierarchy: its directory's watch; CG_WD_NONE, CG_WD_FAILED */
	unsigned dir_quiet;        /* bit per enum cg_hier: watched, stamped, and no event since */
	/*
	 * v2's memory.events is not read while nothing changed it: the kernel
	 * tells every change of it as a file modified event (cgroup-v2.rst),
	 * so with an inotify watch on it (ev_wd, in the caller's ino_fd) and
	 * no event for it since the last read (ev_quiet, which the caller
	 * clears: cg_files_event), its oom_kill is the last read's (ev_oom).
	 * It is read anyway every CG_EVENTS_REREAD-th time (a kernel that
	 * would not tell is late by that many periods, never wrong), and every
	 * time when no watch could be added. One pread of four saved on v2.
	 */
	int ino_fd;                /* the caller's inotify descriptor, -1: none (read every time) */
	int ev_wd;                 /* the watch on memory.events; CG_WD_NONE: none yet, CG_WD_FAILED: none to be had */
	int ev_quiet;              /* no event for ev_wd since the read that gave ev_oom */
	unsigned ev_has;           /* CG_OOM when that read found oom_kill */
	unsigned ev_skips;         /* reads saved since the last one */
	uint64_t ev_oom;
};

#define CG_WD_NONE (-1)
#define CG_WD_FAILED (-2)
#define CG_EVENTS_REREAD 32
/* What a watch on a cgroup directory asks for: a child made, removed or renamed, the directory itself gone. */
#define CG_DIR_EVENTS                                                                                   \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

/*
 * check_links: see struct cg_files (!on_kernel_fs of the tree, util.h).
 * ino_fd: an inotify descriptor (inotify_init1) whose events the caller
 * hands to cg_files_event, or -1.
 */
void cg_files_init(struct cg_files *f, int check_links, int ino_fd);
/*
 * Close the kept files and remove memory.events' watch (the directories'
 * are forgotten, not removed: struct cg_files); returns how many were open.
 */
size_t cg_files_close(struct cg_files *f);
/*
 * The caller read an inotify event of mask for watch wd (IN_Q_OVERFLOW:
 * any of f's, maybe). 0 when wd is none of f's watches. 1 for its
 * memory.events (ev_wd): that file is read again next time, and after
 * anything but a modification (the file replaced, removed; the watch
 * gone) the watch is made again first. 2 for a directory's (dir_wd): its
 * kept files are checked one by one again at the next read.
 */
int cg_files_event(struct cg_files *f, int wd, uint32_t mask);
/*
 * Off a cgroup file system (f->check_links) with an inotify descriptor:
 * watch the directory fd, which serves the hierarchies in roles (bits of
 * enum cg_hier), if it has no watch yet. cg_read does so before it first
 * checks a directory's files; a caller whose own watches must come before
 * the files' (a tree's listing) calls it when it opens the directory.
 */
void cg_files_watch_dir(struct cg_files *f, unsigned roles, int fd);
/*
 * f's watches (ev_wd, then each distinct dir_wd), at most CG_NHIER + 1,
 * into wd; how many.
 */
size_t cg_files_watches(const struct cg_files *f, int wd[CG_NHIER + 1]);
/*
 * No watch on f's files from now on (the caller's watches are better spent
 * elsewhere): memory.events read every time, each directory looked at.
 */
void cg_files_unwatch(struct cg_files *f);

/*
 * Read one cgroup into st (zeroed first). v2: fd[CG_H_UNIFIED]; v1: the
 * cpu, cpuacct and memory directories (any may be -1: its part is left
 * out). buf (size bytes) is scratch space. keep (NULL: none) holds the
 * files kept from earlier reads; a file opened now is kept while *room is
 * not 0, which counts down. With keep->check_links a read costs one fstat
 * of each directory rather than one of each kept file. 0 when every file
 * there was read (a missing file is a controller not enabled); -ENOENT or
 * -ENODEV when the cgroup is gone (removed since it was opened); else the
 * first other -errno (EMFILE, EACCES), also when other files were read:
 * what could be read is in st.
 */
int cg_read(const int fd[CG_NHIER], int v2, long clk_tck, struct cg_stats *st, char *buf, size_t size,
	    struct cg_files *keep, size_t *room);

#endif
