/* SPDX-License-Identifier: MIT */
/*
 * What every program of the project (accel-monitor and each sink) does the
 * same way at its edges: one named set of exit codes, the check of the
 * standard descriptors at start, and the check of stdout at exit.
 */
#ifndef ACCEL_CLI_H
#define ACCEL_CLI_H

/* Exit codes, the same in every program (README, each --help). */
enum exit_code {
	EXIT_OK = 0,
	EXIT_SYSTEM = 1, /* a system error: a read or write failure, a missing stream, no /proc */
	EXIT_USAGE = 2,  /* bad command line or environment */
	EXIT_CONFIG = 3, /* invalid configuration (or accel-csv: an output header that does not match) */
};

/* Which standard descriptors a program reads or writes its stream on. */
enum { CLI_STDIN = 1, CLI_STDOUT = 2 };

/*
 * Call first thing in main, before anything opens a descriptor. For each of
 * 0, 1 and 2 that is closed: when it is one the program's stream needs
 * (need: CLI_STDIN and/or CLI_STDOUT), say so on stderr (when 2 is open)
 * and return -EBADF; otherwise open /dev/null on it, so that no later
 * open() or pipe() is mistaken for the stream. 0 or -errno.
 */
int cli_std_fds(const char *prog, int need);

/*
 * At the exit of a command whose product is on stdout (--help, --version,
 * --check-config, a dry run): flush and check it. EXIT_OK, or EXIT_SYSTEM
 * after saying "PROG: cannot write to stdout: reason" on stderr.
 */
int cli_finish_stdout(const char *prog);

#endif
