/* tir.h - tile IR: the contract between the front-end (JSON kernel file or
 * C builder API) and the backend (lowering, scheduling, emission).
 *
 * The front-end validates the kernel and unrolls every loop, so a tir_kernel_t
 * is a flat, program-ordered list of ops whose operands are concrete access
 * patterns over declared tensors.  Each `tile` declaration executed inside a
 * loop creates a fresh tile per iteration; the allocator gives tiles
 * addresses from their liveness (first to last use). */
#ifndef TPB_TIR_H
#define TPB_TIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arena.h"
#include "isa.h"

#define TIR_MAX_DIMS 6          /* HBM tensors: up to 6 dims; tiles: partition + 4 free */
#define TIR_NAME_LEN 64
#define TIR_PATH_LEN 96
#define TIR_PRINT_PREFIX_LEN 48  /* a tensor's print_prefix: strlen < this */
#define TIR_CONST_PATH_MAX 1024 /* a constant's .npy path: strlen < this */

typedef enum {
    TIR_T_INPUT,      /* HBM, provided by the user (.npy) */
    TIR_T_OUTPUT,     /* HBM, written by the kernel, returned */
    TIR_T_CONSTANT,   /* HBM, data known at compile time (shared_constant, identity) */
    TIR_T_SCRATCH,    /* HBM, internal (e.g. cross-core partials) */
    TIR_T_SBUF,       /* on-chip tile in SBUF: dim 0 is the partition dim */
    TIR_T_PSUM,       /* on-chip tile in PSUM: dim 0 is the partition dim */
} tir_tensor_kind_t;

typedef struct {
    /* The three strings are owned by the kernel that holds the tensor:
     * tir_add_tensor copies name (exact length, cut to TIR_NAME_LEN - 1
     * bytes), path (interned, cut to TIR_PATH_LEN - 1: every iteration of a
     * loop shares one) and print_prefix (interned, cut to
     * TIR_PRINT_PREFIX_LEN - 1) into it, "" for NULL.  Pointers, not
     * arrays: kernels declare 10^5 tiles, one per loop iteration. */
    const char *name;
    const char *path;             /* where it was declared: "inputs[0]", "body[2].body[0]" */
    const char *print_prefix;     /* device_print's debug buffer (an output): the
                                     prefix the simulator prints it with; "" = none */
    int64_t shape[TIR_MAX_DIMS];
    /* constants: either a file (.npy, path relative to the kernel file's
     * directory, resolved by the front-end; shorter than TIR_CONST_PATH_MAX)
     * or inline data.  Both owned by the kernel that declared the tensor
     * (freed by tir_kernel_free; copies of the tensor made by later passes
     * borrow them). */
    char *const_path;             /* owned; NULL = none */
    void *const_data;             /* owned; dtype-sized elements, C order; NULL if file */
    tir_tensor_kind_t kind;
    unsigned dtype;               /* isa_dtype_t */
    int ndim;
    int shared_with;              /* multi-core: -1, else id of the owning core's tensor */
    /* SBUF/PSUM: the byte offset per partition the kernel fixed (a tile's
     * "addr", docs/kernel-format.md "Fixed placement") plus 1; 0 = the
     * allocator's choice.  Fixed tiles may overlap each other. */
    uint64_t fixed1;
} tir_tensor_t;

/* A concrete access pattern over one tensor, in elements: element i of the
 * pattern (row-major over count[]) is at offset + sum(idx[d] * step[d]) in
 * the tensor viewed as a C-ordered array.  dims are listed outermost first.
 * For SBUF/PSUM tiles, dim 0 is the partition dim: step[0] equals the
 * tile's row size (product of its free shape), so the start partition is
 * offset / row and the free offset is offset % row. */
typedef struct {
    int tensor;                   /* index into tir_kernel_t.tensors, -1 = none */
    int16_t ndim;                 /* next to tensor: no padding (112 bytes, not 120;
                                     ten of these sit in every tir_op_t) */
    /* A dtype view (NKI tensor.view(dtype), .ap(dtype=)): 0 = none, else
     * isa_dtype_t + 1.  The tensor's bytes read as that dtype: offset, steps
     * and counts count elements of it, over the tensor seen as a C-ordered
     * array of them (a tile: shape[0] partitions of row-bytes / size
     * elements; tir_ap_tensor).  Only direct load / store / dma_copy
     * operands carry one (the front-end refuses it elsewhere). */
    uint8_t view;
    uint8_t pad_;
    int64_t offset;               /* element offset of the first element */
    int64_t step[TIR_MAX_DIMS];   /* in elements */
    int64_t count[TIR_MAX_DIMS];
} tir_ap_t;

/* The AP every absent operand points at: tensor -1, everything else zero
 * (tir_op_init sets every operand to it, so `op->bias->tensor >= 0` needs
 * no NULL check). */
extern const tir_ap_t tir_ap_none;

/* A scalar operand: an immediate or a per-partition [P,1] tile reference
 * (ap: interned, &tir_ap_none when absent). */
typedef struct {
    bool is_ap;
    double imm;
    const tir_ap_t *ap;
} tir_scalar_t;

#define TIR_OPS(X) \
    X(LOAD) X(STORE) X(DMA_COPY) X(DMA_TRANSPOSE) X(INDIRECT_LOAD) X(INDIRECT_SAVE) \
    X(LOCAL_GATHER) X(GATHER_FLATTENED) X(MEMSET) X(STREAM_SHUFFLE) \
    X(LOAD_TENSOR_TO_REGISTER) X(BROADCAST_PARTITION) \
    X(MATMUL) X(MATMUL_MX) X(MATMUL_SPARSE) X(TRANSPOSE) X(ACTIVATION) X(ACTIVATE2) \
    X(TENSOR_TENSOR) X(TENSOR_SCALAR) X(SCALAR_TENSOR_TENSOR) X(TENSOR_REDUCE) \
    X(TENSOR_PARTITION_REDUCE) X(TENSOR_COPY) X(TENSOR_TENSOR_SCAN) X(IOTA) \
    X(AFFINE_SELECT) X(MAX8) X(FIND_INDEX8) X(MATCH_REPLACE8) X(SELECT) X(DROPOUT) \
    X(QUANTIZE_MX) X(CORE_BARRIER) X(SENDRECV) X(BN_STATS) X(BN_AGGR) \
    X(ALL_REDUCE) X(ALL_GATHER) X(REDUCE_SCATTER) X(ALL_TO_ALL) X(COLLECTIVE_PERMUTE) X(RANK_ID) \
    X(NOOP) X(RANGE_SELECT) X(SELECT_REDUCE) \
    X(RNG) X(RAND2) X(RAND_GET_STATE) X(RAND_SET_STATE) X(SET_RNG_SEED) \
    X(REGISTER_MOVE) X(REGISTER_STORE) X(COLL_SYNC) \
    X(INLINE_ASM) X(INLINE_ASM_BYTES) \
    X(TENSOR_SCALAR_CUMULATIVE) X(TENSOR_SCALAR_REDUCE) X(SEQUENCE_BOUNDS) \
    X(NONZERO_WITH_COUNT) X(TOPK) X(EXPONENTIAL)

