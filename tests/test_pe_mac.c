/* sim/pe_mac.c: every kernel variant this CPU has against the scalar
 * reference loop, bit for bit (bf16/fp8-like inputs on the fused path,
 * fp32 inputs on the multiply-then-add path, tails, accumulate, two
 * segments); the exactness proof against a brute-force check of every
 * product; the one-pass bf16/fp32 loads and their scans. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "pe_mac.h"
#include "fbits.h"

typedef struct {
    uint64_t s;
} rng_t;

static uint32_t rnd(rng_t *r)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(r->s >> 32);
}

/* A value with mbits significant bits and a biased exponent in
 * [elo, ehi]; every 13th is zero. */
static float val(rng_t *r, unsigned mbits, unsigned elo, unsigned ehi)
{
    uint32_t u = rnd(r);
    if (u % 13 == 0)
        return (u & 2) ? -0.0f : 0.0f;
    uint32_t e = elo + rnd(r) % (ehi - elo + 1);
    uint32_t mant = rnd(r) & 0x7FFFFFu & ~((1u << (23 - (mbits - 1))) - 1u);
    return fb((u & 0x80000000u) | e << 23 | mant);
}

typedef struct {
    unsigned k, m, nseg;
    uint32_t n;
    float *w, *x, *o_ref, *o_got, *init;
} case_t;

static void case_fill(case_t *c, rng_t *r, unsigned mbits, unsigned elo, unsigned ehi)
{
    size_t nw = (size_t)2 * c->k * 128, nx = (size_t)2 * c->k * c->n, no = (size_t)c->m * c->n;
    c->w = malloc(nw * 4);
    c->x = malloc(nx * 4);
    c->o_ref = malloc(no * 4);
    c->o_got = malloc(no * 4);
    c->init = malloc(no * 4);
    assert_non_null(c->w);
    assert_non_null(c->x);
    assert_non_null(c->o_ref);
    assert_non_null(c->o_got);
    assert_non_null(c->init);
    for (size_t i = 0; i < nw; i++)
        c->w[i] = val(r, mbits, elo, ehi);
    for (size_t i = 0; i < nx; i++)
        c->x[i] = val(r, mbits, elo, ehi);
    for (size_t i = 0; i < no; i++)
        c->init[i] = val(r, 24, 100, 150);
}

static void case_free(case_t *c)
{
    free(c->w);
    free(c->x);
    free(c->o_ref);
    free(c->o_got);
    free(c->init);
}

static sim_pe_mac_t case_args(const case_t *c, float *out, bool acc, bool fma)
{
    sim_pe_mac_t a = { .w = { c->w, c->w + (size_t)c->k * 128 },
                       .x = { c->x, c->x + (size_t)c->k * c->n },
                       .wstride = 128, .xstride = c->n, .nseg = c->nseg, .k = c->k, .m = c->m,
                       .n = c->n, .out = out, .ostride = c->n, .accumulate = acc, .fma = fma };
    return a;
}

/* The case's exactness verdict, from scans of exactly the values used. */
static bool case_exact(const case_t *c)
{
    sim_pe_fstats_t ws, xs;
    sim_pe_stats_init(&ws);
    sim_pe_stats_init(&xs);
    for (unsigned s = 0; s < c->nseg; s++)
        for (unsigned r = 0; r < c->k; r++)
            sim_pe_stats_f32(&ws, c->w + ((size_t)s * c->k + r) * 128, c->m);
    sim_pe_stats_f32(&xs, c->x, (size_t)c->nseg * c->k * c->n);
    return sim_pe_mac_exact(&ws, &xs);
}

/* Run variant v and the scalar reference; count differing output bits. */
static size_t case_diff(case_t *c, sim_pe_variant_t v, bool acc, bool fma)
{
    size_t no = (size_t)c->m * c->n, bad = 0;
    memcpy(c->o_ref, c->init, no * 4);
    memcpy(c->o_got, c->init, no * 4);
    sim_pe_mac_t ref = case_args(c, c->o_ref, acc, false), got = case_args(c, c->o_got, acc, fma);
    sim_pe_mac_run(&ref, SIM_PE_SCALAR);
    sim_pe_mac_run(&got, v);
    for (size_t i = 0; i < no; i++)
        bad += bits(c->o_ref[i]) != bits(c->o_got[i]);
    return bad;
}

