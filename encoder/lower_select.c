/* lower_select.c - iota / affine_select / max8 family / select / dropout /
 * memset / stream_shuffle.
 *
 *   memset          -> Memset Const (fill bit pattern = value reinterpreted
 *                      to the dst dtype; a packed MX quad dst only with
 *                      value 0, as NKI's memset: zero bits of the
 *                      same-size unsigned dtype) or Memset Random
 *   iota            -> Iota on Pool
 *   affine_select   -> AffineSelect on Pool; on DVE, a predicated
 *                      TensorScalarPtr (PredExt prefix + fill) through the
 *                      shared tensor-scalar emitter
 *   max8            -> Max8
 *   find_index8     -> MaxIndex8
 *   match_replace8  -> MatchReplace8, or the fused MaxIndexAndMatchReplace
 *                      when an index output (dst_idx) is present
 *   select          -> TensorCopy(on_false) or Memset(fill) into dst, then
 *                      CopyPredicated(pred, on_true) over it
 *   dropout         -> Dropout
 *   stream_shuffle  -> StreamShuffle */
#include "lower.h"

#include <math.h>
#include <string.h>

static int lower_memset_to(lower_ctx_t *c, const tir_ap_t *dst, double value, bool random)
{
    bir_inst_t in;
    lw_inst(c, &in, BIR_MEMSET, ISA_OP_MEMSET);
    isa_fmt_MEMSET_t *f = &in.isa.f->MEMSET;
    if (lw_tap(c, &in, dst, true, "dst", &f->out))
        return -1;
    if (isa_dtype_kind(f->out.dtype) == ISA_DK_X) {
        /* NKI memset: x4 packed types take only value=0; a quad of zeros
         * is the zero bits, which the unsigned dtype of its size writes */
        if (random || value != 0.0)
            return lw_err(c, "memset of packed MX dtype %s: only value 0 is supported (NKI)",
                          isa_dtype_numpy_name(f->out.dtype));
        f->out.dtype = isa_dtype_size(f->out.dtype) == 4 ? ISA_DT_UINT32 : ISA_DT_UINT16;
    }
    f->mode = random ? ISA_MEMSET_RANDOM : ISA_MEMSET_CONST;
    f->value = random ? 0 : lw_fill_bits(value, f->out.dtype);
    return lw_emit(c, &in);
}

/* The op's own pattern (pat_*, cmp) as a predicate. */
static tir_pred_t op_pattern(const tir_op_t *op)
{
    const tir_op_rare_t *r = op->rare;
    tir_pred_t p = {.offset = r->pat_offset, .cm = r->pat_cm, .ndim = r->pat_ndim,
                    .cmp = op->cmp};
    memcpy(p.step, op->rare->pat_step, sizeof p.step);
    return p;
}

/* dst TAP with one ISA dim per non-unit tile-IR free dim (no merging), and
 * the pattern's steps mapped onto those dims. */
static int pattern_tap_of(lower_ctx_t *c, bir_inst_t *in, const tir_ap_t *dst, bool write,
                          const tir_pred_t *pat, isa_tap_t *tap, int32_t steps[4])
{
    unsigned mapped;
    if (lw_tap_axes(c, in, dst, write, write ? "dst" : "src", 0x2Au /* alternate: no merging */,
                    tap, &mapped))
        return -1;
    int nfree = dst->ndim - 1;
    if (pat->ndim && pat->ndim != nfree)
        return lw_err(c, "pattern has %d dims but the access has %d free dims", pat->ndim,
                      nfree);
    int k = 0;
    for (int d = dst->ndim - 1; d >= 1; d--) {
        if (dst->count[d] == 1)
            continue;
        int64_t s = pat->ndim ? pat->step[d - 1] : 0;
        if (s < -32768 || s > 32767)
            return lw_err(c, "pattern step %lld does not fit 16 bits", (long long)s);
        steps[k++] = (int32_t)s;
    }
    if (k != (int)tap->ndims)
        return lw_err(c, "pattern access needs one ISA dim per free dim (%d vs %u)", k,
                      tap->ndims);
    for (; k < 4; k++)
        steps[k] = 0;
    if (pat->cm < -32768 || pat->cm > 32767)
        return lw_err(c, "channel_multiplier %lld does not fit 16 bits", (long long)pat->cm);
    if (pat->offset < INT32_MIN || pat->offset > INT32_MAX)
        return lw_err(c, "pattern offset %lld does not fit 32 bits", (long long)pat->offset);
    return 0;
}

