/* SPDX-License-Identifier: MIT */
/*
 * The push sinks' durable record queue (common/recq.c, accel-remote-write's and accel-otlp's), in memory and
 * on disk: order, acknowledgement by id, the bound dropping the oldest and
 * counting it; on disk, what was not acknowledged comes back after a
 * reopen (a restart) and what was acknowledged does not; segments roll
 * and are deleted once acknowledged; a record cut short or with a bad
 * checksum ends the last segment with the tail dropped and counted, the rest
 * replayed, and appends go on after it; in an older segment it is reported
 * as corruption (where, what) and only that record is skipped. A head that
 * is a FIFO is an error at open, never a hang; a head that cannot be right
 * replays everything. A full disk: one message, no empty segments, the
 * batches kept in memory and sent in order.
 */
#include "../../common/recq.h"
#include "tap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static void rec(char *dst, size_t size, int i)
{
	snprintf(dst, size, "record %d %0*d", i, 100 + i % 50, i);
}

/* Pop everything, checking records come back as first..last in order. */
static int drain(struct recq *q, int first, int last, const char *what)
{
	struct buf b;
	char want[256];
	uint32_t ns;
	uint64_t id;
	int i = first, good = 1;

	buf_init(&b, 1 << 20);
	while (recq_peek(q, &b, &ns, &id) == 1) {
		rec(want, sizeof(want), i);
		if (b.len != strlen(want) || memcmp(b.data, want, b.len) || ns != (uint32_t)i) {
			fprintf(stderr, "# %s: record %d: got \"%.*s\" (%u samples)\n", what, i, (int)b.len, b.data, ns);
			good = 0;
			break;
		}
		recq_ack(q, id);
		i++;
	}
	if (good && i != last + 1) {
		fprintf(stderr, "# %s: ended at %d, wanted %d\n", what, i - 1, last);
		good = 0;
	}
	buf_free(&b);
	return good;
}

static int nsegments_in(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += strstr(de->d_name, ".seg") != NULL;
	if (d)
		closedir(d);
	return n;
}

static int nsegments(void)
{
	return nsegments_in(dir);
}

static void push_range(struct recq *q, int a, int b)
{
	char r[256];

	for (int i = a; i <= b; i++) {
		rec(r, sizeof(r), i);
		recq_push(q, r, strlen(r), (uint32_t)i, NULL);
	}
}

static void test_memory(void)
{
	struct recq *q;
	struct recq_stats st;
	char err[256], r[256];
	struct buf b;
	uint32_t ns;
	uint64_t id, dropped = 0;

	buf_init(&b, 1 << 20);
	is_int(recq_open(&(struct recq_opts){ .max_bytes = 1000 }, &q, err, sizeof(err)), 0, "memory queue");
	push_range(q, 1, 3);
	ok(drain(q, 1, 3, "memory"), "memory: three records in order");
	/* Bound: each record is 12 + ~110 bytes; 1000 holds 7 or 8. */
	for (int i = 1; i <= 20; i++) {
		uint64_t d = 0;

		rec(r, sizeof(r), i);
		recq_push(q, r, strlen(r), (uint32_t)i, &d);
		dropped += d;
	}
	recq_stats(q, &st);
	ok(st.bytes <= 1000, "memory: bounded (%llu bytes)", (unsigned long long)st.bytes);
	is_int(st.dropped_items, dropped, "memory: drops counted in samples");
	ok(dropped > 0 && st.dropped_records == 20 - st.records, "memory: the oldest dropped (%llu records kept)",
	   (unsigned long long)st.records);
	ok(drain(q, (int)(21 - st.records), 20, "memory bound"), "memory: the newest kept, in order");
	/* An id taken before a drop no longer acknowledges anything. */
	push_range(q, 1, 1);
	recq_peek(q, &b, &ns, &id);
	push_range(q, 2, 12); /* pushes record 1 out */
	is_int(recq_ack(q, id), 0, "ack of a dropped record: no error");
	recq_stats(q, &st);
	ok(st.records > 0 && recq_peek(q, &b, &ns, &id) == 1 && ns != 1, "... and nothing else removed");
	recq_close(q);
	buf_free(&b);
}

