/* dve_sel.c - Vector engine index-range selection: RangeSelect (NKI
 * range_select).  Semantics: docs/semantics.md "RangeSelect"; cost:
 * docs/timing-compute.md.  The fused max reduce folds into this engine's
 * accumulator registers (ctx->acc) per red_cmd, as the Activation engine's
 * fused reduce does. */
#include <string.h>

#include "ops.h"

/* a cmp b in fp32; EQ GE GT LE LT (NE is not a RangeSelect comparison) */
static bool cmp_f(unsigned cmp, float a, float b)
{
    switch (cmp) {
    case ISA_CMP_EQ: return a == b;
    case ISA_CMP_GE: return a >= b;
    case ISA_CMP_GT: return a > b;
    case ISA_CMP_LE: return a <= b;
    case ISA_CMP_LT: return a < b;
    default: return false;
    }
}

static int rsel_check(sim_exec_ctx_t *ctx, const isa_fmt_RSEL_t *f)
{
    if (f->cmp0 > ISA_CMP_LT || f->cmp0 == ISA_CMP_NE)
        return sim_fail(ctx, "cmp0: %u is not a RangeSelect comparison (eq, ge, gt, le, lt)",
                        f->cmp0);
    if (f->cmp1 > ISA_CMP_LT || f->cmp1 == ISA_CMP_NE)
        return sim_fail(ctx, "cmp1: %u is not a RangeSelect comparison (eq, ge, gt, le, lt)",
                        f->cmp1);
    if (f->red_op != ISA_ALU_MAX)
        return sim_fail(ctx, "red_op: RangeSelect reduces with max only, not %u", f->red_op);
    if (f->red_cmd > ISA_REDCMD_LOAD_REDUCE)
        return sim_fail(ctx, "red_cmd: invalid reduce command %u", f->red_cmd);
    if (f->red_cmd == ISA_REDCMD_LOAD_REDUCE && f->red_out.space == ISA_SPACE_NONE)
        return sim_fail(ctx, "red_out: load_reduce reads the accumulator from red_out, "
                        "which is absent");
    return 0;
}

/* Fold the row maximum r into accumulator q per red_cmd; returns it. */
static float fold(sim_exec_ctx_t *ctx, unsigned cmd, unsigned q, float r, const sim_opnd_t *ro,
                  unsigned p)
{
    float *acc = &ctx->acc[q];
    switch (cmd) {
    case ISA_REDCMD_RESET: *acc = sim_val_as_f(sim_alu_identity(ISA_ALU_MAX)); break;
    case ISA_REDCMD_REDUCE: *acc = sim_alu_f(ISA_ALU_MAX, *acc, r); break;
    case ISA_REDCMD_RESET_REDUCE: *acc = r; break;
    case ISA_REDCMD_LOAD_REDUCE:
        *acc = sim_alu_f(ISA_ALU_MAX, num_load_f32(sim_el(ro, p, 0), ro->dtype), r);
        break;
    default: break;
    }
    return *acc;
}

/* out[p, i] = (i + start cmp0 bound0[p]) && (i + start cmp1 bound1[p]) ?
 * in[p, i] : fill, compared in fp32; i = flattened free index. */
static void rsel_rows(sim_exec_ctx_t *ctx, const isa_fmt_RSEL_t *f, sim_opnd_t *o)
{
    bool red = f->red_cmd != ISA_REDCMD_IDLE;
    for (unsigned p = 0; p < o[0].nparts; p++) {
        float b0 = num_load_f32(sim_el(&o[2], p, 0), o[2].dtype);
        float b1 = num_load_f32(sim_el(&o[3], p, 0), o[3].dtype);
        float r = 0.0f;
        for (uint32_t i = 0; i < o[0].nfree; i++) {
            float idx = (float)((int64_t)f->start + i);
            bool keep = cmp_f(f->cmp0, idx, b0) && cmp_f(f->cmp1, idx, b1);
            float y = keep ? num_load_f32(sim_el(&o[0], p, i), o[0].dtype) : f->fill;
            num_store_f32(sim_el(&o[1], p, i), o[1].dtype, y);
            /* the reduce sees the value as stored (a bf16 dst turns the fill into -inf) */
            y = num_load_f32(sim_el(&o[1], p, i), o[1].dtype);
            r = i == 0 ? y : sim_alu_f(ISA_ALU_MAX, r, y);
        }
        if (red) {
            float v = fold(ctx, f->red_cmd, o[0].start + p, r, &o[4], p);
            if (o[4].mem)
                num_store_f32(sim_el(&o[4], p, 0), o[4].dtype, v);
        }
    }
}

static int exec_range_select(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_RSEL_t *f = &d->inst.f.RSEL;
    sim_opnd_t o[5]; /* in, out, bound0, bound1, red_out */
    sim_opnds_none(o, 5);
    int rc = -1;
    if (rsel_check(ctx, f) || sim_opnd_tap(ctx, &o[0], &f->in, "in", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], &f->out, "out", SIM_WR) || sim_same_shape(ctx, &o[1], &o[0]))
        goto done;
    unsigned st = o[0].start, np = o[0].nparts;
    if (sim_opnd_ptr(ctx, &o[2], &f->bound0, st, np, 1, "bound0", SIM_RD) ||
        sim_opnd_ptr(ctx, &o[3], &f->bound1, st, np, 1, "bound1", SIM_RD))
        goto done;
    if (f->red_cmd != ISA_REDCMD_IDLE && f->red_out.space != ISA_SPACE_NONE &&
        sim_opnd_ptr(ctx, &o[4], &f->red_out, st, np, 1, "red_out",
                     f->red_cmd == ISA_REDCMD_LOAD_REDUCE ? SIM_RW : SIM_WR))
        goto done;
    if (!ctx->timing_only)
        rsel_rows(ctx, f, o);
    sim_opnd_mark(&o[1]);
    sim_opnd_mark(&o[4]);
    rc = 0;
done:
    for (unsigned k = 0; k < 5; k++)
        sim_opnd_free(&o[k]);
    return rc;
}

/* COST range_select: max(MIN_II, N), N = elements per partition
 * (hardware-facts.md), plus the DVE issue overhead every DVE op pays. */
static uint64_t cost_range_select(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    return sim_cost_dve(t, sim_tap_n(&d->inst.f.RSEL.in));
}

static const sim_opimpl_t impl_range_select = { exec_range_select, cost_range_select };

const sim_opimpl_t *sim_dve_sel_impl(isa_op_t op)
{
    return op == ISA_OP_RANGE_SELECT ? &impl_range_select : NULL;
}
