/* test_viz_layout.c - time <-> pixel math, lane assignment, overlap rows,
 * visibility search, aggregation of sub-pixel boxes, utilisation, hit
 * testing, counters, screen geometry and the bitmap font. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "font.h"
#include "layout.h"
#include "trace_read.h"

/* Build a trace from a list of X events "pid tid start end" (cycles, clock 1). */
typedef struct {
    int pid, tid;
    unsigned long long start, end;
} ev_t;

static void make_trace(viz_trace_t *t, const ev_t *evs, size_t n, const char *extra_events)
{
    size_t cap = 256 + n * 160 + (extra_events ? strlen(extra_events) : 0);
    char *json = malloc(cap);
    assert_non_null(json);
    size_t len = (size_t)snprintf(json, cap, "{\"otherData\":{\"clock_ghz\":1},\"traceEvents\":[");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(json + len, cap - len,
                                "%s{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"name\":\"e%zu\",\"cat\":\"%s\","
                                "\"ts\":0,\"dur\":0,\"args\":{\"start_cycle\":%llu,\"end_cycle\":%llu}}",
                                i ? "," : "", evs[i].pid, evs[i].tid, i,
                                evs[i].tid >= 100 ? "dma" : "matmul", evs[i].start, evs[i].end);
    if (extra_events)
        len += (size_t)snprintf(json + len, cap - len, "%s%s", n ? "," : "", extra_events);
    snprintf(json + len, cap - len, "]}");
    tpb_err_t err = { { 0 } };
    if (viz_trace_parse(json, strlen(json), "gen.json", t, &err))
        fail_msg("%s", err.msg);
    free(json);
}

static void test_view_math(void **state)
{
    (void)state;
    viz_view_t v = { 0, 1, 100, 500 };
    viz_view_fit(&v, 1000, 2000);
    assert_true(fabs(v.cpp - 2.0) < 1e-12);
    assert_true(fabs(viz_view_x(&v, 1000) - 100) < 1e-9);
    assert_true(fabs(viz_view_x(&v, 2000) - 600) < 1e-9);
    assert_true(fabs(viz_view_cycle(&v, 350) - 1500) < 1e-9);
    assert_true(fabs(viz_view_end(&v) - 2000) < 1e-9);
    /* zoom keeps the cycle under the anchor in place */
    double before = viz_view_cycle(&v, 222);
    viz_view_zoom(&v, 4, 222);
    assert_true(fabs(v.cpp - 0.5) < 1e-12);
    assert_true(fabs(viz_view_cycle(&v, 222) - before) < 1e-9);
    viz_view_zoom(&v, 0.25, 222);
    assert_true(fabs(v.cpp - 2.0) < 1e-12);
    /* clamped at 64 px per cycle */
    for (int i = 0; i < 40; i++)
        viz_view_zoom(&v, 10, 300);
    assert_true(v.cpp == VIZ_MIN_CPP);
    viz_view_zoom(&v, -1, 300); /* ignored */
    assert_true(v.cpp == VIZ_MIN_CPP);
    /* pan: 10 px at 2 cycles/px = 20 cycles */
    viz_view_fit(&v, 1000, 2000);
    viz_view_pan_px(&v, 10);
    assert_true(fabs(v.cyc0 - 1020) < 1e-9);
    viz_view_pan_px(&v, -10);
    /* empty range shows one cycle */
    viz_view_fit(&v, 5, 5);
    assert_true(v.cpp == VIZ_MIN_CPP || fabs(v.cpp - 1.0 / 500) < 1e-12);
    assert_true(v.cpp > 0);
}

static void test_tick_step(void **state)
{
    (void)state;
    viz_view_t v = { 0, 1, 0, 1000 };
    assert_true(viz_view_tick_step(&v, 90) == 100);   /* want 90 -> 100 */
    v.cpp = 3;                                         /* want 270 -> 500 */
    assert_true(viz_view_tick_step(&v, 90) == 500);
    v.cpp = 1.5;                                       /* want 135 -> 200 */
    assert_true(viz_view_tick_step(&v, 90) == 200);
    v.cpp = 0.001;
    assert_true(viz_view_tick_step(&v, 90) == 1);      /* never below a cycle */
}

