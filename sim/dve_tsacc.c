/* dve_tsacc.c - Vector engine tensor-scalar ops on the accumulator
 * registers: TensorScalarCacheCumulative (NKI tensor_scalar_cumulative),
 * TensorScalarReduce (NKI tensor_scalar_reduce) and Exponential (NKI
 * exponential).  Semantics: docs/semantics.md "TensorScalarCacheCumulative",
 * "TensorScalarReduce", "Exponential";
 * costs: docs/timing-compute.md.  Both read and write this engine's
 * accumulator registers (ctx->acc, one per partition), shared with
 * RangeSelect and SelectReduce. */
#include <math.h>

#include "ops.h"

static bool arith(unsigned op)
{
    return op != ISA_ALU_BYPASS && sim_alu_valid(op) && !sim_alu_is_bitwise(op);
}

static int exp_check(sim_exec_ctx_t *ctx, const isa_fmt_TSACC_t *f)
{
    if (f->op0 != ISA_ALU_SUBTRACT || f->op1 != ISA_ALU_ADD || f->rev0 || f->negate)
        return sim_fail(ctx, "op0: Exponential is exp(in - s0) summed with add "
                        "(op0 subtract, op1 add, no rev0/negate)");
    if (f->red_cmd == ISA_REDCMD_RESET || f->red_cmd > ISA_REDCMD_LOAD_REDUCE)
        return sim_fail(ctx, "red_cmd: %u (idle, reduce, reset_reduce or load_reduce)",
                        f->red_cmd);
    return 0;
}

static int tsacc_check(sim_exec_ctx_t *ctx, const isa_fmt_TSACC_t *f, bool cum)
{
    if (!arith(f->op0))
        return sim_fail(ctx, "op0: %u is not an arithmetic ALU op", f->op0);
    bool ok1 = f->op1 == ISA_ALU_ADD || f->op1 == ISA_ALU_MULTIPLY || f->op1 == ISA_ALU_MAX ||
               f->op1 == ISA_ALU_MIN || (cum && f->op1 == ISA_ALU_SUBTRACT);
    if (!ok1)
        return sim_fail(ctx, "op1: %u is not a %s op", f->op1,
                        cum ? "cumulative (add, subtract, mult, max, min)"
                            : "reduce (add, mult, max, min)");
    if (f->red_cmd != ISA_REDCMD_RESET_REDUCE && f->red_cmd != ISA_REDCMD_REDUCE &&
        f->red_cmd != ISA_REDCMD_LOAD_REDUCE)
        return sim_fail(ctx, "red_cmd: %u (reset_reduce, reduce or load_reduce)", f->red_cmd);
    if (cum && (f->negate || f->red_out.space != ISA_SPACE_NONE))
        return sim_fail(ctx, "red_out: TensorScalarCacheCumulative has no reduce output");
    return 0;
}

/* the scalar of partition p: immediate fp32 bits or the [P,1] pointer o */
static float scal(uint32_t bits, uint32_t is_ptr, const sim_opnd_t *o, unsigned p)
{
    return is_ptr ? num_load_f32(sim_el(o, p, 0), o->dtype) : sim_f32_from_bits(bits);
}

/* x op0 s0, or s0 op0 x when rev0 */
static float op0_of(const isa_fmt_TSACC_t *f, float x, float s)
{
    return sim_alu_f_rev(f->op0, x, s, f->rev0);
}

/* Exponential: out = exp(in - s0); unless idle, the accumulator (reset: 0,
 * load: s1) += each out element as stored, in order (the pseudo-code). */
static void exp_rows(sim_exec_ctx_t *ctx, const isa_fmt_TSACC_t *f, sim_opnd_t *o)
{
    bool red = f->red_cmd != ISA_REDCMD_IDLE;
    for (unsigned p = 0; p < o[0].nparts; p++) {
        float s0 = scal(f->s0, f->s0_is_ptr, &o[2], p);
        float *acc = &ctx->acc[o[0].start + p];
        float r = f->red_cmd == ISA_REDCMD_REDUCE ? *acc
                  : f->red_cmd == ISA_REDCMD_LOAD_REDUCE ? scal(f->s1, f->s1_is_ptr, &o[3], p)
                  : 0.0f;
        for (uint32_t i = 0; i < o[0].nfree; i++) {
            float x = num_load_f32(sim_el(&o[0], p, i), o[0].dtype);
            num_store_f32(sim_el(&o[1], p, i), o[1].dtype,
                          sim_actfn(ISA_ACTFN_EXP, sim_alu_f(ISA_ALU_SUBTRACT, x, s0)));
            if (red)
                r += num_load_f32(sim_el(&o[1], p, i), o[1].dtype);
        }
        if (!red)
            continue;
        *acc = r;
        if (o[4].mem)
            num_store_f32(sim_el(&o[4], p, 0), o[4].dtype, r);
    }
}

