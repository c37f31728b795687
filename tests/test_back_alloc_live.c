/* The allocator's liveness from gathered facts (encoder/alloc_live.c,
 * enc_live_t: compile.c's check_kernel gathers them in its pass over the
 * ops) against its own pass over the ops: the same first and last use of
 * every tensor, the same scratch partials, the same addresses.
 *  - a kernel with loop tiles, a PE transpose that reads the shared
 *    identity tile and a multi-step tensor_reduce (a scratch partial);
 *  - the same facts gathered without the identity load, applied to the
 *    kernel with it put in front (shift 1, as enc_compile does);
 *  - facts that do not fit the kernel are not used (the allocator's own
 *    pass answers);
 *  - the HBM layout from the gathered HBM tensors (and a pass over the
 *    tensors added after them) is the plain layout's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "alloc_live.h"
#include "back_util.h"

static const tpb_target_t *trn2(void) { return tpb_target_get("trn2"); }

/* The kernel; front: with the identity load put first (op 0) and the
 * identity tensors (HBM constant, SBUF tile) after the others, as
 * compile.c's work_init makes it. */
static void build(tir_kernel_t *k, bool front)
{
    tir_kernel_init(k);
    int a = BU_T(k, "a", TIR_T_INPUT, ISA_DT_FP32, 128, 64);
    int out = BU_T(k, "out", TIR_T_OUTPUT, ISA_DT_FP32, 128, 64);
    int x = BU_T(k, "x", TIR_T_SBUF, ISA_DT_FP32, 128, 2, 2, 2, 2, 2);
    int r = BU_T(k, "r", TIR_T_SBUF, ISA_DT_FP32, 128, 1, 2, 1, 2, 1);
    int tt[4];
    for (int i = 0; i < 4; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, i ? "t#%d" : "t", i);
        tt[i] = BU_T(k, nm, TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    }
    int ps = BU_T(k, "ps", TIR_T_PSUM, ISA_DT_BF16, 64, 128);
    int ci = -1, si = -1;
    if (front) {
        tir_tensor_t c, s;
        char names[2][TIR_NAME_LEN];
        enc_identity_tensors(k, ISA_DT_FP32, NULL, &c, &s, names);
        ci = tir_add_tensor(k, &c);
        si = tir_add_tensor(k, &s);
        tir_op_t ld;
        assert_int_equal(enc_identity_load(k, ci, si, &ld), 0);
        assert_true(tir_add_op(k, &ld) >= 0);
    }
    tir_op_t op;
    for (int i = 0; i < 4; i++) {
        tir_op_init(&op, TIR_LOAD);
        op.dst = bu_whole(k, tt[i]), op.src[0] = bu_whole(k, a), op.nsrc = 1;
        bu_op(k, &op, "ld");
        if (i == 1 || i == 3) {   /* a PE transpose changing the dtype: reads the identity */
            tir_op_init(&op, TIR_TRANSPOSE);
            op.dst = bu_in(k, bu_ap(ps, 0, 2, (int64_t)128, (int64_t)64, (int64_t)1,
                                    (int64_t)128));
            op.src[0] = bu_whole(k, tt[i]), op.nsrc = 1;
            bu_op(k, &op, "tp");
            assert_true(lower_pe_transpose_needs_identity(k, &k->ops[k->nops - 1]));
        }
        tir_op_init(&op, TIR_STORE);
        op.dst = bu_whole(k, out), op.src[0] = bu_whole(k, tt[i]), op.nsrc = 1;
        bu_op(k, &op, "st");
    }
    /* five free dims, alternately reduced (none merge), the outermost
     * reduced: a multi-step reduce with a scratch partial */
    tir_op_init(&op, TIR_TENSOR_REDUCE);
    op.src[0] = bu_whole(k, x), op.nsrc = 1;
    op.dst = bu_whole(k, r);
    TIR_RARE_SET(k, &op, axes, 0x15);
    op.reduce_op = ISA_ALU_ADD;
    bu_op(k, &op, "red");
    assert_true(lower_scratch_bytes(k, &k->ops[k->nops - 1]) > 0);
    (void)ci, (void)si;
}

static void gather(enc_live_t *l, const tir_kernel_t *k, int from)
{
    enc_live_begin(l, k);
    assert_non_null(l->use);
    for (int i = 0; i < k->ntensors; i++)
        enc_live_tensor(l, i, &k->tensors[i]);
    for (int i = from; i < k->nops; i++)
        enc_live_op(l, k, &k->ops[i], i - from,
                    lower_pe_transpose_needs_identity(k, &k->ops[i]));
}

