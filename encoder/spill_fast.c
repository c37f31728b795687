/* spill_fast.c - SBUF spilling from one placement resumed after each
 * victim (docs/compiler.md "SBUF spilling").
 *
 * The reference (spill.c) places the whole kernel once per victim; where
 * it fails, with every rotation group down to one buffer, the placement is
 * plain first fit in first-use order.  Here that placement runs once and
 * is resumed: a victim v chosen at pressure op f now ends at e (its last
 * access before f, or its store), and first fit in first-use order decides
 * a tile's address only from the tiles placed before it and which of them
 * are still live at its first use -- unchanged for every tile first used
 * by e.  So the tiles first used after e are taken back (an undo log of
 * the placement's steps: placed, freed) and placed again, v now freed
 * after e, and the reload tile joins the placement at its reload.  The
 * placement's failure is then where the reference's next round fails, and
 * the victim is chosen by the same rule from the same facts:
 *
 *   - no op is inserted until the end: a store / reload is an op id past
 *     the kernel's, in the gap before one of its ops, ordered by a label
 *     (gaps are relabelled when two labels meet); ops compare by (gap,
 *     label), the kernel's own ops after their gap's;
 *   - a tile's accesses are a slice of its root tensor's op list (the
 *     kernel as given) plus the inserted ops that access it; a spill cuts
 *     the slice at f, the reload tile takes the tail;
 *   - Belady's rule needs the live tile with the furthest next use: a heap
 *     of the live tiles by next use, kept as the pressure point moves on
 *     (each access passed moves its tile's key: linear in the ops).
 *
 * At the end the kernel is rebuilt once (every inserted op in its gap, the
 * renamed operands, deps and loop boundaries renumbered) and placed as the
 * compile does; should that not fit (the reference stops as soon as any
 * rotation count fits; this placement is the one-buffer one the reference
 * fails at), the reference's rounds continue from there.  Not used with
 * fixed SBUF tiles or dynamic loops (spill_fast returns 1). */
#include "spill_fast.h"

#include "alloc_live.h"
#include "backend.h"
#include "strutil.h"

#include <stdlib.h>
#include <string.h>

#define GRAN 64u   /* SBUF placement granule (alloc.c's SBUF_ALIGN) */

/* ---- the placement ---- */

static bool rq_first_before(const sf_t *e, int a, int b)
{
    uint64_t ka = pk(e, e->rq[a].first), kb = pk(e, e->rq[b].first);
    return ka != kb ? ka < kb : e->rq[a].tensor < e->rq[b].tensor;
}

static bool rq_last_before(const sf_t *e, int a, int b)
{
    return pk(e, e->rq[a].last) < pk(e, e->rq[b].last);
}

static int rq_new(sf_t *e, int tensor, int first, int last, uint64_t bytes)
{
    if (sf_grow((void **)&e->rq, &e->cap_rq, e->nrq + 1, sizeof *e->rq))
        return -1;
    e->rq[e->nrq] = (rq_t){tensor, first, last, bytes, (int)((bytes + GRAN - 1) / GRAN), -1, -1};
    if (tensor >= 0)
        e->tu[tensor].rq = e->nrq;
    return e->nrq++;
}

static int log_add(sf_t *e, int v)
{
    if (sf_grow((void **)&e->log, &e->cap_log, e->nlog + 1, sizeof *e->log))
        return -1;
    e->log[e->nlog++] = v;
    return 0;
}

/* The next request to place, -1: all placed. */
static int next_rq(const sf_t *e)
{
    int a = e->oi < e->norder ? e->order[e->oi] : -1, b = sf_h_top(&e->pend);
    if (a < 0 || b < 0)
        return a < 0 ? b : a;
    return rq_first_before(e, b, a) ? b : a;
}

static int fit_mark(sf_t *e, const rq_t *r, bool used)
{
    return fit_runs_set(&e->fit, r->addr, r->addr + r->need, used);
}

/* First fit on from where it stands: 0 when every request is placed, 1
 * with *fail the request that found no room, -1 out of memory. */
