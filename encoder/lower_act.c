/* lower_act.c - the activation pair on the Activation engine.
 *
 *   activation   -> Activation, or ActivationAcc when accumulate is set
 *                   (bir ActivationAccumulationOp); scale immediate or [P,1]
 *                   pointer; bias [P,1] pointer; fused free-axis reduce with
 *                   its reduce command (red_op/red_cmd/red_out)
 *   activate2    -> the same BIR Activation with is_activate2 set (the
 *                   notes' setIsActivate2); codegen emits ISA Activate2:
 *                   func((in op0 imm0) op1 imm1 + bias)
 *
 * and the identity Activation (func copy, no reduce) of tensor_copy and of
 * tensor_scalar with a [P,1] operand on the Activation engine
 * (lw_act_identity, lw_act_tensor_scalar). */
#include "lower.h"

#include <string.h>

static int bind_reduce(lower_ctx_t *c, bir_inst_t *in, uint32_t *red_op, uint32_t *red_cmd,
                       isa_ptr_t *red_out)
{
    const tir_op_t *op = c->op;
    *red_op = (uint32_t)op->reduce_op;
    *red_cmd = (uint32_t)op->rare->reduce_cmd;
    if (op->reduce_op == ISA_ALU_BYPASS) {
        if (lw_has(op->dst2))
            return lw_err(c, "reduce_res given without reduce_op");
        return 0;
    }
    if (!lw_has(op->dst2)) {
        /* NKI: reduce_res=None keeps the result in the accumulator
         * registers (a chain's earlier calls); the sim reads no red_out */
        red_out->space = ISA_SPACE_NONE;
        return 0;
    }
    if (op->rare->reduce_cmd == ISA_REDCMD_IDLE)
        *red_cmd = ISA_REDCMD_RESET_REDUCE;   /* a fused reduce with no command: fresh result */
    return lw_ptr(c, in, op->dst2, true, "reduce_res", red_out);
}

static int bind_bias(lower_ctx_t *c, bir_inst_t *in, isa_ptr_t *bias)
{
    if (!lw_has(c->op->bias)) {
        bias->space = ISA_SPACE_NONE;
        return 0;
    }
    return lw_ptr(c, in, c->op->bias, false, "bias", bias);
}

/* The shared Activation builder (the notes' codegenActivationOp and
 * codegenActivate2 share one): a BIR Activation, ActivationAccumulationOp
 * when accumulating; the activate2 form flips setIsActivate2, from which
 * codegen picks the ISA Activate2 encoding (bir_codegen_isa_op).  Binds
 * in/out; the caller fills the form's scalars, then act_finish. */
static int act_begin(lower_ctx_t *c, bir_inst_t **pin)
{
    const tir_op_t *op = c->op;
    const char *what = tir_op_name(op->kind);
    bool act2 = op->kind == TIR_ACTIVATE2;
    bool acc = op->kind == TIR_ACTIVATION && (op->flags & TIR_F_ACCUMULATE);
    bir_inst_t *in = *pin = lw_inst_new(c, acc ? BIR_ACTIVATION_ACC : BIR_ACTIVATION,
                                        acc ? ISA_OP_ACTIVATION_ACC : ISA_OP_ACTIVATION);
    if (!in)
        return -1;
    if (act2)
        bir_inst_set_is_activate2(c->m, in, true);
    isa_tap_t *src = act2 ? &in->isa.f->ACT2.in : &in->isa.f->ACT.in;
    isa_tap_t *dst = act2 ? &in->isa.f->ACT2.out : &in->isa.f->ACT.out;
    if (lw_tap(c, in, op->src[0], false, "src", src) ||
        lw_tap(c, in, op->dst, true, "dst", dst))
        return -1;
    if (lw_same_partitions(c, what, src, dst))
        return -1;
    if (!act2 && isa_tap_free_elems(src) != isa_tap_free_elems(dst))
        return lw_err(c, "%s: src and dst have different element counts (%llu and %llu)", what,
                      (unsigned long long)isa_tap_free_elems(src),
                      (unsigned long long)isa_tap_free_elems(dst));
    if (acc) {  /* ActivationAcc reads the accumulator it adds into */
        bir_access_t r = in->acc[1];
        r.write = false;
        bir_inst_access(c->m, in, &r);
    }
    return 0;
}

