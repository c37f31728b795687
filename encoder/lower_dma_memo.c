/* lower_dma_memo.c - the direct-DMA memo: a DMA whose sides have the
 * tensor kinds, dtypes, shapes and access steps and counts of one lowered
 * before takes that one's geometry and joint dims, placed at its own
 * offsets and addresses (docs/compiler.md, the DMA memo). */
#include "lower_dma_int.h"

#include "bytehash.h"

#include <string.h>

/* The memo key of one side (see lw_dma_memo_t): t is a's tensor. */
static bool side_key_eq(const lw_dma_key_t *k, const tir_tensor_t *t, const tir_ap_t *a)
{
    if (k->kind != t->kind || k->dtype != t->dtype || k->tndim != t->ndim || k->ndim != a->ndim)
        return false;
    for (int i = 0; i < t->ndim; i++)
        if (k->shape[i] != t->shape[i])
            return false;
    for (int i = 0; i < a->ndim; i++)
        if (k->step[i] != a->step[i] || k->count[i] != a->count[i])
            return false;
    return true;
}

static void side_key_set(lw_dma_key_t *k, const tir_tensor_t *t, const tir_ap_t *a)
{
    memset(k, 0, sizeof *k);
    k->kind = t->kind;
    k->dtype = t->dtype;
    k->tndim = t->ndim;
    k->ndim = a->ndim;
    memcpy(k->shape, t->shape, sizeof k->shape);
    memcpy(k->step, a->step, (size_t)a->ndim * sizeof *a->step);
    memcpy(k->count, a->count, (size_t)a->ndim * sizeof *a->count);
}

/* The memo side of s, placed at element offset off of a tensor at addr. */
static void side_to_memo(lw_dma_side_t *m, const dside_t *s, int64_t off, uint64_t addr)
{
    bool hbm = s->space == ISA_SPACE_HBM;
    *m = (lw_dma_side_t){.space = s->space, .dtype = s->dtype, .dsz = s->dsz, .elems = s->elems,
                         .lo = s->lo, .hi = s->hi, .total = s->total, .row = s->row,
                         .hull = s->hull};
    /* the access at offset 0 of a tensor at address 0 */
    m->lo_b = (uint64_t)s->lo * s->dsz;
    m->hi_b = (uint64_t)(s->hi + 1) * s->dsz;
    m->p1 = hbm ? 1 : (unsigned)s->hull;
    m->write = s->acc.write;
    m->placed[0] = (struct lw_dma_placed){off, addr, s->base, s->acc};
    for (int i = 1; i < LW_DMA_PLACED; i++)
        m->placed[i].off = -1;
    m->next = 1;
}

/* What a side placed from the memo copies of it whatever the placement
 * (the geometry fields are read only after build_side). */
static inline void side_head(dside_t *s, const lw_dma_side_t *m)
{
    s->nd = 0;
    s->space = m->space;
    s->dtype = m->dtype;
    s->dsz = m->dsz;
    s->elems = m->elems;
}

/* A side as build_side makes it for an access at element offset off of a
 * tensor at addr (its dims aside: only joint_dims reads them), from the
 * geometry build_side derived for the same pattern; false where
 * build_side would refuse the access (the full path then reports it).
 * The access is the memo's moved by the bytes the side starts at. */
static bool side_place(const lower_ctx_t *c, const lw_dma_side_t *m, int64_t off,
                       uint64_t addr, dside_t *s)
{
    if (off < 0)
        return false;
    side_head(s, m);
    uint64_t at;
    unsigned p0 = 0;
    if (m->space == ISA_SPACE_HBM) {
        if (off + m->lo < 0 || off + m->hi >= m->total)
            return false;
        s->base = at = addr + (uint64_t)off * s->dsz;
    } else {
        /* (a whole tile, or a part of partition 0: no division) */
        int64_t start = off < m->row ? 0 : off / m->row, foff = off - start * m->row;
        if (start + m->hull > (int64_t)c->t->partitions || foff + m->lo < 0 ||
            foff + m->hi >= m->row)
            return false;
        at = addr + (uint64_t)foff * s->dsz;
        s->base = (uint64_t)start * ISA_DMA_PARTITION_PITCH + at;
        p0 = (unsigned)start;
    }
    /* built whole: the packed access's fields stored once each */
    s->acc = (bir_access_t){.space = m->space, .p0 = p0, .p1 = p0 + m->p1, .lo = m->lo_b + at,
                            .hi = m->hi_b + at, .write = m->write};
    return true;
}

/* side_place through the side's last placements: one met again is
 * copied, a new one replaces the oldest. */
static bool side_placed(const lower_ctx_t *c, lw_dma_side_t *m, int64_t off, uint64_t addr,
                        dside_t *s)
{
    if (m->rest > 0) {   /* a run of misses: no scan, nothing kept */
        m->rest--;
        return side_place(c, m, off, addr, s);
    }
    for (int i = 0; i < LW_DMA_PLACED; i++) {
        const struct lw_dma_placed *p = &m->placed[i];
        if (p->off == off && p->addr == addr) {
            side_head(s, m);
            s->base = p->base;
            s->acc = p->acc;
            m->misses = 0;
            return true;
        }
    }
    if (!side_place(c, m, off, addr, s))
        return false;
    m->placed[m->next] = (struct lw_dma_placed){off, addr, s->base, s->acc};
    m->next = (m->next + 1) % LW_DMA_PLACED;
    if (++m->misses >= LW_DMA_PLACED_MISS_RUN) {
        m->misses = 0;
        m->rest = LW_DMA_PLACED_REST;
    }
    return true;
}

