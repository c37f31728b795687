/* vmath_fn.c - vectorised log, tanh, sigmoid, silu, gelu and the two
 * approximate gelus (vmath.h "sim_vfn").  Each function has a double
 * kernel composed exactly as its libm expression (sim_vfn_ref, the one
 * definition act.c evaluates too), a documented error bound against that
 * expression, and the guard of vmath_int.h: elements whose double result
 * is within the function's guard of a fp32 rounding boundary, or whose
 * input is outside the kernel's range, are recomputed with sim_vfn_ref,
 * so the fp32 results are those of the libm path bit for bit. */
#include "vmath.h"

#include <math.h>
#include <string.h>

#include "vmath_int.h"

#define VM_PI 3.14159265358979323846

static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

double sim_vfn_ref(sim_vfn_t f, double x)
{
    switch (f) {
    case SIM_VF_LOG: return log(x);
    case SIM_VF_TANH: return tanh(x);
    case SIM_VF_SIGMOID: return ref_sigmoid(x);
    case SIM_VF_SILU: return x * ref_sigmoid(x);
    case SIM_VF_GELU_TANH:
        return 0.5 * x * (1.0 + tanh(sqrt(2.0 / VM_PI) * (x + 0.044715 * x * x * x)));
    case SIM_VF_GELU_SIGMOID: return x * ref_sigmoid(1.702 * x);
    case SIM_VF_GELU: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    default: return NAN;
    }
}

/* log(x), x > 0 finite: x = 2^k m with m in [sqrt(1/2), sqrt(2)),
 * log(m) = 2 atanh(s), s = f / (2 + f), f = m - 1 (exact), by the odd
 * series to s^21 (|s| <= 0.1716: truncation < 2^-60 relative). */
VM_INLINE double log_core(double x)
{
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    const uint64_t c = 0x3FE6A09E667F3BCDull; /* sqrt(1/2) */
    uint64_t t = dbits(x) - c;
    /* k + 2048 from the exponent field of t, as a double via 2^52 */
    uint64_t kb = (t + 0x8000000000000000ull) >> 52;
    double kd = dfrom(0x4330000000000000ull | kb) - (4503599627370496.0 + 2048.0);
    double m = dfrom((t & 0x000FFFFFFFFFFFFFull) + c);
    double f = m - 1.0;
    double s = f / (2.0 + f);
    double z = s * s;
    double q = 2.0 / 21;
    q = fma(q, z, 2.0 / 19);
    q = fma(q, z, 2.0 / 17);
    q = fma(q, z, 2.0 / 15);
    q = fma(q, z, 2.0 / 13);
    q = fma(q, z, 2.0 / 11);
    q = fma(q, z, 2.0 / 9);
    q = fma(q, z, 2.0 / 7);
    q = fma(q, z, 2.0 / 5);
    q = fma(q, z, 2.0 / 3);
    double lm = fma(s * z, q, 2.0 * s);
    return kd * ln2_hi + (lm + kd * ln2_lo);
}

/* tanh(x) = sign(x) e / (e + 2), e = expm1(2|x|) = (s - 1) + s p from the
 * exp kernel (s - 1 exact for k <= 53); |x| is clamped to 44, where the
 * double result is 1 (tanh(44) is within 2^-120 of 1). */
VM_INLINE double tanh_core(double x)
{
    uint64_t sign = dbits(x) & 0x8000000000000000ull;
    double a = dfrom(dbits(x) ^ sign);
    a = a < 44.0 ? a : 44.0;
    double s, p;
    vexp_split(2.0 * a, &s, &p);
    double e = (s - 1.0) + s * p;
    double t = e / (e + 2.0);
    return dfrom(dbits(t) | sign);
}

/* erf(z) for |z| <= 2 by its Maclaurin series, z * sum_n c_n z^2n with
 * c_n = (2 / sqrt(pi)) (-1)^n / (n! (2n + 1)), n <= 32 (the first term
 * left out is below 2^-58 of the sum at |z| = 2; the alternating terms
 * reach 3.5 times the sum there, which costs about 2 bits).  Used by gelu
 * on x / sqrt(2) for x in [-2, 2.8]. */
