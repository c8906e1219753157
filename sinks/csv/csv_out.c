/* SPDX-License-Identifier: MIT */
/* Output files with header checks, rotation and whole-batch appends; see csv_out.h. */
#include "csv_out.h"
#include "csv_format.h"
#include "../../common/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define HEADER_MAX (1u << 20) /* bytes: a longer first record is not a header we wrote */
#define WBUF_MAX (64u << 20)  /* bytes of a header we write */
#define MAX_TRIES 10000        /* files tried for one batch before giving up */
#define REPAIR_MAX (1u << 20)  /* bytes: a longer partial row at a file's end is refused, not cut */
#define SCAN_CHUNK (1u << 20)  /* bytes read at a time when checking a file's rows */

struct csv_out {
	struct csv_out_cfg cfg;
	int fd;                /* current output; -1: none open */
	int lockfd;            /* what flock(2) is taken on: the directory, or stdout; -1: none */
	char *prefix;          /* path up to and including the last '/', or "" */
	char *stem, *ext;      /* the rest of the -o name, split at its last dot */
	char date[11];         /* the current file's date under --rotate daily */
	unsigned long seq;     /* the current file's N (0: the unnumbered one) */
	int scanned;           /* seq is known for date */
	char *name;            /* the current file's path, or "stdout" */
	int regular;           /* fd is a regular file (its size and header can be checked) */
	int readable;          /* fd was opened for reading too */
	dev_t dev;
	ino_t ino;
	struct csv_index hdr;  /* the current file's columns, when hdr_known */
	int hdr_known;
	int hdr_mergeable;     /* hdr's fixed part matches the batches: a next file keeps its columns */
	off_t whole;           /* the current file is known to hold whole rows up to here (bytes) */
	uint64_t rows_file;    /* rows this run wrote to the current file */
	uint64_t rows_total;   /* rows this run wrote in all */
	struct buf fitted;     /* the columns of the last schema that fit hdr, NUL-separated */
	uint64_t hdr_gen;      /* bumped whenever hdr changes */
	uint64_t fitted_gen;   /* hdr_gen when fitted was recorded; 0: nothing recorded */
	struct buf wbuf;       /* the header a batch writes first, if any */
	const char *rows;      /* the batch's rows, rendered by its renderer (borrowed) */
	size_t rows_len;
};

static int need_scan(const struct csv_out *o)
{
	return o->cfg.path && (o->cfg.rotate != CSV_ROTATE_NONE || o->cfg.continuation);
}

int csv_out_open(struct csv_out **out, const struct csv_out_cfg *cfg)
{
	struct csv_out *o = xcalloc(1, sizeof(*o));
	const char *slash, *base, *dot;
	struct stat st;

	o->cfg = *cfg;
	o->fd = -1;
	o->lockfd = -1;
	buf_init(&o->wbuf, WBUF_MAX);
	buf_init(&o->fitted, WBUF_MAX);
	o->hdr_gen = 1;
	if (!cfg->path) {
		o->fd = STDOUT_FILENO;
		o->name = xstrdup("stdout");
		if (fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode)) {
			/* "accel-csv >> file": the same rules as -o file, without rotation. */
			o->regular = 1;
			o->lockfd = STDOUT_FILENO;
			o->dev = st.st_dev;
			o->ino = st.st_ino;
		}
		*out = o;
		return 0;
	}
	slash = strrchr(cfg->path, '/');
	base = slash ? slash + 1 : cfg->path;
	o->prefix = xasprintf("%.*s", (int)(base - cfg->path), cfg->path);
	dot = strrchr(base, '.');
	if (!dot || dot == base)
		dot = base + strlen(base);
	o->stem = xasprintf("%.*s", (int)(dot - base), base);
	o->ext = xstrdup(dot);
	{
		char *dir = *o->prefix ? xstrdup(o->prefix) : xstrdup(".");
		int e;

		o->lockfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		e = errno;
		if (o->lockfd < 0) {
			log_err("csv: %s: cannot open the directory of the output file: %s", dir, strerror(e));
			free(dir);
			csv_out_close(o);
			return -e;
		}
		free(dir);
	}
	*out = o;
	return 0;
}

