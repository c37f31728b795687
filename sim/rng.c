/* rng.c - the engines' pseudo-random number generators and the random
 * opcodes: Rng, Rand2, RandGetState, RandSetState, SetRngSeed (NKI rng,
 * rand2, rand_get_state, rand_set_state, set_rng_seed), plus the draws
 * Memset random and Dropout make.  Semantics: docs/semantics.md "Random
 * numbers".
 *
 * Every engine has one XORWOW generator (Marsaglia 2003) per lane and
 * generator slot: sim_rng_t.  A lane is an absolute partition (0..127).
 * Vector uses 4 generators per lane (NKI: 24 state words), GpSimd 1 (6
 * words); element i of a partition's run draws from generator i % gens.
 * State words, in order: x, y, z, w, v, d. */
#include "ops.h"

unsigned sim_rng_gens(isa_engine_t e)
{
    return e == ISA_ENG_DVE ? SIM_RNG_GENS : 1;
}

static uint64_t splitmix64_next(uint64_t *z)
{
    uint64_t r = (*z += 0x9E3779B97F4A7C15ull);
    r = (r ^ (r >> 30)) * 0xBF58476D1CE4E5B9ull;
    r = (r ^ (r >> 27)) * 0x94D049BB133111EBull;
    return r ^ (r >> 31);
}

/* Generator (lane, gen) of seed s: z = s + (lane*4 + gen + 1) *
 * 0xD1B54A32D192ED03; the six words are the high halves of six splitmix64
 * outputs from z; an all-zero x..v becomes x = 1. */
void sim_rng_seed(sim_rng_t *r, uint64_t seed)
{
    for (unsigned l = 0; l < SIM_RNG_LANES; l++)
        for (unsigned g = 0; g < SIM_RNG_GENS; g++) {
            uint32_t *s = r->s[l][g];
            uint64_t z = seed + (uint64_t)(l * SIM_RNG_GENS + g + 1) * 0xD1B54A32D192ED03ull;
            for (unsigned w = 0; w < SIM_RNG_WORDS; w++)
                s[w] = (uint32_t)(splitmix64_next(&z) >> 32);
            if ((s[0] | s[1] | s[2] | s[3] | s[4]) == 0)
                s[0] = 1;
        }
}

/* One XORWOW step. */
uint32_t sim_rng_u32(sim_rng_t *r, unsigned lane, unsigned gen)
{
    uint32_t *s = r->s[lane][gen];
    uint32_t t = s[0] ^ (s[0] >> 2);
    s[0] = s[1];
    s[1] = s[2];
    s[2] = s[3];
    s[3] = s[4];
    s[4] = (s[4] ^ (s[4] << 4)) ^ (t ^ (t << 1));
    s[5] += 362437u;
    return s[5] + s[4];
}

/* Uniform in [0, 1): the top 24 bits times 2^-24. */
float sim_rng_unit(sim_rng_t *r, unsigned lane, unsigned gen)
{
    return (float)(sim_rng_u32(r, lane, gen) >> 8) * 0x1p-24f;
}

static int lanes_ok(sim_exec_ctx_t *ctx, const sim_opnd_t *o)
{
    if (o->start + o->nparts > SIM_RNG_LANES)
        return sim_fail(ctx, "%s: partitions %u..%u beyond the %u PRNG lanes", o->name, o->start,
                        o->start + o->nparts - 1, SIM_RNG_LANES);
    return 0;
}

static bool int_dtype(unsigned dt)
{
    return isa_dtype_kind(dt) != ISA_DK_F;
}

/* ------------------------------------------------------------------ */
/* Rng: 32 random bits per element, the low bytes kept (integer dst)    */

