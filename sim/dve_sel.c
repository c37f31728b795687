/* dve_sel.c - Vector engine selections with a fused max reduce: RangeSelect
 * (NKI range_select) and SelectReduce (NKI select_reduce).  Semantics:
 * docs/semantics.md "RangeSelect", "SelectReduce"; costs:
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

static int red_check(sim_exec_ctx_t *ctx, const char *op, unsigned red_op, unsigned red_cmd,
                     const isa_ptr_t *red_out)
{
    if (red_op != ISA_ALU_MAX)
        return sim_fail(ctx, "red_op: %s reduces with max only, not %u", op, red_op);
    if (red_cmd > ISA_REDCMD_LOAD_REDUCE)
        return sim_fail(ctx, "red_cmd: invalid reduce command %u", red_cmd);
    if (red_cmd == ISA_REDCMD_LOAD_REDUCE && red_out->space == ISA_SPACE_NONE)
        return sim_fail(ctx, "red_out: load_reduce reads the accumulator from red_out, "
                        "which is absent");
    return 0;
}

/* Resolve red_out (when the reduce is on and it is present) over the
 * partitions of out (per-partition scalars are on the output's partitions,
 * docs/semantics.md "PTR operand"). */
static int red_open(sim_exec_ctx_t *ctx, sim_opnd_t *ro, const isa_ptr_t *red_out,
                    unsigned red_cmd, const sim_opnd_t *out)
{
    if (red_cmd == ISA_REDCMD_IDLE || red_out->space == ISA_SPACE_NONE)
        return 0;
    return sim_opnd_ptr(ctx, ro, red_out, out->start, out->nparts, 1, "red_out",
                        red_cmd == ISA_REDCMD_LOAD_REDUCE ? SIM_RW : SIM_WR);
}

/* Mark the outputs o[out] and o[4] (red_out) written when rc == 0, free
 * the five operands, return rc. */
static int sel_finish(sim_opnd_t o[5], unsigned out, int rc)
{
    if (rc == 0) {
        sim_opnd_mark(&o[out]);
        sim_opnd_mark(&o[4]);
    }
    for (unsigned k = 0; k < 5; k++)
        sim_opnd_free(&o[k]);
    return rc;
}

