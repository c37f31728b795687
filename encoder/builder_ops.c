/* builder_ops.c - typed NKI-style builders; each fills a tir_op_t (field
 * meanings in tir.h) and hands it to enc_emit(), the one append point. */
#include "builder.h"

#include <string.h>

/* The common start of a builder: an op of `kind` writing dst from one or two
 * sources; the caller sets the op's own fields after. */
static void op_init1(enc_builder_t *b, tir_op_t *op, tir_opkind_t kind, tir_ap_t dst,
                     tir_ap_t src)
{
    tir_op_init(op, kind);
    op->dst = enc_in(b, dst);
    op->src[0] = enc_in(b, src);
    op->nsrc = 1;
}

static void op_init2(enc_builder_t *b, tir_op_t *op, tir_opkind_t kind, tir_ap_t dst, tir_ap_t in0,
                     tir_ap_t in1)
{
    tir_op_init(op, kind);
    op->dst = enc_in(b, dst);
    op->src[0] = enc_in(b, in0);
    op->src[1] = enc_in(b, in1);
    op->nsrc = 2;
}

/* index_bound lives in op->rare (interned): copy, set, intern */
static void set_index_bound(enc_builder_t *b, tir_op_t *op, int64_t bound)
{
    tir_op_rare_t r = *op->rare;
    r.index_bound = bound;
    op->rare = enc_rare_in(b, &r);
}

/* op's DMA options, rare fields: written only when one differs, so a
 * plain copy keeps the shared default record */
static void set_dma(enc_builder_t *b, tir_op_t *op, int dge_mode, int oob_mode, int qos,
                    int src_reg, int dst_reg)
{
    const tir_op_rare_t *o = op->rare;
    if (dge_mode == o->dge_mode && oob_mode == o->oob_mode && qos == o->qos &&
        src_reg == o->src_reg && dst_reg == o->dst_reg)
        return;
    tir_op_rare_t r = *op->rare;
    r.dge_mode = dge_mode;
    r.oob_mode = oob_mode;
    r.qos = qos;
    r.src_reg = src_reg;
    r.dst_reg = dst_reg;
    op->rare = enc_rare_in(b, &r);
}

static int emit1(enc_builder_t *b, tir_opkind_t kind, tir_ap_t dst, tir_ap_t src)
{
    tir_op_t op;
    op_init1(b, &op, kind, dst, src);
    return enc_emit(b, &op);
}

int enc_load(enc_builder_t *b, tir_ap_t dst, tir_ap_t src)
{
    return emit1(b, TIR_LOAD, dst, src);
}

int enc_store(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, bool rmw_add)
{
    tir_op_t op;
    op_init1(b, &op, TIR_STORE, dst, src);
    if (rmw_add)
        op.flags |= TIR_F_RMW_ADD;
    return enc_emit(b, &op);
}

int enc_dma_copy(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int dge_mode, int oob_mode,
                 bool rmw_add)
{
    tir_op_t op;
    op_init1(b, &op, TIR_DMA_COPY, dst, src);
    set_dma(b, &op, dge_mode, oob_mode, 0, -1, -1);
    if (oob_mode == ISA_OOB_SKIP)
        op.flags |= TIR_F_OOB_SKIP;
    if (rmw_add)
        op.flags |= TIR_F_RMW_ADD;
    return enc_emit(b, &op);
}

int enc_dma_copy_ex(enc_builder_t *b, const enc_dma_operand_t *dst, const enc_dma_operand_t *src,
                    int dge_mode, int oob_mode, int rmw_op, int qos)
{
    return enc_dma_copy_reg(b, dst, src, dge_mode, oob_mode, rmw_op, qos, -1, -1);
}

