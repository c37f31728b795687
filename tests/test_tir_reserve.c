/* The front-end's growing arrays (encoder/tir.c tir_array_reserve, the loop
 * marks, the kernel file's text read into a mapping): across the
 * TPB_ARRAY_MAP_MIN threshold a block moves from malloc to a mapping of
 * its own, and its owner must then see the same contents, zeros where it
 * asked for them, and free it with the size it has (a mismatch frees a
 * mapping with free() or unmaps part of it: a crash, or an ASan report). */
#include "front_json_util.h"

#include "builder.h"
#include "hugepage.h"
#include "jsonarena.h"
#include "tir.h"

/* Grown in uneven steps to 2 MiB+ of ints, every element the owner holds
 * written before each growth: the old ones keep their values, the new ones
 * read zero, and once a mapping the capacity is all of it. */
static void test_reserve_zero_across_threshold(void **state)
{
    (void)state;
    int *a = NULL, cap = 0;
    for (int need = 1; need < (1 << 20); need = need * 3 + 7) {
        int old = cap;
        int *p = tir_array_reserve(a, &cap, need, sizeof *a, 64, true);
        assert_non_null(p);
        a = p;
        assert_true(cap >= need);
        if (old >= need)
            assert_int_equal(cap, old);
        size_t bytes = (size_t)cap * sizeof *a;
        assert_int_equal(tpb_array_room(bytes), bytes);   /* the mapping used whole */
        for (int i = 0; i < old; i++)
            assert_int_equal(a[i], i ^ 0x5a5a);
        for (int i = old; i < cap; i++)
            assert_int_equal(a[i], 0);
        for (int i = 0; i < cap; i++)
            a[i] = i ^ 0x5a5a;
    }
    assert_true((size_t)cap * sizeof *a >= ((size_t)4 << 20));
    tir_array_free(a, cap, sizeof *a);
}

/* need <= capacity: the same block; elements too large for the room
 * rule and an impossible size are refused with the block unchanged. */
static void test_reserve_refusals(void **state)
{
    (void)state;
    char *a = NULL;
    int cap = 0;
    a = tir_array_reserve(a, &cap, 10, 1, 16, false);
    assert_non_null(a);
    assert_int_equal(cap, 16);
    assert_ptr_equal(tir_array_reserve(a, &cap, 16, 1, 16, false), a);
    assert_null(tir_array_reserve(a, &cap, 17, 1, 0, false));
    assert_null(tir_array_reserve(a, &cap, 17, (size_t)1 << 20, 16, false));
    assert_int_equal(cap, 16);
    tir_array_free(a, cap, 1);
}

/* A loop of 2*10^5 trips: its 800 KiB of marks in a mapping, grown from a
 * small loop's malloc'ed ones, all kept. */
static void test_loop_marks_large(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    tir_loop_t l;
    memset(&l, 0, sizeof l);
    l.parent = -1;
    l.trips = 3;
    assert_int_equal(tir_add_loop(&k, &l), 0);
    for (int i = 0; i <= 3; i++)
        tir_loop_mark(&k, 0, i);
    l.trips = 200000;
    assert_int_equal(tir_add_loop(&k, &l), 1);
    assert_true((size_t)k.cap_marks * sizeof *k.loop_marks >= TPB_ARRAY_MAP_MIN);
    tir_op_t op;
    tir_op_init(&op, TIR_NOOP);
    for (int i = 0; i <= 200000; i++) {
        tir_loop_mark(&k, 1, i);
        if (i % 1000 == 0)
            assert_true(tir_add_op(&k, &op) >= 0);
    }
    assert_int_equal(k.nmarks, 4 + 200001);
    assert_int_equal(k.loop_marks[k.loops[1].first], 0);
    assert_int_equal(k.loop_marks[k.loops[1].first + 1000], 1);   /* op 0 added after mark 0 */
    assert_int_equal(k.loop_marks[k.loops[1].first + 200000], 200);
    tir_kernel_free(&k);
}

static void write_file(const char *path, const char *s, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(s, 1, n, f), n);
    fclose(f);
}

