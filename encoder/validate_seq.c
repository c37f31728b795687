/* validate_seq.c - build-time checks of the accumulator and sequence op
 * family (encoder/fj_ops_seq.c): tensor_scalar_cumulative,
 * tensor_scalar_reduce (Vector), sequence_bounds, nonzero_with_count, topk
 * (GpSimd).  Called by validate.c after the generic operand checks (every
 * operand is an SBUF/PSUM tile access of an existing tensor).  Messages as
 * validate.c: "<path> (<op>): field '<field>': <what>"; the constraints are
 * the NKI docstrings' (docs/semantics.md). */
#include "validate_int.h"

static const char *enum_nm(isa_ftype_t t, int v)
{
    const char *n = isa_enum_name(t, (unsigned)v);
    return n ? n : "?";
}

static const char *dname(unsigned d)
{
    return isa_dtype_numpy_name(d);
}

/* a is slot `field`: partitions of ref, and nf free elements (nf < 0: any) */
static int shape_is(const vctx_t *s, const tir_ap_t *a, const char *field, const tir_ap_t *ref,
                    int64_t nf)
{
    if (ap_parts(a) != ap_parts(ref) || (nf >= 0 && ap_free(a) != nf))
        return vfail(s, field, "shape is %lld partitions x %lld, expected %lld x %lld",
                     (long long)ap_parts(a), (long long)ap_free(a), (long long)ap_parts(ref),
                     (long long)(nf >= 0 ? nf : ap_free(a)));
    return 0;
}

static int in_sbuf(const vctx_t *s, const tir_ap_t *a, const char *field)
{
    if (tens(s, a)->kind != TIR_T_SBUF)
        return vfail(s, field, "must be in SBUF ('%s' is in PSUM)", tens(s, a)->name);
    return 0;
}

/* BF16, FP16, FP32, FP8, UINT8, UINT16, INT8, INT16 (no 32-bit integers) */
static int acc_dtype(const vctx_t *s, const tir_ap_t *a, const char *field)
{
    unsigned d = odt(s, a);
    if (d == ISA_DT_INT32 || d == ISA_DT_UINT32)
        return vfail(s, field, "dtype %s (32-bit integers are not supported; bf16, fp16, "
                     "fp32, fp8, (u)int8, (u)int16)", dname(d));
    return 0;
}

static bool is_arith(int alu)
{
    return alu > ISA_ALU_BYPASS && isa_enum_name(ISA_FT_ALU, (unsigned)alu) &&
           !isa_alu_is_bitwise((unsigned)alu);
}

static int arith(const vctx_t *s, int alu, const char *field)
{
    if (!is_arith(alu))
        return vfail(s, field, "'%s' is not an arithmetic ALU op", enum_nm(ISA_FT_ALU, alu));
    return 0;
}

/* imm0/operand0, imm1/reduce_init: a number or an fp32 [P,1] tile */
static int scalar_ok(const vctx_t *s, const tir_scalar_t *sc, const char *field,
                     const tir_ap_t *ref)
{
    if (!sc->is_ap)
        return 0;
    if (ap_free(sc->ap) != 1 || ap_parts(sc->ap) != ap_parts(ref))
        return vfail(s, field, "a tile must be [%lld, 1] (got %lld x %lld)",
                     (long long)ap_parts(ref), (long long)ap_parts(sc->ap), (long long)ap_free(sc->ap));
    if (odt(s, sc->ap) != ISA_DT_FP32)
        return vfail(s, field, "dtype %s (a tile is float32)", dname(odt(s, sc->ap)));
    return 0;
}

static int red_cmd_ok(const vctx_t *s)
{
    int c = s->op->rare->reduce_cmd;
    if (c != ISA_REDCMD_RESET_REDUCE && c != ISA_REDCMD_REDUCE && c != ISA_REDCMD_LOAD_REDUCE)
        return vfail(s, "reduce_cmd", "'%s' (reset_reduce, reduce or load_reduce)",
                     enum_nm(ISA_FT_REDCMD, c));
    return 0;
}

/* the optional reduce_res: a float [P,1] */
static int reduce_res_ok(const vctx_t *s)
{
    const tir_op_t *op = s->op;
    if (op->dst2->tensor < 0)
        return 0;
    if (shape_is(s, op->dst2, "reduce_res", op->src[0], 1))
        return -1;
    if (isa_dtype_kind(odt(s, op->dst2)) != ISA_DK_F)
        return vfail(s, "reduce_res", "dtype %s (a float dtype)", dname(odt(s, op->dst2)));
    return 0;
}

static int check_ts_common(const vctx_t *s, const char *src_name, const char *s0_name,
                           const char *s1_name)
{
    const tir_op_t *op = s->op;
    if (arith(s, op->op0, "op0") || red_cmd_ok(s) ||
        shape_is(s, op->dst, "dst", op->src[0], ap_free(op->src[0])) ||
        acc_dtype(s, op->src[0], src_name) || acc_dtype(s, op->dst, "dst") ||
        scalar_ok(s, &op->s0, s0_name, op->src[0]) ||
        scalar_ok(s, &op->s1, s1_name, op->src[0]))
        return -1;
    return 0;
}

static int check_ts_cumulative(const vctx_t *s)
{
    const tir_op_t *op = s->op;
    switch (op->op1) {
    case ISA_ALU_ADD: case ISA_ALU_SUBTRACT: case ISA_ALU_MULTIPLY: case ISA_ALU_MAX:
    case ISA_ALU_MIN:
        break;
    default:
        return vfail(s, "op1", "'%s' is not a cumulative op (add, subtract, multiply, max, min)",
                     enum_nm(ISA_FT_ALU, op->op1));
    }
    return check_ts_common(s, "src", "imm0", "imm1");
}

