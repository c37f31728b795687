/* The front-end's second round of per-op cuts (tenth session, #16): a
 * loop body's decoded statements kept in slots beside its paths
 * (fj.h fj_memo_get_slot, fj_paths_t st), a DMA operand's check that
 * needed no partition stride answering for any op (validate.c
 * check_ap_memo), a generated op name copied once (tir.c tir_name_n) and
 * integer index expressions replayed on plain integers (expr.c run_ints)
 * and a tile's next instance taking its previous instance's checks
 * (validate_memo.c enc_check_memo_alias, builder.c full_alias).
 * Each test fails without its mechanism (the slot's answer, the memo hit)
 * or with one that answers for the wrong statement or op. */
#include "front_memo_fx.h"

#include "builder.h"
#include "expr.h"
#include "fj.h"

/* The slot's answer, else the memo's (which fills the slot): a filled
 * slot answers without the memo (a run whose memo lacks the object). */
static void test_memo_slot(void **state)
{
    (void)state;
    cJSON *o = cJSON_CreateObject(), *o2 = cJSON_CreateObject();
    static const char tag = 0;
    int rec = 7;
    jx_t *j = calloc(1, sizeof *j), *empty = calloc(1, sizeof *empty);
    j->depth = 1;   /* inside a loop: the memo keeps answers */
    const void *slot = NULL;
    assert_null(fj_memo_get_slot(j, &slot, o, &tag));   /* not known yet */
    assert_null(slot);
    assert_true(fj_memo_put(j, o, &tag, &rec));
    assert_ptr_equal(fj_memo_get_slot(j, &slot, o, &tag), &rec);
    assert_ptr_equal(slot, &rec);
    assert_ptr_equal(fj_memo_get_slot(empty, &slot, o, &tag), &rec);   /* the slot's */
    assert_ptr_equal(fj_memo_get_slot(j, NULL, o, &tag), &rec);        /* the memo's */
    const void *other = NULL;                    /* another object's slot */
    assert_null(fj_memo_get_slot(j, &other, o2, &tag));
    assert_null(other);
    free(j->memo);
    free(j);
    free(empty);
    cJSON_Delete(o);
    cJSON_Delete(o2);
}

/* Every statement of a loop body through its own slot: each iteration's
 * ops and tiles are its statements' (kinds, names, paths and tiles in
 * order), also with a nested loop whose body gets slots per outer
 * iteration, an if and a let. */
static void test_body_slots(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses("{'op': 'for', 'var': 'i', 'range': [0, 3], 'body': ["
           T("w", "[1, 512]", "float32")
           " {'op': 'let', 'var': 'r', 'value': 'i + 1'},"
           " {'op': 'load', 'dst': 'w', 'src': 'a[r:r+1, :]'},"
           T("x", "[1, 512]", "bfloat16")
           " {'op': 'for', 'var': 'q', 'range': [0, 2], 'body': ["
           "   {'op': 'tensor_copy', 'dst': 'x', 'src': 'w'},"
           "   {'op': 'if', 'cond': 'q', 'body': ["
           "     {'op': 'tensor_scalar', 'dst': 'w', 'src': 'x', 'op0': 'add', 'operand0': 1.0}]}]},"
           " {'op': 'store', 'dst': 'out[r:r+1, :]', 'src': 'w'}]}",
           &k);
    static const struct { tir_opkind_t kind; const char *path; } want[] = {
        {TIR_LOAD, "body[0].body[2]"},
        {TIR_TENSOR_COPY, "body[0].body[4].body[0]"},
        {TIR_TENSOR_COPY, "body[0].body[4].body[0]"},
        {TIR_TENSOR_SCALAR, "body[0].body[4].body[1].body[0]"},
        {TIR_STORE, "body[0].body[5]"},
    };
    assert_int_equal(k.nops, 15);
    for (int op = 0; op < k.nops; op++) {
        assert_int_equal(k.ops[op].kind, want[op % 5].kind);
        assert_string_equal(k.ops[op].path, want[op % 5].path);
        char nm[64];
        snprintf(nm, sizeof nm, "%s_%d", tir_op_name(k.ops[op].kind), op);
        assert_string_equal(k.ops[op].name, nm);
    }
    for (int it = 0; it < 3; it++) {
        const tir_op_t *ld = &k.ops[5 * it], *cp = &k.ops[5 * it + 1];
        const tir_tensor_t *w = &k.tensors[ld->dst->tensor], *x = &k.tensors[cp->dst->tensor];
        assert_int_equal(w->dtype, ISA_DT_FP32);
        assert_int_equal(x->dtype, ISA_DT_BF16);
        assert_string_equal(w->path, "body[0].body[0]");
        assert_string_equal(x->path, "body[0].body[3]");
        assert_int_equal(ld->src[0]->offset, (it + 1) * 512);
    }
    tir_kernel_free(&k);
}

/* A tile record a load accepted without a partition stride is accepted
 * for a compute op from the memo (one hit: the tile loaded, not u); a
 * strided one passing for two loads is still refused for the compute op. */
