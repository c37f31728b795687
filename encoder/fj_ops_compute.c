/* fj_ops_compute.c - the compute op families of the JSON front-end: PE, activation, vector/pool ALU, selection, collectives (see fj.h). */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fj.h"
#include "strutil.h"

static int get_pair(jx_t *j, const cJSON *o, const char *path, const char *fname, int out[2])
{
    const cJSON *it = fj_field(o, fname);
    out[0] = out[1] = 0;
    if (!it)
        return 0;
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2)
        return fj_jfail(j, path, fname, "expected [row, col]");
    int64_t a, b;
    if (fj_get_int_item(j, it->child, path, fname, &a, NULL) ||
        fj_get_int_item(j, it->child->next, path, fname, &b, NULL))
        return -1;
    if (a < 0 || a > 128 || b < 0 || b > 128)
        return fj_jfail(j, path, fname, "[%lld, %lld] outside 0..128", (long long)a, (long long)b);
    out[0] = (int)a;
    out[1] = (int)b;
    return 0;
}

static int h_matmul(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    bool acc, acc_given, tr, oz_w, oz_m;
    const char *perf;
    const char *trname = fj_field(o, "is_transpose") ? "is_transpose" : "transpose";
    tir_op_rare_t r = *op->rare;   /* the PE fields live in op->rare */
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) ||
        fj_get_ap(j, o, path, "stationary", true, &op->src[0]) ||
        fj_get_ap(j, o, path, "moving", true, &op->src[1]) ||
        fj_get_bool3(j, o, path, "accumulate", &acc, &acc_given) ||
        fj_get_bool(j, o, path, trname, &tr) ||
        fj_get_bool(j, o, path, "is_stationary_onezero", &oz_w) ||
        fj_get_bool(j, o, path, "is_moving_onezero", &oz_m) ||
        get_pair(j, o, path, "tile_position", r.tile_pos) ||
        get_pair(j, o, path, "tile_size", r.tile_size) ||
        fj_get_str(j, o, path, "perf_mode", &perf, false) ||
        fj_get_int_range(j, o, path, "ifmap_quant_offset", &r.quant_offset, 0, -32768, 32767))
        return -1;
    op->nsrc = 2;
    op->flags |= enc_matmul_flags(&j->b, (acc ? TIR_F_ACCUMULATE : 0) |
                                  (acc_given ? 0 : TIR_F_ACC_AUTO) | (tr ? TIR_F_TRANSPOSE : 0) |
                                  (oz_w ? TIR_F_ONEZERO_W : 0) | (oz_m ? TIR_F_ONEZERO_M : 0));
    if (perf) {
        int pm = isa_enum_by_name(ISA_FT_PERF, fj_strip_prefix(perf));
        if (pm < 0)
            return fj_jfail(j, path, "perf_mode", "unknown '%s' (normal, double_row)", perf);
        if (pm == ISA_PERF_DOUBLE_ROW)
            op->flags |= TIR_F_DOUBLE_ROW;
    }
    if (op->kind == TIR_MATMUL_MX) {
        tir_ap_t sp;
        double sc;
        if (fj_get_ap(j, o, path, "stationary_scale", true, &op->src[2]) ||
            fj_get_ap(j, o, path, "moving_scale", true, &op->src[3]) ||
            fj_get_num(j, o, path, "scale", &sc, 1.0) ||
            fj_get_ap_value(j, o, path, "scale_ptr", false, &sp))
            return -1;
        op->nsrc = 4;
        /* seed 001 codegenMatMulMXOp: an output scale, immediate or per
         * dst partition through a pointer (then the immediate stays 1.0) */
        if (sp.tensor >= 0 && sc != 1.0)
            return fj_jfail(j, path, "scale", "Scale should be 1.0 if scale_ptr is specified");
        if (sp.tensor >= 0 || fj_field(o, "scale")) {
            op->flags |= TIR_F_MX_SCALE;
            op->s0 = sp.tensor >= 0 ? enc_scalar_in(&j->b, enc_scalar_ap(sp)) : tir_scalar_imm(sc);
        }
    }
    if (op->kind == TIR_MATMUL_SPARSE) {
        int cr;
        if (fj_get_ap(j, o, path, "tags", true, &op->src[2]) ||
            fj_get_int_range(j, o, path, "compress_ratio", &cr, 2, 0, 64))
            return -1;
        r.compress_ratio = (unsigned)cr;
        op->nsrc = 3;
    }
    op->rare = enc_rare_in(&j->b, &r);
    return j->mask_mm ? fj_mask_matmul(j, path, op) : 1;   /* NKI mask= (fj_mask_mm.c) */
}

/* op's reduce_cmd, a rare field: written only when not the default (an
 * activation without a reduce keeps the shared record) */
static void set_reduce_cmd(jx_t *j, tir_op_t *op, int cmd)
{
    if (cmd != op->rare->reduce_cmd)
        ENC_RARE_SET(&j->b, op, reduce_cmd, cmd);
}

static int reduce_opts(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    int cmd;
    if (fj_get_enum8(j, o, path, "reduce_op", ISA_FT_ALU, fj_alu_aliases, &op->reduce_op,
                     ISA_ALU_BYPASS) ||
        fj_get_ap(j, o, path, "reduce_res", false, &op->dst2) ||
        fj_get_enum(j, o, path, "reduce_cmd", ISA_FT_REDCMD, NULL, &cmd,
                    op->reduce_op != ISA_ALU_BYPASS ? ISA_REDCMD_RESET_REDUCE : ISA_REDCMD_IDLE))
        return -1;
    set_reduce_cmd(j, op, cmd);
    return 0;
}

/* ---- a body statement's constant fields, read once ----
 * When the first full read of a statement succeeded and each of these
 * fields was a JSON constant (a name, a number, a boolean, or absent), they
 * are kept in the memo; later iterations read only the operands (first, as
 * the full read does, so their errors are the same) and copy the rest. */