static int pattern_tap(lower_ctx_t *c, bir_inst_t *in, const tir_ap_t *dst, bool write,
                       isa_tap_t *tap, int32_t steps[4])
{
    tir_pred_t pat = op_pattern(c->op);
    return pattern_tap_of(c, in, dst, write, &pat, tap, steps);
}

static int lower_iota(lower_ctx_t *c)
{
    bir_inst_t in;
    lw_inst(c, &in, BIR_IOTA, ISA_OP_IOTA);
    isa_fmt_IOTA_t *f = &in.isa.f->IOTA;
    int32_t st[4];
    if (pattern_tap(c, &in, c->op->dst, true, &f->out, st))
        return -1;
    f->offset = (int32_t)c->op->rare->pat_offset;
    f->cm = (int32_t)c->op->rare->pat_cm;
    f->step0 = st[0], f->step1 = st[1], f->step2 = st[2], f->step3 = st[3];
    return lw_emit(c, &in);
}

int lw_pred_of(lower_ctx_t *c, const tir_pred_t *pat, isa_fmt_PREDEXT_t *p)
{
    bir_inst_t probe;
    bir_inst_init(&probe, BIR_NOP, ISA_OP_NOP);
    isa_tap_t tap;
    int32_t st[4];
    if (pattern_tap_of(c, &probe, c->op->dst, true, pat, &tap, st))
        return -1;
    memset(p, 0, sizeof *p);
    p->offset = (int32_t)pat->offset;
    p->cm = (int32_t)pat->cm;
    p->cmp = (uint32_t)pat->cmp;
    p->step0 = st[0], p->step1 = st[1], p->step2 = st[2], p->step3 = st[3];
    return 0;
}

int lw_pattern_pred(lower_ctx_t *c, isa_fmt_PREDEXT_t *p)
{
    tir_pred_t pat = op_pattern(c->op);
    return lw_pred_of(c, &pat, p);
}

static int lower_affine_select(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    int32_t st[4];
    if (op->engine == ISA_ENG_DVE) {
        isa_fmt_PREDEXT_t p;
        if (lw_pattern_pred(c, &p))
            return -1;
        p.fill = (float)op->rare->fill;
        p.rev_pred = (op->flags & TIR_F_REV0) != 0;   /* seed 001 set_reverse_pred */
        tir_scalar_t zero = tir_scalar_imm(0.0);
        lw_ts_args_t a = {op->src[0], op->dst, ISA_ALU_BYPASS, ISA_ALU_BYPASS, &zero, NULL,
                          false, false, &p, 1};
        return lw_tensor_scalar(c, &a);
    }
    bir_inst_t in;
    lw_inst(c, &in, BIR_AFFINE_SELECT, ISA_OP_AFFINE_SELECT);
    isa_fmt_AFSEL_t *f = &in.isa.f->AFSEL;
    if (pattern_tap(c, &in, op->dst, true, &f->out, st) ||
        lw_tap_axes(c, &in, op->src[0], false, "on_true", 0x2Au, &f->in, &(unsigned){0}))
        return -1;
    if (lw_same_partitions(c, "affine_select", &f->in, &f->out))
        return -1;
    f->offset = (int32_t)op->rare->pat_offset;
    f->cm = (int32_t)op->rare->pat_cm;
    f->cmp = (uint32_t)op->cmp;
    f->step0 = st[0], f->step1 = st[1], f->step2 = st[2], f->step3 = st[3];
    f->fill = (float)op->rare->fill;
    f->rev_pred = (op->flags & TIR_F_REV0) != 0;
    return lw_emit(c, &in);
}

/* [P,8] values tile as a per-partition pointer to 8 consecutive elements,
 * read on src's partitions (docs/semantics.md "PTR operand"): one that
 * starts elsewhere would be read from other partitions than it names. */
