/* SPDX-License-Identifier: MIT */
/*
 * The producer's process table (monitor/host/proctab.c), on a fixture /proc built
 * in a temporary directory (the process from tests/fixtures/proc/pid, copied
 * from a real kernel, plus a cgroup v2 process, a kernel thread, a zombie and
 * entries that are not processes) and on the real /proc: one scan per cycle,
 * argv[0] and cgroup read once per process, pid reuse noticed, a missing
 * root reported. (The per-process device memory record is the host's:
 * test_host.c.)
 */
#include "../../common/util.h"
#include "../../monitor/host/container.h"
#include "../../monitor/host/proctab.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef FIXTURES
#define FIXTURES "tests/fixtures/proc"
#endif

#define DOCKER_ID "4f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"

static char root[256];

/* Write root/rel (its directory created), len bytes of text (-1: strlen). */
static void put(const char *rel, const char *text, long len)
{
	char path[512], *dir;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	dir = xstrdup(path);
	mkdir(dirname(dir), 0755);
	free(dir);
	f = fopen(path, "w");
	if (!f || fwrite(text, 1, len < 0 ? strlen(text) : (size_t)len, f) != (len < 0 ? strlen(text) : (size_t)len)) {
		printf("# cannot write %s\n", path);
		exit(2);
	}
	fclose(f);
}

static void stat_line(pid_t pid, const char *comm, char state, unsigned long utime, unsigned long stime,
		      unsigned long start)
{
	char rel[64], text[512];

	snprintf(rel, sizeof(rel), "%d/stat", (int)pid);
	snprintf(text, sizeof(text),
		 "%d (%s) %c 1 %d %d 0 -1 4194560 100 0 0 0 %lu %lu 0 0 20 0 1 0 %lu 1000000 100 "
		 "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
		 (int)pid, comm, state, (int)pid, (int)pid, utime, stime, start);
	put(rel, text, -1);
}

