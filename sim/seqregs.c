/* seqregs.c - the sequencer-register opcodes that touch memory, on
 * whichever engine runs them: TensorLoad (NKI load_tensor_to_register /
 * register_load: SBUF/PSUM elements of one partition -> registers reg..)
 * and TensorStore (NKI register_store: registers -> elements).  TensorLoad
 * reads the elements as integers; TensorStore writes a 32-bit integer
 * element's bits, wraps the int32 value into a narrower integer and
 * converts it for a float dtype.  Semantics: docs/semantics.md "Sequencer
 * registers". */
#include "ops.h"

/* The count elements of partition part at ptr, as registers reg.. */
static int reg_operand(sim_exec_ctx_t *ctx, sim_opnd_t *o, const isa_ptr_t *ptr, unsigned part,
                       unsigned reg, unsigned count, const char *name, sim_access_t acc)
{
    if (count < 1 || reg + count > ISA_NUM_REGS)
        return sim_fail(ctx, "reg/count: registers %u..%u outside 0..%d", reg, reg + count - 1,
                        ISA_NUM_REGS - 1);
    if (part >= ISA_NUM_PARTITIONS)
        return sim_fail(ctx, "part: partition %u outside 0..127", part);
    return sim_opnd_ptr(ctx, o, ptr, part, 1, count, name, acc);
}

static int exec_tensor_load(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_TLOAD_t *f = &d->inst.f.TLOAD;
    sim_opnd_t o;
    if (reg_operand(ctx, &o, &f->src, f->part, f->reg, f->count, "src", SIM_RD))
        return -1;
    if (!ctx->timing_only)
        for (unsigned i = 0; i < f->count; i++)
            ctx->regs[f->reg + i] = (uint32_t)num_load_i64(sim_el(&o, 0, i), o.dtype);
    sim_opnd_free(&o);
    return 0;
}

static int exec_tensor_store(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_TSTORE_t *f = &d->inst.f.TSTORE;
    sim_opnd_t o;
    if (reg_operand(ctx, &o, &f->dst, f->part, f->reg, f->count, "dst", SIM_WR))
        return -1;
    if (!ctx->timing_only)
        for (unsigned i = 0; i < f->count; i++) {
            uint32_t v = ctx->regs[f->reg + i];
            if (isa_dtype_kind(o.dtype) == ISA_DK_F)
                num_store_f32(sim_el(&o, 0, i), o.dtype, (float)(int32_t)v);
            else if (o.esize == 4)
                memcpy(sim_el(&o, 0, i), &v, 4);
            else
                num_store_i64_wrap(sim_el(&o, 0, i), o.dtype, (int32_t)v);
        }
    sim_opnd_mark(&o);
    sim_opnd_free(&o);
    return 0;
}

static uint64_t cost_reg_mem(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    (void)d;
    return t->min_ii; /* like ActReadAccumulator (~64 cycles, ARCH2) */
}

static const sim_opimpl_t impl_tload = { exec_tensor_load, cost_reg_mem };
static const sim_opimpl_t impl_tstore = { exec_tensor_store, cost_reg_mem };

const sim_opimpl_t *sim_seqregs_impl(isa_op_t op)
{
    switch (op) {
    case ISA_OP_TENSOR_LOAD: return &impl_tload;
    case ISA_OP_TENSOR_STORE: return &impl_tstore;
    default: return NULL;
    }
}
