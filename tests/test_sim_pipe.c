/* The engines' result pipeline (sim/pipe.c, docs/timing.md "Result
 * latency"): on DVE and Activation an instruction occupies its engine for
 * max(min_ii, work) cycles and its result is written static_overhead
 * cycles later.  Every expected figure is computed from the target's
 * parameters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ops.h"
#include "sim_testlib.h"
#include "target.h"

static const tpb_target_t *trn2(void) { return tpb_target_get("trn2"); }

/* reference cycles of n cycles of a clock of `ghz` (the counts used here
 * are exact at trn2's clocks: multiples of 4 DVE cycles, any ACT count) */
static uint64_t ref_of(double ghz, uint64_t n) { return (uint64_t)(n * trn2()->clk_ref / ghz + 0.5); }

static uint64_t umax(uint64_t a, uint64_t b) { return a > b ? a : b; }

#define N 512u       /* fp32 elements per partition: work N on both engines */
#define REGION 2048u /* bytes between the tiles used below (one N-element tile) */

/* an fp32 SBUF tile of n elements per partition at region r, 128 partitions */
static isa_tap_t tile(unsigned r, unsigned n)
{
    return (isa_tap_t){ .addr = r * REGION, .dtype = ISA_DT_FP32, .space = ISA_SPACE_SBUF,
                        .start = 0, .nparts = 128, .ndims = 1, .step = { 1 }, .count = { n } };
}

static isa_inst_t copy(unsigned from, unsigned to, unsigned n)
{
    isa_inst_t in = tb_op(ISA_OP_TENSOR_COPY);
    in.f.COPY.in = tile(from, n);
    in.f.COPY.out = tile(to, n);
    return in;
}

/* Runs b (values or timing only) and returns its total reference cycles. */
static uint64_t run_cycles(tb_t *b, bool timing_only)
{
    sim_options_t o;
    sim_options_default(&o);
    o.timing_only = timing_only;
    sim_t *s;
    tpb_err_t err;
    int rc = tb_run(b, &o, &s, &err);
    if (rc != 0)
        fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    uint64_t c = tb_cycles(s);
    sim_free(s);
    return c;
}

/* Two TensorCopy on DVE, the second reading `second_from` into `second_to`. */
static uint64_t dve_pair(unsigned second_from, unsigned second_to, uint64_t *busy)
{
    tb_t b;
    tb_init(&b, 1);
    tb_add(&b, 0, TB_DVE, copy(0, 1, N));
    tb_add(&b, 0, TB_DVE, copy(second_from, second_to, N));
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, NULL, &s, &err), 0);
    uint64_t c = tb_cycles(s);
    sim_engine_stats_t e;
    sim_get_engine_stats(s, 0, TB_DVE, &e);
    *busy = e.busy_cycles;
    sim_free(s);
    tb_free(&b);
    return c;
}

/* An independent pair overlaps the first one's static overhead; a pair
 * whose second reads (RAW) or overwrites (WAW) the first one's output
 * pays it, as every instruction did before the pipeline. */
static void test_independent_vs_dependent_pair(void **state)
{
    (void)state;
    const tpb_target_t *t = trn2();
    uint64_t occ = umax(t->min_ii, N), lat = t->dve_static_overhead, busy;
    uint64_t indep = dve_pair(2, 3, &busy);
    assert_int_equal(indep, ref_of(t->clk_dve, 2 * occ + lat));
    assert_int_equal(busy, ref_of(t->clk_dve, 2 * occ)); /* busy = occupancy only */
    uint64_t raw = dve_pair(1, 2, &busy);
    assert_int_equal(raw, ref_of(t->clk_dve, 2 * (lat + occ)));
    assert_int_equal(raw - indep, ref_of(t->clk_dve, lat));
    uint64_t waw = dve_pair(2, 1, &busy);
    assert_int_equal(waw, raw);
    /* reading only the first one's input is no hazard */
    assert_int_equal(dve_pair(0, 2, &busy), indep);
}

/* A per-partition scalar pointer is an operand too: a TensorScalar whose
 * s0 points into the previous instruction's output waits for it. */
static void test_pointer_operand_dependency(void **state)
{
    (void)state;
    const tpb_target_t *t = trn2();
    uint64_t cyc[2];
    for (int dep = 0; dep < 2; dep++) {
        tb_t b;
        tb_init(&b, 1);
        tb_add(&b, 0, TB_DVE, copy(0, 1, N));
        isa_inst_t ts = tb_op(ISA_OP_TENSOR_SCALAR_PTR);
        ts.f.TS.in = tile(2, N);
        ts.f.TS.out = tile(3, N);
        ts.f.TS.op0 = ISA_ALU_MULTIPLY;
        ts.f.TS.op1 = ISA_ALU_BYPASS;
        ts.f.TS.s0_is_ptr = 1;
        /* the packed pointer: addr | fp32 << 24 | SBUF << 28 */
        uint32_t addr = (dep ? 1 : 4) * REGION;
        ts.f.TS.s0 = addr | (uint32_t)ISA_DT_FP32 << 24 | (uint32_t)ISA_SPACE_SBUF << 28;
        tb_add(&b, 0, TB_DVE, ts);
        cyc[dep] = run_cycles(&b, false);
        tb_free(&b);
    }
    assert_int_equal(cyc[1] - cyc[0], ref_of(t->clk_dve, t->dve_static_overhead));
}

