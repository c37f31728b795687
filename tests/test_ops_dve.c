/* DVE ops (and the shared TAP checks): semantics against hand-computed
 * values, bounds and error messages, cost formulas. */
#include "ops_fixture.h"

#define SB ISA_SPACE_SBUF
#define PS ISA_SPACE_PSUM
#define F32 ISA_DT_FP32

static isa_decoded_t tt(unsigned op, isa_tap_t a, isa_tap_t b, isa_tap_t o)
{
    isa_decoded_t d = mk(ISA_OP_TENSOR_TENSOR);
    d.inst.f.TT.in0 = a;
    d.inst.f.TT.in1 = b;
    d.inst.f.TT.out = o;
    d.inst.f.TT.op = op;
    return d;
}

/* out[0] = a op b, fp32, one partition, one element. */
static float tt1(fx_t *fx, unsigned op, float a, float b)
{
    fx_put(fx, SB, 0, 0, F32, &a, 1);
    fx_put(fx, SB, 0, 4, F32, &b, 1);
    isa_decoded_t d = tt(op, tap1(SB, F32, 0, 0, 1, 1), tap1(SB, F32, 4, 0, 1, 1),
                         tap1(SB, F32, 8, 0, 1, 1));
    assert_int_equal(fx_run(fx, &d), 0);
    return fx_get(fx, SB, 0, 8, F32, 0);
}

static void test_tt_arith(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    const float a[2][4] = { { 1, 2, 3, 4 }, { -1, -2, -3, -4 } };
    const float b[2][4] = { { 10, 20, 30, 40 }, { 0.5f, 0.25f, 2, 4 } };
    for (unsigned p = 0; p < 2; p++) {
        fx_put(fx, SB, p, 0, F32, a[p], 4);
        fx_put(fx, SB, p, 64, F32, b[p], 4);
    }
    isa_decoded_t d = tt(ISA_ALU_ADD, tap1(SB, F32, 0, 0, 2, 4), tap1(SB, F32, 64, 0, 2, 4),
                         tap1(SB, ISA_DT_BF16, 128, 0, 2, 4));
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 128, ISA_DT_BF16, 3), 44.0f);
    assert_feq(fx_get(fx, SB, 1, 128, ISA_DT_BF16, 1), -1.75f);
    /* the table of scalar semantics */
    assert_feq(tt1(fx, ISA_ALU_SUBTRACT, 5, 7), -2.0f);
    assert_feq(tt1(fx, ISA_ALU_DIVIDE, 1, 0), INFINITY);
    assert_true(isnan(tt1(fx, ISA_ALU_DIVIDE, 0, 0)));
    assert_feq(tt1(fx, ISA_ALU_MOD, -7, 3), 2.0f);
    assert_feq(tt1(fx, ISA_ALU_MOD, 7, -3), -2.0f);
    assert_feq(tt1(fx, ISA_ALU_MOD, 7.5f, 2), 1.5f);
    assert_feq(tt1(fx, ISA_ALU_POWER, 2, 10), 1024.0f);
    assert_feq(tt1(fx, ISA_ALU_IS_GT, 2, 1), 1.0f);
    assert_feq(tt1(fx, ISA_ALU_IS_LT, 2, 1), 0.0f);
    assert_feq(tt1(fx, ISA_ALU_EQUAL, NAN, NAN), 0.0f);
    assert_feq(tt1(fx, ISA_ALU_NOT_EQUAL, NAN, NAN), 1.0f);
    assert_feq(tt1(fx, ISA_ALU_ABS_MAX, -5, 3), 5.0f);
    assert_feq(tt1(fx, ISA_ALU_ABS_MIN, -5, 3), 3.0f);
    assert_feq(tt1(fx, ISA_ALU_LOGICAL_AND, 0.5f, 0), 0.0f);
    assert_feq(tt1(fx, ISA_ALU_LOGICAL_OR, NAN, 0), 1.0f);
    assert_feq(tt1(fx, ISA_ALU_LOGICAL_XOR, 3, -1), 0.0f);
    assert_true(isnan(tt1(fx, ISA_ALU_MAX, NAN, 1)));
    assert_feq(tt1(fx, ISA_ALU_MIN, -1, 1), -1.0f);
    assert_feq(tt1(fx, ISA_ALU_BYPASS, 7, 9), 7.0f);
    assert_feq(tt1(fx, ISA_ALU_ABS, -7, 9), 7.0f);
    assert_feq(tt1(fx, ISA_ALU_RSQRT, 16, 9), 0.25f);
    assert_feq(tt1(fx, ISA_ALU_RECIPROCAL, 4, 9), 0.25f);
    fx_free(fx);
}