int enc_dma_copy_reg(enc_builder_t *b, const enc_dma_operand_t *dst, const enc_dma_operand_t *src,
                     int dge_mode, int oob_mode, int rmw_op, int qos, int src_reg, int dst_reg)
{
    if (b->failed)
        return -1;
    const char *path = b->path[0] ? b->path : "op";
    bool si = src->index.tensor >= 0, di = dst->index.tensor >= 0;
    if (si && di)
        return enc_fail(b, "%s (dma_copy): ``src`` and ``dst`` operands cannot both be indirect "
                        "memory accesses", path);
    if ((si || di) && (src_reg >= 0 || dst_reg >= 0))
        return enc_fail(b, "%s (dma_copy): field '%s': a register offset takes a direct access "
                        "on both sides (not a gather / scatter)", path,
                        src_reg >= 0 ? "src_reg" : "dst_reg");
    tir_op_t op;
    tir_op_init(&op, si ? TIR_INDIRECT_LOAD : di ? TIR_INDIRECT_SAVE : TIR_DMA_COPY);
    op.dst = enc_in(b, dst->ap);
    op.src[0] = enc_in(b, src->ap);
    op.nsrc = 1;
    set_dma(b, &op, dge_mode, oob_mode, qos, src_reg, dst_reg);
    if (oob_mode == ISA_OOB_SKIP)
        op.flags |= TIR_F_OOB_SKIP;
    if (si) {
        op.index = enc_in(b, src->index);
        set_index_bound(b, &op, src->index_bound);
        if (rmw_op != ISA_ALU_BYPASS)
            return enc_fail(b, "%s (dma_copy): field 'rmw_op': ``dst_rmw_op`` is not supported "
                            "indirect memory access on source (``src``) operand", path);
    } else if (di) {
        op.index = enc_in(b, dst->index);
        set_index_bound(b, &op, dst->index_bound);
        op.op0 = enc_field_i8(b, op.kind, rmw_op, "rmw_op");
    } else if (rmw_op != ISA_ALU_BYPASS && rmw_op != ISA_ALU_ADD) {
        return enc_fail(b, "%s (dma_copy): field 'rmw_op': only add is supported (got %s)", path,
                        isa_enum_name(ISA_FT_ALU, (unsigned)rmw_op)
                            ? isa_enum_name(ISA_FT_ALU, (unsigned)rmw_op) : "?");
    }
    if (rmw_op == ISA_ALU_ADD)
        op.flags |= TIR_F_RMW_ADD;
    return enc_emit(b, &op);
}

int enc_dma_transpose(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int naxes, const int *axes)
{
    tir_op_t op;
    op_init1(b, &op, TIR_DMA_TRANSPOSE, dst, src);
    if (naxes < 0 || naxes > 4 || (naxes > 0 && !axes))
        return enc_fail(b, "%s (dma_transpose): field 'axes': %d axes given (at most 4)",
                        b->path[0] ? b->path : "op", naxes);
    tir_op_rare_t r = tir_rare_default;
    for (int i = 0; i < naxes; i++)
        r.transpose_axes[i] = axes[i];
    r.n_transpose_axes = naxes;
    op.rare = enc_rare_in(b, &r);
    return enc_emit(b, &op);
}

int enc_indirect_load(enc_builder_t *b, tir_ap_t dst, tir_ap_t table, tir_ap_t index,
                      int64_t index_bound, int oob_mode)
{
    tir_op_t op;
    op_init1(b, &op, TIR_INDIRECT_LOAD, dst, table);
    op.index = enc_in(b, index);
    set_index_bound(b, &op, index_bound);
    set_dma(b, &op, ISA_DGE_NONE, oob_mode, 0, -1, -1);
    if (oob_mode == ISA_OOB_SKIP)
        op.flags |= TIR_F_OOB_SKIP;
    return enc_emit(b, &op);
}

int enc_indirect_save(enc_builder_t *b, tir_ap_t table, tir_ap_t index, int64_t index_bound,
                      tir_ap_t src, int rmw_op, int oob_mode)
{
    tir_op_t op;
    op_init1(b, &op, TIR_INDIRECT_SAVE, table, src);
    op.index = enc_in(b, index);
    set_index_bound(b, &op, index_bound);
    op.op0 = enc_field_i8(b, op.kind, rmw_op, "rmw_op");   /* validated, then folded
                                                              into TIR_F_RMW_ADD */
    set_dma(b, &op, ISA_DGE_NONE, oob_mode, 0, -1, -1);
    if (oob_mode == ISA_OOB_SKIP)
        op.flags |= TIR_F_OOB_SKIP;
    if (rmw_op == ISA_ALU_ADD)
        op.flags |= TIR_F_RMW_ADD;
    return enc_emit(b, &op);
}

int enc_local_gather(enc_builder_t *b, tir_ap_t dst, tir_ap_t src_buffer, tir_ap_t index,
                     int num_elem_per_idx, int num_valid_indices)
{
    tir_op_t op;
    op_init1(b, &op, TIR_LOCAL_GATHER, dst, src_buffer);
    op.index = enc_in(b, index);
    tir_op_rare_t r = *op.rare;
    r.num_elem_per_idx = num_elem_per_idx;
    r.num_valid = num_valid_indices;
    op.rare = enc_rare_in(b, &r);
    op.engine = ISA_ENG_POOL;
    return enc_emit(b, &op);
}

