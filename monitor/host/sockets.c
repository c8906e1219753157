/* SPDX-License-Identifier: MIT */
/*
 * The process listening on a TCP port; see sockets.h.
 */
#include "sockets.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"
#include "procfs.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define RESCAN_NS (30 * NS_PER_S)     /* the same listening sockets with no process found: scanned again after this */
#define MISS_RETRY_NS (5 * NS_PER_S)  /* nothing listening: looked at again after this */

static void mapped4(struct sock_addr *s, const void *in4)
{
	memset(s->a, 0, 10);
	s->a[10] = s->a[11] = 0xff;
	memcpy(s->a + 12, in4, 4);
}

static int is_loopback(const struct sock_addr *s)
{
	static const unsigned char lo6[16] = { [15] = 1 };
	static const unsigned char v4map[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(s->a, lo6, 16) || (!memcmp(s->a, v4map, 12) && s->a[12] == 127);
}

/* Is a one of this host's interface addresses? */
static int is_interface_address(const struct sock_addr *a)
{
	struct ifaddrs *ifs, *i;
	int found = 0;

	if (getifaddrs(&ifs))
		return 0;
	for (i = ifs; i && !found; i = i->ifa_next) {
		struct sock_addr s;

		if (!i->ifa_addr)
			continue;
		if (i->ifa_addr->sa_family == AF_INET)
			mapped4(&s, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr);
		else if (i->ifa_addr->sa_family == AF_INET6)
			memcpy(s.a, &((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr, 16);
		else
			continue;
		found = !memcmp(s.a, a->a, 16);
	}
	freeifaddrs(ifs);
	return found;
}

int sockets_host_local(const char *host, struct sock_addr *addrs, size_t max, size_t *n, int *any)
{
	struct in_addr in4;
	struct in6_addr in6;
	char self[256];
	size_t len = strlen(host);

	*n = 0;
	*any = 0;
	if (max < 2)
		return 0;
	if (inet_pton(AF_INET, host, &in4) == 1) {
		mapped4(&addrs[0], &in4);
		*n = 1;
		return is_loopback(&addrs[0]) || is_interface_address(&addrs[0]);
	}
	if (inet_pton(AF_INET6, host, &in6) == 1) {
		memcpy(addrs[0].a, &in6, 16);
		*n = 1;
		return is_loopback(&addrs[0]) || is_interface_address(&addrs[0]);
	}
	/* "localhost", "localhost." and names under .localhost (RFC 6761) are the loopback. */
	if (!strcasecmp(host, "localhost") || !strcasecmp(host, "localhost.") ||
	    (len > 10 && !strcasecmp(host + len - 10, ".localhost"))) {
		in4.s_addr = htonl(INADDR_LOOPBACK);
		mapped4(&addrs[0], &in4);
		memcpy(addrs[1].a, &in6addr_loopback, 16);
		*n = 2;
		return 1;
	}
	if (gethostname(self, sizeof(self)) == 0) {
		self[sizeof(self) - 1] = '\0';
		if (!strcasecmp(host, self)) {
			*any = 1;
			return 1;
		}
	}
	return 0;
}

/* n hex digits at p into *v. */
static int hex(const char *p, size_t n, uint64_t *v)
{
	*v = 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)p[i], d = isdigit(c) ? c - '0' : (c >= 'A' && c <= 'F') ? c - 'A' + 10
						     : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;

		if (d < 0)
			return -1;
		*v = *v << 4 | (unsigned)d;
	}
	return 0;
}

/*
 * The kernel prints a local address as 32-bit words in the host's byte
 * order (%08X of the __be32, one word for IPv4, four for IPv6): each word
 * read back as a native integer has the address's bytes in network order.
 */
static int parse_addr(const char *p, int v6, struct sock_addr *s)
{
	uint64_t w;

	if (!v6) {
		uint32_t x;

		if (hex(p, 8, &w))
			return -1;
		x = (uint32_t)w;
		mapped4(s, &x);
		return 0;
	}
	for (int i = 0; i < 4; i++) {
		uint32_t x;

		if (hex(p + 8 * i, 8, &w))
			return -1;
		x = (uint32_t)w;
		memcpy(s->a + 4 * i, &x, 4);
	}
	return 0;
}

static int addr_wildcard(const struct sock_addr *s)
{
	static const unsigned char zero[16], v4any[16] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(s->a, zero, 16) || !memcmp(s->a, v4any, 16);
}

int sockets_parse_listen(const char *text, int v6, struct sock_listen *out, size_t max, size_t *n)
{
	const char *line = text, *nl;
	size_t alen = v6 ? 32 : 8;

	if (strncmp(text + strspn(text, " "), "sl", 2))
		return -EINVAL;
	for (; (nl = strchr(line, '\n')); line = nl + 1) {
		/* "  0: 0100007F:1F42 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000  0 12345 ..." */
		const char *p = line + strspn(line, " "), *f[10];
		struct sock_listen l;
		uint64_t lport, st;
		unsigned long long ino;
		int k = 0;

		if (!isdigit((unsigned char)*p))
			continue; /* the header */
		for (const char *q = p; k < 10 && q < nl; k++) {
			f[k] = q;
			q += strcspn(q, " \n");
			q += strspn(q, " ");
		}
		if (k < 10 || (size_t)(nl - f[1]) < alen + 5 || f[1][alen] != ':' || parse_addr(f[1], v6, &l.addr) ||
		    hex(f[1] + alen + 1, 4, &lport) || hex(f[3], 2, &st))
			continue;
		if (st != 0x0A || sscanf(f[9], "%llu", &ino) != 1 || ino == 0) /* TCP_LISTEN */
			continue;
		l.port = (unsigned)lport;
		l.inode = ino;
		if (*n < max)
			out[(*n)++] = l;
	}
	return 0;
}

size_t sockets_match(const struct sock_listen *l, size_t n, unsigned port, const struct sock_addr *addrs,
		     size_t naddrs, int any, uint64_t *inodes, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k < max; i++) {
		int match = any || addr_wildcard(&l[i].addr);

		for (size_t j = 0; j < naddrs && !match; j++)
			match = !memcmp(l[i].addr.a, addrs[j].a, 16);
		if (l[i].port == port && match)
			inodes[k++] = l[i].inode;
	}
	return k;
}

