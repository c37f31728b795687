/* The row-at-a-time fast path of the elementwise ops (sim/rows.c) against
 * values computed here in plain C fp32, and against the generic element
 * path (the same data read through a strided pattern, which the fast path
 * does not take).  Includes NaN/inf/denormal inputs, bf16 rounding,
 * in-place and partially overlapping operands. */
#include "ops_fixture.h"
#include "ops.h"

#define SB ISA_SPACE_SBUF
#define F32 ISA_DT_FP32
#define BF16 ISA_DT_BF16
#define N 200  /* elements per partition (the fixture has 4 KiB partitions) */

static float val(unsigned p, unsigned i, unsigned salt)
{
    static const float special[] = { NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, -3e38f };
    uint32_t h = (p * 131u + i * 7u + salt * 977u) * 2654435761u;
    if (h % 37 == 0)
        return special[(h >> 8) % 7];
    return ((float)(h >> 9) / (float)(1u << 23) - 0.5f) * 8.0f;
}

static isa_decoded_t tt(unsigned op, isa_tap_t a, isa_tap_t b, isa_tap_t o)
{
    isa_decoded_t d = mk(ISA_OP_TENSOR_TENSOR);
    d.inst.f.TT.in0 = a;
    d.inst.f.TT.in1 = b;
    d.inst.f.TT.out = o;
    d.inst.f.TT.op = op;
    return d;
}

static bool same_bits(float a, float b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, 4) == 0;
}

/* Plain C fp32 reference of the ops under test. */
static float ref_op(unsigned op, float a, float b)
{
    switch (op) {
    case ISA_ALU_ADD: return a + b;
    case ISA_ALU_SUBTRACT: return a - b;
    case ISA_ALU_MULTIPLY: return a * b;
    case ISA_ALU_DIVIDE: return a / b;
    case ISA_ALU_MAX: return (isnan(a) || isnan(b)) ? NAN : a > b ? a : b;
    case ISA_ALU_MIN: return (isnan(a) || isnan(b)) ? NAN : a < b ? a : b;
    case ISA_ALU_IS_GE: return a >= b ? 1.0f : 0.0f;
    default: return a;   /* bypass */
    }
}

/* in0 at 0, in1 at 2*N*4 (dense, or interleaved with step 2 for the generic
 * path), out at 4*N*4 in dtype odt. */
static void run_tt(fx_t *fx, unsigned op, unsigned odt, bool strided, unsigned nparts)
{
    int32_t s = strided ? 2 : 1;
    for (unsigned p = 0; p < nparts; p++)
        for (unsigned i = 0; i < N; i++) {
            float a = val(p, i, 1), b = val(p, i, 2);
            fx_put(fx, SB, p, i * 4 * s, F32, &a, 1);
            fx_put(fx, SB, p, 2 * N * 4 + i * 4 * s, F32, &b, 1);
        }
    isa_tap_t a = tap2(SB, F32, 0, 0, nparts, 100, s, 2, 100 * s);
    isa_tap_t b = tap2(SB, F32, 2 * N * 4, 0, nparts, 100, s, 2, 100 * s);
    isa_decoded_t d = tt(op, a, b, tap1(SB, odt, 4 * N * 4, 0, nparts, N));
    assert_int_equal(fx_run(fx, &d), 0);
}

static void test_tt_fast_matches_reference_and_generic(void **state)
{
    (void)state;
    const unsigned ops[] = { ISA_ALU_ADD, ISA_ALU_SUBTRACT, ISA_ALU_MULTIPLY, ISA_ALU_DIVIDE,
                             ISA_ALU_MAX, ISA_ALU_MIN, ISA_ALU_IS_GE, ISA_ALU_BYPASS };
    const unsigned dts[] = { F32, BF16 };
    fx_t *fast = fx_new("trn2", ISA_ENG_DVE), *slow = fx_new("trn2", ISA_ENG_DVE);
    for (unsigned k = 0; k < sizeof ops / sizeof ops[0]; k++)
        for (unsigned t = 0; t < 2; t++) {
            run_tt(fast, ops[k], dts[t], false, 4);
            run_tt(slow, ops[k], dts[t], true, 4);
            for (unsigned p = 0; p < 4; p++)
                for (unsigned i = 0; i < N; i++) {
                    float want = num_round_to(ref_op(ops[k], val(p, i, 1), val(p, i, 2)), dts[t]);
                    float got = fx_get(fast, SB, p, 4 * N * 4, dts[t], i);
                    float gen = fx_get(slow, SB, p, 4 * N * 4, dts[t], i);
                    if (!same_bits(got, want) || !same_bits(got, gen))
                        fail_msg("op %u dt %u p %u i %u: fast %.9g generic %.9g want %.9g",
                                 ops[k], dts[t], p, i, got, gen, want);
                }
        }
    fx_free(fast);
    fx_free(slow);
}

