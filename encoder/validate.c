/* validate.c - build-time validation of one tile-IR op, shared by the C
 * builder API and the JSON front-end (both reach it through enc_emit()).
 *
 * Messages: "<path> (<op>): field '<field>': <what>".  Where the production
 * front-end has a message we reproduce its literal text. */
#include "builder.h"
#include "collective.h"
#include "regalloc.h"
#include "rng.h"
#include "validate_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- operand names (NKI argument names) ---- */

const char *enc_operand_name(tir_opkind_t kind, int slot)
{
    switch (slot) {
    case -1: return kind == TIR_TOPK ? "val_dst" : "dst";
    case -2:
        switch (kind) {
        case TIR_ACTIVATION: case TIR_ACTIVATE2: case TIR_RANGE_SELECT:
        case TIR_SELECT_REDUCE: case TIR_TENSOR_SCALAR_REDUCE: case TIR_EXPONENTIAL:
            return "reduce_res";
        case TIR_MATCH_REPLACE8: return "dst_idx";
        case TIR_TOPK: return "idx_dst";
        case TIR_QUANTIZE_MX: return "scale";
        default: return "dst2";
        }
    case -3:
        return kind == TIR_GATHER_FLATTENED ? "indices" : "index";
    case -4: return "bias";
    case 100:
        switch (kind) {
        case TIR_ACTIVATION: return "scale";
        case TIR_ACTIVATE2: return "imm0";
        case TIR_TENSOR_SCALAR: case TIR_TENSOR_SCALAR_REDUCE: return "operand0";
        case TIR_TENSOR_SCALAR_CUMULATIVE: return "imm0";
        case TIR_EXPONENTIAL: return "max_value";
        case TIR_SCALAR_TENSOR_TENSOR: return "scalar";
        case TIR_TENSOR_TENSOR_SCAN: return "initial";
        case TIR_DROPOUT: return "prob";
        case TIR_RAND2: return "min";
        default: return "s0";
        }
    case 101:
        switch (kind) {
        case TIR_ACTIVATE2: return "imm1";
        case TIR_TENSOR_SCALAR: return "operand1";
        case TIR_RAND2: return "max";
        case TIR_TENSOR_SCALAR_CUMULATIVE: return "imm1";
        case TIR_TENSOR_SCALAR_REDUCE: case TIR_EXPONENTIAL: return "reduce_init";
        default: return "s1";
        }
    default: break;
    }
    switch (kind) {
    case TIR_MATMUL: case TIR_MATMUL_MX: case TIR_MATMUL_SPARSE: {
        static const char *const n[] = {"stationary", "moving", "", ""};
        if (slot == 2)
            return kind == TIR_MATMUL_MX ? "stationary_scale" : "tags";
        if (slot == 3)
            return "moving_scale";
        return n[slot & 3];
    }
    case TIR_TENSOR_TENSOR: case TIR_SCALAR_TENSOR_TENSOR: case TIR_TENSOR_TENSOR_SCAN:
        return slot == 0 ? "in0" : "in1";
    case TIR_LOCAL_GATHER: return "src_buffer";
    case TIR_GATHER_FLATTENED: case TIR_BN_STATS: case TIR_BN_AGGR: return "data";
    case TIR_AFFINE_SELECT: return "on_true";
    case TIR_ACTIVATE2: return slot == 1 ? "relu_param" : "src";
    case TIR_RANGE_SELECT: return slot == 0 ? "on_true_tile" : slot == 1 ? "bound0" : "bound1";
    case TIR_SELECT_REDUCE: return slot == 0 ? "predicate" : "on_true";
    case TIR_RAND_SET_STATE: case TIR_SET_RNG_SEED: return "src_seeds";
    case TIR_FIND_INDEX8: case TIR_MATCH_REPLACE8: return slot == 0 ? "src" : "vals";
    case TIR_SELECT: return slot == 0 ? "pred" : slot == 1 ? "on_true" : "on_false";
    case TIR_CORE_BARRIER: case TIR_TENSOR_SCALAR_REDUCE: return "data";
    case TIR_SEQUENCE_BOUNDS: return "segment_ids";
    default: return "src";
    }
}

/* ---- helpers ---- */

static bool engine_in(int e, unsigned mask)
{
    if (e < 0 || e >= ISA_ENG_COUNT)
        return false;
    return e == ISA_ENG_UNASSIGNED || (mask & (1u << e));
}

static const char *engine_list(unsigned mask, char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = 0;
    for (int e = 0; e < ISA_ENG_COUNT && o < n; e++)
        if (mask & (1u << e))
            o += (size_t)snprintf(buf + o, n - o, "%s%s", o ? ", " : "",
                                  isa_engine_name((isa_engine_t)e));
    return buf;
}

#define M(e) (1u << ISA_ENG_##e)
#define DMA_ENGINES (M(SP) | M(ACT) | M(POOL) | M(DMA))

