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

#endif