static int exec_rng(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    sim_opnd_t o;
    if (sim_opnd_tap(ctx, &o, &d->inst.f.RNG.out, "out", SIM_WR))
        return -1;
    int rc = -1;
    if (!int_dtype(o.dtype)) {
        sim_fail(ctx, "out: dtype %s: Rng writes an integer dtype (int8/16/32, uint8/16/32)",
                 isa_dtype_name(o.dtype));
        goto done;
    }
    if (lanes_ok(ctx, &o))
        goto done;
    unsigned gens = sim_rng_gens(ctx->engine);
    if (!ctx->timing_only)
        for (unsigned p = 0; p < o.nparts; p++)
            for (uint32_t i = 0; i < o.nfree; i++) {
                uint32_t v = sim_rng_u32(ctx->rng, o.start + p, i % gens);
                uint8_t *t = sim_el(&o, p, i);
                for (unsigned b = 0; b < o.esize; b++)
                    t[b] = (uint8_t)(v >> (8 * b));
            }
    sim_opnd_mark(&o);
    rc = 0;
done:
    sim_opnd_free(&o);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Rand2: out = min + (max - min) * u in fp32, u uniform in [0, 1)      */

static int rand2_bound(sim_exec_ctx_t *ctx, sim_opnd_t *po, uint32_t bits, bool is_ptr,
                       const sim_opnd_t *out, const char *name, float *imm)
{
    *imm = sim_f32_from_bits(bits);
    if (!is_ptr)
        return 0;
    isa_ptr_t p = sim_ptr_from_bits(bits);
    return sim_opnd_ptr(ctx, po, &p, out->start, out->nparts, 1, name, SIM_RD);
}

static int exec_rand2(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    const isa_fmt_RAND2_t *f = &d->inst.f.RAND2;
    sim_opnd_t o[3];
    sim_opnds_none(o, 3);
    int rc = -1;
    float lo, hi;
    if (sim_opnd_tap(ctx, &o[0], &f->out, "out", SIM_WR) || lanes_ok(ctx, &o[0]) ||
        rand2_bound(ctx, &o[1], f->min, f->min_is_ptr, &o[0], "min", &lo) ||
        rand2_bound(ctx, &o[2], f->max, f->max_is_ptr, &o[0], "max", &hi))
        goto done;
    unsigned gens = sim_rng_gens(ctx->engine);
    for (unsigned p = 0; p < o[0].nparts && !ctx->timing_only; p++) {
        float a = f->min_is_ptr ? num_load_f32(sim_el(&o[1], p, 0), o[1].dtype) : lo;
        float b = f->max_is_ptr ? num_load_f32(sim_el(&o[2], p, 0), o[2].dtype) : hi;
        if (!(a < b)) {
            sim_fail_data(ctx, "min/max: partition %u: min %g is not below max %g", o[0].start + p,
                     (double)a, (double)b);
            goto done;
        }
        float span = b - a;
        for (uint32_t i = 0; i < o[0].nfree; i++) {
            float u = sim_rng_unit(ctx->rng, o[0].start + p, i % gens);
            sim_val_store(sim_el(&o[0], p, i), o[0].dtype, sim_val_f(a + span * u));
        }
    }
    sim_opnd_mark(&o[0]);
    rc = 0;
done:
    for (unsigned k = 0; k < 3; k++)
        sim_opnd_free(&o[k]);
    return rc;
}

/* ------------------------------------------------------------------ */
/* RandGetState / RandSetState: [P, 6*gens] uint32, lane = partition    */

static int state_opnd(sim_exec_ctx_t *ctx, sim_opnd_t *o, const isa_tap_t *t, const char *name,
                      sim_access_t acc)
{
    if (sim_opnd_tap(ctx, o, t, name, acc) || lanes_ok(ctx, o))
        return -1;
    uint32_t want = SIM_RNG_WORDS * sim_rng_gens(ctx->engine);
    if (o->dtype != ISA_DT_UINT32)
        return sim_fail(ctx, "%s: dtype %s: the PRNG state is uint32", name,
                        isa_dtype_name(o->dtype));
    if (o->nfree != want)
        return sim_fail(ctx, "%s: %u elements per partition; %s's XORWOW state is %u words",
                        name, o->nfree, isa_engine_name(ctx->engine), want);
    return 0;
}

static int exec_get_state(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    sim_opnd_t o;
    int rc = -1;
    if (state_opnd(ctx, &o, &d->inst.f.RNG.out, "out", SIM_WR))
        goto done;
    if (!ctx->timing_only)
        for (unsigned p = 0; p < o.nparts; p++)
            for (uint32_t i = 0; i < o.nfree; i++) {
                uint32_t v = ctx->rng->s[o.start + p][i / SIM_RNG_WORDS][i % SIM_RNG_WORDS];
                memcpy(sim_el(&o, p, i), &v, 4);
            }
    sim_opnd_mark(&o);
    rc = 0;
done:
    sim_opnd_free(&o);
    return rc;
}

static int exec_set_state(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    sim_opnd_t o;
    int rc = -1;
    if (state_opnd(ctx, &o, &d->inst.f.RSTATE.in, "in", SIM_RD))
        goto done;
    if (!ctx->timing_only)
        for (unsigned p = 0; p < o.nparts; p++)
            for (uint32_t i = 0; i < o.nfree; i++)
                memcpy(&ctx->rng->s[o.start + p][i / SIM_RNG_WORDS][i % SIM_RNG_WORDS],
                       sim_el(&o, p, i), 4);
    rc = 0;
done:
    sim_opnd_free(&o);
    return rc;
}

/* ------------------------------------------------------------------ */
/* SetRngSeed: one 32-bit value seeds every lane (sim_rng_seed)          */

static int exec_set_seed(sim_exec_ctx_t *ctx, const isa_decoded_t *d)
{
    sim_opnd_t o;
    int rc = -1;
    if (sim_opnd_tap(ctx, &o, &d->inst.f.RSTATE.in, "in", SIM_RD))
        goto done;
    if (o.nparts != 1 || o.nfree != 1 || o.esize != 4) {
        sim_fail(ctx, "in: SetRngSeed reads one 32-bit value ([1,1]), got %u x %u of %s",
                 o.nparts, o.nfree, isa_dtype_name(o.dtype));
        goto done;
    }
    if (!ctx->timing_only) {
        uint32_t v;
        memcpy(&v, sim_el(&o, 0, 0), 4);
        sim_rng_seed(ctx->rng, v);
    }
    rc = 0;
done:
    sim_opnd_free(&o);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Costs: one elementwise pass over the written or read elements (as
 * Memset, docs/timing-compute.md). */

static uint64_t cost_out(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    const isa_tap_t *tap = d->inst.op == ISA_OP_RAND2 ? &d->inst.f.RAND2.out : &d->inst.f.RNG.out;
    return sim_cost_engine(t, e, sim_tap_n(tap));
}

static uint64_t cost_in(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d)
{
    return sim_cost_engine(t, e, sim_tap_n(&d->inst.f.RSTATE.in));
}

static const sim_opimpl_t impl_rng = { exec_rng, cost_out };
static const sim_opimpl_t impl_rand2 = { exec_rand2, cost_out };
static const sim_opimpl_t impl_get = { exec_get_state, cost_out };
static const sim_opimpl_t impl_set = { exec_set_state, cost_in };
static const sim_opimpl_t impl_seed = { exec_set_seed, cost_in };

const sim_opimpl_t *sim_rng_impl(isa_op_t op)
{
    switch (op) {
    case ISA_OP_RNG: return &impl_rng;
    case ISA_OP_RAND2: return &impl_rand2;
    case ISA_OP_RAND_GET_STATE: return &impl_get;
    case ISA_OP_RAND_SET_STATE: return &impl_set;
    case ISA_OP_SET_RNG_SEED: return &impl_seed;
    default: return NULL;
    }
}
