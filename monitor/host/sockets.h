/* SPDX-License-Identifier: MIT */
/*
 * Which process listens on a TCP port of this host: the listening
 * socket's inode from /proc/net/tcp and tcp6, then the process holding a
 * descriptor on that socket ("socket:[INODE]" among /proc/PID/fd's links),
 * all under --path.procfs. Endpoint runtimes use it to give their entry
 * the server's pid, so the process groups work for them as for pid:
 * runtimes.
 *
 * A hit is cached and re-checked with one readlink per call; a miss looks
 * again only after a few seconds (reading /proc/net/tcp walks the kernel's
 * socket tables: milliseconds), and scans /proc again only when the
 * listening sockets changed. The table of listening sockets, and who holds
 * them, is read once for every endpoint looking within a short while: the
 * caller keeps it (struct sock_table; the producer's is the host's,
 * host.h).
 */
#ifndef ACCEL_SOCKETS_H
#define ACCEL_SOCKETS_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* An address a listening socket may be bound to: IPv4 (as an IPv4-mapped IPv6 address) or IPv6. */
struct sock_addr {
	unsigned char a[16]; /* network order; IPv4 as ::ffff:a.b.c.d */
};

/*
 * The addresses a URL's host stands for on this machine: an IP literal,
 * "localhost" (127.0.0.1 and ::1), or this host's name (any of its
 * addresses). Returns 1 when the host is this machine (an address of one
 * of its interfaces, a loopback address, localhost or its host name;
 * *any set when any local address counts), 0 when it is another machine
 * (or a name that would need DNS to tell: never resolved, it could block).
 */
int sockets_host_local(const char *host, struct sock_addr *addrs, size_t max, size_t *n, int *any);

/* A listening TCP socket. */
struct sock_listen {
	struct sock_addr addr; /* its local address (a wildcard: all zeros, or ::ffff:0.0.0.0) */
	unsigned port;
	uint64_t inode;
};

/*
 * Parse /proc/net/tcp (v6 = 0) or /proc/net/tcp6 (v6 = 1) text: the
 * sockets in LISTEN state, appended to out (up to max; *n counts them).
 * 0, or -EINVAL when the text is not such a table.
 */
int sockets_parse_listen(const char *text, int v6, struct sock_listen *out, size_t max, size_t *n);

/*
 * Of the n listening sockets l, the inodes of those on port bound to a
 * wildcard, to one of addrs, or to anything when any: into inodes (up to
 * max). Returns how many.
 */
size_t sockets_match(const struct sock_listen *l, size_t n, unsigned port, const struct sock_addr *addrs,
		     size_t naddrs, int any, uint64_t *inodes, size_t max);

/* The cache of one endpoint's listener. */
struct sock_owner {
	unsigned port;
	struct sock_addr addrs[16];
	size_t naddrs;
	int any;
	int local;          /* the host is this machine */
	pid_t pid;          /* 0: not found */
	int fd;             /* its descriptor on the socket */
	uint64_t inode;
	uint64_t seen[8];   /* the listening inodes of the last scan that found no process */
	size_t nseen;
	int64_t scanned_ns; /* CLOCK_MONOTONIC of that scan */
	int64_t missed_ns;  /* CLOCK_MONOTONIC of the last look that found nothing listening */
	char why[128];      /* when pid is 0: why */
};

/* Set up o for host:port (sockets_host_local). */
void sock_owner_init(struct sock_owner *o, const char *host, unsigned port);

struct sock_holder;

/*
 * What every owner's lookup shares for a short while (200 ms): the
 * listening sockets of a procfs root and the processes holding them, each
 * with the root (device, inode) and the time it was read. All zeros is an
 * empty table.
 */
struct sock_table {
	struct sock_listen *l;      /* owned */
	size_t nl;
	dev_t l_dev;
	ino_t l_ino;
	int64_t l_read_ns;          /* CLOCK_MONOTONIC */
	int l_err;                  /* errno of the last listing's failed read (net/tcp, net/tcp6), 0 if fine */
	const char *l_file;         /* the file that read failed ("net/tcp"), with l_err */
	struct sock_holder *h;      /* owned; sorted by inode */
	size_t nh;
	dev_t h_dev;
	ino_t h_ino;
	int64_t h_read_ns;          /* CLOCK_MONOTONIC */
	int h_err;                  /* errno of the holders scan's first failure other than a process gone
	                               (ENOENT, ESRCH) or not ours to see (EACCES, EPERM), 0 if fine */
};

void sock_table_free(struct sock_table *t); /* leaves it empty */

struct procfs;
/*
 * The pid listening on o's port now (0 when none is found; o->why says
 * why, with the errno's words when a file could not be read for another
 * reason than a process's exit: EMFILE), read from pf (procfs.h: the
 * --path.procfs root) through t. Cheap when the cached process still holds
 * the socket.
 */
pid_t sock_owner_find(struct sock_owner *o, struct sock_table *t, struct procfs *pf, int64_t now_ns);

#endif