/* Engines that may run each op kind (UNASSIGNED always allowed). */
static unsigned legal_engines(tir_opkind_t k)
{
    switch (k) {
    case TIR_LOAD: case TIR_STORE: case TIR_DMA_COPY: case TIR_DMA_TRANSPOSE:
    case TIR_INDIRECT_LOAD: case TIR_INDIRECT_SAVE: case TIR_SENDRECV:
        return DMA_ENGINES;
    case TIR_MATMUL: case TIR_MATMUL_MX: case TIR_MATMUL_SPARSE: return M(PE);
    case TIR_TRANSPOSE: return M(PE) | M(DVE);
    case TIR_ACTIVATION: case TIR_ACTIVATE2: return M(ACT);
    case TIR_TENSOR_TENSOR: case TIR_SCALAR_TENSOR_TENSOR: case TIR_TENSOR_REDUCE:
    case TIR_SELECT:
        return M(DVE) | M(POOL);
    case TIR_TENSOR_SCALAR: case TIR_TENSOR_COPY: case TIR_BROADCAST_PARTITION:
        return M(DVE) | M(ACT) | M(POOL);
    case TIR_TENSOR_PARTITION_REDUCE: case TIR_IOTA:
    case TIR_LOCAL_GATHER: case TIR_GATHER_FLATTENED:
        return M(POOL);
    case TIR_AFFINE_SELECT:   /* Pool AffineSelect, or (seed 001) a predicated TensorScalarPtr on DVE */
        return M(POOL) | M(DVE);
    case TIR_MEMSET: return M(DVE) | M(POOL);
    case TIR_TENSOR_TENSOR_SCAN: case TIR_MAX8: case TIR_FIND_INDEX8: case TIR_MATCH_REPLACE8:
    case TIR_DROPOUT: case TIR_QUANTIZE_MX: case TIR_STREAM_SHUFFLE: case TIR_BN_STATS:
    case TIR_BN_AGGR: case TIR_RANGE_SELECT: case TIR_SELECT_REDUCE:
    case TIR_TENSOR_SCALAR_CUMULATIVE: case TIR_TENSOR_SCALAR_REDUCE: case TIR_EXPONENTIAL:
        return M(DVE);
    case TIR_SEQUENCE_BOUNDS: case TIR_NONZERO_WITH_COUNT: case TIR_TOPK:
        return M(POOL);
    case TIR_LOAD_TENSOR_TO_REGISTER: case TIR_CORE_BARRIER: case TIR_NOOP:
    case TIR_COLL_SYNC:
    case TIR_INLINE_ASM: case TIR_INLINE_ASM_BYTES:
        return M(PE) | M(ACT) | M(POOL) | M(DVE) | M(SP);
    case TIR_ALL_REDUCE: case TIR_ALL_GATHER: case TIR_REDUCE_SCATTER: case TIR_ALL_TO_ALL:
    case TIR_COLLECTIVE_PERMUTE: case TIR_RANK_ID:
        return DMA_ENGINES | M(DVE);   /* the engine of its rank memset */
    case TIR_RNG: case TIR_RAND_GET_STATE: case TIR_RAND_SET_STATE:
        return M(DVE) | M(POOL);
    case TIR_RAND2: case TIR_SET_RNG_SEED:
        return M(DVE);
    case TIR_REGISTER_MOVE: case TIR_REGISTER_STORE:
        return M(PE) | M(ACT) | M(POOL) | M(DVE) | M(SP);
    case TIR_OP_COUNT: break;
    }
    return 0;
}

unsigned enc_legal_engines(tir_opkind_t k)
{
    return legal_engines(k);
}

static bool is_dma(tir_opkind_t k)
{
    return k <= TIR_INDIRECT_SAVE || k == TIR_SENDRECV;
}

/* Whether op's operands may carry a dtype view: any compute op (the
 * engine's access pattern carries the dtype); of the DMAs only the direct
 * ones, whose descriptors carry it (indirect, scaled and register-offset
 * DMAs compute addresses in the tensor's own elements); no collective
 * (their pulls are laid out in the tensor's dtype). */
static bool view_ok(const tir_op_t *op)
{
    if (is_dma(op->kind))
        return enc_direct_dma(op) && op->rare->src_reg < 0 && op->rare->dst_reg < 0 && !op->rare->dma_scaled &&
               op->index->tensor < 0;
    switch (op->kind) {
    case TIR_ALL_REDUCE: case TIR_ALL_GATHER: case TIR_REDUCE_SCATTER: case TIR_ALL_TO_ALL:
    case TIR_COLLECTIVE_PERMUTE: case TIR_COLL_SYNC: case TIR_CORE_BARRIER:
        return false;
    default:
        return true;
    }
}

static bool alu_valid(int alu)
{
    return isa_enum_name(ISA_FT_ALU, (unsigned)alu) != NULL;
}

/* ---- generic operand checks ---- */

static int check_operands(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    const tir_ap_t *const aps[] = {op->dst, op->dst2, op->src[0], op->src[1], op->src[2],
                                   op->src[3], op->index, op->bias, op->s0.ap, op->s1.ap};
    static const struct { int slot; } all[] = {
        {-1}, {-2}, {0}, {1}, {2}, {3}, {-3}, {-4}, {100}, {101},
    };
    if (op->nsrc < 0 || op->nsrc > 4)
        return vfail(v, NULL, "nsrc %d out of range", op->nsrc);
    for (int i = 0; i < op->nsrc; i++)
        if (op->src[i]->tensor < 0)
            return vfail(v, enc_operand_name(op->kind, i), "operand missing");
    const tir_ap_t *passed = NULL;   /* the last operand check_ap accepted */
    int64_t passed_bound = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        const tir_ap_t *a = aps[i];
        if (a == &tir_ap_none)   /* most slots: absent (tensor -1, skipped below) */
            continue;
        if (a->tensor < -1 || a->tensor >= v->k->ntensors)
            return vfail(v, enc_operand_name(op->kind, all[i].slot), "no such tensor (id %d)",
                         a->tensor);
        if (a->tensor < 0)
            continue;
        if ((all[i].slot == 100 && !op->s0.is_ap) || (all[i].slot == 101 && !op->s1.is_ap))
            continue;
        if (a->view && !view_ok(op))
            return vfail(v, enc_operand_name(op->kind, all[i].slot),
                         "a dtype view (%s) of '%s' is taken by compute ops and by a direct "
                         "load, store or dma_copy without a register offset, not by %s",
                         isa_dtype_numpy_name(a->view - 1u), v->k->tensors[a->tensor].name,
                         is_dma(op->kind) ? "this DMA" : "a collective");
        bool indirect_side = op->index->tensor >= 0 &&
                             ((op->kind == TIR_INDIRECT_LOAD && all[i].slot == 0) ||
                              (op->kind == TIR_DMA_TRANSPOSE && all[i].slot == 0) ||
                              (op->kind == TIR_INDIRECT_SAVE && all[i].slot == -1));
        int64_t bound = indirect_side ? op->rare->index_bound : 0;
        /* an in-place op names one record twice (dst = src): check_ap reads
         * only it, the bound and this op, so its second answer is the first */
        if (!(a == passed && bound == passed_bound) && enc_check_ap_memo(v, a, all[i].slot, bound))
            return -1;
        passed = a, passed_bound = bound;
        const tir_tensor_t *t = tens(v, a);
        if (!is_dma(op->kind) && op->kind != TIR_CORE_BARRIER && !is_tile_kind(t->kind))
            return vfail(v, enc_operand_name(op->kind, all[i].slot),
                         "'%s' is an HBM tensor; %s operands must be SBUF or PSUM tiles",
                         t->name, tir_op_name(op->kind));
        if (op->engine == ISA_ENG_POOL && t->kind == TIR_T_PSUM)
            return vfail(v, enc_operand_name(op->kind, all[i].slot),
                         "the Pool (GpSimd) engine cannot access PSUM (tile '%s')", t->name);
        if (t->kind == TIR_T_CONSTANT && (all[i].slot == -1 || all[i].slot == -2))
            return vfail(v, enc_operand_name(op->kind, all[i].slot),
                         "constant '%s' cannot be written", t->name);
    }
    if (op->s0.is_ap && op->s0.ap->tensor < 0)
        return vfail(v, enc_operand_name(op->kind, 100), "scalar tile operand missing");
    if (op->s1.is_ap && op->s1.ap->tensor < 0)
        return vfail(v, enc_operand_name(op->kind, 101), "scalar tile operand missing");
    return 0;
}

