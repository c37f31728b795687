/* Placeholder op table until sim/pe.c, act.c, dve.c, pool.c land. */
#include "exec.h"

const sim_opimpl_t *sim_opimpl(isa_op_t op)
{
    (void)op;
    return NULL;
}