static int sweep(sf_t *e, int *fail)
{
    for (;;) {
        int q = next_rq(e);
        if (q < 0)
            return 0;
        rq_t *r = &e->rq[q];
        uint64_t kf = pk(e, r->first);
        for (int d; (d = sf_h_top(&e->rel)) >= 0 && pk(e, e->rq[d].last) < kf;) {
            sf_h_remove(e, &e->rel, d);
            if (fit_mark(e, &e->rq[d], false) || log_add(e, d << 1))
                return -1;
        }
        int g = fit_runs_first(&e->fit, r->need);
        if ((uint64_t)g * GRAN + r->bytes > e->cap) {
            *fail = q;
            return 1;
        }
        r->addr = g;
        if (r->order >= 0)
            e->oi++;
        else
            sf_h_remove(e, &e->pend, q);
        if (fit_mark(e, r, true) || sf_h_push(e, &e->rel, q) || log_add(e, q << 1 | 1))
            return -1;
    }
}

/* Take back the steps for the requests first used after op end (and the
 * frees done before them). */
static int rollback(sf_t *e, int end)
{
    uint64_t ke = pk(e, end);
    int to = e->nlog;
    while (to > 0 && !((e->log[to - 1] & 1) && pk(e, e->rq[e->log[to - 1] >> 1].first) <= ke))
        to--;
    while (e->nlog > to) {
        int s = e->log[--e->nlog], q = s >> 1;
        rq_t *r = &e->rq[q];
        if (s & 1) {
            sf_h_remove(e, &e->rel, q);
            if (fit_mark(e, r, false))
                return -1;
            if (r->order >= 0)
                e->oi = r->order;
            else if (sf_h_push(e, &e->pend, q))
                return -1;
        } else if (fit_mark(e, r, true) || sf_h_push(e, &e->rel, q)) {
            return -1;
        }
    }
    return 0;
}

/* The kernel's requests by (first op, tensor): alloc.c's cmp_first_use. */
typedef struct {
    uint64_t key;
    int rq;
} okey_t;

