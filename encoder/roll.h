/* roll.h - rolled loops, shared by the planner (roll.c) and the emitter
 * (roll_emit.c).  docs/compiler.md "Rolled loops". */
#ifndef TPB_ROLL_H
#define TPB_ROLL_H

#include "backend.h"

#define ROLL_MAXD 4              /* rolled loops nested at most this deep */
#define ROLL_WAIT_REGS 15        /* wait_reg 1..15 -> r63..r49 */
#define ROLL_DYN_MAX_PEEL 3      /* guarded peeled iterations of a dynamic loop */

/* One loop instance that will be rolled.  Positions are indices of the
 * scheduled (unrolled) block.  Rolled iteration j covers [sb[j], sb[j+1]):
 * u source iterations after p peeled ones; only [s0, s1) = rolled iteration
 * 0 is emitted, [s1, end) is dropped. */
typedef struct {
    int loop;                /* tir loop record */
    int p, n, u, R;          /* peeled, source trips, source per rolled, rolled trips */
    int s0, s1, end;
    int *sb;                 /* R + 1 boundaries */
    int64_t *wstep;          /* per position in [s0, s1): wait value step per iteration */
    int64_t *sstep, *dstep;  /* DDESC src/dst address steps (bytes) */
    int parent;              /* enclosing plan (index), -1 = top level */
    int depth;               /* 0 = top level */
    /* dynamic_range (docs/compiler.md "Dynamic loops"): u = 1, no trailing
     * iterations; peeled iteration j is [pst[j], pst[j + 1]), pst[p] = s0 */
    bool dyn;
    int pst[ROLL_DYN_MAX_PEEL + 1];
} roll_plan_t;

void roll_plan_free(roll_plan_t *p);
/* Emit the block with the plans rolled (plans sorted by s0, parents first). */
int roll_emit(bir_module_t *m, const tir_kernel_t *k, const roll_plan_t *pl, int npl,
              const char **why, tpb_err_t *err);

#endif
