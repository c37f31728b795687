/* dve_move.c - Vector engine ops that move elements across partitions or
 * drop them: Transpose32, StreamShuffle and Dropout.  Semantics:
 * docs/semantics.md; costs: docs/timing-compute.md. */
#include <stdlib.h>
#include <string.h>

#include "dve_int.h"

/* ------------------------------------------------------------------ */
/* Transpose32: 32x32 blocks inside each 32-partition group             */

/* A copy of a whole operand, viewed as an operand with dense offsets
 * (partition pitch = nfree * esize), for ops whose output may overlap the
 * input at other positions.  *buf and *offs are the caller's to free, also
 * on failure. */
static int snapshot(sim_exec_ctx_t *ctx, const sim_opnd_t *o, uint8_t **buf, uint32_t **offs,
                    sim_opnd_t *view)
{
    *buf = malloc((size_t)o->nparts * o->nfree * o->esize + 1);
    *offs = malloc((size_t)o->nfree * sizeof **offs + 1);
    if (!*buf || !*offs)
        return sim_fail_data(ctx, "out of memory");
    for (unsigned p = 0; p < o->nparts; p++)
        for (uint32_t i = 0; i < o->nfree; i++)
            memcpy(*buf + ((size_t)p * o->nfree + i) * o->esize, sim_el(o, p, i), o->esize);
    *view = *o;
    view->mem = *buf;
    view->start = 0;
    view->pb = o->nfree * o->esize;
    for (uint32_t i = 0; i < o->nfree; i++)
        (*offs)[i] = i * o->esize;
    view->off = *offs;
    view->owned = false; /* offs belongs to the caller */
    view->plan = NULL;   /* not a class plan's operand any more (rows.c) */
    return 0;
}

static int exec_transpose32(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_COPY_t *f = &d->inst.f.COPY;
    sim_opnd_t o[2];
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    uint8_t *buf = NULL;
    uint32_t *offs = NULL;
    int rc = -1;
    if (sim_opnd_tap(ctx, &o[0], &f->in, "in", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], &f->out, "out", SIM_WR))
        goto done;
    /* whole blocks: in and out [32g, 32b], each 32x32 block transposed in
     * place; one partial block: in [p, n] -> out [n, p], p, n <= 32 */
    bool whole = o[0].nparts % 32 == 0 && o[0].nfree % 32 == 0 &&
                 o[1].nparts == o[0].nparts && o[1].nfree == o[0].nfree;
    bool part = o[0].nparts <= 32 && o[0].nfree <= 32 && o[1].nparts == o[0].nfree &&
                o[1].nfree == o[0].nparts;
    if (o[0].start % 32 || o[1].start % 32 || !(whole || part)) {
        sim_fail(ctx, "in/out: Transpose32 needs quadrant-aligned starts (in %u, out %u) and either "
                 "in and out of 32k partitions and 32m elements each, or in [p, n] and out [n, p] "
                 "with p, n <= 32 (in [%u, %u], out [%u, %u])", o[0].start, o[1].start,
                 o[0].nparts, o[0].nfree, o[1].nparts, o[1].nfree);
        goto done;
    }
    if (!ctx->timing_only) {
        sim_opnd_t v;
        if (snapshot(ctx, &o[0], &buf, &offs, &v))
            goto done;
        if (whole)
            for (unsigned g = 0; g < o[0].nparts; g += 32)
                for (uint32_t b = 0; b < o[0].nfree; b += 32)
                    for (unsigned i = 0; i < 32; i++)
                        for (unsigned j = 0; j < 32; j++)
                            sim_copy_elem(&v, g + i, b + j, &o[1], g + j, b + i);
        else
            for (unsigned i = 0; i < o[0].nparts; i++)
                for (uint32_t j = 0; j < o[0].nfree; j++)
                    sim_copy_elem(&v, i, j, &o[1], j, i);
    }
    sim_opnd_mark(&o[1]);
    rc = 0;
done:
    free(buf);
    free(offs);
    free_all(o, 2);
    return rc;
}

/* ------------------------------------------------------------------ */
/* StreamShuffle                                                        */

