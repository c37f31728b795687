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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_fit.h"
#include "alloc_order.h"
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
        op.dst = bu_whole(k, t[i]);
        op.src[0] = bu_in(k, bu_ap(a, (int64_t)4 * i, 2, (int64_t)4, (int64_t)1,
                                     (int64_t)1, (int64_t)4));
        op.nsrc = 1;
        bu_op(k, &op, "ld");
    }
    for (int i = 0; i < n; i++) {
        tir_op_init(&op, TIR_STORE);
        op.dst = bu_in(k, bu_ap(out, (int64_t)4 * i, 2, (int64_t)4, (int64_t)1,
                                (int64_t)1, (int64_t)4));
        op.src[0] = bu_whole(k, t[i]);
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
            op.dst = bu_whole(k, t[ti]);
            op.src[0] = bu_in(k, bu_ap(lcg(&st) & 1 ? a : out, row * cols + col, 2, cols,
                                         (int64_t)1, (int64_t)1, w));
            op.nsrc = 1;
            bu_op(k, &op, "ld");
        } else if (r < 6) {
            tir_op_init(&op, TIR_STORE);
            op.dst = bu_in(k, bu_ap(out, row * cols + col, 2, cols, (int64_t)1, (int64_t)1, w));
            op.src[0] = bu_whole(k, t[ti]);
            op.nsrc = 1;
            bu_op(k, &op, "st");
        } else {
            tir_op_init(&op, TIR_TENSOR_SCALAR);
            op.dst = bu_whole(k, t[ti]), op.src[0] = bu_whole(k, t[ti]), op.nsrc = 1;
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
    if (sched_assign_engines(&r->m, trn2(), &r->err) || sched_assign_queues(&r->m, trn2(), &r->err))
        return -1;
    return sched_synchronise_budget(&r->m, &r->st, budget, &r->err);
}

/* Synchronisation with scan budget `budget` (0: index only; 16: the
 * per-semaphore walk, then the index; INT_MAX - 1: the walk alone) and
 * the plain backward scan (INT_MAX) give the same headers. */
