/* SPDX-License-Identifier: MIT */
/* The process table; see proctab.h. */
#include "proctab.h"
#include "../../common/hindex.h"
#include "../../common/util.h"
#include "../core/fdbudget.h"
#include "container.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * A process with a pidfd is read again for proctab_get_live at least every
 * this many cycles (its parent, comm and CPU times as of then), and at once
 * when the pidfd says it exited. In a fixture tree (no procfs: no pidfd)
 * an inotify watch on the process's directory stands in for the pidfd: a
 * process's files change only by a writer, and any write, removal or
 * rename there is an event that has it read again at once; so a fixture
 * node costs what a node with pidfds does, not a read and an fstat of
 * every process every cycle. A directory that is not the fixture's (a link
 * to a live /proc, which tells inotify nothing) is read every cycle.
 */
#define PROCTAB_LIVE_REREAD 16
/* What a fixture process's directory is watched for: anything a writer does there (not our reads: IN_ACCESS, IN_OPEN). */
#define PROCTAB_DIR_EVENTS                                                                                 \
	(IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |       \
	 IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

enum { HAVE_ARGV0 = 1, HAVE_CGROUP = 2, HAVE_CONTAINER = 4 };
#define PROC_CTR_MEMO_MAX 8192 /* identities remembered, by (pid, start time) */

static char *dup_n(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);

	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

void proctab_init(struct proctab *t, const char *procfs_root)
{
	memset(t, 0, sizeof(*t));
	t->root = procfs_root;
	t->pf.dirfd = -1;
	t->cycle = INT64_MIN;
	t->kp_cycle = t->kp_prev = INT64_MIN;
	t->real_proc = -1;
	t->pidfd_ok = -1;
	t->ino_fd = -1;
}

static void infos_free(struct proc_info *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].argv0);
		free(p[i].cgroup);
		free(p[i].ctr);
	}
}

struct proc_kept {
	struct proc_info p; /* as read in cycle read */
	int fd;             /* its stat file, kept open; -1 past kp_cap (then read by path) */
	int pidfd;          /* a pidfd of the process (proctab.h, proctab_get_live); -1: none */
	int wd;             /* a fixture tree: the watch on its directory, standing in for a pidfd; -1: none */
	int exited;         /* the pidfd said at this cycle's sweep that the process exited; the watch, that
	                       something changed since the last read (held until read) */
	unsigned quiet;     /* cycles answered from the pidfd since the stat file was last read */
	int64_t used;       /* the cycle it was last asked for in */
	int64_t read;       /* the cycle its stat file was last read in */
};

/* What k holds let go: its strings, its stat file; pid 0, found by no one. */
static void kept_close(struct proctab *t, int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
		t->kp_fds--;
		if (t->fdb)
			fd_budget_give(t->fdb, 1);
	}
}

static void kept_release(struct proctab *t, struct proc_kept *k)
{
	infos_free(&k->p, 1);
	memset(&k->p, 0, sizeof(k->p));
	kept_close(t, &k->fd);
	kept_close(t, &k->pidfd);
	if (k->wd >= 0)
		inotify_rm_watch(t->ino_fd, k->wd); /* its IN_IGNORED names a watch nobody has */
	k->wd = -1;
}

static void kept_free(struct proctab *t, struct proc_kept *k)
{
	kept_release(t, k);
	free(k);
}

void proctab_free(struct proctab *t)
{
	infos_free(t->p, t->n);
	infos_free(t->old, t->nold);
	for (size_t i = 0; i < t->nkp; i++)
		kept_free(t, t->kp[i]);
	free(t->kp);
	hindex_free(&t->kpi);
	free(t->p);
	free(t->old);
	for (size_t i = 0; i < t->ncm; i++)
		free(t->cm[i].id);
	free(t->cm);
	hindex_free(&t->cmi);
	procfs_close(&t->pf);
	free(t->pfd);
	if (t->ino_fd >= 0)
		close(t->ino_fd);
	memset(t, 0, sizeof(*t));
	t->pf.dirfd = -1;
	t->ino_fd = -1;
}

static int by_pid(const void *a, const void *b)
{
	pid_t x = ((const struct proc_info *)a)->pid, y = ((const struct proc_info *)b)->pid;

	return (x > y) - (x < y);
}

