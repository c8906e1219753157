/* SPDX-License-Identifier: MIT */
/* accel-top's ncurses view and its event loop; see top_tty.h. */
#include "top_tty.h"
#include "../../common/cli.h"
#include "../../common/log.h"
#include "../../common/sink.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"
#include "top_model.h"
#include "top_url.h"
#include "top_view.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <term.h>
#include <termios.h>
#include <unistd.h>

#define TICK_MS 1000        /* the age on the header moves once a second */
#define ERR_KEEP (64 << 10) /* captured stderr kept for after the view */

/*
 * What the signal handlers reach, at file scope because a handler is
 * given nothing else: the signal pipe's write end (on_signal), and what
 * restores the terminal (on_crash), prepared before it can be needed.
 * top_tty_run sets it up and clears it; nothing else in the program uses it.
 */
static struct {
	int sig_wr;             /* the signal pipe's write end; -1: none */
	int tty_fd;             /* the terminal; -1: none */
	int saved_ok;           /* saved holds the terminal's modes from before the view */
	struct termios saved;
	char restore[128];      /* the terminal's sgr0, cnorm, rmkx and rmcup strings */
	size_t restore_len;
} handler = { .sig_wr = -1, .tty_fd = -1 };

int top_tty_capture_stderr(struct top_capture *c)
{
	int p[2];

	c->pipe = c->real_stderr = -1;
	c->last[0] = '\0';
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	c->real_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (c->real_stderr < 0 || dup2(p[1], STDERR_FILENO) < 0) {
		int e = errno;

		if (c->real_stderr >= 0)
			close(c->real_stderr);
		c->real_stderr = -1;
		close(p[0]);
		close(p[1]);
		return -e;
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	c->pipe = p[0];
	buf_init(&c->kept, ERR_KEEP);
	return 0;
}

/* Put stderr back and write what was captured there. */
static void release_stderr(struct top_capture *c)
{
	if (!c || c->real_stderr < 0)
		return;
	dup2(c->real_stderr, STDERR_FILENO);
	close(c->real_stderr);
	c->real_stderr = -1;
	if (c->kept.len)
		write_all(STDERR_FILENO, c->kept.data, c->kept.len);
	buf_free(&c->kept);
	close(c->pipe);
	c->pipe = -1;
}

/* Read what the captured stderr holds: kept for later, its last line for the key line. 1 when there was some. */
static int drain_stderr(struct top_capture *c)
{
	char b[4096];
	ssize_t n;
	int got = 0;

	while ((n = read(c->pipe, b, sizeof(b))) > 0) {
		got = 1;
		buf_add(&c->kept, b, (size_t)n); /* past the cap the rest is dropped */
	}
	if (got && c->kept.len) {
		size_t e = c->kept.len, s;

		while (e > 0 && c->kept.data[e - 1] == '\n')
			e--;
		for (s = e; s > 0 && c->kept.data[s - 1] != '\n'; s--)
			;
		snprintf(c->last, sizeof(c->last), "%.*s", (int)(e - s), c->kept.data + s);
	}
	return got;
}

static void on_signal(int sig)
{
	unsigned char c = (unsigned char)sig;
	int e = errno;

	if (write(handler.sig_wr, &c, 1) < 0) {
		/* the pipe is full: a signal of the same kind is already waiting */
	}
	errno = e;
}

/* A crash: restore the terminal with async-signal-safe calls only, then die of the signal. */
static void on_crash(int sig)
{
	if (handler.tty_fd >= 0) {
		if (handler.saved_ok)
			tcsetattr(handler.tty_fd, TCSANOW, &handler.saved);
		if (write(handler.tty_fd, handler.restore, handler.restore_len) < 0) {
			/* nothing more can be done from here */
		}
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* A terminfo string for the crash handler, if the terminal has it. */
static void add_restore(const char *cap)
{
	char *s = tigetstr((char *)cap);
	size_t n;

	if (!s || s == (char *)-1)
		return;
	n = strlen(s);
	if (handler.restore_len + n < sizeof(handler.restore)) {
		memcpy(handler.restore + handler.restore_len, s, n);
		handler.restore_len += n;
	}
}

static void install_signals(void)
{
	static const int crash[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGWINCH, &sa, NULL);
	sa.sa_handler = on_crash;
	sa.sa_flags = SA_RESETHAND;
	for (size_t i = 0; i < sizeof(crash) / sizeof(crash[0]); i++)
		sigaction(crash[i], &sa, NULL);
}

/* Each top_attr's curses attributes. */
static void setup_colors(attr_t attrs[TA_COUNT], int color)
{
	attrs[TA_BOLD] = A_BOLD;
	attrs[TA_HEAD] = A_REVERSE;
	attrs[TA_DIM] = A_NORMAL;
	attrs[TA_WARN] = A_BOLD;
	attrs[TA_BAD] = A_BOLD;
	if (color && has_colors() && start_color() == OK) {
		use_default_colors();
		init_pair(1, COLOR_GREEN, -1);
		init_pair(2, COLOR_YELLOW, -1);
		init_pair(3, COLOR_RED, -1);
		attrs[TA_BAR] = COLOR_PAIR(1);
		attrs[TA_WARN] = COLOR_PAIR(2) | A_BOLD;
		attrs[TA_BAD] = COLOR_PAIR(3) | A_BOLD;
	}
}

/*
 * Rows [from, to) of the canvas onto the screen, a run of one attribute at a
 * time (every cell is written, so a row needs no erase); the whole screen is
 * erased first when from is 0 and to covers it. curses sends only what changed.
 */
static void draw(const struct top_canvas *c, const attr_t attrs[TA_COUNT], int from, int to)
{
	char run[4096];

	if (from == 0 && to >= LINES)
		erase();
	for (int y = from; y < c->h && y < to; y++) {
		const struct top_cell *row = &c->cells[(size_t)y * (size_t)c->w];
		int x = 0;

		while (x < c->w) {
			int a = row[x].attr, x0 = x;
			size_t n = 0;

			while (x < c->w && row[x].attr == a && n + 4 < sizeof(run)) {
				if (row[x].len) {
					memcpy(run + n, row[x].ch, row[x].len);
					n += row[x].len;
				} else {
					run[n++] = ' ';
				}
				x++;
			}
			run[n] = '\0';
			attrset(attrs[a]);
			/* the bottom-right cell: curses cannot scroll there, the error is harmless */
			mvaddstr(y, x0, run);
		}
	}
	attrset(A_NORMAL);
	refresh();
}

struct loop {
	struct top_model m;
	struct top_view v;
	struct top_canvas c;
	struct sink_input in;
	struct top_url *url;
	struct top_capture *cap; /* captured stderr (borrowed), or NULL */
	int tty_fd;              /* the terminal (/dev/tty) */
	int sig_rd;              /* the signal pipe's read end */
	attr_t attrs[TA_COUNT];  /* each top_attr's curses attributes */
	int64_t next_poll;
	int quit, eof, ended_rc;
	char end_msg[600];
};

static void render(struct loop *l)
{
	int w = COLS, h = LINES;

	if (l->c.w != (w < 20 ? 20 : w)) {
		top_canvas_free(&l->c);
		top_canvas_init(&l->c, w);
	}
	l->v.height = h;
	l->v.now_mono_ns = clock_mono_ns();
	snprintf(l->v.status, sizeof(l->v.status), "%s", l->cap ? l->cap->last : "");
	top_view_render(&l->m, &l->v, &l->c);
	draw(&l->c, l->attrs, 0, h);
}

/* The once-a-second redraw when nothing else changed: the header only (the age). */
static void render_header(struct loop *l)
{
	l->v.now_mono_ns = clock_mono_ns();
	draw(&l->c, l->attrs, 0, top_view_render_header(&l->m, &l->v, &l->c));
}

/* One key; 1 when the frame changes. */
static int key(struct loop *l, int k)
{
	struct top_view *v = &l->v;
	int page = LINES - 4 > 1 ? LINES - 4 : 1;

	if (v->filtering) {
		size_t n = strlen(v->filter);

		if (k == '\n' || k == '\r' || k == KEY_ENTER)
			v->filtering = 0;
		else if (k == 27) {
			v->filtering = 0;
			v->filter[0] = '\0';
		} else if ((k == KEY_BACKSPACE || k == 127 || k == 8) && n)
			v->filter[n - 1] = '\0';
		else if (k >= 0x20 && k < 0x7f && n + 1 < sizeof(v->filter)) {
			v->filter[n] = (char)k;
			v->filter[n + 1] = '\0';
		}
		v->scroll = 0;
		return 1;
	}
	if (k == 'q') {
		l->quit = 1;
		return 0;
	}
	if (v->help) {
		v->help = 0;
		return 1;
	}
	switch (k) {
	case 'h':
	case '?':
		v->help = 1;
		break;
	case 's':
		v->sort = (enum top_sort)((v->sort + 1) % SORT_COUNT);
		break;
	case 'r':
		v->reverse = !v->reverse;
		break;
	case '/':
		v->filtering = 1;
		break;
	case 'd':
		v->detail = (size_t)(v->detail + 1) < l->m.ndevs ? v->detail + 1 : -1;
		v->scroll = 0;
		break;
	case 27:
		v->detail = -1;
		break;
	case KEY_UP:
		v->scroll--;
		break;
	case KEY_DOWN:
		v->scroll++;
		break;
	case KEY_PPAGE:
		v->scroll -= page;
		break;
	case KEY_NPAGE:
		v->scroll += page;
		break;
	case KEY_HOME:
		v->scroll = 0;
		break;
	case KEY_END:
		v->scroll = 1 << 28;
		break;
	case 'p':
		v->paused = !v->paused;
		break;
	default:
		return 0;
	}
	return 1;
}

/* Read what the stream has: every complete report, then one more read at most. */
static void ingest(struct loop *l)
{
	json_t *rep;
	int rc;

	do {
		rc = sink_input_next(&l->in, &rep);
		if (rc == 1) {
			top_model_report(&l->m, rep, clock_real_ns() / 1000000, clock_mono_ns());
			json_decref(rep);
		}
	} while (rc == 1 && sink_input_buffered(&l->in));
	if (rc == 0) {
		l->eof = 1;
		snprintf(l->end_msg, sizeof(l->end_msg), "accel-top: end of input after %llu reports\n",
			 (unsigned long long)l->in.reports);
	} else if (rc < 0) {
		l->eof = 1;
		l->ended_rc = EXIT_SYSTEM;
		snprintf(l->end_msg, sizeof(l->end_msg), "accel-top: %s\n", l->in.err);
	}
}

static void resize(int tty_fd)
{
	struct winsize ws;

	if (ioctl(tty_fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
		resizeterm(ws.ws_row, ws.ws_col);
}

/* Start curses on the terminal tf, in the mode the view needs. The screen, or NULL. */
static SCREEN *start_curses(FILE *tf, struct loop *l, const struct top_tty_opts *o)
{
	SCREEN *scr = newterm(NULL, tf, tf);

	if (!scr)
		return NULL;
	add_restore("sgr0");
	add_restore("cnorm");
	add_restore("rmkx");
	add_restore("rmcup");
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(50);
	curs_set(0);
	setup_colors(l->attrs, o->color);
	return scr;
}

/*
 * How long the loop may wait (ms) before it has something to draw: the next
 * tick of the header's clock, now when input is buffered, and with --url
 * the next poll (which is done here when due: then 0 and *polled 1, the
 * frame is new).
 */
static int64_t next_wait(struct loop *l, const struct top_tty_opts *o, int64_t last_draw, int *polled)
{
	int64_t wait = TICK_MS - (clock_mono_ns() - last_draw) / 1000000;

	if (!l->v.paused && sink_input_buffered(&l->in))
		wait = 0;
	if (l->url && !l->v.paused) {
		int64_t due = (l->next_poll - clock_mono_ns()) / 1000000;

		if (due <= 0) {
			char err[512];

			if (top_url_poll(l->url, &l->m, err, sizeof(err)))
				log_warn("top: %s", err);
			l->next_poll = clock_mono_ns() + o->interval_ms * 1000000;
			*polled = 1;
			return 0;
		}
		if (due < wait)
			wait = due;
	}
	return wait < 0 ? 0 : wait;
}

/*
 * What poll() found in p (the stream, the terminal, the signal pipe, the
 * captured stderr): signals, new reports, keys, the terminal going away.
 * 1 when the frame must be drawn again.
 */
static int handle(struct loop *l, const struct pollfd *p)
{
	int dirty = 0, k;

	if (p[2].revents & POLLIN) {
		unsigned char s[16];
		ssize_t n = read(l->sig_rd, s, sizeof(s));

		for (ssize_t i = 0; i < n; i++) {
			if (s[i] == SIGWINCH) {
				resize(l->tty_fd);
				dirty = 1;
			} else {
				l->quit = 1;
			}
		}
	}
	if (!l->v.paused && !l->url && ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) || sink_input_buffered(&l->in))) {
		ingest(l);
		dirty = 1;
	}
	if (p[1].revents & POLLIN)
		while ((k = getch()) != ERR)
			dirty |= k == KEY_RESIZE ? 1 : key(l, k);
	if (l->cap && (p[3].revents & POLLIN))
		dirty |= drain_stderr(l->cap);
	if (p[1].revents & (POLLHUP | POLLERR))
		l->quit = 1; /* the terminal is gone */
	return dirty;
}

int top_tty_run(const struct top_tty_opts *o, struct top_capture *cap)
{
	struct loop l;
	FILE *tf = NULL;
	SCREEN *scr = NULL;
	int rc = EXIT_OK, sig_pipe[2] = { -1, -1 };
	int64_t last_draw = 0;

	memset(&l, 0, sizeof(l));
	l.cap = cap && cap->pipe >= 0 ? cap : NULL;
	l.tty_fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
	if (l.tty_fd < 0) {
		log_err("top: cannot open the terminal (/dev/tty): %s; --once prints a frame without one",
			strerror(errno));
		rc = EXIT_SYSTEM;
		goto out;
	}
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK)) {
		log_err("top: pipe: %s", strerror(errno));
		rc = EXIT_SYSTEM;
		goto out;
	}
	l.sig_rd = sig_pipe[0];
	handler.sig_wr = sig_pipe[1];
	handler.tty_fd = l.tty_fd;
	handler.saved_ok = tcgetattr(l.tty_fd, &handler.saved) == 0;
	handler.restore_len = 0;
	install_signals(); /* SIGWINCH is ours before curses starts, so curses leaves it alone */
	tf = fdopen(l.tty_fd, "r+");
	if (!tf || !(scr = start_curses(tf, &l, o))) {
		log_err("top: cannot start the terminal (TERM=%s)", getenv("TERM") ? getenv("TERM") : "");
		rc = EXIT_SYSTEM;
		goto out;
	}

	top_model_init(&l.m);
	top_view_init(&l.v);
	l.v.interactive = 1;
	l.v.utf8 = !o->ascii && !strcmp(nl_langinfo(CODESET), "UTF-8");
	l.v.history_ms = o->history_ms;
	l.v.stale_ms = o->stale_ms;
	top_canvas_init(&l.c, COLS);
	sink_input_init(&l.in, "top", o->fd, o->max_line);
	if (o->url)
		l.url = top_url_new(o->url, o->interval_ms);
	render(&l);
	last_draw = clock_mono_ns();

	while (!l.quit && !l.eof) {
		struct pollfd p[4] = {
			{ .fd = l.v.paused || l.url ? -1 : o->fd, .events = POLLIN },
			{ .fd = l.tty_fd, .events = POLLIN },
			{ .fd = l.sig_rd, .events = POLLIN },
			{ .fd = l.cap ? l.cap->pipe : -1, .events = POLLIN },
		};
		int dirty = 0;
		int64_t wait = next_wait(&l, o, last_draw, &dirty);

		if (poll(p, 4, (int)wait) < 0 && errno != EINTR) {
			log_err("top: poll: %s", strerror(errno));
			rc = EXIT_SYSTEM;
			break;
		}
		dirty |= handle(&l, p);
		if (l.quit)
			break;
		if (dirty)
			render(&l);
		else if ((clock_mono_ns() - last_draw) / 1000000 >= TICK_MS)
			render_header(&l);
		else
			continue;
		last_draw = clock_mono_ns();
	}
	if (l.eof)
		rc = l.ended_rc;

out:
	if (scr) {
		endwin();
		delscreen(scr);
	}
	if (handler.saved_ok)
		tcsetattr(l.tty_fd, TCSANOW, &handler.saved);
	handler.tty_fd = -1; /* before the descriptor closes: the crash handler writes to it no more */
	handler.saved_ok = 0;
	if (tf)
		fclose(tf);
	else if (l.tty_fd >= 0)
		close(l.tty_fd);
	if (l.cap)
		drain_stderr(l.cap);
	release_stderr(cap);
	if (l.end_msg[0])
		fputs(l.end_msg, stderr);
	if (sig_pipe[0] >= 0) {
		handler.sig_wr = -1; /* a late signal's write fails instead of reaching a reused descriptor */
		close(sig_pipe[0]);
		close(sig_pipe[1]);
	}
	sink_input_free(&l.in);
	top_url_free(l.url);
	top_canvas_free(&l.c);
	top_model_free(&l.m);
	return rc;
}
