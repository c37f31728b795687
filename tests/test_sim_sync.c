/* Simulator core: sequencing, semaphores, control flow, barriers, deadlock,
 * cycle limit, malformed streams, determinism and the timing formulas of
 * control/sync instructions (docs/timing.md).  Cycles count from 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "exec.h"
#include "sim_testlib.h"
#include "target.h"

static const tpb_target_t *trn2(void) { return tpb_target_get("trn2"); }

/* reference cycles of n cycles of a clock of `ghz` (exact in these tests) */
static uint64_t ref_of(double ghz, uint64_t n) { return (uint64_t)(n * trn2()->clk_ref / ghz + 0.5); }

static sim_engine_stats_t estats(const sim_t *s, unsigned core, unsigned eng)
{
    sim_engine_stats_t e;
    sim_get_engine_stats(s, core, eng, &e);
    return e;
}

static void test_nops_issue_cost(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    for (int i = 0; i < 10; i++)
        tb_add(&b, 0, TB_SP, tb_op(ISA_OP_NOP));
    for (int i = 0; i < 10; i++)
        tb_add(&b, 0, TB_DVE, tb_op(ISA_OP_NOP));
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, NULL, &s, &err), 0);
    const tpb_target_t *t = trn2();
    /* SP runs at the reference clock: 10 x seq_issue_cycles */
    assert_int_equal(estats(s, 0, TB_SP).busy_cycles, 10 * t->seq_issue_cycles);
    /* DVE at 0.96 GHz: 40 DVE cycles = 50 reference cycles, the longest */
    assert_int_equal(estats(s, 0, TB_DVE).busy_cycles, ref_of(t->clk_dve, 10 * t->seq_issue_cycles));
    assert_int_equal(tb_cycles(s), ref_of(t->clk_dve, 10 * t->seq_issue_cycles));
    assert_int_equal(estats(s, 0, TB_DVE).instructions, 10);
    sim_free(s);
    tb_free(&b);
}

/* producer SP Nop updates S1; consumer PE Nop waits S1 >= 1 */
static uint64_t producer_consumer(bool at_read, uint64_t *pe_wait)
{
    tb_t b;
    tb_init(&b, 1);
    isa_inst_t p = tb_op(ISA_OP_NOP);
    tb_upd(&p, 1, ISA_SEMOP_SEM_INC, 0, at_read);
    tb_add(&b, 0, TB_SP, p);
    isa_inst_t c = tb_op(ISA_OP_NOP);
    tb_wait(&c, 1, 1);
    tb_add(&b, 0, TB_PE, c);
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, NULL, &s, &err), 0);
    uint64_t cyc = tb_cycles(s);
    *pe_wait = estats(s, 0, TB_PE).sem_wait_cycles;
    sim_free(s);
    tb_free(&b);
    return cyc;
}

static void test_sem_at_complete_vs_at_read(void **state)
{
    (void)state;
    const tpb_target_t *t = trn2();
    uint64_t w;
    /* at complete: visible at end of producer (4) + latency (8); PE runs 4 PE cycles */
    uint64_t c = producer_consumer(false, &w);
    uint64_t release = t->seq_issue_cycles + t->sem_latency_cycles;
    assert_int_equal(w, release);
    assert_int_equal(c, release + ref_of(t->clk_pe, t->seq_issue_cycles));
    /* at read: visible at start of producer (0) + latency */
    c = producer_consumer(true, &w);
    assert_int_equal(w, t->sem_latency_cycles);
    assert_int_equal(c, t->sem_latency_cycles + ref_of(t->clk_pe, t->seq_issue_cycles));
}

