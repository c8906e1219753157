/* SPDX-License-Identifier: MIT */
/*
 * The container_usage collector (monitor/system/coll_containers.c) and the cgroup
 * reader under it (monitor/host/cgroupfs.c), on copies of the fixture trees
 * tests/fixtures/cgroup/v2-systemd (kubepods.slice with a Guaranteed, a
 * Burstable and a BestEffort pod, containerd, CRI-O with its conmon, a
 * pause container, Docker under system.slice, a systemd service, a session
 * scope) and tests/fixtures/cgroup/v1-cgroupfs (cpu,cpuacct with the cpu
 * and cpuacct symlinks, memory apart, the hybrid layout's empty unified
 * hierarchy; the cgroupfs driver's /kubepods/<qos>/pod<UID>/<ID> and
 * /docker/<ID>). Every field of every entry is checked; then the tree
 * changes between cycles: counters move, a container appears, one is
 * removed, one is created again under the same path, a counter goes back,
 * files go missing or hold garbage.
 */
#include "../../monitor/host/cgroupfs.h"
#include "../../monitor/core/collector.h"
#include "../../monitor/host/host.h"
#include "../../common/log.h"
#include "../../common/samples.h"
#include "../../common/util.h"
#include "sys_group.h"
#include "tap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define G_UID "8f2b7c1e_3a4d_4e5f_9a6b_1c2d3e4f5a6b"
#define B_UID "1b2c3d4e_5f60_4718_8a9b_0c1d2e3f4a5b"
#define E_UID "aa11bb22_cc33_4d44_8e55_ff6677889900"
#define G_ID "0f3c2a9be1d47777777777777777777777777777777777777777777777777777"
#define B_ID "2222222222222222222222222222222222222222222222222222222222222222"
#define E_ID "3333333333333333333333333333333333333333333333333333333333333333"
#define D_ID "4444444444444444444444444444444444444444444444444444444444444444"
#define P_ID "5555555555555555555555555555555555555555555555555555555555555555"
#define BC_ID "6666666666666666666666666666666666666666666666666666666666666666"

/* v2 paths */
#define POD_G "/kubepods.slice/kubepods-pod" G_UID ".slice"
#define CT_G POD_G "/cri-containerd-" G_ID ".scope"
#define CT_P POD_G "/cri-containerd-" P_ID ".scope"
#define POD_B "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" B_UID ".slice"
#define CT_B POD_B "/crio-" B_ID ".scope"
#define POD_E "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" E_UID ".slice"
#define CT_E POD_E "/cri-containerd-" E_ID ".scope"
#define CT_D "/system.slice/docker-" D_ID ".scope"
#define UNIT "/system.slice/containerd.service"
#define NEW_ID "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define CT_NEW POD_E "/cri-containerd-" NEW_ID ".scope"

static char work[256], root[300];

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char cmd[4096];
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
		snprintf(work, sizeof(work), "%s/accel-containers.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(work)) {
			printf("Bail out! mkdtemp\n");
			exit(2);
		}
	}
	snprintf(root, sizeof(root), "%s/cg", work);
	sh("rm -rf '%s' && cp -a tests/fixtures/cgroup/%s '%s'", root, tree, root);
}