/* dst and src: same partitions and free element count (compute ops) */
static int same_pf(const vctx_t *v, const tir_ap_t *a, int sa, const tir_ap_t *b, int sb)
{
    if (a->tensor < 0 || b->tensor < 0)
        return 0;
    if (ap_parts(a) != ap_parts(b) || ap_free(a) != ap_free(b)) {
        char x[96], y[96];
        shape_str(a, x, sizeof x);
        shape_str(b, y, sizeof y);
        return vfail(v, enc_operand_name(v->op->kind, sb),
                     "shape %s does not match '%s' shape %s (partitions and free elements "
                     "must be equal)", y, enc_operand_name(v->op->kind, sa), x);
    }
    return 0;
}

static int per_partition_scalar(const vctx_t *v, const tir_scalar_t *s, int slot,
                                const tir_ap_t *ref)
{
    if (!s->is_ap) {
        if (isnan(s->imm) && v->op->kind != TIR_MEMSET)
            return vfail(v, enc_operand_name(v->op->kind, slot), "immediate is NaN");
        return 0;
    }
    if (ap_free(s->ap) != 1 || (ref->tensor >= 0 && ap_parts(s->ap) != ap_parts(ref)))
        return vfail(v, enc_operand_name(v->op->kind, slot),
                     "a per-partition scalar must be a [%lld, 1] tile access (got %lld "
                     "partitions x %lld)", (long long)ap_parts(ref),
                     (long long)ap_parts(s->ap), (long long)ap_free(s->ap));
    return 0;
}

static int pp_ap(const vctx_t *v, const tir_ap_t *a, int slot, const tir_ap_t *ref)
{
    if (a->tensor < 0)
        return 0;
    tir_scalar_t s;
    memset(&s, 0, sizeof s);
    s.is_ap = true;
    s.ap = a;
    return per_partition_scalar(v, &s, slot, ref);
}

/* ---- compute ---- */

static int check_alu(const vctx_t *v, int alu, const char *field, bool allow_bypass)
{
    if (!alu_valid(alu))
        return vfail(v, field, "invalid ALU op %d", alu);
    if (!allow_bypass && alu == ISA_ALU_BYPASS)
        return vfail(v, field, "an operation is required");
    if (isa_alu_is_bitwise((unsigned)alu) && v->op->engine != ISA_ENG_UNASSIGNED &&
        v->op->engine != ISA_ENG_DVE)
        return vfail(v, field, "bitwise op '%s' runs only on the Vector engine (engine %s)",
                     isa_enum_name(ISA_FT_ALU, (unsigned)alu),
                     isa_engine_name((isa_engine_t)v->op->engine));
    return 0;
}

static int check_reduce_alu(const vctx_t *v, int alu, const char *field)
{
    switch (alu) {
    case ISA_ALU_ADD: case ISA_ALU_SUBTRACT: case ISA_ALU_MULTIPLY: case ISA_ALU_MAX:
    case ISA_ALU_MIN: case ISA_ALU_ABS_MAX: case ISA_ALU_ABS_MIN: case ISA_ALU_BITWISE_AND:
    case ISA_ALU_BITWISE_OR: case ISA_ALU_BITWISE_XOR: case ISA_ALU_LOGICAL_AND:
    case ISA_ALU_LOGICAL_OR: case ISA_ALU_LOGICAL_XOR:
        return 0;
    default:
        return vfail(v, field, "'%s' is not a reduction (add, subtract, multiply, max, min, "
                     "abs_max, abs_min, bitwise/logical and, or, xor)",
                     isa_enum_name(ISA_FT_ALU, (unsigned)alu) ? isa_enum_name(ISA_FT_ALU,
                                                                              (unsigned)alu)
                                                             : "?");
    }
}

static const char *alu_name(int alu)
{
    const char *n = isa_enum_name(ISA_FT_ALU, (unsigned)alu);
    return alu == ISA_ALU_BYPASS ? "None" : n ? n : "?";
}

/* tensor_scalar on the Scalar (Activation) engine.  NKI: on trn2 it runs
 * op0=multiply with op1=add, op0=multiply alone and op0=add alone only;
 * those are the Activation's affine step, whose scale and bias are also
 * where a [P, 1] operand goes (lower_act.c), on every target.  The other
 * arithmetic ops take immediates only (a TensorScalar on ACT, trn1/trn3). */