/* o: in, out, s0, s1, red_out */
static void tsacc_rows(sim_exec_ctx_t *ctx, const isa_fmt_TSACC_t *f, bool cum, sim_opnd_t *o)
{
    for (unsigned p = 0; p < o[0].nparts; p++) {
        float s0 = scal(f->s0, f->s0_is_ptr, &o[2], p);
        float *acc = &ctx->acc[o[0].start + p];
        float r;   /* cumulative: the running register; reduce: the row result */
        if (cum)
            r = f->red_cmd == ISA_REDCMD_REDUCE ? *acc
                : f->red_cmd == ISA_REDCMD_LOAD_REDUCE ? scal(f->s1, f->s1_is_ptr, &o[3], p)
                : sim_val_as_f(sim_alu_identity(f->op1));
        else
            r = sim_val_as_f(sim_alu_identity(f->op1));
        for (uint32_t i = 0; i < o[0].nfree; i++) {
            float t = op0_of(f, num_load_f32(sim_el(&o[0], p, i), o[0].dtype), s0);
            if (cum) {
                r = sim_alu_f(f->op1, t, r);
                num_store_f32(sim_el(&o[1], p, i), o[1].dtype, r);
            } else {
                num_store_f32(sim_el(&o[1], p, i), o[1].dtype, t);
                /* the reduce sees the value as stored */
                r = sim_alu_f(f->op1, r, num_load_f32(sim_el(&o[1], p, i), o[1].dtype));
            }
        }
        if (!cum) {
            if (f->red_cmd == ISA_REDCMD_REDUCE)
                r = sim_alu_f(f->op1, *acc, r);
            else if (f->red_cmd == ISA_REDCMD_LOAD_REDUCE)
                r = sim_alu_f(f->op1, scal(f->s1, f->s1_is_ptr, &o[3], p), r);
        }
        *acc = r;
        if (o[4].mem)
            num_store_f32(sim_el(&o[4], p, 0), o[4].dtype, f->negate ? -r : r);
    }
}

static int exec_tsacc(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_TSACC_t *f = &d->inst.f.TSACC;
    bool cum = d->inst.op == ISA_OP_TENSOR_SCALAR_CUMULATIVE;
    bool ex = d->inst.op == ISA_OP_EXPONENTIAL;
    sim_opnd_t o[5];
    sim_opnds_none(o, 5);
    int rc = -1;
    if ((ex ? exp_check(ctx, f) : tsacc_check(ctx, f, cum)) ||
        sim_opnds_in_out(ctx, o, &f->in, &f->out))
        goto done;
    unsigned st = o[1].start, np = o[1].nparts;   /* out's partitions */
    isa_ptr_t p0 = sim_ptr_from_bits(f->s0), p1 = sim_ptr_from_bits(f->s1);
    if (f->s0_is_ptr && sim_opnd_ptr(ctx, &o[2], &p0, st, np, 1, "s0", SIM_RD))
        goto done;
    if (f->red_cmd == ISA_REDCMD_LOAD_REDUCE && f->s1_is_ptr &&
        sim_opnd_ptr(ctx, &o[3], &p1, st, np, 1, "s1", SIM_RD))
        goto done;
    if (f->red_out.space != ISA_SPACE_NONE && f->red_cmd != ISA_REDCMD_IDLE &&
        sim_opnd_ptr(ctx, &o[4], &f->red_out, st, np, 1, "red_out", SIM_WR))
        goto done;
    if (!ctx->timing_only) {
        if (ex)
            exp_rows(ctx, f, o);
        else
            tsacc_rows(ctx, f, cum, o);
    }
    sim_opnd_mark(&o[1]);
    sim_opnd_mark(&o[4]);
    rc = 0;
done:
    for (unsigned k = 0; k < 5; k++)
        sim_opnd_free(&o[k]);
    return rc;
}

/* COST tensor_scalar_reduce max(MIN_II, N) + MIN_II (hardware-facts);
 * tensor_scalar_cumulative and exponential have no figure: max(MIN_II, N)
 * as tensor_scalar / activation. */
static uint64_t cost_tsacc(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    uint64_t c = sim_cost_dve(t, sim_tap_n(&d->inst.f.TSACC.in));
    return d->inst.op == ISA_OP_TENSOR_SCALAR_REDUCE ? c + t->min_ii : c;
}

static const sim_opimpl_t impl_tsacc = { exec_tsacc, cost_tsacc };

const sim_opimpl_t *sim_dve_tsacc_impl(isa_op_t op)
{
    return op == ISA_OP_TENSOR_SCALAR_CUMULATIVE || op == ISA_OP_TENSOR_SCALAR_REDUCE ||
                   op == ISA_OP_EXPONENTIAL
               ? &impl_tsacc : NULL;
}
