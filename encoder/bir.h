/* bir.h - backend IR: the program between tile-IR lowering and emission.
 *
 * A module holds functions (one per core today: "main"), a function holds
 * basic blocks, a block holds instructions in program order.  Every BIR
 * instruction is one ISA instruction (isa_inst_t, fields final except the
 * synchronisation header, which the scheduler fills) plus what the later
 * passes need: the BIR opcode (the L1 "InstructionType"), the engines it may
 * run on, the memory it reads and writes (for dependencies), its DMA queue,
 * and the tile-IR op it came from (for the debug sidecar).
 *
 * Memory locations (bir_mloc_t) are the allocated homes of tile-IR tensors:
 * HBM byte ranges, SBUF/PSUM partition ranges x per-partition byte ranges. */
#ifndef TPB_BIR_H
#define TPB_BIR_H

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "diag.h"
#include "isa.h"

/* BIR opcodes (L1 InstructionType ordinals).  The values the reference notes
 * name are theirs (seeds 000/001/004): InstLoad = 19, DMACopy = 32,
 * GenericIndirectLoad = 42, GenericIndirectSave = 44, TensorLoad = 75,
 * TensorStore = 76, CoreBarrier = 87, Max = 88, MaxIndex = 89,
 * MatchReplace = 90, MaxIndexAndMatchReplace = 91, QuantizeMx = 96,
 * InstLoop = 105.  The rest are numbered here, in the gaps (docs/compiler.md,
 * "Backend IR").  A DMA's trigger carries its op's L1 opcode (InstLoad for a
 * load, DMACopy for store/dma_copy/dma_transpose/broadcast and the scatter-add
 * RMW, GenericIndirectLoad/Save for gather/scatter); its descriptors are the
 * pseudo instructions 60/61.  12 and 23 are unused: Activate2 is an
 * Activation with is_activate2, ScalarTensorTensor a TensorScalarPtr with
 * is_stt (the notes' mode flags; bir_codegen_isa_op).  BIR(ID, value, name) */
