/* tstore.c - TensorStore (NKI register_store): sequencer registers ->
 * SBUF/PSUM elements of one partition, on whichever engine runs it.  A
 * 32-bit integer element takes the register's bits; a narrower integer
 * wraps the int32 value, a float dtype gets the int32 value converted.  Semantics:
 * docs/semantics.md "Sequencer registers". */
#include "ops.h"

static int exec_tensor_store(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_TSTORE_t *f = &d->inst.f.TSTORE;
    sim_opnd_t o;
    if (f->count < 1 || f->reg + f->count > ISA_NUM_REGS)
        return sim_fail(ctx, "reg/count: registers %u..%u outside 0..%d", f->reg,
                        f->reg + f->count - 1, ISA_NUM_REGS - 1);
    if (f->part >= ISA_NUM_PARTITIONS)
        return sim_fail(ctx, "part: partition %u outside 0..127", f->part);
    if (sim_opnd_ptr(ctx, &o, &f->dst, f->part, 1, f->count, "dst", SIM_WR))
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

static uint64_t cost_tensor_store(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    (void)d;
    return t->min_ii; /* as TensorLoad (~64 cycles, ARCH2) */
}

static const sim_opimpl_t impl_tstore = { exec_tensor_store, cost_tensor_store };

const sim_opimpl_t *sim_tstore_impl(isa_op_t op)
{
    return op == ISA_OP_TENSOR_STORE ? &impl_tstore : NULL;
}
