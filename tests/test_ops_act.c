/* Activation engine ops: function table, scale/bias, fused reduce with the
 * accumulator commands, ActivationAcc, Activate2, errors, costs. */
#include "ops_fixture.h"

#define SB ISA_SPACE_SBUF
#define F32 ISA_DT_FP32

static isa_decoded_t act(unsigned func, isa_tap_t in, isa_tap_t out, float scale)
{
    isa_decoded_t d = mk(ISA_OP_ACTIVATION);
    d.inst.f.ACT.in = in;
    d.inst.f.ACT.out = out;
    d.inst.f.ACT.func = func;
    d.inst.f.ACT.scale = scale;
    return d;
}

/* func(x) for one fp32 element on partition 0. */
static float f1(fx_t *fx, unsigned func, float x)
{
    fx_put(fx, SB, 0, 0, F32, &x, 1);
    isa_decoded_t d = act(func, tap1(SB, F32, 0, 0, 1, 1), tap1(SB, F32, 4, 0, 1, 1), 1.0f);
    assert_int_equal(fx_run(fx, &d), 0);
    return fx_get(fx, SB, 0, 4, F32, 0);
}

static void test_functions(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_ACT);
    const double tol = 1e-6;
    assert_feq(f1(fx, ISA_ACTFN_COPY, -3.5f), -3.5f);
    assert_fnear(f1(fx, ISA_ACTFN_EXP, 1.0f), 2.718281828459045, tol);
    assert_fnear(f1(fx, ISA_ACTFN_LOG, 2.0f), 0.6931471805599453, tol);
    assert_fnear(f1(fx, ISA_ACTFN_TANH, 0.5f), 0.46211715726000974, tol);
    assert_fnear(f1(fx, ISA_ACTFN_SIGMOID, 0.0f), 0.5, tol);
    assert_feq(f1(fx, ISA_ACTFN_RELU, -1.0f), 0.0f);
    assert_feq(f1(fx, ISA_ACTFN_RELU, 2.0f), 2.0f);
    assert_fnear(f1(fx, ISA_ACTFN_GELU, 1.0f), 0.8413447460685429, tol);
    assert_fnear(f1(fx, ISA_ACTFN_GELU_DX, 0.0f), 0.5, tol);
    assert_fnear(f1(fx, ISA_ACTFN_GELU_APPRX_TANH, 1.0f), 0.8411919906082768, tol);
    /* x * sigmoid(1.702 x) at 1: 1 / (1 + e^-1.702) */
    assert_fnear(f1(fx, ISA_ACTFN_GELU_APPRX_SIGMOID, 1.0f), 0.8457957659328212, tol);
    /* s (1 + 1.702 (1 - s)), s = sigmoid(1.702), at 1 */
    assert_fnear(f1(fx, ISA_ACTFN_GELU_APPRX_SIGMOID_DX, 1.0f), 1.067779606556334, tol);
    assert_fnear(f1(fx, ISA_ACTFN_GELU_APPRX_SIGMOID_DX, 0.0f), 0.5, tol);
    assert_fnear(f1(fx, ISA_ACTFN_SILU, 1.0f), 0.7310585786300049, tol);
    assert_fnear(f1(fx, ISA_ACTFN_SILU_DX, 0.0f), 0.5, tol);
    assert_fnear(f1(fx, ISA_ACTFN_SOFTPLUS, 0.0f), 0.6931471805599453, tol);
    assert_feq(f1(fx, ISA_ACTFN_SOFTPLUS, 100.0f), 100.0f); /* no overflow */
    assert_fnear(f1(fx, ISA_ACTFN_MISH, 1.0f), 0.8650983882673103, tol);
    assert_fnear(f1(fx, ISA_ACTFN_ERF, 0.5f), 0.5204998778130465, tol);
    assert_fnear(f1(fx, ISA_ACTFN_ERF_DX, 0.0f), 1.1283791670955126, tol);
    assert_feq(f1(fx, ISA_ACTFN_SQRT, 9.0f), 3.0f);
    assert_feq(f1(fx, ISA_ACTFN_RSQRT, 4.0f), 0.5f);
    assert_feq(f1(fx, ISA_ACTFN_SQUARE, -3.0f), 9.0f);
    assert_feq(f1(fx, ISA_ACTFN_RECIPROCAL, 8.0f), 0.125f);
    assert_fnear(f1(fx, ISA_ACTFN_SIN, 9.0f), 0.4121184852417566, tol); /* plain sin */
    assert_fnear(f1(fx, ISA_ACTFN_ARCTAN, 1.0f), 0.7853981633974483, tol);
    assert_fnear(f1(fx, ISA_ACTFN_COS, 9.0f), -0.9111302618846769, tol); /* plain cos */
    assert_fnear(f1(fx, ISA_ACTFN_TAN, 1.0f), 1.5574077246549023, tol);
    assert_fnear(f1(fx, ISA_ACTFN_TAN, -1.5f), -14.101419947171719, 1e-5);
    assert_feq(f1(fx, ISA_ACTFN_ABS, -2.0f), 2.0f);
    assert_feq(f1(fx, ISA_ACTFN_SIGN, 0.0f), 0.0f);
    assert_feq(f1(fx, ISA_ACTFN_SIGN, -3.0f), -1.0f);
    assert_feq(f1(fx, ISA_ACTFN_SIGN, 0.25f), 1.0f);
    isa_decoded_t d = act(99, tap1(SB, F32, 0, 0, 1, 1), tap1(SB, F32, 4, 0, 1, 1), 1.0f);
    FX_FAILS(fx, &d, "func", "99");
    fx_free(fx);
}

