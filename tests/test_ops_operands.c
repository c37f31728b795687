/* test_ops_operands.c - resolved operands (sim/tap.c): the hot-path
 * checks agree with the precise checker, element offsets of linear and
 * table patterns match an independent mixed-radix decomposition, and the
 * per-engine scratch arena hands out disjoint tables and grows. */
#include <stdio.h>

#include "ops_fixture.h"
#include "ops.h"
#include "xorshift.h"

/* xorshift64: reproducible random patterns */
static uint64_t rnd(uint64_t *s)
{
    return xorshift64(s);
}

static int64_t rnd_range(uint64_t *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd(s) % (uint64_t)(hi - lo + 1));
}

/* Mostly valid patterns near the space limits, some invalid in every field. */
static isa_tap_t random_tap(uint64_t *s, uint32_t pb)
{
    isa_tap_t t;
    memset(&t, 0, sizeof t);
    unsigned pick = (unsigned)rnd_range(s, 0, 19);
    t.space = pick == 0 ? ISA_SPACE_NONE : pick == 1 ? ISA_SPACE_HBM
              : pick < 11 ? ISA_SPACE_SBUF : ISA_SPACE_PSUM;
    t.dtype = rnd_range(s, 0, 30) == 0 ? ISA_DT_COUNT : (unsigned)rnd_range(s, 0, ISA_DT_COUNT - 1);
    static const unsigned parts[] = { 1, 2, 16, 32, 33, 64, 65, 128, 0, 129 };
    t.nparts = parts[rnd_range(s, 0, 9)];
    static const unsigned starts[] = { 0, 0, 0, 32, 64, 96, 1, 127 };
    t.start = starts[rnd_range(s, 0, 7)];
    t.ndims = (unsigned)rnd_range(s, 0, ISA_MAX_FREE_DIMS + (rnd_range(s, 0, 20) == 0));
    for (unsigned d = 0; d < ISA_MAX_FREE_DIMS; d++) {
        t.count[d] = (uint32_t)rnd_range(s, rnd_range(s, 0, 40) == 0 ? 0 : 1, 6);
        t.step[d] = (int32_t)rnd_range(s, -9, 9);
    }
    /* sometimes exactly contiguous (dims merge into one run) */
    if (rnd_range(s, 0, 2) == 0 && t.ndims > 0) {
        int32_t st = 1;
        for (unsigned d = 0; d < t.ndims && d < ISA_MAX_FREE_DIMS; d++) {
            t.step[d] = st;
            st *= (int32_t)t.count[d];
        }
    }
    uint32_t span = pb;
    t.addr = rnd_range(s, 0, 3) == 0 ? (uint32_t)rnd_range(s, span - 256, span)
                                     : (uint32_t)rnd_range(s, 0, 512);
    return t;
}

/* Offset of flat element i by mixed-radix decomposition (dim 0 fastest). */
static int64_t expect_off(const isa_tap_t *t, uint32_t i)
{
    int64_t off = t->addr;
    for (unsigned d = 0; d < t->ndims; d++) {
        uint32_t c = t->count[d];
        off += (int64_t)(i % c) * t->step[d] * isa_dtype_size(t->dtype);
        i /= c;
    }
    return off;
}