static void test_tt_bitwise(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    int64_t a[4] = { 0xF0F0, 1, 0x40000000, 5 };
    int64_t b[4] = { 0x0FF0, 31, 1, 32 };
    fx_puti(fx, SB, 0, 0, ISA_DT_INT32, a, 4);
    fx_puti(fx, SB, 0, 16, ISA_DT_INT32, b, 4);
    isa_decoded_t d = tt(ISA_ALU_BITWISE_AND, tap1(SB, ISA_DT_INT32, 0, 0, 1, 1),
                         tap1(SB, ISA_DT_INT32, 16, 0, 1, 1), tap1(SB, ISA_DT_INT32, 32, 0, 1, 1));
    assert_int_equal(fx_run(fx, &d), 0);
    assert_int_equal(fx_geti(fx, SB, 0, 32, ISA_DT_INT32, 0), 0x00F0);
    /* left shifts: 1 << 31 = INT32_MIN; 0x40000000 << 1 wraps; count 32 -> 0 */
    d = tt(ISA_ALU_LEFT_SHIFT, tap1(SB, ISA_DT_INT32, 4, 0, 1, 3),
           tap1(SB, ISA_DT_INT32, 20, 0, 1, 3), tap1(SB, ISA_DT_INT32, 32, 0, 1, 3));
    assert_int_equal(fx_run(fx, &d), 0);
    assert_int_equal(fx_geti(fx, SB, 0, 32, ISA_DT_INT32, 0), INT32_MIN);
    assert_int_equal(fx_geti(fx, SB, 0, 32, ISA_DT_INT32, 1), INT32_MIN);
    assert_int_equal(fx_geti(fx, SB, 0, 32, ISA_DT_INT32, 2), 0);
    /* logical right shift in the width of in0: int8 -1 >> 4 = 0x0F */
    int64_t c[2] = { -1, 0xF0 }, s[2] = { 4, 4 };
    fx_puti(fx, SB, 0, 64, ISA_DT_INT8, c, 1);
    fx_puti(fx, SB, 0, 65, ISA_DT_UINT8, c + 1, 1);
    fx_puti(fx, SB, 0, 66, ISA_DT_UINT8, s, 2);
    d = tt(ISA_ALU_RIGHT_SHIFT, tap1(SB, ISA_DT_INT8, 64, 0, 1, 1),
           tap1(SB, ISA_DT_UINT8, 66, 0, 1, 1), tap1(SB, ISA_DT_INT8, 70, 0, 1, 1));
    assert_int_equal(fx_run(fx, &d), 0);
    assert_int_equal(fx_geti(fx, SB, 0, 70, ISA_DT_INT8, 0), 15);
    /* bitwise_not on uint8, result wraps to uint8 */
    d = tt(ISA_ALU_BITWISE_NOT, tap1(SB, ISA_DT_UINT8, 65, 0, 1, 1),
           tap1(SB, ISA_DT_UINT8, 66, 0, 1, 1), tap1(SB, ISA_DT_UINT8, 71, 0, 1, 1));
    assert_int_equal(fx_run(fx, &d), 0);
    assert_int_equal(fx_geti(fx, SB, 0, 71, ISA_DT_UINT8, 0), 0x0F);
    /* floats: bitwise ops act on the int32 conversion (5.6 -> 6) */
    assert_feq(tt1(fx, ISA_ALU_BITWISE_AND, 5.6f, 3.0f), 2.0f);
    /* TensorTensorBitVec: bitwise ops on integer dtypes only */
    fx_puti(fx, SB, 0, 0, ISA_DT_INT32, a, 4);
    fx_puti(fx, SB, 0, 16, ISA_DT_INT32, b, 4);
    d = tt(ISA_ALU_BITWISE_XOR, tap1(SB, ISA_DT_INT32, 0, 0, 1, 1),
           tap1(SB, ISA_DT_INT32, 16, 0, 1, 1), tap1(SB, ISA_DT_INT32, 32, 0, 1, 1));
    d.inst.op = ISA_OP_TENSOR_TENSOR_BITVEC;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_int_equal(fx_geti(fx, SB, 0, 32, ISA_DT_INT32, 0), 0xFF00);
    d.inst.f.TT.out.dtype = F32;
    FX_FAILS(fx, &d, "out", "integer dtypes");
    d.inst.f.TT.out.dtype = ISA_DT_INT32;
    d.inst.f.TT.op = ISA_ALU_ADD;
    FX_FAILS(fx, &d, "op", "bitwise");
    fx_free(fx);
}

