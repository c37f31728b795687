/* rows.c - row-at-a-time fast path for the elementwise compute ops.
 *
 * The generic op bodies go element by element through sim_val_t and
 * per-element address lookups (sim_el).  When every operand is fp32 or
 * bf16 and the access patterns are contiguous in runs, the ops instead
 * convert a run of elements into a float buffer, apply the op to the run
 * with the op switch outside the element loop, and store the run back.
 * The arithmetic is the same fp32 math as sim_alu_f() element for element,
 * so the results are bit-identical to the generic path. */
#include <math.h>
#include <string.h>

#include "ops.h"

static inline bool row_dtype(unsigned dt)
{
    return dt == ISA_DT_FP32 || dt == ISA_DT_BF16;
}

bool sim_row_dtype(unsigned dt)
{
    return row_dtype(dt);
}

/* Elements of o that are consecutive in memory starting at any multiple of
 * the result (dims merged while each step equals the run below it). */
static inline uint32_t contiguous_run(const sim_opnd_t *o)
{
    if (!o->off && o->lstep == (int64_t)o->esize)
        return o->nfree; /* one linear run (see sim_opnd_tap) */
    const isa_tap_t *t = &o->tap;
    if (t->ndims == 0 || t->step[0] != 1)
        return t->ndims == 0 || o->nfree == 1 ? 1 : 0;
    uint64_t run = t->count[0];
    for (unsigned d = 1; d < t->ndims && t->step[d] == (int64_t)run; d++)
        run *= t->count[d];
    return (uint32_t)run;
}

