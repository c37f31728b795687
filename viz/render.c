/* render.c - draw the timeline: header + time axis, lanes with instruction
 * boxes and utilisation strips, semaphore tracks, dependency arrows, the
 * play cursor, the summary/details panel and the overlays. */
#include "render.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fileio.h"
#include "font.h"

#define VIZ_PI 3.14159265358979323846

uint32_t viz_class_rgb(isa_class_t c)
{
    switch (c) {
    case ISA_CLASS_MATMUL: return 0x4a8af4U;  /* blue */
    case ISA_CLASS_ACT: return 0x3fb950U;     /* green */
    case ISA_CLASS_VECTOR: return 0xf2b705U;  /* amber */
    case ISA_CLASS_POOL: return 0xb36ad9U;    /* purple */
    case ISA_CLASS_DMA: return 0x1fb5c9U;     /* cyan */
    case ISA_CLASS_SYNC: return 0xe5534bU;    /* red */
    case ISA_CLASS_CONTROL: return 0x9e9e9eU; /* grey */
    case ISA_CLASS_PREFIX: return 0x8d6e63U;  /* brown */
    default: return 0xc8c8c8U;                /* unknown cat */
    }
}

void viz_ui_init(viz_ui_t *ui)
{
    memset(ui, 0, sizeof *ui);
    ui->hover = -1;
    ui->selected = -1;
    ui->show_legend = true;
    ui->cursor = -1;
    ui->speed = 0; /* set from the trace length when play starts */
}

#ifdef TPB_WITH_VIEWER

/* ------------------------------------------------------------ primitives */