typedef enum {
#define X(n) TIR_##n,
    TIR_OPS(X)
#undef X
    TIR_OP_COUNT
} tir_opkind_t;

const char *tir_op_name(tir_opkind_t k);   /* "matmul", "tensor_tensor", ... */

/* flags */
#define TIR_F_ACCUMULATE   (1u << 0)  /* matmul: add into PSUM; activation: ActivationAcc */
#define TIR_F_TRANSPOSE    (1u << 1)  /* matmul is_transpose */
#define TIR_F_REV0         (1u << 2)
#define TIR_F_REV1         (1u << 3)
#define TIR_F_NEGATE       (1u << 4)  /* tensor_reduce */
#define TIR_F_KEEPDIMS     (1u << 5)
#define TIR_F_RANDOM       (1u << 6)  /* memset random */
#define TIR_F_ONEZERO_W    (1u << 7)  /* is_stationary_onezero */
#define TIR_F_ONEZERO_M    (1u << 8)  /* is_moving_onezero */
#define TIR_F_OOB_SKIP     (1u << 9)
#define TIR_F_RMW_ADD      (1u << 10) /* indirect_save / store with rmw_op=add */
#define TIR_F_DOUBLE_ROW   (1u << 11)
/* matmul family, builder input only: NKI accumulate=None.  enc_emit()
 * replaces it by TIR_F_ACCUMULATE or nothing (encoder/builder_acc.c), so the
 * tile IR never carries it. */
#define TIR_F_ACC_AUTO     (1u << 12)
/* scatter-add unique_indices: the kernel promises no index repeats within
 * the transfer (seed 002); the DmaTrigger carries it and the simulator
 * checks it */
#define TIR_F_UNIQUE_IDX   (1u << 20)
/* matmul_mx with an output scale: s0 = `scale` (immediate) or `scale_ptr`
 * ([M,1] fp32, one factor per dst partition) */
#define TIR_F_MX_SCALE     (1u << 21)
/* SELECT (NKI tensor_copy_predicated with a number src): on_true is the
 * immediate `value`; src[1] is a placeholder (= dst) and is not read. */
#define TIR_F_SRC_IMM      (1u << 22)
/* TENSOR_SCALAR / TENSOR_COPY with NKI mask=: only the elements where the
 * affine predicate pat_offset + pat_cm*p + sum pat_step[d]*i_d `cmp` 0
 * holds (p, i_d: indices in dst) are computed; the others keep dst. */
#define TIR_F_MASK         (1u << 23)
/* DROPOUT: s0 is the keep rate (seed 001 set_keep_rate, kernel `keep_rate`),
 * not the drop probability; the Dropout instruction's is_keep_rate bit */
#define TIR_F_KEEP_RATE    (1u << 24)
/* TENSOR_REDUCE: one TensorReduce per reduced axis (seed 001
 * NeuronReduceMacro), kernel `per_axis` */
#define TIR_F_PER_AXIS     (1u << 25)
/* load / store made by SBUF spilling (encoder/spill.c): SAVE stores a tile
 * to its HBM spill slot, RELOAD loads it back; both run on the spill DMA
 * queues (qSyncSpillReload0/1) and are counted as spill traffic */
#define TIR_F_SPILL_SAVE   (1u << 26)
#define TIR_F_SPILL_RELOAD (1u << 27)

/* Inline assembly (seed 001 codegenInlineASMInst /
 * codegenInlineASMBytesInst), reached from op->rare->inl:
 * INLINE_ASM: asm_op (isa_op_t) built field by field; inputs src[0..nsrc)
 * and outputs dst, dst2 bound to the format operands whose ".addr" field
 * index is asm_opnd[0..3] (inputs), asm_opnd[4], asm_opnd[5] (outputs), -1
 * unused; asm_attr_*: other fields set by value.
 * INLINE_ASM_BYTES: asm_bytes is the bundle, sync header zero; sync_type 0 =
 * none (ordered only on its engine), 1 = barrier (after every earlier
 * access, before every later one); latency_estimate in cycles (recorded for
 * the scheduler's view, docs/compiler.md).
 * Allocated by tir_new_asm() and owned by the kernel that declared the op
 * (freed by tir_kernel_free); copies of the op made by later passes borrow
 * it, like a tensor's const_data. */
/* A further affine predicate of an NKI mask conjunction (op->rare->mask_more):
 * offset + cm*p + sum(step[d]*i_d) cmp 0 over dst's free dims, as the
 * op's own pat_* / cmp.  Owned by the kernel (tir_new_preds). */
typedef struct tir_pred {
    int64_t offset, cm;
    int64_t step[4];
    int ndim;
    int cmp;                      /* ISA_CMP_* */
    struct tir_pred *next_block;  /* the owning kernel's list (first of a block only) */
} tir_pred_t;

#define TIR_MAX_MASK_PREDS 4      /* predicates of one mask (ANDed; ISA_MAX_PREDEXT) */

typedef struct tir_asm {
    int asm_op;
    int16_t asm_opnd[6];
    int n_asm_attrs;
    int16_t asm_attr_field[12];
    uint32_t asm_attr_val[12];
    uint8_t asm_bytes[64];
    int sync_type;
    int latency_estimate;
    struct tir_asm *next;         /* the owning kernel's list */
} tir_asm_t;

/* The fields of an op that few op kinds use (tir_op_t.rare), kept out of
 * the op: records of the kernel's pool like the operands (tir_rare_intern;
 * to change one: copy, modify, intern -- TIR_RARE_SET, tir_op_set_deps,
 * the builder's enc_rare_put / ENC_RARE_SET).  tir_rare_default holds the
 * defaults every op starts with (shuffle_mask all 255, rgroup and
 * perm_from all -1; cmp1 ISA_CMP_GE; remote_core, sync_core, sync_sem,
 * src_reg, dst_reg, reg_src and s0_reg -1; the rest 0).  An op of a plain
 * body (load, store, tensor_scalar, activation without a reduce, ...)
 * sets none of them and points at the shared default: no record per op. */
