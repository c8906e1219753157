/* SPDX-License-Identifier: MIT */
/*
 * HPC job mapping (monitor/host/jobmap.c): the file names dcgm-exporter
 * takes and those it ignores, the lines of a file (blank lines, spaces,
 * CRLF, no final newline, duplicates, an empty file), what is refused
 * (control characters, non-UTF-8, an id too long, too many jobs, a file
 * too big, a FIFO, a symbolic link, an unreadable file, too many entries)
 * and where the error says it is, and the directory changing between
 * refreshes: a job added, a file removed, a file rewritten in place with
 * the same size and mtime, the directory missing, removed and made again.
 */
#include "../../monitor/host/jobmap.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char work[] = "/tmp/test_jobmap.XXXXXX";
static char dir[64];

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		printf("# command failed: %s\n", cmd);
}

/* Write file name in dir with n bytes of text. */
static void put(const char *name, const char *text, size_t n)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fwrite(text, 1, n, f) != n || fclose(f))
		printf("# cannot write %s\n", path);
}

static void puts_(const char *name, const char *text)
{
	put(name, text, strlen(text));
}

/* The jobs of gpu.gi as one string, "a|b|c" ("" when none). */
static const char *jobs(const struct jobmap *jm, int gpu, int gi)
{
	static char out[4096];
	size_t n, len = 0;
	const char *const *ids = jobmap_lookup(jm, gpu, gi, &n);

	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s", i ? "|" : "", ids[i]);
	return out;
}

static void test_names(void)
{
	static const struct {
		const char *name;
		int is, gpu, gi;
	} cases[] = {
		{ "0", 1, 0, -1 },        { "1", 1, 1, -1 },        { "42", 1, 42, -1 },    { "2.0", 1, 2, 0 },
		{ "3.10", 1, 3, 10 },     { "0.0", 1, 0, 0 },       { "2147483647", 1, 2147483647, -1 },
		{ "foo", 0, 0, 0 },       { "bar.txt", 0, 0, 0 },   { ".gitkeep", 0, 0, 0 }, { "1e5", 0, 0, 0 },
		{ "NaN", 0, 0, 0 },       { "Inf", 0, 0, 0 },       { "+3", 0, 0, 0 },      { "-2", 0, 0, 0 },
		{ ".5", 0, 0, 0 },        { "1.2.3", 0, 0, 0 },     { "0.1.2", 0, 0, 0 },   { "01", 0, 0, 0 },
		{ "00", 0, 0, 0 },        { "2.03", 0, 0, 0 },      { "0.", 0, 0, 0 },      { "", 0, 0, 0 },
		{ "2147483648", 0, 0, 0 }, { "1.2147483648", 0, 0, 0 }, { " 1", 0, 0, 0 },  { "1 ", 0, 0, 0 },
		{ "1.-1", 0, 0, 0 },      { "\xd9\xa3", 0, 0, 0 }, /* an Arabic-Indic digit: Go's \d is ASCII */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int gpu = -7, gi = -7, is = jobmap_name(cases[i].name, &gpu, &gi);

		ok(is == cases[i].is && (!is || (gpu == cases[i].gpu && gi == cases[i].gi)),
		   "name \"%s\": %s (got %d, %d.%d)", cases[i].name, cases[i].is ? "a mapping file" : "ignored", is, gpu,
		   gi);
	}
}

/* jobmap_parse on text (len bytes): "a|b" or "error: ..." */
static const char *parse(const char *text, size_t len)
{
	static char out[8192];
	char *buf = malloc(len + 1), *ids[JOBMAP_MAX_JOBS], err[256];
	size_t n = 0, o = 0;
	int rc;

	memcpy(buf, text, len);
	buf[len] = '\0';
	rc = jobmap_parse(buf, len, ids, &n, err, sizeof(err));
	out[0] = '\0';
	if (rc) {
		snprintf(out, sizeof(out), "error %d: %s", rc, err);
	} else {
		for (size_t i = 0; i < n; i++) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%s", i ? "|" : "", ids[i]);
			free(ids[i]);
		}
	}
	free(buf);
	return out;
}

