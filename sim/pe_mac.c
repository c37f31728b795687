/* pe_mac.c - the PE's multiply-accumulate kernel (see pe_mac.h).
 *
 * Every variant computes each output element as one fp32 sum over the
 * contraction rows in order, starting from +0, then adds the old PSUM value
 * when accumulating (old + sum).  Vector lanes only hold different output
 * elements, never partial sums of one element, so nothing is reassociated.
 * The multiply-add is a multiply rounded to fp32 followed by an add, or a
 * fused multiply-add when the caller proved every product exact: then
 * round(w*x + acc) with w*x exact equals round(round(w*x) + acc).
 *
 * The x86 variants are compiled with function target attributes (no
 * -march flag for the build), so one binary runs on any x86-64 and picks
 * the widest variant the CPU has at run time; other architectures build
 * the scalar and portable variants only. */
#include "pe_mac.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PE_MAC_X86 1
#include <immintrin.h>
#else
#define PE_MAC_X86 0
#endif

/* ---- value scans ---- */

void sim_pe_stats_init(sim_pe_fstats_t *st)
{
    st->or_mant = 0;
    st->emin = 255;
    st->emax = 0;
}

/* Fold bit patterns u[0..n) into st (plain loops the compiler vectorises). */
static void stats_bits(sim_pe_fstats_t *st, const uint32_t *u, size_t n)
{
    uint32_t om = st->or_mant, lo = st->emin, hi = st->emax;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = u[i], e = (v >> 23) & 0xFF;
        uint32_t key = (v & 0x7FFFFFFFu) == 0 ? 255u : e == 0 ? 1u : e;
        om |= v & 0x7FFFFFu;
        lo = key < lo ? key : lo;
        hi = e > hi ? e : hi;
    }
    st->or_mant = om;
    st->emin = lo;
    st->emax = hi;
}

#define SCAN_CHUNK 512u

void sim_pe_stats_f32(sim_pe_fstats_t *st, const float *x, size_t n)
{
    uint32_t u[SCAN_CHUNK];
    for (size_t i = 0; i < n; i += SCAN_CHUNK) {
        size_t c = n - i < SCAN_CHUNK ? n - i : SCAN_CHUNK;
        memcpy(u, x + i, c * 4);
        stats_bits(st, u, c);
    }
}

void sim_pe_load_f32(float *dst, const uint8_t *src, size_t n, sim_pe_fstats_t *st)
{
    memcpy(dst, src, n * 4);
    sim_pe_stats_f32(st, dst, n);
}

void sim_pe_load_bf16(float *dst, const uint8_t *src, size_t n, sim_pe_fstats_t *st)
{
    uint32_t u[SCAN_CHUNK];
    for (size_t i = 0; i < n; i += SCAN_CHUNK) {
        size_t c = n - i < SCAN_CHUNK ? n - i : SCAN_CHUNK;
        for (size_t k = 0; k < c; k++) /* bf16 = the top half of an fp32 */
            u[k] = (uint32_t)src[2 * (i + k)] << 16 | (uint32_t)src[2 * (i + k) + 1] << 24;
        stats_bits(st, u, c);
        memcpy(dst + i, u, c * 4);
    }
}

/* Trailing zero bits common to every significand (at most 23). */
static int common_tz(uint32_t or_mant)
{
    uint32_t v = or_mant | 0x800000u;
    int tz = 0;
    while (!(v & 1u)) {
        v >>= 1;
        tz++;
    }
    return tz;
}

bool sim_pe_stats_finite(const sim_pe_fstats_t *st)
{
    return st->emax < 255;
}

/* A non-zero value with exponent field E (E' = max(E, 1)) and significand
 * M < 2^24 is M * 2^(E' - 150); M's trailing zeros are at least tz, so it
 * has at most 24 - tz significant bits, its lowest set bit is at exponent
 * >= E' - 150 + tz and it is below 2^(E' - 126).  A product is exact in
 * fp32 (normal or subnormal) when it has at most 24 significant bits, its
 * lowest bit is at exponent >= -149 and it is below 2^128. */
