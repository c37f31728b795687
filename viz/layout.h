/* layout.h - time <-> pixel math, lanes, overlap rows and aggregation.
 * SDL-free: everything here is plain arithmetic on the trace model, so it is
 * unit-tested without a display. */
#ifndef TPB_VIZ_LAYOUT_H
#define TPB_VIZ_LAYOUT_H

#include <stdint.h>

#include "trace_read.h"

#define VIZ_MAX_ROWS 16          /* sub-rows per lane; deeper overlaps share the last */

/* ---- lanes (called by the reader after parsing) ----
 * Groups events into lanes: one per (core, engine tid) and one per (core,
 * DMA queue) whatever slot tid a transfer used; orders lanes by core, then
 * engines (thread_sort_index, else tid), then DMA queues; sorts each lane's
 * events by start cycle; assigns overlapping events to sub-rows (greedy,
 * first row free); computes busy / wait / bytes per lane. */
int viz_lanes_build(viz_trace_t *t, tpb_err_t *err);

/* ---- view: the visible cycle window mapped onto the plot area ---- */
typedef struct {
    double cyc0;   /* cycle at the plot's left edge */
    double cpp;    /* cycles per pixel, > 0 */
    int x0;        /* plot left edge, pixels */
    int w;         /* plot width, pixels (>= 1) */
} viz_view_t;

#define VIZ_MIN_CPP (1.0 / 64.0)  /* deepest zoom: 64 px per cycle */
#define VIZ_MAX_CPP 1e13

double viz_view_x(const viz_view_t *v, double cycle);
double viz_view_cycle(const viz_view_t *v, double x);
double viz_view_end(const viz_view_t *v);            /* cycle at the right edge */
/* Show [c0, c1) across the plot (c1 <= c0 shows one cycle). */
void viz_view_fit(viz_view_t *v, double c0, double c1);
/* Zoom by factor (>1 zooms in) keeping the cycle under anchor_x fixed. */
void viz_view_zoom(viz_view_t *v, double factor, double anchor_x);
void viz_view_pan_px(viz_view_t *v, double dx);      /* dx > 0 moves later */
/* A "nice" tick step in cycles (1, 2, 5 x 10^k) giving ~min_px between ticks. */
double viz_view_tick_step(const viz_view_t *v, double min_px);

/* ---- visible events ---- */
/* First index i in lane->ev whose event ends after `cycle` (binary search on
 * max_end); lane->nev if none. */
uint32_t viz_lane_first_visible(const viz_trace_t *t, const viz_lane_t *lane, double cycle);

/* A drawable span: one event, or several sub-pixel events merged. */
typedef struct {
    int x0, x1;            /* pixels, x1 > x0, clipped to the plot +-2 */
    uint32_t row;
    uint32_t ev;           /* the first (or only) event of the span */
    uint32_t count;        /* events merged (1 = a real box) */
    isa_class_t cls;       /* dominant class (most cycles) */
    double fill;           /* busy fraction of the span's cycles, 0..1 */
} viz_span_t;

typedef void (*viz_span_fn)(void *ctx, const viz_span_t *s);

/* Emit the spans of a lane visible in the view, left to right per row.
 * Events at least one pixel wide are their own span; narrower ones that
 * fall in adjacent pixel columns are merged, so the work per frame is
 * bounded by the visible events and the output by the plot width. */
void viz_lane_spans(const viz_trace_t *t, const viz_view_t *v, uint32_t lane,
                    viz_span_fn fn, void *ctx);

/* Busy fraction per plot column (out[0..v->w-1], 0..1) of a lane. */
void viz_lane_util(const viz_trace_t *t, const viz_view_t *v, uint32_t lane, float *out);

/* Event of the lane under (cycle, row), nearest within `slack` cycles;
 * -1 if none. */
int64_t viz_lane_hit(const viz_trace_t *t, uint32_t lane, uint32_t row, double cycle,
                     double slack);

/* Index (in lane->ev) of the next event starting after `cycle` (dir > 0) or
 * the previous one starting before it (dir < 0); -1 if none. */
int64_t viz_lane_step(const viz_trace_t *t, uint32_t lane, double cycle, int dir);

/* Counter value in force at `cycle` (the last sample at or before it);
 * *found = 0 before the first sample. */
int64_t viz_counter_at(const viz_counter_t *c, double cycle, int *found);
/* First sample index with cycle >= `cycle`. */
uint32_t viz_counter_lower(const viz_counter_t *c, double cycle);

/* ---- screen geometry ---- */
#define VIZ_ROW_H 16       /* one sub-row of a lane */
#define VIZ_UTIL_H 5       /* utilisation strip under an engine lane */
#define VIZ_LANE_GAP 3
#define VIZ_CTR_H 22       /* one semaphore track */
#define VIZ_LABEL_W 150    /* lane labels; the plot starts here */
#define VIZ_RIGHT_M 8
#define VIZ_HEADER_H 44    /* title line + time axis */
#define VIZ_PANEL_H 92     /* summary + details panel at the bottom */

typedef struct {
    int y, h;              /* lane box area (relative to the content top) */
    int util_y;            /* utilisation strip, 0 height for DMA/other lanes */
    int util_h;
} viz_lane_geom_t;

typedef struct {
    int width, height;     /* window */
    viz_view_t view;
    int lanes_top;         /* first pixel of the scrolling area */
    int lanes_bottom;      /* one past its last pixel */
    int scroll;            /* pixels scrolled down */
    int content_h;         /* lanes + counters, pixels */
    viz_lane_geom_t *lane; /* per lane */
    int *ctr_y;            /* per counter, relative to the content top */
    uint32_t nlanes, nctr;
} viz_layout_t;

/* Allocate geometry for the trace in a width x height window (plot fitted
 * to the whole trace).  Returns -1 on allocation failure. */
int viz_layout_init(viz_layout_t *L, const viz_trace_t *t, int width, int height);
/* Window resized: keep the cycle window, recompute plot width. */
void viz_layout_resize(viz_layout_t *L, int width, int height);
void viz_layout_free(viz_layout_t *L);
/* Screen y of a lane's row (top), honouring scroll. */
int viz_layout_row_y(const viz_layout_t *L, uint32_t lane, uint32_t row);
/* Lane and row under screen y; -1 when none. */
int viz_layout_lane_at(const viz_layout_t *L, const viz_trace_t *t, int y, uint32_t *row);
void viz_layout_scroll(viz_layout_t *L, int dy);

#endif
