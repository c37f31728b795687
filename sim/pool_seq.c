/* pool_seq.c - GpSimd (Pool) sequence ops: GetSequenceBounds (NKI
 * sequence_bounds), NonzeroWithCount (NKI nonzero_with_count) and TopK
 * (NKI topk).  Semantics: docs/semantics.md; costs: docs/timing-compute.md. */
#include <math.h>
#include <stdlib.h>

#include "ops.h"

static void free_opnds(sim_opnd_t *o, unsigned n)
{
    for (unsigned k = 0; k < n; k++)
        sim_opnd_free(&o[k]);
}

/* Resolve o[0] = in (read) and o[1] = out (written) with out holding
 * in.nfree * mul + add elements per partition of the same partitions. */
static int in_out_sized(sim_exec_ctx_t *ctx, sim_opnd_t o[2], const isa_tap_t *in,
                        const isa_tap_t *out, uint32_t mul, uint32_t add, const char *why)
{
    if (sim_opnd_tap(ctx, &o[0], in, "in", SIM_RD) || sim_opnd_tap(ctx, &o[1], out, "out", SIM_WR))
        return -1;
    uint32_t want = o[0].nfree * mul + add;
    if (o[1].nparts != o[0].nparts || o[1].nfree != want)
        return sim_fail(ctx, "out: %u x %u elements, expected %u x %u (%s)", o[1].nparts,
                        o[1].nfree, o[0].nparts, want, why);
    return 0;
}

static void store_i(const sim_opnd_t *o, unsigned p, uint32_t i, int64_t v)
{
    if (isa_dtype_kind(o->dtype) == ISA_DK_F)
        num_store_f32(sim_el(o, p, i), o->dtype, (float)v);
    else
        num_store_i64_wrap(sim_el(o, p, i), o->dtype, v);
}

/* out[p, 0:N] = start, out[p, N:2N] = end (exclusive) of the run of equal
 * ids holding element i; id 0 (padding): N and -1. */
static void seqb_rows(const sim_opnd_t *in, const sim_opnd_t *out)
{
    uint32_t n = in->nfree;
    for (unsigned p = 0; p < in->nparts; p++) {
        uint32_t a = 0;
        while (a < n) {
            float id = num_load_f32(sim_el(in, p, a), in->dtype);
            uint32_t b = a + 1;
            while (b < n && num_load_f32(sim_el(in, p, b), in->dtype) == id)
                b++;
            for (uint32_t i = a; i < b; i++) {
                store_i(out, p, i, id == 0.0f ? (int64_t)n : (int64_t)a);
                store_i(out, p, n + i, id == 0.0f ? -1 : (int64_t)b);
            }
            a = b;
        }
    }
}

static int exec_sequence_bounds(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_COPY_t *f = &d->inst.f.COPY;
    sim_opnd_t o[2];
    sim_opnds_none(o, 2);
    int rc = -1;
    if (in_out_sized(ctx, o, &f->in, &f->out, 2, 0, "start and end of each id"))
        goto done;
    if (!ctx->timing_only)
        seqb_rows(&o[0], &o[1]);
    sim_opnd_mark(&o[1]);
    rc = 0;
done:
    free_opnds(o, 2);
    return rc;
}

/* partitions 0, 16, ..., 112 only: indices (+offset) of the nonzero
 * elements, padding, then the count */
static void nzc_rows(const isa_fmt_NZC_t *f, const sim_opnd_t *in, const sim_opnd_t *out)
{
    uint32_t n = in->nfree;
    for (unsigned p = 0; p < in->nparts; p++) {
        if ((in->start + p) % 16)
            continue;
        uint32_t cnt = 0;
        for (uint32_t i = 0; i < n; i++)
            if (num_load_f32(sim_el(in, p, i), in->dtype) != 0.0f)
                store_i(out, p, cnt++, (int64_t)i + f->offset);
        for (uint32_t i = cnt; i < n; i++)
            store_i(out, p, i, f->pad);
        store_i(out, p, n, cnt);
    }
}

static int exec_nonzero(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_NZC_t *f = &d->inst.f.NZC;
    sim_opnd_t o[2];
    sim_opnds_none(o, 2);
    int rc = -1;
    if (in_out_sized(ctx, o, &f->in, &f->out, 1, 1, "one more than in"))
        goto done;
    if (o[1].dtype != ISA_DT_INT32) {
        sim_fail(ctx, "out: dtype %s (int32)", isa_dtype_numpy_name(o[1].dtype));
        goto done;
    }
    if (!ctx->timing_only)
        nzc_rows(f, &o[0], &o[1]);
    sim_opnd_mark(&o[1]);
    rc = 0;
done:
    free_opnds(o, 2);
    return rc;
}