VM_INLINE double erf_core(double z)
{
    double z2 = z * z;
    double q = 6.597356545539203e-38;
    q = fma(q, z2, -2.1781748594796097e-36);
    q = fma(q, z2, 6.973730328792914e-35);
    q = fma(q, z2, -2.1630383901171243e-33);
    q = fma(q, z2, 6.492909974544561e-32);
    q = fma(q, z2, -1.8841244217042036e-30);
    q = fma(q, z2, 5.279103332510834e-29);
    q = fma(q, z2, -1.4263930180784176e-27);
    q = fma(q, z2, 3.71153285316323e-26);
    q = fma(q, z2, -9.28672901131906e-25);
    q = fma(q, z2, 2.2308786802746453e-23);
    q = fma(q, z2, -5.136209054585811e-22);
    q = fma(q, z2, 1.131218725924631e-20);
    q = fma(q, z2, -2.3784598852774293e-19);
    q = fma(q, z2, 4.763348040515068e-18);
    q = fma(q, z2, -9.063970842808673e-17);
    q = fma(q, z2, 1.6342614095367152e-15);
    q = fma(q, z2, -2.7835162072109215e-14);
    q = fma(q, z2, 4.4632242632864775e-13);
    q = fma(q, z2, -6.7113668551641105e-12);
    q = fma(q, z2, 9.422759064650411e-11);
    q = fma(q, z2, -1.2290555301717928e-09);
    q = fma(q, z2, 1.4807192815879218e-08);
    q = fma(q, z2, -1.6365844691234924e-07);
    q = fma(q, z2, 1.6462114365889248e-06);
    q = fma(q, z2, -1.492565035840625e-05);
    q = fma(q, z2, 0.00012055332981789664);
    q = fma(q, z2, -0.0008548327023450853);
    q = fma(q, z2, 0.005223977625442188);
    q = fma(q, z2, -0.026866170645131252);
    q = fma(q, z2, 0.11283791670955126);
    q = fma(q, z2, -0.37612638903183754);
    q = fma(q, z2, 1.1283791670955126);
    return z * q;
}

VM_INLINE double sigmoid_core(double x) { return 1.0 / (1.0 + vexp_core(-x)); }

/* the kernels, composed as sim_vfn_ref composes the libm functions */
#define log_CORE(x) log_core(x)
#define tanh_CORE(x) tanh_core(x)
#define sigmoid_CORE(x) sigmoid_core(x)
#define silu_CORE(x) ((x) * sigmoid_core(x))
#define gelut_CORE(x) \
    (0.5 * (x) * (1.0 + tanh_core(sqrt(2.0 / VM_PI) * ((x) + 0.044715 * (x) * (x) * (x)))))
#define gelus_CORE(x) ((x) * sigmoid_core(1.702 * (x)))
#define gelu_CORE(x) (0.5 * (x) * (1.0 + erf_core((x) / sqrt(2.0))))

/* input ranges of the kernels (false for NaN): inside them the error
 * bound holds; outside, libm */
#define log_RANGE(x) (((x) > 0.0) & ((x) <= 3.5e38))
#define tanh_RANGE(x) (((x) >= -3.5e38) & ((x) <= 3.5e38))
#define sigmoid_RANGE(x) (((x) >= -87.0) & ((x) <= 87.0))  /* exp(-x) kernel range */
#define silu_RANGE(x) sigmoid_RANGE(x)
/* 1 + tanh(z) cancels for negative z: below -2 the libm expression itself
 * amplifies tanh's error beyond the guard */
#define gelut_RANGE(x) (((x) >= -2.0) & ((x) <= 3.5e38))
#define gelus_RANGE(x) (((x) >= -51.0) & ((x) <= 51.0))     /* 1.702 |x| <= 87 */
/* 1 + erf cancels as 1 + tanh does; the series is used up to |z| = 2 */
#define gelu_RANGE(x) (((x) >= -2.0) & ((x) <= 2.8))

static const int64_t vm_guard[SIM_VF_COUNT] = {
    [SIM_VF_LOG] = SIM_VLOG_GUARD,           [SIM_VF_TANH] = SIM_VTANH_GUARD,
    [SIM_VF_SIGMOID] = SIM_VSIGMOID_GUARD,   [SIM_VF_SILU] = SIM_VSILU_GUARD,
    [SIM_VF_GELU_TANH] = SIM_VGELUT_GUARD,   [SIM_VF_GELU_SIGMOID] = SIM_VGELUS_GUARD,
    [SIM_VF_GELU] = SIM_VGELU_GUARD,
};

#define VM_ARGS float *restrict y, double *restrict yds, const float *restrict x, uint32_t n

