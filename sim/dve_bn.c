/* dve_bn.c - Vector engine batch-norm statistics: BNStats and BNAggr (NKI
 * bn_stats / bn_aggr).  Semantics: docs/semantics.md "BNStats / BNAggr";
 * costs: docs/timing-compute.md.  Sums are accumulated in double and
 * rounded once to fp32 per output (the engine works in fp32; this is the
 * error-free reading of it), then stored in out's dtype. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

#define BN_STATS_FMAX 512   /* NKI nl.tile_size.bn_stats_fmax */

static void store(const sim_opnd_t *o, unsigned p, uint32_t i, double v)
{
    num_store_f32(sim_el(o, p, i), o->dtype, (float)v);
}

/* count, mean, variance * count of the elements i = first, first+2, ... */
static void stats_of(const sim_opnd_t *in, unsigned p, uint32_t first, double out[3])
{
    double n = 0, sum = 0, m2 = 0;
    for (uint32_t i = first; i < in->nfree; i += 2, n++)
        sum += num_load_f32(sim_el(in, p, i), in->dtype);
    double mean = n > 0 ? sum / n : 0.0;
    for (uint32_t i = first; i < in->nfree; i += 2) {
        double d = num_load_f32(sim_el(in, p, i), in->dtype) - mean;
        m2 += d * d;
    }
    out[0] = n;
    out[1] = (float)mean;
    out[2] = m2;
}

/* out[p] = (count, mean, var*count) of the even elements, then of the odd
 * ones (free index order). */
static void bn_stats_row(const sim_opnd_t *in, const sim_opnd_t *out, unsigned p)
{
    for (uint32_t h = 0; h < 2; h++) {
        double s[3];
        stats_of(in, p, h, s);
        for (uint32_t k = 0; k < 3; k++)
            store(out, p, 3 * h + k, s[k]);
    }
}

/* in[p] = k (count, mean, var*count) groups; out[p] = (mean, variance) of
 * their union: N = sum n_i, mean = sum n_i m_i / N,
 * var = (sum M2_i + sum n_i (m_i - mean)^2) / N; N = 0 gives (0, 0). */
static void bn_aggr_row(const sim_opnd_t *in, const sim_opnd_t *out, unsigned p)
{
    double n = 0, s = 0, m2 = 0;
    for (uint32_t g = 0; g < in->nfree; g += 3) {
        double c = num_load_f32(sim_el(in, p, g), in->dtype);
        n += c;
        s += c * num_load_f32(sim_el(in, p, g + 1), in->dtype);
        m2 += num_load_f32(sim_el(in, p, g + 2), in->dtype);
    }
    double mean = n > 0 ? s / n : 0.0;
    for (uint32_t g = 0; g < in->nfree; g += 3) {
        double c = num_load_f32(sim_el(in, p, g), in->dtype);
        double dm = num_load_f32(sim_el(in, p, g + 1), in->dtype) - mean;
        m2 += c * dm * dm;
    }
    store(out, p, 0, mean);
    store(out, p, 1, n > 0 ? m2 / n : 0.0);
}

/* Shared checks and the per-partition loop of both instructions. */
static int bn_run(sim_exec_ctx_t *ctx, const isa_decoded_t *d, bool stats)
{
    const isa_fmt_COPY_t *f = &d->inst.f.COPY;
    const char *op = stats ? "BNStats" : "BNAggr";
    uint32_t out_n = stats ? 6 : 2;
    sim_opnd_t o[2];
    sim_opnds_none(o, 2);
    int rc = -1;
    if (sim_opnd_tap(ctx, &o[0], &f->in, "in", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], &f->out, "out", SIM_WR))
        goto done;
    if (o[1].nparts != o[0].nparts) {
        sim_fail(ctx, "out: %s writes the %u partitions of in, not %u", op, o[0].nparts,
                 o[1].nparts);
        goto done;
    }
    if (o[1].nfree != out_n || isa_dtype_kind(o[1].dtype) != ISA_DK_F) {
        sim_fail(ctx, "out: %s writes %u elements per partition of a float dtype, not %u of %s",
                 op, out_n, o[1].nfree, isa_dtype_name(o[1].dtype));
        goto done;
    }
    if (stats && o[0].nfree > BN_STATS_FMAX) {
        sim_fail(ctx, "in: BNStats reads at most %u elements per partition, not %u",
                 BN_STATS_FMAX, o[0].nfree);
        goto done;
    }
    if (!stats && (o[0].nfree == 0 || o[0].nfree % 3)) {
        sim_fail(ctx, "in: BNAggr reads (count, mean, var*count) groups: %u elements per "
                 "partition is not a multiple of 3", o[0].nfree);
        goto done;
    }
    if (!ctx->timing_only)
        for (unsigned p = 0; p < o[0].nparts; p++)
            (stats ? bn_stats_row : bn_aggr_row)(&o[0], &o[1], p);
    sim_opnd_mark(&o[1]);
    rc = 0;
done:
    sim_opnd_free(&o[0]);
    sim_opnd_free(&o[1]);
    return rc;
}

static int exec_bn_stats(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    return bn_run(ctx, d, true);
}

static int exec_bn_aggr(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    return bn_run(ctx, d, false);
}

/* COST BNStats: two passes over the input (sum, then squared deviations);
 * BNAggr: two passes over its groups.  Derived from the DVE rate of one
 * element per cycle per partition lane (docs/timing-compute.md). */
static uint64_t cost_bn(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    return sim_cost_dve(t, 2 * sim_tap_n(&d->inst.f.COPY.in));
}

static const sim_opimpl_t impl_bn_stats = { exec_bn_stats, cost_bn };
static const sim_opimpl_t impl_bn_aggr = { exec_bn_aggr, cost_bn };

const sim_opimpl_t *sim_dve_bn_impl(isa_op_t op)
{
    switch (op) {
    case ISA_OP_BN_STATS: return &impl_bn_stats;
    case ISA_OP_BN_AGGR: return &impl_bn_aggr;
    default: return NULL;
    }
}
