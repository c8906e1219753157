/* SPDX-License-Identifier: MIT */
/*
 * accel-remote-write's queue (sinks/remote-write/remote-write_queue.c), in memory and
 * on disk: order, acknowledgement by id, the bound dropping the oldest and
 * counting it; on disk, what was not acknowledged comes back after a
 * reopen (a restart) and what was acknowledged does not; segments roll
 * and are deleted once acknowledged; a record cut short or with a bad
 * checksum ends its segment with the tail dropped and counted, the rest
 * replayed, and appends go on after it.
 */
#include "../../sinks/remote-write/remote-write_queue.h"
#include "tap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static void rec(char *dst, size_t size, int i)
{
	snprintf(dst, size, "record %d %0*d", i, 100 + i % 50, i);
}

/* Pop everything, checking records come back as first..last in order. */
static int drain(struct rw_queue *q, int first, int last, const char *what)
{
	struct buf b;
	char want[256];
	uint32_t ns;
	uint64_t id;
	int i = first, good = 1;

	buf_init(&b, 1 << 20);
	while (rw_queue_peek(q, &b, &ns, &id) == 1) {
		rec(want, sizeof(want), i);
		if (b.len != strlen(want) || memcmp(b.data, want, b.len) || ns != (uint32_t)i) {
			fprintf(stderr, "# %s: record %d: got \"%.*s\" (%u samples)\n", what, i, (int)b.len, b.data, ns);
			good = 0;
			break;
		}
		rw_queue_ack(q, id);
		i++;
	}
	if (good && i != last + 1) {
		fprintf(stderr, "# %s: ended at %d, wanted %d\n", what, i - 1, last);
		good = 0;
	}
	buf_free(&b);
	return good;
}

static int nsegments(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += strstr(de->d_name, ".seg") != NULL;
	if (d)
		closedir(d);
	return n;
}

static void push_range(struct rw_queue *q, int a, int b)
{
	char r[256];

	for (int i = a; i <= b; i++) {
		rec(r, sizeof(r), i);
		rw_queue_push(q, r, strlen(r), (uint32_t)i, NULL);
	}
}

static void test_memory(void)
{
	struct rw_queue *q;
	struct rw_queue_stats st;
	char err[256], r[256];
	struct buf b;
	uint32_t ns;
	uint64_t id, dropped = 0;

	buf_init(&b, 1 << 20);
	is_int(rw_queue_open(&(struct rw_queue_opts){ .max_bytes = 1000 }, &q, err, sizeof(err)), 0, "memory queue");
	push_range(q, 1, 3);
	ok(drain(q, 1, 3, "memory"), "memory: three records in order");
	/* Bound: each record is 12 + ~110 bytes; 1000 holds 7 or 8. */
	for (int i = 1; i <= 20; i++) {
		uint64_t d = 0;

		rec(r, sizeof(r), i);
		rw_queue_push(q, r, strlen(r), (uint32_t)i, &d);
		dropped += d;
	}
	rw_queue_stats(q, &st);
	ok(st.bytes <= 1000, "memory: bounded (%llu bytes)", (unsigned long long)st.bytes);
	is_int(st.dropped_samples, dropped, "memory: drops counted in samples");
	ok(dropped > 0 && st.dropped_records == 20 - st.records, "memory: the oldest dropped (%llu records kept)",
	   (unsigned long long)st.records);
	ok(drain(q, (int)(21 - st.records), 20, "memory bound"), "memory: the newest kept, in order");
	/* An id taken before a drop no longer acknowledges anything. */
	push_range(q, 1, 1);
	rw_queue_peek(q, &b, &ns, &id);
	push_range(q, 2, 12); /* pushes record 1 out */
	is_int(rw_queue_ack(q, id), 0, "ack of a dropped record: no error");
	rw_queue_stats(q, &st);
	ok(st.records > 0 && rw_queue_peek(q, &b, &ns, &id) == 1 && ns != 1, "... and nothing else removed");
	rw_queue_close(q);
	buf_free(&b);
}

