/* opimpl.c - the compute-op table: which exec/cost pair implements each
 * opcode.  Bodies live in the file of the engine that primarily runs the
 * op (pe.c, act.c, dve.c, pool.c); control, sync, DMA and prefix opcodes
 * return NULL and are handled by the scheduler. */
#include "ops.h"

const sim_opimpl_t *sim_opimpl(isa_op_t op)
{
    const sim_opimpl_t *impl;
    if ((impl = sim_pe_impl(op)) != NULL)
        return impl;
    if ((impl = sim_act_impl(op)) != NULL)
        return impl;
    if ((impl = sim_dve_bn_impl(op)) != NULL)
        return impl;
    if ((impl = sim_seqregs_impl(op)) != NULL)
        return impl;
    if ((impl = sim_rng_impl(op)) != NULL)
        return impl;
    if ((impl = sim_dve_sel_impl(op)) != NULL)
        return impl;
    if ((impl = sim_dve_impl(op)) != NULL)
        return impl;
    if ((impl = sim_dve_tsacc_impl(op)) != NULL || (impl = sim_pool_seq_impl(op)) != NULL)
        return impl;
    return sim_pool_impl(op);
}

void sim_opimpl_table(const sim_opimpl_t **tab, bool *pe, unsigned nops)
{
    for (unsigned op = 0; op < nops; op++) {
        tab[op] = sim_opimpl((isa_op_t)op);
        pe[op] = sim_pe_impl((isa_op_t)op) != NULL;
    }
}
