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

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PE_MAC_X86 1
#include <immintrin.h>

#include "cpu_have.h"
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

static void stats_f32_portable(sim_pe_fstats_t *st, const float *x, size_t n)
{
    uint32_t u[SCAN_CHUNK];
    for (size_t i = 0; i < n; i += SCAN_CHUNK) {
        size_t c = n - i < SCAN_CHUNK ? n - i : SCAN_CHUNK;
        memcpy(u, x + i, c * 4);
        stats_bits(st, u, c);
    }
}

static void load_bf16_portable(float *dst, const uint8_t *src, size_t n, sim_pe_fstats_t *st)
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

/* The walk over output blocks of one vector variant: element blocks of BJ
 * outer, column blocks of BC inner (full blocks with blk_full, the column
 * tail one column at a time with blk_one), and its two entry points, fused
 * and unfused (fma is a constant inside each, so the inner loops have no
 * branch on it). */
#define MAC_ENTRIES(TGT, sfx, BC, BJ, blk_full, blk_one)                                       \
    TGT static inline __attribute__((always_inline)) void mac_walk_##sfx(const sim_pe_mac_t *a, \
                                                                        bool fma)              \
    {                                                                                           \
        for (uint32_t j0 = 0; j0 < a->n; j0 += BJ) {                                            \
            uint32_t jn = a->n - j0 < BJ ? a->n - j0 : BJ;                                      \
            unsigned c0 = 0;                                                                    \
            for (; c0 + BC <= a->m; c0 += BC)                                                   \
                blk_full(a, c0, j0, jn, fma);                                                   \
            for (; c0 < a->m; c0++)                                                             \
                blk_one(a, c0, j0, jn, fma);                                                    \
        }                                                                                       \
    }                                                                                           \
    TGT static void mac_##sfx##_fma(const sim_pe_mac_t *a) { mac_walk_##sfx(a, true); }        \
    TGT static void mac_##sfx##_mul(const sim_pe_mac_t *a) { mac_walk_##sfx(a, false); }

/* ---- AVX2 + FMA: 4 columns x 2 vectors of 8 ---- */

#define A2C 4u
#define A2J 16u
#define TGT_AVX2 __attribute__((target("avx2,fma")))

TGT_AVX2 static inline __m256i a2_mask(uint32_t left)
{
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(left > 8 ? 8 : left)), lane);
}

#define A2_MAC(acc, b, x)                                                                      \
    acc = fma ? _mm256_fmadd_ps(b, x, acc) : _mm256_add_ps(acc, _mm256_mul_ps(b, x))
#define A2_COL(c, a0, a1)                                                                      \
    do {                                                                                        \
        __m256 b_ = _mm256_broadcast_ss(w + (c));                                               \
        A2_MAC(a0, b_, x0);                                                                     \
        A2_MAC(a1, b_, x1);                                                                     \
    } while (0)
#define A2_OUT(c, a0, a1)                                                                      \
    do {                                                                                        \
        float *o_ = a->out + (c0 + (c)) * a->ostride + j0;                                      \
        __m256 v0_ = a0, v1_ = a1;                                                              \
        if (a->accumulate) {                                                                    \
            v0_ = _mm256_add_ps(_mm256_maskload_ps(o_, k0), v0_);                               \
            v1_ = _mm256_add_ps(_mm256_maskload_ps(o_ + 8, k1), v1_);                           \
        }                                                                                       \
        _mm256_maskstore_ps(o_, k0, v0_);                                                       \
        _mm256_maskstore_ps(o_ + 8, k1, v1_);                                                   \
    } while (0)

/* 4 columns from c0 x jn (<= 16) elements from j0, accumulators in
 * named registers. */
