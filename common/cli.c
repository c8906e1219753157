/* SPDX-License-Identifier: MIT */
/*
 * Program edges shared by every binary; see cli.h.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int cli_std_fds(const char *prog, int need)
{
	static const char *const names[3] = { "stdin", "stdout", "stderr" };
	int rc = 0;

	for (int fd = 0; fd < 3; fd++) {
		int nfd;

		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			continue;
		if ((fd == 0 && (need & CLI_STDIN)) || (fd == 1 && (need & CLI_STDOUT))) {
			/* stderr may be closed too: the message then goes nowhere, the exit code still says it. */
			if (fcntl(2, F_GETFD) != -1)
				dprintf(2, "%s: %s is closed: it carries the report stream; nothing to do\n", prog,
					names[fd]);
			rc = -EBADF;
		}
		/*
		 * Fill the slot either way, so nothing opened later lands on it. The
		 * lower slots are open (or filled by an earlier turn), so open()
		 * returns this one.
		 */
		nfd = open("/dev/null", (fd == 0 ? O_RDONLY : O_WRONLY));
		if (nfd < 0)
			return -errno;
		if (nfd != fd) {
			close(nfd);
			return -EBADF;
		}
	}
	return rc;
}

int cli_finish_stdout(const char *prog)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return EXIT_OK;
	fprintf(stderr, "%s: cannot write to stdout: %s\n", prog, strerror(errno ? errno : EIO));
	return EXIT_SYSTEM;
}