#define BIR_OPCODES(X)                                                       \
    X(LOAD_WEIGHTS, 1, "LoadWeights") X(MATMULT, 2, "Matmult")               \
    X(LOAD_WEIGHTS_MX, 3, "LoadWeightsMx") X(MATMULT_MX, 4, "MatmultMx")     \
    X(LOAD_WEIGHTS_SPARSE, 5, "LoadWeightsSparse")                           \
    X(MATMULT_SPARSE, 6, "MatmultSparse")                                    \
    X(ACTIVATION, 10, "Activation")                                          \
    X(ACTIVATION_ACC, 11, "ActivationAccumulationOp")                        \
    X(INST_LOAD, 19, "InstLoad")                                             \
    X(TENSOR_TENSOR, 20, "TensorTensor") X(TENSOR_SCALAR, 21, "TensorScalar")\
    X(TENSOR_SCALAR_PTR, 22, "TensorScalarPtr")                              \
    X(TENSOR_REDUCE, 24, "TensorReduce")                                     \
    X(PARTITION_REDUCE, 25, "TensorPartitionReduce")                         \
    X(TENSOR_COPY, 26, "TensorCopy") X(TENSOR_SCAN, 27, "TensorTensorScan")  \
    X(TRANSPOSE32, 28, "Transpose32")                                        \
    X(COPY_PREDICATED, 29, "CopyPredicated")                                 \
    X(BN_STATS, 30, "BNStats") X(BN_AGGR, 31, "BNAggr")                     \
    X(RANGE_SELECT, 33, "RangeSelect") X(SELECT_REDUCE, 34, "SelectReduce")  \
    X(DMA_COPY, 32, "DMACopy")                                               \
    X(MEMSET, 40, "Memset") X(IOTA, 41, "Iota")                              \
    X(GENERIC_INDIRECT_LOAD, 42, "GenericIndirectLoad")                      \
    X(DROPOUT, 43, "Dropout")                                                \
    X(GENERIC_INDIRECT_SAVE, 44, "GenericIndirectSave")                      \
    X(AFFINE_SELECT, 45, "AffineSelect")                                     \
    X(STREAM_SHUFFLE, 48, "StreamShuffle") X(INDIRECT_COPY, 49, "IndirectCopy") \
    X(POOL_GATHER, 50, "PoolGather")                                         \
    X(TS_CUMULATIVE, 35, "TensorScalarCacheCumulative")                      \
    X(TS_REDUCE, 36, "TensorScalarReduce")                                   \
    X(SEQUENCE_BOUNDS, 51, "GetSequenceBounds")                              \
    X(NONZERO_WITH_COUNT, 52, "NonzeroWithCount") X(TOPK, 53, "TopK")        \
    X(EXPONENTIAL, 37, "Exponential")                                        \
    X(DMA_DESC, 60, "PseudoDmaDirect2d")                                     \
    X(DMA_INDIRECT_DESC, 61, "PseudoDmaIndirect2d")                          \
    X(DMA_TRIGGER, 62, "DMATrigger")                                         \
    X(TENSOR_LOAD, 75, "TensorLoad") X(TENSOR_STORE, 76, "TensorStore")      \
    X(NOP, 80, "Nop") X(HALT, 81, "Halt")                                    \
    X(REG_SET, 82, "RegSet") X(REG_ADD, 83, "RegAdd")                        \
    X(BRANCH_CMP, 84, "BranchCmp")                                           \
    X(CORE_BARRIER, 87, "CoreBarrier")                                       \
    X(MAX, 88, "Max") X(MAX_INDEX, 89, "MaxIndex")                           \
    X(MATCH_REPLACE, 90, "MatchReplace")                                     \
    X(MAX_INDEX_MATCH_REPLACE, 91, "MaxIndexAndMatchReplace")                \
    X(QUANTIZE_MX, 96, "QuantizeMx")                                         \
    X(INST_LOOP, 105, "InstLoop")                                            \
    X(RNG, 110, "Rng") X(RAND2, 111, "Rand2")                                \
    X(RAND_GET_STATE, 112, "RandGetState")                                   \
    X(RAND_SET_STATE, 113, "RandSetState") X(SET_RNG_SEED, 114, "SetRngSeed")  \
    X(REG_MOVE, 116, "RegMove")  \
    X(INLINE_ASM, 117, "InlineAsm")                                          \
    X(REDUCE, 38, "Reduce")

typedef enum {
#define X(id, v, n) BIR_##id = v,
    BIR_OPCODES(X)
#undef X
} bir_opcode_t;

const char *bir_opcode_name(bir_opcode_t o);

/* ---- memory locations ---- */
typedef struct {
    int tensor;              /* tile-IR tensor index */
    unsigned space;          /* ISA_SPACE_SBUF / PSUM / HBM */
    uint64_t addr;           /* HBM: byte address; SBUF/PSUM: byte offset in each partition */
    uint64_t bytes;          /* HBM: total bytes; SBUF/PSUM: bytes per partition */
    unsigned partitions;     /* SBUF/PSUM: partitions used (from partition 0) */
    int first_use, last_use; /* tile-IR op index range (liveness); -1 = never used */
    unsigned rot_buf, rot_nbuf; /* rotating tile: buffer rot_buf of rot_nbuf (0 = not rotated) */
} bir_mloc_t;

/* One memory range an instruction touches (a conservative bounding box).
 * Packed into 16 bytes (eight of these sit in every BIR instruction), the
 * members in their original order (positional initialisers still work):
 * partitions are at most 128 (checked by the lowering); byte addresses
 * are below 2^48 (HBM addresses are at most 2^40 elements of at most 8
 * bytes past the base; explicit-dependency tokens are op indices).  A
 * bound the lowering computes as "everything" (BIR_ACCESS_END) or that
 * wraps below zero keeps its order against every real address after the
 * truncation to 48 bits, so overlap answers are unchanged.  Cast lo/hi to
 * uint64_t before arithmetic: gcc computes in 48 bits, clang in 64. */
