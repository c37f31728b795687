/* numeric.c - dtype conversions (see numeric.h and docs/semantics.md).
 *
 * All narrowing float conversions go through one routine parameterised by
 * the target format (exponent bits, mantissa bits, overflow rule), so bf16,
 * fp16, fp8e4m3fn, fp8e4m3 (IEEE style) and fp8e5m2 share exactly the same rounding code. */
#include "numeric.h"

#include <math.h>
#include <string.h>

#include "isa.h"

typedef struct {
    int ebits, mbits;       /* exponent / mantissa field widths */
    int emax;               /* largest unbiased exponent of a finite value */
    uint32_t max_mant;      /* largest mantissa field at emax (finite) */
    int inf;                /* 1: overflow -> inf; 0: overflow -> NaN ("fn") */
    uint32_t nan;           /* canonical quiet NaN pattern, sign clear */
} minifloat_t;

static const minifloat_t FMT_BF16 = { 8, 7, 127, 0x7F, 1, 0x7FC0 };
static const minifloat_t FMT_F16 = { 5, 10, 15, 0x3FF, 1, 0x7E00 };
static const minifloat_t FMT_E5M2 = { 5, 2, 15, 0x3, 1, 0x7E };
static const minifloat_t FMT_E4M3FN = { 4, 3, 8, 0x6, 0, 0x7F };
/* NKI's legacy float8_e4m3: exponent 1111 is inf (mantissa 0) / NaN, max 240 */
static const minifloat_t FMT_E4M3IEEE = { 4, 3, 7, 0x7, 1, 0x7C };

/* fp32 -> minifloat by integer arithmetic: the significand (with its
 * implicit bit) is shifted right to the target's quantum for the value's
 * binade (fixed below the target's smallest normal exponent) and rounded to
 * nearest, ties to even, on the dropped bits.  fp32 subnormals are far
 * below half the smallest subnormal of every target: they round to zero. */
static uint32_t f32_to_minifloat(float f, const minifloat_t *m)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    uint32_t sign = (bits >> 31) << (m->ebits + m->mbits);
    uint32_t ef = bits >> 23 & 0xFFu, frac = bits & 0x7FFFFFu;
    if (ef == 0xFF && frac)
        return sign | m->nan;
    uint32_t inf_or_nan = m->inf ? (((1u << m->ebits) - 1) << m->mbits) : m->nan;
    if (ef == 0xFF)
        return sign | inf_or_nan;
    if (ef == 0)
        return sign; /* zero, or an fp32 subnormal: rounds to zero */
    int bias = (1 << (m->ebits - 1)) - 1;
    int emin = 1 - bias;
    int e = (int)ef - 127; /* |f| = sig * 2^(e - 23), sig = 1.frac in 24 bits */
    uint32_t sig = frac | 0x800000u;
    int te = e < emin ? emin : e; /* the quantum is 2^(te - mbits) */
    int shift = 23 - m->mbits + (te - e);
    uint32_t mi;
    if (shift > 24) {
        mi = 0; /* below half the quantum */
    } else {
        uint32_t rem = sig & ((1u << shift) - 1u), half = 1u << (shift - 1);
        mi = sig >> shift;
        if (rem > half || (rem == half && (mi & 1u)))
            mi++;
    }
    if (mi >= 1u << (m->mbits + 1)) { /* rounded up into the next binade */
        mi >>= 1;
        te += 1;
    }
    uint32_t one = 1u << m->mbits;
    if (te > m->emax || (te == m->emax && mi - one > m->max_mant && mi >= one))
        return sign | inf_or_nan;
    if (mi < one) /* subnormal (exponent field 0) */
        return sign | mi;
    return sign | ((uint32_t)(te + bias) << m->mbits) | (mi - one);
}

/* Exact widening by integer arithmetic (every fp16/fp8 value is an fp32
 * normal number): rebias the exponent, move the mantissa to the top of
 * fp32's; a subnormal is normalised first.  NaN becomes fp32's canonical
 * quiet NaN with the sign, as the (float)NAN of the double formula did. */
