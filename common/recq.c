/* SPDX-License-Identifier: MIT */
/*
 * The durable record queue; see recq.h.
 *
 * Both kinds keep an index of the queued records in memory (a ring of
 * small entries: where each record is and how many items it holds); the
 * memory queue keeps the data there too, the disk queue reads it back from
 * its segment when the record reaches the front.
 */
#include "recq.h"

#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>

struct rec {
	uint64_t seg;   /* disk: segment number */
	uint64_t off;   /* disk: offset of the header in it */
	uint32_t len;   /* data bytes */
	uint32_t count;
	uint64_t id;
	char *mem;      /* memory queue: the data */
};

struct recq {
	struct recq_opts o;
	char *dir;
	struct rec *r;          /* ring */
	size_t head, n, cap;
	uint64_t next_id;
	struct recq_stats st;
	/* disk */
	int dirfd;
	int lockfd;             /* DIR/lock, held with flock while open */
	int wfd;                /* the segment being appended to, -1 none */
	uint64_t wseg, woff;
	/* Appends failing (a full disk): one message, then one every 10 s with the count, and one at the end. */
	struct log_limit lim_append;
	struct log_limit lim_full; /* a full queue drops at each push: one message every 10 s, with the count */
	uint64_t failing_records, failing_items; /* kept in memory only since appends began to fail */
};

