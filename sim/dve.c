/* dve.c - Vector engine (DVE) compute ops: semantics and cost, one exec
 * body and one cost function per opcode.  Ops that are also legal on
 * Activation/Pool (TensorCopy, TensorTensor, TensorScalar[Ptr],
 * TensorReduce, Memset) live here, their primary engine.  TensorLoad (legal
 * on every engine) lives here too.  The other DVE ops: dve_max8.c (Max8
 * family), dve_move.c (Transpose32, StreamShuffle, Dropout), dve_bn.c,
 * dve_sel.c.  Semantics: docs/semantics.md; costs: docs/timing-compute.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dve_int.h"

/* ------------------------------------------------------------------ */
/* shared pieces                                                        */

/* A TensorScalar-style scalar: an immediate (32 bits) or a per-partition
 * pointer element. */
typedef struct {
    bool is_ptr;
    uint32_t bits;         /* the immediate */
    sim_opnd_t o;          /* the pointer operand when is_ptr */
} scalar_t;

/* A pointer scalar covers the partitions of out (the engine's lanes; an
 * input moved across quadrants/halves does not move it). */
static int scalar_setup(sim_exec_ctx_t *ctx, scalar_t *s, uint32_t bits, bool is_ptr,
                        const sim_opnd_t *first, const char *name)
{
    /* s->o: marked absent by the caller (sim_opnds_absent) before anything can fail */
    s->is_ptr = is_ptr;
    s->bits = bits;
    if (!is_ptr)
        return 0;
    isa_ptr_t p = sim_ptr_from_bits(bits);
    return sim_opnd_ptr(ctx, &s->o, &p, first->start, first->nparts, 1, name, SIM_RD);
}

static sim_val_t scalar_get(const scalar_t *s, unsigned p)
{
    return s->is_ptr ? sim_val_load(sim_el(&s->o, p, 0), s->o.dtype) : sim_val_imm(s->bits);
}

/* The scalar of partition p as fp32 (the row fast paths). */
static float scalar_get_f(const scalar_t *s, unsigned p)
{
    return s->is_ptr ? sim_val_as_f(scalar_get(s, p)) : sim_f32_from_bits(s->bits);
}

static int check_alu(sim_exec_ctx_t *ctx, unsigned op, const char *field)
{
    if (!sim_alu_valid(op))
        return sim_fail(ctx, "%s: invalid ALU op %u", field, op);
    return 0;
}

/* Two inputs and an output "out" of the same shape: o[0], o[1], o[2]. */
static int opnds_two_in(sim_exec_ctx_t *ctx, sim_opnd_t o[3], const isa_tap_t *a, const char *an,
                        const isa_tap_t *b, const char *bn, const isa_tap_t *out)
{
    if (sim_opnd_tap(ctx, &o[0], a, an, SIM_RD) || sim_opnd_tap(ctx, &o[1], b, bn, SIM_RD) ||
        sim_opnd_tap(ctx, &o[2], out, "out", SIM_WR))
        return -1;
    return sim_same_shape(ctx, &o[2], &o[0]) || sim_same_shape(ctx, &o[2], &o[1]) ? -1 : 0;
}

/* DVE perf mode (ARCH3): 16-bit float in and out; f*f when both in SBUF and
 * contiguous in the innermost dim, else f.  f = 1 on targets without it. */
static uint64_t perf_div(const tpb_target_t *t, const isa_tap_t *in, const isa_tap_t *out)
{
    unsigned f = t->dve_perf_mode_factor;
    if (f <= 1 || !sim_dt_is_perf(t, in->dtype) || !sim_dt_is_perf(t, out->dtype))
        return 1;
    bool contig = (in->ndims == 0 || in->step[0] == 1 || in->count[0] <= 1) &&
                  (out->ndims == 0 || out->step[0] == 1 || out->count[0] <= 1);
    bool sbuf = in->space == ISA_SPACE_SBUF && out->space == ISA_SPACE_SBUF;
    return (contig && sbuf) ? (uint64_t)f * f : f;
}


/* ------------------------------------------------------------------ */
/* TensorCopy                                                           */

/* Row fast path (fp32/bf16): o[0] in, o[1] out. */
typedef struct {
    const sim_opnd_t *o;
    bool via_f32;
} copy_rows_t;

static void copy_row(void *arg, unsigned p, uint32_t i, uint32_t n)
{
    const copy_rows_t *r = arg;
    if (r->o[0].dtype == r->o[1].dtype && !r->via_f32) { /* bit-exact copy */
        memmove(sim_el(&r->o[1], p, i), sim_el(&r->o[0], p, i), (size_t)n * r->o[0].esize);
        return;
    }
    float x[SIM_ROW_MAX];
    sim_row_load(x, &r->o[0], p, i, n);
    sim_row_store(&r->o[1], p, i, x, n);
}

