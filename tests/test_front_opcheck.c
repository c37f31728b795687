/* A loop body statement's op validated once (twelfth session, #16:
 * builder.h enc_op_check_t, builder_check.c): the next op that reads the
 * same to validate.c -- a fresh tile of the same kind, dtype and shape in
 * place of the last one -- skips validation; any other difference
 * (dtype, shape, the access pattern, which operands share a tensor, a
 * field) validates it, and a rejection reads as without the record.  Also
 * the allowed-field check answered from the last object with the same keys
 * (fj_fields.c fj_check_fields). */
#include "front_memo_fx.h"

#include "builder.h"

static int tile(fx_t *f, const char *name, unsigned dt, int64_t p)
{
    return enc_tile(&f->b, name, TIR_T_SBUF, dt, 2, (int64_t[]){p, 64});
}

/* The next instance of a tile in place of the last: a hit; another dtype
 * or shape: validated. */
static void test_fresh_tile_hits(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    enc_op_check_t rec;
    memset(&rec, 0, sizeof rec);
    enc_set_op_check(b, &rec);
    int v1 = tile(f, "v", ISA_DT_FP32, 128);
    assert_true(enc_tensor_copy(b, enc_ap_full(b, f->u), enc_ap_full(b, v1), ISA_ENG_DVE) >= 0);
    assert_int_equal(b->op_check_hits, 0);
    int v2 = tile(f, "v", ISA_DT_FP32, 128);
    assert_true(enc_tensor_copy(b, enc_ap_full(b, f->u), enc_ap_full(b, v2), ISA_ENG_DVE) >= 0);
    assert_int_equal(b->op_check_hits, 1);
    int h = tile(f, "h", ISA_DT_BF16, 128);   /* same shape, another dtype */
    assert_true(enc_tensor_copy(b, enc_ap_full(b, f->u), enc_ap_full(b, h), ISA_ENG_DVE) >= 0);
    assert_int_equal(b->op_check_hits, 1);
    int s = tile(f, "s", ISA_DT_FP32, 64);   /* another shape: rejected, as without it */
    assert_int_equal(enc_tensor_copy(b, enc_ap_full(b, f->u), enc_ap_full(b, s), ISA_ENG_DVE), -1);
    assert_int_equal(b->op_check_hits, 1);
    if (!strstr(f->err.msg, "does not match"))
        fail_msg("message '%s'", f->err.msg);
    enc_set_op_check(b, NULL);
}

/* An in-place op (dst = src) does not answer for one over two tensors,
 * nor an op of another engine; the same op again hits. */
static void test_alias_and_fields(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    enc_op_check_t rec;
    memset(&rec, 0, sizeof rec);
    enc_set_op_check(b, &rec);
    tir_ap_t t = enc_ap_full(b, f->t), u = enc_ap_full(b, f->u);
    assert_true(enc_tensor_copy(b, t, t, ISA_ENG_DVE) >= 0);
    assert_true(enc_tensor_copy(b, u, u, ISA_ENG_DVE) >= 0);   /* in place again: a hit */
    assert_int_equal(b->op_check_hits, 1);
    assert_true(enc_tensor_copy(b, u, t, ISA_ENG_DVE) >= 0);    /* two tensors */
    assert_int_equal(b->op_check_hits, 1);
    assert_true(enc_tensor_copy(b, u, t, ISA_ENG_ACT) >= 0);    /* another engine */
    assert_int_equal(b->op_check_hits, 1);
    assert_true(enc_tensor_copy(b, u, t, ISA_ENG_ACT) >= 0);
    assert_int_equal(b->op_check_hits, 2);
    assert_false(b->failed);
    enc_set_op_check(b, NULL);
}

/* f's builder with rec (cleared) as the statement's op check */
static enc_builder_t *check_on(fx_t *f, enc_op_check_t *rec)
{
    memset(rec, 0, sizeof *rec);
    enc_set_op_check(&f->b, rec);
    return &f->b;
}

/* Two changed operands that now share a tensor (in0 = in1, fresh) where
 * the kept op's did not: no hit (the op is validated); two fresh tiles
 * in their places again: a hit. */
static void test_changed_pair_sharing(void **state)
{
    fx_t *f = *state;
    enc_op_check_t rec;
    enc_builder_t *b = check_on(f, &rec);
    tir_ap_t x = enc_ap_full(b, f->t);
    static const bool shared[] = {false, false, true, false};
    static const long hits[] = {0, 1, 1, 2};
    for (int i = 0; i < 4; i++) {
        tir_ap_t a = enc_ap_full(b, tile(f, "p", ISA_DT_FP32, 128));
        tir_ap_t c = shared[i] ? a : enc_ap_full(b, tile(f, "q", ISA_DT_FP32, 128));
        if (enc_tensor_tensor(b, x, a, c, ISA_ALU_ADD) < 0)
            fail_msg("op %d: %s", i, f->err.msg);
        assert_int_equal(b->op_check_hits, hits[i]);
    }
    assert_false(b->failed);
    enc_set_op_check(b, NULL);
}