typedef struct {
    uint8_t shuffle_mask[32];     /* stream_shuffle, 255 = keep */
    int transpose_axes[4];        /* dma_transpose */
    int n_transpose_axes;
    int coll_dim;                 /* all_gather / reduce_scatter / all_to_all */
    int8_t rgroup[8];             /* collectives: replica group of each rank, -1 none */
    int8_t perm_from[8];          /* collective_permute: source rank of each target, -1 */
    /* PE (matmul family) */
    int tile_pos[2], tile_size[2];/* row, col; 0 = default (whole array) */
    unsigned compress_ratio;      /* matmul_sparse */
    int quant_offset;             /* matmul ifmap_quant_offset: subtracted from every
                                     moving value before the multiply */
    int num_elem_per_idx, num_valid;   /* local_gather; num_valid also nonzero_with_count's n */
    /* the affine pattern (iota, affine_select, a mask predicate) and
     * offset (range_select range_start, nonzero_with_count index_offset) */
    int pat_ndim;                 /* pat_step entries used */
    /* multi-core: core_barrier (barrier_cores bitmask, barrier_id -1
     * until the split numbers it), sendrecv peer core (-1 none); three
     * ints here keep the record free of padding bytes (records are
     * compared byte for byte) */
    int barrier_id;
    unsigned barrier_cores;
    int peer;
    int64_t pat_offset, pat_cm;
    int64_t pat_step[4];          /* per free dim, outermost first */
    int64_t index_bound;          /* indirect DMA: valid index values (tir_op_t notes) */
    int64_t reg_imm;              /* REGISTER_MOVE: the immediate (int32) */
    double prob;                  /* dropout: mirrors s0.imm */
    /* Moved here from tir_op_t (thirty-third session: the op 304 -> 152
     * bytes); the meanings are tir_op_t's notes below. */
    double fill;                  /* affine_select on_false / select scalar */
    double value;                 /* memset, select / match_replace8 immediates,
                                     nonzero_with_count padding */
    /* inline assembly (INLINE_ASM, INLINE_ASM_BYTES; tir_asm_t above),
     * NULL for every other op */
    struct tir_asm *inl;
    /* TIR_F_MASK with several predicates (NKI (i_p < n) & (i_f < m)): the
     * 2nd.. predicates, ANDed with pat_* / cmp; kernel-owned, NULL none */
    const tir_pred_t *mask_more;
    int deps[4];                  /* explicit dependencies: indices of earlier ops
                                     this one waits for ("deps" in a kernel) */
    int ndeps;
    int reduce_cmd;               /* ISA_REDCMD_* */
    unsigned axes;                /* tensor_reduce: bit i = free dim i counted from the
                                     innermost (bit 0 = last axis) */
    int cmp1;                     /* range_select comp_op1 (tir_op_t.cmp = comp_op0) */
    int dge_mode, oob_mode, qos;  /* DMA: ISA_DGE_*, ISA_OOB_*, 0..255 */
    int reg;                      /* load_tensor_to_register / register_*: register */
    int remote_core;              /* DMA_COPY: src[0] lives on that core's SBUF, -1 local */
    int src_reg, dst_reg;         /* load/store: register whose value (an element
                                     offset) moves that HBM side's address at
                                     issue -- register-offset (dynamic) DMA;
                                     -1 = none */
    int reg_src;                  /* REGISTER_MOVE: source register, -1 = reg_imm */
    int sync_core;                /* collective semaphores (tir_op_t notes): -1 none / a wait */
    int sync_sem;                 /* slot, -1 none */
    uint32_t sync_val;            /* COLL_SYNC wait threshold */
    int s0_reg;                   /* tensor_scalar operand0_reg (TensorScalarGEP): the
                                     register whose value (an element offset) moves
                                     the operand0 pointer at execution; -1 none */
    int local_reduce;             /* DMA_COPY made by the split: the LocalReduce step
                                     (seed 001 s.5.1) of this collective (TIR_ALL_REDUCE /
                                     TIR_REDUCE_SCATTER) with ALU op op0; 0 = none */
    int nmask_more;               /* mask_more entries, < TIR_MAX_MASK_PREDS */
    float dma_scale;              /* DMA_COPY from dma_compute (dma_scaled): src * dma_scale
                                     in fp32, before the optional TIR_F_RMW_ADD accumulate */
    bool dma_scaled;              /* DMA_COPY from dma_compute: src * dma_scale in fp32 */
    uint8_t pad_[3];              /* zero: records are compared byte for byte */
} tir_op_rare_t;
extern const tir_op_rare_t tir_rare_default;
/* Whether r differs from the defaults in the fields before `fill` (the
 * record as it was before the thirty-third session moved the op's DMA,
 * register, dependency and immediate fields into it): the per-kind fields
 * (shuffle mask, transpose axes, replica groups, PE tile, pattern, ...),
 * which a pass that asked "any rare field set?" meant. */
static inline bool tir_rare_kind_fields(const tir_op_rare_t *r)
{
    return r != &tir_rare_default &&
           memcmp(r, &tir_rare_default, offsetof(tir_op_rare_t, fill)) != 0;
}