static void test_check_memo_dma_plain(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    const tir_ap_t *t = enc_ap_memo_interned(b, NULL, f->t, 0, NULL, "dst");
    const tir_ap_t *u = enc_ap_memo_interned(b, NULL, f->u, 0, NULL, "dst");
    enc_slice_t s[2] = {ENC_RANGE(0, 128), ENC_ALL};
    tir_ap_t src = enc_ap(b, f->a, 2, s, "src");
    if (enc_load(b, *t, src) < 0)
        fail_msg("%s", f->err.msg);
    long h = b->check_memo->hits;
    tir_op_t op;
    tir_op_init(&op, TIR_TENSOR_COPY);
    op.dst = u;
    op.src[0] = t;
    op.nsrc = 1;
    op.engine = ISA_ENG_DVE;
    assert_true(enc_emit(b, &op) >= 0);
    assert_int_equal(b->check_memo->hits, h + 1);
    /* strided: a pass for loads only */
    enc_slice_t every2[2] = {ENC_RANGE_STEP(0, 128, 2), ENC_ALL};
    tir_ap_t st = enc_ap(b, f->t, 2, every2, "dst");
    enc_slice_t half[2] = {ENC_RANGE(0, 64), ENC_ALL};
    tir_ap_t hs = enc_ap(b, f->a, 2, half, "src");
    assert_true(enc_load(b, st, hs) >= 0);
    assert_true(enc_load(b, st, hs) >= 0);
    assert_int_equal(enc_tensor_copy(b, st, enc_ap_full(b, f->u), ISA_ENG_DVE), -1);
    if (!strstr(f->err.msg, "dim 0 of a tile access must step over partitions"))
        fail_msg("message '%s'", f->err.msg);
}

/* An op on t through the builder (tensor_copy dst <- src, both whole). */
static int copy_full(fx_t *f, int dst, int src)
{
    tir_op_t op;
    tir_op_init(&op, TIR_TENSOR_COPY);
    op.dst = enc_ap_memo_interned(&f->b, NULL, dst, 0, NULL, "dst");
    op.src[0] = enc_ap_memo_interned(&f->b, NULL, src, 0, NULL, "src");
    op.nsrc = 1;
    op.engine = ISA_ENG_DVE;
    return enc_emit(&f->b, &op);
}

/* A tile's next instance (a loop body's next iteration) passes the checks
 * its previous instance passed: its first op is answered from the memo;
 * an instance of another shape, or a tensor never checked, is checked. */
static void test_check_memo_alias(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    int slot = 0;
    assert_true(copy_full(f, f->u, f->t) >= 0);   /* t and u checked */
    enc_scope_begin(b);
    int t1 = enc_tile_at(b, "t", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 64}, &slot);
    long h = b->check_memo->hits;
    assert_true(copy_full(f, f->u, t1) >= 0);     /* u: a hit; t#1: from t's pass */
    assert_int_equal(b->check_memo->hits, h + 2);
    enc_scope_end(b);
    enc_scope_begin(b);
    int t2 = enc_tile_at(b, "t", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 32}, &slot);
    int w = enc_tile(b, "w", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 32});
    h = b->check_memo->hits;
    assert_true(copy_full(f, w, t2) >= 0);        /* neither: both checked */
    assert_int_equal(b->check_memo->hits, h);
    enc_scope_end(b);
    assert_false(b->failed);
}

/* The alias copies a pass to a record of the same access over a tensor of
 * the same kind and shape only (directly against the memo). */
static void test_check_memo_alias_direct(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    assert_true(copy_full(f, f->u, f->t) >= 0);
    enc_check_memo_t *m = b->check_memo;
    int x = enc_tile(b, "x", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 32});
    int y = enc_tile(b, "y", TIR_T_SBUF, ISA_DT_BF16, 2, (int64_t[]){128, 64});
    tir_ap_t ax = enc_ap_full(b, x), ay = enc_ap_full(b, y);
    const tir_ap_t *rx = tir_ap_intern(&f->k, &ax), *ry = tir_ap_intern(&f->k, &ay);
    const tir_ap_t *rt = enc_ap_memo_interned(b, NULL, f->t, 0, NULL, "src");
    long h = m->hits;
    enc_check_memo_alias(m, &f->k, b->target, rt, rx);   /* another shape: no */
    enc_check_memo_alias(m, &f->k, b->target, rt, ry);   /* same shape (dtype is not read) */
    tir_op_t op;
    tir_op_init(&op, TIR_TENSOR_COPY);
    op.dst = rx;
    op.src[0] = ry;
    op.nsrc = 1;
    op.engine = ISA_ENG_DVE;
    assert_int_equal(enc_emit(b, &op), -1);   /* shapes differ: the op's own check */
    assert_int_equal(m->hits, h + 1);          /* y from t's pass; x checked */
    b->failed = false;                          /* go on after the refusal */
    /* the same access over a smaller tile is out of bounds there: the pass
     * over t must not be taken for it */
    enc_slice_t half[2] = {ENC_RANGE(0, 64), ENC_ALL};
    tir_ap_t th = enc_ap(b, f->t, 2, half, "dst");
    const tir_ap_t *rth = tir_ap_intern(&f->k, &th);
    assert_true(copy_full(f, f->u, f->t) >= 0);
    tir_op_init(&op, TIR_TENSOR_COPY);
    op.dst = rth;
    op.src[0] = rth;
    op.nsrc = 1;
    op.engine = ISA_ENG_DVE;
    assert_true(enc_emit(b, &op) >= 0);        /* rth passes over t */
    int z = enc_tile(b, "z", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){32, 64});
    tir_ap_t zh = th;
    zh.tensor = z;
    const tir_ap_t *rzh = tir_ap_intern(&f->k, &zh);
    enc_check_memo_alias(m, &f->k, b->target, rth, rzh);
    op.dst = rzh;
    op.src[0] = rzh;
    assert_int_equal(enc_emit(b, &op), -1);
    if (!strstr(f->err.msg, "access pattern reaches elements"))
        fail_msg("message '%s'", f->err.msg);
}