uint64_t csv_out_rows(const struct csv_out *o)
{
	return o->rows_total;
}

/* ---- names ----------------------------------------------------------------- */

static char *file_name(const struct csv_out *o, const char *date, unsigned long seq)
{
	char num[24] = "";

	if (seq)
		snprintf(num, sizeof(num), ".%lu", seq);
	return xasprintf("%s%s%s%s%s%s", o->prefix, o->stem, *date ? "." : "", date, num, o->ext);
}

/* The highest N of the existing files STEM[.date][.N]EXT (0 when there are none). */
static unsigned long scan_seq(const struct csv_out *o, const char *date)
{
	char *dir = *o->prefix ? xstrdup(o->prefix) : xstrdup(".");
	char *head = xasprintf("%s%s%s", o->stem, *date ? "." : "", date);
	size_t hl = strlen(head), el = strlen(o->ext);
	unsigned long best = 0;
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		const char *n = de->d_name, *mid;
		size_t nl = strlen(n);
		unsigned long v = 0;
		size_t ml, i;

		if (nl < hl + el || strncmp(n, head, hl) || strcmp(n + nl - el, o->ext))
			continue;
		mid = n + hl;
		ml = nl - hl - el;
		/* "" is file 0; ".N" (N >= 1, no leading zero) is file N. */
		if (ml < 2 || mid[0] != '.' || mid[1] < '1' || mid[1] > '9')
			continue;
		for (i = 1; i < ml && mid[i] >= '0' && mid[i] <= '9' && v < 100000000; i++)
			v = v * 10 + (unsigned long)(mid[i] - '0');
		if (i == ml && v > best)
			best = v;
	}
	if (d)
		closedir(d);
	free(dir);
	free(head);
	return best;
}

static int exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* ---- the current file -------------------------------------------------------- */

static void close_current(struct csv_out *o)
{
	if (o->fd >= 0 && o->cfg.path)
		close(o->fd);
	o->fd = -1;
	o->hdr_known = 0; /* hdr still holds its columns: a next file may keep them (hdr_mergeable) */
	o->hdr_gen++;
	o->rows_file = 0;
	o->whole = 0;
}