static int exec_tensor_copy(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_COPY_t *f = &d->inst.f.COPY;
    sim_opnd_t o[2];
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    int rc = -1;
    if (sim_opnds_in_out(ctx, o, &f->in, &f->out))
        goto done;
    const sim_opnd_t *ins[1] = { &o[0] };
    uint32_t len = ctx->timing_only ? 0 : sim_row_len(&o[1], ins, 1);
    if (len) {
        copy_rows_t r = { o, ctx->engine == ISA_ENG_ACT };
        const sim_opnd_t *all[2] = { &o[0], &o[1] };
        /* a copy: ~0.15 ns per fp32 element, weight 1/2 (SIM_ROWS_SPLIT) */
        uint64_t work = sim_opnd_elems(&o[1]) / 2;
        unsigned parts = sim_rows_parts(ctx, all, 2, o[1].nparts, work);
        sim_rows_each_split(ctx->pool, parts, &o[1], len, copy_row, &r);
    } else if (!ctx->timing_only) {
        /* Activation computes through fp32; DVE/Pool copy integers exactly. */
        bool via_f32 = ctx->engine == ISA_ENG_ACT;
        for (unsigned p = 0; p < o[0].nparts; p++)
            for (uint32_t i = 0; i < o[0].nfree; i++) {
                if (via_f32)
                    num_store_f32(sim_el(&o[1], p, i), o[1].dtype,
                                  num_load_f32(sim_el(&o[0], p, i), o[0].dtype));
                else
                    sim_copy_elem(&o[0], p, i, &o[1], p, i);
            }
    }
    sim_opnd_mark(&o[1]);
    rc = 0;
done:
    free_all(o, 2);
    return rc;
}

/* Whether a DVE instruction runs in perf mode (ARCH3: the hardware
 * enables it when the conditions hold): TensorCopy and TensorScalar with
 * 16-bit float input and output (perf_div), TensorTensor with both inputs
 * in SBUF and every operand 16-bit float. */
bool sim_dve_perf_mode(const tpb_target_t *t, const isa_decoded_t *d)
{
    if (t->dve_perf_mode_factor <= 1)
        return false;
    const isa_fmt_TT_t *tt = &d->inst.f.TT;
    switch (d->inst.op) {
    case ISA_OP_TENSOR_COPY:
        return perf_div(t, &d->inst.f.COPY.in, &d->inst.f.COPY.out) > 1;
    case ISA_OP_TENSOR_SCALAR:
    case ISA_OP_TENSOR_SCALAR_PTR:
        return perf_div(t, &d->inst.f.TS.in, &d->inst.f.TS.out) > 1;
    case ISA_OP_TENSOR_TENSOR:
        return tt->in0.space == ISA_SPACE_SBUF && tt->in1.space == ISA_SPACE_SBUF &&
               sim_dt_is_perf(t, tt->in0.dtype) && sim_dt_is_perf(t, tt->in1.dtype) &&
               sim_dt_is_perf(t, tt->out.dtype);
    default:
        return false;
    }
}

static uint64_t cost_tensor_copy(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    const isa_fmt_COPY_t *f = &d->inst.f.COPY;
    uint64_t n = sim_tap_n(&f->out);
    if (e != ISA_ENG_DVE)
        return sim_cost_engine(t, e, n);
    return sim_cost_dve(t, dve_work(n, &f->in, &f->out, NULL, perf_div(t, &f->in, &f->out)));
}

/* ------------------------------------------------------------------ */
/* TensorTensor / TensorTensorBitVec                                    */

/* Row fast path: o[0] in0, o[1] in1, o[2] out. */
typedef struct {
    const sim_opnd_t *o;
    unsigned op;
} tt_rows_t;

static void tt_row(void *arg, unsigned p, uint32_t i, uint32_t n)
{
    const tt_rows_t *r = arg;
    float a[SIM_ROW_MAX], b[SIM_ROW_MAX];
    sim_row_load(a, &r->o[0], p, i, n);
    sim_row_load(b, &r->o[1], p, i, n);
    sim_row_alu(r->op, a, a, b, n);
    sim_row_store(&r->o[2], p, i, a, n);
}

static bool is_i32(unsigned dt) { return dt == ISA_DT_INT32 || dt == ISA_DT_UINT32; }

/* Pool computes TensorTensor natively in integers when every operand is
 * int32/uint32 (NKI tensor_tensor's GpSimd path); DVE always in fp32. */
static bool tt_native_int(const sim_exec_ctx_t *ctx, unsigned op, const sim_opnd_t *o)
{
    return ctx->engine == ISA_ENG_POOL && sim_alu_native_int_op(op) &&
           is_i32(o[0].dtype) && is_i32(o[1].dtype) && is_i32(o[2].dtype);
}

static sim_val_t tt_alu(bool native, unsigned op, sim_val_t a, sim_val_t b)
{
    return native ? sim_alu_native_int(op, a.i, b.i) : sim_alu(op, a, b);
}

