/* exec.h - the contract between the engine schedulers (sim.c, sync.c,
 * dma.c) and the per-opcode semantics and cost bodies (pe.c, act.c, dve.c,
 * pool.c).  One sim_opimpl_t per compute opcode; control, synchronisation
 * and DMA opcodes are executed by the scheduler itself. */
#ifndef TPB_SIM_EXEC_H
#define TPB_SIM_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "diag.h"
#include "isa.h"
#include "lazy.h"
#include "target.h"
#include "threads.h"

/* PE array state: the stationary weights held in the 128x128 systolic
 * array (rows = K / partitions, cols = M), as values after dtype
 * conversion, plus what the MX and sparse loads add. */
typedef struct {
    float w[128][128];          /* w[row][col] */
    uint8_t w_loaded[128][128]; /* 1 where a LdWeights* wrote the cell */
    int8_t mx_scale[4][128];    /* E8M0 exponent (s-127) per 32-row block, per col (MX) */
    uint8_t sparse_tags[128][128]; /* original-row offset of each compressed weight (sparse) */
    unsigned sparse_ratio;      /* compress_ratio of the last LdWeightsSparse, 0 if none */
    unsigned w_dtype;           /* dtype of the last loaded weights (cost model: fp32 4x) */
    /* perf=double_row (trn2): each cell holds a second weight, the one of
     * contraction row 128 + row (stationary [K, 2, M], r = 1). */
    float w_dr[128][128];
    uint8_t double_row;         /* 1 when the last LdWeights used perf=double_row */
    /* Raw element bits of the last plain LdWeights (transpose mode copies
     * them bit-exactly, NaN payloads included); w_bits_ok is 0 after an MX,
     * sparse or double_row load. */
    uint32_t w_bits[128][128];
    uint8_t w_bits_ok;
    /* 0 while w_dr, sparse_tags and mx_scale are all zero (the state is
     * calloc'ed; set by the loads that write them): plain LdWeights then
     * skips clearing them (pe.c tile_clear). */
    uint8_t aux_dirty;
    /* MX on packed quads (NeuronCore-v4, pe_quad.c): four weights per cell,
     * scaled, written by an LdWeightsMX of *_x4 data; quad = 1 while they
     * are the loaded weights. */
    uint8_t quad;
    float w_quad[128][128][4];
} sim_pe_state_t;

/* Per-engine scratch for operand offset tables, so resolving an operand
 * does not malloc: the scheduler resets it before every instruction and
 * grows it to the largest demand seen (tables that do not fit fall back to
 * malloc for that instruction). */
typedef struct {
    uint32_t *buf;
    size_t cap, used, want;     /* in uint32 entries */
} sim_scratch_t;

/* Per-engine memo of access patterns that passed the bounds checks and
 * collapse to one stride (tap.c:sim_opnd_tap): the checks and the extent
 * depend only on the pattern and the memory sizes, so a pattern seen again
 * (the same tile, instruction after instruction) skips them.  Direct
 * mapped; an entry is replaced by the next pattern of its slot. */
#define SIM_TAP_MEMO 8
typedef struct {
    isa_tap_t tap;
    int64_t lo, hi, lstep;      /* byte extent in a partition; bytes per flat element */
    uint32_t n;                 /* elements per partition */
    bool valid;
} sim_tap_memo_t;

/* Reset before an instruction (grows buf to the last instruction's
 * demand); free at the end of a run. */
void sim_scratch_grow(sim_scratch_t *s);
static inline void sim_scratch_reset(sim_scratch_t *s)
{
    if (s->want > s->cap)
        sim_scratch_grow(s);
    s->used = 0;
    s->want = 0;
}
void sim_scratch_free(sim_scratch_t *s);

/* An engine's pseudo-random generators (sim/rng.c, docs/semantics.md
 * "Random numbers"): XORWOW state words x, y, z, w, v, d per lane
 * (partition) and generator slot.  Vector draws from 4 slots per lane (NKI:
 * 24 state words), every other engine from slot 0 (6 words). */
#define SIM_RNG_LANES 128
#define SIM_RNG_GENS 4
#define SIM_RNG_WORDS 6
typedef struct {
    uint32_t s[SIM_RNG_LANES][SIM_RNG_GENS][SIM_RNG_WORDS];
} sim_rng_t;