static int vals_ptr(lower_ctx_t *c, bir_inst_t *in, const tir_ap_t *a, bool write,
                    const char *role, const isa_tap_t *src, isa_ptr_t *p)
{
    isa_tap_t t;
    if (lw_tap(c, in, a, write, role, &t))
        return -1;
    if (isa_tap_free_elems(&t) != 8 || (t.ndims == 1 && t.step[0] != 1))
        return lw_err(c, "%s must be a contiguous [P,8] tile access", role);
    if (t.start != src->start || t.nparts < src->nparts)
        return lw_err(c, "%s: on partitions %u..%u, but src is on partitions %u..%u; the engine "
                         "reads %s on src's partitions (place it there, e.g. copy it to "
                         "partition %u)", role, t.start, t.start + t.nparts - 1, src->start,
                      src->start + src->nparts - 1, role, src->start);
    p->addr = t.addr, p->dtype = t.dtype, p->space = t.space;
    return 0;
}

static int lower_max8_family(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t in;
    if (op->kind == TIR_MAX8) {
        lw_inst(c, &in, BIR_MAX, ISA_OP_MAX8);
        if (lw_tap(c, &in, op->src[0], false, "src", &in.isa.f->COPY.in) ||
            lw_tap(c, &in, op->dst, true, "dst", &in.isa.f->COPY.out))
            return -1;
        if (isa_tap_free_elems(&in.isa.f->COPY.out) != 8)
            return lw_err(c, "max8 dst must be [P,8]");
        if (isa_tap_free_elems(&in.isa.f->COPY.in) < 8)
            return lw_err(c, "max8 src needs at least 8 elements per partition");
        return lw_emit(c, &in);
    }
    if (op->kind == TIR_FIND_INDEX8) {
        lw_inst(c, &in, BIR_MAX_INDEX, ISA_OP_MAX_INDEX8);
        isa_fmt_FIDX_t *f = &in.isa.f->FIDX;
        if (lw_tap(c, &in, op->src[0], false, "src", &f->in) ||
            lw_tap(c, &in, op->dst, true, "dst", &f->out) ||
            vals_ptr(c, &in, op->src[1], false, "vals", &f->in, &f->vals))
            return -1;
        if (isa_tap_free_elems(&f->out) != 8)
            return lw_err(c, "find_index8 dst must be [P,8]");
        if (f->out.dtype != ISA_DT_UINT32 && f->out.dtype != ISA_DT_UINT16)
            return lw_err(c, "find_index8 dst must be uint32 or uint16 (the index view)");
        return lw_emit(c, &in);
    }
    /* match_replace8: fused with the index output when dst_idx is present */
    if (lw_has(op->dst2)) {
        lw_inst(c, &in, BIR_MAX_INDEX_MATCH_REPLACE, ISA_OP_MAX_INDEX_AND_MATCH_REPLACE);
        isa_fmt_MIMR_t *f = &in.isa.f->MIMR;
        if (lw_tap(c, &in, op->src[0], false, "src", &f->in) ||
            lw_tap(c, &in, op->dst, true, "dst", &f->out) ||
            vals_ptr(c, &in, op->src[1], false, "vals", &f->in, &f->vals) ||
            vals_ptr(c, &in, op->dst2, true, "dst_idx", &f->in, &f->idx))
            return -1;
        if (lw_same_partitions(c, "match_replace8", &f->in, &f->out))
            return -1;
        f->imm = (float)lw_clip_scalar(op->rare->value, f->out.dtype);
        return lw_emit(c, &in);
    }
    lw_inst(c, &in, BIR_MATCH_REPLACE, ISA_OP_MATCH_REPLACE8);
    isa_fmt_MR_t *f = &in.isa.f->MR;
    if (lw_tap(c, &in, op->src[0], false, "src", &f->in) ||
        lw_tap(c, &in, op->dst, true, "dst", &f->out) ||
        vals_ptr(c, &in, op->src[1], false, "vals", &f->in, &f->vals))
        return -1;
    if (lw_same_partitions(c, "match_replace8", &f->in, &f->out))
        return -1;
    f->imm = (float)lw_clip_scalar(op->rare->value, f->out.dtype);
    return lw_emit(c, &in);
}

