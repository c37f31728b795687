/* tap.c - bounds checks of compute access patterns and resolved operands.
 *
 * Element (p, i3, i2, i1, i0) of a TAP lives at partition start+p, byte
 * addr + (sum_d i_d*step_d) * elemsize.  The whole pattern's lowest and
 * highest byte are checked against the space once; iteration afterwards
 * uses a precomputed offset table without per-element checks. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

static int fail_v(sim_exec_ctx_t *ctx, const char *fmt, va_list ap)
{
    if (ctx->err)
        vsnprintf(ctx->err->msg, sizeof ctx->err->msg, fmt, ap);
    return -1;
}

int sim_fail(sim_exec_ctx_t *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = fail_v(ctx, fmt, ap);
    va_end(ap);
    return rc;
}

int sim_fail_data(sim_exec_ctx_t *ctx, const char *fmt, ...)
{
    ctx->data_fail = true;
    va_list ap;
    va_start(ap, fmt);
    int rc = fail_v(ctx, fmt, ap);
    va_end(ap);
    return rc;
}

static const char *space_name(unsigned s)
{
    const char *n = isa_enum_name(ISA_FT_SPACE, s);
    return n ? n : "?";
}

/* Space base, size and init map for SBUF/PSUM; -1 for anything else. */
static int space_of(sim_exec_ctx_t *ctx, unsigned space, uint8_t **mem,
                    uint32_t *pb, uint8_t **init)
{
    if (space == ISA_SPACE_SBUF) {
        *mem = ctx->sbuf; *pb = ctx->sbuf_pb; *init = ctx->sbuf_init;
        return 0;
    }
    if (space == ISA_SPACE_PSUM) {
        *mem = ctx->psum; *pb = ctx->psum_pb; *init = ctx->psum_init;
        return 0;
    }
    return -1;
}

/* Byte range [lo, hi) of one partition covered by a TAP (relative to 0). */
/* Elements per partition of t (product of its counts) and its byte extent
 * [lo, hi) inside a partition. */
static inline uint64_t tap_span(const isa_tap_t *t, int64_t *lo, int64_t *hi)
{
    int64_t es = isa_dtype_size(t->dtype);
    uint64_t n = 1;
    int64_t mn = 0, mx = 0;
    for (unsigned d = 0; d < t->ndims && d < ISA_MAX_FREE_DIMS; d++) {
        n *= t->count[d];
        int64_t span = (int64_t)t->step[d] * ((int64_t)t->count[d] - 1);
        if (span < 0)
            mn += span;
        else
            mx += span;
    }
    *lo = (int64_t)t->addr + mn * es;
    *hi = (int64_t)t->addr + mx * es + es;
    return n;
}

void sim_tap_extent(const isa_tap_t *t, int64_t *lo, int64_t *hi)
{
    tap_span(t, lo, hi);
}

/* sim_tap_check, also returning the byte extent [lo, hi) of a partition
 * and the elements per partition.  The first failing check names the
 * problem (the hot path uses tap_ok_fast and comes here only to report). */
