/* SPDX-License-Identifier: MIT */
/* The sink driver: command line, start, stream loop; see sink.h. */
#include "sink.h"
#include "log.h"
#include "timeutil.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_OPTS 64     /* rows in a sink's table, the driver's own included */
#define BAD_LOG_FIRST 10 /* bad lines logged one by one; then every 1000th */

enum { OPT_VERSION = 1000, OPT_FIRST = 1001 };

/* "expected a or b", "expected a, b or c" */
static void choices_text(const char *const *c, char *dst, size_t size)
{
	size_t n = 0, k;

	for (k = 0; c[k]; k++)
		;
	for (size_t i = 0; i < k && n < size; i++)
		n += (size_t)snprintf(dst + n, size - n, "%s%s", i == 0 ? "" : i + 1 == k ? " or " : ", ", c[i]);
}

/* Store one option's value. 0, or -1 after saying what was wrong. */
static int set_value(const char *prog, const struct sink_opt *o, const char *arg)
{
	char err[512] = "", *end;
	const char *why = NULL;
	unsigned long long u;
	int64_t ms;

	switch (o->arg) {
	case SINK_FLAG:
		*(int *)o->dst = 1;
		break;
	case SINK_STR:
		*(const char **)o->dst = arg;
		break;
	case SINK_UINT:
		errno = 0;
		u = strtoull(arg, &end, 10);
		if (!*arg || *end || errno || arg[0] == '-' || arg[0] == '+' || u < (unsigned long long)o->min ||
		    u > (unsigned long long)o->max) {
			snprintf(err, sizeof(err), "expected %lld to %lld, got \"%s\"", o->min, o->max, arg);
			break;
		}
		*(unsigned long long *)o->dst = u;
		break;
	case SINK_DUR:
		if (duration_parse(arg, &ms, &why) || ms < o->min) {
			snprintf(err, sizeof(err), "%s, got \"%s\"",
				 why ? why : o->min == 1 ? "must be positive" : "too short", arg);
			break;
		}
		*(int64_t *)o->dst = ms;
		break;
	case SINK_CHOICE:
		for (int k = 0; o->choices[k]; k++)
			if (!strcmp(arg, o->choices[k])) {
				*(int *)o->dst = k;
				goto done;
			}
		{
			char list[256];

			choices_text(o->choices, list, sizeof(list));
			snprintf(err, sizeof(err), "expected %s, got \"%s\"", list, arg);
		}
		break;
	case SINK_FN:
		if (o->parse(arg, o->dst, err, sizeof(err)) && !err[0])
			snprintf(err, sizeof(err), "invalid: \"%s\"", arg);
		break;
	}
done:
	if (err[0]) {
		fprintf(stderr, "%s: --%s: %s\n", prog, o->name, err);
		return -1;
	}
	if (o->given)
		*o->given = 1;
	return 0;
}

/* --help or --version on stdout, checked: EXIT_OK, or EXIT_SYSTEM with a message (stdout full, closed). */
static int print_and_exit_code(const struct sink_def *def, int version)
{
	if (sink_need_stdout(def->prog))
		return EXIT_SYSTEM;
	if (version)
		printf("%s %s\n", def->prog, ACCEL_VERSION);
	else
		def->usage(stdout);
	return cli_finish_stdout(def->prog);
}

/* Parse argv against the table. SINK_RUN, or an exit code; *verbose set from -v. */
static int parse_args(const struct sink_def *def, int argc, char **argv, int *verbose)
{
	struct option lo[MAX_OPTS];
	char shorts[2 * MAX_OPTS + 8] = "v::h";
	size_t n = 0, ns = strlen(shorts);
	int c;

	for (const struct sink_opt *o = def->opts; o->name; o++, n++) {
		if (n + 4 > MAX_OPTS)
			abort(); /* a table this long is a programming error */
		lo[n] = (struct option){ o->name, o->arg == SINK_FLAG ? no_argument : required_argument, NULL,
					 OPT_FIRST + (int)n };
		if (o->short_name) {
			shorts[ns++] = o->short_name;
			if (o->arg != SINK_FLAG)
				shorts[ns++] = ':';
			shorts[ns] = '\0';
		}
	}
	lo[n++] = (struct option){ "verbose", optional_argument, NULL, 'v' };
	lo[n++] = (struct option){ "version", no_argument, NULL, OPT_VERSION };
	lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n] = (struct option){ NULL, 0, NULL, 0 };

	*verbose = LOG_LVL_WARN;
	optind = 1;
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		const struct sink_opt *o = NULL;

		if (c == 'v') {
			if (log_verbose_option(def->prog, argc, argv, verbose))
				return EXIT_USAGE;
			continue;
		}
		if (c == 'h' || c == OPT_VERSION)
			return print_and_exit_code(def, c == OPT_VERSION);
		if (c >= OPT_FIRST)
			o = &def->opts[c - OPT_FIRST];
		else
			for (const struct sink_opt *x = def->opts; x->name && !o; x++)
				if (x->short_name && x->short_name == c)
					o = x;
		if (!o) {
			fprintf(stderr, "Try '%s --help'.\n", def->prog);
			return EXIT_USAGE;
		}
		if (set_value(def->prog, o, optarg))
			return EXIT_USAGE;
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument \"%s\" (the reports are read from stdin)\nTry '%s --help'.\n",
			def->prog, argv[optind], def->prog);
		return EXIT_USAGE;
	}
	return SINK_RUN;
}