typedef struct __attribute__((packed, aligned(8))) {
    uint64_t space : 8;      /* ISA_SPACE_* */
    uint64_t p0 : 8, p1 : 8; /* partitions [p0, p1) (HBM: 0, 1) */
    uint64_t lo : 48, hi : 48; /* bytes [lo, hi) in the partition / in HBM */
    uint64_t write : 8;      /* 0 or 1 */
} bir_access_t;
/* The largest byte bound an access can hold ("to the end of the space"). */
#define BIR_ACCESS_END ((UINT64_C(1) << 48) - 1)

#define BIR_MAX_ACCESS 8
/* Pseudo memory space of explicit dependencies (a kernel's "deps"): op i's
 * instructions write [i, i+1) in it, a dependent op's instructions read it,
 * so the ordinary overlap rule orders them (encoder/lower.c). */
#define BIR_SPACE_DEP 4

/* A further affine predicate of a predicated instruction (a 2nd.. PredExt;
 * fill and keep are the first's): the PredExt fields, compactly. */
typedef struct {
    int32_t offset;
    int16_t cm;
    int16_t step[4];
    uint8_t cmp, rev_pred;
} bir_pred_t;

#define BIR_MAX_PRED_MORE (ISA_MAX_PREDEXT - 1)

/* Longest instruction name + 1 (names are cut to fit, as when they were an
 * inline char[64]). */
#define BIR_NAME_LEN 64

/* The parts of an instruction that few instructions have, out of line (the
 * module's arena, bir_inst_rare): kept in every instruction they were half
 * of its bytes after the ISA body. */
typedef struct {
    isa_fmt_PREDEXT_t pred;  /* has_pred: the PredExt prefix */
    uint8_t npred_more;      /* further PredExt prefixes, ANDed with pred (NKI masks) */
    bir_pred_t pred_more[BIR_MAX_PRED_MORE];
    /* setReplicaGroups (seed 002 §6): a collective's DMA carries the
     * replica group of every rank (-1: in none); nreplica ranks, 0 = not
     * a collective DMA */
    uint8_t nreplica;
    int8_t replica[8];
    /* codegenLocalReduceOp (seed 001 s.5.1): a Reduce (38) trigger's
     * setop (ISA ALU op), setKind (BIR_RKIND_*) and setLocal; 0 otherwise */
    uint8_t red_op, red_kind;
    bool red_local;
} bir_rare_t;

/* The synchronisation header (ISA format HDR) of a BIR instruction, each
 * field in the narrowest type that holds every value the passes write
 * (wait_val: 32 bits; upd_val: 16; the semaphore ids, below BIR_MAX_SEMS,
 * and the 4- and 3-bit fields: 8; the flags: 1), 12 bytes where
 * isa_sync_t (a 32-bit member per field) takes 44.  Member names are
 * isa_sync_t's; bir_sync_expand / bir_sync_pack convert. */
typedef struct {
    uint32_t wait_val;
    uint16_t upd_val;
    uint8_t wait_sem, upd_sem;
    uint8_t wait_reg, upd_op, upd_core;
    bool wait_en : 1, upd_en : 1, upd_at_read : 1, upd_remote : 1;
} bir_sync_t;

static inline void bir_sync_expand(const bir_sync_t *h, isa_sync_t *out)
{
    *out = (isa_sync_t){.wait_en = h->wait_en, .upd_en = h->upd_en,
                        .upd_at_read = h->upd_at_read, .upd_remote = h->upd_remote,
                        .wait_reg = h->wait_reg, .wait_sem = h->wait_sem,
                        .wait_val = h->wait_val, .upd_sem = h->upd_sem, .upd_op = h->upd_op,
                        .upd_core = h->upd_core, .upd_val = h->upd_val};
}
/* x's fields within their ISA widths (a decoded or encodable header,
 * isa/fields.def HDR: no wider than bir_sync_t's) into h. */