typedef struct {
    int op0, op1, func, reduce_op, reduce_cmd;
    double imm0, imm1;           /* s0 / s1 immediates */
    unsigned flags;
    const cJSON *dst, *src;      /* the operand fields when strings, else NULL */
} op_consts_t;

static const char ts_tag = 0, act_tag = 0;   /* memo questions */

static bool const_num(const cJSON *it)
{
    return !it || cJSON_IsNumber(it);
}

static bool const_bool(const cJSON *it)
{
    return !it || cJSON_IsNull(it) || cJSON_IsBool(it);
}

static void consts_keep(jx_t *j, const cJSON *o, const void *tag, const tir_op_t *op)
{
    if (!fj_memo_keeps(j))
        return;
    op_consts_t *c = malloc(sizeof *c);
    if (!c || !fj_keep(j, c, free)) {
        free(c);
        return;
    }
    const cJSON *dst = fj_field(o, "dst"), *src = fj_field(o, "src");
    *c = (op_consts_t){op->op0, op->op1, op->func, op->reduce_op, op->rare->reduce_cmd,
                       op->s0.imm, op->s1.imm, op->flags,
                       cJSON_IsString(dst) ? dst : NULL, cJSON_IsString(src) ? src : NULL};
    fj_memo_put(j, o, tag, c);
}

/* fj_get_ap of operand field fname, it when kept (the same reading) */
static int kept_ap(jx_t *j, const cJSON *o, const char *path, const char *fname,
                   const cJSON *it, const tir_ap_t **slot)
{
    if (it && !j->mask_redirect)
        return fj_intern_ap_str(j, it, path, fname, slot);
    return fj_get_ap(j, o, path, fname, true, slot);
}

/* dst and src[0] of this iteration, the rest from c; 1 (emit) or -1 */
static int consts_apply(jx_t *j, const cJSON *o, const char *path, const op_consts_t *c,
                        tir_op_t *op)
{
    if (kept_ap(j, o, path, "dst", c->dst, &op->dst) || kept_ap(j, o, path, "src", c->src, &op->src[0]))
        return -1;
    op->op0 = c->op0;
    op->op1 = c->op1;
    op->func = c->func;
    op->reduce_op = c->reduce_op;
    set_reduce_cmd(j, op, c->reduce_cmd);
    op->s0.imm = c->imm0;
    op->s1.imm = c->imm1;
    op->flags |= c->flags;
    op->nsrc = 1;
    return 1;
}

static int activation_read(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    bool acc;
    /* bias: a [P,1] tile, or a number (NKI: a compile-time scalar from
     * NeuronCore-v3 on; the lowering checks the target), kept in s1 */
    const cJSON *bias = fj_field(o, "bias");
    if (bias && cJSON_IsNumber(bias))
        op->s1 = tir_scalar_imm(bias->valuedouble);
    else if (fj_get_ap(j, o, path, "bias", false, &op->bias))
        return -1;
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || fj_get_ap(j, o, path, "src", true, &op->src[0]) ||
        fj_get_enum8(j, o, path, "func", ISA_FT_ACTFN, fj_act_aliases, &op->func, -1) ||
        fj_get_scalar(j, o, path, "scale", &op->s0, 1.0) ||
        reduce_opts(j, o, path, op) || fj_get_bool(j, o, path, "accumulate", &acc))
        return -1;
    if (op->func < 0)
        return fj_jfail(j, path, "func", "missing");
    op->nsrc = 1;
    if (acc)
        op->flags |= TIR_F_ACCUMULATE;
    return 1;
}

static int h_activation(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    const op_consts_t *c = fj_stmt_memo_get(j, o, &act_tag);
    if (c)
        return consts_apply(j, o, path, c, op);
    int rc = activation_read(j, o, path, op);
    if (rc == 1 && const_num(fj_field(o, "scale")) && !fj_field(o, "bias") &&
        !fj_field(o, "reduce_res") && const_bool(fj_field(o, "accumulate")))
        consts_keep(j, o, &act_tag, op);
    return rc;
}

static int h_activate2(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    bool r0, r1;
    tir_scalar_t relu;
    if (fj_get_bool(j, o, path, "reverse0", &r0) || fj_get_bool(j, o, path, "reverse1", &r1) ||
        fj_get_scalar(j, o, path, "relu_param", &relu, 0))
        return -1;
    /* relu_param (prelu's slope): a [P,1] tile in src[1], or the number in value */
    if (relu.is_ap)
        op->src[1] = relu.ap;
    else
        ENC_RARE_SET(&j->b, op, value, relu.imm);
    op->flags |= (r0 ? TIR_F_REV0 : 0) | (r1 ? TIR_F_REV1 : 0);
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || fj_get_ap(j, o, path, "src", true, &op->src[0]) ||
        fj_get_enum8(j, o, path, "op0", ISA_FT_ALU, fj_alu_aliases, &op->op0, ISA_ALU_BYPASS) ||
        fj_get_scalar(j, o, path, "imm0", &op->s0, 0) ||
        fj_get_enum8(j, o, path, "op1", ISA_FT_ALU, fj_alu_aliases, &op->op1, ISA_ALU_BYPASS) ||
        fj_get_scalar(j, o, path, "imm1", &op->s1, 0) ||
        fj_get_enum8(j, o, path, "func", ISA_FT_ACTFN, fj_act_aliases, &op->func, ISA_ACTFN_COPY) ||
        fj_get_ap(j, o, path, "bias", false, &op->bias) || reduce_opts(j, o, path, op))
        return -1;
    op->nsrc = 1;
    return 1;
}

/* tensor_tensor's kept fields: the operator and the three string operands */
typedef struct {
    int op0;
    const cJSON *dst, *in0, *in1;
} tt_consts_t;

static const char tt_tag = 0;