static int tt_common(sim_exec_ctx_t *ctx, const isa_decoded_t *d, bool bitvec)
{
    const isa_fmt_TT_t *f = &d->inst.f.TT;
    sim_opnd_t o[3];
    sim_opnds_absent(o, sizeof o / sizeof o[0]);
    int rc = -1;
    if (check_alu(ctx, f->op, "op"))
        return -1;
    if (bitvec && !sim_alu_is_bitwise(f->op))
        return sim_fail(ctx, "op: TensorTensorBitVec needs a bitwise op, not %s",
                        isa_enum_name(ISA_FT_ALU, f->op));
    if (opnds_two_in(ctx, o, &f->in0, "in0", &f->in1, "in1", &f->out))
        goto done;
    if (o[0].space == ISA_SPACE_PSUM && o[1].space == ISA_SPACE_PSUM) {
        sim_fail(ctx, "in0, in1: both inputs cannot be in psum");
        goto done;
    }
    if (bitvec)
        for (unsigned k = 0; k < 3; k++)
            if (isa_dtype_kind(o[k].dtype) == ISA_DK_F) {
                sim_fail(ctx, "%s: TensorTensorBitVec needs integer dtypes, not %s",
                         o[k].name, isa_dtype_name(o[k].dtype));
                goto done;
            }
    const sim_opnd_t *ins[2] = { &o[0], &o[1] };
    bool native = !bitvec && tt_native_int(ctx, f->op, o);
    uint32_t len = ctx->timing_only || native || sim_alu_is_bitwise(f->op)
                       ? 0 : sim_row_len(&o[2], ins, 2);
    if (len) {
        tt_rows_t r = { o, f->op };
        const sim_opnd_t *all[3] = { &o[0], &o[1], &o[2] };
        unsigned parts = sim_rows_parts(ctx, all, 3, o[2].nparts, sim_opnd_elems(&o[2]));
        sim_rows_each_split(ctx->pool, parts, &o[2], len, tt_row, &r);
    } else if (!ctx->timing_only)
        for (unsigned p = 0; p < o[2].nparts; p++)
            for (uint32_t i = 0; i < o[2].nfree; i++) {
                sim_val_t a = sim_val_load(sim_el(&o[0], p, i), o[0].dtype);
                sim_val_t b = sim_val_load(sim_el(&o[1], p, i), o[1].dtype);
                sim_val_store(sim_el(&o[2], p, i), o[2].dtype, tt_alu(native, f->op, a, b));
            }
    sim_opnd_mark(&o[2]);
    rc = 0;
done:
    free_all(o, 3);
    return rc;
}

static int exec_tensor_tensor(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    return tt_common(ctx, d, false);
}

static int exec_tt_bitvec(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    return tt_common(ctx, d, true);
}

static uint64_t cost_tensor_tensor(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    const isa_fmt_TT_t *f = &d->inst.f.TT;
    uint64_t n = sim_tap_n(&f->out);
    if (e == ISA_ENG_POOL)
        return sim_cost_pool(t, 2 * n);
    bool psum_in = f->in0.space == ISA_SPACE_PSUM || f->in1.space == ISA_SPACE_PSUM;
    bool all16 = sim_dt_is_perf(t, f->in0.dtype) && sim_dt_is_perf(t, f->in1.dtype) &&
                 sim_dt_is_perf(t, f->out.dtype);
    bool allbf16 = f->in0.dtype == ISA_DT_BF16 && f->in1.dtype == ISA_DT_BF16 &&
                   f->out.dtype == ISA_DT_BF16;
    bool simple = f->op == ISA_ALU_ADD || f->op == ISA_ALU_SUBTRACT || f->op == ISA_ALU_MULTIPLY;
    bool contig = !sim_tap_strided(&f->in0) && !sim_tap_strided(&f->in1) &&
                  !sim_tap_strided(&f->out);
    uint64_t work = 2 * n;
    if (psum_in || (allbf16 && simple && contig) ||
        (all16 && !psum_in && t->dve_perf_mode_factor > 1))
        work = n;
    if (f->op == ISA_ALU_RECIPROCAL)
        work *= 8;
    return sim_cost_dve(t, dve_work(work, &f->in0, &f->in1, &f->out, 1));
}

/* ------------------------------------------------------------------ */
/* TensorScalar / TensorScalarPtr (+ folded PredExt)                    */

/* The instruction's PredExt predicates, steps unpacked once. */
typedef struct {
    unsigned n;
    const isa_fmt_PREDEXT_t *p[ISA_MAX_PREDEXT];
    int32_t steps[ISA_MAX_PREDEXT][4];
} preds_t;

static void preds_init(preds_t *ps, const isa_decoded_t *d)
{
    ps->n = d->has_pred ? 1u + d->npred_more : 0;
    for (unsigned q = 0; q < ps->n && q < ISA_MAX_PREDEXT; q++) {
        const isa_fmt_PREDEXT_t *pq = q ? &d->pred_more[q - 1] : &d->pred;
        ps->p[q] = pq;
        ps->steps[q][0] = pq->step0, ps->steps[q][1] = pq->step1;
        ps->steps[q][2] = pq->step2, ps->steps[q][3] = pq->step3;
    }
}

/* Every predicate holds at (p, i), each after its rev_pred: the lane is
 * selected (several PredExt are ANDed). */
static bool preds_hold(const preds_t *ps, unsigned p, const isa_tap_t *out, uint32_t i)
{
    for (unsigned q = 0; q < ps->n; q++) {
        const isa_fmt_PREDEXT_t *pq = ps->p[q];
        int64_t a = sim_affine_value(pq->offset, pq->cm, ps->steps[q], p, out, i);
        if (isa_cmp_holds(pq->cmp, a, 0) == (bool)pq->rev_pred)
            return false;
    }
    return true;
}

/* Row fast path (no predicate, arithmetic ops): o[0] in, o[1] out. */
typedef struct {
    const sim_opnd_t *o;
    const scalar_t *s0, *s1;
    unsigned op0, op1;
    bool rev0, rev1;
    uint32_t len;          /* sim_row_len */
    float a0, a1;          /* the scalars of the current partition */
} ts_rows_t;