static inline void bir_sync_pack(const isa_sync_t *x, bir_sync_t *h)
{
    *h = (bir_sync_t){.wait_val = x->wait_val, .upd_val = (uint16_t)x->upd_val,
                      .wait_sem = (uint8_t)x->wait_sem, .upd_sem = (uint8_t)x->upd_sem,
                      .wait_reg = (uint8_t)x->wait_reg, .upd_op = (uint8_t)x->upd_op,
                      .upd_core = (uint8_t)x->upd_core, .wait_en = x->wait_en != 0,
                      .upd_en = x->upd_en != 0, .upd_at_read = x->upd_at_read != 0,
                      .upd_remote = x->upd_remote != 0};
}

/* The ISA part of a BIR instruction: the opcode and the sync header inline,
 * the body out of line, exactly isa_formats[fmt].struct_size bytes of the
 * module's arena (fields stay 32-bit: the emitter's range checks and their
 * messages are unchanged).  `f` is NULL until a body is allocated
 * (bir_inst_body_new; lw_inst does it for the lowering).  Bodies are
 * shared: a struct copy shares its original's, and the lowering's
 * instructions share equal bodies (bir_inst_share), so code that changes
 * the body of an instruction that may share it first takes a fresh one
 * (bir_inst_body_own) or replaces it (bir_inst_body_share).
 * bir_isa_expand rebuilds the whole isa_inst_t the ISA library takes. */
typedef struct {
    uint8_t op;              /* isa_op_t (ISA_OP_COUNT < 255, asserted in bir.c) */
    uint8_t l2;
    bir_sync_t sync;
    isa_body_t *f;
} bir_isa_t;

/* 96 bytes (asserted in bir.c; 152 when the fields were ints and the sync
 * header isa_sync_t): the fields the scheduling passes read for every
 * instruction come first, in one cache line -- kernels unroll to 10^5+
 * instructions and each pass over them is bound by memory traffic; names,
 * source and rare parts (the sidecars, the error messages) in the second. */
typedef struct {
    uint8_t opc;             /* bir_opcode_t: L1 */
    uint8_t engines;         /* engines it may run on (subset of the ISA bitmap; bit
                                1 << isa_engine_t, ISA_ENG_COUNT <= 8) */
    int8_t engine;           /* isa_engine_t after scheduling */
    uint8_t nacc;            /* accesses at acc (at most BIR_MAX_ACCESS) */
    int16_t queue;           /* DMA queue id (descriptors, triggers), else -1 */
    bool is_dma_desc;        /* descriptor: queued, not executed by the engine */
    bool has_pred;           /* emit a PredExt prefix before it */
    bool preset_wait;        /* its wait is set by the lowering: the scheduler's waits go to Nops */
    bool preset_upd;         /* its update is set by the lowering (a remote semaphore):
                                the scheduler keeps it and does not count it as a producer */
    uint8_t loop_role;       /* BIR_LOOP_* */
    uint8_t spill;           /* BIR_SPILL_SAVE / _RELOAD: a spill transfer (its own DMA
                                queues, encoder/spill.c); 0 otherwise */
    bool is_activate2;       /* Activation: the notes' setIsActivate2 (ISA Activate2) */
    bool is_stt;             /* TensorScalarPtr: set_is_scalar_tensor_tensor (ISA
                                ScalarTensorTensor) */
    uint8_t dge_compute;     /* DMA descriptor / trigger: bir_dge_compute_t */
    bool oom;                /* an arena allocation for it failed (name, accesses, rare
                                parts): bir_block_append/insert refuse it */
    int dma_group;           /* descriptors and their trigger share a group id, else -1 */
    int tir_op;              /* source op index, -1 for compiler-made instructions */
    int loop;                /* rolled loop (bir_module_t.loops) it belongs to, -1 */
    uint8_t acc_room;        /* acc points at room for this many accesses reserved with
                                the name and body (bir_inst_name_body); 0: none, acc is
                                NULL or a list extended by bir_inst_access */
    uint8_t acc_key;         /* 1 + the ISA op whose m->acc_room sized the room (the op
                                before a mode setter changes it); 0: not from
                                bir_inst_name_body, nothing learned from it */
    bool body_shared;        /* isa.f may be another instruction's too (bir_inst_share,
                                bir_inst_body_share found or remembered it): write a
                                copy (bir_inst_body_share); false: in's own, as every
                                body bir_inst_body_new / _own makes */
    bir_isa_t isa;           /* op, sync header (filled by the scheduler), body */
    const bir_access_t *acc; /* nacc accesses in the module's arena (bir_inst_access),
                                NULL when none (or the unused room, acc_room); shared by
                                copies of the instruction and by equal lists
                                (bir_inst_share), never written once shared (a copy made
                                while a room is being filled must not be given accesses
                                too) */
    const char *name;        /* instruction name: "<op name>" or "<op name>.<k>", at most
                                BIR_NAME_LEN - 1 bytes; in the module's arena
                                (bir_inst_set_name), a string literal, or (an op's
                                first instruction, lw_inst) the tile-IR op's own name */
    const char *src;         /* source path: the tile-IR op's path (the kernel outlives
                                the module), "" for compiler-made instructions */
    const char *op_kind;     /* tile-IR op kind name ("matmul"), or "sync" */
    const bir_rare_t *rare;  /* predicates, replica groups, reduce fields: NULL when all
                                are zero (most instructions); read with bir_rare() */
} bir_inst_t;