static void test_tt_shape_and_psum_rules(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    isa_decoded_t d = tt(ISA_ALU_ADD, tap1(SB, F32, 0, 0, 2, 4), tap1(SB, F32, 64, 0, 2, 3),
                         tap1(SB, F32, 128, 0, 2, 4));
    FX_FAILS(fx, &d, "in1", "3 elements");
    d = tt(ISA_ALU_ADD, tap1(SB, F32, 0, 0, 2, 4), tap1(SB, F32, 64, 0, 3, 4),
           tap1(SB, F32, 128, 0, 2, 4));
    FX_FAILS(fx, &d, "in1", "3 partitions");
    d = tt(ISA_ALU_ADD, tap1(PS, F32, 0, 0, 1, 4), tap1(PS, F32, 64, 0, 1, 4),
           tap1(SB, F32, 128, 0, 1, 4));
    FX_FAILS(fx, &d, "both inputs cannot be in psum");
    d.inst.f.TT.op = 99;
    FX_FAILS(fx, &d, "op", "invalid ALU op");
    /* broadcast through a zero step: in1 reused for all 4 elements */
    float v[4] = { 1, 2, 3, 4 }, k = 10;
    fx_put(fx, SB, 0, 0, F32, v, 4);
    fx_put(fx, SB, 0, 64, F32, &k, 1);
    d = tt(ISA_ALU_MULTIPLY, tap1(SB, F32, 0, 0, 1, 4), tap1(SB, F32, 64, 0, 1, 4),
           tap1(SB, F32, 128, 0, 1, 4));
    d.inst.f.TT.in1.step[0] = 0;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 128, F32, 3), 40.0f);
    fx_free(fx);
}

static void test_bounds_and_spaces(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    isa_decoded_t d = tt(ISA_ALU_ADD, tap1(SB, F32, 0, 0, 1, 4), tap1(SB, F32, 64, 0, 1, 4),
                         tap1(SB, F32, FX_SBUF_PB - 8, 0, 1, 4));
    FX_FAILS(fx, &d, "out", "partition 0", "outside sbuf", "4096 bytes per partition");
    /* negative step below address 0 */
    d = tt(ISA_ALU_ADD, tap1(SB, F32, 4, 0, 1, 4), tap1(SB, F32, 64, 0, 1, 4),
           tap1(SB, F32, 128, 0, 1, 4));
    d.inst.f.TT.in0.step[0] = -1;
    FX_FAILS(fx, &d, "in0", "[-8, 8)");
    /* the same pattern walking backwards from 12 is fine: reversed copy */
    float v[4] = { 1, 2, 3, 4 }, z[4] = { 0, 0, 0, 0 };
    fx_put(fx, SB, 0, 0, F32, v, 4);
    fx_put(fx, SB, 0, 64, F32, z, 4);
    d.inst.f.TT.in0.addr = 12;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 128, F32, 0), 4.0f);
    assert_feq(fx_get(fx, SB, 0, 128, F32, 3), 1.0f);
    /* PSUM bound is smaller */
    d = tt(ISA_ALU_ADD, tap1(SB, F32, 0, 0, 1, 4), tap1(SB, F32, 64, 0, 1, 4),
           tap1(PS, F32, FX_PSUM_PB, 0, 1, 4));
    FX_FAILS(fx, &d, "out", "outside psum", "16384");
    /* HBM and missing operands */
    d.inst.f.TT.out.space = ISA_SPACE_HBM;
    FX_FAILS(fx, &d, "out", "sbuf or psum", "hbm");
    d.inst.f.TT.out.space = ISA_SPACE_NONE;
    FX_FAILS(fx, &d, "out", "missing");
    /* partitions beyond 128, empty dims */
    d = tt(ISA_ALU_ADD, tap1(SB, F32, 0, 100, 29, 4), tap1(SB, F32, 64, 0, 29, 4),
           tap1(SB, F32, 128, 0, 29, 4));
    FX_FAILS(fx, &d, "in0", "start 100 count 29");
    /* start-partition rule (ARCH2) */
    d = tt(ISA_ALU_ADD, tap1(SB, F32, 0, 16, 16, 4), tap1(SB, F32, 64, 0, 16, 4),
           tap1(SB, F32, 128, 0, 16, 4));
    FX_FAILS(fx, &d, "in0", "start partition 16 is not allowed for 16 partitions");
    d.inst.f.TT.in0 = tap1(SB, F32, 0, 32, 33, 4);
    FX_FAILS(fx, &d, "in0", "start partition 32 is not allowed for 33 partitions");
    d.inst.f.TT.in0 = tap1(SB, F32, 0, 64, 64, 4);
    d.inst.f.TT.in1 = tap1(SB, F32, 64, 0, 64, 4);
    d.inst.f.TT.out = tap1(SB, F32, 128, 64, 64, 4);
    assert_int_equal(fx_run(fx, &d), 0);
    d.inst.f.TT.out = tap1(SB, F32, 128, 64, 65, 4);
    FX_FAILS(fx, &d, "out");
    d = tt(ISA_ALU_ADD, tap1(SB, F32, 0, 0, 1, 0), tap1(SB, F32, 64, 0, 1, 0),
           tap1(SB, F32, 128, 0, 1, 0));
    FX_FAILS(fx, &d, "in0", "count[0] = 0");
    /* 2-D pattern extent: 3 x 2 with row step 16 elements -> last byte 16*4+2*4+4 */
    d = tt(ISA_ALU_ADD, tap2(SB, F32, FX_SBUF_PB - 76, 0, 1, 3, 1, 2, 16),
           tap2(SB, F32, 0, 0, 1, 3, 1, 2, 16), tap2(SB, F32, 0, 0, 1, 3, 1, 2, 16));
    assert_int_equal(fx_run(fx, &d), 0);
    d.inst.f.TT.in0.addr += 4;
    FX_FAILS(fx, &d, "in0");
    /* sim_ptr_check directly */
    isa_ptr_t p = ptr(SB, F32, FX_SBUF_PB - 4);
    assert_int_equal(sim_ptr_check(&fx->ctx, &p, 0, 128, 1, "bias"), 0);
    assert_int_equal(sim_ptr_check(&fx->ctx, &p, 0, 128, 2, "bias"), -1);
    assert_non_null(strstr(fx->err.msg, "bias"));
    fx_free(fx);

    /* Pool has no PSUM port */
    fx = fx_new("trn2", ISA_ENG_POOL);
    d = tt(ISA_ALU_ADD, tap1(SB, F32, 0, 0, 1, 4), tap1(PS, F32, 64, 0, 1, 4),
           tap1(SB, F32, 128, 0, 1, 4));
    FX_FAILS(fx, &d, "in1", "Pool engine cannot access psum");
    fx_free(fx);
}

