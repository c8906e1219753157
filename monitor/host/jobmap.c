/* SPDX-License-Identifier: MIT */
/*
 * HPC job mapping; see jobmap.h for the format, its rules and what it
 * costs. A refresh builds a new table from the directory and swaps it in;
 * a file that cannot be read takes its entry from the table it replaces.
 */
#include "jobmap.h"
#include "../../common/hindex.h"
#include "../../common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#define JM_ERR_MAX 512

/* One GPU's or MIG device's jobs. */
struct jm_entry {
	int gpu, gi;  /* index; GPU instance id, -1 for the whole GPU */
	char **ids;   /* owned, each owned */
	size_t n;
};

struct jm_table {
	struct jm_entry *e; /* sorted by gpu, then gi */
	size_t n, cap;
};

struct jobmap {
	char *dir;               /* owned */
	struct jm_table t;       /* the last good table */
	int ino_fd;              /* inotify; -1: none yet (or none to be had) */
	int watched;             /* ino_fd watches dir */
	int clean;               /* the last read had no error and nothing changed since, as far as the watch says */
	char *buf;               /* one file's text: JOBMAP_MAX_FILE_BYTES + 1 */
	char err[JM_ERR_MAX];    /* the last refresh's error; "" when none */
};

/* Events that say the directory's listing or a file's text may have changed. */
#define JM_EVENTS                                                                                                \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB |          \
	 IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

static void table_clear(struct jm_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		for (size_t k = 0; k < t->e[i].n; k++)
			free(t->e[i].ids[k]);
		free(t->e[i].ids);
	}
	free(t->e);
	memset(t, 0, sizeof(*t));
}

static int entry_cmp(const void *a, const void *b)
{
	const struct jm_entry *x = a, *y = b;

	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	return x->gi < y->gi ? -1 : x->gi > y->gi;
}

static const struct jm_entry *table_find(const struct jm_table *t, int gpu, int gi)
{
	const struct jm_entry key = { .gpu = gpu, .gi = gi };

	return t->n ? bsearch(&key, t->e, t->n, sizeof(*t->e), entry_cmp) : NULL;
}

/* Add gpu.gi's n ids (taken) to t; none: nothing added. */
static void table_add(struct jm_table *t, int gpu, int gi, char **ids, size_t n)
{
	if (!n) {
		free(ids);
		return;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->e = xrealloc(t->e, t->cap * sizeof(*t->e));
	}
	t->e[t->n++] = (struct jm_entry){ .gpu = gpu, .gi = gi, .ids = ids, .n = n };
}

/* ---- names and lines --------------------------------------------------------------------------------- */

/* A decimal number without a sign or a leading zero, up to INT_MAX, at *s up to stop: its length, or 0. */
static size_t number(const char *s, char stop, int *out)
{
	int64_t v = 0;
	size_t i = 0;

	for (; s[i] && s[i] != stop; i++) {
		if (s[i] < '0' || s[i] > '9' || (i == 1 && s[0] == '0'))
			return 0;
		v = v * 10 + (s[i] - '0');
		if (v > INT_MAX)
			return 0;
	}
	*out = (int)v;
	return i;
}

int jobmap_name(const char *name, int *gpu, int *gi)
{
	size_t a = number(name, '.', gpu), b;

	if (!a)
		return 0;
	*gi = -1;
	if (!name[a])
		return 1;
	b = number(name + a + 1, '\0', gi);
	return b > 0 && !name[a + 1 + b];
}

/* Is line s (n bytes) one job id? 0; or -EINVAL/-E2BIG with err "COLUMN: why". */
static int check_id(const char *s, size_t n, char *err, size_t errsz)
{
	uint32_t cp;

	if (n > JOBMAP_MAX_ID) {
		snprintf(err, errsz, "%d: a job id of %zu bytes, more than %d", JOBMAP_MAX_ID + 1, n, JOBMAP_MAX_ID);
		return -E2BIG;
	}
	for (size_t i = 0; i < n;) {
		size_t k = utf8_char(s + i, &cp);

		if (!k || i + k > n) {
			snprintf(err, errsz, "%zu: not UTF-8 (byte 0x%02x)", i + 1, (unsigned char)s[i]);
			return -EINVAL;
		}
		if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
			snprintf(err, errsz, "%zu: a control character (U+%04X) in a job id", i + 1, (unsigned)cp);
			return -EINVAL;
		}
		i += k;
	}
	return 0;
}

