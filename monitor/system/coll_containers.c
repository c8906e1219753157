/* SPDX-License-Identifier: MIT */
/*
 * container_usage: per-container CPU and memory, what cAdvisor is added
 * for. Every container, Kubernetes pod and systemd unit cgroup on the host
 * (recognised from its path by container_from_cgroup, container.h) gets an
 * entry keyed by its cgroup path with its identity and:
 *
 *   cpu_usage_seconds, cpu_user_seconds, cpu_system_seconds  CPU time over the period
 *   cpu_periods, cpu_throttled_periods, cpu_throttled_seconds CFS bandwidth over the period
 *                                                            (only once the cgroup had a quota)
 *   oom_kills                                                OOM kills over the period
 *   memory_usage_bytes, memory_working_set_bytes,            now
 *   memory_rss_bytes, memory_cache_bytes
 *
 * Counters are increments over the period, as every counter of the report:
 * open() takes the baseline; a cgroup that appears later was created since
 * the previous scan, so all of its counters were spent within the period
 * and count from zero, and so does one recreated under the same path (a new
 * inode) or whose counter went back. The sum of a cgroup's increments is
 * its own counter: accel-prom's container_cpu_usage_seconds_total is the
 * cgroup's usage since it was created (or since the monitor started).
 *
 * Cost: the tree is listed when it may have changed. Every directory found
 * is kept open, and then the files read in it (cgroupfs.h, struct
 * cg_files), up to a quarter of RLIMIT_NOFILE in all; past that a
 * directory is opened by path when needed and closed after. A period
 * costs, per cgroup, one pread of each kept file and the openat, read and
 * close of each other, but for v2's memory.events, which has an inotify
 * watch of its own and is read again only after its event (struct
 * cg_files): three preads a cgroup on v2. Each directory listed gets an
 * inotify watch (a child made, removed or renamed: mkdir, rmdir and rename
 * go through the VFS, which tells inotify on a cgroup file system too)
 * before it is listed, so a change after the listing is an event: a
 * period with no event for a directory lists nothing, one with such an
 * event (or a watch that could not be added, a directory that could not be
 * listed, a full table, an overflowed queue) lists the whole tree again,
 * each directory that holds containers
 * with getdents64 on its kept fd (once on a cgroup file system, whose
 * kernfs answers with the whole listing when it fits). (A directory's
 * mtime cannot say what changed: kernfs moves it on a child's mkdir or
 * rmdir only when it holds attributes for the directory, which it
 * allocates lazily; on Linux 6.18's v1 hierarchies a new child leaves it
 * unchanged.) A container's own directory is never listed nor watched
 * (what is below it is the container's business and included in its
 * accounting), and the same name with another inode number (from the
 * listing's d_ino) is a new cgroup. bench/containers_bench.c measures it
 * against plain reads.
 */
#include "../host/cgroupfs.h"
#include "../core/collector.h"
#include "../core/fdbudget.h"
#include "../host/host.h"
#include "../../common/jsonw.h"
#include "../../common/log.h"
#include "../../common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define CT_MAX_DEPTH 32        /* cgroup levels walked below the root */
#define CT_MAX_NODES 65536     /* cgroups kept in the table */
#define CT_DENTS_BUF (32 * 1024)
#define CT_READ_BUF (64 * 1024) /* memory.stat of v1 with NUMA lines fits easily */

/* A root the tree is walked from: the v2 root, or one v1 hierarchy (serving one or more roles). */
struct ct_root {
	int fd;
	unsigned roles; /* bit per enum cg_hier it serves */
};

/* An entry's figures, in the order they are written. */
enum ct_val { V_CPU, V_USER, V_SYSTEM, V_PERIODS, V_THR_PERIODS, V_THR_SECONDS, V_MEM, V_WSET, V_RSS, V_CACHE,
	      V_OOM, V_N };

static const char *const val_keys[V_N] = {
	"\"cpu_usage_seconds\":",	   "\"cpu_user_seconds\":",	"\"cpu_system_seconds\":",
	"\"cpu_periods\":",		   "\"cpu_throttled_periods\":", "\"cpu_throttled_seconds\":",
	"\"memory_usage_bytes\":",	   "\"memory_working_set_bytes\":", "\"memory_rss_bytes\":",
	"\"memory_cache_bytes\":",	   "\"oom_kills\":",
};

/* One figure of an entry. */
struct ct_fig {
	unsigned char set;  /* the entry has it this cycle */
	unsigned char real; /* written as a real (d), else as a count (u: json_write_count) */
	double d;
	uint64_t u;
};

/* One cgroup directory, by its path below the root(s). */
struct ct_node {
	char *path;               /* "/kubepods.slice/..."; "" for the root */
	char *key;                /* path made valid UTF-8: its key in "containers" */
	int fd[CG_NHIER];         /* per root slot: the kept directory fd, or -1 */
	ino_t ino[CG_NHIER];      /* per root slot: the directory's inode number when opened */
	struct cg_files files;    /* the files cg_read keeps open (counted in the state's nfds) */
	unsigned seen[CG_NHIER];  /* per root slot: the scan generation it was last listed in */
	unsigned char watched[CG_NHIER]; /* per root slot: the directory has an inotify watch */
	int report;               /* a container, pod or unit: it has an entry */
	int leaf;                 /* a container: its children are not walked */
	struct container_id cid;
	struct cg_stats prev;     /* the last successful read */
	int have_prev;            /* prev is a baseline; 0: the next read counts from zero */
	int entry;                /* it has an entry in "containers" (write() writes it) */
	struct ct_fig fig[V_N];   /* the entry's figures */
	char *names;              /* the entry's names (names_pack, valid UTF-8), NULL: none yet */
	size_t names_len;
	int64_t names_until;      /* they hold until then while the host's names' generation is names_gen */
	uint64_t names_gen;
};

