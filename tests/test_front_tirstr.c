/* The tile IR's strings (encoder/tir.c tir_add_tensor, tir_name): a
 * tensor's name, path and print prefix and an op's name are pointers to
 * strings owned by the kernel, cut to the lengths the inline arrays they
 * replaced held.  These tests fail when a kernel keeps the caller's buffer,
 * does not share a loop's path, cuts differently, or when a tensor copied
 * into another kernel (the compile's work copy, the multi-core split's core
 * kernels) still points into the first one (run them under
 * -DTPB_SANITIZE=ON: a dangling pointer is a use after free there). */
#include "front_json_util.h"

static tir_tensor_t tile(const char *name, const char *path)
{
    tir_tensor_t t;
    memset(&t, 0, sizeof t);
    t.name = name;
    t.path = path;
    t.kind = TIR_T_SBUF;
    t.dtype = ISA_DT_FP32;
    t.ndim = 2;
    t.shape[0] = 128, t.shape[1] = 64;
    t.shared_with = -1;
    return t;
}

/* The kernel copies the strings: the caller's buffers may change or go. */
static void test_tensor_copies_strings(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    char name[TIR_NAME_LEN] = "t#1", path[TIR_PATH_LEN] = "body[0].body[1]";
    tir_tensor_t t = tile(name, path);
    t.print_prefix = "x =";
    int i = tir_add_tensor(&k, &t);
    assert_int_equal(i, 0);
    strcpy(name, "overwritten"), strcpy(path, "overwritten");
    assert_ptr_not_equal(k.tensors[0].name, name);
    assert_string_equal(k.tensors[0].name, "t#1");
    assert_string_equal(k.tensors[0].path, "body[0].body[1]");
    assert_string_equal(k.tensors[0].print_prefix, "x =");
    tir_kernel_free(&k);
}

/* NULL strings read as "" (a zeroed tensor had empty arrays). */
static void test_tensor_null_is_empty(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    tir_tensor_t t;
    memset(&t, 0, sizeof t);
    assert_int_equal(tir_add_tensor(&k, &t), 0);
    assert_string_equal(k.tensors[0].name, "");
    assert_string_equal(k.tensors[0].path, "");
    assert_string_equal(k.tensors[0].print_prefix, "");
    tir_kernel_free(&k);
}

/* Every iteration's tile shares one path; names stay distinct copies. */
static void test_tensor_path_shared(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    for (int i = 0; i < 1000; i++) {
        char name[TIR_NAME_LEN], path[TIR_PATH_LEN] = "body[0].body[0]";
        snprintf(name, sizeof name, i ? "t#%d" : "t", i);
        tir_tensor_t t = tile(name, path);
        assert_int_equal(tir_add_tensor(&k, &t), i);
    }
    for (int i = 1; i < 1000; i++) {
        char want[TIR_NAME_LEN];
        snprintf(want, sizeof want, "t#%d", i);
        assert_ptr_equal(k.tensors[i].path, k.tensors[0].path);
        assert_string_equal(k.tensors[i].name, want);
    }
    assert_int_equal(k.nstrs, 1);
    tir_kernel_free(&k);
}

/* Long strings are cut where the arrays cut them: name 63 bytes, path 95,
 * print prefix 47. */
static void test_tensor_long_strings_cut(void **state)
{
    (void)state;
    char lng[300];
    for (int i = 0; i < 299; i++)
        lng[i] = (char)('a' + i % 26);
    lng[299] = 0;
    tir_kernel_t k;
    tir_kernel_init(&k);
    tir_tensor_t t = tile(lng, lng);
    t.print_prefix = lng;
    assert_int_equal(tir_add_tensor(&k, &t), 0);
    assert_int_equal(strlen(k.tensors[0].name), TIR_NAME_LEN - 1);
    assert_int_equal(strlen(k.tensors[0].path), TIR_PATH_LEN - 1);
    assert_int_equal(strlen(k.tensors[0].print_prefix), TIR_PRINT_PREFIX_LEN - 1);
    assert_memory_equal(k.tensors[0].name, lng, TIR_NAME_LEN - 1);
    assert_memory_equal(k.tensors[0].path, lng, TIR_PATH_LEN - 1);
    /* exactly the limit minus one: kept whole */
    lng[TIR_NAME_LEN - 1] = 0;
    t = tile(lng, "p");
    assert_int_equal(tir_add_tensor(&k, &t), 1);
    assert_string_equal(k.tensors[1].name, lng);
    tir_kernel_free(&k);
}