/* The zero body: what bir_body() reads for an instruction without one
 * (Nops and other bodiless instructions the passes make). */
extern const isa_body_t bir_body_none;
static inline const isa_body_t *bir_body(const bir_inst_t *in)
{
    return in->isa.f ? in->isa.f : &bir_body_none;
}

/* The zero record: what bir_rare() reads for an instruction without one. */
extern const bir_rare_t bir_rare_none;
static inline const bir_rare_t *bir_rare(const bir_inst_t *in)
{
    return in->rare ? in->rare : &bir_rare_none;
}

/* DgeComputeOp of a DMA (the notes' BIR enum; the scatter-add RMW is add).
 * The descriptors' wire `compute` field is one bit (ISA_DMAOP_*: bypass 0,
 * add 1); codegen maps the BIR value to it (bir_dge_compute_wire). */
typedef enum {
    BIR_DGE_COMPUTE_BYPASS = 0,
    BIR_DGE_COMPUTE_ADD = 2,
} bir_dge_compute_t;

/* setKind of a Reduce: the collective whose local reduce step it is */
#define BIR_RKIND_NONE 0
#define BIR_RKIND_ALL_REDUCE 1
#define BIR_RKIND_REDUCE_SCATTER 2
const char *bir_rkind_name(int kind);   /* "all_reduce", "reduce_scatter", "none" */

/* bir_inst_t.spill: a transfer made by SBUF spilling (encoder/spill.c). */
#define BIR_SPILL_SAVE 1     /* SBUF tile -> its HBM spill slot */
#define BIR_SPILL_RELOAD 2   /* spill slot -> SBUF */

/* Roles in a rolled loop (encoder/roll.c, docs/compiler.md "Rolled loops"). */
#define BIR_LOOP_BODY 1      /* an instruction of the rolled body */
#define BIR_LOOP_HEAD_END 2  /* last head instruction of its engine: the body starts
                                at the next pc (the branch-hint target) */
#define BIR_LOOP_BACK 3      /* the back branch: BranchCmp to that target */
#define BIR_LOOP_SKIP 4      /* a dynamic loop's forward branch to its exit label */
#define BIR_LOOP_GUARD 5     /* BIR_LOOP_SKIP that is also the last head instruction */
#define BIR_LOOP_EXIT 6      /* first instruction of its engine at the exit label */

/* A rolled loop: the InstLoop (105) marker at `marker`, its body the next
 * instructions up to `end` (heads, body, tails).  target_pc: per engine,
 * the pc the back branch jumps to, found by the COLLECT pass. */
typedef struct {
    char path[96];
    int64_t trips;           /* iterations executed by the rolled code */
    int64_t peeled;          /* iterations emitted unrolled before it */
    int unroll;              /* source iterations per rolled iteration */
    int marker, end;
    bool dynamic;            /* dynamic_range: trips/peeled are the compile-time guess */
} bir_loop_t;