struct ct_state {
	char *root;               /* --path.cgroupfs (the host's container options) */
	struct host *host;        /* borrowed: names of containers and pods */
	long clk_tck;
	int v2;                   /* cgroup v2 at the root (else v1 hierarchies) */
	int on_cgroupfs;          /* every root is a cgroup file system (else a fixture tree: cg_files) */
	dev_t root_dev;           /* the root directory the hierarchies were found in */
	ino_t root_ino;
	struct ct_root roots[CG_NHIER];
	size_t nroots;
	int slot_of[CG_NHIER];    /* role -> root slot, -1 */
	struct ct_node **nodes;   /* the table */
	size_t nnodes, anodes;
	size_t *index;            /* open-addressing hash of nodes by path (index + 1; 0 empty) */
	size_t nindex;
	unsigned gen;             /* scan generation */
	int baseline_done;        /* open()'s scan happened: later cgroups count from zero */
	int was_baseline;         /* the last ct_cycle was a baseline scan (nothing to report yet) */
	size_t nfds, fd_cap;      /* directory fds kept, and the most that may be */
	struct fd_budget *fdb;    /* borrowed: the producer's descriptor budget; NULL: none (fd_cap from the limit) */
	size_t held;              /* what the budget was last told this collector holds */
	char *dents[CT_MAX_DEPTH + 1]; /* one listing buffer per depth */
	char *buf;                /* file read scratch */
	char err[512];            /* why the last scan failed, "" */
	char read_err[384];       /* this cycle's first cgroup that could not be read (not gone: EMFILE), "" */
	unsigned nread_err;       /* how many could not be read this cycle */
	int truncated;            /* the table was full during the last scan */
	int ino_fd;               /* inotify on every directory listed (-1: none, every scan lists the tree) */
	int ino_all;              /* the last listing put a watch on every directory it listed, without error */
	int files_unwatched;      /* the user's watches ran out: memory.events has none (read every period) */
	struct ct_event {
		int wd;
		uint32_t mask;
	} *ev;                    /* the events read this period */
	size_t nev, aev;
	int ev_lost;              /* this period's read lost events (an overflowed queue, a failed read) */
	struct log_limit trunc_log;
};

/* ---- the table ---------------------------------------------------------- */

static size_t path_hash(const char *p)
{
	return (size_t)hash_bytes(0x9e3779b97f4a7c15ull, p, strlen(p));
}

static void index_rebuild(struct ct_state *s)
{
	size_t want = 64;

	while (want < s->nnodes * 2)
		want *= 2;
	free(s->index);
	s->index = xcalloc(want, sizeof(*s->index));
	s->nindex = want;
	for (size_t i = 0; i < s->nnodes; i++) {
		size_t h = path_hash(s->nodes[i]->path) & (want - 1);

		while (s->index[h])
			h = (h + 1) & (want - 1);
		s->index[h] = i + 1;
	}
}

static struct ct_node *node_find(struct ct_state *s, const char *path)
{
	size_t h;

	if (!s->nindex)
		return NULL;
	for (h = path_hash(path) & (s->nindex - 1); s->index[h]; h = (h + 1) & (s->nindex - 1))
		if (!strcmp(s->nodes[s->index[h] - 1]->path, path))
			return s->nodes[s->index[h] - 1];
	return NULL;
}

static struct ct_node *node_add(struct ct_state *s, const char *path, const struct ct_node *parent)
{
	struct ct_node *n = xcalloc(1, sizeof(*n));
	char tmp[4096];

	n->path = xstrdup(path);
	snprintf(tmp, sizeof(tmp), "%s", *path ? path : "/");
	n->key = xstrdup(utf8_sanitize(tmp));
	for (int i = 0; i < CG_NHIER; i++)
		n->fd[i] = -1;
	cg_files_init(&n->files, !s->on_cgroupfs, s->files_unwatched ? -1 : s->ino_fd);
	/*
	 * Reported when its own component says something its parent's path
	 * did not: a container, a pod or a unit of its own (a conmon scope in
	 * a pod says only the pod's UID again: it is not the pod).
	 */
	if (*path && container_from_cgroup(path, &n->cid) == 0) {
		const struct container_id *pc = parent ? &parent->cid : NULL;

		utf8_sanitize(n->cid.unit); /* a unit's name is the path's: the report's strings are UTF-8 */
		n->leaf = n->cid.id[0] != '\0';
		n->report = n->leaf || (n->cid.pod_uid[0] && (!pc || strcmp(pc->pod_uid, n->cid.pod_uid))) ||
			    (!n->cid.pod_uid[0] && n->cid.unit[0] && (!pc || strcmp(pc->unit, n->cid.unit)));
	}
	if (s->nnodes == s->anodes) {
		s->anodes = s->anodes ? s->anodes * 2 : 64;
		s->nodes = xrealloc(s->nodes, s->anodes * sizeof(*s->nodes));
	}
	s->nodes[s->nnodes++] = n;
	if (s->nnodes * 2 > s->nindex) {
		index_rebuild(s);
	} else {
		size_t h = path_hash(path) & (s->nindex - 1);

		while (s->index[h])
			h = (h + 1) & (s->nindex - 1);
		s->index[h] = s->nnodes;
	}
	return n;
}