static void ts_row(void *arg, unsigned p, uint32_t i, uint32_t n)
{
    ts_rows_t *r = arg;
    float x[SIM_ROW_MAX];
    if (i == 0) { /* read once per partition, before any of its writes */
        r->a0 = scalar_get_f(r->s0, p);
        r->a1 = scalar_get_f(r->s1, p);
    }
    sim_row_load(x, &r->o[0], p, i, n);
    sim_row_alu_s(r->op0, x, x, r->a0, r->rev0, n);
    if (r->op1 != ISA_ALU_BYPASS || r->rev1) /* x bypass s: x unchanged */
        sim_row_alu_s(r->op1, x, x, r->a1, r->rev1, n);
    sim_row_store(&r->o[1], p, i, x, n);
}

/* Partitions [p0, p1) of the row path, with this part's own copy of the
 * per-partition scalars. */
static void ts_span(void *arg, unsigned part, unsigned p0, unsigned p1)
{
    (void)part;
    ts_rows_t r = *(const ts_rows_t *)arg;
    for (unsigned p = p0; p < p1; p++)
        sim_rows_part(&r.o[1], r.len, p, ts_row, &r);
}

static int exec_ts_common(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_TS_t *f = &d->inst.f.TS;
    sim_opnd_t o[2];
    scalar_t s0, s1;
    sim_opnds_absent(o, sizeof o / sizeof o[0]);
    sim_opnds_absent(&s0.o, 1);
    sim_opnds_absent(&s1.o, 1);
    int rc = -1;
    if (check_alu(ctx, f->op0, "op0") || check_alu(ctx, f->op1, "op1"))
        return -1;
    if ((f->s0_is_ptr || f->s1_is_ptr) && d->inst.op == ISA_OP_TENSOR_SCALAR)
        return sim_fail(ctx, "s0_is_ptr/s1_is_ptr: per-partition scalars need TensorScalarPtr");
    if (ctx->engine == ISA_ENG_ACT && (sim_alu_is_bitwise(f->op0) || sim_alu_is_bitwise(f->op1)))
        return sim_fail(ctx, "op0/op1: bitwise ops run on DVE or Pool, not Activation");
    uint32_t s0bits = f->s0;
    if (f->s0_reg_en) {   /* TensorScalarGEP: the pointer moved by a register */
        if (!f->s0_is_ptr)
            return sim_fail(ctx, "s0_reg_en: the register offsets a pointer s0 (s0_is_ptr)");
        if (f->s0_reg >= ISA_NUM_REGS)
            return sim_fail(ctx, "s0_reg: register %u out of range 0..%d", f->s0_reg,
                            ISA_NUM_REGS - 1);
        isa_ptr_t p = sim_ptr_from_bits(f->s0);
        int64_t a = (int64_t)p.addr +
                    (int64_t)(int32_t)ctx->regs[f->s0_reg] * (int64_t)isa_dtype_size(p.dtype);
        if (a < 0 || a > 0xFFFFFF)
            return sim_fail_data(ctx, "s0_reg: r%u = %d moves s0 to byte %lld, outside a partition",
                            f->s0_reg, (int32_t)ctx->regs[f->s0_reg], (long long)a);
        s0bits = (uint32_t)a | (p.dtype & 0xFu) << 24 | (p.space & 3u) << 28;
    }
    if (sim_opnd_tap(ctx, &o[0], &f->in, "in", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], &f->out, "out", SIM_WR) || sim_same_shape(ctx, &o[1], &o[0]) ||
        scalar_setup(ctx, &s0, s0bits, f->s0_is_ptr, &o[1], "s0") ||
        scalar_setup(ctx, &s1, f->s1, f->s1_is_ptr, &o[1], "s1"))
        goto done;
    for (unsigned q = 0; d->has_pred && q <= d->npred_more; q++) {
        const isa_fmt_PREDEXT_t *pq = q ? &d->pred_more[q - 1] : &d->pred;
        if (pq->cmp > ISA_CMP_LT) {
            sim_fail(ctx, "pred.cmp: invalid comparison %u (PredExt %u)", pq->cmp, q);
            goto done;
        }
    }
    const sim_opnd_t *ins[1] = { &o[0] };
    uint32_t len = ctx->timing_only || d->has_pred || sim_alu_is_bitwise(f->op0) ||
                   sim_alu_is_bitwise(f->op1) ? 0 : sim_row_len(&o[1], ins, 1);
    if (len) {
        ts_rows_t r = { o, &s0, &s1, f->op0, f->op1, f->rev0, f->rev1, len, 0.0f, 0.0f };
        const sim_opnd_t *all[4] = { &o[0], &o[1], &s0.o, &s1.o };
        unsigned parts = sim_rows_parts(ctx, all, 4, o[1].nparts, sim_opnd_elems(&o[1]));
        sim_rows_split(ctx->pool, parts, o[1].nparts, ts_span, &r);
    } else if (!ctx->timing_only) {
        sim_val_t fill = sim_val_f(d->pred.fill);
        preds_t ps;
        preds_init(&ps, d);
        bool via_f32 = ctx->engine == ISA_ENG_ACT;
        for (unsigned p = 0; p < o[1].nparts; p++) {
            sim_val_t a0 = scalar_get(&s0, p), a1 = scalar_get(&s1, p);
            for (uint32_t i = 0; i < o[1].nfree; i++) {
                uint8_t *dst = sim_el(&o[1], p, i);
                if (ps.n && !preds_hold(&ps, p, &o[1].tap, i)) {
                    if (!d->pred.keep)   /* keep (NKI mask=): out unchanged */
                        sim_val_store(dst, o[1].dtype, fill);
                    continue;
                }
                sim_val_t x = sim_val_load(sim_el(&o[0], p, i), o[0].dtype);
                if (via_f32) /* the Activation datapath is fp32 throughout */
                    x = sim_val_f(sim_val_as_f(x));
                sim_val_t r = sim_alu_rev(f->op0, x, a0, f->rev0);
                r = sim_alu_rev(f->op1, r, a1, f->rev1);
                sim_val_store(dst, o[1].dtype, r);
            }
        }
    }
    sim_opnd_mark(&o[1]);
    rc = 0;