static int tensor_tensor_read(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    /* a number in0/in1: a memset tile (combine_tiles, fj_get_ap_or_num) */
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) ||
        fj_get_ap_or_num(j, o, path, "in0", op, &op->src[0]) ||
        fj_get_ap_or_num(j, o, path, "in1", op, &op->src[1]) ||
        fj_get_enum8(j, o, path, "operator", ISA_FT_ALU, fj_alu_aliases, &op->op0, -1))
        return -1;
    if (op->op0 < 0)
        return fj_jfail(j, path, "operator", "missing");
    op->nsrc = 2;
    return 1;
}

/* After a successful first read with the three operands strings and the
 * operator a name, later iterations read the operands from their kept
 * fields (in the same order, so errors read the same) and copy the
 * operator. */
static int h_tensor_tensor(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    const tt_consts_t *c = fj_stmt_memo_get(j, o, &tt_tag);
    if (c && !j->mask_redirect) {
        if (fj_intern_ap_str(j, c->dst, path, "dst", &op->dst) ||
            fj_intern_ap_str(j, c->in0, path, "in0", &op->src[0]) ||
            fj_intern_ap_str(j, c->in1, path, "in1", &op->src[1]))
            return -1;
        op->op0 = c->op0;
        op->nsrc = 2;
        return 1;
    }
    int rc = tensor_tensor_read(j, o, path, op);
    if (rc != 1 || c || !fj_memo_keeps(j))
        return rc;
    const cJSON *dst = fj_field(o, "dst"), *in0 = fj_field(o, "in0"), *in1 = fj_field(o, "in1");
    if (!cJSON_IsString(dst) || !cJSON_IsString(in0) || !cJSON_IsString(in1) ||
        !cJSON_IsString(fj_field(o, "operator")))
        return rc;
    tt_consts_t *k = malloc(sizeof *k);
    if (!k || !fj_keep(j, k, free)) {
        free(k);
        return rc;
    }
    *k = (tt_consts_t){op->op0, dst, in0, in1};
    fj_memo_put(j, o, &tt_tag, k);
    return rc;
}

static int tensor_scalar_read(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    bool r0, r1;
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || fj_get_ap(j, o, path, "src", true, &op->src[0]) ||
        fj_get_enum8(j, o, path, "op0", ISA_FT_ALU, fj_alu_aliases, &op->op0, -1) ||
        fj_get_scalar(j, o, path, "operand0", &op->s0, 0) || fj_get_bool(j, o, path, "reverse0", &r0) ||
        fj_get_enum8(j, o, path, "op1", ISA_FT_ALU, fj_alu_aliases, &op->op1, ISA_ALU_BYPASS) ||
        fj_get_scalar(j, o, path, "operand1", &op->s1, 0) || fj_get_bool(j, o, path, "reverse1", &r1))
        return -1;
    if (op->op0 < 0)
        return fj_jfail(j, path, "op0", "missing");
    /* a unary op (reciprocal, abs, rsqrt, bitwise_not) needs no operand */
    if (!fj_field(o, "operand0") && !isa_alu_is_unary((unsigned)op->op0))
        return fj_jfail(j, path, "operand0", "missing");
    if (op->op1 != ISA_ALU_BYPASS && !fj_field(o, "operand1") && !isa_alu_is_unary((unsigned)op->op1))
        return fj_jfail(j, path, "operand1", "missing (op1 is given)");
    op->nsrc = 1;
    op->flags |= (r0 ? TIR_F_REV0 : 0) | (r1 ? TIR_F_REV1 : 0);
    if (fj_field(o, "operand0_reg")) {   /* TensorScalarGEP: docs/kernel-format.md */
        if (fj_rare_int_range(j, o, path, "operand0_reg", op, offsetof(tir_op_rare_t, s0_reg), -1,
                              0, ISA_NUM_REGS - 1))
            return -1;
        if (!op->s0.is_ap)
            return fj_jfail(j, path, "operand0_reg", "offsets a tile operand0 (a [P,1] "
                            "access), not an immediate");
    }
    return fj_get_mask(j, o, path, op) ? -1 : 1;
}

static int h_tensor_scalar(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    const op_consts_t *c = fj_stmt_memo_get(j, o, &ts_tag);
    if (c)
        return consts_apply(j, o, path, c, op);
    int rc = tensor_scalar_read(j, o, path, op);
    if (rc == 1 && const_num(fj_field(o, "operand0")) && const_num(fj_field(o, "operand1")) &&
        const_bool(fj_field(o, "reverse0")) && const_bool(fj_field(o, "reverse1")) &&
        !fj_field(o, "operand0_reg") && !fj_field(o, "mask"))
        consts_keep(j, o, &ts_tag, op);
    return rc;
}

static int h_tensor_copy(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_h_dst_src(j, o, path, op) < 0)
        return -1;
    return fj_get_mask(j, o, path, op) ? -1 : 1;
}

static int h_stt(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || fj_get_ap(j, o, path, "in0", true, &op->src[0]) ||
        fj_get_ap(j, o, path, "in1", true, &op->src[1]) ||
        fj_get_enum8(j, o, path, "op0", ISA_FT_ALU, fj_alu_aliases, &op->op0, -1) ||
        fj_get_enum8(j, o, path, "op1", ISA_FT_ALU, fj_alu_aliases, &op->op1, -1) ||
        fj_get_scalar(j, o, path, "scalar", &op->s0, 0))
        return -1;
    if (op->op0 < 0 || op->op1 < 0)
        return fj_jfail(j, path, op->op0 < 0 ? "op0" : "op1", "missing");
    if (!fj_field(o, "scalar") && !isa_alu_is_unary((unsigned)op->op0))
        return fj_jfail(j, path, "scalar", "missing");
    op->nsrc = 2;
    return 1;
}