/* The same through the JSON front-end in a loop: a load's tile then a
 * compute op's strided use of it is refused with the full message on the
 * first iteration, as without the memo. */
static void test_check_memo_dma_plain_json(void **state)
{
    (void)state;
    fails_with("{'op': 'for', 'var': 'i', 'range': [0, 3], 'body': ["
               T("t", "[128, 64]", "float32")
               " {'op': 'load', 'dst': 't', 'src': 'a[0:128, 0:64]'},"
               " {'op': 'load', 'dst': 't[0:128:2, :]', 'src': 'a[0:64, 0:64]'},"
               " {'op': 'tensor_copy', 'dst': 't', 'src': 't'},"
               " {'op': 'tensor_copy', 'dst': 't[0:128:2, :]', 'src': 't[0:64, :]'}]}",
               "body[0].body[4] (tensor_copy): field 'dst': dim 0 of a tile access must step "
               "over partitions", NULL);
}

/* tir_name_n: the kernel's copy of the first n bytes, as tir_name; a
 * length past the name limit is cut as tir_name cuts it. */
static void test_name_n(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    const char *a = tir_name_n(&k, "tensor_copy_12", 14);
    assert_string_equal(a, "tensor_copy_12");
    assert_string_equal(tir_name_n(&k, "", 0), "");
    char longer[100];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = 0;
    const char *c = tir_name_n(&k, longer, sizeof longer - 1);
    assert_string_equal(c, tir_name(&k, longer));
    assert_int_equal(strlen(c), TIR_NAME_LEN - 1);
    tir_kernel_free(&k);
}

/* The integer replay against the parser at values around its edges
 * (floor division and modulo of negatives, INT64_MIN negated or divided by
 * -1, overflow, division by zero, a pid-dependent leaf, a float or a call
 * handed to the full replay): the same value and pid dependence, or a
 * failure of both. */
static void test_int_replay(void **state)
{
    (void)state;
    static const char *const exprs[] = {
        "(i % 2) * 128 + 128", "i // 3 - i % -3", "-i", "-(i * 2) // -7", "i * i * i * i",
        "pid * 64 + i", "i - 9223372036854775807 - 1", "7 % i", "i // (i - 3)", "floor(i / 2) + 1",
        "max(i, 3) + 1", "-i - 1", "big // i", "-big", "big * i + 1", "big // -1", "big % -1",
    };
    static const int64_t vals[] = {-9, -3, -1, 0, 1, 2, 3, 8, 1 << 20, INT64_MAX, INT64_MIN};
    for (size_t x = 0; x < sizeof exprs / sizeof exprs[0]; x++) {
        enc_env_t env;
        enc_env_init(&env);
        enc_env_push(&env, "pid", 3, true);
        enc_env_push(&env, "big", 7, false);   /* INT64_MIN at every other value */
        enc_env_push(&env, "i", 5, false);
        enc_expr_t *prog = NULL;
        enc_val_t v, w;
        char msg[256];
        if (enc_expr_compile(exprs[x], &env, &prog, &v, msg, sizeof msg) || !prog)
            fail_msg("'%s': %s", exprs[x], msg);
        for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
            env.vars[env.n - 1].value = vals[k];
            env.vars[env.n - 2].value = k % 2 ? INT64_MIN : 7;
            int a = enc_expr_eval(exprs[x], &env, &v, msg, sizeof msg);
            int b = enc_expr_run(prog, &env, &w);
            if (a != b || (!a && (v.v != w.v || v.pid_dep != w.pid_dep)))
                fail_msg("'%s' at i=%lld: eval %d (%lld, %d), replay %d (%lld, %d)", exprs[x],
                         (long long)vals[k], a, (long long)v.v, v.pid_dep, b, (long long)w.v,
                         w.pid_dep);
        }
        enc_expr_free(prog);
        enc_env_free(&env);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memo_slot),
        cmocka_unit_test(test_body_slots),
        cmocka_unit_test_setup_teardown(test_check_memo_dma_plain, setup, teardown),
        cmocka_unit_test(test_check_memo_dma_plain_json),
        cmocka_unit_test_setup_teardown(test_check_memo_alias, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_memo_alias_direct, setup, teardown),
        cmocka_unit_test(test_name_n),
        cmocka_unit_test(test_int_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