int jobmap_parse(const char *text, size_t len, char **ids, size_t *n, char *err, size_t errsz)
{
	size_t line = 0, pos = 0;
	struct hindex seen = { 0 }; /* ids[] by their text: a job listed again is found in O(1) */
	struct hindex_iter it;
	char why[160];
	int rc = 0;

	*n = 0;
	while (pos < len && !rc) {
		const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - s) : len - pos;
		uint64_t h;
		uint32_t k;

		pos += l + (nl != NULL);
		line++;
		if (l && s[l - 1] == '\r') /* one CR, as Go's bufio.ScanLines drops */
			l--;
		if (strspn(s, " ") >= l)
			continue; /* blank */
		rc = check_id(s, l, why, sizeof(why));
		if (rc) {
			snprintf(err, errsz, "%zu:%s", line, why);
			break;
		}
		h = hash_bytes(0, s, l);
		for (k = hindex_first(&seen, h, &it); k != HINDEX_NONE; k = hindex_next(&seen, h, &it))
			if (!strncmp(ids[k], s, l) && !ids[k][l])
				break;
		if (k != HINDEX_NONE)
			continue; /* listed already */
		if (*n == JOBMAP_MAX_JOBS) {
			snprintf(err, errsz, "%zu:1: more than %d jobs", line, JOBMAP_MAX_JOBS);
			rc = -E2BIG;
			break;
		}
		ids[*n] = xmalloc(l + 1);
		memcpy(ids[*n], s, l);
		ids[*n][l] = '\0';
		hindex_put(&seen, h, (uint32_t)(*n)++);
	}
	hindex_free(&seen);
	if (rc) {
		for (size_t i = 0; i < *n; i++)
			free(ids[i]);
		*n = 0;
	}
	return rc;
}

/* ---- reading the directory --------------------------------------------------------------------------- */

/* One refresh's reading: the table it builds, and its first error and how many files had one. */
struct jm_read {
	struct jobmap *jm;
	struct jm_table next;
	int rc;         /* the first file's error; 0: none */
	size_t nbad;    /* files with an error */
	char err[JM_ERR_MAX];
};

/* File name (of gpu.gi) could not be read: fmt says why; its entry is the last good table's. */
static void __attribute__((format(printf, 6, 7)))
file_bad(struct jm_read *r, const char *name, int gpu, int gi, int rc, const char *fmt, ...)
{
	const struct jm_entry *old = table_find(&r->jm->t, gpu, gi);
	char why[JM_ERR_MAX];
	va_list ap;

	if (!r->nbad++) {
		va_start(ap, fmt);
		vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
		snprintf(r->err, sizeof(r->err), "%s/%s%s%s", r->jm->dir, name, why[0] == ':' ? "" : ": ", why);
		r->rc = rc;
	}
	if (old) {
		char **ids = xmalloc(old->n * sizeof(*ids));

		for (size_t i = 0; i < old->n; i++)
			ids[i] = xstrdup(old->ids[i]);
		table_add(&r->next, gpu, gi, ids, old->n);
	}
}