static void test_sem_ops_values(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    unsigned ops[][2] = { { ISA_SEMOP_SEM_WR_IMM, 5 }, { ISA_SEMOP_SEM_SUB_IMM, 2 },
                          { ISA_SEMOP_SEM_ADD_IMM, 4 }, { ISA_SEMOP_SEM_INC, 0 },
                          { ISA_SEMOP_SEM_DEC, 0 }, { ISA_SEMOP_SEM_DEC, 0 } };
    for (size_t i = 0; i < 6; i++) {
        isa_inst_t n = tb_op(ISA_OP_NOP);
        tb_upd(&n, 7, ops[i][0], ops[i][1], false);
        tb_add(&b, 0, TB_SP, n);
    }
    /* 5, 3, 7, 8, 7, 6: waiting for 9 deadlocks and reports the final value */
    isa_inst_t w = tb_op(ISA_OP_NOP);
    tb_wait(&w, 7, 9);
    tb_add(&b, 0, TB_ACT, w);
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "deadlock"));
    assert_non_null(strstr(err.msg, "core 0 Activation instruction 0 (pc 0) Nop"));
    assert_non_null(strstr(err.msg, "S7 >= 9 (value 6"));
    assert_non_null(strstr(err.msg, "last updated by core 0 SP pc 5"));
    sim_free(s);
    tb_free(&b);
}

static void test_evt_set_clr_and_underflow(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    isa_inst_t n = tb_op(ISA_OP_NOP);
    tb_upd(&n, 3, ISA_SEMOP_EVT_SET, 0, false);
    tb_add(&b, 0, TB_SP, n);
    isa_inst_t w = tb_op(ISA_OP_NOP);
    tb_wait(&w, 3, 1);
    tb_upd(&w, 3, ISA_SEMOP_EVT_CLR, 0, false);
    tb_add(&b, 0, TB_PE, w);
    isa_inst_t d = tb_op(ISA_OP_NOP);
    tb_wait(&d, 3, 0);
    tb_add(&b, 0, TB_PE, d);
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, NULL, &s, &err), 0);
    sim_free(s);
    tb_free(&b);

    tb_init(&b, 1);
    n = tb_op(ISA_OP_NOP);
    tb_upd(&n, 9, ISA_SEMOP_SEM_DEC, 0, false);
    tb_add(&b, 0, TB_SP, n);
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "S9"));
    assert_non_null(strstr(err.msg, "underflow"));
    sim_free(s);
    tb_free(&b);
}

static void test_wait_count_many_producers(void **state)
{
    (void)state;
    const tpb_target_t *t = trn2();
    tb_t b;
    tb_init(&b, 1);
    for (int i = 0; i < 3; i++) {
        isa_inst_t n = tb_op(ISA_OP_NOP);
        tb_upd(&n, 0, ISA_SEMOP_SEM_INC, 0, false);
        tb_add(&b, 0, TB_SP, n);
    }
    isa_inst_t w = tb_op(ISA_OP_NOP);
    tb_wait(&w, 0, 3);
    tb_add(&b, 0, TB_ACT, w);
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, NULL, &s, &err), 0);
    uint64_t rel = 3 * t->seq_issue_cycles + t->sem_latency_cycles;
    assert_int_equal(estats(s, 0, TB_ACT).sem_wait_cycles, rel);
    assert_int_equal(tb_cycles(s), rel + ref_of(t->clk_act, t->seq_issue_cycles));
    sim_free(s);
    tb_free(&b);
}

static void test_remote_semaphore(void **state)
{
    (void)state;
    const tpb_target_t *t = trn2();
    tb_t b;
    tb_init(&b, 2);
    isa_inst_t n = tb_op(ISA_OP_NOP);
    tb_upd_remote(&n, 1, 4, ISA_SEMOP_SEM_INC, 0);
    tb_add(&b, 0, TB_SP, n);
    isa_inst_t w = tb_op(ISA_OP_NOP);
    tb_wait(&w, 4, 1);
    tb_add(&b, 1, TB_SP, w);
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, NULL, &s, &err), 0);
    assert_int_equal(estats(s, 1, TB_SP).sem_wait_cycles, t->seq_issue_cycles + t->sem_latency_cycles);
    sim_free(s);
    tb_free(&b);

    /* a remote update to a core that does not exist */
    tb_init(&b, 1);
    n = tb_op(ISA_OP_NOP);
    tb_upd_remote(&n, 3, 4, ISA_SEMOP_SEM_INC, 0);
    tb_add(&b, 0, TB_SP, n);
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "core 0 SP instruction 0"));
    assert_non_null(strstr(err.msg, "upd_core"));
    sim_free(s);
    tb_free(&b);
}