/* ---- Per-op field meanings (the front-end fills exactly these; every
 * field not listed keeps its tir_op_init() default) ----
 *
 * A field named here that tir_op_t does not hold (fill, value, deps,
 * reduce_cmd, axes, cmp1, dge_mode, ...) is op->rare's.
 *
 * Shapes: an AP's shape is its count[] list.  Tile APs (SBUF/PSUM) always
 * keep dim 0 as the partition dim (an integer index on it keeps count 1);
 * "[P,F]" below means partitions x product of the free counts.  Compute ops
 * require equal partition counts and equal free element counts between dst
 * and each tensor input; DMA ops require equal shapes after dropping
 * count-1 dims.  A raw AP may use step 0 (broadcast).
 *
 * DMA (engine = the issuing sequencer, usually UNASSIGNED; dge_mode,
 * oob_mode (+TIR_F_OOB_SKIP), qos as given):
 *  LOAD          dst = SBUF tile, src[0] = HBM.                      nsrc=1
 *  STORE         dst = HBM (output/scratch/input, never constant),
 *                src[0] = SBUF tile; TIR_F_RMW_ADD: dst += src.     nsrc=1
 *  DMA_COPY      dst, src[0] in any spaces (direct only: an indirect
 *                side turns the op into INDIRECT_LOAD/INDIRECT_SAVE);
 *                TIR_F_RMW_ADD accumulates into dst.                 nsrc=1
 *  DMA_TRANSPOSE dst, src[0]; transpose_axes[0..n_transpose_axes) is the
 *                permutation (dst.shape[i] = src.shape[axes[i]]): (1,0),
 *                (2,1,0) or (3,1,2,0).  index.tensor >= 0: gather-transpose
 *                (DMAIndirectTranspose), src dim 0 indirect as in
 *                INDIRECT_LOAD, 3-D only.                            nsrc=1
 *  INDIRECT_LOAD dst = SBUF tile; src[0] = AP over the HBM table whose dim 0
 *                is the indirect dim: element (i, j..) is read from
 *                src.offset + idx[i]*src.step[0] + sum j_d*src.step[d], where
 *                idx = the values of `index` (an SBUF [P,1] int32/uint32 tile
 *                AP, P = src.count[0]); index_bound = number of valid index
 *                values (rows of the indirect dim reachable from offset);
 *                an index >= index_bound is out of bounds (oob_mode).  nsrc=1
 *  INDIRECT_SAVE dst = table AP (dim 0 indirect, as above), src[0] = SBUF
 *                tile, index, index_bound; TIR_F_RMW_ADD = scatter-add
 *                (NeuronIndirectRMW), else overwrite (NeuronIndirectSave).
 *  LOCAL_GATHER  dst, src[0] = src_buffer (SBUF), index = uint16 SBUF tile,
 *                num_elem_per_idx, num_valid (indices per GpSimd core,
 *                0 = all).                                           nsrc=1
 *  GATHER_FLATTENED dst, src[0] = data, index = uint32 indices tile.
 *  MEMSET        dst, value (TIR_F_RANDOM: random fill, value unused).  nsrc=0
 *  STREAM_SHUFFLE dst, src[0], shuffle_mask[32] (255 = keep dst row).
 *  LOAD_TENSOR_TO_REGISTER src[0] = one element, reg.                 nsrc=1
 *  BROADCAST_PARTITION dst [P,F], src[0] [1,F] (copied to every partition).
 *
 * Compute:
 *  MATMUL        dst = PSUM [M,N], src[0] = stationary [K,M] (SBUF),
 *                src[1] = moving [K,N] (SBUF); dst (+)= src0.T @ src1.
 *                flags ACCUMULATE, TRANSPOSE, ONEZERO_W/M, DOUBLE_ROW;
 *                tile_pos/tile_size (0 = default).                  nsrc=2
 *  MATMUL_MX     as MATMUL + src[2] = stationary_scale, src[3] =
 *                moving_scale (uint8 E8M0).                          nsrc=4
 *  MATMUL_SPARSE as MATMUL + src[2] = tags (uint8), compress_ratio.  nsrc=3
 *  TRANSPOSE     dst = src[0].T; engine PE (dst PSUM) or DVE (<=32x32). nsrc=1
 *  ACTIVATION    dst = func(src[0] * s0 + bias); s0 = scale (imm or [P,1]
 *                AP), bias = [P,1] AP or tensor -1; reduce_op != BYPASS:
 *                dst2 = reduce_res [P,1] (free-axis reduce of dst),
 *                reduce_cmd; TIR_F_ACCUMULATE = ActivationAccumulationOp.
 *  ACTIVATE2     dst = func(((src[0] op0 s0) op1 s1) + bias); optional
 *                reduce_op/dst2 as ACTIVATION.                      nsrc=1
 *  TENSOR_TENSOR dst = src[0] op0 src[1].                            nsrc=2
 *  TENSOR_SCALAR dst = (src[0] op0 s0) op1 s1; REV0/REV1 swap the operands
 *                of op0/op1; op1 == BYPASS means one op.             nsrc=1
 *  SCALAR_TENSOR_TENSOR dst = (src[0] op0 s0) op1 src[1].            nsrc=2
 *  TENSOR_REDUCE dst = reduce_op over `axes` of src[0] (see axes below);
 *                NEGATE negates the result; KEEPDIMS keeps count-1 dims
 *                in dst.                                             nsrc=1
 *  TENSOR_PARTITION_REDUCE dst [1,F] = reduce_op over the partitions of
 *                src[0] [P,F].                                       nsrc=1
 *  TENSOR_COPY   dst = src[0] converted to dst's dtype.              nsrc=1
 *  TENSOR_TENSOR_SCAN per partition, r = s0 (initial); for each free
 *                element i: r = (src[0][i] op0 r) op1 src[1][i]; dst[i] = r.
 *  IOTA          dst[p, i..] = pat_offset + pat_cm*p + sum pat_step[d]*i_d
 *                over the dst free dims (pat_ndim = their number).  nsrc=0
 *  AFFINE_SELECT dst = (pattern value as IOTA) cmp 0 ? src[0] : fill;
 *                TIR_F_REV0 reverses the predicate (reverse_pred).
 *  RANGE_SELECT  dst = ((j + pat_offset) cmp src[1]) and ((j + pat_offset)
 *                cmp1 src[2]) ? src[0] : fill, j = flattened free index;
 *                src[1], src[2] [P,1] fp32 bounds; reduce_op (max) /
 *                reduce_cmd / dst2 (reduce_res [P,1], optional) as
 *                ACTIVATION, on the DVE accumulator.                 nsrc=3
 *  SELECT_REDUCE dst = (src[0] != 0, inverted by TIR_F_REV0) ? src[1] :
 *                s0 (imm or [P,1]); reduce as RANGE_SELECT.          nsrc=2
 *  TENSOR_SCALAR_CUMULATIVE per partition, r = per reduce_cmd (reset_reduce:
 *                identity of op1, reduce: the DVE accumulator, load_reduce:
 *                s1); dst[i] = r = (src[0][i] op0 s0) op1 r.          nsrc=1
 *  TENSOR_SCALAR_REDUCE dst = src[0] op0 s0 (REV0 swaps); reduce_op over the
 *                row folded into the DVE accumulator per reduce_cmd
 *                (load_reduce starts from s1 = reduce_init); dst2 =
 *                reduce_res [P,1] (optional), negated with NEGATE.    nsrc=1
 *  SEQUENCE_BOUNDS dst [P,2,N]: start and end of the run of equal ids of
 *                src[0] [P,N] each element lies in (id 0: N and -1). nsrc=1
 *  NONZERO_WITH_COUNT dst [P,N+1] int32: indices + pat_offset of the nonzero
 *                elements of src[0] [P,N], `value` padding, count; only
 *                partitions 0, 16, ... 112.                          nsrc=1
 *  TOPK          dst = val_dst [P,K] bf16, dst2 = idx_dst [P,K] uint32: the
 *                K largest of each 16-partition snake of num_valid (n)
 *                elements of src[0], ascending.                      nsrc=1
 *  EXPONENTIAL   dst = exp(src[0] - s0) (s0 = max_value, imm or [P,1]);
 *                reduce_cmd != idle: the DVE accumulator (reset_reduce: 0,
 *                load_reduce: s1 = reduce_init) += each dst element;
 *                dst2 = reduce_res [P,1] (optional).                 nsrc=1
 *  MAX8          dst [P,8] = the 8 largest of src[0] per partition,
 *                descending.                                        nsrc=1
 *  FIND_INDEX8   dst [P,8] uint16/32 = index in src[0] of the first match
 *                of each value of src[1] [P,8].                     nsrc=2
 *  MATCH_REPLACE8 dst = src[0] with the first match of each value of
 *                src[1] [P,8] replaced by `value`; dst2 = the indices
 *                (dst_idx, fused form) or tensor -1.                 nsrc=2
 *  SELECT        dst = src[0] (pred) != 0 (inverted by TIR_F_REV0) ?
 *                src[1] (the immediate `value` with TIR_F_SRC_IMM) :
 *                (src[2] if nsrc == 3, else the immediate `fill`).
 *  DROPOUT       dst = src[0] with elements zeroed with probability s0
 *                (imm or [P,1]); prob mirrors s0.imm.  TIR_F_KEEP_RATE:
 *                s0 is the keep probability instead.               nsrc=1
 *  QUANTIZE_MX   dst (fp8) = quantized src[0]; dst2 = scales (uint8).
 *  CORE_BARRIER  barrier_cores (bitmask), barrier_id, engine; src[0] is
 *                the optional data tile it orders.
 *  SENDRECV      dst (SBUF on this core) <- peer's src[0]; peer core.
 *
 * Random numbers (engine: DVE or Pool, the front-end's NKI default filled
 * in; docs/semantics.md "Random numbers"):
 *  RNG           dst (integer dtype) = 32 random bits per element, low bits.
 *  RAND2         dst = uniform in [s0, s1] (min, max: imm or [P,1]). DVE.
 *  RAND_GET_STATE dst [P, 6 (Pool) or 24 (DVE)] uint32 = the PRNG state.
 *  RAND_SET_STATE src[0] (same shape) loads it; no dst.            nsrc=1
 *  SET_RNG_SEED  src[0] [1,1] 32-bit seeds the DVE PRNG; no dst.   nsrc=1
 *
 * Sequencer registers (NKI register_*; physical numbers from regalloc.h;
 * engine UNASSIGNED = every TPB engine keeps its own copy):
 *  REGISTER_MOVE reg = reg_src (a register) or reg_imm; TIR_F_ACCUMULATE:
 *                reg += reg_imm (a dynamic_range's loop variable). nsrc=0, no dst
 *  REGISTER_STORE dst (one 32-bit element of a tile) = register reg.  nsrc=0
 *  (register_load is LOAD_TENSOR_TO_REGISTER.)
 *
 * Collectives (nki.collectives; one program per core, rank = core id;
 * rewritten by the multi-core split, encoder/lnc_collective.c):
 *  ALL_REDUCE    dst = op0 over the group of every rank's src[0].    nsrc=1
 *  ALL_GATHER    dst = concat over the group of src[0] along coll_dim.
 *  REDUCE_SCATTER dst = op0 over the group of slice <my index> of src[0]
 *                cut into group-size pieces along coll_dim.
 *  ALL_TO_ALL    dst slice r (along coll_dim) = rank r's src[0] slice
 *                <my index>.
 *  COLLECTIVE_PERMUTE dst = src[0] of rank perm_from[me] (untouched when
 *                perm_from[me] < 0).
 *  RANK_ID       dst (SBUF) filled with this core's rank.             nsrc=0
 *  rgroup[r]: replica-group number of rank r (-1: in no group).
 * remote_core (DMA_COPY made by the split): src[0] is a tile of that
 * core's SBUF (-1 = this core's).
 * sync_core / sync_sem / sync_val (added by the multi-core split,
 * encoder/lnc_collective.c): a collective semaphore slot of a core
 * (docs/multicore.md "Collectives"; semaphore id = BIR_COLL_SEM0 + slot).
 *  COLL_SYNC, sync_core >= 0: a signal -- when it completes, slot
 *            sync_sem of core sync_core is incremented; src[0] (nsrc 1,
 *            optional) is the data it waits for (read).
 *  COLL_SYNC, sync_core < 0: a wait -- local slot sync_sem >= sync_val;
 *            dst (optional) is the data it guards (written: later
 *            accesses wait for it).
 *  DMA_COPY, sync_core >= 0: the transfer's last descriptor increments
 *            slot sync_sem of core sync_core when the transfer completes
 *            (a descriptor's remote semaphore).
 *
 * axes (TENSOR_REDUCE): bit i = free dim i counted from the innermost
 * (bit 0 = last axis).  The JSON `axis` list uses NKI numbering (1 = the
 * first free axis), so for a tile with F free dims axis a sets bit F - a.
 *
 * core: the program id's physical core (see tir_kernel_t.program_id).
 *
 * engine: as requested; an op kind only one engine can run (matmul*,
 * activation*, iota, affine_select, local_gather, gather_flattened,
 * tensor_partition_reduce, max8 family, scan, dropout, quantize_mx,
 * stream_shuffle) always carries that engine; otherwise UNASSIGNED means
 * the compiler picks.  INDIRECT_SAVE also keeps the rmw op in op0 (BYPASS
 * or ADD, mirrored by TIR_F_RMW_ADD).  name: user-given or "<op>_<index>";
 * path: the kernel-file path ("body[3].body[1]", innermost part kept when
 * long) or "op[<index>]" for C-built kernels.
 */