typedef struct {
    char name[32];
    bir_inst_t *insts;
    int ninsts, cap;
    tpb_spare_t *spare;      /* NULL, or where the array's first mapping comes from
                                (bir_module_use_spare) */
} bir_block_t;

typedef struct {
    char name[32];
    bir_block_t *blocks;
    int nblocks;
} bir_function_t;

/* A DMA queue of one core: issued by one engine, one completion semaphore. */
typedef struct {
    int id;
    char name[32];           /* "qSyncIO0" */
    int engine;              /* issuing engine */
    int semaphore;
    int transfers;           /* triggers issued on it */
} bir_queue_t;

#define BIR_MAX_QUEUES 24   /* SP's 16 rings + 2 for each other issuing engine */
#define BIR_MAX_SEMS 48   /* engines, queues and up to 8 collective slots */
/* Collective semaphore slot s of a core is semaphore BIR_COLL_SEM0 + s, right
 * after the five engine semaphores (the same id on every core, so a peer can
 * name it in a remote update); the queue semaphores follow them. */
#define BIR_COLL_SEM0 5

typedef struct {
    int id;
    char name[32];           /* engine name or queue name */
} bir_sem_t;

typedef struct {
    int core;
    bir_function_t *funcs;
    int nfuncs;
    bir_mloc_t *mlocs;       /* one per tile-IR tensor (same index) */
    int nmlocs;
    bir_mloc_t *op_scratch;  /* per tile-IR op: scratch tile (bytes 0 = none); NULL
                                when no op has one */
    int nops;                /* op_scratch's length (tpb_array_zalloc'ed) */
    int nscratch;            /* op_scratch records with bytes != 0: when 0, passes skip
                                reading the array (its untouched zero pages each cost a
                                page fault to read) */
    int ident_tile;          /* the shared identity's SBUF tile (enc_ident_tile), found by
                                the allocator's pass over the tensors; -1: none (or not
                                allocated yet) */
    int sbuf_fail_op;        /* SBUF placement failed: the first use (op index) of the tile
                                it failed at, the pressure point spilling starts from
                                (encoder/spill.c); -1: none */
    bir_queue_t queues[BIR_MAX_QUEUES];
    int nqueues;
    bir_sem_t sems[BIR_MAX_SEMS];
    int nsems;
    int next_dma_group;
    bir_loop_t *loops;       /* rolled loops (encoder/roll.c) */
    int nloops;
    int coll_sems;           /* collective semaphore slots (ids 5 .. 5+coll_sems-1), 0 = none */
    tpb_spare_t *spare;      /* bir_module_use_spare: NULL, or the job's spare mappings */
    struct bir_share *share; /* bir_inst_share's recent distinct bodies and access lists
                                (made on its first call; NULL: none yet, or out of memory) */
    tpb_arena_t arena;       /* the instructions' names (exact-length copies), ISA bodies
                                and rare parts; live as long as the module */
    isa_body_t oom_body;     /* where an instruction's body writes go when its arena
                                body could not be allocated (the instruction is refused) */
    uint8_t acc_room[ISA_OP_COUNT]; /* accesses bir_inst_name_body reserves for an ISA op
                                (as built, before mode setters): the most one
                                instruction of it has needed so far */
} bir_module_t;

int bir_module_init(bir_module_t *m, int core, int ntensors, tpb_err_t *err);
/* Let the module's large blocks (its arena's chunks, its blocks'
 * instruction arrays, the synchronise pass's pool, the emitter's cache) be
 * taken from the job's spare mappings s (spare.h); NULL: mapped fresh. */
void bir_module_use_spare(bir_module_t *m, tpb_spare_t *s);
void bir_module_free(bir_module_t *m);
/* The main function's single block (created by init). */
static inline bir_block_t *bir_main_block(bir_module_t *m) { return &m->funcs[0].blocks[0]; }
/* Append a copy of *in; returns its index or -1 (out of memory, err set).
 * An instruction built in b's next slot (bir_block_next) is committed where
 * it is, without the copy. */