static int tap_check_ext(sim_exec_ctx_t *ctx, const isa_tap_t *t, const char *operand,
                         int64_t *lo_out, int64_t *hi_out, uint64_t *n_out)
{
    uint32_t pb;
    if (t->space == ISA_SPACE_SBUF)
        pb = ctx->sbuf_pb;
    else if (t->space == ISA_SPACE_PSUM)
        pb = ctx->psum_pb;
    else if (t->space == ISA_SPACE_NONE)
        return sim_fail(ctx, "%s: operand missing (space none)", operand);
    else
        return sim_fail(ctx, "%s: compute operands must be in sbuf or psum, not %s",
                        operand, space_name(t->space));
    int64_t es = isa_dtype_size(t->dtype);
    if (es == 0)
        return sim_fail(ctx, "%s: invalid dtype %u", operand, t->dtype);
    if (t->nparts < 1 || t->nparts > ISA_NUM_PARTITIONS ||
        t->start + t->nparts > ISA_NUM_PARTITIONS)
        return sim_fail(ctx, "%s: partitions start %u count %u outside 0..127",
                        operand, t->start, t->nparts);
    if (t->ndims > ISA_MAX_FREE_DIMS)
        return sim_fail(ctx, "%s: ndims %u > %d", operand, t->ndims, ISA_MAX_FREE_DIMS);
    for (unsigned d = 0; d < t->ndims; d++)
        if (t->count[d] == 0)
            return sim_fail(ctx, "%s: empty access pattern (count[%u] = 0)", operand, d);
    int64_t lo, hi;
    uint64_t n = tap_span(t, &lo, &hi);
    if (n > SIM_MAX_FREE_ELEMS)
        return sim_fail(ctx, "%s: %llu elements per partition exceed the limit %u",
                        operand, (unsigned long long)n, SIM_MAX_FREE_ELEMS);
    if (t->start % isa_start_align(t->nparts))   /* ARCH2's start-partition rule */
        return sim_fail(ctx, "%s: start partition %u is not allowed for %u partitions (a "
                        "tensor of more than 64 partitions starts at 0, of 33-64 at 0 or 64, "
                        "of up to 32 at 0, 32, 64 or 96)", operand, t->start, t->nparts);
    if (lo < 0 || hi > (int64_t)pb)
        return sim_fail(ctx, "%s: partition %u bytes [%lld, %lld) outside %s "
                        "(%u bytes per partition; addr 0x%x)", operand, t->start,
                        (long long)lo, (long long)hi, space_name(t->space), pb, t->addr);
    *lo_out = lo;
    *hi_out = hi;
    *n_out = n;
    return 0;
}

int sim_tap_check(sim_exec_ctx_t *ctx, const isa_tap_t *t, const char *operand)
{
    int64_t lo, hi;
    uint64_t n = 0;
    return tap_check_ext(ctx, t, operand, &lo, &hi, &n);
}

int sim_ptr_check(sim_exec_ctx_t *ctx, const isa_ptr_t *p, unsigned start,
                  unsigned nparts, unsigned nelems, const char *operand)
{
    uint8_t *mem, *init;
    uint32_t pb;
    if (p->space == ISA_SPACE_NONE)
        return sim_fail(ctx, "%s: pointer missing (space none)", operand);
    if (space_of(ctx, p->space, &mem, &pb, &init) != 0)
        return sim_fail(ctx, "%s: pointers must be in sbuf or psum, not %s",
                        operand, space_name(p->space));
    if (!isa_dtype_valid(p->dtype))
        return sim_fail(ctx, "%s: invalid dtype %u", operand, p->dtype);
    if (nparts < 1 || start + nparts > ISA_NUM_PARTITIONS)
        return sim_fail(ctx, "%s: partitions start %u count %u outside 0..127",
                        operand, start, nparts);
    uint64_t hi = (uint64_t)p->addr + (uint64_t)nelems * isa_dtype_size(p->dtype);
    if (hi > pb)
        return sim_fail(ctx, "%s: partition %u bytes [%u, %llu) outside %s "
                        "(%u bytes per partition)", operand, start, p->addr,
                        (unsigned long long)hi, space_name(p->space), pb);
    return 0;
}

/* Engine access rules: Pool has no PSUM port; PE reads SBUF, writes PSUM.
 * DVE and Activation reach both spaces (the inline test below). */
static int space_rule(sim_exec_ctx_t *ctx, unsigned space, sim_access_t acc, const char *name)
{
    if (ctx->engine == ISA_ENG_POOL && space == ISA_SPACE_PSUM)
        return sim_fail(ctx, "%s: the Pool engine cannot access psum", name);
    if (ctx->engine == ISA_ENG_PE) {
        if ((acc & SIM_RD) && space != ISA_SPACE_SBUF)
            return sim_fail(ctx, "%s: the PE reads sbuf only, not %s", name,
                            space_name(space));
        if ((acc & SIM_WR) && space != ISA_SPACE_PSUM)
            return sim_fail(ctx, "%s: the PE writes psum only, not %s", name,
                            space_name(space));
    }
    return 0;
}

