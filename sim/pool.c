/* pool.c - GpSimd (Pool) engine ops: TensorPartitionReduce, Iota,
 * AffineSelect, IndirectCopy, PoolGather, and the affine predicate shared
 * with the PredExt-folded TensorScalarPtr.  Pool has no PSUM port (checked
 * by the operand resolver).  Semantics: docs/semantics.md. */
#include <stdlib.h>
#include <string.h>

#include "ops.h"

#define POOL_CORE_PARTS 16     /* partitions per GpSimd core */
#define ICOPY_MAX_VALID 4096   /* seeds 004: indices per core */

/* offset + cm*p + sum(step_d * idx_d) with idx over t's free dims (dim 0
 * innermost) of flattened element `flat`; int32 wrap-around. */
int64_t sim_affine_value(int32_t offset, int32_t cm, const int32_t step[4], unsigned p,
                         const isa_tap_t *t, uint32_t flat)
{
    int64_t v = (int64_t)offset + (int64_t)cm * p;
    for (unsigned d = 0; d < t->ndims && d < 4; d++) {
        uint32_t idx = flat % t->count[d];
        flat /= t->count[d];
        v += (int64_t)step[d] * idx;
    }
    return (int32_t)(uint32_t)(uint64_t)v;
}

static void free_all(sim_opnd_t *o, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        sim_opnd_free(&o[i]);
}

/* ---- TensorPartitionReduce: out[0][f] = fold_p in[p][f] ---- */

/* Row fast path (fp32/bf16, out disjoint from in): fold whole rows of the
 * partitions in order, the same fp32 steps as the element loop. */
typedef struct {
    const sim_opnd_t *o;   /* o[0] in, o[1] out */
    unsigned op;
} pred_rows_t;

static void pred_row(void *arg, unsigned p, uint32_t i, uint32_t n)
{
    const pred_rows_t *r = arg;
    float acc[SIM_ROW_MAX], x[SIM_ROW_MAX];
    (void)p; /* out has one partition */
    sim_row_load(acc, &r->o[0], 0, i, n);
    for (unsigned q = 1; q < r->o[0].nparts; q++) {
        sim_row_load(x, &r->o[0], q, i, n);
        sim_row_alu(r->op, acc, acc, x, n);
    }
    sim_row_store(&r->o[1], 0, i, acc, n);
}

static int exec_partition_reduce(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_PRED_t *f = &d->inst.f.PRED;
    sim_opnd_t o[2];
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    int rc = -1;
    if (!sim_alu_valid(f->op) || !sim_alu_is_reduce(f->op))
        return sim_fail(ctx, "op: %u is not a reduction op", f->op);
    if (sim_opnd_tap(ctx, &o[0], &f->in, "in", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], &f->out, "out", SIM_WR))
        goto done;
    if (o[1].nparts != 1 || o[1].nfree != o[0].nfree) {
        sim_fail(ctx, "out: expected 1 partition x %u elements, got %u x %u", o[0].nfree,
                 o[1].nparts, o[1].nfree);
        goto done;
    }
    const sim_opnd_t *ins[1] = { &o[0] };
    uint32_t len = ctx->timing_only || sim_alu_is_bitwise(f->op) ? 0 : sim_row_len(&o[1], ins, 1);
    if (len) {
        pred_rows_t r = { o, f->op };
        sim_rows_each(&o[1], len, pred_row, &r);
    } else if (!ctx->timing_only)
        for (uint32_t i = 0; i < o[0].nfree; i++) {
            sim_val_t r = sim_val_load(sim_el(&o[0], 0, i), o[0].dtype);
            for (unsigned p = 1; p < o[0].nparts; p++)
                r = sim_alu(f->op, r, sim_val_load(sim_el(&o[0], p, i), o[0].dtype));
            sim_val_store(sim_el(&o[1], 0, i), o[1].dtype, r);
        }
    sim_opnd_mark(&o[1]);
    rc = 0;
done:
    free_all(o, 2);
    return rc;
}

/* Derived: each core folds its 16 partitions, then the 8 partials. */
static uint64_t cost_partition_reduce(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    const isa_tap_t *in = &d->inst.f.PRED.in;
    uint64_t groups = (in->nparts + POOL_CORE_PARTS - 1) / POOL_CORE_PARTS;
    uint64_t per_core = in->nparts < POOL_CORE_PARTS ? in->nparts : POOL_CORE_PARTS;
    return sim_cost_pool(t, sim_tap_n(in) * (per_core + groups));
}

/* ---- Iota ---- */

static int exec_iota(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_IOTA_t *f = &d->inst.f.IOTA;
    sim_opnd_t o;
    if (sim_opnd_tap(ctx, &o, &f->out, "out", SIM_WR))
        return -1;
    const int32_t steps[4] = { f->step0, f->step1, f->step2, f->step3 };
    if (!ctx->timing_only)
        for (unsigned p = 0; p < o.nparts; p++)
            for (uint32_t i = 0; i < o.nfree; i++)
                num_store_i64_wrap(sim_el(&o, p, i), o.dtype,
                                   sim_affine_value(f->offset, f->cm, steps, p, &o.tap, i));
    sim_opnd_mark(&o);
    sim_opnd_free(&o);
    return 0;
}