static void expect_budget_matches_scan(const tir_kernel_t *k, int budget, unsigned min_waits)
{
    bu_run_t lin, idx;
    int rc = lower_and_sync(&lin, k, INT_MAX);
    if (rc)
        print_error("%s\n", lin.err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(lower_and_sync(&idx, k, budget), 0);
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

static void expect_index_matches_scan(const tir_kernel_t *k, unsigned min_waits)
{
    expect_budget_matches_scan(k, 0, min_waits);
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

/* The 16 [1,4] tiles of a 256-byte SBUF chunk (and the 16 rows of a
 * 256-byte HBM chunk) have 16-byte chunks of their own (index level 0):
 * a store tests about its one load, not the other loads and stores of
 * its chunk (about 5 tests per instruction with 256-byte chunks). */
static void test_sync_live_tiles_own_chunks(void **state)
{
    (void)state;
    uint64_t small = sync_tests_per_inst(1000), big = sync_tests_per_inst(3000);
    assert_true(small <= 1);
    assert_true(big <= 1);
}

/* Three [1,4] chains on DVE, Activation and Pool (the compile-mix3
 * kernel); with `mixed`, now and then a chain reads its neighbour's tile,
 * a load refills a tile and a store reads one, so an engine's accesses
 * change and repeat in irregular runs. */
static void build_chains3(tir_kernel_t *k, int iters, bool mixed)
{
    tir_kernel_init(k);
    snprintf(k->name, sizeof k->name, "chains3");
    int x = BU_T(k, "x", TIR_T_INPUT, ISA_DT_FP32, 1, 4);
    int o = BU_T(k, "o", TIR_T_OUTPUT, ISA_DT_FP32, 1, 4);
    int t[3];
    for (int i = 0; i < 3; i++) {
        char nm[8];
        snprintf(nm, sizeof nm, "t%d", i);
        t[i] = BU_T(k, nm, TIR_T_SBUF, ISA_DT_FP32, 1, 4);
    }
    const int engines[] = {ISA_ENG_DVE, ISA_ENG_ACT, ISA_ENG_POOL};
    uint32_t st = 12345;
    tir_op_t op;
    for (int i = 0; i < 3; i++) {
        tir_op_init(&op, TIR_LOAD);
        op.dst = bu_whole(k, t[i]), op.src[0] = bu_whole(k, x), op.nsrc = 1;
        bu_op(k, &op, "ld");
    }
    for (int it = 0; it < iters; it++)
        for (int c = 0; c < 3; c++) {
            uint32_t r = mixed ? lcg(&st) % 16 : 99;
            if (r == 0) {
                tir_op_init(&op, TIR_LOAD);
                op.dst = bu_whole(k, t[c]), op.src[0] = bu_whole(k, x), op.nsrc = 1;
                bu_op(k, &op, "ld");
                continue;
            }
            if (r == 1) {
                tir_op_init(&op, TIR_STORE);
                op.dst = bu_whole(k, o), op.src[0] = bu_whole(k, t[c]), op.nsrc = 1;
                bu_op(k, &op, "st");
                continue;
            }
            tir_op_init(&op, TIR_TENSOR_SCALAR);
            op.dst = bu_whole(k, t[c]);
            op.src[0] = bu_whole(k, r < 4 ? t[(c + 1) % 3] : t[c]);
            op.nsrc = 1;
            op.op0 = ISA_ALU_MULTIPLY, op.s0.imm = 0.5;
            op.engine = engines[r == 5 ? (c + 1) % 3 : c];
            bu_op(k, &op, "ts");
        }
}

/* The per-engine memo of the last search answers like the plain scan when
 * accesses repeat, change and come back, with DMAs in between. */
static void test_sync_memo_matches_scan(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_chains3(&k, 700, true);
    expect_index_matches_scan(&k, 200);
    tir_kernel_free(&k);
}

/* Chains that never meet: each instruction repeats its engine's previous
 * accesses, so the memo leaves only the producers filed since to test
 * (two per instruction), where the index tested every other chain's list
 * in the shared chunk. */
static void test_sync_chain_tests_bounded(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_chains3(&k, 3000, false);
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    uint64_t n = (uint64_t)bu_block(&r)->ninsts;
    assert_true(n > 9000);
    assert_true(r.st.sync_tests <= 3 * n);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* The per-semaphore walk (alone, and handing over to the index after the
 * default budget) finds exactly the backward scan's waits: random HBM
 * rows, chains whose accesses change and repeat, many live tiles. */
static void test_sync_walk_matches_scan(void **state)
{
    (void)state;
    const int budgets[] = {1, 16, INT_MAX - 1};
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
        for (uint32_t seed = 1; seed <= 6; seed++) {
            tir_kernel_t k;
            build_random_hbm(&k, seed, 300);
            expect_budget_matches_scan(&k, budgets[i], 20);
            tir_kernel_free(&k);
        }
        tir_kernel_t k;
        build_chains3(&k, 500, true);
        expect_budget_matches_scan(&k, budgets[i], 200);
        tir_kernel_free(&k);
        build_live(&k, 300);
        expect_budget_matches_scan(&k, budgets[i], 300);
        tir_kernel_free(&k);
    }
}

/* The compile-mixed body on explicit buffers: a load, a chain through
 * DVE, Activation and Pool, a store, each iteration on the other of two
 * tile sets (the rotation the allocator gives tiles declared in a loop),
 * with the DMAs spread over the queues. */
static void build_rotating(tir_kernel_t *k, int iters)
{
    tir_kernel_init(k);
    snprintf(k->name, sizeof k->name, "rotating");
    int a = BU_T(k, "a", TIR_T_INPUT, ISA_DT_FP32, 2, 4);
    int out = BU_T(k, "out", TIR_T_OUTPUT, ISA_DT_FP32, 2, 4);
    int t[2][4];
    for (int s = 0; s < 2; s++)
        for (int j = 0; j < 4; j++) {
            char nm[8];
            snprintf(nm, sizeof nm, "t%d%d", s, j);
            t[s][j] = BU_T(k, nm, TIR_T_SBUF, ISA_DT_FP32, 1, 4);
        }
    const int engines[] = {ISA_ENG_DVE, ISA_ENG_ACT, ISA_ENG_POOL};
    tir_op_t op;
    for (int i = 0; i < iters; i++) {
        int s = i % 2;
        tir_op_init(&op, TIR_LOAD);
        op.dst = bu_whole(k, t[s][0]);
        op.src[0] = bu_in(k, bu_ap(a, (int64_t)4 * s, 2, (int64_t)4, (int64_t)1, (int64_t)1,
                                   (int64_t)4));
        op.nsrc = 1;
        bu_op(k, &op, "ld");
        for (int j = 0; j < 3; j++) {
            tir_op_init(&op, TIR_TENSOR_SCALAR);
            op.dst = bu_whole(k, t[s][j + 1]), op.src[0] = bu_whole(k, t[s][j]), op.nsrc = 1;
            op.op0 = ISA_ALU_MULTIPLY, op.s0.imm = 0.5;
            op.engine = engines[j];
            bu_op(k, &op, "ts");
        }
        tir_op_init(&op, TIR_STORE);
        op.dst = bu_in(k, bu_ap(out, (int64_t)4 * s, 2, (int64_t)4, (int64_t)1, (int64_t)1,
                                (int64_t)4));
        op.src[0] = bu_whole(k, t[s][3]);
        op.nsrc = 1;
        /* issued by SP, beside the loads (a store's default issuer is
         * Pool, which this body also computes on) */
        op.engine = ISA_ENG_SP;
        bu_op(k, &op, "st");
    }
}

/* The waits of the short backward scan (search_picks, the default; with
 * a budget of 1 it hands over to the walk after a wait or two) are the
 * plain scan's on the rotating body, and it tests fewer producers per
 * instruction than the per-semaphore walk, which tests one per open
 * semaphore where about one wait implies the rest. */
static void test_sync_picks_match_scan(void **state)
{
    (void)state;
    const int budgets[] = {1, 16, INT_MAX - 1};
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
        tir_kernel_t k;
        build_rotating(&k, 400);
        expect_budget_matches_scan(&k, budgets[i], 400);
        tir_kernel_free(&k);
    }
    tir_kernel_t k;
    build_rotating(&k, 2000);
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    uint64_t n = (uint64_t)bu_block(&r)->ninsts;
    assert_true(r.st.sync_tests <= 2 * n);   /* 1.6 per instruction; the walk: 3.1 */
    bu_free(&r);
    tir_kernel_free(&k);
}

/* ------------------------------------------------ allocator free runs */

/* The lowest g with [g, g + need) free, by looking at every start. */
static int brute_first(const bool *used, int n, int need)
{
    for (int g = 0;; g++) {
        int k = 0;
        while (k < need && g + k < n && !used[g + k])
            k++;
        if (k == need || g + k >= n)
            return g;
    }
}

/* Random runs marked used and freed (overlapping, clipped at both ends):
 * every query answers what a scan of a plain bitmap answers. */
static void test_fit_runs_matches_bitmap(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= 8; seed++) {
        uint32_t st = seed * 40503u;
        int n = 1 + (int)(lcg(&st) % 300);
        bool *used = calloc((size_t)n, sizeof *used);
        assert_non_null(used);
        fit_runs_t fr;
        assert_int_equal(fit_runs_init(&fr, n), 0);
        for (int step = 0; step < 3000; step++) {
            int lo = (int)(lcg(&st) % (uint32_t)(n + 4)) - 2;
            int hi = lo + (int)(lcg(&st) % (lcg(&st) % 4 ? 8u : (uint32_t)n + 2));
            bool u = lcg(&st) % 3 != 0;
            fit_runs_set(&fr, lo, hi, u);
            for (int g = lo < 0 ? 0 : lo; g < hi && g < n; g++)
                used[g] = u;
            int need = (int)(lcg(&st) % (lcg(&st) % 2 ? 6u : (uint32_t)n + 3));
            assert_int_equal(fit_runs_first(&fr, need), need ? brute_first(used, n, need) : 0);
        }
        fit_runs_free(&fr);
        free(used);
    }
}

/* fit_runs_set enters only the children a range overlaps: one granule is
 * one node per level (the tree has ceil(log2 n) + 1 levels), a range at
 * most four per level, plus (at most) a range's for moving the top run
 * into the tree; the runs stay what a bitmap says. */
static void test_fit_runs_set_visits_path(void **state)
{
    (void)state;
    enum { N = 3584 };   /* trn2's SBUF partition in 64-byte granules */
    int levels = 1;
    while ((1 << (levels - 1)) < N)
        levels++;
    fit_runs_t fr;
    assert_int_equal(fit_runs_init(&fr, N), 0);
    uint32_t st = 99;
    for (int i = 0; i < 2000; i++) {
        int g = (int)(lcg(&st) % N);
        long before = fr.visits;
        fit_runs_set(&fr, g, g + 1, lcg(&st) % 2);
        assert_true(fr.visits - before <= 5 * levels);
        int lo = (int)(lcg(&st) % N), hi = lo + 1 + (int)(lcg(&st) % 700);
        before = fr.visits;
        fit_runs_set(&fr, lo, hi, lcg(&st) % 2);
        assert_true(fr.visits - before <= 8 * levels);
    }
    fit_runs_set(&fr, 0, N, false);
    assert_int_equal(fit_runs_first(&fr, N), 0);
    fit_runs_set(&fr, 100, 101, true);
    assert_int_equal(fit_runs_first(&fr, 100), 0);
    assert_int_equal(fit_runs_first(&fr, 101), 101);
    fit_runs_free(&fr);
}

/* Tiles placed one above another (all live: the first fit is always the
 * top) touch no tree node; frees and refills in stack order, in the
 * middle of the stacked run and below it still answer what a bitmap
 * says. */
static void test_fit_runs_stacked_no_visits(void **state)
{
    (void)state;
    enum { N = 3584 };
    fit_runs_t fr;
    assert_int_equal(fit_runs_init(&fr, N), 0);
    bool *used = calloc(N, sizeof *used);
    assert_non_null(used);
    for (int i = 0; i < 1000; i++) {
        int need = 1 + i % 3, g = fit_runs_first(&fr, need);
        assert_int_equal(g, brute_first(used, N, need));
        assert_int_equal(fit_runs_set(&fr, g, g + need, true), 0);
        for (int x = g; x < g + need; x++)
            used[x] = true;
    }
    assert_int_equal(fr.visits, 0);
    assert_null(fr.t);   /* the top run alone: the tree never made */
    /* a free at the top stays in the run; a hole below it makes the tree */
    int top = 0;
    while (top < N && used[top])
        top++;
    assert_int_equal(fit_runs_set(&fr, top - 1, top, false), 0);
    used[top - 1] = false;
    assert_null(fr.t);
    assert_int_equal(fit_runs_set(&fr, 10, 12, false), 0);
    used[10] = used[11] = false;
    assert_non_null(fr.t);
    assert_int_equal(fit_runs_first(&fr, 2), 10);
    uint32_t st = 7;
    for (int step = 0; step < 4000; step++) {
        int top = N;
        while (top > 0 && !used[top - 1])
            top--;
        int lo, hi;
        bool u = lcg(&st) % 2;
        if (lcg(&st) % 2) {   /* at the top: the stack's own traffic */
            lo = u ? top : top - 1 - (int)(lcg(&st) % 4);
            hi = u ? top + 1 + (int)(lcg(&st) % 3) : top;
        } else {              /* anywhere below it */
            lo = top ? (int)(lcg(&st) % (uint32_t)top) : 0;
            hi = lo + 1 + (int)(lcg(&st) % 5);
        }
        fit_runs_set(&fr, lo, hi, u);
        for (int x = lo < 0 ? 0 : lo; x < hi && x < N; x++)
            used[x] = u;
        int need = 1 + (int)(lcg(&st) % 6);
        assert_int_equal(fit_runs_first(&fr, need), brute_first(used, N, need));
    }
    fit_runs_free(&fr);
    free(used);
}

/* enc_group_by_str: distinct strings (the paths of a flat body's tiles)
 * are not sorted, perm stays the identity and the count is n; with one
 * string repeated it is enc_stable_order_by_str's order and the count of
 * distinct strings. */
static void test_group_by_str_distinct(void **state)
{
    (void)state;
    const char *s[] = {"body[9]", "body[10]", "body[1]", "body[2]", "a"};
    int perm[5], ref[5], scratch[5];
    assert_int_equal(enc_group_by_str(s, 5, perm, NULL), 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(perm[i], i);
    const char *r[] = {"body[9]", "body[10]", "body[9]", "body[2]", "a"};
    assert_int_equal(enc_group_by_str(r, 5, perm, scratch), 4);
    assert_int_equal(enc_stable_order_by_str(r, 5, ref), 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(perm[i], ref[i]);
    assert_int_equal(perm[0], 4);   /* "a" first, the two "body[9]" last */
    assert_int_equal(perm[3], 0);
    assert_int_equal(perm[4], 2);
    assert_int_equal(enc_group_by_str(r, 0, perm, NULL), 0);
}

/* The interner's growth (alloc_order.c interner_grow): thousands of new
 * strings take the larger steps, a run of new strings that then repeat
 * (copies at other addresses: no pointer memo) keeps them apart; the
 * counts and the order are those of the plain stable sort either way. */
static void test_group_by_str_growth(void **state)
{
    (void)state;
    enum { N = 3000, NEW = 100 };
    static char buf[N][16];
    static const char *s[N];
    static int perm[N], ref[N];
    for (int i = 0; i < N; i++) {
        snprintf(buf[i], sizeof buf[i], "body[%d]", i);
        s[i] = buf[i];
    }
    assert_int_equal(enc_group_by_str(s, N, perm, NULL), N);
    for (int i = 0; i < N; i++)
        assert_int_equal(perm[i], i);
    for (int i = NEW; i < N; i++)   /* NEW paths, then each again in turn */
        snprintf(buf[i], sizeof buf[i], "body[%d]", (i * 7) % NEW);
    assert_int_equal(enc_group_by_str(s, N, perm, NULL), NEW);
    assert_int_equal(enc_stable_order_by_str(s, N, ref), 0);
    for (int i = 0; i < N; i++)
        assert_int_equal(perm[i], ref[i]);
    for (int i = 1; i < N; i++)
        assert_true(strcmp(s[perm[i - 1]], s[perm[i]]) <= 0);
}

static int cmp_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

/* enc_sort_unless_sorted sorts what is out of order, and leaves what is in
 * order (equal neighbours included) without sorting. */
static void test_sort_unless_sorted(void **state)
{
    (void)state;
    int in_order[] = {1, 2, 2, 5, 9};
    assert_false(enc_sort_unless_sorted(in_order, 5, sizeof *in_order, cmp_int, NULL));
    int one[] = {3};
    assert_false(enc_sort_unless_sorted(one, 1, sizeof *one, cmp_int, NULL));
    assert_false(enc_sort_unless_sorted(NULL, 0, sizeof *one, cmp_int, NULL));
    uint32_t st = 5;
    for (int t = 0; t < 50; t++) {
        int v[40], w[40];
        for (int i = 0; i < 40; i++)
            v[i] = w[i] = (int)(lcg(&st) % 30);
        qsort(w, 40, sizeof *w, cmp_int);
        bool was_sorted = !memcmp(v, w, sizeof v);
        assert_int_equal(enc_sort_unless_sorted(v, 40, sizeof *v, cmp_int, NULL), !was_sorted);
        assert_memory_equal(v, w, sizeof v);
    }
}

/* enc_sort_by_u64 orders by key and keeps equal keys in their order:
 * against an insertion sort on random elements whose keys repeat and span
 * from a few bits to all 64 (one radix pass to six); and
 * enc_sort_unless_sorted with keys gives its comparator's order. */
typedef struct {
    uint64_t key;
    int orig;
    char pad[5];   /* an element size that is not a word */
} keyed_t;

static int cmp_keyed(const void *x, const void *y)
{
    const keyed_t *a = x, *b = y;
    return (a->key > b->key) - (a->key < b->key);
}

static bool keyed_key(uint64_t *key, const void *x)
{
    *key = ((const keyed_t *)x)->key;
    return true;
}

static void test_sort_by_u64_stable(void **state)
{
    (void)state;
    uint32_t st = 11;
    for (int t = 0; t < 200; t++) {
        int n = 1 + (int)(lcg(&st) % 300), bits = 1 + (int)(lcg(&st) % 64);
        keyed_t v[300], w[300];
        uint64_t keys[300];
        for (int i = 0; i < n; i++) {
            uint64_t k = (uint64_t)lcg(&st) << 40 ^ (uint64_t)lcg(&st) << 20 ^ lcg(&st);
            if (t % 3 == 0)
                k %= 7;   /* many equal keys */
            v[i].key = bits == 64 ? k : k & ((1ull << bits) - 1);
            v[i].orig = i;
            memset(v[i].pad, i & 0xff, sizeof v[i].pad);
            keys[i] = v[i].key;
        }
        memcpy(w, v, sizeof v);
        for (int i = 1; i < n; i++)   /* stable insertion sort */
            for (int j = i; j > 0 && w[j - 1].key > w[j].key; j--) {
                keyed_t x = w[j];
                w[j] = w[j - 1];
                w[j - 1] = x;
            }
        assert_int_equal(enc_sort_by_u64(v, (size_t)n, sizeof *v, keys), 0);
        assert_memory_equal(v, w, (size_t)n * sizeof *v);
        for (int i = 0; i < n; i++)
            assert_true(keys[i] == w[i].key);
        /* unique keys (a total order), reversed, through the
         * comparator's entry: qsort's order */
        for (int i = 0; i < n; i++)
            w[i].key = (w[i].key & ((1ull << 40) - 1)) << 20 | (uint64_t)w[i].orig;
        qsort(w, (size_t)n, sizeof *w, cmp_keyed);
        for (int i = 0; i < n; i++)
            v[i] = w[n - 1 - i];
        assert_int_equal(enc_sort_unless_sorted(v, (size_t)n, sizeof *v, cmp_keyed, keyed_key), n > 1);
        assert_memory_equal(v, w, (size_t)n * sizeof *v);
        /* a sorted run with equal keys, then elements appended out of
         * order (the allocator's common case): the same as a stable sort
         * of the whole, run elements first among equals */
        int run = n / 2 + (int)(lcg(&st) % (uint32_t)(n / 2 + 1));
        for (int i = 0; i < n; i++) {
            v[i].key = i < run ? (uint64_t)i / 3 : lcg(&st) % (uint64_t)(n / 3 + 2);
            v[i].orig = i;
        }
        memcpy(w, v, (size_t)n * sizeof *v);
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0 && w[j - 1].key > w[j].key; j--) {
                keyed_t x = w[j];
                w[j] = w[j - 1];
                w[j - 1] = x;
            }
        enc_sort_unless_sorted(v, (size_t)n, sizeof *v, cmp_keyed, t % 2 ? keyed_key : NULL);
        assert_memory_equal(v, w, (size_t)n * sizeof *v);
    }
}

/* Hundreds of SBUF tiles of random widths live at once, with staggered
 * live ranges: every address is the lowest 64-byte multiple that overlaps
 * no earlier-placed tile whose live range overlaps (checked address by
 * address against the placed tiles, an oracle independent of both the
 * sweep and the free-run tree). */
static void test_alloc_many_live_lowest_address(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= 4; seed++) {
        uint32_t st = seed * 7919u;
        tir_kernel_t k;
        tir_kernel_init(&k);
        enum { NT = 600 };
        int *tiles = malloc(NT * sizeof *tiles);
        assert_non_null(tiles);
        for (int i = 0; i < NT; i++) {
            char nm[16];
            snprintf(nm, sizeof nm, "t%d", i);
            int64_t w = lcg(&st) % 8 ? 1 + lcg(&st) % 40 : 1 + lcg(&st) % 600;
            tiles[i] = BU_T(&k, nm, TIR_T_SBUF, ISA_DT_FP32, 1, w);
        }
        /* op o first uses tile o and touches an earlier one again (up to
         * 40 or 400 ops back): live ranges of random length */
        for (int o = 0; o < NT + 400; o++) {
            tir_op_t op;
            tir_op_init(&op, TIR_MEMSET);
            int cur = o < NT ? o : NT - 1;
            int back = (int)(lcg(&st) % (lcg(&st) % 4 ? 40u : 400u));
            op.dst = bu_whole(&k, tiles[cur]);
            op.dst2 = bu_whole(&k, tiles[cur - back < 0 ? 0 : cur - back]);
            bu_op(&k, &op, "touch");
        }
        bir_module_t m;
        tpb_err_t err;
        assert_int_equal(bir_module_init(&m, 0, k.ntensors, &err), 0);
        enc_stats_t es;
        memset(&es, 0, sizeof es);
        int rc = alloc_kernel(&k, trn2(), NULL, &m, &es, &err);
        if (rc)
            print_error("seed %u: %s\n", seed, err.msg);
        assert_int_equal(rc, 0);
        int maxlive = 0;
        for (int i = 0; i < NT; i++) {   /* tiles come in first-use order */
            const bir_mloc_t *r = &m.mlocs[tiles[i]];
            int live = 0;
            uint64_t a = 0;
            for (bool moved = true; moved;) {
                moved = false;
                live = 0;
                for (int j = 0; j < i; j++) {
                    const bir_mloc_t *p = &m.mlocs[tiles[j]];
                    if (p->last_use < r->first_use)
                        continue;
                    live++;
                    if (p->addr < a + r->bytes && a < p->addr + p->bytes)
                        a += 64, moved = true;
                }
            }
            maxlive = live > maxlive ? live : maxlive;
            assert_int_equal(r->addr, a);
        }
        assert_true(maxlive > 100);
        bir_module_free(&m);
        tir_kernel_free(&k);
        free(tiles);
    }
}

/* sched_assign (engines and queues in one walk) against the two passes
 * on kernel k for target t, instruction `bad` (>= 0) made fit no engine:
 * the same result, and the same engines, queues and semaphores, or the
 * same error. */
static void expect_assign_matches_passes(const tir_kernel_t *k, const tpb_target_t *t, int bad,
                                         int want_rc)
{
    bu_run_t two, one;
    assert_int_equal(bu_lower(&two, k, trn2(), false), 0);
    assert_int_equal(bu_lower(&one, k, trn2(), false), 0);
    bir_block_t *a = bu_block(&two), *b = bu_block(&one);
    assert_true(bad < a->ninsts);
    if (bad >= 0)
        a->insts[bad].engines = b->insts[bad].engines = 0;
    int rc2 = sched_assign_engines(&two.m, t, &two.err) || sched_assign_queues(&two.m, t, &two.err);
    int rc1 = sched_assign(&one.m, t, NULL, 0, 0, &one.err) ? 1 : 0;
    assert_int_equal(rc2, want_rc);
    assert_int_equal(rc1, want_rc);
    if (rc1) {
        assert_string_equal(two.err.msg, one.err.msg);
    } else {
        assert_int_equal(two.m.nsems, one.m.nsems);
        assert_int_equal(two.m.nqueues, one.m.nqueues);
        for (int q = 0; q < one.m.nqueues; q++)
            assert_string_equal(two.m.queues[q].name, one.m.queues[q].name);
        for (int i = 0; i < a->ninsts; i++) {
            assert_int_equal(a->insts[i].engine, b->insts[i].engine);
            assert_int_equal(a->insts[i].queue, b->insts[i].queue);
            if (b->insts[i].isa.op == ISA_OP_DMA_TRIGGER)
                assert_int_equal(a->insts[i].isa.f->DTRIG.queue, b->insts[i].isa.f->DTRIG.queue);
        }
    }
    bu_free(&two);
    bu_free(&one);
}

static void test_assign_one_walk_matches_passes(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_random_hbm(&k, 7, 300);
    tpb_target_t few = *trn2();
    few.dma_queues = 2;   /* SP's third ring has no queue: "out of DMA queues" */
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), false), 0);
    int n = bu_block(&r)->ninsts;
    bu_free(&r);
    expect_assign_matches_passes(&k, trn2(), -1, 0);
    expect_assign_matches_passes(&k, &few, -1, 1);
    expect_assign_matches_passes(&k, &few, n - 1, 1);   /* the engine's error, found later */
    expect_assign_matches_passes(&k, trn2(), n / 2, 1);
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sync_live_index_matches_scan),
        cmocka_unit_test(test_sync_hbm_levels_match_scan),
        cmocka_unit_test(test_sync_live_tests_bounded),
        cmocka_unit_test(test_sync_live_tiles_own_chunks),
        cmocka_unit_test(test_sync_memo_matches_scan),
        cmocka_unit_test(test_sync_chain_tests_bounded),
        cmocka_unit_test(test_sync_walk_matches_scan),
        cmocka_unit_test(test_sync_picks_match_scan),
        cmocka_unit_test(test_fit_runs_matches_bitmap),
        cmocka_unit_test(test_fit_runs_set_visits_path),
        cmocka_unit_test(test_fit_runs_stacked_no_visits),
        cmocka_unit_test(test_group_by_str_distinct),
        cmocka_unit_test(test_group_by_str_growth),
        cmocka_unit_test(test_sort_unless_sorted),
        cmocka_unit_test(test_sort_by_u64_stable),
        cmocka_unit_test(test_alloc_many_live_lowest_address),
        cmocka_unit_test(test_assign_one_walk_matches_passes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
