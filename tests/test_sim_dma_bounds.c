/* Simulator: a DmaTrigger's register bounds (src_bound / dst_bound, oob;
 * docs/semantics-dma.md "Triggers and queues") -- NKI's out-of-bound check
 * of a dynamic (register-offset) address, oob_mode skip moving nothing and
 * error stopping the run before anything is written, and the descriptor's
 * `bounded` bit that leaves its register-moved HBM check to the trigger. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "sim_int.h"
#include "sim_testlib.h"

#define F32 ISA_DT_FP32

typedef struct {
    unsigned oob;         /* the trigger's oob */
    bool bound;           /* the trigger bounds dst_reg */
    bool bounded;         /* the descriptor leaves its check to the trigger */
    int32_t reg;          /* r0: the dst offset in elements */
} case_t;

/* out (8 floats) = a[0:8] on queue 0; then, after it, a[8:12] -> out[0:4]
 * moved by dst_reg r0 on queue 1, bounded to [0, 4] (the offsets that keep
 * the 4 elements inside out).  Returns sim_run's result; *s the sim. */
static int run_case(tb_t *b, const case_t *k, sim_t **s, tpb_err_t *err)
{
    tb_init(b, 1);
    int64_t ash[1] = { 12 }, osh[1] = { 8 };
    uint64_t a = tb_tensor(b, "a", "input", F32, 1, ash);
    uint64_t o = tb_tensor(b, "out", "output", F32, 1, osh);
    tb_tensor(b, "pad", "scratch", F32, 1, osh);   /* HBM past out: r0 = 5 stays in HBM */
    tb_add(b, 0, TB_SP, tb_dma(tb_hbm(o, F32, 4, 8, 0, 1), tb_hbm(a, F32, 4, 8, 0, 1), 0));
    isa_inst_t t0 = tb_trig(0, 1);
    tb_upd(&t0, 5, ISA_SEMOP_SEM_INC, 0, false);
    tb_add(b, 0, TB_SP, t0);
    tb_add(b, 0, TB_SP, tb_reg(ISA_OP_REG_SET, 0, k->reg));
    isa_inst_t d = tb_dma(tb_hbm(o, F32, 4, 4, 0, 1), tb_hbm(a + 32, F32, 4, 4, 0, 1), 1);
    d.f.DDESC.src_reg = ISA_REG_NONE;
    d.f.DDESC.dst_reg = 0;
    d.f.DDESC.bounded = k->bounded;
    tb_add(b, 0, TB_SP, d);
    isa_inst_t t1 = tb_trig(1, 1);
    t1.f.DTRIG.oob = k->oob;
    t1.f.DTRIG.dst_bound = k->bound;
    t1.f.DTRIG.dst_lo = 0;
    t1.f.DTRIG.dst_hi = 4;
    tb_wait(&t1, 5, 1);
    tb_add(b, 0, TB_SP, t1);
    tb_write(b);
    *s = tb_load(b, NULL);
    float in[12];
    for (int i = 0; i < 12; i++)
        in[i] = (float)(i + 1);
    tb_input_f32(*s, "a", in, 1, ash);
    return sim_run(*s, err);
}

static void get_out(sim_t *s, float out[8])
{
    npy_array_t r;
    tpb_err_t err;
    if (sim_get_tensor(s, "out", &r, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(r.count, 8);
    memcpy(out, r.data, 8 * sizeof *out);
    npy_free(&r);
}

/* Queue 1's bytes: what the dynamic transfer moved. */
static uint64_t dyn_bytes(const sim_t *s)
{
    sim_queue_stats_t q[4];
    unsigned n = sim_get_queue_stats(s, 0, q, 4);
    for (unsigned i = 0; i < n; i++)
        if (q[i].queue == 1)
            return q[i].bytes;
    fail_msg("queue 1 has no stats");
    return 0;
}

static void test_in_bounds_moves(void **state)
{
    (void)state;
    tb_t b;
    sim_t *s;
    tpb_err_t err;
    for (unsigned oob = 0; oob < 2; oob++) {
        case_t k = { oob ? ISA_OOB_SKIP : ISA_OOB_ERROR, true, true, 4 };   /* the last offset in */
        if (run_case(&b, &k, &s, &err) != 0)
            fail_msg("%s", err.msg);
        float out[8], want[8] = { 1, 2, 3, 4, 9, 10, 11, 12 };
        get_out(s, out);
        assert_memory_equal(out, want, sizeof want);
        assert_int_equal(dyn_bytes(s), 16);
        sim_free(s);
        tb_free(&b);
    }
}

/* Out of bounds under skip: nothing is written and no byte moves -- just
 * past the tensor (5: still inside HBM), before it (-1) and far outside HBM
 * (the bounded descriptor's own HBM check waits for the trigger, which
 * skips the transfer). */
static void test_out_of_bounds_skipped(void **state)
{
    (void)state;
    const int32_t regs[] = { 5, -1, 1 << 30 };
    for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++) {
        tb_t b;
        sim_t *s;
        tpb_err_t err;
        case_t k = { ISA_OOB_SKIP, true, true, regs[i] };
        if (run_case(&b, &k, &s, &err) != 0)
            fail_msg("r0 = %d: %s", regs[i], err.msg);
        float out[8], want[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
        get_out(s, out);
        assert_memory_equal(out, want, sizeof want);
        assert_int_equal(dyn_bytes(s), 0);
        sim_free(s);
        tb_free(&b);
    }
}

/* Out of bounds under error: the run stops at the trigger, naming the
 * descriptor, the register and the bounds. */
static void test_out_of_bounds_error(void **state)
{
    (void)state;
    tb_t b;
    sim_t *s;
    tpb_err_t err;
    case_t k = { ISA_OOB_ERROR, true, true, 5 };
    assert_int_equal(run_case(&b, &k, &s, &err), -1);
    assert_non_null(strstr(err.msg, "core 0 SP instruction 4 (pc 4) DmaTrigger: descriptor 0 "
                                    "(pc 3) operand dst: register offset dst_reg r0 = 5 elements "
                                    "is outside the transfer's bounds [0, 4] (oob=error)"));
    sim_free(s);
    tb_free(&b);
}

/* Without the trigger's bound a bounded descriptor's HBM check still runs
 * (at the trigger, naming the descriptor); without `bounded` it runs at
 * the descriptor's issue, even when the trigger would skip. */
static void test_hbm_check_kept(void **state)
{
    (void)state;
    const case_t ks[] = { { ISA_OOB_SKIP, false, true, 1 << 30 },
                          { ISA_OOB_SKIP, true, false, 1 << 30 } };
    for (size_t i = 0; i < 2; i++) {
        tb_t b;
        sim_t *s;
        tpb_err_t err;
        assert_int_equal(run_case(&b, &ks[i], &s, &err), -1);
        assert_non_null(strstr(err.msg, "core 0 SP instruction 3 (pc 3) PseudoDmaDirect2d: "
                                        "operand dst: HBM address"));
        assert_non_null(strstr(err.msg, "(moved by dst_reg r0 = 1073741824 elements)"));
        sim_free(s);
        tb_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_bounds_moves),
        cmocka_unit_test(test_out_of_bounds_skipped),
        cmocka_unit_test(test_out_of_bounds_error),
        cmocka_unit_test(test_hbm_check_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