static void test_lines(void)
{
	static const struct {
		const char *text;
		size_t len; /* 0: strlen */
		const char *want, *what;
	} cases[] = {
		{ "job1\n", 0, "job1", "one job" },
		{ "job1-1\njob2-1\n", 0, "job1-1|job2-1", "two jobs, in file order" },
		{ "job3.0-0", 0, "job3.0-0", "no final newline: the last line is a job" },
		{ "", 0, "", "an empty file: no job" },
		{ "\n\n\n", 0, "", "only blank lines: no job" },
		{ "a\n\nb\n\n", 0, "a|b", "blank lines skipped (dcgm-exporter: a job \"\")" },
		{ "   \na\n \t\n", 0, "error -22: 3:2: a control character (U+0009) in a job id",
		  "a line of spaces is blank; a tab is a control character" },
		{ " a \n", 0, " a ", "spaces kept, as dcgm-exporter keeps them (the same hpc_job label)" },
		{ "a\r\nb\r\n", 0, "a|b", "CRLF: the CR dropped" },
		{ "a\r", 0, "a", "a final CR without LF dropped too (Go's dropCR)" },
		{ "a\r\r\n", 0, "error -22: 1:2: a control character (U+000D) in a job id", "only one CR dropped" },
		{ "a\nb\na\nb\nc\n", 0, "a|b|c", "a job listed twice: once, where first listed" },
		{ "12345_7\n12346+0\n", 0, "12345_7|12346+0", "Slurm array and heterogeneous job ids" },
		{ "caf\xc3\xa9\n", 0, "caf\xc3\xa9", "UTF-8" },
		{ "ok\n\xff\n", 0, "error -22: 2:1: not UTF-8 (byte 0xff)", "a byte that is not UTF-8: LINE:COLUMN" },
		{ "ab\xc3(\n", 0, "error -22: 1:3: not UTF-8 (byte 0xc3)", "a broken sequence" },
		{ "ab\xc3", 0, "error -22: 1:3: not UTF-8 (byte 0xc3)", "a sequence cut at the end of the file" },
		{ "a\0b\n", 4, "error -22: 1:2: a control character (U+0000) in a job id", "a NUL" },
		{ "a\x7f\n", 0, "error -22: 1:2: a control character (U+007F) in a job id", "DEL" },
		{ "a\xc2\x85\n", 0, "error -22: 1:2: a control character (U+0085) in a job id", "a C1 control" },
		{ "a\x1b[31m\n", 0, "error -22: 1:2: a control character (U+001B) in a job id", "an escape" },
	};
	char big[JOBMAP_MAX_ID + 2], many[JOBMAP_MAX_JOBS * 8 + 16], want[64], max_id[JOBMAP_MAX_ID + 1];
	size_t o = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_str(parse(cases[i].text, cases[i].len ? cases[i].len : strlen(cases[i].text)), cases[i].want,
		       cases[i].what);

	memset(big, 'x', sizeof(big));
	memset(max_id, 'x', JOBMAP_MAX_ID);
	max_id[JOBMAP_MAX_ID] = '\0';
	is_str(parse(big, JOBMAP_MAX_ID), max_id, "a job id of JOBMAP_MAX_ID bytes");
	snprintf(want, sizeof(want), "error -7: 1:%d: a job id of %d bytes, more than %d", JOBMAP_MAX_ID + 1,
		 JOBMAP_MAX_ID + 1, JOBMAP_MAX_ID);
	is_str(parse(big, JOBMAP_MAX_ID + 1), want, "one byte more: refused, with its line and column");

	for (int i = 0; i < JOBMAP_MAX_JOBS; i++)
		o += (size_t)snprintf(many + o, sizeof(many) - o, "j%d\n", i);
	ok(strncmp(parse(many, o), "j0|j1|", 6) == 0, "JOBMAP_MAX_JOBS jobs");
	o += (size_t)snprintf(many + o, sizeof(many) - o, "j0\nj1\n");
	ok(strncmp(parse(many, o), "j0|j1|", 6) == 0, "... and the same jobs again: still JOBMAP_MAX_JOBS");
	o += (size_t)snprintf(many + o, sizeof(many) - o, "one-more\n");
	snprintf(want, sizeof(want), "error -7: %d:1: more than %d jobs", JOBMAP_MAX_JOBS + 3, JOBMAP_MAX_JOBS);
	is_str(parse(many, o), want, "one job more: refused at its line");
}

