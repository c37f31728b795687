/* test_viz_render.c - headless screenshots: render a known trace through
 * `tpb view --screenshot`, read the BMP back and check the colour of known
 * boxes at their expected coordinates and the background elsewhere. */
#include <math.h>
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

int tpb_cmd_view(int argc, char **argv);

#define SMALL TPB_SOURCE_DIR "/tests/data/traces/small.json"
#define W 800
#define H 400

typedef struct {
    SDL_Surface *img;
    viz_trace_t t;
    viz_layout_t L;
} shot_t;

static uint32_t pixel(const SDL_Surface *s, int x, int y)
{
    assert_true(x >= 0 && y >= 0 && x < s->w && y < s->h);
    uint32_t p;
    memcpy(&p, (const uint8_t *)s->pixels + (size_t)y * s->pitch + (size_t)x * 4, 4);
    uint8_t r, g, b;
    SDL_GetRGB(p, s->format, &r, &g, &b);
    return (uint32_t)r << 16 | (uint32_t)g << 8 | b;
}

/* Expected x of a cycle: the plot spans [VIZ_LABEL_W, W - VIZ_RIGHT_M) and
 * shows [from, to) (docs/viewer.md, "Screenshots"). */
static int x_of(double cycle, double from, double to)
{
    double plot_w = W - VIZ_LABEL_W - VIZ_RIGHT_M;
    return VIZ_LABEL_W + (int)floor((cycle - from) * plot_w / (to - from));
}

static SDL_Surface *load_bmp(const char *path)
{
    SDL_Surface *raw = SDL_LoadBMP(path);
    if (!raw)
        fail_msg("cannot read %s: %s", path, SDL_GetError());
    SDL_Surface *s = SDL_ConvertSurfaceFormat(raw, SDL_PIXELFORMAT_ARGB8888, 0);
    SDL_FreeSurface(raw);
    assert_non_null(s);
    return s;
}

static int setup(void **state)
{
    static shot_t sh;
    char *argv[] = { "view", "--screenshot", TPB_BINARY_DIR "/viz_small.bmp", "--width", "800",
                     "--height", "400", "--from", "0", "--to", "1000", SMALL };
    if (tpb_cmd_view(12, argv) != 0)
        return -1;
    sh.img = load_bmp(TPB_BINARY_DIR "/viz_small.bmp");
    tpb_err_t err = { { 0 } };
    if (viz_trace_load(SMALL, &sh.t, &err) || viz_layout_init(&sh.L, &sh.t, W, H))
        return -1;
    *state = &sh;
    return 0;
}

static int teardown(void **state)
{
    shot_t *sh = *state;
    SDL_FreeSurface(sh->img);
    viz_layout_free(&sh->L);
    viz_trace_free(&sh->t);
    return 0;
}

/* y inside a box of (lane, row), above the mnemonic text */
static int box_y(const shot_t *sh, uint32_t lane, uint32_t row)
{
    return viz_layout_row_y(&sh->L, lane, row) + 2;
}

static void test_size(void **state)
{
    shot_t *sh = *state;
    assert_int_equal(sh->img->w, W);
    assert_int_equal(sh->img->h, H);
}

static void test_known_boxes(void **state)
{
    shot_t *sh = *state;
    /* lanes of small.json: 0 PE, 1 Activation, 2 DVE, 3 SP, 4 q0 (2 rows) */
    static const struct { uint32_t lane, row; double cycle; isa_class_t cls; } boxes[] = {
        { 0, 0, 100, ISA_CLASS_MATMUL },  /* LdWeights [0,200) */
        { 0, 0, 400, ISA_CLASS_MATMUL },  /* Matmul [200,600) */
        { 1, 0, 700, ISA_CLASS_ACT },     /* Activation [600,800) */
        { 2, 0, 200, ISA_CLASS_VECTOR },  /* TensorTensor [100,300) */
        { 3, 0, 25, ISA_CLASS_DMA },      /* DmaTrigger [0,50) */
        { 4, 0, 250, ISA_CLASS_DMA },     /* dma A [50,450) */
        { 4, 1, 180, ISA_CLASS_DMA },     /* dma B [60,300), second row */
    };
    for (size_t i = 0; i < sizeof boxes / sizeof boxes[0]; i++) {
        int x = x_of(boxes[i].cycle, 0, 1000), y = box_y(sh, boxes[i].lane, boxes[i].row);
        uint32_t got = pixel(sh->img, x, y), want = viz_class_rgb(boxes[i].cls);
        if (got != want)
            fail_msg("box %zu at (%d,%d): colour %06x, want %06x", i, x, y, got, want);
    }
}

static void test_background(void **state)
{
    shot_t *sh = *state;
    /* inside lanes where nothing runs: the lane band colour */
    static const struct { uint32_t lane, row; double cycle; } empty[] = {
        { 0, 0, 800 },  /* PE idle after 600 */
        { 1, 0, 300 },  /* Activation waiting (not running) before 600 */
        { 2, 0, 500 },
        { 4, 1, 700 },
    };
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
        int x = x_of(empty[i].cycle, 0, 1000), y = box_y(sh, empty[i].lane, empty[i].row);
        uint32_t got = pixel(sh->img, x, y);
        if (got != VIZ_RGB_LANE_BG)
            fail_msg("empty %zu at (%d,%d): colour %06x, want lane background", i, x, y, got);
    }
    /* right margin and the gap between lanes: window background */
    int y = box_y(sh, 0, 0);
    assert_int_equal(pixel(sh->img, W - 3, y), VIZ_RGB_BG);
    int gap = viz_layout_row_y(&sh->L, 1, 0) - 1; /* last pixel of the gap above Activation */
    assert_int_equal(pixel(sh->img, x_of(500, 0, 1000), gap), VIZ_RGB_BG);
}