static int rsel_check(sim_exec_ctx_t *ctx, const isa_fmt_RSEL_t *f)
{
    if (f->cmp0 > ISA_CMP_LT || f->cmp0 == ISA_CMP_NE)
        return sim_fail(ctx, "cmp0: %u is not a RangeSelect comparison (eq, ge, gt, le, lt)",
                        f->cmp0);
    if (f->cmp1 > ISA_CMP_LT || f->cmp1 == ISA_CMP_NE)
        return sim_fail(ctx, "cmp1: %u is not a RangeSelect comparison (eq, ge, gt, le, lt)",
                        f->cmp1);
    return red_check(ctx, "RangeSelect", f->red_op, f->red_cmd, &f->red_out);
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

/* Fold row max r of partition p into its accumulator and red_out. */
static void red_row(sim_exec_ctx_t *ctx, unsigned cmd, const sim_opnd_t *in, unsigned p, float r,
                    const sim_opnd_t *ro)
{
    if (cmd == ISA_REDCMD_IDLE)
        return;
    float v = fold(ctx, cmd, in->start + p, r, ro, p);
    if (ro->mem)
        num_store_f32(sim_el(ro, p, 0), ro->dtype, v);
}

/* out[p, i] = (i + start cmp0 bound0[p]) && (i + start cmp1 bound1[p]) ?
 * in[p, i] : fill, compared in fp32; i = flattened free index. */
static void rsel_rows(sim_exec_ctx_t *ctx, const isa_fmt_RSEL_t *f, sim_opnd_t *o)
{
    for (unsigned p = 0; p < o[0].nparts; p++) {
        float b0 = num_load_f32(sim_el(&o[2], p, 0), o[2].dtype);
        float b1 = num_load_f32(sim_el(&o[3], p, 0), o[3].dtype);
        float r = 0.0f;
        for (uint32_t i = 0; i < o[0].nfree; i++) {
            float idx = (float)((int64_t)f->start + i);
            bool keep = cmp_f(f->cmp0, idx, b0) && cmp_f(f->cmp1, idx, b1);
            float y = keep ? num_load_f32(sim_el(&o[0], p, i), o[0].dtype) : f->fill;
            num_store_f32(sim_el(&o[1], p, i), o[1].dtype, y);
            /* the reduce sees the fp32 value, not out's rounding: NKI's
             * note has a bf16 out's fill become -inf while an fp32
             * reduce_res holds FP32_MIN ("-INF - FP32_MIN = -INF") */
            r = i == 0 ? y : sim_alu_f(ISA_ALU_MAX, r, y);
        }
        red_row(ctx, f->red_cmd, &o[0], p, r, &o[4]);
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
    unsigned st = o[1].start, np = o[1].nparts;   /* out's partitions */
    if (sim_opnd_ptr(ctx, &o[2], &f->bound0, st, np, 1, "bound0", SIM_RD) ||
        sim_opnd_ptr(ctx, &o[3], &f->bound1, st, np, 1, "bound1", SIM_RD))
        goto done;
    if (red_open(ctx, &o[4], &f->red_out, f->red_cmd, &o[1]))
        goto done;
    if (!ctx->timing_only)
        rsel_rows(ctx, f, o);
    rc = 0;
done:
    return sel_finish(o, 1, rc);
}


/* out = (pred != 0) != rev ? in : on_false (immediate or [P,1]); pred
 * read as fp32 (NaN counts as true, as CopyPredicated). */
static void selr_rows(sim_exec_ctx_t *ctx, const isa_fmt_SELR_t *f, sim_opnd_t *o)
{
    for (unsigned p = 0; p < o[1].nparts; p++) {
        float of = f->on_false_is_ptr ? num_load_f32(sim_el(&o[3], p, 0), o[3].dtype)
                                      : sim_f32_from_bits(f->on_false);
        float r = 0.0f;
        for (uint32_t i = 0; i < o[1].nfree; i++) {
            bool t = num_load_f32(sim_el(&o[0], p, i), o[0].dtype) != 0.0f;
            if (t != (bool)f->rev_pred)
                sim_copy_elem(&o[1], p, i, &o[2], p, i);
            else
                num_store_f32(sim_el(&o[2], p, i), o[2].dtype, of);
            float y = num_load_f32(sim_el(&o[2], p, i), o[2].dtype);
            r = i == 0 ? y : sim_alu_f(ISA_ALU_MAX, r, y);
        }
        red_row(ctx, f->red_cmd, &o[1], p, r, &o[4]);
    }
}

static int exec_select_reduce(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_SELR_t *f = &d->inst.f.SELR;
    sim_opnd_t o[5]; /* pred, in, out, on_false, red_out */
    sim_opnds_none(o, 5);
    int rc = -1;
    if (red_check(ctx, "SelectReduce", f->red_op, f->red_cmd, &f->red_out) ||
        sim_opnd_tap(ctx, &o[0], &f->pred, "pred", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], &f->in, "in", SIM_RD) ||
        sim_opnd_tap(ctx, &o[2], &f->out, "out", SIM_WR) ||
        sim_same_shape(ctx, &o[2], &o[1]) || sim_same_shape(ctx, &o[0], &o[1]))
        goto done;
    if (o[0].space == ISA_SPACE_PSUM && o[1].space == ISA_SPACE_PSUM) {
        sim_fail(ctx, "in: SelectReduce cannot read in and pred both from psum");
        goto done;
    }
    isa_ptr_t op = sim_ptr_from_bits(f->on_false);
    if (f->on_false_is_ptr &&
        sim_opnd_ptr(ctx, &o[3], &op, o[2].start, o[2].nparts, 1, "on_false", SIM_RD))
        goto done;
    if (red_open(ctx, &o[4], &f->red_out, f->red_cmd, &o[2]))
        goto done;
    if (!ctx->timing_only)
        selr_rows(ctx, f, o);
    rc = 0;
done:
    return sel_finish(o, 2, rc);
}

/* COST range_select: max(MIN_II, N), N = elements per partition
 * (hardware-facts.md), plus the DVE issue overhead every DVE op pays.
 * select_reduce has no published figure (hardware-facts "–"): derived the
 * same way, one element per lane-cycle. */
static uint64_t cost_sel(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    const isa_tap_t *in = d->inst.op == ISA_OP_RANGE_SELECT ? &d->inst.f.RSEL.in
                                                            : &d->inst.f.SELR.in;
    return sim_cost_dve(t, sim_tap_n(in));
}

static const sim_opimpl_t impl_range_select = { exec_range_select, cost_sel };
static const sim_opimpl_t impl_select_reduce = { exec_select_reduce, cost_sel };

const sim_opimpl_t *sim_dve_sel_impl(isa_op_t op)
{
    switch (op) {
    case ISA_OP_RANGE_SELECT: return &impl_range_select;
    case ISA_OP_SELECT_REDUCE: return &impl_select_reduce;
    default: return NULL;
    }
}
