/* Instruction classes (sim/memo.c): identical compute instructions share a
 * class whatever their synchronisation fields; a class remembers its cost
 * and, with --timing-only, that its checks passed -- never for an opcode
 * whose check reads a register (TensorScalarGEP). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hugepage.h"
#include "sim_int.h"
#include "sim_testlib.h"

static isa_tap_t sb_tap(uint32_t addr, uint32_t n)
{
    isa_tap_t t = { .addr = addr, .dtype = ISA_DT_FP32, .space = ISA_SPACE_SBUF, .start = 0,
                    .nparts = 1, .ndims = 1, .step = { 1 }, .count = { n } };
    return t;
}

static isa_inst_t ts_add(uint32_t in, uint32_t out, float s)
{
    isa_inst_t i = tb_op(ISA_OP_TENSOR_SCALAR);
    i.f.TS.in = sb_tap(in, 4);
    i.f.TS.out = sb_tap(out, 4);
    i.f.TS.op0 = ISA_ALU_ADD;
    i.f.TS.op1 = ISA_ALU_BYPASS;
    memcpy(&i.f.TS.s0, &s, 4);
    return i;
}

/* TensorScalarGEP: s0 is an fp32 pointer at SBUF byte 0 moved by r1 */
static isa_inst_t ts_gep(void)
{
    isa_inst_t i = ts_add(64, 128, 0.0f);
    i.op = ISA_OP_TENSOR_SCALAR_PTR;
    i.l2 = isa_ops[ISA_OP_TENSOR_SCALAR_PTR].l2;
    i.f.TS.s0_is_ptr = 1;
    i.f.TS.s0_reg_en = 1;
    i.f.TS.s0_reg = 1;
    i.f.TS.s0 = 0u | (uint32_t)ISA_DT_FP32 << 24 | (uint32_t)ISA_SPACE_SBUF << 28;
    return i;
}

static void test_classes(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    isa_inst_t a = ts_add(0, 0, 1.0f), a2 = a, c = ts_add(16, 16, 1.0f), d = ts_add(0, 0, 2.0f);
    tb_upd(&a2, 3, ISA_SEMOP_SEM_INC, 0, false);   /* sync differs: same class */
    tb_add(&b, 0, TB_DVE, a);                  /* 0 */
    tb_add(&b, 0, TB_DVE, tb_op(ISA_OP_NOP));  /* 1: not a compute op */
    tb_add(&b, 0, TB_DVE, a2);                 /* 2 */
    tb_add(&b, 0, TB_DVE, c);                  /* 3: other address */
    tb_add(&b, 0, TB_DVE, d);                  /* 4: other immediate */
    tb_add(&b, 0, TB_DVE, a);                  /* 5 */
    tb_write(&b);
    sim_t *s = tb_load(&b, NULL);
    const sim_engine_t *e = &s->cores[0].eng[TB_DVE];
    assert_non_null(e->cls);
    assert_int_equal(e->nclasses, 3);
    assert_int_equal(e->cls[1], SIM_NO_CLASS);
    assert_int_equal(e->cls[0], e->cls[2]);
    assert_int_equal(e->cls[0], e->cls[5]);
    assert_int_not_equal(e->cls[0], e->cls[3]);
    assert_int_not_equal(e->cls[0], e->cls[4]);
    assert_int_not_equal(e->cls[3], e->cls[4]);
    assert_true(sim_memo_pure(&e->stream.insts[0]));
    sim_free(s);
    tb_free(&b);
}

/* The same program functional and --timing-only: same cycles, and the
 * timing-only run remembers the checked class. */
static void test_timing_only_same_cycles(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    for (int k = 0; k < 20; k++) {
        isa_inst_t i = ts_add((uint32_t)(k % 3) * 16, (uint32_t)(k % 3) * 16, 1.0f);
        if (k % 2)
            tb_upd(&i, 2, ISA_SEMOP_SEM_INC, 0, false);
        tb_add(&b, 0, TB_DVE, i);
    }
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, NULL, &s, &err), 0);
    uint64_t full = tb_cycles(s);
    sim_free(s);
    sim_options_t o;
    sim_options_default(&o);
    o.timing_only = true;
    assert_int_equal(tb_run(&b, &o, &s, &err), 0);
    assert_int_equal(tb_cycles(s), full);
    const sim_engine_t *e = &s->cores[0].eng[TB_DVE];
    assert_int_equal(e->nclasses, 3);
    for (unsigned k = 0; k < e->nclasses; k++)
        assert_true(e->memo[k].checked && e->memo[k].cost_ok);
    sim_free(s);
    tb_free(&b);
}

