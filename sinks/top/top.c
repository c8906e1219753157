/* SPDX-License-Identifier: MIT */
/*
 * accel-top: a live terminal view of the report stream, one pipe away.
 *
 *   accel-monitor | accel-top
 *   accel-top -- accel-monitor -c my.json
 *   accel-monitor --once | accel-top --once      (one plain-text frame)
 *
 * The model (top_model.h) is built from the samples the mapping yields; the
 * frame (top_view.h) is laid out as text cells; this file is the input (the
 * sink driver's stream loop on stdin or on a child's stdout) and the
 * terminal (top_tty.h).
 */
#include "../../common/log.h"
#include "../../common/sink.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"
#include "top_model.h"
#include "top_tty.h"
#include "top_url.h"
#include "top_view.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct opts {
	int once, no_color, ascii;
	unsigned long long width, height;
	int64_t history_ms, stale_ms, interval_ms;
	const char *url;
	unsigned long long max_line;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: accel-top [OPTION]... [-- COMMAND [ARG]...]\n"
		"  or:  accel-top [OPTION]... --url URL\n"
		"Show accel-monitor or neuron-monitor reports (one JSON object per line, from\n"
		"stdin or from COMMAND's stdout) as a live full-screen view of every device,\n"
		"runtime and process (see docs/accel-top.md); or poll accel-prom's /metrics.\n"
		"\n"
		"      --url URL           read accel-prom's exposition at URL (\"http://node:8000/metrics\")\n"
		"                          instead of a stream\n"
		"      --interval DUR      --url: poll every DUR (default 2s)\n"
		"      --once              read the input to its end, print one plain-text frame\n"
		"                          to stdout and exit (no terminal needed)\n"
		"      --width N           --once: the frame's width (default: $COLUMNS, else 80)\n"
		"      --height N          --once: the frame a screen N rows high shows (the body\n"
		"                          cut to fit, the key line last); default: every row\n"
		"      --history DUR       the sparklines' window (default 5m)\n"
		"      --stale DUR         the report's age turns red after DUR (default: three\n"
		"                          times the longest group period, at least 5s)\n"
		"      --no-color          no colours (also when NO_COLOR is set and not empty)\n"
		"      --ascii             ASCII sparklines even in a UTF-8 locale\n"
		"      --max-line-bytes N  skip input lines longer than N bytes (default %u)\n"
		"  -v, --verbose[=N]       log level: 0 silent, 1 errors and warnings (default),\n"
		"                          2 info, 3 debug, 4 everything; -v, -vv raise it\n"
		"      --version           print the version and exit\n"
		"  -h, --help              print this help and exit\n"
		"\n"
		"Keys: q quit, h or ? help, s sort, r reverse, / filter, d device detail,\n"
		"arrows, PgUp, PgDn scroll, p pause.\n"
		"\n"
		"The view reads the terminal (/dev/tty), so stdin can carry the stream. At the\n"
		"end of the input accel-top restores the terminal and exits with a message.\n"
		"\n"
		"Exit codes: 0 ok, 1 system error, 2 usage error, 3 configuration error.\n",
		STREAM_DEFAULT_MAX_LINE);
}

