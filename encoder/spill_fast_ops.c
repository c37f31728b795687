/* spill_fast_ops.c - the resumed spiller's op order (inserted ops as ids
 * in the gaps between the kernel's, ordered by labels), its tiles' access
 * lists and its indexed heaps (spill_fast.h). */
#include "spill_fast.h"

#include <stdlib.h>
#include <string.h>

int sf_grow(void **p, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int nc = *cap ? *cap : 16;
    while (nc < need)
        nc *= 2;
    void *q = realloc(*p, (size_t)nc * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

/* ---- heap ---- */

static void h_set(heap_t *h, int i, int item)
{
    h->a[i] = item;
    h->pos[item] = i;
}

static void h_up(const sf_t *e, heap_t *h, int i)
{
    int it = h->a[i];
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!h->before(e, it, h->a[p]))
            break;
        h_set(h, i, h->a[p]);
        i = p;
    }
    h_set(h, i, it);
}

static void h_down(const sf_t *e, heap_t *h, int i)
{
    int it = h->a[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->before(e, h->a[c + 1], h->a[c]))
            c++;
        if (!h->before(e, h->a[c], it))
            break;
        h_set(h, i, h->a[c]);
        i = c;
    }
    h_set(h, i, it);
}

int sf_h_push(const sf_t *e, heap_t *h, int item)
{
    int old = h->cap_pos;
    if (sf_grow((void **)&h->pos, &h->cap_pos, item + 1, sizeof *h->pos) ||
        sf_grow((void **)&h->a, &h->cap, h->n + 1, sizeof *h->a))
        return -1;
    for (int i = old; i < h->cap_pos; i++)
        h->pos[i] = -1;
    h_set(h, h->n++, item);
    h_up(e, h, h->n - 1);
    return 0;
}

bool sf_h_has(const heap_t *h, int item)
{
    return item < h->cap_pos && h->pos[item] >= 0;
}

void sf_h_remove(const sf_t *e, heap_t *h, int item)
{
    int i = h->pos[item];
    h->pos[item] = -1;
    if (--h->n == i)
        return;
    int moved = h->a[h->n];
    h_set(h, i, moved);
    h_up(e, h, i);
    h_down(e, h, h->pos[moved]);
}

/* after item's key changed */
void sf_h_fix(const sf_t *e, heap_t *h, int item)
{
    h_up(e, h, h->pos[item]);
    h_down(e, h, h->pos[item]);
}

int sf_h_top(const heap_t *h) { return h->n ? h->a[0] : -1; }

void sf_h_free(heap_t *h)
{
    free(h->a);
    free(h->pos);
}

/* ---- op positions ---- */

/* Give the gap's ops evenly spaced labels (two neighbours' labels met). */
static void relabel(sf_t *e, int gap)
{
    int n = 0;
    for (int id = e->gap_head[gap]; id >= 0; id = e->ins[id - e->N].next)
        n++;
    uint64_t step = 0xfffffffeull / (uint64_t)(n + 1), l = step;
    for (int id = e->gap_head[gap]; id >= 0; id = e->ins[id - e->N].next, l += step)
        e->ins[id - e->N].label = (uint32_t)l;
}

/* A new inserted op in gap `gap` between prev and next (ids in the gap, -1:
 * its ends); its id, -1 when out of memory. */
static int ins_new(sf_t *e, int gap, int prev, int next)
{
    if (sf_grow((void **)&e->ins, &e->cap_ins, e->nins + 1, sizeof *e->ins))
        return -1;
    int id = e->N + e->nins++;
    ins_t *i = &e->ins[id - e->N];
    memset(i, 0, sizeof *i);
    i->gap = gap;
    i->prev = prev;
    i->next = next;
    i->xnext = -1;
    if (prev >= 0)
        e->ins[prev - e->N].next = id;
    else
        e->gap_head[gap] = id;
    if (next >= 0)
        e->ins[next - e->N].prev = id;
    else
        e->gap_tail[gap] = id;
    for (int pass = 0; pass < 2; pass++) {
        uint64_t lo = prev >= 0 ? e->ins[prev - e->N].label : 0;
        uint64_t hi = next >= 0 ? e->ins[next - e->N].label : 0xffffffffu;
        if (hi - lo >= 2) {
            i->label = (uint32_t)(lo + (hi - lo) / 2);
            return id;
        }
        relabel(e, gap);
        e->cls_stale = true;
    }
    return id;   /* relabelled: spaced apart */
}

/* A new op right after op w / right before op n. */
int sf_ins_after(sf_t *e, int w)
{
    if (w >= e->N)
        return ins_new(e, e->ins[w - e->N].gap, w, e->ins[w - e->N].next);
    return ins_new(e, w + 1, -1, e->gap_head[w + 1]);
}

int sf_ins_before(sf_t *e, int n)
{
    if (n >= e->N)
        return ins_new(e, e->ins[n - e->N].gap, e->ins[n - e->N].prev, n);
    return ins_new(e, n, e->gap_tail[n], -1);
}

/* The op after id in program order (-1: none). */
int sf_op_after(const sf_t *e, int id)
{
    if (id >= e->N) {
        const ins_t *i = &e->ins[id - e->N];
        return i->next >= 0 ? i->next : i->gap < e->N ? i->gap : -1;
    }
    if (e->gap_head[id + 1] >= 0)
        return e->gap_head[id + 1];
    return id + 1 < e->N ? id + 1 : -1;
}