/* A body whose slices alternate (i % 2) hits either kept entry, tried in
 * the order they last hit; another offset is a different access pattern
 * (validated, not answered from an entry). */
static void test_alternating_offsets(void **state)
{
    fx_t *f = *state;
    enc_op_check_t rec;
    enc_builder_t *b = check_on(f, &rec);
    tir_ap_t half[3];
    for (int h = 0; h < 3; h++) {   /* t[0:64], t[64:128], t[32:96] */
        half[h] = enc_ap_full(b, f->t);
        half[h].count[0] = 64;
        half[h].offset = (h == 2 ? 32 : 64 * h) * half[h].step[0];
    }
    static const int seq[] = {0, 1, 0, 1, 0, 1, 1, 0, 2};
    static const long hits[] = {0, 0, 1, 2, 3, 4, 5, 6, 6};
    for (int i = 0; i < 9; i++) {
        int v = tile(f, "v", ISA_DT_FP32, 64);
        assert_true(enc_tensor_copy(b, half[seq[i]], enc_ap_full(b, v), ISA_ENG_DVE) >= 0);
        assert_int_equal(b->op_check_hits, hits[i]);
    }
    assert_false(b->failed);
    enc_set_op_check(b, NULL);
}

/* A fresh tile's record taken from its previous instance's answers the
 * comparison from the builder's record of it (derived_hits); an instance
 * of another dtype (the same shape: its record is still taken) does not,
 * and is validated. */
static void test_derived_records(void **state)
{
    fx_t *f = *state;
    enc_op_check_t rec;
    enc_builder_t *b = check_on(f, &rec);
    static const unsigned dt[] = {ISA_DT_FP32, ISA_DT_FP32, ISA_DT_FP32, ISA_DT_BF16, ISA_DT_BF16};
    static const long hits[] = {0, 1, 2, 2, 3};
    for (int i = 0; i < 5; i++) {
        int v = tile(f, "v", dt[i], 128);
        const tir_ap_t *r = enc_ap_memo_interned(b, NULL, v, 0, NULL, "dst");
        assert_non_null(r);
        assert_true(enc_tensor_copy(b, enc_ap_full(b, f->u), *r, ISA_ENG_DVE) >= 0);
        assert_int_equal(b->op_check_hits, hits[i]);
    }
    assert_int_equal(b->full_derived, 4);
    assert_true(b->derived_hits >= 2);
    assert_false(b->failed);
    enc_set_op_check(b, NULL);
}

/* Through the JSON front-end: a loop's later iteration whose op differs is
 * still rejected with its own message; a flat body's statement with the
 * keys of one that passed passes, one with an unknown field does not. */
static void test_json(void **state)
{
    (void)state;
    fails_with("{'op': 'for', 'var': 'i', 'range': [0, 3], 'body': ["
               T("x", "[64, 64]", "float32")
               T("y", "['i*64+64', 64]", "float32")
               " {'op': 'tensor_copy', 'dst': 'y', 'src': 'x'}]}",
               "body[0].body[2] (tensor_copy)", "does not match");
    tir_kernel_t k;
    parses(T("x", "[64, 512]", "float32")
           " {'op': 'load', 'dst': 'x', 'src': 'a[0:64, :]'},"
           " {'op': 'load', 'dst': 'x', 'src': 'a[64:128, :]'},"
           " {'src': 'a[0:64, :]', 'op': 'load', 'dst': 'x'}", &k);
    assert_int_equal(k.nops, 3);
    tir_kernel_free(&k);
    fails_with(T("x", "[64, 512]", "float32")
               " {'op': 'load', 'dst': 'x', 'src': 'a[0:64, :]'},"
               " {'op': 'load', 'dst': 'x', 'src': 'a[64:128, :]', 'bogus': 1}",
               "body[2]", "unknown field");
    fails_with(T("x", "[64, 512]", "float32")
               " {'op': 'load', 'dst': 'x', 'src': 'a[0:64, :]'},"
               " {'op': 'load', 'dst': 'x', 'src': 'a[64:128, :]', 'dst': 'x'}",
               "body[2]", "given twice");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fresh_tile_hits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alias_and_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changed_pair_sharing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alternating_offsets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_derived_records, setup, teardown),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