static void test_utilisation_strip(void **state)
{
    shot_t *sh = *state;
    /* PE busy over [0,600): the strip under the lane is filled there */
    int ys = sh->L.lanes_top + sh->L.lane[0].util_y + sh->L.lane[0].util_h - 1;
    assert_int_equal(pixel(sh->img, x_of(300, 0, 1000), ys), VIZ_RGB_UTIL);
    assert_int_not_equal(pixel(sh->img, x_of(800, 0, 1000), ys), VIZ_RGB_UTIL);
}

static void test_semaphore_track(void **state)
{
    shot_t *sh = *state;
    /* sem S1 PE: 0 until cycle 600, then 1 (its maximum): the line sits at
     * the bottom of the track before and at the top after */
    int top = sh->L.lanes_top + sh->L.ctr_y[0];
    int h = VIZ_CTR_H - 4;
    int y_low = top + h - 1, y_high = top + h - 1 - (h - 3);
    assert_int_equal(pixel(sh->img, x_of(300, 0, 1000), y_low), VIZ_RGB_SEM);
    assert_int_equal(pixel(sh->img, x_of(800, 0, 1000), y_high), VIZ_RGB_SEM);
    assert_int_not_equal(pixel(sh->img, x_of(300, 0, 1000), y_high), VIZ_RGB_SEM);
}

static void test_zoomed_window(void **state)
{
    (void)state;
    /* --from/--to: [500, 700) fills the plot: the Matmul/Activation edge at 600 */
    char *argv[] = { "view", "--screenshot", TPB_BINARY_DIR "/viz_small_zoom.bmp", "--width", "800",
                     "--height", "400", "--from", "500", "--to", "700", "--select", "6", SMALL };
    assert_int_equal(tpb_cmd_view(14, argv), 0);
    SDL_Surface *img = load_bmp(TPB_BINARY_DIR "/viz_small_zoom.bmp");
    shot_t *sh = *state;
    int ype = box_y(sh, 0, 0), yact = box_y(sh, 1, 0);
    assert_int_equal(pixel(img, x_of(550, 500, 700), ype), viz_class_rgb(ISA_CLASS_MATMUL));
    assert_int_equal(pixel(img, x_of(650, 500, 700), ype), VIZ_RGB_LANE_BG);
    assert_int_equal(pixel(img, x_of(650, 500, 700), yact + 1), viz_class_rgb(ISA_CLASS_ACT));
    assert_int_equal(pixel(img, x_of(550, 500, 700), yact), VIZ_RGB_LANE_BG);
    /* event 6 (Activation) is selected: its waited_for arrow (orange) runs
     * from the end of Matmul on PE to its start: look along the segment */
    int ax0 = x_of(600, 500, 700), ay0 = sh->L.lanes_top + sh->L.lane[0].y + VIZ_ROW_H / 2;
    int ay1 = sh->L.lanes_top + sh->L.lane[1].y + VIZ_ROW_H / 2;
    int hits = 0;
    for (int y = ay0 + 2; y < ay1 - 2; y++)
        for (int dx = -2; dx <= 2; dx++)
            hits += pixel(img, ax0 + dx, y) == VIZ_RGB_ARROW;
    assert_true(hits >= (ay1 - ay0 - 4) / 2);
    SDL_FreeSurface(img);
}

static void test_cli_errors(void **state)
{
    (void)state;
    char *a1[] = { "view", "--bogus", SMALL };
    assert_int_equal(tpb_cmd_view(3, a1), 2);
    char *a2[] = { "view", "--screenshot", TPB_BINARY_DIR "/x.bmp", "--from", "9", "--to", "3", SMALL };
    assert_int_equal(tpb_cmd_view(8, a2), 2);
    char *a3[] = { "view", "--width", "abc", SMALL };
    assert_int_equal(tpb_cmd_view(4, a3), 2);
    char *a4[] = { "view", "--screenshot", TPB_BINARY_DIR "/x.bmp",
                   TPB_SOURCE_DIR "/tests/data/traces/bad/truncated.json" };
    assert_int_equal(tpb_cmd_view(4, a4), 1);
    char *a5[] = { "view", "--screenshot", TPB_BINARY_DIR "/x.bmp", "--select", "99", SMALL };
    assert_int_equal(tpb_cmd_view(6, a5), 2);
    char *a6[] = { "view" };
    assert_int_equal(tpb_cmd_view(1, a6), 2);
    /* an unwritable output is an error, not a crash */
    char *a7[] = { "view", "--screenshot", TPB_BINARY_DIR "/no/such/dir/x.bmp", SMALL };
    assert_int_equal(tpb_cmd_view(4, a7), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size),
        cmocka_unit_test(test_known_boxes),
        cmocka_unit_test(test_background),
        cmocka_unit_test(test_utilisation_strip),
        cmocka_unit_test(test_semaphore_track),
        cmocka_unit_test(test_zoomed_window),
        cmocka_unit_test(test_cli_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
