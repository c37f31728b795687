/* numeric_fallback.c - weak stand-ins for the common/numeric.h conversions
 * the DMA engine needs (num_load_f32, num_store_f32, num_load_i64), so the
 * simulator core links and its casts work before common/numeric.c (owned
 * by the sim-ops helper) lands.  The definitions are weak: once the real
 * ones are linked they take precedence.  Same rules as numeric.h: RNE,
 * bf16/fp16/e5m2 overflow to inf, e4m3fn overflows to NaN, float -> int
 * rounds to nearest even and saturates, NaN -> 0.  Delete this file when
 * common/numeric.c is on main. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "isa.h"
#include "numeric.h"

/* Round a finite float to a minifloat with `mb` mantissa bits, exponent
 * bias `bias` and max normal exponent; returns the rounded value as float. */
static float round_mini(float f, int mb, int emin, float maxv, int sat_nan)
{
    if (isnan(f) || f == 0.0f)
        return f;
    float a = fabsf(f);
    int e;
    frexpf(a, &e);           /* a = m * 2^e, m in [0.5,1) */
    int ex = e - 1;          /* a = 1.x * 2^ex */
    if (ex < emin)
        ex = emin;           /* subnormal spacing */
    float q = ldexpf(1.0f, ex - mb);
    float r = nearbyintf(a / q) * q; /* default rounding mode: nearest even */
    if (r > maxv)
        r = sat_nan ? NAN : INFINITY;
    return f < 0 ? -r : r;
}

__attribute__((weak)) float num_load_f32(const void *p, unsigned dt)
{
    uint32_t u = 0;
    switch (dt) {
    case ISA_DT_FP32: { float f; memcpy(&f, p, 4); return f; }
    case ISA_DT_BF16: { uint16_t h; memcpy(&h, p, 2); u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
    case ISA_DT_FP16: {
        uint16_t h; memcpy(&h, p, 2);
        int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
        float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);
        return s ? -v : v;
    }
    case ISA_DT_FP8E4M3: {
        uint8_t b = *(const uint8_t *)p;
        int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
        float v = (e == 15 && m == 7) ? NAN : e == 0 ? ldexpf((float)m, -9) : ldexpf((float)(m | 8), e - 10);
        return s ? -v : v;
    }
    case ISA_DT_FP8E5M2: {
        uint8_t b = *(const uint8_t *)p;
        int s = b >> 7, e = (b >> 2) & 31, m = b & 3;
        float v = e == 0 ? ldexpf((float)m, -16) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 4), e - 17);
        return s ? -v : v;
    }
    default:
        return (float)num_load_i64(p, dt);
    }
}

__attribute__((weak)) int64_t num_load_i64(const void *p, unsigned dt)
{
    switch (dt) {
    case ISA_DT_INT8: return *(const int8_t *)p;
    case ISA_DT_UINT8: return *(const uint8_t *)p;
    case ISA_DT_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case ISA_DT_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case ISA_DT_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case ISA_DT_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case ISA_DT_FP32: case ISA_DT_BF16: case ISA_DT_FP16: case ISA_DT_FP8E4M3: case ISA_DT_FP8E5M2: {
        uint32_t u = 0;
        memcpy(&u, p, isa_dtype_size(dt));
        return u;
    }
    default: return 0;
    }
}

static int64_t to_int(float v, int64_t lo, int64_t hi)
{
    if (isnan(v))
        return 0;
    double r = nearbyint((double)v);
    if (r < (double)lo)
        return lo;
    if (r > (double)hi)
        return hi;
    return (int64_t)r;
}

static uint32_t mini_bits(float f, int eb, int mb, int bias, int nan_code_all)
{
    uint32_t sign = signbit(f) ? 1u : 0u;
    if (isnan(f))
        return nan_code_all ? ((1u << (eb + mb)) - 1) | sign << (eb + mb)
                            : (((1u << eb) - 1) << mb | 1u << (mb - 1)) | sign << (eb + mb);
    float a = fabsf(f);
    if (isinf(a))
        return ((1u << eb) - 1) << mb | sign << (eb + mb);
    if (a == 0.0f)
        return sign << (eb + mb);
    int e;
    frexpf(a, &e);
    int ex = e - 1;
    if (ex < 1 - bias) /* subnormal */
        return (uint32_t)ldexpf(a, bias - 1 + mb) | sign << (eb + mb);
    uint32_t m = (uint32_t)ldexpf(a, mb - ex) - (1u << mb);
    uint32_t ebits = (uint32_t)(ex + bias);
    if (m == (1u << mb)) { m = 0; ebits++; }
    return (ebits << mb | m) | sign << (eb + mb);
}

__attribute__((weak)) void num_store_f32(void *p, unsigned dt, float v)
{
    switch (dt) {
    case ISA_DT_FP32: memcpy(p, &v, 4); return;
    case ISA_DT_BF16: {
        uint32_t u; memcpy(&u, &v, 4);
        uint16_t h = isnan(v) ? (uint16_t)((u >> 16) | 0x40) : (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
        memcpy(p, &h, 2);
        return;
    }
    case ISA_DT_FP16: {
        float r = round_mini(v, 10, -14, 65504.0f, 0);
        uint16_t h = (uint16_t)mini_bits(r, 5, 10, 15, 0);
        memcpy(p, &h, 2);
        return;
    }
    case ISA_DT_FP8E4M3: {
        float r = round_mini(v, 3, -6, 448.0f, 1);
        *(uint8_t *)p = (uint8_t)mini_bits(r, 4, 3, 7, 1);
        return;
    }
    case ISA_DT_FP8E5M2: {
        float r = round_mini(v, 2, -14, 57344.0f, 0);
        *(uint8_t *)p = (uint8_t)mini_bits(r, 5, 2, 15, 0);
        return;
    }
    case ISA_DT_INT8: { int8_t x = (int8_t)to_int(v, INT8_MIN, INT8_MAX); memcpy(p, &x, 1); return; }
    case ISA_DT_UINT8: { uint8_t x = (uint8_t)to_int(v, 0, UINT8_MAX); memcpy(p, &x, 1); return; }
    case ISA_DT_INT16: { int16_t x = (int16_t)to_int(v, INT16_MIN, INT16_MAX); memcpy(p, &x, 2); return; }
    case ISA_DT_UINT16: { uint16_t x = (uint16_t)to_int(v, 0, UINT16_MAX); memcpy(p, &x, 2); return; }
    case ISA_DT_INT32: { int32_t x = (int32_t)to_int(v, INT32_MIN, INT32_MAX); memcpy(p, &x, 4); return; }
    case ISA_DT_UINT32: { uint32_t x = (uint32_t)to_int(v, 0, UINT32_MAX); memcpy(p, &x, 4); return; }
    default: return;
    }
}