/* The listening sockets of the procfs pf, read at most every LISTEN_TTL_NS for every owner. */
#define LISTEN_TTL_NS (200 * NS_PER_MS)
#define LISTEN_MAX 4096

static void listen_table(struct sock_table *t, struct procfs *pf, int64_t now_ns)
{
	struct stat st;

	if (fstat(pf->dirfd, &st))
		return;
	if (t->l && t->l_dev == st.st_dev && t->l_ino == st.st_ino && now_ns - t->l_read_ns < LISTEN_TTL_NS &&
	    now_ns >= t->l_read_ns)
		return;
	if (!t->l)
		t->l = xcalloc(LISTEN_MAX, sizeof(*t->l));
	t->nl = 0;
	t->l_err = 0;
	for (int v6 = 0; v6 < 2; v6++) {
		const char *file = v6 ? "net/tcp6" : "net/tcp", *text = procfs_read(pf, file);

		if (text) {
			sockets_parse_listen(text, v6, t->l, LISTEN_MAX, &t->nl);
		} else if (errno != ENOENT && !t->l_err) { /* ENOENT: no IPv6 */
			t->l_err = errno;
			t->l_file = file;
		}
	}
	t->l_dev = st.st_dev;
	t->l_ino = st.st_ino;
	t->l_read_ns = now_ns;
}

void sock_table_free(struct sock_table *t)
{
	free(t->l);
	free(t->h);
	memset(t, 0, sizeof(*t));
}

void sock_owner_init(struct sock_owner *o, const char *host, unsigned port)
{
	memset(o, 0, sizeof(*o));
	o->port = port;
	o->local = sockets_host_local(host, o->addrs, ARRAY_SIZE(o->addrs), &o->naddrs, &o->any);
	if (!o->local)
		snprintf(o->why, sizeof(o->why), "the endpoint is not on this host");
}

