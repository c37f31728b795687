/* port.c - memory ports two engines share.
 *
 * On NeuronCore-v2 (trn1) DVE and GpSimd (Pool) cannot use SBUF at the
 * same time, nor DVE and Activation PSUM; the production compiler
 * serialises them (ARCH2).  tpbsim's compiler does not (its engine
 * balancing keeps to DVE on trn1 instead, docs/compiler.md "Balancing"),
 * and a kernel that names both engines runs them side by side, so the
 * simulator models the port: an instruction that needs a port another
 * engine's instruction holds starts when that one is done.  Engines step
 * in time order (sim.c), so the holder is always the earlier request.
 * A port is held for the instruction's occupancy of its engine (its
 * result latency is not port time, docs/timing.md "Result latency").
 * v3 lifts both (ARCH3); what it keeps (DVE perf mode and GpSimd sharing a
 * bus, PSUM parallel only on different banks) is not modelled
 * (docs/timing.md "Shared ports"). */
#include "sim_int.h"

bool sim_port_engine(const tpb_target_t *t, isa_engine_t e)
{
    return (t->dve_pool_share_sbuf && (e == ISA_ENG_DVE || e == ISA_ENG_POOL)) ||
           (t->dve_act_share_psum && (e == ISA_ENG_DVE || e == ISA_ENG_ACT));
}

static bool touches(const sim_fp_t *fp, unsigned space)
{
    if (!fp)
        return false;
    if (fp->all)
        return true;
    for (unsigned i = 0; i < fp->n; i++)
        if (fp->r[i].space == space)
            return true;
    return false;
}

unsigned sim_port_needs(const tpb_target_t *t, isa_engine_t e, const sim_fp_t *fp)
{
    unsigned m = 0;
    /* Pool has no PSUM access (ARCH2): its compute instructions all use SBUF */
    if (t->dve_pool_share_sbuf &&
        (e == ISA_ENG_POOL || (e == ISA_ENG_DVE && touches(fp, ISA_SPACE_SBUF))))
        m |= 1u << SIM_PORT_SBUF_DVE_POOL;
    if (t->dve_act_share_psum && (e == ISA_ENG_DVE || e == ISA_ENG_ACT) &&
        touches(fp, ISA_SPACE_PSUM))
        m |= 1u << SIM_PORT_PSUM_DVE_ACT;
    return m;
}

uint64_t sim_port_free(const sim_core_t *c, unsigned ports, isa_engine_t e)
{
    uint64_t t = 0;
    for (unsigned p = 0; p < SIM_PORTS; p++)
        if (ports >> p & 1 && c->port[p].owner != (int)e && c->port[p].free_ps > t)
            t = c->port[p].free_ps;
    return t;
}

void sim_port_hold(sim_core_t *c, unsigned ports, isa_engine_t e, uint64_t end)
{
    for (unsigned p = 0; p < SIM_PORTS; p++)
        if (ports >> p & 1 && end >= c->port[p].free_ps) {
            c->port[p].free_ps = end;
            c->port[p].owner = (int)e;
        }
}