TGT_AVX2 static inline __attribute__((always_inline)) void
blk4_avx2_ld(const sim_pe_mac_t *a, unsigned c0, uint32_t j0, uint32_t jn, bool fma, bool full)
{
    __m256 z = _mm256_setzero_ps();
    __m256 p0 = z, q0 = z, p1 = z, q1 = z, p2 = z, q2 = z, p3 = z, q3 = z;
    __m256i k0 = a2_mask(jn), k1 = a2_mask(jn > 8 ? jn - 8 : 0);
    size_t ws = a->wstride, xs = a->xstride;
    unsigned k = a->k;
    for (unsigned s = 0; s < a->nseg; s++) {
        const float *w = a->w[s] + c0, *x = a->x[s] + j0;
        for (unsigned r = 0; r < k; r++, w += ws, x += xs) {
            __m256 x0 = full ? _mm256_loadu_ps(x) : _mm256_maskload_ps(x, k0);
            __m256 x1 = full ? _mm256_loadu_ps(x + 8) : _mm256_maskload_ps(x + 8, k1);
            A2_COL(0, p0, q0);
            A2_COL(1, p1, q1);
            A2_COL(2, p2, q2);
            A2_COL(3, p3, q3);
        }
    }
    A2_OUT(0, p0, q0);
    A2_OUT(1, p1, q1);
    A2_OUT(2, p2, q2);
    A2_OUT(3, p3, q3);
}

/* Full 16-element blocks load x without masks (a masked load is slower). */
TGT_AVX2 static inline __attribute__((always_inline)) void
blk4_avx2(const sim_pe_mac_t *a, unsigned c0, uint32_t j0, uint32_t jn, bool fma)
{
    if (jn == A2J)
        blk4_avx2_ld(a, c0, j0, jn, fma, true);
    else
        blk4_avx2_ld(a, c0, j0, jn, fma, false);
}

TGT_AVX2 static inline __attribute__((always_inline)) void
blk1_avx2(const sim_pe_mac_t *a, unsigned c0, uint32_t j0, uint32_t jn, bool fma)
{
    __m256 p0 = _mm256_setzero_ps(), q0 = _mm256_setzero_ps();
    __m256i k0 = a2_mask(jn), k1 = a2_mask(jn > 8 ? jn - 8 : 0);
    for (unsigned s = 0; s < a->nseg; s++) {
        const float *w = a->w[s] + c0, *x = a->x[s] + j0;
        for (unsigned r = 0; r < a->k; r++, w += a->wstride, x += a->xstride) {
            __m256 x0 = _mm256_maskload_ps(x, k0), x1 = _mm256_maskload_ps(x + 8, k1);
            A2_COL(0, p0, q0);
        }
    }
    A2_OUT(0, p0, q0);
}

MAC_ENTRIES(TGT_AVX2, avx2, A2C, A2J, blk4_avx2, blk1_avx2)

/* ---- AVX-512F: 8 columns x 2 vectors of 16 ---- */

#define A5C 8u
#define A5J 32u
#define TGT_AVX512 __attribute__((target("avx512f")))

TGT_AVX512 static inline __mmask16 a5_mask(uint32_t left)
{
    return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
}

/* One block: cn (<= 8) columns from c0, jn (<= 32) elements from j0.  The
 * 8-column form keeps its 16 accumulators in named registers (an array
 * indexed in a loop with an early exit was spilled every row). */
#define A5_MAC(acc, b, x)                                                                      \
    acc = fma ? _mm512_fmadd_ps(b, x, acc) : _mm512_add_ps(acc, _mm512_mul_ps(b, x))
#define A5_COL(c, a0, a1)                                                                      \
    do {                                                                                        \
        __m512 b_ = _mm512_set1_ps(w[c]);                                                       \
        A5_MAC(a0, b_, x0);                                                                     \
        A5_MAC(a1, b_, x1);                                                                     \
    } while (0)
#define A5_OUT(c, a0, a1)                                                                      \
    do {                                                                                        \
        float *o_ = a->out + (c0 + (c)) * a->ostride + j0;                                      \
        __m512 v0_ = a0, v1_ = a1;                                                              \
        if (a->accumulate) {                                                                    \
            v0_ = _mm512_add_ps(_mm512_maskz_loadu_ps(k0, o_), v0_);                            \
            v1_ = _mm512_add_ps(_mm512_maskz_loadu_ps(k1, o_ + 16), v1_);                       \
        }                                                                                       \
        _mm512_mask_storeu_ps(o_, k0, v0_);                                                     \
        _mm512_mask_storeu_ps(o_ + 16, k1, v1_);                                                \
    } while (0)

