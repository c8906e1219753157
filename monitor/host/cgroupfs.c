/* SPDX-License-Identifier: MIT */
/*
 * A cgroup's CPU and memory accounting, cgroup v2 or v1; see cgroupfs.h.
 */
#include "cgroupfs.h"
#include "../../common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * The value after a key's space, as strtoull reads it, when it is taken: a
 * number alone on the rest of its line, not negative. Plain digits (at most
 * 19: no overflow) are read here; anything else (leading blanks, a sign,
 * 20 digits) the way it always was, with strtoull.
 */
static int keyed_value(const char *v, uint64_t *out)
{
	uint64_t x = 0;
	const char *q = v;
	char *end;
	unsigned long long u;

	while ((unsigned)(*q - '0') < 10 && q - v < 19)
		x = x * 10 + (uint64_t)(*q++ - '0');
	if (q != v && (unsigned)(*q - '0') >= 10) {
		if (*q != '\n' && *q != '\0')
			return 0;
		*out = x;
		return 1;
	}
	errno = 0;
	u = strtoull(v, &end, 10);
	if (end != v && !errno && (*end == '\n' || *end == '\0') && *v != '-') {
		*out = u;
		return 1;
	}
	return 0;
}

unsigned cg_keyed(const char *text, const char *const *keys, size_t nkeys, uint64_t *vals)
{
	unsigned found = 0, all;
	size_t klen[32];
	const char *p = text;

	if (nkeys > 32)
		nkeys = 32;
	all = nkeys == 32 ? ~0u : (1u << nkeys) - 1;
	for (size_t i = 0; i < nkeys; i++)
		klen[i] = strlen(keys[i]);
	/* The first line of each key counts: once every key was found, the rest cannot change anything. */
	while (p && *p && found != all) {
		const char *q = p;

		while (*q && *q != ' ' && *q != '\n')
			q++;
		if (*q == ' ') {
			size_t len = (size_t)(q - p);

			for (size_t i = 0; i < nkeys; i++) {
				if (found & (1u << i) || klen[i] != len || memcmp(keys[i], p, len))
					continue;
				if (keyed_value(q + 1, &vals[i]))
					found |= 1u << i;
				break;
			}
			q = strchr(q, '\n');
		} else if (!*q) {
			break;
		}
		p = q ? q + 1 : NULL;
	}
	return found;
}

void cg_parse_v2_cpu_stat(const char *text, struct cg_stats *st)
{
	static const char *const keys[] = { "usage_usec", "user_usec", "system_usec", "nr_periods", "nr_throttled",
					    "throttled_usec" };
	uint64_t v[6];
	unsigned f = cg_keyed(text, keys, 6, v);

	if (f & 1u) {
		st->usage_ns = v[0] * 1000;
		st->has |= CG_CPU;
	}
	if ((f & 6u) == 6u) {
		st->user_ns = v[1] * 1000;
		st->system_ns = v[2] * 1000;
		st->has |= CG_CPU_SPLIT;
	}
	if ((f & 56u) == 56u) {
		st->nr_periods = v[3];
		st->nr_throttled = v[4];
		st->throttled_ns = v[5] * 1000;
		st->has |= CG_CFS;
	}
}

void cg_parse_v2_memory_stat(const char *text, struct cg_stats *st)
{
	static const char *const keys[] = { "anon", "file", "inactive_file" };
	uint64_t v[3];

	if (cg_keyed(text, keys, 3, v) == 7u) {
		st->mem_rss = v[0];
		st->mem_cache = v[1];
		st->inactive_file = v[2];
		st->has |= CG_MEM_STAT;
	}
}

void cg_parse_v2_memory_events(const char *text, struct cg_stats *st)
{
	static const char *const keys[] = { "oom_kill" };

	if (cg_keyed(text, keys, 1, &st->oom_kills))
		st->has |= CG_OOM;
}