static int check_ts_act(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    static const char combos[] = "op0=multiply with op1=add, op0=multiply alone (op1=None) or "
                                 "op0=add alone";
    bool mul_add = op->op0 == ISA_ALU_MULTIPLY || op->op0 == ISA_ALU_ADD;
    if (op->rare->s0_reg >= 0)
        return vfail(v, "operand0_reg", "a register-offset operand0 (TensorScalarGEP) runs on "
                     "the Vector or GpSimd engine, not the Scalar engine");
    if (tir_ts_act_affine(op->op0, op->op1)) {
        if (op->s0.is_ap && op->op1 == ISA_ALU_ADD && !op->s1.is_ap && !v->tg->act_imm_bias)
            return vfail(v, "operand1", "with a [P, 1] operand0 the Scalar engine adds operand1 "
                         "as the Activation's bias, and a number bias needs NeuronCore-v3 or "
                         "newer (target trn2, trn3); on %s give operand1 as a [P, 1] tile or "
                         "use engine=vector", v->tg->name);
        return 0;
    }
    if (v->tg->act_ts_affine_only)
        return vfail(v, mul_add ? "op1" : "op0", "the Scalar engine on %s runs tensor_scalar "
                     "only as %s (got op0=%s, op1=%s); use engine=vector or engine=gpsimd",
                     v->tg->name, combos, alu_name(op->op0), alu_name(op->op1));
    if (tir_ts_has_ptr(op))
        return vfail(v, op->s0.is_ap ? "operand0" : "operand1", "a [P, 1] operand on the "
                     "Scalar engine is the Activation's scale or bias, so it takes one only "
                     "with %s (got op0=%s, op1=%s); use a number or engine=vector",
                     combos, alu_name(op->op0), alu_name(op->op1));
    return 0;
}

static int check_activation(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    if (!isa_enum_name(ISA_FT_ACTFN, (unsigned)op->func))
        return vfail(v, "func", "invalid activation function %d", op->func);
    if (same_pf(v, op->dst, -1, op->src[0], 0) ||
        per_partition_scalar(v, &op->s0, 100, op->src[0]) || pp_ap(v, op->bias, -4, op->src[0]))
        return -1;
    if (op->kind == TIR_ACTIVATE2) {
        if (check_alu(v, op->op0, "op0", true) || check_alu(v, op->op1, "op1", true))
            return -1;
        if (op->src[1]->tensor >= 0 &&
            (pp_ap(v, op->src[1], 1, op->src[0]) ||
             (odt(v, op->src[1]) != ISA_DT_FP32 &&
              vfail(v, "relu_param", "dtype %s (a tile relu_param is float32)",
                    isa_dtype_numpy_name(odt(v, op->src[1]))))))
            return -1;
        if (op->src[1]->tensor < 0 && !isfinite(op->rare->value))
            return vfail(v, "relu_param", "%g is not finite", op->rare->value);
        if ((op->flags & TIR_F_REV0) && op->op0 == ISA_ALU_BYPASS)
            return vfail(v, "reverse0", "requires op0 to be set");
        if ((op->flags & TIR_F_REV1) && op->op1 == ISA_ALU_BYPASS)
            return vfail(v, "reverse1", "requires op1 to be set");
        if (per_partition_scalar(v, &op->s1, 101, op->src[0]))
            return -1;
    }
    if (op->reduce_op != ISA_ALU_BYPASS) {
        if (check_reduce_alu(v, op->reduce_op, "reduce_op"))
            return -1;
        if (!isa_enum_name(ISA_FT_REDCMD, (unsigned)op->rare->reduce_cmd))
            return vfail(v, "reduce_cmd", "invalid value %d", op->rare->reduce_cmd);
        /* reduce_res absent (NKI's None): the result stays in the registers */
        if (op->dst2->tensor >= 0 && pp_ap(v, op->dst2, -2, op->src[0]))
            return -1;
    } else if (op->dst2->tensor >= 0) {
        return vfail(v, "reduce_res", "given without a reduce_op");
    }
    return 0;
}

static int check_local_gather(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    if (need(v, op->index, -3) || need(v, op->dst, -1))
        return -1;
    unsigned it = odt(v, op->index);
    if (it != ISA_DT_UINT16)
        return vfail(v, "index", "dtype %s not allowed (uint16)", isa_dtype_numpy_name(it));
    /* each GpSimd core serves 16 partitions; its indices are those of its
     * partitions' rows */
    int64_t parts = ap_parts(op->index);
    /* NKI: src_buffer's (and index's) partition count is a multiple of 16:
     * the instruction runs on whole GpSimd cores (the simulator refuses
     * anything else) */
    if (parts % 16)
        return vfail(v, "index", "%lld partitions: local_gather runs on whole 16-partition "
                     "GpSimd cores, so index and src_buffer need a multiple of 16 partitions",
                     (long long)parts);
    int64_t per_core = 16 * ap_free(op->index);
    int64_t nvalid = op->rare->num_valid > 0 ? op->rare->num_valid : per_core;
    if (op->rare->num_valid < 0)
        return vfail(v, "num_valid_indices", "%d is negative", op->rare->num_valid);
    if (nvalid > per_core)
        return vfail(v, "num_valid_indices", "num_valid_indices cannot exceed total indices per core");
    if (nvalid > 4096)
        return vfail(v, "num_valid_indices", "number of indices per core must be <= 4096");
    int e = op->rare->num_elem_per_idx;
    if (e != 1 && e != 2 && e != 4 && e != 8 && e != 16 && e != 32)
        return vfail(v, "num_elem_per_idx", "num_elem_per_idx must be one of [1, 2, 4, 8, 16, 32]");
    if (ap_parts(op->src[0]) != parts)
        return vfail(v, "index", "src_buffer and index must have same partition dimension size");
    /* NKI: dst is [P, num_valid_indices, num_elem_per_idx] */
    if (ap_parts(op->dst) != parts || ap_free(op->dst) != nvalid * e)
        return vfail(v, "dst", "shape must be [%lld, %lld, %d] (P, num_valid_indices, "
                     "num_elem_per_idx): %lld elements per partition, not %lld", (long long)parts,
                     (long long)nvalid, e, (long long)(nvalid * e), (long long)ap_free(op->dst));
    if (odt(v, op->dst) != odt(v, op->src[0]))
        return vfail(v, "dst", "dtype differs from src_buffer dtype");
    return 0;
}