/* Write text to ROOT/rel. */
static void put(const char *rel, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(const char *rel, const char *fmt, ...)
{
	char path[1024];
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	f = fopen(path, "w");
	va_start(ap, fmt);
	if (!f || vfprintf(f, fmt, ap) < 0 || fclose(f)) {
		printf("Bail out! write %s\n", path);
		exit(2);
	}
	va_end(ap);
}

extern const struct collector_ops coll_containers_ops;
static const struct collector_ops *ops = &coll_containers_ops;

static struct host *host; /* only its container options and name resolver are used */

/* The collector on cgroupfs, names from the state files under tests/fixtures/cgroup/rootfs. */
static void *open_state(const char *cgroupfs)
{
	struct container_opts o = { .rootfs = "tests/fixtures/cgroup/rootfs", .cgroupfs = cgroupfs };
	struct mon_env env;
	void *st = NULL;

	host_free(host); /* the previous state was closed */
	host = host_new(&(struct host_opts){ .ctr = o, .clk_tck = 100, .page_size = 4096 }, NULL);
	env = (struct mon_env){ .host = host };

	ok(ops->open(&env, &(struct coll_target){ .dev = NULL }, &st) == 0 && st, "open on %s", cgroupfs);
	return st;
}

static json_t *collect(void *st)
{
	return sys_group(ops, st, NULL);
}

/* containers.<path>.<field> as a number; -12345 when absent. */
static double f(json_t *g, const char *path, const char *field)
{
	json_t *v = json_object_get(json_object_get(json_object_get(g, "containers"), path), field);

	return json_is_number(v) ? json_number_value(v) : -12345.0;
}

static int has(json_t *g, const char *path, const char *field)
{
	json_t *e = json_object_get(json_object_get(g, "containers"), path);

	return field ? json_object_get(e, field) != NULL : e != NULL;
}

static const char *s(json_t *g, const char *path, const char *field)
{
	json_t *v = json_object_get(json_object_get(json_object_get(g, "containers"), path), field);

	return json_is_string(v) ? json_string_value(v) : "(absent)";
}

/* Every field of one entry: identity, then the numbers (NAN: absent). */
struct want {
	const char *path, *runtime, *id, *pod_uid, *qos, *unit, *pod, *ns, *container, *name;
	double cpu, user, sys, periods, throttled, throttled_s, usage, ws, rss, cache, oom;
};

static void check_entry(json_t *g, const struct want *w)
{
	static const char *const idk[] = { "runtime", "id", "pod_uid", "qos", "unit", "pod", "namespace", "container",
					   "name" };
	static const char *const numk[] = { "cpu_usage_seconds", "cpu_user_seconds", "cpu_system_seconds",
					    "cpu_periods", "cpu_throttled_periods", "cpu_throttled_seconds",
					    "memory_usage_bytes", "memory_working_set_bytes", "memory_rss_bytes",
					    "memory_cache_bytes", "oom_kills" };
	const char *ids[] = { w->runtime, w->id, w->pod_uid, w->qos, w->unit, w->pod, w->ns, w->container, w->name };
	const double nums[] = { w->cpu, w->user, w->sys, w->periods, w->throttled, w->throttled_s,
				w->usage, w->ws, w->rss, w->cache, w->oom };
	json_t *e = json_object_get(json_object_get(g, "containers"), w->path);
	size_t want_keys = 0;

	if (!ok(e, "%s: has an entry", w->path))
		return;
	for (size_t i = 0; i < 9; i++) {
		char name[160];

		snprintf(name, sizeof(name), "%s: %s", w->path + (strlen(w->path) > 60 ? strlen(w->path) - 60 : 0), idk[i]);
		is_str(s(g, w->path, idk[i]), *ids[i] ? ids[i] : "(absent)", name);
		want_keys += *ids[i] != '\0';
	}
	for (size_t i = 0; i < 11; i++) {
		char name[160];

		snprintf(name, sizeof(name), "%s: %s", w->path + (strlen(w->path) > 60 ? strlen(w->path) - 60 : 0), numk[i]);
		if (isnan(nums[i])) {
			ok(!has(g, w->path, numk[i]), "%s absent", name);
		} else {
			is_double(f(g, w->path, numk[i]), nums[i], 1e-9, name);
			want_keys++;
		}
	}
	is_int(json_object_size(e), want_keys, "... and no other field");
}

#define A NAN

/* What map_report makes of a group: "family{label=value,...} value" lines, in order. */
static void on_sample(const struct sample *smp, void *ud)
{
	struct buf *b = ud;

	if (strncmp(smp->fam->name, "container_", 10))
		return;
	buf_printf(b, "%s{", smp->fam->name);
	for (size_t i = smp->ninstance; i < smp->nlabels; i++)
		buf_printf(b, "%s%s=%s", i > smp->ninstance ? "," : "", smp->labels[i].name, smp->labels[i].value);
	buf_printf(b, "} %.17g\n", smp->value);
}

static void mapped(json_t *g, struct buf *b)
{
	json_t *rep = json_pack("{s:s, s:{}, s:[], s:{s:O}}", "timestamp", "2026-11-23T19:00:00.000Z", "monitor",
				"runtime_data", "system_data", "container_usage", g);
	struct map_cb cb = { .sample = on_sample, .ud = b };

	buf_reset(b);
	map_report(rep, 0, &cb);
	json_decref(rep);
}

static void test_parsers(void)
{
	static const char *const keys[] = { "file", "oom_kill", "anon" };
	uint64_t v[3] = { 0 };
	struct cg_stats st;

	is_int(cg_keyed("file_mapped 5\nfile 7\nanon 3", keys, 3, v), 5, "keyed: exact keys only, last line without \\n");
	is_int(v[0], 7, "file, not file_mapped");
	is_int(v[2], 3, "anon");
	is_int(cg_keyed("oom_kill_disable 0\noom_kill -1\nfile 1 2\n", keys, 3, v), 0,
	       "a negative value, a second number: not taken");
	memset(v, 0, sizeof(v));
	is_int(cg_keyed("anon 1\nanon 2\nfile 18446744073709551615\noom_kill 18446744073709551616\n", keys, 3, v), 5,
	       "keyed: 20 digits that fit are taken, one past 2^64-1 is not");
	ok(v[2] == 1 && v[0] == 18446744073709551615ull, "keyed: the first line of a key counts");
	is_int(cg_keyed("file  +7\nanon 12abc\noom_kill 4 \n", keys, 3, v), 1,
	       "keyed: blanks and a sign before the number as strtoull reads them; trailing bytes: not taken");
	is_int(v[0], 7, "keyed: \"  +7\" is 7");
	memset(&st, 0, sizeof(st));
	cg_parse_v1_cpuacct_stat("user 250\nsystem 50\n", 100, &st);
	is_int(st.user_ns, 2500000000ll, "cpuacct.stat: USER_HZ ticks -> ns");
	is_int(st.system_ns, 500000000ll, "system ticks -> ns");
	memset(&st, 0, sizeof(st));
	cg_parse_v2_cpu_stat("usage_usec 10\nuser_usec 7\nsystem_usec 3\n", &st);
	is_int(st.has, CG_CPU | CG_CPU_SPLIT, "v2 cpu.stat without the cpu controller: no CFS part");
	memset(&st, 0, sizeof(st));
	st.has = CG_MEM;
	st.mem_usage = 100;
	cg_parse_v2_memory_stat("anon 10\nfile 90\ninactive_file 150\n", &st);
	cg_finish(&st);
	is_int(st.mem_working_set, 0, "working set: usage - inactive_file, floored at 0 (cAdvisor)");
	memset(&st, 0, sizeof(st));
	cg_parse_v2_memory_stat("anon 10\nfile 90\n", &st);
	ok(!(st.has & CG_MEM_STAT), "memory.stat without inactive_file: not taken");
}

/* Set ROOT/rel's access and modification times to sec (since the epoch). */
static void date_dir(const char *rel, time_t sec)
{
	char path[1024];
	struct timespec t[2] = { { sec, 0 }, { sec, 0 } };

	snprintf(path, sizeof(path), "%s%s", root, rel);
	if (utimensat(AT_FDCWD, path, t, 0)) {
		printf("Bail out! utimensat %s\n", path);
		exit(2);
	}
}

/* A v2 cgroup directory root/name with its four files (memory.events' text events); its fd. */
static int cg_dir(const char *name, const char *events)
{
	char path[1024];

	sh("rm -rf '%s/%s' && mkdir '%s/%s'", root, name, root, name);
	snprintf(path, sizeof(path), "/%s/cpu.stat", name);
	put(path, "usage_usec 10\nuser_usec 7\nsystem_usec 3\n");
	snprintf(path, sizeof(path), "/%s/memory.current", name);
	put(path, "100\n");
	snprintf(path, sizeof(path), "/%s/memory.stat", name);
	put(path, "anon 10\nfile 90\ninactive_file 50\n");
	snprintf(path, sizeof(path), "/%s/memory.events", name);
	put(path, "%s", events);
	snprintf(path, sizeof(path), "%s/%s", root, name);
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/*
 * Kept files off a cgroup file system (check_links): a directory that shows
 * the inode and mtime it had when its files were last checked is read without
 * checking each file; one whose mtime moved, or moved too recently to tell a
 * later change apart, has each kept file checked as before.
 */
static void test_kept_stamp(void)
{
	int fd[CG_NHIER] = { -1, -1, -1, -1 };
	struct cg_files k;
	struct cg_stats st;
	char buf[4096];
	size_t room = 16;
	const time_t old = 1700000000; /* 2023: long settled */

	setup("v2-systemd");
	fd[CG_H_UNIFIED] = cg_dir("d", "oom_kill 2\n");
	date_dir("/d", old);
	cg_files_init(&k, 1, -1);
	is_int(cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room), 0, "stamp: first read");
	is_int(room, 12, "stamp: the four files kept");
	ok(k.stamped & (1u << CG_H_UNIFIED), "stamp: a directory dated long ago is stamped");
	put("/d/memory.current", "200\n"); /* rewritten in place: the directory does not change */
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	is_int(st.mem_usage, 200, "stamp: a kept file rewritten in place reads its new text");
	/* Removed, then the directory's mtime put back: only the stamp is checked, so the kept file still reads. */
	sh("rm '%s/d/memory.events'", root);
	date_dir("/d", old);
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	ok((st.has & CG_OOM) && st.oom_kills == 2,
	   "stamp: an unchanged directory's kept files are read without a check of their own");
	/* A removal moves the mtime: every kept file is checked, the removed one is gone. */
	sh("rm '%s/d/memory.stat'", root);
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	ok(!(st.has & (CG_MEM_STAT | CG_OOM)) && (st.has & CG_MEM), "stamp: a moved mtime: removed files are gone");
	ok(!(k.stamped & (1u << CG_H_UNIFIED)), "stamp: an mtime of now is not trusted (a later change may share it)");
	/* Within the settling time each read checks every kept file. */
	sh("rm '%s/d/cpu.stat'", root);
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	ok(!(st.has & CG_CPU) && (st.has & CG_MEM), "stamp: a removal in the same second is seen");
	cg_files_close(&k);
	close(fd[CG_H_UNIFIED]);
}

/* What the events read were, for the helpers below. */
struct ev_seen {
	struct cg_files *k;
	int file_only; /* hand over only the events of k's memory.events watch */
	int got;       /* events handed over: of memory.events (file_only), else of the directories' watches */
	uint32_t masks;
};

static void on_event(void *ud, int wd, uint32_t mask)
{
	struct ev_seen *e = ud;

	if (e->file_only && wd != e->k->ev_wd)
		return;
	if (e->file_only) {
		cg_files_event(e->k, wd, mask);
		e->masks |= mask;
		e->got++;
	} else {
		e->got += cg_files_event(e->k, wd, mask) == 2;
	}
}

/* Hand every pending event for k's memory.events watch to it; how many there were, their masks in *masks. */
static int events_to(int ino, struct cg_files *k, uint32_t *masks)
{
	struct ev_seen e = { .k = k, .file_only = 1 };

	inotify_drain(ino, on_event, &e);
	*masks = e.masks;
	return e.got;
}

/* Hand every pending event to k; how many were for its directories' watches. */
static int dir_events_to(int ino, struct cg_files *k)
{
	struct ev_seen e = { .k = k };

	inotify_drain(ino, on_event, &e);
	return e.got;
}

/*
 * Off a cgroup file system with an inotify descriptor, a directory is
 * watched before its files are checked; once stamped and with no event
 * since, it is not looked at: a file replaced behind an event nobody
 * handed over still reads the old one (which shows no fstat was made),
 * and once the event is handed over the new one is read.
 */
static void test_dir_watch(void)
{
	int fd[CG_NHIER] = { -1, -1, -1, -1 }, ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	struct cg_files k;
	struct cg_stats st;
	char buf[4096];
	size_t room = 16;
	int wds[CG_NHIER + 1];
	const time_t old = 1700000000;

	setup("v2-systemd");
	fd[CG_H_UNIFIED] = cg_dir("w", "oom_kill 2\n");
	date_dir("/w", old);
	cg_files_init(&k, 1, ino);
	is_int(cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room), 0, "dir watch: first read");
	ok(k.dir_wd[CG_H_UNIFIED] >= 0, "dir watch: the directory is watched");
	ok((k.stamped & k.dir_quiet) & (1u << CG_H_UNIFIED), "dir watch: stamped and quiet");
	is_int((int)cg_files_watches(&k, wds), 2, "dir watch: two watches (memory.events, the directory)");
	is_int(dir_events_to(ino, &k), 0, "dir watch: a read makes no event");

	/* Replaced by a rename, the directory's mtime moved: the event not handed over, the kept file is read. */
	sh("printf '300\\n' > '%s/w/cur.tmp' && mv '%s/w/cur.tmp' '%s/w/memory.current'", root, root, root);
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	is_int(st.mem_usage, 100, "dir watch: quiet: the directory not looked at (the replaced file's old text)");
	ok(dir_events_to(ino, &k) > 0, "dir watch: the rename was an event of the directory");
	ok(!(k.dir_quiet & (1u << CG_H_UNIFIED)) && !(k.stamped & (1u << CG_H_UNIFIED)),
	   "dir watch: after its event: neither quiet nor stamped");
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	is_int(st.mem_usage, 300, "dir watch: after its event: the new file is read");
	ok(!(k.dir_quiet & (1u << CG_H_UNIFIED)), "dir watch: an mtime of now: not quiet again yet");
	date_dir("/w", old);
	dir_events_to(ino, &k);
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	ok((k.stamped & k.dir_quiet) & (1u << CG_H_UNIFIED), "dir watch: settled: stamped and quiet again");

	/* A removal: its event makes the next read check each file. */
	sh("rm '%s/w/memory.stat'", root);
	ok(dir_events_to(ino, &k) > 0, "dir watch: a removal is an event");
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	ok(!(st.has & CG_MEM_STAT) && (st.has & CG_MEM), "dir watch: the removed file is gone");

	/* An overflowed queue: every watch may have missed something. */
	date_dir("/w", old);
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	dir_events_to(ino, &k);
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	ok(k.dir_quiet & (1u << CG_H_UNIFIED), "dir watch: quiet before the overflow");
	cg_files_event(&k, -1, IN_Q_OVERFLOW);
	ok(!(k.dir_quiet & (1u << CG_H_UNIFIED)) && !k.stamped, "dir watch: an overflow: nothing trusted");

	/* Closed: the watch is forgotten, not removed (the caller's listing may share it). */
	cg_files_close(&k);
	is_int(k.dir_wd[CG_H_UNIFIED], CG_WD_NONE, "dir watch: closed: forgotten");
	is_int((int)cg_files_watches(&k, wds), 0, "dir watch: closed: no watches");
	close(fd[CG_H_UNIFIED]);
	close(ino);
}