static void test_scale_bias(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_ACT);
    float x[2] = { 0.5f, 0.0f }, b0 = 1.0f, b1 = -1.0f, s1 = 4.0f;
    fx_put(fx, SB, 0, 0, F32, x, 2);
    fx_put(fx, SB, 1, 0, F32, x, 2);
    fx_put(fx, SB, 0, 64, F32, &b0, 1);
    fx_put(fx, SB, 1, 64, F32, &b1, 1);
    /* out = exp(x*2 + bias[p]) into bf16 */
    isa_decoded_t d = act(ISA_ACTFN_EXP, tap1(SB, F32, 0, 0, 2, 2),
                          tap1(SB, ISA_DT_BF16, 128, 0, 2, 2), 2.0f);
    d.inst.f.ACT.bias = ptr(SB, F32, 64);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 128, ISA_DT_BF16, 0), num_round_to(7.389056f, ISA_DT_BF16));
    assert_feq(fx_get(fx, SB, 1, 128, ISA_DT_BF16, 0), 1.0f);
    /* scale from a per-partition pointer (scale field holds PTR bits) */
    fx_put(fx, SB, 0, 96, F32, &b1, 1);
    fx_put(fx, SB, 1, 96, F32, &s1, 1);
    d = act(ISA_ACTFN_COPY, tap1(SB, F32, 0, 0, 2, 2), tap1(SB, F32, 128, 0, 2, 2), 0.0f);
    uint32_t bits = ptr_bits(SB, F32, 96);
    memcpy(&d.inst.f.ACT.scale, &bits, 4);
    d.inst.f.ACT.scale_is_ptr = 1;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 128, F32, 0), -0.5f);
    assert_feq(fx_get(fx, SB, 1, 128, F32, 0), 2.0f);
    bits = ptr_bits(SB, F32, FX_SBUF_PB);
    memcpy(&d.inst.f.ACT.scale, &bits, 4);
    FX_FAILS(fx, &d, "scale", "outside sbuf");
    fx_free(fx);
}