static void copy_fixture(const char *name, const char *rel)
{
	char path[512], text[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/pid/%s", FIXTURES, name);
	n = read_file_at(-1, path, text, sizeof(text));
	if (n < 0) {
		printf("# cannot read %s\n", path);
		exit(2);
	}
	put(rel, text, (long)n);
}

static void test_fixture(void)
{
	struct proctab t;
	struct proc_info *p;
	char rel[64];

	snprintf(root, sizeof(root), "%s/proctab.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root)) {
		printf("# mkdtemp: %s\n", strerror(errno));
		exit(2);
	}
	/* 4242: a real kernel's files (comm "my (weird) srv", argv[0] /opt/srv/bin/my-srv). */
	copy_fixture("stat", "4242/stat");
	copy_fixture("cmdline", "4242/cmdline");
	put("4242/cgroup", "12:pids:/docker/abc\n11:memory:/docker/abc\n", -1);
	stat_line(1, "systemd", 'S', 500, 300, 1);
	put("1/cmdline", "/sbin/init\0splash\0", 18);
	put("1/cgroup", "0::/init.scope\n", -1);
	stat_line(7, "kworker/0:1", 'I', 0, 12, 5);
	put("7/cmdline", "", 0); /* a kernel thread */
	stat_line(100, "defunct", 'Z', 1, 1, 900);
	put("self/stat", "not a process\n", -1);
	put("123abc/stat", "not a process\n", -1);
	put("555/status", "no stat file: gone between readdir and read\n", -1);

	proctab_init(&t, root);
	is_int(proctab_refresh(&t, 1000), 0, "fixture: refresh");
	is_int((long)t.n, 4, "fixture: 4 processes (not self, 123abc, or 555 without stat)");
	ok(t.n == 4 && t.p[0].pid == 1 && t.p[1].pid == 7 && t.p[2].pid == 100 && t.p[3].pid == 4242,
	   "fixture: sorted by pid");
	p = proctab_find(&t, 4242);
	ok(p != NULL, "fixture: find 4242");
	if (p) {
		is_str(p->comm, "my (weird) srv", "4242: comm with spaces and parentheses");
		ok(p->starttime == 123456 && p->utime == 12345 && p->stime == 6789, "4242: start time and CPU times");
		is_str(proctab_argv0(&t, p), "/opt/srv/bin/my-srv", "4242: argv[0]");
		is_str(proctab_cgroup(&t, p), "/docker/abc", "4242: cgroup v1 path");
	}
	p = proctab_find(&t, 1);
	if (p) {
		is_str(proctab_argv0(&t, p), "/sbin/init", "1: argv[0] stops at the first NUL");
		is_str(proctab_cgroup(&t, p), "/init.scope", "1: cgroup v2 path");
	}
	p = proctab_find(&t, 7);
	if (p)
		is_str(proctab_argv0(&t, p), "", "7: a kernel thread has no argv[0]");
	p = proctab_find(&t, 100);
	ok(p && p->state == 'Z', "100: a zombie is in the table, state Z");
	ok(proctab_find(&t, 555) == NULL && proctab_find(&t, 2) == NULL, "no entry for what is not a process");

	/* At most one scan per cycle. */
	proctab_refresh(&t, 1000);
	proctab_refresh(&t, 1000);
	is_int((long)t.refreshes, 1, "three refreshes in one cycle: one scan");

	/* Next cycle: argv[0] is kept for the same process; pid reuse (another start time) reads it again. */
	put("4242/cmdline", "/changed\0", 9);
	put("1/cmdline", "/changed\0", 9);
	stat_line(1, "systemd", 'S', 600, 300, 2); /* pid 1 reused: start time 2 */
	unlink(strcat(strcpy(rel, root), "/100/stat"));
	is_int(proctab_refresh(&t, 2000), 0, "next cycle: refresh");
	is_int((long)t.refreshes, 2, "a new cycle: a new scan");
	p = proctab_find(&t, 4242);
	if (p)
		is_str(proctab_argv0(&t, p), "/opt/srv/bin/my-srv", "4242: argv[0] read once per process");
	p = proctab_find(&t, 1);
	if (p) {
		is_str(proctab_argv0(&t, p), "/changed", "1 with a new start time: argv[0] read again");
		ok(p->utime == 600, "1: CPU times are this cycle's");
	}
	ok(proctab_find(&t, 100) == NULL, "the zombie's files are gone: so is its entry");

	proctab_free(&t);

	/* One process (a pid:N runtime): its stat file only, no scan, unless this cycle's scan is there. */
	proctab_init(&t, root);
	is_int(proctab_get(&t, 5000, 4242, &p), 0, "get 4242 with no scan this cycle");
	ok(p && !strcmp(p->comm, "my (weird) srv") && p->utime == 12345, "get: the process's own stat");
	is_int((long)t.refreshes, 0, "get: no scan of /proc");
	if (p)
		is_str(proctab_argv0(&t, p), "/changed", "get: argv[0] on demand (the cmdline the test wrote above)");
	put("4242/cmdline", "/changed-again", -1);
	is_int(proctab_get(&t, 6000, 4242, &p), 0, "get 4242 again in the next cycle");
	ok(p && p->argv0 && !strcmp(p->argv0, "/changed"), "get: argv[0] kept for the same process, not read again");
	is_int(proctab_get(&t, 6000, 555, &p), 0, "get a pid with no stat file: 0");
	ok(p == NULL, "get: no such process, NULL");
	is_int(proctab_refresh(&t, 7000), 0, "a scan in cycle 7000");
	is_int(proctab_get(&t, 7000, 4242, &p), 0, "get in the scanned cycle");
	ok(p && p == proctab_find(&t, 4242), "get: the scanned table's entry");
	is_int((long)t.refreshes, 1, "get in a scanned cycle: no second scan");
	proctab_free(&t);

	/*
	 * A process asked for cycle after cycle keeps its stat file open: it is
	 * read again through it, a new process under its pid (another start
	 * time) is a new identity, and a removed one is gone.
	 */
	proctab_init(&t, root);
	stat_line(4343, "kept", 'S', 10, 5, 777);
	is_int(proctab_get(&t, 8000, 4343, &p), 0, "kept: first get");
	if (p)
		is_str(proctab_argv0(&t, p), "", "kept: argv[0] (no cmdline file)");
	ok(t.kp_fds == 1, "kept: its stat file is held open");
	stat_line(4343, "kept", 'R', 20, 6, 777);
	is_int(proctab_get(&t, 9000, 4343, &p), 0, "kept: next cycle");
	ok(p && p->utime == 20 && p->state == 'R', "kept: the next cycle's figures, read through the kept file");
	put("4343/cmdline", "/new", -1);
	stat_line(4343, "kept", 'S', 1, 1, 999);
	is_int(proctab_get(&t, 10000, 4343, &p), 0, "kept: the pid's stat written over");
	ok(p && p->starttime == 999, "kept: another start time is another process");
	if (p)
		is_str(proctab_argv0(&t, p), "/new", "kept: its argv[0] is read afresh");
	/* A fixture tree is no procfs of this process's: no pidfd, a live get reads the file each cycle. */
	{
		uint64_t reads = t.stat_reads;

		stat_line(4343, "kept", 'S', 2, 1, 999);
		is_int(proctab_get_live(&t, 10500, 4343, &p), 0, "kept: a live get on a fixture");
		ok(p && p->utime == 2 && t.stat_reads == reads + 1 && t.pidfd_ok == 0,
		   "kept: a fixture's live get reads its stat file (no pidfd)");
	}
	{
		char path[600];

		snprintf(path, sizeof(path), "%s/4343/stat", root);
		unlink(path);
	}
	is_int(proctab_get(&t, 11000, 4343, &p), 0, "kept: its stat file removed");
	ok(p == NULL, "kept: a removed process is gone, though its file was held open");
	ok(t.kp_fds == 0, "kept: its file is closed");
	stat_line(4343, "kept", 'S', 10, 5, 1000);
	is_int(proctab_get(&t, 12000, 4343, &p), 0, "kept: the pid back");
	ok(p && p->starttime == 1000, "kept: read afresh");
	is_int(proctab_get(&t, 15000, 4242, &p), 0, "kept: another process in the next cycle");
	ok(t.nkp == 2, "kept: both kept while 4343 was asked for in the last cycle (%zu kept)", t.nkp);
	is_int(proctab_get(&t, 16000, 4242, &p), 0, "kept: and in the one after");
	ok(t.nkp == 1 && t.kp_fds == 1, "kept: a process not asked for in two cycles is let go (%zu kept)", t.nkp);
	proctab_free(&t);
	proctab_init(&t, "/nonexistent/proc");
	is_int(proctab_get(&t, 1, 1, &p), -ENOENT, "get with a missing root: -ENOENT");
	proctab_free(&t);

	/* A root that does not exist: an error, an empty table. */
	proctab_init(&t, "/nonexistent/proc");
	is_int(proctab_refresh(&t, 1), -ENOENT, "missing root: -ENOENT");
	ok(t.n == 0 && t.error == ENOENT, "missing root: empty table, error ENOENT");
	proctab_free(&t);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", root);
	}
}