/* out overlaps in0 shifted by one element: element order matters, so the
 * op must behave as the element loop (out[i] = in0[i] + 1 reads the
 * already written out[i-1] when out starts one element later). */
static void test_partial_overlap_keeps_element_order(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    float ones[N], z = 0.0f;
    for (unsigned i = 0; i < N; i++)
        ones[i] = 1.0f;
    fx_put(fx, SB, 0, 0, F32, &z, 1);
    fx_put(fx, SB, 0, 4 * (N + 1), F32, ones, N);
    isa_decoded_t d = tt(ISA_ALU_ADD, tap1(SB, F32, 0, 0, 1, N),
                         tap1(SB, F32, 4 * (N + 1), 0, 1, N), tap1(SB, F32, 4, 0, 1, N));
    assert_int_equal(fx_run(fx, &d), 0);
    for (unsigned i = 0; i < N; i++) /* a running count: out[i] = i + 1 */
        assert_feq(fx_get(fx, SB, 0, 4, F32, i), (float)(i + 1));
    /* exactly in place takes the fast path: out = in0 * in1 = x * x */
    d = tt(ISA_ALU_MULTIPLY, tap1(SB, F32, 4, 0, 1, N), tap1(SB, F32, 4, 0, 1, N),
           tap1(SB, F32, 4, 0, 1, N));
    assert_int_equal(fx_run(fx, &d), 0);
    assert_feq(fx_get(fx, SB, 0, 4, F32, 9), 100.0f);
    fx_free(fx);
}

/* TensorScalar fast path incl. reversed operands, bf16 in and out. */
static void test_ts_fast_rev(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    for (unsigned i = 0; i < N; i++) {
        float a = val(0, i, 3);
        fx_put(fx, SB, 0, i * 2, BF16, &a, 1);
    }
    isa_decoded_t d = mk(ISA_OP_TENSOR_SCALAR);
    d.inst.f.TS.in = tap1(SB, BF16, 0, 0, 1, N);
    d.inst.f.TS.out = tap1(SB, BF16, 1024, 0, 1, N);
    d.inst.f.TS.op0 = ISA_ALU_SUBTRACT;
    d.inst.f.TS.s0 = f2u(0.75f);
    d.inst.f.TS.rev0 = 1;
    d.inst.f.TS.op1 = ISA_ALU_DIVIDE;
    d.inst.f.TS.s1 = f2u(3.0f);
    d.inst.f.TS.rev1 = 1;
    assert_int_equal(fx_run(fx, &d), 0);
    for (unsigned i = 0; i < N; i++) {
        float x = num_round_to(val(0, i, 3), BF16);
        float want = num_round_to(3.0f / (0.75f - x), BF16);
        assert_true(same_bits(fx_get(fx, SB, 0, 1024, BF16, i), want));
    }
    fx_free(fx);
}

/* A per-partition scalar that the output overwrites is read once, before
 * the partition's first write (as the element loop does), even when the
 * partition is processed in several runs. */
static void test_ts_ptr_scalar_read_before_writes(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    float ones[24], five = 5.0f;
    for (unsigned i = 0; i < 24; i++)
        ones[i] = 1.0f;
    fx_put(fx, SB, 0, 0, F32, ones, 24);
    fx_put(fx, SB, 0, 256, F32, &five, 1);
    isa_decoded_t d = mk(ISA_OP_TENSOR_SCALAR_PTR);
    d.inst.f.TS.in = tap2(SB, F32, 0, 0, 1, 4, 1, 3, 8);   /* 3 runs of 4 */
    d.inst.f.TS.out = tap2(SB, F32, 256, 0, 1, 4, 1, 3, 8);
    d.inst.f.TS.op0 = ISA_ALU_ADD;
    d.inst.f.TS.s0 = ptr_bits(SB, F32, 256);               /* out's first element */
    d.inst.f.TS.s0_is_ptr = 1;
    d.inst.f.TS.op1 = ISA_ALU_BYPASS;
    assert_int_equal(fx_run(fx, &d), 0);
    for (unsigned r = 0; r < 3; r++)
        for (unsigned j = 0; j < 4; j++)
            assert_feq(fx_get(fx, SB, 0, 256 + r * 32, F32, j), 6.0f);
    fx_free(fx);
}