static void test_lane_assignment(void **state)
{
    (void)state;
    /* two cores given out of order, engines out of tid order, DMA slot tids
     * 100/101 of queue 0 and 116 of queue 2, and an unknown tid 42 */
    const ev_t evs[] = {
        { 2, 4, 0, 10 }, { 1, 116, 0, 10 }, { 1, 5, 0, 10 }, { 1, 101, 0, 10 },
        { 1, 1, 0, 10 }, { 1, 100, 5, 20 }, { 2, 1, 0, 10 }, { 1, 42, 0, 10 },
    };
    viz_trace_t t;
    make_trace(&t, evs, sizeof evs / sizeof evs[0],
               "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":116,\"args\":{\"name\":\"q2 qSyncIO2 [0]\"}},"
               "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":2,\"args\":{\"name\":\"core1\"}}");
    static const char *const want[] = { "core0 PE", "core0 SP", "core0 q0", "core0 q2 qSyncIO2",
                                        "core0 tid 42", "core1 PE", "core1 DVE" };
    assert_int_equal(t.nlanes, 7);
    for (int i = 0; i < 7; i++)
        assert_string_equal(t.lanes[i].name, want[i]);
    /* every event sits in the lane of its (pid, tid or queue) */
    for (uint32_t i = 0; i < t.nev; i++) {
        const viz_lane_t *l = &t.lanes[t.ev[i].lane];
        assert_int_equal(l->pid, t.ev[i].pid);
        if (t.ev[i].tid >= 100)
            assert_int_equal(l->queue, (t.ev[i].tid - 100) / 8);
        else
            assert_int_equal(l->tid, t.ev[i].tid);
    }
    assert_int_equal(t.lanes[2].nev, 2);
    assert_int_equal(t.lanes[2].nrows, 2);
    viz_trace_free(&t);

    /* thread_sort_index overrides tid order inside a core */
    const ev_t e2[] = { { 1, 1, 0, 1 }, { 1, 2, 0, 1 } };
    make_trace(&t, e2, 2,
               "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":1,\"tid\":1,\"args\":{\"sort_index\":9}},"
               "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":1,\"tid\":2,\"args\":{\"sort_index\":3}}");
    assert_string_equal(t.lanes[0].name, "core0 Activation");
    assert_string_equal(t.lanes[1].name, "core0 PE");
    viz_trace_free(&t);
}

static void test_overlap_rows_exact(void **state)
{
    (void)state;
    const ev_t evs[] = { { 1, 100, 0, 10 }, { 1, 101, 5, 15 }, { 1, 100, 12, 20 },
                         { 1, 102, 14, 30 }, { 1, 100, 30, 31 } };
    viz_trace_t t;
    make_trace(&t, evs, 5, NULL);
    const viz_lane_t *l = &t.lanes[0];
    /* greedy first-free: 14 overlaps row 0 (ends 20) and row 1 (ends 15) -> row 2 */
    assert_int_equal(t.ev[l->ev[3]].row, 2);
    assert_int_equal(t.ev[l->ev[4]].row, 0);
    assert_int_equal(l->nrows, 3);
    assert_int_equal(l->busy, 31);
    assert_int_equal(t.n_overlaps, 0); /* no slot tid overlaps itself */
    viz_trace_free(&t);
}

static void test_first_visible_with_long_event(void **state)
{
    (void)state;
    /* a long event first: everything after it ends later than it starts */
    const ev_t evs[] = { { 1, 100, 0, 1000 }, { 1, 101, 10, 20 }, { 1, 101, 30, 40 },
                         { 1, 101, 2000, 2010 } };
    viz_trace_t t;
    make_trace(&t, evs, 4, NULL);
    const viz_lane_t *l = &t.lanes[0];
    assert_int_equal(viz_lane_first_visible(&t, l, 500), 0);   /* the long one is visible */
    assert_int_equal(viz_lane_first_visible(&t, l, 1000), 3);  /* end is exclusive */
    assert_int_equal(viz_lane_first_visible(&t, l, 5000), 4);
    viz_trace_free(&t);
}