/* Set path's mtime to ts (both times). */
static void set_mtime(const char *name, const struct timespec *ts)
{
	char path[128];
	struct timespec t[2] = { *ts, *ts };

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (utimensat(AT_FDCWD, path, t, 0))
		printf("# utimensat %s: %s\n", path, strerror(errno));
}

static void test_changes(void)
{
	struct jobmap *jm = jobmap_new(dir);
	char want[256], path[128];
	struct stat st, st2;
	int rc;

	is_str(jobmap_dir(jm), dir, "jobmap_dir: the directory given");
	is_str(jobmap_error(jm), NULL, "no error before the first refresh");
	rc = jobmap_refresh(jm);
	is_int(rc, -ENOENT, "a missing directory: -ENOENT");
	snprintf(want, sizeof(want), "%s: No such file or directory", dir);
	is_str(jobmap_error(jm), want, "... and the error names it");
	is_int((long)jobmap_size(jm), 0, "... and the table is empty");

	sh("mkdir '%s' '%s/2'", dir, dir);
	puts_("0", "j1\nj2\n");
	puts_("1", "");
	puts_("3.0", "m1");
	puts_("3", "whole3\n");
	puts_("foo", "x\n");
	puts_("01", "y\n");
	puts_("2/0", "z\n");
	rc = jobmap_refresh(jm);
	is_int(rc, 0, "the directory made: read");
	is_str(jobmap_error(jm), NULL, "... without an error");
	is_str(jobs(jm, 0, -1), "j1|j2", "GPU 0: its two jobs");
	is_str(jobs(jm, 1, -1), "", "GPU 1: an empty file, no job");
	is_str(jobs(jm, 2, -1), "", "GPU 2: a directory named 2 is skipped");
	is_str(jobs(jm, 3, 0), "m1", "GPU 3's MIG device with GPU instance 0: its file 3.0");
	is_str(jobs(jm, 3, -1), "whole3", "GPU 3 as a whole: its file 3, not 3.0's");
	is_str(jobs(jm, 3, 1), "", "GPU 3's GPU instance 1: no file, no job (3's are not inherited)");
	is_str(jobs(jm, 0, 0), "", "GPU 0's GPU instance 0: 0's jobs are not inherited either");
	is_int((long)jobmap_size(jm), 3, "three entries (no entry for an empty file)");
	{
		int g[3], gi[3];
		size_t n[3];

		for (size_t i = 0; i < 3; i++)
			jobmap_at(jm, i, &g[i], &gi[i], &n[i]);
		ok(g[0] == 0 && gi[0] == -1 && n[0] == 2 && g[1] == 3 && gi[1] == -1 && g[2] == 3 && gi[2] == 0,
		   "jobmap_at: sorted by GPU, the whole GPU before its instances");
	}

	is_int(jobmap_refresh(jm), 0, "nothing changed: 0");
	is_str(jobs(jm, 0, -1), "j1|j2", "... the same table");

	puts_("0", "j1\nj2\nj3\n");
	is_int(jobmap_refresh(jm), 0, "a job added to GPU 0");
	is_str(jobs(jm, 0, -1), "j1|j2|j3", "... is seen at the next refresh");

	snprintf(path, sizeof(path), "%s/3.0", dir);
	unlink(path);
	is_int(jobmap_refresh(jm), 0, "3.0 removed");
	is_str(jobs(jm, 3, 0), "", "... its jobs are gone");

	/* In place, same size, and the mtime put back to the nanosecond: only the watch can tell. */
	snprintf(path, sizeof(path), "%s/0", dir);
	stat(path, &st);
	{
		int fd = open(path, O_WRONLY);

		if (fd < 0 || pwrite(fd, "k1\nk2\nk3\n", 9, 0) != 9)
			printf("# cannot rewrite %s\n", path);
		if (fd >= 0)
			close(fd);
	}
	set_mtime("0", &st.st_mtim);
	stat(path, &st2);
	ok(st2.st_size == st.st_size && st2.st_mtim.tv_sec == st.st_mtim.tv_sec &&
		   st2.st_mtim.tv_nsec == st.st_mtim.tv_nsec,
	   "0 rewritten in place: the same size and mtime");
	is_int(jobmap_refresh(jm), 0, "refreshed");
	is_str(jobs(jm, 0, -1), "k1|k2|k3", "... the rewrite is seen");

	/* The directory removed: the last good table stays; made again: read again. */
	sh("rm -rf '%s'", dir);
	is_int(jobmap_refresh(jm), -ENOENT, "the directory removed: -ENOENT");
	is_str(jobs(jm, 0, -1), "k1|k2|k3", "... the last good table kept");
	is_int(jobmap_refresh(jm), -ENOENT, "still missing: -ENOENT again");
	sh("mkdir '%s'", dir);
	puts_("5", "new5\n");
	is_int(jobmap_refresh(jm), 0, "made again");
	is_str(jobs(jm, 5, -1), "new5", "... its files read");
	is_str(jobs(jm, 0, -1), "", "... and GPU 0's old jobs gone");
	puts_("5", "new5\nnewer5\n");
	is_int(jobmap_refresh(jm), 0, "a change in the new directory");
	is_str(jobs(jm, 5, -1), "new5|newer5", "... is seen: the new directory is watched");

	/* Moved away and another put in its place. */
	sh("mv '%s' '%s.old' && mkdir '%s' && echo moved > '%s/6'", dir, dir, dir, dir);
	is_int(jobmap_refresh(jm), 0, "the directory moved away and another made at its path");
	is_str(jobs(jm, 6, -1), "moved", "... the new one is read");
	is_str(jobs(jm, 5, -1), "", "... not the old one");
	sh("echo stale > '%s.old/7'", dir);
	is_int(jobmap_refresh(jm), 0, "a file added to the old directory");
	is_str(jobs(jm, 7, -1), "", "... is not seen");
	sh("rm -rf '%s.old'", dir);
	jobmap_free(jm);
	jobmap_free(NULL);
}

