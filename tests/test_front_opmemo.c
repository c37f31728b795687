/* The per-op memos of the front-end (tenth session, #16): the interned
 * access pattern per tensor and per operand text (builder.c
 * enc_ap_memo_interned), the operand checks an interned record passed
 * (validate.c check_ap_memo, builder.h enc_check_memo_t) and a tile
 * statement's path interned once (builder.c add_tensor through the path
 * slot).  Each test fails without its memo (no hits) or with a memo that
 * answers for the wrong tensor, op or path. */
#include "front_memo_fx.h"

#include "builder.h"

/* A tensor's whole access pattern: interned once, then answered from the
 * tensor's slot; a tile of the same shape gets its own record. */
static void test_full_ap_per_tensor(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    const tir_ap_t *r1 = enc_ap_memo_interned(b, NULL, f->t, 0, NULL, "dst");
    int n = f->k.aps.n;
    const tir_ap_t *r2 = enc_ap_memo_interned(b, NULL, f->t, 0, NULL, "src");
    const tir_ap_t *ru = enc_ap_memo_interned(b, NULL, f->u, 0, NULL, "src");
    assert_non_null(r1);
    assert_ptr_equal(r1, r2);
    assert_int_equal(b->full_ap_hits, 1);
    assert_int_equal(ru->tensor, f->u);
    assert_ptr_not_equal(ru, r1);
    assert_int_equal(f->k.aps.n, n + 1);   /* u's record only */
    tir_ap_t full = enc_ap_full(b, f->t);
    assert_true(tir_ap_equal(r1, &full));
    /* a tensor declared later (the slots grow) */
    int w = enc_tile(b, "w", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){64, 32});
    for (int i = 0; i < 200; i++)
        enc_tile(b, "x", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){1, 4});
    const tir_ap_t *rw = enc_ap_memo_interned(b, NULL, w, 0, NULL, "dst");
    assert_int_equal(rw->tensor, w);
    assert_int_equal(rw->count[0], 64);
    assert_int_equal(rw->count[1], 32);
    assert_false(b->failed);
}

/* Sliced: the record interned for the same tensor and slices last time;
 * the same slices of another tensor of the same shape are that tensor's. */
static void test_sliced_memo_names_tensor(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    enc_ap_memo_t m;
    memset(&m, 0, sizeof m);
    enc_slice_t s[2] = {ENC_RANGE(0, 64), ENC_ALL};
    const tir_ap_t *r1 = enc_ap_memo_interned(b, &m, f->t, 2, s, "src");
    int n = f->k.aps.n;
    const tir_ap_t *r2 = enc_ap_memo_interned(b, &m, f->t, 2, s, "src");
    assert_ptr_equal(r1, r2);
    assert_int_equal(f->k.aps.n, n);
    const tir_ap_t *ru = enc_ap_memo_interned(b, &m, f->u, 2, s, "src");
    assert_int_equal(ru->tensor, f->u);
    assert_int_equal(ru->count[0], 64);
    const tir_ap_t *r3 = enc_ap_memo_interned(b, &m, f->t, 2, s, "src");
    assert_ptr_equal(r3, r1);
    /* an error is enc_ap's, through the memo */
    enc_slice_t bad[2] = {ENC_INDEX(200), ENC_ALL};
    assert_null(enc_ap_memo_interned(b, &m, f->t, 2, bad, "src"));
    assert_true(b->failed);
}

/* Slices alternating between two values (i % 2) answer from either entry,
 * whichever is tried first, with enc_ap's record; a third value is enc_ap's
 * too (one entry replaced). */
static void test_alternating_slices(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    enc_ap_memo_t m;
    memset(&m, 0, sizeof m);
    enc_slice_t s[3][2] = {{ENC_RANGE(0, 64), ENC_ALL}, {ENC_RANGE(64, 128), ENC_ALL},
                           {ENC_RANGE(32, 96), ENC_ALL}};
    static const int seq[] = {0, 1, 0, 1, 1, 0, 0, 2, 1, 2};
    for (int i = 0; i < 10; i++) {
        const tir_ap_t *r = enc_ap_memo_interned(b, &m, f->t, 2, s[seq[i]], "src");
        tir_ap_t want = enc_ap(b, f->t, 2, s[seq[i]], "src");
        assert_non_null(r);
        assert_ptr_equal(r, tir_ap_intern(&f->k, &want));
        assert_int_equal(r->offset, want.offset);
    }
    assert_false(b->failed);
}

/* The same interned record through two ops: checked once. */
static void test_check_memo_hits(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    tir_ap_t t = enc_ap_full(b, f->t), u = enc_ap_full(b, f->u);
    assert_true(enc_tensor_copy(b, u, t, ISA_ENG_DVE) >= 0);
    long h = b->check_memo->hits;
    assert_true(enc_tensor_copy(b, t, u, ISA_ENG_DVE) >= 0);
    assert_int_equal(b->check_memo->hits, h + 2);
    assert_false(b->failed);
}

/* A partition-strided tile access passes as a DMA's operand only: the
 * memo's answer for the load must not admit it in a compute op. */