typedef struct {
    viz_span_t s[4096];
    int n;
} spans_t;

static void collect(void *ctx, const viz_span_t *s)
{
    spans_t *c = ctx;
    assert_true(c->n < 4096);
    assert_true(s->x1 > s->x0);
    c->s[c->n++] = *s;
}

static void test_spans_and_aggregation(void **state)
{
    (void)state;
    /* 1000 events of 5 cycles every 10 cycles on PE: [10i, 10i+5) */
    enum { N = 1000 };
    ev_t *evs = malloc(N * sizeof *evs);
    assert_non_null(evs);
    for (int i = 0; i < N; i++)
        evs[i] = (ev_t){ 1, 1, (unsigned long long)i * 10, (unsigned long long)i * 10 + 5 };
    viz_trace_t t;
    make_trace(&t, evs, N, NULL);
    free(evs);
    spans_t *c = calloc(1, sizeof *c);
    assert_non_null(c);

    /* zoomed in: 1 cycle per pixel over [100, 200): 10 boxes, 5 px each */
    viz_view_t v = { 0, 1, 50, 100 };
    viz_view_fit(&v, 100, 200);
    viz_lane_spans(&t, &v, 0, collect, c);
    assert_int_equal(c->n, 10);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(c->s[i].count, 1);
        assert_int_equal(c->s[i].x0, 50 + i * 10);
        assert_int_equal(c->s[i].x1, 50 + i * 10 + 5);
        assert_int_equal(c->s[i].cls, ISA_CLASS_MATMUL);
        assert_int_equal(t.ev[c->s[i].ev].start, 100 + (uint64_t)i * 10);
    }

    /* zoomed out: 100 cycles per pixel, every box is 0.05 px: merged into
     * spans no more numerous than the pixels, covering every event once */
    c->n = 0;
    viz_view_fit(&v, 0, 10000);
    viz_lane_spans(&t, &v, 0, collect, c);
    assert_true(c->n >= 1);
    assert_true(c->n <= v.w);
    uint32_t total = 0;
    for (int i = 0; i < c->n; i++) {
        total += c->s[i].count;
        assert_true(fabs(c->s[i].fill - 0.5) < 0.06); /* half the cycles are busy */
        if (i)
            assert_true(c->s[i].x0 >= c->s[i - 1].x1); /* no overlap in one row */
    }
    assert_int_equal(total, N);

    /* utilisation: half busy in every column */
    float util[100];
    viz_lane_util(&t, &v, 0, util);
    for (int x = 0; x < 100; x++)
        assert_true(fabs(util[x] - 0.5f) < 0.01f);
    /* a window past the end: nothing */
    c->n = 0;
    viz_view_fit(&v, 20000, 30000);
    viz_lane_spans(&t, &v, 0, collect, c);
    assert_int_equal(c->n, 0);
    viz_lane_util(&t, &v, 0, util);
    assert_true(util[0] == 0.0f && util[99] == 0.0f);
    /* a huge zoom far from 0 never overflows pixel ints */
    c->n = 0;
    viz_view_fit(&v, 102, 102.5);
    viz_lane_spans(&t, &v, 0, collect, c);
    assert_int_equal(c->n, 1);
    assert_true(c->s[0].x0 >= v.x0 - 2 && c->s[0].x1 <= v.x0 + v.w + 2);
    free(c);
    viz_trace_free(&t);
}