bool sim_pe_mac_exact(const sim_pe_fstats_t *w, const sim_pe_fstats_t *x)
{
    if (!sim_pe_stats_finite(w) || !sim_pe_stats_finite(x))
        return false;
    if (w->emin == 255 || x->emin == 255)
        return true; /* one side all zeros: every product is +-0 */
    int tw = common_tz(w->or_mant), tx = common_tz(x->or_mant);
    int bits = (24 - tw) + (24 - tx);
    int low = ((int)w->emin - 150 + tw) + ((int)x->emin - 150 + tx);
    int high = (int)w->emax + (int)x->emax; /* product < 2^(high - 252) */
    return bits <= 24 && low >= -149 && high <= 380;
}

/* ---- scalar reference ---- */

#define SCALAR_CHUNK 256u

static void mac_scalar(const sim_pe_mac_t *a)
{
    float acc[SCALAR_CHUNK];
    for (unsigned c = 0; c < a->m; c++)
        for (uint32_t j0 = 0; j0 < a->n; j0 += SCALAR_CHUNK) {
            uint32_t jn = a->n - j0 < SCALAR_CHUNK ? a->n - j0 : SCALAR_CHUNK;
            for (uint32_t j = 0; j < jn; j++)
                acc[j] = 0.0f;
            for (unsigned s = 0; s < a->nseg; s++)
                for (unsigned r = 0; r < a->k; r++) {
                    float w = a->w[s][r * a->wstride + c];
                    const float *x = a->x[s] + r * a->xstride + j0;
                    for (uint32_t j = 0; j < jn; j++)
                        acc[j] += w * x[j];
                }
            float *o = a->out + c * a->ostride + j0;
            for (uint32_t j = 0; j < jn; j++)
                o[j] = a->accumulate ? o[j] + acc[j] : acc[j];
        }
}

/* ---- portable: blocks of PC columns x PJ elements in plain C ---- */

#define PC 4u
#define PJ 8u

static void blk_portable(const sim_pe_mac_t *a, unsigned c0, unsigned cn, uint32_t j0, uint32_t jn)
{
    float acc[PC][PJ] = { { 0.0f } };
    for (unsigned s = 0; s < a->nseg; s++) {
        const float *w = a->w[s] + c0, *x = a->x[s] + j0;
        for (unsigned r = 0; r < a->k; r++, w += a->wstride, x += a->xstride) {
            float xv[PJ] = { 0.0f };
            for (uint32_t j = 0; j < jn; j++)
                xv[j] = x[j];
            for (unsigned c = 0; c < PC; c++) {
                float wv = c < cn ? w[c] : 0.0f;
                for (uint32_t j = 0; j < PJ; j++)
                    acc[c][j] += wv * xv[j];
            }
        }
    }
    for (unsigned c = 0; c < cn; c++) {
        float *o = a->out + (c0 + c) * a->ostride + j0;
        for (uint32_t j = 0; j < jn; j++)
            o[j] = a->accumulate ? o[j] + acc[c][j] : acc[c][j];
    }
}

static void mac_portable(const sim_pe_mac_t *a)
{
    for (uint32_t j0 = 0; j0 < a->n; j0 += PJ)
        for (unsigned c0 = 0; c0 < a->m; c0 += PC)
            blk_portable(a, c0, a->m - c0 < PC ? a->m - c0 : PC, j0,
                         a->n - j0 < PJ ? a->n - j0 : PJ);
}

#if PE_MAC_X86

/* ---- AVX2 + FMA: 4 columns x 2 vectors of 8 ---- */

#define A2C 4u
#define A2J 16u
#define TGT_AVX2 __attribute__((target("avx2,fma")))

TGT_AVX2 static inline __m256i a2_mask(uint32_t left)
{
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(left > 8 ? 8 : left)), lane);
}

