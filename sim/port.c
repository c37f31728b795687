/* port.c - memory ports two engines share.
 *
 * NeuronCore-v2 (trn1): DVE and GpSimd (Pool) cannot use SBUF at the same
 * time, nor DVE and Activation PSUM; the production compiler serialises
 * them (ARCH2).  NeuronCore-v3 (trn2) lets both pairs work in parallel,
 * except that DVE's perf mode uses a bus it shares with GpSimd (the
 * hardware arbitrates between GpSimd and those DVE instructions) and that
 * DVE and Activation collide on one PSUM bank (ARCH3).  tpbsim's compiler
 * adds no serialisation for any of them, so the simulator models the
 * ports: an instruction that needs a port another engine's instruction
 * holds starts when that one is done.  Engines step in time order
 * (sim.c), so the holder is always the earlier request.  A port is held
 * for the instruction's occupancy of its engine (its result latency is
 * not port time, docs/timing.md "Result latency" and "Shared ports"). */
#include "ops.h"
#include "sim_int.h"

bool sim_port_engine(const tpb_target_t *t, isa_engine_t e)
{
    bool pool = t->dve_pool_share_sbuf || t->dve_perf_pool_bus;
    bool psum = t->dve_act_share_psum || t->dve_act_psum_banks;
    return (pool && (e == ISA_ENG_DVE || e == ISA_ENG_POOL)) ||
           (psum && (e == ISA_ENG_DVE || e == ISA_ENG_ACT));
}

bool sim_port_reads_operands(const tpb_target_t *t, isa_engine_t e)
{
    /* Pool's need follows from the opcode alone (sim_port_needs) */
    return e != ISA_ENG_POOL && sim_port_engine(t, e);
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

/* The PSUM bank ports of the memory fp touches: every bank when the
 * target shares PSUM whole (v2) or fp is not known region by region. */
static unsigned psum_banks(const tpb_target_t *t, const sim_fp_t *fp)
{
    unsigned nb = t->psum_banks ? t->psum_banks : 1;
    if (nb > SIM_PORTS - SIM_PORT_PSUM_BANK0)
        nb = SIM_PORTS - SIM_PORT_PSUM_BANK0;
    unsigned all = ((1u << nb) - 1) << SIM_PORT_PSUM_BANK0;
    if (!t->dve_act_psum_banks || fp->all)
        return all;
    uint32_t bank = t->psum_partition_bytes / nb;
    unsigned m = 0;
    for (unsigned i = 0; i < fp->n && bank; i++) {
        const sim_region_t *r = &fp->r[i];
        if (r->space != ISA_SPACE_PSUM || r->hi <= r->lo)
            continue;
        uint32_t b0 = r->lo / bank, b1 = (r->hi - 1) / bank;
        for (uint32_t b = b0; b <= b1 && b < nb; b++)
            m |= 1u << (SIM_PORT_PSUM_BANK0 + b);
    }
    return m;
}

unsigned sim_port_needs(const tpb_target_t *t, isa_engine_t e, const isa_decoded_t *d,
                        const sim_fp_t *fp)
{
    unsigned m = 0;
    /* Pool has no PSUM access (ARCH2): its compute instructions all use
     * SBUF, and on v3 they take part in the bus arbitration */
    if (e == ISA_ENG_POOL && (t->dve_pool_share_sbuf || t->dve_perf_pool_bus))
        m |= 1u << SIM_PORT_SBUF_DVE_POOL;
    if (e == ISA_ENG_DVE && ((t->dve_pool_share_sbuf && (!fp || touches(fp, ISA_SPACE_SBUF))) ||
                             (t->dve_perf_pool_bus && sim_dve_perf_mode(t, d))))
        m |= 1u << SIM_PORT_SBUF_DVE_POOL;
    if ((e == ISA_ENG_DVE || e == ISA_ENG_ACT) &&
        (t->dve_act_share_psum || t->dve_act_psum_banks) && touches(fp, ISA_SPACE_PSUM))
        m |= psum_banks(t, fp);
    return m;
}

uint64_t sim_port_free(const sim_core_t *c, unsigned ports, isa_engine_t e)
{
    uint64_t t = 0;
    for (unsigned m = ports; m; m &= m - 1) {
        unsigned p = (unsigned)__builtin_ctz(m);
        if (c->port[p].owner != (int)e && c->port[p].free_ps > t)
            t = c->port[p].free_ps;
    }
    return t;
}

void sim_port_hold(sim_core_t *c, unsigned ports, isa_engine_t e, uint64_t end)
{
    for (unsigned m = ports; m; m &= m - 1) {
        unsigned p = (unsigned)__builtin_ctz(m);
        if (end >= c->port[p].free_ps) {
            c->port[p].free_ps = end;
            c->port[p].owner = (int)e;
        }
    }
}
