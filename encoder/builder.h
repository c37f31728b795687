/* builder.h - the C builder API: build a tile-IR kernel (encoder/tir.h)
 * directly from C, in the shape of the NKI forward builders.
 *
 *   tir_kernel_t k; tpb_err_t err; enc_builder_t b;
 *   enc_builder_init(&b, &k, "add", "trn2", &err);
 *   int a = enc_input(&b, "a", ISA_DT_FP32, 2, (int64_t[]){128, 512});
 *   int o = enc_output(&b, "out", ISA_DT_FP32, 2, (int64_t[]){128, 512});
 *   int t = enc_tile(&b, "t", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 512});
 *   enc_load(&b, enc_ap_full(&b, t), enc_ap_full(&b, a));
 *   enc_store(&b, enc_ap_full(&b, o), enc_ap_full(&b, t), false);
 *   if (enc_builder_finish(&b)) fprintf(stderr, "%s\n", err.msg);
 *   ... tir_kernel_free(&k);
 *
 * Errors are sticky: the first failure is recorded in the caller's
 * tpb_err_t, every later call returns -1 (or an AP with tensor -1) and does
 * nothing, and enc_builder_finish() reports it.  So a C kernel can be
 * written straight through and checked once.
 *
 * Every op goes through enc_emit(): validation (encoder/validate.c, the
 * same checks the JSON front-end gets) then tir_add_op() — the one append
 * point.  The typed wrappers below only fill a tir_op_t. */
#ifndef TPB_BUILDER_H
#define TPB_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "target.h"
#include "tir.h"

/* Longest op path kept while building (tir_op_t.path keeps the tail). */
#define ENC_PATH_MAX 1024

typedef struct {
    tir_kernel_t *k;
    tpb_err_t *err;               /* caller-owned, first error */
    bool failed;
    const tpb_target_t *target;
    int program_id;
    int core;                     /* physical core of this program (op.core) */
    char path[ENC_PATH_MAX];      /* path of the next op; "" = "op[<index>]" */
    const char **path_slot;       /* enc_set_path_slot: the caller's cache of the
                                     kernel's copy of path (op.path), NULL = none */
    char next_name[TIR_NAME_LEN]; /* name of the next emitted op (NKI name=); "" = default */
    char msg_prefix[1100];        /* prepended to every error ("k.json: ") */
    int64_t max_ops;              /* unrolling guard */
    /* Name index and tile scoping (all O(1) per operation, so unrolled
     * loops with per-iteration tiles stay linear):
     * - names[]: one entry per base name: newest live tensor + instance count;
     *   hash[] (open addressing, power of two) maps a name to its entry;
     * - per tensor: tinfo[] (its entry, the previous declaration with the
     *   same base name, whether its scope ended);
     * - scope_start[]: ntensors when each open scope began. */
    struct enc_name_entry {
        const char *name;            /* the base name (the kernel's copy: its first
                                        tensor's name) */
        int head;
        int count;
        const tir_ap_t *last_full;   /* the whole-AP record interned last for an
                                        instance (enc_ap_memo_interned), NULL */
        const char *inst_str;        /* the newest instance's name "name#N" (the
                                        kernel's copy), NULL: none or cut */
        int inst_len;                /* its length */
    } *names;
    int nnames, cap_names;
    int *hash;
    int cap_hash;
    /* per tensor, one array (10^5 loop tiles: one growth, not four), zeroed
     * where no tensor was declared (tir_array_reserve; free it with
     * tir_array_free(tinfo, cap_tensor_info, sizeof *tinfo)) */
    struct enc_tensor_info {
        const tir_ap_t *full_ap;     /* its whole access pattern interned, NULL
                                        (enc_ap_memo_interned) */
        int entry1;                  /* its name entry + 1, 0: not declared here;
                                        negated once its scope ended (16 bytes a
                                        tensor, not 24) */
        int prev_same;               /* the previous declaration of its name, -1 */
    } *tinfo;
    int cap_tensor_info;
    int *scope_start;
    int depth, cap_scope;
    /* matmul outputs per PSUM tile, for accumulate=None (builder_acc.c) */
    const tir_ap_t *acc_dst;      /* enc_set_acc_dst: the dst the next emitted op's
                                     accumulate=None bookkeeping sees, NULL = its own */
    struct enc_acc_region *acc;
    int acc_n, acc_cap;
    int *acc_head;                /* per tensor: newest region, -1 */
    int acc_nheads;
    int oversize;                 /* SBUF tiles past the partition size (reload.c) */
    long full_ap_hits;            /* answers from full_ap (tests) */
    long full_derived;            /* whole APs taken from the previous instance (tests) */
    long names_bumped;            /* instance names "t#N" from the previous one's (tests) */
    long names_owned;             /* of those, written straight into the name arena (tests) */
    char op_num[24];              /* the decimal index in the last generated op name */
    int op_num_len;               /* its digits, 0: none yet */
    int op_num_of;                /* the index they spell */
    struct enc_check_memo *check_memo;   /* enc_emit's validation memo, allocated on demand */
    struct enc_op_check *op_check;       /* enc_set_op_check: the caller's last validated
                                            op, NULL = none */
    long op_check_hits;           /* validations enc_op_check answered (tests) */
    /* whole-AP records taken from the previous instance's (enc_ap_memo_interned):
     * `to` is `from` but for the tensor, over a tensor of the same kind,
     * dtype and shape -- what enc_op_check compares, answered without the
     * comparison (a small cache by `to`: an entry overwritten is compared) */
#define ENC_DERIVED 16
    struct { const tir_ap_t *to, *from; } derived[ENC_DERIVED];
    long derived_hits;            /* comparisons the cache answered (tests) */
} enc_builder_t;
/* derived[]'s slot for record `to` */
static inline unsigned enc_derived_slot(const tir_ap_t *to)
{
    return (unsigned)(((uint64_t)(uintptr_t)to * 0x9e3779b97f4a7c15ull) >> 60) % ENC_DERIVED;
}

