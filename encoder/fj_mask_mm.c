/* fj_mask_mm.c - NKI mask= on a matmul (docs/kernel-format.md "mask").
 *
 * NKI's mask restricts the output elements the instruction computes; the
 * rest of dst is left unchanged, and inside it the product overwrites or
 * accumulates into PSUM as the op's accumulate says.  When the kept
 * elements are a rectangle of dst (a partition range times a range of each
 * free dim: NKI's (i_p < n) & (i_f < m), the edge tile of a tiled N), the
 * matmul runs on that rectangle: dst sliced, stationary's columns (M) cut
 * to the kept partitions and moving's free dims to the kept columns, the
 * accumulate flag unchanged.  That is the smaller matmul the hardware
 * would run, so PSUM accumulation order and timing are a real matmul's.
 * A mask that keeps nothing emits a noop.
 *
 * Otherwise (a predicate over two indices, a moving or stationary whose
 * dims do not follow dst's, a transpose, double_row) an overwriting matmul
 * is computed into a compiler tile and copied into dst under the mask, as
 * the other masked ops (fj_mask.c); an accumulating one is refused naming
 * `mask`, since a masked copy cannot add.
 *
 * accumulate=None is resolved and recorded on the dst the kernel names,
 * not on the rectangle (enc_set_acc_dst), so masked and unmasked members
 * of one accumulation group meet, whichever comes first. */
#include <string.h>

#include "fj.h"

typedef struct {
    int64_t lo[TIR_MAX_DIMS], hi[TIR_MAX_DIMS];   /* kept [lo, hi) per dst dim */
} box_t;

enum { BOX_EMPTY, BOX_RECT, BOX_OTHER };

/* The mask's predicates (m's own, then mask_more); their number. */
static int preds_of(const tir_op_t *m, tir_pred_t *out)
{
    memset(&out[0], 0, sizeof out[0]);
    out[0].offset = m->rare->pat_offset;
    out[0].cm = m->rare->pat_cm;
    out[0].ndim = m->rare->pat_ndim;
    out[0].cmp = m->cmp;
    memcpy(out[0].step, m->rare->pat_step, sizeof out[0].step);
    for (int i = 0; i < m->rare->nmask_more; i++)
        out[1 + i] = m->rare->mask_more[i];
    return 1 + m->rare->nmask_more;
}

/* p's coefficient of dst dim d (0 = partitions) */
static int64_t coef(const tir_pred_t *p, int d)
{
    return d == 0 ? p->cm : d - 1 < p->ndim ? p->step[d - 1] : 0;
}

/* The one dst dim of more than one index p depends on; -1 none, -2 several. */
static int pred_axis(const tir_pred_t *p, const tir_ap_t *dst)
{
    int axis = -1;
    for (int d = 0; d < dst->ndim; d++) {
        if (!coef(p, d) || dst->count[d] < 2)
            continue;
        if (axis >= 0)
            return -2;
        axis = d;
    }
    return axis;
}

/* Narrow dim a of bx to where p holds; false when that is two pieces
 * (not_equal inside the range). */
static bool narrow(const tir_pred_t *p, int a, box_t *bx)
{
    int64_t c = coef(p, a), first = -1, last = -1;
    for (int64_t i = bx->lo[a]; i < bx->hi[a]; i++) {
        if (!isa_cmp_holds((unsigned)p->cmp, p->offset + c * i, 0))
            continue;
        if (last >= 0 && last != i - 1)
            return false;
        if (first < 0)
            first = i;
        last = i;
    }
    if (first < 0)
        bx->hi[a] = bx->lo[a];
    else
        bx->lo[a] = first, bx->hi[a] = last + 1;
    return true;
}

/* The elements of dst the mask m keeps: a rectangle (bx), none, or other. */
static int mask_box(const tir_op_t *m, const tir_ap_t *dst, box_t *bx)
{
    tir_pred_t p[TIR_MAX_MASK_PREDS];
    int n = preds_of(m, p);
    for (int d = 0; d < dst->ndim; d++)
        bx->lo[d] = 0, bx->hi[d] = dst->count[d];
    for (int i = 0; i < n; i++)
        if (pred_axis(&p[i], dst) == -2)
            return BOX_OTHER;
    for (int i = 0; i < n; i++) {
        int a = pred_axis(&p[i], dst);
        if (a < 0 && !isa_cmp_holds((unsigned)p[i].cmp, p[i].offset, 0))
            return BOX_EMPTY;   /* false at every index */
        if (a < 0)
            continue;
        if (!narrow(&p[i], a, bx))
            return BOX_OTHER;
        if (bx->lo[a] == bx->hi[a])
            return BOX_EMPTY;
    }
    return BOX_RECT;
}

static bool cut_at(const box_t *bx, const tir_ap_t *dst, int d)
{
    return bx->lo[d] > 0 || bx->hi[d] < dst->count[d];
}

/* Whether the kept partitions of dst start where the engines allow
 * (isa_start_align, which the lowering checks). */