static float minifloat_to_f32(uint32_t v, const minifloat_t *m)
{
    uint32_t mmask = (1u << m->mbits) - 1;
    uint32_t emask = (1u << m->ebits) - 1;
    uint32_t sign = (v >> (m->ebits + m->mbits) & 1u) << 31;
    uint32_t ef = (v >> m->mbits) & emask;
    uint32_t mf = v & mmask;
    int bias = (int)(emask >> 1);
    uint32_t bits;
    if ((m->inf && ef == emask && mf) || (!m->inf && ef == emask && mf == mmask))
        bits = sign | 0x7FC00000u;
    else if (m->inf && ef == emask)
        bits = sign | 0x7F800000u;
    else if (ef == 0 && mf == 0)
        bits = sign;
    else {
        int e = ef ? (int)ef - bias : 1 - bias; /* value = 1.f * 2^e, or 0.f * 2^e (subnormal) */
        if (!ef)
            while (!(mf & (mmask + 1))) { /* normalise: the leading 1 to the implicit bit */
                mf <<= 1;
                e--;
            }
        bits = sign | (uint32_t)(e + 127) << 23 | (mf & mmask) << (23 - m->mbits);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* bf16 has fp32's exponent range, so rounding the low 16 bits to nearest
 * even is the whole conversion (subnormals included; a carry out of the
 * largest finite values gives inf, as f32_to_minifloat with FMT_BF16 does):
 * integer arithmetic only. */
uint16_t num_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) /* NaN: sign + the canonical quiet NaN */
        return (uint16_t)((u >> 16 & 0x8000u) | FMT_BF16.nan);
    u += 0x7FFFu + (u >> 16 & 1u);
    return (uint16_t)(u >> 16);
}
float num_bf16_to_f32(uint16_t h)
{
    uint32_t b = (uint32_t)h << 16;
    float f;
    memcpy(&f, &b, 4);
    return f;
}
uint16_t num_f32_to_f16(float f) { return (uint16_t)f32_to_minifloat(f, &FMT_F16); }
float num_f16_to_f32(uint16_t h) { return minifloat_to_f32(h, &FMT_F16); }
uint8_t num_f32_to_fp8e4m3(float f) { return (uint8_t)f32_to_minifloat(f, &FMT_E4M3FN); }
float num_fp8e4m3_to_f32(uint8_t v) { return minifloat_to_f32(v, &FMT_E4M3FN); }
uint8_t num_f32_to_fp8e4m3ieee(float f) { return (uint8_t)f32_to_minifloat(f, &FMT_E4M3IEEE); }
float num_fp8e4m3ieee_to_f32(uint8_t v) { return minifloat_to_f32(v, &FMT_E4M3IEEE); }
uint8_t num_f32_to_fp8e5m2(float f) { return (uint8_t)f32_to_minifloat(f, &FMT_E5M2); }
float num_fp8e5m2_to_f32(uint8_t v) { return minifloat_to_f32(v, &FMT_E5M2); }

/* float -> integer: RNE, saturate to [lo, hi], NaN -> 0. */
static int64_t f32_to_int_sat(float f, int64_t lo, int64_t hi)
{
    if (isnan(f))
        return 0;
    double r = rint((double)f); /* default rounding mode: nearest-even */
    if (r <= (double)lo)
        return lo;
    if (r >= (double)hi)
        return hi;
    return (int64_t)r;
}

uint8_t num_f32_to_fp8e8m0(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if (u >> 31)   /* negative (-0 included: no sign to keep it) */
        return (u & 0x7FFFFFFFu) ? 0xFF : 0x00;
    uint32_t e = u >> 23, m = u & 0x7FFFFFu;
    if (e == 0xFF)
        return 0xFF;
    if (e == 0)   /* 0 and fp32 subnormals: 2^-127, or 2^-126 past their midpoint
                     1.5 * 2^-127 (m 0x600000; the tie to the even field 0) */
        return m > 0x600000u ? 1 : 0;
    /* the power of two nearest 1.m * 2^(e-127): up past the midpoint 1.5,
     * at it to the even field */
    if (m > 0x400000u || (m == 0x400000u && (e & 1u)))
        e++;
    return e >= 0xFF ? 0xFF : (uint8_t)e;
}