/*
 * v2's memory.events is read again only after an event says it changed
 * (or every CG_EVENTS_REREAD-th time); an event its owner did not hand
 * over leaves the last value, which is what shows the read was saved.
 */
static void test_events_watch(void)
{
	int fd[CG_NHIER] = { -1, -1, -1, -1 }, ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), wd;
	struct cg_files k;
	struct cg_stats st;
	char buf[4096];
	size_t room = 16;
	uint32_t masks;

	setup("v2-systemd");
	fd[CG_H_UNIFIED] = cg_dir("e", "oom 2\noom_kill 2\n");
	ok(ino >= 0, "events: inotify");
	cg_files_init(&k, 1, ino);
	is_int(cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room), 0, "events: first read");
	ok((st.has & CG_OOM) && st.oom_kills == 2, "events: oom_kill read");
	ok(k.ev_wd >= 0 && k.ev_quiet, "events: memory.events is watched");
	is_int(events_to(ino, &k, &masks), 0, "events: a read makes no event");

	put("/e/memory.events", "oom 5\noom_kill 5\n");
	put("/e/memory.current", "300\n");
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	ok(st.oom_kills == 2 && (st.has & CG_OOM) && st.mem_usage == 300,
	   "events: no event handed over: memory.events not read (its last value), the other files read");
	ok(events_to(ino, &k, &masks) > 0 && (masks & IN_MODIFY), "events: the write was an IN_MODIFY");
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	is_int(st.oom_kills, 5, "events: after its event: read again");

	put("/e/memory.events", "oom 6\noom_kill 6\n");
	events_to(ino, &k, &masks);
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	is_int(st.oom_kills, 6, "events: read");
	put("/e/memory.events", "oom 7\noom_kill 7\n"); /* an event never handed over (a kernel that does not tell) */
	for (int i = 1; i < CG_EVENTS_REREAD; i++)
		cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	is_int(st.oom_kills, 6, "events: without its event, still the last value after 31 reads");
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	is_int(st.oom_kills, 7, "events: read anyway the 32nd time");
	events_to(ino, &k, &masks);

	/* Replaced by a rename (a fixture's writer): the old inode's link count drops; the new file is read and watched. */
	wd = k.ev_wd;
	sh("printf 'oom 9\\noom_kill 9\\n' > '%s/e/ev.tmp' && mv '%s/e/ev.tmp' '%s/e/memory.events'", root, root,
	   root);
	ok(events_to(ino, &k, &masks) > 0 && (masks & IN_ATTRIB), "events: a replacement is an IN_ATTRIB of the old file");
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	is_int(st.oom_kills, 9, "events: the new file read");
	ok(k.ev_wd >= 0 && k.ev_wd != wd && k.ev_quiet, "events: and watched in its turn");
	put("/e/memory.events", "oom 10\noom_kill 10\n");
	ok(events_to(ino, &k, &masks) > 0, "events: its write is an event");
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	is_int(st.oom_kills, 10, "events: and read");

	/* Removed: gone at the next read after its event. */
	sh("rm '%s/e/memory.events'", root);
	events_to(ino, &k, &masks);
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	ok(!(st.has & CG_OOM) && (st.has & CG_MEM), "events: removed: no oom_kills");
	cg_files_close(&k);
	is_int(k.ev_wd, CG_WD_NONE, "events: closed: no watch");

	/* No inotify: read every time. */
	put("/e/memory.events", "oom_kill 1\n");
	cg_files_init(&k, 1, -1);
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	put("/e/memory.events", "oom_kill 3\n");
	cg_read(fd, 1, 100, &st, buf, sizeof(buf), &k, &room);
	is_int(st.oom_kills, 3, "events: no inotify: read every time");
	cg_files_close(&k);
	close(fd[CG_H_UNIFIED]);
	close(ino);
}

