/* lower_reduce.c - free-axis and partition reductions.
 *
 * tensor_reduce has two forms:
 *   local (single-step)  one TensorReduce reduces every axis in `axes` at
 *                        once (the ISA mask holds up to 4 free dims);
 *   multi-step chain     when the source needs a 5th free dim (reduced
 *                        outermost dim): step 1 reduces each outer slice of
 *                        the source into a partial tile (only this step reads
 *                        the source), the last step folds the partial over
 *                        the outer dim into dst (negate applied there).
 *                        When the 5th dim is kept, the op splits into one
 *                        local reduce per outer slice instead;
 *   per-axis chain       (TIR_F_PER_AXIS, kernel `per_axis`: the seed's
 *                        NeuronReduceMacro granularity) one TensorReduce per
 *                        reduced dim of the access pattern, outermost first:
 *                        only the first reads the source (is_first_reduce),
 *                        each later one folds the previous fp32 / int32
 *                        partial (two scratch buffers, ping-pong); the last
 *                        writes dst and applies negate.
 * tensor_partition_reduce -> TensorPartitionReduce on Pool. */
#include "lower.h"

#include <string.h>

/* Outermost non-unit free dim of a tile AP, or -1. */
static int outer_free_dim(const tir_ap_t *a)
{
    for (int d = 1; d < a->ndim; d++)
        if (a->count[d] > 1)
            return d;
    return -1;
}

static bool dim_reduced(const tir_ap_t *a, unsigned axes, int d)
{
    return (axes >> (a->ndim - 1 - d)) & 1u;
}

static uint64_t dst_free_elems(const tir_ap_t *a)
{
    uint64_t n = 1;
    for (int d = 1; d < a->ndim; d++)
        n *= (uint64_t)a->count[d];
    return n;
}

/* Per-axis chain: two partials, each at most the source with its outermost
 * reduced dim removed (later partials are smaller). */
static uint64_t per_axis_scratch(const tir_ap_t *s, unsigned axes)
{
    int o = -1, nred = 0;
    uint64_t n = 1;
    for (int d = 1; d < s->ndim; d++) {
        n *= (uint64_t)s->count[d];
        if (s->count[d] > 1 && dim_reduced(s, axes, d)) {
            if (o < 0)
                o = d;
            nred++;
        }
    }
    return nred < 2 ? 0 : 2 * (n / (uint64_t)s->count[o]) * 4;
}

uint64_t lower_scratch_bytes(const tir_kernel_t *k, const tir_op_t *op)
{
    (void)k;
    /* a dropout with a [P, 1] probability tile: its random numbers and drop
     * mask (lower_select.c), fp32 shaped as dst */
    if (op->kind == TIR_DROPOUT && op->s0.is_ap && op->dst->tensor >= 0)
        return dst_free_elems(op->dst) * 4;
    if (op->kind != TIR_TENSOR_REDUCE || op->src[0]->tensor < 0)
        return 0;
    const tir_ap_t *s = op->src[0];
    if (op->flags & TIR_F_PER_AXIS)
        return per_axis_scratch(s, op->rare->axes);
    if (lw_count_free_dims(s, op->rare->axes) <= ISA_MAX_FREE_DIMS)
        return 0;
    int o = outer_free_dim(s);
    if (o < 0 || !dim_reduced(s, op->rare->axes, o))
        return 0;
    return (uint64_t)s->count[o] * dst_free_elems(op->dst) * 4;
}

static int emit_reduce(lower_ctx_t *c, const tir_ap_t *src, const tir_ap_t *dst, unsigned axes,
                       bool negate)
{
    bir_inst_t in;
    lw_inst(c, &in, BIR_TENSOR_REDUCE, ISA_OP_TENSOR_REDUCE);
    isa_fmt_RED_t *f = &in.isa.f->RED;
    unsigned mapped, dm;
    if (lw_tap_axes(c, &in, src, false, "src", axes, &f->in, &mapped) ||
        lw_tap_axes(c, &in, dst, true, "dst", 0, &f->out, &dm))
        return -1;
    if (lw_same_partitions(c, "tensor_reduce", &f->in, &f->out))
        return -1;
    uint64_t kept = 1;
    for (unsigned i = 0; i < f->in.ndims; i++)
        if (!(mapped >> i & 1u))
            kept *= f->in.count[i];
    if (kept != isa_tap_free_elems(&f->out))
        return lw_err(c, "dst has %llu elements per partition but the kept axes have %llu",
                      (unsigned long long)isa_tap_free_elems(&f->out), (unsigned long long)kept);
    f->op = (uint32_t)c->op->reduce_op;
    f->axes = mapped;
    f->negate = negate;
    return lw_emit(c, &in);
}