/* Start argv[0] (the command after "--") with its stdout on a pipe; the read end, or -errno. *child: its pid. */
static int spawn_child(char **argv, pid_t *child)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	*child = fork();
	if (*child < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (*child == 0) {
		signal(SIGPIPE, SIG_DFL);
		dup2(p[1], STDOUT_FILENO);
		execvp(argv[0], argv);
		dprintf(2, "accel-top: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	return p[0];
}

/* Stop the child (if it still runs; grace: after up to 0.5 s) and say how it ended when it failed. */
static void reap_child(pid_t child, int grace)
{
	int st;

	if (child <= 0)
		return;
	/* At the end of its output a child is about to exit: give it a moment before stopping it. */
	for (int i = 0; grace && i < 50 && waitpid(child, &st, WNOHANG) == 0; i++)
		sleep_ns(10 * NS_PER_MS, NULL);
	if (waitpid(child, &st, WNOHANG) == 0) {
		kill(child, SIGTERM);
		waitpid(child, &st, 0);
		return;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st))
		log_warn("top: the command exited with status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		log_warn("top: the command was killed by signal %d", WTERMSIG(st));
}

/* --once: the input to its end, then one frame on stdout. */
static int run_once(const struct opts *o, int fd)
{
	struct sink_input in;
	struct top_model m;
	struct top_view v;
	struct top_canvas c;
	json_t *rep;
	int rc, ret = EXIT_OK;
	const char *cols = getenv("COLUMNS");
	int width = (int)o->width;

	if (!width)
		width = cols && atoi(cols) >= 20 && atoi(cols) <= 1000 ? atoi(cols) : 80;
	if (sink_need_stdout("accel-top"))
		return EXIT_SYSTEM;
	top_model_init(&m);
	sink_input_init(&in, "top", fd, (size_t)o->max_line);
	if (o->url) {
		struct top_url *u = top_url_new(o->url, o->interval_ms);
		char err[512];

		rc = top_url_poll(u, &m, err, sizeof(err));
		top_url_free(u);
		if (rc) {
			log_err("top: %s", err);
			sink_input_free(&in);
			top_model_free(&m);
			return EXIT_SYSTEM;
		}
	}
	while (!o->url && (rc = sink_input_next(&in, &rep)) == 1) {
		top_model_report(&m, rep, clock_real_ns() / 1000000, clock_mono_ns());
		json_decref(rep);
	}
	if (rc < 0) {
		log_err("top: %s", in.err);
		ret = EXIT_SYSTEM;
	}
	top_view_init(&v);
	v.utf8 = !o->ascii && !strcmp(nl_langinfo(CODESET), "UTF-8");
	v.history_ms = o->history_ms;
	v.stale_ms = o->stale_ms;
	v.now_mono_ns = clock_mono_ns();
	if (o->height) {
		v.interactive = 1;
		v.height = (int)o->height;
	}
	top_canvas_init(&c, width);
	top_view_render(&m, &v, &c);
	top_canvas_print(&c, stdout);
	top_canvas_free(&c);
	sink_input_free(&in);
	top_model_free(&m);
	rc = cli_finish_stdout("accel-top");
	return ret ? ret : rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct top_capture cap = { .pipe = -1, .real_stderr = -1 };
	char **cmd = NULL;
	int rc, fd = STDIN_FILENO, nopt = argc;
	pid_t child = -1;

	const struct sink_opt table[] = {
		{ .name = "once", .arg = SINK_FLAG, .dst = &o.once },
		{ .name = "width", .arg = SINK_UINT, .dst = &o.width, .min = 20, .max = 1000 },
		{ .name = "height", .arg = SINK_UINT, .dst = &o.height, .min = 5, .max = 1000 },
		{ .name = "history", .arg = SINK_DUR, .dst = &o.history_ms, .min = 1000 },
		{ .name = "stale", .arg = SINK_DUR, .dst = &o.stale_ms, .min = 1 },
		{ .name = "no-color", .arg = SINK_FLAG, .dst = &o.no_color },
		{ .name = "ascii", .arg = SINK_FLAG, .dst = &o.ascii },
		{ .name = "max-line-bytes", .arg = SINK_UINT, .dst = &o.max_line, .min = 1, .max = 1 << 30 },
		{ .name = "url", .arg = SINK_STR, .dst = &o.url },
		{ .name = "interval", .arg = SINK_DUR, .dst = &o.interval_ms, .min = 100 },
		{ .name = NULL },
	};
	const struct sink_def def = { "accel-top", usage, table };

	memset(&o, 0, sizeof(o));
	o.history_ms = 5 * 60 * 1000;
	o.interval_ms = 2000;
	o.max_line = STREAM_DEFAULT_MAX_LINE;
	/* "-- COMMAND": the driver sees only the options before it. */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			nopt = i;
			cmd = argv + i + 1;
			break;
		}
	if (cmd && !*cmd) {
		fprintf(stderr, "accel-top: \"--\" without a command\nTry 'accel-top --help'.\n");
		return EXIT_USAGE;
	}
	if ((rc = sink_start(&def, nopt, argv)) != SINK_RUN)
		return rc;
	if (cmd && o.url) {
		fprintf(stderr, "accel-top: --url and -- COMMAND: give one input\nTry 'accel-top --help'.\n");
		return EXIT_USAGE;
	}
	if (o.url && strncmp(o.url, "http://", 7) && strncmp(o.url, "https://", 8)) {
		fprintf(stderr, "accel-top: --url: expected http:// or https://, got \"%s\"\n", o.url);
		return EXIT_USAGE;
	}
	setlocale(LC_ALL, "");
	if (getenv("NO_COLOR") && *getenv("NO_COLOR"))
		o.no_color = 1;
	/* Before the child starts, so that its messages are kept for after the view too. */
	if (!o.once && (rc = top_tty_capture_stderr(&cap))) {
		log_err("top: cannot capture stderr: %s", strerror(-rc));
		return EXIT_SYSTEM;
	}
	if (cmd) {
		fd = spawn_child(cmd, &child);
		if (fd < 0) {
			log_err("top: cannot start %s: %s", cmd[0], strerror(-fd));
			return EXIT_SYSTEM;
		}
	}
	if (o.once)
		rc = run_once(&o, fd);
	else
		rc = top_tty_run(&(struct top_tty_opts){ .fd = o.url ? -1 : fd,
							 .url = o.url,
							 .interval_ms = o.interval_ms,
							 .max_line = (size_t)o.max_line,
							 .history_ms = o.history_ms,
							 .stale_ms = o.stale_ms,
							 .color = !o.no_color,
							 .ascii = o.ascii },
				 &cap);
	reap_child(child, o.once);
	return rc;
}
