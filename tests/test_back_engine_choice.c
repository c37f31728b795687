/* The engine of ops that name none (docs/compiler.md "Balancing"): each
 * goes, in program order, to the engine computing the same values where
 * it would finish first by the simulator's costs, counting the engine's
 * earlier work and the semaphore hand-off from a producer elsewhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "back_util.h"
#include "exec.h"
#include "ops.h"
#include "sim.h"

static const tpb_target_t *trn2(void) { return tpb_target_get("trn2"); }

/* The simulator's time for in on engine e, ps. */
static uint64_t time_on(const tpb_target_t *t, const bir_inst_t *in, int e)
{
    isa_decoded_t d;
    bir_isa_expand(in, &d.inst);
    uint64_t cyc = sim_opimpl((isa_op_t)in->isa.op)->cost(t, (isa_engine_t)e, &d);
    return sim_cycles_to_ps(tpb_target_engine_ghz(t, e), cyc);
}

/* The engine of `engines` where in alone takes the least time. */
static int fastest(const tpb_target_t *t, const bir_inst_t *in, unsigned engines)
{
    int best = -1;
    for (int e = 0; e < ISA_ENG_COUNT; e++)
        if ((engines >> e & 1u) && (best < 0 || time_on(t, in, e) < time_on(t, in, best)))
            best = e;
    return best;
}

#define M(e) (1u << ISA_ENG_##e)

/* n independent tensor_tensor adds of [128, 512] `dt` tiles (inputs
 * loaded, in0 from PSUM when psum), named tt0.., on `engine`. */
static void build_independent(tir_kernel_t *k, int n, unsigned dt, bool psum, int engine)
{
    tir_kernel_init(k);
    int a = BU_T(k, "a", TIR_T_INPUT, dt, 128, 512);
    int z = BU_T(k, "z", psum ? TIR_T_PSUM : TIR_T_SBUF, dt, 128, 512);
    tir_op_t op;
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_whole(k, z), op.src[0] = bu_whole(k, a), op.nsrc = 1;
    bu_op(k, &op, "ldz");
    for (int i = 0; i < n; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "x%d", i);
        int x = bu_tensor(k, nm, TIR_T_SBUF, dt, 2, (int64_t[]){128, 512});
        snprintf(nm, sizeof nm, "y%d", i);
        int y = bu_tensor(k, nm, TIR_T_SBUF, dt, 2, (int64_t[]){128, 512});
        tir_op_init(&op, TIR_LOAD);
        op.dst = bu_whole(k, x), op.src[0] = bu_whole(k, a), op.nsrc = 1;
        snprintf(nm, sizeof nm, "ld%d", i);
        bu_op(k, &op, nm);
        tir_op_init(&op, TIR_TENSOR_TENSOR);
        op.dst = bu_whole(k, y), op.src[0] = bu_whole(k, z), op.src[1] = bu_whole(k, x);
        op.nsrc = 2, op.op0 = ISA_ALU_ADD, op.engine = engine;
        snprintf(nm, sizeof nm, "tt%d", i);
        bu_op(k, &op, nm);
    }
}

/* Two independent ops on equal tiles: the first where it is fastest, the
 * second on the other engine (waiting behind the first's occupancy costs
 * more than the other engine's own time). */
static void test_independent_ops_spread(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_independent(&k, 2, ISA_DT_FP32, false, ISA_ENG_UNASSIGNED);
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    bir_inst_t *t0 = bu_named(&r, "tt0"), *t1 = bu_named(&r, "tt1");
    assert_non_null(t0);
    assert_non_null(t1);
    int first = fastest(trn2(), t0, M(DVE) | M(POOL));
    int other = first == ISA_ENG_DVE ? ISA_ENG_POOL : ISA_ENG_DVE;
    /* the first engine takes the second op when its result latency has
     * passed (docs/timing.md "Result latency"), not at the first's result */
    uint64_t lat = sim_cycles_to_ps(tpb_target_engine_ghz(trn2(), first),
                                    sim_result_latency(trn2(), (isa_engine_t)first,
                                                       ISA_OP_TENSOR_TENSOR));
    assert_true(time_on(trn2(), t1, other) < 2 * time_on(trn2(), t0, first) - lat);
    assert_int_equal(t0->engine, first);
    assert_int_equal(t1->engine, other);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* A dependent chain of tensor_scalar multiplies stays on the engine fastest
 * for one of them: moving costs the semaphore hand-off and an engine no
 * faster. */
static void test_dependent_chain_stays(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_INPUT, ISA_DT_FP32, 128, 512);
    int t[5];
    for (int i = 0; i < 5; i++) {
        char nm[8];
        snprintf(nm, sizeof nm, "t%d", i);
        t[i] = bu_tensor(&k, nm, TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 512});
    }
    tir_op_t op;
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_whole(&k, t[0]), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    bu_op(&k, &op, "ld");
    for (int i = 1; i < 5; i++) {
        char nm[8];
        snprintf(nm, sizeof nm, "m%d", i);
        tir_op_init(&op, TIR_TENSOR_SCALAR);
        op.dst = bu_whole(&k, t[i]), op.src[0] = bu_whole(&k, t[i - 1]), op.nsrc = 1;
        op.op0 = ISA_ALU_MULTIPLY, op.s0.imm = 0.5;
        bu_op(&k, &op, nm);
    }
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    bir_inst_t *m1 = bu_named(&r, "m1");
    assert_non_null(m1);
    int e = fastest(trn2(), m1, M(DVE) | M(POOL) | M(ACT));
    for (int i = 1; i < 5; i++) {
        char nm[8];
        snprintf(nm, sizeof nm, "m%d", i);
        assert_int_equal(bu_named(&r, nm)->engine, e);
    }
    bu_free(&r);
    tir_kernel_free(&k);
}