/*
 * This process's inotify watches, from /proc/self/fdinfo: those that watch
 * a file's modification (memory.events) and the others (directories).
 */
static void watches(int *files, int *dirs)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	*files = *dirs = 0;
	while (d && (de = readdir(d))) {
		char path[300], link[64], line[512];
		ssize_t n;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		if ((n = readlink(path, link, sizeof(link) - 1)) < 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, "anon_inode:inotify"))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", de->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		while (fgets(line, sizeof(line), f)) {
			const char *m = strstr(line, " mask:");
			unsigned mask;

			if (strncmp(line, "inotify wd:", 11) || !m || sscanf(m, " mask:%x", &mask) != 1)
				continue;
			if (mask & IN_MODIFY)
				(*files)++;
			else
				(*dirs)++;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok ? 0 : -1;
}

#define POD_LIM "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podcc44dd55_ee66_4f77_8a88_99aabbccddee.slice"
#define CT_LIM2 POD_LIM "/cri-containerd-" NEW_ID ".scope"

/*
 * In a user namespace of its own whose inotify watches are limited to the
 * directories' and two more (/proc/sys/user/max_inotify_watches): each
 * failure a bit of the exit status.
 */
static int watch_limit_child(int ndirs)
{
	struct container_opts o = { .rootfs = "tests/fixtures/cgroup/rootfs", .cgroupfs = root };
	struct host *h;
	struct mon_env env;
	void *st = NULL;
	char lim[32];
	int fail = 0, files, dirs;
	json_t *g;

	snprintf(lim, sizeof(lim), "%d", ndirs + 2);
	if (unshare(CLONE_NEWUSER) || write_file("/proc/self/setgroups", "deny") ||
	    write_file("/proc/self/uid_map", "0 0 1") || write_file("/proc/self/gid_map", "0 0 1") ||
	    write_file("/proc/sys/user/max_inotify_watches", lim))
		return 1;
	h = host_new(&(struct host_opts){ .ctr = o, .clk_tck = 100, .page_size = 4096 }, NULL);
	env = (struct mon_env){ .host = h };
	if (ops->open(&env, &(struct coll_target){ .dev = NULL }, &st) || !st)
		return 1;
	json_decref(collect(st));
	watches(&files, &dirs);
	if (dirs != ndirs || files != 2)
		fail |= 2; /* every directory first, then files while watches remain */
	/* A pod made now: its directory's watch is refused, and the files give theirs up for it. */
	sh("mkdir -p '%s" CT_LIM2 "'", root);
	put(CT_LIM2 "/cpu.stat", "usage_usec 1000\nuser_usec 600\nsystem_usec 400\n");
	g = collect(st);
	watches(&files, &dirs);
	if (files != 0)
		fail |= 4;
	json_decref(g);
	g = collect(st);
	watches(&files, &dirs);
	if (dirs != ndirs + 1 || files != 0)
		fail |= 8; /* the new pod's directory watched at the next listing */
	if (!has(g, CT_LIM2, NULL))
		fail |= 16;
	json_decref(g);
	/* With no watch, memory.events is read every period. */
	put(CT_D "/memory.events", "low 0\nhigh 0\nmax 9\noom 5\noom_kill 5\noom_group_kill 0\n");
	g = collect(st);
	if (f(g, CT_D, "oom_kills") != 3)
		fail |= 32;
	json_decref(g);
	ops->close(st);
	host_free(h);
	return fail;
}