static int check_gather_flattened(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    if (need(v, op->index, -3) || need(v, op->dst, -1))
        return -1;
    unsigned it = odt(v, op->index);
    if (it != ISA_DT_UINT32)
        return vfail(v, "indices", "dtype %s not allowed (uint32)", isa_dtype_numpy_name(it));
    if (ap_parts(op->src[0]) != ap_parts(op->index))
        return vfail(v, "indices", "partition size %lld differs from data's %lld",
                     (long long)ap_parts(op->index), (long long)ap_parts(op->src[0]));
    if (same_pf(v, op->index, -3, op->dst, -1))
        return -1;
    if (odt(v, op->dst) != odt(v, op->src[0]))
        return vfail(v, "dst", "dtype differs from data dtype");
    return 0;
}

static int check_pattern(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    if (op->rare->pat_ndim < 0 || op->rare->pat_ndim > 4)
        return vfail(v, "pattern", "%d dims (at most 4)", op->rare->pat_ndim);
    if (op->rare->pat_ndim > 0 && op->rare->pat_ndim != op->dst->ndim - 1)
        return vfail(v, "pattern", "%d pattern dims for %d free dims of dst", op->rare->pat_ndim,
                     op->dst->ndim - 1);
    if (!isa_enum_name(ISA_FT_CMP, (unsigned)op->cmp))
        return vfail(v, "cmp_op", "invalid comparison %d", op->cmp);
    return 0;
}

/* bn_stats: data [P, <= 512], dst [P, 6]; bn_aggr: data [P, 3k], dst [P, 2];
 * float dst (NKI nl.tile_size.bn_stats_fmax = 512) */
static int check_bn(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    const tir_ap_t *d = op->dst, *s = op->src[0];
    bool st = op->kind == TIR_BN_STATS;
    int64_t want = st ? 6 : 2;
    if (ap_parts(d) != ap_parts(s) || ap_free(d) != want)
        return vfail(v, "dst", "must be [%lld, %lld] (got %lld x %lld)", (long long)ap_parts(s),
                     (long long)want, (long long)ap_parts(d), (long long)ap_free(d));
    if (!is_float(odt(v, d)))
        return vfail(v, "dst", "dtype %s (the statistics are float)",
                     isa_dtype_numpy_name(odt(v, d)));
    if (st && ap_free(s) > 512)
        return vfail(v, "data", "free size %lld > 512 (bn_stats_fmax; split the tile and "
                     "aggregate with bn_aggr)", (long long)ap_free(s));
    if (!st && ap_free(s) % 3)
        return vfail(v, "data", "free size %lld is not a multiple of 3 (count, mean, "
                     "variance*count groups)", (long long)ap_free(s));
    return 0;
}

/* reduce_op max only (NKI), a valid reduce_cmd, [P,1] reduce_res (optional
 * but needed by load_reduce): range_select and select_reduce */
static int check_max_reduce(const vctx_t *v, const tir_ap_t *ref)
{
    const tir_op_t *op = v->op;
    if (op->reduce_op != ISA_ALU_MAX)
        return vfail(v, "reduce_op", "only maximum is supported (NKI %s)", tir_op_name(op->kind));
    if (!isa_enum_name(ISA_FT_REDCMD, (unsigned)op->rare->reduce_cmd))
        return vfail(v, "reduce_cmd", "invalid value %d", op->rare->reduce_cmd);
    if (op->rare->reduce_cmd == ISA_REDCMD_LOAD_REDUCE && op->dst2->tensor < 0)
        return vfail(v, "reduce_res", "load_reduce reads the accumulator from reduce_res, "
                     "which is absent");
    return pp_ap(v, op->dst2, -2, ref);
}

/* range_select: float on_true_tile, fp32 [P,1] bounds, max reduce only
 * (NKI), optional reduce_res [P,1] */
static int check_range_select(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    if (same_pf(v, op->dst, -1, op->src[0], 0))
        return -1;
    if (!is_float(odt(v, op->src[0])))
        return vfail(v, "on_true_tile", "dtype %s (range_select selects float data)",
                     isa_dtype_numpy_name(odt(v, op->src[0])));
    for (int k = 1; k <= 2; k++) {
        if (need(v, op->src[k], k) || pp_ap(v, op->src[k], k, op->src[0]))
            return -1;
        if (odt(v, op->src[k]) != ISA_DT_FP32)
            return vfail(v, enc_operand_name(op->kind, k), "dtype %s (the bounds are float32)",
                         isa_dtype_numpy_name(odt(v, op->src[k])));
    }
    return check_max_reduce(v, op->src[0]);
}

/* select_reduce: integer predicate (8/16-bit), on_true not 32-bit integer,
 * not both in PSUM; on_false a number or fp32 [P,1] */
static int check_select_reduce(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    if (same_pf(v, op->dst, -1, op->src[0], 0) || same_pf(v, op->dst, -1, op->src[1], 1))
        return -1;
    unsigned pd = odt(v, op->src[0]), td = odt(v, op->src[1]);
    if (is_float(pd) || isa_dtype_size(pd) > 2)
        return vfail(v, "predicate", "dtype %s (int8, uint8, int16 or uint16)",
                     isa_dtype_numpy_name(pd));
    if (td == ISA_DT_INT32 || td == ISA_DT_UINT32)
        return vfail(v, "on_true", "dtype %s (32-bit integers are not selectable)",
                     isa_dtype_numpy_name(td));
    if (tens(v, op->src[0])->kind == TIR_T_PSUM && tens(v, op->src[1])->kind == TIR_T_PSUM)
        return vfail(v, "on_true", "on_true and predicate cannot both be in psum");
    if (per_partition_scalar(v, &op->s0, 100, op->src[1]))
        return -1;
    if (op->s0.is_ap && odt(v, op->s0.ap) != ISA_DT_FP32)
        return vfail(v, "on_false", "dtype %s (a tile on_false is float32)",
                     isa_dtype_numpy_name(odt(v, op->s0.ap)));
    if (op->dst2->tensor >= 0 && !is_float(odt(v, op->dst2)))
        return vfail(v, "reduce_res", "dtype %s (a float dtype)",
                     isa_dtype_numpy_name(odt(v, op->dst2)));
    return check_max_reduce(v, op->src[1]);
}