float num_fp8e8m0_to_f32(uint8_t v)
{
    if (v == 0xFF)
        return NAN;
    uint32_t u = v ? (uint32_t)v << 23 : 0x00400000u;   /* 2^-127: an fp32 subnormal */
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float num_load_f32(const void *p, unsigned dt)
{
    const uint8_t *b = p;
    switch (dt) {
    case ISA_DT_FP32: { float f; memcpy(&f, b, 4); return f; }
    case ISA_DT_BF16: { uint16_t h; memcpy(&h, b, 2); return num_bf16_to_f32(h); }
    case ISA_DT_FP16: { uint16_t h; memcpy(&h, b, 2); return num_f16_to_f32(h); }
    case ISA_DT_FP8E4M3: return num_fp8e4m3_to_f32(b[0]);
    case ISA_DT_FP8E4M3IEEE: return num_fp8e4m3ieee_to_f32(b[0]);
    case ISA_DT_FP8E5M2: return num_fp8e5m2_to_f32(b[0]);
    case ISA_DT_FP8E5M2X4: case ISA_DT_FP8E4M3X4: case ISA_DT_FP4E2M1X4:
        return NAN;   /* a packed quad is no single number (num_load_x4 reads a lane) */
    case ISA_DT_FP8E8M0: return num_fp8e8m0_to_f32(b[0]);
    default: return (float)num_load_i64(p, dt);
    }
}

/* fp4 e2m1fn (OCP MX): 1 sign, 2 exponent (bias 1), 1 mantissa bit; no
 * inf or NaN, largest 6. */
static float fp4e2m1_to_f32(unsigned nib)
{
    static const float mag[8] = { 0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f };
    return nib & 8u ? -mag[nib & 7u] : mag[nib & 7u];
}

float num_load_x4(const void *p, unsigned dt, unsigned lane)
{
    const uint8_t *b = p;
    lane &= 3u;
    switch (dt) {
    case ISA_DT_FP8E5M2X4: return num_fp8e5m2_to_f32(b[lane]);
    case ISA_DT_FP8E4M3X4: return num_fp8e4m3_to_f32(b[lane]);
    case ISA_DT_FP4E2M1X4: return fp4e2m1_to_f32((unsigned)(b[lane >> 1] >> (4 * (lane & 1u))) & 15u);
    default: return NAN;
    }
}

void num_store_x4(void *p, unsigned dt, unsigned lane, float v)
{
    uint8_t *b = p;
    lane &= 3u;
    if (dt == ISA_DT_FP8E5M2X4)
        b[lane] = num_f32_to_fp8e5m2(v);
    else if (dt == ISA_DT_FP8E4M3X4)
        b[lane] = num_f32_to_fp8e4m3(v);
}

void num_store_f32(void *p, unsigned dt, float v)
{
    uint8_t *b = p;
    switch (dt) {
    case ISA_DT_FP32: memcpy(b, &v, 4); return;
    case ISA_DT_BF16: { uint16_t h = num_f32_to_bf16(v); memcpy(b, &h, 2); return; }
    case ISA_DT_FP16: { uint16_t h = num_f32_to_f16(v); memcpy(b, &h, 2); return; }
    case ISA_DT_FP8E4M3: b[0] = num_f32_to_fp8e4m3(v); return;
    case ISA_DT_FP8E4M3IEEE: b[0] = num_f32_to_fp8e4m3ieee(v); return;
    case ISA_DT_FP8E5M2: b[0] = num_f32_to_fp8e5m2(v); return;
    case ISA_DT_FP8E8M0: b[0] = num_f32_to_fp8e8m0(v); return;
    case ISA_DT_INT8: { int8_t x = (int8_t)f32_to_int_sat(v, INT8_MIN, INT8_MAX); memcpy(b, &x, 1); return; }
    case ISA_DT_INT16: { int16_t x = (int16_t)f32_to_int_sat(v, INT16_MIN, INT16_MAX); memcpy(b, &x, 2); return; }
    case ISA_DT_INT32: { int32_t x = (int32_t)f32_to_int_sat(v, INT32_MIN, INT32_MAX); memcpy(b, &x, 4); return; }
    case ISA_DT_UINT8: b[0] = (uint8_t)f32_to_int_sat(v, 0, UINT8_MAX); return;
    case ISA_DT_UINT16: { uint16_t x = (uint16_t)f32_to_int_sat(v, 0, UINT16_MAX); memcpy(b, &x, 2); return; }
    case ISA_DT_UINT32: { uint32_t x = (uint32_t)f32_to_int_sat(v, 0, UINT32_MAX); memcpy(b, &x, 4); return; }
    default: return;   /* packed quads: num_store_x4 */
    }
}

void num_load_f32_array(float *dst, const void *src, unsigned dt, size_t n)
{
    const uint8_t *b = src;
    switch (dt) {
    case ISA_DT_FP32:
        memcpy(dst, b, n * 4);
        return;
    case ISA_DT_BF16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, b + 2 * i, 2);
            dst[i] = num_bf16_to_f32(h);
        }
        return;
    case ISA_DT_FP16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, b + 2 * i, 2);
            dst[i] = num_f16_to_f32(h);
        }
        return;
    case ISA_DT_FP8E4M3:
        for (size_t i = 0; i < n; i++)
            dst[i] = num_fp8e4m3_to_f32(b[i]);
        return;
    case ISA_DT_FP8E4M3IEEE:
        for (size_t i = 0; i < n; i++)
            dst[i] = num_fp8e4m3ieee_to_f32(b[i]);
        return;
    case ISA_DT_FP8E5M2:
        for (size_t i = 0; i < n; i++)
            dst[i] = num_fp8e5m2_to_f32(b[i]);
        return;
    default: {
        size_t sz = isa_dtype_size(dt);
        for (size_t i = 0; i < n; i++)
            dst[i] = num_load_f32(b + i * sz, dt);
        return;
    }
    }
}