/* The lowest descriptor free now: a limit there lets no new one open (EMFILE). */
static int lowest_free_fd(void)
{
	int fd = dup(0);

	close(fd);
	return fd;
}

static void set_fd_limit(rlim_t cur)
{
	struct rlimit rl;

	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = cur;
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		printf("# setrlimit: %s\n", strerror(errno));
		exit(2);
	}
}

/*
 * Out of descriptors (EMFILE) a process has not exited: a scan, a get,
 * argv[0] and the container identity say -EMFILE (errno EMFILE) instead of
 * leaving the process out, and nothing unread is kept as "" or "none", so
 * once descriptors are back every figure is there.
 */
static void test_emfile(void)
{
	struct proctab t;
	struct proc_info *p;
	struct rlimit saved;
	const struct container_id *id;
	char cmd[600];

	snprintf(root, sizeof(root), "%s/proctab.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root)) {
		printf("# mkdtemp: %s\n", strerror(errno));
		exit(2);
	}
	getrlimit(RLIMIT_NOFILE, &saved);
	stat_line(4242, "srv", 'S', 10, 5, 77);
	put("4242/cmdline", "/opt/srv/bin/srv\0", 17);
	put("4242/cgroup", "0::/system.slice/docker-" DOCKER_ID ".scope\n", -1);
	proctab_init(&t, root);
	is_int(proctab_refresh(&t, 1), 0, "emfile: a first scan with descriptors");
	p = proctab_find(&t, 4242);
	ok(p != NULL, "emfile: 4242 found");
	if (p) {
		set_fd_limit((rlim_t)lowest_free_fd());
		errno = 0;
		ok(proctab_argv0(&t, p) == NULL && errno == EMFILE, "emfile: argv[0] unread is NULL, errno EMFILE");
		errno = 0;
		ok(proctab_container(&t, p) == NULL && errno == EMFILE, "emfile: no identity, errno EMFILE");
		setrlimit(RLIMIT_NOFILE, &saved);
		is_str(proctab_argv0(&t, p), "/opt/srv/bin/srv", "emfile: argv[0] read once descriptors are back");
		id = proctab_container(&t, p);
		ok(id && !strcmp(id->id, DOCKER_ID), "emfile: the identity read once descriptors are back");
	}
	/* The listing gets its descriptor, no stat file does. */
	set_fd_limit((rlim_t)lowest_free_fd() + 1);
	is_int(proctab_refresh(&t, 2), -EMFILE, "emfile: a scan whose stat reads fail: -EMFILE, not an empty host");
	is_int(t.error, EMFILE, "emfile: the table's error");
	setrlimit(RLIMIT_NOFILE, &saved);
	is_int(proctab_refresh(&t, 3), 0, "emfile: the next scan with descriptors");
	ok(proctab_find(&t, 4242) != NULL, "emfile: 4242 back in the table");
	proctab_free(&t);

	/* One process, no scan: neither its kept file nor its path can be opened. */
	proctab_init(&t, root);
	is_int(proctab_get(&t, 1, 4242, &p), 0, "emfile: get opens the root and keeps the stat file");
	proctab_free(&t);
	proctab_init(&t, root);
	is_int(proctab_get(&t, 1, 999, &p), 0, "emfile: get a pid that is not there (opens the root)");
	set_fd_limit((rlim_t)lowest_free_fd());
	is_int(proctab_get(&t, 2, 4242, &p), -EMFILE, "emfile: get says -EMFILE, not \"no such process\"");
	ok(p == NULL, "emfile: no entry");
	setrlimit(RLIMIT_NOFILE, &saved);
	is_int(proctab_get(&t, 3, 4242, &p), 0, "emfile: get with descriptors back");
	ok(p && p->pid == 4242 && p->utime == 10, "emfile: the process read");
	proctab_free(&t);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", root);
}