static struct proc_info *find_in(struct proc_info *p, size_t n, pid_t pid)
{
	struct proc_info key = { .pid = pid };

	return n ? bsearch(&key, p, n, sizeof(*p), by_pid) : NULL;
}

/*
 * Why a read of a process's file failed: -ENOENT when the process is gone
 * (its directory went: ENOENT; it exited while the file was open: ESRCH),
 * else the read's own -errno (EMFILE, EACCES, ...), which the caller
 * reports: a process that could not be read has not exited.
 */
static int read_failure(int e)
{
	return e == ENOENT || e == ESRCH ? -ENOENT : -e;
}

/*
 * Read /proc/PID/stat into *p (argv0 and cgroup not read yet). 0, -ENOENT
 * when the process is gone (or its text does not parse: a process caught
 * exiting), or the read's -errno.
 */
static int read_one(struct proctab *t, pid_t pid, struct proc_info *p)
{
	char path[32];
	const char *text;
	struct pid_stat ps;

	snprintf(path, sizeof(path), "%d/stat", (int)pid);
	text = procfs_read(&t->pf, path);
	if (!text)
		return read_failure(errno);
	if (procfs_parse_pid_stat(text, &ps))
		return -ENOENT;
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->starttime = ps.starttime;
	snprintf(p->comm, sizeof(p->comm), "%s", ps.comm);
	p->state = ps.state;
	p->ppid = ps.ppid;
	p->utime = ps.utime;
	p->stime = ps.stime;
	return 0;
}

/*
 * Read every /proc/PID/stat into t->p. 0 or -errno: the directory could
 * not be listed, or a process's file could not be read for another reason
 * than its exit (the table then holds the processes that could be read).
 */
static int scan(struct proctab *t)
{
	struct dirent *de;
	DIR *dir;
	int fd, rc = 0;

	if (t->pf.dirfd < 0 && procfs_open(&t->pf, t->root))
		return -errno;
	fd = openat(t->pf.dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return -e;
	}
	while ((de = readdir(dir))) {
		char *end;
		long pid;
		int r;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		errno = 0;
		pid = strtol(de->d_name, &end, 10);
		if (*end || errno || pid <= 0 || pid > INT_MAX)
			continue;
		if (t->n == t->a) {
			t->a = t->a ? t->a * 2 : 256;
			t->p = xrealloc(t->p, t->a * sizeof(*t->p));
		}
		r = read_one(t, (pid_t)pid, &t->p[t->n]);
		if (r == 0)
			t->n++;
		else if (r != -ENOENT && !rc) /* -ENOENT: gone between readdir and read */
			rc = r;
	}
	closedir(dir);
	return rc;
}

int proctab_refresh(struct proctab *t, int64_t cycle)
{
	struct proc_info *swap;
	size_t aswap;
	int rc;

	if (t->cycle == cycle)
		return t->error ? -t->error : 0;
	t->cycle = cycle;
	t->refreshes++;
	/* This scan's entries go into what was the older array; the last one's become old. */
	infos_free(t->old, t->nold);
	swap = t->old;
	aswap = t->aold;
	t->old = t->p;
	t->nold = t->n;
	t->aold = t->a;
	t->p = swap;
	t->a = aswap;
	t->n = 0;
	rc = scan(t);
	t->error = -rc;
	if (t->n)
		qsort(t->p, t->n, sizeof(*t->p), by_pid);
	/* argv[0] and the cgroup of a process seen before (same pid, start time and comm) carry over. */
	for (size_t i = 0; i < t->n; i++) {
		struct proc_info *p = &t->p[i], *o = find_in(t->old, t->nold, p->pid);

		if (o && o->starttime == p->starttime && !strcmp(o->comm, p->comm)) {
			p->argv0 = o->argv0;
			p->cgroup = o->cgroup;
			p->ctr = o->ctr;
			p->have = o->have;
			o->argv0 = o->cgroup = NULL;
			o->ctr = NULL;
		}
	}
	return rc;
}

struct proc_info *proctab_find(struct proctab *t, pid_t pid)
{
	return find_in(t->p, t->n, pid);
}

static uint64_t pid_hash(pid_t pid)
{
	return hash_bytes(0, &pid, sizeof(pid));
}