typedef struct {
    tir_opkind_t kind;
    unsigned flags;               /* TIR_F_* */
    const char *name;             /* user-given (interned) or generated ("matmul_3": an
                                     exact-length copy, tir_name) in the kernel, or a
                                     literal; shorter than TIR_NAME_LEN; "" = none.
                                     Copies of the op borrow it, like path */
    const char *path;             /* JSON path "body[3].body[1]" or C call site (shorter
                                     than TIR_PATH_LEN): the kernel's (interned, or a
                                     front-end statement's copy) -- every iteration of
                                     a loop shares one copy; "" = none */

    /* Operands: records of the kernel's AP pool (tir_ap_intern; identical
     * APs share one record, which never moves and is never written), or
     * &tir_ap_none when absent.  To change one: copy, modify, intern.  An
     * op copied into another kernel re-interns them (tir_op_copy_into). */
    const tir_ap_t *dst;          /* main output */
    const tir_ap_t *dst2;         /* second output: reduce result, index output (dst_idx) */
    const tir_ap_t *src[4];       /* inputs in NKI argument order (see docs/kernel-format.md) */
    const tir_ap_t *index;        /* indirect DMA index tile / gather indices */
    tir_scalar_t s0, s1;          /* tensor_scalar operands, activation scale, scan initial */
    const tir_ap_t *bias;         /* activation bias [P,1], tensor = -1 when absent */

    /* the fields few op kinds use (the tir_op_rare_t list: shuffle_mask,
     * transpose_axes, ..., fill, value, deps, reduce_cmd, axes, cmp1, the
     * DMA's dge_mode / oob_mode / qos, registers, collective semaphores,
     * inline assembly, mask_more): interned like the operands,
     * &tir_rare_default (shared) for every op that keeps the defaults */
    const tir_op_rare_t *rare;

    /* Small enumerations, one byte each (the op array is 10^5 ops: 152
     * bytes an op, not 304).  A front end that takes one of these from a
     * caller's int checks the range where it writes it (tir_fits_i8;
     * builder.c enc_field_i8), so the validator still sees the value. */
    int8_t nsrc;                  /* inputs used in src[] */
    int8_t engine;                /* requested isa_engine_t, ISA_ENG_UNASSIGNED = compiler picks */
    int8_t core;                  /* owning core (multi-core, < LNC_MAX_CORES), 0 single-core */
    int8_t op0, op1;              /* ISA_ALU_* */
    int8_t reduce_op;             /* ISA_ALU_* for fused/standalone reduce */
    int8_t func;                  /* ISA_ACTFN_* */
    int8_t cmp;                   /* ISA_CMP_* (iota / affine_select / predicates;
                                     range_select comp_op0) */
} tir_op_t;