static void test_disk_replay(void)
{
	struct recq *q;
	struct recq_stats st;
	char err[256];
	struct buf b;
	uint32_t ns;
	uint64_t id;
	const struct recq_opts o = { .dir = dir, .max_bytes = 1 << 20, .segment_bytes = 1000 };

	buf_init(&b, 1 << 20);
	is_int(recq_open(&o, &q, err, sizeof(err)), 0, "disk queue created");
	{
		struct recq *q2;

		is_int(recq_open(&o, &q2, err, sizeof(err)), -EWOULDBLOCK, "a second queue on the same directory refused");
		ok(strstr(err, "in use") != NULL, "... saying why: %s", err);
	}
	push_range(q, 1, 30);
	ok(nsegments() >= 3, "segments roll at segment_bytes (%d)", nsegments());
	for (int i = 1; i <= 10; i++) {
		recq_peek(q, &b, &ns, &id);
		recq_ack(q, id);
	}
	recq_close(q); /* as after kill -9: nothing more is written at close */
	is_int(recq_open(&o, &q, err, sizeof(err)), 0, "reopened");
	recq_stats(q, &st);
	is_int(st.replayed_records, 20, "the 20 unacknowledged records come back");
	is_int(st.corrupt_bytes, 0, "nothing corrupt");
	push_range(q, 31, 35);
	ok(drain(q, 11, 35, "disk replay"), "replayed 11..30 then the new 31..35, in order");
	recq_close(q);
	is_int(recq_open(&o, &q, err, sizeof(err)), 0, "reopened once more");
	recq_stats(q, &st);
	is_int(st.replayed_records, 0, "everything acknowledged: nothing comes back");
	ok(nsegments() <= 1, "acknowledged segments deleted (%d left)", nsegments());
	recq_close(q);
	buf_free(&b);
}

/* The newest segment's path. */
static void last_segment(char *dst, size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char best[64] = "";

	while (d && (de = readdir(d)))
		if (strstr(de->d_name, ".seg") && strcmp(de->d_name, best) > 0)
			snprintf(best, sizeof(best), "%s", de->d_name);
	if (d)
		closedir(d);
	snprintf(dst, size, "%s/%s", dir, best);
}

static void test_disk_corrupt(void)
{
	struct recq *q;
	struct recq_stats st;
	char err[256], path[512];
	struct stat sb;
	int fd;
	const struct recq_opts o = { .dir = dir, .max_bytes = 1 << 20, .segment_bytes = 1 << 20 };

	/* A crash in the middle of a write: the last record cut short. */
	recq_open(&o, &q, err, sizeof(err));
	push_range(q, 1, 5);
	recq_close(q);
	last_segment(path, sizeof(path));
	stat(path, &sb);
	ok(truncate(path, sb.st_size - 7) == 0, "last record cut short by 7 bytes");
	is_int(recq_open(&o, &q, err, sizeof(err)), 0, "reopened");
	recq_stats(q, &st);
	is_int(st.replayed_records, 4, "four whole records replayed");
	{
		char r5[256];

		rec(r5, sizeof(r5), 5);
		is_int(st.corrupt_bytes, RECQ_HDR + strlen(r5) - 7, "the cut record's bytes counted as corrupt");
	}
	push_range(q, 5, 6);
	ok(drain(q, 1, 6, "after a cut"), "1..4 replayed, then 5, 6 appended after the cut tail was removed");
	recq_close(q);

	/* A flipped byte inside a record in the middle: the checksum catches it. */
	recq_open(&o, &q, err, sizeof(err));
	push_range(q, 1, 5);
	recq_close(q);
	last_segment(path, sizeof(path));
	fd = open(path, O_RDWR);
	{
		char c;

		/* Record 3 starts after two records; flip a byte in its data. */
		off_t off = 0;

		for (int i = 1; i <= 2; i++) {
			char r[256];

			rec(r, sizeof(r), i);
			off += RECQ_HDR + (off_t)strlen(r);
		}
		ok(pread(fd, &c, 1, off + RECQ_HDR + 3) == 1, "read a byte of record 3");
		c ^= 0x20;
		ok(pwrite(fd, &c, 1, off + RECQ_HDR + 3) == 1, "flipped it");
	}
	close(fd);
	is_int(recq_open(&o, &q, err, sizeof(err)), 0, "reopened after a flipped byte");
	recq_stats(q, &st);
	is_int(st.replayed_records, 2, "records before the bad one replayed; it and what follows dropped");
	ok(st.corrupt_bytes > 0, "corrupt bytes counted (%llu)", (unsigned long long)st.corrupt_bytes);
	push_range(q, 3, 4);
	ok(drain(q, 1, 4, "after a flip"), "1, 2 replayed, then 3, 4 appended after the bad tail was cut");
	recq_close(q);
	is_int(recq_open(&o, &q, err, sizeof(err)), 0, "reopened once more");
	recq_stats(q, &st);
	is_int(st.corrupt_bytes, 0, "the bad tail was truncated: nothing corrupt any more");
	is_int(st.replayed_records, 0, "and nothing left");
	recq_close(q);
}

