/* The random-number opcodes (sim/rng.c), TensorStore (sim/seqregs.c) and
 * the rounding ALU ops: XORWOW
 * known answers, state save/restore, seeding determinism, distribution
 * bounds, dtype/shape errors naming the operand. */
#include <math.h>

#include "ops_fixture.h"
#include "ops.h"

#define SB ISA_SPACE_SBUF
#define PS ISA_SPACE_PSUM
#define U32 ISA_DT_UINT32
#define F32 ISA_DT_FP32

/* Marsaglia's xorwow example state (x y z w v d): the first three outputs,
 * from the independent model golden/_xorwow.py. */
static const uint32_t MARSAGLIA[6] = { 123456789u, 362436069u, 521288629u,
                                       88675123u,  5783321u,   6615241u };

static void put_u32(fx_t *fx, unsigned p, uint32_t addr, const uint32_t *v, unsigned n)
{
    memcpy(fx_at(fx, SB, p, addr), v, 4u * n);
}

static int run(fx_t *fx, const isa_decoded_t *d)
{
    int rc = fx_run(fx, d);
    if (rc)
        print_message("%s\n", fx->err.msg);
    return rc;
}

static uint32_t get_u32(fx_t *fx, unsigned space, unsigned p, uint32_t addr, unsigned i)
{
    uint32_t v;
    memcpy(&v, fx_at(fx, space, p, addr + 4 * i), 4);
    return v;
}

static isa_decoded_t out_op(isa_op_t op, isa_tap_t out)
{
    isa_decoded_t d = mk(op);
    d.inst.f.RNG.out = out;
    return d;
}

static isa_decoded_t in_op(isa_op_t op, isa_tap_t in)
{
    isa_decoded_t d = mk(op);
    d.inst.f.RSTATE.in = in;
    return d;
}

static void test_pool_known_answer_and_roundtrip(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_POOL);
    put_u32(fx, 32, 0, MARSAGLIA, 6);
    isa_decoded_t set = in_op(ISA_OP_RAND_SET_STATE, tap1(SB, U32, 0, 32, 1, 6));
    assert_int_equal(run(fx, &set), 0);
    isa_decoded_t rng = out_op(ISA_OP_RNG, tap1(SB, U32, 64, 32, 1, 3));
    assert_int_equal(run(fx, &rng), 0);
    assert_int_equal(get_u32(fx, SB, 32, 64, 0), 0x0EB70507u);
    assert_int_equal(get_u32(fx, SB, 32, 64, 1), 0xDBF10AA0u);
    assert_int_equal(get_u32(fx, SB, 32, 64, 2), 0x4B5FF98Du);
    /* save, draw 5 uint8 (low bytes), restore, draw again: equal */
    isa_decoded_t get = out_op(ISA_OP_RAND_GET_STATE, tap1(SB, U32, 128, 32, 1, 6));
    assert_int_equal(run(fx, &get), 0);
    assert_int_equal(get_u32(fx, SB, 32, 128, 5), 6615241u + 3u * 362437u); /* d advanced 3x */
    isa_decoded_t r8 = out_op(ISA_OP_RNG, tap1(SB, ISA_DT_UINT8, 256, 32, 1, 5));
    assert_int_equal(run(fx, &r8), 0);
    uint8_t first[5];
    memcpy(first, fx_at(fx, SB, 32, 256), 5);
    set.inst.f.RSTATE.in = tap1(SB, U32, 128, 32, 1, 6);
    assert_int_equal(run(fx, &set), 0);
    assert_int_equal(run(fx, &r8), 0);
    assert_memory_equal(fx_at(fx, SB, 32, 256), first, 5);
    fx_free(fx);
}

/* SetRngSeed: the same seed gives the same sequence on every lane and
 * slot, another seed a different one; rand2 stays in [min, max) with a
 * mean near the middle (2048 draws: 3 sigma is about 0.019). */
static void test_seed_determinism_and_rand2_range(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    uint32_t seed = 7;
    put_u32(fx, 0, 0, &seed, 1);
    isa_decoded_t sd = in_op(ISA_OP_SET_RNG_SEED, tap1(SB, U32, 0, 0, 1, 1));
    isa_decoded_t r2 = mk(ISA_OP_RAND2);
    r2.inst.f.RAND2.out = tap1(SB, F32, 64, 0, 4, 512);
    r2.inst.f.RAND2.min = f2u(2.0f);
    r2.inst.f.RAND2.max = f2u(3.0f);
    assert_int_equal(run(fx, &sd), 0);
    assert_int_equal(run(fx, &r2), 0);
    double sum = 0;
    float keep[8];
    for (unsigned p = 0; p < 4; p++)
        for (unsigned i = 0; i < 512; i++) {
            float v = fx_get(fx, SB, p, 64, F32, i);
            assert_true(v >= 2.0f && v < 3.0f);
            sum += v;
        }
    assert_true(fabs(sum / 2048 - 2.5) < 0.02);
    for (unsigned i = 0; i < 8; i++)
        keep[i] = fx_get(fx, SB, 1, 64, F32, i);
    assert_int_equal(run(fx, &sd), 0);   /* reseed: same values */
    assert_int_equal(run(fx, &r2), 0);
    for (unsigned i = 0; i < 8; i++)
        assert_feq(fx_get(fx, SB, 1, 64, F32, i), keep[i]);
    seed = 8;
    put_u32(fx, 0, 0, &seed, 1);
    assert_int_equal(run(fx, &sd), 0);
    assert_int_equal(run(fx, &r2), 0);
    unsigned same = 0;
    for (unsigned i = 0; i < 8; i++)
        same += fx_get(fx, SB, 1, 64, F32, i) == keep[i];
    assert_true(same < 8);
    fx_free(fx);
}

