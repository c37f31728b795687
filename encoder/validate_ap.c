/* validate_ap.c - the operand access-pattern check (bounds and tile
 * structure) and its memo (builder.h enc_check_memo_t), for validate.c and
 * the plain-DMA pass of validate_dma.c. */
#include "validate_int.h"

#include <stdlib.h>
#include <string.h>

/* Bounds and tile structure of one AP (slot names the operand). */
/* The operand's field name: looked up only for a message. */
#define AP_FIELD enc_operand_name(v->op->kind, slot)

/* *strided: the pass needed a direct DMA's partition stride (else it holds
 * for any op: nothing else here reads the op). */
static int check_ap(const vctx_t *v, const tir_ap_t *a, int slot, int64_t indirect_bound,
                    bool *strided)
{
    tir_tensor_t vt;   /* a dtype view: the tensor seen as that dtype */
    const tir_tensor_t *t = tir_ap_tensor(tens(v, a), a, &vt);
    *strided = false;
    if (a->ndim < 1 || a->ndim > TIR_MAX_DIMS)
        return vfail(v, AP_FIELD, "access pattern has %d dims (1..%d)", a->ndim, TIR_MAX_DIMS);
    int64_t total = 1;
    for (int d = 0; d < t->ndim; d++)
        total *= t->shape[d];
    int64_t lo = a->offset, hi = a->offset, elems = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (a->count[d] < 1)
            return vfail(v, AP_FIELD, "access pattern dim %d has count %lld", d, (long long)a->count[d]);
        int64_t c = (d == 0 && indirect_bound > 0) ? indirect_bound : a->count[d];
        int64_t span;
        bool ovf = __builtin_mul_overflow(a->step[d], c - 1, &span) ||
                   __builtin_mul_overflow(elems, a->count[d], &elems) ||
                   (span >= 0 ? __builtin_add_overflow(hi, span, &hi)
                              : __builtin_add_overflow(lo, span, &lo));
        if (ovf || elems > ((int64_t)1 << 40))
            return vfail(v, AP_FIELD, "access pattern is too large (dim %d: step %lld, count %lld)", d,
                         (long long)a->step[d], (long long)c);
    }
    if (lo < 0 || hi >= total)
        return vfail(v, AP_FIELD, "access pattern reaches elements %lld..%lld of '%s' which has %lld "
                     "elements", (long long)lo, (long long)hi, t->name, (long long)total);
    if (is_tile_kind(t->kind)) {
        int64_t row = total / t->shape[0];
        if (a->ndim - 1 > ISA_MAX_FREE_DIMS)
            return vfail(v, AP_FIELD, "%d free dims on tile '%s' (at most %d)", a->ndim - 1, t->name,
                         ISA_MAX_FREE_DIMS);
        if (a->count[0] > (int64_t)v->tg->partitions)
            return vfail(v, AP_FIELD, "partition dim %lld > %u", (long long)a->count[0],
                         v->tg->partitions);
        /* a direct DMA may take every m-th partition: its partition AP is
         * re-derived with that stride (seed 002 tonga_partition_ap,
         * docs/compiler.md "DMA lowering") */
        bool dma = enc_direct_dma(v->op);
        bool pstride = dma && a->step[0] > row && a->step[0] % row == 0;
        if (a->count[0] > 1 && a->step[0] != row && !pstride)
            return vfail(v, AP_FIELD, "dim 0 of a tile access must step over partitions (step %lld, "
                         "row size %lld)", (long long)a->step[0], (long long)row);
        *strided = a->count[0] > 1 && a->step[0] != row;
        /* the free part must stay inside one partition row */
        int64_t flo = a->offset % row, fhi = flo;
        for (int d = 1; d < a->ndim; d++) {
            if (a->step[d] >= 0)
                fhi += a->step[d] * (a->count[d] - 1);
            else
                flo += a->step[d] * (a->count[d] - 1);
        }
        if (flo < 0 || fhi >= row)
            return vfail(v, AP_FIELD, "free access %lld..%lld leaves the partition row of tile '%s' "
                         "(%lld elements)", (long long)flo, (long long)fhi, t->name,
                         (long long)row);
    }
    return 0;
}

#undef AP_FIELD

/* a is the whole record of its tensor in m's owner (builder.h
 * enc_check_memo_t; the owner's kernel is m's: records of another are
 * other pointers) */
static bool is_whole(const enc_check_memo_t *m, const tir_ap_t *a)
{
    const enc_builder_t *b = m->owner;
    return b && b->k == m->k && a->tensor < b->cap_tensor_info && b->tinfo[a->tensor].full_ap == a;
}

static bool whole_passed(const enc_check_memo_t *m, int t)
{
    return (t >> 6) < m->nwhole && (m->whole[t >> 6] >> (t & 63) & 1u);
}

/* Tensor t's whole record passed for any op (nothing kept when out of
 * memory: checked again next time). */
static void note_whole(enc_check_memo_t *m, int t)
{
    if ((t >> 6) >= m->nwhole) {
        int n = m->nwhole ? m->nwhole : 16;
        while (n <= (t >> 6))
            n *= 2;
        uint64_t *w = realloc(m->whole, (size_t)n * sizeof *w);
        if (!w)
            return;
        memset(w + m->nwhole, 0, (size_t)(n - m->nwhole) * sizeof *w);
        m->whole = w;
        m->nwhole = n;
    }
    m->whole[t >> 6] |= (uint64_t)1 << (t & 63);
}

/* check_ap through the memo (builder.h enc_check_memo_t): a record that
 * passed with the same bound passes again, for a direct DMA (its partition
 * stride is the one relaxation) or after passing for another op or for a
 * DMA without that stride. */
int enc_check_ap_memo_miss(const vctx_t *v, const tir_ap_t *a, int slot, int64_t bound,
                           unsigned h)
{
    enc_check_memo_t *m = v->memo;
    bool strided;
    if (!m)
        return check_ap(v, a, slot, bound, &strided);
    if (m->k != v->k || m->tg != v->tg) {
        memset(m->e, 0, sizeof m->e);
        if (m->whole)
            memset(m->whole, 0, (size_t)m->nwhole * sizeof *m->whole);
        m->k = v->k;
        m->tg = v->tg;
    }
    bool dma = enc_direct_dma(v->op);   /* what check_ap reads of the op */
    bool same = m->e[h].ap == a && m->e[h].bound == bound;
    bool whole = false;
    if ((same && (dma || m->e[h].any)) ||   /* a pass as a non-DMA operand holds for a DMA */
        ((whole = bound == 0 && is_whole(m, a)) && whole_passed(m, a->tensor))) {
        m->hits++;
        return 0;
    }
    if (check_ap(v, a, slot, bound, &strided))
        return -1;
    m->e[h].any = !dma || !strided || (same && m->e[h].any);
    m->e[h].ap = a;
    m->e[h].bound = bound;
    if (whole && m->e[h].any)
        note_whole(m, a->tensor);
    return 0;
}


void enc_check_memo_pass(enc_check_memo_t *m, const tir_ap_t *a, bool any, bool whole)
{
    unsigned h = enc_check_memo_slot(a);
    m->e[h].ap = a;
    m->e[h].bound = 0;
    m->e[h].any = any;
    if (whole && any)
        note_whole(m, a->tensor);
}