/* The first entry of the memo set (two entries: it and the next) of src
 * -> dst, or -1 when the op is not memoised (a register offset, or a side
 * without a tensor: the full path's error). */
static int dma_memo_set(lower_ctx_t *c, const tir_ap_t *srcap, const tir_ap_t *dstap,
                        const tir_tensor_t **st, const tir_tensor_t **dt, tir_tensor_t view[2])
{
    /* a dtype view's side: the tensor seen as that dtype (its key) */
    *st = tir_ap_tensor(lw_tensor(c, srcap), srcap, &view[0]);
    *dt = tir_ap_tensor(lw_tensor(c, dstap), dstap, &view[1]);
    if (c->op->rare->src_reg >= 0 || c->op->rare->dst_reg >= 0 || !*st || !*dt ||
        srcap->tensor >= c->m->nmlocs || dstap->tensor >= c->m->nmlocs)
        return -1;
    /* a few of the key's words in one (the rest are compared) */
    uint64_t w = (uint64_t)(*st)->kind << 56 ^ (uint64_t)(*dt)->kind << 48 ^
                 (uint64_t)(*st)->dtype << 40 ^ (uint64_t)(*dt)->dtype << 32 ^
                 (uint64_t)srcap->ndim << 28 ^ (uint64_t)dstap->ndim << 24 ^
                 (uint64_t)(srcap->ndim > 0 ? srcap->count[srcap->ndim - 1] : 0) << 12 ^
                 (uint64_t)(dstap->ndim > 0 ? dstap->count[0] : 0);
    uint64_t h = tpb_hash_word(0, w);
    return (int)(h % (LW_DMA_MEMO / 2) * 2);   /* its set: two ways */
}

int lw_direct_sides_memo(lower_ctx_t *c, const tir_ap_t *srcap, const tir_ap_t *dstap,
                         dside_t *s, dside_t *d, jdim_t *j, int *nj)
{
    lw_dma_use_t *u = &c->dma_use;
    const tir_tensor_t *st, *dt;
    tir_tensor_t view[2];
    int at = -1;
    if (u->rest > 0)
        u->rest--;
    else
        at = dma_memo_set(c, srcap, dstap, &st, &dt, view);
    if (at < 0)
        return lw_direct_sides(c, srcap, dstap, s, d, j, nj);
    lw_memo_t *mm = &c->memo;
    lw_dma_memo_t *set = &mm->dma[at];
    unsigned valid = mm->dma_valid >> at & 3u;   /* bit w: way w holds an entry */
    uint64_t sa = c->m->mlocs[srcap->tensor].addr, da = c->m->mlocs[dstap->tensor].addr;
    for (int w = 0; w < 2; w++) {
        lw_dma_memo_t *e = set + w;
        if ((valid >> w & 1u) && side_key_eq(&e->key[0], st, srcap) &&
            side_key_eq(&e->key[1], dt, dstap)) {
            if (!side_placed(c, &e->side[0], srcap->offset, sa, s) ||
                !side_placed(c, &e->side[1], dstap->offset, da, d))
                return lw_direct_sides(c, srcap, dstap, s, d, j, nj);   /* its error */
            *nj = e->nj;
            memcpy(j, e->j, sizeof e->j);   /* all LW_DMA_MEMO_J: a fixed-size copy */
            u->hits++;
            u->misses = 0;
            u->backoff = 0;
            return lw_check_qos(c);   /* the one check that reads the op */
        }
    }
    if (lw_direct_sides(c, srcap, dstap, s, d, j, nj))
        return -1;
    if (++u->misses >= LW_DMA_MISS_RUN) {   /* rest it, longer each time */
        u->rest = u->backoff ? u->backoff : LW_DMA_REST0;
        u->backoff = u->rest < LW_DMA_REST_MAX / 2 ? u->rest * 2 : LW_DMA_REST_MAX;
        u->misses = 0;
    }
    if (*nj > LW_DMA_MEMO_J)
        return 0;
    /* an empty way, else the one not filled last */
    lw_dma_memo_t *e = !(valid & 1u) ? set : !(valid & 2u) ? set + 1 : set + set[0].last;
    set[0].last = e == set;
    set[1].last = e == set + 1;
    mm->dma_valid |= 1u << (at + (int)(e - set));
    e->nj = *nj;
    side_key_set(&e->key[0], st, srcap);
    side_key_set(&e->key[1], dt, dstap);
    side_to_memo(&e->side[0], s, srcap->offset, sa);
    side_to_memo(&e->side[1], d, dstap->offset, da);
    memcpy(e->j, j, (size_t)*nj * sizeof *j);
    return 0;
}