static int check_8(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    const tir_ap_t *d = op->dst, *s = op->src[0];
    if (op->kind == TIR_MAX8 || op->kind == TIR_FIND_INDEX8) {
        if (ap_free(d) != 8 || ap_parts(d) != ap_parts(s))
            return vfail(v, "dst", "must be [%lld, 8] (got %lld x %lld)", (long long)ap_parts(s),
                         (long long)ap_parts(d), (long long)ap_free(d));
        if (ap_free(s) < 8 || ap_free(s) > 16384)
            return vfail(v, "src", "free size %lld (8..16384)", (long long)ap_free(s));
    }
    if (op->kind == TIR_FIND_INDEX8) {
        /* NKI: uint16 or uint32 (not found: all ones, 0xFFFF in uint16) */
        unsigned dt = odt(v, d);
        if (dt != ISA_DT_UINT32 && dt != ISA_DT_UINT16)
            return vfail(v, "dst", "dtype %s (indices are uint16 or uint32)",
                         isa_dtype_numpy_name(dt));
    }
    if (op->kind == TIR_FIND_INDEX8 || op->kind == TIR_MATCH_REPLACE8) {
        if (ap_free(op->src[1]) != 8 || ap_parts(op->src[1]) != ap_parts(s))
            return vfail(v, "vals", "must be [%lld, 8]", (long long)ap_parts(s));
    }
    if (op->kind == TIR_MATCH_REPLACE8) {
        if (same_pf(v, s, 0, d, -1))
            return -1;
        if (op->dst2->tensor >= 0) {
            unsigned dt = odt(v, op->dst2);
            if (ap_free(op->dst2) != 8 || ap_parts(op->dst2) != ap_parts(s))
                return vfail(v, "dst_idx", "must be [%lld, 8]", (long long)ap_parts(s));
            if (dt != ISA_DT_UINT32 && dt != ISA_DT_INT32)
                return vfail(v, "dst_idx", "dtype %s (indices are uint32)",
                             isa_dtype_numpy_name(dt));
        }
    }
    return 0;
}

static int check_misc(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    switch (op->kind) {
    case TIR_MEMSET:
        return need(v, op->dst, -1);
    case TIR_STREAM_SHUFFLE:
        if (odt(v, op->dst) != odt(v, op->src[0]))
            return vfail(v, "dst", "src and dst must have the same dtype");
        /* NKI: the mask applies to each 32-partition quadrant of dst alike
         * (dst partition 32g+i reads src partition 32g+mask[i]); src and dst
         * may cover different partition counts, not different free sizes */
        if (op->src[0]->tensor >= 0 && op->dst->tensor >= 0 && ap_free(op->src[0]) != ap_free(op->dst))
            return vfail(v, "dst", "%lld elements per partition, src has %lld (they must be equal)",
                         (long long)ap_free(op->dst), (long long)ap_free(op->src[0]));
        for (int64_t q = 0; q < ap_parts(op->dst); q++) {
            unsigned m = op->rare->shuffle_mask[q % 32];
            if (m != 255 && (m >= 32 || q / 32 * 32 + m >= ap_parts(op->src[0])))
                return vfail(v, "shuffle_mask", "entry %d is %u: dst partition %lld would read src "
                             "partition %lld of %lld (entries are partitions of a 32-partition "
                             "quadrant, or 255 = keep)", (int)(q % 32), m, (long long)q,
                             (long long)(q / 32 * 32 + m), (long long)ap_parts(op->src[0]));
        }
        return 0;
    case TIR_LOAD_TENSOR_TO_REGISTER:
        if (ap_elems(op->src[0]) != 1)
            return vfail(v, "src", "must be one element (got %lld)", (long long)ap_elems(op->src[0]));
        if (op->rare->reg < 0 || op->rare->reg >= ISA_NUM_REGS)
            return vfail(v, "reg", "%d out of range 0..%d", op->rare->reg, ISA_NUM_REGS - 1);
        if (isa_dtype_size(odt(v, op->src[0])) != 4)
            return vfail(v, "src", "registers are 32-bit (dtype %s)",
                         isa_dtype_numpy_name(odt(v, op->src[0])));
        return 0;
    case TIR_BROADCAST_PARTITION:
        if (ap_parts(op->src[0]) != 1)
            return vfail(v, "src", "must be one partition (got %lld)",
                         (long long)ap_parts(op->src[0]));
        if (ap_free(op->src[0]) != ap_free(op->dst))
            return vfail(v, "dst", "free size %lld differs from src's %lld",
                         (long long)ap_free(op->dst), (long long)ap_free(op->src[0]));
        return 0;
    case TIR_TENSOR_PARTITION_REDUCE:
        if (check_reduce_alu(v, op->reduce_op, "operator"))
            return -1;
        if (ap_parts(op->dst) != 1 || ap_free(op->dst) != ap_free(op->src[0]))
            return vfail(v, "dst", "must be [1, %lld] (got %lld x %lld)",
                         (long long)ap_free(op->src[0]), (long long)ap_parts(op->dst),
                         (long long)ap_free(op->dst));
        return 0;
    case TIR_SELECT:
        for (int i = 0; i < op->nsrc; i++)
            if (same_pf(v, op->dst, -1, op->src[i], i))
                return -1;
        return 0;
    case TIR_DROPOUT:
        if (!op->s0.is_ap && !(op->s0.imm >= 0.0 && op->s0.imm <= 1.0))
            return vfail(v, op->flags & TIR_F_KEEP_RATE ? "keep_rate" : "prob", "%g outside [0, 1]",
                         op->s0.imm);
        return same_pf(v, op->dst, -1, op->src[0], 0) ||
               per_partition_scalar(v, &op->s0, 100, op->src[0]);
    case TIR_QUANTIZE_MX: {
        unsigned sd = odt(v, op->src[0]), dd = odt(v, op->dst);
        if (need(v, op->dst2, -2))
            return -1;
        if (!isa_mx_scale_dtype(odt(v, op->dst2)))
            return vfail(v, "scale", "dtype %s: scales are float8_e8m0fnu or uint8 (E8M0)",
                         isa_dtype_numpy_name(odt(v, op->dst2)));
        if (is_quad(dd)) {   /* NKI v4: [P, 4F] bf16/fp16 -> [P, F] fp8 quads */
            if (dd == ISA_DT_FP4E2M1X4)
                return vfail(v, "dst", "quantize_mx writes float8_e5m2_x4 or float8_e4m3fn_x4, "
                             "not float4_e2m1fn_x4");
            if (sd != ISA_DT_BF16 && sd != ISA_DT_FP16)
                return vfail(v, "src", "dtype %s (quantize_mx to %s reads bfloat16 or float16)",
                             isa_dtype_numpy_name(sd), isa_dtype_numpy_name(dd));
            if (ap_parts(op->dst) != ap_parts(op->src[0]) ||
                4 * ap_free(op->dst) != ap_free(op->src[0]))
                return vfail(v, "dst", "%lld x %lld quads hold %lld x %lld values; src has %lld x "
                             "%lld (dst's free size is a quarter of src's)",
                             (long long)ap_parts(op->dst), (long long)ap_free(op->dst),
                             (long long)ap_parts(op->dst), 4 * (long long)ap_free(op->dst),
                             (long long)ap_parts(op->src[0]), (long long)ap_free(op->src[0]));
            return 0;
        }
        if (sd != ISA_DT_BF16 && sd != ISA_DT_FP16 && sd != ISA_DT_FP32)
            return vfail(v, "src", "dtype %s (bfloat16, float16 or float32)", isa_dtype_numpy_name(sd));
        if (!is_mx_fp8(dd))
            return vfail(v, "dst", "dtype %s (float8_e4m3fn, float8_e5m2 or their _x4 quads)",
                         isa_dtype_numpy_name(dd));
        if (same_pf(v, op->dst, -1, op->src[0], 0))
            return -1;
        /* the flat form: one scale per 32 consecutive elements of a partition */
        int64_t f = ap_free(op->src[0]);
        if (f % 32)
            return vfail(v, "src", "%lld elements per partition: quantize_mx to %s scales blocks "
                         "of 32 elements of a partition, so it needs a multiple of 32",
                         (long long)f, isa_dtype_numpy_name(dd));
        if (ap_parts(op->dst2) != ap_parts(op->src[0]) || ap_free(op->dst2) != f / 32)
            return vfail(v, "scale", "must be [%lld, %lld] (one scale per 32 elements of src), "
                         "not %lld x %lld", (long long)ap_parts(op->src[0]), (long long)(f / 32),
                         (long long)ap_parts(op->dst2), (long long)ap_free(op->dst2));
        return 0;
    }
    case TIR_CORE_BARRIER: {
        unsigned all = v->k->num_programs >= 32 ? 0xffffffffu : (1u << v->k->num_programs) - 1;
        if (op->rare->barrier_cores == 0 || (op->rare->barrier_cores & ~all))
            return vfail(v, "cores", "mask 0x%x names cores outside 0..%d", op->rare->barrier_cores,
                         v->k->num_programs - 1);
        return 0;
    }
    default:
        return 0;
    }
}