static void test_disk_bound(void)
{
	struct recq *q;
	struct recq_stats st;
	char err[256];
	const struct recq_opts o = { .dir = dir, .max_bytes = 2000, .segment_bytes = 500 };

	recq_open(&o, &q, err, sizeof(err));
	push_range(q, 1, 60);
	recq_stats(q, &st);
	ok(st.bytes <= 2000, "disk: bounded by max_bytes (%llu)", (unsigned long long)st.bytes);
	ok(st.dropped_records == 60 - st.records, "disk: the oldest dropped and counted");
	ok(nsegments() <= 6, "disk: segments of dropped records deleted (%d left)", nsegments());
	recq_close(q);
	recq_open(&o, &q, err, sizeof(err));
	{
		struct recq_stats st2;

		recq_stats(q, &st2);
		is_int(st2.replayed_records, st.records, "disk: a reopen brings back the kept records, not the dropped ones");
		is_int(st2.dropped_records, 0, "disk: ... so none is dropped at the reopen");
	}
	ok(drain(q, (int)(61 - st.records), 60, "disk bound"), "disk: after a reopen, the newest records in order");
	recq_close(q);
}


/* The oldest segment's path and number. */
static unsigned long long first_segment(const char *d, char *dst, size_t size)
{
	DIR *dd = opendir(d);
	struct dirent *de;
	char best[64] = "";

	while (dd && (de = readdir(dd)))
		if (strstr(de->d_name, ".seg") && (!*best || strcmp(de->d_name, best) < 0))
			snprintf(best, sizeof(best), "%s", de->d_name);
	if (dd)
		closedir(dd);
	snprintf(dst, size, "%s/%s", d, best);
	return strtoull(best, NULL, 10);
}

/* stderr into a pipe (not a file: the full-disk test limits file sizes) until capture_end. */
struct capture {
	int saved, fds[2];
	char text[60000]; /* what was captured */
};

static void capture_start(struct capture *c)
{
	fflush(stderr);
	c->saved = dup(2);
	if (pipe(c->fds))
		abort();
	dup2(c->fds[1], 2);
	close(c->fds[1]);
}

/* Restore stderr, echo what was captured there as TAP comments, and return it (c->text). */
static const char *capture_end(struct capture *c)
{
	char *text = c->text;
	ssize_t n, got = 0;

	fflush(stderr);
	dup2(c->saved, 2);
	close(c->saved);
	while (got < (ssize_t)sizeof(c->text) - 1 &&
	       (n = read(c->fds[0], text + got, sizeof(c->text) - 1 - (size_t)got)) > 0)
		got += n;
	close(c->fds[0]);
	text[got] = '\0';
	for (const char *l = text; *l;) {
		size_t k = strcspn(l, "\n");

		fprintf(stderr, "# %.*s\n", (int)k, l);
		l += k + (l[k] == '\n');
	}
	return text;
}

