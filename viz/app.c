/* app.c - interaction: the state changes behind every key and mouse
 * binding (SDL-free, unit-testable), and the SDL window + event loop. */
#include "app.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int viz_app_init(viz_app_t *a, viz_trace_t *t, const viz_app_opts_t *o)
{
    memset(a, 0, sizeof *a);
    a->t = t;
    if (viz_layout_init(&a->L, t, o->width, o->height))
        return -1;
    if (o->to > o->from)
        viz_view_fit(&a->L.view, o->from, o->to);
    viz_ui_init(&a->ui);
    a->sel_lane = -1;
    a->dirty = true;
    if (o->selected >= 0 && (uint64_t)o->selected < t->nev) {
        a->ui.selected = o->selected;
        a->sel_lane = t->ev[o->selected].lane;
    }
    return 0;
}

void viz_app_free(viz_app_t *a)
{
    viz_layout_free(&a->L);
}

static void fit_all(viz_app_t *a)
{
    uint64_t end = a->t->total_cycles > a->t->last_cycle ? a->t->total_cycles : a->t->last_cycle;
    viz_view_fit(&a->L.view, 0, (double)end);
}

/* Bring an event into view: recentre in time if it is off-screen (zooming
 * out if it is wider than the view) and scroll its lane into view. */
static void reveal(viz_app_t *a, int64_t ev)
{
    if (ev < 0 || (uint64_t)ev >= a->t->nev)
        return;
    const viz_event_t *e = &a->t->ev[ev];
    viz_view_t *v = &a->L.view;
    double span = viz_view_end(v) - v->cyc0;
    if ((double)(e->end - e->start) > span * 0.8)
        viz_view_fit(v, (double)e->start - (double)(e->end - e->start) * 0.1,
                     (double)e->end + (double)(e->end - e->start) * 0.1);
    else if ((double)e->start < v->cyc0 || (double)e->end > viz_view_end(v))
        v->cyc0 = ((double)e->start + (double)e->end) / 2 - span / 2;
    int y = viz_layout_row_y(&a->L, e->lane, e->row);
    if (y < a->L.lanes_top)
        viz_layout_scroll(&a->L, y - a->L.lanes_top - 4);
    else if (y + VIZ_ROW_H > a->L.lanes_bottom)
        viz_layout_scroll(&a->L, y + VIZ_ROW_H - a->L.lanes_bottom + 4);
}

void viz_app_select(viz_app_t *a, int64_t ev)
{
    a->ui.selected = ev;
    if (ev >= 0 && (uint64_t)ev < a->t->nev) {
        a->sel_lane = a->t->ev[ev].lane;
        reveal(a, ev);
    }
    a->dirty = true;
}

static bool name_matches(const viz_app_t *a, uint32_t ev)
{
    return a->ui.search[0] && strstr(viz_str(a->t, a->t->ev[ev].name), a->ui.search);
}

static void count_matches(viz_app_t *a)
{
    a->ui.matches = 0;
    if (!a->ui.search[0])
        return;
    for (uint32_t i = 0; i < a->t->nev; i++)
        a->ui.matches += name_matches(a, i);
}

/* Next/previous search match after/before `cycle` over all lanes. */
static int64_t find_match(const viz_app_t *a, double cycle, int dir)
{
    int64_t best = -1;
    for (uint32_t li = 0; li < a->t->nlanes; li++) {
        const viz_lane_t *l = &a->t->lanes[li];
        int64_t i = viz_lane_step(a->t, li, cycle, dir);
        for (; i >= 0 && i < (int64_t)l->nev; i += dir > 0 ? 1 : -1) {
            uint32_t ev = l->ev[i];
            if (!name_matches(a, ev))
                continue;
            uint64_t s = a->t->ev[ev].start;
            if (best < 0 || (dir > 0 ? s < a->t->ev[best].start : s > a->t->ev[best].start))
                best = ev;
            break;
        }
    }
    return best;
}

static double sel_start(const viz_app_t *a)
{
    if (a->ui.selected >= 0)
        return (double)a->t->ev[a->ui.selected].start;
    return a->ui.cursor >= 0 ? a->ui.cursor : a->L.view.cyc0 - 0.5;
}

/* n / p: next match when searching, else next instruction on the lane of
 * the selection (the first lane when nothing is selected). */
