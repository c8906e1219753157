/* SPDX-License-Identifier: MIT */
/*
 * The sink driver: what every sink program does the same way, so that each
 * sink's main file is only its own rendering and transport (curl's tool
 * around its library, jq's main over libjq). The push sinks add their
 * reader, queue, sender and drain on top of it (push.h).
 *
 *   - the command line: a sink describes its options as a table of rows
 *     (name, kind of value, where it goes, bounds); the driver parses them
 *     with the same messages in every program, and handles -v/--verbose,
 *     --version and --help itself (their output checked, as cli.h says);
 *   - the start: the check of descriptors 0-2 (cli_std_fds), the logger,
 *     SIGPIPE ignored (a write to a gone reader is EPIPE, handled where it
 *     happens);
 *   - the stream loop: common/stream.c's reader, each bad line logged
 *     (the first few of them, then every thousandth, with the count) and
 *     counted by kind, each report named "stdin:LINE" for messages.
 *
 * Exit codes are cli.h's enum exit_code in every program.
 */
#ifndef ACCEL_SINK_H
#define ACCEL_SINK_H

#include "cli.h"
#include "stream.h"

#include <jansson.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The kind of value an option takes, and what the driver stores for it. */
enum sink_arg {
	SINK_FLAG,   /* no value: int 1 */
	SINK_STR,    /* const char *: the argument itself (argv's, not a copy) */
	SINK_UINT,   /* unsigned long long, decimal, within [min, max] */
	SINK_DUR,    /* int64_t milliseconds ("250ms", "30s", "5m"), at least min */
	SINK_CHOICE, /* int: the index of the argument in choices (NULL-terminated) */
	SINK_FN,     /* parse(arg, dst, err, errsz) decides: 0, or -1 with err filled */
};

/* One row of a sink's option table; the table ends with a row whose name is NULL. */
struct sink_opt {
	const char *name;     /* long name, without "--" */
	char short_name;      /* 0: none */
	enum sink_arg arg;
	void *dst;            /* where the value goes (see enum sink_arg for its type) */
	long long min, max;   /* SINK_UINT: bounds; SINK_DUR: min only (ms) */
	const char *const *choices;
	int (*parse)(const char *arg, void *dst, char *err, size_t errsz);
	int *given;           /* may be NULL: set to 1 when the option is on the command line */
};

/* A sink program. */
struct sink_def {
	const char *prog;             /* "accel-csv": messages, --version */
	void (*usage)(FILE *f);       /* the --help text */
	const struct sink_opt *opts;
};

/* sink_start's answer when the program is to go on. */
#define SINK_RUN (-1)

/*
 * Call first thing in main. Checks descriptors 0-2 (stdin carries the
 * stream: a closed one is refused with a message), parses argv with the
 * table, answers --help and --version, starts the log at the -v level, and
 * ignores SIGPIPE. Returns SINK_RUN, or the exit code to return now
 * (EXIT_OK after --help, EXIT_USAGE after a bad option, EXIT_SYSTEM when
 * stdin is closed or --help could not be written).
 */
int sink_start(const struct sink_def *def, int argc, char **argv);

/*
 * For a sink about to write its product on stdout (accel-csv without -o, a
 * dry run): 0, or EXIT_SYSTEM after saying that stdout was closed when the
 * program started (sink_start put /dev/null there, so nothing would fail).
 * Only after sink_start, which marks that /dev/null close-on-exec: a
 * descriptor inherited across exec never is, so the mark is the memory.
 */
int sink_need_stdout(const char *prog);

/*
 * Block SIGINT and SIGTERM in the calling thread (threads it starts later
 * inherit the mask) and put them in *set: the main thread takes them with
 * sigtimedwait(set), so no handler and no flag are needed.
 */
void sink_block_signals(sigset_t *set);

/* The report stream, as a sink reads it. */
struct sink_input {
	struct stream st;
	const char *tag;                /* log prefix: "csv" */
	char where[32];                 /* "stdin:LINE" of the last report, for messages */
	char err[512];                  /* after a read error: what it was */
	uint64_t reports;               /* good lines */
	uint64_t bad[STREAM_BAD_COUNT]; /* bad lines skipped, by kind */
	uint64_t bad_lines;             /* their sum */
	uint64_t lines;                 /* lines read, blank ones included */
	uint64_t bytes;                 /* bytes read */
	/* Optional: told of each bad line after it is logged and counted. */
	void (*on_bad)(void *ud, enum stream_bad why);
	void *ud;
};

/* Read fd (stdin: 0) as the report stream; max_line 0: the default cap. */
void sink_input_init(struct sink_input *in, const char *tag, int fd, size_t max_line);
void sink_input_free(struct sink_input *in);

/*
 * Make sink_input_next wait at most ms for input and then answer
 * SINK_INPUT_AGAIN, so that the reading thread can look at its stop flag
 * and its clock while the input is quiet (a line read in part is kept).
 * By default it blocks.
 */
void sink_input_set_wait(struct sink_input *in, int ms);

/* sink_input_next's answer when the wait passed with no whole line in. */
#define SINK_INPUT_AGAIN 2

/*
 * The next report, bad lines logged, counted and passed over.
 *  1: *report is an object (new reference), in->where names its line.
 *  0: the end of the input.
 * -1: a read error; in->err says which, ready for a message; the input is
 *     at its end.
 *  SINK_INPUT_AGAIN: only after sink_input_set_wait; nothing yet.
 */
int sink_input_next(struct sink_input *in, json_t **report);

/* Whether a complete line is already buffered (a burst is coming). */
int sink_input_buffered(const struct sink_input *in);

/* Whether more input is there now: a complete line buffered, or the descriptor readable. */
int sink_input_pending(const struct sink_input *in);

#endif
