/* vmath.h - vectorised elementwise math for the row fast paths.
 *
 * sim_vexp computes y[k] = (float)exp((double)x[k]) -- the value the
 * Activation engine's exp is defined to give (semantics.md "Activation":
 * evaluated in double, rounded to fp32 once) -- bit for bit, but without a
 * libm call per element: a double-precision kernel (range reduction by
 * ln 2, degree-13 polynomial, scaling by 2^k) whose error is at most
 * SIM_VEXP_ULPS units in the last place of the double result, rounded to
 * fp32.  The two roundings can only disagree with libm's when a fp32
 * rounding boundary lies within the kernel's error of the double result,
 * so every element whose double result is that close to a boundary (about
 * one in 2^20), and every input outside [-87, 88.5] (fp32 subnormal
 * results, overflow, NaN), is recomputed with libm.  tests/test_vmath.c
 * measures the kernel's error against libm over the whole fp32 range and
 * checks the fp32 results against libm bit for bit. */
#ifndef TPB_SIM_VMATH_H
#define TPB_SIM_VMATH_H

#include <stdbool.h>
#include <stdint.h>

/* error bound of the double kernel in ulps of its result (documented;
 * measured by the test, which fails if it is exceeded) */
#define SIM_VEXP_ULPS 4
/* elements whose double result lies within this many ulps of a fp32
 * rounding boundary are recomputed with libm (> 2 * SIM_VEXP_ULPS + 1:
 * covers the kernel's and libm's error together) */
#define SIM_VEXP_GUARD 64

typedef enum { SIM_VM_PORTABLE, SIM_VM_AVX2, SIM_VM_AVX512 } sim_vm_variant_t;

bool sim_vm_have(sim_vm_variant_t v);
/* y may equal x */
void sim_vexp_run(float *y, const float *x, uint32_t n, sim_vm_variant_t v);
void sim_vexp(float *y, const float *x, uint32_t n);
/* the double kernel alone, for x in [-87, 88.5] (the test measures it) */
double sim_vexp_core(double x);

/* sim_vfn: the same scheme for the activation functions used most in
 * attention and normalisation kernels, each against the double libm
 * expression semantics.md gives (sim_vfn_ref; act.c evaluates it there
 * too).  Error bounds of the double kernels in ulps of that expression's
 * result (measured by tests/test_vmath_fn.c inside each kernel's input
 * range; outside it, libm) and the guards (> 2 * bound + 1, as for exp;
 * a guard of G recomputes about 2G / 2^29 of the elements):
 *   log      all finite x > 0                       bound 2   guard 64
 *   tanh     all finite x                           bound 4   guard 64
 *   sigmoid  1 / (1 + exp(-x)), |x| <= 87            bound 4   guard 64
 *   silu     x * sigmoid(x), |x| <= 87               bound 6   guard 64
 *   gelu_apprx_tanh  x >= -2 (1 + tanh(z) cancels
 *            below, amplifying libm's own error)    bound 64  guard 1024
 *   gelu_apprx_sigmoid  x * sigmoid(1.702 x), |x| <= 51  bound 6  guard 64
 *   gelu     0.5 x (1 + erf(x / sqrt 2)), erf by its series,
 *            x in [-2, 2.8] (cancellation below)  bound 64  guard 1024
 * (measured worst: 1, 3, 2, 3, 30, 3 ulps).
 * The derivatives, erf itself, softplus, mish and the rest stay libm. */
typedef enum {
    SIM_VF_LOG, SIM_VF_TANH, SIM_VF_SIGMOID, SIM_VF_SILU, SIM_VF_GELU_TANH,
    SIM_VF_GELU_SIGMOID, SIM_VF_GELU, SIM_VF_COUNT
} sim_vfn_t;

#define SIM_VLOG_ULPS 2
#define SIM_VLOG_GUARD 64
#define SIM_VTANH_ULPS 4
#define SIM_VTANH_GUARD 64
#define SIM_VSIGMOID_ULPS 4
#define SIM_VSIGMOID_GUARD 64
#define SIM_VSILU_ULPS 6
#define SIM_VSILU_GUARD 64
#define SIM_VGELUT_ULPS 64
#define SIM_VGELUT_GUARD 1024
#define SIM_VGELUS_ULPS 6
#define SIM_VGELUS_GUARD 64
#define SIM_VGELU_ULPS 64
#define SIM_VGELU_GUARD 1024

/* the libm definition (double) */
double sim_vfn_ref(sim_vfn_t f, double x);
/* y[k] = (float)sim_vfn_ref(f, x[k]) bit for bit; y may equal x */
void sim_vfn(sim_vfn_t f, float *y, const float *x, uint32_t n);
void sim_vfn_run(sim_vfn_t f, float *y, const float *x, uint32_t n, sim_vm_variant_t v);
/* for the test: the double kernel, its input range and guard */
double sim_vfn_core(sim_vfn_t f, double x);
bool sim_vfn_in_range(sim_vfn_t f, double x);
int64_t sim_vfn_guard(sim_vfn_t f);

#endif