/* The kernel file's text: a large one (a mapping) and a small one
 * (fio_read_all) read whole with a NUL after; a missing one an error. */
static void test_read_kernel_text(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/tpb_read_text_%ld.json", (long)getpid());
    size_t sizes[] = {TPB_ARRAY_MAP_MIN + ((size_t)700 << 10) + 3, 100, TPB_ARRAY_MAP_MIN - 1};
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        size_t n = sizes[z];
        char *s = malloc(n);
        assert_non_null(s);
        for (size_t i = 0; i < n; i++)
            s[i] = (char)('a' + i % 23);
        write_file(path, s, n);
        enc_text_t t;
        tpb_err_t err = {0};
        assert_int_equal(enc_read_kernel_text(path, NULL, &t, &err), 0);
        assert_int_equal(t.len, n);
        assert_memory_equal(t.buf, s, n);
        assert_int_equal(t.buf[n], 0);
        assert_false(t.in_tree);
        assert_int_equal(t.bytes >= TPB_ARRAY_MAP_MIN, n + 1 >= TPB_ARRAY_MAP_MIN);
        enc_text_free(&t);
        assert_null(t.buf);
        free(s);
    }
    unlink(path);
    enc_text_t t = {(uint8_t *)"x", 1, 1, true};
    tpb_err_t err = {0};
    assert_int_not_equal(enc_read_kernel_text(path, NULL, &t, &err), 0);
    assert_null(t.buf);
    assert_int_equal(t.bytes, 0);
    assert_non_null(strstr(err.msg, "cannot open"));
}

/* With the tree's arena given, a large text goes at the start of the
 * arena's chunk and the tree parsed from it right after the text in the
 * same chunk (one mapping); a small one stays malloc'ed and the arena
 * empty.  "Large" is the chunk's size, text and presized tree: a text of
 * 600 KiB (compile-live's size), below TPB_ARRAY_MAP_MIN on its own,
 * shares the tree's mapping too. */
static void test_read_kernel_text_in_tree(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/tpb_read_tree_%ld.json", (long)getpid());
    size_t sizes[] = {40, (size_t)600 << 10, TPB_ARRAY_MAP_MIN + ((size_t)300 << 10)};
    assert_true(sizes[1] < TPB_ARRAY_MAP_MIN && tpb_json_arena_presize(sizes[1]) > 0);
    for (int z = 0; z < 3; z++) {
        bool big = z > 0;
        size_t n = sizes[z];   /* a JSON array of 0s */
        char *s = malloc(n);
        assert_non_null(s);
        s[0] = '[';
        for (size_t i = 1; i + 1 < n; i++)
            s[i] = i % 2 ? '0' : ',';
        if (n % 2 == 0)
            s[n - 2] = ' ';   /* no trailing comma */
        s[n - 1] = ']';
        write_file(path, s, n);
        tpb_arena_t tree = {0};
        enc_text_t t;
        tpb_err_t err = {0};
        assert_int_equal(enc_read_kernel_text(path, &tree, &t, &err), 0);
        assert_int_equal(t.len, n);
        assert_memory_equal(t.buf, s, n);
        assert_int_equal(t.buf[n], 0);
        assert_int_equal(t.in_tree, big);
        assert_int_equal(tree.head != NULL, big);
        cJSON *root = NULL;
        const char *end = NULL;
        assert_int_equal(tpb_json_arena_parse(&tree, (const char *)t.buf, t.len, &root, &end),
                         TPB_JA_OK);
        assert_int_equal(cJSON_GetArraySize(root), (int)((n - 1) / 2));
        if (big) {   /* the tree's first node: the presized block after the text */
            uintptr_t after = ((uintptr_t)t.buf + n + 1 + 15) & ~(uintptr_t)15;
            assert_int_equal((uintptr_t)root, after);
        }
        tpb_arena_free(&tree);
        enc_text_free(&t);
        free(s);
    }
    unlink(path);
}

/* A loop body's tiles past TPB_ARRAY_MAP_MIN of per-tensor records (16 bytes each:
 * 40 000 tiles): each instance's name, scope and whole-AP record as
 * before, the retired ones refused. */