static int cmp_okey(const void *x, const void *y)
{
    const okey_t *a = x, *b = y;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* ---- Belady ---- */

static bool ev_before(const sf_t *e, int a, int b)
{
    return pk(e, e->tu[a].key) < pk(e, e->tu[b].key);
}

/* furthest next use, then the larger tile, then the lower index */
static bool bel_before(const sf_t *e, int a, int b)
{
    uint64_t ka = pk(e, e->tu[a].key), kb = pk(e, e->tu[b].key);
    if (ka != kb)
        return ka > kb;
    if (e->tu[a].bytes != e->tu[b].bytes)
        return e->tu[a].bytes > e->tu[b].bytes;
    return a < b;
}

/* t's state at walk point x (bstate 1..3, key), into the heaps. */
static int bel_state(sf_t *e, int t, int x)
{
    tu_t *u = &e->tu[t];
    int a = sf_first_access(e, t);
    if (a < 0) {
        u->bstate = 3;
        return 0;
    }
    if (x < 0 || pk(e, a) >= pk(e, x)) {
        u->bstate = 1;
        u->key = a;
        return sf_h_push(e, &e->ev, t);
    }
    int n = sf_accessed_at(e, t, x) ? x : sf_next_after(e, t, x);
    u->bstate = n < 0 ? 3 : 2;
    u->key = n;
    return n < 0 ? 0 : sf_h_push(e, &e->ev, t) || sf_h_push(e, &e->bel, t) ? -1 : 0;
}

/* Pass every access before op f: each live tile's key is then its first
 * access at or after f.  Backwards: the state rebuilt at f. */
static int walk_to(sf_t *e, int f)
{
    if (e->x >= 0 && pk(e, f) < pk(e, e->x)) {
        for (int i = 0; i < e->ev.n; i++)
            e->ev.pos[e->ev.a[i]] = -1;
        for (int i = 0; i < e->bel.n; i++)
            e->bel.pos[e->bel.a[i]] = -1;
        e->ev.n = e->bel.n = 0;
        for (int t = 0; t < e->k->ntensors; t++)
            if (e->tu[t].bstate && bel_state(e, t, f))
                return -1;
        e->x = f;
        return 0;
    }
    uint64_t kf = pk(e, f);
    for (int t; (t = sf_h_top(&e->ev)) >= 0 && pk(e, e->tu[t].key) < kf;) {
        tu_t *u = &e->tu[t];
        int n = sf_next_after(e, t, u->key);
        bool was_live = u->bstate == 2;
        u->key = n;
        if (n < 0) {
            u->bstate = 3;
            sf_h_remove(e, &e->ev, t);
            if (was_live)
                sf_h_remove(e, &e->bel, t);
            continue;
        }
        u->bstate = 2;
        sf_h_fix(e, &e->ev, t);
        if (was_live)
            sf_h_fix(e, &e->bel, t);
        else if (sf_h_push(e, &e->bel, t))
            return -1;
    }
    e->x = f;
    return 0;
}

/* ---- the victim rule (spill.c's choose, on these structures) ---- */

static int slot_of(const sf_t *e, int t)
{
    return t < e->sl.cap_slot_of ? e->sl.slot_of[t] : -1;
}

/* whether op id is t's reload */
static bool is_reload_of(const sf_t *e, int id, int t)
{
    return id >= e->N && !e->ins[id - e->N].save && e->ins[id - e->N].tile == t;
}

/* v a reload whose slot still holds its data (w: its last write before f) */
static bool clean(const sf_t *e, int v, int w)
{
    int s = slot_of(e, v);
    return s >= 0 && e->sl.slots[s].holder == v && w >= 0 && is_reload_of(e, w, v);
}

static int written_whole_scan(const sf_t *e, int v, int f);

/* v last written by its reload, only reloads between that and its next use */
static bool reloaded_for_next(const sf_t *e, int v, int f)
{
    int r = sf_last_before(e, v, f, true), n = e->tu[v].key;
    if (r < 0 || !is_reload_of(e, r, v))
        return false;
    for (int j = sf_op_after(e, r); j >= 0 && j != n; j = sf_op_after(e, j))
        if (j < e->N ? !(e->k->ops[j].flags & TIR_F_SPILL_RELOAD) : e->ins[j - e->N].save)
            return false;
    return true;
}

/* Whether the accesses of v before f write all of it (-1: out of memory).
 * Once true at some op, true at every later one (the writes before it only
 * grow): remembered, since a tile live across many pressure points is asked
 * again at each (a partly written 4 M-element accumulator: its bitmap was
 * 15 % of the matmul tutorial's compile). */
static int written_whole(sf_t *e, int v, int f)
{
    if (e->tu[v].whole_at && pk(e, e->tu[v].whole_at - 1) <= pk(e, f))
        return 1;
    int r = written_whole_scan(e, v, f);
    if (r > 0)
        e->tu[v].whole_at = f + 1;
    return r;
}

static int written_whole_scan(const sf_t *e, int v, int f)
{
    const tir_kernel_t *k = e->k;
    const tu_t *u = &e->tu[v];
    uint64_t n = enc_tensor_elems(&k->tensors[v]);
    int hi = sf_lower(e, u->lo, u->hi, sf_lim_before(e, f)), r = u->root;
    for (int x = u->xhead; x >= 0 && pk(e, x) < pk(e, f); x = e->ins[x - e->N].xnext)
        if (!e->ins[x - e->N].save)
            return 1;   /* a reload writes it whole */
    for (int i = u->lo; i < hi; i++)
        if (e->ent_w[i] && spill_op_writes_whole(&k->ops[e->ent_op[i]], r, n))
            return 1;
    uint8_t *bits = calloc((size_t)(n / 8 + 1), 1);
    if (!bits)
        return -1;
    for (int i = u->lo; i < hi; i++)
        if (e->ent_w[i])
            spill_op_mark(&k->ops[e->ent_op[i]], r, bits, n);
    int all = spill_all_set(bits, n);
    free(bits);
    return all;
}

/* The victim at f, or -1 with why[] (-2: out of memory). */
static int choose(sf_t *e, int f, char *why, size_t len)
{
    if (walk_to(e, f))
        return -2;
    int refused[64], nref = 0, partial = -1, pinned = -1, pin_use = -1, v = -1;
    uint64_t kf = pk(e, f);
    for (;;) {
        int b = sf_h_top(&e->bel);
        if (b < 0 || pk(e, e->tu[b].key) <= kf)
            break;   /* the furthest next use is f's: every live tile is accessed by it */
        int whole = 0;
        bool pin = reloaded_for_next(e, b, f);
        if (!pin) {
            int w = sf_last_before(e, b, f, true);
            whole = w < 0 ? 0 : clean(e, b, w) ? 1 : written_whole(e, b, f);
            if (whole < 0)
                return -2;
            if (whole) {
                v = b;
                break;
            }
        }
        if (pin)
            pinned = b, pin_use = e->tu[b].key;
        else
            partial = b;
        if (nref == (int)(sizeof refused / sizeof refused[0]))
            return -3;   /* many refused: the reference's rounds decide */
        refused[nref++] = b;
        sf_h_remove(e, &e->bel, b);
    }
    for (int i = 0; i < nref; i++)
        if (sf_h_push(e, &e->bel, refused[i]))
            return -2;
    if (v >= 0)
        return v;
    bool at_f = false;
    for (int i = 0; i < e->bel.n && !at_f; i++)
        at_f = pk(e, e->tu[e->bel.a[i]].key) == kf;
    tir_opkind_t fk, pkd = TIR_STORE;
    const char *fp = sf_op_path(e, f, &fk), *pp = pinned >= 0 ? sf_op_path(e, pin_use, &pkd) : fp;
    spill_why_none(why, len, fp, fk, partial >= 0 ? e->k->tensors[partial].name : NULL,
                   pinned >= 0 ? e->k->tensors[pinned].name : NULL, pp, pkd, at_f);
    return -1;
}

/* ---- the split ---- */

static uint64_t slot_key(const sf_t *e, int slot)
{
    int r = e->sl.slots[slot].last_reload;
    return r < 0 ? UINT64_MAX : pk(e, r);
}

static void cls_pull(sclass_t *c, int i)
{
    for (i /= 2; i >= 1; i /= 2)
        c->min[i] = c->min[2 * i] < c->min[2 * i + 1] ? c->min[2 * i] : c->min[2 * i + 1];
}

/* c's tree from its slots' keys (size: at least n) */
static int cls_build(const sf_t *e, sclass_t *c, int size)
{
    if (size != c->size) {
        uint64_t *m = realloc(c->min, 2 * (size_t)size * sizeof *m);
        int *sl = realloc(c->slot, (size_t)size * sizeof *sl);
        if (m)
            c->min = m;
        if (sl)
            c->slot = sl;
        if (!m || !sl)
            return -1;
        c->size = size;
    }
    for (int i = 0; i < c->size; i++)
        c->min[c->size + i] = i < c->n ? slot_key(e, c->slot[i]) : UINT64_MAX;
    for (int i = c->size - 1; i >= 1; i--)
        c->min[i] = c->min[2 * i] < c->min[2 * i + 1] ? c->min[2 * i] : c->min[2 * i + 1];
    return 0;
}

/* slot's last reload := op id r */
static void slot_last_reload(sf_t *e, int slot, int r)
{
    e->sl.slots[slot].last_reload = r;
    sclass_t *c = &e->cls[e->slot_cls[slot]];
    int i = c->size + e->slot_pos[slot];
    c->min[i] = slot_key(e, slot);
    cls_pull(c, i);
}

/* A slot for v free for a store right after op w (the first made of its
 * dtype and shape whose last reload is not after w), or a new one. */
static int get_slot(sf_t *e, int v, int w)
{
    tir_kernel_t *k = e->k;
    const tir_tensor_t *vt = &k->tensors[v];
    int64_t p, fr;
    spill_shape(vt, &p, &fr);
    for (int i = 0; e->cls_stale && i < e->ncls; i++)
        if (cls_build(e, &e->cls[i], e->cls[i].size))
            return -1;
    e->cls_stale = false;
    int ci = 0;
    while (ci < e->ncls && !(e->cls[ci].dtype == vt->dtype && e->cls[ci].p == p &&
                             e->cls[ci].fr == fr))
        ci++;
    uint64_t kw = pk(e, w);
    if (ci < e->ncls && e->cls[ci].min[1] <= kw) {
        const sclass_t *c = &e->cls[ci];
        int i = 1;
        while (i < c->size)
            i = c->min[2 * i] <= kw ? 2 * i : 2 * i + 1;
        return c->slot[i - c->size];
    }
    if (ci == e->ncls) {
        if (sf_grow((void **)&e->cls, &e->cap_cls, e->ncls + 1, sizeof *e->cls))
            return -1;
        e->cls[e->ncls++] = (sclass_t){vt->dtype, p, fr, NULL, 0, 0, NULL};
        if (cls_build(e, &e->cls[ci], 1))
            return -1;
    }
    if (spill_slots_reserve(&e->sl) ||
        sf_grow((void **)&e->slot_cls, &e->cap_sp, e->sl.nslots + 1, sizeof *e->slot_cls))
        return -1;
    int cap = e->cap_sp;   /* (grown with slot_cls) */
    int *sp = realloc(e->slot_pos, (size_t)cap * sizeof *sp);
    if (!sp)
        return -1;
    e->slot_pos = sp;
    int id = spill_slot_tensor(k, vt, e->sl.nslots, &e->sl.names_checked, &e->sl.names_used);
    if (id < 0)
        return -1;
    sclass_t *c = &e->cls[ci];
    if (c->n == c->size && cls_build(e, c, 2 * c->size))
        return -1;
    int sl = e->sl.nslots++;
    e->sl.slots[sl] = (spill_slot_t){id, -1, -1};
    e->slot_cls[sl] = ci;
    e->slot_pos[sl] = c->n;
    c->slot[c->n++] = sl;   /* its key: none until its reload (slot_last_reload) */
    e->st->slots++;
    return sl;
}

/* Room for the tensors k has now. */
static int tu_reserve(sf_t *e)
{
    int old = e->cap_tu;
    if (sf_grow((void **)&e->tu, &e->cap_tu, e->k->ntensors, sizeof *e->tu))
        return -1;
    memset(e->tu + old, 0, (size_t)(e->cap_tu - old) * sizeof *e->tu);
    return spill_slot_of_reserve(&e->sl, e->k->ntensors);
}

/* Put inserted access x into t's list, by position. */
static void x_insert(sf_t *e, int t, int x)
{
    int *at = &e->tu[t].xhead;
    while (*at >= 0 && pk(e, *at) < pk(e, x))
        at = &e->ins[*at - e->N].xnext;
    e->ins[x - e->N].xnext = *at;
    *at = x;
    e->ins[x - e->N].tile = t;
}

/* Split v's live range at f as spill.c's spill_one does, the placement
 * taken back to where the split changes it. */
static int split(sf_t *e, int v, int f)
{
    tir_kernel_t *k = e->k;
    int w = sf_last_before(e, v, f, true), n = sf_next_after(e, v, f), prev = sf_last_before(e, v, f, false);
    bool save = !clean(e, v, w), was_reload = slot_of(e, v) >= 0;
    int sl = save ? get_slot(e, v, w) : slot_of(e, v);
    int v2 = sl >= 0 ? spill_reload_tensor(k, v, was_reload, e->st->reloads) : -1;
    if (v2 < 0 || tu_reserve(e))
        return -1;
    uint64_t bytes = enc_tensor_bytes(&k->tensors[v]);
    int sid = save ? sf_ins_after(e, w) : -2, rid = sid == -1 ? -1 : sf_ins_before(e, n);
    if (rid < 0)
        return -1;
    tu_t *u = &e->tu[v], *u2 = &e->tu[v2];
    /* the accesses after f are the reload tile's: the op list's tail and
     * the inserted ones after f, behind its reload */
    int cut = sf_lower(e, u->lo, u->hi, sf_lim_after(e, f));
    *u2 = (tu_t){.root = u->root, .lo = cut, .hi = u->hi, .xhead = rid, .rq = -1,
                 .bytes = u->bytes, .bstate = 1, .key = rid};
    u->hi = cut;
    int *tail = &u->xhead;
    while (*tail >= 0 && pk(e, *tail) < pk(e, f))
        tail = &e->ins[*tail - e->N].xnext;
    ins_t *ri = &e->ins[rid - e->N];
    *ri = (ins_t){ri->gap, ri->label, ri->prev, ri->next, v2, *tail, e->sl.slots[sl].tensor,
                  e->st->reloads, false, k->tensors[v2].path};
    *tail = -1;
    for (int x = ri->xnext; x >= 0; x = e->ins[x - e->N].xnext)
        e->ins[x - e->N].tile = v2;
    int end = prev;
    if (save) {
        ins_t *si = &e->ins[sid - e->N];
        *si = (ins_t){si->gap, si->label, si->prev, si->next, v, -1, e->sl.slots[sl].tensor,
                      e->st->saves, true, k->tensors[v].path};
        x_insert(e, v, sid);
        end = sf_later(e, prev, sid);
    }
    /* the placement: back to the first tile first used after v's new end */
    rq_t *rv = &e->rq[u->rq];
    int old_last = rv->last;
    if (rollback(e, end))
        return -1;
    rv = &e->rq[u->rq];
    rv->last = end;
    sf_h_fix(e, &e->rel, u->rq);
    int q = rq_new(e, v2, rid, old_last, rv->bytes);
    if (q < 0 || sf_h_push(e, &e->pend, q))
        return -1;
    /* Belady: v is done at f, its reload tile pending */
    if (sf_h_has(&e->ev, v))
        sf_h_remove(e, &e->ev, v);
    if (sf_h_has(&e->bel, v))
        sf_h_remove(e, &e->bel, v);
    u->bstate = 3;
    if (sf_h_push(e, &e->ev, v2))
        return -1;
    e->sl.slots[sl].holder = v2;
    slot_last_reload(e, sl, rid);
    e->sl.slot_of[v2] = sl;
    e->st->victims++;
    e->st->reloads++;
    e->st->reload_bytes += bytes;
    if (save) {
        e->st->saves++;
        e->st->save_bytes += bytes;
    }
    return 0;
}

/* ---- set up, rebuild, hand over ---- */

/* The requests and heaps for k as given (its liveness as the allocator's
 * own pass finds it); 1 when k has fixed SBUF tiles. */
static int init(sf_t *e, const tpb_target_t *t)
{
    tir_kernel_t *k = e->k;
    e->N = k->nops;
    e->x = -1;
    e->cap = t->sbuf_partition_bytes;
    e->pend.before = rq_first_before;
    e->rel.before = rq_last_before;
    e->ev.before = ev_before;
    e->bel.before = bel_before;
    fit_runs_init(&e->fit, (int)((e->cap + GRAN - 1) / GRAN));
    for (int i = 0; i < k->ntensors; i++)
        if (k->tensors[i].kind == TIR_T_SBUF && k->tensors[i].fixed1)
            return 1;
    e->gap_head = malloc((size_t)(e->N + 1) * sizeof *e->gap_head);
    e->gap_tail = malloc((size_t)(e->N + 1) * sizeof *e->gap_tail);
    if (!e->gap_head || !e->gap_tail || tu_reserve(e) || sf_build_uses(e))
        return -1;
    for (int i = 0; i <= e->N; i++)
        e->gap_head[i] = e->gap_tail[i] = -1;
    bir_module_t m;
    tpb_err_t err;
    if (bir_module_init(&m, 0, k->ntensors, &err))
        return -1;
    for (int i = 0; i < k->ntensors; i++) {
        const tir_tensor_t *tt = &k->tensors[i];
        bir_mloc_t *ml = &m.mlocs[i];
        ml->space = tt->kind == TIR_T_SBUF ? ISA_SPACE_SBUF
                    : tt->kind == TIR_T_PSUM ? ISA_SPACE_PSUM : ISA_SPACE_HBM;
        if (m.ident_tile < 0 && ml->space == ISA_SPACE_SBUF && enc_is_ident_tile(tt))
            m.ident_tile = i;
    }
    int rc = alloc_liveness(k, t, &m, NULL);
    okey_t *ok = malloc((size_t)(k->ntensors + k->nops + 1) * sizeof *ok);
    int n = 0;
    for (int i = 0; rc == 0 && ok && i < k->ntensors; i++) {
        const tir_tensor_t *tt = &k->tensors[i];
        const bir_mloc_t *ml = &m.mlocs[i];
        e->tu[i].bytes = enc_tensor_bytes(tt);
        if (tt->kind != TIR_T_SBUF)
            continue;
        e->tu[i].bstate = enc_is_ident_tile(tt) ? 0 : 1;
        if (e->tu[i].bstate && bel_state(e, i, -1))
            rc = -1;
        if (ml->first_use < 0)
            continue;
        int q = rq_new(e, i, ml->first_use, ml->last_use, e->tu[i].bytes / (uint64_t)tt->shape[0]);
        rc = rc ? rc : q < 0 ? -1 : 0;
        if (q >= 0)
            ok[n++] = (okey_t){(uint64_t)ml->first_use << 32 | (uint32_t)(i + 1), q};
    }
    for (int i = 0; rc == 0 && ok && m.op_scratch && i < k->nops; i++)
        if (m.op_scratch[i].bytes) {
            int q = rq_new(e, -1, i, i, m.op_scratch[i].bytes);
            rc = q < 0 ? -1 : 0;
            ok[n++] = (okey_t){(uint64_t)i << 32, q};
        }
    bir_module_free(&m);
    if (rc || !ok || !(e->order = malloc((size_t)(n + 1) * sizeof *e->order))) {
        free(ok);
        return -1;
    }
    qsort(ok, (size_t)n, sizeof *ok, cmp_okey);
    for (int i = 0; i < n; i++) {
        e->order[i] = ok[i].rq;
        e->rq[ok[i].rq].order = i;
    }
    e->norder = n;
    free(ok);
    return 0;
}

/* The inserted op id as a tile-IR op. */
static int make_ins(sf_t *e, int id, tir_op_t *op)
{
    const ins_t *i = &e->ins[id - e->N];
    int64_t p, fr;
    spill_shape(&e->k->tensors[i->tile], &p, &fr);
    tir_ap_t hb = spill_whole(i->slot, p, fr), a = spill_whole(i->tile, p, fr);
    return i->save ? spill_make_op(e->k, op, &hb, &a, i->path, TIR_F_SPILL_SAVE, i->num)
                   : spill_make_op(e->k, op, &a, &hb, i->path, TIR_F_SPILL_RELOAD, i->num);
}

/* k's ops rebuilt with the inserted ones and the renamed operands, deps
 * and loop boundaries renumbered; the slots' last reloads as op indices. */
static int rebuild(sf_t *e)
{
    tir_kernel_t *k = e->k;
    int n = e->N + e->nins;
    tir_op_t *ops = tir_ops_new(n > 0 ? n : 1);
    int *newpos = malloc((size_t)(e->N + 1) * sizeof *newpos);
    int *at = malloc((size_t)(e->nins + 1) * sizeof *at);
    int rc = ops && newpos && at ? 0 : -1;
    for (int g = 0, j = 0; rc == 0 && g <= e->N; g++) {
        for (int id = e->gap_head[g]; id >= 0 && rc == 0; id = e->ins[id - e->N].next) {
            at[id - e->N] = j;
            rc = make_ins(e, id, &ops[j++]);
        }
        newpos[g] = j;
        if (g < e->N)
            ops[j++] = k->ops[g];
    }
    for (int t = 0; rc == 0 && t < k->ntensors; t++) {
        const tu_t *u = &e->tu[t];
        if (k->tensors[t].kind == TIR_T_SBUF && u->root != t)
            for (int i = u->lo; i < u->hi && rc == 0; i++)
                rc = spill_rename_op(k, &ops[newpos[e->ent_op[i]]], u->root, t);
    }
    if (rc == 0) {
        tir_ops_renumber(k, ops, n, e->N, newpos, NULL);
        tir_ops_set(k, ops, n, n > 0 ? n : 1);
        ops = NULL;
        for (int i = 0; i < e->sl.nslots; i++)
            if (e->sl.slots[i].last_reload >= e->N)
                e->sl.slots[i].last_reload = at[e->sl.slots[i].last_reload - e->N];
    }
    if (ops)
        tir_array_free(ops, n > 0 ? n : 1, sizeof *ops);
    free(newpos);
    free(at);
    return rc;
}

static void sf_free(sf_t *e)
{
    free(e->ins);
    free(e->gap_head);
    free(e->gap_tail);
    free(e->ent_op);
    free(e->ent_lw);
    free(e->ent_w);
    free(e->tu);
    free(e->rq);
    free(e->order);
    free(e->log);
    sf_h_free(&e->pend);
    sf_h_free(&e->rel);
    sf_h_free(&e->ev);
    sf_h_free(&e->bel);
    fit_runs_free(&e->fit);
    spill_slots_free(&e->sl);
    for (int i = 0; i < e->ncls; i++) {
        free(e->cls[i].slot);
        free(e->cls[i].min);
    }
    free(e->cls);
    free(e->slot_cls);
    free(e->slot_pos);
}

/* k rebuilt and the reference's rounds from there (the slots handed over). */
static int hand_over(sf_t *e, const tpb_target_t *t, int buffers, bool loops, const char *first,
                     tpb_err_t *err)
{
    if (rebuild(e)) {
        sf_free(e);
        return tpb_errf(err, "out of memory spilling SBUF tiles");
    }
    spill_slots_t sl = e->sl;
    memset(&e->sl, 0, sizeof e->sl);
    sf_free(e);
    return spill_rounds(e->k, t, buffers, loops, e->st, &sl, first, err);
}

int spill_fast(tir_kernel_t *k, const tpb_target_t *t, int buffers, bool loops,
               enc_spill_stats_t *st, tpb_err_t *err)
{
    for (int l = 0; l < k->nloops; l++)
        if (k->loops[l].dynamic)
            return 1;
    for (int i = 0; i < k->ntensors; i++)
        if (k->tensors[i].kind == TIR_T_SBUF && k->tensors[i].fixed1)
            return 1;
    int f0;
    if (spill_place(k, t, buffers, loops, &f0, err) == 0)
        return 0;
    if (f0 < 0)
        return -1;   /* not an SBUF placement failure: that error as it is */
    char first[sizeof err->msg], why[400];
    su_copy(first, sizeof first, err->msg);
    sf_t e;
    memset(&e, 0, sizeof e);
    e.k = k;
    e.st = st;
    int rc = init(&e, t);
    if (rc) {
        sf_free(&e);
        return rc > 0 ? 1 : tpb_errf(err, "out of memory spilling SBUF tiles");
    }
    for (;;) {
        int q = -1;
        rc = sweep(&e, &q);
        if (rc < 0)
            break;
        if (rc == 0) {   /* fits with one buffer each: rebuilt, placed as the compile does */
            int f;
            if (rebuild(&e)) {
                rc = -1;
                break;
            }
            rc = spill_place(k, t, buffers, loops, &f, err);
            if (rc == 0 || f < 0) {   /* fits, or another error (PSUM): as the reference */
                sf_free(&e);
                return rc;
            }
            e.N = k->nops;   /* (rebuilt: no inserted ops left) */
            e.nins = 0;
            spill_slots_t sl = e.sl;
            memset(&e.sl, 0, sizeof e.sl);
            sf_free(&e);
            return spill_rounds(k, t, buffers, loops, st, &sl, first, err);
        }
        int f = e.rq[q].first;
        if (!st->victims && f != f0) {   /* not the reference's placement: its rounds */
            sf_free(&e);
            return 1;
        }
        why[0] = 0;
        int v = -1;
        if (st->victims >= SPILL_FAST_MAX_VICTIMS)
            snprintf(why, sizeof why, "it still did not fit (spilling stops at %d rounds)",
                     SPILL_FAST_MAX_VICTIMS);
        else
            v = choose(&e, f, why, sizeof why);
        if (v == -3)
            return hand_over(&e, t, buffers, loops, first, err);
        if (v == -2 || (v >= 0 && split(&e, v, f))) {
            rc = -1;
            break;
        }
        if (v >= 0)
            continue;
        sf_free(&e);
        if (st->victims)
            return tpb_errf(err, "%s; spilling could not help: after %u spill%s, %s", first,
                            st->victims, st->victims == 1 ? "" : "s", why);
        return tpb_errf(err, "%s; spilling could not help: %s", first, why);
    }
    sf_free(&e);
    return tpb_errf(err, "out of memory spilling SBUF tiles");
}
