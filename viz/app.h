/* app.h - the interactive viewer: window, event loop, key/mouse bindings. */
#ifndef TPB_VIZ_APP_H
#define TPB_VIZ_APP_H

#include <stdbool.h>
#include <stdint.h>

#include "layout.h"
#include "render.h"
#include "trace_read.h"

typedef struct {
    int width, height;        /* initial window size */
    double from, to;          /* initial cycle window; to <= from: fit all */
    int64_t selected;         /* initially selected event, -1 none */
    long exit_after;          /* quit after this many loop iterations, 0 never */
} viz_app_opts_t;

/* Everything the event handlers change (no globals). */
typedef struct {
    viz_trace_t *t;
    viz_layout_t L;
    viz_ui_t ui;
    bool quit;
    bool dirty;               /* redraw needed */
    bool dragging, drag_moved;
    int drag_x, drag_y, mouse_x, mouse_y;
    int64_t sel_lane;         /* lane of the selection, -1 none */
} viz_app_t;

/* Set up state for a width x height view (no SDL needed). */
int viz_app_init(viz_app_t *a, viz_trace_t *t, const viz_app_opts_t *o);
void viz_app_free(viz_app_t *a);

/* Character commands ('+', 'f', '/', '?', 'n', ' ', ...), as typed. */
void viz_app_char(viz_app_t *a, char c);
/* Advance the play cursor by dt seconds of wall time. */
void viz_app_tick(viz_app_t *a, double dt);
/* Select an event (or -1) and bring it into view. */
void viz_app_select(viz_app_t *a, int64_t ev);
/* Step the play cursor to the next (dir > 0) or previous instruction start
 * over all lanes and select that instruction. */
void viz_app_step(viz_app_t *a, int dir);

#ifdef TPB_WITH_VIEWER
#include "sdl_dyn.h"  /* <SDL.h>, its functions loaded on first use */
/* Handle one SDL event. */
void viz_app_event(viz_app_t *a, const SDL_Event *e);
/* Open a window and run until quit.  err is filled when no window can be
 * opened (no display) and -1 returned. */
int viz_app_run(viz_trace_t *t, const viz_app_opts_t *o, tpb_err_t *err);
#endif

#endif