/* Two identical TensorScalarGEP instructions; a register move between them
 * sends the second one's s0 outside the partition.  Its check depends on
 * the register, so --timing-only must run it again and fail, as the
 * functional run does. */
static void test_gep_not_remembered(void **state)
{
    (void)state;
    for (int timing = 0; timing < 2; timing++) {
        tb_t b;
        tb_init(&b, 1);
        tb_add(&b, 0, TB_DVE, tb_reg(ISA_OP_REG_SET, 1, 0));
        tb_add(&b, 0, TB_DVE, ts_gep());
        tb_add(&b, 0, TB_DVE, tb_reg(ISA_OP_REG_SET, 1, 100000));
        tb_add(&b, 0, TB_DVE, ts_gep());
        sim_options_t o;
        sim_options_default(&o);
        o.timing_only = timing;
        sim_t *s;
        tpb_err_t err;
        assert_int_equal(tb_run(&b, &o, &s, &err), -1);
        assert_non_null(strstr(err.msg, "instruction 3"));
        assert_non_null(strstr(err.msg, "s0: partition 0 bytes [400000"));
        const sim_engine_t *e = &s->cores[0].eng[TB_DVE];
        assert_int_equal(e->cls[1], e->cls[3]);
        assert_false(sim_memo_pure(&e->stream.insts[1]));
        sim_free(s);
        tb_free(&b);
    }
}

/* Memset of n fp32 elements at SBUF byte addr of partition 0 to v. */
static isa_inst_t ms_f32(uint32_t addr, uint32_t n, float v)
{
    isa_inst_t i = tb_op(ISA_OP_MEMSET);
    i.f.MEMSET.out = sb_tap(addr, n);
    memcpy(&i.f.MEMSET.value, &v, 4);
    return i;
}

static float sb_f32(const sim_t *s, uint32_t addr)
{
    float f;
    memcpy(&f, s->cores[0].sbuf + addr, 4);
    return f;
}

/* Members of one class after the first take their operands from the class
 * plan (sim/tap.c): the plan holds where the operands are, never their
 * values.  Pool overwrites the DVE's tile between two members of the DVE's
 * in-place add class: the later members read Pool's values. */
static void test_plan_reads_other_engine_writes(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    isa_inst_t add = ts_add(0, 0, 1.0f), add1 = add, add2 = add, pool = ms_f32(0, 4, 10.0f);
    tb_add(&b, 0, TB_DVE, ms_f32(0, 4, 1.0f));
    tb_add(&b, 0, TB_DVE, add);
    tb_upd(&add1, 0, ISA_SEMOP_SEM_INC, 1, false);
    tb_add(&b, 0, TB_DVE, add1);                 /* x = 3, then Pool may write */
    tb_wait(&pool, 0, 1);
    tb_upd(&pool, 1, ISA_SEMOP_SEM_INC, 1, false);
    tb_add(&b, 0, TB_POOL, pool);                /* x = 10 */
    tb_wait(&add2, 1, 1);
    tb_add(&b, 0, TB_DVE, add2);                 /* x = 11 */
    tb_add(&b, 0, TB_DVE, add);                  /* x = 12 */
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, NULL, &s, &err), 0);
    const sim_engine_t *e = &s->cores[0].eng[TB_DVE];
    assert_int_equal(e->cls[1], e->cls[4]);
    assert_non_null(e->memo[e->cls[1]].plan); /* the later members used a plan */
    for (uint32_t k = 0; k < 4; k++)
        assert_true(sb_f32(s, 4 * k) == 12.0f);
    sim_free(s);
    tb_free(&b);
}

/* Two identical TensorScalarGEP instructions, r1 moving the pointer s0
 * between them: the second one's in/out come from the class plan, its s0
 * is read at the moved address. */