/* A chain of tiny dependent Activation-engine instructions still costs
 * static overhead + min_ii each (ARCH2's dependent case); tiny independent
 * ones issue every min_ii (COST's MIN_II floor).  With --timing-only the
 * later members of a class skip execution and reuse its operands: the
 * same times. */
static void test_tiny_chain_on_act(void **state)
{
    (void)state;
    const tpb_target_t *t = trn2();
    enum { K = 10 };
    for (int to = 0; to < 2; to++) {
        tb_t b;
        tb_init(&b, 1);
        for (unsigned i = 0; i < K; i++) /* 0 -> 1 -> 0 -> 1 ... */
            tb_add(&b, 0, TB_ACT, copy(i % 2, (i + 1) % 2, 1));
        assert_int_equal(run_cycles(&b, to),
                         ref_of(t->clk_act, K * (t->act_static_overhead + t->min_ii)));
        tb_free(&b);
        tb_init(&b, 1);
        for (unsigned i = 0; i < K; i++) /* 0 -> 1, 0 -> 2, ... */
            tb_add(&b, 0, TB_ACT, copy(0, 1 + i, 1));
        assert_int_equal(run_cycles(&b, to),
                         ref_of(t->clk_act, K * t->min_ii + t->act_static_overhead));
        tb_free(&b);
    }
}

/* Another engine waiting on the semaphore a DVE instruction updates at
 * completion sees the static overhead: the update applies when the result
 * is written, though DVE is free earlier.  Results are written in program
 * order, so a later Nop's update waits for that result too. */
static void test_semaphore_sees_latency(void **state)
{
    (void)state;
    const tpb_target_t *t = trn2();
    uint64_t occ = umax(t->min_ii, N), lat = t->dve_static_overhead;
    for (int via_nop = 0; via_nop < 2; via_nop++) {
        tb_t b;
        tb_init(&b, 1);
        isa_inst_t c = copy(0, 1, N);
        if (!via_nop)
            tb_upd(&c, 1, ISA_SEMOP_SEM_INC, 0, false);
        tb_add(&b, 0, TB_DVE, c);
        if (via_nop) {
            isa_inst_t nop = tb_op(ISA_OP_NOP);
            tb_upd(&nop, 1, ISA_SEMOP_SEM_INC, 0, false);
            tb_add(&b, 0, TB_DVE, nop);
        }
        isa_inst_t w = tb_op(ISA_OP_NOP);
        tb_wait(&w, 1, 1);
        tb_add(&b, 0, TB_SP, w);
        /* SP runs at the reference clock */
        assert_int_equal(run_cycles(&b, false), ref_of(t->clk_dve, occ + lat) +
                                                    t->sem_latency_cycles + t->seq_issue_cycles);
        tb_free(&b);
    }
}

/* Pool keeps its start-up as occupancy (GpSimd runs each instruction as
 * software on its cores): two independent Pool copies take the whole
 * pool_static_overhead + N each; TensorLoad/TensorStore (flat min_ii)
 * and PE have no result latency. */
static void test_pool_and_others_unchanged(void **state)
{
    (void)state;
    const tpb_target_t *t = trn2();
    tb_t b;
    tb_init(&b, 1);
    tb_add(&b, 0, TB_POOL, copy(0, 1, N));
    tb_add(&b, 0, TB_POOL, copy(2, 3, N));
    assert_int_equal(run_cycles(&b, false), ref_of(t->clk_pool, 2 * (t->pool_static_overhead + N)));
    tb_free(&b);
    assert_int_equal(sim_result_latency(t, ISA_ENG_DVE, ISA_OP_TENSOR_COPY), t->dve_static_overhead);
    assert_int_equal(sim_result_latency(t, ISA_ENG_ACT, ISA_OP_ACTIVATION), t->act_static_overhead);
    assert_int_equal(sim_result_latency(t, ISA_ENG_POOL, ISA_OP_TENSOR_COPY), 0);
    assert_int_equal(sim_result_latency(t, ISA_ENG_PE, ISA_OP_MATMUL), 0);
    assert_int_equal(sim_result_latency(t, ISA_ENG_DVE, ISA_OP_TENSOR_LOAD), 0);
    assert_int_equal(sim_result_latency(t, ISA_ENG_ACT, ISA_OP_TENSOR_STORE), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_independent_vs_dependent_pair),
        cmocka_unit_test(test_pointer_operand_dependency),
        cmocka_unit_test(test_tiny_chain_on_act),
        cmocka_unit_test(test_semaphore_sees_latency),
        cmocka_unit_test(test_pool_and_others_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