/* The op record's bound: the ops array is 15 of compile-mixed's fresh huge
 * pages at 304 bytes (docs/performance-log.md, thirty-third session). */
_Static_assert(sizeof(tir_op_t) <= 152, "tir_op_t stays within 152 bytes");
/* The rare record has no padding bytes (records are compared byte for
 * byte; every one starts as a copy of tir_rare_default). */
_Static_assert(sizeof(tir_op_rare_t) == 320, "tir_op_rare_t: no padding");

/* Whether v fits one of tir_op_t's int8_t fields. */
static inline bool tir_fits_i8(int v)
{
    return v >= INT8_MIN && v <= INT8_MAX;
}

/* One executed loop statement (a `for` / *_range instance) as the
 * front-end unrolled it: iteration i is ops [marks[first + i], marks[first
 * + i + 1]).  Recorded for rolled loops (docs/compiler.md "Rolled loops");
 * a loop nested in another is recorded once per enclosing iteration. */
typedef struct {
    char path[TIR_PATH_LEN];      /* the loop statement's path */
    bool sequential;              /* sequential_range (NKI): rolled under --loops */
    int roll;                     /* the kernel's "roll": -1 not given, 0 false, 1 true */
    int parent;                   /* enclosing recorded loop, -1 = none */
    int64_t trips;
    int first;                    /* its trips + 1 boundaries in loop_marks */
    /* dynamic_range / fori_loop (docs/compiler.md "Dynamic loops"): the
     * trip count comes from register dyn_reg at run time (stop value,
     * iterations start, start + step, .. < stop); trips is the compile-time
     * guess the front-end unrolled */
    bool dynamic;
    int dyn_reg;
    int64_t dyn_start, dyn_step;
    /* while_loop (NKI 0.6): a dynamic loop that runs while register
     * dyn_reg is non-zero, tested before each iteration (no count; the
     * body updates the register on every engine) */
    bool dyn_while;
} tir_loop_t;

/* A set of interned fixed-size records (tir_ap_intern, tir_rare_intern):
 * the records sit in an arena, where they never move, so pointers to them
 * stay valid as the pool grows; an open-addressing hash set over them (cap
 * a power of two, at most half full) finds equal ones.  The AP pool first
 * looks in a short chain per tensor (by_tensor: the tensor's first record,
 * then the later ones newest first): a
 * tensor's few APs are found or added next to records just touched, not
 * by a probe into a set of 10^5 slots; a tensor with more distinct APs
 * than a chain holds moves them to the set (by_tensor then holds a
 * marker) and is looked up there from then on. */
typedef struct {
    tpb_arena_t recs;
    const void **set;
    uint32_t *hs;                 /* each set slot's record hash (low 32 bits) */
    int n, cap;                   /* records (chains and set), set slots */
    int nset;                     /* records in the set */
    tpb_arena_t links;            /* AP pool: the chains' nodes (record, next) past
                                     each tensor's first record */
    struct tir_ap_chain *by_tensor; /* AP pool: per tensor index, its chain (first
                                     record, later ones' nodes; tir.c) */
    int cap_tensors;              /* by_tensor's length */
    uint64_t nhash;               /* hash computations (tests: growth rehashes none) */
} tir_pool_t;

typedef struct {
    char name[TIR_NAME_LEN];
    char target[16];              /* "trn1", "trn2" */
    int num_cores;                /* physical cores the kernel is launched on (LNC) */
    tir_tensor_t *tensors;
    int ntensors, cap_tensors;
    tir_op_t *ops;
    int nops, cap_ops;
    char source[1024];            /* kernel file path, for messages */
    /* added by the front-end (additive).  The front-end is called once per
     * program id; every program declares the same tensors in the same order
     * (control flow may not depend on pid), so tensor i names the same HBM
     * tensor in every program's kernel.  Tiles declared inside a loop get one
     * tensor per iteration, named "t", "t#1", "t#2", ... */
    int program_id;               /* 0 .. num_programs-1 */
    int core;                     /* the physical core program_id runs on (every op's
                                     core; the one record of it when the program
                                     has no op) */
    int num_programs;             /* SPMD grid size (>= 1) */
    int grid_ndim;                /* NKI launch-grid axes (1..4); ids are row-major */
    int64_t grid_dims[4];         /* instances per axis (product = num_programs) */
    /* added by the front-end (additive): executed loops (owned) */
    tir_loop_t *loops;
    int nloops, cap_loops;
    int *loop_marks;              /* op-index boundaries of every loop's iterations */
    int nmarks, cap_marks;
    uint64_t regs_used;           /* physical sequencer registers allocated (regalloc.h) */
    tir_asm_t *asms;              /* owned inline-assembly records (tir_new_asm) */
    tir_pred_t *preds;            /* owned mask predicate blocks (tir_new_preds) */
    char **strs;                  /* interned strings (tir_intern, held in names): a */
    int nstrs, cap_strs;          /* hash set, open addressing, cap_strs a power of two */
    tpb_arena_t names;            /* exact-length strings: tensor names (tir_add_tensor),
                                     generated op names (tir_name), interned strings */
    tir_pool_t aps;               /* the ops' operands (tir_ap_intern) */
    tir_pool_t rares;             /* the ops' rare fields (tir_rare_intern) */
} tir_kernel_t;

