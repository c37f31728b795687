/* lower.h - internal interface of the tile-IR -> BIR lowering (lower*.c).
 * Not a contract: only the back-end includes it. */
#ifndef TPB_LOWER_H
#define TPB_LOWER_H

#include "bir.h"
#include "diag.h"
#include "target.h"
#include "tir.h"

/* lw_tap_axes results already computed in this lowering, keyed by the
 * AP's contents but its tensor, the reduce axes and the four things the
 * result reads of the tensor: its kind, dtype, row size (elements per
 * partition) and mloc address (the target is fixed during lower_kernel).
 * So another tile of the same shape in the same buffer (a tile declared in
 * a loop body: a new tensor every iteration, rotating over the same
 * addresses) finds the entry of an earlier one.  Contents, not pointers:
 * some lowerings pass APs they build on the stack.  Only successes are
 * stored, so every error still comes from the full path.  Direct-mapped on
 * a hash of the key; an entry holds one when its bit of lw_memo_t.tap_valid
 * is set. */
#define LW_TAP_MEMO 32
typedef struct {
    unsigned axes, mapped;
    tir_tensor_kind_t kind;   /* of the tensor the entry was computed for */
    unsigned dtype;
    int64_t row;
    uint64_t addr;
    tir_ap_t ap;              /* ap.tensor: that tensor (not compared) */
    isa_tap_t tap;
    bir_access_t acc;         /* write = 0; the caller's flag is set on a hit */
} lw_tap_memo_t;

/* lower_direct's two sides and joint dims already derived in this
 * lowering (lower_dma.c), keyed by what build_side reads of each side but
 * the offset and the address: the tensor's kind, dtype and shape and the
 * access pattern's dims (the target is fixed during lower_kernel).  An
 * entry keeps each side's geometry; a hit places it at the DMA's own
 * offset and mloc address (side_place), so the loads of thousands of
 * tiles, each its own row, share one entry; a side's last few placements
 * are kept and copied when met again.  A placement build_side would
 * refuse (out of bounds) goes the full path, which reports it.  Only
 * successes are stored; a DMA with a register offset (reg_side) neither
 * looks up nor stores.  Two ways per set on a hash of the key; an entry
 * holds one when its bit of lw_memo_t.dma_valid is set. */
#define LW_DMA_MEMO 32
#define LW_DMA_MEMO_J 4       /* joint dims an entry holds (more: not stored) */
#define LW_DMA_PLACED 4       /* placements a side keeps */
typedef struct {
    tir_tensor_kind_t kind;
    unsigned dtype;
    int tndim, ndim;          /* the tensor's, the pattern's */
    int64_t shape[TIR_MAX_DIMS];
    int64_t step[TIR_MAX_DIMS], count[TIR_MAX_DIMS];   /* [0, ndim) */
} lw_dma_key_t;
typedef struct {
    unsigned space, dtype, dsz;
    uint64_t elems;
    int64_t lo, hi;           /* element spans around the offset (SBUF/PSUM: in the row) */
    int64_t total;            /* HBM: the tensor's elements */
    int64_t row, hull;        /* SBUF/PSUM: elements per partition, partitions spanned */
    /* the access at offset 0 of a tensor at address 0: its bytes [lo_b,
     * hi_b) (not cut to 48 bits: the access cuts them when placed), its
     * partitions [0, p1) and its role's write flag */
    uint64_t lo_b, hi_b;
    unsigned p1;
    bool write;
    struct lw_dma_placed {    /* the last placements (off -1: none): a loop's DMA */
        int64_t off;          /* rotating over a few buffers meets them again */
        uint64_t addr, base;
        bir_access_t acc;
    } placed[LW_DMA_PLACED];
    int next;                 /* the slot the next placement replaces */
    int misses;               /* placements missed in a row */
    int rest;                 /* placements left to make without the scan */
} lw_dma_side_t;
/* A run of LW_DMA_PLACED_MISS_RUN placement misses (every DMA at a new
 * offset, as when thousands of tiles live at once) rests a side's scan and
 * store for LW_DMA_PLACED_REST placements; a placement is side_place's
 * either way. */
#define LW_DMA_PLACED_MISS_RUN 16
#define LW_DMA_PLACED_REST 112
typedef struct {
    int64_t count, s_step, d_step;
} lw_jdim_t;                  /* a joint dim: one dim on each side (lower_dma.c) */
typedef struct {
    bool last;                /* the way of its set filled last (read when both are valid) */
    int nj;
    lw_dma_key_t key[2];      /* src, dst */
    lw_dma_side_t side[2];
    lw_jdim_t j[LW_DMA_MEMO_J];
} lw_dma_memo_t;

