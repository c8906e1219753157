/* SPDX-License-Identifier: MIT */
/*
 * The sink driver (common/sink.c): the option table (each kind of value,
 * its bounds and its message), -v, --help and --version (checked: a full
 * stdout is exit 1 with a message), unexpected arguments, and the stream
 * loop (bad lines counted by kind, logged the first ten times then every
 * thousandth, "stdin:LINE" for each report). Each run of sink_start is in
 * a child process with its stdout and stderr in files.
 */
#include "../../common/log.h"
#include "../../common/sink.h"
#include "tap.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static struct {
	int flag;
	const char *str, *fn;
	unsigned long long n;
	int64_t ms;
	int choice, given_n;
} V;

static int parse_fn(const char *arg, void *dst, char *err, size_t errsz)
{
	if (strcmp(arg, "good")) {
		snprintf(err, errsz, "only \"good\" will do, got \"%s\"", arg);
		return -1;
	}
	*(const char **)dst = arg;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: accel-test [OPTION]...\n");
}

static const char *const colours[] = { "red", "green", "blue", NULL };
static const struct sink_opt table[] = {
	{ .name = "flag", .arg = SINK_FLAG, .dst = &V.flag },
	{ .name = "output", .short_name = 'o', .arg = SINK_STR, .dst = &V.str },
	{ .name = "count", .arg = SINK_UINT, .dst = &V.n, .min = 1, .max = 100, .given = &V.given_n },
	{ .name = "wait", .arg = SINK_DUR, .dst = &V.ms, .min = 10 },
	{ .name = "colour", .arg = SINK_CHOICE, .dst = &V.choice, .choices = colours },
	{ .name = "fn", .arg = SINK_FN, .dst = &V.fn, .parse = parse_fn },
	{ .name = NULL },
};
static const struct sink_def def = { "accel-test", usage, table };

static char out[4096], err[4096];