static void jump(viz_app_t *a, int dir)
{
    if (a->t->nlanes == 0)
        return;
    double c = sel_start(a);
    int64_t ev = -1;
    if (a->ui.search[0]) {
        ev = find_match(a, c, dir);
        if (ev < 0)
            snprintf(a->ui.status, sizeof a->ui.status, "no %s match", dir > 0 ? "later" : "earlier");
    } else {
        uint32_t lane = a->sel_lane >= 0 ? (uint32_t)a->sel_lane : 0;
        int64_t i = viz_lane_step(a->t, lane, c, dir);
        if (i >= 0)
            ev = a->t->lanes[lane].ev[i];
    }
    if (ev >= 0) {
        a->ui.status[0] = 0;
        viz_app_select(a, ev);
    }
}

void viz_app_step(viz_app_t *a, int dir)
{
    double c = a->ui.cursor >= 0 ? a->ui.cursor : a->L.view.cyc0 - 0.5;
    int64_t best = -1;
    for (uint32_t li = 0; li < a->t->nlanes; li++) {
        int64_t i = viz_lane_step(a->t, li, c, dir);
        if (i < 0)
            continue;
        uint32_t ev = a->t->lanes[li].ev[i];
        uint64_t s = a->t->ev[ev].start;
        if (best < 0 || (dir > 0 ? s < a->t->ev[best].start : s > a->t->ev[best].start))
            best = ev;
    }
    a->ui.playing = false;
    if (best >= 0) {
        a->ui.cursor = (double)a->t->ev[best].start;
        viz_app_select(a, best);
    }
    a->dirty = true;
}

static void toggle_play(viz_app_t *a)
{
    viz_view_t *v = &a->L.view;
    a->ui.playing = !a->ui.playing;
    if (a->ui.playing) {
        if (a->ui.cursor < v->cyc0 || a->ui.cursor >= viz_view_end(v))
            a->ui.cursor = v->cyc0 > 0 ? v->cyc0 : 0;
        if (a->ui.speed <= 0) /* default: cross the visible window in 10 s */
            a->ui.speed = (viz_view_end(v) - v->cyc0) / 10.0;
    }
    a->dirty = true;
}

void viz_app_tick(viz_app_t *a, double dt)
{
    if (!a->ui.playing || dt <= 0)
        return;
    viz_view_t *v = &a->L.view;
    a->ui.cursor += a->ui.speed * dt;
    double end = (double)(a->t->total_cycles > a->t->last_cycle ? a->t->total_cycles
                                                                : a->t->last_cycle);
    if (a->ui.cursor >= end) {
        a->ui.cursor = end;
        a->ui.playing = false;
    }
    /* follow the cursor: keep it in the view, a quarter from the left */
    double span = viz_view_end(v) - v->cyc0;
    if (a->ui.cursor > viz_view_end(v) || a->ui.cursor < v->cyc0)
        v->cyc0 = a->ui.cursor - span / 4;
    a->dirty = true;
}

static void search_char(viz_app_t *a, char c)
{
    size_t n = strlen(a->ui.search);
    if (n + 1 < sizeof a->ui.search) {
        a->ui.search[n] = c;
        a->ui.search[n + 1] = 0;
    }
    count_matches(a);
}

void viz_app_char(viz_app_t *a, char c)
{
    viz_view_t *v = &a->L.view;
    a->dirty = true;
    if (a->ui.searching) {
        if (c == '\n' || c == '\r')
            a->ui.searching = false;
        else if (c == '\b') {
            size_t n = strlen(a->ui.search);
            if (n)
                a->ui.search[n - 1] = 0;
            count_matches(a);
        } else if ((unsigned char)c >= 32 && (unsigned char)c < 127)
            search_char(a, c);
        return;
    }
    switch (c) {
    case '+': case '=': viz_view_zoom(v, 1.5, v->x0 + v->w / 2.0); break;
    case '-': case '_': viz_view_zoom(v, 1 / 1.5, v->x0 + v->w / 2.0); break;
    case 'f': case '0': fit_all(a); break;
    case 'n': case '.': jump(a, +1); break;
    case 'p': case ',': jump(a, -1); break;
    case '/':
        a->ui.searching = true;
        a->ui.search[0] = 0;
        a->ui.matches = 0;
        break;
    case '?': case 'h': a->ui.show_help = !a->ui.show_help; break;
    case 'l': a->ui.show_legend = !a->ui.show_legend; break;
    case ' ': toggle_play(a); break;
    case '[': a->ui.speed = a->ui.speed > 0 ? a->ui.speed / 2 : 1; break;
    case ']': a->ui.speed = a->ui.speed > 0 ? a->ui.speed * 2 : 1; break;
    case 's': viz_app_step(a, +1); break;
    case 'b': viz_app_step(a, -1); break;
    case 'q': a->quit = true; break;
    case 27: /* Esc */
        if (a->ui.show_help)
            a->ui.show_help = false;
        else if (a->ui.search[0])
            a->ui.search[0] = 0, a->ui.matches = 0;
        else
            a->ui.selected = -1;
        a->ui.status[0] = 0;
        break;
    default: a->dirty = false; break;
    }
}