/* Make name the open file (reopening it when it was removed or replaced). 0 or -errno (logged). */
static int open_file(struct csv_out *o, const char *name)
{
	struct stat st;
	int flags, existed, e;

	/* lstat: a link in the chain (x.9.csv -> elsewhere) is refused below, never followed or created. */
	existed = lstat(name, &st) == 0;
	if (o->fd >= 0 && !strcmp(o->name, name)) {
		if (existed && st.st_dev == o->dev && st.st_ino == o->ino)
			return 0;
		log_warn("csv: %s was removed or replaced while open; going on in a new %s", name, name);
	}
	close_current(o);
	free(o->name);
	o->name = xstrdup(name);
	/* A device or FIFO is written as a stream: no header check, no size. */
	flags = existed && !S_ISREG(st.st_mode) ? O_WRONLY | O_APPEND : O_RDWR | O_APPEND | O_CREAT;
	o->fd = -1;
	errno = ELOOP;
	if (!existed || !S_ISLNK(st.st_mode))
		o->fd = open(name, flags | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (o->fd < 0 && errno == EACCES && (flags & O_RDWR))
		o->fd = open(name, ((flags & ~O_RDWR) | O_WRONLY) | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (o->fd < 0 && errno == ELOOP) { /* O_NOFOLLOW's answer, also when the link appeared since lstat() */
		log_err("csv: %s is a symbolic link; accel-csv writes only files it can name without following a "
			"link (remove the link, or give -o the file it points to); %llu rows written by this run",
			name, (unsigned long long)o->rows_total);
		return -ELOOP;
	}
	if (o->fd < 0) {
		e = errno;
		log_err("csv: %s: cannot open: %s; %llu rows written by this run", name, strerror(e),
			(unsigned long long)o->rows_total);
		return -e;
	}
	o->readable = (fcntl(o->fd, F_GETFL) & O_ACCMODE) == O_RDWR;
	if (fstat(o->fd, &st)) {
		e = errno;
		log_err("csv: %s: %s", name, strerror(e));
		return -e;
	}
	o->regular = S_ISREG(st.st_mode);
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	if (!existed && o->cfg.fsync && o->lockfd >= 0)
		fsync(o->lockfd); /* the new directory entry */
	return 0;
}

/* A descriptor to read the current file with: o->fd when it was opened for reading, else a new one (-1: errno). */
static int reader(const struct csv_out *o)
{
	if (o->readable)
		return o->fd;
	return o->cfg.path ? open(o->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : open("/proc/self/fd/1", O_RDONLY | O_CLOEXEC);
}

/* Read the file's first record into o->hdr. 0, or -errno (logged). */
static int read_header(struct csv_out *o)
{
	int rfd = reader(o), e = 0, rc = 0;
	char *b = xmalloc(HEADER_MAX);
	size_t have = 0, used;
	struct csv_strv cols = { 0 };

	if (rfd < 0) {
		e = errno;
		log_err("csv: %s: cannot read its header to check it: %s; nothing written", o->name, strerror(e));
		free(b);
		return -e;
	}
	for (;;) {
		ssize_t n = pread(rfd, b + have, HEADER_MAX - have, (off_t)have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			log_err("csv: %s: cannot read its header: %s; nothing written", o->name, strerror(e));
			rc = -e;
			break;
		}
		have += (size_t)n;
		if (csv_parse_record(b, have, n == 0 || have == HEADER_MAX, &cols, &used) == 1)
			break;
	}
	if (rfd != o->fd)
		close(rfd);
	if (!rc) {
		csv_index_clear(&o->hdr);
		for (size_t i = 0; i < cols.n; i++)
			csv_index_add(&o->hdr, cols.v[i], strlen(cols.v[i]));
		o->hdr_known = 1;
		o->hdr_gen++;
	}
	csv_strv_free(&cols);
	free(b);
	return rc;
}

/*
 * Make sure the file (*size bytes) ends in a whole row before anything is
 * appended to it: a row glued to a partial last line (a crash, a
 * truncate(1), a header another tool wrote without its newline) would have
 * too many fields, and an unterminated quote would swallow every row after
 * it. The file is read from o->whole, where it was last known to end in a
 * whole row (0 when this run has not read it yet), so a file is read once
 * per run and then only what other writers appended.
 *
 * A file with no whole row at all that ends in a bare line is a header
 * written without its newline (one that fits the batch: this is called
 * only then, so a file that is refused is left as it is): the newline is
 * added. Otherwise a partial row of at most REPAIR_MAX bytes is
 * cut off, with a warning that says how many bytes; a longer one (an
 * unterminated quote far back) is not touched: -EBADMSG, logged as an
 * error, or as a note when next names the file the batch goes on in.
 * Called under the lock. 0 (*size updated), -EBADMSG, or -errno (logged).
 */
static int check_tail(struct csv_out *o, off_t *size, const char *next)
{
	struct csv_scan sc = { CSV_SCAN_FIELD };
	off_t pos, end;
	char *b;
	int rfd, rc = 0;
	uint64_t cut;

	if (*size == o->whole)
		return 0;
	if (*size < o->whole)
		o->whole = 0; /* cut back by someone else: read it again */
	rfd = reader(o);
	if (rfd < 0) {
		rc = -errno;
		log_err("csv: %s: cannot read it to check that it ends in a whole row: %s; nothing written", o->name,
			strerror(-rc));
		return rc;
	}
	b = xmalloc(SCAN_CHUNK);
	for (pos = end = o->whole; pos < *size;) {
		size_t want = (uint64_t)(*size - pos) < SCAN_CHUNK ? (size_t)(*size - pos) : SCAN_CHUNK;
		ssize_t n = pread(rfd, b, want, pos);
		long last;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			log_err("csv: %s: cannot read it to check that it ends in a whole row: %s; nothing written",
				o->name, n < 0 ? strerror(-rc) : "it is shorter than its size");
			goto out;
		}
		last = csv_scan_records(&sc, b, (size_t)n);
		if (last >= 0)
			end = pos + last;
		pos += n;
	}
	if (end == *size)
		goto whole;
	cut = (uint64_t)(*size - end);
	if (end == 0 && sc.state != CSV_SCAN_QUOTED && sc.state != CSV_SCAN_QUOTE && cut <= REPAIR_MAX) {
		/* One bare line and nothing else: a header without its newline. */
		if ((rc = write_all(o->fd, "\n", 1))) {
			log_err("csv: %s: cannot add the newline its header line lacks: %s; nothing written", o->name,
				strerror(-rc));
			goto out;
		}
		log_warn("csv: %s: its only line (%llu bytes) had no newline at its end; added one before appending",
			 o->name, (unsigned long long)cut);
		*size += 1;
		goto whole;
	}
	if (cut > REPAIR_MAX) {
		const char *what = sc.state == CSV_SCAN_QUOTED || sc.state == CSV_SCAN_QUOTE
					   ? "an unterminated quoted field"
					   : "a row without its newline";

		if (next)
			log_at(LOG_LVL_WARN, "note", "csv: %s does not end in a whole row: its last %llu bytes (from byte "
			       "%lld) are %s, more than accel-csv cuts off by itself; going on in %s",
			       o->name, (unsigned long long)cut, (long long)end, what, next);
		else
			log_err("csv: %s does not end in a whole row: its last %llu bytes (from byte %lld) are %s, more "
				"than accel-csv cuts off by itself; nothing written. Cut the file back to its last whole "
				"row, or use another file", o->name, (unsigned long long)cut, (long long)end, what);
		rc = -EBADMSG;
		goto out;
	}
	if (ftruncate(o->fd, end)) {
		rc = -errno;
		log_err("csv: %s ends in a partial row (%llu bytes) that cannot be cut off: %s; nothing written",
			o->name, (unsigned long long)cut, strerror(-rc));
		goto out;
	}
	log_warn("csv: %s ended in a partial row (a crash, or a copy cut short?): cut off its last %llu bytes, "
		 "back to its last whole row, before appending", o->name, (unsigned long long)cut);
	*size = end;
	/* The header may have gone with them. */
	o->hdr_known = 0;
	o->hdr_gen++;
whole:
	o->whole = *size;
out:
	if (rfd != o->fd)
		close(rfd);
	free(b);
	return rc;
}

enum fit { FIT_OK, FIT_NEW_COLUMNS, FIT_MISMATCH };

/* Is s the schema that last fitted the current header? (Reports mostly repeat their columns.) */
static int fitted_before(const struct csv_out *o, const struct csv_schema *s)
{
	const char *p = o->fitted.data, *end;

	if (o->fitted_gen != o->hdr_gen || !p)
		return 0;
	end = p + o->fitted.len; /* not before the check: NULL + 0 is undefined (found by fuzz_csv) */
	for (size_t i = 0; i < s->ncols; i++) {
		size_t n = strlen(s->cols[i]) + 1;

		if ((size_t)(end - p) < n || memcmp(p, s->cols[i], n))
			return 0;
		p += n;
	}
	return p == end;
}

static void remember_fit(struct csv_out *o, const struct csv_schema *s)
{
	buf_reset(&o->fitted);
	for (size_t i = 0; i < s->ncols; i++)
		if (buf_add(&o->fitted, s->cols[i], strlen(s->cols[i]) + 1))
			return; /* too long to remember: fit() every time */
	o->fitted_gen = o->hdr_gen;
}

/* Does the batch fit the file's header? *col: the first column that differs or is missing. */
static enum fit fit(const struct csv_out *o, const struct csv_schema *s, const char **col, const char **had)
{
	const struct csv_strv *h = &o->hdr.names;

	*had = NULL;
	for (size_t i = 0; i < s->nfixed; i++) {
		if (i >= h->n || strcmp(h->v[i], s->cols[i])) {
			*col = s->cols[i];
			*had = i < h->n ? h->v[i] : "";
			return FIT_MISMATCH;
		}
	}
	if (!s->open_ended) {
		if (h->n != s->ncols) {
			*col = h->n > s->ncols ? h->v[s->ncols] : s->cols[h->n];
			*had = h->n > s->ncols ? h->v[s->ncols] : "";
			return FIT_MISMATCH;
		}
		return FIT_OK;
	}
	for (size_t i = s->nfixed; i < s->ncols; i++) {
		long k = csv_index_find(&o->hdr, s->cols[i], strlen(s->cols[i]));

		if (k < (long)s->nfixed) {
			*col = s->cols[i];
			return FIT_NEW_COLUMNS;
		}
	}
	return FIT_OK;
}

/* The header a new file gets: the previous file's columns when they can be kept, then the batch's. */
static void new_header(struct csv_out *o, const struct csv_schema *s)
{
	if (!(s->open_ended && o->hdr_mergeable))
		csv_index_clear(&o->hdr);
	for (size_t i = 0; i < s->ncols; i++)
		csv_index_add(&o->hdr, s->cols[i], strlen(s->cols[i]));
	o->hdr_known = 1;
	o->hdr_mergeable = 1;
	o->hdr_gen++;
}

static int render_header(struct csv_out *o)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < o->hdr.names.n; i++) {
		if (i)
			rc = buf_add(&o->wbuf, ",", 1);
		if (!rc)
			rc = csv_name(&o->wbuf, o->hdr.names.v[i], strlen(o->hdr.names.v[i]));
	}
	return rc ? rc : buf_add(&o->wbuf, "\n", 1);
}