static void test_uninit_and_timing_only(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    fx_check_uninit(fx);
    isa_decoded_t m = mk(ISA_OP_MEMSET);
    m.inst.f.MEMSET.out = tap1(SB, F32, 0, 0, 2, 4);
    m.inst.f.MEMSET.value = f2u(1.0f);
    assert_int_equal(fx_run(fx, &m), 0);
    isa_decoded_t d = tt(ISA_ALU_ADD, tap1(SB, F32, 0, 0, 2, 4), tap1(SB, F32, 4, 0, 2, 4),
                         tap1(SB, F32, 64, 0, 2, 4));
    FX_FAILS(fx, &d, "in1", "uninitialised", "partition 0", "0x10");
    d.inst.f.TT.in1.addr = 0;
    assert_int_equal(fx_run(fx, &d), 0);
    /* out is now initialised: it can be read */
    d.inst.f.TT.in1.addr = 64;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 1, 64, F32, 3), 3.0f);
    /* timing-only: bounds checked, nothing computed */
    fx->ctx.timing_only = true;
    d.inst.f.TT.out.addr = 256;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 256, F32, 0), 0.0f);
    d.inst.f.TT.out.addr = FX_SBUF_PB;
    FX_FAILS(fx, &d, "out");
    fx_free(fx);
}

/* 4-D access patterns (dims 2-3 come from ApExt): flattened order is dim 0
 * fastest; negative and zero steps. */
static void test_multidim_tap(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    float v[24];
    for (unsigned i = 0; i < 24; i++)
        v[i] = (float)i;
    fx_put(fx, SB, 0, 0, F32, v, 24);
    isa_decoded_t d = mk(ISA_OP_TENSOR_COPY);
    /* in viewed as [d3=2][d2=3][d1=2][d0=2] with d2 walking backwards */
    isa_tap_t in = { .addr = 4 * 8, .dtype = F32, .space = SB, .start = 0, .nparts = 1,
                     .ndims = 4, .step = { 1, 2, -4, 12 }, .count = { 2, 2, 3, 2 } };
    d.inst.f.COPY.in = in;
    d.inst.f.COPY.out = tap1(SB, F32, 512, 0, 1, 24);
    assert_int_equal(fx_run(fx, &d), 0);
    /* element (i3,i2,i1,i0) = 8 + i0 + 2*i1 - 4*i2 + 12*i3 */
    const unsigned want[8] = { 8, 9, 10, 11, 4, 5, 6, 7 };
    for (unsigned k = 0; k < 8; k++)
        assert_feq(fx_get(fx, SB, 0, 512, F32, k), (float)want[k]);
    assert_feq(fx_get(fx, SB, 0, 512, F32, 12), 20.0f); /* i3 = 1: 8 + 12 */
    assert_feq(fx_get(fx, SB, 0, 512, F32, 23), 15.0f); /* 8+1+2-8+12 */
    d.inst.f.COPY.in.addr = 4 * 7; /* i2 = 2 would reach element -1 */
    FX_FAILS(fx, &d, "in", "[-4,");
    /* ndims = 0: one element per partition */
    d.inst.f.COPY.in = (isa_tap_t){ .addr = 8, .dtype = F32, .space = SB, .nparts = 1 };
    d.inst.f.COPY.out = (isa_tap_t){ .addr = 1024, .dtype = F32, .space = SB, .nparts = 1 };
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 1024, F32, 0), 2.0f);
    fx_free(fx);
}