static void test_real_proc(void)
{
	struct proctab t;
	struct proc_info *p;
	pid_t child;
	int st;
	char self[256], *base;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = '\0';
	base = strrchr(self, '/') ? strrchr(self, '/') + 1 : self;
	proctab_init(&t, "/proc");
	is_int(proctab_refresh(&t, 1), 0, "/proc: refresh");
	ok(t.n > 1, "/proc: more than one process (%zu)", t.n);
	p = proctab_find(&t, getpid());
	ok(p != NULL, "/proc: this process is in it");
	if (p) {
		ok(!strncmp(p->comm, base, 15), "/proc: its comm is the program's name (%s)", p->comm);
		ok(p->starttime > 0, "/proc: it has a start time");
		ok(strstr(proctab_argv0(&t, p), "test_proctab") != NULL, "/proc: argv[0] names this program (%s)",
		   proctab_argv0(&t, p));
		ok(proctab_cgroup(&t, p)[0] == '/' || proctab_cgroup(&t, p)[0] == '\0',
		   "/proc: the cgroup path is a path (%s)", proctab_cgroup(&t, p));
	}
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	proctab_refresh(&t, 2);
	ok(proctab_find(&t, child) != NULL, "/proc: a child started since is in the next cycle's table");
	kill(child, SIGKILL);
	waitpid(child, &st, 0);
	proctab_refresh(&t, 3);
	ok(proctab_find(&t, child) == NULL, "/proc: once reaped, it is gone from the next");
	proctab_free(&t);

	/* Asked for without a scan: the kept stat file fails once the process is gone, whoever has its pid. */
	proctab_init(&t, "/proc");
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	is_int(proctab_get(&t, 10, child, &p), 0, "/proc: get a child");
	ok(p && p->pid == child, "/proc: get: the child");
	is_int(proctab_get(&t, 11, child, &p), 0, "/proc: get it in the next cycle");
	ok(p && p->pid == child && t.kp_fds == 2, "/proc: through its kept stat file (and a pidfd: two descriptors)");
	kill(child, SIGKILL);
	waitpid(child, &st, 0);
	is_int(proctab_get(&t, 12, child, &p), 0, "/proc: get it once reaped");
	ok(p == NULL, "/proc: the kept file says it is gone");
	proctab_free(&t);
}