done:
    free_all(o, 2);
    sim_opnd_free(&s0.o);
    sim_opnd_free(&s1.o);
    return rc;
}

static uint64_t cost_tensor_scalar(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    const isa_fmt_TS_t *f = &d->inst.f.TS;
    uint64_t n = sim_tap_n(&f->out);
    if (e != ISA_ENG_DVE)
        return sim_cost_engine(t, e, n);
    uint64_t work = n;
    if (f->op0 == ISA_ALU_RECIPROCAL || f->op1 == ISA_ALU_RECIPROCAL)
        work *= 8; /* DVE reciprocal is iterative: 8N (COST) */
    return sim_cost_dve(t, dve_work(work, &f->in, &f->out, NULL, perf_div(t, &f->in, &f->out)));
}

/* ------------------------------------------------------------------ */
/* ScalarTensorTensor: out = (in0 op0 s0) op1 in1                       */

/* Row fast path: o[0] in0, o[1] in1, o[2] out. */
typedef struct {
    const sim_opnd_t *o;
    const scalar_t *s0;
    unsigned op0, op1;
    bool rev0;
    uint32_t len;          /* sim_row_len */
    float a0;              /* the scalar of the current partition */
} stt_rows_t;

static void stt_row(void *arg, unsigned p, uint32_t i, uint32_t n)
{
    stt_rows_t *r = arg;
    float x[SIM_ROW_MAX], y[SIM_ROW_MAX];
    if (i == 0) /* read once per partition, before any of its writes */
        r->a0 = scalar_get_f(r->s0, p);
    sim_row_load(x, &r->o[0], p, i, n);
    sim_row_load(y, &r->o[1], p, i, n);
    sim_row_alu_s(r->op0, x, x, r->a0, r->rev0, n);
    sim_row_alu(r->op1, x, x, y, n);
    sim_row_store(&r->o[2], p, i, x, n);
}

/* Partitions [p0, p1), with this part's own copy of the scalar. */
static void stt_span(void *arg, unsigned part, unsigned p0, unsigned p1)
{
    (void)part;
    stt_rows_t r = *(const stt_rows_t *)arg;
    for (unsigned p = p0; p < p1; p++)
        sim_rows_part(&r.o[2], r.len, p, stt_row, &r);
}

static int exec_stt(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_STT_t *f = &d->inst.f.STT;
    sim_opnd_t o[3];
    scalar_t s0;
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    sim_opnds_none(&s0.o, 1);
    int rc = -1;
    if (check_alu(ctx, f->op0, "op0") || check_alu(ctx, f->op1, "op1"))
        return -1;
    if (opnds_two_in(ctx, o, &f->in0, "in0", &f->in1, "in1", &f->out) ||
        scalar_setup(ctx, &s0, f->s0, f->s0_is_ptr, &o[2], "s0"))
        goto done;
    const sim_opnd_t *ins[2] = { &o[0], &o[1] };
    uint32_t len = ctx->timing_only || sim_alu_is_bitwise(f->op0) || sim_alu_is_bitwise(f->op1)
                   ? 0 : sim_row_len(&o[2], ins, 2);
    if (len) {
        stt_rows_t r = { o, &s0, f->op0, f->op1, f->rev0, len, 0.0f };
        const sim_opnd_t *all[4] = { &o[0], &o[1], &o[2], &s0.o };
        unsigned parts = sim_rows_parts(ctx, all, 4, o[2].nparts, sim_opnd_elems(&o[2]));
        sim_rows_split(ctx->pool, parts, o[2].nparts, stt_span, &r);
    } else if (!ctx->timing_only)
        for (unsigned p = 0; p < o[2].nparts; p++) {
            sim_val_t a0 = scalar_get(&s0, p);
            for (uint32_t i = 0; i < o[2].nfree; i++) {
                sim_val_t x = sim_val_load(sim_el(&o[0], p, i), o[0].dtype);
                sim_val_t y = sim_val_load(sim_el(&o[1], p, i), o[1].dtype);
                sim_val_t r = sim_alu_rev(f->op0, x, a0, f->rev0);
                sim_val_store(sim_el(&o[2], p, i), o[2].dtype, sim_alu(f->op1, r, y));
            }
        }
    sim_opnd_mark(&o[2]);
    rc = 0;
done:
    free_all(o, 3);
    sim_opnd_free(&s0.o);
    return rc;
}

static uint64_t cost_stt(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    const isa_fmt_STT_t *f = &d->inst.f.STT;
    uint64_t n = sim_tap_n(&f->out);
    /* COST: N for bf16 subtract->multiply with N even, else 2N */
    bool fast = f->in0.dtype == ISA_DT_BF16 && f->in1.dtype == ISA_DT_BF16 &&
                f->op0 == ISA_ALU_SUBTRACT && f->op1 == ISA_ALU_MULTIPLY && n % 2 == 0;
    return sim_cost_dve(t, dve_work(fast ? n : 2 * n, &f->in0, &f->in1, &f->out, 1));
}