static int count_lines(const char *text, const char *needle)
{
	int n = 0;

	for (const char *l = text; *l;) {
		size_t k = strcspn(l, "\n");
		const char *hit = strstr(l, needle);

		n += hit && hit < l + k;
		l += k + (l[k] == '\n');
	}
	return n;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f))
		abort();
}

/* A FIFO where head or a segment should be: an error or a skip at once, never a start blocked forever. */
static void test_disk_fifo(void)
{
	struct recq *q = NULL;
	struct recq_stats st;
	char d[300], path[400], err[512];
	const struct recq_opts o = { .dir = d, .max_bytes = 1 << 20, .segment_bytes = 1000 };

	snprintf(d, sizeof(d), "%s-fifo", dir);
	mkdir(d, 0700);
	snprintf(path, sizeof(path), "%s/head", d);
	ok(mkfifo(path, 0600) == 0, "a FIFO named head");
	alarm(30); /* a hang fails the test instead of stalling the suite */
	is_int(recq_open(&o, &q, err, sizeof(err)), -EINVAL, "open refuses it (does not block)");
	ok(strstr(err, "head is a FIFO, not a regular file") != NULL, "... saying what it is: %s", err);
	unlink(path);
	/* A FIFO named as a segment before the last: skipped, the other segments replayed. */
	snprintf(path, sizeof(path), "%s/%020d.seg", d, 1);
	ok(mkfifo(path, 0600) == 0, "a FIFO named as segment 1");
	snprintf(path, sizeof(path), "%s/%020d.seg", d, 2);
	write_text(path, "");
	is_int(recq_open(&o, &q, err, sizeof(err)), 0, "open goes on past it (does not block)");
	alarm(0);
	recq_stats(q, &st);
	is_int(st.replayed_records, 0, "nothing replayed from it");
	push_range(q, 1, 3);
	ok(drain(q, 1, 3, "after a FIFO segment"), "appends and sends go on");
	recq_close(q);
}

/* A head that cannot be right: a segment past the newest, an offset past its segment's end. */
static void test_disk_bad_head(void)
{
	struct recq *q;
	struct recq_stats st;
	char d[300], path[400], seg[400], line[64], err[512];
	unsigned long long first;
	const struct recq_opts o = { .dir = d, .max_bytes = 1 << 20, .segment_bytes = 1000 };
	struct capture c;
	const char *log;

	snprintf(d, sizeof(d), "%s-head", dir);
	snprintf(path, sizeof(path), "%s/head", d);
	recq_open(&o, &q, err, sizeof(err));
	push_range(q, 1, 30);
	recq_close(q);
	first = first_segment(d, seg, sizeof(seg));
	ok(nsegments_in(d) >= 3, "30 records in %d segments", nsegments_in(d));

	for (int k = 0; k < 2; k++) {
		const char *why = k ? "names an offset past its segment's end" : "names a segment past the newest";

		if (k)
			snprintf(line, sizeof(line), "%llu 99999\n", first);
		else
			snprintf(line, sizeof(line), "999 0\n");
		write_text(path, line);
		capture_start(&c);
		ok(recq_open(&o, &q, err, sizeof(err)) == 0, "head \"%.*s\": opened", (int)strcspn(line, "\n"), line);
		log = capture_end(&c);
		recq_stats(q, &st);
		is_int(st.replayed_records, 30, "... and every record replayed, none discarded");
		ok(strstr(log, why) && strstr(log, "replaying every segment"), "... with a warning: %s", why);
		if (!k)
			recq_close(q);
	}
	ok(drain(q, 1, 30, "bad head"), "records 1..30 in order");
	recq_close(q);
}

