/* lower_tensor.c - the tensor-tensor / tensor-scalar family.
 *
 *   tensor_tensor         -> TensorTensor (TensorTensorBitVec for bitwise
 *                            ops on integer data, DVE only)
 *   tensor_scalar         -> the shared tensor-scalar emitter; on the
 *                            Activation engine with a [P,1] operand the
 *                            identity Activation's scale / bias
 *                            (lw_act_tensor_scalar, lower_act.c)
 *   scalar_tensor_tensor  -> BIR TensorScalarPtr with is_stt set (the
 *                            notes' set_is_scalar_tensor_tensor); codegen
 *                            emits ISA ScalarTensorTensor
 *   tensor_copy           -> TensorCopy
 *   tensor_tensor_scan    -> TensorTensorScan
 *   quantize_mx           -> QuantizeMX
 *
 * The shared emitter (lw_tensor_scalar) is the one place a tensor-scalar
 * instruction is built: plain TensorScalar for immediates; TensorScalarPtr
 * when a scalar is a [P,1] pointer or when affine predicates guard the lanes
 * (a PredExt prefix carries offset/cm/steps/cmp and the fill value written to
 * the lanes whose predicate is false).  affine_select on DVE uses it too. */
#include "lower.h"

#include <string.h>

static int same_shape(lower_ctx_t *c, const char *what, const isa_tap_t *a, const isa_tap_t *b)
{
    if (lw_same_partitions(c, what, a, b))
        return -1;
    if (isa_tap_free_elems(a) != isa_tap_free_elems(b))
        return lw_err(c, "%s: operands have %llu and %llu elements", what,
                      (unsigned long long)isa_tap_free_elems(a),
                      (unsigned long long)isa_tap_free_elems(b));
    return 0;
}

/* The notes' getTensorScalarPtr instruction: a BIR TensorScalarPtr; stt
 * flips set_is_scalar_tensor_tensor, from which codegen picks the ISA
 * ScalarTensorTensor encoding (bir_codegen_isa_op). */
static bir_inst_t *ts_ptr_inst(lower_ctx_t *c, bool stt)
{
    bir_inst_t *in = lw_inst_new(c, BIR_TENSOR_SCALAR_PTR, ISA_OP_TENSOR_SCALAR_PTR);
    if (in)
        bir_inst_set_is_stt(c->m, in, stt);
    return in;
}

