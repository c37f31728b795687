/* vmath_int.h - pieces shared by the vectorised math kernels (vmath.c,
 * vmath_fn.c): bit casts, the exp kernel split into 2^k and expm1(r), and
 * the fp32-boundary guard.  Everything is static inline so the AVX2 and
 * AVX-512 loops (function target attributes) inline it. */
#ifndef TPB_SIM_VMATH_INT_H
#define TPB_SIM_VMATH_INT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define VM_X86 1
#else
#define VM_X86 0
#endif

enum { VM_BLOCK = 256 };

/* the kernels must inline into the target-attributed loops (an out-of-line
 * baseline copy would run without AVX and call libm's fma) */
#if defined(__GNUC__) || defined(__clang__)
#define VM_INLINE static inline __attribute__((always_inline))
#else
#define VM_INLINE static inline
#endif

static inline uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static inline double dfrom(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* exp(x) = s + s * p with s = 2^k, k = nearest integer to x / ln 2,
 * p = expm1(r), r = x - k ln 2 (|r| <= 0.35; ln2_hi has 32 significant
 * bits, so k * ln2_hi is exact), expm1(r) by its Taylor polynomial of
 * degree 13 (truncation < 2^-57), by Horner's rule with fused
 * multiply-adds: fma() is exactly rounded everywhere, so every variant
 * computes the same doubles (one instruction with the AVX2/AVX-512 target
 * attributes; the baseline loop calls libm's, and only the tests use it).
 * For |x| <= 700. */
VM_INLINE void vexp_split(double x, double *s, double *p)
{
    const double inv_ln2 = 1.4426950408889634074, shift = 6755399441055744.0; /* 1.5 * 2^52 */
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    double kd = x * inv_ln2 + shift;
    uint64_t ki = dbits(kd);
    kd -= shift;
    double r = (x - kd * ln2_hi) - kd * ln2_lo;
    double q = 1.0 / 6227020800.0;
    q = fma(q, r, 1.0 / 479001600.0);
    q = fma(q, r, 1.0 / 39916800.0);
    q = fma(q, r, 1.0 / 3628800.0);
    q = fma(q, r, 1.0 / 362880.0);
    q = fma(q, r, 1.0 / 40320.0);
    q = fma(q, r, 1.0 / 5040.0);
    q = fma(q, r, 1.0 / 720.0);
    q = fma(q, r, 1.0 / 120.0);
    q = fma(q, r, 1.0 / 24.0);
    q = fma(q, r, 1.0 / 6.0);
    q = fma(q, r, 0.5);
    *p = fma(q * r, r, r);  /* r + r^2/2 + ... */
    /* the low bits of ki are k (two's complement); 2^k by exponent add */
    *s = dfrom((ki << 52) + dbits(1.0));
}

VM_INLINE double vexp_core(double x)
{
    double s, p;
    vexp_split(x, &s, &p);
    return s + s * p;
}

/* 1 when yd's rounding to fp32 may differ from that of a double within
 * guard ulps of it, or when it is not a normal fp32 value below 2^127
 * (zero, subnormal, huge, inf, NaN): a fp32 rounding boundary (the
 * midpoint of the 29 bits fp32 drops) lies within the guard.  in_range
 * is the function's own input check (0 or 1). */
VM_INLINE int vm_unsure(int in_range, double yd, int64_t guard)
{
    uint64_t b = dbits(yd);
    uint64_t e = (b >> 52) & 0x7FF;
    int64_t d = (int64_t)(b & 0x1FFFFFFFu) - 0x10000000;
    return (in_range & (e - 897 < 253) & ((uint64_t)(d + guard) > (uint64_t)(2 * guard))) ^ 1;
}

#endif