int sink_start(const struct sink_def *def, int argc, char **argv)
{
	int verbose, rc, stdout_closed;

	/* Before anything opens a descriptor: a closed stdin is no stream, a closed stdout gets /dev/null. */
	stdout_closed = fcntl(1, F_GETFD) == -1 && errno == EBADF;
	rc = cli_std_fds(def->prog, CLI_STDIN);
	if (rc == -EBADF)
		return EXIT_SYSTEM;
	if (rc) {
		dprintf(2, "%s: cannot open /dev/null for a closed standard descriptor: %s\n", def->prog, strerror(-rc));
		return EXIT_SYSTEM;
	}
	/*
	 * Remember it on the descriptor itself, not in a variable: a stdout
	 * inherited across exec cannot be close-on-exec, so the flag on the
	 * /dev/null put there says "closed at start" to sink_need_stdout.
	 */
	if (stdout_closed)
		fcntl(1, F_SETFD, FD_CLOEXEC);
	rc = parse_args(def, argc, argv, &verbose);
	if (rc != SINK_RUN)
		return rc;
	log_init(def->prog, verbose);
	signal(SIGPIPE, SIG_IGN);
	return SINK_RUN;
}

int sink_need_stdout(const char *prog)
{
	int fl = fcntl(1, F_GETFD);

	if (fl == -1 || !(fl & FD_CLOEXEC))
		return 0;
	fprintf(stderr, "%s: cannot write to stdout: it was closed when the program started\n", prog);
	return EXIT_SYSTEM;
}

void sink_block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

/* ---- the stream loop ----------------------------------------------------- */

void sink_input_init(struct sink_input *in, const char *tag, int fd, size_t max_line)
{
	memset(in, 0, sizeof(*in));
	in->tag = tag;
	stream_init(&in->st, fd, "stdin", max_line);
}

void sink_input_free(struct sink_input *in)
{
	stream_free(&in->st);
}

void sink_input_set_wait(struct sink_input *in, int ms)
{
	stream_set_wait(&in->st, ms);
}

/* "stdin:LINE", without printf: it runs once per report. */
static void where_line(struct sink_input *in)
{
	char d[24];
	size_t n = 0, k = strlen(in->st.name);
	uint64_t line = in->st.lineno;

	if (k > sizeof(in->where) - 22)
		k = sizeof(in->where) - 22;
	memcpy(in->where, in->st.name, k);
	in->where[k++] = ':';
	do
		d[n++] = (char)('0' + line % 10);
	while (line /= 10);
	while (n)
		in->where[k++] = d[--n];
	in->where[k] = '\0';
}

int sink_input_next(struct sink_input *in, json_t **report)
{
	for (;;) {
		enum stream_bad why;
		size_t len;
		int rc = stream_next(&in->st, report, &len, &why, in->err, sizeof(in->err));

		in->lines = in->st.lineno;
		in->bytes = in->st.bytes;
		if (rc == STREAM_AGAIN)
			return SINK_INPUT_AGAIN;
		if (rc == 1) {
			in->reports++;
			where_line(in);
			return 1;
		}
		if (rc == 0)
			return 0;
		if (rc == -2)
			return -1;
		in->bad[why]++;
		in->bad_lines++;
		if (in->bad_lines <= BAD_LOG_FIRST)
			log_warn("%s: %s; skipped", in->tag, in->err);
		else if (in->bad_lines % 1000 == 0)
			log_warn("%s: %s; skipped (%llu bad lines so far)", in->tag, in->err,
				 (unsigned long long)in->bad_lines);
		if (in->on_bad)
			in->on_bad(in->ud, why);
	}
}

int sink_input_buffered(const struct sink_input *in)
{
	return stream_buffered(&in->st);
}

int sink_input_pending(const struct sink_input *in)
{
	struct pollfd p = { .fd = in->st.fd, .events = POLLIN };

	return sink_input_buffered(in) || (!in->st.eof && poll(&p, 1, 0) == 1);
}