static struct proc_kept *kept_find(struct proctab *t, pid_t pid)
{
	struct hindex_iter it;
	uint64_t h = pid_hash(pid);

	for (uint32_t i = hindex_first(&t->kpi, h, &it); i != HINDEX_NONE; i = hindex_next(&t->kpi, h, &it))
		if (t->kp[i]->p.pid == pid)
			return t->kp[i];
	return NULL;
}

/*
 * Which kept processes with a pidfd exited, all of them in one poll: a
 * pidfd is readable once its process exited (a zombie included), and
 * while it is not the pid cannot have gone to another process.
 */
static void kept_poll(struct proctab *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->nkp; i++)
		n += t->kp[i]->pidfd >= 0;
	if (!n)
		return;
	if (n > t->apfd) {
		t->apfd = n;
		t->pfd = xrealloc(t->pfd, n * sizeof(*t->pfd));
	}
	n = 0;
	for (size_t i = 0; i < t->nkp; i++)
		if (t->kp[i]->pidfd >= 0)
			t->pfd[n++] = (struct pollfd){ .fd = t->kp[i]->pidfd, .events = POLLIN };
	if (poll(t->pfd, (nfds_t)n, 0) < 0) {
		for (size_t i = 0; i < t->nkp; i++)
			t->kp[i]->exited = 1; /* not known: each read again */
		return;
	}
	n = 0;
	for (size_t i = 0; i < t->nkp; i++)
		if (t->kp[i]->pidfd >= 0)
			t->kp[i]->exited = t->pfd[n++].revents != 0;
}

/* One event read (inotify_drain): the process whose directory it is (wd -1: every watched one) is read again. */
static void on_event(void *ud, int wd, uint32_t mask)
{
	struct proctab *t = ud;

	for (size_t i = 0; i < t->nkp; i++) {
		struct proc_kept *k = t->kp[i];

		if (k->wd < 0 || (k->wd != wd && wd != -1))
			continue;
		k->exited = 1;
		if (mask & IN_IGNORED)
			k->wd = -1; /* the kernel removed it: read each cycle from now on */
	}
}

/*
 * A fixture tree's events since the last sweep: each kept process whose
 * directory changed is read again at its next ask; after an overflowed
 * queue or a failed read, every watched one.
 */
static void kept_events(struct proctab *t)
{
	if (t->ino_fd >= 0 && inotify_drain(t->ino_fd, on_event, t) < 0)
		on_event(t, -1, IN_Q_OVERFLOW); /* not known: each read again */
}

/*
 * Watch k's directory in a fixture tree (before its stat file is first
 * read, so that a change after the read is an event), when it is the
 * tree's own; not a link to a live /proc.
 */
static void dir_watch(struct proctab *t, struct proc_kept *k)
{
	char name[16], path[64];
	struct stat st;

	if (t->ino_fd == -1) {
		t->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (t->ino_fd < 0 || fstat(t->pf.dirfd, &st)) {
			if (t->ino_fd >= 0)
				close(t->ino_fd);
			t->ino_fd = -2; /* none to be had: each read every cycle */
			return;
		}
		t->root_dev = (unsigned long long)st.st_dev;
	}
	if (t->ino_fd < 0)
		return;
	snprintf(name, sizeof(name), "%d", (int)k->p.pid);
	if (fstatat(t->pf.dirfd, name, &st, 0) || !S_ISDIR(st.st_mode) || (unsigned long long)st.st_dev != t->root_dev)
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%d", t->pf.dirfd, (int)k->p.pid);
	k->wd = inotify_add_watch(t->ino_fd, path, PROCTAB_DIR_EVENTS);
	if (k->wd < 0)
		k->wd = -1; /* the user's limit: read every cycle */
}

/* A new cycle: let go of the processes asked for in neither it nor the one before; see which exited. */
static void kept_sweep(struct proctab *t, int64_t cycle)
{
	size_t keep = 0;

	t->kp_prev = t->kp_cycle;
	t->kp_cycle = cycle;
	for (size_t i = 0; i < t->nkp; i++) {
		struct proc_kept *k = t->kp[i];

		if (k->used == t->kp_prev || k->used == cycle)
			t->kp[keep++] = k;
		else
			kept_free(t, k);
	}
	if (keep != t->nkp) {
		t->nkp = keep;
		hindex_clear(&t->kpi);
		for (size_t i = 0; i < t->nkp; i++)
			hindex_put(&t->kpi, pid_hash(t->kp[i]->p.pid), (uint32_t)i);
	}
	kept_poll(t);
	kept_events(t);
}