static int check_ts_reduce(const vctx_t *s)
{
    const tir_op_t *op = s->op;
    switch (op->reduce_op) {
    case ISA_ALU_ADD: case ISA_ALU_MULTIPLY: case ISA_ALU_MAX: case ISA_ALU_MIN:
        break;
    default:
        return vfail(s, "reduce_op", "'%s' (add, multiply, max or min)",
                     enum_nm(ISA_FT_ALU, op->reduce_op));
    }
    if (isa_alu_is_unary((unsigned)op->op0) && (op->s0.is_ap || op->s0.imm != 0))
        return vfail(s, "operand0", "must be absent or 0 for the unary op '%s'",
                     isa_enum_name(ISA_FT_ALU, (unsigned)op->op0));
    if (check_ts_common(s, "data", "operand0", "reduce_init"))
        return -1;
    return reduce_res_ok(s);
}

static int check_sequence_bounds(const vctx_t *s)
{
    const tir_op_t *op = s->op;
    for (int k = 0; k < 2; k++) {
        const tir_ap_t *a = k ? op->dst : op->src[0];
        const char *f = k ? "dst" : "segment_ids";
        if (odt(s, a) != ISA_DT_FP32 && odt(s, a) != ISA_DT_INT32)
            return vfail(s, f, "dtype %s (float32 or int32)", dname(odt(s, a)));
        if (in_sbuf(s, a, f))
            return -1;
    }
    return shape_is(s, op->dst, "dst", op->src[0], 2 * ap_free(op->src[0]));
}

static int check_nonzero(const vctx_t *s)
{
    const tir_op_t *op = s->op;
    unsigned sd = odt(s, op->src[0]);
    if (sd != ISA_DT_FP32 && sd != ISA_DT_INT32)
        return vfail(s, "src", "dtype %s (float32 or int32)", dname(sd));
    if (odt(s, op->dst) != ISA_DT_INT32)
        return vfail(s, "dst", "dtype %s (int32)", dname(odt(s, op->dst)));
    if (in_sbuf(s, op->src[0], "src") || in_sbuf(s, op->dst, "dst"))
        return -1;
    return shape_is(s, op->dst, "dst", op->src[0], ap_free(op->src[0]) + 1);
}

static int check_topk(const vctx_t *s)
{
    const tir_op_t *op = s->op;
    const tir_ap_t *src = op->src[0];
    int64_t k = ap_free(op->dst), n = op->rare->num_valid;
    if (odt(s, src) != ISA_DT_BF16)
        return vfail(s, "src", "dtype %s (bfloat16)", dname(odt(s, src)));
    if (odt(s, op->dst) != ISA_DT_BF16)
        return vfail(s, "val_dst", "dtype %s (bfloat16)", dname(odt(s, op->dst)));
    if (op->dst2->tensor < 0)
        return vfail(s, "idx_dst", "operand missing");
    if (odt(s, op->dst2) != ISA_DT_UINT32)
        return vfail(s, "idx_dst", "dtype %s (uint32)", dname(odt(s, op->dst2)));
    if (in_sbuf(s, src, "src") || in_sbuf(s, op->dst, "val_dst") ||
        in_sbuf(s, op->dst2, "idx_dst"))
        return -1;
    int64_t p0 = src->ndim > 0 && src->step[0] > 0 ? src->offset / src->step[0] : 0;
    if (ap_parts(src) % 16 || p0 % 16)
        return vfail(s, "src", "%lld partitions from partition %lld: the partitions must be "
                     "whole 16-partition groups", (long long)ap_parts(src), (long long)p0);
    if (shape_is(s, op->dst, "val_dst", src, -1) || shape_is(s, op->dst2, "idx_dst", src, k))
        return -1;
    if (k < 1 || k >= 32768 || k > n)
        return vfail(s, "val_dst", "k = %lld values per partition (1 <= k < 32768, k <= n = "
                     "%lld)", (long long)k, (long long)n);
    if (ap_free(src) < (n + 15) / 16)
        return vfail(s, "src", "%lld columns hold fewer than n = %lld elements in 16 partitions",
                     (long long)ap_free(src), (long long)n);
    return 0;
}

static int check_exponential(const vctx_t *s)
{
    const tir_op_t *op = s->op;
    int c = op->rare->reduce_cmd;
    if (c == ISA_REDCMD_RESET || !isa_enum_name(ISA_FT_REDCMD, (unsigned)c))
        return vfail(s, "reduce_cmd", "%d (idle, reset_reduce, reduce or load_reduce)", c);
    if (shape_is(s, op->dst, "dst", op->src[0], ap_free(op->src[0])) ||
        scalar_ok(s, &op->s0, "max_value", op->src[0]) ||
        scalar_ok(s, &op->s1, "reduce_init", op->src[0]))
        return -1;
    if (odt(s, op->dst) == ISA_DT_UINT32)
        return vfail(s, "dst", "dtype uint32 is not an exponential output");
    return reduce_res_ok(s);
}

int enc_validate_seq(const tir_kernel_t *k, const tir_op_t *op, tpb_err_t *err)
{
    vctx_t s = {.k = k, .op = op, .err = err};
    switch (op->kind) {
    case TIR_TENSOR_SCALAR_CUMULATIVE: return check_ts_cumulative(&s);
    case TIR_TENSOR_SCALAR_REDUCE: return check_ts_reduce(&s);
    case TIR_SEQUENCE_BOUNDS: return check_sequence_bounds(&s);
    case TIR_NONZERO_WITH_COUNT: return check_nonzero(&s);
    case TIR_TOPK: return check_topk(&s);
    case TIR_EXPONENTIAL: return check_exponential(&s);
    default: return 0;
    }
}