static void test_loop_branch_regs(void **state)
{
    (void)state;
    const tpb_target_t *t = trn2();
    tb_t b;
    tb_init(&b, 1);
    tb_add(&b, 0, TB_SP, tb_reg(ISA_OP_REG_SET, 1, 3));
    uint32_t loop = tb_add(&b, 0, TB_SP, tb_reg(ISA_OP_REG_ADD, 1, -1));
    isa_inst_t br = tb_op(ISA_OP_BRANCH_CMP);
    br.f.BR.reg = 1;
    br.f.BR.cmp = ISA_CMP_GT;
    br.f.BR.imm = 0;
    br.f.BR.target = loop;
    tb_add(&b, 0, TB_SP, br);
    tb_add(&b, 0, TB_SP, tb_op(ISA_OP_HALT));
    tb_add(&b, 0, TB_SP, tb_op(ISA_OP_NOP)); /* never reached */
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, NULL, &s, &err), 0);
    /* RegSet + 3 x (RegAdd + BranchCmp) + Halt */
    assert_int_equal(estats(s, 0, TB_SP).instructions, 8);
    assert_int_equal(tb_cycles(s), 8 * t->seq_issue_cycles);
    sim_free(s);
    tb_free(&b);
}

static void test_call_return(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    tb_add(&b, 0, TB_SP, tb_jump(ISA_OP_CALL, 3));   /* 0 */
    tb_add(&b, 0, TB_SP, tb_jump(ISA_OP_CALL, 3));   /* 1 */
    tb_add(&b, 0, TB_SP, tb_op(ISA_OP_RETURN));      /* 2: empty stack ends */
    tb_add(&b, 0, TB_SP, tb_op(ISA_OP_NOP));         /* 3: function */
    tb_add(&b, 0, TB_SP, tb_op(ISA_OP_RETURN));      /* 4 */
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, NULL, &s, &err), 0);
    /* Call Nop Return Call Nop Return Return */
    assert_int_equal(estats(s, 0, TB_SP).instructions, 7);
    sim_free(s);
    tb_free(&b);

    /* recursion without end overflows the call stack */
    tb_init(&b, 1);
    tb_add(&b, 0, TB_SP, tb_jump(ISA_OP_CALL, 0));
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "call stack overflow"));
    sim_free(s);
    tb_free(&b);

    /* jump outside the stream */
    tb_init(&b, 1);
    tb_add(&b, 0, TB_SP, tb_jump(ISA_OP_JUMP, 99));
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "core 0 SP instruction 0 (pc 0) Jump"));
    assert_non_null(strstr(err.msg, "target 99"));
    sim_free(s);
    tb_free(&b);
}

static void test_max_cycles_runaway(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    tb_add(&b, 0, TB_SP, tb_op(ISA_OP_NOP));
    tb_add(&b, 0, TB_SP, tb_jump(ISA_OP_JUMP, 1));
    sim_options_t o;
    sim_options_default(&o);
    o.max_cycles = 100000;
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, &o, &s, &err), -1);
    assert_non_null(strstr(err.msg, "max-cycles 100000"));
    assert_non_null(strstr(err.msg, "Jump"));
    sim_free(s);
    tb_free(&b);
}

static void test_barrier_two_cores(void **state)
{
    (void)state;
    const tpb_target_t *t = trn2();
    tb_t b;
    tb_init(&b, 2);
    for (int i = 0; i < 5; i++)
        tb_add(&b, 0, TB_SP, tb_op(ISA_OP_NOP));
    tb_add(&b, 0, TB_SP, tb_barrier(7, 0x3));
    tb_add(&b, 0, TB_SP, tb_op(ISA_OP_NOP));
    tb_add(&b, 1, TB_SP, tb_barrier(7, 0x3));
    tb_add(&b, 1, TB_SP, tb_op(ISA_OP_NOP));
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, NULL, &s, &err), 0);
    /* core 1 arrives at 0, core 0 at 20: nobody leaves before 20 */
    assert_int_equal(estats(s, 1, TB_SP).barrier_wait_cycles, 5 * t->seq_issue_cycles);
    assert_int_equal(estats(s, 0, TB_SP).barrier_wait_cycles, 0);
    assert_int_equal(tb_cycles(s), 7 * t->seq_issue_cycles);
    sim_free(s);
    tb_free(&b);
}