static uint64_t cost_iota(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    return sim_cost_pool(t, sim_tap_n(&d->inst.f.IOTA.out));
}

/* ---- AffineSelect: out = pred xor rev_pred ? in : fill ---- */

static int exec_affine_select(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_AFSEL_t *f = &d->inst.f.AFSEL;
    sim_opnd_t o[2];
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    int rc = -1;
    if (f->cmp > ISA_CMP_LT)
        return sim_fail(ctx, "cmp: invalid comparison %u", f->cmp);
    if (sim_opnds_in_out(ctx, o, &f->in, &f->out))
        goto done;
    const int32_t steps[4] = { f->step0, f->step1, f->step2, f->step3 };
    if (!ctx->timing_only)
        for (unsigned p = 0; p < o[1].nparts; p++)
            for (uint32_t i = 0; i < o[1].nfree; i++) {
                int64_t a = sim_affine_value(f->offset, f->cm, steps, p, &o[1].tap, i);
                bool keep = isa_cmp_holds(f->cmp, a, 0) != (bool)f->rev_pred;
                sim_val_t v = keep ? sim_val_load(sim_el(&o[0], p, i), o[0].dtype)
                                   : sim_val_f(f->fill);
                sim_val_store(sim_el(&o[1], p, i), o[1].dtype, v);
            }
    sim_opnd_mark(&o[1]);
    rc = 0;
done:
    free_all(o, 2);
    return rc;
}

static uint64_t cost_affine_select(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    return sim_cost_pool(t, sim_tap_n(&d->inst.f.AFSEL.out));
}

/* ---- IndirectCopy: local gather inside each 16-partition core ---- */

static int check_core_aligned(sim_exec_ctx_t *ctx, const sim_opnd_t *o)
{
    if (o->start % POOL_CORE_PARTS || o->nparts % POOL_CORE_PARTS)
        return sim_fail(ctx, "%s: IndirectCopy works on whole 16-partition Pool cores "
                        "(start %u, %u partitions)", o->name, o->start, o->nparts);
    return 0;
}

static int exec_indirect_copy(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_ICOPY_t *f = &d->inst.f.ICOPY;
    sim_opnd_t o[3]; /* src, idx, out */
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    int rc = -1;
    unsigned e = f->elems_per_idx;
    if (e != 1 && e != 2 && e != 4 && e != 8 && e != 16 && e != 32)
        return sim_fail(ctx, "elems_per_idx: num_elem_per_idx must be one of [1, 2, 4, 8, 16, 32]");
    if (f->num_valid > ICOPY_MAX_VALID)
        return sim_fail(ctx, "num_valid: number of indices per core must be <= 4096");
    if (sim_opnd_tap(ctx, &o[0], &f->src, "src", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], &f->idx, "idx", SIM_RD) ||
        sim_opnd_tap(ctx, &o[2], &f->out, "out", SIM_WR) || check_core_aligned(ctx, &o[0]) ||
        check_core_aligned(ctx, &o[1]) || check_core_aligned(ctx, &o[2]))
        goto done;
    if (o[0].nparts != o[1].nparts || o[2].nparts != o[0].nparts) {
        sim_fail(ctx, "idx: src_buffer and index must have same partition dimension size "
                 "(src %u, idx %u, out %u)", o[0].nparts, o[1].nparts, o[2].nparts);
        goto done;
    }
    if (isa_dtype_kind(o[1].dtype) == ISA_DK_F) {
        sim_fail(ctx, "idx: indices need an integer dtype (uint16), not %s",
                 isa_dtype_name(o[1].dtype));
        goto done;
    }
    uint64_t per_core_idx = (uint64_t)POOL_CORE_PARTS * o[1].nfree;
    if (f->num_valid > per_core_idx) {
        sim_fail(ctx, "num_valid: num_valid_indices cannot exceed total indices per core "
                 "(%u > %llu)", f->num_valid, (unsigned long long)per_core_idx);
        goto done;
    }
    uint32_t nvalid = f->num_valid ? f->num_valid : (uint32_t)per_core_idx;
    if ((uint64_t)nvalid * e != o[2].nfree) {
        sim_fail(ctx, "out: %u elements per partition; %u indices x %u elements need %llu",
                 o[2].nfree, nvalid, e, (unsigned long long)nvalid * e);
        goto done;
    }
    if (o[0].dtype != o[2].dtype) {
        sim_fail(ctx, "out: IndirectCopy copies bits; src is %s but out is %s",
                 isa_dtype_name(o[0].dtype), isa_dtype_name(o[2].dtype));
        goto done;
    }
    /* NKI semantics (the SDK's NumPy reference): a core's indices are its 16
     * idx partitions flattened partition-first (column-major); index j is an
     * element offset into each partition's own free data, and partition p
     * gets out[p][j*e + x] = src[p][idx_j + x]. */
    for (unsigned c = 0; c < o[0].nparts / POOL_CORE_PARTS; c++) {
        unsigned base = c * POOL_CORE_PARTS;
        for (uint32_t j = 0; j < nvalid; j++) {
            unsigned ip = base + j % POOL_CORE_PARTS;
            uint32_t ie = j / POOL_CORE_PARTS;
            int64_t k = num_load_i64(sim_el(&o[1], ip, ie), o[1].dtype);
            if (k < 0 || (uint64_t)k + e > o[0].nfree) {
                sim_fail_data(ctx, "idx: partition %u element %u: offset %lld + %u elements outside "
                         "the %u elements of a src partition", o[1].start + ip, ie,
                         (long long)k, e, o[0].nfree);
                goto done;
            }
            if (ctx->timing_only)
                continue;
            for (unsigned p = base; p < base + POOL_CORE_PARTS; p++)
                for (unsigned x = 0; x < e; x++) /* same dtype: a bit copy */
                    sim_copy_elem(&o[0], p, (uint32_t)k + x, &o[2], p, j * e + x);
        }
    }
    sim_opnd_mark(&o[2]);
    rc = 0;