void num_store_f32_array(void *dst, unsigned dt, const float *src, size_t n)
{
    uint8_t *b = dst;
    switch (dt) {
    case ISA_DT_FP32:
        memcpy(b, src, n * 4);
        return;
    case ISA_DT_BF16: /* num_f32_to_bf16 without branches or calls (vectorises) */
        for (size_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, &src[i], 4);
            uint32_t r = (u + 0x7FFFu + (u >> 16 & 1u)) >> 16;
            uint32_t q = (u >> 16 & 0x8000u) | FMT_BF16.nan;
            uint16_t h = (uint16_t)((u & 0x7FFFFFFFu) > 0x7F800000u ? q : r);
            memcpy(b + 2 * i, &h, 2);
        }
        return;
    case ISA_DT_FP16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h = num_f32_to_f16(src[i]);
            memcpy(b + 2 * i, &h, 2);
        }
        return;
    case ISA_DT_FP8E4M3:
        for (size_t i = 0; i < n; i++)
            b[i] = num_f32_to_fp8e4m3(src[i]);
        return;
    case ISA_DT_FP8E4M3IEEE:
        for (size_t i = 0; i < n; i++)
            b[i] = num_f32_to_fp8e4m3ieee(src[i]);
        return;
    case ISA_DT_FP8E5M2:
        for (size_t i = 0; i < n; i++)
            b[i] = num_f32_to_fp8e5m2(src[i]);
        return;
    default: {
        size_t sz = isa_dtype_size(dt);
        for (size_t i = 0; i < n; i++)
            num_store_f32(b + i * sz, dt, src[i]);
        return;
    }
    }
}

int64_t num_load_i64(const void *p, unsigned dt)
{
    const uint8_t *b = p;
    switch (dt) {
    case ISA_DT_INT8: { int8_t x; memcpy(&x, b, 1); return x; }
    case ISA_DT_INT16: { int16_t x; memcpy(&x, b, 2); return x; }
    case ISA_DT_INT32: { int32_t x; memcpy(&x, b, 4); return x; }
    case ISA_DT_UINT8: return b[0];
    case ISA_DT_UINT16: { uint16_t x; memcpy(&x, b, 2); return x; }
    case ISA_DT_UINT32: { uint32_t x; memcpy(&x, b, 4); return x; }
    case ISA_DT_FP8E5M2X4: case ISA_DT_FP8E4M3X4: case ISA_DT_FP4E2M1X4:
        return 0;   /* no single number */
    default: /* float dtypes: the int32 conversion (RNE, saturate, NaN -> 0) */
        return f32_to_int_sat(num_load_f32(p, dt), INT32_MIN, INT32_MAX);
    }
}

void num_store_i64_wrap(void *p, unsigned dt, int64_t v)
{
    uint8_t *b = p;
    uint64_t u = (uint64_t)v;
    switch (dt) {
    case ISA_DT_INT8: case ISA_DT_UINT8: b[0] = (uint8_t)u; return;
    case ISA_DT_INT16: case ISA_DT_UINT16: { uint16_t x = (uint16_t)u; memcpy(b, &x, 2); return; }
    case ISA_DT_INT32: case ISA_DT_UINT32: { uint32_t x = (uint32_t)u; memcpy(b, &x, 4); return; }
    case ISA_DT_FP8E5M2X4: case ISA_DT_FP8E4M3X4: case ISA_DT_FP4E2M1X4:
        return;
    default: /* float dtypes: the value, rounded (int64 -> float is RNE) */
        num_store_f32(p, dt, (float)v);
        return;
    }
}

float num_round_to(float v, unsigned dt)
{
    uint8_t buf[4] = { 0 };
    num_store_f32(buf, dt, v);
    return num_load_f32(buf, dt);
}