/* ------------------------------------------------------------------ */
/* TensorReduce                                                         */

/* TensorReduce fast path: fp32/bf16 input, a float op, and the reduced
 * axes are the innermost ones (axes = 0b0..01..1), so output j reduces the
 * contiguous flat elements [j*G, (j+1)*G).  Each group is folded in the
 * generic path's order (first element, then op with each next one) from
 * rows converted a run at a time; a partition's outputs are stored after
 * all its inputs were read, as in the generic path. */
static bool reduce_rows_ok(const sim_opnd_t *in, unsigned op, unsigned axes)
{
    return sim_row_run(in) != 0 && !sim_alu_is_bitwise(op) && (axes & (axes + 1)) == 0;
}

typedef struct {
    const sim_opnd_t *in, *out;
    unsigned op;
    bool negate;
    uint32_t g;            /* elements folded into one output */
    float *res;            /* out->nfree + 1 floats per part */
} reduce_rows_t;

/* Partitions [p0, p1) of the TensorReduce fast path. */
static void reduce_span(void *arg, unsigned part, unsigned p0, unsigned p1)
{
    const reduce_rows_t *r = arg;
    const sim_opnd_t *in = r->in, *out = r->out;
    uint32_t g = r->g, run = sim_row_run(in), nout = out->nfree;
    float *res = r->res + (size_t)part * (nout + 1);
    float buf[SIM_ROW_MAX];
    for (unsigned p = p0; p < p1; p++) {
        for (uint32_t j = 0; j < nout; j++) {
            float acc = 0.0f;
            for (uint32_t i = j * g, end = i + g; i < end;) {
                uint32_t n = run - i % run;
                n = n < end - i ? n : end - i;
                n = n < SIM_ROW_MAX ? n : SIM_ROW_MAX;
                sim_row_load(buf, in, p, i, n);
                uint32_t q = 0;
                if (i == j * g)
                    acc = buf[q++];
                acc = sim_row_fold(r->op, acc, buf + q, n - q);
                i += n;
            }
            res[j] = r->negate ? -acc : acc;
        }
        for (uint32_t j = 0; j < nout; j++)
            num_store_f32(sim_el(out, p, j), out->dtype, res[j]);
    }
}

static int reduce_rows(sim_exec_ctx_t *ctx, const sim_opnd_t *in, const sim_opnd_t *out,
                       unsigned op, unsigned axes, bool negate)
{
    uint32_t g = 1;
    for (unsigned k = 0; k < in->tap.ndims && (axes >> k & 1u); k++)
        g *= in->tap.count[k];
    const sim_opnd_t *all[2] = { in, out };
    /* weight (SIM_ROWS_SPLIT): max/min fold 16 lanes at once, 1; the other
     * ops fold one element after another, 2 */
    unsigned w = op == ISA_ALU_MAX || op == ISA_ALU_MIN ? 1 : 2;
    unsigned parts = sim_rows_parts(ctx, all, 2, in->nparts, sim_opnd_elems(in) * w);
    float *res = malloc((size_t)parts * ((size_t)out->nfree + 1) * sizeof *res);
    if (!res)
        return sim_fail_data(ctx, "out of memory");
    reduce_rows_t r = { in, out, op, negate, g, res };
    sim_rows_split(ctx->pool, parts, in->nparts, reduce_span, &r);
    free(res);
    return 0;
}

static int exec_tensor_reduce(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_RED_t *f = &d->inst.f.RED;
    sim_opnd_t o[2];
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    sim_val_t *acc = NULL;
    int rc = -1;
    if (check_alu(ctx, f->op, "op"))
        return -1;
    if (!sim_alu_is_reduce(f->op))
        return sim_fail(ctx, "op: %s is not a reduction op", isa_enum_name(ISA_FT_ALU, f->op));
    if (sim_opnd_tap(ctx, &o[0], &f->in, "in", SIM_RD) ||
        sim_opnd_tap(ctx, &o[1], &f->out, "out", SIM_WR))
        goto done;
    const isa_tap_t *t = &o[0].tap;
    unsigned axes = f->axes & 0xF;
    if (axes == 0 || (axes >> t->ndims) != 0) {
        sim_fail(ctx, "axes: 0x%x must select at least one of in's %u free dims", f->axes,
                 t->ndims);
        goto done;
    }
    /* Mixed-radix stride of each kept dim in the output's flattened order. */
    uint32_t ostride[ISA_MAX_FREE_DIMS] = { 0 };
    uint64_t nout = 1;
    for (unsigned k = 0; k < t->ndims; k++)
        if (!(axes & (1u << k))) {
            ostride[k] = (uint32_t)nout;
            nout *= t->count[k];
        }
    if (o[1].nparts != o[0].nparts || o[1].nfree != nout) {
        sim_fail(ctx, "out: expected %u partitions x %llu elements (the kept dims of in), "
                 "got %u x %u", o[0].nparts, (unsigned long long)nout, o[1].nparts, o[1].nfree);
        goto done;
    }
    if (!ctx->timing_only && reduce_rows_ok(&o[0], f->op, axes)) {
        if (reduce_rows(ctx, &o[0], &o[1], f->op, axes, f->negate != 0))
            goto done;
    } else if (!ctx->timing_only) {
        acc = malloc((size_t)nout * sizeof *acc);
        uint8_t *seen = calloc(nout, 1);
        if (!acc || !seen) {
            free(seen);
            sim_fail_data(ctx, "out of memory");
            goto done;
        }
        for (unsigned p = 0; p < o[0].nparts; p++) {
            memset(seen, 0, nout);
            uint32_t idx[ISA_MAX_FREE_DIMS] = { 0 };
            for (uint32_t i = 0; i < o[0].nfree; i++) {
                uint32_t j = 0;
                for (unsigned k = 0; k < t->ndims; k++)
                    j += idx[k] * ostride[k];
                sim_val_t x = sim_val_load(sim_el(&o[0], p, i), o[0].dtype);
                acc[j] = seen[j] ? sim_alu(f->op, acc[j], x) : x;
                seen[j] = 1;
                for (unsigned k = 0; k < t->ndims; k++) {
                    if (++idx[k] < t->count[k])
                        break;
                    idx[k] = 0;
                }
            }
            for (uint32_t j = 0; j < nout; j++) {
                sim_val_t r = acc[j];
                if (f->negate)
                    r = sim_val_f(-sim_val_as_f(r));
                sim_val_store(sim_el(&o[1], p, j), o[1].dtype, r);
            }
        }
        free(seen);
    }
    sim_opnd_mark(&o[1]);
    rc = 0;
done:
    free(acc);
    free_all(o, 2);
    return rc;
}