/* Allocate k by its own pass and from live; the two must agree. */
static void expect_same(const tir_kernel_t *k, const enc_live_t *live, bool used)
{
    bu_run_t a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    assert_int_equal(enc_hbm_layout(k, &a.hbm, &a.err), 0);
    assert_int_equal(enc_hbm_layout(k, &b.hbm, &b.err), 0);
    assert_int_equal(bir_module_init(&a.m, 0, k->ntensors, &a.err), 0);
    assert_int_equal(bir_module_init(&b.m, 0, k->ntensors, &b.err), 0);
    assert_int_equal(alloc_kernel_loops(k, trn2(), &a.hbm, &a.m, &a.st, 0, NULL, &a.err), 0);
    assert_int_equal(alloc_kernel_live(k, trn2(), &b.hbm, &b.m, &b.st, 0, NULL, live, &b.err), 0);
    assert_int_equal(a.m.ident_tile, enc_ident_tile(k));
    assert_int_equal(b.m.ident_tile, a.m.ident_tile);
    for (int i = 0; i < k->ntensors; i++) {
        assert_int_equal(b.m.mlocs[i].first_use, a.m.mlocs[i].first_use);
        assert_int_equal(b.m.mlocs[i].last_use, a.m.mlocs[i].last_use);
        assert_int_equal(b.m.mlocs[i].addr, a.m.mlocs[i].addr);
        assert_int_equal(b.m.mlocs[i].space, a.m.mlocs[i].space);
    }
    assert_int_equal(a.m.nscratch, 1);
    assert_int_equal(b.m.nscratch, a.m.nscratch);
    assert_non_null(b.m.op_scratch);
    assert_memory_equal(b.m.op_scratch, a.m.op_scratch, (size_t)k->nops * sizeof *a.m.op_scratch);
    assert_int_equal(b.st.sbuf_peak, a.st.sbuf_peak);
    if (used && a.m.ident_tile >= 0)   /* the transpose's identity read counts */
        assert_true(a.m.mlocs[a.m.ident_tile].last_use > 0);
    bu_free(&a);
    bu_free(&b);
}

static void test_live_same_as_pass(void **state)
{
    (void)state;
    tir_kernel_t k;
    build(&k, false);
    enc_live_t l;
    gather(&l, &k, 0);
    assert_int_equal(l.nscratch, 1);
    assert_true(l.ident_lo >= 0);
    /* a tile used by ops 0 and 1 (load, transpose) and 2 (store) */
    expect_same(&k, &l, true);
    enc_live_free(&l);
    tir_kernel_free(&k);
}

/* enc_hbm_layout_live(k, live) against enc_hbm_layout(k). */
static void expect_same_hbm(const tir_kernel_t *k, const enc_live_t *live)
{
    enc_hbm_layout_t a, b;
    tpb_err_t err;
    assert_int_equal(enc_hbm_layout(k, &a, &err), 0);
    assert_int_equal(enc_hbm_layout_live(k, live, &b, &err), 0);
    assert_int_equal(b.ntensors, a.ntensors);
    assert_int_equal(b.total, a.total);
    assert_memory_equal(b.addr, a.addr, (size_t)k->ntensors * sizeof *a.addr);
    enc_hbm_layout_free(&a);
    enc_hbm_layout_free(&b);
}

static void test_live_shifted_identity(void **state)
{
    (void)state;
    tir_kernel_t k0, k1;
    enc_hbm_layout_t r0;
    tpb_err_t r0e;
    build(&k0, false);
    build(&k1, true);
    assert_int_equal(k1.nops, k0.nops + 1);
    assert_int_equal(k1.ntensors, k0.ntensors + 2);
    enc_live_t l;
    gather(&l, &k0, 0);
    assert_int_equal(l.nhbm, 2);   /* a, out; the identity constant comes after */
    l.shift = 1;
    expect_same(&k1, &l, true);
    expect_same_hbm(&k1, &l);
    assert_true(enc_hbm_layout_live(&k1, &l, &r0, &r0e) == 0 && r0.addr[k1.ntensors - 2] > 0);
    enc_hbm_layout_free(&r0);
    /* the identity tile: loaded by op 0, read up to the transpose */
    bu_run_t r;
    memset(&r, 0, sizeof r);
    assert_int_equal(enc_hbm_layout(&k1, &r.hbm, &r.err), 0);
    assert_int_equal(bir_module_init(&r.m, 0, k1.ntensors, &r.err), 0);
    assert_int_equal(alloc_kernel_live(&k1, trn2(), &r.hbm, &r.m, &r.st, 0, NULL, &l, &r.err), 0);
    int si = k1.ntensors - 1;
    assert_int_equal(r.m.ident_tile, si);
    assert_int_equal(r.m.mlocs[si].first_use, 0);
    assert_int_equal(r.m.mlocs[si].last_use, l.ident_hi + 1);
    bu_free(&r);
    enc_live_free(&l);
    tir_kernel_free(&k0);
    tir_kernel_free(&k1);
}

/* Facts for another kernel (an op more or fewer) are not used: the result
 * is still the allocator's own pass's. */
static void test_live_mismatch_ignored(void **state)
{
    (void)state;
    tir_kernel_t k0, k1;
    build(&k0, false);
    build(&k1, true);
    enc_live_t l;
    gather(&l, &k0, 0);   /* shift 0: one op short of k1 */
    expect_same(&k1, &l, false);
    l.failed = true;      /* out of memory while gathering */
    expect_same(&k0, &l, false);
    enc_live_free(&l);
    expect_same(&k0, NULL, false);
    tir_kernel_free(&k0);
    tir_kernel_free(&k1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live_same_as_pass),
        cmocka_unit_test(test_live_shifted_identity),
        cmocka_unit_test(test_live_mismatch_ignored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