static void test_rng_errors(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    isa_decoded_t d = out_op(ISA_OP_RNG, tap1(SB, F32, 0, 0, 2, 4));
    FX_FAILS(fx, &d, "out", "integer dtype");
    d = out_op(ISA_OP_RAND_GET_STATE, tap1(SB, U32, 0, 0, 2, 6));
    FX_FAILS(fx, &d, "out", "24 words");   /* Vector keeps 4 generators */
    d = in_op(ISA_OP_RAND_SET_STATE, tap1(SB, F32, 0, 0, 2, 24));
    FX_FAILS(fx, &d, "in", "uint32");
    d = in_op(ISA_OP_SET_RNG_SEED, tap1(SB, U32, 0, 0, 2, 1));
    FX_FAILS(fx, &d, "in", "[1,1]");
    d = mk(ISA_OP_RAND2);
    d.inst.f.RAND2.out = tap1(SB, F32, 0, 0, 1, 4);
    d.inst.f.RAND2.min = f2u(1.0f);
    d.inst.f.RAND2.max = f2u(1.0f);
    FX_FAILS(fx, &d, "min/max", "not below");
    fx_free(fx);
}

static float alu1(unsigned op, float a, float b)
{
    return sim_alu_f(op, a, b);
}

static void test_rounding_alu(void **state)
{
    (void)state;
    assert_feq(alu1(ISA_ALU_FLOOR, -3.2f, 0), -4.0f);
    assert_feq(alu1(ISA_ALU_FLOOR, 3.7f, 0), 3.0f);
    assert_feq(alu1(ISA_ALU_CEIL, -3.7f, 0), -3.0f);
    assert_feq(alu1(ISA_ALU_CEIL, 3.2f, 0), 4.0f);
    assert_feq(alu1(ISA_ALU_TRUNC, -3.7f, 0), -3.0f);
    assert_feq(alu1(ISA_ALU_TRUNC, 3.7f, 0), 3.0f);
    assert_feq(alu1(ISA_ALU_SIGN, -5.0f, 0), -1.0f);
    assert_feq(alu1(ISA_ALU_SIGN, 0.0f, 0), 0.0f);
    assert_feq(alu1(ISA_ALU_SIGN, 2.5f, 0), 1.0f);
    assert_true(isnan(alu1(ISA_ALU_SIGN, NAN, 0)));
    assert_feq(alu1(ISA_ALU_NEGATIVE, 5.0f, 0), -5.0f);
    /* fmod keeps the dividend's sign, mod the divisor's */
    assert_feq(alu1(ISA_ALU_FMOD, -7.0f, 3.0f), -1.0f);
    assert_feq(alu1(ISA_ALU_MOD, -7.0f, 3.0f), 2.0f);
    assert_feq(alu1(ISA_ALU_FMOD, 7.5f, -2.0f), 1.5f);
    assert_true(isnan(alu1(ISA_ALU_FMOD, 1.0f, 0.0f)));
    assert_true(isa_alu_is_unary(ISA_ALU_FLOOR) && isa_alu_is_unary(ISA_ALU_NEGATIVE));
    assert_false(isa_alu_is_unary(ISA_ALU_FMOD));
}

/* TensorStore: register bits into an int32 element, the int32 value into
 * a float one; registers or partitions out of range are errors */
static void test_tensor_store(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_SP);
    fx->regs[5] = 0xFFFFFFF9u;   /* -7 */
    isa_decoded_t d = mk(ISA_OP_TENSOR_STORE);
    d.inst.f.TSTORE.dst = ptr(SB, ISA_DT_INT32, 16);
    d.inst.f.TSTORE.part = 2;
    d.inst.f.TSTORE.reg = 5;
    d.inst.f.TSTORE.count = 1;
    assert_int_equal(run(fx, &d), 0);
    assert_int_equal(fx_geti(fx, SB, 2, 16, ISA_DT_INT32, 0), -7);
    d.inst.f.TSTORE.dst = ptr(SB, F32, 32);
    assert_int_equal(run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 2, 32, F32, 0), -7.0f);
    d.inst.f.TSTORE.reg = 63;
    d.inst.f.TSTORE.count = 2;
    FX_FAILS(fx, &d, "reg/count", "outside");
    fx_free(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_known_answer_and_roundtrip),
        cmocka_unit_test(test_seed_determinism_and_rand2_range),
        cmocka_unit_test(test_rng_errors),
        cmocka_unit_test(test_rounding_alu),
        cmocka_unit_test(test_tensor_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