/* a and b access the same elements in the same order */
static bool same_ap(const tir_ap_t *a, const tir_ap_t *b)
{
    return a->tensor == b->tensor && a->offset == b->offset && a->ndim == b->ndim &&
           !memcmp(a->step, b->step, sizeof a->step[0] * (size_t)a->ndim) &&
           !memcmp(a->count, b->count, sizeof a->count[0] * (size_t)a->ndim);
}

/* dst = src, a DVE TensorCopy (role: src's name in errors; what: the op) */
static int dve_copy(lower_ctx_t *c, const tir_ap_t *src, const char *role, const char *what)
{
    bir_inst_t cp;
    lw_inst(c, &cp, BIR_TENSOR_COPY, ISA_OP_TENSOR_COPY);
    if (lw_tap(c, &cp, src, false, role, &cp.isa.f->COPY.in) ||
        lw_tap(c, &cp, c->op->dst, true, "dst", &cp.isa.f->COPY.out))
        return -1;
    if (lw_same_partitions(c, what, &cp.isa.f->COPY.in, &cp.isa.f->COPY.out))
        return -1;
    cp.engine = ISA_ENG_DVE;
    return lw_emit(c, &cp);
}

static int lower_select_op(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    /* 1: dst = on_false (nothing to do when on_false is dst itself: NKI
     * tensor_copy_predicated) */
    bool keep_dst = op->nsrc >= 3 && same_ap(op->src[2], op->dst);
    if (keep_dst) {
    } else if (op->nsrc >= 3 && lw_has(op->src[2])) {
        if (dve_copy(c, op->src[2], "on_false", "select"))
            return -1;
    } else if (lower_memset_to(c, op->dst, op->rare->fill, false)) {
        return -1;
    }
    /* 2: dst = pred ? on_true : dst */
    bir_inst_t in;
    lw_inst(c, &in, BIR_COPY_PREDICATED, ISA_OP_COPY_PREDICATED);
    isa_fmt_CPRED_t *f = &in.isa.f->CPRED;
    bool imm = (op->flags & TIR_F_SRC_IMM) != 0;
    if (lw_tap(c, &in, op->src[0], false, "pred", &f->pred) ||
        (!imm && lw_tap(c, &in, op->src[1], false, "on_true", &f->in)) ||
        lw_tap(c, &in, op->dst, true, "dst", &f->out))
        return -1;
    bir_access_t keep = in.acc[in.nacc - 1];
    keep.write = false;
    bir_inst_access(c->m, &in, &keep);
    if (lw_same_partitions(c, "select", &f->pred, &f->out) ||
        (!imm && lw_same_partitions(c, "select", &f->in, &f->out)))
        return -1;
    f->rev_pred = (op->flags & TIR_F_REV0) != 0;
    f->in_is_imm = imm;
    if (imm)
        f->imm = (float)lw_clip_scalar(op->rare->value, lw_dtype(c, op->dst));
    return lw_emit(c, &in);
}

/* dropout with a [P, 1] probability tile (NKI: one drop probability per
 * partition).  The Dropout instruction takes an immediate only (seed 001
 * codegenDropoutMaskInst: addImmValue), so: u = RAND2(0, 1) into the op's
 * scratch, drop = u < prob[p] (TensorScalarPtr), dst = src (TensorCopy,
 * unless dst is src), dst = 0 where drop (CopyPredicated, immediate 0).
 * Element i of partition p is dropped with probability prob[p], as the
 * Dropout instruction drops with its immediate (docs/semantics.md). */