static void test_check_memo_dma_only(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    enc_slice_t every2[2] = {ENC_RANGE_STEP(0, 128, 2), ENC_ALL};   /* every other partition */
    tir_ap_t strided = enc_ap(b, f->t, 2, every2, "dst");
    enc_slice_t s[2] = {ENC_RANGE(0, 64), ENC_ALL};
    tir_ap_t src = enc_ap(b, f->a, 2, s, "src");
    if (enc_load(b, strided, src) < 0)
        fail_msg("%s", f->err.msg);
    assert_true(enc_load(b, strided, src) >= 0);   /* a hit */
    assert_true(b->check_memo->hits > 0);
    assert_int_equal(enc_tensor_copy(b, strided, enc_ap_full(b, f->u), ISA_ENG_DVE), -1);
    if (!strstr(f->err.msg, "dim 0 of a tile access must step over partitions"))
        fail_msg("message '%s'", f->err.msg);
}

/* The same through the JSON front-end, in a loop body: every iteration
 * fails at the compute op, with the same message as the first. */
static void test_check_memo_json(void **state)
{
    (void)state;
    fails_with("{'op': 'for', 'var': 'i', 'range': [0, 3], 'body': ["
               T("t", "[128, 64]", "float32")
               " {'op': 'load', 'dst': 't[0:128:2, :]', 'src': 'a[0:64, 0:64]'},"
               " {'op': 'load', 'dst': 't[0:128:2, :]', 'src': 'a[64:128, 0:64]'},"
               " {'op': 'tensor_copy', 'dst': 't[0:128:2, :]', 'src': 't[0:64, :]'}]}",
               "body[0].body[3] (tensor_copy): field 'dst': dim 0 of a tile access must step "
               "over partitions", NULL);
}

/* A tile declared through the path slot: the slot is filled with the
 * interned path, used while it names the builder's path, and not for
 * another path. */
static void test_tile_path_slot(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    const char *slot = NULL;
    enc_set_path(b, "body[0].body[1]");
    enc_set_path_slot(b, &slot);
    int t1 = enc_tile(b, "v", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 64});
    assert_non_null(slot);
    assert_ptr_equal(slot, f->k.tensors[t1].path);
    int t2 = enc_tile(b, "v", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 64});
    assert_ptr_equal(f->k.tensors[t2].path, slot);
    enc_set_path(b, "body[0].body[2]");   /* a stale slot is not taken */
    enc_set_path_slot(b, &slot);
    int t3 = enc_tile(b, "v", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 64});
    assert_string_equal(f->k.tensors[t3].path, "body[0].body[2]");
    assert_string_equal(f->k.tensors[t1].path, "body[0].body[1]");
    enc_set_path_slot(b, NULL);
    assert_false(b->failed);
}

/* A tile statement's name entry found once (enc_tile_at): the slot is
 * filled, and a declaration through it is the name's next instance,
 * found by name and scoped like any other. */
static void test_tile_entry_slot(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    int slot = 0;
    int v0 = enc_tile_at(b, "v", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 64}, &slot);
    assert_true(slot > 0);
    int keep = slot;
    enc_scope_begin(b);
    int v1 = enc_tile_at(b, "v", TIR_T_SBUF, ISA_DT_BF16, 2, (int64_t[]){64, 8}, &slot);
    assert_int_equal(slot, keep);
    assert_string_equal(f->k.tensors[v1].name, "v#1");
    assert_int_equal(enc_find_tensor(b, "v"), v1);
    enc_scope_end(b);
    assert_int_equal(enc_find_tensor(b, "v"), v0);
    /* its shape is still checked */
    assert_int_equal(enc_tile_at(b, "v", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){129, 8}, &slot), -1);
    if (!strstr(f->err.msg, "partition dim 129"))
        fail_msg("message '%s'", f->err.msg);
}

/* A loop body's statement paths, joined once per loop (fj_paths.c
 * fj_body_paths): every op of every iteration names its own statement, also
 * in a nested loop, and an error in a late iteration names its statement. */
static void test_body_paths(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses("{'op': 'for', 'var': 'i', 'range': [0, 3], 'body': ["
           T("w", "[1, 512]", "float32")
           " {'op': 'load', 'dst': 'w', 'src': 'a[i:i+1, :]'},"
           " {'op': 'for', 'var': 'q', 'range': [0, 2], 'body': ["
           "   {'op': 'tensor_copy', 'dst': 'w', 'src': 'w'},"
           "   {'op': 'tensor_scalar', 'dst': 'w', 'src': 'w', 'op0': 'add', 'operand0': 1.0}]},"
           " {'op': 'store', 'dst': 'out[i:i+1, :]', 'src': 'w'}]}",
           &k);
    static const char *const want[] = {
        "body[0].body[1]", "body[0].body[2].body[0]", "body[0].body[2].body[1]",
        "body[0].body[2].body[0]", "body[0].body[2].body[1]", "body[0].body[3]"};
    assert_int_equal(k.nops, 18);
    for (int op = 0; op < k.nops; op++)
        assert_string_equal(k.ops[op].path, want[op % 6]);
    tir_kernel_free(&k);
    fails_with("{'op': 'for', 'var': 'i', 'range': [0, 3], 'body': ["
               T("w", "[1, 512]", "float32")
               " {'op': 'load', 'dst': 'w', 'src': 'a[i:i+1, :]'},"
               " {'op': 'store', 'dst': 'out[i*200:i*200+1, :]', 'src': 'w'}]}",
               "body[0].body[2]", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_full_ap_per_tensor, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sliced_memo_names_tensor, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alternating_slices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_memo_hits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_memo_dma_only, setup, teardown),
        cmocka_unit_test(test_check_memo_json),
        cmocka_unit_test_setup_teardown(test_tile_path_slot, setup, teardown),
        cmocka_unit_test(test_body_paths),
        cmocka_unit_test_setup_teardown(test_tile_entry_slot, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