int enc_gather_flattened(enc_builder_t *b, tir_ap_t dst, tir_ap_t data, tir_ap_t indices)
{
    tir_op_t op;
    op_init1(b, &op, TIR_GATHER_FLATTENED, dst, data);
    op.index = enc_in(b, indices);
    op.engine = ISA_ENG_POOL;
    return enc_emit(b, &op);
}

int enc_memset(enc_builder_t *b, tir_ap_t dst, double value, int engine)
{
    tir_op_t op;
    tir_op_init(&op, TIR_MEMSET);
    op.dst = enc_in(b, dst);
    tir_op_rare_t r = *op.rare;
    r.value = value;
    op.rare = enc_rare_in(b, &r);
    op.engine = enc_field_i8(b, op.kind, engine, "engine");
    return enc_emit(b, &op);
}

int enc_broadcast_partition(enc_builder_t *b, tir_ap_t dst, tir_ap_t src)
{
    return emit1(b, TIR_BROADCAST_PARTITION, dst, src);
}

int enc_stream_shuffle(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, const uint8_t mask[32])
{
    tir_op_t op;
    op_init1(b, &op, TIR_STREAM_SHUFFLE, dst, src);
    if (!mask)
        return enc_fail(b, "%s (stream_shuffle): field 'shuffle_mask': missing",
                        b->path[0] ? b->path : "op");
    tir_op_rare_t r = tir_rare_default;
    memcpy(r.shuffle_mask, mask, 32);
    op.rare = enc_rare_in(b, &r);
    return enc_emit(b, &op);
}

int enc_load_tensor_to_register(enc_builder_t *b, tir_ap_t src, int reg)
{
    tir_op_t op;
    tir_op_init(&op, TIR_LOAD_TENSOR_TO_REGISTER);
    op.src[0] = enc_in(b, src);
    op.nsrc = 1;
    tir_op_rare_t r = *op.rare;
    r.reg = reg;
    op.rare = enc_rare_in(b, &r);
    return enc_emit(b, &op);
}

unsigned enc_matmul_flags(const enc_builder_t *b, unsigned flags)
{
    if (b->target && !b->target->pe_transpose_mode)
        flags &= ~(unsigned)TIR_F_TRANSPOSE;
    return flags;
}

static void matmul_common(enc_builder_t *b, tir_op_t *op, tir_opkind_t kind, tir_ap_t dst,
                          tir_ap_t st, tir_ap_t mv, unsigned flags)
{
    op_init2(b, op, kind, dst, st, mv);
    op->flags = enc_matmul_flags(b, flags);
    op->engine = ISA_ENG_PE;
}

int enc_matmul(enc_builder_t *b, tir_ap_t dst, tir_ap_t stationary, tir_ap_t moving,
               unsigned flags)
{
    tir_op_t op;
    matmul_common(b, &op, TIR_MATMUL, dst, stationary, moving, flags);
    return enc_emit(b, &op);
}

int enc_matmul_mx(enc_builder_t *b, tir_ap_t dst, tir_ap_t stationary, tir_ap_t moving,
                  tir_ap_t stationary_scale, tir_ap_t moving_scale, unsigned flags)
{
    tir_op_t op;
    matmul_common(b, &op, TIR_MATMUL_MX, dst, stationary, moving, flags);
    op.src[2] = enc_in(b, stationary_scale);
    op.src[3] = enc_in(b, moving_scale);
    op.nsrc = 4;
    return enc_emit(b, &op);
}

int enc_matmul_sparse(enc_builder_t *b, tir_ap_t dst, tir_ap_t stationary, tir_ap_t moving,
                      tir_ap_t tags, unsigned compress_ratio, unsigned flags)
{
    tir_op_t op;
    matmul_common(b, &op, TIR_MATMUL_SPARSE, dst, stationary, moving, flags);
    op.src[2] = enc_in(b, tags);
    op.nsrc = 3;
    tir_op_rare_t r = *op.rare;
    r.compress_ratio = compress_ratio;
    op.rare = enc_rare_in(b, &r);
    return enc_emit(b, &op);
}

