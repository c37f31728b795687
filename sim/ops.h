/* ops.h - helpers shared by the compute-op bodies (pe.c, act.c, dve.c,
 * pool.c): resolved operands, ALU evaluation, the random generator and
 * cost helpers.  Private to sim/; the scheduler only sees exec.h. */
#ifndef TPB_SIM_OPS_H
#define TPB_SIM_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "numeric.h"

/* Free elements per partition accepted in one access pattern: bounds the
 * work of a single instruction (and the offset tables below). */
#define SIM_MAX_FREE_ELEMS (1u << 20)

typedef enum { SIM_RD = 1, SIM_WR = 2, SIM_RW = 3 } sim_access_t;

/* A resolved TAP (or PTR) operand: bounds already checked.  The byte
 * offset (inside a partition) of flat element i, dim 0 innermost, is
 * base + i * lstep when the pattern collapses to one dimension (off ==
 * NULL), else off[i] from a precomputed table.  mem != NULL once resolved. */
typedef struct {
    const char *name;
    uint8_t *mem;         /* partition 0 of the space */
    uint8_t *init;        /* --check-uninit byte map of the space, or NULL */
    uint32_t pb;          /* bytes per partition */
    unsigned space, dtype, esize;
    unsigned start, nparts;
    uint32_t nfree;       /* elements per partition */
    uint32_t base;        /* linear patterns: offset of element 0 */
    int64_t lstep;        /* linear patterns: bytes between flat elements */
    uint32_t *off;        /* nfree byte offsets, or NULL for a linear pattern */
    bool owned;           /* off was malloc'ed (no scratch arena): freed by sim_opnd_free */
    int64_t lo, hi;       /* byte range [lo, hi) touched inside a partition */
    sim_access_t acc;
    struct sim_plan *plan; /* taken unchanged from slot pslot of this class plan, or NULL */
    unsigned pslot;
    isa_tap_t tap;        /* the pattern (for shape-aware ops); last, see sim_opnds_none */
} sim_opnd_t;

/* Mark n operands unresolved (safe to sim_opnd_free; mem == NULL).  Clears
 * everything but the tap copy: cheaper than a memset of the whole array in
 * the per-instruction path. */
static inline void sim_opnds_none(sim_opnd_t *o, unsigned n)
{
    for (unsigned k = 0; k < n; k++)
        memset(&o[k], 0, offsetof(sim_opnd_t, tap));
}

/* Mark n operands absent more cheaply, for op bodies that read nothing of
 * an operand they never resolve but mem (NULL: absent), and free and mark
 * it (off, owned, init, acc); plan too.  Every resolution (sim_opnd_tap,
 * sim_opnd_ptr) assigns every field, so only never-resolved operands keep
 * the other fields unset (act.c, dve.c TensorTensor and TensorScalar). */
static inline void sim_opnds_absent(sim_opnd_t *o, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        o[k].mem = NULL;
        o[k].init = NULL;
        o[k].off = NULL;
        o[k].owned = false;
        o[k].acc = 0;
        o[k].plan = NULL;
    }
}

/* The operands one class of identical instructions (memo.c) resolved the
 * last time, in the order it resolved them (sim_opnd_tap): operand k of a
 * member is the stored one when its pattern, name and access equal the
 * stored one's, as resolution depends only on those and on the engine's
 * fixed context (memories, sizes, engine rules).  Only linear patterns
 * without --check-uninit are stored; mem == NULL marks an empty slot. */
#define SIM_PLAN_OPNDS 4
typedef struct sim_plan {
    sim_opnd_t o[SIM_PLAN_OPNDS];
    /* sim_row_len of operands all taken from this plan, by their slots
     * (row_key): valid until a slot is stored again */
    bool row_ok;
    uint32_t row_key, row_len;
} sim_plan_t;

/* Whether two patterns are the same, every member (all 32-bit: no padding;
 * seven 64-bit compares instead of a memcmp call). */