static const unsigned shapes[][4] = { /* k, m, n, nseg */
    { 128, 128, 512, 1 }, { 128, 128, 64, 2 }, { 1, 1, 1, 1 }, { 3, 5, 7, 1 },
    { 64, 13, 33, 2 }, { 128, 127, 47, 1 }, { 32, 9, 100, 1 }, { 17, 64, 31, 2 },
};

static void run_variants(unsigned mbits, unsigned elo, unsigned ehi, bool want_exact)
{
    rng_t r = { 12345u + mbits * 7u + elo };
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
        case_t c = { .k = shapes[sh][0], .m = shapes[sh][1], .n = shapes[sh][2],
                     .nseg = shapes[sh][3] };
        case_fill(&c, &r, mbits, elo, ehi);
        bool exact = case_exact(&c);
        if (want_exact)
            assert_true(exact);
        for (int v = SIM_PE_PORTABLE; v < SIM_PE_NVARIANTS; v++) {
            if (!sim_pe_mac_have((sim_pe_variant_t)v))
                continue;
            for (int acc = 0; acc < 2; acc++) {
                size_t d = case_diff(&c, (sim_pe_variant_t)v, acc, exact);
                if (d)
                    fail_msg("variant %d shape %zu acc %d fma %d: %zu outputs differ", v, sh,
                             acc, exact, d);
            }
        }
        case_free(&c);
    }
}

/* bf16 x bf16 with ordinary exponents: exact, fused path. */
static void test_bf16_fused(void **state)
{
    (void)state;
    run_variants(8, 110, 140, true);
}

/* fp8-like (4 significant bits), tiny exponents including subnormal
 * products' neighbourhood: the proof decides, both paths must match. */
static void test_lowp_small(void **state)
{
    (void)state;
    run_variants(4, 50, 80, false);
    run_variants(8, 1, 200, false);
}

/* fp32 inputs: not exact, multiply-then-add path. */
static void test_fp32_unfused(void **state)
{
    (void)state;
    run_variants(24, 100, 150, false);
    run_variants(24, 1, 254, false); /* overflow to inf and subnormals */
}

/* The test can fail: forcing the fused path on fp32 data changes bits. */
static void test_fused_detectable(void **state)
{
    (void)state;
    rng_t r = { 99 };
    case_t c = { .k = 128, .m = 16, .n = 64, .nseg = 1 };
    case_fill(&c, &r, 24, 120, 130);
    assert_false(case_exact(&c));
    for (int v = SIM_PE_AVX2; v < SIM_PE_NVARIANTS; v++)
        if (sim_pe_mac_have((sim_pe_variant_t)v))
            assert_true(case_diff(&c, (sim_pe_variant_t)v, false, true) > 0);
    case_free(&c);
}

static void stats_of(sim_pe_fstats_t *st, const float *v, size_t n)
{
    sim_pe_stats_init(st);
    sim_pe_stats_f32(st, v, n);
}

static bool products_exact(const float *w, size_t nw, const float *x, size_t nx)
{
    for (size_t i = 0; i < nw; i++)
        for (size_t j = 0; j < nx; j++) {
            double p = (double)w[i] * (double)x[j];
            float f = w[i] * x[j];
            if (!isfinite(f) || (double)f != p)
                return false;
        }
    return true;
}

/* Whenever the proof says exact, every product is (brute force); it says
 * exact for bf16 pairs, not for fp32 ones, not for inf/NaN. */
