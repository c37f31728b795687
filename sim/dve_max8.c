/* dve_max8.c - Vector engine Max8 family: Max8, MaxIndex8, MatchReplace8
 * and the fused MaxIndexAndMatchReplace.  Semantics: docs/semantics.md;
 * costs: docs/timing-compute.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dve_int.h"

/* Order used by Max8: NaN above everything, then the usual float order. */
static bool gt_nan(float a, float b)
{
    if (isnan(a))
        return !isnan(b);
    if (isnan(b))
        return false;
    return a > b;
}

static float *load_row(const sim_opnd_t *o, unsigned p, float *buf)
{
    for (uint32_t i = 0; i < o->nfree; i++)
        buf[i] = num_load_f32(sim_el(o, p, i), o->dtype);
    return buf;
}

static int exec_max8(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_COPY_t *f = &d->inst.f.COPY;
    sim_opnd_t o[2];
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    float *row = NULL;
    uint8_t *taken = NULL;
    int rc = -1;
    if (sim_opnd_tap(ctx, &o[0], &f->in, "in", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], &f->out, "out", SIM_WR))
        goto done;
    if (o[0].nfree < 8 || o[1].nfree != 8 || o[1].nparts != o[0].nparts) {
        sim_fail(ctx, "in/out: Max8 needs in with >= 8 elements per partition (got %u) and "
                 "out with 8 (got %u) on the same partition count", o[0].nfree, o[1].nfree);
        goto done;
    }
    if (!ctx->timing_only) {
        row = malloc((size_t)o[0].nfree * sizeof *row);
        taken = malloc(o[0].nfree);
        if (!row || !taken) {
            sim_fail_data(ctx, "out of memory");
            goto done;
        }
        for (unsigned p = 0; p < o[0].nparts; p++) {
            load_row(&o[0], p, row);
            memset(taken, 0, o[0].nfree);
            for (unsigned k = 0; k < 8; k++) {
                uint32_t best = UINT32_MAX;
                for (uint32_t i = 0; i < o[0].nfree; i++)
                    if (!taken[i] && (best == UINT32_MAX || gt_nan(row[i], row[best])))
                        best = i;
                taken[best] = 1;
                num_store_f32(sim_el(&o[1], p, k), o[1].dtype, row[best]);
            }
        }
    }
    sim_opnd_mark(&o[1]);
    rc = 0;
done:
    free(row);
    free(taken);
    free_all(o, 2);
    return rc;
}

/* MaxIndex8 / MatchReplace8 / fused.  vals: 8 values per partition (first
 * TAP's partitions).  Each value takes the first element equal to it that
 * no value before it took, so duplicate values take successive
 * occurrences.  MaxIndex8 takes the values in slot order 0..7 (the NKI
 * Library's topk_reduce finds a token's K rows in slots 0..K-1 from 8
 * copies of its id); MatchReplace8 in reverse, 7..0, as NKI documents
 * (the first occurrence goes to the highest slot among duplicates). */
typedef struct {
    bool replace;        /* MatchReplace (slots 7..0), else MaxIndex8 (0..7) */
    float imm;
} m8_mode_t;