static void node_close_slot(struct ct_state *s, struct ct_node *n, size_t slot)
{
	n->watched[slot] = 0; /* a directory of this path made again is another inode */
	s->nfds -= cg_files_close(&n->files); /* reopened from the directories at the next read */
	if (n->fd[slot] >= 0) {
		close(n->fd[slot]);
		n->fd[slot] = -1;
		s->nfds--;
	}
}

static void node_free(struct ct_state *s, struct ct_node *n)
{
	for (size_t i = 0; i < CG_NHIER; i++)
		node_close_slot(s, n, i);
	free(n->names);
	free(n->path);
	free(n->key);
	free(n);
}

/* ---- the roots ---------------------------------------------------------- */

static void roots_close(struct ct_state *s)
{
	for (size_t i = 0; i < s->nnodes; i++)
		node_free(s, s->nodes[i]);
	s->nnodes = 0;
	index_rebuild(s);
	for (size_t i = 0; i < s->nroots; i++)
		close(s->roots[i].fd);
	s->nroots = 0;
	if (s->ino_fd >= 0)
		close(s->ino_fd); /* its watches go with it */
	s->ino_fd = -1;
	s->ino_all = 0;
	s->files_unwatched = 0; /* the next descriptor's watches are counted afresh */
	for (int i = 0; i < CG_NHIER; i++)
		s->slot_of[i] = -1;
}

/* Does directory fd hold file name? */
static int has_file(int fd, const char *name)
{
	return faccessat(fd, name, F_OK, 0) == 0;
}