static void test_disk_replay(void)
{
	struct rw_queue *q;
	struct rw_queue_stats st;
	char err[256];
	struct buf b;
	uint32_t ns;
	uint64_t id;
	const struct rw_queue_opts o = { .dir = dir, .max_bytes = 1 << 20, .segment_bytes = 1000 };

	buf_init(&b, 1 << 20);
	is_int(rw_queue_open(&o, &q, err, sizeof(err)), 0, "disk queue created");
	{
		struct rw_queue *q2;

		is_int(rw_queue_open(&o, &q2, err, sizeof(err)), -EWOULDBLOCK, "a second queue on the same directory refused");
		ok(strstr(err, "in use") != NULL, "... saying why: %s", err);
	}
	push_range(q, 1, 30);
	ok(nsegments() >= 3, "segments roll at segment_bytes (%d)", nsegments());
	for (int i = 1; i <= 10; i++) {
		rw_queue_peek(q, &b, &ns, &id);
		rw_queue_ack(q, id);
	}
	rw_queue_close(q); /* as after kill -9: nothing more is written at close */
	is_int(rw_queue_open(&o, &q, err, sizeof(err)), 0, "reopened");
	rw_queue_stats(q, &st);
	is_int(st.replayed_records, 20, "the 20 unacknowledged records come back");
	is_int(st.corrupt_bytes, 0, "nothing corrupt");
	push_range(q, 31, 35);
	ok(drain(q, 11, 35, "disk replay"), "replayed 11..30 then the new 31..35, in order");
	rw_queue_close(q);
	is_int(rw_queue_open(&o, &q, err, sizeof(err)), 0, "reopened once more");
	rw_queue_stats(q, &st);
	is_int(st.replayed_records, 0, "everything acknowledged: nothing comes back");
	ok(nsegments() <= 1, "acknowledged segments deleted (%d left)", nsegments());
	rw_queue_close(q);
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
	struct rw_queue *q;
	struct rw_queue_stats st;
	char err[256], path[512];
	struct stat sb;
	int fd;
	const struct rw_queue_opts o = { .dir = dir, .max_bytes = 1 << 20, .segment_bytes = 1 << 20 };

	/* A crash in the middle of a write: the last record cut short. */
	rw_queue_open(&o, &q, err, sizeof(err));
	push_range(q, 1, 5);
	rw_queue_close(q);
	last_segment(path, sizeof(path));
	stat(path, &sb);
	ok(truncate(path, sb.st_size - 7) == 0, "last record cut short by 7 bytes");
	is_int(rw_queue_open(&o, &q, err, sizeof(err)), 0, "reopened");
	rw_queue_stats(q, &st);
	is_int(st.replayed_records, 4, "four whole records replayed");
	{
		char r5[256];

		rec(r5, sizeof(r5), 5);
		is_int(st.corrupt_bytes, RW_QUEUE_HDR + strlen(r5) - 7, "the cut record's bytes counted as corrupt");
	}
	push_range(q, 5, 6);
	ok(drain(q, 1, 6, "after a cut"), "1..4 replayed, then 5, 6 appended after the cut tail was removed");
	rw_queue_close(q);

	/* A flipped byte inside a record in the middle: the checksum catches it. */
	rw_queue_open(&o, &q, err, sizeof(err));
	push_range(q, 1, 5);
	rw_queue_close(q);
	last_segment(path, sizeof(path));
	fd = open(path, O_RDWR);
	{
		char c;

		/* Record 3 starts after two records; flip a byte in its data. */
		off_t off = 0;

		for (int i = 1; i <= 2; i++) {
			char r[256];

			rec(r, sizeof(r), i);
			off += RW_QUEUE_HDR + (off_t)strlen(r);
		}
		ok(pread(fd, &c, 1, off + RW_QUEUE_HDR + 3) == 1, "read a byte of record 3");
		c ^= 0x20;
		ok(pwrite(fd, &c, 1, off + RW_QUEUE_HDR + 3) == 1, "flipped it");
	}
	close(fd);
	is_int(rw_queue_open(&o, &q, err, sizeof(err)), 0, "reopened after a flipped byte");
	rw_queue_stats(q, &st);
	is_int(st.replayed_records, 2, "records before the bad one replayed; it and what follows dropped");
	ok(st.corrupt_bytes > 0, "corrupt bytes counted (%llu)", (unsigned long long)st.corrupt_bytes);
	push_range(q, 3, 4);
	ok(drain(q, 1, 4, "after a flip"), "1, 2 replayed, then 3, 4 appended after the bad tail was cut");
	rw_queue_close(q);
	is_int(rw_queue_open(&o, &q, err, sizeof(err)), 0, "reopened once more");
	rw_queue_stats(q, &st);
	is_int(st.corrupt_bytes, 0, "the bad tail was truncated: nothing corrupt any more");
	is_int(st.replayed_records, 0, "and nothing left");
	rw_queue_close(q);
}

static void test_disk_bound(void)
{
	struct rw_queue *q;
	struct rw_queue_stats st;
	char err[256];
	const struct rw_queue_opts o = { .dir = dir, .max_bytes = 2000, .segment_bytes = 500 };

	rw_queue_open(&o, &q, err, sizeof(err));
	push_range(q, 1, 60);
	rw_queue_stats(q, &st);
	ok(st.bytes <= 2000, "disk: bounded by max_bytes (%llu)", (unsigned long long)st.bytes);
	ok(st.dropped_records == 60 - st.records, "disk: the oldest dropped and counted");
	ok(nsegments() <= 6, "disk: segments of dropped records deleted (%d left)", nsegments());
	rw_queue_close(q);
	rw_queue_open(&o, &q, err, sizeof(err));
	{
		struct rw_queue_stats st2;

		rw_queue_stats(q, &st2);
		is_int(st2.replayed_records, st.records, "disk: a reopen brings back the kept records, not the dropped ones");
		is_int(st2.dropped_records, 0, "disk: ... so none is dropped at the reopen");
	}
	ok(drain(q, (int)(61 - st.records), 60, "disk bound"), "disk: after a reopen, the newest records in order");
	rw_queue_close(q);
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
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
		if (system(cmd))
			return 1;
	}
	return done_testing();
}