static void test_fused_reduce(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_ACT);
    float x[3] = { 1, 2, 3 }, ten = 10;
    fx_put(fx, SB, 32, 0, F32, x, 3);
    fx_put(fx, SB, 32, 64, F32, &ten, 1);
    isa_decoded_t d = act(ISA_ACTFN_SQUARE, tap1(SB, F32, 0, 32, 1, 3),
                          tap1(SB, F32, 32, 32, 1, 3), 1.0f);
    d.inst.f.ACT.red_op = ISA_ALU_ADD;
    d.inst.f.ACT.red_cmd = ISA_REDCMD_RESET_REDUCE; /* acc = 1 + 4 + 9 */
    d.inst.f.ACT.red_out = ptr(SB, F32, 64);
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx->acc[32], 14.0f);
    assert_feq(fx_get(fx, SB, 32, 64, F32, 0), 14.0f);
    d.inst.f.ACT.red_cmd = ISA_REDCMD_REDUCE; /* acc += 14 */
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 32, 64, F32, 0), 28.0f);
    d.inst.f.ACT.red_cmd = ISA_REDCMD_RESET; /* acc = identity of max */
    d.inst.f.ACT.red_op = ISA_ALU_MAX;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx->acc[32], -INFINITY);
    d.inst.f.ACT.red_cmd = ISA_REDCMD_REDUCE;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx->acc[32], 9.0f);
    /* load_reduce: acc = red_out value (10) op r */
    fx_put(fx, SB, 32, 64, F32, &ten, 1);
    d.inst.f.ACT.red_cmd = ISA_REDCMD_LOAD_REDUCE;
    d.inst.f.ACT.red_op = ISA_ALU_ADD;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx->acc[32], 24.0f);
    assert_feq(fx_get(fx, SB, 32, 64, F32, 0), 24.0f);
    /* idle: accumulator and red_out untouched */
    d.inst.f.ACT.red_cmd = ISA_REDCMD_IDLE;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx->acc[32], 24.0f);
    d.inst.f.ACT.red_cmd = ISA_REDCMD_REDUCE;
    d.inst.f.ACT.red_op = ISA_ALU_BITWISE_OR;
    FX_FAILS(fx, &d, "red_op", "bitwise_or");
    d.inst.f.ACT.red_op = ISA_ALU_ADD;
    d.inst.f.ACT.red_cmd = ISA_REDCMD_LOAD_REDUCE;
    d.inst.f.ACT.red_out.space = ISA_SPACE_NONE;
    FX_FAILS(fx, &d, "red_out", "absent");
    fx_free(fx);
}

static void test_acc_and_activate2(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_ACT);
    float in[2] = { 2, 3 }, out[2] = { 1, 1 }, bias = 0.5f;
    fx_put(fx, SB, 0, 0, F32, in, 2);
    fx_put(fx, SB, 0, 64, F32, out, 2);
    fx_put(fx, SB, 0, 128, F32, &bias, 1);
    isa_decoded_t d = act(ISA_ACTFN_SQUARE, tap1(SB, F32, 0, 0, 1, 2),
                          tap1(SB, F32, 64, 0, 1, 2), 1.0f);
    d.inst.op = ISA_OP_ACTIVATION_ACC;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 0), 5.0f);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 1), 10.0f);
    /* Activate2: copy(((x + 1) * 3) + bias) */
    d = mk(ISA_OP_ACTIVATE2);
    d.inst.f.ACT2.in = tap1(SB, F32, 0, 0, 1, 2);
    d.inst.f.ACT2.out = tap1(SB, F32, 64, 0, 1, 2);
    d.inst.f.ACT2.op0 = ISA_ALU_ADD;
    d.inst.f.ACT2.imm0 = 1.0f;
    d.inst.f.ACT2.op1 = ISA_ALU_MULTIPLY;
    d.inst.f.ACT2.imm1 = 3.0f;
    d.inst.f.ACT2.bias = ptr(SB, F32, 128);
    d.inst.f.ACT2.func = ISA_ACTFN_COPY;
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 0), 9.5f);
    assert_feq(fx_get(fx, SB, 0, 64, F32, 1), 12.5f);
    d.inst.f.ACT2.op1 = ISA_ALU_LEFT_SHIFT;
    FX_FAILS(fx, &d, "op0/op1");
    fx_free(fx);
}