/*
 * proctab_get_live on this process's /proc: a child held by a pidfd is
 * answered without its stat file while it lives (read again every 16th
 * cycle, and by a plain proctab_get each time), read as soon as it exited
 * (a zombie's 'Z'), gone once reaped.
 */
static pid_t thread_tid;
static pthread_mutex_t thread_mu = PTHREAD_MUTEX_INITIALIZER;

static void *thread_main(void *arg)
{
	(void)arg;
	thread_tid = gettid();
	pthread_mutex_lock(&thread_mu); /* until the test is done with it */
	pthread_mutex_unlock(&thread_mu);
	return NULL;
}

static void test_live(void)
{
	struct proctab t;
	struct proc_info *p;
	pid_t child;
	siginfo_t si;
	uint64_t reads;
	int st, quiet = 1;

	proctab_init(&t, "/proc");
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	is_int(proctab_get_live(&t, 100, child, &p), 0, "live: get a child");
	ok(p && p->pid == child && p->starttime > 0, "live: the child, read once");
	ok(t.pidfd_ok == 1 && t.kp_fds == 1, "live: its pidfd kept, not its stat file (%zu descriptors)", t.kp_fds);
	reads = t.stat_reads;
	for (int c = 101; c <= 110; c++) {
		quiet = quiet && proctab_get_live(&t, c, child, &p) == 0 && p && p->pid == child;
		quiet = quiet && proctab_get_live(&t, c, child, &p) == 0 && p && p->pid == child;
	}
	ok(quiet && t.stat_reads == reads, "live: ten more cycles alive: no stat read (%llu)",
	   (unsigned long long)(t.stat_reads - reads));
	is_int(proctab_get(&t, 110, child, &p), 0, "live: a plain get in the same cycle");
	ok(p && t.stat_reads == reads + 1, "live: a plain get reads the stat file (its CPU times as of now)");
	ok(t.kp_fds == 2, "live: ... and keeps it open from then on (%zu descriptors)", t.kp_fds);
	for (int c = 111; c <= 127; c++)
		proctab_get_live(&t, c, child, &p);
	ok(t.stat_reads == reads + 2, "live: read again within 16 cycles (%llu reads)",
	   (unsigned long long)(t.stat_reads - reads));
	kill(child, SIGKILL);
	waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT); /* exited, not reaped: a zombie */
	reads = t.stat_reads;
	is_int(proctab_get_live(&t, 128, child, &p), 0, "live: get the killed child");
	ok(p && p->state == 'Z' && t.stat_reads == reads + 1, "live: exited: read at once, a zombie (%c)",
	   p ? p->state : '-');
	waitpid(child, &st, 0);
	is_int(proctab_get_live(&t, 129, child, &p), 0, "live: get it once reaped");
	ok(p == NULL, "live: gone");
	/* A thread's id (pidfd_open refuses it: EINVAL, ENOENT on 6.18): read as before; pidfds stay on for the others. */
	{
		pthread_t th;

		pthread_mutex_lock(&thread_mu);
		pthread_create(&th, NULL, thread_main, NULL);
		while (!__atomic_load_n(&thread_tid, __ATOMIC_SEQ_CST))
			usleep(1000);
		is_int(proctab_get_live(&t, 130, thread_tid, &p), 0, "live: get a thread's id");
		ok(p && p->pid == thread_tid && t.pidfd_ok == 1, "live: a thread is read, pidfds stay on for the rest");
		pthread_mutex_unlock(&thread_mu);
		pthread_join(th, NULL);
	}
	proctab_free(&t);
}

/*
 * proctab_get_live in a fixture tree: the watch on a process's directory
 * stands in for the pidfd. Unchanged, it is answered without a read (again
 * every 16th cycle); a write, a replacement or a removal there is read at
 * the next ask; a link to a live /proc (no events) is read every cycle.
 */