static int count_on(bu_run_t *r, int n, int engine)
{
    int c = 0;
    for (int i = 0; i < n; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "tt%d", i);
        c += bu_named(r, nm)->engine == engine;
    }
    return c;
}

/* Pool has no PSUM port: with in0 in PSUM every add stays on DVE (the only
 * other engine of TensorTensor); the same adds from SBUF spread to Pool. */
static void test_psum_operand_never_on_pool(void **state)
{
    (void)state;
    for (int psum = 0; psum < 2; psum++) {
        tir_kernel_t k;
        build_independent(&k, 6, ISA_DT_FP32, psum, ISA_ENG_UNASSIGNED);
        bu_run_t r;
        assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
        if (psum)
            assert_int_equal(count_on(&r, 6, ISA_ENG_DVE), 6);
        else
            assert_true(count_on(&r, 6, ISA_ENG_POOL) > 0 && count_on(&r, 6, ISA_ENG_DVE) > 0);
        bu_free(&r);
        tir_kernel_free(&k);
    }
}

/* An op that names its engine keeps it, however busy that engine is. */
static void test_named_engine_kept(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_independent(&k, 6, ISA_DT_FP32, false, ISA_ENG_DVE);
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    assert_int_equal(count_on(&r, 6, ISA_ENG_DVE), 6);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* Only engines computing the default engine's values: Pool adds int32
 * operands natively (DVE through fp32), so int32 adds stay on DVE. */
static void test_int_tensor_tensor_stays_on_dve(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_independent(&k, 6, ISA_DT_INT32, false, ISA_ENG_UNASSIGNED);
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    assert_int_equal(count_on(&r, 6, ISA_ENG_DVE), 6);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* trn1 (dve_pool_share_sbuf): DVE and GpSimd share one SBUF port, so the
 * adds that spread to Pool on trn2 (test_psum_operand_never_on_pool) stay
 * on DVE (TensorTensor has no third engine). */
static void test_trn1_shared_port_keeps_pool_out(void **state)
{
    (void)state;
    const tpb_target_t *trn1 = tpb_target_get("trn1");
    assert_true(trn1->dve_pool_share_sbuf);
    assert_false(trn2()->dve_pool_share_sbuf);
    tir_kernel_t k;
    build_independent(&k, 6, ISA_DT_FP32, false, ISA_ENG_UNASSIGNED);
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn1, true), 0);
    assert_int_equal(count_on(&r, 6, ISA_ENG_DVE), 6);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* trn2 (dve_perf_pool_bus): DVE's perf mode (bf16 adds from SBUF) shares
 * a bus with GpSimd (sim/port.c), so a Pool add would start only when
 * DVE's is done, later than DVE's next: the independent bf16 adds that
 * spread to Pool without the bus all stay on DVE; fp32 adds (no perf
 * mode) still spread. */
static void test_trn2_perf_bus_keeps_bf16_on_dve(void **state)
{
    (void)state;
    tpb_target_t nobus = *trn2();
    nobus.dve_perf_pool_bus = false;
    assert_true(trn2()->dve_perf_pool_bus);
    for (int bus = 0; bus < 2; bus++) {
        tir_kernel_t k;
        build_independent(&k, 6, ISA_DT_BF16, false, ISA_ENG_UNASSIGNED);
        bu_run_t r;
        assert_int_equal(bu_lower(&r, &k, bus ? trn2() : &nobus, true), 0);
        if (bus)
            assert_int_equal(count_on(&r, 6, ISA_ENG_DVE), 6);
        else
            assert_true(count_on(&r, 6, ISA_ENG_POOL) > 0);
        bu_free(&r);
        tir_kernel_free(&k);
    }
    tir_kernel_t k;
    build_independent(&k, 6, ISA_DT_FP32, false, ISA_ENG_UNASSIGNED);
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    assert_true(count_on(&r, 6, ISA_ENG_POOL) > 0);
    bu_free(&r);
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_independent_ops_spread),
        cmocka_unit_test(test_dependent_chain_stays),
        cmocka_unit_test(test_psum_operand_never_on_pool),
        cmocka_unit_test(test_named_engine_kept),
        cmocka_unit_test(test_int_tensor_tensor_stays_on_dve),
        cmocka_unit_test(test_trn1_shared_port_keeps_pool_out),
        cmocka_unit_test(test_trn2_perf_bus_keeps_bf16_on_dve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
