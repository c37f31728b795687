/* test_viz_app.c - what the key bindings do to the viewer state (zoom, fit,
 * search, jump, play, step, help), without a window. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "app.h"

#define SMALL TPB_SOURCE_DIR "/tests/data/traces/small.json"

typedef struct {
    viz_trace_t t;
    viz_app_t a;
} fx_t;

static int setup(void **state)
{
    static fx_t fx;
    tpb_err_t err = { { 0 } };
    if (viz_trace_load(SMALL, &fx.t, &err))
        return -1;
    viz_app_opts_t o = { 800, 400, 0, 0, -1, 0 };
    if (viz_app_init(&fx.a, &fx.t, &o))
        return -1;
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    fx_t *fx = *state;
    viz_app_free(&fx->a);
    viz_trace_free(&fx->t);
    return 0;
}

static void type(viz_app_t *a, const char *s)
{
    for (; *s; s++)
        viz_app_char(a, *s);
}

static const char *sel_name(const fx_t *fx)
{
    return fx->a.ui.selected < 0 ? "(none)" : viz_str(&fx->t, fx->t.ev[fx->a.ui.selected].name);
}

static void test_zoom_and_fit(void **state)
{
    fx_t *fx = *state;
    viz_view_t *v = &fx->a.L.view;
    double cpp = v->cpp, mid = viz_view_cycle(v, v->x0 + v->w / 2.0);
    assert_true(fabs(viz_view_end(v) - 1000) < 1e-9); /* starts fitted */
    viz_app_char(&fx->a, '+');
    assert_true(fabs(v->cpp - cpp / 1.5) < 1e-12);
    assert_true(fabs(viz_view_cycle(v, v->x0 + v->w / 2.0) - mid) < 1e-6); /* zoom about the centre */
    viz_app_char(&fx->a, '-');
    viz_app_char(&fx->a, '-');
    assert_true(v->cpp > cpp);
    viz_app_char(&fx->a, '0');
    assert_true(fabs(v->cpp - cpp) < 1e-12);
    assert_true(fabs(v->cyc0) < 1e-9);
    viz_app_char(&fx->a, '+');
    viz_app_char(&fx->a, 'f');
    assert_true(fabs(v->cpp - cpp) < 1e-12);
}

static void test_search_and_jump(void **state)
{
    fx_t *fx = *state;
    viz_app_t *a = &fx->a;
    type(a, "/Ma");
    assert_true(a->ui.searching);
    assert_string_equal(a->ui.search, "Ma");
    assert_int_equal(a->ui.matches, 1); /* Matmul */
    viz_app_char(a, '\b');
    assert_string_equal(a->ui.search, "M");
    viz_app_char(a, '\n');
    assert_false(a->ui.searching);
    /* letters typed after Enter are commands again: n jumps to the match */
    viz_app_char(a, 'n');
    assert_string_equal(sel_name(fx), "Matmul");
    viz_app_char(a, 'n');
    assert_string_equal(sel_name(fx), "Matmul"); /* no later match: stays */
    assert_non_null(strstr(a->ui.status, "no later match"));
    viz_app_char(a, 27); /* Esc clears the search */
    assert_string_equal(a->ui.search, "");
    /* without a search, n/p walk the selected lane (PE: LdWeights, Matmul) */
    viz_app_char(a, 'p');
    assert_string_equal(sel_name(fx), "LdWeights");
    viz_app_char(a, 'n');
    assert_string_equal(sel_name(fx), "Matmul");
    viz_app_char(a, 27);
    assert_int_equal(a->ui.selected, -1);
}

static void test_select_reveals(void **state)
{
    fx_t *fx = *state;
    viz_app_t *a = &fx->a;
    viz_view_t *v = &a->L.view;
    viz_view_fit(v, 0, 100); /* Activation [600,800) is off-screen */
    for (uint32_t i = 0; i < fx->t.nev; i++)
        if (strcmp(viz_str(&fx->t, fx->t.ev[i].name), "Activation") == 0)
            viz_app_select(a, i);
    assert_string_equal(sel_name(fx), "Activation");
    assert_true(v->cyc0 <= 600 && viz_view_end(v) >= 800); /* zoomed out to show it */
    viz_app_char(a, 'f');
}

static void test_play_and_step(void **state)
{
    fx_t *fx = *state;
    viz_app_t *a = &fx->a;
    viz_app_char(a, ' ');
    assert_true(a->ui.playing);
    assert_true(a->ui.cursor == 0);
    assert_true(a->ui.speed > 0);
    double sp = a->ui.speed;
    viz_app_char(a, ']');
    assert_true(a->ui.speed == 2 * sp);
    viz_app_char(a, '[');
    viz_app_tick(a, 0.5);
    assert_true(fabs(a->ui.cursor - sp * 0.5) < 1e-9);
    viz_app_tick(a, 1e6); /* runs off the end: stops at the last cycle */
    assert_false(a->ui.playing);
    assert_true(a->ui.cursor == 1000);
    /* step from the start: instruction starts in time order */
    a->ui.cursor = -1;
    viz_app_char(a, 'f');
    a->L.view.cyc0 = 0;
    viz_app_char(a, 's'); /* cycle 0: DmaTrigger or LdWeights (both start at 0) */
    assert_true(a->ui.cursor == 0);
    viz_app_char(a, 's');
    assert_true(a->ui.cursor == 50);
    assert_string_equal(sel_name(fx), "dma A");
    viz_app_char(a, 's');
    assert_true(a->ui.cursor == 60);
    viz_app_char(a, 'b');
    assert_true(a->ui.cursor == 50);
    assert_false(a->ui.playing);
}

static void test_toggles(void **state)
{
    fx_t *fx = *state;
    viz_app_t *a = &fx->a;
    assert_false(a->ui.show_help);
    viz_app_char(a, '?');
    assert_true(a->ui.show_help);
    viz_app_char(a, 27);
    assert_false(a->ui.show_help);
    bool legend = a->ui.show_legend;
    viz_app_char(a, 'l');
    assert_true(a->ui.show_legend != legend);
    assert_false(a->quit);
    viz_app_char(a, 'q');
    assert_true(a->quit);
    a->quit = false;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_zoom_and_fit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_search_and_jump, setup, teardown),
        cmocka_unit_test_setup_teardown(test_select_reveals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_play_and_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_toggles, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