static void test_barrier_deadlock_and_errors(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 2);
    tb_add(&b, 0, TB_SP, tb_barrier(2, 0x3));
    isa_inst_t w = tb_op(ISA_OP_NOP);
    tb_wait(&w, 1, 1);
    tb_add(&b, 1, TB_SP, w);
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "deadlock"));
    assert_non_null(strstr(err.msg, "CoreBarrier 2"));
    assert_non_null(strstr(err.msg, "arrived core(s) 0; not arrived: 1"));
    assert_non_null(strstr(err.msg, "core 1 SP instruction 0 (pc 0) Nop: waits for S1 >= 1"));
    sim_free(s);
    tb_free(&b);

    tb_init(&b, 2);
    tb_add(&b, 0, TB_SP, tb_barrier(2, 0x2));
    tb_add(&b, 1, TB_SP, tb_op(ISA_OP_NOP));
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "does not include this core"));
    sim_free(s);
    tb_free(&b);

    tb_init(&b, 2);
    tb_add(&b, 0, TB_SP, tb_barrier(2, 0x7));
    tb_add(&b, 1, TB_SP, tb_op(ISA_OP_NOP));
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "beyond the 2 core(s)"));
    sim_free(s);
    tb_free(&b);
}

static void test_deadlock_cycle(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    isa_inst_t a = tb_op(ISA_OP_NOP);
    tb_wait(&a, 1, 1);
    tb_upd(&a, 2, ISA_SEMOP_SEM_INC, 0, false);
    tb_add(&b, 0, TB_PE, a);
    isa_inst_t c = tb_op(ISA_OP_NOP);
    tb_wait(&c, 2, 1);
    tb_upd(&c, 1, ISA_SEMOP_SEM_INC, 0, false);
    tb_add(&b, 0, TB_DVE, c);
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "deadlock at cycle 0"));
    assert_non_null(strstr(err.msg, "core 0 PE instruction 0 (pc 0) Nop: waits for S1 >= 1 (value 0, last updated by nobody)"));
    assert_non_null(strstr(err.msg, "core 0 DVE instruction 0 (pc 0) Nop: waits for S2 >= 1"));
    sim_free(s);
    tb_free(&b);
}

static void test_malformed_streams(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    tb_write(&b);
    uint8_t junk[65] = { 0 };
    tb_write_raw(&b, 0, TB_SP, junk, sizeof junk);
    sim_t *s = NULL;
    tpb_err_t err;
    assert_int_not_equal(sim_load(b.dir, NULL, &s, &err), 0);
    assert_null(s);
    assert_non_null(strstr(err.msg, "SP.bin"));
    assert_non_null(strstr(err.msg, "multiple of 64"));

    uint8_t bad[64] = { 0xEE, ISA_HEADER_BYTE1 };
    tb_write_raw(&b, 0, TB_SP, bad, sizeof bad);
    assert_int_not_equal(sim_load(b.dir, NULL, &s, &err), 0);
    assert_non_null(strstr(err.msg, "SP.bin: byte offset 0"));

    /* a Matmul in the SP stream is illegal on that engine */
    isa_inst_t mm = tb_op(ISA_OP_MATMUL);
    uint8_t enc[64];
    isa_err_t ie;
    uint8_t two[128];
    isa_inst_t nop = tb_op(ISA_OP_NOP);
    assert_int_equal(isa_encode(&nop, enc, &ie), ISA_OK);
    memcpy(two, enc, 64);
    mm.f.MM.moving.nparts = 1;
    mm.f.MM.moving.space = ISA_SPACE_SBUF;
    mm.f.MM.dst.nparts = 1;
    mm.f.MM.dst.space = ISA_SPACE_PSUM;
    assert_int_equal(isa_encode(&mm, enc, &ie), ISA_OK);
    memcpy(two + 64, enc, 64);
    tb_write_raw(&b, 0, TB_SP, two, sizeof two);
    assert_int_not_equal(sim_load(b.dir, NULL, &s, &err), 0);
    assert_non_null(strstr(err.msg, "byte offset 64"));
    assert_non_null(strstr(err.msg, "not legal on engine SP"));

    /* a core directory with no stream */
    tb_write_raw(&b, 0, TB_SP, NULL, 0);
    char p[600];
    snprintf(p, sizeof p, "%s/nc0/sg0/SP.bin", b.dir);
    remove(p);
    assert_int_not_equal(sim_load(b.dir, NULL, &s, &err), 0);
    assert_non_null(strstr(err.msg, "no instruction stream"));
    tb_free(&b);
}