static int h_tensor_reduce(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    bool neg, keep, per_axis;
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || fj_get_ap(j, o, path, "src", true, &op->src[0]) ||
        fj_get_enum8(j, o, path, "operator", ISA_FT_ALU, fj_alu_aliases, &op->reduce_op, -1) ||
        fj_get_bool(j, o, path, "negate", &neg) || fj_get_bool(j, o, path, "keepdims", &keep) ||
        fj_get_bool(j, o, path, "per_axis", &per_axis))
        return -1;
    if (op->reduce_op < 0)
        return fj_jfail(j, path, "operator", "missing");
    op->nsrc = 1;
    op->flags |= (neg ? TIR_F_NEGATE : 0) | (keep ? TIR_F_KEEPDIMS : 0) |
                 (per_axis ? TIR_F_PER_AXIS : 0);
    const cJSON *ax = fj_field(o, "axis");
    int nfree = op->src[0]->ndim - 1;
    if (!ax)
        return fj_jfail(j, path, "axis", "missing");
    const cJSON *one = ax;
    int n = cJSON_IsArray(ax) ? cJSON_GetArraySize(ax) : 1;
    if (cJSON_IsArray(ax))
        one = ax->child;
    if (n < 1)
        return fj_jfail(j, path, "axis", "empty");
    unsigned axes = op->rare->axes;
    for (int i = 0; i < n && one; i++, one = one->next) {
        int64_t a;
        if (fj_get_int_item(j, one, path, "axis", &a, NULL))
            return -1;
        if (a < 1 || a > nfree)
            return fj_jfail(j, path, "axis", "axis %lld is not a free axis of 'src' (1..%d; NKI "
                         "numbering, 0 is the partition axis)", (long long)a, nfree);
        axes |= 1u << (nfree - a);
    }
    ENC_RARE_SET(&j->b, op, axes, axes);
    return j->b.failed ? -1 : 1;
}

static int h_partition_reduce(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || fj_get_ap(j, o, path, "src", true, &op->src[0]) ||
        fj_get_enum8(j, o, path, "operator", ISA_FT_ALU, fj_alu_aliases, &op->reduce_op, -1))
        return -1;
    if (op->reduce_op < 0)
        return fj_jfail(j, path, "operator", "missing");
    op->nsrc = 1;
    return 1;
}

static int h_scan(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    bool r0, r1;
    if (fj_get_bool(j, o, path, "reverse0", &r0) || fj_get_bool(j, o, path, "reverse1", &r1))
        return -1;
    op->flags |= (r0 ? TIR_F_REV0 : 0) | (r1 ? TIR_F_REV1 : 0);
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || fj_get_ap(j, o, path, "in0", true, &op->src[0]) ||
        fj_get_ap(j, o, path, "in1", true, &op->src[1]) || fj_get_scalar(j, o, path, "initial", &op->s0, 0) ||
        fj_get_enum8(j, o, path, "op0", ISA_FT_ALU, fj_alu_aliases, &op->op0, -1) ||
        fj_get_enum8(j, o, path, "op1", ISA_FT_ALU, fj_alu_aliases, &op->op1, -1))
        return -1;
    if (op->op0 < 0 || op->op1 < 0)
        return fj_jfail(j, path, op->op0 < 0 ? "op0" : "op1", "missing");
    op->nsrc = 2;
    return 1;
}

static int get_pattern(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    int64_t off, cm;
    if (fj_get_int(j, o, path, "offset", &off, 0, false) ||
        fj_get_int(j, o, path, "channel_multiplier", &cm, 0, false))
        return -1;
    tir_op_rare_t r = *op->rare;
    r.pat_offset = off;
    r.pat_cm = cm;
    const cJSON *p = fj_field(o, "pattern");
    if (!p)
        return fj_jfail(j, path, "pattern", "missing");
    if (!cJSON_IsArray(p))
        return fj_jfail(j, path, "pattern", "expected [[step, count], ...], got %s", fj_type_name(p));
    int n = cJSON_GetArraySize(p);
    if (n > 4)
        return fj_jfail(j, path, "pattern", "%d dims (at most 4)", n);
    int i = 0;
    int64_t total = 1;
    for (const cJSON *c = p->child; c; c = c->next, i++) {
        int64_t st, cnt;
        if (!cJSON_IsArray(c) || cJSON_GetArraySize(c) != 2)
            return fj_jfail(j, path, "pattern", "entry %d must be [step, count]", i);
        if (fj_get_int_item(j, c->child, path, "pattern", &st, NULL) ||
            fj_get_int_item(j, c->child->next, path, "pattern", &cnt, NULL))
            return -1;
        if (cnt < 1 || i + 1 >= op->dst->ndim || cnt != op->dst->count[i + 1])
            return fj_jfail(j, path, "pattern", "entry %d count %lld does not match dst free dim %d",
                         i, (long long)cnt, i + 1);
        total *= cnt;
        r.pat_step[i] = st;
    }
    r.pat_ndim = n;
    (void)total;
    op->rare = enc_rare_in(&j->b, &r);
    return j->b.failed ? -1 : 0;
}

/* One predicate object of a mask into op's pat_* / cmp. */
static int get_one_pred(jx_t *j, const cJSON *m, const char *mpath, tir_op_t *op)
{
    static const char *const fields[] = {"pattern", "offset", "channel_multiplier", "cmp_op",
                                         NULL};
    if (!cJSON_IsObject(m))
        return fj_jfail(j, mpath, NULL, "expected {\"pattern\": [[step, count], ...], "
                        "\"offset\", \"channel_multiplier\", \"cmp_op\"} (an affine "
                        "predicate over dst's indices), got %s", fj_type_name(m));
    return fj_check_fields(j, m, mpath, fields) || get_pattern(j, m, mpath, op) ||
                   fj_get_enum8(j, m, mpath, "cmp_op", ISA_FT_CMP, fj_cmp_aliases, &op->cmp,
                               ISA_CMP_GE)
               ? -1
               : 0;
}

/* NKI mask= (kernel format: "mask": {"pattern", "offset", "channel_multiplier",
 * "cmp_op"}, the affine_select predicate over dst's indices, or a list of up
 * to 4 of them, ANDed -- NKI's (i_p < n) & (i_f < m)): elements where it
 * fails are not computed and keep dst.  Each predicate is one PredExt on a
 * TensorScalarPtr (DVE or Pool). */
