/* fj_ops_seq.c - the accumulator and sequence op family of the JSON
 * front-end (see fj.h): NKI tensor_scalar_cumulative and tensor_scalar_reduce
 * (Vector engine, the DVE accumulator registers), sequence_bounds,
 * nonzero_with_count and topk (GpSimd).  Fields keep NKI's parameter names
 * and defaults (docs/kernel-format.md "Ops"). */
#include <math.h>
#include <string.h>

#include "fj.h"

/* NKI tensor_scalar_cumulative(dst, src, op0, op1, imm0, imm1=None,
 * reduce_cmd=reset_reduce). */
static int h_ts_cumulative(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) ||
        fj_get_ap(j, o, path, "src", true, &op->src[0]) ||
        fj_get_enum8(j, o, path, "op0", ISA_FT_ALU, fj_alu_aliases, &op->op0, -1) ||
        fj_get_enum8(j, o, path, "op1", ISA_FT_ALU, fj_alu_aliases, &op->op1, -1) ||
        fj_get_scalar(j, o, path, "imm0", &op->s0, 0) ||
        fj_get_scalar(j, o, path, "imm1", &op->s1, 0) ||
        fj_rare_enum(j, o, path, "reduce_cmd", ISA_FT_REDCMD, NULL, op, RARE_REDUCE_CMD,
                    ISA_REDCMD_RESET_REDUCE))
        return -1;
    if (op->op0 < 0)
        return fj_jfail(j, path, "op0", "missing");
    if (op->op1 < 0)
        return fj_jfail(j, path, "op1", "missing");
    if (!fj_field(o, "imm0"))
        return fj_jfail(j, path, "imm0", "missing");
    if (op->rare->reduce_cmd == ISA_REDCMD_LOAD_REDUCE && !fj_field(o, "imm1"))
        return fj_jfail(j, path, "imm1", "missing (load_reduce starts the accumulator from it)");
    op->nsrc = 1;
    return 1;
}

/* NKI tensor_scalar_reduce(dst, data, op0, operand0, reduce_op,
 * reduce_res=None, reverse0=False, reduce_cmd=reset_reduce,
 * reduce_init=None, reduce_res_negate=False). */
static int h_ts_reduce(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    bool rev, neg;
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) ||
        fj_get_ap(j, o, path, "data", true, &op->src[0]) ||
        fj_get_enum8(j, o, path, "op0", ISA_FT_ALU, fj_alu_aliases, &op->op0, -1) ||
        fj_get_scalar(j, o, path, "operand0", &op->s0, 0) ||
        fj_get_enum8(j, o, path, "reduce_op", ISA_FT_ALU, fj_alu_aliases, &op->reduce_op, -1) ||
        fj_get_ap(j, o, path, "reduce_res", false, &op->dst2) ||
        fj_get_bool(j, o, path, "reverse0", &rev) ||
        fj_rare_enum(j, o, path, "reduce_cmd", ISA_FT_REDCMD, NULL, op, RARE_REDUCE_CMD,
                    ISA_REDCMD_RESET_REDUCE) ||
        fj_get_scalar(j, o, path, "reduce_init", &op->s1, 0) ||
        fj_get_bool(j, o, path, "reduce_res_negate", &neg))
        return -1;
    if (op->op0 < 0)
        return fj_jfail(j, path, "op0", "missing");
    if (op->reduce_op < 0)
        return fj_jfail(j, path, "reduce_op", "missing");
    if (!fj_field(o, "operand0") && !isa_alu_is_unary((unsigned)op->op0))
        return fj_jfail(j, path, "operand0", "missing");
    bool load = op->rare->reduce_cmd == ISA_REDCMD_LOAD_REDUCE;
    if (load && !fj_field(o, "reduce_init"))
        return fj_jfail(j, path, "reduce_init", "missing (reduce_cmd is load_reduce)");
    if (!load && fj_field(o, "reduce_init"))
        return fj_jfail(j, path, "reduce_init", "only with reduce_cmd load_reduce");
    op->flags |= (rev ? TIR_F_REV0 : 0) | (neg ? TIR_F_NEGATE : 0);
    op->nsrc = 1;
    return 1;
}

/* NKI sequence_bounds(dst, segment_ids). */
static int h_sequence_bounds(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) ||
        fj_get_ap(j, o, path, "segment_ids", true, &op->src[0]))
        return -1;
    op->nsrc = 1;
    return 1;
}