static uint32_t gcd_u32(uint32_t a, uint32_t b)
{
    while (b) {
        uint32_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

static bool same_pattern(const sim_opnd_t *a, const sim_opnd_t *b)
{
    const isa_tap_t *x = &a->tap, *y = &b->tap;
    if (a->dtype != b->dtype || a->start != b->start || a->nparts != b->nparts)
        return false;
    if (sim_tap_same(x, y)) /* the usual in-place case: one pattern twice */
        return true;
    if (x->addr != y->addr || x->ndims != y->ndims)
        return false;
    for (unsigned d = 0; d < x->ndims; d++)
        if (x->step[d] != y->step[d] || x->count[d] != y->count[d])
            return false;
    return true;
}

static inline bool row_no_alias(const sim_opnd_t *out, const sim_opnd_t *in)
{
    if (out->space != in->space || out->start >= in->start + in->nparts ||
        in->start >= out->start + out->nparts)
        return true;
    int64_t lo0 = out->lo, hi0 = out->hi, lo1 = in->lo, hi1 = in->hi;
    return hi0 <= lo1 || hi1 <= lo0 || same_pattern(out, in);
}

bool sim_row_no_alias(const sim_opnd_t *out, const sim_opnd_t *in)
{
    return row_no_alias(out, in);
}

uint32_t sim_row_run(const sim_opnd_t *o)
{
    return row_dtype(o->dtype) ? contiguous_run(o) : 0;
}

static uint32_t row_len(const sim_opnd_t *out, const sim_opnd_t *const *in, unsigned nin)
{
    if (!row_dtype(out->dtype))
        return 0;
    uint32_t len = contiguous_run(out);
    for (unsigned k = 0; k < nin && len; k++) {
        if (!row_dtype(in[k]->dtype) || !row_no_alias(out, in[k]))
            return 0;
        uint32_t r = contiguous_run(in[k]);
        len = r == len ? len : r ? gcd_u32(len, r) : 0;
    }
    return len;
}

uint32_t sim_row_len_slow(const sim_opnd_t *out, const sim_opnd_t *const *in, unsigned nin,
                          uint32_t key)
{
    uint32_t len = row_len(out, in, nin);
    if (key) {
        sim_plan_t *pl = out->plan;
        pl->row_ok = true;
        pl->row_key = key;
        pl->row_len = len;
    }
    return len;
}

void sim_rows_part_runs(const sim_opnd_t *o, uint32_t len, unsigned p, sim_row_fn fn,
                        void *arg)
{
    for (uint32_t i = 0; i < o->nfree; i += len)
        for (uint32_t j = 0; j < len; j += SIM_ROW_MAX) {
            uint32_t n = len - j < SIM_ROW_MAX ? len - j : SIM_ROW_MAX;
            fn(arg, p, i + j, n);
        }
}

void sim_rows_each(const sim_opnd_t *o, uint32_t len, sim_row_fn fn, void *arg)
{
    for (unsigned p = 0; p < o->nparts; p++)
        sim_rows_part(o, len, p, fn, arg);
}

/* Operands a and b touch common bytes: the same memory, overlapping
 * partitions and overlapping byte ranges inside a partition. */
static bool opnd_overlap(const sim_opnd_t *a, const sim_opnd_t *b)
{
    return a->mem == b->mem && a->start < b->start + b->nparts &&
           b->start < a->start + a->nparts && a->lo < b->hi && b->lo < a->hi;
}

/* Every part p0..p1 touches only partitions start + [p0, p1) of each
 * operand: parts are independent when no written operand shares bytes with
 * another operand that numbers its partitions from another start. */
static bool parts_independent(const sim_opnd_t *const *ops, unsigned nops)
{
    for (unsigned i = 0; i < nops; i++) {
        const sim_opnd_t *w = ops[i];
        if (!w->mem || !(w->acc & SIM_WR))
            continue;
        for (unsigned j = 0; j < nops; j++)
            if (j != i && ops[j]->mem && ops[j]->start != w->start && opnd_overlap(w, ops[j]))
                return false;
    }
    return true;
}

unsigned sim_rows_parts_pool(const sim_exec_ctx_t *ctx, const sim_opnd_t *const *ops,
                             unsigned nops, unsigned np, uint64_t work)
{
    if (sim_pool_threads(ctx->pool) < 2 || np < 2)
        return 1;
    unsigned n = sim_pool_parts(ctx->pool, work, SIM_ROWS_SPLIT);
    if (n < 2 || !parts_independent(ops, nops))
        return 1;
    return n < np ? n : np;
}

typedef struct {
    sim_span_fn fn;
    void *arg;
    unsigned np, parts;
} span_job_t;

static void span_part(void *arg, unsigned part)
{
    const span_job_t *j = arg;
    unsigned p0 = (unsigned)((uint64_t)j->np * part / j->parts);
    unsigned p1 = (unsigned)((uint64_t)j->np * (part + 1) / j->parts);
    if (p0 < p1)
        j->fn(j->arg, part, p0, p1);
}

void sim_rows_split(sim_pool_t *pool, unsigned parts, unsigned np, sim_span_fn fn, void *arg)
{
    if (parts <= 1) {
        fn(arg, 0, 0, np);
        return;
    }
    span_job_t j = { fn, arg, np, parts };
    sim_pool_run(pool, parts, span_part, &j);
}

typedef struct {
    const sim_opnd_t *o;
    uint32_t len;
    sim_row_fn fn;
    void *arg;
} rows_job_t;

static void rows_span(void *arg, unsigned part, unsigned p0, unsigned p1)
{
    (void)part;
    const rows_job_t *j = arg;
    for (unsigned p = p0; p < p1; p++)
        sim_rows_part(j->o, j->len, p, j->fn, j->arg);
}

void sim_rows_each_split(sim_pool_t *pool, unsigned parts, const sim_opnd_t *o, uint32_t len,
                         sim_row_fn fn, void *arg)
{
    rows_job_t j = { o, len, fn, arg };
    sim_rows_split(pool, parts, o->nparts, rows_span, &j);
}

void sim_row_load_any(float *dst, const sim_opnd_t *o, unsigned p, uint32_t i, uint32_t n)
{
    const uint8_t *src = sim_el(o, p, i);
    if (o->dtype == ISA_DT_FP32) {
        memcpy(dst, src, (size_t)n * 4);
        return;
    }
    for (uint32_t k = 0; k < n; k++) { /* bf16: the top half of an fp32 */
        uint16_t h;
        memcpy(&h, src + 2 * k, 2);
        uint32_t b = (uint32_t)h << 16;
        memcpy(&dst[k], &b, 4);
    }
}

void sim_row_store_any(const sim_opnd_t *o, unsigned p, uint32_t i, const float *src, uint32_t n)
{
    uint8_t *dst = sim_el(o, p, i);
    if (o->dtype == ISA_DT_FP32) {
        memcpy(dst, src, (size_t)n * 4);
        return;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint16_t h = num_f32_to_bf16(src[k]);
        memcpy(dst + 2 * k, &h, 2);
    }
}

/* NaN-propagating max/min exactly as sim_alu_f. */
static inline float maxp(float a, float b) { return (isnan(a) || isnan(b)) ? NAN : a > b ? a : b; }
static inline float minp(float a, float b) { return (isnan(a) || isnan(b)) ? NAN : a < b ? a : b; }

void sim_row_alu(unsigned op, float *r, const float *a, const float *b, uint32_t n)
{
    switch (op) {
    case ISA_ALU_BYPASS: if (r != a) memmove(r, a, (size_t)n * 4); break;
    case ISA_ALU_ADD: for (uint32_t k = 0; k < n; k++) r[k] = a[k] + b[k]; break;
    case ISA_ALU_SUBTRACT: for (uint32_t k = 0; k < n; k++) r[k] = a[k] - b[k]; break;
    case ISA_ALU_MULTIPLY: for (uint32_t k = 0; k < n; k++) r[k] = a[k] * b[k]; break;
    case ISA_ALU_DIVIDE: for (uint32_t k = 0; k < n; k++) r[k] = a[k] / b[k]; break;
    case ISA_ALU_MAX: for (uint32_t k = 0; k < n; k++) r[k] = maxp(a[k], b[k]); break;
    case ISA_ALU_MIN: for (uint32_t k = 0; k < n; k++) r[k] = minp(a[k], b[k]); break;
    default: for (uint32_t k = 0; k < n; k++) r[k] = sim_alu_f(op, a[k], b[k]); break;
    }
}

/* r = a op s (rev: s op a) with a scalar s. */
void sim_row_alu_s(unsigned op, float *r, const float *a, float s, bool rev, uint32_t n)
{
    if (rev) {
        switch (op) {
        case ISA_ALU_BYPASS: for (uint32_t k = 0; k < n; k++) r[k] = s; break;
        case ISA_ALU_ADD: for (uint32_t k = 0; k < n; k++) r[k] = s + a[k]; break;
        case ISA_ALU_SUBTRACT: for (uint32_t k = 0; k < n; k++) r[k] = s - a[k]; break;
        case ISA_ALU_MULTIPLY: for (uint32_t k = 0; k < n; k++) r[k] = s * a[k]; break;
        default: for (uint32_t k = 0; k < n; k++) r[k] = sim_alu_f(op, s, a[k]); break;
        }
        return;
    }
    switch (op) {
    case ISA_ALU_BYPASS: if (r != a) memmove(r, a, (size_t)n * 4); break;
    case ISA_ALU_ADD: for (uint32_t k = 0; k < n; k++) r[k] = a[k] + s; break;
    case ISA_ALU_SUBTRACT: for (uint32_t k = 0; k < n; k++) r[k] = a[k] - s; break;
    case ISA_ALU_MULTIPLY: for (uint32_t k = 0; k < n; k++) r[k] = a[k] * s; break;
    case ISA_ALU_DIVIDE: for (uint32_t k = 0; k < n; k++) r[k] = a[k] / s; break;
    case ISA_ALU_MAX: for (uint32_t k = 0; k < n; k++) r[k] = maxp(a[k], s); break;
    case ISA_ALU_MIN: for (uint32_t k = 0; k < n; k++) r[k] = minp(a[k], s); break;
    default: for (uint32_t k = 0; k < n; k++) r[k] = sim_alu_f(op, a[k], s); break;
    }
}

/* max (or min) over acc, x[0..n) with the result of folding
 * acc = sim_alu_f(op, acc, x[k]) in order: NaN if any operand is NaN, else
 * the extreme value -- of the elements equal to it, the last in order (the
 * fold keeps the newer operand on ties), which only matters for +0/-0.
 * Lanes of 16 independent maxima vectorise; the order is restored by the
 * tie rule above. */
/* One 16-element block into 16 running lanes.  Written as a plain
 * compare-and-select per lane with the NaN flag kept as an integer mask and
 * no branch on the op inside the loop, so GCC vectorises it (the former
 * single loop with `is_max ? .. : ..` per element stayed scalar, ~20
 * machine instructions per element of softmax's row max). */
static inline void ext_block_max(float *lm, int32_t *nan, const float *x)
{
    for (unsigned j = 0; j < 16; j++) {
        float v = x[j];
        nan[j] |= -(int32_t)(v != v);
        lm[j] = v > lm[j] ? v : lm[j];
    }
}

static inline void ext_block_min(float *lm, int32_t *nan, const float *x)
{
    for (unsigned j = 0; j < 16; j++) {
        float v = x[j];
        nan[j] |= -(int32_t)(v != v);
        lm[j] = v < lm[j] ? v : lm[j];
    }
}

static float fold_ext(bool is_max, float acc, const float *x, uint32_t n)
{
    if (n == 0)
        return acc;
    float lm[16];
    int32_t nan[16];
    for (unsigned j = 0; j < 16; j++) {
        lm[j] = acc;
        nan[j] = -(int32_t)isnan(acc);
    }
    uint32_t k = 0;
    if (is_max)
        for (; k + 16 <= n; k += 16)
            ext_block_max(lm, nan, x + k);
    else
        for (; k + 16 <= n; k += 16)
            ext_block_min(lm, nan, x + k);
    float m = lm[0];
    int32_t any_nan = 0;
    for (unsigned j = 0; j < 16; j++) {
        any_nan |= nan[j];
        m = (is_max ? lm[j] > m : lm[j] < m) ? lm[j] : m;
    }
    for (; k < n; k++) {
        any_nan |= isnan(x[k]);
        m = (is_max ? x[k] > m : x[k] < m) ? x[k] : m;
    }
    if (any_nan)
        return NAN;
    if (m == 0.0f) { /* +0 or -0: the last element equal to it wins */
        for (uint32_t q = n; q-- > 0;)
            if (x[q] == 0.0f)
                return x[q];
        return acc;
    }
    return m;
}

float sim_row_fold(unsigned op, float acc, const float *x, uint32_t n)
{
    switch (op) {
    case ISA_ALU_ADD:
        for (uint32_t k = 0; k < n; k++)
            acc = acc + x[k];
        return acc;
    case ISA_ALU_MULTIPLY:
        for (uint32_t k = 0; k < n; k++)
            acc = acc * x[k];
        return acc;
    case ISA_ALU_MAX: return fold_ext(true, acc, x, n);
    case ISA_ALU_MIN: return fold_ext(false, acc, x, n);
    default:
        for (uint32_t k = 0; k < n; k++)
            acc = sim_alu_f(op, acc, x[k]);
        return acc;
    }
}
