/* lower_reg.c - NKI register ops (regalloc.h):
 *
 *   register_move   -> RegSet (immediate) or RegMove (register), on the
 *                      op's engine, or one on every TPB engine when none is
 *                      given (each sequencer keeps its own copy, as the
 *                      notes' TensorLoad on EngineType.ALL); RegAdd for
 *                      the accumulating form (a loop variable's step)
 *   register_store  -> TensorStore on the op's engine (default SP; every
 *                      engine holds the same value)
 * (register_load is load_tensor_to_register: lower_misc.c.) */
#include "lower.h"

static int lower_move(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bool imm = op->rare->reg_src < 0, add = imm && (op->flags & TIR_F_ACCUMULATE);
    for (unsigned k = 0; k < 5; k++) {   /* isa_tpb_engines */
        int eng = isa_tpb_engines[k];
        if (op->engine != ISA_ENG_UNASSIGNED && op->engine != eng)
            continue;
        bir_inst_t in;
        if (add)
            lw_inst(c, &in, BIR_REG_ADD, ISA_OP_REG_ADD);
        else
            lw_inst(c, &in, imm ? BIR_REG_SET : BIR_REG_MOVE,
                    imm ? ISA_OP_REG_SET : ISA_OP_REG_MOVE);
        if (imm) {
            in.isa.f->REG.reg = (uint32_t)op->rare->reg;
            in.isa.f->REG.imm = (uint32_t)op->rare->reg_imm;
        } else {
            in.isa.f->REGMV.reg = (uint32_t)op->rare->reg;
            in.isa.f->REGMV.src = (uint32_t)op->rare->reg_src;
        }
        in.engine = eng;
        if (lw_emit(c, &in))
            return -1;
    }
    return 0;
}

static int lower_store(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t in;
    lw_inst(c, &in, BIR_TENSOR_STORE, ISA_OP_TENSOR_STORE);
    isa_tap_t t;
    if (lw_tap(c, &in, op->dst, true, "dst", &t))
        return -1;
    if (t.nparts != 1 || isa_tap_free_elems(&t) != 1)
        return lw_err(c, "register_store writes one element");
    in.isa.f->TSTORE.dst.addr = t.addr;
    in.isa.f->TSTORE.dst.dtype = t.dtype;
    in.isa.f->TSTORE.dst.space = t.space;
    in.isa.f->TSTORE.part = t.start;
    in.isa.f->TSTORE.reg = (uint32_t)op->rare->reg;
    in.isa.f->TSTORE.count = 1;
    in.engine = op->engine != ISA_ENG_UNASSIGNED ? op->engine : ISA_ENG_SP;
    return lw_emit(c, &in);
}

int lower_reg(lower_ctx_t *c)
{
    return c->op->kind == TIR_REGISTER_MOVE ? lower_move(c) : lower_store(c);
}
