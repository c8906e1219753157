/* SPDX-License-Identifier: MIT */
/* Unit tests for common/cli (standard descriptors) and log's quoting and rate limit. */
#include "../../common/cli.h"
#include "../../common/log.h"
#include "../../common/util.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run cli_std_fds in a child with the descriptors in closed[] closed; its result and what fd 0-2 are then. */
static int child_std_fds(const int *closed, size_t n, int need, char *fds_after)
{
	int p[2], st;
	pid_t pid;

	if (pipe(p))
		return -999;
	if (p[1] < 3 || p[0] < 3)
		return -998;
	pid = fork();
	if (pid == 0) {
		char out[4];
		int rc;
		struct stat sb;

		int t = open("/tmp", O_TMPFILE | O_RDWR, 0600);

		/* Start from three regular files, so "o" can't be a /dev/null the test runner gave us. */
		for (int fd = 0; fd < 3; fd++)
			dup2(t, fd);
		close(t);
		for (size_t i = 0; i < n; i++)
			close(closed[i]);
		rc = cli_std_fds("test", need);
		for (int fd = 0; fd < 3; fd++)
			out[fd] = fstat(fd, &sb) ? 'x' : S_ISREG(sb.st_mode) ? 'o' : S_ISCHR(sb.st_mode) && major(sb.st_rdev) == 1 && minor(sb.st_rdev) == 3 ? 'n' : '?';
		out[3] = (char)(rc == -EBADF ? 'B' : rc == 0 ? '0' : '?');
		(void)!write(p[1], out, 4);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], fds_after, 4) != 4)
		fds_after[3] = '!';
	close(p[0]);
	waitpid(pid, &st, 0);
	fds_after[4] = '\0';
	return 0;
}

int main(void)
{
	char got[8], q[LOG_QUOTE_BUF];
	char big[1000];

	{
		int c[] = { 1 };
		child_std_fds(c, 1, CLI_STDOUT, got);
		is_str(got, "onoB", "closed stdout is refused when the stream is on stdout, and filled with /dev/null");
	}
	{
		int c[] = { 0 };
		child_std_fds(c, 1, CLI_STDOUT, got);
		is_str(got, "noo0", "closed stdin is filled with /dev/null when the program does not read it");
	}
	{
		int c[] = { 0, 2 };
		child_std_fds(c, 2, CLI_STDIN, got);
		is_str(got, "nonB", "closed stdin is refused for a sink, stderr closed too: both filled");
	}
	{
		int c[] = { 0, 1, 2 };
		child_std_fds(c, 3, 0, got);
		is_str(got, "nnn0", "all three closed, none needed: all /dev/null");
	}
	child_std_fds(NULL, 0, CLI_STDIN | CLI_STDOUT, got);
	is_str(got, "ooo0", "nothing closed: nothing changed");

	is_str(log_quote(q, sizeof(q), "plain", (size_t)-1), "plain", "quote: plain text as is");
	is_str(log_quote(q, sizeof(q), "a\"b\\c\n\x1b[31m\t\x7f", (size_t)-1), "a\\\"b\\\\c\\n\\u001b[31m\\t\\u007f",
	       "quote: quotes, backslashes and control characters escaped");
	memset(big, 'x', sizeof(big));
	log_quote(q, sizeof(q), big, sizeof(big));
	is_int(strlen(q), LOG_QUOTE_MAX + 3, "quote: a long field is cut at LOG_QUOTE_MAX bytes");
	ok(!strcmp(q + LOG_QUOTE_MAX, "..."), "quote: a cut field ends in ...");
	is_str(log_quote(q, sizeof(q), "ab\0cd", 5), "ab\\u0000cd", "quote: an embedded NUL is shown");
	log_quote(q, 8, "\x01\x02\x03", 3);
	ok(strlen(q) < 8, "quote: a small buffer is never overrun (%s)", q);

	{
		struct log_limit lim = { 0 };

		log_init("test", LOG_LVL_SILENT);
		for (int i = 0; i < 50; i++)
			log_limited(&lim, "repeated %d", i);
		is_int(lim.total, 50, "limit: every occurrence counted");
		is_int(lim.held, 49, "limit: all but the first held back within the interval");
	}
	{
		char dir[] = "/tmp/test_cli.XXXXXX", path[64], text[16];
		int fd;

		if (mkdtemp(dir)) {
			snprintf(path, sizeof(path), "%s/fifo", dir);
			mkfifo(path, 0600);
			is_int(read_regular_file(path, text, sizeof(text)), -EINVAL, "open_regular: a FIFO is refused at once");
			is_str(file_kind_name(path), "a FIFO", "file_kind_name: FIFO");
			unlink(path);
			is_int(read_regular_file(dir, text, sizeof(text)), -EISDIR, "open_regular: a directory is refused");
			is_str(file_kind_name(dir), "a directory", "file_kind_name: directory");
			snprintf(path, sizeof(path), "%s/file", dir);
			fd = open(path, O_WRONLY | O_CREAT, 0600);
			(void)!write(fd, "hello", 5);
			close(fd);
			is_int(read_regular_file(path, text, sizeof(text)), 5, "open_regular: a regular file is read");
			fd = open_regular(path, O_RDONLY);
			ok(fd >= 0 && !(fcntl(fd, F_GETFL) & O_NONBLOCK), "open_regular: blocking unless asked");
			close(fd);
			fd = open_kept(-1, path);
			ok(fd >= 0 && (fcntl(fd, F_GETFL) & O_NOATIME), "open_kept: its owner's file without access times");
			close(fd);
			{
				/* Someone else's file, without CAP_FOWNER: opened as usual. */
				pid_t pid = fork();
				int st = -1;

				if (pid == 0) {
					int k;

					if (getuid() == 0 && setuid(65534))
						_exit(3);
					k = open_kept(-1, "/etc/passwd");
					_exit(k < 0 ? 1 : (fcntl(k, F_GETFL) & O_NOATIME) ? 2 : 0);
				}
				waitpid(pid, &st, 0);
				ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
				   "open_kept: another's file, O_NOATIME refused (EPERM): opened without it (status %d)",
				   WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			}
			unlink(path);
			rmdir(dir);
		}
	}
	return done_testing();
}
