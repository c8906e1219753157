/* SPDX-License-Identifier: MIT */
/*
 * Small helpers shared by the producer and the sinks: allocation that
 * aborts on out-of-memory (only for small internal sizes; anything sized by
 * outside input has its own cap and a recoverable error), a growable byte
 * buffer with a hard cap, and whole-file reads for /proc and sysfs.
 */
#ifndef ACCEL_UTIL_H
#define ACCEL_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <string.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* printf into a new string (new allocation, caller frees). */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Growable buffer with a hard cap (curl's dynbuf). len never exceeds cap;
 * buf_add returns -ENOSPC instead of growing past it. The data is always
 * NUL-terminated for convenience.
 */
struct buf {
	char *data;
	size_t len;   /* bytes used, excluding the NUL */
	size_t alloc; /* bytes allocated */
	size_t cap;   /* most bytes it may hold */
};

void buf_init(struct buf *b, size_t cap);
int buf_add(struct buf *b, const void *p, size_t n);
/* buf_add of the string s without its NUL (inline: a literal's length is known where it is written). */
static inline int buf_puts(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}
/* Make room for n more bytes (and the NUL) past len without writing them: 0 or -ENOSPC. */
int buf_reserve(struct buf *b, size_t n);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_reset(struct buf *b);
void buf_free(struct buf *b);

/*
 * Read a whole small file (a /proc or sysfs file) into dst, NUL-terminated.
 * The file is opened relative to dirfd when dirfd >= 0, else from the path.
 * Returns the byte count, or -errno; -EFBIG when it does not fit.
 */
ssize_t read_file_at(int dirfd, const char *path, char *dst, size_t size);
/* Read all of fd into dst (size bytes, NUL-terminated) and close fd: the length, or -errno (-EFBIG: it does not fit). */
ssize_t read_fd_all(int fd, char *dst, size_t size);

/*
 * A file kept open and read again: its whole text from offset 0 with one
 * pread, into dst, NUL-terminated. Right for files the kernel writes afresh
 * for each read from the start, in one record (a cgroup file, /proc/PID/stat,
 * a sysfs attribute), where a read shorter than dst is all of it. The byte
 * count, -EFBIG when it fills dst, or -errno (a cgroup file removed: -ENODEV;
 * a process gone: -ESRCH). check_links: the file is on no such file system (a
 * fixture tree), where a removed file still reads: -ENOENT when its link
 * count says it was removed.
 */
ssize_t read_kept_file(int fd, int check_links, char *dst, size_t size);
/*
 * Open dirfd/path (dirfd -1: path) read-only, close-on-exec, to keep it
 * and read it again every period (read_kept_file): without access times
 * (O_NOATIME) where the file's owner or CAP_FOWNER allows it, else as
 * usual. The kernel's own files keep no access time; on a regular file
 * system (a fixture tree) each read would check and may write one. The
 * descriptor, or -1 with errno set.
 */
int open_kept(int dirfd, const char *path);
/*
 * Read every pending event of the non-blocking inotify descriptor fd and
 * hand each to each(ud, wd, mask) (an overflowed queue: wd -1, mask
 * IN_Q_OVERFLOW: any watch may have missed something). The number of
 * events, or -errno when a read failed (then some may be lost).
 */
int inotify_drain(int fd, void (*each)(void *ud, int wd, uint32_t mask), void *ud);
/*
 * Is fd on a file system whose files the kernel writes (procfs, sysfs,
 * cgroup v1 or v2)? There a kept file's read fails once what it shows is
 * gone; elsewhere read_kept_file must check links.
 */
int on_kernel_fs(int fd);

/*
 * For paths that come from a user (a config file, a certificate, a
 * credentials file): open path only when it is a regular file, without
 * ever blocking in open() (a FIFO) or taking a controlling terminal. The
 * descriptor (O_CLOEXEC; O_NONBLOCK only when flags has it), or -errno:
 * -EISDIR for a directory, -EINVAL for any other non-regular file (say
 * which with file_kind_name).
 */
int open_regular(const char *path, int flags);
/* read_file_at for a user's path: through open_regular, so a FIFO or a directory is an error, never a hang. */
ssize_t read_regular_file(const char *path, char *dst, size_t size);
/* What path is, for messages: "a directory", "a FIFO", "a socket", "missing", ... */
const char *file_kind_name(const char *path);

/*
 * The well-formed UTF-8 character (RFC 3629) at s: its length in bytes (1
 * to 4), its code point in *cp; 0 when s does not start one (a stray byte,
 * an overlong form, a surrogate, past U+10FFFF). Never reads past a NUL.
 */
size_t utf8_char(const char *s, uint32_t *cp);

/*
 * Make s valid UTF-8 in place: every byte that does not start or continue a
 * well-formed sequence becomes '?'. Text from the kernel (a comm cut at 15
 * bytes in the middle of a character) or from the network must pass through
 * this before it becomes a JSON string. Returns s.
 */
char *utf8_sanitize(char *s);

/*
 * A fast 64-bit hash of n bytes, 8 at a time (label sets are hundreds of
 * bytes long), chained from seed: for in-memory tables only, never stored.
 */
uint64_t hash_bytes(uint64_t seed, const void *p, size_t n);

/*
 * A sum of u64 values that never wraps: exact while it fits in 64 bits, a
 * double once it went past 2^64 (big). Zeroed: 0. The report writes it as
 * json_u64sum (jset.h) does.
 */
struct u64sum {
	uint64_t v;  /* the sum, while it fits */
	double over; /* the sum, once it did not fit */
	int big;
};
void u64sum_add(struct u64sum *s, uint64_t v);

/*
 * The node's name: KUBE_NODE_NAME when set and not empty, else NODE_NAME (the
 * downward API), else the host name (else "localhost").
 */
void node_name(char *dst, size_t size);

/* Write all of p, retrying on EINTR and short writes. 0 or -errno. */
int write_all(int fd, const void *p, size_t n);

/*
 * v as the Prometheus exposition prints it: integers (below 9.2e18) without
 * exponent or fraction, other values in the shortest of %.15g, %.16g and
 * %.17g that reads back exactly, NaN, +Inf, -Inf. dst gets at most 32
 * bytes. Returns the length.
 */
size_t double_text(double v, char dst[32]);

#endif