/* Whether every dim that the op reduces holds one element. */
static bool reduces_one_element(const tir_ap_t *s, unsigned axes)
{
    for (int d = 1; d < s->ndim; d++)
        if (dim_reduced(s, axes, d) && s->count[d] > 1)
            return false;
    return true;
}

/* A reduction over single elements (NKI: each result is its one element)
 * as the ALU computes it: bitwise ops copy the bits of integer tiles, every
 * other op goes through fp32 (an int32 past 2^24 rounds, as the reduction
 * would round it), and negate multiplies by -1.  The ISA's TensorReduce
 * needs a reduced dim left after unit dims are dropped, so it is a
 * TensorCopy or a TensorScalar multiply on the op's engine. */
static int lower_unit_reduce(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bool neg = op->flags & TIR_F_NEGATE;
    bool ints = isa_dtype_kind(lw_dtype(c, op->src[0])) != ISA_DK_F &&
                isa_dtype_kind(lw_dtype(c, op->dst)) != ISA_DK_F;
    if (neg || (ints && !isa_alu_is_bitwise((unsigned)op->reduce_op))) {
        tir_scalar_t one = tir_scalar_imm(neg ? -1.0 : 1.0);
        lw_ts_args_t a = {op->src[0], op->dst, ISA_ALU_MULTIPLY, ISA_ALU_BYPASS, &one,
                          NULL, false, false, NULL, 0};
        return lw_tensor_scalar(c, &a);
    }
    bir_inst_t cp;
    lw_inst(c, &cp, BIR_TENSOR_COPY, ISA_OP_TENSOR_COPY);
    isa_fmt_COPY_t *f = &cp.isa.f->COPY;
    if (lw_tap(c, &cp, op->src[0], false, "src", &f->in) ||
        lw_tap(c, &cp, op->dst, true, "dst", &f->out) ||
        lw_same_partitions(c, "tensor_reduce", &f->in, &f->out))
        return -1;
    if (isa_tap_free_elems(&f->in) != isa_tap_free_elems(&f->out))
        return lw_err(c, "dst has %llu elements per partition but the kept axes have %llu",
                      (unsigned long long)isa_tap_free_elems(&f->out),
                      (unsigned long long)isa_tap_free_elems(&f->in));
    return lw_emit(c, &cp);
}

/* Slice j of the outer dim o of an AP (dim dropped). */
static tir_ap_t slice_outer(const tir_ap_t *a, int o, int64_t j)
{
    tir_ap_t s = *a;
    s.offset += j * a->step[o];
    s.count[o] = 1;
    return s;
}