/* func, bias and the fused reduce (both forms), then append. */
static int act_finish(lower_ctx_t *c, bir_inst_t *in)
{
    bool act2 = in->is_activate2;
    isa_fmt_ACT_t *f = &in->isa.f->ACT;
    isa_fmt_ACT2_t *f2 = &in->isa.f->ACT2;
    *(act2 ? &f2->func : &f->func) = (uint32_t)c->op->func;
    if (bind_bias(c, in, act2 ? &f2->bias : &f->bias) ||
        bind_reduce(c, in, act2 ? &f2->red_op : &f->red_op, act2 ? &f2->red_cmd : &f->red_cmd,
                    act2 ? &f2->red_out : &f->red_out))
        return -1;
    return lw_emit(c, in);
}

/* ACT.scale: the fp32 immediate, or a [P,1] pointer riding in its 32 bits */
static int act_scale(lower_ctx_t *c, bir_inst_t *in, const tir_scalar_t *s, const char *role,
                     isa_fmt_ACT_t *f)
{
    uint32_t bits, is_ptr;
    if (lw_scalar(c, in, s, role, &bits, &is_ptr))
        return -1;
    f->scale_is_ptr = is_ptr;
    memcpy(&f->scale, &bits, 4);
    return 0;
}

/* ACT's immediate bias (NKI: a compile-time scalar bias, NeuronCore-v3 on) */
static int act_imm_bias(lower_ctx_t *c, const char *role, double v, isa_fmt_ACT_t *f)
{
    if (!c->t->act_imm_bias)
        return lw_err(c, "%s: a number bias needs NeuronCore-v3 or newer (target trn2, trn3); "
                         "on %s %s must be a [P, 1] tile", role, c->t->name, role);
    f->bias_is_imm = 1;
    f->bias_imm = (float)v;
    return 0;
}

static int lower_activation1(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t *in;
    if (act_begin(c, &in))
        return -1;
    isa_fmt_ACT_t *f = &in->isa.f->ACT;
    if (act_scale(c, in, &op->s0, "scale", f))
        return -1;
    /* a number bias (the front-end keeps a tile's in bias) */
    if (op->s1.imm != 0.0 && act_imm_bias(c, "bias", op->s1.imm, f))
        return -1;
    return act_finish(c, in);
}

int lw_act_identity(lower_ctx_t *c, const lw_act_affine_t *a)
{
    bir_inst_t *in;
    if (act_begin(c, &in))
        return -1;
    isa_fmt_ACT_t *f = &in->isa.f->ACT;
    f->func = ISA_ACTFN_COPY;
    f->bias.space = ISA_SPACE_NONE;
    f->red_out.space = ISA_SPACE_NONE;
    f->red_op = ISA_ALU_BYPASS;
    f->red_cmd = ISA_REDCMD_IDLE;
    if (act_scale(c, in, a->scale, a->scale_role, f))
        return -1;
    if (a->bias && (a->bias->is_ap ? lw_ptr(c, in, a->bias->ap, false, a->bias_role, &f->bias)
                                   : act_imm_bias(c, a->bias_role, a->bias->imm, f)))
        return -1;
    return lw_emit(c, in);
}

