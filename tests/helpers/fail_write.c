/* SPDX-License-Identifier: MIT */
/*
 * An LD_PRELOAD shim that makes write(2) and writev(2) fail after a number of bytes, to
 * test how a program handles a disk that fills up mid-write (jq's
 * inject_errors.c does the same for its own tests).
 *
 *   FAIL_WRITE_AFTER=N   let N bytes through (counted over every write to
 *                        a descriptor other than stderr), then: a short
 *                        write up to N, and -1 with errno from then on
 *   FAIL_WRITE_ERRNO=E   the errno number (default ENOSPC)
 *
 * Built by the test that uses it: cc -shared -fPIC -o fail_write.so fail_write.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static long long left = -1; /* bytes still allowed; -1: no limit */
static int fail_errno = ENOSPC;

static void init(void)
{
	const char *a = getenv("FAIL_WRITE_AFTER"), *e = getenv("FAIL_WRITE_ERRNO");

	if (real_write)
		return;
	real_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	real_writev = (ssize_t(*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
	left = a ? atoll(a) : -1;
	if (e)
		fail_errno = atoi(e);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	struct iovec cut[64];
	long long room;
	int k;
	ssize_t w;

	init();
	if (fd == STDERR_FILENO || left < 0 || n > 64)
		return real_writev(fd, iov, n);
	if (left == 0) {
		errno = fail_errno;
		return -1;
	}
	/* The same vector, cut to the bytes still allowed. */
	for (k = 0, room = left; k < n && room > 0; k++) {
		cut[k] = iov[k];
		if ((long long)cut[k].iov_len > room)
			cut[k].iov_len = (size_t)room;
		room -= (long long)cut[k].iov_len;
	}
	w = real_writev(fd, cut, k);
	if (w > 0)
		left -= w;
	return w;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	ssize_t w;

	init();
	if (fd == STDERR_FILENO || left < 0)
		return real_write(fd, buf, n);
	if (left == 0) {
		errno = fail_errno;
		return -1;
	}
	if ((long long)n > left)
		n = (size_t)left;
	w = real_write(fd, buf, n);
	if (w > 0)
		left -= w;
	return w;
}