void tir_kernel_init(tir_kernel_t *k);
void tir_kernel_free(tir_kernel_t *k);
/* Append; return the new index or -1 on out-of-memory.  The one append
 * point for tensors and for ops. */
int tir_add_tensor(tir_kernel_t *k, const tir_tensor_t *t);
/* The same, t->path being k's string already (tir_intern, or a copy in
 * its name arena) when path_interned: kept as it is (a loop body's tile
 * declared anew each iteration names one path). */
int tir_add_tensor_at(tir_kernel_t *k, const tir_tensor_t *t, bool path_interned);
/* tir_add_tensor_at where t->name may already be the kernel's (name_owned:
 * a string of k's name arena, kept as it is, not copied again). */
int tir_add_tensor_owned(tir_kernel_t *k, const tir_tensor_t *t, bool name_owned,
                         bool path_interned);
int tir_add_op(tir_kernel_t *k, const tir_op_t *op);
/* The ops and tensors arrays live in memory of their own (grown without
 * copying, common/hugepage.h): free them with tir_array_free(array,
 * capacity, element size), never free().  A pass that rebuilds the ops
 * allocates the new array with tir_ops_new(capacity) (NULL when out of
 * memory) and installs it with tir_ops_set, which frees the old one. */
void tir_array_free(void *arr, int cap, size_t elem);
tir_op_t *tir_ops_new(int cap);
/* Make room for `need` elements of elem bytes in the growing array p of
 * capacity *cap (elements; 0 with p NULL): doubled from `first` until it
 * fits, and once a mapping of its own (from TPB_ARRAY_MAP_MIN bytes) the
 * whole of it (tpb_array_room).  The elements past the old capacity read
 * zero when `zero`.  Returns the block (p when it had the room), *cap
 * updated; NULL when out of memory or past INT_MAX elements (p and *cap
 * unchanged).  Free it with tir_array_free(p, *cap, elem). */
void *tir_array_reserve(void *p, int *cap, int need, size_t elem, int first, bool zero);
/* A size hint for such an array (zeroed): room for `need` elements, taken
 * when its pages come fresh (a mapping) or it at least doubles the room
 * (else the array grows as it fills: a hint repeated by an outer loop would
 * move it each time); returns the array (p when nothing was done or out of
 * memory, *cap unchanged then). */
void *tir_array_hint(void *p, int *cap, int64_t need, size_t elem);
/* A hint that about `ops` ops and `tensors` tensors are coming (a loop
 * about to unroll, a flat body): an array they take past TPB_ARRAY_MAP_MIN
 * bytes gets a mapping of that size now, rather than growing through
 * 4 KiB-page malloc blocks first; a smaller one a heap block of exactly
 * that size (not a power of two that may cross into a mapping).  A guess
 * either way: too small, the array grows on as it fills; too large, the
 * untouched room costs no memory (below TPB_ARRAY_MAP_MIN: heap address
 * space).  Never fails. */
void tir_reserve_hint(tir_kernel_t *k, int64_t ops, int64_t tensors);
void tir_ops_set(tir_kernel_t *k, tir_op_t *ops, int n, int cap);
/* Record a loop about to run trips iterations starting at op k->nops;
 * returns its index (-1 out of memory).  tir_loop_mark(k, l, i) records
 * the start of iteration i (i == trips: the end). */
int tir_add_loop(tir_kernel_t *k, const tir_loop_t *l);
void tir_loop_mark(tir_kernel_t *k, int loop, int64_t i);
/* Install ops[0..n) (capacity cap), rebuilt from k's ops by inserting and
 * removing some, as k's ops (tir_ops_set), and renumber what names old op
 * indices: the loop boundaries by newpos (newpos[i]: the new index of old
 * op i's position, ops put in front of it included; newpos[nops_old] = n),
 * every op's explicit deps by at (at[i]: old op i's own new index, -1 when
 * it is gone, and then a dep on it is dropped; NULL: newpos).  Each op of
 * ops is an old op or a copy of one, so its deps are old indices. */
void tir_ops_replace(tir_kernel_t *k, tir_op_t *ops, int n, int cap, const int *newpos,
                     const int *at);
/* tir_ops_replace's renumbering alone, for a pass that rebuilt the ops in
 * place: ops[0, n) (deps still naming the old_nops old ops) and k's loop
 * boundaries, by newpos and at as there. */
void tir_ops_renumber(tir_kernel_t *k, tir_op_t *ops, int n, int old_nops, const int *newpos,
                      const int *at);
/* A zeroed inline-assembly record (asm_opnd -1) owned by k; NULL on
 * out-of-memory. */
tir_asm_t *tir_new_asm(tir_kernel_t *k);
/* The APs an op reads (up to TIR_MAX_READ_APS; absent ones have tensor -1):
 * src[0..3], index, bias, s0.ap, s1.ap.  dst and dst2 are its writes.
 * tir_op_read_slots gives the operands' slots instead (to replace one by
 * another interned AP), in the same order. */
#define TIR_MAX_READ_APS 8
int tir_op_read_aps(const tir_op_t *op, const tir_ap_t **out);
int tir_op_read_slots(tir_op_t *op, const tir_ap_t **out[]);
/* k's one record equal (byte for byte) to *ap: stable for k's lifetime
 * (freed by tir_kernel_free), never to be written; &tir_ap_none for an AP
 * equal to it; NULL on out-of-memory.  Construct APs zeroed (an AP's
 * unused dims are part of its bytes). */
const tir_ap_t *tir_ap_intern(tir_kernel_t *k, const tir_ap_t *ap);
/* The same for an op's rare fields (&tir_rare_default for the defaults). */
const tir_op_rare_t *tir_rare_intern(tir_kernel_t *k, const tir_op_rare_t *r);
/* One rare field of *op set to v: a copy of op's record, modified, interned
 * into k (on out-of-memory op keeps its record).  For a single write (tests,
 * a pass's one field); several fields: copy once, modify, intern. */
#define TIR_RARE_SET(k, op, field, v)                                              \
    do {                                                                           \
        tir_op_rare_t rare_set_ = *(op)->rare;                                     \
        rare_set_.field = (v);                                                     \
        const tir_op_rare_t *rare_p_ = tir_rare_intern((k), &rare_set_);           \
        if (rare_p_)                                                               \
            (op)->rare = rare_p_;                                                  \
    } while (0)
/* op's explicit deps set to deps[0, n) (n <= 4; a copy of its rare record
 * interned into k); -1 on out-of-memory (op unchanged). */
int tir_op_set_deps(tir_kernel_t *k, tir_op_t *op, const int *deps, int n);
/* k, a shallow copy of another kernel that borrows its arrays, gets empty
 * pools, string set and name arena of its own: the borrowed ops and
 * tensors keep pointing into the original's, what k interns or copies from
 * now on is k's, freed by tir_pools_free (which tir_kernel_free calls). */