static void test_bad_tensor_map(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    tb_add(&b, 0, TB_SP, tb_op(ISA_OP_NOP));
    tb_write(&b);
    sim_t *s = NULL;
    tpb_err_t err;
    tb_write_file(&b, "tensor-map.json", "{\"tensors\": [ {\"name\": \"a\"");
    assert_int_not_equal(sim_load(b.dir, NULL, &s, &err), 0);
    assert_non_null(strstr(err.msg, "tensor-map.json: invalid JSON"));
    tb_write_file(&b, "tensor-map.json",
                  "{\"num_cores\":1,\"hbm_bytes\":64,\"tensors\":[{\"name\":\"a\",\"kind\":\"input\","
                  "\"dtype\":\"float32\",\"shape\":[32],\"hbm_addr\":0}]}");
    assert_int_not_equal(sim_load(b.dir, NULL, &s, &err), 0);
    assert_non_null(strstr(err.msg, "outside hbm_bytes"));
    tb_write_file(&b, "tensor-map.json",
                  "{\"num_cores\":1,\"tensors\":[{\"name\":\"a\",\"kind\":\"weird\","
                  "\"dtype\":\"float32\",\"shape\":[4],\"hbm_addr\":0}]}");
    assert_int_not_equal(sim_load(b.dir, NULL, &s, &err), 0);
    assert_non_null(strstr(err.msg, "field kind"));
    tb_write_file(&b, "tensor-map.json", "{\"num_cores\":2,\"tensors\":[]}");
    assert_int_not_equal(sim_load(b.dir, NULL, &s, &err), 0);
    assert_non_null(strstr(err.msg, "nc1/sg0: missing core directory"));
    tb_free(&b);
}

static void test_compute_without_impl(void **state)
{
    (void)state;
    if (sim_opimpl(ISA_OP_TENSOR_COPY) != NULL)
        skip(); /* the op table has landed: covered by the sim-ops tests */
    tb_t b;
    tb_init(&b, 1);
    isa_inst_t cp = tb_op(ISA_OP_TENSOR_COPY);
    cp.f.COPY.in.nparts = 1;
    cp.f.COPY.in.space = ISA_SPACE_SBUF;
    cp.f.COPY.out.nparts = 1;
    cp.f.COPY.out.space = ISA_SPACE_SBUF;
    tb_add(&b, 0, TB_DVE, tb_op(ISA_OP_NOP));
    tb_add(&b, 0, TB_DVE, cp);
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, NULL, &s, &err), -1);
    assert_non_null(strstr(err.msg, "core 0 DVE instruction 1 (pc 1) TensorCopy: opcode TensorCopy has no implementation"));
    sim_free(s);
    tb_free(&b);
}

