/* fuzz_trace: the viewer's trace reader (viz/trace_read.c) and its layout
 * math (viz/layout.c, what `tpb view` does with the trace before drawing).
 * Every input ends in a trace or an error naming the file; an accepted
 * trace is internally consistent (sorted lane events, extents that cover
 * them), and laying it out fitted to a window, zoomed in and out, gives
 * spans inside the plot, utilisations in 0..1 and hits inside the lane. */
#include <stdint.h>
#include <string.h>

#include "fuzz_util.h"
#include "layout.h"
#include "trace_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_span(void *ctx, const viz_span_t *sp)
{
    const viz_view_t *v = ctx;
    FUZZ_CHECK(sp->x1 > sp->x0 && sp->x0 >= v->x0 - 2 && sp->x1 <= v->x0 + v->w + 2 &&
                   sp->row < VIZ_MAX_ROWS && sp->count >= 1 && sp->fill >= 0 && sp->fill <= 1,
               "span [%d, %d) row %u count %u fill %g in a plot [%d, %d)", sp->x0, sp->x1, sp->row,
               sp->count, sp->fill, v->x0, v->x0 + v->w);
}

/* The view and layout math on an accepted trace, at three zoom levels. */
static void check_layout(const viz_trace_t *t)
{
    viz_layout_t L;
    FUZZ_CHECK(viz_layout_init(&L, t, 640, 480) == 0, "viz_layout_init: out of memory");
    static float util[1024];
    for (int z = 0; z < 3; z++) {
        if (z)
            viz_view_zoom(&L.view, z == 1 ? 1e6 : 1e-9, L.view.x0 + L.view.w / 2.0);
        const viz_view_t *v = &L.view;
        FUZZ_CHECK(v->w >= 1 && v->w <= 1024 && v->cpp > 0, "view w %d cpp %g", v->w, v->cpp);
        for (uint32_t i = 0; i < t->nlanes && i < 64; i++) {
            viz_lane_spans(t, v, i, check_span, (void *)v);
            viz_lane_util(t, v, i, util);
            for (int x = 0; x < v->w; x++)
                FUZZ_CHECK(util[x] >= 0 && util[x] <= 1, "lane %u column %d: util %g", i, x, util[x]);
            int64_t h = viz_lane_hit(t, i, 0, viz_view_cycle(v, v->x0 + v->w / 2.0), 1e9);
            FUZZ_CHECK(h < (int64_t)t->nev && (h < 0 || t->ev[h].lane == i), "lane %u: hit %lld", i,
                       (long long)h);
        }
    }
    viz_layout_free(&L);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 18)
        return 0;
    viz_trace_t t;
    tpb_err_t err = { { 0 } };
    memset(&t, 0, sizeof t);
    if (viz_trace_parse((const char *)data, size, "t.json", &t, &err) != 0) {
        FUZZ_CHECK(strstr(err.msg, "t.json") != NULL, "message without the file: %s", err.msg);
    } else {
        for (uint32_t i = 0; i < t.nlanes; i++) {
            const viz_lane_t *l = &t.lanes[i];
            FUZZ_CHECK(l->nev <= t.nev, "lane %u has %u of %u events", i, l->nev, t.nev);
            for (uint32_t j = 0; j < l->nev; j++) {
                FUZZ_CHECK(l->ev[j] < t.nev, "lane %u: event index %u", i, l->ev[j]);
                const viz_event_t *e = &t.ev[l->ev[j]];
                FUZZ_CHECK(e->end >= e->start && e->lane == i, "event %u", l->ev[j]);
                FUZZ_CHECK(j == 0 || t.ev[l->ev[j - 1]].start <= e->start, "lane %u unsorted", i);
            }
        }
        FUZZ_CHECK(t.nev == 0 || t.first_cycle <= t.last_cycle, "extent %llu..%llu",
                   (unsigned long long)t.first_cycle, (unsigned long long)t.last_cycle);
        check_layout(&t);
    }
    viz_trace_free(&t);
    return 0;
}
