/* SPDX-License-Identifier: MIT */
/* Allocation, capped buffers and small-file I/O; see util.h. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

static void oom(size_t n)
{
	fprintf(stderr, "out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		oom(n);
	return q;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xmalloc(n), s, n);
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *s;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom(0);
	s = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

void buf_init(struct buf *b, size_t cap)
{
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->cap = cap;
}

static int buf_grow(struct buf *b, size_t need)
{
	size_t n;

	if (need > b->cap)
		return -ENOSPC;
	if (need + 1 <= b->alloc)
		return 0;
	n = b->alloc ? b->alloc : 256;
	while (n < need + 1)
		n *= 2;
	if (n > b->cap + 1)
		n = b->cap + 1;
	b->data = xrealloc(b->data, n);
	b->alloc = n;
	return 0;
}

int buf_reserve(struct buf *b, size_t n)
{
	return n > b->cap - b->len ? -ENOSPC : buf_grow(b, b->len + n);
}

int buf_add(struct buf *b, const void *p, size_t n)
{
	int rc = buf_grow(b, b->len + n);

	if (rc)
		return rc;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	rc = buf_grow(b, b->len + (size_t)n);
	if (rc)
		return rc;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void buf_free(struct buf *b)
{
	free(b->data);
	buf_init(b, b->cap);
}

ssize_t read_fd_all(int fd, char *dst, size_t size)
{
	int err;
	size_t len = 0;
	ssize_t n;

	for (;;) {
		char probe;
		int full = len + 1 >= size;

		/* When dst is full, one more byte tells EOF from "too big". */
		n = full ? read(fd, &probe, 1) : read(fd, dst + len, size - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			close(fd);
			return -err;
		}
		if (n == 0)
			break;
		if (full) {
			close(fd);
			return -EFBIG;
		}
		len += (size_t)n;
	}
	close(fd);
	dst[len] = '\0';
	return (ssize_t)len;
}

ssize_t read_file_at(int dirfd, const char *path, char *dst, size_t size)
{
	int fd = dirfd >= 0 ? openat(dirfd, path, O_RDONLY | O_CLOEXEC) : open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return read_fd_all(fd, dst, size);
}

ssize_t read_kept_file(int fd, int check_links, char *dst, size_t size)
{
	struct stat st;
	ssize_t n;

	do
		n = pread(fd, dst, size - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n >= size - 1)
		return -EFBIG;
	if (check_links && (fstat(fd, &st) || !st.st_nlink))
		return -ENOENT;
	dst[n] = '\0';
	return n;
}

int open_kept(int dirfd, const char *path)
{
	int fd = openat(dirfd >= 0 ? dirfd : AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOATIME);

	if (fd < 0 && errno == EPERM) /* neither the owner nor CAP_FOWNER */
		fd = openat(dirfd >= 0 ? dirfd : AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	return fd;
}

int inotify_drain(int fd, void (*each)(void *ud, int wd, uint32_t mask), void *ud)
{
	char ev[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int got = 0;
	ssize_t n;

	while ((n = read(fd, ev, sizeof(ev))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? got : -errno;
		}
		for (ssize_t off = 0; off < n; got++) {
			const struct inotify_event *e = (const struct inotify_event *)(const void *)(ev + off);

			off += (ssize_t)(sizeof(*e) + e->len);
			each(ud, e->mask & IN_Q_OVERFLOW ? -1 : e->wd, e->mask);
		}
	}
	return got;
}

int on_kernel_fs(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf))
		return 0;
	return sf.f_type == PROC_SUPER_MAGIC || sf.f_type == SYSFS_MAGIC || sf.f_type == CGROUP_SUPER_MAGIC ||
	       sf.f_type == CGROUP2_SUPER_MAGIC;
}

int open_regular(const char *path, int flags)
{
	struct stat st;
	int fd, e;

	/* O_NONBLOCK: opening a FIFO for reading must not wait for a writer. */
	fd = open(path, flags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		e = errno;
		close(fd);
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	if (!(flags & O_NONBLOCK))
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

ssize_t read_regular_file(const char *path, char *dst, size_t size)
{
	int fd = open_regular(path, O_RDONLY);

	if (fd < 0)
		return fd;
	return read_fd_all(fd, dst, size);
}

const char *file_kind_name(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return lstat(path, &st) == 0 ? "a dangling symbolic link" : "missing";
	if (S_ISREG(st.st_mode))
		return "a regular file";
	if (S_ISDIR(st.st_mode))
		return "a directory";
	if (S_ISFIFO(st.st_mode))
		return "a FIFO";
	if (S_ISSOCK(st.st_mode))
		return "a socket";
	if (S_ISCHR(st.st_mode))
		return "a character device";
	if (S_ISBLK(st.st_mode))
		return "a block device";
	return "not a regular file";
}

size_t utf8_char(const char *str, uint32_t *cpp)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n, i;
	uint32_t cp;

	if (s[0] < 0x80) {
		*cpp = s[0];
		return 1;
	}
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		n = 2, cp = s[0] & 0x1Fu;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		n = 3, cp = s[0] & 0x0Fu;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		n = 4, cp = s[0] & 0x07u;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3Fu);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	*cpp = cp;
	return n;
}

char *utf8_sanitize(char *s)
{
	unsigned char *p = (unsigned char *)s;

	while (*p) {
		uint32_t cp;
		size_t n = utf8_char((const char *)p, &cp);

		if (n == 0)
			*p++ = '?';
		else
			p += n;
	}
	return s;
}

int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	ssize_t w;

	while (n > 0) {
		w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

uint64_t hash_bytes(uint64_t h, const void *data, size_t n)
{
	const char *p = data;
	uint64_t w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, p, n);
	return (h ^ w ^ n) * 0x9e3779b97f4a7c15ull;
}

void u64sum_add(struct u64sum *s, uint64_t v)
{
	if (s->big) {
		s->over += (double)v;
	} else if (v > UINT64_MAX - s->v) { /* past 2^64: a real, never a wrapped sum */
		s->big = 1;
		s->over = (double)s->v + (double)v;
	} else {
		s->v += v;
	}
}

void node_name(char *dst, size_t size)
{
	const char *k = getenv("KUBE_NODE_NAME");

	if (!k || !*k)
		k = getenv("NODE_NAME"); /* the downward API's usual name */
	if (k && *k) {
		snprintf(dst, size, "%s", k);
		return;
	}
	if (gethostname(dst, size) != 0)
		snprintf(dst, size, "localhost");
	dst[size - 1] = '\0';
}

size_t double_text(double v, char dst[32])
{
	int n = 0;

	if (isnan(v))
		return (size_t)snprintf(dst, 32, "NaN");
	if (isinf(v))
		return (size_t)snprintf(dst, 32, "%s", v > 0 ? "+Inf" : "-Inf");
	if (v == 0)
		return (size_t)snprintf(dst, 32, "0"); /* -0 too */
	if (v == trunc(v) && fabs(v) < 9.2e18)
		return (size_t)snprintf(dst, 32, "%lld", (long long)v);
	for (int p = 15; p <= 17; p++) {
		n = snprintf(dst, 32, "%.*g", p, v);
		if (strtod(dst, NULL) == v)
			break;
	}
	return (size_t)n;
}