TGT_AVX2 static inline __attribute__((always_inline)) void
blk_avx2(const sim_pe_mac_t *a, unsigned c0, unsigned cn, uint32_t j0, uint32_t jn, bool fma)
{
    __m256 acc[A2C][2];
    __m256i k0 = a2_mask(jn), k1 = a2_mask(jn > 8 ? jn - 8 : 0);
    for (unsigned c = 0; c < A2C; c++)
        acc[c][0] = acc[c][1] = _mm256_setzero_ps();
    for (unsigned s = 0; s < a->nseg; s++) {
        const float *w = a->w[s] + c0, *x = a->x[s] + j0;
        for (unsigned r = 0; r < a->k; r++, w += a->wstride, x += a->xstride) {
            __m256 x0 = _mm256_maskload_ps(x, k0), x1 = _mm256_maskload_ps(x + 8, k1);
#pragma GCC unroll 4
            for (unsigned c = 0; c < A2C; c++) {
                if (c >= cn)
                    break;
                __m256 b = _mm256_broadcast_ss(w + c);
                if (fma) {
                    acc[c][0] = _mm256_fmadd_ps(b, x0, acc[c][0]);
                    acc[c][1] = _mm256_fmadd_ps(b, x1, acc[c][1]);
                } else {
                    acc[c][0] = _mm256_add_ps(acc[c][0], _mm256_mul_ps(b, x0));
                    acc[c][1] = _mm256_add_ps(acc[c][1], _mm256_mul_ps(b, x1));
                }
            }
        }
    }
    for (unsigned c = 0; c < cn; c++) {
        float *o = a->out + (c0 + c) * a->ostride + j0;
        __m256 v0 = acc[c][0], v1 = acc[c][1];
        if (a->accumulate) {
            v0 = _mm256_add_ps(_mm256_maskload_ps(o, k0), v0);
            v1 = _mm256_add_ps(_mm256_maskload_ps(o + 8, k1), v1);
        }
        _mm256_maskstore_ps(o, k0, v0);
        _mm256_maskstore_ps(o + 8, k1, v1);
    }
}

TGT_AVX2 static void mac_avx2_fma(const sim_pe_mac_t *a)
{
    for (uint32_t j0 = 0; j0 < a->n; j0 += A2J) {
        uint32_t jn = a->n - j0 < A2J ? a->n - j0 : A2J;
        unsigned c0 = 0;
        for (; c0 + A2C <= a->m; c0 += A2C)
            blk_avx2(a, c0, A2C, j0, jn, true);
        if (c0 < a->m)
            blk_avx2(a, c0, a->m - c0, j0, jn, true);
    }
}

TGT_AVX2 static void mac_avx2_mul(const sim_pe_mac_t *a)
{
    for (uint32_t j0 = 0; j0 < a->n; j0 += A2J) {
        uint32_t jn = a->n - j0 < A2J ? a->n - j0 : A2J;
        unsigned c0 = 0;
        for (; c0 + A2C <= a->m; c0 += A2C)
            blk_avx2(a, c0, A2C, j0, jn, false);
        if (c0 < a->m)
            blk_avx2(a, c0, a->m - c0, j0, jn, false);
    }
}

/* ---- AVX-512F: 8 columns x 2 vectors of 16 ---- */

#define A5C 8u
#define A5J 32u
#define TGT_AVX512 __attribute__((target("avx512f")))

TGT_AVX512 static inline __mmask16 a5_mask(uint32_t left)
{
    return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
}