/* A bit flipped in a record of a segment before the last: corruption, said where, that record skipped. */
static void test_disk_corrupt_older(void)
{
	struct recq *q;
	struct recq_stats st;
	char d[300], seg[400], r[256], err[512], want[600];
	const struct recq_opts o = { .dir = d, .max_bytes = 1 << 20, .segment_bytes = 1000 };
	struct capture c;
	const char *log;
	off_t off;
	int fd;
	char ch;
	struct buf b;
	uint32_t ns;
	uint64_t id;

	snprintf(d, sizeof(d), "%s-older", dir);
	recq_open(&o, &q, err, sizeof(err));
	push_range(q, 1, 30);
	recq_close(q);
	first_segment(d, seg, sizeof(seg));
	rec(r, sizeof(r), 1);
	off = RECQ_HDR + (off_t)strlen(r); /* record 2 */
	fd = open(seg, O_RDWR);
	ok(fd >= 0 && pread(fd, &ch, 1, off + RECQ_HDR + 5) == 1, "read a byte of record 2 in the oldest segment");
	ch ^= 0x01;
	ok(pwrite(fd, &ch, 1, off + RECQ_HDR + 5) == 1, "flipped a bit of it");
	close(fd);
	capture_start(&c);
	is_int(recq_open(&o, &q, err, sizeof(err)), 0, "reopened");
	log = capture_end(&c);
	recq_stats(q, &st);
	rec(r, sizeof(r), 2);
	is_int(st.replayed_records, 29, "every other record replayed, those after it in its segment too");
	is_int(st.corrupt_bytes, RECQ_HDR + strlen(r), "the bad record's bytes counted as corrupt");
	snprintf(want, sizeof(want), "%s is corrupt", strrchr(seg, '/') + 1);
	ok(strstr(log, want) != NULL, "the message says corrupt and which segment");
	snprintf(want, sizeof(want), "a checksum mismatch at offset %lld", (long long)off);
	ok(strstr(log, want) != NULL, "... what and at which offset");
	ok(strstr(log, "a crash in the middle") == NULL, "... and does not blame a crash");
	buf_init(&b, 1 << 20);
	ok(recq_peek(q, &b, &ns, &id) == 1 && ns == 1, "record 1 first");
	recq_ack(q, id);
	buf_free(&b);
	ok(drain(q, 3, 30, "after a flip in an older segment"), "then 3..30 in order");
	recq_close(q);
}

/* A full disk (file size limit): one message, no segment per failed append, the batches kept and sent in order. */
static void test_disk_full(void)
{
	struct recq *q;
	char d[300], err[512];
	const struct recq_opts o = { .dir = d, .max_bytes = 1 << 20, .segment_bytes = 1000 };
	struct rlimit old, lim;
	struct capture c;
	const char *log;
	int before;

	snprintf(d, sizeof(d), "%s-full", dir);
	recq_open(&o, &q, err, sizeof(err));
	push_range(q, 1, 3);
	before = nsegments_in(d);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = 4; /* no record fits anywhere */
	capture_start(&c);
	ok(setrlimit(RLIMIT_FSIZE, &lim) == 0, "the disk is full");
	push_range(q, 4, 60);
	setrlimit(RLIMIT_FSIZE, &old);
	push_range(q, 61, 62);
	log = capture_end(&c);
	is_int(count_lines(log, "cannot append"), 1, "57 failed appends: one message");
	ok(strstr(log, "work again; 57 batches") != NULL, "one more when appends work again, with the count");
	is_int(nsegments_in(d), before, "no segment left per failed append");
	ok(drain(q, 1, 62, "full disk"), "every batch sent, in order (those in memory too)");
	recq_close(q);
}

int main(void)
{
	char tmpl[] = "/tmp/test_rwq.XXXXXX";

	if (!mkdtemp(tmpl))
		return 1;
	snprintf(dir, sizeof(dir), "%s/q", tmpl);
	test_memory();
	test_disk_replay();
	test_disk_corrupt();
	test_disk_bound();
	test_disk_fifo();
	test_disk_bad_head();
	test_disk_corrupt_older();
	test_disk_full();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
		if (system(cmd))
			return 1;
	}
	return done_testing();
}