int fj_get_mask(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    const cJSON *m = fj_field(o, "mask");
    if (!m)
        return 0;
    if (!cJSON_IsObject(m) && !cJSON_IsArray(m))
        return fj_jfail(j, path, "mask", "expected {\"pattern\": [[step, count], ...], "
                        "\"offset\", \"channel_multiplier\", \"cmp_op\"} (one affine "
                        "predicate over dst's indices) or a list of up to %d of them (ANDed), "
                        "got %s", TIR_MAX_MASK_PREDS, fj_type_name(m));
    char mpath[600];
    snprintf(mpath, sizeof mpath, "%s.mask", path);
    if (cJSON_IsArray(m)) {
        int n = cJSON_GetArraySize(m);
        if (n < 1 || n > TIR_MAX_MASK_PREDS)
            return fj_jfail(j, path, "mask", "a list of 1 to %d predicates (ANDed), got %d",
                            TIR_MAX_MASK_PREDS, n);
        tir_pred_t *more = n > 1 ? tir_new_preds(j->b.k, n - 1) : NULL;
        if (n > 1 && !more)
            return fj_jfail(j, path, "mask", "out of memory");
        int i = 0;
        for (const cJSON *c = m->child; c; c = c->next, i++) {
            char ipath[640];
            snprintf(ipath, sizeof ipath, "%s[%d]", mpath, i);
            if (!i) {
                if (get_one_pred(j, c, ipath, op))
                    return -1;
                continue;
            }
            tir_op_t t = *op;
            if (get_one_pred(j, c, ipath, &t))
                return -1;
            tir_pred_t *q = &more[i - 1];
            q->offset = t.rare->pat_offset, q->cm = t.rare->pat_cm, q->ndim = t.rare->pat_ndim;
            q->cmp = t.cmp;
            memcpy(q->step, t.rare->pat_step, sizeof q->step);
        }
        tir_op_rare_t r = *op->rare;
        r.mask_more = more;
        r.nmask_more = n - 1;
        op->rare = enc_rare_in(&j->b, &r);
    } else if (get_one_pred(j, m, mpath, op)) {
        return -1;
    }
    if (op->engine == ISA_ENG_ACT)
        return fj_jfail(j, path, "mask", "a masked %s runs on DVE or Pool (the predicate rides "
                        "on a TensorScalarPtr), not on engine act", tir_op_name(op->kind));
    op->flags |= TIR_F_MASK;
    return 0;
}

static int h_iota(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    int64_t lm;
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || get_pattern(j, o, path, op) ||
        fj_get_int(j, o, path, "lnc_multiplier", &lm, 0, false))
        return -1;
    /* seed 001 IndexValue: lnc_id folded into the value.  Each physical
     * core is compiled on its own, so the term is a constant here. */
    tir_op_rare_t r = *op->rare;
    r.pat_offset += lm * j->b.core;
    op->rare = enc_rare_in(&j->b, &r);
    return j->b.failed ? -1 : 1;
}

/* reverse_pred (seed 001 set_reverse_pred; NKI spells it so on
 * tensor_copy_predicated): on_true where the predicate FAILS.  It rides on
 * the instruction as a rev_pred bit (PredExt on DVE, AffineSelect on Pool). */
static int h_affine_select(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    bool rev;
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || fj_get_ap(j, o, path, "on_true", true, &op->src[0]) ||
        get_pattern(j, o, path, op) ||
        fj_get_enum8(j, o, path, "cmp_op", ISA_FT_CMP, fj_cmp_aliases, &op->cmp, ISA_CMP_GE) ||
        fj_rare_num(j, o, path, "on_false_value", op, offsetof(tir_op_rare_t, fill), 0) ||
        fj_get_bool(j, o, path, "reverse_pred", &rev))
        return -1;
    if (!fj_field(o, "on_false_value"))
        return fj_jfail(j, path, "on_false_value", "missing");
    if (rev)
        op->flags |= TIR_F_REV0;
    if (op->engine == ISA_ENG_UNASSIGNED)   /* NKI: GpSimd; engine dve picks the PredExt form */
        op->engine = ISA_ENG_POOL;
    op->nsrc = 1;
    return 1;
}

/* NKI lets find_index8 / match_replace8 read one row of `vals` for every
 * partition (a broadcast access pattern).  A one-partition vals with a
 * multi-partition src is copied to every partition first
 * (broadcast_partition into a fresh [P, 8] tile). */
static int broadcast_vals(jx_t *j, tir_op_t *op)
{
    const tir_ap_t *v = op->src[1], *s = op->src[0];
    if (v->tensor < 0 || s->tensor < 0 || v->ndim < 1 || s->ndim < 1 || v->count[0] != 1 ||
        s->count[0] <= 1)
        return 0;
    int64_t shape[2] = {s->count[0], 1};
    for (int d = 1; d < v->ndim; d++)
        shape[1] *= v->count[d];
    int t = enc_own_tile(&j->b, "find_index8_vals", TIR_T_SBUF,
                         tir_ap_dtype(&j->b.k->tensors[v->tensor], v), 2, shape);
    if (t < 0 || enc_broadcast_partition(&j->b, enc_ap_full(&j->b, t), *v) < 0)
        return -1;
    op->src[1] = enc_in(&j->b, enc_ap_full(&j->b, t));
    return 0;
}

static int h_find_index8(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || fj_get_ap(j, o, path, "src", true, &op->src[0]) ||
        fj_get_ap(j, o, path, "vals", true, &op->src[1]))
        return -1;
    op->nsrc = 2;
    if (broadcast_vals(j, op))
        return -1;
    if (op->kind == TIR_MATCH_REPLACE8) {
        if (fj_rare_num(j, o, path, "imm", op, offsetof(tir_op_rare_t, value), 0) ||
            fj_get_ap(j, o, path, "dst_idx", false, &op->dst2))
            return -1;
        if (!fj_field(o, "imm"))
            return fj_jfail(j, path, "imm", "missing");
    }
    return 1;
}