static void test_many_tiles(void **state)
{
    (void)state;
    char *js = dq("{'kernel': 'k', 'inputs': [{'name': 'a', 'shape': [128, 4], 'dtype': "
                  "'float32'}], 'outputs': [{'name': 'o', 'shape': [128, 4], 'dtype': "
                  "'float32'}], 'body': [{'op': 'for', 'var': 'i', 'range': [0, 40000], "
                  "'body': [{'op': 'tile', 'name': 't', 'shape': [128, 4], 'dtype': 'float32'}, "
                  "{'op': 'load', 'dst': 't', 'src': 'a'}, {'op': 'store', 'dst': 'o', 'src': "
                  "'t'}]}]}");
    tir_kernel_t k;
    tpb_err_t err = {0};
    assert_int_equal(enc_parse_kernel_json(js, strlen(js), "k.json", NULL, NULL, 0, &k, &err), 0);
    assert_int_equal(k.ntensors, 2 + 40000);
    assert_string_equal(k.tensors[2].name, "t");
    assert_string_equal(k.tensors[2 + 39999].name, "t#39999");
    assert_int_equal(k.nops, 2 * 40000);
    assert_int_equal(k.ops[2 * 39999].dst->tensor, 2 + 39999);
    tir_kernel_free(&k);
    free(js);
}

/* A flat body's ops and tensors arrays are sized once, exactly, from its
 * statements (compile-live's shape: tiles declared, loaded, stored): an
 * op per statement that is not a tile declaration, a tensor per tile.
 * The tile statements took op slots, and a heap-size array grew by
 * doubling (1 024 op slots here; 8 192 for compile-live's 6 000 ops, past
 * TPB_ARRAY_MAP_MIN into a mapping of its own). */
static void test_flat_body_sized_once(void **state)
{
    (void)state;
    enum { TILES = 300 };
    size_t cap = 256 * TILES + 1024, len = 0;
    char *js = malloc(cap);
    assert_non_null(js);
    len += (size_t)snprintf(js + len, cap - len,
                            "{\"kernel\": \"k\", \"inputs\": [{\"name\": \"a\", \"shape\": [%d, 4], "
                            "\"dtype\": \"float32\"}], \"outputs\": [{\"name\": \"o\", \"shape\": "
                            "[%d, 4], \"dtype\": \"float32\"}], \"body\": [",
                            TILES, TILES);
    for (int i = 0; i < TILES; i++)
        len += (size_t)snprintf(js + len, cap - len,
                                "{\"op\": \"tile\", \"name\": \"t%d\", \"shape\": [1, 4], "
                                "\"dtype\": \"float32\"}, ", i);
    for (int i = 0; i < TILES; i++)
        len += (size_t)snprintf(js + len, cap - len,
                                "{\"op\": \"load\", \"dst\": \"t%d\", \"src\": \"a[%d:%d, :]\"}, ",
                                i, i, i + 1);
    for (int i = 0; i < TILES; i++)
        len += (size_t)snprintf(js + len, cap - len,
                                "{\"op\": \"store\", \"dst\": \"o[%d:%d, :]\", \"src\": \"t%d\"}%s",
                                i, i + 1, i, i + 1 < TILES ? ", " : "]}");
    assert_true(len < cap);
    tir_kernel_t k;
    tpb_err_t err = {0};
    assert_int_equal(enc_parse_kernel_json(js, len, "k.json", NULL, NULL, 0, &k, &err), 0);
    assert_int_equal(k.nops, 2 * TILES);
    assert_int_equal(k.cap_ops, 2 * TILES);
    assert_int_equal(k.ntensors, 2 + TILES);
    assert_int_equal(k.cap_tensors, 2 + TILES);
    tir_kernel_free(&k);
    free(js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reserve_zero_across_threshold),
        cmocka_unit_test(test_reserve_refusals),
        cmocka_unit_test(test_loop_marks_large),
        cmocka_unit_test(test_read_kernel_text),
        cmocka_unit_test(test_read_kernel_text_in_tree),
        cmocka_unit_test(test_many_tiles),
        cmocka_unit_test(test_flat_body_sized_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