int enc_transpose(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int engine)
{
    tir_op_t op;
    op_init1(b, &op, TIR_TRANSPOSE, dst, src);
    op.engine = enc_field_i8(b, op.kind, engine, "engine");
    return enc_emit(b, &op);
}

int enc_activation(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int func, enc_scalar_t scale,
                   tir_ap_t bias)
{
    return enc_activation_reduce(b, dst, src, func, scale, bias, ISA_ALU_BYPASS, enc_ap_none());
}

int enc_activation_reduce(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int func,
                          enc_scalar_t scale, tir_ap_t bias, int reduce_op, tir_ap_t reduce_res)
{
    tir_op_t op;
    op_init1(b, &op, TIR_ACTIVATION, dst, src);
    op.func = enc_field_i8(b, op.kind, func, "func");
    op.s0 = enc_scalar_in(b, scale);
    op.bias = enc_in(b, bias);
    op.reduce_op = enc_field_i8(b, op.kind, reduce_op, "reduce_op");
    op.dst2 = enc_in(b, reduce_res);
    op.engine = ISA_ENG_ACT;
    return enc_emit(b, &op);
}

int enc_activate2(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int op0, double imm0, int op1,
                  double imm1, int func, tir_ap_t bias)
{
    tir_op_t op;
    op_init1(b, &op, TIR_ACTIVATE2, dst, src);
    op.op0 = enc_field_i8(b, op.kind, op0, "op0");
    op.s0 = enc_scalar_in(b, enc_imm(imm0));
    op.op1 = enc_field_i8(b, op.kind, op1, "op1");
    op.s1 = enc_scalar_in(b, enc_imm(imm1));
    op.func = enc_field_i8(b, op.kind, func, "func");
    op.bias = enc_in(b, bias);
    op.engine = ISA_ENG_ACT;
    return enc_emit(b, &op);
}

int enc_tensor_tensor(enc_builder_t *b, tir_ap_t dst, tir_ap_t in0, tir_ap_t in1, int aluop)
{
    tir_op_t op;
    op_init2(b, &op, TIR_TENSOR_TENSOR, dst, in0, in1);
    op.op0 = enc_field_i8(b, op.kind, aluop, "op0");
    return enc_emit(b, &op);
}

int enc_tensor_scalar(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int op0, enc_scalar_t s0,
                      bool reverse0, int op1, enc_scalar_t s1, bool reverse1)
{
    tir_op_t op;
    op_init1(b, &op, TIR_TENSOR_SCALAR, dst, src);
    op.op0 = enc_field_i8(b, op.kind, op0, "op0");
    op.s0 = enc_scalar_in(b, s0);
    op.op1 = enc_field_i8(b, op.kind, op1, "op1");
    op.s1 = enc_scalar_in(b, s1);
    if (reverse0)
        op.flags |= TIR_F_REV0;
    if (reverse1)
        op.flags |= TIR_F_REV1;
    return enc_emit(b, &op);
}

int enc_scalar_tensor_tensor(enc_builder_t *b, tir_ap_t dst, tir_ap_t in0, int op0,
                             enc_scalar_t scalar, int op1, tir_ap_t in1)
{
    tir_op_t op;
    op_init2(b, &op, TIR_SCALAR_TENSOR_TENSOR, dst, in0, in1);
    op.op0 = enc_field_i8(b, op.kind, op0, "op0");
    op.s0 = enc_scalar_in(b, scalar);
    op.op1 = enc_field_i8(b, op.kind, op1, "op1");
    return enc_emit(b, &op);
}

int enc_tensor_reduce(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int aluop, int naxes,
                      const int *axes, bool negate, bool keepdims)
{
    tir_op_t op;
    op_init1(b, &op, TIR_TENSOR_REDUCE, dst, src);
    op.reduce_op = enc_field_i8(b, op.kind, aluop, "reduce_op");
    int nfree = src.ndim - 1;
    if (naxes > 0 && !axes)
        return enc_fail(b, "%s (tensor_reduce): field 'axis': missing", b->path[0] ? b->path : "op");
    tir_op_rare_t r = *op.rare;
    for (int i = 0; i < naxes; i++) {
        if (axes[i] < 1 || axes[i] > nfree || nfree < 1)
            return enc_fail(b, "%s (tensor_reduce): field 'axis': axis %d is not a free axis "
                            "of 'src' (1..%d)", b->path[0] ? b->path : "op", axes[i], nfree);
        r.axes |= 1u << (nfree - axes[i]);
    }
    op.rare = enc_rare_in(b, &r);
    if (negate)
        op.flags |= TIR_F_NEGATE;
    if (keepdims)
        op.flags |= TIR_F_KEEPDIMS;
    return enc_emit(b, &op);
}