static void set_rgb(SDL_Renderer *r, uint32_t rgb)
{
    SDL_SetRenderDrawColor(r, (rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255, 255);
}

static uint32_t mix(uint32_t a, uint32_t b, double f)
{
    uint32_t out = 0;
    for (int sh = 0; sh <= 16; sh += 8) {
        double ca = (a >> sh) & 255, cb = (b >> sh) & 255;
        out |= (uint32_t)lround(ca + (cb - ca) * f) << sh;
    }
    return out;
}

static void fill(SDL_Renderer *r, int x, int y, int w, int h, uint32_t rgb)
{
    if (w <= 0 || h <= 0)
        return;
    SDL_Rect rc = { x, y, w, h };
    set_rgb(r, rgb);
    SDL_RenderFillRect(r, &rc);
}

static void outline(SDL_Renderer *r, int x, int y, int w, int h, uint32_t rgb)
{
    SDL_Rect rc = { x, y, w, h };
    set_rgb(r, rgb);
    SDL_RenderDrawRect(r, &rc);
}

/* Draw text with the built-in font; returns the x after the text. */
static int text(SDL_Renderer *r, int x, int y, const char *s, uint32_t rgb)
{
    SDL_Rect px[VIZ_GLYPH_W * VIZ_GLYPH_H];
    set_rgb(r, rgb);
    for (; *s; s++, x += VIZ_CELL_W) {
        int n = 0;
        for (int gy = 0; gy < VIZ_GLYPH_H; gy++)
            for (int gx = 0; gx < VIZ_GLYPH_W; gx++)
                if (viz_font_pixel(*s, gx, gy))
                    px[n++] = (SDL_Rect){ x + gx, y + gy, 1, 1 };
        if (n)
            SDL_RenderFillRects(r, px, n);
    }
    return x;
}

/* Text cut to max_px, with '~' marking the cut. */
static void text_fit(SDL_Renderer *r, int x, int y, const char *s, int max_px, uint32_t rgb)
{
    char buf[256];
    int n = viz_font_fit(s, 1, max_px);
    if (n <= 0)
        return;
    snprintf(buf, sizeof buf, "%.*s", n, s);
    if ((size_t)n < strlen(s) && n > 1)
        buf[n - 1] = '~';
    text(r, x, y, buf, rgb);
}

static void fmt_cycles(char *out, size_t n, double c)
{
    if (c >= 1e9)
        snprintf(out, n, "%.3gG", c / 1e9);
    else if (c >= 1e6)
        snprintf(out, n, "%.4gM", c / 1e6);
    else if (c >= 1e4)
        snprintf(out, n, "%.4gk", c / 1e3);
    else
        snprintf(out, n, "%.0f", c);
}

static void fmt_us(char *out, size_t n, double us)
{
    if (us >= 1000)
        snprintf(out, n, "%.4gms", us / 1000);
    else if (us >= 1)
        snprintf(out, n, "%.4gus", us);
    else
        snprintf(out, n, "%.4gns", us * 1000);
}

static void fmt_bytes(char *out, size_t n, uint64_t b)
{
    if (b >= (1u << 30))
        snprintf(out, n, "%.2f GiB", b / 1073741824.0);
    else if (b >= (1u << 20))
        snprintf(out, n, "%.2f MiB", b / 1048576.0);
    else if (b >= 1024)
        snprintf(out, n, "%.1f KiB", b / 1024.0);
    else
        snprintf(out, n, "%llu B", (unsigned long long)b);
}

/* ------------------------------------------------------------ header */

static void draw_legend(SDL_Renderer *r, const viz_layout_t *L)
{
    static const isa_class_t cls[] = { ISA_CLASS_MATMUL, ISA_CLASS_ACT, ISA_CLASS_VECTOR,
                                       ISA_CLASS_POOL, ISA_CLASS_DMA, ISA_CLASS_SYNC,
                                       ISA_CLASS_CONTROL };
    int w = 0;
    for (size_t i = 0; i < sizeof cls / sizeof cls[0]; i++)
        w += 12 + viz_font_width(isa_class_name(cls[i]), 1) + 8;
    int x = L->width - w - 4;
    for (size_t i = 0; i < sizeof cls / sizeof cls[0]; i++) {
        fill(r, x, 4, 9, 7, viz_class_rgb(cls[i]));
        x = text(r, x + 12, 4, isa_class_name(cls[i]), VIZ_RGB_TEXT) + 8;
    }
}

static void draw_axis(SDL_Renderer *r, const viz_trace_t *t, const viz_layout_t *L)
{
    const viz_view_t *v = &L->view;
    int y0 = 16;
    fill(r, 0, y0, L->width, VIZ_HEADER_H - y0, 0x1d2027U);
    text(r, 4, y0 + 4, "cycles", VIZ_RGB_DIM);
    text(r, 4, y0 + 16, "time", VIZ_RGB_DIM);
    double step = viz_view_tick_step(v, 90);
    double c = ceil(v->cyc0 / step) * step;
    if (c < 0)
        c = 0;
    for (int guard = 0; c < viz_view_end(v) && guard < 1000; c += step, guard++) {
        int x = (int)lround(viz_view_x(v, c));
        fill(r, x, VIZ_HEADER_H - 6, 1, 6, VIZ_RGB_DIM);
        char a[32], b[32];
        fmt_cycles(a, sizeof a, c);
        fmt_us(b, sizeof b, viz_cycles_to_us(t, c));
        text(r, x + 2, y0 + 4, a, VIZ_RGB_TEXT);
        text(r, x + 2, y0 + 16, b, VIZ_RGB_DIM);
    }
}

static void draw_header(SDL_Renderer *r, const viz_trace_t *t, const viz_layout_t *L,
                        const viz_ui_t *ui)
{
    char line[256];
    char a[32], b[32];
    fmt_cycles(a, sizeof a, L->view.cyc0);
    fmt_cycles(b, sizeof b, viz_view_end(&L->view));
    snprintf(line, sizeof line, "%s%s%s  %.3g GHz  %u instr  view %s..%s cycles",
             t->kernel[0] ? t->kernel : "trace", t->target[0] ? " on " : "", t->target,
             t->clock_ghz, t->nev, a, b);
    int x = text(r, 4, 4, line, VIZ_RGB_TEXT);
    if (ui->searching || ui->search[0]) {
        snprintf(line, sizeof line, "  /%s%s  %u match%s", ui->search, ui->searching ? "_" : "",
                 ui->matches, ui->matches == 1 ? "" : "es");
        x = text(r, x, 4, line, VIZ_RGB_MATCH);
    }
    if (ui->playing || ui->cursor >= 0) {
        snprintf(line, sizeof line, "  %s %.3g cyc/s", ui->playing ? "PLAY" : "paused",
                 ui->speed);
        x = text(r, x, 4, line, VIZ_RGB_CURSOR);
    }
    if (ui->status[0])
        text(r, x + 12, 4, ui->status, VIZ_RGB_ARROW);
    if (ui->show_legend)
        draw_legend(r, L);
    draw_axis(r, t, L);
}

/* ------------------------------------------------------------ lanes */

typedef struct {
    SDL_Renderer *r;
    const viz_trace_t *t;
    const viz_layout_t *L;
    const viz_ui_t *ui;
    uint32_t lane;
} span_ctx_t;

static bool matches_search(const viz_trace_t *t, const viz_ui_t *ui, const viz_event_t *e)
{
    return ui->search[0] && strstr(viz_str(t, e->name), ui->search) != NULL;
}

static void draw_span(void *vctx, const viz_span_t *s)
{
    span_ctx_t *c = vctx;
    const viz_event_t *e = &c->t->ev[s->ev];
    int y = viz_layout_row_y(c->L, c->lane, s->row);
    int h = VIZ_ROW_H - 2;
    uint32_t col = viz_class_rgb(s->cls);
    if (s->count > 1) /* merged sub-pixel events: shade by how busy */
        col = mix(VIZ_RGB_LANE_BG, col, 0.35 + 0.65 * s->fill);
    int w = s->x1 - s->x0;
    fill(c->r, s->x0, y + 1, w, h, col);
    if (w >= 4)
        fill(c->r, s->x1 - 1, y + 1, 1, h, mix(col, 0, 0.45)); /* edge between boxes */
    if (s->count == 1) {
        const char *nm = viz_str(c->t, e->name);
        if (w >= viz_font_width(nm, 1) + 4)
            text(c->r, s->x0 + 2, y + 5, nm, 0x101010U);
        else if (w >= 16)
            text_fit(c->r, s->x0 + 2, y + 5, nm, w - 4, 0x101010U);
        if (matches_search(c->t, c->ui, e))
            fill(c->r, s->x0, y + 1, w, 2, VIZ_RGB_MATCH);
    } else if (c->ui->search[0]) {
        /* merged span: highlight if any merged event matches */
        const viz_lane_t *l = &c->t->lanes[c->lane];
        double c0 = viz_view_cycle(&c->L->view, s->x0), c1 = viz_view_cycle(&c->L->view, s->x1);
        for (uint32_t i = viz_lane_first_visible(c->t, l, c0); i < l->nev; i++) {
            const viz_event_t *m = &c->t->ev[l->ev[i]];
            if ((double)m->start >= c1)
                break;
            if (m->row == s->row && matches_search(c->t, c->ui, m)) {
                fill(c->r, s->x0, y + 1, w, 2, VIZ_RGB_MATCH);
                break;
            }
        }
    }
}

static void draw_util(SDL_Renderer *r, const viz_trace_t *t, const viz_layout_t *L, uint32_t lane,
                      float *buf)
{
    const viz_lane_geom_t *g = &L->lane[lane];
    if (g->util_h <= 0)
        return;
    int y = L->lanes_top - L->scroll + g->util_y;
    fill(r, L->view.x0, y, L->view.w, g->util_h, 0x1b1e24U);
    viz_lane_util(t, &L->view, lane, buf);
    set_rgb(r, VIZ_RGB_UTIL);
    for (int x = 0; x < L->view.w; x++) {
        int hh = (int)lround(buf[x] * g->util_h);
        if (hh > 0)
            SDL_RenderDrawLine(r, L->view.x0 + x, y + g->util_h - hh, L->view.x0 + x,
                               y + g->util_h - 1);
    }
}

static void draw_lanes(SDL_Renderer *r, const viz_trace_t *t, const viz_layout_t *L,
                       const viz_ui_t *ui, float *buf)
{
    for (uint32_t i = 0; i < t->nlanes; i++) {
        const viz_lane_geom_t *g = &L->lane[i];
        int y = L->lanes_top - L->scroll + g->y;
        if (y + g->h + g->util_h < L->lanes_top || y >= L->lanes_bottom)
            continue;
        const viz_lane_t *l = &t->lanes[i];
        fill(r, L->view.x0, y, L->view.w, g->h, VIZ_RGB_LANE_BG);
        text_fit(r, 4, y + 5, l->name, VIZ_LABEL_W - 8,
                 l->kind == VIZ_LANE_DMA ? 0x9fd8e0U : VIZ_RGB_TEXT);
        span_ctx_t c = { r, t, L, ui, i };
        viz_lane_spans(t, &L->view, i, draw_span, &c);
        draw_util(r, t, L, i, buf);
    }
}

static void draw_counters(SDL_Renderer *r, const viz_trace_t *t, const viz_layout_t *L)
{
    const viz_view_t *v = &L->view;
    for (uint32_t i = 0; i < t->nctr; i++) {
        const viz_counter_t *ct = &t->ctr[i];
        int y = L->lanes_top - L->scroll + L->ctr_y[i];
        if (y + VIZ_CTR_H < L->lanes_top || y >= L->lanes_bottom)
            continue;
        int h = VIZ_CTR_H - 4;
        fill(r, v->x0, y, v->w, h, 0x1f1c26U);
        int64_t lo = ct->vmin < 0 ? ct->vmin : 0, hi = ct->vmax > lo ? ct->vmax : lo + 1;
        int found;
        int64_t cur = viz_counter_at(ct, v->cyc0, &found);
        char label[128];
        snprintf(label, sizeof label, "%s", ct->name);
        text_fit(r, 4, y + 1, label, VIZ_LABEL_W - 8, VIZ_RGB_SEM);
        snprintf(label, sizeof label, "max %lld", (long long)ct->vmax);
        text(r, 4, y + 11, label, VIZ_RGB_DIM);
#define VY(val) (y + h - 1 - (int)((double)((val) - lo) * (h - 3) / (double)(hi - lo)))
        set_rgb(r, VIZ_RGB_SEM);
        /* step line; samples falling in one pixel column collapse into one
         * vertical stroke over their range, so a frame costs at most a
         * couple of lines per column however many samples there are */
        int px = v->x0, py = VY(cur);
        for (uint32_t j = viz_counter_lower(ct, v->cyc0); j < ct->n;) {
            double fx = viz_view_x(v, (double)ct->s[j].cycle);
            if (fx >= v->x0 + v->w)
                break;
            int nx = (int)fx, lo_y = py, hi_y = py, ny = py;
            for (; j < ct->n && (int)viz_view_x(v, (double)ct->s[j].cycle) == nx; j++) {
                ny = VY(ct->s[j].value);
                lo_y = ny < lo_y ? ny : lo_y;
                hi_y = ny > hi_y ? ny : hi_y;
            }
            SDL_RenderDrawLine(r, px, py, nx, py);
            SDL_RenderDrawLine(r, nx, lo_y, nx, hi_y);
            px = nx;
            py = ny;
        }
        SDL_RenderDrawLine(r, px, py, v->x0 + v->w - 1, py);
#undef VY
    }
}

/* ------------------------------------------------------------ arrows */

static bool event_center(const viz_trace_t *t, const viz_layout_t *L, uint32_t ev, bool at_end,
                         int *x, int *y)
{
    const viz_event_t *e = &t->ev[ev];
    double fx = viz_view_x(&L->view, (double)(at_end ? e->end : e->start));
    if (fx < -1e6 || fx > 1e6)
        return false;
    *x = (int)lround(fx);
    *y = viz_layout_row_y(L, e->lane, e->row) + VIZ_ROW_H / 2;
    return true;
}

static void arrow(SDL_Renderer *r, int x0, int y0, int x1, int y1)
{
    set_rgb(r, VIZ_RGB_ARROW);
    SDL_RenderDrawLine(r, x0, y0, x1, y1);
    SDL_RenderDrawLine(r, x0, y0 + 1, x1, y1 + 1);
    double a = atan2(y1 - y0, x1 - x0);
    for (int s = -1; s <= 1; s += 2) {
        double b = a + VIZ_PI + s * 0.45;
        SDL_RenderDrawLine(r, x1, y1, x1 + (int)lround(9 * cos(b)), y1 + (int)lround(9 * sin(b)));
    }
}

/* Producer -> waiter arrows of one event (its waited_for list, and the
 * issuing instruction of a DMA transfer). */
static void draw_deps(SDL_Renderer *r, const viz_trace_t *t, const viz_layout_t *L, int64_t ev)
{
    if (ev < 0 || (uint64_t)ev >= t->nev)
        return;
    const viz_event_t *e = &t->ev[ev];
    int wx, wy, px, py;
    if (!event_center(t, L, (uint32_t)ev, false, &wx, &wy))
        return;
    for (uint32_t k = 0; k < e->n_waited; k++) {
        int64_t p = viz_trace_find_ref(t, t->refs[e->waited_off + k], e->start);
        if (p >= 0 && event_center(t, L, (uint32_t)p, true, &px, &py))
            arrow(r, px, py, wx, wy);
    }
    if (e->issuer.pid > 0) {
        int64_t p = viz_trace_find_ref(t, e->issuer, e->start);
        if (p >= 0 && event_center(t, L, (uint32_t)p, true, &px, &py))
            arrow(r, px, py, wx, wy);
    }
}

static void highlight(SDL_Renderer *r, const viz_trace_t *t, const viz_layout_t *L, int64_t ev,
                      uint32_t rgb)
{
    if (ev < 0 || (uint64_t)ev >= t->nev)
        return;
    const viz_event_t *e = &t->ev[ev];
    double x0 = viz_view_x(&L->view, (double)e->start), x1 = viz_view_x(&L->view, (double)e->end);
    if (x1 < L->view.x0 - 2 || x0 > L->view.x0 + L->view.w + 2)
        return;
    if (x0 < L->view.x0 - 2)
        x0 = L->view.x0 - 2;
    if (x1 > L->view.x0 + L->view.w + 2)
        x1 = L->view.x0 + L->view.w + 2;
    int xa = (int)lround(x0), xb = (int)lround(x1);
    if (xb - xa < 3) {
        xa -= 1;
        xb = xa + 3;
    }
    int y = viz_layout_row_y(L, e->lane, e->row);
    outline(r, xa - 1, y, xb - xa + 2, VIZ_ROW_H, rgb);
}

/* ------------------------------------------------------------ panel */

static int panel_line(SDL_Renderer *r, int x, int *y, int max_px, const char *s, uint32_t rgb)
{
    text_fit(r, x, *y, s, max_px, rgb);
    *y += VIZ_CELL_H + 1;
    return *y;
}

static void draw_summary(SDL_Renderer *r, const viz_trace_t *t, int x, int y, int w, int bottom)
{
    char line[256], a[32], b[32];
    uint64_t total = t->total_cycles ? t->total_cycles : 1;
    fmt_us(b, sizeof b, viz_cycles_to_us(t, (double)t->total_cycles));
    snprintf(line, sizeof line, "total %llu cycles (%s)%s", (unsigned long long)t->total_cycles, b,
             t->total_from_trace ? "" : " [from events]");
    panel_line(r, x, &y, w, line, VIZ_RGB_TEXT);
    uint64_t stall = 0, bytes = 0;
    for (uint32_t i = 0; i < t->nlanes; i++) {
        stall += t->lanes[i].wait;
        bytes += t->lanes[i].bytes;
    }
    fmt_bytes(a, sizeof a, bytes);
    snprintf(line, sizeof line, "stalls %llu sem-wait cycles   DMA %s%s", (unsigned long long)stall, a,
             t->stats_used ? "" : " [from events]");
    panel_line(r, x, &y, w, line, VIZ_RGB_TEXT);
    int col_w = w / 2;
    int cx = x, cy = y, lines_left = (bottom - y) / (VIZ_CELL_H + 1);
    int col = 0;
    for (uint32_t i = 0; i < t->nlanes && col < 2; i++) {
        const viz_lane_t *l = &t->lanes[i];
        if (l->kind == VIZ_LANE_DMA) {
            fmt_bytes(a, sizeof a, l->bytes);
            snprintf(line, sizeof line, "%s %s %.0f%%", l->name, a, 100.0 * l->busy / total);
        } else {
            snprintf(line, sizeof line, "%s %.1f%% st %llu", l->name, 100.0 * l->busy / total,
                     (unsigned long long)l->wait);
        }
        panel_line(r, cx, &cy, col_w - 6, line, l->kind == VIZ_LANE_DMA ? 0x9fd8e0U : VIZ_RGB_DIM);
        if (--lines_left <= 0) {
            col++;
            cx += col_w;
            cy = y;
            lines_left = (bottom - y) / (VIZ_CELL_H + 1);
        }
    }
}

static void lane_label(const viz_trace_t *t, viz_ref_t ref, char *out, size_t n)
{
    const char *eng = viz_engine_of_tid(ref.tid);
    if (eng)
        snprintf(out, n, "core%d %s pc %d", ref.pid - 1, eng, ref.pc);
    else if (ref.tid >= 100)
        snprintf(out, n, "core%d q%d transfer issued at pc %d", ref.pid - 1, (ref.tid - 100) / 8,
                 ref.pc);
    else
        snprintf(out, n, "pid %d tid %d pc %d", ref.pid, ref.tid, ref.pc);
    (void)t;
}

static void draw_details(SDL_Renderer *r, const viz_trace_t *t, int64_t ev, int x, int y, int w,
                         int bottom)
{
    if (ev < 0 || (uint64_t)ev >= t->nev) {
        panel_line(r, x, &y, w, "hover or click an instruction for its fields; ? for help",
                   VIZ_RGB_DIM);
        return;
    }
    const viz_event_t *e = &t->ev[ev];
    char line[512], a[32], b[96];
    snprintf(line, sizeof line, "%s  [%s]  %s", viz_str(t, e->name),
             e->cat ? viz_str(t, e->cat) : "?", t->lanes[e->lane].name);
    if (e->pc >= 0)
        snprintf(line + strlen(line), sizeof line - strlen(line), "  pc %d", e->pc);
    if (e->opcode >= 0)
        snprintf(line + strlen(line), sizeof line - strlen(line), "  opcode 0x%02x", e->opcode);
    panel_line(r, x, &y, w, line, viz_class_rgb(e->cls));
    fmt_us(a, sizeof a, viz_cycles_to_us(t, (double)(e->end - e->start)));
    snprintf(line, sizeof line, "cycles %llu..%llu  (%llu cyc, %s)  issued %llu",
             (unsigned long long)e->start, (unsigned long long)e->end,
             (unsigned long long)(e->end - e->start), a, (unsigned long long)e->issue);
    panel_line(r, x, &y, w, line, VIZ_RGB_TEXT);
    if (e->wait_cycles || e->wait || e->n_waited) {
        snprintf(line, sizeof line, "waited %llu cyc on %s", (unsigned long long)e->wait_cycles,
                 e->wait ? viz_str(t, e->wait) : "(no condition)");
        for (uint32_t k = 0; k < e->n_waited && k < 3; k++) {
            viz_ref_t rf = t->refs[e->waited_off + k];
            lane_label(t, rf, b, sizeof b);
            int64_t p = viz_trace_find_ref(t, rf, e->start);
            snprintf(line + strlen(line), sizeof line - strlen(line), "%s %s%s%s%s",
                     k ? "," : "  for", b, p >= 0 ? " (" : "", p >= 0 ? viz_str(t, t->ev[p].name) : "",
                     p >= 0 ? ")" : "");
        }
        panel_line(r, x, &y, w, line, VIZ_RGB_ARROW);
    }
    if (e->bytes || e->queue >= 0) {
        fmt_bytes(a, sizeof a, e->bytes);
        snprintf(line, sizeof line, "DMA queue %d  %s", e->queue, a);
        if (e->descriptors >= 0)
            snprintf(line + strlen(line), sizeof line - strlen(line), "  %d descriptors",
                     e->descriptors);
        if (e->issuer.pid > 0) {
            lane_label(t, e->issuer, b, sizeof b);
            snprintf(line + strlen(line), sizeof line - strlen(line), "  issued by %s", b);
        }
        panel_line(r, x, &y, w, line, 0x9fd8e0U);
    }
    if (e->src || e->op_name) {
        snprintf(line, sizeof line, "src %s  op %s", e->src ? viz_str(t, e->src) : "-",
                 e->op_name ? viz_str(t, e->op_name) : "-");
        if (e->buf)
            snprintf(line + strlen(line), sizeof line - strlen(line), "  buf %s",
                     viz_str(t, e->buf));
        if (e->iter1)   /* rolled loops: the run of this instruction */
            snprintf(line + strlen(line), sizeof line - strlen(line), "  iter %d", e->iter1 - 1);
        panel_line(r, x, &y, w, line, VIZ_RGB_DIM);
    }
    /* decoded fields, wrapped on spaces */
    const char *f = viz_str(t, e->fields);
    int per = w / VIZ_CELL_W;
    if (per < 8)
        return;
    while (*f && y + VIZ_CELL_H <= bottom) {
        int n = (int)strlen(f);
        if (n > per) {
            n = per;
            for (int k = per; k > per / 2; k--)
                if (f[k] == ' ') {
                    n = k;
                    break;
                }
        }
        snprintf(line, sizeof line, "%.*s", n < (int)sizeof line - 1 ? n : (int)sizeof line - 1, f);
        panel_line(r, x, &y, w, line, VIZ_RGB_TEXT);
        f += n;
        while (*f == ' ')
            f++;
    }
}

static void draw_panel(SDL_Renderer *r, const viz_trace_t *t, const viz_layout_t *L,
                       const viz_ui_t *ui)
{
    int y = L->lanes_bottom;
    fill(r, 0, y, L->width, L->height - y, 0x1d2027U);
    fill(r, 0, y, L->width, 1, 0x3a3f4aU);
    int split = L->width * 2 / 5;
    draw_summary(r, t, 6, y + 5, split - 12, L->height - 2);
    fill(r, split, y + 4, 1, L->height - y - 8, 0x3a3f4aU);
    int64_t ev = ui->hover >= 0 ? ui->hover : ui->selected;
    draw_details(r, t, ev, split + 8, y + 5, L->width - split - 14, L->height - 2);
}

/* ------------------------------------------------------------ overlays */

static const char *const help_lines[] = {
    "tpb view - keys and mouse",
    "",
    "wheel, + / -       zoom around the mouse / the centre",
    "drag, left/right   pan in time",
    "shift+wheel, up/down, PgUp/PgDn   scroll lanes",
    "f or 0             fit the whole trace",
    "click              select an instruction (arrows = what it waited for)",
    "n / p  (or . ,)    next / previous instruction on the selected lane",
    "/ text Enter       search mnemonics; n / p then jump between matches",
    "Esc                clear search / selection, close help",
    "space              play: sweep a cursor through time",
    "[ / ]              play slower / faster",
    "s / b              step: cursor to the next / previous instruction start",
    "Home               go to cycle 0",
    "l                  legend on/off",
    "?                  this help",
    "q                  quit",
};

static void draw_help(SDL_Renderer *r, const viz_layout_t *L)
{
    int n = (int)(sizeof help_lines / sizeof help_lines[0]);
    int w = 0;
    for (int i = 0; i < n; i++) {
        int lw = viz_font_width(help_lines[i], 1);
        if (lw > w)
            w = lw;
    }
    w += 24;
    int h = n * (VIZ_CELL_H + 3) + 20;
    int x = (L->width - w) / 2, y = (L->height - h) / 2;
    fill(r, x, y, w, h, 0x0d0f12U);
    outline(r, x, y, w, h, VIZ_RGB_DIM);
    for (int i = 0; i < n; i++)
        text(r, x + 12, y + 10 + i * (VIZ_CELL_H + 3), help_lines[i],
             i == 0 ? VIZ_RGB_MATCH : VIZ_RGB_TEXT);
}

static void draw_cursor(SDL_Renderer *r, const viz_trace_t *t, const viz_layout_t *L,
                        const viz_ui_t *ui)
{
    if (ui->cursor < 0)
        return;
    double fx = viz_view_x(&L->view, ui->cursor);
    if (fx < L->view.x0 || fx >= L->view.x0 + L->view.w)
        return;
    int x = (int)lround(fx);
    fill(r, x, L->lanes_top, 1, L->lanes_bottom - L->lanes_top, VIZ_RGB_CURSOR);
    char s[48], u[32];
    fmt_us(u, sizeof u, viz_cycles_to_us(t, ui->cursor));
    snprintf(s, sizeof s, "%.0f %s", ui->cursor, u);
    int w = viz_font_width(s, 1) + 4;
    fill(r, x + 1, L->lanes_top, w, VIZ_CELL_H + 2, VIZ_RGB_CURSOR);
    text(r, x + 3, L->lanes_top + 1, s, 0x101010U);
}

void viz_render(SDL_Renderer *r, const viz_trace_t *t, const viz_layout_t *L, const viz_ui_t *ui)
{
    float buf[8192];
    float *ub = buf;
    fill(r, 0, 0, L->width, L->height, VIZ_RGB_BG);
    SDL_Rect clip = { 0, L->lanes_top, L->width, L->lanes_bottom - L->lanes_top };
    SDL_RenderSetClipRect(r, &clip);
    if (L->view.w <= (int)(sizeof buf / sizeof buf[0])) {
        draw_lanes(r, t, L, ui, ub);
    }
    draw_counters(r, t, L);
    draw_deps(r, t, L, ui->selected);
    if (ui->hover != ui->selected)
        draw_deps(r, t, L, ui->hover);
    highlight(r, t, L, ui->hover, 0xb0b0b0U);
    highlight(r, t, L, ui->selected, VIZ_RGB_SELECT);
    draw_cursor(r, t, L, ui);
    /* label column over anything scrolled under it */
    SDL_RenderSetClipRect(r, NULL);
    draw_header(r, t, L, ui);
    draw_panel(r, t, L, ui);
    if (t->nev == 0)
        text(r, VIZ_LABEL_W, L->lanes_top + 8, "(no instruction events in this trace)", VIZ_RGB_DIM);
    if (ui->show_help)
        draw_help(r, L);
}

/* ------------------------------------------------------------ headless */

int viz_save_bmp(SDL_Surface *s, const char *path, tpb_err_t *err)
{
    uint32_t row = ((uint32_t)s->w * 3 + 3) & ~3u;
    uint32_t size = 54 + row * (uint32_t)s->h;
    uint8_t hdr[54] = { 'B', 'M' };
    uint32_t fields[] = { size, 0, 54, 40, (uint32_t)s->w, (uint32_t)s->h };
    for (int i = 0; i < 6; i++)
        for (int b = 0; b < 4; b++)
            hdr[2 + i * 4 + b] = (uint8_t)(fields[i] >> (8 * b));
    hdr[26] = 1;  /* planes */
    hdr[28] = 24; /* bits per pixel; compression 0; the rest 0 */
    uint32_t img = row * (uint32_t)s->h;
    for (int b = 0; b < 4; b++)
        hdr[34 + b] = (uint8_t)(img >> (8 * b));
    fio_atomic_t a;
    if (fio_atomic_open(&a, path, err))
        return -1;
    uint8_t line[3 * 8192 + 4];
    bool ok = fwrite(hdr, 1, sizeof hdr, a.f) == sizeof hdr;
    if (SDL_LockSurface(s) != 0)
        ok = false;
    for (int y = s->h - 1; ok && y >= 0; y--) { /* BMP rows are bottom-up */
        memset(line, 0, row);
        const uint8_t *p = (const uint8_t *)s->pixels + (size_t)y * s->pitch;
        for (int x = 0; x < s->w; x++) {
            uint32_t px;
            memcpy(&px, p + (size_t)x * 4, 4);
            uint8_t cr, cg, cb;
            SDL_GetRGB(px, s->format, &cr, &cg, &cb);
            line[x * 3] = cb;
            line[x * 3 + 1] = cg;
            line[x * 3 + 2] = cr;
        }
        ok = fwrite(line, 1, row, a.f) == row;
    }
    SDL_UnlockSurface(s);
    if (!ok) {
        fio_atomic_abort(&a);
        return tpb_errf(err, "%s: write failed", path);
    }
    return fio_atomic_commit(&a, err);
}

int viz_render_screenshot(const viz_trace_t *t, int width, int height, double from, double to,
                          int64_t selected, const char *out_bmp, tpb_err_t *err)
{
    if (width < 200 || height < 150 || width > 8192 || height > 8192)
        return tpb_errf(err, "--width/--height: %dx%d out of range (200..8192 x 150..8192)", width,
                        height);
    viz_layout_t L;
    if (viz_layout_init(&L, t, width, height))
        return tpb_errf(err, "out of memory");
    if (to > from)
        viz_view_fit(&L.view, from, to);
    viz_ui_t ui;
    viz_ui_init(&ui);
    ui.selected = selected;
    int rc = -1;
    SDL_Surface *s = SDL_CreateRGBSurfaceWithFormat(0, width, height, 32, SDL_PIXELFORMAT_ARGB8888);
    SDL_Renderer *r = s ? SDL_CreateSoftwareRenderer(s) : NULL;
    if (!r) {
        tpb_errf(err, "cannot create a software renderer: %s", SDL_GetError());
    } else {
        viz_render(r, t, &L, &ui);
        SDL_RenderPresent(r);
        rc = viz_save_bmp(s, out_bmp, err);
    }
    if (r)
        SDL_DestroyRenderer(r);
    if (s)
        SDL_FreeSurface(s);
    viz_layout_free(&L);
    return rc;
}

#endif /* TPB_WITH_VIEWER */
