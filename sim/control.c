/* control.c - sequencer control flow: Halt, Call, Return, Jump, BranchCmp,
 * RegSet, RegAdd.  Targets are bundle indices of the same stream, mapped to
 * instruction indices through isa_stream_t.pc_to_index (a target on a
 * prefix bundle lands on the instruction the prefix extends).  TensorLoad
 * is a compute-style op implemented with the op table (sim_opimpl). */
#include "sim_int.h"

#include <stdint.h>

static int target_index(sim_core_t *c, sim_engine_t *e, uint32_t target, size_t *out,
                        tpb_err_t *err)
{
    if (target >= e->stream.nbundles)
        return sim_inst_errf(err, c, e, e->idx,
                             "target %u is outside the stream (%zu bundles)", target,
                             e->stream.nbundles);
    *out = e->stream.pc_to_index[target];
    return 0;
}

static int check_reg(sim_core_t *c, sim_engine_t *e, uint32_t reg, tpb_err_t *err)
{
    if (reg >= ISA_NUM_REGS)
        return sim_inst_errf(err, c, e, e->idx, "register r%u out of range (0..%d)", reg,
                             ISA_NUM_REGS - 1);
    return 0;
}

int sim_control_exec(sim_t *s, sim_core_t *c, sim_engine_t *e, const isa_decoded_t *d,
                     size_t *next, tpb_err_t *err)
{
    (void)s;
    const isa_inst_t *in = &d->inst;
    switch (in->op) {
    case ISA_OP_HALT:
        *next = SIZE_MAX;
        return 0;
    case ISA_OP_JUMP:
        return target_index(c, e, in->f.CALL.target, next, err);
    case ISA_OP_CALL:
        if (e->call_depth >= SIM_CALL_DEPTH)
            return sim_inst_errf(err, c, e, e->idx, "call stack overflow (depth %d)",
                                 SIM_CALL_DEPTH);
        if (target_index(c, e, in->f.CALL.target, next, err) != 0)
            return -1;
        e->call_stack[e->call_depth++] = (uint32_t)(e->idx + 1);
        return 0;
    case ISA_OP_RETURN:
        /* Return with an empty call stack ends the engine's program. */
        *next = e->call_depth ? e->call_stack[--e->call_depth] : SIZE_MAX;
        return 0;
    case ISA_OP_BRANCH_CMP:
        if (check_reg(c, e, in->f.BR.reg, err) != 0)
            return -1;
        if (isa_cmp_holds(in->f.BR.cmp, (int32_t)e->regs[in->f.BR.reg], (int32_t)in->f.BR.imm))
            return target_index(c, e, in->f.BR.target, next, err);
        return 0;
    case ISA_OP_REG_SET:
        if (check_reg(c, e, in->f.REG.reg, err) != 0)
            return -1;
        e->regs[in->f.REG.reg] = (uint32_t)in->f.REG.imm;
        return 0;
    case ISA_OP_REG_ADD:
        if (check_reg(c, e, in->f.REG.reg, err) != 0)
            return -1;
        e->regs[in->f.REG.reg] += (uint32_t)in->f.REG.imm;
        return 0;
    case ISA_OP_REG_MOVE:
        if (check_reg(c, e, in->f.REGMV.reg, err) != 0 || check_reg(c, e, in->f.REGMV.src, err) != 0)
            return -1;
        e->regs[in->f.REGMV.reg] = e->regs[in->f.REGMV.src];
        return 0;
    default:
        return sim_inst_errf(err, c, e, e->idx, "not a control instruction");
    }
}