static int exec_stream_shuffle(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_SHUF_t *f = &d->inst.f.SHUF;
    const uint32_t m[32] = { f->m0, f->m1, f->m2, f->m3, f->m4, f->m5, f->m6, f->m7,
                             f->m8, f->m9, f->m10, f->m11, f->m12, f->m13, f->m14, f->m15,
                             f->m16, f->m17, f->m18, f->m19, f->m20, f->m21, f->m22, f->m23,
                             f->m24, f->m25, f->m26, f->m27, f->m28, f->m29, f->m30, f->m31 };
    sim_opnd_t o[2];
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    uint8_t *buf = NULL;
    uint32_t *offs = NULL;
    int rc = -1;
    /* in and out may differ in partitions (each quadrant of out reads the
     * same quadrant of in), not in elements per partition */
    if (sim_opnd_tap(ctx, &o[0], &f->in, "in", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], &f->out, "out", SIM_WR))
        goto done;
    if (o[0].nfree != o[1].nfree) {
        sim_fail(ctx, "out has %u elements per partition but in has %u", o[1].nfree, o[0].nfree);
        goto done;
    }
    /* NKI: both starts follow the start-partition rule of the active
     * partitions, max(in, out) rounded up to whole quadrants */
    unsigned na = o[0].nparts > o[1].nparts ? o[0].nparts : o[1].nparts;
    uint64_t align = isa_start_align(na);
    if (o[0].start % align || o[1].start % align) {
        sim_fail(ctx, "in/out: start partitions %u, %u are not allowed for %u active partitions "
                 "(more than 64 start at 0, 33-64 at 0 or 64)", o[0].start, o[1].start, na);
        goto done;
    }
    if (o[0].dtype != o[1].dtype) {
        sim_fail(ctx, "in/out: StreamShuffle needs the same dtype (in %s, out %s)",
                 isa_dtype_name(o[0].dtype), isa_dtype_name(o[1].dtype));
        goto done;
    }
    for (unsigned i = 0; i < 32; i++)
        if (m[i] != ISA_SHUFFLE_KEEP && m[i] >= 32) {
            sim_fail(ctx, "m%u: %u is neither a partition 0..31 of the quadrant nor 63 (keep)",
                     i, m[i]);
            goto done;
        }
    for (unsigned q = 0; q < o[1].nparts; q++)
        if (m[q % 32] != ISA_SHUFFLE_KEEP && (q / 32) * 32 + m[q % 32] >= o[0].nparts) {
            sim_fail(ctx, "m%u: source partition %u is outside in's %u partitions", q % 32,
                     (q / 32) * 32 + m[q % 32], o[0].nparts);
            goto done;
        }
    if (!ctx->timing_only) {
        sim_opnd_t v;
        if (snapshot(ctx, &o[0], &buf, &offs, &v))
            goto done;
        for (unsigned q = 0; q < o[1].nparts; q++) {
            if (m[q % 32] == ISA_SHUFFLE_KEEP)
                continue;
            unsigned src = (q / 32) * 32 + m[q % 32];
            for (uint32_t i = 0; i < o[1].nfree; i++)
                sim_copy_elem(&v, src, i, &o[1], q, i);
        }
    }
    sim_opnd_mark(&o[1]);
    rc = 0;
done:
    free(buf);
    free(offs);
    free_all(o, 2);
    return rc;
}

/* One pass over in -> out (StreamShuffle, Dropout). */
static uint64_t cost_one_pass(const tpb_target_t *t, const isa_tap_t *in, const isa_tap_t *out)
{
    return sim_cost_dve(t, dve_work(sim_tap_n(in), in, out, NULL, 1));
}

static uint64_t cost_shuffle(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    return cost_one_pass(t, &d->inst.f.SHUF.in, &d->inst.f.SHUF.out);
}

/* ------------------------------------------------------------------ */
/* Dropout                                                              */

static int exec_dropout(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_DROP_t *f = &d->inst.f.DROP;
    sim_opnd_t o[2];
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    int rc = -1;
    if (!(f->prob >= 0.0f && f->prob <= 1.0f))
        return sim_fail(ctx, "prob: %g is not a probability in [0, 1]", (double)f->prob);
    /* seed 001 Dropout set_keep_rate: with is_keep_rate the immediate is the
     * probability of keeping an element, so the drop probability is 1 - prob */
    float drop = f->is_keep_rate ? 1.0f - f->prob : f->prob;
    if (sim_opnds_in_out(ctx, o, &f->in, &f->out))
        goto done;
    if (o[1].start + o[1].nparts > SIM_RNG_LANES) {
        sim_fail(ctx, "out: partitions beyond the %u PRNG lanes", SIM_RNG_LANES);
        goto done;
    }
    unsigned gens = sim_rng_gens(ctx->engine);
    if (!ctx->timing_only)
        for (unsigned p = 0; p < o[0].nparts; p++)
            for (uint32_t i = 0; i < o[0].nfree; i++) {
                /* u uniform in [0, 1): the lane's generator i % gens */
                float u = sim_rng_unit(ctx->rng, o[1].start + p, i % gens);
                sim_val_t x = sim_val_load(sim_el(&o[0], p, i), o[0].dtype);
                sim_val_store(sim_el(&o[1], p, i), o[1].dtype, u < drop ? sim_val_f(0.0f) : x);
            }
    sim_opnd_mark(&o[1]);
    rc = 0;
done:
    free_all(o, 2);
    return rc;
}

static uint64_t cost_dropout(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    return cost_one_pass(t, &d->inst.f.DROP.in, &d->inst.f.DROP.out);
}

static const sim_opimpl_t impl_t32 = { exec_transpose32, cost_copy_n };
static const sim_opimpl_t impl_shuf = { exec_stream_shuffle, cost_shuffle };
static const sim_opimpl_t impl_drop = { exec_dropout, cost_dropout };

const sim_opimpl_t *sim_dve_move_impl(isa_op_t op)
{
    switch (op) {
    case ISA_OP_TRANSPOSE32: return &impl_t32;
    case ISA_OP_STREAM_SHUFFLE: return &impl_shuf;
    case ISA_OP_DROPOUT: return &impl_drop;
    default: return NULL;
    }
}