static void check_random_patterns(fx_t *fx, uint64_t seed)
{
    uint64_t s = seed;
    char slow[sizeof fx->err.msg];
    unsigned accepted = 0, rejected = 0, linear = 0, table = 0;
    for (int it = 0; it < 20000; it++) {
        isa_tap_t t = random_tap(&s, FX_SBUF_PB);
        fx->err.msg[0] = 0;
        int want = sim_tap_check(&fx->ctx, &t, "x");
        snprintf(slow, sizeof slow, "%s", fx->err.msg);
        fx->err.msg[0] = 0;
        if (fx->ctx.scratch)
            sim_scratch_reset(fx->ctx.scratch);
        sim_opnd_t o;
        int got = sim_opnd_tap(&fx->ctx, &o, &t, "x", SIM_RD);
        if (want != 0) {
            assert_int_equal(got, -1);
            assert_string_equal(fx->err.msg, slow); /* the same precise message */
            assert_null(o.mem);
            sim_opnd_free(&o);
            rejected++;
            continue;
        }
        assert_int_equal(got, 0);
        accepted++;
        uint64_t n = 1;
        for (unsigned d = 0; d < t.ndims; d++)
            n *= t.count[d];
        assert_int_equal(o.nfree, n);
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (uint32_t i = 0; i < o.nfree; i++) {
            int64_t e = expect_off(&t, i);
            if (sim_off(&o, i) != (uint32_t)e)
                fail_msg("pattern %d element %u: offset %u, expected %lld", it, i,
                         sim_off(&o, i), (long long)e);
            lo = e < lo ? e : lo;
            hi = e + o.esize > hi ? e + o.esize : hi;
        }
        assert_int_equal(o.lo, lo);
        assert_int_equal(o.hi, hi);
        if (o.off)
            table++;
        else
            linear++;
        sim_opnd_free(&o);
    }
    /* the generator reaches every path */
    assert_true(accepted > 2000 && rejected > 2000 && linear > 500 && table > 500);
}

static void test_patterns_with_scratch(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    check_random_patterns(fx, 0x9E3779B97F4A7C15ull);
    fx_free(fx);
}

static void test_patterns_without_scratch(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    fx->ctx.scratch = NULL; /* every table malloc'ed and owned */
    check_random_patterns(fx, 12345);
    fx_free(fx);
}

/* A transposing pattern: not linear, needs a table. */
static isa_tap_t transposed(uint32_t addr, uint32_t rows, uint32_t cols)
{
    isa_tap_t t = tap1(ISA_SPACE_SBUF, ISA_DT_FP32, addr, 0, 1, rows * cols);
    t.ndims = 2;
    t.count[0] = rows;
    t.step[0] = (int32_t)cols;
    t.count[1] = cols;
    t.step[1] = 1;
    return t;
}

static void test_scratch_disjoint_and_grows(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    sim_scratch_t *sc = fx->ctx.scratch;
    isa_tap_t a = transposed(0, 4, 8), b = transposed(1024, 8, 4);
    sim_opnd_t oa, ob;
    /* first instruction: the arena is empty, both tables are malloc'ed */
    sim_scratch_reset(sc);
    assert_int_equal(sim_opnd_tap(&fx->ctx, &oa, &a, "a", SIM_RD), 0);
    assert_int_equal(sim_opnd_tap(&fx->ctx, &ob, &b, "b", SIM_RD), 0);
    assert_true(oa.owned && ob.owned);
    sim_opnd_free(&oa);
    sim_opnd_free(&ob);
    /* the next reset grows the arena to that demand: both now fit, disjoint */
    sim_scratch_reset(sc);
    assert_true(sc->cap >= 64);
    assert_int_equal(sim_opnd_tap(&fx->ctx, &oa, &a, "a", SIM_RD), 0);
    assert_int_equal(sim_opnd_tap(&fx->ctx, &ob, &b, "b", SIM_RD), 0);
    assert_false(oa.owned || ob.owned);
    assert_true(oa.off + oa.nfree <= ob.off || ob.off + ob.nfree <= oa.off);
    for (uint32_t i = 0; i < 32; i++) {
        assert_int_equal(sim_off(&oa, i), (uint32_t)expect_off(&a, i));
        assert_int_equal(sim_off(&ob, i), (uint32_t)expect_off(&b, i));
    }
    sim_opnd_free(&oa);
    sim_opnd_free(&ob);
    fx_free(fx);
}

/* A strided op end to end: out = in (transposed view) + 1 through the
 * scheduler's path (fx_run resets the arena), twice, so the second run
 * uses arena tables. */