/* 8 columns from c0: their weights are packed, segment s at wp + s*k*8,
 * row r's 8 values contiguous at + r*8 (mac_walk_avx512). */
TGT_AVX512 static inline __attribute__((always_inline)) void
blk8_avx512_ld(const sim_pe_mac_t *a, const float *wp, unsigned c0, uint32_t j0, uint32_t jn,
               bool fma, bool full)
{
    __m512 z = _mm512_setzero_ps();
    __m512 p0 = z, q0 = z, p1 = z, q1 = z, p2 = z, q2 = z, p3 = z, q3 = z;
    __m512 p4 = z, q4 = z, p5 = z, q5 = z, p6 = z, q6 = z, p7 = z, q7 = z;
    __mmask16 k0 = a5_mask(jn), k1 = a5_mask(jn > 16 ? jn - 16 : 0);
    size_t ws = A5C, xs = a->xstride;
    unsigned k = a->k;
    for (unsigned s = 0; s < a->nseg; s++) {
        const float *w = wp + (size_t)s * k * A5C, *x = a->x[s] + j0;
        for (unsigned r = 0; r < k; r++, w += ws, x += xs) {
            __m512 x0 = full ? _mm512_loadu_ps(x) : _mm512_maskz_loadu_ps(k0, x);
            __m512 x1 = full ? _mm512_loadu_ps(x + 16) : _mm512_maskz_loadu_ps(k1, x + 16);
            A5_COL(0, p0, q0);
            A5_COL(1, p1, q1);
            A5_COL(2, p2, q2);
            A5_COL(3, p3, q3);
            A5_COL(4, p4, q4);
            A5_COL(5, p5, q5);
            A5_COL(6, p6, q6);
            A5_COL(7, p7, q7);
        }
    }
    A5_OUT(0, p0, q0);
    A5_OUT(1, p1, q1);
    A5_OUT(2, p2, q2);
    A5_OUT(3, p3, q3);
    A5_OUT(4, p4, q4);
    A5_OUT(5, p5, q5);
    A5_OUT(6, p6, q6);
    A5_OUT(7, p7, q7);
}

/* Full 32-element blocks load x without masks (mask registers are set up
 * on the FMA port), the tail block with them. */
TGT_AVX512 static inline __attribute__((always_inline)) void
blk8_avx512(const sim_pe_mac_t *a, const float *wp, unsigned c0, uint32_t j0, uint32_t jn,
            bool fma)
{
    if (jn == A5J)
        blk8_avx512_ld(a, wp, c0, j0, jn, fma, true);
    else
        blk8_avx512_ld(a, wp, c0, j0, jn, fma, false);
}

/* One column (the tail when m is not a multiple of 8). */
TGT_AVX512 static inline __attribute__((always_inline)) void
blk1_avx512(const sim_pe_mac_t *a, unsigned c0, uint32_t j0, uint32_t jn, bool fma)
{
    __m512 p0 = _mm512_setzero_ps(), q0 = _mm512_setzero_ps();
    __mmask16 k0 = a5_mask(jn), k1 = a5_mask(jn > 16 ? jn - 16 : 0);
    for (unsigned s = 0; s < a->nseg; s++) {
        const float *w = a->w[s] + c0, *x = a->x[s] + j0;
        for (unsigned r = 0; r < a->k; r++, w += a->wstride, x += a->xstride) {
            __m512 x0 = _mm512_maskz_loadu_ps(k0, x), x1 = _mm512_maskz_loadu_ps(k1, x + 16);
            A5_COL(0, p0, q0);
        }
    }
    A5_OUT(0, p0, q0);
}

/* The walk of MAC_ENTRIES with the weights of each 8-column block packed
 * first, row after row (32 contiguous bytes per row instead of 32 bytes
 * every 512): the blocks' weights then stream through L2 in order instead
 * of one partly used cache line per row.  Same values, same order per
 * output element, so the same bits.  Without memory for the copy, the
 * columns run one at a time (blk1, unpacked). */