uint32_t recq_crc(uint32_t count, const void *data, size_t len)
{
	unsigned char b[4] = { (unsigned char)count, (unsigned char)(count >> 8), (unsigned char)(count >> 16),
			       (unsigned char)(count >> 24) };
	uLong c = crc32(0L, Z_NULL, 0);

	c = crc32(c, b, 4);
	while (len > 0) {
		uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;

		c = crc32(c, data, n);
		data = (const char *)data + n;
		len -= n;
	}
	return (uint32_t)c;
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static struct rec *rec_at(struct recq *q, size_t i)
{
	return &q->r[(q->head + i) % q->cap];
}

static void ring_push(struct recq *q, const struct rec *r)
{
	if (q->n == q->cap) {
		size_t ncap = q->cap ? 2 * q->cap : 64;
		struct rec *nr = xmalloc(ncap * sizeof(*nr));

		for (size_t i = 0; i < q->n; i++)
			nr[i] = *rec_at(q, i);
		free(q->r);
		q->r = nr;
		q->cap = ncap;
		q->head = 0;
	}
	q->r[(q->head + q->n) % q->cap] = *r;
	q->n++;
	q->st.records++;
	q->st.bytes += RECQ_HDR + r->len;
	q->st.items += r->count;
}

static void seg_name(char dst[32], uint64_t seg)
{
	snprintf(dst, 32, "%020" PRIu64 ".seg", seg);
}

/* Write DIR/head: the oldest record still queued (or where the next append goes). */
static int head_write(struct recq *q)
{
	char line[64];
	uint64_t seg = q->n ? rec_at(q, 0)->seg : q->wseg, off = q->n ? rec_at(q, 0)->off : q->woff;
	int fd, n, rc = 0;

	n = snprintf(line, sizeof(line), "%" PRIu64 " %" PRIu64 "\n", seg, off);
	/* O_NONBLOCK: a FIFO put there fails (ENXIO) instead of blocking the sink. */
	fd = openat(q->dirfd, "head.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0600);
	if (fd < 0)
		return -errno;
	if (write_all(fd, line, (size_t)n) || (q->o.fsync == RECQ_FSYNC_ALWAYS && fsync(fd)))
		rc = -errno;
	close(fd);
	if (!rc && renameat(q->dirfd, "head.tmp", q->dirfd, "head"))
		rc = -errno;
	if (!rc && q->o.fsync == RECQ_FSYNC_ALWAYS)
		fsync(q->dirfd);
	return rc;
}

/* Delete segments older than the oldest queued record (and the write segment). */
static void seg_gc(struct recq *q, uint64_t before_seg, uint64_t from_seg)
{
	char name[32];

	for (uint64_t s = from_seg; s < before_seg; s++) {
		seg_name(name, s);
		if (unlinkat(q->dirfd, name, 0) && errno != ENOENT)
			log_warn("%s: queue: cannot delete %s/%s: %s", q->o.tag, q->dir, name, strerror(errno));
	}
}

/* Drop the oldest record (acknowledged, or pushed out). */
static void pop_front(struct recq *q)
{
	struct rec *r = rec_at(q, 0);
	uint64_t seg = r->seg;

	q->st.records--;
	q->st.bytes -= RECQ_HDR + r->len;
	q->st.items -= r->count;
	free(r->mem);
	q->head = (q->head + 1) % q->cap;
	q->n--;
	if (q->dir) {
		uint64_t next = q->n ? rec_at(q, 0)->seg : q->wseg;

		if (next > seg)
			seg_gc(q, next, seg);
	}
}

/* Start a new segment for appends; on failure the write segment stays what it was, closed. */
static int seg_roll(struct recq *q)
{
	char name[32];

	if (q->wfd >= 0)
		close(q->wfd);
	seg_name(name, q->wseg + 1);
	q->wfd = openat(q->dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0600);
	if (q->wfd < 0)
		return -errno;
	q->wseg++;
	q->woff = 0;
	if (q->o.fsync == RECQ_FSYNC_ALWAYS)
		fsync(q->dirfd);
	return 0;
}

/*
 * Append one record to the write segment (rolling to a new one first when
 * it is full or none is open). A write cut short is cut off again, so the
 * segment ends with a whole record and the next append goes on there: a
 * full disk leaves no empty segment per failed append. 0 or -errno.
 */
static int seg_append(struct recq *q, const void *data, size_t len, uint32_t count)
{
	unsigned char hdr[RECQ_HDR];
	struct iovec iov[2] = { { hdr, sizeof(hdr) }, { (void *)data, len } };
	size_t need = RECQ_HDR + len;
	ssize_t w;
	int rc;

	if ((q->woff >= q->o.segment_bytes || q->wfd < 0) && (rc = seg_roll(q)))
		return rc;
	put32(hdr, (uint32_t)len);
	put32(hdr + 4, count);
	put32(hdr + 8, recq_crc(count, data, len));
	w = writev(q->wfd, iov, 2);
	if (w == (ssize_t)need)
		return 0;
	rc = w < 0 ? -errno : -ENOSPC;
	/* A partial record would read as a corrupt tail: cut it off (or, when that fails, append elsewhere). */
	if (w > 0 && ftruncate(q->wfd, (off_t)q->woff)) {
		log_warn("%s: queue: cannot truncate the segment: %s", q->o.tag, strerror(errno));
		q->woff = q->o.segment_bytes;
	}
	return rc;
}

/* recq_push without its message. */
static int push_record(struct recq *q, const void *data, size_t len, uint32_t count, uint64_t *dropped)
{
	struct rec r = { 0 };
	uint64_t need = RECQ_HDR + (uint64_t)len;
	int rc;

	if (dropped)
		*dropped = 0;
	if (len > RECQ_RECORD_MAX || need > q->o.max_bytes) {
		q->st.dropped_records++;
		q->st.dropped_items += count;
		if (dropped)
			*dropped = count;
		return 0;
	}
	if (q->n && q->st.bytes + need > q->o.max_bytes) {
		while (q->n && q->st.bytes + need > q->o.max_bytes) {
			q->st.dropped_records++;
			q->st.dropped_items += rec_at(q, 0)->count;
			if (dropped)
				*dropped += rec_at(q, 0)->count;
			pop_front(q);
		}
		/* A restart must not bring the dropped records back. */
		if (q->dir)
			head_write(q);
	}
	r.len = (uint32_t)len;
	r.count = count;
	r.id = ++q->next_id;
	if (!q->dir) {
		r.mem = xmalloc(len ? len : 1);
		memcpy(r.mem, data, len);
	} else {
		/* Where it goes; a batch kept in memory keeps the place it would have taken. */
		r.seg = q->wseg;
		r.off = q->woff;
		if ((rc = seg_append(q, data, len, count))) {
			log_limited(&q->lim_append,
				    "%s: queue: cannot append to %s: %s; the batch (%u %s) stays in memory "
				    "only, as do the next ones until appends work again", q->o.tag,
				    q->dir, strerror(-rc), count, q->o.unit);
			q->failing_records++;
			q->failing_items += count;
			r.mem = xmalloc(len ? len : 1);
			memcpy(r.mem, data, len);
		} else {
			if (q->failing_records) {
				log_warn("%s: queue: appends to %s work again; %" PRIu64 " batches (%" PRIu64
					 " %s) were kept in memory only meanwhile", q->o.tag,
					 q->dir, q->failing_records, q->failing_items, q->o.unit);
				q->failing_records = q->failing_items = 0;
				memset(&q->lim_append, 0, sizeof(q->lim_append));
			}
			if (q->o.fsync == RECQ_FSYNC_ALWAYS)
				fdatasync(q->wfd);
			r.seg = q->wseg; /* a new segment, perhaps */
			r.off = q->woff;
			q->woff += need;
		}
	}
	ring_push(q, &r);
	return 0;
}

int recq_push(struct recq *q, const void *data, size_t len, uint32_t count, uint64_t *dropped)
{
	uint64_t d = 0;
	int rc = push_record(q, data, len, count, &d);

	if (d)
		log_limited(&q->lim_full,
			    "%s: the queue is full (--queue-max-bytes %" PRIu64 "): dropped the oldest %" PRIu64
			    " %s (%" PRIu64 " dropped since the start)",
			    q->o.tag, q->o.max_bytes, d, q->o.unit, q->st.dropped_items);
	if (dropped)
		*dropped = d;
	return rc;
}

int recq_peek(struct recq *q, struct buf *out, uint32_t *count, uint64_t *id)
{
	struct rec *r;
	int rc;

	buf_reset(out);
	if (!q->n)
		return 0;
	r = rec_at(q, 0);
	if ((rc = buf_reserve(out, (size_t)r->len + 1)))
		return rc;
	if (r->mem) {
		memcpy(out->data, r->mem, r->len);
	} else {
		char name[32];
		unsigned char hdr[RECQ_HDR];
		int fd;
		ssize_t got = -1;

		seg_name(name, r->seg);
		fd = openat(q->dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			got = pread(fd, hdr, sizeof(hdr), (off_t)r->off);
			if (got == (ssize_t)sizeof(hdr))
				got = pread(fd, out->data, r->len, (off_t)(r->off + RECQ_HDR));
			close(fd);
		}
		if (got != (ssize_t)r->len || get32(hdr) != r->len ||
		    get32(hdr + 8) != recq_crc(r->count, out->data, r->len)) {
			log_err("%s: queue: %s/%s at offset %" PRIu64 ": the record no longer reads back; "
				"dropping its %u %s", q->o.tag,
				q->dir, name, r->off, r->count, q->o.unit);
			q->st.corrupt_bytes += RECQ_HDR + r->len;
			q->st.dropped_items += r->count;
			pop_front(q);
			head_write(q);
			return -EIO;
		}
	}
	out->len = r->len;
	*count = r->count;
	*id = r->id;
	return 1;
}

int recq_ack(struct recq *q, uint64_t id)
{
	if (!q->n || rec_at(q, 0)->id != id)
		return 0;
	pop_front(q);
	return q->dir ? head_write(q) : 0;
}

void recq_stats(const struct recq *q, struct recq_stats *st)
{
	*st = q->st;
}

/* ---- opening a directory ------------------------------------------------------------ */

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The segment numbers in the directory, sorted. */
static int list_segments(struct recq *q, uint64_t **segs, size_t *n)
{
	int fd = dup(q->dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	size_t a = 0;

	*segs = NULL;
	*n = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		char *end;
		unsigned long long v;

		if (strlen(de->d_name) != 24 || strcmp(de->d_name + 20, ".seg"))
			continue;
		errno = 0;
		v = strtoull(de->d_name, &end, 10);
		if (errno || end != de->d_name + 20)
			continue;
		if (*n == a) {
			a = a ? 2 * a : 16;
			*segs = xrealloc(*segs, a * sizeof(**segs));
		}
		(*segs)[(*n)++] = v;
	}
	closedir(d);
	if (*n)
		qsort(*segs, *n, sizeof(**segs), u64_cmp);
	return 0;
}

/*
 * Read the records of one segment from off on into the index.
 *
 * In the last segment a record cut short or failing its checksum ends the
 * segment: that is what a crash in the middle of an append leaves, and the
 * tail is counted and truncated away. Appends never go on in an older
 * segment after a restart, so there the same finding is corruption (the
 * disk, the filesystem or another program changed the file): a whole
 * record failing its checksum is skipped and the scan goes on after it; a
 * length that cannot be right ends the segment. Either way one message per
 * segment says what, where, and what was dropped.
 */
static void seg_scan(struct recq *q, uint64_t seg, uint64_t off, int last)
{
	char name[32];
	int fd;
	struct stat sb;
	struct buf data;
	const char *bad = NULL;                /* the first corruption found in an older segment */
	uint64_t bad_off = 0, bad_recs = 0, bad_items = 0, bad_bytes = 0, good = 0;

	seg_name(name, seg);
	/* O_NONBLOCK: a FIFO by that name must not block the start. */
	fd = openat(q->dirfd, name, (last ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &sb)) {
		log_err("%s: queue: cannot read %s/%s: %s; its records are lost", q->o.tag, q->dir, name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	if (!S_ISREG(sb.st_mode)) {
		log_err("%s: queue: %s/%s is not a regular file; skipped", q->o.tag, q->dir, name);
		close(fd);
		return;
	}
	buf_init(&data, (size_t)RECQ_RECORD_MAX + 1);
	while (off < (uint64_t)sb.st_size) {
		unsigned char hdr[RECQ_HDR];
		const char *why = NULL;
		int whole = 0; /* the record's extent is known: it can be skipped */
		uint32_t len = 0, ns = 0;
		struct rec r = { 0 };

		if ((uint64_t)sb.st_size - off < RECQ_HDR ||
		    pread(fd, hdr, sizeof(hdr), (off_t)off) != (ssize_t)sizeof(hdr)) {
			why = "a record header cut short";
		} else {
			len = get32(hdr);
			ns = get32(hdr + 4);
			if (len > RECQ_RECORD_MAX)
				why = "a record length out of range";
			else if ((uint64_t)sb.st_size - off - RECQ_HDR < len)
				why = "a record cut short";
			else if (buf_reserve(&data, (size_t)len + 1) ||
				 pread(fd, data.data, len, (off_t)(off + RECQ_HDR)) != (ssize_t)len)
				why = "a record that cannot be read";
			else if ((whole = get32(hdr + 8) != recq_crc(ns, data.data, len)))
				why = "a checksum mismatch";
		}
		if (why && last) {
			uint64_t lost = (uint64_t)sb.st_size - off;

			q->st.corrupt_bytes += lost;
			log_warn("%s: queue: %s/%s: %s at offset %" PRIu64 "; dropping the %" PRIu64
				 " bytes from there (a crash in the middle of a write leaves this), replaying the rest", q->o.tag,
				 q->dir, name, why, off, lost);
			if (ftruncate(fd, (off_t)off))
				log_warn("%s: queue: cannot truncate %s/%s: %s", q->o.tag, q->dir, name, strerror(errno));
			sb.st_size = (off_t)off;
			break;
		}
		if (why) {
			uint64_t lost = whole ? RECQ_HDR + (uint64_t)len : (uint64_t)sb.st_size - off;

			if (!bad) {
				bad = why;
				bad_off = off;
			}
			bad_bytes += lost;
			if (whole) {
				bad_recs++;
				bad_items += ns;
			}
			q->st.corrupt_bytes += lost;
			q->st.dropped_items += whole ? ns : 0;
			off += lost;
			continue;
		}
		r.seg = seg;
		r.off = off;
		r.len = len;
		r.count = ns;
		r.id = ++q->next_id;
		ring_push(q, &r);
		q->st.replayed_records++;
		q->st.replayed_items += ns;
		off += RECQ_HDR + len;
		good++;
	}
	if (bad)
		log_err("%s: queue: %s/%s is corrupt (no crash leaves this in a segment before the last: the "
			"disk, the filesystem or another program changed it): %s at offset %" PRIu64 "; dropped %" PRIu64
			" bytes (%" PRIu64 " records failing their checksum, %" PRIu64 " %s), replaying the segment's "
			"other %" PRIu64 " records and the segments after it", q->o.tag,
			q->dir, name, bad, bad_off, bad_bytes, bad_recs, bad_items, q->o.unit, good);
	buf_free(&data);
	close(fd);
	if (last) {
		q->wseg = seg;
		q->woff = (uint64_t)sb.st_size;
	}
}

/*
 * Read DIR/head into *hseg, *hoff: where the oldest record not yet
 * acknowledged is (0 0, every segment, when there is no head). A head that
 * cannot be right (not "SEGMENT OFFSET", a segment past the newest, an
 * offset past its segment's end) replays every segment, with a warning:
 * sending some records twice beats losing the queue. A head that is not a
 * regular file (a FIFO would block the start) is an error. 0 or -errno
 * with err filled.
 */
static int head_read(struct recq *q, const uint64_t *segs, size_t nseg, uint64_t *hseg, uint64_t *hoff,
		     char *err, size_t errsz)
{
	size_t plen = strlen(q->dir) + sizeof("/head");
	char *path = xmalloc(plen), line[64];
	unsigned long long a, b;
	const char *why = NULL;
	struct stat sb;
	char name[32];
	ssize_t n;

	*hseg = *hoff = 0;
	snprintf(path, plen, "%s/head", q->dir);
	n = read_regular_file(path, line, sizeof(line));
	if (n == -EINVAL || n == -EISDIR) {
		snprintf(err, errsz, "--queue-dir %s: %s is %s, not a regular file: remove it (every segment is then "
			 "sent again)", q->dir, path, file_kind_name(path));
		free(path);
		return (int)n;
	}
	free(path);
	if (n == -ENOENT)
		return 0;
	if (n < 0) {
		log_warn("%s: queue: cannot read %s/head: %s; replaying every segment", q->o.tag, q->dir,
			 strerror((int)-n));
		return 0;
	}
	if (sscanf(line, "%llu %llu", &a, &b) != 2) {
		why = "is not \"SEGMENT OFFSET\"";
	} else if (nseg && a > segs[nseg - 1]) {
		why = "names a segment past the newest";
	} else {
		uint64_t key = a;

		seg_name(name, key);
		if (bsearch(&key, segs, nseg, sizeof(*segs), u64_cmp) && fstatat(q->dirfd, name, &sb, 0) == 0 &&
		    b > (uint64_t)sb.st_size)
			why = "names an offset past its segment's end";
	}
	if (why) {
		log_warn("%s: queue: %s/head %s (\"%.*s\"); replaying every segment", q->o.tag, q->dir, why,
			 (int)strcspn(line, "\n"), line);
		return 0;
	}
	*hseg = a;
	*hoff = b;
	return 0;
}

static int open_dir(struct recq *q, char *err, size_t errsz)
{
	uint64_t *segs = NULL, hseg = 0, hoff = 0;
	size_t nseg = 0;
	int rc;

	if (mkdir(q->dir, 0700) && errno != EEXIST) {
		rc = -errno;
		snprintf(err, errsz, "--queue-dir %s: cannot create it: %s", q->dir, strerror(errno));
		return rc;
	}
	q->dirfd = open(q->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (q->dirfd < 0) {
		rc = -errno;
		snprintf(err, errsz, "--queue-dir %s: %s", q->dir, strerror(errno));
		return rc;
	}
	/* One process per directory: a second one would append to the same segments. */
	q->lockfd = openat(q->dirfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (q->lockfd < 0 || flock(q->lockfd, LOCK_EX | LOCK_NB)) {
		rc = -errno;
		snprintf(err, errsz, "--queue-dir %s: %s", q->dir,
			 errno == EWOULDBLOCK ? "in use by another process (another accel-monitor sink?)" : strerror(errno));
		return rc;
	}
	if ((rc = list_segments(q, &segs, &nseg))) {
		snprintf(err, errsz, "--queue-dir %s: cannot list it: %s", q->dir, strerror(-rc));
		return rc;
	}
	if ((rc = head_read(q, segs, nseg, &hseg, &hoff, err, errsz))) {
		free(segs);
		return rc;
	}
	for (size_t i = 0; i < nseg; i++) {
		if (segs[i] < hseg) {
			seg_gc(q, segs[i] + 1, segs[i]); /* acknowledged before the restart */
			continue;
		}
		seg_scan(q, segs[i], segs[i] == hseg ? hoff : 0, i + 1 == nseg);
	}
	/* Appends go to a new segment: the old ones are only read from now on. */
	q->wseg = nseg && segs[nseg - 1] > hseg ? segs[nseg - 1] : hseg;
	q->woff = 0;
	if (nseg && segs[nseg - 1] == q->wseg) {
		struct stat sb;
		char name[32];

		seg_name(name, q->wseg);
		if (fstatat(q->dirfd, name, &sb, 0) == 0)
			q->woff = (uint64_t)sb.st_size;
	} else if (q->wseg == hseg) {
		q->woff = hoff;
	}
	q->wfd = -1;
	free(segs);
	if (q->st.replayed_records)
		log_info("%s: queue: %s: %" PRIu64 " requests (%" PRIu64 " %s) to send again", q->o.tag,
			 q->dir, q->st.replayed_records, q->st.replayed_items, q->o.unit);
	return 0;
}

int recq_open(const struct recq_opts *o, struct recq **qp, char *err, size_t errsz)
{
	struct recq *q = xcalloc(1, sizeof(*q));
	int rc;

	q->o = *o;
	if (!q->o.tag)
		q->o.tag = "recq";
	if (!q->o.unit)
		q->o.unit = "items";
	q->dirfd = -1;
	q->lockfd = -1;
	q->wfd = -1;
	if (!q->o.segment_bytes) {
		q->o.segment_bytes = q->o.max_bytes / 8;
		if (q->o.segment_bytes < (64u << 10))
			q->o.segment_bytes = 64u << 10;
	}
	if (o->dir) {
		q->dir = xstrdup(o->dir);
		if ((rc = open_dir(q, err, errsz))) {
			recq_close(q);
			return rc;
		}
		/* The oldest replayed records go first when they do not all fit. */
		while (q->n && q->st.bytes > q->o.max_bytes) {
			q->st.dropped_records++;
			q->st.dropped_items += rec_at(q, 0)->count;
			pop_front(q);
		}
		if (q->st.dropped_records)
			log_warn("%s: queue: %s holds more than --queue-max-bytes: dropped the oldest %" PRIu64
				 " requests (%" PRIu64 " %s)", q->o.tag,
				 q->dir, q->st.dropped_records, q->st.dropped_items, q->o.unit);
	}
	*qp = q;
	return 0;
}

void recq_close(struct recq *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->n; i++)
		free(rec_at(q, i)->mem);
	free(q->r);
	if (q->wfd >= 0)
		close(q->wfd);
	if (q->dirfd >= 0)
		close(q->dirfd);
	if (q->lockfd >= 0)
		close(q->lockfd);
	free(q->dir);
	free(q);
}