/*
 * Read k's process again into k->p: from its kept stat file (which fails
 * once the process is gone; a fixture tree's file that was removed says so
 * by its link count), else by path. 0, -ENOENT when it is gone, or the
 * read's -errno; a new process under the pid (another start time or comm)
 * is read afresh.
 */
static int kept_read(struct proctab *t, struct proc_kept *k)
{
	struct pid_stat ps;
	const char *text = NULL;
	char path[32];

	if (k->fd >= 0) {
		text = procfs_read_kept(&t->pf, k->fd, !t->real_proc);
	} else {
		snprintf(path, sizeof(path), "%d/stat", (int)k->p.pid);
		text = procfs_read(&t->pf, path);
	}
	t->stat_reads++;
	if (!text)
		return read_failure(errno);
	if (procfs_parse_pid_stat(text, &ps))
		return -ENOENT;
	if (ps.starttime != k->p.starttime || strcmp(ps.comm, k->p.comm)) {
		pid_t pid = k->p.pid; /* not the process it was (a fixture's file written over) */

		if (k->p.starttime || k->p.comm[0])
			kept_close(t, &k->pidfd); /* the one it was (not the first read's empty entry) */
		infos_free(&k->p, 1);
		memset(&k->p, 0, sizeof(k->p));
		k->p.pid = pid;
		k->p.starttime = ps.starttime;
		snprintf(k->p.comm, sizeof(k->p.comm), "%s", ps.comm);
	}
	k->p.state = ps.state;
	k->p.ppid = ps.ppid;
	k->p.utime = ps.utime;
	k->p.stime = ps.stime;
	return 0;
}

/* A pidfd of pid (close-on-exec, as every pidfd), or -1 with errno set. */
static int pidfd_of(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/*
 * Whether the table's pids are this process's own: its root is a procfs
 * whose "self" is getpid(). A procfs of another pid namespace (a
 * container's --path.procfs=/host/proc) numbers them otherwise, and
 * pidfd_open would take them for ours.
 */
static int own_pids(struct proctab *t)
{
	char buf[32];
	ssize_t n;

	if (!t->real_proc || (n = readlinkat(t->pf.dirfd, "self", buf, sizeof(buf) - 1)) <= 0)
		return 0;
	buf[n] = '\0';
	return strtol(buf, NULL, 10) == (long)getpid();
}

/* A kept descriptor taken from the cap and the budget: 1, or 0 when there is no room. */
static int kept_room(struct proctab *t)
{
	return t->kp_fds < t->kp_cap && (!t->fdb || fd_budget_take(t->fdb, 1) == 0);
}

/* The room kept_room took, given back: the descriptor could not be had. */
static void kept_unroom(struct proctab *t)
{
	if (t->fdb)
		fd_budget_give(t->fdb, 1);
}

/*
 * k's stat file opened and kept, as the cap and the budget allow (else it
 * is read by path). -ENOENT when there is no such process, else 0.
 */
static int stat_keep(struct proctab *t, struct proc_kept *k)
{
	char path[32];

	if (!kept_room(t))
		return 0;
	snprintf(path, sizeof(path), "%d/stat", (int)k->p.pid);
	k->fd = open_kept(t->pf.dirfd, path);
	if (k->fd >= 0) {
		t->kp_fds++;
		return 0;
	}
	kept_unroom(t);
	return errno == ENOENT ? -ENOENT : 0;
}

/*
 * pid read into a new entry *out, and kept as the fd budget allows: where
 * the table's pids are the process's own, its pidfd, and its stat file too
 * for a caller that reads CPU times each cycle (!live; a live caller's
 * entry gets it at the first such ask); elsewhere its stat file. 0 (*out
 * NULL when there is no such process), or the read's -errno (a file that
 * cannot be opened now is read by path).
 */
static int kept_open(struct proctab *t, pid_t pid, int64_t cycle, int live, struct proc_kept **out)
{
	struct proc_kept *k = xcalloc(1, sizeof(*k));
	int gone = 0, rc = 0;

	*out = NULL;
	if (t->real_proc < 0)
		t->real_proc = on_kernel_fs(t->pf.dirfd);
	if (t->fdb) {
		/* An eighth of the producer's budget (container_usage keeps up to a quarter), as it allows. */
		t->kp_cap = fd_budget_share(t->fdb, 1, 8);
	} else if (!t->kp_cap) {
		struct rlimit rl;

		/* No budget: an eighth of the descriptors, 128 of the usual 1024. */
		t->kp_cap = 128;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 8 > 0)
			t->kp_cap = (size_t)(rl.rlim_cur / 8);
	}
	k->p.pid = pid;
	k->fd = k->pidfd = k->wd = -1;
	k->used = k->read = cycle;
	if (t->pidfd_ok < 0)
		t->pidfd_ok = own_pids(t);
	/* Before the stat file is read: a process read through it is the pidfd's. */
	if (t->pidfd_ok && kept_room(t)) {
		k->pidfd = pidfd_of(pid);
		if (k->pidfd >= 0) {
			t->kp_fds++;
		} else {
			kept_unroom(t);
			if (errno == ENOSYS || errno == EPERM)
				t->pidfd_ok = 0; /* a kernel before 5.3, or a sandbox that refuses it */
			/* EINVAL, ENOENT: a thread's id, not a process's; ESRCH: gone (the read says so) */
		}
	}
	if (!t->real_proc && k->pidfd < 0)
		dir_watch(t, k);
	if (!live || k->pidfd < 0)
		gone = stat_keep(t, k) == -ENOENT; /* no such process: not read again by path */
	if (gone || (rc = kept_read(t, k))) {
		kept_free(t, k);
		return rc == -ENOENT ? 0 : rc;
	}
	if (t->nkp == t->akp) {
		t->akp = t->akp ? t->akp * 2 : 64;
		t->kp = xrealloc(t->kp, t->akp * sizeof(*t->kp));
	}
	hindex_put(&t->kpi, pid_hash(pid), (uint32_t)t->nkp);
	t->kp[t->nkp++] = k;
	*out = k;
	return 0;
}