const char *sf_op_path(const sf_t *e, int id, tir_opkind_t *kind)
{
    if (id < e->N) {
        *kind = e->k->ops[id].kind;
        return e->k->ops[id].path;
    }
    *kind = e->ins[id - e->N].save ? TIR_STORE : TIR_LOAD;
    return e->ins[id - e->N].path;
}

/* ---- a tile's accesses ---- */

/* First entry of [lo, hi) whose op is >= val. */
int sf_lower(const sf_t *e, int lo, int hi, int val)
{
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (e->ent_op[mid] < val)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The kernel's ops before op f are those below lim_before, after it those
 * from lim_after on. */
int sf_lim_before(const sf_t *e, int f) { return f < e->N ? f : e->ins[f - e->N].gap; }
int sf_lim_after(const sf_t *e, int f) { return f < e->N ? f + 1 : e->ins[f - e->N].gap; }

int sf_earlier(const sf_t *e, int a, int b)
{
    return a < 0 ? b : b < 0 ? a : pk(e, a) <= pk(e, b) ? a : b;
}

int sf_later(const sf_t *e, int a, int b)
{
    return a < 0 ? b : b < 0 ? a : pk(e, a) >= pk(e, b) ? a : b;
}

/* t's first access after op f (-1: none). */
int sf_next_after(const sf_t *e, int t, int f)
{
    const tu_t *u = &e->tu[t];
    int i = sf_lower(e, u->lo, u->hi, sf_lim_after(e, f));
    int b = i < u->hi ? e->ent_op[i] : -1;
    uint64_t kf = pk(e, f);
    for (int x = u->xhead; x >= 0; x = e->ins[x - e->N].xnext)
        if (pk(e, x) > kf)
            return sf_earlier(e, b, x);
    return b;
}

/* t's last access (writes only: last write) before op f (-1: none). */
int sf_last_before(const sf_t *e, int t, int f, bool writes)
{
    const tu_t *u = &e->tu[t];
    int i = sf_lower(e, u->lo, u->hi, sf_lim_before(e, f)) - 1;
    if (writes && i >= u->lo)
        i = e->ent_lw[i];
    int b = i >= u->lo ? e->ent_op[i] : -1, x = -1;
    uint64_t kf = pk(e, f);
    for (int y = u->xhead; y >= 0 && pk(e, y) < kf; y = e->ins[y - e->N].xnext)
        if (!writes || !e->ins[y - e->N].save)
            x = y;
    return sf_later(e, b, x);
}

bool sf_accessed_at(const sf_t *e, int t, int f)
{
    if (f >= e->N)
        return e->ins[f - e->N].tile == t;
    const tu_t *u = &e->tu[t];
    int i = sf_lower(e, u->lo, u->hi, f);
    return i < u->hi && e->ent_op[i] == f;
}

int sf_first_access(const sf_t *e, int t)
{
    const tu_t *u = &e->tu[t];
    return sf_earlier(e, u->lo < u->hi ? e->ent_op[u->lo] : -1, u->xhead);
}

/* The per-root op lists of the SBUF tiles: an entry per (op, tile), in op
 * order (the reference's scan_uses reads the same operands). */
int sf_build_uses(sf_t *e)
{
    tir_kernel_t *k = e->k;
    int nt = k->ntensors;
    int *cnt = calloc((size_t)nt + 1, sizeof *cnt), *last = malloc((size_t)(nt + 1) * sizeof *last);
    if (!cnt || !last) {
        free(cnt);
        free(last);
        return -1;
    }
    for (int t = 0; t < nt; t++)
        last[t] = -1;
    for (int i = 0; i < e->N; i++)
        SPILL_FOR_OPERANDS(&k->ops[i], t, w, {
            (void)w;
            if (k->tensors[t].kind == TIR_T_SBUF && last[t] != i) {
                cnt[t]++;
                last[t] = i;
            }
        });
    int tot = 0;
    for (int t = 0; t < nt; t++) {
        e->tu[t].root = t;
        e->tu[t].lo = e->tu[t].hi = tot;
        e->tu[t].xhead = e->tu[t].rq = -1;
        tot += cnt[t];
    }
    e->ent_op = malloc((size_t)(tot + 1) * sizeof *e->ent_op);
    e->ent_lw = malloc((size_t)(tot + 1) * sizeof *e->ent_lw);
    e->ent_w = malloc((size_t)tot + 1);
    int rc = e->ent_op && e->ent_lw && e->ent_w ? 0 : -1;
    for (int i = 0; rc == 0 && i < e->N; i++)
        SPILL_FOR_OPERANDS(&k->ops[i], t, w, {
            if (k->tensors[t].kind != TIR_T_SBUF)
                continue;
            tu_t *u = &e->tu[t];
            if (u->hi == u->lo || e->ent_op[u->hi - 1] != i) {
                e->ent_op[u->hi] = i;
                e->ent_w[u->hi++] = 0;
            }
            e->ent_w[u->hi - 1] |= w;
        });
    for (int t = 0; rc == 0 && t < nt; t++)
        for (int i = e->tu[t].lo, lw = -1; i < e->tu[t].hi; i++)
            e->ent_lw[i] = lw = e->ent_w[i] ? i : lw;
    free(cnt);
    free(last);
    return rc;
}