/* Activation fast path with a fused free-axis reduction and accumulate. */
static void test_act_fast_reduce(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_ACT);
    float x[N], o0[N];
    for (unsigned i = 0; i < N; i++) {
        x[i] = val(1, i, 4);
        if (!isfinite(x[i]))
            x[i] = 0.5f;
        o0[i] = 1.0f;
    }
    fx_put(fx, SB, 0, 0, F32, x, N);
    fx_put(fx, SB, 0, 2048, F32, o0, N);
    isa_decoded_t d = mk(ISA_OP_ACTIVATION_ACC);
    d.inst.f.ACT.in = tap1(SB, F32, 0, 0, 1, N);
    d.inst.f.ACT.out = tap1(SB, F32, 2048, 0, 1, N);
    d.inst.f.ACT.func = ISA_ACTFN_COPY;
    d.inst.f.ACT.scale = 2.0f;
    d.inst.f.ACT.red_cmd = ISA_REDCMD_RESET_REDUCE;
    d.inst.f.ACT.red_op = ISA_ALU_ADD;
    assert_int_equal(fx_run(fx, &d), 0);
    float sum = 0.0f;
    for (unsigned i = 0; i < N; i++) {
        float y = 1.0f + x[i] * 2.0f;
        sum = i == 0 ? y : sum + y;
        assert_true(same_bits(fx_get(fx, SB, 0, 2048, F32, i), y));
    }
    assert_true(same_bits(fx->acc[0], sum));
    fx_free(fx);
}

/* TensorReduce over inner axes: the fast path (contiguous input) against
 * the generic element path (the same values read through a stride-2
 * pattern), for ops, dtypes, negate and axes (axes 2, an outer axis, runs
 * the generic path on both). */
static void run_red(fx_t *fx, unsigned op, unsigned idt, unsigned odt, unsigned axes, bool neg,
                    bool strided)
{
    int32_t s = strided ? 2 : 1;
    unsigned es = idt == F32 ? 4 : 2;
    for (unsigned p = 0; p < 4; p++)
        for (unsigned i = 0; i < N; i++) {
            float a = val(p, i, 5 + op);
            fx_put(fx, SB, p, i * es * s, idt, &a, 1);
        }
    isa_decoded_t d = mk(ISA_OP_TENSOR_REDUCE);
    d.inst.f.RED.in = tap2(SB, idt, 0, 0, 4, 10, s, 20, 10 * s);
    uint32_t nout = axes == 1 ? 20 : axes == 2 ? 10 : 1;
    d.inst.f.RED.out = tap1(SB, odt, 2048, 0, 4, nout);
    d.inst.f.RED.op = op;
    d.inst.f.RED.axes = axes;
    d.inst.f.RED.negate = neg;
    assert_int_equal(fx_run(fx, &d), 0);
}

static void test_reduce_fast_matches_generic(void **state)
{
    (void)state;
    const unsigned ops[] = { ISA_ALU_ADD, ISA_ALU_MAX, ISA_ALU_MIN, ISA_ALU_MULTIPLY,
                             ISA_ALU_ABS_MAX };
    fx_t *fast = fx_new("trn2", ISA_ENG_DVE), *slow = fx_new("trn2", ISA_ENG_DVE);
    for (unsigned k = 0; k < sizeof ops / sizeof ops[0]; k++)
        for (unsigned dt = 0; dt < 4; dt++)
            for (unsigned axes = 1; axes <= 3; axes++) {
                unsigned idt = dt & 1 ? BF16 : F32, odt = dt & 2 ? BF16 : F32;
                bool neg = (k + axes) % 2;
                run_red(fast, ops[k], idt, odt, axes, neg, false);
                run_red(slow, ops[k], idt, odt, axes, neg, true);
                uint32_t nout = axes == 1 ? 20 : axes == 2 ? 10 : 1;
                for (unsigned p = 0; p < 4; p++)
                    for (uint32_t j = 0; j < nout; j++) {
                        float got = fx_get(fast, SB, p, 2048, odt, j);
                        float gen = fx_get(slow, SB, p, 2048, odt, j);
                        if (memcmp(&got, &gen, 4) != 0)
                            fail_msg("op %u dt %u axes %u p %u j %u: fast %.9g generic %.9g",
                                     ops[k], dt, axes, p, j, got, gen);
                    }
            }
    /* a known value: the sum of 1..10 per group, negated */
    for (unsigned i = 0; i < N; i++) {
        float a = (float)(i % 10 + 1);
        fx_put(fast, SB, 0, i * 4, F32, &a, 1);
    }
    isa_decoded_t d = mk(ISA_OP_TENSOR_REDUCE);
    d.inst.f.RED.in = tap2(SB, F32, 0, 0, 1, 10, 1, 20, 10);
    d.inst.f.RED.out = tap1(SB, F32, 2048, 0, 1, 20);
    d.inst.f.RED.op = ISA_ALU_ADD;
    d.inst.f.RED.axes = 1;
    d.inst.f.RED.negate = 1;
    assert_int_equal(fx_run(fast, &d), 0);
    assert_feq(fx_get(fast, SB, 0, 2048, F32, 7), -55.0f);
    fx_free(fast);
    fx_free(slow);
}