/* proctab_get and proctab_get_live: live, the latter. */
static int get(struct proctab *t, int64_t cycle, pid_t pid, struct proc_info **out, int live)
{
	struct proc_kept *k;
	int rc = 0;

	*out = NULL;
	if (t->cycle == cycle) {
		*out = proctab_find(t, pid);
		return t->error ? -t->error : 0;
	}
	if (t->pf.dirfd < 0 && procfs_open(&t->pf, t->root))
		return -errno;
	if (t->kp_cycle != cycle)
		kept_sweep(t, cycle);
	k = kept_find(t, pid);
	if (k && live && k->used != cycle && (k->pidfd >= 0 || k->wd >= 0) && !k->exited &&
	    k->quiet + 1 < PROCTAB_LIVE_REREAD) {
		k->quiet++; /* the same process, alive: as last read */
		k->used = cycle;
	} else if (k && (k->used != cycle || (!live && k->read != cycle))) {
		if (!live && k->fd < 0 && k->pidfd >= 0)
			stat_keep(t, k); /* read each cycle from now on: kept (a process gone is the read's to say) */
		rc = kept_read(t, k);
		if (rc && rc != -ENOENT)
			return rc; /* unreadable now, not gone: kept, and read again when asked */
		if (rc) {
			/* Gone: let go of what it held now; the next cycle's sweep takes the entry. */
			kept_release(t, k);
			k->used = INT64_MIN + 1;
			k = NULL;
		} else {
			k->used = k->read = cycle;
			k->quiet = 0;
			if (k->wd >= 0)
				k->exited = 0; /* what the watch said is read */
		}
	} else if (!k) {
		rc = kept_open(t, pid, cycle, live, &k);
		if (rc)
			return rc;
	}
	if (k)
		*out = &k->p;
	return 0;
}

int proctab_get(struct proctab *t, int64_t cycle, pid_t pid, struct proc_info **out)
{
	return get(t, cycle, pid, out, 0);
}

int proctab_get_live(struct proctab *t, int64_t cycle, pid_t pid, struct proc_info **out)
{
	return get(t, cycle, pid, out, 1);
}

