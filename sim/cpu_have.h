/* cpu_have.h - whether this CPU (and OS) runs the AVX2+FMA and AVX-512F
 * kernels of pe_mac.c and vmath.c; x86-64 with GCC or clang only.
 *
 * With glibc (2.33 on) the answer is read from the CPU features the dynamic
 * loader found at start-up (<sys/platform/x86.h>).  __builtin_cpu_supports
 * instead links libgcc's constructor __cpu_indicator_init into every tpb
 * process, which runs cpuid 10 times at start whether or not a kernel is
 * ever picked: on a virtual machine where cpuid exits to the hypervisor
 * (~15 us each here) that was ~0.15 ms of every `tpb compile`. */
#ifndef TPB_SIM_CPU_HAVE_H
#define TPB_SIM_CPU_HAVE_H

#include <stdbool.h>
#include <stdlib.h> /* __GLIBC__ */

#if defined(__GLIBC__) && defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#define TPB_CPU_FROM_LOADER 1
#endif
#endif

static inline bool tpb_cpu_have_avx2_fma(void)
{
#ifdef TPB_CPU_FROM_LOADER
    return CPU_FEATURE_ACTIVE(AVX2) && CPU_FEATURE_ACTIVE(FMA);
#else
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
}

static inline bool tpb_cpu_have_avx512f(void)
{
#ifdef TPB_CPU_FROM_LOADER
    return CPU_FEATURE_ACTIVE(AVX512F);
#else
    return __builtin_cpu_supports("avx512f");
#endif
}

#endif