/* Does pid's descriptor fd still refer to socket inode? */
static int holds(int dirfd, pid_t pid, int fd, uint64_t inode)
{
	char path[64], link[64], want[48];
	ssize_t n;

	snprintf(path, sizeof(path), "%d/fd/%d", (int)pid, fd);
	n = readlinkat(dirfd, path, link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = '\0';
	snprintf(want, sizeof(want), "socket:[%llu]", (unsigned long long)inode);
	return !strcmp(link, want);
}

/* Who holds a listening socket (struct sock_table's holders). */
struct sock_holder {
	uint64_t inode;
	pid_t pid;  /* the lowest pid holding it */
	int fd;
};

static int cmp_holder(const void *a, const void *b)
{
	const struct sock_holder *x = a, *y = b;

	return x->inode < y->inode ? -1 : x->inode > y->inode;
}

/*
 * Fill t's holders from its listening table: scan /proc/PID/fd of every
 * process once, keeping for each listening inode the lowest pid (and its
 * fd) that holds it (/proc lists pids in ascending order, a --path.procfs
 * tree may not).
 */
static void holders_scan(struct sock_table *t, struct procfs *pf, const struct stat *st, int64_t now_ns)
{
	int d = dup(pf->dirfd);
	DIR *proc = d >= 0 ? fdopendir(d) : NULL;
	struct dirent *e;

	free(t->h);
	t->h = xcalloc(t->nl + 1, sizeof(*t->h));
	for (size_t i = 0; i < t->nl; i++)
		t->h[i] = (struct sock_holder){ t->l[i].inode, 0, -1 };
	t->nh = t->nl;
	qsort(t->h, t->nh, sizeof(*t->h), cmp_holder);
	t->h_dev = st->st_dev;
	t->h_ino = st->st_ino;
	t->h_read_ns = now_ns;
	t->h_err = 0;
	if (!proc) {
		t->h_err = errno;
		if (d >= 0)
			close(d);
		return;
	}
	rewinddir(proc);
	while (t->nh && (e = readdir(proc))) {
		char path[64];
		int fdd;
		pid_t pid;
		DIR *fds;
		struct dirent *f;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid = (pid_t)atoi(e->d_name);
		snprintf(path, sizeof(path), "%s/fd", e->d_name);
		fdd = openat(pf->dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fdd < 0 || !(fds = fdopendir(fdd))) {
			int err = errno;

			if (fdd >= 0)
				close(fdd);
			if (err != ENOENT && err != ESRCH && err != EACCES && err != EPERM && !t->h_err)
				t->h_err = err; /* EMFILE: a holder may be left out */
			continue; /* gone, or not ours to read */
		}
		while ((f = readdir(fds))) {
			char link[64];
			struct sock_holder key, *h;
			ssize_t len;

			if (!isdigit((unsigned char)f->d_name[0]))
				continue;
			len = readlinkat(dirfd(fds), f->d_name, link, sizeof(link) - 1);
			if (len <= 8 || strncmp(link, "socket:[", 8))
				continue;
			link[len] = '\0';
			key.inode = strtoull(link + 8, NULL, 10);
			h = bsearch(&key, t->h, t->nh, sizeof(*t->h), cmp_holder);
			if (h && (!h->pid || pid < h->pid)) {
				h->pid = pid;
				h->fd = atoi(f->d_name);
			}
		}
		closedir(fds);
	}
	closedir(proc);
}

/* The lowest pid holding one of inodes (0: none), scanning at most every LISTEN_TTL_NS for every owner. */
static pid_t find_holder(struct sock_table *t, struct procfs *pf, const uint64_t *inodes, size_t n, int64_t now_ns,
			 int *fd_out, uint64_t *inode_out)
{
	struct stat st;
	pid_t found = 0;

	int stale;

	if (fstat(pf->dirfd, &st))
		return 0;
	stale = !t->h || t->h_dev != st.st_dev || t->h_ino != st.st_ino || now_ns - t->h_read_ns >= LISTEN_TTL_NS ||
		now_ns < t->h_read_ns;
	for (size_t i = 0; i < n && !stale; i++) { /* a socket newer than the scan */
		struct sock_holder key = { .inode = inodes[i] };

		stale = !bsearch(&key, t->h, t->nh, sizeof(*t->h), cmp_holder);
	}
	if (stale)
		holders_scan(t, pf, &st, now_ns);
	for (size_t i = 0; i < n; i++) {
		struct sock_holder key = { .inode = inodes[i] }, *h;

		h = bsearch(&key, t->h, t->nh, sizeof(*t->h), cmp_holder);
		if (h && h->pid && (!found || h->pid < found)) {
			found = h->pid;
			*fd_out = h->fd;
			*inode_out = h->inode;
		}
	}
	return found;
}

pid_t sock_owner_find(struct sock_owner *o, struct sock_table *t, struct procfs *pf, int64_t now_ns)
{
	uint64_t inodes[8];
	size_t n;

	if (!o->local)
		return 0;
	if (o->pid && holds(pf->dirfd, o->pid, o->fd, o->inode))
		return o->pid;
	o->pid = 0;
	if (o->missed_ns && now_ns - o->missed_ns < MISS_RETRY_NS && now_ns >= o->missed_ns)
		return 0; /* o->why still says why */
	listen_table(t, pf, now_ns);
	n = sockets_match(t->l, t->nl, o->port, o->addrs, o->naddrs, o->any, inodes, ARRAY_SIZE(inodes));
	o->missed_ns = 0;
	if (n == 0 && t->l_err) {
		snprintf(o->why, sizeof(o->why), "cannot read the listening sockets (%s): %s", t->l_file,
			 strerror(t->l_err));
		o->nseen = 0;
		return 0; /* not a miss: looked for again next time */
	}
	if (n == 0) {
		snprintf(o->why, sizeof(o->why), "no process listens on port %u", o->port);
		o->nseen = 0;
		o->missed_ns = now_ns;
		return 0;
	}
	/* The same sockets as the last scan that found nobody (not ours to see?): not every cycle. */
	if (n == o->nseen && !memcmp(inodes, o->seen, n * sizeof(*inodes)) && now_ns - o->scanned_ns < RESCAN_NS)
		return 0;
	o->pid = find_holder(t, pf, inodes, n, now_ns, &o->fd, &o->inode);
	if (o->pid)
		return o->pid;
	if (t->h_err) {
		snprintf(o->why, sizeof(o->why), "cannot read the processes' descriptors: %s", strerror(t->h_err));
		o->nseen = 0;
		return 0; /* looked for again next time */
	}
	memcpy(o->seen, inodes, n * sizeof(*inodes));
	o->nseen = n;
	o->scanned_ns = now_ns;
	snprintf(o->why, sizeof(o->why), "the process listening on port %u is not visible (permissions?)", o->port);
	return 0;
}