static void test_hit_and_step(void **state)
{
    (void)state;
    const ev_t evs[] = { { 1, 1, 0, 10 }, { 1, 1, 20, 30 }, { 1, 1, 40, 45 } };
    viz_trace_t t;
    make_trace(&t, evs, 3, NULL);
    assert_int_equal(viz_lane_hit(&t, 0, 0, 5, 0), 0);
    assert_int_equal(viz_lane_hit(&t, 0, 0, 25, 0), 1);
    assert_int_equal(viz_lane_hit(&t, 0, 0, 15, 0), -1);   /* in a gap */
    assert_int_equal(viz_lane_hit(&t, 0, 0, 18, 3), 1);    /* within slack: nearest */
    assert_int_equal(viz_lane_hit(&t, 0, 0, 11, 3), 0);
    assert_int_equal(viz_lane_hit(&t, 0, 1, 5, 0), -1);    /* wrong row */
    assert_int_equal(viz_lane_hit(&t, 9, 0, 5, 0), -1);    /* no such lane */
    assert_int_equal(viz_lane_step(&t, 0, 0, +1), 1);
    assert_int_equal(viz_lane_step(&t, 0, -0.5, +1), 0);
    assert_int_equal(viz_lane_step(&t, 0, 20, +1), 2);
    assert_int_equal(viz_lane_step(&t, 0, 40, +1), -1);
    assert_int_equal(viz_lane_step(&t, 0, 40, -1), 1);
    assert_int_equal(viz_lane_step(&t, 0, 20, -1), 0);
    assert_int_equal(viz_lane_step(&t, 0, 0, -1), -1);
    viz_trace_free(&t);
}

static void test_counters(void **state)
{
    (void)state;
    viz_trace_t t;
    make_trace(&t, NULL, 0,
               "{\"ph\":\"C\",\"pid\":1,\"name\":\"sem S1\",\"ts\":0.01,\"args\":{\"value\":3}},"
               "{\"ph\":\"C\",\"pid\":1,\"name\":\"sem S1\",\"ts\":0.02,\"args\":{\"value\":5}},"
               "{\"ph\":\"C\",\"pid\":1,\"name\":\"sem S1\",\"ts\":0.04,\"args\":{\"value\":-1}}");
    const viz_counter_t *c = &t.ctr[0];
    int found;
    assert_int_equal(viz_counter_at(c, 5, &found), 0);
    assert_false(found);
    assert_int_equal(viz_counter_at(c, 10, &found), 3);
    assert_true(found);
    assert_int_equal(viz_counter_at(c, 19.9, &found), 3);
    assert_int_equal(viz_counter_at(c, 20, &found), 5);
    assert_int_equal(viz_counter_at(c, 1e9, &found), -1);
    assert_int_equal(viz_counter_lower(c, 0), 0);
    assert_int_equal(viz_counter_lower(c, 11), 1);
    assert_int_equal(viz_counter_lower(c, 41), 3);
    assert_int_equal(c->vmin, -1);
    assert_int_equal(c->vmax, 5);
    assert_int_equal(t.last_cycle, 40);
    viz_trace_free(&t);
}