TGT_AVX512 static inline __attribute__((always_inline)) void
blk_avx512(const sim_pe_mac_t *a, unsigned c0, unsigned cn, uint32_t j0, uint32_t jn, bool fma)
{
    __m512 acc[A5C][2];
    __mmask16 k0 = a5_mask(jn), k1 = a5_mask(jn > 16 ? jn - 16 : 0);
    for (unsigned c = 0; c < A5C; c++)
        acc[c][0] = acc[c][1] = _mm512_setzero_ps();
    for (unsigned s = 0; s < a->nseg; s++) {
        const float *w = a->w[s] + c0, *x = a->x[s] + j0;
        for (unsigned r = 0; r < a->k; r++, w += a->wstride, x += a->xstride) {
            __m512 x0 = _mm512_maskz_loadu_ps(k0, x), x1 = _mm512_maskz_loadu_ps(k1, x + 16);
#pragma GCC unroll 8
            for (unsigned c = 0; c < A5C; c++) {
                if (c >= cn)
                    break;
                __m512 b = _mm512_set1_ps(w[c]);
                if (fma) {
                    acc[c][0] = _mm512_fmadd_ps(b, x0, acc[c][0]);
                    acc[c][1] = _mm512_fmadd_ps(b, x1, acc[c][1]);
                } else {
                    acc[c][0] = _mm512_add_ps(acc[c][0], _mm512_mul_ps(b, x0));
                    acc[c][1] = _mm512_add_ps(acc[c][1], _mm512_mul_ps(b, x1));
                }
            }
        }
    }
    for (unsigned c = 0; c < cn; c++) {
        float *o = a->out + (c0 + c) * a->ostride + j0;
        __m512 v0 = acc[c][0], v1 = acc[c][1];
        if (a->accumulate) {
            v0 = _mm512_add_ps(_mm512_maskz_loadu_ps(k0, o), v0);
            v1 = _mm512_add_ps(_mm512_maskz_loadu_ps(k1, o + 16), v1);
        }
        _mm512_mask_storeu_ps(o, k0, v0);
        _mm512_mask_storeu_ps(o + 16, k1, v1);
    }
}

TGT_AVX512 static void mac_avx512_fma(const sim_pe_mac_t *a)
{
    for (uint32_t j0 = 0; j0 < a->n; j0 += A5J) {
        uint32_t jn = a->n - j0 < A5J ? a->n - j0 : A5J;
        unsigned c0 = 0;
        for (; c0 + A5C <= a->m; c0 += A5C)
            blk_avx512(a, c0, A5C, j0, jn, true);
        if (c0 < a->m)
            blk_avx512(a, c0, a->m - c0, j0, jn, true);
    }
}

TGT_AVX512 static void mac_avx512_mul(const sim_pe_mac_t *a)
{
    for (uint32_t j0 = 0; j0 < a->n; j0 += A5J) {
        uint32_t jn = a->n - j0 < A5J ? a->n - j0 : A5J;
        unsigned c0 = 0;
        for (; c0 + A5C <= a->m; c0 += A5C)
            blk_avx512(a, c0, A5C, j0, jn, false);
        if (c0 < a->m)
            blk_avx512(a, c0, a->m - c0, j0, jn, false);
    }
}

#endif /* PE_MAC_X86 */

/* ---- dispatch ---- */

bool sim_pe_mac_have(sim_pe_variant_t v)
{
    switch (v) {
    case SIM_PE_SCALAR:
    case SIM_PE_PORTABLE: return true;
#if PE_MAC_X86
    case SIM_PE_AVX2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case SIM_PE_AVX512: return __builtin_cpu_supports("avx512f");
#endif
    default: return false;
    }
}

sim_pe_variant_t sim_pe_mac_best(void)
{
    if (sim_pe_mac_have(SIM_PE_AVX512))
        return SIM_PE_AVX512;
    if (sim_pe_mac_have(SIM_PE_AVX2))
        return SIM_PE_AVX2;
    return SIM_PE_PORTABLE;
}

void sim_pe_mac_run(const sim_pe_mac_t *a, sim_pe_variant_t v)
{
    if (a->m == 0 || a->n == 0)
        return;
    switch (v) {
#if PE_MAC_X86
    case SIM_PE_AVX512: (a->fma ? mac_avx512_fma : mac_avx512_mul)(a); return;
    case SIM_PE_AVX2: (a->fma ? mac_avx2_fma : mac_avx2_mul)(a); return;
#endif
    case SIM_PE_PORTABLE: mac_portable(a); return;
    default: mac_scalar(a); return;
    }
}

void sim_pe_mac(const sim_pe_mac_t *a)
{
    sim_pe_mac_run(a, sim_pe_mac_best());
}
