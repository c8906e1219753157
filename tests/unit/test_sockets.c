/* SPDX-License-Identifier: MIT */
/*
 * Endpoint runtimes' parsing (monitor/endpoint/scrape.c's URL, monitor/host/sockets.c's
 * /proc/net/tcp{,6} and listener lookup): table-driven URLs, tables as
 * Linux writes them (x86: words in little-endian order), and the lookup
 * run on a procfs tree made here (--path.procfs), fd links included.
 */
#include "../../common/timeutil.h"
#include "../../monitor/host/procfs.h"
#include "../../monitor/endpoint/scrape.h"
#include "../../monitor/host/sockets.h"
#include "tap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
	const char *url;
	int rc, https;
	const char *host;
	unsigned port;
	const char *path; /* or the error */
} urls[] = {
	{ "http://127.0.0.1:8002/metrics", 0, 0, "127.0.0.1", 8002, "/metrics" },
	{ "https://localhost/metrics", 0, 1, "localhost", 443, "/metrics" },
	{ "http://example.com", 0, 0, "example.com", 80, "" },
	{ "http://[::1]:9090/m?x=1", 0, 0, "::1", 9090, "/m?x=1" },
	{ "http://h:1", 0, 0, "h", 1, "" },
	{ "http://h:65535/", 0, 0, "h", 65535, "/" },
	{ "ftp://h/m", -EINVAL, 0, NULL, 0, "expected http://HOST[:PORT]/PATH or https://..." },
	{ "http://h:0/m", -EINVAL, 0, NULL, 0, "invalid port (1-65535)" },
	{ "http://h:65536/m", -EINVAL, 0, NULL, 0, "invalid port (1-65535)" },
	{ "http://h:/m", -EINVAL, 0, NULL, 0, "empty port" },
	{ "http://h:8a/m", -EINVAL, 0, NULL, 0, "invalid port (1-65535)" },
	{ "http:///m", -EINVAL, 0, NULL, 0, "no host" },
	{ "http://user:pw@h/m", -EINVAL, 0, NULL, 0,
	  "credentials in the URL are not accepted (use basic_auth with a password_file)" },
	{ "http://[::1/m", -EINVAL, 0, NULL, 0, "unterminated [IPv6 address]" },
	{ "http://h/a b", -EINVAL, 0, NULL, 0, "a space or control character in the URL" },
	{ "http://h$x/m", -EINVAL, 0, NULL, 0, "invalid host" },
};

/* /proc/net/tcp as x86 Linux writes it: 127.0.0.1:8002 (0x1F42) listening, 0.0.0.0:9090, an established one. */
static const char tcp4[] =
	"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	"   0: 0100007F:1F42 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242001 1 0 100 0 0 10 0\n"
	"   1: 00000000:2382 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242002 1 0 100 0 0 10 0\n"
	"   2: 0100007F:1F42 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000        0 4242003 1 0 20 4 30 10 -1\n"
	"   3: 0500000A:1F43 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242004 1 0 100 0 0 10 0\n"
	"   4: garbage line\n";
/* ::1 port 8003 listening, :: port 8004 listening. */
static const char tcp6[] =
	"  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	"   0: 00000000000000000000000001000000:1F43 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242005 1 0 100 0 0 10 0\n"
	"   1: 00000000000000000000000000000000:1F44 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242006 1 0 100 0 0 10 0\n";