static inline int space_allowed(sim_exec_ctx_t *ctx, unsigned space, sim_access_t acc,
                                const char *name)
{
    if (ctx->engine != ISA_ENG_POOL && ctx->engine != ISA_ENG_PE)
        return 0;
    return space_rule(ctx, space, acc, name);
}

int sim_opnd_check_init(sim_exec_ctx_t *ctx, const sim_opnd_t *o)
{
    if (!o->init)
        return 0;
    for (unsigned p = 0; p < o->nparts; p++) {
        const uint8_t *row = o->init + (uint64_t)(o->start + p) * o->pb;
        for (uint32_t i = 0; i < o->nfree; i++)
            for (unsigned b = 0; b < o->esize; b++)
                if (!row[sim_off(o, i) + b])
                    return sim_fail_data(ctx, "%s: read of uninitialised %s byte at "
                                    "partition %u address 0x%x (never written)",
                                    o->name, space_name(o->space), o->start + p,
                                    sim_off(o, i) + b);
    }
    return 0;
}

void sim_opnd_mark_init(sim_opnd_t *o)
{
    for (unsigned p = 0; p < o->nparts; p++) {
        uint8_t *row = o->init + (uint64_t)(o->start + p) * o->pb;
        for (uint32_t i = 0; i < o->nfree; i++)
            memset(row + sim_off(o, i), 1, o->esize);
    }
}

void sim_scratch_grow(sim_scratch_t *s)
{
    uint32_t *b = realloc(s->buf, s->want * sizeof *b);
    if (b) { /* on failure keep the old buffer: tables fall back to malloc */
        s->buf = b;
        s->cap = s->want;
    }
}

void sim_scratch_free(sim_scratch_t *s)
{
    free(s->buf);
    memset(s, 0, sizeof *s);
}

/* An offset table of n entries: from the engine's scratch arena when it
 * fits, else malloc'ed (owned, freed by sim_opnd_free). */
static int offsets_alloc(sim_exec_ctx_t *ctx, sim_opnd_t *o, uint32_t n)
{
    sim_scratch_t *s = ctx->scratch;
    if (s) {
        s->want += n;
        if (s->cap - s->used >= n) {
            o->off = s->buf + s->used;
            s->used += n;
            return 0;
        }
    }
    o->off = malloc((size_t)(n ? n : 1) * sizeof *o->off);
    if (!o->off)
        return sim_fail_data(ctx, "%s: out of memory", o->name);
    o->owned = true;
    return 0;
}

/* When flat element i of t sits at addr + i * step bytes (dims merge:
 * each outer step equals the inner step times the inner count; dims of
 * count 1 do not matter), sets *step and returns true. */
static inline bool tap_linear(const isa_tap_t *t, unsigned esize, int64_t *step)
{
    int64_t s = 0, next = 0; /* next: the step an outer dim must have */
    bool have = false;
    for (unsigned d = 0; d < t->ndims; d++) {
        if (t->count[d] <= 1)
            continue;
        if (!have) {
            s = t->step[d];
            have = true;
        } else if ((int64_t)t->step[d] != next)
            return false;
        next = (int64_t)t->step[d] * t->count[d];
    }
    *step = s * (int64_t)esize;
    return true;
}

/* always inlined: a call here costs ~5 % of a tiny instruction (callgrind) */
static inline __attribute__((always_inline)) int
opnd_common(sim_exec_ctx_t *ctx, sim_opnd_t *o, const char *name, sim_access_t acc)
{
    if (space_allowed(ctx, o->space, acc, name) != 0) {
        sim_opnd_free(o);
        return -1;
    }
    space_of(ctx, o->space, &o->mem, &o->pb, &o->init); /* sbuf or psum: checked */
    sim_lazy_touch(o->space == ISA_SPACE_SBUF ? ctx->sbuf_z : ctx->psum_z, o->start, o->nparts,
                   o->lo, o->hi);
    if ((acc & SIM_RD) && o->init && sim_opnd_check_init(ctx, o) != 0) {
        sim_opnd_free(o);
        o->mem = NULL;
        return -1;
    }
    return 0;
}