const char *proctab_argv0(struct proctab *t, struct proc_info *p)
{
	char path[32];
	const char *text;

	if (!(p->have & HAVE_ARGV0)) {
		snprintf(path, sizeof(path), "%d/cmdline", (int)p->pid);
		errno = EBADF;
		text = t->pf.dirfd >= 0 ? procfs_read(&t->pf, path) : NULL;
		if (!text && read_failure(errno) != -ENOENT)
			return NULL; /* not read, not kept: asked again next time */
		p->argv0 = xstrdup(text ? text : ""); /* cmdline's first NUL ends argv[0] */
		p->have |= HAVE_ARGV0;
	}
	return p->argv0;
}

const char *proctab_cgroup(struct proctab *t, struct proc_info *p)
{
	char path[32];
	const char *text, *line, *v1 = NULL;

	if (p->have & HAVE_CGROUP)
		return p->cgroup;
	snprintf(path, sizeof(path), "%d/cgroup", (int)p->pid);
	errno = EBADF;
	text = t->pf.dirfd >= 0 ? procfs_read(&t->pf, path) : NULL;
	if (!text && read_failure(errno) != -ENOENT)
		return NULL; /* not read, not kept: asked again next time */
	p->have |= HAVE_CGROUP;
	for (line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		/* "hierarchy-ID:controllers:path"; v2 is "0::path". */
		const char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		if (!strncmp(line, "0::", 3)) {
			v1 = NULL;
			p->cgroup = dup_n(c2 + 1, strcspn(c2 + 1, "\n"));
			break;
		}
		if (!v1)
			v1 = c2 + 1;
	}
	if (!p->cgroup)
		p->cgroup = v1 ? dup_n(v1, strcspn(v1, "\n")) : xstrdup("");
	utf8_sanitize(p->cgroup);
	return p->cgroup;
}

const struct container_id *proctab_container(struct proctab *t, struct proc_info *p)
{
	char path[32];
	const char *text;
	struct container_id id;

	struct proc_ctr_memo *m;
	struct hindex_iter it;
	uint64_t h = hash_bytes(p->starttime, &p->pid, sizeof(p->pid));

	errno = 0;
	if (p->have & HAVE_CONTAINER)
		return p->ctr;
	for (uint32_t i = hindex_first(&t->cmi, h, &it); i != HINDEX_NONE; i = hindex_next(&t->cmi, h, &it))
		if (t->cm[i].pid == p->pid && t->cm[i].starttime == p->starttime) {
			p->have |= HAVE_CONTAINER;
			if (t->cm[i].id) {
				p->ctr = xmalloc(sizeof(*p->ctr));
				*p->ctr = *t->cm[i].id;
			}
			return p->ctr;
		}
	snprintf(path, sizeof(path), "%d/cgroup", (int)p->pid);
	errno = EBADF;
	text = t->pf.dirfd >= 0 ? procfs_read(&t->pf, path) : NULL;
	if (!text) {
		/* Gone: no identity; unreadable now (errno says why): nothing remembered. */
		if (read_failure(errno) != -ENOENT)
			return NULL;
		p->have |= HAVE_CONTAINER;
		errno = 0;
		return NULL;
	}
	p->have |= HAVE_CONTAINER;
	/* On the host: no identity (and never a half-read one); "/" is kept: it may be the monitor's own cgroup. */
	if (container_from_proc_cgroup(text, &id) == 0 || id.ns_root) {
		p->ctr = xmalloc(sizeof(*p->ctr));
		*p->ctr = id;
	}
	if (t->ncm >= PROC_CTR_MEMO_MAX) { /* exited processes pile up: start over */
		for (size_t i = 0; i < t->ncm; i++)
			free(t->cm[i].id);
		t->ncm = 0;
		hindex_clear(&t->cmi);
	}
	if (t->ncm == t->acm) {
		t->acm = t->acm ? t->acm * 2 : 64;
		t->cm = xrealloc(t->cm, t->acm * sizeof(*t->cm));
	}
	hindex_put(&t->cmi, h, (uint32_t)t->ncm);
	m = &t->cm[t->ncm++];
	m->pid = p->pid;
	m->starttime = p->starttime;
	m->id = NULL;
	if (p->ctr) {
		m->id = xmalloc(sizeof(*m->id));
		*m->id = *p->ctr;
	}
	errno = 0;
	return p->ctr;
}