static void put(const char *root, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

int main(void)
{
	/* URLs. */
	for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
		struct scrape_url u;
		const char *why = NULL;
		int rc = scrape_url_parse(urls[i].url, &u, &why);

		is_int(rc, urls[i].rc, urls[i].url);
		if (rc) {
			is_str(why, urls[i].path, "... why");
		} else {
			is_int(u.https, urls[i].https, "... https");
			is_str(u.host, urls[i].host, "... host");
			is_int(u.port, urls[i].port, "... port");
			is_str(u.path, urls[i].path, "... path");
		}
	}

	/* The listening sockets of a table, and which match an endpoint's host and port. */
	{
		struct sock_listen l[16];
		struct sock_addr lo[2], ten;
		uint64_t ino[8];
		size_t n = 0, nlo, k;
		int any;

		is_int(sockets_parse_listen(tcp4, 0, l, 16, &n), 0, "tcp: parses");
		is_int(sockets_parse_listen(tcp6, 1, l, 16, &n), 0, "tcp6: parses");
		is_int(n, 5, "the 5 LISTEN sockets (not the established one, not the garbage)");
		is_int(l[0].port, 8002, "port from hex");
		is_int(l[0].inode, 4242001, "inode");
		ok(sockets_parse_listen("nonsense\n", 0, l, 16, &n) == -EINVAL, "not a table: -EINVAL");
		n = 0;
		sockets_parse_listen(tcp4, 0, l, 16, &n);
		sockets_parse_listen(tcp6, 1, l, 16, &n);
		ok(sockets_host_local("localhost", lo, 2, &nlo, &any) == 1 && nlo == 2 && !any,
		   "localhost: this machine, 127.0.0.1 and ::1");
		k = sockets_match(l, n, 8002, lo, nlo, 0, ino, 8);
		ok(k == 1 && ino[0] == 4242001, "localhost:8002: the 127.0.0.1 listener (%zu)", k);
		k = sockets_match(l, n, 9090, lo, nlo, 0, ino, 8);
		ok(k == 1 && ino[0] == 4242002, "localhost:9090: the 0.0.0.0 (wildcard) listener");
		k = sockets_match(l, n, 8003, lo, nlo, 0, ino, 8);
		ok(k == 1 && ino[0] == 4242005, "localhost:8003: the ::1 listener");
		k = sockets_match(l, n, 8004, lo, nlo, 0, ino, 8);
		ok(k == 1 && ino[0] == 4242006, "localhost:8004: the :: (wildcard) listener");
		k = sockets_match(l, n, 8003, lo, 1, 0, ino, 8);
		ok(k == 0, "127.0.0.1:8003: not the ::1 listener, nor 10.0.0.5's");
		memset(&ten, 0, sizeof(ten));
		ten.a[10] = ten.a[11] = 0xff;
		ten.a[12] = 10, ten.a[15] = 5;
		k = sockets_match(l, n, 8003, &ten, 1, 0, ino, 8);
		ok(k == 1 && ino[0] == 4242004, "10.0.0.5:8003: its own listener");
		k = sockets_match(l, n, 8003, NULL, 0, 1, ino, 8);
		ok(k == 2, "this host's name: any address (%zu)", k);
		ok(sockets_host_local("192.0.2.1", lo, 2, &nlo, &any) == 0, "192.0.2.1 (TEST-NET): another machine");
		ok(sockets_host_local("metrics.example.com", lo, 2, &nlo, &any) == 0,
		   "a name that needs DNS: not this machine (never resolved)");
		ok(sockets_host_local("::1", lo, 2, &nlo, &any) == 1, "::1: this machine");
		ok(sockets_host_local("127.0.0.2", lo, 2, &nlo, &any) == 1, "127.0.0.2: this machine (loopback)");
	}

	/*
	 * The lookup on a procfs tree: net/tcp with the listener's inode, and
	 * processes whose fd links are sockets (symlinks to "socket:[N]", as
	 * the kernel shows them). The lowest pid holding it wins; a process
	 * that lets go of it is noticed with one readlink; nothing listening
	 * is looked at again only after a while.
	 */
	{
		char root[] = "/tmp/test_sockets.XXXXXX", path[512];
		struct procfs pf = { .dirfd = -1 };
		struct sock_table tab = { 0 };
		struct sock_owner o;

		if (!ok(mkdtemp(root) != NULL, "a procfs tree"))
			return done_testing();
		snprintf(path, sizeof(path), "%s/net", root);
		mkdir(path, 0755);
		put(root, "net/tcp", tcp4);
		put(root, "net/tcp6", tcp6);
		for (int pid = 100; pid <= 300; pid += 100) {
			snprintf(path, sizeof(path), "%s/%d", root, pid);
			mkdir(path, 0755);
			snprintf(path, sizeof(path), "%s/%d/fd", root, pid);
			mkdir(path, 0755);
		}
		snprintf(path, sizeof(path), "%s/100/fd/0", root);
		ok(symlink("/dev/null", path) == 0, "pid 100 holds /dev/null");
		snprintf(path, sizeof(path), "%s/200/fd/7", root);
		ok(symlink("socket:[4242001]", path) == 0, "pid 200 holds the listener as fd 7");
		snprintf(path, sizeof(path), "%s/300/fd/3", root);
		ok(symlink("socket:[4242001]", path) == 0, "pid 300 too (a forked worker)");
		is_int(procfs_open(&pf, root), 0, "procfs_open on the tree");
		sock_owner_init(&o, "127.0.0.1", 8002);
		is_int(o.local, 1, "127.0.0.1 is this machine");
		is_int(sock_owner_find(&o, &tab, &pf, 1000), 200, "the listener's process: the lowest pid holding it");
		is_int(o.fd, 7, "... through fd 7");
		is_int(sock_owner_find(&o, &tab, &pf, 2000), 200, "found again (one readlink)");
		snprintf(path, sizeof(path), "%s/200/fd/7", root);
		unlink(path);
		is_int(sock_owner_find(&o, &tab, &pf, 3000 * NS_PER_MS), 300, "pid 200 let go: the next holder, 300");
		sock_owner_init(&o, "127.0.0.1", 8555);
		is_int(sock_owner_find(&o, &tab, &pf, 1000), 0, "nothing listens on 8555");
		is_str(o.why, "no process listens on port 8555", "... and why");
		sock_owner_init(&o, "192.0.2.1", 8002);
		is_int(sock_owner_find(&o, &tab, &pf, 1000), 0, "another machine: no process");
		is_str(o.why, "the endpoint is not on this host", "... and why");
		sock_owner_init(&o, "localhost", 8004);
		is_int(sock_owner_find(&o, &tab, &pf, 10 * NS_PER_S), 0, "a listener nobody here holds (another user's)");
		is_str(o.why, "the process listening on port 8004 is not visible (permissions?)", "... and why");
		{
			/* Out of descriptors (EMFILE): said as such, never "nothing listens" or "permissions?". */
			struct rlimit saved, low;
			int lowest = dup(0);

			close(lowest);
			getrlimit(RLIMIT_NOFILE, &saved);
			low = saved;
			low.rlim_cur = (rlim_t)lowest;
			sock_owner_init(&o, "127.0.0.1", 8002);
			setrlimit(RLIMIT_NOFILE, &low);
			is_int(sock_owner_find(&o, &tab, &pf, 20 * NS_PER_S), 0, "emfile: no listing, no process");
			setrlimit(RLIMIT_NOFILE, &saved);
			is_str(o.why, "cannot read the listening sockets (net/tcp): Too many open files", "... and why");
			low.rlim_cur = (rlim_t)lowest + 1; /* the listing's reads, not a process's fd directory */
			setrlimit(RLIMIT_NOFILE, &low);
			is_int(sock_owner_find(&o, &tab, &pf, 30 * NS_PER_S), 0, "emfile: listed, no holder read");
			setrlimit(RLIMIT_NOFILE, &saved);
			is_str(o.why, "cannot read the processes' descriptors: Too many open files", "... and why");
			is_int(sock_owner_find(&o, &tab, &pf, 31 * NS_PER_S), 300, "emfile: descriptors back, found");
		}
		procfs_close(&pf);
		sock_table_free(&tab);
		snprintf(path, sizeof(path), "rm -rf '%s'", root);
		ok(system(path) == 0, "the tree removed");
	}
	return done_testing();
}