static void test_geometry(void **state)
{
    (void)state;
    const ev_t evs[] = { { 1, 1, 0, 1000 }, { 1, 100, 0, 10 }, { 1, 101, 0, 10 } };
    viz_trace_t t;
    make_trace(&t, evs, 3, "{\"ph\":\"C\",\"pid\":1,\"name\":\"s\",\"ts\":0,\"args\":{\"value\":1}}");
    viz_layout_t L;
    assert_int_equal(viz_layout_init(&L, &t, 800, 600), 0);
    assert_int_equal(L.view.x0, VIZ_LABEL_W);
    assert_int_equal(L.view.w, 800 - VIZ_LABEL_W - VIZ_RIGHT_M);
    assert_int_equal(L.lanes_top, VIZ_HEADER_H);
    assert_int_equal(L.lanes_bottom, 600 - VIZ_PANEL_H);
    /* PE lane: one row + utilisation strip; DMA lane: two rows, no strip */
    assert_int_equal(L.lane[0].h, VIZ_ROW_H);
    assert_int_equal(L.lane[0].util_h, VIZ_UTIL_H);
    assert_int_equal(L.lane[1].y, VIZ_ROW_H + VIZ_UTIL_H + VIZ_LANE_GAP);
    assert_int_equal(L.lane[1].h, 2 * VIZ_ROW_H);
    assert_int_equal(L.lane[1].util_h, 0);
    assert_true(L.ctr_y[0] >= L.lane[1].y + L.lane[1].h);
    /* lane_at inverts row_y for every row */
    for (uint32_t ln = 0; ln < t.nlanes; ln++)
        for (uint32_t r = 0; r < t.lanes[ln].nrows; r++) {
            uint32_t row = 99;
            int y = viz_layout_row_y(&L, ln, r);
            assert_int_equal(viz_layout_lane_at(&L, &t, y + 3, &row), (int)ln);
            assert_int_equal(row, r);
        }
    uint32_t row;
    assert_int_equal(viz_layout_lane_at(&L, &t, 5, &row), -1); /* header */
    /* the view fits the trace */
    assert_true(fabs(L.view.cyc0) < 1e-9);
    assert_true(fabs(viz_view_end(&L.view) - 1000) < 1e-9);
    /* scrolling is clamped: content shorter than the area never scrolls */
    viz_layout_scroll(&L, 1000);
    assert_int_equal(L.scroll, 0);
    viz_layout_resize(&L, 1000, 300);
    assert_int_equal(L.view.w, 1000 - VIZ_LABEL_W - VIZ_RIGHT_M);
    assert_true(fabs(viz_view_end(&L.view) - 1000) < 1e-9); /* same window, new width */
    viz_layout_free(&L);
    viz_trace_free(&t);
}

static void test_font(void **state)
{
    (void)state;
    /* every printable character has its own glyph, distinct from the others */
    char bits[95][VIZ_GLYPH_W * VIZ_GLYPH_H];
    for (int c = 32; c < 127; c++) {
        int lit = 0;
        for (int y = 0; y < VIZ_GLYPH_H; y++)
            for (int x = 0; x < VIZ_GLYPH_W; x++) {
                bits[c - 32][y * VIZ_GLYPH_W + x] = viz_font_pixel((char)c, x, y);
                lit += viz_font_pixel((char)c, x, y);
            }
        if (c == ' ')
            assert_int_equal(lit, 0);
        else
            assert_true(lit > 0);
        for (int d = 32; d < c; d++)
            if (memcmp(bits[c - 32], bits[d - 32], sizeof bits[0]) == 0)
                fail_msg("glyphs '%c' and '%c' are identical", c, d);
    }
    /* 'T': full top bar, centre stem */
    for (int x = 0; x < 5; x++)
        assert_true(viz_font_pixel('T', x, 0));
    assert_true(viz_font_pixel('T', 2, 6));
    assert_false(viz_font_pixel('T', 0, 6));
    /* out of range: hollow box, no out-of-bounds reads */
    assert_true(viz_font_pixel('\x01', 0, 0));
    assert_false(viz_font_pixel('\x01', 2, 3));
    assert_false(viz_font_pixel('A', 5, 0));
    assert_false(viz_font_pixel('A', -1, 0));
    assert_int_equal(viz_font_width("", 1), 0);
    assert_int_equal(viz_font_width("ab", 1), 2 * VIZ_CELL_W - 1);
    assert_int_equal(viz_font_width("ab", 2), 2 * (2 * VIZ_CELL_W - 1));
    assert_int_equal(viz_font_fit("Matmul", 1, 1000), 6);
    assert_int_equal(viz_font_fit("Matmul", 1, viz_font_width("Mat", 1)), 3);
    assert_int_equal(viz_font_fit("Matmul", 1, 2), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_view_math),
        cmocka_unit_test(test_tick_step),
        cmocka_unit_test(test_lane_assignment),
        cmocka_unit_test(test_overlap_rows_exact),
        cmocka_unit_test(test_first_visible_with_long_event),
        cmocka_unit_test(test_spans_and_aggregation),
        cmocka_unit_test(test_hit_and_step),
        cmocka_unit_test(test_counters),
        cmocka_unit_test(test_geometry),
        cmocka_unit_test(test_font),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
