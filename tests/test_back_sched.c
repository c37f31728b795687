/* Allocation (liveness, reuse, PSUM banks, out-of-memory) and scheduling
 * (engines, queues, semaphore waits and updates). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "back_util.h"

static const tpb_target_t *trn2(void) { return tpb_target_get("trn2"); }

/* load a -> t (SP queue); t2 = t + t (DVE); t3 = t2 * 2 (Act); store t3 -> out;
 * plus an independent memset on Pool. */
static void build_chain(tir_kernel_t *k)
{
    tir_kernel_init(k);
    int a = BU_T(k, "a", TIR_T_INPUT, ISA_DT_FP32, 128, 64);
    int out = BU_T(k, "out", TIR_T_OUTPUT, ISA_DT_FP32, 128, 64);
    int t = BU_T(k, "t", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int t2 = BU_T(k, "t2", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int t3 = BU_T(k, "t3", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int z = BU_T(k, "z", TIR_T_PSUM, ISA_DT_FP32, 128, 64); /* no SBUF reuse */
    tir_op_t op;
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_whole(k, t), op.src[0] = bu_whole(k, a), op.nsrc = 1;
    bu_op(k, &op, "ld");
    tir_op_init(&op, TIR_TENSOR_TENSOR);
    op.dst = bu_whole(k, t2), op.src[0] = bu_whole(k, t), op.src[1] = bu_whole(k, t), op.nsrc = 2;
    op.op0 = ISA_ALU_ADD, op.engine = ISA_ENG_DVE;
    bu_op(k, &op, "add");
    tir_op_init(&op, TIR_MEMSET);
    op.dst = bu_whole(k, z), op.engine = ISA_ENG_POOL;
    bu_op(k, &op, "indep");
    tir_op_init(&op, TIR_TENSOR_SCALAR);
    op.dst = bu_whole(k, t3), op.src[0] = bu_whole(k, t2), op.nsrc = 1;
    op.op0 = ISA_ALU_MULTIPLY, op.s0.imm = 2.0, op.engine = ISA_ENG_ACT;
    bu_op(k, &op, "mul");
    tir_op_init(&op, TIR_STORE);
    op.dst = bu_whole(k, out), op.src[0] = bu_whole(k, t3), op.nsrc = 1;
    bu_op(k, &op, "st");
}

static void test_raw_waits(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_chain(&k);
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    bir_inst_t *ld = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 0)];
    bir_inst_t *add = bu_named(&r, "add"), *indep = bu_named(&r, "indep"), *mul = bu_named(&r, "mul");
    bir_inst_t *st = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 1)];
    assert_non_null(add);
    assert_non_null(indep);
    assert_non_null(mul);
    int q0 = (int)ld->isa.f->DTRIG.queue;
    int qsem = r.m.queues[q0].semaphore;
    /* the load's trigger signals its queue semaphore at completion */
    assert_int_equal(ld->isa.sync.upd_en, 1);
    assert_int_equal(ld->isa.sync.upd_sem, qsem);
    assert_int_equal(ld->isa.sync.upd_op, ISA_SEMOP_SEM_INC);
    assert_int_equal(ld->isa.sync.upd_at_read, 0);
    assert_int_equal(ld->isa.sync.wait_en, 0);
    /* RAW load -> DVE add: wait for the queue's first transfer */
    assert_int_equal(add->engine, ISA_ENG_DVE);
    assert_int_equal(add->isa.sync.wait_en, 1);
    assert_int_equal(add->isa.sync.wait_sem, qsem);
    assert_int_equal(add->isa.sync.wait_val, 1);
    assert_int_equal(add->isa.sync.upd_sem, sched_engine_sem(ISA_ENG_DVE));
    /* independent op: no wait */
    assert_int_equal(indep->engine, ISA_ENG_POOL);
    assert_int_equal(indep->isa.sync.wait_en, 0);
    /* RAW DVE -> Act: wait on the DVE semaphore for its first completion */
    assert_int_equal(mul->isa.sync.wait_en, 1);
    assert_int_equal(mul->isa.sync.wait_sem, sched_engine_sem(ISA_ENG_DVE));
    assert_int_equal(mul->isa.sync.wait_val, 1);
    /* store waits on Act */
    assert_int_equal(st->isa.sync.wait_sem, sched_engine_sem(ISA_ENG_ACT));
    assert_int_equal(st->isa.sync.wait_val, 1);
    /* one Halt per used engine, and every queue drained by its engine */
    assert_int_equal(bu_count(&r, ISA_OP_HALT), 4);   /* SP, DVE, Pool, Act */
    bu_free(&r);
    tir_kernel_free(&k);
}