int enc_tensor_partition_reduce(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int aluop)
{
    tir_op_t op;
    op_init1(b, &op, TIR_TENSOR_PARTITION_REDUCE, dst, src);
    op.reduce_op = enc_field_i8(b, op.kind, aluop, "reduce_op");
    op.engine = ISA_ENG_POOL;
    return enc_emit(b, &op);
}

int enc_tensor_copy(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int engine)
{
    tir_op_t op;
    op_init1(b, &op, TIR_TENSOR_COPY, dst, src);
    op.engine = enc_field_i8(b, op.kind, engine, "engine");
    return enc_emit(b, &op);
}

int enc_tensor_tensor_scan(enc_builder_t *b, tir_ap_t dst, tir_ap_t in0, tir_ap_t in1,
                           enc_scalar_t initial, int op0, int op1)
{
    tir_op_t op;
    op_init2(b, &op, TIR_TENSOR_TENSOR_SCAN, dst, in0, in1);
    op.s0 = enc_scalar_in(b, initial);
    op.op0 = enc_field_i8(b, op.kind, op0, "op0");
    op.op1 = enc_field_i8(b, op.kind, op1, "op1");
    return enc_emit(b, &op);
}

static int set_pattern(enc_builder_t *b, tir_op_t *op, int64_t offset, int64_t cm, int n,
                       const int64_t *steps)
{
    if (n < 0 || n > 4 || (n > 0 && !steps))
        return enc_fail(b, "%s (%s): field 'pattern': %d dims (at most 4)",
                        b->path[0] ? b->path : "op", tir_op_name(op->kind), n);
    tir_op_rare_t r = *op->rare;
    r.pat_offset = offset;
    r.pat_cm = cm;
    r.pat_ndim = n;
    for (int i = 0; i < n; i++)
        r.pat_step[i] = steps[i];
    op->rare = enc_rare_in(b, &r);
    return 0;
}

int enc_iota(enc_builder_t *b, tir_ap_t dst, int64_t offset, int64_t channel_multiplier,
             int npattern, const int64_t *steps)
{
    tir_op_t op;
    tir_op_init(&op, TIR_IOTA);
    op.dst = enc_in(b, dst);
    op.engine = ISA_ENG_POOL;
    if (set_pattern(b, &op, offset, channel_multiplier, npattern, steps))
        return -1;
    return enc_emit(b, &op);
}

int enc_affine_select(enc_builder_t *b, tir_ap_t dst, tir_ap_t on_true, int64_t offset,
                      int64_t channel_multiplier, int npattern, const int64_t *steps, int cmp,
                      double on_false_value)
{
    tir_op_t op;
    op_init1(b, &op, TIR_AFFINE_SELECT, dst, on_true);
    op.cmp = enc_field_i8(b, op.kind, cmp, "cmp_op");
    tir_op_rare_t r = *op.rare;
    r.fill = on_false_value;
    op.rare = enc_rare_in(b, &r);
    op.engine = ISA_ENG_POOL;
    if (set_pattern(b, &op, offset, channel_multiplier, npattern, steps))
        return -1;
    return enc_emit(b, &op);
}

int enc_max8(enc_builder_t *b, tir_ap_t dst, tir_ap_t src)
{
    return emit1(b, TIR_MAX8, dst, src);
}

int enc_bn_stats(enc_builder_t *b, tir_ap_t dst, tir_ap_t data)
{
    return emit1(b, TIR_BN_STATS, dst, data);
}

int enc_bn_aggr(enc_builder_t *b, tir_ap_t dst, tir_ap_t data)
{
    return emit1(b, TIR_BN_AGGR, dst, data);
}

