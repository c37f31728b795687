/* Rotating buffers (encoder/alloc.c, docs/compiler.md worked example) and
 * DMA queue spreading (encoder/schedule.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "back_util.h"

static const tpb_target_t *trn2(void) { return tpb_target_get("trn2"); }

/* A loop of n iterations, each declaring tile "t" (same declaration path,
 * as the front-end gives every iteration's instance) of `elems` fp32 per
 * partition: load t from a, store t to out. */
static void build_loop(tir_kernel_t *k, int n, int64_t elems, int *inst)
{
    tir_kernel_init(k);
    int a = BU_T(k, "a", TIR_T_INPUT, ISA_DT_FP32, 128, elems);
    int out = BU_T(k, "out", TIR_T_OUTPUT, ISA_DT_FP32, 128, elems);
    for (int i = 0; i < n; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, i ? "t#%d" : "t", i);
        inst[i] = BU_T(k, nm, TIR_T_SBUF, ISA_DT_FP32, 128, elems);
        k->tensors[inst[i]].path = "body[0].body[0]";   /* a literal outlives k */
        tir_op_t op;
        tir_op_init(&op, TIR_LOAD);
        op.dst = bu_whole(k, inst[i]), op.src[0] = bu_whole(k, a), op.nsrc = 1;
        bu_op(k, &op, "ld");
        tir_op_init(&op, TIR_STORE);
        op.dst = bu_whole(k, out), op.src[0] = bu_whole(k, inst[i]), op.nsrc = 1;
        bu_op(k, &op, "st");
    }
}

/* Allocate k with at most `buffers` rotating buffers and the rolling
 * candidates cand (NULL: none). */
static int lower_cand(bu_run_t *r, const tir_kernel_t *k, int buffers, const unsigned char *cand)
{
    memset(r, 0, sizeof *r);
    if (enc_hbm_layout(k, &r->hbm, &r->err) || bir_module_init(&r->m, 0, k->ntensors, &r->err))
        return -1;
    return alloc_kernel_loops(k, trn2(), &r->hbm, &r->m, &r->st, buffers, cand, &r->err);
}

static int lower_buffers(bu_run_t *r, const tir_kernel_t *k, int buffers)
{
    return lower_cand(r, k, buffers, NULL);
}

/* Instance i of t[0..n) sits at (i mod period) x bytes. */
static void expect_modulo(const bu_run_t *r, const int *t, int n, int period, uint64_t bytes)
{
    for (int i = 0; i < n; i++)
        assert_int_equal(r->m.mlocs[t[i]].addr, (uint64_t)(i % period) * bytes);
}

/* 6 iterations of a 2 KiB tile: 4 buffers (trn2 sbuf_max_buffers) at
 * 0, 2048, 4096, 6144, then iteration 4 reuses iteration 0's, 5 reuses 1's. */