void cg_parse_v1_cpuacct_stat(const char *text, long clk_tck, struct cg_stats *st)
{
	static const char *const keys[] = { "user", "system" };
	uint64_t v[2];

	if (clk_tck <= 0 || cg_keyed(text, keys, 2, v) != 3u)
		return;
	/* USER_HZ ticks, as libcontainer converts them: ticks * 1e9 / USER_HZ. */
	st->user_ns = v[0] * (1000000000ull / (uint64_t)clk_tck);
	st->system_ns = v[1] * (1000000000ull / (uint64_t)clk_tck);
	st->has |= CG_CPU_SPLIT;
}

void cg_parse_v1_cpu_stat(const char *text, struct cg_stats *st)
{
	static const char *const keys[] = { "nr_periods", "nr_throttled", "throttled_time" };
	uint64_t v[3];

	if (cg_keyed(text, keys, 3, v) == 7u) {
		st->nr_periods = v[0];
		st->nr_throttled = v[1];
		st->throttled_ns = v[2];
		st->has |= CG_CFS;
	}
}

void cg_parse_v1_memory_stat(const char *text, struct cg_stats *st)
{
	/* The hierarchical totals (what cAdvisor reads with use_hierarchy, the only mode since Linux 5.x). */
	static const char *const keys[] = { "total_rss", "total_cache", "total_inactive_file", "rss", "cache",
					    "inactive_file" };
	uint64_t v[6];
	unsigned f = cg_keyed(text, keys, 6, v);

	if ((f & 7u) == 7u) {
		st->mem_rss = v[0];
		st->mem_cache = v[1];
		st->inactive_file = v[2];
		st->has |= CG_MEM_STAT;
	} else if ((f & 56u) == 56u) {
		st->mem_rss = v[3];
		st->mem_cache = v[4];
		st->inactive_file = v[5];
		st->has |= CG_MEM_STAT;
	}
}

void cg_parse_v1_oom_control(const char *text, struct cg_stats *st)
{
	static const char *const keys[] = { "oom_kill" };

	if (cg_keyed(text, keys, 1, &st->oom_kills))
		st->has |= CG_OOM;
}

void cg_finish(struct cg_stats *st)
{
	if ((st->has & (CG_MEM | CG_MEM_STAT)) == (CG_MEM | CG_MEM_STAT))
		st->mem_working_set = st->mem_usage > st->inactive_file ? st->mem_usage - st->inactive_file : 0;
}

