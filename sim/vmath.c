/* vmath.c - vectorised elementwise math; see vmath.h for the contract.
 * One loop body, compiled for the baseline (SSE2 on x86-64, whatever the
 * target has elsewhere) and, on x86-64, with AVX2 and AVX-512 function
 * target attributes, chosen at run time (as sim/pe_mac.c does). */
#include "vmath.h"

#include <math.h>
#include <string.h>

#include "vmath_int.h"
#if VM_X86
#include "cpu_have.h"
#endif

#define VEXP_LO (-87.0)  /* exp(-87) > 2^-126: normal fp32 results only */
#define VEXP_HI 88.5     /* exp(88.5) < FLT_MAX */

double sim_vexp_core(double x) { return vexp_core(x); }

/* true when x is outside the kernel's range or its fp32 rounding is within
 * SIM_VEXP_GUARD ulps (of the double) of a rounding boundary */
static inline int vexp_unsure(double x, double yd)
{
    int64_t d = (int64_t)(dbits(yd) & 0x1FFFFFFFu) - 0x10000000; /* the 29 bits fp32 drops */
    return ((x >= VEXP_LO) & (x <= VEXP_HI) & ((uint64_t)(d + SIM_VEXP_GUARD) > 2 * SIM_VEXP_GUARD)) ^ 1;
}

#define VEXP_BODY                                                                   \
    {                                                                               \
        int any = 0;                                                                \
        for (uint32_t k = 0; k < n; k++) {                                          \
            double xd = x[k];                                                       \
            double yd = vexp_core(xd); /* garbage outside the range: unsure */     \
            any |= vexp_unsure(xd, yd);                                             \
            yds[k] = yd;                                                            \
            y[k] = (float)yd;                                                       \
        }                                                                           \
        return any;                                                                 \
    }

#define VEXP_ARGS float *restrict y, double *restrict yds, const float *restrict x, uint32_t n

static int vexp_portable(VEXP_ARGS) VEXP_BODY

#if VM_X86
__attribute__((target("avx2,fma"))) static int vexp_avx2(VEXP_ARGS) VEXP_BODY
__attribute__((target("avx512f"))) static int vexp_avx512(VEXP_ARGS) VEXP_BODY
#endif

bool sim_vm_have(sim_vm_variant_t v)
{
    switch (v) {
    case SIM_VM_PORTABLE: return true;
#if VM_X86
    case SIM_VM_AVX2: return tpb_cpu_have_avx2_fma();
    case SIM_VM_AVX512: return tpb_cpu_have_avx512f();
#endif
    default: return false;
    }
}

void sim_vexp_run(float *y, const float *x, uint32_t n, sim_vm_variant_t v)
{
    for (uint32_t i = 0; i < n; i += VM_BLOCK) {
        uint32_t m = n - i < VM_BLOCK ? n - i : VM_BLOCK;
        float in[VM_BLOCK], out[VM_BLOCK];
        double yd[VM_BLOCK];
        memcpy(in, x + i, m * sizeof *in);
        int unsure;
        switch (v) {
#if VM_X86
        case SIM_VM_AVX512: unsure = vexp_avx512(out, yd, in, m); break;
        case SIM_VM_AVX2: unsure = vexp_avx2(out, yd, in, m); break;
#endif
        default: unsure = vexp_portable(out, yd, in, m); break;
        }
        if (unsure)
            for (uint32_t k = 0; k < m; k++) {
                if (vexp_unsure(in[k], yd[k]))
                    out[k] = (float)exp((double)in[k]);
            }
        memcpy(y + i, out, m * sizeof *out);
    }
}

/* Without AVX2 the kernel does not beat libm (SSE2 has no 64-bit integer
 * compare, so the baseline loop stays scalar): libm per element then. */
void sim_vexp(float *y, const float *x, uint32_t n)
{
    if (sim_vm_have(SIM_VM_AVX512))
        sim_vexp_run(y, x, n, SIM_VM_AVX512);
    else if (sim_vm_have(SIM_VM_AVX2))
        sim_vexp_run(y, x, n, SIM_VM_AVX2);
    else
        for (uint32_t k = 0; k < n; k++)
            y[k] = (float)exp((double)x[k]);
}