/*
 * memory.events' watches come after the directories': where the user's
 * inotify watches run out, a directory's watch (which saves listing the
 * tree) takes the place of the files'.
 */
static void test_watch_limit(void)
{
	void *st;
	int files, dirs, ndirs, status = -1;
	pid_t pid;

	setup("v2-systemd");
	st = open_state(root);
	json_decref(collect(st));
	watches(&files, &dirs);
	ok(dirs > 0 && files > 0, "watch limit: unlimited: %d directories and %d memory.events watched", dirs, files);
	ndirs = dirs;
	ops->close(st);
	watches(&files, &dirs);
	is_int(files + dirs, 0, "watch limit: closed: no watch left");
	setup("v2-systemd");
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(watch_limit_child(ndirs));
	if (pid > 0)
		waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) != 1, "watch limit: a user namespace with a limit of its own");
	ok(WIFEXITED(status) && !(WEXITSTATUS(status) & 2), "watch limit: every directory watched, then two files");
	ok(WIFEXITED(status) && !(WEXITSTATUS(status) & 4), "watch limit: a directory's watch refused: the files' removed");
	ok(WIFEXITED(status) && !(WEXITSTATUS(status) & 8), "watch limit: the directory watched at the next listing");
	ok(WIFEXITED(status) && !(WEXITSTATUS(status) & 16), "watch limit: the new pod's container reported");
	ok(WIFEXITED(status) && !(WEXITSTATUS(status) & 32), "watch limit: unwatched memory.events read every period");
}