static uint64_t cost_tensor_reduce(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    const isa_fmt_RED_t *f = &d->inst.f.RED;
    uint64_t n = sim_tap_n(&f->in);
    if (e == ISA_ENG_POOL)
        return sim_cost_pool(t, n);
    bool half = f->in.dtype == ISA_DT_BF16 && (f->op == ISA_ALU_ADD || f->op == ISA_ALU_MAX);
    return sim_cost_dve(t, dve_work(n, &f->in, NULL, NULL, half ? 2 : 1));
}

/* ------------------------------------------------------------------ */
/* TensorTensorScan: r[i] = (in0[i] op0 r[i-1]) op1 in1[i]; rev0 makes   */
/* op0's r[i-1] op0 in0[i], rev1 makes op1's in1[i] op1 (...)           */

static int exec_scan(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_SCAN_t *f = &d->inst.f.SCAN;
    sim_opnd_t o[3];
    scalar_t init;
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    sim_opnds_none(&init.o, 1);
    int rc = -1;
    if (check_alu(ctx, f->op0, "op0") || check_alu(ctx, f->op1, "op1"))
        return -1;
    if (opnds_two_in(ctx, o, &f->in0, "in0", &f->in1, "in1", &f->out) ||
        scalar_setup(ctx, &init, f->init, f->init_is_ptr, &o[2], "init"))
        goto done;
    if (!ctx->timing_only)
        for (unsigned p = 0; p < o[2].nparts; p++) {
            sim_val_t r = scalar_get(&init, p);
            if (!init.is_ptr)
                r = sim_val_f(r.f); /* immediate init is fp32 bits */
            for (uint32_t i = 0; i < o[2].nfree; i++) {
                sim_val_t x = sim_val_load(sim_el(&o[0], p, i), o[0].dtype);
                sim_val_t y = sim_val_load(sim_el(&o[1], p, i), o[1].dtype);
                r = sim_alu_rev(f->op1, sim_alu_rev(f->op0, x, r, f->rev0), y, f->rev1);
                sim_val_store(sim_el(&o[2], p, i), o[2].dtype, r);
            }
        }
    sim_opnd_mark(&o[2]);
    rc = 0;
done:
    free_all(o, 3);
    sim_opnd_free(&init.o);
    return rc;
}

static uint64_t cost_scan(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    const isa_fmt_SCAN_t *f = &d->inst.f.SCAN;
    return sim_cost_dve(t, dve_work(2 * sim_tap_n(&f->out), &f->in0, &f->in1, &f->out, 1));
}

/* ------------------------------------------------------------------ */
/* Memset                                                               */

static int exec_memset(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_MEMSET_t *f = &d->inst.f.MEMSET;
    sim_opnd_t o;
    if (f->mode > ISA_MEMSET_RANDOM)
        return sim_fail(ctx, "mode: invalid memset mode %u", f->mode);
    if (sim_opnd_tap(ctx, &o, &f->out, "out", SIM_WR))
        return -1;
    if (f->mode == ISA_MEMSET_RANDOM && o.start + o.nparts > SIM_RNG_LANES) {
        sim_opnd_free(&o);
        return sim_fail(ctx, "out: partitions beyond the %u PRNG lanes", SIM_RNG_LANES);
    }
    unsigned gens = sim_rng_gens(ctx->engine);
    if (!ctx->timing_only) {
        uint8_t pat[4];
        uint32_t v = f->value;
        for (unsigned b = 0; b < 4; b++)
            pat[b] = (uint8_t)(v >> (8 * b)); /* low bytes: little-endian element */
        for (unsigned p = 0; p < o.nparts; p++)
            for (uint32_t i = 0; i < o.nfree; i++) {
                uint8_t *t = sim_el(&o, p, i);
                if (f->mode == ISA_MEMSET_RANDOM) {
                    uint32_t r = sim_rng_u32(ctx->rng, o.start + p, i % gens);
                    for (unsigned b = 0; b < o.esize; b++)
                        t[b] = (uint8_t)(r >> (8 * b));
                } else
                    memcpy(t, pat, o.esize);
            }
    }
    sim_opnd_mark(&o);
    sim_opnd_free(&o);
    return 0;
}