/* target NULL = trn2.  Initialises *k (tir_kernel_init). */
int enc_builder_init(enc_builder_t *b, tir_kernel_t *k, const char *kernel_name,
                     const char *target, tpb_err_t *err);
/* Return the sticky status (0 ok, -1 failed) and release builder state
 * (not the kernel). */
int enc_builder_finish(enc_builder_t *b);
/* End of the body: SBUF tiles larger than a partition are reloaded from HBM
 * at each use, or refused (reload.c; called by enc_builder_finish and the
 * JSON front-end). */
int enc_builder_complete(enc_builder_t *b);
/* reload.c: the rewrite itself (docs/compiler.md, "Oversize tiles"). */
int enc_reload_oversize(tir_kernel_t *k, const tpb_target_t *target, tpb_err_t *err);
void enc_builder_free(enc_builder_t *b);
/* tir_reserve_hint, and the same for the builder's per-tensor records. */
void enc_builder_reserve(enc_builder_t *b, int64_t ops, int64_t tensors);
/* Room in b->tinfo for tensor n (new slots zeroed); -1 on out-of-memory. */
int enc_grow_tensor_info(enc_builder_t *b, int n);
/* Record an error through the builder (sticky); returns -1. */
int enc_fail(enc_builder_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void enc_set_path(enc_builder_t *b, const char *path);
/* After enc_set_path: *slot caches the kernel's copy of that path (NULL
 * until the first op or tile; checked against the path at each one, so a
 * stale slot only costs the lookup; a new slot's path is copied, not
 * interned).  The slot must outlive the ops emitted
 * until the next enc_set_path or enc_set_path_slot(b, NULL). */
void enc_set_path_slot(enc_builder_t *b, const char **slot);
/* A loop body statement's last op that passed validation (builder_check.c):
 * the next op that reads the same to validate.c -- every field but the
 * name, path and operand records equal, each operand the same record or
 * the same access pattern over a tensor of the same kind, dtype and shape,
 * and the operands naming one tensor where those did -- passes too, so
 * enc_emit skips its validation (the op of the next iteration with that
 * iteration's fresh tiles).  Only passes are kept: every rejection is found
 * and worded as without it. */
typedef struct enc_op_check {
    const tir_kernel_t *k;
    const tpb_target_t *tg;
    /* two ops (a body whose slices alternate, i % 2), the older replaced */
    struct {
        bool valid;
        const tir_ap_t *aps[10];   /* its operand records (builder_check.c's order) */
        unsigned used;             /* bit i: aps[i] is not &tir_ap_none */
        tir_op_t op;               /* the op (name, path and records not compared) */
    } e[2];
    unsigned next;
    unsigned hit[2];   /* the entries of the last two hits (newest first): the order
                          enc_op_check_hit tries them in (an i % 2 body alternates) */
} enc_op_check_t;
/* rec (NULL: none) takes part in the ops enc_emit appends until the next
 * enc_set_op_check; it must outlive them. */
void enc_set_op_check(enc_builder_t *b, enc_op_check_t *rec);
/* op passes validation because rec's op did (see enc_op_check_t) */
bool enc_op_check_hit(enc_builder_t *b, enc_op_check_t *rec, const tir_op_t *op);
/* rec := op, which passed validation */
void enc_op_check_keep(const enc_builder_t *b, enc_op_check_t *rec, const tir_op_t *op);
/* NKI `name=`: the next op enc_emit() appends gets this name unless the op
 * carries its own (typed builders that build the op themselves, such as
 * enc_dma_copy_ex, keep the caller's name this way).  Consumed by that op. */
void enc_set_name(enc_builder_t *b, const char *name);

/* ---- tensors (HBM) and tiles ---- */
int enc_input(enc_builder_t *b, const char *name, unsigned dtype, int ndim, const int64_t *shape);
int enc_output(enc_builder_t *b, const char *name, unsigned dtype, int ndim, const int64_t *shape);
int enc_scratch(enc_builder_t *b, const char *name, unsigned dtype, int ndim, const int64_t *shape);
/* shared_constant: `data` holds count elements of `dtype` (C order), copied. */
int enc_shared_constant(enc_builder_t *b, const char *name, unsigned dtype, int ndim,
                        const int64_t *shape, const void *data);
/* shared_constant from a .npy file (path as the back-end should open it). */
int enc_shared_constant_file(enc_builder_t *b, const char *name, unsigned dtype, int ndim,
                             const int64_t *shape, const char *file);
/* shared_identity_matrix: an n x n identity constant. */
int enc_shared_identity_matrix(enc_builder_t *b, const char *name, int64_t n, unsigned dtype);
/* An SBUF or PSUM tile (kind TIR_T_SBUF / TIR_T_PSUM); shape[0] = partitions. */
int enc_tile(enc_builder_t *b, const char *name, tir_tensor_kind_t buffer, unsigned dtype,
             int ndim, const int64_t *shape);
/* enc_tile through the caller's slot for name (0 at first: a tile
 * statement declared every iteration finds its name's entry once; one
 * slot per name and builder, as enc_find_tensor_at) */
/* A tile the compiler adds on its own (a front-end op's scratch tile):
 * enc_tile, but the kernel's names stay the kernel's.  A kernel may name
 * its tensors anything (NKI reserves no name), so `name` may be one of
 * them: the tile is then its further instance "name#N" (an HBM tensor's
 * name too), and `name` in a later operand still finds the kernel's
 * tensor, never this tile (reached by its id only). */
int enc_own_tile(enc_builder_t *b, const char *name, tir_tensor_kind_t buffer, unsigned dtype,
                 int ndim, const int64_t *shape);
/* An output the compiler adds on its own (device_print's buffer), under
 * a name no declaration has used (enc_name_declared): found by its id
 * only, and a later tile of the kernel's may take the name ("name#1"). */
int enc_own_output(enc_builder_t *b, const char *name, unsigned dtype, int ndim,
                   const int64_t *shape);
/* Tile id (just declared) at the fixed byte offset addr in each partition
 * (the kernel format's "addr"): checked against the tile's dtype, bank and
 * memory size; errors name the tile and the field (builder_place.c). */
int enc_tile_place(enc_builder_t *b, int id, int64_t addr);
int enc_tile_at(enc_builder_t *b, const char *name, tir_tensor_kind_t buffer, unsigned dtype,
                int ndim, const int64_t *shape, int *slot);
/* Tiles declared after enc_scope_begin() go out of scope at the matching
 * enc_scope_end(); an op using them afterwards is an error. */
void enc_scope_begin(enc_builder_t *b);
void enc_scope_end(enc_builder_t *b);
/* The name index (builder_names.c).  The entry for a base name, created
 * when new; -1 on out-of-memory. */
int enc_name_entry(enc_builder_t *b, const char *name);
/* Room for `more` new names at once (a flat body's tile statements); none
 * when out of memory. */
void enc_reserve_names(enc_builder_t *b, int64_t more);
/* Whether a tensor was ever declared under name (live, out of scope, or
 * the compiler's own). */
bool enc_name_declared(const enc_builder_t *b, const char *name);
/* Tensor by name (innermost live declaration), -1 if none. */
int enc_find_tensor(const enc_builder_t *b, const char *name);
/* The same, with *slot a caller's cache of the name's entry (0: not yet
 * known): a name's entry in the builder's table never moves or goes, so
 * once found only its innermost declaration is read.  One slot per name
 * and builder. */
int enc_find_tensor_at(const enc_builder_t *b, const char *name, int *slot);

/* ---- access patterns ---- */
typedef enum { ENC_SL_ALL, ENC_SL_RANGE, ENC_SL_INDEX } enc_slice_kind_t;
typedef struct {
    enc_slice_kind_t kind;
    int64_t start, stop, step;    /* RANGE: NumPy start:stop:step, stop clipped */
    bool has_start, has_stop;     /* false = NumPy default */
} enc_slice_t;
#define ENC_ALL ((enc_slice_t){ENC_SL_ALL, 0, 0, 1, false, false})
#define ENC_RANGE(a, b) ((enc_slice_t){ENC_SL_RANGE, (a), (b), 1, true, true})
#define ENC_RANGE_STEP(a, b, s) ((enc_slice_t){ENC_SL_RANGE, (a), (b), (s), true, true})
#define ENC_INDEX(i) ((enc_slice_t){ENC_SL_INDEX, (i), 0, 1, true, false})

/* tensor[s0, s1, ...]; missing trailing dims are whole.  `field` names the
 * operand in messages (may be NULL). */
tir_ap_t enc_ap(enc_builder_t *b, int tensor, int nslices, const enc_slice_t *s,
                const char *field);
/* enc_ap's answer written into *out (no copy of the record) */
void enc_ap_into(enc_builder_t *b, int tensor, int nslices, const enc_slice_t *s,
                 const char *field, tir_ap_t *out);
tir_ap_t enc_ap_full(enc_builder_t *b, int tensor);
/* *out = enc_ap(...), through a caller-owned memo of its last two results
 * (one per operand text of a loop body): the access pattern depends only
 * on the tensor's shape, whether it is a tile, and the slices, so a body
 * tile declared anew each iteration, or a slice alternating between two
 * values, reuses it.  Same result and messages as enc_ap; m may be NULL. */
typedef struct {
    bool valid, tile;
    int nd, ns;
    int64_t shape[TIR_MAX_DIMS];
    enc_slice_t sl[TIR_MAX_DIMS];
    tir_ap_t ap;
    int itensor;                 /* iap is ap over this tensor interned (-1: none) */
    const tir_ap_t *iap;
} enc_ap_memo_entry_t;
typedef struct {
    enc_ap_memo_entry_t e[2];
    unsigned next;     /* the entry a miss replaces */
    unsigned hit[2];   /* the entries of the last two hits (enc_memo2_first) */
} enc_ap_memo_t;
/* Which of a two-entry memo's entries to try first, from the entries of
 * its last two hits (hit[0] the newest): the other one after two that
 * alternated (a loop body's slices of i % 2), else the last one again.
 * Only the order: either entry answering is the same answer. */
static inline unsigned enc_memo2_first(const unsigned hit[2])
{
    return (hit[0] ^ (hit[0] != hit[1])) & 1u;
}
static inline void enc_memo2_note(unsigned hit[2], unsigned e)
{
    hit[1] = hit[0];
    hit[0] = e;
}
void enc_ap_memo(enc_builder_t *b, enc_ap_memo_t *m, int tensor, int nslices,
                 const enc_slice_t *s, const char *field, tir_ap_t *out);
/* enc_ap_memo interned into the kernel (tir_ap_intern): the record interned
 * for the same tensor and slices last time, and for no slices the
 * tensor's whole access pattern interned once per tensor (a body tile's
 * operand in every op that names it).  NULL: failed (b->failed, same
 * message as enc_ap) or out of memory (b->failed not set). */
const tir_ap_t *enc_ap_memo_interned(enc_builder_t *b, enc_ap_memo_t *m, int tensor, int nslices,
                                     const enc_slice_t *s, const char *field);
/* enc_ap_memo_interned(b, NULL, ...): the same record and bookkeeping (for
 * no slices, the tensor's whole record kept), a new one's pass of the
 * operand check noted in b's check memo (enc_note_built). */
const tir_ap_t *enc_ap_interned(enc_builder_t *b, int tensor, int nslices, const enc_slice_t *s,
                                const char *field);
/* r, enc_ap's answer for a tensor declared through b (no dtype view or
 * reshape) interned just now, passes the operand check by construction:
 * noted in b's check memo (builder_memo.c), so the op naming it is not
 * checked again.  For operands seen once (a flat body's): in a loop the
 * memos answer anyway and the note would be only a cost. */
void enc_note_built(enc_builder_t *b, const tir_ap_t *r);
/* enc_ap_memo_interned's answer for no slices when the tensor's whole
 * access pattern is interned already (counted as its hit), else NULL:
 * then ask enc_ap_memo_interned. */
const tir_ap_t *enc_ap_full_interned(enc_builder_t *b, int tensor);
/* enc_ap over an HBM tensor viewed with another C-order shape (NKI
 * tensor.reshape): same element count; a tile is an error. */
tir_ap_t enc_ap_view(enc_builder_t *b, int tensor, int ndim, const int64_t *shape, int nslices,
                     const enc_slice_t *s, const char *field);
/* NKI .ap(): raw [step, count] pairs, outermost first, in elements. */
tir_ap_t enc_ap_raw(enc_builder_t *b, int tensor, int64_t offset, int ndim,
                    const int64_t pairs[][2], const char *field);
/* enc_ap_raw where view (0 or isa_dtype_t + 1) reads the tensor's bytes as
 * that dtype (NKI .ap(dtype=), tensor.view): the pattern then counts its
 * elements (tir_ap_tensor). */
tir_ap_t enc_ap_raw_view(enc_builder_t *b, int tensor, unsigned view, int64_t offset, int ndim,
                         const int64_t pairs[][2], const char *field);
tir_ap_t enc_ap_none(void);
/* A scalar operand by value (the builder interns its AP into the kernel). */
typedef struct {
    bool is_ap;
    double imm;
    tir_ap_t ap;
} enc_scalar_t;
enc_scalar_t enc_imm(double v);
enc_scalar_t enc_scalar_ap(tir_ap_t ap);
/* An op operand: ap interned into the builder's kernel (tir_ap_intern); on
 * out-of-memory the builder fails (enc_emit returns -1) and the result is
 * &tir_ap_none. */
const tir_ap_t *enc_in(enc_builder_t *b, tir_ap_t ap);
tir_scalar_t enc_scalar_in(enc_builder_t *b, enc_scalar_t s);
/* An op's rare fields interned the same way (tir_rare_intern). */
const tir_op_rare_t *enc_rare_in(enc_builder_t *b, const tir_op_rare_t *r);
/* The n bytes at offset off of op's rare record set to v: a copy of the
 * record, modified and interned (enc_rare_in); nothing when they are equal
 * already (an op that keeps a default keeps the shared record).  Every op
 * has its own record pointer, so an op built inside another's build (a
 * masked op's copy, a number operand's memset) cannot disturb it. */
void enc_rare_put(enc_builder_t *b, tir_op_t *op, size_t off, const void *v, size_t n);
/* One rare field of op set to v (a statement; several fields: copy once,
 * modify, enc_rare_in). */
#define ENC_RARE_SET(b, op, field, v)                                              \
    do {                                                                           \
        tir_op_rare_t ers_ = *(op)->rare;                                          \
        ers_.field = (v);                                                          \
        enc_rare_put((b), (op), offsetof(tir_op_rare_t, field), &ers_.field,       \
                     sizeof ers_.field);                                           \
    } while (0)
/* v for one of tir_op_t's int8_t fields (a caller's enumeration value):
 * out of range, the builder fails ("<path> (<op>): field '<field>': <v>
 * out of range", the path the op would get) and the result is -1.  Every
 * value that fits goes on to the validator, whose checks and messages are
 * the same as before the fields were narrowed. */
int8_t enc_field_i8(enc_builder_t *b, tir_opkind_t kind, int v, const char *field);

/* ---- the one append point ---- */
/* Validate `op` (path/name/core filled in here) and append it.  Returns
 * the op index or -1. */
int enc_emit(enc_builder_t *b, tir_op_t *op);

/* ---- typed builders (NKI argument order); each returns enc_emit() ---- */
int enc_load(enc_builder_t *b, tir_ap_t dst, tir_ap_t src);
int enc_store(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, bool rmw_add);
int enc_dma_copy(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int dge_mode, int oob_mode,
                 bool rmw_add);
/* NKI dma_copy with optional indirect sides: index.tensor = -1 means a
 * direct side.  An indirect src becomes INDIRECT_LOAD, an indirect dst
 * INDIRECT_SAVE (rmw_op ISA_ALU_ADD = scatter-add); both indirect is an
 * error.  rmw_op: ISA_ALU_BYPASS or ISA_ALU_ADD. */
typedef struct {
    tir_ap_t ap;                  /* for an indirect side: dim 0 = indirect dim */
    tir_ap_t index;
    int64_t index_bound;
} enc_dma_operand_t;
int enc_dma_copy_ex(enc_builder_t *b, const enc_dma_operand_t *dst, const enc_dma_operand_t *src,
                    int dge_mode, int oob_mode, int rmw_op, int qos);
/* enc_dma_copy_ex with register offsets (docs/kernel-format.md "Register-offset
 * (dynamic) DMA"): src_reg / dst_reg (0..63, -1 = none) move that side, which
 * must be HBM, by the register's value in elements at run time; direct
 * sides only. */
int enc_dma_copy_reg(enc_builder_t *b, const enc_dma_operand_t *dst, const enc_dma_operand_t *src,
                     int dge_mode, int oob_mode, int rmw_op, int qos, int src_reg, int dst_reg);
int enc_dma_transpose(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int naxes, const int *axes);
/* table: AP over the HBM table, dim 0 = the indirect dim (see tir.h). */
int enc_indirect_load(enc_builder_t *b, tir_ap_t dst, tir_ap_t table, tir_ap_t index,
                      int64_t index_bound, int oob_mode);
/* rmw_op: ISA_ALU_BYPASS (overwrite) or ISA_ALU_ADD (scatter-add). */
int enc_indirect_save(enc_builder_t *b, tir_ap_t table, tir_ap_t index, int64_t index_bound,
                      tir_ap_t src, int rmw_op, int oob_mode);
int enc_local_gather(enc_builder_t *b, tir_ap_t dst, tir_ap_t src_buffer, tir_ap_t index,
                     int num_elem_per_idx, int num_valid_indices);
int enc_gather_flattened(enc_builder_t *b, tir_ap_t dst, tir_ap_t data, tir_ap_t indices);
/* engine: ISA_ENG_DVE, ISA_ENG_POOL or ISA_ENG_UNASSIGNED */
int enc_memset(enc_builder_t *b, tir_ap_t dst, double value, int engine);
int enc_broadcast_partition(enc_builder_t *b, tir_ap_t dst, tir_ap_t src);
int enc_stream_shuffle(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, const uint8_t mask[32]);
int enc_load_tensor_to_register(enc_builder_t *b, tir_ap_t src, int reg);

/* flags: TIR_F_ACCUMULATE | TIR_F_ACC_AUTO (NKI accumulate=None) |
 * TIR_F_TRANSPOSE (NKI is_transpose: stationary = data, moving = identity,
 * dst = stationary.T bit-exact) | TIR_F_ONEZERO_* | TIR_F_DOUBLE_ROW */
int enc_matmul(enc_builder_t *b, tir_ap_t dst, tir_ap_t stationary, tir_ap_t moving,
               unsigned flags);
/* flags as the target takes them: NKI's is_transpose is the PE's transpose
 * mode from NeuronCore-v3; on trn1 (v2) it only tags the instruction for
 * the profiler, so TIR_F_TRANSPOSE is dropped there (a plain matmul) */
unsigned enc_matmul_flags(const enc_builder_t *b, unsigned flags);
int enc_matmul_mx(enc_builder_t *b, tir_ap_t dst, tir_ap_t stationary, tir_ap_t moving,
                  tir_ap_t stationary_scale, tir_ap_t moving_scale, unsigned flags);
int enc_matmul_sparse(enc_builder_t *b, tir_ap_t dst, tir_ap_t stationary, tir_ap_t moving,
                      tir_ap_t tags, unsigned compress_ratio, unsigned flags);
int enc_transpose(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int engine);
/* bias: enc_ap_none() when absent */
int enc_activation(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int func, enc_scalar_t scale,
                   tir_ap_t bias);
int enc_activation_reduce(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int func,
                          enc_scalar_t scale, tir_ap_t bias, int reduce_op, tir_ap_t reduce_res);
int enc_activate2(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int op0, double imm0, int op1,
                  double imm1, int func, tir_ap_t bias);
int enc_tensor_tensor(enc_builder_t *b, tir_ap_t dst, tir_ap_t in0, tir_ap_t in1, int op);
int enc_tensor_scalar(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int op0, enc_scalar_t s0,
                      bool reverse0, int op1, enc_scalar_t s1, bool reverse1);
int enc_scalar_tensor_tensor(enc_builder_t *b, tir_ap_t dst, tir_ap_t in0, int op0,
                             enc_scalar_t scalar, int op1, tir_ap_t in1);
/* axes: NKI numbering, 1 = first free axis */
int enc_tensor_reduce(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int op, int naxes,
                      const int *axes, bool negate, bool keepdims);
int enc_tensor_partition_reduce(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int op);
int enc_tensor_copy(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int engine);
int enc_tensor_tensor_scan(enc_builder_t *b, tir_ap_t dst, tir_ap_t in0, tir_ap_t in1,
                           enc_scalar_t initial, int op0, int op1);
int enc_iota(enc_builder_t *b, tir_ap_t dst, int64_t offset, int64_t channel_multiplier,
             int npattern, const int64_t *steps);
int enc_affine_select(enc_builder_t *b, tir_ap_t dst, tir_ap_t on_true, int64_t offset,
                      int64_t channel_multiplier, int npattern, const int64_t *steps, int cmp,
                      double on_false_value);
int enc_max8(enc_builder_t *b, tir_ap_t dst, tir_ap_t src);
/* NKI bn_stats: dst [P, 6] = (count, mean, var*count) of the even, then the
 * odd elements of data [P, <= 512]; bn_aggr: dst [P, 2] = (mean, variance)
 * of data's (count, mean, var*count) groups.  DVE. */
int enc_bn_stats(enc_builder_t *b, tir_ap_t dst, tir_ap_t data);
int enc_bn_aggr(enc_builder_t *b, tir_ap_t dst, tir_ap_t data);
/* NKI range_select: dst = (i+range_start cmp0 bound0) && (i+range_start cmp1
 * bound1) ? on_true : on_false_value (i = free index); reduce_op (max) of dst
 * into the DVE accumulator per reduce_cmd, written to reduce_res unless it is
 * enc_ap_none().  bound0/bound1 [P,1] fp32. */
int enc_range_select(enc_builder_t *b, tir_ap_t dst, tir_ap_t on_true, int cmp0, int cmp1,
                     tir_ap_t bound0, tir_ap_t bound1, int reduce_cmd, tir_ap_t reduce_res,
                     int reduce_op, int64_t range_start, double on_false_value);
/* NKI select_reduce: dst = predicate (xor reverse_pred) ? on_true :
 * on_false (number or [P,1] tile); optional max reduce as range_select. */
int enc_select_reduce(enc_builder_t *b, tir_ap_t dst, tir_ap_t predicate, tir_ap_t on_true,
                      enc_scalar_t on_false, tir_ap_t reduce_res, int reduce_cmd, int reduce_op,
                      bool reverse_pred);
int enc_find_index8(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, tir_ap_t vals);
/* dst_idx: enc_ap_none() for the unfused form */
int enc_match_replace8(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, tir_ap_t vals, double imm,
                       tir_ap_t dst_idx);
/* on_false: a tile AP, or enc_ap_none() to use on_false_value */
int enc_select(enc_builder_t *b, tir_ap_t dst, tir_ap_t pred, tir_ap_t on_true,
               tir_ap_t on_false, double on_false_value);
int enc_dropout(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, enc_scalar_t prob);
int enc_quantize_mx(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, tir_ap_t scale);
int enc_core_barrier(enc_builder_t *b, unsigned cores, int engine, tir_ap_t data);
int enc_sendrecv(enc_builder_t *b, tir_ap_t dst, tir_ap_t src, int peer);

/* ---- random numbers (encoder/builder_nki.c; docs/semantics.md "Random
 * numbers").  engine: ISA_ENG_UNASSIGNED = NKI's default (rng: Vector,
 * rand_get_state / rand_set_state: GpSimd). ---- */
int enc_rng(enc_builder_t *b, tir_ap_t dst, int engine);
int enc_rand2(enc_builder_t *b, tir_ap_t dst, enc_scalar_t min, enc_scalar_t max);
int enc_rand_get_state(enc_builder_t *b, tir_ap_t dst, int engine);
int enc_rand_set_state(enc_builder_t *b, tir_ap_t src_seeds, int engine);
int enc_set_rng_seed(enc_builder_t *b, tir_ap_t src_seeds);
/* NKI dma_compute with reduce_op add: dst = sum srcs[i] * scales[i] (fp32
 * in the DMA engine; 1..16 direct sources; several need a float32 dst) */
#define ENC_DMA_COMPUTE_MAX_SRCS 16
int enc_dma_compute(enc_builder_t *b, tir_ap_t dst, const tir_ap_t *srcs, const double *scales,
                    int n);

/* ---- accumulate=None (encoder/builder_acc.c; called by enc_emit) ---- */
/* Replace TIR_F_ACC_AUTO by NKI's choice for this op (0, or -1 + sticky
 * error); enc_acc_note() records an appended op's PSUM writes. */
int enc_acc_resolve(enc_builder_t *b, tir_op_t *op);
int enc_acc_note(enc_builder_t *b, const tir_op_t *op);
void enc_acc_free(enc_builder_t *b);
/* The next emitted op is a masked matmul that writes part of `declared`
 * (an interned AP of the same tensor): resolve its accumulate=None and
 * record its region as `declared`, the dst the kernel names, so masked and
 * unmasked members of one accumulation group meet (fj_mask_mm.c).  One-shot:
 * enc_emit clears it; NULL clears it too. */
void enc_set_acc_dst(enc_builder_t *b, const tir_ap_t *declared);

/* ---- validation (encoder/validate.c) ---- */
/* Check one op against the kernel's tensors and the target.  Message:
 * "<path> (<op>): field '<field>': <what>" (seed messages verbatim). */
int enc_validate_op(const tir_kernel_t *k, const tpb_target_t *target, const tir_op_t *op,
                    tpb_err_t *err);
/* The bounds and tile-structure checks an operand passed (direct-mapped,
 * keyed by its record): an unrolled loop names the same interned records
 * op after op, and the check reads only the record, the tensor it names
 * (never changed once declared), the target, the indirect bound and
 * whether the op is a direct DMA (which only allows more: `any` = it
 * passed as another op's operand too).  Only passes are kept, so every
 * rejection is found and worded as without the memo.  Valid for one
 * kernel and target (reset when either differs). */
#define ENC_CHECK_MEMO 256
typedef struct enc_check_memo {
    const tir_kernel_t *k;
    const tpb_target_t *tg;
    struct { const tir_ap_t *ap; int64_t bound; bool any; } e[ENC_CHECK_MEMO];
    long hits;                    /* answers given from the memo (tests) */
    long quick;                   /* ops enc_dma_quick_pass passed (tests) */
    /* A tensor's whole record (the owner's tinfo full_ap) passes however
     * long ago it did: the 3 000 tiles of a kernel loaded all before any
     * is stored evict each other's entries above.  Bit t of whole: tensor
     * t's passed with bound 0 for any op; owner NULL: not kept. */
    const enc_builder_t *owner;
    uint64_t *whole;
    int nwhole;                   /* words of whole */
} enc_check_memo_t;
/* The memo's pass of `from` also for `to`: the same access pattern over
 * a tensor of the same kind and shape (all check_ap reads of it; a loop's
 * next instance of a tile), checked here; nothing when they differ or
 * `from` has no pass in m for kernel k and target tg. */
void enc_check_memo_alias(enc_check_memo_t *m, const tir_kernel_t *k, const tpb_target_t *tg,
                          const tir_ap_t *from, const tir_ap_t *to);
/* Record a (of m's kernel and target) as passing the operand check with
 * no indirect bound: for any op (`any`) or for a direct DMA only; whole: a
 * is its tensor's whole record (the owner's full_ap).  Only for a record
 * known to pass (builder_memo.c note_built); nothing when out of memory. */
void enc_check_memo_pass(enc_check_memo_t *m, const tir_ap_t *a, bool any, bool whole);
/* True when op is a plain direct load, store or dma_copy that passes
 * validation, found without the full checks (validate_int.h
 * enc_dma_quick_pass); false: nothing decided. */
bool enc_validate_quick(const tir_kernel_t *k, const tpb_target_t *target, const tir_op_t *op,
                        enc_check_memo_t *m);
/* enc_validate_op through memo m (NULL: none) */
int enc_validate_op_memo(const tir_kernel_t *k, const tpb_target_t *target, const tir_op_t *op,
                         enc_check_memo_t *m, tpb_err_t *err);
/* Bitmask (1 << isa_engine_t) of the engines that may run an op kind. */
unsigned enc_legal_engines(tir_opkind_t kind);
/* The NKI argument name of an op's operand slot, for messages:
 * slot 0..3 = src[i], -1 = dst, -2 = dst2, -3 = index, -4 = bias. */
const char *enc_operand_name(tir_opkind_t kind, int slot);
/* Op-specific checks of the accumulator and sequence family
 * (encoder/validate_seq.c); 0 for other kinds. */
int enc_validate_seq(const tir_kernel_t *k, const tir_op_t *op, tpb_err_t *err);

#endif