static int m8_run(sim_exec_ctx_t *ctx, const isa_tap_t *in, const isa_tap_t *out,
                  const isa_ptr_t *vals, const isa_ptr_t *idxp, m8_mode_t m)
{
    sim_opnd_t o[4];
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    float *row = NULL;
    uint8_t *done_el = NULL;
    int rc = -1;
    if (sim_opnd_tap(ctx, &o[0], in, "in", SIM_RD) ||
        sim_opnd_ptr(ctx, &o[2], vals, in->start, in->nparts, 8, "vals", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], out, "out", SIM_WR))
        goto done;
    if (m.replace && sim_same_shape(ctx, &o[1], &o[0]))
        goto done;
    if (!m.replace && (o[1].nfree != 8 || o[1].nparts != o[0].nparts)) {
        sim_fail(ctx, "out: MaxIndex8 writes 8 indices per partition on %u partitions "
                 "(got %u x %u)", o[0].nparts, o[1].nparts, o[1].nfree);
        goto done;
    }
    if (!m.replace && isa_dtype_kind(o[1].dtype) == ISA_DK_F) {
        sim_fail(ctx, "out: indices need an integer dtype, not %s", isa_dtype_name(o[1].dtype));
        goto done;
    }
    if (idxp && sim_opnd_ptr(ctx, &o[3], idxp, in->start, in->nparts, 8, "idx", SIM_WR))
        goto done;
    if (idxp && isa_dtype_kind(o[3].dtype) == ISA_DK_F) {
        sim_fail(ctx, "idx: indices need an integer dtype, not %s", isa_dtype_name(o[3].dtype));
        goto done;
    }
    if (!ctx->timing_only) {
        row = malloc((size_t)o[0].nfree * sizeof *row);
        done_el = malloc(o[0].nfree);
        if (!row || !done_el) {
            sim_fail_data(ctx, "out of memory");
            goto done;
        }
        for (unsigned p = 0; p < o[0].nparts; p++) {
            load_row(&o[0], p, row);
            memset(done_el, 0, o[0].nfree);
            int64_t idx[8];
            for (unsigned s = 0; s < 8; s++) {
                unsigned j = m.replace ? 7 - s : s;
                float v = num_load_f32(sim_el(&o[2], p, j), o[2].dtype);
                idx[j] = -1; /* all ones in the index dtype */
                for (uint32_t i = 0; i < o[0].nfree; i++)
                    if (row[i] == v && !done_el[i]) {
                        idx[j] = i;
                        done_el[i] = 1;
                        break;
                    }
            }
            if (m.replace) {
                for (uint32_t i = 0; i < o[0].nfree; i++)
                    num_store_f32(sim_el(&o[1], p, i), o[1].dtype, done_el[i] ? m.imm : row[i]);
                if (idxp)
                    for (unsigned j = 0; j < 8; j++)
                        num_store_i64_wrap(sim_el(&o[3], p, j), o[3].dtype, idx[j]);
            } else
                for (unsigned j = 0; j < 8; j++)
                    num_store_i64_wrap(sim_el(&o[1], p, j), o[1].dtype, idx[j]);
        }
    }
    sim_opnd_mark(&o[1]);
    sim_opnd_mark(&o[3]);
    rc = 0;
done:
    free(row);
    free(done_el);
    free_all(o, 4);
    return rc;
}

static int exec_max_index8(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_FIDX_t *f = &d->inst.f.FIDX;
    return m8_run(ctx, &f->in, &f->out, &f->vals, NULL, (m8_mode_t){ false, 0.0f });
}

static int exec_match_replace8(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_MR_t *f = &d->inst.f.MR;
    return m8_run(ctx, &f->in, &f->out, &f->vals, NULL, (m8_mode_t){ true, f->imm });
}

static int exec_mimr(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_MIMR_t *f = &d->inst.f.MIMR;
    return m8_run(ctx, &f->in, &f->out, &f->vals, &f->idx, (m8_mode_t){ true, f->imm });
}

static uint64_t cost_fidx(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    return sim_cost_dve(t, dve_work(sim_tap_n(&d->inst.f.FIDX.in), &d->inst.f.FIDX.in, NULL, NULL, 1));
}

static uint64_t cost_mr(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    return sim_cost_dve(t, dve_work(sim_tap_n(&d->inst.f.MR.in), &d->inst.f.MR.in, NULL, NULL, 1));
}

static uint64_t cost_mimr(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    return sim_cost_dve(t, dve_work(sim_tap_n(&d->inst.f.MIMR.in), &d->inst.f.MIMR.in, NULL, NULL, 1));
}

static const sim_opimpl_t impl_max8 = { exec_max8, cost_copy_n };
static const sim_opimpl_t impl_fidx = { exec_max_index8, cost_fidx };
static const sim_opimpl_t impl_mr = { exec_match_replace8, cost_mr };
static const sim_opimpl_t impl_mimr = { exec_mimr, cost_mimr };

const sim_opimpl_t *sim_dve_max8_impl(isa_op_t op)
{
    switch (op) {
    case ISA_OP_MAX8: return &impl_max8;
    case ISA_OP_MAX_INDEX8: return &impl_fidx;
    case ISA_OP_MATCH_REPLACE8: return &impl_mr;
    case ISA_OP_MAX_INDEX_AND_MATCH_REPLACE: return &impl_mimr;
    default: return NULL;
    }
}
