/* lower_seq.c - the accumulator and sequence family.
 *
 *   tensor_scalar_cumulative -> TensorScalarCacheCumulative (DVE)
 *   tensor_scalar_reduce     -> TensorScalarReduce (DVE)
 *   sequence_bounds          -> GetSequenceBounds (Pool)
 *   nonzero_with_count       -> NonzeroWithCount (Pool)
 *   topk                     -> TopK (Pool)
 *   exponential              -> Exponential (DVE)
 *
 * Semantics: docs/semantics.md; validation: validate_seq.c. */
#include "builder.h"
#include "lower.h"

/* the tensor-scalar accumulator ops (format TSACC): tensor_scalar_cumulative,
 * tensor_scalar_reduce, exponential */
static int lower_ts_acc(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bool cumulative = op->kind == TIR_TENSOR_SCALAR_CUMULATIVE;
    bir_inst_t in;
    if (cumulative)
        lw_inst(c, &in, BIR_TS_CUMULATIVE, ISA_OP_TENSOR_SCALAR_CUMULATIVE);
    else if (op->kind == TIR_EXPONENTIAL)
        lw_inst(c, &in, BIR_EXPONENTIAL, ISA_OP_EXPONENTIAL);
    else
        lw_inst(c, &in, BIR_TS_REDUCE, ISA_OP_TENSOR_SCALAR_REDUCE);
    isa_fmt_TSACC_t *f = &in.isa.f->TSACC;
    const char *what = tir_op_name(op->kind);
    if (lw_tap(c, &in, op->src[0], false, enc_operand_name(op->kind, 0), &f->in) ||
        lw_tap(c, &in, op->dst, true, "dst", &f->out) ||
        lw_same_partitions(c, what, &f->in, &f->out) ||
        lw_scalar(c, &in, &op->s0, enc_operand_name(op->kind, 100), &f->s0, &f->s0_is_ptr))
        return -1;
    bool load = op->rare->reduce_cmd == ISA_REDCMD_LOAD_REDUCE;
    if (load && lw_scalar(c, &in, &op->s1, enc_operand_name(op->kind, 101), &f->s1,
                          &f->s1_is_ptr))
        return -1;
    f->red_out.space = ISA_SPACE_NONE;
    if (!cumulative && lw_has(op->dst2) &&
        lw_ptr(c, &in, op->dst2, true, "reduce_res", &f->red_out))
        return -1;
    f->op0 = (uint32_t)op->op0;
    f->op1 = (uint32_t)(op->kind == TIR_TENSOR_SCALAR_REDUCE ? op->reduce_op : op->op1);
    f->red_cmd = (uint32_t)op->rare->reduce_cmd;
    f->rev0 = (op->flags & TIR_F_REV0) != 0;
    f->negate = (op->flags & TIR_F_NEGATE) != 0;
    in.engine = ISA_ENG_DVE;
    return lw_emit(c, &in);
}

static int lower_sequence_bounds(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t in;
    lw_inst(c, &in, BIR_SEQUENCE_BOUNDS, ISA_OP_GET_SEQUENCE_BOUNDS);
    isa_fmt_COPY_t *f = &in.isa.f->COPY;
    if (lw_tap(c, &in, op->src[0], false, "segment_ids", &f->in) ||
        lw_tap(c, &in, op->dst, true, "dst", &f->out) ||
        lw_same_partitions(c, "sequence_bounds", &f->in, &f->out))
        return -1;
    in.engine = ISA_ENG_POOL;
    return lw_emit(c, &in);
}

/* nonzero_with_count writes only partitions 0, 16, ...: dst is also read
 * (the other partitions keep their contents). */
static int lower_nonzero(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t in;
    lw_inst(c, &in, BIR_NONZERO_WITH_COUNT, ISA_OP_NONZERO_WITH_COUNT);
    isa_fmt_NZC_t *f = &in.isa.f->NZC;
    if (lw_tap(c, &in, op->src[0], false, "src", &f->in) ||
        lw_tap(c, &in, op->dst, true, "dst", &f->out) ||
        lw_same_partitions(c, "nonzero_with_count", &f->in, &f->out))
        return -1;
    f->offset = (int32_t)op->rare->pat_offset;
    f->pad = (int32_t)op->rare->value;
    in.engine = ISA_ENG_POOL;
    return lw_emit(c, &in);
}

static int lower_topk(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t in;
    lw_inst(c, &in, BIR_TOPK, ISA_OP_TOPK);
    isa_fmt_TOPK_t *f = &in.isa.f->TOPK;
    if (lw_tap(c, &in, op->src[0], false, "src", &f->in) ||
        lw_tap(c, &in, op->dst, true, "val_dst", &f->out) ||
        lw_tap(c, &in, op->dst2, true, "idx_dst", &f->idx) ||
        lw_same_partitions(c, "topk", &f->in, &f->out) ||
        lw_same_partitions(c, "topk", &f->in, &f->idx))
        return -1;
    f->n = (uint32_t)op->rare->num_valid;
    in.engine = ISA_ENG_POOL;
    return lw_emit(c, &in);
}

int lower_seq(lower_ctx_t *c)
{
    switch (c->op->kind) {
    case TIR_TENSOR_SCALAR_CUMULATIVE: case TIR_TENSOR_SCALAR_REDUCE:
    case TIR_EXPONENTIAL: return lower_ts_acc(c);
    case TIR_SEQUENCE_BOUNDS: return lower_sequence_bounds(c);
    case TIR_NONZERO_WITH_COUNT: return lower_nonzero(c);
    case TIR_TOPK: return lower_topk(c);
    default: return lw_err(c, "lower_seq: unexpected op %s", tir_op_name(c->op->kind));
    }
}
