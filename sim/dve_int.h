/* dve_int.h - pieces shared by the Vector engine files (dve.c, dve_max8.c,
 * dve_move.c, dve_mx.c): operand clean-up and the DVE cost shape. */
#ifndef TPB_SIM_DVE_INT_H
#define TPB_SIM_DVE_INT_H

#include "ops.h"

static inline void free_all(sim_opnd_t *o, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        sim_opnd_free(&o[i]);
}

static inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* DVE cost with the strided-port penalty (ARCH2: innermost stride > 16 B
 * halves bandwidth) and a perf-mode divisor. */
static inline uint64_t dve_work(uint64_t work, const isa_tap_t *a, const isa_tap_t *b,
                                const isa_tap_t *c, uint64_t div)
{
    if ((a && sim_tap_strided(a)) || (b && sim_tap_strided(b)) || (c && sim_tap_strided(c)))
        work *= 2;
    return ceil_div(work, div ? div : 1);
}

/* Max8 family: N cycles (one pass over the input). */
static inline uint64_t cost_copy_n(const tpb_target_t *t, isa_engine_t e,
                                   const isa_decoded_t *d)
{
    (void)e;
    const isa_fmt_COPY_t *f = &d->inst.f.COPY;
    return sim_cost_dve(t, dve_work(sim_tap_n(&f->in), &f->in, NULL, NULL, 1));
}

/* opimpl lookups of the split-out DVE files (NULL when not theirs) */
const sim_opimpl_t *sim_dve_max8_impl(isa_op_t op);   /* dve_max8.c */
const sim_opimpl_t *sim_dve_move_impl(isa_op_t op);   /* dve_move.c */
const sim_opimpl_t *sim_dve_mx_impl(isa_op_t op);     /* dve_mx.c */

#endif