static void test_tensor_copy(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    int64_t big[2] = { 16777217, 300 };
    fx_puti(fx, SB, 0, 0, ISA_DT_INT32, big, 2);
    isa_decoded_t d = mk(ISA_OP_TENSOR_COPY);
    d.inst.f.COPY.in = tap1(SB, ISA_DT_INT32, 0, 0, 1, 2);
    d.inst.f.COPY.out = tap1(SB, ISA_DT_INT32, 64, 0, 1, 2);
    assert_int_equal(fx_run(fx, &d), 0); /* bit-exact integer copy on DVE */
    assert_int_equal(fx_geti(fx, SB, 0, 64, ISA_DT_INT32, 0), 16777217);
    d.inst.f.COPY.out = tap1(SB, ISA_DT_UINT8, 64, 0, 1, 2);
    assert_int_equal(fx_run(fx, &d), 0); /* saturating integer cast */
    assert_int_equal(fx_geti(fx, SB, 0, 64, ISA_DT_UINT8, 1), 255);
    d.inst.f.COPY.out = tap1(SB, ISA_DT_BF16, 64, 0, 1, 2);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 64, ISA_DT_BF16, 1), 300.0f);
    fx_free(fx);
    /* Activation copies go through fp32 */
    fx = fx_new("trn2", ISA_ENG_ACT);
    fx_puti(fx, SB, 0, 0, ISA_DT_INT32, big, 2);
    d.inst.f.COPY.out = tap1(SB, ISA_DT_INT32, 64, 0, 1, 2);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_int_equal(fx_geti(fx, SB, 0, 64, ISA_DT_INT32, 0), 16777216);
    fx_free(fx);
}

static isa_decoded_t ts(isa_tap_t in, isa_tap_t out, unsigned op0, uint32_t s0, unsigned op1,
                        uint32_t s1)
{
    isa_decoded_t d = mk(ISA_OP_TENSOR_SCALAR);
    d.inst.f.TS.in = in;
    d.inst.f.TS.out = out;
    d.inst.f.TS.op0 = op0;
    d.inst.f.TS.op1 = op1;
    d.inst.f.TS.s0 = s0;
    d.inst.f.TS.s1 = s1;
    return d;
}

static void test_tensor_scalar(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    float v[3] = { 1, 2, 3 };
    fx_put(fx, SB, 0, 0, F32, v, 3);
    fx_put(fx, SB, 1, 0, F32, v, 3);
    isa_decoded_t d = ts(tap1(SB, F32, 0, 0, 2, 3), tap1(SB, F32, 64, 0, 2, 3),
                         ISA_ALU_MULTIPLY, f2u(2.0f), ISA_ALU_ADD, f2u(1.0f));
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 1, 64, F32, 2), 7.0f);
    /* rev0: s0 - x ; op1 bypass keeps the first operand */
    d = ts(tap1(SB, F32, 0, 0, 1, 3), tap1(SB, F32, 64, 0, 1, 3), ISA_ALU_SUBTRACT, f2u(10.0f),
           ISA_ALU_BYPASS, f2u(99.0f));
    d.inst.f.TS.rev0 = 1;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 0), 9.0f);
    /* rev1 with divide: s1 / (x) */
    d = ts(tap1(SB, F32, 0, 0, 1, 3), tap1(SB, F32, 64, 0, 1, 3), ISA_ALU_BYPASS, 0,
           ISA_ALU_DIVIDE, f2u(6.0f));
    d.inst.f.TS.rev1 = 1;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 2), 2.0f);
    /* bitwise immediate is an integer bit pattern */
    int64_t iv[2] = { 0x1234, 0xFF00FF };
    fx_puti(fx, SB, 0, 128, ISA_DT_INT32, iv, 2);
    d = ts(tap1(SB, ISA_DT_INT32, 128, 0, 1, 2), tap1(SB, ISA_DT_INT32, 160, 0, 1, 2),
           ISA_ALU_BITWISE_AND, 0xFF, ISA_ALU_LEFT_SHIFT, 4);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_int_equal(fx_geti(fx, SB, 0, 160, ISA_DT_INT32, 0), 0x340);
    assert_int_equal(fx_geti(fx, SB, 0, 160, ISA_DT_INT32, 1), 0xFF0);
    /* pointer scalars need TensorScalarPtr */
    float sc[2] = { 3, 5 };
    fx_put(fx, SB, 0, 256, F32, sc, 1);
    fx_put(fx, SB, 1, 256, F32, sc + 1, 1);
    d = ts(tap1(SB, F32, 0, 0, 2, 3), tap1(SB, F32, 64, 0, 2, 3), ISA_ALU_MULTIPLY,
           ptr_bits(SB, F32, 256), ISA_ALU_BYPASS, 0);
    d.inst.f.TS.s0_is_ptr = 1;
    FX_FAILS(fx, &d, "TensorScalarPtr");
    d.inst.op = ISA_OP_TENSOR_SCALAR_PTR;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 1), 6.0f);
    assert_feq(fx_get(fx, SB, 1, 64, F32, 2), 15.0f);
    d.inst.f.TS.s0 = ptr_bits(SB, F32, FX_SBUF_PB);
    FX_FAILS(fx, &d, "s0", "outside sbuf");
    fx_free(fx);
    /* Activation runs TensorScalar but not bitwise ops */
    fx = fx_new("trn2", ISA_ENG_ACT);
    d = ts(tap1(SB, F32, 0, 0, 1, 3), tap1(SB, F32, 64, 0, 1, 3), ISA_ALU_BITWISE_OR, 1,
           ISA_ALU_BYPASS, 0);
    FX_FAILS(fx, &d, "bitwise", "Activation");
    fx_free(fx);
}