TGT_AVX512 static inline __attribute__((always_inline)) void mac_walk_avx512(const sim_pe_mac_t *a,
                                                                            bool fma)
{
    unsigned nb = a->m / A5C;
    size_t per = (size_t)a->nseg * a->k * A5C;
    float *pk = nb && per ? malloc(nb * per * sizeof *pk) : NULL;
    if (!pk)
        nb = 0;
    for (unsigned b = 0; b < nb; b++)
        for (unsigned s = 0; s < a->nseg; s++)
            for (unsigned r = 0; r < a->k; r++)
                memcpy(pk + b * per + ((size_t)s * a->k + r) * A5C,
                       a->w[s] + r * a->wstride + b * A5C, A5C * sizeof *pk);
    for (uint32_t j0 = 0; j0 < a->n; j0 += A5J) {
        uint32_t jn = a->n - j0 < A5J ? a->n - j0 : A5J;
        for (unsigned b = 0; b < nb; b++)
            blk8_avx512(a, pk + b * per, b * A5C, j0, jn, fma);
        for (unsigned c0 = nb * A5C; c0 < a->m; c0++)
            blk1_avx512(a, c0, j0, jn, fma);
    }
    free(pk);
}
TGT_AVX512 static void mac_avx512_fma(const sim_pe_mac_t *a) { mac_walk_avx512(a, true); }
TGT_AVX512 static void mac_avx512_mul(const sim_pe_mac_t *a) { mac_walk_avx512(a, false); }

/* ---- vector scans: the portable scan's result, 16 / 8 lanes at a time ---- */

TGT_AVX512 static inline void scan16(__m512i v, __m512i *om, __m512i *lo, __m512i *hi)
{
    __m512i e = _mm512_and_si512(_mm512_srli_epi32(v, 23), _mm512_set1_epi32(0xFF));
    __mmask16 zero = _mm512_testn_epi32_mask(v, _mm512_set1_epi32(0x7FFFFFFF));
    __m512i key = _mm512_mask_mov_epi32(_mm512_max_epu32(e, _mm512_set1_epi32(1)), zero,
                                        _mm512_set1_epi32(255));
    *om = _mm512_or_si512(*om, _mm512_and_si512(v, _mm512_set1_epi32(0x7FFFFF)));
    *lo = _mm512_min_epu32(*lo, key);
    *hi = _mm512_max_epu32(*hi, e);
}

TGT_AVX512 static void scan_fold512(sim_pe_fstats_t *st, __m512i om, __m512i lo, __m512i hi)
{
    uint32_t a = (uint32_t)_mm512_reduce_or_epi32(om);
    uint32_t l = (uint32_t)_mm512_reduce_min_epu32(lo), h = (uint32_t)_mm512_reduce_max_epu32(hi);
    st->or_mant |= a;
    st->emin = l < st->emin ? l : st->emin;
    st->emax = h > st->emax ? h : st->emax;
}

TGT_AVX512 static void stats_f32_avx512(sim_pe_fstats_t *st, const float *x, size_t n)
{
    __m512i om = _mm512_setzero_si512(), lo = _mm512_set1_epi32(255), hi = om;
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        scan16(_mm512_loadu_si512((const void *)(x + i)), &om, &lo, &hi);
    if (i < n)
        scan16(_mm512_castps_si512(_mm512_maskz_loadu_ps((__mmask16)((1u << (n - i)) - 1u), x + i)),
               &om, &lo, &hi);
    scan_fold512(st, om, lo, hi);
}

TGT_AVX512 static void load_bf16_avx512(float *dst, const uint8_t *src, size_t n,
                                        sim_pe_fstats_t *st)
{
    __m512i om = _mm512_setzero_si512(), lo = _mm512_set1_epi32(255), hi = om;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i h = _mm256_loadu_si256((const void *)(src + 2 * i));
        __m512i v = _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16);
        _mm512_storeu_si512((void *)(dst + i), v);
        scan16(v, &om, &lo, &hi);
    }
    scan_fold512(st, om, lo, hi);
    if (i < n)
        load_bf16_portable(dst + i, src + 2 * i, n - i, st);
}