static void test_bad_files(void)
{
	struct jobmap *jm;
	char want[512], path[128], big[JOBMAP_MAX_FILE_BYTES + 2], line[JOBMAP_MAX_ID + 8];
	const char *e;
	int rc;

	sh("rm -rf '%s' && mkdir '%s'", dir, dir);
	jm = jobmap_new(dir);
	puts_("0", "a\n");
	puts_("1", "b\n");
	puts_("2", "c\n");
	is_int(jobmap_refresh(jm), 0, "three files");

	/* A FIFO: never opened for a wait, an error naming it; the other files still read. */
	snprintf(path, sizeof(path), "%s/4", dir);
	mkfifo(path, 0644);
	puts_("0", "a\naa\n");
	rc = jobmap_refresh(jm);
	is_int(rc, -EINVAL, "a FIFO named 4: -EINVAL (and no hang)");
	snprintf(want, sizeof(want), "%s/4: a FIFO, not read (mapping files must be regular files)", dir);
	is_str(jobmap_error(jm), want, "... the error names it");
	is_str(jobs(jm, 0, -1), "a|aa", "... the other files read as they are now");
	unlink(path);
	is_int(jobmap_refresh(jm), 0, "the FIFO removed: no error");
	is_str(jobmap_error(jm), NULL, "... jobmap_error NULL again");

	/* A symbolic link: not followed (it could point at any file the monitor can read). */
	snprintf(path, sizeof(path), "%s.secret", dir);
	sh("echo secret > '%s' && ln -s '%s' '%s/5'", path, path, dir);
	rc = jobmap_refresh(jm);
	is_int(rc, -ELOOP, "a symbolic link named 5: -ELOOP");
	snprintf(want, sizeof(want), "%s/5: a symbolic link, not followed (mapping files must be regular files)", dir);
	is_str(jobmap_error(jm), want, "... the error names it");
	is_str(jobs(jm, 5, -1), "", "... its target is not read");
	sh("rm -f '%s' '%s/5'", path, dir);

	/* A bad line keeps the file's last good jobs. */
	puts_("1", "b\nbb\n\x01x\n");
	rc = jobmap_refresh(jm);
	is_int(rc, -EINVAL, "a control character in 1: -EINVAL");
	snprintf(want, sizeof(want), "%s/1:3:1: a control character (U+0001) in a job id", dir);
	is_str(jobmap_error(jm), want, "... DIR/FILE:LINE:COLUMN");
	is_str(jobs(jm, 1, -1), "b", "... GPU 1 keeps its last good jobs");
	is_int(jobmap_refresh(jm), -EINVAL, "a refresh after an error reads again: the same error");
	is_str(jobs(jm, 1, -1), "b", "... and the same last good jobs");

	memset(line, 'y', sizeof(line));
	memcpy(line + JOBMAP_MAX_ID + 1, "\n", 2);
	puts_("2", line);
	rc = jobmap_refresh(jm);
	is_int(rc, -EINVAL, "and a job id too long in 2: the first file's error returned");
	e = jobmap_error(jm);
	ok(e && strstr(e, " (and 1 more file)"), "... the error says another file is bad (%s)", e ? e : "(null)");
	snprintf(want, sizeof(want), "%s/2:1:%d: a job id of %d bytes, more than %d", dir, JOBMAP_MAX_ID + 1,
		 JOBMAP_MAX_ID + 1, JOBMAP_MAX_ID);
	puts_("1", "b\n");
	is_int(jobmap_refresh(jm), -E2BIG, "1 fixed, 2 still bad: -E2BIG");
	is_str(jobmap_error(jm), want, "... DIR/FILE:LINE:COLUMN of the id too long");
	is_str(jobs(jm, 2, -1), "c", "... GPU 2 keeps its last good jobs");

	memset(big, 'z', sizeof(big));
	big[sizeof(big) - 1] = '\n';
	put("2", big, sizeof(big));
	is_int(jobmap_refresh(jm), -EFBIG, "a file past JOBMAP_MAX_FILE_BYTES: -EFBIG");
	snprintf(want, sizeof(want), "%s/2: more than %d bytes, not read", dir, JOBMAP_MAX_FILE_BYTES);
	is_str(jobmap_error(jm), want, "... the error names it and the cap");
	is_str(jobs(jm, 2, -1), "c", "... GPU 2 keeps its last good jobs");
	puts_("2", "c2\n");
	is_int(jobmap_refresh(jm), 0, "fixed");
	is_str(jobs(jm, 2, -1), "c2", "... read");
	jobmap_free(jm);
}