/* How lower_direct uses its memo: a run of LW_DMA_MISS_RUN misses in a row
 * (every DMA new, as when thousands of tiles are each loaded once) rests
 * it for the next `backoff` DMAs (from LW_DMA_REST0, doubling while the
 * misses go on, at most LW_DMA_REST_MAX); a hit ends the run.  Resting
 * only skips the memo: the result is the full path's either way. */
#define LW_DMA_MISS_RUN 64
#define LW_DMA_REST0 64
#define LW_DMA_REST_MAX 4096
typedef struct {
    int misses;               /* misses in a row */
    int rest;                 /* DMAs left to lower without the memo */
    int backoff;              /* the next rest (0: LW_DMA_REST0) */
    long hits;                /* answered from the memo (tests read it) */
} lw_dma_use_t;

/* Both memos: 37 KiB that a small kernel touches a few entries of.
 * Emptied by clearing the two masks, not the entries (an entry is written
 * whole when stored), so neither the clear nor the driver's set-up of the
 * context (compile.c prelink: the fields before it only) zeroes them, and
 * their untouched pages are never faulted in. */
typedef struct {
    uint32_t tap_valid;       /* bit i: tap[i] holds an entry */
    uint32_t dma_valid;       /* bit i: dma[i] holds an entry */
    lw_tap_memo_t tap[LW_TAP_MEMO];
    lw_dma_memo_t dma[LW_DMA_MEMO];
} lw_memo_t;
_Static_assert(LW_TAP_MEMO <= 32 && LW_DMA_MEMO <= 32, "lw_memo_t's masks");

#define LW_MAX_PTRS 8

typedef struct {
    const tir_kernel_t *k;
    const tpb_target_t *t;
    bir_module_t *m;
    tpb_err_t *err;
    int opi;                  /* current tile-IR op index */
    const tir_op_t *op;
    int sub;                  /* instructions emitted for the current op */
    const tir_op_t *kind_of;  /* the op op_kind was looked up for (lower_kernel) */
    const char *op_kind;      /* tir_op_name(kind_of->kind): lw_inst's per instruction */
    size_t name_n;            /* its name's length, cut to BIR_NAME_LEN - 1 (set at sub 0) */
    int ident_hbm;            /* tensor index of the shared identity constant, -1 */
    int ident_tile;           /* tensor index of its SBUF copy, -1 */
    bool no_deps;             /* the caller knows that no op names explicit deps
                                 (ndeps 0): lower_kernel skips its pass over the ops
                                 looking for them */
    /* called after op i is lowered (NULL: none); no later step of the
     * lowering reads an op before i, so the driver may release them.  -1
     * (its error set): the lowering stops with it */
    int (*op_done)(void *arg, int i);
    void *op_done_arg;
    lw_dma_use_t dma_use;     /* zeroed: no run (lower_kernel clears it) */
    /* the per-partition scalar (PTR) operands of the instruction being
     * built (lw_inst resets, lw_ptr adds, lw_emit checks their partitions) */
    const bir_inst_t *ptr_inst;
    unsigned nptr;
    struct { int acc; const char *role; } ptr[LW_MAX_PTRS];
    /* the operand and DMA memos, emptied by lw_tap_memo_clear (lower_kernel
     * does); last: a context may be set up without them */
    lw_memo_t memo;
} lower_ctx_t;

/* Lower every op of k into m (mlocs must be allocated). */
int lower_kernel(lower_ctx_t *c);

/* One lowering per family; each returns 0 or -1 with c->err set. */
int lower_matmul(lower_ctx_t *c);      /* matmul, matmul_mx, matmul_sparse */
int lower_transpose(lower_ctx_t *c);   /* transpose on PE (identity matmul) or DVE (Transpose32) */
int lower_activation(lower_ctx_t *c);  /* activation, activate2 */
/* An identity Activation of the op's src into dst (func copy, no reduce):
 * fl32(fl32(src * scale) + bias).  scale: an immediate or [P,1] operand;
 * bias: NULL (none), a [P,1] operand, or an immediate (NeuronCore-v3 on).
 * The roles name them in errors.  tensor_copy on the Activation engine. */
typedef struct {
    const tir_scalar_t *scale;
    const char *scale_role;
    const tir_scalar_t *bias;
    const char *bias_role;
} lw_act_affine_t;
int lw_act_identity(lower_ctx_t *c, const lw_act_affine_t *a);
/* tensor_scalar on the Activation engine with a [P,1] operand (one of the
 * tir_ts_act_affine combinations): lw_act_identity (lower_act.c). */