/* ---- writing ------------------------------------------------------------------ */

static int lock(struct csv_out *o, int op)
{
	if (o->lockfd < 0)
		return 0;
	while (flock(o->lockfd, op) < 0) {
		if (errno != EINTR) {
			int e = errno;

			log_err("csv: %s: cannot lock: %s", o->cfg.path ? o->cfg.path : "stdout", strerror(e));
			return -e;
		}
	}
	return 0;
}

/* Write the header (if any) and the rows with one writev(2); on failure cut a regular file back to size.
 * 0 or -errno (logged unless EPIPE). */
static int put(struct csv_out *o, const struct csv_batch *b, off_t size)
{
	struct iovec iov[2] = { { o->wbuf.data, o->wbuf.len }, { (void *)o->rows, o->rows_len } };
	struct iovec *v = iov;
	int nv = 2, e = 0;
	size_t done = 0;
	const char *what = "";

	while (nv > 0 && v->iov_len == 0) {
		v++;
		nv--;
	}
	while (nv > 0) {
		ssize_t w = writev(o->fd, v, nv);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			e = w < 0 ? errno : EIO;
			break;
		}
		done += (size_t)w;
		/* A short write: go on from where it stopped. */
		while (nv > 0 && (size_t)w >= v->iov_len) {
			w -= (ssize_t)v->iov_len;
			v++;
			nv--;
		}
		if (nv > 0) {
			v->iov_base = (char *)v->iov_base + w;
			v->iov_len -= (size_t)w;
		}
	}
	if (e == EPIPE)
		return -EPIPE;
	if (!e && o->cfg.fsync && fsync(o->fd) < 0 && errno != EINVAL && errno != EROFS) {
		e = errno;
		log_err("csv: %s: fsync failed: %s; the %zu rows of the report at %s may not be on disk; "
			"%llu rows written to %s by this run (%llu in all)",
			o->name, strerror(e), b->nrows, b->where, (unsigned long long)(o->rows_file + b->nrows),
			o->name, (unsigned long long)(o->rows_total + b->nrows));
		return -e;
	}
	if (!e) {
		o->rows_file += b->nrows;
		o->rows_total += b->nrows;
		if (o->regular && o->whole == size)
			o->whole = size + (off_t)(o->wbuf.len + o->rows_len);
		return 0;
	}
	if (o->regular && done > 0)
		what = ftruncate(o->fd, size) == 0 ? " (the file was cut back to its last whole row)"
						    : " (the file may end in a partial row: cutting it back failed)";
	else if (done > 0)
		what = " (part of them may have gone out)";
	log_err("csv: %s: write failed: %s; the %zu rows of the report at %s were not written%s; "
		"%llu rows written to %s by this run (%llu in all)",
		o->name, strerror(e), b->nrows, b->where, what, (unsigned long long)o->rows_file, o->name,
		(unsigned long long)o->rows_total);
	return -e;
}