/* Read a whole small file into dst. */
static void slurp(const char *path, char *dst, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, dst, size - 1);

	dst[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

/*
 * sink_start(argv) in a child, stdout to stdout_path (NULL: a file read
 * back into out), stderr into err. Returns its exit status; the child
 * exits 100 + V.choice after SINK_RUN, with V written to stdout.
 */
static int run(const char *stdout_path, const char *const *args)
{
	char *argv[16];
	int argc = 0, st;
	pid_t pid;

	argv[argc++] = (char *)"accel-test";
	for (; *args; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int o = open(stdout_path ? stdout_path : "sink.out", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open("sink.err", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int rc;

		dup2(o, 1);
		dup2(e, 2);
		rc = sink_start(&def, argc, argv);
		if (rc != SINK_RUN)
			exit(rc);
		printf("flag=%d str=%s n=%llu given=%d ms=%lld fn=%s level=%d", V.flag, V.str ? V.str : "-", V.n,
		       V.given_n, (long long)V.ms, V.fn ? V.fn : "-", log_level());
		fflush(stdout);
		exit(100 + V.choice);
	}
	waitpid(pid, &st, 0);
	slurp("sink.out", out, sizeof(out));
	slurp("sink.err", err, sizeof(err));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void test_options(void)
{
	const struct {
		const char *const *args;
		int rc;
		const char *out, *err;
	} cases[] = {
		{ ARGS("--flag", "-o", "x.csv", "--count", "7", "--wait", "1.5s", "--colour", "blue", "--fn", "good"), 102,
		  "flag=1 str=x.csv n=7 given=1 ms=1500 fn=good level=1", "" },
		{ ARGS("--output=y", "-vv"), 100, "flag=0 str=y n=0 given=0 ms=0 fn=- level=3", "" },
		{ ARGS("--verbose", "0"), 100, "flag=0 str=- n=0 given=0 ms=0 fn=- level=0", "" },
		{ ARGS("--count", "0"), EXIT_USAGE, "", "accel-test: --count: expected 1 to 100, got \"0\"\n" },
		{ ARGS("--count", "101"), EXIT_USAGE, "", "accel-test: --count: expected 1 to 100, got \"101\"\n" },
		{ ARGS("--count", "-1"), EXIT_USAGE, "", "accel-test: --count: expected 1 to 100, got \"-1\"\n" },
		{ ARGS("--count", "5x"), EXIT_USAGE, "", "accel-test: --count: expected 1 to 100, got \"5x\"\n" },
		{ ARGS("--wait", "5ms"), EXIT_USAGE, "", "accel-test: --wait: too short, got \"5ms\"\n" },
		{ ARGS("--colour", "pink"), EXIT_USAGE, "",
		  "accel-test: --colour: expected red, green or blue, got \"pink\"\n" },
		{ ARGS("--fn", "bad"), EXIT_USAGE, "", "accel-test: --fn: only \"good\" will do, got \"bad\"\n" },
		{ ARGS("stray"), EXIT_USAGE, "",
		  "accel-test: unexpected argument \"stray\" (the reports are read from stdin)\nTry 'accel-test --help'.\n" },
		{ ARGS("--verbose=9"), EXIT_USAGE, "", "accel-test: --verbose: expected 0 to 4, got \"9\"\n" },
		{ ARGS("--help", "--count", "0"), EXIT_OK, "Usage: accel-test [OPTION]...\n", "" },
		{ ARGS("--version"), EXIT_OK, "accel-test " ACCEL_VERSION "\n", "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = run(NULL, cases[i].args);

		ok(rc == cases[i].rc, "case %zu (%s ...): exit %d (want %d)", i, cases[i].args[0], rc, cases[i].rc);
		is_str(out, cases[i].out, "  its stdout");
		is_str(err, cases[i].err, "  its stderr");
	}
	is_int(run(NULL, ARGS("--nope")), EXIT_USAGE, "an unknown option: usage error");
	ok(strstr(err, "Try 'accel-test --help'.") != NULL, "  pointing to --help");
}

static void test_full_stdout(void)
{
	is_int(run("/dev/full", ARGS("--help")), EXIT_SYSTEM, "--help >/dev/full: exit 1");
	is_str(err, "accel-test: cannot write to stdout: No space left on device\n", "  with a message");
	is_int(run("/dev/full", ARGS("--version")), EXIT_SYSTEM, "--version >/dev/full: exit 1");
	is_str(err, "accel-test: cannot write to stdout: No space left on device\n", "  with a message");
}

/*
 * sink_start, then sink_need_stdout, in a child whose stdout is closed
 * (closed: 1) or /dev/null; its exit status, stderr into err.
 */
static int need_stdout(int closed)
{
	char *argv[] = { (char *)"accel-test", NULL };
	int st;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int e = open("sink.err", O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(e, 2);
		if (closed)
			close(1);
		else
			dup2(open("/dev/null", O_WRONLY), 1);
		if (sink_start(&def, 1, argv) != SINK_RUN)
			_exit(50);
		_exit(sink_need_stdout("accel-test"));
	}
	waitpid(pid, &st, 0);
	slurp("sink.err", err, sizeof(err));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_closed_stdout(void)
{
	is_int(need_stdout(1), EXIT_SYSTEM, "stdout closed at start: a sink that writes there refuses to run");
	is_str(err, "accel-test: cannot write to stdout: it was closed when the program started\n", "  saying why");
	is_int(need_stdout(0), 0, "stdout on /dev/null: fine");
	is_str(err, "", "  nothing said");
}

/* Waiting in slices: SINK_INPUT_AGAIN while a line is not whole; lines and bytes counted. */
static void test_wait(void)
{
	struct sink_input in;
	json_t *rep = NULL;
	int p[2];

	if (pipe(p))
		return;
	sink_input_init(&in, "test", p[0], 0);
	sink_input_set_wait(&in, 20);
	is_int(sink_input_next(&in, &rep), SINK_INPUT_AGAIN, "quiet input: SINK_INPUT_AGAIN");
	ok(!sink_input_pending(&in), "nothing pending");
	ok(write(p[1], "{\"a\":", 5) == 5, "part of a line");
	ok(sink_input_pending(&in), "input pending");
	is_int(sink_input_next(&in, &rep), SINK_INPUT_AGAIN, "still SINK_INPUT_AGAIN");
	ok(write(p[1], "1}\n\n", 4) == 4, "the rest, and a blank line");
	is_int(sink_input_next(&in, &rep), 1, "the report");
	json_decref(rep);
	is_str(in.where, "stdin:1", "  stdin:1");
	close(p[1]);
	is_int(sink_input_next(&in, &rep), 0, "the end");
	is_int(in.lines, 2, "two lines read");
	is_int(in.bytes, 9, "nine bytes");
	sink_input_free(&in);
	close(p[0]);
}

static unsigned long long told[STREAM_BAD_COUNT];

static void on_bad(void *ud, enum stream_bad why)
{
	(void)ud;
	told[why]++;
}

static void test_input(void)
{
	struct sink_input in;
	FILE *f = tmpfile();
	int saved = dup(2), e = open("sink.err", O_WRONLY | O_CREAT | O_TRUNC, 0600), rc, n = 0;
	json_t *rep;

	fputs("{\"a\":1}\n[1]\nnope\n\n", f);
	for (int i = 0; i < 2000; i++)
		fputs("5\n", f);
	fputs("{\"b\":2}\n", f);
	rewind(f);
	log_init("accel-test", LOG_LVL_WARN);
	dup2(e, 2);
	sink_input_init(&in, "test", fileno(f), 0);
	in.on_bad = on_bad;
	while ((rc = sink_input_next(&in, &rep)) == 1) {
		n++;
		if (n == 1)
			is_str(in.where, "stdin:1", "the first report is stdin:1");
		json_decref(rep);
	}
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(e);
	is_int(rc, 0, "the input ends");
	is_int(n, 2, "two reports");
	is_int(in.reports, 2, "counted");
	is_str(in.where, "stdin:2005", "the last report is stdin:2005 (the blank line counts)");
	is_int(in.bad_lines, 2002, "2002 bad lines");
	is_int(in.bad[STREAM_BAD_JSON], 1, "one json");
	is_int(in.bad[STREAM_BAD_NOT_OBJECT], 2001, "2001 not_object");
	is_int(told[STREAM_BAD_NOT_OBJECT], 2001, "each told to on_bad");
	sink_input_free(&in);
	fclose(f);
	slurp("sink.err", err, sizeof(err));
	{
		int lines = 0;

		for (const char *p = err; *p; p++)
			lines += *p == '\n';
		is_int(lines, 12, "logged: the first ten, then the 1000th and the 2000th");
	}
	ok(strstr(err, "accel-test: warning: test: stdin:2: a report must be a JSON object; skipped\n") != NULL,
	   "a bad line is named by its line");
	ok(strstr(err, "skipped (2000 bad lines so far)\n") != NULL, "a later one says how many so far");
}

int main(void)
{
	char dir[] = "/tmp/test_sink.XXXXXX";

	if (!mkdtemp(dir) || chdir(dir))
		return 2;
	test_options();
	test_full_stdout();
	test_closed_stdout();
	test_input();
	test_wait();
	unlink("sink.out");
	unlink("sink.err");
	if (chdir("/") == 0)
		rmdir(dir);
	return done_testing();
}