static int reduce_multistep(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    const tir_ap_t *src = op->src[0];
    int o = outer_free_dim(src);
    bool neg = op->flags & TIR_F_NEGATE;
    if (!dim_reduced(src, op->rare->axes, o)) {
        /* kept outer dim: one local reduce per slice, src slice -> dst slice */
        int od = outer_free_dim(op->dst);
        if (od < 0 || op->dst->count[od] != src->count[o])
            return lw_err(c, "dst outer dim does not match the kept source dim (%lld)",
                          (long long)src->count[o]);
        for (int64_t j = 0; j < src->count[o]; j++) {
            tir_ap_t s = slice_outer(src, o, j), d = slice_outer(op->dst, od, j);
            if (emit_reduce(c, &s, &d, op->rare->axes, neg))
                return -1;
        }
        return 0;
    }
    const bir_mloc_t *sc = c->m->op_scratch ? &c->m->op_scratch[c->opi] : NULL;
    if (!sc || !sc->bytes)
        return lw_err(c, "internal: multi-step reduce without a scratch partial");
    /* partial tile: [P, n_o, kept...] fp32 (int32 for integer data), addressed
     * as a raw AP over a pseudo tensor: emit TAPs directly */
    unsigned pdt = isa_dtype_kind(lw_dtype(c, op->dst)) == ISA_DK_F ? ISA_DT_FP32 : ISA_DT_INT32;
    uint64_t kept = dst_free_elems(op->dst);
    int64_t n_o = src->count[o];
    for (int64_t j = 0; j < n_o; j++) {
        tir_ap_t s = slice_outer(src, o, j);
        bir_inst_t in;
        lw_inst(c, &in, BIR_TENSOR_REDUCE, ISA_OP_TENSOR_REDUCE);
        isa_fmt_RED_t *f = &in.isa.f->RED;
        unsigned mapped;
        if (lw_tap_axes(c, &in, &s, false, "src", op->rare->axes, &f->in, &mapped))
            return -1;
        f->out = f->in;
        f->out.space = ISA_SPACE_SBUF;
        f->out.dtype = pdt;
        f->out.addr = (uint32_t)(sc->addr + (uint64_t)j * kept * 4);
        f->out.ndims = 1;
        f->out.step[0] = 1;
        f->out.count[0] = (uint32_t)kept;
        for (int i = 1; i < 4; i++)
            f->out.step[i] = 0, f->out.count[i] = 0;
        bir_access_t w = {.space = ISA_SPACE_SBUF, .p0 = f->out.start,
                          .p1 = f->out.start + f->out.nparts, .lo = f->out.addr,
                          .hi = f->out.addr + kept * 4, .write = 1};
        bir_inst_access(c->m, &in, &w);
        f->op = (uint32_t)op->reduce_op;
        f->axes = mapped;
        if (lw_emit(c, &in))
            return -1;
    }
    /* fold: reduce the partial [P, n_o, kept] over n_o into dst */
    bir_inst_t in;
    lw_inst(c, &in, BIR_TENSOR_REDUCE, ISA_OP_TENSOR_REDUCE);
    isa_fmt_RED_t *f = &in.isa.f->RED;
    if (lw_tap(c, &in, op->dst, true, "dst", &f->out))
        return -1;
    f->in = f->out;
    f->in.dtype = pdt;
    f->in.addr = (uint32_t)sc->addr;
    f->in.ndims = 2;
    f->in.step[0] = 1, f->in.count[0] = (uint32_t)kept;
    f->in.step[1] = (int32_t)kept, f->in.count[1] = (uint32_t)n_o;
    f->in.step[2] = f->in.step[3] = 0;
    f->in.count[2] = f->in.count[3] = 0;
    bir_access_t r = {.space = ISA_SPACE_SBUF, .p0 = f->in.start,
                      .p1 = f->in.start + f->in.nparts, .lo = sc->addr,
                      .hi = sc->addr + (uint64_t)n_o * kept * 4, .write = 0};
    bir_inst_access(c->m, &in, &r);
    f->op = (uint32_t)op->reduce_op;
    f->axes = 2;     /* dim 1 of the partial: the outer slices */
    f->negate = neg;
    return lw_emit(c, &in);
}

/* A dense [P, dims of t without dim `drop`] partial at scratch byte addr. */
isa_tap_t lw_dense_tap(const isa_tap_t *t, unsigned drop, unsigned dtype, uint64_t addr)
{
    isa_tap_t p;
    memset(&p, 0, sizeof p);
    p.space = ISA_SPACE_SBUF;
    p.dtype = dtype;
    p.start = t->start;
    p.nparts = t->nparts;
    p.addr = (uint32_t)addr;
    int32_t step = 1;
    for (unsigned i = 0; i < t->ndims; i++) {
        if (i == drop)
            continue;
        p.step[p.ndims] = step;
        p.count[p.ndims] = t->count[i];
        step *= (int32_t)t->count[i];
        p.ndims++;
    }
    return p;
}

void lw_dense_access(lower_ctx_t *c, bir_inst_t *in, const isa_tap_t *p, bool write)
{
    bir_access_t a = {.space = ISA_SPACE_SBUF, .p0 = p->start, .p1 = p->start + p->nparts,
                      .lo = p->addr, .hi = p->addr + isa_tap_free_elems(p) * 4, .write = write};
    bir_inst_access(c->m, in, &a);
}