/* NKI tensor_scalar on the Scalar engine with a [P,1] operand: the
 * identity Activation's fl32(fl32(in * scale) + bias), two fp32 roundings
 * as NKI's (in op0 operand0) op1 operand1, for the combinations the
 * validator lets through (tir_ts_act_affine; multiply and add commute, so
 * reverse0/reverse1 change nothing):
 *   multiply, add   scale operand0, bias operand1
 *   add             scale 1 (exact), bias operand0
 *   multiply        scale operand0, the immediate bias -0.0: x + -0 = x for
 *                   every x, so a -0 product stays -0 (trn1, without an
 *                   immediate bias, adds the absent bias's +0: -0 -> +0) */
int lw_act_tensor_scalar(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bool mul = op->op0 == ISA_ALU_MULTIPLY;
    tir_scalar_t one = tir_scalar_imm(1.0), neg0 = tir_scalar_imm(-0.0);
    const tir_scalar_t *bias = !mul ? &op->s0
                               : op->op1 == ISA_ALU_ADD ? &op->s1
                               : c->t->act_imm_bias ? &neg0 : NULL;
    lw_act_affine_t a = {mul ? &op->s0 : &one, "operand0", bias, mul ? "operand1" : "operand0"};
    if (!tir_ts_act_affine(op->op0, op->op1))
        return lw_err(c, "LOGIC FAULT: tensor_scalar %s/%s is no Activation affine step",
                      isa_enum_name(ISA_FT_ALU, (unsigned)op->op0),
                      isa_enum_name(ISA_FT_ALU, (unsigned)op->op1));
    return lw_act_identity(c, &a);
}

/* prelu's relu_param in the 24-bit field: a [P,1] pointer packed as addr 18b
 * | dtype 4b | space 2b, or the fp32 value rounded (to nearest, ties to
 * even) to its top 24 bits: 15 mantissa bits (docs/semantics.md) */
static int relu_param(lower_ctx_t *c, bir_inst_t *in, isa_fmt_ACT2_t *f)
{
    const tir_op_t *op = c->op;
    if (lw_has(op->src[1])) {
        isa_ptr_t p;
        if (lw_ptr(c, in, op->src[1], false, "relu_param", &p))
            return -1;
        if (p.addr >= (1u << 18))
            return lw_err(c, "relu_param: address 0x%x does not fit the 18-bit pointer of the "
                          "24-bit relu field", p.addr);
        f->relu_is_ptr = 1;
        f->relu = p.addr | (p.dtype & 0xFu) << 18 | (p.space & 3u) << 22;
        return 0;
    }
    uint32_t b = lw_f32_bits((float)op->rare->value);
    uint32_t r = b >> 8, low = b & 0xFFu;
    if (low > 0x80u || (low == 0x80u && (r & 1u)))
        r++;                       /* the carry may round up into the exponent: still exact */
    f->relu = r & 0xFFFFFFu;
    return 0;
}

static int lower_activate2(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t *in;
    if (act_begin(c, &in))
        return -1;
    isa_fmt_ACT2_t *f = &in->isa.f->ACT2;
    /* imm0/imm1: constants, or [P,1] pointers riding in the 32-bit slots
     * (the notes' SymbolicImmediateValue imm0_ptr/imm1_ptr) */
    uint32_t bits, is_ptr;
    if (lw_scalar(c, in, &op->s0, "imm0", &bits, &is_ptr))
        return -1;
    f->imm0_is_ptr = is_ptr;
    memcpy(&f->imm0, &bits, 4);
    if (lw_scalar(c, in, &op->s1, "imm1", &bits, &is_ptr))
        return -1;
    f->imm1_is_ptr = is_ptr;
    memcpy(&f->imm1, &bits, 4);
    f->op0 = (uint32_t)op->op0;
    f->op1 = (uint32_t)op->op1;
    f->rev0 = (op->flags & TIR_F_REV0) != 0;
    f->rev1 = (op->flags & TIR_F_REV1) != 0;
    if (relu_param(c, in, f))
        return -1;
    return act_finish(c, in);
}

int lower_activation(lower_ctx_t *c)
{
    return c->op->kind == TIR_ACTIVATE2 ? lower_activate2(c) : lower_activation1(c);
}