static void test_determinism(void **state)
{
    (void)state;
    uint64_t cyc[2];
    for (int r = 0; r < 2; r++) {
        tb_t b;
        tb_init(&b, 2);
        for (unsigned c = 0; c < 2; c++) {
            for (unsigned e = 0; e < 5; e++)
                for (unsigned i = 0; i < 20 + e * 3 + c; i++) {
                    isa_inst_t n = tb_op(ISA_OP_NOP);
                    if (i % 4 == 0)
                        tb_upd(&n, e, ISA_SEMOP_SEM_INC, 0, i % 8 == 0);
                    if (i % 5 == 4 && e > 0)
                        tb_wait(&n, e - 1, i / 5);
                    tb_add(&b, c, e, n);
                }
            tb_add(&b, c, TB_SP, tb_barrier(1, 3));
        }
        sim_t *s;
        tpb_err_t err;
        assert_int_equal(tb_run(&b, NULL, &s, &err), 0);
        cyc[r] = tb_cycles(s);
        sim_free(s);
        tb_free(&b);
    }
    assert_true(cyc[0] > 0);
    assert_int_equal(cyc[0], cyc[1]);
}

/* Equal-time order (docs/timing.md): engines due at the same time step in
 * slot order PE, Activation, Pool, DVE, SP, and their semaphore updates due
 * at the same time apply in that order.  PE and Activation both write S9
 * at read (time 0 + latency); SP waits for S9 >= 7.  When Activation (the
 * later one) writes 7, SP runs; when PE writes 7, Activation's 3 lands last
 * and SP deadlocks. */
static int equal_time_writes(unsigned pe_val, unsigned act_val, tpb_err_t *err)
{
    tb_t b;
    tb_init(&b, 1);
    isa_inst_t p = tb_op(ISA_OP_NOP), a = tb_op(ISA_OP_NOP), w = tb_op(ISA_OP_NOP);
    tb_upd(&p, 9, ISA_SEMOP_SEM_WR_IMM, pe_val, true);
    tb_upd(&a, 9, ISA_SEMOP_SEM_WR_IMM, act_val, true);
    tb_wait(&w, 9, 7);
    tb_add(&b, 0, TB_PE, p);
    tb_add(&b, 0, TB_ACT, a);
    tb_add(&b, 0, TB_SP, w);
    sim_t *s;
    int rc = tb_run(&b, NULL, &s, err);
    sim_free(s);
    tb_free(&b);
    return rc;
}

static void test_equal_time_order(void **state)
{
    (void)state;
    tpb_err_t err;
    assert_int_equal(equal_time_writes(3, 7, &err), 0);
    assert_int_equal(equal_time_writes(7, 3, &err), -1);
    assert_non_null(strstr(err.msg, "deadlock"));
    assert_non_null(strstr(err.msg, "waits for S9 >= 7 (value 3, last updated by core 0 Activation pc 0)"));
}

static void test_clock_conversions(void **state)
{
    (void)state;
    /* 3 cycles at 1.2 GHz = 2.5 ns; 1 cycle at 2.4 GHz = 416.67 ps -> 417 */
    assert_int_equal(sim_cycles_to_ps(1.2, 3), 2500);
    assert_int_equal(sim_cycles_to_ps(2.4, 1), 417);
    assert_int_equal(sim_ps_to_ref_cycles(trn2(), 2500), 3);
    /* 10^6 cycles at 0.96 GHz stay exact (no drift) */
    assert_int_equal(sim_cycles_to_ps(0.96, 960000), 1000000000ull);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nops_issue_cost),
        cmocka_unit_test(test_sem_at_complete_vs_at_read),
        cmocka_unit_test(test_sem_ops_values),
        cmocka_unit_test(test_evt_set_clr_and_underflow),
        cmocka_unit_test(test_wait_count_many_producers),
        cmocka_unit_test(test_remote_semaphore),
        cmocka_unit_test(test_loop_branch_regs),
        cmocka_unit_test(test_call_return),
        cmocka_unit_test(test_max_cycles_runaway),
        cmocka_unit_test(test_barrier_two_cores),
        cmocka_unit_test(test_barrier_deadlock_and_errors),
        cmocka_unit_test(test_deadlock_cycle),
        cmocka_unit_test(test_malformed_streams),
        cmocka_unit_test(test_bad_tensor_map),
        cmocka_unit_test(test_compute_without_impl),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_equal_time_order),
        cmocka_unit_test(test_clock_conversions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