static void test_strided_op_uses_tables(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    float v[32];
    for (int i = 0; i < 32; i++)
        v[i] = (float)i;
    fx_put(fx, ISA_SPACE_SBUF, 0, 0, ISA_DT_FP32, v, 32);
    for (int rep = 0; rep < 2; rep++) {
        isa_decoded_t d = mk(ISA_OP_TENSOR_SCALAR);
        d.inst.f.TS.in = transposed(0, 4, 8); /* element i = in[(i%4)*8 + i/4] */
        d.inst.f.TS.out = tap1(ISA_SPACE_SBUF, ISA_DT_FP32, 512, 0, 1, 32);
        d.inst.f.TS.op0 = ISA_ALU_ADD;
        d.inst.f.TS.s0 = f2u(1.0f + (float)rep);
        d.inst.f.TS.op1 = ISA_ALU_BYPASS;
        assert_int_equal(fx_run(fx, &d), 0);
        for (unsigned i = 0; i < 32; i++)
            assert_feq(fx_get(fx, ISA_SPACE_SBUF, 0, 512, ISA_DT_FP32, i),
                       (float)((i % 4) * 8 + i / 4) + 1.0f + (float)rep);
    }
    assert_true(fx->scratch.cap >= 32);
    fx_free(fx);
}

/* One field of base changed (or none): patterns that share a plan slot
 * but differ in a single member. */
static isa_tap_t mutate(isa_tap_t t, uint64_t *s)
{
    switch (rnd_range(s, 0, 9)) {
    case 0: t.addr += (uint32_t)rnd_range(s, 1, 64); break;
    case 1: t.dtype = (unsigned)rnd_range(s, 0, ISA_DT_COUNT - 1); break;
    case 2: t.space = t.space == ISA_SPACE_SBUF ? ISA_SPACE_PSUM : ISA_SPACE_SBUF; break;
    case 3: t.start = (unsigned)rnd_range(s, 0, 3) * 32; break;
    case 4: t.nparts = (unsigned)rnd_range(s, 1, 128); break;
    case 5: t.count[rnd_range(s, 0, ISA_MAX_FREE_DIMS - 1)] = (uint32_t)rnd_range(s, 1, 6); break;
    case 6: t.step[rnd_range(s, 0, ISA_MAX_FREE_DIMS - 1)] = (int32_t)rnd_range(s, -4, 4); break;
    case 7: t.ndims = (unsigned)rnd_range(s, 0, ISA_MAX_FREE_DIMS); break;
    case 8: t.addr = (uint32_t)rnd_range(s, FX_SBUF_PB - 64, FX_SBUF_PB); break;
    default: break;
    }
    return t;
}

static void assert_same_opnd(const sim_opnd_t *a, const sim_opnd_t *b)
{
    assert_ptr_equal(a->mem, b->mem);
    assert_ptr_equal(a->init, b->init);
    assert_true(a->pb == b->pb && a->space == b->space && a->dtype == b->dtype &&
                a->esize == b->esize && a->start == b->start && a->nparts == b->nparts &&
                a->nfree == b->nfree && a->lo == b->lo && a->hi == b->hi && a->acc == b->acc);
    assert_string_equal(a->name, b->name);
    assert_memory_equal(&a->tap, &b->tap, sizeof a->tap);
    for (uint32_t i = 0; i < a->nfree; i++)
        assert_int_equal(sim_off(a, i), sim_off(b, i));
}

/* With a class plan (ops.h sim_plan_t) an operand is taken from the plan
 * only when pattern, name and access equal the stored ones: patterns that
 * differ from the stored one in any single member, or an other name or
 * access at the same position, resolve exactly as without a plan (the
 * same operand, or the same error message). */