static int check_compute(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    switch (op->kind) {
    case TIR_MATMUL: case TIR_MATMUL_MX: case TIR_MATMUL_SPARSE:
        return enc_check_matmul(v);
    case TIR_TRANSPOSE:
        return enc_check_transpose(v);
    case TIR_ACTIVATION: case TIR_ACTIVATE2:
        return check_activation(v);
    case TIR_TENSOR_TENSOR: {
        if (check_alu(v, op->op0, "operator", false) || same_pf(v, op->dst, -1, op->src[0], 0) ||
            same_pf(v, op->dst, -1, op->src[1], 1))
            return -1;
        if (tens(v, op->src[0])->kind == TIR_T_PSUM && tens(v, op->src[1])->kind == TIR_T_PSUM)
            return vfail(v, "in1", "in0 and in1 cannot both be in PSUM");
        return 0;
    }
    case TIR_TENSOR_SCALAR:
        if (check_alu(v, op->op0, "op0", false) || check_alu(v, op->op1, "op1", true))
            return -1;
        return same_pf(v, op->dst, -1, op->src[0], 0) ||
               per_partition_scalar(v, &op->s0, 100, op->src[0]) ||
               per_partition_scalar(v, &op->s1, 101, op->src[0]) ||
               (op->engine == ISA_ENG_ACT && check_ts_act(v));
    case TIR_SCALAR_TENSOR_TENSOR:
        if (check_alu(v, op->op0, "op0", false) || check_alu(v, op->op1, "op1", false))
            return -1;
        return same_pf(v, op->dst, -1, op->src[0], 0) ||
               same_pf(v, op->dst, -1, op->src[1], 1) ||
               per_partition_scalar(v, &op->s0, 100, op->src[0]);
    case TIR_TENSOR_REDUCE: {
        if (check_reduce_alu(v, op->reduce_op, "operator"))
            return -1;
        const tir_ap_t *s = op->src[0];
        int nfree = s->ndim - 1;
        if (op->rare->axes == 0 || nfree < 1 || (op->rare->axes >> nfree))
            return vfail(v, "axis", "must name free axes of src (1..%d)", nfree);
        int64_t keep = 1;
        for (int d = 1; d < s->ndim; d++)
            if (!(op->rare->axes & (1u << (s->ndim - 1 - d))))
                keep *= s->count[d];
        if (ap_parts(op->dst) != ap_parts(s) || ap_free(op->dst) != keep)
            return vfail(v, "dst", "shape has %lld x %lld elements, expected %lld x %lld after "
                         "the reduction", (long long)ap_parts(op->dst), (long long)ap_free(op->dst),
                         (long long)ap_parts(s), (long long)keep);
        return 0;
    }
    case TIR_TENSOR_COPY:
        return same_pf(v, op->dst, -1, op->src[0], 0);
    case TIR_TENSOR_TENSOR_SCAN:
        if (check_alu(v, op->op0, "op0", false) || check_alu(v, op->op1, "op1", false))
            return -1;
        return same_pf(v, op->dst, -1, op->src[0], 0) ||
               same_pf(v, op->dst, -1, op->src[1], 1) ||
               per_partition_scalar(v, &op->s0, 100, op->src[0]);
    case TIR_IOTA:
        return check_pattern(v);
    case TIR_AFFINE_SELECT:
        return check_pattern(v) || same_pf(v, op->dst, -1, op->src[0], 0);
    case TIR_MAX8: case TIR_FIND_INDEX8: case TIR_MATCH_REPLACE8:
        return check_8(v);
    case TIR_BN_STATS: case TIR_BN_AGGR:
        return check_bn(v);
    case TIR_RANGE_SELECT:
        return check_range_select(v);
    case TIR_SELECT_REDUCE:
        return check_select_reduce(v);
    case TIR_LOCAL_GATHER:
        return check_local_gather(v);
    case TIR_GATHER_FLATTENED:
        return check_gather_flattened(v);
    case TIR_INLINE_ASM: case TIR_INLINE_ASM_BYTES:
        return 0;   /* the instruction's own checks run at lowering and emission */
    case TIR_TENSOR_SCALAR_CUMULATIVE: case TIR_TENSOR_SCALAR_REDUCE: case TIR_SEQUENCE_BOUNDS:
    case TIR_NONZERO_WITH_COUNT: case TIR_TOPK: case TIR_EXPONENTIAL:
        return enc_validate_seq(v->k, op, v->err);
    default:
        return check_misc(v);
    }
}

