/* layout.c - lanes, time <-> pixel math, overlap rows, aggregation. */
#include "layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ lanes */

typedef struct {
    int32_t pid;
    viz_lane_kind_t kind;
    int32_t id;            /* tid (engine/other) or queue (DMA) */
} lane_key_t;

static lane_key_t key_of(const viz_event_t *e)
{
    lane_key_t k = { e->pid, VIZ_LANE_OTHER, e->tid };
    if (e->tid >= 1 && e->tid <= 5) {
        k.kind = VIZ_LANE_ENGINE;
    } else if (e->tid >= 100) {
        k.kind = VIZ_LANE_DMA;
        k.id = (e->tid - 100) / 8;
    }
    return k;
}

static const viz_meta_t *find_meta(const viz_meta_t *m, uint32_t n, int32_t pid, int32_t tid)
{
    for (uint32_t i = 0; i < n; i++)
        if (m[i].pid == pid && m[i].tid == tid)
            return &m[i];
    return NULL;
}

static int64_t proc_order(const viz_trace_t *t, int32_t pid)
{
    const viz_meta_t *m = find_meta(t->procs, t->nprocs, pid, 0);
    return m && m->has_sort ? m->sort_index : pid;
}

static void name_lane(const viz_trace_t *t, viz_lane_t *l)
{
    const viz_meta_t *p = find_meta(t->procs, t->nprocs, l->pid, 0);
    char core[40];
    if (p && p->name[0])
        snprintf(core, sizeof core, "%.30s", p->name);
    else
        snprintf(core, sizeof core, "core%d", l->pid - 1);
    const viz_meta_t *th = find_meta(t->threads, t->nthreads, l->pid, l->tid);
    char what[64];
    if (th && th->name[0]) {
        snprintf(what, sizeof what, "%s", th->name);
        /* a DMA slot lane "q3 qSyncIO0 [0]": the lane is the whole queue */
        char *br = strrchr(what, '[');
        if (l->kind == VIZ_LANE_DMA && br && br > what && br[-1] == ' ')
            br[-1] = 0;
    } else if (l->kind == VIZ_LANE_ENGINE) {
        snprintf(what, sizeof what, "%s", viz_engine_of_tid(l->tid));
    } else if (l->kind == VIZ_LANE_DMA) {
        snprintf(what, sizeof what, "q%d", l->queue);
    } else {
        snprintf(what, sizeof what, "tid %d", l->tid);
    }
    size_t n = strlen(core);
    memcpy(l->name, core, n);
    l->name[n++] = ' ';
    size_t m = strlen(what);
    if (m > sizeof l->name - 1 - n)
        m = sizeof l->name - 1 - n;
    memcpy(l->name + n, what, m);
    l->name[n + m] = 0;
}

static int lane_cmp(const void *a, const void *b)
{
    const viz_lane_t *x = a, *y = b;
    /* sort_index carries the process order in the high part (see below) */
    if (x->sort_index != y->sort_index)
        return x->sort_index < y->sort_index ? -1 : 1;
    return 0;
}

typedef struct {
    uint64_t start, end;
    uint32_t idx;
} ev_key_t;

