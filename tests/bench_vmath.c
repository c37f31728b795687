/* bench_vmath - per-element time of the vectorised activation functions
 * against the libm path (sim_actfn per element), best of several runs on
 * 1 M inputs spread over the range activations see.  Prints ns/element
 * and the ratio; not a test (no timing is asserted anywhere). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ops.h"
#include "vmath.h"

enum { N = 1 << 20, REPS = 7 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(void)
{
    static const struct { sim_vfn_t f; unsigned isa; const char *name; double lo, hi; } fns[] = {
        { SIM_VF_COUNT, ISA_ACTFN_EXP, "exp", -20, 5 },
        { SIM_VF_LOG, ISA_ACTFN_LOG, "log", 1e-6, 100 },
        { SIM_VF_TANH, ISA_ACTFN_TANH, "tanh", -6, 6 },
        { SIM_VF_SIGMOID, ISA_ACTFN_SIGMOID, "sigmoid", -10, 10 },
        { SIM_VF_SILU, ISA_ACTFN_SILU, "silu", -10, 10 },
        { SIM_VF_GELU_TANH, ISA_ACTFN_GELU_APPRX_TANH, "gelu_apprx_tanh", -4, 4 },
        { SIM_VF_GELU_SIGMOID, ISA_ACTFN_GELU_APPRX_SIGMOID, "gelu_apprx_sigmoid", -4, 4 },
        { SIM_VF_GELU, ISA_ACTFN_GELU, "gelu", -4, 4 },
        { SIM_VF_GELU, ISA_ACTFN_GELU, "gelu on [-2, 2.8]", -2, 2.8 },
    };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    if (!x || !y)
        return 1;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        for (uint32_t k = 0; k < N; k++)
            x[k] = (float)(fns[i].lo + (fns[i].hi - fns[i].lo) * ((k * 2654435761u) % N) / N);
        double best_libm = 1e9, best_vec = 1e9;
        for (int r = 0; r < REPS; r++) {
            double t0 = now();
            for (uint32_t k = 0; k < N; k++)
                y[k] = sim_actfn(fns[i].isa, x[k]);
            double t1 = now();
            if (fns[i].f == SIM_VF_COUNT)
                sim_vexp(y, x, N);
            else
                sim_vfn(fns[i].f, y, x, N);
            double t2 = now();
            best_libm = t1 - t0 < best_libm ? t1 - t0 : best_libm;
            best_vec = t2 - t1 < best_vec ? t2 - t1 : best_vec;
        }
        printf("%-20s libm %6.2f ns/elem  vector %6.2f ns/elem  speed-up %5.1fx\n", fns[i].name,
               1e9 * best_libm / N, 1e9 * best_vec / N, best_libm / best_vec);
    }
    free(x);
    free(y);
    return 0;
}