TGT_AVX2 static inline void scan8(__m256i v, __m256i *om, __m256i *lo, __m256i *hi)
{
    __m256i e = _mm256_and_si256(_mm256_srli_epi32(v, 23), _mm256_set1_epi32(0xFF));
    __m256i zero = _mm256_cmpeq_epi32(_mm256_and_si256(v, _mm256_set1_epi32(0x7FFFFFFF)),
                                      _mm256_setzero_si256());
    __m256i key = _mm256_blendv_epi8(_mm256_max_epu32(e, _mm256_set1_epi32(1)),
                                     _mm256_set1_epi32(255), zero);
    *om = _mm256_or_si256(*om, _mm256_and_si256(v, _mm256_set1_epi32(0x7FFFFF)));
    *lo = _mm256_min_epu32(*lo, key);
    *hi = _mm256_max_epu32(*hi, e);
}

TGT_AVX2 static void scan_fold256(sim_pe_fstats_t *st, __m256i om, __m256i lo, __m256i hi)
{
    uint32_t a[8], l[8], h[8];
    _mm256_storeu_si256((void *)a, om);
    _mm256_storeu_si256((void *)l, lo);
    _mm256_storeu_si256((void *)h, hi);
    for (int i = 0; i < 8; i++) {
        st->or_mant |= a[i];
        st->emin = l[i] < st->emin ? l[i] : st->emin;
        st->emax = h[i] > st->emax ? h[i] : st->emax;
    }
}

TGT_AVX2 static void stats_f32_avx2(sim_pe_fstats_t *st, const float *x, size_t n)
{
    __m256i om = _mm256_setzero_si256(), lo = _mm256_set1_epi32(255), hi = om;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        scan8(_mm256_loadu_si256((const void *)(x + i)), &om, &lo, &hi);
    scan_fold256(st, om, lo, hi);
    if (i < n)
        stats_f32_portable(st, x + i, n - i);
}

TGT_AVX2 static void load_bf16_avx2(float *dst, const uint8_t *src, size_t n, sim_pe_fstats_t *st)
{
    __m256i om = _mm256_setzero_si256(), lo = _mm256_set1_epi32(255), hi = om;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const void *)(src + 2 * i));
        __m256i v = _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
        _mm256_storeu_si256((void *)(dst + i), v);
        scan8(v, &om, &lo, &hi);
    }
    scan_fold256(st, om, lo, hi);
    if (i < n)
        load_bf16_portable(dst + i, src + 2 * i, n - i, st);
}

#endif /* PE_MAC_X86 */

/* ---- dispatch ---- */

bool sim_pe_mac_have(sim_pe_variant_t v)
{
    switch (v) {
    case SIM_PE_SCALAR:
    case SIM_PE_PORTABLE: return true;
#if PE_MAC_X86
    case SIM_PE_AVX2: return tpb_cpu_have_avx2_fma();
    case SIM_PE_AVX512: return tpb_cpu_have_avx512f();
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

void sim_pe_stats_f32_with(sim_pe_fstats_t *st, const float *x, size_t n, sim_pe_variant_t v)
{
    switch (v) {
#if PE_MAC_X86
    case SIM_PE_AVX512: stats_f32_avx512(st, x, n); return;
    case SIM_PE_AVX2: stats_f32_avx2(st, x, n); return;
#endif
    default: stats_f32_portable(st, x, n); return;
    }
}

void sim_pe_load_bf16_with(float *dst, const uint8_t *src, size_t n, sim_pe_fstats_t *st,
                           sim_pe_variant_t v)
{
    switch (v) {
#if PE_MAC_X86
    case SIM_PE_AVX512: load_bf16_avx512(dst, src, n, st); return;
    case SIM_PE_AVX2: load_bf16_avx2(dst, src, n, st); return;
#endif
    default: load_bf16_portable(dst, src, n, st); return;
    }
}

void sim_pe_stats_f32(sim_pe_fstats_t *st, const float *x, size_t n)
{
    sim_pe_stats_f32_with(st, x, n, sim_pe_mac_best());
}

void sim_pe_load_bf16(float *dst, const uint8_t *src, size_t n, sim_pe_fstats_t *st)
{
    sim_pe_load_bf16_with(dst, src, n, st, sim_pe_mac_best());
}

void sim_pe_load_f32(float *dst, const uint8_t *src, size_t n, sim_pe_fstats_t *st)
{
    memcpy(dst, src, n * 4);
    sim_pe_stats_f32(st, dst, n);
}