/* Add dirfd (owned) as a root serving roles, or merge it into the root of the same directory. */
static void root_add(struct ct_state *s, int fd, unsigned roles)
{
	struct stat a, b;

	s->on_cgroupfs = (!s->nroots || s->on_cgroupfs) && on_kernel_fs(fd);
	if (fstat(fd, &a) == 0)
		for (size_t i = 0; i < s->nroots; i++)
			if (fstat(s->roots[i].fd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
				s->roots[i].roles |= roles;
				close(fd);
				fd = -1;
				break;
			}
	if (fd >= 0 && s->nroots < CG_NHIER)
		s->roots[s->nroots++] = (struct ct_root){ fd, roles };
	else if (fd >= 0)
		close(fd);
	for (size_t i = 0; i < s->nroots; i++)
		for (int r = 0; r < CG_NHIER; r++)
			if (s->roots[i].roles & (1u << r))
				s->slot_of[r] = (int)i;
}

/*
 * Find the hierarchies under the root: cgroup v2 when the root itself has
 * cgroup.controllers; else each v1 hierarchy directory (a symlink such as
 * cpu -> cpu,cpuacct is the same directory) by the files its controllers
 * add. 0, or -errno with s->err set.
 */
static int roots_open(struct ct_state *s)
{
	int fd = open(s->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *de;
	struct stat st;

	roots_close(s);
	if (fd < 0) {
		int e = errno;

		snprintf(s->err, sizeof(s->err), "cannot open %s: %s", s->root, strerror(e));
		return -e;
	}
	if (fstat(fd, &st) == 0) {
		s->root_dev = st.st_dev;
		s->root_ino = st.st_ino;
	}
	if (has_file(fd, "cgroup.controllers")) {
		s->v2 = 1;
		root_add(s, fd, 1u << CG_H_UNIFIED);
		return 0;
	}
	s->v2 = 0;
	d = fdopendir(fd);
	if (!d) {
		int e = errno;

		close(fd);
		snprintf(s->err, sizeof(s->err), "cannot list %s: %s", s->root, strerror(e));
		return -e;
	}
	while ((de = readdir(d))) {
		unsigned roles = 0;
		int h;

		if (de->d_name[0] == '.' || de->d_type == DT_LNK)
			continue;
		h = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (h < 0)
			continue;
		if (has_file(h, "cpuacct.usage"))
			roles |= 1u << CG_H_CPUACCT;
		if (has_file(h, "cpu.cfs_period_us") || has_file(h, "cpu.shares"))
			roles |= 1u << CG_H_CPU;
		if (has_file(h, "memory.usage_in_bytes"))
			roles |= 1u << CG_H_MEMORY;
		if (roles)
			root_add(s, h, roles);
		else
			close(h);
	}
	closedir(d);
	if (!s->nroots) {
		snprintf(s->err, sizeof(s->err),
			 "no cgroup hierarchy under %s: neither cgroup v2 (cgroup.controllers) nor a v1 cpuacct, cpu or "
			 "memory hierarchy", s->root);
		return -ENOENT;
	}
	return 0;
}

/* ---- the walk ----------------------------------------------------------- */

/*
 * A cgroup's directory or file could not be read for another reason than
 * its removal (ENOENT, ENODEV): EMFILE, EACCES. Remembered for the group's
 * error, so a cgroup left out this cycle is never left out in silence.
 */
static void read_failed(struct ct_state *s, const struct ct_node *n, int e)
{
	if (e == ENOENT || e == ENODEV)
		return;
	if (!s->nread_err++)
		snprintf(s->read_err, sizeof(s->read_err), "cannot read cgroup %s under %s: %s", *n->path ? n->path : "/",
			 s->root, strerror(e));
}

/*
 * Directory dir could not be opened or listed in root slot (error e): its
 * cgroups known from earlier scans are not gone, only unread. They stay
 * (their entries keep their last values) unless e says dir was removed.
 */
static void unlisted(struct ct_state *s, size_t slot, const struct ct_node *dir, int e)
{
	size_t len = strlen(dir->path);

	s->ino_all = 0; /* listed again next time, whatever the watches say */
	read_failed(s, dir, e);
	if (e == ENOENT || e == ENODEV)
		return;
	for (size_t i = 0; i < s->nnodes; i++)
		if (!strncmp(s->nodes[i]->path, dir->path, len) && s->nodes[i]->path[len] == '/')
			s->nodes[i]->seen[slot] = s->gen;
}

/*
 * The directory fd of n in root slot, opened relative to parent_fd (or by
 * path from the root) when not kept. *temp is set when the caller must
 * close it after use. -errno when it cannot be opened.
 */
static int node_open(struct ct_state *s, struct ct_node *n, size_t slot, int parent_fd, const char *name, int *temp)
{
	int fd;
	struct stat st;

	*temp = 0;
	if (n->fd[slot] >= 0)
		return n->fd[slot];
	if (parent_fd >= 0 && name)
		fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	else
		fd = openat(s->roots[slot].fd, n->path + 1, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (!n->ino[slot] && fstat(fd, &st) == 0)
		n->ino[slot] = st.st_ino;
	if (s->nfds < s->fd_cap) {
		n->fd[slot] = fd;
		s->nfds++;
	} else {
		*temp = 1;
	}
	return fd;
}

static void walk(struct ct_state *s, size_t slot, struct ct_node *dir, int fd, unsigned depth);

/* One child directory name of dir (listed with inode number ino), in root slot. */
static void walk_child(struct ct_state *s, size_t slot, struct ct_node *dir, int dir_fd, const char *name, ino_t ino,
		       unsigned depth)
{
	char path[4096];
	struct ct_node *n;
	int fd, temp;
	size_t dl = strlen(dir->path), nl = strlen(name);

	if (dl + 1 + nl >= sizeof(path))
		return;
	memcpy(path, dir->path, dl);
	path[dl] = '/';
	memcpy(path + dl + 1, name, nl + 1);
	n = node_find(s, path);
	if (!n) {
		if (s->nnodes >= CT_MAX_NODES) {
			s->truncated = 1;
			return;
		}
		n = node_add(s, path, dir);
	}
	if (n->ino[slot] && ino && n->ino[slot] != ino) {
		/* Removed and created again under the same path since the last scan: a new cgroup. */
		node_close_slot(s, n, slot);
		n->ino[slot] = 0;
		n->have_prev = 0;
	}
	n->seen[slot] = s->gen;
	if (n->leaf && n->fd[slot] >= 0)
		return; /* a container already open: nothing to list below it */
	fd = node_open(s, n, slot, dir_fd, name, &temp);
	if (fd < 0) {
		unlisted(s, slot, n, -fd);
		return;
	}
	if (n->report) /* off a cgroup file system, its files' directory watched before any file (struct cg_files) */
		cg_files_watch_dir(&n->files, s->roots[slot].roles, fd);
	if (!n->leaf && depth < CT_MAX_DEPTH)
		walk(s, slot, n, fd, depth + 1);
	if (temp)
		close(fd);
}

/*
 * Watch directory dir (open as fd) in root slot for a child made, removed
 * or renamed, before it is listed: a change after the listing is an event.
 */
static void watch(struct ct_state *s, size_t slot, struct ct_node *dir, int fd)
{
	char path[40];

	if (s->ino_fd < 0 || dir->watched[slot])
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (inotify_add_watch(s->ino_fd, path, CG_DIR_EVENTS) >= 0) {
		dir->watched[slot] = 1;
		return;
	}
	/*
	 * No watch (the user's limit, no /proc): the tree is listed again next
	 * time. A directory's watch saves a listing of the tree, a file's one
	 * pread: past the limit the files give theirs up.
	 */
	if (errno == ENOSPC && !s->files_unwatched) {
		s->files_unwatched = 1;
		for (size_t i = 0; i < s->nnodes; i++)
			cg_files_unwatch(&s->nodes[i]->files);
	}
	s->ino_all = 0;
}

/* List directory dir (open as fd) in root slot and walk each child cgroup. */
static void walk(struct ct_state *s, size_t slot, struct ct_node *dir, int fd, unsigned depth)
{
	char *b;
	ssize_t got;

	watch(s, slot, dir, fd);
	if (!s->dents[depth])
		s->dents[depth] = xmalloc(CT_DENTS_BUF);
	b = s->dents[depth];
	if (lseek(fd, 0, SEEK_SET) < 0)
		return;
	while ((got = getdents64(fd, b, CT_DENTS_BUF)) > 0) {
		for (ssize_t off = 0; off < got;) {
			struct dirent64 *de = (struct dirent64 *)(void *)(b + off);
			unsigned char type = de->d_type;

			off += de->d_reclen;
			if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
				continue;
			if (type == DT_UNKNOWN) {
				struct stat st;

				if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
					continue;
				type = DT_DIR;
			}
			if (type == DT_DIR)
				walk_child(s, slot, dir, fd, de->d_name, (ino_t)de->d_ino, depth);
		}
		/*
		 * kernfs (cgroup v1 and v2) fills the buffer until an entry does not
		 * fit: with room left for the longest one, the listing is complete,
		 * and the call that would return 0 is saved.
		 */
		if (s->on_cgroupfs && (size_t)got + sizeof(struct dirent64) < CT_DENTS_BUF)
			break;
	}
	if (got < 0)
		unlisted(s, slot, dir, errno);
}

/*
 * Whether the tree may have changed since its last listing: no complete
 * set of watches, or an event (a child made, removed or renamed; a watched
 * directory gone; the queue overflowed). Reads every pending event.
 */
static int ev_cmp(const void *a, const void *b)
{
	const struct ct_event *x = a, *y = b;

	return (x->wd > y->wd) - (x->wd < y->wd);
}

/*
 * Hand this period's events to the cgroups whose files they watch (struct
 * cg_files: memory.events, and off a cgroup file system the directories).
 * 1 when one is for a directory: the tree changed (a cgroup's own
 * directory watched for its files only, off a cgroup file system, says so
 * too: listing the tree again costs nothing but time there). A removed
 * watch's last word (IN_IGNORED) says nothing of the tree.
 */
static int events_apply(struct ct_state *s, int all)
{
	size_t n = 0;
	int changed = 0;

	qsort(s->ev, s->nev, sizeof(*s->ev), ev_cmp);
	for (size_t i = 0; i < s->nev; i++) { /* one per watch, its masks together */
		if (n && s->ev[n - 1].wd == s->ev[i].wd)
			s->ev[n - 1].mask |= s->ev[i].mask;
		else
			s->ev[n++] = s->ev[i];
	}
	s->nev = n;
	for (size_t i = 0; i < s->nnodes; i++) {
		struct cg_files *f = &s->nodes[i]->files;
		int wd[CG_NHIER + 1];
		size_t nwd = all ? 0 : cg_files_watches(f, wd);

		if (all)
			cg_files_event(f, -1, IN_Q_OVERFLOW);
		for (size_t w = 0; w < nwd; w++) {
			struct ct_event key = { .wd = wd[w] }, *e = bsearch(&key, s->ev, n, sizeof(*s->ev), ev_cmp);

			if (e && cg_files_event(f, wd[w], e->mask) == 1)
				e->mask = 0; /* taken: a file's, not the tree's */
		}
	}
	for (size_t i = 0; i < n && !changed; i++)
		changed = s->ev[i].mask && s->ev[i].mask != IN_IGNORED;
	s->nev = 0;
	return changed || all;
}

/* One event read (inotify_drain): kept for events_apply; an overflow says every watch may have missed something. */
static void on_event(void *ud, int wd, uint32_t mask)
{
	struct ct_state *s = ud;

	if (mask & IN_Q_OVERFLOW) {
		s->ev_lost = 1;
		return;
	}
	if (s->nev == s->aev) {
		s->aev = s->aev ? s->aev * 2 : 64;
		s->ev = xrealloc(s->ev, s->aev * sizeof(*s->ev));
	}
	s->ev[s->nev++] = (struct ct_event){ .wd = wd, .mask = mask };
}

static int tree_changed(struct ct_state *s)
{
	int changed = !s->ino_all || s->ino_fd < 0;

	s->ev_lost = 0;
	if (s->ino_fd >= 0 && inotify_drain(s->ino_fd, on_event, s) < 0)
		s->ev_lost = 1;
	if (s->nev || s->ev_lost)
		changed |= events_apply(s, s->ev_lost);
	return changed;
}

/*
 * One scan: list every root, then forget the cgroups no root listed (and
 * the fds of those a root no longer has). 0, or -errno with s->err set.
 */
static int scan(struct ct_state *s)
{
	struct ct_node *top;
	size_t kept = 0;
	struct stat st;

	/*
	 * The kept fds would go on reading a tree that is no longer at the
	 * root's path (unmounted, replaced): one stat a period tells.
	 */
	if (s->nroots && (stat(s->root, &st) || st.st_dev != s->root_dev || st.st_ino != s->root_ino)) {
		roots_close(s);
		s->baseline_done = 0; /* a new tree: its first scan is a baseline */
	}
	if (!s->nroots && roots_open(s))
		return -1;
	s->gen++;
	if (s->ino_fd < 0)
		s->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (!tree_changed(s)) {
		/* No cgroup made, removed or renamed since the last listing: the same cgroups, not listed again. */
		for (size_t i = 0; i < s->nnodes; i++)
			for (size_t slot = 0; slot < s->nroots; slot++)
				if (s->nodes[i]->seen[slot] == s->gen - 1)
					s->nodes[i]->seen[slot] = s->gen;
		s->err[0] = '\0';
		return 0;
	}
	s->truncated = 0;
	s->ino_all = s->ino_fd >= 0;
	top = node_find(s, "");
	if (!top)
		top = node_add(s, "", NULL);
	for (size_t slot = 0; slot < s->nroots; slot++) {
		top->seen[slot] = s->gen;
		walk(s, slot, top, s->roots[slot].fd, 0);
	}
	if (s->truncated)
		s->ino_all = 0; /* what did not fit is looked for again */
	for (size_t i = 0; i < s->nnodes; i++) {
		struct ct_node *n = s->nodes[i];
		int any = 0;

		for (size_t slot = 0; slot < s->nroots; slot++) {
			if (n->seen[slot] == s->gen) {
				any = 1;
			} else {
				node_close_slot(s, n, slot);
				n->ino[slot] = 0;
			}
		}
		if (any)
			s->nodes[kept++] = n;
		else
			node_free(s, n);
	}
	if (kept != s->nnodes) {
		s->nnodes = kept;
		index_rebuild(s);
	}
	s->err[0] = '\0';
	return 0;
}

/* ---- the entries -------------------------------------------------------- */

/* The increment of a counter since the baseline; from zero when there is none or it went back. */
static uint64_t delta(int have_prev, uint64_t prev, uint64_t cur)
{
	return have_prev && cur >= prev ? cur - prev : cur;
}

/* The names of cn, in enum ct_name's order, one after the other with their NULs, into dst (sizeof(*cn) + 8 bytes). */
enum ct_name { N_POD, N_NS, N_NAME, N_RUNTIME, N_ECS_CLUSTER, N_ECS_TASK_ARN, N_ECS_TASK_FAMILY, N_ECS_TASK_REVISION,
	       N_COUNT };

static size_t names_pack(struct container_names *cn, char *dst)
{
	char *const f[N_COUNT] = { cn->pod,	    cn->ns,	      cn->name,		   cn->runtime,
				   cn->ecs_cluster, cn->ecs_task_arn, cn->ecs_task_family, cn->ecs_task_revision };
	const size_t sz[N_COUNT] = { sizeof(cn->pod),	      sizeof(cn->ns),
				     sizeof(cn->name),	      sizeof(cn->runtime),
				     sizeof(cn->ecs_cluster),     sizeof(cn->ecs_task_arn),
				     sizeof(cn->ecs_task_family), sizeof(cn->ecs_task_revision) };
	size_t len = 0;

	for (size_t i = 0; i < N_COUNT; i++) {
		size_t n;

		f[i][sz[i] - 1] = '\0';
		n = strlen(utf8_sanitize(f[i]));
		memcpy(dst + len, f[i], n);
		len += n;
		dst[len++] = '\0';
	}
	return len;
}

/*
 * The entry's names, as cAdvisor labels a container (written by
 * entry_write): asked each cycle; the resolver caches, and a name the
 * kubelet gives later shows up then.
 */
static void names_update(struct ct_state *s, struct ct_node *n, int64_t now)
{
	struct container_names cn;
	char packed[sizeof(cn) + 8];
	size_t len;

	if (n->names && now < n->names_until && n->names_gen == host_names_gen(s->host))
		return; /* the same answer as last time (host_container_names) */
	memset(&cn, 0, sizeof(cn));
	n->names_until = INT64_MAX;
	if (n->cid.id[0] || n->cid.pod_uid[0])
		n->names_until = host_container_names(s->host, &n->cid, now, &cn);
	n->names_gen = host_names_gen(s->host);
	len = names_pack(&cn, packed);
	if (n->names && n->names_len == len && !memcmp(n->names, packed, len))
		return; /* the same names as last time */
	free(n->names);
	n->names = xmalloc(len);
	memcpy(n->names, packed, len);
	n->names_len = len;
}

/* The entry's figure k is v, a real or a count. */
static void val_real(struct ct_node *n, enum ct_val k, double v)
{
	n->fig[k] = (struct ct_fig){ .set = 1, .real = 1, .d = v };
}

static void val_u64(struct ct_node *n, enum ct_val k, uint64_t v)
{
	n->fig[k] = (struct ct_fig){ .set = 1, .u = v };
}

/* The entry has no figure k now. */
static void val_del(struct ct_node *n, enum ct_val k)
{
	n->fig[k].set = 0;
}

/* n has no entry now (a later one with its path is new). */
static void node_drop_entry(struct ct_node *n)
{
	n->entry = 0;
	memset(n->fig, 0, sizeof(n->fig));
	free(n->names);
	n->names = NULL;
}

/* Read node n and update its entry. 0, or -ENOENT when the cgroup is gone. */
static int node_update(struct ct_state *s, struct ct_node *n, int64_t now)
{
	int fd[CG_NHIER], temp[CG_NHIER] = { 0 }, rc, unopened = 0;
	size_t room, room0;
	struct cg_stats st;
	int hp;

	for (int r = 0; r < CG_NHIER; r++) {
		int slot = s->slot_of[r];

		fd[r] = -1;
		if (slot >= 0 && n->seen[slot] == s->gen) {
			/* cpu and cpuacct may be one hierarchy: open its directory once. */
			int same = -1;

			for (int q = 0; q < r; q++)
				if (s->slot_of[q] == slot)
					same = q;
			fd[r] = same >= 0 ? fd[same] : node_open(s, n, (size_t)slot, -1, NULL, &temp[r]);
			if (fd[r] < 0 && same < 0 && fd[r] != -ENOENT && fd[r] != -ENODEV) {
				read_failed(s, n, -fd[r]);
				unopened = 1;
			}
			if (fd[r] < 0)
				fd[r] = -1;
		}
	}
	room = s->nfds < s->fd_cap ? s->fd_cap - s->nfds : 0;
	room0 = room;
	rc = cg_read(fd, s->v2, s->clk_tck, &st, s->buf, CT_READ_BUF, &n->files, &room);
	s->nfds = s->nfds + room0 - room;
	for (int r = 0; r < CG_NHIER; r++)
		if (temp[r])
			close(fd[r]);
	if (unopened && !st.has)
		return 0; /* not one directory could be opened, none is gone: keep the last entry's values */
	if (rc == -ENOENT || rc == -ENODEV)
		return -ENOENT;
	if (rc < 0)
		read_failed(s, n, -rc); /* what could be read is in st */
	if (!st.has)
		return 0; /* unreadable now: keep the last entry's values */
	n->entry = 1;
	names_update(s, n, now);
	hp = n->have_prev && s->baseline_done;
	if (st.has & CG_CPU)
		val_real(n, V_CPU, (double)delta(hp, n->prev.usage_ns, st.usage_ns) / 1e9);
	else
		val_del(n, V_CPU);
	if (st.has & CG_CPU_SPLIT) {
		val_real(n, V_USER, (double)delta(hp, n->prev.user_ns, st.user_ns) / 1e9);
		val_real(n, V_SYSTEM, (double)delta(hp, n->prev.system_ns, st.system_ns) / 1e9);
	} else {
		val_del(n, V_USER);
		val_del(n, V_SYSTEM);
	}
	/* As cAdvisor, the CFS counters only for a cgroup that had a quota (its periods tick only then). */
	if ((st.has & CG_CFS) && st.nr_periods) {
		int hc = hp && (n->prev.has & CG_CFS);

		val_u64(n, V_PERIODS, delta(hc, n->prev.nr_periods, st.nr_periods));
		val_u64(n, V_THR_PERIODS, delta(hc, n->prev.nr_throttled, st.nr_throttled));
		val_real(n, V_THR_SECONDS, (double)delta(hc, n->prev.throttled_ns, st.throttled_ns) / 1e9);
	} else {
		val_del(n, V_PERIODS);
		val_del(n, V_THR_PERIODS);
		val_del(n, V_THR_SECONDS);
	}
	if (st.has & CG_MEM)
		val_u64(n, V_MEM, st.mem_usage);
	else
		val_del(n, V_MEM);
	if ((st.has & (CG_MEM | CG_MEM_STAT)) == (CG_MEM | CG_MEM_STAT))
		val_u64(n, V_WSET, st.mem_working_set);
	else
		val_del(n, V_WSET);
	if (st.has & CG_MEM_STAT) {
		val_u64(n, V_RSS, st.mem_rss);
		val_u64(n, V_CACHE, st.mem_cache);
	} else {
		val_del(n, V_RSS);
		val_del(n, V_CACHE);
	}
	if (st.has & CG_OOM)
		val_u64(n, V_OOM, delta(hp && (n->prev.has & CG_OOM), n->prev.oom_kills, st.oom_kills));
	else
		val_del(n, V_OOM);
	n->prev = st;
	n->have_prev = 1;
	return 0;
}

/* Scan and read every reported cgroup. 0, or -errno with s->err set (nothing read). */
static int ct_cycle(struct ct_state *s, int64_t now)
{
	s->read_err[0] = '\0';
	s->nread_err = 0;
	if (s->fdb) /* a quarter of the producer's budget, within what the others left */
		s->fd_cap = fd_budget_cap(s->fdb, s->held, 1, 4);
	if (scan(s)) {
		/* The root may come back (a remount, a DaemonSet's volume): look for it afresh next time. */
		roots_close(s);
		s->baseline_done = 0;
		if (s->fdb)
			fd_budget_hold(s->fdb, &s->held, s->nfds);
		return -1;
	}
	/* Children first (the table is in walk order): a pod learns its names from its containers' state. */
	for (size_t i = s->nnodes; i-- > 0;) {
		struct ct_node *n = s->nodes[i];

		if (!n->report)
			continue;
		if (node_update(s, n, now) == -ENOENT && n->entry) {
			/* Gone between the listing and the read: its entry goes; a later one with its path is new. */
			node_drop_entry(n);
			n->have_prev = 0;
		}
	}
	s->was_baseline = !s->baseline_done;
	s->baseline_done = 1;
	if (s->fdb)
		fd_budget_hold(s->fdb, &s->held, s->nfds);
	return 0;
}

static int ct_open(const struct mon_env *env, const struct coll_target *t, void **state)
{
	struct ct_state *s = xcalloc(1, sizeof(*s));
	struct rlimit rl;

	(void)t;
	*state = s;
	s->root = xstrdup(host_container_opts(env->host)->cgroupfs);
	s->host = env->host;
	s->clk_tck = host_clk_tck(env->host);
	s->buf = xmalloc(CT_READ_BUF);
	s->ino_fd = -1;
	for (int i = 0; i < CG_NHIER; i++)
		s->slot_of[i] = -1;
	/*
	 * Keep directories open up to a quarter of the producer's descriptor
	 * budget (fdbudget.h; without one, of the limit: 256 of the usual
	 * 1024): past that a directory is opened when needed and closed after.
	 */
	s->fd_cap = 256;
	s->fdb = host_fd_budget(env->host);
	if (s->fdb)
		s->fd_cap = fd_budget_cap(s->fdb, 0, 1, 4);
	else if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		s->fd_cap = rl.rlim_cur / 4 < 1 ? 1 : (size_t)(rl.rlim_cur / 4);
	/* The baseline: the cgroups there now count from this scan; the ones created later from zero. */
	ct_cycle(s, clock_mono_ns());
	return 0;
}

static int ct_sample(void *state, const struct cycle *cy, char *err, size_t errsz)
{
	struct ct_state *s = state;

	if (ct_cycle(s, cy->mono_ns ? cy->mono_ns : clock_mono_ns())) {
		snprintf(err, errsz, "%s", s->err);
		return -1;
	}
	if (s->truncated)
		log_limited(&s->trunc_log, "containers: more than %d cgroups under %s: the rest are left out",
			    CT_MAX_NODES, s->root);
	if (s->was_baseline) {
		/* No scan before (no root at open(), or a new tree there): this one is the baseline, as vcpu_usage's. */
		snprintf(err, errsz, "no baseline scan yet; usage is reported from the next period");
		return -1;
	}
	/* What could be read is reported; what could not, and why, is the group's error. */
	if (s->nread_err > 1)
		snprintf(err, errsz, "%s (and %u more cgroups)", s->read_err, s->nread_err - 1);
	else if (s->nread_err)
		snprintf(err, errsz, "%s", s->read_err);
	return 0;
}

/* Append ,"key":"v" (the first member without its comma: *sep) when v is not empty. */
static int put_str(struct buf *b, const char **sep, const char *key, const char *v)
{
	int rc;

	if (!*v)
		return 0;
	rc = buf_puts(b, *sep) || buf_puts(b, key) || json_write_string(b, v, strlen(v));
	*sep = ",";
	return rc;
}

/*
 * Append n's entry: its identity (from the cgroup's path), its names (as
 * cAdvisor labels a container: "pod", "namespace", "container", the
 * Kubernetes container name of a container in a pod, and "name", the
 * runtime's own name of one outside any pod, else its id; "runtime" the
 * runtime that named it when the cgroup did not say; an ECS task's
 * container: its task) and its figures.
 */
static int entry_write(const struct ct_node *n, struct buf *b)
{
	const struct container_id *c = &n->cid;
	const char *nm[N_COUNT], *p = n->names ? n->names : "", *sep = "";
	int rc;

	for (size_t i = 0; i < N_COUNT; i++) {
		nm[i] = p;
		if (n->names)
			p += strlen(p) + 1;
	}
	rc = buf_puts(b, "{") || put_str(b, &sep, "\"runtime\":", c->runtime[0] ? c->runtime : nm[N_RUNTIME]) ||
	     put_str(b, &sep, "\"id\":", c->id) || put_str(b, &sep, "\"pod_uid\":", c->pod_uid) ||
	     put_str(b, &sep, "\"qos\":", c->qos) || put_str(b, &sep, "\"unit\":", c->unit) ||
	     put_str(b, &sep, "\"ecs_task_id\":", c->ecs_task) || put_str(b, &sep, "\"pod\":", nm[N_POD]) ||
	     put_str(b, &sep, "\"namespace\":", nm[N_NS]) ||
	     put_str(b, &sep, "\"container\":", c->id[0] && c->pod_uid[0] ? nm[N_NAME] : "") ||
	     put_str(b, &sep, "\"name\":", c->id[0] && !c->pod_uid[0] && nm[N_NAME][0] ? nm[N_NAME] : c->id) ||
	     put_str(b, &sep, "\"ecs_cluster\":", nm[N_ECS_CLUSTER]) ||
	     put_str(b, &sep, "\"ecs_task_arn\":", nm[N_ECS_TASK_ARN]) ||
	     put_str(b, &sep, "\"ecs_task_family\":", nm[N_ECS_TASK_FAMILY]) ||
	     put_str(b, &sep, "\"ecs_task_revision\":", nm[N_ECS_TASK_REVISION]);
	for (int k = 0; k < V_N && !rc; k++) {
		const struct ct_fig *f = &n->fig[k];

		if (!f->set)
			continue;
		rc = buf_puts(b, sep) || buf_puts(b, val_keys[k]) ||
		     (f->real ? json_write_real(b, f->d) : json_write_count(b, f->u));
		sep = ",";
	}
	return rc || buf_puts(b, "}") ? -ENOSPC : 0;
}

/* "cgroup_version" and "containers": every entry, children before their parents (the table's walk backwards). */
static int ct_write(void *state, struct buf *b)
{
	const struct ct_state *s = state;
	const char *sep = "";
	int rc = buf_puts(b, s->v2 ? ",\"cgroup_version\":2,\"containers\":{"
				   : ",\"cgroup_version\":1,\"containers\":{");

	for (size_t i = s->nnodes; i-- > 0 && !rc;) {
		const struct ct_node *n = s->nodes[i];

		if (!n->entry)
			continue;
		rc = buf_puts(b, sep) || json_write_string(b, n->key, strlen(n->key)) || buf_puts(b, ":") ||
		     entry_write(n, b);
		sep = ",";
	}
	return rc || buf_puts(b, "}") ? -ENOSPC : 0;
}

static void ct_close(void *state)
{
	struct ct_state *s = state;

	if (!s)
		return;
	roots_close(s);
	if (s->fdb)
		fd_budget_hold(s->fdb, &s->held, 0);
	free(s->nodes);
	free(s->index);
	for (int i = 0; i <= CT_MAX_DEPTH; i++)
		free(s->dents[i]);
	free(s->buf);
	free(s->ev);
	free(s->root);
	free(s);
}

const struct collector_ops coll_containers_ops = {
	.name = "containers",
	.rows = &containers_rows,
	.scope = COLL_SYSTEM,
	.group = GROUP_CONTAINER_USAGE,
	.open = ct_open,
	.sample = ct_sample,
	.write = ct_write,
	.close = ct_close,
};
