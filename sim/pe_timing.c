/* pe_timing.c - PE pipelining of LoadStationary behind MultiplyMoving.
 *
 * "Background LS" (ARCH2/PERF, hardware-facts §1.4): the next LoadStationary
 * loads while the current MultiplyMoving still streams, so an LdWeights
 * that directly follows a Matmul on PE, and whose semaphore wait did not
 * hold it back, costs only what does not fit under that Matmul:
 * max(1, LS - MM) PE cycles (1: every instruction advances time).  The
 * hidden part is not moved earlier on the timeline: the LdWeights still
 * starts when the Matmul ends, so completions (and PE's semaphore count)
 * stay in program order.  Worked example (docs/timing-compute.md, unit test
 * test_pe_background_ls): bf16 LS 32 after MM 512 -> 1 cycle; fp32 LS 128
 * after a fp32 MM with N=16 (64 x 4 = 256) -> 1; LS after a wait or after
 * another LS -> full cost. */
#include "sim_int.h"

static bool is_ls(isa_op_t op)
{
    return op == ISA_OP_LDWEIGHTS || op == ISA_OP_LDWEIGHTS_MX || op == ISA_OP_LDWEIGHTS_SPARSE;
}

static bool is_mm(isa_op_t op)
{
    return op == ISA_OP_MATMUL || op == ISA_OP_MATMUL_MX || op == ISA_OP_MATMUL_SPARSE;
}

uint64_t sim_pe_pipelined_cycles(uint64_t *bg, isa_op_t op, uint64_t cycles, bool no_wait)
{
    uint64_t under = *bg;
    *bg = is_mm(op) ? cycles : 0;
    if (!is_ls(op) || !no_wait || !under)
        return cycles;
    return cycles > under ? cycles - under : 1;
}