done:
    free_all(o, 3);
    return rc;
}

/* COST local_gather: 150 + nidx*nelem / C; C = 16 elements per core-cycle
 * (512-bit SIMD of 32-bit lanes, ARCH2), derived.  Each of a core's 16
 * partitions receives nidx*nelem elements, so a core moves 16*nidx*nelem. */
static uint64_t cost_indirect_copy(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    const isa_fmt_ICOPY_t *f = &d->inst.f.ICOPY;
    uint64_t nv = f->num_valid ? f->num_valid : (uint64_t)POOL_CORE_PARTS * sim_tap_n(&f->idx);
    uint64_t n = nv * f->elems_per_idx * POOL_CORE_PARTS;
    return sim_cost_pool(t, (n + 15) / 16);
}

/* ---- PoolGather: out[p][j] = data[p][idx[p][j]] ---- */

static int exec_pool_gather(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_PGATH_t *f = &d->inst.f.PGATH;
    sim_opnd_t o[3];
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    int rc = -1;
    if (sim_opnd_tap(ctx, &o[0], &f->data, "data", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], &f->idx, "idx", SIM_RD) ||
        sim_opnd_tap(ctx, &o[2], &f->out, "out", SIM_WR) || sim_same_shape(ctx, &o[2], &o[1]))
        goto done;
    if (o[0].nparts != o[1].nparts) {
        sim_fail(ctx, "idx: %u partitions but data has %u", o[1].nparts, o[0].nparts);
        goto done;
    }
    if (o[1].dtype != ISA_DT_UINT32) {
        sim_fail(ctx, "idx: PoolGather indices are uint32, not %s", isa_dtype_name(o[1].dtype));
        goto done;
    }
    for (unsigned p = 0; p < o[1].nparts; p++)
        for (uint32_t j = 0; j < o[1].nfree; j++) {
            int64_t k = num_load_i64(sim_el(&o[1], p, j), o[1].dtype);
            if (k >= (int64_t)o[0].nfree) {
                sim_fail_data(ctx, "idx: partition %u element %u: index %lld outside data's %u "
                         "elements", o[1].start + p, j, (long long)k, o[0].nfree);
                goto done;
            }
            if (ctx->timing_only)
                continue;
            sim_copy_elem(&o[0], p, (uint32_t)k, &o[2], p, j);
        }
    sim_opnd_mark(&o[2]);
    rc = 0;
done:
    free_all(o, 3);
    return rc;
}

static uint64_t cost_pool_gather(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    return sim_cost_pool(t, sim_tap_n(&d->inst.f.PGATH.idx));
}

static const sim_opimpl_t impl_pred = { exec_partition_reduce, cost_partition_reduce };
static const sim_opimpl_t impl_iota = { exec_iota, cost_iota };
static const sim_opimpl_t impl_afsel = { exec_affine_select, cost_affine_select };
static const sim_opimpl_t impl_icopy = { exec_indirect_copy, cost_indirect_copy };
static const sim_opimpl_t impl_pgath = { exec_pool_gather, cost_pool_gather };

const sim_opimpl_t *sim_pool_impl(isa_op_t op)
{
    switch (op) {
    case ISA_OP_TENSOR_PARTITION_REDUCE: return &impl_pred;
    case ISA_OP_IOTA: return &impl_iota;
    case ISA_OP_AFFINE_SELECT: return &impl_afsel;
    case ISA_OP_INDIRECT_COPY: return &impl_icopy;
    case ISA_OP_POOL_GATHER: return &impl_pgath;
    default: return NULL;
    }
}
