/* test_viz_large.c - a generated trace of 200k instruction events loads,
 * aggregates to at most a span per pixel column, and renders screenshots
 * (no time limit: it only has to work). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <SDL.h>

#include "layout.h"
#include "render.h"
#include "trace_read.h"

#define NEV 200000
#define PATH TPB_BINARY_DIR "/viz_large_trace.json"

/* Five lanes in turn: PE, Activation, DVE, SP and DMA queue 1 (two slots);
 * each lane runs back-to-back 7-cycle instructions with 3-cycle gaps. */
static void write_trace(void)
{
    FILE *f = fopen(PATH, "w");
    assert_non_null(f);
    static const int tids[] = { 1, 2, 4, 5, 108 };
    static const char *const names[] = { "Matmul", "Activation", "TensorTensor", "DmaTrigger", "dma" };
    static const char *const cats[] = { "matmul", "act", "vector", "dma", "dma" };
    uint64_t next[5] = { 0 };
    fprintf(f, "{\"otherData\":{\"format\":\"tpbsim-trace\",\"version\":1,\"clock_ghz\":1.0},"
               "\"traceEvents\":[\n");
    for (int i = 0; i < NEV; i++) {
        int k = i % 5;
        int tid = tids[k] + (k == 4 ? (i / 5) % 2 : 0);
        uint64_t s = next[k];
        next[k] += 10;
        fprintf(f, "%s{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"name\":\"%s\",\"cat\":\"%s\",\"ts\":0,\"dur\":0,"
                   "\"args\":{\"pc\":%d,\"start_cycle\":%llu,\"end_cycle\":%llu%s}}\n",
                i ? "," : "", tid, names[k], cats[k], i / 5, (unsigned long long)s,
                (unsigned long long)(s + (k == 4 ? 15 : 7)), k == 4 ? ",\"bytes\":4096" : "");
        if (i % 1000 == 0)
            fprintf(f, ",{\"ph\":\"C\",\"pid\":1,\"name\":\"sem S1\",\"ts\":%.3f,\"args\":{\"value\":%d}}\n",
                    (double)s / 1000.0, (i / 1000) % 7);
    }
    fprintf(f, "]}\n");
    assert_int_equal(fclose(f), 0);
}

typedef struct {
    long n, count;
} tally_t;

static void tally(void *ctx, const viz_span_t *s)
{
    tally_t *t = ctx;
    t->n++;
    t->count += s->count;
}

static void test_large_trace(void **state)
{
    (void)state;
    write_trace();
    viz_trace_t t;
    tpb_err_t err = { { 0 } };
    if (viz_trace_load(PATH, &t, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(t.nev, NEV);
    assert_int_equal(t.nlanes, 5);
    assert_int_equal(t.lanes[4].nrows, 2); /* 15-cycle transfers every 10 cycles overlap */
    assert_int_equal(t.n_overlaps, 0);
    assert_int_equal(t.last_cycle, (NEV / 5 - 1) * 10 + 15);

    /* fully zoomed out: ~40000 events per lane merge into <= one span per column and row */
    viz_layout_t L;
    assert_int_equal(viz_layout_init(&L, &t, 1280, 720), 0);
    for (uint32_t ln = 0; ln < t.nlanes; ln++) {
        tally_t c = { 0, 0 };
        viz_lane_spans(&t, &L.view, ln, tally, &c);
        assert_true(c.n <= (long)L.view.w * (long)t.lanes[ln].nrows);
        assert_int_equal(c.count, (long)t.lanes[ln].nev);
    }
    viz_layout_free(&L);

    assert_int_equal(viz_render_screenshot(&t, 1280, 720, 0, 0, -1, TPB_BINARY_DIR "/viz_large.bmp", &err), 0);
    assert_int_equal(viz_render_screenshot(&t, 1280, 720, 200000, 201000, 12345,
                                           TPB_BINARY_DIR "/viz_large_zoom.bmp", &err), 0);
    SDL_Surface *img = SDL_LoadBMP(TPB_BINARY_DIR "/viz_large.bmp");
    assert_non_null(img);
    assert_int_equal(img->w, 1280);
    assert_int_equal(img->h, 720);
    SDL_FreeSurface(img);
    viz_trace_free(&t);
    remove(PATH);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_large_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