static inline uint64_t sim_ld64(const void *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline bool sim_tap_same(const isa_tap_t *a, const isa_tap_t *b)
{
    _Static_assert(sizeof(isa_tap_t) == 14 * 4, "isa_tap_t has no padding");
    const uint8_t *x = (const uint8_t *)a, *y = (const uint8_t *)b;
    return ((sim_ld64(x) ^ sim_ld64(y)) | (sim_ld64(x + 8) ^ sim_ld64(y + 8)) |
            (sim_ld64(x + 16) ^ sim_ld64(y + 16)) | (sim_ld64(x + 24) ^ sim_ld64(y + 24)) |
            (sim_ld64(x + 32) ^ sim_ld64(y + 32)) | (sim_ld64(x + 40) ^ sim_ld64(y + 40)) |
            (sim_ld64(x + 48) ^ sim_ld64(y + 48))) == 0;
}

/* Note a resolved operand in ctx->fp (exec.h sim_fp_t). */
static inline void sim_fp_note(sim_exec_ctx_t *ctx, const sim_opnd_t *o)
{
    sim_fp_t *fp = ctx->fp;
    if (!fp)
        return;
    if (fp->n == SIM_FP_REGIONS) {
        fp->all = true;
        return;
    }
    fp->r[fp->n++] = (sim_region_t){ .lo = (uint32_t)o->lo, .hi = (uint32_t)o->hi,
                                     .space = (uint8_t)o->space, .p0 = (uint8_t)o->start,
                                     .p1 = (uint8_t)(o->start + o->nparts),
                                     .wr = (o->acc & SIM_WR) != 0 };
}

/* sim_opnd_tap without a plan hit: resolves in full and, with a plan,
 * stores the result in slot k (tap.c). */
int sim_opnd_tap_slow(sim_exec_ctx_t *ctx, sim_opnd_t *o, const isa_tap_t *t,
                      const char *name, sim_access_t acc, unsigned k);

/* Resolve a TAP: presence, space legal for the engine/direction, dtype,
 * shape, bounds; for reads, the uninitialised-byte check.
 * With a class plan (sim_plan_t), operand k of the instruction is the
 * plan's k-th one when pattern, name and access are the same: every check
 * passed before with the same inputs, and the lazy sentinel cells it
 * touched stay filled for the whole run, so the copy is the whole
 * resolution.  Inline: this runs for every operand of every instruction. */
static inline int sim_opnd_tap(sim_exec_ctx_t *ctx, sim_opnd_t *o, const isa_tap_t *t,
                               const char *name, sim_access_t acc)
{
    sim_plan_t *pl = ctx->plan;
    unsigned k = ctx->plan_i++;
    if (pl && k < SIM_PLAN_OPNDS) {
        const sim_opnd_t *c = &pl->o[k];
        if (c->mem && c->name == name && c->acc == acc && sim_tap_same(&c->tap, t)) {
            *o = *c;
            o->plan = pl;
            o->pslot = k;
            sim_fp_note(ctx, o);
            return 0;
        }
    }
    return sim_opnd_tap_slow(ctx, o, t, name, acc, k);
}
/* Resolve a per-partition pointer as nelems consecutive elements in
 * partitions [start, start+nparts). */
int sim_opnd_ptr(sim_exec_ctx_t *ctx, sim_opnd_t *o, const isa_ptr_t *p,
                 unsigned start, unsigned nparts, unsigned nelems,
                 const char *name, sim_access_t acc);
/* Release o's offset table if it owns one (inline: runs for every operand
 * of every instruction). */
static inline void sim_opnd_free(sim_opnd_t *o)
{
    if (o->owned)
        free(o->off);
    o->off = NULL;
    o->owned = false;
}
/* Mark every byte of a written operand as initialised (--check-uninit). */
void sim_opnd_mark_init(sim_opnd_t *o);
static inline void sim_opnd_mark(sim_opnd_t *o)
{
    if (o->init && (o->acc & SIM_WR))
        sim_opnd_mark_init(o);
}
/* Uninitialised-read check of one operand (done by sim_opnd_* for reads). */
int sim_opnd_check_init(sim_exec_ctx_t *ctx, const sim_opnd_t *o);

/* Byte offset of flat element i inside a partition. */
static inline uint32_t sim_off(const sim_opnd_t *o, uint32_t i)
{
    return o->off ? o->off[i] : (uint32_t)((int64_t)o->base + (int64_t)i * o->lstep);
}

static inline uint8_t *sim_el(const sim_opnd_t *o, unsigned p, uint32_t i)
{
    return o->mem + (uint64_t)(o->start + p) * o->pb + sim_off(o, i);
}

/* Copy one element: a bit copy between equal dtypes, else a conversion
 * through the ALU value (integers exact, floats rounded). */
void sim_copy_elem(const sim_opnd_t *src, unsigned sp, uint32_t si, const sim_opnd_t *dst,
                   unsigned dp, uint32_t di);
/* Byte range [lo, hi) inside a partition covered by a TAP. */
void sim_tap_extent(const isa_tap_t *t, int64_t *lo, int64_t *hi);

/* A pointer operand packed into 32 bits (ACT scale, TS s0/s1, STT s0,
 * SCAN init when *_is_ptr): the isa PTR layout addr 24b | dtype 4b |
 * space 2b. */
static inline isa_ptr_t sim_ptr_from_bits(uint32_t bits)
{
    isa_ptr_t p = { bits & 0xFFFFFFu, (bits >> 24) & 0xFu, (bits >> 28) & 0x3u };
    return p;
}

static inline float sim_f32_from_bits(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* Errors naming the operand: all return -1.  sim_fail refuses the
 * instruction's fields (what the program text alone decides: a compiler
 * that emitted it has a bug, sim_error_class SIM_ERR_FIELD); sim_fail_data
 * a failure of the values met at run time (an index out of range, a tag, a
 * register's value, an uninitialised read, out of memory). */
int sim_fail(sim_exec_ctx_t *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sim_fail_data(sim_exec_ctx_t *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Resolve o[0] = "in" (read) and o[1] = "out" (written) of the same shape;
 * the caller frees both whatever the result. */
int sim_opnds_in_out(sim_exec_ctx_t *ctx, sim_opnd_t o[2], const isa_tap_t *in,
                     const isa_tap_t *out);
/* Same partition count and elements per partition. */
int sim_shape_error(sim_exec_ctx_t *ctx, const sim_opnd_t *a, const sim_opnd_t *b);
static inline int sim_same_shape(sim_exec_ctx_t *ctx, const sim_opnd_t *a, const sim_opnd_t *b)
{
    if (a->nparts == b->nparts && a->nfree == b->nfree)
        return 0;
    return sim_shape_error(ctx, a, b);
}

/* ---- ALU (dve.c) ---- */
/* A value flowing through the ALU: fp32, or an integer bit pattern (for
 * bitwise ops and bit-exact integer copies).  width = bits of the dtype the
 * integer came from (logical right shift works in that width). */
typedef struct {
    float f;
    int64_t i;
    uint8_t is_int;
    uint8_t width;
} sim_val_t;

bool sim_alu_is_bitwise(unsigned op);
bool sim_alu_is_unary(unsigned op);
bool sim_alu_valid(unsigned op);
bool sim_alu_is_reduce(unsigned op);
sim_val_t sim_val_f(float f);
sim_val_t sim_val_load(const uint8_t *p, unsigned dt);
sim_val_t sim_val_imm(uint32_t bits);   /* immediate: fp32 bits, or int bits for bitwise ops */
void sim_val_store(uint8_t *p, unsigned dt, sim_val_t v);
float sim_val_as_f(sim_val_t v);
sim_val_t sim_alu(unsigned op, sim_val_t a, sim_val_t b);
float sim_alu_f(unsigned op, float a, float b);
/* Pool's native integer TensorTensor (all dtypes int32/uint32): which ops,
 * and the result (a bit pattern stored wrapping). */
bool sim_alu_native_int_op(unsigned op);
sim_val_t sim_alu_native_int(unsigned op, int64_t a, int64_t b);
/* x op s, or s op x when rev: an instruction's reverse0/reverse1 (the
 * operand swap of TensorScalar, ScalarTensorTensor, Activate2, the scan) */
static inline sim_val_t sim_alu_rev(unsigned op, sim_val_t x, sim_val_t s, bool rev)
{
    return rev ? sim_alu(op, s, x) : sim_alu(op, x, s);
}
static inline float sim_alu_f_rev(unsigned op, float x, float s, bool rev)
{
    return rev ? sim_alu_f(op, s, x) : sim_alu_f(op, x, s);
}
/* Identity of a reduction op (value of an empty reduction / reset). */
sim_val_t sim_alu_identity(unsigned op);

/* ---- row-at-a-time fast path (rows.c) ---- */
/* Elements converted per chunk (a stack buffer of floats per operand). */
#define SIM_ROW_MAX 1024u
typedef void (*sim_row_fn)(void *arg, unsigned p, uint32_t i, uint32_t n);
bool sim_row_dtype(unsigned dt);                 /* fp32 or bf16 */
/* False when out overlaps in other than exactly in place. */
bool sim_row_no_alias(const sim_opnd_t *out, const sim_opnd_t *in);
/* Length of the runs over which out and every in are contiguous, all
 * fp32/bf16 and free of partial aliasing; 0 when the fast path does not
 * apply (use the generic element path). */
uint32_t sim_row_len_slow(const sim_opnd_t *out, const sim_opnd_t *const *in, unsigned nin,
                          uint32_t key);
/* The key of operands all taken unchanged from one class plan: their slots
 * (2 bits each) and the count; 0 when any is not. */
static inline uint32_t sim_row_plan_key(const sim_opnd_t *out, const sim_opnd_t *const *in,
                                        unsigned nin)
{
    _Static_assert(SIM_PLAN_OPNDS <= 4, "2 bits per slot");
    if (!out->plan || nin > 8)
        return 0;
    uint32_t key = 1u << 24 | nin << 20 | out->pslot;
    for (unsigned k = 0; k < nin; k++) {
        if (in[k]->plan != out->plan)
            return 0;
        key |= in[k]->pslot << (2 * k + 2);
    }
    return key;
}
/* Operands taken unchanged from a class plan (sim_opnd_tap) get the
 * result the plan remembers for the same slots (the length is a function
 * of the operands alone); inline: once per elementwise instruction. */
static inline uint32_t sim_row_len(const sim_opnd_t *out, const sim_opnd_t *const *in,
                                   unsigned nin)
{
    uint32_t key = sim_row_plan_key(out, in, nin);
    if (key && out->plan->row_ok && out->plan->row_key == key)
        return out->plan->row_len;
    return sim_row_len_slow(out, in, nin, key);
}
/* Call fn for every chunk (partition p, first flat index i, n <= SIM_ROW_MAX
 * elements inside one run of len), in element order. */
void sim_rows_each(const sim_opnd_t *o, uint32_t len, sim_row_fn fn, void *arg);
/* Contiguous run length of one fp32/bf16 operand (0: not fp32/bf16 or
 * innermost step != 1); sim_row_load accepts any n inside one run. */
uint32_t sim_row_run(const sim_opnd_t *o);
/* The same for one partition p. */
void sim_rows_part_runs(const sim_opnd_t *o, uint32_t len, unsigned p, sim_row_fn fn,
                        void *arg);
/* Inline: a partition that is one chunk (every tiny op) is one call. */
static inline void sim_rows_part(const sim_opnd_t *o, uint32_t len, unsigned p, sim_row_fn fn,
                                 void *arg)
{
    if (o->nfree == len && len && len <= SIM_ROW_MAX)
        fn(arg, p, 0, len);
    else
        sim_rows_part_runs(o, len, p, fn, arg);
}

/* ---- one instruction's partitions split over the pool (rows.c) ----
 * Each part takes a range of partitions [p0, p1) and computes them exactly
 * as the one-thread loop does, so results do not depend on the split.
 * Work is counted in elements (partitions x free elements) times a weight
 * per op: 1 for about 0.3 ns per element on one thread, the cost of a
 * TensorScalar row (tests/bench_split).  An instruction is split only when
 * each part gets SIM_ROWS_SPLIT units (~80 us): on the 2-vCPU machine this
 * was measured on, a split costs ~30 us (a halted vCPU waking, the rows
 * crossing to the other core's cache), so memory-bound ops of a 128 x 2048
 * fp32 tile ran slower split and only the heavier ones gained
 * (docs/simulator.md "Threads"). */
#define SIM_ROWS_SPLIT (1u << 18)
/* Elements of an operand: partitions x free elements. */
static inline uint64_t sim_opnd_elems(const sim_opnd_t *o)
{
    return (uint64_t)o->nparts * o->nfree;
}
/* How many parts to split partitions [0, np) of an instruction into (1:
 * do not split): the pool's threads while each part gets SIM_ROWS_SPLIT
 * of `work` elements, at most np; 1 when a written operand overlaps
 * another operand (the same memory, partitions and bytes) with a
 * different first partition, as part p then touches memory another part
 * writes (the one-thread loop's order would matter).  Operands with mem ==
 * NULL are ignored. */
unsigned sim_rows_parts_pool(const sim_exec_ctx_t *ctx, const sim_opnd_t *const *ops,
                             unsigned nops, unsigned np, uint64_t work);
static inline unsigned sim_rows_parts(const sim_exec_ctx_t *ctx, const sim_opnd_t *const *ops,
                                      unsigned nops, unsigned np, uint64_t work)
{
    if (!ctx->pool || np < 2)
        return 1; /* one thread, or one partition: nothing to split */
    return sim_rows_parts_pool(ctx, ops, nops, np, work);
}
/* fn(arg, part, p0, p1) for part 0..parts-1 cutting [0, np), on the pool when parts > 1 (fn
 * then runs concurrently: it may write only partitions [p0, p1) of its
 * outputs and per-part state of its own). */
typedef void (*sim_span_fn)(void *arg, unsigned part, unsigned p0, unsigned p1);
void sim_rows_split(sim_pool_t *pool, unsigned parts, unsigned np, sim_span_fn fn, void *arg);
/* sim_rows_each with partitions split into parts: fn's arg is shared by
 * the parts, so fn must only read it. */
void sim_rows_each_split(sim_pool_t *pool, unsigned parts, const sim_opnd_t *o, uint32_t len,
                         sim_row_fn fn, void *arg);
void sim_row_load_any(float *dst, const sim_opnd_t *o, unsigned p, uint32_t i, uint32_t n);
void sim_row_store_any(const sim_opnd_t *o, unsigned p, uint32_t i, const float *src, uint32_t n);
/* A run into floats and back; tiny fp32 runs inline (a call per row of 4
 * elements costs more than the copy), the rest in rows.c. */
static inline void sim_row_load(float *dst, const sim_opnd_t *o, unsigned p, uint32_t i,
                                uint32_t n)
{
    if (o->dtype != ISA_DT_FP32 || n > 8) {
        sim_row_load_any(dst, o, p, i, n);
        return;
    }
    const uint8_t *src = sim_el(o, p, i);
    uint32_t k = 0;
    for (; k + 4 <= n; k += 4)
        memcpy(&dst[k], src + 4 * k, 16);
    for (; k < n; k++)
        memcpy(&dst[k], src + 4 * k, 4);
}
static inline void sim_row_store(const sim_opnd_t *o, unsigned p, uint32_t i, const float *src,
                                 uint32_t n)
{
    if (o->dtype != ISA_DT_FP32 || n > 8) {
        sim_row_store_any(o, p, i, src, n);
        return;
    }
    uint8_t *dst = sim_el(o, p, i);
    uint32_t k = 0;
    for (; k + 4 <= n; k += 4)
        memcpy(dst + 4 * k, &src[k], 16);
    for (; k < n; k++)
        memcpy(dst + 4 * k, &src[k], 4);
}
/* r[k] = a[k] op b[k] / a[k] op s (rev: s op a[k]), exactly as sim_alu_f. */
void sim_row_alu(unsigned op, float *r, const float *a, const float *b, uint32_t n);
void sim_row_alu_s(unsigned op, float *r, const float *a, float s, bool rev, uint32_t n);
/* acc folded with x[0..n) in order, acc = sim_alu_f(op, acc, x[k]), same bits */
float sim_row_fold(unsigned op, float acc, const float *x, uint32_t n);

/* ---- activation functions (act.c) ---- */
bool sim_actfn_valid(unsigned fn);
float sim_actfn(unsigned fn, float x);

/* ---- random generators (rng.c) ---- */
/* generator slots an engine draws from: 4 on Vector, 1 elsewhere */
unsigned sim_rng_gens(isa_engine_t e);
/* one XORWOW output of (lane, slot); a uniform fp32 in [0, 1) from its top 24 bits */
uint32_t sim_rng_u32(sim_rng_t *r, unsigned lane, unsigned gen);
float sim_rng_unit(sim_rng_t *r, unsigned lane, unsigned gen);

/* ---- affine predicate (pool.c): offset + cm*p + sum(step_i*idx_i), tested
 * against 0 with isa_cmp_holds ---- */
int64_t sim_affine_value(int32_t offset, int32_t cm, const int32_t step[4],
                         unsigned p, const isa_tap_t *t, uint32_t flat);

/* ---- cost helpers (inline: every compute instruction calls them) ---- */
/* free elements per partition */
static inline uint64_t sim_tap_n(const isa_tap_t *t)
{
    return isa_tap_free_elems(t);
}

/* bf16 / fp16 */
static inline bool sim_dt_is_16f(unsigned dt)
{
    return dt == ISA_DT_BF16 || dt == ISA_DT_FP16;
}

/* A dtype the target's perf modes take: bf16/fp16, and fp8 on v4 (ARCH4). */
static inline bool sim_dt_is_perf(const tpb_target_t *t, unsigned dt)
{
    return sim_dt_is_16f(dt) || (t->perf_mode_fp8 && (dt == ISA_DT_FP8E4M3 || dt == ISA_DT_FP8E5M2 ||
                                                      dt == ISA_DT_FP8E4M3IEEE));
}

/* Whether a DVE instruction runs in the v3 perf mode (dve.c). */
bool sim_dve_perf_mode(const tpb_target_t *t, const isa_decoded_t *d);

/* Memory ports two engines share (port.c): SBUF (v2) or the perf-mode bus
 * (v3) of DVE and Pool, then DVE and Activation's PSUM, a port per bank.
 * What an instruction needs is here, for the simulator and the compiler's
 * engine balancing (encoder/sched_engine.c); who holds a port is the
 * simulator's (sim_int.h). */
enum { SIM_PORT_SBUF_DVE_POOL, SIM_PORT_PSUM_BANK0, SIM_PORTS = SIM_PORT_PSUM_BANK0 + 16 };
/* Whether engine e of target t takes part in a shared port. */
bool sim_port_engine(const tpb_target_t *t, isa_engine_t e);
/* Whether sim_port_needs reads engine e's operands (sim_fp_note): DVE's
 * and Activation's where the target shares a port of theirs, never Pool's. */
bool sim_port_reads_operands(const tpb_target_t *t, isa_engine_t e);
/* The ports (SIM_PORT_* bits) compute instruction d of engine e needs,
 * from the memory it touches (fp; NULL: not known, e.g. Pool's, which
 * needs none of it, or the compiler's estimate: a DVE instruction then
 * counts as touching SBUF, its PSUM banks are not known). */
unsigned sim_port_needs(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d,
                        const sim_fp_t *fp);

/* ARCH2: an innermost stride above 16 bytes halves the port bandwidth. */
static inline bool sim_tap_strided(const isa_tap_t *t)
{
    if (t->space == ISA_SPACE_NONE || t->ndims == 0 || t->count[0] <= 1)
        return false;
    int64_t s = t->step[0] < 0 ? -(int64_t)t->step[0] : t->step[0];
    return s * isa_dtype_size(t->dtype) > 16;
}

/* Static overhead + max(min_ii, work) on DVE and Activation; Pool
 * (GpSimd) has no minimum initiation interval.  The cost is the time from
 * issue to the result; on DVE and Activation the static overhead of it is
 * result latency, not engine occupancy (sim_result_latency, pipe.c). */
static inline uint64_t sim_cost_dve(const tpb_target_t *t, uint64_t work)
{
    return t->dve_static_overhead + (work > t->min_ii ? work : t->min_ii);
}

static inline uint64_t sim_cost_act(const tpb_target_t *t, uint64_t work)
{
    return t->act_static_overhead + (work > t->min_ii ? work : t->min_ii);
}

static inline uint64_t sim_cost_pool(const tpb_target_t *t, uint64_t work)
{
    return t->pool_static_overhead + work;
}

/* Cycles of an engine's compute cost that are result latency: the
 * static overhead of the DVE and Activation envelopes (ARCH2 pays it when
 * an instruction depends on the previous one; COST's MIN_II is the issue
 * interval of independent ones).  Pool's ~150-cycle start-up stays
 * occupancy (docs/timing-compute.md "Engine envelopes"). */
static inline uint64_t sim_engine_result_latency(const tpb_target_t *t, isa_engine_t e)
{
    return e == ISA_ENG_DVE ? t->dve_static_overhead
           : e == ISA_ENG_ACT ? t->act_static_overhead
                              : 0;
}

/* The result latency of op on engine e: TensorLoad and TensorStore have a
 * flat cost without the envelope, so none. */
static inline uint64_t sim_result_latency(const tpb_target_t *t, isa_engine_t e, isa_op_t op)
{
    if (op == ISA_OP_TENSOR_LOAD || op == ISA_OP_TENSOR_STORE)
        return 0;
    return sim_engine_result_latency(t, e);
}

/* Cost of a vector-class op on whichever engine runs it. */
uint64_t sim_cost_engine(const tpb_target_t *t, isa_engine_t e, uint64_t work);

/* Per-engine opimpl lookups (NULL when the op is not in that file). */
const sim_opimpl_t *sim_pe_impl(isa_op_t op);
const sim_opimpl_t *sim_act_impl(isa_op_t op);
const sim_opimpl_t *sim_dve_impl(isa_op_t op);
const sim_opimpl_t *sim_dve_bn_impl(isa_op_t op);   /* dve_bn.c */
const sim_opimpl_t *sim_dve_sel_impl(isa_op_t op);  /* dve_sel.c */
const sim_opimpl_t *sim_pool_impl(isa_op_t op);
const sim_opimpl_t *sim_rng_impl(isa_op_t op);      /* rng.c */
const sim_opimpl_t *sim_seqregs_impl(isa_op_t op);  /* seqregs.c: TensorLoad, TensorStore */
const sim_opimpl_t *sim_dve_tsacc_impl(isa_op_t op);  /* dve_tsacc.c */
const sim_opimpl_t *sim_pool_seq_impl(isa_op_t op);   /* pool_seq.c */

#endif