/* The checks of tap_check_ext without messages, for the hot path: true
 * when t is valid (then fills the extent and element count); false sends
 * the caller to tap_check_ext for the precise error. */
static inline bool tap_ok_fast(const sim_exec_ctx_t *ctx, const isa_tap_t *t, int64_t *lo_out,
                               int64_t *hi_out, uint64_t *n_out)
{
    uint32_t pb = t->space == ISA_SPACE_SBUF ? ctx->sbuf_pb
                  : t->space == ISA_SPACE_PSUM ? ctx->psum_pb : 0;
    int64_t es = isa_dtype_size(t->dtype);
    if (pb == 0 || es == 0 || t->nparts < 1 || t->start + t->nparts > ISA_NUM_PARTITIONS ||
        t->ndims > ISA_MAX_FREE_DIMS)
        return false;
    int64_t lo, hi;
    uint64_t n = tap_span(t, &lo, &hi);
    unsigned align = t->nparts > 64 ? 128 : t->nparts > 32 ? 64 : 32;
    if (n == 0 || n > SIM_MAX_FREE_ELEMS || t->start % align || lo < 0 || hi > (int64_t)pb)
        return false;
    *lo_out = lo;
    *hi_out = hi;
    *n_out = n;
    return true;
}

/* tap_memo slot of a pattern, and whether two patterns are the same (all
 * members are 32-bit: no padding) */
static inline unsigned tap_memo_slot(const isa_tap_t *t)
{
    return (t->addr >> 2 ^ t->addr >> 9 ^ t->count[0] ^ t->start) & (SIM_TAP_MEMO - 1);
}

/* Every field of o is assigned (no memset: this runs for each operand of
 * each instruction). */
static int opnd_tap_resolve(sim_exec_ctx_t *ctx, sim_opnd_t *o, const isa_tap_t *t,
                            const char *name, sim_access_t acc)
{
    o->name = name;
    o->mem = NULL;
    o->init = NULL;
    o->pb = 0;
    o->off = NULL;
    o->owned = false;
    o->plan = NULL;
    o->pslot = 0;
    bool linear;
    uint64_t n = 0;
    sim_tap_memo_t *m = ctx->tap_memo ? &ctx->tap_memo[tap_memo_slot(t)] : NULL;
    if (m && m->valid && sim_tap_same(&m->tap, t)) {
        o->lo = m->lo;
        o->hi = m->hi;
        n = m->n;
        o->lstep = m->lstep;
        linear = true;
    } else {
        if (!tap_ok_fast(ctx, t, &o->lo, &o->hi, &n) &&
            tap_check_ext(ctx, t, name, &o->lo, &o->hi, &n) != 0)
            return -1;
        linear = tap_linear(t, isa_dtype_size(t->dtype), &o->lstep);
        if (m && linear)
            *m = (sim_tap_memo_t){ .tap = *t, .lo = o->lo, .hi = o->hi, .lstep = o->lstep,
                                   .n = (uint32_t)n, .valid = true };
    }
    o->tap = *t;
    o->space = t->space;
    o->dtype = t->dtype;
    o->esize = isa_dtype_size(t->dtype);
    o->start = t->start;
    o->nparts = t->nparts;
    o->acc = acc;
    o->nfree = (uint32_t)n;
    o->base = t->addr;
    if (!linear) {
        o->lstep = 0;
        if (offsets_alloc(ctx, o, o->nfree) != 0)
            return -1;
        /* Odometer over dims 0..ndims-1, dim 0 innermost. */
        uint32_t idx[ISA_MAX_FREE_DIMS] = { 0 };
        int64_t cur = t->addr;
        for (uint32_t i = 0; i < o->nfree; i++) {
            o->off[i] = (uint32_t)cur;
            for (unsigned d = 0; d < t->ndims; d++) {
                cur += (int64_t)t->step[d] * o->esize;
                if (++idx[d] < t->count[d])
                    break;
                cur -= (int64_t)t->step[d] * o->esize * t->count[d];
                idx[d] = 0;
            }
        }
    }
    return opnd_common(ctx, o, name, acc);
}