static int get_i32(jx_t *j, const cJSON *o, const char *path, const char *f, int64_t *out,
                   int64_t dflt)
{
    if (fj_get_int(j, o, path, f, out, dflt, false))
        return -1;
    if (*out < INT32_MIN || *out > INT32_MAX)
        return fj_jfail(j, path, f, "%lld is not an int32", (long long)*out);
    return 0;
}

/* NKI nonzero_with_count(dst, src, index_offset=0, padding_val=-1). */
static int h_nonzero_with_count(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    int64_t pad;
    tir_op_rare_t r = *op->rare;
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) ||
        fj_get_ap(j, o, path, "src", true, &op->src[0]) ||
        get_i32(j, o, path, "index_offset", &r.pat_offset, 0) ||
        get_i32(j, o, path, "padding_val", &pad, -1))
        return -1;
    op->rare = enc_rare_in(&j->b, &r);
    ENC_RARE_SET(&j->b, op, value, (double)pad);
    op->nsrc = 1;
    return 1;
}

/* NKI topk(val_dst, idx_dst, src, n). */
static int h_topk(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    int64_t n;
    if (fj_get_ap(j, o, path, "val_dst", true, &op->dst) ||
        fj_get_ap(j, o, path, "idx_dst", true, &op->dst2) ||
        fj_get_ap(j, o, path, "src", true, &op->src[0]) ||
        fj_get_int(j, o, path, "n", &n, 0, true))
        return -1;
    if (n < 8 || n >= 65536)
        return fj_jfail(j, path, "n", "%lld outside 8 <= n < 65536", (long long)n);
    tir_op_rare_t r = *op->rare;
    r.num_valid = (int)n;
    op->rare = enc_rare_in(&j->b, &r);
    op->nsrc = 1;
    return 1;
}

/* NKI exponential(dst, src, max_value=0.0, reduce_res=None,
 * reduce_cmd=idle, reduce_init=0.0) on the Vector engine.  As for
 * activation, a reduce_res given with the default reduce_cmd means
 * reset_reduce. */
static int h_exponential(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) ||
        fj_get_ap(j, o, path, "src", true, &op->src[0]) ||
        fj_get_scalar(j, o, path, "max_value", &op->s0, 0) ||
        fj_get_ap(j, o, path, "reduce_res", false, &op->dst2) ||
        fj_get_scalar(j, o, path, "reduce_init", &op->s1, 0) ||
        fj_rare_enum(j, o, path, "reduce_cmd", ISA_FT_REDCMD, NULL, op, RARE_REDUCE_CMD,
                    op->dst2->tensor >= 0 ? ISA_REDCMD_RESET_REDUCE : ISA_REDCMD_IDLE))
        return -1;
    if (op->rare->reduce_cmd != ISA_REDCMD_LOAD_REDUCE && (op->s1.is_ap || op->s1.imm != 0))
        return fj_jfail(j, path, "reduce_init", "only with reduce_cmd load_reduce (else unset "
                        "or 0)");
    op->op0 = ISA_ALU_SUBTRACT;
    op->op1 = ISA_ALU_ADD;
    op->nsrc = 1;
    return 1;
}

const fj_opdef_t fj_ops_seq[] = {
    {"exponential", TIR_EXPONENTIAL, h_exponential, {F_COMMON, "dst", "src", "max_value", "reduce_res", "reduce_cmd", "reduce_init", NULL}},
    {"tensor_scalar_cumulative", TIR_TENSOR_SCALAR_CUMULATIVE, h_ts_cumulative, {F_COMMON, "dst", "src", "op0", "op1", "imm0", "imm1", "reduce_cmd", NULL}},
    {"tensor_scalar_reduce", TIR_TENSOR_SCALAR_REDUCE, h_ts_reduce, {F_COMMON, "dst", "data", "op0", "operand0", "reduce_op", "reduce_res", "reverse0", "reduce_cmd", "reduce_init", "reduce_res_negate", NULL}},
    {"sequence_bounds", TIR_SEQUENCE_BOUNDS, h_sequence_bounds, {F_COMMON, "dst", "segment_ids", NULL}},
    {"nonzero_with_count", TIR_NONZERO_WITH_COUNT, h_nonzero_with_count, {F_COMMON, "dst", "src", "index_offset", "padding_val", NULL}},
    {"topk", TIR_TOPK, h_topk, {F_COMMON, "val_dst", "idx_dst", "src", "n", NULL}},
    {NULL, 0, NULL, {NULL}},
};