static void test_tensor_scalar_ptr_pred(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    float v[4] = { 1, 2, 3, 4 };
    fx_put(fx, SB, 0, 0, F32, v, 4);
    fx_put(fx, SB, 1, 0, F32, v, 4);
    isa_decoded_t d = ts(tap1(SB, F32, 0, 0, 2, 4), tap1(SB, F32, 64, 0, 2, 4),
                         ISA_ALU_ADD, f2u(100.0f), ISA_ALU_BYPASS, 0);
    d.inst.op = ISA_OP_TENSOR_SCALAR_PTR;
    d.has_pred = true;
    /* causal mask: keep where p - i >= 0 */
    d.inst.f.TS.in = tap1(SB, F32, 0, 0, 2, 4);
    d.pred.offset = 0;
    d.pred.cm = 1;
    d.pred.step0 = -1;
    d.pred.cmp = ISA_CMP_GE;
    d.pred.fill = -9.0f;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 0), 101.0f);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 1), -9.0f);
    assert_feq(fx_get(fx, SB, 1, 64, F32, 1), 102.0f);
    assert_feq(fx_get(fx, SB, 1, 64, F32, 2), -9.0f);
    /* rev_pred (seed 001 set_reverse_pred): computed where p - i >= 0 fails */
    d.pred.rev_pred = 1;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 0), -9.0f);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 1), 102.0f);
    assert_feq(fx_get(fx, SB, 1, 64, F32, 1), -9.0f);
    assert_feq(fx_get(fx, SB, 1, 64, F32, 2), 103.0f);
    fx_free(fx);
}

static void test_stt_and_scan(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    float a[4] = { 1, 1, 0.5f, 2 }, b[4] = { 1, 2, 3, 4 };
    fx_put(fx, SB, 0, 0, F32, a, 4);
    fx_put(fx, SB, 0, 64, F32, b, 4);
    isa_decoded_t d = mk(ISA_OP_SCALAR_TENSOR_TENSOR);
    d.inst.f.STT.in0 = tap1(SB, F32, 0, 0, 1, 4);
    d.inst.f.STT.in1 = tap1(SB, F32, 64, 0, 1, 4);
    d.inst.f.STT.out = tap1(SB, F32, 128, 0, 1, 4);
    d.inst.f.STT.op0 = ISA_ALU_SUBTRACT;
    d.inst.f.STT.s0 = f2u(1.0f);
    d.inst.f.STT.op1 = ISA_ALU_MULTIPLY;
    assert_int_equal(fx_run(fx, &d), 0); /* (a - 1) * b */
    assert_feq(fx_get(fx, SB, 0, 128, F32, 2), -1.5f);
    assert_feq(fx_get(fx, SB, 0, 128, F32, 3), 4.0f);
    /* scan: r = a*r + b, r[-1] = 0 -> 1, 3, 4.5, 13 */
    d = mk(ISA_OP_TENSOR_TENSOR_SCAN);
    d.inst.f.SCAN.in0 = tap1(SB, F32, 0, 0, 1, 4);
    d.inst.f.SCAN.in1 = tap1(SB, F32, 64, 0, 1, 4);
    d.inst.f.SCAN.out = tap1(SB, F32, 128, 0, 1, 4);
    d.inst.f.SCAN.op0 = ISA_ALU_MULTIPLY;
    d.inst.f.SCAN.op1 = ISA_ALU_ADD;
    d.inst.f.SCAN.init = f2u(0.0f);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 128, F32, 0), 1.0f);
    assert_feq(fx_get(fx, SB, 0, 128, F32, 1), 3.0f);
    assert_feq(fx_get(fx, SB, 0, 128, F32, 2), 4.5f);
    assert_feq(fx_get(fx, SB, 0, 128, F32, 3), 13.0f);
    /* init from a per-partition pointer: r[-1] = 2 -> 3, 5, 5.5, 15 */
    float two = 2;
    fx_put(fx, SB, 0, 256, F32, &two, 1);
    d.inst.f.SCAN.init_is_ptr = 1;
    d.inst.f.SCAN.init = ptr_bits(SB, F32, 256);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 128, F32, 3), 15.0f);
    fx_free(fx);
}