/* Mapping file name (of gpu.gi) into r->next, or its error into r. */
static void read_one(struct jm_read *r, const char *name, int gpu, int gi)
{
	char path[PATH_MAX], why[JM_ERR_MAX - 64];
	char **ids;
	size_t n;
	ssize_t len;
	int fd, rc;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", r->jm->dir, name) >= sizeof(path)) {
		file_bad(r, name, gpu, gi, -ENAMETOOLONG, "%s", strerror(ENAMETOOLONG));
		return;
	}
	/* Never blocks (a FIFO) nor follows a link out of the directory: only a regular file is read. */
	fd = open_regular(path, O_RDONLY | O_NOFOLLOW);
	if (fd == -ENOENT || fd == -EISDIR)
		return; /* removed since the listing (no job); a directory is no GPU's file */
	if (fd == -ELOOP) {
		file_bad(r, name, gpu, gi, fd, "a symbolic link, not followed (mapping files must be regular files)");
		return;
	}
	if (fd == -EINVAL) {
		file_bad(r, name, gpu, gi, fd, "%s, not read (mapping files must be regular files)",
			 file_kind_name(path));
		return;
	}
	if (fd < 0) {
		file_bad(r, name, gpu, gi, fd, "%s", strerror(-fd));
		return;
	}
	len = read_fd_all(fd, r->jm->buf, JOBMAP_MAX_FILE_BYTES + 1); /* closes fd */
	if (len < 0) {
		if (len == -EFBIG)
			file_bad(r, name, gpu, gi, -EFBIG, "more than %d bytes, not read", JOBMAP_MAX_FILE_BYTES);
		else
			file_bad(r, name, gpu, gi, (int)len, "%s", strerror((int)-len));
		return;
	}
	ids = xmalloc(JOBMAP_MAX_JOBS * sizeof(*ids));
	rc = jobmap_parse(r->jm->buf, (size_t)len, ids, &n, why, sizeof(why));
	if (rc) {
		free(ids);
		file_bad(r, name, gpu, gi, rc, ":%s", why);
		return;
	}
	table_add(&r->next, gpu, gi, ids, n);
}

/* A mapping file found in the listing. */
struct jm_name {
	int gpu, gi;
	char *name; /* owned */
};

static int name_cmp(const void *a, const void *b)
{
	const struct jm_name *x = a, *y = b;

	return entry_cmp(&(struct jm_entry){ .gpu = x->gpu, .gi = x->gi }, &(struct jm_entry){ .gpu = y->gpu, .gi = y->gi });
}

/*
 * List jm's directory into names[0..*n) (room for JOBMAP_MAX_FILES): 0, or
 * -errno with jm->err set when it cannot be listed or is past the caps.
 */
static int list_dir(struct jobmap *jm, struct jm_name *names, size_t *n)
{
	DIR *d = opendir(jm->dir);
	struct dirent *de;
	size_t entries = 0;
	int gpu, gi, e;

	*n = 0;
	if (!d) {
		e = errno;
		snprintf(jm->err, sizeof(jm->err), "%s: %s", jm->dir, strerror(e));
		return -e;
	}
	errno = 0;
	while ((de = readdir(d))) {
		int mapping = jobmap_name(de->d_name, &gpu, &gi);

		if (++entries > JOBMAP_MAX_ENTRIES || (mapping && *n == JOBMAP_MAX_FILES)) {
			snprintf(jm->err, sizeof(jm->err), "%s: more than %d %s, not read", jm->dir,
				 mapping && *n == JOBMAP_MAX_FILES ? JOBMAP_MAX_FILES : JOBMAP_MAX_ENTRIES,
				 mapping && *n == JOBMAP_MAX_FILES ? "mapping files" : "entries");
			closedir(d);
			return -E2BIG;
		}
		if (mapping && de->d_type != DT_DIR) /* a directory is skipped, as dcgm-exporter does */
			names[(*n)++] = (struct jm_name){ .gpu = gpu, .gi = gi, .name = xstrdup(de->d_name) };
		errno = 0;
	}
	e = errno;
	closedir(d);
	if (e) {
		snprintf(jm->err, sizeof(jm->err), "%s: %s", jm->dir, strerror(e));
		return -e;
	}
	return 0;
}

/*
 * Read jm's mapping files into r, in the table's order (the first error
 * is the first file's, whatever order the directory lists them in). 0
 * (file errors in r), or -errno with jm->err set when the directory cannot
 * be read.
 */