#ifdef TPB_WITH_VIEWER

static void update_hover(viz_app_t *a)
{
    uint32_t row = 0;
    int64_t ev = -1;
    const viz_view_t *v = &a->L.view;
    if (a->mouse_x >= v->x0 && a->mouse_x < v->x0 + v->w) {
        int lane = viz_layout_lane_at(&a->L, a->t, a->mouse_y, &row);
        if (lane >= 0)
            ev = viz_lane_hit(a->t, (uint32_t)lane, row, viz_view_cycle(v, a->mouse_x + 0.5),
                              2 * v->cpp);
    }
    if (ev != a->ui.hover) {
        a->ui.hover = ev;
        a->dirty = true;
    }
}

static void on_key(viz_app_t *a, const SDL_KeyboardEvent *k)
{
    viz_view_t *v = &a->L.view;
    int page = a->L.lanes_bottom - a->L.lanes_top - 20;
    switch (k->keysym.sym) {
    case SDLK_ESCAPE:
        a->ui.searching = false;
        viz_app_char(a, 27);
        break;
    case SDLK_RETURN: case SDLK_KP_ENTER: if (a->ui.searching) viz_app_char(a, '\n'); break;
    case SDLK_BACKSPACE: if (a->ui.searching) viz_app_char(a, '\b'); break;
    case SDLK_LEFT: viz_view_pan_px(v, -v->w / 10.0); break;
    case SDLK_RIGHT: viz_view_pan_px(v, v->w / 10.0); break;
    case SDLK_UP: viz_layout_scroll(&a->L, -VIZ_ROW_H * 2); break;
    case SDLK_DOWN: viz_layout_scroll(&a->L, VIZ_ROW_H * 2); break;
    case SDLK_PAGEUP: viz_layout_scroll(&a->L, -page); break;
    case SDLK_PAGEDOWN: viz_layout_scroll(&a->L, page); break;
    case SDLK_HOME: v->cyc0 = 0; break;
    case SDLK_KP_PLUS: if (!a->ui.searching) viz_app_char(a, '+'); break;
    case SDLK_KP_MINUS: if (!a->ui.searching) viz_app_char(a, '-'); break;
    default: return;
    }
    a->dirty = true;
}

static void on_button(viz_app_t *a, const SDL_MouseButtonEvent *b, bool down)
{
    if (b->button != SDL_BUTTON_LEFT)
        return;
    if (down) {
        a->dragging = true;
        a->drag_moved = false;
        a->drag_x = b->x;
        a->drag_y = b->y;
        return;
    }
    a->dragging = false;
    if (!a->drag_moved) { /* a click: select what is under the mouse */
        a->mouse_x = b->x;
        a->mouse_y = b->y;
        update_hover(a);
        a->ui.selected = a->ui.hover;
        if (a->ui.hover >= 0)
            a->sel_lane = a->t->ev[a->ui.hover].lane;
        a->dirty = true;
    }
}

static void on_motion(viz_app_t *a, const SDL_MouseMotionEvent *m)
{
    a->mouse_x = m->x;
    a->mouse_y = m->y;
    if (a->dragging) {
        int dx = m->x - a->drag_x, dy = m->y - a->drag_y;
        if (abs(dx) + abs(dy) > 2 || a->drag_moved) {
            a->drag_moved = true;
            viz_view_pan_px(&a->L.view, -dx);
            viz_layout_scroll(&a->L, -dy);
            a->drag_x = m->x;
            a->drag_y = m->y;
            a->dirty = true;
        }
    }
    update_hover(a);
}