/*
 * An unreadable file (mode 000): as root, whom the mode does not stop, the
 * map runs in a child that drops to nobody (65534); -EACCES either way.
 */
static void test_unreadable(void)
{
	char path[128];
	pid_t pid;
	int st = 0;

	sh("rm -rf '%s' && mkdir -m 755 '%s'", dir, dir);
	puts_("0", "a\n");
	puts_("1", "b\n");
	snprintf(path, sizeof(path), "%s/1", dir);
	if (geteuid() == 0 && chown(path, 65534, 65534)) /* nobody's file: nobody may chmod it */
		printf("# chown %s: %s\n", path, strerror(errno));
	pid = fork();
	if (pid == 0) {
		struct jobmap *jm;
		char want[256];
		int rc, good;

		if (geteuid() == 0 && (setgid(65534) || setuid(65534)))
			_exit(3);
		jm = jobmap_new(dir);
		good = jobmap_refresh(jm) == 0 && !strcmp(jobs(jm, 1, -1), "b");
		chmod(path, 0);
		if (geteuid() != 0 && access(path, R_OK) == 0)
			_exit(4);
		rc = jobmap_refresh(jm);
		snprintf(want, sizeof(want), "%s/1: Permission denied", dir);
		fprintf(stderr, "# as uid %d: %d %s\n", (int)geteuid(), rc, jobmap_error(jm) ? jobmap_error(jm) : "");
		st = good && rc == -EACCES && jobmap_error(jm) && !strcmp(jobmap_error(jm), want) &&
		     !strcmp(jobs(jm, 1, -1), "b") && !strcmp(jobs(jm, 0, -1), "a") ? 0 : 1;
		jobmap_free(jm);
		_exit(st);
	}
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "an unreadable file: -EACCES, \"DIR/1: Permission denied\", its last good jobs kept");
}