#define VM_KERNEL(F, G, ATTR, SUF)                                                  \
    ATTR static int F##_##SUF(VM_ARGS)                                              \
    {                                                                               \
        int any = 0;                                                                \
        for (uint32_t k = 0; k < n; k++) {                                          \
            double xd = x[k];                                                       \
            double yd = F##_CORE(xd); /* garbage outside the range: unsure */      \
            any |= vm_unsure(F##_RANGE(xd), yd, G);                                 \
            yds[k] = yd;                                                            \
            y[k] = (float)yd;                                                       \
        }                                                                           \
        return any;                                                                 \
    }

#if VM_X86
#define VM_FAMILY(F, G)                                                             \
    VM_KERNEL(F, G, , portable)                                                     \
    VM_KERNEL(F, G, __attribute__((target("avx2,fma"))), avx2)                      \
    VM_KERNEL(F, G, __attribute__((target("avx512f"))), avx512)
#else
#define VM_FAMILY(F, G) VM_KERNEL(F, G, , portable)
#endif

VM_FAMILY(log, SIM_VLOG_GUARD)
VM_FAMILY(tanh, SIM_VTANH_GUARD)
VM_FAMILY(sigmoid, SIM_VSIGMOID_GUARD)
VM_FAMILY(silu, SIM_VSILU_GUARD)
VM_FAMILY(gelut, SIM_VGELUT_GUARD)
VM_FAMILY(gelus, SIM_VGELUS_GUARD)
VM_FAMILY(gelu, SIM_VGELU_GUARD)

typedef int (*vm_kernel_t)(VM_ARGS);

#if VM_X86
#define VM_ROW(F) { F##_portable, F##_avx2, F##_avx512 }
#else
#define VM_ROW(F) { F##_portable, NULL, NULL }
#endif

static const vm_kernel_t vm_kernels[SIM_VF_COUNT][3] = {
    [SIM_VF_LOG] = VM_ROW(log),         [SIM_VF_TANH] = VM_ROW(tanh),
    [SIM_VF_SIGMOID] = VM_ROW(sigmoid), [SIM_VF_SILU] = VM_ROW(silu),
    [SIM_VF_GELU_TANH] = VM_ROW(gelut), [SIM_VF_GELU_SIGMOID] = VM_ROW(gelus),
    [SIM_VF_GELU] = VM_ROW(gelu),
};

double sim_vfn_core(sim_vfn_t f, double x)
{
    switch (f) {
    case SIM_VF_LOG: return log_CORE(x);
    case SIM_VF_TANH: return tanh_CORE(x);
    case SIM_VF_SIGMOID: return sigmoid_CORE(x);
    case SIM_VF_SILU: return silu_CORE(x);
    case SIM_VF_GELU_TANH: return gelut_CORE(x);
    case SIM_VF_GELU_SIGMOID: return gelus_CORE(x);
    case SIM_VF_GELU: return gelu_CORE(x);
    default: return NAN;
    }
}

int64_t sim_vfn_guard(sim_vfn_t f) { return vm_guard[f]; }

bool sim_vfn_in_range(sim_vfn_t f, double x)
{
    switch (f) {
    case SIM_VF_LOG: return log_RANGE(x);
    case SIM_VF_TANH: return tanh_RANGE(x);
    case SIM_VF_SIGMOID: return sigmoid_RANGE(x);
    case SIM_VF_SILU: return silu_RANGE(x);
    case SIM_VF_GELU_TANH: return gelut_RANGE(x);
    case SIM_VF_GELU_SIGMOID: return gelus_RANGE(x);
    case SIM_VF_GELU: return gelu_RANGE(x);
    default: return false;
    }
}

void sim_vfn_run(sim_vfn_t f, float *y, const float *x, uint32_t n, sim_vm_variant_t v)
{
    vm_kernel_t kern = vm_kernels[f][v] ? vm_kernels[f][v] : vm_kernels[f][SIM_VM_PORTABLE];
    int64_t guard = vm_guard[f];
    for (uint32_t i = 0; i < n; i += VM_BLOCK) {
        uint32_t m = n - i < VM_BLOCK ? n - i : VM_BLOCK;
        float in[VM_BLOCK], out[VM_BLOCK];
        double yd[VM_BLOCK];
        memcpy(in, x + i, m * sizeof *in);
        if (kern(out, yd, in, m))
            for (uint32_t k = 0; k < m; k++) {
                if (vm_unsure(sim_vfn_in_range(f, in[k]), yd[k], guard))
                    out[k] = (float)sim_vfn_ref(f, in[k]);
            }
        memcpy(y + i, out, m * sizeof *out);
    }
}

/* as sim_vexp: libm per element without AVX2 */
void sim_vfn(sim_vfn_t f, float *y, const float *x, uint32_t n)
{
    if (sim_vm_have(SIM_VM_AVX512))
        sim_vfn_run(f, y, x, n, SIM_VM_AVX512);
    else if (sim_vm_have(SIM_VM_AVX2))
        sim_vfn_run(f, y, x, n, SIM_VM_AVX2);
    else
        for (uint32_t k = 0; k < n; k++)
            y[k] = (float)sim_vfn_ref(f, x[k]);
}