static int h_select(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || fj_get_ap(j, o, path, "pred", true, &op->src[0]) ||
        fj_get_ap(j, o, path, "on_true", true, &op->src[1]))
        return -1;
    op->nsrc = 2;
    const cJSON *f = fj_field(o, "on_false");
    if (!f)
        return fj_jfail(j, path, "on_false", "missing");
    if (cJSON_IsNumber(f)) {
        ENC_RARE_SET(&j->b, op, fill, f->valuedouble);
        return 1;
    }
    if (fj_get_ap(j, o, path, "on_false", true, &op->src[2]))
        return -1;
    op->nsrc = 3;
    return 1;
}

/* NKI tensor_copy_predicated(dst, src, predicate): dst = src where the
 * predicate is non-zero, unchanged elsewhere -- the DVE CopyPredicated
 * instruction (a select whose on_false is dst itself).  reverse_pred and a
 * number src are not supported (the instruction has neither). */
static int h_copy_predicated(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    bool rev;
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) ||
        fj_get_ap(j, o, path, "predicate", true, &op->src[0]) ||
        fj_get_bool(j, o, path, "reverse_pred", &rev))
        return -1;
    tir_scalar_t s;
    if (!fj_field(o, "src"))
        return fj_jfail(j, path, "src", "missing");
    if (fj_get_scalar(j, o, path, "src", &s, 0))
        return -1;
    if (s.is_ap) {
        op->src[1] = s.ap;
    } else {
        op->src[1] = op->dst;   /* placeholder, not read */
        ENC_RARE_SET(&j->b, op, value, s.imm);
        op->flags |= TIR_F_SRC_IMM;
    }
    if (rev)
        op->flags |= TIR_F_REV0;
    op->src[2] = op->dst;
    op->nsrc = 3;
    return 1;
}

/* dst, data (bn_stats, bn_aggr) */
static int h_dst_data(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || fj_get_ap(j, o, path, "data", true, &op->src[0]))
        return -1;
    op->nsrc = 1;
    return 1;
}

/* NKI range_select: on_true_tile (alias on_true), comp_op0/1, bound0/1
 * [P,1], reduce_cmd (default reset_reduce), reduce_res (optional),
 * reduce_op (maximum), range_start (0), on_false_value (FP32_MIN). */
static int h_range_select(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) ||
        fj_get_ap(j, o, path, "on_true", true, &op->src[0]) ||
        fj_get_enum8(j, o, path, "comp_op0", ISA_FT_CMP, fj_cmp_aliases, &op->cmp, ISA_CMP_GE) ||
        fj_rare_enum(j, o, path, "comp_op1", ISA_FT_CMP, fj_cmp_aliases, op,
                     offsetof(tir_op_rare_t, cmp1), ISA_CMP_GE) ||
        fj_get_ap(j, o, path, "bound0", true, &op->src[1]) ||
        fj_get_ap(j, o, path, "bound1", true, &op->src[2]) ||
        fj_rare_enum(j, o, path, "reduce_cmd", ISA_FT_REDCMD, NULL, op, RARE_REDUCE_CMD,
                    ISA_REDCMD_RESET_REDUCE) ||
        fj_get_ap(j, o, path, "reduce_res", false, &op->dst2) ||
        fj_get_enum8(j, o, path, "reduce_op", ISA_FT_ALU, fj_alu_aliases, &op->reduce_op, ISA_ALU_MAX) ||
        fj_rare_num(j, o, path, "on_false_value", op, offsetof(tir_op_rare_t, fill),
                    -3.4028234663852886e38))
        return -1;
    /* a number or a numeric expression (fj_get_num), then an integer */
    double start;
    int64_t istart;
    if (fj_get_num(j, o, path, "range_start", &start, 0) ||
        fj_int_of_number(j, start, path, "range_start", &istart))
        return -1;
    tir_op_rare_t r = *op->rare;
    r.pat_offset = istart;
    op->rare = enc_rare_in(&j->b, &r);
    for (int k = 0; k < 2; k++) {
        const char *f = k ? "comp_op1" : "comp_op0";
        int c = k ? op->rare->cmp1 : op->cmp;
        if (c == ISA_CMP_NE)
            return fj_jfail(j, path, f, "not_equal is not a range_select comparison (equal, "
                            "less, less_equal, greater, greater_equal)");
    }
    op->nsrc = 3;
    return 1;
}

/* NKI select_reduce: predicate, on_true, on_false (number or [P,1] tile),
 * reduce_res (optional), reduce_cmd (idle; reset_reduce when reduce_res is
 * given without one, as activation), reduce_op (maximum), reverse_pred. */
static int h_select_reduce(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    bool rev = false;
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) ||
        fj_get_ap(j, o, path, "predicate", true, &op->src[0]) ||
        fj_get_ap(j, o, path, "on_true", true, &op->src[1]) ||
        fj_get_scalar(j, o, path, "on_false", &op->s0, 0) ||
        fj_get_ap(j, o, path, "reduce_res", false, &op->dst2) ||
        fj_get_enum8(j, o, path, "reduce_op", ISA_FT_ALU, fj_alu_aliases, &op->reduce_op, ISA_ALU_MAX) ||
        fj_get_bool(j, o, path, "reverse_pred", &rev))
        return -1;
    if (!fj_field(o, "on_false"))
        return fj_jfail(j, path, "on_false", "missing");
    if (fj_rare_enum(j, o, path, "reduce_cmd", ISA_FT_REDCMD, NULL, op, RARE_REDUCE_CMD,
                    op->dst2->tensor >= 0 ? ISA_REDCMD_RESET_REDUCE : ISA_REDCMD_IDLE))
        return -1;
    if (rev)
        op->flags |= TIR_F_REV0;
    op->nsrc = 2;
    return 1;
}

/* NKI reciprocal(dst, data): 1/x on the Vector engine (tensor_scalar with
 * the unary reciprocal op). */