int lw_tensor_scalar(lower_ctx_t *c, const lw_ts_args_t *a)
{
    bool ptr = a->s0->is_ap || (a->s1 && a->s1->is_ap) || a->pred;
    bir_inst_t *in = ptr ? ts_ptr_inst(c, false)
                         : lw_inst_new(c, BIR_TENSOR_SCALAR, ISA_OP_TENSOR_SCALAR);
    if (!in)
        return -1;
    isa_fmt_TS_t *f = &in->isa.f->TS;
    /* a predicate is evaluated over out's dims: out unmerged, as the steps */
    unsigned mapped;
    if (lw_tap(c, in, a->in, false, "src", &f->in) ||
        lw_tap_axes(c, in, a->out, true, "dst", a->pred ? 0x2Au : 0, &f->out, &mapped))
        return -1;
    if (same_shape(c, "tensor_scalar", &f->in, &f->out))
        return -1;
    if (a->pred && a->pred->keep) {   /* unselected lanes keep dst: it is read too */
        bir_access_t keep = in->acc[in->nacc - 1];
        keep.write = false;
        bir_inst_access(c->m, in, &keep);
    }
    if (a->s1 && a->s1->is_ap && a->op1 == ISA_ALU_BYPASS)
        return lw_err(c, "LOGIC FAULT, TSC mode must have op1 set!");
    f->op0 = (uint32_t)a->op0;
    f->op1 = (uint32_t)a->op1;
    f->rev0 = a->rev0;
    f->rev1 = a->rev1;
    if (lw_scalar_for(c, in, a->s0, "operand0", a->op0, &f->s0, &f->s0_is_ptr))
        return -1;
    if (c->op->kind == TIR_TENSOR_SCALAR && c->op->rare->s0_reg >= 0 && a->s0 == &c->op->s0) {
        /* TensorScalarGEP (seed 001): the scalar is fetched at the pointer
         * plus a register-held element offset, so any element of the
         * operand's rows may be read: record them all */
        tir_tensor_t vt;   /* a dtype view: rows of its elements */
        const tir_tensor_t *t = tir_ap_tensor(lw_tensor(c, a->s0->ap), a->s0->ap, &vt);
        tir_ap_t rows = *a->s0->ap;
        int64_t row = tir_tile_row(t);
        rows.offset -= rows.offset % row;
        rows.ndim = 2;
        rows.step[0] = row, rows.count[0] = a->s0->ap->count[0];
        rows.step[1] = 1, rows.count[1] = row;
        isa_tap_t whole;
        if (lw_tap(c, in, &rows, false, "operand0", &whole))
            return -1;
        f->s0_reg_en = 1;
        f->s0_reg = (uint32_t)c->op->rare->s0_reg;
    }
    if (a->s1 && a->op1 != ISA_ALU_BYPASS &&
        lw_scalar_for(c, in, a->s1, "operand1", a->op1, &f->s1, &f->s1_is_ptr))
        return -1;
    if (a->pred) {
        bir_rare_t *r = bir_inst_rare(c->m, in);
        if (!r)
            return lw_err(c, "out of memory");
        in->has_pred = true;
        r->pred = *a->pred;
        /* lanes whose predicate fails keep the fill value: dst is fully written */
        if (a->npred > ISA_MAX_PREDEXT)
            return lw_err(c, "%d predicates on one instruction (at most %d)", a->npred,
                          ISA_MAX_PREDEXT);
        for (int q = 1; q < a->npred; q++) {   /* ANDed: one more PredExt each */
            const isa_fmt_PREDEXT_t *p = &a->pred[q];
            r->pred_more[q - 1] = (bir_pred_t){(int32_t)p->offset, (int16_t)p->cm,
                                               {(int16_t)p->step0, (int16_t)p->step1,
                                                (int16_t)p->step2, (int16_t)p->step3},
                                               (uint8_t)p->cmp, (uint8_t)p->rev_pred};
        }
        r->npred_more = (uint8_t)(a->npred > 1 ? a->npred - 1 : 0);
    }
    return lw_emit(c, in);
}

static int lower_tt(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t *in = lw_inst_new(c, BIR_TENSOR_TENSOR, ISA_OP_TENSOR_TENSOR);
    if (!in)
        return -1;
    isa_fmt_TT_t *f = &in->isa.f->TT;
    if (lw_tap(c, in, op->src[0], false, "in0", &f->in0) ||
        lw_tap(c, in, op->src[1], false, "in1", &f->in1) ||
        lw_tap(c, in, op->dst, true, "dst", &f->out))
        return -1;
    if (same_shape(c, "tensor_tensor", &f->in0, &f->out) ||
        same_shape(c, "tensor_tensor", &f->in1, &f->out))
        return -1;
    f->op = (uint32_t)op->op0;
    bool intdata = isa_dtype_kind(f->in0.dtype) != ISA_DK_F && isa_dtype_kind(f->in1.dtype) != ISA_DK_F;
    if (isa_alu_is_bitwise((unsigned)op->op0) && intdata &&
        (op->engine == ISA_ENG_UNASSIGNED || op->engine == ISA_ENG_DVE)) {
        /* same body, the bit-vector opcode (L2 81 instead of 65) */
        in->opc = BIR_TENSOR_TENSOR;
        in->isa.op = ISA_OP_TENSOR_TENSOR_BITVEC;
        in->isa.l2 = isa_ops[ISA_OP_TENSOR_TENSOR_BITVEC].l2;
        in->engines = isa_ops[ISA_OP_TENSOR_TENSOR_BITVEC].engines;
    }
    return lw_emit(c, in);
}