static bool start_ok(jx_t *j, const tir_ap_t *dst, const box_t *bx)
{
    tir_tensor_t vt;
    const tir_tensor_t *v = tir_ap_tensor(&j->b.k->tensors[dst->tensor], dst, &vt);
    int64_t row = v ? tir_tile_row(v) : 0;   /* in dst's elements (a dtype view's too) */
    if (row < 1)
        return false;
    int64_t start = dst->offset / row + bx->lo[0], n = bx->hi[0] - bx->lo[0];
    return start % (int64_t)isa_start_align((uint64_t)n) == 0;
}

/* Why op cannot run on rectangle bx of dst; NULL when it can. */
static const char *no_slice(jx_t *j, const tir_op_t *op, const tir_ap_t *dst, const box_t *bx)
{
    const tir_ap_t *st = op->src[0], *mv = op->src[1];
    if (op->flags & TIR_F_TRANSPOSE)
        return "a transpose (is_transpose) is not cut";
    if (op->flags & TIR_F_DOUBLE_ROW)
        return "perf_mode double_row is not cut";
    for (int d = 1; d < dst->ndim; d++)
        if (cut_at(bx, dst, d) && (mv->ndim != dst->ndim || mv->count[d] != dst->count[d]))
            return "moving's free dims are not dst's, so its columns cannot be cut to the "
                   "mask's";
    if (!cut_at(bx, dst, 0))
        return NULL;
    if (st->ndim != 2 || st->count[1] != dst->count[0])
        return "stationary's free dims are not one dim of dst's partitions, so its columns "
               "cannot be cut to the mask's partitions";
    if (!start_ok(j, dst, bx))
        return "dst's kept partitions start where the engines cannot start that many "
               "(more than 64 at 0, 33-64 at 0 or 64, up to 32 at a multiple of 32)";
    return NULL;
}

/* Dim d of a cut to [lo, hi), interned. */
static const tir_ap_t *cut(jx_t *j, const tir_ap_t *a, int d, int64_t lo, int64_t hi)
{
    tir_ap_t x = *a;
    x.offset += lo * x.step[d];
    x.count[d] = hi - lo;
    return enc_in(&j->b, x);
}

/* op on rectangle bx of dst: dst's dims, moving's free dims, stationary's
 * columns for the partitions */
static void slice_op(jx_t *j, tir_op_t *op, const tir_ap_t *dst, const box_t *bx)
{
    for (int d = 0; d < dst->ndim; d++) {
        if (!cut_at(bx, dst, d))
            continue;
        op->dst = cut(j, op->dst, d, bx->lo[d], bx->hi[d]);
        if (d)
            op->src[1] = cut(j, op->src[1], d, bx->lo[d], bx->hi[d]);
        else
            op->src[0] = cut(j, op->src[0], 1, bx->lo[0], bx->hi[0]);
    }
}

/* Whether op accumulates into dst (accumulate=None resolved there); -1
 * after an error. */
static int accumulates(jx_t *j, const tir_op_t *op, const tir_ap_t *dst)
{
    if (!(op->flags & TIR_F_ACC_AUTO))
        return !!(op->flags & TIR_F_ACCUMULATE);
    tir_op_t t = *op;
    t.dst = dst;
    t.path = j->b.path;   /* the op's, for the error (enc_emit sets op->path) */
    if (enc_acc_resolve(&j->b, &t))
        return -1;
    return !!(t.flags & TIR_F_ACCUMULATE);
}

static int emit_noop(jx_t *j)
{
    tir_op_t nop;
    tir_op_init(&nop, TIR_NOOP);
    return enc_emit(&j->b, &nop) < 0 ? -1 : 0;
}

int fj_mask_matmul(jx_t *j, const char *path, tir_op_t *op)
{
    fj_mask_mm_t *mm = j->mask_mm;
    const tir_ap_t *dst = mm->copy->dst;   /* the declared dst, op->dst until cut */
    box_t bx;
    int kind = mask_box(mm->copy, dst, &bx);
    if (kind == BOX_EMPTY)
        return emit_noop(j);
    const char *why = kind == BOX_RECT ? no_slice(j, op, dst, &bx)
                                       : "it keeps no rectangle of dst (a predicate over "
                                         "two indices, or not_equal inside the range)";
    if (!why) {
        slice_op(j, op, dst, &bx);
        enc_set_acc_dst(&j->b, dst);
        return j->b.failed ? -1 : 1;
    }
    if (!(op->flags & TIR_F_TRANSPOSE)) {   /* a transpose's accumulate: the op check */
        int acc = accumulates(j, op, dst);
        if (acc < 0)
            return -1;
        if (acc)
            return fj_jfail(j, path, "mask", "an accumulating matmul is masked on a rectangle "
                            "of dst (a partition range x free ranges, NKI's (i_p < n) & (i_f "
                            "< m)), cut from its operands; here %s. Give \"accumulate\": "
                            "false, or accumulate unmasked and mask a tensor_copy of the "
                            "result", why);
        op->flags &= ~TIR_F_ACC_AUTO;   /* overwrite: the group starts here */
        mm->note = true;
    }
    if (fj_mask_scratch(j, mm->copy, mm->name, mm->dname))
        return -1;
    op->dst = mm->copy->src[0];
    mm->scratch = true;
    return 1;
}

int fj_mask_matmul_note(jx_t *j, const tir_op_t *copy)
{
    tir_op_t t;
    tir_op_init(&t, TIR_MATMUL);
    t.dst = copy->dst;
    return enc_acc_note(&j->b, &t);
}