static int check_engine(const vctx_t *v)
{
    const tir_op_t *op = v->op;
    unsigned legal = legal_engines(op->kind);
    if (op->kind == TIR_MEMSET && !engine_in(op->engine, legal))
        return vfail(v, "engine", "Memset engine can only be Vector or GpSIMD or Unknown.");
    if (op->engine < 0 || op->engine >= ISA_ENG_COUNT || !engine_in(op->engine, legal)) {
        char buf[128];
        return vfail(v, "engine", "%s cannot run on engine %s (allowed: %s)",
                     tir_op_name(op->kind),
                     op->engine >= 0 && op->engine < ISA_ENG_COUNT
                         ? isa_engine_name((isa_engine_t)op->engine) : "?",
                     engine_list(legal, buf, sizeof buf));
    }
    return 0;
}

/* Tensor inputs each op kind needs (src[0 .. n-1]). */
static int min_srcs(tir_opkind_t k)
{
    switch (k) {
    case TIR_MEMSET: case TIR_IOTA: case TIR_CORE_BARRIER: case TIR_NOOP: case TIR_RNG:
    case TIR_RAND2: case TIR_RAND_GET_STATE: return 0;
    case TIR_INLINE_ASM: case TIR_INLINE_ASM_BYTES: return 0;
    case TIR_MATMUL: case TIR_TENSOR_TENSOR: case TIR_SCALAR_TENSOR_TENSOR:
    case TIR_TENSOR_TENSOR_SCAN: case TIR_FIND_INDEX8: case TIR_MATCH_REPLACE8: case TIR_SELECT:
        return 2;
    case TIR_MATMUL_SPARSE: return 3;
    case TIR_MATMUL_MX: return 4;
    default: return 1;
    }
}

int enc_validate_op(const tir_kernel_t *k, const tpb_target_t *target, const tir_op_t *op,
                    tpb_err_t *err)
{
    return enc_validate_op_memo(k, target, op, NULL, err);
}

/* The op kinds' checks in full (after enc_dma_quick_pass, or for the tests). */
static int validate_full(vctx_t v)
{
    const tir_kernel_t *k = v.k;
    const tir_op_t *op = v.op;
    tpb_err_t *err = v.err;
    if ((unsigned)op->kind >= TIR_OP_COUNT)
        return tpb_errf(err, "%s: unknown op kind %d", op->path, (int)op->kind);
    if (enc_is_collective(op->kind))
        return enc_validate_collective(k, op, err);
    if (check_engine(&v))
        return -1;
    if (enc_is_rng(op->kind))   /* validate_rng.c */
        return check_operands(&v) ? -1 : enc_validate_rng(v.k, v.tg, op, err);
    if (enc_is_register_op(op->kind))   /* validate_reg.c */
        return check_operands(&v) ? -1 : enc_validate_register(v.k, op, err);
    bool needs_dst = op->kind != TIR_LOAD_TENSOR_TO_REGISTER && op->kind != TIR_CORE_BARRIER &&
                     op->kind != TIR_NOOP && op->kind != TIR_INLINE_ASM &&
                     op->kind != TIR_INLINE_ASM_BYTES;
    if (needs_dst && need(&v, op->dst, -1))
        return -1;
    if (op->nsrc < min_srcs(op->kind))
        return vfail(&v, enc_operand_name(op->kind, op->nsrc < 0 ? 0 : op->nsrc),
                     "operand missing (%s takes %d tensor inputs, got %d)", tir_op_name(op->kind),
                     min_srcs(op->kind), op->nsrc);
    if (check_operands(&v))
        return -1;
    if (is_dma(op->kind))
        return enc_validate_dma(&v);
    return check_compute(&v) ? -1 : 0;
}

int enc_validate_op_full(const tir_kernel_t *k, const tpb_target_t *target, const tir_op_t *op,
                         enc_check_memo_t *m, tpb_err_t *err)
{
    vctx_t v = {k, target ? target : tpb_target_default(), op, err, m};
    return validate_full(v);
}

bool enc_validate_quick(const tir_kernel_t *k, const tpb_target_t *target, const tir_op_t *op,
                        enc_check_memo_t *m)
{
    tpb_err_t unused;   /* written only by a check that fails (then false) */
    vctx_t v = {k, target ? target : tpb_target_default(), op, &unused, m};
    if (!enc_dma_quick_pass(&v))
        return false;
    if (m)
        m->quick++;
    return true;
}

int enc_validate_op_memo(const tir_kernel_t *k, const tpb_target_t *target, const tir_op_t *op,
                         enc_check_memo_t *m, tpb_err_t *err)
{
    /* most ops of a kernel are plain loads and stores (docs/performance-log.md) */
    if (enc_validate_quick(k, target, op, m))
        return 0;
    vctx_t v = {k, target ? target : tpb_target_default(), op, err, m};
    return validate_full(v);
}