/* For daily files: the file sequence starts afresh with the report's date. Then find the newest file. */
static void pick_seq(struct csv_out *o, const struct csv_batch *b)
{
	char date[11] = "";

	if (o->cfg.path && o->cfg.rotate == CSV_ROTATE_DAILY) {
		csv_date(b->report_ms, date);
		if (strcmp(date, o->date)) {
			memcpy(o->date, date, sizeof(date));
			o->scanned = 0;
		}
	}
	if (need_scan(o)) {
		char *next;

		if (!o->scanned)
			o->seq = scan_seq(o, o->date);
		o->scanned = 1;
		/* Another run may have gone on to a next file since. */
		while (next = file_name(o, o->date, o->seq + 1), exists(next)) {
			o->seq++;
			free(next);
		}
		free(next);
	}
}

/* What place() does next with the file it tried. */
enum step { STEP_NEXT, STEP_DONE, STEP_FAIL };

/*
 * The rows of b fit the open file, whose size is *size: it must end in a
 * whole row first, and with --rotate size the rows must fit under the
 * bound (they are rendered here then: *rendered). STEP_NEXT: try again
 * (with the next file, or the same one cut back to nothing); STEP_DONE with
 * *rc; STEP_FAIL: return *rc.
 */
static enum step fitted(struct csv_out *o, const struct csv_batch *b, off_t *size, int *rendered, int *rc)
{
	/* A file that is refused (header) is left as it is, so this comes after the header check. */
	if (o->regular) {
		int go_on = o->cfg.path && o->cfg.rotate != CSV_ROTATE_NONE;
		char *next = go_on ? file_name(o, o->date, o->seq + 1) : NULL;

		*rc = check_tail(o, size, next);
		free(next);
		if (*rc == -EBADMSG && go_on) {
			o->seq++;
			return STEP_NEXT;
		}
		if (*rc)
			return STEP_FAIL;
		if (*size == 0)
			return STEP_NEXT; /* cut back to nothing: it gets a header, as an empty file does */
	}
	*rc = 0;
	if (o->cfg.rotate == CSV_ROTATE_SIZE && *size > 0) {
		*rc = b->render(b->ud, (const char *const *)o->hdr.names.v, o->hdr.names.n, &o->rows, &o->rows_len);
		if (!*rc && (uint64_t)*size + o->rows_len > o->cfg.max_bytes) {
			o->seq++;
			return STEP_NEXT;
		}
		*rendered = 1;
	}
	return STEP_DONE;
}