int sim_opnd_tap_slow(sim_exec_ctx_t *ctx, sim_opnd_t *o, const isa_tap_t *t,
                      const char *name, sim_access_t acc, unsigned k)
{
    if (opnd_tap_resolve(ctx, o, t, name, acc) != 0)
        return -1;
    sim_plan_t *pl = ctx->plan;
    if (pl && k < SIM_PLAN_OPNDS && !o->off && !o->init) {
        /* linear, no --check-uninit map: nothing depends on the run */
        pl->o[k] = *o;
        pl->row_ok = false;
    }
    sim_fp_note(ctx, o);
    return 0;
}

int sim_opnd_ptr(sim_exec_ctx_t *ctx, sim_opnd_t *o, const isa_ptr_t *p,
                 unsigned start, unsigned nparts, unsigned nelems,
                 const char *name, sim_access_t acc)
{
    sim_opnds_none(o, 1);
    o->name = name;
    if (sim_ptr_check(ctx, p, start, nparts, nelems, name) != 0)
        return -1;
    o->space = p->space;
    o->dtype = p->dtype;
    o->esize = isa_dtype_size(p->dtype);
    o->start = start;
    o->nparts = nparts;
    o->acc = acc;
    o->nfree = nelems;
    o->tap = (isa_tap_t){ .addr = p->addr, .dtype = p->dtype, .space = p->space,
                          .start = start, .nparts = nparts, .ndims = 1,
                          .step = { 1 }, .count = { nelems } };
    o->base = p->addr;
    o->lstep = o->esize;
    o->lo = p->addr;
    o->hi = (int64_t)p->addr + (int64_t)nelems * o->esize;
    if (opnd_common(ctx, o, name, acc) != 0)
        return -1;
    sim_fp_note(ctx, o);
    return 0;
}

void sim_copy_elem(const sim_opnd_t *src, unsigned sp, uint32_t si, const sim_opnd_t *dst,
                   unsigned dp, uint32_t di)
{
    const uint8_t *s = sim_el(src, sp, si);
    uint8_t *t = sim_el(dst, dp, di);
    if (src->dtype == dst->dtype)
        memmove(t, s, src->esize);
    else
        sim_val_store(t, dst->dtype, sim_val_load(s, src->dtype));
}

int sim_opnds_in_out(sim_exec_ctx_t *ctx, sim_opnd_t o[2], const isa_tap_t *in,
                     const isa_tap_t *out)
{
    if (sim_opnd_tap(ctx, &o[0], in, "in", SIM_RD) || sim_opnd_tap(ctx, &o[1], out, "out", SIM_WR))
        return -1;
    return sim_same_shape(ctx, &o[1], &o[0]);
}

int sim_shape_error(sim_exec_ctx_t *ctx, const sim_opnd_t *a, const sim_opnd_t *b)
{
    if (a->nparts != b->nparts)
        return sim_fail(ctx, "%s has %u partitions but %s has %u", b->name, b->nparts,
                        a->name, a->nparts);
    if (a->nfree != b->nfree)
        return sim_fail(ctx, "%s has %u elements per partition but %s has %u",
                        b->name, b->nfree, a->name, a->nfree);
    return 0;
}

/* ---- cost helpers (the small ones are inline in ops.h) ---- */

uint64_t sim_cost_engine(const tpb_target_t *t, isa_engine_t e, uint64_t work)
{
    if (e == ISA_ENG_POOL)
        return sim_cost_pool(t, work);
    if (e == ISA_ENG_ACT)
        return sim_cost_act(t, work);
    return sim_cost_dve(t, work);
}