void tir_pools_detach(tir_kernel_t *k);
void tir_pools_free(tir_kernel_t *k);
/* Free only the operand and rare-field pools (records and hash sets), for
 * a kernel whose ops are gone (enc_compile_release): the names, strings
 * and tensors stay; interning afterwards starts empty pools.  spare: NULL,
 * or the job's spare mappings (spare.h), which keep the pools' large
 * blocks for the passes after. */
void tir_op_pools_free(tir_kernel_t *k, tpb_spare_t *spare);
/* Re-intern op's operands and rare fields into k (op came from another
 * kernel, whose pools may be freed first); -1 on out-of-memory. */
int tir_op_copy_into(tir_kernel_t *k, tir_op_t *op);
/* n zeroed predicates owned by k (freed by tir_kernel_free); NULL on
 * out-of-memory. */
tir_pred_t *tir_new_preds(tir_kernel_t *k, int n);
/* The kernel's one copy of s (owned by k, freed by tir_kernel_free; copies
 * of ops made by later passes borrow it); NULL on out-of-memory. */
const char *tir_intern(tir_kernel_t *k, const char *s);
/* k's exact-length copy of s, cut to TIR_NAME_LEN - 1 bytes (names of
 * ops and tensors; freed by tir_kernel_free / tir_pools_free); NULL on
 * out-of-memory. */
const char *tir_name(tir_kernel_t *k, const char *s);
/* tir_name of s whose length n is known (n < TIR_NAME_LEN: no strnlen). */
const char *tir_name_n(tir_kernel_t *k, const char *s, size_t n);
/* A name no tensor of k has, for a tensor the compiler adds on its own
 * (the shared identity, a spill slot): `want` when free, else want_<n>
 * for the least n >= 1 free.  A kernel may name its tensors anything (NKI
 * reserves no argument name), so a fixed name could be one of them.  One
 * pass over the tensors per candidate; out has TIR_NAME_LEN bytes and want
 * is shorter than TIR_NAME_LEN - 12.  Returns out. */
const char *tir_free_name(const tir_kernel_t *k, const char *want, char *out);
/* Whether a tensor of k has a name that starts with prefix: a family of
 * compiler names (spill_slot<n>) checked in one pass, tir_free_name per
 * name only when one does. */
bool tir_name_prefix_used(const tir_kernel_t *k, const char *prefix);
/* An immediate scalar operand (ap = &tir_ap_none). */
tir_scalar_t tir_scalar_imm(double v);
/* Whether TENSOR_SCALAR's (op0, op1) is the Activation engine's affine
 * step in * scale + bias: multiply then add, multiply alone, add alone (NKI
 * tensor_scalar on the Scalar engine; validate.c, lower_act.c). */
static inline bool tir_ts_act_affine(int op0, int op1)
{
    return (op0 == ISA_ALU_MULTIPLY && (op1 == ISA_ALU_BYPASS || op1 == ISA_ALU_ADD)) ||
           (op0 == ISA_ALU_ADD && op1 == ISA_ALU_BYPASS);
}
/* Whether TENSOR_SCALAR op has a [P,1] tile operand (operand1 counted
 * only when op1 is used). */
static inline bool tir_ts_has_ptr(const tir_op_t *op)
{
    return op->s0.is_ap || (op->op1 != ISA_ALU_BYPASS && op->s1.is_ap);
}
/* Whether a DMA op skips out-of-bound indices / dynamic addresses: its
 * oob_mode, or TIR_F_OOB_SKIP (the form the builders and kernel format
 * set). */
static inline bool tir_oob_skip(const tir_op_t *op)
{
    return op->rare->oob_mode == ISA_OOB_SKIP || (op->flags & TIR_F_OOB_SKIP);
}
/* An op with every AP's tensor = -1 and defaults set (path ""). */
void tir_op_init(tir_op_t *op, tir_opkind_t kind);
/* Same tensor, dtype view, offset, dimensions, steps and counts. */
bool tir_ap_equal(const tir_ap_t *a, const tir_ap_t *b);
/* Set the bits of a's elements (flat offsets a->offset + sum idx*step) in
 * the bitmap bits[0, nbits).  disjoint: stop with false at the first
 * element already set or outside [0, nbits) (what was marked before it
 * stays); otherwise elements outside are skipped, set ones set again, and
 * the result is true.  A unit-step innermost dimension is marked a run at
 * a time (an oversize tile's loads cover 10^7 elements).  An AP with a
 * zero count marks nothing. */
bool tir_ap_mark_bits(const tir_ap_t *a, uint8_t *bits, uint64_t nbits, bool disjoint);
/* Whether a and b may touch a common element of one tensor: their flat
 * ranges (tir_ap_range) intersect.  t: their tensor, so ranges of two dtype
 * views compare in its elements; NULL: two different views are taken as
 * overlapping. */
bool tir_ap_overlap(const tir_tensor_t *t, const tir_ap_t *a, const tir_ap_t *b);
/* The flat element range [*lo, *hi] (inclusive, offset included) an AP
 * touches in its tensor t, in t's elements (a dtype view's range is
 * widened to the whole elements of t its bytes touch). */
void tir_ap_range(const tir_tensor_t *t, const tir_ap_t *ap, int64_t *lo, int64_t *hi);
/* The tensor as operand a sees it: t itself, or for a dtype view (a->view)
 * *tmp filled as t with that dtype and shape [total bytes / size] (HBM)
 * or [shape[0], row bytes / size] (a tile).  The element size must divide
 * those bytes (the front-end checks it: tir_view_shape). */
const tir_tensor_t *tir_ap_tensor(const tir_tensor_t *t, const tir_ap_t *a, tir_tensor_t *tmp);
/* A tile's row: the elements of one partition (the product of its free
 * dims, shape[1..]); the whole tensor for an HBM one of one dim. */
static inline int64_t tir_tile_row(const tir_tensor_t *t)
{
    int64_t row = 1;
    for (int d = 1; d < t->ndim; d++)
        row *= t->shape[d];
    return row;
}
/* The dtype operand a over tensor t reads or writes: its dtype view's,
 * else t's (the engines and descriptors see that one). */
static inline unsigned tir_ap_dtype(const tir_tensor_t *t, const tir_ap_t *a)
{
    return a->view ? a->view - 1u : t->dtype;
}
/* The shape t has viewed as dtype dt (ndim 1 or 2, as tir_ap_tensor); false
 * when dt's size does not divide t's bytes (a tile: one partition row's). */
bool tir_view_shape(const tir_tensor_t *t, unsigned dt, int *ndim, int64_t *shape);

#endif