static void test_rotation_addresses(void **state)
{
    (void)state;
    tir_kernel_t k;
    int t[6];
    build_loop(&k, 6, 512, t);
    bu_run_t r;
    assert_int_equal(lower_buffers(&r, &k, 0), 0);
    uint64_t want[6] = { 0, 2048, 4096, 6144, 0, 2048 };
    for (int i = 0; i < 6; i++)
        assert_int_equal(r.m.mlocs[t[i]].addr, want[i]);
    assert_int_equal(r.st.sbuf_buffers, 4);
    assert_int_equal(r.st.sbuf_peak, 8192);
    assert_int_equal(r.m.nscratch, 0);   /* no op needs a scratch partial */
    /* live ranges are the real ones again after placement */
    assert_int_equal(r.m.mlocs[t[0]].last_use, 1);
    bu_free(&r);
    /* --buffers 2: two buffers alternate */
    assert_int_equal(lower_buffers(&r, &k, 2), 0);
    expect_modulo(&r, t, 6, 2, 2048);
    bu_free(&r);
    /* --buffers 1: plain first fit, every instance at 0 */
    assert_int_equal(lower_buffers(&r, &k, 1), 0);
    expect_modulo(&r, t, 6, 1, 2048);
    assert_int_equal(r.st.sbuf_buffers, 1);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* 100 KiB tiles: 4 (or 3) buffers do not fit 224 KiB, 2 do. */
static void test_rotation_shrinks_to_fit(void **state)
{
    (void)state;
    tir_kernel_t k;
    int t[5];
    build_loop(&k, 5, 25600, t);
    bu_run_t r;
    assert_int_equal(lower_buffers(&r, &k, 0), 0);
    assert_int_equal(r.st.sbuf_buffers, 2);
    expect_modulo(&r, t, 5, 2, 102400);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* Modulo placement and the period rule (docs/compiler.md "Rotating
 * buffers"): an outer loop of 4 iterations, each running 3 instances of
 * tile t (2 KiB).  Instance j sits in buffer j mod N: N = 4 (the trn2
 * maximum) when nothing rolls; when the outer loop is a rolling candidate
 * N must divide its 3 instances per iteration, so N = 3 and every outer
 * iteration sees the same three addresses. */
static void test_rotation_modulo_period(void **state)
{
    (void)state;
    tir_kernel_t k;
    int t[12];
    build_loop(&k, 12, 512, t);
    tir_loop_t l = {.path = "body[0]", .roll = -1, .parent = -1, .trips = 4};
    int li = tir_add_loop(&k, &l);
    assert_true(li >= 0);
    for (int i = 0; i <= 4; i++)
        k.loop_marks[k.loops[li].first + i] = 6 * i;   /* 3 instances x (load, store) */
    bu_run_t r;
    assert_int_equal(lower_buffers(&r, &k, 0), 0);
    expect_modulo(&r, t, 12, 4, 2048);
    assert_int_equal(r.st.sbuf_buffers, 4);
    bu_free(&r);
    unsigned char cand[1] = {1};
    assert_int_equal(lower_cand(&r, &k, 0, cand), 0);
    expect_modulo(&r, t, 12, 3, 2048);
    for (int i = 0; i < 12; i++)
        assert_int_equal(r.m.mlocs[t[i]].rot_buf, (unsigned)(i % 3));
    assert_int_equal(r.st.sbuf_buffers, 3);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* A group whose instances stay live past the next ones (each is stored
 * again after the loop) cannot share buffers modulo N: it is placed as
 * single tiles, every instance at its own address. */
static void test_rotation_modulo_fallback(void **state)
{
    (void)state;
    tir_kernel_t k;
    int t[6];
    build_loop(&k, 6, 512, t);
    int out = 1;   /* build_loop's second tensor */
    for (int i = 0; i < 6; i++) {
        tir_op_t op;
        tir_op_init(&op, TIR_STORE);
        op.dst = bu_whole(&k, out), op.src[0] = bu_whole(&k, t[i]), op.nsrc = 1;
        bu_op(&k, &op, "st_again");
    }
    bu_run_t r;
    assert_int_equal(lower_buffers(&r, &k, 0), 0);
    expect_modulo(&r, t, 6, 6, 2048);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* Instances of tile `name` (declaration path `path`, a literal) loaded
 * from `a` and stored to `out`, one after another; their ids in inst. */
static void add_instances(tir_kernel_t *k, const char *name, const char *path, int n, int *inst)
{
    for (int i = 0; i < n; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, i ? "%s#%d" : "%s", name, i);
        inst[i] = BU_T(k, nm, TIR_T_SBUF, ISA_DT_FP32, 128, 512);
        k->tensors[inst[i]].path = path;
        tir_op_t op;
        tir_op_init(&op, TIR_LOAD);
        op.dst = bu_whole(k, inst[i]), op.src[0] = bu_whole(k, 0), op.nsrc = 1;
        bu_op(k, &op, "ld");
        tir_op_init(&op, TIR_STORE);
        op.dst = bu_whole(k, 1), op.src[0] = bu_whole(k, inst[i]), op.nsrc = 1;
        bu_op(k, &op, "st");
    }
}

/* A tile declared once whose path sorts between two rotation groups' paths
 * (t, then s, then u) is no member of either: t's two buffers end with
 * t#1, so s, placed after them, takes the lowest free address (0), and u
 * rotates over two buffers of its own. */
static void test_rotation_single_between_groups(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    BU_T(&k, "a", TIR_T_INPUT, ISA_DT_FP32, 128, 512);
    BU_T(&k, "out", TIR_T_OUTPUT, ISA_DT_FP32, 128, 512);
    int t[2], s, u[2];
    add_instances(&k, "t", "body[0].body[0]", 2, t);
    add_instances(&k, "s", "body[1]", 1, &s);
    add_instances(&k, "u", "body[2].body[0]", 2, u);
    bu_run_t r;
    assert_int_equal(lower_buffers(&r, &k, 0), 0);
    expect_modulo(&r, t, 2, 2, 2048);
    assert_int_equal(r.m.mlocs[s].rot_nbuf, 0);
    assert_int_equal(r.m.mlocs[s].addr, 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(r.m.mlocs[u[i]].rot_buf, (unsigned)i);
    assert_int_equal(r.st.sbuf_peak, 4096);
    bu_free(&r);
    tir_kernel_free(&k);
}

/* SP spreads its transfers (the loads) round-robin over 16 queues (rings)
 * in program order: the 17th load is back on qSyncIO0; the stores are
 * Pool's (docs/compiler.md "Engines and queues"), alternating over
 * qGpSimdIO0/1.  Queue ids count in order of first use. */
static void test_queue_spreading(void **state)
{
    (void)state;
    tir_kernel_t k;
    int t[18];
    build_loop(&k, 18, 16, t);
    bu_run_t r;
    assert_int_equal(bu_lower(&r, &k, trn2(), true), 0);
    assert_int_equal(r.m.nqueues, 18);
    bir_block_t *b = bu_block(&r);
    int nload = 0, nstore = 0;
    for (int i = 0; i < b->ninsts; i++) {
        const bir_inst_t *in = &b->insts[i];
        if (in->isa.op != ISA_OP_DMA_TRIGGER)
            continue;
        char want[32];
        if (in->engine == ISA_ENG_SP)
            snprintf(want, sizeof want, "qSyncIO%d", nload++ % 16);
        else
            snprintf(want, sizeof want, "qGpSimdIO%d", nstore++ % 2);
        assert_true(in->engine == ISA_ENG_SP || in->engine == ISA_ENG_POOL);
        assert_string_equal(r.m.queues[in->queue].name, want);
    }
    assert_int_equal(nload, 18);
    assert_int_equal(nstore, 18);
    bu_free(&r);
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rotation_addresses),
        cmocka_unit_test(test_rotation_shrinks_to_fit),
        cmocka_unit_test(test_rotation_modulo_period),
        cmocka_unit_test(test_rotation_modulo_fallback),
        cmocka_unit_test(test_rotation_single_between_groups),
        cmocka_unit_test(test_queue_spreading),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