/*
 * The rows of b do not fit the open file's header (f): go on in the next
 * file when the options allow it (STEP_NEXT), start a new block with a
 * wider header on a pipe or terminal (STEP_DONE with *rc), or refuse
 * (STEP_FAIL, *rc -EBADMSG, logged).
 */
static enum step unfit(struct csv_out *o, const struct csv_batch *b, enum fit f, const char *col, const char *had,
		       int *rc)
{
	if (o->cfg.path && (f == FIT_NEW_COLUMNS ? o->cfg.continuation : o->cfg.rotate != CSV_ROTATE_NONE)) {
		char *next = file_name(o, o->date, o->seq + 1);

		if (f == FIT_NEW_COLUMNS)
			log_at(LOG_LVL_WARN, "note", "csv: %s has no column \"%s\" (report at %s); going on in %s",
			       o->name, col, b->where, next);
		else
			log_at(LOG_LVL_WARN, "note",
			       "csv: %s: its header does not match (column \"%s\" where \"%s\" belongs); "
			       "going on in %s",
			       o->name, had, col, next);
		free(next);
		o->seq++;
		return STEP_NEXT;
	}
	if (!o->regular) {
		/* A pipe or terminal: a new block, after an empty line, with the wider header. */
		log_at(LOG_LVL_WARN, "note", "csv: %s: new column \"%s\" (report at %s): an empty line and a new "
		       "header follow", o->name, col, b->where);
		*rc = buf_add(&o->wbuf, "\n", 1);
		new_header(o, &b->schema);
		if (!*rc)
			*rc = render_header(o);
		return STEP_DONE;
	}
	if (f == FIT_NEW_COLUMNS)
		log_err("csv: %s has no column \"%s\" (report at %s) and cannot go on in another file; "
			"nothing written. Use -o FILE to let accel-csv continue in a new file",
			o->name, col, b->where);
	else
		log_err("csv: %s: its header does not match what this run writes (column \"%s\" where \"%s\" "
			"belongs); nothing written. Use another file, or --rotate to go on in a new one",
			o->name, had, col);
	*rc = -EBADMSG;
	return STEP_FAIL;
}