static void test_costs(void **state)
{
    (void)state;
    isa_decoded_t d = tt(ISA_ALU_ADD, tap1(SB, F32, 0, 0, 128, 512), tap1(SB, F32, 0, 0, 128, 512),
                         tap1(SB, F32, 0, 0, 128, 512));
    /* DVE: static 100 + max(MIN_II 64, work); two inputs -> 2N */
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 1024);
    d.inst.f.TT.in1.space = PS; /* one input in PSUM -> N */
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 512);
    d.inst.f.TT.in1.space = SB;
    d.inst.f.TT.in0.nparts = d.inst.f.TT.in1.nparts = d.inst.f.TT.out.nparts = 1;
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 1024); /* partitions don't matter */
    d.inst.f.TT.in0.dtype = d.inst.f.TT.in1.dtype = d.inst.f.TT.out.dtype = ISA_DT_BF16;
    assert_int_equal(fx_cost("trn1", ISA_ENG_DVE, &d), 100 + 512); /* bf16 add contiguous */
    d.inst.f.TT.op = ISA_ALU_MAX;
    assert_int_equal(fx_cost("trn1", ISA_ENG_DVE, &d), 100 + 1024);
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 512); /* trn2 perf mode 2x */
    assert_int_equal(fx_cost("trn2", ISA_ENG_POOL, &d), 150 + 1024);
    d.inst.f.TT.in0.step[0] = 16; /* 32-byte innermost stride: half bandwidth */
    assert_int_equal(fx_cost("trn1", ISA_ENG_DVE, &d), 100 + 2048);
    d = tt(ISA_ALU_ADD, tap1(SB, F32, 0, 0, 1, 8), tap1(SB, F32, 0, 0, 1, 8),
           tap1(SB, F32, 0, 0, 1, 8));
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 64); /* MIN_II floor */

    /* TensorScalar: N; DVE perf mode 4x (SBUF, contiguous, 16-bit) on trn2 */
    d = ts(tap1(SB, ISA_DT_FP8E5M2, 0, 0, 128, 512), tap1(SB, ISA_DT_FP8E5M2, 0, 0, 128, 512),
           ISA_ALU_MULTIPLY, 0, ISA_ALU_BYPASS, 0);
    /* fp8 takes the perf mode on trn3 (v4, ARCH4), not on trn2 (v3: bf16/fp16) */
    assert_int_equal(fx_cost("trn3", ISA_ENG_DVE, &d), 100 + 128);
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 512);
    d = ts(tap1(SB, ISA_DT_BF16, 0, 0, 128, 512), tap1(SB, ISA_DT_BF16, 0, 0, 128, 512),
           ISA_ALU_MULTIPLY, 0, ISA_ALU_BYPASS, 0);
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 128);
    assert_int_equal(fx_cost("trn3", ISA_ENG_DVE, &d), 100 + 128);
    assert_int_equal(fx_cost("trn1", ISA_ENG_DVE, &d), 100 + 512);
    d.inst.f.TS.out.space = PS; /* one side in PSUM: 2x */
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 256);
    assert_int_equal(fx_cost("trn2", ISA_ENG_ACT, &d), 100 + 512);
    assert_int_equal(fx_cost("trn2", ISA_ENG_POOL, &d), 150 + 512);
    d.inst.f.TS.in.dtype = d.inst.f.TS.out.dtype = F32;
    d.inst.f.TS.op1 = ISA_ALU_RECIPROCAL; /* DVE reciprocal 8N */
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 4096);
    assert_int_equal(fx_cost("trn2", ISA_ENG_ACT, &d), 100 + 512);

    /* TensorCopy follows TensorScalar */
    d = mk(ISA_OP_TENSOR_COPY);
    d.inst.f.COPY.in = tap1(SB, ISA_DT_FP16, 0, 0, 128, 1000);
    d.inst.f.COPY.out = tap1(SB, ISA_DT_FP16, 0, 0, 128, 1000);
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 250);
    d.inst.f.COPY.in.step[0] = 2; /* not contiguous: 2x only */
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 500);

    /* TensorReduce: N/2 for bf16 add/max */
    d = mk(ISA_OP_TENSOR_REDUCE);
    d.inst.f.RED.in = tap1(SB, ISA_DT_BF16, 0, 0, 128, 512);
    d.inst.f.RED.out = tap1(SB, ISA_DT_BF16, 0, 0, 128, 1);
    d.inst.f.RED.op = ISA_ALU_ADD;
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 256);
    d.inst.f.RED.op = ISA_ALU_MIN;
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 512);

    /* Memset: N/2 for zero bf16/fp16 */
    d = mk(ISA_OP_MEMSET);
    d.inst.f.MEMSET.out = tap1(SB, ISA_DT_BF16, 0, 0, 128, 512);
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 256);
    d.inst.f.MEMSET.value = 0x3F80;
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 512);
    assert_int_equal(fx_cost("trn2", ISA_ENG_POOL, &d), 150 + 512);

    /* STT: 2N, N for bf16 subtract->multiply with even N; scan 2N */
    d = mk(ISA_OP_SCALAR_TENSOR_TENSOR);
    d.inst.f.STT.in0 = d.inst.f.STT.in1 = d.inst.f.STT.out = tap1(SB, ISA_DT_BF16, 0, 0, 1, 300);
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 600);
    d.inst.f.STT.op0 = ISA_ALU_SUBTRACT;
    d.inst.f.STT.op1 = ISA_ALU_MULTIPLY;
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 300);
    d = mk(ISA_OP_TENSOR_TENSOR_SCAN);
    d.inst.f.SCAN.in0 = d.inst.f.SCAN.in1 = d.inst.f.SCAN.out = tap1(SB, F32, 0, 0, 1, 300);
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 600);

    /* one-pass ops: N */
    d = mk(ISA_OP_MAX8);
    d.inst.f.COPY.in = tap1(SB, F32, 0, 0, 1, 1000);
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 1000);
    d.inst.op = ISA_OP_TRANSPOSE32;
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 1000);
    d = mk(ISA_OP_MAX_INDEX8);
    d.inst.f.FIDX.in = tap1(SB, F32, 0, 0, 1, 1000);
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 1000);
    d = mk(ISA_OP_MATCH_REPLACE8);
    d.inst.f.MR.in = tap1(SB, F32, 0, 0, 1, 1000);
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 1000);
    d = mk(ISA_OP_MAX_INDEX_AND_MATCH_REPLACE);
    d.inst.f.MIMR.in = tap1(SB, F32, 0, 0, 1, 1000);
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 1000);
    d = mk(ISA_OP_STREAM_SHUFFLE);
    d.inst.f.SHUF.in = d.inst.f.SHUF.out = tap1(SB, F32, 0, 0, 32, 700);
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 700);
    d = mk(ISA_OP_DROPOUT);
    d.inst.f.DROP.in = d.inst.f.DROP.out = tap1(SB, F32, 0, 0, 32, 700);
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 700);
    /* CopyPredicated: 2N in SBUF, N with an operand in PSUM */
    d = mk(ISA_OP_COPY_PREDICATED);
    d.inst.f.CPRED.pred = d.inst.f.CPRED.in = d.inst.f.CPRED.out = tap1(SB, F32, 0, 0, 1, 400);
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 800);
    d.inst.f.CPRED.in.space = PS;
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 400);
    /* QuantizeMX: 4 elements per cycle */
    d = mk(ISA_OP_QUANTIZE_MX);
    d.inst.f.QMX.in = tap1(SB, ISA_DT_BF16, 0, 0, 128, 1024);
    assert_int_equal(fx_cost("trn2", ISA_ENG_DVE, &d), 100 + 256);
    /* TensorLoad: MIN_II */
    d = mk(ISA_OP_TENSOR_LOAD);
    assert_int_equal(fx_cost("trn2", ISA_ENG_SP, &d), 64);
}