static int ev_key_cmp(const void *a, const void *b)
{
    const ev_key_t *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Greedy interval partitioning: each event takes the first row already free
 * at its start.  Engines never overlap (one row); DMA queues overlap by
 * design; a malformed engine lane still draws every box. */
static void assign_rows(viz_trace_t *t, viz_lane_t *l)
{
    uint64_t row_end[VIZ_MAX_ROWS] = { 0 };
    uint32_t nrows = 1;
    for (uint32_t i = 0; i < l->nev; i++) {
        viz_event_t *e = &t->ev[l->ev[i]];
        uint32_t r = 0;
        while (r < nrows && row_end[r] > e->start)
            r++;
        if (r == nrows) {
            if (nrows < VIZ_MAX_ROWS)
                nrows++;
            else
                r = nrows - 1; /* too deep: stack on the last row */
        }
        e->row = r;
        if (e->end > row_end[r])
            row_end[r] = e->end;
    }
    l->nrows = nrows;
}

/* Overlaps on one tid break the trace contract (docs/trace-format.md); the
 * viewer still draws them on extra rows and reports how many. */
static uint32_t count_tid_overlaps(const viz_trace_t *t, const viz_lane_t *l)
{
    uint32_t n = 0;
    if (l->kind == VIZ_LANE_DMA) {
        /* slot tids: an overlap within one slot tid is the violation */
        for (uint32_t i = 0; i < l->nev; i++) {
            const viz_event_t *e = &t->ev[l->ev[i]];
            for (uint32_t j = i; j-- > 0;) {
                const viz_event_t *p = &t->ev[l->ev[j]];
                if (p->tid == e->tid) {
                    n += p->end > e->start;
                    break;
                }
            }
        }
        return n;
    }
    uint64_t max_end = 0;
    for (uint32_t i = 0; i < l->nev; i++) {
        const viz_event_t *e = &t->ev[l->ev[i]];
        if (i > 0 && max_end > e->start)
            n++;
        if (e->end > max_end)
            max_end = e->end;
    }
    return n;
}

static void lane_totals(viz_trace_t *t, viz_lane_t *l)
{
    uint64_t cur_s = 0, cur_e = 0;
    bool open = false;
    l->busy = l->wait = l->bytes = 0;
    for (uint32_t i = 0; i < l->nev; i++) {
        const viz_event_t *e = &t->ev[l->ev[i]];
        l->max_end[i] = (i && l->max_end[i - 1] > e->end) ? l->max_end[i - 1] : e->end;
        l->wait += e->wait_cycles;
        l->bytes += e->bytes;
        if (open && e->start <= cur_e) {
            if (e->end > cur_e)
                cur_e = e->end;
            continue;
        }
        if (open)
            l->busy += cur_e - cur_s;
        cur_s = e->start;
        cur_e = e->end;
        open = true;
    }
    if (open)
        l->busy += cur_e - cur_s;
}

static int find_lane(const lane_key_t *keys, uint32_t n, lane_key_t k)
{
    for (uint32_t i = n; i-- > 0;)
        if (keys[i].pid == k.pid && keys[i].kind == k.kind && keys[i].id == k.id)
            return (int)i;
    return -1;
}

typedef struct {
    lane_key_t *k;
    uint32_t n, cap;
} keyset_t;

/* Index of key k in the set, adding it if new; -1 when out of memory. */
static int keyset_add(keyset_t *ks, lane_key_t k, uint32_t hint)
{
    if (hint < ks->n && ks->k[hint].pid == k.pid && ks->k[hint].kind == k.kind &&
        ks->k[hint].id == k.id)
        return (int)hint;
    int li = find_lane(ks->k, ks->n, k);
    if (li >= 0)
        return li;
    if (ks->n == ks->cap) {
        uint32_t nc = ks->cap ? ks->cap * 2 : 16;
        lane_key_t *q = realloc(ks->k, nc * sizeof *q);
        if (!q)
            return -1;
        ks->k = q;
        ks->cap = nc;
    }
    ks->k[ks->n] = k;
    return (int)ks->n++;
}

int viz_lanes_build(viz_trace_t *t, tpb_err_t *err)
{
    keyset_t ks = { NULL, 0, 0 };
    uint32_t last = 0;
    uint32_t *lane_of = malloc(((size_t)t->nev + 1) * sizeof *lane_of);
    if (!lane_of)
        return tpb_errf(err, "out of memory");
    /* engines and queues named by metadata get a lane even when idle, so
     * an engine that only waited still shows (and its stall in the summary) */
    for (uint32_t i = 0; i < t->nthreads; i++) {
        viz_event_t probe;
        memset(&probe, 0, sizeof probe);
        probe.pid = t->threads[i].pid;
        probe.tid = t->threads[i].tid;
        lane_key_t k = key_of(&probe);
        if (k.kind != VIZ_LANE_OTHER && keyset_add(&ks, k, UINT32_MAX) < 0) {
            free(ks.k);
            free(lane_of);
            return tpb_errf(err, "out of memory");
        }
    }
    for (uint32_t i = 0; i < t->nev; i++) {
        int li = keyset_add(&ks, key_of(&t->ev[i]), last);
        if (li < 0) {
            free(ks.k);
            free(lane_of);
            return tpb_errf(err, "out of memory");
        }
        last = (uint32_t)li;
        lane_of[i] = (uint32_t)li;
    }
    lane_key_t *keys = ks.k;
    uint32_t nkeys = ks.n;
    t->lanes = calloc(nkeys ? nkeys : 1, sizeof *t->lanes);
    ev_key_t *sk = malloc(((size_t)t->nev + 1) * sizeof *sk);
    uint32_t *perm = malloc((nkeys ? nkeys : 1) * sizeof *perm);
    if (!t->lanes || !sk || !perm) {
        free(keys);
        free(lane_of);
        free(sk);
        free(perm);
        return tpb_errf(err, "out of memory");
    }
    t->nlanes = nkeys;
    for (uint32_t i = 0; i < nkeys; i++) {
        viz_lane_t *l = &t->lanes[i];
        l->pid = keys[i].pid;
        l->kind = keys[i].kind;
        l->queue = keys[i].kind == VIZ_LANE_DMA ? keys[i].id : -1;
        l->tid = keys[i].kind == VIZ_LANE_DMA ? 100 + keys[i].id * 8 : keys[i].id;
        const viz_meta_t *th = find_meta(t->threads, t->nthreads, l->pid, l->tid);
        int64_t within = th && th->has_sort ? th->sort_index : l->tid;
        /* order: process, then kind (engines, DMA, other), then thread order */
        l->sort_index = proc_order(t, l->pid) * 4000000000LL + (int64_t)l->kind * 1000000000LL +
                        (within % 1000000000LL);
        l->ev = (uint32_t *)(uintptr_t)i; /* remember the original key index */
        name_lane(t, l);
    }
    qsort(t->lanes, nkeys, sizeof *t->lanes, lane_cmp);
    for (uint32_t i = 0; i < nkeys; i++) {
        perm[(uint32_t)(uintptr_t)t->lanes[i].ev] = i;
        t->lanes[i].ev = NULL;
    }
    int rc = 0;
    /* bucket events per lane, then sort each bucket by start */
    for (uint32_t i = 0; i < t->nev; i++) {
        t->ev[i].lane = perm[lane_of[i]];
        t->lanes[t->ev[i].lane].nev++;
    }
    t->n_overlaps = 0;
    for (uint32_t li = 0; li < nkeys && rc == 0; li++) {
        viz_lane_t *l = &t->lanes[li];
        l->ev = malloc((l->nev + 1) * sizeof *l->ev);
        l->max_end = malloc((l->nev + 1) * sizeof *l->max_end);
        if (!l->ev || !l->max_end) {
            rc = tpb_errf(err, "out of memory");
            break;
        }
        uint32_t n = 0;
        for (uint32_t i = 0; i < t->nev; i++)
            if (t->ev[i].lane == li)
                sk[n++] = (ev_key_t){ t->ev[i].start, t->ev[i].end, i };
        qsort(sk, n, sizeof *sk, ev_key_cmp);
        for (uint32_t i = 0; i < n; i++)
            l->ev[i] = sk[i].idx;
        assign_rows(t, l);
        t->n_overlaps += count_tid_overlaps(t, l);
        lane_totals(t, l);
    }
    free(keys);
    free(lane_of);
    free(sk);
    free(perm);
    return rc;
}

/* ------------------------------------------------------------ view */

double viz_view_x(const viz_view_t *v, double cycle)
{
    return v->x0 + (cycle - v->cyc0) / v->cpp;
}

double viz_view_cycle(const viz_view_t *v, double x)
{
    return v->cyc0 + (x - v->x0) * v->cpp;
}

double viz_view_end(const viz_view_t *v)
{
    return v->cyc0 + v->w * v->cpp;
}

static double clampd(double x, double lo, double hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

void viz_view_fit(viz_view_t *v, double c0, double c1)
{
    if (v->w < 1)
        v->w = 1;
    if (!(c1 > c0))
        c1 = c0 + 1;
    v->cyc0 = c0;
    v->cpp = clampd((c1 - c0) / v->w, VIZ_MIN_CPP, VIZ_MAX_CPP);
}

void viz_view_zoom(viz_view_t *v, double factor, double anchor_x)
{
    if (!(factor > 0))
        return;
    double anchor = viz_view_cycle(v, anchor_x);
    v->cpp = clampd(v->cpp / factor, VIZ_MIN_CPP, VIZ_MAX_CPP);
    v->cyc0 = anchor - (anchor_x - v->x0) * v->cpp;
}

void viz_view_pan_px(viz_view_t *v, double dx)
{
    v->cyc0 += dx * v->cpp;
}

double viz_view_tick_step(const viz_view_t *v, double min_px)
{
    double want = min_px * v->cpp;
    if (want < 1)
        return 1;
    double p = pow(10.0, floor(log10(want)));
    if (p >= want)
        return p;
    if (2 * p >= want)
        return 2 * p;
    if (5 * p >= want)
        return 5 * p;
    return 10 * p;
}

/* ------------------------------------------------------------ visibility */

uint32_t viz_lane_first_visible(const viz_trace_t *t, const viz_lane_t *lane, double cycle)
{
    (void)t;
    uint32_t lo = 0, hi = lane->nev;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((double)lane->max_end[mid] > cycle)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Pixel coordinate clipped so huge zooms never overflow an int. */
static int clip_px(const viz_view_t *v, double x)
{
    return (int)floor(clampd(x, v->x0 - 2.0, v->x0 + v->w + 2.0));
}

typedef struct {
    bool open;
    viz_span_t s;
    double cls_cycles[ISA_CLASS_COUNT + 1];
    double busy;
} pending_t;

static void flush(const viz_view_t *v, pending_t *p, viz_span_fn fn, void *ctx)
{
    if (!p->open)
        return;
    int best = 0;
    for (int c = 1; c <= ISA_CLASS_COUNT; c++)
        if (p->cls_cycles[c] > p->cls_cycles[best])
            best = c;
    p->s.cls = (isa_class_t)best;
    double span_cycles = (p->s.x1 - p->s.x0) * v->cpp;
    p->s.fill = span_cycles > 0 ? clampd(p->busy / span_cycles, 0, 1) : 1;
    fn(ctx, &p->s);
    p->open = false;
}

void viz_lane_spans(const viz_trace_t *t, const viz_view_t *v, uint32_t lane, viz_span_fn fn,
                    void *ctx)
{
    if (lane >= t->nlanes)
        return;
    const viz_lane_t *l = &t->lanes[lane];
    double c0 = v->cyc0, c1 = viz_view_end(v);
    pending_t pend[VIZ_MAX_ROWS];
    for (int r = 0; r < VIZ_MAX_ROWS; r++)
        pend[r].open = false;
    for (uint32_t i = viz_lane_first_visible(t, l, c0); i < l->nev; i++) {
        const viz_event_t *e = &t->ev[l->ev[i]];
        if ((double)e->start >= c1)
            break;
        if ((double)e->end <= c0 && e->end != e->start)
            continue;
        uint32_t r = e->row < VIZ_MAX_ROWS ? e->row : VIZ_MAX_ROWS - 1;
        double fx0 = viz_view_x(v, (double)e->start), fx1 = viz_view_x(v, (double)e->end);
        pending_t *p = &pend[r];
        if (fx1 - fx0 >= 1.0) {
            flush(v, p, fn, ctx);
            viz_span_t s = { clip_px(v, fx0 + 0.5), clip_px(v, fx1 + 0.5), r, l->ev[i], 1,
                             e->cls, 1.0 };
            if (s.x1 <= s.x0)
                s.x1 = s.x0 + 1;
            fn(ctx, &s);
            continue;
        }
        int px = clip_px(v, fx0);
        if (p->open && px <= p->s.x1) {
            if (px + 1 > p->s.x1)
                p->s.x1 = px + 1;
            p->s.count++;
        } else {
            flush(v, p, fn, ctx);
            memset(p, 0, sizeof *p);
            p->open = true;
            p->s = (viz_span_t){ px, px + 1, r, l->ev[i], 1, e->cls, 1.0 };
        }
        p->cls_cycles[e->cls <= ISA_CLASS_COUNT ? e->cls : ISA_CLASS_COUNT] +=
            (double)(e->end - e->start);
        p->busy += (double)(e->end - e->start);
    }
    for (int r = 0; r < VIZ_MAX_ROWS; r++)
        flush(v, &pend[r], fn, ctx);
}

void viz_lane_util(const viz_trace_t *t, const viz_view_t *v, uint32_t lane, float *out)
{
    for (int x = 0; x < v->w; x++)
        out[x] = 0;
    if (lane >= t->nlanes)
        return;
    const viz_lane_t *l = &t->lanes[lane];
    double c0 = v->cyc0, c1 = viz_view_end(v);
    for (uint32_t i = viz_lane_first_visible(t, l, c0); i < l->nev; i++) {
        const viz_event_t *e = &t->ev[l->ev[i]];
        if ((double)e->start >= c1)
            break;
        /* event in column units relative to the plot */
        double a = clampd(((double)e->start - c0) / v->cpp, 0, v->w);
        double b = clampd(((double)e->end - c0) / v->cpp, 0, v->w);
        if (b <= a)
            continue;
        int ia = (int)floor(a), ib = (int)floor(b);
        if (ia == ib) {
            if (ia < v->w)
                out[ia] += (float)(b - a);
            continue;
        }
        out[ia] += (float)(ia + 1 - a);
        for (int x = ia + 1; x < ib && x < v->w; x++)
            out[x] += 1.0f;
        if (ib < v->w)
            out[ib] += (float)(b - ib);
    }
    for (int x = 0; x < v->w; x++)
        if (out[x] > 1.0f)
            out[x] = 1.0f; /* overlapping DMA slots: "busy" saturates */
}

int64_t viz_lane_hit(const viz_trace_t *t, uint32_t lane, uint32_t row, double cycle, double slack)
{
    if (lane >= t->nlanes)
        return -1;
    const viz_lane_t *l = &t->lanes[lane];
    int64_t best = -1;
    double best_d = slack;
    for (uint32_t i = viz_lane_first_visible(t, l, cycle - slack); i < l->nev; i++) {
        const viz_event_t *e = &t->ev[l->ev[i]];
        if ((double)e->start > cycle + slack)
            break;
        if (e->row != row && !(row >= VIZ_MAX_ROWS - 1 && e->row >= VIZ_MAX_ROWS - 1))
            continue;
        double d = cycle < (double)e->start ? (double)e->start - cycle
                   : cycle >= (double)e->end ? cycle - (double)e->end : 0.0;
        if (d == 0.0)
            return l->ev[i];
        if (d <= best_d) {
            best_d = d;
            best = l->ev[i];
        }
    }
    return best;
}

int64_t viz_lane_step(const viz_trace_t *t, uint32_t lane, double cycle, int dir)
{
    if (lane >= t->nlanes)
        return -1;
    const viz_lane_t *l = &t->lanes[lane];
    /* first index with start > cycle (starts are sorted) */
    uint32_t lo = 0, hi = l->nev;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((double)t->ev[l->ev[mid]].start > cycle)
            hi = mid;
        else
            lo = mid + 1;
    }
    if (dir > 0)
        return lo < l->nev ? (int64_t)lo : -1;
    /* previous: last index with start < cycle */
    while (lo > 0 && (double)t->ev[l->ev[lo - 1]].start >= cycle)
        lo--;
    return lo > 0 ? (int64_t)lo - 1 : -1;
}

uint32_t viz_counter_lower(const viz_counter_t *c, double cycle)
{
    uint32_t lo = 0, hi = c->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((double)c->s[mid].cycle >= cycle)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

int64_t viz_counter_at(const viz_counter_t *c, double cycle, int *found)
{
    /* last sample with cycle <= `cycle` */
    uint32_t lo = 0, hi = c->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((double)c->s[mid].cycle > cycle)
            hi = mid;
        else
            lo = mid + 1;
    }
    *found = lo > 0;
    return lo > 0 ? c->s[lo - 1].value : 0;
}

/* ------------------------------------------------------------ geometry */

static void place_rows(viz_layout_t *L, const viz_trace_t *t)
{
    int y = 0;
    for (uint32_t i = 0; i < t->nlanes; i++) {
        const viz_lane_t *l = &t->lanes[i];
        viz_lane_geom_t *g = &L->lane[i];
        g->y = y;
        g->h = (int)(l->nrows ? l->nrows : 1) * VIZ_ROW_H;
        g->util_h = l->kind == VIZ_LANE_DMA ? 0 : VIZ_UTIL_H;
        g->util_y = y + g->h;
        y += g->h + g->util_h + VIZ_LANE_GAP;
    }
    y += 6;
    for (uint32_t i = 0; i < t->nctr; i++) {
        L->ctr_y[i] = y;
        y += VIZ_CTR_H;
    }
    L->content_h = y;
}

static void set_plot(viz_layout_t *L, int width, int height)
{
    L->width = width;
    L->height = height;
    L->view.x0 = VIZ_LABEL_W;
    L->view.w = width - VIZ_LABEL_W - VIZ_RIGHT_M;
    if (L->view.w < 1)
        L->view.w = 1;
    L->lanes_top = VIZ_HEADER_H;
    L->lanes_bottom = height - VIZ_PANEL_H;
    if (L->lanes_bottom < L->lanes_top)
        L->lanes_bottom = L->lanes_top;
}

int viz_layout_init(viz_layout_t *L, const viz_trace_t *t, int width, int height)
{
    memset(L, 0, sizeof *L);
    L->lane = calloc(t->nlanes + 1, sizeof *L->lane);
    L->ctr_y = calloc(t->nctr + 1, sizeof *L->ctr_y);
    if (!L->lane || !L->ctr_y) {
        viz_layout_free(L);
        return -1;
    }
    L->nlanes = t->nlanes;
    L->nctr = t->nctr;
    set_plot(L, width, height);
    place_rows(L, t);
    uint64_t end = t->total_cycles > t->last_cycle ? t->total_cycles : t->last_cycle;
    viz_view_fit(&L->view, 0, (double)end);
    return 0;
}

void viz_layout_resize(viz_layout_t *L, int width, int height)
{
    double c0 = L->view.cyc0, c1 = viz_view_end(&L->view);
    set_plot(L, width, height);
    viz_view_fit(&L->view, c0, c1);
    viz_layout_scroll(L, 0);
}

void viz_layout_free(viz_layout_t *L)
{
    free(L->lane);
    free(L->ctr_y);
    L->lane = NULL;
    L->ctr_y = NULL;
}

int viz_layout_row_y(const viz_layout_t *L, uint32_t lane, uint32_t row)
{
    return L->lanes_top - L->scroll + L->lane[lane].y + (int)row * VIZ_ROW_H;
}

int viz_layout_lane_at(const viz_layout_t *L, const viz_trace_t *t, int y, uint32_t *row)
{
    if (y < L->lanes_top || y >= L->lanes_bottom)
        return -1;
    int cy = y - L->lanes_top + L->scroll;
    for (uint32_t i = 0; i < t->nlanes && i < L->nlanes; i++) {
        const viz_lane_geom_t *g = &L->lane[i];
        if (cy >= g->y && cy < g->y + g->h) {
            *row = (uint32_t)((cy - g->y) / VIZ_ROW_H);
            return (int)i;
        }
    }
    return -1;
}

void viz_layout_scroll(viz_layout_t *L, int dy)
{
    int visible = L->lanes_bottom - L->lanes_top;
    int max = L->content_h - visible;
    L->scroll += dy;
    if (L->scroll > max)
        L->scroll = max;
    if (L->scroll < 0)
        L->scroll = 0;
}