static void test_act_costs(void **state)
{
    (void)state;
    isa_decoded_t d = act(ISA_ACTFN_EXP, tap1(SB, F32, 0, 0, 128, 512),
                          tap1(SB, F32, 0, 0, 128, 512), 1.0f);
    /* static 100 + max(MIN_II, N); fused reduce + MIN_II */
    assert_int_equal(fx_cost("trn2", ISA_ENG_ACT, &d), 100 + 512);
    d.inst.f.ACT.in.nparts = 1;
    assert_int_equal(fx_cost("trn1", ISA_ENG_ACT, &d), 100 + 512);
    d.inst.f.ACT.red_cmd = ISA_REDCMD_REDUCE;
    assert_int_equal(fx_cost("trn2", ISA_ENG_ACT, &d), 100 + 512 + 64);
    d.inst.f.ACT.red_cmd = ISA_REDCMD_IDLE;
    d.inst.f.ACT.in.count[0] = 10;
    assert_int_equal(fx_cost("trn2", ISA_ENG_ACT, &d), 100 + 64);
    d.inst.op = ISA_OP_ACTIVATION_ACC; /* reads out too: 2N */
    d.inst.f.ACT.in.count[0] = 512;
    assert_int_equal(fx_cost("trn2", ISA_ENG_ACT, &d), 100 + 1024);
    d = mk(ISA_OP_ACTIVATE2);
    d.inst.f.ACT2.in = tap1(SB, F32, 0, 0, 128, 300);
    d.inst.f.ACT2.red_cmd = ISA_REDCMD_RESET_REDUCE;
    assert_int_equal(fx_cost("trn2", ISA_ENG_ACT, &d), 100 + 300 + 64);
}

/* trn3 (v4): ScalarE takes 256 bf16/fp16/fp8 elements per cycle, else 128
 * (ARCH4): the work halves only when input and output are such dtypes. */
static void test_act_costs_trn3(void **state)
{
    (void)state;
    isa_decoded_t d = act(ISA_ACTFN_EXP, tap1(SB, ISA_DT_BF16, 0, 0, 128, 512),
                          tap1(SB, ISA_DT_BF16, 0, 0, 128, 512), 1.0f);
    assert_int_equal(fx_cost("trn3", ISA_ENG_ACT, &d), 100 + 256);
    assert_int_equal(fx_cost("trn2", ISA_ENG_ACT, &d), 100 + 512);
    d.inst.f.ACT.out.dtype = ISA_DT_FP8E4M3;   /* fp8 is a v4 perf dtype */
    assert_int_equal(fx_cost("trn3", ISA_ENG_ACT, &d), 100 + 256);
    d.inst.f.ACT.out.dtype = F32;              /* an fp32 side: 128 per cycle */
    assert_int_equal(fx_cost("trn3", ISA_ENG_ACT, &d), 100 + 512);
    d.inst.f.ACT.out.dtype = ISA_DT_BF16;
    d.inst.f.ACT.in.count[0] = 101;            /* ceil(101 / 2), then the MIN_II floor */
    assert_int_equal(fx_cost("trn3", ISA_ENG_ACT, &d), 100 + 64);
    d.inst.f.ACT.in.count[0] = 301;
    assert_int_equal(fx_cost("trn3", ISA_ENG_ACT, &d), 100 + 151);
    d = mk(ISA_OP_ACTIVATE2);
    d.inst.f.ACT2.in = tap1(SB, ISA_DT_FP16, 0, 0, 128, 300);
    d.inst.f.ACT2.out = tap1(SB, ISA_DT_FP16, 0, 0, 128, 300);
    assert_int_equal(fx_cost("trn3", ISA_ENG_ACT, &d), 100 + 150);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_functions),
        cmocka_unit_test(test_scale_bias),
        cmocka_unit_test(test_fused_reduce),
        cmocka_unit_test(test_acc_and_activate2),
        cmocka_unit_test(test_act_costs),
        cmocka_unit_test(test_act_costs_trn3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
