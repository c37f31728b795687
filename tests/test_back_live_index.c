/* Many tiles live at once (issue #16, compile-live): the synchroniser's
 * two-level HBM index and the allocator's placement index must give
 * exactly the answers of the plain scans they shortcut, and their work
 * per instruction / per tile must not grow with the number of live tiles
 * (counted, not timed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>
#include <stdlib.h>

#include "back_util.h"

static const tpb_target_t *trn2(void) { return tpb_target_get("trn2"); }

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* The compile-live kernel: n [1,4] tiles, each loaded from its own row of
 * a, then all stored to their rows of out. */
static void build_live(tir_kernel_t *k, int n)
{
    tir_kernel_init(k);
    snprintf(k->name, sizeof k->name, "live");
    int a = BU_T(k, "a", TIR_T_INPUT, ISA_DT_FP32, n, 4);
    int out = BU_T(k, "out", TIR_T_OUTPUT, ISA_DT_FP32, n, 4);
    int *t = malloc((size_t)n * sizeof *t);
    assert_non_null(t);
    for (int i = 0; i < n; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "t%d", i);
        t[i] = BU_T(k, nm, TIR_T_SBUF, ISA_DT_FP32, 1, 4);
    }
    tir_op_t op;
    for (int i = 0; i < n; i++) {
        tir_op_init(&op, TIR_LOAD);
        op.dst = bu_full(k, t[i]);
        op.src[0] = bu_ap(a, (int64_t)4 * i, 2, (int64_t)4, (int64_t)1, (int64_t)1, (int64_t)4);
        op.nsrc = 1;
        bu_op(k, &op, "ld");
    }
    for (int i = 0; i < n; i++) {
        tir_op_init(&op, TIR_STORE);
        op.dst = bu_ap(out, (int64_t)4 * i, 2, (int64_t)4, (int64_t)1, (int64_t)1, (int64_t)4);
        op.src[0] = bu_full(k, t[i]);
        op.nsrc = 1;
        bu_op(k, &op, "st");
    }
    free(t);
}

/* Loads and stores of random widths (16 B to 32 KiB, so HBM accesses on
 * both sides of the fine/coarse split and across 64 KiB chunks) at random
 * offsets of two HBM tensors, with DVE/Pool/Act work on the tiles. */
static void build_random_hbm(tir_kernel_t *k, uint32_t seed, int nops)
{
    tir_kernel_init(k);
    snprintf(k->name, sizeof k->name, "hbm_mix");
    const int64_t cols = 1 << 16;   /* 256 KiB per row */
    int a = BU_T(k, "a", TIR_T_INPUT, ISA_DT_FP32, 4, cols);
    int out = BU_T(k, "out", TIR_T_OUTPUT, ISA_DT_FP32, 4, cols);
    static const int64_t widths[] = {4, 16, 64, 256, 1024, 1088, 4096, 8192};
    int t[8];
    for (int i = 0; i < 8; i++) {
        char nm[8];
        snprintf(nm, sizeof nm, "t%d", i);
        t[i] = BU_T(k, nm, TIR_T_SBUF, ISA_DT_FP32, 1, widths[i]);
    }
    const int engines[] = {ISA_ENG_DVE, ISA_ENG_ACT, ISA_ENG_POOL};
    uint32_t st = seed * 2654435761u;
    tir_op_t op;
    for (int i = 0; i < nops; i++) {
        int ti = (int)(lcg(&st) % 8);
        int64_t w = widths[ti];
        int64_t row = (int64_t)(lcg(&st) % 4), col = (int64_t)(lcg(&st) % (uint32_t)(cols - w + 1));
        uint32_t r = lcg(&st) % 8;
        if (r < 3) {
            tir_op_init(&op, TIR_LOAD);
            op.dst = bu_full(k, t[ti]);
            op.src[0] = bu_ap(lcg(&st) & 1 ? a : out, row * cols + col, 2, cols, (int64_t)1,
                              (int64_t)1, w);
            op.nsrc = 1;
            bu_op(k, &op, "ld");
        } else if (r < 6) {
            tir_op_init(&op, TIR_STORE);
            op.dst = bu_ap(out, row * cols + col, 2, cols, (int64_t)1, (int64_t)1, w);
            op.src[0] = bu_full(k, t[ti]);
            op.nsrc = 1;
            bu_op(k, &op, "st");
        } else {
            tir_op_init(&op, TIR_TENSOR_SCALAR);
            op.dst = bu_full(k, t[ti]), op.src[0] = bu_full(k, t[ti]), op.nsrc = 1;
            op.op0 = ISA_ALU_ADD, op.s0.imm = 1.0;
            op.engine = engines[lcg(&st) % 3];
            bu_op(k, &op, "ts");
        }
    }
}

static int lower_and_sync(bu_run_t *r, const tir_kernel_t *k, int budget)
{
    if (bu_lower(r, k, trn2(), false))
        return -1;
    if (sched_assign_engines(&r->m, &r->err) || sched_assign_queues(&r->m, trn2(), &r->err))
        return -1;
    return sched_synchronise_budget(&r->m, &r->st, budget, &r->err);
}

/* Index-only and scan-only synchronisation give the same headers. */
static void expect_index_matches_scan(const tir_kernel_t *k, unsigned min_waits)
{
    bu_run_t lin, idx;
    int rc = lower_and_sync(&lin, k, INT_MAX);
    if (rc)
        print_error("%s\n", lin.err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(lower_and_sync(&idx, k, 0), 0);
    bir_block_t *a = bu_block(&lin), *b = bu_block(&idx);
    assert_int_equal(a->ninsts, b->ninsts);
    assert_true(lin.st.waits >= min_waits);
    assert_int_equal(lin.st.waits, idx.st.waits);
    assert_int_equal(lin.st.nops, idx.st.nops);
    for (int i = 0; i < a->ninsts; i++) {
        assert_string_equal(a->insts[i].name, b->insts[i].name);
        assert_memory_equal(&a->insts[i].isa.sync, &b->insts[i].isa.sync,
                            sizeof a->insts[i].isa.sync);
    }
    bu_free(&lin);
    bu_free(&idx);
}

static void test_sync_live_index_matches_scan(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_live(&k, 600);
    expect_index_matches_scan(&k, 600);
    tir_kernel_free(&k);
}

static void test_sync_hbm_levels_match_scan(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= 10; seed++) {
        tir_kernel_t k;
        build_random_hbm(&k, seed, 300);
        expect_index_matches_scan(&k, 20);
        tir_kernel_free(&k);
    }
}

/* A store of row i overlaps only the load of row i, though all rows share
 * one 64 KiB HBM chunk: the overlap tests per instruction stay bounded as
 * the live tiles double (they grew with n before the fine HBM level). */
static uint64_t sync_tests_per_inst(int n)
{
    tir_kernel_t k;
    build_live(&k, n);
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    uint64_t per = r.st.sync_tests / (uint64_t)bu_block(&r)->ninsts;
    bu_free(&r);
    tir_kernel_free(&k);
    return per;
}

static void test_sync_live_tests_bounded(void **state)
{
    (void)state;
    uint64_t small = sync_tests_per_inst(1000), big = sync_tests_per_inst(3000);
    assert_true(big <= small + 2);
    assert_true(big < 40);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sync_live_index_matches_scan),
        cmocka_unit_test(test_sync_hbm_levels_match_scan),
        cmocka_unit_test(test_sync_live_tests_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
