/* The front-end's third round of per-op cuts (tenth session, #16): a loop
 * body's tile declared anew takes its whole access pattern from its
 * previous instance (builder_memo.c full_from_previous) and that record's
 * operand-check pass without comparing again (validate_memo.c
 * enc_check_memo_alias), and its name "t#N" from the previous one's
 * (builder.c inst_name).  Each test fails without its mechanism (the count
 * of derived records, the memo hits) or with one that derives across a
 * change of shape or kind (the record, the full error message). */
#include "front_json_util.h"

#include "builder.h"
#include "expr.h"

typedef struct {
    tir_kernel_t k;
    tpb_err_t err;
    enc_builder_t b;
    int u;
} fx_t;

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof *f);
    assert_int_equal(enc_builder_init(&f->b, &f->k, "derive", "trn2", &f->err), 0);
    f->u = enc_tile(&f->b, "u", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 64});
    assert_false(f->b.failed);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    enc_builder_free(&f->b);
    tir_kernel_free(&f->k);
    free(f);
    return 0;
}

/* An instance of "t" in its own scope (a loop iteration's). */
static int instance(fx_t *f, tir_tensor_kind_t kind, int64_t cols, int *slot)
{
    enc_scope_begin(&f->b);
    int t = enc_tile_at(&f->b, "t", kind, ISA_DT_FP32, 2, (int64_t[]){128, cols}, slot);
    assert_true(t >= 0);
    return t;
}

/* The interned whole record of t, which must equal enc_ap's. */
static const tir_ap_t *full_of(fx_t *f, int t)
{
    const tir_ap_t *r = enc_ap_memo_interned(&f->b, NULL, t, 0, NULL, "dst");
    assert_non_null(r);
    tir_ap_t want = enc_ap(&f->b, t, 0, NULL, "dst");
    assert_memory_equal(r, &want, sizeof want);
    assert_ptr_equal(r, tir_ap_intern(&f->k, &want));   /* the pool's one record */
    return r;
}

/* The next instance of the same kind and shape: derived (counted), the
 * record enc_ap gives; another shape or kind: built by enc_ap. */
static void test_derived_record(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    int slot = 0;
    int t0 = instance(f, TIR_T_SBUF, 64, &slot);
    full_of(f, t0);
    assert_int_equal(b->full_derived, 0);   /* nothing to take it from */
    enc_scope_end(b);
    int t1 = instance(f, TIR_T_SBUF, 64, &slot);
    const tir_ap_t *r1 = full_of(f, t1);
    assert_int_equal(b->full_derived, 1);
    assert_int_equal(r1->tensor, t1);
    enc_scope_end(b);
    int t2 = instance(f, TIR_T_SBUF, 32, &slot);   /* another shape */
    const tir_ap_t *r2 = full_of(f, t2);
    assert_int_equal(b->full_derived, 1);
    assert_int_equal(r2->count[1], 32);
    enc_scope_end(b);
    int t3 = instance(f, TIR_T_PSUM, 32, &slot);   /* another kind */
    full_of(f, t3);
    assert_int_equal(b->full_derived, 1);
    enc_scope_end(b);
    int t4 = instance(f, TIR_T_PSUM, 32, &slot);
    full_of(f, t4);
    assert_int_equal(b->full_derived, 2);
    enc_scope_end(b);
    assert_false(b->failed);
}

/* An op of t's next instance (and u's) answered from the memo: the copied
 * pass; an instance of another kind is checked again. */
static void test_derived_check_pass(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    int slot = 0;
    for (int it = 0; it < 3; it++) {
        int t = instance(f, it < 2 ? TIR_T_SBUF : TIR_T_PSUM, 64, &slot);
        tir_op_t op;
        tir_op_init(&op, TIR_TENSOR_COPY);
        op.dst = full_of(f, t);
        op.src[0] = full_of(f, f->u);
        op.nsrc = 1;
        op.engine = ISA_ENG_DVE;
        long h = b->check_memo ? b->check_memo->hits : 0;
        if (enc_emit(b, &op) < 0)
            fail_msg("%s", f->err.msg);
        /* the first: both checked; the second: both answered; the PSUM
         * one: only u answered */
        assert_int_equal(b->check_memo->hits - h, it == 0 ? 0 : it == 1 ? 2 : 1);
        enc_scope_end(b);
    }
    assert_int_equal(b->full_derived, 1);
}

/* Through the JSON front-end (tensor_scalar interns its operands through
 * enc_ap_memo_interned): a tile whose shape changes in the loop gets each
 * iteration's record (the ops' counts), and the op that no longer fits is
 * refused with the full message at its iteration. */