typedef struct {
    float v;
    uint32_t i;
} topk_el_t;

/* larger first (NaN above every number), then the smaller index */
static int topk_cmp(const void *pa, const void *pb)
{
    const topk_el_t *a = pa, *b = pb;
    bool na = isnan(a->v), nb = isnan(b->v);
    if (na != nb)
        return na ? -1 : 1;
    if (!na && a->v != b->v)
        return a->v > b->v ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* each 16-partition group: the snake e -> (partition e % 16, column e / 16),
 * e < n; the k largest written to every partition of the group, ascending */
static int topk_rows(sim_exec_ctx_t *ctx, const isa_fmt_TOPK_t *f, const sim_opnd_t *o)
{
    uint32_t n = f->n, k = o[1].nfree;
    topk_el_t *el = malloc((size_t)n * sizeof *el);
    if (!el)
        return sim_fail_data(ctx, "n: out of memory for %u elements", n);
    for (unsigned g = 0; g < o[0].nparts; g += 16) {
        for (uint32_t e = 0; e < n; e++) {
            el[e].v = num_load_f32(sim_el(&o[0], g + e % 16, e / 16), o[0].dtype);
            el[e].i = e;
        }
        qsort(el, n, sizeof *el, topk_cmp);
        for (unsigned r = 0; r < 16; r++)
            for (uint32_t j = 0; j < k; j++) {
                num_store_f32(sim_el(&o[1], g + r, j), o[1].dtype, el[k - 1 - j].v);
                num_store_i64_wrap(sim_el(&o[2], g + r, j), o[2].dtype, el[k - 1 - j].i);
            }
    }
    free(el);
    return 0;
}

static int topk_check(sim_exec_ctx_t *ctx, const isa_fmt_TOPK_t *f, const sim_opnd_t *o)
{
    uint32_t k = o[1].nfree;
    if (o[0].start % 16 || o[0].nparts % 16)
        return sim_fail(ctx, "in: partitions %u..%u are not whole 16-partition groups",
                        o[0].start, o[0].start + o[0].nparts - 1);
    if (o[1].nparts != o[0].nparts || o[2].nparts != o[0].nparts || o[2].nfree != k)
        return sim_fail(ctx, "idx: out and idx must be %u x %u like out", o[0].nparts, k);
    if (f->n < 8 || f->n >= 65536 || (uint64_t)f->n > 16ull * o[0].nfree)
        return sim_fail(ctx, "n: %u outside 8..65535 or beyond the %u columns of in", f->n,
                        o[0].nfree);
    if (k < 1 || k >= 32768 || k > f->n)
        return sim_fail(ctx, "out: k = %u (1 <= k < 32768, k <= n = %u)", k, f->n);
    return 0;
}

static int exec_topk(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_TOPK_t *f = &d->inst.f.TOPK;
    sim_opnd_t o[3];
    sim_opnds_none(o, 3);
    int rc = -1;
    if (sim_opnd_tap(ctx, &o[0], &f->in, "in", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], &f->out, "out", SIM_WR) ||
        sim_opnd_tap(ctx, &o[2], &f->idx, "idx", SIM_WR) || topk_check(ctx, f, o))
        goto done;
    if (!ctx->timing_only && topk_rows(ctx, f, o))
        goto done;
    sim_opnd_mark(&o[1]);
    sim_opnd_mark(&o[2]);
    rc = 0;
done:
    free_opnds(o, 3);
    return rc;
}

/* COST: no published figure for sequence_bounds / nonzero_with_count: the
 * GpSimd rule, startup + N (hardware-facts). */
static uint64_t cost_sequence_bounds(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    return sim_cost_pool(t, sim_tap_n(&d->inst.f.COPY.in));
}

static uint64_t cost_nonzero(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    return sim_cost_pool(t, sim_tap_n(&d->inst.f.NZC.in));
}

/* COST topk: 4n + K cycles (hardware-facts, STUB), plus the startup. */
static uint64_t cost_topk(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    return sim_cost_pool(t, 4ull * d->inst.f.TOPK.n + sim_tap_n(&d->inst.f.TOPK.out));
}

static const sim_opimpl_t impl_seqb = { exec_sequence_bounds, cost_sequence_bounds };
static const sim_opimpl_t impl_nzc = { exec_nonzero, cost_nonzero };
static const sim_opimpl_t impl_topk = { exec_topk, cost_topk };

const sim_opimpl_t *sim_pool_seq_impl(isa_op_t op)
{
    switch (op) {
    case ISA_OP_GET_SEQUENCE_BOUNDS: return &impl_seqb;
    case ISA_OP_NONZERO_WITH_COUNT: return &impl_nzc;
    case ISA_OP_TOPK: return &impl_topk;
    default: return NULL;
    }
}