/* A single unsigned number file (memory.current, cpuacct.usage): 0 or -EINVAL. */
static int parse_u64(const char *text, uint64_t *out)
{
	char *end;

	if (*text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(text, &end, 10);
	return errno || (*end != '\n' && *end != '\0') ? -EINVAL : 0;
}

void cg_files_init(struct cg_files *f, int check_links, int ino_fd)
{
	memset(f, 0, sizeof(*f));
	for (int i = 0; i < CG_NFILE; i++)
		f->fd[i] = -1;
	f->check_links = check_links;
	f->ino_fd = ino_fd;
	f->ev_wd = CG_WD_NONE;
	for (int h = 0; h < CG_NHIER; h++)
		f->dir_wd[h] = CG_WD_NONE;
}

/* Forget the directories' watches (left to the kernel and the caller: struct cg_files). */
static void dirs_forget(struct cg_files *f)
{
	for (int h = 0; h < CG_NHIER; h++)
		f->dir_wd[h] = CG_WD_NONE;
	f->dir_quiet = 0;
}

static void events_unwatch(struct cg_files *f)
{
	if (f->ev_wd >= 0)
		inotify_rm_watch(f->ino_fd, f->ev_wd); /* its IN_IGNORED names a watch nobody has */
	f->ev_wd = CG_WD_NONE;
	f->ev_quiet = 0;
}

void cg_files_unwatch(struct cg_files *f)
{
	events_unwatch(f);
	dirs_forget(f);
	f->ino_fd = -1;
}

int cg_files_event(struct cg_files *f, int wd, uint32_t mask)
{
	int which = 0;

	if (mask & IN_Q_OVERFLOW) { /* every watch may have missed something */
		f->ev_quiet = 0;
		f->dir_quiet = 0;
		f->stamped = 0;
		return 1;
	}
	for (int h = 0; h < CG_NHIER; h++)
		if (wd >= 0 && f->dir_wd[h] == wd) {
			f->dir_quiet &= ~(1u << h);
			f->stamped &= ~(1u << h); /* a name made, removed or replaced: each kept file checked again */
			if (mask & IN_IGNORED)
				f->dir_wd[h] = CG_WD_NONE; /* the kernel removed it with the directory */
			which = 2;
		}
	if (wd < 0 || wd != f->ev_wd)
		return which;
	f->ev_quiet = 0;
	if (mask & ~(uint32_t)IN_MODIFY)
		f->stamped = 0; /* a file replaced: its directory's kept files are checked one by one again */
	if (mask & IN_IGNORED)
		f->ev_wd = CG_WD_NONE; /* the kernel removed it */
	else if (mask & ~(uint32_t)IN_MODIFY)
		events_unwatch(f); /* replaced or removed (a fixture tree): watch what is there next time */
	return 1;
}

size_t cg_files_watches(const struct cg_files *f, int wd[CG_NHIER + 1])
{
	size_t n = 0;

	if (f->ev_wd >= 0)
		wd[n++] = f->ev_wd;
	for (int h = 0; h < CG_NHIER; h++) {
		size_t i;

		if (f->dir_wd[h] < 0)
			continue;
		for (i = 0; i < n && wd[i] != f->dir_wd[h]; i++)
			;
		if (i == n)
			wd[n++] = f->dir_wd[h];
	}
	return n;
}

/*
 * Watch dirfd's memory.events before it is read, so that a change after
 * the read is an event. Once refused (the user's limit), not asked again
 * while the files are kept.
 */
static void events_watch(int dirfd, struct cg_files *f)
{
	char path[48];

	if (f->ino_fd < 0 || f->ev_wd != CG_WD_NONE || dirfd < 0)
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d/memory.events", dirfd);
	f->ev_wd = inotify_add_watch(f->ino_fd, path, IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF);
	if (f->ev_wd < 0)
		f->ev_wd = errno == ENOENT ? CG_WD_NONE : CG_WD_FAILED;
}

size_t cg_files_close(struct cg_files *f)
{
	size_t n = 0;

	for (int i = 0; i < CG_NFILE; i++)
		if (f->fd[i] >= 0) {
			close(f->fd[i]);
			f->fd[i] = -1;
			n++;
		}
	f->stamped = 0;
	events_unwatch(f);
	if (f->ev_wd == CG_WD_FAILED)
		f->ev_wd = CG_WD_NONE;
	dirs_forget(f);
	return n;
}

/* A directory's mtime this close to now may be shared by a later change (the file system's time granularity). */
#define CG_STAMP_SETTLE_NS (2 * 1000000000ll)

static long long ts_ns(struct timespec t)
{
	return (long long)t.tv_sec * 1000000000ll + t.tv_nsec;
}

void cg_files_watch_dir(struct cg_files *f, unsigned roles, int fd)
{
	char path[40];
	unsigned need = 0;
	int wd;

	if (!f->check_links || f->ino_fd < 0 || fd < 0)
		return;
	for (int h = 0; h < CG_NHIER; h++)
		if ((roles & (1u << h)) && f->dir_wd[h] == CG_WD_NONE)
			need |= 1u << h;
	if (!need)
		return; /* each has one, or was refused one */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	wd = inotify_add_watch(f->ino_fd, path, CG_DIR_EVENTS);
	for (int h = 0; h < CG_NHIER; h++)
		if (need & (1u << h))
			f->dir_wd[h] = wd >= 0 ? wd : CG_WD_FAILED; /* refused: looked at with an fstat each time */
}

/* Watch each directory cg_read reads from that has no watch yet (cg_files_watch_dir). */
static void dirs_watch(const int fd[CG_NHIER], unsigned want, struct cg_files *keep)
{
	for (int h = 0; h < CG_NHIER; h++)
		if ((want & (1u << h)) && fd[h] >= 0 && keep->dir_wd[h] == CG_WD_NONE)
			cg_files_watch_dir(keep, 1u << h, fd[h]);
}

/*
 * With keep->check_links: the bits of the directories cg_read reads from
 * whose stamp (struct cg_files) still holds: their kept files need no
 * check of their own. A quiet one (watched, no event since its stamp)
 * holds as it is; each other is looked at (st[h], bit h of *looked, at
 * *now_ns).
 */
static unsigned dirs_unchanged(const int fd[CG_NHIER], unsigned want, const struct cg_files *keep,
			       struct stat st[CG_NHIER], unsigned *looked, long long *now_ns)
{
	unsigned same = 0;

	*looked = 0;
	for (int h = 0; h < CG_NHIER; h++) {
		int q;

		if (!(want & (1u << h)) || fd[h] < 0)
			continue;
		if (keep->stamped & keep->dir_quiet & (1u << h)) {
			same |= 1u << h;
			continue;
		}
		if (!*looked) {
			struct timespec now;

			clock_gettime(CLOCK_REALTIME, &now);
			*now_ns = ts_ns(now);
		}
		for (q = 0; q < h && !((*looked & (1u << q)) && fd[q] == fd[h]); q++)
			;
		if (q < h)
			st[h] = st[q]; /* cpu and cpuacct as one hierarchy */
		else if (fstat(fd[h], &st[h]))
			continue;
		*looked |= 1u << h;
		if (st[h].st_nlink && (keep->stamped & (1u << h)) && keep->ino[h] == (unsigned long long)st[h].st_ino &&
		    keep->mtime_ns[h] == ts_ns(st[h].st_mtim))
			same |= 1u << h;
	}
	return same;
}

/*
 * After a read that checked every kept file of the directories in bits
 * (as seen in st, stat before the reads began at now_ns): stamp them, unless
 * a change made later could still leave the same mtime.
 */
static void dirs_stamp(struct cg_files *keep, const struct stat st[CG_NHIER], unsigned bits, long long now_ns)
{
	for (int h = 0; h < CG_NHIER; h++) {
		if (!(bits & (1u << h)))
			continue;
		keep->stamped &= ~(1u << h);
		keep->dir_quiet &= ~(1u << h);
		if (st[h].st_nlink && now_ns - ts_ns(st[h].st_mtim) >= CG_STAMP_SETTLE_NS) {
			keep->ino[h] = (unsigned long long)st[h].st_ino;
			keep->mtime_ns[h] = ts_ns(st[h].st_mtim);
			keep->stamped |= 1u << h;
			if (keep->dir_wd[h] >= 0) /* watched before the stat: what changed since is an event */
				keep->dir_quiet |= 1u << h;
		}
	}
}

/*
 * Read dirfd/name into buf, from *kept when it is open (kept: NULL when
 * the caller keeps nothing), and keep it there when opened now while *room
 * allows. 1 when read, 0 when the file is not there (its controller is not
 * enabled here), -ENOENT/-ENODEV when the cgroup itself is gone, other
 * -errno.
 */
static int read_one(int dirfd, const char *name, int *kept, int check_links, size_t *room, char *buf, size_t size,
		    int *err)
{
	ssize_t n;

	if (kept && *kept >= 0) {
		n = read_kept_file(*kept, check_links, buf, size);
		if (n >= 0)
			return 1;
		/* Gone (its controller disabled, or the cgroup removed), or grown: ask the directory again. */
		close(*kept);
		*kept = -1;
		(*room)++;
	}
	if (dirfd < 0)
		return 0;
	if (kept && *room) {
		int fd = open_kept(dirfd, name);

		n = fd < 0 ? -errno : read_kept_file(fd, 0, buf, size);
		if (n >= 0) {
			*kept = fd;
			(*room)--;
		} else if (fd >= 0) {
			close(fd);
		}
	} else {
		n = read_file_at(dirfd, name, buf, size);
	}
	if (n >= 0)
		return 1;
	/*
	 * A removed cgroup: its files read -ENODEV (kernfs), and a missing file
	 * in a directory that still exists is a controller that is not enabled.
	 */
	if (n == -ENODEV)
		return (int)n;
	if (n != -ENOENT && !*err)
		*err = (int)n;
	return 0;
}

int cg_read(const int fd[CG_NHIER], int v2, long clk_tck, struct cg_stats *st, char *buf, size_t size,
	    struct cg_files *keep, size_t *room)
{
	int err = 0, r, file = 0;
	uint64_t u;
	struct stat dst[CG_NHIER];
	unsigned same = 0, looked = 0;
	long long now_ns = 0;

	memset(st, 0, sizeof(*st));
	if (!room)
		keep = NULL;
	if (keep && keep->check_links) {
		unsigned want = v2 ? 1u << CG_H_UNIFIED : (1u << CG_H_CPU) | (1u << CG_H_CPUACCT) | (1u << CG_H_MEMORY);

		if (keep->ino_fd >= 0)
			dirs_watch(fd, want, keep);
		same = dirs_unchanged(fd, want, keep, dst, &looked, &now_ns);
	}
#define READ(dir, name)                                                                                   \
	do {                                                                                              \
		r = read_one(fd[dir], name, keep ? &keep->fd[file] : NULL,                                \
			     keep && keep->check_links && !(same & (1u << (dir))), room, buf, size, &err); \
		file++;                                                                                   \
		if (r < 0)                                                                                \
			return r;                                                                         \
	} while (0)
	if (v2) {
		READ(CG_H_UNIFIED, "cpu.stat");
		if (r == 1)
			cg_parse_v2_cpu_stat(buf, st);
		READ(CG_H_UNIFIED, "memory.current");
		if (r == 1 && !parse_u64(buf, &st->mem_usage))
			st->has |= CG_MEM;
		READ(CG_H_UNIFIED, "memory.stat");
		if (r == 1)
			cg_parse_v2_memory_stat(buf, st);
		if (keep && keep->ev_quiet && keep->fd[file] >= 0 && ++keep->ev_skips < CG_EVENTS_REREAD) {
			st->oom_kills = keep->ev_oom; /* no event since it was read: as it was */
			st->has |= keep->ev_has;
			file++;
		} else {
			if (keep)
				events_watch(fd[CG_H_UNIFIED], keep);
			READ(CG_H_UNIFIED, "memory.events");
			if (r == 1)
				cg_parse_v2_memory_events(buf, st);
			if (keep) {
				keep->ev_oom = st->oom_kills;
				keep->ev_has = st->has & CG_OOM;
				keep->ev_skips = 0;
				keep->ev_quiet = r == 1 && keep->ev_wd >= 0 && keep->fd[file - 1] >= 0;
			}
		}
	} else {
		READ(CG_H_CPUACCT, "cpuacct.usage");
		if (r == 1 && !parse_u64(buf, &u)) {
			st->usage_ns = u;
			st->has |= CG_CPU;
		}
		READ(CG_H_CPUACCT, "cpuacct.stat");
		if (r == 1)
			cg_parse_v1_cpuacct_stat(buf, clk_tck, st);
		READ(CG_H_CPU, "cpu.stat");
		if (r == 1)
			cg_parse_v1_cpu_stat(buf, st);
		READ(CG_H_MEMORY, "memory.usage_in_bytes");
		if (r == 1 && !parse_u64(buf, &st->mem_usage))
			st->has |= CG_MEM;
		READ(CG_H_MEMORY, "memory.stat");
		if (r == 1)
			cg_parse_v1_memory_stat(buf, st);
		READ(CG_H_MEMORY, "memory.oom_control");
		if (r == 1)
			cg_parse_v1_oom_control(buf, st);
	}
#undef READ
	if (looked & ~same)
		dirs_stamp(keep, dst, looked & ~same, now_ns);
	cg_finish(st);
	if (!st->has && !err) {
		/* Nothing at all in an existing directory: every file missing means the cgroup went away. */
		return -ENOENT;
	}
	return err;
}