/* Seed every lane and slot from one 64-bit seed (SetRngSeed, tpb sim --seed). */
void sim_rng_seed(sim_rng_t *r, uint64_t seed);

/* The memory a compute instruction touches, noted operand by operand as
 * they are resolved (ops.h sim_opnd_tap, tap.c sim_opnd_ptr): the engine's
 * result pipeline (pipe.c) finds an instruction's read-after-write and
 * write-after-write hazards on results still in flight with it.  A region
 * is one operand's space, partitions [p0, p1) and byte range [lo, hi)
 * inside a partition (its bounding range: interleaved patterns overlap). */
typedef struct {
    uint32_t lo, hi;
    uint8_t space, p0, p1;
    bool wr;                    /* the operand is written */
} sim_region_t;
#define SIM_FP_REGIONS 8
typedef struct {
    sim_region_t r[SIM_FP_REGIONS];
    uint8_t n;
    bool all;                   /* more operands than fit: counts as touching everything */
} sim_fp_t;

typedef struct sim_exec_ctx {
    const tpb_target_t *target;
    int core;                   /* for messages */
    isa_engine_t engine;
    uint8_t *sbuf;              /* partition p starts at sbuf + p * sbuf_pb */
    uint8_t *psum;
    uint32_t sbuf_pb, psum_pb;  /* bytes per partition */
    uint8_t *sbuf_init;         /* --check-uninit: byte map, 1 = written; else NULL */
    uint8_t *psum_init;
    sim_lazy_t *sbuf_z, *psum_z; /* sentinel filled on first use (lazy.h); NULL: all filled */
    sim_pe_state_t *pe;         /* this core's PE array */
    float *acc;                 /* [128] accumulator registers of this engine (fused reduce) */
    uint32_t *regs;             /* [64] sequencer registers of this engine */
    sim_rng_t *rng;             /* this engine's PRNG (Rng, Rand2, Memset random, Dropout) */
    bool timing_only;           /* validate bounds, skip arithmetic */
    sim_pool_t *pool;           /* split large work (threads.h), or NULL: one thread */
    sim_scratch_t *scratch;     /* this engine's offset-table scratch, or NULL (malloc) */
    sim_tap_memo_t *tap_memo;   /* [SIM_TAP_MEMO] this engine's checked patterns, or NULL */
    struct sim_plan *plan;      /* the running instruction's class: its resolved operands
                                   (ops.h sim_plan_t), or NULL */
    unsigned plan_i;            /* operands resolved so far by this instruction */
    sim_fp_t *fp;               /* where the operands resolved are noted (sim_fp_note),
                                   or NULL: not needed (no result pipeline) */
    tpb_err_t *err;             /* filled on failure: operand, address, reason */
    bool data_fail;             /* the failure came from values (sim_fail_data), not from
                                   the instruction's fields (sim_fail) */
} sim_exec_ctx_t;

/* Execute one decoded instruction.  Returns 0, or -1 with ctx->err set.
 * The caller prefixes core, engine, instruction index and opcode. */
typedef int (*sim_exec_fn)(sim_exec_ctx_t *ctx, const isa_decoded_t *d);

/* Cost in cycles of the executing engine's clock (see docs/timing.md). */
typedef uint64_t (*sim_cost_fn)(const tpb_target_t *t, isa_engine_t engine,
                                const isa_decoded_t *d);

typedef struct {
    sim_exec_fn exec;
    sim_cost_fn cost;
} sim_opimpl_t;

/* The implementation of a compute opcode, or NULL when the scheduler
 * handles it (control, sync, DMA, prefixes). */
const sim_opimpl_t *sim_opimpl(isa_op_t op);
/* The whole table at once: tab[op] = sim_opimpl(op), pe[op] = whether the
 * PE implements op (the scheduler looks these up once per instruction). */
void sim_opimpl_table(const sim_opimpl_t **tab, bool *pe, unsigned nops);

/* Bounds check of a compute access pattern against its space (SBUF/PSUM
 * sizes of ctx); on failure fills ctx->err naming `operand`, the
 * partition and byte address.  Also used by the scheduler for reporting. */
int sim_tap_check(sim_exec_ctx_t *ctx, const isa_tap_t *t, const char *operand);
int sim_ptr_check(sim_exec_ctx_t *ctx, const isa_ptr_t *p, unsigned start,
                  unsigned nparts, unsigned nelems, const char *operand);

#endif