static void test_v2(void)
{
	void *st;
	json_t *g;

	setup("v2-systemd");
	st = open_state(root);
	g = collect(st);
	is_str(json_string_value(json_object_get(g, "error")), "", "v2: no error");
	is_int(json_integer_value(json_object_get(g, "cgroup_version")), 2, "cgroup_version 2");
	is_int(json_object_size(json_object_get(g, "containers")), 9,
	       "nine entries: 3 pods, 4 containers, docker, a service (no conmon, QoS slice, session, root)");
	/* Nothing moved since open's baseline: counters 0, gauges as the files say. */
	check_entry(g, &(struct want){ POD_G, "", "", "8f2b7c1e-3a4d-4e5f-9a6b-1c2d3e4f5a6b", "guaranteed", "",
				       "trainer-0", "ml", "", "", 0, 0, 0, 0, 0, 0, 210000000, 190000000, 150000000,
				       60000000, 0 });
	check_entry(g, &(struct want){ CT_G, "containerd", G_ID, "8f2b7c1e-3a4d-4e5f-9a6b-1c2d3e4f5a6b", "guaranteed",
				       "", "trainer-0", "ml", "pytorch", G_ID, 0, 0, 0, 0, 0, 0, 200000000, 184000000,
				       148000000, 52000000, 0 });
	check_entry(g, &(struct want){ CT_P, "containerd", P_ID, "8f2b7c1e-3a4d-4e5f-9a6b-1c2d3e4f5a6b", "guaranteed",
				       "", "trainer-0", "ml", "", P_ID, 0, 0, 0, A, A, A, 1000000, 200000, 200000,
				       800000, 0 });
	check_entry(g, &(struct want){ POD_B, "", "", "1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b", "burstable", "",
				       "infer-7d9", "serving", "", "", 0, 0, 0, A, A, A, 90000000, 85000000, 70000000,
				       20000000, 0 });
	check_entry(g, &(struct want){ CT_B, "cri-o", B_ID, "1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b", "burstable", "",
				       "infer-7d9", "serving", "triton", B_ID, 0, 0, 0, A, A, A, 85000000, 81000000,
				       69000000, 16000000, 0 });
	check_entry(g, &(struct want){ POD_E, "", "", "aa11bb22-cc33-4d44-8e55-ff6677889900", "besteffort", "", "",
				       "", "", "", 0, 0, 0, A, A, A, 30000000, 11000000, 10000000, 20000000, 0 });
	check_entry(g, &(struct want){ CT_E, "containerd", E_ID, "aa11bb22-cc33-4d44-8e55-ff6677889900", "besteffort",
				       "", "", "", "", E_ID, 0, 0, 0, A, A, A, 3000000, 0, 1000000, 12000000, 0 });
	check_entry(g, &(struct want){ CT_D, "docker", D_ID, "", "", "", "", "", "", "web-1", 0, 0, 0, A, A, A,
				       64000000, 58000000, 50000000, 14000000, 0 });
	check_entry(g, &(struct want){ UNIT, "systemd", "", "", "", "containerd.service", "", "", "", "", 0, 0, 0, A,
				       A, A, 120000000, 50000000, 40000000, 80000000, 0 });
	ok(!has(g, POD_B "/crio-conmon-" B_ID ".scope", NULL), "crio-conmon: not an entry (it is no container)");
	ok(!has(g, "/kubepods.slice", NULL) && !has(g, "/kubepods.slice/kubepods-burstable.slice", NULL) &&
		   !has(g, "/user.slice/user-1000.slice/session-3.scope", NULL) && !has(g, "/", NULL),
	   "kubepods.slice, a QoS slice, a session scope and the root: no entries");
	json_decref(g);

	/* The counters move: increments over the period. */
	put(CT_G "/cpu.stat",
	    "usage_usec 7000000\nuser_usec 5400000\nsystem_usec 1600000\nnr_periods 1200\nnr_throttled 35\n"
	    "throttled_usec 650000\n");
	put(CT_D "/memory.events", "low 0\nhigh 0\nmax 9\noom 3\noom_kill 3\noom_group_kill 0\n");
	put(CT_D "/memory.current", "65000000\n");
	/* A new container in the BestEffort pod, created since the last scan: everything it spent counts. */
	sh("mkdir '%s" POD_E "/cri-containerd-" P_ID "9.scope'", root);
	sh("mkdir '%s" CT_NEW "'", root);
	put(CT_NEW "/cpu.stat",
	    "usage_usec 300000\nuser_usec 200000\nsystem_usec 100000\n");
	g = collect(st);
	check_entry(g, &(struct want){ CT_G, "containerd", G_ID, "8f2b7c1e-3a4d-4e5f-9a6b-1c2d3e4f5a6b", "guaranteed",
				       "", "trainer-0", "ml", "pytorch", G_ID, 2.0, 1.5, 0.5, 100, 10, 0.25,
				       200000000, 184000000, 148000000, 52000000, 0 });
	is_double(f(g, CT_D, "oom_kills"), 1, 0, "docker: one OOM kill in the period");
	{
		struct buf b;

		buf_init(&b, 1 << 20);
		mapped(g, &b);
		ok(strstr(b.data, "container_cpu_usage_seconds_total{id=" CT_G ",name=" G_ID
				  ",pod=trainer-0,namespace=ml,container=pytorch,cpu=total} 2\n") != NULL,
		   "mapped: container_cpu_usage_seconds_total with cAdvisor's labels and cpu=\"total\"");
		ok(strstr(b.data, "container_cpu_cfs_throttled_seconds_total{id=" CT_G ",name=" G_ID
				  ",pod=trainer-0,namespace=ml,container=pytorch} 0.25\n") != NULL,
		   "mapped: container_cpu_cfs_throttled_seconds_total");
		ok(strstr(b.data, "container_oom_events_total{id=" CT_D ",name=web-1} 1\n") !=
			   NULL,
		   "mapped: container_oom_events_total of Docker's web-1 (no pod: no pod labels)");
		ok(strstr(b.data, "container_memory_working_set_bytes{id=" POD_G ",pod=trainer-0,namespace=ml} 190000000\n") != NULL,
		   "mapped: a pod's working set (pod and namespace, no container)");
		ok(strstr(b.data, "container_memory_rss{id=" UNIT "} 40000000\n") !=
			   NULL,
		   "mapped: a unit's rss");
		if (!ok(strstr(b.data, "container_memory_cache{id=" CT_E ",name=" E_ID "} 12000000\n") != NULL,
			"mapped: container_memory_cache"))
			fprintf(stderr, "%s", b.data);
		buf_free(&b);
	}
	is_double(f(g, CT_D, "memory_usage_bytes"), 65000000, 0, "memory_usage_bytes: the value now");
	is_double(f(g, CT_D, "memory_working_set_bytes"), 59000000, 0, "working set follows usage");
	check_entry(g, &(struct want){ CT_NEW, "containerd", NEW_ID, "aa11bb22-cc33-4d44-8e55-ff6677889900",
				       "besteffort", "", "", "", "", NEW_ID, 0.3, 0.2, 0.1, A, A, A, A, A, A, A, A });
	ok(!has(g, POD_E "/cri-containerd-" P_ID "9.scope", NULL),
	   "a 65-digit id is no container id: not an entry");
	json_decref(g);

	/* Docker's container goes; CRI-O's is created again under the same path (a new inode, same numbers). */
	sh("rm -rf '%s" CT_D "' && mv '%s" CT_B "' '%s/old' && cp -a '%s/old' '%s" CT_B "' && rm -rf '%s/old'", root,
	   root, work, work, root, work);
	/* A counter that went back (the cgroup's accounting reset): it counts from zero. */
	put(CT_G "/cpu.stat",
	    "usage_usec 1000000\nuser_usec 5500000\nsystem_usec 1600000\nnr_periods 1300\nnr_throttled 35\n"
	    "throttled_usec 650000\n");
	/* Files missing or holding garbage: their fields are absent, the rest stays. */
	sh("rm '%s" CT_P "/memory.events' '%s" CT_P "/memory.stat'", root, root);
	put(UNIT "/memory.current", "lots\n");
	g = collect(st);
	ok(!has(g, CT_D, NULL), "a removed container: its entry is gone");
	is_double(f(g, CT_B, "cpu_usage_seconds"), 2.4, 1e-9, "recreated under the same path: counts from zero");
	is_double(f(g, CT_B, "cpu_user_seconds"), 1.95, 1e-9, "... user too");
	is_double(f(g, CT_G, "cpu_usage_seconds"), 1.0, 1e-9, "a counter that went back: its value, from zero");
	is_double(f(g, CT_G, "cpu_user_seconds"), 0.1, 1e-9, "the others: increments as usual");
	is_double(f(g, CT_G, "cpu_periods"), 100, 0, "cpu_periods");
	check_entry(g, &(struct want){ CT_P, "containerd", P_ID, "8f2b7c1e-3a4d-4e5f-9a6b-1c2d3e4f5a6b", "guaranteed",
				       "", "trainer-0", "ml", "", P_ID, 0, 0, 0, A, A, A, 1000000, A, A, A, A });
	ok(!has(g, UNIT, "memory_usage_bytes") && !has(g, UNIT, "memory_working_set_bytes") &&
		   has(g, UNIT, "memory_rss_bytes"),
	   "memory.current with garbage: usage and working set absent, rss and cache stay");
	json_decref(g);

	/* The root goes: the group says why; it comes back: a new baseline first, then usage again. */
	sh("mv '%s' '%s/away'", root, work);
	g = collect(st);
	ok(strstr(json_string_value(json_object_get(g, "error")), "cannot open") &&
		   !json_object_get(g, "containers"),
	   "root gone: error \"%s\"", json_string_value(json_object_get(g, "error")));
	json_decref(g);
	sh("mv '%s/away' '%s'", work, root);
	g = collect(st);
	ok(strstr(json_string_value(json_object_get(g, "error")), "no baseline"), "back: the first scan is a baseline");
	json_decref(g);
	put(CT_E "/cpu.stat", "usage_usec 850000\nuser_usec 660000\nsystem_usec 190000\n");
	g = collect(st);
	is_double(f(g, CT_E, "cpu_usage_seconds"), 0.2, 1e-9, "then increments again");
	json_decref(g);
	/* Another tree mounted at the path (the kept fds still read the old one): a baseline again, no spike. */
	sh("mv '%s' '%s/old' && cp -a '%s/old' '%s' && rm -rf '%s/old'", root, work, work, root, work);
	g = collect(st);
	ok(strstr(json_string_value(json_object_get(g, "error")), "no baseline"),
	   "a new tree at the path: its first scan is a baseline");
	json_decref(g);
	g = collect(st);
	is_double(f(g, CT_E, "cpu_usage_seconds"), 0, 1e-9, "then increments from it");
	json_decref(g);
	ops->close(st);
}