static void test_exact_proof(void **state)
{
    (void)state;
    rng_t r = { 7 };
    float w[16], x[16];
    unsigned said = 0;
    for (int it = 0; it < 20000; it++) {
        unsigned mw = 1 + rnd(&r) % 24, mx = 1 + rnd(&r) % 24;
        unsigned e0 = 1 + rnd(&r) % 254, e1 = 1 + rnd(&r) % 254;
        unsigned span = rnd(&r) % 8;
        for (int i = 0; i < 16; i++) {
            w[i] = val(&r, mw, e0, e0 + span > 254 ? 254 : e0 + span);
            x[i] = val(&r, mx, e1, e1 + span > 254 ? 254 : e1 + span);
            if (rnd(&r) % 50 == 0) /* subnormals */
                x[i] = fb(rnd(&r) & 0x807FFFFFu);
        }
        sim_pe_fstats_t ws, xs;
        stats_of(&ws, w, 16);
        stats_of(&xs, x, 16);
        if (sim_pe_mac_exact(&ws, &xs)) {
            said++;
            assert_true(products_exact(w, 16, x, 16));
        }
    }
    assert_true(said > 1000);
    float a[2] = { 1.5f, -3.25f }, b[2] = { fb(0x3F812345), 2.0f };
    sim_pe_fstats_t sa, sb;
    stats_of(&sa, a, 2);
    stats_of(&sb, a, 2);
    assert_true(sim_pe_mac_exact(&sa, &sb));
    stats_of(&sb, b, 2);
    stats_of(&sa, b, 2);
    assert_false(sim_pe_mac_exact(&sa, &sb));
    b[0] = INFINITY;
    stats_of(&sb, b, 2);
    stats_of(&sa, a, 2);
    assert_false(sim_pe_mac_exact(&sa, &sb));
    assert_false(sim_pe_stats_finite(&sb));
    b[0] = NAN;
    stats_of(&sb, b, 2);
    assert_false(sim_pe_mac_exact(&sa, &sb));
    float z[3] = { 0.0f, -0.0f, 0.0f };
    stats_of(&sb, z, 3);
    stats_of(&sa, b, 1); /* w all zero, x NaN: not finite */
    assert_false(sim_pe_mac_exact(&sb, &sa));
}

/* The one-pass loads and the scans of every variant: same values as a
 * plain conversion, same scan result as the plain C scan, at every
 * length around the vector widths (zeros, subnormals, inf and NaN among
 * the values). */
static void test_loads(void **state)
{
    (void)state;
    rng_t r = { 3 };
    enum { N = 1500 };
    _Alignas(4) uint8_t src[4 * N];
    float got[N], want[N];
    for (size_t i = 0; i < sizeof src; i++) {
        uint32_t u = rnd(&r);
        src[i] = (uint8_t)(u % 5 == 0 ? 0 : u % 7 == 0 ? 0x7F : u % 11 == 0 ? 0x80 : u >> 8);
    }
    for (size_t i = 0; i < N; i++)
        want[i] = fb((uint32_t)src[2 * i] << 16 | (uint32_t)src[2 * i + 1] << 24);
    for (int v = SIM_PE_SCALAR; v < SIM_PE_NVARIANTS; v++) {
        if (!sim_pe_mac_have((sim_pe_variant_t)v))
            continue;
        for (size_t n = 0; n < 70; n = n < 40 ? n + 1 : n + 7)
            for (size_t off = 0; off < 3; off++) {
                size_t len = n == 63 ? N - off : n;
                sim_pe_fstats_t s1, s2, s3;
                sim_pe_stats_init(&s1);
                sim_pe_stats_init(&s2);
                sim_pe_stats_init(&s3);
                sim_pe_load_bf16_with(got, src + 2 * off, len, &s1, (sim_pe_variant_t)v);
                assert_memory_equal(got, want + off, len * 4);
                sim_pe_stats_f32_with(&s2, want + off, len, SIM_PE_PORTABLE);
                assert_memory_equal(&s1, &s2, sizeof s1);
                sim_pe_stats_f32_with(&s3, (const float *)(const void *)(src + 4 * off), len / 2,
                                      (sim_pe_variant_t)v);
                sim_pe_stats_init(&s2);
                memcpy(got, src + 4 * off, len / 2 * 4);
                sim_pe_stats_f32_with(&s2, got, len / 2, SIM_PE_PORTABLE);
                assert_memory_equal(&s3, &s2, sizeof s3);
            }
    }
    sim_pe_fstats_t s1, s2;
    sim_pe_stats_init(&s1);
    sim_pe_load_f32(got, src, N, &s1);
    assert_memory_equal(got, src, sizeof got);
    stats_of(&s2, got, N);
    assert_memory_equal(&s1, &s2, sizeof s1);
    /* the scan's meaning, on hand-picked values */
    float h[4] = { 0.0f, fb(0x00000100), 3.0f, -0.0f };
    stats_of(&s1, h, 4);
    assert_int_equal(s1.emin, 1);
    assert_int_equal(s1.emax, 128);
    assert_int_equal(s1.or_mant, 0x400100);
    stats_of(&s1, h, 1);
    assert_int_equal(s1.emin, 255);
    assert_int_equal(s1.emax, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bf16_fused),
        cmocka_unit_test(test_lowp_small),
        cmocka_unit_test(test_fp32_unfused),
        cmocka_unit_test(test_fused_detectable),
        cmocka_unit_test(test_exact_proof),
        cmocka_unit_test(test_loads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
