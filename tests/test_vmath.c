/* sim/vmath.c: the vectorised exp against libm.  Over the whole fp32 input
 * range (every 1021st bit pattern, all signs, NaN and inf included, plus
 * every pattern near the range ends and around 0): the double kernel's
 * error, in ulps of libm's exp, stays within SIM_VEXP_ULPS, and every
 * variant this CPU has gives (float)exp((double)x) bit for bit, including
 * inputs placed exactly on the guard's recompute path. */
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

#include "vmath.h"
#include "fbits.h"

static int64_t dord(double d)
{
    int64_t i;
    memcpy(&i, &d, 8);
    return i;
}

enum { CHUNK = 4096 };

/* compare one chunk of inputs on every variant; returns mismatches */
static unsigned check_chunk(const float *x, uint32_t n)
{
    float y[CHUNK];
    unsigned bad = 0;
    for (int v = SIM_VM_PORTABLE; v <= SIM_VM_AVX512; v++) {
        if (!sim_vm_have((sim_vm_variant_t)v))
            continue;
        sim_vexp_run(y, x, n, (sim_vm_variant_t)v);
        for (uint32_t k = 0; k < n; k++) {
            float want = (float)exp((double)x[k]);
            if (bits(y[k]) != bits(want) && !(isnan(y[k]) && isnan(want) &&
                                              bits(y[k]) == bits(want))) {
                if (bad++ < 5)
                    fprintf(stderr, "variant %d: exp(%a) = %a, libm %a\n", v, (double)x[k],
                            (double)y[k], (double)want);
            }
        }
    }
    return bad;
}

static void sweep(uint32_t first, uint32_t last, uint32_t step, unsigned *bad)
{
    float x[CHUNK];
    uint32_t n = 0;
    for (uint64_t u = first; u <= last; u += step) {
        x[n++] = fb((uint32_t)u);
        if (n == CHUNK) {
            *bad += check_chunk(x, n);
            n = 0;
        }
    }
    if (n)
        *bad += check_chunk(x, n);
}

static void test_exp_bits_whole_range(void **state)
{
    (void)state;
    unsigned bad = 0;
    sweep(0, 0xFFFFFFFFu, 1021, &bad);                       /* everything, strided */
    sweep(bits(-87.0f) - 4096, bits(-87.0f) + 4096, 1, &bad); /* lower range end */
    sweep(bits(88.5f) - 4096, bits(88.5f) + 4096, 1, &bad);   /* upper range end */
    sweep(bits(88.72f) - 4096, bits(88.72f) + 4096, 1, &bad); /* overflow */
    sweep(0, 1u << 16, 1, &bad);                              /* +0, tiny */
    sweep(0x80000000u, 0x80010000u, 1, &bad);                 /* -0, tiny */
    sweep(bits(1.0f) - 65536, bits(1.0f) + 65536, 1, &bad);
    assert_int_equal(bad, 0);
}

/* the kernel's error bound, measured against libm over the kernel's range */
static void test_exp_kernel_error(void **state)
{
    (void)state;
    int64_t worst = 0;
    double at = 0;
    unsigned n = 0;
    for (int s = 0; s < 2; s++) {
        uint32_t lo = 0, hi = bits(s ? 87.0f : 88.5f);
        for (uint64_t u = lo; u <= hi; u += 211) {
            float xf = fb((uint32_t)u | (s ? 0x80000000u : 0));
            double x = xf, got = sim_vexp_core(x), want = exp(x);
            int64_t d = llabs(dord(got) - dord(want));
            if (d > worst) {
                worst = d;
                at = x;
            }
            n++;
        }
    }
    fprintf(stderr, "exp kernel: %u inputs, worst error %lld ulp of the double at x = %a "
            "(documented bound %d)\n", n, (long long)worst, at, SIM_VEXP_ULPS);
    assert_true(worst <= SIM_VEXP_ULPS);
    assert_true(2 * SIM_VEXP_ULPS + 1 < SIM_VEXP_GUARD);
}

/* inputs whose double result is within the guard of a fp32 rounding
 * boundary take the libm path: find some and check them explicitly */
static void test_exp_guard_path(void **state)
{
    (void)state;
    float x[CHUNK];
    uint32_t n = 0;
    for (uint32_t u = bits(1e-3f); u < bits(80.0f) && n < 64; u++) {
        double yd = sim_vexp_core(fb(u));
        uint64_t b;
        memcpy(&b, &yd, 8);
        int64_t d = (int64_t)(b & 0x1FFFFFFFu) - 0x10000000;
        if (llabs(d) <= SIM_VEXP_GUARD) {
            x[n++] = fb(u);
            x[n++] = -fb(u);
        }
    }
    assert_true(n > 0);
    assert_int_equal(check_chunk(x, n), 0);
    /* lengths around the vector widths and the block size, in place */
    for (uint32_t len = 0; len < 70; len++) {
        float a[600], b[600];
        uint32_t m = len < 35 ? len : 256 + len * 4;
        for (uint32_t k = 0; k < m; k++)
            a[k] = b[k] = (float)(k * 0.37 - 60.0);
        sim_vexp(a, a, m);
        for (uint32_t k = 0; k < m; k++)
            assert_int_equal(bits(a[k]), bits((float)exp((double)b[k])));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exp_kernel_error),
        cmocka_unit_test(test_exp_guard_path),
        cmocka_unit_test(test_exp_bits_whole_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