static void test_multiple_waits_use_nops(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int b = BU_T(&k, "b", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int c = BU_T(&k, "c", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int x = BU_T(&k, "x", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_MEMSET);
    op.dst = bu_whole(&k, x), op.engine = ISA_ENG_DVE;
    bu_op(&k, &op, "px");
    op.dst = bu_whole(&k, a), op.engine = ISA_ENG_POOL;
    bu_op(&k, &op, "pa");
    /* independent of pa: Act reads x */
    tir_op_init(&op, TIR_TENSOR_SCALAR);
    op.dst = bu_whole(&k, b), op.src[0] = bu_whole(&k, x), op.nsrc = 1, op.engine = ISA_ENG_ACT;
    bu_op(&k, &op, "ab");
    tir_op_init(&op, TIR_TENSOR_TENSOR);
    op.dst = bu_whole(&k, c), op.src[0] = bu_whole(&k, a), op.src[1] = bu_whole(&k, b), op.nsrc = 2;
    op.engine = ISA_ENG_DVE;
    bu_op(&k, &op, "abc");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    /* abc (DVE) depends on Pool (pa) and Act (ab), two unrelated producers:
     * one wait in a Nop, one in its header */
    int ci = -1;
    for (int i = 0; i < bu_block(&r)->ninsts; i++)
        if (!strcmp(bu_block(&r)->insts[i].name, "abc"))
            ci = i;
    assert_true(ci > 0);
    bir_inst_t *nop = &bu_block(&r)->insts[ci - 1], *abc = &bu_block(&r)->insts[ci];
    assert_int_equal(nop->isa.op, ISA_OP_NOP);
    assert_int_equal(nop->engine, ISA_ENG_DVE);
    assert_int_equal(nop->isa.sync.wait_en, 1);
    assert_int_equal(abc->isa.sync.wait_en, 1);
    int s1 = (int)nop->isa.sync.wait_sem, s2 = (int)abc->isa.sync.wait_sem;
    assert_true((s1 == sched_engine_sem(ISA_ENG_POOL) && s2 == sched_engine_sem(ISA_ENG_ACT)) ||
                (s2 == sched_engine_sem(ISA_ENG_POOL) && s1 == sched_engine_sem(ISA_ENG_ACT)));
    assert_int_equal(r.st.nops, 1);
    bu_free(&r);
    /* make ab depend on pa: waiting for ab then implies pa, one wait only */
    k.ops[2].src[0] = bu_whole(&k, a);
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    assert_int_equal(r.st.nops, 0);
    bir_inst_t *abc2 = bu_named(&r, "abc");
    assert_int_equal(abc2->isa.sync.wait_sem, sched_engine_sem(ISA_ENG_ACT));
    bu_free(&r);
    tir_kernel_free(&k);
}

static void test_same_engine_and_implied_waits(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int b = BU_T(&k, "b", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_MEMSET);
    op.dst = bu_whole(&k, a), op.engine = ISA_ENG_DVE;
    bu_op(&k, &op, "m");              /* DVE */
    tir_op_init(&op, TIR_TENSOR_COPY);
    op.dst = bu_whole(&k, b), op.src[0] = bu_whole(&k, a), op.nsrc = 1, op.engine = ISA_ENG_DVE;
    bu_op(&k, &op, "c1");             /* DVE: same engine, no wait */
    op.engine = ISA_ENG_ACT;
    bu_op(&k, &op, "c2");             /* Act: WAW on b + RAW on a -> waits DVE >= 2 */
    op.engine = ISA_ENG_ACT;
    op.dst = bu_whole(&k, a), op.src[0] = bu_whole(&k, b);
    bu_op(&k, &op, "c3");             /* Act: needs DVE >= 2 again: implied, no wait */
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    assert_int_equal(bu_named(&r, "c1")->isa.sync.wait_en, 0);
    bir_inst_t *c2 = bu_named(&r, "c2");
    assert_int_equal(c2->isa.sync.wait_en, 1);
    assert_int_equal(c2->isa.sync.wait_sem, sched_engine_sem(ISA_ENG_DVE));
    assert_int_equal(c2->isa.sync.wait_val, 2);
    assert_int_equal(bu_named(&r, "c3")->isa.sync.wait_en, 0);
    bu_free(&r);
    tir_kernel_free(&k);
}

static void test_alloc_liveness_reuse(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    /* three 100 KiB tiles, each dead before the next is born: they fit one
     * 224 KiB partition only because the space is reused */
    int t[3];
    for (int i = 0; i < 3; i++) {
        char n[8];
        snprintf(n, sizeof n, "t%d", i);
        t[i] = BU_T(&k, n, TIR_T_SBUF, ISA_DT_FP32, 128, 25600);
    }
    int keep = BU_T(&k, "keep", TIR_T_SBUF, ISA_DT_FP32, 128, 25600);
    tir_op_t op;
    for (int i = 0; i < 3; i++) {
        tir_op_init(&op, TIR_MEMSET);
        op.dst = bu_whole(&k, t[i]);
        bu_op(&k, &op, "m");
        tir_op_init(&op, TIR_TENSOR_COPY);
        op.dst = bu_whole(&k, keep), op.src[0] = bu_whole(&k, t[i]), op.nsrc = 1;
        bu_op(&k, &op, "c");
    }
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    assert_int_equal(r.m.mlocs[t[0]].addr, r.m.mlocs[t[1]].addr);
    assert_int_equal(r.m.mlocs[t[1]].addr, r.m.mlocs[t[2]].addr);
    assert_true(r.m.mlocs[keep].addr >= r.m.mlocs[t[0]].addr + 102400 ||
                r.m.mlocs[keep].addr + 102400 <= r.m.mlocs[t[0]].addr);
    /* the reuse creates a WAR: m (t1) must wait for c (reading t0)? same
     * engine DVE -> in order, no wait needed */
    bu_free(&r);
    /* keep t0 alive to the end: three live 100 KiB tiles do not fit */
    tir_op_init(&op, TIR_TENSOR_COPY);
    op.dst = bu_whole(&k, keep), op.src[0] = bu_whole(&k, t[0]), op.nsrc = 1;
    bu_op(&k, &op, "late");
    assert_int_not_equal(bu_lower(&r, &k, trn2(), false), 0);
    assert_non_null(strstr(r.err.msg, "SBUF allocation failed"));
    assert_non_null(strstr(r.err.msg, "102400 bytes per partition"));
    assert_non_null(strstr(r.err.msg, "of 229376"));
    assert_non_null(strstr(r.err.msg, "'t"));
    bu_free(&r);
    tir_kernel_free(&k);
}

static void test_psum_banks(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int p0 = BU_T(&k, "p0", TIR_T_PSUM, ISA_DT_FP32, 128, 384);   /* 1536 B */
    int p1 = BU_T(&k, "p1", TIR_T_PSUM, ISA_DT_FP32, 128, 384);
    int s = BU_T(&k, "s", TIR_T_SBUF, ISA_DT_FP32, 128, 384);
    tir_op_t op;
    tir_op_init(&op, TIR_MEMSET);
    op.dst = bu_whole(&k, p0);
    bu_op(&k, &op, "m0");
    op.dst = bu_whole(&k, p1);
    bu_op(&k, &op, "m1");
    tir_op_init(&op, TIR_TENSOR_TENSOR);
    op.dst = bu_whole(&k, s), op.src[0] = bu_whole(&k, p0), op.src[1] = bu_whole(&k, p1), op.nsrc = 2;
    bu_op(&k, &op, "add");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
    assert_int_equal(r.m.mlocs[p0].addr, 0);
    assert_int_equal(r.m.mlocs[p1].addr, 2048);   /* would straddle bank 0/1 at 1536 */
    bu_free(&r);
    tir_kernel_free(&k);
}

static void test_dma_war_on_reused_space(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_INPUT, ISA_DT_FP32, 128, 64);
    int o = BU_T(&k, "o", TIR_T_OUTPUT, ISA_DT_FP32, 128, 64);
    int t0 = BU_T(&k, "t0", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int t1 = BU_T(&k, "t1", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_MEMSET);
    op.dst = bu_whole(&k, t0);
    bu_op(&k, &op, "m");
    tir_op_init(&op, TIR_STORE);
    op.dst = bu_whole(&k, o), op.src[0] = bu_whole(&k, t0), op.nsrc = 1;
    bu_op(&k, &op, "st");
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_whole(&k, t1), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    bu_op(&k, &op, "ld");
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    /* t1 reuses t0's space: the load (WAR against the store's read) waits for
     * the store transfer on its queue semaphore */
    assert_int_equal(r.m.mlocs[t0].addr, r.m.mlocs[t1].addr);
    bir_inst_t *st = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 0)];
    bir_inst_t *ld = &bu_block(&r)->insts[bu_find(&r, ISA_OP_DMA_TRIGGER, 1)];
    assert_int_equal(ld->isa.sync.wait_en, 1);
    assert_int_equal(ld->isa.sync.wait_sem, r.m.queues[st->queue].semaphore);
    assert_int_equal(ld->isa.sync.wait_val, 1);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* Explicit deps (seed 004 process_dep_edges): an Activation on a tile no
 * one else touches waits for a DVE memset only when it names it in deps. */
static void test_explicit_deps(void **state)
{
    (void)state;
    for (int with = 0; with < 2; with++) {
        tir_kernel_t k;
        tir_kernel_init(&k);
        int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
        int b = BU_T(&k, "b", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
        int c2 = BU_T(&k, "c", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
        tir_op_t op;
        tir_op_init(&op, TIR_MEMSET);
        op.dst = bu_whole(&k, a); TIR_RARE_SET(&k, &op, value, 1.0); op.engine = ISA_ENG_DVE;
        bu_op(&k, &op, "ms");
        tir_op_init(&op, TIR_MEMSET);
        op.dst = bu_whole(&k, b); TIR_RARE_SET(&k, &op, value, 2.0); op.engine = ISA_ENG_DVE;
        bu_op(&k, &op, "ms_b");
        tir_op_init(&op, TIR_ACTIVATION);
        op.dst = bu_whole(&k, c2), op.src[0] = bu_whole(&k, b), op.nsrc = 1;
        op.func = ISA_ACTFN_EXP, op.s0.imm = 1.0;
        bu_op(&k, &op, "act");
        /* keep a live past act, so act's c never reuses a's space */
        int d2 = BU_T(&k, "d", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
        tir_op_init(&op, TIR_TENSOR_COPY);
        op.dst = bu_whole(&k, d2), op.src[0] = bu_whole(&k, a), op.nsrc = 1, op.engine = ISA_ENG_DVE;
        bu_op(&k, &op, "keep");
        if (with)   /* "deps": ["ms"] */
            assert_int_equal(tir_op_set_deps(&k, &k.ops[2], (const int[]){0}, 1), 0);
        bu_run_t r;
        assert_int_equal(bu_lower(&r, &k, tpb_target_get("trn2"), true), 0);
        const bir_inst_t *act = &bu_block(&r)->insts[bu_find(&r, ISA_OP_ACTIVATION, 0)];
        /* it reads b: it waits for ms_b (DVE's 2nd completion) either way,
         * which implies ms (the 1st); with deps the token read is recorded */
        assert_int_equal(act->isa.sync.wait_en, 1);
        assert_int_equal(act->isa.sync.wait_sem, sched_engine_sem(ISA_ENG_DVE));
        assert_int_equal(act->isa.sync.wait_val, 2);
        bool token = false;
        for (int i = 0; i < act->nacc; i++)
            token |= act->acc[i].space == BIR_SPACE_DEP && !act->acc[i].write && act->acc[i].lo == 0;
        assert_int_equal(token, with);
        bu_free(&r);
        /* the deciding case: the dependency target comes after the data producer */
        tir_op_t t = k.ops[0];
        k.ops[0] = k.ops[1];
        k.ops[1] = t;
        k.ops[0].name = "ms_b";   /* literals outlive k */
        k.ops[1].name = "ms";
        if (with)
            TIR_RARE_SET(&k, &k.ops[2], deps[0], 1);
        assert_int_equal(bu_lower(&r, &k, tpb_target_get("trn2"), true), 0);
        act = &bu_block(&r)->insts[bu_find(&r, ISA_OP_ACTIVATION, 0)];
        assert_int_equal(act->isa.sync.wait_en, 1);
        assert_int_equal(act->isa.sync.wait_sem, sched_engine_sem(ISA_ENG_DVE));
        /* without deps only ms_b (1st DVE op) is awaited; with deps ms (2nd) */
        assert_int_equal(act->isa.sync.wait_val, with ? 2 : 1);
        bu_free(&r);
        tir_kernel_free(&k);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_explicit_deps),
        cmocka_unit_test(test_raw_waits),
        cmocka_unit_test(test_multiple_waits_use_nops),
        cmocka_unit_test(test_same_engine_and_implied_waits),
        cmocka_unit_test(test_alloc_liveness_reuse),
        cmocka_unit_test(test_psum_banks),
        cmocka_unit_test(test_dma_war_on_reused_space),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
