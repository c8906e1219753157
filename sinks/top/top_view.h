/* SPDX-License-Identifier: MIT */
/*
 * accel-top's frame: the model (top_model.h) laid out as text cells, with
 * no terminal code, so the plain --once frame and the ncurses screen are
 * the same layout (the golden tests see what a person sees).
 *
 * A frame is the header (host, instance, the report's time and age, CPU and
 * memory bars), then the body: one panel of two lines per device
 * (utilization and memory bars with sparklines over the history window),
 * each GPU's MIG instances as one indented line each under it, then the
 * process table (an endpoint runtime's model versions as indented rows
 * under it); in the interactive view a key line ends it. The body scrolls;
 * the help overlay and a device's detail view replace it.
 *
 * The table's columns have priorities: when the frame is too narrow for
 * all of them, POD/CONTAINER narrows to 13 cells, then the least important
 * go first (RSS, FAIL, CPU%, P50, then POD/CONTAINER), so an 80-column
 * frame keeps at least PID, NAME, DEVMEM, REQ/s and P99; DEVICES takes
 * what is left of the row.
 */
#ifndef ACCEL_TOP_VIEW_H
#define ACCEL_TOP_VIEW_H

#include "top_model.h"

#include <stdint.h>
#include <stdio.h>

/* What a cell is drawn with (the curses view maps these to colours and attributes). */
enum top_attr { TA_NONE, TA_BOLD, TA_HEAD, TA_BAR, TA_WARN, TA_BAD, TA_DIM, TA_COUNT };

struct top_cell {
	char ch[4];   /* one character, UTF-8 */
	uint8_t len;  /* its bytes; 0: a blank */
	uint8_t attr; /* enum top_attr */
};

/* A grid of w columns; rows grow as the frame is drawn (the --once frame has no height). */
struct top_canvas {
	int w, h;          /* h: rows drawn so far */
	int arows;
	struct top_cell *cells;
};

void top_canvas_init(struct top_canvas *c, int w);
void top_canvas_free(struct top_canvas *c);
/* Forget the rows drawn (keep the width and the memory). */
void top_canvas_clear(struct top_canvas *c);
/* Draw UTF-8 text at (y, x), cut at the right edge; returns the column after it. */
int top_canvas_put(struct top_canvas *c, int y, int x, const char *s, int attr);
/* Row y as text, trailing blanks left out, with a newline (for --once). */
void top_canvas_print(const struct top_canvas *c, FILE *f);

enum top_sort { SORT_DEVMEM, SORT_CPU, SORT_RSS, SORT_PID, SORT_NAME, SORT_POD, SORT_RATE, SORT_P99, SORT_COUNT };
extern const char *const top_sort_names[SORT_COUNT];

struct top_view {
	int utf8;          /* block characters for sparklines; else ASCII */
	int interactive;   /* the key line and a screen-high frame */
	int height;        /* interactive: the screen's rows */
	int64_t now_mono_ns;
	int64_t stale_ms;  /* 0: three times the longest period, at least 5 s */
	int64_t history_ms; /* the sparklines' window */
	enum top_sort sort;
	int reverse;
	char filter[64];
	int filtering;     /* the filter is being typed */
	int scroll;        /* body rows scrolled off the top */
	int help;
	int detail;        /* -1: none; else the device index shown */
	int paused;
	char status[160];  /* a line for the key line: end of input, the last message */
};

void top_view_init(struct top_view *v);

/*
 * Draw the frame into c (cleared first). Interactive: exactly v->height
 * rows, with the body from v->scroll (clamped, and written back). Returns
 * the body's full height in rows.
 */
int top_view_render(const struct top_model *m, struct top_view *v, struct top_canvas *c);

/*
 * Redraw only the header rows of a frame top_view_render drew into c (the
 * report's age moves while nothing else does: the once-a-second redraw of
 * an idle view costs this, not a layout). Returns the header's rows.
 */
int top_view_render_header(const struct top_model *m, struct top_view *v, struct top_canvas *c);

/* Whether the last report is older than the stale limit. */
int top_view_stale(const struct top_model *m, const struct top_view *v);

#endif
