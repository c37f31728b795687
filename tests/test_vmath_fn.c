/* sim/vmath_fn.c: the vectorised log, tanh, sigmoid, silu, gelu and the
 * approximate gelus against the libm path (sim_actfn, today's per-element
 * evaluation).  Over the whole fp32 input range -- every STRIDE-th bit
 * pattern of all 2^32 (both signs, NaN and inf included), plus every
 * pattern next to each kernel's range ends, around 0 and 1, and the
 * special values -- each double kernel's error, in ulps of the libm
 * expression's double result, stays within its documented bound wherever
 * the kernel is used, and every variant this CPU has gives the fp32 bits
 * of the libm path.  STRIDE is 1021 in optimised builds and 16381 in
 * unoptimised or sanitised ones (to stay within a few seconds there). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "ops.h"
#include "vmath.h"
#include "fbits.h"

#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__)
#define STRIDE 1021u
#else
#define STRIDE 16381u
#endif

enum { CHUNK = 4096 };

typedef struct {
    sim_vfn_t f;
    unsigned isa;        /* its ISA_ACTFN_ code */
    const char *name;
    int64_t bound;       /* documented SIM_V*_ULPS */
    int64_t worst;       /* measured */
    double worst_at;
    unsigned long long checked, mismatches;
} fn_case_t;

/* doubles as integers whose difference counts ulps, across signs too */
static int64_t dord(double d)
{
    int64_t i;
    memcpy(&i, &d, 8);
    return i < 0 ? INT64_MIN - i : i;
}

static void check_chunk(fn_case_t *c, const float *x, uint32_t n)
{
    float y[CHUNK];
    for (uint32_t k = 0; k < n; k++) {   /* the kernel's error where it is used */
        if (!sim_vfn_in_range(c->f, x[k]))
            continue;
        double got = sim_vfn_core(c->f, x[k]), want = sim_vfn_ref(c->f, x[k]);
        int64_t d = llabs(dord(got) - dord(want));
        if (d > c->worst) {
            c->worst = d;
            c->worst_at = x[k];
        }
    }
    for (int v = SIM_VM_PORTABLE; v <= SIM_VM_AVX512; v++) {
        if (!sim_vm_have((sim_vm_variant_t)v))
            continue;
        sim_vfn_run(c->f, y, x, n, (sim_vm_variant_t)v);
        for (uint32_t k = 0; k < n; k++) {
            float want = sim_actfn(c->isa, x[k]);
            c->checked++;
            if (bits(y[k]) != bits(want) && c->mismatches++ < 5)
                fprintf(stderr, "variant %d: %s(%a) = %a, libm path %a\n", v, c->name,
                        (double)x[k], (double)y[k], (double)want);
        }
    }
}

static void sweep(fn_case_t *c, uint64_t first, uint64_t last, uint32_t step)
{
    float x[CHUNK];
    uint32_t n = 0;
    for (uint64_t u = first; u <= last; u += step) {
        x[n++] = fb((uint32_t)u);
        if (n == CHUNK) {
            check_chunk(c, x, n);
            n = 0;
        }
    }
    if (n)
        check_chunk(c, x, n);
}

/* every pattern within 2048 of +-v */
static void around(fn_case_t *c, float v)
{
    uint32_t b = bits(fabsf(v));
    sweep(c, b - 2048, b + 2048, 1);
    sweep(c, (b | 0x80000000u) - 2048, (b | 0x80000000u) + 2048, 1);
}

static void run_case(fn_case_t *c)
{
    static const float ends[] = { 87.0f, 51.0f, 44.0f, 2.8f, 2.0f, 1.0f, 0.5f, 1e-3f,
                                  1.17549435e-38f, 3.4028235e38f };
    const float specials[] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, fb(1), fb(0x807FFFFFu),
                               1.702f, -1.702f, 88.7f, -88.7f, 1e30f, -1e30f };
    sweep(c, 0, 0xFFFFFFFFu, STRIDE);
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
        around(c, ends[i]);
    sweep(c, 0, 1u << 12, 1);
    sweep(c, 0x80000000u, 0x80001000u, 1);
    check_chunk(c, specials, sizeof specials / sizeof specials[0]);
    fprintf(stderr, "%-18s %llu results bit-identical checked, kernel worst %lld ulp at %a "
            "(bound %lld, guard %lld)\n", c->name, c->checked, (long long)c->worst, c->worst_at,
            (long long)c->bound, (long long)sim_vfn_guard(c->f));
    assert_int_equal(c->mismatches, 0);
    assert_true(c->worst <= c->bound);
    assert_true(2 * c->bound + 1 < sim_vfn_guard(c->f));
}