static void test_derived_json(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("u", "[128, 64]", "float32")
           "{'op': 'for', 'var': 'i', 'range': [0, 4], 'body': ["
           " {'op': 'tile', 'name': 't', 'shape': [128, '32 + 32 * (i // 2)'], 'dtype': 'float32'},"
           " {'op': 'tensor_scalar', 'dst': 't', 'src': 'u[:, 0:32 + 32 * (i // 2)]',"
           "  'op0': 'add', 'operand0': 1.0, 'engine': 'dve'}]}",
           &k);
    assert_int_equal(k.nops, 4);
    for (int i = 0; i < 4; i++) {
        const tir_op_t *op = &k.ops[i];
        assert_int_equal(op->dst->count[1], 32 + 32 * (i / 2));
        assert_int_equal(k.tensors[op->dst->tensor].shape[1], 32 + 32 * (i / 2));
    }
    tir_kernel_free(&k);
    fails_with(T("u", "[128, 64]", "float32")
               "{'op': 'for', 'var': 'i', 'range': [0, 3], 'body': ["
               " {'op': 'tile', 'name': 't', 'shape': [128, '64 - 32 * (i // 2)'], 'dtype': 'float32'},"
               " {'op': 'tensor_scalar', 'dst': 't', 'src': 'u', 'op0': 'add', 'operand0': 1.0,"
               "  'engine': 'dve'}]}",
               "body[1].body[1] (tensor_scalar): field 'src': shape [128, 64] does not match 'dst' "
               "shape [128, 32] (partitions and free elements must be equal) (at i=2)", NULL);
}

/* A tile's instance names "name#N" by bumping the previous one's number:
 * each equals snprintf's, across 9 -> 10, 99 -> 100, 999 -> 1000, for a
 * name cut at TIR_NAME_LEN - 1 bytes (never bumped) and for names whose
 * instances interleave (each name its own number). */
static void test_instance_names(void **state)
{
    fx_t *f = *state;
    enc_builder_t *b = &f->b;
    static const char *const names[] = {
        "t", "x9",
        "a_name_of_fifty_five_characters_the_longest_one_allowed",   /* 55: the limit */
        "n99",
    };
    int slots[4] = {0};
    for (int it = 0; it <= 1200; it++) {
        enc_scope_begin(b);
        for (int n = 0; n < 4; n++) {
            int t = enc_tile_at(b, names[n], TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){1, 4},
                                &slots[n]);
            if (t < 0)
                fail_msg("%s: %s", names[n], f->err.msg);
            char want[TIR_NAME_LEN];
            if (it)
                snprintf(want, sizeof want, "%s#%d", names[n], it);
            else
                snprintf(want, sizeof want, "%s", names[n]);
            assert_string_equal(f->k.tensors[t].name, want);
        }
        enc_scope_end(b);
    }
    /* each name: #1 built, #10, #100 and #1000 rebuilt (a digit more) */
    assert_int_equal(b->names_bumped, 4 * (1200 - 4));
    /* of those, each whose previous number does not end in 9 (no carry)
     * was written straight into the name arena: per name the numbers
     * 1..1199 bumped, less the 120 ending in 9 */
    assert_int_equal(b->names_owned, 4 * (1199 - 120));
    assert_false(b->failed);
}

/* enc_env_find's inline name compare: a name that is a prefix of another,
 * or has one as its prefix, is not that one; the innermost binding wins. */
static void test_env_find_names(void **state)
{
    (void)state;
    enc_env_t e;
    enc_env_init(&e);
    assert_int_equal(enc_env_push(&e, "ii", 5, false), 0);
    assert_int_equal(enc_env_push(&e, "i", 3, false), 0);
    assert_int_equal(enc_env_push(&e, "i2", 7, true), 0);
    assert_int_equal(enc_env_find(&e, "ii")->value, 5);
    assert_int_equal(enc_env_find(&e, "i")->value, 3);
    assert_int_equal(enc_env_find(&e, "i2")->value, 7);
    assert_null(enc_env_find(&e, "iii"));
    assert_null(enc_env_find(&e, ""));
    assert_null(enc_env_find(&e, "j"));
    assert_int_equal(enc_env_push(&e, "i", 9, false), 0);   /* shadows */
    assert_int_equal(enc_env_find(&e, "i")->value, 9);
    enc_env_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_derived_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_derived_check_pass, setup, teardown),
        cmocka_unit_test(test_derived_json),
        cmocka_unit_test(test_env_find_names),
        cmocka_unit_test_setup_teardown(test_instance_names, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