static int lower_stt(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t *in = ts_ptr_inst(c, true);
    if (!in)
        return -1;
    isa_fmt_STT_t *f = &in->isa.f->STT;
    if (lw_tap(c, in, op->src[0], false, "in0", &f->in0) ||
        lw_tap(c, in, op->src[1], false, "in1", &f->in1) ||
        lw_tap(c, in, op->dst, true, "dst", &f->out))
        return -1;
    if (same_shape(c, "scalar_tensor_tensor", &f->in0, &f->out) ||
        same_shape(c, "scalar_tensor_tensor", &f->in1, &f->out))
        return -1;
    f->op0 = (uint32_t)op->op0;
    f->op1 = (uint32_t)op->op1;
    f->rev0 = !!(op->flags & TIR_F_REV0);
    if (lw_scalar_for(c, in, &op->s0, "scalar", op->op0, &f->s0, &f->s0_is_ptr))
        return -1;
    return lw_emit(c, in);
}

/* src -> dst operands of a copy, same shape. */
static int copy_operands(lower_ctx_t *c, bir_inst_t *in, isa_tap_t *src, isa_tap_t *dst)
{
    if (lw_tap(c, in, c->op->src[0], false, "src", src) ||
        lw_tap(c, in, c->op->dst, true, "dst", dst))
        return -1;
    return same_shape(c, "tensorcopy", src, dst);
}

static bool is_float_dtype(unsigned dt)
{
    return isa_dtype_kind(dt) == ISA_DK_F;
}

/* generateCopyAct: a float copy on the Activation engine is an identity
 * Activation (func copy, scale 1, no bias, no reduce), as the notes lower it.
 * Integer copies keep TensorCopy (the Activation datapath is floating point). */
static int lower_copy_act(lower_ctx_t *c, bool *done)
{
    const tir_op_t *op = c->op;
    *done = false;
    if (op->engine != ISA_ENG_ACT || !lw_tensor(c, op->src[0]) || !lw_tensor(c, op->dst) ||
        !is_float_dtype(lw_dtype(c, op->src[0])) || !is_float_dtype(lw_dtype(c, op->dst)))
        return 0;
    *done = true;
    tir_scalar_t one = tir_scalar_imm(1.0);
    lw_act_affine_t a = {&one, "scale", NULL, NULL};
    return lw_act_identity(c, &a);
}

/* NKI mask= as PredExts (one per predicate, ANDed) that keep dst where the
 * mask fails; returns how many (-1 on error) */
static int lw_mask_preds(lower_ctx_t *c, isa_fmt_PREDEXT_t p[TIR_MAX_MASK_PREDS])
{
    const tir_op_t *op = c->op;
    if (op->rare->nmask_more < 0 || op->rare->nmask_more >= TIR_MAX_MASK_PREDS)
        return lw_err(c, "mask: %d predicates (at most %d)", op->rare->nmask_more + 1,
                      TIR_MAX_MASK_PREDS);
    if (lw_pattern_pred(c, &p[0]))
        return -1;
    for (int q = 0; q < op->rare->nmask_more; q++)
        if (lw_pred_of(c, &op->rare->mask_more[q], &p[q + 1]))
            return -1;
    for (int q = 0; q <= op->rare->nmask_more; q++)
        p[q].keep = 1;
    return op->rare->nmask_more + 1;
}