/* sim_row_fold against the in-order sim_alu_f fold, bit for bit: lengths
 * around the 16 lanes, data with NaN (payloads), +-inf, and only +-0 at
 * the extreme (the last equal element decides the sign). */
static void test_row_fold_matches_alu(void **state)
{
    (void)state;
    const unsigned ops[] = { ISA_ALU_ADD, ISA_ALU_MULTIPLY, ISA_ALU_MAX, ISA_ALU_MIN,
                             ISA_ALU_ABS_MAX };
    float x[80];
    for (unsigned trial = 0; trial < 400; trial++) {
        uint32_t n = trial % 80;
        for (uint32_t k = 0; k < n; k++) {
            x[k] = val(trial, k, 9);
            if (trial % 3 == 0 && !isnan(x[k])) /* zeros at the extreme */
                x[k] = (trial + k) % 5 ? -fabsf(x[k]) - 1.0f : ((trial >> 2) + k) % 2 ? -0.0f : 0.0f;
            if (trial % 3 == 1 && isnan(x[k]))
                x[k] = 1.0f;
        }
        if (trial % 7 == 0 && n) {
            uint32_t pay = 0x7FC01234u; /* a NaN with a payload */
            memcpy(&x[trial % n], &pay, 4);
        }
        for (unsigned j = 0; j < sizeof ops / sizeof ops[0]; j++) {
            for (unsigned a0 = 0; a0 < 3; a0++) {
                float acc = a0 == 0 ? 0.0f : a0 == 1 ? -0.0f : -5.0f;
                float want = acc;
                for (uint32_t k = 0; k < n; k++)
                    want = sim_alu_f(ops[j], want, x[k]);
                float got = sim_row_fold(ops[j], acc, x, n);
                /* max/min give the canonical NaN; an add or multiply of two
                 * NaNs keeps either payload (the compiler may swap operands,
                 * as in every other row-path test: same_bits) */
                bool ok = ops[j] == ISA_ALU_ADD || ops[j] == ISA_ALU_MULTIPLY
                              ? same_bits(got, want) : memcmp(&got, &want, 4) == 0;
                if (!ok)
                    fail_msg("op %u n %u trial %u: fold %a, alu %a", ops[j], n, trial, got, want);
            }
        }
    }
}

/* Activation functions with a row fast path (exp, square, reciprocal,
 * sqrt, tanh, relu): contiguous operands against the generic element path. */
static void test_act_fast_funcs_match_generic(void **state)
{
    (void)state;
    const unsigned fns[] = { ISA_ACTFN_EXP, ISA_ACTFN_SQUARE, ISA_ACTFN_RECIPROCAL,
                             ISA_ACTFN_SQRT, ISA_ACTFN_TANH, ISA_ACTFN_RELU };
    fx_t *fx = fx_new("trn2", ISA_ENG_ACT);
    for (unsigned j = 0; j < sizeof fns / sizeof fns[0]; j++)
        for (unsigned dt = 0; dt < 2; dt++) {
            unsigned odt = dt ? BF16 : F32;
            for (unsigned i = 0; i < N; i++) {
                float a = val(2, i, 11 + j) * (i % 3 ? 12.0f : 1.0f);
                fx_put(fx, SB, 0, i * 4, F32, &a, 1);     /* dense */
                fx_put(fx, SB, 32, i * 8, F32, &a, 1);     /* stride 2 */
            }
            isa_decoded_t d = mk(ISA_OP_ACTIVATION);
            d.inst.f.ACT.func = fns[j];
            d.inst.f.ACT.scale = 1.0f;
            d.inst.f.ACT.in = tap1(SB, F32, 0, 0, 1, N);
            d.inst.f.ACT.out = tap1(SB, odt, 2048, 0, 1, N);
            assert_int_equal(fx_run(fx, &d), 0);
            d.inst.f.ACT.in = tap2(SB, F32, 0, 32, 1, N, 2, 1, 2 * N);
            d.inst.f.ACT.out = tap1(SB, odt, 2048, 32, 1, N);
            if (fx_run(fx, &d) != 0)
                fail_msg("generic path: %s", fx->err.msg);
            for (unsigned i = 0; i < N; i++) {
                float got = fx_get(fx, SB, 0, 2048, odt, i), gen = fx_get(fx, SB, 32, 2048, odt, i);
                float in = val(2, i, 11 + j) * (i % 3 ? 12.0f : 1.0f);
                float want = sim_actfn(fns[j], in * 1.0f + 0.0f);
                if (memcmp(&got, &gen, 4) != 0 || (odt == F32 && memcmp(&got, &want, 4) != 0))
                    fail_msg("fn %u dt %u i %u: fast %a generic %a", fns[j], dt, i, got, gen);
            }
        }
    fx_free(fx);
}