int bir_block_append_grow(bir_block_t *b, const bir_inst_t *in, tpb_err_t *err);
static inline int bir_block_append(bir_block_t *b, const bir_inst_t *in, tpb_err_t *err)
{
    /* built in its slot (the lowering's instructions): committed without a call */
    if (b->ninsts < b->cap && in == &b->insts[b->ninsts] && !in->oom)
        return b->ninsts++;
    return bir_block_append_grow(b, in, err);   /* a copy, room made, or refused */
}
/* The slot right after b's last instruction, room made for it (NULL when out
 * of memory, err set), to build an instruction in place; bir_block_append
 * of it commits it.  Until then nothing else may be appended or inserted
 * into b (that would overwrite or move the slot); a slot left unappended is
 * simply reused by the next one. */
bir_inst_t *bir_block_next_grow(bir_block_t *b, tpb_err_t *err);
/* Room for at least n instructions in b (an estimate of what a pass will
 * append: one allocation instead of a doubling series of copies, and a
 * large block in huge pages from the start); never shrinks.  -1 when out
 * of memory (err set; b unchanged). */
int bir_block_reserve(bir_block_t *b, int n, tpb_err_t *err);
static inline bir_inst_t *bir_block_next(bir_block_t *b, tpb_err_t *err)
{
    return b->ninsts < b->cap ? &b->insts[b->ninsts] : bir_block_next_grow(b, err);
}
/* Set in->name to an arena copy of s (cut to BIR_NAME_LEN - 1 bytes); false
 * when out of memory (in->oom is then set, which append/insert refuse). */
bool bir_inst_set_name(bir_module_t *m, bir_inst_t *in, const char *s);
/* bir_inst_set_name(s's first n bytes, n < BIR_NAME_LEN) and
 * bir_inst_body_new in one arena block: room for m->acc_room[op] accesses
 * (in->acc, in->acc_room), the name, then the body at the block's end (a mode setter still grows it in place).  Out of memory: as
 * those two (in->oom set, the body is m->oom_body, no room). */
bool bir_inst_name_body(bir_module_t *m, bir_inst_t *in, const char *s, size_t n);
/* bir_inst_name_body with the name s[0..n) followed by tail[0..t) (the
 * caller keeps n + t within BIR_NAME_LEN - 1): no joined copy first. */
bool bir_inst_name_body_tail(bir_module_t *m, bir_inst_t *in, const char *s, size_t n,
                             const char *tail, size_t t);
/* A writable copy of in's rare parts (zeros when it has none) in m's arena,
 * installed as in->rare; NULL when out of memory (in unchanged).  Copies of
 * an instruction share its record: each call makes a fresh one, so writing
 * through it never changes another instruction. */
bir_rare_t *bir_inst_rare(bir_module_t *m, bir_inst_t *in);
/* Copy what *in borrows from another module's arena (its name, body, accesses
 * and rare parts) into m's, so it stays valid after that module is freed; false when
 * out of memory. */
bool bir_inst_adopt(bir_module_t *m, bir_inst_t *in);
/* Insert a copy of *in before index pos. */
int bir_block_insert(bir_block_t *b, int pos, const bir_inst_t *in, tpb_err_t *err);
/* A blank instruction of ISA op `op`: engines = the ISA legality bitmap,
 * engine unassigned, queue/group -1. */
void bir_inst_init(bir_inst_t *in, bir_opcode_t opc, isa_op_t op);
/* Codegen's hardware opcode of a BIR instruction: its BIR opcode and mode
 * flags (Activation + is_activate2 -> Activate2, TensorScalarPtr + is_stt ->
 * ScalarTensorTensor); any other instruction keeps the ISA op it was built
 * with.  Emission refuses an instruction whose ISA op disagrees. */
isa_op_t bir_codegen_isa_op(const bir_inst_t *in);
/* The mode-flag setters of the shared builders (setIsActivate2,
 * set_is_scalar_tensor_tensor): set the flag, then the ISA op, L2 opcode and
 * engine bitmap codegen derives from it.  Call before filling the body. */