static void test_fixture_live(void)
{
	struct proctab t;
	struct proc_info *p;
	uint64_t reads;
	int quiet = 1;
	char path[600], target[64];

	snprintf(root, sizeof(root), "%s/proctab.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root)) {
		printf("# mkdtemp: %s\n", strerror(errno));
		exit(2);
	}
	stat_line(4500, "fixed", 'S', 10, 5, 777);
	proctab_init(&t, root);
	reads = t.stat_reads;
	is_int(proctab_get_live(&t, 100, 4500, &p), 0, "fixture live: first get");
	ok(p && p->utime == 10 && t.stat_reads == reads + 1, "fixture live: read once");
	ok(t.ino_fd >= 0 && t.pidfd_ok == 0, "fixture live: no pidfd, a watch instead");
	reads = t.stat_reads;
	for (int c = 101; c <= 110; c++)
		quiet = quiet && proctab_get_live(&t, c, 4500, &p) == 0 && p && p->utime == 10;
	ok(quiet && t.stat_reads == reads, "fixture live: ten cycles unchanged: no read (%llu)",
	   (unsigned long long)(t.stat_reads - reads));
	stat_line(4500, "fixed", 'R', 50, 6, 777); /* written in place */
	is_int(proctab_get_live(&t, 111, 4500, &p), 0, "fixture live: get after a write");
	ok(p && p->utime == 50 && p->state == 'R' && t.stat_reads == reads + 1, "fixture live: the write read at once");
	reads = t.stat_reads;
	for (int c = 112; c <= 127; c++)
		proctab_get_live(&t, c, 4500, &p);
	ok(t.stat_reads == reads + 1, "fixture live: read again within 16 cycles (%llu reads)",
	   (unsigned long long)(t.stat_reads - reads));
	/* Replaced by a rename (another start time: another process under the pid). */
	snprintf(path, sizeof(path), "%s/4500", root);
	stat_line(4501, "other", 'S', 1, 1, 999);
	{
		char from[600], to[600];

		snprintf(from, sizeof(from), "%s/4501/stat", root);
		snprintf(to, sizeof(to), "%s/4500/stat.new", root);
		ok(rename(from, to) == 0, "fixture live: a stat file moved in");
		snprintf(from, sizeof(from), "%s/4500/stat.new", root);
		snprintf(to, sizeof(to), "%s/4500/stat", root);
		ok(rename(from, to) == 0, "fixture live: ... over the old one");
	}
	is_int(proctab_get_live(&t, 128, 4500, &p), 0, "fixture live: get after the replacement");
	ok(p == NULL, "fixture live: the replacement read at once: the process whose file it was is gone");
	is_int(proctab_get_live(&t, 129, 4500, &p), 0, "fixture live: get in the next cycle");
	ok(p && p->starttime == 999, "fixture live: the new process (start time %llu)",
	   p ? (unsigned long long)p->starttime : 0ull);
	reads = t.stat_reads;
	proctab_get_live(&t, 130, 4500, &p);
	ok(p && t.stat_reads == reads, "fixture live: watched again: not read in the cycle after");
	/* Removed with its directory. */
	{
		char f[700];

		snprintf(f, sizeof(f), "%s/stat", path);
		unlink(f);
		rmdir(path);
	}
	is_int(proctab_get_live(&t, 131, 4500, &p), 0, "fixture live: get after the removal");
	ok(p == NULL, "fixture live: gone at once");
	/* A link to this process's live /proc entry: no events there, read every cycle. */
	snprintf(path, sizeof(path), "%s/%d", root, (int)getpid());
	snprintf(target, sizeof(target), "/proc/%d", (int)getpid());
	ok(symlink(target, path) == 0, "fixture live: a link to a live /proc entry");
	proctab_get_live(&t, 132, getpid(), &p);
	reads = t.stat_reads;
	for (int c = 133; c <= 135; c++)
		proctab_get_live(&t, c, getpid(), &p);
	ok(p && p->pid == getpid() && t.stat_reads == reads + 3, "fixture live: the link read every cycle (%llu)",
	   (unsigned long long)(t.stat_reads - reads));
	unlink(path);
	proctab_free(&t);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd))
			printf("# could not remove %s\n", root);
	}
}

int main(void)
{
	test_fixture();
	test_real_proc();
	test_live();
	test_fixture_live();
	test_emfile();
	return done_testing();
}