static int lower_copy(lower_ctx_t *c)
{
    if (c->op->flags & TIR_F_MASK) {   /* a masked copy: TensorScalarPtr bypass + PredExt */
        isa_fmt_PREDEXT_t p[TIR_MAX_MASK_PREDS];
        tir_scalar_t zero = tir_scalar_imm(0.0);
        int n = lw_mask_preds(c, p);
        if (n < 0)
            return -1;
        lw_ts_args_t a = {c->op->src[0], c->op->dst, ISA_ALU_BYPASS, ISA_ALU_BYPASS, &zero,
                          NULL, false, false, p, n};
        return lw_tensor_scalar(c, &a);
    }
    bool done;
    if (lower_copy_act(c, &done))
        return -1;
    if (done)
        return 0;
    bir_inst_t *in = lw_inst_new(c, BIR_TENSOR_COPY, ISA_OP_TENSOR_COPY);
    if (!in)
        return -1;
    isa_fmt_COPY_t *f = &in->isa.f->COPY;
    if (copy_operands(c, in, &f->in, &f->out))
        return -1;
    return lw_emit(c, in);
}

static int lower_scan(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t *in = lw_inst_new(c, BIR_TENSOR_SCAN, ISA_OP_TENSOR_TENSOR_SCAN);
    if (!in)
        return -1;
    isa_fmt_SCAN_t *f = &in->isa.f->SCAN;
    if (lw_tap(c, in, op->src[0], false, "in0", &f->in0) ||
        lw_tap(c, in, op->src[1], false, "in1", &f->in1) ||
        lw_tap(c, in, op->dst, true, "dst", &f->out))
        return -1;
    if (same_shape(c, "tensor_tensor_scan", &f->in0, &f->out) ||
        same_shape(c, "tensor_tensor_scan", &f->in1, &f->out))
        return -1;
    f->op0 = (uint32_t)op->op0;
    f->op1 = (uint32_t)op->op1;
    f->rev0 = (op->flags & TIR_F_REV0) != 0;
    f->rev1 = (op->flags & TIR_F_REV1) != 0;
    if (lw_scalar(c, in, &op->s0, "initial", &f->init, &f->init_is_ptr))
        return -1;
    return lw_emit(c, in);
}

static int lower_quantize(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t *in = lw_inst_new(c, BIR_QUANTIZE_MX, ISA_OP_QUANTIZE_MX);
    if (!in)
        return -1;
    isa_fmt_QMX_t *f = &in->isa.f->QMX;
    if (lw_tap(c, in, op->src[0], false, "src", &f->in) ||
        lw_tap(c, in, op->dst, true, "dst", &f->out) ||
        lw_tap(c, in, op->dst2, true, "scale", &f->scale))
        return -1;
    if (!isa_mx_scale_dtype(f->scale.dtype))
        return lw_err(c, "quantize_mx scale output must be float8_e8m0fnu or uint8 (E8M0)");
    if (isa_dtype_kind(f->out.dtype) == ISA_DK_X &&
        lw_mx_quad_scales(c, &f->out, &f->scale, "quantize_mx dst", "quantize_mx scale"))
        return -1;
    return lw_emit(c, in);
}

int lower_tensor(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    switch (op->kind) {
    case TIR_TENSOR_TENSOR: return lower_tt(c);
    case TIR_TENSOR_SCALAR: {
        /* the Activation engine takes a [P,1] operand as its scale / bias */
        if (op->engine == ISA_ENG_ACT && tir_ts_has_ptr(op))
            return lw_act_tensor_scalar(c);
        isa_fmt_PREDEXT_t p[TIR_MAX_MASK_PREDS];
        int n = (op->flags & TIR_F_MASK) ? lw_mask_preds(c, p) : 0;
        if (n < 0)
            return -1;
        lw_ts_args_t a = {op->src[0], op->dst, op->op0, op->op1, &op->s0, &op->s1,
                          !!(op->flags & TIR_F_REV0), !!(op->flags & TIR_F_REV1),
                          n ? p : NULL, n};
        return lw_tensor_scalar(c, &a);
    }
    case TIR_SCALAR_TENSOR_TENSOR: return lower_stt(c);
    case TIR_TENSOR_COPY: return lower_copy(c);
    case TIR_TENSOR_TENSOR_SCAN: return lower_scan(c);
    case TIR_QUANTIZE_MX: return lower_quantize(c);
    default: return lw_err(c, "not a tensor-family op");
    }
}