static int h_reciprocal(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || fj_get_ap(j, o, path, "data", true, &op->src[0]))
        return -1;
    op->nsrc = 1;
    op->op0 = ISA_ALU_RECIPROCAL;
    op->op1 = ISA_ALU_BYPASS;
    if (op->engine == ISA_ENG_UNASSIGNED)
        op->engine = ISA_ENG_DVE;
    return 1;
}

/* prob (NKI: the drop probability) or keep_rate (seed 001 Dropout
 * set_keep_rate / is_keep_rate: the keep probability), exactly one. */
static int h_dropout(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    bool keep = fj_field(o, "keep_rate") != NULL;
    if (keep && fj_field(o, "prob"))
        return fj_jfail(j, path, "keep_rate", "give prob (drop probability) or keep_rate "
                        "(keep probability), not both");
    const char *key = keep ? "keep_rate" : "prob";
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || fj_get_ap(j, o, path, "src", true, &op->src[0]) ||
        fj_get_scalar(j, o, path, key, &op->s0, 0))
        return -1;
    if (!fj_field(o, key))
        return fj_jfail(j, path, "prob", "missing");
    if (keep)
        op->flags |= TIR_F_KEEP_RATE;
    tir_op_rare_t r = *op->rare;
    r.prob = op->s0.is_ap ? 0 : op->s0.imm;
    op->rare = enc_rare_in(&j->b, &r);
    op->nsrc = 1;
    return 1;
}

static int h_quantize_mx(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || fj_get_ap(j, o, path, "src", true, &op->src[0]) ||
        fj_get_ap(j, o, path, "scale", true, &op->dst2))
        return -1;
    op->nsrc = 1;
    return 1;
}

static int h_core_barrier(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    const cJSON *c = fj_field(o, "cores");
    if (!c)
        return fj_jfail(j, path, "cores", "missing");
    if (!cJSON_IsArray(c))
        return fj_jfail(j, path, "cores", "expected an array of core ids");
    tir_op_rare_t r = *op->rare;
    for (const cJSON *x = c->child; x; x = x->next) {
        int64_t v;
        if (fj_get_int_item(j, x, path, "cores", &v, NULL))
            return -1;
        if (v < 0 || v >= 32)
            return fj_jfail(j, path, "cores", "core %lld out of range", (long long)v);
        r.barrier_cores |= 1u << v;
    }
    op->rare = enc_rare_in(&j->b, &r);
    if (fj_get_ap(j, o, path, "data", false, &op->src[0]))
        return -1;
    op->nsrc = op->src[0]->tensor >= 0 ? 1 : 0;
    return 1;
}

/* NKI's sendrecv arguments: send_to_rank and recv_from_rank must name the
 * same peer (tpbsim's sendrecv swaps with one program; NKI's two-rank LNC
 * makes them equal anyway), pipe_id is accepted (each op is its own
 * exchange), dma_engine gpsimd_dma caps the bytes per partition as NKI. */
static int sendrecv_nki(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    int send, recv, pipe;
    const char *eng = NULL;
    if (fj_field(o, "peer"))
        return fj_jfail(j, path, "peer", "given twice (also as 'send_to_rank')");
    if (!fj_field(o, "send_to_rank") || !fj_field(o, "recv_from_rank"))
        return fj_jfail(j, path, fj_field(o, "send_to_rank") ? "recv_from_rank" : "send_to_rank",
                        "missing");
    if (fj_get_int_range(j, o, path, "send_to_rank", &send, 0, 0, 1 << 20) ||
        fj_get_int_range(j, o, path, "recv_from_rank", &recv, 0, 0, 1 << 20) ||
        fj_get_int_range(j, o, path, "pipe_id", &pipe, 0, 0, 255) ||
        fj_get_str(j, o, path, "dma_engine", &eng, false))
        return -1;
    if (send != recv)
        return fj_jfail(j, path, "recv_from_rank", "%d differs from send_to_rank %d: tpbsim's "
                        "sendrecv swaps tiles with one peer program", recv, send);
    tir_op_rare_t r = *op->rare;
    r.peer = send;
    op->rare = enc_rare_in(&j->b, &r);
    if (!eng)
        return 0;
    const char *e = strrchr(eng, '.') ? strrchr(eng, '.') + 1 : eng;
    if (strcmp(e, "gpsimd_dma") && strcmp(e, "dma"))
        return fj_jfail(j, path, "dma_engine", "'%s': expected dma or gpsimd_dma", eng);
    int64_t n = 1;
    for (int d = 1; d < op->src[0]->ndim; d++)
        n *= op->src[0]->count[d];
    if (!strcmp(e, "gpsimd_dma") && n > 256)
        return fj_jfail(j, path, "dma_engine", "gpsimd_dma moves at most 1024/512/256 bytes "
                        "per partition of a 32/16/8-bit type (256 elements); src has %lld",
                        (long long)n);
    return 0;
}

static int h_sendrecv(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    if (fj_get_ap(j, o, path, "dst", true, &op->dst) || fj_get_ap(j, o, path, "src", true, &op->src[0]))
        return -1;
    op->nsrc = 1;
    if (fj_field(o, "send_to_rank") || fj_field(o, "recv_from_rank"))
        return sendrecv_nki(j, o, path, op) ? -1 : 1;
    tir_op_rare_t r = *op->rare;
    if (fj_get_int_range(j, o, path, "peer", &r.peer, -1, 0, 1 << 20))
        return -1;
    op->rare = enc_rare_in(&j->b, &r);
    if (!fj_field(o, "peer"))
        return fj_jfail(j, path, "peer", "missing (or NKI's send_to_rank / recv_from_rank)");
    return 1;
}

/* noop: no silicon effect (the notes' codegenNoOp drops it); a scheduling
 * marker: an op naming it in deps inherits its deps (set_deps). */
static int h_noop(jx_t *j, const cJSON *o, const char *path, tir_op_t *op)
{
    (void)j, (void)o, (void)path, (void)op;
    return 1;
}

