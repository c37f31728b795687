/* dve_mx.c - QuantizeMX on the Vector engine, in its two forms:
 * - fp8 out (the seeds' form): one E8M0 scale per 32 consecutive elements
 *   of a partition, OCP's scale;
 * - a packed quad out (NeuronCore-v4, NKI nisa.quantize_mx): one scale per
 *   8 partitions x 4 elements, NKI's scale (twice OCP's), the layout the
 *   PE's MX matmul reads (mx_quad.h).
 * Semantics: docs/semantics.md "QuantizeMX" and "MX on NeuronCore-v4". */
#include <math.h>
#include <stdlib.h>

#include "dve_int.h"
#include "mx_quad.h"
#include "numeric.h"

/* The biased E8M0 scale of a group: floor(log2 amax) - (emax - shift) +
 * 127 clamped to [0, 254]; 0 for an all-zero group, 255 (NaN) for a group
 * holding NaN or inf.  shift 0: OCP's sample algorithm; 1: NKI v4's
 * (a block scale two times larger). */
static int e8m0_of(float amax, bool bad, int emax, int shift)
{
    if (bad)
        return 255;
    if (amax == 0.0f)
        return 0;
    int e;
    frexpf(amax, &e);   /* amax = m * 2^e, m in [0.5, 1): floor(log2 amax) = e - 1 */
    int s = (e - 1) - (emax - shift) + 127;
    return s < 0 ? 0 : s > 254 ? 254 : s;
}

/* x scaled by 2^(127 - s), saturated to the fp8 format's largest finite
 * value (the MX conversion saturates, OCP MX). */
static float mx_quantize(float x, int s, float maxf)
{
    float q = s == 255 ? NAN : ldexpf(x, 127 - s);
    return q > maxf ? maxf : q < -maxf ? -maxf : q;
}

static int quantize_flat(sim_exec_ctx_t *ctx, const sim_opnd_t o[3])
{
    if (o[0].nfree % 32 || o[2].nparts != o[0].nparts || o[2].nfree != o[0].nfree / 32)
        return sim_fail(ctx, "scale: expected %u partitions x %u scales (one per 32 elements of "
                        "in, which has %u), got %u x %u", o[0].nparts, o[0].nfree / 32,
                        o[0].nfree, o[2].nparts, o[2].nfree);
    if (ctx->timing_only)
        return 0;
    bool e4 = o[1].dtype == ISA_DT_FP8E4M3;
    int emax = e4 ? 8 : 15;
    float maxf = e4 ? 448.0f : 57344.0f;
    for (unsigned p = 0; p < o[0].nparts; p++)
        for (uint32_t b = 0; b < o[0].nfree / 32; b++) {
            float x[32], amax = 0.0f;
            bool bad = false;
            for (unsigned k = 0; k < 32; k++) {
                x[k] = num_load_f32(sim_el(&o[0], p, b * 32 + k), o[0].dtype);
                if (!isfinite(x[k]))
                    bad = true;
                else if (fabsf(x[k]) > amax)
                    amax = fabsf(x[k]);
            }
            int s = e8m0_of(amax, bad, emax, 0);
            *sim_el(&o[2], p, b) = (uint8_t)s;
            for (unsigned k = 0; k < 32; k++)
                num_store_f32(sim_el(&o[1], p, b * 32 + k), o[1].dtype, mx_quantize(x[k], s, maxf));
        }
    return 0;
}

/* The quad form: in [P, 4n] bf16/fp16 -> out [P, n] quads, lane l of out
 * column j = in element 4j + l; scales as mx_quad.h places them. */