static void test_table(void **state)
{
    (void)state;
    /* every compute opcode has an implementation; control/DMA do not */
    for (unsigned op = 0; op < ISA_OP_COUNT; op++) {
        isa_class_t c = isa_ops[op].cls;
        bool compute = c == ISA_CLASS_MATMUL || c == ISA_CLASS_ACT || c == ISA_CLASS_VECTOR ||
                       c == ISA_CLASS_POOL || op == ISA_OP_TENSOR_LOAD || op == ISA_OP_TENSOR_STORE;
        const sim_opimpl_t *impl = sim_opimpl((isa_op_t)op);
        if (compute) {
            assert_non_null(impl);
            assert_non_null(impl->exec);
            assert_non_null(impl->cost);
        } else
            assert_null(impl);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tt_arith),
        cmocka_unit_test(test_tt_bitwise),
        cmocka_unit_test(test_tt_shape_and_psum_rules),
        cmocka_unit_test(test_bounds_and_spaces),
        cmocka_unit_test(test_uninit_and_timing_only),
        cmocka_unit_test(test_multidim_tap),
        cmocka_unit_test(test_tensor_copy),
        cmocka_unit_test(test_tensor_scalar),
        cmocka_unit_test(test_tensor_scalar_ptr_pred),
        cmocka_unit_test(test_stt_and_scan),
        cmocka_unit_test(test_costs),
        cmocka_unit_test(test_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