static void test_plan_gep_register_moved(void **state)
{
    (void)state;
    tb_t b;
    tb_init(&b, 1);
    tb_add(&b, 0, TB_DVE, ms_f32(0, 1, 5.0f));
    tb_add(&b, 0, TB_DVE, ms_f32(4, 1, 7.0f));
    tb_add(&b, 0, TB_DVE, ms_f32(64, 4, 1.0f));
    tb_add(&b, 0, TB_DVE, tb_reg(ISA_OP_REG_SET, 1, 0));
    tb_add(&b, 0, TB_DVE, ts_gep());             /* out = 1 + 5 */
    tb_add(&b, 0, TB_DVE, tb_reg(ISA_OP_REG_SET, 1, 1));
    tb_add(&b, 0, TB_DVE, ts_gep());             /* out = 1 + 7 */
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(&b, NULL, &s, &err), 0);
    const sim_engine_t *e = &s->cores[0].eng[TB_DVE];
    assert_int_equal(e->cls[4], e->cls[6]);
    assert_non_null(e->memo[e->cls[4]].plan);
    for (uint32_t k = 0; k < 4; k++)
        assert_true(sb_f32(s, 128 + 4 * k) == 8.0f);
    sim_free(s);
    tb_free(&b);
}

/* The n instructions of `ins` encoded, one bundle each, over the DVE
 * stream of b (tb_add re-encodes the whole stream per instruction). */
static void write_dve(tb_t *b, const isa_inst_t *ins, size_t n)
{
    uint8_t *buf = malloc(n * ISA_BUNDLE_BYTES);
    assert_non_null(buf);
    for (size_t i = 0; i < n; i++) {
        isa_err_t ie;
        assert_int_equal(isa_encode(&ins[i], buf + i * ISA_BUNDLE_BYTES, &ie), ISA_OK);
    }
    tb_write_raw(b, 0, TB_DVE, buf, n * ISA_BUNDLE_BYTES);
    free(buf);
}

/* A stream long enough for the class block (steps, classes, hash table)
 * to be a mapping of its own (>= TPB_ARRAY_MAP_MIN): the same classes and
 * step records as in a short one, and the run's result. */
static void test_long_stream_classes(void **state)
{
    (void)state;
    enum { N = 40000, P = 3 };   /* P memsets, then N ops */
    isa_inst_t *ins = malloc((P + N) * sizeof *ins);
    assert_non_null(ins);
    for (uint32_t k = 0; k < P; k++)
        ins[k] = ms_f32(k * 16, 4, 0.0f);
    for (uint32_t k = 0; k < N; k++)
        ins[P + k] = k % 4 == 3 ? tb_op(ISA_OP_NOP) : ts_add((k % 4) * 16, (k % 4) * 16, 1.0f);
    tb_t b;
    tb_init(&b, 1);
    tb_add(&b, 0, TB_DVE, ins[0]);
    tb_write(&b);
    write_dve(&b, ins, P + N);
    free(ins);
    sim_t *s = tb_load(&b, NULL);
    tpb_err_t err;
    assert_int_equal(sim_run(s, &err), 0);
    const sim_engine_t *e = &s->cores[0].eng[TB_DVE];
    assert_int_equal(e->stream.count, P + N);
    assert_true(e->step_bytes >= TPB_ARRAY_MAP_MIN);
    assert_int_equal(e->nclasses, 6);   /* 3 memsets and 3 adds, each at its own address */
    for (uint32_t k = 0; k < N; k++) {
        assert_int_equal(e->step[P + k].pc, P + k);
        if (k % 4 == 3)
            assert_int_equal(e->cls[P + k], SIM_NO_CLASS);
        else
            assert_int_equal(e->cls[P + k], e->cls[P + k % 4]);
    }
    assert_int_not_equal(e->cls[P], e->cls[P + 1]);
    assert_int_not_equal(e->cls[P + 1], e->cls[P + 2]);
    assert_int_not_equal(e->cls[P], e->cls[P + 2]);
    for (uint32_t k = 0; k < P; k++)
        assert_true(sb_f32(s, k * 16) == (float)(N / 4));
    sim_free(s);
    tb_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_timing_only_same_cycles),
        cmocka_unit_test(test_gep_not_remembered),
        cmocka_unit_test(test_plan_reads_other_engine_writes),
        cmocka_unit_test(test_plan_gep_register_moved),
        cmocka_unit_test(test_long_stream_classes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