int enc_range_select(enc_builder_t *b, tir_ap_t dst, tir_ap_t on_true, int cmp0, int cmp1,
                     tir_ap_t bound0, tir_ap_t bound1, int reduce_cmd, tir_ap_t reduce_res,
                     int reduce_op, int64_t range_start, double on_false_value)
{
    tir_op_t op;
    op_init1(b, &op, TIR_RANGE_SELECT, dst, on_true);
    op.src[1] = enc_in(b, bound0);
    op.src[2] = enc_in(b, bound1);
    op.nsrc = 3;
    op.cmp = enc_field_i8(b, op.kind, cmp0, "cmp_op");
    op.reduce_op = enc_field_i8(b, op.kind, reduce_op, "reduce_op");
    op.dst2 = enc_in(b, reduce_res);
    tir_op_rare_t r = *op.rare;
    r.cmp1 = cmp1;
    r.reduce_cmd = reduce_cmd;
    r.pat_offset = range_start;
    r.fill = on_false_value;
    op.rare = enc_rare_in(b, &r);
    return enc_emit(b, &op);
}

int enc_select_reduce(enc_builder_t *b, tir_ap_t dst, tir_ap_t predicate, tir_ap_t on_true,
                      enc_scalar_t on_false, tir_ap_t reduce_res, int reduce_cmd, int reduce_op,
                      bool reverse_pred)
{
    tir_op_t op;
    op_init1(b, &op, TIR_SELECT_REDUCE, dst, predicate);
    op.src[1] = enc_in(b, on_true);
    op.nsrc = 2;
    op.s0 = enc_scalar_in(b, on_false);
    op.dst2 = enc_in(b, reduce_res);
    tir_op_rare_t r = *op.rare;
    r.reduce_cmd = reduce_cmd;
    op.rare = enc_rare_in(b, &r);
    op.reduce_op = enc_field_i8(b, op.kind, reduce_op, "reduce_op");
    if (reverse_pred)
        op.flags |= TIR_F_REV0;
    return enc_emit(b, &op);
}

int enc_find_index8(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, tir_ap_t vals)
{
    tir_op_t op;
    op_init2(b, &op, TIR_FIND_INDEX8, dst, src, vals);
    return enc_emit(b, &op);
}

int enc_match_replace8(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, tir_ap_t vals, double imm,
                       tir_ap_t dst_idx)
{
    tir_op_t op;
    op_init2(b, &op, TIR_MATCH_REPLACE8, dst, src, vals);
    tir_op_rare_t r = *op.rare;
    r.value = imm;
    op.rare = enc_rare_in(b, &r);
    op.dst2 = enc_in(b, dst_idx);
    return enc_emit(b, &op);
}

int enc_select(enc_builder_t *b, tir_ap_t dst, tir_ap_t pred, tir_ap_t on_true,
               tir_ap_t on_false, double on_false_value)
{
    tir_op_t op;
    op_init2(b, &op, TIR_SELECT, dst, pred, on_true);
    if (on_false.tensor >= 0) {
        op.src[2] = enc_in(b, on_false);
        op.nsrc = 3;
    } else {
        tir_op_rare_t r = *op.rare;
        r.fill = on_false_value;
        op.rare = enc_rare_in(b, &r);
    }
    return enc_emit(b, &op);
}

int enc_dropout(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, enc_scalar_t prob)
{
    tir_op_t op;
    op_init1(b, &op, TIR_DROPOUT, dst, src);
    op.s0 = enc_scalar_in(b, prob);
    tir_op_rare_t r = *op.rare;
    r.prob = prob.is_ap ? 0 : prob.imm;
    op.rare = enc_rare_in(b, &r);
    return enc_emit(b, &op);
}

int enc_quantize_mx(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, tir_ap_t scale)
{
    tir_op_t op;
    op_init1(b, &op, TIR_QUANTIZE_MX, dst, src);
    op.dst2 = enc_in(b, scale);
    return enc_emit(b, &op);
}

int enc_core_barrier(enc_builder_t *b, unsigned cores, int engine, tir_ap_t data)
{
    tir_op_t op;
    tir_op_init(&op, TIR_CORE_BARRIER);
    tir_op_rare_t r = *op.rare;
    r.barrier_cores = cores;
    op.rare = enc_rare_in(b, &r);
    op.engine = enc_field_i8(b, op.kind, engine, "engine");
    if (data.tensor >= 0) {
        op.src[0] = enc_in(b, data);
        op.nsrc = 1;
    }
    return enc_emit(b, &op);
}

int enc_sendrecv(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int peer)
{
    tir_op_t op;
    op_init1(b, &op, TIR_SENDRECV, dst, src);
    tir_op_rare_t r = *op.rare;
    r.peer = peer;
    op.rare = enc_rare_in(b, &r);
    return enc_emit(b, &op);
}