/* Tiny rows (1..12 elements, 1..3 partitions: the inline fp32 load/store
 * of up to 8 elements, 4 at a time, and the one-chunk partition) through
 * TensorTensor and TensorScalar, fp32 and bf16 out, against the generic
 * element path and plain C. */
static void test_tiny_rows_match_generic(void **state)
{
    (void)state;
    fx_t *fx = fx_new("trn2", ISA_ENG_DVE);
    for (unsigned n = 1; n <= 12; n++)
        for (unsigned np = 1; np <= 3; np++)
            for (unsigned dt = 0; dt < 2; dt++) {
                unsigned odt = dt ? BF16 : F32;
                for (unsigned p = 0; p < np; p++)
                    for (unsigned i = 0; i < n; i++) {
                        float a = val(p, i, 40 + n), b = val(p, i, 60 + n);
                        fx_put(fx, SB, p, i * 4, F32, &a, 1);        /* dense */
                        fx_put(fx, SB, p, 256 + i * 4, F32, &b, 1);
                        fx_put(fx, SB, 32 + p, i * 8, F32, &a, 1);   /* stride 2 */
                        fx_put(fx, SB, 32 + p, 256 + i * 8, F32, &b, 1);
                    }
                for (unsigned ts = 0; ts < 2; ts++) {
                    isa_decoded_t d[2];
                    for (unsigned g = 0; g < 2; g++) { /* g = 1: generic (strided in) */
                        unsigned st = g ? 32 : 0;
                        int32_t s = g ? 2 : 1;
                        isa_tap_t a = tap2(SB, F32, 0, st, np, n, s, 1, n * s);
                        isa_tap_t b = tap2(SB, F32, 256, st, np, n, s, 1, n * s);
                        isa_tap_t o = tap1(SB, odt, 1024, st, np, n);
                        if (ts) {
                            d[g] = mk(ISA_OP_TENSOR_SCALAR);
                            d[g].inst.f.TS.in = a;
                            d[g].inst.f.TS.out = o;
                            d[g].inst.f.TS.op0 = ISA_ALU_MULTIPLY;
                            d[g].inst.f.TS.op1 = ISA_ALU_BYPASS;
                            float h = 0.5f;
                            memcpy(&d[g].inst.f.TS.s0, &h, 4);
                        } else
                            d[g] = tt(ISA_ALU_SUBTRACT, a, b, o);
                        if (fx_run(fx, &d[g]) != 0)
                            fail_msg("n %u np %u: %s", n, np, fx->err.msg);
                    }
                    for (unsigned p = 0; p < np; p++)
                        for (unsigned i = 0; i < n; i++) {
                            float a = val(p, i, 40 + n), b = val(p, i, 60 + n);
                            float want = num_round_to(ts ? a * 0.5f : a - b, odt);
                            float got = fx_get(fx, SB, p, 1024, odt, i);
                            float gen = fx_get(fx, SB, 32 + p, 1024, odt, i);
                            if (!same_bits(got, want) || !same_bits(got, gen))
                                fail_msg("%s n %u np %u dt %u p %u i %u: fast %a generic %a "
                                         "want %a", ts ? "ts" : "tt", n, np, odt, p, i, got,
                                         gen, want);
                        }
                }
            }
    fx_free(fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tt_fast_matches_reference_and_generic),
        cmocka_unit_test(test_partial_overlap_keeps_element_order),
        cmocka_unit_test(test_ts_fast_rev),
        cmocka_unit_test(test_ts_ptr_scalar_read_before_writes),
        cmocka_unit_test(test_act_fast_reduce),
        cmocka_unit_test(test_reduce_fast_matches_generic),
        cmocka_unit_test(test_row_fold_matches_alu),
        cmocka_unit_test(test_act_fast_funcs_match_generic),
        cmocka_unit_test(test_tiny_rows_match_generic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