static int read_dir(struct jobmap *jm, struct jm_read *r)
{
	struct jm_name *names = xmalloc(JOBMAP_MAX_FILES * sizeof(*names));
	size_t n;
	int rc = list_dir(jm, names, &n);

	if (!rc) {
		qsort(names, n, sizeof(*names), name_cmp);
		for (size_t i = 0; i < n; i++)
			read_one(r, names[i].name, names[i].gpu, names[i].gi);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i].name);
	free(names);
	return rc;
}

/* ---- the watch --------------------------------------------------------------------------------------- */

/* Drop the watch: a later refresh makes it again (on the directory now at jm->dir). */
static void unwatch(struct jobmap *jm)
{
	if (jm->ino_fd >= 0)
		close(jm->ino_fd);
	jm->ino_fd = -1;
	jm->watched = 0;
}

/* One event read (inotify_drain): one about the directory itself is remembered in *ud. */
static void on_event(void *ud, int wd, uint32_t mask)
{
	(void)wd;
	if (mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT))
		*(int *)ud = 1;
}

/*
 * Read every pending event: 1 when the directory may have changed since
 * the last read (an event, an overflowed queue, no watch), else 0. An
 * event about the directory itself (removed, moved) drops the watch.
 */
static int changed(struct jobmap *jm)
{
	int self = 0, n;

	if (!jm->watched)
		return 1;
	n = inotify_drain(jm->ino_fd, on_event, &self);
	if (n < 0 || self)
		unwatch(jm);
	return n != 0;
}

/* Watch jm->dir before it is listed, so that a change after the listing is an event. */
static void watch(struct jobmap *jm)
{
	if (jm->watched)
		return;
	if (jm->ino_fd < 0)
		jm->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	/* No watch (no directory yet, the user's limits): every refresh reads the directory. */
	jm->watched = jm->ino_fd >= 0 && inotify_add_watch(jm->ino_fd, jm->dir, JM_EVENTS) >= 0;
}

/* ---- the map ----------------------------------------------------------------------------------------- */

struct jobmap *jobmap_new(const char *dir)
{
	struct jobmap *jm = xcalloc(1, sizeof(*jm));

	jm->dir = xstrdup(dir);
	jm->ino_fd = -1;
	jm->buf = xmalloc(JOBMAP_MAX_FILE_BYTES + 1);
	return jm;
}

void jobmap_free(struct jobmap *jm)
{
	if (!jm)
		return;
	unwatch(jm);
	table_clear(&jm->t);
	free(jm->buf);
	free(jm->dir);
	free(jm);
}

int jobmap_refresh(struct jobmap *jm)
{
	struct jm_read r = { .jm = jm };
	int rc;

	if (!changed(jm) && jm->clean)
		return 0;
	jm->clean = 0;
	watch(jm);
	rc = read_dir(jm, &r);
	if (rc) {
		table_clear(&r.next); /* the last good table stays */
		return rc;
	}
	table_clear(&jm->t);
	jm->t = r.next;
	if (r.nbad > 1)
		snprintf(r.err + strlen(r.err), sizeof(r.err) - strlen(r.err), " (and %zu more file%s)", r.nbad - 1,
			 r.nbad > 2 ? "s" : "");
	memcpy(jm->err, r.err, sizeof(jm->err));
	jm->clean = !r.rc && jm->watched;
	return r.rc;
}

const char *jobmap_error(const struct jobmap *jm)
{
	return jm->err[0] ? jm->err : NULL;
}

const char *jobmap_dir(const struct jobmap *jm)
{
	return jm->dir;
}

const char *const *jobmap_lookup(const struct jobmap *jm, int gpu, int gi, size_t *n)
{
	const struct jm_entry *e = table_find(&jm->t, gpu, gi < 0 ? -1 : gi);

	*n = e ? e->n : 0;
	return e ? (const char *const *)e->ids : NULL;
}

size_t jobmap_size(const struct jobmap *jm)
{
	return jm->t.n;
}

const char *const *jobmap_at(const struct jobmap *jm, size_t i, int *gpu, int *gi, size_t *n)
{
	const struct jm_entry *e = &jm->t.e[i];

	*gpu = e->gpu;
	*gi = e->gi;
	*n = e->n;
	return (const char *const *)e->ids;
}