/*
 * A descriptor limit of 48 lets the collector keep 12 directories open of the
 * tree's 17: the rest are opened by path when needed and closed after, and
 * every figure is the same; no descriptor is left open.
 */
static void test_fd_cap(void)
{
	struct rlimit old, low;
	void *st;
	json_t *g;
	int before, after;

	setup("v2-systemd");
	getrlimit(RLIMIT_NOFILE, &old);
	low = old;
	low.rlim_cur = 48;
	before = dup(0);
	close(before);
	setrlimit(RLIMIT_NOFILE, &low);
	st = open_state(root);
	setrlimit(RLIMIT_NOFILE, &old);
	put(CT_G "/cpu.stat", "usage_usec 7000000\nuser_usec 5400000\nsystem_usec 1600000\nnr_periods 1300\n"
			      "nr_throttled 35\nthrottled_usec 650000\n");
	sh("rm -rf '%s" CT_D "'", root);
	g = collect(st);
	is_int(json_object_size(json_object_get(g, "containers")), 8, "12 fds kept: eight entries (docker's gone)");
	is_double(f(g, CT_G, "cpu_usage_seconds"), 2.0, 1e-9, "12 fds kept: increments as with every fd kept");
	is_double(f(g, UNIT, "memory_working_set_bytes"), 50000000, 0, "12 fds kept: a unit's working set");
	is_double(f(g, CT_B, "memory_rss_bytes"), 69000000, 0, "12 fds kept: a container's rss");
	json_decref(g);
	ops->close(st);
	after = dup(0);
	close(after);
	is_int(after, before, "closed: no descriptor left open");
}

/*
 * Out of descriptors (EMFILE) no cgroup is gone: the directories and files
 * the collector cannot open are the group's error, with the errno's words,
 * and every entry stays with its last figures; once descriptors are back
 * the error goes and the figures move again.
 */
static void test_emfile(void)
{
	struct rlimit old, low;
	void *st;
	json_t *g;
	size_t n;
	int lowest;

	setup("v2-systemd");
	getrlimit(RLIMIT_NOFILE, &old);
	low = old;
	low.rlim_cur = 48; /* 12 directories kept: the others are opened when read */
	setrlimit(RLIMIT_NOFILE, &low);
	st = open_state(root);
	setrlimit(RLIMIT_NOFILE, &old);
	g = collect(st);
	n = json_object_size(json_object_get(g, "containers"));
	is_str(json_string_value(json_object_get(g, "error")), "", "emfile: a cycle with descriptors, no error");
	ok(n == 9, "emfile: nine entries (%zu)", n);
	json_decref(g);
	put(CT_G "/cpu.stat", "usage_usec 9000000\nuser_usec 5400000\nsystem_usec 1600000\n");
	lowest = dup(0);
	close(lowest);
	low.rlim_cur = (rlim_t)lowest;
	setrlimit(RLIMIT_NOFILE, &low);
	g = collect(st);
	setrlimit(RLIMIT_NOFILE, &old);
	ok(strstr(json_string_value(json_object_get(g, "error")), "Too many open files") != NULL,
	   "emfile: the group's error says why (%s)", json_string_value(json_object_get(g, "error")));
	ok(strstr(json_string_value(json_object_get(g, "error")), "cannot read cgroup /") != NULL,
	   "emfile: and which cgroup");
	is_int((long)json_object_size(json_object_get(g, "containers")), (long)n, "emfile: no entry vanishes");
	json_decref(g);
	g = collect(st);
	is_str(json_string_value(json_object_get(g, "error")), "", "emfile: descriptors back, no error");
	is_int((long)json_object_size(json_object_get(g, "containers")), (long)n, "emfile: every entry");
	ok(f(g, CT_G, "cpu_usage_seconds") > 0, "emfile: the figures move again");
	json_decref(g);
	ops->close(st);
}

#define V1_POD "/kubepods/burstable/pod1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b"
#define V1_CT V1_POD "/" BC_ID
#define V1_GPOD "/kubepods/pod8f2b7c1e-3a4d-4e5f-9a6b-1c2d3e4f5a6b"
#define V1_GCT V1_GPOD "/" G_ID
#define V1_D "/docker/" D_ID