/* A tensor copied into another kernel (the split's core kernels, a work
 * copy) gets that kernel's strings: freeing the first kernel leaves them
 * readable. */
static void test_tensor_copy_outlives_source(void **state)
{
    (void)state;
    tir_kernel_t a, b;
    tir_kernel_init(&a);
    tir_kernel_init(&b);
    tir_tensor_t t = tile("w", "body[2]");
    t.print_prefix = "w:";
    assert_int_equal(tir_add_tensor(&a, &t), 0);
    assert_int_equal(tir_add_tensor(&b, &a.tensors[0]), 0);
    tir_tensor_t c = a.tensors[0];
    char nm[TIR_NAME_LEN];
    snprintf(nm, sizeof nm, "%.50s@p%d", a.tensors[0].name, 1);   /* as the split names it */
    c.name = nm;
    assert_int_equal(tir_add_tensor(&b, &c), 1);
    assert_ptr_not_equal(b.tensors[0].name, a.tensors[0].name);
    assert_ptr_not_equal(b.tensors[0].path, a.tensors[0].path);
    tir_kernel_free(&a);
    assert_string_equal(b.tensors[0].name, "w");
    assert_string_equal(b.tensors[0].path, "body[2]");
    assert_string_equal(b.tensors[0].print_prefix, "w:");
    assert_string_equal(b.tensors[1].name, "w@p1");
    tir_kernel_free(&b);
}

/* The compile's work copy (a shallow copy, detached): the tensors it adds
 * own their strings in the copy; freeing it leaves the original intact. */
static void test_tensor_detached_copy(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    tir_tensor_t t = tile("a", "inputs[0]");
    assert_int_equal(tir_add_tensor(&k, &t), 0);
    tir_kernel_t w = k;
    tir_pools_detach(&w);
    w.tensors = NULL, w.ntensors = w.cap_tensors = 0;
    assert_int_equal(tir_add_tensor(&w, &k.tensors[0]), 0);
    t = tile("identity_sb", "(compiler: shared identity)");
    assert_int_equal(tir_add_tensor(&w, &t), 1);
    assert_int_equal(k.nstrs, 1);
    assert_int_equal(w.nstrs, 2);
    tir_array_free(w.tensors, w.cap_tensors, sizeof *w.tensors);
    tir_pools_free(&w);
    assert_string_equal(k.tensors[0].name, "a");
    assert_string_equal(k.tensors[0].path, "inputs[0]");
    tir_kernel_free(&k);
}

/* The JSON front-end: a tile declared in a loop is one tensor per
 * iteration, "t", "t#1", ..., all with the declaration's one path. */
static void test_front_loop_tiles(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses("{'op': 'for', 'var': 'i', 'range': [0, 8], 'body': ["
           " {'op': 'tile', 'name': 't', 'shape': [1, 512], 'dtype': 'float32'},"
           " {'op': 'load', 'dst': 't', 'src': 'a[i % 2:i % 2 + 1, :]'},"
           " {'op': 'store', 'dst': 'out[0:1, :]', 'src': 't'}]}",
           &k);
    int first = -1, n = 0;
    for (int i = 0; i < k.ntensors; i++) {
        if (k.tensors[i].kind != TIR_T_SBUF)
            continue;
        char want[TIR_NAME_LEN];
        snprintf(want, sizeof want, n ? "t#%d" : "t", n);
        assert_string_equal(k.tensors[i].name, want);
        if (first < 0)
            first = i;
        assert_ptr_equal(k.tensors[i].path, k.tensors[first].path);
        n++;
    }
    assert_int_equal(n, 8);
    assert_string_equal(k.tensors[first].path, "body[0].body[0]");
    tir_kernel_free(&k);
}

/* Op and tile paths: a flat body's statements each get the kernel's copy
 * of their own path (copied, not interned: no two are alike, but two with
 * one loc read the same); a loop body's statement shares one copy across
 * its iterations. */
