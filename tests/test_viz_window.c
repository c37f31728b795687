/* test_viz_window.c - the real window: open it (under Xvfb in CI), drive it
 * with SDL events (click, wheel, keys, typed text), read the window's pixels
 * back, then run the event loop for a few frames.  Skips when no display can
 * be opened. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <SDL.h>

#include "app.h"

#define SMALL TPB_SOURCE_DIR "/tests/data/traces/small.json"

static bool open_display(void)
{
    const char *drv = getenv("SDL_VIDEODRIVER");
    if (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY") && !(drv && *drv))
        return false;
    return SDL_Init(SDL_INIT_VIDEO) == 0;
}

static uint32_t read_rgb(SDL_Renderer *r, int x, int y)
{
    SDL_Rect rc = { x, y, 1, 1 };
    uint32_t p = 0;
    if (SDL_RenderReadPixels(r, &rc, SDL_PIXELFORMAT_RGB888, &p, 4) != 0)
        fail_msg("read pixels: %s", SDL_GetError());
    return p & 0xffffffU;
}

static void click(viz_app_t *a, int x, int y)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEMOTION;
    e.motion.x = x;
    e.motion.y = y;
    viz_app_event(a, &e);
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEBUTTONDOWN;
    e.button.button = SDL_BUTTON_LEFT;
    e.button.x = x;
    e.button.y = y;
    viz_app_event(a, &e);
    e.type = SDL_MOUSEBUTTONUP;
    viz_app_event(a, &e);
}

static void test_window(void **state)
{
    (void)state;
    if (!open_display()) {
        skip(); /* no display: the headless screenshot tests cover drawing */
        return;
    }
    viz_trace_t t;
    tpb_err_t err = { { 0 } };
    assert_int_equal(viz_trace_load(SMALL, &t, &err), 0);
    SDL_Window *w = SDL_CreateWindow("test_viz_window", 0, 0, 800, 400, 0);
    if (!w) {
        viz_trace_free(&t);
        SDL_Quit();
        skip();
        return;
    }
    SDL_Renderer *r = SDL_CreateRenderer(w, -1, SDL_RENDERER_SOFTWARE);
    assert_non_null(r);
    int ww, wh;
    SDL_GetRendererOutputSize(r, &ww, &wh);
    viz_app_opts_t o = { ww, wh, 0, 1000, -1, 0 };
    viz_app_t a;
    assert_int_equal(viz_app_init(&a, &t, &o), 0);

    /* click the Matmul box ([200,600) on PE): it becomes the selection */
    int x = (int)viz_view_x(&a.L.view, 400), y = viz_layout_row_y(&a.L, 0, 0) + 8;
    click(&a, x, y);
    assert_true(a.ui.selected >= 0);
    assert_string_equal(viz_str(&t, t.ev[a.ui.selected].name), "Matmul");
    viz_render(r, &t, &a.L, &a.ui);
    assert_int_equal(read_rgb(r, x, viz_layout_row_y(&a.L, 0, 0) + 2), viz_class_rgb(ISA_CLASS_MATMUL));
    SDL_RenderPresent(r);

    /* click an empty spot: selection cleared */
    click(&a, (int)viz_view_x(&a.L.view, 900), y);
    assert_int_equal(a.ui.selected, -1);

    /* wheel up zooms in around the mouse */
    double cpp = a.L.view.cpp, anchor = viz_view_cycle(&a.L.view, x);
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEMOTION;
    e.motion.x = x;
    e.motion.y = y;
    viz_app_event(&a, &e);
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEWHEEL;
    e.wheel.y = 2;
    viz_app_event(&a, &e);
    assert_true(a.L.view.cpp < cpp);
    assert_true(fabs(viz_view_cycle(&a.L.view, x) - anchor) < 1e-6);

    /* drag right pans earlier */
    double c0 = a.L.view.cyc0;
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEBUTTONDOWN;
    e.button.button = SDL_BUTTON_LEFT;
    e.button.x = x;
    e.button.y = y;
    viz_app_event(&a, &e);
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEMOTION;
    e.motion.x = x + 50;
    e.motion.y = y;
    viz_app_event(&a, &e);
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEBUTTONUP;
    e.button.button = SDL_BUTTON_LEFT;
    e.button.x = x + 50;
    e.button.y = y;
    viz_app_event(&a, &e);
    assert_true(a.L.view.cyc0 < c0);
    assert_int_equal(a.ui.selected, -1); /* a drag is not a click */

    /* typed text: "?" opens help, Esc (key) closes; "/Act" + Enter searches */
    memset(&e, 0, sizeof e);
    e.type = SDL_TEXTINPUT;
    strcpy(e.text.text, "?");
    viz_app_event(&a, &e);
    assert_true(a.ui.show_help);
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYDOWN;
    e.key.keysym.sym = SDLK_ESCAPE;
    viz_app_event(&a, &e);
    assert_false(a.ui.show_help);
    memset(&e, 0, sizeof e);
    e.type = SDL_TEXTINPUT;
    strcpy(e.text.text, "/Act");
    viz_app_event(&a, &e);
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYDOWN;
    e.key.keysym.sym = SDLK_RETURN;
    viz_app_event(&a, &e);
    assert_false(a.ui.searching);
    assert_int_equal(a.ui.matches, 1);
    /* arrow keys pan */
    c0 = a.L.view.cyc0;
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYDOWN;
    e.key.keysym.sym = SDLK_RIGHT;
    viz_app_event(&a, &e);
    assert_true(a.L.view.cyc0 > c0);
    viz_render(r, &t, &a.L, &a.ui);
    SDL_RenderPresent(r);
    viz_app_free(&a);
    SDL_DestroyRenderer(r);
    SDL_DestroyWindow(w);
    SDL_Quit();

    /* the real event loop, for a few iterations */
    viz_app_opts_t o2 = { 640, 360, 0, 0, 6, 5 };
    assert_int_equal(viz_app_run(&t, &o2, &err), 0);
    viz_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