static void test_caps(void)
{
	struct jobmap *jm;
	char want[256];
	int rc;

	sh("rm -rf '%s' && mkdir '%s'", dir, dir);
	puts_("0", "a\n");
	jm = jobmap_new(dir);
	is_int(jobmap_refresh(jm), 0, "one file");
	sh("cd '%s' && seq 1 %d | sed 's/^/x/' | xargs touch", dir, JOBMAP_MAX_ENTRIES);
	rc = jobmap_refresh(jm);
	is_int(rc, -E2BIG, "more than JOBMAP_MAX_ENTRIES entries: -E2BIG");
	snprintf(want, sizeof(want), "%s: more than %d entries, not read", dir, JOBMAP_MAX_ENTRIES);
	is_str(jobmap_error(jm), want, "... the error says so");
	is_str(jobs(jm, 0, -1), "a", "... the last good table kept");
	sh("rm -rf '%s' && mkdir '%s' && cd '%s' && seq 0 %d | xargs touch", dir, dir, dir, JOBMAP_MAX_FILES);
	puts_("0", "b\n");
	rc = jobmap_refresh(jm);
	is_int(rc, -E2BIG, "more than JOBMAP_MAX_FILES mapping files: -E2BIG");
	snprintf(want, sizeof(want), "%s: more than %d mapping files, not read", dir, JOBMAP_MAX_FILES);
	is_str(jobmap_error(jm), want, "... the error says so");
	is_str(jobs(jm, 0, -1), "a", "... the last good table kept");
	sh("rm -f '%s/%d'", dir, JOBMAP_MAX_FILES);
	is_int(jobmap_refresh(jm), 0, "JOBMAP_MAX_FILES mapping files: read");
	is_str(jobs(jm, 0, -1), "b", "... GPU 0's file among them");
	jobmap_free(jm);

	/* Not a directory. */
	sh("rm -rf '%s' && touch '%s'", dir, dir);
	jm = jobmap_new(dir);
	is_int(jobmap_refresh(jm), -ENOTDIR, "a regular file as the directory: -ENOTDIR");
	snprintf(want, sizeof(want), "%s: Not a directory", dir);
	is_str(jobmap_error(jm), want, "... the error says so");
	jobmap_free(jm);
	sh("rm -f '%s'", dir);
}

int main(void)
{
	if (!mkdtemp(work)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	chmod(work, 0755);
	snprintf(dir, sizeof(dir), "%s/map", work);
	test_names();
	test_lines();
	test_changes();
	test_bad_files();
	test_unreadable();
	test_caps();
	sh("rm -rf '%s'", work);
	return done_testing();
}