static void test_v1(void)
{
	void *st;
	json_t *g;

	setup("v1-cgroupfs");
	st = open_state(root);
	g = collect(st);
	is_str(json_string_value(json_object_get(g, "error")), "", "v1: no error");
	is_int(json_integer_value(json_object_get(g, "cgroup_version")), 1, "cgroup_version 1");
	is_int(json_object_size(json_object_get(g, "containers")), 5, "five entries: 2 pods, 2 containers, docker");
	check_entry(g, &(struct want){ V1_POD, "", "", "1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b", "burstable", "", "",
				       "", "", "", 0, 0, 0, 0, 0, 0, 600000000, 550000000, 400000000, 200000000, 0 });
	check_entry(g, &(struct want){ V1_CT, "", BC_ID, "1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b", "burstable", "", "",
				       "", "", BC_ID, 0, 0, 0, 0, 0, 0, 550000000, 510000000, 380000000, 170000000,
				       0 });
	check_entry(g, &(struct want){ V1_GPOD, "", "", "8f2b7c1e-3a4d-4e5f-9a6b-1c2d3e4f5a6b", "guaranteed", "",
				       "trainer-0", "ml", "", "", 0, 0, 0, A, A, A, 40000000, 38000000, 30000000,
				       10000000, 0 });
	check_entry(g, &(struct want){ V1_GCT, "containerd", G_ID, "8f2b7c1e-3a4d-4e5f-9a6b-1c2d3e4f5a6b",
				       "guaranteed", "", "trainer-0", "ml", "pytorch", G_ID, A, A, A, A, A, A,
				       35000000, 33500000, 28000000, 7000000, 0 });
	check_entry(g, &(struct want){ V1_D, "docker", D_ID, "", "", "", "", "", "", "web-1", 0, 0, 0, A, A, A,
				       300000000, 0, 200000000, 100000000, 0 });
	json_decref(g);

	put("/cpu,cpuacct" V1_CT "/cpuacct.usage", "9500000000\n");
	put("/cpu,cpuacct" V1_CT "/cpuacct.stat", "user 700\nsystem 140\n");
	put("/cpu,cpuacct" V1_CT "/cpu.stat", "nr_periods 330\nnr_throttled 15\nthrottled_time 950000000\n");
	put("/memory" V1_CT "/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
	g = collect(st);
	check_entry(g, &(struct want){ V1_CT, "", BC_ID, "1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b", "burstable", "", "",
				       "", "", BC_ID, 3.0, 2.5, 0.5, 40, 4, 0.1, 550000000, 510000000, 380000000,
				       170000000, 2 });
	json_decref(g);
	ops->close(st);

	/* A root with no hierarchy at all. */
	sh("rm -rf '%s' && mkdir -p '%s/empty'", root, root);
	st = open_state(root);
	g = collect(st);
	ok(strstr(json_string_value(json_object_get(g, "error")), "no cgroup hierarchy under"), "no hierarchy: \"%s\"",
	   json_string_value(json_object_get(g, "error")));
	json_decref(g);
	ops->close(st);
}

/*
 * Names that come later: a container's state file written after its first
 * cycles is read on the retry 10 s on, and the pod's entry, settled
 * without names until then (it has no file of its own), takes them from it
 * in the same cycle; then they hold.
 */
static void test_names_later(void)
{
	char rootfs[400];
	struct mon_env env;
	void *st = NULL;
	json_t *g;
	int64_t t[] = { 1, 5, 12, 13 }, t0;

	setup("v2-systemd");
	snprintf(rootfs, sizeof(rootfs), "%s/rootfs", work);
	sh("rm -rf '%s' && mkdir -p '%s'", rootfs, rootfs);
	host_free(host);
	host = host_new(&(struct host_opts){ .ctr = { .rootfs = rootfs, .cgroupfs = root }, .clk_tck = 100,
					      .page_size = 4096 }, NULL);
	env = (struct mon_env){ .host = host };
	t0 = clock_mono_ns(); /* open reads the tree (and asks the names) now: the cycles come t[i] s later */
	ok(ops->open(&env, &(struct coll_target){ .dev = NULL }, &st) == 0 && st, "names later: open");
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		struct cycle cy = { .mono_ns = t0 + t[i] * 1000000000LL };
		int named = i >= 2;

		if (i == 1)
			sh("mkdir -p '%s/run/containerd/io.containerd.runtime.v2.task/k8s.io/" G_ID "' && printf '%%s' "
			   "'{\"annotations\": {\"io.kubernetes.cri.sandbox-name\": \"trainer-0\", "
			   "\"io.kubernetes.cri.sandbox-namespace\": \"ml\", \"io.kubernetes.cri.container-name\": "
			   "\"pytorch\"}}' > '%s/run/containerd/io.containerd.runtime.v2.task/k8s.io/" G_ID "/config.json'",
			   rootfs, rootfs);
		g = sys_group(ops, st, &cy);
		ok(!strcmp(s(g, CT_G, "pod"), named ? "trainer-0" : "(absent)"), "names later: %d s: the container's pod: %s",
		   (int)t[i], s(g, CT_G, "pod"));
		ok(!strcmp(s(g, POD_G, "pod"), named ? "trainer-0" : "(absent)"), "names later: %d s: the pod's entry: %s",
		   (int)t[i], s(g, POD_G, "pod"));
		ok(!strcmp(s(g, POD_G, "namespace"), named ? "ml" : "(absent)"), "names later: %d s: its namespace: %s",
		   (int)t[i], s(g, POD_G, "namespace"));
		json_decref(g);
	}
	ops->close(st);
}

/*
 * A unit's name is its cgroup directory's, any bytes: the entry's key and
 * "unit" are valid UTF-8 (what is not becomes '?'), so the group written
 * straight into the line is still JSON (sys_group bails out otherwise).
 */
static void test_unit_bytes(void)
{
	void *st;
	json_t *g;

	setup("v2-systemd");
	sh("mkdir '%s/system.slice/caf\303.service'", root);
	put("/system.slice/caf\303.service/cpu.stat", "usage_usec 1000\nuser_usec 600\nsystem_usec 400\n");
	put("/system.slice/caf\303.service/memory.current", "4096\n");
	st = open_state(root);
	g = collect(st);
	is_str(s(g, "/system.slice/caf?.service", "unit"), "caf?.service",
	       "a unit named with a byte that is no UTF-8: its key and unit with '?' there");
	json_decref(g);
	ops->close(st);
}

int main(void)
{
	log_init("test_coll_containers", LOG_LVL_SILENT);
	test_parsers();
	test_kept_stamp();
	test_dir_watch();
	test_events_watch();
	test_watch_limit();
	test_v2();
	test_v1();
	test_fd_cap();
	test_emfile();
	test_names_later();
	test_unit_bytes();
	host_free(host);
	if (work[0])
		sh("rm -rf '%s'", work);
	return done_testing();
}