#define CASE(F, ISA, NAME, BOUND)                                                   \
    static void test_##NAME(void **state)                                           \
    {                                                                               \
        (void)state;                                                                \
        fn_case_t c = { F, ISA, #NAME, BOUND, 0, 0, 0, 0 };                         \
        run_case(&c);                                                               \
    }

CASE(SIM_VF_LOG, ISA_ACTFN_LOG, log, SIM_VLOG_ULPS)
CASE(SIM_VF_TANH, ISA_ACTFN_TANH, tanh, SIM_VTANH_ULPS)
CASE(SIM_VF_SIGMOID, ISA_ACTFN_SIGMOID, sigmoid, SIM_VSIGMOID_ULPS)
CASE(SIM_VF_SILU, ISA_ACTFN_SILU, silu, SIM_VSILU_ULPS)
CASE(SIM_VF_GELU_TANH, ISA_ACTFN_GELU_APPRX_TANH, gelu_apprx_tanh, SIM_VGELUT_ULPS)
CASE(SIM_VF_GELU_SIGMOID, ISA_ACTFN_GELU_APPRX_SIGMOID, gelu_apprx_sigmoid, SIM_VGELUS_ULPS)
CASE(SIM_VF_GELU, ISA_ACTFN_GELU, gelu, SIM_VGELU_ULPS)

/* inputs whose double kernel result is within the guard of a fp32
 * rounding boundary take the libm path: find some per function and check
 * them; and lengths around the vector widths and the block, in place */
static void test_guard_path_and_lengths(void **state)
{
    (void)state;
    for (int f = 0; f < SIM_VF_COUNT; f++) {
        static const unsigned isa[] = { ISA_ACTFN_LOG, ISA_ACTFN_TANH, ISA_ACTFN_SIGMOID,
                                        ISA_ACTFN_SILU, ISA_ACTFN_GELU_APPRX_TANH,
                                        ISA_ACTFN_GELU_APPRX_SIGMOID, ISA_ACTFN_GELU };
        fn_case_t c = { (sim_vfn_t)f, isa[f], "guard", 1LL << 40, 0, 0, 0, 0 };
        float x[CHUNK];
        uint32_t n = 0;
        for (uint32_t u = bits(1e-3f); u < bits(40.0f) && n < 64; u += 7) {
            double yd = sim_vfn_core((sim_vfn_t)f, fb(u));
            uint64_t b;
            memcpy(&b, &yd, 8);
            if (llabs((int64_t)(b & 0x1FFFFFFFu) - 0x10000000) <= sim_vfn_guard((sim_vfn_t)f))
                x[n++] = fb(u);
        }
        assert_true(n > 0);
        check_chunk(&c, x, n);
        assert_int_equal(c.mismatches, 0);
        for (uint32_t len = 0; len < 70; len++) {
            float a[600], b[600];
            uint32_t m = len < 35 ? len : 256 + len * 4;
            for (uint32_t k = 0; k < m; k++)
                a[k] = b[k] = (float)(k * 0.037 - 3.0 + (f == SIM_VF_LOG ? 3.5 : 0.0));
            sim_vfn((sim_vfn_t)f, a, a, m);
            for (uint32_t k = 0; k < m; k++)
                assert_int_equal(bits(a[k]), bits(sim_actfn(isa[f], b[k])));
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_guard_path_and_lengths),
        cmocka_unit_test(test_log),
        cmocka_unit_test(test_tanh),
        cmocka_unit_test(test_sigmoid),
        cmocka_unit_test(test_silu),
        cmocka_unit_test(test_gelu_apprx_tanh),
        cmocka_unit_test(test_gelu_apprx_sigmoid),
        cmocka_unit_test(test_gelu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