static int quantize_quad(sim_exec_ctx_t *ctx, const sim_opnd_t o[3])
{
    if (o[0].dtype != ISA_DT_BF16 && o[0].dtype != ISA_DT_FP16)
        return sim_fail(ctx, "in: QuantizeMX to %s reads bf16 or fp16, not %s",
                        isa_dtype_name(o[1].dtype), isa_dtype_name(o[0].dtype));
    if (o[1].nparts != o[0].nparts || o[0].nfree != 4 * o[1].nfree)
        return sim_fail(ctx, "out: %u x %u quads hold %u x %u values, but in is %u x %u",
                        o[1].nparts, o[1].nfree, o[1].nparts, 4 * o[1].nfree, o[0].nparts,
                        o[0].nfree);
    if (mx_quad_check(ctx, &o[1], &o[2]))
        return -1;
    if (ctx->timing_only)
        return 0;
    bool e4 = o[1].dtype == ISA_DT_FP8E4M3X4;
    int emax = e4 ? 8 : 15;
    float maxf = e4 ? 448.0f : 57344.0f;
    for (unsigned g = 0; g < o[0].nparts / MX_QUAD_GROUP_ROWS; g++)
        for (uint32_t j = 0; j < o[1].nfree; j++) {
            float x[MX_QUAD_GROUP_ROWS][4], amax = 0.0f;
            bool bad = false;
            for (unsigned r = 0; r < MX_QUAD_GROUP_ROWS; r++)
                for (unsigned l = 0; l < 4; l++) {
                    unsigned p = g * MX_QUAD_GROUP_ROWS + r;
                    float v = num_load_f32(sim_el(&o[0], p, 4 * j + l), o[0].dtype);
                    x[r][l] = v;
                    if (!isfinite(v))
                        bad = true;
                    else if (fabsf(v) > amax)
                        amax = fabsf(v);
                }
            int s = e8m0_of(amax, bad, emax, 1);
            *sim_el(&o[2], isa_mx_quad_scale_row(g * MX_QUAD_GROUP_ROWS), j) = (uint8_t)s;
            for (unsigned r = 0; r < MX_QUAD_GROUP_ROWS; r++)
                for (unsigned l = 0; l < 4; l++)
                    num_store_x4(sim_el(&o[1], g * MX_QUAD_GROUP_ROWS + r, j), o[1].dtype, l,
                                 mx_quantize(x[r][l], s, maxf));
        }
    return 0;
}

static int exec_quantize_mx(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_QMX_t *f = &d->inst.f.QMX;
    sim_opnd_t o[3];
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    int rc = -1;
    if (sim_opnd_tap(ctx, &o[0], &f->in, "in", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], &f->out, "out", SIM_WR) ||
        sim_opnd_tap(ctx, &o[2], &f->scale, "scale", SIM_WR))
        goto done;
    bool quad = o[1].dtype == ISA_DT_FP8E4M3X4 || o[1].dtype == ISA_DT_FP8E5M2X4;
    if (!quad && o[1].dtype != ISA_DT_FP8E4M3 && o[1].dtype != ISA_DT_FP8E5M2) {
        sim_fail(ctx, "out: QuantizeMX writes fp8e4m3 or fp8e5m2 (or their quads fp8e4m3x4, "
                 "fp8e5m2x4), not %s", isa_dtype_name(o[1].dtype));
        goto done;
    }
    if (isa_dtype_kind(o[0].dtype) != ISA_DK_F || !isa_mx_scale_dtype(o[2].dtype)) {
        sim_fail(ctx, "in/scale: QuantizeMX reads a float dtype and writes E8M0 scales (fp8e8m0 "
                 "or uint8) "
                 "(in %s, scale %s)", isa_dtype_name(o[0].dtype), isa_dtype_name(o[2].dtype));
        goto done;
    }
    if (quad ? quantize_quad(ctx, o)
             : sim_same_shape(ctx, &o[1], &o[0]) || quantize_flat(ctx, o))
        goto done;
    sim_opnd_mark(&o[1]);
    sim_opnd_mark(&o[2]);
    rc = 0;
done:
    free_all(o, 3);
    return rc;
}

static uint64_t cost_quantize_mx(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    /* ARCH4: 4 elements / partition / cycle */
    return sim_cost_dve(t, ceil_div(sim_tap_n(&d->inst.f.QMX.in), 4));
}

static const sim_opimpl_t impl_qmx = { exec_quantize_mx, cost_quantize_mx };

const sim_opimpl_t *sim_dve_mx_impl(isa_op_t op)
{
    return op == ISA_OP_QUANTIZE_MX ? &impl_qmx : NULL;
}