static void test_plan_matches_full_resolution(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_PE); /* PE: the access decides the legal space */
    fx_t *ref = fx_new("trn2", ISA_ENG_PE);
    sim_plan_t *plan = calloc(1, sizeof *plan);
    assert_non_null(plan);
    static const char *const names[] = { "in", "out" };
    uint64_t s = 77;
    unsigned hits = 0, misses = 0, errors = 0;
    /* slot k: a pattern read (SBUF) or written (PSUM), as the PE allows */
    isa_tap_t base[SIM_PLAN_OPNDS];
    for (unsigned k = 0; k < SIM_PLAN_OPNDS; k++)
        base[k] = tap1(k % 2 ? ISA_SPACE_PSUM : ISA_SPACE_SBUF, ISA_DT_FP32, 64 * k, 0, 32, 8);
    for (int it = 0; it < 20000; it++) {
        unsigned k = (unsigned)rnd_range(&s, 0, SIM_PLAN_OPNDS - 1);
        bool same = rnd_range(&s, 0, 1) == 0;  /* half the time: the slot's own operand */
        isa_tap_t t = same ? base[k] : mutate(base[k], &s);
        const char *name = names[k % 2];
        sim_access_t acc = k % 2 ? SIM_WR : SIM_RD;
        if (!same && rnd_range(&s, 0, 3) == 0)
            name = names[1 - k % 2];
        if (!same && rnd_range(&s, 0, 3) == 0)
            acc = k % 2 ? SIM_RD : SIM_WR;
        fx->ctx.plan = plan;
        fx->ctx.plan_i = k;
        sim_scratch_reset(fx->ctx.scratch);
        sim_scratch_reset(ref->ctx.scratch);
        const sim_opnd_t before = plan->o[k];
        bool hit = before.mem && before.name == name && before.acc == acc &&
                   memcmp(&before.tap, &t, sizeof t) == 0;
        fx->err.msg[0] = ref->err.msg[0] = 0;
        sim_opnd_t a, b;
        int ra = sim_opnd_tap(&fx->ctx, &a, &t, name, acc);
        int rb = sim_opnd_tap(&ref->ctx, &b, &t, name, acc);
        assert_int_equal(ra, rb);
        assert_string_equal(fx->err.msg, ref->err.msg);
        if (ra == 0) {
            /* both contexts' memories differ: compare against the plan's */
            b.mem = a.mem;
            assert_same_opnd(&a, &b);
            assert_ptr_equal(a.plan, hit ? plan : NULL);
        } else
            errors++;
        hits += hit;
        misses += !hit;
        sim_opnd_free(&a);
        sim_opnd_free(&b);
    }
    assert_true(hits > 1000 && misses > 1000 && errors > 1000);
    free(plan);
    fx_free(fx);
    fx_free(ref);
}

/* sim_row_len of operands taken from a plan is remembered by the plan
 * until one of its slots is stored again: an input that changes from the
 * output itself (in place: one run) to a partial overlap (no row path)
 * is seen. */
static void test_plan_row_len_invalidated(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    sim_plan_t *plan = calloc(1, sizeof *plan);
    assert_non_null(plan);
    isa_tap_t out = tap1(ISA_SPACE_SBUF, ISA_DT_FP32, 0, 0, 1, 8);
    isa_tap_t ins[2] = { out, tap1(ISA_SPACE_SBUF, ISA_DT_FP32, 4, 0, 1, 8) };
    static const uint32_t want[] = { 8, 8, 0, 0, 8 };
    static const unsigned which[] = { 0, 0, 1, 1, 0 };
    for (unsigned r = 0; r < 5; r++) {
        fx->ctx.plan = plan;
        fx->ctx.plan_i = 0;
        sim_opnd_t o[2];
        assert_int_equal(sim_opnd_tap(&fx->ctx, &o[0], &ins[which[r]], "in", SIM_RD), 0);
        assert_int_equal(sim_opnd_tap(&fx->ctx, &o[1], &out, "out", SIM_WR), 0);
        const sim_opnd_t *in[1] = { &o[0] };
        assert_int_equal(sim_row_len(&o[1], in, 1), want[r]);
        /* taken from the plan on the repeated instruction only */
        assert_true((o[0].plan != NULL) == (r > 0 && which[r] == which[r - 1]));
    }
    free(plan);
    fx_free(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_patterns_with_scratch),
        cmocka_unit_test(test_patterns_without_scratch),
        cmocka_unit_test(test_scratch_disjoint_and_grows),
        cmocka_unit_test(test_strided_op_uses_tables),
        cmocka_unit_test(test_plan_matches_full_resolution),
        cmocka_unit_test(test_plan_row_len_invalidated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