void bir_inst_set_is_activate2(bir_module_t *m, bir_inst_t *in, bool on);
void bir_inst_set_is_stt(bir_module_t *m, bir_inst_t *in, bool on);
/* Bytes of the body of ISA op `op` (its format's struct_size). */
size_t bir_body_size(isa_op_t op);
/* A zeroed body for in->isa.op in m's arena, installed as in->isa.f->  Out
 * of memory: in->oom is set (append/insert refuse the instruction) and the
 * body is m->oom_body, so the caller's writes stay harmless. */
isa_body_t *bir_inst_body_new(bir_module_t *m, bir_inst_t *in);
/* Copy before write: a fresh copy of in's body (zeros when it has none) in
 * m's arena, installed as in->isa.f, so writing it never changes another
 * instruction that shares the old one.  Out of memory as bir_inst_body_new. */
isa_body_t *bir_inst_body_own(bir_module_t *m, bir_inst_t *in);
/* The whole decoded instruction (header + body, the rest of the union
 * zeroed) for the ISA library (isa_encode, isa_format_inst, ...). */
void bir_isa_expand(const bir_inst_t *in, isa_inst_t *out);
/* A body field's value (fd one of the format's fields, not a header one):
 * isa_field_get without rebuilding the whole instruction. */
uint32_t bir_body_field(const bir_inst_t *in, const isa_field_t *fd);
/* Set in's op, header and body from a whole decoded instruction (a fresh
 * body in m's arena); false when out of memory (in->oom set). */
bool bir_isa_set(bir_module_t *m, bir_inst_t *in, const isa_inst_t *x);
/* DgeComputeOp -> the descriptor's 1-bit wire compute field (ISA_DMAOP_*). */
unsigned bir_dge_compute_wire(bir_dge_compute_t v);
/* Set a DMA instruction's DgeComputeOp; on a descriptor (DmaDirect2d /
 * DmaIndirect2d) also its wire field.  Emission refuses a descriptor whose
 * wire field disagrees. */
void bir_inst_set_dge_compute(bir_inst_t *in, bir_dge_compute_t v);
/* Share in's body and access list with an earlier instruction's equal one
 * (bodies and accesses of a loop repeat: a few distinct ones for 10^5
 * instructions): in then points at that copy, and its own (built by
 * lw_inst / bir_inst_name_body, the arena's newest bytes) are given back to
 * the arena.  Call it when in is complete and nothing else points at its
 * body or accesses (the lowering's in-slot instructions, as they are
 * committed); an instruction whose body or accesses nothing equals so far
 * is remembered for the next ones.  A shared body or access list is never
 * written: bir_inst_body_own / bir_inst_body_share before writing a body,
 * and bir_inst_access extends a copy. */
void bir_inst_share(bir_module_t *m, bir_inst_t *in);
/* Replace in's body with an equal copy of *x (an earlier instruction's
 * when one is remembered, else a new one in m's arena): how a pass changes
 * a field of a committed instruction's body (write a copy, then this).
 * Out of memory as bir_inst_body_new (in->oom set, false). */
bool bir_inst_body_share(bir_module_t *m, bir_inst_t *in, const isa_body_t *x);
/* Record a memory access (in m's arena): in the room reserved with the name
 * while it lasts, else by extending the list; an instruction that outgrows
 * its room raises m->acc_room for the op it was built as (acc_key).  False when the access list is
 * full (BIR_MAX_ACCESS) or out of memory (in->oom is then set). */
bool bir_inst_access_grow(bir_module_t *m, bir_inst_t *in, const bir_access_t *a);
static inline bool bir_inst_access(bir_module_t *m, bir_inst_t *in, const bir_access_t *a)
{
    if (in->nacc < in->acc_room) {   /* the room reserved with the name (most): no call */
        ((bir_access_t *)in->acc)[in->nacc++] = *a;
        return true;
    }
    return bir_inst_access_grow(m, in, a);   /* past the room: extend the list */
}
bool bir_access_overlap(const bir_access_t *a, const bir_access_t *b);

#endif
