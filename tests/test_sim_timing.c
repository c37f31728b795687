/* Simulator timing policies: PE background LoadStationary (sim/pe_timing.c,
 * docs/timing-compute.md worked example). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim_int.h"

/* bf16: Matmul N=512 costs 512 PE cycles, LdWeights 128x128 costs 32 */
static void test_pe_background_ls(void **state)
{
    (void)state;
    uint64_t bg = 0;
    /* the first LS has no Matmul to hide under */
    assert_int_equal(sim_pe_pipelined_cycles(&bg, ISA_OP_LDWEIGHTS, 32, true), 32);
    assert_int_equal(sim_pe_pipelined_cycles(&bg, ISA_OP_MATMUL, 512, true), 512);
    assert_int_equal(bg, 512);
    /* LS right after a Matmul, not held by a wait: hidden (1 cycle) */
    assert_int_equal(sim_pe_pipelined_cycles(&bg, ISA_OP_LDWEIGHTS, 32, true), 1);
    assert_int_equal(bg, 0);
    assert_int_equal(sim_pe_pipelined_cycles(&bg, ISA_OP_MATMUL, 512, true), 512);
    /* held by its semaphore wait: full cost */
    assert_int_equal(sim_pe_pipelined_cycles(&bg, ISA_OP_LDWEIGHTS, 32, false), 32);
    /* LS after LS: full cost */
    assert_int_equal(sim_pe_pipelined_cycles(&bg, ISA_OP_LDWEIGHTS, 32, true), 32);
}

/* Only the part that does not fit under the Matmul is charged: fp32
 * LdWeights 128 (32 x 4) after a Matmul of 64 cycles (N=16, MM_INIT floor)
 * costs 64; any other op in between ends the overlap. */
static void test_pe_partial_overlap(void **state)
{
    (void)state;
    uint64_t bg = 0;
    sim_pe_pipelined_cycles(&bg, ISA_OP_MATMUL, 64, true);
    assert_int_equal(sim_pe_pipelined_cycles(&bg, ISA_OP_LDWEIGHTS, 128, true), 64);
    sim_pe_pipelined_cycles(&bg, ISA_OP_MATMUL, 2048, true);
    assert_int_equal(sim_pe_pipelined_cycles(&bg, ISA_OP_NOP, 4, true), 4);
    assert_int_equal(sim_pe_pipelined_cycles(&bg, ISA_OP_LDWEIGHTS, 128, true), 128);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pe_background_ls),
        cmocka_unit_test(test_pe_partial_overlap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