static void on_wheel(viz_app_t *a, const SDL_MouseWheelEvent *w)
{
    if (w->y == 0)
        return;
    if (SDL_GetModState() & KMOD_SHIFT)
        viz_layout_scroll(&a->L, -w->y * VIZ_ROW_H * 2);
    else
        viz_view_zoom(&a->L.view, pow(1.25, w->y), a->mouse_x);
    a->dirty = true;
    update_hover(a);
}

void viz_app_event(viz_app_t *a, const SDL_Event *e)
{
    switch (e->type) {
    case SDL_QUIT: a->quit = true; break;
    case SDL_KEYDOWN: on_key(a, &e->key); break;
    case SDL_TEXTINPUT:
        for (const char *c = e->text.text; *c; c++)
            viz_app_char(a, *c);
        break;
    case SDL_MOUSEBUTTONDOWN: on_button(a, &e->button, true); break;
    case SDL_MOUSEBUTTONUP: on_button(a, &e->button, false); break;
    case SDL_MOUSEMOTION: on_motion(a, &e->motion); break;
    case SDL_MOUSEWHEEL: on_wheel(a, &e->wheel); break;
    case SDL_WINDOWEVENT:
        if (e->window.event == SDL_WINDOWEVENT_SIZE_CHANGED)
            viz_layout_resize(&a->L, e->window.data1, e->window.data2);
        a->dirty = true;
        break;
    default: break;
    }
}

int viz_app_run(viz_trace_t *t, const viz_app_opts_t *o, tpb_err_t *err)
{
    if (SDL_Init(SDL_INIT_VIDEO) != 0)
        return tpb_errf(err, "cannot open a display: %s", SDL_GetError());
    /* Without a display SDL falls back to drivers that draw nowhere and
     * deliver no input: a window there could never be closed. */
    const char *drv = SDL_GetCurrentVideoDriver();
    if (o->exit_after <= 0 && drv && (!strcmp(drv, "offscreen") || !strcmp(drv, "dummy"))) {
        SDL_Quit();
        return tpb_errf(err, "no display (SDL video driver '%s' shows nothing)", drv);
    }
    char title[160];
    snprintf(title, sizeof title, "tpb view - %s", t->kernel[0] ? t->kernel : "trace");
    SDL_Window *w = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED,
                                     o->width, o->height, SDL_WINDOW_RESIZABLE);
    SDL_Renderer *r = w ? SDL_CreateRenderer(w, -1, 0) : NULL;
    if (!r && w)
        r = SDL_CreateRenderer(w, -1, SDL_RENDERER_SOFTWARE);
    viz_app_t a;
    if (!r || viz_app_init(&a, t, o)) {
        tpb_errf(err, "cannot create a window: %s", SDL_GetError());
        if (w)
            SDL_DestroyWindow(w);
        SDL_Quit();
        return -1;
    }
    int ww, wh;
    SDL_GetRendererOutputSize(r, &ww, &wh);
    viz_layout_resize(&a.L, ww, wh);
    SDL_StartTextInput();
    uint64_t last = SDL_GetTicks64();
    for (long frame = 0; !a.quit; frame++) {
        if (a.dirty) {
            viz_render(r, t, &a.L, &a.ui);
            SDL_RenderPresent(r);
            a.dirty = false;
        }
        if (o->exit_after > 0 && frame >= o->exit_after)
            break;
        SDL_Event e;
        /* block while idle; poll at ~60 Hz while playing or scripted */
        int timeout = (a.ui.playing || o->exit_after > 0) ? 16 : 500;
        if (SDL_WaitEventTimeout(&e, timeout)) {
            viz_app_event(&a, &e);
            while (SDL_PollEvent(&e))
                viz_app_event(&a, &e);
        }
        uint64_t now = SDL_GetTicks64();
        viz_app_tick(&a, (double)(now - last) / 1000.0);
        last = now;
    }
    SDL_StopTextInput();
    viz_app_free(&a);
    SDL_DestroyRenderer(r);
    SDL_DestroyWindow(w);
    SDL_Quit();
    return 0;
}

#endif /* TPB_WITH_VIEWER */