/* seed 001 NeuronReduceMacro: one Reduce per axis (see the file comment). */
static int reduce_per_axis(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bool neg = op->flags & TIR_F_NEGATE;
    isa_tap_t cur;
    unsigned mapped;
    bir_inst_t probe;
    bir_inst_init(&probe, BIR_NOP, ISA_OP_NOP);
    if (lw_tap_axes(c, &probe, op->src[0], false, "src", op->rare->axes, &cur, &mapped))
        return -1;
    int nred = __builtin_popcount(mapped);
    if (nred < 2)   /* one reduced dim: the chain is a single step */
        return emit_reduce(c, op->src[0], op->dst, op->rare->axes, neg);
    if (!c->m->op_scratch)   /* the allocator gave no op a partial */
        return lw_err(c, "internal: multi-step reduce without a scratch partial");
    const bir_mloc_t *sc = &c->m->op_scratch[c->opi];
    unsigned pdt = isa_dtype_kind(lw_dtype(c, op->dst)) == ISA_DK_F ? ISA_DT_FP32 : ISA_DT_INT32;
    uint64_t half = sc->bytes / 2;
    for (int k = 0; k < nred; k++) {
        int i = 31 - __builtin_clz(mapped);   /* outermost reduced TAP dim */
        mapped &= ~(1u << i);
        bir_inst_t in;
        lw_inst(c, &in, BIR_TENSOR_REDUCE, ISA_OP_TENSOR_REDUCE);
        isa_fmt_RED_t *f = &in.isa.f->RED;
        unsigned m0;
        if (k == 0) {   /* is_first_reduce: the only step that reads the source */
            if (lw_tap_axes(c, &in, op->src[0], false, "src", op->rare->axes, &f->in, &m0))
                return -1;
        } else {
            f->in = cur;
            lw_dense_access(c, &in, &f->in, false);
        }
        isa_tap_t next = lw_dense_tap(&cur, (unsigned)i, pdt, sc->addr + (uint64_t)(k % 2) * half);
        if (k == nred - 1) {
            if (lw_tap(c, &in, op->dst, true, "dst", &f->out))
                return -1;
            if (isa_tap_free_elems(&f->out) != isa_tap_free_elems(&next))
                return lw_err(c, "dst has %llu elements per partition but the kept axes have %llu",
                              (unsigned long long)isa_tap_free_elems(&f->out),
                              (unsigned long long)isa_tap_free_elems(&next));
        } else {
            if (!sc->bytes || isa_tap_free_elems(&next) * 4 > half)
                return lw_err(c, "internal: per-axis reduce partial exceeds its scratch");
            f->out = next;
            lw_dense_access(c, &in, &f->out, true);
        }
        f->op = (uint32_t)op->reduce_op;
        f->axes = 1u << i;
        f->negate = k == nred - 1 && neg;
        if (lw_emit(c, &in))
            return -1;
        cur = next;
    }
    return 0;
}

static int lower_partition_reduce(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t in;
    lw_inst(c, &in, BIR_PARTITION_REDUCE, ISA_OP_TENSOR_PARTITION_REDUCE);
    isa_fmt_PRED_t *f = &in.isa.f->PRED;
    if (lw_tap(c, &in, op->src[0], false, "src", &f->in) ||
        lw_tap(c, &in, op->dst, true, "dst", &f->out))
        return -1;
    if (f->out.nparts != 1)
        return lw_err(c, "dst must have 1 partition, has %u", f->out.nparts);
    if (isa_tap_free_elems(&f->in) != isa_tap_free_elems(&f->out))
        return lw_err(c, "src and dst free sizes differ");
    f->op = (uint32_t)op->reduce_op;
    return lw_emit(c, &in);
}

int lower_reduce(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    if (op->kind == TIR_TENSOR_PARTITION_REDUCE)
        return lower_partition_reduce(c);
    if (op->reduce_op == ISA_ALU_BYPASS)
        return lw_err(c, "tensor_reduce needs a reduce op");
    if (!op->rare->axes)
        return lw_err(c, "tensor_reduce needs at least one axis");
    if (reduces_one_element(op->src[0], op->rare->axes))
        return lower_unit_reduce(c);
    if (lw_count_free_dims(op->src[0], op->rare->axes) > ISA_MAX_FREE_DIMS)
        return reduce_multistep(c);
    if (op->flags & TIR_F_PER_AXIS)
        return reduce_per_axis(c);
    return emit_reduce(c, op->src[0], op->dst, op->rare->axes, op->flags & TIR_F_NEGATE);
}