static int lower_dropout_tile(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    if (op->flags & TIR_F_KEEP_RATE)
        return lw_err(c, "keep_rate must be a number (a [P, 1] tile is taken for prob only)");
    const bir_mloc_t *sc = c->m->op_scratch ? &c->m->op_scratch[c->opi] : NULL;
    if (!sc || !sc->bytes)
        return lw_err(c, "internal: dropout with a probability tile has no scratch");
    bir_inst_t in;
    /* u uniform in [0, 1) */
    lw_inst(c, &in, BIR_RAND2, ISA_OP_RAND2);
    isa_tap_t d;
    if (lw_tap(c, &in, op->dst, true, "dst", &d))
        return -1;
    in.nacc = 0;   /* (only the shape of dst: the access is the scratch's) */
    isa_tap_t u = lw_dense_tap(&d, ISA_MAX_FREE_DIMS, ISA_DT_FP32, sc->addr);
    in.isa.f->RAND2.out = u;
    in.isa.f->RAND2.min = lw_f32_bits(0.0f);
    in.isa.f->RAND2.max = lw_f32_bits(1.0f);
    lw_dense_access(c, &in, &u, true);
    in.engine = ISA_ENG_DVE;
    if (lw_emit(c, &in))
        return -1;
    /* drop = u < prob[p] (1.0 / 0.0) */
    lw_inst(c, &in, BIR_TENSOR_SCALAR_PTR, ISA_OP_TENSOR_SCALAR_PTR);
    bir_inst_set_is_stt(c->m, &in, false);
    isa_fmt_TS_t *t = &in.isa.f->TS;
    t->in = t->out = u;
    t->op0 = ISA_ALU_IS_LT;
    t->op1 = ISA_ALU_BYPASS;
    lw_dense_access(c, &in, &u, false);
    lw_dense_access(c, &in, &u, true);
    if (lw_scalar(c, &in, &op->s0, "prob", &t->s0, &t->s0_is_ptr))
        return -1;
    in.engine = ISA_ENG_DVE;
    if (lw_emit(c, &in))
        return -1;
    /* dst = src, then 0 where drop */
    if (!same_ap(op->src[0], op->dst) && dve_copy(c, op->src[0], "src", "dropout"))
        return -1;
    lw_inst(c, &in, BIR_COPY_PREDICATED, ISA_OP_COPY_PREDICATED);
    isa_fmt_CPRED_t *f = &in.isa.f->CPRED;
    if (lw_tap(c, &in, op->dst, true, "dst", &f->out))
        return -1;
    bir_access_t keep = in.acc[in.nacc - 1];
    keep.write = false;
    bir_inst_access(c->m, &in, &keep);
    f->pred = u;
    lw_dense_access(c, &in, &u, false);
    f->in_is_imm = 1;
    f->imm = 0.0f;
    in.engine = ISA_ENG_DVE;
    return lw_emit(c, &in);
}

static int lower_dropout(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    if (op->s0.is_ap)
        return lower_dropout_tile(c);
    double p = op->s0.imm != 0.0 ? op->s0.imm : op->rare->prob;
    if (!(p >= 0.0 && p <= 1.0))
        return lw_err(c, "dropout probability %g is outside [0, 1]", p);
    bir_inst_t in;
    lw_inst(c, &in, BIR_DROPOUT, ISA_OP_DROPOUT);
    isa_fmt_DROP_t *f = &in.isa.f->DROP;
    if (lw_tap(c, &in, op->src[0], false, "src", &f->in) ||
        lw_tap(c, &in, op->dst, true, "dst", &f->out))
        return -1;
    if (lw_same_partitions(c, "dropout", &f->in, &f->out))
        return -1;
    f->prob = (float)p;
    f->is_keep_rate = (op->flags & TIR_F_KEEP_RATE) != 0;
    return lw_emit(c, &in);
}

static int lower_shuffle(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t in;
    lw_inst(c, &in, BIR_STREAM_SHUFFLE, ISA_OP_STREAM_SHUFFLE);
    isa_fmt_SHUF_t *f = &in.isa.f->SHUF;
    if (lw_tap(c, &in, op->src[0], false, "src", &f->in) ||
        lw_tap(c, &in, op->dst, true, "dst", &f->out))
        return -1;
    bir_access_t keep = in.acc[in.nacc - 1];
    keep.write = false;
    bir_inst_access(c->m, &in, &keep);
    uint32_t *m = &f->m0;   /* m0..m31 are consecutive 32-bit members */
    for (int i = 0; i < 32; i++) {
        unsigned v = op->rare->shuffle_mask[i];
        if (v == 255)
            v = ISA_SHUFFLE_KEEP;
        else if (v >= 32)
            return lw_err(c, "shuffle_mask[%d] = %u must be 0..31 or 255 (keep)", i, v);
        m[i] = v;
    }
    return lw_emit(c, &in);
}