/*
 * Open the file of the current date and sequence (with -o) and read its
 * size into *size (0 for a pipe or terminal). 0, or -errno (logged).
 */
static int open_sized(struct csv_out *o, off_t *size)
{
	struct stat st;
	int rc;

	*size = 0;
	if (o->cfg.path) {
		char *name = file_name(o, o->date, o->seq);

		rc = open_file(o, name);
		free(name);
		if (rc)
			return rc;
	}
	if (o->regular) {
		if (fstat(o->fd, &st)) {
			rc = -errno;
			log_err("csv: %s: %s", o->name, strerror(-rc));
			return rc;
		}
		*size = st.st_size;
	}
	return 0;
}

/* Choose the file for b (under the lock) and fill wbuf. 0, or -errno (logged). */
static int place(struct csv_out *o, const struct csv_batch *b, off_t *size)
{
	const char *col = NULL, *had = NULL;
	int tries, rc = 0, rendered = 0;
	enum step step = STEP_NEXT;

	pick_seq(o, b);
	for (tries = 0; tries < MAX_TRIES && step == STEP_NEXT; tries++) {
		enum fit f;

		buf_reset(&o->wbuf);
		if ((rc = open_sized(o, size)))
			return rc;
		if (o->regular ? *size == 0 : !o->hdr_known) {
			new_header(o, &b->schema);
			rc = render_header(o);
			step = STEP_DONE;
			break;
		}
		if (!o->hdr_known && (rc = read_header(o)))
			return rc;
		if (fitted_before(o, &b->schema)) {
			f = FIT_OK;
		} else {
			f = fit(o, &b->schema, &col, &had);
			if (f == FIT_OK)
				remember_fit(o, &b->schema);
		}
		o->hdr_mergeable = f != FIT_MISMATCH;
		/* Rows go into this file when it fits: it must end in a whole row first. */
		step = f == FIT_OK ? fitted(o, b, size, &rendered, &rc) : unfit(o, b, f, col, had, &rc);
		if (step == STEP_FAIL)
			return rc;
	}
	if (step == STEP_NEXT) {
		log_err("csv: %s: no usable file after %d tries; nothing written", o->name, MAX_TRIES);
		return -EBADMSG;
	}
	if (!rc && !rendered)
		rc = b->render(b->ud, (const char *const *)o->hdr.names.v, o->hdr.names.n, &o->rows, &o->rows_len);
	if (rc)
		log_err("csv: the report at %s makes too much CSV (%s); not written", b->where, strerror(-rc));
	return rc;
}

int csv_out_write(struct csv_out *o, const struct csv_batch *b)
{
	sigset_t block, old;
	off_t size = 0;
	int rc;

	rc = lock(o, LOCK_EX);
	if (rc)
		return rc;
	/* A signal that ends the program waits until the batch is written whole. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	rc = place(o, b, &size);
	if (!rc)
		rc = put(o, b, size);
	sigprocmask(SIG_SETMASK, &old, NULL);
	lock(o, LOCK_UN);
	buf_reset(&o->wbuf);
	return rc;
}

int csv_out_close(struct csv_out *o)
{
	int rc = 0;

	if (!o)
		return 0;
	if (o->fd >= 0 && o->cfg.path && close(o->fd) < 0 && errno != EINTR) {
		rc = -errno;
		log_err("csv: %s: closing failed: %s; %llu rows written to it by this run may be incomplete", o->name,
			strerror(-rc), (unsigned long long)o->rows_file);
	}
	if (o->lockfd >= 0 && o->cfg.path)
		close(o->lockfd);
	csv_index_free(&o->hdr);
	buf_free(&o->wbuf);
	buf_free(&o->fitted);
	free(o->prefix);
	free(o->stem);
	free(o->ext);
	free(o->name);
	free(o);
	return rc;
}