const fj_opdef_t fj_ops_compute[] = {
    {"matmul", TIR_MATMUL, h_matmul, {F_COMMON, "dst", "stationary", "moving", "accumulate", "transpose", "is_transpose", "is_stationary_onezero", "is_moving_onezero", "tile_position", "tile_size", "perf_mode", "ifmap_quant_offset", NULL}},
    {"matmul_mx", TIR_MATMUL_MX, h_matmul, {F_COMMON, "dst", "stationary", "moving", "stationary_scale", "moving_scale", "accumulate", "tile_position", "tile_size", "scale", "scale_ptr", NULL}},
    {"matmul_sparse", TIR_MATMUL_SPARSE, h_matmul, {F_COMMON, "dst", "stationary", "moving", "tags", "compress_ratio", "accumulate", "tile_position", "tile_size", NULL}},
    {"transpose", TIR_TRANSPOSE, fj_h_dst_src, {F_COMMON, "dst", "src", NULL}},
    {"activation", TIR_ACTIVATION, h_activation, {F_COMMON, "dst", "src", "func", "scale", "bias", "reduce_op", "reduce_res", "reduce_cmd", "accumulate", NULL}},
    {"activate2", TIR_ACTIVATE2, h_activate2, {F_COMMON, "dst", "src", "op0", "imm0", "op1", "imm1", "func", "bias", "reduce_op", "reduce_res", "reduce_cmd", "reverse0", "reverse1", "relu_param", NULL}},
    {"tensor_tensor", TIR_TENSOR_TENSOR, h_tensor_tensor, {F_COMMON, "dst", "in0", "in1", "operator", NULL}},
    {"tensor_scalar", TIR_TENSOR_SCALAR, h_tensor_scalar, {F_COMMON, "dst", "src", "op0", "operand0", "reverse0", "op1", "operand1", "reverse1", "operand0_reg", "mask", NULL}},
    {"scalar_tensor_tensor", TIR_SCALAR_TENSOR_TENSOR, h_stt, {F_COMMON, "dst", "in0", "op0", "scalar", "op1", "in1", NULL}},
    {"tensor_reduce", TIR_TENSOR_REDUCE, h_tensor_reduce, {F_COMMON, "dst", "src", "operator", "axis", "negate", "keepdims", "per_axis", NULL}},
    {"tensor_partition_reduce", TIR_TENSOR_PARTITION_REDUCE, h_partition_reduce, {F_COMMON, "dst", "src", "operator", NULL}},
    {"tensor_copy", TIR_TENSOR_COPY, h_tensor_copy, {F_COMMON, "dst", "src", "mask", NULL}},
    {"tensor_tensor_scan", TIR_TENSOR_TENSOR_SCAN, h_scan, {F_COMMON, "dst", "in0", "in1", "initial", "op0", "op1", "reverse0", "reverse1", NULL}},
    {"iota", TIR_IOTA, h_iota, {F_COMMON, "dst", "pattern", "offset", "channel_multiplier", "lnc_multiplier", NULL}},
    {"affine_select", TIR_AFFINE_SELECT, h_affine_select, {F_COMMON, "dst", "on_true", "pattern", "offset", "channel_multiplier", "cmp_op", "on_false_value", "reverse_pred", NULL}},
    {"max8", TIR_MAX8, fj_h_dst_src, {F_COMMON, "dst", "src", NULL}},
    {"find_index8", TIR_FIND_INDEX8, h_find_index8, {F_COMMON, "dst", "src", "vals", NULL}},
    {"match_replace8", TIR_MATCH_REPLACE8, h_find_index8, {F_COMMON, "dst", "src", "vals", "imm", "dst_idx", NULL}},
    {"select", TIR_SELECT, h_select, {F_COMMON, "dst", "pred", "on_true", "on_false", NULL}},
    {"dropout", TIR_DROPOUT, h_dropout, {F_COMMON, "dst", "src", "prob", "keep_rate", NULL}},
    {"quantize_mx", TIR_QUANTIZE_MX, h_quantize_mx, {F_COMMON, "dst", "src", "scale", NULL}},
    {"core_barrier", TIR_CORE_BARRIER, h_core_barrier, {F_COMMON, "cores", "data", NULL}},
    {"sendrecv", TIR_SENDRECV, h_sendrecv, {F_COMMON, "dst", "src", "peer", "send_to_rank",
                                            "recv_from_rank", "pipe_id", "dma_engine", NULL}},
    {"tensor_copy_predicated", TIR_SELECT, h_copy_predicated, {F_COMMON, "dst", "src", "predicate", "reverse_pred", NULL}},
    {"reciprocal", TIR_TENSOR_SCALAR, h_reciprocal, {F_COMMON, "dst", "data", NULL}},
    {"bn_stats", TIR_BN_STATS, h_dst_data, {F_COMMON, "dst", "data", NULL}},
    {"bn_aggr", TIR_BN_AGGR, h_dst_data, {F_COMMON, "dst", "data", NULL}},
    {"select_reduce", TIR_SELECT_REDUCE, h_select_reduce, {F_COMMON, "dst", "predicate", "on_true", "on_false", "reduce_res", "reduce_cmd", "reduce_op", "reverse_pred", NULL}},
    {"range_select", TIR_RANGE_SELECT, h_range_select, {F_COMMON, "dst", "on_true", "comp_op0", "comp_op1", "bound0", "bound1", "reduce_cmd", "reduce_res", "reduce_op", "range_start", "on_false_value", NULL}},
    {"noop", TIR_NOOP, h_noop, {F_COMMON, NULL}},
    {"inline_asm", TIR_INLINE_ASM, fj_h_inline_asm, {F_COMMON, "opcode", "operands", "num_inputs", "asm_attrs", NULL}},
    {"inline_asm_bytes", TIR_INLINE_ASM_BYTES, fj_h_inline_asm_bytes, {F_COMMON, "asm_bytes", "sync_type", "latency_estimate", NULL}},
    {NULL, 0, NULL, {NULL}},
};