/* range_select -> RangeSelect (DVE): bounds and reduce_res as [P,1]
 * pointers; reduce_res absent = the accumulator only (red_out space NONE). */
static int lower_range_select(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t in;
    lw_inst(c, &in, BIR_RANGE_SELECT, ISA_OP_RANGE_SELECT);
    isa_fmt_RSEL_t *f = &in.isa.f->RSEL;
    if (lw_tap(c, &in, op->src[0], false, "on_true_tile", &f->in) ||
        lw_tap(c, &in, op->dst, true, "dst", &f->out) ||
        lw_ptr(c, &in, op->src[1], false, "bound0", &f->bound0) ||
        lw_ptr(c, &in, op->src[2], false, "bound1", &f->bound1))
        return -1;
    if (lw_same_partitions(c, "range_select", &f->in, &f->out))
        return -1;
    f->red_out.space = ISA_SPACE_NONE;
    if (lw_has(op->dst2) &&
        lw_ptr(c, &in, op->dst2, true, "reduce_res", &f->red_out))
        return -1;
    f->cmp0 = (uint32_t)op->cmp;
    f->cmp1 = (uint32_t)op->rare->cmp1;
    f->red_op = (uint32_t)op->reduce_op;
    f->red_cmd = (uint32_t)op->rare->reduce_cmd;
    f->start = (int32_t)op->rare->pat_offset;
    f->fill = (float)op->rare->fill;
    in.engine = ISA_ENG_DVE;
    return lw_emit(c, &in);
}

/* select_reduce -> SelectReduce (DVE): on_false immediate (fp32 bits) or
 * [P,1] pointer; reduce_res as range_select. */
static int lower_select_reduce(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t in;
    lw_inst(c, &in, BIR_SELECT_REDUCE, ISA_OP_SELECT_REDUCE);
    isa_fmt_SELR_t *f = &in.isa.f->SELR;
    uint32_t bits, is_ptr;
    if (lw_tap(c, &in, op->src[0], false, "predicate", &f->pred) ||
        lw_tap(c, &in, op->src[1], false, "on_true", &f->in) ||
        lw_tap(c, &in, op->dst, true, "dst", &f->out) ||
        lw_scalar(c, &in, &op->s0, "on_false", &bits, &is_ptr))
        return -1;
    if (lw_same_partitions(c, "select_reduce", &f->in, &f->out) ||
        lw_same_partitions(c, "select_reduce", &f->pred, &f->out))
        return -1;
    f->red_out.space = ISA_SPACE_NONE;
    if (lw_has(op->dst2) &&
        lw_ptr(c, &in, op->dst2, true, "reduce_res", &f->red_out))
        return -1;
    f->on_false = bits;
    f->on_false_is_ptr = is_ptr;
    f->red_op = (uint32_t)op->reduce_op;
    f->red_cmd = (uint32_t)op->rare->reduce_cmd;
    f->rev_pred = (op->flags & TIR_F_REV0) != 0;
    in.engine = ISA_ENG_DVE;
    return lw_emit(c, &in);
}

int lower_select(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    switch (op->kind) {
    case TIR_MEMSET: return lower_memset_to(c, op->dst, op->rare->value, op->flags & TIR_F_RANDOM);
    case TIR_IOTA: return lower_iota(c);
    case TIR_AFFINE_SELECT: return lower_affine_select(c);
    case TIR_RANGE_SELECT: return lower_range_select(c);
    case TIR_SELECT_REDUCE: return lower_select_reduce(c);
    case TIR_MAX8:
    case TIR_FIND_INDEX8:
    case TIR_MATCH_REPLACE8: return lower_max8_family(c);
    case TIR_SELECT: return lower_select_op(c);
    case TIR_DROPOUT: return lower_dropout(c);
    case TIR_STREAM_SHUFFLE: return lower_shuffle(c);
    default: return lw_err(c, "not a select-family op");
    }
}