static uint64_t cost_memset(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    const isa_fmt_MEMSET_t *f = &d->inst.f.MEMSET;
    uint64_t n = sim_tap_n(&f->out);
    if (e == ISA_ENG_POOL)
        return sim_cost_pool(t, n);
    unsigned es = isa_dtype_size(f->out.dtype);
    uint32_t mask = es >= 4 ? 0xFFFFFFFFu : ((1u << (8 * es)) - 1);
    bool zero16 = f->mode == ISA_MEMSET_CONST && sim_dt_is_16f(f->out.dtype) &&
                  (f->value & mask) == 0;
    return sim_cost_dve(t, dve_work(n, &f->out, NULL, NULL, zero16 ? 2 : 1));
}

/* ------------------------------------------------------------------ */
/* CopyPredicated: out = (pred != 0) xor rev_pred ? in (or imm) : out  */

static int exec_copy_predicated(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_CPRED_t *f = &d->inst.f.CPRED;
    sim_opnd_t o[3];
    sim_opnds_none(o, sizeof o / sizeof o[0]);
    int rc = -1;
    if (f->in_is_imm) {
        if (f->in.space != ISA_SPACE_NONE) {
            sim_fail(ctx, "in: in_is_imm takes no in operand");
            goto done;
        }
        if (sim_opnd_tap(ctx, &o[0], &f->pred, "pred", SIM_RD) ||
            sim_opnd_tap(ctx, &o[2], &f->out, "out", SIM_WR) || sim_same_shape(ctx, &o[2], &o[0]))
            goto done;
    } else if (opnds_two_in(ctx, o, &f->pred, "pred", &f->in, "in", &f->out)) {
        goto done;
    }
    if (!ctx->timing_only)
        for (unsigned p = 0; p < o[2].nparts; p++)
            for (uint32_t i = 0; i < o[2].nfree; i++) {
                bool t = num_load_f32(sim_el(&o[0], p, i), o[0].dtype) != 0.0f;
                if (t == (bool)f->rev_pred)
                    continue;
                if (f->in_is_imm)
                    num_store_f32(sim_el(&o[2], p, i), o[2].dtype, f->imm);
                else
                    sim_copy_elem(&o[1], p, i, &o[2], p, i);
            }
    /* Only the selected bytes are written; for --check-uninit the whole out
     * counts as written (unselected lanes keep their previous contents). */
    sim_opnd_mark(&o[2]);
    rc = 0;
done:
    free_all(o, 3);
    return rc;
}

static uint64_t cost_copy_predicated(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    (void)e;
    const isa_fmt_CPRED_t *f = &d->inst.f.CPRED;
    uint64_t n = sim_tap_n(&f->out);
    bool psum = f->in.space == ISA_SPACE_PSUM || f->pred.space == ISA_SPACE_PSUM ||
                f->out.space == ISA_SPACE_PSUM;
    return sim_cost_dve(t, dve_work(psum ? n : 2 * n, &f->pred, &f->in, &f->out, 1));
}

/* ------------------------------------------------------------------ */

static const sim_opimpl_t impl_copy = { exec_tensor_copy, cost_tensor_copy };
static const sim_opimpl_t impl_tt = { exec_tensor_tensor, cost_tensor_tensor };
static const sim_opimpl_t impl_ttbv = { exec_tt_bitvec, cost_tensor_tensor };
static const sim_opimpl_t impl_ts = { exec_ts_common, cost_tensor_scalar };
static const sim_opimpl_t impl_stt = { exec_stt, cost_stt };
static const sim_opimpl_t impl_red = { exec_tensor_reduce, cost_tensor_reduce };
static const sim_opimpl_t impl_scan = { exec_scan, cost_scan };
static const sim_opimpl_t impl_memset = { exec_memset, cost_memset };
static const sim_opimpl_t impl_cpred = { exec_copy_predicated, cost_copy_predicated };

const sim_opimpl_t *sim_dve_impl(isa_op_t op)
{
    switch (op) {
    case ISA_OP_TENSOR_COPY: return &impl_copy;
    case ISA_OP_TENSOR_TENSOR: return &impl_tt;
    case ISA_OP_TENSOR_TENSOR_BITVEC: return &impl_ttbv;
    case ISA_OP_TENSOR_SCALAR: case ISA_OP_TENSOR_SCALAR_PTR: return &impl_ts;
    case ISA_OP_SCALAR_TENSOR_TENSOR: return &impl_stt;
    case ISA_OP_TENSOR_REDUCE: return &impl_red;
    case ISA_OP_TENSOR_TENSOR_SCAN: return &impl_scan;
    case ISA_OP_MEMSET: return &impl_memset;
    case ISA_OP_COPY_PREDICATED: return &impl_cpred;
    default: break;
    }
    const sim_opimpl_t *impl = sim_dve_max8_impl(op);
    if (!impl)
        impl = sim_dve_mx_impl(op);
    return impl ? impl : sim_dve_move_impl(op);
}