static void test_front_op_paths(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("w", "[1, 512]", "float32")
           "{'op': 'load', 'dst': 'w', 'src': 'a[0:1, :]'},"
           "{'op': 'store', 'dst': 'out[0:1, :]', 'src': 'w', 'loc': 'k.py:7'},"
           "{'op': 'store', 'dst': 'out[1:2, :]', 'src': 'w', 'loc': 'k.py:7'},"
           "{'op': 'for', 'var': 'i', 'range': [0, 3], 'body': ["
           " {'op': 'tile', 'name': 'u', 'shape': [1, 512], 'dtype': 'float32'},"
           " {'op': 'load', 'dst': 'u', 'src': 'a[i:i + 1, :]'}]}",
           &k);
    assert_int_equal(k.nops, 6);
    assert_string_equal(k.ops[0].path, "body[1]");
    assert_string_equal(k.ops[1].path, "k.py:7");
    assert_string_equal(k.ops[2].path, "k.py:7");
    for (int i = 3; i < 6; i++) {
        assert_string_equal(k.ops[i].path, "body[4].body[1]");
        assert_ptr_equal(k.ops[i].path, k.ops[3].path);
    }
    int tiles = 0;
    for (int i = 0; i < k.ntensors; i++) {
        if (k.tensors[i].kind != TIR_T_SBUF)
            continue;
        assert_string_equal(k.tensors[i].path, tiles ? "body[4].body[0]" : "body[0]");
        if (tiles > 1)
            assert_ptr_equal(k.tensors[i].path, k.tensors[i - 1].path);
        tiles++;
    }
    assert_int_equal(tiles, 4);
    tir_kernel_free(&k);
}

/* Op names: tir_name makes an exact-length copy in the kernel, cut to
 * TIR_NAME_LEN - 1 bytes; it outlives the caller's buffer. */
static void test_op_name_copy_cut(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    char buf[200];
    memset(buf, 'n', sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    const char *a = tir_name(&k, buf), *b = tir_name(&k, "i1:ld");
    assert_non_null(a);
    assert_int_equal(strlen(a), TIR_NAME_LEN - 1);
    memset(buf, 'x', 10);
    assert_int_equal(a[0], 'n');
    assert_string_equal(b, "i1:ld");
    assert_ptr_not_equal(tir_name(&k, "i1:ld"), b);   /* copies, not interned */
    assert_string_equal(tir_name(&k, ""), "");
    assert_string_equal(tir_name(&k, NULL), "");
    tir_kernel_free(&k);
}

/* The front-end: user names (NKI name=) are interned, so a loop's
 * iterations share one; generated "<op>_<index>" names are the kernel's
 * copies, each exactly its string. */
static void test_front_op_names(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("w", "[1, 512]", "float32")
           "{'op': 'for', 'var': 'i', 'range': [0, 4], 'body': ["
           " {'op': 'load', 'name': 'ld_w', 'dst': 'w', 'src': 'a[i % 2:i % 2 + 1, :]'},"
           " {'op': 'store', 'dst': 'out[0:1, :]', 'src': 'w'}]}",
           &k);
    assert_int_equal(k.nops, 8);
    for (int i = 0; i < 8; i += 2) {
        char want[TIR_NAME_LEN];
        snprintf(want, sizeof want, "store_%d", i + 1);
        assert_string_equal(k.ops[i].name, "ld_w");
        assert_ptr_equal(k.ops[i].name, k.ops[0].name);
        assert_string_equal(k.ops[i + 1].name, want);
    }
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tensor_copies_strings),
        cmocka_unit_test(test_tensor_null_is_empty),
        cmocka_unit_test(test_tensor_path_shared),
        cmocka_unit_test(test_front_op_paths),
        cmocka_unit_test(test_tensor_long_strings_cut),
        cmocka_unit_test(test_tensor_copy_outlives_source),
        cmocka_unit_test(test_tensor_detached_copy),
        cmocka_unit_test(test_front_loop_tiles),
        cmocka_unit_test(test_op_name_copy_cut),
        cmocka_unit_test(test_front_op_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