int lw_act_tensor_scalar(lower_ctx_t *c);
int lower_tensor(lower_ctx_t *c);      /* tensor_tensor/scalar, stt, copy, scan, quantize */
int lower_reduce(lower_ctx_t *c);      /* tensor_reduce, tensor_partition_reduce */
int lower_select(lower_ctx_t *c);      /* iota, affine_select, max8 family, select, dropout, memset, shuffle */
int lower_dma(lower_ctx_t *c);         /* load/store/dma_copy/dma_transpose/indirect/gather/broadcast */
int lower_misc(lower_ctx_t *c);        /* core_barrier, load_tensor_to_register */
int lower_rng(lower_ctx_t *c);         /* rng, rand2, rand_get_state, rand_set_state, set_rng_seed */
int lower_reg(lower_ctx_t *c);         /* register_move, register_store */
int lower_asm(lower_ctx_t *c);         /* inline_asm, inline_asm_bytes (lower_asm.c) */
int lower_seq(lower_ctx_t *c);         /* tensor_scalar_cumulative/reduce, sequence_bounds, nonzero_with_count, topk, exponential */

/* ---- shared helpers (lower.c) ---- */
/* Error prefixed with the op: "op 3 'add_3' (tensor_tensor, body[2]): ..." */
int lw_err(lower_ctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* NKI v4 MX quads: a data operand spans whole quadrants and its scale
 * operand reaches each quadrant's scale rows (lower_matmul.c). */
int lw_mx_quad_scales(lower_ctx_t *c, const isa_tap_t *data, const isa_tap_t *scale,
                      const char *data_what, const char *scale_what);
/* Start an instruction for the current op (name "<op>" / "<op>.<k>"). */
void lw_inst(lower_ctx_t *c, bir_inst_t *in, bir_opcode_t opc, isa_op_t op);
/* lw_inst in the main block's next slot (bir_block_next): lw_emit commits
 * it there without a copy.  NULL when out of memory (error set).  Until it
 * is emitted nothing else may be appended to the block. */
static inline bir_inst_t *lw_inst_new(lower_ctx_t *c, bir_opcode_t opc, isa_op_t op)
{
    /* inline: one call per instruction (lw_inst), not two */
    bir_inst_t *in = bir_block_next(bir_main_block(c->m), c->err);
    if (in)
        lw_inst(c, in, opc, op);
    return in;
}
/* Append; applies the op's requested engine (error if illegal). */
int lw_emit(lower_ctx_t *c, bir_inst_t *in);
/* Append as it is (lw_emit without the engine); an instruction built in
 * its slot (lw_inst_new) first shares its body and accesses with an equal
 * earlier one's (bir_inst_share).  -1 when out of memory (error set). */
int lw_append(lower_ctx_t *c, bir_inst_t *in);
/* A collective semaphore slot is in use: reserve one slot per core of the
 * kernel (every core the same ids; bir.h BIR_COLL_SEM0). */
void lw_coll_slots(lower_ctx_t *c);
/* Check the op's collective slot (sync_sem) and target core (sync_core),
 * reserve the slots, and preset `in`'s header update: slot sync_sem of
 * core sync_core += 1 (upd_remote) when `in` completes. */
int lw_coll_remote_upd(lower_ctx_t *c, bir_inst_t *in);
bool lw_has(const tir_ap_t *a);
/* As lw_tap, keeping reduced (axes) and kept dims apart; *mapped = axes
 * renumbered to the TAP's dims.  More than 4 free dims is an error unless
 * max_dims_ok is used by the caller (see lower_reduce.c). */
int lw_tap_axes(lower_ctx_t *c, bir_inst_t *in, const tir_ap_t *a, bool write, const char *role,
                unsigned axes, isa_tap_t *out, unsigned *mapped);
/* Tile AP -> compute access pattern; records the access on `in`.  Inline:
 * a call or two per instruction, no wrapper call for each. */
static inline int lw_tap(lower_ctx_t *c, bir_inst_t *in, const tir_ap_t *a, bool write,
                         const char *role, isa_tap_t *out)
{
    unsigned mapped;
    return lw_tap_axes(c, in, a, write, role, 0, out, &mapped);
}
/* Empty the lw_tap_axes memo and lower_direct's (the kernel, its mlocs or
 * the target changed); lower_kernel does when it starts. */
void lw_tap_memo_clear(lower_ctx_t *c);
/* Whether entry i of the operand / DMA memo holds one (tests). */
static inline bool lw_tap_memo_valid(const lower_ctx_t *c, int i)
{
    return c->memo.tap_valid >> i & 1u;
}
static inline bool lw_dma_memo_valid(const lower_ctx_t *c, int i)
{
    return c->memo.dma_valid >> i & 1u;
}
/* a and b equal but for the tensor they name. */
static inline bool lw_same_pattern(const tir_ap_t *a, const tir_ap_t *b)
{
    if (a->offset != b->offset || a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->step[d] != b->step[d] || a->count[d] != b->count[d])
            return false;
    return true;
}
/* Free dims a tile AP needs after merging (see lw_tap_axes). */
int lw_count_free_dims(const tir_ap_t *a, unsigned axes);
/* Per-partition scratch bytes an op needs during its lowering (the
 * multi-step reduce partial); 0 for most ops.  Used by the allocator. */
uint64_t lower_scratch_bytes(const tir_kernel_t *k, const tir_op_t *op);
/* A dense SBUF TAP shaped as t without its dim `drop` (none: an index past
 * its dims), at scratch byte addr; and the access of one such 4-byte-element
 * TAP recorded on `in` (lower_reduce.c). */
isa_tap_t lw_dense_tap(const isa_tap_t *t, unsigned drop, unsigned dtype, uint64_t addr);
void lw_dense_access(lower_ctx_t *c, bir_inst_t *in, const isa_tap_t *p, bool write);
/* A PE transpose whose dst dtype differs from its src dtype goes through
 * the shared identity (a real matmul converts); same dtypes use the Matmul
 * transpose flag. */
bool lower_pe_transpose_needs_identity(const tir_kernel_t *k, const tir_op_t *op);
/* [P,1] tile AP -> per-partition pointer; records a read. */
int lw_ptr(lower_ctx_t *c, bir_inst_t *in, const tir_ap_t *a, bool write, const char *role,
           isa_ptr_t *out);
/* An input and the output of an engine op cover the same number of
 * partitions; their starts may differ (cross-half / cross-quadrant). */
int lw_same_partitions(lower_ctx_t *c, const char *what, const isa_tap_t *src,
                       const isa_tap_t *dst);
/* Scalar operand -> 32-bit field value (immediate as fp32 bits, or a pointer
 * address) plus the is_ptr flag. */
int lw_scalar(lower_ctx_t *c, bir_inst_t *in, const tir_scalar_t *s, const char *role,
              uint32_t *bits, uint32_t *is_ptr);
uint32_t lw_f32_bits(float f);
/* lw_scalar for the operand of ALU op `alu`: bitwise ops read an immediate
 * as an int32 bit pattern, every other op as fp32 bits (docs/semantics.md). */
int lw_scalar_for(lower_ctx_t *c, bir_inst_t *in, const tir_scalar_t *s, const char *role,
                  int alu, uint32_t *bits, uint32_t *is_ptr);
/* Fill bit pattern of value v reinterpreted to dtype dt (memset/iota). */
uint32_t lw_fill_bits(double v, unsigned dt);
/* clip_scalar: a finite immediate clamped to the finite range of dtype dt
 * (NaN stays NaN), so 1e300 on bf16 is bf16's largest value, not inf; an
 * infinity stays one on a float dtype that has it (not fp8e4m3, not the
 * integers, where it clamps too). */
double lw_clip_scalar(double v, unsigned dt);
/* enableLDWOpt (docs/compiler.md): remove each LdWeights that loads exactly
 * what the previous LdWeights loaded when no PE weight load, no other PE
 * weight user and no write to the weights' memory lies between them.
 * Returns the number removed. */
int lw_ldw_opt(bir_module_t *m);
static inline const tir_tensor_t *lw_tensor(lower_ctx_t *c, const tir_ap_t *a)
{
    if (a->tensor < 0 || a->tensor >= c->k->ntensors)
        return NULL;
    return &c->k->tensors[a->tensor];
}

/* The dtype operand a reads or writes (its dtype view's, else its
 * tensor's); a must name a tensor. */
static inline unsigned lw_dtype(lower_ctx_t *c, const tir_ap_t *a)
{
    return tir_ap_dtype(&c->k->tensors[a->tensor], a);
}

/* The shared tensor-scalar emitter (lower_tensor.c): TensorScalar, or
 * TensorScalarPtr when predicates are given (PredExt prefix, fill value). */
typedef struct {
    const tir_ap_t *in, *out;
    int op0, op1;
    const tir_scalar_t *s0, *s1;
    bool rev0, rev1;
    const isa_fmt_PREDEXT_t *pred;   /* NULL = unpredicated */
    int npred;                       /* pred[0..npred) ANDed (0 = 1 when pred is set);
                                        the first's fill and keep apply */
} lw_ts_args_t;
int lw_tensor_scalar(lower_ctx_t *c, const lw_ts_args_t *a);
/* The op's affine pattern (pat_offset, pat_cm, pat_step over dst's
 * unmerged free dims, cmp) as a PredExt, fill 0 and keep 0
 * (lower_select.c: affine_select on DVE, NKI masks). */
int lw_pattern_pred(lower_ctx_t *c, isa_fmt_PREDEXT_t *p);
/* The same for another predicate over the op's dst (a mask's 2nd.. one). */
int lw_pred_of(lower_ctx_t *c, const tir_pred_t *pat, isa_fmt_PREDEXT_t *p);

#endif
